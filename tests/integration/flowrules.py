# SPDX-License-Identifier: BSD-3-Clause
"""What the flow rule tests (test_flow_rules_*.py) share: a core with a
rule table, labelled packets through it, and the checks of where each
packet came out.

Each run is one core with a rule table: two input ports (net_pcap captures)
whose default chain is `gate -> dflt` (gate, an NF, also holds rx back until
the rules are in), and eight output ports o1..o8.  Every rule sends what it
matches straight to one output port (or drops it), so where a packet comes
out says which rule took it; the rules' hit counters must equal the packets
each was meant to take.  Here: the packets (`pkt()` and its layers, and
`Traffic`: labelled packets and the rule meant to take each), the config
(`rules_config()`), a run (`run_table()`; `run_scenario()` for a module
fixture), its checks (`check_run()`, `check_hits()`, `check_clean()`,
`labels()`), and `call()`, a flow command asked again while the core's
loop did not take it in time."""
import signal
import time

from harness import (Telemetry, read_pcap, scaled, start_named_core, wait_until,
                     write_config, write_pcap)

N_OUT = 8
OUTS = [f"o{i}" for i in range(1, N_OUT + 1)]
NOT_TAKEN = "xnv-core did not answer"


# --------------------------------------------------------------------------
# packets

def _l2():
    from scapy.layers.l2 import Ether
    return Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")


def pkt(l3, l4=None, vlans=(), tag=b""):
    """An Ethernet frame: VLAN tags `vlans` ((tpid, vid), outermost first),
    then l3 / l4 and a payload `tag` (unique per packet)."""
    from scapy.layers.l2 import Dot1AD, Dot1Q
    from scapy.packet import Raw
    p = _l2()
    for tpid, vid in vlans:
        p = p / (Dot1AD(vlan=vid) if tpid == 0x88A8 else Dot1Q(vlan=vid))
    p = p / l3
    if l4 is not None:
        p = p / l4
    return bytes(p / Raw(tag))


def ip4(src, dst, **kw):
    from scapy.layers.inet import IP
    return IP(src=src, dst=dst, **kw)


def ip6(src, dst, **kw):
    from scapy.layers.inet6 import IPv6
    return IPv6(src=src, dst=dst, **kw)


def udp(sport, dport):
    from scapy.layers.inet import UDP
    return UDP(sport=sport, dport=dport)


def tcp(sport, dport):
    from scapy.layers.inet import TCP
    return TCP(sport=sport, dport=dport, flags="A")


class Traffic:
    """Labelled packets on the two input ports, each unique (its label in
    its payload), and where each is expected: the key of the rule that must
    take it, or None for the port's default chain."""

    def __init__(self):
        self.pkts = {"in1": [], "in2": []}
        self.expect = {}            # label -> rule key or None
        self.label_of = {}          # frame bytes -> label

    def add(self, label, expect, build, port="in1"):
        """build(tag) -> frame bytes."""
        assert label not in self.expect, label
        frame = build(f"|{label}|".encode() + bytes(16))
        assert frame not in self.label_of, label
        self.pkts[port].append(frame)
        self.expect[label] = expect
        self.label_of[frame] = label

    def raw(self, label, expect, frame, port="in1"):
        """A frame as given (it must differ from every other itself)."""
        self.add(label, expect, lambda tag: frame, port)


# --------------------------------------------------------------------------
# one core, one rule table, every packet once

def rules_config(env, name, flows=(), in_pcaps=None, files=None, in_rate=None):
    """in1, in2 (rx captures) -> gate -> dflt; o1..o8 (tx captures
    <files>-<port>.pcap, files: default name); flows: [flow NAME] sections
    as (name, {key: value}); in_rate: rx_rate of the input ports."""
    files = files or name
    def pcap_port(i, key, path):
        return {"dev": f"net_pcap{i},{key}={path}", "group": "g"}

    in_pcaps = in_pcaps or {}
    sections = [("core", {"socket": env.sockdir / f"{files}.sock"}),
                ("group g", {"pool_bufs": 8192})]
    for i, port in enumerate(("in1", "in2")):
        sec = pcap_port(i, "rx_pcap", in_pcaps.get(port) or
                        write_pcap(env.path(f"{files}-{port}-empty.pcap"), []))
        sec["chain"] = "gate -> dflt"
        if in_rate:
            sec["rx_rate"] = in_rate
        sections.append((f"port {port}", sec))
    for i, o in enumerate(["dflt", *OUTS]):
        sections.append((f"port {o}", pcap_port(2 + i, "tx_pcap", env.path(f"{files}-{o}.pcap"))))
    sections.append(("service gate", {}))
    sections += [(f"flow {n}", keys) for n, keys in flows]
    return write_config(env.path(f"{name}.ini"), sections)


def call(t, cmd, params=None):
    """A flow command, asked again while the core says its loop did not take
    it in time (a loaded machine; nothing changed, but the reply does not
    say busy, so Telemetry does not ask again itself:
    test_flow_rules_commands.py::test_flow_add_with_loop_stalled)."""
    deadline = time.monotonic() + scaled(60)
    while True:
        r = t(cmd, params)
        err = r.get("error", "") if isinstance(r, dict) else ""
        if not (err == NOT_TAKEN or "Connection timed out" in err) or \
                time.monotonic() > deadline:
            return r


def done(t):
    """Packets out of a port or dropped by a chain, so far."""
    ports = [t("/xnv/port/info", i) for i in range(2 + 1 + N_OUT)]
    return sum(p["tx"] for p in ports) + t("/xnv/stats")["drop_chain_drop"]


def run_table(env, name, ops, traffic):
    """Start a core (rx held back), apply ops: ("add", key, spec) or
    ("del", key); then let the traffic through, once, to its end.  Returns where each
    label came out, the add replies, the rules' infos after the traffic,
    the stats at exit and the log."""
    in_pcaps = {p: write_pcap(env.path(f"{name}-{p}.pcap"), pk)
                for p, pk in traffic.pkts.items()}
    cfg = rules_config(env, name, in_pcaps=in_pcaps)
    core = start_named_core(env, cfg, name)
    ids, replies = {}, {}
    n_in = sum(len(p) for p in traffic.pkts.values())
    with Telemetry(core) as t:
        for op in ops:
            if op[0] == "add":
                r = call(t, "/xnv/flow/add", op[2])
                assert "id" in r, (op, r)
                ids[op[1]], replies[op[1]] = r["id"], r
            else:
                r = call(t, "/xnv/flow/del", ids.pop(op[1]))
                assert list(r) == ["id"], (op, r)
        gate = env.start_nf("gate", "g", f"{name}-gate", socket=core.socket)
        core.wait_attached(gate)
        wait_until(lambda: done(t) >= n_in, 60, f"{n_in} packets out or dropped")
        infos = {k: call(t, "/xnv/flow/info", i) for k, i in ids.items()}
    core.signal(signal.SIGTERM)
    rc = core.wait(20)
    gate.wait(20)
    where, stray = {}, []
    for port in ["dflt", *OUTS]:
        for frame in read_pcap(env.path(f"{name}-{port}.pcap")):
            label = traffic.label_of.get(frame)
            if label is None or label in where:
                stray.append((port, frame[:64].hex()))
            else:
                where[label] = port
    return dict(core=core, rc=rc, ids=ids, replies=replies, infos=infos,
                where=where, stray=stray, stats=core.stats(), log=core.log())


def run_scenario(env, name, make_table):
    """make_table() -> (ops, traffic), run once: (ops, traffic, the run),
    what a module fixture of the tests gives them."""
    ops, tr = make_table()
    return ops, tr, run_table(env, name, ops, tr)


def port_of(spec):
    """The output of a rule spec: its chain's one step (a port or drop)."""
    return spec.rsplit("chain=", 1)[1].strip()


def check_run(run, traffic, ops, labels=None):
    """Every packet (of `labels`, default all) where its rule sends it, the
    default chain's packets on dflt, the dropped ones nowhere; and (for all
    labels) each rule's hits = the packets expected to match it."""
    specs = {op[1]: op[2] for op in ops if op[0] == "add"}
    labels = labels if labels is not None else list(traffic.expect)
    want, got = {}, {}
    for label in labels:
        key = traffic.expect[label]
        dest = "dflt" if key is None else port_of(specs[key])
        want[label] = f"{dest} ({key or 'default'})"
        got[label] = f"{run['where'].get(label, 'drop')} ({key or 'default'})"
    bad = {k: f"expected {want[k]}, came out at {got[k].split()[0]}"
           for k in labels if want[k] != got[k]}
    assert not bad, bad
    assert not run["stray"], run["stray"]


def check_hits(run, traffic, keys=None):
    keys = keys if keys is not None else list(run["infos"])
    want = {k: sum(1 for e in traffic.expect.values() if e == k) for k in keys}
    got = {k: run["infos"][k]["hits"] for k in keys}
    assert got == want


def check_clean(run, traffic, ops):
    """The core ended well; in = out + chain drops, nothing else lost."""
    specs = {op[1]: op[2] for op in ops if op[0] == "add"}
    n_drop = sum(1 for k in traffic.expect.values()
                 if k is not None and port_of(specs[k]) == "drop")
    st = run["stats"]
    ports = {p["name"]: p for p in st["ports"]}
    n_in = ports["in1"]["rx"] + ports["in2"]["rx"]
    n_out = sum(ports[p]["tx"] for p in ["dflt", *OUTS])
    assert run["rc"] == 0, run["log"][-2000:]
    assert n_in == len(traffic.expect)
    assert st["drops"].get("chain_drop", 0) == n_drop, st["drops"]
    assert n_in == n_out + n_drop, st
    assert sum(st["drops"].values()) == n_drop, st["drops"]



def labels(tr, *prefixes):
    out = [k for k in tr.expect if k.startswith(prefixes)]
    assert out, prefixes
    return out

# SPDX-License-Identifier: BSD-3-Clause
"""Flow rule tables replaced while traffic flows through a real core
(flowrules.py: two input ports, each rule sending straight to an output
port).  What is proved:
  - /xnv/flow/reload under traffic: two rule sets in the config, swapped
    while packets flow, none lost, each left where one whole set sends it,
    none where only a mix of both would;
  - /xnv/flow/clear under traffic: every rule gone at one packet, the
    hits read before it counting packets that did leave through the
    rule's port."""
import signal
import struct
import subprocess
import time

from flowrules import OUTS, call, done, ip4, ip6, pkt, rules_config, tcp, udp
from harness import Telemetry, read_pcap, scaled, start_named_core, wait_until, write_pcap
from xnv.telemetry import TelemetryError


# --------------------------------------------------------------------------
# /xnv/flow/reload under traffic: every burst under one whole rule set

N_RELOAD = 40000
RELOAD_RATE = 10000        # packets/s offered at most: traffic lasts >= 4 s


def exact_kv(net, proto, sport, dport, **more):
    return {"proto": proto, "src": f"{net}.1", "dst": f"{net}.2", "sport": sport,
            "dport": dport, **more}


# Two sets for the same traffic.  o3 is where neither set sends anything,
# but where a packet lands if classified by half of each: A's tries with
# B's hash (P1: a-wild beats b-exact), or one set's rule ids with the other
# set's chains (slot 2 is a-wild in A, b-exact in B; both go to o3 in their
# own set only behind a rule of higher priority).
SET_A = [
    ("a-exact", {**exact_kv("10.70.0", "udp", 1000, 53), "priority": 40000, "chain": "o1"}),
    ("a-wild", {"dst": "10.70.0.0/16", "priority": 30000, "chain": "o3"}),
    ("a-drop", {"proto": "udp", "dst": "10.71.0.0/16", "chain": "drop"}),
    ("a-v6", {"src": "2001:db8:72::/48", "chain": "o5"}),
    ("a-range", {"proto": "udp", "sport": "3000-3999", "priority": 100, "chain": "o7"}),
]
SET_B = [
    ("b-wild", {"dst": "10.70.0.0/16", "priority": 30000, "chain": "o2"}),
    ("b-exact", {**exact_kv("10.70.0", "udp", 1000, 53), "priority": 20000, "chain": "o3"}),
    ("b-tcp", {"proto": "tcp", "src": "10.72.0.0/16", "vlan": "none", "chain": "o4"}),
    ("b-v6", {"src": "2001:db8:72::/48", "in_port": "in1", "chain": "o6"}),
    ("b-range", {"proto": "udp", "sport": "3000-3999", "priority": 100, "chain": "o8"}),
]
# packet class -> (where A sends it, where B does)
RELOAD_CLASSES = {
    "p1": ("o1", "o2"),         # exact under A, the wildcard under B
    "p2": ("drop", "dflt"),     # dropped under A, no rule in B
    "p3": ("dflt", "o4"),
    "p4": ("o5", "o6"),
    "p5": ("o7", "o8"),
}


def reload_packets():
    heads = {
        "p1": lambda: (ip4("10.70.0.1", "10.70.0.2"), udp(1000, 53)),
        "p2": lambda: (ip4("10.71.0.1", "10.71.0.2"), udp(1, 2)),
        "p3": lambda: (ip4("10.72.0.1", "10.72.0.2"), tcp(1, 2)),
        "p4": lambda: (ip6("2001:db8:72::1", "2001:db8:73::1"), udp(1, 2)),
        "p5": lambda: (ip4("10.73.0.1", "10.73.0.2"), udp(3456, 80)),
    }
    names = list(heads)
    # build each head once, then only the sequence number changes
    base = {n: pkt(*heads[n](), (), b"") for n in names}
    out, cls = [], {}
    for seq in range(N_RELOAD):
        n = names[seq % len(names)]
        frame = base[n] + struct.pack(">I", seq) + bytes(12)
        out.append(frame)
        cls[frame] = n
    return out, cls


def stacks(pid):
    """The threads' stacks of a stuck process, if gdb is there (for the
    failure message only)."""
    try:
        r = subprocess.run(["gdb", "-p", str(pid), "-batch", "-ex", "thread apply all bt 15"],
                           capture_output=True, text=True, timeout=scaled(60))
    except (OSError, subprocess.SubprocessError) as e:
        return f"(no stacks: {e})"
    return "\n".join(line for line in r.stdout.splitlines() if line.startswith(("#", "Thread")))


def test_reload_under_traffic(xnv):
    """Rewrite the config between sets A and B and reload while 40000
    packets flow: none lost (in = out + A's chain drops), each where A or B
    sends it, none where only a mix of both would (o3), and both sets did
    carry traffic."""
    pkts, cls = reload_packets()
    # UDP lengths: scapy filled them for the empty payload; the core does
    # not check them, the frames only need to differ
    in_pcap = write_pcap(xnv.path("reload-in1.pcap"), pkts)
    # the file the core reads; each set written next to it, renamed over it
    cfgs = {s: rules_config(xnv, f"reload-{s}", flows, in_pcaps={"in1": in_pcap},
                            files="reload", in_rate=RELOAD_RATE)
            for s, flows in (("A", SET_A), ("B", SET_B))}
    cfg = xnv.path("reload.ini")
    cfg.write_text(cfgs["A"].read_text())
    core = start_named_core(xnv, cfg, "reload")
    replies, at_rx = [], []
    with Telemetry(core) as t:
        first = [t("/xnv/flow/info", i) for i in range(1, len(SET_A) + 1)]
        gate = xnv.start_nf("gate", "g", "reload-gate", socket=core.socket)
        core.wait_attached(gate)
        deadline = time.monotonic() + scaled(120)
        now = "A"
        while True:
            rx = t("/xnv/port/info", 0)["rx"]
            if rx >= N_RELOAD:
                break
            assert time.monotonic() < deadline, f"{rx} of {N_RELOAD} received"
            now = "B" if now == "A" else "A"
            tmp = xnv.path("reload.ini.tmp")
            tmp.write_text(cfgs[now].read_text())
            tmp.replace(cfg)
            try:
                r = call(t, "/xnv/flow/reload")
            except TelemetryError as e:
                raise AssertionError(f"reload {len(replies) + 1} not answered ({e}); "
                                     f"the core's threads:\n{stacks(core.pid)}") from None
            assert sorted(r) == ["build_us", "removed", "rules"] and r["rules"] == 5, r
            replies.append(r)
            at_rx.append(rx)
        wait_until(lambda: done(t) >= N_RELOAD, 60, f"{N_RELOAD} packets out or dropped")
        stats = t("/xnv/stats")
        last = [t("/xnv/flow/info", i) for i in range(1, 6)]
    core.signal(signal.SIGTERM)
    assert core.wait(20) == 0
    gate.wait(20)
    st = core.stats()
    where = {}
    for port in ["dflt", *OUTS]:
        for frame in read_pcap(xnv.path(f"reload-{port}.pcap")):
            where.setdefault((cls.get(frame, "?"), port), 0)
            where[(cls.get(frame, "?"), port)] += 1
    ports = {p["name"]: p for p in st["ports"]}
    n_out = sum(ports[p]["tx"] for p in ["dflt", *OUTS])
    n_drop = st["drops"].get("chain_drop", 0)
    assert ports["in1"]["rx"] == N_RELOAD
    assert n_out + n_drop == N_RELOAD, st
    assert sum(st["drops"].values()) == n_drop, st["drops"]
    assert sum(where.values()) == n_out
    allowed = {(c, p) for c, ab in RELOAD_CLASSES.items() for p in ab}
    assert set(where) <= allowed, {k: v for k, v in where.items() if k not in allowed}
    # the dropped packets are exactly the p2 packets that did not leave dflt
    assert n_drop == N_RELOAD // 5 - where.get(("p2", "dflt"), 0)
    # reloads happened while traffic flowed (each at rx < N_RELOAD), and
    # each set carried some
    assert len(replies) >= 2, at_rx
    assert where.get(("p1", "o1")) and where.get(("p1", "o2")), where
    assert [i["name"] for i in first] == [n for n, _ in SET_A]
    assert [i["name"] for i in last] == [n for n, _ in (SET_A if now == "A" else SET_B)]
    assert stats["drop_chain_drop"] == n_drop
    print(f"{len(replies)} reloads; where: {sorted(where.items())}")


# --------------------------------------------------------------------------
# /xnv/flow/clear under traffic: all at once

N_CLEAR = 6000


def seq_of(frame):
    return struct.unpack_from(">I", frame, len(frame) - 16)[0]


def test_clear_under_traffic(xnv):
    """Rules from the config and one added live carry their packets until
    /xnv/flow/clear: it removes all three ({"removed": 3}, list empty,
    n_flows 0), and from one packet on, every packet of their flows takes
    the default chain (no packet after it took a rule's port).  Hits read
    before the clear count packets that did leave through the rule's port."""
    classes = [("v4", "o1", lambda: (ip4("10.80.0.9", "10.80.0.1"), udp(1, 2))),
               ("v6", "o2", lambda: (ip6("2001:db8:80::1", "2001:db8:81::1"), udp(1, 2))),
               ("tcp", "o3", lambda: (ip4("10.81.0.9", "10.81.0.1"), tcp(1, 2)))]
    base = [pkt(*mk(), (), b"") for _, _, mk in classes]
    pkts = [base[i % 3] + struct.pack(">I", i) + bytes(12) for i in range(N_CLEAR)]
    in_pcap = write_pcap(xnv.path("clear-in1.pcap"), pkts)
    cfg = rules_config(xnv, "clear", [
        ("cfg-v4", {"proto": "udp", "dst": "10.80.0.0/16", "chain": "o1"}),
        ("cfg-v6", {"src": "2001:db8:80::/48", "chain": "o2"})],
        in_pcaps={"in1": in_pcap}, in_rate=2000)
    core = start_named_core(xnv, cfg, "clear")
    with Telemetry(core) as t:
        live = call(t, "/xnv/flow/add", "proto=tcp dst=10.81.0.0/16 chain=o3")
        assert live["id"] == 3, live
        gate = xnv.start_nf("gate", "g", "clear-gate", socket=core.socket)
        core.wait_attached(gate)
        wait_until(lambda: sum(t("/xnv/port/info", i)["tx"] for i in (3, 4, 5)) >= 600,
                   60, "600 packets through the rules")
        hits = [t("/xnv/flow/info", i)["hits"] for i in (1, 2, 3)]
        cleared = call(t, "/xnv/flow/clear")
        after = (t("/xnv/flow/list"), t("/xnv/info")["n_flows"], t("/xnv/flow/info", 1))
        rx_at_clear = t("/xnv/port/info", 0)["rx"]
        wait_until(lambda: done(t) >= N_CLEAR, 60, f"{N_CLEAR} packets out")
        again = call(t, "/xnv/flow/add", "proto=tcp dst=10.81.0.0/16 chain=o3")
        cleared_empty = call(t, "/xnv/flow/clear")
    core.signal(signal.SIGTERM)
    assert core.wait(20) == 0
    gate.wait(20)
    assert cleared == {"removed": 3}, cleared
    assert after == ([], 0, {"error": "no flow rule 1"}), after
    assert rx_at_clear < N_CLEAR, "the traffic ended before the clear"
    assert again["id"] == 1 and cleared_empty == {"removed": 1}
    seqs = {p: sorted(seq_of(f) for f in read_pcap(xnv.path(f"clear-{p}.pcap")))
            for p in ["dflt", "o1", "o2", "o3"]}
    assert sum(len(v) for v in seqs.values()) == N_CLEAR
    assert all(seqs[p] for p in ("o1", "o2", "o3")), {p: len(v) for p, v in seqs.items()}
    last_ruled = max(seqs["o1"][-1], seqs["o2"][-1], seqs["o3"][-1])
    assert not seqs["dflt"] or seqs["dflt"][0] > last_ruled, \
        (seqs["dflt"][:5], last_ruled)
    assert seqs["dflt"] == list(range(last_ruled + 1, N_CLEAR))
    for h, p in zip(hits, ("o1", "o2", "o3")):
        assert 0 < h <= len(seqs[p]), (hits, {p: len(v) for p, v in seqs.items()})

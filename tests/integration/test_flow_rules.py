# SPDX-License-Identifier: BSD-3-Clause
"""Flow rule semantics (dom0-core/flow_rule.h) with real traffic.

Each run is one core with a rule table: two input ports (net_pcap captures)
whose default chain is `gate -> dflt` (gate, an NF, also holds rx back until
the rules are in), and eight output ports o1..o8.  Every rule sends what it
matches straight to one output port (or drops it), so where a packet comes
out says which rule took it; the rules' hit counters must equal the packets
each was meant to take.  What is proved:
  - the issue's repro: `proto=udp src=10.0.0.1 dst=10.0.0.2 dport=53
    chain=drop` (no sport) drops 10.0.0.1:1234 -> 10.0.0.2:53;
  - prefixes (IPv4 /8, /24, /0; IPv6 /48, /64; host bits cleared), /0
    limits a rule to its family, a rule without address matches both;
    port ranges (ends included), proto any / by number / by name;
    vlan=N on the outer tag of 802.1Q, 802.1ad and double 802.1Q frames,
    vlan=none untagged only, the headers read through two tags; in_port;
  - order: the highest priority wins; ties go to the rule added first (by
    time, not by id: a rule added after a delete reuses a lower id and still
    loses); an exact 5-tuple (the hash) against a wildcard (the tries), each
    way round and at equal priority; one 5-tuple at two priorities;
  - fragments never match a port rule but match address / protocol rules;
    non-IP frames keep the default chain even under a rule matching any IP;
  - /xnv/flow/reload under traffic: two rule sets in the config, swapped
    while packets flow, none lost, each left where one whole set sends it;
  - /xnv/flow/clear under traffic: one cut-over packet; hits per rule; bad
    rules: one line naming the field, nothing changed; /xnv/flow/info's
    fields read back as the same rule.
  - SCTP ports match like TCP's and UDP's.
  - flow add and flow reload asked while the main loop is stalled (its
    thread stopped with ptrace): "busy": 1 and nothing changed.
"""
import signal
import struct
import subprocess
import sys
import textwrap
import time

import pytest

from harness import (Telemetry, read_pcap, scaled, start_named_core, wait_until,
                     write_config, write_pcap)
from xnv.telemetry import TelemetryError

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
    test_flow_add_with_loop_stalled)."""
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


# --------------------------------------------------------------------------
# what one rule matches: addresses, ports, protocols, VLANs, input port.
# Each rule has an address space (or protocol) of its own, so a packet
# meant for one rule can only be taken by another through a wrong match.

QA, ADA = (0x8100,), (0x88A8,)      # TPIDs of an 802.1Q and an 802.1ad tag


def match_table():
    ops = [("add", k, s) for k, s in [
        ("repro", "proto=udp src=10.0.0.1 dst=10.0.0.2 dport=53 chain=drop"),
        ("v4-24", "dst=192.168.7.0/24 chain=o1"),
        ("v4-8", "src=172.16.1.1/8 chain=o2"),          # is 172.0.0.0/8
        ("v4-0", "src=0.0.0.0/0 proto=253 chain=o3"),
        ("v6-0", "dst=::/0 proto=254 chain=o4"),
        ("both", "proto=252 chain=o5"),
        ("v6-48", "dst=2001:db8:aa::/48 chain=o6"),
        ("v6-64", "src=2001:db8:1:2:aaaa::1/64 chain=o7"),  # is 2001:db8:1:2::/64
        ("dport-range", "proto=udp dport=1000-1999 chain=o1"),
        ("sport-range", "proto=tcp sport=5000-5001 chain=o2"),
        ("proto-num", "proto=47 dst=10.30.0.0/16 chain=o3"),
        ("icmp", "proto=icmp dst=10.31.0.0/16 chain=o4"),
        ("icmp6", "proto=icmp6 chain=o5"),
        ("proto-any", "proto=any dst=10.32.0.1 chain=o6"),
        ("vlan100", "vlan=100 chain=o7"),
        ("vlan-none", "vlan=none proto=udp dst=10.40.0.0/16 chain=o8"),
        ("vlan300", "vlan=300 proto=udp dst=10.41.0.0/16 dport=7 chain=o8"),
        ("vlan0", "vlan=0 dst=10.42.0.0/16 chain=o6"),
        ("exact", "proto=udp src=10.43.0.1 dst=10.43.0.2 sport=1 dport=2 chain=o5"),
        ("in2", "in_port=in2 proto=udp dst=10.50.0.0/16 chain=o1"),
        ("in1", "in_port=in1 dst=10.51.0.0/16 chain=o2"),
    ]]
    from scapy.layers.inet import ICMP
    from scapy.layers.inet6 import ICMPv6EchoRequest
    from scapy.layers.l2 import GRE
    tr = Traffic()

    def u4(label, expect, src, dst, sport, dport, vlans=(), port="in1"):
        tr.add(label, expect, lambda tag: pkt(ip4(src, dst), udp(sport, dport),
                                              vlans, tag), port)

    def t4(label, expect, src, dst, sport, dport, port="in1"):
        tr.add(label, expect, lambda tag: pkt(ip4(src, dst), tcp(sport, dport), (), tag),
               port)

    def u6(label, expect, src, dst, sport=1, dport=9, vlans=()):
        tr.add(label, expect, lambda tag: pkt(ip6(src, dst), udp(sport, dport), vlans, tag))

    def p4(label, expect, src, dst, proto):
        tr.add(label, expect, lambda tag: pkt(ip4(src, dst, proto=proto), None, (), tag))

    def p6(label, expect, src, dst, nh):
        tr.add(label, expect, lambda tag: pkt(ip6(src, dst, nh=nh), None, (), tag))

    # the issue's repro: no sport in the rule
    u4("repro-1234", "repro", "10.0.0.1", "10.0.0.2", 1234, 53)
    u4("repro-40000", "repro", "10.0.0.1", "10.0.0.2", 40000, 53)
    u4("repro-dport54", None, "10.0.0.1", "10.0.0.2", 1234, 54)
    t4("repro-tcp", None, "10.0.0.1", "10.0.0.2", 1234, 53)
    u4("repro-other-src", None, "10.0.0.3", "10.0.0.2", 1234, 53)
    # IPv4 prefixes
    u4("24-low", "v4-24", "10.99.0.1", "192.168.7.0", 1, 9)
    u4("24-high", "v4-24", "10.99.0.1", "192.168.7.255", 1, 9)
    u4("24-above", None, "10.99.0.1", "192.168.8.0", 1, 9)
    u4("24-below", None, "10.99.0.1", "192.168.6.255", 1, 9)
    u4("8-low", "v4-8", "172.0.0.0", "10.99.0.1", 1, 9)
    u4("8-high", "v4-8", "172.255.255.255", "10.99.0.1", 1, 9)
    u4("8-above", None, "173.0.0.0", "10.99.0.1", 1, 9)
    u4("8-below", None, "171.255.255.255", "10.99.0.1", 1, 9)
    # /0 limits a rule to its family; no address: both families
    p4("0-v4", "v4-0", "10.60.0.1", "10.60.0.2", 253)
    p6("0-v4-not-v6", None, "2001:db8:60::1", "2001:db8:60::2", 253)
    p6("0-v6", "v6-0", "2001:db8:60::1", "2001:db8:60::2", 254)
    p4("0-v6-not-v4", None, "10.60.0.1", "10.60.0.2", 254)
    p4("both-v4", "both", "10.60.0.1", "10.60.0.2", 252)
    p6("both-v6", "both", "2001:db8:60::1", "2001:db8:60::2", 252)
    # IPv6 prefixes
    u6("48-low", "v6-48", "2001:db8:99::1", "2001:db8:aa::")
    u6("48-high", "v6-48", "2001:db8:99::1", "2001:db8:aa:ffff:ffff:ffff:ffff:ffff")
    u6("48-above", None, "2001:db8:99::1", "2001:db8:ab::")
    u6("48-below", None, "2001:db8:99::1", "2001:db8:a9:ffff:ffff:ffff:ffff:ffff")
    u6("64-low", "v6-64", "2001:db8:1:2::", "2001:db8:98::1")
    u6("64-high", "v6-64", "2001:db8:1:2:ffff:ffff:ffff:ffff", "2001:db8:98::1")
    u6("64-above", None, "2001:db8:1:3::", "2001:db8:98::1")
    u6("64-below", None, "2001:db8:1:1:ffff:ffff:ffff:ffff", "2001:db8:98::1")
    # port ranges: both ends included, the other protocol not
    u4("dport-1000", "dport-range", "10.20.0.1", "10.20.0.2", 1, 1000)
    u4("dport-1500", "dport-range", "10.20.0.1", "10.20.0.2", 1, 1500)
    u4("dport-1999", "dport-range", "10.20.0.1", "10.20.0.2", 1, 1999)
    u4("dport-999", None, "10.20.0.1", "10.20.0.2", 1, 999)
    u4("dport-2000", None, "10.20.0.1", "10.20.0.2", 1, 2000)
    t4("dport-tcp", None, "10.20.0.1", "10.20.0.2", 1, 1500)
    u6("dport-v6", "dport-range", "2001:db8:20::1", "2001:db8:20::2", 1, 1000)
    t4("sport-5000", "sport-range", "10.21.0.1", "10.21.0.2", 5000, 80)
    t4("sport-5001", "sport-range", "10.21.0.1", "10.21.0.2", 5001, 80)
    t4("sport-4999", None, "10.21.0.1", "10.21.0.2", 4999, 80)
    t4("sport-5002", None, "10.21.0.1", "10.21.0.2", 5002, 80)
    u4("sport-udp", None, "10.21.0.1", "10.21.0.2", 5000, 80)
    # protocols: by number, by name, any
    tr.add("gre", "proto-num", lambda tag: pkt(ip4("10.30.0.9", "10.30.0.1"), GRE(), (), tag))
    u4("gre-not-udp", None, "10.30.0.9", "10.30.0.1", 1, 9)
    tr.add("icmp", "icmp", lambda tag: pkt(ip4("10.31.0.9", "10.31.0.1"),
                                           ICMP(type=8, id=1), (), tag))
    u4("icmp-not-udp", None, "10.31.0.9", "10.31.0.1", 1, 9)
    tr.add("icmp6", "icmp6", lambda tag: pkt(ip6("2001:db8:97::1", "2001:db8:96::1"),
                                             ICMPv6EchoRequest(id=1), (), tag))
    u4("any-udp", "proto-any", "10.32.0.9", "10.32.0.1", 1, 9)
    t4("any-tcp", "proto-any", "10.32.0.9", "10.32.0.1", 1, 9)
    tr.add("any-icmp", "proto-any", lambda tag: pkt(ip4("10.32.0.9", "10.32.0.1"),
                                                    ICMP(type=8, id=2), (), tag))
    p4("any-200", "proto-any", "10.32.0.9", "10.32.0.1", 200)
    u4("any-other-dst", None, "10.32.0.9", "10.32.0.2", 1, 9)
    # vlan=N: the outer tag, whichever TPID; vlan=none: untagged only
    u4("q100", "vlan100", "10.44.0.1", "10.44.0.2", 1, 9, [(0x8100, 100)])
    u4("ad100-q200", "vlan100", "10.44.0.1", "10.44.0.2", 1, 9,
       [(0x88A8, 100), (0x8100, 200)])
    u4("q100-q200", "vlan100", "10.44.0.1", "10.44.0.2", 1, 9,
       [(0x8100, 100), (0x8100, 200)])
    u6("q100-v6", "vlan100", "2001:db8:44::1", "2001:db8:44::2", vlans=[(0x8100, 100)])
    u4("ad200-q100", None, "10.44.0.1", "10.44.0.2", 1, 9, [(0x88A8, 200), (0x8100, 100)])
    u4("q101", None, "10.44.0.1", "10.44.0.2", 1, 9, [(0x8100, 101)])
    u4("untagged-44", None, "10.44.0.1", "10.44.0.2", 1, 9)
    u4("none-untagged", "vlan-none", "10.40.0.1", "10.40.0.2", 1, 9)
    u4("none-q5", None, "10.40.0.1", "10.40.0.2", 1, 9, [(0x8100, 5)])
    u4("none-ad5-q6", None, "10.40.0.1", "10.40.0.2", 1, 9, [(0x88A8, 5), (0x8100, 6)])
    # the headers behind two tags are read: addresses and ports match
    u4("ad300-q5", "vlan300", "10.41.0.1", "10.41.0.2", 1, 7, [(0x88A8, 300), (0x8100, 5)])
    u4("ad300-q5-port8", None, "10.41.0.1", "10.41.0.2", 1, 8,
       [(0x88A8, 300), (0x8100, 5)])
    u4("q300", "vlan300", "10.41.0.1", "10.41.0.2", 1, 7, [(0x8100, 300)])
    u4("q300-untagged", None, "10.41.0.1", "10.41.0.2", 1, 7)
    u4("q0", "vlan0", "10.42.0.1", "10.42.0.2", 1, 9, [(0x8100, 0)])
    u4("q0-untagged", None, "10.42.0.1", "10.42.0.2", 1, 9)
    # an exact 5-tuple matches whatever the tags
    u4("exact-untagged", "exact", "10.43.0.1", "10.43.0.2", 1, 2)
    u4("exact-q7", "exact", "10.43.0.1", "10.43.0.2", 1, 2, [(0x8100, 7)])
    u4("exact-ad7-q8", "exact", "10.43.0.1", "10.43.0.2", 1, 2, [(0x88A8, 7), (0x8100, 8)])
    u4("exact-other-sport", None, "10.43.0.1", "10.43.0.2", 3, 2)
    # in_port
    u4("in2-on-in2", "in2", "10.50.0.9", "10.50.0.1", 1, 9, port="in2")
    u4("in2-on-in1", None, "10.50.0.9", "10.50.0.1", 1, 9, port="in1")
    t4("in1-on-in1", "in1", "10.51.0.9", "10.51.0.1", 1, 9, port="in1")
    t4("in1-on-in2", None, "10.51.0.9", "10.51.0.1", 1, 9, port="in2")
    return ops, tr


@pytest.fixture(scope="module")
def match(xnv_module):
    ops, tr = match_table()
    return ops, tr, run_table(xnv_module, "match", ops, tr)


def labels(tr, *prefixes):
    out = [k for k in tr.expect if k.startswith(prefixes)]
    assert out, prefixes
    return out


def test_issue_repro_rule_without_sport_matches(match):
    """`proto=udp src=10.0.0.1 dst=10.0.0.2 dport=53 chain=drop` drops
    10.0.0.1:1234 -> 10.0.0.2:53 (and any other source port), not port 54,
    TCP or another source address."""
    ops, tr, run = match
    check_run(run, tr, ops, labels(tr, "repro-"))
    check_hits(run, tr, ["repro"])
    assert run["replies"]["repro"]["sport"] == "any"
    assert run["stats"]["drops"]["chain_drop"] == 2


def test_ipv4_prefixes(match):
    """/24 and /8: both ends in, one address past each end out; the host
    bits of 172.16.1.1/8 cleared."""
    ops, tr, run = match
    check_run(run, tr, ops, labels(tr, "24-", "8-"))
    check_hits(run, tr, ["v4-24", "v4-8"])
    assert run["replies"]["v4-8"]["src"] == "172.0.0.0/8"
    assert run["replies"]["v4-24"]["dst"] == "192.168.7.0/24"


def test_zero_prefix_limits_family(match):
    """0.0.0.0/0 and ::/0 match every address of their family only; a
    rule without address matches both."""
    ops, tr, run = match
    check_run(run, tr, ops, labels(tr, "0-", "both-"))
    check_hits(run, tr, ["v4-0", "v6-0", "both"])
    # the address left out of a rule of one family reads as that family's
    # /0 (what it matches), not "any" (which would be both families)
    v4, v6 = run["replies"]["v4-0"], run["replies"]["v6-0"]
    assert (v4["src"], v4["dst"]) == ("0.0.0.0/0", "0.0.0.0/0")
    assert (v6["src"], v6["dst"]) == ("::/0", "::/0")
    assert run["replies"]["both"]["src"] == run["replies"]["both"]["dst"] == "any"


def test_ipv6_prefixes(match):
    ops, tr, run = match
    check_run(run, tr, ops, labels(tr, "48-", "64-"))
    check_hits(run, tr, ["v6-48", "v6-64"])
    assert run["replies"]["v6-64"]["src"] == "2001:db8:1:2::/64"


def test_port_ranges(match):
    """Both ends of a range in, one past each out, only its protocol; a
    rule without address takes IPv6 too."""
    ops, tr, run = match
    check_run(run, tr, ops, labels(tr, "dport-", "sport-"))
    check_hits(run, tr, ["dport-range", "sport-range"])
    assert run["replies"]["dport-range"]["dport"] == "1000-1999"
    assert run["replies"]["sport-range"]["sport"] == "5000-5001"


def test_protocols(match):
    """proto by number (47, shown as gre), by name (icmp, icmp6), any."""
    ops, tr, run = match
    check_run(run, tr, ops, labels(tr, "gre", "icmp", "any-"))
    check_hits(run, tr, ["proto-num", "icmp", "icmp6", "proto-any"])
    assert [run["replies"][k]["proto"] for k in ("proto-num", "icmp", "icmp6", "proto-any")] \
        == ["gre", "icmp", "icmp6", "any"]


def test_vlans(match):
    """vlan=N is the outer tag (802.1Q, 802.1ad, or 802.1Q twice), vlan=0
    a priority tag; vlan=none untagged only; addresses and ports behind two
    tags are read; an exact 5-tuple matches whatever the tags."""
    ops, tr, run = match
    check_run(run, tr, ops, labels(tr, "q", "ad", "untagged", "none-", "exact-"))
    check_hits(run, tr, ["vlan100", "vlan-none", "vlan300", "vlan0", "exact"])
    assert [run["replies"][k]["vlan"] for k in ("vlan100", "vlan-none", "vlan0", "exact")] \
        == ["100", "none", "0", "any"]


def test_in_port(match):
    ops, tr, run = match
    check_run(run, tr, ops, labels(tr, "in1-", "in2-"))
    check_hits(run, tr, ["in1", "in2"])
    assert run["replies"]["in2"]["in_port"] == "in2"


def test_match_run_whole(match):
    """Every packet of the run where expected (dflt: the default chain,
    through the gate NF), every rule's hits, nothing lost."""
    ops, tr, run = match
    check_run(run, tr, ops)
    check_hits(run, tr)
    check_clean(run, tr, ops)


# --------------------------------------------------------------------------
# which rule wins: priority, then the rule added first; the exact hash and
# the wildcard tries against each other

def order_table():
    def exact(net, proto="udp", sport=100, dport=200):
        return f"proto={proto} src={net}.1 dst={net}.2 sport={sport} dport={dport}"

    ops = [
        ("add", "p-low", "proto=udp dst=10.5.0.0/16 priority=100 chain=o1"),
        ("add", "p-high", "proto=udp dst=10.5.1.0/24 priority=200 chain=o2"),
        ("add", "p2-high", "dst=10.6.0.0/16 priority=60000 chain=o3"),
        ("add", "p2-low", "proto=udp dst=10.6.1.0/24 dport=9 priority=10 chain=o4"),
        ("add", "p-max", "dst=10.7.0.1 priority=65535 chain=o5"),
        ("add", "p-zero", "dst=10.7.0.0/16 priority=0 chain=o6"),
        # equal priorities: the rule added first, more or less specific
        ("add", "tie-a", "dst=10.8.0.0/16 chain=o1"),
        ("add", "tie-b", "proto=udp dst=10.8.0.0/24 chain=o2"),
        ("add", "tie-c", "proto=tcp dst=10.9.0.0/24 chain=o3"),
        ("add", "tie-d", "dst=10.9.0.0/16 chain=o4"),
        # tie-f reuses filler's id, lower than tie-e's, but came later
        ("add", "filler", "dst=10.250.0.1 chain=o8"),
        ("add", "tie-e", "proto=udp dst=10.10.0.0/16 chain=o5"),
        ("del", "filler"),
        ("add", "tie-f", "dst=10.10.0.0/24 chain=o6"),
        # an exact 5-tuple (hash) against a wildcard (tries)
        ("add", "x-exact", exact("10.11.0") + " priority=40000 chain=o1"),
        ("add", "x-wild", "dst=10.11.0.0/16 priority=30000 chain=o2"),
        ("add", "y-exact", exact("10.12.0") + " chain=o3"),
        ("add", "y-wild", "dst=10.12.0.0/16 priority=40000 chain=o4"),
        ("add", "z-wild", "dst=10.13.0.0/16 chain=o5"),
        ("add", "z-exact", exact("10.13.0") + " chain=o6"),
        ("add", "w-exact", exact("10.14.0", "tcp") + " chain=o7"),
        ("add", "w-wild", "dst=10.14.0.0/16 chain=o8"),
        # one 5-tuple at two priorities: the second goes to the tries
        ("add", "dup-100", exact("10.15.0") + " priority=100 chain=o1"),
        ("add", "dup-200", exact("10.15.0") + " priority=200 chain=o2"),
        ("add", "dup2-200", exact("10.16.0") + " priority=200 chain=o3"),
        ("add", "dup2-100", exact("10.16.0") + " priority=100 chain=o4"),
        # the hash's rule deleted: the one in the tries takes the 5-tuple
        ("add", "dup3-500", exact("10.17.0") + " priority=500 chain=o7"),
        ("add", "dup3-400", exact("10.17.0") + " priority=400 chain=o8"),
        ("del", "dup3-500"),
    ]
    tr = Traffic()

    def u4(label, expect, src, dst, sport=100, dport=200):
        tr.add(label, expect, lambda tag: pkt(ip4(src, dst), udp(sport, dport), (), tag))

    def t4(label, expect, src, dst, sport=100, dport=200):
        tr.add(label, expect, lambda tag: pkt(ip4(src, dst), tcp(sport, dport), (), tag))

    u4("prio-high-later", "p-high", "10.99.0.1", "10.5.1.1")
    u4("prio-low-only", "p-low", "10.99.0.1", "10.5.2.1")
    u4("prio-high-first", "p2-high", "10.99.0.1", "10.6.1.1", 1, 9)
    u4("prio-max", "p-max", "10.99.0.1", "10.7.0.1")
    u4("prio-zero", "p-zero", "10.99.0.1", "10.7.0.2")
    u4("tie-first-wider", "tie-a", "10.99.0.1", "10.8.0.1")
    t4("tie-first-narrower", "tie-c", "10.99.0.1", "10.9.0.1")
    u4("tie-second-only", "tie-d", "10.99.0.1", "10.9.0.1")
    u4("tie-older-higher-id", "tie-e", "10.99.0.1", "10.10.0.1")
    t4("tie-newer-lower-id", "tie-f", "10.99.0.1", "10.10.0.1")
    u4("filler-gone", None, "10.99.0.1", "10.250.0.1")
    u4("exact-beats-wild", "x-exact", "10.11.0.1", "10.11.0.2")
    u4("exact-miss-wild", "x-wild", "10.11.0.1", "10.11.0.2", 101)
    u4("wild-beats-exact", "y-wild", "10.12.0.1", "10.12.0.2")
    u4("tie-wild-first", "z-wild", "10.13.0.1", "10.13.0.2")
    t4("tie-exact-first", "w-exact", "10.14.0.1", "10.14.0.2")
    t4("tie-exact-first-miss", "w-wild", "10.14.0.1", "10.14.0.2", 100, 201)
    u4("dup-later-higher", "dup-200", "10.15.0.1", "10.15.0.2")
    u4("dup-first-higher", "dup2-200", "10.16.0.1", "10.16.0.2")
    u4("dup-hash-deleted", "dup3-400", "10.17.0.1", "10.17.0.2")
    return ops, tr


@pytest.fixture(scope="module")
def order(xnv_module):
    ops, tr = order_table()
    return ops, tr, run_table(xnv_module, "order", ops, tr)


def test_priority_wins(order):
    """The higher priority wins whether it was added before or after, more
    or less specific; 65535 and 0 are priorities like any."""
    ops, tr, run = order
    check_run(run, tr, ops, labels(tr, "prio-"))
    check_hits(run, tr, ["p-low", "p-high", "p2-high", "p2-low", "p-max", "p-zero"])
    assert run["replies"]["p-max"]["priority"] == 65535
    assert run["replies"]["p-zero"]["priority"] == 0


def test_equal_priority_first_added_wins(order):
    """At equal priority the rule added first wins, however specific; by
    time added, not by id: tie-f has a lower id (filler's, deleted) than
    tie-e and still loses to it."""
    ops, tr, run = order
    assert run["ids"]["tie-f"] < run["ids"]["tie-e"], run["ids"]
    check_run(run, tr, ops, labels(tr, "tie-", "filler-"))
    check_hits(run, tr, ["tie-a", "tie-b", "tie-c", "tie-d", "tie-e", "tie-f"])


def test_exact_against_wildcard(order):
    """An exact 5-tuple of higher priority beats a wildcard covering it and
    a wildcard of higher priority beats the exact rule; at equal priority,
    the older of the two, whichever kind."""
    ops, tr, run = order
    check_run(run, tr, ops, labels(tr, "exact-", "wild-", "tie-wild", "tie-exact"))
    check_hits(run, tr, ["x-exact", "x-wild", "y-exact", "y-wild", "z-wild", "z-exact",
                         "w-exact", "w-wild"])


def test_one_five_tuple_two_priorities(order):
    """The same 5-tuple at two priorities: the higher wins, added first or
    second (one of them is then not in the hash); the hash's one deleted,
    the other still matches."""
    ops, tr, run = order
    check_run(run, tr, ops, labels(tr, "dup-"))
    check_hits(run, tr, ["dup-100", "dup-200", "dup2-200", "dup2-100", "dup3-400"])


def test_order_run_whole(order):
    ops, tr, run = order
    check_run(run, tr, ops)
    check_hits(run, tr)
    check_clean(run, tr, ops)


# --------------------------------------------------------------------------
# fragments: no ports, so no port rule; non-IP: no rule at all

def frag_table():
    ops = [("add", k, s) for k, s in [
        ("f-ports", "proto=udp dst=10.3.0.2 dport=53 priority=50000 chain=o1"),
        ("f-exact", "proto=udp src=10.3.0.1 dst=10.3.0.2 sport=5000 dport=53 "
                    "priority=60000 chain=o2"),
        ("f-addr", "src=10.3.0.1 dst=10.3.0.2 priority=1000 chain=o3"),
        ("f-proto", "proto=udp dst=10.3.0.9 chain=o4"),
        ("f6-ports", "proto=udp src=2001:db8:3::1 dport=53 priority=50000 chain=o5"),
        ("f6-addr", "src=2001:db8:3::1 priority=1000 chain=o6"),
        # the whole range is `any`: no port needed
        ("f-range-full", "proto=udp dport=0-65535 dst=10.3.1.0/24 chain=o7"),
        # every field left out: any IPv4 or IPv6 packet
        ("catch-all", "priority=0 chain=o8"),
    ]]
    from scapy.layers.inet import IP, UDP, TCP
    from scapy.layers.inet6 import IPv6ExtHdrFragment
    from scapy.layers.l2 import ARP, Dot1Q, Ether
    from scapy.packet import Raw
    tr = Traffic()
    eth = _l2()

    def u4(label, expect, src, dst, sport, dport, **ip):
        tr.add(label, expect, lambda tag: pkt(ip4(src, dst, **ip), udp(sport, dport), (), tag))

    # one UDP flow 10.3.0.1:5000 -> 10.3.0.2:53, whole and in fragments
    u4("udp-whole", "f-exact", "10.3.0.1", "10.3.0.2", 5000, 53)
    u4("udp-other-sport", "f-ports", "10.3.0.1", "10.3.0.2", 5001, 53)
    u4("udp-df", "f-exact", "10.3.0.1", "10.3.0.2", 5000, 53, flags="DF")
    u4("frag-first", "f-addr", "10.3.0.1", "10.3.0.2", 5000, 53, flags="MF", id=7)
    tr.add("frag-middle", "f-addr", lambda tag: bytes(
        eth / IP(src="10.3.0.1", dst="10.3.0.2", proto=17, flags="MF", frag=7, id=7) /
        Raw(bytes(8) + tag)))
    tr.add("frag-last", "f-addr", lambda tag: bytes(
        eth / IP(src="10.3.0.1", dst="10.3.0.2", proto=17, frag=14, id=7) / Raw(tag)))
    # an IPv4 header length under 5 words: IP, ports not read
    tr.add("frag-ihl4", "f-addr", lambda tag: (lambda b: b[:14] + bytes([0x44]) + b[15:])(
        pkt(ip4("10.3.0.1", "10.3.0.2"), udp(5000, 53), (), tag)))
    # address and protocol without ports: fragments match
    u4("frag-proto", "f-proto", "10.3.0.8", "10.3.0.9", 1, 2, flags="MF", id=8)
    tr.add("frag-proto-tcp", "catch-all", lambda tag: bytes(
        eth / IP(src="10.3.0.8", dst="10.3.0.9", flags="MF", id=9) / TCP(sport=1, dport=2) /
        Raw(tag)))
    u4("frag-range-full", "f-range-full", "10.3.1.8", "10.3.1.9", 1, 2, flags="MF", id=10)
    # IPv6: a fragment header is the next header
    tr.add("udp6-whole", "f6-ports", lambda tag: pkt(
        ip6("2001:db8:3::1", "2001:db8:3::2"), udp(5000, 53), (), tag))
    tr.add("frag6-first", "f6-addr", lambda tag: bytes(
        eth / ip6("2001:db8:3::1", "2001:db8:3::2") / IPv6ExtHdrFragment(m=1, id=9, nh=17) /
        UDP(sport=5000, dport=53) / Raw(tag)))
    tr.add("frag6-last", "f6-addr", lambda tag: bytes(
        eth / ip6("2001:db8:3::1", "2001:db8:3::2") /
        IPv6ExtHdrFragment(m=0, offset=2, id=9, nh=17) / Raw(tag)))
    # anything else IP takes the catch-all
    u4("catch-v4", "catch-all", "10.200.0.1", "10.200.0.2", 1, 2)
    tr.add("catch-v6", "catch-all", lambda tag: pkt(ip6("2001:db8:200::1", "2001:db8:200::2"),
                                                    udp(1, 2), (), tag))
    # not IP: the default chain, whatever it carries
    whole = pkt(ip4("10.3.0.1", "10.3.0.2"), udp(5000, 53), (), b"|non-ip|")
    tr.raw("non-ip-88b5", None, whole[:12] + b"\x88\xb5" + whole[14:])
    tr.add("non-ip-arp", None, lambda tag: bytes(
        Ether(dst="ff:ff:ff:ff:ff:ff", src="02:00:00:00:00:01") /
        ARP(psrc="10.3.0.1", pdst="10.3.0.2") / Raw(tag)))
    tr.add("non-ip-vlan-arp", None, lambda tag: bytes(
        Ether(dst="ff:ff:ff:ff:ff:ff", src="02:00:00:00:00:01") / Dot1Q(vlan=100) /
        ARP(psrc="10.3.0.1", pdst="10.3.0.2") / Raw(tag)))
    # three tags: past what the parser reads, so not IP to it
    tr.add("non-ip-three-tags", None, lambda tag: pkt(
        ip4("10.3.0.1", "10.3.0.2"), udp(5000, 53),
        [(0x88A8, 1), (0x8100, 2), (0x8100, 3)], tag))
    # IPv4 / IPv6 ethertypes with less than a header behind them
    tr.raw("non-ip-v4-runt", None, whole[:14] + b"\x45|v4-runt|" + bytes(8))
    tr.raw("non-ip-v6-runt", None, whole[:12] + b"\x86\xdd" + b"\x60|v6-runt|" + bytes(28))
    return ops, tr


@pytest.fixture(scope="module")
def frag(xnv_module):
    ops, tr = frag_table()
    return ops, tr, run_table(xnv_module, "frag", ops, tr)


def test_fragments_skip_port_rules(frag):
    """IPv4 fragments (first, middle, last; a 4-word header) and IPv6
    fragments of a flow match neither its exact rule nor its port rule, but
    its address-only rule (and a protocol rule without ports: only their
    protocol); DF alone is no fragment."""
    ops, tr, run = frag
    check_run(run, tr, ops, labels(tr, "udp", "frag"))
    check_hits(run, tr, ["f-ports", "f-exact", "f-addr", "f-proto", "f6-ports", "f6-addr",
                         "f-range-full"])
    assert run["replies"]["f-range-full"]["dport"] == "any"


def test_non_ip_takes_default_chain(frag):
    """Under a rule matching any IP packet, frames that are not IP to the
    parser (another ethertype, ARP tagged or not, three tags, an IP
    ethertype without a whole header) keep their port's chain."""
    ops, tr, run = frag
    check_run(run, tr, ops, labels(tr, "non-ip", "catch-"))
    check_hits(run, tr, ["catch-all"])
    r = run["replies"]["catch-all"]
    assert [r[k] for k in ("in_port", "vlan", "proto", "src", "dst", "sport", "dport")] \
        == ["any"] * 7
    assert r["priority"] == 0


def test_frag_run_whole(frag):
    ops, tr, run = frag
    check_run(run, tr, ops)
    check_hits(run, tr)
    check_clean(run, tr, ops)


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


# --------------------------------------------------------------------------
# bad rules: one line naming the field, nothing changed

@pytest.fixture(scope="module")
def idle(xnv_module):
    """A core without traffic and three rules (one exact, one from the
    config)."""
    env = xnv_module
    cfg = rules_config(env, "idle", [("dns", {"proto": "udp", "dport": 53, "chain": "o1"})])
    core = start_named_core(env, cfg, "idle")
    with Telemetry(core) as t:
        for spec in ("proto=tcp src=10.0.0.1 dst=10.0.0.2 sport=1 dport=2 chain=o2",
                     "priority=7 in_port=in2 vlan=12 proto=132 src=2001:db8::/32 "
                     "sport=5-6 chain=o3 -> drop"):
            assert "id" in call(t, "/xnv/flow/add", spec)
        yield core, t


def table(t):
    ids = t("/xnv/flow/list")
    return ids, [t("/xnv/flow/info", i) for i in ids], t("/xnv/info")["n_flows"]


BAD_RULES = {
    "unknown-field": ("proto=udp colour=red chain=o1",
                      "flow rule: unknown field 'colour' (priority, in_port, vlan, proto, "
                      "src, dst, sport, dport, chain)"),
    "field-twice": ("proto=udp dport=53 proto=tcp chain=o1", "flow rule: proto given twice"),
    "any-twice": ("src=any src=10.0.0.1 chain=o1", "flow rule: src given twice"),
    "not-key-value": ("proto=udp 53 chain=o1", "flow rule: '53' is not KEY=VALUE"),
    "empty-value": ("proto= chain=o1", "flow rule: 'proto=' is not KEY=VALUE"),
    "prefix-33": ("src=10.0.0.0/33 chain=o1",
                  "flow rule: src '10.0.0.0/33' is not an IPv4 or IPv6 address[/prefix length]"),
    "prefix-129": ("dst=2001:db8::/129 chain=o1",
                   "flow rule: dst '2001:db8::/129' is not an IPv4 or IPv6 address[/prefix "
                   "length]"),
    "prefix-signed": ("dst=10.0.0.0/+8 chain=o1",
                      "flow rule: dst '10.0.0.0/+8' is not an IPv4 or IPv6 address[/prefix "
                      "length]"),
    "range-backwards": ("proto=udp dport=2000-1000 chain=o1",
                        "flow rule: dport '2000-1000' is not a port, a range FIRST-LAST of "
                        "ports (0..65535) or any"),
    "range-open": ("proto=udp sport=1000- chain=o1",
                   "flow rule: sport '1000-' is not a port, a range FIRST-LAST of ports "
                   "(0..65535) or any"),
    "ports-without-proto": ("dst=10.0.0.1 dport=53 chain=o1",
                            "flow rule: sport/dport need proto tcp, udp or sctp"),
    "ports-with-icmp": ("proto=icmp sport=1 chain=o1",
                        "flow rule: sport/dport need proto tcp, udp or sctp"),
    "vlan-4096": ("vlan=4096 chain=o1", "flow rule: vlan '4096' is not 0..4095, none or any"),
    "vlan-negative": ("vlan=-1 chain=o1", "flow rule: vlan '-1' is not 0..4095, none or any"),
    "unknown-in-port": ("in_port=eth0 chain=o1",
                        "flow rule: in_port 'eth0' is not a port of this core"),
    "in-port-service": ("in_port=gate chain=o1",
                        "flow rule: in_port 'gate' is not a port of this core"),
    "mixed-families": ("src=10.0.0.1 dst=2001:db8::1 chain=o1",
                       "flow rule: src= and dst= are of different families (IPv4 and IPv6)"),
    "mixed-families-0": ("src=::/0 dst=0.0.0.0/0 chain=o1",
                         "flow rule: src= and dst= are of different families (IPv4 and IPv6)"),
    "priority-65536": ("priority=65536 chain=o1", "flow rule: priority '65536' is not 0..65535"),
    "priority-any": ("priority=any chain=o1", "flow rule: priority 'any' is not 0..65535"),
    "proto-256": ("proto=256 chain=o1",
                  "flow rule: proto '256' is not a name (tcp, udp, icmp, icmp6, sctp, gre, "
                  "esp), 0..255 or any"),
    "no-chain": ("proto=udp", "flow rule: no chain=STEPS"),
    "empty-chain": ("proto=udp chain=", "chain has an empty step"),
    "chain-unknown": ("proto=udp chain=o1 -> o9",
                      "chain step 'o9' is not a declared service, a port, or 'drop'"),
    "same-rule": ("proto=tcp src=10.0.0.1 dst=10.0.0.2 sport=1 dport=2 chain=o5",
                  "rule 2 matches the same at the same priority"),
    "same-rule-from-config": ("dport=53 proto=udp priority=32768 chain=drop",
                              "rule 1 matches the same at the same priority"),
}


@pytest.mark.parametrize("case", BAD_RULES, ids=list(BAD_RULES))
def test_bad_rule_one_line_nothing_changed(idle, case):
    core, t = idle
    spec, error = BAD_RULES[case]
    before = table(t)
    reply = t("/xnv/flow/add", spec)
    assert reply == {"error": error}, reply
    assert "\n" not in error
    assert table(t) == before
    assert core.alive()


def test_rule_fields_read_back_as_the_same_rule(idle):
    """/xnv/flow/info's fields, given back to /xnv/flow/add, are the same
    rule (refused as such): the replies say exactly what a rule matches."""
    core, t = idle
    ids, infos, _ = table(t)
    assert len(infos) == 3
    for info in infos:
        spec = " ".join(f"{k}={info[k]}" for k in ("priority", "in_port", "vlan", "proto",
                                                    "src", "dst", "sport", "dport"))
        reply = t("/xnv/flow/add", spec + " chain=drop")
        assert reply == {"error": f"rule {info['id']} matches the same at the same "
                                  f"priority"}, (info, reply)
    assert infos[0]["name"] == "dns" and infos[1]["name"] == infos[2]["name"] == ""
    assert {k: infos[2][k] for k in ("priority", "in_port", "vlan", "proto", "src", "dst",
                                     "sport", "dport", "chain")} == {
        "priority": 7, "in_port": "in2", "vlan": "12", "proto": "sctp",
        "src": "2001:db8::/32", "dst": "::/0", "sport": "5-6", "dport": "any",
        "chain": ["o3", "drop"]}


# --------------------------------------------------------------------------
# a command the core's loop did not take in time: "busy": 1 (CONTROL.md)

# Stops one thread (argv[1], a tid) with ptrace for argv[2] seconds: the
# core's main loop (its main thread), while its telemetry thread answers.
STOP_THREAD = textwrap.dedent("""
    import ctypes, os, sys, time
    libc = ctypes.CDLL(None, use_errno=True)
    libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
    SEIZE, INTERRUPT, DETACH, WALL = 0x4206, 0x4207, 17, 0x40000000
    tid, secs = int(sys.argv[1]), float(sys.argv[2])
    for req in (SEIZE, INTERRUPT):
        if libc.ptrace(req, tid, None, None) != 0:
            sys.exit(f"ptrace {req:#x}: {os.strerror(ctypes.get_errno())}")
    os.waitpid(tid, WALL)
    print("stopped", flush=True)
    time.sleep(secs)
    libc.ptrace(DETACH, tid, None, None)
    print("resumed", flush=True)
""")
BUSY = {"error": "xnv-core did not answer within 2 s", "busy": 1}


@pytest.fixture(scope="module")
def stalled(xnv_module):
    """A core with one rule whose main loop is stopped (ptrace, its main
    thread only) while /xnv/info, /xnv/flow/add and /xnv/flow/reload are
    asked once each (no asking again): the replies, and the table before
    and once the loop runs again."""
    env = xnv_module
    cfg = rules_config(env, "stalled", [("dns", {"proto": "udp", "dport": 53, "chain": "o1"})])
    core = start_named_core(env, cfg, "stalled")
    res = {}
    with Telemetry(core, timeout=30) as t:
        res["before"] = table(t)
        # each command waits 2 s for the loop: stopped long enough for three
        stop = env.start("stop-loop", [sys.executable, "-c", STOP_THREAD, core.pid,
                                       scaled(10)])
        wait_until(lambda: "stopped" in stop.stdout() or not stop.alive(), 10,
                   "the core's main thread stopped")
        if "stopped" not in stop.stdout():
            pytest.skip(f"cannot stop a thread with ptrace: {stop.stderr().strip()}")
        res["info"] = t("/xnv/info", busy_timeout=0)
        res["stopped_after_info"] = "resumed" not in stop.stdout()
        res["add"] = t("/xnv/flow/add", "proto=tcp dport=22 chain=o2", busy_timeout=0)
        res["reload"] = t("/xnv/flow/reload", busy_timeout=0)
        assert stop.wait(30) == 0, stop.stderr()
        res["after"] = table(t)
        res["add_again"] = call(t, "/xnv/flow/add", "proto=tcp dport=23 chain=o2")
    res["alive"] = core.alive()
    return res


def test_stalled_loop_command_says_busy(stalled):
    """The mechanism: a loop command (/xnv/info) asked while the loop is
    stopped is withdrawn and says busy; the core goes on once the loop
    runs again."""
    assert stalled["stopped_after_info"], "the loop ran again before /xnv/info ended"
    assert stalled["info"] == BUSY, stalled["info"]
    assert "id" in stalled["add_again"] and stalled["alive"], stalled["add_again"]


# The flow commands run on the telemetry thread; what they need of the main
# loop (chain versions) waits 2 s for it.  With the loop stalled they finish
# once it runs again, or say busy (not run, ask again), never a bare error.


def test_flow_add_with_loop_stalled(stalled):
    r, (ids, infos, n) = stalled["add"], stalled["after"]
    if "id" in r:           # it waited for the loop and added the rule
        assert r["id"] in ids and n == stalled["before"][2] + 1, (r, ids)
    else:
        assert r.get("busy") == 1, r
        assert stalled["after"] == stalled["before"]


def test_flow_reload_with_loop_stalled(stalled):
    r = stalled["reload"]
    if "error" in r:
        assert r.get("busy") == 1, r
    else:
        assert r["rules"] == 1, r


# --------------------------------------------------------------------------
# SCTP: ports like TCP's and UDP's

def test_sctp_port_rules(xnv):
    """proto=sctp with a port, and an exact SCTP 5-tuple (the hash), match
    SCTP packets; without ports, any SCTP packet of the address."""
    from scapy.layers.sctp import SCTP
    ops = [("add", "sctp-port", "proto=sctp dport=9 chain=o1"),
           ("add", "sctp-exact", "proto=sctp src=10.4.0.1 dst=10.4.0.2 sport=7 dport=8 "
                                 "chain=o2"),
           ("add", "sctp-addr", "proto=sctp dst=10.4.0.3 chain=o3")]
    tr = Traffic()
    tr.add("sctp-port", "sctp-port", lambda tag: pkt(ip4("10.4.0.9", "10.4.0.5"),
                                                     SCTP(sport=1, dport=9), (), tag))
    tr.add("sctp-exact", "sctp-exact", lambda tag: pkt(ip4("10.4.0.1", "10.4.0.2"),
                                                       SCTP(sport=7, dport=8), (), tag))
    tr.add("sctp-addr", "sctp-addr", lambda tag: pkt(ip4("10.4.0.1", "10.4.0.3"),
                                                     SCTP(sport=7, dport=8), (), tag))
    tr.add("sctp-other-port", None, lambda tag: pkt(ip4("10.4.0.9", "10.4.0.5"),
                                                    SCTP(sport=1, dport=10), (), tag))
    tr.add("udp-same-port", None, lambda tag: pkt(ip4("10.4.0.9", "10.4.0.5"), udp(1, 9),
                                                  (), tag))
    tr.add("sctp-exact-other-sport", None, lambda tag: pkt(ip4("10.4.0.1", "10.4.0.2"),
                                                           SCTP(sport=6, dport=8), (), tag))
    run = run_table(xnv, "sctp", ops, tr)
    check_clean(run, tr, ops)
    assert run["where"]["sctp-addr"] == "o3"     # without ports it does match
    check_run(run, tr, ops)
    check_hits(run, tr)

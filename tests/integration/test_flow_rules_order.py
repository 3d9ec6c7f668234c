# SPDX-License-Identifier: BSD-3-Clause
"""Which flow rule takes a packet (dom0-core/flow_rule.h), with real
traffic: one core and rule table (flowrules.py), each rule sending straight
to an output port, its hits = the packets meant for it.  What is proved:
  - order: the highest priority wins; ties go to the rule added first (by
    time, not by id: a rule added after a delete reuses a lower id and still
    loses); an exact 5-tuple (the hash) against a wildcard (the tries), each
    way round and at equal priority; one 5-tuple at two priorities;
  - fragments never match a port rule but match address / protocol rules;
    non-IP frames keep the default chain even under a rule matching any IP."""
import pytest

from flowrules import (Traffic, _l2, check_clean, check_hits, check_run, ip4, ip6, labels, pkt,
                       run_scenario, tcp, udp)


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
    return run_scenario(xnv_module, "order", order_table)


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
    return run_scenario(xnv_module, "frag", frag_table)


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

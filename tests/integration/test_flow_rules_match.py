# SPDX-License-Identifier: BSD-3-Clause
"""What one flow rule matches (dom0-core/flow_rule.h), with real traffic:
one core and rule table (flowrules.py), each rule sending straight to an
output port, its hits = the packets meant for it.  What is proved:
  - the issue's repro: `proto=udp src=10.0.0.1 dst=10.0.0.2 dport=53
    chain=drop` (no sport) drops 10.0.0.1:1234 -> 10.0.0.2:53;
  - prefixes (IPv4 /8, /24, /0; IPv6 /48, /64; host bits cleared), /0
    limits a rule to its family, a rule without address matches both;
    port ranges (ends included), proto any / by number / by name;
    vlan=N on the outer tag of 802.1Q, 802.1ad and double 802.1Q frames,
    vlan=none untagged only, the headers read through two tags; in_port;
  - SCTP ports match like TCP's and UDP's.
Which rule wins among several is test_flow_rules_order.py's."""
import pytest

from flowrules import (Traffic, check_clean, check_hits, check_run, ip4, ip6, labels, pkt,
                       run_scenario, run_table, tcp, udp)


# --------------------------------------------------------------------------
# what one rule matches: addresses, ports, protocols, VLANs, input port.
# Each rule has an address space (or protocol) of its own, so a packet
# meant for one rule can only be taken by another through a wrong match.

QA, ADA = (0x8100,), (0x88A8,)      # TPIDs of an 802.1Q and an 802.1ad tag


class Senders:
    """Packets added to a Traffic by kind: UDP, TCP, a bare IP protocol,
    over IPv4 or IPv6, with the tags and on the input port given."""

    def __init__(self, tr):
        self.tr = tr

    def u4(self, label, expect, src, dst, sport, dport, vlans=(), port="in1"):
        self.tr.add(label, expect, lambda tag: pkt(ip4(src, dst), udp(sport, dport),
                                                   vlans, tag), port)

    def t4(self, label, expect, src, dst, sport, dport, port="in1"):
        self.tr.add(label, expect,
                    lambda tag: pkt(ip4(src, dst), tcp(sport, dport), (), tag), port)

    def u6(self, label, expect, src, dst, sport=1, dport=9, vlans=()):
        self.tr.add(label, expect,
                    lambda tag: pkt(ip6(src, dst), udp(sport, dport), vlans, tag))

    def p4(self, label, expect, src, dst, proto):
        self.tr.add(label, expect, lambda tag: pkt(ip4(src, dst, proto=proto), None, (), tag))

    def p6(self, label, expect, src, dst, nh):
        self.tr.add(label, expect, lambda tag: pkt(ip6(src, dst, nh=nh), None, (), tag))


def match_rules():
    """The rules, each with an address space or protocol of its own."""
    return [("add", k, s) for k, s in [
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


def addr_traffic(s):
    """The repro; IPv4 and IPv6 prefixes; /0 and no address."""
    # the issue's repro: no sport in the rule
    s.u4("repro-1234", "repro", "10.0.0.1", "10.0.0.2", 1234, 53)
    s.u4("repro-40000", "repro", "10.0.0.1", "10.0.0.2", 40000, 53)
    s.u4("repro-dport54", None, "10.0.0.1", "10.0.0.2", 1234, 54)
    s.t4("repro-tcp", None, "10.0.0.1", "10.0.0.2", 1234, 53)
    s.u4("repro-other-src", None, "10.0.0.3", "10.0.0.2", 1234, 53)
    # IPv4 prefixes
    s.u4("24-low", "v4-24", "10.99.0.1", "192.168.7.0", 1, 9)
    s.u4("24-high", "v4-24", "10.99.0.1", "192.168.7.255", 1, 9)
    s.u4("24-above", None, "10.99.0.1", "192.168.8.0", 1, 9)
    s.u4("24-below", None, "10.99.0.1", "192.168.6.255", 1, 9)
    s.u4("8-low", "v4-8", "172.0.0.0", "10.99.0.1", 1, 9)
    s.u4("8-high", "v4-8", "172.255.255.255", "10.99.0.1", 1, 9)
    s.u4("8-above", None, "173.0.0.0", "10.99.0.1", 1, 9)
    s.u4("8-below", None, "171.255.255.255", "10.99.0.1", 1, 9)
    # /0 limits a rule to its family; no address: both families
    s.p4("0-v4", "v4-0", "10.60.0.1", "10.60.0.2", 253)
    s.p6("0-v4-not-v6", None, "2001:db8:60::1", "2001:db8:60::2", 253)
    s.p6("0-v6", "v6-0", "2001:db8:60::1", "2001:db8:60::2", 254)
    s.p4("0-v6-not-v4", None, "10.60.0.1", "10.60.0.2", 254)
    s.p4("both-v4", "both", "10.60.0.1", "10.60.0.2", 252)
    s.p6("both-v6", "both", "2001:db8:60::1", "2001:db8:60::2", 252)
    # IPv6 prefixes
    s.u6("48-low", "v6-48", "2001:db8:99::1", "2001:db8:aa::")
    s.u6("48-high", "v6-48", "2001:db8:99::1", "2001:db8:aa:ffff:ffff:ffff:ffff:ffff")
    s.u6("48-above", None, "2001:db8:99::1", "2001:db8:ab::")
    s.u6("48-below", None, "2001:db8:99::1", "2001:db8:a9:ffff:ffff:ffff:ffff:ffff")
    s.u6("64-low", "v6-64", "2001:db8:1:2::", "2001:db8:98::1")
    s.u6("64-high", "v6-64", "2001:db8:1:2:ffff:ffff:ffff:ffff", "2001:db8:98::1")
    s.u6("64-above", None, "2001:db8:1:3::", "2001:db8:98::1")
    s.u6("64-below", None, "2001:db8:1:1:ffff:ffff:ffff:ffff", "2001:db8:98::1")


def port_proto_traffic(s):
    """Port ranges; protocols by number, by name, any."""
    from scapy.layers.inet import ICMP
    from scapy.layers.inet6 import ICMPv6EchoRequest
    from scapy.layers.l2 import GRE
    # port ranges: both ends included, the other protocol not
    s.u4("dport-1000", "dport-range", "10.20.0.1", "10.20.0.2", 1, 1000)
    s.u4("dport-1500", "dport-range", "10.20.0.1", "10.20.0.2", 1, 1500)
    s.u4("dport-1999", "dport-range", "10.20.0.1", "10.20.0.2", 1, 1999)
    s.u4("dport-999", None, "10.20.0.1", "10.20.0.2", 1, 999)
    s.u4("dport-2000", None, "10.20.0.1", "10.20.0.2", 1, 2000)
    s.t4("dport-tcp", None, "10.20.0.1", "10.20.0.2", 1, 1500)
    s.u6("dport-v6", "dport-range", "2001:db8:20::1", "2001:db8:20::2", 1, 1000)
    s.t4("sport-5000", "sport-range", "10.21.0.1", "10.21.0.2", 5000, 80)
    s.t4("sport-5001", "sport-range", "10.21.0.1", "10.21.0.2", 5001, 80)
    s.t4("sport-4999", None, "10.21.0.1", "10.21.0.2", 4999, 80)
    s.t4("sport-5002", None, "10.21.0.1", "10.21.0.2", 5002, 80)
    s.u4("sport-udp", None, "10.21.0.1", "10.21.0.2", 5000, 80)
    # protocols: by number, by name, any
    s.tr.add("gre", "proto-num", lambda tag: pkt(ip4("10.30.0.9", "10.30.0.1"), GRE(), (), tag))
    s.u4("gre-not-udp", None, "10.30.0.9", "10.30.0.1", 1, 9)
    s.tr.add("icmp", "icmp", lambda tag: pkt(ip4("10.31.0.9", "10.31.0.1"),
                                             ICMP(type=8, id=1), (), tag))
    s.u4("icmp-not-udp", None, "10.31.0.9", "10.31.0.1", 1, 9)
    s.tr.add("icmp6", "icmp6", lambda tag: pkt(ip6("2001:db8:97::1", "2001:db8:96::1"),
                                               ICMPv6EchoRequest(id=1), (), tag))
    s.u4("any-udp", "proto-any", "10.32.0.9", "10.32.0.1", 1, 9)
    s.t4("any-tcp", "proto-any", "10.32.0.9", "10.32.0.1", 1, 9)
    s.tr.add("any-icmp", "proto-any", lambda tag: pkt(ip4("10.32.0.9", "10.32.0.1"),
                                                      ICMP(type=8, id=2), (), tag))
    s.p4("any-200", "proto-any", "10.32.0.9", "10.32.0.1", 200)
    s.u4("any-other-dst", None, "10.32.0.9", "10.32.0.2", 1, 9)


def vlan_port_traffic(s):
    """Outer tags, headers behind two tags, exact tuples, in_port."""
    # vlan=N: the outer tag, whichever TPID; vlan=none: untagged only
    s.u4("q100", "vlan100", "10.44.0.1", "10.44.0.2", 1, 9, [(0x8100, 100)])
    s.u4("ad100-q200", "vlan100", "10.44.0.1", "10.44.0.2", 1, 9,
         [(0x88A8, 100), (0x8100, 200)])
    s.u4("q100-q200", "vlan100", "10.44.0.1", "10.44.0.2", 1, 9,
         [(0x8100, 100), (0x8100, 200)])
    s.u6("q100-v6", "vlan100", "2001:db8:44::1", "2001:db8:44::2", vlans=[(0x8100, 100)])
    s.u4("ad200-q100", None, "10.44.0.1", "10.44.0.2", 1, 9, [(0x88A8, 200), (0x8100, 100)])
    s.u4("q101", None, "10.44.0.1", "10.44.0.2", 1, 9, [(0x8100, 101)])
    s.u4("untagged-44", None, "10.44.0.1", "10.44.0.2", 1, 9)
    s.u4("none-untagged", "vlan-none", "10.40.0.1", "10.40.0.2", 1, 9)
    s.u4("none-q5", None, "10.40.0.1", "10.40.0.2", 1, 9, [(0x8100, 5)])
    s.u4("none-ad5-q6", None, "10.40.0.1", "10.40.0.2", 1, 9, [(0x88A8, 5), (0x8100, 6)])
    # the headers behind two tags are read: addresses and ports match
    s.u4("ad300-q5", "vlan300", "10.41.0.1", "10.41.0.2", 1, 7, [(0x88A8, 300), (0x8100, 5)])
    s.u4("ad300-q5-port8", None, "10.41.0.1", "10.41.0.2", 1, 8,
         [(0x88A8, 300), (0x8100, 5)])
    s.u4("q300", "vlan300", "10.41.0.1", "10.41.0.2", 1, 7, [(0x8100, 300)])
    s.u4("q300-untagged", None, "10.41.0.1", "10.41.0.2", 1, 7)
    s.u4("q0", "vlan0", "10.42.0.1", "10.42.0.2", 1, 9, [(0x8100, 0)])
    s.u4("q0-untagged", None, "10.42.0.1", "10.42.0.2", 1, 9)
    # an exact 5-tuple matches whatever the tags
    s.u4("exact-untagged", "exact", "10.43.0.1", "10.43.0.2", 1, 2)
    s.u4("exact-q7", "exact", "10.43.0.1", "10.43.0.2", 1, 2, [(0x8100, 7)])
    s.u4("exact-ad7-q8", "exact", "10.43.0.1", "10.43.0.2", 1, 2, [(0x88A8, 7), (0x8100, 8)])
    s.u4("exact-other-sport", None, "10.43.0.1", "10.43.0.2", 3, 2)
    # in_port
    s.u4("in2-on-in2", "in2", "10.50.0.9", "10.50.0.1", 1, 9, port="in2")
    s.u4("in2-on-in1", None, "10.50.0.9", "10.50.0.1", 1, 9, port="in1")
    s.t4("in1-on-in1", "in1", "10.51.0.9", "10.51.0.1", 1, 9, port="in1")
    s.t4("in1-on-in2", None, "10.51.0.9", "10.51.0.1", 1, 9, port="in2")


def match_table():
    tr = Traffic()
    s = Senders(tr)
    addr_traffic(s)
    port_proto_traffic(s)
    vlan_port_traffic(s)
    return match_rules(), tr


@pytest.fixture(scope="module")
def match(xnv_module):
    return run_scenario(xnv_module, "match", match_table)


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

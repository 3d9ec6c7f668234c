# SPDX-License-Identifier: BSD-3-Clause
"""examples/nat: source NAT round trips (out, reply back, restored), one
external port per (protocol, internal address, port) whatever the
destination, checksums right (a UDP checksum of 0 stays 0), port
exhaustion, and ports freed after the idle timeout.  External ports are
handed out in order from the low end of the range, so the test knows
them in advance."""
import time

import pytest
from scapy.layers.inet import ICMP, IP, TCP, UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import ARP, Ether
from scapy.packet import Raw

from nfrun import NfSpec, parse_counters, rechecksummed, run_bad_file, \
    run_nfs, run_two_phases

ETH = dict(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
EXT = "203.0.113.1"
INSIDE = "192.168.1.0/24"


def udp(src, sport, dst, dport, zero_csum=False, seq=0):
    p = Ether(**ETH) / IP(src=src, dst=dst, id=seq) / UDP(sport=sport, dport=dport) / \
        Raw(b"nat-test" + seq.to_bytes(2, "big"))
    if zero_csum:
        p[UDP].chksum = 0
    return bytes(p)


def tcp(src, sport, dst, dport, seq=0):
    return bytes(Ether(**ETH) / IP(src=src, dst=dst, id=seq) /
                 TCP(sport=sport, dport=dport, seq=seq, flags="A") / Raw(b"x" * 20))


def rewritten(frame, src=None, sport=None, dst=None, dport=None):
    p = Ether(frame)
    l4 = p[TCP] if p.haslayer(TCP) else p[UDP]
    if src:
        p[IP].src = src
    if dst:
        p[IP].dst = dst
    if sport:
        l4.sport = sport
    if dport:
        l4.dport = dport
    return rechecksummed(bytes(p))


def test_nat_round_trip_restores_every_reply(xnv):
    o = [udp("192.168.1.10", 5000, "198.51.100.1", 53, seq=1),       # udp 40000
         tcp("192.168.1.10", 5000, "198.51.100.2", 80, seq=2),       # tcp 40000
         udp("192.168.1.11", 5000, "198.51.100.1", 53, seq=3),       # udp 40001
         udp("192.168.1.10", 5000, "198.51.100.9", 123, seq=4),      # udp 40000 again
         udp("192.168.1.12", 6000, "198.51.100.1", 53, True, seq=5),  # udp 40002
         tcp("192.168.1.11", 7000, "198.51.100.2", 80, seq=6)]       # tcp 40001
    ext = [("udp", 40000), ("tcp", 40000), ("udp", 40001), ("udp", 40000),
           ("udp", 40002), ("tcp", 40001)]
    r = [udp("198.51.100.1", 53, EXT, 40000, seq=11),
         tcp("198.51.100.2", 80, EXT, 40000, seq=12),
         udp("198.51.100.1", 53, EXT, 40001, seq=13),
         udp("198.51.100.9", 123, EXT, 40000, seq=14),
         udp("198.51.100.1", 53, EXT, 40002, True, seq=15),
         tcp("198.51.100.2", 80, EXT, 40001, seq=16)]
    back = [("192.168.1.10", 5000), ("192.168.1.10", 5000), ("192.168.1.11", 5000),
            ("192.168.1.10", 5000), ("192.168.1.12", 6000), ("192.168.1.11", 7000)]
    dropped = [udp("198.51.100.1", 53, EXT, 40005),                 # no mapping
               udp("198.51.100.1", 53, EXT, 80),                    # out of range
               tcp("198.51.100.1", 53, EXT, 40002),                 # udp-only port
               bytes(Ether(**ETH) / IP(src="192.168.1.10", dst="8.8.8.8") / ICMP())]
    passed = [udp("10.0.0.1", 1, "10.0.0.2", 2),                    # not inside
              bytes(Ether(**ETH) / ARP()),
              bytes(Ether(**ETH) / IPv6(src="2001:db8::1", dst="2001:db8::2") / UDP())]
    exhaust = [udp(f"192.168.1.{100 + i}", 9000, "198.51.100.1", 53, seq=30 + i)
               for i in range(12)]                                  # 7 ports left
    pkts = o + r + dropped + passed + exhaust
    run = run_nfs(xnv, pkts, [NfSpec("nat", (
        "--external", EXT, "--internal", INSIDE, "--ports", "40000-40009"))])
    want = [rewritten(f, src=EXT, sport=port) for f, (_, port) in zip(o, ext)]
    want += [rewritten(f, dst=a, dport=p) for f, (a, p) in zip(r, back)]
    want += passed
    want += [rewritten(f, src=EXT, sport=40003 + i) for i, f in enumerate(exhaust[:7])]
    assert run.core_rc == 0 and run.nf_rcs["nat"] == 0
    out = run.outs[0]
    assert len(out) == len(want)
    for i, (got, exp) in enumerate(zip(out, want)):
        assert got == exp, f"packet {i}: {Ether(got).summary()} != {Ether(exp).summary()}"
    assert Ether(out[4])[UDP].chksum == 0 and Ether(out[10])[UDP].chksum == 0
    c = run.counters["nat"]
    assert (c["out"], c["in"], c["passed"], c["new_mappings"], c["no_port"],
            c["no_mapping"], c["untranslatable"], c["expired"]) == \
        (6 + 7, 6, 3, 5 + 7, 5, 3, 1, 0)
    assert "mappings tcp 2 udp 10" in run.lines("nat")


def test_nat_ports_freed_after_idle_timeout(xnv):
    phase1 = [udp(f"192.168.1.{i}", 5000, "198.51.100.1", 53, seq=i)
              for i in range(1, 5)]                 # 3 ports: the 4th waits
    # after the timeout: .4 gets one of the freed ports (which one depends
    # on where the idle sweep was); replies to the two others find nothing
    phase2 = [udp("192.168.1.4", 5000, "198.51.100.1", 53, seq=9)]
    phase2 += [udp("198.51.100.1", 53, EXT, 41000 + i, seq=10 + i) for i in range(3)]
    nat, out1, out2 = run_two_phases(xnv, NfSpec("nat", (
        "--external", EXT, "--internal", INSIDE, "--ports", "41000-41002",
        "--timeout", "1")), phase1, phase2, lambda nf: time.sleep(2.0))
    assert out1 == [rewritten(f, src=EXT, sport=41000 + i)
                    for i, f in enumerate(phase1[:3])]
    assert len(out2) == 2
    port = Ether(out2[0])[UDP].sport
    assert 41000 <= port <= 41002
    assert out2 == [rewritten(phase2[0], src=EXT, sport=port),
                    rewritten(phase2[1 + port - 41000], dst="192.168.1.4", dport=5000)]
    c = parse_counters(nat.stdout())
    assert (c["new_mappings"], c["expired"], c["no_port"], c["no_mapping"]) == \
        (4, 3, 1, 2)


@pytest.mark.parametrize("args,msg", [
    (["--internal", INSIDE], "--external ADDR and --internal PREFIX are required"),
    (["--external", "2001:db8::1", "--internal", INSIDE], "IPv4 only"),
    (["--external", EXT, "--internal", "192.168.1.1/24"], "host bits"),
    (["--external", EXT, "--internal", INSIDE, "--ports", "0-100"], "port 0"),
    (["--external", EXT, "--internal", INSIDE, "--ports", "9-8"], "LO > HI"),
    (["--external", EXT, "--internal", INSIDE, "--timeout", "0"], "--timeout '0'"),
], ids=["required", "v6", "host-bits", "port-0", "range", "timeout"])
def test_nat_bad_options(xnv, args, msg):
    r = run_bad_file(xnv, "nat", args)
    assert r.returncode == 2 and msg in r.stderr, r.stderr  # usage errors

# SPDX-License-Identifier: BSD-3-Clause
"""examples/lb: Maglev load balancing with flow affinity.  Flows keep their
backend; after a backend leaves (file rewritten, SIGHUP), only its flows
move.  Destination rewrite keeps every checksum right; replies get the
VIP back as source."""
import collections
import signal

import pytest
from scapy.layers.inet import IP, TCP, UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import ARP, Ether
from scapy.packet import Raw

from nfrun import (NfSpec, assert_bad_file, parse_counters, rechecksummed,
                   run_bad_file, run_nfs, run_two_phases)

ETH = dict(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
VIP4, VIP6 = "10.0.0.100", "2001:db8::100"
B4 = [f"10.10.0.{i}" for i in range(1, 5)]
B6 = ["2001:db8:10::1", "2001:db8:10::2"]
GONE = "10.10.0.3"


def pkt(src, dst, sport, dport, tcp, seq, v6=False):
    l3 = IPv6(src=src, dst=dst) if v6 else IP(src=src, dst=dst, id=seq)
    l4 = TCP(sport=sport, dport=dport, seq=seq) if tcp else UDP(sport=sport, dport=dport)
    return bytes(Ether(**ETH) / l3 / l4 / Raw(seq.to_bytes(4, "big") * 5))


def flows(n4, n6, base=0):
    """(src, sport, v6, tcp) of distinct client flows."""
    out = [(f"172.16.{(base + i) // 200}.{(base + i) % 200 + 1}", 1024 + base + i,
            False, i % 3 == 0) for i in range(n4)]
    out += [(f"2001:db8:c::{base + i + 1:x}", 2048 + base + i, True, i % 2 == 0)
            for i in range(n6)]
    return out


def to_vip(f, seq):
    src, sport, v6, tcp = f
    return pkt(src, VIP6 if v6 else VIP4, sport, 80, tcp, seq, v6)


def ip_of(frame):
    p = Ether(frame)
    return p.getlayer(IP) or p.getlayer(IPv6)


def backend_of(frames):
    """{(client, sport): set of backends} from output frames."""
    seen = collections.defaultdict(set)
    for fr in frames:
        ip = ip_of(fr)
        seen[(ip.src, ip[1].sport)].add(ip.dst)
    return seen


def only_dst_changed(inp, out):
    p = Ether(inp)
    (p.getlayer(IP) or p.getlayer(IPv6)).dst = ip_of(out).dst
    return rechecksummed(bytes(p)) == out


def test_lb_backend_leaves_only_its_flows_move(xnv):
    bfile = xnv.path("backends.txt")
    bfile.write_text("\n".join(B4 + B6) + "\n")
    old = flows(150, 40)
    phase1 = [to_vip(f, s) for s in range(2) for f in old]
    others = [pkt("172.16.9.9", "10.0.0.7", 5000, 80, False, 1),   # not a VIP
              bytes(Ether(**ETH) / ARP())]
    phase1 += others
    new = flows(60, 0, base=1000)
    phase2 = [to_vip(f, 7) for f in old + new]

    def remove_one(lb):
        bfile.write_text("\n".join(b for b in B4 + B6 if b != GONE) + "\n")
        lb.signal(signal.SIGHUP)   # the reload is done at phase 2's 1st packet
    lb, out1, out2 = run_two_phases(xnv, NfSpec("lb", (
        "--backends", bfile, "--vip", VIP4, "--vip", VIP6)), phase1, phase2,
        remove_one)
    assert len(out1) == len(phase1) and len(out2) == len(phase2)

    # phase 1: one backend per flow, all backends used, only dst rewritten
    assert out1[-2:] == others                          # passed untouched
    assert all(only_dst_changed(i, o) for i, o in zip(phase1[:-2], out1[:-2]))
    before = backend_of(out1[:-2])
    assert all(len(b) == 1 for b in before.values()) and len(before) == len(old)
    before = {k: next(iter(b)) for k, b in before.items()}
    assert set(before.values()) == set(B4 + B6)
    # phase 2: flows of the backends still listed stay, GONE's move
    after = backend_of(out2)
    assert all(len(b) == 1 for b in after.values())
    after = {k: next(iter(b)) for k, b in after.items()}
    moved = {k for k in before if after[k] != before[k]}
    on_gone = {k for k, b in before.items() if b == GONE}
    assert on_gone and moved == on_gone
    assert GONE not in after.values()
    assert all(only_dst_changed(i, o) for i, o in zip(phase2, out2))

    c = parse_counters(lb.stdout())
    assert "reloaded" in lb.stderr()
    assert c["reloads"] == 1 and c["reload_errors"] == 0
    assert c["flows_moved"] == len(on_gone)
    assert c["new_flows"] == len(old) + len(new) + len(on_gone)
    assert c["balanced"] == 2 * len(old) + len(old) + len(new)
    assert c["passed"] == len(others)
    per = collections.Counter(ip_of(o).dst for o in out1[:-2] + out2)
    got = {l.split()[2]: int(l.split()[4]) for l in lb.stdout().splitlines()
           if l.startswith("lb: backend ")}
    assert got == dict(per)


def test_lb_replies_get_the_vip_back(xnv):
    bfile = xnv.path("backends.txt")
    bfile.write_text("# one backend\n10.10.0.9\n")
    fwd = [pkt("172.16.0.1", VIP4, 3000 + i, 443, i % 2 == 0, i) for i in range(20)]
    rep = [pkt("10.10.0.9", "172.16.0.1", 443, 3000 + i, i % 2 == 0, i) for i in range(20)]
    stray = [pkt("10.10.0.9", "172.16.0.1", 443, 9999, True, 99)]   # no flow
    v6 = [pkt("2001:db8:c::1", VIP6, 5000, 80, True, 1, v6=True)]  # no v6 backend
    run = run_nfs(xnv, fwd + rep + stray + v6, [NfSpec("lb", (
        "--backends", bfile, "--vip", VIP4, "--vip", VIP6))])
    out = run.outs[0]
    assert len(out) == 41
    for o in out[:20]:
        assert Ether(o)[IP].dst == "10.10.0.9" and rechecksummed(o) == o
    for i, o in zip(rep, out[20:40]):
        p = Ether(i)
        p[IP].src = VIP4
        assert rechecksummed(bytes(p)) == o
    assert out[40] == stray[0]
    c = run.counters["lb"]
    assert (c["balanced"], c["replies"], c["passed"], c["no_backend"]) == (20, 20, 1, 1)


@pytest.mark.parametrize("text,line,msg", [
    ("10.0.0.1\n10.0.0.300\n", 2, "not an IPv4 or IPv6 address"),
    ("10.0.0.1\n\n# x\n10.0.0.1\n", 4, "listed twice"),
    ("10.0.0.1 10.0.0.2\n", 1, "one address a line"),
], ids=["address", "twice", "words"])
def test_lb_bad_backend_file_names_file_and_line(xnv, text, line, msg):
    assert_bad_file(xnv, "lb", "--backends", text, line, msg, "backends.txt")


def test_lb_bad_options(xnv):
    path = xnv.path("backends.txt")
    path.write_text("10.0.0.1\n")
    r = run_bad_file(xnv, "lb", ["--backends", path, "--table-size", "65536"])
    assert r.returncode == 2 and "not a prime" in r.stderr
    r = run_bad_file(xnv, "lb", ["--backends", path, "--vip", "10.0.0.1/8"])
    assert r.returncode == 2 and "host bits" in r.stderr

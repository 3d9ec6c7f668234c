# SPDX-License-Identifier: BSD-3-Clause
"""examples/router: longest-prefix match over IPv4 and IPv6 routes, TTL /
hop limit, MAC rewrite, several out ports.  The expected output of every
packet is computed here from the same route and neighbour files by a
linear scan (Python's ipaddress), and compared byte for byte."""
import ipaddress
import random

import pytest
from scapy.layers.inet import IP, TCP, UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import ARP, Ether
from scapy.packet import Raw

from nfrun import NfSpec, rechecksummed, run_bad_file, run_nfs

ROUTES = """\
# test routes: ports 1 and 2 are out0 and out1
0.0.0.0/0          via 192.0.2.1     port 1
10.0.0.0/8         via 10.255.0.1    port 2
10.1.0.0/16        port 1            # connected
10.1.2.0/24        via 10.255.0.2    port 2
10.1.2.128/25      drop
10.1.2.7           via 192.0.2.1     port 1
10.2.0.0/15        via 10.255.0.2    port 1
2001:db8::/32      via fe80::1       port 2
2001:db8:1::/48    port 1
2001:db8:1:2::/64  via fe80::2       port 2
"""
NEIGH = """\
192.0.2.1      02:00:00:00:01:01
10.255.0.1     02:00:00:00:02:01
10.255.0.2     02:00:00:00:02:02
10.1.0.5       02:00:00:00:01:05
fe80::1        02:00:00:00:02:61
fe80::2        02:00:00:00:02:62
2001:db8:1::5  02:00:00:00:01:65
port 1         02:aa:00:00:00:01
port 2         02:aa:00:00:00:02
"""
PORT_MAC = {1: "02:aa:00:00:00:01", 2: "02:aa:00:00:00:02"}
SRC_MAC, IN_DST_MAC = "02:00:00:00:00:99", "02:aa:00:00:00:00"


def parse_files():
    routes, neigh = [], {}
    for line in ROUTES.splitlines():
        w = line.split("#")[0].split()
        if not w:
            continue
        net = ipaddress.ip_network(w[0])
        if w[1] == "drop":
            routes.append((net, "drop", None))
        elif w[1] == "via":
            routes.append((net, int(w[4]), ipaddress.ip_address(w[2])))
        else:
            routes.append((net, int(w[2]), None))
    for line in NEIGH.splitlines():
        w = line.split()
        if w[0] != "port":
            neigh[ipaddress.ip_address(w[0])] = w[1]
    return routes, neigh


def expect(frame, routes, neigh):
    """(port, frame out) or (None, reason) for one input frame."""
    p = Ether(frame)
    ip = p.getlayer(IP) or p.getlayer(IPv6)
    if ip is None:
        return None, "not_ip"
    dst = ipaddress.ip_address(ip.dst)
    best = max((r for r in routes if dst in r[0]),
               key=lambda r: r[0].prefixlen, default=None)
    if best is None:
        return None, "no_route"
    net, port, via = best
    if port == "drop":
        return None, "blackhole"
    ttl = ip.ttl if isinstance(ip, IP) else ip.hlim
    if ttl <= 1:
        return None, "ttl_expired"
    mac = neigh.get(via or dst)
    if mac is None:
        return None, "no_neighbour"
    if isinstance(ip, IP):
        ip.ttl -= 1
        del ip.chksum
    else:
        ip.hlim -= 1
    p.dst, p.src = mac, PORT_MAC[port]
    return port, bytes(p)


def traffic(n=600, seed=8):
    rnd = random.Random(seed)
    v4 = ["10.1.2.7", "10.1.2.8", "10.1.2.200", "10.1.0.5", "10.1.9.9",
          "10.3.0.1", "10.2.3.4", "10.200.0.1", "192.0.2.77", "8.8.8.8",
          "10.255.255.255", "0.0.0.0", "255.255.255.255", "10.1.2.127"]
    v6 = ["2001:db8::1", "2001:db8:1::5", "2001:db8:1::6", "2001:db8:1:2::9",
          "2001:db8:ffff::1", "3000::1", "::1"]
    out = []
    for i in range(n):
        ttl = rnd.choice([0, 1, 2, 64, 255])
        l4 = (TCP(sport=1000 + i, dport=80, flags="S") if i % 2 else
              UDP(sport=1000 + i, dport=53))
        if rnd.random() < 0.7:
            dst = rnd.choice(v4) if rnd.random() < 0.6 else \
                f"10.{rnd.randrange(256)}.{rnd.randrange(256)}.{rnd.randrange(256)}"
            l3 = IP(src="172.16.0.1", dst=dst, ttl=ttl, id=i)
        else:
            l3 = IPv6(src="2001:db8:9::1", dst=rnd.choice(v6), hlim=ttl)
        out.append(bytes(Ether(src=SRC_MAC, dst=IN_DST_MAC) / l3 / l4 /
                         Raw(bytes(rnd.randrange(0, 200)))))
    # neither IPv4 nor IPv6, and broken IP
    out.append(bytes(Ether(src=SRC_MAC, dst="ff:ff:ff:ff:ff:ff") /
                     ARP(pdst="10.1.0.5")))
    out.append(bytes(60))                             # all zero
    out.append(bytes(Ether(src=SRC_MAC, dst=IN_DST_MAC, type=0x0800)) +
               bytes(10))                             # IPv4, cut short
    return out


@pytest.fixture(scope="module")
def routed(xnv_module):
    d = xnv_module.dir
    (d / "routes.txt").write_text(ROUTES)
    (d / "neigh.txt").write_text(NEIGH)
    pkts = traffic()
    run = run_nfs(xnv_module, pkts, [NfSpec("router", (
        "--routes", d / "routes.txt", "--neigh", d / "neigh.txt"))], n_out=2)
    return pkts, run


def test_router_every_packet_routed_as_the_reference_says(routed):
    pkts, run = routed
    routes, neigh = parse_files()
    want = {1: [], 2: []}
    for f in pkts:
        port, out = expect(f, routes, neigh)
        if port is not None:
            want[port].append(out)
    assert run.core_rc == 0, run.core.log()[-2000:]
    assert len(run.outs[0]) == len(want[1]) and len(want[1]) > 50
    assert len(run.outs[1]) == len(want[2]) and len(want[2]) > 50
    assert run.outs[0] == want[1]
    assert run.outs[1] == want[2]


def test_router_checksums_valid_after_ttl_decrement(routed):
    _, run = routed
    outs = run.outs[0] + run.outs[1]
    assert outs
    for f in outs:
        assert rechecksummed(f) == f


def test_router_counters_equal_the_reference(routed):
    pkts, run = routed
    routes, neigh = parse_files()
    want = {"packets": len(pkts), "routed": 0, "no_route": 0,
            "ttl_expired": 0, "no_neighbour": 0, "blackhole": 0,
            "not_ip": 0, "malformed": 0}
    ports = {1: 0, 2: 0}
    for f in pkts:
        port, why = expect(f, routes, neigh)
        if port is None:
            want[why] += 1
        else:
            want["routed"] += 1
            ports[port] += 1
    # scapy reads the cut IPv4 frame as not IP; the router calls it malformed
    want["not_ip"] -= 1
    want["malformed"] += 1
    assert all(want[k] > 0 for k in want), want
    c = run.counters["router"]
    assert {k: c[k] for k in want} == want
    lines = run.lines("router")
    assert f"port 1 tx {ports[1]}" in lines and f"port 2 tx {ports[2]}" in lines
    assert run.nf_rcs["router"] == 0
    nf = run.stats["nfs"][0]
    assert nf["tx"] == want["routed"]
    assert nf["drop"] == len(pkts) - want["routed"]


@pytest.mark.parametrize("routes,neigh,line,msg", [
    ("10.0.0.0/8 port 1\n10.0.0.1/8 port 1\n", "", 2, "host bits set"),
    ("# c\n\n10.0.0.0/33 port 1\n", "", 3, "prefix length is not 0..32"),
    ("10.0.0.0/8 via 1.2.3.4 port 1\n", "", 1, "no neighbour entry"),
    ("10.0.0.0/8 port 1\n10.0.0.0/8 drop\n", "", 2, "duplicate route"),
    ("10.0.0.0/8 port 7\n", "", 1, "port 7 has no 'port 7 MAC'"),
    ("10.0.0.0/8 via 2001:db8::1 port 1\n", "2001:db8::1 02:00:00:00:00:01\n",
     1, "is not IPv4"),
    ("10.0.0.0/8 port x\n", "", 1, "port 'x'"),
    ("10.0.0.0/8 to 1\n", "", 1, "expected 'PREFIX via"),
    ("10.0.0.0/8 port 1\n", "port 1 02:aa:00:00:00\n", 1, "not a MAC"),
], ids=["host-bits", "length", "no-neighbour", "duplicate", "port-mac",
        "family", "port-number", "syntax", "mac"])
def test_router_bad_file_names_file_and_line(xnv, routes, neigh, line, msg):
    r_path, n_path = xnv.path("routes.txt"), xnv.path("neigh.txt")
    r_path.write_text(routes)
    n_path.write_text("port 1 02:aa:00:00:00:01\n" + neigh)
    r = run_bad_file(xnv, "router", ["--routes", r_path, "--neigh", n_path])
    assert r.returncode == 1
    bad = n_path if "MAC" in msg and "port 7" not in msg else r_path
    if msg == "not a MAC":
        line += 1                       # after the port 1 line
    first = r.stderr.splitlines()[0]
    assert first.startswith(f"{bad}:{line}: "), r.stderr
    assert msg in first, r.stderr


def test_router_needs_its_files(xnv):
    r = run_bad_file(xnv, "router", [])
    assert r.returncode == 2 and "--routes FILE and --neigh FILE" in r.stderr
    r = run_bad_file(xnv, "router", ["--help"])
    assert r.returncode == 0 and "--routes FILE" in r.stdout

#!/usr/bin/env python3
"""Write a pcap of mixed traffic: TCP/UDP/ICMP over IPv4 and IPv6, sizes
60..1514 B, several flows.  TCP to port 80 carries HTTP requests, which
the dpi example's sample rules alert on (examples/dpi/sample/rules.txt);
the rest is random bytes.  Used by `make demo`.

usage: gen_pcap.py OUT.pcap [--count N] [--flows F] [--seed S]
"""
import argparse
import random
import sys

from scapy.all import ICMP, IP, TCP, UDP, Ether, IPv6, Raw, wrpcap


# Requests of the TCP flows to port 80: each holds one pattern of the dpi
# sample's alert rules (ids 1001, 1004, 1003).
HTTP = (b"GET /download?file=../../etc/passwd HTTP/1.1\r\nHost: example.com\r\n\r\n",
        b"GET /search?q=<script>alert(1)</script> HTTP/1.1\r\nHost: example.com\r\n\r\n",
        b"POST /api HTTP/1.1\r\nHost: example.com\r\n\r\nq=SELECT * FROM users")


def make_packets(count, flows, seed):
    rnd = random.Random(seed)
    specs = []
    for f in range(flows):
        v6 = f % 5 == 4
        proto = ("tcp", "udp", "icmp")[f % 3]
        specs.append((v6, proto, 1024 + f, 80 + f % 4,
                      f"10.0.{f // 250}.{f % 250 + 1}",
                      f"2001:db8::{f + 1:x}"))
    pkts = []
    for i in range(count):
        v6, proto, sport, dport, src4, src6 = specs[rnd.randrange(flows)]
        l3 = IPv6(src=src6, dst="2001:db8::ffff") if v6 else \
            IP(src=src4, dst="192.0.2.1")
        if proto == "tcp":
            l4 = TCP(sport=sport, dport=dport, seq=i)
        elif proto == "udp":
            l4 = UDP(sport=sport, dport=dport)
        else:
            l4 = ICMP(id=sport, seq=i & 0xffff) if not v6 else \
                UDP(sport=sport, dport=7)
        hdr = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02") / l3 / l4
        size = rnd.randint(60, 1514)
        pad = max(0, size - len(hdr))
        body = bytes(rnd.getrandbits(8) for _ in range(pad))
        if proto == "tcp" and dport == 80:
            req = HTTP[i % len(HTTP)]
            body = req + body[len(req):]
        pkts.append(hdr / Raw(body))
    return pkts


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--count", type=int, default=10000)
    ap.add_argument("--flows", type=int, default=32)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    if a.count <= 0 or a.flows <= 0:
        sys.exit("gen_pcap: --count and --flows must be positive")
    wrpcap(a.out, make_packets(a.count, a.flows, a.seed))


if __name__ == "__main__":
    main()

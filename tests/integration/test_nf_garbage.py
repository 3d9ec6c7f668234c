# SPDX-License-Identifier: BSD-3-Clause
"""Every example NF, run with its benchmark arguments (examples/<nf>/
bench.args), survives garbage: random bytes, all-zero frames, IP headers
whose length fields lie, IPv6 extension chains running off the end.  It
returns every packet with a verdict, exits cleanly, and lets the
benchmark's 64-byte UDP/IPv4 packets (dst 10/8, port 9) through."""
import random
import struct

import pytest
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether

from harness import REPO, write_config
from nfrun import core_section, nf_bin
from traffic import read_pcap, write_pcap

NFS = ["router", "firewall", "lb", "monitor", "dpi", "nat"]
ETH = bytes.fromhex("020000000002" "020000000001")


def bench_packets(n=200):
    """Like the benchmark's: 64-byte frames (60 without FCS), marked
    "XNVB" at the start of the UDP payload (offset 42)."""
    return [bytes(Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02") /
                  IP(src=f"172.16.{i % 7}.{i % 50 + 1}", dst=f"10.0.{i % 3}.{i % 5 + 1}") /
                  UDP(sport=1024 + i % 50, dport=9) /
                  (b"XNVB" + i.to_bytes(4, "big") + bytes(10)))
            for i in range(n)]


def garbage(n=1500, seed=99):
    rnd = random.Random(seed)
    rb = lambda k: bytes(rnd.randrange(256) for _ in range(k))   # noqa: E731
    out = [bytes(60), bytes(64), bytes(14)]
    for i in range(n):
        kind = i % 6
        if kind == 0:                       # anything
            out.append(rb(rnd.randrange(1, 300)))
        elif kind == 1:                     # IP ethertypes, random rest
            et = rnd.choice([0x0800, 0x86DD, 0x8100])
            out.append(ETH + struct.pack(">H", et) + rb(rnd.randrange(0, 120)))
        elif kind == 2:                     # IPv4 header with lying lengths
            ihl = rnd.randrange(16)
            hdr = bytes([0x40 | ihl, 0]) + struct.pack(">H", rnd.choice(
                [0, 19, 20, 40, 1500, 65535])) + rb(4) + bytes([rnd.randrange(1, 255),
                rnd.choice([6, 17, 1, 0])]) + rb(10)
            out.append(ETH + b"\x08\x00" + hdr + rb(rnd.randrange(0, 40)))
        elif kind == 3:                     # TCP data offset beyond the end
            ip = IP(src="10.1.1.1", dst="10.0.0.1", proto=6) / bytes(
                [0, 80, 0, 80] + [0] * 8 + [rnd.randrange(256)] + [0] * 7)
            b = bytearray(bytes(Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02") / ip))
            out.append(bytes(b[:rnd.randrange(34, len(b) + 1)]))
        elif kind == 4:                     # IPv6 extension headers
            nh = rnd.choice([0, 43, 60, 44, 51, 6, 17])
            plen = rnd.randrange(0, 64)
            v6 = bytes([0x60, 0, 0, 0]) + struct.pack(">HBB", plen, nh, 64) + rb(32)
            out.append(ETH + b"\x86\xdd" + v6 + rb(rnd.randrange(0, 70)))
        else:                               # VLAN-tagged IPv4 UDP, cut
            p = ETH + b"\x81\x00\x00\x05\x08\x00" + bytes(
                IP(src="192.168.0.1", dst="10.0.0.9") / UDP(sport=1, dport=9) / rb(20))
            out.append(p[:rnd.randrange(18, len(p) + 1)])
    return out


@pytest.mark.parametrize("nf", NFS)
def test_nf_survives_garbage_with_bench_args(xnv, nf):
    args = (REPO / "examples" / nf / "bench.args").read_text().split()
    assert len((REPO / "examples" / nf / "bench.args").read_text().splitlines()) == 1
    args = [str(REPO / a) if a.startswith("examples/") else a for a in args]
    bench, junk = bench_packets(), garbage()
    pkts = junk[:700] + bench + junk[700:]
    out_pcap = xnv.path("out.pcap")
    cfg = write_config(xnv.path("g.ini"), [
        core_section(xnv),
        ("group g", {"pool_bufs": 2048}),
        ("port out", {"dev": f"net_pcap0,tx_pcap={out_pcap}", "group": "g"}),
        ("port in", {"dev": f"net_pcap1,rx_pcap={write_pcap(xnv.path('in.pcap'), pkts)}",
                     "group": "g", "chain": f"{nf} -> out"}),
        (f"service {nf}", {}),
    ])
    core = xnv.start_core(cfg, idle_exit=500)
    core.wait_ready()
    proc = xnv.start_nf(nf, "g", nf, binary=nf_bin(nf), extra=("--", *args))
    core.wait_attached(proc)
    assert core.wait(60) == 0
    assert proc.wait(10) == 0, proc.stderr()
    (rec,) = core.stats()["nfs"]
    assert rec["rx"] == len(pkts) and rec["tx"] + rec["drop"] == len(pkts)
    assert rec["bad"] == 0
    (g,) = core.stats()["groups"]
    assert g["free"] == g["pool_bufs"]
    # the benchmark's packets all got through, whatever the NF did to them
    through = [o for o in read_pcap(out_pcap) if len(o) == 60 and o[42:46] == b"XNVB"]
    assert len(through) == len(bench), proc.stdout()
    assert [o[46:50] for o in through] == [b[46:50] for b in bench]     # in order

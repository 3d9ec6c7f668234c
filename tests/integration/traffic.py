# SPDX-License-Identifier: BSD-3-Clause
"""Packets for the integration tests: pcap files read and written here
(plain format: fast and exact), scapy-crafted traffic, flow keys."""
import random
import struct
from pathlib import Path


def write_pcap(path, packets):
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        for i, p in enumerate(packets):
            f.write(struct.pack("<IIII", 1700000000 + i // 1000000,
                                i % 1000000, len(p), len(p)))
            f.write(p)
    return Path(path)


def read_pcap(path):
    """Packets of a pcap file (µs or ns, either byte order), as bytes."""
    data = Path(path).read_bytes()
    magic = data[:4]
    if magic in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1"):
        end = "<"
    elif magic in (b"\xa1\xb2\xc3\xd4", b"\xa1\xb2\x3c\x4d"):
        end = ">"
    else:
        raise AssertionError(f"{path}: not a pcap file")
    off, out = 24, []
    while off + 16 <= len(data):
        _, _, incl, orig = struct.unpack_from(end + "IIII", data, off)
        off += 16
        assert incl == orig, f"{path}: packet {len(out)} truncated"
        out.append(data[off:off + incl])
        off += incl
    assert off == len(data), f"{path}: trailing bytes"
    return out


def make_traffic(count, seed, n_flows=24, v6_flows=6, min_len=60,
                 max_len=1514):
    """`count` Ethernet frames of random lengths in [min_len, max_len]
    (frame length with the Ethernet header, no FCS) over `n_flows` flows:
    IPv4 TCP / UDP / ICMP and IPv6 TCP / UDP.  Deterministic for a seed.
    Every frame carries its sequence number, so all frames differ."""
    from scapy.layers.inet import ICMP, IP, TCP, UDP
    from scapy.layers.inet6 import IPv6
    from scapy.layers.l2 import Ether
    from scapy.packet import Raw

    rnd = random.Random(seed)
    flows = []
    for i in range(n_flows):
        v6 = i < v6_flows
        proto = ["tcp", "udp"][i % 2] if v6 else ["tcp", "udp", "icmp"][i % 3]
        if v6:
            l3 = IPv6(src=f"2001:db8::{i + 1:x}", dst=f"2001:db8:1::{i + 1:x}")
        else:
            l3 = IP(src=f"10.0.{i}.1", dst=f"10.1.{i}.2")
        sport, dport = 1024 + rnd.randrange(60000), rnd.choice([53, 80, 443, 4789, 8080])
        l4 = {"tcp": TCP(sport=sport, dport=dport, flags="A"),
              "udp": UDP(sport=sport, dport=dport),
              "icmp": ICMP(type=8, id=i + 1)}[proto]
        eth = Ether(src=f"02:00:00:00:{i:02x}:01", dst=f"02:00:00:00:{i:02x}:02")
        flows.append(eth / l3 / l4)
    hdr_len = [len(f) + 8 for f in flows]
    packets = []
    for seq in range(count):
        i = rnd.randrange(n_flows)
        base = flows[i]
        length = max(hdr_len[i], rnd.randint(min_len, max_len))
        body = struct.pack(">II", 0x584E5654, seq)   # "XNVT", sequence
        body += rnd.randbytes(length - hdr_len[i])
        if base.haslayer(TCP):
            base[TCP].seq = seq
        elif base.haslayer(ICMP):
            base[ICMP].seq = seq & 0xFFFF
        packets.append(bytes(base / Raw(body)))
    return packets


def flow_key(frame):
    """(ip version, src, dst, proto, sport, dport) of an Ethernet frame;
    ICMP uses (id, 0) as ports."""
    etype = struct.unpack_from(">H", frame, 12)[0]
    if etype == 0x0800:
        ihl = (frame[14] & 0x0F) * 4
        proto, src, dst = frame[23], frame[26:30], frame[30:34]
        l4 = 14 + ihl
        ver = 4
    elif etype == 0x86DD:
        proto, src, dst = frame[20], frame[22:38], frame[38:54]
        l4 = 54
        ver = 6
    else:
        return ("other", etype)
    if proto in (6, 17):
        sport, dport = struct.unpack_from(">HH", frame, l4)
    elif proto == 1:
        sport, dport = struct.unpack_from(">H", frame, l4 + 4)[0], 0
    else:
        sport = dport = 0
    return (ver, src, dst, proto, sport, dport)


def by_flow(packets):
    flows = {}
    for p in packets:
        flows.setdefault(flow_key(p), []).append(p)
    return flows


def first_difference(a, b):
    """None if equal, else a short description of the first difference."""
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return f"packet {i} differs (len {len(x)} vs {len(y)})"
    if len(a) != len(b):
        return f"{len(a)} packets vs {len(b)}"
    return None


def flow_str(frame):
    """The flow of an Ethernet frame as xnv-testnf names it (the keys of
    harness.read_flows): "udp|tcp SRC SPORT DST DPORT", "ipN SRC 0 DST 0",
    "frag SRC 0 DST 0" (IP fragment), "eth-XXXX - 0 - 0" (not IP)."""
    import socket
    etype, off = struct.unpack_from(">H", frame, 12)[0], 14
    if etype == 0x8100:
        etype, off = struct.unpack_from(">H", frame, 16)[0], 18
    if etype == 0x0800:
        af, proto, src, dst = socket.AF_INET, frame[off + 9], \
            frame[off + 12:off + 16], frame[off + 16:off + 20]
        frag = struct.unpack_from(">H", frame, off + 6)[0] & 0x3FFF != 0
        l4 = off + (frame[off] & 0x0F) * 4
    elif etype == 0x86DD:
        af, proto, src, dst = socket.AF_INET6, frame[off + 6], \
            frame[off + 8:off + 24], frame[off + 24:off + 40]
        frag, l4 = proto == 44, off + 40
    else:
        return f"eth-{etype:04x} - 0 - 0"
    src, dst = socket.inet_ntop(af, src), socket.inet_ntop(af, dst)
    if frag:
        return f"frag {src} 0 {dst} 0"
    if proto in (6, 17):
        sport, dport = struct.unpack_from(">HH", frame, l4)
        return f"{'tcp' if proto == 6 else 'udp'} {src} {sport} {dst} {dport}"
    return f"ip{proto} {src} 0 {dst} 0"


def flow_packets(n_flows, per_flow, proto="udp", v6=False, length=96,
                 base=0):
    """`per_flow` frames of `length` bytes for each of `n_flows` distinct
    flows (TCP or UDP, IPv4 or IPv6; flow i of `base` + i), interleaved
    round-robin; each frame carries its sequence number, so all differ."""
    from scapy.layers.inet import IP, TCP, UDP
    from scapy.layers.inet6 import IPv6
    from scapy.layers.l2 import Ether
    from scapy.packet import Raw

    heads = []
    for i in range(base, base + n_flows):
        l3 = (IPv6(src=f"2001:db8:a::{i + 1:x}", dst=f"2001:db8:b::{i % 7 + 1:x}")
              if v6 else IP(src=f"10.{2 + i // 65536}.{i // 256 % 256}.{i % 256}",
                            dst=f"10.200.0.{i % 7 + 1}"))
        l4 = (TCP(sport=1024 + i % 50000, dport=80 + i % 3, flags="A")
              if proto == "tcp" else UDP(sport=1024 + i % 50000, dport=53 + i % 3))
        heads.append(Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02") / l3 / l4)
    out = []
    for seq in range(n_flows * per_flow):
        h = heads[seq % n_flows]
        pad = max(4, length - len(h))
        out.append(bytes(h / Raw(struct.pack(">I", seq) + bytes(pad - 4))))
    return out

# SPDX-License-Identifier: BSD-3-Clause
"""Random packets for test_flow_property.py (its model: flowmodel.py):
IPv4 / IPv6, TCP / UDP / SCTP / ICMP / other protocols, fragments, IPv4
options and short header lengths, truncated L4, 802.1Q / 802.1ad / double
tags, IPv6 hop-by-hop headers, non-IP frames; most of them made from a
rule on purpose, inside its prefixes and ranges or just outside
(`rand_packet()`), and a packet's flow key again in another frame
(`repeat_packet()`).  Every frame is unique (the source MAC and a trailer
carry its sequence number), and `build_frame()` sets what the core reads
from it (`Packet.kind`)."""
import copy
import struct

from flowmodel import (FRAG6, GRE, ICMP, ICMP6, IN_PORTS, SCTP, TCP, UDP, WIDTH, Packet,
                       rand_addr_near)

TRAILER = b"XNVP"



# --------------------------------------------------------------------------
# random packets

def csum16(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack(f">{len(b) // 2}H", b))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def in_range_near(rnd, rng):
    """A port in (first, last), or just outside now and then."""
    if rng is None:
        return rnd.randrange(65536)
    a, b = rng
    x = rnd.random()
    if x < 0.1:
        return max(0, a - 1)
    if x < 0.2:
        return min(65535, b + 1)
    if x < 0.35:
        return rnd.choice((a, b))
    return rnd.randint(a, b)


def in_prefix_near(rnd, pfx, family, pool):
    """An address in the prefix, or one bit outside it now and then."""
    w = WIDTH[family]
    if pfx is None:
        return rand_addr_near(rnd, pool, family)
    a, n = pfx
    host = rnd.getrandbits(w - n) if n < w else 0
    addr = a | host
    if n and rnd.random() < 0.15:       # flip a bit of the prefix
        addr ^= 1 << (w - 1 - rnd.randrange(n))
    return addr


def vlan_tags(rnd, p, shape):
    """The tags of packet p (none, 802.1Q, 802.1ad + 802.1Q, or two
    802.1Q), the outer one carrying p.vlan."""
    def tci(vid):
        return rnd.randrange(16) << 12 | vid     # PCP and DEI bits set too
    tag = shape.get("tag")
    if tag == "q":
        return struct.pack(">HH", 0x8100, tci(p.vlan))
    if tag == "ad":
        return struct.pack(">HHHH", 0x88A8, tci(p.vlan), 0x8100,
                           tci(rnd.randrange(4096)))
    if tag == "qq":
        return struct.pack(">HHHH", 0x8100, tci(p.vlan), 0x8100,
                           tci(rnd.randrange(4096)))
    return b""


def l4_bytes(rnd, p, trailer):
    """The L4 header of packet p (of its inner protocol under an IPv6
    extension header), the trailer after it."""
    proto = getattr(p, "inner", p.proto)
    if proto in (TCP, UDP, SCTP):
        l4 = struct.pack(">HH", p.sport, p.dport)
        l4 += {TCP: struct.pack(">IIHHHH", p.seq, 0, 0x5010, 512, 0, 0),
               UDP: struct.pack(">HH", 8 + len(trailer), 0),
               SCTP: struct.pack(">II", rnd.getrandbits(32), 0)}[proto]
    elif proto in (ICMP, ICMP6):
        l4 = struct.pack(">BBHHH", 8 if proto == ICMP else 128, 0, 0,
                         p.seq & 0xFFFF, 1)
    else:
        l4 = rnd.randbytes(rnd.randrange(12))
    return l4 + trailer


def ipv4_header(rnd, p, shape, l4):
    """IPv4 header of packet p (options, fragment bits as `shape` says);
    returns it and whether the core takes the packet for a fragment."""
    frag = shape.get("frag")
    ihl = shape.get("ihl", 5)
    opts = b"\x01" * (4 * max(0, ihl - 5))     # NOPs
    flags = 0x4000 if rnd.random() < 0.3 else 0    # DF: not a fragment
    if frag == "mf":
        flags |= 0x2000
    elif frag == "off":
        flags |= rnd.randrange(1, 0x2000)
    elif frag == "mf+off":
        flags |= 0x2000 | rnd.randrange(1, 0x2000)
    hdr = struct.pack(">BBHHHBBH4s4s", 0x40 | ihl, 0,
                      20 + len(opts) + len(l4), p.seq & 0xFFFF, flags, 64,
                      p.proto, 0, p.src.to_bytes(4, "big"),
                      p.dst.to_bytes(4, "big")) + opts
    hdr = hdr[:10] + struct.pack(">H", csum16(hdr)) + hdr[12:]
    return hdr, frag is not None or ihl < 5


def ipv6_header(rnd, p, shape, l4):
    """IPv6 header of packet p, a fragment header after it when `shape`
    says; returns it and whether the packet is a fragment."""
    frag = shape.get("frag")
    ext = b""
    if frag:
        # a fragment header: the core's proto is 44, ports unknown
        ext = struct.pack(">BBHI", p.inner, 0,
                          (rnd.randrange(8192) << 3) | (frag != "off"),
                          p.seq)
    ip = struct.pack(">IHBB16s16s", 6 << 28 | rnd.getrandbits(20),
                     len(ext) + len(l4), p.proto, 64,
                     p.src.to_bytes(16, "big"),
                     p.dst.to_bytes(16, "big")) + ext
    return ip, frag is not None


def build_frame(rnd, p, shape):
    """The bytes of packet p; `shape` says how odd it is.  Sets p.kind."""
    eth = struct.pack(">6s6s", b"\x02\x00\x00\x00\x00\x02",
                      b"\x02" + p.seq.to_bytes(5, "big"))
    tags = vlan_tags(rnd, p, shape)
    trailer = TRAILER + struct.pack(">I", p.seq)
    if p.family is None:
        et = shape["ethertype"]
        body = rnd.randbytes(shape.get("len", 46)) + trailer
        if shape.get("runt"):
            body = rnd.randbytes(shape["len"])    # an IP header cut short
        p.frame = eth + tags + struct.pack(">H", et) + body
        p.kind = "other"
        return
    l4 = l4_bytes(rnd, p, trailer)
    ports_there = True
    if shape.get("cut") is not None:        # L4 shorter than 4 bytes
        l4 = l4[:shape["cut"]]
        ports_there = False
    if p.family == 4:
        (ip, fragment), et = ipv4_header(rnd, p, shape, l4), 0x0800
    else:
        (ip, fragment), et = ipv6_header(rnd, p, shape, l4), 0x86DD
    p.frame = eth + tags + struct.pack(">H", et) + ip + l4
    if fragment:
        p.kind = "frag"
    elif p.proto in (TCP, UDP, SCTP) and ports_there:
        p.kind = "ports"
    else:
        p.kind = "ip"


def rand_packet(rnd, seq, rules, pool, port_pool, vids):
    """A packet: from a random rule half of the time (so that rules match,
    or miss by one bit or one port), else from the pools."""
    base = rnd.choice(rules) if rules and rnd.random() < 0.7 else None
    p = Packet(seq, rnd.choice(IN_PORTS))
    shape = {}
    notes = []
    if base is not None:
        notes.append(f"from {base.name}")
        if base.in_port in IN_PORTS and rnd.random() < 0.9:
            p.in_port = base.in_port
    # L2
    x = rnd.random()
    if base is not None and base.vlan is not None and rnd.random() < 0.9:
        if base.vlan != "none":
            p.vlan = base.vlan
    elif x < 0.3:
        p.vlan = rnd.choice(vids)
    if p.vlan is not None:
        shape["tag"] = rnd.choice(("q", "q", "q", "ad", "qq"))
    # not IP at all
    if rnd.random() < 0.04:
        x = rnd.random()
        if x < 0.4:
            shape["ethertype"] = rnd.choice((0x0806, 0x88B5, 0x8847, 0x0842))
        elif x < 0.7:       # IPv4 / IPv6 ethertype, header cut short
            shape["ethertype"] = rnd.choice((0x0800, 0x86DD))
            shape["runt"] = True
            shape["len"] = rnd.randrange(20 if shape["ethertype"] == 0x0800
                                         else 40)
        else:               # a third tag, or 802.1Q then 802.1ad
            shape["ethertype"] = rnd.choice((0x8100, 0x88A8))
            if p.vlan is None:
                p.vlan = rnd.choice(vids)
                shape["tag"] = "q"
            shape["tag"] = "qq" if shape["ethertype"] == 0x8100 else "q"
        notes.append("not IP")
        p.note = ", ".join(notes + [str(shape)])
        p.shape = shape
        make_frame(rnd, p)
        return p
    p.family = (base.family if base is not None and base.family and
                rnd.random() < 0.95 else rnd.choice((4, 6)))
    src = base.src if base is not None and base.family == p.family else None
    dst = base.dst if base is not None and base.family == p.family else None
    p.src = in_prefix_near(rnd, src, p.family, pool)
    p.dst = in_prefix_near(rnd, dst, p.family, pool)
    if base is not None and base.proto is not None and rnd.random() < 0.9:
        p.proto = base.proto
    else:
        p.proto = rnd.choice((TCP, TCP, UDP, UDP, SCTP,
                              ICMP if p.family == 4 else ICMP6, GRE, 0,
                              rnd.randrange(256)))
    if p.family == 6 and p.proto == FRAG6:
        p.proto = UDP   # a fragment header is made below, with its L4
    if p.proto in (TCP, UDP, SCTP):
        p.sport = in_range_near(rnd, base.sport if base else None) \
            if rnd.random() < 0.7 else rnd.choice(port_pool)
        p.dport = in_range_near(rnd, base.dport if base else None) \
            if rnd.random() < 0.7 else rnd.choice(port_pool)
    if p.family == 6 and rnd.random() < 0.02:
        # a hop-by-hop header: the core's proto is 0 (no ports)
        shape["hbh"] = True
    x = rnd.random()
    if x < 0.08:
        shape["frag"] = rnd.choice(("mf", "off", "mf+off"))
    elif x < 0.11:
        shape["cut"] = rnd.randrange(4)
    elif x < 0.16 and p.family == 4:
        shape["ihl"] = rnd.choice((6, 7, 15, 0, 4))
    if p.family == 6 and shape.get("frag"):
        p.inner, p.proto = p.proto, FRAG6
    if shape.get("hbh") and not shape.get("frag"):
        p.inner, p.proto = p.proto, 0
    p.note = ", ".join(notes + [str(shape)] if shape else notes)
    p.shape = shape
    make_frame(rnd, p)
    return p


def make_frame(rnd, p):
    if p.shape.get("hbh") and not p.shape.get("frag"):
        build_hbh(rnd, p, p.shape)
    else:
        build_frame(rnd, p, p.shape)


def repeat_packet(rnd, p, seq):
    """p's flow again in another frame: the same key (addresses, ports,
    outer VLAN id, input port), so the core's verdict cache answers."""
    q = copy.copy(p)
    q.seq, q.note = seq, f"repeat of {p.seq}: {p.note}"
    make_frame(rnd, q)
    return q


def build_hbh(rnd, p, shape):
    """IPv6 with a hop-by-hop options header before its L4 (proto 0)."""
    inner = Packet(p.seq, p.in_port)
    inner.__dict__.update(p.__dict__)
    inner.proto = p.inner
    build_frame(rnd, inner, {k: v for k, v in shape.items() if k != "hbh"})
    f = inner.frame
    l3 = 14 + {None: 0, "q": 4, "ad": 8, "qq": 8}[shape.get("tag")]
    hdr = bytearray(f[l3:l3 + 40])
    rest = f[l3 + 40:]
    hdr[6] = 0                                  # next header: hop-by-hop
    hbh = bytes([inner.proto, 0, 1, 4, 0, 0, 0, 0])     # PadN
    struct.pack_into(">H", hdr, 4, len(hbh) + len(rest))
    p.frame = f[:l3] + bytes(hdr) + hbh + rest
    p.kind = "ip"

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A packet's flow key: the 5-tuple of an IPv4 or IPv6 packet, read from
 * the bytes the core received from a port (never from a buffer an NF has
 * held: validate.h).  One parser for everything that looks at headers:
 * the replica hash (classify.c) and the flow director (flow.c).
 *
 *   Ethernet [802.1ad | 802.1Q tag [802.1Q tag]] IPv4 | IPv6 [TCP|UDP|SCTP]
 *
 * Rules, strictest of what the core ever applied:
 *   - up to two VLAN tags (TPID 0x88a8 or 0x8100, then 0x8100); `vlan` is
 *     the outer tag's VLAN id, XNV_KEY_NO_VLAN without a tag;
 *   - IPv4 needs its 20-byte header, IPv6 its 40 bytes, else not IP;
 *   - an IPv4 fragment (MF set or offset != 0), an IPv4 header length
 *     under 5 words, or an IPv6 fragment header as next header: IP, but no
 *     ports (XNV_KEY_FRAG);
 *   - TCP, UDP and SCTP ports when the first 4 bytes of L4 are there,
 *     else 0.
 * No DPDK: tests/unit/test_flow_key.c runs it as is.
 */
#ifndef XNV_FLOW_KEY_H
#define XNV_FLOW_KEY_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <netinet/in.h>

#define XNV_ETH_HLEN      14
#define XNV_ETHER_VLAN    0x8100
#define XNV_ETHER_QINQ    0x88a8
#define XNV_KEY_NO_VLAN   0xffff
#define XNV_ETHER_IPV4    0x0800
#define XNV_ETHER_IPV6    0x86dd

/* Aligned: the hash and the verdict cache read it 8 bytes at a time. */
struct xnv_flow_key {
	_Alignas(8) uint8_t src[16];	/* IPv4: first 4 bytes, rest 0 */
	uint8_t dst[16];
	uint16_t sport, dport;		/* network order; 0 when not read */
	uint8_t proto;
	uint8_t v6;
	uint16_t ethertype;		/* host order, after the VLAN tags */
	uint16_t vlan;			/* host order, XNV_KEY_NO_VLAN: none */
};

_Static_assert(sizeof(struct xnv_flow_key) == 48 &&
	       offsetof(struct xnv_flow_key, sport) == 32 &&
	       offsetof(struct xnv_flow_key, proto) == 36 &&
	       offsetof(struct xnv_flow_key, ethertype) == 38 &&
	       offsetof(struct xnv_flow_key, vlan) == 40,
	       "six words, as xnv_key_words() makes them");
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
	       "xnv_key_words() packs the fifth word little-endian");

enum xnv_key_kind {
	XNV_KEY_OTHER = 0,	/* not IP: only ethertype is set (0: runt) */
	XNV_KEY_FRAG,		/* IP, ports unknown: addresses and proto */
	XNV_KEY_IP,		/* IP, no ports to read: sport = dport = 0 */
	XNV_KEY_PORTS,		/* IP, TCP or UDP ports read */
};

/* What the parser reads, before it is written as a key. */
struct xnv_key_fields {
	uint64_t src[2], dst[2];	/* as in the key: bytes in order */
	uint32_t ports;			/* sport, dport as on the wire */
	uint8_t proto, v6;
	uint16_t ethertype, vlan;
};

static inline uint16_t
xnv_key_be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

#define XNV_KEY_WORDS 6

/* The key as six 8-byte words, in its layout: src, dst (two words each),
 * then ports, proto, v6 and ethertype in one, vlan in the last. */
static inline void
xnv_key_words(const struct xnv_key_fields *f, uint64_t *w)
{
	w[0] = f->src[0];
	w[1] = f->src[1];
	w[2] = f->dst[0];
	w[3] = f->dst[1];
	w[4] = f->ports | (uint64_t)f->proto << 32 |
	       (uint64_t)f->v6 << 40 | (uint64_t)f->ethertype << 48;
	w[5] = f->vlan;
}

/* Words @p w into @p k: six 8-byte stores, every byte of the key
 * written (a word read back right away then forwards from one store). */
static inline void
xnv_key_store(struct xnv_flow_key *k, const uint64_t *w)
{
	unsigned i;

	for (i = 0; i < XNV_KEY_WORDS; i++)
		memcpy((uint8_t *)k + 8 * i, &w[i], 8);
}

/* TCP, UDP or SCTP: ports in the first 4 bytes of L4.  (TCP 6 and UDP 17
 * as bits of one word, SCTP 132 on its own.) */
static inline int
xnv_key_has_ports(uint8_t proto)
{
	return proto < 32 ? (0x20040u >> proto) & 1 : proto == IPPROTO_SCTP;
}

/* L4 offset of the IPv4 header at @p ip (20 bytes there), 0: no ports. */
static inline uint32_t
xnv_key_ipv4(const uint8_t *ip, uint32_t off, struct xnv_key_fields *f)
{
	uint32_t ihl = (ip[0] & 0xfu) * 4u, a;

	memcpy(&a, ip + 12, 4);
	f->src[0] = a;
	memcpy(&a, ip + 16, 4);
	f->dst[0] = a;
	f->proto = ip[9];
	/* MF flag or a fragment offset: a fragment. */
	if ((xnv_key_be16(ip + 6) & 0x3fff) != 0 || ihl < 20)
		return 0;
	return off + ihl;
}

/* L4 offset of the IPv6 header at @p ip (40 bytes there), 0: no ports. */
static inline uint32_t
xnv_key_ipv6(const uint8_t *ip, uint32_t off, struct xnv_key_fields *f)
{
	memcpy(f->src, ip + 8, 16);
	memcpy(f->dst, ip + 24, 16);
	f->proto = ip[6];
	f->v6 = 1;
	return f->proto == IPPROTO_FRAGMENT ? 0 : off + 40;
}

/* The kind of the frame of @p len bytes at @p p, its fields in @p f:
 * every frame, by the rules above. */
static inline __attribute__((always_inline)) enum xnv_key_kind
xnv_key_fields_any(const uint8_t *p, uint32_t len, struct xnv_key_fields *f)
{
	uint32_t off = XNV_ETH_HLEN, l4;

	if (len < off)
		return XNV_KEY_OTHER;
	f->ethertype = xnv_key_be16(p + 12);
	if ((f->ethertype == XNV_ETHER_VLAN ||
	     f->ethertype == XNV_ETHER_QINQ) && len >= off + 4) {
		f->vlan = xnv_key_be16(p + off) & 0xfffu;
		f->ethertype = xnv_key_be16(p + off + 2);
		off += 4;
		if (f->ethertype == XNV_ETHER_VLAN && len >= off + 4) {
			f->ethertype = xnv_key_be16(p + off + 2);
			off += 4;
		}
	}
	if (f->ethertype == XNV_ETHER_IPV4 && len >= off + 20)
		l4 = xnv_key_ipv4(p + off, off, f);
	else if (f->ethertype == XNV_ETHER_IPV6 && len >= off + 40)
		l4 = xnv_key_ipv6(p + off, off, f);
	else
		return XNV_KEY_OTHER;
	if (l4 == 0)
		return XNV_KEY_FRAG;
	if (!xnv_key_has_ports(f->proto) || len < l4 + 4)
		return XNV_KEY_IP;
	memcpy(&f->ports, p + l4, sizeof(f->ports));
	return XNV_KEY_PORTS;
}

/* The frame most traffic is made of, in few loads and branches:
 * untagged IPv4 with a 20-byte header (0x45), not a fragment, TCP or UDP,
 * its ports there (38 bytes).  1 for such a frame, its key's words in
 * @p addrs (source | destination << 32: bytes 26..33 as they are) and
 * @p w4 (xnv_key_words()'s fifth); else 0.  What it gives is what
 * xnv_key_fields_any() gives that frame (test_flow_key.c compares the
 * two on mutated frames). */
static inline __attribute__((always_inline)) int
xnv_key_ipv4_fast(const uint8_t *p, uint32_t len, uint64_t *addrs,
		  uint64_t *w4)
{
	uint32_t head, ports;
	uint16_t frag;
	uint8_t proto;

	if (__builtin_expect(len < XNV_ETH_HLEN + 24, 0))
		return 0;
	/* Bytes 12..14: EtherType 0x0800, then version 4 and 5 words;
	 * 20..21: the MF flag and the fragment offset, all 0. */
	memcpy(&head, p + 12, 4);
	memcpy(&frag, p + 20, 2);
	proto = p[23];
	if ((head & 0xffffffu) != 0x450008u || (frag & 0xff3fu) != 0 ||
	    (proto != IPPROTO_UDP && proto != IPPROTO_TCP))
		return 0;
	memcpy(addrs, p + 26, 8);
	memcpy(&ports, p + 34, 4);
	*w4 = ports | (uint64_t)proto << 32 |
	      (uint64_t)XNV_ETHER_IPV4 << 48;
	return 1;
}

/* The kind of the frame of @p len bytes at @p p, its fields in @p f:
 * xnv_key_ipv4_fast(), else xnv_key_fields_any(). */
static inline __attribute__((always_inline)) enum xnv_key_kind
xnv_key_fields(const uint8_t *p, uint32_t len, struct xnv_key_fields *f)
{
	uint64_t a, w4;

	if (!xnv_key_ipv4_fast(p, len, &a, &w4))
		return xnv_key_fields_any(p, len, f);
	f->src[0] = (uint32_t)a;
	f->dst[0] = a >> 32;
	f->ports = (uint32_t)w4;
	f->proto = (uint8_t)(w4 >> 32);
	f->ethertype = XNV_ETHER_IPV4;
	return XNV_KEY_PORTS;
}

/** Parse the frame of @p len bytes at @p p into @p k (every byte of it
 *  written).  @return its enum xnv_key_kind. */
static inline enum xnv_key_kind
xnv_flow_key_parse(const uint8_t *p, uint32_t len, struct xnv_flow_key *k)
{
	struct xnv_key_fields f = { .vlan = XNV_KEY_NO_VLAN };
	enum xnv_key_kind kind = xnv_key_fields(p, len, &f);
	uint64_t w[XNV_KEY_WORDS];

	xnv_key_words(&f, w);
	xnv_key_store(k, w);
	return kind;
}

#endif /* XNV_FLOW_KEY_H */

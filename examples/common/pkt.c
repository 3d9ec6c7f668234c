/* SPDX-License-Identifier: BSD-3-Clause */
/* Packet parsing and incremental checksum updates (see pkt.h). */
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "parse.h"
#include "pkt.h"

#define ETH_HLEN     14
#define VLAN_HLEN     4
#define ETYPE_IPV4   0x0800
#define ETYPE_IPV6   0x86dd
#define ETYPE_VLAN   0x8100
#define MAX_V6_EXT   8		/* extension headers walked at most */

/* After the IP header: the upper-layer header at l4, up to pi->l3_end. */
static int
parse_l4(const uint8_t *p, struct pkt_info *pi, uint32_t l4)
{
	uint32_t hlen;

	pi->l4_off = (uint16_t)l4;
	pi->pay_off = (uint16_t)l4;
	pi->pay_len = pi->l3_end - l4;
	if (pi->proto == PROTO_TCP) {
		if (pi->l3_end < l4 + 20)
			return pi->kind = PKT_BAD_L4;
		hlen = (p[l4 + 12] >> 4) * 4u;
		if (hlen < 20 || pi->l3_end < l4 + hlen)
			return pi->kind = PKT_BAD_L4;
	} else if (pi->proto == PROTO_UDP) {
		hlen = 8;
		if (pi->l3_end < l4 + hlen)
			return pi->kind = PKT_BAD_L4;
	} else {
		return pi->kind = PKT_IP;
	}
	pi->has_ports = 1;
	pi->sport = rd16(p + l4);
	pi->dport = rd16(p + l4 + 2);
	pi->pay_off = (uint16_t)(l4 + hlen);
	pi->pay_len = pi->l3_end - l4 - hlen;
	return pi->kind = PKT_IP;
}

static int
parse_v4(const uint8_t *p, uint32_t len, struct pkt_info *pi)
{
	uint32_t l3 = pi->l3_off, ihl, tot, fo;

	if (len < l3 + 20 || (p[l3] >> 4) != 4)
		return pi->kind = PKT_BAD_IP;
	ihl = (p[l3] & 0xfu) * 4u;
	tot = rd16(p + l3 + 2);
	if (ihl < 20 || tot < ihl || len < l3 + tot)
		return pi->kind = PKT_BAD_IP;
	pi->l3_end = l3 + tot;
	pi->proto = p[l3 + 9];
	fo = rd16(p + l3 + 6);
	if ((fo & 0x1fffu) != 0) {		/* a later fragment */
		pi->frag = 2;
		pi->pay_off = (uint16_t)(l3 + ihl);
		pi->pay_len = tot - ihl;
		return pi->kind = PKT_IP;
	}
	if (fo & 0x2000u)			/* more fragments */
		pi->frag = 1;
	return parse_l4(p, pi, l3 + ihl);
}

static int
parse_v6(const uint8_t *p, uint32_t len, struct pkt_info *pi)
{
	uint32_t l3 = pi->l3_off, off = l3 + 40, plen;
	uint8_t nh;
	int i;

	if (len < l3 + 40 || (p[l3] >> 4) != 6)
		return pi->kind = PKT_BAD_IP;
	plen = rd16(p + l3 + 4);
	if (len < l3 + 40 + plen)
		return pi->kind = PKT_BAD_IP;
	pi->l3_end = l3 + 40 + plen;
	nh = p[l3 + 6];
	for (i = 0; i < MAX_V6_EXT; i++) {
		uint32_t elen;

		if (nh == 0 || nh == 43 || nh == 60)	/* hop, routing, dest */
			elen = pi->l3_end >= off + 2 ? (p[off + 1] + 1u) * 8u : 8;
		else if (nh == 51)			/* AH */
			elen = pi->l3_end >= off + 2 ? (p[off + 1] + 2u) * 4u : 8;
		else if (nh == 44)			/* fragment */
			elen = 8;
		else
			break;
		if (pi->l3_end < off + elen)
			return pi->kind = PKT_BAD_IP;
		if (nh == 44) {
			pi->frag = (rd16(p + off + 2) & 0xfff8u) ? 2 : 1;
			if (pi->frag == 2) {
				pi->proto = p[off];
				pi->pay_off = (uint16_t)(off + 8);
				pi->pay_len = pi->l3_end - off - 8;
				return pi->kind = PKT_IP;
			}
		}
		nh = p[off];
		off += elen;
	}
	pi->proto = nh;
	if (i == MAX_V6_EXT) {		/* too many: treat as opaque */
		pi->pay_off = (uint16_t)off;
		pi->pay_len = pi->l3_end - off;
		return pi->kind = PKT_IP;
	}
	return parse_l4(p, pi, off);
}

int
pkt_parse(const uint8_t *p, uint32_t len, struct pkt_info *pi)
{
	uint32_t off = ETH_HLEN;

	memset(pi, 0, sizeof(*pi));
	if (len < ETH_HLEN || len > UINT16_MAX)
		return pi->kind = PKT_NOT_IP;
	pi->ethertype = rd16(p + 12);
	if (pi->ethertype == ETYPE_VLAN) {
		if (len < ETH_HLEN + VLAN_HLEN)
			return pi->kind = PKT_NOT_IP;
		pi->ethertype = rd16(p + 16);
		off += VLAN_HLEN;
	}
	pi->l3_off = (uint16_t)off;
	if (pi->ethertype == ETYPE_IPV4) {
		pi->ver = 4;
		return parse_v4(p, len, pi);
	}
	if (pi->ethertype == ETYPE_IPV6) {
		pi->ver = 6;
		return parse_v6(p, len, pi);
	}
	return pi->kind = PKT_NOT_IP;
}

void
pkt_l4_csum_apply(uint8_t *p, const struct pkt_info *pi, uint32_t delta)
{
	uint8_t *c;

	if (!pi->has_ports)
		return;
	if (pi->proto == PROTO_TCP) {
		csum_apply(p + pi->l4_off + 16, delta);
		return;
	}
	c = p + pi->l4_off + 6;			/* UDP */
	if (pi->ver == 4 && rd16(c) == 0)
		return;				/* sent without checksum */
	csum_apply(c, delta);
	if (rd16(c) == 0)
		wr16(c, 0xffff);
}

/* Address @p w of @p p set to @p addr: its csum_delta(), the IPv4
 * header's checksum updated. */
static uint32_t
set_addr(uint8_t *p, const struct pkt_info *pi, enum pkt_which w,
	 const uint8_t *addr)
{
	uint8_t *a = pkt_addr(p, pi, w);
	unsigned n = pkt_addr_len(pi->ver);
	uint32_t d = csum_delta(a, addr, n);

	if (pi->ver == 4)
		csum_apply(p + pi->l3_off + 10, d);
	memcpy(a, addr, n);
	return d;
}

/* Port @p w of @p p set to @p port: its csum_delta(). */
static uint32_t
set_port(uint8_t *p, struct pkt_info *pi, enum pkt_which w, uint16_t port)
{
	uint8_t *f = p + pi->l4_off + (w == PKT_DST ? 2 : 0);
	uint32_t d = (uint16_t)~rd16(f) + (uint32_t)port;

	wr16(f, port);
	if (w == PKT_DST)
		pi->dport = port;
	else
		pi->sport = port;
	return d;
}

void
pkt_set_addr(uint8_t *p, const struct pkt_info *pi, enum pkt_which w,
	     const uint8_t *addr)
{
	pkt_l4_csum_apply(p, pi, set_addr(p, pi, w, addr));
}

void
pkt_set_port(uint8_t *p, struct pkt_info *pi, enum pkt_which w,
	     uint16_t port)
{
	pkt_l4_csum_apply(p, pi, set_port(p, pi, w, port));
}

void
pkt_set_addr_port(uint8_t *p, struct pkt_info *pi, enum pkt_which w,
		  const uint8_t *addr, uint16_t port)
{
	uint32_t d = set_addr(p, pi, w, addr);

	pkt_l4_csum_apply(p, pi, d + set_port(p, pi, w, port));
}

/* Word @p i of key @p k: one 8-byte store.  The words are built in
 * registers, never in an array on the stack: GCC read such an array back
 * with 16-byte loads, each waiting for two 8-byte stores it could not be
 * forwarded from (two thirds of flow_key_get's time). */
static inline void
key_word(struct flow_key *k, unsigned i, uint64_t w)
{
	memcpy((uint8_t *)k + 8 * i, &w, 8);
}

static inline uint64_t
key_load(const struct flow_key *k, unsigned i)
{
	uint64_t w;

	memcpy(&w, (const uint8_t *)k + 8 * i, 8);
	return w;
}

void
flow_key_get(uint8_t *p, const struct pkt_info *pi, struct flow_key *k)
{
	const uint8_t *s = pkt_addr(p, pi, PKT_SRC), *d = pkt_addr(p, pi, PKT_DST);
	uint64_t w0, w1 = 0, w2, w3 = 0;
	uint32_t a;

	if (pi->ver == 6) {
		memcpy(&w0, s, 8);
		memcpy(&w1, s + 8, 8);
		memcpy(&w2, d, 8);
		memcpy(&w3, d + 8, 8);
	} else {
		memcpy(&a, s, 4);
		w0 = a;
		memcpy(&a, d, 4);
		w2 = a;
	}
	key_word(k, 0, w0);
	key_word(k, 1, w1);
	key_word(k, 2, w2);
	key_word(k, 3, w3);
	key_word(k, 4, pi->sport | (uint64_t)pi->dport << 16 |
		       (uint64_t)pi->ver << 32 | (uint64_t)pi->proto << 40);
}

void
flow_key_reverse(const struct flow_key *k, struct flow_key *r)
{
	uint64_t w0 = key_load(k, 0), w1 = key_load(k, 1);
	uint64_t w2 = key_load(k, 2), w3 = key_load(k, 3), w4 = key_load(k, 4);

	key_word(r, 0, w2);
	key_word(r, 1, w3);
	key_word(r, 2, w0);
	key_word(r, 3, w1);
	/* ports swapped, version and protocol kept */
	key_word(r, 4, (w4 & ~0xffffffffull) | (w4 & 0xffff) << 16 |
		       (w4 >> 16 & 0xffff));
}

const char *
proto_name(unsigned proto, char *buf, size_t len)
{
	switch (proto) {
	case PROTO_TCP: return "tcp";
	case PROTO_UDP: return "udp";
	case PROTO_ICMP: return "icmp";
	case PROTO_ICMP6: return "icmpv6";
	}
	snprintf(buf, len, "ip%u", proto);
	return buf;
}

char *
flow_key_str(const struct flow_key *k, char *buf, size_t len)
{
	char s[INET6_ADDRSTRLEN], d[INET6_ADDRSTRLEN], pr[8];

	snprintf(buf, len, "%s %s %u %s %u", proto_name(k->proto, pr, sizeof(pr)),
		 addr_str(k->ver, k->src, s), k->sport,
		 addr_str(k->ver, k->dst, d), k->dport);
	return buf;
}

static uint64_t
clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t
coarse_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC_COARSE);
}

uint64_t
monotonic_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

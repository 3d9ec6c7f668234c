/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Packet parsing and header rewriting for the example NFs.
 *
 * pkt_parse() reads an Ethernet frame (one optional 802.1Q tag) with an
 * IPv4 or IPv6 header and, when present, a TCP or UDP header.  It trusts
 * nothing: every offset it hands back lies inside the frame, so a handler
 * may read the fields it names without checking lengths again.  Garbage
 * (all-zero frames, runts, lies in length fields) is classified, never
 * followed.
 *
 * Rewrites keep checksums right with incremental updates (RFC 1624,
 * eq. 3: HC' = ~(~HC + ~m + m')), so a NAT or load balancer costs a few
 * additions per packet whatever its length.
 *
 *   struct pkt_info pi;
 *   uint8_t *p = xnv_pkt_data(pkt);
 *   if (pkt_parse(p, xnv_pkt_len(pkt), &pi) == PKT_IP && pi.has_ports)
 *           pkt_set_port(p, &pi, PKT_DST, 8080);
 */
#ifndef XNV_EX_PKT_H
#define XNV_EX_PKT_H

#include <stddef.h>
#include <stdint.h>

enum pkt_kind {
	PKT_NOT_IP = 0,	/**< not IPv4/IPv6: ARP, garbage, runt frames */
	PKT_BAD_IP,	/**< IP ethertype, impossible or truncated IP header */
	PKT_BAD_L4,	/**< sound IP header, TCP/UDP header cut or impossible */
	PKT_IP,		/**< sound IP header (and TCP/UDP header if any) */
};

/** What pkt_parse() found.  Offsets are from the start of the frame. */
struct pkt_info {
	uint8_t kind;		/**< enum pkt_kind */
	uint8_t ver;		/**< 4 or 6 (0 for PKT_NOT_IP) */
	uint8_t proto;		/**< IPv4 protocol, IPv6 upper-layer header */
	uint8_t frag;		/**< 1: first fragment, 2: a later one */
	uint8_t has_ports;	/**< TCP/UDP header present: ports valid */
	uint16_t ethertype;	/**< after an optional 802.1Q tag */
	uint16_t l3_off;	/**< IP header */
	uint16_t l4_off;	/**< upper-layer header; 0: none here
				 *   (a later fragment, an unknown IPv6
				 *   extension header) */
	uint16_t pay_off;	/**< payload after the TCP/UDP header, else
				 *   after the upper-layer header offset */
	uint32_t pay_len;	/**< payload bytes up to the end of the IP
				 *   packet (Ethernet padding excluded) */
	uint32_t l3_end;	/**< end of the IP packet per its length */
	uint16_t sport, dport;	/**< host order; 0 without has_ports */
};

enum pkt_which { PKT_SRC, PKT_DST };

#define PROTO_ICMP   1
#define PROTO_TCP    6
#define PROTO_UDP   17
#define PROTO_ICMP6 58

/** Classify @p frame of @p len bytes into @p pi.  @return pi->kind. */
int pkt_parse(const uint8_t *frame, uint32_t len, struct pkt_info *pi);

/** @return 4 or 16: address bytes of an IP version. */
static inline unsigned
pkt_addr_len(unsigned ver)
{
	return ver == 6 ? 16 : 4;
}

/** @return the source or destination address in the IP header (for
 *  PKT_IP and PKT_BAD_L4 only: then the IP header is in the frame). */
static inline uint8_t *
pkt_addr(uint8_t *frame, const struct pkt_info *pi, enum pkt_which w)
{
	unsigned off = pi->ver == 6 ? 8 : 12;

	return frame + pi->l3_off + off + (w == PKT_DST ? pkt_addr_len(pi->ver) : 0);
}

static inline uint16_t
rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline void
wr16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/**
 * RFC 1624: what @p n bytes (n even, at an even offset of the summed
 * data) changing from @p old to @p new add to a one's-complement sum
 * (~m + m' for each 16-bit word), not folded: deltas of several fields
 * add up, and one csum_apply() puts them in a checksum.  n <= 16.
 */
static inline uint32_t
csum_delta(const uint8_t *old, const uint8_t *new, size_t n)
{
	uint32_t d = 0;
	size_t i;

	for (i = 0; i + 1 < n; i += 2)
		d += (uint16_t)~rd16(old + i) + (uint32_t)rd16(new + i);
	return d;
}

/** The checksum at @p csum after the changes whose csum_delta()s add up
 *  to @p delta (RFC 1624 eqn. 3: HC' = ~(~HC + delta)). */
static inline void
csum_apply(uint8_t *csum, uint32_t delta)
{
	uint32_t s = (uint32_t)(uint16_t)~rd16(csum) + delta;

	s = (s & 0xffffu) + (s >> 16);	/* twice: any 32-bit sum fits */
	s = (s & 0xffffu) + (s >> 16);
	wr16(csum, (uint16_t)~s);
}

/** RFC 1624 update of the 16-bit checksum at @p csum after @p n bytes
 *  changed from @p old to @p new (csum_delta()'s n). */
static inline void
csum_update(uint8_t *csum, const uint8_t *old, const uint8_t *new, size_t n)
{
	csum_apply(csum, csum_delta(old, new, n));
}

/**
 * Put @p delta (csum_delta()s of its pseudo-header or header) in the
 * TCP/UDP checksum.  Nothing to do without a TCP/UDP header here, or for
 * UDP over IPv4 sent without a checksum (0); a UDP result of 0 is sent as
 * 0xffff.
 */
void pkt_l4_csum_apply(uint8_t *frame, const struct pkt_info *pi,
		       uint32_t delta);

/** Rewrite the source or destination address; IPv4 header and TCP/UDP
 *  checksums follow. */
void pkt_set_addr(uint8_t *frame, const struct pkt_info *pi,
		  enum pkt_which w, const uint8_t *addr);

/** Rewrite the source or destination address and port at once (NAT) of
 *  a packet with ports (pi->has_ports): as pkt_set_addr() then
 *  pkt_set_port(), with one update of the TCP/UDP checksum. */
void pkt_set_addr_port(uint8_t *frame, struct pkt_info *pi,
		       enum pkt_which w, const uint8_t *addr, uint16_t port);

/** Rewrite the source or destination port (needs pi->has_ports); the
 *  TCP/UDP checksum follows; pi->sport / dport too. */
void pkt_set_port(uint8_t *frame, struct pkt_info *pi, enum pkt_which w,
		  uint16_t port);

/** A unidirectional flow: IP version, protocol, addresses, ports.  Five
 *  8-byte words, each written whole by flow_key_get() and
 *  flow_key_reverse(): a hash reading it by words right after gets each
 *  one forwarded from one store (words over smaller stores stall). */
struct flow_key {
	_Alignas(8) uint8_t src[16];	/* IPv4 in the first 4 bytes */
	uint8_t dst[16];
	uint16_t sport, dport;		/* host order; 0 without ports */
	uint8_t ver, proto;
	uint8_t pad[2];			/* 0 */
};

_Static_assert(sizeof(struct flow_key) == 40 &&
	       offsetof(struct flow_key, sport) == 32,
	       "five words, the last one sport | dport | ver | proto");

/** Fill @p k (every byte: keys are hashed and compared as bytes). */
void flow_key_get(uint8_t *frame, const struct pkt_info *pi,
		  struct flow_key *k);

/** @p r = @p k seen from the other end (addresses and ports swapped). */
void flow_key_reverse(const struct flow_key *k, struct flow_key *r);

/** "udp 10.0.0.1 1024 10.0.0.2 53" into @p buf; @return @p buf. */
char *flow_key_str(const struct flow_key *k, char *buf, size_t len);

/** "tcp", "udp", "icmp", "icmpv6" or "ipN" into @p buf; @return it. */
const char *proto_name(unsigned proto, char *buf, size_t len);

/** Monotonic time in ns at low cost (CLOCK_MONOTONIC_COARSE: a few ms
 *  of resolution, enough for idle timeouts and first/last seen). */
uint64_t coarse_ns(void);

/** Monotonic time in ns (CLOCK_MONOTONIC: fine resolution, for
 *  latencies and measured intervals). */
uint64_t monotonic_ns(void);

#endif /* XNV_EX_PKT_H */

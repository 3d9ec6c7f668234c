/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * examples/common: the packet rewrites NFs use (pkt.h: pkt_set_addr,
 * pkt_set_port, pkt_set_addr_port, csum_update) leave checksums equal to
 * a full recomputation, IPv4 and IPv6, TCP and UDP, whatever the bytes;
 * prefix_match (parse.h) agrees with a bit-by-bit reference at every
 * prefix length.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "parse.h"
#include "pkt.h"

#define ROUNDS 2000

static uint32_t rng = 12345;

static uint8_t
rnd8(void)
{
	rng = rng * 1103515245u + 12345u;
	return (uint8_t)(rng >> 16);
}

static void
rnd_bytes(uint8_t *p, size_t n)
{
	while (n-- > 0)
		*p++ = rnd8();
}

/* One's-complement sum of @p n bytes (big-endian words), from @p sum. */
static uint32_t
sum16(const uint8_t *p, size_t n, uint32_t sum)
{
	size_t i;

	for (i = 0; i + 1 < n; i += 2)
		sum += (uint32_t)(p[i] << 8 | p[i + 1]);
	if (n & 1)
		sum += (uint32_t)p[n - 1] << 8;
	return sum;
}

static uint16_t
fold(uint32_t s)
{
	while (s >> 16)
		s = (s & 0xffffu) + (s >> 16);
	return (uint16_t)~s;
}

/* The TCP/UDP checksum of frame @p f (parsed as @p pi) from scratch,
 * its checksum field counted as 0. */
static uint16_t
l4_csum(const uint8_t *f, const struct pkt_info *pi, unsigned l4_len)
{
	uint8_t *c = (uint8_t *)f + pi->l4_off + (pi->proto == PROTO_TCP ?
						   16 : 6);
	uint8_t saved[2] = { c[0], c[1] };
	unsigned alen = pkt_addr_len(pi->ver);
	uint32_t s = sum16(f + pi->l3_off + (pi->ver == 6 ? 8 : 12), 2 * alen,
			   0);
	uint16_t r;

	s += pi->proto + l4_len;
	c[0] = c[1] = 0;
	r = fold(sum16(f + pi->l4_off, l4_len, s));
	c[0] = saved[0];
	c[1] = saved[1];
	return r;
}

static uint16_t
rd(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static void
wr(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* A random frame: Ethernet, IPv@p ver, @p proto with 20 bytes of
 * payload, its checksums right (or, @p no_udp_csum, UDP's 0).  Parsed
 * into @p pi.  @return its TCP/UDP length. */
static unsigned
make_frame(uint8_t *f, unsigned ver, uint8_t proto, int no_udp_csum,
	   struct pkt_info *pi)
{
	unsigned l3 = 14, ih = ver == 4 ? 20 : 40;
	unsigned l4_len = (proto == PROTO_TCP ? 20 : 8) + 20, l4 = l3 + ih;
	uint16_t csum;

	rnd_bytes(f, l4 + l4_len);
	wr(f + 12, ver == 4 ? 0x0800 : 0x86dd);
	if (ver == 4) {
		f[l3] = 0x45;
		wr(f + l3 + 2, (uint16_t)(ih + l4_len));
		wr(f + l3 + 6, 0);		/* no fragment */
		f[l3 + 8] = 64;
		f[l3 + 9] = proto;
		wr(f + l3 + 10, 0);
		wr(f + l3 + 10, fold(sum16(f + l3, ih, 0)));
	} else {
		f[l3] = 0x60;
		wr(f + l3 + 4, (uint16_t)l4_len);
		f[l3 + 6] = proto;
		f[l3 + 7] = 64;
	}
	if (proto == PROTO_TCP)
		f[l4 + 12] = 0x50;		/* data offset: 5 words */
	else
		wr(f + l4 + 4, (uint16_t)l4_len);
	assert_int_equal(pkt_parse(f, l4 + l4_len, pi), PKT_IP);
	assert_true(pi->has_ports);
	csum = l4_csum(f, pi, l4_len);
	if (proto == PROTO_UDP && (no_udp_csum || csum == 0))
		csum = no_udp_csum ? 0 : 0xffff;
	wr(f + l4 + (proto == PROTO_TCP ? 16 : 6), csum);
	return l4_len;
}

/* Checksums of @p f right after a rewrite. */
static void
check_csums(const uint8_t *f, const struct pkt_info *pi, unsigned l4_len,
	    int no_udp_csum)
{
	const uint8_t *c = f + pi->l4_off + (pi->proto == PROTO_TCP ? 16 : 6);
	uint16_t want = l4_csum(f, pi, l4_len);

	if (pi->ver == 4)
		assert_int_equal(fold(sum16(f + pi->l3_off, 20, 0)), 0);
	if (no_udp_csum)
		assert_int_equal(rd(c), 0);
	else if (pi->proto == PROTO_UDP && want == 0)
		assert_int_equal(rd(c), 0xffff);
	else
		assert_int_equal(rd(c), want);
}

static void
test_rewrites_keep_checksums(void **state)
{
	static const uint8_t protos[] = { PROTO_TCP, PROTO_UDP };
	uint8_t f[256], addr[16];
	struct pkt_info pi;
	unsigned r, ver, p, l4_len;

	(void)state;
	for (r = 0; r < ROUNDS; r++) {
		for (ver = 4; ver <= 6; ver += 2) {
			for (p = 0; p < 2; p++) {
				int none = protos[p] == PROTO_UDP && ver == 4 &&
					   r % 4 == 0;
				enum pkt_which w = r & 1 ? PKT_DST : PKT_SRC;
				uint16_t port = (uint16_t)(rnd8() << 8 | rnd8());

				rnd_bytes(addr, sizeof(addr));
				l4_len = make_frame(f, ver, protos[p], none,
						    &pi);
				switch (r % 3) {
				case 0:
					pkt_set_addr(f, &pi, w, addr);
					break;
				case 1:
					pkt_set_port(f, &pi, w, port);
					assert_int_equal(w == PKT_DST ?
							 pi.dport : pi.sport,
							 port);
					break;
				default:
					pkt_set_addr_port(f, &pi, w, addr,
							  port);
					assert_memory_equal(pkt_addr(f, &pi, w),
							    addr,
							    pkt_addr_len(ver));
					assert_int_equal(rd(f + pi.l4_off +
							    (w == PKT_DST ?
							     2 : 0)), port);
				}
				check_csums(f, &pi, l4_len, none);
			}
		}
	}
}

/* csum_update over a field (the router's TTL) equals a recomputation. */
static void
test_csum_update_matches_full_sum(void **state)
{
	uint8_t h[20], old[2];
	unsigned r;

	(void)state;
	for (r = 0; r < ROUNDS; r++) {
		rnd_bytes(h, sizeof(h));
		wr(h + 10, 0);
		wr(h + 10, fold(sum16(h, sizeof(h), 0)));
		memcpy(old, h + 8, 2);
		h[8] = rnd8();
		h[9] = rnd8();
		csum_update(h + 10, old, h + 8, 2);
		assert_int_equal(fold(sum16(h, sizeof(h), 0)), 0);
	}
}

/* prefix_match as it was: a byte compare, then the bits of the last. */
static int
ref_match(const struct prefix *p, unsigned ver, const uint8_t *a)
{
	unsigned full = p->len / 8, rest = p->len % 8;

	if (ver != p->ver || memcmp(p->addr, a, full) != 0)
		return 0;
	return rest == 0 ||
	       ((a[full] ^ p->addr[full]) & (0xff00u >> rest) & 0xffu) == 0;
}

static void
test_prefix_match_every_length(void **state)
{
	uint8_t a[16], b;
	struct prefix p;
	unsigned r, len, ver, i;

	(void)state;
	for (r = 0; r < ROUNDS / 4; r++) {
		for (ver = 4; ver <= 6; ver += 2) {
			for (len = 0; len <= (ver == 4 ? 32u : 128u); len++) {
				memset(&p, 0, sizeof(p));
				p.ver = (uint8_t)ver;
				p.len = (uint8_t)len;
				rnd_bytes(a, pkt_addr_len(ver));
				/* the prefix: a's first len bits */
				for (i = 0; i < len; i++)
					p.addr[i / 8] |= a[i / 8] &
							 (0x80u >> (i % 8));
				assert_true(prefix_match(&p, ver, a));
				assert_false(prefix_match(&p, 10 - ver, a));
				/* one bit flipped: in or out of the prefix */
				b = (uint8_t)(rnd8() % (ver == 4 ? 32 : 128));
				a[b / 8] ^= (uint8_t)(0x80u >> (b % 8));
				assert_int_equal(prefix_match(&p, ver, a),
						 ref_match(&p, ver, a));
				assert_int_equal(prefix_match(&p, ver, a),
						 b >= len);
			}
		}
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rewrites_keep_checksums),
		cmocka_unit_test(test_csum_update_matches_full_sum),
		cmocka_unit_test(test_prefix_match_every_length),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

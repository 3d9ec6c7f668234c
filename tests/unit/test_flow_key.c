/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the core's packet-key parser (dom0-core/flow_key.h), the
 * one parser behind the replica hash and the flow director: IPv4, IPv6,
 * VLAN tags (802.1Q, 802.1ad, QinQ), ports, fragments, short headers and
 * runts.
 */
#include <setjmp.h>	/* setjmp.h, stdarg.h, stddef.h: before cmocka.h */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include <arpa/inet.h>

#include "flow_key.h"

#define UNUSED __attribute__((unused))
#define TEST(name) static void name(void **state UNUSED)

static uint8_t f[128];

/* Ethernet (with a VLAN tag if @p vlan) for @p et; returns L3 offset. */
static uint32_t
eth(uint16_t et, int vlan)
{
	uint32_t o = 12;

	memset(f, 0, sizeof(f));
	if (vlan) {
		f[o++] = 0x81, f[o++] = 0x00, f[o++] = 0x00, f[o++] = 0x05;
	}
	f[o++] = (uint8_t)(et >> 8);
	f[o++] = (uint8_t)et;
	return o;
}

/* IPv4 10.0.0.1 -> 10.0.0.2, @p proto, header of @p ihl words; returns
 * the L4 offset.  Ports 1234 -> 80 there. */
static uint32_t
ipv4(uint32_t o, uint8_t proto, uint8_t ihl, uint16_t frag)
{
	static const uint8_t src[4] = { 10, 0, 0, 1 }, dst[4] = { 10, 0, 0, 2 };
	uint32_t l4 = o + (ihl >= 5 ? ihl : 5) * 4u;

	f[o] = (uint8_t)(0x40 | ihl);
	f[o + 6] = (uint8_t)(frag >> 8);
	f[o + 7] = (uint8_t)frag;
	f[o + 9] = proto;
	memcpy(f + o + 12, src, 4);
	memcpy(f + o + 16, dst, 4);
	f[l4] = 0x04, f[l4 + 1] = 0xd2;		/* 1234 */
	f[l4 + 2] = 0x00, f[l4 + 3] = 0x50;	/* 80 */
	return l4;
}

/* IPv6 2001:db8::1 -> 2001:db8::2, next header @p nh, ports 53 -> 5353. */
static uint32_t
ipv6(uint32_t o, uint8_t nh)
{
	uint32_t l4 = o + 40;

	f[o] = 0x60;
	f[o + 6] = nh;
	f[o + 8] = 0x20, f[o + 9] = 0x01, f[o + 10] = 0x0d, f[o + 11] = 0xb8;
	f[o + 23] = 1;
	f[o + 24] = 0x20, f[o + 25] = 0x01, f[o + 26] = 0x0d, f[o + 27] = 0xb8;
	f[o + 39] = 2;
	f[l4] = 0x00, f[l4 + 1] = 0x35;
	f[l4 + 2] = 0x14, f[l4 + 3] = 0xe9;
	return l4;
}

static void
assert_v4_addrs(const struct xnv_flow_key *k)
{
	static const uint8_t src[16] = { 10, 0, 0, 1 }, dst[16] = { 10, 0, 0, 2 };

	assert_memory_equal(k->src, src, 16);
	assert_memory_equal(k->dst, dst, 16);
	assert_int_equal(k->v6, 0);
	assert_int_equal(k->ethertype, XNV_ETHER_IPV4);
}

/* The IPv4 packet ipv4() built, @p len bytes of it: a key with ports. */
static void
assert_v4_ports(uint32_t len, uint8_t proto)
{
	struct xnv_flow_key k;

	assert_int_equal(xnv_flow_key_parse(f, len, &k), XNV_KEY_PORTS);
	assert_v4_addrs(&k);
	assert_int_equal(k.proto, proto);
	assert_int_equal(ntohs(k.sport), 1234);
	assert_int_equal(ntohs(k.dport), 80);
}

TEST(ipv4_udp_gives_its_5_tuple)
{
	assert_v4_ports(ipv4(eth(XNV_ETHER_IPV4, 0), IPPROTO_UDP, 5, 0) + 8,
			IPPROTO_UDP);
}

TEST(vlan_tag_is_skipped)
{
	assert_v4_ports(ipv4(eth(XNV_ETHER_IPV4, 1), IPPROTO_TCP, 5, 0) + 4,
			IPPROTO_TCP);
}

/* Outer tag @p tpid with VLAN id 0xabc (and priority bits set), an
 * inner 802.1Q tag with id 7 when @p inner; returns the L3 offset. */
static uint32_t
tagged(uint16_t tpid, int inner, uint16_t et)
{
	uint32_t o = 12;

	memset(f, 0, sizeof(f));
	f[o++] = (uint8_t)(tpid >> 8), f[o++] = (uint8_t)tpid;
	f[o++] = 0xea, f[o++] = 0xbc;		/* PCP 7, DEI 0, VID 0xabc */
	if (inner) {
		f[o++] = 0x81, f[o++] = 0x00, f[o++] = 0x00, f[o++] = 0x07;
	}
	f[o++] = (uint8_t)(et >> 8);
	f[o++] = (uint8_t)et;
	return o;
}

TEST(vlan_id_is_the_outer_tag)
{
	struct xnv_flow_key k;
	static const uint16_t tpid[] = { XNV_ETHER_VLAN, XNV_ETHER_QINQ };
	unsigned i, inner;

	for (i = 0; i < 2; i++)
		for (inner = 0; inner < 2; inner++) {
			uint32_t l4 = ipv4(tagged(tpid[i], (int)inner,
						  XNV_ETHER_IPV4), IPPROTO_UDP,
					   5, 0);

			assert_int_equal(xnv_flow_key_parse(f, l4 + 8, &k),
					 XNV_KEY_PORTS);
			assert_int_equal(k.vlan, 0xabc);
			assert_v4_addrs(&k);
			assert_int_equal(ntohs(k.dport), 80);
		}
	ipv4(eth(XNV_ETHER_IPV4, 0), IPPROTO_UDP, 5, 0);
	assert_int_equal(xnv_flow_key_parse(f, 60, &k), XNV_KEY_PORTS);
	assert_int_equal(k.vlan, XNV_KEY_NO_VLAN);
	/* a tag cut short: not IP, no VLAN id read */
	tagged(XNV_ETHER_QINQ, 0, XNV_ETHER_IPV4);
	assert_int_equal(xnv_flow_key_parse(f, 17, &k), XNV_KEY_OTHER);
	assert_int_equal(k.vlan, XNV_KEY_NO_VLAN);
}

TEST(sctp_has_ports)
{
	assert_v4_ports(ipv4(eth(XNV_ETHER_IPV4, 0), IPPROTO_SCTP, 5, 0) + 12,
			IPPROTO_SCTP);
}

TEST(ipv4_options_move_the_ports)
{
	assert_v4_ports(ipv4(eth(XNV_ETHER_IPV4, 0), IPPROTO_TCP, 7, 0) + 4,
			IPPROTO_TCP);
}

TEST(ipv4_header_under_5_words_has_no_ports)
{
	struct xnv_flow_key k;
	unsigned ihl;

	for (ihl = 0; ihl < 5; ihl++) {
		uint32_t l4 = ipv4(eth(XNV_ETHER_IPV4, 0), IPPROTO_TCP,
				   (uint8_t)ihl, 0);

		assert_int_equal(xnv_flow_key_parse(f, l4 + 4, &k),
				 XNV_KEY_FRAG);
		assert_v4_addrs(&k);
		assert_int_equal(k.proto, IPPROTO_TCP);
		assert_int_equal(k.sport, 0);
		assert_int_equal(k.dport, 0);
	}
}

TEST(ipv4_fragments_have_no_ports)
{
	static const uint16_t frag[] = { 0x2000, 0x0001, 0x1fff, 0x2010 };
	struct xnv_flow_key k;
	unsigned i;

	for (i = 0; i < sizeof(frag) / sizeof(frag[0]); i++) {
		uint32_t l4 = ipv4(eth(XNV_ETHER_IPV4, 0), IPPROTO_UDP, 5,
				   frag[i]);

		assert_int_equal(xnv_flow_key_parse(f, l4 + 8, &k),
				 XNV_KEY_FRAG);
		assert_int_equal(k.sport, 0);
	}
	/* DF alone is not a fragment */
	ipv4(eth(XNV_ETHER_IPV4, 0), IPPROTO_UDP, 5, 0x4000);
	assert_int_equal(xnv_flow_key_parse(f, 64, &k), XNV_KEY_PORTS);
}

TEST(ipv6_tcp_gives_its_5_tuple)
{
	static const uint8_t src[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 1 };
	static const uint8_t dst[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 2 };
	struct xnv_flow_key k;
	uint32_t l4 = ipv6(eth(XNV_ETHER_IPV6, 0), IPPROTO_TCP);

	assert_int_equal(xnv_flow_key_parse(f, l4 + 20, &k), XNV_KEY_PORTS);
	assert_memory_equal(k.src, src, 16);
	assert_memory_equal(k.dst, dst, 16);
	assert_int_equal(k.v6, 1);
	assert_int_equal(k.ethertype, XNV_ETHER_IPV6);
	assert_int_equal(k.proto, IPPROTO_TCP);
	assert_int_equal(ntohs(k.sport), 53);
	assert_int_equal(ntohs(k.dport), 5353);
}

TEST(ipv6_fragment_header_has_no_ports)
{
	struct xnv_flow_key k;
	uint32_t l4 = ipv6(eth(XNV_ETHER_IPV6, 0), IPPROTO_FRAGMENT);

	assert_int_equal(xnv_flow_key_parse(f, l4 + 8, &k), XNV_KEY_FRAG);
	assert_int_equal(k.proto, IPPROTO_FRAGMENT);
	assert_int_equal(k.v6, 1);
	assert_int_equal(k.sport, 0);
	assert_int_equal(k.dport, 0);
}

TEST(other_protocols_and_cut_l4_have_zero_ports)
{
	struct xnv_flow_key k;
	uint32_t l4 = ipv4(eth(XNV_ETHER_IPV4, 0), IPPROTO_ICMP, 5, 0);

	assert_int_equal(xnv_flow_key_parse(f, l4 + 8, &k), XNV_KEY_IP);
	assert_int_equal(k.proto, IPPROTO_ICMP);
	assert_int_equal(k.sport, 0);
	l4 = ipv4(eth(XNV_ETHER_IPV4, 0), IPPROTO_UDP, 5, 0);
	assert_int_equal(xnv_flow_key_parse(f, l4 + 3, &k), XNV_KEY_IP);
	assert_int_equal(k.sport, 0);
	assert_int_equal(k.dport, 0);
}

TEST(short_and_non_ip_frames_are_other)
{
	struct xnv_flow_key k;
	uint32_t o = eth(XNV_ETHER_IPV4, 0);

	ipv4(o, IPPROTO_UDP, 5, 0);
	assert_int_equal(xnv_flow_key_parse(f, o + 19, &k), XNV_KEY_OTHER);
	assert_int_equal(k.ethertype, XNV_ETHER_IPV4);
	o = eth(XNV_ETHER_IPV6, 0);
	ipv6(o, IPPROTO_UDP);
	assert_int_equal(xnv_flow_key_parse(f, o + 39, &k), XNV_KEY_OTHER);
	eth(0x0806, 0);				/* ARP */
	assert_int_equal(xnv_flow_key_parse(f, 60, &k), XNV_KEY_OTHER);
	assert_int_equal(k.ethertype, 0x0806);
	assert_int_equal(k.proto, 0);
	assert_int_equal(xnv_flow_key_parse(f, 13, &k), XNV_KEY_OTHER);
	assert_int_equal(k.ethertype, 0);
}

/* The key is compared as bytes (the exact rules' rte_hash key): whatever
 * was in it before, equal packets give equal keys. */
TEST(key_is_fully_written)
{
	struct xnv_flow_key a, b;
	uint32_t l4 = ipv4(eth(XNV_ETHER_IPV4, 0), IPPROTO_UDP, 5, 0);

	memset(&a, 0x00, sizeof(a));
	memset(&b, 0xa5, sizeof(b));
	xnv_flow_key_parse(f, l4 + 8, &a);
	xnv_flow_key_parse(f, l4 + 8, &b);
	assert_memory_equal(&a, &b, sizeof(a));
	assert_int_equal((uintptr_t)&a % 8, 0);
}

/* Bytes the mutations write: what the parser's branches turn on. */
static const uint8_t edges[] = {
	0x00, 0x08, 0x45, 0x46, 0x44, 0x40, 0x4f, 0x81, 0x88, 0xa8, 0x86,
	0xdd, 0x06, 0x11, 0x84, 0x2c, 0x20, 0x3f, 0x1f, 0xff, 0x01, 0x60,
};

static uint32_t
rnd(uint64_t *s)
{
	*s = *s * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)(*s >> 33);
}

/* xnv_key_fields()'s fast path (xnv_key_ipv4_fast()) gives what the
 * general parser gives, on frames one to four bytes away from the frame
 * it takes (EtherType, IHL, flags, protocol, VLAN tags, lengths around
 * 38 bytes); and its hash is the general one's. */
TEST(fast_path_agrees_with_the_general_parser)
{
	uint64_t seed = 1, a, w4, w[XNV_KEY_WORDS];
	unsigned i, j, fast = 0, other = 0;

	for (i = 0; i < 200000; i++) {
		struct xnv_key_fields x = { .vlan = XNV_KEY_NO_VLAN };
		struct xnv_key_fields y = { .vlan = XNV_KEY_NO_VLAN };
		uint32_t l4 = ipv4(eth(XNV_ETHER_IPV4, 0),
				   rnd(&seed) % 2 ? IPPROTO_UDP : IPPROTO_TCP,
				   5, 0), len;
		enum xnv_key_kind kx, ky;
		unsigned m = rnd(&seed) % 5;

		for (j = 0; j < m; j++) {
			uint32_t at = 12 + rnd(&seed) % 30;

			f[at] = rnd(&seed) % 3 ? edges[rnd(&seed) %
						      sizeof(edges)] :
				(uint8_t)rnd(&seed);
		}
		len = rnd(&seed) % 4 ? l4 + 4 - 3 + rnd(&seed) % 7 :
		      rnd(&seed) % 80;
		kx = xnv_key_fields(f, len, &x);
		ky = xnv_key_fields_any(f, len, &y);
		assert_int_equal(kx, ky);
		assert_memory_equal(&x, &y, sizeof(x));
		if (xnv_key_ipv4_fast(f, len, &a, &w4)) {
			fast++;
			assert_int_equal(ky, XNV_KEY_PORTS);
			xnv_key_words(&y, w);
			assert_true(a == (w[0] ^ w[1] ^ (w[2] << 32)));
			assert_true(w4 == w[4]);
		} else {
			other++;
		}
	}
	/* Both ways taken often: the comparison means something. */
	assert_true(fast > 20000);
	assert_true(other > 20000);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(ipv4_udp_gives_its_5_tuple),
		cmocka_unit_test(vlan_tag_is_skipped),
		cmocka_unit_test(vlan_id_is_the_outer_tag),
		cmocka_unit_test(sctp_has_ports),
		cmocka_unit_test(ipv4_options_move_the_ports),
		cmocka_unit_test(ipv4_header_under_5_words_has_no_ports),
		cmocka_unit_test(ipv4_fragments_have_no_ports),
		cmocka_unit_test(ipv6_tcp_gives_its_5_tuple),
		cmocka_unit_test(ipv6_fragment_header_has_no_ports),
		cmocka_unit_test(other_protocols_and_cut_l4_have_zero_ports),
		cmocka_unit_test(short_and_non_ip_frames_are_other),
		cmocka_unit_test(key_is_fully_written),
		cmocka_unit_test(fast_path_agrees_with_the_general_parser),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

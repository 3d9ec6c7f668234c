/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the router's longest-prefix match (examples/router/lpm.c):
 * every prefix length 0..32 and 0..128 nested on one address, random
 * tables against a linear-scan reference, duplicates, limits.
 */
#include <errno.h>
#include <setjmp.h>	/* setjmp.h, stdarg.h, stddef.h: before cmocka.h */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "router/lpm.h"

#define UNUSED __attribute__((unused))
#define TEST(name) static void name(void **state UNUSED)

static uint64_t rng = 0x243f6a8885a308d3ull;

static uint32_t
rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 16);
}

static void
rnd_addr(uint8_t *a, unsigned bytes)
{
	for (unsigned i = 0; i < bytes; i++)
		a[i] = (uint8_t)rnd();
}

static void
mask(uint8_t *a, unsigned bytes, unsigned len)
{
	for (unsigned i = len; i < bytes * 8; i++)
		a[i / 8] &= (uint8_t)~(0x80u >> (i % 8));
}

static void
flip(uint8_t *a, unsigned bit)
{
	a[bit / 8] ^= (uint8_t)(0x80u >> (bit % 8));
}

/* Prefixes of every length 0..W of one address, added in a shuffled
 * order; the address with bit L flipped must match length L exactly. */
static void
every_length(unsigned width)
{
	unsigned bytes = width / 8, order[129], i, j, round;
	uint8_t a[16], p[16], q[16];
	struct lpm l;
	uint32_t v = 0;

	for (round = 0; round < 20; round++) {
		assert_int_equal(lpm_init(&l, width, 4096), 0);
		rnd_addr(a, bytes);
		for (i = 0; i <= width; i++)
			order[i] = i;
		for (i = width; i > 0; i--) {
			j = rnd() % (i + 1);
			unsigned t = order[i]; order[i] = order[j]; order[j] = t;
		}
		for (i = 0; i <= width; i++) {
			memcpy(p, a, bytes);
			mask(p, bytes, order[i]);
			assert_int_equal(lpm_add(&l, p, order[i], order[i]), 0);
		}
		for (i = 0; i < width; i++) {
			memcpy(q, a, bytes);
			flip(q, i);
			assert_int_equal(lpm_lookup(&l, q, &v), 0);
			assert_int_equal(v, i);
		}
		assert_int_equal(lpm_lookup(&l, a, &v), 0);
		assert_int_equal(v, width);
		lpm_free(&l);
	}
}

TEST(test_every_ipv4_length_0_to_32)
{
	every_length(32);
}

TEST(test_every_ipv6_length_0_to_128)
{
	every_length(128);
}

struct ref_route {
	uint8_t addr[16];
	unsigned len;
};

/* Linear scan: the longest route covering @p a; -1 if none. */
static int
ref_lookup(const struct ref_route *r, int n, const uint8_t *a, unsigned bytes)
{
	int best = -1;
	uint8_t m[16];

	for (int i = 0; i < n; i++) {
		memcpy(m, a, bytes);
		mask(m, bytes, r[i].len);
		if (memcmp(m, r[i].addr, bytes) == 0 &&
		    (best < 0 || r[i].len > r[best].len))
			best = i;
	}
	return best;
}

/* Random routes grown from a few seeds (so they nest and overlap), then
 * lookups of addresses near them, against the reference. */
static void
random_vs_reference(unsigned width, int n_routes, int n_lookups)
{
	unsigned bytes = width / 8;
	struct ref_route *r = calloc((size_t)n_routes, sizeof(*r));
	uint8_t seeds[8][16], a[16];
	struct lpm l;
	int n = 0, i, want;
	uint32_t v = 0;

	assert_non_null(r);
	assert_int_equal(lpm_init(&l, width, 1u << 16), 0);
	for (i = 0; i < 8; i++)
		rnd_addr(seeds[i], bytes);
	while (n < n_routes) {
		struct ref_route *x = &r[n];

		memcpy(x->addr, seeds[rnd() % 8], bytes);
		x->len = rnd() % (width + 1);
		for (unsigned b = 0; b < 3; b++)	/* wander off a little */
			if (x->len > 0)
				flip(x->addr, rnd() % x->len);
		mask(x->addr, bytes, x->len);
		for (i = 0; i < n; i++)
			if (r[i].len == x->len &&
			    memcmp(r[i].addr, x->addr, bytes) == 0)
				break;
		if (i < n)		/* had it: see the replace test */
			continue;
		assert_int_equal(lpm_add(&l, x->addr, x->len, (uint32_t)n), 0);
		n++;
	}
	for (i = 0; i < n_lookups; i++) {
		memcpy(a, r[rnd() % n].addr, bytes);
		for (unsigned b = 0; b < 2; b++)
			flip(a, rnd() % width);
		want = ref_lookup(r, n, a, bytes);
		if (want < 0) {
			assert_int_equal(lpm_lookup(&l, a, &v), -1);
			continue;
		}
		assert_int_equal(lpm_lookup(&l, a, &v), 0);
		assert_int_equal(r[v].len, r[want].len);
		assert_int_equal(v, (uint32_t)want);
	}
	lpm_free(&l);
	free(r);
}

TEST(test_random_ipv4_table_matches_linear_scan)
{
	random_vs_reference(32, 1000, 20000);
}

TEST(test_random_ipv6_table_matches_linear_scan)
{
	random_vs_reference(128, 1000, 10000);
}

TEST(test_empty_table_and_no_default_find_nothing)
{
	uint8_t a[16] = { 10, 1, 2, 3 }, p[16] = { 192, 168 };
	struct lpm l;
	uint32_t v = 77;

	assert_int_equal(lpm_init(&l, 32, 16), 0);
	assert_int_equal(lpm_lookup(&l, a, &v), -1);
	assert_int_equal(lpm_add(&l, p, 16, 5), 0);
	assert_int_equal(lpm_lookup(&l, a, &v), -1);
	assert_int_equal(v, 77);
	p[2] = 3;
	assert_int_equal(lpm_lookup(&l, p, &v), 0);
	assert_int_equal(v, 5);
	lpm_free(&l);
}

/* Adding a prefix again gives it the new value everywhere it shows,
 * also when a longer prefix hides the entry it starts at. */
TEST(test_same_prefix_again_replaces_its_value)
{
	uint8_t p9[16] = { 10, 0 }, p12[16] = { 10, 0 }, q[16] = { 10, 64, 1 };
	struct lpm l;
	uint32_t v = 0;

	assert_int_equal(lpm_init(&l, 32, 16), 0);
	assert_int_equal(lpm_add(&l, p9, 9, 1), 0);	/* 10.0/9 */
	assert_int_equal(lpm_add(&l, p12, 12, 2), 0);	/* 10.0/12 hides e[0] */
	assert_int_equal(lpm_add(&l, p9, 9, 3), 0);
	assert_int_equal(lpm_lookup(&l, q, &v), 0);	/* 10.64.1.0: /9 */
	assert_int_equal(v, 3);
	assert_int_equal(lpm_lookup(&l, p12, &v), 0);
	assert_int_equal(v, 2);
	assert_int_equal(lpm_add(&l, p9, 0, 4), 0);
	assert_int_equal(lpm_add(&l, p9, 0, 5), 0);
	q[0] = 11;
	assert_int_equal(lpm_lookup(&l, q, &v), 0);
	assert_int_equal(v, 5);
	lpm_free(&l);
}

TEST(test_bad_length_value_and_node_limit)
{
	uint8_t p[16] = { 1, 2, 3, 4 };
	struct lpm l;

	assert_int_equal(lpm_init(&l, 33, 16), -EINVAL);
	assert_int_equal(lpm_init(&l, 32, 3), 0);
	assert_int_equal(lpm_add(&l, p, 33, 1), -EINVAL);
	assert_int_equal(lpm_add(&l, p, 8, LPM_VALUE_MAX + 1), -EINVAL);
	assert_int_equal(lpm_add(&l, p, 24, 1), 0);	/* root + 2 nodes */
	assert_int_equal(lpm_add(&l, p, 32, 2), -ENOSPC);
	lpm_free(&l);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_ipv4_length_0_to_32),
		cmocka_unit_test(test_every_ipv6_length_0_to_128),
		cmocka_unit_test(test_random_ipv4_table_matches_linear_scan),
		cmocka_unit_test(test_random_ipv6_table_matches_linear_scan),
		cmocka_unit_test(test_empty_table_and_no_default_find_nothing),
		cmocka_unit_test(test_same_prefix_again_replaces_its_value),
		cmocka_unit_test(test_bad_length_value_and_node_limit),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

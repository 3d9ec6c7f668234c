/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the DPI's Aho-Corasick automaton (examples/dpi/ac.c):
 * random patterns over a 2- and a 3-letter alphabet (overlaps, suffixes,
 * repeats everywhere) against a naive search; the classic he/she/his/hers;
 * patterns at both ends, every byte value, stopping early, limits.
 */
#include <errno.h>
#include <setjmp.h>	/* setjmp.h, stdarg.h, stddef.h: before cmocka.h */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "dpi/ac.h"

#define UNUSED __attribute__((unused))
#define TEST(name) static void name(void **state UNUSED)
#define MAX_HITS 100000

struct hit {
	uint32_t id, end;
};

struct hits {
	struct hit h[MAX_HITS];
	uint32_t n, stop_after;
};

static struct hits got, want;
static uint64_t rng = 0x853c49e6748fea9bull;

static uint32_t
rnd(void)
{
	rng = rng * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)(rng >> 33);
}

static int
collect(uint32_t id, uint32_t len, uint32_t end, void *arg)
{
	struct hits *h = arg;

	(void)len;
	assert_true(h->n < MAX_HITS);
	h->h[h->n].id = id;
	h->h[h->n++].end = end;
	return h->stop_after && h->n == h->stop_after;
}

static int
cmp_hit(const void *a, const void *b)
{
	const struct hit *x = a, *y = b;

	if (x->end != y->end)
		return x->end < y->end ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* Every occurrence of every pattern, the slow way, sorted. */
static void
naive(uint8_t pats[][16], const uint32_t *lens, uint32_t n,
      const uint8_t *text, uint32_t len)
{
	want.n = 0;
	for (uint32_t i = 0; i < n; i++)
		for (uint32_t e = lens[i]; e <= len; e++)
			if (memcmp(text + e - lens[i], pats[i], lens[i]) == 0) {
				want.h[want.n].id = i;
				want.h[want.n++].end = e;
			}
	qsort(want.h, want.n, sizeof(want.h[0]), cmp_hit);
}

static void
random_round(uint32_t alphabet, uint32_t n_pats)
{
	uint8_t pats[64][16], text[4096];
	uint32_t lens[64], n;
	struct ac a;

	assert_int_equal(ac_init(&a, 4096), 0);
	for (uint32_t i = 0; i < n_pats; i++) {
		lens[i] = 1 + rnd() % 8;
		for (uint32_t j = 0; j < lens[i]; j++)
			pats[i][j] = (uint8_t)('a' + rnd() % alphabet);
		assert_int_equal(ac_add(&a, pats[i], lens[i], i), 0);
	}
	assert_int_equal(ac_build(&a), 0);
	for (uint32_t i = 0; i < sizeof(text); i++)
		text[i] = (uint8_t)('a' + rnd() % alphabet);
	got.n = 0;
	got.stop_after = 0;
	n = ac_scan(&a, text, sizeof(text), collect, &got);
	assert_int_equal(n, got.n);
	naive(pats, lens, n_pats, text, sizeof(text));
	/* ac_scan reports by end; sort ties by id like the naive list */
	qsort(got.h, got.n, sizeof(got.h[0]), cmp_hit);
	assert_int_equal(got.n, want.n);
	assert_memory_equal(got.h, want.h, got.n * sizeof(got.h[0]));
	ac_free(&a);
}

TEST(test_random_patterns_match_naive_search)
{
	for (int r = 0; r < 30; r++) {
		random_round(2, 1 + rnd() % 40);
		random_round(3, 1 + rnd() % 64);
	}
}

static int
count_all(uint32_t id, uint32_t len, uint32_t end, void *arg)
{
	(void)id, (void)len, (void)end, (void)arg;
	return 0;
}

/* ac_reports() of 1..AC_LANES streams of different lengths (0 included)
 * says which hold an occurrence exactly as ac_scan() of each does; with
 * long patterns over a small alphabet, some do and some do not. */
TEST(test_reports_of_streams_side_by_side_agree_with_scans)
{
	uint8_t text[AC_LANES][48], pat[6];
	unsigned hits = 0, misses = 0;
	struct ac a;

	assert_int_equal(ac_init(&a, 4096), 0);
	for (uint32_t i = 0; i < 12; i++) {
		uint32_t n = 3 + rnd() % 4;

		for (uint32_t j = 0; j < n; j++)
			pat[j] = (uint8_t)('a' + rnd() % 3);
		assert_int_equal(ac_add(&a, pat, n, i), 0);
	}
	assert_int_equal(ac_build(&a), 0);
	for (int r = 0; r < 2000; r++) {
		const uint8_t *data[AC_LANES];
		uint32_t len[AC_LANES];
		unsigned n = 1 + rnd() % AC_LANES, want = 0;

		for (unsigned j = 0; j < n; j++) {
			len[j] = rnd() % sizeof(text[j]);
			for (uint32_t i = 0; i < len[j]; i++)
				text[j][i] = (uint8_t)('a' + rnd() % 3);
			data[j] = text[j];
			if (ac_scan(&a, data[j], len[j], count_all, NULL) > 0)
				want |= 1u << j;
		}
		assert_int_equal(ac_reports(&a, data, len, n), want);
		hits += __builtin_popcount(want);
		misses += n - __builtin_popcount(want);
	}
	assert_true(hits > 500 && misses > 500);
	ac_free(&a);
}

static struct ac
build(const char *const *pats, uint32_t n)
{
	struct ac a;

	assert_int_equal(ac_init(&a, 1024), 0);
	for (uint32_t i = 0; i < n; i++)
		assert_int_equal(ac_add(&a, (const uint8_t *)pats[i],
					(uint32_t)strlen(pats[i]), i), 0);
	assert_int_equal(ac_build(&a), 0);
	return a;
}

static void
scan_str(struct ac *a, const char *text)
{
	got.n = 0;
	ac_scan(a, (const uint8_t *)text, (uint32_t)strlen(text), collect, &got);
}

TEST(test_he_she_his_hers)
{
	static const char *const p[] = { "he", "she", "his", "hers" };
	struct ac a = build(p, 4);

	got.stop_after = 0;
	scan_str(&a, "ushers");
	/* "she" and its suffix "he" end at 4, "hers" at 6 */
	assert_int_equal(got.n, 3);
	assert_int_equal(got.h[0].end, 4);
	assert_int_equal(got.h[1].end, 4);
	assert_int_equal(got.h[0].id + got.h[1].id, 0 + 1);
	assert_int_equal(got.h[2].id, 3);
	assert_int_equal(got.h[2].end, 6);
	scan_str(&a, "");
	assert_int_equal(got.n, 0);
	scan_str(&a, "h e s h i");		/* near misses only */
	assert_int_equal(got.n, 0);
	ac_free(&a);
}

TEST(test_patterns_at_both_ends_and_the_whole_data)
{
	static const char *const p[] = { "abc", "xyz", "abcxyz" };
	struct ac a = build(p, 3);

	got.stop_after = 0;
	scan_str(&a, "abcxyz");
	assert_int_equal(got.n, 3);
	assert_int_equal(got.h[0].id, 0);
	assert_int_equal(got.h[0].end, 3);
	assert_int_equal(got.h[1].end, 6);
	assert_int_equal(got.h[2].end, 6);
	ac_free(&a);
}

TEST(test_every_byte_value_and_repeated_patterns)
{
	uint8_t all[256], two[2] = { 0, 255 };
	struct ac a;

	for (int i = 0; i < 256; i++)
		all[i] = (uint8_t)i;
	assert_int_equal(ac_init(&a, 1024), 0);
	assert_int_equal(ac_add(&a, two, 2, 7), 0);
	assert_int_equal(ac_add(&a, two, 2, 8), 0);	/* same bytes */
	assert_int_equal(ac_add(&a, all + 254, 2, 9), 0);
	assert_int_equal(ac_build(&a), 0);
	got.n = 0;
	got.stop_after = 0;
	ac_scan(&a, all, 256, collect, &got);
	assert_int_equal(got.n, 1);
	assert_int_equal(got.h[0].id, 9);
	uint8_t t[4] = { 255, 0, 255, 0 };
	got.n = 0;
	ac_scan(&a, t, 4, collect, &got);
	assert_int_equal(got.n, 2);
	assert_int_equal(got.h[0].id, 7);		/* in the order added */
	assert_int_equal(got.h[1].id, 8);
	ac_free(&a);
}

TEST(test_scan_stops_when_asked)
{
	static const char *const p[] = { "a" };
	struct ac a = build(p, 1);

	got.stop_after = 3;
	scan_str(&a, "aaaaaaaa");
	assert_int_equal(got.n, 3);
	got.stop_after = 0;
	ac_free(&a);
}

TEST(test_limits_and_misuse)
{
	struct ac a;

	assert_int_equal(ac_init(&a, 4), 0);
	assert_int_equal(ac_add(&a, (const uint8_t *)"", 0, 0), -EINVAL);
	assert_int_equal(ac_add(&a, (const uint8_t *)"abc", 3, 0), 0);
	assert_int_equal(ac_add(&a, (const uint8_t *)"abd", 3, 1), -ENOSPC);
	assert_int_equal(ac_build(&a), 0);
	assert_int_equal(ac_add(&a, (const uint8_t *)"a", 1, 2), -EINVAL);
	ac_free(&a);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random_patterns_match_naive_search),
		cmocka_unit_test(test_he_she_his_hers),
		cmocka_unit_test(test_patterns_at_both_ends_and_the_whole_data),
		cmocka_unit_test(test_every_byte_value_and_repeated_patterns),
		cmocka_unit_test(test_scan_stops_when_asked),
		cmocka_unit_test(test_limits_and_misuse),
		cmocka_unit_test(test_reports_of_streams_side_by_side_agree_with_scans),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

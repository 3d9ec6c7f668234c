/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the load balancer's Maglev table (examples/lb/maglev.c):
 * every backend gets M/N entries give or take one; removing or adding one
 * backend moves its own entries and only a few others.
 */
#include <errno.h>
#include <setjmp.h>	/* setjmp.h, stdarg.h, stddef.h: before cmocka.h */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>

#include "lb/maglev.h"

#define UNUSED __attribute__((unused))
#define TEST(name) static void name(void **state UNUSED)
#define M 65537u

static uint64_t ids[64];

static int
setup_ids(void **state UNUSED)
{
	for (unsigned i = 0; i < 64; i++)	/* like hashed addresses */
		ids[i] = 0x9e3779b97f4a7c15ull * (i + 1) ^ 0xabcdef;
	return 0;
}

TEST(test_every_backend_gets_m_over_n_entries)
{
	struct maglev m;
	uint32_t count[64];

	assert_int_equal(maglev_init(&m, M), 0);
	for (uint32_t n = 1; n <= 64; n += 7) {
		assert_int_equal(maglev_build(&m, ids, n), 0);
		for (uint32_t i = 0; i < n; i++)
			count[i] = 0;
		for (uint32_t c = 0; c < M; c++) {
			assert_true(m.table[c] < n);
			count[m.table[c]]++;
		}
		for (uint32_t i = 0; i < n; i++) {
			assert_true(count[i] >= M / n);
			assert_true(count[i] <= M / n + 1);
		}
	}
	maglev_free(&m);
}

/* Entries whose backend changed between two tables, apart from those of
 * the backend that left (or came). */
static uint32_t
moved_others(const struct maglev *a, const uint64_t *ida,
	     const struct maglev *b, const uint64_t *idb, uint64_t changed)
{
	uint32_t moved = 0;

	for (uint32_t c = 0; c < M; c++) {
		uint64_t x = ida[a->table[c]], y = idb[b->table[c]];

		if (x != y && x != changed && y != changed)
			moved++;
	}
	return moved;
}

TEST(test_removing_a_backend_moves_its_entries_and_few_others)
{
	struct maglev a, b;
	uint64_t rest[10];
	uint32_t n = 10, gone = 3, j = 0, moved;

	assert_int_equal(maglev_init(&a, M), 0);
	assert_int_equal(maglev_init(&b, M), 0);
	assert_int_equal(maglev_build(&a, ids, n), 0);
	for (uint32_t i = 0; i < n; i++)
		if (i != gone)
			rest[j++] = ids[i];
	assert_int_equal(maglev_build(&b, rest, n - 1), 0);
	for (uint32_t c = 0; c < M; c++)
		assert_true(rest[b.table[c]] != ids[gone]);
	moved = moved_others(&a, ids, &b, rest, ids[gone]);
	printf("# removing 1 of %u backends moved %u of %u other entries\n",
	       n, moved, M);
	assert_true(moved < M / 50);		/* under 2 % */
	maglev_free(&a);
	maglev_free(&b);
}

TEST(test_adding_a_backend_takes_m_over_n_and_moves_few_others)
{
	struct maglev a, b;
	uint32_t n = 10, taken = 0, moved;

	assert_int_equal(maglev_init(&a, M), 0);
	assert_int_equal(maglev_init(&b, M), 0);
	assert_int_equal(maglev_build(&a, ids, n), 0);
	assert_int_equal(maglev_build(&b, ids, n + 1), 0);
	for (uint32_t c = 0; c < M; c++)
		taken += b.table[c] == n;
	assert_true(taken >= M / (n + 1) && taken <= M / (n + 1) + 1);
	moved = moved_others(&a, ids, &b, ids, ids[n]);
	printf("# adding an 11th backend moved %u of %u other entries\n",
	       moved, M);
	assert_true(moved < M / 50);
	maglev_free(&a);
	maglev_free(&b);
}

TEST(test_no_backends_and_bad_sizes)
{
	struct maglev m;

	assert_int_equal(maglev_init(&m, 65536), -EINVAL);	/* not prime */
	assert_int_equal(maglev_init(&m, 2), -EINVAL);
	assert_int_equal(maglev_init(&m, 7), 0);
	assert_int_equal(maglev_build(&m, ids, 0), 0);
	for (uint32_t c = 0; c < 7; c++)
		assert_int_equal(m.table[c], MAGLEV_NONE);
	assert_int_equal(maglev_build(&m, ids, 8), -EINVAL);
	assert_int_equal(maglev_build(&m, ids, 7), 0);		/* one each */
	for (uint32_t c = 0; c < 7; c++)
		for (uint32_t d = 0; d < c; d++)
			assert_true(m.table[c] != m.table[d]);
	maglev_free(&m);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_backend_gets_m_over_n_entries),
		cmocka_unit_test(test_removing_a_backend_moves_its_entries_and_few_others),
		cmocka_unit_test(test_adding_a_backend_takes_m_over_n_and_moves_few_others),
		cmocka_unit_test(test_no_backends_and_bad_sizes),
	};

	return cmocka_run_group_tests(tests, setup_ids, NULL);
}

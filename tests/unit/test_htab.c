/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * examples/common/htab: each table hashes with key material of its own,
 * so keys chosen to collide in one table (an attacker who learnt its
 * hash) spread out in another instead of filling one probe run; a sweep
 * of every slot sees every entry.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "htab.h"

#define MAX   64u	/* entries: 128 slots */
#define N_BAD 32u	/* keys sharing one home slot in another table */

/* N_BAD keys whose home slot in table @p known is slot 0, as an attacker
 * who knows that table's hash would pick them. */
static void
colliding_keys(const struct htab *known, uint64_t *keys)
{
	uint64_t k = 0;
	unsigned n = 0;

	while (n < N_BAD) {
		if ((htab_hash(known, &k) & known->mask) == 0)
			keys[n++] = k;
		k++;
	}
}

static void
test_tables_have_their_own_seed(void **state)
{
	struct htab a, b;

	(void)state;
	assert_int_equal(htab_init(&a, MAX, sizeof(uint64_t), 8), 0);
	assert_int_equal(htab_init(&b, MAX, sizeof(uint64_t), 8), 0);
	assert_true(a.seed != b.seed);
	assert_memory_not_equal(a.nh, b.nh, sizeof(a.nh));
	htab_free(&a);
	htab_free(&b);
}

/* Slots spanned by the entries of @p t (first to last); their count in
 * @p n. */
static uint32_t
span(const struct htab *t, uint32_t *n)
{
	uint32_t pos = 0, first = UINT32_MAX, last = 0;
	const void *key;

	*n = 0;
	while (htab_next(t, &pos, &key) != NULL) {
		first = first < pos - 1 ? first : pos - 1;
		last = pos - 1;
		(*n)++;
	}
	return last - first + 1;
}

static void
test_keys_colliding_in_another_table_spread(void **state)
{
	uint64_t keys[N_BAD];
	struct htab known, t;
	uint32_t n;
	int is_new;

	(void)state;
	assert_int_equal(htab_init(&known, MAX, sizeof(uint64_t), 8), 0);
	assert_int_equal(htab_init(&t, MAX, sizeof(uint64_t), 8), 0);
	colliding_keys(&known, keys);
	for (unsigned i = 0; i < N_BAD; i++) {
		assert_non_null(htab_insert(&known, &keys[i], &is_new));
		assert_non_null(htab_insert(&t, &keys[i], &is_new));
	}
	/* In the table they were picked for they fill slots 0..31, one
	 * run; in another they do not (its own key material makes that
	 * about as likely as 32 random keys landing in 32 consecutive slots
	 * of 128). */
	assert_int_equal(span(&known, &n), N_BAD);
	assert_int_equal(n, N_BAD);
	assert_true(span(&t, &n) > N_BAD);
	assert_int_equal(n, N_BAD);
	for (unsigned i = 0; i < N_BAD; i++)
		assert_non_null(htab_find(&t, &keys[i]));
	htab_free(&known);
	htab_free(&t);
}

static int
odd_key(const void *key, void *val, void *arg)
{
	uint64_t k;

	(void)val;
	(void)arg;
	memcpy(&k, key, sizeof(k));
	return k & 1;
}

/* A sweep of every slot removes every entry it is asked to, however many
 * (each removal pulls later entries back, and once the budget counted
 * them, the slots at the end of a full sweep were never seen). */
static void
test_full_sweep_sees_every_entry(void **state)
{
	(void)state;
	for (unsigned round = 0; round < 200; round++) {
		uint32_t at = 0, pos = 0, left = 0, removed;
		const void *key;
		struct htab t;
		int is_new;

		assert_int_equal(htab_init(&t, MAX, sizeof(uint64_t), 8), 0);
		for (uint64_t k = 0; k < MAX; k++)
			assert_non_null(htab_insert(&t, &k, &is_new));
		removed = htab_sweep(&t, &at, t.mask + 1, odd_key, NULL);
		while (htab_next(&t, &pos, &key) != NULL)
			left += odd_key(key, NULL, NULL);
		assert_int_equal(left, 0);
		assert_int_equal(removed, MAX / 2);
		assert_int_equal(t.n, MAX / 2);
		htab_free(&t);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tables_have_their_own_seed),
		cmocka_unit_test(test_keys_colliding_in_another_table_spread),
		cmocka_unit_test(test_full_sweep_sees_every_entry),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

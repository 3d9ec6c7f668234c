/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of a service's replica slots and rendezvous bucket table
 * (dom0-core/service_table.[ch]): every bucket owned by a live replica,
 * an even share each, only a departed replica's buckets move, a replica
 * back in its slot gets exactly its buckets back, lowest free slot first.
 */
#include <setjmp.h>	/* setjmp.h, stdarg.h, stddef.h: before cmocka.h */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "service_table.h"

#define UNUSED __attribute__((unused))
#define TEST(name) static void name(void **state UNUSED)

static struct xnv_service s;

static unsigned
owned_by(uint16_t nf)
{
	unsigned b, n = 0;

	for (b = 0; b < XNV_BUCKETS; b++)
		n += s.bucket[b] == nf;
	return n;
}

static int
setup(void **state UNUSED)
{
	memset(&s, 0, sizeof(s));
	xnv_service_init(&s);
	return 0;
}

TEST(empty_service_owns_nothing)
{
	assert_int_equal(owned_by(XNV_NF_NONE), XNV_BUCKETS);
	assert_int_equal(xnv_service_owner(&s, 12345), XNV_NF_NONE);
	assert_int_equal(s.n_live, 0);
	assert_int_equal(s.ever_live, 0);
}

TEST(one_replica_owns_every_bucket)
{
	xnv_service_join(&s, 0, 7);
	assert_int_equal(owned_by(7), XNV_BUCKETS);
	assert_int_equal(xnv_service_owner(&s, 0xdeadbeef), 7);
	assert_int_equal(s.n_live, 1);
	assert_int_equal(s.ever_live, 1);
}

TEST(replicas_share_buckets_evenly)
{
	unsigned n, i;

	for (n = 2; n <= XNV_MAX_INSTANCES; n++) {
		setup(NULL);
		for (i = 0; i < n; i++)
			xnv_service_join(&s, (int)i, (uint16_t)(100 + i));
		for (i = 0; i < n; i++) {
			unsigned got = owned_by((uint16_t)(100 + i));

			/* within 60 % of a fair share either way */
			assert_true(got * n * 10 >= XNV_BUCKETS * 4);
			assert_true(got * n * 10 <= XNV_BUCKETS * 16);
		}
		assert_int_equal(owned_by(XNV_NF_NONE), 0);
	}
}

/* NFs 10, 11, 12 in slots 0-2; the table then in @p before; 11 leaves. */
static void
three_then_middle_leaves(uint16_t before[XNV_BUCKETS])
{
	xnv_service_join(&s, 0, 10);
	xnv_service_join(&s, 1, 11);
	xnv_service_join(&s, 2, 12);
	memcpy(before, s.bucket, sizeof(s.bucket));
	xnv_service_leave(&s, 1, 11);
}

TEST(leaving_moves_only_the_leavers_buckets)
{
	uint16_t before[XNV_BUCKETS];
	unsigned b;

	three_then_middle_leaves(before);
	assert_int_equal(owned_by(11), 0);
	for (b = 0; b < XNV_BUCKETS; b++)
		if (before[b] != 11)
			assert_int_equal(s.bucket[b], before[b]);
	/* the live list keeps its order */
	assert_int_equal(s.n_live, 2);
	assert_int_equal(s.live[0], 10);
	assert_int_equal(s.live[1], 12);
}

TEST(replica_back_in_its_slot_gets_its_buckets_back)
{
	uint16_t before[XNV_BUCKETS];
	unsigned b;

	three_then_middle_leaves(before);
	assert_int_equal(xnv_service_free_slot(&s), 1);
	xnv_service_join(&s, 1, 42);		/* a new NF id, same slot */
	for (b = 0; b < XNV_BUCKETS; b++)
		assert_int_equal(s.bucket[b], before[b] == 11 ? 42 : before[b]);
}

TEST(free_slot_is_the_lowest_and_none_when_full)
{
	int i;

	assert_int_equal(xnv_service_free_slot(&s), 0);
	for (i = 0; i < XNV_MAX_INSTANCES; i++)
		xnv_service_join(&s, i, (uint16_t)i);
	assert_int_equal(xnv_service_free_slot(&s), -1);
	xnv_service_leave(&s, 5, 5);
	xnv_service_leave(&s, 3, 3);
	assert_int_equal(xnv_service_free_slot(&s), 3);
}

TEST(owner_uses_the_low_bits_of_the_hash)
{
	unsigned b;

	xnv_service_join(&s, 0, 1);
	xnv_service_join(&s, 1, 2);
	for (b = 0; b < XNV_BUCKETS; b++)
		assert_int_equal(xnv_service_owner(&s, b | 0xabc00000u),
				 s.bucket[b]);
}

TEST(ids_remove_keeps_order_and_ignores_absent)
{
	uint16_t l[] = { 4, 8, 15, 16, 23, 42 }, n = 6;

	xnv_ids_remove(l, &n, 15);
	assert_int_equal(n, 5);
	assert_int_equal(l[2], 16);
	assert_int_equal(l[4], 42);
	xnv_ids_remove(l, &n, 99);
	assert_int_equal(n, 5);
	xnv_ids_remove(l, &n, 42);
	xnv_ids_remove(l, &n, 4);
	assert_int_equal(n, 3);
	assert_int_equal(l[0], 8);
	assert_int_equal(l[2], 23);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(empty_service_owns_nothing, setup),
		cmocka_unit_test_setup(one_replica_owns_every_bucket, setup),
		cmocka_unit_test_setup(replicas_share_buckets_evenly, setup),
		cmocka_unit_test_setup(leaving_moves_only_the_leavers_buckets,
				       setup),
		cmocka_unit_test_setup(
			replica_back_in_its_slot_gets_its_buckets_back, setup),
		cmocka_unit_test_setup(free_slot_is_the_lowest_and_none_when_full,
				       setup),
		cmocka_unit_test_setup(owner_uses_the_low_bits_of_the_hash,
				       setup),
		cmocka_unit_test_setup(ids_remove_keeps_order_and_ignores_absent,
				       setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

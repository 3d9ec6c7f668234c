/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of xnv-core's buffer quota and hoard watch
 * (dom0-core/quota.[ch]): the quota an NF gets, how much a refill may
 * add, which alloc_bufs an attach may ask for, and when an NF at its
 * quota counts as a hoarder.
 */
#include <errno.h>
#include <setjmp.h>	/* setjmp.h, stdarg.h, stddef.h: before cmocka.h */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "quota.h"

#define UNUSED __attribute__((unused))
#define TEST(name) static void name(void **state UNUSED)

TEST(quota_is_max_held_or_two_rings_the_alloc_and_a_burst)
{
	assert_int_equal(xnv_quota(0, 1024, 0), 2048 + GNTS_BURST_MAX);
	assert_int_equal(xnv_quota(0, 1024, 256), 2304 + GNTS_BURST_MAX);
	assert_int_equal(xnv_quota(0, 65536, 65536),
			 3 * 65536 + GNTS_BURST_MAX);
	assert_int_equal(xnv_quota(64, 1024, 0), 64);
	assert_int_equal(xnv_quota(64, 1024, 32), 64);
	assert_int_equal(xnv_quota_room(0, 64), 64);
	assert_int_equal(xnv_quota_room(63, 64), 1);
	assert_int_equal(xnv_quota_room(64, 64), 0);
	assert_int_equal(xnv_quota_room(70, 64), 0);	/* never negative */
}

TEST(refill_keeps_half_full_and_stops_at_the_quota)
{
	/* at least half full: nothing */
	assert_int_equal(xnv_refill_count(128, 256, 64, 1000), 0);
	assert_int_equal(xnv_refill_count(256, 256, 64, 1000), 0);
	/* under half: up to want, one burst at most */
	assert_int_equal(xnv_refill_count(127, 256, 64, 1000), 64);
	assert_int_equal(xnv_refill_count(127, 256, 256, 1000), 129);
	assert_int_equal(xnv_refill_count(0, 256, 256, 1000), 256);
	/* never past the quota */
	assert_int_equal(xnv_refill_count(0, 256, 64, 10), 10);
	assert_int_equal(xnv_refill_count(0, 256, 64, 0), 0);
	assert_int_equal(xnv_refill_count(0, 0, 64, 100), 0);	/* no alloc */
}

TEST(alloc_is_at_most_the_ring_and_below_max_held)
{
	char err[160];

	assert_int_equal(xnv_quota_check_alloc(0, 1024, 0, err, sizeof(err)), 0);
	assert_int_equal(xnv_quota_check_alloc(1024, 1024, 0, err,
					       sizeof(err)), 0);
	assert_int_equal(xnv_quota_check_alloc(1025, 1024, 0, err, sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "alloc_bufs 1025 is more than the ring size "
			    "1024: a free ring holds at most that many");
	assert_int_equal(xnv_quota_check_alloc(UINT32_MAX, 1024, 0, err,
					       sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "alloc_bufs 4294967295 is more than the "
			       "ring size 1024"));
	/* with max_held: its free ring must leave room to receive */
	assert_int_equal(xnv_quota_check_alloc(63, 1024, 64, err,
					       sizeof(err)), 0);
	assert_int_equal(xnv_quota_check_alloc(64, 1024, 64, err, sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "alloc_bufs 64 is not below [core] max_held "
			    "64: its free ring alone would fill its quota");
	assert_int_equal(xnv_quota_check_alloc(0, 1024, 1, err, sizeof(err)),
			 0);
}

TEST(hoard_clock_runs_only_at_quota_without_returns)
{
	struct xnv_hoard h = { 0, 0 };

	/* below quota: never stuck, however long */
	assert_int_equal(xnv_hoard_watch(&h, 0, 0, 100), 0);
	assert_int_equal(xnv_hoard_watch(&h, 0, 0, 5000), 0);
	/* at quota from 5001 on, returning nothing: the clock runs from the
	 * last time it was seen not stuck */
	assert_int_equal(xnv_hoard_watch(&h, 1, 0, 5001), 1);
	assert_int_equal(xnv_hoard_watch(&h, 1, 0, 8000), 3000);
	/* one buffer back: starts again */
	assert_int_equal(xnv_hoard_watch(&h, 1, 1, 8001), 0);
	assert_int_equal(xnv_hoard_watch(&h, 1, 1, 9000), 999);
	/* below quota for a moment: starts again */
	assert_int_equal(xnv_hoard_watch(&h, 0, 1, 9001), 0);
	assert_int_equal(xnv_hoard_watch(&h, 1, 1, 9002), 1);
}

TEST(busy_nf_at_quota_that_returns_is_never_stuck)
{
	struct xnv_hoard h = { 0, 0 };
	uint64_t t, returned = 0, worst = 0, s;

	/* At its quota at every look for 10^6 looks, returning a buffer now
	 * and then (every 7th look): stuck for 6 looks at most. */
	for (t = 1; t <= 1000000; t++) {
		if (t % 7 == 0)
			returned++;
		s = xnv_hoard_watch(&h, 1, returned, t);
		worst = s > worst ? s : worst;
	}
	assert_int_equal(worst, 6);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(quota_is_max_held_or_two_rings_the_alloc_and_a_burst),
		cmocka_unit_test(refill_keeps_half_full_and_stops_at_the_quota),
		cmocka_unit_test(alloc_is_at_most_the_ring_and_below_max_held),
		cmocka_unit_test(hoard_clock_runs_only_at_quota_without_returns),
		cmocka_unit_test(busy_nf_at_quota_that_returns_is_never_stuck),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

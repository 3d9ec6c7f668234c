/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of xnv-core's rx pacing (dom0-core/pace.[ch]): the token
 * bucket's rate and depth.
 */
#include <setjmp.h>	/* setjmp.h, stdarg.h, stddef.h: before cmocka.h */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "pace.h"

#define UNUSED __attribute__((unused))
#define TEST(name) static void name(void **state UNUSED)

/* 1 GHz TSC, 1 Mpps: one packet per 1000 cycles, a burst of credit. */
TEST(pacing_keeps_rate_and_one_burst_of_credit)
{
	struct xnv_pace p;
	uint64_t t, got = 0;
	unsigned k;

	xnv_pace_init(&p, 0, 1000000000);
	assert_int_equal(xnv_pace_allow(&p, 12345, 32), 32);	/* unpaced */

	xnv_pace_init(&p, 1000000, 1000000000);
	/* at start, after a long idle time: one burst, not more */
	assert_int_equal(xnv_pace_allow(&p, 10, 32), 1);
	assert_int_equal(xnv_pace_allow(&p, 100000000, 32), 32);
	xnv_pace_took(&p, 32);
	assert_int_equal(xnv_pace_allow(&p, 100000000, 32), 0);
	assert_int_equal(xnv_pace_allow(&p, 100000999, 32), 0);
	assert_int_equal(xnv_pace_allow(&p, 100001000, 32), 1);
	/* polled every 300 cycles for 1 s: 1e6 packets, give or take a burst */
	for (t = 200000000; t < 1200000000; t += 300) {
		k = xnv_pace_allow(&p, t, 32);
		xnv_pace_took(&p, k);
		got += k;
	}
	assert_true(got >= 1000000 - 32 && got <= 1000000 + 32);
	/* a receiver that takes fewer than allowed does not bank the rest */
	k = xnv_pace_allow(&p, t + 1000000, 32);
	assert_int_equal(k, 32);
	xnv_pace_took(&p, 4);
	assert_true(xnv_pace_allow(&p, t + 1000000, 32) <= 28);
	/* absurd rates: 1e9 pps on a 1 GHz clock, one per cycle */
	xnv_pace_init(&p, 1000000000, 1000000000);
	assert_int_equal(p.cost, 256);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(pacing_keeps_rate_and_one_burst_of_credit),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

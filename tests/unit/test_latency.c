/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of xnv-core's latency histogram arithmetic
 * (dom0-core/latency.[ch]): every bucket bound against brute force,
 * quantiles of known distributions, per-worker histograms merged.
 */
#include <setjmp.h>	/* setjmp.h, stdarg.h, stddef.h: before cmocka.h */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "latency.h"

#define UNUSED __attribute__((unused))
#define TEST(name) static void name(void **state UNUSED)

static struct xnv_lat lat;

/* A value is in the bucket whose bounds hold it, reported at most 1/16
 * high, and buckets are in order of their values. */
TEST(buckets_hold_their_values)
{
	uint64_t v, samples[] = { 0, 1, 15, 16, 17, 31, 32, 33, 1000, 1023,
		1024, 1025, 123456789, 1ull << 40, (1ull << 63) - 1,
		1ull << 63, UINT64_MAX - 1, UINT64_MAX };
	unsigned i, b, prev = 0;

	for (v = 0; v < 70000; v++) {
		b = xnv_lat_bucket(v);
		assert_true(b < XNV_LAT_BUCKETS);
		assert_true(b >= prev);
		prev = b;
		assert_true(xnv_lat_bucket_max(b) >= v);
		assert_true(b == 0 || xnv_lat_bucket_max(b - 1) < v);
	}
	for (i = 0; i < sizeof(samples) / sizeof(samples[0]); i++) {
		v = samples[i];
		b = xnv_lat_bucket(v);
		assert_true(b < XNV_LAT_BUCKETS);
		assert_true(xnv_lat_bucket_max(b) >= v);
		assert_true(xnv_lat_bucket_max(b) - v <= v / 16);
	}
	assert_int_equal(xnv_lat_bucket_max(XNV_LAT_BUCKETS - 1), UINT64_MAX);
}

TEST(quantiles)
{
	uint64_t v;

	memset(&lat, 0, sizeof(lat));
	assert_int_equal(xnv_lat_quantile(&lat, 0.5), 0);
	for (v = 1; v <= 1000; v++)		/* 1..1000, once each */
		xnv_lat_add(&lat, v);
	assert_int_equal(lat.n, 1000);
	assert_int_equal(lat.max, 1000);
	assert_int_equal(lat.sum, 500500);
	/* the bound of the bucket holding the 500th value, never below it */
	assert_true(xnv_lat_quantile(&lat, 0.5) >= 500);
	assert_true(xnv_lat_quantile(&lat, 0.5) <= 500 + 500 / 16);
	assert_true(xnv_lat_quantile(&lat, 0.99) >= 990);
	assert_true(xnv_lat_quantile(&lat, 0.99) <= 1000);
	assert_int_equal(xnv_lat_quantile(&lat, 0.999), 1000);
	assert_int_equal(xnv_lat_quantile(&lat, 1.0), 1000);
	assert_true(xnv_lat_quantile(&lat, 0.001) <= 1);

	memset(&lat, 0, sizeof(lat));		/* 99 fast, 1 slow */
	for (v = 0; v < 99; v++)
		xnv_lat_add(&lat, 100);
	xnv_lat_add(&lat, 1000000);
	v = xnv_lat_quantile(&lat, 0.5);	/* its bucket's bound: 103 */
	assert_true(v >= 100 && v <= 100 + 100 / 16);
	assert_int_equal(xnv_lat_quantile(&lat, 0.99), v);
	assert_int_equal(xnv_lat_quantile(&lat, 0.995), 1000000);
	assert_int_equal(xnv_lat_quantile(&lat, 1.0), 1000000);
}

/* Cumulative counts: every value at most its bucket's bound ahead, all
 * of them under the largest bound, none under a bound below them all. */
static void
count_le(void **state)
{
	static struct xnv_lat lat;
	uint64_t v;

	(void)state;
	for (v = 1; v <= 1000; v++)
		xnv_lat_add(&lat, v * 10);
	assert_int_equal(xnv_lat_count_le(&lat, 9), 0);
	assert_int_equal(xnv_lat_count_le(&lat, 10), 1);
	assert_int_equal(xnv_lat_count_le(&lat, 100000), 1000);
	assert_int_equal(xnv_lat_count_le(&lat, UINT64_MAX), 1000);
	/* values <= 5000: 500 of them; counted at most 1/16 later */
	assert_true(xnv_lat_count_le(&lat, 5000) <= 500);
	assert_true(xnv_lat_count_le(&lat, 5000 + 5000 / 16) >= 500);
	for (v = 10; v < 20000; v += 97)
		assert_true(xnv_lat_count_le(&lat, v) <=
			    xnv_lat_count_le(&lat, v + 97));
}

/* Two histograms merged answer as one that counted both. */
TEST(merge_is_one_histogram)
{
	static struct xnv_lat a, b, both;
	uint64_t v;

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	memset(&both, 0, sizeof(both));
	for (v = 1; v <= 100000; v += 7) {
		xnv_lat_add(v % 3 ? &a : &b, v * 13);
		xnv_lat_add(&both, v * 13);
	}
	xnv_lat_add(&b, 1ull << 40);	/* the max in the second */
	xnv_lat_add(&both, 1ull << 40);
	xnv_lat_merge(&a, &b);
	assert_memory_equal(&a, &both, sizeof(a));
	assert_int_equal(xnv_lat_quantile(&a, 1.0), 1ull << 40);
	assert_int_equal(xnv_lat_quantile(&a, 0.5),
			 xnv_lat_quantile(&both, 0.5));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(buckets_hold_their_values),
		cmocka_unit_test(quantiles),
		cmocka_unit_test(count_le),
		cmocka_unit_test(merge_is_one_histogram),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

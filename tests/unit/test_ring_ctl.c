/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the ring region's control line (ring.h, version 2): where
 * it is, that format zeroes it, that rings never touch it, the heartbeat
 * and detach notice helpers, and a reader thread that sees the heartbeat
 * move while another thread bumps it.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>	/* setjmp.h, stdarg.h, stddef.h: before cmocka.h */
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <cmocka.h>

#include "gntshare/ring.h"

#define TEST(name) static void name(void **state __attribute__((unused)))
#define RX GNTS_RING_RX
#define TX GNTS_RING_TX

static void *
formatted(uint32_t ring_size, size_t *bytes)
{
	void *mem;

	*bytes = gnts_ring_region_bytes(ring_size);
	mem = aligned_alloc(GNTS_CACHE_LINE, *bytes);
	assert_non_null(mem);
	memset(mem, 0xa5, *bytes);
	assert_int_equal(gnts_ring_region_format(mem, *bytes, ring_size), 0);
	return mem;
}

/* Attach @p p to a 16-descriptor region and fill every ring with 0xff
 * descriptors: what the areas before the rings must survive. */
static void
fill_every_ring(void *mem, size_t bytes, struct gnts_ring_port *p)
{
	struct gnts_desc d[16];

	memset(d, 0xff, sizeof(d));
	assert_int_equal(gnts_ring_region_attach(mem, bytes, 16, p), 0);
	for (int i = 0; i < GNTS_RING_COUNT; i++) {
		assert_true((char *)p[i].r >= (char *)mem + 128 +
			    GNTS_RING_STATS_BYTES + GNTS_RING_SLEEP_BYTES);
		assert_int_equal(gnts_ring_enqueue_burst(&p[i], d, 16), 16);
	}
}

TEST(test_ctl_after_header_and_zeroed)
{
	size_t bytes;
	void *mem = formatted(64, &bytes);
	struct gnts_ring_ctl *c = gnts_ring_region_ctl(mem);
	static const uint8_t zero[GNTS_CACHE_LINE];

	assert_ptr_equal(c, (char *)mem + 64);
	assert_memory_equal(c, zero, sizeof(*c));
	assert_int_equal(gnts_ring_beat_read(c), 0);
	assert_int_equal(gnts_ring_detached(c), GNTS_DETACH_NONE);
	assert_int_equal(bytes, 128 + GNTS_RING_STATS_BYTES +
			 GNTS_RING_SLEEP_BYTES +
			 GNTS_RING_COUNT * gnts_ring_bytes(64));
	free(mem);
}

TEST(test_ctl_untouched_by_full_rings)
{
	struct gnts_ring_port p[GNTS_RING_COUNT];
	size_t bytes;
	void *mem = formatted(16, &bytes);
	static const uint8_t zero[GNTS_CACHE_LINE];

	fill_every_ring(mem, bytes, p);
	assert_memory_equal(gnts_ring_region_ctl(mem), zero, GNTS_CACHE_LINE);
	free(mem);
}

TEST(test_beat_counts_and_wraps)
{
	size_t bytes;
	void *mem = formatted(16, &bytes);
	struct gnts_ring_ctl *c = gnts_ring_region_ctl(mem);

	for (int i = 0; i < 5; i++)
		gnts_ring_beat(c);
	assert_int_equal(gnts_ring_beat_read(c), 5);
	atomic_store(&c->heartbeat, UINT32_MAX);
	gnts_ring_beat(c);
	assert_int_equal(gnts_ring_beat_read(c), 0);	/* "it moved" */
	free(mem);
}

TEST(test_detached_codes)
{
	size_t bytes;
	void *mem = formatted(16, &bytes);
	struct gnts_ring_ctl *c = gnts_ring_region_ctl(mem);

	gnts_ring_set_detached(c, GNTS_DETACH_HEARTBEAT);
	assert_int_equal(gnts_ring_detached(c), GNTS_DETACH_HEARTBEAT);
	assert_int_equal(gnts_ring_beat_read(c), 0);	/* separate words */
	gnts_ring_set_detached(c, GNTS_DETACH_QUARANTINE);
	assert_int_equal(gnts_ring_detached(c), GNTS_DETACH_QUARANTINE);
	free(mem);
}

TEST(test_version_1_region_refused)
{
	struct gnts_ring_port p[GNTS_RING_COUNT];
	struct gnts_ring_region_hdr *h;
	size_t bytes;
	void *mem = formatted(16, &bytes);

	h = mem;
	h->version = 1;		/* an old core: no control line */
	assert_int_equal(gnts_ring_region_attach(mem, bytes, 0, p), -EPROTO);
	free(mem);
}

/* Version 3: the stats area right after the control line, zeroed, found
 * by the reader; untouched by full rings. */
TEST(test_stats_area_after_ctl)
{
	struct gnts_ring_port p[GNTS_RING_COUNT];
	static const uint8_t zero[GNTS_RING_STATS_BYTES];
	size_t bytes;
	void *mem = formatted(16, &bytes);
	struct gnts_nf_stat *s;
	unsigned n = 0;

	assert_int_equal(GNTS_RING_STATS_OFF, 128);
	assert_int_equal(GNTS_RING_STATS_BYTES, 640);
	s = gnts_ring_region_stats(mem, bytes, &n);
	assert_ptr_equal(s, (char *)mem + 128);
	assert_int_equal(n, GNTS_NF_STATS_MAX);
	fill_every_ring(mem, bytes, p);
	assert_memory_equal(s, zero, sizeof(zero));
	free(mem);
}

/* A version 2 region (no stats area: stats_off 0) still attaches, and
 * has no stats area; a bad stats_off or n_stats is refused. */
TEST(test_stats_area_versions)
{
	struct gnts_ring_port p[GNTS_RING_COUNT];
	struct gnts_ring_region_hdr *h;
	size_t bytes;
	void *mem = formatted(16, &bytes);
	unsigned n = 0;

	h = mem;
	h->version = 2;
	h->stats_off = h->n_stats = 0;
	assert_int_equal(gnts_ring_region_attach(mem, bytes, 0, p), 0);
	assert_null(gnts_ring_region_stats(mem, bytes, &n));
	h->version = 3;
	assert_null(gnts_ring_region_stats(mem, bytes, &n));
	h->stats_off = 64;		/* over the control line */
	h->n_stats = GNTS_NF_STATS_MAX;
	assert_int_equal(gnts_ring_region_attach(mem, bytes, 0, p), -EINVAL);
	assert_null(gnts_ring_region_stats(mem, bytes, &n));
	h->stats_off = GNTS_RING_STATS_OFF;
	h->n_stats = GNTS_NF_STATS_MAX + 1;
	assert_int_equal(gnts_ring_region_attach(mem, bytes, 0, p), -EINVAL);
	assert_null(gnts_ring_region_stats(mem, bytes, &n));
	free(mem);
}

/* Version 4: the doorbell area after the stats area, one line per side,
 * zeroed (nobody sleeps, nobody kicks), untouched by full rings; each
 * ring's sleep word on its consumer's line, its kicks word on its
 * producer's. */
TEST(test_sleep_area_after_stats)
{
	struct gnts_ring_port p[GNTS_RING_COUNT];
	static const uint8_t zero[GNTS_RING_SLEEP_BYTES];
	struct gnts_ring_sleep_line *l;
	size_t bytes;
	void *mem = formatted(16, &bytes);

	assert_int_equal(GNTS_RING_SLEEP_OFF, 768);
	assert_int_equal(((struct gnts_ring_region_hdr *)mem)->sleep_off, 768);
	l = (struct gnts_ring_sleep_line *)((char *)mem + 768);
	assert_memory_equal(l, zero, sizeof(zero));
	assert_int_equal(gnts_ring_region_attach(mem, bytes, 16, p), 0);
	assert_ptr_equal(p[RX].sleep, &l[GNTS_SIDE_NF].sleep[RX]);
	assert_ptr_equal(p[GNTS_RING_FREE].sleep,
			 &l[GNTS_SIDE_NF].sleep[GNTS_RING_FREE]);
	assert_ptr_equal(p[TX].sleep, &l[GNTS_SIDE_CORE].sleep[TX]);
	assert_ptr_equal(p[RX].kicks, &l[GNTS_SIDE_CORE].kicks);
	assert_ptr_equal(p[GNTS_RING_FREE].kicks, &l[GNTS_SIDE_CORE].kicks);
	assert_ptr_equal(p[TX].kicks, &l[GNTS_SIDE_NF].kicks);
	assert_false(gnts_ring_sleep_ok(&p[RX]));	/* nobody kicks yet */
	fill_every_ring(mem, bytes, p);
	assert_memory_equal(l, zero, sizeof(zero));
	free(mem);
}

/* An older core's region (version 3, sleep_off 0) attaches without a
 * doorbell area: nobody may sleep, nobody is kicked; a version 4 header
 * with the area anywhere else is refused. */
TEST(test_sleep_area_versions)
{
	struct gnts_ring_port p[GNTS_RING_COUNT];
	struct gnts_ring_region_hdr *h;
	size_t bytes;
	void *mem = formatted(16, &bytes);

	h = mem;
	h->version = 3;
	assert_int_equal(gnts_ring_region_attach(mem, bytes, 0, p), 0);
	assert_null(p[RX].sleep);	/* a version 3 region: sleep_off ignored */
	h->version = 4;
	h->sleep_off = 0;
	assert_int_equal(gnts_ring_region_attach(mem, bytes, 0, p), 0);
	for (int i = 0; i < GNTS_RING_COUNT; i++) {
		assert_null(p[i].sleep);
		assert_false(gnts_ring_sleep_ok(&p[i]));
		assert_int_equal(gnts_ring_sleep_prepare(&p[i]), 0);
		gnts_ring_sleep_cancel(&p[i]);
		gnts_ring_kicks_set(&p[i]);
	}
	assert_int_equal(gnts_ring_enqueue_burst(&p[RX], &(struct gnts_desc){0},
						 1), 1);
	assert_int_equal(gnts_ring_need_kick(&p[RX]), 0);
	h->sleep_off = 64;		/* over the control line */
	assert_int_equal(gnts_ring_region_attach(mem, bytes, 0, p), -EINVAL);
	h->sleep_off = GNTS_RING_SLEEP_OFF + 64;
	assert_int_equal(gnts_ring_region_attach(mem, bytes, 0, p), -EINVAL);
	h->sleep_off = GNTS_RING_STATS_OFF;	/* over the stats area */
	assert_int_equal(gnts_ring_region_attach(mem, bytes, 0, p), -EINVAL);
	free(mem);
}

/* The one name rule of libxnv and the core. */
TEST(test_stat_names)
{
	char name[GNTS_NF_STAT_NAME_LEN];

	assert_true(gnts_nf_stat_name_ok("rule1_hits"));
	assert_true(gnts_nf_stat_name_ok("a.b-C_9"));
	assert_false(gnts_nf_stat_name_ok(""));
	assert_false(gnts_nf_stat_name_ok("a b"));
	assert_false(gnts_nf_stat_name_ok("a\"b"));
	assert_false(gnts_nf_stat_name_ok("\x1b[31m"));
	assert_false(gnts_nf_stat_name_ok("\xc3\xa9"));
	memset(name, 'a', sizeof(name));	/* no NUL in 32 bytes */
	assert_false(gnts_nf_stat_name_ok(name));
	name[31] = '\0';			/* 31 characters */
	assert_true(gnts_nf_stat_name_ok(name));
}

/* A beater thread and a reader: the reader sees it move (and TSan, in the
 * sanitizer build, sees no race on the control line). */
static atomic_int beat_stop;

static void *
beater(void *arg)
{
	while (!atomic_load(&beat_stop)) {
		gnts_ring_beat(arg);
		sched_yield();
	}
	return NULL;
}

TEST(test_beat_seen_by_another_thread)
{
	size_t bytes;
	void *mem = formatted(16, &bytes);
	struct gnts_ring_ctl *c = gnts_ring_region_ctl(mem);
	uint32_t first = gnts_ring_beat_read(c), moves = 0, last = first;
	pthread_t th;

	atomic_store(&beat_stop, 0);
	assert_int_equal(pthread_create(&th, NULL, beater, c), 0);
	for (long i = 0; i < 100000000L && moves < 100; i++) {
		uint32_t v = gnts_ring_beat_read(c);

		moves += v != last;
		last = v;
		if ((i & 1023) == 0)
			sched_yield();
	}
	atomic_store(&beat_stop, 1);
	pthread_join(th, NULL);
	assert_true(moves >= 100);
	free(mem);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ctl_after_header_and_zeroed),
		cmocka_unit_test(test_ctl_untouched_by_full_rings),
		cmocka_unit_test(test_beat_counts_and_wraps),
		cmocka_unit_test(test_detached_codes),
		cmocka_unit_test(test_version_1_region_refused),
		cmocka_unit_test(test_stats_area_after_ctl),
		cmocka_unit_test(test_stats_area_versions),
		cmocka_unit_test(test_sleep_area_after_stats),
		cmocka_unit_test(test_sleep_area_versions),
		cmocka_unit_test(test_stat_names),
		cmocka_unit_test(test_beat_seen_by_another_thread),
	};

	return cmocka_run_group_tests_name("gntshare_ring_ctl", tests, NULL,
					   NULL);
}

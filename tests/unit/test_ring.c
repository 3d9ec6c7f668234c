/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of gntshare rings (ring.h, ring.c): bursts, wrap-around,
 * contents, 2-thread stress.  The fixture (ring_fixture.h) formats one
 * region; the core's and the NF's port arrays attach to it.  The checks
 * of format and attach are test_ring_region.c's, a hostile peer's indices
 * test_ring_hostile.c's.
 */
#include <pthread.h>
#include <sched.h>

#include "ring_fixture.h"

SETUP(16) SETUP(64) SETUP(1024)

/* ---- burst semantics -------------------------------------------------- */

TEST(test_dequeue_empty_returns_0)
{
	struct gnts_desc d[32];

	assert_int_equal(gnts_ring_dequeue_burst(&F.nf[RX], d, 1), 0);
	assert_int_equal(gnts_ring_dequeue_burst(&F.nf[RX], d, 32), 0);
	assert_int_equal(gnts_ring_dequeue_burst(&F.core[TX], d, 32), 0);
	assert_int_equal(gnts_ring_count(&F.nf[RX], 0), 0);
	assert_int_equal(F.nf[RX].broken, 0);
	assert_int_equal(F.nf[RX].idx, 0);
}

TEST(test_enqueue_full_returns_0)
{
	struct gnts_desc d[16], one = mkdesc(99), out;

	fill(d, 0, 16);
	assert_int_equal(gnts_ring_enqueue_burst(&F.core[RX], d, 16), 16);
	assert_int_equal(gnts_ring_enqueue_burst(&F.core[RX], &one, 1), 0);
	assert_int_equal(gnts_ring_enqueue_burst(&F.core[RX], d, 16), 0);
	assert_int_equal(gnts_ring_count(&F.core[RX], 1), 16);
	assert_int_equal(gnts_ring_count(&F.nf[RX], 0), 16);
	assert_int_equal(F.core[RX].broken, 0);
	/* One slot freed: exactly one more fits. */
	assert_int_equal(gnts_ring_dequeue_burst(&F.nf[RX], &out, 1), 1);
	check_seq(&out, 0, 1);
	assert_int_equal(gnts_ring_enqueue_burst(&F.core[RX], d, 16), 1);
	assert_int_equal(atomic_load(&F.core[RX].r->prod), 17);
}

TEST(test_enqueue_burst_partial)
{
	struct gnts_desc d[16], out[16];

	fill(d, 0, 12);
	assert_int_equal(gnts_ring_enqueue_burst(&F.core[RX], d, 12), 12);
	fill(d, 12, 10);
	assert_int_equal(gnts_ring_enqueue_burst(&F.core[RX], d, 10), 4);
	assert_int_equal(gnts_ring_dequeue_burst(&F.nf[RX], out, 16), 16);
	check_seq(out, 0, 16);
}

TEST(test_dequeue_burst_partial)
{
	struct gnts_desc d[3], out[10];

	fill(d, 40, 3);
	assert_int_equal(gnts_ring_enqueue_burst(&F.nf[TX], d, 3), 3);
	memset(out, 0xee, sizeof(out));
	assert_int_equal(gnts_ring_dequeue_burst(&F.core[TX], out, 10), 3);
	check_seq(out, 40, 3);
	/* Nothing written past what was dequeued. */
	assert_int_equal(((unsigned char *)&out[3])[0], 0xee);
	assert_int_equal(gnts_ring_dequeue_burst(&F.core[TX], out, 10), 0);
}

TEST(test_rings_are_independent)
{
	struct gnts_desc d[4], out[4];

	fill(d, 7, 4);
	assert_int_equal(gnts_ring_enqueue_burst(&F.core[RX], d, 4), 4);
	assert_int_equal(gnts_ring_dequeue_burst(&F.core[TX], out, 4), 0);
	assert_int_equal(gnts_ring_dequeue_burst(&F.nf[RX], out, 4), 4);
	check_seq(out, 7, 4);
}

/* ---- wrap-around ------------------------------------------------------ */

/* Move F's ring @p ring to counter value @p v on both sides, consistently. */
static void
set_indices(int ring, uint32_t v)
{
	F.core[ring].idx = F.core[ring].cached_peer = v;
	F.nf[ring].idx = F.nf[ring].cached_peer = v;
	atomic_store(&F.core[ring].r->prod, v);
	atomic_store(&F.core[ring].r->cons, v);
}

TEST(test_wrap_slot_index)
{
	struct gnts_desc d[16], out[16];
	uint32_t in = 0, done = 0;

	/* Both indices to slot 13, then a burst of 10 spans 13..15,0..6. */
	fill(d, 0, 13);
	assert_int_equal(gnts_ring_enqueue_burst(&F.core[RX], d, 13), 13);
	assert_int_equal(gnts_ring_dequeue_burst(&F.nf[RX], out, 13), 13);
	check_seq(out, 0, 13);
	fill(d, 13, 10);
	assert_int_equal(gnts_ring_enqueue_burst(&F.core[RX], d, 10), 10);
	struct gnts_desc e = mkdesc(13 + 3);
	assert_memory_equal(&F.core[RX].r->desc[0], &e, sizeof(e));
	assert_int_equal(gnts_ring_dequeue_burst(&F.nf[RX], out, 16), 10);
	check_seq(out, 13, 10);
	in = done = 23;
	/* Uneven bursts, consumer lagging: every slot boundary gets crossed
	 * many times, and the producer sees partial room. */
	for (unsigned it = 0; it < 300; it++) {
		unsigned n = 1 + it * 7 % 11, room = 16 - (in - done);

		fill(d, in, n);
		unsigned k = gnts_ring_enqueue_burst(&F.core[RX], d, n);
		assert_int_equal(k, n < room ? n : room);
		in += k;
		unsigned m = gnts_ring_dequeue_burst(&F.nf[RX], out, 1 + it % 9);
		assert_int_equal(m, (1 + it % 9) < in - done ? 1 + it % 9 : in - done);
		check_seq(out, done, m);
		done += m;
	}
	assert_true(in > 16 * 50);
	unsigned m = gnts_ring_dequeue_burst(&F.nf[RX], out, 16);
	check_seq(out, done, m);
	assert_int_equal(done + m, in);
	assert_int_equal(F.nf[RX].broken | F.core[RX].broken, 0);
}

TEST(test_wrap_counter_uint32)
{
	const uint32_t start = UINT32_MAX - 5;	/* slot 58 of 64 */
	struct gnts_desc d[64], out[64];
	uint32_t in, done;

	set_indices(RX, start);
	fill(d, 0, 10);
	assert_int_equal(gnts_ring_enqueue_burst(&F.core[RX], d, 10), 10);
	assert_int_equal(atomic_load(&F.core[RX].r->prod), 4);	/* wrapped */
	assert_int_equal(gnts_ring_count(&F.nf[RX], 0), 10);
	assert_int_equal(gnts_ring_count(&F.core[RX], 1), 10);
	assert_int_equal(gnts_ring_dequeue_burst(&F.nf[RX], out, 4), 4);
	assert_int_equal(gnts_ring_dequeue_burst(&F.nf[RX], out + 4, 64), 6);
	check_seq(out, 0, 10);
	assert_int_equal(atomic_load(&F.nf[RX].r->cons), 4);
	/* Fill the TX ring completely across the wrap, drain in odd pieces. */
	set_indices(TX, UINT32_MAX - 20);
	in = done = 10;
	for (int round = 0; round < 5; round++) {
		fill(d, in, 64);
		assert_int_equal(gnts_ring_enqueue_burst(&F.nf[TX], d, 64), 64);
		assert_int_equal(gnts_ring_enqueue_burst(&F.nf[TX], d, 1), 0);
		in += 64;
		while (done < in) {
			unsigned n = gnts_ring_dequeue_burst(&F.core[TX], out, 13);

			assert_true(n > 0);
			check_seq(out, done, n);
			done += n;
		}
	}
	assert_int_equal(F.nf[TX].idx, (uint32_t)(UINT32_MAX - 20 + 5 * 64));
	assert_int_equal(F.core[TX].idx, F.nf[TX].idx);
	assert_int_equal(F.nf[TX].broken | F.core[TX].broken, 0);
	assert_int_equal(F.nf[RX].broken | F.core[RX].broken, 0);
}

/* ---- descriptor contents ---------------------------------------------- */

TEST(test_descriptor_contents_preserved)
{
	static const struct gnts_desc in[3] = {
		{ 0xdeadbeefu, 0xfedc, 0xba98, 0x7f, 0x80, 0xa55a, 0x01234567u },
		{ UINT32_MAX, UINT16_MAX, UINT16_MAX, UINT8_MAX, UINT8_MAX,
		  UINT16_MAX, UINT32_MAX },
		{ 1, 2, 3, 4, 5, 6, 7 },
	};
	struct gnts_desc out[3];

	for (int ring = 0; ring < GNTS_RING_COUNT; ring++) {
		struct gnts_ring_port *prod = ring == RX ? &F.core[RX] : &F.nf[TX];
		struct gnts_ring_port *cons = ring == RX ? &F.nf[RX] : &F.core[TX];

		/* Start at slot 14 so the copies split across the end. */
		set_indices(ring, 14);
		assert_int_equal(gnts_ring_enqueue_burst(prod, in, 3), 3);
		assert_memory_equal(&prod->r->desc[14], &in[0], 16);
		assert_memory_equal(&prod->r->desc[0], &in[2], 16);
		memset(out, 0, sizeof(out));
		assert_int_equal(gnts_ring_dequeue_burst(cons, out, 3), 3);
		assert_memory_equal(out, in, sizeof(in));
	}
}

/* ---- two-thread stress ------------------------------------------------ */

#ifndef STRESS_N		/* TSAN_STRESS_N may set another count */
#define STRESS_N 10000000u
#endif

static atomic_int stress_stop, stress_prod_done;

static uint32_t
xorshift(uint32_t *s)
{
	*s ^= *s << 13, *s ^= *s >> 17, *s ^= *s << 5;
	return *s;
}

static void *
stress_producer(void *arg)
{
	struct gnts_ring_port *p = arg;
	struct gnts_desc d[32];
	uint32_t rnd = 0x12345678u, seq = 0;

	while (seq < STRESS_N && !p->broken && !atomic_load(&stress_stop)) {
		unsigned n = 1 + xorshift(&rnd) % 32, done = 0;

		if (n > STRESS_N - seq)
			n = STRESS_N - seq;
		fill(d, seq, n);
		/* The rest of a partial burst goes again with the same seqs. */
		while (done < n && !p->broken && !atomic_load(&stress_stop)) {
			unsigned k = gnts_ring_enqueue_burst(p, d + done, n - done);

			if (k == 0)
				sched_yield();
			done += k;
		}
		seq += done;
	}
	atomic_store(&stress_prod_done, 1);
	return NULL;
}

TEST(test_stress_two_threads_order)
{
	struct gnts_desc d[32];
	uint32_t rnd = 0x9e3779b9u, expect = 0, bad_at = UINT32_MAX;
	pthread_t th;

	assert_int_equal(F.size, 1024);
	assert_int_equal(pthread_create(&th, NULL, stress_producer, &F.core[RX]), 0);
	while (expect < STRESS_N && bad_at == UINT32_MAX && !F.nf[RX].broken) {
		int fin = atomic_load(&stress_prod_done);
		unsigned n = gnts_ring_dequeue_burst(&F.nf[RX], d, 1 + xorshift(&rnd) % 32);

		if (n == 0 && fin)
			break;		/* producer gave up: report below */
		if (n == 0)
			sched_yield();
		for (unsigned i = 0; i < n && bad_at == UINT32_MAX; i++) {
			struct gnts_desc e = mkdesc(expect + i);

			if (memcmp(&d[i], &e, sizeof(e)) != 0)
				bad_at = expect + i;
		}
		expect += n;
	}
	atomic_store(&stress_stop, 1);	/* the producer stops if we did */
	pthread_join(th, NULL);
	if (bad_at != UINT32_MAX)
		print_error("first wrong descriptor: seq %u\n", bad_at);
	assert_int_equal(bad_at, UINT32_MAX);
	assert_int_equal(F.nf[RX].broken, 0);
	assert_int_equal(F.core[RX].broken, 0);
	assert_int_equal(expect, STRESS_N);
	assert_int_equal(atomic_load(&F.core[RX].r->prod), STRESS_N);
	/* No duplicates or extras after the last one. */
	assert_int_equal(gnts_ring_dequeue_burst(&F.nf[RX], d, 32), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_dequeue_empty_returns_0, 16),
		T(test_enqueue_full_returns_0, 16),
		T(test_enqueue_burst_partial, 16),
		T(test_dequeue_burst_partial, 16),
		T(test_rings_are_independent, 16),
		T(test_wrap_slot_index, 16),
		T(test_wrap_counter_uint32, 64),
		T(test_descriptor_contents_preserved, 16),
		T(test_stress_two_threads_order, 1024),
	};

	return cmocka_run_group_tests_name("gntshare_ring", tests, NULL, NULL);
}

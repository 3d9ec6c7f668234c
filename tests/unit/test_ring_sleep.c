/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of sleeping on a ring (ring.h, "Sleeping on a ring"; the
 * doorbell area of version 4): the calls one at a time, and two threads
 * over a real eventfd, the consumer sleeping whenever its
 * ring is empty: 10^5 sleeps by default, 10^7 with XNV_STRESS=1 (also in
 * the TSan build); a lost wake-up fails after 5 s x XNV_TIME_SCALE
 * instead of hanging.  The model of every interleaving of the two sides:
 * test_ring_model.c.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "ring_fixture.h"

SETUP(16) SETUP(1024)

/* The fixture's region with the area's kicks words set as a side that
 * kicks sets them: the core on its line (it produces RX), the NF on its
 * (it produces TX). */
static void
both_kick(void)
{
	gnts_ring_kicks_set(&F.core[RX]);
	gnts_ring_kicks_set(&F.nf[TX]);
}

/* ---- the calls, one step at a time ------------------------------------ */

/* Nobody sleeps before the producer said it kicks. */
TEST(test_no_sleep_before_kicks)
{
	assert_false(gnts_ring_sleep_ok(&F.nf[RX]));
	assert_int_equal(gnts_ring_sleep_prepare(&F.nf[RX]), 0);
	assert_int_equal(atomic_load(F.nf[RX].sleep), 0);
	gnts_ring_kicks_set(&F.core[RX]);	/* the core: covers FREE too */
	assert_true(gnts_ring_sleep_ok(&F.nf[RX]));
	assert_true(gnts_ring_sleep_ok(&F.nf[GNTS_RING_FREE]));
	assert_false(gnts_ring_sleep_ok(&F.core[TX]));	/* the NF did not */
	gnts_ring_kicks_set(&F.nf[TX]);
	assert_true(gnts_ring_sleep_ok(&F.core[TX]));
}

/* Empty ring: the word says asleep at the consumer's index; the first
 * publish kicks, the next ones do not (one kick per sleep); awake again,
 * nothing kicks. */
TEST(test_one_kick_per_sleep)
{
	struct gnts_desc d[4];

	both_kick();
	fill(d, 0, 4);
	assert_int_equal(gnts_ring_sleep_prepare(&F.nf[RX]), 1);
	assert_int_equal(atomic_load(F.nf[RX].sleep), GNTS_RING_ASLEEP | 0);
	assert_int_equal(gnts_ring_need_kick(&F.core[RX]), 0);	/* nothing new */
	assert_int_equal(gnts_ring_enqueue_burst(&F.core[RX], d, 2), 2);
	assert_int_equal(gnts_ring_need_kick(&F.core[RX]), 1);
	assert_int_equal(gnts_ring_enqueue_burst(&F.core[RX], d + 2, 1), 1);
	assert_int_equal(gnts_ring_need_kick(&F.core[RX]), 0);	/* kicked once */
	gnts_ring_sleep_cancel(&F.nf[RX]);
	assert_int_equal(atomic_load(F.nf[RX].sleep), 0);
	assert_int_equal(gnts_ring_dequeue_burst(&F.nf[RX], d, 4), 3);
	assert_int_equal(gnts_ring_enqueue_burst(&F.core[RX], d, 1), 1);
	assert_int_equal(gnts_ring_need_kick(&F.core[RX]), 0);	/* awake */
	/* Asleep again, having seen 3 while 4 is there: prepare says no. */
	assert_int_equal(gnts_ring_sleep_prepare(&F.nf[RX]), 0);
	assert_int_equal(atomic_load(F.nf[RX].sleep), 0);
	assert_int_equal(gnts_ring_dequeue_burst(&F.nf[RX], d, 4), 1);
	assert_int_equal(gnts_ring_sleep_prepare(&F.nf[RX]), 1);
	assert_int_equal(atomic_load(F.nf[RX].sleep), GNTS_RING_ASLEEP | 4);
	assert_int_equal(gnts_ring_enqueue_burst(&F.core[RX], d, 1), 1);
	assert_int_equal(gnts_ring_need_kick(&F.core[RX]), 1);
}

/* Several bursts before one gnts_ring_need_kick: the range covers them. */
TEST(test_kick_covers_bursts)
{
	struct gnts_desc d[8];

	both_kick();
	fill(d, 0, 8);
	assert_int_equal(gnts_ring_enqueue_burst(&F.nf[TX], d, 3), 3);
	assert_int_equal(gnts_ring_need_kick(&F.nf[TX]), 0);	/* awake */
	assert_int_equal(gnts_ring_dequeue_burst(&F.core[TX], d, 8), 3);
	assert_int_equal(gnts_ring_sleep_prepare(&F.core[TX]), 1);
	for (int i = 0; i < 3; i++)
		assert_int_equal(gnts_ring_enqueue_burst(&F.nf[TX], d, 2), 2);
	assert_int_equal(gnts_ring_need_kick(&F.nf[TX]), 1);
	assert_int_equal(gnts_ring_need_kick(&F.nf[TX]), 0);
}

/* The decision near the 32-bit wrap, at the ends of the range. */
TEST(test_kick_due_edges)
{
	const uint32_t w0 = UINT32_MAX - 1;

	assert_true(gnts_ring_kick_due(GNTS_RING_ASLEEP | w0, w0, w0 + 3));
	assert_true(gnts_ring_kick_due(GNTS_RING_ASLEEP | (w0 + 2), w0, w0 + 3));
	assert_false(gnts_ring_kick_due(GNTS_RING_ASLEEP | (w0 + 3), w0, w0 + 3));
	assert_false(gnts_ring_kick_due(GNTS_RING_ASLEEP | (w0 - 1), w0, w0 + 3));
	assert_false(gnts_ring_kick_due(w0, w0, w0 + 3));	/* not asleep */
	assert_false(gnts_ring_kick_due(GNTS_RING_ASLEEP | w0, w0, w0));
	/* Other high bits are nobody's business: still asleep at X. */
	assert_true(gnts_ring_kick_due(~0ull, UINT32_MAX, 0));
}

/* The consumer's index near the wrap: asleep at UINT32_MAX - 1, the
 * producer's publish across 0 kicks. */
TEST(test_sleep_across_wrap)
{
	struct gnts_desc d[4];

	both_kick();
	fill(d, 0, 4);
	F.core[RX].idx = F.core[RX].cached_peer = UINT32_MAX - 1;
	F.core[RX].kick_idx = UINT32_MAX - 1;
	F.nf[RX].idx = F.nf[RX].cached_peer = UINT32_MAX - 1;
	atomic_store(&F.core[RX].r->prod, UINT32_MAX - 1);
	atomic_store(&F.core[RX].r->cons, UINT32_MAX - 1);
	assert_int_equal(gnts_ring_sleep_prepare(&F.nf[RX]), 1);
	assert_int_equal(gnts_ring_enqueue_burst(&F.core[RX], d, 4), 4);
	assert_int_equal(F.core[RX].idx, 2);
	assert_int_equal(gnts_ring_need_kick(&F.core[RX]), 1);
	assert_int_equal(gnts_ring_need_kick(&F.core[RX]), 0);
}

/* A hostile consumer's word: anything decides kick or not, and nothing
 * else of the producer changes. */
TEST(test_hostile_sleep_word)
{
	static const uint64_t words[] = {
		0, 1, UINT32_MAX, GNTS_RING_ASLEEP, GNTS_RING_ASLEEP | 12345,
		~0ull, 1ull << 63, GNTS_RING_ASLEEP | 0x80000000u,
	};
	struct gnts_desc d = mkdesc(7);

	both_kick();
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		struct gnts_ring_port before;
		int k;

		assert_int_equal(gnts_ring_enqueue_burst(&F.core[RX], &d, 1), 1);
		before = F.core[RX];
		atomic_store(F.core[RX].sleep, words[i]);
		k = gnts_ring_need_kick(&F.core[RX]);
		assert_int_equal(k, gnts_ring_kick_due(words[i], before.kick_idx,
						       before.idx));
		assert_int_equal(F.core[RX].idx, before.idx);
		assert_int_equal(F.core[RX].cached_peer, before.cached_peer);
		assert_int_equal(F.core[RX].broken, 0);
		assert_int_equal(F.core[RX].kick_idx, before.idx);
		assert_int_equal(gnts_ring_dequeue_burst(&F.nf[RX], &d, 1), 1);
	}
}

/* A hostile producer's index seen by the re-check: broken, word clear. */
TEST(test_prepare_broken_prod)
{
	both_kick();
	atomic_store(&F.core[RX].r->prod, F.size + 1);
	assert_int_equal(gnts_ring_sleep_prepare(&F.nf[RX]), -1);
	assert_int_equal(F.nf[RX].broken, 1);
	assert_int_equal(atomic_load(F.nf[RX].sleep), 0);
	assert_int_equal(gnts_ring_sleep_prepare(&F.nf[RX]), -1);
}

/* ---- two threads, a real eventfd ------------------------------------- */

#define SLEEPS_DEFAULT 100000L	/* about 1 s, 2 s under TSan */
#define SLEEPS_STRESS  10000000L	/* XNV_STRESS=1 */
#define LOST_AFTER_POLLS 50	/* asleep this many 100 ms polls (5 s, x
				 * XNV_TIME_SCALE) on a non-empty ring: a
				 * lost wake-up */

static struct {
	int efd;
	atomic_int stop, write_failed;
	atomic_uint_fast64_t sent, kicks;
} ST;

/* XNV_TIME_SCALE (tests/README.md): 1 to 100, default 1. */
static double
time_scale(void)
{
	const char *v = getenv("XNV_TIME_SCALE");
	char *end;
	double s;

	if (v == NULL || *v == '\0')
		return 1;
	s = strtod(v, &end);
	if (*end != '\0' || !(s >= 1 && s <= 100))
		fail_msg("XNV_TIME_SCALE=%s: want a number from 1 to 100", v);
	return s;
}

/* Producer: one descriptor at a time, kick when told; then mostly wait
 * until it was taken (so the consumer finds its ring empty and sleeps
 * again), sometimes for a few loads only, sometimes not at all (so
 * publishes land inside the consumer's C2..C4 window, and some bursts
 * find it awake). */
static void *
sleep_producer(void *arg)
{
	struct gnts_ring_port *p = arg;
	uint32_t seq = 0, rnd = 12345;

	while (!atomic_load(&ST.stop)) {
		struct gnts_desc d = mkdesc(seq);
		unsigned spins;

		if (gnts_ring_enqueue_burst(p, &d, 1) == 0) {
			sched_yield();
			continue;
		}
		seq++;
		atomic_store(&ST.sent, seq);
		if (gnts_ring_need_kick(p)) {
			uint64_t one = 1;

			atomic_fetch_add(&ST.kicks, 1);
			if (write(ST.efd, &one, sizeof(one)) != sizeof(one))
				atomic_store(&ST.write_failed, 1);
		}
		rnd = rnd * 1103515245u + 12345u;
		spins = (rnd >> 16) & 7u;
		if (spins == 0)
			continue;		/* publish again at once */
		for (unsigned i = 0; i < spins * 16; i++)	/* a short wait */
			(void)atomic_load(&p->r->cons);
		if (spins < 3)
			continue;
		while (atomic_load_explicit(&p->r->cons, memory_order_acquire) !=
		       p->idx && !atomic_load(&ST.stop))
			sched_yield();
	}
	return NULL;
}

/* Asleep: only the doorbell wakes us.  Data there for @p lost_after
 * polls of 100 ms with no kick is a lost wake-up.  @return NULL once
 * woken (the kick read, the word cleared), else what went wrong. */
static const char *
sleep_on_bell(struct gnts_ring_port *c, long lost_after, long *blocked)
{
	struct pollfd pfd = { .fd = ST.efd, .events = POLLIN };
	long full_polls = 0;
	uint64_t v;

	if (poll(&pfd, 1, 0) == 0)
		(*blocked)++;
	while (poll(&pfd, 1, 100) == 0) {
		if (atomic_load(&c->r->prod) == c->idx) {
			full_polls = 0;
			continue;
		}
		if (++full_polls >= lost_after)
			return "lost wake-up: asleep on a non-empty ring, "
			       "no kick";
	}
	assert_true(read(ST.efd, &v, sizeof(v)) == sizeof(v));
	gnts_ring_sleep_cancel(c);
	return NULL;
}

TEST(test_stress_sleep_wake)
{
	const char *stress = getenv("XNV_STRESS");
	long want = stress && strcmp(stress, "1") == 0 ? SLEEPS_STRESS :
		    SLEEPS_DEFAULT;
	long lost_after = (long)(LOST_AFTER_POLLS * time_scale());
	struct gnts_ring_port *c = &F.nf[RX];
	long slept = 0, blocked = 0, cancelled = 0;
	uint32_t expect = 0;
	struct gnts_desc d[32];
	const char *lost = NULL;
	pthread_t th;

	both_kick();
	ST.efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	assert_true(ST.efd >= 0);
	atomic_store(&ST.stop, 0);
	atomic_store(&ST.write_failed, 0);
	atomic_store(&ST.sent, 0);
	atomic_store(&ST.kicks, 0);
	assert_int_equal(pthread_create(&th, NULL, sleep_producer, &F.core[RX]),
			 0);
	for (;;) {
		unsigned n = gnts_ring_dequeue_burst(c, d, 32);
		int r;

		if (n > 0) {
			for (unsigned i = 0; i < n; i++) {
				struct gnts_desc e = mkdesc(expect + i);

				if (memcmp(&d[i], &e, sizeof(e)) != 0)
					lost = "descriptor out of order";
			}
			expect += n;
			if (lost != NULL)
				break;
			continue;
		}
		if (slept >= want && atomic_load(&ST.stop))
			break;		/* stopped, and everything taken */
		if (slept >= want) {
			atomic_store(&ST.stop, 1);
			pthread_join(th, NULL);
			continue;	/* take what is left */
		}
		r = gnts_ring_sleep_prepare(c);
		if (r < 0) {
			lost = "producer index impossible";
			break;
		}
		if (r == 0) {
			cancelled++;
			continue;
		}
		slept++;
		lost = sleep_on_bell(c, lost_after, &blocked);
		if (lost != NULL)
			break;
	}
	if (!atomic_load(&ST.stop)) {
		atomic_store(&ST.stop, 1);
		pthread_join(th, NULL);
	}
	close(ST.efd);
	printf("# %ld sleeps (%ld blocked in poll), %ld cancelled, %llu kicks, "
	       "%u descriptors\n", slept, blocked, cancelled,
	       (unsigned long long)atomic_load(&ST.kicks), expect);
	if (lost != NULL)
		fail_msg("%s (after %ld sleeps)", lost, slept);
	assert_int_equal(atomic_load(&ST.write_failed), 0);
	assert_int_equal(expect, (uint32_t)atomic_load(&ST.sent));
	assert_true(slept >= want);
	/* Suppression: at most one kick per word set (a sleep, or one the
	 * re-check cancelled: the producer may have seen its word). */
	assert_true((long)atomic_load(&ST.kicks) <= slept + cancelled);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_no_sleep_before_kicks, 16),
		T(test_one_kick_per_sleep, 16),
		T(test_kick_covers_bursts, 16),
		cmocka_unit_test(test_kick_due_edges),
		T(test_sleep_across_wrap, 16),
		T(test_hostile_sleep_word, 16),
		T(test_prepare_broken_prod, 16),
		T(test_stress_sleep_wake, 1024),
	};

	return cmocka_run_group_tests_name("gntshare_ring_sleep", tests, NULL,
					   NULL);
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The handshakes between xnv-core's main lcore and its other workers
 * (dom0-core/worker_sync.h), the very code the core runs, under threads
 * (and built with ThreadSanitizer too: tests/unit/build.mk).
 *
 * - Barrier: two worker threads read a two-word "config" every pass
 *   while the main thread rewrites it 10^4 times, each time inside the
 *   barrier and each time after both made passes; a worker never sees the
 *   two words differ (and TSan sees no race on them: they are plain
 *   memory).
 * - Sleep and kick: a producer publishes items and kicks when it should;
 *   the consumer sleeps on an eventfd whenever it sees none.  A lost
 *   wake-up is a sleep that ends by timeout while an item is published
 *   and its producer has already looked at the flag (so no kick is on its
 *   way): never, over 10^5 items.
 */
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "worker_sync.h"

#define ROUNDS  100000u	/* items of the kick test */
#define CHANGES 10000u		/* barriers of the barrier test */
#define WORKERS 2

/* Wait for another thread: off the CPU, which it may need (three threads
 * on two CPUs; sched_yield() hardly gives it up). */
static void
relax(void)
{
	usleep(1);
}

/* ---- barrier ----------------------------------------------------------- */

static struct {
	uint64_t gen;
	uint64_t ack[WORKERS];
	uint32_t stop;
	uint64_t a, b;		/* the "config": plain memory */
	uint64_t passes[WORKERS], torn[WORKERS];
} B;

static void *
barrier_worker(void *arg)
{
	unsigned w = (unsigned)(uintptr_t)arg;

	while (!__atomic_load_n(&B.stop, __ATOMIC_RELAXED)) {
		uint64_t g = xnv_sync_pass(&B.gen);

		if (g & 1) {
			xnv_sync_ack(&B.ack[w], g);
			while (xnv_sync_pass(&B.gen) == g)
				relax();
			continue;
		}
		/* The pass: read what worker 0 changes inside the barrier,
		 * a few times (a change in between would show). */
		for (int r = 0; r < 16; r++)
			B.torn[w] += B.a != B.b;
		__atomic_fetch_add(&B.passes[w], 1, __ATOMIC_RELAXED);
		relax();	/* a test worker need not hold its CPU */
	}
	return NULL;
}

static void
test_barrier_never_shows_half_a_change(void **state)
{
	pthread_t t[WORKERS];
	unsigned w, k;

	(void)state;
	for (w = 0; w < WORKERS; w++)
		assert_int_equal(pthread_create(&t[w], NULL, barrier_worker,
						(void *)(uintptr_t)w), 0);
	for (k = 1; k <= CHANGES; k++) {
		uint64_t g = xnv_sync_raise(&B.gen);

		for (w = 0; w < WORKERS; w++)
			while (!xnv_sync_acked(&B.ack[w], g))
				relax();
		B.a = k;
		B.b = k;
		xnv_sync_lower(&B.gen);
		/* Each worker makes a pass before the next change, so the
		 * passes and the changes interleave every round. */
		for (w = 0; w < WORKERS; w++) {
			uint64_t p = __atomic_load_n(&B.passes[w],
						     __ATOMIC_RELAXED);

			while (__atomic_load_n(&B.passes[w],
					       __ATOMIC_RELAXED) < p + 2)
				relax();
		}
	}
	__atomic_store_n(&B.stop, 1, __ATOMIC_RELAXED);
	for (w = 0; w < WORKERS; w++) {
		assert_int_equal(pthread_join(t[w], NULL), 0);
		assert_int_equal(B.torn[w], 0);
		assert_true(B.passes[w] >= 2 * (uint64_t)CHANGES);
	}
	assert_int_equal(B.a, CHANGES);
	assert_int_equal(B.gen, 2 * (uint64_t)CHANGES);
}

/* ---- sleep and kick ---------------------------------------------------- */

static struct {
	uint32_t asleep;
	uint64_t published;	/* items put on the "ring" */
	uint64_t looked;	/* items whose producer has read the flag */
	uint64_t kicks;
	int efd;
} K;

static void *
producer(void *arg)
{
	const uint64_t one = 1;
	uint64_t i;

	(void)arg;
	for (i = 1; i <= ROUNDS; i++) {
		__atomic_store_n(&K.published, i, __ATOMIC_RELEASE);
		if (xnv_sync_kick_due(&K.asleep)) {
			K.kicks++;
			assert_int_equal(write(K.efd, &one, sizeof(one)),
					 sizeof(one));
		}
		__atomic_store_n(&K.looked, i, __ATOMIC_RELEASE);
		if (i % 16 == 0)
			sched_yield();	/* let the consumer run dry */
	}
	return NULL;
}

static void
test_no_lost_wake_up(void **state)
{
	struct pollfd p;
	pthread_t t;
	uint64_t done = 0, sleeps = 0, v;

	(void)state;
	K.efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	assert_true(K.efd >= 0);
	p = (struct pollfd){ .fd = K.efd, .events = POLLIN };
	assert_int_equal(pthread_create(&t, NULL, producer, NULL), 0);
	while (done < ROUNDS) {
		uint64_t have = __atomic_load_n(&K.published,
						__ATOMIC_ACQUIRE);

		if (have > done) {
			done = have;
			continue;
		}
		xnv_sync_sleep_say(&K.asleep);
		if (__atomic_load_n(&K.published, __ATOMIC_ACQUIRE) > done) {
			xnv_sync_awake(&K.asleep);
			continue;
		}
		sleeps++;
		if (poll(&p, 1, 50) == 0) {
			/* Timed out: lost if an item is out whose producer
			 * has looked at the flag (no kick on its way). */
			uint64_t looked = __atomic_load_n(&K.looked,
							  __ATOMIC_ACQUIRE);

			assert_false(looked > done);
		}
		xnv_sync_awake(&K.asleep);
		while (read(K.efd, &v, sizeof(v)) == (ssize_t)sizeof(v))
			;
	}
	assert_int_equal(pthread_join(t, NULL), 0);
	close(K.efd);
	/* It did sleep, and was woken by kicks, not only by timeouts. */
	assert_true(sleeps > 0);
	assert_true(K.kicks > 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_barrier_never_shows_half_a_change),
		cmocka_unit_test(test_no_lost_wake_up),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

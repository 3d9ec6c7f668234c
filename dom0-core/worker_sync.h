/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The two handshakes between the lcores of xnv-core (worker.h): the
 * main lcore's barrier, and a sleeping worker's kick; without DPDK, so
 * that tests/unit/test_worker_sync.c runs the very same code under
 * threads (and TSan).
 *
 * Barrier (control commands).  A generation word: even, the workers run;
 * odd, raised.
 *
 *	worker 0				worker w, top of each pass
 *	g = xnv_sync_raise(&gen)		g = xnv_sync_pass(&gen)
 *	until xnv_sync_acked(&ack_w, g)	if (g & 1) {
 *		pause				xnv_sync_ack(&ack_w, g)
 *	change what workers read		wait while xnv_sync_pass(&gen)
 *	xnv_sync_lower(&gen)				    == g
 *						}
 *
 * The ack is a release (the worker's reads of the passes before are done)
 * that worker 0's acquire sees before it changes anything; the lowering
 * is a release (the change) that the worker's acquire of the next pass
 * sees.  An ack names its generation, so an old ack never passes for a
 * new one.
 *
 * Sleep and kick (packets steered to a sleeping worker).
 *
 *	worker w				worker v
 *	xnv_sync_sleep_say(&asleep)		put packets on its ring
 *	rings all empty? else cancel		if (xnv_sync_kick_due(&asleep))
 *	sleep on the eventfd				write the eventfd
 *	xnv_sync_awake(&asleep)
 *
 * Each side stores, then (full barrier) loads what the other stores: one
 * of the two sees the other's store, so worker w either sees the packets
 * and stays awake or is kicked (no lost wake-up).  The exchange makes one
 * kick per sleep whatever the number of workers.
 */
#ifndef XNV_WORKER_SYNC_H
#define XNV_WORKER_SYNC_H

#include <stdint.h>

#include <gntshare/ring.h>	/* gnts_ring_fence(): the full barrier */

/* Worker 0: raise the barrier.  @return the generation to be acked. */
static inline uint64_t
xnv_sync_raise(uint64_t *gen)
{
	uint64_t g = *gen + 1;	/* only worker 0 writes it */

	__atomic_store_n(gen, g, __ATOMIC_RELAXED);
	return g;
}

/* Worker 0: has the worker of @p ack parked at @p g? */
static inline int
xnv_sync_acked(const uint64_t *ack, uint64_t g)
{
	/* Acquire: pairs with the worker's release in xnv_sync_ack(). */
	return __atomic_load_n(ack, __ATOMIC_ACQUIRE) == g;
}

/* Worker 0: lower the barrier; what it changed is seen from here on. */
static inline void
xnv_sync_lower(uint64_t *gen)
{
	/* Release: pairs with the acquire in xnv_sync_pass(). */
	__atomic_store_n(gen, *gen + 1, __ATOMIC_RELEASE);
}

/* Worker: the generation at the top of a pass (odd: park). */
static inline uint64_t
xnv_sync_pass(const uint64_t *gen)
{
	return __atomic_load_n(gen, __ATOMIC_ACQUIRE);
}

/* Worker: parked at generation @p g; its reads before are done. */
static inline void
xnv_sync_ack(uint64_t *ack, uint64_t g)
{
	__atomic_store_n(ack, g, __ATOMIC_RELEASE);
}

/* Worker 0: about to sleep; the caller looks at the rings next. */
static inline void
xnv_sync_sleep_say(uint32_t *asleep)
{
	__atomic_store_n(asleep, 1, __ATOMIC_RELAXED);
	/* Full barrier: the flag is visible before the rings are read;
	 * pairs with the one in xnv_sync_kick_due(). */
	gnts_ring_fence();
}

/* Worker 0: awake (or not sleeping after all). */
static inline void
xnv_sync_awake(uint32_t *asleep)
{
	__atomic_store_n(asleep, 0, __ATOMIC_RELAXED);
}

/* Worker, having just enqueued: 1 if it is the one to kick worker 0. */
static inline int
xnv_sync_kick_due(uint32_t *asleep)
{
	/* Full barrier: the enqueue is visible before the flag is read;
	 * pairs with the one in xnv_sync_sleep_say(). */
	gnts_ring_fence();
	return __atomic_load_n(asleep, __ATOMIC_RELAXED) &&
	       __atomic_exchange_n(asleep, 0, __ATOMIC_RELAXED);
}

#endif /* XNV_WORKER_SYNC_H */

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * An NF's buffer quota and hoarding, the arithmetic (no DPDK:
 * tests/unit/test_quota.c).  datapath.c applies the quota (delivery,
 * refill), guard.c runs the hoard watch, attach.c checks alloc_bufs.
 *
 * Quota: an NF holds at most its quota of buffers at once (what is in
 * its rx ring, in its hands, in its tx ring not yet read back, in its
 * free ring): [core] max_held, or, when that is 0, 2 x ring_size + its
 * alloc_bufs + GNTS_BURST_MAX: full rx, tx and free rings, and a burst in
 * hand.  An NF that lives by its rings never reaches it, not even with
 * both rings full while the core waits for room downstream (a chain's
 * backpressure): only one that keeps buffers does.  A packet for
 * an NF at its quota is not given to it but dropped and counted
 * (nf_quota), never parked: an NF at its quota stalls neither the port
 * nor other NFs.  The free ring is refilled only up to the quota.
 *
 * Hoarding: an NF at its quota that returns nothing for hoard_timeout_ms
 * is keeping its buffers for good, and guard.c quarantines it.  The clock
 * runs only while nothing the NF returned waits in the core (the core not
 * reading its tx ring is not its fault), and any buffer it returns starts
 * it again: a busy NF that touches its quota now and then is never taken
 * for a hoarder.
 *
 * alloc_bufs (empty buffers kept in an NF's free ring) is at most the
 * ring size (what a free ring holds), and below max_held when that is
 * set: an idle NF whose free ring alone filled its quota would look like
 * a hoarder.
 */
#ifndef XNV_QUOTA_H
#define XNV_QUOTA_H

#include <stddef.h>
#include <stdint.h>

#include <gntshare/proto.h>	/* GNTS_BURST_MAX */

/* The hoard clock of one NF. */
struct xnv_hoard {
	uint64_t since;		/* last seen below its quota, or returning */
	uint64_t returned;	/* buffers it had returned then */
};

/** The quota of an NF that keeps @p alloc buffers in its free ring. */
static inline uint32_t
xnv_quota(uint32_t max_held, uint32_t ring_size, uint32_t alloc)
{
	return max_held != 0 ? max_held :
	       2 * ring_size + alloc + GNTS_BURST_MAX;
}

/** Buffers an NF holding @p held may still get under @p quota. */
static inline uint32_t
xnv_quota_room(uint32_t held, uint32_t quota)
{
	return held < quota ? quota - held : 0;
}

/**
 * Empty buffers to add to a free ring that holds @p have of the @p want
 * its NF asked for: none while it is at least half full, else up to
 * @p want, at most @p burst, and no more than the NF's @p room under its
 * quota.
 */
static inline uint32_t
xnv_refill_count(uint32_t have, uint32_t want, uint32_t burst, uint32_t room)
{
	uint32_t n;

	if ((uint64_t)have * 2 >= want)
		return 0;
	n = want - have;
	if (n > burst)
		n = burst;
	return n < room ? n : room;
}

/**
 * The hoard watch of one NF at @p now: @p stuck is 1 while it holds its
 * quota and nothing it returned waits in the core; @p returned counts the
 * buffers it has handed back so far.  @return for how long it has been
 * stuck without returning any (0: it is not).
 */
static inline uint64_t
xnv_hoard_watch(struct xnv_hoard *h, int stuck, uint64_t returned,
		uint64_t now)
{
	if (!stuck || returned != h->returned) {
		h->since = now;
		h->returned = returned;
		return 0;
	}
	return now - h->since;
}

/**
 * May an NF keep @p alloc empty buffers?  0, or -EINVAL with one line in
 * @p err naming the limit (the ring size, or [core] max_held when set).
 */
int xnv_quota_check_alloc(uint32_t alloc, uint32_t ring_size,
			  uint32_t max_held, char *err, size_t errlen);

#endif /* XNV_QUOTA_H */

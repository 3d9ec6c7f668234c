/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gntshare descriptor rings: single-producer single-consumer rings of
 * 16-byte descriptors in memory shared between xnv-core (Dom0) and one NF
 * (a DomU, or a process in host mode).
 *
 * Threat model.  The peer may be malicious.  Everything in the shared area
 * can change under our feet at any time.  Therefore:
 *   - each side keeps the ring geometry (size, mask, base address) in its own
 *     private `struct gnts_ring_port`, copied and checked once at attach;
 *     nothing in the shared header is trusted after that;
 *   - the peer's index is read exactly once per burst into a local, checked
 *     (it may not move backwards or claim more than the ring size), then used;
 *   - descriptors are copied into private memory before anybody looks at
 *     them (see dom0-core/validate.h for what the core checks next).
 * A check that fails marks the port `broken` (bursts, and the count,
 * check alike); a broken port moves nothing more, and the caller decides
 * what to do (the core detaches the NF, the NF stops).
 *
 * The structures are the wire protocol and live in proto.h; this header
 * holds the ring code.  Layout of one ring region (granted to exactly one
 * domain):
 *
 *   offset 0     +--------------------------------------------------+
 *                | struct gnts_ring_region_hdr (64 B)               |
 *                |  magic "XNVR", version, n_rings, ring_size,      |
 *                |  desc_size, ring_off[] (byte offsets of rings),  |
 *                |  min_version, stats_off, n_stats                 |
 *   offset 64    +--------------------------------------------------+
 *                | struct gnts_ring_ctl (64 B)                      |
 *                |  heartbeat (u32)         NF writes, core reads   |
 *                |  detached  (u32)         core writes, NF reads   |
 *   offset 128   +--------------------------------------------------+
 *   (version 3)  | struct gnts_nf_stat[GNTS_NF_STATS_MAX] (640 B)   |
 *                |  name[32] (NUL-terminated) NF writes, core reads |
 *                |  value (u64)               NF writes, core reads |
 *   offset 768   +--------------------------------------------------+
 *   ring_off[i]  | struct gnts_ring                                 |
 *                |  +0    prod  (u32, own cache line)  PRODUCER writes|
 *                |  +64   cons  (u32, own cache line)  CONSUMER writes|
 *                |  +128  desc[ring_size] (16 B each)  PRODUCER fills |
 *                +--------------------------------------------------+
 *                | ... next ring, 64-byte aligned ...               |
 *
 * Ring GNTS_RING_RX (index 0) carries core -> NF; GNTS_RING_TX (index 1)
 * carries NF -> core; GNTS_RING_FREE (index 2) carries empty buffers
 * core -> NF for NFs that originate packets (they come back through TX).
 * prod and cons are free-running 32-bit counters;
 * slot = counter & (ring_size - 1); the ring is full when
 * prod - cons == ring_size and empty when prod == cons.
 *
 * Memory ordering (C11):
 *   producer: write desc[prod..prod+n) ; store-release prod += n
 *   consumer: load-acquire prod ; read desc[cons..prod) ; store-release cons
 *   producer: load-acquire cons before reusing slots the consumer released.
 * Each side caches the peer's last index (`cached_peer`) and reloads it only
 * when the cached value says there is not enough room / data, so the peer's
 * cache line is touched once per burst at most.
 *
 * Liveness (the control line, version 2).  The NF bumps `heartbeat` from its
 * poll loop, busy or idle; the core reads it about once a millisecond and
 * declares the NF dead when it has not moved for heartbeat_timeout_ms while
 * the NF holds buffers (a stopped or hung guest gives no other sign in Xen
 * mode).  The value means nothing but "it moved": a hostile NF gains
 * nothing by writing it.  The core writes `detached` (GNTS_DETACH_*) once,
 * before it takes the NF's buffers back; the NF polls it so that it learns
 * it was detached without a socket.
 *
 * NF stats (version 3).  The NF names its own counters in the stats area
 * and keeps their values there; the core only reads it, and checks every
 * name and reads every value once, as from any hostile peer (proto.h).  A
 * version 2 region has none (stats_off 0): the NF then keeps its counters
 * to itself.
 *
 * Calls: *_burst return how many were done (0..n); nothing here blocks.
 */
#ifndef GNTSHARE_RING_H
#define GNTSHARE_RING_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "proto.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One ring in shared memory. */
struct gnts_ring {
	_Alignas(GNTS_CACHE_LINE) _Atomic uint32_t prod; /* producer writes */
	_Alignas(GNTS_CACHE_LINE) _Atomic uint32_t cons; /* consumer writes */
	_Alignas(GNTS_CACHE_LINE) struct gnts_desc desc[];
};

_Static_assert(offsetof(struct gnts_ring, cons) == 64, "cons on line 1");
_Static_assert(offsetof(struct gnts_ring, desc) == 128, "descs on line 2");

/* One side's private view of a ring.  Never placed in shared memory. */
struct gnts_ring_port {
	struct gnts_ring *r;	/* shared ring */
	uint32_t size;		/* private copy: ring_size */
	uint32_t mask;		/* private copy: ring_size - 1 */
	uint32_t idx;		/* our own index (prod or cons), private */
	uint32_t cached_peer;	/* last value read of the peer's index */
	uint32_t broken;	/* set when the peer's index is impossible */
};

/** Bytes one ring of @p ring_size descriptors occupies (64-byte aligned). */
static inline size_t
gnts_ring_bytes(uint32_t ring_size)
{
	size_t b = sizeof(struct gnts_ring) +
		   (size_t)ring_size * sizeof(struct gnts_desc);
	return (b + GNTS_CACHE_LINE - 1) & ~(size_t)(GNTS_CACHE_LINE - 1);
}

/** Bytes a region with GNTS_RING_COUNT rings of @p ring_size needs. */
static inline size_t
gnts_ring_region_bytes(uint32_t ring_size)
{
	return sizeof(struct gnts_ring_region_hdr) +
	       sizeof(struct gnts_ring_ctl) + GNTS_RING_STATS_BYTES +
	       GNTS_RING_COUNT * gnts_ring_bytes(ring_size);
}

/** The control line of a region (fixed offset: nothing to check). */
static inline struct gnts_ring_ctl *
gnts_ring_region_ctl(void *region)
{
	return (struct gnts_ring_ctl *)((char *)region + GNTS_RING_CTL_OFF);
}

/**
 * The NF stats area of a region that passed gnts_ring_region_attach, or
 * NULL when it has none (an older writer); @p n gets its slot count
 * (1..GNTS_NF_STATS_MAX).  The header is read once.
 */
struct gnts_nf_stat *gnts_ring_region_stats(void *region, size_t region_size,
					    unsigned *n);

/** NF: say "still alive".  Only the NF writes the counter, so a plain
 *  load + store is enough; relaxed: it orders nothing else. */
static inline void
gnts_ring_beat(struct gnts_ring_ctl *c)
{
	uint32_t v = atomic_load_explicit(&c->heartbeat, memory_order_relaxed);

	atomic_store_explicit(&c->heartbeat, v + 1, memory_order_relaxed);
}

/** Core: the NF's heartbeat counter now (read once; any value is fine). */
static inline uint32_t
gnts_ring_beat_read(struct gnts_ring_ctl *c)
{
	return atomic_load_explicit(&c->heartbeat, memory_order_relaxed);
}

/** Core: tell the NF it is detached and why (GNTS_DETACH_*).  Release:
 *  written before the core tears anything down. */
static inline void
gnts_ring_set_detached(struct gnts_ring_ctl *c, uint32_t code)
{
	atomic_store_explicit(&c->detached, code, memory_order_release);
}

/** NF: 0 while attached, else the GNTS_DETACH_* code the core wrote. */
static inline uint32_t
gnts_ring_detached(struct gnts_ring_ctl *c)
{
	return atomic_load_explicit(&c->detached, memory_order_acquire);
}

/** 1 if @p n is a power of two within [GNTS_RING_MIN, GNTS_RING_MAX]. */
static inline int
gnts_ring_size_ok(uint32_t n)
{
	return n >= GNTS_RING_MIN && n <= GNTS_RING_MAX && (n & (n - 1)) == 0;
}

/*
 * Core side: lay out a zeroed region of at least
 * gnts_ring_region_bytes(ring_size) bytes.  Returns 0 or -EINVAL.
 */
int gnts_ring_region_format(void *region, size_t region_size,
			    uint32_t ring_size);

/*
 * Either side: check a region header (magic, version, sizes, offsets inside
 * @p region_size) and fill @p ports[GNTS_RING_COUNT] from private copies.
 * @p expect_size is the ring size learned out of band (0: take the header's).
 * Returns 0, or -EPROTO (bad magic/version) / -EINVAL (bad geometry).
 */
int gnts_ring_region_attach(void *region, size_t region_size,
			    uint32_t expect_size,
			    struct gnts_ring_port ports[GNTS_RING_COUNT]);

/*
 * The peer's index, read once (acquire) and checked; every reader of it
 * goes through these two.  An index no honest peer can write marks the
 * port `broken` and returns -1 (the cached value is kept); else it is
 * cached in `cached_peer` and 0 is returned.
 */

/** Producer: the consumer's index.  Acquire: its reads of the slots it
 *  released happen before we overwrite them.  A consumer ahead of us or
 *  more than a ring behind is impossible. */
static inline int
gnts_ring_load_cons(struct gnts_ring_port *p)
{
	uint32_t cons = atomic_load_explicit(&p->r->cons,
					     memory_order_acquire);

	if ((uint32_t)(p->idx - cons) > p->size) {
		p->broken = 1;
		return -1;
	}
	p->cached_peer = cons;
	return 0;
}

/** Consumer: the producer's index.  Acquire: its descriptor writes happen
 *  before our reads of them.  A producer behind us or more than a ring
 *  ahead is impossible. */
static inline int
gnts_ring_load_prod(struct gnts_ring_port *p)
{
	uint32_t prod = atomic_load_explicit(&p->r->prod,
					     memory_order_acquire);

	if ((uint32_t)(prod - p->idx) > p->size) {
		p->broken = 1;
		return -1;
	}
	p->cached_peer = prod;
	return 0;
}

/**
 * Producer: enqueue up to @p n descriptors (burst: as many as fit).
 * @return number enqueued, 0..n.
 */
static inline unsigned
gnts_ring_enqueue_burst(struct gnts_ring_port *p, const struct gnts_desc *d,
			unsigned n)
{
	uint32_t prod = p->idx;
	uint32_t free_slots = p->size - (prod - p->cached_peer);

	if (p->broken)
		return 0;
	if (free_slots < n) {
		if (gnts_ring_load_cons(p) < 0)
			return 0;
		free_slots = p->size - (prod - p->cached_peer);
		if (free_slots < n)
			n = free_slots;
	}
	if (n == 0)
		return 0;

	uint32_t slot = prod & p->mask;
	uint32_t first = p->size - slot;

	if (first >= n) {
		memcpy(&p->r->desc[slot], d, n * sizeof(*d));
	} else {
		memcpy(&p->r->desc[slot], d, first * sizeof(*d));
		memcpy(&p->r->desc[0], d + first, (n - first) * sizeof(*d));
	}
	p->idx = prod + n;
	/* Release: the descriptor writes above are visible before the
	 * consumer can observe the new producer index. */
	atomic_store_explicit(&p->r->prod, p->idx, memory_order_release);
	return n;
}

/**
 * Consumer: dequeue up to @p n descriptors into private memory @p d
 * (burst: as many as are there).  @return number dequeued, 0..n.
 */
static inline unsigned
gnts_ring_dequeue_burst(struct gnts_ring_port *p, struct gnts_desc *d,
			unsigned n)
{
	uint32_t cons = p->idx;
	uint32_t avail = p->cached_peer - cons;

	if (p->broken)
		return 0;
	if (avail < n) {
		if (gnts_ring_load_prod(p) < 0)
			return 0;
		avail = p->cached_peer - cons;
		if (avail < n)
			n = avail;
	}
	if (n == 0)
		return 0;

	uint32_t slot = cons & p->mask;
	uint32_t first = p->size - slot;

	if (first >= n) {
		memcpy(d, &p->r->desc[slot], n * sizeof(*d));
	} else {
		memcpy(d, &p->r->desc[slot], first * sizeof(*d));
		memcpy(d + first, &p->r->desc[0], (n - first) * sizeof(*d));
	}
	p->idx = cons + n;
	/* Release: our reads of the slots complete before the producer may
	 * see them free and overwrite them. */
	atomic_store_explicit(&p->r->cons, p->idx, memory_order_release);
	return n;
}

/**
 * Descriptors waiting, as the peer's index says now (refreshed and checked
 * like the bursts do: an impossible one marks the port broken, and the
 * count is then the ring size).
 */
static inline uint32_t
gnts_ring_count(struct gnts_ring_port *p, int is_producer)
{
	if (is_producer)
		return gnts_ring_load_cons(p) < 0 ? p->size :
		       p->idx - p->cached_peer;
	return gnts_ring_load_prod(p) < 0 ? p->size : p->cached_peer - p->idx;
}

#ifdef __cplusplus
}
#endif

#endif /* GNTSHARE_RING_H */

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
 *                |  min_version, stats_off, n_stats, sleep_off      |
 *   offset 64    +--------------------------------------------------+
 *                | struct gnts_ring_ctl (64 B)                      |
 *                |  heartbeat (u32)         NF writes, core reads   |
 *                |  detached  (u32)         core writes, NF reads   |
 *   offset 128   +--------------------------------------------------+
 *   (version 3)  | struct gnts_nf_stat[GNTS_NF_STATS_MAX] (640 B)   |
 *                |  name[32] (NUL-terminated) NF writes, core reads |
 *                |  value (u64)               NF writes, core reads |
 *   offset 768   +--------------------------------------------------+
 *   (version 4)  | struct gnts_ring_sleep_line, the NF's (64 B)     |
 *                |  sleep[RX], sleep[FREE] (u64) NF writes, core reads|
 *                |  kicks (u32)                  NF writes, core reads|
 *   offset 832   +--------------------------------------------------+
 *                | struct gnts_ring_sleep_line, the core's (64 B)   |
 *                |  sleep[TX] (u64)              core writes, NF reads|
 *                |  kicks (u32)                  core writes, NF reads|
 *   offset 896   +--------------------------------------------------+
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
 * Sleeping on a ring (version 4: the doorbell area).  A consumer that
 * finds its ring empty may, instead of polling on, sleep on a doorbell the
 * producer rings ("kicks"): an eventfd in host mode, an event channel in
 * Xen mode; anything that latches, so that a kick sent before the sleeper
 * blocks still wakes it.  The producer kicks only a consumer that said it
 * sleeps and has not been kicked for what was published since it looked
 * (virtio's event index, NAPI): while both sides are busy nobody writes
 * the doorbell area and nobody kicks.  Each consumer says it on its own
 * line of the area, never on its hot `cons` line: the producer reads the
 * flag after every publish, and a line written only at sleep and wake-up
 * stays in both caches while traffic flows.
 *
 *   consumer of ring i (sleeper)          producer of ring i
 *   C1 load-acquire prod == idx: empty    P1 write desc[prod..prod+n)
 *   C2 store sleep[i] = ASLEEP | idx      P2 store-release prod += n
 *   C3 fence seq_cst                      P3 fence seq_cst
 *   C4 load-acquire prod: != idx, go C6   P4 load sleep[i]
 *   C5 wait on the doorbell               P5 kick iff ASLEEP with X in
 *   C6 store sleep[i] = 0; poll again        [kick_idx, prod); then
 *                                            kick_idx = prod (private)
 *
 *   - C3 orders C2 before C4, P3 orders P2 before P4: a store before a
 *     later load of another word, which only a full fence orders
 *     (release and acquire do not: store buffers).  The two fences are
 *     in C11's single total order.  If C3 comes first, P4 reads C2's
 *     word (nothing later: the consumer sleeps) and, as every prod up to
 *     the consumer's X was published before P3 or seen by C4, kick_idx
 *     <= X < prod: P5 kicks.  If P3 comes first, C4 sees P2's prod and
 *     the consumer does not sleep.  No interleaving loses the wake-up
 *     (tests/unit/test_ring_sleep.c enumerates them).
 *   - C4 is the ring's usual acquire (the descriptors are visible before
 *     they are read); P4 needs no more than relaxed after P3.
 *   - C6 is relaxed: a 0 seen late only suppresses a kick nobody needs (the
 *     consumer polls), an ASLEEP seen late gives at most one spurious kick
 *     (its X is then behind kick_idx).
 *   - One kick per sleep: once kicked, X is behind kick_idx and later
 *     publishes kick no more until the consumer sleeps again with a new X.
 *     gnts_ring_need_kick may come after several bursts: [kick_idx, prod)
 *     covers them all.  Nothing published since the last call: no fence.
 * A consumer sleeps on a ring only when the ring's producer wrote
 * GNTS_RING_KICKS on its own line (gnts_ring_kicks_set, once a side kicks);
 * an older peer (version 3 or less) writes neither, so it never sleeps
 * and is never kicked, and an older core's region (sleep_off 0) has no
 * area: its NF polls.  Untrusted, like everything shared: a sleep word is
 * read once and only decides "kick or not", its X is used for nothing
 * else; a peer that never clears its flag and moves X along gets at most
 * one kick per gnts_ring_need_kick (its caller rate-limits the doorbell);
 * a peer that says it kicks and does not only delays its own packets (the
 * core never sleeps without a timeout); a peer that writes our line
 * changes nothing we read (we never read our own line).
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
	uint32_t kick_idx;	/* producer: idx at the last gnts_ring_need_kick */
	_Atomic uint64_t *sleep;	/* this ring's sleep word, on its
					 * consumer's line (NULL: no doorbell
					 * area in the region, version < 4) */
	_Atomic uint32_t *kicks;	/* kicks word of its producer's line */
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
	       GNTS_RING_SLEEP_BYTES +
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
 * Consumer: start fetching the descriptors of the next burst of up to
 * @p n, those already published (between our index and the producer's as
 * last read), while the caller works on this one.  The producer does not
 * write them again before our index moves past them, so the fetch takes
 * no line from under its writes.  A hint: no shared index is read,
 * nothing is copied or trusted (the burst still copies and checks).
 */
static inline void
gnts_ring_prefetch_next(const struct gnts_ring_port *p, unsigned n)
{
	const unsigned per_line = GNTS_CACHE_LINE / sizeof(struct gnts_desc);
	uint32_t have = p->cached_peer - p->idx;

	if (n > have)
		n = have;	/* have > size (broken): n, still in the ring */
	for (unsigned i = 0; i < n; i += per_line)
		__builtin_prefetch(&p->r->desc[(p->idx + i) & p->mask], 0, 3);
}

/**
 * Consumer: descriptors known published and not yet taken, as the
 * producer's index was last read (no shared line is read; that index was
 * checked when read, so this is at most the ring size).
 */
static inline uint32_t
gnts_ring_seen(const struct gnts_ring_port *p)
{
	return p->cached_peer - p->idx;
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

/*
 * Sleeping on a ring: the protocol drawn in the opening comment (steps C1
 * to C6, P1 to P5).  The doorbell itself (eventfd, event channel) is the
 * caller's; these only decide.
 */

/**
 * The full fence of steps C3 and P3.  ThreadSanitizer does not model
 * fences (gcc refuses them under -fsanitize=thread): in that build both
 * sides do a seq_cst read-modify-write of one word instead, which orders
 * them the same way between threads of one process (the RMWs are totally
 * ordered on that word, and the earlier synchronizes with the later), and
 * which TSan follows.  On x86-64 a locked add to the stack, as Linux's
 * smp_mb(): a full barrier for ordinary memory (every locked instruction
 * is; store -> load included), cheaper than mfence, which also orders
 * non-temporal stores nobody here makes.  The producer pays it once per
 * burst that published, so it counts (bench: the doorbell rows).
 */
static inline void
gnts_ring_fence(void)
{
#if defined(__SANITIZE_THREAD__)
	static _Atomic uint32_t tsan_fence;

	atomic_fetch_add_explicit(&tsan_fence, 0, memory_order_seq_cst);
#elif defined(__x86_64__)
	__asm__ volatile("lock; addl $0,-4(%%rsp)" ::: "memory", "cc");
#else
	atomic_thread_fence(memory_order_seq_cst);
#endif
}

/**
 * The producer's decision P5, from a sleep word @p w read after P3 and
 * the producer's private [@p from, @p to): 1 if the consumer said it
 * sleeps having seen a producer index in that range.  Any @p w is fine
 * (a hostile peer's): it decides "kick or not" and nothing else.
 */
static inline int
gnts_ring_kick_due(uint64_t w, uint32_t from, uint32_t to)
{
	return (w & GNTS_RING_ASLEEP) != 0 &&
	       (uint32_t)((uint32_t)w - from) < (uint32_t)(to - from);
}

/** Consumer: 1 if it may sleep on this ring at all: the region has a
 *  doorbell area and the ring's producer said it kicks (read once, any
 *  value; relaxed: it orders nothing). */
static inline int
gnts_ring_sleep_ok(const struct gnts_ring_port *p)
{
	return p->sleep != NULL &&
	       atomic_load_explicit(p->kicks, memory_order_relaxed) ==
	       GNTS_RING_KICKS;
}

/** Consumer: awake again (step C6): clear this ring's sleep word.  Call
 *  it after the doorbell woke us, or before polling on after any other
 *  wait; gnts_ring_sleep_prepare calls it when it does not return 1.
 *  Relaxed: a 0 seen late costs nothing (see the opening comment). */
static inline void
gnts_ring_sleep_cancel(struct gnts_ring_port *p)
{
	if (p->sleep != NULL)
		atomic_store_explicit(p->sleep, 0, memory_order_relaxed);
}

/**
 * Consumer: say "about to sleep, having seen the ring empty at my index"
 * and look again (steps C2 to C4).
 * @return 1: the ring is still empty, the word is set: wait on the
 *   doorbell now, then gnts_ring_sleep_cancel();
 *   0: do not sleep (descriptors came, or gnts_ring_sleep_ok() is 0);
 *   -1: the producer's index is impossible (the port is now broken).
 *   The word is clear again unless 1 is returned.
 */
static inline int
gnts_ring_sleep_prepare(struct gnts_ring_port *p)
{
	if (p->broken)
		return -1;
	if (!gnts_ring_sleep_ok(p))
		return 0;
	/* C2: one 64-bit store, flag and index together (never torn). */
	atomic_store_explicit(p->sleep, GNTS_RING_ASLEEP | p->idx,
			      memory_order_relaxed);
	/* C3: the store above before the load of prod below (store ->
	 * load: only a full fence).  Pairs with P3 in gnts_ring_need_kick:
	 * either the producer sees our word, or we see its prod. */
	gnts_ring_fence();
	/* C4: the ring's usual checked acquire load of prod. */
	if (gnts_ring_load_prod(p) < 0) {
		gnts_ring_sleep_cancel(p);
		return -1;
	}
	if (p->cached_peer != p->idx) {
		gnts_ring_sleep_cancel(p);
		return 0;
	}
	return 1;
}

/**
 * Producer: after publishing (one or more bursts), 1 if the consumer must
 * be kicked now (steps P3 to P5); kick it then.  Cheap when nothing was
 * published since the last call (no fence, no shared read), and costs a
 * fence and the read of a line nobody writes while the consumer is busy.
 */
static inline int
gnts_ring_need_kick(struct gnts_ring_port *p)
{
	uint32_t from = p->kick_idx, to = p->idx;
	uint64_t w;

	if (p->sleep == NULL || from == to)
		return 0;
	p->kick_idx = to;
	/* P3: our store-release of prod (P2, in the enqueue) before the
	 * load of the sleep word below.  Pairs with C3. */
	gnts_ring_fence();
	/* P4: read once; relaxed: P3 did the ordering. */
	w = atomic_load_explicit(p->sleep, memory_order_relaxed);
	return gnts_ring_kick_due(w, from, to);
}

/** Producer: tell the ring's consumer that we kick its doorbell when it
 *  sleeps (GNTS_RING_KICKS on our own line; covers every ring we
 *  produce).  Once, at attach, and only by a side that does kick. */
static inline void
gnts_ring_kicks_set(struct gnts_ring_port *p)
{
	if (p->sleep != NULL)
		atomic_store_explicit(p->kicks, GNTS_RING_KICKS,
				      memory_order_relaxed);
}

#ifdef __cplusplus
}
#endif

#endif /* GNTSHARE_RING_H */

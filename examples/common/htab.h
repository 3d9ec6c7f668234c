/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A fixed-capacity hash table of fixed-size keys and values: open
 * addressing, linear probing, backward-shift deletion (no tombstones, so
 * lookups stay short however long the NF runs).  Keys are compared and
 * hashed as bytes: zero their padding.  No allocation after htab_init().
 * Each table hashes with random key material of its own (NH, as in UMAC:
 * a product of key halves plus random words, summed, for keys up to
 * HTAB_NH_WORDS words; a seeded hash_bytes() beyond), so which keys
 * collide cannot be known in advance (iteration order differs from run to
 * run).  NH's products are independent of each other: a flow key's hash
 * costs a few cycles, not a chain of dependent multiplies.
 *
 *   struct htab t;
 *   htab_init(&t, 65536, sizeof(struct flow_key), sizeof(struct counts));
 *   struct counts *c = htab_insert(&t, &key, &is_new);   // NULL: full
 *   c = htab_find(&t, &key);
 *   for (uint32_t i = 0; (c = htab_next(&t, &i, &k)) != NULL; ) ...
 */
#ifndef XNV_EX_HTAB_H
#define XNV_EX_HTAB_H

#include <stddef.h>
#include <stdint.h>

struct htab {
	uint8_t *slots;		/* [used byte, pad, key, value] each */
	uint32_t mask;		/* slots - 1 */
	uint32_t n;		/* entries */
	uint32_t max;		/* entries at most (half the slots) */
	uint32_t key_size, val_size, key_off, val_off, slot_size;
	uint64_t seed;		/* of hash_bytes(), random per table */
#define HTAB_NH_WORDS 8
	uint64_t nh[HTAB_NH_WORDS];	/* NH's key material, random */
};

/** The hash of @p key in @p t (its home slot: & mask). */
uint64_t htab_hash(const struct htab *t, const void *key);

/** A table for @p max entries, hashing with a random seed of its own
 *  (getrandom()).  @return 0 or -1 (out of memory, or no random seed). */
int htab_init(struct htab *t, uint32_t max, size_t key_size,
	      size_t val_size);

void htab_free(struct htab *t);

/** @return the value of @p key, or NULL. */
void *htab_find(const struct htab *t, const void *key);

/** The value of @p key, added zeroed if new (*is_new = 1).
 *  @return NULL when the key is new and the table holds max entries. */
void *htab_insert(struct htab *t, const void *key, int *is_new);

/** Remove @p key.  @return 0, or -1 if it was not there. */
int htab_remove(struct htab *t, const void *key);

/** Iterate: start with *pos = 0; @return the next value (its key in
 *  *key if not NULL), or NULL at the end. */
void *htab_next(const struct htab *t, uint32_t *pos, const void **key);

/**
 * Look at up to @p budget slots from *cursor on (wrapping) and remove
 * the entries for which @p gone(key, value, arg) returns non-zero.
 * Spread over packets it keeps a table of idle flows clean at a bounded
 * cost per packet; budget = mask + 1 sweeps the whole table.
 * @return entries removed.
 */
uint32_t htab_sweep(struct htab *t, uint32_t *cursor, uint32_t budget,
		    int (*gone)(const void *key, void *val, void *arg),
		    void *arg);

/** Hash of @p n bytes (also for users that need a stable flow hash). */
uint64_t hash_bytes(const void *p, size_t n, uint64_t seed);

/**
 * How many of @p slots a sweep may look at now, so that it goes over all
 * of them once per @p period_ns: what the time since @p *last_ns earned
 * (updated when it earned some; the first call only starts the clock).
 * A sweep paced by time, not by packets: at millions of packets a second
 * a few slots a packet streamed a whole table through the caches every
 * few milliseconds, pushing the live entries out.
 */
static inline uint32_t
sweep_budget(uint64_t *last_ns, uint64_t now_ns, uint64_t period_ns,
	     uint32_t slots)
{
	uint64_t dt = now_ns - *last_ns, b;

	if (*last_ns == 0 || now_ns < *last_ns) {
		*last_ns = now_ns;
		return 0;
	}
	if (dt >= period_ns)
		b = slots;
	else if ((b = slots * dt / period_ns) == 0)
		return 0;	/* the time goes on counting */
	*last_ns = now_ns;
	return (uint32_t)b;
}

/** The sweep period for entries idle @p timeout_ns: half of it, at most
 *  a second. */
static inline uint64_t
sweep_period(uint64_t timeout_ns)
{
	return timeout_ns / 2 < 1000000000ull ? timeout_ns / 2 : 1000000000ull;
}

/** htab_sweep() paced by time: the slots the time since @p *last_ns
 *  earned, the whole table once per sweep_period(@p timeout_ns)
 *  (sweep_budget()).  @return entries removed. */
static inline uint32_t
htab_sweep_paced(struct htab *t, uint32_t *cursor, uint64_t *last_ns,
		 uint64_t now_ns, uint64_t timeout_ns,
		 int (*gone)(const void *key, void *val, void *arg), void *arg)
{
	return htab_sweep(t, cursor, sweep_budget(last_ns, now_ns,
						  sweep_period(timeout_ns),
						  t->mask + 1), gone, arg);
}

#endif /* XNV_EX_HTAB_H */

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Flow rules on the data path: a burst's keys (flow_key.h), then for each
 * packet its flow's verdict from a cache, and the hash and the tries
 * (flow.c's set) only for what the cache did not hold.
 *
 * The cache is the data path lcore's alone (no lock, no atomic): 2-way
 * sets of one cache line each way, indexed by the flow hash (the NIC's
 * RSS hash, else ours, which the replica pick takes too).  An entry holds
 * the whole key, the input port and the rule id it matched (0: none),
 * tagged with the set it was looked up in (its id) and the set's count of
 * changes to the exact hash (xgen, bumped after each change).  An entry
 * is used only under the same set and count: a hit gives what the tries
 * and the hash would give now, and a burst takes every verdict from one
 * set's tries, cached or not.  Colliding flows only cost a
 * lookup (an entry is replaced, never shared), so a flood of crafted
 * flows slows its own packets to the tries' rate, and no verdict goes
 * wrong.
 *
 *   way (64 B):  key (48)  set (4)  xgen (4)  id (2)  in_port (2)  kind (1)
 */
#include <stdatomic.h>
#include <string.h>

#include <rte_common.h>
#include <rte_hash.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>

#include "classify.h"
#include "core.h"
#include "flow_acl.h"
#include "flow_pvt.h"

#define CACHE_SETS 2048u	/* x 2 ways: 256 KiB */

struct flow_cache_way {
	struct xnv_flow_key key;
	uint32_t set;			/* 0: empty */
	uint32_t xgen;
	uint16_t id;			/* rule id, 0: none */
	uint16_t in_port;
	uint8_t kind;
} __rte_cache_aligned;

_Static_assert(XNV_MAX_FLOWS < UINT16_MAX, "a rule id in a way");

_Static_assert(sizeof(struct flow_cache_way) == 64, "one line a way");

/* What one burst looks up and fills. */
struct burst {
	const struct flow_set *s;
	uint32_t set, xgen;
	uint16_t in_port;
	struct xnv_flow_key keys[GNTS_BURST_MAX];
	uint8_t kind[GNTS_BURST_MAX];
	uint32_t hash[GNTS_BURST_MAX];
	uint32_t ids[GNTS_BURST_MAX];
};

struct flow_cache_way *
xnv_flow_cache_new(void)
{
	return rte_zmalloc("xnv-flow-cache",
			   2 * CACHE_SETS * sizeof(struct flow_cache_way),
			   RTE_CACHE_LINE_SIZE);
}

void
xnv_flow_set_changed(struct flow_set *s)
{
	/* Release: the key added or deleted is visible to a burst that
	 * reads the new count (acquire in classify). */
	atomic_fetch_add_explicit(&s->xgen, 1, memory_order_release);
}

static inline int
way_is(const struct flow_cache_way *w, const struct burst *b, unsigned i)
{
	/* Keys come from one parser that zeroes them first: padding too. */
	return w->set == b->set && w->xgen == b->xgen && w->in_port == b->in_port &&
	       w->kind == b->kind[i] &&
	       memcmp(&w->key, &b->keys[i], sizeof(w->key)) == 0;
}

/* The cached rule id + 1 of packet @p i, 0: not cached. */
static inline uint32_t
cache_get(const struct flow_cache_way *set, const struct burst *b,
	  unsigned i)
{
	if (way_is(&set[0], b, i))
		return set[0].id + 1;
	if (way_is(&set[1], b, i))
		return set[1].id + 1;
	return 0;
}

static void
cache_put(struct flow_cache_way *set, const struct burst *b, unsigned i)
{
	/* A stale way first, else the one a hash bit picks. */
	struct flow_cache_way *w = &set[set[0].set != b->set ? 0 :
					set[1].set != b->set ? 1 :
					(b->hash[i] >> 16) & 1];

	w->key = b->keys[i];
	w->set = b->set;
	w->xgen = b->xgen;
	w->id = (uint16_t)b->ids[i];
	w->in_port = b->in_port;
	w->kind = b->kind[i];
}

static inline struct flow_cache_way *
cache_set(struct flow_cache_way *cache, uint32_t hash)
{
	return &cache[2 * (hash & (CACHE_SETS - 1))];
}

/* The exact rule each packet with ports matches (0: none) into @p ids,
 * where it ranks above what @p ids holds. */
static void
lookup_exact(const struct flow_set *s, const struct xnv_flow_key *keys,
	     const uint8_t *kind, unsigned n, uint32_t *ids)
{
	const void *kp[GNTS_BURST_MAX];
	void *data[GNTS_BURST_MAX];
	unsigned idx[GNTS_BURST_MAX], i, j, k = 0;
	uint64_t hit;

	for (i = 0; i < n; i++)
		if (kind[i] == XNV_KEY_PORTS) {
			kp[k] = &keys[i];
			idx[k++] = i;
		}
	for (j = 0; j < k; j += RTE_HASH_LOOKUP_BULK_MAX) {
		unsigned b = RTE_MIN(k - j, (unsigned)RTE_HASH_LOOKUP_BULK_MAX);

		hit = 0;
		if (rte_hash_lookup_bulk_data(s->exact, &kp[j], b, &hit,
					      &data[j]) <= 0)
			continue;
		for (i = 0; i < b; i++) {
			uint32_t id = (uint32_t)(uintptr_t)data[j + i];
			uint32_t *cur = &ids[idx[j + i]];

			if ((hit >> i & 1) &&
			    (*cur == 0 || s->rank[id - 1] > s->rank[*cur - 1]))
				*cur = id;
		}
	}
}

/* The @p n packets @p at of @p b the cache missed: looked up in the tries
 * and the hash, then cached. */
static void
lookup_missed(struct flow_cache_way *cache, struct burst *b,
	      const uint8_t *at, unsigned n)
{
	const struct flow_set *s = b->s;
	struct xnv_flow_key keys[GNTS_BURST_MAX];
	uint8_t kind[GNTS_BURST_MAX];
	uint32_t ids[GNTS_BURST_MAX];
	unsigned k;

	for (k = 0; k < n; k++) {
		keys[k] = b->keys[at[k]];
		kind[k] = b->kind[at[k]];
	}
	if (s->acl != NULL)
		xnv_acl_classify(s->acl, keys, kind, n, b->in_port, ids);
	else
		memset(ids, 0, sizeof(ids[0]) * n);
	if (atomic_load_explicit(&s->n_exact, memory_order_relaxed) > 0)
		lookup_exact(s, keys, kind, n, ids);
	for (k = 0; k < n; k++) {
		b->ids[at[k]] = ids[k];
		cache_put(cache_set(cache, b->hash[at[k]]), b, at[k]);
	}
}

/* Keys and hashes of the burst, and the cache's verdicts; the packets it
 * missed into @p at.  @return how many it missed. */
static unsigned
lookup_cached(struct flow_cache_way *cache, struct burst *b,
	      struct rte_mbuf **m, unsigned n, uint8_t *at)
{
	unsigned i, missed = 0;

	for (i = 0; i < n; i++) {
		uint32_t got;

		b->kind[i] = (uint8_t)xnv_flow_key(m[i], &b->keys[i]);
		/* Parsed once: the replica pick (service.c) takes this hash
		 * unless the NIC gave one (datapath.c keeps pv->hash). */
		if (m[i]->ol_flags & RTE_MBUF_F_RX_RSS_HASH) {
			b->hash[i] = m[i]->hash.rss;
		} else {
			b->hash[i] = xnv_flow_key_hash(&b->keys[i],
						       b->kind[i]);
			xnv_priv(m[i])->hash = b->hash[i];
		}
		b->ids[i] = 0;
		if (b->kind[i] == XNV_KEY_OTHER)	/* no rule sees it */
			continue;
		got = cache_get(cache_set(cache, b->hash[i]), b, i);
		if (got != 0)
			b->ids[i] = got - 1;
		else
			at[missed++] = (uint8_t)i;
	}
	return missed;
}

void
xnv_flows_classify(struct xnv_core *c, struct rte_mbuf **m, unsigned n,
		   uint16_t in_port, uint16_t *chain)
{
	struct xnv_flows *f = c->flows;
	uint8_t at[GNTS_BURST_MAX];
	struct burst b;
	unsigned i, missed;

	/* Acquire: pairs with the release in swap_in (the set is whole). */
	b.s = atomic_load_explicit(&f->live, memory_order_acquire);
	if (b.s == NULL)
		return;
	b.set = b.s->id;
	/* Acquire: pairs with the release in xnv_flow_set_changed(): keys
	 * changed before this count are seen by the hash lookups below.
	 * An entry filled with a later change seen under this count is
	 * only stale: the next burst reads the new count. */
	b.xgen = atomic_load_explicit(&b.s->xgen, memory_order_acquire);
	b.in_port = in_port;
	missed = lookup_cached(f->cache, &b, m, n, at);
	if (missed > 0)
		lookup_missed(f->cache, &b, at, missed);
	for (i = 0; i < n; i++) {
		_Atomic uint64_t *h;
		uint32_t id = b.ids[i];

		if (id == 0)
			continue;
		chain[i] = b.s->chain[id - 1];
		/* Only this lcore writes the counter: a relaxed load and
		 * store, no locked add; readers see whole values. */
		h = &f->hits[b.s->bank][id - 1];
		atomic_store_explicit(h, atomic_load_explicit(h,
				      memory_order_relaxed) + 1,
				      memory_order_relaxed);
	}
}

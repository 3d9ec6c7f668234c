/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Flow rules on the data path: a burst's keys (flow_key.h), then for each
 * packet its flow's verdict from a cache, and the hash and the tries
 * (flow.c's set) only for what the cache did not hold.
 *
 * A cache is one worker's alone (no lock, no atomic): 2-way
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
 *   way (64 B):  key words (48: the last with in_port and kind)  tag (8)
 *                set id | xgen << 32  id (2)
 *
 * A packet's key is made in registers (flow_key.h's words) and compared
 * as words; the frame most traffic is made of (xnv_key_ipv4_fast():
 * untagged IPv4, TCP or UDP) in two words and a path of its own.  Only a
 * key the cache missed is written out, for the tries and the hash: its
 * packet parsed again, off the hit path.
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
	/* The key's words (flow_key.h); the last one, the VLAN id's, also
	 * holds the input port (bits 16..31) and the key's kind (32..39). */
	uint64_t w[XNV_KEY_WORDS];
	uint64_t tag;			/* set id | xgen << 32; 0: empty */
	uint16_t id;			/* rule id, 0: none */
} __rte_cache_aligned;

_Static_assert(sizeof(struct flow_cache_way) == 64, "one line a way");
_Static_assert(XNV_MAX_FLOWS < UINT16_MAX, "a rule id in a way");

/* What one burst looks up: its set, and the keys the cache missed. */
struct burst {
	const struct flow_set *s;
	const uint16_t *chains;		/* s->chain */
	_Atomic uint64_t *hits;		/* the set's bank of hit counters */
	uint16_t *chain;		/* the caller's, by packet */
	uint64_t tag;
	uint16_t in_port;
	unsigned missed;
	uint8_t at[GNTS_BURST_MAX];	/* a missed key's packet */
	uint8_t kind[GNTS_BURST_MAX];	/* by missed key */
	uint32_t hash[GNTS_BURST_MAX];
	struct xnv_flow_key keys[GNTS_BURST_MAX];
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

static inline struct flow_cache_way *
cache_set(struct flow_cache_way *cache, uint32_t hash)
{
	return &cache[2 * (hash & (CACHE_SETS - 1))];
}

/* The way of @p set holding words @p w under @p tag, or NULL. */
static inline const struct flow_cache_way *
cache_get(const struct flow_cache_way *set, const uint64_t *w, uint64_t tag)
{
	/* Equal fifth words: both keys IPv4 or both IPv6 (its v6 byte), and
	 * an IPv4 key's second and fourth words are 0. */
	int v6 = (w[4] >> 40 & 0xff) != 0;
	unsigned j;

	for (j = 0; j < 2; j++) {
		const uint64_t *x = set[j].w;
		uint64_t d = (x[0] ^ w[0]) | (x[2] ^ w[2]) | (x[4] ^ w[4]) |
			     (x[5] ^ w[5]) | (set[j].tag ^ tag);

		if (unlikely(v6))
			d |= (x[1] ^ w[1]) | (x[3] ^ w[3]);
		if (d == 0)
			return &set[j];
	}
	return NULL;
}

/* cache_get() for the words of xnv_key_ipv4_fast() (the second and
 * fourth are 0), with last word @p last. */
static inline const struct flow_cache_way *
cache_get_v4(const struct flow_cache_way *set, uint64_t addrs, uint64_t w4,
	     uint64_t last, uint64_t tag)
{
	unsigned j;

	for (j = 0; j < 2; j++) {
		const uint64_t *x = set[j].w;

		if (((x[0] ^ (uint32_t)addrs) | (x[2] ^ addrs >> 32) |
		     (x[4] ^ w4) | (x[5] ^ last) | (set[j].tag ^ tag)) == 0)
			return &set[j];
	}
	return NULL;
}

static void
cache_put(struct flow_cache_way *set, const uint64_t *w, uint64_t tag,
	  uint32_t id, uint32_t hash)
{
	/* A stale way first, else the one a hash bit picks. */
	struct flow_cache_way *way = &set[set[0].tag != tag ? 0 :
					  set[1].tag != tag ? 1 :
					  (hash >> 16) & 1];

	memcpy(way->w, w, sizeof(way->w));
	way->tag = tag;
	way->id = (uint16_t)id;
}

/* The last word as the cache holds it: VLAN id, input port, kind. */
static inline uint64_t
last_word(uint64_t vlan_word, uint16_t in_port, enum xnv_key_kind kind)
{
	return vlan_word | (uint64_t)in_port << 16 | (uint64_t)kind << 32;
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

/* Packet @p i matched rule @p id (0: none): its chain in @p chain, and a
 * hit. */
static inline void
take(const uint16_t *chains, _Atomic uint64_t *hits, uint16_t *chain,
     unsigned i, uint32_t id)
{
	if (id == 0)
		return;
	chain[i] = chains[id - 1];
	/* Only this lcore writes the counter: a relaxed load and store, no
	 * locked add; readers see whole values. */
	atomic_store_explicit(&hits[id - 1], atomic_load_explicit(&hits[id - 1],
			      memory_order_relaxed) + 1, memory_order_relaxed);
}

/* The keys the cache missed: looked up in the tries and the hash, then
 * cached. */
static void __rte_noinline
lookup_missed(struct flow_cache_way *cache, struct burst *b)
{
	const struct flow_set *s = b->s;
	uint32_t ids[GNTS_BURST_MAX];
	uint64_t w[XNV_KEY_WORDS];
	unsigned k, n = b->missed;

	if (s->acl != NULL)
		xnv_acl_classify(s->acl, b->keys, b->kind, n, b->in_port, ids);
	else
		memset(ids, 0, sizeof(ids[0]) * n);
	if (atomic_load_explicit(&s->n_exact, memory_order_relaxed) > 0)
		lookup_exact(s, b->keys, b->kind, n, ids);
	for (k = 0; k < n; k++) {
		take(b->chains, b->hits, b->chain, b->at[k], ids[k]);
		memcpy(w, &b->keys[k], sizeof(w));
		w[XNV_KEY_WORDS - 1] = last_word(w[XNV_KEY_WORDS - 1],
						 b->in_port, b->kind[k]);
		cache_put(cache_set(cache, b->hash[k]), w, b->tag, ids[k],
			  b->hash[k]);
	}
}

/* Packet @p i of @p m, its flow's hash @p h, missed the cache: its key
 * into @p b for lookup_missed().  Parsed again: a miss is a new flow,
 * and the hit path keeps its words in registers. */
static void __rte_noinline
miss(struct burst *b, const struct rte_mbuf *m, unsigned i, uint32_t h)
{
	unsigned k = b->missed++;

	b->kind[k] = (uint8_t)xnv_flow_key(m, &b->keys[k]);
	b->hash[k] = h;
	b->at[k] = (uint8_t)i;
}

/* The flow hash of @p m: the NIC's, else @p h, then kept for the replica
 * pick (service.c; datapath.c keeps pv->hash): parsed once. */
static inline uint32_t
flow_hash(struct rte_mbuf *m, uint32_t h)
{
	if (m->ol_flags & RTE_MBUF_F_RX_RSS_HASH)
		return m->hash.rss;
	xnv_priv(m)->hash = h;
	return h;
}

/* Any other frame than xnv_key_ipv4_fast()'s: its hash kept, its way in
 * @p way (NULL: a miss).  0 when no rule sees it (not IP). */
static inline int
lookup_any(struct flow_cache_way *cache, const struct burst *b,
	   struct rte_mbuf *m, const struct flow_cache_way **way, uint32_t *h)
{
	struct xnv_key_fields f = { .vlan = XNV_KEY_NO_VLAN };
	uint64_t w[XNV_KEY_WORDS];
	enum xnv_key_kind kind;

	kind = xnv_key_fields_any(rte_pktmbuf_mtod(m, const uint8_t *),
				  rte_pktmbuf_data_len(m), &f);
	xnv_key_words(&f, w);
	*h = flow_hash(m, xnv_key_words_hash(w, kind));
	if (kind == XNV_KEY_OTHER)
		return 0;
	w[XNV_KEY_WORDS - 1] = last_word(f.vlan, b->in_port, kind);
	*way = cache_get(cache_set(cache, *h), w, b->tag);
	return 1;
}

/* Each packet's key, hash and cached verdict (taken); the keys the cache
 * missed into @p b.  The frame of xnv_key_ipv4_fast() in registers. */
static void
lookup_cached(struct flow_cache_way *cache, struct burst *b,
	      struct rte_mbuf **m, unsigned n)
{
	const uint64_t tag = b->tag,
		       v4_last = last_word(XNV_KEY_NO_VLAN, b->in_port,
					   XNV_KEY_PORTS);
	const uint16_t *chains = b->chains;
	_Atomic uint64_t *hits = b->hits;
	uint16_t *chain = b->chain;
	unsigned i;

	b->missed = 0;
	for (i = 0; i < n; i++) {
		const struct flow_cache_way *way;
		uint64_t a, w4;
		uint32_t h;

		if (likely(xnv_key_ipv4_fast(rte_pktmbuf_mtod(m[i],
							const uint8_t *),
					     rte_pktmbuf_data_len(m[i]), &a,
					     &w4))) {
			h = flow_hash(m[i], xnv_key_ip_hash(a, w4));
			way = cache_get_v4(cache_set(cache, h), a, w4, v4_last,
					   tag);
		} else if (!lookup_any(cache, b, m[i], &way, &h)) {
			continue;	/* no rule sees it */
		}
		if (likely(way != NULL))
			take(chains, hits, chain, i, way->id);
		else
			miss(b, m[i], i, h);
	}
}

void
xnv_flows_classify(struct xnv_core *c, unsigned w, struct rte_mbuf **m,
		   unsigned n, uint16_t in_port, uint16_t *chain)
{
	struct xnv_flows *f = c->flows;
	struct burst b;

	/* Acquire: pairs with the release in swap_in (the set is whole). */
	b.s = atomic_load_explicit(&f->live, memory_order_acquire);
	if (b.s == NULL)
		return;
	/* Acquire: pairs with the release in xnv_flow_set_changed(): keys
	 * changed before this count are seen by the hash lookups below.
	 * An entry filled with a later change seen under this count is
	 * only stale: the next burst reads the new count. */
	b.tag = b.s->id | (uint64_t)atomic_load_explicit(&b.s->xgen,
					memory_order_acquire) << 32;
	b.chains = b.s->chain;
	b.hits = f->hits[w][b.s->bank];
	b.chain = chain;
	b.in_port = in_port;
	lookup_cached(f->cache[w], &b, m, n);
	if (b.missed > 0)
		lookup_missed(f->cache[w], &b);
}

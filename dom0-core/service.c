/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Replicas of a service.  Each flow hashes to one of XNV_BUCKETS buckets;
 * each bucket belongs to the live instance with the highest rendezvous
 * score for (bucket, instance slot).  So a flow stays on one replica while
 * the set is stable, only the departed replica's flows move when one
 * leaves, and a replica that comes back in the same slot gets them back.
 *
 * Spill: when the chosen replica's rx ring is fuller than
 * [core] spill_threshold (percent), the packet goes to the least occupied
 * replica instead.  Both kinds of pick are counted per service.
 */
#include <string.h>

#include "classify.h"
#include "core.h"

/* Rendezvous score of (bucket, slot).  A CRC alone is linear (the score
 * would be F(bucket) ^ G(slot), so ownership would hang on one or two bits
 * and split buckets 128/64/64 over 3 slots); murmur3's finaliser mixes. */
static inline uint32_t
score(uint32_t bucket, uint32_t slot)
{
	uint32_t h = bucket * 0x9e3779b1u ^ (slot + 1) * 0x85ebca77u;

	h ^= h >> 16;
	h *= 0x85ebca6bu;
	h ^= h >> 13;
	h *= 0xc2b2ae35u;
	h ^= h >> 16;
	return h;
}

void
xnv_service_rebuild(struct xnv_core *c, uint16_t service)
{
	struct xnv_service *s = &c->services[service];
	uint32_t b, best;
	uint16_t i;

	for (b = 0; b < XNV_BUCKETS; b++) {
		s->bucket[b] = XNV_NF_NONE;
		best = 0;
		for (i = 0; i < XNV_MAX_INSTANCES; i++) {
			uint32_t sc;

			if (s->slot_nf[i] == XNV_NF_NONE)
				continue;
			sc = score(b, i);
			if (s->bucket[b] == XNV_NF_NONE || sc > best) {
				best = sc;
				s->bucket[b] = s->slot_nf[i];
			}
		}
	}
}

/* Descriptors waiting in @p nf's rx ring; the cached estimate first, the
 * shared index only when the estimate is high.  Never above the ring. */
static inline uint32_t
ring_used(struct xnv_nfrec *nf, uint32_t limit)
{
	uint32_t used = nf->rx.idx - nf->rx.cached_peer;

	if (used > limit)
		used = gnts_ring_count(&nf->rx, 1);
	return used;
}

struct xnv_nfrec *
xnv_service_pick(struct xnv_core *c, uint16_t service, struct rte_mbuf *m)
{
	struct xnv_service *s = &c->services[service];
	struct xnv_mbuf_priv *pv = xnv_priv(m);
	struct xnv_nfrec *nf, *least;
	uint32_t limit = c->spill_ring_used, used, u;
	uint16_t i;

	/* Counted by the caller once the packet is handed over (a packet
	 * waiting for room is picked again on every retry). */
	pv->pick = XNV_PICK_AFFINITY;
	if (s->n_live == 0)
		return NULL;
	if (pv->hash == 0)
		pv->hash = xnv_flow_hash(m);
	nf = &c->nfs[s->bucket[pv->hash & (XNV_BUCKETS - 1)]];
	if (s->n_live == 1 || (used = ring_used(nf, limit)) <= limit)
		return nf;
	least = nf;
	for (i = 0; i < s->n_live; i++) {
		struct xnv_nfrec *o = &c->nfs[s->live[i]];

		u = gnts_ring_count(&o->rx, 1);
		if (u < used) {
			used = u;
			least = o;
		}
	}
	if (least != nf)
		pv->pick = XNV_PICK_SPILL;
	return least;
}

/* Before anything attaches: no port opened, no instance in any slot. */
void
xnv_services_init(struct xnv_core *c)
{
	uint16_t i;

	for (i = 0; i < XNV_MAX_PORTS; i++)
		c->ports[i].port_id = RTE_MAX_ETHPORTS;
	for (i = 0; i < XNV_MAX_SERVICES; i++) {
		memset(c->services[i].slot_nf, 0xff,
		       sizeof(c->services[i].slot_nf));
		xnv_service_rebuild(c, i);
	}
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Replicas of a service on the data path.  Each flow goes to the owner of
 * its hash's bucket (service_table.h: rendezvous over instance slots).
 *
 * Spill: when the chosen replica's rx ring is fuller than
 * [core] spill_threshold (percent), the packet goes to the least occupied
 * replica instead.  Both kinds of pick are counted per service.
 */
#include <string.h>

#include "classify.h"
#include "core.h"

/* Descriptors waiting in the rx ring of @p nf, which another worker
 * polls (worker.h): its ring port is that worker's, so nothing of it is
 * written here (the check and cache of gnts_ring_count() are its
 * owner's).  An estimate, never above the ring. */
static inline uint32_t
foreign_used(const struct xnv_nfrec *nf)
{
	uint32_t prod = __atomic_load_n(&nf->rx.idx, __ATOMIC_RELAXED);
	uint32_t cons = atomic_load_explicit(&nf->rx.r->cons,
					     memory_order_relaxed);

	return prod - cons > nf->rx.size ? nf->rx.size : prod - cons;
}

/* Descriptors waiting in @p nf's rx ring; the cached estimate first, the
 * shared index only when the estimate is high.  Never above the ring. */
static inline uint32_t
ring_used(struct xnv_nfrec *nf, uint32_t limit)
{
	uint32_t used;

	if (unlikely(nf->worker != xnv_worker_self()->id))
		return foreign_used(nf);
	used = nf->rx.idx - nf->rx.cached_peer;
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
	nf = &c->nfs[xnv_service_owner(s, pv->hash)];
	if (s->n_live == 1 || (used = ring_used(nf, limit)) <= limit)
		return nf;
	least = nf;
	for (i = 0; i < s->n_live; i++) {
		struct xnv_nfrec *o = &c->nfs[s->live[i]];

		u = ring_used(o, 0);
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
	for (i = 0; i < XNV_MAX_SERVICES; i++)
		xnv_service_init(&c->services[i]);
}

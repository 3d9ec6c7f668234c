/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The data path, NF side: what an NF hands back (its tx ring: validated,
 * verdicts applied, then steered by datapath.c), and the empty buffers
 * it asked for (its free ring, within its quota).
 */
#include <rte_mbuf.h>
#include <rte_prefetch.h>

#include "core.h"
#include "validate.h"

/* An NF's own choice of target (OUT, TO_SERVICE): the route word keeps
 * the packet's chain and step, names the target and the NF; its NF (if
 * a service) is picked afresh.  @return the word. */
static inline uint64_t
verdict_target(struct xnv_mbuf_priv *pv, const struct xnv_nfrec *nf,
	       uint8_t kind, uint16_t id)
{
	pv->route = XNV_ROUTE_AT(chain, pv->chain) |
		    XNV_ROUTE_AT(step, pv->step) |
		    XNV_ROUTE_AT(tgt_kind, kind) | XNV_ROUTE_AT(tgt_id, id) |
		    XNV_ROUTE_AT(verdict_nf, nf->id + 1u) |
		    XNV_ROUTE_AT(pick, XNV_PICK_AFFINITY);
	return pv->route;
}

/* XNV_NEXT: the next step of the packet's chain, its route word made
 * when the chain version was (chain.c); a step that pushes a hop the
 * long way (xnv_take_step()).  @return the packet's route word; 0 if it
 * has no next step (past its chain's end, or made by an NF: on no
 * chain), and it was freed.  A packet's step is always below its
 * chain's length, so step + 1 is within the version's route[]. */
static inline uint64_t
verdict_next(struct xnv_core *c, struct rte_mbuf *m)
{
	struct xnv_mbuf_priv *pv = xnv_priv(m);
	uint16_t chain = pv->chain;
	uint8_t step = (uint8_t)(pv->step + 1);
	uint64_t route = likely(chain != XNV_CHAIN_NONE) ?
			 c->chains[chain].route[step] : 0;

	if (likely(route != 0 && !(route & XNV_ROUTE_HOP))) {
		pv->route = route;
		return route;
	}
	if (route != 0)
		return xnv_take_step(m, pv, chain, step,
				     &c->chains[chain].ch.s[step]);
	xnv_count(&XNV_WC()->drops[XNV_DROP_CHAIN_END], 1);
	rte_pktmbuf_free(m);
	return 0;
}

/* Apply a valid verdict.  @return the packet's route word, 0 if it does
 * not go on (and was freed). */
static uint64_t
apply_verdict(struct xnv_core *c, struct xnv_nfrec *nf, struct rte_mbuf *m,
	      const struct gnts_desc *d)
{
	struct xnv_mbuf_priv *pv = xnv_priv(m);

	switch (d->action) {
	case GNTS_ACT_NEXT:
		return verdict_next(c, m);
	case GNTS_ACT_OUT:
		/* A fabric port carries only packets with a hop (fabric.h),
		 * which a chain step gives, not an NF's verdict. */
		if (likely(!c->cfg.ports[d->dst].fabric))
			return verdict_target(pv, nf, XNV_STEP_PORT, d->dst);
		xnv_count(&XNV_WC()->drops[XNV_DROP_FABRIC], 1);
		break;
	case GNTS_ACT_TO_SERVICE:
		return verdict_target(pv, nf, XNV_STEP_SERVICE,
				      (uint16_t)c->cfg.service_by_id[d->dst]);
	default:	/* GNTS_ACT_DROP: the NF's own verdict */
		nf->drops++;
		break;
	}
	rte_pktmbuf_free(m);
	return 0;
}

/* @p n empty buffers into @p nf's free ring: owned by the NF from now on,
 * on no chain.  Allocation failure just leaves the ring short (the NF's
 * xnv_pkt_alloc() says -ENOBUFS). */
static void
give_empty(struct xnv_core *c, struct xnv_nfrec *nf, uint32_t n)
{
	struct xnv_pool *pool = &c->pools[nf->pool];
	struct rte_mbuf *m[GNTS_BURST_MAX];
	struct gnts_desc d[GNTS_BURST_MAX];
	uint32_t k, i;

	if (rte_pktmbuf_alloc_bulk(pool->mp, m, n) != 0)
		return;
	for (i = 0; i < n; i++) {
		struct xnv_mbuf_priv *pv = xnv_priv(m[i]);
		const struct xnv_step none = { .kind = 0 };

		pv->route = xnv_route(XNV_CHAIN_NONE, 0, &none);
		pv->desc_hi = xnv_desc_hi(UINT16_MAX, 0);
		pv->rx_tsc = 0;		/* made by the NF: no rx time */
		d[i] = (struct gnts_desc){ .buf = pv->buf,
					   .off = m[i]->data_off };
	}
	k = gnts_ring_enqueue_burst(&nf->free, d, n);
	for (i = 0; i < k; i++)
		pool->owner[d[i].buf] = (uint16_t)(nf->id + 1);
	nf->held += k;
	nf->allocs += k;
	if (k < n)
		rte_pktmbuf_free_bulk(&m[k], n - k);
}

/*
 * Keep an originating NF's free ring at least half full, never past its
 * quota.  The NF owns the ring's consumer index: an impossible one is
 * caught where it is read (the count, the enqueue), as the tx ring's
 * producer index is.
 */
static uint32_t
refill_due(const struct xnv_core *c, struct xnv_nfrec *nf)
{
	uint32_t have = gnts_ring_count(&nf->free, 1);

	return xnv_refill_count(have, nf->alloc_want, c->cfg.burst,
				xnv_quota_room(nf->held, nf->max_held));
}

static void
refill(struct xnv_core *c, struct xnv_nfrec *nf)
{
	uint32_t n = refill_due(c, nf);

	if (!nf->free.broken && n > 0)
		give_empty(c, nf, n);
	if (nf->free.broken)
		xnv_rec_quarantine(c, nf, "free ring consumer index impossible");
}

/* What one burst of returns came to (take_burst()). */
struct returns {
	unsigned taken;		/* buffers the core owns again */
	unsigned tx;		/* of which valid and not dropped by the NF */
	unsigned n_bad;		/* descriptors that failed a check */
	enum xnv_bad last_bad;	/* the kind of the last of them */
	int uniform;		/* every packet out has the first one's
				 * target (xnv_deliver()) */
};

/*
 * The mbuf of each descriptor's buffer into @p mb, its header and private
 * area fetched: they were last touched a ring's worth of packets ago.  An
 * index out of range gets buffer 0's, never used: the validation refuses
 * the descriptor before its mbuf is looked at.
 */
static inline void
fetch_mbufs(const struct xnv_pool *pool, const struct gnts_desc *d,
	    struct rte_mbuf **mb, unsigned n)
{
	const uint32_t n_bufs = pool->n_bufs;
	unsigned i;

	for (i = 0; i < n; i++) {
		mb[i] = xnv_pool_mbuf(pool, d[i].buf < n_bufs ? d[i].buf : 0);
		rte_prefetch0(mb[i]);
		rte_prefetch0(xnv_priv(mb[i]));
	}
}

/* A returned frame's place in its buffer, as the NF says (validated). */
static inline void
set_data(struct rte_mbuf *m, const struct gnts_desc *d)
{
	m->data_off = d->off;
	m->data_len = d->len;
	m->pkt_len = d->len;
}

/*
 * A descriptor that is not the common case (xnv_validate_next()):
 * xnv_validate() says what it is.  A bad one is counted, and its buffer
 * freed if it was the NF's; a good one's verdict is applied.  @return the
 * packet's route word, 0 if it does not go on.
 */
static __rte_noinline uint64_t
take_other(struct xnv_core *c, struct xnv_nfrec *nf,
	   const struct xnv_pool_view *view, const struct gnts_desc *d,
	   struct rte_mbuf *m, struct returns *r)
{
	enum xnv_bad bad = xnv_validate(d, view, (uint16_t)(nf->id + 1),
					&c->cfg);

	if (bad != XNV_OK) {
		nf->bad_kind[bad]++;
		r->last_bad = bad;
		r->n_bad++;
	}
	if (bad == XNV_BAD_INDEX || bad == XNV_BAD_OWNER)
		return 0;
	/* The buffer was the NF's: it is the core's again. */
	c->pools[nf->pool].owner[d->buf] = 0;
	r->taken++;
	if (bad != XNV_OK) {
		rte_pktmbuf_free(m);
		return 0;
	}
	set_data(m, d);
	r->tx += d->action != GNTS_ACT_DROP;
	return apply_verdict(c, nf, m, d);
}

/*
 * Validate @p n returned descriptors, give their buffers back to the core
 * and apply their verdicts; the packets that go on into @p out, their
 * count returned.  The common case (a NEXT verdict, all well) is one
 * test and its own short path; anything else is take_other()'s.
 */
static unsigned
take_burst(struct xnv_core *c, struct xnv_nfrec *nf, const struct gnts_desc *d,
	   struct rte_mbuf **mb, unsigned n, struct rte_mbuf **out,
	   struct returns *r)
{
	const struct xnv_pool *pool = &c->pools[nf->pool];
	const struct xnv_pool_view view = {
		.n_bufs = pool->n_bufs, .buf_size = pool->buf_size,
		.owner = pool->owner,
	};
	uint16_t *owner = pool->owner, tag = (uint16_t)(nf->id + 1);
	uint64_t route, first = 0, odd = 0;	/* out[]'s route words */
	unsigned i, k = 0, next = 0;	/* next: the common case's count */

	for (i = 0; i < n; i++) {
		if (likely(xnv_validate_next(&d[i], &view, tag))) {
			/* The buffer was the NF's: it is the core's again. */
			owner[d[i].buf] = 0;
			next++;
			set_data(mb[i], &d[i]);
			route = verdict_next(c, mb[i]);
		} else {
			route = take_other(c, nf, &view, &d[i], mb[i], r);
		}
		if (route != 0) {
			first = k == 0 ? route : first;
			odd |= route ^ first;
			out[k++] = mb[i];
		}
	}
	r->taken += next;
	r->tx += next;
	/* Every buffer is of the NF's pool: the same target and verdict
	 * make the same target_key(). */
	r->uniform = xnv_route_target(odd) == 0;
	return k;
}

/* Dequeue, validate and hand on what the NF returned (nothing parked). */
static unsigned
take_returns(struct xnv_core *c, struct xnv_nfrec *nf, uint64_t now)
{
	struct gnts_desc d[GNTS_BURST_MAX];
	struct rte_mbuf *mb[GNTS_BURST_MAX], *out[GNTS_BURST_MAX];
	struct returns r = { .last_bad = XNV_OK };
	unsigned n, k;

	n = gnts_ring_dequeue_burst(&nf->tx, d, c->cfg.burst);
	if (nf->tx.broken) {
		xnv_rec_quarantine(c, nf, "tx ring producer index impossible");
		return 0;
	}
	/* The next burst's descriptors on their way while this one is
	 * validated and delivered. */
	gnts_ring_prefetch_next(&nf->tx, c->cfg.burst);
	fetch_mbufs(&c->pools[nf->pool], d, mb, n);
	k = take_burst(c, nf, d, mb, n, out, &r);
	/* Before the delivery: a chain may lead back to this NF, whose
	 * quota counts what it holds. */
	nf->held -= r.taken;
	nf->returned += r.taken;
	nf->tx_pkts += r.tx;
	if (k > 0)
		xnv_deliver(c, &nf->pend, out, k, now, now, r.uniform);
	if (unlikely(r.n_bad != 0)) {
		nf->bad += r.n_bad;
		xnv_count(&XNV_WC()->drops[XNV_DROP_BAD_DESC], r.n_bad);
		/* Over its error budget: quarantined, and not polled again. */
		if (nf->state == XNV_REC_ATTACHED)
			(void)xnv_rec_charge_bad(c, nf, now, r.n_bad,
						 r.last_bad);
	}
	return n;
}

unsigned
xnv_rx_nf(struct xnv_core *c, struct xnv_nfrec *nf, uint64_t now)
{
	unsigned n;

	/* A departed NF stays polled to hand on what it had returned: its
	 * tx ring until drained (or the stall timeout), then parked packets;
	 * see xnv_rec_detach(). */
	if (nf->state == XNV_REC_GONE) {
		n = xnv_flush_pending(c, &nf->pend, now);

		if (nf->ring_region == NULL)
			return n;
		/* A quarantined NF's rings are never read again (on Xen its
		 * slot waits here until its domain unmapped the pool). */
		if (n == 0 && !nf->quarantined)
			n = take_returns(c, nf, now);
		if ((n == 0 && nf->pend.n == 0) ||
		    now - nf->gone_tsc > c->stall_tsc)
			xnv_rec_finish(c, nf);
		return n;
	}
	if (XNV_BELL_DOZING(nf) || unlikely(nf->q_req))
		return 0;	/* it kicks if it sends (doorbell.h); or it is
				 * to be quarantined (guard.c) */
	if (nf->alloc_want != 0) {
		refill(c, nf);
		if (nf->state != XNV_REC_ATTACHED || nf->q_req)
			return 0;	/* quarantined, or to be (guard.c) */
	}
	if (unlikely(nf->bell.owed))
		return xnv_bell_owed(c, nf, now);	/* not idle until sent */
	if (xnv_flush_pending(c, &nf->pend, now))
		return 1;
	n = take_returns(c, nf, now);
	/* A standing queue in its tx ring: the NF is faster than one burst
	 * a pass (it waits for room), so its queue would stay as deep as it
	 * once got, each packet waiting a ring's worth.  A second burst when
	 * one more was seen published drains it (packets come in at one
	 * burst a pass, leave at up to two), bounded so that one NF cannot
	 * hold the loop. */
	if (n == c->cfg.burst && gnts_ring_seen(&nf->tx) >= n &&
	    nf->pend.n == 0 && nf->state == XNV_REC_ATTACHED && !nf->q_req)
		n += take_returns(c, nf, now);
	return n;
}

unsigned
xnv_rx_nfs(struct xnv_core *c, uint16_t worker, uint64_t now)
{
	unsigned work = 0;
	uint16_t i;

	/* The list changes only with the workers parked (worker.h). */
	for (i = 0; i < c->n_active; i++) {
		struct xnv_nfrec *nf = &c->nfs[c->active[i]];

		if (nf->worker == worker)
			work += xnv_rx_nf(c, nf, now);
	}
	return work;
}

int
xnv_nf_quiet(const struct xnv_core *c, struct xnv_nfrec *nf)
{
	uint32_t n;

	if (nf->pend.n != 0 || nf->bell.owed)
		return 0;
	if (nf->alloc_want == 0)
		return 1;
	/* An impossible consumer index (read here) is not quiet: the next
	 * pass's refill() quarantines the NF. */
	n = refill_due(c, nf);
	return !nf->free.broken && n == 0;
}

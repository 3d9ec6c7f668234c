/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The data path: what port rx (port_rx.c) and NF tx rings (nf_rx.c)
 * bring in, steered to NF rx rings, ports or drop out.  Nothing here
 * blocks: a packet with nowhere to go yet waits in its source's pending
 * list (the source is not polled meanwhile, which is the backpressure a
 * NIC turns into rx drops), and is dropped after stall_timeout_ms.
 * Order within a source is kept.
 */
#include <string.h>

#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "core.h"
#include "validate.h"

const char *const xnv_drop_names[XNV_DROP_N] = {
	[XNV_DROP_NO_INSTANCE] = "no_instance",
	[XNV_DROP_CHAIN_END] = "chain_end",
	[XNV_DROP_STALL] = "stall",
	[XNV_DROP_BAD_DESC] = "bad_desc",
	[XNV_DROP_MULTISEG] = "multiseg",
	[XNV_DROP_EMPTY] = "empty",
	[XNV_DROP_CHAIN] = "chain_drop",
	[XNV_DROP_RECLAIMED] = "reclaimed",
	[XNV_DROP_SHUTDOWN] = "shutdown",
	[XNV_DROP_NF_QUOTA] = "nf_quota",
	[XNV_DROP_LINK_DOWN] = "link_down",
	[XNV_DROP_FABRIC] = "fabric_hop",
};

/* Resolved destination of one packet: kind in the top byte, id below. */
#define DEST_NF   (1u << 24)
#define DEST_PORT (2u << 24)
#define DEST_DROP (3u << 24)
#define DEST_WAIT (4u << 24)	/* no room yet: park, retry, stall timeout */
#define DEST_QUOTA (5u << 24)	/* drop: the NF (id below) is at its quota */
#define DEST_KIND(d) ((d) & 0xff000000u)
#define DEST_ID(d)   ((d) & 0xffffu)

/* A drop decision; counted by send_run() when the packet is freed. */
static inline uint32_t
drop(enum xnv_drop why)
{
	return DEST_DROP | why;
}

/*
 * Copy a packet into another pool (another group's, or the NF's own);
 * the original is freed.  Counted by trust group: copies[from][to] and
 * the receiving group's copies_in.
 */
static struct rte_mbuf *
copy_to_pool(struct xnv_core *c, struct rte_mbuf *m, uint16_t to)
{
	struct xnv_mbuf_priv *src = xnv_priv(m), *dst;
	struct rte_mbuf *n = rte_pktmbuf_alloc(c->pools[to].mp);
	uint16_t g = c->pools[to].group;

	if (n == NULL)
		return NULL;
	n->data_off = m->data_off;
	n->data_len = m->data_len;
	n->pkt_len = m->pkt_len;
	rte_memcpy(rte_pktmbuf_mtod(n, void *), rte_pktmbuf_mtod(m, void *),
		   m->data_len);
	dst = xnv_priv(n);
	dst->route = src->route;
	dst->desc_hi = src->desc_hi;
	dst->rx_tsc = src->rx_tsc;
	xnv_count(&XNV_WC()->copies[c->pools[src->pool].group][g], 1);
	xnv_count(&XNV_WC()->copies_in[g], 1);
	rte_pktmbuf_free(m);
	return n;
}

/*
 * An NF's own verdict (XNV_OUT, XNV_TO_SERVICE) may hand a packet to
 * another trust group only where that NF's [group] may_send_to says so;
 * a chain step is the operator's and always may.  Asked where the
 * receiving group is known: a port's, or the NF a service picked.  A
 * refused packet is dropped as a bad descriptor (charged to its NF when
 * freed: send_run).
 */
static inline int
policy_refuses(const struct xnv_core *c, const struct xnv_mbuf_priv *pv,
	       uint16_t to)
{
	return unlikely(pv->verdict_nf != 0) &&
	       !xnv_config_may_send(&c->cfg, c->nfs[pv->verdict_nf - 1].group,
				    to);
}

/*
 * Where one packet goes.  *@p reuse is set when every packet with the same
 * target and pool goes to the same place without further work (a port, or
 * a service with one live NF whose pool holds the packet), so the caller
 * may reuse the answer for the rest of a run of such packets.
 */
static uint32_t
resolve(struct xnv_core *c, struct rte_mbuf **mp, int *reuse)
{
	struct xnv_mbuf_priv *pv = xnv_priv(*mp);
	struct xnv_service *s;
	struct xnv_nfrec *nf;

	*reuse = 0;
	switch (pv->tgt_kind) {
	case XNV_STEP_PORT:
		if (policy_refuses(c, pv, c->cfg.ports[pv->tgt_id].group))
			return drop(XNV_DROP_BAD_DESC);
		*reuse = 1;
		return DEST_PORT | pv->tgt_id;
	case XNV_STEP_SERVICE:
		s = &c->services[pv->tgt_id];
		if (s->n_live == 1) {
			nf = &c->nfs[s->live[0]];
			pv->pick = XNV_PICK_AFFINITY;
			*reuse = nf->pool == pv->pool;
		} else {
			nf = xnv_service_pick(c, pv->tgt_id, *mp);
		}
		if (nf == NULL)
			return drop(XNV_DROP_NO_INSTANCE);
		if (policy_refuses(c, pv, nf->group)) {
			*reuse = 0;
			return drop(XNV_DROP_BAD_DESC);
		}
		/* Not parked: an NF that keeps its buffers must not hold up
		 * the port or the NF this packet comes from.  (Asked where
		 * the NF is polled: another worker's counts are its own.) */
		if (nf->held >= nf->max_held &&
		    nf->worker == xnv_worker_self()->id)
			return DEST_QUOTA | nf->id;
		if (nf->pool != pv->pool) {
			struct rte_mbuf *n = copy_to_pool(c, *mp, nf->pool);

			/* The target pool is empty: like a full ring, wait
			 * for buffers to come home. */
			if (n == NULL)
				return DEST_WAIT;
			*mp = n;
		}
		return DEST_NF | nf->id;
	case XNV_STEP_DROP:
	default:
		return drop(pv->tgt_id == XNV_STEP_DROP_FABRIC ?
			    XNV_DROP_FABRIC : XNV_DROP_CHAIN);
	}
}

/*
 * Describe @p n packets to @p nf and enqueue what its rx ring takes, in
 * one pass: each descriptor's second half is ready in the private area
 * (written at rx), the first gathered (its buffer, where the frame is in
 * it now); each buffer is marked the NF's as it is described.  Those the
 * ring did not take are marked the core's again at once: whatever reads
 * the owner table next (this NF's returns, read later in this loop of
 * the single-threaded core, or a quarantine) sees exactly what the NF
 * was given.  @return how many it took.
 */
static unsigned
send_nf(struct xnv_core *c, struct xnv_nfrec *nf, struct rte_mbuf **m,
	unsigned n)
{
	struct gnts_desc d[GNTS_BURST_MAX];
	uint16_t *owner = c->pools[nf->pool].owner;
	const uint16_t tag = (uint16_t)(nf->id + 1);
	unsigned i, k, spills = 0;

	if (unlikely(nf->q_req))	/* to be quarantined (guard.c) */
		return 0;
	for (i = 0; i < n; i++) {
		const struct xnv_mbuf_priv *pv = xnv_priv(m[i]);

		d[i].buf = pv->buf;
		d[i].off = m[i]->data_off;
		d[i].len = m[i]->data_len;
		memcpy(&d[i].action, &pv->desc_hi, sizeof(pv->desc_hi));
		owner[pv->buf] = tag;
		spills += pv->pick;	/* XNV_PICK_SPILL is 1 */
	}
	k = gnts_ring_enqueue_burst(&nf->rx, d, n);
	for (i = k; i < n; i++) {
		owner[d[i].buf] = 0;
		spills -= xnv_priv(m[i])->pick;
	}
	if (nf->rx.broken) {
		xnv_rec_quarantine(c, nf, "rx ring consumer index impossible");
		return 0;
	}
	xnv_bell_rx_done(c, &nf->bell, &nf->rx, nf);
	xnv_count(&XNV_WC()->picks_spill[nf->service], spills);
	xnv_count(&XNV_WC()->picks_affinity[nf->service], k - spills);
	nf->held += k;
	nf->rx_pkts += k;
	return k;
}

/* Target + pool of a packet, and which NF's verdict chose it (the
 * policy, resolve()), as one comparable key: the route word with its
 * target and verdict, the pool in place of its chain (step and pick
 * cleared).  Never UINT64_MAX (verdict_nf <= XNV_MAX_NFS). */
static inline uint64_t
target_key(const struct xnv_mbuf_priv *pv)
{
	return xnv_route_target(pv->route) | XNV_ROUTE_AT(chain, pv->pool);
}

/* Packets a policy refused (resolve()) are freed: each is charged to the
 * NF whose verdict it was, as a bad descriptor. */
static void
charge_policy(struct xnv_core *c, struct rte_mbuf **m, unsigned n,
	      uint64_t now)
{
	unsigned i;

	for (i = 0; i < n; i++) {
		struct xnv_nfrec *nf = &c->nfs[xnv_priv(m[i])->verdict_nf - 1];

		/* Another worker's NF (its verdict crossed here, and a reload
		 * changed the policy meanwhile): dropped, not charged. */
		if (nf->worker != xnv_worker_self()->id)
			continue;
		nf->bad_kind[XNV_BAD_POLICY]++;
		nf->bad++;
		if (nf->state == XNV_REC_ATTACHED)
			(void)xnv_rec_charge_bad(c, nf, now, 1,
						 XNV_BAD_POLICY);
	}
}

/* Drop @p n packets meant for @p nf, which holds its quota: counted for
 * the core, the NF and the ports they came in on. */
static unsigned
quota_drop(struct xnv_core *c, struct xnv_nfrec *nf, struct rte_mbuf **m,
	   unsigned n)
{
	struct xnv_wcount *wc = XNV_WC();
	unsigned k;

	xnv_count(&wc->drops[XNV_DROP_NF_QUOTA], n);
	nf->quota_drops += n;
	for (k = 0; k < n; k++) {
		uint16_t in = xnv_priv(m[k])->in_port;

		if (in < c->cfg.n_ports)
			xnv_count(&wc->nf_quota[in], 1);
	}
	rte_pktmbuf_free_bulk(m, n);
	return n;
}

unsigned
xnv_send_nf(struct xnv_core *c, struct xnv_nfrec *nf, struct rte_mbuf **m,
	    unsigned n)
{
	unsigned room = xnv_quota_room(nf->held, nf->max_held);
	unsigned want = RTE_MIN(n, room), k = 0;

	if (want > 0)
		k = send_nf(c, nf, m, want);
	if (k < want || nf->state != XNV_REC_ATTACHED || nf->q_req)
		return k;
	return k + (n > k ? quota_drop(c, nf, &m[k], n - k) : 0);
}

/* May the calling worker @p w send on port @p p itself: has it a tx
 * queue there?  (Worker 0 always has.) */
static inline int
tx_here(const struct xnv_port *p, const struct xnv_worker *w)
{
	return w->id < p->n_txq || w->id == 0;
}

/* Send a run of packets to one destination.  @return how many went. */
static unsigned
send_run(struct xnv_core *c, uint32_t dest, struct rte_mbuf **m, unsigned n,
	 uint64_t now)
{
	struct xnv_worker *w = xnv_worker_self();
	struct xnv_wcount *wc = &w->cnt;
	struct xnv_nfrec *nf;
	struct xnv_port *p;
	unsigned k;

	switch (DEST_KIND(dest)) {
	case DEST_NF:
		nf = &c->nfs[DEST_ID(dest)];
		if (unlikely(nf->worker != w->id))	/* worker.h */
			return xnv_steer(c, nf->worker, nf->id, m, n);
		return xnv_send_nf(c, nf, m, n);
	case DEST_QUOTA:
		return quota_drop(c, &c->nfs[DEST_ID(dest)], m, n);
	case DEST_WAIT:
		return 0;
	case DEST_PORT:
		p = &c->ports[DEST_ID(dest)];
		if (unlikely(!tx_here(p, w)))
			return xnv_steer(c, 0, XNV_NF_NONE, m, n);
		if (unlikely(!p->link_up)) {	/* as last read (port.h) */
			xnv_count(&wc->drops[XNV_DROP_LINK_DOWN], n);
			rte_pktmbuf_free_bulk(m, n);
			return n;
		}
		k = rte_eth_tx_burst(p->port_id, w->id, m, (uint16_t)n);
		if (unlikely(p->lat != NULL) && k > 0)
			xnv_latency_record(p, w->id, m, k);
		xnv_count(&wc->tx[DEST_ID(dest)], k);
		if (k > 0)
			__atomic_store_n(&wc->last_tx_tsc, now,
					 __ATOMIC_RELAXED);
		return k;
	default:
		/* Counted here, when freed, not when decided: a packet decided
		 * to be dropped may wait behind others and be decided again. */
		xnv_count(&wc->drops[DEST_ID(dest)], n);
		if (DEST_ID(dest) == XNV_DROP_NO_INSTANCE)
			for (k = 0; k < n; k++)
				xnv_count(&wc->no_instance[
					  xnv_priv(m[k])->tgt_id], 1);
		else if (DEST_ID(dest) == XNV_DROP_BAD_DESC)	/* policy */
			charge_policy(c, m, n, now);
		rte_pktmbuf_free_bulk(m, n);
		return n;
	}
}

/*
 * Hand @p n packets on, in order, in runs of packets with one destination;
 * park what cannot go yet in @p pd.  A run grows without re-resolving while
 * the next packet has the same target and the destination is reusable.
 * @p uniform: the caller knows that every packet has the first one's
 * target_key(), so a reusable destination takes them all at once.
 */
void
xnv_deliver(struct xnv_core *c, struct xnv_pending *pd, struct rte_mbuf **m,
	    unsigned n, uint64_t since, uint64_t now, int uniform)
{
	uint64_t key;
	uint32_t d, dj = 0;
	unsigned i, j, k;
	int reuse, reuse_j = 0;

	pd->n = 0;
	if (n == 0)
		return;
	d = resolve(c, &m[0], &reuse);
	for (i = 0; i < n; i = j, d = dj, reuse = reuse_j) {
		key = reuse ? target_key(xnv_priv(m[i])) : UINT64_MAX;
		for (j = uniform && reuse ? n : i + 1; j < n; j++) {
			if (key != UINT64_MAX &&
			    target_key(xnv_priv(m[j])) == key)
				continue;
			dj = resolve(c, &m[j], &reuse_j);
			if (dj != d)
				break;
			key = reuse_j ? target_key(xnv_priv(m[j])) : UINT64_MAX;
		}
		k = send_run(c, d, &m[i], j - i, now);
		if (k < j - i) {
			pd->n = (uint16_t)(n - i - k);
			memmove(pd->m, &m[i + k], pd->n * sizeof(m[0]));
			pd->since = since;
			return;
		}
	}
}

void
xnv_free_parked(struct xnv_pending *pd)
{
	rte_pktmbuf_free_bulk(pd->m, pd->n);
	pd->n = 0;
}

/* Retry parked packets.  @return 1 if some still wait. */
int
xnv_flush_pending(struct xnv_core *c, struct xnv_pending *pd, uint64_t now)
{
	struct rte_mbuf *m[GNTS_BURST_MAX];
	unsigned n = pd->n;

	if (n == 0)
		return 0;
	memcpy(m, pd->m, n * sizeof(m[0]));
	xnv_deliver(c, pd, m, n, pd->since, now, 0);
	if (pd->n != 0 && now - pd->since > c->stall_tsc) {
		xnv_count(&XNV_WC()->drops[XNV_DROP_STALL], pd->n);
		xnv_free_parked(pd);
	}
	return pd->n != 0;
}

uint64_t
xnv_in_flight(const struct xnv_core *c)
{
	uint64_t n = 0;
	uint16_t i;

	for (i = 0; i < XNV_MAX_POOLS; i++)
		if (c->pools[i].mp != NULL)
			n += c->pools[i].n_bufs - xnv_pool_free(&c->pools[i]);
	return n;
}

int
xnv_pending_empty(const struct xnv_core *c)
{
	unsigned i;

	for (i = 0; i < c->cfg.n_ports; i++)
		if (c->ports[i].pend.n)
			return 0;
	for (i = 0; i < XNV_MAX_NFS; i++)
		if (c->nfs[i].pend.n)
			return 0;
	return 1;
}

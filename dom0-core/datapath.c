/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The data path: port rx and NF tx rings in (the NF side: nf_rx.c),
 * steering to NF rx rings, ports or drop out.  Nothing here blocks: a
 * packet with nowhere to go yet waits in its source's pending list (the
 * source is not polled meanwhile, which is the backpressure a NIC turns
 * into rx drops), and is dropped after stall_timeout_ms.  Order within a
 * source is kept.
 */
#include <string.h>

#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_prefetch.h>

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
	c->copies[c->pools[src->pool].group][g]++;
	c->pools[g].copies_in++;
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
		 * the port or the NF this packet comes from. */
		if (nf->held >= nf->max_held)
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
	c->services[nf->service].picks_spill += spills;
	c->services[nf->service].picks_affinity += k - spills;
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
	unsigned k;

	c->drops[XNV_DROP_NF_QUOTA] += n;
	nf->quota_drops += n;
	for (k = 0; k < n; k++) {
		uint16_t in = xnv_priv(m[k])->in_port;

		if (in < c->cfg.n_ports)
			c->ports[in].nf_quota++;
	}
	rte_pktmbuf_free_bulk(m, n);
	return n;
}

/* To @p nf as many as its quota allows; those past it are dropped, those
 * its full ring did not take wait.  @return how many went (or were
 * dropped). */
static unsigned
send_quota(struct xnv_core *c, struct xnv_nfrec *nf, struct rte_mbuf **m,
	   unsigned n)
{
	unsigned room = xnv_quota_room(nf->held, nf->max_held);
	unsigned want = RTE_MIN(n, room), k = 0;

	if (want > 0)
		k = send_nf(c, nf, m, want);
	if (k < want || nf->state != XNV_REC_ATTACHED)
		return k;
	return k + (n > k ? quota_drop(c, nf, &m[k], n - k) : 0);
}

/* Send a run of packets to one destination.  @return how many went. */
static unsigned
send_run(struct xnv_core *c, uint32_t dest, struct rte_mbuf **m, unsigned n,
	 uint64_t now)
{
	struct xnv_port *p;
	unsigned k;

	switch (DEST_KIND(dest)) {
	case DEST_NF:
		return send_quota(c, &c->nfs[DEST_ID(dest)], m, n);
	case DEST_QUOTA:
		return quota_drop(c, &c->nfs[DEST_ID(dest)], m, n);
	case DEST_WAIT:
		return 0;
	case DEST_PORT:
		p = &c->ports[DEST_ID(dest)];
		if (unlikely(!p->link_up)) {	/* as last read (port.h) */
			c->drops[XNV_DROP_LINK_DOWN] += n;
			rte_pktmbuf_free_bulk(m, n);
			return n;
		}
		k = rte_eth_tx_burst(p->port_id, 0, m, (uint16_t)n);
		if (unlikely(p->lat != NULL) && k > 0)
			xnv_latency_record(p, m, k);
		p->tx += k;
		if (k > 0)
			c->last_tx_tsc = now;
		return k;
	default:
		/* Counted here, when freed, not when decided: a packet decided
		 * to be dropped may wait behind others and be decided again. */
		c->drops[DEST_ID(dest)] += n;
		if (DEST_ID(dest) == XNV_DROP_NO_INSTANCE)
			for (k = 0; k < n; k++)
				c->services[xnv_priv(m[k])->tgt_id].no_instance++;
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
		c->drops[XNV_DROP_STALL] += pd->n;
		xnv_free_parked(pd);
	}
	return pd->n != 0;
}

/* A received frame that is not passed on: empty, or larger than one
 * buffer of the port's group (said once per port, with the fix). */
static void __rte_cold __rte_noinline
rx_reject(struct xnv_core *c, uint16_t idx, struct rte_mbuf *m)
{
	const struct xnv_port_cfg *pc = &c->cfg.ports[idx];
	const struct xnv_group_cfg *g = &c->cfg.groups[pc->group];

	if (m->nb_segs == 1) {
		c->drops[XNV_DROP_EMPTY]++;
	} else {
		c->drops[XNV_DROP_MULTISEG]++;
		if (!c->ports[idx].multiseg_said) {
			c->ports[idx].multiseg_said = 1;
			XLOG(WARNING, "port %s: dropped a %u-byte frame: larger "
			     "than one buffer of group %s (buf_size %u holds "
			     "%u bytes of frame); raise [group %s] buf_size "
			     "(at most %u: frames up to %u bytes); counted as "
			     "multiseg, said once\n", pc->name, m->pkt_len,
			     g->name, g->buf_size, g->buf_size - XNV_HEADROOM,
			     g->name, XNV_BUF_SIZE_MAX,
			     XNV_BUF_SIZE_MAX - XNV_HEADROOM);
		}
	}
	rte_pktmbuf_free(m);
}

/* A frame whose outer VLAN tag the driver took out into vlan_tci (an
 * af_packet socket always gets it so from the kernel; port_afpacket.c):
 * the tag put back in front of the EtherType, so a frame leaves as it
 * came.  The driver does not say the tag's TPID; it is written as 802.1Q
 * (0x8100), as rte_vlan_insert() would. */
static void __rte_cold __rte_noinline
vlan_restore(struct rte_mbuf *m)
{
	m->ol_flags &= ~(RTE_MBUF_F_RX_VLAN | RTE_MBUF_F_RX_VLAN_STRIPPED);
	(void)xnv_vlan_push(m, m->vlan_tci);	/* no headroom: never with
						 * the core's pools */
}

/*
 * A paced port ([port] rx_rate) has nothing due: with --idle-sleep
 * doorbell the core may sleep until it has (the due time caps the sleep,
 * as a NIC's rx interrupt would end it): 0, idle.  Otherwise 1: not
 * idle, the core polls on (the pacing's own timing).
 */
static inline unsigned
pace_idle(struct xnv_core *c, const struct xnv_pace *p)
{
	uint64_t due;

	if (c->idle != GNTS_IDLE_DOORBELL)
		return 1;
	due = c->start_tsc + (p->next >> 8);
	if (due < c->pace_due)
		c->pace_due = due;
	return 0;
}

/* The route word of chain version @p id's first step, and in *@p hop the
 * hop that step pushes (0: none). */
static __rte_always_inline uint64_t
chain_start(const struct xnv_core *c, uint16_t id, uint16_t *hop)
{
	const struct xnv_step *s0 = &c->chains[id].ch.s[0];

	*hop = s0->hop;
	return xnv_route(id, 0, s0);
}

/*
 * Give each received packet of port @p idx its first step and the half of
 * its descriptor an NF will see; reject what no NF may be handed.  Each
 * takes chain @p chain[i], or when @p chain is NULL (no flow rules, not a
 * fabric port) the port's @p chain0: one route word for the burst, made
 * before the loop.  Always inlined, so that the two are two loops.
 * @return packets kept (in @p m); *@p uniform: all have one target.
 */
static __rte_always_inline unsigned
rx_fill(struct xnv_core *c, uint16_t idx, struct rte_mbuf **m, unsigned n,
	const uint16_t *chain, uint16_t chain0, int flows, uint64_t rx_tsc,
	int *uniform)
{
	const uint16_t pool = c->cfg.ports[idx].group;
	uint32_t cur = UINT32_MAX;	/* the chain of route and hop */
	uint64_t route = 0;		/* the route word its first step gives */
	uint16_t hop = 0, odd = 0;
	unsigned i, kept = 0, chains = 0;

	if (chain == NULL) {
		cur = chain0;
		route = chain_start(c, chain0, &hop);
		chains = 1;
	}
	for (i = 0; i < n; i++) {
		struct xnv_mbuf_priv *pv;
		uint32_t hash;

		/* One buffer each, and not empty: an NF is never handed a
		 * frame it could not return as it got it (proto.h,
		 * gnts_desc_len_ok). */
		if (unlikely(m[i]->nb_segs != 1 || m[i]->data_len == 0)) {
			rx_reject(c, idx, m[i]);
			continue;
		}
		pv = xnv_priv(m[i]);
		if (chain != NULL && chain[i] != cur) {
			cur = chain[i];
			route = chain_start(c, chain[i], &hop);
			chains++;
		}
		odd |= pv->pool ^ pool;
		/* Its first step (xnv_take_step()), the word made once. */
		pv->route = route;
		if (unlikely(hop != 0))
			xnv_fabric_push(c, m[i], pv, hop);
		/* With flow rules, xnv_flows_classify() already hashed the
		 * key it parsed (when the NIC gave no hash). */
		if (m[i]->ol_flags & RTE_MBUF_F_RX_RSS_HASH)
			hash = m[i]->hash.rss;
		else
			hash = flows ? pv->hash : 0;
		pv->desc_hi = xnv_desc_hi(idx, hash);
		pv->rx_tsc = rx_tsc;
		m[kept++] = m[i];
	}
	/* One chain, no hop to push (a failed push changes the target)
	 * and the port's own pool (a driver's mbufs come from the pool it
	 * was given): every packet has the first one's target. */
	*uniform = chains <= 1 && hop == 0 && odd == 0;
	return kept;
}

void
xnv_rx_burst(struct xnv_core *c, uint16_t idx, struct xnv_pending *pd,
	     struct rte_mbuf **m, unsigned n, uint64_t now)
{
	struct xnv_port *p = &c->ports[idx];
	uint16_t chain[GNTS_BURST_MAX];
	unsigned i, kept;
	uint64_t rx_tsc = 0;
	int flows, fabric, uniform;

	if (unlikely(p->lat != NULL))
		rx_tsc = rte_rdtsc();
	/* The driver wrote the header's first lines; fetch the private
	 * area of every packet before filling the first. */
	for (i = 0; i < n; i++)
		rte_prefetch0(xnv_priv(m[i]));
	p->rx += n;
	fabric = c->cfg.ports[idx].fabric;
	flows = !fabric && xnv_flows_active(c);
	if (unlikely(fabric || flows))	/* a chain each */
		for (i = 0; i < n; i++)
			chain[i] = c->port_chain[idx];
	if (unlikely(fabric))		/* its hop decides */
		n = xnv_fabric_rx(c, idx, m, chain, n);
	if (unlikely(p->vlan_strip))	/* only ports that asked for it */
		for (i = 0; i < n; i++)
			if (m[i]->ol_flags & RTE_MBUF_F_RX_VLAN_STRIPPED)
				vlan_restore(m[i]);
	if (flows)
		xnv_flows_classify(c, m, n, idx, chain);
	if (c->first_rx_tsc == 0)
		c->first_rx_tsc = now;
	c->last_rx_tsc = now;
	if (fabric || flows)
		kept = rx_fill(c, idx, m, n, chain, 0, flows, rx_tsc, &uniform);
	else
		kept = rx_fill(c, idx, m, n, NULL, c->port_chain[idx], 0,
			       rx_tsc, &uniform);
	xnv_deliver(c, pd, m, kept, now, now, uniform);
}

unsigned
xnv_rx_port(struct xnv_core *c, uint16_t idx, uint64_t now)
{
	struct xnv_port *p = &c->ports[idx];
	struct rte_mbuf *m[GNTS_BURST_MAX];
	unsigned n, want = c->cfg.burst;

	/* Parked packets first, rx stopped or not: they finish the chain
	 * they were given, or drop after stall_timeout_ms (a chain unset
	 * while some waited for room used to keep them for ever). */
	if (xnv_flush_pending(c, &p->pend, now))
		return 1;	/* waiting for room is not idleness */
	if (!p->rx_on || !p->started)
		return 0;
	if (unlikely(p->pace.cost != 0)) {
		want = xnv_pace_allow(&p->pace, now - c->start_tsc, want);
		if (want == 0)	/* paced, nothing due yet */
			return pace_idle(c, &p->pace);
	}
	n = rte_eth_rx_burst(p->port_id, 0, m, (uint16_t)want);
	if (n == 0)
		return 0;
	if (unlikely(p->pace.cost != 0))
		xnv_pace_took(&p->pace, n);
	xnv_rx_burst(c, idx, &p->pend, m, n, now);
	return n;
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

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The data path, port side: a port's received burst given its first
 * step and the half of each descriptor an NF will see, frames no NF may
 * be handed rejected, then steered by datapath.c (xnv_deliver()).  Any
 * worker runs xnv_rx_burst() on what its queue received; xnv_rx_port() is
 * worker 0's poll of queue 0 (worker.h).
 */
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_prefetch.h>

#include "core.h"

/* A received frame that is not passed on: empty, or larger than one
 * buffer of the port's group (said once per port, with the fix). */
static void __rte_cold __rte_noinline
rx_reject(struct xnv_core *c, uint16_t idx, struct rte_mbuf *m)
{
	const struct xnv_port_cfg *pc = &c->cfg.ports[idx];
	const struct xnv_group_cfg *g = &c->cfg.groups[pc->group];

	if (m->nb_segs == 1) {
		xnv_count(&XNV_WC()->drops[XNV_DROP_EMPTY], 1);
	} else {
		xnv_count(&XNV_WC()->drops[XNV_DROP_MULTISEG], 1);
		/* Said once, whichever worker sees it first. */
		if (__atomic_exchange_n(&c->ports[idx].multiseg_said, 1,
					__ATOMIC_RELAXED) == 0) {
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
			xnv_fabric_push(m[i], pv, hop);
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
	struct xnv_wcount *wc = XNV_WC();
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
	xnv_count(&wc->rx[idx], n);
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
		xnv_flows_classify(c, xnv_worker_self()->id, m, n, idx, chain);
	if (wc->first_rx_tsc == 0)
		__atomic_store_n(&wc->first_rx_tsc, now, __ATOMIC_RELAXED);
	__atomic_store_n(&wc->last_rx_tsc, now, __ATOMIC_RELAXED);
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

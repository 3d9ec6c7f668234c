/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The workers' ports (worker.h): what worker w >= 1 does with what its
 * rx queue of a port received (sends it itself, or resolves it as worker
 * 0 does its own), and what a stopped worker still held.
 */
#include <string.h>

#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "core.h"
#include "flow.h"
#include "worker.h"
#include "worker_pvt.h"

#define count xnv_count

/*
 * Where worker @p w sends, itself, what port @p idx received: the port of
 * the first step of its chain; -1 when it is to be resolved
 * (xnv_rx_burst(): an NF or a drop first, flow rules, a fabric port's
 * hops, a VLAN tag to put back, [core] latency's rx stamp and tx
 * record).  Read between barriers only, so all of it is stable.
 */
static int
own_target(const struct xnv_core *c, const struct xnv_worker *w, uint16_t idx)
{
	const struct xnv_chain *ch;
	const struct xnv_port *out;
	uint16_t v = c->port_chain[idx];

	if (c->cfg.ports[idx].fabric || c->ports[idx].vlan_strip ||
	    xnv_flows_active(c))
		return -1;
	ch = &c->chains[v].ch;
	if (ch->n == 0 || ch->s[0].kind != XNV_STEP_PORT || ch->s[0].hop != 0)
		return -1;
	out = &c->ports[ch->s[0].id];
	if (!out->started || out->lat != NULL || w->id >= out->n_txq)
		return -1;
	return ch->s[0].id;
}

/* Send or resolve @p n packets port @p idx received (waiting since @p
 * since); what cannot be sent yet waits in the worker's pending list of
 * that port. */
static void
w_send(struct xnv_core *c, struct xnv_worker *w, uint16_t idx,
       struct rte_mbuf **m, unsigned n, uint64_t since, uint64_t now)
{
	struct xnv_pending *pd = &w->pend[idx];
	int dst = own_target(c, w, idx);
	const struct xnv_port *out;
	unsigned i, k, odd = 0;

	pd->n = 0;
	/* An empty or oversize frame is rejected (counted and dropped)
	 * where a burst is resolved: the whole burst goes that way. */
	for (i = 0; i < n && dst >= 0; i++)
		odd |= m[i]->nb_segs != 1 || m[i]->data_len == 0;
	if (dst < 0 || odd) {
		/* Resolved here like worker 0's own: to its NF or port,
		 * here or on the ring of the worker that polls it
		 * (worker_steer.c), or dropped and counted. */
		xnv_rx_burst(c, idx, &w->rpend[idx], m, n, now);
		return;
	}
	out = &c->ports[dst];
	if (unlikely(!out->link_up)) {	/* as last read (port.h) */
		count(&w->cnt.drops[XNV_DROP_LINK_DOWN], n);
		count(&w->cnt.rx[idx], n);
		rte_pktmbuf_free_bulk(m, n);
		return;
	}
	k = rte_eth_tx_burst(out->port_id, w->id, m, (uint16_t)n);
	count(&w->cnt.rx[idx], k);
	count(&w->cnt.tx[dst], k);
	if (k > 0)
		__atomic_store_n(&w->cnt.last_tx_tsc, now, __ATOMIC_RELAXED);
	if (k < n) {
		pd->n = (uint16_t)(n - k);
		memmove(pd->m, &m[k], pd->n * sizeof(m[0]));
		pd->since = since;
	}
}

/* Retry what waits for port @p idx; dropped after stall_timeout_ms.
 * @return 1 if some still wait. */
static int
w_flush(struct xnv_core *c, struct xnv_worker *w, uint16_t idx, uint64_t now)
{
	struct xnv_pending *pd = &w->pend[idx];
	struct rte_mbuf *m[GNTS_BURST_MAX];
	unsigned n = pd->n;

	if (n == 0)
		return 0;
	memcpy(m, pd->m, n * sizeof(m[0]));
	w_send(c, w, idx, m, n, pd->since, now);
	if (pd->n != 0 && now - pd->since > c->stall_tsc) {
		count(&w->cnt.drops[XNV_DROP_STALL], pd->n);
		count(&w->cnt.rx[idx], pd->n);
		xnv_free_parked(pd);
	}
	return pd->n != 0;
}

unsigned
xnv_worker_rx_port(struct xnv_core *c, struct xnv_worker *w, uint16_t idx,
		   uint64_t now)
{
	const struct xnv_port *p = &c->ports[idx];
	struct rte_mbuf *m[GNTS_BURST_MAX];
	unsigned n;

	if (xnv_flush_pending(c, &w->rpend[idx], now) ||
	    w_flush(c, w, idx, now))
		return 1;	/* waiting for room is not idleness */
	if (!p->rx_on || !p->started || w->id >= p->n_rxq)
		return 0;
	n = rte_eth_rx_burst(p->port_id, w->id, m, (uint16_t)c->cfg.burst);
	if (n == 0)
		return 0;
	if (w->cnt.first_rx_tsc == 0)
		__atomic_store_n(&w->cnt.first_rx_tsc, now, __ATOMIC_RELAXED);
	__atomic_store_n(&w->cnt.last_rx_tsc, now, __ATOMIC_RELAXED);
	w_send(c, w, idx, m, n, now, now);
	return n;
}

/* What worker @p w still held at its stop, dropped as shutdown: its
 * pending lists (what it was to send itself not yet counted as
 * received; what it resolved counted at rx). */
void
xnv_worker_drain(struct xnv_worker *w)
{
	uint16_t k;

	for (k = 0; k < XNV_MAX_PORTS; k++) {
		w->cnt.rx[k] += w->pend[k].n;
		w->cnt.drops[XNV_DROP_SHUTDOWN] += w->pend[k].n +
						   w->rpend[k].n;
		xnv_free_parked(&w->pend[k]);
		xnv_free_parked(&w->rpend[k]);	/* counted at rx */
	}
}

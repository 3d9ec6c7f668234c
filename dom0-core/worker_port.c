/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The workers' ports (worker.h): what worker w >= 1 does with what its
 * rx queue of a port received (sends it itself, resolves it, or hands it
 * to worker 0 as received), worker 0's side of those hand-offs, and what
 * a stopped worker still held.
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
 * the first step of its chain; -1 when worker 0 is to take them
 * (worker.h).  Read between barriers only, so all of it is stable.
 */
static int
own_target(const struct xnv_core *c, const struct xnv_worker *w, uint16_t idx)
{
	const struct xnv_chain *ch;
	const struct xnv_port *out;
	uint16_t v = c->port_chain[idx];

	if (v == XNV_CHAIN_NONE || c->cfg.ports[idx].fabric ||
	    c->ports[idx].vlan_strip || xnv_flows_active(c))
		return -1;
	ch = &c->chains[v].ch;
	if (ch->n == 0 || ch->s[0].kind != XNV_STEP_PORT || ch->s[0].hop != 0)
		return -1;
	out = &c->ports[ch->s[0].id];
	if (!out->started || out->lat != NULL || w->id >= out->n_txq)
		return -1;
	return ch->s[0].id;
}

/* May worker @p w resolve what port @p idx received itself: by the
 * port's chain, the flow rules (every worker applies them to its own
 * queues: flow.c), or a fabric port's hops (fabric.c; the hop table
 * changes inside the barrier only)?  Else it goes to worker 0 as
 * received, which counts and drops it as it always has. */
static int
steer_here(const struct xnv_core *c, uint16_t idx)
{
	return c->port_chain[idx] != XNV_CHAIN_NONE || xnv_flows_active(c) ||
	       c->cfg.ports[idx].fabric;
}

/* Send, resolve or hand on @p n packets port @p idx received (waiting since
 * @p since); what cannot go yet waits in the worker's pending list of
 * that port. */
static void
w_send(struct xnv_core *c, struct xnv_worker *w, uint16_t idx,
       struct rte_mbuf **m, unsigned n, uint64_t since, uint64_t now)
{
	struct xnv_pending *pd = &w->pend[idx];
	const uint16_t pid = c->ports[idx].port_id;
	int dst = own_target(c, w, idx);
	unsigned i, k, odd = 0;

	pd->n = 0;
	/* An empty or oversize frame is worker 0's to count and log: the
	 * whole burst goes there, in order. */
	for (i = 0; i < n; i++)
		odd |= m[i]->nb_segs != 1 || m[i]->data_len == 0;
	if (dst < 0 && !odd && steer_here(c, idx)) {
		/* Its chain starts elsewhere (an NF): resolved here like
		 * worker 0's own, to its NF or port, here or on the ring of
		 * the worker that polls it (worker_steer.c). */
		xnv_rx_burst(c, idx, &w->rpend[idx], m, n, now);
		return;
	}
	if (dst >= 0 && !odd) {
		const struct xnv_port *out = &c->ports[dst];

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
			__atomic_store_n(&w->cnt.last_tx_tsc, now,
					 __ATOMIC_RELAXED);
	} else {
		/* Worker 0 finds each packet's port by its port field (a
		 * driver may leave it unset). */
		for (i = 0; i < n; i++)
			m[i]->port = pid;
		k = rte_ring_sp_enqueue_burst(w->ring, (void **)m, n, NULL);
		count(&w->cnt.handed, k);
		if (k > 0)
			xnv_worker_kick(c->workers.w[0]);
	}
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

/* The index of the port with DPDK id @p pid; UINT16_MAX: none (closed
 * by a reload meanwhile). */
static uint16_t
port_index(const struct xnv_core *c, uint16_t pid)
{
	uint16_t i;

	for (i = 0; i < c->cfg.n_ports; i++)
		if (c->ports[i].port_id == pid && c->ports[i].started)
			return i;
	return UINT16_MAX;
}

/* Worker 0 takes what worker @p w handed over, one run of packets of one
 * port at a time, exactly as its own port's rx queue (xnv_rx_burst()). */
static unsigned
cross_rx(struct xnv_core *c, struct xnv_worker *w, uint64_t now)
{
	struct xnv_cross *x = &w->cross;
	uint16_t pid, idx, j, n;

	if (xnv_flush_pending(c, &x->pend, now))
		return 1;
	if (x->at == x->n) {
		x->at = 0;
		x->n = (uint16_t)rte_ring_sc_dequeue_burst(w->ring,
				(void **)x->m, c->cfg.burst, NULL);
		if (x->n == 0)
			return 0;
	}
	pid = x->m[x->at]->port;
	for (j = x->at + 1; j < x->n && x->m[j]->port == pid; j++)
		;
	n = j - x->at;
	x->taken += n;
	idx = port_index(c, pid);
	if (idx != UINT16_MAX) {
		xnv_rx_burst(c, idx, &x->pend, &x->m[x->at], n, now);
	} else {
		c->drops[XNV_DROP_SHUTDOWN] += n;
		rte_pktmbuf_free_bulk(&x->m[x->at], n);
	}
	x->at = j;
	return n;
}

unsigned
xnv_workers_rx(struct xnv_core *c, uint64_t now)
{
	unsigned work = 0;
	uint16_t i;

	for (i = 1; i < c->workers.n; i++)
		work += cross_rx(c, c->workers.w[i], now);
	return work + xnv_steered_rx(c, c->workers.w[0], now);
}

/* A handed packet no one steered, dropped at the stop: received by its
 * port (if still there) and dropped as shutdown. */
static void
drop_handed(struct xnv_core *c, struct rte_mbuf *m)
{
	uint16_t k = port_index(c, m->port);

	if (k != UINT16_MAX)
		c->ports[k].rx++;
	c->drops[XNV_DROP_SHUTDOWN]++;
	rte_pktmbuf_free(m);
}

/* What worker @p w still held at its stop, dropped as shutdown: its
 * pending lists and its ring (not yet counted as received), what worker
 * 0 took from it and has not finished (counted). */
void
xnv_worker_drain(struct xnv_core *c, struct xnv_worker *w)
{
	struct xnv_cross *x = &w->cross;
	struct rte_mbuf *m = NULL;
	uint16_t k;

	for (k = 0; k < XNV_MAX_PORTS; k++) {
		w->cnt.rx[k] += w->pend[k].n;
		w->cnt.drops[XNV_DROP_SHUTDOWN] += w->pend[k].n +
						   w->rpend[k].n;
		xnv_free_parked(&w->pend[k]);
		xnv_free_parked(&w->rpend[k]);	/* counted at rx */
	}
	while (x->at < x->n)
		drop_handed(c, x->m[x->at++]);
	while (rte_ring_sc_dequeue(w->ring, (void **)&m) == 0)
		drop_handed(c, m);
	c->drops[XNV_DROP_SHUTDOWN] += x->pend.n;
	xnv_free_parked(&x->pend);
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Packets between workers (worker.h): an NF is polled by the worker of
 * its service ([service] worker), so a packet resolved on one worker for
 * an NF of another, or for a port it cannot send on itself, crosses to
 * that worker through the SP/SC ring of the pair, in order.  The worker
 * that takes it sends it to the NF picked for it if that NF is still its
 * own and attached, and otherwise resolves it again (the NF left
 * meanwhile, or a port: worker 0 sends on queue 0), exactly as a packet
 * of its own; what cannot go yet waits in the pending list of that ring.
 */
#include <stdio.h>
#include <string.h>

#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_ring.h>
#include <rte_ring_peek_zc.h>

#include "core.h"
#include "worker.h"

unsigned
xnv_steer(struct xnv_core *c, uint16_t to_worker, uint16_t to_nf,
	  struct rte_mbuf **m, unsigned n)
{
	struct xnv_worker *me = xnv_worker_self();
	struct xnv_worker *to = c->workers.w[to_worker];
	unsigned i, k;

	for (i = 0; i < n; i++)
		xnv_priv(m[i])->to_nf = to_nf;
	k = rte_ring_sp_enqueue_burst(to->in[me->id], (void **)m, n, NULL);
	xnv_count(&me->cnt.steered, k);
	if (k > 0)
		xnv_worker_kick(to);
	return k;
}

/* The NF picked for a packet on its way here, if it is still this
 * worker's and attached; else NULL (resolve it again). */
static struct xnv_nfrec *
picked(struct xnv_core *c, const struct xnv_worker *w, uint16_t to_nf)
{
	struct xnv_nfrec *nf;

	if (to_nf >= XNV_MAX_NFS)
		return NULL;
	nf = &c->nfs[to_nf];
	return nf->state == XNV_REC_ATTACHED && nf->worker == w->id &&
	       !nf->q_req ? nf : NULL;
}

/* One run of packets with one target from @p x; @return how many. */
static unsigned
take_run(struct xnv_core *c, struct xnv_worker *w, struct xnv_cross *x,
	 uint64_t now)
{
	uint16_t to = xnv_priv(x->m[x->at])->to_nf;
	struct xnv_nfrec *nf = picked(c, w, to);
	unsigned j, n, k;

	for (j = x->at + 1u; j < x->n && xnv_priv(x->m[j])->to_nf == to; j++)
		;
	n = j - x->at;
	if (nf == NULL) {
		xnv_deliver(c, &x->pend, &x->m[x->at], n, now, now, 0);
	} else {
		k = xnv_send_nf(c, nf, &x->m[x->at], n);
		if (k < n) {
			x->pend.n = (uint16_t)(n - k);
			memcpy(x->pend.m, &x->m[x->at + k],
			       x->pend.n * sizeof(x->m[0]));
			x->pend.since = now;
		}
	}
	x->at = (uint16_t)j;
	return n;
}

/* What worker @p s steered to @p w: parked packets first (the ring is
 * not read while some wait: backpressure, order kept). */
static unsigned
from_one(struct xnv_core *c, struct xnv_worker *w, uint16_t s, uint64_t now)
{
	struct xnv_cross *x = &w->from[s];

	if (xnv_flush_pending(c, &x->pend, now))
		return 1;
	if (x->at == x->n) {
		x->at = 0;
		x->n = (uint16_t)rte_ring_sc_dequeue_burst(w->in[s],
				(void **)x->m, c->cfg.burst, NULL);
		if (x->n == 0)
			return 0;
	}
	return take_run(c, w, x, now);
}

unsigned
xnv_steered_rx(struct xnv_core *c, struct xnv_worker *w, uint64_t now)
{
	unsigned work = 0;
	uint16_t s;

	for (s = 0; s < c->workers.n; s++)
		if (w->in[s] != NULL)
			work += from_one(c, w, s, now);
	return work;
}

int
xnv_steer_open(struct xnv_core *c, char *err, size_t len)
{
	struct xnv_workers *ws = &c->workers;
	char name[RTE_RING_NAMESIZE];
	uint16_t a, b;

	for (b = 0; b < ws->n; b++)
		for (a = 0; a < ws->n; a++) {
			if (a == b)
				continue;
			snprintf(name, sizeof(name), "xnv_s%u_%u", a, b);
			/* As deep as an NF's ring: buffers on the way
			 * between workers are a pool's too. */
			ws->w[b]->in[a] = rte_ring_create(name,
					c->cfg.ring_size, (int)rte_socket_id(),
					RING_F_SP_ENQ | RING_F_SC_DEQ);
			if (ws->w[b]->in[a] == NULL) {
				snprintf(err, len, "ring from worker %u to "
					 "worker %u: out of memory", a, b);
				return -ENOMEM;
			}
		}
	return 0;
}

int
xnv_steer_pending(const struct xnv_core *c, uint16_t to)
{
	const struct xnv_worker *w = c->workers.w[to];
	uint16_t s;

	for (s = 0; s < c->workers.n; s++)
		if (w->in[s] != NULL && !rte_ring_empty(w->in[s]))
			return 1;
	return 0;
}

/* @p n packets dropped at the stop: received and counted already, by
 * the worker that received them. */
static void
drop_shutdown(struct xnv_core *c, struct rte_mbuf **m, unsigned n)
{
	c->drops[XNV_DROP_SHUTDOWN] += n;
	rte_pktmbuf_free_bulk(m, n);
}

void
xnv_steer_close(struct xnv_core *c)
{
	struct xnv_workers *ws = &c->workers;
	struct rte_mbuf *m[GNTS_BURST_MAX];
	uint16_t a, b;
	unsigned n;

	for (b = 0; b < ws->n; b++)
		for (a = 0; a < ws->n; a++) {
			struct xnv_cross *x = &ws->w[b]->from[a];

			if (ws->w[b]->in[a] == NULL)
				continue;
			drop_shutdown(c, &x->m[x->at], x->n - x->at);
			x->at = x->n = 0;
			drop_shutdown(c, x->pend.m, x->pend.n);
			x->pend.n = 0;
			while ((n = rte_ring_sc_dequeue_burst(ws->w[b]->in[a],
					(void **)m, RTE_DIM(m), NULL)) > 0)
				drop_shutdown(c, m, n);
			rte_ring_free(ws->w[b]->in[a]);
			ws->w[b]->in[a] = NULL;
		}
}

void
xnv_steer_mark(struct xnv_core *c, void (*mark)(uint8_t *, struct rte_mbuf *),
	       uint8_t *live)
{
	struct xnv_workers *ws = &c->workers;
	struct rte_ring_zc_data zc;
	uint16_t a, b;
	unsigned i, n;

	for (b = 0; b < ws->n; b++)
		for (a = 0; a < ws->n; a++) {
			const struct xnv_cross *x = &ws->w[b]->from[a];
			struct rte_ring *r = ws->w[b]->in[a];

			if (r == NULL)
				continue;
			for (i = x->at; i < x->n; i++)
				mark(live, x->m[i]);
			for (i = 0; i < x->pend.n; i++)
				mark(live, x->pend.m[i]);
			/* In the ring: looked at in place and left there
			 * (its consumer is parked: worker.h). */
			n = rte_ring_dequeue_zc_burst_start(r,
					rte_ring_count(r), &zc, NULL);
			for (i = 0; i < n; i++) {
				void **p = i < zc.n1 ? (void **)zc.ptr1 + i :
					   (void **)zc.ptr2 + (i - zc.n1);

				mark(live, *p);
			}
			rte_ring_dequeue_zc_finish(r, 0);
		}
	/* What a worker resolved from its ports and parked. */
	for (b = 1; b < ws->n; b++)
		for (i = 0; i < XNV_MAX_PORTS; i++)
			for (n = 0; n < ws->w[b]->rpend[i].n; n++)
				mark(live, ws->w[b]->rpend[i].m[n]);
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* The workers of [core] workers: see worker.h. */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_pause.h>
#include <rte_telemetry.h>

#include "core.h"
#include "doorbell.h"
#include "flow.h"
#include "worker.h"
#include "worker_sync.h"

/* Idle passes before a worker pauses, yields (few: see doorbell.c), then
 * sleeps. */
#define W_SPINS  256u
#define W_PAUSES 1024u
#define W_YIELDS (W_PAUSES + 16u)

/* A counter of the worker's own, read by worker 0 (xnv_workers_fold()):
 * one writer, so a plain add stored whole. */
static inline void
count(uint64_t *x, uint64_t n)
{
	__atomic_store_n(x, *x + n, __ATOMIC_RELAXED);
}

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

/* Packets were just put on a worker's ring: worker 0 woken if it sleeps
 * (worker.h, Idle). */
static inline void
handed(struct xnv_workers *ws)
{
	const uint64_t one = 1;

	/* A failed write can only be a full counter: a kick is pending. */
	if (xnv_sync_kick_due(&ws->main_asleep) &&
	    write(ws->efd, &one, sizeof(one)) < 0)
		return;
}

/* Send or hand on @p n packets port @p idx received (waiting since
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
	for (i = 0; dst >= 0 && i < n; i++)
		odd |= m[i]->nb_segs != 1 || m[i]->data_len == 0;
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
			handed(&c->workers);
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

static unsigned
w_rx_port(struct xnv_core *c, struct xnv_worker *w, uint16_t idx,
	  uint64_t now)
{
	const struct xnv_port *p = &c->ports[idx];
	struct rte_mbuf *m[GNTS_BURST_MAX];
	unsigned n;

	if (w_flush(c, w, idx, now))
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

/* Nothing to do: spin, pause, yield a little, then sleep briefly (never
 * with --idle-sleep poll). */
static void
w_backoff(const struct xnv_core *c, unsigned *idle)
{
	unsigned n = (*idle)++;

	if (c->idle == GNTS_IDLE_POLL || n < W_SPINS)
		return;
	if (n < W_PAUSES) {
		rte_pause();
		return;
	}
	if (n < W_YIELDS) {
		sched_yield();
		return;
	}
	n -= W_YIELDS;
	if (c->idle == GNTS_IDLE_DOORBELL)	/* as worker 0's port polls */
		rte_delay_us_sleep(RTE_MIN(32u << RTE_MIN(n, 15u),
					   c->idle_max_us));
	else
		rte_delay_us_sleep(RTE_MIN(1u << RTE_MIN(n / 64, 6u),
					   XNV_IDLE_SLEEP_MAX_US));
}

static int
w_main(void *arg)
{
	struct xnv_worker *w = arg;
	struct xnv_core *c = w->c;
	struct xnv_workers *ws = &c->workers;
	unsigned idle = 0, work;
	uint16_t i;

	while (!__atomic_load_n(&ws->stop, __ATOMIC_RELAXED)) {
		/* The barrier (worker_sync.h): what worker 0 changed
		 * inside it is seen by this pass. */
		uint64_t g = xnv_sync_pass(&ws->gen);
		uint64_t now;

		if (unlikely(g & 1)) {
			xnv_sync_ack(&w->ack, g);
			while (xnv_sync_pass(&ws->gen) == g &&
			       !__atomic_load_n(&ws->stop, __ATOMIC_RELAXED))
				rte_pause();
			continue;
		}
		now = rte_rdtsc();
		work = 0;
		for (i = 0; i < c->cfg.n_ports; i++)
			work += w_rx_port(c, w, i, now);
		if (work != 0)
			idle = 0;
		else
			w_backoff(c, &idle);
	}
	return 0;
}

int
xnv_workers_check(const struct xnv_core *c, char *err, size_t len)
{
	unsigned have = rte_lcore_count();

	if (c->cfg.workers <= have)
		return 0;
	snprintf(err, len, "[core] workers = %u needs %u lcores, EAL gave %u: "
		 "start xnv-core with as many, such as -l 0-%u (%s)",
		 c->cfg.workers, c->cfg.workers, have, c->cfg.workers - 1,
		 c->cfg.path);
	return -EINVAL;
}

/* The eventfd a worker kicks worker 0 with, in its epoll set (the NFs'
 * doorbells'; data.ptr is the workers' struct).  -1 with errno set and
 * a line in @p err on failure. */
static int
kick_open(struct xnv_core *c, char *err, size_t len)
{
	struct epoll_event ev = { .events = EPOLLIN,
				  .data.ptr = &c->workers };
	int fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);

	if (fd < 0 || (c->bell_epfd >= 0 &&
		       epoll_ctl(c->bell_epfd, EPOLL_CTL_ADD, fd, &ev) < 0)) {
		snprintf(err, len, "workers' eventfd: %s", strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	c->workers.efd = fd;
	return 0;
}

int
xnv_workers_start(struct xnv_core *c, char *err, size_t len)
{
	struct xnv_workers *ws = &c->workers;
	struct xnv_worker *w;
	char name[RTE_RING_NAMESIZE];
	unsigned lcore;

	ws->n = 1;
	ws->efd = -1;
	if (c->cfg.workers > 1 && kick_open(c, err, len) < 0)
		return -errno;
	RTE_LCORE_FOREACH_WORKER(lcore) {
		if (ws->n >= c->cfg.workers)
			break;
		w = rte_zmalloc("xnv_worker", sizeof(*w), RTE_CACHE_LINE_SIZE);
		snprintf(name, sizeof(name), "xnv_w%u", ws->n);
		if (w != NULL)
			w->ring = rte_ring_create(name, XNV_WORKER_RING,
						  (int)rte_socket_id(),
						  RING_F_SP_ENQ | RING_F_SC_DEQ);
		if (w == NULL || w->ring == NULL) {
			snprintf(err, len, "worker %u: out of memory", ws->n);
			rte_free(w);
			return -ENOMEM;
		}
		w->id = ws->n;
		w->lcore = lcore;
		w->c = c;
		ws->w[ws->n++] = w;
		if (rte_eal_remote_launch(w_main, w, lcore) != 0) {
			snprintf(err, len, "worker %u: lcore %u is busy",
				 w->id, lcore);
			return -EBUSY;
		}
		XLOG(INFO, "worker %u on lcore %u: rx and tx queue %u of each "
		     "port that has one\n", w->id, lcore, w->id);
	}
	return 0;
}

int
xnv_workers_sleep_prepare(struct xnv_core *c)
{
	struct xnv_workers *ws = &c->workers;
	uint16_t i;

	if (ws->n <= 1)
		return 1;
	xnv_sync_sleep_say(&ws->main_asleep);	/* worker_sync.h */
	for (i = 1; i < ws->n; i++)
		if (!rte_ring_empty(ws->w[i]->ring)) {
			xnv_sync_awake(&ws->main_asleep);
			return 0;
		}
	return 1;
}

void
xnv_workers_sleep_done(struct xnv_core *c)
{
	struct xnv_workers *ws = &c->workers;
	uint64_t v;

	if (ws->n <= 1)
		return;
	xnv_sync_awake(&ws->main_asleep);
	/* A kick taken or not, the fd is left empty (non-blocking). */
	while (read(ws->efd, &v, sizeof(v)) == (ssize_t)sizeof(v))
		;
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
	return work;
}

static inline void
fold(uint64_t *into, uint64_t *folded, const uint64_t *cur)
{
	uint64_t v = __atomic_load_n(cur, __ATOMIC_RELAXED);

	*into += v - *folded;
	*folded = v;
}

static inline void
fold_latest(uint64_t *into, const uint64_t *cur)
{
	uint64_t v = __atomic_load_n(cur, __ATOMIC_RELAXED);

	if (v > *into)
		*into = v;
}

void
xnv_workers_fold(struct xnv_core *c)
{
	uint16_t i, k;

	for (i = 1; i < c->workers.n; i++) {
		struct xnv_worker *w = c->workers.w[i];
		uint64_t first;

		for (k = 0; k < XNV_MAX_PORTS; k++) {
			fold(&c->ports[k].rx, &w->folded.rx[k], &w->cnt.rx[k]);
			fold(&c->ports[k].tx, &w->folded.tx[k], &w->cnt.tx[k]);
		}
		for (k = 0; k < XNV_DROP_N; k++)
			fold(&c->drops[k], &w->folded.drops[k],
			     &w->cnt.drops[k]);
		first = __atomic_load_n(&w->cnt.first_rx_tsc, __ATOMIC_RELAXED);
		if (first != 0 && (c->first_rx_tsc == 0 ||
				   first < c->first_rx_tsc))
			c->first_rx_tsc = first;
		fold_latest(&c->last_rx_tsc, &w->cnt.last_rx_tsc);
		fold_latest(&c->last_tx_tsc, &w->cnt.last_tx_tsc);
	}
}

void
xnv_workers_park(struct xnv_core *c, int on)
{
	struct xnv_workers *ws = &c->workers;
	uint64_t g;
	uint16_t i;

	if (ws->n <= 1)
		return;
	if (!on) {
		xnv_sync_lower(&ws->gen);	/* worker_sync.h */
		return;
	}
	g = xnv_sync_raise(&ws->gen);
	for (i = 1; i < ws->n; i++)
		while (!xnv_sync_acked(&ws->w[i]->ack, g))
			rte_pause();
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
static void
w_drain(struct xnv_core *c, struct xnv_worker *w)
{
	struct xnv_cross *x = &w->cross;
	struct rte_mbuf *m = NULL;
	uint16_t k;

	for (k = 0; k < XNV_MAX_PORTS; k++) {
		w->cnt.rx[k] += w->pend[k].n;
		w->cnt.drops[XNV_DROP_SHUTDOWN] += w->pend[k].n;
		xnv_free_parked(&w->pend[k]);
	}
	while (x->at < x->n)
		drop_handed(c, x->m[x->at++]);
	while (rte_ring_sc_dequeue(w->ring, (void **)&m) == 0)
		drop_handed(c, m);
	c->drops[XNV_DROP_SHUTDOWN] += x->pend.n;
	xnv_free_parked(&x->pend);
}

static uint64_t
sent(const struct xnv_worker *w)
{
	uint64_t n = 0;
	uint16_t k;

	for (k = 0; k < XNV_MAX_PORTS; k++)
		n += w->cnt.tx[k];
	return n;
}

/* Workers 1..: what each sent itself, handed over, dropped; with the
 * main lcore's, what it took from each.  Run inside the barrier. */
void
xnv_cmd_workers(struct xnv_core *c, const char *p, struct rte_tel_data *d)
{
	const struct xnv_workers *ws = &c->workers;
	char key[8];
	uint64_t drops;
	uint16_t i, k;

	(void)p;
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "workers", c->cfg.workers);
	rte_tel_data_add_dict_u64(d, "main_lcore", rte_get_main_lcore());
	for (i = 1; i < ws->n; i++) {
		const struct xnv_worker *w = ws->w[i];
		struct rte_tel_data *x = rte_tel_data_alloc();

		if (x == NULL)
			break;
		for (drops = 0, k = 0; k < XNV_DROP_N; k++)
			drops += w->cnt.drops[k];
		rte_tel_data_start_dict(x);
		rte_tel_data_add_dict_u64(x, "lcore", w->lcore);
		rte_tel_data_add_dict_u64(x, "sent", sent(w));
		rte_tel_data_add_dict_u64(x, "handed", w->cnt.handed);
		rte_tel_data_add_dict_u64(x, "taken", w->cross.taken);
		rte_tel_data_add_dict_u64(x, "drops", drops);
		snprintf(key, sizeof(key), "%u", i);
		if (rte_tel_data_add_dict_container(d, key, x, 0) != 0)
			rte_tel_data_free(x);
	}
}

void
xnv_workers_stop(struct xnv_core *c)
{
	struct xnv_workers *ws = &c->workers;
	uint16_t i;

	if (ws->n <= 1)
		goto out;
	__atomic_store_n(&ws->stop, 1, __ATOMIC_RELAXED);
	for (i = 1; i < ws->n; i++)
		(void)rte_eal_wait_lcore(ws->w[i]->lcore);
	for (i = 1; i < ws->n; i++) {
		struct xnv_worker *w = ws->w[i];

		w_drain(c, w);
		XLOG(INFO, "worker %u (lcore %u): %" PRIu64 " packets sent "
		     "itself, %" PRIu64 " handed to the main lcore\n", w->id,
		     w->lcore, sent(w), w->cnt.handed);
	}
	xnv_workers_fold(c);
	for (i = 1; i < ws->n; i++) {
		rte_ring_free(ws->w[i]->ring);
		rte_free(ws->w[i]);
		ws->w[i] = NULL;
	}
	ws->n = 1;
out:
	if (ws->efd >= 0)
		close(ws->efd);	/* leaves the epoll set with it */
	ws->efd = -1;
}

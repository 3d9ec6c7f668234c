/* SPDX-License-Identifier: BSD-3-Clause */
/* The workers of [core] workers: see worker.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_pause.h>
#include <rte_telemetry.h>

#include "core.h"
#include "doorbell.h"
#include "flow.h"
#include "worker.h"
#include "worker_pvt.h"
#include "worker_sync.h"

RTE_DEFINE_PER_LCORE(struct xnv_worker *, xnv_self);

static int
w_main(void *arg)
{
	struct xnv_worker *w = arg;
	struct xnv_core *c = w->c;
	struct xnv_workers *ws = &c->workers;
	uint64_t next_watch = 0;
	unsigned idle = 0, work;
	uint16_t i;

	RTE_PER_LCORE(xnv_self) = w;
	xnv_lcore_rt(c);
	xnv_flows_online(c, w->id, 1);	/* it classifies (flow.c) */
	while (!__atomic_load_n(&ws->stop, __ATOMIC_RELAXED)) {
		/* The barrier (worker_sync.h): what worker 0 changed
		 * inside it is seen by this pass. */
		uint64_t g = xnv_sync_pass(&ws->gen);
		uint64_t now;

		if (unlikely(g & 1)) {
			xnv_sync_ack(&w->ack, g);
			while (xnv_sync_pass(&ws->gen) == g &&
			       !__atomic_load_n(&ws->stop, __ATOMIC_RELAXED)) {
				xnv_flows_quiescent(c, w->id);	/* parked */
				rte_pause();
			}
			continue;
		}
		now = rte_rdtsc();
		work = 0;
		for (i = 0; i < c->cfg.n_ports; i++)
			work += xnv_worker_rx_port(c, w, i, now);
		work += xnv_rx_nfs(c, w->id, now);
		work += xnv_steered_rx(c, w, now);
		if (work != 0) {
			idle = 0;
			if (unlikely(w->n_dozing != 0))
				xnv_bells_wake_all(c);
		} else if (c->idle != GNTS_IDLE_POLL) {
			/* As worker 0: its doorbells, its NFs' (doorbell.c). */
			xnv_idle_backoff(c, &idle);
		}
		/* Its NFs' heartbeats and hoarding once a millisecond (a
		 * detach or quarantine asked of worker 0: guard.c). */
		if (now >= next_watch) {
			next_watch = now + c->tsc_hz / 1000;
			xnv_flows_quiescent(c, w->id);	/* no rule set held */
			xnv_rec_watch(c, rte_rdtsc());
		}
	}
	xnv_flows_online(c, w->id, 0);
	return 0;
}

static struct xnv_worker *
worker_new(struct xnv_core *c, uint16_t id, unsigned lcore)
{
	struct xnv_worker *w = rte_zmalloc("xnv_worker", sizeof(*w),
					   RTE_CACHE_LINE_SIZE);

	if (w == NULL)
		return NULL;
	w->id = id;
	w->lcore = lcore;
	w->c = c;
	w->epfd = w->port_epfd = w->efd = -1;
	return w;
}

int
xnv_workers_init(struct xnv_core *c)
{
	struct xnv_workers *ws = &c->workers;
	uint16_t i;

	ws->n = 1;
	ws->w[0] = worker_new(c, 0, rte_lcore_id());
	if (ws->w[0] == NULL)
		return -ENOMEM;
	RTE_PER_LCORE(xnv_self) = ws->w[0];
	ws->made = 1;
	/* The others' epoll sets now: a port's queue w may have an rx
	 * interrupt for worker w's set when it opens (port_intr.c). */
	for (i = 1; i < c->cfg.workers; i++) {
		struct xnv_worker *w = worker_new(c, i, 0);

		if (w == NULL)
			return -ENOMEM;
		ws->w[ws->made++] = w;
		w->epfd = epoll_create1(EPOLL_CLOEXEC);
		w->port_epfd = epoll_create1(EPOLL_CLOEXEC);
		if (w->epfd < 0 || w->port_epfd < 0)
			return -errno;
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

/* Worker @p w's epoll set (worker 0's is the core's, made already) and
 * the eventfd others kick it with, in that set (data.ptr: the worker).
 * -1 with errno set and a line in @p err on failure. */
static int
kick_open(struct xnv_worker *w, char *err, size_t len)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = w };

	if (w->epfd < 0)
		w->epfd = epoll_create1(EPOLL_CLOEXEC);
	w->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (w->epfd < 0 || w->efd < 0 ||
	    epoll_ctl(w->epfd, EPOLL_CTL_ADD, w->efd, &ev) < 0) {
		snprintf(err, len, "worker %u's doorbells: %s", w->id,
			 strerror(errno));
		return -1;
	}
	return 0;
}

int
xnv_workers_start(struct xnv_core *c, char *err, size_t len)
{
	struct xnv_workers *ws = &c->workers;
	struct xnv_worker *w;
	unsigned lcore;
	uint16_t i;
	int rc;

	RTE_LCORE_FOREACH_WORKER(lcore) {
		if (ws->n >= ws->made)
			break;
		w = ws->w[ws->n];
		w->lcore = lcore;
		ws->n++;
	}
	if ((rc = xnv_steer_open(c, err, len)) < 0)
		return rc;
	for (i = 0; i < ws->n && ws->n > 1; i++)
		if (kick_open(ws->w[i], err, len) < 0)
			return -errno;
	for (i = 1; i < ws->n; i++) {
		w = ws->w[i];
		if (rte_eal_remote_launch(w_main, w, w->lcore) != 0) {
			snprintf(err, len, "worker %u: lcore %u is busy",
				 w->id, w->lcore);
			return -EBUSY;
		}
		XLOG(INFO, "worker %u on lcore %u: rx and tx queue %u of each "
		     "port that has one, and the NFs of its services\n",
		     w->id, w->lcore, w->id);
	}
	return 0;
}

int
xnv_workers_sleep_prepare(struct xnv_core *c, struct xnv_worker *w)
{
	struct xnv_workers *ws = &c->workers;

	if (ws->n <= 1)
		return 1;
	xnv_sync_sleep_say(&w->asleep);	/* worker_sync.h */
	/* Worker 0 raising the barrier or stopping them kicks after its
	 * store: seen here, or the kick comes. */
	if ((w->id != 0 && ((xnv_sync_pass(&ws->gen) & 1) ||
			    __atomic_load_n(&ws->stop, __ATOMIC_RELAXED))) ||
	    xnv_steer_pending(c, w->id)) {
		xnv_sync_awake(&w->asleep);
		return 0;
	}
	return 1;
}

void
xnv_workers_sleep_done(struct xnv_core *c, struct xnv_worker *w)
{
	uint64_t v;

	if (c->workers.n <= 1)
		return;
	xnv_sync_awake(&w->asleep);
	/* A kick taken or not, the fd is left empty (non-blocking). */
	while (read(w->efd, &v, sizeof(v)) == (ssize_t)sizeof(v))
		;
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

/* What worker @p w counted for ports, services and groups since the
 * last fold. */
static void
fold_objects(struct xnv_core *c, struct xnv_worker *w)
{
	struct xnv_wcount *f = &w->folded, *k = &w->cnt;
	uint16_t i, j;

	for (i = 0; i < c->cfg.n_ports; i++) {
		fold(&c->ports[i].rx, &f->rx[i], &k->rx[i]);
		fold(&c->ports[i].tx, &f->tx[i], &k->tx[i]);
		fold(&c->ports[i].nf_quota, &f->nf_quota[i], &k->nf_quota[i]);
		fold(&c->ports[i].rx_wakes, &f->rx_wakes[i],
		     &k->rx_wakes[i]);
	}
	for (i = 0; i < c->cfg.n_services; i++) {
		struct xnv_service *s = &c->services[i];

		fold(&s->picks_affinity, &f->picks_affinity[i],
		     &k->picks_affinity[i]);
		fold(&s->picks_spill, &f->picks_spill[i], &k->picks_spill[i]);
		fold(&s->no_instance, &f->no_instance[i], &k->no_instance[i]);
	}
	for (i = 0; i < c->cfg.n_groups; i++) {
		fold(&c->pools[i].copies_in, &f->copies_in[i],
		     &k->copies_in[i]);
		for (j = 0; j < c->cfg.n_groups; j++)
			fold(&c->copies[i][j], &f->copies[i][j],
			     &k->copies[i][j]);
	}
	for (i = 0; i < RTE_DIM(k->hop_seen); i++) {
		uint64_t seen = __atomic_load_n(&k->hop_seen[i],
						__ATOMIC_RELAXED);

		for (; seen != 0; seen &= seen - 1) {
			uint16_t h = (uint16_t)(i * 64 + __builtin_ctzll(seen));

			fold(&c->hops[h].rx, &f->hop_rx[h], &k->hop_rx[h]);
			fold(&c->hops[h].tx, &f->hop_tx[h], &k->hop_tx[h]);
		}
	}
}

void
xnv_workers_fold(struct xnv_core *c)
{
	uint16_t i, k;

	for (i = 0; i < c->workers.n; i++) {
		struct xnv_worker *w = c->workers.w[i];
		uint64_t first;

		fold_objects(c, w);
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

/* Until worker @p w acked generation @p g; a wait over a second is said
 * (once a wait: its lcore's thread had no CPU, or never got to the top
 * of its loop), since every control command waits behind it. */
static void
park_wait(const struct xnv_core *c, const struct xnv_worker *w, uint64_t g)
{
	uint64_t t0 = rte_rdtsc(), said = 0;

	while (!xnv_sync_acked(&w->ack, g)) {
		rte_pause();
		if (said == 0 && rte_rdtsc() - t0 > c->tsc_hz) {
			said = 1;
			XLOG(WARNING, "worker %u (lcore %u) has not parked in "
			     "1 s: control commands wait for it\n", w->id,
			     w->lcore);
		}
	}
	if (said)
		XLOG(WARNING, "worker %u parked after %.1f s\n", w->id,
		     (double)(rte_rdtsc() - t0) / c->tsc_hz);
}

void
xnv_workers_park(struct xnv_core *c, int on)
{
	struct xnv_workers *ws = &c->workers;
	uint64_t g;
	uint16_t i;

	if (ws->n <= 1 || xnv_worker_self()->id != 0)
		return;
	if (!on) {
		if (--ws->park_depth == 0)
			xnv_sync_lower(&ws->gen);	/* worker_sync.h */
		return;
	}
	if (ws->park_depth++ != 0)
		return;
	g = xnv_sync_raise(&ws->gen);
	/* A worker asleep on its doorbells wakes to park: the raise and its
	 * "asleep" are the two stores of worker_sync.h's handshake (it looks
	 * at the barrier after saying it sleeps, xnv_workers_sleep_prepare). */
	for (i = 1; i < ws->n; i++)
		xnv_worker_kick(ws->w[i]);
	for (i = 1; i < ws->n; i++)
		park_wait(c, ws->w[i], g);
}

/* A per-port counter of a worker's, over all ports. */
static uint64_t
all_ports(const uint64_t v[XNV_MAX_PORTS])
{
	uint64_t n = 0;
	uint16_t k;

	for (k = 0; k < XNV_MAX_PORTS; k++)
		n += v[k];
	return n;
}

/* Attached NFs worker @p w polls. */
static unsigned
nfs_of(const struct xnv_core *c, uint16_t w)
{
	unsigned n = 0;
	uint16_t i;

	for (i = 0; i < c->n_active; i++)
		n += c->nfs[c->active[i]].worker == w &&
		     c->nfs[c->active[i]].state == XNV_REC_ATTACHED;
	return n;
}

/* Every worker, the main lcore's (0) too: what its rx queues received,
 * what it sent, steered, dropped, its NFs.  Run inside the barrier. */
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
	for (i = 0; i < ws->n; i++) {
		const struct xnv_worker *w = ws->w[i];
		struct rte_tel_data *x = rte_tel_data_alloc();

		if (x == NULL)
			break;
		for (drops = 0, k = 0; k < XNV_DROP_N; k++)
			drops += w->cnt.drops[k];
		rte_tel_data_start_dict(x);
		rte_tel_data_add_dict_u64(x, "lcore", w->lcore);
		rte_tel_data_add_dict_u64(x, "rx", all_ports(w->cnt.rx));
		rte_tel_data_add_dict_u64(x, "sent", all_ports(w->cnt.tx));
		rte_tel_data_add_dict_u64(x, "steered", w->cnt.steered);
		rte_tel_data_add_dict_u64(x, "nfs", nfs_of(c, i));
		rte_tel_data_add_dict_u64(x, "rx_wakes",
					  all_ports(w->cnt.rx_wakes));
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
		goto fold;
	__atomic_store_n(&ws->stop, 1, __ATOMIC_RELAXED);
	for (i = 1; i < ws->n; i++)
		xnv_worker_kick(ws->w[i]);	/* one asleep wakes to stop */
	for (i = 1; i < ws->n; i++)
		(void)rte_eal_wait_lcore(ws->w[i]->lcore);
	for (i = 1; i < ws->n; i++) {
		struct xnv_worker *w = ws->w[i];

		xnv_worker_drain(w);
		XLOG(INFO, "worker %u (lcore %u): %" PRIu64 " packets sent "
		     "itself, %" PRIu64 " steered to other workers\n", w->id,
		     w->lcore, all_ports(w->cnt.tx), w->cnt.steered);
	}
	xnv_steer_close(c);
	/* Their NFs are worker 0's (quiesce detaches them). */
	for (i = 0; i < c->n_active; i++) {
		struct xnv_nfrec *nf = &c->nfs[c->active[i]];

		if (nf->worker != 0)
			xnv_bell_move(c, nf, 0);
	}
	xnv_workers_fold(c);
	ws->n = 1;
fold:
	/* Their queues' interrupts are out of their sets between sleeps
	 * (port_intr.c): nothing of DPDK's is left in what is closed. */
	for (i = 1; i < ws->made; i++) {
		struct xnv_worker *w = ws->w[i];

		if (w->efd >= 0)
			close(w->efd);
		if (w->epfd >= 0)
			close(w->epfd);
		if (w->port_epfd >= 0)
			close(w->port_epfd);
		rte_free(w);
		ws->w[i] = NULL;
	}
	ws->made = 1;
	xnv_workers_fold(c);	/* worker 0's (it lives on: quiesce counts) */
	if (ws->w[0]->efd >= 0)
		close(ws->w[0]->efd);	/* leaves the epoll set with it */
	ws->w[0]->efd = -1;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * xnv-core on several lcores ([core] workers = N, docs/DESIGN.md 4.1).
 *
 * Worker 0 is the main lcore: it polls rx queue 0 of every port, the NFs
 * of the services whose [service] worker is 0, and runs the control
 * plane.  Worker w >= 1 runs on the w-th worker lcore EAL gives, polls rx
 * queue w of each port that has one (port.c gives each port a queue per
 * worker, as many as it has) and the NFs of its services:
 *
 *   - a packet whose port's chain starts with a port step (no hop, no
 *     flow rules, [core] latency off, a tx queue w there)
 *     it sends itself on tx queue w: the core-only path, which touches
 *     no packet data and no private area;
 *   - every other packet it resolves itself, as worker 0 does its own
 *     (xnv_rx_burst()): a chain that starts with an NF or a drop (a
 *     port with no chain drops), flow rules (its own verdict cache, hit
 *     counters and RCU reader id: flow.c), a fabric port's hop tag
 *     (fabric.c); an empty or oversize frame it counts and drops.
 *     Nothing a worker receives needs worker 0.
 *
 * An NF's rings, its doorbells and its counters are its worker's only
 * (nf->worker).  A packet resolved on one worker for another worker's NF,
 * or for a port it has no tx queue of, crosses on the SP/SC ring of that
 * pair (worker_steer.c).  A flow comes in on one queue and each crossing
 * is one FIFO ring: its order is kept.
 *
 * Counters: every worker's (worker 0's too) are its own lines, written
 * only by it; worker 0 adds what they gained to the core's
 * (c->ports[].rx, tx, c->drops[], ...) once a millisecond, before every
 * control command and at exit (xnv_workers_fold()), so every report reads
 * one set.
 *
 * Control plane: what a worker reads of the core (ports, their chains,
 * the chain versions, services, the NFs polled) changes only inside a
 * barrier (xnv_workers_park()): worker 0 raises it (an odd generation),
 * each worker sees it at the top of its loop, says so (acks that
 * generation) and waits; worker 0 changes things and lowers it.  Taken
 * by control commands, attaches and detaches, and what worker 0 does of
 * other workers' asking, never on the data path.  A worker that would
 * quarantine one of its NFs asks worker 0 to (guard.c) and stops polling
 * it.  The flow rules' sets change outside it, under RCU (flow.c).
 * Three flags worker 0 writes whole outside the barrier, a worker may
 * read one pass late: a port's link_up (the link watch: one burst more
 * sent or dropped), rx_on (an NF's attach opening a port's rx: one burst
 * later) and a memif port's started (never a worker's queue:
 * one_queue).
 *
 * Idle: every worker backs off as worker 0 does (doorbell.c): spins,
 * pauses, yields a little, then sleeps (never with --idle-sleep poll),
 * with doorbell on its own epoll set: its NFs' doorbells and its eventfd.
 * It says it sleeps (asleep), then looks at every ring another worker
 * fills for it (and at the barrier); a worker enqueues, then looks at
 * asleep and kicks the eventfd.  A full barrier on each side between the
 * two makes one of them see the other (no lost wake-up).
 */
#ifndef XNV_WORKER_H
#define XNV_WORKER_H

#include <stdint.h>
#include <unistd.h>

#include <rte_per_lcore.h>
#include <rte_ring.h>

#include "config.h"
#include "datapath.h"
#include "worker_sync.h"

/* Included by core.h after enum xnv_drop, before struct xnv_core. */
struct xnv_core;

/* What a worker reads from another's ring and has not finished. */
struct xnv_cross {
	struct rte_mbuf *m[GNTS_BURST_MAX];	/* taken, not yet steered */
	uint16_t at, n;				/* m[at..n) */
	struct xnv_pending pend;		/* steered, waiting for room */
};

/*
 * A worker's counters (worker 0's too): written by it only, through
 * xnv_count() (one writer: a plain add stored whole), and added to the
 * core's own (c->ports[].rx, c->drops[], ...) by worker 0's
 * xnv_workers_fold(), which every report calls first.  So the data path
 * counts into lines of its own lcore and every report reads one set.
 */
struct xnv_wcount {
	uint64_t rx[XNV_MAX_PORTS];	/* received on its queues, once
					 * sent, resolved or dropped */
	uint64_t tx[XNV_MAX_PORTS];
	uint64_t nf_quota[XNV_MAX_PORTS];	/* by the port they came in on */
	uint64_t drops[XNV_DROP_N];
	uint64_t steered;		/* to other workers' NFs (or ports) */
	uint64_t first_rx_tsc, last_rx_tsc, last_tx_tsc;
	uint64_t rx_wakes[XNV_MAX_PORTS];	/* sleeps its queue's rx
						 * interrupt ended */
	uint64_t picks_affinity[XNV_MAX_SERVICES];
	uint64_t picks_spill[XNV_MAX_SERVICES];
	uint64_t no_instance[XNV_MAX_SERVICES];
	uint64_t copies[XNV_MAX_GROUPS][XNV_MAX_GROUPS];	/* [from][to] */
	uint64_t copies_in[XNV_MAX_GROUPS];	/* into group g's pools */
	uint64_t hop_rx[XNV_HOP_MAX + 1];	/* fabric.h: arrived with it */
	uint64_t hop_tx[XNV_HOP_MAX + 1];	/* fabric.h: tagged and sent */
	uint64_t hop_seen[(XNV_HOP_MAX + 64) / 64];	/* hops counted in
							 * hop_rx or hop_tx,
							 * a bit each */
};

struct xnv_worker {
	/* The worker's own lines. */
	uint16_t id;			/* 0: the main lcore */
	unsigned lcore;
	struct xnv_core *c;
	/* Idle (doorbell.c): it sleeps on epfd, its NFs' doorbells and efd
	 * (worker 0's: the core's, with the ports' interrupts). */
	int epfd;
	int port_epfd;			/* its rx queues' interrupts, one fd of
					 * epfd's set once a port has one
					 * (port_intr.c; worker 0's: the
					 * core's) */
	uint8_t port_ep_listened;	/* ... joined epfd's set */
	uint8_t intr_armed[XNV_MAX_PORTS];	/* its queue's interrupt
						 * enabled: it sleeps */
	int efd;			/* eventfd in epfd: kicked by a worker
					 * that steers it packets while it
					 * sleeps (-1: none) */
	uint16_t n_dozing;		/* its NFs left asleep between waits,
					 * not polled (doorbell.c) */
	uint64_t idle_since_tsc;	/* idle since (xnv_idle_backoff) */
	uint64_t kick_tsc;		/* its last kick to an NF */
	uint64_t watch_tsc;		/* its NFs' last heartbeat watch
					 * (guard.c) */
	/* 1 while it sleeps on epfd: whoever puts packets on a ring it
	 * reads kicks efd (xnv_worker_kick()). */
	uint32_t asleep __rte_cache_aligned;
	uint64_t ack __rte_cache_aligned;	/* barrier generation seen */
	struct xnv_wcount cnt __rte_cache_aligned;
	struct xnv_pending pend[XNV_MAX_PORTS];	/* per source port: to
						 * send itself */
	struct xnv_pending rpend[XNV_MAX_PORTS];	/* ... resolved here,
							 * waiting for room */
	/* What other workers steered to it (worker_steer.c): in[s] from
	 * worker s (SP/SC; in[id] NULL), from[s] what it took of in[s]. */
	struct rte_ring *in[XNV_MAX_WORKERS];
	struct xnv_cross from[XNV_MAX_WORKERS];
	/* Worker 0's lines. */
	struct xnv_wcount folded __rte_cache_aligned;	/* added so far */
};

struct xnv_workers {
	uint16_t n;			/* workers running, worker 0 included */
	uint16_t made;			/* made at start ([core] workers) */
	uint64_t gen __rte_cache_aligned;	/* barrier: odd while raised */
	uint32_t stop;
	uint16_t park_depth;		/* xnv_workers_park() nesting */
	/* 1: a worker asked for a quarantine (guard.c, nf->q_req). */
	uint32_t requests __rte_cache_aligned;
	struct xnv_worker *w[XNV_MAX_WORKERS];	/* [0]: the main lcore */
};

/* The worker the calling lcore runs (xnv_workers_init(), w_main()). */
RTE_DECLARE_PER_LCORE(struct xnv_worker *, xnv_self);

static inline struct xnv_worker *
xnv_worker_self(void)
{
	return RTE_PER_LCORE(xnv_self);
}

/* Add @p n to a counter of the calling lcore's own (struct xnv_wcount):
 * its only writer, so a plain add; stored whole, for worker 0's fold. */
static inline void
xnv_count(uint64_t *x, uint64_t n)
{
	__atomic_store_n(x, *x + n, __ATOMIC_RELAXED);
}

/* The calling lcore's counters. */
#define XNV_WC() (&xnv_worker_self()->cnt)

/* Packets were just put on a ring worker @p w reads: woken if it sleeps
 * (Idle, above; worker_sync.h). */
static inline void
xnv_worker_kick(struct xnv_worker *w)
{
	const uint64_t one = 1;

	/* A failed write can only be a full counter: a kick is pending. */
	if (xnv_sync_kick_due(&w->asleep) &&
	    write(w->efd, &one, sizeof(one)) < 0)
		return;
}

/* Every worker of [core] workers made (launched by xnv_workers_start());
 * worker 0 the calling lcore's; before anything counts or a port opens:
 * 0, or -errno. */
int xnv_workers_init(struct xnv_core *c);
/* Check that EAL gave the lcores [core] workers asks for.  @return 0, or
 * -EINVAL with a one-line error in @p err. */
int xnv_workers_check(const struct xnv_core *c, char *err, size_t len);
/* Make workers 1.. and launch them on their lcores (ports open). */
int xnv_workers_start(struct xnv_core *c, char *err, size_t len);
/* Worker 0: add every worker's counters (its own too) to the core's;
 * before any report reads them. */
void xnv_workers_fold(struct xnv_core *c);
/* Worker @p w about to sleep on its doorbells (doorbell.c): says so;
 * @return 0 if another worker has steered it packets meanwhile
 * (no sleep), else 1.  xnv_workers_sleep_done() once awake. */
int xnv_workers_sleep_prepare(struct xnv_core *c, struct xnv_worker *w);
void xnv_workers_sleep_done(struct xnv_core *c, struct xnv_worker *w);
/* Worker 0: every worker parked at the top of its loop (@p on), or
 * running again (!@p on).  Nests: only the outermost pair raises and
 * lowers the barrier. */
void xnv_workers_park(struct xnv_core *c, int on);
/* /xnv/workers (CONTROL.md). */
struct rte_tel_data;
void xnv_cmd_workers(struct xnv_core *c, const char *p,
		     struct rte_tel_data *d);
/*
 * Between workers (worker_steer.c).  A packet resolved on one worker for
 * an NF another worker polls, or for a port it has no tx queue of, goes
 * there (to worker 0 for a port) through the SP/SC
 * ring of that pair, in order, with the NF picked in its private area
 * (to_nf; XNV_NF_NONE: resolve it again there).  @return how many the
 * ring took (the rest wait in the caller's pending list).
 */
unsigned xnv_steer(struct xnv_core *c, uint16_t to_worker, uint16_t to_nf,
		   struct rte_mbuf **m, unsigned n);
/* The calling worker @p w takes what the others steered to it.
 * @return work done. */
unsigned xnv_steered_rx(struct xnv_core *c, struct xnv_worker *w,
			uint64_t now);
/* The rings between every pair of workers.  0, or -ENOMEM (said). */
int xnv_steer_open(struct xnv_core *c, char *err, size_t len);
/* Worker 0, the workers stopped: what waited between them dropped as
 * shutdown; the rings freed. */
void xnv_steer_close(struct xnv_core *c);
/* Any packet between workers for worker @p to (its sleep waits not). */
int xnv_steer_pending(const struct xnv_core *c, uint16_t to);
/* Chain versions named by packets between workers or parked by one
 * (chain.c, workers parked). */
void xnv_steer_mark(struct xnv_core *c, void (*mark)(uint8_t *,
		    struct rte_mbuf *), uint8_t *live);

/* Stop the workers, drop (as shutdown) what they held, fold. */
void xnv_workers_stop(struct xnv_core *c);

#endif /* XNV_WORKER_H */

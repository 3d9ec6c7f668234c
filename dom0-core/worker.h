/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * xnv-core on several lcores ([core] workers = N, docs/DESIGN.md 4.1).
 *
 * Worker 0 is the main lcore: it runs everything it ran alone (ports' rx
 * queue 0, every NF, the control plane).  Worker w >= 1 runs on the w-th
 * worker lcore EAL gives and polls rx queue w of each port that has one
 * (port.c gives each port a queue per worker, as many as it has):
 *
 *   - a packet whose port's chain starts with a port step (no hop, no
 *     flow rules, no latency histogram on that port, a tx queue w there)
 *     it sends itself on tx queue w: the core-only path, which scales
 *     with workers and touches no packet data and no private area;
 *   - anything else (an NF step, a drop step, flow rules, a fabric port,
 *     an empty or oversize frame) it hands, as received, to worker 0
 *     through a single-producer single-consumer rte_ring; worker 0 takes
 *     it from there exactly as if its own queue had received it
 *     (xnv_rx_burst()).  A flow comes in on one queue, so it crosses
 *     through one FIFO ring: its order is kept.
 *
 * So NFs, their rings, the owner tables and every counter of an NF stay
 * on one lcore as before; a worker writes only its own lines (its
 * counters, its pending lists, its ring's producer side).
 *
 * Counters: each worker's rx, tx and drops are its own, written only by
 * it; worker 0 adds what they gained to the core's (c->ports[].rx, tx,
 * c->drops[]) once a millisecond and at exit (xnv_workers_fold()), so
 * every report reads one set as before.
 *
 * Control plane: what a worker reads of the core (ports, their chains,
 * the chain versions, whether flow rules are on) changes only inside a
 * barrier (xnv_workers_park()): worker 0 raises it (an odd generation),
 * each worker sees it at the top of its loop, says so (acks that
 * generation) and waits; worker 0 changes things and lowers it.  Taken
 * only to run a control command (ctl.c), never on the data path.  Three
 * flags worker 0 writes whole outside it, a worker may read one pass
 * late: a port's link_up (the link watch: one burst more sent or
 * dropped), rx_on (an NF's attach opening a port's rx: one burst later)
 * and a memif port's started (never a worker's queue: one_queue).
 *
 * Idle: a worker with nothing to do spins, pauses, yields, then sleeps
 * (never with --idle-sleep poll): at most XNV_IDLE_SLEEP_MAX_US with
 * adaptive, up to --idle-sleep-max with doorbell, as worker 0 does for
 * its ports.  Worker 0 asleep on its doorbells is woken by the worker
 * that hands it packets: it says it sleeps (main_asleep), then looks at
 * every worker's ring; a worker enqueues, then looks at main_asleep and
 * kicks an eventfd in worker 0's epoll set.  A full barrier on each side
 * between the two makes one of them see the other (no lost wake-up).
 */
#ifndef XNV_WORKER_H
#define XNV_WORKER_H

#include <stdint.h>

#include <rte_ring.h>

#include "config.h"
#include "datapath.h"

/* Included by core.h after enum xnv_drop, before struct xnv_core. */
struct xnv_core;

#define XNV_WORKER_RING 4096	/* packets a worker may have handed to
				 * worker 0 and not yet taken */

/* What worker 0 reads from a worker's ring and has not finished. */
struct xnv_cross {
	struct rte_mbuf *m[GNTS_BURST_MAX];	/* taken, not yet steered */
	uint16_t at, n;				/* m[at..n) */
	struct xnv_pending pend;		/* steered, waiting for room */
	uint64_t taken;				/* from the ring, in all */
};

/* A worker's counters: written by it only, read by worker 0. */
struct xnv_wcount {
	uint64_t rx[XNV_MAX_PORTS];	/* its packets it finished (sent or
					 * dropped); not those handed on */
	uint64_t tx[XNV_MAX_PORTS];
	uint64_t drops[XNV_DROP_N];
	uint64_t handed;		/* to worker 0 */
	uint64_t first_rx_tsc, last_rx_tsc, last_tx_tsc;
};

struct xnv_worker {
	/* The worker's own lines. */
	uint16_t id;			/* 1.. */
	unsigned lcore;
	struct xnv_core *c;
	struct rte_ring *ring;		/* to worker 0, SP/SC */
	uint64_t ack __rte_cache_aligned;	/* barrier generation seen */
	struct xnv_wcount cnt __rte_cache_aligned;
	struct xnv_pending pend[XNV_MAX_PORTS];	/* per source port */
	/* Worker 0's lines. */
	struct xnv_wcount folded __rte_cache_aligned;	/* added so far */
	struct xnv_cross cross;
};

struct xnv_workers {
	uint16_t n;			/* workers, worker 0 included */
	int efd;			/* eventfd in worker 0's epoll set: a
					 * worker's kick (-1: none) */
	uint64_t gen __rte_cache_aligned;	/* barrier: odd while raised */
	uint32_t stop;
	/* 1 while worker 0 sleeps on its doorbells: a worker that hands
	 * it packets kicks efd (worker.c, handed()). */
	uint32_t main_asleep __rte_cache_aligned;
	struct xnv_worker *w[XNV_MAX_WORKERS];	/* [0] unused */
};

/* Check that EAL gave the lcores [core] workers asks for.  @return 0, or
 * -EINVAL with a one-line error in @p err. */
int xnv_workers_check(const struct xnv_core *c, char *err, size_t len);
/* Make workers 1.. and launch them on their lcores (ports open). */
int xnv_workers_start(struct xnv_core *c, char *err, size_t len);
/* Worker 0: take what the workers handed over.  @return work done. */
unsigned xnv_workers_rx(struct xnv_core *c, uint64_t now);
/* Worker 0: add the workers' counters to the core's. */
void xnv_workers_fold(struct xnv_core *c);
/* Worker 0 about to sleep on its doorbells (doorbell.c): says so; @return
 * 0 if a worker has handed it packets meanwhile (no sleep), else 1.
 * xnv_workers_sleep_done() once awake. */
int xnv_workers_sleep_prepare(struct xnv_core *c);
void xnv_workers_sleep_done(struct xnv_core *c);
/* Worker 0: every worker parked at the top of its loop (@p on), or
 * running again (!@p on). */
void xnv_workers_park(struct xnv_core *c, int on);
/* /xnv/workers (CONTROL.md). */
struct rte_tel_data;
void xnv_cmd_workers(struct xnv_core *c, const char *p,
		     struct rte_tel_data *d);
/* Stop the workers, drop (as shutdown) what they held, fold. */
void xnv_workers_stop(struct xnv_core *c);

#endif /* XNV_WORKER_H */

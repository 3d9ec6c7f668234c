/* SPDX-License-Identifier: BSD-3-Clause */
/* The data path: port rx, NF tx, steering, pending lists, verdicts. */
#ifndef XNV_DATAPATH_H
#define XNV_DATAPATH_H

#include <stdint.h>

#include "config.h"

struct xnv_core;
struct xnv_nfrec;
struct rte_mbuf;

/* Packets a source (port rx or NF tx) could not hand on yet, in order. */
struct xnv_pending {
	uint16_t n;
	uint64_t since;			/* tsc when the oldest started waiting */
	struct rte_mbuf *m[GNTS_BURST_MAX];
};

unsigned xnv_rx_port(struct xnv_core *c, uint16_t idx, uint64_t now);
/* @p n packets received from port @p idx now (by any worker), on their
 * way; those that cannot go yet wait in @p pd. */
void xnv_rx_burst(struct xnv_core *c, uint16_t idx, struct xnv_pending *pd,
		  struct rte_mbuf **m, unsigned n, uint64_t now);
unsigned xnv_rx_nf(struct xnv_core *c, struct xnv_nfrec *nf, uint64_t now);
/* Every NF worker @p worker polls (attached or draining): its rings. */
unsigned xnv_rx_nfs(struct xnv_core *c, uint16_t worker, uint64_t now);
/* 1 if the core has nothing to do for @p nf but read its tx ring: no
 * packets parked for it, no kick owed, its free ring full enough. */
int xnv_nf_quiet(const struct xnv_core *c, struct xnv_nfrec *nf);
void xnv_free_parked(struct xnv_pending *pd);
/* To @p nf, polled by the calling worker, as many of @p n packets as its
 * quota allows and its ring takes; those past the quota are dropped.
 * @return how many went (or were dropped); the rest are the caller's. */
unsigned xnv_send_nf(struct xnv_core *c, struct xnv_nfrec *nf,
		     struct rte_mbuf **m, unsigned n);
/* Steer @p n packets of one source (datapath.c); those that cannot go
 * yet wait in @p pd (waiting since @p since).  @p uniform: every packet
 * is known to have the first one's target (chain step or verdict, pool),
 * so one look at the first may do for all. */
void xnv_deliver(struct xnv_core *c, struct xnv_pending *pd,
		 struct rte_mbuf **m, unsigned n, uint64_t since, uint64_t now,
		 int uniform);
/* Retry what waits in @p pd.  @return 1 if some still wait. */
int xnv_flush_pending(struct xnv_core *c, struct xnv_pending *pd,
		      uint64_t now);
int xnv_pending_empty(const struct xnv_core *c);
uint64_t xnv_in_flight(const struct xnv_core *c);

#endif /* XNV_DATAPATH_H */

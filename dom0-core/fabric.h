/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fabric ports: a chain that continues on another host (docs/DESIGN.md,
 * "Across hosts").
 *
 * A port with `fabric = vlan` faces the local switch that joins hosts
 * (Open vSwitch: fabric/README.md).  Between the core and that switch a
 * packet carries its *hop* as an outer 802.1Q tag (vid = hop, 1..4094);
 * between hosts the switch carries it as the tunnel key (VXLAN VNI = hop).
 * A hop names where a chain resumes on the receiving host:
 *
 *   host A: [port in] chain = fw -> fab:18          push tag 18, out fab
 *   host B: [port fab] hop.18 = ids -> fab:19       pop 18, ids, push 19
 *   host A: [port fab] hop.19 = lb -> out           pop 19, lb, out
 *
 * On rx a fabric port takes the outer tag off (the driver may have taken
 * it out already: vlan_tci) and gives the packet its hop's chain; a frame
 * without a tag, with a hop this host does not have, or with a hop of
 * another fabric port is dropped and counted (`fabric_hop`).  A step
 * PORT:HOP pushes the tag when the packet takes the step.  Flow rules do
 * not apply to a fabric port's arrivals: the hop decides.
 */
#ifndef XNV_FABRIC_H
#define XNV_FABRIC_H

#include <stdint.h>

#include <rte_branch_prediction.h>
#include <rte_mbuf.h>

#include "config.h"

struct xnv_core;
struct xnv_mbuf_priv;
struct rte_tel_data;

/* One hop of this host: the chain its arrivals take, its counters. */
struct xnv_hop {
	uint16_t chain;		/* chain version; XNV_CHAIN_NONE: no such hop */
	uint16_t port;		/* the fabric port it arrives on */
	uint64_t rx;		/* arrived with this hop */
	uint64_t tx;		/* tagged with it and sent on (PORT:HOP) */
};

/* tgt_id of a XNV_STEP_DROP target set by a failed push: the packet is
 * dropped as fabric_hop, not as a chain's drop step (id 0). */
#define XNV_STEP_DROP_FABRIC 1

/** At start: no hop, then the config's (xnv_fabric_set_hops()). */
int xnv_fabric_start(struct xnv_core *c);

/** Every hop of @p h (@p n of them) in force, all or nothing: -ENOSPC
 *  (chain table full) changes nothing.  Hops not in @p h are removed. */
int xnv_fabric_set_hops(struct xnv_core *c, const struct xnv_cfg_hop *h,
			uint16_t n);

/** Fabric port @p idx's burst: each frame's hop tag taken off and its
 *  chain put in @p chain[]; frames with no hop here dropped (counted).
 *  @return how many of @p m are kept, in order. */
unsigned xnv_fabric_rx(struct xnv_core *c, uint16_t idx, struct rte_mbuf **m,
		       uint16_t *chain, unsigned n);

/** @p m takes step PORT:@p hop: its tag pushed (no room: dropped). */
void xnv_fabric_push(struct rte_mbuf *m, struct xnv_mbuf_priv *pv,
		     uint16_t hop);

/** An 802.1Q tag of @p tci put in front of @p m's EtherType, in its
 *  headroom (rte_vlan_insert() refuses the pools' external buffers).
 *  @return 0, or -1 if @p m is shorter than two addresses or has no
 *  headroom left (unchanged then). */
int xnv_vlan_push(struct rte_mbuf *m, uint16_t tci);

/** /xnv/fabric: every hop, its port, chain and counters. */
void xnv_cmd_fabric(struct xnv_core *c, const char *p, struct rte_tel_data *d);

#endif /* XNV_FABRIC_H */

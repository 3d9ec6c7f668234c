/* SPDX-License-Identifier: BSD-3-Clause */
/* The counter tables and snapshots of counters.h. */
#include <string.h>

#include <rte_ethdev.h>

#include "core.h"
#include "counters.h"

/* Every field of a snapshot has its row: adding one without a row fails. */
_Static_assert(sizeof(struct xnv_port_counters) ==
	       XNV_PORT_N_COUNTERS * sizeof(uint64_t), "one row per counter");
_Static_assert(sizeof(struct xnv_rec_counters) ==
	       XNV_REC_N_COUNTERS * sizeof(uint64_t), "one row per counter");
_Static_assert(sizeof(struct xnv_group_counters) ==
	       XNV_GROUP_N_COUNTERS * sizeof(uint64_t), "one row per counter");

#define COUNTER(type, field, width) { #field, offsetof(type, field), width }

const struct xnv_counter xnv_port_counter_tab[XNV_PORT_N_COUNTERS] = {
	COUNTER(struct xnv_port_counters, rx, 12),
	COUNTER(struct xnv_port_counters, tx, 12),
	COUNTER(struct xnv_port_counters, rx_missed, 10),
	COUNTER(struct xnv_port_counters, rx_nombuf, 10),
};

const struct xnv_counter xnv_rec_counter_tab[XNV_REC_N_COUNTERS] = {
	COUNTER(struct xnv_rec_counters, rx, 10),
	COUNTER(struct xnv_rec_counters, tx, 10),
	COUNTER(struct xnv_rec_counters, drop, 8),
	COUNTER(struct xnv_rec_counters, bad, 6),
	COUNTER(struct xnv_rec_counters, reclaimed, 9),
	COUNTER(struct xnv_rec_counters, alloc, 0),
	COUNTER(struct xnv_rec_counters, held, 0),
};

const struct xnv_counter xnv_group_counter_tab[XNV_GROUP_N_COUNTERS] = {
	COUNTER(struct xnv_group_counters, pool_bufs, 0),
	COUNTER(struct xnv_group_counters, free, 0),
	COUNTER(struct xnv_group_counters, copies_in, 0),
};

void
xnv_port_counters(const struct xnv_core *c, uint16_t i,
		  struct xnv_port_counters *out)
{
	struct rte_eth_stats es;

	memset(&es, 0, sizeof(es));
	(void)rte_eth_stats_get(c->ports[i].port_id, &es);
	out->rx = c->ports[i].rx;
	out->tx = c->ports[i].tx;
	out->rx_missed = es.imissed;
	out->rx_nombuf = es.rx_nombuf;
}

void
xnv_rec_counters(const struct xnv_nfrec *nf, struct xnv_rec_counters *out)
{
	out->rx = nf->rx_pkts;
	out->tx = nf->tx_pkts;
	out->drop = nf->drops;
	out->bad = nf->bad;
	out->reclaimed = nf->reclaimed;
	out->alloc = nf->allocs;
	out->held = nf->held;
}

void
xnv_group_counters(const struct xnv_core *c, uint16_t g,
		   struct xnv_group_counters *out)
{
	out->pool_bufs = c->pools[g].n_bufs;
	out->free = xnv_pool_free(&c->pools[g]);
	out->copies_in = c->pools[g].copies_in;
}

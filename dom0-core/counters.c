/* SPDX-License-Identifier: BSD-3-Clause */
/* The counter tables and snapshots of counters.h. */
#include <string.h>

#include <rte_ethdev.h>

#include "core.h"
#include "counters.h"
#include "port_drv.h"

#define PORT_ROW(n, w) { #n, offsetof(struct xnv_port_counters, n), w },
#define REC_ROW(n, w) { #n, offsetof(struct xnv_rec_counters, n), w },
#define GROUP_ROW(n, w) { #n, offsetof(struct xnv_group_counters, n), w },

const struct xnv_counter xnv_port_counter_tab[XNV_PORT_N_COUNTERS] = {
	XNV_PORT_COUNTERS(PORT_ROW)
};
const struct xnv_counter xnv_rec_counter_tab[XNV_REC_N_COUNTERS] = {
	XNV_REC_COUNTERS(REC_ROW)
};
const struct xnv_counter xnv_group_counter_tab[XNV_GROUP_N_COUNTERS] = {
	XNV_GROUP_COUNTERS(GROUP_ROW)
};

void
xnv_port_counters(const struct xnv_core *c, uint16_t i,
		  struct xnv_port_counters *out)
{
	struct rte_eth_stats es;

	memset(&es, 0, sizeof(es));
	(void)rte_eth_stats_get(c->ports[i].port_id, &es);
	*out = (struct xnv_port_counters){
		.rx = c->ports[i].rx, .tx = c->ports[i].tx,
		.rx_missed = es.imissed, .rx_nombuf = es.rx_nombuf,
		.nf_quota = c->ports[i].nf_quota,
		.link_up = c->ports[i].link_up,
		.link_changes = c->ports[i].link_changes,
		.rx_wakes = c->ports[i].rx_wakes,
	};
	if (c->ports[i].drv != NULL && c->ports[i].drv->counters != NULL)
		c->ports[i].drv->counters(c, i, out);
}

void
xnv_rec_counters(const struct xnv_nfrec *nf, struct xnv_rec_counters *out)
{
	*out = (struct xnv_rec_counters){
		.rx = nf->rx_pkts, .tx = nf->tx_pkts, .drop = nf->drops,
		.bad = nf->bad, .reclaimed = nf->reclaimed,
		.alloc = nf->allocs, .held = nf->held,
		.max_held = nf->max_held, .nf_quota = nf->quota_drops,
		.bell_kicks = nf->bell.kicks, .bell_wakes = nf->bell.wakes,
		.bell_spurious = nf->bell.spurious,
		.bell_muted = nf->bell.muted, .bell_capped = nf->bell.capped,
	};
}

void
xnv_group_counters(const struct xnv_core *c, uint16_t g,
		   struct xnv_group_counters *out)
{
	*out = (struct xnv_group_counters){
		.pool_bufs = c->pools[g].n_bufs,
		.free = xnv_pool_free(&c->pools[g]),
		.copies_in = c->pools[g].copies_in,
	};
}

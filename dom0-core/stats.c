/* SPDX-License-Identifier: BSD-3-Clause */
/* Counters: a table for people (exit, SIGUSR1) and JSON for programs. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <rte_ethdev.h>

#include <gntshare/xen.h>

#include "core.h"

static const char *const state_names[] = {
	[XNV_REC_FREE] = "free", [XNV_REC_ATTACHED] = "attached",
	[XNV_REC_GONE] = "gone",
};

/* The driver's own counters: packets it could not even hand us. */
static struct rte_eth_stats
port_stats(const struct xnv_core *c, uint16_t i)
{
	struct rte_eth_stats es;

	memset(&es, 0, sizeof(es));
	(void)rte_eth_stats_get(c->ports[i].port_id, &es);
	return es;
}

/* Seconds from the first packet received to the last one sent or received. */
static double
traffic_s(const struct xnv_core *c)
{
	uint64_t last = RTE_MAX(c->last_rx_tsc, c->last_tx_tsc);

	return c->first_rx_tsc && last > c->first_rx_tsc ?
	       (double)(last - c->first_rx_tsc) / c->tsc_hz : 0;
}

static uint64_t
total_rx(const struct xnv_core *c)
{
	uint64_t n = 0;
	uint16_t i;

	for (i = 0; i < c->cfg.n_ports; i++)
		n += c->ports[i].rx;
	return n;
}

void
xnv_stats_print(const struct xnv_core *c, FILE *f, double elapsed)
{
	const struct xnv_config *cfg = &c->cfg;
	double busy = traffic_s(c);
	uint64_t rx = total_rx(c);
	unsigned i;

	fprintf(f, "xnv-core statistics after %.2f s\n", elapsed);
	fprintf(f, "  %-16s %12s %12s %10s %10s\n", "port", "rx", "tx",
		"rx-missed", "rx-nombuf");
	for (i = 0; i < cfg->n_ports; i++) {
		struct rte_eth_stats es = port_stats(c, i);

		fprintf(f, "  %-16s %12" PRIu64 " %12" PRIu64 " %10" PRIu64
			" %10" PRIu64 "\n", cfg->ports[i].name, c->ports[i].rx,
			c->ports[i].tx, es.imissed, es.rx_nombuf);
	}
	fprintf(f, "  %-24s %-10s %10s %10s %8s %6s %9s %s\n", "nf", "service",
		"rx", "tx", "drop", "bad", "reclaimed", "state");
	for (i = 0; i < XNV_MAX_NFS; i++) {
		const struct xnv_nfrec *nf = &c->nfs[i];

		if (nf->state == XNV_REC_FREE)
			continue;
		fprintf(f, "  %-24s %-10s %10" PRIu64 " %10" PRIu64 " %8" PRIu64
			" %6" PRIu64 " %9" PRIu64 " %s\n", nf->name,
			cfg->services[nf->service].name, nf->rx_pkts,
			nf->tx_pkts, nf->drops, nf->bad, nf->reclaimed,
			state_names[nf->state]);
	}
	for (i = 0; i < cfg->n_groups; i++)
		fprintf(f, "  group %-10s pool %u buffers, %u free, %" PRIu64
			" copied in\n", cfg->groups[i].name, c->pools[i].n_bufs,
			xnv_pool_free(&c->pools[i]), c->pools[i].copies_in);
	/* NFs' own pools: pool <region> group <g> <n> buffers, <n> free */
	for (i = XNV_MAX_GROUPS; i < XNV_MAX_POOLS; i++) {
		const struct xnv_pool *p = &c->pools[i];

		if (p->mp != NULL)
			fprintf(f, "  pool %-20s group %-10s %u buffers, %u "
				"free%s\n", p->region->name,
				cfg->groups[p->group].name, p->n_bufs,
				xnv_pool_free(p), p->retired ? " (its NF is "
				"gone; released once all are home)" : "");
	}
	if (c->xen != NULL && !gnts_region_shareable())
		fprintf(f, "  gntalloc: %zu pages held\n", gnts_galloc_pages());
	fprintf(f, "  core drops:");
	for (i = 0; i < XNV_DROP_N; i++)
		fprintf(f, " %s %" PRIu64, xnv_drop_names[i], c->drops[i]);
	fprintf(f, "\n");
	if (busy > 0)
		fprintf(f, "  rate: %.3f Mpps over %.3f s of traffic\n",
			rx / busy / 1e6, busy);
	fflush(f);
}

int
xnv_stats_json(const struct xnv_core *c, const char *path, double elapsed)
{
	const struct xnv_config *cfg = &c->cfg;
	double busy = traffic_s(c);
	FILE *f = fopen(path, "w");
	unsigned i, j, first = 1;

	if (f == NULL)
		return -errno;
	fprintf(f, "{\n \"elapsed_s\": %.6f,\n \"traffic_s\": %.6f,\n"
		" \"ports\": [", elapsed, busy);
	for (i = 0; i < cfg->n_ports; i++) {
		struct rte_eth_stats es = port_stats(c, i);

		fprintf(f, "%s\n  {\"name\": \"%s\", \"index\": %u, \"rx\": %"
			PRIu64 ", \"tx\": %" PRIu64 ", \"rx_missed\": %" PRIu64
			", \"rx_nombuf\": %" PRIu64 "}", i ? "," : "",
			cfg->ports[i].name, i, c->ports[i].rx, c->ports[i].tx,
			es.imissed, es.rx_nombuf);
	}
	fprintf(f, "\n ],\n \"nfs\": [");
	for (i = 0; i < XNV_MAX_NFS; i++) {
		const struct xnv_nfrec *nf = &c->nfs[i];

		if (nf->state == XNV_REC_FREE)
			continue;
		fprintf(f, "%s\n  {\"name\": \"%s\", \"service\": \"%s\", "
			"\"group\": \"%s\", \"domain\": %u, \"pid\": %d, "
			"\"own_pool\": %s, "
			"\"state\": \"%s\", \"rx\": %" PRIu64 ", \"tx\": %" PRIu64
			", \"drop\": %" PRIu64 ", \"bad\": %" PRIu64
			", \"reclaimed\": %" PRIu64 ", \"alloc\": %" PRIu64
			", \"held\": %u, \"quarantined\": %s, \"reason\": "
			"\"%s\", \"bad_kinds\": {",
			first ? "" : ",", nf->name,
			cfg->services[nf->service].name,
			cfg->groups[nf->group].name, nf->dom, (int)nf->pid,
			nf->pool >= XNV_MAX_GROUPS ? "true" : "false",
			state_names[nf->state], nf->rx_pkts, nf->tx_pkts,
			nf->drops, nf->bad, nf->reclaimed, nf->allocs, nf->held,
			nf->quarantined ? "true" : "false", nf->gone_reason);
		for (j = 1; j < XNV_BAD_N; j++)
			fprintf(f, "%s\"%s\": %" PRIu64, j > 1 ? ", " : "",
				xnv_bad_names[j], nf->bad_kind[j]);
		fprintf(f, "}}");
		first = 0;
	}
	fprintf(f, "\n ],\n \"groups\": [");
	for (i = 0; i < cfg->n_groups; i++) {
		fprintf(f, "%s\n  {\"name\": \"%s\", \"pool_bufs\": %u, "
			"\"free\": %u, \"copies_in\": %" PRIu64 ", \"copies_to\": {",
			i ? "," : "", cfg->groups[i].name, c->pools[i].n_bufs,
			xnv_pool_free(&c->pools[i]), c->pools[i].copies_in);
		for (j = 0; j < cfg->n_groups; j++)
			fprintf(f, "%s\"%s\": %" PRIu64, j ? ", " : "",
				cfg->groups[j].name, c->copies[i][j]);
		fprintf(f, "}}");
	}
	fprintf(f, "\n ],\n \"nf_pools\": [");
	for (i = XNV_MAX_GROUPS, first = 1; i < XNV_MAX_POOLS; i++) {
		const struct xnv_pool *p = &c->pools[i];

		if (p->mp == NULL)
			continue;
		fprintf(f, "%s\n  {\"index\": %u, \"region\": \"%s\", "
			"\"group\": \"%s\", \"pool_bufs\": %u, \"free\": %u, "
			"\"retired\": %s}", first ? "" : ",", i, p->region->name,
			cfg->groups[p->group].name, p->n_bufs, xnv_pool_free(p),
			p->retired ? "true" : "false");
		first = 0;
	}
	fprintf(f, "\n ],\n \"gntalloc_pages\": %zu,\n \"drops\": {",
		gnts_galloc_pages());
	for (i = 0; i < XNV_DROP_N; i++)
		fprintf(f, "%s\"%s\": %" PRIu64, i ? ", " : "",
			xnv_drop_names[i], c->drops[i]);
	fprintf(f, "}\n}\n");
	return fclose(f) == 0 ? 0 : -errno;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* Counters: a table for people (exit, SIGUSR1) and JSON for programs. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <rte_common.h>

#include <gntshare/gntshare.h>

#include "core.h"
#include "counters.h"

static const char *const state_names[] = {
	[XNV_REC_FREE] = "free", [XNV_REC_ATTACHED] = "attached",
	[XNV_REC_GONE] = "gone",
};

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

/* "name" with '_' as '-': a column header of the text table. */
static void
text_header(FILE *f, const struct xnv_counter *t, unsigned n)
{
	char h[32];
	unsigned k, j;

	for (k = 0; k < n; k++) {
		if (t[k].width == 0)
			continue;
		for (j = 0; t[k].name[j] != '\0' && j < sizeof(h) - 1; j++)
			h[j] = t[k].name[j] == '_' ? '-' : t[k].name[j];
		h[j] = '\0';
		fprintf(f, " %*s", t[k].width, h);
	}
}

static void
text_row(FILE *f, const struct xnv_counter *t, unsigned n, const void *snap)
{
	unsigned k;

	for (k = 0; k < n; k++)
		if (t[k].width != 0)
			fprintf(f, " %*" PRIu64, t[k].width,
				xnv_counter(&t[k], snap));
}

/* @p s as a JSON string: quoted, with '"', '\\' and control characters
 * escaped (NF names and reasons come from outside the core). */
static void
json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s != '\0'; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			fprintf(f, "\\%c", ch);
		else if (ch < 0x20)
			fprintf(f, "\\u%04x", ch);
		else
			fputc(ch, f);
	}
	fputc('"', f);
}

/* , "key": "value" */
static void
json_kv_str(FILE *f, const char *key, const char *v)
{
	fprintf(f, ", \"%s\": ", key);
	json_str(f, v);
}

/* , "name": value for each counter of @p t */
static void
json_counters(FILE *f, const struct xnv_counter *t, unsigned n,
	      const void *snap)
{
	unsigned k;

	for (k = 0; k < n; k++)
		fprintf(f, ", \"%s\": %" PRIu64, t[k].name,
			xnv_counter(&t[k], snap));
}

static void
print_ports(const struct xnv_core *c, FILE *f)
{
	struct xnv_port_counters pc;
	uint16_t i;

	fprintf(f, "  %-16s", "port");
	text_header(f, xnv_port_counter_tab, XNV_PORT_N_COUNTERS);
	fprintf(f, "\n");
	for (i = 0; i < c->cfg.n_ports; i++) {
		xnv_port_counters(c, i, &pc);
		fprintf(f, "  %-16s", c->cfg.ports[i].name);
		text_row(f, xnv_port_counter_tab, XNV_PORT_N_COUNTERS, &pc);
		fprintf(f, "\n");
	}
}

static void
print_nfs(const struct xnv_core *c, FILE *f)
{
	struct xnv_rec_counters rc;
	unsigned i;

	fprintf(f, "  %-24s %-10s", "nf", "service");
	text_header(f, xnv_rec_counter_tab, XNV_REC_N_COUNTERS);
	fprintf(f, " %s\n", "state");
	for (i = 0; i < XNV_MAX_NFS; i++) {
		const struct xnv_nfrec *nf = &c->nfs[i];

		if (nf->state == XNV_REC_FREE)
			continue;
		xnv_rec_counters(nf, &rc);
		fprintf(f, "  %-24s %-10s", nf->name,
			c->cfg.services[nf->service].name);
		text_row(f, xnv_rec_counter_tab, XNV_REC_N_COUNTERS, &rc);
		fprintf(f, " %s\n", state_names[nf->state]);
	}
}

static void
print_pools(const struct xnv_core *c, FILE *f)
{
	const struct xnv_config *cfg = &c->cfg;
	struct xnv_group_counters gc;
	unsigned i;

	for (i = 0; i < cfg->n_groups; i++) {
		xnv_group_counters(c, (uint16_t)i, &gc);
		fprintf(f, "  group %-10s pool %" PRIu64 " buffers, %" PRIu64
			" free, %" PRIu64 " copied in\n", cfg->groups[i].name,
			gc.pool_bufs, gc.free, gc.copies_in);
	}
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
}

/* The control plane's counters, after "core drops" (where the readers
 * of this table stop): the Xen tests read the events from here. */
static void
print_control(const struct xnv_core *c, FILE *f)
{
	struct gnts_srv_counters ct;

	if (c->srv == NULL)
		return;
	gnts_srv_counters(c->srv, &ct);
	fprintf(f, "  control: requests %" PRIu64 " refused %" PRIu64
		" events %" PRIu64 " events_deferred %" PRIu64 "\n",
		ct.requests, ct.refused, ct.events, ct.events_deferred);
}

void
xnv_stats_print(const struct xnv_core *c, FILE *f, double elapsed)
{
	double busy = traffic_s(c);
	uint64_t rx = total_rx(c);
	unsigned i;

	fprintf(f, "xnv-core statistics after %.2f s\n", elapsed);
	print_ports(c, f);
	print_nfs(c, f);
	xnv_dom_print(c, f);
	print_pools(c, f);
	if (gnts_grant_engine_pages() >= 0)
		fprintf(f, "  %s: %ld pages held\n", gnts_grant_engine_name(),
			gnts_grant_engine_pages());
	fprintf(f, "  core drops:");
	for (i = 0; i < XNV_DROP_N; i++)
		fprintf(f, " %s %" PRIu64, xnv_drop_names[i], c->drops[i]);
	fprintf(f, "\n");
	print_control(c, f);
	if (busy > 0)
		fprintf(f, "  rate: %.3f Mpps over %.3f s of traffic\n",
			rx / busy / 1e6, busy);
	fflush(f);
}

static void
json_ports(const struct xnv_core *c, FILE *f)
{
	struct xnv_port_counters pc;
	uint16_t i;

	fprintf(f, " \"ports\": [");
	for (i = 0; i < c->cfg.n_ports; i++) {
		xnv_port_counters(c, i, &pc);
		fprintf(f, "%s\n  {\"name\": ", i ? "," : "");
		json_str(f, c->cfg.ports[i].name);
		fprintf(f, ", \"index\": %u", i);
		json_counters(f, xnv_port_counter_tab, XNV_PORT_N_COUNTERS, &pc);
		fprintf(f, "}");
	}
	fprintf(f, "\n ],\n");
}

static void
json_nf(const struct xnv_core *c, FILE *f, const struct xnv_nfrec *nf)
{
	const struct xnv_config *cfg = &c->cfg;
	struct xnv_rec_counters rc;
	unsigned j;

	xnv_rec_counters(nf, &rc);
	fprintf(f, "{\"name\": ");
	json_str(f, nf->name);
	json_kv_str(f, "service", cfg->services[nf->service].name);
	json_kv_str(f, "group", cfg->groups[nf->group].name);
	fprintf(f, ", \"domain\": %u, \"pid\": %d, \"own_pool\": %s", nf->dom,
		(int)nf->pid, nf->pool >= XNV_MAX_GROUPS ? "true" : "false");
	json_kv_str(f, "state", state_names[nf->state]);
	json_counters(f, xnv_rec_counter_tab, XNV_REC_N_COUNTERS, &rc);
	fprintf(f, ", \"quarantined\": %s", nf->quarantined ? "true" : "false");
	json_kv_str(f, "reason", nf->gone_reason);
	fprintf(f, ", \"bad_kinds\": {");
	for (j = 1; j < XNV_BAD_N; j++)
		fprintf(f, "%s\"%s\": %" PRIu64, j > 1 ? ", " : "",
			xnv_bad_names[j], nf->bad_kind[j]);
	fprintf(f, "}}");
}

static void
json_groups(const struct xnv_core *c, FILE *f)
{
	const struct xnv_config *cfg = &c->cfg;
	struct xnv_group_counters gc;
	unsigned i, j;

	fprintf(f, " \"groups\": [");
	for (i = 0; i < cfg->n_groups; i++) {
		xnv_group_counters(c, (uint16_t)i, &gc);
		fprintf(f, "%s\n  {\"name\": ", i ? "," : "");
		json_str(f, cfg->groups[i].name);
		json_counters(f, xnv_group_counter_tab, XNV_GROUP_N_COUNTERS,
			      &gc);
		fprintf(f, ", \"copies_to\": {");
		for (j = 0; j < cfg->n_groups; j++) {
			fprintf(f, "%s", j ? ", " : "");
			json_str(f, cfg->groups[j].name);
			fprintf(f, ": %" PRIu64, c->copies[i][j]);
		}
		fprintf(f, "}}");
	}
	fprintf(f, "\n ],\n");
}

static void
json_nf_pools(const struct xnv_core *c, FILE *f)
{
	unsigned i, first = 1;

	fprintf(f, " \"nf_pools\": [");
	for (i = XNV_MAX_GROUPS; i < XNV_MAX_POOLS; i++) {
		const struct xnv_pool *p = &c->pools[i];

		if (p->mp == NULL)
			continue;
		fprintf(f, "%s\n  {\"index\": %u", first ? "" : ",", i);
		json_kv_str(f, "region", p->region->name);
		json_kv_str(f, "group", c->cfg.groups[p->group].name);
		fprintf(f, ", \"pool_bufs\": %u, \"free\": %u, \"retired\": %s}",
			p->n_bufs, xnv_pool_free(p),
			p->retired ? "true" : "false");
		first = 0;
	}
	fprintf(f, "\n ],\n");
}

int
xnv_stats_json(const struct xnv_core *c, const char *path, double elapsed)
{
	FILE *f = fopen(path, "w");
	unsigned i, first = 1;

	if (f == NULL)
		return -errno;
	fprintf(f, "{\n \"elapsed_s\": %.6f,\n \"traffic_s\": %.6f,\n",
		elapsed, traffic_s(c));
	json_ports(c, f);
	fprintf(f, " \"nfs\": [");
	for (i = 0; i < XNV_MAX_NFS; i++) {
		if (c->nfs[i].state == XNV_REC_FREE)
			continue;
		fprintf(f, "%s\n  ", first ? "" : ",");
		json_nf(c, f, &c->nfs[i]);
		first = 0;
	}
	fprintf(f, "\n ],\n");
	json_groups(c, f);
	json_nf_pools(c, f);
	fprintf(f, " \"gntalloc_pages\": %ld,\n \"drops\": {",
		gnts_grant_engine_pages() > 0 ? gnts_grant_engine_pages() : 0);
	for (i = 0; i < XNV_DROP_N; i++)
		fprintf(f, "%s\"%s\": %" PRIu64, i ? ", " : "",
			xnv_drop_names[i], c->drops[i]);
	fprintf(f, "}\n}\n");
	return fclose(f) == 0 ? 0 : -errno;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* Port-to-port latency, the DPDK half: histograms' memory, recording at
 * tx, the control commands.  See latency.h. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_malloc.h>
#include <rte_telemetry.h>

#include "core.h"
#include "ctl.h"
#include "latency.h"

int
xnv_latency_init(struct xnv_core *c)
{
	uint16_t i;

	if (!c->cfg.latency)
		return 0;
	for (i = 0; i < c->cfg.n_ports; i++) {
		c->ports[i].lat = rte_zmalloc("xnv-latency", c->cfg.workers *
					      sizeof(struct xnv_lat), 0);
		if (c->ports[i].lat == NULL)
			return -ENOMEM;
	}
	return 0;
}

void
xnv_latency_record(struct xnv_port *p, uint16_t w, struct rte_mbuf **m,
		   unsigned n)
{
	struct xnv_lat *l = &p->lat[w];
	uint64_t now = rte_rdtsc();
	unsigned i;

	for (i = 0; i < n; i++) {
		uint64_t t = xnv_priv(m[i])->rx_tsc;

		/* 0: not from a port (e.g. made by an NF); the TSC of
		 * another lcore's rx may read a little ahead of ours */
		if (t != 0 && t <= now)
			xnv_lat_add(l, now - t);
	}
}

static long
lat_port(struct xnv_core *c, const char *p, struct rte_tel_data *d)
{
	long i = xnv_ctl_id(p);

	if (i < 0 || i >= c->cfg.n_ports) {
		xnv_ctl_error(d, "no port %.20s", p);
		return -1;
	}
	if (c->ports[i].lat == NULL) {
		xnv_ctl_error(d, "latency is off ([core] latency = on)");
		return -1;
	}
	return i;
}

/* Cumulative counts at fixed bounds (1 µs .. 1 s, 1-2-5 steps), keyed by
 * the bound in ns: a Prometheus histogram's buckets. */
static void
lat_le(const struct xnv_core *c, const struct xnv_lat *l,
       struct rte_tel_data *le)
{
	static const uint64_t bound_ns[] = { 1000, 2000, 5000, 10000, 20000,
		50000, 100000, 200000, 500000, 1000000, 2000000, 5000000,
		10000000, 100000000, 1000000000 };
	char key[24];
	unsigned k;

	rte_tel_data_start_dict(le);
	for (k = 0; k < RTE_DIM(bound_ns); k++) {
		snprintf(key, sizeof(key), "%" PRIu64, bound_ns[k]);
		rte_tel_data_add_dict_u64(le, key, xnv_lat_count_le(l,
			(uint64_t)((double)bound_ns[k] * (double)c->tsc_hz /
				   1e9)));
	}
}

void
xnv_cmd_port_latency(struct xnv_core *c, const char *p,
		     struct rte_tel_data *d)
{
	static const struct { const char *key; double q; } qs[] = {
		{ "p10_ns", 0.1 }, { "p25_ns", 0.25 }, { "p50_ns", 0.5 },
		{ "p75_ns", 0.75 }, { "p90_ns", 0.9 }, { "p95_ns", 0.95 },
		{ "p99_ns", 0.99 }, { "p999_ns", 0.999 }, { "max_ns", 1.0 },
	};
	long i = lat_port(c, p, d);
	struct xnv_lat *l;
	struct rte_tel_data *le;
	unsigned k;

	if (i < 0)
		return;
	le = rte_tel_data_alloc();
	l = calloc(1, sizeof(*l));
	if (le == NULL || l == NULL) {
		rte_tel_data_free(le);
		free(l);
		xnv_ctl_error(d, "out of memory");
		return;
	}
	/* Every worker's histogram of the port (they are parked). */
	for (k = 0; k < c->cfg.workers; k++)
		xnv_lat_merge(l, &c->ports[i].lat[k]);
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "index", (uint64_t)i);
	rte_tel_data_add_dict_string(d, "name", c->cfg.ports[i].name);
	rte_tel_data_add_dict_u64(d, "count", l->n);
	rte_tel_data_add_dict_u64(d, "mean_ns", l->n ?
				  l->sum / l->n * 1000000000ull / c->tsc_hz : 0);
	for (k = 0; k < RTE_DIM(qs); k++)
		rte_tel_data_add_dict_u64(d, qs[k].key,
			(uint64_t)((double)xnv_lat_quantile(l, qs[k].q) *
				   1e9 / (double)c->tsc_hz));
	rte_tel_data_add_dict_u64(d, "sum_ns", (uint64_t)((double)l->sum *
				  1e9 / (double)c->tsc_hz));
	lat_le(c, l, le);
	rte_tel_data_add_dict_container(d, "le_ns", le, 0);
	free(l);
}

void
xnv_cmd_port_latency_reset(struct xnv_core *c, const char *p,
			   struct rte_tel_data *d)
{
	long i = lat_port(c, p, d);

	if (i < 0)
		return;
	memset(c->ports[i].lat, 0, c->cfg.workers * sizeof(*c->ports[i].lat));
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "index", (uint64_t)i);
	rte_tel_data_add_dict_string(d, "reset", "ok");
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * /xnv/reload: the config file read again, what may change live applied,
 * all of it or nothing.
 *
 * Live: each port's chain and rx_rate, fabric ports' hop.N keys; [core]
 * error_budget, heartbeat_timeout_ms, hoard_timeout_ms, stall_timeout_ms;
 * the [flow] sections (as /xnv/flow/reload).  Anything else that differs
 * from what the core runs (a key, a section added or removed) refuses the
 * reload with the first such difference named, and nothing changes.  The socket
 * is never read again (it may come from --socket).
 *
 * A direct command (ctl.h): the file is read and compared on telemetry's
 * thread, the chains and keys are applied on the main loop, then the flow
 * rules are rebuilt as /xnv/flow/reload does; if that fails, the loop puts
 * the chains and keys back.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_telemetry.h>

#include "chain.h"
#include "chain_table.h"
#include "core.h"
#include "ctl.h"
#include "ctl_ops.h"
#include "flow.h"

/* The [core] keys that must not differ: name, place, size. */
#define FIXED(key, field) { key, offsetof(struct xnv_config, field), \
	sizeof(((struct xnv_config *)0)->field) }
static const struct { const char *key; size_t off, len; } fixed[] = {
	FIXED("ring_size", ring_size), FIXED("burst", burst),
	FIXED("spill_threshold", spill_pct),
	FIXED("log_buffer_kib", log_buffer_kib),
	FIXED("socket_mode", socket_mode),
	FIXED("socket_group", socket_group_set),
	FIXED("socket_group", socket_gid), FIXED("max_held", max_held),
	FIXED("max_nfs_per_domain", max_nfs_per_domain),
	FIXED("max_grant_frames_per_domain", max_grant_frames_per_domain),
	FIXED("on_hostile", on_hostile), FIXED("latency", latency),
	FIXED("nf_pools", own_pools), FIXED("workers", workers),
};

/* What a reload changes, applied on the loop (and undone with @p old). */
struct live {
	struct xnv_chain chain[XNV_MAX_PORTS];
	struct xnv_cfg_hop hops[XNV_MAX_HOPS];	/* fabric ports' (fabric.h) */
	uint16_t n_hops;
	uint32_t rx_rate[XNV_MAX_PORTS];
	uint32_t error_budget, heartbeat_timeout_ms, hoard_timeout_ms;
	uint32_t stall_timeout_ms;
};

struct apply {
	const struct live *to;
	struct live *back;	/* NULL, or what it was, taken first */
	int rc;
};

static int
differ(const char *what, char *err, size_t len)
{
	/* A long section name is cut: the line still says what to do. */
	if (snprintf(err, len, "%s cannot change live (restart the core)",
		     what) >= (int)len && len > 4)
		memcpy(err + len - 4, "...", 4);
	return -EPERM;
}

/* 0 if @p n differs from @p o only where it may change live; else the
 * first difference in @p err. */
static int
compare(const struct xnv_config *o, const struct xnv_config *n, char *err,
	size_t len)
{
	char what[96];
	unsigned i;

	for (i = 0; i < RTE_DIM(fixed); i++)
		if (memcmp((const char *)o + fixed[i].off,
			   (const char *)n + fixed[i].off, fixed[i].len) != 0) {
			snprintf(what, sizeof(what), "[core] %s", fixed[i].key);
			return differ(what, err, len);
		}
	if (o->n_groups != n->n_groups || o->n_ports != n->n_ports ||
	    o->n_services != n->n_services)
		return differ("the set of groups, ports and services", err, len);
	for (i = 0; i < o->n_groups; i++)
		if (memcmp(&o->groups[i], &n->groups[i], sizeof(o->groups[i]))) {
			snprintf(what, sizeof(what), "[group %s]",
				 o->groups[i].name);
			return differ(what, err, len);
		}
	for (i = 0; i < o->n_services; i++)
		if (memcmp(&o->services[i], &n->services[i],
			   sizeof(o->services[i]))) {
			snprintf(what, sizeof(what), "[service %s]",
				 o->services[i].name);
			return differ(what, err, len);
		}
	for (i = 0; i < o->n_ports; i++) {
		const struct xnv_port_cfg *a = &o->ports[i], *b = &n->ports[i];

		if (strcmp(a->name, b->name) || strcmp(a->dev, b->dev) ||
		    a->group != b->group || a->rx_desc != b->rx_desc ||
		    a->tx_desc != b->tx_desc || a->fabric != b->fabric ||
		    a->rx_when_ready != b->rx_when_ready ||
		    a->rx_intr != b->rx_intr) {
			snprintf(what, sizeof(what), "[port %s] (other than "
				 "chain, hop.N, rx_rate)", a->name);
			return differ(what, err, len);
		}
	}
	return 0;
}

static void
take(const struct xnv_core *c, const struct xnv_config *k, struct live *l,
     int now)
{
	unsigned i;

	for (i = 0; i < k->n_ports; i++) {
		l->chain[i] = now ? c->chains[c->port_chain[i]].ch :
				    k->ports[i].chain;
		l->rx_rate[i] = k->ports[i].rx_rate;
	}
	l->n_hops = 0;
	if (!now) {
		memcpy(l->hops, k->hops, k->n_hops * sizeof(k->hops[0]));
		l->n_hops = k->n_hops;
	}
	for (i = 1; now && i <= XNV_HOP_MAX; i++)
		if (c->hops[i].chain != XNV_CHAIN_NONE)
			l->hops[l->n_hops++] = (struct xnv_cfg_hop){
				.hop = (uint16_t)i, .port = c->hops[i].port,
				.chain = c->chains[c->hops[i].chain].ch };
	l->error_budget = k->error_budget;
	l->heartbeat_timeout_ms = k->heartbeat_timeout_ms;
	l->hoard_timeout_ms = k->hoard_timeout_ms;
	l->stall_timeout_ms = k->stall_timeout_ms;
}

/* On the loop: chains, rates and limits of @p a->to; a chain table
 * without room undoes the ports done so far (a->rc -ENOSPC). */
static void
apply_on_loop(struct xnv_core *c, void *arg)
{
	struct apply *a = arg;
	const struct live *l = a->to;
	struct xnv_chain was[XNV_MAX_PORTS];
	uint16_t i, j;

	if (a->back != NULL)
		take(c, &c->cfg, a->back, 1);
	for (i = 0; i < c->cfg.n_ports; i++) {
		was[i] = c->chains[c->port_chain[i]].ch;
		if (xnv_chain_same(&was[i], &l->chain[i]))
			continue;
		if (xnv_chain_set_port(c, i, &l->chain[i]) < 0) {
			for (j = 0; j < i; j++)	/* still held: never fails */
				(void)xnv_chain_set_port(c, j, &was[j]);
			a->rc = -ENOSPC;
			return;
		}
		if (l->chain[i].n == 0 && !c->cfg.ports[i].fabric)
			c->ports[i].rx_on = 0;
	}
	if (xnv_fabric_set_hops(c, l->hops, l->n_hops) < 0) {
		for (j = 0; j < c->cfg.n_ports; j++)
			(void)xnv_chain_set_port(c, j, &was[j]);
		a->rc = -ENOSPC;
		return;
	}
	memcpy(c->cfg.hops, l->hops, l->n_hops * sizeof(l->hops[0]));
	c->cfg.n_hops = l->n_hops;
	for (i = 0; i < c->cfg.n_ports; i++) {
		if (c->cfg.ports[i].rx_rate != l->rx_rate[i])
			xnv_pace_init(&c->ports[i].pace, l->rx_rate[i],
				      c->tsc_hz);
		c->cfg.ports[i].rx_rate = l->rx_rate[i];
	}
	c->cfg.error_budget = l->error_budget;
	c->cfg.heartbeat_timeout_ms = l->heartbeat_timeout_ms;
	c->cfg.hoard_timeout_ms = l->hoard_timeout_ms;
	c->cfg.stall_timeout_ms = l->stall_timeout_ms;
	c->heartbeat_tsc = l->heartbeat_timeout_ms * c->tsc_hz / 1000;
	c->hoard_tsc = l->hoard_timeout_ms * c->tsc_hz / 1000;
	c->stall_tsc = l->stall_timeout_ms * c->tsc_hz / 1000;
	xnv_update_rx_gates(c);
	a->rc = 0;
}

/* The file now, checked and compared; 0, or -errno with @p err. */
static int
read_again(struct xnv_core *c, struct live *to, char *err, size_t len)
{
	struct xnv_config *n = malloc(sizeof(*n));
	int rc;

	if (n == NULL) {
		snprintf(err, len, "out of memory");
		return -ENOMEM;
	}
	rc = xnv_config_load(c->cfg.path, n, err, len);
	if (rc == 0) {
		rc = compare(&c->cfg, n, err, len);
		take(c, n, to, 0);
		xnv_config_free(n);
	}
	free(n);
	return rc;
}

void
xnv_cmd_reload(struct xnv_core *c, const char *p, struct rte_tel_data *d)
{
	struct live *l = malloc(2 * sizeof(*l));
	char err[RTE_TEL_MAX_STRING_LEN];
	struct apply a = { .rc = -ETIMEDOUT };
	unsigned n = 0, was = 0;
	int rc;

	(void)p;
	if (l == NULL) {
		xnv_ctl_error(d, "out of memory");
		return;
	}
	rc = read_again(c, &l[0], err, sizeof(err));
	if (rc == 0) {
		a.to = &l[0];
		a.back = &l[1];
		rc = xnv_ctl_on_loop(apply_on_loop, &a);
		if (rc == 0 && (rc = a.rc) == -ENOSPC)
			snprintf(err, sizeof(err), "chain table full (%d "
				 "versions in use)", XNV_MAX_CHAINS);
	}
	if (rc == 0 && (rc = xnv_flows_reload(c, &n, &was, err,
					      sizeof(err))) < 0) {
		a.to = &l[1];		/* the flows failed: put it back */
		a.back = NULL;
		if (xnv_ctl_on_loop(apply_on_loop, &a) < 0 || a.rc < 0)
			XLOG(ERR, "reload: could not put the chains back\n");
	}
	free(l);
	if (rc == -ETIMEDOUT) {
		xnv_ctl_busy(d);
		return;
	}
	if (rc < 0) {
		xnv_ctl_error(d, "reload refused: %s", err);
		return;
	}
	XLOG(INFO, "config reloaded from %s: chains, rx_rate, limits; %u "
	     "flow rules in force (%u before)\n", c->cfg.path, n, was);
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "path", c->cfg.path);
	rte_tel_data_add_dict_u64(d, "rules", n);
	rte_tel_data_add_dict_u64(d, "removed", was);
}

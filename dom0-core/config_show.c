/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The effective config as the core runs it, one section per command, each
 * key written as the config file takes it (`xnv-ctl show config` puts the
 * sections together): /xnv/config ([core]), /xnv/config/group,
 * /xnv/config/port (its chain as it is now, not as it was loaded),
 * /xnv/config/service.  The flow rules in force are /xnv/flow/info's.
 * Run by the main loop (ctl.c).  The keys are config.c's; a key left at
 * "derived" (max_held, max_grant_frames_per_domain 0) is left out.
 */
#include <stdio.h>
#include <string.h>

#include <rte_telemetry.h>

#include "config_show.h"
#include "core.h"
#include "ctl.h"

#define U64(d, k, v) rte_tel_data_add_dict_u64((d), (k), (v))
#define STR(d, k, v) rte_tel_data_add_dict_string((d), (k), (v))

void
xnv_cmd_config_core(struct xnv_core *c, const char *p, struct rte_tel_data *d)
{
	const struct xnv_config *k = &c->cfg;
	char mode[8];

	(void)p;
	rte_tel_data_start_dict(d);
	STR(d, "path", k->path);
	STR(d, "socket", k->socket);
	U64(d, "ring_size", k->ring_size);
	U64(d, "burst", k->burst);
	U64(d, "stall_timeout_ms", k->stall_timeout_ms);
	U64(d, "spill_threshold", k->spill_pct);
	U64(d, "error_budget", k->error_budget);
	U64(d, "heartbeat_timeout_ms", k->heartbeat_timeout_ms);
	STR(d, "latency", k->latency ? "on" : "off");
	STR(d, "nf_pools", k->own_pools ? "own" : "group");
	U64(d, "log_buffer_kib", k->log_buffer_kib);
	U64(d, "workers", k->workers);
	snprintf(mode, sizeof(mode), "%04o", (unsigned)k->socket_mode);
	STR(d, "socket_mode", mode);
	if (k->socket_group_set)
		U64(d, "socket_group", k->socket_gid);
	if (k->max_held != 0)
		U64(d, "max_held", k->max_held);
	U64(d, "hoard_timeout_ms", k->hoard_timeout_ms);
	U64(d, "max_nfs_per_domain", k->max_nfs_per_domain);
	if (k->max_grant_frames_per_domain != 0)
		U64(d, "max_grant_frames_per_domain",
		    k->max_grant_frames_per_domain);
	STR(d, "on_hostile", xnv_config_hostile_name(k->on_hostile));
}

/* "0,1000": a list of ids as the config takes it; "" for none. */
static void
ids_text(const struct xnv_ids *ids, char *buf, size_t len)
{
	size_t o = 0;
	unsigned i;

	buf[0] = '\0';
	for (i = 0; i < ids->n && o < len; i++)
		o += (size_t)snprintf(buf + o, len - o, "%s%u", i ? "," : "",
				      (unsigned)ids->id[i]);
}

static void
access_keys(const struct xnv_access *a, struct rte_tel_data *d)
{
	char buf[RTE_TEL_MAX_STRING_LEN];

	ids_text(&a->uids, buf, sizeof(buf));
	STR(d, "allow_uids", buf);
	ids_text(&a->gids, buf, sizeof(buf));
	STR(d, "allow_gids", buf);
}

/* The index in @p p, below @p n; -1 after replying with an error. */
static long
index_of(const char *p, unsigned n, const char *what, struct rte_tel_data *d)
{
	long i = xnv_ctl_id(p);

	if (i < 0 || (unsigned long)i >= n) {
		xnv_ctl_error(d, "no %s %.20s", what, p);
		return -1;
	}
	return i;
}

void
xnv_cmd_config_group(struct xnv_core *c, const char *p,
		     struct rte_tel_data *d)
{
	long i = index_of(p, c->cfg.n_groups, "group", d);
	char to[RTE_TEL_MAX_STRING_LEN] = "";
	const struct xnv_group_cfg *g;
	size_t o = 0;
	unsigned j;

	if (i < 0)
		return;
	g = &c->cfg.groups[i];
	for (j = 0; j < c->cfg.n_groups && o < sizeof(to); j++)
		if (g->may_send_to & (1u << j))
			o += (size_t)snprintf(to + o, sizeof(to) - o, "%s%s",
					      o ? "," : "",
					      c->cfg.groups[j].name);
	rte_tel_data_start_dict(d);
	STR(d, "section", g->name);
	U64(d, "pool_bufs", g->pool_bufs);
	U64(d, "buf_size", g->buf_size);
	access_keys(&g->access, d);
	STR(d, "may_send_to", to);
}

void
xnv_cmd_config_port(struct xnv_core *c, const char *p, struct rte_tel_data *d)
{
	long i = index_of(p, c->cfg.n_ports, "port", d);
	const struct xnv_port_cfg *pc;
	struct rte_tel_data *ch;

	if (i < 0)
		return;
	pc = &c->cfg.ports[i];
	ch = xnv_ctl_chain_array(c, &c->chains[c->port_chain[i]].ch, d);
	if (ch == NULL)
		return;
	rte_tel_data_start_dict(d);
	STR(d, "section", pc->name);
	STR(d, "dev", pc->dev);
	STR(d, "group", c->cfg.groups[pc->group].name);
	rte_tel_data_add_dict_container(d, "chain", ch, 0);
	U64(d, "rx_desc", pc->rx_desc);
	U64(d, "tx_desc", pc->tx_desc);
	STR(d, "rx_start", pc->rx_when_ready ? "chain-ready" : "immediately");
	U64(d, "rx_rate", pc->rx_rate);
	STR(d, "rx_interrupt", pc->rx_intr ? "on" : "off");
}

void
xnv_cmd_config_service(struct xnv_core *c, const char *p,
		       struct rte_tel_data *d)
{
	long id = index_of(p, XNV_MAX_SERVICE_ID + 1, "service", d);
	const struct xnv_service_cfg *s;

	if (id < 0)
		return;
	if (c->cfg.service_by_id[id] < 0) {
		xnv_ctl_error(d, "no service %ld", id);
		return;
	}
	s = &c->cfg.services[c->cfg.service_by_id[id]];
	rte_tel_data_start_dict(d);
	STR(d, "section", s->name);
	U64(d, "id", s->id);
	if (s->access.set)
		access_keys(&s->access, d);
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* The /xnv/ telemetry commands (see CONTROL.md).  Run by the main loop. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_telemetry.h>

#include "core.h"
#include "counters.h"
#include "config_show.h"
#include "ctl.h"
#include "ctl_ops.h"
#include "nf_stats.h"
#include "logsink.h"

#ifndef XNV_VERSION
#error "XNV_VERSION: build with the Makefile (it passes -DXNV_VERSION)"
#endif

#define U64(d, k, v) rte_tel_data_add_dict_u64((d), (k), (v))
#define STR(d, k, v) rte_tel_data_add_dict_string((d), (k), (v))

/* A started array for a dict field; NULL after replying with an error. */
static struct rte_tel_data *
new_array(struct rte_tel_data *d, enum rte_tel_value_type type)
{
	struct rte_tel_data *a = rte_tel_data_alloc();

	if (a == NULL) {
		xnv_ctl_error(d, "out of memory");
		return NULL;
	}
	rte_tel_data_start_array(a, type);
	return a;
}

/* A chain as an array of step names (telemetry strings are limited to
 * 127 characters; a chain's text can be longer, a step name cannot). */
struct rte_tel_data *
xnv_ctl_chain_array(const struct xnv_core *c, const struct xnv_chain *ch,
	    struct rte_tel_data *d)
{
	struct rte_tel_data *a = new_array(d, RTE_TEL_STRING_VAL);
	char t[XNV_STEP_TEXT];
	unsigned i;

	if (a == NULL)
		return NULL;
	for (i = 0; i < ch->n; i++)
		rte_tel_data_add_array_string(a, xnv_config_step_text(&c->cfg,
					      &ch->s[i], t, sizeof(t)));
	return a;
}

/* "name": value for each counter of @p t */
static void
add_counters(struct rte_tel_data *d, const struct xnv_counter *t, unsigned n,
	     const void *snap)
{
	unsigned k;

	for (k = 0; k < n; k++)
		U64(d, t[k].name, xnv_counter(&t[k], snap));
}

static void
int_list(struct rte_tel_data *d, unsigned n, int (*ok)(struct xnv_core *,
	 unsigned), struct xnv_core *c, int (*id)(struct xnv_core *, unsigned))
{
	unsigned i;

	rte_tel_data_start_array(d, RTE_TEL_INT_VAL);
	for (i = 0; i < n; i++)
		if (ok == NULL || ok(c, i))
			rte_tel_data_add_array_int(d, id ? id(c, i) : (int)i);
}

static void
cmd_info(struct xnv_core *c, const char *p, struct rte_tel_data *d)
{
	(void)p;
	rte_tel_data_start_dict(d);
	STR(d, "version", XNV_VERSION);
	STR(d, "socket", c->cfg.socket);
	U64(d, "uptime_s", (rte_rdtsc() - c->start_tsc) / c->tsc_hz);
	U64(d, "n_ports", c->cfg.n_ports);
	U64(d, "n_groups", c->cfg.n_groups);
	U64(d, "n_services", c->cfg.n_services);
	U64(d, "n_nfs", c->n_active);
	U64(d, "n_flows", xnv_flows_count(c));
	U64(d, "burst", c->cfg.burst);
	U64(d, "ring_size", c->cfg.ring_size);
	U64(d, "busy_poll", c->idle == GNTS_IDLE_POLL);
	STR(d, "idle_sleep", gnts_idle_names[c->idle]);
	U64(d, "own_pools", (uint64_t)c->own_pools);
}

static void
cmd_stats(struct xnv_core *c, const char *p, struct rte_tel_data *d)
{
	uint64_t rx = 0, tx = 0, nrx = 0, ntx = 0, copies = 0;
	char key[48];
	unsigned i, j;

	(void)p;
	for (i = 0; i < c->cfg.n_ports; i++) {
		rx += c->ports[i].rx;
		tx += c->ports[i].tx;
	}
	for (i = 0; i < XNV_MAX_NFS; i++) {
		nrx += c->nfs[i].rx_pkts;
		ntx += c->nfs[i].tx_pkts;
	}
	for (i = 0; i < c->cfg.n_groups; i++)
		for (j = 0; j < c->cfg.n_groups; j++)
			copies += c->copies[i][j];
	rte_tel_data_start_dict(d);
	U64(d, "rx", rx);
	U64(d, "tx", tx);
	U64(d, "nf_rx", nrx);
	U64(d, "nf_tx", ntx);
	U64(d, "copies", copies);
	U64(d, "log_dropped", xnv_logsink_dropped());
	for (i = 0; i < XNV_DROP_N; i++) {
		snprintf(key, sizeof(key), "drop_%s", xnv_drop_names[i]);
		U64(d, key, c->drops[i]);
	}
}

/* The control plane (NF sockets / XenStore): the backend's counters. */
static void
cmd_control(struct xnv_core *c, const char *p, struct rte_tel_data *d)
{
	struct gnts_srv_counters ct = { 0 };

	(void)p;
	if (c->srv != NULL)
		gnts_srv_counters(c->srv, &ct);
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "backend", c->srv != NULL ?
				     gnts_srv_kind(c->srv) : "none");
	U64(d, "requests", ct.requests);
	U64(d, "refused", ct.refused);
	U64(d, "timed_out", ct.timed_out);
	U64(d, "evicted", ct.evicted);
	U64(d, "not_logged", ct.not_logged);
	U64(d, "callbacks", ct.callbacks);
	U64(d, "events", ct.events);
	U64(d, "events_deferred", ct.events_deferred);
	U64(d, "connections", ct.connections);
	U64(d, "waiting", ct.waiting);
}

static void
cmd_port_list(struct xnv_core *c, const char *p, struct rte_tel_data *d)
{
	(void)p;
	int_list(d, c->cfg.n_ports, NULL, c, NULL);
}

static void
cmd_port_info(struct xnv_core *c, const char *p, struct rte_tel_data *d)
{
	long i = xnv_ctl_id(p);
	struct xnv_port_counters pc;
	struct rte_tel_data *chain;

	if (i < 0 || i >= c->cfg.n_ports) {
		xnv_ctl_error(d, "no port %.20s", p);
		return;
	}
	chain = xnv_ctl_chain_array(c, &c->chains[c->port_chain[i]].ch, d);
	if (chain == NULL)
		return;
	xnv_port_counters(c, (uint16_t)i, &pc);
	rte_tel_data_start_dict(d);
	U64(d, "index", (uint64_t)i);
	STR(d, "name", c->cfg.ports[i].name);
	STR(d, "dev", c->cfg.ports[i].dev);
	STR(d, "group", c->cfg.groups[c->cfg.ports[i].group].name);
	rte_tel_data_add_dict_container(d, "chain", chain, 0);
	add_counters(d, xnv_port_counter_tab, XNV_PORT_N_COUNTERS, &pc);
}

static void
cmd_group_list(struct xnv_core *c, const char *p, struct rte_tel_data *d)
{
	(void)p;
	int_list(d, c->cfg.n_groups, NULL, c, NULL);
}

static void
cmd_group_info(struct xnv_core *c, const char *p, struct rte_tel_data *d)
{
	long i = xnv_ctl_id(p);
	struct xnv_group_counters gc;
	struct rte_tel_data *to;
	unsigned j;

	if (i < 0 || i >= c->cfg.n_groups) {
		xnv_ctl_error(d, "no group %s", p);
		return;
	}
	to = new_array(d, RTE_TEL_U64_VAL);
	if (to == NULL)
		return;
	for (j = 0; j < c->cfg.n_groups; j++)
		rte_tel_data_add_array_u64(to, c->copies[i][j]);
	rte_tel_data_start_dict(d);
	U64(d, "index", (uint64_t)i);
	STR(d, "name", c->cfg.groups[i].name);
	xnv_group_counters(c, (uint16_t)i, &gc);
	add_counters(d, xnv_group_counter_tab, XNV_GROUP_N_COUNTERS, &gc);
	rte_tel_data_add_dict_container(d, "copies_to", to, 0);
}

static int
service_id(struct xnv_core *c, unsigned i)
{
	return c->cfg.services[i].id;
}

static void
cmd_service_list(struct xnv_core *c, const char *p, struct rte_tel_data *d)
{
	(void)p;
	int_list(d, c->cfg.n_services, NULL, c, service_id);
}

static void
cmd_service_info(struct xnv_core *c, const char *p, struct rte_tel_data *d)
{
	long id = xnv_ctl_id(p);
	struct rte_tel_data *inst;
	struct xnv_service *s;
	int i;

	if (id < 1 || id > XNV_MAX_SERVICE_ID ||
	    (i = c->cfg.service_by_id[id]) < 0) {
		xnv_ctl_error(d, "no service with id %s", p);
		return;
	}
	s = &c->services[i];
	inst = new_array(d, RTE_TEL_INT_VAL);
	if (inst == NULL)
		return;
	for (unsigned k = 0; k < s->n_live; k++)
		rte_tel_data_add_array_int(inst, s->live[k]);
	rte_tel_data_start_dict(d);
	U64(d, "id", (uint64_t)id);
	STR(d, "name", c->cfg.services[i].name);
	rte_tel_data_add_dict_container(d, "instances", inst, 0);
	U64(d, "picks_affinity", s->picks_affinity);
	U64(d, "picks_spill", s->picks_spill);
	U64(d, "no_instance", s->no_instance);
}

static int
nf_on_record(struct xnv_core *c, unsigned i)
{
	return c->nfs[i].state != XNV_REC_FREE;
}

static void
cmd_nf_list(struct xnv_core *c, const char *p, struct rte_tel_data *d)
{
	(void)p;
	int_list(d, XNV_MAX_NFS, nf_on_record, c, NULL);
}

static void
cmd_nf_info(struct xnv_core *c, const char *p, struct rte_tel_data *d)
{
	static const char *const states[] = { "free", "attached", "gone" };
	long i = xnv_ctl_id(p);
	struct xnv_rec_counters rc;
	struct xnv_nfrec *nf;
	int live;

	if (i < 0 || i >= XNV_MAX_NFS || c->nfs[i].state == XNV_REC_FREE) {
		xnv_ctl_error(d, "no NF %s", p);
		return;
	}
	nf = &c->nfs[i];
	live = nf->state == XNV_REC_ATTACHED;
	rte_tel_data_start_dict(d);
	U64(d, "id", (uint64_t)i);
	STR(d, "name", nf->name);
	STR(d, "service", c->cfg.services[nf->service].name);
	U64(d, "service_id", c->cfg.services[nf->service].id);
	STR(d, "group", c->cfg.groups[nf->group].name);
	U64(d, "instance", nf->instance);
	U64(d, "worker", nf->worker);	/* whose lcore polls it (worker.h) */
	U64(d, "domain", nf->dom);
	U64(d, "pid", (uint64_t)nf->pid);
	STR(d, "state", states[nf->state]);
	xnv_rec_counters(nf, &rc);
	add_counters(d, xnv_rec_counter_tab, XNV_REC_N_COUNTERS, &rc);
	U64(d, "quarantined", nf->quarantined);
	/* Its doorbells: 1 while it has them (until it goes). */
	U64(d, "doorbell", nf->bell.b != NULL);
	/* 1 while the idle core leaves it asleep, its rings not polled. */
	U64(d, "dozing", XNV_BELL_DOZING(nf));
	STR(d, "reason", nf->gone_reason);
	U64(d, "rx_ring_used", live ? gnts_ring_count(&nf->rx, 1) : 0);
	U64(d, "tx_ring_used", live ? gnts_ring_count(&nf->tx, 0) : 0);
	U64(d, "ring_size", c->cfg.ring_size);
	U64(d, "own_pool", nf->pool >= XNV_MAX_GROUPS);
	U64(d, "pool_bufs", live ? c->pools[nf->pool].n_bufs : 0);
	U64(d, "pool_free", live ? xnv_pool_free(&c->pools[nf->pool]) : 0);
	xnv_nf_stats_add(nf, d);
}

static void
cmd_chain_set(struct xnv_core *c, const char *p, struct rte_tel_data *d)
{
	char err[RTE_TEL_MAX_STRING_LEN], name[XNV_NAME_LEN], text[512];
	struct rte_tel_data *arr;
	struct xnv_chain ch;
	int port, n = 0;

	if (sscanf(p, "%31s %n", name, &n) != 1 || p[n] == '\0') {
		xnv_ctl_error(d, "usage: PORT STEPS (e.g. in fwd-a->out)");
		return;
	}
	port = xnv_config_port(&c->cfg, name);
	if (port < 0) {
		xnv_ctl_error(d, "no port named '%s'", name);
		return;
	}
	if (xnv_config_parse_chain(&c->cfg, p + n, &ch, err, sizeof(err)) < 0) {
		xnv_ctl_error(d, "%s", err);
		return;
	}
	if (ch.n == 0) {
		xnv_ctl_error(d, "a chain needs at least one step");
		return;
	}
	arr = xnv_ctl_chain_array(c, &ch, d);	/* the reply, before any change */
	if (arr == NULL)
		return;
	if (xnv_chain_set_port(c, (uint16_t)port, &ch) < 0) {
		rte_tel_data_free(arr);
		xnv_ctl_error(d, "chain table full (%d versions in use)",
			      XNV_MAX_CHAINS);
		return;
	}
	xnv_chain_text(c, &ch, text, sizeof(text));
	XLOG(INFO, "port %s: chain set to %s\n", name, text);
	xnv_update_rx_gates(c);
	rte_tel_data_start_dict(d);
	STR(d, "port", name);
	rte_tel_data_add_dict_container(d, "chain", arr, 0);
}

const struct xnv_ctl_cmd xnv_ctl_cmds[] = {
	{ "/xnv/info", cmd_info, 0, "Core summary. No parameters.", 0 },
	{ "/xnv/stats", cmd_stats, 0, "Totals and core drop counters.", 0 },
	{ "/xnv/control", cmd_control, 0,
	  "Control plane: requests from NFs, refusals, limits hit.", 0 },
	{ "/xnv/port/list", cmd_port_list, 0, "Port indices.", 0 },
	{ "/xnv/port/info", cmd_port_info, 1, "Port details. Param: index.", 0 },
	{ "/xnv/port/latency", xnv_cmd_port_latency, 1,
	  "Latency of packets sent, rx to tx ([core] latency = on). Param: index.", 0 },
	{ "/xnv/port/latency/reset", xnv_cmd_port_latency_reset, 1,
	  "Empty a port's latency histogram. Param: index.", 0 },
	{ "/xnv/group/list", cmd_group_list, 0, "Trust group indices.", 0 },
	{ "/xnv/group/info", cmd_group_info, 1, "Group pool. Param: index.", 0 },
	{ "/xnv/service/list", cmd_service_list, 0, "Service ids.", 0 },
	{ "/xnv/service/info", cmd_service_info, 1,
	  "Service replicas and picks. Param: id.", 0 },
	{ "/xnv/nf/list", cmd_nf_list, 0, "NF ids (attached and gone).", 0 },
	{ "/xnv/nf/info", cmd_nf_info, 1, "NF details. Param: id.", 0 },
	{ "/xnv/nf/release", xnv_cmd_nf_release, 1,
	  "End a domain's quarantine. Param: domain.", 0 },
	{ "/xnv/domain/list", xnv_cmd_domain_list, 0,
	  "Domains with NFs attached or draining, or quarantined.", 0 },
	{ "/xnv/domain/info", xnv_cmd_domain_info, 1,
	  "A domain's NFs, grant frames, quarantine. Param: domain.", 0 },
	{ "/xnv/flow/list", xnv_cmd_flow_list, 0,
	  "Flow rule ids, 500 at most. Param: first id (default 1).", 1 },
	{ "/xnv/flow/info", xnv_cmd_flow_info, 1,
	  "Flow rule: every field, hits. Param: id.", 1 },
	{ "/xnv/flow/add", xnv_cmd_flow_add, 1, "Add a rule. Param: [priority=N] "
	  "[in_port=P] [vlan=V] [proto=P] [src=A/L] [dst=A/L] [sport=N-M] "
	  "[dport=N-M] chain=STEPS", 1 },
	{ "/xnv/flow/del", xnv_cmd_flow_del, 1, "Remove a rule. Param: id.", 1 },
	{ "/xnv/flow/clear", xnv_cmd_flow_clear, 0, "Remove every rule.", 1 },
	{ "/xnv/flow/reload", xnv_cmd_flow_reload, 0, "Replace every rule "
	  "with the config file's [flow] sections, at once.", 1 },
	{ "/xnv/workers", xnv_cmd_workers, 0, "Workers ([core] workers): "
	  "lcore, sent, handed, taken, drops.", 0 },
	{ "/xnv/fabric", xnv_cmd_fabric, 0, "Fabric hops: port, chain, "
	  "counters.", 0 },
	{ "/xnv/chain/set", cmd_chain_set, 1,
	  "Set a port's default chain. Param: PORT STEPS", 0 },
	{ "/xnv/chain/unset", xnv_cmd_chain_unset, 1,
	  "A port back to tx only: no chain, rx stopped. Param: PORT", 0 },
	{ "/xnv/config", xnv_cmd_config_core, 0,
	  "The effective [core] section, and the config file's path.", 0 },
	{ "/xnv/config/group", xnv_cmd_config_group, 1,
	  "A [group] section as the core runs it. Param: index.", 0 },
	{ "/xnv/config/port", xnv_cmd_config_port, 1,
	  "A [port] section, its chain as it is now. Param: index.", 0 },
	{ "/xnv/config/service", xnv_cmd_config_service, 1,
	  "A [service] section. Param: id.", 0 },
	{ "/xnv/reload", xnv_cmd_reload, 0, "Read the config file again: "
	  "chains, rx_rate, live limits, flows; or nothing.", 1 },
	{ "/xnv/clear", xnv_cmd_clear, 0,
	  "Counters back to 0; 'kept' lists what is not reset.", 0 },
	{ "/xnv/nf/kick", xnv_cmd_nf_kick, 1, "Detach an NF as at a clean "
	  "shutdown (with --reattach it attaches again). Param: id or name", 0 },
	{ NULL, NULL, 0, NULL, 0 },
};

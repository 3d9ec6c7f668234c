/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Operator commands that change state, beside chain set and the flow
 * rules: /xnv/clear (counters back to 0), /xnv/chain/unset (a port back
 * to tx only), /xnv/nf/kick (detach an NF so that it attaches again).
 * Run by the main loop, like every command of ctl_cmds.c (CONTROL.md).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_ethdev.h>
#include <rte_telemetry.h>

#include "core.h"
#include "ctl.h"
#include "ctl_ops.h"

#define STR(d, k, v) rte_tel_data_add_dict_string((d), (k), (v))

/* What /xnv/clear leaves alone, and why (CONTROL.md says the same). */
static const char *const kept[] = {
	"held (buffers held now: a state)",
	"link_up (a state)",
	"flow rule hits (reset when a rule is put in force)",
	"latency histograms (/xnv/port/latency/reset)",
	"control counters (/xnv/control)",
	"log_dropped",
	"NF stats (the NF's own memory)",
	"af_packet kernel ring drops in rx_missed",
};

static void
clear_nf(struct xnv_nfrec *nf)
{
	nf->rx_pkts = nf->tx_pkts = nf->drops = nf->bad = 0;
	nf->reclaimed = nf->allocs = nf->quota_drops = 0;
	memset(nf->bad_kind, 0, sizeof(nf->bad_kind));
}

void
xnv_cmd_clear(struct xnv_core *c, const char *p, struct rte_tel_data *d)
{
	struct rte_tel_data *k = rte_tel_data_alloc();
	unsigned i;

	(void)p;
	if (k == NULL) {
		xnv_ctl_error(d, "out of memory");
		return;
	}
	for (i = 0; i < c->cfg.n_ports; i++) {
		struct xnv_port *pt = &c->ports[i];

		pt->rx = pt->tx = pt->tx_drop = pt->nf_quota = 0;
		pt->link_changes = pt->rx_wakes = 0;
		(void)rte_eth_stats_reset(pt->port_id);	/* rx_missed, nombuf */
	}
	for (i = 0; i < XNV_MAX_NFS; i++)
		clear_nf(&c->nfs[i]);
	for (i = 0; i < XNV_MAX_POOLS; i++)
		c->pools[i].copies_in = 0;
	for (i = 0; i < XNV_MAX_SERVICES; i++)
		c->services[i].picks_affinity = c->services[i].picks_spill =
			c->services[i].no_instance = 0;
	memset(c->drops, 0, sizeof(c->drops));
	memset(c->copies, 0, sizeof(c->copies));
	XLOG(INFO, "counters cleared (ports, NFs, groups, services, drops)\n");
	rte_tel_data_start_array(k, RTE_TEL_STRING_VAL);
	for (i = 0; i < RTE_DIM(kept); i++)
		rte_tel_data_add_array_string(k, kept[i]);
	rte_tel_data_start_dict(d);
	STR(d, "cleared", "ports, NFs, groups, services, drops");
	rte_tel_data_add_dict_container(d, "kept", k, 0);
}

void
xnv_cmd_chain_unset(struct xnv_core *c, const char *p, struct rte_tel_data *d)
{
	const struct xnv_chain none = { .n = 0 };
	int port = xnv_config_port(&c->cfg, p);

	if (port < 0) {
		xnv_ctl_error(d, "no port named '%.32s'", p);
		return;
	}
	if (c->chains[c->port_chain[port]].ch.n == 0) {
		xnv_ctl_error(d, "port %s has no chain (tx only already)", p);
		return;
	}
	if (xnv_chain_set_port(c, (uint16_t)port, &none) < 0) {
		xnv_ctl_error(d, "chain table full (%d versions in use)",
			      XNV_MAX_CHAINS);
		return;
	}
	/* Not polled any more: what its NIC holds stays there.  Packets
	 * already inside the core finish the chain they were given. */
	c->ports[port].rx_on = 0;
	XLOG(INFO, "port %s: chain unset, rx stopped (tx only)\n", p);
	rte_tel_data_start_dict(d);
	STR(d, "port", c->cfg.ports[port].name);
	STR(d, "rx", "stopped");
}

/* An attached NF by id or by name; NULL after replying with an error. */
static struct xnv_nfrec *
attached_nf(struct xnv_core *c, const char *p, struct rte_tel_data *d)
{
	long id = xnv_ctl_id(p);
	unsigned i;

	for (i = 0; i < XNV_MAX_NFS; i++) {
		struct xnv_nfrec *nf = &c->nfs[i];

		if (nf->state == XNV_REC_ATTACHED &&
		    ((long)i == id || strcmp(nf->name, p) == 0))
			return nf;
	}
	xnv_ctl_error(d, "no attached NF '%.40s' (see /xnv/nf/list)", p);
	return NULL;
}

void
xnv_cmd_nf_kick(struct xnv_core *c, const char *p, struct rte_tel_data *d)
{
	struct xnv_nfrec *nf = attached_nf(c, p, d);
	char name[sizeof(nf->name)];
	unsigned id;

	if (nf == NULL)
		return;
	id = nf->id;
	snprintf(name, sizeof(name), "%s", nf->name);
	/* As at a clean shutdown of the core: an NF with --reattach comes
	 * back at once, one without exits 0; what it held is reclaimed. */
	nf->detach_code = GNTS_DETACH_SHUTDOWN;
	xnv_rec_detach(c, nf, "kicked by the operator (xnv-ctl nf kick)");
	XLOG(INFO, "NF %s (id %u) kicked by the operator\n", name, id);
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "id", id);
	STR(d, "name", name);
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* Chain versions: finding the packets that still name one (the table
 * itself is chain_table.c's). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core.h"

static void
mark(uint8_t *live, struct rte_mbuf *m)
{
	uint16_t ch = xnv_priv(m)->chain;

	if (ch < XNV_MAX_CHAINS)
		live[ch] = 1;
}

/*
 * Free versions nobody refers to any more.  Runs on the control path,
 * between bursts, where every packet still in flight is either owned by
 * an NF (owner table) or parked in a pending list: those are the only
 * packets that can still name a version.  (Runs inside a control
 * command, so inside the workers' barrier.)
 */
static void
collect(struct xnv_core *c)
{
	static uint8_t live[XNV_MAX_CHAINS];
	unsigned i, p, k;

	memset(live, 0, sizeof(live));
	for (p = 0; p < XNV_MAX_POOLS; p++)
		for (i = 0; c->pools[p].mp != NULL && i < c->pools[p].n_bufs;
		     i++)
			if (c->pools[p].owner[i] != 0)
				mark(live, xnv_pool_mbuf(&c->pools[p], i));
	for (i = 0; i < c->cfg.n_ports; i++)
		for (k = 0; k < c->ports[i].pend.n; k++)
			mark(live, c->ports[i].pend.m[k]);
	for (i = 0; i < XNV_MAX_NFS; i++)
		for (k = 0; k < c->nfs[i].pend.n; k++)
			mark(live, c->nfs[i].pend.m[k]);
	/* What workers resolved and parked, and what is on its way
	 * between them (worker_steer.c; what a worker is to send itself
	 * has no chain: worker.h). */
	xnv_steer_mark(c, mark, live);
	xnv_chain_table_sweep(c->chains, live);
}

/* The route words of version @p id's steps (the data path's NEXT takes
 * them as they are: nf_rx.c); a step that pushes a hop is marked
 * XNV_ROUTE_HOP, so that it is taken the long way. */
static void
make_routes(struct xnv_core *c, uint16_t id)
{
	struct xnv_chain_slot *t = &c->chains[id];
	unsigned s;

	for (s = 0; s < RTE_DIM(t->route); s++)
		t->route[s] = s >= t->ch.n ? 0 :
			      xnv_route(id, (uint8_t)s, &t->ch.s[s]) |
			      (t->ch.s[s].hop != 0 ? XNV_ROUTE_HOP : 0);
}

int
xnv_chain_new(struct xnv_core *c, const struct xnv_chain *ch)
{
	int id = xnv_chain_table_get(c->chains, ch);

	if (id == -ENOSPC) {
		collect(c);
		id = xnv_chain_table_get(c->chains, ch);
	}
	if (id >= 0)
		make_routes(c, (uint16_t)id);
	return id;
}

void
xnv_chain_unuse(struct xnv_core *c, uint16_t id)
{
	xnv_chain_table_unuse(c->chains, id);
}

int
xnv_chain_set_port(struct xnv_core *c, uint16_t port,
		   const struct xnv_chain *ch)
{
	int id = xnv_chain_new(c, ch);

	if (id < 0)
		return id;
	xnv_chain_unuse(c, c->port_chain[port]);
	c->port_chain[port] = (uint16_t)id;
	return id;
}

void
xnv_chain_text(const struct xnv_core *c, const struct xnv_chain *ch,
	       char *buf, size_t len)
{
	size_t o = 0;
	unsigned i;

	buf[0] = '\0';
	char t[XNV_STEP_TEXT];

	for (i = 0; i < ch->n && o < len; i++)
		o += (size_t)snprintf(buf + o, len - o, "%s%s", i ? " -> " : "",
				      xnv_config_step_text(&c->cfg, &ch->s[i],
							   t, sizeof(t)));
}

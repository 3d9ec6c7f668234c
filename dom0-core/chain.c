/* SPDX-License-Identifier: BSD-3-Clause */
/* Chain versions; see struct xnv_chain_slot in core.h. */
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
 * packets that can still name a version.
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
	for (i = 0; i < XNV_MAX_CHAINS; i++)
		if (c->chains[i].used && c->chains[i].users == 0 && !live[i])
			c->chains[i].used = 0;
}

/* Same steps?  (Versions never change, so equal ones can be shared.) */
static int
same(const struct xnv_chain *a, const struct xnv_chain *b)
{
	unsigned i;

	if (a->n != b->n)
		return 0;
	for (i = 0; i < a->n; i++)
		if (a->s[i].kind != b->s[i].kind || a->s[i].id != b->s[i].id)
			return 0;
	return 1;
}

int
xnv_chain_new(struct xnv_core *c, const struct xnv_chain *ch)
{
	unsigned i, pass;

	for (i = 0; i < XNV_MAX_CHAINS; i++)
		if (c->chains[i].used && same(&c->chains[i].ch, ch)) {
			c->chains[i].users++;
			return (int)i;
		}
	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < XNV_MAX_CHAINS; i++) {
			struct xnv_chain_slot *s = &c->chains[i];

			if (s->used)
				continue;
			memset(s, 0, sizeof(*s));
			s->ch = *ch;
			s->used = 1;
			s->users = 1;
			return (int)i;
		}
		collect(c);
	}
	return -ENOSPC;
}

void
xnv_chain_unuse(struct xnv_core *c, uint16_t id)
{
	if (id < XNV_MAX_CHAINS && c->chains[id].users > 0)
		c->chains[id].users--;
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
	for (i = 0; i < ch->n && o < len; i++) {
		const struct xnv_step *s = &ch->s[i];
		const char *name = s->kind == XNV_STEP_SERVICE ?
				   c->cfg.services[s->id].name :
				   s->kind == XNV_STEP_PORT ?
				   c->cfg.ports[s->id].name : "drop";

		o += (size_t)snprintf(buf + o, len - o, "%s%s",
				      i ? " -> " : "", name);
	}
}

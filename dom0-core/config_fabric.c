/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A fabric port's keys (fabric.h): `fabric = vlan`, its `hop.N = chain`
 * keys, and the `PORT:HOP` chain step that sends out of it.  No DPDK
 * beyond rte_cfgfile.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cfgfile.h>

#include "config.h"
#include "config_file.h"

/* "17" as a hop (1..XNV_HOP_MAX) into *@p hop; -1 if it is not one. */
static int
hop_number(const char *s, uint16_t *hop)
{
	char *end;
	unsigned long v;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno != 0 || *end != '\0' || v < 1 || v > XNV_HOP_MAX)
		return -1;
	*hop = (uint16_t)v;
	return 0;
}

int
xnv_config_fabric_step(const struct xnv_config *c, const char *text,
		       struct xnv_step *s, char *err, size_t errlen)
{
	const char *colon = strchr(text, ':');
	char name[XNV_NAME_LEN];
	uint16_t hop;
	int p;

	if (colon == NULL)
		return 0;
	snprintf(name, sizeof(name), "%.*s", (int)(colon - text), text);
	p = xnv_config_port(c, name);
	if (p < 0 || c->ports[p].fabric == XNV_FABRIC_NONE)
		return xnv_cfg_fail(err, errlen, "chain step '%.40s': '%s' is "
				    "not a fabric port (PORT:HOP sends out of "
				    "a port with fabric = vlan)", text, name);
	if (hop_number(colon + 1, &hop) < 0)
		return xnv_cfg_fail(err, errlen, "chain step '%.40s': hop "
				    "'%.8s' is not a number from 1 to %d", text,
				    colon + 1, XNV_HOP_MAX);
	*s = (struct xnv_step){ XNV_STEP_PORT, (uint16_t)p, hop };
	return 1;
}

/* hop.N of fabric port @p idx: its number unique, its chain parsed. */
static int
load_hop(struct xnv_config *c, const char *sec, uint16_t idx,
	 const struct rte_cfgfile_entry *e, char *err, size_t errlen)
{
	struct xnv_cfg_hop *h = &c->hops[c->n_hops];
	char why[200];
	uint16_t i;

	if (c->ports[idx].fabric == XNV_FABRIC_NONE)
		return xnv_cfg_fail(err, errlen, "[%s] %s: only a fabric port "
				    "(fabric = vlan) has hops", sec, e->name);
	if (hop_number(e->name + 4, &h->hop) < 0)
		return xnv_cfg_fail(err, errlen, "[%s] %s: hop '%s' is not a "
				    "number from 1 to %d", sec, e->name,
				    e->name + 4, XNV_HOP_MAX);
	for (i = 0; i < c->n_hops; i++)
		if (c->hops[i].hop == h->hop)
			return xnv_cfg_fail(err, errlen, "[%s] %s: hop %u is "
					    "[port %s]'s already", sec, e->name,
					    h->hop, c->ports[c->hops[i].port].name);
	if (c->n_hops == XNV_MAX_HOPS)
		return xnv_cfg_fail(err, errlen, "[%s] %s: more than %d hops",
				    sec, e->name, XNV_MAX_HOPS);
	if (xnv_config_parse_chain(c, e->value, &h->chain, why,
				   sizeof(why)) < 0)
		return xnv_cfg_fail(err, errlen, "[%s] %s: %s", sec, e->name,
				    why);
	if (h->chain.n == 0)
		return xnv_cfg_fail(err, errlen, "[%s] %s: empty chain", sec,
				    e->name);
	h->port = idx;
	c->n_hops++;
	return 0;
}

/* Pass 1: every hop.N of [@p sec], in file order. */
static int
load_hops(struct rte_cfgfile *f, const char *sec, uint16_t idx,
	  struct xnv_config *c, char *err, size_t errlen)
{
	struct rte_cfgfile_entry *e;
	int n, i, rc = 0;

	n = rte_cfgfile_section_num_entries(f, sec);
	if (n <= 0)
		return 0;
	e = calloc((size_t)n, sizeof(*e));
	if (e == NULL)
		return xnv_cfg_fail(err, errlen, "[%s]: out of memory", sec);
	n = rte_cfgfile_section_entries(f, sec, e, n);
	for (i = 0; i < n && rc == 0; i++)
		if (strncmp(e[i].name, "hop.", 4) == 0)
			rc = load_hop(c, sec, idx, &e[i], err, errlen);
	free(e);
	return rc;
}

int
xnv_config_port_fabric(struct rte_cfgfile *f, const char *sec, uint16_t idx,
		       struct xnv_config *c, int link, char *err,
		       size_t errlen)
{
	struct xnv_port_cfg *p = &c->ports[idx];
	const char *v = rte_cfgfile_get_entry(f, sec, "fabric");

	if (link)
		return load_hops(f, sec, idx, c, err, errlen);
	if (v == NULL || strcmp(v, "none") == 0)
		return 0;
	if (strcmp(v, "vlan") != 0)
		return xnv_cfg_fail(err, errlen, "[%s] fabric = %s: expected "
				    "'vlan' (the hop in an outer 802.1Q tag) or "
				    "'none'", sec, v);
	if (rte_cfgfile_get_entry(f, sec, "chain") != NULL)
		return xnv_cfg_fail(err, errlen, "[%s] chain: a fabric port's "
				    "arrivals take their hop's chain (hop.N = "
				    "...), not the port's", sec);
	p->fabric = XNV_FABRIC_VLAN;
	return 0;
}

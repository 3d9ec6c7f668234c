/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * /xnv/flow/ commands (CONTROL.md).  Direct commands: they run on the
 * telemetry thread, under the flow table's mutex, and may take as long as
 * a rule set takes to build; the data path keeps forwarding meanwhile
 * under the old set (flow.c).  Each change is all or nothing.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_telemetry.h>

#include "core.h"
#include "ctl.h"
#include "flow_pvt.h"

#define U64(d, k, v) rte_tel_data_add_dict_u64((d), (k), (v))
#define STR(d, k, v) rte_tel_data_add_dict_string((d), (k), (v))

/* Telemetry arrays hold at most RTE_TEL_MAX_ARRAY_ENTRIES (512): the
 * list is paged.  Param: first id (default 1); a full page means ask
 * again from the last id + 1. */
#define FLOW_PAGE 500

static const struct flow_slot *
slot_of(const struct xnv_flows *f, long id)
{
	return id >= 1 && id <= XNV_MAX_FLOWS && f->slot[id - 1].used ?
	       &f->slot[id - 1] : NULL;
}

void
xnv_cmd_flow_list(struct xnv_core *c, const char *p, struct rte_tel_data *d)
{
	struct xnv_flows *f = c->flows;
	long start = (p == NULL || *p == '\0') ? 1 : xnv_ctl_id(p);
	unsigned i, n = 0;

	if (start < 1) {
		xnv_ctl_error(d, "flow list: bad start id '%.20s'", p);
		return;
	}
	pthread_mutex_lock(&f->mu);
	rte_tel_data_start_array(d, RTE_TEL_INT_VAL);
	for (i = (unsigned)start - 1; i < XNV_MAX_FLOWS && n < FLOW_PAGE; i++)
		if (f->slot[i].used) {
			rte_tel_data_add_array_int(d, (int)i + 1);
			n++;
		}
	pthread_mutex_unlock(&f->mu);
}

/* The rule in @p s as a dict: every field as text (`any`: wildcard). */
static void
describe(struct xnv_core *c, long id, const struct flow_slot *s,
	 struct rte_tel_data *d)
{
	struct rte_tel_data *chain;
	struct xnv_flow_ports ports;
	struct xnv_flow_text t;

	chain = xnv_ctl_chain_array(c, &c->chains[s->chain].ch, d);
	if (chain == NULL)
		return;
	xnv_config_flow_ports(&c->cfg, &ports);
	xnv_flow_rule_fields(&s->r, &ports, &t);
	rte_tel_data_start_dict(d);
	U64(d, "id", (uint64_t)id);
	STR(d, "name", s->name);
	U64(d, "priority", s->r.priority);
	STR(d, "in_port", t.in_port);
	STR(d, "vlan", t.vlan);
	STR(d, "proto", t.proto);
	STR(d, "src", t.src);
	STR(d, "dst", t.dst);
	STR(d, "sport", t.sport);
	STR(d, "dport", t.dport);
	rte_tel_data_add_dict_container(d, "chain", chain, 0);
	U64(d, "hits", xnv_flows_hits(c->flows, (unsigned)id - 1));
}

void
xnv_cmd_flow_info(struct xnv_core *c, const char *p, struct rte_tel_data *d)
{
	struct xnv_flows *f = c->flows;
	long id = xnv_ctl_id(p);
	const struct flow_slot *s;

	pthread_mutex_lock(&f->mu);
	if ((s = slot_of(f, id)) == NULL)
		xnv_ctl_error(d, "no flow rule %.20s", p);
	else
		describe(c, id, s, d);
	pthread_mutex_unlock(&f->mu);
}

/* "MATCH chain=STEPS" -> rule and chain, checked; nothing changed. */
static int
parse_add(struct xnv_core *c, const char *p, struct xnv_flow_rule *r,
	  struct xnv_chain *ch, char *err, size_t errlen)
{
	struct xnv_flow_ports ports;
	const char *at = strstr(p, "chain=");
	char match[512];
	int rc;

	if (at == NULL || (at != p && at[-1] != ' ')) {
		snprintf(err, errlen, "flow rule: no chain=STEPS");
		return -EINVAL;
	}
	if ((size_t)(at - p) >= sizeof(match)) {
		snprintf(err, errlen, "flow rule: too long");
		return -EINVAL;
	}
	memcpy(match, p, (size_t)(at - p));
	match[at - p] = '\0';
	xnv_config_flow_ports(&c->cfg, &ports);
	rc = xnv_flow_rule_parse(match, &ports, r, err, errlen);
	if (rc == 0)
		rc = xnv_config_parse_chain(&c->cfg, at + 6, ch, err, errlen);
	if (rc == 0 && ch->n == 0) {
		snprintf(err, errlen, "flow rule: the chain needs a step");
		rc = -EINVAL;
	}
	return rc;
}

/* Slot for a new rule @p r: -EEXIST (*@p i its id - 1) for a rule that
 * matches exactly the same, -ENOSPC when full. */
static int
free_slot(const struct xnv_flows *f, const struct xnv_flow_rule *r,
	  unsigned *i)
{
	unsigned k, found = XNV_MAX_FLOWS;

	for (k = 0; k < XNV_MAX_FLOWS; k++) {
		if (!f->slot[k].used) {
			if (found == XNV_MAX_FLOWS)
				found = k;
		} else if (memcmp(&f->slot[k].r, r, sizeof(*r)) == 0) {
			*i = k;
			return -EEXIST;
		}
	}
	*i = found;
	return found == XNV_MAX_FLOWS ? -ENOSPC : 0;
}

static int
add(struct xnv_core *c, const char *p, unsigned *slot, char *err,
    size_t errlen)
{
	struct xnv_flows *f = c->flows;
	struct xnv_flow_rule r;
	struct xnv_chain ch;
	struct flow_slot *s;
	uint16_t chain;
	int rc;

	if ((rc = parse_add(c, p, &r, &ch, err, errlen)) < 0)
		return rc;
	rc = free_slot(f, &r, slot);
	if (rc == -EEXIST)
		snprintf(err, errlen, "rule %u matches the same at the same "
			 "priority", *slot + 1);
	else if (rc == -ENOSPC)
		snprintf(err, errlen, "flow table full (%d rules)",
			 XNV_MAX_FLOWS);
	if (rc < 0)
		return rc;
	if ((rc = xnv_flows_take_chains(&ch, 0, &chain, 1)) < 0) {
		snprintf(err, errlen, "chain table full (%d versions in use)",
			 XNV_MAX_CHAINS);
		return rc;	/* -ETIMEDOUT: busy, nothing changed */
	}
	s = &f->slot[*slot];
	*s = (struct flow_slot){ .used = 1, .chain = chain, .seq = ++f->seq,
				 .r = r };
	if ((rc = xnv_flows_put(f, *slot, err, errlen)) < 0)
		xnv_flows_drop_chains(&chain, 1);
	return rc;
}

void
xnv_cmd_flow_add(struct xnv_core *c, const char *p, struct rte_tel_data *d)
{
	struct xnv_flows *f = c->flows;
	char err[RTE_TEL_MAX_STRING_LEN], text[XNV_FLOW_TEXT_LEN];
	struct xnv_flow_ports ports;
	unsigned i;
	int rc;

	pthread_mutex_lock(&f->mu);
	err[0] = '\0';
	rc = add(c, p, &i, err, sizeof(err));
	if (rc == -ETIMEDOUT) {
		xnv_ctl_busy(d);
	} else if (rc < 0) {
		xnv_ctl_error(d, "%s", err);
	} else {
		xnv_config_flow_ports(&c->cfg, &ports);
		XLOG(INFO, "flow rule %u added: %s (%u rules%s)\n", i + 1,
		     xnv_flow_rule_format(&f->slot[i].r, &ports, text,
					  sizeof(text)), xnv_flows_count(c),
		     f->slot[i].exact ? ", exact" : "");
		describe(c, (long)i + 1, &f->slot[i], d);
	}
	pthread_mutex_unlock(&f->mu);
}

void
xnv_cmd_flow_del(struct xnv_core *c, const char *p, struct rte_tel_data *d)
{
	struct xnv_flows *f = c->flows;
	char err[RTE_TEL_MAX_STRING_LEN];
	long id = xnv_ctl_id(p);
	struct flow_slot *s;

	pthread_mutex_lock(&f->mu);
	s = (struct flow_slot *)(uintptr_t)slot_of(f, id);
	if (s == NULL) {
		xnv_ctl_error(d, "no flow rule %.20s", p);
		goto out;
	}
	err[0] = '\0';
	if (xnv_flows_take_out(f, (unsigned)id - 1, err, sizeof(err)) < 0) {
		xnv_ctl_error(d, "%s", err);
		goto out;
	}
	xnv_flows_drop_chains(&s->chain, 1);
	XLOG(INFO, "flow rule %ld removed\n", id);
	rte_tel_data_start_dict(d);
	U64(d, "id", (uint64_t)id);
out:
	pthread_mutex_unlock(&f->mu);
}

/* Let go of the chains of every used slot of @p v (n slots). */
static void
drop_all(const struct flow_slot *v, unsigned n)
{
	uint16_t *ids = malloc(sizeof(*ids) * XNV_MAX_FLOWS);
	unsigned i, k = 0;

	if (ids == NULL)
		return;
	for (i = 0; i < n; i++)
		if (v[i].used)
			ids[k++] = v[i].chain;
	xnv_flows_drop_chains(ids, k);
	free(ids);
}

void
xnv_cmd_flow_clear(struct xnv_core *c, const char *p, struct rte_tel_data *d)
{
	struct xnv_flows *f = c->flows;
	struct flow_slot *old = malloc(sizeof(f->slot));
	char err[RTE_TEL_MAX_STRING_LEN];
	unsigned n, i;

	(void)p;
	if (old == NULL) {
		xnv_ctl_error(d, "out of memory");
		return;
	}
	pthread_mutex_lock(&f->mu);
	n = xnv_flows_count(c);
	memcpy(old, f->slot, sizeof(f->slot));
	for (i = 0; i < XNV_MAX_FLOWS; i++)
		f->slot[i].used = 0;
	err[0] = '\0';
	if (xnv_flows_replace(f, err, sizeof(err)) < 0)
		memcpy(f->slot, old, sizeof(f->slot));
	else
		drop_all(old, XNV_MAX_FLOWS);
	pthread_mutex_unlock(&f->mu);
	free(old);
	if (err[0] != '\0') {
		xnv_ctl_error(d, "flow clear: %s", err);
		return;
	}
	XLOG(INFO, "flow rules cleared (%u removed)\n", n);
	rte_tel_data_start_dict(d);
	U64(d, "removed", n);
}

/* The file's rules into the slots (ids 1..n in file order), their chains
 * taken; the old slots in @p old. */
static int
reload(struct xnv_core *c, struct flow_slot *old, unsigned *n, char *err,
       size_t errlen)
{
	struct xnv_flows *f = c->flows;
	struct xnv_cfg_flow *v;
	uint16_t *ids = malloc(sizeof(*ids) * XNV_MAX_FLOWS);
	size_t plen = strlen(c->cfg.path);
	char why[512];
	unsigned i;
	int rc;

	if (ids == NULL)
		return -ENOMEM;
	rc = xnv_config_reload_flows(&c->cfg, c->cfg.path, &v, n, why,
				     sizeof(why));
	/* "PATH:LINE: what" -> "line LINE: what": the reply holds 127
	 * characters, and the file is the core's config */
	if (rc < 0) {
		const char *w = why;

		if (strncmp(why, c->cfg.path, plen) == 0 && why[plen] == ':')
			w = why + plen + 1;
		if (snprintf(err, errlen, "%s%s", w == why ? "" : "line ",
			     w) >= (int)errlen)
			err[errlen - 1] = '\0';	/* cut: xnv_ctl_error says so */
	}
	if (rc == 0 && *n > 0 &&
	    (rc = xnv_flows_take_chains(&v->chain, sizeof(*v), ids, *n)) < 0)
		snprintf(err, errlen, "cannot take %u chain versions: %s", *n,
			 strerror(-rc));
	if (rc == 0) {
		memcpy(old, f->slot, sizeof(f->slot));
		memset(f->slot, 0, sizeof(f->slot));
		for (i = 0; i < *n; i++) {
			f->slot[i] = (struct flow_slot){ .used = 1,
				.chain = ids[i], .seq = ++f->seq,
				.r = v[i].rule };
			snprintf(f->slot[i].name, sizeof(f->slot[i].name),
				 "%s", v[i].name);
		}
		if ((rc = xnv_flows_replace(f, err, errlen)) < 0) {
			memcpy(f->slot, old, sizeof(f->slot));
			xnv_flows_drop_chains(ids, *n);
		}
	}
	free(v);
	free(ids);
	return rc;
}

int
xnv_flows_reload(struct xnv_core *c, unsigned *n, unsigned *was, char *err,
		 size_t errlen)
{
	struct xnv_flows *f = c->flows;
	struct flow_slot *old = malloc(sizeof(f->slot));
	int rc;

	if (old == NULL) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	pthread_mutex_lock(&f->mu);
	*was = xnv_flows_count(c);
	err[0] = '\0';
	rc = reload(c, old, n, err, errlen);
	if (rc == 0)
		drop_all(old, XNV_MAX_FLOWS);
	pthread_mutex_unlock(&f->mu);
	free(old);
	return rc;
}

void
xnv_cmd_flow_reload(struct xnv_core *c, const char *p, struct rte_tel_data *d)
{
	struct xnv_flows *f = c->flows;
	char err[RTE_TEL_MAX_STRING_LEN];
	unsigned n = 0, was = 0;
	int rc;

	(void)p;
	rc = xnv_flows_reload(c, &n, &was, err, sizeof(err));
	if (rc == -ETIMEDOUT) {
		xnv_ctl_busy(d);
		return;
	}
	if (rc < 0) {
		xnv_ctl_error(d, "flow reload: %s", err);
		return;
	}
	XLOG(INFO, "flow rules reloaded from %s: %u rules in force (%u "
	     "before), built in %.1f ms\n", c->cfg.path, n, was,
	     f->build_us / 1000.0);
	rte_tel_data_start_dict(d);
	U64(d, "rules", n);
	U64(d, "removed", was);
	U64(d, "build_us", f->build_us);
}

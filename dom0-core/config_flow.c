/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * [flow NAME] sections: a flow rule (flow_rule.h) and the chain its
 * packets take.  Read at start with the rest of the file (pass 1: ports
 * and services are known), and again alone by `flow reload`.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cfgfile.h>

#include "config.h"
#include "config_file.h"
#include "sizes.h"

static int
port_index(void *arg, const char *name)
{
	return xnv_config_port(arg, name);
}

static const char *
port_name(void *arg, unsigned idx)
{
	const struct xnv_config *c = arg;

	return idx < c->n_ports ? c->ports[idx].name : NULL;
}

void
xnv_config_flow_ports(const struct xnv_config *c, struct xnv_flow_ports *p)
{
	*p = (struct xnv_flow_ports){ .index = port_index, .name = port_name,
				      .arg = (void *)(uintptr_t)c };
}

/* Section @p sec into @p out: its keys but chain joined as a rule spec. */
static int
parse_section(struct rte_cfgfile *f, const char *sec, const char *name,
	      const struct xnv_config *c, struct xnv_cfg_flow *out,
	      char *err, size_t errlen)
{
	struct rte_cfgfile_entry e[16];
	struct xnv_flow_ports ports;
	char spec[512], why[256];
	const char *chain = NULL;
	size_t o = 0;
	int n = rte_cfgfile_section_num_entries(f, sec), i;

	if (n > 16) {
		snprintf(err, errlen, "[%s]: %d keys, more than a rule has", sec,
			 n);
		return -EINVAL;
	}
	n = rte_cfgfile_section_entries(f, sec, e, 16);
	spec[0] = '\0';
	for (i = 0; i < n; i++) {
		if (strcmp(e[i].name, "chain") == 0) {
			chain = e[i].value;
			continue;
		}
		if (strchr(e[i].value, ' ') != NULL) {
			snprintf(err, errlen, "[%s]: %s '%s' has a space", sec,
				 e[i].name, e[i].value);
			return -EINVAL;
		}
		o += (size_t)snprintf(spec + o, sizeof(spec) - o, "%s%s=%s",
				      o ? " " : "", e[i].name, e[i].value);
		if (o >= sizeof(spec)) {
			snprintf(err, errlen, "[%s]: too long", sec);
			return -EINVAL;
		}
	}
	xnv_config_flow_ports(c, &ports);
	if (xnv_flow_rule_parse(spec, &ports, &out->rule, why,
				sizeof(why)) < 0) {
		/* "flow rule: X" -> "[flow NAME]: X" */
		snprintf(err, errlen, "[%s]: %s", sec,
			 strncmp(why, "flow rule: ", 11) == 0 ? why + 11 : why);
		return -EINVAL;
	}
	if (chain == NULL) {
		snprintf(err, errlen, "[%s]: no chain (chain = STEPS)", sec);
		return -EINVAL;
	}
	if (xnv_config_parse_chain(c, chain, &out->chain, why,
				   sizeof(why)) < 0) {
		snprintf(err, errlen, "[%s]: chain: %s", sec, why);
		return -EINVAL;
	}
	if (out->chain.n == 0) {
		snprintf(err, errlen, "[%s]: chain: no steps", sec);
		return -EINVAL;
	}
	snprintf(out->name, sizeof(out->name), "%s", name);
	return 0;
}

/* Append one section to *@p v (n entries). */
static int
append(struct rte_cfgfile *f, const char *sec, const char *name,
       const struct xnv_config *c, struct xnv_cfg_flow **v, unsigned *n,
       char *err, size_t errlen)
{
	struct xnv_cfg_flow *nv;
	unsigned i;

	for (i = 0; i < *n; i++)
		if (strcmp((*v)[i].name, name) == 0) {
			snprintf(err, errlen, "[%s]: declared twice", sec);
			return -EINVAL;
		}
	if (*n == XNV_MAX_FLOWS) {
		snprintf(err, errlen, "[%s]: more than %d flow rules", sec,
			 XNV_MAX_FLOWS);
		return -ENOSPC;
	}
	nv = realloc(*v, (*n + 1) * sizeof(**v));
	if (nv == NULL)
		return -ENOMEM;
	*v = nv;
	if (parse_section(f, sec, name, c, &nv[*n], err, errlen) < 0)
		return -EINVAL;
	/* as flow add: one rule per match and priority */
	for (i = 0; i < *n; i++)
		if (memcmp(&nv[i].rule, &nv[*n].rule, sizeof(nv[i].rule)) == 0) {
			snprintf(err, errlen, "[%s]: matches the same as [flow "
				 "%s] at the same priority", sec, nv[i].name);
			return -EEXIST;
		}
	(*n)++;
	return 0;
}

void
xnv_config_free(struct xnv_config *c)
{
	free(c->flows);
	c->flows = NULL;
	c->n_flows = 0;
}

int
xnv_config_load_flow(struct rte_cfgfile *f, const char *sec,
		     const char *name, struct xnv_config *c, char *err,
		     size_t errlen)
{
	return append(f, sec, name, c, &c->flows, &c->n_flows, err, errlen);
}

int
xnv_config_reload_flows(const struct xnv_config *c, const char *path,
			struct xnv_cfg_flow **out, unsigned *n, char *err,
			size_t errlen)
{
	struct xnv_ini ini;
	unsigned i;
	int rc;

	*out = NULL;
	*n = 0;
	if ((rc = xnv_ini_read(path, &ini, err, errlen)) < 0)
		return rc;
	for (i = 0; i < ini.n && rc == 0; i++) {
		const char *sec = ini.at[i].sec;

		if (ini.at[i].key[0] == '\0' && strncmp(sec, "flow ", 5) == 0)
			rc = append(ini.cf, sec, sec + 5, c, out, n, err,
				    errlen);
	}
	if (rc < 0) {
		xnv_ini_locate(&ini, err, errlen);
		free(*out);
		*out = NULL;
		*n = 0;
	}
	xnv_ini_close(&ini);
	return rc;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* xnv-core configuration; see config.h for the format. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_cfgfile.h>

#include <gntshare/ring.h>

#include "config.h"
#include "config_file.h"

int
xnv_config_u32(const char *sec, const char *key, const char *v, uint32_t min,
	       uint32_t max, uint32_t *out, char *err, size_t errlen)
{
	char *end;
	unsigned long long x;

	errno = 0;
	x = strtoull(v, &end, 10);
	if (errno != 0 || end == v || *end != '\0' || !isdigit((unsigned
	    char)v[0]) || x < min || x > max)
		return xnv_cfg_fail(err, errlen, "[%s] %s = %s: expected a number "
			    "from %u to %u", sec, key, v, min, max);
	/* 010 is not 8 here, nor 10: say it rather than guess */
	if (v[0] == '0' && v[1] != '\0')
		return xnv_cfg_fail(err, errlen, "[%s] %s = %s: expected a number "
			    "from %u to %u, without leading zeros", sec, key,
			    v, min, max);
	*out = (uint32_t)x;
	return 0;
}

static int
lookup(const char (*names)[XNV_NAME_LEN], size_t stride, int n,
       const char *name)
{
	int i;

	for (i = 0; i < n; i++) {
		const char *nm = (const char *)names + (size_t)i * stride;

		if (strcmp(nm, name) == 0)
			return i;
	}
	return -1;
}

int
xnv_config_group(const struct xnv_config *c, const char *name)
{
	return lookup(&c->groups[0].name, sizeof(c->groups[0]), c->n_groups,
		      name);
}

int
xnv_config_port(const struct xnv_config *c, const char *name)
{
	return lookup(&c->ports[0].name, sizeof(c->ports[0]), c->n_ports,
		      name);
}

int
xnv_config_service(const struct xnv_config *c, const char *name)
{
	return lookup(&c->services[0].name, sizeof(c->services[0]),
		      c->n_services, name);
}

int
xnv_config_parse_chain(const struct xnv_config *c, const char *text,
		       struct xnv_chain *ch, char *err, size_t errlen)
{
	char buf[CFG_VALUE_LEN];
	char *p, *step;
	int i;

	snprintf(buf, sizeof(buf), "%s", text);
	ch->n = 0;
	for (p = buf; p != NULL;) {
		char *arrow = strstr(p, "->");

		if (arrow != NULL)
			*arrow = '\0';
		step = xnv_cfg_trim(p);
		p = arrow != NULL ? arrow + 2 : NULL;
		if (*step == '\0')
			return xnv_cfg_fail(err, errlen, "chain has an empty step");
		if (ch->n == XNV_MAX_CHAIN)
			return xnv_cfg_fail(err, errlen, "chain has more than %d steps",
				    XNV_MAX_CHAIN);
		if ((i = xnv_config_fabric_step(c, step, &ch->s[ch->n], err,
						errlen)) != 0) {
			if (i < 0)
				return -EINVAL;
			ch->n++;
		} else if (strcmp(step, "drop") == 0) {
			ch->s[ch->n++] = (struct xnv_step){ XNV_STEP_DROP, 0, 0 };
		} else if ((i = xnv_config_service(c, step)) >= 0) {
			ch->s[ch->n++] = (struct xnv_step){ XNV_STEP_SERVICE,
							    (uint16_t)i, 0 };
		} else if ((i = xnv_config_port(c, step)) >= 0) {
			if (c->ports[i].fabric != XNV_FABRIC_NONE)
				return xnv_cfg_fail(err, errlen, "chain step "
					"'%s': a fabric port is a step only "
					"with a hop, as %s:HOP", step, step);
			ch->s[ch->n++] = (struct xnv_step){ XNV_STEP_PORT,
							    (uint16_t)i, 0 };
		} else {
			return xnv_cfg_fail(err, errlen, "chain step '%.31s' is not a "
				    "declared service, a port, or 'drop'", step);
		}
	}
	return 0;
}

/* Every key of the section whose header is ini->at[@p hdr] is one a
 * section of @p kind may have (its keys follow its header). */
static int
check_keys(const struct xnv_ini *ini, unsigned hdr, const char *kind,
	   char *err, size_t errlen)
{
	const char *sec = ini->at[hdr].sec;
	unsigned i;

	for (i = hdr + 1; i < ini->n && ini->at[i].key[0] != '\0'; i++) {
		const struct xnv_ini_at *a = &ini->at[i];
		char tmp[512];

		if (xnv_config_key_check(sec, kind, a->key, err, errlen) == 0)
			continue;
		snprintf(tmp, sizeof(tmp), "%s:%u: %s", ini->path, a->line,
			 err);
		snprintf(err, errlen, "%s", tmp);
		return -EINVAL;
	}
	return 0;
}

#define GET(f, sec, key) rte_cfgfile_get_entry((f), (sec), (key))

/* allow_uids / allow_gids of [@p sec] into @p a (over its defaults). */
static int
load_access(struct rte_cfgfile *f, const char *sec, struct xnv_access *a,
	    char *err, size_t errlen)
{
	const char *u = GET(f, sec, "allow_uids");
	const char *g = GET(f, sec, "allow_gids");
	int rc = 0;

	if (u != NULL)
		rc = xnv_config_ids(sec, "allow_uids", u, 1, &a->uids, err,
				    errlen);
	if (rc == 0 && g != NULL)
		rc = xnv_config_ids(sec, "allow_gids", g, 0, &a->gids, err,
				    errlen);
	a->set = u != NULL || g != NULL;
	return rc;
}

static int
load_core(struct rte_cfgfile *f, struct xnv_config *c, char *err,
	  size_t errlen)
{
	const char *v;
	int rc;

	if (!rte_cfgfile_has_section(f, "core"))
		return 0;
	if ((v = GET(f, "core", "socket")) != NULL) {
		if (strlen(v) >= sizeof(c->socket) || v[0] != '/')
			return xnv_cfg_fail(err, errlen, "[core] socket = %s: expected "
				    "an absolute path shorter than %zu", v,
				    sizeof(c->socket));
		strcpy(c->socket, v);
	}
	if ((v = GET(f, "core", "ring_size")) != NULL) {
		if ((rc = xnv_config_u32("core", "ring_size", v, 1, 1u << 16,
				    &c->ring_size, err, errlen)) < 0)
			return rc;
		if (!gnts_ring_size_ok(c->ring_size))
			return xnv_cfg_fail(err, errlen, "[core] ring_size = %s: must "
				    "be a power of two from 16 to 65536", v);
	}
	if ((v = GET(f, "core", "burst")) != NULL &&
	    (rc = xnv_config_u32("core", "burst", v, 1, GNTS_BURST_MAX, &c->burst,
			    err, errlen)) < 0)
		return rc;
	if ((v = GET(f, "core", "spill_threshold")) != NULL &&
	    (rc = xnv_config_u32("core", "spill_threshold", v, 1, 100,
			    &c->spill_pct, err, errlen)) < 0)
		return rc;
	if ((v = GET(f, "core", "stall_timeout_ms")) != NULL &&
	    (rc = xnv_config_u32("core", "stall_timeout_ms", v, 1, 600000,
			    &c->stall_timeout_ms, err, errlen)) < 0)
		return rc;
	if ((v = GET(f, "core", "error_budget")) != NULL &&
	    (rc = xnv_config_u32("core", "error_budget", v, 0, 100000000,
			    &c->error_budget, err, errlen)) < 0)
		return rc;
	if ((v = GET(f, "core", "heartbeat_timeout_ms")) != NULL &&
	    (rc = xnv_config_u32("core", "heartbeat_timeout_ms", v, 0, 600000,
			    &c->heartbeat_timeout_ms, err, errlen)) < 0)
		return rc;
	if ((v = GET(f, "core", "log_buffer_kib")) != NULL &&
	    (rc = xnv_config_u32("core", "log_buffer_kib", v, 8, 65536,
			    &c->log_buffer_kib, err, errlen)) < 0)
		return rc;
	if ((v = GET(f, "core", "workers")) != NULL &&
	    (rc = xnv_config_u32("core", "workers", v, 1, XNV_MAX_WORKERS,
			    &c->workers, err, errlen)) < 0)
		return rc;
	if ((v = GET(f, "core", "latency")) != NULL) {
		if (strcmp(v, "on") != 0 && strcmp(v, "off") != 0)
			return xnv_cfg_fail(err, errlen, "[core] latency = %s: expected "
				    "'on' or 'off'", v);
		c->latency = strcmp(v, "on") == 0;
	}
	if ((v = GET(f, "core", "nf_pools")) != NULL) {
		if (strcmp(v, "own") == 0)
			c->own_pools = 1;
		else if (strcmp(v, "group") != 0)
			return xnv_cfg_fail(err, errlen, "[core] nf_pools = %s: "
				    "expected 'group' or 'own'", v);
	}
	if ((rc = xnv_config_load_limits(f, c, err, errlen)) < 0)
		return rc;
	return xnv_config_socket_perm(c, GET(f, "core", "socket_mode"),
				      GET(f, "core", "socket_group"), err,
				      errlen);
}

/*
 * A group as it is without keys: 8192 buffers of 2 KiB; root may join,
 * and the core's own user when that is not root (a process of that user
 * can reach all of the core's memory anyway: ptrace, /proc/PID/mem).
 */
static void
group_defaults(struct xnv_group_cfg *g, const char *name)
{
	struct xnv_ids *u = &g->access.uids;

	memset(g, 0, sizeof(*g));
	snprintf(g->name, sizeof(g->name), "%s", name);
	g->pool_bufs = 8192;
	g->buf_size = 2048 + XNV_HEADROOM;
	u->id[u->n++] = 0;
	if (geteuid() != 0)
		u->id[u->n++] = (uint32_t)geteuid();
}

static int
load_group(struct rte_cfgfile *f, const char *sec, const char *name,
	   struct xnv_config *c, char *err, size_t errlen)
{
	struct xnv_group_cfg *g = &c->groups[c->n_groups];
	const char *v;
	int rc;

	group_defaults(g, name);
	if ((rc = load_access(f, sec, &g->access, err, errlen)) < 0)
		return rc;
	if ((v = GET(f, sec, "pool_bufs")) != NULL &&
	    (rc = xnv_config_u32(sec, "pool_bufs", v, 64, 1u << 22, &g->pool_bufs,
			    err, errlen)) < 0)
		return rc;
	if ((v = GET(f, sec, "buf_size")) != NULL) {
		if ((rc = xnv_config_u32(sec, "buf_size", v, 256 + XNV_HEADROOM,
				    XNV_BUF_SIZE_MAX, &g->buf_size, err, errlen)) < 0)
			return rc;
		if (g->buf_size % 64 != 0)
			return xnv_cfg_fail(err, errlen, "[%s] buf_size = %s: must be "
				    "a multiple of 64", sec, v);
	}
	c->n_groups++;
	return 0;
}

static int
load_port(const struct xnv_ini *ini, const char *sec, const char *name,
	  struct xnv_config *c, char *err, size_t errlen)
{
	struct xnv_port_cfg *p = &c->ports[c->n_ports];
	struct rte_cfgfile *f = ini->cf;
	uint32_t x;
	const char *v;
	int rc;

	snprintf(p->name, sizeof(p->name), "%s", name);
	if ((v = GET(f, sec, "dev")) == NULL || *v == '\0')
		return xnv_cfg_fail(err, errlen, "[%s]: missing 'dev' (a vdev such as "
			    "net_null0 or a PCI address)", sec);
	if ((rc = xnv_config_port_dev(c, c->n_ports, v, xnv_ini_line(ini, sec,
				      "dev"), err, errlen)) < 0)
		return rc;
	p->rx_desc = p->tx_desc = 1024;
	if ((v = GET(f, sec, "rx_desc")) != NULL) {
		if ((rc = xnv_config_u32(sec, "rx_desc", v, 32, 16384, &x, err,
				    errlen)) < 0)
			return rc;
		p->rx_desc = (uint16_t)x;
	}
	if ((v = GET(f, sec, "tx_desc")) != NULL) {
		if ((rc = xnv_config_u32(sec, "tx_desc", v, 32, 16384, &x, err,
				    errlen)) < 0)
			return rc;
		p->tx_desc = (uint16_t)x;
	}
	p->rx_when_ready = 1;
	if ((v = GET(f, sec, "rx_start")) != NULL) {
		if (strcmp(v, "immediately") == 0)
			p->rx_when_ready = 0;
		else if (strcmp(v, "chain-ready") != 0)
			return xnv_cfg_fail(err, errlen, "[%s] rx_start = %s: expected "
				    "'chain-ready' or 'immediately'", sec, v);
	}
	p->rx_intr = 1;
	if ((v = GET(f, sec, "rx_interrupt")) != NULL) {
		if (strcmp(v, "on") != 0 && strcmp(v, "off") != 0)
			return xnv_cfg_fail(err, errlen, "[%s] rx_interrupt = %s: "
				    "expected 'on' or 'off'", sec, v);
		p->rx_intr = strcmp(v, "on") == 0;
	}
	if ((v = GET(f, sec, "rx_rate")) != NULL &&
	    (rc = xnv_config_u32(sec, "rx_rate", v, 0, 1000000000, &p->rx_rate,
			    err, errlen)) < 0)
		return rc;
	if ((rc = xnv_config_port_fabric(f, sec, c->n_ports, c, 0, err,
					 errlen)) < 0)
		return rc;
	c->n_ports++;
	return 0;
}

/* Second pass, once every name is known: groups and chains of ports. */
static int
link_port(struct rte_cfgfile *f, const char *sec, struct xnv_port_cfg *p,
	  struct xnv_config *c, char *err, size_t errlen)
{
	const char *v = GET(f, sec, "group");
	char cerr[200];
	/* Without a group key a port belongs to the first group. */
	int g = v != NULL ? xnv_config_group(c, v) : 0;

	if (g < 0)
		return xnv_cfg_fail(err, errlen, "[%s] group = %s: no such [group]",
			    sec, v);
	p->group = (uint16_t)g;
	if ((v = GET(f, sec, "chain")) != NULL &&
	    xnv_config_parse_chain(c, v, &p->chain, cerr, sizeof(cerr)) < 0)
		return xnv_cfg_fail(err, errlen, "[%s] %s", sec, cerr);
	return xnv_config_port_fabric(f, sec, (uint16_t)(p - c->ports), c, 1,
				      err, errlen);
}

static int
load_service(struct rte_cfgfile *f, const char *sec, const char *name,
	     struct xnv_config *c, char *err, size_t errlen)
{
	struct xnv_service_cfg *s = &c->services[c->n_services];
	const char *v;
	uint32_t id = c->n_services + 1u, worker = 0;
	int rc;

	if ((rc = load_access(f, sec, &s->access, err, errlen)) < 0)
		return rc;
	if ((v = GET(f, sec, "id")) != NULL &&
	    (rc = xnv_config_u32(sec, "id", v, 1, XNV_MAX_SERVICE_ID, &id, err,
			    errlen)) < 0)
		return rc;
	if (c->service_by_id[id] >= 0)
		return xnv_cfg_fail(err, errlen, "[%s] id = %u: already used by "
			    "service %s", sec, id,
			    c->services[c->service_by_id[id]].name);
	if ((v = GET(f, sec, "worker")) != NULL &&
	    (rc = xnv_config_u32(sec, "worker", v, 0, XNV_MAX_WORKERS - 1,
				 &worker, err, errlen)) < 0)
		return rc;
	snprintf(s->name, sizeof(s->name), "%s", name);
	s->id = (uint16_t)id;
	s->worker = (uint16_t)worker;
	c->service_by_id[id] = (int16_t)c->n_services;
	c->n_services++;
	return 0;
}

static int
valid_name(const char *n)
{
	if (*n == '\0' || strlen(n) >= XNV_NAME_LEN ||
	    strcmp(n, "drop") == 0)
		return 0;
	for (; *n; n++)
		if (!isalnum((unsigned char)*n) && *n != '-' && *n != '_' &&
		    *n != '.')
			return 0;
	return 1;
}

/* A service's worker is one of [core] workers (known once every section
 * is read). */
static int
check_service_worker(const struct xnv_config *c, const char *sec,
		     const char *name, char *err, size_t errlen)
{
	const struct xnv_service_cfg *s = &c->services[xnv_config_service(c,
							name)];

	if (s->worker < c->workers)
		return 0;
	return xnv_cfg_fail(err, errlen, "[%s] worker = %u: there are only "
			    "workers 0..%u ([core] workers = %u)", sec,
			    s->worker, c->workers - 1, c->workers);
}

/* Dispatch one section by its kind ("group NAME", "port NAME", ...). */
static int
load_section(const struct xnv_ini *ini, unsigned hdr, int pass,
	     struct xnv_config *c, char *err, size_t errlen)
{
	const char *sec = ini->at[hdr].sec;
	char kind[CFG_NAME_LEN], name[CFG_NAME_LEN];
	struct rte_cfgfile *f = ini->cf;
	int i;

	if (strcmp(sec, "core") == 0) {
		if (pass == 1)
			return 0;
		if (check_keys(ini, hdr, "core", err, errlen) < 0)
			return -EINVAL;
		return load_core(f, c, err, errlen);
	}
	if (sscanf(sec, "%63s %63s", kind, name) != 2 ||
	    strlen(sec) != strlen(kind) + 1 + strlen(name))
		return xnv_cfg_fail(err, errlen, "[%s]: unknown section (expected "
			    "[core], [group|port|service|flow NAME])", sec);
	if (!valid_name(name))
		return xnv_cfg_fail(err, errlen, "[%s]: '%s' is not a valid name "
			    "(letters, digits, - _ ., under %d characters, "
			    "not 'drop')", sec, name, XNV_NAME_LEN);
	if (xnv_config_keys(kind) == NULL)
		return xnv_cfg_fail(err, errlen, "[%s]: unknown section kind '%s' "
			    "(expected core, group, port, service or flow)",
			    sec, kind);
	/* [flow]: the rule parser names an unknown field itself */
	if (pass == 0 && strcmp(kind, "flow") != 0 &&
	    check_keys(ini, hdr, kind, err, errlen) < 0)
		return -EINVAL;
	if (strcmp(kind, "flow") == 0)
		return pass == 1 ? xnv_config_load_flow(f, sec, name, c, err,
							errlen) : 0;
	if (strcmp(kind, "port") == 0) {
		if (pass == 1)
			return link_port(f, sec, &c->ports[
					 xnv_config_port(c, name)], c, err,
					 errlen);
		if (xnv_config_port(c, name) >= 0 ||
		    xnv_config_service(c, name) >= 0)
			return xnv_cfg_fail(err, errlen, "[%s]: name already used", sec);
		if (c->n_ports == XNV_MAX_PORTS)
			return xnv_cfg_fail(err, errlen, "[%s]: more than %d ports", sec,
				    XNV_MAX_PORTS);
		return load_port(ini, sec, name, c, err, errlen);
	}
	if (pass == 1) {
		const char *v = GET(f, sec, "may_send_to");

		if (strcmp(kind, "service") == 0)
			return check_service_worker(c, sec, name, err, errlen);
		if (strcmp(kind, "group") != 0 || v == NULL)
			return 0;
		return xnv_config_send_to(c, (uint16_t)xnv_config_group(c,
					  name), sec, v, err, errlen);
	}
	if (strcmp(kind, "group") == 0) {
		if (xnv_config_group(c, name) >= 0)
			return xnv_cfg_fail(err, errlen, "[%s]: declared twice", sec);
		if (c->n_groups == XNV_MAX_GROUPS)
			return xnv_cfg_fail(err, errlen, "[%s]: more than %d groups",
				    sec, XNV_MAX_GROUPS);
		return load_group(f, sec, name, c, err, errlen);
	}
	if (strcmp(kind, "service") == 0) {
		i = xnv_config_service(c, name);
		if (i >= 0 || xnv_config_port(c, name) >= 0)
			return xnv_cfg_fail(err, errlen, "[%s]: name already used", sec);
		if (c->n_services == XNV_MAX_SERVICES)
			return xnv_cfg_fail(err, errlen, "[%s]: more than %d services",
				    sec, XNV_MAX_SERVICES);
		return load_service(f, sec, name, c, err, errlen);
	}
	return xnv_cfg_fail(err, errlen, "[%s]: [core] takes no name", sec);
}

/* What a config is without keys. */
static void
defaults(struct xnv_config *c, const char *path)
{
	memset(c, 0, sizeof(*c));
	snprintf(c->path, sizeof(c->path), "%s", path);
	snprintf(c->socket, sizeof(c->socket), "/run/xnv/xnv.sock");
	c->socket_mode = XNV_SOCKET_MODE_DEFAULT;
	c->ring_size = 1024;
	c->burst = 64;
	c->stall_timeout_ms = 500;
	c->spill_pct = 75;
	c->error_budget = XNV_ERROR_BUDGET_DEFAULT;
	c->heartbeat_timeout_ms = XNV_HEARTBEAT_TIMEOUT_DEFAULT;
	c->log_buffer_kib = XNV_LOG_BUFFER_KIB_DEFAULT;
	c->workers = 1;
	c->hoard_timeout_ms = XNV_HOARD_TIMEOUT_DEFAULT;
	c->max_nfs_per_domain = XNV_MAX_NFS_PER_DOMAIN_DEFAULT;
	c->on_hostile = XNV_HOSTILE_REFUSE;
	memset(c->service_by_id, 0xff, sizeof(c->service_by_id));
}

int
xnv_config_load(const char *path, struct xnv_config *c, char *err,
		size_t errlen)
{
	struct xnv_ini ini;
	unsigned i;
	int pass, rc;

	defaults(c, path);
	if ((rc = xnv_ini_read(path, &ini, err, errlen)) < 0)
		return rc;
	/* Pass 0 declares every name; pass 1 resolves references. */
	for (pass = 0; pass < 2 && rc == 0; pass++) {
		for (i = 0; i < ini.n && rc == 0; i++)
			if (ini.at[i].key[0] == '\0')
				rc = load_section(&ini, i, pass, c,
						  err, errlen);
		if (pass == 0 && rc == 0 && c->n_groups == 0) {
			group_defaults(&c->groups[0], "0");
			c->n_groups = 1;
		}
	}
	if (rc == 0 && c->n_ports == 0)
		rc = xnv_cfg_fail(err, errlen, "%s: no [port NAME] section", path);
	if (rc == 0) {
		/* for what only the backend can tell (domain.c) */
		c->on_hostile_line = xnv_ini_line(&ini, "core", "on_hostile");
		xnv_config_warn(c, &ini);
	}
	if (rc < 0) {
		xnv_config_free(c);
		xnv_ini_locate(&ini, err, errlen);
	}
	xnv_ini_close(&ini);
	return rc;
}

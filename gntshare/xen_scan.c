/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * xen backend, the core's side: which NF devices there are.  Every
 * (domid, devid) under our backend tree (/local/domain/<self>/backend/xnv,
 * self: Dom0 or a driver domain) is a device; a scan adds the new ones,
 * forgets those whose nodes went (xnv-xl destroy) or whose domain died,
 * and steps the rest (xen_server.c).  Directory names there are numbers
 * xnv-xl wrote, still parsed strictly.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xenstore.h>

#include "backends.h"
#include "gntshare/xen.h"
#include "xen_server_pvt.h"

/* A directory entry that is a number up to @p max, else -1. */
static long
dir_num(const char *v, uint32_t max)
{
	uint32_t x;

	return gnts_xs_uint(v, strlen(v), max, &x) < 0 ? -1 : (long)x;
}

struct xdev *
gnts_xen_find_dev(struct gnts_xen_server *s, unsigned domid, unsigned devid)
{
	unsigned i;

	for (i = 0; i < MAX_DEVS; i++)
		if (s->devs[i].used && s->devs[i].domid == domid &&
		    s->devs[i].devid == devid)
			return &s->devs[i];
	return NULL;
}

static void
add_dev(struct gnts_xen_server *s, unsigned domid, unsigned devid)
{
	struct xdev *d = NULL;
	char path[128];
	unsigned i;

	for (i = 0; i < MAX_DEVS && d == NULL; i++)
		if (!s->devs[i].used)
			d = &s->devs[i];
	if (d == NULL) {
		gnts_log(GNTS_LOG_ERR, "domain %u device %u ignored: more than "
			 "%u NF devices", domid, devid, MAX_DEVS);
		return;
	}
	memset(d, 0, sizeof(*d));
	d->used = d->fresh = d->seen = 1;
	d->domid = (uint16_t)domid;
	d->devid = (uint8_t)devid;
	d->dom = GNTS_XEN_PEER(domid, devid);
	snprintf(d->be, sizeof(d->be), "%s/%u/%u", s->be_root, domid, devid);
	snprintf(d->fe, sizeof(d->fe), "/local/domain/%u/%s/%u", domid,
		 GNTS_XS_FRONTEND_DIR, devid);
	snprintf(path, sizeof(path), "%s/%s", d->fe, GNTS_XS_STATE);
	if (!xs_watch(s->xs, path, "fe"))
		gnts_log(GNTS_LOG_ERR, "cannot watch %s: %s", path,
			 strerror(errno));
}

/* Forget a device whose nodes are gone; when it was the last of its
 * domain (destroyed, or unregistered by Dom0), tell the owner. */
static void
forget_gone(struct gnts_xen_server *s, struct xdev *d)
{
	unsigned domid = d->domid, i;

	gnts_xen_forget_dev(s, d);
	for (i = 0; i < MAX_DEVS; i++)
		if (s->devs[i].used && s->devs[i].domid == domid)
			return;
	gnts_xen_forget_domain(s, domid, gnts_now_ms());
	if (s->cb.domain_gone != NULL)
		s->cb.domain_gone(s->ctx, domid);
}

/* Is @p domid still there?  Dom0 asks xenstored; a driver domain may not
 * (IS_DOMAIN_INTRODUCED is for the privileged), so it reads the domain's
 * device 0 frontend state, which xnv-xl made readable to it: while the
 * domain lives that read succeeds; once its tree is gone xenstored says
 * ENOENT, or EACCES (it will not tell an unprivileged reader that a path
 * under /local/domain is missing).  A guest that removes or hides its own
 * node only loses its own devices.  Any other failure keeps the domain. */
static int
domain_alive(struct gnts_xen_server *s, unsigned domid)
{
	char path[96], *v;
	unsigned n;

	if (s->self == 0)
		return xs_is_domain_introduced(s->xs, domid);
	snprintf(path, sizeof(path), "/local/domain/%u/%s/0/%s", domid,
		 GNTS_XS_FRONTEND_DIR, GNTS_XS_STATE);
	v = xs_read(s->xs, XBT_NULL, path, &n);
	if (v != NULL) {
		free(v);
		return 1;
	}
	return errno != ENOENT && errno != EACCES;
}

void
gnts_xen_scan(struct gnts_xen_server *s)
{
	unsigned i, j, n = 0, m;
	char **doms, **devs, path[96];

	for (i = 0; i < MAX_DEVS; i++)
		s->devs[i].seen = 0;
	doms = xs_directory(s->xs, XBT_NULL, s->be_root, &n);
	for (i = 0; doms != NULL && i < n; i++) {
		long domid = dir_num(doms[i], GNTS_XEN_MAX_DOMID);

		if (domid < 1)
			continue;
		snprintf(path, sizeof(path), "%s/%ld", s->be_root, domid);
		if (!domain_alive(s, (unsigned)domid)) {
			/* destroyed: its devices are forgotten below */
			(void)xs_rm(s->xs, XBT_NULL, path);
			gnts_log(GNTS_LOG_INFO, "domain %ld is gone: its xnv "
				 "devices are released", domid);
			continue;
		}
		m = 0;
		devs = xs_directory(s->xs, XBT_NULL, path, &m);
		for (j = 0; devs != NULL && j < m; j++) {
			long devid = dir_num(devs[j], GNTS_XEN_MAX_DEVS - 1);
			struct xdev *d;

			if (devid < 0)
				continue;
			d = gnts_xen_find_dev(s, (unsigned)domid,
					      (unsigned)devid);
			if (d != NULL)
				d->seen = 1;
			else
				add_dev(s, (unsigned)domid, (unsigned)devid);
		}
		free(devs);
	}
	free(doms);
	for (i = 0; i < MAX_DEVS; i++) {
		if (!s->devs[i].used)
			continue;
		if (!s->devs[i].seen)
			forget_gone(s, &s->devs[i]);
		else
			gnts_xen_step(s, &s->devs[i]);
	}
}

/* Our domain id: the "domid" node of our own XenStore directory (a
 * relative path), which xen-init-dom0 writes for Dom0 and libxl for
 * every guest; 0 when there is none (a Dom0 started by other tools). */
unsigned
gnts_xen_own_domid(struct xs_handle *xs)
{
	unsigned n = 0;
	char *v = xs_read(xs, XBT_NULL, "domid", &n);
	uint32_t id = 0;

	if (v == NULL || gnts_xs_uint(v, n, GNTS_XEN_MAX_DOMID, &id) < 0)
		id = 0;
	free(v);
	return id;
}

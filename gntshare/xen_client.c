/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * xen backend, guest (NF) side: find this domain's xnv device in
 * XenStore, ask the core for a connection, map the granted ring and pool
 * with gntdev (libxengnttab), look at the backend state for a detach.
 * Protocol: include/gntshare/xen.h.
 */
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <xengnttab.h>
#include <xenstore.h>

#include "backends.h"
#include "gntshare/xen.h"
#include "xen_client_pvt.h"

#define VAL_MAX 4096u

/* Attach attempts of this process (part of each request id). */
static unsigned rid_seq;

/* How often the NF looks at the backend state (a XenStore read). */
#define CHECK_EVERY_NS 20000000ull

static int
xput(struct gnts_xen_client *c, const char *node, const char *val)
{
	char path[160];

	snprintf(path, sizeof(path), "%s/%s", c->fe, node);
	return xs_write(c->xs, XBT_NULL, path, val, (unsigned)strlen(val)) ?
	       0 : -errno;
}

static int
xen_cli_available(void)
{
	struct xs_handle *xs;
	unsigned n = 0;
	char **d;
	FILE *f = fopen("/sys/hypervisor/type", "r");
	char t[8] = "";

	if (f == NULL)
		return 0;
	if (fgets(t, sizeof(t), f) == NULL)
		t[0] = '\0';
	fclose(f);
	if (strncmp(t, "xen", 3) != 0)
		return 0;
	xs = xs_open(0);
	if (xs == NULL)
		return 0;
	d = xs_directory(xs, XBT_NULL, GNTS_XS_FRONTEND_DIR, &n);
	free(d);
	xs_close(xs);
	return d != NULL && n > 0;
}

/* The domain whose grants we map (backend-id; none: Dom0, as written by
 * xnv-xl before driver domains). */
static int
backend_id(struct gnts_xen_client *c, const char *dir, char *err,
	   size_t errlen)
{
	unsigned n = 0;
	char *v = gnts_xc_get(c, XBT_NULL, dir, GNTS_XS_BACKEND_ID, &n);
	int rc = 0;

	c->be_dom = 0;
	if (v != NULL &&
	    gnts_xs_uint(v, n, GNTS_XEN_MAX_DOMID, &c->be_dom) < 0) {
		snprintf(err, errlen, "%s/%s is not a domain id", dir,
			 GNTS_XS_BACKEND_ID);
		rc = -EPROTO;
	}
	free(v);
	return rc;
}

static int
pick_device(struct gnts_xen_client *c, int devid, char *err, size_t errlen)
{
	char dir[64];
	long st;
	int i;

	for (i = devid < 0 ? 0 : devid; i < (int)GNTS_XEN_MAX_DEVS; i++) {
		snprintf(dir, sizeof(dir), GNTS_XS_FRONTEND_DIR "/%d", i);
		st = gnts_xc_get_num(c, dir, GNTS_XS_STATE);
		if (st < 0) {
			if (devid >= 0)
				break;
			continue;
		}
		if (devid >= 0 || st != GNTS_XB_CONNECTED) {
			snprintf(c->fe, sizeof(c->fe), "%s", dir);
			if (gnts_xc_get_str(c, dir, GNTS_XS_BACKEND, c->be,
				     sizeof(c->be)) < 0) {
				snprintf(err, errlen, "%s/backend missing", dir);
				return -ENOENT;
			}
			return backend_id(c, dir, err, errlen);
		}
	}
	if (devid >= 0)
		snprintf(err, errlen, "no xnv device %d in this domain "
			 "(nfv_instances in its config)", devid);
	else
		snprintf(err, errlen, "every xnv device of this domain is "
			 "connected already (raise nfv_instances)");
	return -ENODEV;
}

/* The domain is being saved or migrated (xnv-xl wrote the backend's
 * suspend node): no attach until it is gone, or until this domain runs
 * again elsewhere with devices of its own (after a restore the frontend's
 * backend node names a backend directory without it).  -EHOSTDOWN (ask
 * again later), else 0.
 *
 * A XenStore read blocks while the domain is suspended and is answered
 * once it runs again, as the domain it has become: the suspend node read
 * here may be the old domain's, whose backend directory is gone by then,
 * after pick_device() read the old backend path.  So the frontend's
 * backend node is read again after it: another path means the domain was
 * restored or migrated meanwhile, and the request would go to the new
 * frontend while we waited for the answer in the old backend. */
static int
suspended(struct gnts_xen_client *c, char *err, size_t errlen)
{
	char why[16], be[sizeof(c->be)];

	if (gnts_xc_get_str(c, c->be, GNTS_XS_SUSPEND, why, sizeof(why)) == 0)
		snprintf(err, errlen, "the domain is being saved or migrated "
			 "(%s/%s is there): attaching once it runs again",
			 c->be, GNTS_XS_SUSPEND);
	else if (gnts_xc_get_str(c, c->fe, GNTS_XS_BACKEND, be,
				 sizeof(be)) < 0 || strcmp(be, c->be) != 0) {
		snprintf(err, errlen, "the domain was restored or migrated "
			 "while the NF attached (its backend was %s)", c->be);
		gnts_log(GNTS_LOG_INFO, "%s", err);	/* seldom: say it */
	} else
		return 0;
	return -EHOSTDOWN;
}

/* Our end of the doorbell the core offers (xen.h, "Doorbells"), bound
 * to its domain; the values are untrusted (gnts_xen_bell_parse).  A bad
 * one, or a bind Xen refuses, costs one line and the NF polls. */
static void
bind_bell(struct gnts_xen_client *c, struct gnts_attach_rsp *rsp)
{
	unsigned n = 0, m = 0;
	char *v = gnts_xc_get(c, XBT_NULL, c->be, GNTS_XS_EVENT_CHANNEL, &n);
	char *b = gnts_xc_get(c, XBT_NULL, c->fe, GNTS_XS_BACKEND_ID, &m);
	char esc[GNTS_ESC_LEN(16)];
	uint32_t port, dom;

	if (v == NULL)		/* none offered (older core, or none free) */
		;
	else if (gnts_xen_bell_parse(v, n, b, m, &port, &dom) < 0)
		gnts_log(GNTS_LOG_WARNING, "no doorbell, polling: %s/%s '%s' "
			 "(or our backend-id) is not an event channel port",
			 c->be, GNTS_XS_EVENT_CHANNEL,
			 gnts_esc(v, n, esc, sizeof(esc)));
	else if ((c->bell = gnts_bell_evtchn_bind(dom, port)) == NULL)
		gnts_log(GNTS_LOG_WARNING, "no doorbell, polling: cannot bind "
			 "event channel %u of domain %u: %s", port, dom,
			 strerror(errno));
	else
		rsp->flags |= GNTS_RSP_BELL;
	free(v);
	free(b);
}

static void xen_cli_close(void *impl);

/* Attach through device cfg->dev (-1: the first one not connected),
 * waiting up to cfg->timeout_ms for the core; the instance name, service
 * and group the core gave the NF come back in @p req. */
static int
xen_cli_attach(const struct gnts_cli_cfg *cfg, struct gnts_attach_req *req,
	       struct gnts_attach_rsp *rsp, void **impl, char *err,
	       size_t errlen)
{
	struct gnts_xen_client *c = calloc(1, sizeof(*c));
	char rid[24], num[16];
	int rc;

	if (c == NULL)
		return -ENOMEM;
	c->xs = xs_open(0);
	c->xgt = xengnttab_open(NULL, 0);
	if (c->xs == NULL || c->xgt == NULL) {
		rc = -errno;
		snprintf(err, errlen, "cannot open %s: %s", c->xs == NULL ?
			 "XenStore" : "/dev/xen/gntdev (load xen-gntdev)",
			 strerror(-rc));
		goto fail;
	}
	rc = pick_device(c, cfg->dev, err, errlen);
	if (rc == 0)
		rc = suspended(c, err, errlen);
	if (rc < 0)
		goto fail;
	/* A fresh request id: the core's answer names it.  Unique in the
	 * domain: pid, a per-process count and the clock (a reused pid
	 * starts its count again, at another time).  At most 23 bytes. */
	snprintf(rid, sizeof(rid), "%x.%x.%x", (unsigned)getpid() & 0xffffff,
		 ++rid_seq & 0xffff, (unsigned)(gnts_xc_now_ns() & 0xffffffffu));
	snprintf(num, sizeof(num), "%u", req->alloc_bufs);
	/* request-bell always, "0" too: a stale "1" of an earlier NF of
	 * the device would make the core offer a port nobody binds. */
	if ((rc = xput(c, GNTS_XS_SERVICE, req->service)) < 0 ||
	    (rc = xput(c, GNTS_XS_ALLOC_BUFS, num)) < 0 ||
	    (rc = xput(c, GNTS_XS_REQUEST_BELL,
			(req->flags & GNTS_REQ_BELL) ? "1" : "0")) < 0 ||
	    (rc = xput(c, GNTS_XS_REQUEST_ID, rid)) < 0 ||
	    (rc = xput(c, GNTS_XS_STATE,
			gnts_xb_state_str(GNTS_XB_INITIALISED))) < 0) {
		snprintf(err, errlen, "cannot write %s: %s", c->fe,
			 strerror(-rc));
		goto fail;
	}
	rc = gnts_xc_wait_answer(c, rid, cfg->timeout_ms, err, errlen);
	/* A save or migration that began after the look above: the core
	 * refuses a request it finds with the suspend node there, and one
	 * it never saw goes unanswered.  Neither is final: -EHOSTDOWN, ask
	 * again once the domain runs (err then says why). */
	if ((rc == -ECONNREFUSED || rc == -ETIMEDOUT) &&
	    suspended(c, err, errlen) < 0)
		rc = -EHOSTDOWN;
	if (rc == 0)
		rc = gnts_xc_read_geometry(c, rsp, err, errlen);
	if (rc == 0)
		rc = gnts_xc_read_refs(c, err, errlen);
	if (rc < 0)
		goto fail;
	if (req->flags & GNTS_REQ_BELL)
		bind_bell(c, rsp);
	(void)gnts_xc_get_str(c, c->be, GNTS_XS_NF_NAME, req->name,
		       sizeof(req->name));
	(void)gnts_xc_get_str(c, c->be, GNTS_XS_SERVICE, req->service,
		       sizeof(req->service));
	(void)gnts_xc_get_str(c, c->be, GNTS_XS_TRUST_GROUP, req->group,
		       sizeof(req->group));
	*impl = c;
	return 0;
fail:
	xen_cli_close(c);
	return rc;
}

/* xen-gntdev's `limit`: grants one map request may hold (its default,
 * 65536, if the parameter cannot be read). */
static unsigned long
gntdev_limit(void)
{
	FILE *f = fopen("/sys/module/xen_gntdev/parameters/limit", "r");
	unsigned long v = 65536;

	if (f != NULL) {
		if (fscanf(f, "%lu", &v) != 1)
			v = 65536;
		fclose(f);
	}
	return v;
}

static int
xen_cli_map(void *impl, gnts_ref_t ref, void **va, size_t *size,
	    char *err, size_t errlen)
{
	struct gnts_xen_client *c = impl;
	int ring = ref == GNTS_XEN_REF_RING;
	uint32_t n = ring ? c->n_ring : c->n_pool;
	unsigned long lim = gntdev_limit();
	void *p;

	if (ref != GNTS_XEN_REF_RING && ref != GNTS_XEN_REF_POOL)
		return -EINVAL;
	if (n > lim) {
		snprintf(err, errlen, "the %s is %u pages, more than one gntdev "
			 "map may hold (xen-gntdev `limit` = %lu): raise it "
			 "(modprobe xen-gntdev limit=N) or make the group's "
			 "pool_bufs smaller", ring ? "ring" : "pool", n, lim);
		return -E2BIG;
	}
	p = xengnttab_map_domain_grant_refs(c->xgt, n, c->be_dom,
					    ring ? c->ring_refs : c->pool_refs,
					    PROT_READ | PROT_WRITE);
	if (p == NULL) {
		int e = errno;

		snprintf(err, errlen, "gntdev map of %u %s pages: %s%s", n,
			 ring ? "ring" : "pool", strerror(e),
			 e == ENOSPC || e == ENOMEM ? " (gntdev or the guest's "
			 "grant mapping limit)" : "");
		return -e;
	}
	if (ring)
		c->ring_va = p;
	else
		c->pool_va = p;
	if (c->ring_va != NULL && c->pool_va != NULL)
		(void)xput(c, GNTS_XS_STATE,
			   gnts_xb_state_str(GNTS_XB_CONNECTED)); /* both mapped */
	*va = p;
	*size = (size_t)n * GNTS_XEN_PAGE;
	return 0;
}

static void
xen_cli_unmap(void *impl, void *va, size_t size)
{
	struct gnts_xen_client *c = impl;

	if (c == NULL || va == NULL)
		return;
	xengnttab_unmap(c->xgt, va, (uint32_t)(size / GNTS_XEN_PAGE));
	if (va == c->ring_va)
		c->ring_va = NULL;
	if (va == c->pool_va)
		c->pool_va = NULL;
}

/*
 * The backend state is read at most every CHECK_EVERY_NS (a XenStore read
 * is a round trip through xenstored; a watch would need libxenstore's
 * reader thread in every NF).  libxnv asks only when no packet came for
 * a while (domu-lib/io.c): a slow xenstored never holds up traffic.
 */
static int
xen_cli_alive(void *impl, char *err, size_t errlen)
{
	struct gnts_xen_client *c = impl;
	uint64_t now = gnts_xc_now_ns();
	long st, status;

	if (c->gone_status != 0)
		return 0;
	if (now < c->next_check_ns)
		return 1;
	c->next_check_ns = now + CHECK_EVERY_NS;
	st = gnts_xc_get_num(c, c->be, GNTS_XS_STATE);
	if (st == GNTS_XB_CONNECTED)
		return 1;
	if (gnts_xc_get_str(c, c->be, GNTS_XS_DETACH_REASON, err, errlen) < 0 ||
	    err[0] == '\0')
		snprintf(err, errlen, "backend state %ld", st);
	status = gnts_xc_get_num(c, c->be, GNTS_XS_DETACH_STATUS);
	/* detach-status is a negative errno; anything else means reset */
	c->gone_status = (status == -ESHUTDOWN || status == -EAGAIN) ?
			 (int)status : -ECONNRESET;
	return 0;
}

static int
xen_cli_gone_status(const void *impl)
{
	const struct gnts_xen_client *c = impl;

	return c->gone_status ? c->gone_status : -ECONNRESET;
}

static void
xen_cli_close(void *impl)
{
	struct gnts_xen_client *c = impl;

	if (c == NULL)
		return;
	gnts_bell_close(c->bell);
	if (c->ring_va != NULL)
		xengnttab_unmap(c->xgt, c->ring_va, c->n_ring);
	if (c->pool_va != NULL)
		xengnttab_unmap(c->xgt, c->pool_va, c->n_pool);
	/* Unmapped first: the core's revoke then finds nothing busy. */
	if (c->xs != NULL && c->fe[0] != '\0')
		(void)xput(c, GNTS_XS_STATE,
			   gnts_xb_state_str(GNTS_XB_CLOSED));
	if (c->xgt != NULL)
		xengnttab_close(c->xgt);
	if (c->xs != NULL)
		xs_close(c->xs);
	free(c->ring_refs);
	free(c->pool_refs);
	free(c);
}

static struct gnts_bell *
xen_cli_bell(void *impl)
{
	return ((struct gnts_xen_client *)impl)->bell;
}

/* The number N of our frontend directory, "device/xnv/N". */
static int
xen_cli_device(const void *impl)
{
	const struct gnts_xen_client *c = impl;
	const char *n = c->fe + sizeof(GNTS_XS_FRONTEND_DIR);

	return strncmp(c->fe, GNTS_XS_FRONTEND_DIR "/",
		       sizeof(GNTS_XS_FRONTEND_DIR)) == 0 ? atoi(n) : -1;
}

/* The domain's config names the NF; its device is re-requested by
 * restarting the NF (the core may have new refs): no in-process
 * re-attach after a core went away.  A save or migration of the domain
 * is the exception: libxnv attaches again through the same device once
 * the domain runs again (GNTS_DETACH_SUSPEND).  No watch_fd (a watch needs libxenstore's reader thread):
 * the core kicks a detached NF awake; only a core that dies without
 * detaching waits for libxnv's next alive(), once a second. */
const struct gnts_cli_ops gnts_xen_cli_ops = {
	.name = "xen",
	.flags = GNTS_CLI_DOMAIN_NAMES,
	.available = xen_cli_available,
	.attach = xen_cli_attach,
	.map = xen_cli_map,
	.unmap = xen_cli_unmap,
	.alive = xen_cli_alive,
	.gone_status = xen_cli_gone_status,
	.close = xen_cli_close,
	.bell = xen_cli_bell,
	.device = xen_cli_device,
};

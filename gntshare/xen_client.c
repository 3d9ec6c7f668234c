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

#define VAL_MAX 4096u

struct gnts_xen_client {
	struct xs_handle *xs;
	xengnttab_handle *xgt;
	char be[96], fe[96];
	uint32_t be_dom;	/* backend-id: Dom0, or a driver domain */
	int gone_status;
	uint32_t *ring_refs, n_ring;
	uint32_t *pool_refs, n_pool;
	void *ring_va, *pool_va;
	uint64_t next_check_ns;
	struct gnts_bell *bell;	/* our end of the doorbell, or NULL */
};

/* Attach attempts of this process (part of each request id). */
static unsigned rid_seq;

/* How often the NF looks at the backend state (a XenStore read). */
#define CHECK_EVERY_NS 20000000ull

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static char *
xget_t(struct gnts_xen_client *c, xs_transaction_t t, const char *dir,
       const char *node, unsigned *len)
{
	char path[160];

	snprintf(path, sizeof(path), "%s/%s", dir, node);
	return xs_read(c->xs, t, path, len);
}

static char *
xget(struct gnts_xen_client *c, const char *dir, const char *node,
     unsigned *len)
{
	return xget_t(c, XBT_NULL, dir, node, len);
}

static int
xget_str(struct gnts_xen_client *c, const char *dir, const char *node,
	 char *buf, size_t len)
{
	unsigned n = 0;
	char *v = xget(c, dir, node, &n);

	if (v == NULL)
		return -ENOENT;
	snprintf(buf, len, "%.*s", (int)n, v);
	free(v);
	return 0;
}

static long
xget_num(struct gnts_xen_client *c, const char *dir, const char *node)
{
	char v[24], *e;
	long x;

	if (xget_str(c, dir, node, v, sizeof(v)) < 0 || v[0] == '\0')
		return -1;
	errno = 0;
	x = strtol(v, &e, 10);
	return (*e != '\0' || errno != 0) ? -1 : x;
}

static int
xput(struct gnts_xen_client *c, const char *node, const char *val)
{
	char path[160];

	snprintf(path, sizeof(path), "%s/%s", c->fe, node);
	return xs_write(c->xs, XBT_NULL, path, val, (unsigned)strlen(val)) ?
	       0 : -errno;
}

/* "r0 r1 ..." -> exactly @p n refs. */
static int
parse_refs(const char *s, uint32_t *refs, uint32_t n)
{
	uint32_t i;
	char *e;

	for (i = 0; i < n; i++) {
		unsigned long v = strtoul(s, &e, 10);

		if (e == s || v == 0 || v > UINT32_MAX)
			return -EPROTO;
		refs[i] = (uint32_t)v;
		s = e;
		while (*s == ' ')
			s++;
	}
	return *s == '\0' ? 0 : -EPROTO;
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
	char *v = xget(c, dir, GNTS_XS_BACKEND_ID, &n);
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
		st = xget_num(c, dir, GNTS_XS_STATE);
		if (st < 0) {
			if (devid >= 0)
				break;
			continue;
		}
		if (devid >= 0 || st != GNTS_XB_CONNECTED) {
			snprintf(c->fe, sizeof(c->fe), "%s", dir);
			if (xget_str(c, dir, GNTS_XS_BACKEND, c->be,
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

/* The backend's state, if its request-id is @p rid, else -1; the two
 * read in one transaction, so a state is never paired with the id of
 * another answer (the core writes both in one transaction too).  The
 * core's reason in @p err with a Closed state. */
static long
read_answer(struct gnts_xen_client *c, const char *rid, char *err,
	    size_t errlen)
{
	xs_transaction_t t;
	unsigned n = 0, m = 0, k = 0;
	char *st, *id, *why;
	long v = -1;

	t = xs_transaction_start(c->xs);
	if (t == XBT_NULL)
		return -1;
	st = xget_t(c, t, c->be, GNTS_XS_STATE, &n);
	id = xget_t(c, t, c->be, GNTS_XS_REQUEST_ID, &m);
	why = xget_t(c, t, c->be, GNTS_XS_ERROR, &k);
	/* Reads in a transaction are not a snapshot: xenstored checks at
	 * the end that none of the nodes changed since (else EAGAIN), so
	 * the transaction is committed, not abandoned, and a changed
	 * answer is read again at the next poll. */
	if (!xs_transaction_end(c->xs, t, false)) {
		free(st);
		free(id);
		free(why);
		return -1;
	}
	if (st != NULL && id != NULL && strlen(rid) == m &&
	    memcmp(id, rid, m) == 0) {
		v = n > 0 && n < 3 ? strtol(st, NULL, 10) : -1;
		if (why != NULL && k > 0)
			snprintf(err, errlen, "%.*s", (int)k, why);
		else
			snprintf(err, errlen, "refused");
	}
	free(st);
	free(id);
	free(why);
	return v;
}

/* Wait until the backend answered request @p rid: 0 connected, else the
 * core's refusal in @p err.  Asked every 2 ms at first, then less often
 * (up to every 32 ms): each ask is a transaction, and xenstored serves
 * the core and every other guest too.  The time is the clock's: a busy
 * host makes each ask slow, not the wait longer. */
static int
wait_answer(struct gnts_xen_client *c, const char *rid, unsigned timeout_ms,
	    char *err, size_t errlen)
{
	uint64_t end = now_ns() + (uint64_t)timeout_ms * 1000000u;
	struct timespec ts = { 0, 2000000 };
	long st;

	for (;;) {
		st = read_answer(c, rid, err, errlen);
		if (st == GNTS_XB_CONNECTED) {
			err[0] = '\0';
			return 0;
		}
		if (st == GNTS_XB_CLOSED)
			return -ECONNREFUSED;
		if (now_ns() >= end) {
			snprintf(err, errlen, "xnv-core did not answer within "
				 "%u ms (backend %s state %ld; is xnv-core "
				 "running with --backend xen?)", timeout_ms,
				 c->be, xget_num(c, c->be, GNTS_XS_STATE));
			return -ETIMEDOUT;
		}
		nanosleep(&ts, NULL);
		if (ts.tv_nsec < 32000000)
			ts.tv_nsec *= 2;
	}
}

static int
read_geometry(struct gnts_xen_client *c, struct gnts_attach_rsp *rsp,
	      char *err, size_t errlen)
{
	static const char *const num[] = { GNTS_XS_NF_ID, GNTS_XS_SERVICE_ID,
		GNTS_XS_RING_SIZE, GNTS_XS_POOL_BUFS, GNTS_XS_BUF_SIZE,
		GNTS_XS_N_PORTS, GNTS_XS_RING_PAGES, GNTS_XS_POOL_PAGES };
	long v[8];
	unsigned i;

	for (i = 0; i < 8; i++) {
		v[i] = xget_num(c, c->be, num[i]);
		if (v[i] < 0 || v[i] > (long)GNTS_XEN_GNTDEV_MAX * 64) {
			snprintf(err, errlen, "backend node %s missing or bad",
				 num[i]);
			return -EPROTO;
		}
	}
	memset(rsp, 0, sizeof(*rsp));
	rsp->domid = c->be_dom;
	rsp->nf_id = (uint32_t)v[0];
	rsp->service_id = (uint32_t)v[1];
	rsp->ring_size = (uint32_t)v[2];
	rsp->pool_bufs = (uint32_t)v[3];
	rsp->buf_size = (uint32_t)v[4];
	rsp->n_ports = (uint32_t)v[5];
	rsp->ring_ref = GNTS_XEN_REF_RING;
	rsp->pool_ref = GNTS_XEN_REF_POOL;
	c->n_ring = (uint32_t)v[6];
	c->n_pool = (uint32_t)v[7];
	rsp->ring_bytes = (uint64_t)c->n_ring * GNTS_XEN_PAGE;
	rsp->pool_bytes = (uint64_t)c->n_pool * GNTS_XEN_PAGE;
	if (c->n_ring == 0 || c->n_pool == 0 ||
	    c->n_pool > GNTS_XEN_GNTDEV_MAX) {
		snprintf(err, errlen, "pool of %u pages: gntdev maps at most "
			 "%u grants per request (lower pool_bufs)", c->n_pool,
			 GNTS_XEN_GNTDEV_MAX);
		return -E2BIG;
	}
	return 0;
}

/* Ring refs from ring-ref; pool refs from the directory pages. */
static int
read_refs(struct gnts_xen_client *c, char *err, size_t errlen)
{
	uint32_t nd = (c->n_pool + GNTS_XEN_REFS_PER_DIR - 1) /
		      GNTS_XEN_REFS_PER_DIR, dref[64], i;
	unsigned len = 0;
	char *s;
	uint32_t *dir;
	int rc;

	c->ring_refs = calloc(c->n_ring, sizeof(uint32_t));
	c->pool_refs = calloc(c->n_pool, sizeof(uint32_t));
	if (c->ring_refs == NULL || c->pool_refs == NULL || nd > 64)
		return -ENOMEM;
	s = xget(c, c->be, GNTS_XS_RING_REF, &len);
	rc = s ? parse_refs(s, c->ring_refs, c->n_ring) : -EPROTO;
	free(s);
	s = xget(c, c->be, GNTS_XS_POOL_DIR_REFS, &len);
	if (rc == 0)
		rc = s ? parse_refs(s, dref, nd) : -EPROTO;
	free(s);
	if (rc < 0) {
		snprintf(err, errlen, "backend ring-ref / pool-dir-refs do not "
			 "match ring-pages / pool-pages");
		return rc;
	}
	dir = xengnttab_map_domain_grant_refs(c->xgt, nd, c->be_dom, dref,
					      PROT_READ);
	if (dir == NULL) {
		rc = -errno;
		snprintf(err, errlen, "cannot map the pool directory (%u "
			 "pages): %s", nd, strerror(-rc));
		return rc;
	}
	for (i = 0; i < c->n_pool; i++)
		c->pool_refs[i] = le32toh(dir[i]);
	xengnttab_unmap(c->xgt, dir, nd);
	return 0;
}

/* Our end of the doorbell the core offers (xen.h, "Doorbells"), bound
 * to its domain; the values are untrusted (gnts_xen_bell_parse).  A bad
 * one, or a bind Xen refuses, costs one line and the NF polls. */
static void
bind_bell(struct gnts_xen_client *c, struct gnts_attach_rsp *rsp)
{
	unsigned n = 0, m = 0;
	char *v = xget(c, c->be, GNTS_XS_EVENT_CHANNEL, &n);
	char *b = xget(c, c->fe, GNTS_XS_BACKEND_ID, &m);
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
	if (rc < 0)
		goto fail;
	/* A fresh request id: the core's answer names it.  Unique in the
	 * domain: pid, a per-process count and the clock (a reused pid
	 * starts its count again, at another time).  At most 23 bytes. */
	snprintf(rid, sizeof(rid), "%x.%x.%x", (unsigned)getpid() & 0xffffff,
		 ++rid_seq & 0xffff, (unsigned)(now_ns() & 0xffffffffu));
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
	rc = wait_answer(c, rid, cfg->timeout_ms, err, errlen);
	if (rc == 0)
		rc = read_geometry(c, rsp, err, errlen);
	if (rc == 0)
		rc = read_refs(c, err, errlen);
	if (rc < 0)
		goto fail;
	if (req->flags & GNTS_REQ_BELL)
		bind_bell(c, rsp);
	(void)xget_str(c, c->be, GNTS_XS_NF_NAME, req->name,
		       sizeof(req->name));
	(void)xget_str(c, c->be, GNTS_XS_SERVICE, req->service,
		       sizeof(req->service));
	(void)xget_str(c, c->be, GNTS_XS_TRUST_GROUP, req->group,
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
	uint64_t now = now_ns();
	long st, status;

	if (c->gone_status != 0)
		return 0;
	if (now < c->next_check_ns)
		return 1;
	c->next_check_ns = now + CHECK_EVERY_NS;
	st = xget_num(c, c->be, GNTS_XS_STATE);
	if (st == GNTS_XB_CONNECTED)
		return 1;
	if (xget_str(c, c->be, GNTS_XS_DETACH_REASON, err, errlen) < 0 ||
	    err[0] == '\0')
		snprintf(err, errlen, "backend state %ld", st);
	status = xget_num(c, c->be, GNTS_XS_DETACH_STATUS);
	/* detach-status is a negative errno; anything else means reset */
	c->gone_status = (status == -ESHUTDOWN) ? -ESHUTDOWN : -ECONNRESET;
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

/* The domain's config names the NF; its device is re-requested by
 * restarting the NF (the core may have new refs): no in-process
 * re-attach.  No watch_fd (a watch needs libxenstore's reader thread):
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
};

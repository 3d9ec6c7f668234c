/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * xen backend, Dom0 side: what an attached guest reads (xen.h draws the
 * nodes): the ring region's refs, the pool's refs through granted
 * directory pages, the geometry, its doorbell's event channel port, in
 * one XenStore transaction; a refusal (error, request-id, Closed) in one
 * too.  Also the one XenStore writer of the Dom0 side.
 */
#include <endian.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "region_pvt.h"
#include "xen_server_pvt.h"

int
gnts_xs_write(struct gnts_xen_server *s, xs_transaction_t t, const char *dir,
       const char *node, const char *fmt, ...)
{
	char path[160], val[VAL_MAX];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(val, sizeof(val), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(val))
		return -E2BIG;
	snprintf(path, sizeof(path), "%s/%s", dir, node);
	return xs_write(s->xs, t, path, val, (unsigned int)n) ? 0 : -errno;
}

/* Remove @p dir/@p node in transaction @p t (none there: fine). */
static int
xs_remove(struct gnts_xen_server *s, xs_transaction_t t, const char *dir,
	  const char *node)
{
	char path[160];

	snprintf(path, sizeof(path), "%s/%s", dir, node);
	return xs_rm(s->xs, t, path) ? 0 : -errno;
}

/* "r0 r1 ..." into @p buf; -E2BIG past a XenStore value. */
static int
refs_string(const uint32_t *refs, uint32_t n, char *buf, size_t len)
{
	size_t o = 0;
	uint32_t i;

	buf[0] = '\0';
	for (i = 0; i < n; i++) {
		int k = snprintf(buf + o, len - o, "%s%u", i ? " " : "",
				 refs[i]);

		if (k < 0 || (size_t)k >= len - o)
			return -E2BIG;
		o += (size_t)k;
	}
	return 0;
}

/* Directory pages listing the pool's refs for @p d, granted read-only. */
static int
make_directory(struct xdev *d, const uint32_t *refs, uint32_t n, char *err,
	       size_t errlen)
{
	char name[GNTS_NAME_LEN];
	uint32_t *dir, i;
	size_t pages = (n + GNTS_XEN_REFS_PER_DIR - 1) / GNTS_XEN_REFS_PER_DIR;
	int rc;

	snprintf(name, sizeof(name), "xnv-dir-%u.%u", d->domid, d->devid);
	rc = gnts_region_create_for(name, pages * GNTS_XEN_PAGE, 0, d->dom, 1,
				    &d->dir, err, errlen);
	if (rc < 0)
		return rc;
	dir = d->dir->va;
	for (i = 0; i < n; i++)
		dir[i] = htole32(refs[i]);
	return 0;
}

/* The ring's refs and the pool directory's refs as XenStore values.
 * Under the grant table's lock: the data path may end these grants. */
static int
grant_strings(struct xdev *d, const struct gnts_attach_rsp *rsp, char *rstr,
	      char *dstr, size_t vlen, uint32_t *nr, uint32_t *np, char *err,
	      size_t errlen)
{
	struct gnts_region *ring, *pool;
	const uint32_t *rrefs, *prefs, *drefs;
	uint32_t nd = 0;
	int rc;

	ring = gnts_region_find(rsp->ring_ref);
	pool = gnts_region_find(rsp->pool_ref);
	rrefs = ring ? gnts_region_refs(ring, d->dom, nr) : NULL;
	prefs = pool ? gnts_region_refs(pool, d->dom, np) : NULL;
	if (rrefs == NULL || prefs == NULL) {
		snprintf(err, errlen, "ring or pool not granted to the domain");
		return -EINVAL;
	}
	rc = make_directory(d, prefs, *np, err, errlen);
	if (rc < 0)
		return rc;
	drefs = gnts_region_refs(d->dir, d->dom, &nd);
	if (refs_string(rrefs, *nr, rstr, vlen) < 0 ||
	    refs_string(drefs, nd, dstr, vlen) < 0) {
		snprintf(err, errlen, "ring or directory refs exceed a "
			 "XenStore value (lower ring_size or pool_bufs)");
		return -E2BIG;
	}
	return 0;
}

/* What gnts_xen_publish writes. */
struct answer {
	struct xdev *d;
	const struct gnts_attach_rsp *rsp;
	const char *name, *rid, *why;
	const char *rstr, *dstr;
	uint32_t nr, np;
};

static int
write_connected(struct gnts_xen_server *s, xs_transaction_t t,
		const struct answer *a)
{
	const struct gnts_attach_rsp *rsp = a->rsp;
	const char *be = a->d->be;
	int rc;

	rc = gnts_xs_write(s, t, be, GNTS_XS_RING_REF, "%s", a->rstr);
	rc |= gnts_xs_write(s, t, be, GNTS_XS_RING_PAGES, "%u", a->nr);
	rc |= gnts_xs_write(s, t, be, GNTS_XS_RING_SIZE, "%u", rsp->ring_size);
	rc |= gnts_xs_write(s, t, be, GNTS_XS_POOL_DIR_REFS, "%s", a->dstr);
	rc |= gnts_xs_write(s, t, be, GNTS_XS_POOL_PAGES, "%u", a->np);
	rc |= gnts_xs_write(s, t, be, GNTS_XS_POOL_BUFS, "%u", rsp->pool_bufs);
	rc |= gnts_xs_write(s, t, be, GNTS_XS_BUF_SIZE, "%u", rsp->buf_size);
	rc |= gnts_xs_write(s, t, be, GNTS_XS_SERVICE_ID, "%u",
			    rsp->service_id);
	rc |= gnts_xs_write(s, t, be, GNTS_XS_NF_ID, "%u", rsp->nf_id);
	rc |= gnts_xs_write(s, t, be, GNTS_XS_NF_NAME, "%s", a->name);
	rc |= gnts_xs_write(s, t, be, GNTS_XS_N_PORTS, "%u", rsp->n_ports);
	/* No stale port from an earlier attach: this one's, or none. */
	if (a->d->bell != NULL)
		rc |= gnts_xs_write(s, t, be, GNTS_XS_EVENT_CHANNEL, "%u",
				    a->d->bell_port);
	else
		rc |= xs_remove(s, t, be, GNTS_XS_EVENT_CHANNEL);
	rc |= gnts_xs_write(s, t, be, GNTS_XS_REQUEST_ID, "%s", a->rid);
	rc |= gnts_xs_write(s, t, be, GNTS_XS_ERROR, "%s", "");
	rc |= gnts_xs_write(s, t, be, GNTS_XS_STATE, "%d",
			    GNTS_XB_CONNECTED);
	return rc;
}

static int
write_closed(struct gnts_xen_server *s, xs_transaction_t t,
	     const struct answer *a)
{
	int rc;

	rc = gnts_xs_write(s, t, a->d->be, GNTS_XS_ERROR, "%s", a->why);
	if (a->rid[0] != '\0')
		rc |= gnts_xs_write(s, t, a->d->be, GNTS_XS_REQUEST_ID, "%s",
				    a->rid);
	rc |= gnts_xs_write(s, t, a->d->be, GNTS_XS_STATE, "%d",
			    GNTS_XB_CLOSED);
	return rc;
}

/* @p fill's writes in one transaction, again while XenStore says EAGAIN
 * (another writer came between), at most 16 times: a guest reads an
 * answer (state, request-id, error, refs) whole or not at all. */
static int
in_transaction(struct gnts_xen_server *s, const struct answer *a,
	       int (*fill)(struct gnts_xen_server *, xs_transaction_t,
			   const struct answer *))
{
	xs_transaction_t t;
	int rc, tries;

	for (tries = 0; tries < 16; tries++) {
		t = xs_transaction_start(s->xs);
		if (t == XBT_NULL)
			break;
		rc = fill(s, t, a);
		if (xs_transaction_end(s->xs, t, rc != 0))
			return rc == 0 ? 0 : -EIO;
		if (errno != EAGAIN)
			break;
	}
	return -EIO;
}

int
gnts_xen_publish(struct gnts_xen_server *s, struct xdev *d,
	const struct gnts_attach_rsp *rsp, const char *name, const char *rid,
	char *err, size_t errlen)
{
	static char rstr[VAL_MAX], dstr[VAL_MAX];
	struct answer a = { .d = d, .rsp = rsp, .name = name, .rid = rid,
			    .rstr = rstr, .dstr = dstr };
	int rc;

	gnts_region_lock();
	rc = grant_strings(d, rsp, rstr, dstr, VAL_MAX, &a.nr, &a.np, err,
			   errlen);
	gnts_region_unlock();
	if (rc < 0)
		return rc;
	if (in_transaction(s, &a, write_connected) == 0)
		return 0;
	snprintf(err, errlen, "cannot write the backend nodes: %s",
		 strerror(errno));
	return -EIO;
}

int
gnts_xen_answer_closed(struct gnts_xen_server *s, struct xdev *d,
		       const char *rid, const char *why)
{
	struct answer a = { .d = d, .rid = rid, .why = why };

	return in_transaction(s, &a, write_closed);
}

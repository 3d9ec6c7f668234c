/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * xen backend, guest (NF) side: reading XenStore, and the core's answer
 * to an attach request (its state, the geometry, the ring and pool refs).
 * xen_client.c asks; the protocol is include/gntshare/xen.h.
 */
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include <xengnttab.h>
#include <xenstore.h>

#include "gntshare/xen.h"
#include "xen_client_pvt.h"

uint64_t
gnts_xc_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

char *
gnts_xc_get(struct gnts_xen_client *c, xs_transaction_t t, const char *dir,
	    const char *node, unsigned *len)
{
	char path[160];

	snprintf(path, sizeof(path), "%s/%s", dir, node);
	return xs_read(c->xs, t, path, len);
}

int
gnts_xc_get_str(struct gnts_xen_client *c, const char *dir, const char *node,
		char *buf, size_t len)
{
	unsigned n = 0;
	char *v = gnts_xc_get(c, XBT_NULL, dir, node, &n);

	if (v == NULL)
		return -ENOENT;
	snprintf(buf, len, "%.*s", (int)n, v);
	free(v);
	return 0;
}

long
gnts_xc_get_num(struct gnts_xen_client *c, const char *dir, const char *node)
{
	char v[24], *e;
	long x;

	if (gnts_xc_get_str(c, dir, node, v, sizeof(v)) < 0 || v[0] == '\0')
		return -1;
	errno = 0;
	x = strtol(v, &e, 10);
	return (*e != '\0' || errno != 0) ? -1 : x;
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

/* "<be>/<node>" == @p rid (the whole value). */
static int
id_is(struct gnts_xen_client *c, const char *rid)
{
	unsigned m = 0;
	char *id = gnts_xc_get(c, XBT_NULL, c->be, GNTS_XS_REQUEST_ID, &m);
	int same = id != NULL && strlen(rid) == m && memcmp(id, rid, m) == 0;

	free(id);
	return same;
}

/* The backend's state, if its request-id is @p rid, else -1: the id
 * read on both sides of the state.  The core writes state and request-id
 * in one transaction and changes the id only to answer a newer request
 * of ours, so a state read between two reads of our id is this answer's,
 * or a later state of it (a detach), never another answer's.  These
 * reads need no transaction.  The core's reason in @p err with a Closed
 * state. */
static long
read_answer(struct gnts_xen_client *c, const char *rid, char *err,
	    size_t errlen)
{
	unsigned n = 0, k = 0;
	char *st, *why;
	long v = -1;

	if (!id_is(c, rid))
		return -1;
	st = gnts_xc_get(c, XBT_NULL, c->be, GNTS_XS_STATE, &n);
	why = gnts_xc_get(c, XBT_NULL, c->be, GNTS_XS_ERROR, &k);
	if (st != NULL && id_is(c, rid)) {
		v = n > 0 && n < 3 ? strtol(st, NULL, 10) : -1;
		if (why != NULL && k > 0)
			snprintf(err, errlen, "%.*s", (int)k, why);
		else
			snprintf(err, errlen, "refused");
	}
	free(st);
	free(why);
	return v;
}

/* Wait until the backend answered request @p rid: 0 connected, else the
 * core's refusal in @p err.  Asked every 2 ms at first, then less often
 * (up to every 32 ms): each ask is four reads, and xenstored serves
 * the core and every other guest too.  The time is the clock's: a busy
 * host makes each ask slow, not the wait longer. */
int
gnts_xc_wait_answer(struct gnts_xen_client *c, const char *rid,
		    unsigned timeout_ms,
	    char *err, size_t errlen)
{
	uint64_t end = gnts_xc_now_ns() + (uint64_t)timeout_ms * 1000000u;
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
		if (gnts_xc_now_ns() >= end) {
			char id[24] = "none";

			(void)gnts_xc_get_str(c, c->be, GNTS_XS_REQUEST_ID, id,
					      sizeof(id));
			snprintf(err, errlen, "xnv-core did not answer within "
				 "%u ms (backend %s state %ld, request-id %s, "
				 "ours %s; is xnv-core running with --backend "
				 "xen?)", timeout_ms, c->be,
				 gnts_xc_get_num(c, c->be, GNTS_XS_STATE), id,
				 rid);
			return -ETIMEDOUT;
		}
		nanosleep(&ts, NULL);
		if (ts.tv_nsec < 32000000)
			ts.tv_nsec *= 2;
	}
}

int
gnts_xc_read_geometry(struct gnts_xen_client *c, struct gnts_attach_rsp *rsp,
		      char *err, size_t errlen)
{
	static const char *const num[] = { GNTS_XS_NF_ID, GNTS_XS_SERVICE_ID,
		GNTS_XS_RING_SIZE, GNTS_XS_POOL_BUFS, GNTS_XS_BUF_SIZE,
		GNTS_XS_N_PORTS, GNTS_XS_RING_PAGES, GNTS_XS_POOL_PAGES };
	long v[8];
	unsigned i;

	for (i = 0; i < 8; i++) {
		v[i] = gnts_xc_get_num(c, c->be, num[i]);
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
int
gnts_xc_read_refs(struct gnts_xen_client *c, char *err, size_t errlen)
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
	s = gnts_xc_get(c, XBT_NULL, c->be, GNTS_XS_RING_REF, &len);
	rc = s ? parse_refs(s, c->ring_refs, c->n_ring) : -EPROTO;
	free(s);
	s = gnts_xc_get(c, XBT_NULL, c->be, GNTS_XS_POOL_DIR_REFS, &len);
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

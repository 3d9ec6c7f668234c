/* SPDX-License-Identifier: BSD-3-Clause */
/* xnv-xl's XenStore side (xs_dev.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gntshare/proto.h>
#include <gntshare/xen.h>

#include "xs_dev.h"

static int
xs_put(struct xs_handle *xs, xs_transaction_t t, const char *dir,
       const char *node, const char *val)
{
	char path[160];

	snprintf(path, sizeof(path), "%s/%s", dir, node);
	return xs_write(xs, t, path, val, (unsigned)strlen(val)) ? 0 : -1;
}

/* The directory of @p domid's devices under backend domain @p bdom. */
static void
dom_dir(char *buf, size_t len, int bdom, int domid)
{
	char root[48];

	snprintf(root, sizeof(root), GNTS_XS_BACKEND_ROOT_FMT, (unsigned)bdom);
	snprintf(buf, len, "%s/%d", root, domid);
}

/* Run @p body in a transaction, again while xenstored answers EAGAIN (a
 * conflicting write meanwhile), at most 16 times.  0, or -1 (errno). */
static int
in_transaction(struct xs_handle *xs,
	       int (*body)(struct xs_handle *, xs_transaction_t, const void *),
	       const void *arg)
{
	xs_transaction_t t;
	int rc, tries;

	for (tries = 0; tries < 16; tries++) {
		t = xs_transaction_start(xs);
		if (t == XBT_NULL)
			return -1;
		rc = body(xs, t, arg);
		if (xs_transaction_end(xs, t, rc != 0))
			return rc;
		if (errno != EAGAIN)
			return -1;
	}
	return -1;
}

/* One device's nodes, both halves (xs_dev_register()). */
struct reg {
	const struct nfv_cfg *c;
	int domid, bdom;
	char dir[80], be[96], fe[96];
};

static int
reg_body(struct xs_handle *xs, xs_transaction_t t, const void *arg)
{
	const struct reg *r = arg;
	/* The backend domain owns its half (the domain reads it) and
	 * reads the domain's; Dom0 reads and writes everything anyway. */
	struct xs_permissions be_perm[2] = {
		{ .id = (unsigned)r->bdom, .perms = XS_PERM_NONE },
		{ .id = (unsigned)r->domid, .perms = XS_PERM_READ },
	};
	struct xs_permissions fe_perm[2] = {
		{ .id = (unsigned)r->domid, .perms = XS_PERM_NONE },
		{ .id = (unsigned)r->bdom, .perms = XS_PERM_READ },
	};
	const char *init = gnts_xb_state_str(GNTS_XB_INITIALISING);
	char id[16], bid[16];
	int rc;

	snprintf(id, sizeof(id), "%d", r->domid);
	snprintf(bid, sizeof(bid), "%d", r->bdom);
	/* the domain's directory too: the backend removes it when the
	 * domain is gone */
	rc = xs_mkdir(xs, t, r->dir) ? 0 : -1;
	rc |= xs_set_permissions(xs, t, r->dir, be_perm, 1) ? 0 : -1;
	rc |= xs_mkdir(xs, t, r->be) ? 0 : -1;
	rc |= xs_set_permissions(xs, t, r->be, be_perm, 2) ? 0 : -1;
	rc |= xs_put(xs, t, r->be, GNTS_XS_FRONTEND, r->fe);
	rc |= xs_put(xs, t, r->be, GNTS_XS_FRONTEND_ID, id);
	rc |= xs_put(xs, t, r->be, GNTS_XS_NAME, r->c->name);
	rc |= xs_put(xs, t, r->be, GNTS_XS_SERVICE, r->c->service);
	rc |= xs_put(xs, t, r->be, GNTS_XS_TRUST_GROUP, r->c->group);
	rc |= xs_put(xs, t, r->be, GNTS_XS_STATE, init);
	rc |= xs_mkdir(xs, t, r->fe) ? 0 : -1;
	rc |= xs_set_permissions(xs, t, r->fe, fe_perm,
				 r->bdom != 0 ? 2 : 1) ? 0 : -1;
	rc |= xs_put(xs, t, r->fe, GNTS_XS_BACKEND, r->be);
	rc |= xs_put(xs, t, r->fe, GNTS_XS_BACKEND_ID, bid);
	rc |= xs_put(xs, t, r->fe, GNTS_XS_STATE, init);
	return rc;
}

int
xs_dev_register(struct xs_handle *xs, const struct nfv_cfg *c, int domid,
		int bdom, int dev)
{
	struct reg r = { .c = c, .domid = domid, .bdom = bdom };

	dom_dir(r.dir, sizeof(r.dir), bdom, domid);
	snprintf(r.be, sizeof(r.be), "%s/%d", r.dir, dev);
	snprintf(r.fe, sizeof(r.fe), "/local/domain/%d/%s/%d", domid,
		 GNTS_XS_FRONTEND_DIR, dev);
	return in_transaction(xs, reg_body, &r);
}

int
xs_dev_wait_core(struct xs_handle *xs, int domid, int bdom, int n,
		 double timeout)
{
	struct timespec ts = { 0, 20000000 };
	double waited = 0;
	char dir[80], path[160], *v;
	unsigned len;
	int dev, ready;

	dom_dir(dir, sizeof(dir), bdom, domid);
	for (;;) {
		ready = 0;
		for (dev = 0; dev < n; dev++) {
			snprintf(path, sizeof(path), "%s/%d/%s", dir, dev,
				 GNTS_XS_STATE);
			v = xs_read(xs, XBT_NULL, path, &len);
			if (v != NULL && strcmp(v, gnts_xb_state_str(
					GNTS_XB_CLOSED)) == 0) {
				free(v);
				snprintf(path, sizeof(path), "%s/%d/%s", dir,
					 dev, GNTS_XS_ERROR);
				v = xs_read(xs, XBT_NULL, path, &len);
				ERR("xnv-core refused the domain: %s",
				    v ? v : "no reason given");
				free(v);
				return -1;
			}
			ready += v != NULL && strcmp(v, gnts_xb_state_str(
					GNTS_XB_INITWAIT)) == 0;
			free(v);
		}
		if (ready == n)
			return 0;
		if (waited >= timeout) {
			ERR("xnv-core did not answer within %.0f s (is it "
			    "running with --backend xen%s?)", timeout,
			    bdom != 0 ? ", in the nfv_backend domain" : "");
			return -1;
		}
		nanosleep(&ts, NULL);
		waited += 0.02;
	}
}

int
xs_dev_backend(struct xs_handle *xs, int domid)
{
	char path[96], *v;
	uint32_t bdom = 0;
	unsigned len = 0;

	snprintf(path, sizeof(path), "/local/domain/%d/%s/0/%s", domid,
		 GNTS_XS_FRONTEND_DIR, GNTS_XS_BACKEND_ID);
	v = xs_read(xs, XBT_NULL, path, &len);
	if (v == NULL || gnts_xs_uint(v, len, GNTS_XEN_MAX_DOMID, &bdom) < 0)
		bdom = 0;
	free(v);
	return (int)bdom;
}

void
xs_dev_unregister(struct xs_handle *xs, int domid, int bdom)
{
	char path[80];

	dom_dir(path, sizeof(path), bdom, domid);
	(void)xs_rm(xs, XBT_NULL, path);
}

char *
xs_dev_node(struct xs_handle *xs, const char *dir, const char *leaf)
{
	char path[160];
	unsigned len;

	snprintf(path, sizeof(path), "%s/%s", dir, leaf);
	return xs_read(xs, XBT_NULL, path, &len);
}

/* Dom0 and every domain that serves NF devices (has a backend/xnv
 * directory), plus @p bdom: who reads @releaseDomain when its current
 * permissions cannot be read (xenstored 4.17 refuses GET_PERMS on the
 * special nodes; SET_PERMS works).  The count, or -1. */
static int
release_readers(struct xs_handle *xs, int bdom, struct xs_permissions *p,
		unsigned max)
{
	char **doms, path[64], *v;
	unsigned n = 0, i, k = 0, len;

	p[k++] = (struct xs_permissions){ .id = 0, .perms = XS_PERM_NONE };
	p[k++] = (struct xs_permissions){ .id = (unsigned)bdom,
					  .perms = XS_PERM_READ };
	doms = xs_directory(xs, XBT_NULL, "/local/domain", &n);
	for (i = 0; doms != NULL && i < n && k < max; i++) {
		unsigned d = (unsigned)atoi(doms[i]);

		if (d == 0 || d == (unsigned)bdom)
			continue;
		snprintf(path, sizeof(path), GNTS_XS_BACKEND_ROOT_FMT, d);
		v = xs_read(xs, XBT_NULL, path, &len);
		if (v != NULL)
			p[k++] = (struct xs_permissions){ .id = d,
							  .perms = XS_PERM_READ };
		free(v);
	}
	free(doms);
	return (int)k;
}

int
xs_dev_allow_release(struct xs_handle *xs, int bdom)
{
	struct xs_permissions *p, q[64];
	unsigned n = 0, i;
	int k;

	p = xs_get_permissions(xs, XBT_NULL, "@releaseDomain", &n);
	if (p != NULL) {	/* a xenstored that tells: add bdom if missing */
		for (i = 0, k = 0; i < n && k < 63; i++) {
			if (p[i].id == (unsigned)bdom && i > 0)
				continue;
			q[k] = p[i];
			q[k++].perms &= XS_PERM_READ | XS_PERM_WRITE;
		}
		free(p);
		q[k++] = (struct xs_permissions){ .id = (unsigned)bdom,
						  .perms = XS_PERM_READ };
	} else {
		k = release_readers(xs, bdom, q, 64);
	}
	return xs_set_permissions(xs, XBT_NULL, "@releaseDomain", q,
				  (unsigned)k) ? 0 : -1;
}

/* "<dir>/<n>/<leaf>" of device @p n, as a number, or -1. */
static int
dev_num(struct xs_handle *xs, const char *dir, int n, const char *leaf)
{
	char path[128], *v;
	unsigned len = 0;
	uint32_t x;
	int rc;

	snprintf(path, sizeof(path), "%s/%d/%s", dir, n, leaf);
	v = xs_read(xs, XBT_NULL, path, &len);
	rc = v != NULL && gnts_xs_uint(v, len, 100, &x) == 0 ? (int)x : -1;
	free(v);
	return rc;
}

/* A node's value into @p out (at most @p len - 1 bytes, else ""). */
static void
node_str(struct xs_handle *xs, const char *dir, const char *leaf, char *out,
	 size_t len)
{
	char *v = xs_dev_node(xs, dir, leaf);

	snprintf(out, len, "%s", v != NULL && strlen(v) < len ? v : "");
	free(v);
}

int
xs_dev_read(struct xs_handle *xs, int domid, struct nfv_cfg *c, int *bdom)
{
	char dir[80], be[96], path[64];
	int n;

	*bdom = xs_dev_backend(xs, domid);
	dom_dir(dir, sizeof(dir), *bdom, domid);
	for (n = 0; n < NFV_MAX_INSTANCES; n++)
		if (dev_num(xs, dir, n, GNTS_XS_STATE) < 0)
			break;
	c->instances = n;
	if (n == 0)
		return 0;
	snprintf(be, sizeof(be), "%s/0", dir);
	node_str(xs, be, GNTS_XS_SERVICE, c->service, sizeof(c->service));
	node_str(xs, be, GNTS_XS_TRUST_GROUP, c->group, sizeof(c->group));
	c->backend[0] = '\0';
	if (*bdom != 0) {
		snprintf(path, sizeof(path), "/local/domain/%d", *bdom);
		node_str(xs, path, "name", c->backend, sizeof(c->backend));
	}
	return n;
}

/* The suspend nodes of a domain's devices (xs_dev_suspend()). */
struct sus {
	char dir[80];
	int n;
	const char *what;
};

static int
sus_body(struct xs_handle *xs, xs_transaction_t t, const void *arg)
{
	const struct sus *u = arg;
	char path[128];
	int i, rc = 0;

	for (i = 0; i < u->n; i++) {
		snprintf(path, sizeof(path), "%s/%d/%s", u->dir, i,
			 GNTS_XS_SUSPEND);
		if (u->what != NULL)
			rc |= xs_write(xs, t, path, u->what,
				       (unsigned)strlen(u->what)) ? 0 : -1;
		else
			(void)xs_rm(xs, t, path);
	}
	return rc;
}

int
xs_dev_suspend(struct xs_handle *xs, int domid, int bdom, int n,
	       const char *what)
{
	struct sus u = { .n = n, .what = what };

	dom_dir(u.dir, sizeof(u.dir), bdom, domid);
	return in_transaction(xs, sus_body, &u);
}

int
xs_dev_wait_let_go(struct xs_handle *xs, int domid, int bdom, int n,
		   double timeout, char *why, size_t len)
{
	struct timespec ts = { 0, 20000000 };
	char dir[80], fe[80];
	double waited = 0;
	int i, b = -1, f = -1;

	dom_dir(dir, sizeof(dir), bdom, domid);
	snprintf(fe, sizeof(fe), "/local/domain/%d/%s", domid,
		 GNTS_XS_FRONTEND_DIR);
	for (;;) {
		for (i = 0; i < n; i++) {
			b = dev_num(xs, dir, i, GNTS_XS_STATE);
			f = dev_num(xs, fe, i, GNTS_XS_STATE);
			/* the core has not detached it yet, or its NF still
			 * maps (it writes Closed after unmapping) */
			if (b == GNTS_XB_CONNECTED || b == GNTS_XB_CLOSING ||
			    f == GNTS_XB_CONNECTED)
				break;
		}
		if (i == n)
			return 0;
		if (waited >= timeout) {
			snprintf(why, len, "device %d: backend state %d, "
				 "frontend state %d", i, b, f);
			return -1;
		}
		nanosleep(&ts, NULL);
		waited += 0.02;
	}
}

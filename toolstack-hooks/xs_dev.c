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

int
xs_dev_register(struct xs_handle *xs, const struct nfv_cfg *c, int domid,
		int bdom, int dev)
{
	/* The backend domain owns its half (the domain reads it) and
	 * reads the domain's; Dom0 reads and writes everything anyway. */
	struct xs_permissions be_perm[2] = {
		{ .id = (unsigned)bdom, .perms = XS_PERM_NONE },
		{ .id = (unsigned)domid, .perms = XS_PERM_READ },
	};
	struct xs_permissions fe_perm[2] = {
		{ .id = (unsigned)domid, .perms = XS_PERM_NONE },
		{ .id = (unsigned)bdom, .perms = XS_PERM_READ },
	};
	char dir[80], be[96], fe[96], id[16];
	xs_transaction_t t;
	int rc, tries;

	dom_dir(dir, sizeof(dir), bdom, domid);
	snprintf(be, sizeof(be), "%s/%d", dir, dev);
	snprintf(fe, sizeof(fe), "/local/domain/%d/%s/%d", domid,
		 GNTS_XS_FRONTEND_DIR, dev);
	snprintf(id, sizeof(id), "%d", domid);
	for (tries = 0; tries < 16; tries++) {
		t = xs_transaction_start(xs);
		if (t == XBT_NULL)
			return -1;
		/* the domain's directory too: the backend removes it when
		 * the domain is gone */
		rc = xs_mkdir(xs, t, dir) ? 0 : -1;
		rc |= xs_set_permissions(xs, t, dir, be_perm, 1) ? 0 : -1;
		rc |= xs_mkdir(xs, t, be) ? 0 : -1;
		rc |= xs_set_permissions(xs, t, be, be_perm, 2) ? 0 : -1;
		rc |= xs_put(xs, t, be, GNTS_XS_FRONTEND, fe);
		rc |= xs_put(xs, t, be, GNTS_XS_FRONTEND_ID, id);
		rc |= xs_put(xs, t, be, GNTS_XS_NAME, c->name);
		rc |= xs_put(xs, t, be, GNTS_XS_SERVICE, c->service);
		rc |= xs_put(xs, t, be, GNTS_XS_TRUST_GROUP, c->group);
		rc |= xs_put(xs, t, be, GNTS_XS_STATE, gnts_xb_state_str(GNTS_XB_INITIALISING));
		rc |= xs_mkdir(xs, t, fe) ? 0 : -1;
		rc |= xs_set_permissions(xs, t, fe, fe_perm,
					 bdom != 0 ? 2 : 1) ? 0 : -1;
		rc |= xs_put(xs, t, fe, GNTS_XS_BACKEND, be);
		snprintf(id, sizeof(id), "%d", bdom);
		rc |= xs_put(xs, t, fe, GNTS_XS_BACKEND_ID, id);
		snprintf(id, sizeof(id), "%d", domid);
		rc |= xs_put(xs, t, fe, GNTS_XS_STATE, gnts_xb_state_str(GNTS_XB_INITIALISING));
		if (xs_transaction_end(xs, t, rc != 0))
			return rc;
		if (errno != EAGAIN)
			return -1;
	}
	return -1;
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

int
xs_dev_suspend(struct xs_handle *xs, int domid, int bdom, int n,
	       const char *what)
{
	char dir[80], path[128];
	xs_transaction_t t;
	int i, rc, tries;

	dom_dir(dir, sizeof(dir), bdom, domid);
	for (tries = 0; tries < 16; tries++) {
		t = xs_transaction_start(xs);
		if (t == XBT_NULL)
			return -1;
		for (i = 0, rc = 0; i < n; i++) {
			snprintf(path, sizeof(path), "%s/%d/%s", dir, i,
				 GNTS_XS_SUSPEND);
			if (what != NULL)
				rc |= xs_write(xs, t, path, what,
					       (unsigned)strlen(what)) ? 0 : -1;
			else
				(void)xs_rm(xs, t, path);
		}
		if (xs_transaction_end(xs, t, rc != 0))
			return rc;
		if (errno != EAGAIN)
			return -1;
	}
	return -1;
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

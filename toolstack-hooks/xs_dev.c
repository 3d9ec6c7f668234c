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

int
xs_dev_register(struct xs_handle *xs, const struct nfv_cfg *c, int domid,
		int dev)
{
	struct xs_permissions be_perm[2] = {
		{ .id = 0, .perms = XS_PERM_NONE },
		{ .id = (unsigned)domid, .perms = XS_PERM_READ },
	};
	struct xs_permissions fe_perm[1] = {
		{ .id = (unsigned)domid, .perms = XS_PERM_NONE },
	};
	char be[96], fe[96], id[16];
	xs_transaction_t t;
	int rc, tries;

	snprintf(be, sizeof(be), "%s/%d/%d", GNTS_XS_BACKEND_ROOT, domid, dev);
	snprintf(fe, sizeof(fe), "/local/domain/%d/%s/%d", domid,
		 GNTS_XS_FRONTEND_DIR, dev);
	snprintf(id, sizeof(id), "%d", domid);
	for (tries = 0; tries < 16; tries++) {
		t = xs_transaction_start(xs);
		if (t == XBT_NULL)
			return -1;
		rc = xs_mkdir(xs, t, be) ? 0 : -1;
		rc |= xs_set_permissions(xs, t, be, be_perm, 2) ? 0 : -1;
		rc |= xs_put(xs, t, be, GNTS_XS_FRONTEND, fe);
		rc |= xs_put(xs, t, be, GNTS_XS_FRONTEND_ID, id);
		rc |= xs_put(xs, t, be, GNTS_XS_NAME, c->name);
		rc |= xs_put(xs, t, be, GNTS_XS_SERVICE, c->service);
		rc |= xs_put(xs, t, be, GNTS_XS_TRUST_GROUP, c->group);
		rc |= xs_put(xs, t, be, GNTS_XS_STATE, gnts_xb_state_str(GNTS_XB_INITIALISING));
		rc |= xs_mkdir(xs, t, fe) ? 0 : -1;
		rc |= xs_set_permissions(xs, t, fe, fe_perm, 1) ? 0 : -1;
		rc |= xs_put(xs, t, fe, GNTS_XS_BACKEND, be);
		rc |= xs_put(xs, t, fe, GNTS_XS_BACKEND_ID, "0");
		rc |= xs_put(xs, t, fe, GNTS_XS_STATE, gnts_xb_state_str(GNTS_XB_INITIALISING));
		if (xs_transaction_end(xs, t, rc != 0))
			return rc;
		if (errno != EAGAIN)
			return -1;
	}
	return -1;
}

int
xs_dev_wait_core(struct xs_handle *xs, int domid, int n, double timeout)
{
	struct timespec ts = { 0, 20000000 };
	double waited = 0;
	char path[160], *v;
	unsigned len;
	int dev, ready;

	for (;;) {
		ready = 0;
		for (dev = 0; dev < n; dev++) {
			snprintf(path, sizeof(path), "%s/%d/%d/%s",
				 GNTS_XS_BACKEND_ROOT, domid, dev,
				 GNTS_XS_STATE);
			v = xs_read(xs, XBT_NULL, path, &len);
			if (v != NULL && strcmp(v, gnts_xb_state_str(
					GNTS_XB_CLOSED)) == 0) {
				free(v);
				snprintf(path, sizeof(path), "%s/%d/%d/%s",
					 GNTS_XS_BACKEND_ROOT, domid, dev,
					 GNTS_XS_ERROR);
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
			    "running with --backend xen?)", timeout);
			return -1;
		}
		nanosleep(&ts, NULL);
		waited += 0.02;
	}
}

void
xs_dev_unregister(struct xs_handle *xs, int domid)
{
	char path[96];

	snprintf(path, sizeof(path), "%s/%d", GNTS_XS_BACKEND_ROOT, domid);
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


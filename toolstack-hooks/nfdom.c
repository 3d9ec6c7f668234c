/* SPDX-License-Identifier: BSD-3-Clause */
/* An NF domain's devices handed to xnv-core (nfdom.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "nfdom.h"
#include "xl_run.h"
#include "xs_dev.h"

int
nfdom_start(struct xs_handle *xs, const struct nfv_cfg *c, int domid,
	    int bdom, double timeout, int keep)
{
	int i, rc = domid < 0 ? -1 : 0;
	char id[16];

	/* From here on by domid: a name could meanwhile name another. */
	snprintf(id, sizeof(id), "%d", domid);
	if (rc < 0)
		ERR("xl made no domain named %s", c->name);
	for (i = 0; rc == 0 && i < c->instances; i++)
		if ((rc = xs_dev_register(xs, c, domid, bdom, i)) < 0)
			ERR("cannot write XenStore nodes of device %d: %s", i,
			    strerror(errno));
	if (rc == 0)
		rc = xs_dev_wait_core(xs, domid, bdom, c->instances, timeout);
	if (rc == 0 && xl_simple("unpause", id) != 0) {
		ERR("xl unpause %s (domid %d) failed", c->name, domid);
		rc = -1;
	}
	if (rc < 0 && domid > 0) {
		xs_dev_unregister(xs, domid, bdom);
		if (!keep)
			(void)xl_simple("destroy", id);
	}
	if (rc < 0 && keep && domid > 0)
		ERR("domain %s (domid %d) left paused, without NF devices: "
		    "xnv-xl register %s once xnv-core can take them, or xl "
		    "destroy %s", c->name, domid, c->name, c->name);
	else if (rc < 0)
		ERR("domain %s destroyed", c->name);
	return rc;
}

/* The domid of nfv_backend's domain; -1 said why, before any domain is
 * made. */
static int
backend_domid(const struct nfv_cfg *c)
{
	int bdom = xl_domid(c->backend);

	if (bdom < 0)
		ERR("nfv_backend = \"%s\": no domain of that name (start the "
		    "driver domain and its xnv-core first); no domain created",
		    c->backend);
	return bdom;
}

/* Let driver domain @p bdom see domains die: its core forgets an NF
 * domain's devices on @releaseDomain, as Dom0's does, and xenstored
 * tells only Dom0 and whom Dom0 lets read that node.  0, or -1 said why. */
static int
allow_release(struct xs_handle *xs, const struct nfv_cfg *c, int bdom)
{
	if (bdom > 0 && xs_dev_allow_release(xs, bdom) < 0) {
		ERR("cannot let domain %s (%d) watch @releaseDomain: %s; no "
		    "domain created", c->backend, bdom, strerror(errno));
		return -1;
	}
	return 0;
}

struct xs_handle *
nfdom_open(const struct nfv_cfg *c, int *bdom)
{
	struct xs_handle *xs;

	*bdom = 0;
	if (c->backend[0] != '\0' && (*bdom = backend_domid(c)) < 0)
		return NULL;
	xs = xs_open(0);
	if (xs == NULL) {
		ERR("cannot connect to XenStore: %s (run in Dom0 as root)",
		    strerror(errno));
		return NULL;
	}
	if (allow_release(xs, c, *bdom) < 0) {
		xs_close(xs);
		return NULL;
	}
	return xs;
}

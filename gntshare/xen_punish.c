/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * xen backend, Dom0 side: pausing or destroying a domain the core found
 * hostile ([core] on_hostile = pause | destroy), through libxl: the calls
 * `xl pause` and `xl destroy` make, so the toolstack's view (xl list,
 * XenStore, backends) stays whole.  Only Dom0 can: a core in a driver
 * domain says so instead.  Runs in the control thread (srv.c
 * queues it), never on the data path; the libxl context is made on
 * first use.
 */
#include <errno.h>
#include <stdio.h>

#include <libxl.h>

#include "backends.h"
#include "xen_server_pvt.h"

static libxl_ctx *ctx;
static xentoollog_logger_stdiostream *lg;

static int
open_ctx(void)
{
	if (ctx != NULL)
		return 0;
	lg = xtl_createlogger_stdiostream(stderr, XTL_ERROR, 0);
	if (lg == NULL)
		return -ENOMEM;
	if (libxl_ctx_alloc(&ctx, LIBXL_VERSION, 0,
			    (xentoollog_logger *)lg) != 0) {
		ctx = NULL;
		xtl_logger_destroy((xentoollog_logger *)lg);
		lg = NULL;
		return -EIO;
	}
	return 0;
}

void
gnts_xen_punish(void *impl, uint32_t domid, enum gnts_punish how,
		const char *why)
{
	const char *verb = how == GNTS_PUNISH_PAUSE ? "pause" : "destroy";
	const struct gnts_xen_server *s = impl;
	int rc;

	if (domid == 0 || domid > GNTS_XEN_MAX_DOMID) {
		gnts_log(GNTS_LOG_ERR, "will not %s domain %u: not a guest",
			 verb, domid);
		return;
	}
	if (s != NULL && s->self != 0) {
		gnts_log(GNTS_LOG_ERR, "cannot %s Xen domain %u (%s): this core "
			 "runs in driver domain %u, and only Dom0's toolstack "
			 "can (the domain stays refused)", verb, domid, why,
			 s->self);
		return;
	}
	if (open_ctx() < 0) {
		gnts_log(GNTS_LOG_ERR, "cannot %s Xen domain %u (%s): no libxl "
			 "context (is this Dom0 with the Xen tools?)", verb,
			 domid, why);
		return;
	}
	rc = how == GNTS_PUNISH_PAUSE ?
	     libxl_domain_pause(ctx, domid, NULL) :
	     libxl_domain_destroy(ctx, domid, NULL);
	if (rc != 0)
		gnts_log(GNTS_LOG_ERR, "cannot %s Xen domain %u (%s): libxl "
			 "error %d", verb, domid, why, rc);
	else if (how == GNTS_PUNISH_PAUSE)
		gnts_log(GNTS_LOG_WARNING, "Xen domain %u paused (xl unpause "
			 "%u resumes it, xl destroy %u ends it): %s", domid,
			 domid, domid, why);
	else
		gnts_log(GNTS_LOG_WARNING, "Xen domain %u destroyed: %s",
			 domid, why);
}

void
gnts_xen_punish_close(void)
{
	if (ctx != NULL)
		libxl_ctx_free(ctx);
	if (lg != NULL)
		xtl_logger_destroy((xentoollog_logger *)lg);
	ctx = NULL;
	lg = NULL;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* libgntshare internals: the xen backend's Dom0 side, shared by
 * xen_server.c (watches, states, attach/detach) and xen_publish.c (the
 * refs and geometry an attached guest reads). */
#ifndef GNTSHARE_XEN_SERVER_PVT_H
#define GNTSHARE_XEN_SERVER_PVT_H

#include <stddef.h>
#include <stdint.h>

#include <xenstore.h>

#include "backends.h"
#include "gntshare/xen.h"

#define MAX_DEVS 256u
#define VAL_MAX  4096u		/* XenStore value limit */
#define ERR_MAX  512u		/* a refusal: may name limits and knobs */

struct xdev {
	int used;
	int fresh;		/* first seen by this server: re-check it */
	int attached;
	uint16_t domid;
	uint8_t devid;
	gnts_peer_t dom;
	struct gnts_region *dir;	/* directory pages of the pool refs */
	char be[80];
	char fe[96];
	int seen;
};

struct gnts_xen_server {
	struct xs_handle *xs;
	struct gnts_srv_cb cb;
	void *ctx;
	int dirty;
	struct xdev devs[MAX_DEVS];
};

/* Write @p dir/@p node = printf(@p fmt, ...) in transaction @p t.
 * 0, or -E2BIG (longer than a XenStore value) / -errno. */
int gnts_xs_write(struct gnts_xen_server *s, xs_transaction_t t,
		  const char *dir, const char *node, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

/* Grant @p d its pool directory and publish the reply @p rsp (refs,
 * geometry, @p name, answering request @p rid), Connected, in one
 * transaction.  0, or -errno with one line in @p err. */
int gnts_xen_publish(struct gnts_xen_server *s, struct xdev *d,
		     const struct gnts_attach_rsp *rsp, const char *name,
		     const char *rid, char *err, size_t errlen);

/* Refuse request @p rid ("": none named) of @p d: error = @p why,
 * request-id, state Closed, in one transaction.  0 or -EIO. */
int gnts_xen_answer_closed(struct gnts_xen_server *s, struct xdev *d,
			   const char *rid, const char *why);

/* Pause or destroy @p domid through libxl, logged (xen_punish.c). */
void gnts_xen_punish(void *impl, uint32_t domid, enum gnts_punish how,
		     const char *why);
/* Free the libxl context (at close). */
void gnts_xen_punish_close(void);

#endif

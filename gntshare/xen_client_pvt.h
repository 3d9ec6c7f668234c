/* SPDX-License-Identifier: BSD-3-Clause */
/* libgntshare internals: the xen backend's guest (NF) side, shared by
 * xen_client.c (attach, map, liveness, close) and xen_answer.c (XenStore
 * reads, the core's answer to a request). */
#ifndef GNTSHARE_XEN_CLIENT_PVT_H
#define GNTSHARE_XEN_CLIENT_PVT_H

#include <stddef.h>
#include <stdint.h>

#include <xengnttab.h>
#include <xenstore.h>

#include "backends.h"
#include "gntshare/proto.h"

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

/* CLOCK_MONOTONIC_COARSE in ns. */
uint64_t gnts_xc_now_ns(void);
/* @p dir/@p node in transaction @p t (XBT_NULL: none): the value (free
 * it) and its length in *@p len, or NULL. */
char *gnts_xc_get(struct gnts_xen_client *c, xs_transaction_t t,
		  const char *dir, const char *node, unsigned *len);
/* The same into @p buf (cut to @p len - 1).  0 or -ENOENT. */
int gnts_xc_get_str(struct gnts_xen_client *c, const char *dir,
		    const char *node, char *buf, size_t len);
/* A decimal number there, or -1 (missing or not a number). */
long gnts_xc_get_num(struct gnts_xen_client *c, const char *dir,
		     const char *node);

/* Wait until the backend answered request @p rid: 0 connected, else
 * -ECONNREFUSED (the core's refusal in @p err) or -ETIMEDOUT. */
int gnts_xc_wait_answer(struct gnts_xen_client *c, const char *rid,
			unsigned timeout_ms, char *err, size_t errlen);
/* The answer's numbers into @p rsp (and the page counts into @p c). */
int gnts_xc_read_geometry(struct gnts_xen_client *c,
			  struct gnts_attach_rsp *rsp, char *err,
			  size_t errlen);
/* The ring refs and, through the directory pages, the pool refs. */
int gnts_xc_read_refs(struct gnts_xen_client *c, char *err, size_t errlen);

#endif

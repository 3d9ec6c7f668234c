/* SPDX-License-Identifier: BSD-3-Clause */
/* An NF domain's devices handed to xnv-core: by create, restore,
 * migrate and register (xnv-xl.c, suspend.c). */
#ifndef XNV_XL_NFDOM_H
#define XNV_XL_NFDOM_H

#include <xenstore.h>

#include "nfv_cfg.h"

/** Register the NF devices of the paused domain @p domid (-1: xl made
 *  none) with xnv-core in domain @p bdom, wait up to @p timeout s for its
 *  answer, unpause.  0, or -1 said why, with the domain destroyed (a new
 *  one: create), or with @p keep left paused without devices (a restored
 *  or migrated one: its only copy). */
int nfdom_start(struct xs_handle *xs, const struct nfv_cfg *c, int domid,
		int bdom, double timeout, int keep);

/** XenStore for registering @p c's devices, the serving domain's domid
 *  in *@p bdom (0 for Dom0, else nfv_backend's, which must run), that
 *  domain allowed to watch @releaseDomain.  NULL said why (one line). */
struct xs_handle *nfdom_open(const struct nfv_cfg *c, int *bdom);

#endif

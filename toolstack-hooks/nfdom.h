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

/** The domid of @p c's nfv_backend domain; -1 said why (one line). */
int nfdom_backend(const struct nfv_cfg *c);

/** Let driver domain @p bdom (0: nothing to do) watch @releaseDomain.
 *  0, or -1 said why. */
int nfdom_allow_release(struct xs_handle *xs, const struct nfv_cfg *c,
			int bdom);

#endif

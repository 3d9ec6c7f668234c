/* SPDX-License-Identifier: BSD-3-Clause */
/* libgntshare internals: grants through the gntshare kernel module (xen
 * backend).  All of them do nothing in host mode (module not enabled). */
#ifndef GNTSHARE_KGRANT_H
#define GNTSHARE_KGRANT_H

#include "gntshare/gntshare.h"

/** 1 once gnts_kgrant_enable() succeeded. */
int gnts_kgrant_on(void);

/** Pin and grant every 4 KiB frame of @p r to GNTS_XEN_DOMID(g->dom);
 *  fills g->handle, g->refs, g->n_refs.  0 in host mode. */
int gnts_kgrant_grant(const struct gnts_region *r, struct gnts_grant *g);

/** End @p g.  @return frames the domain still maps (kept pinned by the
 *  module and watched by gnts_domain_busy()); 0 in host mode. */
int gnts_kgrant_revoke(struct gnts_grant *g);

#endif

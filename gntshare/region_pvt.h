/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libgntshare internals: the grants of a region, and the grant engine that
 * makes them real.  region.c keeps the process-wide grant table and calls
 * the engine installed at enable time; it never names an engine itself:
 *
 *   memfd   (default; host backend) a grant is an entry in the table, the
 *           region's fd goes only to grantees (host_server.c);
 *   kgrant  (xen, gntshare module, kgrant.c) pins and grants every frame;
 *   galloc  (xen, gntalloc fallback, galloc.c) makes new pages already
 *           granted to one domain: regions are made *for* a peer.
 */
#ifndef GNTSHARE_REGION_PVT_H
#define GNTSHARE_REGION_PVT_H

#include <stddef.h>
#include <stdint.h>

#include "gntshare/gntshare.h"

struct gnts_grant {
	gnts_peer_t peer;
	uint8_t readonly;
	/* engines with refs: a handle and one ref per 4 KiB frame */
	uint32_t handle;
	uint32_t n_refs;
	uint32_t *refs;
};

struct gnts_grant_engine {
	const char *name;
	/* Make grant @p g of @p r real (fill handle/refs).  NULL: a table
	 * entry is all a grant is.  0 or -errno. */
	int (*grant)(const struct gnts_region *r, struct gnts_grant *g);
	/* End @p g.  @return frames the peer still maps (kept by the engine
	 * and counted by busy()).  NULL: 0. */
	int (*revoke)(struct gnts_grant *g);
	/* Frames of ended grants still mapped by @p peer, or with
	 * @p whole_domain by every peer of its domain (peer_dom).  NULL: 0. */
	unsigned (*busy)(gnts_peer_t peer, int whole_domain);
	/* Regions made for one peer: fill r->va, size, page_size, fd and
	 * its one grant (r->grants[0], r->n_grants = 1).  NULL: such a
	 * region is gnts_region_create() + gnts_region_grant(), and
	 * regions are shareable. */
	int (*create_for)(struct gnts_region *r, size_t size, gnts_peer_t peer,
			  int readonly, char *err, size_t errlen);
	/* Free what create_for() made. */
	void (*destroy)(struct gnts_region *r);
	/* Pages held, for statistics; NULL: not counted. */
	size_t (*pages)(void);
	/* What a peer id means to the hypervisor (for messages). */
	unsigned (*peer_dom)(gnts_peer_t peer);
	/* Appended to a grant refused with -ENOSPC. */
	const char *full_hint;
};

/*
 * The grant table's lock (region.c).  Every gnts_region_* call takes it;
 * a caller in another thread than the regions' owner holds it while it
 * uses a pointer from gnts_region_find() / gnts_region_refs().
 */
void gnts_region_lock(void);
void gnts_region_unlock(void);

/**
 * A new fd of region @p ref for @p dom (a MAP, host backend), made under
 * the lock: read-only (a fresh open file description) if @p readonly.
 * @return the fd and *size, or -ENOENT (no such region granted to @p dom),
 *   -EACCES (granted read-only, asked writable, or no fd), -errno.
 */
int gnts_region_open_for(gnts_ref_t ref, gnts_peer_t dom, int readonly,
			 size_t *size);

/** The name of region @p ref ("none such"), for the owner's log only:
 *  a peer is never told whose region it asked for.  @return @p buf. */
const char *gnts_region_name(gnts_ref_t ref, char *buf, size_t len);

/** Use @p e from now on (process-wide); NULL: back to memfd. */
void gnts_grant_engine_install(const struct gnts_grant_engine *e);

#endif

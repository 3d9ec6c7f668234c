/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libgntshare internals: the gntalloc fallback of the xen backend
 * (galloc.c).  region.c reaches it only through gnts_galloc_ops, which
 * gnts_galloc_enable() installs, so programs that never enable it (host
 * mode, unit tests, benchmarks) need not link libxengnttab's gntshr part.
 */
#ifndef GNTSHARE_GALLOC_H
#define GNTSHARE_GALLOC_H

#include <stddef.h>

#include "gntshare/gntshare.h"

struct gnts_galloc_ops {
	/* New zeroed pages for @p r, at least @p size bytes, granted to
	 * GNTS_XEN_DOMID(@p dom) and mapped here: fills r->va, size,
	 * page_size, fd (-1), galloc and its one grant.  0 or -errno with
	 * one line in @p err. */
	int (*share)(struct gnts_region *r, size_t size, gnts_domid_t dom,
		     int readonly, char *err, size_t errlen);
	/* Drop our mapping of @p r and free its grant's refs array. */
	void (*unshare)(struct gnts_region *r);
};

/* Set by gnts_galloc_enable(); NULL while the fallback is off. */
extern const struct gnts_galloc_ops *gnts_galloc_ops;

/**
 * Grants for the xen backend: the gntshare module when it is loaded,
 * else gntalloc (logged once, with why the module could not be used).
 * @return 0, or a negative errno with one line in @p err (the module
 *   speaks another ABI, or neither it nor xen-gntalloc is loaded).
 */
int gnts_xen_grants_enable(char *err, size_t errlen);

/**
 * The line for a failed gntalloc share of @p pages for region @p name to
 * domain @p domid (errno @p e), knowing this process holds @p held
 * gntalloc pages and xen-gntalloc's limit is @p limit (-1: unknown):
 * the numbers, and the knobs that bound them.
 */
void gnts_galloc_explain(char *buf, size_t len, const char *name,
			 size_t pages, unsigned domid, int e, size_t held,
			 long limit);

#endif

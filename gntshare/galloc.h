/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libgntshare internals: the gntalloc fallback of the xen backend
 * (galloc.c).  region.c reaches it only through the grant engine that
 * gnts_galloc_enable() installs (region_pvt.h), so programs that never
 * enable it (host mode, unit tests, benchmarks) need not link
 * libxengnttab's gntshr part.
 */
#ifndef GNTSHARE_GALLOC_H
#define GNTSHARE_GALLOC_H

#include <stddef.h>

#include "gntshare/gntshare.h"

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

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * xen backend without the gntshare module: grants through gntalloc
 * (xen-gntalloc, libxengnttab's xengntshr_*).
 *
 * gntalloc cannot grant pages we already have, nor one page to two
 * domains: it allocates new kernel pages, grants each to one domid and
 * maps them here.  So every region made for a domain
 * (gnts_region_create_for()) is one gntalloc allocation for that domain,
 * and no region is shared (gnts_region_shareable() is 0): the core gives
 * each NF a pool of its own and copies packets between pools.
 *
 * Lifetime: xengntshr_share_pages() drops gntalloc's own hold on the
 * pages at once, so our mapping is their only local user.
 * xengntshr_unshare() unmaps it; the kernel then ends each page's grant,
 * or, for a page the domain still maps, defers the end and keeps the page
 * until the domain unmaps it or dies (gnttab_end_foreign_access).  The
 * page is never handed back to the kernel while a domain can reach it;
 * the gntalloc `limit` counts it free at once, Dom0's grant table entry
 * stays used until the deferred end.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xentoollog.h>
#include <xengnttab.h>

#include "galloc.h"
#include "gntshare/kmod.h"
#include "gntshare/xen.h"
#include "region_pvt.h"

#define GNTALLOC_DEVICE "/dev/xen/gntalloc"
#define GNTALLOC_LIMIT  "/sys/module/xen_gntalloc/parameters/limit"

static xengntshr_handle *xgs;
static size_t held;		/* pages this process holds through gntalloc */

/* libxengnttab's own messages ("ioctl failed") say less than ours. */
static void
quiet_vmessage(struct xentoollog_logger *l, xentoollog_level level,
	       int errnoval, const char *context, const char *format,
	       va_list al)
{
	(void)l;
	(void)level;
	(void)errnoval;
	(void)context;
	(void)format;
	(void)al;
}

static void
quiet_destroy(struct xentoollog_logger *l)
{
	(void)l;
}

static xentoollog_logger quiet = {
	.vmessage = quiet_vmessage,
	.destroy = quiet_destroy,
};

/* xen-gntalloc's `limit` module parameter, -1 if it cannot be read. */
static long
gntalloc_limit(void)
{
	FILE *f = fopen(GNTALLOC_LIMIT, "r");
	long v = -1;

	if (f == NULL)
		return -1;
	if (fscanf(f, "%ld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

void
gnts_galloc_explain(char *buf, size_t len, const char *name, size_t pages,
		    unsigned domid, int e, size_t held_pages, long limit)
{
	int over = limit >= 0 && held_pages + pages > (size_t)limit;
	char lim[32];

	if (e != ENOSPC && e != ENOMEM) {
		snprintf(buf, len, "gntalloc cannot grant %zu page%s (region "
			 "%s) to domain %u: %s", pages, pages == 1 ? "" : "s",
			 name, domid, strerror(e));
		return;
	}
	if (limit >= 0)
		snprintf(lim, sizeof(lim), "%ld page%s", limit,
			 limit == 1 ? "" : "s");
	else
		snprintf(lim, sizeof(lim), "unknown");
	snprintf(buf, len, "gntalloc cannot grant %zu page%s (region %s) to "
		 "domain %u: %s; this process holds %zu, xen-gntalloc `limit` "
		 "is %s: %s (%s, or modprobe xen-gntalloc limit=N)%s",
		 pages, pages == 1 ? "" : "s", name, domid, strerror(e),
		 held_pages, lim,
		 over ? "raise that module parameter" :
		 "Dom0's grant table is likely full: raise Xen's "
		 "gnttab_max_frames (one entry per page, 512 per frame), or "
		 "the `limit` if other programs use gntalloc too",
		 GNTALLOC_LIMIT,
		 over ? ", and Xen's gnttab_max_frames if Dom0's grant table "
		 "cannot hold them (one entry per page, 512 per frame)" : "");
}

static int
share(struct gnts_region *r, size_t size, gnts_peer_t dom, int readonly,
      char *err, size_t errlen)
{
	size_t pages = (size + GNTS_XEN_PAGE - 1) / GNTS_XEN_PAGE;
	unsigned domid = GNTS_XEN_DOMID(dom);
	struct gnts_grant *g = &r->grants[0];
	uint32_t *refs;
	void *va;
	int e;

	if (pages == 0 || pages > INT_MAX / GNTS_XEN_PAGE) {
		gnts_galloc_explain(err, errlen, r->name, pages, domid, E2BIG,
				    held, -1);
		return -E2BIG;
	}
	refs = calloc(pages, sizeof(*refs));
	if (refs == NULL) {
		gnts_galloc_explain(err, errlen, r->name, pages, domid, ENOMEM,
				    held, gntalloc_limit());
		return -ENOMEM;
	}
	errno = 0;
	va = xengntshr_share_pages(xgs, domid, (int)pages, refs, !readonly);
	if (va == NULL) {
		e = errno != 0 ? errno : ENOMEM;
		gnts_galloc_explain(err, errlen, r->name, pages, domid, e, held,
				    gntalloc_limit());
		free(refs);
		return -e;
	}
	r->va = va;
	r->size = pages * GNTS_XEN_PAGE;
	r->page_size = GNTS_SMALL_PAGE;
	r->fd = -1;
	memset(g, 0, sizeof(*g));
	g->peer = dom;
	g->readonly = readonly != 0;
	g->refs = refs;
	g->n_refs = (uint32_t)pages;
	r->n_grants = 1;
	held += pages;
	return 0;
}

static void
unshare(struct gnts_region *r)
{
	size_t pages = r->size / GNTS_XEN_PAGE;

	(void)xengntshr_unshare(xgs, r->va, (uint32_t)pages);
	held -= pages;
}

static size_t
pages_held(void)
{
	return held;
}

static unsigned
peer_domid(gnts_peer_t peer)
{
	return GNTS_XEN_DOMID(peer);
}

static const struct gnts_grant_engine galloc_engine = {
	.name = "gntalloc",
	.create_for = share,
	.destroy = unshare,
	.pages = pages_held,
	.peer_dom = peer_domid,
};

int
gnts_galloc_enable(char *err, size_t errlen)
{
	int e;

	if (xgs != NULL)
		return 0;
	if (strcmp(gnts_grant_engine_name(), "memfd") != 0) {
		snprintf(err, errlen, "grants go through %s already",
			 gnts_grant_engine_name());
		return -EBUSY;
	}
	errno = 0;
	xgs = xengntshr_open(&quiet, 0);
	if (xgs == NULL) {
		e = errno != 0 ? errno : ENOENT;
		snprintf(err, errlen, "cannot open %s: %s (load xen-gntalloc: "
			 "modprobe xen-gntalloc limit=N)", GNTALLOC_DEVICE,
			 strerror(e));
		return -e;
	}
	gnts_grant_engine_install(&galloc_engine);
	return 0;
}

int
gnts_xen_grants_enable(char *err, size_t errlen)
{
	char kerr[GNTS_ERR_LEN];
	int krc, rc;

	krc = gnts_kgrant_enable(kerr, sizeof(kerr));
	if (krc != -ENOENT && krc != -ENODEV && krc != -ENXIO) {
		if (krc < 0)	/* there, but unusable: say so, no fallback */
			snprintf(err, errlen, "%s", kerr);
		return krc;
	}
	rc = gnts_galloc_enable(err, errlen);
	if (rc < 0) {
		snprintf(err, errlen, "neither the gntshare module (%s: %s) nor "
			 "xen-gntalloc (%s: %s) is loaded: modprobe gntshare "
			 "(see gntshare/kmod/README.md) for one pool per trust "
			 "group, or modprobe xen-gntalloc limit=N for one pool "
			 "per NF", GNTSHARE_KMOD_DEVICE, strerror(-krc),
			 GNTALLOC_DEVICE, strerror(-rc));
		return rc;
	}
	gnts_log(GNTS_LOG_WARNING, "gntshare module not loaded (%s: %s): "
		 "falling back to gntalloc, one pool per NF domain; packets "
		 "crossing NF domains of one trust group are copied",
		 GNTSHARE_KMOD_DEVICE, strerror(-krc));
	return 0;
}

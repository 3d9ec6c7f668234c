/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * xen backend grants: the gntshare kernel module pins a region's pages and
 * grants each 4 KiB frame to one domid (see include/gntshare/kmod.h).
 * Revoked grants whose frames a domain still maps are kept in a list and
 * polled by busy() (gnts_region_busy()) until the module reports them
 * done.  Installed as region.c's grant engine by gnts_kgrant_enable().
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "gntshare/kmod.h"
#include "gntshare/xen.h"
#include "region_pvt.h"

#define MAX_BUSY 1024u

struct busy_grant {
	uint32_t handle;
	gnts_peer_t dom;
};

static int kfd = -1;
static struct busy_grant busy[MAX_BUSY];
static unsigned n_busy;

static unsigned
peer_domid(gnts_peer_t peer)
{
	return GNTS_XEN_DOMID(peer);
}

static int kgrant_grant(const struct gnts_region *r, struct gnts_grant *g);
static int kgrant_revoke(struct gnts_grant *g);
static unsigned kgrant_busy(gnts_peer_t dom, int whole_domain);

static const struct gnts_grant_engine kgrant_engine = {
	.name = "kgrant",
	.grant = kgrant_grant,
	.revoke = kgrant_revoke,
	.busy = kgrant_busy,
	.peer_dom = peer_domid,
	.full_hint = " (Dom0's grant table is full: raise Xen's "
		     "gnttab_max_frames)",
};

int
gnts_kgrant_enable(char *err, size_t errlen)
{
	struct gntshare_ioc_version v;
	int fd;

	if (kfd >= 0)
		return 0;
	fd = open(GNTSHARE_KMOD_DEVICE, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;

		snprintf(err, errlen, "cannot open %s: %s (load the gntshare "
			 "module: modprobe gntshare, see gntshare/kmod/README.md)",
			 GNTSHARE_KMOD_DEVICE, strerror(e));
		return -e;
	}
	memset(&v, 0, sizeof(v));
	if (ioctl(fd, GNTSHARE_IOC_VERSION, &v) < 0 ||
	    v.magic != GNTSHARE_KMOD_MAGIC || v.abi != GNTSHARE_KMOD_ABI ||
	    v.page_size != GNTS_XEN_PAGE) {
		snprintf(err, errlen, "%s speaks ABI %u (magic %#x), this "
			 "build needs ABI %u: rebuild the module from this tree",
			 GNTSHARE_KMOD_DEVICE, v.abi, v.magic,
			 GNTSHARE_KMOD_ABI);
		close(fd);
		return -EPROTO;
	}
	kfd = fd;
	gnts_grant_engine_install(&kgrant_engine);
	return 0;
}

static int
kgrant_grant(const struct gnts_region *r, struct gnts_grant *g)
{
	struct gntshare_ioc_grant a;
	size_t pages = r->size / GNTS_XEN_PAGE;
	uint32_t *refs;

	if (kfd < 0)
		return 0;
	if (pages == 0 || pages > GNTSHARE_KMOD_MAX_PAGES)
		return -E2BIG;
	refs = calloc(pages, sizeof(*refs));
	if (refs == NULL)
		return -ENOMEM;
	memset(&a, 0, sizeof(a));
	a.addr = (uintptr_t)r->va;
	a.refs = (uintptr_t)refs;
	a.nr_pages = (uint32_t)pages;
	a.refs_count = (uint32_t)pages;
	a.domid = GNTS_XEN_DOMID(g->peer);
	a.flags = g->readonly ? GNTSHARE_GRANT_READONLY : 0;
	if (ioctl(kfd, GNTSHARE_IOC_GRANT, &a) < 0) {
		int e = errno;

		if (e == ENOSPC)
			gnts_log(GNTS_LOG_ERR, "granting region %s (%zu frames) "
				 "to domain %u: Dom0's grant table is full; "
				 "raise Xen's gnttab_max_frames (one entry per "
				 "frame per member domain, 512 per frame)",
				 r->name, pages, a.domid);
		else if (e == EDQUOT)
			gnts_log(GNTS_LOG_ERR, "granting region %s (%zu frames) "
				 "to domain %u: the gntshare module's budget of "
				 "pinned pages is used up; raise /sys/module/"
				 "gntshare/parameters/max_pinned_pages (or see "
				 "which domains keep revoked frames mapped)",
				 r->name, pages, a.domid);
		else
			gnts_log(GNTS_LOG_ERR, "granting region %s (%zu frames) "
				 "to domain %u: %s", r->name, pages, a.domid,
				 strerror(e));
		free(refs);
		return -e;
	}
	g->handle = a.handle;
	g->refs = refs;
	g->n_refs = (uint32_t)pages;
	return 0;
}

static int
kgrant_revoke(struct gnts_grant *g)
{
	struct gntshare_ioc_revoke a;

	if (kfd < 0 || g->refs == NULL)
		return 0;
	free(g->refs);
	g->refs = NULL;
	memset(&a, 0, sizeof(a));
	a.handle = g->handle;
	if (n_busy == MAX_BUSY)		/* cannot watch it: kernel's job */
		a.flags = GNTSHARE_REVOKE_FORGET;
	if (ioctl(kfd, GNTSHARE_IOC_REVOKE, &a) < 0) {
		gnts_log(GNTS_LOG_ERR, "revoking grant %u of domain %u: %s",
			 g->handle, GNTS_XEN_DOMID(g->peer), strerror(errno));
		return 0;
	}
	if (a.busy > 0 && !(a.flags & GNTSHARE_REVOKE_FORGET)) {
		busy[n_busy].handle = g->handle;
		busy[n_busy].dom = g->peer;
		n_busy++;
	}
	return (int)a.busy;
}

static unsigned
kgrant_busy(gnts_peer_t dom, int whole_domain)
{
	struct gntshare_ioc_status st;
	unsigned i = 0, total = 0;

	while (i < n_busy) {
		if (whole_domain ? GNTS_XEN_DOMID(busy[i].dom) !=
		    GNTS_XEN_DOMID(dom) : busy[i].dom != dom) {
			i++;
			continue;
		}
		memset(&st, 0, sizeof(st));
		st.handle = busy[i].handle;
		if (ioctl(kfd, GNTSHARE_IOC_STATUS, &st) < 0 ||
		    st.state == GNTSHARE_STATE_DONE) {
			busy[i] = busy[--n_busy];	/* ended (or unknown) */
			continue;
		}
		total += st.busy;
		i++;
	}
	return total;
}

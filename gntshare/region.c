/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Regions: memfds (host backend, and the xen backend with the gntshare
 * module), or gntalloc pages (the xen fallback, galloc.c), in a
 * process-wide grant table.  See include/gntshare/gntshare.h for the
 * contract.
 */

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "galloc.h"
#include "gntshare/gntshare.h"
#include "gntshare/xen.h"
#include "kgrant.h"

#ifndef MFD_HUGE_2MB
#define MFD_HUGE_2MB (21 << 26)
#endif

const struct gnts_galloc_ops *gnts_galloc_ops;
static struct gnts_region *table[GNTS_MAX_REGIONS];
static gnts_ref_t next_ref = 1;
static void (*logger)(int, const char *);

void
gnts_set_logger(void (*fn)(int level, const char *msg))
{
	logger = fn;
}

void
gnts_log(int level, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (logger != NULL)
		logger(level, buf);
	else
		fprintf(stderr, "gntshare: %s\n", buf);
}

static int
memfd_region(const char *name, size_t size, int huge)
{
	unsigned int fl = MFD_CLOEXEC;
	int fd;

	if (huge)
		fl |= MFD_HUGETLB | MFD_HUGE_2MB;
	fd = memfd_create(name, fl);
	if (fd < 0)
		return -errno;
	if (ftruncate(fd, (off_t)size) < 0) {
		int e = -errno;
		close(fd);
		return e;
	}
	return fd;
}

int
gnts_hugepages_available(void)
{
	static int known = -1;
	void *p;
	int fd;

	if (known >= 0)
		return known;
	fd = memfd_region("xnv-probe", GNTS_HUGE_PAGE, 1);
	known = 0;
	if (fd >= 0) {
		/* ftruncate succeeds without free pages; mapping and touching
		 * one page is what proves a page can be had. */
		p = mmap(NULL, GNTS_HUGE_PAGE, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_POPULATE, fd, 0);
		if (p != MAP_FAILED) {
			known = 1;
			munmap(p, GNTS_HUGE_PAGE);
		}
		close(fd);
	}
	return known;
}

static int
table_insert(struct gnts_region *r)
{
	unsigned i;

	for (i = 0; i < GNTS_MAX_REGIONS; i++) {
		if (table[i] == NULL) {
			r->ref = next_ref++;
			table[i] = r;
			return 0;
		}
	}
	return -ENOSPC;
}

int
gnts_region_create(const char *name, size_t size, unsigned flags,
		   struct gnts_region **out)
{
	static int warned;
	struct gnts_region *r;
	int huge = (flags & GNTS_F_HUGE) != 0;
	size_t page, len;
	int fd = -1, rc;
	void *va = MAP_FAILED;

	if (size == 0)
		return -EINVAL;
	r = calloc(1, sizeof(*r));
	if (r == NULL)
		return -ENOMEM;
	snprintf(r->name, sizeof(r->name), "%s", name);

	if (huge && !gnts_hugepages_available()) {
		if (flags & GNTS_F_NO_FALLBACK) {
			rc = -ENOMEM;
			goto out;
		}
		if (!warned++)
			gnts_log(GNTS_LOG_WARNING,
				 "no free 2 MiB hugepages (see /proc/sys/vm/nr_hugepages): "
				 "packet pools use 4 KiB pages");
		huge = 0;
	}
	page = huge ? GNTS_HUGE_PAGE : GNTS_SMALL_PAGE;
	len = (size + page - 1) & ~(page - 1);
	fd = memfd_region(name, len, huge);
	if (fd >= 0) {
		/* Populate now: a pool that cannot be backed fails here, at
		 * start-up, rather than with SIGBUS on the data path. */
		va = mmap(NULL, len, PROT_READ | PROT_WRITE,
			  MAP_SHARED | MAP_POPULATE, fd, 0);
	}
	if (huge && (fd < 0 || va == MAP_FAILED)) {
		if (fd >= 0)
			close(fd);
		if (flags & GNTS_F_NO_FALLBACK) {
			rc = -ENOMEM;
			goto out;
		}
		gnts_log(GNTS_LOG_WARNING,
			 "region %s: %zu MiB of hugepages not available, "
			 "using 4 KiB pages", name, len >> 20);
		huge = 0;
		page = GNTS_SMALL_PAGE;
		len = (size + page - 1) & ~(page - 1);
		fd = memfd_region(name, len, 0);
		if (fd >= 0)
			va = mmap(NULL, len, PROT_READ | PROT_WRITE,
				  MAP_SHARED | MAP_POPULATE, fd, 0);
	}
	if (fd < 0) {
		rc = fd;
		goto out;
	}
	if (va == MAP_FAILED) {
		rc = -errno;
		goto out;
	}
	r->fd = fd;
	r->va = va;
	r->size = len;
	r->page_size = page;
	rc = table_insert(r);
	if (rc == 0) {
		*out = r;
		return 0;
	}
out:
	if (va != MAP_FAILED)
		munmap(va, len);
	if (fd >= 0)
		close(fd);
	free(r);
	return rc;
}

int
gnts_region_create_for(const char *name, size_t size, unsigned flags,
		       gnts_domid_t dom, int readonly,
		       struct gnts_region **out, char *err, size_t errlen)
{
	struct gnts_region *r;
	int rc;

	if (gnts_galloc_ops == NULL) {
		rc = gnts_region_create(name, size, flags, &r);
		if (rc < 0) {
			snprintf(err, errlen, "region %s of %zu bytes: %s",
				 name, size, strerror(-rc));
			return rc;
		}
		rc = gnts_region_grant(r, dom, readonly);
		if (rc < 0) {
			snprintf(err, errlen, "granting region %s to domain "
				 "%u: %s%s", name, gnts_kgrant_on() ?
				 GNTS_XEN_DOMID(dom) : dom, strerror(-rc),
				 rc == -ENOSPC && gnts_kgrant_on() ?
				 " (Dom0's grant table is full: raise Xen's "
				 "gnttab_max_frames)" : "");
			gnts_region_destroy(r);
			return rc;
		}
		*out = r;
		return 0;
	}
	r = size != 0 ? calloc(1, sizeof(*r)) : NULL;
	if (r == NULL) {
		rc = size != 0 ? -ENOMEM : -EINVAL;
		snprintf(err, errlen, "region %s of %zu bytes: %s", name, size,
			 strerror(-rc));
		return rc;
	}
	snprintf(r->name, sizeof(r->name), "%s", name);
	rc = gnts_galloc_ops->share(r, size, dom, readonly, err, errlen);
	if (rc < 0) {
		free(r);
		return rc;
	}
	rc = table_insert(r);
	if (rc < 0) {
		snprintf(err, errlen, "region %s: the grant table holds %u "
			 "regions already", name, GNTS_MAX_REGIONS);
		gnts_region_destroy(r);
		return rc;
	}
	*out = r;
	return 0;
}

int
gnts_region_shareable(void)
{
	return gnts_galloc_ops == NULL;
}

/* End @p g (module: REVOKE) and free its refs.  @return busy frames. */
static int
end_grant(struct gnts_grant *g)
{
	int busy = gnts_kgrant_revoke(g);

	free(g->refs);
	g->refs = NULL;
	return busy;
}

void
gnts_region_destroy(struct gnts_region *r)
{
	unsigned i;

	if (r == NULL)
		return;
	for (i = 0; i < GNTS_MAX_REGIONS; i++)
		if (table[i] == r)
			table[i] = NULL;
	/* Frames a domain still maps stay pinned by the module (and out of
	 * the kernel's hands) after the munmap below, until it unmaps.
	 * gntalloc pages: the kernel ends their grant once nobody maps them
	 * (see gntshare/README.md). */
	for (i = 0; i < r->n_grants; i++)
		end_grant(&r->grants[i]);
	if (r->galloc) {
		gnts_galloc_ops->unshare(r);
	} else {
		munmap(r->va, r->size);
		close(r->fd);
	}
	free(r);
}

static int
grant_index(const struct gnts_region *r, gnts_domid_t dom)
{
	unsigned i;

	for (i = 0; i < r->n_grants; i++)
		if (r->grants[i].dom == dom)
			return (int)i;
	return -1;
}

int
gnts_region_grant(struct gnts_region *r, gnts_domid_t dom, int readonly)
{
	struct gnts_grant *g;
	int i = grant_index(r, dom), rc;

	if (r->galloc || gnts_galloc_ops != NULL)	/* made granted, or not */
		return i >= 0 && r->grants[i].readonly == (readonly != 0) ?
		       0 : -EOPNOTSUPP;
	if (i >= 0 && (r->grants[i].readonly == (readonly != 0) ||
		       !gnts_kgrant_on())) {
		r->grants[i].readonly = readonly != 0;
		return 0;
	}
	if (i >= 0) {	/* Xen: a new mode is a new grant */
		rc = gnts_region_revoke(r, dom);
		if (rc != 0)
			return rc < 0 ? rc : -EBUSY;
	}
	if (r->n_grants >= GNTS_MAX_GRANTEES)
		return -ENOSPC;
	g = &r->grants[r->n_grants];
	memset(g, 0, sizeof(*g));
	g->dom = dom;
	g->readonly = readonly != 0;
	rc = gnts_kgrant_grant(r, g);
	if (rc < 0)
		return rc;
	r->n_grants++;
	return 0;
}

int
gnts_region_revoke(struct gnts_region *r, gnts_domid_t dom)
{
	int i = grant_index(r, dom), busy;

	if (i < 0)
		return -ENOENT;
	busy = end_grant(&r->grants[i]);
	r->grants[i] = r->grants[--r->n_grants];
	return busy;
}

const uint32_t *
gnts_region_refs(const struct gnts_region *r, gnts_domid_t dom, uint32_t *n)
{
	int i = grant_index(r, dom);

	if (i < 0 || r->grants[i].refs == NULL)
		return NULL;
	*n = r->grants[i].n_refs;
	return r->grants[i].refs;
}

void
gnts_revoke_domain(gnts_domid_t dom)
{
	unsigned i;

	for (i = 0; i < GNTS_MAX_REGIONS; i++)
		if (table[i] != NULL)
			(void)gnts_region_revoke(table[i], dom);
}

struct gnts_region *
gnts_region_find(gnts_ref_t ref)
{
	unsigned i;

	if (ref == GNTS_REF_INVALID)
		return NULL;
	for (i = 0; i < GNTS_MAX_REGIONS; i++)
		if (table[i] != NULL && table[i]->ref == ref)
			return table[i];
	return NULL;
}

struct gnts_region *
gnts_region_lookup(gnts_ref_t ref, gnts_domid_t dom, int *readonly)
{
	struct gnts_region *r = gnts_region_find(ref);
	int i;

	if (r == NULL)
		return NULL;
	i = grant_index(r, dom);
	if (i < 0)
		return NULL;
	if (readonly != NULL)
		*readonly = r->grants[i].readonly;
	return r;
}

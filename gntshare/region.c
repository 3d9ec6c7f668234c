/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Regions: memfds, or pages a grant engine makes for one peer, in a
 * process-wide grant table; grants made real by the engine installed at
 * enable time (region_pvt.h).  See include/gntshare/gntshare.h for the
 * contract.
 */

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "gntshare/gntshare.h"
#include "region_pvt.h"

#ifndef MFD_HUGE_2MB
#define MFD_HUGE_2MB (21 << 26)
#endif

static const struct gnts_grant_engine memfd_engine = { .name = "memfd" };
static const struct gnts_grant_engine *engine = &memfd_engine;
static struct gnts_region *table[GNTS_MAX_REGIONS];
static gnts_ref_t next_ref = 1;
/*
 * The table and every region's grants are read by the backend's control
 * thread (a MAP, a XenStore publish) while the core's data-path thread
 * makes and ends regions (attach, detach).  One lock orders them;
 * recursive because public calls nest (create_for -> grant -> destroy).
 * Never taken on a per-packet path.
 */
static pthread_mutex_t region_mu = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;

void
gnts_region_lock(void)
{
	pthread_mutex_lock(&region_mu);
}

void
gnts_region_unlock(void)
{
	pthread_mutex_unlock(&region_mu);
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

void
gnts_grant_engine_install(const struct gnts_grant_engine *e)
{
	engine = e != NULL ? e : &memfd_engine;
}

const char *
gnts_grant_engine_name(void)
{
	return engine->name;
}

long
gnts_grant_engine_pages(void)
{
	return engine->pages != NULL ? (long)engine->pages() : -1;
}

unsigned
gnts_region_busy(gnts_peer_t peer)
{
	unsigned n;

	gnts_region_lock();
	n = engine->busy != NULL ? engine->busy(peer, 0) : 0;
	gnts_region_unlock();
	return n;
}

/* The hypervisor's domain of @p peer (the peer itself where a domain
 * holds one peer: memfd). */
static unsigned
domain_of(gnts_peer_t peer)
{
	return engine->peer_dom != NULL ? engine->peer_dom(peer) : peer;
}

unsigned
gnts_domain_frames(gnts_peer_t peer, unsigned *busy)
{
	unsigned dom = domain_of(peer), n = 0, b, i, j;

	gnts_region_lock();
	for (i = 0; i < GNTS_MAX_REGIONS; i++) {
		const struct gnts_region *r = table[i];

		for (j = 0; r != NULL && j < r->n_grants; j++)
			if (domain_of(r->grants[j].peer) == dom)
				n += (unsigned)(r->size / GNTS_SMALL_PAGE);
	}
	b = engine->busy != NULL ? engine->busy(peer, 1) : 0;
	gnts_region_unlock();
	if (busy != NULL)
		*busy = b;
	return n + b;
}

/* A zeroed region record with room for its grants. */
static struct gnts_region *
region_alloc(const char *name)
{
	struct gnts_region *r = calloc(1, sizeof(*r) + GNTS_MAX_GRANTEES *
				       sizeof(struct gnts_grant));

	if (r == NULL)
		return NULL;
	r->grants = (struct gnts_grant *)(r + 1);
	r->fd = -1;
	snprintf(r->name, sizeof(r->name), "%s", name);
	return r;
}

static int
table_insert(struct gnts_region *r)
{
	unsigned i;
	int rc = -ENOSPC;

	gnts_region_lock();
	for (i = 0; i < GNTS_MAX_REGIONS; i++) {
		if (table[i] == NULL) {
			r->ref = next_ref++;
			table[i] = r;
			rc = 0;
			break;
		}
	}
	gnts_region_unlock();
	return rc;
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
	r = region_alloc(name);
	if (r == NULL)
		return -ENOMEM;

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

/* create_for() without an engine of its own: create, then grant. */
static int
create_then_grant(const char *name, size_t size, unsigned flags,
		  gnts_peer_t peer, int readonly, struct gnts_region **out,
		  char *err, size_t errlen)
{
	struct gnts_region *r;
	int rc;

	rc = gnts_region_create(name, size, flags, &r);
	if (rc < 0) {
		snprintf(err, errlen, "region %s of %zu bytes: %s", name, size,
			 strerror(-rc));
		return rc;
	}
	rc = gnts_region_grant(r, peer, readonly);
	if (rc < 0) {
		snprintf(err, errlen, "granting region %s to domain %u: %s%s",
			 name, engine->peer_dom != NULL ?
			 engine->peer_dom(peer) : peer, strerror(-rc),
			 rc == -ENOSPC && engine->full_hint != NULL ?
			 engine->full_hint : "");
		gnts_region_destroy(r);
		return rc;
	}
	*out = r;
	return 0;
}

int
gnts_region_create_for(const char *name, size_t size, unsigned flags,
		       gnts_peer_t peer, int readonly,
		       struct gnts_region **out, char *err, size_t errlen)
{
	struct gnts_region *r;
	int rc;

	if (engine->create_for == NULL)
		return create_then_grant(name, size, flags, peer, readonly,
					 out, err, errlen);
	r = size != 0 ? region_alloc(name) : NULL;
	if (r == NULL) {
		rc = size != 0 ? -ENOMEM : -EINVAL;
		snprintf(err, errlen, "region %s of %zu bytes: %s", name, size,
			 strerror(-rc));
		return rc;
	}
	rc = engine->create_for(r, size, peer, readonly, err, errlen);
	if (rc < 0) {
		free(r);
		return rc;
	}
	r->engine_made = 1;
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
	return engine->create_for == NULL;
}

/* End @p g (module: REVOKE) and free its refs.  @return busy frames. */
static int
end_grant(struct gnts_grant *g)
{
	int busy = engine->revoke != NULL ? engine->revoke(g) : 0;

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
	/* Out of the table and its grants ended under the lock: a MAP in
	 * the control thread either finds it whole or not at all. */
	gnts_region_lock();
	for (i = 0; i < GNTS_MAX_REGIONS; i++)
		if (table[i] == r)
			table[i] = NULL;
	/* Frames a domain still maps stay pinned by the module (and out of
	 * the kernel's hands) after the munmap below, until it unmaps.
	 * Engine-made pages (gntalloc): the kernel ends their grant once
	 * nobody maps them (see gntshare/README.md). */
	for (i = 0; i < r->n_grants; i++)
		end_grant(&r->grants[i]);
	gnts_region_unlock();
	if (r->engine_made) {
		engine->destroy(r);
	} else {
		munmap(r->va, r->size);
		close(r->fd);
	}
	free(r);
}

static int
grant_index(const struct gnts_region *r, gnts_peer_t dom)
{
	unsigned i;

	for (i = 0; i < r->n_grants; i++)
		if (r->grants[i].peer == dom)
			return (int)i;
	return -1;
}

static int
region_grant(struct gnts_region *r, gnts_peer_t dom, int readonly)
{
	struct gnts_grant *g;
	int i = grant_index(r, dom), rc;

	if (r->engine_made || engine->create_for != NULL) /* made granted */
		return i >= 0 && r->grants[i].readonly == (readonly != 0) ?
		       0 : -EOPNOTSUPP;
	if (i >= 0 && (r->grants[i].readonly == (readonly != 0) ||
		       engine->grant == NULL)) {
		r->grants[i].readonly = readonly != 0;
		return 0;
	}
	if (i >= 0) {	/* grants with refs: a new mode is a new grant */
		rc = gnts_region_revoke(r, dom);
		if (rc != 0)
			return rc < 0 ? rc : -EBUSY;
	}
	if (r->n_grants >= GNTS_MAX_GRANTEES)
		return -ENOSPC;
	g = &r->grants[r->n_grants];
	memset(g, 0, sizeof(*g));
	g->peer = dom;
	g->readonly = readonly != 0;
	rc = engine->grant != NULL ? engine->grant(r, g) : 0;
	if (rc < 0)
		return rc;
	r->n_grants++;
	return 0;
}

int
gnts_region_grant(struct gnts_region *r, gnts_peer_t dom, int readonly)
{
	int rc;

	gnts_region_lock();
	rc = region_grant(r, dom, readonly);
	gnts_region_unlock();
	return rc;
}

int
gnts_region_revoke(struct gnts_region *r, gnts_peer_t dom)
{
	int i, busy = -ENOENT;

	gnts_region_lock();
	i = grant_index(r, dom);
	if (i >= 0) {
		busy = end_grant(&r->grants[i]);
		r->grants[i] = r->grants[--r->n_grants];
	}
	gnts_region_unlock();
	return busy;
}

const uint32_t *
gnts_region_refs(const struct gnts_region *r, gnts_peer_t dom, uint32_t *n)
{
	int i = grant_index(r, dom);

	if (i < 0 || r->grants[i].refs == NULL)
		return NULL;
	*n = r->grants[i].n_refs;
	return r->grants[i].refs;
}

void
gnts_revoke_domain(gnts_peer_t dom)
{
	unsigned i;

	gnts_region_lock();
	for (i = 0; i < GNTS_MAX_REGIONS; i++)
		if (table[i] != NULL)
			(void)gnts_region_revoke(table[i], dom);
	gnts_region_unlock();
}

struct gnts_region *
gnts_region_find(gnts_ref_t ref)
{
	struct gnts_region *r = NULL;
	unsigned i;

	if (ref == GNTS_REF_INVALID)
		return NULL;
	gnts_region_lock();
	for (i = 0; i < GNTS_MAX_REGIONS && r == NULL; i++)
		if (table[i] != NULL && table[i]->ref == ref)
			r = table[i];
	gnts_region_unlock();
	return r;
}

struct gnts_region *
gnts_region_lookup(gnts_ref_t ref, gnts_peer_t dom, int *readonly)
{
	struct gnts_region *r;
	int i = -1;

	gnts_region_lock();
	r = gnts_region_find(ref);
	if (r != NULL)
		i = grant_index(r, dom);
	if (i >= 0 && readonly != NULL)
		*readonly = r->grants[i].readonly;
	gnts_region_unlock();
	return i >= 0 ? r : NULL;
}

const char *
gnts_region_name(gnts_ref_t ref, char *buf, size_t len)
{
	struct gnts_region *r;

	gnts_region_lock();
	r = gnts_region_find(ref);
	snprintf(buf, len, "%s", r != NULL ? r->name : "none such");
	gnts_region_unlock();
	return buf;
}

int
gnts_region_open_for(gnts_ref_t ref, gnts_peer_t dom, int readonly,
		     size_t *size)
{
	struct gnts_region *r;
	int ro = 0, fd;

	gnts_region_lock();
	r = gnts_region_lookup(ref, dom, &ro);
	if (r == NULL || r->fd < 0 || (ro && !readonly)) {
		fd = r == NULL ? -ENOENT : -EACCES;
	} else if (readonly) {
		/* A new read-only open file description of the memfd: the
		 * grantee cannot mprotect its way to write access. */
		char p[64];

		snprintf(p, sizeof(p), "/proc/self/fd/%d", r->fd);
		fd = open(p, O_RDONLY | O_CLOEXEC);
		fd = fd < 0 ? -errno : fd;
	} else {
		fd = fcntl(r->fd, F_DUPFD_CLOEXEC, 0);
		fd = fd < 0 ? -errno : fd;
	}
	if (fd >= 0)
		*size = r->size;
	gnts_region_unlock();
	return fd;
}

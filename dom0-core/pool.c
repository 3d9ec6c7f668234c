/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Packet pools.  The packet data of a trust group lives in one gntshare
 * region (granted to every NF of the group); the DPDK mempool is built over
 * it as pinned external buffers, so struct rte_mbuf headers stay in
 * core-private memory where no guest can reach them.  With nf_pools = own
 * (or the xen backend under gntalloc, which cannot share a region) each NF
 * gets a pool of its own, built the same way over a region made for its
 * domain; the data path copies packets between pools.
 *
 *   region:  | buf 0 | buf 1 | ... | buf n-1 |   (buf_size bytes each,
 *                                                 128 B headroom first)
 *   core:    mbufs[i] -> header whose buf_addr == region + i * buf_size
 *            owner[i] =  0 (core) or NF id + 1
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_mbuf_pool_ops.h>
#include <rte_memory.h>

#include "core.h"

/* Use arithmetic instead of the table if every header sits at a fixed
 * stride in buffer order (the usual case: one memory chunk). */
static void
find_linear_layout(struct xnv_pool *p)
{
	uintptr_t base = (uintptr_t)p->mbufs[0];
	uintptr_t stride = (uintptr_t)p->mbufs[p->n_bufs > 1 ? 1 : 0] - base;
	uint32_t i;

	p->mbuf_base = 0;
	if (p->n_bufs < 2 || (intptr_t)stride <= 0)
		return;
	for (i = 0; i < p->n_bufs; i++)
		if ((uintptr_t)p->mbufs[i] != base + i * stride)
			return;
	p->mbuf_base = base;
	p->mbuf_stride = stride;
}

/* Why a mempool cannot be made when EAL loaded no mempool driver: with
 * DPDK as shared libraries the drivers are plugins, each its own package. */
static const char *
mempool_ops_hint(void)
{
	const char *want = rte_mbuf_best_mempool_ops();
	unsigned i;

	for (i = 0; i < rte_mempool_ops_table.num_ops; i++)
		if (strcmp(rte_mempool_ops_table.ops[i].name, want) == 0)
			return "";
	return " (no mempool driver is loaded: install DPDK's "
	       "librte_mempool_ring plugin, Debian package librte-mempool-ring23)";
}

/*
 * Build pool @p idx over c->pools[idx].region (made by the caller, with
 * n_bufs and buf_size set): extmem, mempool, buffer tables.  @p what
 * names the pool in errors.  On error the pool is destroyed, region too.
 */
static int
pool_build(struct xnv_core *c, uint16_t idx, const char *what,
	   const char *mp_name, char *err, size_t errlen)
{
	struct xnv_pool *p = &c->pools[idx];
	struct rte_pktmbuf_extmem ext;
	uint32_t i, cache;
	int rc;

	if (rte_eal_iova_mode() != RTE_IOVA_VA) {
		rc = -ENOTSUP;
		snprintf(err, errlen, "%s: EAL runs with IOVA as PA: a pool is "
			 "DMA-mapped by virtual address only (drop --iova-mode=pa; "
			 "PCI NICs on vfio-pci, not igb_uio)", what);
		goto fail;
	}
	/* Tell DPDK about the memory so drivers may use it (DMA map). */
	rc = rte_extmem_register(p->region->va, p->region->size, NULL, 0,
				 p->region->page_size);
	if (rc < 0) {
		rc = -rte_errno;
		snprintf(err, errlen, "%s: rte_extmem_register: %s", what,
			 rte_strerror(-rc));
		goto fail;
	}
	p->extmem_registered = 1;
	ext.buf_ptr = p->region->va;
	ext.buf_iova = rte_eal_iova_mode() == RTE_IOVA_VA ?
		       (rte_iova_t)(uintptr_t)p->region->va : RTE_BAD_IOVA;
	ext.buf_len = (size_t)p->n_bufs * p->buf_size;
	ext.elt_size = (uint16_t)p->buf_size;
	cache = p->n_bufs >= 1024 ? 256 : 0;
	p->mp = rte_pktmbuf_pool_create_extbuf(mp_name, p->n_bufs, cache,
					       sizeof(struct xnv_mbuf_priv),
					       (uint16_t)p->buf_size,
					       (int)rte_socket_id(), &ext, 1);
	if (p->mp == NULL) {
		snprintf(err, errlen, "%s: mempool over the pool region: %s%s",
			 what, rte_strerror(rte_errno), mempool_ops_hint());
		rc = -ENOMEM;
		goto fail;
	}
	p->mbufs = rte_zmalloc("xnv-mbufs", sizeof(*p->mbufs) * p->n_bufs, 0);
	p->owner = rte_zmalloc("xnv-owner", sizeof(*p->owner) * p->n_bufs, 0);
	if (p->mbufs == NULL || p->owner == NULL) {
		snprintf(err, errlen, "%s: out of memory for the buffer tables",
			 what);
		rc = -ENOMEM;
		goto fail;
	}
	/* Take every mbuf once to learn which buffer each one points at. */
	for (i = 0; i < p->n_bufs; i++) {
		struct rte_mbuf *m = rte_pktmbuf_alloc(p->mp);
		uintptr_t off;

		if (m == NULL)
			break;
		off = (uintptr_t)m->buf_addr - (uintptr_t)p->region->va;
		if (off % p->buf_size != 0 || off / p->buf_size >= p->n_bufs ||
		    p->mbufs[off / p->buf_size] != NULL) {
			rte_pktmbuf_free(m);
			break;
		}
		p->mbufs[off / p->buf_size] = m;
		xnv_priv(m)->buf = (uint32_t)(off / p->buf_size);
		xnv_priv(m)->pool = idx;
	}
	rc = i == p->n_bufs ? 0 : -EINVAL;
	if (rc == 0)
		find_linear_layout(p);
	while (i-- > 0)
		rte_pktmbuf_free(p->mbufs[i]);
	if (rc == 0)
		return 0;
	snprintf(err, errlen, "%s: mempool does not map one mbuf per buffer",
		 what);
fail:
	xnv_pool_destroy(p);
	return rc;
}

int
xnv_pool_create(struct xnv_core *c, uint16_t g, char *err, size_t errlen)
{
	const struct xnv_group_cfg *gc = &c->cfg.groups[g];
	struct xnv_pool *p = &c->pools[g];
	char name[RTE_MEMPOOL_NAMESIZE], what[XNV_NAME_LEN + 8];
	int rc;

	memset(p, 0, sizeof(*p));
	p->group = g;
	p->n_bufs = gc->pool_bufs;
	p->buf_size = gc->buf_size;
	snprintf(name, sizeof(name), "xnv-pool-%s", gc->name);
	snprintf(what, sizeof(what), "group %s", gc->name);
	rc = gnts_region_create(name, (size_t)p->n_bufs * p->buf_size,
				GNTS_F_HUGE, &p->region);
	if (rc < 0) {
		snprintf(err, errlen, "group %s: cannot allocate %u x %u B "
			 "pool: %s", gc->name, p->n_bufs, p->buf_size,
			 strerror(-rc));
		return rc;
	}
	rc = pool_build(c, g, what, name, err, errlen);
	if (rc < 0)
		return rc;
	XLOG(INFO, "group %s: pool of %u x %u B in region %u (%zu MiB, %s "
	     "pages; mbuf lookup by %s)\n", gc->name, p->n_bufs, p->buf_size,
	     p->region->ref, p->region->size >> 20,
	     p->region->page_size == GNTS_HUGE_PAGE ? "2 MiB huge" : "4 KiB",
	     p->mbuf_base ? "stride" : "table");
	return 0;
}

/*
 * A pool of @p nf's own, of its group's size, made for its domain alone
 * (under gntalloc: pages gntalloc grants to that domain).  Sets nf->pool.
 */
int
xnv_pool_create_own(struct xnv_core *c, struct xnv_nfrec *nf, char *err,
		    size_t errlen)
{
	const struct xnv_group_cfg *gc = &c->cfg.groups[nf->group];
	char name[GNTS_NAME_LEN], mp[RTE_MEMPOOL_NAMESIZE], what[64];
	char gerr[400];
	struct xnv_pool *p = NULL;
	uint16_t i;
	int rc;

	for (i = XNV_MAX_GROUPS; i < XNV_MAX_POOLS && p == NULL; i++)
		if (c->pools[i].mp == NULL && c->pools[i].region == NULL)
			p = &c->pools[i];
	if (p == NULL) {
		snprintf(err, errlen, "no room for another pool of an NF's own "
			 "(%d, some wait for buffers to come home)", XNV_MAX_NFS);
		return -ENOSPC;
	}
	i = (uint16_t)(p - c->pools);
	memset(p, 0, sizeof(*p));
	p->group = nf->group;
	p->nf = nf->id;
	p->own = 1;
	p->n_bufs = gc->pool_bufs;
	p->buf_size = gc->buf_size;
	snprintf(name, sizeof(name), "xnv-pool-%.22s", nf->name);
	snprintf(mp, sizeof(mp), "xnv-nfpool-%u", i);
	snprintf(what, sizeof(what), "NF %s: pool of its own", nf->name);
	rc = gnts_region_create_for(name, (size_t)p->n_bufs * p->buf_size,
				    GNTS_F_HUGE, nf->dom, 0, &p->region, gerr,
				    sizeof(gerr));
	if (rc < 0) {
		p->region = NULL;
		snprintf(err, errlen, "pool of its own (%u x %u B): %s",
			 p->n_bufs, p->buf_size, gerr);
		return rc;
	}
	rc = pool_build(c, i, what, mp, err, errlen);
	if (rc == 0)
		nf->pool = i;
	return rc;
}

/* @p nf is gone: its own pool goes once every buffer is home. */
void
xnv_pool_retire(struct xnv_core *c, struct xnv_nfrec *nf)
{
	struct xnv_pool *p = &c->pools[nf->pool];

	if (p->own && !p->retired) {
		p->retired = 1;
		c->n_retired++;
	}
}

/* Destroy retired pools whose buffers are all home (control path). */
void
xnv_pools_sweep(struct xnv_core *c)
{
	unsigned i, left = 0;

	if (c->n_retired == 0)	/* the usual case: no slot to look at */
		return;
	for (i = XNV_MAX_GROUPS; i < XNV_MAX_POOLS; i++) {
		struct xnv_pool *p = &c->pools[i];

		if (!p->retired)
			continue;
		if (xnv_pool_free(p) != p->n_bufs) {
			left++;
			continue;
		}
		XLOG(INFO, "pool %u (%s, group %s) released: its NF is gone "
		     "and its %u buffers are home\n", i, p->region->name,
		     c->cfg.groups[p->group].name, p->n_bufs);
		xnv_pool_destroy(p);
	}
	c->n_retired = left;
}

void
xnv_pool_destroy(struct xnv_pool *p)
{
	rte_mempool_free(p->mp);
	p->mp = NULL;
	rte_free(p->mbufs);
	rte_free(p->owner);
	p->mbufs = NULL;
	p->owner = NULL;
	if (p->region != NULL) {
		if (p->extmem_registered)
			rte_extmem_unregister(p->region->va, p->region->size);
		gnts_region_destroy(p->region);
	}
	p->region = NULL;
	p->extmem_registered = 0;
	p->retired = 0;
}

unsigned
xnv_pool_free(const struct xnv_pool *p)
{
	return p->mp != NULL ? rte_mempool_avail_count(p->mp) : 0;
}

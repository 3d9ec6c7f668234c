/* SPDX-License-Identifier: BSD-3-Clause */
/* Packet pools: a trust group's, or one NF's own (pool.c). */
#ifndef XNV_POOL_H
#define XNV_POOL_H

#include <stddef.h>
#include <stdint.h>

#include <rte_branch_prediction.h>
#include <rte_mbuf.h>

#include <gntshare/gntshare.h>

#include "sizes.h"

struct xnv_core;
struct xnv_nfrec;

/*
 * A packet pool, built over a granted region: a trust group's (index =
 * group index), or one NF's own (nf_pools = own, or the xen backend under
 * gntalloc: index XNV_MAX_GROUPS and up, made at attach, destroyed once
 * the NF is gone and every buffer is home).
 */
struct xnv_pool {
	struct gnts_region *region;
	struct rte_mempool *mp;		/* NULL: slot unused */
	uint16_t group;			/* trust group it serves */
	uint16_t nf;			/* own pool: its NF's id */
	uint8_t own;			/* an NF's own pool */
	uint8_t retired;		/* own pool whose NF is gone */
	uint32_t n_bufs;
	uint32_t buf_size;
	struct rte_mbuf **mbufs;	/* buffer index -> mbuf */
	uintptr_t mbuf_base;		/* when != 0: mbuf of buffer i is at */
	uintptr_t mbuf_stride;		/* mbuf_base + i * mbuf_stride */
	uint16_t *owner;		/* buffer index -> 0 core, nf id + 1 */
	uint64_t copies_in;		/* group pools: packets copied into the
					 * group's pools (its own and its NFs') */
	int extmem_registered;
};

/* The mbuf of buffer @p i: arithmetic when the mempool laid the headers
 * out in buffer order (no table load on the hot path), else the table. */
static inline struct rte_mbuf *
xnv_pool_mbuf(const struct xnv_pool *p, uint32_t i)
{
	if (likely(p->mbuf_base != 0))
		return (struct rte_mbuf *)(p->mbuf_base + i * p->mbuf_stride);
	return p->mbufs[i];
}

int xnv_pool_create(struct xnv_core *c, uint16_t g, char *err, size_t errlen);
int xnv_pool_create_own(struct xnv_core *c, struct xnv_nfrec *nf, char *err,
			size_t errlen);
void xnv_pool_retire(struct xnv_core *c, struct xnv_nfrec *nf);
void xnv_pools_sweep(struct xnv_core *c);
void xnv_pool_destroy(struct xnv_pool *p);
unsigned xnv_pool_free(const struct xnv_pool *p);

#endif /* XNV_POOL_H */

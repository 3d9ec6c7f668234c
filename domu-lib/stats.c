/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * An NF's own counters (xnv_nf_stat_*, <xnv/nf.h>): kept in the NF's
 * memory and mirrored into the stats area of its ring region
 * (gntshare/proto.h, version 3), which the core reads.  Only this NF
 * writes there; a new region (--reattach) gets every name and value again.
 */
#include <errno.h>
#include <stdatomic.h>
#include <string.h>

#include "nf_pvt.h"

_Static_assert(XNV_NF_STATS_MAX == GNTS_NF_STATS_MAX, "slots");
_Static_assert(XNV_NF_STAT_NAME_MAX + 1 == GNTS_NF_STAT_NAME_LEN, "names");

/* The value first, then the name: a slot the core sees named holds a
 * value this NF wrote. */
static void
publish(struct xnv_nf *nf, unsigned i)
{
	struct gnts_nf_stat *s;

	if (nf->stat_shm == NULL || i >= nf->n_stat_shm)
		return;
	s = &nf->stat_shm[i];
	atomic_store_explicit(&s->value, nf->stat_val[i],
			      memory_order_relaxed);
	/* Release: the value is written before the name that shows it. */
	atomic_thread_fence(memory_order_release);
	memcpy(s->name, nf->stat_name[i], sizeof(s->name));
}

void
libxnv_stats_publish(struct xnv_nf *nf)
{
	unsigned i;

	nf->stat_shm = gnts_ring_region_stats(nf->ring_va, nf->ring_bytes,
					      &nf->n_stat_shm);
	for (i = 0; i < nf->n_stats; i++)
		publish(nf, i);
}

int
xnv_nf_stat_register(struct xnv_nf *nf, const char *name)
{
	unsigned i;

	if (nf == NULL || name == NULL ||
	    strnlen(name, GNTS_NF_STAT_NAME_LEN) == GNTS_NF_STAT_NAME_LEN ||
	    !gnts_nf_stat_name_ok(name))
		return -EINVAL;
	for (i = 0; i < nf->n_stats; i++)
		if (strcmp(nf->stat_name[i], name) == 0)
			return -EEXIST;
	if (nf->n_stats == XNV_NF_STATS_MAX)
		return -ENOSPC;
	i = nf->n_stats++;
	strcpy(nf->stat_name[i], name);
	nf->stat_val[i] = 0;
	publish(nf, i);
	return (int)i;
}

void
xnv_nf_stat_set(struct xnv_nf *nf, int slot, uint64_t v)
{
	if (slot < 0 || (unsigned)slot >= nf->n_stats)
		return;
	nf->stat_val[slot] = v;
	if (nf->stat_shm != NULL && (unsigned)slot < nf->n_stat_shm)
		/* Relaxed: a counter orders nothing. */
		atomic_store_explicit(&nf->stat_shm[slot].value, v,
				      memory_order_relaxed);
}

void
xnv_nf_stat_add(struct xnv_nf *nf, int slot, uint64_t n)
{
	if (slot < 0 || (unsigned)slot >= nf->n_stats)
		return;
	xnv_nf_stat_set(nf, slot, nf->stat_val[slot] + n);
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* Ring region formatting and attach checks; see include/gntshare/ring.h. */
#include <errno.h>
#include <string.h>

#include "gntshare/ring.h"

int
gnts_ring_region_format(void *region, size_t region_size, uint32_t ring_size)
{
	struct gnts_ring_region_hdr *h = region;
	size_t need = gnts_ring_region_bytes(ring_size);
	uint32_t i;

	if (!gnts_ring_size_ok(ring_size) || region_size < need ||
	    region_size > UINT32_MAX)
		return -EINVAL;
	memset(region, 0, need);
	h->magic = GNTS_RING_MAGIC;
	h->version = GNTS_RING_VERSION;
	h->min_version = GNTS_RING_VERSION_MIN;
	h->n_rings = GNTS_RING_COUNT;
	h->ring_size = ring_size;
	h->desc_size = sizeof(struct gnts_desc);
	h->region_size = (uint32_t)region_size;
	h->stats_off = GNTS_RING_STATS_OFF;
	h->n_stats = GNTS_NF_STATS_MAX;
	h->sleep_off = GNTS_RING_SLEEP_OFF;
	for (i = 0; i < GNTS_RING_COUNT; i++)
		h->ring_off[i] = (uint32_t)(GNTS_RING_SLEEP_OFF +
					    GNTS_RING_SLEEP_BYTES +
					    i * gnts_ring_bytes(ring_size));
	/* The peer attaches only after the core tells it the region's
	 * reference over the rendezvous channel, which orders these plain
	 * stores before any of its loads (socket / XenStore write). */
	return 0;
}

int
gnts_ring_region_attach(void *region, size_t region_size,
			uint32_t expect_size,
			struct gnts_ring_port ports[GNTS_RING_COUNT])
{
	const volatile struct gnts_ring_region_hdr *vh = region;
	struct gnts_ring_sleep_line *lines = NULL;
	struct gnts_ring_region_hdr h;
	size_t first;
	uint32_t i;

	if (region_size < sizeof(h))
		return -EINVAL;
	/* Read the shared header once into private memory; check the copy. */
	memcpy(&h, (const void *)vh, sizeof(h));
	if (h.magic != GNTS_RING_MAGIC ||
	    !gnts_version_ok(h.version, h.min_version, GNTS_RING_VERSION_MIN,
			     GNTS_RING_VERSION))
		return -EPROTO;
	if (h.n_rings != GNTS_RING_COUNT ||
	    h.desc_size != sizeof(struct gnts_desc) ||
	    !gnts_ring_size_ok(h.ring_size) ||
	    (expect_size != 0 && h.ring_size != expect_size) ||
	    h.region_size > region_size)
		return -EINVAL;
	/* Rings start after the header, the control line and the stats
	 * area if there is one (version 3). */
	first = sizeof(h) + sizeof(struct gnts_ring_ctl);
	if (h.version >= 3 && h.stats_off != 0) {
		if (h.stats_off != GNTS_RING_STATS_OFF || h.n_stats == 0 ||
		    h.n_stats > GNTS_NF_STATS_MAX)
			return -EINVAL;
		first = GNTS_RING_STATS_OFF +
			h.n_stats * sizeof(struct gnts_nf_stat);
	}
	/* Then the doorbell area if there is one (version 4): where this
	 * side expects it or nowhere, so that the rings cannot overlap it. */
	if (h.version >= 4 && h.sleep_off != 0) {
		if (h.sleep_off != GNTS_RING_SLEEP_OFF ||
		    first > GNTS_RING_SLEEP_OFF)
			return -EINVAL;
		first = GNTS_RING_SLEEP_OFF + GNTS_RING_SLEEP_BYTES;
		lines = (struct gnts_ring_sleep_line *)((char *)region +
							GNTS_RING_SLEEP_OFF);
	}
	for (i = 0; i < GNTS_RING_COUNT; i++) {
		uint32_t off = h.ring_off[i];

		if (off % GNTS_CACHE_LINE != 0 || off < first ||
		    (size_t)off + gnts_ring_bytes(h.ring_size) > region_size)
			return -EINVAL;
		/* Rings follow each other without overlapping. */
		if (i > 0 && (size_t)off < (size_t)h.ring_off[i - 1] +
				gnts_ring_bytes(h.ring_size))
			return -EINVAL;
		ports[i].r = (struct gnts_ring *)((char *)region + off);
		ports[i].size = h.ring_size;
		ports[i].mask = h.ring_size - 1;
		ports[i].idx = 0;
		ports[i].cached_peer = 0;
		ports[i].broken = 0;
		ports[i].kick_idx = 0;
		/* A ring's sleep word is on its consumer's line, the kicks
		 * word it reads on its producer's (the other side's). */
		ports[i].sleep = lines == NULL ? NULL :
				 &lines[gnts_ring_consumer(i)].sleep[i];
		ports[i].kicks = lines == NULL ? NULL :
				 &lines[GNTS_SIDE_COUNT - 1 -
					gnts_ring_consumer(i)].kicks;
	}
	return 0;
}

struct gnts_nf_stat *
gnts_ring_region_stats(void *region, size_t region_size, unsigned *n)
{
	const volatile struct gnts_ring_region_hdr *vh = region;
	struct gnts_ring_region_hdr h;

	/* Once into private memory, checked as gnts_ring_region_attach
	 * checked it (the peer may have changed it since). */
	memcpy(&h, (const void *)vh, sizeof(h));
	if (h.version < 3 || h.stats_off != GNTS_RING_STATS_OFF ||
	    h.n_stats == 0 || h.n_stats > GNTS_NF_STATS_MAX ||
	    GNTS_RING_STATS_OFF + (size_t)h.n_stats *
	    sizeof(struct gnts_nf_stat) > region_size)
		return NULL;
	*n = h.n_stats;
	return (struct gnts_nf_stat *)((char *)region + GNTS_RING_STATS_OFF);
}

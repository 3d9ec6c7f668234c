/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer harness: what a hostile NF controls on the way back to the
 * core.  The input is a whole hostile ring region as the NF may leave it:
 * the tx ring's producer index and every descriptor slot, the rx ring's
 * consumer index, plus the pool geometry and which buffers the NF holds.
 * The core's code runs unchanged: gnts_ring_dequeue_burst/enqueue_burst
 * (gntshare/ring.h) and xnv_validate (dom0-core/validate.h), with the
 * core's reaction to each verdict (take the buffer back unless the index
 * or the owner was wrong).  Checked after every descriptor:
 *   - an accepted descriptor names a buffer in the pool, held by this NF,
 *     with offset + length inside it (length 0 only with DROP), no
 *     reserved flag set, a known action and destination;
 *   - a buffer comes back at most once per time it was handed out;
 *   - a ring never yields more than it holds, and a broken one nothing.
 * A second mode feeds the bytes as a region header to
 * gnts_ring_region_attach (what libxnv does with the core's region): the
 * rings it accepts lie inside the region.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "validate.h"

#define TAG 7u
#define MAX_BUFS 4096u

#define CHECK(c) do { if (!(c)) __builtin_trap(); } while (0)

struct in {
	const uint8_t *p;
	size_t n;
};

static uint32_t
take(struct in *in, unsigned bytes)
{
	uint32_t v = 0;

	for (unsigned i = 0; i < bytes && in->n > 0; i++, in->p++, in->n--)
		v |= (uint32_t)*in->p << (8 * i);
	return v;
}

static void
attach_mode(const uint8_t *data, size_t size)
{
	struct gnts_ring_port p[GNTS_RING_COUNT];
	size_t len = size < 64 ? 64 : size;
	uint8_t *mem = aligned_alloc(GNTS_CACHE_LINE, (len + 63) & ~(size_t)63);

	memset(mem, 0, (len + 63) & ~(size_t)63);
	memcpy(mem, data, size);
	if (gnts_ring_region_attach(mem, size, 0, p) == 0)
		for (int i = 0; i < GNTS_RING_COUNT; i++) {
			CHECK((uint8_t *)p[i].r >= mem + 128);
			CHECK((uint8_t *)p[i].r + gnts_ring_bytes(p[i].size) <=
			      mem + size);
			CHECK(p[i].mask + 1 == p[i].size);
		}
	free(mem);
}

/* The core as producer until the ring looks full: the NF's consumer
 * index is read, and an impossible one breaks the port. */
static void
produce(struct gnts_ring_port *rx, struct gnts_desc *d, uint32_t ring_size,
	uint32_t burst)
{
	memset(d, 0, GNTS_BURST_MAX * sizeof(*d));
	for (uint32_t sent = 0; sent <= 2 * ring_size;) {
		uint32_t avail = gnts_ring_enqueue_burst(rx, d, burst);

		CHECK(avail <= burst);
		CHECK(!rx->broken || avail == 0);
		if (avail == 0)
			break;
		sent += avail;
		CHECK(rx->idx - rx->cached_peer <= ring_size);
		/* The NF's sleep word decides "kick or not", nothing else. */
		struct gnts_ring_port before = *rx;
		int kick = gnts_ring_need_kick(rx);

		CHECK(kick == 0 || kick == 1);
		CHECK(rx->idx == before.idx &&
		      rx->cached_peer == before.cached_peer &&
		      rx->broken == before.broken && rx->kick_idx == before.idx);
	}
}

/* One descriptor the NF returned, validated, and the core's reaction. */
static void
check_returned(const struct gnts_desc *d, const struct xnv_pool_view *view,
	       const struct xnv_config *cfg, uint8_t *held, uint16_t *owner)
{
	enum xnv_bad bad = xnv_validate(d, view, TAG, cfg);

	CHECK(bad < XNV_BAD_N);
	if (bad == XNV_BAD_INDEX) {
		CHECK(d->buf >= view->n_bufs);
		return;
	}
	CHECK(d->buf < view->n_bufs);
	if (bad == XNV_BAD_OWNER) {
		CHECK(owner[d->buf] != TAG);
		return;
	}
	/* Held by the NF: handed back exactly once. */
	CHECK(held[d->buf] == 1);
	held[d->buf] = 0;
	owner[d->buf] = 0;
	if (bad != XNV_OK)
		return;
	/* data, unless handed back unused (DROP) */
	CHECK(d->len > 0 || d->action == GNTS_ACT_DROP);
	CHECK((uint32_t)d->off + d->len <= view->buf_size);
	CHECK(d->flags == 0);
	CHECK(d->action >= GNTS_ACT_DROP && d->action <= GNTS_ACT_NEXT);
	if (d->action == GNTS_ACT_OUT)
		CHECK(d->dst < cfg->n_ports);
	if (d->action == GNTS_ACT_TO_SERVICE)
		CHECK(d->dst <= XNV_MAX_SERVICE_ID &&
		      cfg->service_by_id[d->dst] >= 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint16_t owner[MAX_BUFS];
	static uint8_t held[MAX_BUFS];
	struct gnts_ring_port core[GNTS_RING_COUNT];
	struct gnts_desc d[GNTS_BURST_MAX];
	struct xnv_config cfg;
	struct xnv_pool_view view;
	struct in in = { data, size };
	uint32_t ring_size, burst, taken = 0;
	size_t bytes;
	void *mem;

	if (size > 0 && data[0] == 'H') {
		attach_mode(data + 1, size - 1);
		return 0;
	}
	/* Geometry: 16..1024 descriptors, 1..4096 buffers, sizes and ids. */
	ring_size = 16u << (take(&in, 1) % 7);
	burst = 1 + take(&in, 1) % 64;
	view.n_bufs = 1 + take(&in, 2) % MAX_BUFS;
	view.buf_size = 256 + take(&in, 2) % 65280;
	view.owner = owner;
	memset(&cfg, 0, sizeof(cfg));
	cfg.n_ports = (uint16_t)(take(&in, 1) % (XNV_MAX_PORTS + 1));
	memset(cfg.service_by_id, 0xff, sizeof(cfg.service_by_id));
	for (uint32_t i = 0, m = take(&in, 4); i < 32; i++)
		if (m & (1u << i))
			cfg.service_by_id[i * 7 + 1] = (int16_t)i;
	/* Which buffers the NF holds: a pattern from the input. */
	for (uint32_t i = 0, seed = take(&in, 4) | 1; i < view.n_bufs; i++) {
		seed = seed * 1103515245u + 12345u;
		held[i] = (seed >> 16) & 1;
		owner[i] = held[i] ? TAG : (uint16_t)((seed >> 20) & 3);
	}
	bytes = gnts_ring_region_bytes(ring_size);
	mem = aligned_alloc(GNTS_CACHE_LINE, bytes);
	CHECK(mem != NULL);
	CHECK(gnts_ring_region_format(mem, bytes, ring_size) == 0);
	CHECK(gnts_ring_region_attach(mem, bytes, ring_size, core) == 0);
	/* The NF's writes: rx consumer, tx producer, every tx slot. */
	atomic_store(&core[GNTS_RING_RX].r->cons, take(&in, 4));
	atomic_store(&core[GNTS_RING_TX].r->prod, take(&in, 4));
	/* ... and its sleep word on the rx ring (version 4). */
	atomic_store(core[GNTS_RING_RX].sleep,
		     take(&in, 4) | (uint64_t)take(&in, 1) << 32);
	memset(core[GNTS_RING_TX].r->desc, 0, ring_size * sizeof(struct gnts_desc));
	memcpy(core[GNTS_RING_TX].r->desc, in.p,
	       in.n < ring_size * sizeof(struct gnts_desc) ?
	       in.n : ring_size * sizeof(struct gnts_desc));

	produce(&core[GNTS_RING_RX], d, ring_size, burst);
	/* The core as consumer: dequeue, validate, react. */
	for (;;) {
		unsigned n = gnts_ring_dequeue_burst(&core[GNTS_RING_TX], d, burst);

		CHECK(n <= burst);
		if (core[GNTS_RING_TX].broken) {
			CHECK(n == 0);
			break;
		}
		if (n == 0)
			break;
		taken += n;
		CHECK(taken <= ring_size);
		for (unsigned i = 0; i < n; i++)
			check_returned(&d[i], &view, &cfg, held, owner);
	}
	free(mem);
	return 0;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the ring tests share (header only; test_ring.c, test_ring_region.c,
 * test_ring_hostile.c): the fixture F, one formatted region of F.size
 * descriptors per ring with the core's and the NF's port arrays attached
 * to it (SETUP(n) defines its setup function setup<n>, T(name, n) a test
 * run on it), and descriptors that encode a sequence number in every
 * field (mkdesc, fill, check_seq).
 */
#ifndef XNV_RING_FIXTURE_H
#define XNV_RING_FIXTURE_H

#include <setjmp.h>	/* setjmp.h, stdarg.h, stddef.h: before cmocka.h */
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <cmocka.h>

#include "gntshare/ring.h"

#define UNUSED __attribute__((unused))
#define TEST(name) static void name(void **state UNUSED)
#define RX GNTS_RING_RX
#define TX GNTS_RING_TX

static inline void *
region_alloc(size_t bytes, int fill)
{
	size_t len = (bytes + GNTS_CACHE_LINE - 1) & ~(size_t)(GNTS_CACHE_LINE - 1);
	void *p = aligned_alloc(GNTS_CACHE_LINE, len);

	assert_non_null(p);
	memset(p, fill, len);
	return p;
}

/* The fixture: a formatted region of F.size descriptors per ring, with the
 * core's and the NF's port arrays attached to it. */
static struct {
	void *mem;
	size_t bytes;
	uint32_t size;
	struct gnts_ring_port core[GNTS_RING_COUNT], nf[GNTS_RING_COUNT];
} F;
#define HDR ((struct gnts_ring_region_hdr *)F.mem)

static inline int
fx_setup(uint32_t ring_size)
{
	F.size = ring_size;
	F.bytes = gnts_ring_region_bytes(ring_size);
	F.mem = region_alloc(F.bytes, 0xa5);
	assert_int_equal(gnts_ring_region_format(F.mem, F.bytes, ring_size), 0);
	assert_int_equal(gnts_ring_region_attach(F.mem, F.bytes, ring_size,
						 F.core), 0);
	assert_int_equal(gnts_ring_region_attach(F.mem, F.bytes, 0, F.nf), 0);
	return 0;
}

#define SETUP(n) static int setup##n(void **state UNUSED) { return fx_setup(n); }

static inline int
teardown(void **state UNUSED)
{
	free(F.mem);
	memset(&F, 0, sizeof(F));
	return 0;
}

/* Descriptor that encodes @p seq in every field. */
static inline struct gnts_desc
mkdesc(uint32_t seq)
{
	return (struct gnts_desc){
		.buf = seq, .off = (uint16_t)(seq * 3), .len = (uint16_t)(seq >> 3),
		.action = (uint8_t)seq, .flags = (uint8_t)(seq >> 8),
		.dst = (uint16_t)(seq ^ 0x5a5a), .hash = seq * 2654435761u,
	};
}

static inline void
fill(struct gnts_desc *d, uint32_t first_seq, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		d[i] = mkdesc(first_seq + i);
}

static inline void
check_seq(const struct gnts_desc *d, uint32_t first_seq, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		struct gnts_desc e = mkdesc(first_seq + i);

		assert_memory_equal(&d[i], &e, sizeof(e));
	}
}

#define T(name, n) cmocka_unit_test_setup_teardown(name, setup##n, teardown)

#endif

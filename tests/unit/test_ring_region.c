/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of gntshare rings (ring.h, ring.c): the checks of region
 * format and attach (magic, ring size, ring offsets, region size, expected
 * ring size).  The fixture (ring_fixture.h) formats one region; the core's
 * and the NF's port arrays attach to it.
 */
#include <errno.h>

#include "ring_fixture.h"

SETUP(64) SETUP(256)

/* Attach a scratch port array to F's region as it is now. */
static int
reattach(size_t bytes, uint32_t expect)
{
	struct gnts_ring_port p[GNTS_RING_COUNT];

	return gnts_ring_region_attach(F.mem, bytes, expect, p);
}

/* Write a header by hand (as format would) for any ring size, so attach's
 * own checks are what rejects it. */
static void
forge_hdr(void *mem, size_t bytes, uint32_t ring_size)
{
	struct gnts_ring_region_hdr h = {
		.magic = GNTS_RING_MAGIC, .version = GNTS_RING_VERSION,
		.n_rings = GNTS_RING_COUNT, .ring_size = ring_size,
		.desc_size = sizeof(struct gnts_desc), .region_size = (uint32_t)bytes,
	};

	for (uint32_t i = 0; i < GNTS_RING_COUNT; i++)
		h.ring_off[i] = (uint32_t)(sizeof(h) + GNTS_CACHE_LINE +
					   i * gnts_ring_bytes(ring_size));
	memcpy(mem, &h, sizeof(h));
}

/* ---- region format + attach ------------------------------------------ */

TEST(test_format_attach_good_header)
{
	struct gnts_ring_region_hdr *h = HDR;

	assert_int_equal(h->magic, GNTS_RING_MAGIC);
	assert_int_equal(h->version, GNTS_RING_VERSION);
	assert_int_equal(h->n_rings, GNTS_RING_COUNT);
	assert_int_equal(h->ring_size, 256);
	assert_int_equal(h->desc_size, 16);
	assert_int_equal(h->region_size, F.bytes);
	/* after the control line, the stats area and the doorbell area */
	assert_int_equal(h->ring_off[RX], 128 + GNTS_RING_STATS_BYTES +
			 GNTS_RING_SLEEP_BYTES);
	assert_int_equal(h->ring_off[TX], 128 + GNTS_RING_STATS_BYTES +
			 GNTS_RING_SLEEP_BYTES + gnts_ring_bytes(256));
	for (int i = 0; i < GNTS_RING_COUNT; i++) {
		assert_ptr_equal(F.core[i].r, (char *)F.mem + h->ring_off[i]);
		assert_ptr_equal(F.nf[i].r, F.core[i].r);
		assert_int_equal(F.core[i].size, 256);
		assert_int_equal(F.nf[i].mask, 255);
		assert_int_equal(F.core[i].idx | F.core[i].cached_peer, 0);
		assert_int_equal(F.core[i].broken, 0);
		assert_int_equal(atomic_load(&F.core[i].r->prod), 0);
		assert_int_equal(atomic_load(&F.core[i].r->cons), 0);
	}
}

TEST(test_attach_bad_magic_eproto)
{
	HDR->magic ^= 1;
	assert_int_equal(reattach(F.bytes, 0), -EPROTO);
}

static const uint32_t bad_sizes[] = {
	0, 1, 8, GNTS_RING_MIN - 1, GNTS_RING_MIN + 1, 24, 100, 1000,
	GNTS_RING_MAX - 1, GNTS_RING_MAX + 1, GNTS_RING_MAX * 2,
};

TEST(test_format_rejects_bad_ring_size)
{
	/* Big enough for every size tried: only the size check can refuse. */
	size_t bytes = gnts_ring_region_bytes(GNTS_RING_MAX * 2);
	unsigned char *mem = region_alloc(bytes, 0xa5);

	for (size_t i = 0; i < sizeof(bad_sizes) / sizeof(bad_sizes[0]); i++) {
		assert_int_equal(gnts_ring_region_format(mem, bytes, bad_sizes[i]),
				 -EINVAL);
		/* Refused before writing anything. */
		assert_int_equal(mem[0], 0xa5);
		assert_int_equal(mem[63], 0xa5);
	}
	/* The bounds themselves are fine. */
	assert_int_equal(gnts_ring_region_format(mem, bytes, GNTS_RING_MIN), 0);
	assert_int_equal(gnts_ring_region_format(mem, bytes, GNTS_RING_MAX), 0);
	free(mem);
}

TEST(test_format_rejects_small_region)
{
	size_t need = gnts_ring_region_bytes(128);
	unsigned char *mem = region_alloc(need, 0xa5);

	assert_int_equal(gnts_ring_region_format(mem, need - 1, 128), -EINVAL);
	assert_int_equal(gnts_ring_region_format(mem, 0, 128), -EINVAL);
	assert_int_equal(mem[0], 0xa5);
	assert_int_equal(gnts_ring_region_format(mem, need, 128), 0);
	free(mem);
}

TEST(test_attach_rejects_bad_ring_size)
{
	size_t bytes = gnts_ring_region_bytes(GNTS_RING_MAX * 2);
	void *mem = region_alloc(bytes, 0);
	struct gnts_ring_port p[GNTS_RING_COUNT];

	/* The forged header is otherwise valid: a good size attaches. */
	forge_hdr(mem, bytes, 32);
	assert_int_equal(gnts_ring_region_attach(mem, bytes, 0, p), 0);
	assert_int_equal(p[TX].size, 32);
	for (size_t i = 0; i < sizeof(bad_sizes) / sizeof(bad_sizes[0]); i++) {
		forge_hdr(mem, bytes, bad_sizes[i]);
		assert_int_equal(gnts_ring_region_attach(mem, bytes, 0, p), -EINVAL);
		assert_int_equal(gnts_ring_region_attach(mem, bytes, bad_sizes[i], p),
				 -EINVAL);
	}
	free(mem);
}

TEST(test_attach_ring_off_outside_region)
{
	static const uint32_t bad_off[] = {
		0, 32, 64, 65,	/* overlaps header / control line / misaligned */
		0x7fffffc0u, UINT32_MAX - 63,	/* far outside */
	};
	struct gnts_ring_region_hdr *h = HDR;
	uint32_t good[GNTS_RING_COUNT] = { h->ring_off[RX], h->ring_off[TX],
					   h->ring_off[GNTS_RING_FREE] };

	for (int ring = 0; ring < GNTS_RING_COUNT; ring++) {
		for (size_t i = 0; i < sizeof(bad_off) / sizeof(bad_off[0]); i++) {
			h->ring_off[ring] = bad_off[i];
			assert_int_equal(reattach(F.bytes, 0), -EINVAL);
		}
		/* Last ring would end one cache line past the region. */
		h->ring_off[ring] = (uint32_t)(F.bytes - gnts_ring_bytes(64) + 64);
		assert_int_equal(reattach(F.bytes, 0), -EINVAL);
		h->ring_off[ring] = good[ring];
	}
	h->ring_off[TX] = good[RX];	/* both rings in one place */
	assert_int_equal(reattach(F.bytes, 0), -EINVAL);
	h->ring_off[TX] = good[TX];
	assert_int_equal(reattach(F.bytes, 0), 0);
	/* The header claims a bigger region than the mapping we have. */
	HDR->region_size = (uint32_t)F.bytes + 64;
	assert_int_equal(reattach(F.bytes, 0), -EINVAL);
	assert_int_equal(reattach(63, 0), -EINVAL);
}

TEST(test_attach_expect_size_mismatch)
{
	assert_int_equal(reattach(F.bytes, 128), -EINVAL);
	assert_int_equal(reattach(F.bytes, 512), -EINVAL);
	assert_int_equal(reattach(F.bytes, 256), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_format_attach_good_header, 256),
		T(test_attach_bad_magic_eproto, 64),
		cmocka_unit_test(test_format_rejects_bad_ring_size),
		cmocka_unit_test(test_format_rejects_small_region),
		cmocka_unit_test(test_attach_rejects_bad_ring_size),
		T(test_attach_ring_off_outside_region, 64),
		T(test_attach_expect_size_mismatch, 256),
	};

	return cmocka_run_group_tests_name("gntshare_ring_region", tests,
					   NULL, NULL);
}

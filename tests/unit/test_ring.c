/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of gntshare rings (ring.h, ring.c): format/attach checks, bursts,
 * wrap-around, hostile peer indices, contents, 2-thread stress.  The fixture
 * formats one region; the core's and the NF's port arrays attach to it.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
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

static void *
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

static int
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
SETUP(16) SETUP(64) SETUP(256) SETUP(1024)

static int
teardown(void **state UNUSED)
{
	free(F.mem);
	memset(&F, 0, sizeof(F));
	return 0;
}

/* Attach a scratch port array to F's region as it is now. */
static int
reattach(size_t bytes, uint32_t expect)
{
	struct gnts_ring_port p[GNTS_RING_COUNT];

	return gnts_ring_region_attach(F.mem, bytes, expect, p);
}

/* Descriptor that encodes @p seq in every field. */
static struct gnts_desc
mkdesc(uint32_t seq)
{
	return (struct gnts_desc){
		.buf = seq, .off = (uint16_t)(seq * 3), .len = (uint16_t)(seq >> 3),
		.action = (uint8_t)seq, .flags = (uint8_t)(seq >> 8),
		.dst = (uint16_t)(seq ^ 0x5a5a), .hash = seq * 2654435761u,
	};
}

static void
fill(struct gnts_desc *d, uint32_t first_seq, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		d[i] = mkdesc(first_seq + i);
}

static void
check_seq(const struct gnts_desc *d, uint32_t first_seq, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		struct gnts_desc e = mkdesc(first_seq + i);

		assert_memory_equal(&d[i], &e, sizeof(e));
	}
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
	/* after the control line and the stats area */
	assert_int_equal(h->ring_off[RX], 128 + GNTS_RING_STATS_BYTES);
	assert_int_equal(h->ring_off[TX], 128 + GNTS_RING_STATS_BYTES +
			 gnts_ring_bytes(256));
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

/* ---- burst semantics -------------------------------------------------- */

TEST(test_dequeue_empty_returns_0)
{
	struct gnts_desc d[32];

	assert_int_equal(gnts_ring_dequeue_burst(&F.nf[RX], d, 1), 0);
	assert_int_equal(gnts_ring_dequeue_burst(&F.nf[RX], d, 32), 0);
	assert_int_equal(gnts_ring_dequeue_burst(&F.core[TX], d, 32), 0);
	assert_int_equal(gnts_ring_count(&F.nf[RX], 0), 0);
	assert_int_equal(F.nf[RX].broken, 0);
	assert_int_equal(F.nf[RX].idx, 0);
}

TEST(test_enqueue_full_returns_0)
{
	struct gnts_desc d[16], one = mkdesc(99), out;

	fill(d, 0, 16);
	assert_int_equal(gnts_ring_enqueue_burst(&F.core[RX], d, 16), 16);
	assert_int_equal(gnts_ring_enqueue_burst(&F.core[RX], &one, 1), 0);
	assert_int_equal(gnts_ring_enqueue_burst(&F.core[RX], d, 16), 0);
	assert_int_equal(gnts_ring_count(&F.core[RX], 1), 16);
	assert_int_equal(gnts_ring_count(&F.nf[RX], 0), 16);
	assert_int_equal(F.core[RX].broken, 0);
	/* One slot freed: exactly one more fits. */
	assert_int_equal(gnts_ring_dequeue_burst(&F.nf[RX], &out, 1), 1);
	check_seq(&out, 0, 1);
	assert_int_equal(gnts_ring_enqueue_burst(&F.core[RX], d, 16), 1);
	assert_int_equal(atomic_load(&F.core[RX].r->prod), 17);
}

TEST(test_enqueue_burst_partial)
{
	struct gnts_desc d[16], out[16];

	fill(d, 0, 12);
	assert_int_equal(gnts_ring_enqueue_burst(&F.core[RX], d, 12), 12);
	fill(d, 12, 10);
	assert_int_equal(gnts_ring_enqueue_burst(&F.core[RX], d, 10), 4);
	assert_int_equal(gnts_ring_dequeue_burst(&F.nf[RX], out, 16), 16);
	check_seq(out, 0, 16);
}

TEST(test_dequeue_burst_partial)
{
	struct gnts_desc d[3], out[10];

	fill(d, 40, 3);
	assert_int_equal(gnts_ring_enqueue_burst(&F.nf[TX], d, 3), 3);
	memset(out, 0xee, sizeof(out));
	assert_int_equal(gnts_ring_dequeue_burst(&F.core[TX], out, 10), 3);
	check_seq(out, 40, 3);
	/* Nothing written past what was dequeued. */
	assert_int_equal(((unsigned char *)&out[3])[0], 0xee);
	assert_int_equal(gnts_ring_dequeue_burst(&F.core[TX], out, 10), 0);
}

TEST(test_rings_are_independent)
{
	struct gnts_desc d[4], out[4];

	fill(d, 7, 4);
	assert_int_equal(gnts_ring_enqueue_burst(&F.core[RX], d, 4), 4);
	assert_int_equal(gnts_ring_dequeue_burst(&F.core[TX], out, 4), 0);
	assert_int_equal(gnts_ring_dequeue_burst(&F.nf[RX], out, 4), 4);
	check_seq(out, 7, 4);
}

/* ---- wrap-around ------------------------------------------------------ */

/* Move F's ring @p ring to counter value @p v on both sides, consistently. */
static void
set_indices(int ring, uint32_t v)
{
	F.core[ring].idx = F.core[ring].cached_peer = v;
	F.nf[ring].idx = F.nf[ring].cached_peer = v;
	atomic_store(&F.core[ring].r->prod, v);
	atomic_store(&F.core[ring].r->cons, v);
}

TEST(test_wrap_slot_index)
{
	struct gnts_desc d[16], out[16];
	uint32_t in = 0, done = 0;

	/* Both indices to slot 13, then a burst of 10 spans 13..15,0..6. */
	fill(d, 0, 13);
	assert_int_equal(gnts_ring_enqueue_burst(&F.core[RX], d, 13), 13);
	assert_int_equal(gnts_ring_dequeue_burst(&F.nf[RX], out, 13), 13);
	check_seq(out, 0, 13);
	fill(d, 13, 10);
	assert_int_equal(gnts_ring_enqueue_burst(&F.core[RX], d, 10), 10);
	struct gnts_desc e = mkdesc(13 + 3);
	assert_memory_equal(&F.core[RX].r->desc[0], &e, sizeof(e));
	assert_int_equal(gnts_ring_dequeue_burst(&F.nf[RX], out, 16), 10);
	check_seq(out, 13, 10);
	in = done = 23;
	/* Uneven bursts, consumer lagging: every slot boundary gets crossed
	 * many times, and the producer sees partial room. */
	for (unsigned it = 0; it < 300; it++) {
		unsigned n = 1 + it * 7 % 11, room = 16 - (in - done);

		fill(d, in, n);
		unsigned k = gnts_ring_enqueue_burst(&F.core[RX], d, n);
		assert_int_equal(k, n < room ? n : room);
		in += k;
		unsigned m = gnts_ring_dequeue_burst(&F.nf[RX], out, 1 + it % 9);
		assert_int_equal(m, (1 + it % 9) < in - done ? 1 + it % 9 : in - done);
		check_seq(out, done, m);
		done += m;
	}
	assert_true(in > 16 * 50);
	unsigned m = gnts_ring_dequeue_burst(&F.nf[RX], out, 16);
	check_seq(out, done, m);
	assert_int_equal(done + m, in);
	assert_int_equal(F.nf[RX].broken | F.core[RX].broken, 0);
}

TEST(test_wrap_counter_uint32)
{
	const uint32_t start = UINT32_MAX - 5;	/* slot 58 of 64 */
	struct gnts_desc d[64], out[64];
	uint32_t in, done;

	set_indices(RX, start);
	fill(d, 0, 10);
	assert_int_equal(gnts_ring_enqueue_burst(&F.core[RX], d, 10), 10);
	assert_int_equal(atomic_load(&F.core[RX].r->prod), 4);	/* wrapped */
	assert_int_equal(gnts_ring_count(&F.nf[RX], 0), 10);
	assert_int_equal(gnts_ring_count(&F.core[RX], 1), 10);
	assert_int_equal(gnts_ring_dequeue_burst(&F.nf[RX], out, 4), 4);
	assert_int_equal(gnts_ring_dequeue_burst(&F.nf[RX], out + 4, 64), 6);
	check_seq(out, 0, 10);
	assert_int_equal(atomic_load(&F.nf[RX].r->cons), 4);
	/* Fill the TX ring completely across the wrap, drain in odd pieces. */
	set_indices(TX, UINT32_MAX - 20);
	in = done = 10;
	for (int round = 0; round < 5; round++) {
		fill(d, in, 64);
		assert_int_equal(gnts_ring_enqueue_burst(&F.nf[TX], d, 64), 64);
		assert_int_equal(gnts_ring_enqueue_burst(&F.nf[TX], d, 1), 0);
		in += 64;
		while (done < in) {
			unsigned n = gnts_ring_dequeue_burst(&F.core[TX], out, 13);

			assert_true(n > 0);
			check_seq(out, done, n);
			done += n;
		}
	}
	assert_int_equal(F.nf[TX].idx, (uint32_t)(UINT32_MAX - 20 + 5 * 64));
	assert_int_equal(F.core[TX].idx, F.nf[TX].idx);
	assert_int_equal(F.nf[TX].broken | F.core[TX].broken, 0);
	assert_int_equal(F.nf[RX].broken | F.core[RX].broken, 0);
}

/* ---- hostile peer ----------------------------------------------------- */

TEST(test_hostile_prod_too_far_ahead)
{
	struct gnts_desc out[16];

	atomic_store(&F.core[RX].r->prod, 17);
	assert_int_equal(gnts_ring_dequeue_burst(&F.nf[RX], out, 4), 0);
	assert_int_equal(F.nf[RX].broken, 1);
	assert_int_equal(F.nf[RX].idx, 0);
	assert_int_equal(atomic_load(&F.core[RX].r->cons), 0);
}

TEST(test_hostile_prod_full_ring_is_legal_one_more_is_not)
{
	struct gnts_desc out[16];

	atomic_store(&F.core[RX].r->prod, 16);
	assert_int_equal(gnts_ring_dequeue_burst(&F.nf[RX], out, 16), 16);
	assert_int_equal(F.nf[RX].broken, 0);
	atomic_store(&F.core[RX].r->prod, 16 + 17);
	assert_int_equal(gnts_ring_dequeue_burst(&F.nf[RX], out, 1), 0);
	assert_int_equal(F.nf[RX].broken, 1);
	assert_int_equal(F.nf[RX].idx, 16);
	assert_int_equal(atomic_load(&F.core[RX].r->cons), 16);
}

TEST(test_hostile_prod_backwards)
{
	struct gnts_desc d[5], out[5];

	fill(d, 0, 5);
	assert_int_equal(gnts_ring_enqueue_burst(&F.core[RX], d, 5), 5);
	assert_int_equal(gnts_ring_dequeue_burst(&F.nf[RX], out, 5), 5);
	atomic_store(&F.core[RX].r->prod, 2);	/* behind our cons of 5 */
	assert_int_equal(gnts_ring_dequeue_burst(&F.nf[RX], out, 1), 0);
	assert_int_equal(F.nf[RX].broken, 1);
	assert_int_equal(F.nf[RX].idx, 5);
}

TEST(test_hostile_cons_ahead_of_prod)
{
	struct gnts_desc d[16];

	/* Fill the ring so the producer has to look at cons again. */
	fill(d, 0, 16);
	assert_int_equal(gnts_ring_enqueue_burst(&F.core[RX], d, 16), 16);
	atomic_store(&F.core[RX].r->cons, 16 + 3);
	assert_int_equal(gnts_ring_enqueue_burst(&F.core[RX], d, 1), 0);
	assert_int_equal(F.core[RX].broken, 1);
	assert_int_equal(atomic_load(&F.core[RX].r->prod), 16);
	/* The NF's producer side is checked the same way. */
	assert_int_equal(gnts_ring_enqueue_burst(&F.nf[TX], d, 16), 16);
	atomic_store(&F.nf[TX].r->cons, UINT32_MAX);
	assert_int_equal(gnts_ring_enqueue_burst(&F.nf[TX], d, 2), 0);
	assert_int_equal(F.nf[TX].broken, 1);
}

/* The count checks the peer's index as the bursts do: a producer asking
 * how full its ring is (the core refilling a free ring) notices a consumer
 * index no honest peer writes, even while its cached room says it would
 * never have looked. */
TEST(test_hostile_cons_seen_by_count)
{
	struct gnts_desc d[4];

	fill(d, 0, 4);
	assert_int_equal(gnts_ring_enqueue_burst(&F.core[RX], d, 4), 4);
	assert_int_equal(gnts_ring_count(&F.core[RX], 1), 4);
	atomic_store(&F.core[RX].r->cons, 4);	/* all taken: legal */
	assert_int_equal(gnts_ring_count(&F.core[RX], 1), 0);
	assert_int_equal(F.core[RX].broken, 0);
	atomic_store(&F.core[RX].r->cons, 5);	/* ahead of prod */
	assert_int_equal(gnts_ring_count(&F.core[RX], 1), 16);
	assert_int_equal(F.core[RX].broken, 1);
	/* Broken: nothing more moves, although 12 slots looked free. */
	assert_int_equal(gnts_ring_enqueue_burst(&F.core[RX], d, 1), 0);
	assert_int_equal(atomic_load(&F.core[RX].r->prod), 4);
}

TEST(test_hostile_cons_too_far_behind_seen_by_count)
{
	struct gnts_desc d[16];

	fill(d, 0, 16);
	assert_int_equal(gnts_ring_enqueue_burst(&F.core[RX], d, 16), 16);
	atomic_store(&F.core[RX].r->cons, UINT32_MAX);	/* 17 behind */
	assert_int_equal(gnts_ring_count(&F.core[RX], 1), 16);
	assert_int_equal(F.core[RX].broken, 1);
}

TEST(test_hostile_prod_seen_by_count)
{
	struct gnts_desc out[4];

	atomic_store(&F.core[TX].r->prod, 16);		/* a full ring: legal */
	assert_int_equal(gnts_ring_count(&F.core[TX], 0), 16);
	assert_int_equal(F.core[TX].broken, 0);
	atomic_store(&F.core[TX].r->prod, 17);
	assert_int_equal(gnts_ring_count(&F.core[TX], 0), 16);
	assert_int_equal(F.core[TX].broken, 1);
	/* Broken: nothing more is read, although 16 looked ready. */
	assert_int_equal(gnts_ring_dequeue_burst(&F.core[TX], out, 4), 0);
	assert_int_equal(F.core[TX].idx, 0);
	assert_int_equal(atomic_load(&F.core[TX].r->cons), 0);
}

/* ---- descriptor contents ---------------------------------------------- */

TEST(test_descriptor_contents_preserved)
{
	static const struct gnts_desc in[3] = {
		{ 0xdeadbeefu, 0xfedc, 0xba98, 0x7f, 0x80, 0xa55a, 0x01234567u },
		{ UINT32_MAX, UINT16_MAX, UINT16_MAX, UINT8_MAX, UINT8_MAX,
		  UINT16_MAX, UINT32_MAX },
		{ 1, 2, 3, 4, 5, 6, 7 },
	};
	struct gnts_desc out[3];

	for (int ring = 0; ring < GNTS_RING_COUNT; ring++) {
		struct gnts_ring_port *prod = ring == RX ? &F.core[RX] : &F.nf[TX];
		struct gnts_ring_port *cons = ring == RX ? &F.nf[RX] : &F.core[TX];

		/* Start at slot 14 so the copies split across the end. */
		set_indices(ring, 14);
		assert_int_equal(gnts_ring_enqueue_burst(prod, in, 3), 3);
		assert_memory_equal(&prod->r->desc[14], &in[0], 16);
		assert_memory_equal(&prod->r->desc[0], &in[2], 16);
		memset(out, 0, sizeof(out));
		assert_int_equal(gnts_ring_dequeue_burst(cons, out, 3), 3);
		assert_memory_equal(out, in, sizeof(in));
	}
}

/* ---- two-thread stress ------------------------------------------------ */

#ifndef STRESS_N		/* TSAN_STRESS_N may set another count */
#define STRESS_N 10000000u
#endif

static atomic_int stress_stop, stress_prod_done;

static uint32_t
xorshift(uint32_t *s)
{
	*s ^= *s << 13, *s ^= *s >> 17, *s ^= *s << 5;
	return *s;
}

static void *
stress_producer(void *arg)
{
	struct gnts_ring_port *p = arg;
	struct gnts_desc d[32];
	uint32_t rnd = 0x12345678u, seq = 0;

	while (seq < STRESS_N && !p->broken && !atomic_load(&stress_stop)) {
		unsigned n = 1 + xorshift(&rnd) % 32, done = 0;

		if (n > STRESS_N - seq)
			n = STRESS_N - seq;
		fill(d, seq, n);
		/* The rest of a partial burst goes again with the same seqs. */
		while (done < n && !p->broken && !atomic_load(&stress_stop)) {
			unsigned k = gnts_ring_enqueue_burst(p, d + done, n - done);

			if (k == 0)
				sched_yield();
			done += k;
		}
		seq += done;
	}
	atomic_store(&stress_prod_done, 1);
	return NULL;
}

TEST(test_stress_two_threads_order)
{
	struct gnts_desc d[32];
	uint32_t rnd = 0x9e3779b9u, expect = 0, bad_at = UINT32_MAX;
	pthread_t th;

	assert_int_equal(F.size, 1024);
	assert_int_equal(pthread_create(&th, NULL, stress_producer, &F.core[RX]), 0);
	while (expect < STRESS_N && bad_at == UINT32_MAX && !F.nf[RX].broken) {
		int fin = atomic_load(&stress_prod_done);
		unsigned n = gnts_ring_dequeue_burst(&F.nf[RX], d, 1 + xorshift(&rnd) % 32);

		if (n == 0 && fin)
			break;		/* producer gave up: report below */
		if (n == 0)
			sched_yield();
		for (unsigned i = 0; i < n && bad_at == UINT32_MAX; i++) {
			struct gnts_desc e = mkdesc(expect + i);

			if (memcmp(&d[i], &e, sizeof(e)) != 0)
				bad_at = expect + i;
		}
		expect += n;
	}
	atomic_store(&stress_stop, 1);	/* the producer stops if we did */
	pthread_join(th, NULL);
	if (bad_at != UINT32_MAX)
		print_error("first wrong descriptor: seq %u\n", bad_at);
	assert_int_equal(bad_at, UINT32_MAX);
	assert_int_equal(F.nf[RX].broken, 0);
	assert_int_equal(F.core[RX].broken, 0);
	assert_int_equal(expect, STRESS_N);
	assert_int_equal(atomic_load(&F.core[RX].r->prod), STRESS_N);
	/* No duplicates or extras after the last one. */
	assert_int_equal(gnts_ring_dequeue_burst(&F.nf[RX], d, 32), 0);
}

#define T(name, n) cmocka_unit_test_setup_teardown(name, setup##n, teardown)

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
		T(test_dequeue_empty_returns_0, 16),
		T(test_enqueue_full_returns_0, 16),
		T(test_enqueue_burst_partial, 16),
		T(test_dequeue_burst_partial, 16),
		T(test_rings_are_independent, 16),
		T(test_wrap_slot_index, 16),
		T(test_wrap_counter_uint32, 64),
		T(test_hostile_prod_too_far_ahead, 16),
		T(test_hostile_prod_full_ring_is_legal_one_more_is_not, 16),
		T(test_hostile_prod_backwards, 16),
		T(test_hostile_cons_ahead_of_prod, 16),
		T(test_hostile_cons_seen_by_count, 16),
		T(test_hostile_cons_too_far_behind_seen_by_count, 16),
		T(test_hostile_prod_seen_by_count, 16),
		T(test_descriptor_contents_preserved, 16),
		T(test_stress_two_threads_order, 1024),
	};

	return cmocka_run_group_tests_name("gntshare_ring", tests, NULL, NULL);
}

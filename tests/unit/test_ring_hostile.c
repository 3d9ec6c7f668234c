/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of gntshare rings (ring.h, ring.c) against a hostile peer: a
 * producer index too far ahead or moving backwards, a consumer index ahead
 * of the producer's or too far behind, each seen by the bursts and by
 * gnts_ring_count() alike; the port is then broken and moves nothing
 * more.  The fixture (ring_fixture.h) formats one region; the core's and
 * the NF's port arrays attach to it.
 */
#include "ring_fixture.h"

SETUP(16)

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

int
main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_hostile_prod_too_far_ahead, 16),
		T(test_hostile_prod_full_ring_is_legal_one_more_is_not, 16),
		T(test_hostile_prod_backwards, 16),
		T(test_hostile_cons_ahead_of_prod, 16),
		T(test_hostile_cons_seen_by_count, 16),
		T(test_hostile_cons_too_far_behind_seen_by_count, 16),
		T(test_hostile_prod_seen_by_count, 16),
	};

	return cmocka_run_group_tests_name("gntshare_ring_hostile", tests,
					   NULL, NULL);
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the checks on descriptors an NF hands back
 * (dom0-core/validate.h): each rule on its own (the reserved flags
 * byte too), the order they are checked in, and the edges (last buffer,
 * last byte, last port); the data path's one test for the common case
 * (xnv_validate_next()) passes exactly the NEXT descriptors the rules
 * pass, and nothing else.
 */
#include <setjmp.h>	/* setjmp.h, stdarg.h, stddef.h: before cmocka.h */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "validate.h"

#define UNUSED __attribute__((unused))
#define TEST(name) static void name(void **state UNUSED)

#define N_BUFS   8
#define BUF_SIZE 2176
#define TAG      3		/* NF id 2 */

static uint16_t owner[N_BUFS] = { 0, TAG, TAG, 1, TAG, 0, 0, TAG };
static const struct xnv_pool_view pool = {
	.n_bufs = N_BUFS, .buf_size = BUF_SIZE, .owner = owner,
};
static struct xnv_config cfg;

static int
setup(void **state UNUSED)
{
	memset(&cfg, 0, sizeof(cfg));
	memset(cfg.service_by_id, 0xff, sizeof(cfg.service_by_id));
	cfg.n_ports = 2;
	cfg.service_by_id[5] = 0;
	cfg.service_by_id[XNV_MAX_SERVICE_ID] = 1;
	return 0;
}

static struct gnts_desc
desc(uint32_t buf, uint16_t off, uint16_t len, uint8_t action, uint16_t dst)
{
	struct gnts_desc d = { .buf = buf, .off = off, .len = len,
			       .action = action, .dst = dst };
	return d;
}

static enum xnv_bad
check(struct gnts_desc d)
{
	return xnv_validate(&d, &pool, TAG, &cfg);
}

TEST(good_descriptors_pass)
{
	assert_int_equal(check(desc(1, 128, 64, GNTS_ACT_DROP, 0)), XNV_OK);
	assert_int_equal(check(desc(2, 0, 1, GNTS_ACT_NEXT, 0)), XNV_OK);
	assert_int_equal(check(desc(4, 0, BUF_SIZE, GNTS_ACT_OUT, 1)), XNV_OK);
	assert_int_equal(check(desc(7, BUF_SIZE - 1, 1, GNTS_ACT_TO_SERVICE, 5)),
			 XNV_OK);
	assert_int_equal(check(desc(7, 0, 60, GNTS_ACT_TO_SERVICE,
				    XNV_MAX_SERVICE_ID)), XNV_OK);
}

TEST(index_past_the_pool_is_bad_index)
{
	assert_int_equal(check(desc(N_BUFS, 0, 64, GNTS_ACT_DROP, 0)),
			 XNV_BAD_INDEX);
	assert_int_equal(check(desc(UINT32_MAX, 0, 64, GNTS_ACT_DROP, 0)),
			 XNV_BAD_INDEX);
}

TEST(buffer_not_held_is_bad_owner)
{
	assert_int_equal(check(desc(0, 0, 64, GNTS_ACT_DROP, 0)), XNV_BAD_OWNER);
	assert_int_equal(check(desc(3, 0, 64, GNTS_ACT_DROP, 0)), XNV_BAD_OWNER);
}

TEST(empty_or_overflowing_data_is_bad_bounds)
{
	/* Empty: only a buffer handed back with DROP (gnts_desc_len_ok). */
	assert_int_equal(check(desc(1, 0, 0, GNTS_ACT_NEXT, 0)), XNV_BAD_BOUNDS);
	assert_int_equal(check(desc(1, 0, 0, GNTS_ACT_OUT, 0)), XNV_BAD_BOUNDS);
	assert_int_equal(check(desc(1, 0, 0, GNTS_ACT_DROP, 0)), XNV_OK);
	assert_int_equal(check(desc(1, 1, BUF_SIZE, GNTS_ACT_DROP, 0)),
			 XNV_BAD_BOUNDS);
	assert_int_equal(check(desc(1, BUF_SIZE, 1, GNTS_ACT_DROP, 0)),
			 XNV_BAD_BOUNDS);
	/* off + len computed without 16-bit wrap */
	assert_int_equal(check(desc(1, UINT16_MAX, UINT16_MAX, GNTS_ACT_DROP,
				    0)), XNV_BAD_BOUNDS);
}

TEST(unknown_action_is_bad_action)
{
	assert_int_equal(check(desc(1, 0, 64, 0xff, 0)), XNV_BAD_ACTION);
	assert_int_equal(check(desc(1, 0, 64, GNTS_ACT_NEXT + 1, 0)),
			 XNV_BAD_ACTION);
}

TEST(unknown_port_or_service_is_bad_dest)
{
	assert_int_equal(check(desc(1, 0, 64, GNTS_ACT_OUT, 2)), XNV_BAD_DEST);
	assert_int_equal(check(desc(1, 0, 64, GNTS_ACT_TO_SERVICE, 6)),
			 XNV_BAD_DEST);
	assert_int_equal(check(desc(1, 0, 64, GNTS_ACT_TO_SERVICE,
				    XNV_MAX_SERVICE_ID + 1)), XNV_BAD_DEST);
	assert_int_equal(check(desc(1, 0, 64, GNTS_ACT_TO_SERVICE, UINT16_MAX)),
			 XNV_BAD_DEST);
}

static struct gnts_desc
with_flags(struct gnts_desc d, uint8_t flags)
{
	d.flags = flags;
	return d;
}

TEST(reserved_flags_set_is_bad_flags)
{
	assert_int_equal(check(with_flags(desc(1, 0, 64, GNTS_ACT_DROP, 0), 1)),
			 XNV_BAD_FLAGS);
	assert_int_equal(check(with_flags(desc(2, 0, 64, GNTS_ACT_NEXT, 0),
					  0x80)), XNV_BAD_FLAGS);
	assert_int_equal(check(with_flags(desc(4, 0, 64, GNTS_ACT_OUT, 1),
					  0xff)), XNV_BAD_FLAGS);
	/* the NF's own empty buffer handed back: flags still count */
	assert_int_equal(check(with_flags(desc(1, 0, 0, GNTS_ACT_DROP, 0), 2)),
			 XNV_BAD_FLAGS);
}

/* Rules in order: the first broken one is reported. */
TEST(first_broken_rule_wins)
{
	assert_int_equal(check(with_flags(desc(N_BUFS, 0, 0, 0xff, 9), 1)),
			 XNV_BAD_INDEX);
	assert_int_equal(check(with_flags(desc(0, 0, 0, 0xff, 9), 1)),
			 XNV_BAD_OWNER);
	assert_int_equal(check(with_flags(desc(1, 0, 0, 0xff, 9), 1)),
			 XNV_BAD_BOUNDS);
	assert_int_equal(check(with_flags(desc(1, 0, 1, 0xff, 9), 1)),
			 XNV_BAD_FLAGS);
	assert_int_equal(check(desc(1, 0, 1, 0xff, 9)), XNV_BAD_ACTION);
	assert_int_equal(check(desc(1, 0, 1, GNTS_ACT_OUT, 9)), XNV_BAD_DEST);
}

/* Every combination of edge values: xnv_validate_next() is 1 exactly
 * where xnv_validate() passes a NEXT descriptor. */
TEST(fast_next_test_agrees_with_the_rules)
{
	static const uint32_t bufs[] = { 0, 1, 2, 3, 4, 5, 6, 7, N_BUFS,
					 N_BUFS + 1, UINT32_MAX };
	static const uint16_t offs[] = { 0, 1, BUF_SIZE - 1, BUF_SIZE,
					 BUF_SIZE + 1, UINT16_MAX };
	static const uint16_t lens[] = { 0, 1, 2, BUF_SIZE - 1, BUF_SIZE,
					 UINT16_MAX };
	static const uint8_t actions[] = { 0, GNTS_ACT_DROP, GNTS_ACT_OUT,
					   GNTS_ACT_TO_SERVICE, GNTS_ACT_NEXT,
					   5, 0xff };
	static const uint8_t flags[] = { 0, 1, 0x80 };
	static const uint16_t dsts[] = { 0, 1, 2, 5, 9 };
	unsigned b, o, l, a, f, t, passed = 0;

	for (b = 0; b < 11; b++)
	for (o = 0; o < 6; o++)
	for (l = 0; l < 6; l++)
	for (a = 0; a < 7; a++)
	for (f = 0; f < 3; f++)
	for (t = 0; t < 5; t++) {
		struct gnts_desc d = with_flags(desc(bufs[b], offs[o], lens[l],
						     actions[a], dsts[t]),
						flags[f]);
		int want = d.action == GNTS_ACT_NEXT && check(d) == XNV_OK;

		assert_int_equal(xnv_validate_next(&d, &pool, TAG), want);
		passed += want;
	}
	assert_true(passed > 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(good_descriptors_pass, setup),
		cmocka_unit_test_setup(index_past_the_pool_is_bad_index, setup),
		cmocka_unit_test_setup(buffer_not_held_is_bad_owner, setup),
		cmocka_unit_test_setup(empty_or_overflowing_data_is_bad_bounds,
				       setup),
		cmocka_unit_test_setup(unknown_action_is_bad_action, setup),
		cmocka_unit_test_setup(unknown_port_or_service_is_bad_dest,
				       setup),
		cmocka_unit_test_setup(reserved_flags_set_is_bad_flags, setup),
		cmocka_unit_test_setup(first_broken_rule_wins, setup),
		cmocka_unit_test_setup(fast_next_test_agrees_with_the_rules,
				       setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

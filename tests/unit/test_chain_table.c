/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the table of chain versions (dom0-core/chain_table.c):
 * equal chains share a version, a version with users or packets stays,
 * a full table says so, and a freed slot is reused.
 */
#include <errno.h>
#include <setjmp.h>	/* setjmp.h, stdarg.h, stddef.h: before cmocka.h */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "chain_table.h"

#define UNUSED __attribute__((unused))
#define TEST(name) static void name(void **state UNUSED)

static struct xnv_chain_slot t[XNV_MAX_CHAINS];
static uint8_t live[XNV_MAX_CHAINS];

static int
setup(void **state UNUSED)
{
	memset(t, 0, sizeof(t));
	memset(live, 0, sizeof(live));
	return 0;
}

/* A chain of @p n steps to services @p first, first + 1, ... */
static struct xnv_chain
chain(unsigned n, uint16_t first)
{
	struct xnv_chain ch = { .n = (uint8_t)n };
	unsigned i;

	for (i = 0; i < n; i++) {
		ch.s[i].kind = XNV_STEP_SERVICE;
		ch.s[i].id = (uint16_t)(first + i);
	}
	return ch;
}

TEST(equal_chains_share_a_version)
{
	struct xnv_chain a = chain(3, 1), b = chain(3, 1);
	int x = xnv_chain_table_get(t, &a), y = xnv_chain_table_get(t, &b);

	assert_true(x >= 0);
	assert_int_equal(x, y);
	assert_int_equal(t[x].users, 2);
}

TEST(different_chains_get_different_versions)
{
	struct xnv_chain a = chain(3, 1), b = chain(2, 1), d = chain(3, 2);
	struct xnv_chain e = chain(3, 1);
	int x, y, z;

	e.s[2].kind = XNV_STEP_PORT;
	x = xnv_chain_table_get(t, &a);
	y = xnv_chain_table_get(t, &b);
	z = xnv_chain_table_get(t, &d);
	assert_true(x != y && y != z && x != z);
	assert_true(xnv_chain_table_get(t, &e) != x);	/* same ids, kind */
}

TEST(sweep_frees_only_versions_nobody_names)
{
	struct xnv_chain a = chain(1, 1), b = chain(1, 2), d = chain(1, 3);
	int x = xnv_chain_table_get(t, &a), y = xnv_chain_table_get(t, &b);
	int z = xnv_chain_table_get(t, &d);

	xnv_chain_table_unuse(t, (uint16_t)x);	/* no user, no packet */
	xnv_chain_table_unuse(t, (uint16_t)y);	/* no user, a packet */
	live[y] = 1;
	xnv_chain_table_sweep(t, live);
	assert_int_equal(t[x].used, 0);
	assert_int_equal(t[y].used, 1);
	assert_int_equal(t[z].used, 1);		/* still a user */
	assert_int_equal(t[z].users, 1);
}

TEST(unuse_never_goes_below_zero_or_out_of_range)
{
	struct xnv_chain a = chain(1, 1);
	int x = xnv_chain_table_get(t, &a);

	xnv_chain_table_unuse(t, (uint16_t)x);
	xnv_chain_table_unuse(t, (uint16_t)x);
	assert_int_equal(t[x].users, 0);
	xnv_chain_table_unuse(t, XNV_MAX_CHAINS);	/* ignored */
	xnv_chain_table_unuse(t, 0xffff);
}

TEST(full_table_says_so_until_a_sweep_frees_a_slot)
{
	struct xnv_chain ch;
	unsigned i;
	int id;

	for (i = 0; i < XNV_MAX_CHAINS; i++) {
		ch = chain(2, (uint16_t)i);
		assert_int_equal(xnv_chain_table_get(t, &ch), (int)i);
	}
	ch = chain(2, XNV_MAX_CHAINS);
	assert_int_equal(xnv_chain_table_get(t, &ch), -ENOSPC);
	/* an equal chain still finds its version in a full table */
	ch = chain(2, 7);
	assert_int_equal(xnv_chain_table_get(t, &ch), 7);
	xnv_chain_table_unuse(t, 100);
	xnv_chain_table_sweep(t, live);
	ch = chain(2, XNV_MAX_CHAINS);
	id = xnv_chain_table_get(t, &ch);
	assert_int_equal(id, 100);
	assert_int_equal(t[id].users, 1);
	assert_int_equal(t[id].ch.s[0].id, XNV_MAX_CHAINS);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(equal_chains_share_a_version, setup),
		cmocka_unit_test_setup(different_chains_get_different_versions,
				       setup),
		cmocka_unit_test_setup(sweep_frees_only_versions_nobody_names,
				       setup),
		cmocka_unit_test_setup(
			unuse_never_goes_below_zero_or_out_of_range, setup),
		cmocka_unit_test_setup(
			full_table_says_so_until_a_sweep_frees_a_slot, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

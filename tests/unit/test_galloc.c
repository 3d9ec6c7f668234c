/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of what the gntalloc fallback of the xen backend adds to
 * libgntshare that runs without Xen: gnts_region_create_for() while the
 * fallback is off (a region granted to one domain, as create + grant),
 * gnts_region_shareable(), and the line a failed gntalloc share explains
 * itself with (galloc.c).  The fallback itself runs in tests/xen.
 */
#include <errno.h>
#include <setjmp.h>	/* setjmp.h, stdarg.h, stddef.h: before cmocka.h */
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "gntshare/gntshare.h"
#include "../../gntshare/galloc.h"

#define UNUSED __attribute__((unused))
#define TEST(name) static void name(void **state UNUSED)

static char err[512];

TEST(test_create_for_grants_that_domain_only)
{
	struct gnts_region *r = NULL;
	int ro = -1;

	assert_int_equal(gnts_region_shareable(), 1);
	assert_int_equal(gnts_region_create_for("for", 5000, 0, 7, 1, &r, err,
						sizeof(err)), 0);
	assert_int_equal(r->size, 8192);
	assert_int_equal(r->engine_made, 0);
	assert_int_equal(r->n_grants, 1);
	assert_ptr_equal(gnts_region_lookup(r->ref, 7, &ro), r);
	assert_int_equal(ro, 1);
	assert_null(gnts_region_lookup(r->ref, 8, NULL));
	/* Not the fallback: the region may still be shared. */
	assert_int_equal(gnts_region_grant(r, 8, 0), 0);
	gnts_region_destroy(r);
}

TEST(test_create_for_error_is_one_line)
{
	struct gnts_region *r = NULL;

	err[0] = '\0';
	assert_int_equal(gnts_region_create_for("empty", 0, 0, 7, 0, &r, err,
						sizeof(err)), -EINVAL);
	assert_null(r);
	assert_non_null(strstr(err, "region empty of 0 bytes"));
	assert_null(strchr(err, '\n'));
}

/* Over the limit: the limit first, with the numbers asked for. */
TEST(test_explain_names_limit_when_over_it)
{
	gnts_galloc_explain(err, sizeof(err), "xnv-pool-nf-a.0", 545, 5,
			    ENOSPC, 3600, 4096);
	print_message("# %s\n", err);
	assert_non_null(strstr(err, "gntalloc cannot grant 545 pages (region "
				    "xnv-pool-nf-a.0) to domain 5"));
	assert_non_null(strstr(err, "holds 3600"));
	assert_non_null(strstr(err, "`limit` is 4096 pages: raise that "
				    "module parameter"));
	assert_non_null(strstr(err, "/sys/module/xen_gntalloc/parameters/"
				    "limit"));
	assert_non_null(strstr(err, "gnttab_max_frames"));
	assert_null(strchr(err, '\n'));
}

/* Within the limit: the grant table is what ran out. */
TEST(test_explain_names_grant_table_within_limit)
{
	gnts_galloc_explain(err, sizeof(err), "xnv-ring-x", 3, 9, ENOSPC, 100,
			    4096);
	print_message("# %s\n", err);
	assert_non_null(strstr(err, "Dom0's grant table is likely full: raise "
				    "Xen's gnttab_max_frames"));
	assert_non_null(strstr(err, "`limit` is 4096 pages"));
	assert_null(strstr(err, "raise that module parameter"));
	/* Unknown limit: said so, both knobs still named. */
	gnts_galloc_explain(err, sizeof(err), "r", 3, 9, ENOMEM, 0, -1);
	assert_non_null(strstr(err, "`limit` is unknown"));
	assert_non_null(strstr(err, "gnttab_max_frames"));
	assert_non_null(strstr(err, strerror(ENOMEM)));
}

TEST(test_explain_other_errors_plain)
{
	gnts_galloc_explain(err, sizeof(err), "r", 1, 2, EINVAL, 0, 4096);
	assert_string_equal(err, "gntalloc cannot grant 1 page (region r) to "
			    "domain 2: Invalid argument");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_create_for_grants_that_domain_only),
		cmocka_unit_test(test_create_for_error_is_one_line),
		cmocka_unit_test(test_explain_names_limit_when_over_it),
		cmocka_unit_test(test_explain_names_grant_table_within_limit),
		cmocka_unit_test(test_explain_other_errors_plain),
	};

	return cmocka_run_group_tests_name("gntshare_galloc", tests, NULL,
					   NULL);
}

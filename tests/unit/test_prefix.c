/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of xnv-core's EAL file-prefix (xnv_eal_prefix,
 * dom0-core/eal_args.c): the FNV-1a 32 hash of the NF socket path, pinned
 * to the same strings as tests/integration/test_prefix.py pins xnv-ctl's
 * Python copy (dom0-core/python/xnv/prefix.py) to.  The two must agree, or
 * xnv-ctl --socket looks for the core's telemetry socket in the wrong place.
 */
#include <setjmp.h>	/* setjmp.h, stdarg.h, stddef.h: before cmocka.h */
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "eal_args.h"

#define UNUSED __attribute__((unused))
#define TEST(name) static void name(void **state UNUSED)

/* The same table as tests/integration/test_prefix.py. */
static const struct {
	const char *path, *prefix;
} pinned[] = {
	{ "/run/xnv/xnv.sock", "xnv-4680a967" },	/* the default --socket */
	{ "xnv.sock", "xnv-6a65f77b" },		/* relative: hashed as given */
	{ "/tmp/caf\xc3\xa9/xnv.sock", "xnv-923d4d31" },	/* bytes >= 0x80 */
	{ "", "xnv-811c9dc5" },			/* FNV-1a 32's offset basis */
};

/* An EAL argv as xnv_split_args leaves it: malloc'd, NULL-terminated. */
static char **
eal_argv(char *first, char *second)
{
	char **ev = calloc(4, sizeof(*ev));

	assert_non_null(ev);
	ev[0] = first;
	ev[1] = second;
	return ev;
}

/* Each pinned path gives its pinned prefix, as --file-prefix P at the end. */
TEST(prefix_is_fnv1a_of_the_socket_path)
{
	static char prog[] = "xnv-core";
	unsigned i;

	for (i = 0; i < sizeof(pinned) / sizeof(pinned[0]); i++) {
		char **ev = eal_argv(prog, NULL);
		int ec = 1;

		assert_int_equal(xnv_eal_prefix(&ec, &ev, pinned[i].path), 0);
		assert_int_equal(ec, 3);
		assert_string_equal(ev[1], "--file-prefix");
		assert_string_equal(ev[2], pinned[i].prefix);
		assert_null(ev[3]);
		free(ev);
	}
}

/* A --file-prefix the user gave is kept, and nothing is added. */
TEST(user_prefix_is_kept)
{
	static char prog[] = "xnv-core", opt[] = "--file-prefix=mine";
	char **ev = eal_argv(prog, opt);
	int ec = 2;

	assert_int_equal(xnv_eal_prefix(&ec, &ev, "/run/xnv/xnv.sock"), 0);
	assert_int_equal(ec, 2);
	assert_string_equal(ev[1], "--file-prefix=mine");
	assert_null(ev[2]);
	free(ev);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(prefix_is_fnv1a_of_the_socket_path),
		cmocka_unit_test(user_prefix_is_kept),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

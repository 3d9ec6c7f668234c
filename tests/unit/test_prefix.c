/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of xnv-core's EAL argument defaults (dom0-core/eal_args.c):
 * --iova-mode=va unless given (xnv_split_args), and the file-prefix
 * (xnv_eal_prefix): the FNV-1a 32 hash of the NF socket path, pinned
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

static int
count_opt(int ec, char **ev, const char *opt)
{
	int i, n = 0;

	for (i = 0; i < ec; i++)
		n += strncmp(ev[i], opt, strlen(opt)) == 0;
	return n;
}

/* --iova-mode=va is added to EAL's options once, before the user's, and
 * never after the --; an --iova-mode the user gave is left alone. */
TEST(iova_va_unless_given)
{
	static char prog[] = "xnv-core", l[] = "-l", zero[] = "0",
		    sep[] = "--", cfg[] = "--config", pa[] = "--iova-mode=pa";
	char *plain[] = { prog, l, zero, sep, cfg, zero, NULL };
	char *given[] = { prog, pa, sep, cfg, zero, NULL };
	char **ev, **av;
	int ec, ac;

	assert_int_equal(xnv_split_args(6, plain, &ec, &ev, &ac, &av), 0);
	assert_int_equal(count_opt(ec, ev, "--iova-mode"), 1);
	assert_int_equal(count_opt(ec, ev, "--iova-mode=va"), 1);
	assert_string_equal(ev[ec - 2], "-l");
	assert_int_equal(ac, 3);
	assert_string_equal(av[1], "--config");
	free(ev);
	assert_int_equal(xnv_split_args(5, given, &ec, &ev, &ac, &av), 0);
	assert_int_equal(count_opt(ec, ev, "--iova-mode"), 1);
	assert_int_equal(count_opt(ec, ev, "--iova-mode=pa"), 1);
	free(ev);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(prefix_is_fnv1a_of_the_socket_path),
		cmocka_unit_test(user_prefix_is_kept),
		cmocka_unit_test(iova_va_unless_given),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dom0-core/config_file.c: the config file's reader.  What it keeps
 * (values, and the line of every section and key), what it refuses (in
 * one line starting FILE:LINE), and where xnv_ini_locate() puts an error
 * that names a section and a key.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "config_file.h"

static char path[64];

static void
write_file(const char *text)
{
	FILE *f;

	snprintf(path, sizeof(path), "/tmp/test_config_file.%d.ini",
		 (int)getpid());
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* Read @p text; 0 and @p ini filled, or the error line in @p err. */
static int
read_text(const char *text, struct xnv_ini *ini, char *err, size_t errlen)
{
	int rc;

	write_file(text);
	rc = xnv_ini_read(path, ini, err, errlen);
	unlink(path);
	return rc;
}

/* @p err is "PATH" + @p rest. */
static void
assert_err(const char *err, const char *rest)
{
	char want[512];

	snprintf(want, sizeof(want), "%s%s", path, rest);
	assert_string_equal(err, want);
}

static void
test_values_comments_and_lines(void **state)
{
	struct xnv_ini ini;
	char err[256];

	(void)state;
	assert_int_equal(read_text("# comment\n  # indented\n[core] ; c\n"
				   "ring_size =  256  ; after\n\n"
				   "[port in]\ndev = net_pcap0,rx_pcap=a=b.pcap\n"
				   "chain = x -> out\n", &ini, err,
				   sizeof(err)), 0);
	assert_string_equal(rte_cfgfile_get_entry(ini.cf, "core",
						  "ring_size"), "256");
	assert_string_equal(rte_cfgfile_get_entry(ini.cf, "port in", "dev"),
			    "net_pcap0,rx_pcap=a=b.pcap");
	assert_int_equal(xnv_ini_line(&ini, "core", NULL), 3);
	assert_int_equal(xnv_ini_line(&ini, "core", "ring_size"), 4);
	assert_int_equal(xnv_ini_line(&ini, "port in", NULL), 6);
	assert_int_equal(xnv_ini_line(&ini, "port in", "chain"), 8);
	assert_int_equal(xnv_ini_line(&ini, "port in", "group"), 0);
	assert_int_equal(xnv_ini_line(&ini, "port out", NULL), 0);
	xnv_ini_close(&ini);
}

static void
test_key_twice_refused(void **state)
{
	struct xnv_ini ini;
	char err[256];

	(void)state;
	assert_int_equal(read_text("[core]\nburst = 8\n[port a]\nburst = 9\n"
				   "dev = x\ndev = y\n", &ini, err,
				   sizeof(err)), -EINVAL);
	assert_err(err, ":6: [port a]: dev given twice (first on line 5)");
}

static void
test_section_twice_refused(void **state)
{
	struct xnv_ini ini;
	char err[256];

	(void)state;
	assert_int_equal(read_text("[port a]\ndev = x\n[port b]\n[ port a ]\n",
				   &ini, err, sizeof(err)), -EINVAL);
	assert_err(err, ":4: [port a]: declared twice (first on line 1)");
}

static void
test_bad_lines(void **state)
{
	static const struct { const char *text, *err; } cases[] = {
		{ "[core]\nburst\n", ":2: expected 'key = value' or "
		  "'[section]', got 'burst'" },
		{ "burst = 1\n", ":1: 'key = value' before any [section]" },
		{ "[core\n", ":1: section header without closing ']'" },
		{ "[ ]\n", ":1: empty section name" },
		{ "[core]\n = 1\n", ":2: empty key" },
		{ "[core]\nburst = ; none\n", ":2: empty value (leave the key "
		  "out instead)" },
	};
	struct xnv_ini ini;
	char err[256];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(read_text(cases[i].text, &ini, err,
					   sizeof(err)), -EINVAL);
		assert_err(err, cases[i].err);
	}
}

static void
test_long_line_refused(void **state)
{
	char text[1200], err[256];
	struct xnv_ini ini;

	(void)state;
	memset(text, 'x', sizeof(text));
	memcpy(text, "[core]\na = ", 11);
	text[sizeof(text) - 2] = '\n';
	text[sizeof(text) - 1] = '\0';
	assert_int_equal(read_text(text, &ini, err, sizeof(err)), -EINVAL);
	assert_err(err, ":2: line longer than 1024 characters");
}

static void
test_missing_file(void **state)
{
	struct xnv_ini ini;
	char err[256];

	(void)state;
	assert_int_equal(xnv_ini_read("/nonexistent/x.ini", &ini, err,
				      sizeof(err)), -ENOENT);
	assert_string_equal(err, "/nonexistent/x.ini: No such file or "
			    "directory");
}

/* Where an error naming a section and a key goes. */
static void
test_locate(void **state)
{
	static const struct { const char *msg, *where; } cases[] = {
		{ "[port in] dev = eth0: no", ":3: " },
		{ "[port in] chain step 'x' is not", ":4: " },
		{ "[port in]: unknown key 'colour' (known: ...)", ":5: " },
		{ "[flow f]: proto 'x' is not a name", ":7: " },
		{ "[flow f]: no chain", ":6: " },
		{ "[port in]: more than 16 ports", ":2: " },
		{ "[port nosuch] x", ": " },
		{ "no [port NAME] section", ": " },
	};
	struct xnv_ini ini;
	char err[512], want[512];
	size_t i;

	(void)state;
	assert_int_equal(read_text("[core]\n[port in]\ndev = eth0\n"
				   "chain = x\ncolour = red\n[flow f]\n"
				   "proto = x\n", &ini, err, sizeof(err)), 0);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(err, sizeof(err), "%s", cases[i].msg);
		xnv_ini_locate(&ini, err, sizeof(err));
		snprintf(want, sizeof(want), "%s%s%s", path, cases[i].where,
			 cases[i].msg);
		assert_string_equal(err, want);
		/* once located, left alone */
		xnv_ini_locate(&ini, err, sizeof(err));
		assert_string_equal(err, want);
	}
	xnv_ini_close(&ini);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_values_comments_and_lines),
		cmocka_unit_test(test_key_twice_refused),
		cmocka_unit_test(test_section_twice_refused),
		cmocka_unit_test(test_bad_lines),
		cmocka_unit_test(test_long_line_refused),
		cmocka_unit_test(test_missing_file),
		cmocka_unit_test(test_locate),
	};

	return cmocka_run_group_tests_name("config_file", tests, NULL, NULL);
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the numbers the xen backend reads from XenStore nodes
 * the other side writes (gntshare/xen_keys.c): gnts_xs_uint() (one
 * spelling per number, the length given, the bound) and the doorbell a
 * guest is offered (gnts_xen_bell_parse(): `event-channel` and
 * `backend-id`).  No Xen needed; binding the port itself runs in
 * tests/xen.
 */
#include <errno.h>
#include <setjmp.h>	/* setjmp.h, stdarg.h, stddef.h: before cmocka.h */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "gntshare/xen.h"

#define UNUSED __attribute__((unused))
#define TEST(name) static void name(void **state UNUSED)

/* gnts_xs_uint of the whole C string @p v: the value, or -1. */
static int64_t
num(const char *v, uint32_t max)
{
	uint32_t x = 7;

	if (gnts_xs_uint(v, strlen(v), max, &x) < 0) {
		assert_int_equal(x, 7);	/* untouched on refusal */
		return -1;
	}
	return x;
}

TEST(test_uint_plain_numbers)
{
	assert_int_equal(num("0", 1), 0);
	assert_int_equal(num("1", 1), 1);
	assert_int_equal(num("4095", 4095), 4095);
	assert_int_equal(num("131071", GNTS_XEN_EVTCHN_MAX), 131071);
	assert_int_equal(num("4294967295", UINT32_MAX), 4294967295ll);
}

TEST(test_uint_one_spelling_only)
{
	static const char *const bad[] = {
		"", "00", "01", "007", "+1", "-1", " 1", "1 ", "1\n", "0x10",
		"1e3", "1.0", "\xd9\xa1",	/* an Arabic-Indic one, UTF-8 */
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(num(bad[i], UINT32_MAX), -1);
}

TEST(test_uint_bound)
{
	assert_int_equal(num("2", 1), -1);
	assert_int_equal(num("4096", 4095), -1);
	assert_int_equal(num("131072", GNTS_XEN_EVTCHN_MAX), -1);
	assert_int_equal(num("4294967296", UINT32_MAX), -1);
	/* far past 64 bits: refused, not wrapped */
	assert_int_equal(num("99999999999999999999999999", UINT32_MAX), -1);
	assert_int_equal(num("18446744073709551617", UINT32_MAX), -1);
}

TEST(test_uint_length_is_the_value)
{
	uint32_t x = 0;

	/* XenStore values are counted, not terminated: only len bytes */
	assert_int_equal(gnts_xs_uint("12", 1, 100, &x), 0);
	assert_int_equal(x, 1);
	/* a NUL inside the value is not a digit */
	assert_int_equal(gnts_xs_uint("1\0" "2", 3, 1000, &x), -EINVAL);
	assert_int_equal(gnts_xs_uint("5", 0, 100, &x), -EINVAL);
}

/* gnts_xen_bell_parse of C strings (@p dom NULL: no backend-id). */
static int
bell(const char *port, const char *dom, uint32_t *p, uint32_t *d)
{
	return gnts_xen_bell_parse(port, strlen(port), dom,
				   dom != NULL ? strlen(dom) : 0, p, d);
}

TEST(test_bell_offer_good)
{
	uint32_t p = 0, d = 99;

	assert_int_equal(bell("17", NULL, &p, &d), 0);
	assert_int_equal(p, 17);
	assert_int_equal(d, 0);		/* no backend-id: Dom0 */
	assert_int_equal(bell("1", "0", &p, &d), 0);
	assert_int_equal(p, 1);
	assert_int_equal(d, 0);
	assert_int_equal(bell("131071", "32751", &p, &d), 0);
	assert_int_equal(p, GNTS_XEN_EVTCHN_MAX);
	assert_int_equal(d, GNTS_XEN_MAX_DOMID);
}

TEST(test_bell_offer_refused)
{
	static const char *const ports[] = {
		"0", "", "-1", "017", "131072", "4294967295", "17 ", "x",
	};
	static const char *const doms[] = {
		"", "00", "-1", "32752", "65535", "1 ", "dom0",
	};
	uint32_t p = 5, d = 6;

	for (size_t i = 0; i < sizeof(ports) / sizeof(ports[0]); i++)
		assert_int_equal(bell(ports[i], "0", &p, &d), -EINVAL);
	for (size_t i = 0; i < sizeof(doms) / sizeof(doms[0]); i++)
		assert_int_equal(bell("17", doms[i], &p, &d), -EINVAL);
	/* nothing written on refusal */
	assert_int_equal(p, 5);
	assert_int_equal(d, 6);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_uint_plain_numbers),
		cmocka_unit_test(test_uint_one_spelling_only),
		cmocka_unit_test(test_uint_bound),
		cmocka_unit_test(test_uint_length_is_the_value),
		cmocka_unit_test(test_bell_offer_good),
		cmocka_unit_test(test_bell_offer_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

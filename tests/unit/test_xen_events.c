/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the xen server's watch events and their per-domain rate
 * (gntshare/xen_events.c), the parts that need no XenStore: the strict
 * parse of a frontend state path, the token bucket of each domain, a
 * deferred device stepped later with no further event, and the log line
 * at most once per domain per second.  The flood itself runs in
 * tests/xen (state-flood-rate-limited).
 */
#include <setjmp.h>	/* setjmp.h, stdarg.h, stddef.h: before cmocka.h */
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "../../gntshare/xen_server_pvt.h"

#define UNUSED __attribute__((unused))
#define TEST(name) static void name(void **state UNUSED)

#define T0 100000u		/* ms: any start, far from 0 */

static char last_line[512];
static unsigned n_lines;

static void
capture(int level, const char *msg)
{
	(void)level;
	snprintf(last_line, sizeof(last_line), "%s", msg);
	n_lines++;
}

/* A server with device @p devid of domain @p domid in slot @p slot. */
static void
add(struct gnts_xen_server *s, unsigned slot, unsigned domid, unsigned devid)
{
	s->devs[slot].used = 1;
	s->devs[slot].domid = (uint16_t)domid;
	s->devs[slot].devid = (uint8_t)devid;
}

static const char *
fe(unsigned domid, unsigned devid)
{
	static char p[96];

	snprintf(p, sizeof(p), "/local/domain/%u/device/xnv/%u/state", domid,
		 devid);
	return p;
}

static int
setup(void **state)
{
	*state = calloc(1, sizeof(struct gnts_xen_server));
	n_lines = 0;
	last_line[0] = '\0';
	gnts_set_logger(capture);
	return *state == NULL;
}

static int
teardown(void **state)
{
	free(*state);
	gnts_set_logger(NULL);
	return 0;
}

TEST(test_fe_path_exact)
{
	unsigned dom = 0, dev = 99;

	assert_int_equal(gnts_xen_fe_path(fe(7, 0), &dom, &dev), 0);
	assert_int_equal(dom, 7);
	assert_int_equal(dev, 0);
	assert_int_equal(gnts_xen_fe_path(fe(GNTS_XEN_MAX_DOMID,
					     GNTS_XEN_MAX_DEVS - 1), &dom,
					  &dev), 0);
	assert_int_equal(dom, GNTS_XEN_MAX_DOMID);
	assert_int_equal(dev, GNTS_XEN_MAX_DEVS - 1);
}

TEST(test_fe_path_strict)
{
	static const char *const bad[] = {
		"", "/", "local/domain/7/device/xnv/0/state",
		"/local/domain/7/device/xnv/0/state/x",
		"/local/domain/7/device/xnv/0/state/",
		"/local/domain/7/device/xnv/0/stat",
		"/local/domain/7/device/xnv/0/statex",
		"/local/domain/07/device/xnv/0/state",
		"/local/domain/7/device/xnv/00/state",
		"/local/domain/0/device/xnv/0/state",
		"/local/domain/32752/device/xnv/0/state",
		"/local/domain/99999999999999999999/device/xnv/0/state",
		"/local/domain/7/device/xnv/16/state",
		"/local/domain/+7/device/xnv/0/state",
		"/local/domain/-7/device/xnv/0/state",
		"/local/domain//device/xnv/0/state",
		"/local/domain/7/device/vif/0/state",
		"/local/domain/7//device/xnv/0/state",
		"/local/domain/0/backend/xnv/7/0/state",
	};
	unsigned dom, dev, i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (gnts_xen_fe_path(bad[i], &dom, &dev) != -EINVAL)
			fail_msg("accepted '%s'", bad[i]);
}

TEST(test_burst_then_deferred)
{
	struct gnts_xen_server *s = *state;
	unsigned i;

	add(s, 0, 7, 0);
	for (i = 0; i < GNTS_XEN_EVENT_BURST; i++)
		gnts_xen_fe_event(s, fe(7, 0), T0);
	assert_true(s->devs[0].due);
	assert_false(s->devs[0].pending);
	assert_int_equal(s->events_deferred, 0);
	gnts_xen_fe_event(s, fe(7, 0), T0);
	assert_true(s->devs[0].pending);
	assert_true(s->any_pending);
	assert_int_equal(s->events_deferred, 1);
}

/* Over the rate, the device waits for a token; it gets one with no
 * further event, and is stepped once for all the events it missed. */
TEST(test_pending_stepped_without_new_event)
{
	struct gnts_xen_server *s = *state;
	const unsigned per_token = 1000 / GNTS_XEN_EVENT_RATE;
	unsigned i;

	add(s, 0, 7, 0);
	for (i = 0; i < GNTS_XEN_EVENT_BURST + 100; i++)
		gnts_xen_fe_event(s, fe(7, 0), T0);
	assert_int_equal(s->events_deferred, 100);
	s->devs[0].due = 0;	/* as if stepped for the first ones */
	assert_false(gnts_xen_may_step(s, &s->devs[0], T0));
	assert_false(gnts_xen_may_step(s, &s->devs[0], T0 + per_token - 1));
	assert_true(gnts_xen_may_step(s, &s->devs[0], T0 + per_token));
	s->devs[0].pending = 0;	/* what gnts_xen_step() does */
	assert_false(gnts_xen_may_step(s, &s->devs[0], T0 + 10 * per_token));
}

/* Tokens come back at the rate: over 10 s a flooding domain has at most
 * rate x 10 + burst events acted on. */
TEST(test_rate_over_time)
{
	struct gnts_xen_server *s = *state;
	unsigned acted = 0, t;

	add(s, 0, 7, 0);
	for (t = 0; t <= 10000; t++) {
		int k;

		for (k = 0; k < 20; k++) {
			uint64_t d0 = s->events_deferred;

			gnts_xen_fe_event(s, fe(7, 0), T0 + t);
			acted += s->events_deferred == d0;
		}
	}
	assert_true(acted <= GNTS_XEN_EVENT_RATE * 10 + GNTS_XEN_EVENT_BURST);
	assert_true(acted >= GNTS_XEN_EVENT_RATE * 10 * 9 / 10);
}

TEST(test_domains_have_own_budgets)
{
	struct gnts_xen_server *s = *state;
	unsigned i;

	add(s, 0, 7, 0);
	add(s, 1, 7, 1);
	add(s, 2, 8, 0);
	for (i = 0; i < 2 * GNTS_XEN_EVENT_BURST; i++)
		gnts_xen_fe_event(s, fe(7, i % 2), T0);
	assert_int_equal(s->events_deferred, GNTS_XEN_EVENT_BURST);
	assert_true(s->devs[0].pending && s->devs[1].pending);
	gnts_xen_fe_event(s, fe(8, 0), T0);
	assert_true(s->devs[2].due);
	assert_false(s->devs[2].pending);
	assert_int_equal(s->events_deferred, GNTS_XEN_EVENT_BURST);
}

TEST(test_unknown_device_and_odd_path_ignored)
{
	struct gnts_xen_server *s = *state;
	unsigned i;

	add(s, 0, 7, 0);
	gnts_xen_fe_event(s, fe(9, 0), T0);
	assert_false(s->devs[0].due);
	for (i = 0; i < 100; i++)
		gnts_xen_fe_event(s, "/local/domain/7/device/xnv/0/state/x",
				  T0);
	assert_false(s->devs[0].due);
	assert_int_equal(n_lines, 1);	/* one line, the rest counted */
	assert_non_null(strstr(last_line, "not a frontend state node"));
	gnts_xen_rate_report(s, T0 + 1000);
	assert_int_equal(n_lines, 2);
	assert_non_null(strstr(last_line, "99 more"));
}

/* One line per domain per second at most, with the counts; none for a
 * domain within its rate; its last second is told when it goes. */
TEST(test_one_line_per_second)
{
	struct gnts_xen_server *s = *state;
	char want[160];
	unsigned i, t;

	add(s, 0, 7, 0);
	add(s, 1, 8, 0);
	for (t = 0; t < 3000; t += 10) {
		for (i = 0; i < 100; i++)		/* 10000/s */
			gnts_xen_fe_event(s, fe(7, 0), T0 + t);
		if (t % (2000 / GNTS_XEN_EVENT_RATE) == 0)	/* rate / 2 */
			gnts_xen_fe_event(s, fe(8, 0), T0 + t);
		gnts_xen_rate_report(s, T0 + t);
	}
	assert_int_equal(n_lines, 2);	/* seconds 0 and 1 of domain 7 */
	snprintf(want, sizeof(want), "Xen domain 7: 10000 xnv state changes "
		 "in 1.0 s, over %u/s: handled at most %u/s, %u deferred",
		 GNTS_XEN_EVENT_RATE, GNTS_XEN_EVENT_RATE,
		 10000 - 1000 / (1000 / GNTS_XEN_EVENT_RATE));
	assert_string_equal(last_line, want);
	s->devs[0].used = 0;
	gnts_xen_forget_domain(s, 7, T0 + 2990);
	assert_int_equal(n_lines, 3);
	assert_non_null(strstr(last_line, "Xen domain 7: 9900 xnv state "
			       "changes in 1.0 s"));
	gnts_xen_rate_report(s, T0 + 10000);
	assert_int_equal(n_lines, 3);	/* domain 8 stayed within */
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fe_path_exact),
		cmocka_unit_test(test_fe_path_strict),
		cmocka_unit_test_setup_teardown(test_burst_then_deferred,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_pending_stepped_without_new_event, setup,
			teardown),
		cmocka_unit_test_setup_teardown(test_rate_over_time, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_domains_have_own_budgets,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_unknown_device_and_odd_path_ignored, setup,
			teardown),
		cmocka_unit_test_setup_teardown(test_one_line_per_second,
						setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

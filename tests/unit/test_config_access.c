/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of who may do what (dom0-core/config_access.c): allow_uids /
 * allow_gids lists (numbers, names, bad entries), [core] socket_mode and
 * socket_group, may_send_to, and the join and send decisions made from
 * them.  Every refusal is one line naming the key and what is wrong.
 */
#include <errno.h>
#include <setjmp.h>	/* setjmp.h, stdarg.h, stddef.h: before cmocka.h */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "config.h"

#define UNUSED __attribute__((unused))
#define TEST(name) static void name(void **state UNUSED)

/* config.c's lookup (it needs rte_cfgfile to link): by name, in order. */
int
xnv_config_group(const struct xnv_config *c, const char *name)
{
	for (int i = 0; i < c->n_groups; i++)
		if (strcmp(c->groups[i].name, name) == 0)
			return i;
	return -1;
}

static struct xnv_config cfg;
static char err[256];

/* Three groups a, b, c with the defaults (uid 0), one service "svc". */
static int
setup(void **state UNUSED)
{
	memset(&cfg, 0, sizeof(cfg));
	memset(err, 0, sizeof(err));
	for (int i = 0; i < 3; i++) {
		snprintf(cfg.groups[i].name, XNV_NAME_LEN, "%c", 'a' + i);
		cfg.groups[i].access.uids.n = 1;
	}
	cfg.n_groups = 3;
	snprintf(cfg.services[0].name, XNV_NAME_LEN, "svc");
	cfg.n_services = 1;
	return 0;
}

static int
ids(const char *v, int users, struct xnv_ids *out)
{
	return xnv_config_ids("group a", users ? "allow_uids" : "allow_gids",
			      v, users, out, err, sizeof(err));
}

TEST(ids_numbers_and_names)
{
	struct xnv_ids l;

	assert_int_equal(ids("0 1000,65534", 1, &l), 0);
	assert_int_equal(l.n, 3);
	assert_int_equal(l.id[0], 0);
	assert_int_equal(l.id[1], 1000);
	assert_int_equal(l.id[2], 65534);
	assert_int_equal(ids("root 7", 1, &l), 0);	/* getpwnam */
	assert_int_equal(l.n, 2);
	assert_int_equal(l.id[0], 0);
	assert_int_equal(ids("root", 0, &l), 0);	/* getgrnam */
	assert_int_equal(l.id[0], 0);
	assert_int_equal(ids("", 1, &l), 0);		/* nobody by uid */
	assert_int_equal(l.n, 0);
}

TEST(ids_bad_entries_refused)
{
	struct xnv_ids l = { .n = 1, .id = { 42 } };
	char many[128] = "";

	assert_int_equal(ids("0 no-such-user-xnv", 1, &l), -EINVAL);
	assert_string_equal(err, "[group a] allow_uids = 0 no-such-user-xnv: "
			    "no such user 'no-such-user-xnv'");
	assert_int_equal(ids("no-such-group-xnv", 0, &l), -EINVAL);
	assert_string_equal(err, "[group a] allow_gids = no-such-group-xnv: "
			    "no such group 'no-such-group-xnv'");
	assert_int_equal(ids("12a", 1, &l), -EINVAL);
	assert_string_equal(err, "[group a] allow_uids = 12a: '12a' is "
			    "neither a user number nor a name");
	assert_int_equal(ids("4294967295", 1, &l), -EINVAL);	/* (uid_t)-1 */
	for (int i = 0; i <= XNV_MAX_IDS; i++)
		snprintf(many + strlen(many), sizeof(many) - strlen(many),
			 "%d ", i);
	assert_int_equal(ids(many, 1, &l), -EINVAL);
	assert_non_null(strstr(err, "more than 16 entries"));
	/* nothing changed */
	assert_int_equal(l.n, 1);
	assert_int_equal(l.id[0], 42);
}

static int
perm(const char *mode, const char *group)
{
	return xnv_config_socket_perm(&cfg, mode, group, err, sizeof(err));
}

TEST(socket_mode_and_group)
{
	assert_int_equal(perm(NULL, NULL), 0);
	assert_int_equal(cfg.socket_mode, 0600);
	assert_int_equal(cfg.socket_group_set, 0);
	assert_int_equal(perm("666", NULL), 0);
	assert_int_equal(cfg.socket_mode, 0666);
	assert_int_equal(perm("0660", "root"), 0);
	assert_int_equal(cfg.socket_mode, 0660);
	assert_int_equal(cfg.socket_group_set, 1);
	assert_int_equal(cfg.socket_gid, 0);
	assert_int_equal(perm("0660", "65534"), 0);
	assert_int_equal(cfg.socket_gid, 65534);
}

TEST(socket_bad_values_refused)
{
	static const char *const bad[] = { "0999", "1777", "abc", "",
		"-600", "0x1ff", "00660", "06 60", "0000", "0066", "0460" };

	assert_int_equal(perm("0640", NULL), 0);
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(perm(bad[i], NULL), -EINVAL);
		assert_non_null(strstr(err, "[core] socket_mode = "));
		assert_non_null(strstr(err, "expected an octal mode"));
	}
	assert_int_equal(perm("0660", "no-such-group-xnv"), -EINVAL);
	assert_string_equal(err, "[core] socket_group = no-such-group-xnv: no "
			    "such group 'no-such-group-xnv'");
	/* a group that could not connect anyway */
	assert_int_equal(perm("0640", "root"), -EINVAL);
	assert_non_null(strstr(err, "socket_mode 0640 does not let that "
			       "group connect"));
	/* nothing changed */
	assert_int_equal(cfg.socket_mode, 0640);
	assert_int_equal(cfg.socket_group_set, 0);
}

TEST(may_send_to)
{
	assert_int_equal(xnv_config_send_to(&cfg, 0, "group a", "b, c", err,
					    sizeof(err)), 0);
	assert_int_equal(cfg.groups[0].may_send_to, 6);
	assert_true(xnv_config_may_send(&cfg, 0, 1));
	assert_true(xnv_config_may_send(&cfg, 0, 2));
	assert_false(xnv_config_may_send(&cfg, 1, 0));	/* one way only */
	assert_true(xnv_config_may_send(&cfg, 1, 1));	/* its own */
	assert_int_equal(xnv_config_send_to(&cfg, 1, "group b", "a nosuch",
					    err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "[group b] may_send_to = a nosuch: no such "
			    "[group] 'nosuch'");
	assert_false(xnv_config_may_send(&cfg, 1, 0));
}

static int
join(uint16_t g, uint32_t uid, uint32_t gid)
{
	return xnv_config_may_join(&cfg, g, 0, uid, gid, err, sizeof(err));
}

TEST(join_default_is_root_only)
{
	assert_int_equal(join(0, 0, 0), 0);
	assert_int_equal(join(0, 0, 1000), 0);
	assert_int_equal(join(0, 1000, 0), -EACCES);	/* gid 0: not listed */
	assert_string_equal(err, "uid 1000 (gid 0) may not join trust group a");
}

TEST(join_by_uid_or_gid)
{
	cfg.groups[1].access.uids = (struct xnv_ids){ 2, { 0, 1000 } };
	cfg.groups[1].access.gids = (struct xnv_ids){ 1, { 100 } };
	assert_int_equal(join(1, 1000, 1000), 0);
	assert_int_equal(join(1, 2000, 100), 0);
	assert_int_equal(join(1, 2000, 2000), -EACCES);
	assert_string_equal(err, "uid 2000 (gid 2000) may not join trust "
			    "group b");
	assert_int_equal(join(0, 1000, 1000), -EACCES);	/* not in a */
}

TEST(join_narrowed_by_service)
{
	struct xnv_access *sa = &cfg.services[0].access;

	cfg.groups[1].access.uids = (struct xnv_ids){ 2, { 0, 1000 } };
	*sa = (struct xnv_access){ .set = 1, .gids = { 1, { 50 } } };
	assert_int_equal(join(1, 1000, 50), 0);
	assert_int_equal(join(1, 1000, 1000), -EACCES);
	assert_string_equal(err, "uid 1000 (gid 1000) may not attach as "
			    "service svc");
	/* the service's list does not widen the group's */
	assert_int_equal(join(0, 1000, 50), -EACCES);
	assert_non_null(strstr(err, "trust group a"));
	/* set with empty lists: nobody */
	*sa = (struct xnv_access){ .set = 1 };
	assert_int_equal(join(1, 0, 0), -EACCES);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(ids_numbers_and_names, setup),
		cmocka_unit_test_setup(ids_bad_entries_refused, setup),
		cmocka_unit_test_setup(socket_mode_and_group, setup),
		cmocka_unit_test_setup(socket_bad_values_refused, setup),
		cmocka_unit_test_setup(may_send_to, setup),
		cmocka_unit_test_setup(join_default_is_root_only, setup),
		cmocka_unit_test_setup(join_by_uid_or_gid, setup),
		cmocka_unit_test_setup(join_narrowed_by_service, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

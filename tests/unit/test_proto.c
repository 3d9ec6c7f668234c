/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The wire protocol (gntshare/proto.h) and the backend registries
 * (backend.h): version ranges on the socket, xenbus state strings, the
 * action list, and backends picked by name.
 */
#include <errno.h>
#include <stdlib.h>
#include <setjmp.h>	/* setjmp.h, stdarg.h, stddef.h: before cmocka.h */
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>

#include "gntshare/backend.h"
#include "gntshare/proto.h"
#include "gntshare/ring.h"
#include "../../gntshare/host_msg.h"

#define UNUSED __attribute__((unused))
#define TEST(name) static void name(void **state UNUSED)

/* Send @p m over a fresh socket pair and receive it as the core would. */
static int
roundtrip(const struct gnts_msg *m)
{
	struct gnts_msg got;
	int sv[2], rc;

	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
	assert_int_equal(gnts_msg_send(sv[0], m, NULL, 0), 0);
	rc = gnts_msg_recv(sv[1], &got, NULL, 0);
	close(sv[0]);
	close(sv[1]);
	return rc;
}

TEST(test_msg_from_a_peer_one_version_ahead)
{
	struct gnts_msg m;

	gnts_msg_init(&m, GNTS_MSG_BYE);
	assert_int_equal(roundtrip(&m), 1);
	/* Newer, but readable as ours: accepted. */
	m.version = GNTS_MSG_VERSION + 1;
	m.min_version = GNTS_MSG_VERSION;
	assert_int_equal(roundtrip(&m), 1);
	/* Newer and not readable as ours: refused. */
	m.min_version = GNTS_MSG_VERSION + 1;
	assert_int_equal(roundtrip(&m), -EPROTO);
	/* Older than we read. */
	m.version = GNTS_MSG_VERSION_MIN - 1;
	m.min_version = 0;
	assert_int_equal(roundtrip(&m), -EPROTO);
}

/* Attach to a ring region whose header says @p version / @p min. */
static int
ring_attach_as(uint32_t version, uint32_t min)
{
	size_t bytes = gnts_ring_region_bytes(64);
	struct gnts_ring_port ports[GNTS_RING_COUNT];
	struct gnts_ring_region_hdr *h = calloc(1, bytes);
	int rc;

	assert_non_null(h);
	assert_int_equal(gnts_ring_region_format(h, bytes, 64), 0);
	assert_int_equal(h->min_version, GNTS_RING_VERSION_MIN);
	h->version = version;
	h->min_version = min;
	rc = gnts_ring_region_attach(h, bytes, 0, ports);
	free(h);
	return rc;
}

TEST(test_ring_region_versions)
{
	assert_int_equal(ring_attach_as(GNTS_RING_VERSION, GNTS_RING_VERSION),
			 0);
	/* A writer one version ahead that may still be read as ours. */
	assert_int_equal(ring_attach_as(GNTS_RING_VERSION + 1,
					GNTS_RING_VERSION), 0);
	/* min_version 0 (an older writer's reserved bytes): = version. */
	assert_int_equal(ring_attach_as(GNTS_RING_VERSION, 0), 0);
	/* A newer layout that cannot be read as ours. */
	assert_int_equal(ring_attach_as(GNTS_RING_VERSION + 1,
					GNTS_RING_VERSION + 1), -EPROTO);
	/* Older than we read. */
	assert_int_equal(ring_attach_as(GNTS_RING_VERSION_MIN - 1, 0),
			 -EPROTO);
}

TEST(test_version_ranges)
{
	assert_true(gnts_version_ok(2, 0, 2, 2));
	assert_true(gnts_version_ok(3, 2, 2, 2));
	assert_false(gnts_version_ok(3, 3, 2, 2));
	assert_false(gnts_version_ok(1, 0, 2, 3));
	assert_true(gnts_version_ok(4, 1, 2, 3));
	/* A min above the version is read as the version. */
	assert_false(gnts_version_ok(4, 9, 2, 3));
}

TEST(test_xenbus_state_strings)
{
	assert_string_equal(gnts_xb_state_str(GNTS_XB_INITIALISED), "3");
	assert_string_equal(gnts_xb_state_str(GNTS_XB_CONNECTED), "4");
	assert_string_equal(gnts_xb_state_str(GNTS_XB_CLOSED), "6");
	assert_string_equal(gnts_xb_state_str((enum gnts_xenbus_state)42),
			    "0");
}

TEST(test_action_list)
{
	unsigned n = 0, seen = 0;

#define COUNT(name, v) n++; seen |= 1u << (v);
	GNTS_ACTIONS(COUNT)
#undef COUNT
	assert_int_equal(n, 4);
	assert_int_equal(seen, (1u << GNTS_ACT_DROP) | (1u << GNTS_ACT_OUT) |
			 (1u << GNTS_ACT_TO_SERVICE) | (1u << GNTS_ACT_NEXT));
	assert_true(GNTS_ACT_NEXT <= 255);
}

TEST(test_server_backend_by_name)
{
	struct gnts_srv_cfg cfg = { 0 };
	struct gnts_srv *s = NULL;
	char err[GNTS_ERR_LEN] = "";

	assert_int_equal(gnts_srv_open("ivshmem", &cfg, &s, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "unknown or not built in"));
	assert_non_null(strstr(err, "host"));
	assert_null(s);
	assert_non_null(strstr(gnts_srv_kinds(), "host"));
}

TEST(test_client_backend_by_name)
{
	const struct gnts_cli_ops *ops = gnts_cli_backend("host");

	assert_non_null(ops);
	assert_string_equal(ops->name, "host");
	assert_true(ops->flags & GNTS_CLI_REATTACH);
	assert_null(gnts_cli_backend("ivshmem"));
	/* Not a Xen domain with an xnv device: auto is the host. */
	assert_string_equal(gnts_cli_backend("auto")->name, "host");
	assert_string_equal(gnts_cli_backend(NULL)->name, "host");
}

/* A peer's string in a log line: escaped, never over-long, never more
 * read than its field holds. */
static void
test_peer_strings_escaped(void **state)
{
	char buf[GNTS_ESC_LEN(16)], small[12];
	const char forged[] = "a\nxnv-core: NF b quarantined\x1b[2J";
	const char unterminated[4] = { 'a', 'b', 'c', 'd' };

	(void)state;
	assert_string_equal(gnts_esc("fw-a.0", 32, buf, sizeof(buf)),
			    "fw-a.0");
	assert_string_equal(gnts_esc("a\\b\x7f", 8, buf, sizeof(buf)),
			    "a\\x5cb\\x7f");
	gnts_esc(forged, sizeof(forged), buf, sizeof(buf));
	assert_null(strchr(buf, '\n'));
	assert_null(strchr(buf, 0x1b));
	assert_true(strlen(buf) < sizeof(buf));
	assert_string_equal(gnts_esc(unterminated, 4, buf, sizeof(buf)),
			    "abcd");
	assert_string_equal(gnts_esc("0123456789abcdef", 16, small,
				     sizeof(small)), "01234567...");
	assert_string_equal(gnts_esc("\x01\x02\x03", 3, small, sizeof(small)),
			    "\\x01\\x02...");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_msg_from_a_peer_one_version_ahead),
		cmocka_unit_test(test_ring_region_versions),
		cmocka_unit_test(test_version_ranges),
		cmocka_unit_test(test_xenbus_state_strings),
		cmocka_unit_test(test_action_list),
		cmocka_unit_test(test_server_backend_by_name),
		cmocka_unit_test(test_client_backend_by_name),
		cmocka_unit_test(test_peer_strings_escaped),
	};

	return cmocka_run_group_tests_name("gntshare_proto", tests, NULL, NULL);
}

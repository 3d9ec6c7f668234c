/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The server handle (srv.c) runs the host backend in a control thread:
 * the owner's callbacks run only on the owner's thread (the one calling
 * gnts_srv_poll()), detaches queued by the owner reach the peer, and what
 * a hostile local client sends (requests before ATTACH, idle connections,
 * a flood of refused MAPs) is answered or closed by the control thread
 * without handing it to the owner, within the limits of host.h.
 *
 * Here the "owner" is a thread that polls, as xnv-core's data path does.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>	/* setjmp.h, stdarg.h, stddef.h: before cmocka.h */
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "gntshare/backend.h"
#include "gntshare/host.h"
#include "../../gntshare/host_msg.h"

#define UNUSED __attribute__((unused))
#define TEST(name) static void name(void **state UNUSED)

static struct {
	char dir[32], path[108];
	struct gnts_srv *srv;
	pthread_t owner;
	atomic_int stop;
	atomic_int n_attach, n_death, n_denied, off_thread;
	atomic_uint last_death;
} S;

static void
on_owner(void)
{
	if (!pthread_equal(pthread_self(), S.owner))
		S.off_thread++;
}

static int
cb_attach(void *ctx UNUSED, gnts_peer_t peer, const struct gnts_peer_cred *cred,
	  const struct gnts_attach_req *req, struct gnts_bell *bell UNUSED,
	  struct gnts_attach_rsp *rsp, char *e, size_t len)
{
	on_owner();
	S.n_attach++;
	if (strcmp(req->group, "closed") == 0) {
		snprintf(e, len, "group closed");
		return -EPERM;
	}
	memset(rsp, 0, sizeof(*rsp));
	rsp->domid = peer;
	assert_true(cred->known);
	assert_int_equal(cred->uid, getuid());
	return 0;
}

static void
cb_death(void *ctx UNUSED, gnts_peer_t peer)
{
	on_owner();
	S.last_death = peer;
	S.n_death++;
}

static void
cb_map_denied(void *ctx UNUSED, gnts_peer_t peer UNUSED, gnts_ref_t ref UNUSED,
	      const char *why UNUSED)
{
	on_owner();
	S.n_denied++;
}

static const struct gnts_srv_cb cb = {
	.attach = cb_attach, .death = cb_death, .map_denied = cb_map_denied,
};

static void *
owner_loop(void *arg UNUSED)
{
	const struct timespec ms = { 0, 1000000 };

	while (!S.stop) {
		gnts_srv_poll(S.srv);
		nanosleep(&ms, NULL);
	}
	return NULL;
}

static int
setup(void **state UNUSED)
{
	const struct gnts_srv_cfg cfg = { .socket = S.path, .cb = &cb };
	char err[GNTS_ERR_LEN];

	memset(&S, 0, sizeof(S));
	snprintf(S.dir, sizeof(S.dir), "/tmp/xnv-srv-XXXXXX");
	assert_non_null(mkdtemp(S.dir));
	snprintf(S.path, sizeof(S.path), "%s/xnv.sock", S.dir);
	assert_int_equal(gnts_srv_open("host", &cfg, &S.srv, err, sizeof(err)),
			 0);
	assert_int_equal(pthread_create(&S.owner, NULL, owner_loop, NULL), 0);
	return 0;
}

static int
teardown(void **state UNUSED)
{
	S.stop = 1;
	pthread_join(S.owner, NULL);
	gnts_srv_close(S.srv);	/* here: the owner is this thread now */
	rmdir(S.dir);
	return 0;
}

static void
counters(struct gnts_srv_counters *ct)
{
	const struct timespec ms = { 0, 5000000 };

	nanosleep(&ms, NULL);	/* the control thread copies them each pass */
	gnts_srv_counters(S.srv, ct);
}

static int
attach(const char *group, struct gnts_client **c, char *err, size_t len)
{
	struct gnts_attach_req req = { .name = "nf", .service = "s" };
	struct gnts_attach_rsp rsp;

	snprintf(req.group, sizeof(req.group), "%s", group);
	return gnts_client_attach(S.path, &req, &rsp, c, err, len);
}

static int
raw_connect(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct timeval tv = { .tv_sec = 10 };
	int fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", S.path);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv,
				    sizeof(tv)), 0);
	return fd;
}

/* The next message on @p fd is an ERROR with @p status, then hang-up. */
static void
expect_closed(int fd, int status, const char *words)
{
	struct gnts_msg m;

	assert_int_equal(recv(fd, &m, sizeof(m), 0), (ssize_t)sizeof(m));
	assert_int_equal(m.type, GNTS_MSG_ERROR);
	assert_int_equal(m.status, status);
	assert_non_null(strstr(m.u.text, words));
	assert_int_equal(recv(fd, &m, sizeof(m), 0), 0);
	close(fd);
}

TEST(test_callbacks_run_on_the_owners_thread)
{
	struct gnts_client *c;
	char err[GNTS_ERR_LEN];

	assert_int_equal(attach("blue", &c, err, sizeof(err)), 0);
	gnts_client_close(c);
	assert_int_equal(attach("closed", &c, err, sizeof(err)), -EPERM);
	assert_string_equal(err, "group closed");
	assert_int_equal(S.n_attach, 2);
	assert_int_equal(S.off_thread, 0);
}

TEST(test_detach_queued_by_the_owner_reaches_the_peer)
{
	struct gnts_client *c;
	char err[GNTS_ERR_LEN];
	int i;

	assert_int_equal(attach("blue", &c, err, sizeof(err)), 0);
	gnts_srv_detach(S.srv, 1, -ECONNRESET, "quarantined: test");
	for (i = 0; i < 5000 && gnts_client_alive(c, err, sizeof(err)); i++)
		usleep(1000);
	assert_int_equal(gnts_client_alive(c, err, sizeof(err)), 0);
	assert_string_equal(err, "quarantined: test");
	for (i = 0; i < 5000 && S.n_death == 0; i++)
		usleep(1000);
	assert_int_equal(S.last_death, 1);
	assert_int_equal(S.off_thread, 0);
	gnts_client_close(c);
}

TEST(test_map_before_attach_is_answered_and_closed)
{
	struct gnts_srv_counters ct;
	struct gnts_msg m;
	int fd = raw_connect();

	gnts_msg_init(&m, GNTS_MSG_MAP);
	m.ref = 1;
	assert_int_equal(send(fd, &m, sizeof(m), 0), (ssize_t)sizeof(m));
	expect_closed(fd, -EACCES, "map of region 1 refused: not attached");
	counters(&ct);
	assert_int_equal(ct.refused, 1);
	assert_int_equal(ct.callbacks, 0);	/* the owner never saw it */
	assert_int_equal(S.n_denied, 0);
}

TEST(test_waiting_connections_are_capped_oldest_first)
{
	struct gnts_srv_counters ct;
	struct gnts_client *c;
	char err[GNTS_ERR_LEN];
	int fd[GNTS_HOST_PENDING_PER_UID + 1], i;

	for (i = 0; i <= (int)GNTS_HOST_PENDING_PER_UID; i++) {
		fd[i] = raw_connect();
		usleep(3000);	/* accepted in this order */
	}
	/* The oldest made room for the last. */
	expect_closed(fd[0], -EBUSY, "too many connections waiting");
	/* A new NF still attaches (and makes room itself). */
	assert_int_equal(attach("blue", &c, err, sizeof(err)), 0);
	expect_closed(fd[1], -EBUSY, "too many connections waiting");
	counters(&ct);
	assert_int_equal(ct.evicted, 2);
	assert_int_equal(ct.waiting, GNTS_HOST_PENDING_PER_UID - 1);
	for (i = 2; i <= (int)GNTS_HOST_PENDING_PER_UID; i++)
		close(fd[i]);
	gnts_client_close(c);
}

TEST(test_idle_connection_closed_after_the_attach_timeout)
{
	struct gnts_srv_counters ct;
	struct timeval tv = { .tv_sec = GNTS_HOST_ATTACH_TIMEOUT_MS / 1000 * 10 };
	int fd = raw_connect();

	assert_int_equal(setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv,
				    sizeof(tv)), 0);
	expect_closed(fd, -ETIMEDOUT, "no ATTACH within");
	counters(&ct);
	assert_int_equal(ct.timed_out, 1);
}

/* An attached peer sending refused MAPs as fast as it can: every one is
 * answered (nothing lost, its rate only delays it), few reach the owner
 * (refusal lines are rate-limited), the rest are counted. */
TEST(test_refused_map_flood_is_answered_not_handed_over)
{
	enum { N = 300 };
	struct gnts_srv_counters ct;
	struct gnts_client *c;
	char err[GNTS_ERR_LEN];
	void *va;
	size_t size;
	int i;

	assert_int_equal(attach("blue", &c, err, sizeof(err)), 0);
	for (i = 0; i < N; i++)
		assert_int_equal(gnts_client_map(c, 7777, 0, &va, &size, err,
						 sizeof(err)), -EACCES);
	counters(&ct);
	assert_int_equal(ct.refused, N);
	assert_true(ct.not_logged > 0);
	assert_int_equal(S.n_denied + ct.not_logged, N);
	/* one per logged line at most, and the attach */
	assert_int_equal(ct.callbacks, 1 + S.n_denied);
	assert_int_equal(S.off_thread, 0);
	assert_int_equal(gnts_client_alive(c, err, sizeof(err)), 1);
	gnts_client_close(c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
			test_callbacks_run_on_the_owners_thread, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_detach_queued_by_the_owner_reaches_the_peer, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_map_before_attach_is_answered_and_closed, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_waiting_connections_are_capped_oldest_first, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_idle_connection_closed_after_the_attach_timeout,
			setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_refused_map_flood_is_answered_not_handed_over,
			setup, teardown),
	};

	return cmocka_run_group_tests_name("gntshare_srv_control", tests, NULL,
					   NULL);
}

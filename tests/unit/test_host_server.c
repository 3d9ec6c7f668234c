/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the gntshare host backend's server (host_server.c, with
 * region.c and host_client.c) over a real unix socket in a mkdtemp()
 * directory (host_fixture.h): a peer's death on BYE and on SIGKILL ends its
 * grants, a detach reaches the client with its reason, gnts_server_open()
 * with a stale socket, a live one or a bad path, and a malformed message.
 */
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>

#include "host_fixture.h"

/* ---- death and detach ------------------------------------------------- */

TEST(test_death_on_bye_revokes_grants)
{
	struct gnts_region *r = make_region("pool", 4096, 0, S.dom, 0);
	struct gnts_region *other = make_region("pool2", 4096, 0, S.dom + 50, 0);
	struct gnts_region *still, *kept, *found;

	gnts_client_close(S.c);
	S.c = NULL;
	assert_int_equal(wait_deaths(1), 1);
	assert_int_equal(snap().death_dom[0], S.dom);
	LOCKED(still = gnts_region_lookup(r->ref, S.dom, NULL);
	       kept = gnts_region_lookup(other->ref, S.dom + 50, NULL);
	       found = gnts_region_find(r->ref));
	assert_null(still);
	assert_ptr_equal(kept, other);	/* other domains keep theirs */
	assert_ptr_equal(found, r);	/* the region itself stays */
}

TEST(test_death_on_sigkill)
{
	struct gnts_region *r = NULL, *still;
	uint32_t dom = 0;
	int pfd[2], seen = 0;

	assert_int_equal(pipe(pfd), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {		/* the NF: attach, report, wait to be killed */
		struct gnts_client *c;
		struct gnts_attach_rsp rsp;

		alarm(20);	/* never outlive a failed parent for long */
		if (attach_as("victim", "blue", &c, &rsp) == 0)
			dom = rsp.domid;
		if (write(pfd[1], &dom, sizeof(dom)) == sizeof(dom))
			for (;;)
				pause();
		_exit(2);
	}
	close(pfd[1]);
	/* The child's alarm() bounds this read. */
	int ok = read(pfd[0], &dom, sizeof(dom)) == sizeof(dom) && dom != 0;
	close(pfd[0]);
	if (ok) {
		r = make_region("pool", 4096, 0, dom, 0);
		LOCKED(seen = gnts_server_pid(S.s, dom));
	}
	kill(pid, SIGKILL);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
	assert_true(ok);
	assert_int_equal(seen, pid);
	assert_int_equal(wait_deaths(1), 1);
	assert_int_equal(snap().death_dom[0], dom);
	LOCKED(still = gnts_region_lookup(r->ref, dom, NULL));
	assert_null(still);
}

TEST(test_server_detach_seen_by_client)
{
	assert_int_equal(gnts_client_alive(S.c, err, sizeof(err)), 1);
	LOCKED(gnts_server_detach(S.s, S.dom, DETACH_TEXT));
	assert_int_equal(wait_deaths(1), 1);
	assert_int_equal(snap().death_dom[0], S.dom);
	err[0] = '\0';
	assert_int_equal(gnts_client_alive(S.c, err, sizeof(err)), 0);
	assert_string_equal(err, DETACH_TEXT);
}

/* ---- server_open ------------------------------------------------------ */

TEST(test_server_open_removes_stale_socket)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct gnts_server *s2 = NULL;
	struct stat st;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/stale.sock", S.dir);
	int fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	close(fd);	/* the file stays behind, nobody listening */
	assert_true(lstat(sa.sun_path, &st) == 0 && S_ISSOCK(st.st_mode));
	int logs = atomic_load(&n_stale_logs);
	assert_int_equal(gnts_server_open(sa.sun_path, &ops, NULL, &s2, err,
					  sizeof(err)), 0);
	assert_int_equal(atomic_load(&n_stale_logs), logs + 1);
	/* And it listens there now. */
	fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	close(fd);
	gnts_server_close(s2);
	assert_int_equal(lstat(sa.sun_path, &st), -1);
}

TEST(test_server_open_refuses_live_socket_and_bad_paths)
{
	struct gnts_server *s2 = NULL;
	char path[200];

	assert_int_equal(gnts_server_open(S.path, &ops, NULL, &s2, err,
					  sizeof(err)), -EADDRINUSE);
	assert_non_null(strstr(err, S.path));
	/* The live server was not disturbed. */
	assert_int_equal(map(S.c, 0x7fff0001u, 0), -EACCES);
	assert_int_equal(gnts_client_alive(S.c, err, sizeof(err)), 1);
	memset(path, 'a', sizeof(path) - 1);
	path[0] = '/';
	path[sizeof(path) - 1] = '\0';
	assert_int_equal(gnts_server_open(path, &ops, NULL, &s2, err,
					  sizeof(err)), -ENAMETOOLONG);
	assert_non_null(strstr(err, "too long"));
	/* A file that is not a socket is not removed. */
	snprintf(path, sizeof(path), "%s/fifo", S.dir);
	assert_int_equal(mkfifo(path, 0600), 0);
	assert_int_equal(gnts_server_open(path, &ops, NULL, &s2, err,
					  sizeof(err)), -EEXIST);
	assert_int_equal(unlink(path), 0);
	assert_null(s2);
}

/* ---- protocol errors -------------------------------------------------- */

TEST(test_malformed_message_drops_only_that_connection)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct timeval tv = { .tv_sec = 5 };
	struct gnts_region *r = make_region("pool", 4096, 0, S.dom, 0);
	struct gnts_client *c;
	struct gnts_attach_rsp rsp;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", S.path);
	int fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)), 0);
	assert_int_equal(send(fd, "0123456789", 10, 0), 10);
	/* The server says why and hangs up on it (recv 0), rather than
	 * leaving it to time out (-1). */
	struct gnts_msg why;

	assert_int_equal(recv(fd, &why, sizeof(why), 0), (ssize_t)sizeof(why));
	assert_int_equal(why.type, GNTS_MSG_ERROR);
	assert_int_equal(why.status, -EPROTO);
	assert_int_equal(recv(fd, &why, sizeof(why), 0), 0);
	close(fd);
	/* The other connection is untouched and keeps being served. */
	assert_int_equal(gnts_client_alive(S.c, err, sizeof(err)), 1);
	assert_int_equal(map(S.c, r->ref, 0), 0);
	gnts_client_unmap(M.va, M.size);
	assert_int_equal(attach_as("fw-1", "blue", &c, &rsp), 0);
	gnts_client_close(c);
	assert_int_equal(wait_deaths(1), 1);	/* fw-1's BYE; fw-0 lives */
	assert_int_equal(snap().death_dom[0], rsp.domid);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_death_on_bye_revokes_grants),
		T(test_death_on_sigkill),
		T(test_server_detach_seen_by_client),
		T(test_server_open_removes_stale_socket),
		T(test_server_open_refuses_live_socket_and_bad_paths),
		T(test_malformed_message_drops_only_that_connection),
	};

	signal(SIGPIPE, SIG_IGN);
	gnts_set_logger(capture_log);
	return cmocka_run_group_tests_name("gntshare_host_server", tests,
					   NULL, NULL);
}

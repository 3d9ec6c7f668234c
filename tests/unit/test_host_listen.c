/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The host backend's socket file appears only once it accepts connections
 * (host_server.c, bind_listen): a client that connects the instant the
 * file exists -- what scripts and supervisors do -- is never refused.
 * A thread opens the server while the test spins on the path.
 *
 * Who may connect (struct gnts_srv_cfg, backend.h): the socket's mode and
 * group, and the directory the server makes for it (0700 plus r-x for whom
 * the mode lets in, in the socket's group); an existing one is left alone.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>	/* setjmp.h, stdarg.h, stddef.h: before cmocka.h */
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <cmocka.h>

#include "gntshare/backend.h"
#include "gntshare/host.h"

#define UNUSED __attribute__((unused))
#define TEST(name) static void name(void **state UNUSED)
#define ROUNDS 100

static char path[108];
static struct gnts_server *srv;
static char err[GNTS_ERR_LEN];

static int
cb_attach(void *ctx UNUSED, gnts_peer_t peer UNUSED,
	  const struct gnts_peer_cred *cred UNUSED,
	  const struct gnts_attach_req *req UNUSED,
	  struct gnts_bell *bell UNUSED,
	  struct gnts_attach_rsp *rsp UNUSED, char *e UNUSED,
	  size_t len UNUSED)
{
	return 0;
}

static void
cb_death(void *ctx UNUSED, gnts_peer_t peer UNUSED)
{
}

static const struct gnts_srv_cb cb = {
	.attach = cb_attach, .death = cb_death,
};

static void *
opener(void *arg UNUSED)
{
	int rc = gnts_server_open(path, &cb, NULL, &srv, err, sizeof(err));

	return rc == 0 ? NULL : (void *)1;
}

/* Spin until @p path exists, then connect at once: 0 or -errno. */
static int
connect_when_there(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct stat st;
	int fd, rc;

	while (lstat(path, &st) != 0)
		;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	assert_true(fd >= 0);
	rc = connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 ? 0 : -errno;
	close(fd);
	return rc;
}

TEST(test_socket_file_appears_listening)
{
	char dir[] = "/tmp/xnv-listen-XXXXXX";
	pthread_t t;
	void *ret;
	int i;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/xnv.sock", dir);
	for (i = 0; i < ROUNDS; i++) {
		assert_int_equal(pthread_create(&t, NULL, opener, NULL), 0);
		assert_int_equal(connect_when_there(), 0);
		assert_int_equal(pthread_join(t, &ret), 0);
		assert_null(ret);
		gnts_server_close(srv);
		srv = NULL;
		/* nothing left behind: neither the socket nor a temporary */
		assert_int_equal(access(path, F_OK), -1);
	}
	assert_int_equal(rmdir(dir), 0);
}

/* Open the host server on @p sock with @p mode and @p gid (-1: none);
 * the modes and groups of the socket and of its directory. */
static void
open_with(const char *sock, unsigned mode, long gid, struct stat *s,
	  struct stat *d)
{
	const struct gnts_srv_cfg cfg = {
		.socket = sock, .cb = &cb, .socket_mode = mode,
		.socket_group_set = gid >= 0, .socket_gid = (gid_t)gid,
	};
	char dir[sizeof(path)];
	struct gnts_srv *h;

	assert_int_equal(gnts_srv_open("host", &cfg, &h, err, sizeof(err)), 0);
	snprintf(dir, sizeof(dir), "%s", sock);
	*strrchr(dir, '/') = '\0';
	assert_int_equal(stat(sock, s), 0);
	assert_int_equal(stat(dir, d), 0);
	gnts_srv_close(h);
}

TEST(test_socket_mode_group_and_directory)
{
	char top[] = "/tmp/xnv-listen-XXXXXX", sock[sizeof(path)];
	/* A group the files would not have anyway (root may give any). */
	long gid = geteuid() == 0 ? 65534 : -1;
	struct stat s, d;

	assert_non_null(mkdtemp(top));
	/* the default: 0600 in a new 0700 directory */
	snprintf(sock, sizeof(sock), "%s/a/xnv.sock", top);
	open_with(sock, 0, -1, &s, &d);
	assert_int_equal(s.st_mode & 07777, 0600);
	assert_int_equal(d.st_mode & 07777, 0700);
	/* a group: 0660 in a new 0750 directory of that group */
	snprintf(sock, sizeof(sock), "%s/b/xnv.sock", top);
	open_with(sock, 0660, gid, &s, &d);
	assert_int_equal(s.st_mode & 07777, 0660);
	assert_int_equal(d.st_mode & 07777, 0750);
	if (gid >= 0) {
		assert_int_equal(s.st_gid, gid);
		assert_int_equal(d.st_gid, gid);
	}
	/* everybody: 0755; an existing directory is left as it is */
	snprintf(sock, sizeof(sock), "%s/c/xnv.sock", top);
	open_with(sock, 0666, -1, &s, &d);
	assert_int_equal(d.st_mode & 07777, 0755);
	snprintf(sock, sizeof(sock), "%s/xnv.sock", top);
	open_with(sock, 0666, -1, &s, &d);
	assert_int_equal(s.st_mode & 07777, 0666);
	assert_int_equal(d.st_mode & 07777, 0700);	/* mkdtemp's */
	for (const char *sub = "abc"; *sub; sub++) {
		snprintf(sock, sizeof(sock), "%s/%c", top, *sub);
		assert_int_equal(rmdir(sock), 0);
	}
	assert_int_equal(rmdir(top), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_socket_file_appears_listening),
		cmocka_unit_test(test_socket_mode_group_and_directory),
	};

	return cmocka_run_group_tests_name("gntshare_host_listen", tests, NULL,
					   NULL);
}

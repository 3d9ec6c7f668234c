// SPDX-License-Identifier: BSD-3-Clause
/*
 * xt-ctl: one command to xnv-core's control socket (DPDK telemetry v2, see
 * dom0-core/CONTROL.md) from the Dom0 of tests/xen, which has no Python
 * for xnv-ctl.  The socket is SOCK_SEQPACKET: it greets with a JSON
 * object, then answers "CMD[,PARAMS]" with one JSON object.
 *
 * usage: xt-ctl SOCKET 'CMD[,PARAMS]'
 *   e.g. xt-ctl /var/run/dpdk/xnv-0123abcd/dpdk_telemetry.v2 \
 *               '/xnv/chain/set,nin fwd-a->fwd-b->nout'
 * Prints the reply; exit 0, or 1 (no answer, or an "error" in it) with
 * one line on stderr.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#define REPLY_MAX (1 << 16)

static int
fail(const char *what, const char *path)
{
	fprintf(stderr, "xt-ctl: %s %s: %s\n", what, path,
		errno ? strerror(errno) : "connection closed");
	return 1;
}

/* One message into @p buf (NUL-terminated); its length, or -1. */
static ssize_t
get(int fd, char *buf, size_t len)
{
	ssize_t n;

	errno = 0;
	n = recv(fd, buf, len - 1, 0);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return n;
}

int
main(int argc, char **argv)
{
	static char reply[REPLY_MAX];
	struct timeval tmo = { .tv_sec = 10 };
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	if (argc != 3 || strlen(argv[1]) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "usage: xt-ctl SOCKET 'CMD[,PARAMS]' (a socket "
			"path under %zu bytes)\n", sizeof(sa.sun_path));
		return 2;
	}
	memcpy(sa.sun_path, argv[1], strlen(argv[1]) + 1);
	fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	if (fd < 0)
		return fail("socket for", argv[1]);
	(void)setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tmo, sizeof(tmo));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return fail("cannot connect to", argv[1]);
	if (get(fd, reply, sizeof(reply)) < 0)	/* the greeting */
		return fail("no greeting from", argv[1]);
	if (send(fd, argv[2], strlen(argv[2]), 0) < 0)
		return fail("cannot send to", argv[1]);
	if (get(fd, reply, sizeof(reply)) < 0)
		return fail("no reply from", argv[1]);
	close(fd);
	printf("%s\n", reply);
	if (strstr(reply, "\"error\"") != NULL) {
		fprintf(stderr, "xt-ctl: %s refused: %s\n", argv[2], reply);
		return 1;
	}
	return 0;
}

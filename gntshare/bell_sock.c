/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Host mode doorbells: one unix stream socketpair per NF, an end each
 * (why a socketpair, not eventfds or pipes: gntshare/bell.h).  A kick
 * sends one byte with MSG_DONTWAIT | MSG_NOSIGNAL: it never blocks
 * whatever the peer did to its own end's flags, a full socket buffer
 * means a kick is pending already (EAGAIN is success), and a peer that
 * closed its end makes it -EPIPE, never a SIGPIPE (an NF need not ignore
 * that signal).  An ack reads what is there, a bounded amount.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gntshare/bell.h"

#define ACK_READS 4	/* reads of 64 bytes at most per ack */

static int
sock_kick(struct gnts_bell *b)
{
	char one = 1;
	ssize_t n;

	do {
		n = send(b->fd, &one, 1, MSG_DONTWAIT | MSG_NOSIGNAL);
	} while (n < 0 && errno == EINTR);
	if (n < 0 && errno != EAGAIN)
		return -errno;
	b->kicks++;
	return 0;
}

static int
sock_ack(struct gnts_bell *b)
{
	char buf[64];
	ssize_t n;
	int got = 0;

	/* A bounded amount: a peer sending in a loop must not keep us
	 * here (what is left wakes the next poll at once). */
	for (int i = 0; i < ACK_READS; i++) {
		n = recv(b->fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n == 0 && got == 0)
			return -EPIPE;	/* the peer closed its end */
		if (n <= 0)	/* EAGAIN: drained */
			break;
		got += (int)n;
		if ((size_t)n < sizeof(buf))
			break;
	}
	b->acked += (uint64_t)got;
	return got;
}

static void
sock_close(struct gnts_bell *b)
{
	close(b->fd);
	free(b);
}

static const struct gnts_bell_ops sock_ops = {
	.name = "socketpair", .kick = sock_kick, .ack = sock_ack,
	.close = sock_close,
};

int
gnts_bell_kick(struct gnts_bell *b)
{
	return b->ops->kick(b);
}

int
gnts_bell_ack(struct gnts_bell *b)
{
	return b->ops->ack(b);
}

void
gnts_bell_close(struct gnts_bell *b)
{
	if (b != NULL)
		b->ops->close(b);
}

static struct gnts_bell *
sock_bell_new(int fd)
{
	struct gnts_bell *b = calloc(1, sizeof(*b));

	if (b == NULL)
		return NULL;
	b->ops = &sock_ops;
	b->fd = fd;
	return b;
}

int
gnts_bell_sock_pair(struct gnts_bell **core, int *nf_fd)
{
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return -errno;
	*core = sock_bell_new(sv[0]);
	if (*core == NULL) {
		close(sv[0]);
		close(sv[1]);
		return -ENOMEM;
	}
	*nf_fd = sv[1];
	return 0;
}

/* 1 if @p fd is a unix stream socket. */
static int
is_unix_stream(int fd)
{
	int type = 0, domain = 0;
	socklen_t len = sizeof(int);
	struct stat st;

	if (fstat(fd, &st) != 0 || !S_ISSOCK(st.st_mode) ||
	    getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) != 0)
		return 0;
	len = sizeof(int);
	return type == SOCK_STREAM &&
	       getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) == 0 &&
	       domain == AF_UNIX;
}

struct gnts_bell *
gnts_bell_sock_open(int fd)
{
	struct gnts_bell *b = NULL;
	int e = EINVAL;

	if (fd >= 0 && is_unix_stream(fd)) {
		b = sock_bell_new(fd);
		e = ENOMEM;
	}
	if (b == NULL) {
		if (fd >= 0)
			close(fd);
		errno = e;
	}
	return b;
}

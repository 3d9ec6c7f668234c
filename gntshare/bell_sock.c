/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Host mode doorbells (why these fds: gntshare/bell.h).  An NF's pair is
 * a unix stream socketpair, an end each, and, for an NF that asks for it,
 * a pipe the core kicks it through (its write end the core's, its read
 * end the NF's; the core keeps a copy of the read end too).
 *
 * A kick sends one byte: on the socket with MSG_DONTWAIT | MSG_NOSIGNAL,
 * on the pipe by write() to the core's own O_NONBLOCK write end.  Neither
 * blocks whatever the peer did to its own end's flags, a full buffer
 * means a kick is pending already (EAGAIN is success), and neither
 * raises SIGPIPE: the socket's send says -EPIPE once the peer closed its
 * end, and the pipe never loses its last reader (the core's copy), so
 * its kicks at a dead NF only fill it.  An ack reads what is there, a
 * bounded amount; a closed peer end reads as 0 bytes: -EPIPE.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gntshare/bell.h"

#define ACK_READS 4	/* reads of 64 bytes at most per ack */

static ssize_t
put_sock(int fd)
{
	return send(fd, "", 1, MSG_DONTWAIT | MSG_NOSIGNAL);
}

static ssize_t
put_pipe(int fd)
{
	return write(fd, "", 1);	/* our end is O_NONBLOCK */
}

static ssize_t
get_sock(int fd, void *buf, size_t len)
{
	return recv(fd, buf, len, MSG_DONTWAIT);
}

static ssize_t
get_pipe(int fd, void *buf, size_t len)
{
	return read(fd, buf, len);	/* O_NONBLOCK: gnts_bell_host_open */
}

static int
kick_with(struct gnts_bell *b, ssize_t (*put)(int))
{
	ssize_t n;

	do {
		n = put(b->kick_fd);
	} while (n < 0 && errno == EINTR);
	if (n < 0 && errno != EAGAIN)
		return -errno;
	b->kicks++;
	return 0;
}

static int
ack_with(struct gnts_bell *b, ssize_t (*get)(int, void *, size_t))
{
	char buf[64];
	ssize_t n;
	int got = 0;

	/* A bounded amount: a peer sending in a loop must not keep us
	 * here (what is left wakes the next poll at once). */
	for (int i = 0; i < ACK_READS; i++) {
		n = get(b->fd, buf, sizeof(buf));
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

static int sock_kick(struct gnts_bell *b) { return kick_with(b, put_sock); }
static int pipe_kick(struct gnts_bell *b) { return kick_with(b, put_pipe); }
static int sock_ack(struct gnts_bell *b) { return ack_with(b, get_sock); }
static int pipe_ack(struct gnts_bell *b) { return ack_with(b, get_pipe); }

static void
host_close(struct gnts_bell *b)
{
	if (b->kick_fd != b->fd)
		close(b->kick_fd);
	if (b->keep_fd >= 0)
		close(b->keep_fd);
	close(b->fd);
	free(b);
}

/* Kicks and waits on the socket, both ways. */
static const struct gnts_bell_ops sock_ops = {
	.name = "socketpair", .kick = sock_kick, .ack = sock_ack,
	.close = host_close,
};

/* The core's end with a pipe: kicks through it, waits on the socket. */
static const struct gnts_bell_ops core_pipe_ops = {
	.name = "pipe", .kick = pipe_kick, .ack = sock_ack,
	.close = host_close,
};

/* The NF's end with a pipe: waits on it, kicks through the socket. */
static const struct gnts_bell_ops nf_pipe_ops = {
	.name = "pipe", .kick = sock_kick, .ack = pipe_ack,
	.close = host_close,
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
host_bell_new(const struct gnts_bell_ops *ops, int fd, int kick_fd,
	      int keep_fd)
{
	struct gnts_bell *b = calloc(1, sizeof(*b));

	if (b == NULL)
		return NULL;
	b->ops = ops;
	b->fd = fd;
	b->kick_fd = kick_fd;
	b->keep_fd = keep_fd;
	return b;
}

int
gnts_bell_host_pair(struct gnts_bell **core, int nf_fds[2], int with_pipe)
{
	int sv[2], pp[2] = { -1, -1 };

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return -errno;
	if (with_pipe && pipe2(pp, O_CLOEXEC | O_NONBLOCK) < 0) {
		int e = errno;

		close(sv[0]);
		close(sv[1]);
		return -e;
	}
	*core = with_pipe ? host_bell_new(&core_pipe_ops, sv[0], pp[1], pp[0])
			  : host_bell_new(&sock_ops, sv[0], sv[0], -1);
	if (*core == NULL) {
		close(sv[0]);
		close(sv[1]);
		if (with_pipe) {
			close(pp[0]);
			close(pp[1]);
		}
		return -ENOMEM;
	}
	/* The NF's read end: a descriptor of its own for the caller to
	 * pass and close, the core keeping pp[0]. */
	nf_fds[1] = with_pipe ? fcntl(pp[0], F_DUPFD_CLOEXEC, 0) : -1;
	if (with_pipe && nf_fds[1] < 0) {
		int e = errno;

		gnts_bell_close(*core);
		close(sv[1]);
		return -e;
	}
	nf_fds[0] = sv[1];
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

/* 1 if @p fd is a pipe's read end, made non-blocking here. */
static int
is_pipe_reader(int fd)
{
	struct stat st;
	int fl = fcntl(fd, F_GETFL);

	return fl >= 0 && (fl & O_ACCMODE) == O_RDONLY &&
	       fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode) &&
	       fcntl(fd, F_SETFL, fl | O_NONBLOCK) == 0;
}

struct gnts_bell *
gnts_bell_host_open(int sock_fd, int pipe_fd)
{
	struct gnts_bell *b = NULL;
	int e = EINVAL;

	if (sock_fd >= 0 && is_unix_stream(sock_fd) &&
	    (pipe_fd < 0 || is_pipe_reader(pipe_fd))) {
		b = pipe_fd < 0
			? host_bell_new(&sock_ops, sock_fd, sock_fd, -1)
			: host_bell_new(&nf_pipe_ops, pipe_fd, sock_fd, -1);
		e = ENOMEM;
	}
	if (b == NULL) {
		if (sock_fd >= 0)
			close(sock_fd);
		if (pipe_fd >= 0)
			close(pipe_fd);
		errno = e;
	}
	return b;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Host mode doorbells: a pipe per direction (why pipes and not eventfds:
 * gntshare/bell.h).  A kick writes one byte; a full pipe means a kick is
 * pending already, so EAGAIN is success.  An ack drains what is there.
 * Both ends are non-blocking on our side's open files, which the peer
 * cannot change.  A kick at a peer whose end is closed is -EPIPE, never a
 * SIGPIPE: that would kill a caller that does not ignore it (an NF).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "gntshare/bell.h"

struct pipe_bell {
	struct gnts_bell b;	/* b.fd: the end we read */
	int kick_fd;		/* the end we write */
};

/*
 * One byte into @p fd.  A write to a pipe nobody reads raises SIGPIPE in
 * the writing thread: blocked here around the write, and the one it
 * raised taken back, so the caller's disposition never sees it.  A caller
 * that blocks SIGPIPE itself gets what it asked for (left pending).
 * @return 0 or -errno.
 */
static int
write_byte(int fd)
{
	static const struct timespec no_wait;	/* sigtimedwait: poll */
	sigset_t pipe_only, old;
	char one = 1;
	ssize_t n;
	int e;

	sigemptyset(&pipe_only);
	sigaddset(&pipe_only, SIGPIPE);
	if (pthread_sigmask(SIG_BLOCK, &pipe_only, &old) != 0)
		return -EINVAL;
	do {
		n = write(fd, &one, 1);
	} while (n < 0 && errno == EINTR);
	e = n < 0 ? errno : 0;
	if (e == EPIPE && !sigismember(&old, SIGPIPE))
		while (sigtimedwait(&pipe_only, NULL, &no_wait) < 0 &&
		       errno == EINTR)
			;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return -e;
}

static int
pipe_kick(struct gnts_bell *b)
{
	struct pipe_bell *p = (struct pipe_bell *)b;
	int rc = write_byte(p->kick_fd);

	if (rc < 0 && rc != -EAGAIN)
		return rc;
	b->kicks++;
	return 0;
}

static int
pipe_ack(struct gnts_bell *b)
{
	char buf[64];
	ssize_t n;
	int got = 0;

	/* At most a few reads: a peer writing in a loop must not keep us
	 * here (what is left wakes the next poll at once). */
	for (int i = 0; i < 4; i++) {
		n = read(b->fd, buf, sizeof(buf));
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
pipe_close(struct gnts_bell *b)
{
	struct pipe_bell *p = (struct pipe_bell *)b;

	close(b->fd);
	close(p->kick_fd);
	free(p);
}

static const struct gnts_bell_ops pipe_ops = {
	.name = "pipe", .kick = pipe_kick, .ack = pipe_ack,
	.close = pipe_close,
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
pipe_bell_new(int wait_fd, int kick_fd)
{
	struct pipe_bell *p = calloc(1, sizeof(*p));

	if (p == NULL)
		return NULL;
	p->b.ops = &pipe_ops;
	p->b.fd = wait_fd;
	p->kick_fd = kick_fd;
	return &p->b;
}

int
gnts_bell_pipe_pair(struct gnts_bell **core, int nf_fds[2])
{
	int to_nf[2], to_core[2];
	struct gnts_bell *b;

	if (pipe2(to_nf, O_CLOEXEC) < 0)
		return -errno;
	if (pipe2(to_core, O_CLOEXEC) < 0) {
		int e = errno;

		close(to_nf[0]);
		close(to_nf[1]);
		return -e;
	}
	/* Our own open files: non-blocking (the NF's are its business). */
	if (fcntl(to_nf[1], F_SETFL, O_NONBLOCK) < 0 ||
	    fcntl(to_core[0], F_SETFL, O_NONBLOCK) < 0 ||
	    (b = pipe_bell_new(to_core[0], to_nf[1])) == NULL) {
		int e = ENOMEM;

		close(to_nf[0]);
		close(to_nf[1]);
		close(to_core[0]);
		close(to_core[1]);
		return -e;
	}
	nf_fds[0] = to_nf[0];
	nf_fds[1] = to_core[1];
	*core = b;
	return 0;
}

/* 1 if @p fd is a pipe opened for @p mode (O_RDONLY / O_WRONLY). */
static int
is_pipe_end(int fd, int mode)
{
	struct stat st;
	int fl = fcntl(fd, F_GETFL);

	return fl >= 0 && (fl & O_ACCMODE) == mode && fstat(fd, &st) == 0 &&
	       S_ISFIFO(st.st_mode);
}

struct gnts_bell *
gnts_bell_pipe_open(int wait_fd, int kick_fd)
{
	struct gnts_bell *b = NULL;
	int e = EINVAL;

	if (wait_fd >= 0 && kick_fd >= 0 && is_pipe_end(wait_fd, O_RDONLY) &&
	    is_pipe_end(kick_fd, O_WRONLY) &&
	    fcntl(wait_fd, F_SETFL, O_NONBLOCK) == 0 &&
	    fcntl(kick_fd, F_SETFL, O_NONBLOCK) == 0) {
		b = pipe_bell_new(wait_fd, kick_fd);
		e = ENOMEM;
	}
	if (b == NULL) {
		if (wait_fd >= 0)
			close(wait_fd);
		if (kick_fd >= 0)
			close(kick_fd);
		errno = e;
	}
	return b;
}

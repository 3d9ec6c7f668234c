/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The log sink (logsink.h): rte_log -> a FILE of ours, which stamps each
 * line with its time and level -> the buffer of lines (logbuf.c) -> the
 * log thread -> fd 2.  Whoever logs only takes the mutex to copy bytes
 * in; the thread holds it only to copy bytes out, never across a write().
 * Before the buffer exists, after it is drained at exit, and when stderr
 * is a regular file, the FILE writes the stamped lines to fd 2 itself.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <rte_lcore.h>
#include <rte_log.h>

#include <gntshare/gntshare.h>

#include "logbuf.h"
#include "logsink.h"

#define OUT_BYTES (64 * 1024)	/* written out per write() at most */
_Static_assert(OUT_BYTES >= XNV_LOGBUF_TAKE_MIN, "room for a longest line");

static struct {
	pthread_mutex_t lock;
	pthread_cond_t more;	/* to the thread: lines, or stop */
	pthread_cond_t idle;	/* from the thread: everything written */
	struct xnv_logbuf buf;
	FILE *stream;		/* DPDK's log stream while the sink is on */
	pthread_t thread;
	int on;			/* started and not stopped (main thread) */
	int buffered;		/* lines go to buf (else to fd 2 at once) */
	int mid_line;		/* the next byte does not start a line */
	int stop;		/* the thread is to end */
	int waiting;		/* the thread waits on `more` */
	int writing;		/* the thread is writing out what it took */
} sink = { .lock = PTHREAD_MUTEX_INITIALIZER };

_Static_assert(sizeof(sink.buf.note_stamp) >= GNTS_LOG_STAMP_MAX,
	       "room for a stamp before the notice of dropped lines");

/* Under the lock: wake the thread if it sleeps and has work. */
static void
wake(void)
{
	if (sink.waiting && xnv_logbuf_pending(&sink.buf))
		pthread_cond_signal(&sink.more);
}

/* All of it to fd 2, blocking (also when someone made fd 2 non-blocking).
 * A closed or broken stderr loses the lines: there is nowhere to say so. */
static void
write_out(const char *p, size_t n)
{
	struct pollfd pfd = { .fd = STDERR_FILENO, .events = POLLOUT };
	ssize_t k;

	while (n > 0) {
		k = write(STDERR_FILENO, p, n);
		if (k > 0) {
			p += k;
			n -= (size_t)k;
		} else if (k < 0 && errno == EAGAIN) {
			(void)poll(&pfd, 1, -1);
		} else if (k == 0 || errno != EINTR) {
			return;
		}
	}
}

/* The level of the line rte_log is writing on this thread, as a syslog
 * priority (DPDK's levels are syslog's plus one). */
static int
cur_level(void)
{
	int lvl = rte_log_cur_msg_loglevel();

	return lvl >= 1 && lvl <= 8 ? lvl - 1 : GNTS_LOG_INFO;
}

/* Under the lock: bytes to where lines go now. */
static void
emit(const char *s, size_t n)
{
	if (sink.buffered)
		xnv_logbuf_put(&sink.buf, s, n);
	else
		write_out(s, n);
}

/* The FILE's write: each line gets its stamp first.  Buffered: a copy,
 * never any I/O; whole lines are kept or dropped, the bytes are always
 * taken, so stdio sees no error. */
static ssize_t
sink_write(void *cookie, const char *s, size_t n)
{
	char stamp[GNTS_LOG_STAMP_MAX];
	const char *nl;
	size_t i, k;

	(void)cookie;
	pthread_mutex_lock(&sink.lock);
	for (i = 0; i < n; i += k) {
		nl = memchr(s + i, '\n', n - i);
		k = nl != NULL ? (size_t)(nl - s) + 1 - i : n - i;
		if (!sink.mid_line)
			emit(stamp, gnts_log_stamp(cur_level(), stamp,
						   sizeof(stamp)));
		if (sink.buffered && sink.buf.gap > 0)
			gnts_log_stamp(GNTS_LOG_WARNING, sink.buf.note_stamp,
				       sizeof(sink.buf.note_stamp));
		emit(s + i, k);
		sink.mid_line = nl == NULL;
	}
	if (sink.buffered)
		wake();
	pthread_mutex_unlock(&sink.lock);
	return (ssize_t)n;
}

static void *
sink_main(void *arg)
{
	static char out[OUT_BYTES];
	sigset_t all;
	size_t n;

	(void)arg;
	/* Signals are the main loop's business. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	pthread_mutex_lock(&sink.lock);
	while (!sink.stop) {
		if (!xnv_logbuf_pending(&sink.buf)) {
			pthread_cond_broadcast(&sink.idle);
			sink.waiting = 1;
			pthread_cond_wait(&sink.more, &sink.lock);
			sink.waiting = 0;
			continue;
		}
		if (sink.buf.gap > 0)
			gnts_log_stamp(GNTS_LOG_WARNING, sink.buf.note_stamp,
				       sizeof(sink.buf.note_stamp));
		n = xnv_logbuf_take(&sink.buf, out, sizeof(out));
		sink.writing = 1;
		pthread_mutex_unlock(&sink.lock);
		write_out(out, n);
		pthread_mutex_lock(&sink.lock);
		sink.writing = 0;
	}
	pthread_mutex_unlock(&sink.lock);
	return NULL;
}

static void
stop_at_exit(void)
{
	xnv_logsink_stop(XNV_LOGSINK_STOP_MS);
}

/* The buffer could not start: lines keep going to fd 2 at once. */
static int
start_fail(int rc, char *err, size_t errlen, const char *what)
{
	snprintf(err, errlen, "log sink: %s: %s", what, strerror(-rc));
	xnv_logbuf_free(&sink.buf);
	return rc;
}

int
xnv_logsink_open(char *err, size_t errlen)
{
	static const cookie_io_functions_t io = { .write = sink_write };

	if (sink.stream != NULL)
		return 0;
	sink.stream = fopencookie(NULL, "w", io);
	if (sink.stream == NULL) {
		snprintf(err, errlen, "log sink: stream: %s", strerror(errno));
		return -errno;
	}
	/* A line goes in as soon as it ends (rte_vlog flushes anyway). */
	setvbuf(sink.stream, NULL, _IOLBF, BUFSIZ);
	rte_openlog_stream(sink.stream);
	return 0;
}

int
xnv_logsink_start(size_t bytes, char *err, size_t errlen)
{
	static int registered;
	pthread_condattr_t ca;
	struct stat st;
	int rc;

	if ((rc = xnv_logsink_open(err, errlen)) < 0)
		return rc;
	/* A regular file takes every write without waiting for a reader:
	 * lines go straight to it, each visible as soon as it is logged. */
	if (fstat(STDERR_FILENO, &st) == 0 && S_ISREG(st.st_mode))
		return 0;
	rc = xnv_logbuf_init(&sink.buf, bytes);
	if (rc < 0)
		return start_fail(rc, err, errlen, "buffer");
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&sink.idle, &ca);
	pthread_condattr_destroy(&ca);
	pthread_cond_init(&sink.more, NULL);
	/* A control thread: a pthread on the CPUs EAL leaves to the control
	 * plane, not an lcore. */
	rc = rte_ctrl_thread_create(&sink.thread, "xnv-log", NULL, sink_main,
				    NULL);
	if (rc != 0)
		return start_fail(rc < 0 ? rc : -rc, err, errlen, "thread");
	fflush(sink.stream);
	pthread_mutex_lock(&sink.lock);
	sink.buffered = 1;
	pthread_mutex_unlock(&sink.lock);
	sink.on = 1;
	if (!registered && atexit(stop_at_exit) == 0)
		registered = 1;
	return 0;
}

/* Under the lock: wait until everything is written or @p until passes. */
static int
wait_drained(const struct timespec *until)
{
	while (xnv_logbuf_pending(&sink.buf) || sink.writing)
		if (pthread_cond_timedwait(&sink.idle, &sink.lock,
					   until) == ETIMEDOUT)
			return !xnv_logbuf_pending(&sink.buf) && !sink.writing;
	return 1;
}

void
xnv_logsink_stop(unsigned wait_ms)
{
	struct timespec until;
	int drained;

	if (!sink.on)
		return;
	sink.on = 0;
	fflush(sink.stream);
	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += wait_ms / 1000;
	until.tv_nsec += (long)(wait_ms % 1000) * 1000000;
	if (until.tv_nsec >= 1000000000) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000;
	}
	pthread_mutex_lock(&sink.lock);
	xnv_logbuf_end_line(&sink.buf);
	sink.mid_line = 0;
	wake();
	drained = wait_drained(&until);
	/* Drained: the stream writes its lines to fd 2 at once again.  Not
	 * drained: they stay buffered (whatever is logged now is held or
	 * dropped), as a direct write to a stderr nobody reads would hang
	 * the exit. */
	if (drained)
		sink.buffered = 0;
	sink.stop = 1;
	pthread_cond_signal(&sink.more);
	pthread_mutex_unlock(&sink.lock);
	if (drained)
		pthread_join(sink.thread, NULL);
	else
		pthread_detach(sink.thread);
}

uint64_t
xnv_logsink_dropped(void)
{
	uint64_t n;

	pthread_mutex_lock(&sink.lock);
	n = sink.buf.dropped;
	pthread_mutex_unlock(&sink.lock);
	return n;
}

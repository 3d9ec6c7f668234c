/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Doorbells: how a side that sleeps on an empty ring is woken by its peer
 * (the decision "kick or not" is ring.h's, "Sleeping on a ring").  One
 * struct gnts_bell is one side's end of an NF's doorbell pair: a file
 * descriptor that becomes readable when the peer kicked us, and a way to
 * kick the peer.  The backend makes both ends when an NF attaches and asks
 * for them (GNTS_REQ_BELL):
 *
 *   backend  the core's end                  the NF's end
 *   host     a unix socketpair end: waits    the other end (kicks the
 *            on the NF's kicks; and the      core through it) and the
 *            write end of a pipe it kicks    pipe's read end (waits on
 *            the NF through (bell_sock.c)    it), passed with ATTACH_OK
 *                                            by SCM_RIGHTS
 *   xen      an event channel port offered   binds it (interdomain) from
 *            to the domain (bell_evtchn.c,   the `event-channel` key
 *            libxenevtchn), its number in
 *            the `event-channel` key
 *
 * Host mode, why these fds.  Every fd the NF gets is its own open file or
 * a file the core never writes through, so nothing the NF does to one
 * (fcntl, filling it) can make a kick of the core's block: an eventfd is
 * out, its one open file serving both directions (a hostile NF could clear
 * its O_NONBLOCK and fill its counter).  The core kicks through a pipe,
 * the wake-up path the kernel makes cheapest here (a socket's send
 * allocates an skb: bench/wake_floor.c -l 0, one kick and wake-up a
 * millisecond, p50 3.4-3.8 / p99 8.6-15 us through the pipe, 4.9-5.0 /
 * 14-24 us through the socketpair); the write end is the core's alone and
 * non-blocking, and the core keeps a copy of the read end, so its kick
 * never meets a pipe without readers (no SIGPIPE, which a library may not
 * ask its program to ignore).  The NF kicks through the socketpair: its
 * send() with MSG_DONTWAIT | MSG_NOSIGNAL neither blocks nor signals,
 * whatever the core does, so an NF need not ignore SIGPIPE.  A full buffer
 * only means a kick is pending already (EAGAIN); an NF that resizes its
 * pipe (F_SETPIPE_SZ, within fs.pipe-max-size) only changes how many
 * unread kicks pile up before that.  An NF that did not ask for the pipe
 * (GNTS_REQ_BELL_PIPE; an older libxnv) gets the socketpair alone, kicks
 * both ways on it.
 *
 * Everything from the peer is untrusted: a kick only wakes a poll, never
 * says what to do; a peer that kicks in a loop costs the waiter a wake-up
 * per kick unless the waiter stops listening (the core rate-limits: see
 * dom0-core/doorbell.c).  Not thread-safe: one thread per end.
 */
#ifndef GNTSHARE_BELL_H
#define GNTSHARE_BELL_H

#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

struct gnts_bell;

/* What a side does when idle: `--idle-sleep` of xnv-core and of libxnv,
 * the same words for both (their back-offs: dom0-core/doorbell.c,
 * domu-lib/io.c). */
enum gnts_idle {
	GNTS_IDLE_POLL = 0,	/* never back off (--busy-poll) */
	GNTS_IDLE_ADAPTIVE,	/* pause, yield, then short sleeps */
	GNTS_IDLE_DOORBELL,	/* ... then sleep on the doorbell */
	GNTS_IDLE_COUNT,
};

static const char *const gnts_idle_names[GNTS_IDLE_COUNT] = {
	[GNTS_IDLE_POLL] = "poll", [GNTS_IDLE_ADAPTIVE] = "adaptive",
	[GNTS_IDLE_DOORBELL] = "doorbell",
};

/** "poll", "adaptive", "doorbell" -> enum gnts_idle; -1 if none. */
static inline int
gnts_idle_parse(const char *s)
{
	for (int i = 0; i < GNTS_IDLE_COUNT; i++)
		if (strcmp(s, gnts_idle_names[i]) == 0)
			return i;
	return -1;
}

/*
 * At what priority a data-path thread runs (--rt-priority of xnv-core and
 * of libxnv; rt.c).  A side that sleeps on its doorbell is woken by the
 * kernel's scheduler, and on a CPU other tasks share a woken SCHED_OTHER
 * thread may wait behind one of them; SCHED_FIFO runs it at once.  For a
 * thread that has its CPU to itself or sleeps when idle: one that polls
 * busy at a real-time priority keeps every SCHED_OTHER task of its CPU
 * off it (the kernel's RT throttling leaves them sched_rt_runtime_us'
 * remainder), and threads of one priority on one CPU take turns only when
 * they sleep.
 */
#define GNTS_RT_PRIO_MIN 1
#define GNTS_RT_PRIO_MAX 99

/** "1".."99" -> the priority; -1 if not one. */
int gnts_rt_priority_parse(const char *s);

/** The calling thread to SCHED_FIFO at @p prio (0: back to SCHED_OTHER).
 *  0, or -errno with why in @p err (one line). */
int gnts_thread_rt(int prio, char *err, size_t len);

/** Whether gnts_thread_rt(@p prio) would succeed here: tried, then the
 *  calling thread's policy put back.  0 or -errno (why in @p err). */
int gnts_thread_rt_check(int prio, char *err, size_t len);

struct gnts_bell_ops {
	const char *name;			/* "socketpair", "pipe", "evtchn" */
	int (*kick)(struct gnts_bell *b);	/* 0 or -errno */
	int (*ack)(struct gnts_bell *b);	/* kicks consumed (>= 0) */
	void (*close)(struct gnts_bell *b);	/* frees b */
};

/* The backends' ends embed this first. */
struct gnts_bell {
	const struct gnts_bell_ops *ops;
	int fd;			/* readable (POLLIN) when the peer kicked */
	int kick_fd;		/* host: where kicks go (fd itself for a
				 * socketpair end alone) */
	int keep_fd;		/* host, the core's: its copy of the NF's
				 * read end of the pipe (-1: none) */
	uint64_t kicks;		/* kicks sent */
	uint64_t acked;		/* kicks consumed by gnts_bell_ack() */
};

/** The fd to poll/epoll for POLLIN: the peer kicked. */
static inline int
gnts_bell_fd(const struct gnts_bell *b)
{
	return b->fd;
}

/** Ring the peer's doorbell.  Never blocks.  0 or -errno (the peer's end
 *  is gone: -EPIPE, ...); a kick while one is pending is absorbed. */
int gnts_bell_kick(struct gnts_bell *b);

/** Consume what woke us (reads the pipe / clears and unmasks the event
 *  channel).  Never blocks.  @return kicks consumed (0: a spurious
 *  wake-up), or -errno (-EPIPE: the peer closed its end, which stays
 *  readable: stop waiting on it). */
int gnts_bell_ack(struct gnts_bell *b);

/** Close this end (NULL: nothing). */
void gnts_bell_close(struct gnts_bell *b);

/**
 * Host mode: make an NF's doorbell pair.  @p *core is the core's end;
 * @p nf_fds the NF's: [0] its socket end, [1] the pipe's read end (-1
 * unless @p with_pipe).  The caller passes them to the NF and closes its
 * copies.  0 or -errno.
 */
int gnts_bell_host_pair(struct gnts_bell **core, int nf_fds[2],
			int with_pipe);

/**
 * Host mode, the NF's end from the fds the core passed (taken over:
 * closed by gnts_bell_close(), or here on failure): @p sock_fd must be a
 * unix stream socket, @p pipe_fd a pipe's read end (made non-blocking)
 * or -1 (a core that kicks on the socket).  NULL with errno set on
 * failure.
 */
struct gnts_bell *gnts_bell_host_open(int sock_fd, int pipe_fd);

/*
 * Xen (bell_evtchn.c, built only with the Xen libraries): one event
 * channel per NF device, kicks both ways, each end on a libxenevtchn
 * handle of its own.
 */

/**
 * The core's end: a port of ours that domain @p domid (and only it) may
 * bind, its number in *@p port for the NF (the `event-channel` key).
 * NULL with errno set on failure (no xen-evtchn, no free port).
 */
struct gnts_bell *gnts_bell_evtchn_offer(uint32_t domid, uint32_t *port);

/**
 * The NF's end: port @p port of domain @p domid (the core's offer) bound
 * interdomain.  NULL with errno set on failure (a port not offered to
 * us, or bound already: Xen refuses).
 */
struct gnts_bell *gnts_bell_evtchn_bind(uint32_t domid, uint32_t port);

#ifdef __cplusplus
}
#endif

#endif /* GNTSHARE_BELL_H */

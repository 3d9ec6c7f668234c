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
 *   host     a unix socketpair (bell_sock.c) the other end, passed with
 *            end: sends kicks, reads the     ATTACH_OK by SCM_RIGHTS
 *            NF's
 *   xen      an event channel port offered   binds it (interdomain) from
 *            to the domain (bell_evtchn.c,   the `event-channel` key
 *            libxenevtchn), its number in
 *            the `event-channel` key
 *
 * Host mode uses a socketpair, not eventfds or pipes: an eventfd's two
 * directions share one open file, whose O_NONBLOCK a hostile NF could
 * clear with fcntl and so make the core's kick block once the counter is
 * full; a pipe's write to a closed reader raises SIGPIPE, which would
 * kill an NF that does not ignore it.  A socketpair's ends are two open
 * files, and send(MSG_DONTWAIT | MSG_NOSIGNAL) neither blocks nor
 * signals, whatever the peer does; a full buffer only means a kick is
 * pending already (EAGAIN).
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

struct gnts_bell_ops {
	const char *name;			/* "socketpair", "evtchn" */
	int (*kick)(struct gnts_bell *b);	/* 0 or -errno */
	int (*ack)(struct gnts_bell *b);	/* kicks consumed (>= 0) */
	void (*close)(struct gnts_bell *b);	/* frees b */
};

/* The backends' ends embed this first. */
struct gnts_bell {
	const struct gnts_bell_ops *ops;
	int fd;			/* readable (POLLIN) when the peer kicked */
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
 * @p *nf_fd the NF's (it waits on it and kicks through it): the caller
 * passes it to the NF and closes its copy.  0 or -errno.
 */
int gnts_bell_sock_pair(struct gnts_bell **core, int *nf_fd);

/**
 * Host mode, the NF's end from the fd the core passed (taken over: closed
 * by gnts_bell_close(), or here on failure).  Checks that it is a unix
 * stream socket.  NULL with errno set on failure.
 */
struct gnts_bell *gnts_bell_sock_open(int fd);

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

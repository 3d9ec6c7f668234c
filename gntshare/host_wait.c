/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Host backend, core side: which connections are read when (their rates,
 * host.h), and the control thread's wait for the next thing to do
 * (gnts_server_wait): the listener, the connections that may be read,
 * the nearest deadline.  Idle, the thread sleeps here.
 */
#include <errno.h>
#include <poll.h>

#include "host_server_pvt.h"

int
gnts_host_may_read(struct gnts_server *s, struct conn *c, uint64_t now,
		   int take)
{
	if (!gnts_bucket_has(&s->rate, GNTS_HOST_RATE, GNTS_HOST_BURST, now,
			     0) ||
	    !gnts_bucket_has(&c->rate, GNTS_HOST_CONN_RATE,
			     GNTS_HOST_CONN_BURST, now, 0) ||
	    (!c->attached && !gnts_bucket_has(&s->attach_rate,
					      GNTS_HOST_ATTACH_RATE,
					      GNTS_HOST_ATTACH_BURST, now, 0)))
		return 0;
	if (take) {
		s->rate.tokens--;
		c->rate.tokens--;
		if (!c->attached)
			s->attach_rate.tokens--;
	}
	return 1;
}

/*
 * What is worth a poll() now (@p pfd, @p idx: which connection, -1 the
 * listener): the listener while accepts have tokens, each connection while
 * it may read (over its rate it is not even looked at until it has a
 * token).  *@p wait_ms is lowered to how soon to look again whatever
 * happens: a token coming, an unattached connection's deadline.
 */
int
gnts_host_poll_set(struct gnts_server *s, uint64_t now, struct pollfd *pfd,
		   int *idx, int *wait_ms)
{
	int n = 0, i, limited = 0;
	unsigned k;

	if (gnts_bucket_has(&s->accept_rate, GNTS_HOST_ACCEPT_RATE,
			    GNTS_HOST_ACCEPT_BURST, now, 0)) {
		pfd[n] = (struct pollfd){ .fd = s->lfd, .events = POLLIN };
		idx[n++] = -1;
	} else {
		limited = 1;
	}
	/* From the round robin's slot (gnts_server_poll moves it). */
	for (k = 0; k < MAX_CONNS; k++) {
		struct conn *c = &s->conns[i = (int)((s->rr + k) % MAX_CONNS)];

		if (c->fd < 0)
			continue;
		if (!c->attached) {
			uint64_t left = c->since_ms + GNTS_HOST_ATTACH_TIMEOUT_MS;

			left = left > now ? left - now + 1 : 1;
			if (left < (uint64_t)*wait_ms)
				*wait_ms = (int)left;
		}
		if (!gnts_host_may_read(s, c, now, 0)) {
			limited = 1;
			continue;
		}
		pfd[n] = (struct pollfd){ .fd = c->fd, .events = POLLIN };
		idx[n++] = i;
	}
	if (limited && *wait_ms > 1)
		*wait_ms = 1;	/* tokens come back within milliseconds */
	return n;
}

int
gnts_server_wait(struct gnts_server *s, int wake_fd, int max_ms)
{
	struct pollfd pfd[MAX_CONNS + 2];
	int idx[MAX_CONNS + 2];
	int n, ms = max_ms;

	if (s == NULL)
		return 0;
	n = gnts_host_poll_set(s, gnts_now_ms(), pfd, idx, &ms);
	if (wake_fd >= 0)
		pfd[n++] = (struct pollfd){ .fd = wake_fd, .events = POLLIN };
	return poll(pfd, (nfds_t)n, ms) < 0 && errno != EINTR ? -errno : 0;
}

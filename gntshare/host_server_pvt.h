/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Host backend, core side: the server's state, shared by host_server.c
 * (connections, messages) and host_wait.c (what to read when, and the
 * control thread's wait).  Private to gntshare.
 */
#ifndef GNTS_HOST_SERVER_PVT_H
#define GNTS_HOST_SERVER_PVT_H

#include <poll.h>
#include <stdint.h>
#include <sys/un.h>

#include "bucket.h"
#include "gntshare/backend.h"
#include "gntshare/host.h"

#define MAX_CONNS    128
#define ACCEPT_BATCH 8		/* connections accepted per pass */
#define SERVE_BATCH  16		/* messages read per connection per pass */

struct conn {
	int fd;			/* -1: free slot */
	gnts_peer_t dom;
	struct gnts_peer_cred cred;
	int attached;
	struct gnts_bell *bell;	/* the core's end of its doorbells, or NULL */
	uint64_t since_ms;	/* accepted at */
	struct gnts_bucket rate;
};

struct gnts_server {
	int lfd;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	struct gnts_srv_cb cb;
	void *ctx;
	gnts_peer_t next_dom;
	struct gnts_bucket rate, attach_rate;	/* all connections */
	struct gnts_bucket accept_rate;
	unsigned rr;				/* first slot served next */
	struct gnts_ratelimit log;		/* refusals, closes */
	struct gnts_host_stats st;
	struct conn conns[MAX_CONNS];
};

/* 1 if @p c may be read now (its rate, everyone's, the attach rate);
 * @p take: and spend the tokens. */
int gnts_host_may_read(struct gnts_server *s, struct conn *c, uint64_t now,
		       int take);

/* The fds worth a poll() now, their connections' slots in @p idx (-1:
 * the listener), and how soon to look again whatever happens: host_wait.c */
int gnts_host_poll_set(struct gnts_server *s, uint64_t now,
		       struct pollfd *pfd, int *idx, int *wait_ms);

#endif

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Private: sending and receiving the host backend's socket messages (the
 * messages themselves are drawn in gntshare/proto.h).
 */
#ifndef GNTSHARE_HOST_MSG_H
#define GNTSHARE_HOST_MSG_H

#include <stdint.h>

#include "gntshare/proto.h"

static inline void
gnts_msg_init(struct gnts_msg *m, uint16_t type)
{
	__builtin_memset(m, 0, sizeof(*m));
	m->magic = GNTS_MSG_MAGIC;
	m->version = GNTS_MSG_VERSION;
	m->min_version = GNTS_MSG_VERSION_MIN;
	m->type = type;
}

#define GNTS_MSG_FDS 2	/* fds one message carries at most */

/* Send one message with @p n (0..GNTS_MSG_FDS) fds.  Returns 0 or
 * -errno. */
int gnts_msg_send(int sock, const struct gnts_msg *m, const int *fds,
		  unsigned n);

/* Receive one message and up to GNTS_MSG_FDS fds into @p fds (in the
 * order sent; -1 for those that did not come; any more are closed).
 * @p fds may be NULL (every fd closed).  Returns 1 on a message, 0 on
 * hang-up, -EAGAIN if none waiting (with @p dontwait), -EPROTO on a
 * malformed one (its fds closed), other -errno on failure. */
int gnts_msg_recv(int sock, struct gnts_msg *m, int fds[GNTS_MSG_FDS],
		  int dontwait);

/* Close the fds gnts_msg_recv() gave (-1s skipped) and set them to -1. */
void gnts_msg_fds_close(int fds[GNTS_MSG_FDS]);

/* 1 if @p s has a NUL within @p len bytes. */
static inline int
gnts_str_ok(const char *s, unsigned len)
{
	return __builtin_memchr(s, '\0', len) != 0;
}

#endif /* GNTSHARE_HOST_MSG_H */

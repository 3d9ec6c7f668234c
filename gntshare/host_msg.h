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

/* Send one message, optionally with one fd.  Returns 0 or -errno. */
int gnts_msg_send(int sock, const struct gnts_msg *m, int fd);

/* Receive one message (and at most one fd into *fd, else -1).
 * Returns 1 on a message, 0 on hang-up, -EAGAIN if none waiting (with
 * @p dontwait), -EPROTO on a malformed one, other -errno on failure. */
int gnts_msg_recv(int sock, struct gnts_msg *m, int *fd, int dontwait);

/* 1 if @p s has a NUL within @p len bytes. */
static inline int
gnts_str_ok(const char *s, unsigned len)
{
	return __builtin_memchr(s, '\0', len) != 0;
}

#endif /* GNTSHARE_HOST_MSG_H */

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Private: the wire format of the host backend's unix socket.  One
 * SOCK_SEQPACKET datagram per message, always sizeof(struct gnts_msg).
 *
 *   NF                          core
 *   ATTACH(req)          --->
 *                        <---   ATTACH_OK(rsp)  | ERROR(text), close
 *   MAP(ref, readonly)   --->
 *                        <---   MAP_OK(size) + fd (SCM_RIGHTS) | ERROR(text)
 *                        <---   DETACH(text), close   (core detaches the NF)
 *   BYE                  --->   (or hang-up: the NF is gone)
 */
#ifndef GNTSHARE_HOST_MSG_H
#define GNTSHARE_HOST_MSG_H

#include <stdint.h>

#include "gntshare/attach.h"
#include "gntshare/host.h"

#define GNTS_MSG_MAGIC   0x4d564e58u	/* "XNVM" */
#define GNTS_MSG_VERSION 1u

enum gnts_msg_type {
	GNTS_MSG_ATTACH = 1,
	GNTS_MSG_ATTACH_OK,
	GNTS_MSG_MAP,
	GNTS_MSG_MAP_OK,
	GNTS_MSG_ERROR,
	GNTS_MSG_DETACH,
	GNTS_MSG_BYE,
};

struct gnts_msg {
	uint32_t magic;
	uint16_t version;
	uint16_t type;
	int32_t status;		/* 0 or negative errno (ERROR) */
	uint32_t ref;		/* MAP */
	uint64_t size;		/* MAP_OK: bytes to map */
	uint32_t readonly;	/* MAP */
	uint32_t pad;
	union {
		struct gnts_attach_req req;
		struct gnts_attach_rsp rsp;
		char text[GNTS_ERR_LEN];
	} u;
};

static inline void
gnts_msg_init(struct gnts_msg *m, uint16_t type)
{
	__builtin_memset(m, 0, sizeof(*m));
	m->magic = GNTS_MSG_MAGIC;
	m->version = GNTS_MSG_VERSION;
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

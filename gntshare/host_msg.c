/* SPDX-License-Identifier: BSD-3-Clause */
/* Framing of host backend messages; see host_msg.h. */

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "host_msg.h"

int
gnts_msg_send(int sock, const struct gnts_msg *m, const int *fds,
	      unsigned n)
{
	char cbuf[CMSG_SPACE(sizeof(int) * GNTS_MSG_FDS)];
	struct iovec iov = { .iov_base = (void *)m, .iov_len = sizeof(*m) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	ssize_t k;

	if (n > GNTS_MSG_FDS)
		return -EINVAL;
	if (n > 0) {
		struct cmsghdr *c;

		memset(cbuf, 0, sizeof(cbuf));
		mh.msg_control = cbuf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * n);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * n);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * n);
	}
	do {
		k = sendmsg(sock, &mh, MSG_NOSIGNAL);
	} while (k < 0 && errno == EINTR);
	if (k < 0)
		return -errno;
	return k == (ssize_t)sizeof(*m) ? 0 : -EIO;
}

void
gnts_msg_fds_close(int fds[GNTS_MSG_FDS])
{
	for (int i = 0; i < GNTS_MSG_FDS; i++) {
		if (fds[i] >= 0)
			close(fds[i]);
		fds[i] = -1;
	}
}

int
gnts_msg_recv(int sock, struct gnts_msg *m, int fds[GNTS_MSG_FDS],
	      int dontwait)
{
	char cbuf[CMSG_SPACE(sizeof(int) * 4)];
	struct iovec iov = { .iov_base = m, .iov_len = sizeof(*m) };
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *c;
	unsigned kept = 0;
	ssize_t n;

	for (int i = 0; fds != NULL && i < GNTS_MSG_FDS; i++)
		fds[i] = -1;
	do {
		n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC |
			    (dontwait ? MSG_DONTWAIT : 0));
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return (errno == EWOULDBLOCK) ? -EAGAIN : -errno;
	if (n == 0)
		return 0;
	/* Take ownership of every fd that came along, keep at most
	 * GNTS_MSG_FDS. */
	for (c = CMSG_FIRSTHDR(&mh); c != NULL; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		int nfd = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
		for (int i = 0; i < nfd; i++) {
			int x;

			memcpy(&x, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			if (fds != NULL && kept < GNTS_MSG_FDS)
				fds[kept++] = x;
			else
				close(x);
		}
	}
	if (n != (ssize_t)sizeof(*m) || (mh.msg_flags & MSG_TRUNC) ||
	    m->magic != GNTS_MSG_MAGIC ||
	    !gnts_version_ok(m->version, m->min_version, GNTS_MSG_VERSION_MIN,
			     GNTS_MSG_VERSION)) {
		if (fds != NULL)
			gnts_msg_fds_close(fds);
		return -EPROTO;
	}
	return 1;
}

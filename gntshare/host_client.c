/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Host backend, NF side: attach over xnv-core's unix socket and map the
 * regions granted to us from the fds the core passes.
 */

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "backends.h"
#include "gntshare/host.h"
#include "host_msg.h"

#define REPLY_TIMEOUT_S 5

struct gnts_client {
	int fd;
	int gone;
	int gone_status;
	struct gnts_bell *bell;	/* our end of the doorbells, or NULL */
};

/* Wait for the reply to a request; a DETACH notice in between ends it. */
static int
recv_reply(struct gnts_client *c, struct gnts_msg *m, int fds[GNTS_MSG_FDS],
	   char *err, size_t errlen)
{
	int rc = gnts_msg_recv(c->fd, m, fds, 0);

	if (rc == 0 || rc == -EAGAIN) {
		c->gone = 1;
		snprintf(err, errlen, rc == 0 ? "core closed the connection"
			 : "core did not answer within %d s", REPLY_TIMEOUT_S);
		return rc == 0 ? -ECONNRESET : -ETIMEDOUT;
	}
	if (rc < 0) {
		snprintf(err, errlen, "bad reply from core: %s", strerror(-rc));
		return rc;
	}
	if (m->type == GNTS_MSG_ERROR || m->type == GNTS_MSG_DETACH) {
		if (m->type == GNTS_MSG_DETACH) {
			c->gone = 1;
			c->gone_status = m->status < 0 ? m->status
						       : -ECONNRESET;
		}
		m->u.text[sizeof(m->u.text) - 1] = '\0';
		snprintf(err, errlen, "%s", m->u.text);
		return m->status < 0 ? m->status : -EPROTO;
	}
	return 1;
}

int
gnts_client_attach(const char *path, const struct gnts_attach_req *req,
		   struct gnts_attach_rsp *rsp, struct gnts_client **out,
		   char *err, size_t errlen)
{
	struct timeval tv = { .tv_sec = REPLY_TIMEOUT_S };
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct gnts_client *c;
	struct gnts_msg m;
	int fds[GNTS_MSG_FDS] = { -1, -1 }, rc;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		snprintf(err, errlen, "socket path too long: %s", path);
		return -ENAMETOOLONG;
	}
	strcpy(sa.sun_path, path);
	c = calloc(1, sizeof(*c));
	if (c == NULL)
		return -ENOMEM;
	c->fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (c->fd < 0) {
		rc = -errno;
		snprintf(err, errlen, "socket: %s", strerror(errno));
		free(c);
		return rc;
	}
	if (connect(c->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		rc = -errno;
		if (errno == ENOENT || errno == ECONNREFUSED) {
			/* No socket, or a socket nobody listens on. */
			snprintf(err, errlen, "no xnv-core running: nothing "
				 "listens on %s (%s)", path, strerror(errno));
			rc = -EHOSTDOWN;
		} else {
			snprintf(err, errlen, "cannot reach xnv-core at %s: "
				 "%s%s", path, strerror(errno),
				 errno == EACCES ? " (the core's [core] "
				 "socket_mode and socket_group say who may "
				 "connect)" : "");
		}
		goto fail;
	}
	(void)setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	gnts_msg_init(&m, GNTS_MSG_ATTACH);
	m.u.req = *req;
	/* Host mode's doorbell: the core kicks us through a pipe (bell.h). */
	if (req->flags & GNTS_REQ_BELL)
		m.u.req.flags |= GNTS_REQ_BELL_PIPE;
	rc = gnts_msg_send(c->fd, &m, NULL, 0);
	if (rc < 0) {
		snprintf(err, errlen, "send to xnv-core: %s", strerror(-rc));
		goto fail;
	}
	rc = recv_reply(c, &m, fds, err, errlen);
	if (rc < 0)
		goto fail;
	if (m.type != GNTS_MSG_ATTACH_OK) {
		snprintf(err, errlen, "unexpected reply %u to ATTACH", m.type);
		rc = -EPROTO;
		goto fail;
	}
	*rsp = m.u.rsp;
	/* Doorbells if asked for and given; else (an older core, or it
	 * could not) the NF polls, which is correct, only not idle. */
	if ((req->flags & GNTS_REQ_BELL) && (rsp->flags & GNTS_RSP_BELL)) {
		int pipe_fd = (rsp->flags & GNTS_RSP_BELL_PIPE) ? fds[1] : -1;

		/* Both taken over (an fd not asked for is closed below). */
		c->bell = gnts_bell_host_open(fds[0], pipe_fd);
		if (c->bell == NULL)
			gnts_log(GNTS_LOG_WARNING, "the core's doorbell fds are "
				 "no unix stream socket%s: polling instead",
				 pipe_fd >= 0 ? " and pipe read end" : "");
		fds[0] = -1;
		if (pipe_fd >= 0)
			fds[1] = -1;
	}
	rsp->flags = c->bell != NULL ? GNTS_RSP_BELL : 0;
	gnts_msg_fds_close(fds);
	*out = c;
	return 0;
fail:
	gnts_msg_fds_close(fds);
	close(c->fd);
	free(c);
	return rc;
}

int
gnts_client_map(struct gnts_client *c, gnts_ref_t ref, int readonly,
		void **va, size_t *size, char *err, size_t errlen)
{
	struct gnts_msg m;
	struct stat st;
	int fds[GNTS_MSG_FDS], fd, rc;
	void *p;

	gnts_msg_init(&m, GNTS_MSG_MAP);
	m.ref = ref;
	m.readonly = readonly ? 1 : 0;
	rc = gnts_msg_send(c->fd, &m, NULL, 0);
	if (rc < 0) {
		snprintf(err, errlen, "send to xnv-core: %s", strerror(-rc));
		return rc;
	}
	rc = recv_reply(c, &m, fds, err, errlen);
	fd = fds[0];
	if (rc < 0)
		goto out;
	if (m.type != GNTS_MSG_MAP_OK || m.ref != ref || fd < 0 ||
	    fds[1] >= 0) {
		snprintf(err, errlen, "bad reply to MAP of region %u", ref);
		rc = -EPROTO;
		goto out;
	}
	/* The size comes from the core; the fd's own size is the truth. */
	if (fstat(fd, &st) < 0 || (uint64_t)st.st_size < m.size ||
	    m.size == 0) {
		snprintf(err, errlen, "region %u: size mismatch", ref);
		rc = -EPROTO;
		goto out;
	}
	p = mmap(NULL, m.size, PROT_READ | (readonly ? 0 : PROT_WRITE),
		 MAP_SHARED | MAP_POPULATE, fd, 0);
	if (p == MAP_FAILED) {
		rc = -errno;
		snprintf(err, errlen, "mmap of region %u: %s", ref,
			 strerror(errno));
		goto out;
	}
	*va = p;
	*size = m.size;
	rc = 0;
out:
	gnts_msg_fds_close(fds);
	return rc;
}

void
gnts_client_unmap(void *va, size_t size)
{
	if (va != NULL)
		munmap(va, size);
}

int
gnts_client_alive(struct gnts_client *c, char *err, size_t errlen)
{
	struct pollfd p = { .fd = c->fd, .events = POLLIN };
	struct gnts_msg m;
	int rc;

	if (c->gone)
		return 0;
	if (poll(&p, 1, 0) <= 0)
		return 1;
	rc = gnts_msg_recv(c->fd, &m, NULL, 1);
	if (rc == -EAGAIN)
		return 1;
	c->gone = 1;
	if (rc == 1 && m.type == GNTS_MSG_DETACH) {
		m.u.text[sizeof(m.u.text) - 1] = '\0';
		snprintf(err, errlen, "%s", m.u.text);
		c->gone_status = m.status < 0 ? m.status : -ECONNRESET;
	} else {
		snprintf(err, errlen, "core closed the connection");
		c->gone_status = -ECONNRESET;
	}
	return 0;
}

int
gnts_client_gone_status(const struct gnts_client *c)
{
	return c->gone ? (c->gone_status ? c->gone_status : -ECONNRESET) : 0;
}

void
gnts_client_close(struct gnts_client *c)
{
	struct gnts_msg m;

	if (c == NULL)
		return;
	if (!c->gone) {
		gnts_msg_init(&m, GNTS_MSG_BYE);
		(void)gnts_msg_send(c->fd, &m, NULL, 0);
	}
	gnts_bell_close(c->bell);
	close(c->fd);
	free(c);
}

/* ---- the backend's ops table (backend.h) -------------------------------- */

static int
host_cli_attach(const struct gnts_cli_cfg *cfg, struct gnts_attach_req *req,
		struct gnts_attach_rsp *rsp, void **impl, char *err,
		size_t errlen)
{
	return gnts_client_attach(cfg->socket, req, rsp,
				  (struct gnts_client **)impl, err, errlen);
}

static int
host_cli_map(void *impl, gnts_ref_t ref, void **va, size_t *size,
	     char *err, size_t errlen)
{
	return gnts_client_map(impl, ref, 0, va, size, err, errlen);
}

static void
host_cli_unmap(void *impl, void *va, size_t size)
{
	(void)impl;
	gnts_client_unmap(va, size);
}

static int
host_cli_alive(void *impl, char *err, size_t errlen)
{
	return gnts_client_alive(impl, err, errlen);
}

static int
host_cli_gone_status(const void *impl)
{
	return gnts_client_gone_status(impl);
}

static void
host_cli_close(void *impl)
{
	gnts_client_close(impl);
}

struct gnts_bell *
gnts_client_bell(const struct gnts_client *c)
{
	return c->bell;
}

static struct gnts_bell *
host_cli_bell(void *impl)
{
	return gnts_client_bell(impl);
}

/* The socket: readable when the core sends DETACH or hangs up. */
static int
host_cli_watch_fd(void *impl)
{
	return ((struct gnts_client *)impl)->fd;
}

const struct gnts_cli_ops gnts_host_cli_ops = {
	.name = "host",
	.flags = GNTS_CLI_REATTACH,
	.attach = host_cli_attach,
	.map = host_cli_map,
	.unmap = host_cli_unmap,
	.alive = host_cli_alive,
	.gone_status = host_cli_gone_status,
	.close = host_cli_close,
	.bell = host_cli_bell,
	.watch_fd = host_cli_watch_fd,
};

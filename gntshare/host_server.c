/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Host backend, core side: accept NF connections on a unix socket, assign
 * domain ids, serve ATTACH through the owner's callback and MAP from the
 * grant table.  Everything a peer sends is checked; a peer that breaks the
 * protocol is detached.
 */

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "backends.h"
#include "gntshare/host.h"
#include "host_msg.h"

#define MAX_CONNS 128

struct conn {
	int fd;			/* -1: free slot */
	gnts_peer_t dom;
	struct gnts_peer_cred cred;
	int attached;
};

struct gnts_server {
	int lfd;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	struct gnts_srv_cb cb;
	void *ctx;
	gnts_peer_t next_dom;
	struct conn conns[MAX_CONNS];
};

static int
fill_addr(struct sockaddr_un *sa, const char *path)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sa->sun_path))
		return -ENAMETOOLONG;
	strcpy(sa->sun_path, path);
	return 0;
}

/* 1 if something accepts connections on @p path. */
static int
socket_live(const struct sockaddr_un *sa)
{
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK,
			0);
	int live;

	if (fd < 0)
		return 0;
	/* Non-blocking: a live core with a full backlog answers EAGAIN,
	 * which still means somebody is there. */
	live = connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) == 0 ||
	       errno == EAGAIN;
	close(fd);
	return live;
}

/*
 * Bind and listen under a temporary name, then rename it to @p path: the
 * socket file appears only once it accepts connections, and with its
 * mode and group (@p cfg), so an NF started the moment it exists is never
 * refused.  (A path too long for the temporary name is bound directly.)
 */
static int
bind_listen(int fd, const struct sockaddr_un *sa, const char *path,
	    const struct gnts_srv_cfg *cfg)
{
	struct sockaddr_un tmp;
	char name[sizeof(tmp.sun_path) + 8];
	mode_t mode = cfg->socket_mode != 0 ? cfg->socket_mode : 0600;
	int direct;

	snprintf(name, sizeof(name), "%s.new", path);
	direct = fill_addr(&tmp, name) < 0;
	if (direct)
		tmp = *sa;
	else
		unlink(name);	/* left by a core that died right here */
	if (bind(fd, (const struct sockaddr *)&tmp, sizeof(tmp)) < 0 ||
	    (cfg->socket_group_set &&
	     chown(tmp.sun_path, (uid_t)-1, cfg->socket_gid) < 0) ||
	    chmod(tmp.sun_path, mode) < 0 || listen(fd, 64) < 0 ||
	    (!direct && rename(tmp.sun_path, path) < 0)) {
		int e = -errno;

		if (!direct)
			unlink(tmp.sun_path);
		return e;
	}
	return 0;
}

static int
server_open(const struct gnts_srv_cfg *cfg, struct gnts_server **out,
	    char *err, size_t errlen)
{
	const char *path = cfg->socket;
	struct gnts_server *s;
	struct sockaddr_un sa;
	struct stat st;
	int rc, i;

	err[0] = '\0';
	rc = fill_addr(&sa, path);
	if (rc < 0) {
		snprintf(err, errlen, "socket path too long: %s", path);
		return rc;
	}
	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode)) {
			snprintf(err, errlen,
				 "%s exists and is not a socket", path);
			return -EEXIST;
		}
		if (socket_live(&sa)) {
			snprintf(err, errlen,
				 "another xnv-core is listening on %s", path);
			return -EADDRINUSE;
		}
		unlink(path);
		gnts_log(GNTS_LOG_WARNING,
			 "removed stale socket %s (its core is gone)", path);
	}
	s = calloc(1, sizeof(*s));
	if (s == NULL)
		return -ENOMEM;
	s->lfd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC |
			SOCK_NONBLOCK, 0);
	if (s->lfd < 0) {
		rc = -errno;
		goto fail;
	}
	rc = bind_listen(s->lfd, &sa, path, cfg);
	if (rc < 0) {
		snprintf(err, errlen, "cannot listen on %s: %s", path,
			 strerror(-rc));
		close(s->lfd);
		goto fail;
	}
	snprintf(s->path, sizeof(s->path), "%s", path);
	s->cb = *cfg->cb;
	s->ctx = cfg->ctx;
	s->next_dom = 1;
	for (i = 0; i < MAX_CONNS; i++)
		s->conns[i].fd = -1;
	*out = s;
	return 0;
fail:
	if (err[0] == '\0')
		snprintf(err, errlen, "cannot listen on %s: %s", path,
			 strerror(-rc));
	free(s);
	return rc;
}

int
gnts_server_open(const char *path, const struct gnts_srv_cb *cb,
		 void *ctx, struct gnts_server **out, char *err, size_t errlen)
{
	const struct gnts_srv_cfg cfg = {
		.socket = path, .cb = cb, .ctx = ctx,
	};

	return server_open(&cfg, out, err, errlen);
}

static void
send_text(int fd, uint16_t type, int status, const char *text)
{
	struct gnts_msg m;

	gnts_msg_init(&m, type);
	m.status = status;
	snprintf(m.u.text, sizeof(m.u.text), "%s", text);
	(void)gnts_msg_send(fd, &m, -1);
}

static void
conn_close(struct gnts_server *s, struct conn *c)
{
	int was = c->attached;
	gnts_peer_t dom = c->dom;

	close(c->fd);
	c->fd = -1;
	c->attached = 0;
	if (was) {
		gnts_revoke_domain(dom);
		s->cb.death(s->ctx, dom);
	}
}

static void
do_accept(struct gnts_server *s)
{
	struct ucred cred;
	socklen_t cl = sizeof(cred);
	int fd, i;

	fd = accept4(s->lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (fd < 0)
		return;
	for (i = 0; i < MAX_CONNS; i++)
		if (s->conns[i].fd < 0)
			break;
	if (i == MAX_CONNS) {
		send_text(fd, GNTS_MSG_ERROR, -ENOSPC,
			  "core has no room for another domain");
		close(fd);
		return;
	}
	s->conns[i] = (struct conn){ .fd = fd, .dom = s->next_dom++ };
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) == 0)
		s->conns[i].cred = (struct gnts_peer_cred){
			.pid = cred.pid, .uid = cred.uid, .gid = cred.gid,
			.known = 1 };
}

static void
do_attach(struct gnts_server *s, struct conn *c, struct gnts_msg *m)
{
	struct gnts_msg r;
	char err[GNTS_ERR_LEN] = "";
	int rc;

	if (c->attached) {
		gnts_server_detach(s, c->dom, "protocol error: second ATTACH");
		return;
	}
	if (!gnts_str_ok(m->u.req.name, sizeof(m->u.req.name)) ||
	    !gnts_str_ok(m->u.req.service, sizeof(m->u.req.service)) ||
	    !gnts_str_ok(m->u.req.group, sizeof(m->u.req.group))) {
		send_text(c->fd, GNTS_MSG_ERROR, -EINVAL,
			  "attach refused: unterminated name");
		close(c->fd);
		c->fd = -1;
		return;
	}
	gnts_msg_init(&r, GNTS_MSG_ATTACH_OK);
	rc = s->cb.attach(s->ctx, c->dom, &c->cred, &m->u.req, &r.u.rsp,
			   err, sizeof(err));
	if (rc < 0) {
		send_text(c->fd, GNTS_MSG_ERROR, rc, err);
		close(c->fd);
		c->fd = -1;
		return;
	}
	c->attached = 1;
	r.u.rsp.domid = c->dom;
	if (gnts_msg_send(c->fd, &r, -1) < 0)
		conn_close(s, c);
}

/* "map refused: region 5 (xnv-pool-A) is not granted to domain 3"; the
 * region's @p name (NULL: none) only where the peer does not read it. */
static void
refusal_text(char *buf, size_t len, gnts_ref_t ref, const char *name,
	     int writable, gnts_peer_t dom)
{
	snprintf(buf, len, "map refused: region %u%s%s%s is not granted %sto "
		 "domain %u", ref, name != NULL ? " (" : "",
		 name != NULL ? name : "", name != NULL ? ")" : "",
		 writable ? "writable " : "", dom);
}

static void
do_map(struct gnts_server *s, struct conn *c, struct gnts_msg *m)
{
	struct gnts_region *r;
	struct gnts_msg rep;
	char why[GNTS_ERR_LEN];
	int ro = 0, fd;

	if (!c->attached) {
		snprintf(why, sizeof(why), "map of region %u refused: "
			 "connection (pid %d) has not attached", m->ref,
			 (int)c->cred.pid);
		if (s->cb.map_denied != NULL)
			s->cb.map_denied(s->ctx, c->dom, m->ref, why);
		send_text(c->fd, GNTS_MSG_ERROR, -EACCES, why);
		return;
	}
	r = gnts_region_lookup(m->ref, c->dom, &ro);
	if (r == NULL || (ro && !m->readonly)) {
		struct gnts_region *any = gnts_region_find(m->ref);

		if (any == NULL)
			snprintf(why, sizeof(why), "map refused: no region %u",
				 m->ref);
		else
			refusal_text(why, sizeof(why), m->ref, any->name,
				     r != NULL, c->dom);
		if (s->cb.map_denied != NULL)
			s->cb.map_denied(s->ctx, c->dom, m->ref, why);
		/* The log may say whose region it is; the peer hears of
		 * nothing but the ref it asked for. */
		if (any != NULL)
			refusal_text(why, sizeof(why), m->ref, NULL, r != NULL,
				     c->dom);
		send_text(c->fd, GNTS_MSG_ERROR, -EACCES, why);
		return;
	}
	fd = r->fd;
	if (m->readonly) {
		/* A new read-only open file description of the same memfd:
		 * the grantee cannot mprotect its way to write access. */
		char p[64];

		snprintf(p, sizeof(p), "/proc/self/fd/%d", r->fd);
		fd = open(p, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			send_text(c->fd, GNTS_MSG_ERROR, -errno,
				  "map failed: cannot reopen region read-only");
			return;
		}
	}
	gnts_msg_init(&rep, GNTS_MSG_MAP_OK);
	rep.ref = m->ref;
	rep.size = r->size;
	rep.readonly = m->readonly ? 1 : 0;
	if (gnts_msg_send(c->fd, &rep, fd) < 0)
		conn_close(s, c);
	if (fd != r->fd)
		close(fd);
}

static void
serve(struct gnts_server *s, struct conn *c)
{
	struct gnts_msg m;
	int fd, rc;

	for (;;) {
		rc = gnts_msg_recv(c->fd, &m, &fd, 1);
		if (fd >= 0)
			close(fd);	/* NFs never send fds */
		if (rc == -EAGAIN)
			return;
		if (rc == 0) {
			conn_close(s, c);
			return;
		}
		if (rc < 0) {
			if (c->attached)
				gnts_server_detach(s, c->dom,
						   "protocol error: malformed message");
			else {
				close(c->fd);
				c->fd = -1;
			}
			return;
		}
		switch (m.type) {
		case GNTS_MSG_ATTACH:
			do_attach(s, c, &m);
			break;
		case GNTS_MSG_MAP:
			do_map(s, c, &m);
			break;
		case GNTS_MSG_BYE:
			conn_close(s, c);
			break;
		default:
			if (c->attached)
				gnts_server_detach(s, c->dom,
						   "protocol error: unknown message");
			else {
				close(c->fd);
				c->fd = -1;
			}
			break;
		}
		if (c->fd < 0)
			return;
	}
}

int
gnts_server_poll(struct gnts_server *s)
{
	struct pollfd pfd[MAX_CONNS + 1];
	int idx[MAX_CONNS + 1];
	int n = 0, i, rc, events = 0;

	if (s == NULL)
		return 0;
	pfd[n].fd = s->lfd;
	pfd[n].events = POLLIN;
	idx[n++] = -1;
	for (i = 0; i < MAX_CONNS; i++) {
		if (s->conns[i].fd < 0)
			continue;
		pfd[n].fd = s->conns[i].fd;
		pfd[n].events = POLLIN;
		idx[n++] = i;
	}
	rc = poll(pfd, (nfds_t)n, 0);
	if (rc <= 0)
		return rc < 0 && errno != EINTR ? -errno : 0;
	for (i = 0; i < n; i++) {
		if (pfd[i].revents == 0)
			continue;
		events++;
		if (idx[i] < 0)
			do_accept(s);
		else if (s->conns[idx[i]].fd >= 0)
			serve(s, &s->conns[idx[i]]);
	}
	return events;
}

static struct conn *
find_dom(struct gnts_server *s, gnts_peer_t dom)
{
	int i;

	for (i = 0; i < MAX_CONNS; i++)
		if (s->conns[i].fd >= 0 && s->conns[i].dom == dom)
			return &s->conns[i];
	return NULL;
}

void
gnts_server_detach_status(struct gnts_server *s, gnts_peer_t dom,
			  int status, const char *reason)
{
	struct conn *c = find_dom(s, dom);

	if (c == NULL)
		return;
	send_text(c->fd, GNTS_MSG_DETACH, status, reason);
	conn_close(s, c);
}

void
gnts_server_detach(struct gnts_server *s, gnts_peer_t dom,
		   const char *reason)
{
	gnts_server_detach_status(s, dom, -ECONNRESET, reason);
}

pid_t
gnts_server_pid(struct gnts_server *s, gnts_peer_t dom)
{
	struct conn *c = find_dom(s, dom);

	return c != NULL ? c->cred.pid : 0;
}

void
gnts_server_close(struct gnts_server *s)
{
	int i;

	if (s == NULL)
		return;
	for (i = 0; i < MAX_CONNS; i++) {
		if (s->conns[i].fd < 0)
			continue;
		send_text(s->conns[i].fd, GNTS_MSG_DETACH, -ESHUTDOWN,
			  "xnv-core is shutting down");
		conn_close(s, &s->conns[i]);
	}
	close(s->lfd);
	unlink(s->path);
	free(s);
}

/* ---- the backend's ops table (backend.h) -------------------------------- */

/*
 * The socket's directory (/run/xnv), made if missing: private, but
 * searchable by the group and others the socket's mode lets in (0750 for
 * 0660), and in the socket's group.  An existing one is left as it is
 * (said once if it keeps them out).
 */
static int
socket_dir(const struct gnts_srv_cfg *cfg, char *err, size_t errlen)
{
	char dir[sizeof(((struct sockaddr_un *)0)->sun_path)], *slash;
	unsigned m = cfg->socket_mode != 0 ? cfg->socket_mode : 0600;
	mode_t dm = 0700 | (m & 0070 ? 0050 : 0) | (m & 0007 ? 0005 : 0);
	mode_t x = dm & 0111;	/* what it takes to reach the socket */
	struct stat st;

	snprintf(dir, sizeof(dir), "%s", cfg->socket);
	slash = strrchr(dir, '/');
	if (slash == NULL || slash == dir)
		return 0;
	*slash = '\0';
	if (mkdir(dir, 0700) < 0) {
		if (stat(dir, &st) == 0 && (st.st_mode & x) != x)
			gnts_log(GNTS_LOG_WARNING, "socket directory %s is "
				 "%04o (left as it is): not every NF socket "
				 "mode %04o lets in can reach the socket", dir,
				 (unsigned)(st.st_mode & 07777), m);
		return 0;	/* else bind() says what is wrong */
	}
	if ((cfg->socket_group_set &&
	     chown(dir, (uid_t)-1, cfg->socket_gid) < 0) ||
	    chmod(dir, dm) < 0) {
		int e = -errno;

		snprintf(err, errlen, "cannot set up %s: %s", dir,
			 strerror(-e));
		return e;
	}
	return 0;
}

static int
host_srv_open(const struct gnts_srv_cfg *cfg, void **impl, char *err,
	 size_t errlen)
{
	int rc = socket_dir(cfg, err, errlen);

	return rc < 0 ? rc : server_open(cfg, (struct gnts_server **)impl,
					 err, errlen);
}

static int
host_srv_poll(void *impl)
{
	return gnts_server_poll(impl);
}

static void
host_srv_detach(void *impl, gnts_peer_t peer, int status, const char *why)
{
	gnts_server_detach_status(impl, peer, status, why);
}

static void
host_srv_close(void *impl)
{
	gnts_server_close(impl);
}

static void
host_srv_attach_words(gnts_peer_t peer, pid_t pid, char *buf, size_t len)
{
	snprintf(buf, len, "(pid %d) attached as domain %u", (int)pid, peer);
}

static void
host_srv_peer_words(gnts_peer_t peer, char *buf, size_t len)
{
	snprintf(buf, len, "domain %u", peer);
}

static void
host_srv_where(void *impl, char *buf, size_t len)
{
	const struct gnts_server *s = impl;

	snprintf(buf, len, "on %s", s->path);
}

const struct gnts_srv_ops gnts_host_srv_ops = {
	.name = "host",
	.open = host_srv_open,
	.poll = host_srv_poll,
	.detach = host_srv_detach,
	.close = host_srv_close,
	.attach_words = host_srv_attach_words,
	.peer_words = host_srv_peer_words,
	.death_words = "connection closed (NF exited or died)",
	.where = host_srv_where,
};

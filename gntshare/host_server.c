/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Host backend, core side: accept NF connections on a unix socket, assign
 * domain ids, serve ATTACH through the owner's callback and MAP from the
 * grant table.  Everything a peer sends is checked; a peer that breaks the
 * protocol is detached.
 *
 * Any local process that may open the socket can talk to it, so what a
 * connection costs is bounded (limits in host.h):
 *   - requests are read within a rate per connection and one for all;
 *     a connection over its rate is simply not read for a while (its
 *     messages wait in the socket, nothing is lost or refused);
 *   - a connection must ATTACH within GNTS_HOST_ATTACH_TIMEOUT_MS;
 *   - connections waiting to attach are capped per uid and in all: the
 *     oldest one of the same uid (else of anyone) makes room;
 *   - refusals are logged at most GNTS_HOST_LOG_RATE per second, the rest
 *     counted and reported as a number.
 * The core runs this in a control thread (srv.c), never on its data path.
 */

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "backends.h"
#include "bucket.h"
#include "gntshare/host.h"
#include "host_listen.h"
#include "host_msg.h"
#include "host_server_pvt.h"
#include "region_pvt.h"

int
gnts_server_open_cfg(const struct gnts_srv_cfg *cfg, struct gnts_server **out,
		     char *err, size_t errlen)
{
	const char *path = cfg->socket;
	struct gnts_server *s;
	uint64_t now = gnts_now_ms();
	int i;

	err[0] = '\0';
	s = calloc(1, sizeof(*s));
	if (s == NULL) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	s->lfd = gnts_host_listen(cfg, err, errlen);
	if (s->lfd < 0) {
		int rc = s->lfd;

		free(s);
		return rc;
	}
	snprintf(s->path, sizeof(s->path), "%s", path);
	s->cb = *cfg->cb;
	s->ctx = cfg->ctx;
	s->next_dom = 1;
	s->rate = (struct gnts_bucket){ GNTS_HOST_BURST, now };
	s->attach_rate = (struct gnts_bucket){ GNTS_HOST_ATTACH_BURST, now };
	s->accept_rate = (struct gnts_bucket){ GNTS_HOST_ACCEPT_BURST, now };
	for (i = 0; i < MAX_CONNS; i++)
		s->conns[i].fd = -1;
	*out = s;
	return 0;
}

int
gnts_server_open(const char *path, const struct gnts_srv_cb *cb,
		 void *ctx, struct gnts_server **out, char *err, size_t errlen)
{
	const struct gnts_srv_cfg cfg = {
		.socket = path, .cb = cb, .ctx = ctx,
	};

	return gnts_server_open_cfg(&cfg, out, err, errlen);
}

static void
send_text(int fd, uint16_t type, int status, const char *text)
{
	struct gnts_msg m;

	gnts_msg_init(&m, type);
	m.status = status;
	snprintf(m.u.text, sizeof(m.u.text), "%s", text);
	(void)gnts_msg_send(fd, &m, NULL, 0);
}

/* A line about a connection, within the log rate. */
static void
conn_log(struct gnts_server *s, const struct conn *c, const char *what)
{
	if (gnts_ratelimit(&s->log, GNTS_HOST_LOG_RATE, gnts_now_ms()))
		gnts_log(GNTS_LOG_WARNING, "connection of pid %d (uid %u) %s",
			 (int)c->cred.pid, (unsigned)c->cred.uid, what);
	else
		s->st.not_logged++;
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
		/* A connection is the whole of its domain. */
		if (s->cb.domain_gone != NULL)
			s->cb.domain_gone(s->ctx, dom);
	}
	/* After death(): the owner no longer kicks or waits on it. */
	gnts_bell_close(c->bell);
	c->bell = NULL;
}

/* End an unattached connection, telling it why. */
static void
conn_refuse(struct gnts_server *s, struct conn *c, int status,
	    const char *why)
{
	send_text(c->fd, GNTS_MSG_ERROR, status, why);
	close(c->fd);
	c->fd = -1;
	(void)s;
}

/*
 * Room for one more connection waiting to attach: at most
 * GNTS_HOST_PENDING_PER_UID of @p uid and GNTS_HOST_PENDING_MAX in all;
 * over that the oldest of @p uid (else of anyone) is closed.
 */
static void
make_pending_room(struct gnts_server *s, uid_t uid)
{
	struct conn *old_uid = NULL, *old_any = NULL;
	unsigned n_uid = 0, n_all = 0, i;

	for (i = 0; i < MAX_CONNS; i++) {
		struct conn *c = &s->conns[i];

		if (c->fd < 0 || c->attached)
			continue;
		n_all++;
		if (old_any == NULL || c->since_ms < old_any->since_ms)
			old_any = c;
		if (c->cred.uid != uid)
			continue;
		n_uid++;
		if (old_uid == NULL || c->since_ms < old_uid->since_ms)
			old_uid = c;
	}
	if (n_uid >= GNTS_HOST_PENDING_PER_UID || n_all >= GNTS_HOST_PENDING_MAX) {
		struct conn *v = n_uid >= GNTS_HOST_PENDING_PER_UID ?
				 old_uid : old_any;

		conn_log(s, v, "closed: too many connections waiting to "
			 "attach, this one the oldest");
		conn_refuse(s, v, -EBUSY, "closed: too many connections "
			    "waiting to attach");
		s->st.evicted++;
	}
}

static struct conn *
free_slot(struct gnts_server *s)
{
	int i;

	for (i = 0; i < MAX_CONNS; i++)
		if (s->conns[i].fd < 0)
			return &s->conns[i];
	return NULL;
}

/* @return 1 if a connection was taken from the backlog. */
static int
do_accept(struct gnts_server *s)
{
	struct ucred cred;
	socklen_t cl = sizeof(cred);
	struct conn *c;
	int fd;

	fd = accept4(s->lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (fd < 0)
		return 0;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) < 0)
		cred = (struct ucred){ 0, (uid_t)-1, (gid_t)-1 };
	make_pending_room(s, cred.uid);
	c = free_slot(s);
	if (c == NULL) {
		send_text(fd, GNTS_MSG_ERROR, -ENOSPC,
			  "core has no room for another domain");
		close(fd);
		s->st.refused++;
		return 1;
	}
	*c = (struct conn){ .fd = fd, .dom = s->next_dom++,
			    .since_ms = gnts_now_ms(),
			    .rate = { GNTS_HOST_CONN_BURST, gnts_now_ms() } };
	c->cred = (struct gnts_peer_cred){ .pid = cred.pid, .uid = cred.uid,
					   .gid = cred.gid, .known = 1 };
	return 1;
}

static void
do_attach(struct gnts_server *s, struct conn *c, struct gnts_msg *m)
{
	struct gnts_msg r;
	char err[GNTS_ERR_LEN] = "";
	int nf_fds[GNTS_MSG_FDS] = { -1, -1 }, rc;
	unsigned n_fds;

	if (c->attached) {
		gnts_server_detach(s, c->dom, "protocol error: second ATTACH");
		return;
	}
	if (!gnts_str_ok(m->u.req.name, sizeof(m->u.req.name)) ||
	    !gnts_str_ok(m->u.req.service, sizeof(m->u.req.service)) ||
	    !gnts_str_ok(m->u.req.group, sizeof(m->u.req.group))) {
		s->st.refused++;
		conn_refuse(s, c, -EINVAL, "attach refused: unterminated name");
		return;
	}
	gnts_msg_init(&r, GNTS_MSG_ATTACH_OK);
	/* A doorbell pair when asked (with the pipe if asked: bell.h);
	 * none (the NF polls) when the fds cannot be had. */
	if ((m->u.req.flags & GNTS_REQ_BELL) &&
	    gnts_bell_host_pair(&c->bell, nf_fds,
				!!(m->u.req.flags & GNTS_REQ_BELL_PIPE)) < 0)
		c->bell = NULL;
	rc = s->cb.attach(s->ctx, c->dom, &c->cred, &m->u.req, c->bell,
			  &r.u.rsp, err, sizeof(err));
	if (rc < 0) {
		s->st.refused++;
		conn_refuse(s, c, rc, err);
		goto out;
	}
	c->attached = 1;
	r.u.rsp.domid = c->dom;
	n_fds = c->bell == NULL ? 0 : nf_fds[1] >= 0 ? 2 : 1;
	r.u.rsp.flags = (n_fds > 0 ? GNTS_RSP_BELL : 0) |
			(n_fds > 1 ? GNTS_RSP_BELL_PIPE : 0);
	if (gnts_msg_send(c->fd, &r, nf_fds, n_fds) < 0)
		conn_close(s, c);
out:
	/* The NF has its ends now (or never will). */
	gnts_msg_fds_close(nf_fds);
	if (!c->attached) {
		gnts_bell_close(c->bell);
		c->bell = NULL;
	}
}

/* A refused MAP: logged (within the log rate) with whose region it was;
 * the peer hears about its own request only.  Unattached: closed too. */
static void
map_refused(struct gnts_server *s, struct conn *c, gnts_ref_t ref, int rc)
{
	const char *what = !c->attached ? "not attached" :
			   rc == -ENOENT ? "not granted to this domain" :
			   rc == -EACCES ? "granted read-only" : strerror(-rc);
	char why[GNTS_ERR_LEN], name[GNTS_NAME_LEN];

	s->st.refused++;
	if (!gnts_ratelimit(&s->log, GNTS_HOST_LOG_RATE, gnts_now_ms())) {
		s->st.not_logged++;
	} else {
		snprintf(why, sizeof(why), "map of region %u (%s) refused: %s",
			 ref, gnts_region_name(ref, name, sizeof(name)), what);
		if (s->cb.map_denied != NULL && c->attached)
			s->cb.map_denied(s->ctx, c->dom, ref, why);
		else
			gnts_log(GNTS_LOG_WARNING, "pid %d (uid %u): %s",
				 (int)c->cred.pid, (unsigned)c->cred.uid, why);
	}
	snprintf(why, sizeof(why), "map of region %u refused: %s", ref, what);
	send_text(c->fd, GNTS_MSG_ERROR, rc == -ENOENT ? -EACCES : rc, why);
	if (!c->attached) {
		close(c->fd);
		c->fd = -1;
	}
}

static void
do_map(struct gnts_server *s, struct conn *c, struct gnts_msg *m)
{
	struct gnts_msg rep;
	size_t size = 0;
	int fd;

	fd = gnts_region_open_for(m->ref, c->dom, m->readonly, &size);
	if (fd < 0) {
		map_refused(s, c, m->ref, fd);
		return;
	}
	gnts_msg_init(&rep, GNTS_MSG_MAP_OK);
	rep.ref = m->ref;
	rep.size = size;
	rep.readonly = m->readonly ? 1 : 0;
	if (gnts_msg_send(c->fd, &rep, &fd, 1) < 0)
		conn_close(s, c);
	close(fd);
}

/* A message that breaks the protocol: detach, or close if unattached. */
static void
violation(struct gnts_server *s, struct conn *c, const char *why)
{
	s->st.refused++;
	if (c->attached) {
		gnts_server_detach(s, c->dom, why);
		return;
	}
	conn_log(s, c, why);
	conn_refuse(s, c, -EPROTO, why);
}

static void
handle(struct gnts_server *s, struct conn *c, struct gnts_msg *m)
{
	switch (m->type) {
	case GNTS_MSG_ATTACH:
		do_attach(s, c, m);
		break;
	case GNTS_MSG_MAP:
		if (c->attached)
			do_map(s, c, m);
		else	/* told why, and closed: ATTACH comes first */
			map_refused(s, c, m->ref, -EACCES);
		break;
	case GNTS_MSG_BYE:
		conn_close(s, c);
		break;
	default:
		violation(s, c, "protocol error: unknown message");
		break;
	}
}

/* May @p c be read now?  Unattached connections only send ATTACH: they
 * share the attach rate. */
static void
serve(struct gnts_server *s, struct conn *c)
{
	struct gnts_msg m;
	int k, rc;

	for (k = 0; k < SERVE_BATCH && c->fd >= 0; k++) {
		if (!gnts_host_may_read(s, c, gnts_now_ms(), 0))
			return;
		rc = gnts_msg_recv(c->fd, &m, NULL, 1);	/* NFs send no fds */
		if (rc == -EAGAIN)
			return;
		(void)gnts_host_may_read(s, c, gnts_now_ms(), 1);
		s->st.requests++;
		if (rc == 0)
			conn_close(s, c);
		else if (rc < 0)
			violation(s, c, "protocol error: malformed message");
		else
			handle(s, c, &m);
	}
}

static void
report_quiet(const struct gnts_server *s, uint32_t n)
{
	gnts_log(GNTS_LOG_WARNING, "%s: %u more refused requests or closed "
		 "connections not logged", s->path, n);
}

/* Connections that did not attach in time; refusals not logged. */
static void
housekeeping(struct gnts_server *s, uint64_t now)
{
	char why[80];
	uint32_t quiet;
	int i;

	snprintf(why, sizeof(why), "closed: no ATTACH within %u ms",
		 GNTS_HOST_ATTACH_TIMEOUT_MS);
	for (i = 0; i < MAX_CONNS; i++) {
		struct conn *c = &s->conns[i];

		if (c->fd < 0 || c->attached ||
		    now - c->since_ms < GNTS_HOST_ATTACH_TIMEOUT_MS)
			continue;
		conn_log(s, c, why);
		conn_refuse(s, c, -ETIMEDOUT, why);
		s->st.timed_out++;
	}
	quiet = gnts_ratelimit_quiet(&s->log, now);
	if (quiet > 0)
		report_quiet(s, quiet);
}

int
gnts_server_poll(struct gnts_server *s)
{
	struct pollfd pfd[MAX_CONNS + 1];
	int idx[MAX_CONNS + 1];
	uint64_t now = gnts_now_ms();
	int n, i, rc, events = 0, ms = 0;

	if (s == NULL)
		return 0;
	housekeeping(s, now);
	/* Round robin: who is served first (when tokens run out) moves;
	 * here only, not in gnts_server_wait's look at the same set. */
	s->rr = (s->rr + 1) % MAX_CONNS;
	n = gnts_host_poll_set(s, now, pfd, idx, &ms);
	rc = poll(pfd, (nfds_t)n, 0);
	if (rc <= 0)
		return rc < 0 && errno != EINTR ? -errno : 0;
	/* Requests of known connections first, then newcomers. */
	for (i = 0; i < n; i++) {
		if (idx[i] < 0 || pfd[i].revents == 0 ||
		    s->conns[idx[i]].fd < 0)
			continue;
		events++;
		serve(s, &s->conns[idx[i]]);
	}
	if (n > 0 && idx[0] < 0 && pfd[0].revents != 0)
		for (i = 0; i < ACCEPT_BATCH &&
		     gnts_bucket_has(&s->accept_rate, GNTS_HOST_ACCEPT_RATE,
				     GNTS_HOST_ACCEPT_BURST, now, 1) &&
		     do_accept(s); i++)
			events++;
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
gnts_server_stats(const struct gnts_server *s, struct gnts_host_stats *st)
{
	int i;

	*st = s->st;
	st->connections = 0;
	st->waiting = 0;
	for (i = 0; i < MAX_CONNS; i++) {
		if (s->conns[i].fd < 0)
			continue;
		st->connections++;
		st->waiting += !s->conns[i].attached;
	}
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
	if (s->log.quiet > 0)
		report_quiet(s, s->log.quiet);
	close(s->lfd);
	unlink(s->path);
	free(s);
}

const char *
gnts_server_path(const struct gnts_server *s)
{
	return s->path;
}

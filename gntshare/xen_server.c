/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * xen backend, Dom0 side: the XenStore rendezvous (protocol and node
 * layout in include/gntshare/xen.h).
 *
 * One watch on the backend root and one on @releaseDomain; each of their
 * events rescans the (small) tree and moves each NF device through its
 * states.  The scan is idempotent: our own writes fire the watch again
 * and the second scan finds nothing to do.  One watch per device on its
 * frontend state: a guest can fire that one as fast as it writes, so its
 * events step only that device, within the domain's rate (xen_events.c).
 * Values a guest wrote (frontend nodes) are untrusted: read once,
 * bounded, parsed strictly.
 */
#include <ctype.h>
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xenstore.h>

#include "backends.h"
#include "galloc.h"
#include "gntshare/ring.h"
#include "gntshare/xen.h"
#include "xen_server_pvt.h"

int
gnts_xs_read(struct gnts_xen_server *s, const char *dir, const char *node,
	     char *buf, size_t len)
{
	char path[160];
	unsigned int n = 0;
	char *v;

	snprintf(path, sizeof(path), "%s/%s", dir, node);
	v = xs_read(s->xs, XBT_NULL, path, &n);
	if (v == NULL)
		return -ENOENT;
	if (n >= len || memchr(v, '\0', n) != NULL) {
		free(v);
		return -E2BIG;
	}
	memcpy(buf, v, n);
	buf[n] = '\0';
	free(v);
	return 0;
}

/* A decimal number of at most 9 digits, else -1. */
static long
parse_num(const char *v)
{
	long x = 0;
	int i;

	if (v[0] == '\0')
		return -1;
	for (i = 0; v[i] != '\0'; i++) {
		if (v[i] < '0' || v[i] > '9' || i >= 9)
			return -1;
		x = x * 10 + (v[i] - '0');
	}
	return x;
}

static int
xread_num(struct gnts_xen_server *s, const char *dir, const char *node)
{
	char v[16];

	if (gnts_xs_read(s, dir, node, v, sizeof(v)) < 0)
		return -1;
	return (int)parse_num(v);
}

static void
set_state(struct gnts_xen_server *s, struct xdev *d, int st)
{
	(void)gnts_xs_write(s, XBT_NULL, d->be, GNTS_XS_STATE, "%d", st);
}

/* Refuse the device's current request: the guest reads why. */
static void
refuse(struct gnts_xen_server *s, struct xdev *d, const char *why)
{
	char rid[24];

	gnts_log(GNTS_LOG_WARNING, "domain %u device %u: %s", d->domid,
		 d->devid, why);
	if (gnts_xs_read(s, d->fe, GNTS_XS_REQUEST_ID, rid, sizeof(rid)) < 0)
		rid[0] = '\0';
	if (gnts_xen_answer_closed(s, d, rid, why) < 0)
		set_state(s, d, GNTS_XB_CLOSED);
}

static void
drop_connection(struct gnts_xen_server *s, struct xdev *d)
{
	d->attached = 0;
	d->suspending = 0;
	gnts_region_destroy(d->dir);	/* ends its grant */
	d->dir = NULL;
	if (s->cb.death != NULL)
		s->cb.death(s->ctx, d->dom);
	/* death() returned: the owner holds the doorbell no more. */
	gnts_xen_bell_close(d);
}

/* The request of device @p d: service, group and instance name from its
 * domain config (written by xnv-xl), alloc-bufs from the guest.  A name
 * the guest writes is not used: no guest can take another's name. */
static int
read_request(struct gnts_xen_server *s, struct xdev *d,
	     struct gnts_attach_req *req, int with_guest, char *err,
	     size_t errlen)
{
	char v[GNTS_ATTACH_NAME_LEN], esc[48];
	long n;

	memset(req, 0, sizeof(*req));
	if (gnts_xs_read(s, d->be, GNTS_XS_SERVICE, req->service,
			 sizeof(req->service)) ||
	    gnts_xs_read(s, d->be, GNTS_XS_TRUST_GROUP, req->group,
			 sizeof(req->group))) {
		snprintf(err, errlen, "backend nodes service/trust-group "
			 "missing or too long (register with xnv-xl)");
		return -EINVAL;
	}
	/* Default instance name: <domain name>.<device>, logs-safe. */
	if (gnts_xs_read(s, d->be, GNTS_XS_NAME, v, sizeof(v)) < 0 ||
	    v[0] == '\0')
		snprintf(v, sizeof(v), "dom%u", d->domid);
	snprintf(req->name, sizeof(req->name), "%.27s.%u", v, d->devid);
	for (char *p = req->name; *p; p++)
		if (!isalnum((unsigned char)*p) && !strchr("-_.", *p))
			*p = '_';
	if (!with_guest)
		return 0;
	if (gnts_xs_read(s, d->fe, GNTS_XS_SERVICE, v, sizeof(v)) == 0 &&
	    v[0] != '\0' &&
	    strcmp(v, req->service) != 0) {
		snprintf(err, errlen, "the NF asks for service '%s' but the "
			 "domain is declared nfv_service=\"%s\"",
			 gnts_esc(v, sizeof(v), esc, sizeof(esc)),
			 req->service);
		return -EINVAL;
	}
	if (gnts_xs_read(s, d->fe, GNTS_XS_ALLOC_BUFS, v, sizeof(v)) == 0) {
		n = parse_num(v);
		if (n < 0 || n > GNTS_RING_MAX) {
			snprintf(err, errlen, "alloc-bufs '%s' is not a "
				 "number from 0 to %u",
				 gnts_esc(v, 15, esc, 24), GNTS_RING_MAX);
			return -EINVAL;
		}
		req->alloc_bufs = (uint32_t)n;
	}
	return gnts_xen_bell_request(s, d, req, err, errlen);
}

static void
do_attach(struct gnts_xen_server *s, struct xdev *d)
{
	static const struct gnts_peer_cred nocred;	/* config decides */
	struct gnts_attach_req req;
	struct gnts_attach_rsp rsp;
	char err[ERR_MAX], rid[24], name[48], bell[40];
	int rc;

	if (gnts_xs_read(s, d->fe, GNTS_XS_REQUEST_ID, rid, sizeof(rid)) < 0)
		rid[0] = '\0';
	rc = read_request(s, d, &req, 1, err, sizeof(err));
	if (rc == 0) {
		gnts_xen_bell_offer(d, &req);
		rc = s->cb.attach(s->ctx, d->dom, &nocred, &req, d->bell, &rsp,
				  err, sizeof(err));
	}
	if (rc < 0) {
		gnts_xen_bell_close(d);	/* the owner did not take it */
		refuse(s, d, err);
		return;
	}
	d->attached = 1;
	rsp.flags = d->bell != NULL ? GNTS_RSP_BELL : 0;
	rc = gnts_xen_publish(s, d, &rsp, req.name, rid, err, sizeof(err));
	if (rc < 0) {
		drop_connection(s, d);	/* closes the doorbell too */
		refuse(s, d, err);
		return;
	}
	if (d->bell != NULL)
		snprintf(bell, sizeof(bell), "event channel %u", d->bell_port);
	gnts_log(GNTS_LOG_INFO, "domain %u device %u connected: %s, service "
		 "%s, group %s; doorbell: %s", d->domid, d->devid,
		 gnts_esc(req.name, sizeof(req.name), name, sizeof(name)),
		 req.service, req.group, d->bell != NULL ? bell :
		 (req.flags & GNTS_REQ_BELL) ? "none (polls)" : "not asked");
}

/* Check a device xnv-xl registered (or one a previous core left). */
static void
do_check(struct gnts_xen_server *s, struct xdev *d, int be)
{
	struct gnts_attach_req req;
	char err[GNTS_ERR_LEN];

	if (be == GNTS_XB_CONNECTED || be == GNTS_XB_INITIALISED) {
		/* Connected to a core that is gone. */
		(void)gnts_xs_write(s, XBT_NULL, d->be, GNTS_XS_DETACH_REASON,
				    "%s", "xnv-core restarted");
		(void)gnts_xs_write(s, XBT_NULL, d->be, GNTS_XS_DETACH_STATUS,
				    "%d", -ECONNRESET);
		set_state(s, d, GNTS_XB_CLOSED);
	}
	if (read_request(s, d, &req, 0, err, sizeof(err)) < 0 ||
	    (s->cb.check != NULL &&
	     s->cb.check(s->ctx, &req, err, sizeof(err)) < 0)) {
		refuse(s, d, err);
		return;
	}
	if (be != GNTS_XB_CLOSED && be != GNTS_XB_CONNECTED)
		set_state(s, d, GNTS_XB_INITWAIT);
}

/* xnv-xl asks for attached device @p d to be let go, its domain about
 * to be saved or migrated (its backend's suspend node: Dom0 writes it,
 * never the guest): the owner detaches the NF telling it to come back
 * (struct gnts_srv_cb suspend), once.  1 if asked. */
static int
suspend_asked(struct gnts_xen_server *s, struct xdev *d)
{
	char what[16], why[96];

	if (gnts_xs_read(s, d->be, GNTS_XS_SUSPEND, what, sizeof(what)) < 0)
		return 0;
	if (d->suspending)
		return 1;
	d->suspending = 1;
	snprintf(why, sizeof(why), "its domain is being %s (xnv-xl): it "
		 "attaches again once the domain runs again",
		 strcmp(what, "migrate") == 0 ? "migrated" : "saved");
	gnts_log(GNTS_LOG_INFO, "domain %u device %u: %s", d->domid, d->devid,
		 why);
	if (s->cb.suspend != NULL)
		s->cb.suspend(s->ctx, d->dom, why);
	else
		drop_connection(s, d);
	return 1;
}

/* The guest asks again (a request-id the backend has not answered)
 * while the core still counts it connected: the NF that had it went
 * without closing the device (or the core missed its Closed). */
static int
new_request(struct gnts_xen_server *s, struct xdev *d)
{
	char rid[24], done[24];

	return gnts_xs_read(s, d->fe, GNTS_XS_REQUEST_ID, rid,
			    sizeof(rid)) == 0 &&
	       gnts_xs_read(s, d->be, GNTS_XS_REQUEST_ID, done,
			    sizeof(done)) == 0 &&
	       strcmp(rid, done) != 0;
}

void
gnts_xen_step(struct gnts_xen_server *s, struct xdev *d)
{
	int be, fe;

	/* What we read now answers every event that waited for this. */
	d->due = d->pending = 0;
	be = xread_num(s, d->be, GNTS_XS_STATE);
	fe = xread_num(s, d->fe, GNTS_XS_STATE);

	if (d->attached && suspend_asked(s, d))
		return;
	if (d->attached) {
		int again = fe == GNTS_XB_INITIALISED && new_request(s, d);

		if (fe != GNTS_XB_CLOSING && fe != GNTS_XB_CLOSED && fe >= 0 &&
		    !again)
			return;
		gnts_log(GNTS_LOG_INFO, "domain %u device %u: %s", d->domid,
			 d->devid, again ? "a new request replaces the "
			 "connected NF" : "the NF closed it");
		drop_connection(s, d);
		set_state(s, d, GNTS_XB_CLOSED);
		if (!again)
			return;
		be = GNTS_XB_CLOSED;
	}
	if (d->fresh || be == GNTS_XB_INITIALISING) {
		d->fresh = 0;
		do_check(s, d, be);
		be = xread_num(s, d->be, GNTS_XS_STATE);
	}
	if (fe == GNTS_XB_INITIALISED &&
	    (be == GNTS_XB_INITWAIT || be == GNTS_XB_CLOSED)) {
		char rid[24], done[24];

		/* Answered this request already (refused)? */
		if (gnts_xs_read(s, d->fe, GNTS_XS_REQUEST_ID, rid,
				 sizeof(rid)) == 0 &&
		    be == GNTS_XB_CLOSED &&
		    gnts_xs_read(s, d->be, GNTS_XS_REQUEST_ID, done,
				 sizeof(done)) == 0 &&
		    strcmp(rid, done) == 0)
			return;
		if (gnts_xs_read(s, d->be, GNTS_XS_SUSPEND, rid,
				 sizeof(rid)) == 0)
			refuse(s, d, "the domain is being saved or migrated: "
			       "attach once it runs again");
		else
			do_attach(s, d);
	}
}

void
gnts_xen_forget_dev(struct gnts_xen_server *s, struct xdev *d)
{
	char path[128];

	if (d->attached)
		drop_connection(s, d);
	gnts_xen_bell_close(d);	/* only while attached: none here */
	snprintf(path, sizeof(path), "%s/%s", d->fe, GNTS_XS_STATE);
	(void)xs_unwatch(s->xs, path, "fe");
	memset(d, 0, sizeof(*d));
}

/* Grants through the gntshare module, or else gntalloc (logged, see
 * gnts_galloc_enable()); then watch the backend root and @releaseDomain.
 * Domains already registered (a restarted core) are picked up by the
 * first poll.  cb->check before a domain boots; cb->attach with no credentials;
 * cb->death when the NF leaves, its domain dies or its nodes are removed;
 * cb->map_denied is not used (Xen refuses foreign refs itself). */
static int
xen_srv_open(const struct gnts_srv_cfg *cfg, void **impl, char *err,
	 size_t errlen)
{
	struct gnts_xen_server *s;
	int rc;

	rc = gnts_xen_grants_enable(err, errlen);
	if (rc < 0)
		return rc;
	s = calloc(1, sizeof(*s));
	if (s == NULL)
		return -ENOMEM;
	s->xs = xs_open(0);
	if (s->xs == NULL) {
		rc = -errno;
		snprintf(err, errlen, "cannot connect to XenStore: %s (is "
			 "this Dom0 with xenstored running?)", strerror(-rc));
		free(s);
		return rc;
	}
	s->self = gnts_xen_own_domid(s->xs);
	snprintf(s->be_root, sizeof(s->be_root), GNTS_XS_BACKEND_ROOT_FMT,
		 s->self);
	if (!xs_watch(s->xs, s->be_root, "be") ||
	    !xs_watch(s->xs, "@releaseDomain", "rel")) {
		rc = -errno;
		snprintf(err, errlen, "cannot watch %s: %s", s->be_root,
			 strerror(-rc));
		xs_close(s->xs);
		free(s);
		return rc;
	}
	if (s->self != 0)
		gnts_log(GNTS_LOG_INFO, "running in domain %u, a driver "
			 "domain: NF domains use it with nfv_backend = its "
			 "name", s->self);
	s->cb = *cfg->cb;
	s->ctx = cfg->ctx;
	s->dirty = 1;
	*impl = s;
	return 0;
}

static int
xen_srv_poll(void *impl)
{
	struct gnts_xen_server *s = impl;
	struct pollfd p;
	int n = 0;

	if (s == NULL)
		return 0;
	p.fd = xs_fileno(s->xs);
	p.events = POLLIN;
	if (poll(&p, 1, 0) > 0)
		n = gnts_xen_read_events(s);
	if (s->dirty) {
		s->dirty = 0;
		gnts_xen_scan(s);
	}
	/* Every pass, not only after an event: a pending device is stepped
	 * when its domain has a token again, whether or not more come. */
	if (n > 0 || s->any_pending)
		n += gnts_xen_step_marked(s);
	gnts_xen_rate_report(s, gnts_now_ms());
	return n;
}

/* The control thread's wait (backend.h): XenStore's watch fd, or soon
 * when a device waits for a token or a rescan is due. */
static int
xen_srv_wait(void *impl, int wake_fd, int max_ms)
{
	struct gnts_xen_server *s = impl;
	struct pollfd p[2] = { { .fd = xs_fileno(s->xs), .events = POLLIN },
			       { .fd = wake_fd, .events = POLLIN } };

	if (s->dirty || s->any_pending)
		max_ms = max_ms > 1 ? 1 : max_ms;
	return poll(p, wake_fd >= 0 ? 2 : 1, max_ms) < 0 && errno != EINTR ?
	       -errno : 0;
}

/* Tell the guest why (@p status, @p reason), end its directory grant,
 * call death(). */
static void
xen_srv_detach(void *impl, gnts_peer_t dom, int status, const char *reason)
{
	struct gnts_xen_server *s = impl;
	unsigned i;

	if (s == NULL)
		return;
	for (i = 0; i < MAX_DEVS; i++) {
		struct xdev *d = &s->devs[i];

		if (!d->used || d->dom != dom || !d->attached)
			continue;
		(void)gnts_xs_write(s, XBT_NULL, d->be, GNTS_XS_DETACH_REASON,
				    "%s", reason);
		(void)gnts_xs_write(s, XBT_NULL, d->be, GNTS_XS_DETACH_STATUS,
				    "%d", status);
		set_state(s, d, GNTS_XB_CLOSING);
		drop_connection(s, d);
		set_state(s, d, GNTS_XB_CLOSED);
	}
}

static void
xen_srv_close(void *impl)
{
	struct gnts_xen_server *s = impl;
	unsigned i;

	if (s == NULL)
		return;
	for (i = 0; i < MAX_DEVS; i++) {
		if (s->devs[i].attached)
			xen_srv_detach(s, s->devs[i].dom, -ESHUTDOWN,
					       "xnv-core is shutting down");
		if (s->devs[i].used)
			gnts_xen_forget_dev(s, &s->devs[i]);
	}
	xs_close(s->xs);
	free(s);
	gnts_xen_punish_close();
}

/* ---- the backend's ops table (backend.h) -------------------------------- */

static void
xen_srv_attach_words(gnts_peer_t peer, pid_t pid, char *buf, size_t len)
{
	(void)pid;
	snprintf(buf, len, "attached from Xen domain %u device %u",
		 GNTS_XEN_DOMID(peer), GNTS_XEN_DEVID(peer));
}

static void
xen_srv_peer_words(gnts_peer_t peer, char *buf, size_t len)
{
	snprintf(buf, len, "Xen domain %u device %u", GNTS_XEN_DOMID(peer),
		 GNTS_XEN_DEVID(peer));
}

static uint32_t
xen_srv_domain_of(gnts_peer_t peer)
{
	return GNTS_XEN_DOMID(peer);
}

static void
xen_srv_domain_words(uint32_t domain, char *buf, size_t len)
{
	snprintf(buf, len, "Xen domain %u", domain);
}

static void
xen_srv_where(void *impl, char *buf, size_t len)
{
	struct gnts_xen_server *s = impl;

	snprintf(buf, len, "from Xen domains registered under %s (xnv-xl); "
		 "grants by %s", s->be_root,
		 gnts_region_shareable() ? "the gntshare module" : "gntalloc, "
		 "each NF with a pool of its own of its group's pool_bufs");
}

const struct gnts_srv_ops gnts_xen_srv_ops = {
	.name = "xen",
	.open = xen_srv_open,
	.poll = xen_srv_poll,
	.wait = xen_srv_wait,
	.detach = xen_srv_detach,
	.close = xen_srv_close,
	.attach_words = xen_srv_attach_words,
	.peer_words = xen_srv_peer_words,
	.death_words = "the NF closed its device, or its domain is gone",
	.where = xen_srv_where,
	.counters = gnts_xen_counters,
	.domain_of = xen_srv_domain_of,
	.domain_words = xen_srv_domain_words,
	.punish = gnts_xen_punish,
};

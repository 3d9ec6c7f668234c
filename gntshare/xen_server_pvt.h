/* SPDX-License-Identifier: BSD-3-Clause */
/* libgntshare internals: the xen backend's Dom0 side, shared by
 * xen_server.c (watches, states, attach/detach), xen_events.c (watch
 * events and each domain's rate of them), xen_publish.c (the refs and
 * geometry an attached guest reads) and xen_bell.c (each device's
 * doorbell). */
#ifndef GNTSHARE_XEN_SERVER_PVT_H
#define GNTSHARE_XEN_SERVER_PVT_H

#include <stddef.h>
#include <stdint.h>

#include <xenstore.h>

#include "backends.h"
#include "bucket.h"
#include "gntshare/xen.h"

#define MAX_DEVS 256u
#define VAL_MAX  4096u		/* XenStore value limit */
#define ERR_MAX  512u		/* a refusal: may name limits and knobs */

struct xdev {
	int used;
	int fresh;		/* first seen by this server: re-check it */
	int attached;
	int suspending;		/* attached, asked to let go for a save or
				 * migration: the owner was told once */
	uint16_t domid;
	uint8_t devid;
	gnts_peer_t dom;
	struct gnts_region *dir;	/* directory pages of the pool refs */
	struct gnts_bell *bell;	/* the core's end of its doorbell, while
				 * attached and asked for (else NULL) */
	uint32_t bell_port;	/* its port, published as event-channel */
	char be[80];
	char fe[96];
	int seen;
	int due;		/* an event within its domain's rate */
	int pending;		/* one over it: step once the domain has a
				 * token again */
};

/* A domain with NF devices: its budget of frontend events, and the
 * second its log line counts (GNTS_XEN_EVENT_RATE, xen.h). */
struct xdom {
	int used;
	uint16_t domid;
	struct gnts_bucket rate;
	uint64_t win_ms;	/* start of the second being counted */
	uint32_t win_events;	/* frontend events in it */
	uint32_t win_deferred;	/* of which over the rate */
};

struct gnts_xen_server {
	struct xs_handle *xs;
	unsigned self;		/* our domain: 0, or a driver domain's id */
	char be_root[48];	/* GNTS_XS_BACKEND_ROOT_FMT of self */
	struct gnts_srv_cb cb;
	void *ctx;
	int dirty;		/* a backend or domain event: rescan */
	int any_pending;	/* some device waits for its domain's rate */
	uint64_t events;	/* watch events read */
	uint64_t events_deferred; /* of which over their domain's rate */
	struct gnts_ratelimit odd_log;	/* events on nodes we do not know */
	struct xdev devs[MAX_DEVS];
	struct xdom doms[MAX_DEVS];	/* at most one per device */
};

/* Forget device @p d: detach its NF if attached, unwatch its frontend
 * (xen_server.c). */
void gnts_xen_forget_dev(struct gnts_xen_server *s, struct xdev *d);

/* Scan our backend tree: add new devices, forget gone ones (their
 * domain's owner told), step the others (xen_scan.c). */
void gnts_xen_scan(struct gnts_xen_server *s);

/* Our domain id: 0 (Dom0), or a driver domain's (xen_scan.c). */
unsigned gnts_xen_own_domid(struct xs_handle *xs);

/* Read @p dir/@p node into @p buf (NUL-terminated, at most @p len - 1
 * bytes; a longer value, or one holding a NUL, is refused).  0, or
 * -ENOENT / -E2BIG (xen_server.c). */
int gnts_xs_read(struct gnts_xen_server *s, const char *dir, const char *node,
		 char *buf, size_t len);

/* Write @p dir/@p node = printf(@p fmt, ...) in transaction @p t.
 * 0, or -E2BIG (longer than a XenStore value) / -errno. */
int gnts_xs_write(struct gnts_xen_server *s, xs_transaction_t t,
		  const char *dir, const char *node, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

/* Grant @p d its pool directory and publish the reply @p rsp (refs,
 * geometry, @p name, answering request @p rid; event-channel when @p d
 * has a doorbell, else none), Connected, in one transaction.  0, or
 * -errno with one line in @p err. */
int gnts_xen_publish(struct gnts_xen_server *s, struct xdev *d,
		     const struct gnts_attach_rsp *rsp, const char *name,
		     const char *rid, char *err, size_t errlen);

/* Refuse request @p rid ("": none named) of @p d: error = @p why,
 * request-id, state Closed, in one transaction.  0 or -EIO. */
int gnts_xen_answer_closed(struct gnts_xen_server *s, struct xdev *d,
			   const char *rid, const char *why);

/* Device @p devid of domain @p domid, or NULL (xen_server.c). */
struct xdev *gnts_xen_find_dev(struct gnts_xen_server *s, unsigned domid,
			       unsigned devid);
/* Move @p d through its states as its nodes are now; whatever events
 * it had waiting are answered by that (xen_server.c). */
void gnts_xen_step(struct gnts_xen_server *s, struct xdev *d);

/* ---- doorbells (xen_bell.c) --------------------------------------------- */

/* request-bell of @p d's NF into req->flags.  0, or -EINVAL with the
 * refusal in @p err. */
int gnts_xen_bell_request(struct gnts_xen_server *s, struct xdev *d,
			  struct gnts_attach_req *req, char *err,
			  size_t errlen);
/* @p d's doorbell (d->bell, d->bell_port) when req->flags asks for one
 * and a port can be offered to its domain; else none (logged). */
void gnts_xen_bell_offer(struct xdev *d, const struct gnts_attach_req *req);
/* Close @p d's doorbell, if any. */
void gnts_xen_bell_close(struct xdev *d);

/* ---- watch events (xen_events.c) ---------------------------------------- */

/* Domain and device of a frontend state path, parsed strictly:
 * exactly "/local/domain/<domid>/device/xnv/<devid>/state", numbers
 * without leading zeros.  0, or -EINVAL. */
int gnts_xen_fe_path(const char *path, unsigned *domid, unsigned *devid);
/* Read every watch event queued: a frontend one (token "fe") marks its
 * device due or, over its domain's rate, pending; any other sets dirty.
 * Returns the events read. */
int gnts_xen_read_events(struct gnts_xen_server *s);
/* One frontend event on @p path at @p now_ms (the part of the above a
 * unit test can drive without XenStore). */
void gnts_xen_fe_event(struct gnts_xen_server *s, const char *path,
		       uint64_t now_ms);
/* 1 if @p d is to be stepped now: due, or pending and its domain has a
 * token (taken). */
int gnts_xen_may_step(struct gnts_xen_server *s, struct xdev *d,
		      uint64_t now_ms);
/* Step the devices gnts_xen_may_step() picks.  Returns the steps. */
int gnts_xen_step_marked(struct gnts_xen_server *s);
/* The log line of each domain whose second of counting is over and had
 * events over the rate. */
void gnts_xen_rate_report(struct gnts_xen_server *s, uint64_t now_ms);
/* Domain @p domid has no device left: its line, then its budget goes. */
void gnts_xen_forget_domain(struct gnts_xen_server *s, unsigned domid,
			    uint64_t now_ms);
/* The backend's counters (struct gnts_srv_ops counters). */
void gnts_xen_counters(void *impl, struct gnts_srv_counters *ct);

/* Pause or destroy @p domid through libxl, logged (xen_punish.c). */
void gnts_xen_punish(void *impl, uint32_t domid, enum gnts_punish how,
		     const char *why);
/* Free the libxl context (at close). */
void gnts_xen_punish_close(void);

#endif

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * xen backend, Dom0 side: the XenStore watch events, and what each
 * domain's may cost (GNTS_XEN_EVENT_RATE, xen.h).
 *
 * A guest owns its frontend directory and can rewrite its state node as
 * fast as xenstored lets it; each write fires our watch.  So a frontend
 * event (token "fe") steps only the device its path names, and only
 * within its domain's token bucket: one over the rate marks the device
 * pending, and the poll loop steps it once the domain has a token again.
 * step() reads the nodes as they are then, so what the deferred events
 * said is not lost: a pending device is simply answered late.  Events on
 * the backend root ("be": xnv-xl's registrations, our own writes) and
 * @releaseDomain ("rel") come from Dom0 and Xen, not from a guest: they
 * still rescan the whole tree (xen_server.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xenstore.h>

#include "xen_server_pvt.h"

#define ODD_LOG_RATE 1u		/* lines/s about events we cannot place */

/* A decimal number at the start of *@p p (gnts_xs_uint(): no leading
 * zero), at most @p max; moves *@p p past it.  0, or -EINVAL. */
static int
take_num(const char **p, uint32_t max, unsigned *out)
{
	size_t n = strspn(*p, "0123456789");
	uint32_t x;

	if (gnts_xs_uint(*p, n, max, &x) < 0)
		return -EINVAL;
	*out = x;
	*p += n;
	return 0;
}

/* @p p starts with @p word: move past it.  0, or -EINVAL. */
static int
take_word(const char **p, const char *word)
{
	size_t n = strlen(word);

	if (strncmp(*p, word, n) != 0)
		return -EINVAL;
	*p += n;
	return 0;
}

int
gnts_xen_fe_path(const char *path, unsigned *domid, unsigned *devid)
{
	const char *p = path;

	if (take_word(&p, "/local/domain/") < 0 ||
	    take_num(&p, GNTS_XEN_MAX_DOMID, domid) < 0 || *domid == 0 ||
	    take_word(&p, "/" GNTS_XS_FRONTEND_DIR "/") < 0 ||
	    take_num(&p, GNTS_XEN_MAX_DEVS - 1, devid) < 0 ||
	    take_word(&p, "/" GNTS_XS_STATE) < 0 || *p != '\0')
		return -EINVAL;
	return 0;
}

/* The budget of domain @p domid, made (full) on its first event; NULL
 * only if the table is full, which it cannot be: a slot is used only by
 * a domain with a device, and there are as many slots as devices. */
static struct xdom *
dom_of(struct gnts_xen_server *s, unsigned domid, uint64_t now_ms)
{
	struct xdom *free_slot = NULL;
	unsigned i;

	for (i = 0; i < MAX_DEVS; i++) {
		struct xdom *x = &s->doms[i];

		if (x->used && x->domid == domid)
			return x;
		if (!x->used && free_slot == NULL)
			free_slot = x;
	}
	if (free_slot != NULL)
		*free_slot = (struct xdom){
			.used = 1, .domid = (uint16_t)domid,
			.rate = { GNTS_XEN_EVENT_BURST, now_ms },
			.win_ms = now_ms,
		};
	return free_slot;
}

/* Log the second of @p x if it had events over the rate (at most one
 * line per domain per second: never one per event), start the next. */
static void
report(struct xdom *x, uint64_t now_ms)
{
	if (x->win_deferred > 0)
		gnts_log(GNTS_LOG_WARNING, "Xen domain %u: %u xnv state "
			 "changes in %.1f s, over %u/s: handled at most %u/s, "
			 "%u deferred", x->domid, x->win_events,
			 (double)(now_ms - x->win_ms) / 1000.0,
			 GNTS_XEN_EVENT_RATE, GNTS_XEN_EVENT_RATE,
			 x->win_deferred);
	x->win_ms = now_ms;
	x->win_events = 0;
	x->win_deferred = 0;
}

void
gnts_xen_fe_event(struct gnts_xen_server *s, const char *path,
		  uint64_t now_ms)
{
	unsigned domid, devid;
	struct xdev *d;
	struct xdom *x;
	char esc[64];

	if (gnts_xen_fe_path(path, &domid, &devid) < 0) {
		/* A node under a state node: its guest made it, not ours. */
		if (gnts_ratelimit(&s->odd_log, ODD_LOG_RATE, now_ms))
			gnts_log(GNTS_LOG_WARNING, "XenStore event on %s "
				 "ignored: not a frontend state node",
				 gnts_esc(path, 96, esc, sizeof(esc)));
		return;
	}
	d = gnts_xen_find_dev(s, domid, devid);
	if (d == NULL)
		return;		/* forgotten: its watch is gone too */
	x = dom_of(s, domid, now_ms);
	if (x == NULL) {
		d->due = 1;
		return;
	}
	x->win_events++;
	if (gnts_bucket_has(&x->rate, GNTS_XEN_EVENT_RATE,
			    GNTS_XEN_EVENT_BURST, now_ms, 1)) {
		d->due = 1;
		return;
	}
	x->win_deferred++;
	s->events_deferred++;
	d->pending = 1;
	s->any_pending = 1;
}

int
gnts_xen_read_events(struct gnts_xen_server *s)
{
	uint64_t now = gnts_now_ms();
	char **ev;
	int n = 0;

	while ((ev = xs_check_watch(s->xs)) != NULL) {
		n++;
		s->events++;
		if (strcmp(ev[XS_WATCH_TOKEN], "fe") == 0)
			gnts_xen_fe_event(s, ev[XS_WATCH_PATH], now);
		else
			s->dirty = 1;
		free(ev);
	}
	return n;
}

int
gnts_xen_may_step(struct gnts_xen_server *s, struct xdev *d, uint64_t now_ms)
{
	struct xdom *x;

	if (d->due)
		return 1;
	if (!d->pending)
		return 0;
	x = dom_of(s, d->domid, now_ms);
	return x == NULL || gnts_bucket_has(&x->rate, GNTS_XEN_EVENT_RATE,
					    GNTS_XEN_EVENT_BURST, now_ms, 1);
}

int
gnts_xen_step_marked(struct gnts_xen_server *s)
{
	uint64_t now = gnts_now_ms();
	int n = 0, waiting = 0;
	unsigned i;

	for (i = 0; i < MAX_DEVS; i++) {
		struct xdev *d = &s->devs[i];

		if (!d->used || (!d->due && !d->pending))
			continue;
		if (gnts_xen_may_step(s, d, now)) {
			gnts_xen_step(s, d);
			n++;
		} else {
			waiting = 1;
		}
	}
	s->any_pending = waiting;
	return n;
}

void
gnts_xen_rate_report(struct gnts_xen_server *s, uint64_t now_ms)
{
	unsigned i;

	uint32_t quiet = gnts_ratelimit_quiet(&s->odd_log, now_ms);

	if (quiet > 0)
		gnts_log(GNTS_LOG_WARNING, "%u more XenStore events on nodes "
			 "that are not frontend states ignored", quiet);
	for (i = 0; i < MAX_DEVS; i++)
		if (s->doms[i].used && now_ms - s->doms[i].win_ms >= 1000)
			report(&s->doms[i], now_ms);
}

void
gnts_xen_forget_domain(struct gnts_xen_server *s, unsigned domid,
		       uint64_t now_ms)
{
	unsigned i;

	for (i = 0; i < MAX_DEVS; i++)
		if (s->doms[i].used && s->doms[i].domid == domid) {
			report(&s->doms[i], now_ms);
			s->doms[i].used = 0;
		}
}

void
gnts_xen_counters(void *impl, struct gnts_srv_counters *ct)
{
	const struct gnts_xen_server *s = impl;

	ct->events = s->events;
	ct->events_deferred = s->events_deferred;
}

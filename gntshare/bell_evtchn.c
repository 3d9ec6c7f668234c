/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Xen doorbells: one interdomain event channel per NF device, as
 * netfront/netback have.  The core offers a port to the NF's domain
 * (gnts_bell_evtchn_offer), publishes its number, and the NF binds it
 * (gnts_bell_evtchn_bind); a notify on either end makes the other end's
 * port pending, so the one channel carries kicks both ways.
 *
 * Each end opens a libxenevtchn handle of its own (its own open file of
 * /dev/xen/evtchn): its fd is readable only when its own port fired, and
 * xenevtchn_pending() returns only that port.  Nothing is shared between
 * the ends, nor between NFs.
 *
 * What Linux's evtchn driver does that this relies on:
 *   - A port that fires is masked until we unmask it (a write of the
 *     port, xenevtchn_unmask()); notifications meanwhile only leave it
 *     pending, and it fires again once unmasked.  So at most one event
 *     per port waits in a handle's queue however fast the peer notifies,
 *     the queue (sized for the ports bound to it) cannot overflow, and a
 *     flood costs the waiter one wake-up per ack, which the waiter
 *     decides when to do (the core: dom0-core/doorbell.c).
 *   - read() of an O_NONBLOCK handle with nothing queued fails with
 *     EAGAIN.  libxenevtchn's header warns that some kernels blocked
 *     anyway, so ack() also polls the fd (no wait) before each read.
 *   - A notify on a port nobody bound yet (the NF has not bound the
 *     offer), or whose peer went, is dropped by Xen, not an error.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>

#include <xenevtchn.h>

#include "gntshare/bell.h"

struct evtchn_bell {
	struct gnts_bell b;	/* b.fd: the handle's fd */
	xenevtchn_handle *xce;
	evtchn_port_t local;	/* our port */
};

static int
evtchn_kick(struct gnts_bell *b)
{
	struct evtchn_bell *e = (struct evtchn_bell *)b;

	if (xenevtchn_notify(e->xce, e->local) < 0)
		return -errno;
	b->kicks++;
	return 0;
}

static int
evtchn_ack(struct gnts_bell *b)
{
	struct evtchn_bell *e = (struct evtchn_bell *)b;
	struct pollfd p = { .fd = b->fd, .events = POLLIN };
	xenevtchn_port_or_error_t port;
	int got = 0;

	/* At most a few rounds: a peer notifying in a loop fires the port
	 * again as soon as it is unmasked, and must not keep us here
	 * (what is left wakes the next poll at once, as the host end's
	 * ack does). */
	for (int i = 0; i < 4; i++) {
		if (poll(&p, 1, 0) != 1 || !(p.revents & POLLIN))
			break;
		port = xenevtchn_pending(e->xce);
		if (port < 0)		/* EAGAIN: nothing after all */
			break;
		/* Unmasked again, so that the next kick fires it. */
		(void)xenevtchn_unmask(e->xce, (evtchn_port_t)port);
		if ((evtchn_port_t)port == e->local)
			got++;
	}
	b->acked += (uint64_t)got;
	return got;
}

static void
evtchn_close(struct gnts_bell *b)
{
	struct evtchn_bell *e = (struct evtchn_bell *)b;

	/* Unbound: the peer's end is left unbound (Xen), its kicks
	 * dropped. */
	(void)xenevtchn_unbind(e->xce, e->local);
	xenevtchn_close(e->xce);
	free(e);
}

static const struct gnts_bell_ops evtchn_ops = {
	.name = "evtchn", .kick = evtchn_kick, .ack = evtchn_ack,
	.close = evtchn_close,
};

/* An end with a handle of its own, non-blocking; no port yet.  NULL with
 * errno set. */
static struct evtchn_bell *
end_open(void)
{
	struct evtchn_bell *e = calloc(1, sizeof(*e));
	int fl, err;

	if (e == NULL)
		return NULL;
	e->xce = xenevtchn_open(NULL, 0);
	if (e->xce == NULL) {
		err = errno;
		free(e);
		errno = err;
		return NULL;
	}
	e->b.ops = &evtchn_ops;
	e->b.fd = xenevtchn_fd(e->xce);
	fl = fcntl(e->b.fd, F_GETFL);
	if (fl < 0 || fcntl(e->b.fd, F_SETFL, fl | O_NONBLOCK) < 0) {
		err = errno;
		xenevtchn_close(e->xce);
		free(e);
		errno = err;
		return NULL;
	}
	return e;
}

/* @p e with the port a bind returned, or closed when it failed (-1,
 * errno set, kept). */
static struct gnts_bell *
end_bound(struct evtchn_bell *e, xenevtchn_port_or_error_t port)
{
	int err = errno;

	if (port < 0) {
		xenevtchn_close(e->xce);
		free(e);
		errno = err;
		return NULL;
	}
	e->local = (evtchn_port_t)port;
	return &e->b;
}

struct gnts_bell *
gnts_bell_evtchn_offer(uint32_t domid, uint32_t *port)
{
	struct evtchn_bell *e = end_open();

	if (e == NULL ||
	    end_bound(e, xenevtchn_bind_unbound_port(e->xce, domid)) == NULL)
		return NULL;
	*port = e->local;
	return &e->b;
}

struct gnts_bell *
gnts_bell_evtchn_bind(uint32_t domid, uint32_t port)
{
	struct evtchn_bell *e = end_open();

	if (e == NULL)
		return NULL;
	return end_bound(e, xenevtchn_bind_interdomain(e->xce, domid,
						       (evtchn_port_t)port));
}

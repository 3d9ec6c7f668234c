/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libxnv's doorbells: an idle NF sleeps instead of polling, and kicks the
 * core when it sleeps (gntshare/ring.h "Sleeping on a ring", bell.h).
 *
 * With --idle-sleep doorbell (the default) xnv_nf_run() backs off as in
 * adaptive mode (pause, yield, short sleeps) and then, instead of
 * sleeping on a timer, says on its rx ring "asleep, having seen it empty"
 * and waits in poll() on its doorbell and on the backend's watch fd (the
 * socket: a DETACH notice or the core's death wakes it at once).  The
 * wait is bounded by LIBXNV_SLEEP_MAX_MS all the same: xnv_nf_stop() from
 * another thread, and a backend without a watch fd (Xen: the core's
 * state is in XenStore), are noticed within it.
 *
 * A kick that woke the NF is read (gnts_bell_ack) only before it next
 * sleeps, not before the packets it announced: that read is a system
 * call, and it stood between every wake-up and its packet.  Until then
 * the doorbell stays readable (or, on Xen, its port masked), which
 * changes nothing: the core kicks only an NF whose sleep word is set,
 * and the read comes before the word is (the kick the core sends between
 * the read and the poll() leaves the fd readable: the poll returns).
 *
 * Whatever the policy, an NF with a doorbell kicks the core after
 * publishing to its tx ring when the core said it sleeps, so a sleeping
 * core wakes for it (its busy loop never writes the doorbell).
 */
#include <errno.h>
#include <poll.h>

#include "nf_pvt.h"

#define LIBXNV_SLEEP_MAX_MS 1000

/* Read the kick that last woke us, if not yet.  @return 0, or -1 if the
 * core's end is closed (the doorbell is dropped: it is gone, and we poll
 * until we see that). */
static int
ack_kick(struct xnv_nf *nf)
{
	if (!nf->unacked)
		return 0;
	nf->unacked = 0;
	if (gnts_bell_ack(nf->bell) >= 0)
		return 0;
	nf->bell = NULL;
	return -1;
}

int
libxnv_sleep(struct xnv_nf *nf)
{
	struct pollfd p[2];
	int rc, n = 1;

	if (ack_kick(nf) < 0)
		return 0;
	rc = gnts_ring_sleep_prepare(&nf->rx);
	if (rc != 1)
		return rc;	/* descriptors came (0), or a broken ring */
	p[0] = (struct pollfd){ .fd = gnts_bell_fd(nf->bell), .events = POLLIN };
	p[1] = (struct pollfd){ .fd = gnts_cli_watch_fd(nf->cli),
				.events = POLLIN };
	if (p[1].fd >= 0)
		n = 2;
	rc = poll(p, (nfds_t)n, LIBXNV_SLEEP_MAX_MS);
	if (rc > 0 && (p[0].revents & (POLLIN | POLLHUP))) {
		nf->unacked = 1;	/* read before the next sleep */
		nf->wakeups++;		/* (a closed end counts once) */
	}
	/* C6: awake, polling again. */
	gnts_ring_sleep_cancel(&nf->rx);
	return 1;
}

int
xnv_nf_fd(const struct xnv_nf *nf)
{
	return nf->bell != NULL ? gnts_bell_fd(nf->bell) : -ENOTSUP;
}

int
xnv_nf_arm(struct xnv_nf *nf)
{
	int rc;

	if (nf->bell == NULL || ack_kick(nf) < 0 ||
	    !gnts_ring_sleep_ok(&nf->rx))
		return 0;
	rc = gnts_ring_sleep_prepare(&nf->rx);
	if (rc < 0)
		return -EPROTO;
	nf->armed = rc == 1;
	return rc;
}

/* xnv_nf_poll() after an xnv_nf_arm(): take what woke us, awake again. */
void
libxnv_disarm(struct xnv_nf *nf)
{
	nf->armed = 0;
	if (gnts_bell_ack(nf->bell) > 0)
		nf->wakeups++;
	gnts_ring_sleep_cancel(&nf->rx);
}

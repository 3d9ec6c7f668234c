/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Hostile or broken NFs: what the core does beyond dropping a bad
 * descriptor (validate.h).
 *
 *   - Error budget: an NF that returns more than [core] error_budget bad
 *     descriptors within one second is quarantined.  An honest NF returns
 *     none, so the budget only has to be large enough not to matter for a
 *     bug that fires now and then.
 *   - Quarantine (budget exceeded, or an impossible ring index): the NF is
 *     detached at once, told why (its control line, and the socket in host
 *     mode), and every buffer it held is taken back now: nothing more is
 *     read from its rings.  Logged once, as a warning; the stats show
 *     "quarantined" and the reason.
 *   - Heartbeat: an NF holding buffers whose heartbeat (ring.h, control
 *     line) has not moved for heartbeat_timeout_ms is declared dead and
 *     detached like one whose socket hung up.  This is how a stopped or
 *     hung guest is found where there is no socket (Xen).  An NF that has
 *     not beaten once yet (heartbeat still 0) is still starting: a Xen
 *     guest maps its rings and pool only after the core has answered, which
 *     on a busy host takes seconds, and packets are sent to it meanwhile.
 *     It gets XNV_FIRST_BEAT_GRACE times the timeout.  An NF asleep on
 *     its doorbell having seen every descriptor it was given does not
 *     beat and is alive (doorbell.h): a packet for it kicks it, and from
 *     then on its heartbeat must move again.
 *   - Hoarding: an NF that holds its quota of buffers ([core] max_held,
 *     quota.h) and returns none of them for hoard_timeout_ms, heartbeat
 *     or not, is quarantined (detach code GNTS_DETACH_HOARD): the quota
 *     already keeps it from taking more, this gives the rest back.  Any
 *     buffer it returns starts the clock again.
 */
#include <stdio.h>
#include <string.h>

#include <rte_cycles.h>

#include "core.h"
#include "validate.h"

#define XNV_FIRST_BEAT_GRACE 10

const char *const xnv_bad_names[XNV_BAD_N] = {
	[XNV_OK] = "ok",
	[XNV_BAD_INDEX] = "index",
	[XNV_BAD_OWNER] = "owner",
	[XNV_BAD_BOUNDS] = "bounds",
	[XNV_BAD_ACTION] = "action",
	[XNV_BAD_DEST] = "dest",
	[XNV_BAD_FLAGS] = "flags",
	[XNV_BAD_POLICY] = "policy",
};

/* What each kind of bad descriptor means, for the log. */
static const char *const bad_words[XNV_BAD_N] = {
	[XNV_OK] = "none",
	[XNV_BAD_INDEX] = "buffer index out of range",
	[XNV_BAD_OWNER] = "buffer it does not hold",
	[XNV_BAD_BOUNDS] = "offset/length outside the buffer",
	[XNV_BAD_ACTION] = "unknown action",
	[XNV_BAD_DEST] = "no such port or service",
	[XNV_BAD_FLAGS] = "reserved flags set",
	[XNV_BAD_POLICY] = "verdict into a group may_send_to does not allow",
};

/* "domain N, pid P" (host) or "Xen domain N device M": who @p nf is, in
 * the words its backend uses, not the encoded id. */
static const char *
who(const struct xnv_core *c, const struct xnv_nfrec *nf, char *buf,
    size_t len)
{
	size_t n;

	gnts_srv_peer_words(c->srv, nf->dom, buf, len);
	n = strlen(buf);
	if (nf->pid > 0 && n < len)
		snprintf(buf + n, len - n, ", pid %d", (int)nf->pid);
	return buf;
}

/*
 * Found by a worker other than worker 0 (worker.h), whose NF @p nf is:
 * it polls the NF no more (nf->q_req), and worker 0 quarantines it (or
 * detaches it, for a heartbeat) at its next control pass with every
 * worker parked (xnv_rec_requests()).
 */
static void
ask_main(struct xnv_core *c, struct xnv_nfrec *nf, uint32_t code,
	 const char *why)
{
	if (nf->q_req)
		return;
	nf->q_code = code;
	snprintf(nf->q_why, sizeof(nf->q_why), "%s", why);
	/* Release: code and reason are written before worker 0, which
	 * acquires the flags, reads them. */
	__atomic_store_n(&nf->q_req, 1, __ATOMIC_RELEASE);
	__atomic_store_n(&c->workers.requests, 1, __ATOMIC_RELEASE);
}

/* Quarantine @p nf, telling it @p code (GNTS_DETACH_*). */
static void
quarantine(struct xnv_core *c, struct xnv_nfrec *nf, uint32_t code,
	   const char *why)
{
	char reason[sizeof(nf->gone_reason)], w[64];

	if (nf->state != XNV_REC_ATTACHED)
		return;
	if (xnv_worker_self()->id != 0) {
		ask_main(c, nf, code, why);
		return;
	}
	snprintf(reason, sizeof(reason), "quarantined: %s", why);
	XLOG(WARNING, "NF %s (%s) %s\n", nf->name, who(c, nf, w, sizeof(w)),
	     reason);
	xnv_workers_park(c, 1);
	nf->quarantined = 1;
	nf->detach_code = code;
	xnv_rec_detach(c, nf, reason);
	/* Nothing it still has in its rings is read: take everything back. */
	xnv_rec_finish(c, nf);
	/* And its domain may not just start the next one (domain.c). */
	xnv_dom_hostile(c, nf->dom, reason);
	xnv_workers_park(c, 0);
}

void
xnv_rec_quarantine(struct xnv_core *c, struct xnv_nfrec *nf, const char *why)
{
	quarantine(c, nf, GNTS_DETACH_QUARANTINE, why);
}

int
xnv_rec_charge_bad(struct xnv_core *c, struct xnv_nfrec *nf,
		   uint64_t now, unsigned n, int last_kind)
{
	char why[sizeof(nf->gone_reason) - 16];

	if (now - nf->bad_window_tsc >= c->tsc_hz) {
		nf->bad_window_tsc = now;
		nf->bad_in_window = 0;
	}
	nf->bad_in_window += n;
	if (c->cfg.error_budget == 0 ||
	    nf->bad_in_window <= c->cfg.error_budget)
		return 0;
	snprintf(why, sizeof(why), "%u bad descriptors within 1 s, over "
		 "error_budget %u (last: %s)", nf->bad_in_window,
		 c->cfg.error_budget, bad_words[last_kind]);
	xnv_rec_quarantine(c, nf, why);
	return 1;
}

/*
 * The core itself stood still (stopped, descheduled, a slow poll) for
 * longer than half the shorter of the heartbeat and hoard timeouts since
 * the last watch: the NFs' deadlines ran out while nobody looked, not
 * because they hung or hoarded.  Every deadline starts again now.
 * @return 1 if so.
 */
static int
core_stalled(struct xnv_core *c, struct xnv_worker *w, uint64_t now)
{
	uint64_t gap = now - w->watch_tsc, limit = c->heartbeat_tsc;
	uint16_t i, n = 0;

	if (limit == 0 || (c->hoard_tsc != 0 && c->hoard_tsc < limit))
		limit = c->hoard_tsc;
	if (w->watch_tsc == 0 || limit == 0 || gap <= limit / 2) {
		w->watch_tsc = now;
		return 0;
	}
	w->watch_tsc = now;
	for (i = 0; i < c->n_active; i++) {
		struct xnv_nfrec *nf = &c->nfs[c->active[i]];

		if (nf->worker != w->id)
			continue;
		nf->beat_tsc = now;
		nf->hoard.since = now;
		n++;
	}
	XLOG(WARNING, "xnv-core itself stood still for %u ms%s: the heartbeat "
	     "and hoard deadlines of %u NF%s start again\n",
	     (unsigned)(gap * 1000 / c->tsc_hz), w->id == 0 ? "" :
	     " (a worker)", n, n == 1 ? "" : "s");
	return 1;
}

/* @p nf's heartbeat stood still: said, and detached as dead. */
static void
declare_dead(struct xnv_core *c, struct xnv_nfrec *nf, const char *why)
{
	char w[64];

	if (nf->state != XNV_REC_ATTACHED)
		return;
	XLOG(WARNING, "NF %s (%s): %s\n", nf->name, who(c, nf, w, sizeof(w)),
	     why);
	nf->detach_code = GNTS_DETACH_HEARTBEAT;
	xnv_rec_detach(c, nf, why);
}

/* Heartbeat: declared dead once it stood still too long while holding
 * buffers. */
static void
watch_beat(struct xnv_core *c, struct xnv_nfrec *nf, uint64_t now)
{
	char why[sizeof(nf->gone_reason)];
	uint32_t beat;

	if (nf->held == 0) {
		/* Nothing to lose: the clock restarts, and its line in
		 * shared memory is not read (an idle core's wake-ups touch
		 * none of an idle NF's; a stale beat_seen only restarts the
		 * clock once more later). */
		nf->beat_tsc = now;
		return;
	}
	beat = gnts_ring_beat_read(nf->ctl);	/* read once */
	if (beat != nf->beat_seen || xnv_bell_asleep_idle(nf)) {
		/* Moving, or asleep on its doorbell having seen all we gave
		 * it (a kick ends that): the clock restarts. */
		nf->beat_seen = beat;
		nf->beat_tsc = now;
		return;
	}
	if (c->heartbeat_tsc == 0 || now - nf->beat_tsc <=
	    c->heartbeat_tsc * (beat == 0 ? XNV_FIRST_BEAT_GRACE : 1))
		return;
	snprintf(why, sizeof(why), "no heartbeat for %u ms while holding %u "
		 "buffers (%s)", (unsigned)((now - nf->beat_tsc) * 1000 /
		 c->tsc_hz), nf->held, beat == 0 ?
		 "NF never started polling" : "NF hung or stopped");
	if (xnv_worker_self()->id != 0)
		ask_main(c, nf, GNTS_DETACH_HEARTBEAT, why);
	else
		declare_dead(c, nf, why);
}

/* Hoarding: at its quota, nothing of it parked in the core (the core not
 * reading its tx ring is not its doing), and no buffer back for too long. */
static void
watch_hoard(struct xnv_core *c, struct xnv_nfrec *nf, uint64_t now)
{
	char why[sizeof(nf->gone_reason) - 16];
	uint64_t stuck = xnv_hoard_watch(&nf->hoard, nf->held >= nf->max_held
					 && nf->pend.n == 0, nf->returned,
					 now);

	if (c->hoard_tsc == 0 || stuck <= c->hoard_tsc)
		return;
	snprintf(why, sizeof(why), "held %u buffers (its quota) for %u ms "
		 "without returning any", nf->held,
		 (unsigned)(stuck * 1000 / c->tsc_hz));
	quarantine(c, nf, GNTS_DETACH_HOARD, why);
}

void
xnv_rec_watch(struct xnv_core *c, uint64_t now)
{
	struct xnv_worker *w = xnv_worker_self();
	uint16_t i;

	if (core_stalled(c, w, now))
		return;
	for (i = 0; i < c->n_active; i++) {
		struct xnv_nfrec *nf = &c->nfs[c->active[i]];

		if (nf->state != XNV_REC_ATTACHED || nf->ctl == NULL ||
		    nf->worker != w->id || nf->q_req)
			continue;
		watch_beat(c, nf, now);
		if (nf->state == XNV_REC_ATTACHED)
			watch_hoard(c, nf, now);
	}
}

void
xnv_rec_requests(struct xnv_core *c)
{
	uint16_t i;

	/* Acquire: pairs with ask_main()'s release. */
	if (!__atomic_exchange_n(&c->workers.requests, 0, __ATOMIC_ACQUIRE))
		return;
	xnv_workers_park(c, 1);
	for (i = 0; i < XNV_MAX_NFS; i++) {
		struct xnv_nfrec *nf = &c->nfs[i];
		char why[sizeof(nf->q_why)];

		if (!__atomic_load_n(&nf->q_req, __ATOMIC_ACQUIRE))
			continue;
		nf->q_req = 0;
		memcpy(why, nf->q_why, sizeof(why));	/* not read from what
							 * may be written */
		if (nf->q_code == GNTS_DETACH_HEARTBEAT)
			declare_dead(c, nf, why);
		else
			quarantine(c, nf, nf->q_code, why);
	}
	xnv_workers_park(c, 0);
}

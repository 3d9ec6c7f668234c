/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libxnv's data path: the polling loop, and packets the NF originates.
 * See <xnv/nf.h> for the contract.
 */
#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "nf_pvt.h"

#define QUIET_NS       100000000ull	/* no packet this long: is the core there? */
#define IDLE_PAUSES    64u	/* empty polls spent in cpu pause */
#define IDLE_YIELDS    256u	/* ... then in sched_yield */
#define IDLE_BELL_YIELDS 16u	/* doorbell mode: so many, then sleep (more
				 * yields on a loaded CPU: dom0-core/
				 * doorbell.c, xnv_idle_backoff) */
#define IDLE_SLEEP_MAX_US 200u	/* ... then sleeps doubling up to this */
#define IDLE_BELL_AFTER_NS 200000ull	/* doorbell: idle this long, sleep */

static inline void
cpu_pause(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

/* CLOCK_MONOTONIC (fine, for the idle back-off) or _COARSE (a tick's
 * resolution, cheaper: the quiet check) in ns. */
static uint64_t
clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Doorbell mode, yielding: 1 once idle IDLE_BELL_AFTER_NS.  On a loaded
 * CPU one yield can last a time slice of another task, and packets a few
 * ms apart kept an NF that counted yields from ever sleeping. */
static int
idle_long(const struct xnv_nf *nf)
{
	return clock_ns(CLOCK_MONOTONIC) - nf->idle_since_ns >
	       IDLE_BELL_AFTER_NS;
}

static void
idle_backoff(struct xnv_nf *nf, unsigned *idle)
{
	unsigned n = (*idle)++;
	int bell = nf->idle == GNTS_IDLE_DOORBELL && nf->bell != NULL &&
		   gnts_ring_sleep_ok(&nf->rx);

	if (n == 0 && bell)
		nf->idle_since_ns = clock_ns(CLOCK_MONOTONIC);
	if (n < IDLE_PAUSES) {
		cpu_pause();
	} else if (n < (bell ? IDLE_PAUSES + IDLE_BELL_YIELDS : IDLE_YIELDS) &&
		   !(bell && idle_long(nf))) {
		sched_yield();
	} else if (bell) {
		/* Idle a while: sleep on the doorbell (sleep.c), not on a
		 * timer.  Descriptors first: poll. */
		if (libxnv_sleep(nf) == 0)
			*idle = 0;
	} else {
		unsigned sh = (n - IDLE_YIELDS) / 16, us = 1u << (sh < 8 ? sh : 8);
		struct timespec ts = {
			.tv_nsec = (long)(us > IDLE_SLEEP_MAX_US ?
					  IDLE_SLEEP_MAX_US : us) * 1000,
		};
		nanosleep(&ts, NULL);
	}
}

/* <xnv/nf.h> names the protocol's action codes for NF authors. */
_Static_assert((int)XNV_ACT_DROP == (int)GNTS_ACT_DROP, "action codes: proto.h");
_Static_assert((int)XNV_ACT_OUT == (int)GNTS_ACT_OUT, "action codes: proto.h");
_Static_assert((int)XNV_ACT_TO_SERVICE == (int)GNTS_ACT_TO_SERVICE,
	       "action codes: proto.h");
_Static_assert((int)XNV_ACT_NEXT == (int)GNTS_ACT_NEXT, "action codes: proto.h");

/* 1 if @p code is an action an NF may ask for (gntshare/proto.h). */
static inline int
action_ok(uint32_t code)
{
	switch (code) {
#define GNTS_ACT_CASE(n, v) case v:
	GNTS_ACTIONS(GNTS_ACT_CASE)
#undef GNTS_ACT_CASE
		return 1;
	default:
		return 0;
	}
}

/* A verdict as a descriptor's action and dst.  A code that is no action
 * (the descriptor keeps 8 bits: never truncated) drops the packet, counted
 * in bad_verdict and said once. */
static inline void
apply_verdict(struct xnv_nf *nf, xnv_action_t a, struct gnts_desc *d)
{
	uint32_t code = a >> 16;

	if (__builtin_expect(!action_ok(code), 0)) {
		if (nf->st.bad_verdict++ == 0)
			LOG(WARNING, "%s: the handler returned action code "
			    "%u, which is no XNV_ACT_*: packet dropped "
			    "(counted in bad_verdict)", nf->name, code);
		code = GNTS_ACT_DROP;
		a = XNV_DROP;
	}
	d->action = (uint8_t)code;
	d->dst = (uint16_t)a;
}

/* Tell the core we are alive (ring.h, control line): every pass of the
 * loop, busy or idle.  A store to a line only we write: next to free. */
static inline void
beat(struct xnv_nf *nf)
{
	gnts_ring_beat(nf->ctl);
}

/* Turn one descriptor from the core into a packet; 0 if out of bounds. */
static inline int
desc_to_pkt(const struct xnv_nf *nf, const struct gnts_desc *d,
	    struct xnv_pkt *p)
{
	uint32_t bs = nf->att.buf_size;

	if (d->buf >= nf->att.pool_bufs || (uint32_t)d->off + d->len > bs)
		return 0;
	p->buf = nf->pool + (size_t)d->buf * bs;
	p->buf_size = bs;
	p->off = d->off;
	p->len = d->len;
	p->hash = d->hash;
	p->in_port = d->dst;
	return 1;
}

/* Push all of @p n descriptors to the tx ring, waiting for room.  The core
 * drains this ring continuously: pause (and yield, unless --busy-poll, in
 * case the core shares our CPU), never sleep. */
static int
push_all(struct xnv_nf *nf, struct gnts_desc *out, unsigned n)
{
	unsigned done = 0, idle = 0;

	while (done < n) {
		beat(nf);
		done += gnts_ring_enqueue_burst(&nf->tx, out + done, n - done);
		if (nf->tx.broken)
			return -EPROTO;
		/* A sleeping core wakes for what we just published, before
		 * we wait for room. */
		libxnv_kick_core(nf);
		if (done < n) {
			if ((++idle & 1023u) == 0 && !libxnv_core_alive(nf))
				return libxnv_gone_rc(nf) == 0 ? -ESHUTDOWN
							: -ECONNRESET;
			cpu_pause();
			if (nf->idle != GNTS_IDLE_POLL && idle > IDLE_PAUSES)
				sched_yield();
		}
	}
	return 0;
}

int
xnv_nf_flush(struct xnv_nf *nf)
{
	int rc = push_all(nf, nf->sends, nf->n_sends);

	nf->n_sends = 0;
	return rc == -ESHUTDOWN ? -ECONNRESET : rc;
}

/* What a poll hands packets to: a per-packet handler or a burst one. */
struct handler {
	xnv_handler_t one;
	xnv_burst_handler_t burst;
	void *ctx;
};

/* The verdicts of @p n packets @p p into @p v: the burst handler once,
 * after a prefetch of each packet's first data line, or the packet
 * handler on each. */
static inline void
handle(const struct handler *h, struct xnv_pkt *p, xnv_action_t *v,
       unsigned n)
{
	unsigned i;

	if (h->burst == NULL) {
		for (i = 0; i < n; i++)
			v[i] = h->one(&p[i], h->ctx);
		return;
	}
	for (i = 0; i < n; i++) {
		__builtin_prefetch(p[i].buf + p[i].off);
		v[i] = XNV_DROP;	/* a verdict left unset drops */
	}
	h->burst(p, v, n, h->ctx);
}

/* One burst of the rx ring through @p h, answered on the tx ring. */
static int
poll_burst(struct xnv_nf *nf, const struct handler *h)
{
	struct gnts_desc in[XNV_BURST], out[XNV_BURST];
	struct xnv_pkt p[XNV_BURST];
	xnv_action_t v[XNV_BURST];
	uint8_t at[XNV_BURST];
	unsigned i, k = 0, n;
	int rc;

	beat(nf);
	if (__builtin_expect(nf->armed, 0))
		libxnv_disarm(nf);	/* after xnv_nf_arm() */
	/* Detached by the core (its notice in shared memory)?  Then
	 * nothing in the rings is ours any more. */
	if (__builtin_expect(gnts_ring_detached(nf->ctl) != 0, 0) &&
	    !libxnv_core_alive(nf))
		return -ECONNRESET;
	if (nf->n_sends > 0 && (rc = xnv_nf_flush(nf)) < 0)
		return rc;
	n = gnts_ring_dequeue_burst(&nf->rx, in, XNV_BURST);
	if (nf->rx.broken) {
		LOG(ERR, "%s: core's rx ring index is impossible", nf->name);
		return -EPROTO;
	}
	nf->st.rx += n;
	/* Only descriptors inside the pool become packets; the others go
	 * back as drops, never seen by the handler. */
	for (i = 0; i < n; i++) {
		out[i] = in[i];
		out[i].flags = 0;
		if (desc_to_pkt(nf, &in[i], &p[k])) {
			at[k++] = (uint8_t)i;
		} else {
			nf->st.bad_rx++;
			out[i].action = XNV_ACT_DROP;
		}
	}
	handle(h, p, v, k);
	for (i = 0; i < k; i++) {
		struct gnts_desc *d = &out[at[i]];

		d->off = (uint16_t)p[i].off;
		d->len = (uint16_t)p[i].len;
		apply_verdict(nf, v[i], d);
		if (d->action == XNV_ACT_DROP)
			nf->st.dropped++;
		else
			nf->st.tx++;
	}
	rc = push_all(nf, out, n);
	if (rc < 0)
		return rc == -ESHUTDOWN ? -ECONNRESET : rc;
	return (int)n;
}

int
xnv_nf_poll(struct xnv_nf *nf, xnv_handler_t handler, void *ctx)
{
	const struct handler h = { .one = handler, .ctx = ctx };

	return poll_burst(nf, &h);
}

int
xnv_nf_poll_burst(struct xnv_nf *nf, xnv_burst_handler_t handler, void *ctx)
{
	const struct handler h = { .burst = handler, .ctx = ctx };

	return poll_burst(nf, &h);
}

/*
 * Is the core still there?  Asked of the backend (the socket, or the
 * backend state in XenStore: a round trip through xenstored, which any
 * guest can keep busy) only after QUIET_NS without a packet: while
 * packets come, the core is alive (it is the rx ring's only producer),
 * and a detach is already in the control line, which every poll reads.
 * So a slow rendezvous never holds up traffic.
 */
static int
quiet_and_gone(struct xnv_nf *nf, unsigned idle, uint64_t *quiet_since)
{
	uint64_t now;

	if ((idle & 255u) != 255u && idle < IDLE_YIELDS)
		return 0;
	now = clock_ns(CLOCK_MONOTONIC_COARSE);
	if (*quiet_since == 0)
		*quiet_since = now;
	return now - *quiet_since >= QUIET_NS && !libxnv_core_alive(nf);
}

/* xnv_nf_run(), xnv_nf_run_burst(): poll through @p h until stopped. */
static int
run(struct xnv_nf *nf, const struct handler *h)
{
	uint64_t quiet_since = 0;
	unsigned idle = 0;
	char err[160];
	int rc = 0, n;

	/* --rt-priority: this thread, the one that polls (tried at init). */
	if (nf->rt_priority > 0 &&
	    gnts_thread_rt(nf->rt_priority, err, sizeof(err)) < 0)
		LOG(WARNING, "%s: --rt-priority: %s: left as it was", nf->name,
		    err);
	while (!nf->stop && !libxnv_signalled) {
		n = poll_burst(nf, h);
		if (n > 0)
			quiet_since = 0;
		else if (n == 0 && quiet_and_gone(nf, idle, &quiet_since))
			n = -ECONNRESET;
		if (n == -ECONNRESET && libxnv_may_reattach(nf)) {
			idle = 0;
			quiet_since = 0;
			if ((n = libxnv_reattach(nf)) == 0)
				continue;
			if (n == -EINTR)	/* stopped while waiting */
				n = 0;
			rc = n;
			break;
		}
		if (n < 0) {
			rc = n == -ECONNRESET ? libxnv_gone_rc(nf) : n;
			break;
		}
		if (n == 0) {
			if (nf->idle != GNTS_IDLE_POLL)
				idle_backoff(nf, &idle);
			else
				idle++;
			continue;
		}
		idle = 0;
	}
	if (rc == 0 && nf->n_sends > 0)
		(void)xnv_nf_flush(nf);
	if (!nf->quiet)
		LOG(INFO, "%s: stopped: rx %llu tx %llu dropped %llu sent %llu "
		    "(doorbell: %s, woken %llu, kicked the core %llu)",
		    nf->name, (unsigned long long)nf->st.rx,
		    (unsigned long long)nf->st.tx,
		    (unsigned long long)nf->st.dropped,
		    (unsigned long long)nf->st.sent,
		    nf->bell != NULL ? "yes" : "none",
		    (unsigned long long)nf->wakeups,
		    (unsigned long long)nf->kicks);
	return rc;
}

int
xnv_nf_run(struct xnv_nf *nf, xnv_handler_t handler, void *ctx)
{
	const struct handler h = { .one = handler, .ctx = ctx };

	return run(nf, &h);
}

int
xnv_nf_run_burst(struct xnv_nf *nf, xnv_burst_handler_t handler, void *ctx)
{
	const struct handler h = { .burst = handler, .ctx = ctx };

	return run(nf, &h);
}

void
xnv_nf_stop(struct xnv_nf *nf)
{
	nf->stop = 1;
}

int
xnv_pkt_alloc(struct xnv_nf *nf, struct xnv_pkt *pkt)
{
	struct gnts_desc *d;

	if (nf->n_spare == 0) {
		nf->n_spare = gnts_ring_dequeue_burst(&nf->free, nf->spare,
						      XNV_BURST);
		if (nf->free.broken)
			return -EPROTO;
		if (nf->n_spare == 0) {
			nf->st.alloc_fail++;
			return -ENOBUFS;
		}
	}
	d = &nf->spare[--nf->n_spare];
	if (!desc_to_pkt(nf, d, pkt)) {
		nf->st.bad_rx++;
		return -EPROTO;
	}
	pkt->len = 0;
	pkt->hash = 0;
	pkt->in_port = UINT16_MAX;
	return 0;
}

int
xnv_pkt_send(struct xnv_nf *nf, struct xnv_pkt *pkt, xnv_action_t action)
{
	uint32_t bs = nf->att.buf_size;
	size_t off = (size_t)(pkt->buf - nf->pool);
	uint8_t code = (uint8_t)(action >> 16);
	int rc;

	if (pkt->buf < nf->pool || off % bs != 0 ||
	    off / bs >= nf->att.pool_bufs || pkt->off + pkt->len > bs ||
	    (code != XNV_ACT_DROP && code != XNV_ACT_OUT &&
	     code != XNV_ACT_TO_SERVICE) ||
	    !gnts_desc_len_ok((uint16_t)pkt->len, code))
		return -EINVAL;
	if (nf->n_sends == XNV_BURST && (rc = xnv_nf_flush(nf)) < 0)
		return rc;
	nf->sends[nf->n_sends++] = (struct gnts_desc){
		.buf = (uint32_t)(off / bs), .off = (uint16_t)pkt->off,
		.len = (uint16_t)pkt->len, .action = code,
		.dst = (uint16_t)action, .hash = pkt->hash,
	};
	if (code != XNV_ACT_DROP)
		nf->st.sent++;
	return 0;
}

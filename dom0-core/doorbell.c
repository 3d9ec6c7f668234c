/* SPDX-License-Identifier: BSD-3-Clause */
/* The core's side of the doorbells: see doorbell.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <sched.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_pause.h>

#include "core.h"
#include "doorbell.h"
#include "flow.h"

/* Worker 0's doorbells' epoll set, and the set of its ports' rx
 * interrupts (port_intr.c; without it the ports are polled on timers),
 * which joins the first once a port has one (xnv_bells_listen_ports);
 * the other workers' are made with them (worker.c). */
int
xnv_bells_open(struct xnv_core *c)
{
	c->port_epfd = -1;
	c->bell_epfd = epoll_create1(EPOLL_CLOEXEC);
	if (c->bell_epfd < 0)
		return -errno;
	c->port_epfd = epoll_create1(EPOLL_CLOEXEC);
	c->workers.w[0]->epfd = c->bell_epfd;	/* worker 0's (worker.h) */
	c->workers.w[0]->port_epfd = c->port_epfd;
	return 0;
}

int
xnv_bells_listen_ports(struct xnv_worker *w)
{
	struct epoll_event ev = { .events = EPOLLIN,
				  .data.ptr = &w->port_epfd };

	if (w->port_ep_listened)
		return 0;
	if (w->port_epfd < 0 ||
	    epoll_ctl(w->epfd, EPOLL_CTL_ADD, w->port_epfd, &ev) < 0)
		return -errno;
	w->port_ep_listened = 1;
	return 0;
}

void
xnv_bells_close(struct xnv_core *c)
{
	if (c->port_epfd >= 0)
		close(c->port_epfd);
	if (c->bell_epfd >= 0)
		close(c->bell_epfd);
	c->bell_epfd = c->port_epfd = -1;
	c->workers.w[0]->epfd = c->workers.w[0]->port_epfd = -1;
}

/* @p nf's doorbell in (@p on) or out of the epoll set of the worker that
 * polls it (worker.h). */
static void
listen_to(struct xnv_core *c, struct xnv_nfrec *nf, int on)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = nf };
	struct xnv_bell *bl = &nf->bell;
	int ep = on ? c->workers.w[nf->worker]->epfd : bl->ep;

	if (bl->b == NULL || ep < 0 || bl->listening == on)
		return;
	if (epoll_ctl(ep, on ? EPOLL_CTL_ADD : EPOLL_CTL_DEL,
		      gnts_bell_fd(bl->b), &ev) == 0 || !on) {
		bl->listening = (uint8_t)on;
		bl->ep = ep;
	}
}

/* Awake on @p nf's tx ring (C6): polled again. */
static void
wake_one(struct xnv_core *c, struct xnv_nfrec *nf)
{
	if (!nf->bell.asleep)
		return;
	if (nf->bell.asleep == XNV_BELL_DOZE)
		c->workers.w[nf->worker]->n_dozing--;
	gnts_ring_sleep_cancel(&nf->tx);
	nf->bell.asleep = 0;
}

void
xnv_bell_move(struct xnv_core *c, struct xnv_nfrec *nf, uint16_t to)
{
	int listening = nf->bell.listening;

	wake_one(c, nf);	/* polled by its new worker */
	listen_to(c, nf, 0);
	nf->worker = to;
	if (listening)
		listen_to(c, nf, 1);
}

void
xnv_bell_attach(struct xnv_core *c, struct xnv_nfrec *nf,
		struct gnts_bell *b)
{
	memset(&nf->bell, 0, sizeof(nf->bell));
	nf->bell.b = b;
	if (b == NULL)
		return;
	/* The core kicks the rings it produces (rx, free) when the NF
	 * sleeps: say so on the core's line, so the NF may sleep. */
	gnts_ring_kicks_set(&nf->rx);
	listen_to(c, nf, 1);	/* by the worker that polls it */
}

static void
kick_now(struct xnv_core *c, struct xnv_bell *bl, uint64_t now)
{
	bl->owed = 0;
	bl->next_kick_tsc = now + c->tsc_hz / XNV_BELL_KICKS_MAX;
	xnv_worker_self()->kick_tsc = now;
	if (gnts_bell_kick(bl->b) == 0)
		bl->kicks++;
}

void
xnv_bell_kick(struct xnv_core *c, struct xnv_nfrec *nf)
{
	struct xnv_bell *bl = &nf->bell;
	uint64_t now = rte_rdtsc();

	if (now >= bl->next_kick_tsc) {
		kick_now(c, bl, now);
		return;
	}
	if (!bl->owed && bl->capped++ == 0)
		XLOG(NOTICE, "NF %s sleeps and wakes more often than %u "
		     "times a second: kicks to it are sent at least 1/%u s "
		     "apart (those sent late counted in bell_capped)\n",
		     nf->name, XNV_BELL_KICKS_MAX, XNV_BELL_KICKS_MAX);
	bl->owed = 1;
}

unsigned
xnv_bell_owed(struct xnv_core *c, struct xnv_nfrec *nf, uint64_t now)
{
	if (nf->bell.b == NULL) {
		nf->bell.owed = 0;
		return 0;
	}
	if (now >= nf->bell.next_kick_tsc)
		kick_now(c, &nf->bell, now);
	return 1;
}

void
xnv_bell_detach(struct xnv_core *c, struct xnv_nfrec *nf)
{
	if (nf->bell.b == NULL)
		return;
	kick_now(c, &nf->bell, rte_rdtsc());	/* this one always goes */
	listen_to(c, nf, 0);
	wake_one(c, nf);	/* while its region is still mapped */
	nf->bell.b = NULL;
}

int
xnv_bell_asleep_idle(const struct xnv_nfrec *nf)
{
	uint64_t w;

	if (nf->bell.b == NULL || nf->rx.sleep == NULL)
		return 0;
	w = atomic_load_explicit(nf->rx.sleep, memory_order_relaxed);
	return (w & GNTS_RING_ASLEEP) != 0 && (uint32_t)w == nf->rx.idx;
}

/* A kick from @p nf woke us.  Too many with its tx ring empty in a
 * second: stop listening until the next. */
static void
woken_by(struct xnv_core *c, struct xnv_nfrec *nf, uint64_t now)
{
	struct xnv_bell *bl = &nf->bell;

	wake_one(c, nf);	/* it sent, or lied: polled either way */
	bl->wakes++;
	if (gnts_bell_ack(bl->b) < 0) {
		/* Its end is closed (it died; the backend says so soon):
		 * the fd would wake us for ever. */
		listen_to(c, nf, 0);
		bl->dead = 1;
		return;
	}
	if (gnts_ring_count(&nf->tx, 0) != 0)
		return;
	bl->spurious++;
	if (now - bl->win_tsc > c->tsc_hz) {
		bl->win_tsc = now;
		bl->win_spurious = 0;
	}
	if (++bl->win_spurious == XNV_BELL_SPURIOUS_MAX) {
		if (bl->muted++ == 0)
			XLOG(WARNING, "NF %s kicks the core's doorbell with "
			     "nothing to send (%u in a second): ignoring its "
			     "kicks for the rest of each such second "
			     "(counted in bell_muted)\n", nf->name,
			     XNV_BELL_SPURIOUS_MAX);
		listen_to(c, nf, 0);
	}
}

/* Awake (C6) on the tx ring of every NF the calling worker polls:
 * polling again.  Only where we said we sleep: a departed NF's region
 * may be gone. */
void
xnv_bells_wake_all(struct xnv_core *c)
{
	struct xnv_worker *w = xnv_worker_self();

	for (uint16_t i = 0; i < c->n_active; i++)
		if (c->nfs[c->active[i]].worker == w->id)
			wake_one(c, &c->nfs[c->active[i]]);
	w->n_dozing = 0;
}

/* After a wait: which NFs stay asleep (dozing, doorbell.h) and which are
 * polled again.  A muted or dead doorbell would not end the next wait:
 * its NF is polled. */
static void
doze(struct xnv_core *c, struct xnv_worker *w)
{
	uint16_t i, n = 0;

	for (i = 0; i < c->n_active; i++) {
		struct xnv_nfrec *nf = &c->nfs[c->active[i]];

		if (nf->worker != w->id)
			continue;
		if (nf->bell.asleep == XNV_BELL_DOZE) {
			n++;	/* did not kick: nothing changed */
			continue;
		}
		if (!nf->bell.asleep)
			continue;
		if (nf->bell.listening && !nf->bell.dead &&
		    xnv_nf_quiet(c, nf)) {
			nf->bell.asleep = XNV_BELL_DOZE;
			n++;
			continue;
		}
		wake_one(c, nf);
	}
	w->n_dozing = n;
}

/* Say "about to sleep" on every NF's tx ring that has a doorbell whose
 * NF kicks (ring.h C2-C4).  @return 0 if one had descriptors (every word
 * cleared again); else 1, and *cap_us the longest sleep that keeps the
 * others' latency: XNV_IDLE_SLEEP_MAX_US when an NF has no doorbell (an
 * older libxnv, or a backend without them) or does not kick. */
static int
prepare_all(struct xnv_core *c, const struct xnv_worker *w, uint64_t now,
	    unsigned *cap_us)
{
	uint16_t i;

	for (i = 0; i < c->n_active; i++) {
		struct xnv_nfrec *nf = &c->nfs[c->active[i]];

		/* Dozing: its word is still set from an earlier wait.
		 * Another worker's NF: that worker sleeps on it. */
		if (nf->state != XNV_REC_ATTACHED || nf->bell.asleep ||
		    nf->worker != w->id || nf->q_req)
			continue;
		if (nf->bell.b == NULL || !gnts_ring_sleep_ok(&nf->tx)) {
			*cap_us = XNV_IDLE_SLEEP_MAX_US;
			continue;
		}
		/* A muted NF is listened to again in the next second. */
		if (!nf->bell.listening && !nf->bell.dead &&
		    now - nf->bell.win_tsc > c->tsc_hz)
			listen_to(c, nf, 1);
		if (gnts_ring_sleep_prepare(&nf->tx) == 1) {
			nf->bell.asleep = 1;
			continue;
		}
		xnv_bells_wake_all(c);
		return 0;
	}
	return 1;
}

int
xnv_bells_sleep(struct xnv_core *c, unsigned max_us)
{
	struct xnv_worker *w = xnv_worker_self();
	struct epoll_event ev[16];
	struct timespec ts;
	uint64_t now = rte_rdtsc();
	unsigned us = max_us;
	int n, k;

	if (!prepare_all(c, w, now, &us))
		return 0;
	if (!xnv_ports_intr_arm(c)) {		/* a port has packets */
		xnv_bells_wake_all(c);
		return 0;
	}
	if (!xnv_workers_sleep_prepare(c, w)) {	/* another worker's packets */
		xnv_ports_intr_disarm(c);
		xnv_bells_wake_all(c);
		return 0;
	}
	us = RTE_MIN(us, max_us);
	ts = (struct timespec){ .tv_sec = us / 1000000,
				.tv_nsec = (long)(us % 1000000) * 1000 };
	/* Asleep it holds no rule set (top of its loop): a rule change
	 * waits for no sleeping worker (flow.c). */
	xnv_flows_online(c, w->id, 0);
	n = epoll_pwait2(w->epfd, ev, RTE_DIM(ev), &ts, NULL);
	xnv_flows_online(c, w->id, 1);
	now = rte_rdtsc();
	for (k = 0; k < n; k++) {
		if (ev[k].data.ptr == &w->port_epfd)	/* its queues' */
			xnv_ports_intr_woken(c);
		else if (ev[k].data.ptr != w)	/* else another worker's kick */
			woken_by(c, ev[k].data.ptr, now);
	}
	xnv_ports_intr_disarm(c);
	xnv_workers_sleep_done(c, w);
	doze(c, w);
	return 1;
}

/*
 * Nothing to do: spin a little (fast reaction to a burst), then pause,
 * then yield the CPU (an NF may share it), then sleep.  adaptive: briefly
 * (new work is noticed within XNV_IDLE_SLEEP_MAX_US; the NIC or the NF
 * ring holds it meanwhile).  doorbell: after a few yields only, on the
 * NFs' doorbells (a kick ends it at once), 32 us at first and twice as
 * long each time up to --idle-sleep-max, which is how late a port's
 * packets may be seen after a long quiet.  Few yields: on a loaded CPU
 * each sched_yield() can cost a whole time slice of every other task
 * there, and the kernel's fair scheduler (EEVDF) has been seen to hold
 * back for seconds a task that yielded hundreds of times and then slept
 * (the core stood still 2 to 5 s with 256 yields; none with 16).
 */
/* A paced port's next packet caps the sleep (xnv_pace_idle); 0 if due
 * already. */
static int
pace_cap(struct xnv_core *c, unsigned *us)
{
	uint64_t due = c->pace_due, now;

	if (due == 0 || due == UINT64_MAX)
		return 1;
	c->pace_due = UINT64_MAX;	/* the next pass says again */
	now = rte_rdtsc();
	if (due <= now)
		return 0;
	if ((due - now) * 1000000 / c->tsc_hz < *us)
		*us = (unsigned)((due - now) * 1000000 / c->tsc_hz);
	return *us > 0;
}

/* The longest doorbell sleep of worker @p w: --idle-sleep-max, which is
 * how late a port without an rx interrupt is looked at after a quiet
 * spell and how often worker 0 runs the control plane; a worker other
 * than 0 whose every port queue has one (port_intr.c) has neither to do:
 * XNV_BELL_SLEEP_IRQ_US (its muted NFs are listened to again a second
 * later; the barrier and the stop kick it awake). */
static unsigned
longest_sleep(const struct xnv_core *c, const struct xnv_worker *w)
{
	if (w->id != 0 && xnv_ports_intr_all(c, w))
		return RTE_MAX(c->idle_max_us, XNV_BELL_SLEEP_IRQ_US);
	return c->idle_max_us;
}

#define IDLE_SPINS       256u
#define IDLE_PAUSES      2048u
#define IDLE_YIELDS      8192u
#define IDLE_BELL_YIELDS (IDLE_PAUSES + 16u)
#define IDLE_BELL_AFTER_US 500u	/* doorbell: idle this long, sleep */

static inline uint64_t
us_tsc(const struct xnv_core *c, unsigned us)
{
	return c->tsc_hz / 1000000 * us;
}

void
xnv_idle_backoff(struct xnv_core *c, unsigned *idle)
{
	struct xnv_worker *w = xnv_worker_self();
	unsigned n = (*idle)++, us;
	int bell = c->idle == GNTS_IDLE_DOORBELL && w->epfd >= 0;
	uint64_t now;

	if (n == 0)
		w->idle_since_tsc = rte_rdtsc();
	if (n < IDLE_SPINS)
		return;
	if (n < IDLE_PAUSES) {
		rte_pause();
		return;
	}
	now = bell ? rte_rdtsc() : 0;
	if (n < (bell ? IDLE_BELL_YIELDS : IDLE_YIELDS)) {
		/* On a loaded CPU one yield can last a time slice of another
		 * task: doorbell mode sleeps once idle IDLE_BELL_AFTER_US,
		 * however few yields that took (else a port paced every few
		 * ms kept it from ever sleeping). */
		if (!bell || now - w->idle_since_tsc <
			     us_tsc(c, IDLE_BELL_AFTER_US)) {
			sched_yield();
			return;
		}
		*idle = IDLE_BELL_YIELDS + 1;
		n = IDLE_BELL_YIELDS;
	}
	if (bell && now - w->kick_tsc < us_tsc(c, XNV_BELL_LINGER_US)) {
		rte_pause();	/* the NF we woke answers soon: no wake-up
				 * of ours on its way back */
		return;
	}
	if (bell) {
		n -= IDLE_BELL_YIELDS;
		us = RTE_MIN(32u << RTE_MIN(n, 15u), longest_sleep(c, w));
		if ((w->id == 0 && !pace_cap(c, &us)) ||
		    !xnv_bells_sleep(c, us))
			*idle = 0;	/* due, or an NF sent meanwhile */
		return;
	}
	us = 1u << RTE_MIN((n - IDLE_YIELDS) / 64, 6u);
	rte_delay_us_sleep(RTE_MIN(us, XNV_IDLE_SLEEP_MAX_US));
}

void
xnv_lcore_rt(const struct xnv_core *c)
{
	char err[160];

	if (c->rt_priority <= 0)
		return;
	if (gnts_thread_rt(c->rt_priority, err, sizeof(err)) < 0)
		XLOG(ERR, "lcore %u: %s: left SCHED_OTHER\n", rte_lcore_id(),
		     err);
	else
		XLOG(INFO, "lcore %u runs SCHED_FIFO at priority %d\n",
		     rte_lcore_id(), c->rt_priority);
}

int
xnv_cpu_latency_hold(int us, char *err, size_t len)
{
	static int fd = -1;	/* open until exit: the request stands */
	int32_t v = us;
	int rc;

	if (fd < 0)
		fd = open("/dev/cpu_dma_latency", O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, &v, sizeof(v)) != (ssize_t)sizeof(v)) {
		rc = -errno;
		snprintf(err, len, "/dev/cpu_dma_latency: %s", strerror(-rc));
		return rc;
	}
	return 0;
}

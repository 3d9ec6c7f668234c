/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The core's side of the doorbells (gntshare/bell.h; the protocol of
 * "kick or not" is gntshare/ring.h, "Sleeping on a ring").
 *
 *   - Producer of an NF's rx ring: after a burst is published, kick the
 *     NF iff it said it sleeps (xnv_bell_rx_done: a fence and a read of a
 *     line nobody writes while the NF is busy; no kick, no syscall).
 *   - Consumer of its tx ring: when the core itself is idle (every port
 *     and ring empty) and runs with --idle-sleep doorbell, it says "about
 *     to sleep" on every such NF's tx ring and waits in epoll on their
 *     doorbells and on the rx interrupts of the ports that have them
 *     (port_intr.c), with a timeout: other ports have no doorbell (they
 *     are polled at least every --idle-sleep-max µs), and the control
 *     plane runs at least that often.  Its busy loop is unchanged.
 *   - An NF that keeps saying it sleeps (its flag never cleared, its
 *     index moved along) would be kicked after every burst: kicks to one
 *     NF are at least 1/XNV_BELL_KICKS_MAX s apart; one due sooner is
 *     owed and sent when that time has come (counted in bell_capped), so
 *     an NF that sleeps and wakes that often is woken late, never left
 *     asleep, and a flag that lies costs the core XNV_BELL_KICKS_MAX
 *     syscalls a second at most.
 *   - Untrusted kicks: each one only wakes the core.  An NF whose kicks
 *     find its tx ring empty more than XNV_BELL_SPURIOUS_MAX times in a
 *     second is not listened to for the rest of that second (counted in
 *     bell_muted, said once per NF): the core still polls its ring on
 *     every wake-up, so a flood costs the flooder latency, nobody else.
 */
#ifndef XNV_DOORBELL_H
#define XNV_DOORBELL_H

#include <stdint.h>

#include <gntshare/bell.h>
#include <gntshare/ring.h>

#define XNV_BELL_SPURIOUS_MAX 1000u	/* per NF per second, then muted */
#define XNV_BELL_KICKS_MAX    20000u	/* kicks to one NF per second, at
					 * most: one each 50 us */
#define XNV_IDLE_SLEEP_MAX_US 50u	/* adaptive: longest sleep */
#define XNV_BELL_LINGER_US    200u	/* after a kick, no sleep this long */
#define XNV_BELL_SLEEP_IRQ_US 1000000u	/* a worker whose queues all have
					 * rx interrupts: longest sleep */

/* One NF's doorbells, as the core keeps them (struct xnv_nfrec bell). */
struct xnv_bell {
	struct gnts_bell *b;	/* the backend's end; NULL: the NF polls */
	uint8_t listening;	/* its fd is in the epoll set ep (its
				 * worker's: worker.h) */
	uint8_t dead;		/* its end is closed: never listened to */
	uint8_t asleep;		/* the core's sleep word on its tx ring is
				 * set: for this wait (1), or kept from
				 * an earlier one (XNV_BELL_DOZE) */
	uint8_t owed;		/* a kick came too soon: send it then
				 * (asleep and owed: read every pass, on
				 * the line of b) */
	uint64_t kicks;		/* kicks sent to the NF */
	uint64_t wakes;		/* its kicks that woke the core */
	uint64_t spurious;	/* of which its tx ring was empty */
	uint64_t muted;		/* times it was not listened to (flood) */
	uint64_t capped;	/* kicks to it sent late (XNV_BELL_KICKS_MAX) */
	uint64_t win_tsc;	/* start of the current 1 s window */
	uint32_t win_spurious;	/* spurious wake-ups in that window */
	uint64_t next_kick_tsc;	/* no kick before this (KICKS_MAX) */
	int ep;			/* while listening */
};

#define XNV_BELL_DOZE 2u
/* An NF the core left dozing: its rings are not polled (xnv_rx_nf).
 * Between waits, asleep is 0 or XNV_BELL_DOZE. */
#define XNV_BELL_DOZING(nf) ((nf)->bell.asleep != 0)

struct xnv_core;
struct xnv_nfrec;
struct xnv_worker;

/** The epoll set (at start); -errno. */
int xnv_bells_open(struct xnv_core *c);
/** A port's queue of worker @p w has an rx interrupt: that worker's port
 *  set joins its doorbells' set (once; until then an idle worker's wait
 *  has one fd fewer to look at).  0 or -errno. */
int xnv_bells_listen_ports(struct xnv_worker *w);
void xnv_bells_close(struct xnv_core *c);

/** An NF attached with doorbell end @p b (NULL: none): listen to it and
 *  tell the NF the core kicks it. */
void xnv_bell_attach(struct xnv_core *c, struct xnv_nfrec *nf,
		     struct gnts_bell *b);
/** The NF goes: kick it once (to read why), stop listening, let go of
 *  the end (the backend closes it). */
void xnv_bell_detach(struct xnv_core *c, struct xnv_nfrec *nf);

void xnv_bell_kick(struct xnv_core *c, struct xnv_nfrec *nf);

/** @p nf is polled by worker @p to from now on (the workers parked or
 *  stopped): its doorbell moves to that worker's set. */
void xnv_bell_move(struct xnv_core *c, struct xnv_nfrec *nf, uint16_t to);

/** A kick owed to @p nf (it came too soon): sent if its time has come.
 *  @return 1 (the core is not idle while one is owed). */
unsigned xnv_bell_owed(struct xnv_core *c, struct xnv_nfrec *nf,
		       uint64_t now);

/** After publishing to @p nf's rx ring: kick if it sleeps (ring.h P3-P5). */
static inline void
xnv_bell_rx_done(struct xnv_core *c, struct xnv_bell *bell,
		 struct gnts_ring_port *rx, struct xnv_nfrec *nf)
{
	if (bell->b != NULL && gnts_ring_need_kick(rx))
		xnv_bell_kick(c, nf);
}

/**
 * The core is idle: sleep on the doorbells of its NFs for at most
 * @p max_us µs.  @return 1 if it waited (woken or timed out), 0 if a tx
 * ring had descriptors after all (poll at once).
 */
int xnv_bells_sleep(struct xnv_core *c, unsigned max_us);

/** The core worked this pass: every NF it left dozing is polled again
 *  (its sleep word cleared).  Cheap when none dozes. */
void xnv_bells_wake_all(struct xnv_core *c);

/** Nothing to do this pass: back off as --idle-sleep says (not called
 *  for poll); *@p idle counts the empty passes, reset on work. */
void xnv_idle_backoff(struct xnv_core *c, unsigned *idle);

/** 1 if @p nf sleeps on its doorbell having seen every descriptor the
 *  core gave it: alive though its heartbeat stands still (guard.c). */
int xnv_bell_asleep_idle(const struct xnv_nfrec *nf);

/**
 * Hold the CPUs' wake-up latency at @p us (PM QoS, /dev/cpu_dma_latency)
 * for as long as the process runs: the kernel keeps idle CPUs in idle
 * states that wake within that (0: they poll), so a wake-up through a
 * doorbell is not a halted CPU's.  The request ends when the process
 * does (the kernel closes the file).  @return 0, or -errno and @p err.
 */
int xnv_cpu_latency_hold(int us, char *err, size_t len);

/**
 * The calling lcore's thread to SCHED_FIFO at --rt-priority (nothing
 * without one; gntshare/bell.h), from the top of its loop: after the
 * control threads were made, which keep the policy they were made with.
 * Logged; a failure (checked before EAL started, so not expected) too.
 */
void xnv_lcore_rt(const struct xnv_core *c);

#endif /* XNV_DOORBELL_H */

/* SPDX-License-Identifier: BSD-3-Clause */
/* libxnv internals shared by nf.c (attach) and io.c (the loop).  NFs
 * never include this. */
#ifndef XNV_NF_PVT_H
#define XNV_NF_PVT_H

#include <signal.h>
#include <stdio.h>

#include <gntshare/backend.h>
#include <gntshare/proto.h>
#include <gntshare/ring.h>

#include "xnv/nf.h"

#define XNV_BURST 32u	/* descriptors per ring burst in the NF */
_Static_assert(XNV_BURST <= GNTS_BURST_MAX, "a burst the protocol allows");
_Static_assert(XNV_BURST == XNV_BURST_MAX, "<xnv/nf.h> says the burst");

/* A usage error (a bad option): one plain line, "xnv: ...", as any
 * program says it.  Everything else is a log line, stamped with its time
 * and level (gnts_log_stamp): LOG(ERR|WARNING|INFO, ...). */
#define USAGE(...) do { fprintf(stderr, "xnv: " __VA_ARGS__); \
			fputc('\n', stderr); } while (0)
#define LOG(level, ...) libxnv_log(GNTS_LOG_ ## level, __VA_ARGS__)
void libxnv_log(int level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

struct xnv_nf {
	struct gnts_cli *cli;		/* the backend's client (backend.h) */
	const char *backend;		/* its name, to attach again */
	struct gnts_cli_cfg cfg;
	struct gnts_attach_rsp att;
	char name[GNTS_ATTACH_NAME_LEN];
	char group[GNTS_ATTACH_NAME_LEN];
	struct gnts_ring_port rx, tx, free;
	void *ring_va;
	size_t ring_bytes;
	uint8_t *pool;
	size_t pool_bytes;
	int idle;			/* --idle-sleep, enum gnts_idle */
	int rt_priority;		/* --rt-priority (0: SCHED_OTHER) */
	int quiet;
	/* sleep.c: our end of the doorbells (NULL: none, we poll) */
	struct gnts_bell *bell;
	int armed;			/* xnv_nf_arm() said sleep */
	int unacked;			/* a kick woke us, not read yet */
	uint64_t wakeups;		/* kicks that woke us */
	uint64_t idle_since_ns;		/* idle_backoff(), doorbell mode */
	uint64_t kicks;			/* kicks we sent the core */
	volatile sig_atomic_t stop;
	struct xnv_nf_stats st;
	/* NF-originated packets: empty buffers taken from the free ring,
	 * and sends waiting to be pushed to the tx ring. */
	struct gnts_desc spare[XNV_BURST];
	unsigned n_spare;
	struct gnts_desc sends[XNV_BURST];
	unsigned n_sends;
	/* liveness.c: heartbeat, detach notice, --reattach */
	struct gnts_ring_ctl *ctl;	/* control line of the ring region */
	uint32_t gone_code;		/* GNTS_DETACH_* once the core let go */
	int reattach;
	int resuming;			/* waiting out a save or migration */
	struct gnts_attach_req req;	/* to attach again */
	char sock[108];			/* sun_path (cfg.socket points here) */
	/* stats.c: the NF's own counters, kept here and mirrored into the
	 * region's stats area (NULL: none mapped, or an older core). */
	char stat_name[XNV_NF_STATS_MAX][XNV_NF_STAT_NAME_MAX + 1];
	uint64_t stat_val[XNV_NF_STATS_MAX];
	unsigned n_stats;
	struct gnts_nf_stat *stat_shm;
	unsigned n_stat_shm;
};

/* Internal names start with libxnv_; libxnv.map exports none of them. */
extern volatile sig_atomic_t libxnv_signalled;

/* nf.c: map the regions of nf->att (ring, pool). */
int libxnv_map(struct xnv_nf *nf);

/* stats.c: find the mapped region's stats area and write every counter
 * registered so far into it (after a map). */
void libxnv_stats_publish(struct xnv_nf *nf);

/* sleep.c: wait on the doorbell (ring.h C1-C6): 1 if waited, 0 if
 * descriptors came first, -1 on a broken ring. */
int libxnv_sleep(struct xnv_nf *nf);
void libxnv_disarm(struct xnv_nf *nf);

/* After publishing to the tx ring: kick the core if it sleeps (P3-P5). */
static inline void
libxnv_kick_core(struct xnv_nf *nf)
{
	if (nf->bell != NULL && gnts_ring_need_kick(&nf->tx) &&
	    gnts_bell_kick(nf->bell) == 0)
		nf->kicks++;
}

/* liveness.c */
int libxnv_core_alive(struct xnv_nf *nf);
int libxnv_gone_rc(const struct xnv_nf *nf);
int libxnv_may_reattach(const struct xnv_nf *nf);
int libxnv_reattach(struct xnv_nf *nf);
/* Attach nf->req until a core answers (or a stop or signal: -EINTR);
 * its answer: 0, or the refusal with @p err. */
int libxnv_wait_core(struct xnv_nf *nf, char *err, size_t errlen);

#endif

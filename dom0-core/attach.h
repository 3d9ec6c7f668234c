/* SPDX-License-Identifier: BSD-3-Clause */
/* The core's record of an NF (attach.c: attach, detach, the end of a
 * departed NF).  Not libxnv's struct xnv_nf: that is the NF's own handle. */
#ifndef XNV_ATTACH_H
#define XNV_ATTACH_H

#include <stdint.h>
#include <sys/types.h>

#include <gntshare/gntshare.h>
#include <gntshare/proto.h>
#include <gntshare/gntshare.h>
#include <gntshare/ring.h>

#include "datapath.h"
#include "doorbell.h"
#include "quota.h"
#include "validate.h"

struct xnv_core;

enum xnv_rec_state { XNV_REC_FREE = 0, XNV_REC_ATTACHED, XNV_REC_GONE };

struct xnv_nfrec {
	uint16_t id;
	uint8_t state;
	uint8_t q_req;			/* a worker asked worker 0 to
					 * quarantine it (guard.c): not
					 * polled meanwhile */
	uint16_t worker;		/* whose lcore polls its rings
					 * (worker.h); 0 once gone */
	uint32_t q_code;		/* ... with this GNTS_DETACH_* */
	char q_why[128];		/* ... for this (a gone_reason) */
	gnts_peer_t dom;
	pid_t pid;
	char name[XNV_NAME_LEN];
	uint16_t service;		/* service index */
	uint16_t instance;		/* slot within the service */
	uint16_t group;			/* group index: routing, policy */
	uint16_t pool;			/* pool index: where its packets live */
	struct gnts_region *ring_region;
	struct gnts_ring_port rx;	/* core produces */
	struct gnts_ring_port tx;	/* core consumes */
	struct gnts_ring_port free;	/* core produces empty buffers */
	uint32_t alloc_want;		/* keep this many in the free ring */
	struct xnv_pending pend;
	uint32_t held;			/* buffers the NF owns now */
	uint32_t max_held;		/* its quota of them (quota.h) */
	uint64_t rx_pkts, tx_pkts, drops, bad, reclaimed, allocs;
	uint64_t returned;		/* buffers it handed back */
	uint64_t quota_drops;		/* packets for it dropped at quota */
	uint64_t bad_kind[XNV_BAD_N];	/* by enum xnv_bad (validate.h) */
	char gone_reason[128];
	uint64_t gone_tsc;		/* when it left (drain deadline) */
	uint64_t busy_tsc;		/* xen: next check of frames it maps */
	unsigned busy_frames;		/* xen: frames still mapped, logged */
	/* guard.c: error budget, quarantine, heartbeat */
	struct gnts_ring_ctl *ctl;	/* control line of its ring region */
	struct gnts_nf_stat *stats;	/* its stats area (nf_stats.c) */
	uint32_t detach_code;		/* GNTS_DETACH_* to tell it */
	uint8_t quarantined;
	uint32_t beat_seen;		/* heartbeat value last read */
	uint64_t beat_tsc;		/* when it last moved */
	uint64_t bad_window_tsc;	/* start of the current 1 s window */
	uint32_t bad_in_window;
	struct xnv_hoard hoard;		/* at its quota since (quota.h) */
	struct xnv_bell bell;		/* its doorbells (doorbell.h) */
};

int xnv_rec_attach(void *ctx, gnts_peer_t dom,
		   const struct gnts_peer_cred *cred,
		   const struct gnts_attach_req *req, struct gnts_bell *bell,
		   struct gnts_attach_rsp *rsp, char *err, size_t errlen);
void xnv_rec_death(void *ctx, gnts_peer_t dom);
/* struct gnts_srv_cb suspend: its domain is being saved or migrated:
 * detached with GNTS_DETACH_SUSPEND, so that it attaches again. */
void xnv_rec_suspend(void *ctx, gnts_peer_t dom, const char *why);
int xnv_rec_check(void *ctx, const struct gnts_attach_req *req, char *err,
		  size_t errlen);
void xnv_rec_map_denied(void *ctx, gnts_peer_t dom, gnts_ref_t ref,
			const char *why);
void xnv_rec_detach(struct xnv_core *c, struct xnv_nfrec *nf, const char *why);
void xnv_rec_finish(struct xnv_core *c, struct xnv_nfrec *nf);
void xnv_rec_sweep(struct xnv_core *c);

#endif /* XNV_ATTACH_H */

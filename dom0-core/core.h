/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * xnv-core's state.  Data flows one way through the files of this
 * directory:
 *
 *   port.c (rx) -> datapath.c (steer: chain step -> NF / port / drop)
 *        -> NF rx ring ... NF ... NF tx ring -> validate.h -> datapath.c
 *        -> port.c (tx) | next NF | drop
 *
 * One lcore runs everything (main.c); nothing here is shared between
 * threads.  Guest-visible memory is only the pools' data buffers and the
 * NF ring regions; everything in this header is core-private.
 */
#ifndef XNV_CORE_H
#define XNV_CORE_H

#include <stdint.h>
#include <sys/types.h>

#include <rte_log.h>
#include <rte_mbuf.h>

#include <gntshare/attach.h>
#include <gntshare/gntshare.h>
#include <gntshare/ring.h>

#include "config.h"
#include "latency.h"
#include "pace.h"
#include "validate.h"

extern int xnv_logtype;
#define XLOG(level, ...) \
	rte_log(RTE_LOG_ ## level, xnv_logtype, "xnv-core: " __VA_ARGS__)

#define XNV_MAX_NFS        128
#define XNV_MAX_POOLS      (XNV_MAX_GROUPS + XNV_MAX_NFS)	/* groups', NFs' */
#define XNV_MAX_INSTANCES  16	/* live NFs per service */
#define XNV_MAX_FLOWS      4096	/* flow director rules */
#define XNV_MAX_CHAINS     (XNV_MAX_FLOWS + 256)	/* versions alive at once */
#define XNV_CHAIN_NONE     0xffff	/* NF-originated packets */
#define XNV_NF_NONE        0xffff
#define XNV_BUCKETS        256	/* flow buckets per service (power of 2) */

/* Why a packet was dropped by the core (not by an NF's verdict). */
enum xnv_drop {
	XNV_DROP_NO_INSTANCE,	/* service has no live NF */
	XNV_DROP_CHAIN_END,	/* XNV_NEXT past the last step */
	XNV_DROP_STALL,		/* waited > stall_timeout_ms for room */
	XNV_DROP_BAD_DESC,	/* invalid descriptor from an NF */
	XNV_DROP_MULTISEG,	/* received packet did not fit one buffer */
	XNV_DROP_CHAIN,		/* "drop" step of a chain */
	XNV_DROP_RECLAIMED,	/* held by an NF that went away */
	XNV_DROP_SHUTDOWN,	/* waiting at a port when the core stopped */
	XNV_DROP_N
};

/* Per-mbuf private area (in Dom0-private mbuf headers: trusted). */
struct xnv_mbuf_priv {
	uint32_t buf;		/* buffer index in its pool */
	uint16_t chain;		/* chain version (XNV_CHAIN_NONE: none) */
	uint16_t in_port;
	uint8_t step;		/* current step of the chain */
	uint8_t tgt_kind;	/* where it goes next: XNV_STEP_* */
	uint16_t tgt_id;	/* service index or port index */
	uint32_t hash;		/* flow hash, 0 until computed */
	uint16_t pool;		/* index of its pool (set once at init) */
	uint8_t pick;		/* how its NF was picked: XNV_PICK_* */
	uint8_t pad[5];
	uint64_t rx_tsc;	/* [core] latency: TSC of its rx burst, 0: none */
};

_Static_assert(sizeof(struct xnv_mbuf_priv) % RTE_MBUF_PRIV_ALIGN == 0,
	       "mbuf private area must keep mbuf alignment");
/* config.h needs no DPDK, so it cannot take the value from rte_config.h. */
_Static_assert(XNV_HEADROOM == RTE_PKTMBUF_HEADROOM,
	       "XNV_HEADROOM (config.h) must be DPDK's mbuf headroom");

static inline struct xnv_mbuf_priv *
xnv_priv(struct rte_mbuf *m)
{
	return (struct xnv_mbuf_priv *)rte_mbuf_to_priv(m);
}

enum xnv_pick { XNV_PICK_AFFINITY = 0, XNV_PICK_SPILL = 1 };

/*
 * A packet pool, built over a granted region: a trust group's (index =
 * group index), or one NF's own (nf_pools = own, or the xen backend under
 * gntalloc: index XNV_MAX_GROUPS and up, made at attach, destroyed once
 * the NF is gone and every buffer is home).
 */
struct xnv_pool {
	struct gnts_region *region;
	struct rte_mempool *mp;		/* NULL: slot unused */
	uint16_t group;			/* trust group it serves */
	uint16_t nf;			/* own pool: its NF's id */
	uint8_t own;			/* an NF's own pool */
	uint8_t retired;		/* own pool whose NF is gone */
	uint32_t n_bufs;
	uint32_t buf_size;
	struct rte_mbuf **mbufs;	/* buffer index -> mbuf */
	uintptr_t mbuf_base;		/* when != 0: mbuf of buffer i is at */
	uintptr_t mbuf_stride;		/* mbuf_base + i * mbuf_stride */
	uint16_t *owner;		/* buffer index -> 0 core, nf id + 1 */
	uint64_t copies_in;		/* group pools: packets copied into the
					 * group's pools (its own and its NFs') */
	int extmem_registered;
};

/* Packets a source (port rx or NF tx) could not hand on yet, in order. */
struct xnv_pending {
	uint16_t n;
	uint64_t since;			/* tsc when the oldest started waiting */
	struct rte_mbuf *m[XNV_MAX_BURST];
};

struct xnv_port {
	uint16_t port_id;		/* DPDK port id */
	int started;
	int rx_on;			/* polled for rx */
	struct xnv_pending pend;
	uint64_t rx, tx, tx_drop;
	struct xnv_pace pace;		/* [port] rx_rate */
	struct xnv_lat *lat;		/* [core] latency: of packets sent */
};

enum xnv_rec_state { XNV_REC_FREE = 0, XNV_REC_ATTACHED, XNV_REC_GONE };

struct xnv_nfrec {
	uint16_t id;
	uint8_t state;
	gnts_domid_t dom;
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
	uint64_t rx_pkts, tx_pkts, drops, bad, reclaimed, allocs;
	uint64_t bad_kind[XNV_BAD_N];	/* by enum xnv_bad (validate.h) */
	char gone_reason[128];
	uint64_t gone_tsc;		/* when it left (drain deadline) */
	uint64_t busy_tsc;		/* xen: next check of frames it maps */
	unsigned busy_frames;		/* xen: frames still mapped, logged */
	/* guard.c: error budget, quarantine, heartbeat */
	struct gnts_ring_ctl *ctl;	/* control line of its ring region */
	uint32_t detach_code;		/* GNTS_DETACH_* to tell it */
	uint8_t quarantined;
	uint32_t beat_seen;		/* heartbeat value last read */
	uint64_t beat_tsc;		/* when it last moved */
	uint64_t bad_window_tsc;	/* start of the current 1 s window */
	uint32_t bad_in_window;
};

struct xnv_service {
	uint16_t n_live;
	uint16_t live[XNV_MAX_INSTANCES];	/* NF ids */
	uint16_t slot_nf[XNV_MAX_INSTANCES];	/* instance slot -> NF id */
	uint16_t bucket[XNV_BUCKETS];		/* flow bucket -> NF id */
	uint8_t ever_live;
	uint64_t picks_affinity, picks_spill, no_instance;
};

/*
 * One version of a chain.  Versions never change: editing a port's chain
 * makes a new version, and packets already on their way finish the one
 * they started on.  A version is reused once no port, no flow rule and no
 * packet refers to it; packets are not counted on the data path but found
 * when the table is full (chain.c).
 */
struct xnv_chain_slot {
	struct xnv_chain ch;
	uint32_t users;			/* ports + flow rules */
	uint8_t used;
};

struct xnv_flows;			/* flow.c */

struct xnv_core {
	struct xnv_config cfg;
	struct xnv_pool pools[XNV_MAX_POOLS];	/* groups', then NFs' own */
	struct xnv_port ports[XNV_MAX_PORTS];
	struct xnv_nfrec nfs[XNV_MAX_NFS];
	struct xnv_service services[XNV_MAX_SERVICES];
	struct xnv_chain_slot chains[XNV_MAX_CHAINS];
	uint16_t port_chain[XNV_MAX_PORTS];	/* default chain of each port */
	struct xnv_flows *flows;
	uint32_t spill_ring_used;		/* spill above this occupancy */
	uint16_t active[XNV_MAX_NFS];	/* ids of attached NFs, polled */
	uint16_t n_active;
	struct gnts_server *server;	/* host backend, or */
	struct gnts_xen_server *xen;	/* xen backend */
	int shutting_down;		/* detaches tell NFs: clean stop */
	int own_pools;			/* each NF gets a pool of its own */
	uint64_t drops[XNV_DROP_N];
	uint64_t copies[XNV_MAX_GROUPS][XNV_MAX_GROUPS]; /* [from][to] */
	uint64_t tsc_hz;
	uint64_t start_tsc;
	int busy_poll;			/* --busy-poll: never back off */
	uint64_t stall_tsc;
	uint64_t heartbeat_tsc;		/* [core] heartbeat_timeout_ms; 0: off */
	uint64_t first_rx_tsc, last_rx_tsc, last_tx_tsc;
};

extern const char *const xnv_drop_names[XNV_DROP_N];

/* The mbuf of buffer @p i: arithmetic when the mempool laid the headers
 * out in buffer order (no table load on the hot path), else the table. */
static inline struct rte_mbuf *
xnv_pool_mbuf(const struct xnv_pool *p, uint32_t i)
{
	if (likely(p->mbuf_base != 0))
		return (struct rte_mbuf *)(p->mbuf_base + i * p->mbuf_stride);
	return p->mbufs[i];
}

/* chain.c */
int xnv_chain_new(struct xnv_core *c, const struct xnv_chain *ch);
void xnv_chain_unuse(struct xnv_core *c, uint16_t id);
int xnv_chain_set_port(struct xnv_core *c, uint16_t port,
		       const struct xnv_chain *ch);
void xnv_chain_text(const struct xnv_core *c, const struct xnv_chain *ch,
		    char *buf, size_t len);

/* service.c */
void xnv_service_rebuild(struct xnv_core *c, uint16_t service);
void xnv_services_init(struct xnv_core *c);
struct xnv_nfrec *xnv_service_pick(struct xnv_core *c, uint16_t service,
				struct rte_mbuf *m);

/* flow.c */
int xnv_flows_create(struct xnv_core *c);
void xnv_flows_destroy(struct xnv_core *c);
unsigned xnv_flows_count(const struct xnv_core *c);
void xnv_flows_classify(struct xnv_core *c, struct rte_mbuf **m, unsigned n,
			uint16_t *chain);
int xnv_flow_add(struct xnv_core *c, const char *spec, char *err,
		 size_t errlen);
int xnv_flow_del(struct xnv_core *c, uint32_t id, char *err, size_t errlen);
struct xnv_flow_match {
	char src[46], dst[46];		/* INET6_ADDRSTRLEN */
	uint8_t proto;
	uint16_t sport, dport;
};
int xnv_flow_exists(const struct xnv_core *c, uint32_t id);
int xnv_flow_get(const struct xnv_core *c, uint32_t id,
		 struct xnv_flow_match *m, uint16_t *chain, uint64_t *hits);

/* pool.c */
int xnv_pool_create(struct xnv_core *c, uint16_t g, char *err, size_t errlen);
int xnv_pool_create_own(struct xnv_core *c, struct xnv_nfrec *nf, char *err,
			size_t errlen);
void xnv_pool_retire(struct xnv_core *c, struct xnv_nfrec *nf);
void xnv_pools_sweep(struct xnv_core *c);
void xnv_pool_destroy(struct xnv_pool *p);
unsigned xnv_pool_free(const struct xnv_pool *p);

/* port.c */
int xnv_port_open(struct xnv_core *c, uint16_t idx, char *err, size_t errlen);
void xnv_port_close(struct xnv_core *c, uint16_t idx);

/* attach.c */
int xnv_rec_attach(void *ctx, gnts_domid_t dom, pid_t pid,
		  const struct gnts_attach_req *req,
		  struct gnts_attach_rsp *rsp, char *err, size_t errlen);
void xnv_rec_death(void *ctx, gnts_domid_t dom);
int xnv_rec_check(void *ctx, const struct gnts_attach_req *req, char *err,
		 size_t errlen);
void xnv_rec_map_denied(void *ctx, gnts_domid_t dom, gnts_ref_t ref,
		       const char *why);
void xnv_rec_detach(struct xnv_core *c, struct xnv_nfrec *nf, const char *why);

/* guard.c */
void xnv_rec_quarantine(struct xnv_core *c, struct xnv_nfrec *nf,
		       const char *why);
int xnv_rec_charge_bad(struct xnv_core *c, struct xnv_nfrec *nf, uint64_t now,
		      unsigned n, int last_kind);
void xnv_rec_watch(struct xnv_core *c, uint64_t now);
extern const char *const xnv_bad_names[XNV_BAD_N];

/* datapath.c */
unsigned xnv_rx_port(struct xnv_core *c, uint16_t idx, uint64_t now);
unsigned xnv_rx_nf(struct xnv_core *c, struct xnv_nfrec *nf, uint64_t now);
void xnv_rec_finish(struct xnv_core *c, struct xnv_nfrec *nf);
void xnv_rec_sweep(struct xnv_core *c);
void xnv_update_rx_gates(struct xnv_core *c);
void xnv_free_parked(struct xnv_pending *pd);
int xnv_pending_empty(const struct xnv_core *c);
uint64_t xnv_in_flight(const struct xnv_core *c);

/* stats.c */
void xnv_stats_print(const struct xnv_core *c, FILE *f, double elapsed_s);
int xnv_stats_json(const struct xnv_core *c, const char *path,
		   double elapsed_s);

#endif /* XNV_CORE_H */

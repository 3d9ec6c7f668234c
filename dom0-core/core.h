/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * xnv-core's state.  Data flows one way through the files of this
 * directory:
 *
 *   port.c (rx) -> datapath.c (steer: chain step -> NF / port / drop)
 *        -> NF rx ring ... NF ... NF tx ring -> validate.h -> datapath.c
 *        -> port.c (tx) | next NF | drop
 *
 * One lcore runs everything in this header (main.c); nothing here is
 * shared between threads, but for what the workers of [core] workers
 * read (worker.h: ports, chains, only ever changed inside their
 * barrier) and their own lines.  What NFs send on the socket (or XenStore) is
 * read by gntshare's control thread, which hands the core only the calls
 * that need this state (gnts_srv_poll(): attach, death, ...); the log
 * goes out through the log thread (logsink.c).  Guest-visible memory is only the pools' data buffers and the
 * NF ring regions; everything in this header is core-private.
 *
 * This header holds struct xnv_core (which embeds every module's state),
 * the mbuf private area and the core's log; each module's own types and
 * calls are in its header (pool.h, port.h, attach.h, service.h, ...),
 * its limits in sizes.h.
 */
#ifndef XNV_CORE_H
#define XNV_CORE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <rte_log.h>
#include <rte_mbuf.h>

#include <gntshare/backend.h>
#include <gntshare/proto.h>
#include <gntshare/gntshare.h>
#include <gntshare/ring.h>

#include "config.h"
#include "attach.h"
#include "chain.h"
#include "datapath.h"
#include "domain.h"
#include "fabric.h"
#include "flow.h"
#include "guard.h"
#include "latency.h"
#include "pace.h"
#include "pool.h"
#include "port.h"
#include "quota.h"
#include "service.h"
#include "sizes.h"
#include "stats.h"
#include "validate.h"

/* The core's log: rte_log, so through the log sink (logsink.h) once EAL
 * is up; never blocks on stderr. */
extern int xnv_logtype;
#define XNV_REFUSAL_LOG_RATE 10	/* refused attaches logged per second */
#define XLOG(level, ...) \
	rte_log(RTE_LOG_ ## level, xnv_logtype, "xnv-core: " __VA_ARGS__)

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
	XNV_DROP_EMPTY,		/* received frame of length 0 */
	XNV_DROP_NF_QUOTA,	/* its NF held its quota of buffers (quota.h) */
	XNV_DROP_LINK_DOWN,	/* to a port whose link is down */
	XNV_DROP_FABRIC,	/* no hop of this host, or no room for one
				 * (fabric.h) */
	XNV_DROP_N
};

#include "worker.h"	/* its counters need XNV_DROP_N */

/* How a packet's NF was picked: 0 or 1 (send_nf() adds them up). */
enum xnv_pick { XNV_PICK_AFFINITY = 0, XNV_PICK_SPILL = 1 };

/*
 * Per-mbuf private area (in Dom0-private mbuf headers: trusted).  Laid out
 * for the stores of the data path: where a packet goes (its chain, step,
 * target, whose verdict chose it, how its NF was picked) is one 64-bit
 * word, `route`, written whole at rx and at each new step; the second
 * half of the descriptor an NF is handed (send_nf(): action and flags 0,
 * dst the input port, the flow hash) is another, `desc_hi`, written whole
 * at rx.  buf and pool are set once, when the pool is made.
 */
struct xnv_mbuf_priv {
	union {
		struct {
			uint16_t chain;	/* chain version (XNV_CHAIN_NONE:
					 * none) */
			uint8_t step;	/* current step of the chain */
			uint8_t tgt_kind;	/* where it goes next:
						 * XNV_STEP_* */
			uint16_t tgt_id;	/* service or port index */
			uint8_t verdict_nf;	/* NF id + 1 whose own verdict
						 * (OUT, TO_SERVICE) set the
						 * target; 0: a chain step
						 * (the operator's) */
			uint8_t pick;	/* how its NF was picked: XNV_PICK_* */
		};
		uint64_t route;
	};
	uint32_t buf;		/* buffer index in its pool */
	uint16_t pool;		/* index of its pool */
	uint16_t to_nf;		/* on a ring between workers: the NF picked
				 * for it (worker.h); XNV_NF_NONE: resolve
				 * it again */
	union {			/* bytes 8..15 of its gnts_desc to an NF */
		struct {
			uint8_t desc_action;	/* 0 */
			uint8_t desc_flags;	/* 0 */
			uint16_t in_port;
			uint32_t hash;	/* flow hash, 0 until computed */
		};
		uint64_t desc_hi;
	};
	uint64_t rx_tsc;	/* [core] latency: TSC of its rx burst, 0: none */
};

_Static_assert(sizeof(struct xnv_mbuf_priv) % RTE_MBUF_PRIV_ALIGN == 0,
	       "mbuf private area must keep mbuf alignment");
_Static_assert(XNV_MAX_NFS < UINT8_MAX, "verdict_nf holds an NF id + 1");
_Static_assert(offsetof(struct xnv_mbuf_priv, in_port) -
	       offsetof(struct xnv_mbuf_priv, desc_hi) ==
	       offsetof(struct gnts_desc, dst) - 8 &&
	       offsetof(struct xnv_mbuf_priv, hash) -
	       offsetof(struct xnv_mbuf_priv, desc_hi) ==
	       offsetof(struct gnts_desc, hash) - 8 &&
	       offsetof(struct gnts_desc, action) == 8,
	       "desc_hi is the second half of a gnts_desc");
/* config.h needs no DPDK, so it cannot take the value from rte_config.h. */
_Static_assert(XNV_HEADROOM == RTE_PKTMBUF_HEADROOM,
	       "XNV_HEADROOM (config.h) must be DPDK's mbuf headroom");

static inline struct xnv_mbuf_priv *
xnv_priv(struct rte_mbuf *m)
{
	return (struct xnv_mbuf_priv *)rte_mbuf_to_priv(m);
}

/* The words are built in registers: a field's byte offset in the
 * private area is its place in the word (little endian, as every CPU
 * DPDK 22.11 builds for). */
_Static_assert(RTE_BYTE_ORDER == RTE_LITTLE_ENDIAN,
	       "route and desc_hi words are built little endian");
#define XNV_ROUTE_AT(field, v) \
	((uint64_t)(v) << 8 * offsetof(struct xnv_mbuf_priv, field))
#define XNV_DESC_AT(field, v) ((uint64_t)(v) << 8 * \
	(offsetof(struct xnv_mbuf_priv, field) - \
	 offsetof(struct xnv_mbuf_priv, desc_hi)))

/* The route word of a packet on chain @p chain at step @p step, whose
 * target is @p s: no NF's verdict, its NF to be picked afresh
 * (XNV_PICK_AFFINITY, 0). */
static inline uint64_t
xnv_route(uint16_t chain, uint8_t step, const struct xnv_step *s)
{
	return XNV_ROUTE_AT(chain, chain) | XNV_ROUTE_AT(step, step) |
	       XNV_ROUTE_AT(tgt_kind, s->kind) | XNV_ROUTE_AT(tgt_id, s->id);
}

/* In a chain version's route words only (chain.c): the step pushes a
 * hop (fabric.h).  Never in a packet's: its pick byte is 0 or 1. */
#define XNV_ROUTE_HOP XNV_ROUTE_AT(pick, 0x80)

/* Where a route word sends its packet: its target and whose verdict
 * chose it (not its chain, step or pick). */
static inline uint64_t
xnv_route_target(uint64_t route)
{
	return route & (XNV_ROUTE_AT(tgt_kind, UINT8_MAX) |
			XNV_ROUTE_AT(tgt_id, UINT16_MAX) |
			XNV_ROUTE_AT(verdict_nf, UINT8_MAX));
}

/* The desc_hi word of a packet from port @p in_port with flow hash
 * @p hash (action and flags 0). */
static inline uint64_t
xnv_desc_hi(uint16_t in_port, uint32_t hash)
{
	return XNV_DESC_AT(in_port, in_port) | XNV_DESC_AT(hash, hash);
}

/* @p m (private area @p pv) takes step @p step of chain @p chain: its
 * next target; a step PORT:HOP tags it with its hop now (fabric.h), so a
 * packet that waits and is sent later is not tagged twice.  @return its
 * route word now (a failed push made it a drop). */
static inline uint64_t
xnv_take_step(struct rte_mbuf *m, struct xnv_mbuf_priv *pv, uint16_t chain,
	      uint8_t step, const struct xnv_step *s)
{
	uint64_t route = xnv_route(chain, step, s);

	pv->route = route;
	if (unlikely(s->hop != 0)) {
		xnv_fabric_push(m, pv, s->hop);
		route = pv->route;
	}
	return route;
}

struct xnv_core {
	struct xnv_config cfg;
	struct xnv_pool pools[XNV_MAX_POOLS];	/* groups', then NFs' own */
	unsigned n_retired;		/* own pools waiting for their
					 * buffers (xnv_pools_sweep) */
	struct xnv_port ports[XNV_MAX_PORTS];
	struct xnv_nfrec nfs[XNV_MAX_NFS];
	struct xnv_service services[XNV_MAX_SERVICES];
	struct xnv_chain_slot chains[XNV_MAX_CHAINS];
	uint16_t port_chain[XNV_MAX_PORTS];	/* default chain of each port */
	struct xnv_hop hops[XNV_HOP_MAX + 1];	/* fabric.h; [0] unused */
	struct xnv_flows *flows;
	uint32_t spill_ring_used;		/* spill above this occupancy */
	uint16_t active[XNV_MAX_NFS];	/* ids of attached NFs, polled */
	uint16_t n_active;
	struct gnts_srv *srv;		/* where NFs attach (backend.h) */
	int shutting_down;		/* detaches tell NFs: clean stop */
	int own_pools;			/* each NF gets a pool of its own */
	struct gnts_ratelimit refusal_log;	/* attach refusals logged */
	struct xnv_hostile hostile[XNV_MAX_HOSTILE];	/* domain.c */
	uint32_t dom_frames;		/* grant frames a domain may hold */
	int in_hostile;			/* detaching a hostile domain's NFs */
	uint64_t drops[XNV_DROP_N];
	uint64_t copies[XNV_MAX_GROUPS][XNV_MAX_GROUPS]; /* [from][to] */
	uint64_t tsc_hz;
	uint64_t start_tsc;
	int idle;			/* --idle-sleep (enum gnts_idle) */
	unsigned idle_max_us;		/* --idle-sleep-max: longest sleep */
	int rt_priority;		/* --rt-priority (0: SCHED_OTHER) */
	int bell_epfd;			/* NFs' doorbells (doorbell.c) */
	int port_epfd;			/* ports' rx interrupts of queue 0, one
					 * fd of bell_epfd's set once a port
					 * has one (port_intr.c) */
	uint64_t pace_due;		/* earliest paced rx due (TSC); 0 or
					 * UINT64_MAX: none */
	uint64_t stall_tsc;
	uint64_t heartbeat_tsc;		/* [core] heartbeat_timeout_ms; 0: off */
	uint64_t hoard_tsc;		/* [core] hoard_timeout_ms; 0: off */
	uint64_t link_tsc;		/* last link watch (port.c) */
	uint64_t first_rx_tsc, last_rx_tsc, last_tx_tsc;
	uint64_t rx_open_tsc;	/* since when every port with a chain is
				 * polled (0: one waits for its chain) */
	struct xnv_workers workers;	/* [core] workers (worker.h) */
};

extern const char *const xnv_drop_names[XNV_DROP_N];

#endif /* XNV_CORE_H */

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Validation of descriptors an NF hands back to the core.
 *
 * Threat model: the NF may be malicious or broken.  It controls every byte
 * of its tx ring and of the packet buffers it holds.  It does not control
 * the core's private state: mbuf headers, the owner table, the config.
 *
 * Rules (checked in this order, on a private copy of the descriptor that
 * gnts_ring_dequeue_burst() already made, so the NF cannot change it
 * between check and use):
 *   1. buf < pool size                     else XNV_BAD_INDEX
 *   2. owner[buf] == this NF               else XNV_BAD_OWNER (covers
 *      double returns and other NFs' buffers)
 *   3. len >= 1 (0 only with GNTS_ACT_DROP: gnts_desc_len_ok) and
 *      off + len <= buf_size               else XNV_BAD_BOUNDS
 *   4. flags == 0 (reserved: a later version may give them a meaning,
 *      which this one must not ignore)      else XNV_BAD_FLAGS
 *   5. action is DROP, OUT, TO_SERVICE, NEXT      else XNV_BAD_ACTION
 *   6. OUT: dst < number of ports; TO_SERVICE: dst names a configured
 *      service                              else XNV_BAD_DEST
 * A descriptor that fails 3-6 still names a buffer the NF owned: that
 * buffer is taken back and freed, so a bad descriptor never leaks.
 * One more kind is found later, on the data path (datapath.c, resolve):
 * an OUT or TO_SERVICE verdict that hands the packet to another trust
 * group than [group] may_send_to allows (XNV_BAD_POLICY): which group
 * receives it is known only once the service's NF is picked.
 * Packet *contents* are never trusted: the core does not parse a buffer
 * after an NF has held it (only copies between pools read it, as bytes).
 *
 * What happens to an NF that keeps failing them: guard.c (error budget,
 * quarantine, heartbeat).  This header needs no DPDK, so the fuzz harness
 * (tests/fuzz/fuzz_validate.c) runs exactly this code.
 */
#ifndef XNV_VALIDATE_H
#define XNV_VALIDATE_H

#include <gntshare/ring.h>
#include <gntshare/proto.h>

#include "config.h"

enum xnv_bad {
	XNV_OK = 0,
	XNV_BAD_INDEX,
	XNV_BAD_OWNER,
	XNV_BAD_BOUNDS,
	XNV_BAD_ACTION,
	XNV_BAD_DEST,
	XNV_BAD_FLAGS,
	XNV_BAD_POLICY,		/* not here: datapath.c, once the receiving
				 * group is known (may_send_to) */
	XNV_BAD_N
};

/* What the core may check a returned descriptor against (core-private). */
struct xnv_pool_view {
	uint32_t n_bufs;
	uint32_t buf_size;
	const uint16_t *owner;		/* buffer index -> 0 core, nf id + 1 */
};

static inline enum xnv_bad
xnv_validate(const struct gnts_desc *d, const struct xnv_pool_view *pool,
	     uint16_t owner_tag, const struct xnv_config *cfg)
{
	if (d->buf >= pool->n_bufs)
		return XNV_BAD_INDEX;
	if (pool->owner[d->buf] != owner_tag)
		return XNV_BAD_OWNER;
	if (!gnts_desc_len_ok(d->len, d->action) ||
	    (uint32_t)d->off + d->len > pool->buf_size)
		return XNV_BAD_BOUNDS;
	if (d->flags != 0)
		return XNV_BAD_FLAGS;
	switch (d->action) {
	case GNTS_ACT_DROP:
	case GNTS_ACT_NEXT:
		return XNV_OK;
	case GNTS_ACT_OUT:
		return d->dst < cfg->n_ports ? XNV_OK : XNV_BAD_DEST;
	case GNTS_ACT_TO_SERVICE:
		return d->dst <= XNV_MAX_SERVICE_ID &&
		       cfg->service_by_id[d->dst] >= 0 ? XNV_OK : XNV_BAD_DEST;
	default:
		return XNV_BAD_ACTION;
	}
}

/*
 * The common case in one test: a NEXT verdict, flags 0, on a buffer in
 * range that this NF owns, with data (len >= 1) in bounds.  (Written
 * branch-free, with & or one OR of differences, it took more
 * instructions: bench/README.md.)
 * @return 1 only where xnv_validate() returns XNV_OK (tests/unit/
 * test_validate.c); 0 says nothing: xnv_validate() tells what is wrong,
 * or that another verdict is fine.
 */
static inline int
xnv_validate_next(const struct gnts_desc *d, const struct xnv_pool_view *pool,
		  uint16_t owner_tag)
{
	return d->buf < pool->n_bufs && pool->owner[d->buf] == owner_tag &&
	       d->action == GNTS_ACT_NEXT && d->flags == 0 && d->len != 0 &&
	       (uint32_t)d->off + d->len <= pool->buf_size;
}

#endif /* XNV_VALIDATE_H */

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Paced rx ([port] rx_rate): no more than rx_rate packets a second on
 * average, in bursts of at most [core] burst (a token bucket one burst
 * deep).  A source such as net_null, which has a packet whenever asked,
 * then offers exactly that load.  No DPDK: tests/unit/test_pace.c.
 */
#ifndef XNV_PACE_H
#define XNV_PACE_H

#include <stdint.h>

/* Token bucket of a paced port, in 1/256 TSC cycles. */
struct xnv_pace {
	uint64_t cost;		/* per packet; 0: not paced */
	uint64_t next;		/* when the next packet may come */
};

/** Set @p p up for @p pps packets/s (0: unpaced). */
void xnv_pace_init(struct xnv_pace *p, uint64_t pps, uint64_t tsc_hz);

/** How many packets may be received at @p now (TSC cycles since the
 *  core started: < 2^56), at most @p burst. */
static inline unsigned
xnv_pace_allow(struct xnv_pace *p, uint64_t now, unsigned burst)
{
	uint64_t t = now << 8, floor, k;

	if (p->cost == 0)
		return burst;
	/* Credit is never more than one burst: idle time is not saved up. */
	floor = t > (burst - 1) * p->cost ? t - (burst - 1) * p->cost : 0;
	if (p->next < floor)
		p->next = floor;
	if (p->next > t)
		return 0;
	k = (t - p->next) / p->cost + 1;
	return k < burst ? (unsigned)k : burst;
}

/** @p n packets were received. */
static inline void
xnv_pace_took(struct xnv_pace *p, unsigned n)
{
	p->next += n * p->cost;
}

#endif /* XNV_PACE_H */

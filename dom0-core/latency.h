/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Port-to-port latency ([core] latency).
 *
 * With latency on, every packet a port receives carries the TSC of its rx
 * burst in its mbuf private area (core memory: no guest sees or changes
 * it), and every port that sends packets records, per tx burst, how long
 * each spent inside the core and its NFs: rx burst -> tx burst.  Values go
 * into a log-linear histogram (16 sub-buckets per power of two: a value
 * is reported as its bucket's upper bound, at most 1/16 = 6.25 % high).
 * Each port has one histogram per worker ([core] workers), written only
 * by the worker that sends on its tx queue; the commands (which run with
 * the workers parked) read their sum.
 *
 * latency.c is the arithmetic (no DPDK: tests/unit/test_latency.c),
 * latency_rte.c the DPDK half (allocation, recording at tx, commands).
 */
#ifndef XNV_LATENCY_H
#define XNV_LATENCY_H

#include <stdint.h>

#define XNV_LAT_SUB_BITS 4
#define XNV_LAT_BUCKETS (64 << XNV_LAT_SUB_BITS)

struct xnv_lat {
	uint64_t n;
	uint64_t max;
	uint64_t sum;
	uint32_t b[XNV_LAT_BUCKETS];
};

/** Bucket of @p v (any uint64_t; order-preserving). */
static inline unsigned
xnv_lat_bucket(uint64_t v)
{
	unsigned e;

	if (v < (1u << XNV_LAT_SUB_BITS))
		return (unsigned)v;
	e = 63u - (unsigned)__builtin_clzll(v);
	return ((e - XNV_LAT_SUB_BITS + 1) << XNV_LAT_SUB_BITS) |
	       (unsigned)((v >> (e - XNV_LAT_SUB_BITS)) &
			  ((1u << XNV_LAT_SUB_BITS) - 1));
}

/** Largest value that falls in bucket @p b. */
uint64_t xnv_lat_bucket_max(unsigned b);

static inline void
xnv_lat_add(struct xnv_lat *l, uint64_t v)
{
	l->b[xnv_lat_bucket(v)]++;
	l->n++;
	l->sum += v;
	if (v > l->max)
		l->max = v;
}

/** Add histogram @p from to @p to (both kept as they are counted). */
void xnv_lat_merge(struct xnv_lat *to, const struct xnv_lat *from);

/** Smallest bucket bound with at least @p q (0..1) of the values at or
 *  under it (exact max for q == 1); 0 when empty. */
uint64_t xnv_lat_quantile(const struct xnv_lat *l, double q);

/** How many values lie in buckets whose upper bound is at most @p bound
 *  (a cumulative histogram bucket: a value is counted at its bucket's
 *  bound, at most 6.25 % above it). */
uint64_t xnv_lat_count_le(const struct xnv_lat *l, uint64_t bound);

struct xnv_core;
struct xnv_port;
struct rte_mbuf;
struct rte_tel_data;

/** Histograms for every port if [core] latency is on.  0 or -ENOMEM. */
int xnv_latency_init(struct xnv_core *c);

/** @p n packets of @p m just went out of @p p on worker @p w's tx queue:
 *  record their latency in that worker's histogram. */
void xnv_latency_record(struct xnv_port *p, uint16_t w, struct rte_mbuf **m,
			unsigned n);

/* Control commands /xnv/port/latency and /xnv/port/latency/reset. */
void xnv_cmd_port_latency(struct xnv_core *c, const char *p,
			  struct rte_tel_data *d);
void xnv_cmd_port_latency_reset(struct xnv_core *c, const char *p,
				struct rte_tel_data *d);

#endif

/* SPDX-License-Identifier: BSD-3-Clause */
/* Port-to-port latency histograms, the arithmetic (no DPDK:
 * tests/unit/test_latency.c): see latency.h. */
#include "latency.h"

uint64_t
xnv_lat_bucket_max(unsigned b)
{
	unsigned e, sub;

	if (b < (1u << XNV_LAT_SUB_BITS))
		return b;
	e = (b >> XNV_LAT_SUB_BITS) + XNV_LAT_SUB_BITS - 1;
	sub = b & ((1u << XNV_LAT_SUB_BITS) - 1);
	/* Past 2^64 (the top buckets' upper ends): every value is in. */
	if (e > 63 || (e == 63 && sub == (1u << XNV_LAT_SUB_BITS) - 1))
		return UINT64_MAX;
	/* (1 sub-bucket wide) * (sub + 1) past 2^e, minus one */
	return (1ull << e) + ((uint64_t)(sub + 1) << (e - XNV_LAT_SUB_BITS)) - 1;
}

uint64_t
xnv_lat_quantile(const struct xnv_lat *l, double q)
{
	uint64_t want, seen = 0, v;
	unsigned b;

	if (l->n == 0)
		return 0;
	if (q >= 1.0)
		return l->max;
	want = (uint64_t)(q * (double)l->n);
	if (want == 0 || (double)want < q * (double)l->n)
		want++;
	for (b = 0; b < XNV_LAT_BUCKETS; b++) {
		seen += l->b[b];
		if (seen >= want) {
			v = xnv_lat_bucket_max(b);
			return v < l->max ? v : l->max;
		}
	}
	return l->max;
}

uint64_t
xnv_lat_count_le(const struct xnv_lat *l, uint64_t bound)
{
	uint64_t n = 0;
	unsigned b;

	for (b = 0; b < XNV_LAT_BUCKETS && xnv_lat_bucket_max(b) <= bound; b++)
		n += l->b[b];
	return n;
}

void
xnv_lat_merge(struct xnv_lat *to, const struct xnv_lat *from)
{
	unsigned b;

	for (b = 0; b < XNV_LAT_BUCKETS; b++)
		to->b[b] += from->b[b];
	to->n += from->n;
	to->sum += from->sum;
	if (from->max > to->max)
		to->max = from->max;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* An NF's own counters, as the core shows them: see nf_stats.c. */
#ifndef XNV_NF_STATS_H
#define XNV_NF_STATS_H

struct xnv_nfrec;
struct rte_tel_data;

/** Add "stats" (dict: name -> value of each valid slot; empty when the NF
 *  publishes none or has no region any more) and "stats_invalid" (slots
 *  with a bad or repeated name) to the dict @p d. */
void xnv_nf_stats_add(const struct xnv_nfrec *nf, struct rte_tel_data *d);

#endif

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * An NF's own counters (the stats area of its ring region, gntshare/
 * proto.h), read for /xnv/nf/info.  The NF writes that memory and may be
 * hostile: each slot is copied once into private memory, its name checked
 * (gnts_nf_stat_name_ok) and its value taken as it was read.  A slot with
 * a bad name, or a name seen before in this NF, is counted as invalid and
 * shows nothing, so the reply stays well-formed whatever the NF wrote.
 */
#include <stdatomic.h>
#include <string.h>

#include <rte_telemetry.h>

#include "core.h"
#include "nf_stats.h"

void
xnv_nf_stats_add(const struct xnv_nfrec *nf, struct rte_tel_data *d)
{
	char names[GNTS_NF_STATS_MAX][GNTS_NF_STAT_NAME_LEN];
	struct rte_tel_data *st = rte_tel_data_alloc();
	unsigned i, j, n = 0, invalid = 0;
	uint64_t v;

	if (st == NULL)
		return;
	rte_tel_data_start_dict(st);
	for (i = 0; nf->stats != NULL && i < GNTS_NF_STATS_MAX; i++) {
		const struct gnts_nf_stat *s = &nf->stats[i];

		memcpy(names[n], s->name, GNTS_NF_STAT_NAME_LEN);
		v = atomic_load_explicit(&((struct gnts_nf_stat *)s)->value,
					 memory_order_relaxed);
		if (names[n][0] == '\0')
			continue;		/* unused */
		if (!gnts_nf_stat_name_ok(names[n])) {
			invalid++;
			continue;
		}
		for (j = 0; j < n && strcmp(names[j], names[n]) != 0; j++)
			;
		if (j < n) {
			invalid++;
			continue;
		}
		rte_tel_data_add_dict_u64(st, names[n++], v);
	}
	rte_tel_data_add_dict_container(d, "stats", st, 0);
	rte_tel_data_add_dict_u64(d, "stats_invalid", invalid);
}

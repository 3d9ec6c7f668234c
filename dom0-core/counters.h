/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The counters of each object (port, NF, trust group), described once.
 * A counter is a name and its place in the object's snapshot; the text
 * table and the JSON file (stats.c) and the telemetry replies
 * (ctl_cmds.c) all walk the same tables, so a counter added here shows up
 * in all three.  Drop reasons are xnv_drop_names[] (core.h), bad
 * descriptor kinds xnv_bad_names[] (guard.c).
 *
 * Usage:
 *	struct xnv_port_counters pc;
 *
 *	xnv_port_counters(c, i, &pc);
 *	for (k = 0; k < XNV_PORT_N_COUNTERS; k++)
 *		print(xnv_port_counter_tab[k].name,
 *		      xnv_counter(&xnv_port_counter_tab[k], &pc));
 */
#ifndef XNV_COUNTERS_H
#define XNV_COUNTERS_H

#include <stddef.h>
#include <stdint.h>

struct xnv_core;
struct xnv_nfrec;

struct xnv_counter {
	const char *name;	/* JSON and telemetry key ('-' for '_' in
				 * the text table's header) */
	size_t off;		/* offsetof() in the object's snapshot */
	int width;		/* text table column; 0: not in the table */
};

static inline uint64_t
xnv_counter(const struct xnv_counter *k, const void *snap)
{
	return *(const uint64_t *)(const void *)((const char *)snap + k->off);
}

/* A port: ours, then the driver's (packets it could not even hand us). */
struct xnv_port_counters {
	uint64_t rx, tx, rx_missed, rx_nombuf;
};
#define XNV_PORT_N_COUNTERS 4
extern const struct xnv_counter xnv_port_counter_tab[XNV_PORT_N_COUNTERS];
void xnv_port_counters(const struct xnv_core *c, uint16_t i,
		       struct xnv_port_counters *out);

struct xnv_rec_counters {
	uint64_t rx, tx, drop, bad, reclaimed, alloc, held;
};
#define XNV_REC_N_COUNTERS 7
extern const struct xnv_counter xnv_rec_counter_tab[XNV_REC_N_COUNTERS];
void xnv_rec_counters(const struct xnv_nfrec *nf,
		      struct xnv_rec_counters *out);

/* A trust group: its pool and the packets copied into its pools. */
struct xnv_group_counters {
	uint64_t pool_bufs, free, copies_in;
};
#define XNV_GROUP_N_COUNTERS 3
extern const struct xnv_counter xnv_group_counter_tab[XNV_GROUP_N_COUNTERS];
void xnv_group_counters(const struct xnv_core *c, uint16_t g,
			struct xnv_group_counters *out);

#endif /* XNV_COUNTERS_H */

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

/* X(name, text width): one line per counter makes its snapshot field
 * and its table row (counters.c). */
#define XNV_COUNTER_FIELD(name, width) uint64_t name;
#define XNV_COUNTER_ONE(name, width) + 1

/* A port: ours, then the driver's (packets it could not even hand us),
 * then those of its packets dropped because their NF held its quota, then
 * its link: up now (1) or down (0), and how often that changed; then the
 * idle core's sleeps its rx interrupt ended (port_intr.c). */
#define XNV_PORT_COUNTERS(X) \
	X(rx, 12) X(tx, 12) X(rx_missed, 10) X(rx_nombuf, 10) X(nf_quota, 0) \
	X(link_up, 0) X(link_changes, 0) X(rx_wakes, 0)
struct xnv_port_counters { XNV_PORT_COUNTERS(XNV_COUNTER_FIELD) };
#define XNV_PORT_N_COUNTERS (0 XNV_PORT_COUNTERS(XNV_COUNTER_ONE))
extern const struct xnv_counter xnv_port_counter_tab[XNV_PORT_N_COUNTERS];
void xnv_port_counters(const struct xnv_core *c, uint16_t i,
		       struct xnv_port_counters *out);

/* An NF (attached or gone); nf_quota: packets for it dropped while it
 * held max_held buffers, its quota; bell_*: its doorbells (doorbell.h):
 * kicks the core sent it, its kicks that woke the core, of which with
 * nothing to send, times it was not listened to for flooding, kicks to
 * it sent late for the cap. */
#define XNV_REC_COUNTERS(X) \
	X(rx, 10) X(tx, 10) X(drop, 8) X(bad, 6) X(reclaimed, 9) \
	X(alloc, 0) X(held, 0) X(max_held, 0) X(nf_quota, 0) \
	X(bell_kicks, 0) X(bell_wakes, 0) X(bell_spurious, 0) X(bell_muted, 0) \
	X(bell_capped, 0)
struct xnv_rec_counters { XNV_REC_COUNTERS(XNV_COUNTER_FIELD) };
#define XNV_REC_N_COUNTERS (0 XNV_REC_COUNTERS(XNV_COUNTER_ONE))
extern const struct xnv_counter xnv_rec_counter_tab[XNV_REC_N_COUNTERS];
void xnv_rec_counters(const struct xnv_nfrec *nf,
		      struct xnv_rec_counters *out);

/* A trust group: its pool and the packets copied into its pools. */
#define XNV_GROUP_COUNTERS(X) X(pool_bufs, 0) X(free, 0) X(copies_in, 0)
struct xnv_group_counters { XNV_GROUP_COUNTERS(XNV_COUNTER_FIELD) };
#define XNV_GROUP_N_COUNTERS (0 XNV_GROUP_COUNTERS(XNV_COUNTER_ONE))
extern const struct xnv_counter xnv_group_counter_tab[XNV_GROUP_N_COUNTERS];
void xnv_group_counters(const struct xnv_core *c, uint16_t g,
			struct xnv_group_counters *out);

#endif /* XNV_COUNTERS_H */

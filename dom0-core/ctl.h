/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef XNV_CTL_H
#define XNV_CTL_H

#include <stdarg.h>

struct rte_tel_data;
struct xnv_core;

struct xnv_ctl_cmd {
	const char *name;		/* "/xnv/..." */
	void (*fn)(struct xnv_core *c, const char *params,
		   struct rte_tel_data *d);
	int needs_param;
	const char *help;
};

/* The command table (ctl_cmds.c), terminated by a NULL name. */
extern const struct xnv_ctl_cmd xnv_ctl_cmds[];

/** Register every command with rte_telemetry.  @return 0 or -errno. */
int xnv_ctl_register(void);

/** Run a posted command, if any (main loop, between bursts). */
void xnv_ctl_poll(struct xnv_core *c);

/** Reply {"error": "..."}; returns 0 for the telemetry callback. */
int xnv_ctl_error(struct rte_tel_data *d, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/** A non-negative decimal id, or -1. */
long xnv_ctl_id(const char *params);

#endif

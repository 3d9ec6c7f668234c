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
	int direct;	/* runs on the telemetry thread, may take long; the
			 * data path's state only via xnv_ctl_on_loop() */
};

/* The command table (ctl_cmds.c), terminated by a NULL name. */
extern const struct xnv_ctl_cmd xnv_ctl_cmds[];

/** Register every command with rte_telemetry.  @return 0 or -errno. */
int xnv_ctl_register(struct xnv_core *c);

/** Run @p fn on the main loop between bursts and wait for it; called on
 *  the main lcore (at start), run at once.  0, or -ETIMEDOUT: the loop
 *  did not take it within the control timeout (it never will). */
int xnv_ctl_on_loop(void (*fn)(struct xnv_core *c, void *arg), void *arg);

/** Run a posted command, if any (main loop, between bursts). */
void xnv_ctl_poll(struct xnv_core *c);

/** Reply {"error": "..."}; returns 0 for the telemetry callback. */
int xnv_ctl_error(struct rte_tel_data *d, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

struct xnv_chain;
/** @p ch as an array of step names, for a dict field; NULL after
 *  replying with an error. */
struct rte_tel_data *xnv_ctl_chain_array(const struct xnv_core *c,
					 const struct xnv_chain *ch,
					 struct rte_tel_data *d);

/** Reply {"error": "... did not answer ...", "busy": 1}: the command
 *  changed nothing and may be asked again. */
int xnv_ctl_busy(struct rte_tel_data *d);

/** Write the pointer file next to the NF socket (ctl_pointer.c): its
 *  telemetry socket and pid, for xnv-ctl.  A failure is logged only. */
void xnv_ctl_pointer_write(const struct xnv_core *c);

/** Remove the pointer file, if written (clean exit). */
void xnv_ctl_pointer_remove(void);

/** A non-negative decimal id, or -1. */
long xnv_ctl_id(const char *params);

#endif

/* SPDX-License-Identifier: BSD-3-Clause */
/* Flow director: rules (flow_rule.h) -> chains (flow.c, flow_cmds.c). */
#ifndef XNV_FLOW_H
#define XNV_FLOW_H

#include <stddef.h>
#include <stdint.h>

struct xnv_core;
struct rte_mbuf;
struct rte_tel_data;

/** The table, with the config's [flow] rules in force.  Main, at start. */
int xnv_flows_create(struct xnv_core *c, char *err, size_t errlen);
void xnv_flows_destroy(struct xnv_core *c);

/** Worker @p w (worker.h) classifies (1) or stopped or is about to
 *  sleep (0): while on, xnv_flows_quiescent() at least once a
 *  millisecond. */
void xnv_flows_online(struct xnv_core *c, unsigned w, int on);
/** Worker @p w holds no rule set between bursts (RCU, flow.c). */
void xnv_flows_quiescent(struct xnv_core *c, unsigned w);

/** Rules in force, and of them exact 5-tuples (in the hash). */
unsigned xnv_flows_count(const struct xnv_core *c);
unsigned xnv_flows_exact(const struct xnv_core *c);
/** Non-zero when any rule is in force (a hint: classify looks again). */
int xnv_flows_active(const struct xnv_core *c);

/** On worker @p w: parse @p n packets from port @p in_port (their flow
 *  hash into the private area when the NIC gave none) and set
 *  @p chain[i] for each one a rule matches. */
void xnv_flows_classify(struct xnv_core *c, unsigned w, struct rte_mbuf **m,
			unsigned n, uint16_t in_port, uint16_t *chain);

/* Control commands (flow_cmds.c; CONTROL.md), on the telemetry thread. */
void xnv_cmd_flow_list(struct xnv_core *c, const char *p,
		       struct rte_tel_data *d);
void xnv_cmd_flow_info(struct xnv_core *c, const char *p,
		       struct rte_tel_data *d);
void xnv_cmd_flow_add(struct xnv_core *c, const char *p,
		      struct rte_tel_data *d);
void xnv_cmd_flow_del(struct xnv_core *c, const char *p,
		      struct rte_tel_data *d);
void xnv_cmd_flow_clear(struct xnv_core *c, const char *p,
			struct rte_tel_data *d);
void xnv_cmd_flow_reload(struct xnv_core *c, const char *p,
			 struct rte_tel_data *d);
/** What /xnv/flow/reload does (telemetry thread): every rule replaced by
 *  the config file's [flow] sections at once; *@p n rules now, *@p was
 *  before.  0, -ETIMEDOUT (the loop did not answer: nothing changed), or
 *  another -errno with one line in @p err (nothing changed). */
int xnv_flows_reload(struct xnv_core *c, unsigned *n, unsigned *was,
		     char *err, size_t errlen);

#endif /* XNV_FLOW_H */

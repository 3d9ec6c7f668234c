/* SPDX-License-Identifier: BSD-3-Clause */
/* Operator commands that change state (ctl_ops.c), in the command table
 * of ctl_cmds.c. */
#ifndef XNV_CTL_OPS_H
#define XNV_CTL_OPS_H

struct xnv_core;
struct rte_tel_data;

/** /xnv/clear: counters of ports, NFs, groups, services and drops to 0;
 *  the reply lists what is kept. */
void xnv_cmd_clear(struct xnv_core *c, const char *p, struct rte_tel_data *d);

/** /xnv/chain/unset PORT: no chain, rx no longer polled (tx only). */
void xnv_cmd_chain_unset(struct xnv_core *c, const char *p,
			 struct rte_tel_data *d);

/** /xnv/nf/kick ID|NAME: detach an attached NF as at a clean shutdown. */
void xnv_cmd_nf_kick(struct xnv_core *c, const char *p,
		     struct rte_tel_data *d);

/** /xnv/reload (direct, ctl_reload.c): the config file read again; chains,
 *  rx_rate, live [core] limits and flow rules applied, or nothing. */
void xnv_cmd_reload(struct xnv_core *c, const char *p, struct rte_tel_data *d);

#endif

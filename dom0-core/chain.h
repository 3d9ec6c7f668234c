/* SPDX-License-Identifier: BSD-3-Clause */
/* Chain versions: ports' and flow rules' chains (chain.c; the table
 * itself, DPDK-free, is chain_table.h's). */
#ifndef XNV_CHAIN_H
#define XNV_CHAIN_H

#include <stddef.h>
#include <stdint.h>

#include "chain_table.h"
#include "config.h"

struct xnv_core;

int xnv_chain_new(struct xnv_core *c, const struct xnv_chain *ch);
void xnv_chain_unuse(struct xnv_core *c, uint16_t id);
int xnv_chain_set_port(struct xnv_core *c, uint16_t port,
		       const struct xnv_chain *ch);
void xnv_chain_text(const struct xnv_core *c, const struct xnv_chain *ch,
		    char *buf, size_t len);

#endif /* XNV_CHAIN_H */

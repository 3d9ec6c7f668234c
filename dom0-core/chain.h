/* SPDX-License-Identifier: BSD-3-Clause */
/* Chain versions: ports' and flow rules' chains (chain.c). */
#ifndef XNV_CHAIN_H
#define XNV_CHAIN_H

#include <stddef.h>
#include <stdint.h>

#include "config.h"

struct xnv_core;

/*
 * One version of a chain.  Versions never change: editing a port's chain
 * makes a new version, and packets already on their way finish the one
 * they started on.  A version is reused once no port, no flow rule and no
 * packet refers to it; packets are not counted on the data path but found
 * when the table is full (chain.c).
 */
struct xnv_chain_slot {
	struct xnv_chain ch;
	uint32_t users;			/* ports + flow rules */
	uint8_t used;
};

int xnv_chain_new(struct xnv_core *c, const struct xnv_chain *ch);
void xnv_chain_unuse(struct xnv_core *c, uint16_t id);
int xnv_chain_set_port(struct xnv_core *c, uint16_t port,
		       const struct xnv_chain *ch);
void xnv_chain_text(const struct xnv_core *c, const struct xnv_chain *ch,
		    char *buf, size_t len);

#endif /* XNV_CHAIN_H */

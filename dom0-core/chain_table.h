/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The table of chain versions, without DPDK (tests/unit/test_chain_table.c).
 *
 * One version of a chain.  Versions never change: editing a port's chain
 * makes a new version, and packets already on their way finish the one
 * they started on.  Equal versions are shared.  A version is reused once
 * no port, no flow rule and no packet refers to it; ports and rules are
 * counted (users), packets are not counted on the data path but found
 * when the table is full (chain.c marks them, xnv_chain_table_sweep()
 * frees the rest).
 */
#ifndef XNV_CHAIN_TABLE_H
#define XNV_CHAIN_TABLE_H

#include <stdint.h>

#include "config.h"
#include "sizes.h"

struct xnv_chain_slot {
	struct xnv_chain ch;
	uint32_t users;			/* ports + flow rules */
	uint8_t used;
	/* Not the table's: the route word (dom0-core/core.h) a packet
	 * taking each step gets, made by chain.c when the version is
	 * taken; 0 from ch.n on (past the end). */
	uint64_t route[XNV_MAX_CHAIN + 1];
};

/** 1 if @p a and @p b have the same steps. */
int xnv_chain_same(const struct xnv_chain *a, const struct xnv_chain *b);

/** A version with @p ch's steps, one more user: an equal one if there is
 *  one, else a free slot.  @return its index, or -ENOSPC when full. */
int xnv_chain_table_get(struct xnv_chain_slot t[XNV_MAX_CHAINS],
			const struct xnv_chain *ch);

/** One user less of version @p id (never below 0; out of range: none). */
void xnv_chain_table_unuse(struct xnv_chain_slot t[XNV_MAX_CHAINS],
			   uint16_t id);

/** Free every version with no user that no packet names (@p live[i] != 0:
 *  some packet does). */
void xnv_chain_table_sweep(struct xnv_chain_slot t[XNV_MAX_CHAINS],
			   const uint8_t live[XNV_MAX_CHAINS]);

#endif /* XNV_CHAIN_TABLE_H */

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Longest-prefix match for IPv4 (32-bit) and IPv6 (128-bit) addresses: a
 * multibit trie of stride 8 with controlled prefix expansion.
 *
 * Level d of the trie is indexed by byte d of the address.  A prefix of
 * length L, 8d < L <= 8d + 8, lives at level d, expanded over the
 * 2^(8d + 8 - L) entries it covers; an entry keeps the longest prefix
 * that expands onto it.  A lookup walks at most 4 (IPv4) or 16 (IPv6)
 * levels and keeps the last value it met: deeper means longer, so that
 * is the longest match.  The /0 prefix is kept apart.
 *
 *   level 0  [ 0 .. 10 .. 255 ]     10.0.0.0/8 -> entry 10: value A
 *                   |  child             10.1.0.0/16 -> below: value B
 *   level 1  [ 0 1 .. 255 ]         lookup 10.1.2.3: A at level 0,
 *                ^ B                 B at level 1 -> B
 *
 * Memory: 2 KiB a node; every prefix longer than 8 bits adds at most
 * one node a level it crosses that no other prefix made.  Building only
 * (the router loads its routes once); no deletion.
 */
#ifndef XNV_EX_LPM_H
#define XNV_EX_LPM_H

#include <stdint.h>

#define LPM_VALUE_MAX 0xffffffu		/* values are 24 bits */

struct lpm_entry {
	uint32_t child;		/* node index; 0: none (the root is 0) */
	uint32_t val;		/* value << 8 | (prefix length + 1); 0: none */
};

struct lpm_node {
	struct lpm_entry e[256];
};

struct lpm {
	struct lpm_node *nodes;
	uint32_t n_nodes, cap_nodes, max_nodes;
	uint32_t def;		/* the /0 prefix: value << 8 | 1; 0: none */
	uint8_t bytes;		/* 4 or 16 */
};

/** An empty table for @p width_bits (32 or 128) addresses, of at most
 *  @p max_nodes nodes.  @return 0, -EINVAL or -ENOMEM. */
int lpm_init(struct lpm *l, unsigned width_bits, uint32_t max_nodes);

/**
 * Add prefix @p addr / @p len (bits past len are ignored) with @p value,
 * or give a prefix that is there already the new value.  (Whether it was
 * there cannot always be seen: longer prefixes may cover all of its
 * entries.  Callers that refuse duplicates keep their own set.)
 * @return 0, -EINVAL for len or value out of range, -ENOSPC past
 *   max_nodes, -ENOMEM.
 */
int lpm_add(struct lpm *l, const uint8_t *addr, unsigned len, uint32_t value);

void lpm_free(struct lpm *l);

/** Longest match of @p addr.  @return 0 with *value set, or -1: none. */
static inline int
lpm_lookup(const struct lpm *l, const uint8_t *addr, uint32_t *value)
{
	uint32_t best = l->def, node = 0;
	unsigned d;

	for (d = 0; d < l->bytes; d++) {
		const struct lpm_entry *e = &l->nodes[node].e[addr[d]];

		if (e->val != 0)
			best = e->val;
		if ((node = e->child) == 0)
			break;
	}
	if (best == 0)
		return -1;
	*value = best >> 8;
	return 0;
}

#endif /* XNV_EX_LPM_H */

/* SPDX-License-Identifier: BSD-3-Clause */
/* Multibit-trie longest-prefix match (see lpm.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lpm.h"

/* @return index of a new zeroed node, or 0 on failure (0 is the root,
 * never a child). */
static uint32_t
new_node(struct lpm *l, int *err)
{
	if (l->n_nodes == l->max_nodes) {
		*err = -ENOSPC;
		return 0;
	}
	if (l->n_nodes == l->cap_nodes) {
		uint32_t cap = l->cap_nodes * 2;
		struct lpm_node *n;

		if (cap > l->max_nodes)
			cap = l->max_nodes;
		n = realloc(l->nodes, (size_t)cap * sizeof(*n));
		if (n == NULL) {
			*err = -ENOMEM;
			return 0;
		}
		l->nodes = n;
		l->cap_nodes = cap;
	}
	memset(&l->nodes[l->n_nodes], 0, sizeof(l->nodes[0]));
	return l->n_nodes++;
}

int
lpm_init(struct lpm *l, unsigned width_bits, uint32_t max_nodes)
{
	memset(l, 0, sizeof(*l));
	if ((width_bits != 32 && width_bits != 128) || max_nodes == 0)
		return -EINVAL;
	l->bytes = (uint8_t)(width_bits / 8);
	l->max_nodes = max_nodes;
	l->cap_nodes = 1;
	l->nodes = calloc(1, sizeof(*l->nodes));
	if (l->nodes == NULL)
		return -ENOMEM;
	l->n_nodes = 1;
	return 0;
}

void
lpm_free(struct lpm *l)
{
	free(l->nodes);
	memset(l, 0, sizeof(*l));
}

int
lpm_add(struct lpm *l, const uint8_t *addr, unsigned len, uint32_t value)
{
	uint32_t node = 0, val = value << 8 | (len + 1), base, span, i;
	unsigned d, last, bits;
	int err = 0;

	if (len > l->bytes * 8u || value > LPM_VALUE_MAX)
		return -EINVAL;
	if (len == 0) {
		l->def = val;
		return 0;
	}
	last = (len - 1) / 8;			/* level the prefix lives at */
	for (d = 0; d < last; d++) {
		struct lpm_entry *e = &l->nodes[node].e[addr[d]];
		uint32_t child = e->child;

		if (child == 0) {
			/* new_node() may move l->nodes: index again after */
			child = new_node(l, &err);
			if (child == 0)
				return err;
			l->nodes[node].e[addr[d]].child = child;
		}
		node = child;
	}
	bits = len - 8 * last;			/* 1..8 bits of this byte */
	span = 1u << (8 - bits);
	base = addr[last] & (0xffu << (8 - bits)) & 0xffu;
	for (i = base; i < base + span; i++) {
		struct lpm_entry *e = &l->nodes[node].e[i];

		if ((e->val & 0xffu) <= len + 1)	/* = len: this prefix */
			e->val = val;
	}
	return 0;
}

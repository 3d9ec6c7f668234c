/* SPDX-License-Identifier: BSD-3-Clause */
/* Maglev lookup table (see maglev.h). */
#include <errno.h>
#include <stdlib.h>

#include "maglev.h"

int
maglev_is_prime(uint32_t n)
{
	if (n < 2)
		return 0;
	for (uint32_t d = 2; (uint64_t)d * d <= n; d++)
		if (n % d == 0)
			return 0;
	return 1;
}

int
maglev_init(struct maglev *m, uint32_t size)
{
	m->size = size;
	m->n = 0;
	m->table = NULL;
	if (size < 3 || !maglev_is_prime(size))
		return -EINVAL;
	m->table = malloc(size * sizeof(*m->table));
	if (m->table == NULL)
		return -ENOMEM;
	for (uint32_t i = 0; i < size; i++)
		m->table[i] = MAGLEV_NONE;
	return 0;
}

/* Two independent 64-bit mixes of a backend identity (splitmix64). */
static uint64_t
mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

int
maglev_build(struct maglev *m, const uint64_t *ids, uint32_t n)
{
	uint64_t *next, *offset, *skip;
	uint32_t filled = 0, i, c;

	if (n > m->size)
		return -EINVAL;
	for (c = 0; c < m->size; c++)
		m->table[c] = MAGLEV_NONE;
	m->n = n;
	if (n == 0)
		return 0;
	next = calloc(3 * (size_t)n, sizeof(*next));
	if (next == NULL)
		return -ENOMEM;
	offset = next + n;
	skip = offset + n;
	for (i = 0; i < n; i++) {
		offset[i] = mix(ids[i]) % m->size;
		skip[i] = mix(ids[i] ^ 0x5bd1e9955bd1e995ull) % (m->size - 1) + 1;
	}
	/* Backends take turns: each claims the next free entry of its own
	 * permutation, until the table is full. */
	for (;;) {
		for (i = 0; i < n; i++) {
			do {
				c = (uint32_t)((offset[i] + next[i] * skip[i]) %
					       m->size);
				next[i]++;
			} while (m->table[c] != MAGLEV_NONE);
			m->table[c] = i;
			if (++filled == m->size) {
				free(next);
				return 0;
			}
		}
	}
}

void
maglev_free(struct maglev *m)
{
	free(m->table);
	m->table = NULL;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Maglev consistent hashing (Eisenbud et al., NSDI 2016): a lookup table
 * of M entries (M prime) filled by the backends in turn, each along its
 * own permutation of the entries, (offset + j * skip) mod M, both drawn
 * from a hash of the backend's identity.  Every backend gets M/N entries
 * (give or take one), and a backend set that changes by one moves few
 * entries besides those of that backend.
 *
 *   struct maglev m;
 *   maglev_init(&m, 65537);
 *   maglev_build(&m, ids, n);             // ids: stable backend identities
 *   backend = m.table[flow_hash % m.size];  // MAGLEV_NONE if n == 0
 */
#ifndef XNV_EX_MAGLEV_H
#define XNV_EX_MAGLEV_H

#include <stdint.h>

#define MAGLEV_NONE UINT32_MAX

struct maglev {
	uint32_t size;		/* M: a prime */
	uint32_t n;		/* backends in the table */
	uint32_t *table;	/* entry -> backend index, or MAGLEV_NONE */
};

/** @return 1 if @p n is prime. */
int maglev_is_prime(uint32_t n);

/** A table of @p size entries (a prime, >= 3).  @return 0, -EINVAL,
 *  -ENOMEM. */
int maglev_init(struct maglev *m, uint32_t size);

/** Fill the table for @p n backends with identities @p ids (index i in
 *  the table means ids[i]).  @return 0, or -EINVAL when n > size. */
int maglev_build(struct maglev *m, const uint64_t *ids, uint32_t n);

/** @return the backend index of a flow hash. */
static inline uint32_t
maglev_lookup(const struct maglev *m, uint64_t hash)
{
	return m->table[hash % m->size];
}

void maglev_free(struct maglev *m);

#endif /* XNV_EX_MAGLEV_H */

/* SPDX-License-Identifier: BSD-3-Clause */
/* Replica slots and rendezvous bucket table: see service_table.h. */
#include <string.h>

#include "service_table.h"

_Static_assert((XNV_BUCKETS & (XNV_BUCKETS - 1)) == 0,
	       "XNV_BUCKETS is a power of two (xnv_service_owner masks)");

/* Rendezvous score of (bucket, slot).  A CRC alone is linear (the score
 * would be F(bucket) ^ G(slot), so ownership would hang on one or two bits
 * and split buckets 128/64/64 over 3 slots); murmur3's finaliser mixes. */
static inline uint32_t
score(uint32_t bucket, uint32_t slot)
{
	uint32_t h = bucket * 0x9e3779b1u ^ (slot + 1) * 0x85ebca77u;

	h ^= h >> 16;
	h *= 0x85ebca6bu;
	h ^= h >> 13;
	h *= 0xc2b2ae35u;
	h ^= h >> 16;
	return h;
}

void
xnv_service_rebuild(struct xnv_service *s)
{
	uint32_t b, best;
	uint16_t i;

	for (b = 0; b < XNV_BUCKETS; b++) {
		s->bucket[b] = XNV_NF_NONE;
		best = 0;
		for (i = 0; i < XNV_MAX_INSTANCES; i++) {
			uint32_t sc;

			if (s->slot_nf[i] == XNV_NF_NONE)
				continue;
			sc = score(b, i);
			if (s->bucket[b] == XNV_NF_NONE || sc > best) {
				best = sc;
				s->bucket[b] = s->slot_nf[i];
			}
		}
	}
}

void
xnv_service_init(struct xnv_service *s)
{
	memset(s->slot_nf, 0xff, sizeof(s->slot_nf));
	xnv_service_rebuild(s);
}

int
xnv_service_free_slot(const struct xnv_service *s)
{
	int slot;

	for (slot = 0; slot < XNV_MAX_INSTANCES; slot++)
		if (s->slot_nf[slot] == XNV_NF_NONE)
			return slot;
	return -1;
}

void
xnv_service_join(struct xnv_service *s, int slot, uint16_t nf)
{
	s->live[s->n_live++] = nf;
	s->slot_nf[slot] = nf;
	s->ever_live = 1;
	xnv_service_rebuild(s);
}

void
xnv_service_leave(struct xnv_service *s, int slot, uint16_t nf)
{
	xnv_ids_remove(s->live, &s->n_live, nf);
	s->slot_nf[slot] = XNV_NF_NONE;
	xnv_service_rebuild(s);
}

void
xnv_ids_remove(uint16_t *list, uint16_t *n, uint16_t id)
{
	uint16_t i;

	for (i = 0; i < *n; i++)
		if (list[i] == id) {
			memmove(&list[i], &list[i + 1],
				(size_t)(*n - i - 1) * sizeof(list[0]));
			(*n)--;
			return;
		}
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The replicas of a service and who owns which flow bucket, without DPDK
 * (tests/unit/test_service_table.c).  Each flow hashes to one of
 * XNV_BUCKETS buckets; each bucket belongs to the live instance with the
 * highest rendezvous score for (bucket, instance slot).  So a flow stays
 * on one replica while the set is stable, only the departed replica's
 * flows move when one leaves, and a replica that comes back in the same
 * slot gets them back.  The pick itself (and spill) is service.c's.
 */
#ifndef XNV_SERVICE_TABLE_H
#define XNV_SERVICE_TABLE_H

#include <stdint.h>

#include "sizes.h"

struct xnv_service {
	uint16_t n_live;
	uint16_t live[XNV_MAX_INSTANCES];	/* NF ids, in joining order */
	uint16_t slot_nf[XNV_MAX_INSTANCES];	/* instance slot -> NF id */
	uint16_t bucket[XNV_BUCKETS];		/* flow bucket -> NF id */
	uint8_t ever_live;
	uint64_t picks_affinity, picks_spill, no_instance;
};

/** No instance in any slot: every bucket is XNV_NF_NONE. */
void xnv_service_init(struct xnv_service *s);

/** The lowest free instance slot, -1 if all are taken. */
int xnv_service_free_slot(const struct xnv_service *s);

/** NF @p nf is live in instance slot @p slot (free): buckets move to it. */
void xnv_service_join(struct xnv_service *s, int slot, uint16_t nf);

/** NF @p nf in slot @p slot left: its buckets go to the others. */
void xnv_service_leave(struct xnv_service *s, int slot, uint16_t nf);

/** Bucket owners from the slots (join and leave call it). */
void xnv_service_rebuild(struct xnv_service *s);

/** The NF that owns flow hash @p hash's bucket (XNV_NF_NONE: none). */
static inline uint16_t
xnv_service_owner(const struct xnv_service *s, uint32_t hash)
{
	return s->bucket[hash & (XNV_BUCKETS - 1)];
}

/** Remove @p id from @p list of @p *n ids, keeping the others' order. */
void xnv_ids_remove(uint16_t *list, uint16_t *n, uint16_t id);

#endif /* XNV_SERVICE_TABLE_H */

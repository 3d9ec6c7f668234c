/* SPDX-License-Identifier: BSD-3-Clause */
/* Replicas of a service: the pick on the data path (service.c); their
 * slots and bucket table are service_table.h's. */
#ifndef XNV_SERVICE_H
#define XNV_SERVICE_H

#include <stdint.h>

#include "service_table.h"

struct xnv_core;
struct xnv_nfrec;
struct rte_mbuf;

void xnv_services_init(struct xnv_core *c);
/** The replica of @p service for @p m (its flow's, or the least busy
 *  one when that is too full: spill), NULL if none is live.  Reuses
 *  pv->hash when set (flow.c, the NIC). */
struct xnv_nfrec *xnv_service_pick(struct xnv_core *c, uint16_t service,
				   struct rte_mbuf *m);

#endif /* XNV_SERVICE_H */

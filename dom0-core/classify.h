/* SPDX-License-Identifier: BSD-3-Clause */
/* The flow hash that keeps a flow on one replica of a service. */
#ifndef XNV_CLASSIFY_H
#define XNV_CLASSIFY_H

#include <stdint.h>

#include <rte_mbuf.h>

#include "flow_key.h"

/** Parse @p m's headers into @p k (rules: flow_key.h). */
static inline enum xnv_key_kind
xnv_flow_key(const struct rte_mbuf *m, struct xnv_flow_key *k)
{
	return xnv_flow_key_parse(rte_pktmbuf_mtod(m, const uint8_t *),
			     rte_pktmbuf_data_len(m), k);
}

/** Non-zero hash of a key @p k of kind @p kind: of its 5-tuple, or of
 *  its ethertype if not IP. */
uint32_t xnv_flow_key_hash(const struct xnv_flow_key *k,
			   enum xnv_key_kind kind);

/** xnv_flow_key_hash() of @p m's key. */
uint32_t xnv_flow_hash(const struct rte_mbuf *m);

#endif

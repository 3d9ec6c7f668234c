/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Flow hash over the 5-tuple (IPv4 / IPv6, TCP / UDP ports when present
 * and the packet is not a fragment).  Used to keep one flow on one replica
 * of a service.  The key comes from flow_key.h's parser; the hash reads
 * the key, never the packet, so every load is aligned.
 */
#include <rte_mbuf.h>

#include "classify.h"

uint32_t
xnv_flow_hash(const struct rte_mbuf *m)
{
	struct xnv_flow_key k;

	return xnv_flow_key_hash(&k, xnv_flow_key(m, &k));
}

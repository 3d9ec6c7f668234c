/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Flow hash over the 5-tuple (IPv4 / IPv6, TCP / UDP ports when present
 * and the packet is not a fragment).  Used to keep one flow on one replica
 * of a service.  The key comes from flow_key.h's parser; the hash reads
 * the key, never the packet, so every load is aligned.
 */
#include <string.h>

#include <rte_hash_crc.h>
#include <rte_mbuf.h>

#include "classify.h"

/* Inlined into both callers: the per-packet hash pays no call. */
static inline uint32_t
key_hash(const struct xnv_flow_key *k, enum xnv_key_kind kind)
{
	uint32_t h = 0x9e3779b9u, a;

	if (kind == XNV_KEY_OTHER) {
		h = rte_hash_crc_2byte(k->ethertype, h);
		return h != 0 ? h : 1;
	}
	if (k->v6) {
		/* src + dst: the key's first 32 bytes */
		h = rte_hash_crc(k, sizeof(k->src) + sizeof(k->dst), h);
	} else {
		memcpy(&a, k->src, sizeof(a));
		h = rte_hash_crc_4byte(a, h);
		memcpy(&a, k->dst, sizeof(a));
		h = rte_hash_crc_4byte(a, h);
	}
	h = rte_hash_crc_1byte(k->proto, h);
	if (kind == XNV_KEY_PORTS) {
		/* sport and dport, as they were on the wire */
		memcpy(&a, &k->sport, sizeof(a));
		h = rte_hash_crc_4byte(a, h);
	}
	return h != 0 ? h : 1;
}

uint32_t
xnv_flow_key_hash(const struct xnv_flow_key *k, enum xnv_key_kind kind)
{
	return key_hash(k, kind);
}

uint32_t
xnv_flow_hash(const struct rte_mbuf *m)
{
	struct xnv_flow_key k;

	return key_hash(&k, xnv_flow_key(m, &k));
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Flow hash over the 5-tuple (IPv4 / IPv6, TCP / UDP ports when present
 * and the packet is not a fragment).  Used to keep one flow on one replica
 * of a service.  The key comes from flow_key.h's parser; the hash reads
 * the key, never the packet, so every load is aligned.
 */
#include <string.h>

#include <rte_byteorder.h>
#include <rte_hash_crc.h>
#include <rte_mbuf.h>

#include "classify.h"

uint32_t
xnv_flow_key_hash(const struct xnv_flow_key *k, enum xnv_key_kind kind)
{
	uint32_t h = 0x9e3779b9u, a;
	uint16_t ports[2];

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
		/* The ports as they were on the wire. */
		ports[0] = rte_cpu_to_be_16(k->sport);
		ports[1] = rte_cpu_to_be_16(k->dport);
		memcpy(&a, ports, sizeof(a));
		h = rte_hash_crc_4byte(a, h);
	}
	return h != 0 ? h : 1;
}

uint32_t
xnv_flow_hash(const struct rte_mbuf *m)
{
	struct xnv_flow_key k;

	return xnv_flow_key_hash(&k, xnv_flow_key(m, &k));
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* The flow hash that keeps a flow on one replica of a service. */
#ifndef XNV_CLASSIFY_H
#define XNV_CLASSIFY_H

#include <stdint.h>
#include <string.h>


#include <nmmintrin.h>
#include <rte_mbuf.h>

#include "flow_key.h"

/** Parse @p m's headers into @p k (rules: flow_key.h). */
static inline enum xnv_key_kind
xnv_flow_key(const struct rte_mbuf *m, struct xnv_flow_key *k)
{
	return xnv_flow_key_parse(rte_pktmbuf_mtod(m, const uint8_t *),
			     rte_pktmbuf_data_len(m), k);
}

/** Non-zero hash of an IP key: @p addrs, its addresses folded into one
 *  word (IPv4: source | destination << 32), and @p w4, xnv_key_words()'s
 *  fifth word (only ports and protocol are taken).  Two CRC32-C steps of
 *  8 bytes: the data path hashes every packet when flow rules are in
 *  force (flow_path.c), so it is inline and short.  SSE4.2, as DPDK's
 *  build flags give. */
static inline uint32_t
xnv_key_ip_hash(uint64_t addrs, uint64_t w4)
{
	uint32_t h = (uint32_t)_mm_crc32_u64(0x9e3779b9u, addrs);

	/* ports and proto: the word's low 40 bits */
	h = (uint32_t)_mm_crc32_u64(h, w4 & 0xffffffffffull);
	return h != 0 ? h : 1;
}

/** Non-zero hash of a key in words @p w (flow_key.h's xnv_key_words())
 *  of kind @p kind: xnv_key_ip_hash() with the addresses folded (IPv6:
 *  each address's halves, then the destination's turned by 32 bits), or
 *  of its ethertype if not IP. */
static inline uint32_t
xnv_key_words_hash(const uint64_t *w, enum xnv_key_kind kind)
{
	uint64_t d = w[2] ^ w[3];
	uint32_t h;

	if (kind == XNV_KEY_OTHER) {
		h = _mm_crc32_u16(0x9e3779b9u, (uint16_t)(w[4] >> 48));
		return h != 0 ? h : 1;
	}
	return xnv_key_ip_hash(w[0] ^ w[1] ^ (d << 32 | d >> 32), w[4]);
}

/** xnv_key_words_hash() of key @p k. */
static inline uint32_t
xnv_flow_key_hash(const struct xnv_flow_key *k, enum xnv_key_kind kind)
{
	uint64_t w[XNV_KEY_WORDS];

	memcpy(w, k, sizeof(w));
	return xnv_key_words_hash(w, kind);
}

/** xnv_flow_key_hash() of @p m's key. */
uint32_t xnv_flow_hash(const struct rte_mbuf *m);

#endif

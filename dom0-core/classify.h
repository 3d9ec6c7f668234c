/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef XNV_CLASSIFY_H
#define XNV_CLASSIFY_H

#include <stdint.h>

struct rte_mbuf;

/** Non-zero hash of the packet's 5-tuple (or of its ethertype if not IP). */
uint32_t xnv_flow_hash(const struct rte_mbuf *m);

#endif

/* SPDX-License-Identifier: BSD-3-Clause */
/* How many of each thing the core holds (no DPDK). */
#ifndef XNV_SIZES_H
#define XNV_SIZES_H

#include "config.h"

#define XNV_MAX_NFS        128
#define XNV_MAX_POOLS      (XNV_MAX_GROUPS + XNV_MAX_NFS)	/* groups', NFs' */
#define XNV_MAX_INSTANCES  16	/* live NFs per service */
#define XNV_MAX_FLOWS      4096	/* flow director rules */
#define XNV_MAX_CHAINS     (XNV_MAX_FLOWS + 256)	/* versions alive at once */
#define XNV_CHAIN_NONE     0xffff	/* NF-originated packets */
#define XNV_NF_NONE        0xffff
#define XNV_BUCKETS        256	/* flow buckets per service (power of 2) */

#endif /* XNV_SIZES_H */

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Flow rules compiled into DPDK's rte_acl: one set of tries per IP family,
 * built off the data path (a build of thousands of rules takes a while)
 * and then only read.  flow.c decides when to build and swaps sets.
 */
#ifndef XNV_FLOW_ACL_H
#define XNV_FLOW_ACL_H

#include <stddef.h>
#include <stdint.h>

#include "flow_key.h"
#include "flow_rule.h"

struct xnv_acl;

/** Compile @p n rules, best first: where several match a packet,
 *  rules[i] with the lowest i wins.  A packet matching rules[i] is
 *  classified as @p ids[i] (non-zero).  @return the set, or NULL with
 *  the reason in @p err. */
struct xnv_acl *xnv_acl_build(const struct xnv_flow_rule *const *rules,
			      const uint32_t *ids, unsigned n, char *err,
			      size_t errlen);

void xnv_acl_free(struct xnv_acl *a);

/** Contexts the rules of family IPv4 (@p v6 0) or IPv6 took: more than
 *  one when rte_acl refused them whole (flow_acl.c). */
unsigned xnv_acl_parts(const struct xnv_acl *a, int v6);

/** For each of @p n packets that came in on port @p in_port (keys @p k,
 *  kinds @p kind), the id of the best rule that matches, 0 if none. */
void xnv_acl_classify(const struct xnv_acl *a, const struct xnv_flow_key *k,
		      const uint8_t *kind, unsigned n, unsigned in_port,
		      uint32_t *ids);

#endif /* XNV_FLOW_ACL_H */

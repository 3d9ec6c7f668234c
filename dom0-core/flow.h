/* SPDX-License-Identifier: BSD-3-Clause */
/* Flow director: exact 5-tuple rules -> chain versions (flow.c). */
#ifndef XNV_FLOW_H
#define XNV_FLOW_H

#include <stddef.h>
#include <stdint.h>

struct xnv_core;
struct xnv_flows;
struct rte_mbuf;

int xnv_flows_create(struct xnv_core *c);
void xnv_flows_destroy(struct xnv_core *c);
unsigned xnv_flows_count(const struct xnv_core *c);
void xnv_flows_classify(struct xnv_core *c, struct rte_mbuf **m, unsigned n,
			uint16_t *chain);
int xnv_flow_add(struct xnv_core *c, const char *spec, char *err,
		 size_t errlen);
int xnv_flow_del(struct xnv_core *c, uint32_t id, char *err, size_t errlen);
struct xnv_flow_match {
	char src[46], dst[46];		/* INET6_ADDRSTRLEN */
	uint8_t proto;
	uint16_t sport, dport;
};
int xnv_flow_exists(const struct xnv_core *c, uint32_t id);
int xnv_flow_get(const struct xnv_core *c, uint32_t id,
		 struct xnv_flow_match *m, uint16_t *chain, uint64_t *hits);

#endif /* XNV_FLOW_H */

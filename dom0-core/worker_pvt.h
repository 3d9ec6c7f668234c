/* SPDX-License-Identifier: BSD-3-Clause */
/* Between worker.c and worker_port.c only (worker.h is the module's). */
#ifndef XNV_WORKER_PVT_H
#define XNV_WORKER_PVT_H

#include <stdint.h>

struct xnv_core;
struct xnv_worker;

/* Worker @p w's pass over its rx queue of port @p idx.  @return work. */
unsigned xnv_worker_rx_port(struct xnv_core *c, struct xnv_worker *w,
			    uint16_t idx, uint64_t now);
/* What stopped worker @p w still held, dropped as shutdown. */
void xnv_worker_drain(struct xnv_worker *w);

#endif /* XNV_WORKER_PVT_H */

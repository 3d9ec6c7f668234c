/* SPDX-License-Identifier: BSD-3-Clause */
/* The core's ports: state, open and close, rx start (port.c). */
#ifndef XNV_PORT_H
#define XNV_PORT_H

#include <stddef.h>
#include <stdint.h>

#include "datapath.h"
#include "latency.h"
#include "pace.h"

struct xnv_core;
struct xnv_port_drv;

struct xnv_port {
	uint16_t port_id;		/* DPDK port id */
	int started;
	int rx_on;			/* polled for rx */
	int multiseg_said;		/* a frame above buf_size logged */
	int vlan_strip;			/* driver asked to strip: tags put
					 * back on rx (datapath.c) */
	uint64_t link_up;		/* link state last read: 1 up */
	uint64_t link_changes;		/* changes seen since start */
	uint64_t link_tsc;		/* when link_up last changed */
	const struct xnv_port_drv *drv;	/* its driver's hooks, or NULL */
	uint16_t n_rxq, n_txq;		/* queues: worker w polls rx queue w
					 * and sends on tx queue w when
					 * w < n (worker.h) */
	struct xnv_pending pend;
	uint64_t rx, tx, tx_drop;
	uint64_t nf_quota;		/* its packets dropped: NF at quota */
	struct xnv_pace pace;		/* [port] rx_rate */
	struct xnv_lat *lat;		/* [core] latency: of packets sent,
					 * [w] by worker w (latency.h) */
	uint8_t rx_intr;		/* bit w: rx queue w has an interrupt,
					 * for worker w's port epoll set
					 * (port_intr.c) */
	uint64_t rx_wakes;		/* sleeps its rx interrupts ended */
};

int xnv_port_open(struct xnv_core *c, uint16_t idx, char *err, size_t errlen);
void xnv_port_close(struct xnv_core *c, uint16_t idx);
void xnv_update_rx_gates(struct xnv_core *c);
/* Every XNV_LINK_POLL_MS of @p now: each port's link read, a change
 * logged and counted (link_changes, link_up). */
#define XNV_LINK_POLL_MS 100
void xnv_port_link_watch(struct xnv_core *c, uint64_t now);

/* Rx interrupts that wake an idle worker (port_intr.c).  wanted: whether
 * port @p idx asks for them (its device configured with intr_conf.rxq);
 * setup after its start: each queue's interrupt listened to by its
 * worker if the device has them, and a few words for the port's log
 * line; close before its stop.  The calling worker's own queues: arm
 * before it sleeps (0: a queue holds packets already, do not sleep),
 * disarm after; woken: its port epoll set fired (counted).  all: every
 * port queue worker @p w polls has an interrupt. */
struct xnv_worker;
int xnv_port_intr_wanted(const struct xnv_core *c, uint16_t idx);
const char *xnv_port_intr_setup(struct xnv_core *c, uint16_t idx);
void xnv_port_intr_close(struct xnv_core *c, uint16_t idx);
int xnv_ports_intr_arm(struct xnv_core *c);
void xnv_ports_intr_disarm(struct xnv_core *c);
void xnv_ports_intr_woken(struct xnv_core *c);
int xnv_ports_intr_all(const struct xnv_core *c, const struct xnv_worker *w);

#endif /* XNV_PORT_H */

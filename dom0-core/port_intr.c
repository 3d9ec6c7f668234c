/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Rx interrupts end an idle worker's sleep (port.h, doorbell.h, worker.h).
 *
 * With --idle-sleep doorbell an idle worker waits in epoll on its NFs'
 * doorbells; a port without a doorbell is looked at when that wait times
 * out (--idle-sleep-max).  A port whose device has rx interrupts (DPDK
 * rte_eth_dev_rx_intr_*: a NIC under vfio-pci, net_tap; not net_pcap,
 * net_null, net_memif or net_af_packet in DPDK 22.11) wakes the worker
 * that polls the queue, as an NF's kick does:
 *
 *   - at open, its device is configured with intr_conf.rxq (port.c) and
 *     the interrupt of each rx queue w tried, in the port epoll set of
 *     worker w (one fd of that worker's set once one of its queues has an
 *     interrupt: xnv_bells_listen_ports);
 *   - before each sleep of worker w the interrupt of queue w is put in
 *     its port set and enabled (a device whose event fd is readable
 *     while packets wait needs nothing: -ENOTSUP); a queue the driver
 *     says holds packets already cancels the sleep: enabled after they
 *     came, the interrupt would not fire for them;
 *   - after the sleep it is disabled and taken out of the set again, so
 *     the busy loop takes no interrupts and a device that cannot disable
 *     its own (net_tap) wakes nobody while the worker is awake; what woke
 *     it is read by DPDK's rte_epoll_wait() (it knows each kind of
 *     interrupt's event fd) and counted in the port's rx_wakes.
 *
 * Not armed for a port whose rx has not started (no chain yet) or that
 * is paced (rx_rate, also set live: its packets wait on purpose and would
 * end every sleep; it has one rx queue, worker 0's), nor with [port]
 * rx_interrupt = off.
 */
#include <errno.h>
#include <stdint.h>

#include <rte_epoll.h>
#include <rte_ethdev.h>
#include <rte_log.h>

#include "core.h"
#include "doorbell.h"
#include "port.h"
#include "port_drv.h"

/* rte_eth_dev_rx_intr_ctl_q() logs "Rx Intr handle unset" at ERR for a
 * device without rx interrupts: here a question, not an error. */
static int
intr_ctl_quiet(uint16_t pid, uint16_t q, int epfd, int op, void *data)
{
	int lt = rte_log_register("lib.ethdev");
	int lvl = lt >= 0 ? rte_log_get_level(lt) : -1;
	int rc;

	if (lvl >= 0)
		(void)rte_log_set_level((uint32_t)lt, RTE_LOG_CRIT);
	rc = rte_eth_dev_rx_intr_ctl_q(pid, q, epfd, op, data);
	if (lvl >= 0)
		(void)rte_log_set_level((uint32_t)lt, (uint32_t)lvl);
	return rc;
}

int
xnv_port_intr_wanted(const struct xnv_core *c, uint16_t idx)
{
	const struct xnv_port_cfg *pc = &c->cfg.ports[idx];
	const struct xnv_port_drv *drv = c->ports[idx].drv;

	if (drv != NULL && drv->no_rx_intr)
		return 0;
	return pc->rx_intr && c->idle == GNTS_IDLE_DOORBELL &&
	       c->port_epfd >= 0;
}

/* Port @p idx's queue-@p q interrupt into (@p on) or out of worker
 * @p q's port epoll set, on every sleep of a port known to have one
 * (setup asked quietly): 0 or what DPDK said. */
static int
listen_port(struct xnv_core *c, uint16_t idx, uint16_t q, int on)
{
	return rte_eth_dev_rx_intr_ctl_q(c->ports[idx].port_id, q,
					 c->workers.w[q]->port_epfd,
					 on ? RTE_INTR_EVENT_ADD :
					 RTE_INTR_EVENT_DEL,
					 (void *)(uintptr_t)idx);
}

/* Queue @p q of port @p idx has an interrupt that wakes worker @p q?
 * 0 or -1. */
static int
queue_setup(struct xnv_core *c, uint16_t idx, uint16_t q)
{
	struct xnv_port *p = &c->ports[idx];
	struct xnv_worker *w = c->workers.w[q];

	if (intr_ctl_quiet(p->port_id, q, w->port_epfd, RTE_INTR_EVENT_ADD,
			   (void *)(uintptr_t)idx) != 0)
		return -1;
	(void)listen_port(c, idx, q, 0);	/* listened to while asleep */
	if (xnv_bells_listen_ports(w) != 0)
		return -1;
	(void)rte_eth_dev_rx_intr_disable(p->port_id, q);
	p->rx_intr |= (uint8_t)(1u << q);
	return 0;
}

const char *
xnv_port_intr_setup(struct xnv_core *c, uint16_t idx)
{
	struct xnv_port *p = &c->ports[idx];
	uint16_t q, n = RTE_MIN(p->n_rxq, c->workers.made);

	p->rx_intr = 0;
	if (!xnv_port_intr_wanted(c, idx))
		return "";
	for (q = 0; q < n; q++)
		if (queue_setup(c, idx, q) != 0)
			break;
	if (p->rx_intr == 0)
		return ", no rx interrupt (polled when idle)";
	if (q < n)		/* queue 0's only, say */
		return ", rx interrupt of queue 0 wakes the idle core (not "
		       "the others': polled when idle)";
	return n > 1 ? ", rx interrupts wake the idle workers" :
	       ", rx interrupt wakes the idle core";
}

void
xnv_port_intr_close(struct xnv_core *c, uint16_t idx)
{
	c->ports[idx].rx_intr = 0;
}

void
xnv_ports_intr_disarm(struct xnv_core *c)
{
	struct xnv_worker *w = xnv_worker_self();
	uint16_t i;

	if (!w->port_ep_listened)	/* no queue of it has one: none armed */
		return;
	for (i = 0; i < c->cfg.n_ports; i++) {
		struct xnv_port *p = &c->ports[i];

		if (!w->intr_armed[i])
			continue;
		(void)rte_eth_dev_rx_intr_disable(p->port_id, w->id);
		(void)listen_port(c, i, w->id, 0);
		w->intr_armed[i] = 0;
	}
}

int
xnv_ports_intr_arm(struct xnv_core *c)
{
	struct xnv_worker *w = xnv_worker_self();
	uint16_t i;

	if (!w->port_ep_listened)	/* no queue of it has one */
		return 1;
	for (i = 0; i < c->cfg.n_ports; i++) {
		struct xnv_port *p = &c->ports[i];

		/* Not polled for rx, or paced (its packets wait on
		 * purpose: they would end every sleep). */
		if (!(p->rx_intr & (1u << w->id)) || !p->rx_on ||
		    p->pace.cost != 0)
			continue;
		/* In the set only while armed: a device whose interrupt
		 * cannot be disabled (net_tap: -ENOTSUP; its fd is readable
		 * while packets wait, and the add reports them) wakes
		 * nobody otherwise. */
		if (listen_port(c, i, w->id, 1) != 0)
			continue;
		(void)rte_eth_dev_rx_intr_enable(p->port_id, w->id);
		w->intr_armed[i] = 1;
		/* Packets came before the interrupt was on: no sleep. */
		if (rte_eth_rx_queue_count(p->port_id, w->id) > 0) {
			xnv_ports_intr_disarm(c);
			return 0;
		}
	}
	return 1;
}

int
xnv_ports_intr_all(const struct xnv_core *c, const struct xnv_worker *w)
{
	uint16_t i;

	for (i = 0; i < c->cfg.n_ports; i++) {
		const struct xnv_port *p = &c->ports[i];

		if (p->rx_on && p->started && w->id < p->n_rxq &&
		    !(p->rx_intr & (1u << w->id)))
			return 0;
	}
	return 1;
}

void
xnv_ports_intr_woken(struct xnv_core *c)
{
	struct xnv_worker *w = xnv_worker_self();
	struct rte_epoll_event ev[16];
	int n, k;

	n = rte_epoll_wait(w->port_epfd, ev, RTE_DIM(ev), 0);
	for (k = 0; k < n; k++) {
		uintptr_t i = (uintptr_t)ev[k].epdata.data;

		if (i < c->cfg.n_ports)
			xnv_count(&w->cnt.rx_wakes[i], 1);
	}
}

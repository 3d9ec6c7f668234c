/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What one kind of port device needs beyond the generic ethdev calls of
 * port.c: a check of its devargs before the probe, its rx offloads, what
 * its driver does not count, what to do while its link is down.  One
 * table per driver (port_afpacket.c, port_memif.c), found by the device
 * name's prefix; a device no table names gets none of this.  Every hook
 * may be NULL.
 *
 * Usage (port.c):
 *	const struct xnv_port_drv *d = xnv_port_drv_find(pc->dev);
 *
 *	if (d != NULL && d->pre_probe != NULL &&
 *	    (rc = d->pre_probe(c, idx, err, errlen)) < 0)
 *		return rc;
 */
#ifndef XNV_PORT_DRV_H
#define XNV_PORT_DRV_H

#include <stddef.h>
#include <stdint.h>

struct rte_eth_conf;
struct rte_eth_dev_info;
struct xnv_core;
struct xnv_port_counters;

struct xnv_port_drv {
	const char *prefix;	/* device names it serves: "net_memif" */
	/* One rx and one tx queue whatever [core] workers says: the device
	 * is stopped and started again by link_tick() on the main lcore,
	 * which no other worker's queue may see (and a memif peer decides
	 * its queues itself). */
	int one_queue;
	/* Its PMD has no rx interrupts (DPDK 22.11): the device is not
	 * configured for them (port_intr.c), so a start that fails for
	 * another reason (a memif server not there yet) is not tried
	 * twice. */
	int no_rx_intr;
	/* Before the device is probed: its devargs and what they name
	 * (an interface, a socket file) checked.  0, or -errno with one
	 * line in @p err. */
	int (*pre_probe)(struct xnv_core *c, uint16_t idx, char *err,
			 size_t errlen);
	/* The port's configuration before rte_eth_dev_configure(). */
	void (*configure)(struct xnv_core *c, uint16_t idx,
			  const struct rte_eth_dev_info *info,
			  struct rte_eth_conf *conf);
	/* After the device is set up and started (or its start failed
	 * with @p rc): 0 to go on, or -errno with one line in @p err. */
	int (*started)(struct xnv_core *c, uint16_t idx, int rc, char *err,
		       size_t errlen);
	/* Adds to @p out what the driver's own stats leave out. */
	void (*counters)(const struct xnv_core *c, uint16_t idx,
			 struct xnv_port_counters *out);
	/* Every link watch (port.h, XNV_LINK_POLL_MS) after the link was
	 * read: @p up as read, @p since when it last changed (TSC). */
	void (*link_tick)(struct xnv_core *c, uint16_t idx, uint64_t up,
			  uint64_t since, uint64_t now);
	/* Before the port is stopped and closed. */
	void (*close)(struct xnv_core *c, uint16_t idx);
};

/* The table of the driver of device string @p dev ("net_memif0,..."), or
 * NULL. */
const struct xnv_port_drv *xnv_port_drv_find(const char *dev);

extern const struct xnv_port_drv xnv_port_drv_afpacket;
extern const struct xnv_port_drv xnv_port_drv_memif;

#endif /* XNV_PORT_DRV_H */

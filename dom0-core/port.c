/* SPDX-License-Identifier: BSD-3-Clause */
/* Ports: probe a vdev or PCI device from the config, one rx/tx queue;
 * when a port starts to receive (its chain ready). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_bus.h>
#include <rte_dev.h>
#include <rte_errno.h>
#include <rte_ethdev.h>

#include "core.h"
#include "port_drv.h"

/* 1 if the link of @p pid is up (its text in @p s, if given), else 0 */
static uint64_t
link_read(uint16_t pid, char *s, size_t len)
{
	struct rte_eth_link l;

	memset(&l, 0, sizeof(l));
	if (rte_eth_link_get_nowait(pid, &l) != 0)
		return 0;
	if (s != NULL && l.link_status == RTE_ETH_LINK_UP)
		snprintf(s, len, "up, %s%s", l.link_speed ==
			 RTE_ETH_SPEED_NUM_UNKNOWN ? "speed unknown" :
			 rte_eth_link_speed_to_str(l.link_speed),
			 l.link_duplex == RTE_ETH_LINK_FULL_DUPLEX ?
			 " full-duplex" : " half-duplex");
	else if (s != NULL)
		snprintf(s, len, "down");
	return l.link_status == RTE_ETH_LINK_UP;
}

/*
 * One rx and one tx queue per worker (worker.h), as many as the device
 * has: a worker past a port's rx queues does not poll it, one past its
 * tx queues hands what it sends there to the first worker.  A paced port
 * ([port] rx_rate) keeps one rx queue: its pacing is one budget; a
 * driver may keep one of each (port_drv.h, one_queue: memif).  Several
 * rx queues spread flows by RSS where the device hashes (each flow on
 * one queue, so on one worker: its order kept); a device without RSS
 * (net_pcap: one queue per rx_pcap file) has them fed as it decides.
 */
static void
queues(struct xnv_core *c, uint16_t idx, const struct rte_eth_dev_info *info,
       struct rte_eth_conf *conf)
{
	struct xnv_port *p = &c->ports[idx];
	uint16_t n = (uint16_t)c->cfg.workers;
	uint64_t rss = info->flow_type_rss_offloads &
		       (RTE_ETH_RSS_IP | RTE_ETH_RSS_TCP | RTE_ETH_RSS_UDP);

	p->n_rxq = RTE_MAX(RTE_MIN(n, info->max_rx_queues), 1);
	p->n_txq = RTE_MAX(RTE_MIN(n, info->max_tx_queues), 1);
	if (c->cfg.ports[idx].rx_rate != 0)
		p->n_rxq = 1;
	if (p->drv != NULL && p->drv->one_queue)
		p->n_rxq = p->n_txq = 1;
	if (p->n_rxq > 1 && rss != 0) {
		conf->rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
		conf->rx_adv_conf.rss_conf.rss_hf = rss;
	}
}

/* ", 2 rx queues (RSS), 2 tx queues": only with several workers. */
static const char *
queues_text(const struct xnv_core *c, uint16_t idx,
	    const struct rte_eth_conf *conf)
{
	static char s[64];
	const struct xnv_port *p = &c->ports[idx];

	if (c->cfg.workers <= 1)
		return "";
	snprintf(s, sizeof(s), ", %u rx queue%s%s, %u tx queue%s", p->n_rxq,
		 p->n_rxq == 1 ? "" : "s",
		 conf->rxmode.mq_mode == RTE_ETH_MQ_RX_RSS ? " (RSS)" : "",
		 p->n_txq, p->n_txq == 1 ? "" : "s");
	return s;
}

/* Configure port @p idx's device with @p conf, set its queues up and
 * start it: 0 or what the failing ethdev call returned. */
static int
setup_start(struct xnv_core *c, uint16_t idx, const struct rte_eth_conf *conf)
{
	const struct xnv_port_cfg *pc = &c->cfg.ports[idx];
	struct xnv_port *p = &c->ports[idx];
	uint16_t pid = p->port_id, q, nb_rx = pc->rx_desc, nb_tx = pc->tx_desc;
	int rc;

	rc = rte_eth_dev_configure(pid, p->n_rxq, p->n_txq, conf);
	if (rc == 0)
		rc = rte_eth_dev_adjust_nb_rx_tx_desc(pid, &nb_rx, &nb_tx);
	for (q = 0; rc == 0 && q < p->n_rxq; q++)
		rc = rte_eth_rx_queue_setup(pid, q, nb_rx,
					    rte_eth_dev_socket_id(pid), NULL,
					    c->pools[pc->group].mp);
	for (q = 0; rc == 0 && q < p->n_txq; q++)
		rc = rte_eth_tx_queue_setup(pid, q, nb_tx,
					    rte_eth_dev_socket_id(pid), NULL);
	if (rc == 0)
		rc = rte_eth_dev_start(pid);
	return rc;
}

int
xnv_port_open(struct xnv_core *c, uint16_t idx, char *err, size_t errlen)
{
	const struct xnv_port_cfg *pc = &c->cfg.ports[idx];
	struct xnv_port *p = &c->ports[idx];
	struct rte_eth_conf conf;
	struct rte_eth_dev_info info;
	char devname[XNV_DEV_LEN];
	const char *intr;
	uint16_t pid;
	int rc;

	p->drv = xnv_port_drv_find(pc->dev);
	if (p->drv != NULL && p->drv->pre_probe != NULL &&
	    (rc = p->drv->pre_probe(c, idx, err, errlen)) < 0)
		return rc;
	snprintf(devname, sizeof(devname), "%s", pc->dev);
	devname[strcspn(devname, ",")] = '\0';
	if (rte_eth_dev_get_port_by_name(devname, &pid) != 0) {
		rc = rte_dev_probe(pc->dev);
		if (rc < 0 || rte_eth_dev_get_port_by_name(devname, &pid) != 0) {
			snprintf(err, errlen, "port %s: cannot probe device "
				 "'%s': %s (%s:%u; a vdev is net_DRIVERn[,key="
				 "value...], such as net_null0 or net_pcap0,"
				 "rx_pcap=in.pcap; a PCI device its address)",
				 pc->name, pc->dev, rc < 0 && rc != -EFAULT ?
				 rte_strerror(-rc) : "no such driver or device",
				 c->cfg.path, pc->line);
			return rc < 0 ? rc : -ENODEV;
		}
	}
	p->port_id = pid;
	rc = rte_eth_dev_info_get(pid, &info);
	if (rc != 0)
		goto fail;
	memset(&conf, 0, sizeof(conf));
	if (p->drv != NULL && p->drv->configure != NULL)
		p->drv->configure(c, idx, &info, &conf);
	p->vlan_strip = !!(conf.rxmode.offloads & RTE_ETH_RX_OFFLOAD_VLAN_STRIP);
	queues(c, idx, &info, &conf);
	conf.intr_conf.rxq = xnv_port_intr_wanted(c, idx) ? 1 : 0;
	rc = setup_start(c, idx, &conf);
	if (rc != 0 && conf.intr_conf.rxq) {
		XLOG(NOTICE, "port %s (%s): cannot start with rx interrupts "
		     "(%s): starting it without (polled when idle)\n",
		     pc->name, pc->dev, rte_strerror(rc < 0 ? -rc : rc));
		conf.intr_conf.rxq = 0;
		rc = setup_start(c, idx, &conf);
	}
	if (rc == 0)
		p->started = 1;
	if (p->drv != NULL && p->drv->started != NULL) {
		rc = p->drv->started(c, idx, rc, err, errlen);
		if (rc < 0) {
			xnv_port_close(c, idx);
			return rc;
		}
	}
	if (rc != 0)
		goto fail;
	p->link_up = link_read(pid, NULL, 0);
	p->link_tsc = rte_rdtsc();
	(void)rte_eth_promiscuous_enable(pid);
	intr = conf.intr_conf.rxq ? xnv_port_intr_setup(c, idx) : "";
	XLOG(INFO, "port %u %s: %s (driver %s), group %s, %s%s%s\n", idx,
	     pc->name, pc->dev, info.driver_name,
	     c->cfg.groups[pc->group].name,
	     pc->chain.n == 0 ? "tx only (no chain)" : "rx + tx",
	     queues_text(c, idx, &conf), intr);
	return 0;
fail:
	snprintf(err, errlen, "port %s (%s): setup failed: %s", pc->name,
		 pc->dev, rte_strerror(rc < 0 ? -rc : rc));
	xnv_port_close(c, idx);
	return rc < 0 ? rc : -rc;
}

void
xnv_port_close(struct xnv_core *c, uint16_t idx)
{
	struct xnv_port *p = &c->ports[idx];
	struct rte_eth_dev_info info;

	if (!rte_eth_dev_is_valid_port(p->port_id))
		return;
	if (p->drv != NULL && p->drv->close != NULL)
		p->drv->close(c, idx);
	xnv_port_intr_close(c, idx);
	if (p->started)
		(void)rte_eth_dev_stop(p->port_id);
	p->started = 0;
	/* Close flushes what the driver buffered (net_pcap's output file);
	 * removing the device releases the vdev. */
	if (rte_eth_dev_info_get(p->port_id, &info) == 0 && info.device) {
		(void)rte_eth_dev_close(p->port_id);
		(void)rte_dev_remove(info.device);
	}
	p->port_id = RTE_MAX_ETHPORTS;
}

/* Start rx on the ports whose chain is ready: every service of it has
 * had an NF (rx_start = chain-ready), or at once (immediately).  Once
 * every port with a chain receives, --idle-exit's clock may start. */
void
xnv_update_rx_gates(struct xnv_core *c)
{
	uint16_t i, s;
	int all = 1;

	for (i = 0; i < c->cfg.n_ports; i++) {
		const struct xnv_port_cfg *pc = &c->cfg.ports[i];
		int ready = 1;

		const struct xnv_chain *ch = &c->chains[c->port_chain[i]].ch;

		if (c->ports[i].rx_on)
			continue;
		if (pc->fabric) {	/* each arrival takes its hop's chain */
			c->ports[i].rx_on = 1;
			XLOG(INFO, "port %s: rx started (a fabric port)\n",
			     pc->name);
			continue;
		}
		if (ch->n == 0)
			continue;
		for (s = 0; pc->rx_when_ready && s < ch->n; s++)
			if (ch->s[s].kind == XNV_STEP_SERVICE &&
			    !c->services[ch->s[s].id].ever_live)
				ready = 0;
		all &= ready;
		if (ready) {
			c->ports[i].rx_on = 1;
			XLOG(INFO, "port %s: rx started%s\n", pc->name,
			     pc->rx_when_ready ? " (every service of its "
			     "chain has an NF)" : "");
		}
	}
	if (!all)
		c->rx_open_tsc = 0;
	else if (c->rx_open_tsc == 0)
		c->rx_open_tsc = rte_rdtsc();
}

void
xnv_port_link_watch(struct xnv_core *c, uint64_t now)
{
	char text[64];
	uint64_t up;
	uint16_t i;

	if (now - c->link_tsc < c->tsc_hz / 1000 * XNV_LINK_POLL_MS)
		return;
	c->link_tsc = now;
	for (i = 0; i < c->cfg.n_ports; i++) {
		struct xnv_port *p = &c->ports[i];

		if (!p->started) {	/* its driver may retry the start */
			if (p->drv != NULL && p->drv->link_tick != NULL)
				p->drv->link_tick(c, i, 0, p->link_tsc, now);
			continue;
		}
		up = link_read(p->port_id, text, sizeof(text));
		if (up != p->link_up) {
			p->link_up = up;
			p->link_changes++;
			p->link_tsc = now;
			XLOG(INFO, "port %s: link %s\n", c->cfg.ports[i].name,
			     text);
		}
		if (p->drv != NULL && p->drv->link_tick != NULL)
			p->drv->link_tick(c, i, up, p->link_tsc, now);
	}
}

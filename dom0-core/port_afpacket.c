/* SPDX-License-Identifier: BSD-3-Clause */
/* net_af_packet ports: what port.c's generic setup leaves out (port_drv.h). */
#include <rte_ethdev.h>

#include "core.h"
#include "port_drv.h"

/* The kernel hands an af_packet socket every frame with its outer VLAN
 * tag taken out (tp_vlan_tci).  Left to itself the driver puts it back
 * with rte_vlan_insert(), which refuses the core's external buffers
 * (one "Failed to reinsert VLAN tag" per frame, the tag lost); asked to
 * strip, it leaves the tag in vlan_tci, and the core's rx puts it back
 * (datapath.c, vlan_restore). */
static void
afp_configure(struct xnv_core *c, uint16_t idx,
	      const struct rte_eth_dev_info *info, struct rte_eth_conf *conf)
{
	(void)c;
	(void)idx;
	if (info->rx_offload_capa & RTE_ETH_RX_OFFLOAD_VLAN_STRIP)
		conf->rxmode.offloads |= RTE_ETH_RX_OFFLOAD_VLAN_STRIP;
}

const struct xnv_port_drv xnv_port_drv_afpacket = {
	.prefix = "net_af_packet",
	.configure = afp_configure,
};

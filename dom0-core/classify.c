/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Flow hash over the 5-tuple (IPv4 / IPv6, TCP / UDP ports when present
 * and the packet is not a fragment).  Used to keep one flow on one replica
 * of a service.  Reads only packet bytes the core received from a port,
 * before any NF has seen the buffer.
 */
#include <string.h>

#include <rte_byteorder.h>
#include <rte_ether.h>
#include <rte_hash_crc.h>
#include <rte_ip.h>
#include <rte_mbuf.h>

#include "classify.h"

uint32_t
xnv_flow_hash(const struct rte_mbuf *m)
{
	const uint8_t *p = rte_pktmbuf_mtod(m, const uint8_t *);
	uint32_t len = rte_pktmbuf_data_len(m), off = sizeof(struct rte_ether_hdr);
	uint32_t h = 0x9e3779b9u, l4 = 0;
	uint16_t et;
	uint8_t proto = 0;

	if (len < off)
		return h;
	et = rte_be_to_cpu_16(((const struct rte_ether_hdr *)p)->ether_type);
	if (et == RTE_ETHER_TYPE_VLAN && len >= off + 4) {
		et = rte_be_to_cpu_16(*(const uint16_t *)(p + off + 2));
		off += 4;
	}
	if (et == RTE_ETHER_TYPE_IPV4 && len >= off + sizeof(struct rte_ipv4_hdr)) {
		const struct rte_ipv4_hdr *ip = (const void *)(p + off);
		uint32_t ihl = (ip->version_ihl & 0xf) * 4u;

		h = rte_hash_crc_4byte(ip->src_addr, h);
		h = rte_hash_crc_4byte(ip->dst_addr, h);
		proto = ip->next_proto_id;
		/* Fragments (MF set or offset != 0) carry no ports. */
		if ((ip->fragment_offset & rte_cpu_to_be_16(
			RTE_IPV4_HDR_MF_FLAG | RTE_IPV4_HDR_OFFSET_MASK)) == 0 &&
		    ihl >= 20)
			l4 = off + ihl;
	} else if (et == RTE_ETHER_TYPE_IPV6 &&
		   len >= off + sizeof(struct rte_ipv6_hdr)) {
		const struct rte_ipv6_hdr *ip = (const void *)(p + off);

		h = rte_hash_crc(ip->src_addr, 32, h);	/* src + dst */
		proto = ip->proto;
		l4 = off + sizeof(*ip);
	} else {
		return rte_hash_crc_2byte(et, h);
	}
	h = rte_hash_crc_1byte(proto, h);
	if (l4 != 0 && (proto == IPPROTO_TCP || proto == IPPROTO_UDP) &&
	    len >= l4 + 4) {
		uint32_t ports;

		/* After a 14-byte Ethernet header the ports are only 2-byte
		 * aligned: copy (one load on x86) rather than cast. */
		memcpy(&ports, p + l4, sizeof(ports));
		h = rte_hash_crc_4byte(ports, h);
	}
	return h != 0 ? h : 1;
}

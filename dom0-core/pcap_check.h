/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The capture files a net_pcap port reads (rx_pcap=), checked before EAL
 * starts: DPDK's own failure to open one is an unhelpful probe error, and
 * it would read a capture of another link type as Ethernet.  No DPDK
 * (test_pcap_check).
 *
 * Usage:
 *	char err[256];
 *
 *	if (xnv_pcap_check_dev(port->dev, err, sizeof(err)) < 0)
 *		fprintf(stderr, "xnv-core: port %s: %s\n", port->name, err);
 */
#ifndef XNV_PCAP_CHECK_H
#define XNV_PCAP_CHECK_H

#include <stddef.h>
#include <stdint.h>

#define XNV_PCAP_HDR_LEN 24		/* the pcap file's global header */
#define XNV_PCAP_LINKTYPE_ETHERNET 1	/* DLT_EN10MB */

/**
 * Check the @p len first bytes of a pcap file (@p len may be short) for
 * a pcap magic number in either byte order (microsecond or nanosecond
 * timestamps) and an Ethernet link type.
 * @return 0, or -1 with one line in @p err saying what is wrong
 *         (without the file's name).
 */
int xnv_pcap_check_header(const uint8_t *h, size_t len, char *err,
			  size_t errlen);

/**
 * Check the pcap file at @p path: it can be read and its header passes
 * xnv_pcap_check_header().
 * @return 0, or -1 with one line in @p err naming the file.
 */
int xnv_pcap_check_file(const char *path, char *err, size_t errlen);

/**
 * Check every rx_pcap= file of a port's device string (net_pcap vdevs
 * only; other devices and tx_pcap= / rx_iface= are left alone).
 * @return 0, or -1 with one line in @p err ("rx_pcap FILE: ...").
 */
int xnv_pcap_check_dev(const char *dev, char *err, size_t errlen);

#endif /* XNV_PCAP_CHECK_H */

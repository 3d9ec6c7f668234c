/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What xnv-core checks after reading its config and before EAL starts:
 * nothing is probed, allocated or bound until these pass, so a mistake
 * costs one line and leaves no trace (main.c; --check-config runs the
 * config half).  No DPDK beyond rte_kvargs.
 *
 * Usage:
 *	if (xnv_preflight_config(&cfg, err, sizeof(err)) < 0 ||
 *	    xnv_preflight_start(&cfg, backend, stats_json, err,
 *				sizeof(err)) < 0)
 *		fprintf(stderr, "xnv-core: %s\n", err);
 */
#ifndef XNV_PREFLIGHT_H
#define XNV_PREFLIGHT_H

#include <stddef.h>

#include "config.h"

/**
 * What the config names outside itself: the kernel interfaces ports'
 * devargs name (config_devargs.h), each net_pcap port's rx_pcap= capture
 * (pcap_check.h).
 * @return 0, or -1 with one line in @p err naming the port.
 */
int xnv_preflight_config(const struct xnv_config *cfg, char *err,
			 size_t errlen);

/**
 * What this start needs: for a @p backend NFs connect to on cfg->socket
 * (NULL: host), no core listening there already (the line names its pid
 * when the socket says it) and the socket's directory there or makable;
 * for any backend, no other core starting on the same path at this
 * moment; and @p stats_json (NULL: none) writable.
 * @return 0, or -1 with one line in @p err.
 */
int xnv_preflight_start(const struct xnv_config *cfg, const char *backend,
			const char *stats_json, char *err, size_t errlen);

#endif /* XNV_PREFLIGHT_H */

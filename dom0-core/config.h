/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * xnv-core configuration: an INI file read with rte_cfgfile.
 *
 *   [core]
 *   socket = /run/xnv/xnv.sock  ; where NFs attach (host backend)
 *   ring_size = 1024            ; descriptors per NF ring, power of two
 *   burst = 64                  ; packets per burst, 1..256
 *   stall_timeout_ms = 500      ; a packet waiting this long for room in an
 *                               ; NF ring or a port is dropped (counted)
 *   spill_threshold = 75        ; % of a replica's rx ring above which its
 *                               ; flows' packets go to the least busy one
 *   error_budget = 1000         ; bad descriptors an NF may return within
 *                               ; one second before it is quarantined
 *                               ; (detached, buffers reclaimed); 0: never
 *   heartbeat_timeout_ms = 3000 ; an NF holding buffers whose heartbeat has
 *                               ; not moved this long is declared dead and
 *                               ; detached; 0: off.  Not lower than the
 *                               ; longest a busy host may leave a guest's
 *                               ; vCPU unscheduled: 1000 was seen to kill
 *                               ; healthy NFs on a loaded 2-CPU VM
 *   max_held = 0                ; buffers one NF may hold at once (rx
 *                               ; ring, hands, tx ring, free ring); a
 *                               ; packet for an NF at its quota is dropped
 *                               ; (counted: nf_quota), and its free ring is
 *                               ; not refilled past it.  0: derived per NF,
 *                               ; 2 x ring_size + its alloc_bufs + 256
 *                               ; (full rings, a burst in hand).  An NF
 *                               ; may ask for alloc_bufs up to ring_size,
 *                               ; and below max_held when that is set
 *   hoard_timeout_ms = 3000     ; an NF at its quota that returns no buffer
 *                               ; for this long is quarantined (detached,
 *                               ; buffers reclaimed); 0: off.  Like the
 *                               ; heartbeat timeout, not below what a busy
 *                               ; host may leave a guest unscheduled
 *   nf_pools = group            ; group: an NF's packets live in its trust
 *                               ; group's pool (zero copy in the group);
 *                               ; own: each NF gets a pool of its own of
 *                               ; its group's pool_bufs, and packets are
 *                               ; copied between pools (counted as the
 *                               ; group's copies).  The xen backend uses
 *                               ; own by itself under gntalloc (no
 *                               ; gntshare module)
 *   [group blue]                ; trust group: one packet pool each
 *   pool_bufs = 8192            ; buffers in the pool
 *   buf_size = 2176             ; bytes per buffer, 128 B headroom included
 *   [port in]                   ; a DPDK port, by name (index = order)
 *   dev = net_pcap0,rx_pcap=in.pcap   ; vdev devargs or a PCI address
 *   group = blue                ; trust group its packets land in
 *   chain = fwd-a -> fwd-b -> out     ; default chain: services, ports, drop
 *   rx_start = chain-ready      ; or "immediately"
 *   [service fwd-a]             ; a service NFs attach as
 *   id = 1                      ; optional; default: declaration order
 *
 * Without any [group] section there is one group named "0" with defaults.
 * Every error names the file, the line or section, and what is wrong.
 */
#ifndef XNV_CONFIG_H
#define XNV_CONFIG_H

#include <stdint.h>
#include <sys/un.h>

#include <gntshare/proto.h>	/* GNTS_BURST_MAX, GNTS_RING_* */

#define XNV_NAME_LEN       32
#define XNV_DEV_LEN        256
#define XNV_MAX_PORTS      16
#define XNV_MAX_GROUPS     16
#define XNV_MAX_SERVICES   64
#define XNV_MAX_SERVICE_ID 255
#define XNV_MAX_CHAIN      8
#define XNV_HEADROOM       128	/* == RTE_PKTMBUF_HEADROOM (core.h checks) */
#define XNV_ERROR_BUDGET_DEFAULT      1000
#define XNV_HEARTBEAT_TIMEOUT_DEFAULT 3000
#define XNV_HOARD_TIMEOUT_DEFAULT     3000

enum xnv_step_kind {
	XNV_STEP_SERVICE = 1,
	XNV_STEP_PORT,
	XNV_STEP_DROP,
};

struct xnv_step {
	uint8_t kind;		/* enum xnv_step_kind */
	uint16_t id;		/* service index or port index */
};

struct xnv_chain {
	uint8_t n;
	struct xnv_step s[XNV_MAX_CHAIN];
};

struct xnv_group_cfg {
	char name[XNV_NAME_LEN];
	uint32_t pool_bufs;
	uint32_t buf_size;
};

struct xnv_port_cfg {
	char name[XNV_NAME_LEN];
	char dev[XNV_DEV_LEN];
	uint16_t group;			/* group index */
	struct xnv_chain chain;		/* n == 0: rx not polled */
	uint16_t rx_desc, tx_desc;
	uint8_t rx_when_ready;		/* wait for the chain's services */
	uint32_t rx_rate;		/* packets/s at most; 0: no limit */
};

struct xnv_service_cfg {
	char name[XNV_NAME_LEN];
	uint16_t id;			/* XNV_TO_SERVICE argument */
};

struct xnv_config {
	char socket[sizeof(((struct sockaddr_un *)0)->sun_path)];
	uint32_t ring_size;
	uint32_t burst;
	uint32_t stall_timeout_ms;
	uint32_t spill_pct;		/* spill to another replica above */
	uint32_t error_budget;		/* bad descriptors / s; 0: no limit */
	uint32_t heartbeat_timeout_ms;	/* 0: no heartbeat watch */
	uint32_t max_held;		/* buffers an NF may hold; 0: derived */
	uint32_t hoard_timeout_ms;	/* 0: no hoard watch */
	uint8_t latency;		/* port-to-port latency histograms */
	uint8_t own_pools;		/* nf_pools = own */
	uint16_t n_groups, n_ports, n_services;
	struct xnv_group_cfg groups[XNV_MAX_GROUPS];
	struct xnv_port_cfg ports[XNV_MAX_PORTS];
	struct xnv_service_cfg services[XNV_MAX_SERVICES];
	int16_t service_by_id[XNV_MAX_SERVICE_ID + 1];	/* -1: none */
};

/**
 * Read and check @p path into @p cfg.  On error writes one line into
 * @p err (no trailing newline) and returns a negative errno.
 */
int xnv_config_load(const char *path, struct xnv_config *cfg, char *err,
		    size_t errlen);

/** Index of the group / port / service called @p name, or -1. */
int xnv_config_group(const struct xnv_config *cfg, const char *name);
int xnv_config_port(const struct xnv_config *cfg, const char *name);
int xnv_config_service(const struct xnv_config *cfg, const char *name);

/** Parse "a -> b -> c" into @p ch.  Same errors as xnv_config_load(). */
int xnv_config_parse_chain(const struct xnv_config *cfg, const char *text,
			   struct xnv_chain *ch, char *err, size_t errlen);

#endif /* XNV_CONFIG_H */

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * xnv-core configuration: an INI file, read by config_file.c (line
 * numbers) into an rte_cfgfile.  The reference for users, every key with
 * its type, default and range, is docs/CONFIG.md; the keys each section
 * may have are config_keys.c's.  `#` starts a comment line, `;` a
 * comment anywhere; numbers are decimal.
 *
 *   [core]
 *   socket = /run/xnv/xnv.sock  ; where NFs attach (host backend)
 *   socket_mode = 0600          ; octal mode of the socket file, 0600 to
 *                               ; 0777: who may connect at all
 *                               ; (connecting needs w)
 *   socket_group = xnv          ; its group (a name or a gid); needs a
 *                               ; socket_mode with g+w, such as 0660.
 *                               ; A socket directory the core makes is
 *                               ; 0700, searchable (r-x) by the group
 *                               ; and others the mode lets in (0750 for
 *                               ; 0660 + socket_group, 0755 for 0666);
 *                               ; an existing directory is left as it is
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
 *   max_nfs_per_domain = 8      ; NFs one domain (Xen: every NF device of
 *                               ; a domid; host: a connection) may have
 *                               ; attached or still draining (1..64)
 *   max_grant_frames_per_domain = 0   ; grant entries (4 KiB frames of
 *                               ; rings, pools, directories, and revoked
 *                               ; frames it still maps) one domain may
 *                               ; hold; an attach past it is refused
 *                               ; naming the key.  0: max_nfs_per_domain
 *                               ; x one NF's largest need
 *   on_hostile = refuse         ; a domain that breaks the protocol (an NF
 *                               ; quarantined) or asks to attach again
 *                               ; while it keeps revoked frames mapped:
 *                               ; refuse: its NFs are detached and its
 *                               ; attaches refused until it is destroyed
 *                               ; or released (xnv-ctl nf release);
 *                               ; pause: that, and the domain is paused;
 *                               ; destroy: the domain is destroyed
 *                               ; (pause and destroy: xen backend only)
 *   nf_pools = group            ; group: an NF's packets live in its trust
 *                               ; group's pool (zero copy in the group);
 *                               ; own: each NF gets a pool of its own of
 *                               ; its group's pool_bufs, and packets are
 *                               ; copied between pools (counted as the
 *                               ; group's copies).  The xen backend uses
 *                               ; own by itself under gntalloc (no
 *                               ; gntshare module)
 *   log_buffer_kib = 1024       ; log lines held while stderr is not read
 *                               ; (8..65536); lines that find it full are
 *                               ; dropped and counted (logsink.h)
 *   workers = 1                 ; lcores polling the ports (1..8): rx and
 *                               ; tx queue w of each port on the w-th
 *                               ; lcore EAL gives; NFs on the first
 *                               ; (worker.h)
 *   [group blue]                ; trust group: one packet pool each
 *   pool_bufs = 8192            ; buffers in the pool
 *   buf_size = 2176             ; bytes per buffer, 128 B headroom included
 *                               ; (384..65472, a multiple of 64); a port
 *                               ; receives frames up to buf_size - 128 B
 *                               ; (65344 at most): larger ones are dropped
 *                               ; (multiseg; logged once per port)
 *   allow_uids = 0 1000         ; host mode: who may attach NFs to it, by
 *   allow_gids = xnv            ; the uid or the primary gid of the
 *                               ; connecting process (numbers or names,
 *                               ; looked up at load; up to 16 each).
 *                               ; Default: allow_uids = 0 (root only;
 *                               ; and the core's own uid if the core is
 *                               ; not root: it can reach the core anyway),
 *                               ; no gids.  Xen: the domain's config
 *                               ; decides (xnv-xl), these are not used
 *   may_send_to = red           ; groups its NFs' own verdicts (XNV_OUT
 *                               ; to a port, XNV_TO_SERVICE to an NF) may
 *                               ; hand packets to; default none: such a
 *                               ; packet is dropped and charged to the NF
 *                               ; as a bad descriptor ("policy").  Steps
 *                               ; of a chain (XNV_NEXT) are always allowed
 *   [port in]                   ; a DPDK port, by name (index = order)
 *   dev = net_pcap0,rx_pcap=in.pcap   ; vdev devargs or a PCI address;
 *                               ; net_af_packet: framesz must hold the
 *                               ; interface's MTU + 84 B, buf_size
 *                               ; framesz + 96 B, else it is refused at
 *                               ; start with the fix (port_afpacket.c)
 *   group = blue                ; trust group its packets land in
 *   chain = fwd-a -> fwd-b -> out     ; default chain: services, ports, drop
 *   rx_start = chain-ready      ; or "immediately"
 *   [service fwd-a]             ; a service NFs attach as
 *   id = 1                      ; optional; default: declaration order
 *   allow_uids = 1000           ; optional (and allow_gids): narrows who
 *                               ; may attach as this service, besides
 *                               ; what its NF's group allows
 *   [flow dns]                  ; a flow rule (flow_rule.h): packets it
 *   proto = udp                 ; matches take its chain instead of their
 *   dport = 53                  ; port's.  Keys: priority, in_port, vlan,
 *   src = 10.0.0.0/8            ; proto, src, dst, sport, dport (each
 *   chain = fwd-a -> out        ; omitted: any) and chain (required).
 *                               ; `xnv-ctl flow reload` reads these again
 *
 * Without any [group] section there is one group named "0" with defaults.
 * Every error names the file, the line, the section and what is wrong;
 * relative rx_pcap= / tx_pcap= paths (and a memif socket= file's) are
 * the config directory's.
 */
#ifndef XNV_CONFIG_H
#define XNV_CONFIG_H

#include <stdint.h>
#include <sys/un.h>

#include <gntshare/proto.h>	/* GNTS_BURST_MAX, GNTS_RING_* */
#include "flow_rule.h"

#define XNV_NAME_LEN       32
#define XNV_DEV_LEN        256
#define XNV_MAX_PORTS      16
#define XNV_MAX_GROUPS     16
#define XNV_MAX_WORKERS    8	/* [core] workers */
#define XNV_MAX_SERVICES   64
#define XNV_MAX_SERVICE_ID 255
#define XNV_MAX_CHAIN      8
#define XNV_HEADROOM       128	/* == RTE_PKTMBUF_HEADROOM (core.h checks) */
#define XNV_BUF_SIZE_MAX   65472	/* [group] buf_size: a multiple of 64 that
					 * fits an mbuf's 16-bit lengths */
#define XNV_ERROR_BUDGET_DEFAULT      1000
#define XNV_HEARTBEAT_TIMEOUT_DEFAULT 3000
#define XNV_LOG_BUFFER_KIB_DEFAULT    1024
#define XNV_SOCKET_MODE_DEFAULT       0600
#define XNV_MAX_IDS        16	/* uids or gids in one allow_* list */
#define XNV_HOARD_TIMEOUT_DEFAULT     3000
#define XNV_MAX_NFS_PER_DOMAIN_DEFAULT 8

/* [core] on_hostile: what is done to a domain found hostile (domain.c). */
enum xnv_on_hostile {
	XNV_HOSTILE_REFUSE = 0,	/* its attaches refused until released */
	XNV_HOSTILE_PAUSE,	/* that, and the domain paused */
	XNV_HOSTILE_DESTROY,	/* the domain destroyed */
};

enum xnv_step_kind {
	XNV_STEP_SERVICE = 1,
	XNV_STEP_PORT,
	XNV_STEP_DROP,
};

struct xnv_step {
	uint8_t kind;		/* enum xnv_step_kind */
	uint16_t id;		/* service index or port index */
	uint16_t hop;		/* a fabric port's step: the hop its packets
				 * carry (PORT:HOP, fabric.h); else 0 */
};

/* [port] fabric: what carries a packet's hop between the core and the
 * switch that joins hosts (fabric.h). */
enum xnv_fabric_kind {
	XNV_FABRIC_NONE = 0,
	XNV_FABRIC_VLAN,	/* an outer 802.1Q tag, vid = hop */
};

#define XNV_HOP_MAX  4094	/* hops are 1..4094: a VLAN id */
#define XNV_MAX_HOPS 256	/* hop.N keys in one config */

struct xnv_chain {
	uint8_t n;
	struct xnv_step s[XNV_MAX_CHAIN];
};

/* A list of uids or gids (allow_uids, allow_gids). */
struct xnv_ids {
	uint8_t n;
	uint32_t id[XNV_MAX_IDS];
};

/* Who may attach to a group or as a service, in host mode: the uid or
 * the primary gid of the connecting process (SO_PEERCRED). */
struct xnv_access {
	uint8_t set;			/* [service]: a key was given */
	struct xnv_ids uids, gids;
};

struct xnv_group_cfg {
	char name[XNV_NAME_LEN];
	uint32_t pool_bufs;
	uint32_t buf_size;
	uint32_t may_send_to;		/* bit g: its NFs' verdicts may hand
					 * packets to group g */
	struct xnv_access access;	/* default: uid 0 (+ the core's) */
};

_Static_assert(XNV_MAX_GROUPS <= 32, "may_send_to is a 32-bit mask");

struct xnv_port_cfg {
	char name[XNV_NAME_LEN];
	char dev[XNV_DEV_LEN];		/* relative paths made the config
					 * directory's (config_port.c) */
	unsigned line;			/* of its dev key in the file */
	uint16_t group;			/* group index */
	struct xnv_chain chain;		/* n == 0: rx not polled */
	uint16_t rx_desc, tx_desc;
	uint8_t rx_when_ready;		/* wait for the chain's services */
	uint8_t rx_intr;		/* rx interrupts wake the idle core
					 * where the device has them */
	uint32_t rx_rate;		/* packets/s at most; 0: no limit */
	uint8_t fabric;			/* enum xnv_fabric_kind */
};

/* A fabric port's hop.N key: arrivals carrying hop N take @p chain. */
struct xnv_cfg_hop {
	uint16_t hop;
	uint16_t port;			/* index of its fabric port */
	struct xnv_chain chain;
};

struct xnv_service_cfg {
	char name[XNV_NAME_LEN];
	uint16_t id;			/* XNV_TO_SERVICE argument */
	uint16_t worker;		/* whose lcore polls its NFs' rings
					 * (worker.h); 0: the main lcore */
	struct xnv_access access;	/* set: these too, besides the group's */
};

/* A [flow NAME] section (config_flow.c): a rule and its chain. */
struct xnv_cfg_flow {
	char name[XNV_NAME_LEN];
	struct xnv_flow_rule rule;
	struct xnv_chain chain;
};

#define XNV_MAX_WARNINGS 16
#define XNV_WARNING_LEN  320

struct xnv_config {
	char path[256];			/* the file this came from */
	/* What is allowed but likely not meant ("path:line: ..."); the
	 * caller prints them (config_port.c). */
	char warnings[XNV_MAX_WARNINGS][XNV_WARNING_LEN];
	unsigned n_warnings;
	char socket[sizeof(((struct sockaddr_un *)0)->sun_path)];
	uint32_t socket_mode;		/* of the socket file */
	uint8_t socket_group_set;	/* [core] socket_group was given */
	uint32_t socket_gid;
	uint32_t ring_size;
	uint32_t burst;
	uint32_t stall_timeout_ms;
	uint32_t spill_pct;		/* spill to another replica above */
	uint32_t error_budget;		/* bad descriptors / s; 0: no limit */
	uint32_t heartbeat_timeout_ms;	/* 0: no heartbeat watch */
	uint32_t log_buffer_kib;	/* the log sink's buffer */
	uint32_t workers;		/* lcores of the data path (worker.h) */
	uint32_t max_held;		/* buffers an NF may hold; 0: derived */
	uint32_t hoard_timeout_ms;	/* 0: no hoard watch */
	uint32_t max_nfs_per_domain;	/* attached or draining */
	uint32_t max_grant_frames_per_domain;	/* 0: derived (domain.c) */
	uint8_t on_hostile;		/* enum xnv_on_hostile */
	unsigned on_hostile_line;	/* where it is set; 0: not set */
	uint8_t latency;		/* port-to-port latency histograms */
	uint8_t own_pools;		/* nf_pools = own */
	uint16_t n_groups, n_ports, n_services;
	struct xnv_group_cfg groups[XNV_MAX_GROUPS];
	struct xnv_port_cfg ports[XNV_MAX_PORTS];
	struct xnv_service_cfg services[XNV_MAX_SERVICES];
	int16_t service_by_id[XNV_MAX_SERVICE_ID + 1];	/* -1: none */
	struct xnv_cfg_flow *flows;	/* [flow NAME], in file order */
	unsigned n_flows;
	struct xnv_cfg_hop hops[XNV_MAX_HOPS];	/* in file order */
	uint16_t n_hops;
};

/**
 * Read and check @p path into @p cfg.  On error writes one line into
 * @p err (no trailing newline) and returns a negative errno.
 */
int xnv_config_load(const char *path, struct xnv_config *cfg, char *err,
		    size_t errlen);
/** What xnv_config_load() allocated (the [flow] rules). */
void xnv_config_free(struct xnv_config *cfg);

/** The keys a section of @p kind ("core", "group", "port", "service",
 *  "flow") may have, NULL-terminated; NULL for an unknown kind
 *  (config_keys.c, the one list docs/CONFIG.md is checked against). */
const char *const *xnv_config_keys(const char *kind);
/** 0 if [@p sec] (of @p kind) may have @p key, else -1 and one line
 *  in @p err listing the keys it may have. */
int xnv_config_key_check(const char *sec, const char *kind, const char *key,
			 char *err, size_t errlen);

/* Loading helpers shared by config*.c (not for other callers). */
struct rte_cfgfile;
struct xnv_ini;
/** [port] dev @p v of port @p idx of @p c, at @p line: a vdev or a PCI
 *  address, on no other port, a known driver's devargs with its keys
 *  only (config_devargs.h); the files it names (rx_pcap=, tx_pcap=, a
 *  memif socket= file) relative to the config's directory (config_port.c). */
int xnv_config_port_dev(struct xnv_config *c, uint16_t idx, const char *v,
			unsigned line, char *err, size_t errlen);
/** Warnings about what @p c says (config_port.c): chain steps after a
 *  port or drop step, a chain with no port or drop at its end, a port
 *  whose device receives nothing given a chain; into c->warnings. */
void xnv_config_warn(struct xnv_config *c, const struct xnv_ini *ini);
/** @p v as a number from @p min to @p max into *@p out, or one line
 *  naming [@p sec] @p key. */
int xnv_config_u32(const char *sec, const char *key, const char *v,
		   uint32_t min, uint32_t max, uint32_t *out, char *err,
		   size_t errlen);
/** [core] max_held, hoard_timeout_ms, max_nfs_per_domain,
 *  max_grant_frames_per_domain, on_hostile (config_limits.c). */
int xnv_config_load_limits(struct rte_cfgfile *f, struct xnv_config *c,
			   char *err, size_t errlen);
/** [flow @p name] (section @p sec) appended to cfg->flows (config_flow.c). */
int xnv_config_load_flow(struct rte_cfgfile *f, const char *sec,
			 const char *name, struct xnv_config *c, char *err,
			 size_t errlen);
/** Every [flow NAME] of @p path, now, resolved against @p c's ports and
 *  services, into *@p out (malloc'd) and *@p n: `flow reload`. */
int xnv_config_reload_flows(const struct xnv_config *c, const char *path,
			    struct xnv_cfg_flow **out, unsigned *n, char *err,
			    size_t errlen);
/** The names of cfg's ports for flow rules' in_port. */
void xnv_config_flow_ports(const struct xnv_config *c,
			   struct xnv_flow_ports *p);
/** [@p sec]'s fabric key (port @p idx of @p c, first pass) and, once
 *  every name is known (@p link), its hop.N keys (config_fabric.c). */
int xnv_config_port_fabric(struct rte_cfgfile *f, const char *sec,
			   uint16_t idx, struct xnv_config *c, int link,
			   char *err, size_t errlen);
/** Step "PORT:HOP" of a chain: a fabric port and its hop (config_fabric.c);
 *  1 and the step in *@p s; 0 if @p text has no ':'; -1 with @p err. */
int xnv_config_fabric_step(const struct xnv_config *c, const char *text,
			   struct xnv_step *s, char *err, size_t errlen);
/** "refuse", "pause", "destroy" (enum xnv_on_hostile). */
const char *xnv_config_hostile_name(unsigned v);

/** Index of the group / port / service called @p name, or -1. */
int xnv_config_group(const struct xnv_config *cfg, const char *name);
int xnv_config_port(const struct xnv_config *cfg, const char *name);
int xnv_config_service(const struct xnv_config *cfg, const char *name);

/** Step @p s as a chain names it: a service or port name, "drop", or
 *  "PORT:HOP"; in @p buf (XNV_STEP_TEXT bytes will do) (config_port.c). */
#define XNV_STEP_TEXT (XNV_NAME_LEN + 6)
const char *xnv_config_step_text(const struct xnv_config *c,
				 const struct xnv_step *s, char *buf,
				 size_t len);
/** Parse "a -> b -> c" into @p ch.  Same errors as xnv_config_load(). */
int xnv_config_parse_chain(const struct xnv_config *cfg, const char *text,
			   struct xnv_chain *ch, char *err, size_t errlen);

/*
 * Who may do what (config_access.c, no DPDK).  The parsers take a key's
 * value and say what is wrong with it in one line naming [@p sec] @p key.
 */

/** "0 1000 alice": numbers, or names looked up now (getpwnam when
 *  @p users, else getgrnam), separated by spaces or commas. */
int xnv_config_ids(const char *sec, const char *key, const char *v,
		   int users, struct xnv_ids *out, char *err, size_t errlen);

/** may_send_to of group @p from: names of declared groups, into the
 *  group's mask. */
int xnv_config_send_to(struct xnv_config *cfg, uint16_t from, const char *sec,
		       const char *v, char *err, size_t errlen);

/** [core] socket_mode (octal, at most 0777; NULL: the default) and
 *  socket_group (a name or a gid; NULL: none) into @p cfg. */
int xnv_config_socket_perm(struct xnv_config *cfg, const char *mode,
			   const char *group, char *err, size_t errlen);

/**
 * May a process of @p uid and (primary) @p gid attach to group @p g as
 * service @p s?  0, or -EACCES and one line in @p err naming only the
 * request ("uid 1000 (gid 1000) may not join trust group red").
 */
int xnv_config_may_join(const struct xnv_config *cfg, uint16_t g, uint16_t s,
			uint32_t uid, uint32_t gid, char *err, size_t errlen);

/** May an NF of group @p from hand a packet to group @p to by its own
 *  verdict (XNV_OUT, XNV_TO_SERVICE)?  Its own group always. */
static inline int
xnv_config_may_send(const struct xnv_config *cfg, uint16_t from, uint16_t to)
{
	return from == to || (cfg->groups[from].may_send_to >> to & 1u);
}

#endif /* XNV_CONFIG_H */

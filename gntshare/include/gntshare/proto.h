/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The XenNetVM wire protocol, all of it: what crosses the boundary between
 * xnv-core and an NF, in every backend.  Nothing here depends on an API
 * layer (libxnv, DPDK, libxen); the core's validator, libxnv, the
 * backends, the toolstack hook and the tests all take the protocol from
 * this header alone.  See docs/DESIGN.md for the picture.
 *
 *   1. shared memory: the 16-byte descriptor, the ring region header, the
 *      control line, action and detach codes (layout drawn in ring.h,
 *      which holds the ring *code*);
 *   2. the attach facts (request and reply), the same in both backends;
 *   3. host backend: the unix-socket messages;
 *   4. xen backend: the XenStore key names and xenbus states.
 *
 * Versions are ranges, as in memif: a reader accepts any version from
 * its *_VERSION_MIN to its *_VERSION; a writer says which versions it
 * can be read as (a region header and a socket message carry both the
 * version written and the oldest one a reader may treat it as).
 */
#ifndef GNTSHARE_PROTO_H
#define GNTSHARE_PROTO_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- 1. shared memory ---------------------------------------------------- */

#define GNTS_RING_MAGIC       0x52564e58u	/* "XNVR" little-endian */
#define GNTS_RING_VERSION     4u	/* 2: control line at offset 64;
					 * 3: NF stats area at offset 128;
					 * 4: doorbell area at offset 768
					 * (a version 2 or 3 reader may read
					 * it: the rings are where ring_off
					 * says) */
#define GNTS_RING_VERSION_MIN 2u	/* oldest layout this side reads */
#define GNTS_CACHE_LINE       64u
#define GNTS_MAX_RINGS        4u
#define GNTS_RING_MIN         16u
#define GNTS_RING_MAX         (1u << 16)
#define GNTS_BURST_MAX        256u	/* descriptors one side moves in one
					 * burst, at most (xnv-core's [core]
					 * burst; libxnv moves 32) */

enum gnts_ring_id {
	GNTS_RING_RX = 0,	/* core -> NF: packets to process */
	GNTS_RING_TX = 1,	/* NF -> core: processed packets + verdicts */
	GNTS_RING_FREE = 2,	/* core -> NF: empty buffers it may fill */
	GNTS_RING_COUNT = 3,
};

/* What an NF asks of the core for one packet (gnts_desc.action). */
#define GNTS_ACTIONS(_)							\
	_(DROP, 1)		/* free the packet */			\
	_(OUT, 2)		/* send out of port dst */		\
	_(TO_SERVICE, 3)	/* hand to an instance of service dst */\
	_(NEXT, 4)		/* next step of the packet's chain */

enum gnts_action {
	GNTS_ACT_NONE = 0,	/* core -> NF descriptors */
#define GNTS_ACT_ENUM(n, v) GNTS_ACT_##n = v,
	GNTS_ACTIONS(GNTS_ACT_ENUM)
#undef GNTS_ACT_ENUM
	GNTS_ACT_MAX = 255,	/* the descriptor keeps 8 bits */
};

/*
 * One 16-byte descriptor.  Offsets and indices only, never pointers: the
 * two sides map the pool at different addresses.
 */
struct gnts_desc {
	uint32_t buf;		/* buffer index in the trust group's pool */
	uint16_t off;		/* data offset from the start of the buffer */
	uint16_t len;		/* data length in bytes */
	uint8_t action;		/* NF -> core: GNTS_ACT_*; core -> NF: 0 */
	uint8_t flags;		/* reserved, 0 */
	uint16_t dst;		/* NF -> core: port index or service id;
				 * core -> NF: input port index */
	uint32_t hash;		/* RSS hash / flow hint */
};

_Static_assert(sizeof(struct gnts_desc) == 16, "descriptor must be 16 bytes");

/**
 * The one rule for a descriptor's length, shared by libxnv (what it lets
 * an NF send) and the core's validator (what it accepts): data must be
 * there unless the buffer is handed back with GNTS_ACT_DROP, whose bytes
 * nobody reads (an NF may return an empty buffer it allocated).  The core
 * never delivers an empty frame (a port's zero-length frames are dropped
 * and counted at rx).
 */
static inline int
gnts_desc_len_ok(uint16_t len, uint8_t action)
{
	return len != 0 || action == GNTS_ACT_DROP;
}

/* Shared header at offset 0 of a ring region; written once by the core. */
struct gnts_ring_region_hdr {
	uint32_t magic;			/* GNTS_RING_MAGIC */
	uint32_t version;		/* GNTS_RING_VERSION of the writer */
	uint32_t n_rings;		/* GNTS_RING_COUNT */
	uint32_t ring_size;		/* descriptors per ring, power of two */
	uint32_t desc_size;		/* sizeof(struct gnts_desc) */
	uint32_t region_size;		/* bytes of the whole region */
	uint32_t ring_off[GNTS_MAX_RINGS]; /* byte offset of each ring */
	uint32_t min_version;		/* oldest version a reader may read
					 * this region as (0: = version) */
	uint32_t stats_off;		/* version 3: GNTS_RING_STATS_OFF, the
					 * NF stats area; 0: none (version 2) */
	uint32_t n_stats;		/* version 3: GNTS_NF_STATS_MAX slots */
	uint32_t sleep_off;		/* version 4: GNTS_RING_SLEEP_OFF, the
					 * doorbell area; 0: none (older) */
	uint8_t reserved[GNTS_CACHE_LINE - 10 * 4 - GNTS_MAX_RINGS * 4];
};

_Static_assert(sizeof(struct gnts_ring_region_hdr) == GNTS_CACHE_LINE,
	       "region header is one cache line");

/* Why the core detached an NF, as written in gnts_ring_ctl.detached. */
enum gnts_detach_code {
	GNTS_DETACH_NONE = 0,		/* attached */
	GNTS_DETACH_SHUTDOWN = 1,	/* the core is stopping cleanly */
	GNTS_DETACH_QUARANTINE = 2,	/* bad descriptors or ring indices */
	GNTS_DETACH_HEARTBEAT = 3,	/* heartbeat stood still too long */
	GNTS_DETACH_OTHER = 4,		/* anything else (see the core's log) */
	GNTS_DETACH_HOARD = 5,		/* held its buffer quota, returned none */
	GNTS_DETACH_SUSPEND = 6,	/* its domain is being saved or migrated
					 * (xen): unmap, then attach again once
					 * the domain runs again */
};

#define GNTS_RING_CTL_OFF GNTS_CACHE_LINE	/* right after the header */

/* The control line: one cache line, mostly written by the NF. */
struct gnts_ring_ctl {
	_Atomic uint32_t heartbeat;	/* NF writes: bumped by its poll loop */
	_Atomic uint32_t detached;	/* core writes once: GNTS_DETACH_* */
	uint8_t reserved[GNTS_CACHE_LINE - 2 * 4];
};

_Static_assert(sizeof(struct gnts_ring_ctl) == GNTS_CACHE_LINE,
	       "control line is one cache line");

/*
 * The NF stats area (version 3): counters an NF publishes by name
 * (xnv_nf_stat_register in <xnv/nf.h>), written only by the NF, read by
 * the core as untrusted input: a slot whose name[0] is 0 is unused; a
 * name must pass gnts_nf_stat_name_ok (1..31 of A-Z a-z 0-9 _ . -, then
 * NUL), or the core counts the slot as invalid and shows nothing of it; a
 * value is read once (relaxed: it orders nothing, any value is possible).
 */
#define GNTS_RING_STATS_OFF (2 * GNTS_CACHE_LINE)	/* after the ctl line */
#define GNTS_NF_STATS_MAX   16u		/* slots */
#define GNTS_NF_STAT_NAME_LEN 32u	/* name bytes, NUL included */

struct gnts_nf_stat {
	char name[GNTS_NF_STAT_NAME_LEN];	/* NF writes once, then NUL */
	_Atomic uint64_t value;			/* NF writes, core reads */
};

_Static_assert(sizeof(struct gnts_nf_stat) == 40, "a stat slot is 40 bytes");

/** 1 if @p name (at most GNTS_NF_STAT_NAME_LEN bytes are looked at) is a
 *  stat name: 1..31 characters of A-Z a-z 0-9 _ . - and a NUL.  The one
 *  rule, for libxnv (what it publishes) and the core (what it shows). */
static inline int
gnts_nf_stat_name_ok(const char *name)
{
	unsigned i;

	for (i = 0; i < GNTS_NF_STAT_NAME_LEN; i++) {
		char ch = name[i];

		if (ch == '\0')
			return i > 0;
		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		      (ch >= '0' && ch <= '9') || ch == '_' || ch == '.' ||
		      ch == '-'))
			return 0;
	}
	return 0;
}
#define GNTS_RING_STATS_BYTES \
	((GNTS_NF_STATS_MAX * sizeof(struct gnts_nf_stat) + GNTS_CACHE_LINE - 1) \
	 & ~(size_t)(GNTS_CACHE_LINE - 1))


/*
 * The doorbell area (version 4): one cache line per side, each written by
 * that side alone, read by the other as untrusted input.  The drawing, the
 * protocol and its barriers are in ring.h ("Sleeping on a ring").
 *
 * sleep[i] belongs to the consumer of ring i (gnts_ring_consumer(): the
 * NF for RX and FREE, the core for TX) and is only meaningful on its
 * line: 0 while it polls; GNTS_RING_ASLEEP | X (one 64-bit store, never
 * torn) when it is about to sleep, or sleeps, having seen the ring empty
 * with the producer's index at X.  The producer only ever decides from it
 * whether to ring the consumer's doorbell ("kick"), never anything else.
 *
 * kicks is written once by a side that rings its peer's doorbell when the
 * peer asks (GNTS_RING_KICKS); 0: it never does (an older peer, or one
 * that polls).  A consumer sleeps on a ring only when that ring's producer
 * said so; a peer that says so and does not kick only delays what it
 * sends itself (the core never sleeps unbounded: ring.h).
 */
#define GNTS_RING_SLEEP_OFF (GNTS_RING_STATS_OFF + GNTS_RING_STATS_BYTES)
#define GNTS_RING_ASLEEP    (1ull << 32)	/* in sleep[i]: asleep, seen X */
#define GNTS_RING_KICKS     1u			/* in kicks */

enum gnts_ring_side {
	GNTS_SIDE_NF = 0,	/* its line first, at GNTS_RING_SLEEP_OFF */
	GNTS_SIDE_CORE = 1,	/* then the core's */
	GNTS_SIDE_COUNT = 2,
};

struct gnts_ring_sleep_line {
	_Atomic uint64_t sleep[GNTS_MAX_RINGS];	/* consumer of ring i writes */
	_Atomic uint32_t kicks;			/* GNTS_RING_KICKS or 0 */
	uint8_t reserved[GNTS_CACHE_LINE - GNTS_MAX_RINGS * 8 - 4];
};

_Static_assert(sizeof(struct gnts_ring_sleep_line) == GNTS_CACHE_LINE,
	       "a side's doorbell line is one cache line");

#define GNTS_RING_SLEEP_BYTES (GNTS_SIDE_COUNT * GNTS_CACHE_LINE)

/** The side that consumes ring @p r (and writes its sleep word). */
static inline enum gnts_ring_side
gnts_ring_consumer(uint32_t r)
{
	return r == GNTS_RING_TX ? GNTS_SIDE_CORE : GNTS_SIDE_NF;
}

/* ---- 2. attach facts ----------------------------------------------------- */

/*
 * What an NF and xnv-core tell each other when the NF attaches: in host
 * mode in the ATTACH request and reply below, in Xen mode as the XenStore
 * nodes of section 4.  Strings are NUL-terminated within their arrays; a
 * receiver that finds no NUL rejects the message.
 */
#define GNTS_ATTACH_NAME_LEN 32u

/* NF -> core */
struct gnts_attach_req {
	char name[GNTS_ATTACH_NAME_LEN];	/* instance name, for logs */
	char service[GNTS_ATTACH_NAME_LEN];	/* service it provides */
	char group[GNTS_ATTACH_NAME_LEN];	/* trust group it belongs to */
	uint32_t alloc_bufs;			/* empty buffers to keep in the
						 * NF's free ring (0: none) */
	uint32_t flags;				/* GNTS_REQ_* (0 from an NF
						 * older than doorbells) */
};

/* gnts_attach_req.flags */
#define GNTS_REQ_BELL 0x1u	/* give me a doorbell pair (bell.h): host,
				 * an fd with ATTACH_OK; xen (asked by
				 * `request-bell` = "1"), an event channel
				 * port in `event-channel` */
#define GNTS_REQ_BELL_PIPE 0x2u	/* host, with GNTS_REQ_BELL: kick me
				 * through a pipe (bell.h), its read end a
				 * second fd with ATTACH_OK */

/* core -> NF */
struct gnts_attach_rsp {
	uint32_t domid;		/* peer id the core assigned */
	uint32_t nf_id;		/* NF slot in the core */
	uint32_t service_id;	/* numeric id of the service */
	uint32_t ring_ref;	/* reference of the NF's ring region */
	uint32_t ring_size;	/* descriptors per ring */
	uint32_t pool_ref;	/* reference of the group's packet pool */
	uint32_t pool_bufs;	/* buffers in the pool */
	uint32_t buf_size;	/* bytes per buffer (headroom included) */
	uint32_t n_ports;	/* ports an NF may name in GNTS_ACT_OUT */
	uint32_t flags;		/* GNTS_RSP_* (0 from an older core) */
	uint64_t ring_bytes;	/* size of the ring region mapping */
	uint64_t pool_bytes;	/* size of the pool region mapping */
};

/* gnts_attach_rsp.flags */
#define GNTS_RSP_BELL 0x1u	/* a doorbell pair came with the reply */
#define GNTS_RSP_BELL_PIPE 0x2u	/* host: and the core kicks through the
				 * pipe whose read end is the second fd */

/* ---- 3. host backend: unix socket messages -------------------------------- */

/*
 * One SOCK_SEQPACKET datagram per message, always sizeof(struct gnts_msg).
 *
 *   NF                          core
 *   ATTACH(req)          --->
 *                        <---   ATTACH_OK(rsp)  | ERROR(text), close
 *                               (+ fds by SCM_RIGHTS when req.flags has
 *                               GNTS_REQ_BELL and rsp.flags GNTS_RSP_BELL:
 *                               the NF's end of its doorbell socketpair,
 *                               and with GNTS_RSP_BELL_PIPE the read end
 *                               of the pipe the core kicks it through,
 *                               bell.h)
 *   MAP(ref, readonly)   --->
 *                        <---   MAP_OK(size) + fd (SCM_RIGHTS) | ERROR(text)
 *                        <---   DETACH(text), close   (core detaches the NF)
 *   BYE                  --->   (or hang-up: the NF is gone)
 */
#define GNTS_DEFAULT_SOCKET  "/run/xnv/xnv.sock"	/* where NFs find the core */
#define GNTS_MSG_MAGIC       0x4d564e58u	/* "XNVM" */
#define GNTS_MSG_VERSION     1u
#define GNTS_MSG_VERSION_MIN 1u
#define GNTS_ERR_LEN         160u

enum gnts_msg_type {
	GNTS_MSG_ATTACH = 1,
	GNTS_MSG_ATTACH_OK,
	GNTS_MSG_MAP,
	GNTS_MSG_MAP_OK,
	GNTS_MSG_ERROR,
	GNTS_MSG_DETACH,
	GNTS_MSG_BYE,
};

struct gnts_msg {
	uint32_t magic;
	uint16_t version;	/* GNTS_MSG_VERSION of the sender */
	uint16_t type;
	int32_t status;		/* 0 or negative errno (ERROR) */
	uint32_t ref;		/* MAP */
	uint64_t size;		/* MAP_OK: bytes to map */
	uint32_t readonly;	/* MAP */
	uint32_t min_version;	/* oldest version the receiver may read
				 * this message as (0: = version) */
	union {
		struct gnts_attach_req req;
		struct gnts_attach_rsp rsp;
		char text[GNTS_ERR_LEN];
	} u;
};

/* ---- 4. xen backend: XenStore ------------------------------------------- */

/*
 * One directory pair per NF device (xenbus conventions); the drawing of
 * who writes what and when is in xen.h.
 */
#define GNTS_XEN_MAX_DEVS    16u	/* NF devices per domain (nfv_instances) */
/* Under the backend domain's own tree, as netback's vifs: Dom0's, or a
 * driver domain's (xl's backend= for vifs; nfv_backend for NF devices). */
#define GNTS_XS_BACKEND_ROOT_FMT "/local/domain/%u/backend/xnv"
#define GNTS_XS_FRONTEND_DIR "device/xnv"	/* under /local/domain/<id> */

/* both halves */
#define GNTS_XS_STATE         "state"
/* frontend (the guest writes; xnv-xl creates) */
#define GNTS_XS_BACKEND       "backend"
#define GNTS_XS_BACKEND_ID    "backend-id"
#define GNTS_XS_NAME          "name"
#define GNTS_XS_SERVICE       "service"
#define GNTS_XS_ALLOC_BUFS    "alloc-bufs"
#define GNTS_XS_REQUEST_ID    "request-id"
#define GNTS_XS_REQUEST_BELL  "request-bell"	/* "1": GNTS_REQ_BELL; "0"
						 * or none: the NF polls */
/* backend (Dom0 writes) */
#define GNTS_XS_FRONTEND      "frontend"
#define GNTS_XS_FRONTEND_ID   "frontend-id"
#define GNTS_XS_TRUST_GROUP   "trust-group"
#define GNTS_XS_RING_REF      "ring-ref"
#define GNTS_XS_RING_PAGES    "ring-pages"
#define GNTS_XS_RING_SIZE     "ring-size"
#define GNTS_XS_POOL_DIR_REFS "pool-dir-refs"
#define GNTS_XS_POOL_PAGES    "pool-pages"
#define GNTS_XS_POOL_BUFS     "pool-bufs"
#define GNTS_XS_BUF_SIZE      "buf-size"
#define GNTS_XS_SERVICE_ID    "service-id"
#define GNTS_XS_NF_ID         "nf-id"
#define GNTS_XS_NF_NAME       "nf-name"
#define GNTS_XS_N_PORTS       "n-ports"
#define GNTS_XS_EVENT_CHANNEL "event-channel"	/* the core's port of the
						 * NF's doorbell (its
						 * GNTS_RSP_BELL); none:
						 * poll */
#define GNTS_XS_ERROR         "error"
#define GNTS_XS_DETACH_REASON "detach-reason"
#define GNTS_XS_DETACH_STATUS "detach-status"
/* backend, written by xnv-xl in Dom0 (never by the guest): the domain is
 * about to be saved or migrated ("save", "migrate"): the core detaches
 * the device's NF (GNTS_DETACH_SUSPEND, detach-status -EAGAIN) and
 * attaches none while the node exists; the NF waits for it to go (or for
 * the device of the domain it runs in after a restore) to attach again */
#define GNTS_XS_SUSPEND       "suspend"

enum gnts_xenbus_state {
	GNTS_XB_UNKNOWN = 0,
	GNTS_XB_INITIALISING = 1,
	GNTS_XB_INITWAIT = 2,
	GNTS_XB_INITIALISED = 3,
	GNTS_XB_CONNECTED = 4,
	GNTS_XB_CLOSING = 5,
	GNTS_XB_CLOSED = 6,
};

/** A xenbus state as XenStore holds it ("1" .. "6"; "0" if unknown). */
static inline const char *
gnts_xb_state_str(enum gnts_xenbus_state st)
{
	static const char *const s[] = { "0", "1", "2", "3", "4", "5", "6" };

	return (unsigned)st < sizeof(s) / sizeof(s[0]) ? s[st] : "0";
}

/**
 * 1 if a reader of versions [@p min, @p max] can read what a writer wrote
 * as @p version, readable down to @p wmin (0: = version).
 */
static inline int
gnts_version_ok(uint32_t version, uint32_t wmin, uint32_t min, uint32_t max)
{
	if (wmin == 0 || wmin > version)
		wmin = version;
	return version >= min && wmin <= max;
}

#ifdef __cplusplus
}
#endif

#endif /* GNTSHARE_PROTO_H */

/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * libxnv: write a XenNetVM network function.
 *
 * An NF is a plain program.  It attaches to xnv-core, receives packets in
 * place (zero copy: the packet data lives in the trust group's pool, shared
 * with the core), looks at or rewrites them in a handler, and returns each
 * one with a verdict.  No DPDK is needed in the NF.
 *
 * @code
 * #include <xnv/nf.h>
 *
 * static xnv_action_t
 * forward(struct xnv_pkt *pkt, void *ctx)
 * {
 *         (void)pkt; (void)ctx;
 *         return XNV_NEXT;                  // next step of the chain
 * }
 *
 * int main(int argc, char **argv)
 * {
 *         struct xnv_nf *nf;
 *         int rc = xnv_nf_init(argc, argv, &nf);
 *
 *         if (rc < 0)                       // --help, bad option, no core
 *                 return xnv_nf_exit_status(rc);
 *         rc = xnv_nf_run(nf, forward, NULL);
 *         xnv_nf_close(nf);
 *         return rc < 0 ? 1 : 0;
 * }
 * @endcode
 *
 * Build: `cc my_nf.c $(pkg-config --cflags --libs libxnv)`.
 *
 * Options xnv_nf_init() understands (before an optional `--`; what follows
 * `--` is the NF's own):
 *   --service NAME   service this NF provides (env XNV_SERVICE; required)
 *   --group NAME     trust group (env XNV_GROUP; default "0")
 *   --name NAME      instance name for logs (default SERVICE-PID)
 *   --socket PATH    xnv-core's socket (env XNV_SOCKET;
 *                    default /run/xnv/xnv.sock)
 *   --idle-sleep M   what xnv_nf_run() does when idle (env
 *                    XNV_IDLE_SLEEP): poll (never back off; the same as
 *                    --busy-poll), adaptive (pause, yield, then sleeps
 *                    up to 200 us), doorbell (default: adaptive for a
 *                    few hundred us, then sleep until the core kicks
 *                    the NF's doorbell; an idle NF then costs nothing.
 *                    With a core that has no doorbells: adaptive)
 *   --busy-poll      never back off when idle (--idle-sleep poll)
 *   --rt-priority N  run the thread that runs xnv_nf_run() SCHED_FIFO at
 *                    N (1..99; env XNV_RT_PRIORITY): woken, it runs at
 *                    once whatever shares its CPU (one that polls busy
 *                    keeps other tasks off it).  Refused at init when the
 *                    process may not take it
 *   --alloc N        keep N empty buffers at hand for packets the NF
 *                    originates with xnv_pkt_alloc() (env XNV_ALLOC;
 *                    default 0: the NF only forwards).  At most the
 *                    core's ring size (and below its [core] max_held
 *                    when set): the core refuses the attach otherwise.
 *                    The core never lets an NF hold more than its quota
 *                    of buffers at once, free ones included
 *   --reattach       when no xnv-core runs yet, or when it stops or dies,
 *                    wait for a core on the same socket and attach
 *                    (again) (env XNV_REATTACH=1;
 *                    default: xnv_nf_run() returns).  Not after the core
 *                    detached this NF on purpose (quarantine, heartbeat).
 *                    Buffers in hand and unsent packets are lost.
 *   --quiet          no statistics line on exit
 *   -h, --help       print these options; xnv_nf_init() returns -EAGAIN
 *                    and the NF should exit 0
 *   --version        print "PROGRAM (XenNetVM) VERSION"; likewise -EAGAIN
 * An unknown option is refused with "NF options go after --" (-EINVAL).
 *
 * Exit status (xnv_nf_exit_status()): 0 after --help / --version or a
 * clean stop, 2 for a usage error (bad option), 1 for anything else (no
 * core, refused attach, lost core).
 *
 * Liveness: xnv_nf_run() and xnv_nf_poll() bump a heartbeat the core
 * watches; an NF that holds packets and does not call either for the
 * core's heartbeat_timeout_ms (default 3 s) is declared dead.  A handler
 * must not block that long.  An NF asleep on its doorbell (xnv_nf_run()
 * in doorbell mode, or xnv_nf_arm()) with nothing pending is alive.
 *
 * Threading: one NF handle is driven by one thread.
 * Logging: libxnv writes log lines to stderr, never to stdout (only
 * --help and --version print there), each starting with its UTC time and
 * level: "2026-11-24T21:54:52.878Z INFO xnv: fwd-1: attached as ...";
 * a bad option is one plain "xnv: ..." line.
 */
#ifndef XNV_NF_H
#define XNV_NF_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Verdict a handler returns: an action in the high 16 bits, its
 *  argument (port or service id) in the low 16 bits.  Build it with the
 *  macros below. */
typedef uint32_t xnv_action_t;

/** Action codes, as carried in descriptors (the wire protocol,
 *  gntshare/proto.h, has the same values). */
enum xnv_action_code {
	XNV_ACT_DROP = 1,	/**< free the packet */
	XNV_ACT_OUT = 2,	/**< send out of port `arg` */
	XNV_ACT_TO_SERVICE = 3,	/**< hand to an instance of service `arg` */
	XNV_ACT_NEXT = 4,	/**< next step of the packet's chain */
};

#define XNV_ACTION(code, arg) \
	((xnv_action_t)(((uint32_t)(code) << 16) | ((uint32_t)(arg) & 0xffffu)))
/** Drop the packet (the core frees it and counts it against this NF). */
#define XNV_DROP            XNV_ACTION(XNV_ACT_DROP, 0)
/** Send out of port @p port (index of the port in the core's config). */
#define XNV_OUT(port)       XNV_ACTION(XNV_ACT_OUT, (port))
/** Hand to service @p id (numeric service id from the core's config). */
#define XNV_TO_SERVICE(id)  XNV_ACTION(XNV_ACT_TO_SERVICE, (id))
/** Continue with the next step of the chain the packet is on. */
#define XNV_NEXT            XNV_ACTION(XNV_ACT_NEXT, 0)

/**
 * One packet, valid only during the handler call that received it.
 * Read it through the accessors below; fields are documented for
 * debuggers, not for direct writes.
 */
struct xnv_pkt {
	uint8_t *buf;		/**< start of the packet's buffer */
	uint32_t buf_size;	/**< bytes in the buffer (headroom included) */
	uint32_t off;		/**< data offset from buf */
	uint32_t len;		/**< data length */
	uint32_t hash;		/**< flow hash given by the core (0: none) */
	uint16_t in_port;	/**< port the packet entered on */
	uint16_t reserved;
};

struct xnv_nf;

/** Packet handler.  Runs in place on the packet; returns the verdict. */
typedef xnv_action_t (*xnv_handler_t)(struct xnv_pkt *pkt, void *ctx);

/** Most packets a burst handler is given at once. */
#define XNV_BURST_MAX 32

/**
 * Burst handler: @p n packets (1..XNV_BURST_MAX) in @p pkts, in the order
 * they came; it writes packet i's verdict to @p verdicts[i], which arrives
 * holding XNV_DROP (a verdict left unset drops the packet).  As with
 * xnv_handler_t it may change a packet's data in place, and its offset and
 * length; the packets are valid only during the call.  libxnv has fetched
 * the first cache line of each packet's data (a prefetch) before the call:
 * a handler that reads headers finds them on their way while it works on
 * the first ones.  Descriptors the core got wrong never reach a handler.
 */
typedef void (*xnv_burst_handler_t)(struct xnv_pkt *pkts,
				    xnv_action_t *verdicts, unsigned n,
				    void *ctx);

/**
 * Parse libxnv's options from @p argv, attach to xnv-core and map the
 * trust group's pool and this NF's rings.
 * @return the number of arguments consumed (including a `--`, like
 *   rte_eal_init()), so that the NF's own options start at argv[ret];
 *   -EINVAL on a bad option, -EAGAIN after printing --help or --version,
 *   -EHOSTDOWN when no core is running (nothing listens on the socket;
 *   with --reattach it waits for one instead), or another negative errno
 *   when the core refuses (the reason is on stderr in one line).
 */
int xnv_nf_init(int argc, char **argv, struct xnv_nf **nf);

/**
 * Check libxnv's options in @p argv as xnv_nf_init() does (--help and
 * --version are printed here too), without attaching: for an NF that
 * reads its own options and files first, so that mistakes in either need
 * no running core.
 * @return what xnv_nf_init() would consume, -EINVAL (bad option, said
 *   why), -EAGAIN (--help or --version printed), or another negative
 *   errno for an option this process cannot have (--rt-priority without
 *   the right to it: -EPERM, said why).
 */
int xnv_nf_args(int argc, char **argv);

/**
 * The exit status for a negative return of xnv_nf_init() or
 * xnv_nf_args(): 0 for -EAGAIN (--help, --version), 2 for -EINVAL (a usage
 * error), 1 otherwise.  -EINVAL never means anything but a bad option.
 */
static inline int
xnv_nf_exit_status(int rc)
{
	return rc == -EAGAIN ? 0 : rc == -EINVAL ? 2 : 1;
}

/** @return libxnv's version, e.g. "0.1.0" (the project's version). */
const char *xnv_version(void);

/**
 * Poll the NF's receive ring and call @p handler on every packet, in
 * bursts, until xnv_nf_stop(), SIGINT/SIGTERM, or the core goes away.
 * Idle polling backs off as --idle-sleep says (default: then sleeps on
 * the doorbell until the core has packets for it).
 * With --reattach it waits for the next core when this one goes away,
 * and goes on.  In a Xen domain being saved or migrated (xnv-xl save,
 * migrate) it unmaps everything when the core lets go and attaches again
 * through the same device once the domain runs again, with or without
 * --reattach (buffers in hand and unsent packets are lost, as at any
 * detach).
 * @return 0 after a requested stop or when the core shut down cleanly,
 *   -ECONNRESET when the core died or detached this NF (reason on stderr),
 *   -EPROTO when the core's ring indices are impossible, or the error of
 *   a failed re-attach.
 */
int xnv_nf_run(struct xnv_nf *nf, xnv_handler_t handler, void *ctx);

/**
 * One burst, without waiting: handle what is in the receive ring (up to
 * 32 packets) and push pending xnv_pkt_send() packets.  For NFs that run
 * their own loop (traffic generators).
 * @return packets handled (0 if none were waiting), or -ECONNRESET (the
 *   core is gone, or let go of the NF for a save or migration of its
 *   domain: only xnv_nf_run() comes back after one), -EPROTO.
 */
int xnv_nf_poll(struct xnv_nf *nf, xnv_handler_t handler, void *ctx);

/**
 * xnv_nf_run() with a burst handler: what the receive ring holds (up to
 * XNV_BURST_MAX packets) goes to @p handler in one call, for NFs that do
 * better with many packets at once (batched table lookups with
 * prefetch).  Same loop, idle policy, re-attach and return values.
 */
int xnv_nf_run_burst(struct xnv_nf *nf, xnv_burst_handler_t handler,
		     void *ctx);

/** xnv_nf_poll() with a burst handler (xnv_nf_run_burst()). */
int xnv_nf_poll_burst(struct xnv_nf *nf, xnv_burst_handler_t handler,
		      void *ctx);

/**
 * The NF's doorbell, to wait on in an event loop of its own (epoll,
 * libevent, ...): readable (POLLIN) when the core has kicked it.  Use it
 * only as xnv_nf_arm() says; after it became readable (or any other
 * wake-up) call xnv_nf_poll(), which takes the kick.
 * @return the fd (owned by libxnv: do not read or close it), or
 *   -ENOTSUP when there is none (an older core, a backend without
 *   doorbells): then poll.
 */
int xnv_nf_fd(const struct xnv_nf *nf);

/**
 * About to wait on xnv_nf_fd() because xnv_nf_poll() returned 0: tell the
 * core to kick the doorbell when packets come, and look once more.
 *   for (;;) {
 *           int n = xnv_nf_poll(nf, handler, ctx);
 *           if (n < 0)
 *                   break;
 *           if (n == 0 && xnv_nf_arm(nf) == 1)
 *                   epoll_wait(...);    // xnv_nf_fd() among others
 *   }
 * @return 1: wait now (the core kicks when it gives this NF packets);
 *   0: do not wait (packets came meanwhile, or no doorbell: poll);
 *   -EPROTO: the core's ring index is impossible.
 *   Heartbeats: an armed NF with nothing pending is alive, however long
 *   it waits.
 */
int xnv_nf_arm(struct xnv_nf *nf);

/**
 * Take an empty buffer from the trust group's pool to build a packet in
 * (the NF must have been started with --alloc N).  Never blocks.
 * On success @p pkt has length 0 and the usual headroom; write the packet
 * with xnv_pkt_append() and hand it on with xnv_pkt_send().
 * @return 0, or -ENOBUFS when no buffer is at hand right now (the core
 *   refills; try again later), -EPROTO on a bad buffer from the core.
 */
int xnv_pkt_alloc(struct xnv_nf *nf, struct xnv_pkt *pkt);

/**
 * Hand a packet from xnv_pkt_alloc() to the core with @p action:
 * XNV_OUT(port), XNV_TO_SERVICE(id) or XNV_DROP (XNV_NEXT has no meaning:
 * the packet is on no chain).  Sends are batched; they reach the core at
 * the next xnv_nf_poll(), xnv_nf_flush(), or when 32 are waiting (the
 * call then waits for room in the ring, without sleeping).
 * @return 0 (the packet is the core's now), -EINVAL (not a buffer of this
 *   pool, out of bounds, or a bad action; the packet is still yours), or
 *   -ECONNRESET.
 */
int xnv_pkt_send(struct xnv_nf *nf, struct xnv_pkt *pkt, xnv_action_t action);

/** Push pending sends to the core now.  @return 0, or -ECONNRESET. */
int xnv_nf_flush(struct xnv_nf *nf);

/** Ask xnv_nf_run() to return after the current burst (signal-safe). */
void xnv_nf_stop(struct xnv_nf *nf);

/** Detach from the core, unmap everything, free @p nf.  NULL is a no-op. */
void xnv_nf_close(struct xnv_nf *nf);

/** Counters of this NF since attach. */
struct xnv_nf_stats {
	uint64_t rx;		/**< packets received */
	uint64_t tx;		/**< packets returned with a forwarding verdict */
	uint64_t dropped;	/**< packets returned with XNV_DROP */
	uint64_t bad_rx;	/**< descriptors from the core that were out of
				 *   bounds (dropped without calling the handler) */
	uint64_t sent;		/**< packets the NF originated and sent */
	uint64_t alloc_fail;	/**< xnv_pkt_alloc() calls that found no
				 *   buffer */
	uint64_t bad_verdict;	/**< verdicts whose action is no XNV_ACT_*:
				 *   the packet was dropped (also counted
				 *   in dropped), said once on stderr */
};

/** Copy the counters into @p st. */
void xnv_nf_get_stats(const struct xnv_nf *nf, struct xnv_nf_stats *st);

/*
 * NF counters of its own, visible live: `xnv-ctl nf stats NAME`,
 * `/xnv/nf/info` (stats), `xnv-ctl metrics` (xnv_nf_stat).  They live in
 * memory this NF shares with the core (next to its rings), written by the
 * NF alone; they survive a --reattach (published again in the new region).
 *
 * @code
 * int hits = xnv_nf_stat_register(nf, "rule_hits");   // once, after init
 * ...
 * xnv_nf_stat_add(nf, hits, 1);                       // in the handler
 * @endcode
 */
#define XNV_NF_STATS_MAX     16	/**< counters one NF may publish */
#define XNV_NF_STAT_NAME_MAX 31	/**< characters of a counter's name */

/**
 * Publish a counter named @p name (1..XNV_NF_STAT_NAME_MAX characters of
 * A-Z a-z 0-9 _ . -), starting at 0.
 * @return its slot (0..XNV_NF_STATS_MAX-1) for xnv_nf_stat_add(), or
 *   -EINVAL (bad name), -EEXIST (this name is published already),
 *   -ENOSPC (all XNV_NF_STATS_MAX slots taken).  A core older than the
 *   stats area does not see the counters; they are still kept.
 */
int xnv_nf_stat_register(struct xnv_nf *nf, const char *name);

/** Add @p n to the counter in @p slot (a slot not registered: nothing).
 *  Cheap enough for the handler: two stores, no lock, no call into the
 *  core. */
void xnv_nf_stat_add(struct xnv_nf *nf, int slot, uint64_t n);

/** Set the counter in @p slot to @p v (e.g. a gauge such as a table's
 *  fill). */
void xnv_nf_stat_set(struct xnv_nf *nf, int slot, uint64_t v);

/** Service id the core gave this NF (for XNV_TO_SERVICE peers). */
uint16_t xnv_nf_service_id(const struct xnv_nf *nf);

/** Number of ports the core has (valid XNV_OUT arguments: 0..n-1). */
uint16_t xnv_nf_port_count(const struct xnv_nf *nf);

/** Name of this instance, as given by --name or derived. */
const char *xnv_nf_name(const struct xnv_nf *nf);

/** @return pointer to the first byte of packet data. */
static inline uint8_t *
xnv_pkt_data(struct xnv_pkt *pkt)
{
	return pkt->buf + pkt->off;
}

/** @return packet length in bytes. */
static inline uint32_t
xnv_pkt_len(const struct xnv_pkt *pkt)
{
	return pkt->len;
}

/** @return bytes free in front of the data (room for xnv_pkt_prepend). */
static inline uint32_t
xnv_pkt_headroom(const struct xnv_pkt *pkt)
{
	return pkt->off;
}

/** @return bytes free after the data (room for xnv_pkt_append). */
static inline uint32_t
xnv_pkt_tailroom(const struct xnv_pkt *pkt)
{
	return pkt->buf_size - pkt->off - pkt->len;
}

/**
 * Grow the packet at the front by @p n bytes (e.g. push a header).
 * @return pointer to the new first byte, or NULL (packet unchanged) if the
 *   headroom is smaller than @p n.
 */
static inline uint8_t *
xnv_pkt_prepend(struct xnv_pkt *pkt, uint32_t n)
{
	if (n > pkt->off)
		return NULL;
	pkt->off -= n;
	pkt->len += n;
	return pkt->buf + pkt->off;
}

/**
 * Remove @p n bytes from the front (e.g. pop a header).
 * @return pointer to the new first byte, or NULL (unchanged) if n > len.
 */
static inline uint8_t *
xnv_pkt_adj(struct xnv_pkt *pkt, uint32_t n)
{
	if (n > pkt->len)
		return NULL;
	pkt->off += n;
	pkt->len -= n;
	return pkt->buf + pkt->off;
}

/**
 * Grow the packet at the end by @p n bytes.
 * @return pointer to the first added byte, or NULL (unchanged) if the
 *   tailroom is smaller than @p n.
 */
static inline uint8_t *
xnv_pkt_append(struct xnv_pkt *pkt, uint32_t n)
{
	if (n > xnv_pkt_tailroom(pkt))
		return NULL;
	pkt->len += n;
	return pkt->buf + pkt->off + pkt->len - n;
}

/** Remove @p n bytes from the end.  @return 0, or -1 (unchanged) if n > len. */
static inline int
xnv_pkt_trim(struct xnv_pkt *pkt, uint32_t n)
{
	if (n > pkt->len)
		return -1;
	pkt->len -= n;
	return 0;
}

/** @return the port the packet came in on. */
static inline uint16_t
xnv_pkt_in_port(const struct xnv_pkt *pkt)
{
	return pkt->in_port;
}

/** @return the flow hash the core computed (0 if none). */
static inline uint32_t
xnv_pkt_hash(const struct xnv_pkt *pkt)
{
	return pkt->hash;
}

#ifdef __cplusplus
}
#endif

#endif /* XNV_NF_H */

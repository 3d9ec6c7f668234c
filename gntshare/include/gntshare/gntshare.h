/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gntshare: share memory regions between domains.
 *
 * A *region* is a set of pages one domain (Dom0 / xnv-core) owns and grants
 * to other domains.  A *grant* names one (region, domain) pair; the grantee
 * gets a *reference* it can map.  Revoking a grant stops new mappings; a
 * mapping already made stays valid until the grantee unmaps it (on Xen the
 * page stays busy until then, see gntshare/README.md).
 *
 * Two backends implement this API:
 *   host  regions are memfds (MFD_HUGETLB 2 MiB pages when reserved, else
 *         normal pages, logged once); "domains" are processes that attached
 *         over xnv-core's unix socket; the core passes a region's fd with
 *         SCM_RIGHTS only to a domain the region is granted to.
 *   xen   regions are pinned and granted per domid through the hypervisor's
 *         grant table; the hypervisor refuses a ref to any other domain.
 *         Without the gntshare kernel module, the gntalloc fallback can
 *         only allocate new pages already granted to one domain: regions
 *         for a domain are then made by gnts_region_create_for(), and a
 *         region is never shared (gnts_region_shareable() says which).
 * In host mode the reference of a region is its region id (the same for all
 * grantees); the grant table below decides who may map it.
 *
 * Errors are negative errno values; nothing here calls exit().
 */
#ifndef GNTSHARE_GNTSHARE_H
#define GNTSHARE_GNTSHARE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Who a region is granted to: a peer of the core.  Host backend: an id
 * the core's socket server assigns per connection.  Xen backend: one NF
 * device of a domain, GNTS_XEN_PEER(domid, devid) (xen.h).  Only the
 * backend knows how to print one (gnts_srv_peer_str(), backend.h). */
typedef uint32_t gnts_peer_t;
typedef uint32_t gnts_ref_t;

#define GNTS_PEER_CORE     0u		/* the granting side (Dom0) */
#define GNTS_REF_INVALID   0u
#define GNTS_MAX_REGIONS   1024u
#define GNTS_MAX_GRANTEES  64u
#define GNTS_NAME_LEN      32u
#define GNTS_HUGE_PAGE     (2u << 20)
#define GNTS_SMALL_PAGE    4096u

/* gnts_region_create() flags */
#define GNTS_F_HUGE      0x1u	/* try 2 MiB hugetlb pages first */
#define GNTS_F_NO_FALLBACK 0x2u	/* with GNTS_F_HUGE: fail instead of 4 KiB */

struct gnts_grant;	/* private to libgntshare */

/* Dom0-private description of one region. */
struct gnts_region {
	gnts_ref_t ref;			/* region id; reference in host mode */
	char name[GNTS_NAME_LEN];
	void *va;			/* Dom0 mapping */
	size_t size;			/* bytes, multiple of page_size */
	size_t page_size;		/* GNTS_HUGE_PAGE or GNTS_SMALL_PAGE */
	int fd;				/* memfd, or -1 (engine pages) */
	uint8_t engine_made;		/* pages made by the grant engine for
					 * one peer: their grant ends at
					 * destroy */
	unsigned n_grants;		/* peers it is granted to */
	struct gnts_grant *grants;	/* GNTS_MAX_GRANTEES, private */
};

/**
 * Allocate a zeroed region of at least @p size bytes, registered in the
 * process-wide grant table under a fresh reference.
 * @return 0 and *out, or -ENOMEM / -EMFILE / -ENOSPC (table full).
 */
int gnts_region_create(const char *name, size_t size, unsigned flags,
		       struct gnts_region **out);

/**
 * A region for domain @p dom alone: gnts_region_create() then
 * gnts_region_grant(r, dom, readonly), in one step.  Under the gntalloc
 * fallback of the xen backend this is the only way to make a region a
 * domain can map (gntalloc allocates the pages already granted to one
 * domid; @p flags are ignored, pages are 4 KiB).
 * @return 0 and *out, or a negative errno with one line in @p err (under
 *   gntalloc: the pages asked for and the limits to raise).
 */
int gnts_region_create_for(const char *name, size_t size, unsigned flags,
			   gnts_peer_t dom, int readonly,
			   struct gnts_region **out, char *err, size_t errlen);

/**
 * 1 if one region can be granted to several domains (host backend, xen
 * backend with the gntshare module); 0 under the gntalloc fallback, where
 * every region belongs to the one domain it was made for.
 */
int gnts_region_shareable(void);

/** Unregister, unmap and free a region (all grants end). */
void gnts_region_destroy(struct gnts_region *r);

/**
 * Grant @p r to domain @p dom.  Granting again to the same domain keeps
 * one grant and sets its read-only flag to @p readonly.
 * @return 0, or -ENOSPC when GNTS_MAX_GRANTEES domains hold it already,
 *   or -EOPNOTSUPP under the gntalloc fallback for anything but the grant
 *   the region was made with.
 */
int gnts_region_grant(struct gnts_region *r, gnts_peer_t dom, int readonly);

/**
 * End the grant of @p r to @p dom.
 * @return pages still mapped by @p dom that could not be reclaimed yet
 *   (always 0 in host mode: the grantee's mapping keeps its own reference;
 *   on Xen see gnts_region_busy()), or -ENOENT if there was no such grant.
 *   Under the gntalloc fallback the grant is only forgotten here; it ends
 *   when the region is destroyed (0).
 */
int gnts_region_revoke(struct gnts_region *r, gnts_peer_t dom);

/** The refs of the grant of @p r to @p peer (NULL if none, or if the
 *  engine's grants have no refs, as in host mode). */
const uint32_t *gnts_region_refs(const struct gnts_region *r,
				 gnts_peer_t peer, uint32_t *n);

/** End every grant held by @p dom on every region (domain death). */
void gnts_revoke_domain(gnts_peer_t dom);

/**
 * Grant check.  @return the region if @p ref is granted to @p dom (with
 * *readonly set), else NULL.
 */
struct gnts_region *gnts_region_lookup(gnts_ref_t ref, gnts_peer_t dom,
				       int *readonly);

/** Region by reference whatever its grants (for error messages). */
struct gnts_region *gnts_region_find(gnts_ref_t ref);

/**
 * Frames of ended grants to @p peer that it still maps (every region).
 * 0 once all have ended, and always 0 where mappings keep their own
 * reference (host mode, gntalloc).  Never reuse memory a peer was granted
 * while this is above zero.
 */
unsigned gnts_region_busy(gnts_peer_t peer);

/**
 * Grant entries the domain of @p peer holds: 4 KiB frames of every live
 * grant to any peer of that domain (on Xen: every NF device of the domid),
 * plus frames of ended grants it still maps (also in *@p busy if not
 * NULL).  What a per-domain budget of grant entries is checked against.
 */
unsigned gnts_domain_frames(gnts_peer_t peer, unsigned *busy);

/** The grant engine in use: "memfd", "kgrant" or "gntalloc". */
const char *gnts_grant_engine_name(void);

/** Pages the grant engine holds, or -1 where it does not count them. */
long gnts_grant_engine_pages(void);

/** 1 if hugetlb memfds work on this system (cached after the first call). */
int gnts_hugepages_available(void);

/* Log levels passed to the logger (syslog numbering). */
#define GNTS_LOG_ERR     3
#define GNTS_LOG_WARNING 4
#define GNTS_LOG_INFO    6

/**
 * The start of every log line of the project (docs/DESIGN.md, "Log
 * lines"): the UTC time to the millisecond and the level, then a blank:
 * "2026-11-24T21:50:54.123Z ERROR ".  @p level: a syslog priority
 * (GNTS_LOG_*; 0..7: EMERG ALERT CRIT ERROR WARN NOTICE INFO DEBUG).
 * @return its length (< @p len, at most GNTS_LOG_STAMP_MAX - 1).
 */
#define GNTS_LOG_STAMP_MAX 40
size_t gnts_log_stamp(int level, char *buf, size_t len);

/** Where gntshare's messages go; default: stderr, a log line (stamp)
 *  "gntshare: ...".  The core routes them into RTE_LOG. */
void gnts_set_logger(void (*fn)(int level, const char *msg));

/** Log through the current logger (printf-style). */
void gnts_log(int level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/**
 * A string from a peer (NF name, service, group, a guest's XenStore node),
 * made safe to print: at most @p max bytes of @p s are read (it need not
 * be terminated), a byte outside printable ASCII or a backslash becomes
 * "\xNN", and the result is cut (ending in "...") to fit @p len.
 * @return @p buf.
 */
const char *gnts_esc(const char *s, size_t max, char *buf, size_t len);

/* Room for gnts_esc() of @p n bytes, nothing cut. */
#define GNTS_ESC_LEN(n) (4 * (n) + 1)

/*
 * Lines a peer can cause (a refused request, a closed connection) are
 * logged at most @p per_s per second; the rest are counted, and the
 * count is logged once the second is over ("N more not logged").
 */
struct gnts_ratelimit {
	uint64_t window_ms;	/* start of the current second */
	uint32_t logged;	/* lines logged in it */
	uint32_t quiet;		/* lines not logged since the last report */
};

/** 1 if a line may be logged now; else counts it in rl->quiet. */
int gnts_ratelimit(struct gnts_ratelimit *rl, uint32_t per_s,
		   uint64_t now_ms);

/** Lines not logged and not yet reported, once their second is over
 *  (then reset to 0); 0 before. */
uint32_t gnts_ratelimit_quiet(struct gnts_ratelimit *rl, uint64_t now_ms);

/** CLOCK_MONOTONIC in milliseconds. */
uint64_t gnts_now_ms(void);

#ifdef __cplusplus
}
#endif

#endif /* GNTSHARE_GNTSHARE_H */

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * NF attach / detach.  An attaching NF gets a ring region granted to it
 * alone and a grant on its trust group's pool, or a pool of its own
 * (nf_pools = own; the xen backend under gntalloc); a detaching one
 * (hang-up, bye, or quarantine by the core) loses both, and every buffer
 * it owned goes back to the pool (its own pool goes once they are home).
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_mbuf.h>

#include <gntshare/backend.h>

#include "core.h"

static struct xnv_nfrec *
nf_by_dom(struct xnv_core *c, gnts_peer_t dom)
{
	unsigned i;

	for (i = 0; i < XNV_MAX_NFS; i++)
		if (c->nfs[i].state == XNV_REC_ATTACHED && c->nfs[i].dom == dom)
			return &c->nfs[i];
	return NULL;
}

/* A free slot, else the oldest record of a gone NF. */
static struct xnv_nfrec *
nf_slot(struct xnv_core *c)
{
	unsigned i;

	for (i = 0; i < XNV_MAX_NFS; i++)
		if (c->nfs[i].state == XNV_REC_FREE)
			return &c->nfs[i];
	for (i = 0; i < XNV_MAX_NFS; i++)
		if (c->nfs[i].state == XNV_REC_GONE &&
		    c->nfs[i].ring_region == NULL && c->nfs[i].pend.n == 0)
			return &c->nfs[i];
	return NULL;
}

static void
list_names(const char *first, size_t stride, unsigned n, char *buf,
	   size_t len)
{
	size_t o = 0;
	unsigned i;

	buf[0] = '\0';
	for (i = 0; i < n && o < len; i++)
		o += (size_t)snprintf(buf + o, len - o, "%s%s", i ? ", " : "",
				      first + i * stride);
}

/* "a, b, c": the names of a config array (services, groups). */
#define LIST_NAMES(arr, n, buf) \
	list_names((arr)[0].name, sizeof((arr)[0]), (n), (buf), sizeof(buf))

/*
 * An NF can hold a ring's worth of buffers.  When the NFs of a pool
 * together can hold all of it, ports (or copies into it) run out of
 * buffers (rx_nombuf, stalls): say so once per pool, when it starts to be
 * true.
 */
static void
warn_ring_capacity(struct xnv_core *c, uint16_t pool)
{
	const struct xnv_pool *p = &c->pools[pool];
	uint64_t cap = 0;
	uint16_t i;

	for (i = 0; i < c->n_active; i++)
		if (c->nfs[c->active[i]].pool == pool)
			cap += c->cfg.ring_size;
	if (cap >= p->n_bufs && cap < p->n_bufs + c->cfg.ring_size)
		XLOG(WARNING, "group %s%s: its NFs' rings (%" PRIu64 " slots) can "
		     "hold the whole pool (%u buffers): ports may run out of "
		     "buffers (rx_nombuf); raise pool_bufs or lower ring_size\n",
		     c->cfg.groups[p->group].name, p->own ? ", an NF's own pool" :
		     "", cap, p->n_bufs);
}

/* A string of a request (name, service, group), whatever its bytes,
 * for a log line or a reply: escaped and cut (gnts_esc). */
#define REQ_ESC_LEN 48
#define REQ_ESC(field, buf) \
	gnts_esc((field), sizeof(field), (buf), sizeof(buf))

/* Does the config know @p req's service and group?  (xen: checked when a
 * domain registers, before it boots.) */
int
xnv_rec_check(void *ctx, const struct gnts_attach_req *req, char *err,
	      size_t errlen)
{
	struct xnv_core *c = ctx;
	char known[128], esc[REQ_ESC_LEN];

	if (xnv_config_service(&c->cfg, req->service) < 0) {
		LIST_NAMES(c->cfg.services, c->cfg.n_services, known);
		snprintf(err, errlen, "unknown service '%s' (configured: %s)",
			 REQ_ESC(req->service, esc), known[0] ? known : "none");
		return -ENOENT;
	}
	if (xnv_config_group(&c->cfg, req->group) < 0) {
		LIST_NAMES(c->cfg.groups, c->cfg.n_groups, known);
		snprintf(err, errlen, "unknown trust group '%s' (configured: "
			 "%s)", REQ_ESC(req->group, esc), known);
		return -ENOENT;
	}
	return 0;
}

/* A name the logs and stats can print as is, and no attached NF's: the
 * log and the stats must tell two NFs apart. */
static int
check_name(const struct xnv_core *c, const char *name, char *err,
	   size_t errlen)
{
	unsigned i;

	if (name[0] == '\0') {
		snprintf(err, errlen, "NF name is empty");
		return -EINVAL;
	}
	for (const char *p = name; *p; p++)
		if (!isalnum((unsigned char)*p) && !strchr("-_.", *p)) {
			snprintf(err, errlen, "NF name may hold only letters, "
				 "digits and - _ .");
			return -EINVAL;
		}
	for (i = 0; i < XNV_MAX_NFS; i++)
		if (c->nfs[i].state == XNV_REC_ATTACHED &&
		    strcmp(c->nfs[i].name, name) == 0) {
			snprintf(err, errlen, "an NF named %s is already "
				 "attached", name);
			return -EEXIST;
		}
	return 0;
}

/* A good name, a known service and group that @p cred may join (host
 * mode; a Xen domain's config decided already), a free instance slot
 * (the lowest: a restarted replica takes the slot, and so the flows, of
 * the one it replaces).  Who may join is asked before whether the name
 * is taken: a refused peer learns nothing about the NFs attached. */
static int
check_req(struct xnv_core *c, const struct gnts_peer_cred *cred,
	  const struct gnts_attach_req *req, int *s, int *g, int *slot,
	  char *err, size_t errlen)
{
	int rc;

	rc = xnv_rec_check(c, req, err, errlen);
	if (rc < 0)
		return rc;
	*s = xnv_config_service(&c->cfg, req->service);
	*g = xnv_config_group(&c->cfg, req->group);
	if (cred->known &&
	    (rc = xnv_config_may_join(&c->cfg, (uint16_t)*g, (uint16_t)*s,
				      cred->uid, cred->gid, err,
				      errlen)) < 0)
		return rc;
	rc = check_name(c, req->name, err, errlen);
	if (rc < 0)
		return rc;
	*slot = xnv_service_free_slot(&c->services[*s]);
	if (*slot >= 0)
		return 0;
	snprintf(err, errlen, "service %s already has %d instances",
		 req->service, XNV_MAX_INSTANCES);
	return -ENOSPC;
}

/* @p nf's ring region, granted to @p dom alone, formatted, its rings in
 * @p ports.  On error the region (if made) is left for the caller. */
static int
ring_region_make(struct xnv_core *c, struct xnv_nfrec *nf, gnts_peer_t dom,
		 const char *name, struct gnts_ring_port *ports, char *err,
		 size_t errlen)
{
	char rname[GNTS_NAME_LEN];
	int rc;

	snprintf(rname, sizeof(rname), "xnv-ring-%.22s", name);
	rc = gnts_region_create_for(rname,
				    gnts_ring_region_bytes(c->cfg.ring_size),
				    0, dom, 0, &nf->ring_region, err, errlen);
	if (rc == 0 &&
	    ((rc = gnts_ring_region_format(nf->ring_region->va,
					   nf->ring_region->size,
					   c->cfg.ring_size)) < 0 ||
	     (rc = gnts_ring_region_attach(nf->ring_region->va,
					   nf->ring_region->size,
					   c->cfg.ring_size, ports)) < 0))
		snprintf(err, errlen, "cannot set up rings: %s", strerror(-rc));
	return rc;
}

/* A pool of its own, or a grant on its group's. */
static int
pool_give(struct xnv_core *c, struct xnv_nfrec *nf, gnts_peer_t dom,
	  const char *group, char *err, size_t errlen)
{
	int rc;

	if (c->own_pools)
		return xnv_pool_create_own(c, nf, err, errlen);
	rc = gnts_region_grant(c->pools[nf->group].region, dom, 0);
	if (rc < 0)
		snprintf(err, errlen, "cannot grant the pool of group %s: %s",
			 group, strerror(-rc));
	return rc;
}

/* @p nf is live: polled, one of @p s's replicas in instance @p slot. */
static void
join_service(struct xnv_core *c, struct xnv_nfrec *nf, uint16_t s,
	     int slot, const struct gnts_ring_port *ports, uint32_t alloc)
{
	nf->rx = ports[GNTS_RING_RX];
	nf->tx = ports[GNTS_RING_TX];
	nf->free = ports[GNTS_RING_FREE];
	nf->alloc_want = RTE_MIN(alloc, c->cfg.ring_size);
	nf->max_held = xnv_quota(c->cfg.max_held, c->cfg.ring_size,
				 nf->alloc_want);
	nf->ctl = gnts_ring_region_ctl(nf->ring_region->va);
	/* The core formatted the region: the area is where proto.h says. */
	nf->stats = (struct gnts_nf_stat *)((char *)nf->ring_region->va +
					     GNTS_RING_STATS_OFF);
	nf->beat_tsc = nf->bad_window_tsc = rte_rdtsc();
	nf->state = XNV_REC_ATTACHED;
	/* Its service's worker polls it from now on (worker.h). */
	nf->worker = c->cfg.services[s].worker;
	xnv_ids_remove(c->active, &c->n_active, nf->id);	/* a drained old slot */
	c->active[c->n_active++] = nf->id;
	nf->instance = (uint16_t)slot;
	xnv_service_join(&c->services[s], slot, nf->id);
}

static void
fill_rsp(const struct xnv_core *c, const struct xnv_nfrec *nf,
	 gnts_peer_t dom, struct gnts_attach_rsp *rsp)
{
	const struct xnv_pool *pool = &c->pools[nf->pool];

	memset(rsp, 0, sizeof(*rsp));
	rsp->domid = dom;
	rsp->nf_id = nf->id;
	rsp->service_id = c->cfg.services[nf->service].id;
	rsp->ring_ref = nf->ring_region->ref;
	rsp->ring_size = c->cfg.ring_size;
	rsp->ring_bytes = nf->ring_region->size;
	rsp->pool_ref = pool->region->ref;
	rsp->pool_bufs = pool->n_bufs;
	rsp->buf_size = pool->buf_size;
	rsp->pool_bytes = pool->region->size;
	rsp->n_ports = c->cfg.n_ports;
}

/* One line per attach, in the backend's terms. */
static void
log_attach(const struct xnv_core *c, const struct xnv_nfrec *nf, pid_t pid)
{
	const struct xnv_pool *pool = &c->pools[nf->pool];
	char pdesc[96], who[96];

	if (pool->own)
		snprintf(pdesc, sizeof(pdesc), "its own (#%u, %u buffers): "
			 "packets from other pools are copied in", nf->pool,
			 pool->n_bufs);
	else
		snprintf(pdesc, sizeof(pdesc), "the group's (zero copy)");
	XLOG(INFO, "NF %s %s: service %s, group %s, ring region %u, pool "
	     "region %u (%zu KiB); pool: %s\n", nf->name,
	     gnts_srv_attach_words(c->srv, nf->dom, pid, who, sizeof(who)),
	     c->cfg.services[nf->service].name, c->cfg.groups[nf->group].name,
	     nf->ring_region->ref,
	     pool->region->ref, pool->region->size >> 10, pdesc);
}

static int
nf_attach(struct xnv_core *c, gnts_peer_t dom,
	  const struct gnts_peer_cred *cred, const struct gnts_attach_req *req,
	  struct gnts_bell *bell, struct gnts_attach_rsp *rsp, char *err,
	  size_t errlen)
{
	struct gnts_ring_port ports[GNTS_RING_COUNT];
	struct xnv_nfrec *nf;
	int s, g, rc, slot;

	rc = check_req(c, cred, req, &s, &g, &slot, err, errlen);
	if (rc == 0)
		rc = xnv_quota_check_alloc(req->alloc_bufs, c->cfg.ring_size,
					   c->cfg.max_held, err, errlen);
	if (rc == 0)
		rc = xnv_dom_admit(c, dom, (uint16_t)g, err, errlen);
	if (rc < 0)
		return rc;
	nf = nf_slot(c);
	if (nf == NULL) {
		snprintf(err, errlen, "core has no room for another NF (%d)",
			 XNV_MAX_NFS);
		return -ENOSPC;
	}
	memset(nf, 0, sizeof(*nf));
	nf->id = (uint16_t)(nf - c->nfs);
	nf->dom = dom;
	nf->pid = cred->pid;
	nf->service = (uint16_t)s;
	nf->group = (uint16_t)g;
	nf->pool = (uint16_t)g;
	snprintf(nf->name, sizeof(nf->name), "%s", req->name);
	rc = ring_region_make(c, nf, dom, req->name, ports, err, errlen);
	if (rc == 0)
		rc = pool_give(c, nf, dom, req->group, err, errlen);
	if (rc < 0) {
		gnts_region_destroy(nf->ring_region);
		gnts_revoke_domain(dom);
		memset(nf, 0, sizeof(*nf));
		return rc;
	}
	join_service(c, nf, (uint16_t)s, slot, ports, req->alloc_bufs);
	xnv_bell_attach(c, nf, bell);
	fill_rsp(c, nf, dom, rsp);
	log_attach(c, nf, cred->pid);
	warn_ring_capacity(c, nf->pool);
	xnv_update_rx_gates(c);
	return 0;
}

/* The reply names only what the peer asked for; the log says who asked
 * too.  Every string of the request is escaped: one line each. */
int
xnv_rec_attach(void *ctx, gnts_peer_t dom, const struct gnts_peer_cred *cred,
	       const struct gnts_attach_req *req, struct gnts_bell *bell,
	       struct gnts_attach_rsp *rsp, char *err, size_t errlen)
{
	struct xnv_core *c = ctx;
	char name[REQ_ESC_LEN], who[96];
	int rc;

	/* What the workers read (the NFs polled, the services' replicas)
	 * changes with the workers parked. */
	xnv_workers_park(c, 1);
	rc = nf_attach(c, dom, cred, req, bell, rsp, err, errlen);
	xnv_workers_park(c, 0);
	if (rc == 0)
		return 0;
	/* Any peer can cause these: at most XNV_REFUSAL_LOG_RATE lines a
	 * second, the rest counted (xnv_rec_sweep() says how many). */
	if (!gnts_ratelimit(&c->refusal_log, XNV_REFUSAL_LOG_RATE,
			    gnts_now_ms()))
		return rc;
	if (cred->known)
		snprintf(who, sizeof(who), "pid %d, uid %u, gid %u",
			 (int)cred->pid, (unsigned)cred->uid,
			 (unsigned)cred->gid);
	else
		gnts_srv_peer_words(c->srv, dom, who, sizeof(who));
	XLOG(WARNING, "attach of NF '%s' (%s) refused: %s\n",
	     REQ_ESC(req->name, name), who, err);
	return rc;
}


/*
 * The end of a departed NF: every buffer it still owns (its rx ring, its
 * hands, whatever of its tx ring was not taken) returns to the pool, and
 * its ring region goes.  The NF's own mapping of the pool may live on
 * (host mode) but those buffers are the core's again.  A pool of its own
 * is retired: destroyed by xnv_pools_sweep() once every buffer is home
 * (packets from it may still wait at a port).
 */
void
xnv_rec_finish(struct xnv_core *c, struct xnv_nfrec *nf)
{
	struct xnv_pool *pool = &c->pools[nf->pool];
	uint16_t tag = (uint16_t)(nf->id + 1);
	char who[64];
	uint32_t i;

	if (nf->ring_region == NULL)
		return;
	/* A peer that still maps frames it was granted (Xen) can still
	 * write them; its buffers stay out of use until it unmaps (or its
	 * domain is destroyed).  Asked at most every 10 ms; always 0 where
	 * mappings keep their own reference (host mode). */
	if (!c->shutting_down) {
		uint64_t now = rte_rdtsc();
		unsigned busy;

		if (now < nf->busy_tsc)
			return;
		nf->busy_tsc = now + c->tsc_hz / 100;
		busy = gnts_region_busy(nf->dom);
		if (busy > 0) {
			if (nf->busy_frames == 0)
				XLOG(INFO, "NF %s: %s still maps %u frames; "
				     "its buffers return when it unmaps\n",
				     nf->name, gnts_srv_peer_words(c->srv,
				     nf->dom, who, sizeof(who)), busy);
			nf->busy_frames = busy;
			return;
		}
	}
	for (i = 0; i < pool->n_bufs; i++) {
		if (pool->owner[i] != tag)
			continue;
		pool->owner[i] = 0;
		rte_pktmbuf_free(xnv_pool_mbuf(pool, i));
		nf->reclaimed++;
	}
	c->drops[XNV_DROP_RECLAIMED] += nf->reclaimed;
	nf->held = 0;
	nf->ctl = NULL;
	nf->stats = NULL;
	gnts_region_destroy(nf->ring_region);
	nf->ring_region = NULL;
	xnv_pool_retire(c, nf);
	XLOG(INFO, "NF %s (%s) detached: %s; rx %" PRIu64 " tx %" PRIu64
	     " drop %" PRIu64 " bad %" PRIu64 ", %" PRIu64 " buffers "
	     "reclaimed\n", nf->name,
	     gnts_srv_peer_words(c->srv, nf->dom, who, sizeof(who)),
	     nf->gone_reason, nf->rx_pkts, nf->tx_pkts, nf->drops, nf->bad,
	     nf->reclaimed);
}

void
xnv_rec_detach(struct xnv_core *c, struct xnv_nfrec *nf, const char *why)
{
	struct xnv_service *svc = &c->services[nf->service];

	if (nf->state != XNV_REC_ATTACHED)
		return;
	xnv_workers_park(c, 1);	/* what they read changes */
	/* Mark it gone first: the server's death callback below finds no
	 * attached NF for this domain and returns. */
	nf->state = XNV_REC_GONE;
	nf->gone_tsc = rte_rdtsc();
	snprintf(nf->gone_reason, sizeof(nf->gone_reason), "%s", why);
	/* The notice in shared memory comes first: it is all a guest has
	 * where there is no socket. */
	if (nf->ctl != NULL)
		gnts_ring_set_detached(nf->ctl, nf->detach_code ?
				       nf->detach_code : c->shutting_down ?
				       GNTS_DETACH_SHUTDOWN : GNTS_DETACH_OTHER);
	/* A sleeping NF wakes to read it; its doorbell is ours no more. */
	xnv_bell_detach(c, nf);
	xnv_service_leave(svc, nf->instance, nf->id);
	gnts_srv_detach(c->srv, nf->dom, c->shutting_down ||
			nf->detach_code == GNTS_DETACH_SHUTDOWN ? -ESHUTDOWN :
			nf->detach_code == GNTS_DETACH_SUSPEND ? -EAGAIN :
			-ECONNRESET, why);
	gnts_revoke_domain(nf->dom);
	/* What it handed back before it went (its tx ring) is the core's:
	 * its slot stays polled (xnv_rx_nf) until that ring is drained
	 * through the normal checks, or stall_timeout_ms has passed; then
	 * xnv_rec_finish() reclaims the rest. */
	/* Its worker lets go of it (its doorbell is out of that worker's
	 * set now): worker 0 drains and ends a departed NF. */
	nf->worker = 0;
	if (c->shutting_down)
		xnv_rec_finish(c, nf);
	xnv_workers_park(c, 0);
}

/* Stop polling departed NFs whose parked packets have all gone on; say
 * how many refused attaches went unlogged. */
void
xnv_rec_sweep(struct xnv_core *c)
{
	uint32_t quiet = gnts_ratelimit_quiet(&c->refusal_log, gnts_now_ms());
	uint16_t i = 0;

	if (quiet > 0)
		XLOG(WARNING, "%u more refused attaches not logged (at most %u "
		     "lines a second)\n", quiet, XNV_REFUSAL_LOG_RATE);

	while (i < c->n_active) {
		struct xnv_nfrec *nf = &c->nfs[c->active[i]];

		if (nf->state == XNV_REC_GONE && nf->ring_region == NULL &&
		    nf->pend.n == 0) {
			xnv_workers_park(c, 1);	/* they walk the list */
			xnv_ids_remove(c->active, &c->n_active, nf->id);
			xnv_workers_park(c, 0);
		} else {
			i++;
		}
	}
	xnv_pools_sweep(c);
}

void
xnv_rec_death(void *ctx, gnts_peer_t dom)
{
	struct xnv_core *c = ctx;
	struct xnv_nfrec *nf = nf_by_dom(c, dom);

	if (nf != NULL)
		xnv_rec_detach(c, nf, gnts_srv_death_words(c->srv));
}

void
xnv_rec_suspend(void *ctx, gnts_peer_t dom, const char *why)
{
	struct xnv_core *c = ctx;
	struct xnv_nfrec *nf = nf_by_dom(c, dom);

	/* As any detach (what it held comes home once it unmapped), but it
	 * is told to come back: GNTS_DETACH_SUSPEND, status -EAGAIN. */
	if (nf != NULL) {
		nf->detach_code = GNTS_DETACH_SUSPEND;
		xnv_rec_detach(c, nf, why);
	}
}

void
xnv_rec_map_denied(void *ctx, gnts_peer_t dom, gnts_ref_t ref,
		   const char *why)
{
	struct xnv_core *c = ctx;
	struct xnv_nfrec *nf = nf_by_dom(c, dom);
	char who[64];

	(void)ref;
	XLOG(WARNING, "NF %s (%s): %s\n", nf ? nf->name : "?",
	     gnts_srv_peer_words(c->srv, dom, who, sizeof(who)), why);
}

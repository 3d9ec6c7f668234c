/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Domains: budgets and quarantine per domain, not per NF.
 *
 * An NF's limits (quota.h, guard.c) end with the NF; a domain can start
 * the next one.  So what one domain may hold is bounded here, checked
 * before anything is granted to it:
 *   - max_nfs_per_domain NFs attached or still draining (a departed NF
 *     keeps its record until its buffers and ring are back);
 *   - max_grant_frames_per_domain grant entries: frames of its live
 *     grants plus revoked frames it still maps (gnts_domain_frames()),
 *     so no domain can fill Dom0's grant table;
 *   - none at all while it still maps frames revoked from an NF that
 *     left: they drain first.  Asking again more than
 *     XNV_HOSTILE_GRACE_MS after the revoke, still mapping them, is
 *     hostile (an honest NF unmaps before it closes its device, and a
 *     process that dies unmaps as it goes).
 * A hostile domain (that, or an NF of it quarantined: guard.c) is
 * remembered: its NFs are detached, every attach of it is refused, and
 * [core] on_hostile may pause or destroy it (the backend does that, in
 * its control thread).  It stays so until the backend says the domain
 * is gone or the operator releases it (xnv-ctl nf release).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_telemetry.h>

#include <gntshare/xen.h>

#include "core.h"
#include "ctl.h"

#define PAGE GNTS_SMALL_PAGE

/* Before the backend is open (or without one: the control-plane fuzzer)
 * a peer is its own domain. */
static uint32_t
dom_of(const struct xnv_core *c, gnts_peer_t peer)
{
	return c->srv != NULL ? gnts_srv_domain_of(c->srv, peer) : peer;
}

static const char *
words(const struct xnv_core *c, uint32_t domain, char *buf, size_t len)
{
	if (c->srv != NULL)
		return gnts_srv_domain_words(c->srv, domain, buf, len);
	snprintf(buf, len, "domain %u", domain);
	return buf;
}

/* Index of @p domain in the quarantine list, or -1. */
static int
hostile_idx(const struct xnv_core *c, uint32_t domain)
{
	int i;

	for (i = 0; i < XNV_MAX_HOSTILE; i++)
		if (c->hostile[i].used && c->hostile[i].domain == domain)
			return i;
	return -1;
}

static struct xnv_hostile *
find_hostile(struct xnv_core *c, uint32_t domain)
{
	int i = hostile_idx(c, domain);

	return i < 0 ? NULL : &c->hostile[i];
}

/* NFs of @p domain attached or draining; *@p oldest: when the first of
 * the draining ones left (0: none). */
static unsigned
count_nfs(const struct xnv_core *c, uint32_t domain, uint64_t *oldest)
{
	unsigned i, n = 0;

	*oldest = 0;
	for (i = 0; i < XNV_MAX_NFS; i++) {
		const struct xnv_nfrec *nf = &c->nfs[i];
		int draining = nf->state == XNV_REC_GONE &&
			       nf->ring_region != NULL;

		if ((nf->state != XNV_REC_ATTACHED && !draining) ||
		    dom_of(c, nf->dom) != domain)
			continue;
		n++;
		if (draining && (*oldest == 0 || nf->gone_tsc < *oldest))
			*oldest = nf->gone_tsc;
	}
	return n;
}

/* Grant entries one NF of group @p g takes: its ring region, the pool
 * (its group's, or one of its own of the same size), the directory
 * pages of the pool's refs (xen.h). */
static uint32_t
nf_frames(const struct xnv_core *c, uint16_t g)
{
	uint32_t ring = (uint32_t)RTE_ALIGN_CEIL(
		gnts_ring_region_bytes(c->cfg.ring_size), PAGE) / PAGE;
	uint32_t pool = (uint32_t)(c->pools[g].region->size / PAGE);

	return ring + pool + (pool + GNTS_XEN_REFS_PER_DIR - 1) /
	       GNTS_XEN_REFS_PER_DIR;
}

int
xnv_dom_policy_check(const struct xnv_config *cfg, const char *kind,
		     char *err, size_t errlen)
{
	const struct gnts_srv_ops *ops = gnts_srv_backend(kind ? kind : "host");

	if (cfg->on_hostile == XNV_HOSTILE_REFUSE ||
	    (ops != NULL && ops->punish != NULL))
		return 0;
	snprintf(err, errlen, "%s:%u: [core] on_hostile = %s: the %s backend "
		 "cannot pause or destroy a domain (xen can); use refuse",
		 cfg->path, cfg->on_hostile_line,
		 xnv_config_hostile_name(cfg->on_hostile),
		 kind ? kind : "host");
	return -ENOTSUP;
}

void
xnv_dom_setup(struct xnv_core *c)
{
	uint32_t most = 0;
	uint16_t g;

	for (g = 0; g < c->cfg.n_groups; g++)
		most = RTE_MAX(most, nf_frames(c, g));
	c->dom_frames = c->cfg.max_grant_frames_per_domain;
	if (c->dom_frames == 0)
		c->dom_frames = most * c->cfg.max_nfs_per_domain;
	XLOG(INFO, "per domain: at most %u NFs attached or draining and %u "
	     "grant frames%s (an NF takes up to %u); on_hostile = %s\n",
	     c->cfg.max_nfs_per_domain, c->dom_frames,
	     c->cfg.max_grant_frames_per_domain ? "" :
	     " (max_grant_frames_per_domain derived)", most,
	     xnv_config_hostile_name(c->cfg.on_hostile));
}

/* Revoked frames still mapped: refused; hostile past the grace. */
static int
refuse_busy(struct xnv_core *c, gnts_peer_t dom, unsigned busy,
	    uint64_t oldest, char *err, size_t errlen)
{
	uint64_t ms = oldest ? (rte_rdtsc() - oldest) * 1000 / c->tsc_hz : 0;
	char why[128], w[32];

	words(c, dom_of(c, dom), w, sizeof(w));
	snprintf(why, sizeof(why), "asked to attach again while it still "
		 "maps %u frames revoked %" PRIu64 " ms ago", busy, ms);
	if (ms < XNV_HOSTILE_GRACE_MS) {
		snprintf(err, errlen, "%s still maps %u frames of an NF that "
			 "left %" PRIu64 " ms ago: it may attach again once it "
			 "unmaps them", w, busy, ms);
		return -EBUSY;
	}
	xnv_dom_hostile(c, dom, why);
	snprintf(err, errlen, "%s is quarantined: %s", w, why);
	return -EPERM;
}

int
xnv_dom_admit(struct xnv_core *c, gnts_peer_t dom, uint16_t g, char *err,
	      size_t errlen)
{
	uint32_t domain = dom_of(c, dom), need = nf_frames(c, g);
	struct xnv_hostile *h = find_hostile(c, domain);
	unsigned n, frames, busy;
	uint64_t oldest;
	char w[32];

	words(c, domain, w, sizeof(w));
	if (h != NULL) {
		h->refused++;
		snprintf(err, errlen, "%s is quarantined since %" PRIu64 " s: "
			 "%s (xnv-ctl nf release %u clears it)", w,
			 (rte_rdtsc() - h->since_tsc) / c->tsc_hz, h->why,
			 domain);
		return -EPERM;
	}
	n = count_nfs(c, domain, &oldest);
	frames = gnts_domain_frames(dom, &busy);
	if (busy > 0)
		return refuse_busy(c, dom, busy, oldest, err, errlen);
	if (n >= c->cfg.max_nfs_per_domain) {
		snprintf(err, errlen, "%s has %u NFs attached or draining: "
			 "max_nfs_per_domain = %u", w, n,
			 c->cfg.max_nfs_per_domain);
		return -ENOSPC;
	}
	if ((uint64_t)frames + need > c->dom_frames) {
		snprintf(err, errlen, "%s would hold %u grant frames (%u now, "
			 "%u for this NF): over max_grant_frames_per_domain = "
			 "%u%s", w, frames + need, frames, need, c->dom_frames,
			 c->cfg.max_grant_frames_per_domain ? "" :
			 " (derived)");
		return -EDQUOT;
	}
	return 0;
}

static const char *const hostile_action[] = {
	[XNV_HOSTILE_REFUSE] = "its NFs are detached and its attaches "
			       "refused until it is gone",
	[XNV_HOSTILE_PAUSE] = "its NFs are detached, the domain paused, its "
			      "attaches refused until it is gone",
	[XNV_HOSTILE_DESTROY] = "its NFs are detached and the domain "
				"destroyed",
};

/* Record @p domain; NULL when the table is full (said once here). */
static struct xnv_hostile *
remember(struct xnv_core *c, uint32_t domain, const char *w, const char *why)
{
	unsigned i;

	for (i = 0; i < XNV_MAX_HOSTILE; i++) {
		struct xnv_hostile *h = &c->hostile[i];

		if (h->used)
			continue;
		memset(h, 0, sizeof(*h));
		h->used = 1;
		h->domain = domain;
		h->since_tsc = rte_rdtsc();
		snprintf(h->why, sizeof(h->why), "%s", why);
		return h;
	}
	XLOG(ERR, "%s: %u hostile domains remembered already: this one is "
	     "not kept quarantined\n", w, XNV_MAX_HOSTILE);
	return NULL;
}

void
xnv_dom_hostile(struct xnv_core *c, gnts_peer_t dom, const char *why)
{
	uint32_t domain = dom_of(c, dom);
	char w[32];
	unsigned i;

	if (c->in_hostile || find_hostile(c, domain) != NULL)
		return;
	words(c, domain, w, sizeof(w));
	(void)remember(c, domain, w, why);
	XLOG(WARNING, "%s is hostile: %s; on_hostile = %s: %s (or released: "
	     "xnv-ctl nf release %u)\n", w, why,
	     xnv_config_hostile_name(c->cfg.on_hostile),
	     hostile_action[c->cfg.on_hostile], domain);
	/* Its other NFs go too; their quarantine must not recurse here. */
	c->in_hostile = 1;
	for (i = 0; i < XNV_MAX_NFS; i++)
		if (c->nfs[i].state == XNV_REC_ATTACHED &&
		    dom_of(c, c->nfs[i].dom) == domain)
			xnv_rec_quarantine(c, &c->nfs[i],
					   "its domain is hostile");
	c->in_hostile = 0;
	if (c->cfg.on_hostile != XNV_HOSTILE_REFUSE && c->srv != NULL)
		(void)gnts_srv_punish(c->srv, domain,
				      c->cfg.on_hostile == XNV_HOSTILE_PAUSE ?
				      GNTS_PUNISH_PAUSE : GNTS_PUNISH_DESTROY,
				      why);
}

void
xnv_dom_gone(void *ctx, uint32_t domain)
{
	struct xnv_core *c = ctx;
	struct xnv_hostile *h = find_hostile(c, domain);
	char w[32];

	if (h == NULL)
		return;
	XLOG(INFO, "%s is gone: its quarantine ends (%u attaches refused)\n",
	     words(c, domain, w, sizeof(w)), h->refused);
	h->used = 0;
}

/* Domains with an NF attached or draining, or quarantined, into @p out
 * (each once). */
static unsigned
known_domains(const struct xnv_core *c, uint32_t *out, unsigned max)
{
	unsigned i, j, n = 0;

	for (i = 0; i < XNV_MAX_NFS + XNV_MAX_HOSTILE && n < max; i++) {
		uint32_t d;

		if (i < XNV_MAX_NFS) {
			const struct xnv_nfrec *nf = &c->nfs[i];

			if (nf->state != XNV_REC_ATTACHED &&
			    (nf->state != XNV_REC_GONE ||
			     nf->ring_region == NULL))
				continue;
			d = dom_of(c, nf->dom);
		} else if (c->hostile[i - XNV_MAX_NFS].used) {
			d = c->hostile[i - XNV_MAX_NFS].domain;
		} else {
			continue;
		}
		for (j = 0; j < n && out[j] != d; j++)
			;
		if (j == n)
			out[n++] = d;
	}
	return n;
}

/* What is known of @p domain now. */
struct dom_facts {
	unsigned nfs, frames, busy;
	const struct xnv_hostile *h;
};

static void
facts(const struct xnv_core *c, uint32_t domain, struct dom_facts *f)
{
	uint64_t oldest;
	unsigned i;
	int h = hostile_idx(c, domain);

	memset(f, 0, sizeof(*f));
	f->nfs = count_nfs(c, domain, &oldest);
	f->h = h < 0 ? NULL : &c->hostile[h];
	/* any peer of the domain names it to gnts_domain_frames() */
	for (i = 0; i < XNV_MAX_NFS; i++)
		if (c->nfs[i].state != XNV_REC_FREE &&
		    dom_of(c, c->nfs[i].dom) == domain) {
			f->frames = gnts_domain_frames(c->nfs[i].dom,
						       &f->busy);
			break;
		}
}

void
xnv_dom_print(const struct xnv_core *c, FILE *f)
{
	uint32_t doms[XNV_MAX_NFS + XNV_MAX_HOSTILE];
	unsigned i, n = known_domains(c, doms, RTE_DIM(doms));
	struct dom_facts x;

	for (i = 0; i < n; i++) {
		facts(c, doms[i], &x);
		fprintf(f, "  domain %u nfs %u frames %u busy %u quarantined "
			"%u refused %u\n", doms[i], x.nfs, x.frames, x.busy,
			x.h != NULL, x.h != NULL ? x.h->refused : 0);
	}
}

/* The domain number a command names, or -1 after answering with the
 * error. */
static long
cmd_domain(const char *p, struct rte_tel_data *d)
{
	long domain = xnv_ctl_id(p);

	if (domain < 0 || domain > UINT32_MAX) {
		xnv_ctl_error(d, "expected a domain number, got '%s'", p);
		return -1;
	}
	return domain;
}

void
xnv_cmd_domain_list(struct xnv_core *c, const char *p, struct rte_tel_data *d)
{
	uint32_t doms[XNV_MAX_NFS + XNV_MAX_HOSTILE];
	unsigned i, n = known_domains(c, doms, RTE_DIM(doms));

	(void)p;
	rte_tel_data_start_array(d, RTE_TEL_U64_VAL);
	for (i = 0; i < n; i++)
		rte_tel_data_add_array_u64(d, doms[i]);
}

void
xnv_cmd_domain_info(struct xnv_core *c, const char *p, struct rte_tel_data *d)
{
	long domain = cmd_domain(p, d);
	struct dom_facts x;
	char w[32];

	if (domain < 0)
		return;
	facts(c, (uint32_t)domain, &x);
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "domain", (uint64_t)domain);
	rte_tel_data_add_dict_string(d, "name", words(c, (uint32_t)domain, w,
						       sizeof(w)));
	rte_tel_data_add_dict_u64(d, "nfs", x.nfs);
	rte_tel_data_add_dict_u64(d, "max_nfs", c->cfg.max_nfs_per_domain);
	rte_tel_data_add_dict_u64(d, "frames", x.frames);
	rte_tel_data_add_dict_u64(d, "busy_frames", x.busy);
	rte_tel_data_add_dict_u64(d, "max_frames", c->dom_frames);
	rte_tel_data_add_dict_u64(d, "quarantined", x.h != NULL);
	rte_tel_data_add_dict_string(d, "reason", x.h ? x.h->why : "");
	rte_tel_data_add_dict_u64(d, "refused", x.h ? x.h->refused : 0);
}

void
xnv_cmd_nf_release(struct xnv_core *c, const char *p, struct rte_tel_data *d)
{
	long domain = cmd_domain(p, d);
	struct xnv_hostile *h;
	char w[32];

	if (domain < 0)
		return;
	words(c, (uint32_t)domain, w, sizeof(w));
	h = find_hostile(c, (uint32_t)domain);
	if (h == NULL) {
		xnv_ctl_error(d, "%s is not quarantined", w);
		return;
	}
	XLOG(WARNING, "%s released by the operator: it may attach again (was "
	     "quarantined %" PRIu64 " s ago: %s; %u attaches refused since)\n",
	     w, (rte_rdtsc() - h->since_tsc) / c->tsc_hz, h->why, h->refused);
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "domain", (uint64_t)domain);
	rte_tel_data_add_dict_string(d, "name", w);
	rte_tel_data_add_dict_string(d, "was", h->why);
	rte_tel_data_add_dict_u64(d, "refused", h->refused);
	h->used = 0;
}

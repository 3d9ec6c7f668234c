/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Domains (domain.c): what one domain may take (NFs, grant entries) and
 * the ones found hostile.  A domain is what the backend says outlives
 * one NF (gnts_srv_domain_of()): a Xen domid with all its NF devices; in
 * host mode a connection, so there a quarantine ends with it.
 */
#ifndef XNV_DOMAIN_H
#define XNV_DOMAIN_H

#include <stdint.h>
#include <stdio.h>

#include <gntshare/gntshare.h>

struct xnv_core;
struct rte_tel_data;

#define XNV_MAX_HOSTILE      64	/* hostile domains remembered */
#define XNV_HOSTILE_GRACE_MS 1000	/* revoked frames still mapped this
					 * long, and asking again: hostile */

/* A domain found hostile: refused until gone or released. */
struct xnv_hostile {
	uint32_t domain;
	uint8_t used;
	uint64_t since_tsc;
	uint32_t refused;		/* attaches refused since */
	char why[120];			/* the evidence (telemetry: < 128) */
};

struct xnv_config;
/** Can backend @p kind (NULL: host) do what [core] on_hostile asks?
 *  0, or -ENOTSUP and one line in @p err naming the key's FILE:LINE. */
int xnv_dom_policy_check(const struct xnv_config *cfg, const char *kind,
			 char *err, size_t errlen);
/** At start, pools made: derive max_grant_frames_per_domain if 0, log
 *  the limits. */
void xnv_dom_setup(struct xnv_core *c);
/** May @p dom attach an NF of group @p g now?  0, or -errno and one line
 *  in @p err naming the limit or the quarantine. */
int xnv_dom_admit(struct xnv_core *c, gnts_peer_t dom, uint16_t g,
		  char *err, size_t errlen);
/** @p dom's domain is hostile (@p why: the evidence): remembered, its
 *  NFs detached, on_hostile applied.  Once per domain until released. */
void xnv_dom_hostile(struct xnv_core *c, gnts_peer_t dom, const char *why);
/** struct gnts_srv_cb domain_gone: forget what was kept about it. */
void xnv_dom_gone(void *ctx, uint32_t domain);
/** One row per domain with NFs or a quarantine (the stats table). */
void xnv_dom_print(const struct xnv_core *c, FILE *f);
/* Telemetry: /xnv/domain/list, /xnv/domain/info, /xnv/nf/release. */
void xnv_cmd_domain_list(struct xnv_core *c, const char *p,
			 struct rte_tel_data *d);
void xnv_cmd_domain_info(struct xnv_core *c, const char *p,
			 struct rte_tel_data *d);
void xnv_cmd_nf_release(struct xnv_core *c, const char *p,
			struct rte_tel_data *d);

#endif /* XNV_DOMAIN_H */

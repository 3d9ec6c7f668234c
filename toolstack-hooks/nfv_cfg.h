/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The nfv_* keys of an xl domain config: parsed with libxlutil (the
 * parser xl itself uses), checked before any domain is created.
 *
 *   nfv_trust_group = "blue"     trust group (required)
 *   nfv_service     = "firewall" service the domain's NF provides (required)
 *   nfv_instances   = 1          NF devices (ring sets) of the domain, 1..16
 *   nfv_backend     = "drv"      the domain xnv-core runs in (a driver
 *                                domain, by name); default Dom0
 *
 * Any other key starting with nfv_ is an error (a typo must not silently
 * give a domain no NF role).
 */
#ifndef XNV_NFV_CFG_H
#define XNV_NFV_CFG_H

#include <stddef.h>
#include <stdio.h>

#define NFV_NAME_LEN 32u
#define NFV_MAX_INSTANCES 16

struct nfv_cfg {
	char name[64];			/* the domain's name = "..." */
	char group[NFV_NAME_LEN];
	char service[NFV_NAME_LEN];
	int instances;
	char backend[64];		/* a domain's name; "" for Dom0 */
};

/**
 * Parse @p len bytes of xl config text (@p file names it in messages;
 * libxlutil's own parse messages go to @p report).
 * @return 0, or -1 with one line in @p err ("FILE: what is wrong").
 */
int nfv_cfg_parse(const char *file, const char *data, size_t len,
		  FILE *report, struct nfv_cfg *out, char *err, size_t errlen);

#endif

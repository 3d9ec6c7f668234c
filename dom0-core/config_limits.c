/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * [core] keys that bound what one NF or one domain may take: an NF's
 * buffer quota (quota.h) and a domain's NFs, grant entries, and what
 * is done to a hostile one (domain.c).  Meanings: config.h.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <rte_cfgfile.h>
#include <rte_common.h>

#include "config.h"

#define GET(f, key) rte_cfgfile_get_entry((f), "core", (key))

static const char *const hostile_words[] = {
	[XNV_HOSTILE_REFUSE] = "refuse",
	[XNV_HOSTILE_PAUSE] = "pause",
	[XNV_HOSTILE_DESTROY] = "destroy",
};

const char *
xnv_config_hostile_name(unsigned v)
{
	return v < RTE_DIM(hostile_words) ? hostile_words[v] : "?";
}

static int
load_on_hostile(const char *v, struct xnv_config *c, char *err,
		size_t errlen)
{
	unsigned i;

	for (i = 0; i < RTE_DIM(hostile_words); i++)
		if (strcmp(v, hostile_words[i]) == 0) {
			c->on_hostile = (uint8_t)i;
			return 0;
		}
	snprintf(err, errlen, "[core] on_hostile = %s: expected refuse, "
		 "pause or destroy", v);
	return -EINVAL;
}

int
xnv_config_load_limits(struct rte_cfgfile *f, struct xnv_config *c,
		       char *err, size_t errlen)
{
	static const struct {
		const char *key;
		uint32_t min, max;
		size_t off;
	} nums[] = {
		{ "max_held", 0, 1u << 22,
		  offsetof(struct xnv_config, max_held) },
		{ "hoard_timeout_ms", 0, 600000,
		  offsetof(struct xnv_config, hoard_timeout_ms) },
		{ "max_nfs_per_domain", 1, 64,
		  offsetof(struct xnv_config, max_nfs_per_domain) },
		{ "max_grant_frames_per_domain", 0, 1u << 24,
		  offsetof(struct xnv_config, max_grant_frames_per_domain) },
	};
	const char *v;
	unsigned i;
	int rc;

	for (i = 0; i < RTE_DIM(nums); i++)
		if ((v = GET(f, nums[i].key)) != NULL &&
		    (rc = xnv_config_u32("core", nums[i].key, v, nums[i].min,
					 nums[i].max, (uint32_t *)(void *)
					 ((char *)c + nums[i].off), err,
					 errlen)) < 0)
			return rc;
	if ((v = GET(f, "on_hostile")) != NULL)
		return load_on_hostile(v, c, err, errlen);
	return 0;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Every key of every kind of section: the one list.  The parser refuses
 * any other key (config.c), and docs/CONFIG.md documents each of them
 * (tests/integration/test_check_config.py reads these tables and the
 * document and checks that they agree).  No DPDK.
 */
#include <stdio.h>
#include <string.h>

#include "config.h"

static const char *const core_keys[] = { "socket", "socket_mode",
	"socket_group", "ring_size", "burst", "stall_timeout_ms",
	"spill_threshold", "error_budget", "heartbeat_timeout_ms",
	"max_held", "hoard_timeout_ms", "max_nfs_per_domain",
	"max_grant_frames_per_domain", "on_hostile", "nf_pools",
	"latency", "log_buffer_kib", "workers", NULL };
static const char *const group_keys[] = { "pool_bufs", "buf_size",
	"allow_uids", "allow_gids", "may_send_to", NULL };
static const char *const port_keys[] = { "dev", "group", "chain",
	"rx_start", "rx_rate", "rx_interrupt", "rx_desc", "tx_desc", "fabric",
	"hop.N", NULL };
static const char *const service_keys[] = { "id", "allow_uids",
	"allow_gids", "worker", NULL };
static const char *const flow_keys[] = { XNV_FLOW_RULE_FIELDS, "chain",
	NULL };

static const struct {
	const char *kind;
	const char *const *keys;
} kinds[] = {
	{ "core", core_keys },
	{ "group", group_keys },
	{ "port", port_keys },
	{ "service", service_keys },
	{ "flow", flow_keys },
};

/* @p key is one of the keys @p pattern ("hop.N") stands for: its stem,
 * then anything (the section's loader checks the number). */
static int
numbered(const char *pattern, const char *key)
{
	size_t n = strlen(pattern);

	return n > 2 && strcmp(pattern + n - 2, ".N") == 0 &&
	       strncmp(pattern, key, n - 1) == 0 && key[n - 1] != '\0';
}

const char *const *
xnv_config_keys(const char *kind)
{
	size_t i;

	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (strcmp(kinds[i].kind, kind) == 0)
			return kinds[i].keys;
	return NULL;
}

int
xnv_config_key_check(const char *sec, const char *kind, const char *key,
		     char *err, size_t errlen)
{
	const char *const *k = xnv_config_keys(kind);
	size_t o;

	for (; k != NULL && *k != NULL; k++)
		if (strcmp(*k, key) == 0 || numbered(*k, key))
			return 0;
	o = (size_t)snprintf(err, errlen, "[%s]: unknown key '%s' (known:",
			     sec, key);
	for (k = xnv_config_keys(kind); k != NULL && *k != NULL &&
	     o < errlen; k++)
		o += (size_t)snprintf(err + o, errlen - o, "%s %s",
				      k == xnv_config_keys(kind) ? "" : ",",
				      *k);
	if (o < errlen)
		snprintf(err + o, errlen - o, ")");
	return -1;
}

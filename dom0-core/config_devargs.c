/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The devargs of the vdev drivers xnv-core knows; see config_devargs.h.
 * The key lists are DPDK 22.11's (each driver's valid_arguments, as
 * `strings librte_net_DRIVER.so.23` shows them); a driver that gains a
 * key in a later DPDK needs it added here.
 */
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>

#include <rte_kvargs.h>

#include "config_devargs.h"

static const char *const afp_keys[] = { "iface", "qpairs", "blocksz",
	"framesz", "framecnt", "qdisc_bypass", NULL };
static const char *const afp_ifaces[] = { "iface", NULL };

static const char *const pcap_keys[] = { "rx_pcap", "tx_pcap", "rx_iface",
	"rx_iface_in", "tx_iface", "iface", "phy_mac", "infinite_rx", NULL };
static const char *const pcap_ifaces[] = { "rx_iface", "rx_iface_in",
	"tx_iface", "iface", NULL };
static const char *const pcap_files[] = { "rx_pcap", "tx_pcap", NULL };
static const char *const pcap_rx[] = { "rx_pcap", "rx_iface",
	"rx_iface_in", "iface", NULL };

static const char *const null_keys[] = { "size", "copy", "no-rx", NULL };

static const char *const memif_keys[] = { "id", "role", "bsize", "rsize",
	"socket", "socket-abstract", "mac", "zero-copy", "secret", NULL };
static const char *const memif_files[] = { "socket", NULL };

/* net_ring ignores keys it does not know without a word. */
static const char *const ring_keys[] = { "nodeaction", "internal", NULL };

static const struct xnv_devargs_drv drivers[] = {
	{ .name = "net_af_packet", .keys = afp_keys, .ifaces = afp_ifaces },
	{ .name = "net_pcap", .keys = pcap_keys, .ifaces = pcap_ifaces,
	  .files = pcap_files, .rx = pcap_rx },
	{ .name = "net_null", .keys = null_keys },
	{ .name = "net_memif", .keys = memif_keys, .files = memif_files,
	  .files_when = "socket-abstract=no" },
	{ .name = "net_ring", .keys = ring_keys },
};

const struct xnv_devargs_drv *
xnv_devargs_drv(const char *dev)
{
	size_t i;

	/* DPDK's vdev bus matches a driver's name as a prefix too. */
	for (i = 0; i < sizeof(drivers) / sizeof(drivers[0]); i++)
		if (strncmp(dev, drivers[i].name,
			    strlen(drivers[i].name)) == 0)
			return &drivers[i];
	return NULL;
}

const char *
xnv_devargs_key(const char *arg, const char *const *keys)
{
	size_t n;

	for (; keys != NULL && *keys != NULL; keys++) {
		n = strlen(*keys);
		if (strncmp(arg, *keys, n) == 0 && arg[n] == '=')
			return *keys;
	}
	return NULL;
}

static int
listed(const char *key, const char *const *keys)
{
	for (; keys != NULL && *keys != NULL; keys++)
		if (strcmp(key, *keys) == 0)
			return 1;
	return 0;
}

/* The devargs of @p dev, every key one of @p keys (NULL: any key); NULL
 * if they cannot be parsed so (or at all: more pairs than rte_kvargs
 * holds). */
static struct rte_kvargs *
parse(const char *dev, const char *const *keys)
{
	const char *args = strchr(dev, ',');

	return rte_kvargs_parse(args != NULL ? args + 1 : "", keys);
}

/* @p keys joined by ", " into @p out. */
static void
join(const char *const *keys, char *out, size_t len)
{
	size_t o = 0;

	out[0] = '\0';
	for (; *keys != NULL && o < len; keys++)
		o += (size_t)snprintf(out + o, len - o, "%s%s",
				      o > 0 ? ", " : "", *keys);
}

/* What is wrong with @p kv for driver @p d: one line in @p err. */
static void
say_unknown(const struct xnv_devargs_drv *d, const struct rte_kvargs *kv,
	    char *err, size_t errlen)
{
	const char *key = NULL;
	char keys[256];
	unsigned i;

	for (i = 0; kv != NULL && i < kv->count && key == NULL; i++)
		if (!listed(kv->pairs[i].key, d->keys))
			key = kv->pairs[i].key;
	join(d->keys, keys, sizeof(keys));
	if (key == NULL)
		snprintf(err, errlen, "cannot parse its arguments as "
			 "key=value,... (%s keys: %s)", d->name, keys);
	else if (*key == '\0')
		snprintf(err, errlen, "an argument without a key, such as "
			 "'=value' (%s keys: %s)", d->name, keys);
	else
		snprintf(err, errlen, "%s has no key '%s' (keys: %s)", d->name,
			 key, keys);
}

int
xnv_devargs_check_keys(const char *dev, char *err, size_t errlen)
{
	const struct xnv_devargs_drv *d = xnv_devargs_drv(dev);
	struct rte_kvargs *kv;

	if (d == NULL)
		return 0;
	kv = parse(dev, d->keys);
	if (kv != NULL) {
		rte_kvargs_free(kv);
		return 0;
	}
	kv = parse(dev, NULL);
	say_unknown(d, kv, err, errlen);
	rte_kvargs_free(kv);
	return -EINVAL;
}

int
xnv_devargs_check_ifaces(const char *dev, char *err, size_t errlen)
{
	const struct xnv_devargs_drv *d = xnv_devargs_drv(dev);
	const struct rte_kvargs_pair *p;
	struct rte_kvargs *kv;
	unsigned i;
	int rc = 0;

	if (d == NULL || d->ifaces == NULL || (kv = parse(dev, NULL)) == NULL)
		return 0;	/* what cannot be parsed: said before */
	for (i = 0; rc == 0 && i < kv->count; i++) {
		p = &kv->pairs[i];
		if (!listed(p->key, d->ifaces))
			continue;
		if (p->value == NULL || *p->value == '\0')
			rc = -EINVAL, snprintf(err, errlen, "%s= names no "
					       "interface (%s=eth0)", p->key,
					       p->key);
		else if (if_nametoindex(p->value) == 0)
			rc = -ENODEV, snprintf(err, errlen, "%s=%s: no such "
					       "kernel interface (`ip link` "
					       "lists them)", p->key, p->value);
	}
	rte_kvargs_free(kv);
	return rc;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What xnv-core knows of the devargs of DPDK 22.11's vdev drivers: one
 * table (config_devargs.c), one row per driver, read by everything that
 * looks inside a port's `dev`.  A driver the table does not name is left
 * to DPDK whole.
 *
 * - The keys a driver takes, as it registers them (its valid_arguments,
 *   RTE_PMD_REGISTER_PARAM_STRING): a port's devargs are parsed with
 *   rte_kvargs_parse() against them when the config is read, so a
 *   misspelt key is one line naming FILE:LINE, not a probe error after
 *   EAL has started (xnv_devargs_check_keys, config_port.c).
 * - The keys naming a kernel interface: it must exist when the core
 *   starts (xnv_devargs_check_ifaces, preflight.c, also --check-config).
 * - The keys naming files (relative ones are the config's directory's)
 *   and the keys that give a port something to receive (config_port.c).
 *
 * rte_kvargs only, no EAL.
 *
 * Usage:
 *	if (xnv_devargs_check_keys(dev, why, sizeof(why)) < 0)
 *		// why: "net_null has no key 'sise' (keys: size, copy, no-rx)"
 */
#ifndef XNV_CONFIG_DEVARGS_H
#define XNV_CONFIG_DEVARGS_H

#include <stddef.h>

/* One vdev driver; every list NULL-terminated, or NULL for none. */
struct xnv_devargs_drv {
	const char *name;		/* "net_af_packet": net_af_packet0, ... */
	const char *const *keys;	/* every key it takes */
	const char *const *ifaces;	/* keys naming a kernel interface */
	const char *const *files;	/* keys naming a file */
	const char *files_when;		/* ...only with this argument given
					 * ("socket-abstract=no"); NULL: always */
	const char *const *rx;		/* keys giving it frames to receive;
					 * NULL: it receives without any */
};

/** The row of the driver of device string @p dev ("net_pcap0,..."), or
 *  NULL when it is not one the table names (a PCI address, net_tap0). */
const struct xnv_devargs_drv *xnv_devargs_drv(const char *dev);

/**
 * The key of argument @p arg ("key=value,...": one argument and what
 * follows it) if it is one of @p keys (NULL: none is).
 * @return that key, or NULL.
 */
const char *xnv_devargs_key(const char *arg, const char *const *keys);

/**
 * The devargs of @p dev, parsed as its driver parses them: every key one
 * of the driver's.  Devices of drivers the table does not name pass.
 * @return 0, or -EINVAL with one line in @p err naming the key and the
 *         keys the driver takes (without the device string).
 */
int xnv_devargs_check_keys(const char *dev, char *err, size_t errlen);

/**
 * Every kernel interface the devargs of @p dev name (af_packet's iface=,
 * pcap's iface=, rx_iface=, ...) exists now.
 * @return 0, or -ENODEV (-EINVAL: no name given) with one line in @p err.
 */
int xnv_devargs_check_ifaces(const char *dev, char *err, size_t errlen);

#endif /* XNV_CONFIG_DEVARGS_H */

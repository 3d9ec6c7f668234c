/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef XNV_EAL_ARGS_H
#define XNV_EAL_ARGS_H

/**
 * Split "EAL options -- app options" (no "--": everything is the app's)
 * and add EAL memory defaults the user did not choose: --in-memory when
 * free 2 MiB hugepages exist, else --no-huge -m 512 --no-shconf (logged).
 * Neither leaves files behind.
 * Also, unless the user chose devices (-a, -b, --no-pci): allow exactly the
 * PCI devices named in the config (@p pci, @p n_pci), or --no-pci, so the
 * core never touches a NIC its config does not name.
 * @return 0, or -1 after printing an error.
 */
int xnv_split_args(int argc, char **argv, int *eal_argc, char ***eal_argv,
		   int *app_argc, char ***app_argv);

/** What the defaults decided that the user should know ("" if nothing);
 *  printed by the caller once the command line and config are good. */
const char *xnv_eal_notice(void);

/**
 * Unless the user chose one, give this core its own EAL runtime directory
 * (/var/run/dpdk/xnv-<hash of the NF socket path>): cores on different
 * sockets never share it (and its telemetry socket), and the same socket
 * always finds the same one.  @return 0, or -1 after printing an error.
 */
int xnv_eal_prefix(int *eal_argc, char ***eal_argv, const char *socket);

/** Add the device part: call after the config is known. */
int xnv_eal_devices(int *eal_argc, char ***eal_argv, char **pci, int n_pci);

struct xnv_config;

/**
 * What the config decides of the EAL command line: its PCI devices
 * (xnv_eal_devices(): a port whose dev is not net_* is a PCI address) and
 * the runtime directory of its socket (xnv_eal_prefix()).  The device
 * names go into the EAL argv: @p cfg must outlive it.
 * @return 0, or -1 after printing an error.
 */
int xnv_eal_from_config(int *eal_argc, char ***eal_argv,
			struct xnv_config *cfg);

#endif

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * xnv-xl's XenStore side: the nodes of a domain's NF devices (keys:
 * gntshare/include/gntshare/proto.h; protocol: gntshare/xen.h).
 */
#ifndef XNV_XL_XS_DEV_H
#define XNV_XL_XS_DEV_H

#include <xenstore.h>

#include "nfv_cfg.h"

/* ERR(): one line on stderr, "xnv-xl: ..." */
#define ERR(...) do { fprintf(stderr, "xnv-xl: " __VA_ARGS__); \
		      fputc('\n', stderr); } while (0)

/** Both halves of device @p dev of domain @p domid, served by xnv-core
 *  in domain @p bdom (0, or a driver domain), in Initialising, readable
 *  by the two domains only (and Dom0).  @return 0 or -1 (errno). */
int xs_dev_register(struct xs_handle *xs, const struct nfv_cfg *c, int domid,
		    int bdom, int dev);

/** Wait until xnv-core (in @p bdom) moved each of the @p n devices to
 *  InitWait, at most @p timeout s.  @return 0, or -1 with the reason
 *  printed (the core's own when it refused). */
int xs_dev_wait_core(struct xs_handle *xs, int domid, int bdom, int n,
		     double timeout);

/** The backend domain @p domid's devices were registered with (its
 *  device 0's backend-id; 0 if none). */
int xs_dev_backend(struct xs_handle *xs, int domid);

/** Remove every backend node of @p domid's devices (under @p bdom). */
void xs_dev_unregister(struct xs_handle *xs, int domid, int bdom);

/** Let domain @p bdom see @releaseDomain fire: its read permission on
 *  that node, kept with the others' (xenstored drops a domain's when it
 *  goes).  @return 0 or -1 (errno). */
int xs_dev_allow_release(struct xs_handle *xs, int bdom);

/** What domain @p domid's devices were registered with, read back from
 *  their nodes: @p c's service, group, instances (the devices found) and
 *  backend (the serving domain's name; "" for Dom0), its domid in
 *  *@p bdom.  @return the number of devices (0: none). */
int xs_dev_read(struct xs_handle *xs, int domid, struct nfv_cfg *c, int *bdom);

/** Write @p what ("save", "migrate") into the suspend node of each of
 *  @p domid's @p n devices (xnv-core lets their NFs go and attaches none),
 *  or remove it (@p what NULL: they attach again).  0 or -1 (errno). */
int xs_dev_suspend(struct xs_handle *xs, int domid, int bdom, int n,
		   const char *what);

/** Wait up to @p timeout s until no device of the @p n is connected any
 *  more on either side (the core detached its NF, which unmapped).
 *  0, or -1 with the device and its states in @p why. */
int xs_dev_wait_let_go(struct xs_handle *xs, int domid, int bdom, int n,
		       double timeout, char *why, size_t len);

/** "<dir>/<leaf>" read (free it), or NULL if missing. */
char *xs_dev_node(struct xs_handle *xs, const char *dir, const char *leaf);

#endif

/* SPDX-License-Identifier: BSD-3-Clause */
/* Private: the host backend's socket file (host_listen.c). */
#ifndef GNTSHARE_HOST_LISTEN_H
#define GNTSHARE_HOST_LISTEN_H

#include <stddef.h>

#include "gntshare/backend.h"

/**
 * A listening SOCK_SEQPACKET socket (non-blocking, close-on-exec) at
 * @p cfg->socket, with cfg's socket_mode (0: 0600) and group; its
 * directory made if missing (0700 plus r-x for whom the mode lets in).
 * A stale socket file (nobody answers on it) is removed and logged; a
 * live one is -EADDRINUSE.  The file appears only once it accepts
 * connections.
 * @return the fd, or -errno with one line in @p err.
 */
int gnts_host_listen(const struct gnts_srv_cfg *cfg, char *err,
		     size_t errlen);

#endif

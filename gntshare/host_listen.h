/* SPDX-License-Identifier: BSD-3-Clause */
/* Private: the host backend's socket file (host_listen.c). */
#ifndef GNTSHARE_HOST_LISTEN_H
#define GNTSHARE_HOST_LISTEN_H

#include <stddef.h>

/**
 * A listening SOCK_SEQPACKET socket (non-blocking, close-on-exec) at
 * @p path, mode 0600.  A stale socket file (nobody answers on it) is
 * removed and logged; a live one is -EADDRINUSE.  The file appears only
 * once it accepts connections.
 * @return the fd, or -errno with one line in @p err.
 */
int gnts_host_listen(const char *path, char *err, size_t errlen);

#endif

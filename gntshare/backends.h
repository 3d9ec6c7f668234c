/* SPDX-License-Identifier: BSD-3-Clause */
/* libgntshare internals: the ops table each backend file exports. */
#ifndef GNTSHARE_BACKENDS_H
#define GNTSHARE_BACKENDS_H

#include "gntshare/backend.h"

extern const struct gnts_srv_ops gnts_host_srv_ops;	/* host_server.c */
extern const struct gnts_srv_ops gnts_xen_srv_ops;	/* xen_server.c */
extern const struct gnts_cli_ops gnts_host_cli_ops;	/* host_client.c */
extern const struct gnts_cli_ops gnts_xen_cli_ops;	/* xen_client.c */

#endif

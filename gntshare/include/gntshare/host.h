/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gntshare host backend rendezvous: xnv-core's unix socket.  Programs
 * reach it through backend.h (gnts_srv_open("host"), gnts_cli_attach());
 * the calls below are for its own tests and tools.
 *
 * One SOCK_SEQPACKET connection per attached domain.  The core side
 * (server) assigns the domain id, hands the attach request to its owner
 * (xnv-core) and answers MAP requests itself from the grant table: a
 * region's fd is sent (SCM_RIGHTS) only if that region is granted to the
 * asking domain.  A hang-up is the domain's death notice.
 *
 * Messages are fixed-size, carry magic + version, and every field that
 * arrives is checked before use.
 */
#ifndef GNTSHARE_HOST_H
#define GNTSHARE_HOST_H

#include <stddef.h>
#include <sys/types.h>

#include "backend.h"
#include "gntshare.h"
#include "proto.h"

#ifdef __cplusplus
extern "C" {
#endif

struct gnts_server;
struct gnts_client;

/**
 * Listen on @p path.  A stale socket file (nobody answers on it) is removed
 * and logged through gnts_log(); a live one is an error (-EADDRINUSE) and
 * @p err says why.
 */
int gnts_server_open(const char *path, const struct gnts_srv_cb *cb,
		     void *ctx, struct gnts_server **out, char *err,
		     size_t errlen);

/** Serve pending connections and messages without blocking.
 *  @return number of events handled, or a negative errno. */
int gnts_server_poll(struct gnts_server *s);

/** Detach @p dom: send it @p reason, close its connection, call death(). */
void gnts_server_detach(struct gnts_server *s, gnts_peer_t dom,
			const char *reason);

/** The same with the status the domain sees (gnts_client_gone_status):
 *  -ESHUTDOWN for a clean shutdown of the core. */
void gnts_server_detach_status(struct gnts_server *s, gnts_peer_t dom,
			       int status, const char *reason);

/** Pid of an attached domain, or 0. */
pid_t gnts_server_pid(struct gnts_server *s, gnts_peer_t dom);

/** Close every connection (death() for each), close and unlink the socket. */
void gnts_server_close(struct gnts_server *s);

/**
 * Connect to the core at @p path and attach.
 * @return 0 and *out + *rsp, or a negative errno with a reason in @p err
 *   (the core's own words when it refused).
 */
int gnts_client_attach(const char *path, const struct gnts_attach_req *req,
		       struct gnts_attach_rsp *rsp, struct gnts_client **out,
		       char *err, size_t errlen);

/**
 * Map region @p ref.  @return 0 with *va and *size, or a negative errno
 *   (-EACCES: not granted to us) with the core's reason in @p err.
 */
int gnts_client_map(struct gnts_client *c, gnts_ref_t ref, int readonly,
		    void **va, size_t *size, char *err, size_t errlen);

/** Unmap what gnts_client_map() mapped. */
void gnts_client_unmap(void *va, size_t size);

/**
 * Is the core still there?  Non-blocking.  @return 1 alive, 0 gone (with
 * the core's detach reason in @p err if it gave one).
 */
int gnts_client_alive(struct gnts_client *c, char *err, size_t errlen);

/**
 * Why the core went away, once gnts_client_alive() returned 0:
 * -ESHUTDOWN when it shut down cleanly, the status of its DETACH notice
 * otherwise, -ECONNRESET when it hung up without a word.
 */
int gnts_client_gone_status(const struct gnts_client *c);

/** Say goodbye and close. */
void gnts_client_close(struct gnts_client *c);

#ifdef __cplusplus
}
#endif

#endif /* GNTSHARE_HOST_H */

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

/*
 * What one connection may cost the core (host_server.c).  A connection
 * over a rate is not read until it is under it again (its messages wait
 * in the socket); one that has not attached in time is closed, and so is
 * one whose first message is not ATTACH; one more waiting to attach than
 * the caps closes the oldest waiting one of the same uid (else of
 * anyone).
 */
#define GNTS_HOST_ATTACH_TIMEOUT_MS 2000 /* from accept to ATTACH */
#define GNTS_HOST_PENDING_PER_UID   16	/* waiting to attach, one uid */
#define GNTS_HOST_PENDING_MAX       64	/* waiting to attach, everyone */
#define GNTS_HOST_CONN_RATE         200	/* requests/s of one connection */
#define GNTS_HOST_CONN_BURST        64
#define GNTS_HOST_RATE              5000 /* requests/s of all of them */
#define GNTS_HOST_BURST             512
#define GNTS_HOST_ATTACH_RATE       200	/* ATTACHes/s read, everyone */
#define GNTS_HOST_ATTACH_BURST      64
#define GNTS_HOST_ACCEPT_RATE       1000 /* connections/s taken (the rest
					  * wait in the listen backlog) */
#define GNTS_HOST_ACCEPT_BURST      64
#define GNTS_HOST_LOG_RATE          10	/* refusal lines/s; rest counted */

struct gnts_host_stats {
	uint64_t requests;	/* messages read */
	uint64_t refused;	/* requests refused, protocol errors */
	uint64_t timed_out;	/* closed: no ATTACH in time */
	uint64_t evicted;	/* closed: too many waiting to attach */
	uint64_t not_logged;	/* refusal lines over GNTS_HOST_LOG_RATE */
	uint32_t connections;	/* open now */
	uint32_t waiting;	/* of which not attached yet */
};

/** The server's counters. */
void gnts_server_stats(const struct gnts_server *s,
		       struct gnts_host_stats *st);

/**
 * Listen on @p path.  A stale socket file (nobody answers on it) is removed
 * and logged through gnts_log(); a live one is an error (-EADDRINUSE) and
 * @p err says why.
 */
int gnts_server_open(const char *path, const struct gnts_srv_cb *cb,
		     void *ctx, struct gnts_server **out, char *err,
		     size_t errlen);

/** The same with the whole server config (socket mode and group). */
int gnts_server_open_cfg(const struct gnts_srv_cfg *cfg,
			 struct gnts_server **out, char *err, size_t errlen);

/** Where it listens. */
const char *gnts_server_path(const struct gnts_server *s);

/** Serve pending connections and messages without blocking.
 *  @return number of events handled, or a negative errno. */
int gnts_server_poll(struct gnts_server *s);

/** Block until gnts_server_poll() has something to do (a connection or a
 *  message, or a deadline: an attach timeout, a rate-limit token), until
 *  @p wake_fd (if >= 0) is readable, or @p max_ms.
 *  @return 0, or a negative errno. */
int gnts_server_wait(struct gnts_server *s, int wake_fd, int max_ms);

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
/** Our end of the doorbells (bell.h), or NULL: not asked for
 *  (GNTS_REQ_BELL), or the core gave none. */
struct gnts_bell *gnts_client_bell(const struct gnts_client *c);

#ifdef __cplusplus
}
#endif

#endif /* GNTSHARE_HOST_H */

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Backends: how NFs find the core, get their regions and learn that the
 * other side went away.  Each backend is two tables of functions, one per
 * side, picked once by name:
 *
 *   backend  server (xnv-core)            client (libxnv, in the NF)
 *   host     host_server.c: unix socket,  host_client.c: connect, fds by
 *            fds by SCM_RIGHTS            SCM_RIGHTS, mmap
 *   xen      xen_server.c: XenStore       xen_client.c: XenStore + gntdev
 *            watches, grants (kgrant.c,   (built only with the Xen libs)
 *            or galloc.c)
 *
 * The core holds one struct gnts_srv, libxnv one struct gnts_cli; neither
 * tests which backend it has.  What differs and shows (how a peer is
 * named in a log line, whether a departed peer still maps frames) comes
 * from an op.  Adding a backend: gntshare/README.md, "How to add a
 * backend".
 *
 * Errors are negative errno values with one line in @p err.
 */
#ifndef GNTSHARE_BACKEND_H
#define GNTSHARE_BACKEND_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "bell.h"
#include "gntshare.h"
#include "proto.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- server side (xnv-core) ---------------------------------------------- */

/* Who asks to attach.  Host mode: the connecting process's credentials
 * (SO_PEERCRED), known = 1.  Xen: known = 0 (the domain's config
 * decides; pid, uid and gid are 0). */
struct gnts_peer_cred {
	pid_t pid;
	uid_t uid;
	gid_t gid;
	int known;
};

/*
 * What the server tells its owner.  The backend runs in a control thread
 * of its own (srv.c); each callback is handed to the owner's thread and
 * run inside gnts_srv_poll(), one at a time, while the control thread
 * waits for its result.  So the owner's state is only ever touched by the
 * owner's thread.
 */
struct gnts_srv_cb {
	/* xen: check a domain's service and group before it boots (xnv-xl
	 * waits for the answer); may be NULL.  0 or -errno + @p err. */
	int (*check)(void *ctx, const struct gnts_attach_req *req, char *err,
		     size_t errlen);
	/* A peer asks to attach (@p cred: who).  Fill @p rsp and return
	 * 0, or -errno + @p err (sent to the peer: name only its own
	 * objects).  @p bell: the core's end of the peer's doorbell pair
	 * (gntshare/bell.h) when it asked for one (GNTS_REQ_BELL) and the
	 * backend made it, else NULL; the backend owns it and closes it
	 * after death() returned (or at once when attach fails). */
	int (*attach)(void *ctx, gnts_peer_t peer,
		      const struct gnts_peer_cred *cred,
		      const struct gnts_attach_req *req, struct gnts_bell *bell,
		      struct gnts_attach_rsp *rsp, char *err, size_t errlen);
	/* A peer is gone (hang-up, bye, closed device, dead domain, or
	 * detached by the core). */
	void (*death)(void *ctx, gnts_peer_t peer);
	/* xen: the domain of attached peer @p peer is about to be saved or
	 * migrated (@p why, one line): detach it so that it comes back
	 * (GNTS_DETACH_SUSPEND; the detach's status -EAGAIN).  NULL: the
	 * peer is simply detached, as by death(). */
	void (*suspend)(void *ctx, gnts_peer_t peer, const char *why);
	/* A MAP request was refused (host); may be NULL. */
	void (*map_denied)(void *ctx, gnts_peer_t peer, gnts_ref_t ref,
			   const char *why);
	/* Domain @p domain (gnts_srv_domain_of()) is gone: destroyed (xen),
	 * or the connection that was its only peer closed (host).  What the
	 * owner remembers about it may go; may be NULL. */
	void (*domain_gone)(void *ctx, uint32_t domain);
};

/* What the owner may have done to a hostile domain (gnts_srv_punish()). */
enum gnts_punish { GNTS_PUNISH_PAUSE = 1, GNTS_PUNISH_DESTROY };

struct gnts_srv_cfg {
	const char *socket;		/* host: where NFs connect */
	const struct gnts_srv_cb *cb;
	void *ctx;			/* passed to every callback */
	/* host: who may connect at all.  The socket file's mode (0: 0600)
	 * and, with socket_group_set, its group.  A socket directory the
	 * server makes is 0700 plus r-x for the group / others the mode
	 * lets in (0750 for 0660), and in that group; an existing one is
	 * left as it is. */
	unsigned socket_mode;
	int socket_group_set;
	gid_t socket_gid;
};

/* The control plane's counters (gnts_srv_counters()). */
struct gnts_srv_counters {
	uint64_t requests;	/* requests read from peers */
	uint64_t refused;	/* refused, or protocol errors */
	uint64_t timed_out;	/* connections that never attached in time */
	uint64_t evicted;	/* closed to make room for newer ones */
	uint64_t not_logged;	/* refusal lines over the log rate */
	uint64_t callbacks;	/* run on the owner's thread (attach, ...) */
	uint64_t events;	/* xen: XenStore watch events read */
	uint64_t events_deferred; /* xen: of which over their domain's rate
				   * (GNTS_XEN_EVENT_RATE), acted on later */
	uint32_t connections;	/* open now (host) */
	uint32_t waiting;	/* of which not attached yet */
};

struct gnts_srv_ops {
	const char *name;
	/* 1: NFs connect on cfg->socket, whose directory open() makes
	 * (host); 0: the backend does not use the socket (xen). */
	int listens;
	/* Listen / watch.  0 and *impl, or -errno + @p err. */
	int (*open)(const struct gnts_srv_cfg *cfg, void **impl, char *err,
		    size_t errlen);
	/* Serve pending events without blocking: events handled or -errno. */
	int (*poll)(void *impl);
	/* Block until poll() has something to do, @p wake_fd is readable
	 * or @p max_ms pass: 0 or -errno.  NULL: the control thread naps
	 * 1 ms between empty polls (a backend with no fd to wait on). */
	int (*wait)(void *impl, int wake_fd, int max_ms);
	/* Detach @p peer: tell it why (@p status: -ESHUTDOWN for a clean
	 * stop of the core), end its channel, call death(). */
	void (*detach)(void *impl, gnts_peer_t peer, int status,
		       const char *why);
	/* Detach everyone, stop listening. */
	void (*close)(void *impl);
	/* "(pid 12) attached as domain 3" / "attached from Xen domain 7
	 * device 0": how the core's log names a peer that attaches. */
	void (*attach_words)(gnts_peer_t peer, pid_t pid, char *buf,
			     size_t len);
	/* "domain 3" / "Xen domain 7 device 0". */
	void (*peer_words)(gnts_peer_t peer, char *buf, size_t len);
	/* Why a peer's death() came, in the core's words. */
	const char *death_words;
	/* One line for the log once open: where NFs attach. */
	void (*where)(void *impl, char *buf, size_t len);
	/* Fill what the backend counts (may be NULL: all 0). */
	void (*counters)(void *impl, struct gnts_srv_counters *ct);
	/* The domain @p peer belongs to: what outlives one NF and what
	 * per-domain budgets and quarantines are kept for.  Xen: the domid
	 * (every NF device of it); host: the peer (a connection is all a
	 * process has). */
	uint32_t (*domain_of)(gnts_peer_t peer);
	/* "Xen domain 7" / "domain 3". */
	void (*domain_words)(uint32_t domain, char *buf, size_t len);
	/* Pause or destroy @p domain (control thread), logging what was
	 * done, or why not.  NULL: the backend cannot (host). */
	void (*punish)(void *impl, uint32_t domain, enum gnts_punish how,
		       const char *why);
};

struct gnts_srv;

/**
 * Open the server of backend @p kind ("host", "xen").
 * @return 0 and *out, or -EINVAL (unknown kind), -ENOTSUP (not built in),
 *   or the backend's error; one line in @p err each time.
 */
int gnts_srv_open(const char *kind, const struct gnts_srv_cfg *cfg,
		  struct gnts_srv **out, char *err, size_t errlen);
/**
 * Run what the control thread handed over (the callbacks of struct
 * gnts_srv_cb), on the calling thread; never blocks.
 * @return callbacks run.
 */
int gnts_srv_poll(struct gnts_srv *s);
/** Detach @p peer: queued for the control thread, never blocks. */
void gnts_srv_detach(struct gnts_srv *s, gnts_peer_t peer, int status,
		     const char *why);
/**
 * Pause or destroy @p domain: queued for the control thread like a
 * detach, never blocks.  -ENOTSUP (nothing queued) if the backend cannot.
 */
int gnts_srv_punish(struct gnts_srv *s, uint32_t domain, enum gnts_punish how,
		    const char *why);
/** The domain of @p peer (struct gnts_srv_ops domain_of). */
uint32_t gnts_srv_domain_of(const struct gnts_srv *s, gnts_peer_t peer);
const char *gnts_srv_domain_words(const struct gnts_srv *s, uint32_t domain,
				  char *buf, size_t len);
/** The control plane's counters (safe from the owner's thread). */
void gnts_srv_counters(struct gnts_srv *s, struct gnts_srv_counters *ct);
/** Close (NULL: nothing). */
void gnts_srv_close(struct gnts_srv *s);
const char *gnts_srv_kind(const struct gnts_srv *s);
/** Log words of a backend (see struct gnts_srv_ops); return @p buf. */
const char *gnts_srv_attach_words(const struct gnts_srv *s, gnts_peer_t peer,
				  pid_t pid, char *buf, size_t len);
const char *gnts_srv_peer_words(const struct gnts_srv *s, gnts_peer_t peer,
				char *buf, size_t len);
const char *gnts_srv_death_words(const struct gnts_srv *s);
const char *gnts_srv_where(const struct gnts_srv *s, char *buf, size_t len);
/** The backends this build has, for --help and errors ("host, xen"). */
const char *gnts_srv_kinds(void);
/** The server backend named @p kind, or NULL if this build has none. */
const struct gnts_srv_ops *gnts_srv_backend(const char *kind);

/* ---- client side (libxnv) ------------------------------------------------ */

struct gnts_cli_cfg {
	const char *socket;	/* host: the core's socket */
	int dev;		/* xen: the domain's xnv device (-1: first free) */
	unsigned timeout_ms;	/* xen: how long to wait for the core */
};

/* gnts_cli_ops.flags */
#define GNTS_CLI_DOMAIN_NAMES 0x1u /* the domain's config names service,
				    * group and instance: a request may
				    * leave them empty */
#define GNTS_CLI_REATTACH     0x2u /* the NF may attach again in the same
				    * process after the core went away */

struct gnts_cli_ops {
	const char *name;
	unsigned flags;
	/* 1 if this backend can be used here (for --backend auto). */
	int (*available)(void);
	/* Attach.  The backend may fill name/service/group of @p req with
	 * what the core decided.  0 and *impl + *rsp, or -errno + @p err
	 * (the core's own words when it refused); -EHOSTDOWN when no core
	 * is there to ask (host: nothing listens on the socket), or (xen)
	 * when the domain is being saved or migrated, before the request
	 * or while it waited for the answer: ask again. */
	int (*attach)(const struct gnts_cli_cfg *cfg,
		      struct gnts_attach_req *req, struct gnts_attach_rsp *rsp,
		      void **impl, char *err, size_t errlen);
	/* Map region @p ref of the reply (read-write). */
	int (*map)(void *impl, gnts_ref_t ref, void **va, size_t *size,
		   char *err, size_t errlen);
	void (*unmap)(void *impl, void *va, size_t size);
	/* 1 while the core keeps us, 0 once it let go (reason in @p err). */
	int (*alive)(void *impl, char *err, size_t errlen);
	/* After alive() said 0: -ESHUTDOWN for a clean stop of the core,
	 * -EAGAIN when the domain is being saved or migrated (xen: attach
	 * again once it runs again), else -ECONNRESET. */
	int (*gone_status)(const void *impl);
	/* Say goodbye, unmap what is left, free. */
	void (*close)(void *impl);
	/* Our end of the doorbells (bell.h) when the attach asked for them
	 * (GNTS_REQ_BELL) and the core gave them, else NULL; closed by
	 * close().  NULL op: the backend has none. */
	struct gnts_bell *(*bell)(void *impl);
	/* An fd that becomes readable when the core may have let go (then
	 * ask alive()), so that a sleeper need not wake to ask; -1 or a
	 * NULL op: none, ask alive() now and then. */
	int (*watch_fd)(void *impl);
	/* The device attached through (xen: the domain's device number, to
	 * attach through the same one after a resume); -1 or a NULL op:
	 * the backend has no devices. */
	int (*device)(const void *impl);
};

struct gnts_cli;

/**
 * Attach through backend @p kind ("host", "xen", or NULL / "auto": the
 * first available one, xen before host).
 */
int gnts_cli_attach(const char *kind, const struct gnts_cli_cfg *cfg,
		    struct gnts_attach_req *req, struct gnts_attach_rsp *rsp,
		    struct gnts_cli **out, char *err, size_t errlen);
/** The backend @p kind would pick (NULL if unknown or not built in). */
const struct gnts_cli_ops *gnts_cli_backend(const char *kind);
int gnts_cli_map(struct gnts_cli *c, gnts_ref_t ref, void **va, size_t *size,
		 char *err, size_t errlen);
void gnts_cli_unmap(struct gnts_cli *c, void *va, size_t size);
int gnts_cli_alive(struct gnts_cli *c, char *err, size_t errlen);
int gnts_cli_gone_status(const struct gnts_cli *c);
unsigned gnts_cli_flags(const struct gnts_cli *c);
/** Our end of the doorbells, or NULL (struct gnts_cli_ops bell). */
struct gnts_bell *gnts_cli_bell(const struct gnts_cli *c);
/** struct gnts_cli_ops watch_fd, or -1. */
int gnts_cli_watch_fd(const struct gnts_cli *c);
/** struct gnts_cli_ops device, or -1. */
int gnts_cli_device(const struct gnts_cli *c);
/** Close (NULL: nothing). */
void gnts_cli_close(struct gnts_cli *c);
/** The backends this build has ("host, xen"). */
const char *gnts_cli_kinds(void);

#ifdef __cplusplus
}
#endif

#endif /* GNTSHARE_BACKEND_H */

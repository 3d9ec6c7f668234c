/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * net_memif ports: what DPDK 22.11's memif driver leaves to its
 * application (port_drv.h).
 *
 * - A zero-copy client is refused.  It offers the server DPDK's own
 *   memory segments as regions and describes every buffer as an offset
 *   in region 1 (memif_region_init_zc, memif_tx_one_zc), while the
 *   core's packet data lives in its pools' external memory (pool.c):
 *   the driver cannot hand that memory over (no fd for an external
 *   segment) and drops the connection at the server's first message,
 *   logging only at DEBUG level: a port whose link never comes up.
 * - A server's socket file (socket-abstract=no) left behind by a process
 *   that died is removed before the probe; a socket somebody listens on,
 *   or a file that is not a socket, is refused.  An abstract name (the
 *   driver's default) vanishes with its owner: only a live listener is
 *   refused there.
 * - A client connects only in rte_eth_dev_start() and never again: when
 *   nobody listens yet the port starts with its link down, and when the
 *   server goes away the port is stopped; link_tick() starts it again
 *   once a connect() of its own finds the server listening (every
 *   XNV_MEMIF_RETRY_MS; the driver logs each refused connect itself,
 *   so it is not asked while nobody listens).  One line per outage.
 *
 * Not worked around (dom0-core/README.md): the driver unmaps a
 * connection's memory on the interrupt thread when the peer goes away
 * while the lcore may be inside its rx or tx burst.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_kvargs.h>

#include "core.h"
#include "port_drv.h"

#define XNV_MEMIF_RETRY_MS 1000		/* connect tries while stopped */
#define XNV_MEMIF_HANDSHAKE_MS 2000	/* link up after a connect, at first */
#define XNV_MEMIF_BACKOFF_MAX 4u		/* doublings of it: 32 s at most */
#define XNV_MEMIF_DEFAULT_SOCKET "/run/memif.sock"	/* the driver's */
#define SUN_PATH_LEN sizeof(((struct sockaddr_un *)NULL)->sun_path)

struct memif_port {
	char socket[SUN_PATH_LEN];
	int abstract;		/* socket-abstract (the driver's default: yes) */
	int server;		/* role (default: client) */
	int zero_copy;
	int was_up;		/* link seen up since the last start */
	int said;		/* this outage logged */
	unsigned fails;		/* connects in a row that never came up */
	uint64_t start_tsc;	/* last rte_eth_dev_start() */
	uint64_t next_tsc;	/* next connect try while stopped */
};

static struct memif_port mports[XNV_MAX_PORTS];

static int
kv_value(const char *key, const char *value, void *opaque)
{
	(void)key;
	*(const char **)opaque = value != NULL ? value : "";
	return 0;
}

/* The last value of @p key in @p kv (as the driver takes it), or NULL. */
static const char *
kv_get(struct rte_kvargs *kv, const char *key)
{
	const char *v = NULL;

	(void)rte_kvargs_process(kv, key, kv_value, &v);
	return v;
}

/* yes / no as the driver reads them (a substring); -1: neither */
static int
yes_no(const char *v, int dflt)
{
	if (v == NULL)
		return dflt;
	if (strstr(v, "yes") != NULL)
		return 1;
	return strstr(v, "no") != NULL ? 0 : -1;
}

/* The devargs of port @p idx into mports[idx]; 0 or -EINVAL with one
 * line in @p err. */
static int
memif_parse(const struct xnv_port_cfg *pc, struct memif_port *m, char *err,
	    size_t errlen)
{
	const char *args = strchr(pc->dev, ','), *role, *sock, *bad = NULL;
	struct rte_kvargs *kv;

	memset(m, 0, sizeof(*m));
	kv = rte_kvargs_parse(args != NULL ? args + 1 : "", NULL);
	if (kv == NULL) {
		snprintf(err, errlen, "port %s: cannot parse the memif "
			 "arguments of '%s' (key=value,...)", pc->name, pc->dev);
		return -EINVAL;
	}
	role = kv_get(kv, "role");
	m->server = role != NULL && (strstr(role, "server") != NULL ||
				     strstr(role, "master") != NULL);
	if (role != NULL && !m->server && strstr(role, "client") == NULL &&
	    strstr(role, "slave") == NULL)
		bad = "role must be server or client";
	m->abstract = yes_no(kv_get(kv, "socket-abstract"), 1);
	m->zero_copy = yes_no(kv_get(kv, "zero-copy"), 0);
	if (m->abstract < 0)
		bad = "socket-abstract must be yes or no";
	if (m->zero_copy < 0)
		bad = "zero-copy must be yes or no";
	sock = kv_get(kv, "socket");
	if (sock == NULL)
		sock = XNV_MEMIF_DEFAULT_SOCKET;
	if (strlen(sock) >= sizeof(m->socket))
		bad = "socket path longer than 107 bytes";
	else
		snprintf(m->socket, sizeof(m->socket), "%s", sock);
	rte_kvargs_free(kv);
	if (bad != NULL) {
		snprintf(err, errlen, "port %s (%s): %s", pc->name, pc->dev,
			 bad);
		return -EINVAL;
	}
	return 0;
}

/* The address the driver binds or connects to (memif_socket.c). */
static socklen_t
memif_addr(const struct memif_port *m, struct sockaddr_un *un)
{
	size_t n = strlen(m->socket);

	memset(un, 0, sizeof(*un));
	un->sun_family = AF_UNIX;
	if (!m->abstract) {
		memcpy(un->sun_path, m->socket, n);
		return sizeof(*un);
	}
	n = RTE_MIN(n, sizeof(un->sun_path) - 1);
	memcpy(un->sun_path + 1, m->socket, n);	/* sun_path[0] = 0 */
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
}

/* 1 if somebody listens on @p m's socket, 0 if nobody does (refused, or
 * no such file), -errno if that cannot be told.  Never blocks. */
static int
memif_listening(const struct memif_port *m)
{
	struct sockaddr_un un;
	socklen_t len = memif_addr(m, &un);
	int fd, rc;

	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	rc = connect(fd, (struct sockaddr *)&un, len) == 0 ? 1 : -errno;
	close(fd);
	if (rc == -ECONNREFUSED || rc == -ENOENT)
		return 0;
	/* a full backlog, or a listener of another socket type */
	if (rc == -EAGAIN || rc == -EPROTOTYPE)
		return 1;
	return rc;
}

/* Another port of this core is a memif server on the same socket: the
 * driver shares one listener between them. */
static int
socket_shared(const struct xnv_core *c, uint16_t idx)
{
	uint16_t i;

	for (i = 0; i < idx; i++)
		if (c->ports[i].drv == &xnv_port_drv_memif &&
		    mports[i].server &&
		    strcmp(mports[i].socket, mports[idx].socket) == 0)
			return 1;
	return 0;
}

/* What is at a server's socket file: 0 nothing (or a socket, told
 * apart by server_check), else -errno with one line in @p err. */
static int
socket_file(const char *name, const struct memif_port *m, char *err,
	    size_t errlen)
{
	struct stat st;
	int rc;

	if (lstat(m->socket, &st) != 0) {
		rc = -errno;
		if (rc == -ENOENT)
			return 0;
		snprintf(err, errlen, "port %s: cannot check memif socket %s: "
			 "%s", name, m->socket, strerror(-rc));
		return rc;
	}
	if (!S_ISSOCK(st.st_mode)) {
		snprintf(err, errlen, "port %s: memif socket %s exists and is "
			 "not a socket: remove it or name another socket=",
			 name, m->socket);
		return -EEXIST;
	}
	return 0;
}

/* A server's socket: free, or a stale file removed; else refused. */
static int
server_check(struct xnv_core *c, uint16_t idx, char *err, size_t errlen)
{
	const char *name = c->cfg.ports[idx].name;
	const struct memif_port *m = &mports[idx];
	const char *kind = m->abstract ? "abstract socket" : "socket";
	int rc;

	if (socket_shared(c, idx))
		return 0;
	if (!m->abstract && (rc = socket_file(name, m, err, errlen)) < 0)
		return rc;
	rc = memif_listening(m);
	if (rc == 1) {
		snprintf(err, errlen, "port %s: another process listens on "
			 "memif %s %s: stop it or name another socket=", name,
			 kind, m->socket);
		return -EADDRINUSE;
	}
	if (rc == 0 && !m->abstract && unlink(m->socket) == 0) {
		XLOG(INFO, "port %s: removed stale memif socket %s (nobody "
		     "listened on it)\n", name, m->socket);
		return 0;
	}
	if (rc == 0 && (m->abstract || errno == ENOENT))
		return 0;
	rc = rc < 0 ? rc : -errno;
	snprintf(err, errlen, "port %s: cannot check memif %s %s: %s", name,
		 kind, m->socket, strerror(-rc));
	return rc;
}

static int
memif_pre_probe(struct xnv_core *c, uint16_t idx, char *err, size_t errlen)
{
	const struct xnv_port_cfg *pc = &c->cfg.ports[idx];
	struct memif_port *m = &mports[idx];
	int rc = memif_parse(pc, m, err, errlen);

	if (rc < 0)
		return rc;
	if (!m->server && m->zero_copy) {
		snprintf(err, errlen, "port %s: a memif zero-copy client cannot "
			 "share the core's packet pool (external memory) with "
			 "its server: use zero-copy=no, or role=server with the "
			 "peer as the zero-copy client", pc->name);
		return -ENOTSUP;
	}
	return m->server ? server_check(c, idx, err, errlen) : 0;
}

/* A client whose connect was refused waits for its server. */
static int
memif_started(struct xnv_core *c, uint16_t idx, int rc, char *err,
	      size_t errlen)
{
	struct memif_port *m = &mports[idx];

	(void)err;
	(void)errlen;
	m->start_tsc = rte_rdtsc();
	if (rc == 0 || m->server || memif_listening(m) != 0)
		return rc;
	XLOG(INFO, "port %s: waiting for the memif server at %s%s; link down "
	     "until it listens\n", c->cfg.ports[idx].name,
	     m->abstract ? "abstract socket " : "socket ", m->socket);
	m->said = 1;
	m->next_tsc = m->start_tsc;
	return 0;
}

/* A started client whose link is down: stopped, so that link_tick()
 * connects it again; at once when the server went away, else when the
 * handshake had its time (doubled for each one that never finished). */
static void
client_down(struct xnv_core *c, uint16_t idx, uint64_t now)
{
	struct xnv_port *p = &c->ports[idx];
	struct memif_port *m = &mports[idx];
	uint64_t wait = c->tsc_hz / 1000 * XNV_MEMIF_HANDSHAKE_MS
			<< RTE_MIN(m->fails, XNV_MEMIF_BACKOFF_MAX);

	if (!m->was_up && now - m->start_tsc < wait)
		return;
	if (!m->said)
		XLOG(INFO, "port %s: memif server at %s %s; connecting again "
		     "when it listens\n", c->cfg.ports[idx].name, m->socket,
		     m->was_up ? "went away" :
		     "did not finish the handshake");
	m->said = 1;
	m->fails = m->was_up ? 0 : m->fails + 1;
	m->was_up = 0;
	(void)rte_eth_dev_stop(p->port_id);
	p->started = 0;
	m->next_tsc = now;
}

static void
memif_link_tick(struct xnv_core *c, uint16_t idx, uint64_t up,
		uint64_t since, uint64_t now)
{
	struct xnv_port *p = &c->ports[idx];
	struct memif_port *m = &mports[idx];
	int rc;

	(void)since;
	if (m->server)
		return;
	if (up) {
		m->was_up = 1;
		m->said = 0;
		m->fails = 0;
		return;
	}
	if (p->started) {
		client_down(c, idx, now);
		return;
	}
	if (now < m->next_tsc)
		return;
	m->next_tsc = now + c->tsc_hz / 1000 * XNV_MEMIF_RETRY_MS;
	if (memif_listening(m) != 1)
		return;
	rc = rte_eth_dev_start(p->port_id);
	if (rc == 0) {
		p->started = 1;
		m->start_tsc = now;
	} else if (!m->said) {	/* the driver logged why */
		XLOG(WARNING, "port %s: a memif server listens at %s but the "
		     "connect failed; trying again every %u ms\n",
		     c->cfg.ports[idx].name, m->socket, XNV_MEMIF_RETRY_MS);
		m->said = 1;
	}
}

static void
memif_close(struct xnv_core *c, uint16_t idx)
{
	(void)c;
	memset(&mports[idx], 0, sizeof(mports[idx]));
}

const struct xnv_port_drv xnv_port_drv_memif = {
	.prefix = "net_memif",
	.pre_probe = memif_pre_probe,
	.started = memif_started,
	.link_tick = memif_link_tick,
	.close = memif_close,
};

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
 *   every XNV_MEMIF_RETRY_MS until it connects (the driver's line for
 *   each refused connect kept quiet).  One line per outage.
 *
 * Not worked around (dom0-core/README.md): the driver unmaps a
 * connection's memory on the interrupt thread when the peer goes away
 * while the lcore may be inside its rx or tx burst.
 */
#include <errno.h>
#include <poll.h>
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
#include <rte_log.h>

#include "core.h"
#include "port_drv.h"

#define XNV_MEMIF_RETRY_MS 1000		/* connect tries while stopped */
#define XNV_MEMIF_HANDSHAKE_MS 2000	/* link up after a connect, at first */
#define XNV_MEMIF_PROBE_MS 500	/* a server's hello awaited */
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
 * no such file), -errno if that cannot be told.  A DPDK memif server
 * that accepts a connection closed before its hello went out leaves the
 * closed fd in its interrupt thread's epoll set and panics at the next
 * change of it (memif_listener_handler's error path): so the hello is
 * awaited, XNV_MEMIF_PROBE_MS at most, before closing. */
static int
memif_listening(const struct memif_port *m)
{
	struct sockaddr_un un;
	socklen_t len = memif_addr(m, &un);
	struct pollfd pfd = { .events = POLLIN };
	int rc;

	pfd.fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC,
			0);
	if (pfd.fd < 0)
		return -errno;
	rc = connect(pfd.fd, (struct sockaddr *)&un, len) == 0 ? 1 : -errno;
	if (rc == 1)
		(void)poll(&pfd, 1, XNV_MEMIF_PROBE_MS);
	close(pfd.fd);
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

/* Both queues of @p port_id set up: the driver has no queue info, so a
 * set-up queue answers -ENOTSUP, one that is not -EINVAL. */
static int
queues_set_up(uint16_t port_id)
{
	struct rte_eth_rxq_info rx;
	struct rte_eth_txq_info tx;

	return rte_eth_rx_queue_info_get(port_id, 0, &rx) != -EINVAL &&
	       rte_eth_tx_queue_info_get(port_id, 0, &tx) != -EINVAL;
}

/* A client set up whose start failed: its connect was refused (nobody
 * listens yet; the driver logged it), so it waits for its server. */
static int
memif_started(struct xnv_core *c, uint16_t idx, int rc, char *err,
	      size_t errlen)
{
	struct memif_port *m = &mports[idx];

	(void)err;
	(void)errlen;
	m->start_tsc = rte_rdtsc();
	if (rc == 0 || m->server ||
	    !queues_set_up(c->ports[idx].port_id))
		return rc;
	XLOG(INFO, "port %s: waiting for the memif server at %s%s; link down "
	     "until it listens\n", c->cfg.ports[idx].name,
	     m->abstract ? "abstract socket " : "socket ", m->socket);
	m->said = 1;
	m->next_tsc = m->start_tsc;
	return 0;
}

/* A started client whose link is down: stopped, so that link_tick()
 * connects it again.  After the server went away, once the link has
 * been down for a retry period: the driver tears the connection down on
 * its interrupt thread, and rte_eth_dev_stop() would do it again on
 * this one; else once the handshake had its time (doubled for each one
 * in a row that never finished). */
static void
client_down(struct xnv_core *c, uint16_t idx, uint64_t since, uint64_t now)
{
	struct xnv_port *p = &c->ports[idx];
	struct memif_port *m = &mports[idx];
	uint64_t ms = c->tsc_hz / 1000;

	if (!m->said && m->was_up) {
		XLOG(INFO, "port %s: memif server at %s went away; connecting "
		     "again when it listens\n", c->cfg.ports[idx].name,
		     m->socket);
		m->said = 1;
	}
	if (m->was_up ? now - since < ms * XNV_MEMIF_RETRY_MS :
	    now - m->start_tsc < ms * XNV_MEMIF_HANDSHAKE_MS <<
				 RTE_MIN(m->fails, XNV_MEMIF_BACKOFF_MAX))
		return;
	if (!m->said)
		XLOG(INFO, "port %s: memif server at %s did not finish the "
		     "handshake; connecting again\n", c->cfg.ports[idx].name,
		     m->socket);
	m->said = 1;
	m->fails = m->was_up ? 0 : m->fails + 1;
	m->was_up = 0;
	(void)rte_eth_dev_stop(p->port_id);
	p->started = 0;
	m->next_tsc = now;
}

/* rte_eth_dev_start() of a client whose server may not listen yet: the
 * driver logs each refused connect at ERR level, once a retry period
 * without this.  Its log type is quiet for the call (a connect to a
 * listening server is the driver's own, so no probe of ours disturbs
 * the server while it waits). */
static int
start_quiet(uint16_t port_id)
{
	int type = rte_log_register("pmd.net.memif");
	int level = type >= 0 ? rte_log_get_level((uint32_t)type) : -1;
	int rc;

	if (level >= 0)
		(void)rte_log_set_level((uint32_t)type, RTE_LOG_CRIT);
	rc = rte_eth_dev_start(port_id);
	if (level >= 0)
		(void)rte_log_set_level((uint32_t)type, (uint32_t)level);
	return rc;
}

static void
memif_link_tick(struct xnv_core *c, uint16_t idx, uint64_t up,
		uint64_t since, uint64_t now)
{
	struct xnv_port *p = &c->ports[idx];
	struct memif_port *m = &mports[idx];

	if (m->server)
		return;
	if (up) {
		m->was_up = 1;
		m->said = 0;
		m->fails = 0;
		return;
	}
	if (p->started) {
		client_down(c, idx, since, now);
		return;
	}
	if (now < m->next_tsc)
		return;
	m->next_tsc = now + c->tsc_hz / 1000 * XNV_MEMIF_RETRY_MS;
	if (start_quiet(p->port_id) == 0) {
		p->started = 1;
		m->start_tsc = now;
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
	.one_queue = 1,
	.no_rx_intr = 1,
	.pre_probe = memif_pre_probe,
	.started = memif_started,
	.link_tick = memif_link_tick,
	.close = memif_close,
};

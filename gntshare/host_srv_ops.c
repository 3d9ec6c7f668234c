/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Host backend, core side: its ops table (backend.h) over the calls of
 * host.h (host_server.c).
 */
#include <stdio.h>

#include "backends.h"
#include "gntshare/host.h"

static int
host_srv_open(const struct gnts_srv_cfg *cfg, void **impl, char *err,
	      size_t errlen)
{
	return gnts_server_open_cfg(cfg, (struct gnts_server **)impl, err,
				    errlen);
}

static int
host_srv_poll(void *impl)
{
	return gnts_server_poll(impl);
}

static int
host_srv_wait(void *impl, int wake_fd, int max_ms)
{
	return gnts_server_wait(impl, wake_fd, max_ms);
}

static void
host_srv_detach(void *impl, gnts_peer_t peer, int status, const char *why)
{
	gnts_server_detach_status(impl, peer, status, why);
}

static void
host_srv_close(void *impl)
{
	gnts_server_close(impl);
}

static void
host_srv_attach_words(gnts_peer_t peer, pid_t pid, char *buf, size_t len)
{
	snprintf(buf, len, "(pid %d) attached as domain %u", (int)pid, peer);
}

static void
host_srv_peer_words(gnts_peer_t peer, char *buf, size_t len)
{
	snprintf(buf, len, "domain %u", peer);
}

/* A process has nothing beyond its one connection. */
static uint32_t
host_srv_domain_of(gnts_peer_t peer)
{
	return peer;
}

static void
host_srv_domain_words(uint32_t domain, char *buf, size_t len)
{
	snprintf(buf, len, "domain %u", domain);
}

static void
host_srv_where(void *impl, char *buf, size_t len)
{
	snprintf(buf, len, "on %s", gnts_server_path(impl));
}

static void
host_srv_counters(void *impl, struct gnts_srv_counters *ct)
{
	struct gnts_host_stats st;

	gnts_server_stats(impl, &st);
	ct->requests = st.requests;
	ct->refused = st.refused;
	ct->timed_out = st.timed_out;
	ct->evicted = st.evicted;
	ct->not_logged = st.not_logged;
	ct->connections = st.connections;
	ct->waiting = st.waiting;
}

const struct gnts_srv_ops gnts_host_srv_ops = {
	.name = "host",
	.listens = 1,
	.open = host_srv_open,
	.poll = host_srv_poll,
	.wait = host_srv_wait,
	.detach = host_srv_detach,
	.close = host_srv_close,
	.attach_words = host_srv_attach_words,
	.peer_words = host_srv_peer_words,
	.death_words = "connection closed (NF exited or died)",
	.where = host_srv_where,
	.counters = host_srv_counters,
	.domain_of = host_srv_domain_of,
	.domain_words = host_srv_domain_words,
};

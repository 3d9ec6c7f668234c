/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the host backend tests share (header only; test_host_backend.c,
 * test_host_server.c): a server (region.c, host_server.c) on a real unix
 * socket in a mkdtemp() directory, polled by a pthread under S.lock, with
 * "fw-0" attached as S.c / S.dom (setup_server(), teardown_server(), T()).
 * Its callbacks only record into S.rec: the test thread is the client (or
 * forks one) and does every assert, reading S.rec with snap() and reaching
 * the server or grant table only under LOCKED().
 */
#ifndef XNV_HOST_FIXTURE_H
#define XNV_HOST_FIXTURE_H

#include <errno.h>
#include <pthread.h>
#include <setjmp.h>	/* setjmp.h, stdarg.h, stddef.h: before cmocka.h */
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "gntshare/host.h"

#define UNUSED __attribute__((unused))
#define TEST(name) static void name(void **state UNUSED)
#define REFUSE_TEXT "trust group 'closed' admits no new NF"
#define DETACH_TEXT "NF misbehaved: descriptor out of pool"

/* What the server's callbacks saw (the first 4 of each). */
struct rec {
	int n_attach, n_death, n_denied;
	gnts_peer_t attach_dom[4], death_dom[4], denied_dom;
	pid_t attach_pid[4];
	struct gnts_attach_req attach_req[4];
	struct gnts_bell *attach_bell[4];	/* the core's end, or NULL */
	gnts_ref_t denied_ref;
	char denied_why[GNTS_ERR_LEN];
};

static struct {
	pthread_mutex_t lock;	/* server, grant table, rec */
	struct gnts_server *s;
	pthread_t th;
	atomic_int stop;
	char dir[64], path[100];
	struct rec rec;
	struct gnts_client *c;	/* "fw-0", attached by setup_server() */
	gnts_peer_t dom;	/* its domain id */
	struct gnts_region *regions[4];	/* destroyed by teardown_server() */
	int n_regions;
} S = { .lock = PTHREAD_MUTEX_INITIALIZER };

static char err[GNTS_ERR_LEN];	/* reason texts, test thread only */

#define LOCKED(stmt) do { pthread_mutex_lock(&S.lock); stmt; \
			  pthread_mutex_unlock(&S.lock); } while (0)

static inline struct rec
snap(void)
{
	struct rec r;

	LOCKED(r = S.rec);
	return r;
}

static atomic_int n_stale_logs;	/* "removed stale socket" messages */

static inline void
capture_log(int level, const char *msg)
{
	if (strstr(msg, "stale") != NULL)
		atomic_fetch_add(&n_stale_logs, 1);
	fprintf(stderr, "# gntshare log %d: %s\n", level, msg);
}

/* What the owner (xnv-core) answers; nf_id = 40 + domid. */
static const struct gnts_attach_rsp RSP = {
	.service_id = 7, .ring_ref = 11, .ring_size = 512, .pool_ref = 12,
	.pool_bufs = 8192, .buf_size = 2176, .n_ports = 3, .ring_bytes = 69760,
	.pool_bytes = 5ull << 32,
};

static inline int
cb_attach(void *ctx UNUSED, gnts_peer_t dom, const struct gnts_peer_cred *cred,
	  const struct gnts_attach_req *req, struct gnts_bell *bell,
	  struct gnts_attach_rsp *rsp, char *e, size_t elen)
{
	int i = S.rec.n_attach++ & 3;

	S.rec.attach_bell[i] = bell;
	S.rec.attach_dom[i] = dom;
	S.rec.attach_pid[i] = cred->pid;
	S.rec.attach_req[i] = *req;
	if (strcmp(req->group, "closed") == 0) {
		snprintf(e, elen, "%s", REFUSE_TEXT);
		return -EPERM;
	}
	*rsp = RSP;	/* domid left 0: the server assigns it */
	rsp->nf_id = 40 + dom;
	return 0;
}

static inline void
cb_death(void *ctx UNUSED, gnts_peer_t dom)
{
	S.rec.death_dom[S.rec.n_death++ & 3] = dom;
}

static inline void
cb_map_denied(void *ctx UNUSED, gnts_peer_t dom, gnts_ref_t ref, const char *why)
{
	S.rec.n_denied++;
	S.rec.denied_dom = dom;
	S.rec.denied_ref = ref;
	snprintf(S.rec.denied_why, sizeof(S.rec.denied_why), "%s", why);
}

static const struct gnts_srv_cb ops = {
	.attach = cb_attach, .death = cb_death, .map_denied = cb_map_denied,
};

static inline void *
server_main(void *arg UNUSED)
{
	for (int rc; !atomic_load(&S.stop);) {
		LOCKED(rc = gnts_server_poll(S.s));
		if (rc <= 0)
			usleep(200);
	}
	return NULL;
}

/* Wait (up to 5 s) until the server has seen @p n deaths; returns them. */
static inline int
wait_deaths(int n)
{
	for (int i = 0; i < 5000 && snap().n_death < n; i++)
		usleep(1000);
	return snap().n_death;
}

/* Attach as NF @p name of trust group @p group with request flags
 * @p flags (GNTS_REQ_*); reason text in err. */
static inline int
attach_flags(const char *name, const char *group, unsigned flags,
	     struct gnts_client **c, struct gnts_attach_rsp *rsp)
{
	struct gnts_attach_req req = { .alloc_bufs = 0, .flags = flags };

	snprintf(req.name, sizeof(req.name), "%s", name);
	snprintf(req.service, sizeof(req.service), "firewall");
	snprintf(req.group, sizeof(req.group), "%s", group);
	return gnts_client_attach(S.path, &req, rsp, c, err, sizeof(err));
}

static inline int
attach_as(const char *name, const char *group, struct gnts_client **c,
	  struct gnts_attach_rsp *rsp)
{
	return attach_flags(name, group, 0, c, rsp);
}

/* Map @p ref as client @p c: 0 and the mapping in M, or -errno and err. */
static struct { void *va; size_t size; } M;

static inline int
map(struct gnts_client *c, gnts_ref_t ref, int ro)
{
	memset(&M, 0, sizeof(M));
	return gnts_client_map(c, ref, ro, &M.va, &M.size, err, sizeof(err));
}

/* Region of @p size granted to @p dom (0: to nobody), for this test. */
static inline struct gnts_region *
make_region(const char *name, size_t size, unsigned flags, gnts_peer_t dom,
	    int ro)
{
	struct gnts_region *r = NULL;
	int rc;

	LOCKED(rc = gnts_region_create(name, size, flags, &r);
	       if (rc == 0 && dom != 0) rc = gnts_region_grant(r, dom, ro));
	assert_int_equal(rc, 0);
	S.regions[S.n_regions++] = r;
	return r;
}

static inline int
setup_server(void **state UNUSED)
{
	struct gnts_attach_rsp rsp;

	memset(&S.rec, 0, sizeof(S.rec));
	S.c = NULL;
	snprintf(S.dir, sizeof(S.dir), "/tmp/gnts-unit-XXXXXX");
	assert_non_null(mkdtemp(S.dir));
	snprintf(S.path, sizeof(S.path), "%s/xnv.sock", S.dir);
	assert_int_equal(gnts_server_open(S.path, &ops, NULL, &S.s, err,
					  sizeof(err)), 0);
	atomic_store(&S.stop, 0);
	assert_int_equal(pthread_create(&S.th, NULL, server_main, NULL), 0);
	assert_int_equal(attach_as("fw-0", "blue", &S.c, &rsp), 0);
	S.dom = rsp.domid;
	return 0;
}

static inline int
teardown_server(void **state UNUSED)
{
	gnts_client_close(S.c);
	atomic_store(&S.stop, 1);
	pthread_join(S.th, NULL);
	gnts_server_close(S.s);
	while (S.n_regions > 0)
		gnts_region_destroy(S.regions[--S.n_regions]);
	/* gnts_server_close() unlinks the socket: the directory is empty. */
	assert_int_equal(rmdir(S.dir), 0);
	return 0;
}

/* [p, p+n) is all 0: the first byte is, and each equals the next. */
#define ALL_ZERO(p, n) (*(unsigned char *)(p) == 0 && \
			memcmp((p), (char *)(p) + 1, (n) - 1) == 0)

#define T(name) cmocka_unit_test_setup_teardown(name, setup_server, teardown_server)

#endif

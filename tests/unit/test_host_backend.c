/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the gntshare host backend (region.c, host_server.c,
 * host_client.c): regions and grants, then the rendezvous over a real unix
 * socket in a mkdtemp() directory.  The server is polled by a pthread under
 * S.lock; its callbacks only record into S.rec.  The test thread is the
 * client (or forks one) and does every assert.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>	/* setjmp.h, stdarg.h, stddef.h: before cmocka.h */
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
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

static struct rec
snap(void)
{
	struct rec r;

	LOCKED(r = S.rec);
	return r;
}

static atomic_int n_stale_logs;	/* "removed stale socket" messages */

static void
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

static int
cb_attach(void *ctx UNUSED, gnts_peer_t dom, const struct gnts_peer_cred *cred,
	  const struct gnts_attach_req *req, struct gnts_attach_rsp *rsp,
	  char *e, size_t elen)
{
	int i = S.rec.n_attach++ & 3;

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

static void
cb_death(void *ctx UNUSED, gnts_peer_t dom)
{
	S.rec.death_dom[S.rec.n_death++ & 3] = dom;
}

static void
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

static void *
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
static int
wait_deaths(int n)
{
	for (int i = 0; i < 5000 && snap().n_death < n; i++)
		usleep(1000);
	return snap().n_death;
}

/* Attach as NF @p name of trust group @p group; reason text in err. */
static int
attach_as(const char *name, const char *group, struct gnts_client **c,
	  struct gnts_attach_rsp *rsp)
{
	struct gnts_attach_req req = { .alloc_bufs = 0 };

	snprintf(req.name, sizeof(req.name), "%s", name);
	snprintf(req.service, sizeof(req.service), "firewall");
	snprintf(req.group, sizeof(req.group), "%s", group);
	return gnts_client_attach(S.path, &req, rsp, c, err, sizeof(err));
}

/* Map @p ref as client @p c: 0 and the mapping in M, or -errno and err. */
static struct { void *va; size_t size; } M;

static int
map(struct gnts_client *c, gnts_ref_t ref, int ro)
{
	memset(&M, 0, sizeof(M));
	return gnts_client_map(c, ref, ro, &M.va, &M.size, err, sizeof(err));
}

/* Region of @p size granted to @p dom (0: to nobody), for this test. */
static struct gnts_region *
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

static int
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

static int
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

/* ---- regions and grants (no server) ----------------------------------- */

TEST(test_region_create_rounds_zeroes_finds)
{
	static const size_t in[] = { 1, 4096, 5000, 3 * 4096 + 1 };
	static const size_t want[] = { 4096, 4096, 8192, 4 * 4096 };
	struct gnts_region *r[4];

	for (int i = 0; i < 4; i++) {
		assert_int_equal(gnts_region_create("unit", in[i], 0, &r[i]), 0);
		assert_int_equal(r[i]->size, want[i]);
		assert_int_equal(r[i]->page_size, GNTS_SMALL_PAGE);
		assert_string_equal(r[i]->name, "unit");
		assert_true(ALL_ZERO(r[i]->va, r[i]->size));
		memset(r[i]->va, 0xff, r[i]->size);	/* writable, all of it */
		assert_int_not_equal(r[i]->ref, GNTS_REF_INVALID);
		for (int j = 0; j < i; j++)
			assert_int_not_equal(r[i]->ref, r[j]->ref);
	}
	assert_null(gnts_region_find(GNTS_REF_INVALID));
	for (int i = 0; i < 4; i++) {
		gnts_ref_t ref = r[i]->ref;

		assert_ptr_equal(gnts_region_find(ref), r[i]);
		gnts_region_destroy(r[i]);
		assert_null(gnts_region_find(ref));
	}
	assert_int_equal(gnts_region_create("zero", 0, 0, &r[0]), -EINVAL);
}

TEST(test_region_create_huge_with_or_without_hugepages)
{
	const size_t sz = 3u << 20;
	int huge = gnts_hugepages_available();
	struct gnts_region *r = NULL;
	struct stat st;

	print_message("# hugepages %savailable: expecting %s pages\n",
		      huge ? "" : "NOT ", huge ? "2 MiB" : "4 KiB fallback");
	assert_int_equal(gnts_region_create("huge", sz, GNTS_F_HUGE, &r), 0);
	assert_int_equal(r->page_size, huge ? GNTS_HUGE_PAGE : GNTS_SMALL_PAGE);
	assert_int_equal(r->size, huge ? 4u << 20 : sz);
	/* Really backed by hugetlbfs: its files report the huge page size. */
	assert_true(fstat(r->fd, &st) == 0 && (size_t)st.st_blksize == r->page_size);
	assert_true(ALL_ZERO(r->va, r->size));
	memset(r->va, 0x5a, r->size);
	gnts_region_destroy(r);
	r = NULL;
	assert_int_equal(gnts_region_create("strict", sz, GNTS_F_HUGE |
					    GNTS_F_NO_FALLBACK, &r),
			 huge ? 0 : -ENOMEM);
	if (huge)
		assert_int_equal(r->page_size, GNTS_HUGE_PAGE);
	gnts_region_destroy(r);
}

TEST(test_grant_lookup_revoke)
{
	struct gnts_region *r, *r2;
	int ro = -1;

	assert_int_equal(gnts_region_create("g", 4096, 0, &r), 0);
	assert_null(gnts_region_lookup(r->ref, 5, &ro));
	assert_int_equal(gnts_region_grant(r, 5, 0), 0);
	assert_ptr_equal(gnts_region_lookup(r->ref, 5, &ro), r);
	assert_int_equal(ro, 0);
	assert_int_equal(gnts_region_grant(r, 5, 0), 0);	/* no-op */
	assert_int_equal(r->n_grants, 1);
	assert_int_equal(gnts_region_grant(r, 6, 1), 0);
	assert_ptr_equal(gnts_region_lookup(r->ref, 6, &ro), r);
	assert_int_equal(ro, 1);
	assert_null(gnts_region_lookup(r->ref, 7, NULL));
	assert_null(gnts_region_lookup(r->ref + 1000, 5, NULL));
	assert_int_equal(gnts_region_revoke(r, 5), 0);
	assert_null(gnts_region_lookup(r->ref, 5, NULL));
	assert_ptr_equal(gnts_region_lookup(r->ref, 6, NULL), r);
	assert_int_equal(gnts_region_revoke(r, 5), -ENOENT);
	/* revoke_domain ends the domain's grants on every region, only its. */
	assert_int_equal(gnts_region_create("g2", 4096, 0, &r2), 0);
	assert_int_equal(gnts_region_grant(r2, 6, 0), 0);
	assert_int_equal(gnts_region_grant(r2, 8, 0), 0);
	gnts_revoke_domain(6);
	assert_null(gnts_region_lookup(r->ref, 6, NULL));
	assert_null(gnts_region_lookup(r2->ref, 6, NULL));
	assert_ptr_equal(gnts_region_lookup(r2->ref, 8, NULL), r2);
	/* The set of grantees is bounded. */
	for (gnts_peer_t d = 100; d < 100 + GNTS_MAX_GRANTEES - 1; d++)
		assert_int_equal(gnts_region_grant(r2, d, 0), 0);
	assert_int_equal(gnts_region_grant(r2, 999, 0), -ENOSPC);
	assert_int_equal(gnts_region_grant(r2, 8, 0), 0);	/* existing */
	gnts_region_destroy(r);
	gnts_region_destroy(r2);
}

/* ---- attach (setup_server() attached "fw-0" as S.c / S.dom) ------------ */

TEST(test_attach_delivers_request_and_response)
{
	struct gnts_attach_req want_req = { "fw-1", "firewall", "blue", 0 };
	struct gnts_attach_rsp rsp, want = RSP;
	struct gnts_client *c = NULL;
	pid_t spid[2];

	assert_int_equal(attach_as("fw-1", "blue", &c, &rsp), 0);
	LOCKED(spid[0] = gnts_server_pid(S.s, S.dom);
	       spid[1] = gnts_server_pid(S.s, rsp.domid));
	struct rec r = snap();
	assert_int_equal(r.n_attach, 2);
	assert_memory_equal(&r.attach_req[1], &want_req, sizeof(want_req));
	/* Domain ids: assigned by the server, non-zero, distinct. */
	assert_true(S.dom != 0 && rsp.domid != 0);
	assert_int_not_equal(rsp.domid, S.dom);
	assert_true(r.attach_dom[0] == S.dom && r.attach_dom[1] == rsp.domid);
	assert_int_equal(r.attach_pid[1], getpid());
	assert_true(spid[0] == getpid() && spid[1] == getpid());
	/* Everything the owner filled in arrives, 64-bit fields too. */
	want.domid = rsp.domid;
	want.nf_id = 40 + rsp.domid;
	assert_memory_equal(&rsp, &want, sizeof(want));
	gnts_client_close(c);
	assert_int_equal(wait_deaths(1), 1);
	assert_int_equal(snap().death_dom[0], rsp.domid);
}

TEST(test_attach_refused_with_reason)
{
	struct gnts_client *c = NULL;
	struct gnts_attach_rsp rsp;

	assert_int_equal(attach_as("fw-x", "closed", &c, &rsp), -EPERM);
	assert_null(c);
	assert_string_equal(err, REFUSE_TEXT);
	/* The server goes on serving; a refused attach is no death. */
	assert_int_equal(attach_as("fw-y", "blue", &c, &rsp), 0);
	assert_true(snap().n_attach == 3 && snap().n_death == 0);
	gnts_client_close(c);
}

/* ---- map -------------------------------------------------------------- */

TEST(test_map_granted_region_is_shared)
{
	/* A small-page region, and a pool as the core makes them (huge). */
	for (unsigned flags = 0; flags <= GNTS_F_HUGE; flags += GNTS_F_HUGE) {
		struct gnts_region *r = make_region("pool-blue", 3 * 4096, flags,
						    S.dom, 0);

		assert_int_equal(map(S.c, r->ref, 0), 0);
		assert_int_equal(M.size, r->size);
		assert_ptr_not_equal(M.va, r->va);	/* a mapping of its own */
		/* Client writes are visible to the server and vice versa. */
		strcpy((char *)M.va + 2 * 4096 + 10, "from the NF");
		assert_string_equal((char *)r->va + 2 * 4096 + 10, "from the NF");
		strcpy((char *)r->va + 100, "from the core");
		assert_string_equal((char *)M.va + 100, "from the core");
		gnts_client_unmap(M.va, M.size);
	}
	assert_int_equal(snap().n_denied, 0);
}

TEST(test_map_not_granted_or_missing_denied)
{
	struct gnts_region *r = make_region("pool-red", 4096, 0, S.dom + 100, 0);
	char want[96];

	/* Granted, but to somebody else: the reply names only the
	 * requester's own request, not whose region it is. */
	assert_int_equal(map(S.c, r->ref, 0), -EACCES);
	snprintf(want, sizeof(want), "map of region %u refused: not granted "
		 "to this domain", r->ref);
	assert_non_null(strstr(err, want));
	assert_null(strstr(err, "pool-red"));
	struct rec rec = snap();
	assert_int_equal(rec.n_denied, 1);
	assert_int_equal(rec.denied_dom, S.dom);
	assert_int_equal(rec.denied_ref, r->ref);
	/* The owner's log line also says whose region it was. */
	snprintf(want, sizeof(want), "map of region %u (pool-red) refused: "
		 "not granted to this domain", r->ref);
	assert_string_equal(rec.denied_why, want);
	/* No such region at all: the same words (nothing learnt). */
	assert_int_equal(map(S.c, 0x7fff0001u, 1), -EACCES);
	assert_non_null(strstr(err, "region 2147418113 refused: not granted"));
	rec = snap();
	assert_int_equal(rec.n_denied, 2);
	assert_int_equal(rec.denied_ref, 0x7fff0001u);
	/* Refusals do not end the attachment. */
	assert_int_equal(gnts_client_alive(S.c, err, sizeof(err)), 1);
}

TEST(test_map_readonly_grant)
{
	struct gnts_region *r = make_region("stats", 2 * 4096, 0, S.dom, 1);

	strcpy((char *)r->va + 4096, "read me");
	assert_int_equal(map(S.c, r->ref, 0), -EACCES);
	assert_non_null(strstr(err, "granted read-only"));
	assert_null(strstr(err, "stats"));
	assert_int_equal(snap().n_denied, 1);
	assert_non_null(strstr(snap().denied_why, "(stats)"));
	assert_int_equal(map(S.c, r->ref, 1), 0);
	assert_int_equal(M.size, 2 * 4096);
	assert_string_equal((char *)M.va + 4096, "read me");
	strcpy((char *)r->va, "updated");
	assert_string_equal((char *)M.va, "updated");
	/* The fd it got is read-only: no upgrading the mapping. */
	assert_int_equal(mprotect(M.va, M.size, PROT_READ | PROT_WRITE), -1);
	assert_int_equal(errno, EACCES);
	gnts_client_unmap(M.va, M.size);
}

/* ---- death and detach ------------------------------------------------- */

TEST(test_death_on_bye_revokes_grants)
{
	struct gnts_region *r = make_region("pool", 4096, 0, S.dom, 0);
	struct gnts_region *other = make_region("pool2", 4096, 0, S.dom + 50, 0);
	struct gnts_region *still, *kept, *found;

	gnts_client_close(S.c);
	S.c = NULL;
	assert_int_equal(wait_deaths(1), 1);
	assert_int_equal(snap().death_dom[0], S.dom);
	LOCKED(still = gnts_region_lookup(r->ref, S.dom, NULL);
	       kept = gnts_region_lookup(other->ref, S.dom + 50, NULL);
	       found = gnts_region_find(r->ref));
	assert_null(still);
	assert_ptr_equal(kept, other);	/* other domains keep theirs */
	assert_ptr_equal(found, r);	/* the region itself stays */
}

TEST(test_death_on_sigkill)
{
	struct gnts_region *r = NULL, *still;
	uint32_t dom = 0;
	int pfd[2], seen = 0;

	assert_int_equal(pipe(pfd), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {		/* the NF: attach, report, wait to be killed */
		struct gnts_client *c;
		struct gnts_attach_rsp rsp;

		alarm(20);	/* never outlive a failed parent for long */
		if (attach_as("victim", "blue", &c, &rsp) == 0)
			dom = rsp.domid;
		if (write(pfd[1], &dom, sizeof(dom)) == sizeof(dom))
			for (;;)
				pause();
		_exit(2);
	}
	close(pfd[1]);
	/* The child's alarm() bounds this read. */
	int ok = read(pfd[0], &dom, sizeof(dom)) == sizeof(dom) && dom != 0;
	close(pfd[0]);
	if (ok) {
		r = make_region("pool", 4096, 0, dom, 0);
		LOCKED(seen = gnts_server_pid(S.s, dom));
	}
	kill(pid, SIGKILL);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
	assert_true(ok);
	assert_int_equal(seen, pid);
	assert_int_equal(wait_deaths(1), 1);
	assert_int_equal(snap().death_dom[0], dom);
	LOCKED(still = gnts_region_lookup(r->ref, dom, NULL));
	assert_null(still);
}

TEST(test_server_detach_seen_by_client)
{
	assert_int_equal(gnts_client_alive(S.c, err, sizeof(err)), 1);
	LOCKED(gnts_server_detach(S.s, S.dom, DETACH_TEXT));
	assert_int_equal(wait_deaths(1), 1);
	assert_int_equal(snap().death_dom[0], S.dom);
	err[0] = '\0';
	assert_int_equal(gnts_client_alive(S.c, err, sizeof(err)), 0);
	assert_string_equal(err, DETACH_TEXT);
}

/* ---- server_open ------------------------------------------------------ */

TEST(test_server_open_removes_stale_socket)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct gnts_server *s2 = NULL;
	struct stat st;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/stale.sock", S.dir);
	int fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	close(fd);	/* the file stays behind, nobody listening */
	assert_true(lstat(sa.sun_path, &st) == 0 && S_ISSOCK(st.st_mode));
	int logs = atomic_load(&n_stale_logs);
	assert_int_equal(gnts_server_open(sa.sun_path, &ops, NULL, &s2, err,
					  sizeof(err)), 0);
	assert_int_equal(atomic_load(&n_stale_logs), logs + 1);
	/* And it listens there now. */
	fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	close(fd);
	gnts_server_close(s2);
	assert_int_equal(lstat(sa.sun_path, &st), -1);
}

TEST(test_server_open_refuses_live_socket_and_bad_paths)
{
	struct gnts_server *s2 = NULL;
	char path[200];

	assert_int_equal(gnts_server_open(S.path, &ops, NULL, &s2, err,
					  sizeof(err)), -EADDRINUSE);
	assert_non_null(strstr(err, S.path));
	/* The live server was not disturbed. */
	assert_int_equal(map(S.c, 0x7fff0001u, 0), -EACCES);
	assert_int_equal(gnts_client_alive(S.c, err, sizeof(err)), 1);
	memset(path, 'a', sizeof(path) - 1);
	path[0] = '/';
	path[sizeof(path) - 1] = '\0';
	assert_int_equal(gnts_server_open(path, &ops, NULL, &s2, err,
					  sizeof(err)), -ENAMETOOLONG);
	assert_non_null(strstr(err, "too long"));
	/* A file that is not a socket is not removed. */
	snprintf(path, sizeof(path), "%s/fifo", S.dir);
	assert_int_equal(mkfifo(path, 0600), 0);
	assert_int_equal(gnts_server_open(path, &ops, NULL, &s2, err,
					  sizeof(err)), -EEXIST);
	assert_int_equal(unlink(path), 0);
	assert_null(s2);
}

/* ---- protocol errors -------------------------------------------------- */

TEST(test_malformed_message_drops_only_that_connection)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct timeval tv = { .tv_sec = 5 };
	struct gnts_region *r = make_region("pool", 4096, 0, S.dom, 0);
	struct gnts_client *c;
	struct gnts_attach_rsp rsp;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", S.path);
	int fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)), 0);
	assert_int_equal(send(fd, "0123456789", 10, 0), 10);
	/* The server says why and hangs up on it (recv 0), rather than
	 * leaving it to time out (-1). */
	struct gnts_msg why;

	assert_int_equal(recv(fd, &why, sizeof(why), 0), (ssize_t)sizeof(why));
	assert_int_equal(why.type, GNTS_MSG_ERROR);
	assert_int_equal(why.status, -EPROTO);
	assert_int_equal(recv(fd, &why, sizeof(why), 0), 0);
	close(fd);
	/* The other connection is untouched and keeps being served. */
	assert_int_equal(gnts_client_alive(S.c, err, sizeof(err)), 1);
	assert_int_equal(map(S.c, r->ref, 0), 0);
	gnts_client_unmap(M.va, M.size);
	assert_int_equal(attach_as("fw-1", "blue", &c, &rsp), 0);
	gnts_client_close(c);
	assert_int_equal(wait_deaths(1), 1);	/* fw-1's BYE; fw-0 lives */
	assert_int_equal(snap().death_dom[0], rsp.domid);
}

#define T(name) cmocka_unit_test_setup_teardown(name, setup_server, teardown_server)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_region_create_rounds_zeroes_finds),
		cmocka_unit_test(test_region_create_huge_with_or_without_hugepages),
		cmocka_unit_test(test_grant_lookup_revoke),
		T(test_attach_delivers_request_and_response),
		T(test_attach_refused_with_reason),
		T(test_map_granted_region_is_shared),
		T(test_map_not_granted_or_missing_denied),
		T(test_map_readonly_grant),
		T(test_death_on_bye_revokes_grants),
		T(test_death_on_sigkill),
		T(test_server_detach_seen_by_client),
		T(test_server_open_removes_stale_socket),
		T(test_server_open_refuses_live_socket_and_bad_paths),
		T(test_malformed_message_drops_only_that_connection),
	};

	signal(SIGPIPE, SIG_IGN);
	gnts_set_logger(capture_log);
	return cmocka_run_group_tests_name("gntshare_host_backend", tests,
					   NULL, NULL);
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the gntshare host backend (region.c, host_server.c,
 * host_client.c): regions and grants, then over a real unix socket in a
 * mkdtemp() directory (host_fixture.h) attach and map.  What happens when
 * a peer goes, opening the socket, and protocol errors are
 * test_host_server.c's.
 */
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "host_fixture.h"

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
	struct gnts_attach_req want_req = { "fw-1", "firewall", "blue", 0, 0 };
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
	};

	signal(SIGPIPE, SIG_IGN);
	gnts_set_logger(capture_log);
	return cmocka_run_group_tests_name("gntshare_host_backend", tests,
					   NULL, NULL);
}

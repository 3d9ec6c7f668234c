/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lb: L4 load balancer.  A new TCP/UDP flow to a VIP goes to the backend
 * Maglev's table picks for its 5-tuple hash; its destination address is
 * rewritten (IPv4 header and TCP/UDP checksums updated incrementally) and
 * the flow remembered, so it stays on its backend while that backend is
 * listed.  Replies from the backend get the VIP back as source.  SIGHUP
 * re-reads the backend file (at the next packet).  See README.md.
 *
 *   xnv-lb --service lb -- --backends backends.txt [--vip 10.0.0.100]
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "htab.h"
#include "maglev.h"
#include "nfmain.h"
#include "parse.h"
#include "pkt.h"
#include "rules.h"

#define MAX_VIPS      16
#define MAX_BACKENDS  1024	/* listed at once, per family */
#define MAX_SEEN      4096	/* backends counted over the run */
#define FLOW_SEED     0x6c62ull

enum {
	C_PACKETS, C_BALANCED, C_REPLIES, C_PASSED, C_NO_BACKEND, C_NEW_FLOWS,
	C_FLOWS_MOVED, C_TABLE_FULL, C_EXPIRED, C_RELOADS, C_RELOAD_ERRORS, C_N
};
static const char *const counter_names[C_N] = {
	"packets", "balanced", "replies", "passed", "no_backend", "new_flows",
	"flows_moved", "table_full", "expired", "reloads", "reload_errors",
};

struct backend {
	uint8_t ver;
	uint8_t addr[16];
};

struct bstats {
	uint64_t packets, flows;
};

/* Value of a flow in the connection table. */
struct conn {
	uint8_t rev;		/* 1: a reply flow, addr = the VIP */
	uint8_t addr[16];	/* forward: the backend */
	struct bstats *st;	/* forward: its counters (never moved) */
	uint64_t last_ns;
};

struct family {
	struct maglev mg;
	struct backend b[MAX_BACKENDS];
	uint32_t n;
};

struct lb {
	const char *path;
	struct prefix vip[MAX_VIPS];
	unsigned n_vips;
	uint32_t table_size, max_flows;
	uint64_t timeout_ns, now;
	struct family fam[2];		/* IPv4, IPv6 */
	struct htab listed;		/* backends in the file now */
	struct htab seen;		/* struct backend -> struct bstats */
	struct htab conns;		/* flow_key -> struct conn */
	uint32_t sweep_at;
	uint64_t swept_ns;		/* the sweep's clock (sweep_budget()) */
	uint64_t c[C_N];
};

static volatile sig_atomic_t reload_asked;

static void
on_hup(int sig)
{
	reload_asked = sig;
}

/* Read the backend file into @p fam (both families) and @p listed. */
static int
read_backends(const char *path, struct family *fam, struct htab *listed)
{
	struct rfile rf;
	struct backend b;
	const char *err;
	int n, is_new;

	if (rfile_open(&rf, path) < 0)
		return -1;
	while ((n = rfile_next(&rf)) > 0) {
		struct family *f;

		memset(&b, 0, sizeof(b));
		if (n != 1) {
			n = rfile_error(&rf, "expected one address a line");
			break;
		}
		if ((err = parse_addr(rf.word[0], &b.ver, b.addr)) != NULL) {
			n = rfile_error(&rf, "'%s': %s", rf.word[0], err);
			break;
		}
		f = &fam[b.ver == 6];
		if (f->n == MAX_BACKENDS || f->n == f->mg.size) {
			n = rfile_error(&rf, "more than %u IPv%u backends",
					f->n, b.ver);
			break;
		}
		if (htab_insert(listed, &b, &is_new) == NULL || !is_new) {
			n = rfile_error(&rf, "backend %s listed twice",
					rf.word[0]);
			break;
		}
		f->b[f->n++] = b;
	}
	rfile_close(&rf);
	return n;
}

static int
build_tables(struct family *fam)
{
	uint64_t ids[MAX_BACKENDS];

	for (int v = 0; v < 2; v++) {
		for (uint32_t i = 0; i < fam[v].n; i++)
			ids[i] = hash_bytes(&fam[v].b[i], sizeof(struct backend), 0);
		if (maglev_build(&fam[v].mg, ids, fam[v].n) < 0)
			return -1;
	}
	return 0;
}

/* A flow whose backend left the file must go: its next packet picks
 * afresh.  Flows of the backends still listed are kept. */
static int
conn_orphaned(const void *key, void *val, void *arg)
{
	const struct flow_key *k = key;
	const struct conn *c = val;
	struct lb *lb = arg;
	struct backend b = { .ver = k->ver };

	memcpy(b.addr, c->rev ? k->src : c->addr, sizeof(b.addr));
	if (htab_find(&lb->listed, &b) != NULL)
		return 0;
	nf_count(lb->c, C_FLOWS_MOVED, !c->rev);
	return 1;
}

static int
conn_idle(const void *key, void *val, void *arg)
{
	const struct conn *c = val;
	struct lb *lb = arg;

	(void)key;
	if (lb->now - c->last_ns <= lb->timeout_ns)
		return 0;
	nf_count(lb->c, C_EXPIRED, !c->rev);
	return 1;
}

static void
reload(struct lb *lb)
{
	static struct family fam[2];	/* large: not on the stack */
	struct htab listed;
	uint32_t at = 0;

	nf_count(lb->c, C_RELOADS, 1);
	if (htab_init(&listed, 2 * MAX_BACKENDS, sizeof(struct backend), 0) < 0)
		goto fail;
	for (int v = 0; v < 2; v++) {
		fam[v].n = 0;
		fam[v].mg = lb->fam[v].mg;	/* same table, rebuilt below */
	}
	if (read_backends(lb->path, fam, &listed) < 0) {
		htab_free(&listed);
		goto fail;
	}
	for (int v = 0; v < 2; v++) {
		memcpy(lb->fam[v].b, fam[v].b, fam[v].n * sizeof(fam[v].b[0]));
		lb->fam[v].n = fam[v].n;
	}
	build_tables(lb->fam);
	htab_free(&lb->listed);
	lb->listed = listed;
	htab_sweep(&lb->conns, &at, lb->conns.mask + 1, conn_orphaned, lb);
	fprintf(stderr, "xnv-lb: reloaded %s: %u IPv4 and %u IPv6 backends\n",
		lb->path, lb->fam[0].n, lb->fam[1].n);
	return;
fail:
	nf_count(lb->c, C_RELOAD_ERRORS, 1);
	fprintf(stderr, "xnv-lb: reload of %s failed: keeping %u IPv4 and "
		"%u IPv6 backends\n", lb->path, lb->fam[0].n, lb->fam[1].n);
}

static int
is_vip(const struct lb *lb, unsigned ver, const uint8_t *dst)
{
	if (lb->n_vips == 0)
		return 1;
	for (unsigned i = 0; i < lb->n_vips; i++)
		if (prefix_match(&lb->vip[i], ver, dst))
			return 1;
	return 0;
}

/* Remember a new flow on backend @p b, and its reply flow. */
static void
add_conn(struct lb *lb, const struct flow_key *k, const struct backend *b,
	 struct bstats *st)
{
	struct flow_key r;
	struct conn *c, *rc;
	int is_new;

	flow_key_reverse(k, &r);
	memcpy(r.src, b->addr, sizeof(r.src));
	c = htab_insert(&lb->conns, k, &is_new);
	rc = c != NULL ? htab_insert(&lb->conns, &r, &is_new) : NULL;
	if (rc == NULL) {
		if (c != NULL)
			htab_remove(&lb->conns, k);
		nf_count(lb->c, C_TABLE_FULL, 1);
		return;
	}
	memcpy(c->addr, b->addr, sizeof(c->addr));
	c->st = st;
	c->last_ns = lb->now;
	rc->rev = 1;
	memcpy(rc->addr, k->dst, sizeof(rc->addr));
	rc->last_ns = lb->now;
}

/* Before a burst (nfmain.h): a reload SIGHUP asked for, the clock, and
 * the connection table swept as far as the time since the last sweep
 * earned (htab_sweep_paced()). */
static void
burst_start(void *ctx, struct xnv_pkt *pkts, unsigned n)
{
	struct lb *lb = ctx;

	if (reload_asked) {
		reload_asked = 0;
		reload(lb);
	}
	(void)pkts, (void)n;
	lb->now = coarse_ns();
	htab_sweep_paced(&lb->conns, &lb->sweep_at, &lb->swept_ns, lb->now,
			 lb->timeout_ns, conn_idle, lb);
}

/* One packet (the burst's clock read: burst_start). */
static xnv_action_t
balance(struct xnv_pkt *pkt, void *ctx)
{
	struct lb *lb = ctx;
	uint8_t *p = xnv_pkt_data(pkt);
	const struct family *f;
	struct pkt_info pi;
	struct flow_key k;
	struct backend b;
	struct bstats *st;
	struct conn *c;
	int is_new;

	nf_count(lb->c, C_PACKETS, 1);
	if (pkt_parse(p, xnv_pkt_len(pkt), &pi) != PKT_IP || !pi.has_ports) {
		nf_count(lb->c, C_PASSED, 1);		/* not TCP/UDP with ports */
		return XNV_NEXT;
	}
	flow_key_get(p, &pi, &k);
	c = htab_find(&lb->conns, &k);
	if (c != NULL && conn_idle(&k, c, lb)) {
		htab_remove(&lb->conns, &k);
		c = NULL;
	}
	if (c != NULL && c->rev) {
		c->last_ns = lb->now;
		pkt_set_addr(p, &pi, PKT_SRC, c->addr);
		nf_count(lb->c, C_REPLIES, 1);
		return XNV_NEXT;
	}
	if (c != NULL) {
		c->last_ns = lb->now;
		st = c->st;
		memcpy(b.addr, c->addr, sizeof(b.addr));
	} else {
		if (!is_vip(lb, k.ver, k.dst)) {
			nf_count(lb->c, C_PASSED, 1);
			return XNV_NEXT;
		}
		f = &lb->fam[k.ver == 6];
		if (f->n == 0) {
			nf_count(lb->c, C_NO_BACKEND, 1);
			return XNV_DROP;
		}
		b = f->b[maglev_lookup(&f->mg, hash_bytes(&k, sizeof(k),
							 FLOW_SEED))];
		if ((st = htab_insert(&lb->seen, &b, &is_new)) == NULL)
			st = htab_find(&lb->seen, &b);	/* full: NULL if new */
		add_conn(lb, &k, &b, st);
		nf_count(lb->c, C_NEW_FLOWS, 1);
		if (st != NULL)
			st->flows++;
	}
	if (st != NULL)
		st->packets++;
	pkt_set_addr(p, &pi, PKT_DST, b.addr);
	nf_count(lb->c, C_BALANCED, 1);
	return XNV_NEXT;
}

static int
on_opt(void *ctx, int c, const char *arg)
{
	struct lb *lb = ctx;
	const char *err = NULL, *what = "";
	uint32_t v;

	switch (c) {
	case 'b':
		lb->path = arg;
		return 0;
	case 'v':
		what = "--vip";
		if (lb->n_vips == MAX_VIPS)
			err = "too many (16 at most)";
		else
			err = parse_prefix(arg, &lb->vip[lb->n_vips++]);
		break;
	case 's':
		what = "--table-size";
		err = parse_u32(arg, 3, 1u << 24, &lb->table_size);
		if (err == NULL && !maglev_is_prime(lb->table_size))
			err = "not a prime (e.g. 251, 4093, 65537, 655373)";
		break;
	case 't':
		what = "--flow-timeout";
		err = parse_u32(arg, 1, 86400, &v);
		lb->timeout_ns = (uint64_t)v * 1000000000u;
		break;
	case 'm':
		what = "--max-flows";
		err = parse_u32(arg, 16, 1u << 22, &lb->max_flows);
		break;
	}
	if (err != NULL)
		fprintf(stderr, "xnv-lb: %s '%s': %s\n", what, arg, err);
	return err != NULL ? -1 : 0;
}

static int
load(void *ctx)
{
	struct lb *lb = ctx;
	struct sigaction sa;

	if (lb->path == NULL) {
		fprintf(stderr, "xnv-lb: --backends FILE is required "
			"(see -- --help)\n");
		return NF_USAGE;
	}
	if (maglev_init(&lb->fam[0].mg, lb->table_size) < 0 ||
	    maglev_init(&lb->fam[1].mg, lb->table_size) < 0 ||
	    htab_init(&lb->listed, 2 * MAX_BACKENDS, sizeof(struct backend), 0) < 0 ||
	    htab_init(&lb->seen, MAX_SEEN, sizeof(struct backend),
		      sizeof(struct bstats)) < 0 ||
	    htab_init(&lb->conns, 2 * lb->max_flows, sizeof(struct flow_key),
		      sizeof(struct conn)) < 0) {
		fprintf(stderr, "xnv-lb: out of memory\n");
		return -1;
	}
	if (read_backends(lb->path, lb->fam, &lb->listed) < 0 ||
	    build_tables(lb->fam) < 0)
		return -1;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_hup;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGHUP, &sa, NULL);
	return 0;
}

/* Where its counters are, for nf_main to publish them. */
static uint64_t *
counters(void *ctx)
{
	return ((struct lb *)ctx)->c;
}

static void
report(void *ctx, FILE *out)
{
	struct lb *lb = ctx;
	const struct backend *b;
	const struct bstats *st;
	char a[48];
	uint32_t pos = 0;

	nf_counters(out, "lb", counter_names, lb->c, C_N);
	while ((st = htab_next(&lb->seen, &pos, (const void **)&b)) != NULL)
		fprintf(out, "lb: backend %s packets %llu flows %llu\n",
			addr_str(b->ver, b->addr, a),
			(unsigned long long)st->packets,
			(unsigned long long)st->flows);
}

static void
fini(void *ctx)
{
	struct lb *lb = ctx;

	maglev_free(&lb->fam[0].mg);
	maglev_free(&lb->fam[1].mg);
	htab_free(&lb->listed);
	htab_free(&lb->seen);
	htab_free(&lb->conns);
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "backends", required_argument, NULL, 'b' },
		{ "vip", required_argument, NULL, 'v' },
		{ "table-size", required_argument, NULL, 's' },
		{ "flow-timeout", required_argument, NULL, 't' },
		{ "max-flows", required_argument, NULL, 'm' },
		{ NULL, 0, NULL, 0 },
	};
	static const struct nf_app app = {
		.name = "lb",
		.summary = "L4 load balancer: Maglev hashing, flow affinity",
		.usage =
		"  --backends FILE   backend addresses, one a line (SIGHUP re-reads)\n"
		"  --vip PREFIX      balance flows to this prefix only (repeatable;\n"
		"                    default: every TCP/UDP flow)\n"
		"  --table-size M    Maglev table entries, a prime (65537)\n"
		"  --flow-timeout S  an idle flow is forgotten after S s (60)\n"
		"  --max-flows N     flows remembered at most (65536)\n",
		.opts = opts, .opt = on_opt, .load = load,
		.handler = balance, .burst_start = burst_start,
		.report = report, .fini = fini,
		.counter_names = counter_names, .n_counters = C_N,
		.counters = counters,
	};
	static struct lb lb = {
		.table_size = 65537, .max_flows = 65536,
		.timeout_ns = 60000000000ull,
	};

	return nf_main(argc, argv, &app, &lb);
}

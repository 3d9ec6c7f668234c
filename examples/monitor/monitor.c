/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * monitor: per-flow counters (packets, bytes, first and last seen); the
 * top N flows by bytes every --interval seconds while traffic flows and
 * on exit; a JSON report of every flow with --report.  Passes every
 * packet on, untouched.  See README.md.
 *
 *   xnv-monitor --service mon -- [--top 10] [--interval 5] [--report F]
 */
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "htab.h"
#include "nfmain.h"
#include "parse.h"
#include "pkt.h"

enum {
	C_PACKETS, C_BYTES, C_FLOWS, C_NOT_IP, C_NOT_IP_BYTES, C_MALFORMED,
	C_UNTRACKED, C_N
};
static const char *const counter_names[C_N] = {
	"packets", "bytes", "flows", "not_ip", "not_ip_bytes", "malformed",
	"untracked",
};

struct flow {
	uint64_t packets, bytes;
	uint64_t first_ns, last_ns;	/* CLOCK_MONOTONIC_COARSE */
};

struct entry {			/* for sorting */
	const struct flow_key *k;
	const struct flow *f;
};

struct monitor {
	uint32_t top, max_flows, interval_s;
	const char *report_path;
	struct htab flows;
	uint64_t now;			/* the burst's clock (burst_start) */
	uint64_t next_print_ns;
	int64_t wall_offset_ns;		/* realtime - monotonic */
	uint64_t c[C_N];
};

static int
by_bytes(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	if (x->f->bytes != y->f->bytes)
		return x->f->bytes > y->f->bytes ? -1 : 1;
	if (x->f->packets != y->f->packets)
		return x->f->packets > y->f->packets ? -1 : 1;
	return memcmp(x->k, y->k, sizeof(*x->k));
}

/* Every flow, largest first.  @return the array (free it) or NULL. */
static struct entry *
sorted_flows(const struct monitor *m)
{
	struct entry *e = malloc((m->flows.n + 1) * sizeof(*e));
	uint32_t pos = 0, n = 0;
	const void *k;
	const struct flow *f;

	if (e == NULL)
		return NULL;
	while ((f = htab_next(&m->flows, &pos, &k)) != NULL) {
		e[n].k = k;
		e[n++].f = f;
	}
	qsort(e, n, sizeof(*e), by_bytes);
	return e;
}

static void
print_top(const struct monitor *m, FILE *out)
{
	struct entry *e = sorted_flows(m);
	uint32_t n = m->flows.n < m->top ? m->flows.n : m->top;
	char s[160];

	if (e == NULL)
		return;
	fprintf(out, "monitor: top %u of %u flows after %llu packets\n", n,
		m->flows.n, (unsigned long long)m->c[C_PACKETS]);
	for (uint32_t i = 0; i < n; i++)
		fprintf(out, "monitor: %3u %s packets %llu bytes %llu\n", i + 1,
			flow_key_str(e[i].k, s, sizeof(s)),
			(unsigned long long)e[i].f->packets,
			(unsigned long long)e[i].f->bytes);
	fflush(out);
	free(e);
}

static void
write_report(const struct monitor *m)
{
	struct entry *e = sorted_flows(m);
	char a[INET6_ADDRSTRLEN], b[INET6_ADDRSTRLEN], pr[8];
	FILE *f;

	if (e == NULL || (f = fopen(m->report_path, "w")) == NULL) {
		fprintf(stderr, "xnv-monitor: cannot write %s\n", m->report_path);
		free(e);
		return;
	}
	fprintf(f, "{");
	for (int i = 0; i < C_N; i++)
		fprintf(f, "\"%s\": %llu, ", counter_names[i],
			(unsigned long long)m->c[i]);
	fprintf(f, "\"flow_list\": [");
	for (uint32_t i = 0; i < m->flows.n; i++) {
		const struct flow_key *k = e[i].k;

		fprintf(f, "%s\n {\"proto\": \"%s\", \"src\": \"%s\", "
			"\"sport\": %u, \"dst\": \"%s\", \"dport\": %u, "
			"\"packets\": %llu, \"bytes\": %llu, \"first_ns\": %lld, "
			"\"last_ns\": %lld}", i ? "," : "",
			proto_name(k->proto, pr, sizeof(pr)),
			addr_str(k->ver, k->src, a), k->sport,
			addr_str(k->ver, k->dst, b), k->dport,
			(unsigned long long)e[i].f->packets,
			(unsigned long long)e[i].f->bytes,
			(long long)e[i].f->first_ns + (long long)m->wall_offset_ns,
			(long long)e[i].f->last_ns + (long long)m->wall_offset_ns);
	}
	fprintf(f, "\n]}\n");
	if (fclose(f) != 0)
		fprintf(stderr, "xnv-monitor: cannot write %s\n", m->report_path);
	free(e);
}

/* Before a burst (nfmain.h): the clock, read once for all its packets. */
static void
burst_start(void *ctx, struct xnv_pkt *pkts, unsigned n)
{
	struct monitor *m = ctx;

	(void)pkts, (void)n;
	m->now = coarse_ns();
}

static xnv_action_t
count(struct xnv_pkt *pkt, void *ctx)
{
	struct monitor *m = ctx;
	uint8_t *p = xnv_pkt_data(pkt);
	uint32_t len = xnv_pkt_len(pkt);
	struct pkt_info pi;
	struct flow_key k;
	struct flow *f;
	uint64_t now = m->now;
	int is_new;

	m->c[C_PACKETS]++;
	m->c[C_BYTES] += len;
	switch (pkt_parse(p, len, &pi)) {
	case PKT_NOT_IP:
		m->c[C_NOT_IP]++;
		m->c[C_NOT_IP_BYTES] += len;
		return XNV_NEXT;
	case PKT_BAD_IP:
	case PKT_BAD_L4:
		m->c[C_MALFORMED]++;
		return XNV_NEXT;
	}
	flow_key_get(p, &pi, &k);
	if ((f = htab_insert(&m->flows, &k, &is_new)) == NULL) {
		m->c[C_UNTRACKED]++;
	} else {
		if (is_new) {
			f->first_ns = now;
			m->c[C_FLOWS]++;
		}
		f->packets++;
		f->bytes += len;
		f->last_ns = now;
	}
	if (m->interval_s != 0 && now >= m->next_print_ns) {
		if (m->next_print_ns != 0)
			print_top(m, stdout);
		m->next_print_ns = now + m->interval_s * 1000000000ull;
	}
	return XNV_NEXT;
}

static int
on_opt(void *ctx, int c, const char *arg)
{
	struct monitor *m = ctx;
	const char *err = NULL, *what = "";

	switch (c) {
	case 't':
		what = "--top";
		err = parse_u32(arg, 1, 1000000, &m->top);
		break;
	case 'i':
		what = "--interval";
		err = parse_u32(arg, 0, 86400, &m->interval_s);
		break;
	case 'm':
		what = "--max-flows";
		err = parse_u32(arg, 16, 1u << 22, &m->max_flows);
		break;
	case 'r':
		m->report_path = arg;
		break;
	}
	if (err != NULL)
		fprintf(stderr, "xnv-monitor: %s '%s': %s\n", what, arg, err);
	return err != NULL ? -1 : 0;
}

static int
load(void *ctx)
{
	struct monitor *m = ctx;
	struct timespec rt;

	clock_gettime(CLOCK_REALTIME_COARSE, &rt);
	m->wall_offset_ns = (int64_t)rt.tv_sec * 1000000000 + rt.tv_nsec -
			    (int64_t)coarse_ns();
	if (htab_init(&m->flows, m->max_flows, sizeof(struct flow_key),
		      sizeof(struct flow)) < 0) {
		fprintf(stderr, "xnv-monitor: out of memory\n");
		return -1;
	}
	return 0;
}

static void
report(void *ctx, FILE *out)
{
	struct monitor *m = ctx;

	nf_counters(out, "monitor", counter_names, m->c, C_N);
	print_top(m, out);
	if (m->report_path != NULL)
		write_report(m);
}

static void
fini(void *ctx)
{
	htab_free(&((struct monitor *)ctx)->flows);
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "top", required_argument, NULL, 't' },
		{ "interval", required_argument, NULL, 'i' },
		{ "max-flows", required_argument, NULL, 'm' },
		{ "report", required_argument, NULL, 'r' },
		{ NULL, 0, NULL, 0 },
	};
	static const struct nf_app app = {
		.name = "monitor",
		.summary = "per-flow counters, top flows, JSON report; passes "
			   "everything on",
		.usage =
		"  --top N         flows listed, largest by bytes first (10)\n"
		"  --interval S    list the top flows every S s while packets\n"
		"                  flow (0: only on exit; default 0)\n"
		"  --report FILE   on exit, every flow as JSON\n"
		"  --max-flows N   flows tracked at most (262144)\n",
		.opts = opts, .opt = on_opt, .load = load,
		.handler = count, .burst_start = burst_start,
		.report = report, .fini = fini,
	};
	static struct monitor m = { .top = 10, .max_flows = 1u << 18 };

	return nf_main(argc, argv, &app, &m);
}

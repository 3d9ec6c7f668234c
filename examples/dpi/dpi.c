/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dpi: payload inspection with many patterns in one pass (Aho-Corasick,
 * ac.h).  Each rule is a text or hex pattern with an action: alert (a
 * line per matching packet, the packet goes on) or drop (the same, and
 * the packet is dropped).  Per-rule counters on exit.  See README.md.
 *
 *   xnv-dpi --service ids -- --rules rules.txt [--alerts alerts.log]
 */
#include <stdlib.h>
#include <string.h>

#include "ac.h"
#include "nfmain.h"
#include "parse.h"
#include "pkt.h"
#include "rules.h"

#define MAX_RULES     65536
#define MAX_PATTERN   RFILE_LINE_MAX
#define FLUSH_NS      1000000000ull	/* alerts reach the file within 1 s */

enum {
	C_PACKETS, C_SCANNED, C_SCANNED_BYTES, C_MATCHED, C_DROPPED,
	C_ALERTS, C_NOT_IP, C_MALFORMED, C_N
};
static const char *const counter_names[C_N] = {
	"packets", "scanned", "scanned_bytes", "matched", "dropped",
	"alerts", "not_ip", "malformed",
};

struct rule {
	uint8_t drop;
	uint32_t id;
	unsigned line;
	uint64_t hits;		/* packets it matched */
	uint64_t seen_in;	/* number of the last packet it matched */
};

struct dpi {
	const char *rules_path, *alerts_path;
	uint32_t max_states;
	FILE *alerts;
	struct ac ac;
	struct rule *rules;
	uint32_t n_rules;
	uint64_t pkt_no, last_flush;
	/* the burst (burst_start): each packet parsed, bit i set when
	 * packet i may hold a pattern, and the index inspect() is on */
	struct pkt_info burst_pi[XNV_BURST_MAX];
	uint32_t may;
	unsigned burst_i;
	/* the packet being scanned */
	uint8_t *frame;
	const struct pkt_info *pi;
	int drop, matched;
	uint64_t c[C_N];
};

static int
hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = (char)(c | 0x20);
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* "text" or hex:HEX into @p out.  @return length or -1 (why in *why). */
static int
parse_pattern(const char *w, uint8_t *out, const char **why)
{
	size_t n;
	int len;

	if (w[0] == '"') {
		len = unquote(w, out, MAX_PATTERN, why);
	} else if (strncmp(w, "hex:", 4) == 0) {
		w += 4;
		n = strlen(w);
		if (n == 0 || n % 2 != 0) {
			*why = "hex: needs an even number of hex digits";
			return -1;
		}
		for (size_t i = 0; i < n; i += 2) {
			if (hexval(w[i]) < 0 || hexval(w[i + 1]) < 0) {
				*why = "hex: needs hex digits only";
				return -1;
			}
			out[i / 2] = (uint8_t)(hexval(w[i]) << 4 | hexval(w[i + 1]));
		}
		len = (int)(n / 2);
	} else {
		*why = "expected \"text\" or hex:HEX";
		return -1;
	}
	if (len == 0) {
		*why = "empty pattern";
		return -1;
	}
	return len;
}

static int
add_rule(struct dpi *d, struct rfile *rf)
{
	static uint8_t pat[MAX_PATTERN];
	struct rule *r;
	const char *why;
	int len, rc;

	if (d->n_rules == MAX_RULES)
		return rfile_error(rf, "more than %u rules", MAX_RULES);
	if ((d->n_rules & (d->n_rules - 1)) == 0) {	/* 0, 1, 2, 4, ... */
		r = realloc(d->rules, (d->n_rules ? 2 * d->n_rules : 1) *
			    sizeof(*r));
		if (r == NULL)
			return rfile_error(rf, "out of memory");
		d->rules = r;
	}
	r = &d->rules[d->n_rules];
	memset(r, 0, sizeof(*r));
	r->line = rf->line;
	r->id = d->n_rules + 1;
	if (strcmp(rf->word[0], "alert") != 0 && strcmp(rf->word[0], "drop") != 0)
		return rfile_error(rf, "'%s': expected alert or drop",
				   rf->word[0]);
	r->drop = rf->word[0][0] == 'd';
	if (rf->n_words != 2 && rf->n_words != 4)
		return rfile_error(rf, "expected 'alert|drop PATTERN [id N]'");
	if ((len = parse_pattern(rf->word[1], pat, &why)) < 0)
		return rfile_error(rf, "pattern %s: %s", rf->word[1], why);
	if (rf->n_words == 4 && (strcmp(rf->word[2], "id") != 0 ||
	    (why = parse_u32(rf->word[3], 0, UINT32_MAX, &r->id)) != NULL))
		return rfile_error(rf, "expected 'id N' after the pattern, "
				   "N a number");
	rc = ac_add(&d->ac, pat, (uint32_t)len, d->n_rules);
	if (rc < 0)
		return rfile_error(rf, "patterns too long together (raise "
				   "--max-states)");
	d->n_rules++;
	return 0;
}

static int
load_rules(struct dpi *d)
{
	struct rfile rf;
	int n;

	if (rfile_open(&rf, d->rules_path) < 0)
		return -1;
	while ((n = rfile_next(&rf)) > 0)
		if (add_rule(d, &rf) < 0) {
			n = -1;
			break;
		}
	rfile_close(&rf);
	if (n == 0 && ac_build(&d->ac) < 0) {
		fprintf(stderr, "xnv-dpi: out of memory\n");
		n = -1;
	}
	return n;
}

static int
on_match(uint32_t rule, uint32_t len, uint32_t end, void *arg)
{
	struct dpi *d = arg;
	struct rule *r = &d->rules[rule];
	struct flow_key k;
	char flow[160];

	if (r->seen_in == d->pkt_no)	/* a packet counts once per rule */
		return 0;
	r->seen_in = d->pkt_no;
	r->hits++;
	d->matched = 1;
	d->drop |= r->drop;
	nf_count(d->c, C_ALERTS, 1);
	flow_key_get(d->frame, d->pi, &k);
	fprintf(d->alerts, "alert pkt=%llu rule=%u id=%u action=%s "
		"offset=%u %s\n", (unsigned long long)d->pkt_no, rule + 1,
		r->id, r->drop ? "drop" : "alert", end - len,
		flow_key_str(&k, flow, sizeof(flow)));
	return 0;
}

/* The payloads of @p n packets walked side by side (ac_reports()): the
 * packets at @p at that may hold a pattern into d->may. */
static void
reports(struct dpi *d, const uint8_t *const *data, const uint32_t *len,
	const unsigned *at, unsigned n)
{
	unsigned hit = ac_reports(&d->ac, data, len, n), j;

	for (j = 0; j < n; j++)
		if (hit >> j & 1)
			d->may |= 1u << at[j];
}

/* Before a burst (nfmain.h): each packet parsed (inspect() takes it from
 * there), and which of them may hold a pattern, their payloads walked
 * AC_LANES at a time.  inspect() scans those only, reporting every match
 * as before; the others hold none. */
static void
burst_start(void *ctx, struct xnv_pkt *pkts, unsigned n)
{
	struct dpi *d = ctx;
	const uint8_t *data[AC_LANES];
	uint32_t len[AC_LANES];
	unsigned at[AC_LANES], i, k = 0;

	d->may = 0;
	d->burst_i = 0;
	for (i = 0; i < n; i++) {
		uint8_t *p = xnv_pkt_data(&pkts[i]);
		struct pkt_info *pi = &d->burst_pi[i];
		int r = pkt_parse(p, xnv_pkt_len(&pkts[i]), pi);

		if (r == PKT_NOT_IP || r == PKT_BAD_IP || r == PKT_BAD_L4)
			continue;	/* inspect() does not scan it */
		data[k] = p + pi->pay_off;
		len[k] = pi->pay_len;
		at[k++] = i;
		if (k == AC_LANES) {
			reports(d, data, len, at, k);
			k = 0;
		}
	}
	if (k > 0)
		reports(d, data, len, at, k);
}

static xnv_action_t
inspect(struct xnv_pkt *pkt, void *ctx)
{
	struct dpi *d = ctx;
	uint8_t *p = xnv_pkt_data(pkt);
	unsigned i = d->burst_i++;	/* its index in the burst */
	const struct pkt_info *pi = &d->burst_pi[i];	/* parsed there */
	uint64_t now;

	d->pkt_no++;
	nf_count(d->c, C_PACKETS, 1);
	switch (pi->kind) {
	case PKT_NOT_IP:
		nf_count(d->c, C_NOT_IP, 1);
		return XNV_NEXT;
	case PKT_BAD_IP:
	case PKT_BAD_L4:
		nf_count(d->c, C_MALFORMED, 1);
		return XNV_NEXT;
	}
	d->frame = p;
	d->pi = pi;
	d->drop = d->matched = 0;
	nf_count(d->c, C_SCANNED, 1);
	nf_count(d->c, C_SCANNED_BYTES, pi->pay_len);
	if (d->may >> i & 1)
		ac_scan(&d->ac, p + pi->pay_off, pi->pay_len, on_match, d);
	if (!d->matched)
		return XNV_NEXT;
	nf_count(d->c, C_MATCHED, 1);
	now = coarse_ns();
	if (now - d->last_flush >= FLUSH_NS) {
		fflush(d->alerts);
		d->last_flush = now;
	}
	if (!d->drop)
		return XNV_NEXT;
	nf_count(d->c, C_DROPPED, 1);
	return XNV_DROP;
}

static int
on_opt(void *ctx, int c, const char *arg)
{
	struct dpi *d = ctx;
	const char *err;

	if (c == 'r') {
		d->rules_path = arg;
	} else if (c == 'a') {
		d->alerts_path = arg;
	} else if ((err = parse_u32(arg, 16, 1u << 20, &d->max_states)) != NULL) {
		fprintf(stderr, "xnv-dpi: --max-states '%s': %s\n", arg, err);
		return -1;
	}
	return 0;
}

static int
load(void *ctx)
{
	struct dpi *d = ctx;

	if (d->rules_path == NULL) {
		fprintf(stderr, "xnv-dpi: --rules FILE is required (see -- --help)\n");
		return NF_USAGE;
	}
	if (ac_init(&d->ac, d->max_states) < 0) {
		fprintf(stderr, "xnv-dpi: out of memory\n");
		return -1;
	}
	if (load_rules(d) < 0)
		return -1;
	d->alerts = stdout;
	if (d->alerts_path != NULL &&
	    (d->alerts = fopen(d->alerts_path, "w")) == NULL) {
		perror(d->alerts_path);
		return -1;
	}
	return 0;
}

/* Where its counters are, for nf_main to publish them. */
static uint64_t *
counters(void *ctx)
{
	return ((struct dpi *)ctx)->c;
}

static void
report(void *ctx, FILE *out)
{
	struct dpi *d = ctx;

	fflush(d->alerts);
	nf_counters(out, "dpi", counter_names, d->c, C_N);
	for (uint32_t i = 0; i < d->n_rules; i++)
		fprintf(out, "dpi: rule %u hits %llu id %u line %u %s\n", i + 1,
			(unsigned long long)d->rules[i].hits, d->rules[i].id,
			d->rules[i].line, d->rules[i].drop ? "drop" : "alert");
}

static void
fini(void *ctx)
{
	struct dpi *d = ctx;

	if (d->alerts != NULL && d->alerts != stdout)
		fclose(d->alerts);
	ac_free(&d->ac);
	free(d->rules);
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "rules", required_argument, NULL, 'r' },
		{ "alerts", required_argument, NULL, 'a' },
		{ "max-states", required_argument, NULL, 'm' },
		{ NULL, 0, NULL, 0 },
	};
	static const struct nf_app app = {
		.name = "dpi",
		.summary = "multi-pattern payload inspection (Aho-Corasick): "
			   "alert or drop",
		.usage =
		"  --rules FILE      'alert|drop \"text\"|hex:HEX [id N]', one a line\n"
		"  --alerts FILE     alert lines go there (default: stdout)\n"
		"  --max-states N    automaton states at most, 1 KiB each (65536;\n"
		"                    about the total bytes of all patterns)\n",
		.opts = opts, .opt = on_opt, .load = load,
		.handler = inspect, .burst_start = burst_start,
		.report = report, .fini = fini,
		.counter_names = counter_names, .n_counters = C_N,
		.counters = counters,
	};
	static struct dpi d = { .max_states = 65536 };

	return nf_main(argc, argv, &app, &d);
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sink: counts packets from examples/generator, checks their sequence
 * numbers (lost, reordered, duplicated) and measures one-way latency from
 * their send stamps (same host clock: CLOCK_MONOTONIC).  Drops what it
 * receives.  Prints a summary on exit, and as JSON with --report FILE.
 *
 *   xnv-sink --service sink -- [--expect N] [--report FILE]
 *   --expect N: exit by itself once N packets have arrived.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xnv/nf.h>

#include "nfmain.h"
#include "pkt.h"

#define MAX_SEQ     (1u << 24)	/* sequence numbers tracked exactly */
#define MAX_SAMPLES (1u << 22)	/* latency samples kept */

struct sink {
	struct xnv_nf *nf;
	unsigned long expect;
	uint64_t n, dup, reordered, other, max_seq_seen;
	int64_t last_seq;
	uint8_t *seen;			/* bitmap of sequence numbers */
	uint64_t *lat_ns;
	uint64_t n_lat;
};

static uint64_t
be(const uint8_t *p, int n)
{
	uint64_t v = 0;

	for (int i = 0; i < n; i++)
		v = v << 8 | p[i];
	return v;
}

static xnv_action_t
count(struct xnv_pkt *pkt, void *ctx)
{
	struct sink *s = ctx;
	const uint8_t *p = xnv_pkt_data(pkt);
	uint64_t t = monotonic_ns(), seq, sent;

	s->n++;
	if (xnv_pkt_len(pkt) < 54 || p[12] != 0x08 || p[13] != 0 || p[23] != 17) {
		s->other++;
		goto out;
	}
	seq = be(p + 42, 4);
	sent = be(p + 46, 8);
	if (seq < MAX_SEQ) {
		if (s->seen[seq / 8] & (1u << (seq % 8)))
			s->dup++;
		s->seen[seq / 8] |= (uint8_t)(1u << (seq % 8));
	}
	if ((int64_t)seq < s->last_seq)
		s->reordered++;
	s->last_seq = (int64_t)seq;
	if (seq > s->max_seq_seen)
		s->max_seq_seen = seq;
	if (s->n_lat < MAX_SAMPLES && t >= sent)
		s->lat_ns[s->n_lat++] = t - sent;
out:
	if (s->expect && s->n >= s->expect)
		xnv_nf_stop(s->nf);
	return XNV_DROP;
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static double
pct(const struct sink *s, double q)
{
	if (s->n_lat == 0)
		return 0;
	return (double)s->lat_ns[(uint64_t)(q * (double)(s->n_lat - 1))] / 1e3;
}

static void
report(struct sink *s, const char *path)
{
	uint64_t got = s->n - s->other - s->dup;
	unsigned long long v[5] = {
		s->n, s->n > s->other ? s->max_seq_seen + 1 - got : 0,
		s->reordered, s->dup, s->other,
	};
	double p[4];
	FILE *f;

	qsort(s->lat_ns, s->n_lat, sizeof(*s->lat_ns), cmp_u64);
	p[0] = pct(s, .5), p[1] = pct(s, .99), p[2] = pct(s, .999);
	p[3] = pct(s, 1);
	fprintf(stderr, "sink: %llu packets, lost %llu, reordered %llu, "
		"duplicated %llu, not from a generator %llu; latency us "
		"p50 %.1f p99 %.1f p99.9 %.1f max %.1f\n",
		v[0], v[1], v[2], v[3], v[4], p[0], p[1], p[2], p[3]);
	if (path == NULL || (f = fopen(path, "w")) == NULL)
		return;
	fprintf(f, "{\"packets\": %llu, \"lost\": %llu, \"reordered\": %llu, "
		"\"duplicated\": %llu, \"other\": %llu, \"latency_us\": "
		"{\"p50\": %.3f, \"p99\": %.3f, \"p999\": %.3f, \"max\": %.3f}}\n",
		v[0], v[1], v[2], v[3], v[4], p[0], p[1], p[2], p[3]);
	fclose(f);
}

/* Its own options (after "--"): 0, 1 after --help, -1 said why. */
static int
parse(int argc, char **argv, struct sink *s, const char **path)
{
	static const struct option lo[] = {
		{ "expect", 1, NULL, 'e' }, { "report", 1, NULL, 'r' },
		{ "help", 0, NULL, 'h' }, { NULL, 0, NULL, 0 },
	};
	char *e;
	int c;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		if (c == 'e') {
			s->expect = strtoul(optarg, &e, 10);
			if (*optarg == '\0' || *e != '\0') {
				fprintf(stderr, "sink: --expect %s: expected a "
					"number\n", optarg);
				return -1;
			}
		} else if (c == 'r') {
			*path = optarg;
		} else {
			if (c != 'h')
				fprintf(stderr, "sink: unknown or incomplete "
					"option '%s'; ", argv[optind - 1]);
			fprintf(c == 'h' ? stdout : stderr, "sink options "
				"(after --): [--expect N] [--report FILE]\n");
			return c == 'h' ? 1 : -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "sink: unexpected argument '%s'\n",
			argv[optind]);
		return -1;
	}
	return 0;
}

int
main(int argc, char **argv)
{
	struct sink s = { .last_seq = -1 };
	const char *path = NULL;
	int dd = nf_dashdash(argc, argv), n, rc;

	/* Its own options first: -- --help needs no core. */
	n = dd < argc ? dd : argc - 1;
	rc = parse(argc - n, argv + n, &s, &path);
	if (rc != 0)
		return rc > 0 ? 0 : 2;
	n = xnv_nf_init(dd, argv, &s.nf);
	if (n < 0)
		return xnv_nf_exit_status(n);
	s.seen = calloc(MAX_SEQ / 8, 1);
	s.lat_ns = malloc(MAX_SAMPLES * sizeof(*s.lat_ns));
	if (s.seen == NULL || s.lat_ns == NULL) {
		fprintf(stderr, "sink: out of memory\n");
		xnv_nf_close(s.nf);
		return 1;
	}
	rc = xnv_nf_run(s.nf, count, &s);
	report(&s, path);
	xnv_nf_close(s.nf);
	free(s.seen);
	free(s.lat_ns);
	return rc < 0 ? 1 : 0;
}

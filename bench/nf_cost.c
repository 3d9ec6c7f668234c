/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nf-cost-NAME: what an example NF's handler costs each packet, away from
 * rings, the core and the other CPU: the NF's own code (examples/NAME,
 * unchanged) on the packets of a pcap, in bursts of 32 as nf_main() runs
 * it (burst_start, then the handler on each packet).
 *
 *   nf-cost-NAME PCAP [ROUNDS] -- [the NF's own options]
 *
 * Built from the NF's own objects with nf_main() wrapped (ld --wrap,
 * bench/build.mk): the NF parses its options and loads its files exactly
 * as it would run, and hands its struct nf_app to this file instead of
 * attaching; what it calls of libxnv once attached is stood in for below
 * (its .attached() is called with no xnv_nf).  Each round puts the pcap's first
 * bytes back in every buffer (NFs rewrite packets: a NAT'd packet would
 * take the return path the next round), then runs the handler over all
 * of them; the packets are in the cache, as after libxnv's prefetch.
 *
 * Prints the best (lowest) ns per packet over ROUNDS rounds (default
 * 300), the verdicts of the last round (how many went on, out, dropped),
 * and the NF's own counters (its exit report).  The best round is the one
 * nothing interrupted: a figure that holds on a busy machine.  Exit
 * status: 0, or after -h / --help; 2 for a usage error (one line); 1 for
 * any other error.
 */
#include <errno.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_args.h"
#include "nfmain.h"
#include "pkt.h"

#define BURST XNV_BURST_MAX
#define MAX_PKTS 4096u
#define MAX_ROUNDS 100000u
#define BUF_SIZE 2048u
#define HEADROOM 128u

struct frames {
	unsigned n;
	uint32_t len[MAX_PKTS];
	uint8_t *orig;			/* [MAX_PKTS][BUF_SIZE]: the pcap's */
	uint8_t *buf;			/* the same, rewritten by the NF */
	struct xnv_pkt pkt[MAX_PKTS];
};

static void
usage(FILE *f)
{
	fprintf(f, "usage: nf-cost-NAME PCAP [ROUNDS] -- [the NF's options]\n"
		"  PCAP    packets for the NF's handler (the first %u, whole "
		"bursts of %u)\n"
		"  ROUNDS  rounds over all of them, the best one printed "
		"(default 300)\n"
		"Exit status: 0, 2 for a usage error, 1 for any other error.\n",
		MAX_PKTS, BURST);
}

/* The pcap's frames that fit a buffer, whole bursts of them.  0, or 1
 * after a line on stderr. */
static int
load_pcap(const char *prog, const char *path, struct frames *f)
{
	char err[PCAP_ERRBUF_SIZE];
	struct pcap_pkthdr *h;
	const u_char *data;
	pcap_t *p = pcap_open_offline(path, err);

	if (p == NULL) {
		fprintf(stderr, "%s: %s: %s\n", prog, path, err);
		return 1;
	}
	f->orig = calloc(MAX_PKTS, BUF_SIZE);
	f->buf = calloc(MAX_PKTS, BUF_SIZE);
	if (f->orig == NULL || f->buf == NULL) {
		fprintf(stderr, "%s: out of memory\n", prog);
		pcap_close(p);
		return 1;
	}
	while (f->n < MAX_PKTS && pcap_next_ex(p, &h, &data) == 1) {
		if (h->caplen > BUF_SIZE - HEADROOM)
			continue;
		memcpy(f->orig + (size_t)f->n * BUF_SIZE + HEADROOM, data,
		       h->caplen);
		f->len[f->n++] = h->caplen;
	}
	pcap_close(p);
	f->n = f->n / BURST * BURST;
	if (f->n == 0) {
		fprintf(stderr, "%s: %s: fewer than %u packets that fit "
			"%u B\n", prog, path, BURST, BUF_SIZE - HEADROOM);
		return 1;
	}
	return 0;
}

/* Every buffer as the pcap had it, every packet descriptor fresh. */
static void
reset(struct frames *f)
{
	unsigned i;

	for (i = 0; i < f->n; i++) {
		memcpy(f->buf + (size_t)i * BUF_SIZE + HEADROOM,
		       f->orig + (size_t)i * BUF_SIZE + HEADROOM, f->len[i]);
		f->pkt[i] = (struct xnv_pkt){
			.buf = f->buf + (size_t)i * BUF_SIZE,
			.buf_size = BUF_SIZE, .off = HEADROOM,
			.len = f->len[i], .hash = i + 1 };
	}
}

/* One round: nf_main()'s burst (nf_burst()) over every packet.  Its
 * ns. */
static uint64_t
round_ns(const struct nf_app *app, void *ctx, struct frames *f,
	 xnv_action_t *verdicts)
{
	uint64_t t0 = monotonic_ns();
	unsigned b;

	for (b = 0; b < f->n; b += BURST)
		nf_burst(app, ctx, &f->pkt[b], &verdicts[b], BURST);
	return monotonic_ns() - t0;
}

static void
print_verdicts(const char *name, const xnv_action_t *v, unsigned n)
{
	unsigned i, next = 0, out = 0, drop = 0, other = 0;

	for (i = 0; i < n; i++) {
		if (v[i] == XNV_NEXT)
			next++;
		else if (v[i] == XNV_DROP)
			drop++;
		else if (v[i] >> 16 == XNV_ACT_OUT)
			out++;
		else
			other++;
	}
	printf("nf-cost: %s verdicts: next %u out %u drop %u other %u\n",
	       name, next, out, drop, other);
}

/*
 * What the NFs call of libxnv once attached, stood in for (ld --wrap):
 * a published counter is only given a slot (nf_main() would set it from
 * the NF's memory once a burst; the handler itself only adds to that
 * memory), and the core is said to have XNV_COST_PORTS ports.
 */
#define XNV_COST_PORTS 64
static int n_stats;

int __wrap_nf_publish(const char *name, const uint64_t *val);
uint16_t __wrap_xnv_nf_port_count(const struct xnv_nf *nf);

int
__wrap_nf_publish(const char *name, const uint64_t *val)
{
	(void)name, (void)val;
	if (n_stats == XNV_NF_STATS_MAX)
		return -ENOSPC;
	return n_stats++;
}

uint16_t
__wrap_xnv_nf_port_count(const struct xnv_nf *nf)
{
	(void)nf;
	return XNV_COST_PORTS;
}

/* The NF's main() calls this (ld --wrap=nf_main) in place of nf_main(). */
int __wrap_nf_main(int argc, char **argv, const struct nf_app *app,
		   void *ctx);

int
__wrap_nf_main(int argc, char **argv, const struct nf_app *app, void *ctx)
{
	static struct frames f;
	static xnv_action_t verdicts[MAX_PKTS];
	int dd = nf_dashdash(argc, argv), rc;
	unsigned rounds = 300, r;
	uint64_t best = UINT64_MAX;

	rc = bench_no_options(argv[0], dd, argv, usage,
			      "the NF's own options go after '--'");
	if (rc == 0 && (dd < 2 || dd > 3)) {
		fprintf(stderr, "%s: expected PCAP [ROUNDS] before '--' (see "
			"--help)\n", argv[0]);
		rc = -EINVAL;
	}
	if (rc == 0 && dd == 3)
		rc = bench_rounds(argv[0], argv[2], MAX_ROUNDS, &rounds);
	if (rc == 0)
		rc = nf_own_options(app, ctx, argc, argv,
				    dd < argc ? dd + 1 : argc);
	if (rc != 0)
		return rc == -EAGAIN || rc > 0 ? 0 : 2;
	rc = app->load(ctx);
	if (rc != 0)
		return rc == NF_USAGE ? 2 : 1;
	if (load_pcap(argv[0], argv[1], &f) != 0 ||
	    (app->attached != NULL && app->attached(ctx, NULL) != 0))
		return 1;
	for (r = 0; r < rounds; r++) {
		uint64_t ns;

		reset(&f);
		ns = round_ns(app, ctx, &f, verdicts);
		best = ns < best ? ns : best;
	}
	printf("nf-cost: %s, %u packets, best of %u rounds: %.2f ns per "
	       "packet\n", app->name, f.n, rounds, (double)best / f.n);
	print_verdicts(app->name, verdicts, f.n);
	app->report(ctx, stdout);
	if (app->fini != NULL)
		app->fini(ctx);
	return 0;
}

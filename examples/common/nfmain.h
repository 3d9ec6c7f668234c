/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The main() every example NF shares: libxnv's options, then `--`, then
 * the NF's own.  The NF's options are parsed and its files loaded before
 * attaching, so `--help` and a bad rule file need no running xnv-core;
 * counters go to stdout on exit (libxnv logs on stderr), and are published
 * live while it runs, after each burst (xnv_nf_stat_register: `xnv-ctl nf
 * stats NAME`) when the app names them (.counter_names).  The handler
 * runs on libxnv's burst API (xnv_nf_run_burst()): .burst_start, if set,
 * before each burst, then the handler on each of its packets.
 *
 *   static const struct nf_app app = {
 *           .name = "router", .usage = "  --routes FILE ...\n",
 *           .opts = opts, .opt = on_opt, .load = load,
 *           .handler = route, .report = report, .fini = fini,
 *   };
 *   int main(int argc, char **argv) { return nf_main(argc, argv, &app, &r); }
 *
 * Exit status: 0 after a clean stop, --help or --version; 2 on a bad
 * option (libxnv's or the NF's); 1 on a bad file, a refused attach, no
 * core or a lost core.
 */
#ifndef XNV_EX_NFMAIN_H
#define XNV_EX_NFMAIN_H

#include <getopt.h>
#include <stdint.h>
#include <stdio.h>

#include <xnv/nf.h>

#define NF_USAGE (-2)	/* load(): a usage error */

struct nf_app {
	const char *name;		/**< "router": binary xnv-router */
	const char *summary;		/**< one line: what it does */
	const char *usage;		/**< its own options, one a line */
	const struct option *opts;	/**< getopt_long() table */
	/** One option (getopt's value, its argument or NULL).
	 *  @return 0, or -1 after printing why. */
	int (*opt)(void *ctx, int c, const char *arg);
	/** After the options: check them, load files.  @return 0, -1 (a
	 *  bad file: exit 1) or NF_USAGE (a missing or inconsistent
	 *  option: exit 2), after printing why. */
	int (*load)(void *ctx);
	/** Attached: e.g. check port numbers.  Optional.  @return 0 or -1. */
	int (*attached)(void *ctx, struct xnv_nf *nf);
	xnv_handler_t handler;
	/** Optional: called with each burst of up to XNV_BURST_MAX packets
	 *  before they go to handler one by one, in order (a clock read or
	 *  a table swept once a burst, not once a packet; work that gains
	 *  from seeing the packets together). */
	void (*burst_start)(void *ctx, struct xnv_pkt *pkts, unsigned n);
	void (*report)(void *ctx, FILE *out);	/**< on exit, to stdout */
	void (*fini)(void *ctx);		/**< free; optional */
	/** Its counters, published live: names (n_counters of them) and
	 *  where their values are in ctx (counters(ctx)).  Optional. */
	const char *const *counter_names;
	unsigned n_counters;
	uint64_t *(*counters)(void *ctx);
};

/** This NF once attached (NULL before). */
extern struct xnv_nf *nf_self;

/** Add @p n to counter @p i of the app's counters @p vals (its exit
 *  report).  They are published at the attach, and after each burst
 *  (nf_main() runs the handler on xnv_nf_run_burst()). */
static inline void
nf_count(uint64_t *vals, unsigned i, uint64_t n)
{
	vals[i] += n;
}

/** Publish one more counter named @p name whose value the NF keeps at
 *  @p val (e.g. a firewall rule's hits): registered now, set from *@p val
 *  after each burst with the app's counters, so the handler only adds to
 *  its own memory.  @return its slot, or < 0 (all slots taken: not
 *  published, said on stderr). */
int nf_publish(const char *name, const uint64_t *val);

int nf_main(int argc, char **argv, const struct nf_app *app, void *ctx);

/** Parse the NF's own options, @p argv[@p first..@p argc) (@p argv[0]
 *  names the program), through @p app's opts and opt().  @return 0; 1
 *  after -h / --help printed its usage; -1 after a bad option said. */
int nf_own_options(const struct nf_app *app, void *ctx, int argc,
		   char **argv, int first);

/** One burst as nf_main() runs it: @p app's burst_start, if set, then its
 *  handler on each of the @p n packets, verdicts into @p verdicts. */
void nf_burst(const struct nf_app *app, void *ctx, struct xnv_pkt *pkts,
	      xnv_action_t *verdicts, unsigned n);

/** Index in @p argv of the "--" after libxnv's options (argc if none). */
int nf_dashdash(int argc, char **argv);

/** Print "NAME: COUNTER VALUE" for @p n counters, one a line. */
void nf_counters(FILE *out, const char *nf, const char *const *names,
		 const uint64_t *vals, unsigned n);

#endif /* XNV_EX_NFMAIN_H */

/* SPDX-License-Identifier: BSD-3-Clause */
/* The shared main() of the example NFs (see nfmain.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "nfmain.h"

static void
usage(const struct nf_app *app, const char *prog, FILE *out)
{
	fprintf(out, "%s: %s\n"
		"usage: %s [libxnv options: --service NAME ...; see "
		"--help] -- [options]\noptions:\n%s", prog, app->summary, prog,
		app->usage);
}

int
nf_own_options(const struct nf_app *app, void *ctx, int argc, char **argv,
	       int first)
{
	static char short_help[] = "-h";	/* --help: not in app->opts */
	int n = argc - first + 1, c, rc = 0;
	char **v = calloc((size_t)n + 1, sizeof(*v));

	if (v == NULL)
		return -1;
	v[0] = argv[0];
	memcpy(v + 1, argv + first, (size_t)(n - 1) * sizeof(*v));
	for (c = 1; c < n; c++)
		if (strcmp(v[c], "--help") == 0)
			v[c] = short_help;
	optind = 1;
	opterr = 0;
	while (rc == 0 && (c = getopt_long(n, v, "h", app->opts, NULL)) != -1) {
		if (c == 'h') {
			usage(app, argv[0], stdout);
			rc = 1;
		} else if (c == '?' || c == ':') {
			fprintf(stderr, "%s: unknown option or missing "
				"argument: '%s' (see -- --help)\n", argv[0],
				v[optind - 1]);
			rc = -1;
		} else if (app->opt(ctx, c, optarg) < 0) {
			rc = -1;
		}
	}
	if (rc == 0 && optind < n) {
		fprintf(stderr, "%s: unexpected argument '%s'\n", argv[0],
			v[optind]);
		rc = -1;
	}
	free(v);
	return rc;
}

struct xnv_nf *nf_self;

/* Where each published slot's value is (nf_publish()), set from there
 * after each burst. */
static const uint64_t *pub_val[XNV_NF_STATS_MAX];
static unsigned n_pub;

int
nf_publish(const char *name, const uint64_t *val)
{
	int slot = xnv_nf_stat_register(nf_self, name);

	if (slot < 0) {
		fprintf(stderr, "%s: counter %s not published: %s\n",
			xnv_nf_name(nf_self), name, strerror(-slot));
		return slot;
	}
	xnv_nf_stat_set(nf_self, slot, *val);
	pub_val[slot] = val;
	if ((unsigned)slot >= n_pub)
		n_pub = (unsigned)slot + 1;
	return slot;
}

/* The published counters' values now, after a burst: a handler counts
 * into its own memory (a store), not into libxnv's once a packet. */
static void
publish_counters(void)
{
	unsigned i;

	for (i = 0; i < n_pub; i++)
		if (pub_val[i] != NULL)
			xnv_nf_stat_set(nf_self, (int)i, *pub_val[i]);
}

/* The app's counters registered, at the attach. */
static void
register_counters(const struct nf_app *app, void *ctx)
{
	uint64_t *vals = app->counters != NULL ? app->counters(ctx) : NULL;
	unsigned i;

	for (i = 0; vals != NULL && i < app->n_counters &&
	     i < XNV_NF_STATS_MAX; i++)
		nf_publish(app->counter_names[i], &vals[i]);
}

/* Index of the "--" that ends libxnv's options (argc if none). */
int
nf_dashdash(int argc, char **argv)
{
	int dd;

	for (dd = 1; dd < argc && strcmp(argv[dd], "--") != 0; dd++)
		;
	return dd;
}

/* The app that runs (one a process), for app_burst(). */
static const struct nf_app *run_app;

void
nf_burst(const struct nf_app *app, void *ctx, struct xnv_pkt *pkts,
	 xnv_action_t *verdicts, unsigned n)
{
	unsigned i;

	if (app->burst_start != NULL)
		app->burst_start(ctx, pkts, n);
	for (i = 0; i < n; i++)
		verdicts[i] = app->handler(&pkts[i], ctx);
}

/* xnv_nf_run_burst()'s handler: nf_burst(), then the app's counters
 * published (once a burst, not once a count). */
static void
app_burst(struct xnv_pkt *pkts, xnv_action_t *verdicts, unsigned n,
	  void *ctx)
{
	nf_burst(run_app, ctx, pkts, verdicts, n);
	publish_counters();
}

int
nf_main(int argc, char **argv, const struct nf_app *app, void *ctx)
{
	struct xnv_nf *nf = NULL;
	int dd = nf_dashdash(argc, argv), status = 1, rc, i;

	for (i = 1; i < dd; i++)
		if (strcmp(argv[i], "--help") == 0 ||
		    strcmp(argv[i], "-h") == 0) {
			usage(app, argv[0], stdout);
			fflush(stdout);
			break;
		}
	/* The NF's options, then libxnv's, before any file is read: a
	 * usage error is said as such (exit 2), with or without a core. */
	rc = nf_own_options(app, ctx, argc, argv, dd < argc ? dd + 1 : argc);
	if (rc != 0) {
		status = rc > 0 ? 0 : 2;	/* -- --help, or a bad option */
		goto out;
	}
	rc = xnv_nf_args(dd, argv);
	if (rc < 0) {
		status = xnv_nf_exit_status(rc);
		goto out;
	}
	rc = app->load(ctx);
	if (rc != 0) {
		status = rc == NF_USAGE ? 2 : 1;
		goto out;
	}
	if (xnv_nf_init(dd, argv, &nf) < 0)
		goto out;
	nf_self = nf;
	register_counters(app, ctx);
	rc = app->attached != NULL ? app->attached(ctx, nf) : 0;
	if (rc == 0) {
		run_app = app;
		rc = xnv_nf_run_burst(nf, app_burst, ctx);
		status = rc < 0 ? 1 : 0;
		app->report(ctx, stdout);
		fflush(stdout);
	}
	xnv_nf_close(nf);
out:
	if (app->fini != NULL)
		app->fini(ctx);
	return status;
}

void
nf_counters(FILE *out, const char *nf, const char *const *names,
	    const uint64_t *vals, unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++)
		fprintf(out, "%s: %s %llu\n", nf, names[i],
			(unsigned long long)vals[i]);
}

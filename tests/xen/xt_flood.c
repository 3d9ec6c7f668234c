// SPDX-License-Identifier: BSD-3-Clause
/*
 * xt-flood: a DomU that floods its own xnv frontend state node (tests/xen,
 * check state-flood-rate-limited).  The domain is registered by xnv-xl, so
 * xnv-core watches /local/domain/<self>/device/xnv/0/state, and every write
 * of it fires that watch in Dom0.
 *
 *   spin SECONDS  a busy loop for SECONDS: the guest's vCPU as busy as in
 *                 a flood, but no XenStore (the baseline)
 *   flood COUNT   COUNT writes of the state node, WRITERS threads in a
 *                 tight loop each, alternating 1 (Initialising) and 6
 *                 (Closed): with the backend in InitWait the core steps
 *                 the device, reads both states and finds nothing to do;
 *                 neither is 3 (Initialised), so it never attaches
 *
 * Prints "xt-flood: spin start", "xt-flood: spin done ..." and
 * "xt-flood: flood start ...", "xt-flood: flood done: N of COUNT writes in
 * T s (R/s)": the lines Dom0 waits for in the guest's console log.
 * Exit 0, or 1 with one line on stderr.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <xenstore.h>

/* Writes in flight.  Each write waits for xenstored in Dom0, and under
 * TCG Dom0 runs in turns with the other domains: one writer alone gets
 * some 20 writes/s through, below the core's rate, which is no flood. */
#define WRITERS 16

struct writer {
	pthread_t thread;
	const char *path;
	long n, ok;
};

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A whole decimal number from 1 to @p max, else 0. */
static long
arg_num(const char *v, long max)
{
	char *end;
	long n = strtol(v, &end, 10);

	return *v != '\0' && *end == '\0' && n >= 1 && n <= max ? n : 0;
}

static int
spin(long seconds)
{
	volatile unsigned long x = 0;
	double t0 = now();

	printf("xt-flood: spin start\n");
	fflush(stdout);
	while (now() - t0 < seconds)
		x++;
	printf("xt-flood: spin done after %.1f s\n", now() - t0);
	return 0;
}

/* One writer: its own XenStore connection, its share of the writes. */
static void *
write_loop(void *arg)
{
	struct writer *w = arg;
	struct xs_handle *xs = xs_open(0);
	long i;

	if (xs == NULL)
		return NULL;
	for (i = 0; i < w->n; i++)
		w->ok += xs_write(xs, XBT_NULL, w->path, i % 2 ? "6" : "1", 1);
	xs_close(xs);
	return NULL;
}

/* The absolute path of this domain's xnv device 0 state into @p path. */
static int
state_path(char *path, size_t len)
{
	struct xs_handle *xs = xs_open(0);
	unsigned int n;
	char *domid;

	if (xs == NULL) {
		perror("xt-flood: xs_open");
		return -1;
	}
	/* Relative paths resolve under /local/domain/<self>. */
	domid = xs_read(xs, XBT_NULL, "domid", &n);
	xs_close(xs);
	if (domid == NULL) {
		fprintf(stderr, "xt-flood: cannot read my domid\n");
		return -1;
	}
	snprintf(path, len, "/local/domain/%s/device/xnv/0/state", domid);
	free(domid);
	return 0;
}

static int
flood(long count)
{
	static struct writer w[WRITERS];
	long ok = 0;
	double t0, t;
	char path[96];
	int i, k;

	if (state_path(path, sizeof(path)) < 0)
		return 1;
	printf("xt-flood: flood start: %ld writes of %s by %d writers\n",
	       count, path, WRITERS);
	fflush(stdout);
	t0 = now();
	for (i = 0; i < WRITERS; i++) {
		w[i].path = path;
		w[i].n = count / WRITERS + (i < count % WRITERS);
		if (pthread_create(&w[i].thread, NULL, write_loop, &w[i]) != 0)
			break;
	}
	if (i < WRITERS)
		fprintf(stderr, "xt-flood: only %d of %d writers started\n",
			i, WRITERS);
	for (k = 0; k < i; k++) {
		pthread_join(w[k].thread, NULL);
		ok += w[k].ok;
	}
	t = now() - t0;
	printf("xt-flood: flood done: %ld of %ld writes in %.2f s (%.0f/s)\n",
	       ok, count, t, t > 0 ? ok / t : 0);
	return ok == count ? 0 : 1;
}

int
main(int argc, char **argv)
{
	long n = argc == 3 ? arg_num(argv[2], 1000000) : 0;

	if (n > 0 && strcmp(argv[1], "spin") == 0)
		return spin(n);
	if (n > 0 && strcmp(argv[1], "flood") == 0)
		return flood(n);
	fprintf(stderr, "usage: xt-flood spin SECONDS | flood COUNT (whole "
		"numbers from 1 to 1000000)\n");
	return 2;
}

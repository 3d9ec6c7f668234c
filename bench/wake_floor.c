/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * wake-floor: what one wake-up through a doorbell costs on this machine,
 * with no ring, no DPDK and no NF: the floor under the doorbell rows'
 * wake-up latency (bench/doorbell.py).
 *
 *   "core" process (CPU A, spins)          "NF" process (CPU B, sleeps)
 *   t0 = now; gnts_bell_kick()  ------->   poll() on its doorbell end,
 *                                          as libxnv sleeps (sleep.c)
 *                                          wakes, gnts_bell_ack(),
 *   spins on the shared word  <--------    stores the round number to a
 *   t1 = now: one sample t1 - t0           shared word (as a ring index)
 *
 * The same doorbell as host mode's (gntshare/bell.h: the core kicks
 * through a pipe, one write(); -s: through the unix socketpair alone, one
 * send(), as for an NF that did not ask for the pipe), one kick every
 * --interval us, so the NF is asleep each time (as at the wake-up rows'
 * 1000 packets/s).  The reply is a store to shared memory, as an NF's
 * publish to its tx ring, which a busy core sees without a wake-up of
 * its own.
 *
 * Usage: wake-floor [-n COUNT] [-i INTERVAL_US] [-a CPU_A] [-b CPU_B]
 *                   [-l US] [-s]
 * -l: hold /dev/cpu_dma_latency at US meanwhile, as xnv-core --cpu-latency.
 * Output: "wake-floor: n N p50_us X p99_us X p999_us X max_us X".
 * Exit status: 0, or after -h; 2 for a usage error (one line); 1 for any
 * other error.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <gntshare/bell.h>

struct params {
	long n, interval_us, cpu_latency;	/* -1: not held */
	int cpu_a, cpu_b;
	int sock_only;		/* -s: the socketpair alone, no pipe */
};

static double
now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int
pin(int cpu)
{
	cpu_set_t s;

	CPU_ZERO(&s);
	CPU_SET(cpu, &s);
	return sched_setaffinity(0, sizeof(s), &s);
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The NF: sleep on the doorbell, answer each kick through @p word. */
static void
sleeper(const int fds[2], _Atomic uint64_t *word)
{
	struct gnts_bell *b = gnts_bell_host_open(fds[0], fds[1]);
	uint64_t round = 0;

	if (b == NULL)
		_exit(1);
	for (;;) {
		struct pollfd p = { .fd = gnts_bell_fd(b), .events = POLLIN };

		if (poll(&p, 1, -1) < 0 && errno != EINTR)
			_exit(1);
		if (gnts_bell_ack(b) < 0)
			_exit(0);	/* the core's end closed: done */
		atomic_store_explicit(word, ++round, memory_order_release);
	}
}

/* Spin until the sleeper answers round @p i: 0, or -1 if it exited
 * (its status in *@p st). */
static int
await_answer(_Atomic uint64_t *word, uint64_t i, pid_t pid, int *st)
{
	unsigned long spins = 0;

	while (atomic_load_explicit(word, memory_order_acquire) != i)
		if ((++spins & 0xfffffu) == 0 &&
		    waitpid(pid, st, WNOHANG) == pid)
			return -1;
	return 0;
}

static int
run(const struct params *p, double *lat)
{
	_Atomic uint64_t *word;
	struct gnts_bell *core;
	int nf_fds[2], st = 0;
	pid_t pid;
	long i;

	/* Both CPUs there and ours to use, before the sleeper starts. */
	if (pin(p->cpu_b) < 0 || pin(p->cpu_a) < 0) {
		fprintf(stderr, "wake-floor: CPU %d or %d: %s\n", p->cpu_a,
			p->cpu_b, strerror(errno));
		return -1;
	}
	word = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (word == MAP_FAILED ||
	    gnts_bell_host_pair(&core, nf_fds, !p->sock_only) < 0) {
		fprintf(stderr, "wake-floor: %s\n", strerror(errno));
		return -1;
	}
	pid = fork();
	if (pid == 0) {
		gnts_bell_close(core);
		if (pin(p->cpu_b) < 0)
			_exit(1);
		sleeper(nf_fds, word);
	}
	close(nf_fds[0]);
	if (nf_fds[1] >= 0)
		close(nf_fds[1]);
	if (pid < 0 || pin(p->cpu_a) < 0) {
		fprintf(stderr, "wake-floor: %s\n", strerror(errno));
		return -1;
	}
	for (i = 0; i < p->n; i++) {
		double due = now_us() + (double)p->interval_us, t0;

		while (now_us() < due)
			;
		t0 = now_us();
		if (gnts_bell_kick(core) < 0)
			break;
		if (await_answer(word, (uint64_t)i + 1, pid, &st) < 0) {
			fprintf(stderr, "wake-floor: the sleeper exited\n");
			pid = -1;
			break;
		}
		lat[i] = now_us() - t0;
	}
	gnts_bell_close(core);	/* ends the sleeper */
	if (pid > 0)
		waitpid(pid, &st, 0);
	munmap((void *)word, 4096);
	return i == p->n && WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

static void
usage(FILE *f)
{
	fprintf(f, "usage: wake-floor [-n COUNT] [-i INTERVAL_US] [-a CPU_A] "
		"[-b CPU_B] [-l US] [-s]\n"
		"  -n COUNT        kicks, 1 to 10000000 (default 3000)\n"
		"  -i INTERVAL_US  between kicks (default 1000)\n"
		"  -a CPU_A        the kicker's CPU (default 0)\n"
		"  -b CPU_B        the sleeper's CPU (default 1)\n"
		"  -l US           hold /dev/cpu_dma_latency at US meanwhile\n"
		"  -s              kick through the socketpair alone, as for an\n"
		"                  NF that did not ask for the pipe (bell.h)\n"
		"Prints: wake-floor: n N p50_us X p99_us X p999_us X max_us X\n"
		"Exit status: 0, 2 for a usage error, 1 for any other error.\n");
}

/* 0, 1 (--help said) or -1 (a usage error said in one line). */
static int
parse(int argc, char **argv, struct params *p)
{
	static const struct option lo[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	*p = (struct params){ .n = 3000, .interval_us = 1000, .cpu_a = 0,
			      .cpu_b = 1, .cpu_latency = -1 };
	opterr = 0;
	while ((c = getopt_long(argc, argv, "n:i:a:b:l:sh", lo, NULL)) != -1) {
		char *end = NULL;
		long v = c != '?' && c != 'h' && c != 's' ?
			 strtol(optarg, &end, 10) : 0;

		if (c == 's') {
			p->sock_only = 1;
			continue;
		}
		if (c == 'h') {
			usage(stdout);
			return 1;
		}
		if (c == '?') {
			fprintf(stderr, "wake-floor: %s: unknown option or no "
				"value (--help: usage)\n", argv[optind - 1]);
			return -1;
		}
		if (end == optarg || *end != '\0' || v < (c == 'n') ||
		    v > 10000000) {
			fprintf(stderr, "wake-floor: -%c %s: expected %d to "
				"10000000\n", c, optarg, c == 'n');
			return -1;
		}
		if (c == 'n')
			p->n = v;
		else if (c == 'i')
			p->interval_us = v;
		else if (c == 'l')
			p->cpu_latency = v;
		else if (c == 'a')
			p->cpu_a = (int)v;
		else
			p->cpu_b = (int)v;
	}
	if (optind < argc) {
		fprintf(stderr, "wake-floor: unexpected argument '%s'\n",
			argv[optind]);
		return -1;
	}
	return 0;
}

int
main(int argc, char **argv)
{
	struct params p;
	double *lat;
	int rc = parse(argc, argv, &p);

	if (rc != 0)
		return rc < 0 ? 2 : 0;
	signal(SIGPIPE, SIG_IGN);
	if (p.cpu_latency >= 0) {
		int32_t v = (int32_t)p.cpu_latency;
		int fd = open("/dev/cpu_dma_latency", O_WRONLY | O_CLOEXEC);

		/* Left open: the request stands until exit. */
		if (fd < 0 || write(fd, &v, sizeof(v)) != (ssize_t)sizeof(v)) {
			fprintf(stderr, "wake-floor: /dev/cpu_dma_latency: %s\n",
				strerror(errno));
			return 1;
		}
	}
	lat = calloc((size_t)p.n, sizeof(*lat));
	if (lat == NULL || run(&p, lat) < 0) {
		fprintf(stderr, "wake-floor: the run failed\n");
		return 1;
	}
	qsort(lat, (size_t)p.n, sizeof(*lat), cmp_double);
	printf("wake-floor: n %ld p50_us %.2f p99_us %.2f p999_us %.2f "
	       "max_us %.2f\n", p.n, lat[p.n / 2], lat[p.n * 99 / 100],
	       lat[p.n * 999 / 1000], lat[p.n - 1]);
	free(lat);
	return 0;
}

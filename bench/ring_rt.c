/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ring-rt: raw round trip over one gntshare ring region, no DPDK, no NF
 * library: the ceiling the 1-NF path of xnv-core is compared with.
 *
 *   "core" thread (CPU 0)                    "NF" thread (CPU 1)
 *   free FIFO of buffer indices
 *     -> desc{buf, off 128, len 64}
 *     -> enqueue_burst(ring A = RX) ------>  dequeue_burst(A)
 *                                            read+write the first 64 B of
 *                                            the packet (one cache line)
 *   dequeue_burst(ring B = TX) <----------   enqueue_burst(B), all of it
 *     count += n, indices back to the FIFO
 *
 * Both the ring region and the buffer pool are gntshare regions made with
 * gnts_region_create(), as xnv-core makes them (pool: 2 MiB pages when the
 * host has some reserved), so page size and layout match the real thing.
 * A round trip is counted when the core thread dequeues a descriptor from
 * ring B.  Each repetition formats a fresh ring region, runs --warmup
 * seconds uncounted, then counts for --duration seconds.
 *
 * Usage: ring-rt [-n REPS] [-d SEC] [-w SEC] [-r RING] [-b BURST]
 *                [-N BUFS] [-c CORE_CPU] [-f NF_CPU]
 * Output: one line per repetition, then the median (min..max).
 * Exit status (xnv_nf_exit_status(), as the NFs): 0, or after -h; 2 for a
 * usage error (one line); 1 for any other error.
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gntshare/gntshare.h>
#include <gntshare/ring.h>
#include <xnv/nf.h>

#define BUF_SIZE   2176u	/* bytes per buffer, as xnv-core's default */
#define PKT_OFF    128u		/* XNV_HEADROOM */
#define PKT_LEN    64u
#define MAX_BURST  256u
#define MAX_REPS   32

struct params {
	int reps;
	double duration_s, warmup_s;
	uint32_t ring_size, burst, n_bufs;
	int core_cpu, nf_cpu;
};

/* Shared between the two threads of one repetition. */
struct run {
	const struct params *p;
	void *ring_va;
	size_t ring_bytes;
	uint8_t *pool;
	_Alignas(64) atomic_int nf_ready;
	_Alignas(64) atomic_int stop;
	pthread_t nf_tid;
	_Alignas(64) uint64_t counted;	/* written by the core thread */
	double seconds;
	double core_share, nf_share;	/* CPU time / wall time, counted part */
	int nf_err, core_err;
};

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* CPU time a thread has run, in seconds (-1 if unknown). */
static double
thread_cpu_s(pthread_t t)
{
	clockid_t id;
	struct timespec ts;

	if (pthread_getcpuclockid(t, &id) != 0 || clock_gettime(id, &ts) != 0)
		return -1;
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int
pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

static inline void
cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

/* The "NF": take from A, touch one cache line of the packet, give to B. */
static void *
nf_thread(void *arg)
{
	struct run *r = arg;
	struct gnts_ring_port ports[GNTS_RING_COUNT];
	struct gnts_ring_port *a, *b;
	struct gnts_desc d[MAX_BURST];
	const uint32_t burst = r->p->burst;

	if (pin(r->p->nf_cpu) != 0 ||
	    gnts_ring_region_attach(r->ring_va, r->ring_bytes,
				    r->p->ring_size, ports) != 0) {
		r->nf_err = 1;
		atomic_store(&r->nf_ready, 1);
		return NULL;
	}
	a = &ports[GNTS_RING_RX];
	b = &ports[GNTS_RING_TX];
	atomic_store(&r->nf_ready, 1);
	while (!atomic_load_explicit(&r->stop, memory_order_relaxed)) {
		unsigned n = gnts_ring_dequeue_burst(a, d, burst), i, done;

		if (n == 0) {
			cpu_relax();
			continue;
		}
		for (i = 0; i < n; i++) {
			uint64_t *q = (uint64_t *)(r->pool +
				(size_t)d[i].buf * BUF_SIZE + d[i].off);
			uint64_t s = q[0] ^ q[1] ^ q[2] ^ q[3] ^ q[4] ^ q[5] ^
				     q[6] ^ q[7];

			/* Read the whole line, write two words of it (e.g. a
			 * MAC swap would). */
			q[0] = s + 1;
			q[7] = s;
			d[i].action = XNV_ACT_NEXT;
		}
		for (done = 0; done < n;) {
			done += gnts_ring_enqueue_burst(b, d + done, n - done);
			if (done < n) {
				if (atomic_load_explicit(&r->stop,
							 memory_order_relaxed))
					return NULL;
				cpu_relax();
			}
		}
		if (a->broken || b->broken) {
			r->nf_err = 2;
			break;
		}
	}
	return NULL;
}

/* The "core": feed A from a FIFO of free buffers, count what B returns. */
static void *
core_thread(void *arg)
{
	struct run *r = arg;
	const struct params *p = r->p;
	struct gnts_ring_port ports[GNTS_RING_COUNT];
	struct gnts_ring_port *a, *b;
	struct gnts_desc d[MAX_BURST];
	uint32_t *fifo, head = 0, tail, mask, i;
	uint64_t total = 0, at_start = 0;
	double t0, t_start = 0, t_end = 0, t;
	double core_cpu0 = 0, nf_cpu0 = 0;
	const uint32_t burst = p->burst;
	const struct gnts_desc tmpl = { .off = PKT_OFF, .len = PKT_LEN };
	unsigned loops = 0;
	int counting = 0;

	if (pin(p->core_cpu) != 0 ||
	    gnts_ring_region_attach(r->ring_va, r->ring_bytes, p->ring_size,
				    ports) != 0) {
		r->core_err = 1;
		return NULL;
	}
	a = &ports[GNTS_RING_RX];
	b = &ports[GNTS_RING_TX];
	/* n_bufs is a power of two: the FIFO never holds more than that. */
	fifo = malloc(sizeof(*fifo) * p->n_bufs);
	if (fifo == NULL) {
		r->core_err = 2;
		return NULL;
	}
	mask = p->n_bufs - 1;
	for (i = 0; i < p->n_bufs; i++)
		fifo[i] = i;
	tail = p->n_bufs;
	while (!atomic_load(&r->nf_ready))
		cpu_relax();
	t0 = now_s();
	for (;;) {
		unsigned n = gnts_ring_dequeue_burst(b, d, burst), k;

		for (i = 0; i < n; i++)
			fifo[tail++ & mask] = d[i].buf;
		total += n;
		k = tail - head < burst ? tail - head : burst;
		/* (bench/build.mk compiles this file with
		 * -fno-tree-loop-distribute-patterns: GCC would otherwise
		 * turn this loop into a memset call plus stores.) */
		for (i = 0; i < k; i++) {
			d[i] = tmpl;
			d[i].buf = fifo[(head + i) & mask];
		}
		head += gnts_ring_enqueue_burst(a, d, k);
		if (a->broken || b->broken) {
			r->core_err = 3;
			break;
		}
		if ((++loops & 63u) != 0)
			continue;
		t = now_s();
		if (!counting && t - t0 >= p->warmup_s) {
			counting = 1;
			at_start = total;
			t_start = t;
			core_cpu0 = thread_cpu_s(pthread_self());
			nf_cpu0 = thread_cpu_s(r->nf_tid);
		} else if (counting && t - t_start >= p->duration_s) {
			t_end = t;
			r->core_share = (thread_cpu_s(pthread_self()) -
					 core_cpu0) / (t_end - t_start);
			r->nf_share = (thread_cpu_s(r->nf_tid) - nf_cpu0) /
				      (t_end - t_start);
			break;
		}
	}
	atomic_store(&r->stop, 1);
	r->counted = total - at_start;
	r->seconds = t_end > t_start ? t_end - t_start : 0;
	free(fifo);
	return NULL;
}

static int
one_run(const struct params *p, struct gnts_region *pool, double *mdesc,
	double share[2])
{
	struct gnts_region *rr = NULL;
	struct run *r;
	pthread_t tc, tn;
	int rc;

	rc = gnts_region_create("ring-rt-rings",
				gnts_ring_region_bytes(p->ring_size), 0, &rr);
	if (rc < 0) {
		fprintf(stderr, "ring-rt: ring region: %s\n", strerror(-rc));
		return -1;
	}
	rc = gnts_ring_region_format(rr->va, rr->size, p->ring_size);
	if (rc < 0) {
		fprintf(stderr, "ring-rt: gnts_ring_region_format: %s\n",
			strerror(-rc));
		gnts_region_destroy(rr);
		return -1;
	}
	r = aligned_alloc(64, (sizeof(*r) + 63) & ~(size_t)63);
	if (r == NULL) {
		gnts_region_destroy(rr);
		return -1;
	}
	memset(r, 0, sizeof(*r));
	r->p = p;
	r->ring_va = rr->va;
	r->ring_bytes = rr->size;
	r->pool = pool->va;
	if (pthread_create(&tn, NULL, nf_thread, r) != 0) {
		free(r);
		gnts_region_destroy(rr);
		return -1;
	}
	r->nf_tid = tn;
	if (pthread_create(&tc, NULL, core_thread, r) != 0) {
		atomic_store(&r->stop, 1);
		pthread_join(tn, NULL);
		free(r);
		gnts_region_destroy(rr);
		return -1;
	}
	pthread_join(tc, NULL);
	atomic_store(&r->stop, 1);
	pthread_join(tn, NULL);
	rc = 0;
	if (r->core_err || r->nf_err || r->seconds <= 0) {
		fprintf(stderr, "ring-rt: run failed (core error %d, NF error "
			"%d; pinning to CPUs %d and %d needs both online)\n",
			r->core_err, r->nf_err, p->core_cpu, p->nf_cpu);
		rc = -1;
	} else {
		*mdesc = (double)r->counted / r->seconds / 1e6;
		share[0] = r->core_share;
		share[1] = r->nf_share;
	}
	free(r);
	gnts_region_destroy(rr);
	return rc;
}

static int
cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return a < b ? -1 : a > b;
}

static void
usage(FILE *f)
{
	fprintf(f,
		"usage: ring-rt [options]\n"
		"  -n REPS   repetitions (default 3, max %d)\n"
		"  -d SEC    counted seconds per repetition (default 3)\n"
		"  -w SEC    uncounted warm-up seconds first (default 0.5)\n"
		"  -r N      ring size, power of two (default 1024)\n"
		"  -b N      burst (default 32, max %u)\n"
		"  -N N      buffers, power of two >= 2 rings (default 4096)\n"
		"  -c CPU    CPU of the core thread (default 0)\n"
		"  -f CPU    CPU of the NF thread (default 1)\n"
		"  -h, --help  this text\n"
		"Exit status: 0, 2 for a usage error, 1 for any other error.\n",
		MAX_REPS, MAX_BURST);
}

/* 0, -EAGAIN (-h said) or -EINVAL (a usage error said in one line). */
static int
parse(int argc, char **argv, struct params *p)
{
	static const struct option lo[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;
	char *end;
	double v;

	*p = (struct params){ .reps = 3, .duration_s = 3, .warmup_s = 0.5,
			      .ring_size = 1024, .burst = 32, .n_bufs = 4096,
			      .core_cpu = 0, .nf_cpu = 1 };
	opterr = 0;
	while ((c = getopt_long(argc, argv, "n:d:w:r:b:N:c:f:h", lo,
				NULL)) != -1) {
		if (c == 'h') {
			usage(stdout);
			return -EAGAIN;
		}
		if (c == '?' || c == ':') {
			fprintf(stderr, "ring-rt: unknown or incomplete option "
				"'%s' (see -h)\n", argv[optind - 1]);
			return -EINVAL;
		}
		v = strtod(optarg, &end);
		if (end == optarg || *end != '\0' || v < 0) {
			fprintf(stderr, "ring-rt: -%c %s: expected a number "
				">= 0\n", c, optarg);
			return -EINVAL;
		}
		switch (c) {
		case 'n': p->reps = (int)v; break;
		case 'd': p->duration_s = v; break;
		case 'w': p->warmup_s = v; break;
		case 'r': p->ring_size = (uint32_t)v; break;
		case 'b': p->burst = (uint32_t)v; break;
		case 'N': p->n_bufs = (uint32_t)v; break;
		case 'c': p->core_cpu = (int)v; break;
		case 'f': p->nf_cpu = (int)v; break;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "ring-rt: unexpected argument '%s'\n",
			argv[optind]);
		return -EINVAL;
	}
	if (p->reps < 1 || p->reps > MAX_REPS || p->duration_s <= 0 ||
	    !gnts_ring_size_ok(p->ring_size) || p->burst < 1 ||
	    p->burst > MAX_BURST || p->burst > p->ring_size ||
	    p->n_bufs < 2 * p->ring_size || (p->n_bufs & (p->n_bufs - 1)) ||
	    p->n_bufs > (1u << 22) || p->core_cpu == p->nf_cpu) {
		fprintf(stderr, "ring-rt: bad parameters (see -h)\n");
		return -EINVAL;
	}
	return 0;
}

int
main(int argc, char **argv)
{
	struct params p;
	struct gnts_region *pool;
	double v[MAX_REPS], s[MAX_REPS], share[2];
	int i, rc;

	if ((rc = parse(argc, argv, &p)) < 0)
		return xnv_nf_exit_status(rc);
	rc = gnts_region_create("ring-rt-pool", (size_t)p.n_bufs * BUF_SIZE,
				GNTS_F_HUGE, &pool);
	if (rc < 0) {
		fprintf(stderr, "ring-rt: pool of %u x %u B: %s\n", p.n_bufs,
			BUF_SIZE, strerror(-rc));
		return 1;
	}
	memset(pool->va, 0, pool->size);	/* fault every page in now */
	printf("ring-rt: ring %u, burst %u, %u buffers of %u B (%s pages), "
	       "core CPU %d, NF CPU %d, %.1f s warm-up + %.1f s counted\n",
	       p.ring_size, p.burst, p.n_bufs, BUF_SIZE,
	       pool->page_size == GNTS_HUGE_PAGE ? "2 MiB" : "4 KiB",
	       p.core_cpu, p.nf_cpu, p.warmup_s, p.duration_s);
	fflush(stdout);
	for (i = 0; i < p.reps; i++) {
		if (one_run(&p, pool, &v[i], share) < 0) {
			gnts_region_destroy(pool);
			return 1;
		}
		/* CPU share < 100 %: something else ran on these CPUs. */
		printf("ring-rt: rep %d/%d: %.3f Mdesc/s round trips (CPU "
		       "share: core thread %.0f %%, NF thread %.0f %%)\n",
		       i + 1, p.reps, v[i], 100 * share[0], 100 * share[1]);
		fflush(stdout);
		s[i] = v[i];
	}
	qsort(s, (size_t)p.reps, sizeof(s[0]), cmp_double);
	printf("ring-rt: median %.3f Mdesc/s (min %.3f, max %.3f) over %d "
	       "runs\n", p.reps % 2 ? s[p.reps / 2] :
	       (s[p.reps / 2 - 1] + s[p.reps / 2]) / 2, s[0], s[p.reps - 1],
	       p.reps);
	gnts_region_destroy(pool);
	return 0;
}

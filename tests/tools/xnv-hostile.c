/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * xnv-hostile: a hostile NF for the integration tests (host mode).
 *
 * It attaches like any NF (gnts_client_attach, then maps its ring region
 * and its group's pool), keeps its heartbeat going, takes packets from
 * its rx ring, and returns descriptors no honest NF would write, cycling
 * through these kinds:
 *
 *   random     16 random bytes
 *   index      a buffer index past the end of the pool
 *   double     a buffer it held, returned twice (the first one is fine)
 *   foreign    a buffer in range that it does not hold
 *   bounds     a held buffer with offset/length outside the buffer
 *   action     a held buffer with an unknown action
 *   dest       a held buffer sent to a port / service that does not exist
 *
 * (the held-buffer kinds are skipped while it holds none).  It paces
 * itself to --rate descriptors per second; a full tx ring makes it sleep.
 * After --count descriptors, --finish ring writes an impossible producer
 * index into its tx ring, --finish free an impossible consumer index into
 * its free ring (consumer ahead of the core's producer; needs --alloc,
 * and first waits, up to --wait seconds, for the core to put --alloc
 * buffers there);
 * --finish none leaves the rings alone.  Then it waits (up to --wait
 * seconds) to be detached.
 *
 * --hoard instead takes whatever comes on its rx ring and (with --alloc)
 * its free ring, keeps its heartbeat going and never returns a buffer,
 * until it is detached or --wait seconds have passed.
 *
 * --stats instead writes its stats area (gntshare/proto.h) over and over,
 * heartbeat going, until detached or --wait seconds have passed: slot 0
 * "good" = 2^64-1, slot 1 "good2" = a random value each time, slot 2 a
 * name without NUL, slot 3 one with ESC bytes, slot 4 one with a quote,
 * slot 5 "good" again, slot 6 unused, slots 7..15 random bytes (never a
 * valid name: the first is 0xff), and random stats_off / n_stats in the
 * region header.  The core must show "good" and "good2" alone, and 13
 * invalid slots.
 *
 * stdout, one line each:
 *
 *   ATTACH domain=D pool_bufs=N buf_size=B
 *   SENT n=N random=.. index=.. double=.. foreign=.. bounds=.. action=.. dest=..
 *                                             (or HOARDED n=N with --hoard,
 *                                                 STATS n=N with --stats)
 *   DETACHED reason=<the core's words>        (or NOT-DETACHED)
 *
 * Options: --socket PATH --service NAME --group NAME --name NAME
 *          --count N (1000000) --rate PER_S (0: as fast as the ring takes)
 *          --finish ring|free|none (ring) --seed N --alloc N (0: the
 *          attach request's alloc_bufs, sent as given) --hoard --stats
 *          --wait S (10)
 * Exit (xnv_nf_exit_status(), as the NFs): 0 when it was detached or
 * after --help, 1 when not or when the attach failed ("xnv-hostile:
 * attach failed: <the core's words>"), 2 on a usage error (one line).
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gntshare/proto.h>
#include <gntshare/host.h>
#include <gntshare/ring.h>
#include <xnv/nf.h>		/* xnv_nf_exit_status() alone */

#include "tool_opts.h"
#include "tool_time.h"

#define PROG "xnv-hostile"

enum kind { K_RANDOM, K_INDEX, K_DOUBLE, K_FOREIGN, K_BOUNDS, K_ACTION,
	    K_DEST, K_N };
static const char *const kind_names[K_N] = {
	"random", "index", "double", "foreign", "bounds", "action", "dest",
};

#define HELD_MAX 512

static struct {
	struct gnts_client *cl;
	struct gnts_attach_rsp att;
	struct gnts_ring_port rx, tx, free;
	struct gnts_ring_ctl *ctl;
	uint32_t held[HELD_MAX];
	unsigned n_held;
	uint64_t rnd;
	unsigned long sent[K_N];
	unsigned long hoarded;
} h;

/* What the command line asks for. */
struct opts {
	const char *sock, *finish;
	unsigned long count, rate;
	double wait_s;
	int hoard;
	int stats;
};

static uint64_t
rnd(void)
{
	h.rnd ^= h.rnd << 13;
	h.rnd ^= h.rnd >> 7;
	h.rnd ^= h.rnd << 17;
	return h.rnd;
}

static void
nap_us(long us)
{
	struct timespec ts = { .tv_nsec = us * 1000 };

	nanosleep(&ts, NULL);
}

/* Take what the core sent us; keep up to HELD_MAX buffers in hand. */
static void
take_rx(void)
{
	struct gnts_desc d[32];
	unsigned n, i;

	if (h.n_held > HELD_MAX - 32)
		return;
	n = gnts_ring_dequeue_burst(&h.rx, d, 32);
	for (i = 0; i < n; i++)
		h.held[h.n_held++] = d[i].buf;
}

/* One bad descriptor of kind @p k into @p out (2 for K_DOUBLE).
 * @return how many descriptors, 0 if the kind needs a held buffer. */
static unsigned
craft(enum kind k, struct gnts_desc *out)
{
	uint32_t bufs = h.att.pool_bufs, bs = h.att.buf_size;
	struct gnts_desc d = { .off = 128, .len = 64, .action = GNTS_ACT_DROP };

	if (k >= K_DOUBLE && k != K_FOREIGN) {
		if (h.n_held == 0)
			return 0;
		d.buf = h.held[--h.n_held];
	}
	switch (k) {
	case K_RANDOM:
		memcpy(&d, (uint64_t[2]){ rnd(), rnd() }, sizeof(d));
		break;
	case K_INDEX:
		d.buf = bufs + (uint32_t)(rnd() % 1000000);
		break;
	case K_DOUBLE:
		out[0] = d;	/* a fine DROP, then the same buffer again */
		out[1] = d;
		return 2;
	case K_FOREIGN:
		/* In range, not ours: held by the core or free. */
		d.buf = (uint32_t)(rnd() % bufs);
		for (unsigned i = 0; i < h.n_held; i++)
			if (h.held[i] == d.buf)
				d.buf = (d.buf + 1) % bufs;
		break;
	case K_BOUNDS:
		d.off = (uint16_t)(bs - 8);
		d.len = (uint16_t)(16 + rnd() % 4000);
		break;
	case K_ACTION:
		d.action = (uint8_t)(rnd() & 1 ? 0 : 5 + rnd() % 250);
		break;
	case K_DEST:
		if (rnd() & 1) {
			d.action = GNTS_ACT_OUT;
			d.dst = (uint16_t)(h.att.n_ports + rnd() % 100);
		} else {
			d.action = GNTS_ACT_TO_SERVICE;
			d.dst = (uint16_t)(rnd() & 1 ? 0 : 256 + rnd() % 1000);
		}
		break;
	default:
		return 0;
	}
	*out = d;
	return 1;
}

static int
detached(char *why, size_t len)
{
	uint32_t code = gnts_ring_detached(h.ctl);

	if (!gnts_client_alive(h.cl, why, len))
		return 1;
	if (code == GNTS_DETACH_NONE)
		return 0;
	/* The code comes first; the words follow on the socket. */
	for (int i = 0; i < 100; i++) {
		nap_us(1000);
		if (!gnts_client_alive(h.cl, why, len))
			return 1;
	}
	snprintf(why, len, "code %u in the control line", code);
	return 1;
}

/* Send @p count bad descriptors at most @p rate per second. */
static int
flood(unsigned long count, unsigned long rate, char *why, size_t len)
{
	unsigned long total = 0;	/* bad ones: a double is one */
	double t0 = now_s();
	unsigned k = 0;

	while (total < count) {
		struct gnts_desc d[34];
		unsigned n = 0, n_bad = 0, done = 0;

		gnts_ring_beat(h.ctl);
		take_rx();
		while (n < 32 && total + n_bad < count) {
			unsigned m = craft((enum kind)k, &d[n]);

			h.sent[k] += m != 0;
			n_bad += m != 0;
			n += m;
			k = (k + 1) % K_N;
		}
		while (done < n) {
			done += gnts_ring_enqueue_burst(&h.tx, d + done,
							n - done);
			gnts_ring_beat(h.ctl);
			if (h.tx.broken || detached(why, len))
				return -1;
			if (done < n)
				nap_us(20);
		}
		total += n_bad;
		while (rate && total > (now_s() - t0) * (double)rate)
			nap_us(100);
		if ((total & 4095) < 32 && detached(why, len))
			return -1;
	}
	return 0;
}

/* --hoard: take whatever comes on the rx and free rings and keep it, the
 * heartbeat going, until detached or @p wait_s passed.  @return 1 if
 * detached. */
static int
hoard(double wait_s, char *why, size_t len)
{
	struct gnts_desc d[64];
	double end = now_s() + wait_s;

	while (now_s() < end) {
		gnts_ring_beat(h.ctl);
		h.hoarded += gnts_ring_dequeue_burst(&h.rx, d, 64);
		h.hoarded += gnts_ring_dequeue_burst(&h.free, d, 64);
		if (detached(why, len))
			return 1;
		nap_us(1000);
	}
	return 0;
}

/* --stats: one round of garbage in the stats area of @p ring. */
static void
stats_garbage(void *ring)
{
	struct gnts_ring_region_hdr *hdr = ring;
	struct gnts_nf_stat *s = (struct gnts_nf_stat *)((char *)ring +
							 GNTS_RING_STATS_OFF);
	unsigned i, j;

	strcpy(s[0].name, "good");
	atomic_store(&s[0].value, UINT64_MAX);
	strcpy(s[1].name, "good2");
	atomic_store(&s[1].value, rnd());
	memset(s[2].name, 'A', sizeof(s[2].name));
	strcpy(s[3].name, "\x1b[31mred\x1b[0m");
	strcpy(s[4].name, "a\"b");
	strcpy(s[5].name, "good");
	atomic_store(&s[5].value, 1);
	for (i = 7; i < GNTS_NF_STATS_MAX; i++) {
		for (j = 0; j < sizeof(s[i].name); j++)
			s[i].name[j] = (char)rnd();
		s[i].name[0] = (char)0xff;
		atomic_store(&s[i].value, rnd());
	}
	hdr->stats_off = (uint32_t)rnd();
	hdr->n_stats = (uint32_t)rnd();
}

static int
stats(void *ring, double wait_s, char *why, size_t len)
{
	double end = now_s() + wait_s;

	while (now_s() < end) {
		gnts_ring_beat(h.ctl);
		stats_garbage(ring);
		h.hoarded++;
		if (detached(why, len))
			return 1;
		nap_us(1000);
	}
	return 0;
}

/* Before --finish free: give the core (up to @p wait_s seconds, heartbeat
 * going) the time to put @p want buffers on the free ring, so that what
 * the quarantine must take back is there to take. */
static void
await_free(uint32_t want, double wait_s)
{
	double end = now_s() + wait_s;

	/* Relaxed: it only counts, and reads no descriptor. */
	while (now_s() < end &&
	       atomic_load_explicit(&h.free.r->prod, memory_order_relaxed) -
	       atomic_load_explicit(&h.free.r->cons, memory_order_relaxed) <
	       want) {
		gnts_ring_beat(h.ctl);
		nap_us(1000);
	}
}

/* --finish: one impossible index, random, into a ring it must not move
 * that way ("free": once @p alloc buffers are there, up to @p wait_s). */
static void
finish(const char *how, uint32_t alloc, double wait_s)
{
	if (strcmp(how, "ring") == 0) {
		/* More than a ring ahead of the core's consumer. */
		uint32_t prod = h.tx.idx + h.tx.size + 1 +
				(uint32_t)(rnd() % (1u << 30));

		atomic_store_explicit(&h.tx.r->prod, prod,
				      memory_order_release);
	} else if (strcmp(how, "free") == 0) {
		/* Ahead of what the core has produced: it took buffers that
		 * were never there. */
		uint32_t cons;

		await_free(alloc, wait_s);
		cons = atomic_load(&h.free.r->prod) + 1 +
				(uint32_t)(rnd() % (1u << 30));

		atomic_store_explicit(&h.free.r->cons, cons,
				      memory_order_release);
	}
}

static void
usage(FILE *f)
{
	fprintf(f, "usage: xnv-hostile --socket PATH --service NAME --group "
		"NAME [--name NAME]\n"
		"       [--count N] [--rate PER_S] [--finish ring|free|none] "
		"[--seed N]\n"
		"       [--alloc N] [--hoard | --stats] [--wait SEC]\n"
		"A hostile NF for the integration tests (tests/tools/README.md)."
		"\nExit status: 0 once detached, 1 if not (or the attach "
		"failed),\n2 for a usage error.\n");
}

/* @p arg of option @p opt as a decimal number up to @p max into *@p out:
 * 0, or -EINVAL said in one line. */
static int
num_arg(const char *opt, const char *arg, unsigned long long max,
	unsigned long long *out)
{
	char *end;

	errno = 0;
	*out = strtoull(arg, &end, 10);
	if (*arg >= '0' && *arg <= '9' && *end == '\0' && errno == 0 &&
	    *out <= max)
		return 0;
	fprintf(stderr, "xnv-hostile: %s %s: expected a number from 0 to "
		"%llu\n", opt, arg, max);
	return -EINVAL;
}

/* What every run needs: 0, or -EINVAL said in one line. */
static int
check_opts(const struct opts *o, const struct gnts_attach_req *req)
{
	if (o->sock != NULL && req->service[0] && req->group[0] &&
	    (strcmp(o->finish, "ring") == 0 || strcmp(o->finish, "free") == 0 ||
	     strcmp(o->finish, "none") == 0))
		return 0;
	fprintf(stderr, "xnv-hostile: --socket, --service, --group needed; "
		"--finish ring|free|none (see --help)\n");
	return -EINVAL;
}

/* 0, -EAGAIN (--help said) or -EINVAL (a usage error said in one line). */
static int
parse_opts(int argc, char **argv, struct opts *o, struct gnts_attach_req *req)
{
	static const struct option lo[] = {
		TOOL_ATTACH_OPTIONS,
		{ "count", required_argument, NULL, 'c' },
		{ "rate", required_argument, NULL, 'r' },
		{ "finish", required_argument, NULL, 'f' },
		{ "seed", required_argument, NULL, 'z' },
		{ "alloc", required_argument, NULL, 'a' },
		{ "hoard", no_argument, NULL, 'H' },
		{ "stats", no_argument, NULL, 'T' },
		{ "wait", required_argument, NULL, 'w' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned long long v;
	int c, rc = 0;

	opterr = 0;
	while (rc == 0 && (c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case 'c':
			if ((rc = num_arg("--count", optarg, ULONG_MAX, &v)) == 0)
				o->count = (unsigned long)v;
			break;
		case 'r':
			if ((rc = num_arg("--rate", optarg, ULONG_MAX, &v)) == 0)
				o->rate = (unsigned long)v;
			break;
		case 'f': o->finish = optarg; break;
		case 'z':
			if ((rc = num_arg("--seed", optarg, ULLONG_MAX, &v)) == 0)
				h.rnd = v | 1;
			break;
		case 'a':
			if ((rc = num_arg("--alloc", optarg, UINT32_MAX, &v)) == 0)
				req->alloc_bufs = (uint32_t)v;
			break;
		case 'H': o->hoard = 1; break;
		case 'T': o->stats = 1; break;
		case 'w': rc = tool_wait_arg(PROG, optarg, &o->wait_s); break;
		case 'h': usage(stdout); return -EAGAIN;
		default:
			if (!tool_attach_opt(c, optarg, &o->sock, req))
				return tool_bad_option(PROG, argv);
		}
	}
	if (rc == 0)
		rc = tool_no_args(PROG, argc, argv);
	return rc < 0 ? rc : check_opts(o, req);
}

/* Attach, map the ring region and the pool.  @return 0 or -1 (said why). */
static int
attach(const char *sock, struct gnts_attach_req *req, void **ring,
       size_t *ring_len, void **pool, size_t *pool_len)
{
	struct gnts_ring_port ports[GNTS_RING_COUNT];
	char err[GNTS_ERR_LEN];

	if (gnts_client_attach(sock, req, &h.att, &h.cl, err, sizeof(err)) < 0 ||
	    gnts_client_map(h.cl, h.att.ring_ref, 0, ring, ring_len, err,
			    sizeof(err)) < 0 ||
	    gnts_ring_region_attach(*ring, *ring_len, h.att.ring_size, ports) < 0 ||
	    gnts_client_map(h.cl, h.att.pool_ref, 0, pool, pool_len, err,
			    sizeof(err)) < 0) {
		fprintf(stderr, "xnv-hostile: attach failed: %s\n", err);
		return -1;
	}
	h.rx = ports[GNTS_RING_RX];
	h.tx = ports[GNTS_RING_TX];
	h.free = ports[GNTS_RING_FREE];
	h.ctl = gnts_ring_region_ctl(*ring);
	printf("ATTACH domain=%u pool_bufs=%u buf_size=%u\n", h.att.domid,
	       h.att.pool_bufs, h.att.buf_size);
	fflush(stdout);
	return 0;
}

static void
print_sent(void)
{
	unsigned long total = 0;
	int k;

	for (k = 0; k < K_N; k++)
		total += h.sent[k];
	printf("SENT n=%lu", total);
	for (k = 0; k < K_N; k++)
		printf(" %s=%lu", kind_names[k], h.sent[k]);
	printf("\n");
}

int
main(int argc, char **argv)
{
	struct opts o = { .finish = "ring", .count = 1000000, .wait_s = 10 };
	struct gnts_attach_req req = { .name = "hostile" };
	char why[GNTS_ERR_LEN] = "";
	void *ring, *pool;
	size_t ring_len, pool_len;
	int gone;

	h.rnd = 0x2545f4914f6cdd1dull;
	if ((gone = parse_opts(argc, argv, &o, &req)) < 0)
		return xnv_nf_exit_status(gone);
	if (attach(o.sock, &req, &ring, &ring_len, &pool, &pool_len) < 0)
		return 1;
	if (o.stats) {
		gone = stats(ring, o.wait_s, why, sizeof(why));
		printf("STATS n=%lu\n", h.hoarded);
	} else if (o.hoard) {
		gone = hoard(o.wait_s, why, sizeof(why));
		printf("HOARDED n=%lu\n", h.hoarded);
	} else {
		gone = flood(o.count, o.rate, why, sizeof(why)) < 0;
		print_sent();
		if (!gone)
			finish(o.finish, req.alloc_bufs, o.wait_s);
	}
	fflush(stdout);
	for (double end = now_s() + o.wait_s; !gone && now_s() < end;) {
		gnts_ring_beat(h.ctl);
		gone = detached(why, sizeof(why));
		nap_us(10000);
	}
	printf(gone ? "DETACHED reason=%s\n" : "NOT-DETACHED\n", why);
	gnts_client_unmap(pool, pool_len);
	gnts_client_unmap(ring, ring_len);
	gnts_client_close(h.cl);
	return gone ? 0 : 1;
}

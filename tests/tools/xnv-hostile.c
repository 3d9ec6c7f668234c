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
 * index into its tx ring; --finish none leaves the ring alone.  Then it
 * waits (up to 10 s) to be detached.  stdout, one line each:
 *
 *   ATTACH domain=D pool_bufs=N buf_size=B
 *   SENT n=N random=.. index=.. double=.. foreign=.. bounds=.. action=.. dest=..
 *   DETACHED reason=<the core's words>        (or NOT-DETACHED)
 *
 * Options: --socket PATH --service NAME --group NAME --name NAME
 *          --count N (1000000) --rate PER_S (0: as fast as the ring takes)
 *          --finish ring|none (ring) --seed N
 * Exit: 0 when it was detached, 1 when not, 2 on usage / attach errors.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gntshare/proto.h>
#include <gntshare/host.h>
#include <gntshare/ring.h>

#include "tool_time.h"

enum kind { K_RANDOM, K_INDEX, K_DOUBLE, K_FOREIGN, K_BOUNDS, K_ACTION,
	    K_DEST, K_N };
static const char *const kind_names[K_N] = {
	"random", "index", "double", "foreign", "bounds", "action", "dest",
};

#define HELD_MAX 512

static struct {
	struct gnts_client *cl;
	struct gnts_attach_rsp att;
	struct gnts_ring_port rx, tx;
	struct gnts_ring_ctl *ctl;
	uint32_t held[HELD_MAX];
	unsigned n_held;
	uint64_t rnd;
	unsigned long sent[K_N];
} h;

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

int
main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "socket", required_argument, NULL, 'S' },
		{ "service", required_argument, NULL, 's' },
		{ "group", required_argument, NULL, 'g' },
		{ "name", required_argument, NULL, 'n' },
		{ "count", required_argument, NULL, 'c' },
		{ "rate", required_argument, NULL, 'r' },
		{ "finish", required_argument, NULL, 'f' },
		{ "seed", required_argument, NULL, 'z' },
		{ NULL, 0, NULL, 0 },
	};
	struct gnts_attach_req req = { .name = "hostile" };
	struct gnts_ring_port ports[GNTS_RING_COUNT];
	const char *sock = NULL, *finish = "ring";
	unsigned long count = 1000000, rate = 0;
	char err[GNTS_ERR_LEN], why[GNTS_ERR_LEN] = "";
	void *ring, *pool;
	size_t ring_len, pool_len;
	int c, gone;

	h.rnd = 0x2545f4914f6cdd1dull;
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'S': sock = optarg; break;
		case 's': snprintf(req.service, sizeof(req.service), "%s", optarg); break;
		case 'g': snprintf(req.group, sizeof(req.group), "%s", optarg); break;
		case 'n': snprintf(req.name, sizeof(req.name), "%s", optarg); break;
		case 'c': count = strtoul(optarg, NULL, 0); break;
		case 'r': rate = strtoul(optarg, NULL, 0); break;
		case 'f': finish = optarg; break;
		case 'z': h.rnd = strtoull(optarg, NULL, 0) | 1; break;
		default: return 2;
		}
	}
	if (sock == NULL || !req.service[0] || !req.group[0] ||
	    (strcmp(finish, "ring") != 0 && strcmp(finish, "none") != 0)) {
		fprintf(stderr, "xnv-hostile: --socket, --service, --group "
			"needed; --finish ring|none\n");
		return 2;
	}
	if (gnts_client_attach(sock, &req, &h.att, &h.cl, err, sizeof(err)) < 0 ||
	    gnts_client_map(h.cl, h.att.ring_ref, 0, &ring, &ring_len, err,
			    sizeof(err)) < 0 ||
	    gnts_ring_region_attach(ring, ring_len, h.att.ring_size, ports) < 0 ||
	    gnts_client_map(h.cl, h.att.pool_ref, 0, &pool, &pool_len, err,
			    sizeof(err)) < 0) {
		fprintf(stderr, "xnv-hostile: attach failed: %s\n", err);
		return 2;
	}
	h.rx = ports[GNTS_RING_RX];
	h.tx = ports[GNTS_RING_TX];
	h.ctl = gnts_ring_region_ctl(ring);
	printf("ATTACH domain=%u pool_bufs=%u buf_size=%u\n", h.att.domid,
	       h.att.pool_bufs, h.att.buf_size);
	fflush(stdout);
	gone = flood(count, rate, why, sizeof(why)) < 0;
	unsigned long total = 0;

	for (c = 0; c < K_N; c++)
		total += h.sent[c];
	printf("SENT n=%lu", total);
	for (c = 0; c < K_N; c++)
		printf(" %s=%lu", kind_names[c], h.sent[c]);
	printf("\n");
	fflush(stdout);
	if (!gone && strcmp(finish, "ring") == 0) {
		/* Random, impossible: more than a ring ahead of the core. */
		uint32_t prod = h.tx.idx + h.tx.size + 1 +
				(uint32_t)(rnd() % (1u << 30));

		atomic_store_explicit(&h.tx.r->prod, prod,
				      memory_order_release);
	}
	for (int i = 0; !gone && i < 1000; i++) {
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

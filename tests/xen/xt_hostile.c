/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * xt-hostile: a DomU program (tests/xen) that speaks the xnv attach
 * protocol through libxnv's own Xen client (gnts_cli_backend("xen"), the
 * code every NF runs) on the domain's device 0, honestly or not:
 *
 *   cycle N       attach, map ring and pool, close (unmap, Closed), N
 *                 times in a row: each attach finds the backend Closed by
 *                 the last detach, with the old request-id.
 *                 Prints "xt-cycle: C attached, R refused, U unanswered of N".
 *   attack N      the first attach maps ring and pool, then writes its own
 *                 frontend state Closed WITHOUT unmapping, and asks again,
 *                 N times in all (mappings kept).  Prints
 *                 "xt-attack: C attached, R refused, U unanswered of N" and
 *                 the first and last refusal.  Then it unmaps everything
 *                 and asks once more ("xt-sticky: ..."), writes data/unmapped
 *                 and waits for Dom0 to write data/released, and asks again
 *                 ("xt-released: ...", closing properly if attached).
 *   break         attach, map, write an impossible tx producer index into
 *                 its ring, and wait ("xt-break: ...").
 *   kick S        attach with its doorbell, map, wait for Dom0's data/go,
 *                 then notify the core's event channel as fast as it can
 *                 for S seconds ("xt-kick: N kicks in S s"), and close.
 *   sleeper S     attach with its doorbell, map, then pass every packet
 *                 on (NEXT) while its rx sleep word says "asleep, having
 *                 seen all" at every index, never cleared, never reading
 *                 its doorbell, for S seconds or until Dom0 writes
 *                 data/stop ("xt-sleeper: ..."), and close.
 *
 * Every attach asks for a doorbell (GNTS_REQ_BELL) and counts the ones it
 * got.  Every wait ends by DEADLINE (seconds of uptime, argv[1]).
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <xenstore.h>

#include <gntshare/backend.h>
#include <gntshare/ring.h>
#include <gntshare/xen.h>

#define FE GNTS_XS_FRONTEND_DIR "/0/"

static const struct gnts_cli_ops *ops;
static struct xs_handle *xs;
static double deadline;

static double
uptime(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + t.tv_nsec / 1e9;
}

static unsigned
left_ms(void)
{
	double l = deadline - uptime();

	return l > 60 ? 60000 : l > 0 ? (unsigned)(l * 1000) : 0;
}

/* One attempt: 1 attached (*impl), 0 refused (err), -1 no answer. */
static int
attach(void **impl, struct gnts_attach_rsp *rsp, char *err, size_t errlen)
{
	struct gnts_cli_cfg cfg = { .dev = 0, .timeout_ms = left_ms() };
	struct gnts_attach_req req;
	int rc;

	memset(&req, 0, sizeof(req));
	req.flags = GNTS_REQ_BELL;
	err[0] = '\0';
	rc = ops->attach(&cfg, &req, rsp, impl, err, errlen);
	if (rc == 0)
		return 1;
	return rc == -ETIMEDOUT ? -1 : 0;
}

struct maps {
	void *ring, *pool;
	size_t ring_size, pool_size;
};

static int
map_both(void *impl, struct maps *m, char *err, size_t errlen)
{
	memset(m, 0, sizeof(*m));
	if (ops->map(impl, GNTS_XEN_REF_RING, &m->ring, &m->ring_size, err,
		     errlen) < 0 ||
	    ops->map(impl, GNTS_XEN_REF_POOL, &m->pool, &m->pool_size, err,
		     errlen) < 0)
		return -1;
	return 0;
}

static char *
get(const char *path)
{
	unsigned n;

	return xs_read(xs, XBT_NULL, path, &n);
}

/* Until the backend of device 0 says Closed (the core revoked). */
static int
wait_backend_closed(void)
{
	char *be = get(FE GNTS_XS_BACKEND), path[128], *st;
	int closed = 0;

	if (be == NULL)
		return 0;
	snprintf(path, sizeof(path), "%s/%s", be, GNTS_XS_STATE);
	free(be);
	while (!closed && uptime() < deadline) {
		st = get(path);
		closed = st != NULL && atoi(st) == GNTS_XB_CLOSED;
		free(st);
		if (!closed)
			usleep(20000);
	}
	return closed;
}

/* Counts of one kind of run, and its first and last refusal. */
struct tally {
	const char *what;
	unsigned att, ref, slow, n, bells;
	char first[512], last[512];
};

/* One attempt with ring and pool mapped: 1 (*impl, *m), 0 refused or
 * unmappable, -1 no answer; counted in @p t. */
static int
round_trip(struct tally *t, void **impl, struct maps *m)
{
	struct gnts_attach_rsp rsp;
	char err[512];
	int r = attach(impl, &rsp, err, sizeof(err));

	t->n++;
	if (r > 0 && map_both(*impl, m, err, sizeof(err)) < 0)
		r = 0;
	if (r > 0) {
		t->att++;
		t->bells += ops->bell(*impl) != NULL;
	} else if (r < 0)
		t->slow++;
	else
		t->ref++;
	if (r == 0) {
		if (t->first[0] == '\0')
			snprintf(t->first, sizeof(t->first), "%s", err);
		snprintf(t->last, sizeof(t->last), "%s", err);
	}
	if (r <= 0 && !strcmp(t->what, "cycle"))
		printf("xt-cycle %u: %s\n", t->n, r < 0 ? "no answer" : err);
	return r;
}

static void
summary(const struct tally *t)
{
	printf("xt-%s: %u attached, %u refused, %u unanswered of %u, %u with "
	       "a doorbell\n", t->what, t->att, t->ref, t->slow, t->n, t->bells);
}

static int
cycle(unsigned n)
{
	struct tally t = { .what = "cycle" };
	struct maps m;
	void *impl;

	while (t.n < n && uptime() < deadline)
		if (round_trip(&t, &impl, &m) > 0)
			ops->close(impl);	/* unmaps, then Closed */
	summary(&t);
	return t.att == n ? 0 : 1;
}

/* After the attack: unmapped, asked again; released by Dom0, again. */
static void
after_attack(void *kept, struct maps *m)
{
	struct gnts_attach_rsp rsp;
	char err[512], *rel = NULL;
	void *impl;
	int r;

	ops->unmap(kept, m->ring, m->ring_size);
	ops->unmap(kept, m->pool, m->pool_size);
	r = attach(&impl, &rsp, err, sizeof(err));
	printf("xt-sticky: %s%s\n", r > 0 ? "attached" : r < 0 ? "no answer" :
	       "refused: ", r == 0 ? err : "");
	if (r > 0)
		ops->close(impl);
	fflush(stdout);
	xs_write(xs, XBT_NULL, "data/unmapped", "1", 1);
	while (uptime() < deadline && (rel = get("data/released")) == NULL)
		usleep(100000);
	free(rel);
	r = attach(&impl, &rsp, err, sizeof(err));
	printf("xt-released: %s%s\n", r > 0 ? "attached" : r < 0 ?
	       "no answer" : "refused: ", r == 0 ? err : "");
	if (r > 0)
		ops->close(impl);
}

static int
attack(unsigned n)
{
	struct tally t = { .what = "attack" };
	struct maps m, kept_maps;
	void *impl, *kept = NULL;

	while (t.n < n && uptime() < deadline) {
		if (round_trip(&t, &impl, &m) <= 0)
			continue;
		/* Closed, its mappings kept: no unmap, no close. */
		xs_write(xs, XBT_NULL, FE GNTS_XS_STATE, "6", 1);
		if (!wait_backend_closed())
			printf("xt-attack %u: backend never Closed\n", t.n);
		if (kept == NULL) {
			kept = impl;
			kept_maps = m;
		}
	}
	summary(&t);
	printf("xt-attack first refusal: %s\n", t.first);
	printf("xt-attack last refusal: %s\n", t.last);
	fflush(stdout);
	if (kept != NULL)
		after_attack(kept, &kept_maps);
	return 0;
}

/* Attached, ring and pool mapped, the ring region's ports set up:
 * @p what says it ("xt-WHAT: ...") and returns 0, or says why not. */
static int
attach_rings(const char *what, void **impl,
	     struct gnts_ring_port ports[GNTS_RING_COUNT], struct maps *m)
{
	struct gnts_attach_rsp rsp;
	char err[512];

	if (attach(impl, &rsp, err, sizeof(err)) <= 0 ||
	    map_both(*impl, m, err, sizeof(err)) < 0 ||
	    gnts_ring_region_attach(m->ring, m->ring_size, rsp.ring_size,
				    ports) < 0) {
		printf("xt-%s: no attach: %s\n", what, err);
		return -1;
	}
	printf("xt-%s: attached, %s\n", what, ops->bell(*impl) != NULL ?
	       "doorbell bound" : "no doorbell");
	return 0;
}

/* An impossible tx producer index: far past what the core consumed. */
static int
break_ring(void)
{
	struct gnts_ring_port ports[GNTS_RING_COUNT];
	struct maps m;
	void *impl;

	if (attach_rings("break", &impl, ports, &m) < 0)
		return 1;
	atomic_store_explicit(&ports[GNTS_RING_TX].r->prod,
			      ports[GNTS_RING_TX].size * 3 + 7,
			      memory_order_release);
	printf("xt-break: wrote an impossible tx producer index\n");
	fflush(stdout);
	while (uptime() < deadline)
		sleep(1);
	return 0;
}

/* 1 if Dom0 wrote data/@p key. */
static int
has_key(const char *key)
{
	char path[64], *v;

	snprintf(path, sizeof(path), "data/%s", key);
	v = get(path);
	free(v);
	return v != NULL;
}

/* Until Dom0 writes data/@p key (1), or the deadline (0). */
static int
wait_key(const char *key)
{
	while (uptime() < deadline && !has_key(key))
		usleep(100000);
	return has_key(key);
}

/* The core's doorbell rung as fast as one vCPU can, for @p secs once
 * Dom0 says go: each kick a hypercall; the core must count them and not
 * let them cost anyone else (dom0-core/doorbell.h). */
static int
kick_flood(unsigned secs)
{
	struct gnts_ring_port ports[GNTS_RING_COUNT];
	unsigned long n = 0, failed = 0;
	struct gnts_bell *b;
	struct maps m;
	double end;
	void *impl;

	if (attach_rings("kick", &impl, ports, &m) < 0 ||
	    (b = ops->bell(impl)) == NULL)
		return 1;
	fflush(stdout);
	if (!wait_key("go"))
		return 1;
	end = uptime() + secs;
	while (uptime() < end)
		for (int i = 0; i < 1000; i++, n++)
			failed += gnts_bell_kick(b) < 0;
	printf("xt-kick: %lu kicks in %u s (%lu failed)\n", n, secs, failed);
	ops->close(impl);
	return 0;
}

/* Every packet passed on (NEXT) for @p secs, its rx sleep word saying
 * "asleep, having seen all" at each new index and never cleared, its
 * doorbell never read: the core would kick it after every burst. */
static int
sleeper(unsigned secs)
{
	struct gnts_ring_port ports[GNTS_RING_COUNT], *rx, *tx;
	unsigned long in = 0, out = 0;
	struct gnts_desc d[64];
	unsigned n, k;
	struct maps m;
	double end, next_look = 0;
	void *impl;

	if (attach_rings("sleeper", &impl, ports, &m) < 0)
		return 1;
	fflush(stdout);
	rx = &ports[GNTS_RING_RX];
	tx = &ports[GNTS_RING_TX];
	if (rx->sleep == NULL) {
		printf("xt-sleeper: the region has no doorbell area\n");
		return 1;
	}
	end = uptime() + secs < deadline ? uptime() + secs : deadline;
	while (uptime() < end && !rx->broken && !tx->broken) {
		n = gnts_ring_dequeue_burst(rx, d, 64);
		for (k = 0; k < n; k++) {
			d[k].action = GNTS_ACT_NEXT;
			d[k].dst = 0;
		}
		for (k = 0; k < n && !tx->broken;)
			k += gnts_ring_enqueue_burst(tx, d + k, n - k);
		in += n;
		out += k;
		/* Asleep at what it has seen, whatever comes: relaxed, no
		 * fence, never cleared (a peer that lies). */
		atomic_store_explicit(rx->sleep, GNTS_RING_ASLEEP | rx->idx,
				      memory_order_relaxed);
		gnts_ring_beat(gnts_ring_region_ctl(m.ring));
		if (n == 0)
			usleep(50);
		if (uptime() >= next_look) {	/* Dom0's stop, once a second */
			if (has_key("stop"))
				break;
			next_look = uptime() + 1;
		}
	}
	printf("xt-sleeper: rx %lu, passed on %lu, its sleep word set "
	       "throughout%s\n", in, out, rx->broken || tx->broken ?
	       "; a ring broke" : "");
	ops->close(impl);
	return 0;
}

int
main(int argc, char **argv)
{
	unsigned n = argc > 3 ? (unsigned)atoi(argv[3]) : 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 3) {
		fprintf(stderr, "usage: xt-hostile DEADLINE cycle|attack N | "
			"DEADLINE break | DEADLINE kick|sleeper SECONDS\n");
		return 2;
	}
	deadline = atof(argv[1]);
	ops = gnts_cli_backend("xen");
	xs = xs_open(0);
	if (ops == NULL || xs == NULL) {
		fprintf(stderr, "xt-hostile: no xen client or XenStore\n");
		return 2;
	}
	if (strcmp(argv[2], "cycle") == 0)
		return cycle(n);
	if (strcmp(argv[2], "attack") == 0)
		return attack(n);
	if (strcmp(argv[2], "break") == 0)
		return break_ring();
	if (strcmp(argv[2], "kick") == 0)
		return kick_flood(n);
	if (strcmp(argv[2], "sleeper") == 0)
		return sleeper(n);
	fprintf(stderr, "xt-hostile: unknown mode '%s'\n", argv[2]);
	return 2;
}

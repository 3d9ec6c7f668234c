/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * xnv-bellhostile: an NF that breaks the doorbell protocol on purpose, for
 * the integration tests (host mode; gntshare/ring.h "Sleeping on a ring",
 * gntshare/bell.h, dom0-core/doorbell.h).
 *
 * It attaches like an NF (gnts_client_attach with GNTS_REQ_BELL), maps its
 * ring region, says on its own line that it kicks (gnts_ring_kicks_set),
 * keeps its heartbeat going, and then misbehaves until stdin reaches EOF
 * (the test closes it), the core detaches it, or --wait seconds passed:
 *
 *   --flood        kicks the core's doorbell in a tight loop; it never
 *                  publishes anything, and never takes what the core
 *                  sends it (its rx ring fills; nothing is held past it)
 *   --never-wake   keeps its rx sleep word at ASLEEP | the core's rx
 *                  producer index, as read now, for ever: the core would
 *                  kick it after every burst.  It still takes every
 *                  descriptor and hands each back at once on its tx ring
 *                  as a drop (GNTS_ACT_DROP), kicking the core when the
 *                  core says it sleeps, so it holds nothing; it never
 *                  reads its doorbell, which it first makes blocking and,
 *                  a pipe, as small as it goes (one page: full after a
 *                  few thousand kicks)
 *   --kick-closed  closes its doorbell fd right after attaching
 *                  (gnts_bell_close), then serves its rings like an honest
 *                  NF that sleeps 1 ms at a time when its rx ring is
 *                  empty, saying so in its sleep word: the core finds its
 *                  end closed, and its kicks go nowhere.  The client is
 *                  then never closed (it would close that end again): the
 *                  tool exits and the core sees the hang-up.
 *
 * stdout, one line per event:
 *
 *   ATTACH ok domain=D bell=yes|no ring_size=N
 *   ATTACH refused: <the core's words>
 *   MODE flood|never-wake|kick-closed          (the misbehaviour starts)
 *   BELL closed                                 (--kick-closed)
 *   BELL jammed kind=pipe|socketpair pipe_bytes=N|-  (--never-wake)
 *   KICKS n failed=F                            (kicks sent, refused)
 *   SERVED consumed=N returned=N words=W sleeps=S
 *   END stdin-eof | detached: <why> | timeout
 *   FAIL: <what did not hold>
 *   RESULT ok | RESULT FAIL: <summary>
 *
 * Options: --socket PATH --service NAME --group NAME [--name NAME]
 *          --flood | --never-wake | --kick-closed  [--wait SEC (120)]
 * Exit (xnv_nf_exit_status(), as xnv-probe): 0 when it misbehaved as
 * asked until the end (or after --help), 1 when it could not (an attach
 * refused, no doorbell given, a ring it could not map or that broke), 2
 * on a usage error (one line).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <gntshare/bell.h>
#include <gntshare/host.h>
#include <gntshare/proto.h>
#include <gntshare/ring.h>
#include <xnv/nf.h>		/* xnv_nf_exit_status() alone */

#include "tool_opts.h"
#include "tool_time.h"

#define PROG "xnv-bellhostile"

enum mode { M_NONE, M_FLOOD, M_NEVER_WAKE, M_KICK_CLOSED };
static const char *const mode_names[] = {
	[M_NONE] = "none", [M_FLOOD] = "flood",
	[M_NEVER_WAKE] = "never-wake", [M_KICK_CLOSED] = "kick-closed",
};

#define BURST 64
#define CHECK_EVERY_S 0.001	/* stdin and the socket, at most this often */

struct opts {
	const char *sock;
	enum mode mode;
	double wait_s;
};

static struct {
	struct gnts_client *cl;
	struct gnts_attach_rsp att;
	struct gnts_ring_port rx, tx;
	struct gnts_ring_ctl *ctl;
	struct gnts_bell *bell;
	unsigned long kicks, kick_failed;
	unsigned long consumed, returned, words, sleeps;
	char end[GNTS_ERR_LEN + 16];
	int failures;
} h;

static void
nap_us(long us)
{
	struct timespec ts = { .tv_sec = us / 1000000,
			       .tv_nsec = (us % 1000000) * 1000 };

	nanosleep(&ts, NULL);
}

static void
fail(const char *what)
{
	printf("FAIL: %s\n", what);
	h.failures++;
}

/* Ring the core's doorbell once; counted either way. */
static void
kick_core(void)
{
	if (gnts_bell_kick(h.bell) == 0)
		h.kicks++;
	else
		h.kick_failed++;
}

/* 1 when it must stop: stdin at EOF, detached, or @p deadline passed;
 * h.end says which. */
static int
must_stop(double deadline)
{
	struct pollfd p = { .fd = 0, .events = POLLIN };
	char buf[256], why[GNTS_ERR_LEN];

	if (poll(&p, 1, 0) > 0 && read(0, buf, sizeof(buf)) <= 0) {
		snprintf(h.end, sizeof(h.end), "stdin-eof");
		return 1;
	}
	if (!gnts_client_alive(h.cl, why, sizeof(why))) {
		snprintf(h.end, sizeof(h.end), "detached: %s", why);
		return 1;
	}
	if (gnts_ring_detached(h.ctl) != GNTS_DETACH_NONE) {
		/* The code comes first; the words follow on the socket. */
		snprintf(h.end, sizeof(h.end), "detached: code %u",
			 gnts_ring_detached(h.ctl));
		return 1;
	}
	if (now_s() > deadline) {
		snprintf(h.end, sizeof(h.end), "timeout");
		return 1;
	}
	return 0;
}

/* Take what the core sent and hand it straight back as drops, kicking the
 * core if it sleeps.  @return descriptors taken, or -1: a ring broke. */
static int
serve(void)
{
	struct gnts_desc d[BURST];
	unsigned n, i, done = 0;

	n = gnts_ring_dequeue_burst(&h.rx, d, BURST);
	h.consumed += n;
	for (i = 0; i < n; i++)
		d[i] = (struct gnts_desc){ .buf = d[i].buf, .off = d[i].off,
					   .len = d[i].len,
					   .action = GNTS_ACT_DROP };
	while (done < n && !h.tx.broken) {
		done += gnts_ring_enqueue_burst(&h.tx, d + done, n - done);
		gnts_ring_beat(h.ctl);
		if (done < n)
			nap_us(20);
	}
	h.returned += done;
	if (h.bell != NULL && gnts_ring_need_kick(&h.tx))
		kick_core();
	return h.rx.broken || h.tx.broken ? -1 : (int)n;
}

/* --never-wake: "asleep, having seen the producer at X" with X the core's
 * producer index now, so that its next burst is always one to kick for. */
static void
claim_asleep(void)
{
	uint32_t prod = atomic_load_explicit(&h.rx.r->prod,
					     memory_order_acquire);
	uint64_t w = GNTS_RING_ASLEEP | prod;

	if (atomic_load_explicit(h.rx.sleep, memory_order_relaxed) != w) {
		atomic_store_explicit(h.rx.sleep, w, memory_order_relaxed);
		h.words++;
	}
}

/* --never-wake: the end it waits on made blocking and, a pipe, shrunk to
 * one page: a core whose kick could block on it would now. */
static void
jam_bell(void)
{
	int fd = gnts_bell_fd(h.bell), fl = fcntl(fd, F_GETFL);
	int is_pipe = strcmp(h.bell->ops->name, "pipe") == 0;
	int bytes = is_pipe ? fcntl(fd, F_SETPIPE_SZ, 4096) : -1;
	char size[16] = "-";

	if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0 ||
	    (is_pipe && bytes < 0))
		fail("its doorbell end cannot be made blocking or small");
	if (bytes >= 0)
		snprintf(size, sizeof(size), "%d", bytes);
	printf("BELL jammed kind=%s pipe_bytes=%s\n", h.bell->ops->name, size);
}

/* --kick-closed: an honest sleeper whose doorbell is gone: say so, wait
 * 1 ms on nothing, awake again. */
static int
sleep_closed(void)
{
	int rc = gnts_ring_sleep_prepare(&h.rx);

	if (rc == 1) {
		h.sleeps++;
		nap_us(1000);
		gnts_ring_sleep_cancel(&h.rx);
	}
	return rc;
}

/* One round of the misbehaviour.  @return 0, or -1: a ring broke. */
static int
step(enum mode m)
{
	int n;

	gnts_ring_beat(h.ctl);
	switch (m) {
	case M_FLOOD:
		kick_core();
		return 0;
	case M_NEVER_WAKE:
		n = serve();
		claim_asleep();
		if (n == 0)
			sched_yield();
		return n < 0 ? -1 : 0;
	case M_KICK_CLOSED:
		n = serve();
		if (n == 0 && sleep_closed() < 0)
			return -1;
		return n < 0 ? -1 : 0;
	default:
		return -1;
	}
}

static void
misbehave(const struct opts *o)
{
	double deadline = now_s() + o->wait_s, next = 0;

	if (o->mode == M_KICK_CLOSED) {
		gnts_bell_close(h.bell);
		h.bell = NULL;
		printf("BELL closed\n");
	}
	if (o->mode == M_NEVER_WAKE)
		jam_bell();
	printf("MODE %s\n", mode_names[o->mode]);
	for (;;) {
		if (step(o->mode) < 0) {
			snprintf(h.end, sizeof(h.end), "ring broken");
			fail("a ring index of the core is impossible");
			break;
		}
		if (now_s() < next)
			continue;
		next = now_s() + CHECK_EVERY_S;
		if (must_stop(deadline))
			break;
	}
	if (o->mode != M_KICK_CLOSED)
		printf("KICKS %lu failed=%lu\n", h.kicks, h.kick_failed);
	printf("SERVED consumed=%lu returned=%lu words=%lu sleeps=%lu\n",
	       h.consumed, h.returned, h.words, h.sleeps);
	printf("END %s\n", h.end);
}

static void
usage(FILE *f)
{
	fprintf(f, "usage: xnv-bellhostile --socket PATH --service NAME "
		"--group NAME [--name NAME]\n"
		"       (--flood | --never-wake | --kick-closed) [--wait SEC]\n"
		"An NF breaking the doorbell protocol for the integration tests "
		"(tests/tools/README.md).\n"
		"Exit status: 0 once it misbehaved as asked, 1 if it could not "
		"(attach refused,\nno doorbell), 2 for a usage error.\n");
}

/* @p m as the mode, unless one was given already: 0 or -EINVAL (said). */
static int
set_mode(struct opts *o, enum mode m)
{
	if (o->mode != M_NONE && o->mode != m) {
		fprintf(stderr, PROG ": --%s and --%s: one mode at "
			"a time\n", mode_names[o->mode], mode_names[m]);
		return -EINVAL;
	}
	o->mode = m;
	return 0;
}

/* 0, -EAGAIN (--help said) or -EINVAL (a usage error said in one line). */
static int
parse(int argc, char **argv, struct opts *o, struct gnts_attach_req *req)
{
	static const struct option lo[] = {
		TOOL_ATTACH_OPTIONS,
		{ "flood", no_argument, NULL, 'F' },
		{ "never-wake", no_argument, NULL, 'W' },
		{ "kick-closed", no_argument, NULL, 'C' },
		{ "wait", required_argument, NULL, 'w' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, rc = 0;

	opterr = 0;
	while (rc == 0 && (c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case 'F': rc = set_mode(o, M_FLOOD); break;
		case 'W': rc = set_mode(o, M_NEVER_WAKE); break;
		case 'C': rc = set_mode(o, M_KICK_CLOSED); break;
		case 'w': rc = tool_wait_arg(PROG, optarg, &o->wait_s); break;
		case 'h': usage(stdout); return -EAGAIN;
		default:
			if (!tool_attach_opt(c, optarg, &o->sock, req))
				return tool_bad_option(PROG, argv);
		}
	}
	if (rc == 0)
		rc = tool_no_args(PROG, argc, argv);
	if (rc == 0 && (o->sock == NULL || !req->service[0] || !req->group[0] ||
			o->mode == M_NONE)) {
		fprintf(stderr, PROG ": --socket, --service, --group "
			"and one of --flood, --never-wake, --kick-closed needed "
			"(see --help)\n");
		return -EINVAL;
	}
	return rc;
}

/* Attach with a doorbell and map the ring region.  @return 0, or -1 with
 * what went wrong said on stdout. */
static int
attach(const char *sock, struct gnts_attach_req *req)
{
	struct gnts_ring_port ports[GNTS_RING_COUNT];
	char err[GNTS_ERR_LEN];
	size_t len;
	void *ring;

	req->flags = GNTS_REQ_BELL;
	if (gnts_client_attach(sock, req, &h.att, &h.cl, err, sizeof(err)) < 0) {
		printf("ATTACH refused: %s\n", err);
		return -1;
	}
	h.bell = gnts_client_bell(h.cl);
	printf("ATTACH ok domain=%u bell=%s ring_size=%u\n", h.att.domid,
	       h.bell != NULL ? "yes" : "no", h.att.ring_size);
	if (gnts_client_map(h.cl, h.att.ring_ref, 0, &ring, &len, err,
			    sizeof(err)) < 0) {
		printf("MAP ring refused: %s\n", err);
		return -1;
	}
	if (gnts_ring_region_attach(ring, len, h.att.ring_size, ports) < 0) {
		fail("the ring region does not check out");
		return -1;
	}
	h.rx = ports[GNTS_RING_RX];
	h.tx = ports[GNTS_RING_TX];
	h.ctl = gnts_ring_region_ctl(ring);
	if (h.bell == NULL || h.rx.sleep == NULL) {
		fail("the core gave no doorbell (or its region has no area)");
		return -1;
	}
	/* "I kick the core when it sleeps" (every ring the NF produces). */
	gnts_ring_kicks_set(&h.tx);
	return 0;
}

int
main(int argc, char **argv)
{
	struct gnts_attach_req req = { .name = "bellhostile" };
	struct opts o = { .wait_s = 120 };
	int rc;

	if ((rc = parse(argc, argv, &o, &req)) < 0)
		return xnv_nf_exit_status(rc);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (attach(o.sock, &req) < 0) {
		printf("RESULT FAIL: no attach with a doorbell\n");
		return 1;
	}
	misbehave(&o);
	/* With --kick-closed the client's doorbell end is closed already:
	 * closing the client would close it again.  The exit hangs up. */
	if (o.mode != M_KICK_CLOSED)
		gnts_client_close(h.cl);
	if (h.failures) {
		printf("RESULT FAIL: %d thing(s) did not hold\n", h.failures);
		return 1;
	}
	printf("RESULT ok\n");
	return 0;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * xnv-probe: an isolation probe for the integration tests (host mode).
 *
 * It attaches to xnv-core like an NF (gnts_client_attach, as --service in
 * --group), then asks the core to map regions by reference and reports,
 * one line per attempt on stdout:
 *
 *   ATTACH ok domain=D service_id=S ring_ref=R pool_ref=P pool_bufs=N
 *   ATTACH refused: <core's reason>
 *   MAP ref=N ok size=BYTES
 *   MAP ref=N refused: <core's reason>
 *   RAW ref=N unattached: refused, no fd: <reason>     (--raw-check)
 *   RAW ref=N attached: refused, no fd: <reason>
 *   HOLD attempts=K unexpected=U end=<why>             (--hold)
 *   FAIL: <an expectation that did not hold>           (one per failure)
 *   RESULT ok | RESULT FAIL: <summary>
 *
 * Exit status (xnv_nf_exit_status(), as the NFs): 0 only if every
 * expectation given by flags held (or after --help), 1 if one did not
 * (an attach refused unasked included), 2 on a usage error (one line).
 *
 * Options:
 *   --socket PATH        xnv-core's socket (required)
 *   --service NAME       service to attach as (default fwd-b)
 *   --group NAME         trust group to attach in (default B)
 *   --name NAME          instance name (default probe)
 *   --refs N             try to map every ref 1..N
 *   --ref R              try to map ref R (repeatable)
 *   --expect-ok R        mapping R must succeed (and be readable/writable)
 *   --expect-refused R   mapping R must be refused, with a reason naming
 *                        region R
 *   --expect-attach-refused  the attach itself must be refused
 *   --raw-check R        speak the wire protocol directly: ask for R before
 *                        attaching (refused, no fd, and the core hangs up)
 *                        and, on a new connection, after attaching (refused,
 *                        no file descriptor in the reply)
 *   --hold               after the attempts, keep retrying the expected-
 *                        refused refs every 5 ms until stdin reaches EOF
 *                        or the core detaches the probe
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <gntshare/proto.h>
#include <gntshare/host.h>
#include <xnv/nf.h>		/* xnv_nf_exit_status() alone */

#include "host_msg.h"	/* gntshare's private wire format, for --raw-check */
#include "tool_time.h"

#define MAX_REFS 256

struct opts {
	const char *socket, *service, *group, *name;
	gnts_ref_t refs[MAX_REFS];
	unsigned n_refs;
	gnts_ref_t ok[MAX_REFS], refused[MAX_REFS], raw[MAX_REFS];
	unsigned n_ok, n_refused, n_raw;
	int expect_attach_refused, hold;
};

static int failures;

static void __attribute__((format(printf, 1, 2)))
fail(const char *fmt, ...)
{
	va_list ap;

	printf("FAIL: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	failures++;
}

static int
in_list(const gnts_ref_t *l, unsigned n, gnts_ref_t r)
{
	for (unsigned i = 0; i < n; i++)
		if (l[i] == r)
			return 1;
	return 0;
}

static int
add_ref(gnts_ref_t *l, unsigned *n, const char *v)
{
	char *end;
	unsigned long x = strtoul(v, &end, 0);

	if (end == v || *end != '\0' || x == 0 || x > 0xffffffffUL ||
	    *n == MAX_REFS) {
		fprintf(stderr, "xnv-probe: bad region reference '%s'\n", v);
		return -EINVAL;
	}
	if (!in_list(l, *n, (gnts_ref_t)x))
		l[(*n)++] = (gnts_ref_t)x;
	return 0;
}

/* --refs @p v: refs 1..v tried.  0, or -EINVAL said in one line. */
static int
add_first_refs(struct opts *o, const char *v)
{
	char *end;
	unsigned long n = strtoul(v, &end, 0);

	if (end == v || *end != '\0' || n == 0 || n > MAX_REFS) {
		fprintf(stderr, "xnv-probe: --refs %s: expected 1..%d\n", v,
			MAX_REFS);
		return -EINVAL;
	}
	for (unsigned long i = 1; i <= n; i++)
		if (!in_list(o->refs, o->n_refs, (gnts_ref_t)i))
			o->refs[o->n_refs++] = (gnts_ref_t)i;
	return 0;
}

static void
usage(FILE *f)
{
	fprintf(f, "usage: xnv-probe --socket PATH [--service S] [--group G] "
		"[--name N]\n"
		"       [--refs N] [--ref R]... [--expect-ok R]... "
		"[--expect-refused R]...\n"
		"       [--expect-attach-refused] [--raw-check R]... [--hold]\n"
		"An isolation probe for the integration tests "
		"(tests/tools/README.md).\n"
		"Exit status: 0 if every expectation held, 1 if one did not,\n"
		"2 for a usage error.\n");
}

static int
parse(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "service", required_argument, NULL, 'S' },
		{ "group", required_argument, NULL, 'g' },
		{ "name", required_argument, NULL, 'n' },
		{ "refs", required_argument, NULL, 'N' },
		{ "ref", required_argument, NULL, 'r' },
		{ "expect-ok", required_argument, NULL, 'o' },
		{ "expect-refused", required_argument, NULL, 'x' },
		{ "expect-attach-refused", no_argument, NULL, 'A' },
		{ "raw-check", required_argument, NULL, 'R' },
		{ "hold", no_argument, NULL, 'H' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	memset(o, 0, sizeof(*o));
	o->service = "fwd-b";
	o->group = "B";
	o->name = "probe";
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case 's': o->socket = optarg; break;
		case 'S': o->service = optarg; break;
		case 'g': o->group = optarg; break;
		case 'n': o->name = optarg; break;
		case 'N':
			if (add_first_refs(o, optarg) < 0)
				return -EINVAL;
			break;
		case 'r':
			if (add_ref(o->refs, &o->n_refs, optarg) < 0)
				return -EINVAL;
			break;
		case 'o':
			if (add_ref(o->ok, &o->n_ok, optarg) < 0)
				return -EINVAL;
			break;
		case 'x':
			if (add_ref(o->refused, &o->n_refused, optarg) < 0)
				return -EINVAL;
			break;
		case 'R':
			if (add_ref(o->raw, &o->n_raw, optarg) < 0)
				return -EINVAL;
			break;
		case 'A': o->expect_attach_refused = 1; break;
		case 'H': o->hold = 1; break;
		case 'h': usage(stdout); return -EAGAIN;
		default:
			fprintf(stderr, "xnv-probe: unknown or incomplete option "
				"'%s' (see --help)\n", argv[optind - 1]);
			return -EINVAL;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "xnv-probe: unexpected argument '%s'\n",
			argv[optind]);
		return -EINVAL;
	}
	if (o->socket == NULL) {
		fprintf(stderr, "xnv-probe: --socket PATH is required (see "
			"--help)\n");
		return -EINVAL;
	}
	/* Every ref with an expectation is also tried. */
	for (unsigned i = 0; i < o->n_ok; i++)
		if (!in_list(o->refs, o->n_refs, o->ok[i]))
			o->refs[o->n_refs++] = o->ok[i];
	for (unsigned i = 0; i < o->n_refused; i++)
		if (!in_list(o->refs, o->n_refs, o->refused[i]) &&
		    o->n_refs < MAX_REFS)
			o->refs[o->n_refs++] = o->refused[i];
	return 0;
}

/* Map @p ref once; 1 mapped, 0 refused (reason in @p why), -1 other error. */
static int
try_map(struct gnts_client *cl, gnts_ref_t ref, char *why, size_t whylen,
	size_t *size)
{
	void *va = NULL;
	int rc = gnts_client_map(cl, ref, 0, &va, size, why, whylen);

	if (rc == 0) {
		volatile unsigned char *p = va;
		unsigned char b = p[0];

		p[0] = b;	/* the mapping is really there, read + write */
		gnts_client_unmap(va, *size);
		return 1;
	}
	return rc == -EACCES ? 0 : -1;
}

/* The reason the core gives must name the region it refused. */
static int
names_region(const char *why, gnts_ref_t ref)
{
	char a[32], b[32];

	snprintf(a, sizeof(a), "region %u ", ref);
	snprintf(b, sizeof(b), "region %u", ref);
	return strstr(why, a) != NULL ||
	       (strstr(why, b) != NULL &&
		strstr(why, b)[strlen(b)] == '\0');
}

static void
map_all(struct gnts_client *cl, const struct opts *o)
{
	char why[GNTS_ERR_LEN];
	size_t size = 0;

	for (unsigned i = 0; i < o->n_refs; i++) {
		gnts_ref_t r = o->refs[i];
		int rc = try_map(cl, r, why, sizeof(why), &size);

		if (rc == 1)
			printf("MAP ref=%u ok size=%zu\n", r, size);
		else if (rc == 0)
			printf("MAP ref=%u refused: %s\n", r, why);
		else
			printf("MAP ref=%u error: %s\n", r, why);
		fflush(stdout);
		if (in_list(o->ok, o->n_ok, r) && rc != 1)
			fail("MAP ref=%u: expected ok", r);
		if (in_list(o->refused, o->n_refused, r)) {
			if (rc != 0)
				fail("MAP ref=%u: expected refused", r);
			else if (!names_region(why, r))
				fail("MAP ref=%u: reason does not name the "
				     "region", r);
		}
	}
}

/* One raw MAP on @p fd; the reply must be ERROR without an fd. */
static void
raw_map(int sock, gnts_ref_t ref, const char *when)
{
	struct gnts_msg m;
	int fds[GNTS_MSG_FDS] = { -1, -1 }, fd, rc;

	gnts_msg_init(&m, GNTS_MSG_MAP);
	m.ref = ref;
	rc = gnts_msg_send(sock, &m, NULL, 0);
	if (rc == 0)
		rc = gnts_msg_recv(sock, &m, fds, 0);
	fd = fds[0];
	if (rc != 1) {
		printf("RAW ref=%u %s: no reply (%s)\n", ref, when,
		       rc == 0 ? "hang-up" : strerror(-rc));
		fail("RAW ref=%u: no reply", ref);
	} else if (m.type != GNTS_MSG_ERROR || fd >= 0) {
		printf("RAW ref=%u %s: GRANTED (type %u, fd %s)\n", ref, when,
		       m.type, fd >= 0 ? "received" : "none");
		fail("RAW ref=%u: got something", ref);
	} else {
		m.u.text[sizeof(m.u.text) - 1] = '\0';
		printf("RAW ref=%u %s: refused, no fd: %s\n", ref, when,
		       m.u.text);
	}
	gnts_msg_fds_close(fds);
	fflush(stdout);
}

static int
raw_connect(const struct opts *o, gnts_ref_t ref)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct timeval tv = { .tv_sec = 5 };
	int s;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", o->socket);
	s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (s < 0 || connect(s, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		printf("RAW ref=%u: cannot connect: %s\n", ref, strerror(errno));
		fail("RAW ref=%u: cannot connect", ref);
		if (s >= 0)
			close(s);
		return -1;
	}
	(void)setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return s;
}

/* MAP before ATTACH (refused, and the core hangs up), then on a new
 * connection ATTACH and MAP. */
static void
raw_check(const struct opts *o, gnts_ref_t ref)
{
	struct gnts_msg m;
	int s, rc;

	s = raw_connect(o, ref);
	if (s < 0)
		return;
	raw_map(s, ref, "unattached");
	rc = gnts_msg_recv(s, &m, NULL, 0);
	if (rc != 0) {
		printf("RAW ref=%u: connection kept after MAP before ATTACH\n",
		       ref);
		fail("RAW ref=%u: connection kept", ref);
	}
	close(s);
	s = raw_connect(o, ref);
	if (s < 0)
		return;
	gnts_msg_init(&m, GNTS_MSG_ATTACH);
	snprintf(m.u.req.name, sizeof(m.u.req.name), "%s-raw", o->name);
	snprintf(m.u.req.service, sizeof(m.u.req.service), "%s", o->service);
	snprintf(m.u.req.group, sizeof(m.u.req.group), "%s", o->group);
	rc = gnts_msg_send(s, &m, NULL, 0);
	if (rc == 0)
		rc = gnts_msg_recv(s, &m, NULL, 0);
	if (rc != 1 || m.type != GNTS_MSG_ATTACH_OK) {
		printf("RAW ref=%u: raw attach failed\n", ref);
		fail("RAW ref=%u: raw attach failed", ref);
	} else {
		raw_map(s, ref, "attached");
		gnts_msg_init(&m, GNTS_MSG_BYE);
		(void)gnts_msg_send(s, &m, NULL, 0);
	}
	close(s);
}

/* Keep asking for what must be refused until stdin closes or the core
 * lets go of us. */
static void
hold(struct gnts_client *cl, const struct opts *o)
{
	unsigned long attempts = 0, unexpected = 0;
	char why[GNTS_ERR_LEN], end[GNTS_ERR_LEN + 16] = "stdin-eof";
	struct pollfd p = { .fd = 0, .events = POLLIN };
	size_t size;
	double t0 = now_s();

	for (;;) {
		char buf[256];

		if (poll(&p, 1, 5) > 0) {
			if (read(0, buf, sizeof(buf)) <= 0)
				break;
		}
		if (!gnts_client_alive(cl, why, sizeof(why))) {
			snprintf(end, sizeof(end), "detached: %s", why);
			break;
		}
		if (now_s() - t0 > 120) {
			snprintf(end, sizeof(end), "timeout");
			break;
		}
		for (unsigned i = 0; i < o->n_refused; i++) {
			int rc = try_map(cl, o->refused[i], why, sizeof(why),
					 &size);

			attempts++;
			if (rc == 1) {
				unexpected++;
				fail("HOLD ref=%u: mapped while holding",
				     o->refused[i]);
			} else if (rc < 0) {
				/* The connection ended under us. */
				snprintf(end, sizeof(end), "detached: %s", why);
				goto out;
			}
		}
	}
out:
	printf("HOLD attempts=%lu unexpected=%lu end=%s\n", attempts,
	       unexpected, end);
	fflush(stdout);
}

int
main(int argc, char **argv)
{
	struct gnts_attach_req req;
	struct gnts_attach_rsp rsp;
	struct gnts_client *cl = NULL;
	char err[GNTS_ERR_LEN];
	struct opts o;
	int rc;

	if ((rc = parse(argc, argv, &o)) < 0)
		return xnv_nf_exit_status(rc);
	setvbuf(stdout, NULL, _IOLBF, 0);
	memset(&req, 0, sizeof(req));
	snprintf(req.name, sizeof(req.name), "%s", o.name);
	snprintf(req.service, sizeof(req.service), "%s", o.service);
	snprintf(req.group, sizeof(req.group), "%s", o.group);
	rc = gnts_client_attach(o.socket, &req, &rsp, &cl, err, sizeof(err));
	if (rc < 0) {
		printf("ATTACH refused: %s\n", err);
		if (o.expect_attach_refused) {
			printf("RESULT ok\n");
			return 0;
		}
		printf("RESULT FAIL: attach refused\n");
		return 1;
	}
	printf("ATTACH ok domain=%u service_id=%u ring_ref=%u pool_ref=%u "
	       "pool_bufs=%u\n", rsp.domid, rsp.service_id, rsp.ring_ref,
	       rsp.pool_ref, rsp.pool_bufs);
	if (o.expect_attach_refused)
		fail("ATTACH: expected refused");
	map_all(cl, &o);
	for (unsigned i = 0; i < o.n_raw; i++)
		raw_check(&o, o.raw[i]);
	printf("ATTEMPTS done\n");
	if (o.hold)
		hold(cl, &o);
	gnts_client_close(cl);
	if (failures) {
		printf("RESULT FAIL: %d expectation(s) did not hold\n",
		       failures);
		return 1;
	}
	printf("RESULT ok\n");
	return 0;
}

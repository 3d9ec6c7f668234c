/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * xnv-testnf: a test NF for the integration tests, built against libxnv
 * only.  libxnv options, then after `--` its own:
 *   --action next|drop|out:N|service:ID  verdict for every packet (next)
 *   --delay-us N   busy-wait N microseconds per packet (a slow replica)
 *   --flows FILE   count packets per flow; write FILE on exit and, after
 *                  SIGUSR1, at the next packet (FILE.tmp renamed), a line
 *                  per flow: PROTO SRC SPORT DST DPORT COUNT, PROTO being
 *                  tcp|udp (IPv4/IPv6 5-tuple), ipN (other IP protocol),
 *                  frag (IP fragment, ports 0) or eth-XXXX (not IP).
 *   --empty-drops N  first hand N empty buffers back: xnv_pkt_alloc() then
 *                  xnv_pkt_send(XNV_DROP) with length 0 (needs --alloc);
 *                  says "empty drops N" on stderr when done
 *   --drop-odd-sport  drop TCP/UDP packets whose source port is odd
 *                  (the others get --action): a verdict by content
 *   --loop run|epoll|burst  run: xnv_nf_run() (default); epoll: a loop of
 *                  its own, xnv_nf_poll() and, when idle, xnv_nf_arm() and
 *                  epoll_wait() on xnv_nf_fd() (the API an NF with its own
 *                  event loop uses); on exit "epoll waits W woken K" on
 *                  stderr (K: waits the doorbell ended); burst:
 *                  xnv_nf_run_burst(), the same verdicts written into the
 *                  verdict array; on exit "bursts B packets P largest L"
 * On exit: "xnv-testnf NAME: flows N packets P" on stderr.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>

#include <xnv/nf.h>

#define TABLE_SIZE (1u << 16)	/* distinct flows kept (power of two) */

struct flow {
	uint8_t used, ver, proto, frag;	/* ver: 4, 6, or 0 (not IP) */
	uint16_t sport, dport;		/* ethertype in sport when not IP */
	uint8_t src[16], dst[16];
	uint64_t count;
};

static struct {
	xnv_action_t action;
	uint64_t delay_ns;
	const char *flows_path;
	struct flow *table;
	unsigned n_flows, overflow;
	uint64_t packets;
	unsigned long empty_drops;
	int loop;		/* --loop: 'r'un, 'e'poll, 'b'urst */
	int drop_odd;		/* --drop-odd-sport */
	uint64_t bursts, burst_pkts;	/* --loop burst: calls, packets */
	unsigned largest;		/* --loop burst: most in one call */
} t = { .action = XNV_NEXT, .loop = 'r' };

static volatile sig_atomic_t dump_req;

static void on_usr1(int sig) { dump_req = sig; }

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Fill the key part of @p f from an Ethernet frame. */
static void
parse(const uint8_t *p, uint32_t len, struct flow *f)
{
	uint32_t off = 14, l4 = 0;
	uint16_t et;

	memset(f, 0, sizeof(*f));
	f->used = 1;
	if (len < off)
		return;
	et = (uint16_t)(p[12] << 8 | p[13]);
	if (et == 0x8100 && len >= off + 4) {
		et = (uint16_t)(p[16] << 8 | p[17]);
		off += 4;
	}
	f->sport = et;
	if (et == 0x0800 && len >= off + 20) {
		f->ver = 4;
		f->proto = p[off + 9];
		f->frag = ((p[off + 6] << 8 | p[off + 7]) & 0x3fff) != 0;
		memcpy(f->src, p + off + 12, 4);
		memcpy(f->dst, p + off + 16, 4);
		l4 = off + (p[off] & 0xfu) * 4u;
	} else if (et == 0x86dd && len >= off + 40) {
		f->ver = 6;
		f->proto = p[off + 6];
		f->frag = f->proto == 44;
		memcpy(f->src, p + off + 8, 16);
		memcpy(f->dst, p + off + 24, 16);
		l4 = off + 40;
	} else {
		return;
	}
	f->sport = 0;
	if (!f->frag && (f->proto == 6 || f->proto == 17) && len >= l4 + 4) {
		f->sport = (uint16_t)(p[l4] << 8 | p[l4 + 1]);
		f->dport = (uint16_t)(p[l4 + 2] << 8 | p[l4 + 3]);
	}
}

static void
count_flow(const struct flow *k)
{
	size_t keylen = offsetof(struct flow, count);
	const uint8_t *b = (const uint8_t *)k;
	uint32_t h = 2166136261u, i;

	for (i = 0; i < keylen; i++)
		h = (h ^ b[i]) * 16777619u;
	for (i = 0; i < TABLE_SIZE; i++, h++) {
		struct flow *f = &t.table[h & (TABLE_SIZE - 1)];

		if (!f->used) {
			*f = *k;
			t.n_flows++;
		} else if (memcmp(f, k, keylen) != 0) {
			continue;
		}
		f->count++;
		return;
	}
	t.overflow++;
}

static void
write_flows(void)
{
	char tmp[4096], src[INET6_ADDRSTRLEN], dst[INET6_ADDRSTRLEN], pr[16];
	FILE *out;
	unsigned i;

	snprintf(tmp, sizeof(tmp), "%s.tmp", t.flows_path);
	if ((out = fopen(tmp, "w")) == NULL) {
		perror(tmp);
		return;
	}
	for (i = 0; i < TABLE_SIZE; i++) {
		const struct flow *f = &t.table[i];
		int af = f->ver == 6 ? AF_INET6 : AF_INET;

		if (!f->used)
			continue;
		if (f->ver == 0) {
			fprintf(out, "eth-%04x - 0 - 0 %llu\n", f->sport,
				(unsigned long long)f->count);
			continue;
		}
		inet_ntop(af, f->src, src, sizeof(src));
		inet_ntop(af, f->dst, dst, sizeof(dst));
		snprintf(pr, sizeof(pr), f->frag ? "frag" : f->proto == 6 ?
			 "tcp" : f->proto == 17 ? "udp" : "ip%u", f->proto);
		fprintf(out, "%s %s %u %s %u %llu\n", pr, src, f->sport, dst,
			f->dport, (unsigned long long)f->count);
	}
	if (fclose(out) != 0 || rename(tmp, t.flows_path) != 0)
		perror(t.flows_path);
}

static xnv_action_t
handle(struct xnv_pkt *pkt, void *ctx)
{
	struct flow k;

	(void)ctx;
	t.packets++;
	if (t.table != NULL || t.drop_odd)
		parse(xnv_pkt_data(pkt), xnv_pkt_len(pkt), &k);
	if (t.table != NULL) {
		count_flow(&k);
		if (dump_req) {
			dump_req = 0;
			write_flows();
		}
	}
	for (uint64_t until = now_ns() + t.delay_ns; now_ns() < until;)
		;
	if (t.drop_odd && (k.proto == 6 || k.proto == 17) && !k.frag &&
	    (k.sport & 1))
		return XNV_DROP;
	return t.action;
}

/* --loop burst: handle()'s verdicts, written into the array. */
static void
handle_burst(struct xnv_pkt *pkts, xnv_action_t *verdicts, unsigned n,
	     void *ctx)
{
	unsigned i;

	t.bursts++;
	t.burst_pkts += n;
	if (n > t.largest)
		t.largest = n;
	for (i = 0; i < n; i++)
		verdicts[i] = handle(&pkts[i], ctx);
}

/* "PREFIX:N" -> N in *v; 0 if @p a is not that. */
static int
arg_num(const char *a, const char *prefix, unsigned long *v)
{
	size_t n = strlen(prefix);
	char *end;

	if (strncmp(a, prefix, n) != 0 || a[n] == '\0')
		return 0;
	*v = strtoul(a + n, &end, 10);
	return *end == '\0' && *v < 65536;
}

static const char own_usage[] = "NF options: --action "
	"next|drop|out:N|service:ID, --delay-us N, --flows FILE, "
	"--empty-drops N, --drop-odd-sport, --loop run|epoll|burst";

/* The options after "--": 0, -EAGAIN (-h / --help: said) or -EINVAL (a
 * usage error said in one line). */
static int
parse_opts(int argc, char **argv)
{
	unsigned long v;
	int i;

	for (i = 0; i < argc; i++)
		if (strcmp(argv[i], "--help") == 0 ||
		    strcmp(argv[i], "-h") == 0) {
			printf("usage: xnv-testnf [libxnv options] -- [NF "
			       "options]\n%s\n", own_usage);
			return -EAGAIN;
		}
	for (i = 0; i < argc; i += 2) {
		const char *o = argv[i], *a;
		char *end;

		if (strcmp(o, "--drop-odd-sport") == 0) {
			t.drop_odd = 1;
			i--;	/* no argument */
			continue;
		}
		if (i + 1 == argc)
			break;
		a = argv[i + 1];
		if (strcmp(o, "--flows") == 0)
			t.flows_path = a;
		else if (strcmp(o, "--empty-drops") == 0 &&
			 (v = strtoul(a, &end, 10), *a && !*end))
			t.empty_drops = v;
		else if (strcmp(o, "--delay-us") == 0 &&
			 (v = strtoul(a, &end, 10), *a && !*end))
			t.delay_ns = (uint64_t)v * 1000u;
		else if (strcmp(o, "--loop") == 0 &&
			 (strcmp(a, "run") == 0 || strcmp(a, "epoll") == 0 ||
			  strcmp(a, "burst") == 0))
			t.loop = a[0];
		else if (strcmp(o, "--action") == 0 && strcmp(a, "next") == 0)
			t.action = XNV_NEXT;
		else if (strcmp(o, "--action") == 0 && strcmp(a, "drop") == 0)
			t.action = XNV_DROP;
		else if (strcmp(o, "--action") == 0 && arg_num(a, "out:", &v))
			t.action = XNV_OUT(v);
		else if (strcmp(o, "--action") == 0 &&
			 arg_num(a, "service:", &v))
			t.action = XNV_TO_SERVICE(v);
		else
			break;
	}
	if (i == argc)
		return 0;
	fprintf(stderr, "xnv-testnf: bad option '%s' (%s)\n", argv[i],
		own_usage);
	return -EINVAL;
}

static volatile sig_atomic_t stop_loop;

static void
on_stop(int sig)
{
	(void)sig;
	stop_loop = 1;
}

/* --loop epoll: the NF's own event loop around xnv_nf_fd() (<xnv/nf.h>,
 * xnv_nf_arm()); 0, or -errno. */
static int
epoll_loop(struct xnv_nf *nf)
{
	struct epoll_event ev = { .events = EPOLLIN }, got;
	unsigned long waits = 0, woken = 0;
	int ep, fd = xnv_nf_fd(nf), rc = 0, n;

	if (fd < 0) {
		fprintf(stderr, "xnv-testnf: no doorbell: %s\n", strerror(-fd));
		return fd;
	}
	signal(SIGTERM, on_stop);	/* after libxnv's: ends epoll_wait */
	signal(SIGINT, on_stop);
	ep = epoll_create1(EPOLL_CLOEXEC);
	if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) < 0)
		return -errno;
	while (!stop_loop) {
		n = xnv_nf_poll(nf, handle, NULL);
		if (n < 0) {
			rc = n;
			break;
		}
		if (n == 0 && xnv_nf_arm(nf) == 1) {
			waits++;
			woken += epoll_wait(ep, &got, 1, 1000) == 1;
		}
	}
	close(ep);
	fprintf(stderr, "xnv-testnf %s: epoll waits %lu woken %lu\n",
		xnv_nf_name(nf), waits, woken);
	return rc;
}

/* Allocate and hand back t.empty_drops empty buffers; 0 or -errno. */
static int
empty_drops(struct xnv_nf *nf)
{
	struct xnv_pkt pkt;
	unsigned long done = 0;
	int rc;

	while (done < t.empty_drops) {
		if (xnv_pkt_alloc(nf, &pkt) == 0) {
			if ((rc = xnv_pkt_send(nf, &pkt, XNV_DROP)) < 0)
				return rc;
			done++;
		} else if ((rc = xnv_nf_poll(nf, handle, NULL)) < 0) {
			return rc;	/* pushes the drops, gets buffers */
		}
	}
	if ((rc = xnv_nf_flush(nf)) < 0)
		return rc;
	fprintf(stderr, "xnv-testnf %s: empty drops %lu\n", xnv_nf_name(nf),
		done);
	return 0;
}

int
main(int argc, char **argv)
{
	struct xnv_nf *nf;
	int dd = 1, rc;

	while (dd < argc && strcmp(argv[dd], "--") != 0)
		dd++;		/* our options follow "--": check them first */
	rc = dd < argc ? parse_opts(argc - dd - 1, argv + dd + 1) : 0;
	if (rc == 0 && (rc = xnv_nf_args(argc, argv)) > 0)
		rc = 0;		/* then libxnv's, still without a core */
	if (rc < 0)
		return xnv_nf_exit_status(rc);
	if (t.flows_path != NULL &&
	    (t.table = calloc(TABLE_SIZE, sizeof(*t.table))) == NULL)
		return 1;
	signal(SIGUSR1, on_usr1);
	rc = xnv_nf_init(argc, argv, &nf);
	if (rc < 0)
		return xnv_nf_exit_status(rc);
	rc = empty_drops(nf);
	if (rc == 0 && t.loop == 'e')
		rc = epoll_loop(nf);
	else if (rc == 0 && t.loop == 'b')
		rc = xnv_nf_run_burst(nf, handle_burst, NULL);
	else if (rc == 0)
		rc = xnv_nf_run(nf, handle, NULL);
	if (t.loop == 'b')
		fprintf(stderr, "xnv-testnf %s: bursts %llu packets %llu "
			"largest %u\n", xnv_nf_name(nf),
			(unsigned long long)t.bursts,
			(unsigned long long)t.burst_pkts, t.largest);
	if (t.table != NULL)
		write_flows();
	fprintf(stderr, "xnv-testnf %s: flows %u packets %llu%s\n",
		xnv_nf_name(nf), t.n_flows, (unsigned long long)t.packets,
		t.overflow ? " (flow table overflowed)" : "");
	xnv_nf_close(nf);
	return rc < 0 ? 1 : 0;
}

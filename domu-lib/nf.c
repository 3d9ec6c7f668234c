/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libxnv: attach, map, and the NF's polling loop.  See <xnv/nf.h>.
 *
 * The core is trusted by the NF (it is Dom0), but a descriptor that would
 * make the NF touch memory outside the pool is still refused here: a bug
 * in the core must not become a crash in every guest.
 */
#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <gntshare/attach.h>
#include <gntshare/host.h>
#include <gntshare/ring.h>

#include "xnv/nf.h"

#define BURST          32u
#define ALIVE_EVERY    1024u	/* busy bursts between core liveness checks */
#define IDLE_PAUSES    64u	/* empty polls spent in cpu pause */
#define IDLE_YIELDS    256u	/* ... then in sched_yield */
#define IDLE_SLEEP_MAX_US 200u	/* ... then sleeps doubling up to this */

struct xnv_nf {
	struct gnts_client *cl;
	struct gnts_attach_rsp att;
	char name[GNTS_ATTACH_NAME_LEN];
	char group[GNTS_ATTACH_NAME_LEN];
	struct gnts_ring_port rx, tx;
	void *ring_va;
	size_t ring_bytes;
	uint8_t *pool;
	size_t pool_bytes;
	int busy_poll;
	int quiet;
	volatile sig_atomic_t stop;
	struct xnv_nf_stats st;
};

static volatile sig_atomic_t xnv_signalled;

static void
on_signal(int sig)
{
	(void)sig;
	xnv_signalled = 1;
}

#define LOG(...) do { fprintf(stderr, "xnv: " __VA_ARGS__); \
		      fputc('\n', stderr); } while (0)

static void
usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s [libxnv options] [-- NF options]\n"
		"  --service NAME   service this NF provides (env XNV_SERVICE; required)\n"
		"  --group NAME     trust group (env XNV_GROUP; default \"0\")\n"
		"  --name NAME      instance name for logs (default SERVICE-PID)\n"
		"  --socket PATH    xnv-core socket (env XNV_SOCKET; default %s)\n"
		"  --busy-poll      never back off when idle\n"
		"  --quiet          no statistics line on exit\n"
		"  --help           this text\n", prog, GNTS_DEFAULT_SOCKET);
}

static int
copy_name(char *dst, const char *src, const char *what)
{
	if (src == NULL || src[0] == '\0') {
		LOG("%s must not be empty", what);
		return -EINVAL;
	}
	if (strlen(src) >= GNTS_ATTACH_NAME_LEN) {
		LOG("%s '%s' is longer than %u characters", what, src,
		    GNTS_ATTACH_NAME_LEN - 1);
		return -EINVAL;
	}
	strcpy(dst, src);
	return 0;
}

/* Parse options into @p req and @p nf; returns arguments consumed. */
static int
parse_args(int argc, char **argv, struct gnts_attach_req *req,
	   struct xnv_nf *nf, const char **sock)
{
	static const struct option opts[] = {
		{ "service", required_argument, NULL, 's' },
		{ "group", required_argument, NULL, 'g' },
		{ "name", required_argument, NULL, 'n' },
		{ "socket", required_argument, NULL, 'S' },
		{ "busy-poll", no_argument, NULL, 'b' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *service = getenv("XNV_SERVICE");
	const char *group = getenv("XNV_GROUP");
	const char *name = NULL;
	int c, end = argc, rc;

	/* Only look at arguments before "--": the rest is the NF's. */
	for (c = 1; c < argc; c++)
		if (strcmp(argv[c], "--") == 0) {
			end = c;
			break;
		}
	*sock = getenv("XNV_SOCKET");
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(end, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 's': service = optarg; break;
		case 'g': group = optarg; break;
		case 'n': name = optarg; break;
		case 'S': *sock = optarg; break;
		case 'b': nf->busy_poll = 1; break;
		case 'q': nf->quiet = 1; break;
		case 'h': usage(argv[0]); return -EAGAIN;
		default:
			LOG("unknown or incomplete option '%s' (see --help)",
			    argv[optind - 1]);
			return -EINVAL;
		}
	}
	if (optind < end) {
		LOG("unexpected argument '%s' (NF options go after --)",
		    argv[optind]);
		return -EINVAL;
	}
	if (service == NULL) {
		LOG("no service given: use --service NAME or XNV_SERVICE");
		return -EINVAL;
	}
	if ((rc = copy_name(req->service, service, "service")) < 0 ||
	    (rc = copy_name(req->group, group ? group : "0", "group")) < 0)
		return rc;
	if (name != NULL) {
		if ((rc = copy_name(req->name, name, "name")) < 0)
			return rc;
	} else {
		snprintf(req->name, sizeof(req->name), "%.20s-%d", service,
			 (int)getpid());
	}
	if (*sock == NULL)
		*sock = GNTS_DEFAULT_SOCKET;
	return end < argc ? end + 1 : end;
}

static int
map_regions(struct xnv_nf *nf)
{
	struct gnts_ring_port ports[GNTS_RING_COUNT];
	const struct gnts_attach_rsp *a = &nf->att;
	char err[GNTS_ERR_LEN];
	void *va;
	size_t sz;
	int rc;

	rc = gnts_client_map(nf->cl, a->ring_ref, 0, &nf->ring_va,
			     &nf->ring_bytes, err, sizeof(err));
	if (rc < 0) {
		LOG("%s: cannot map ring region: %s", nf->name, err);
		return rc;
	}
	rc = gnts_ring_region_attach(nf->ring_va, nf->ring_bytes,
				     a->ring_size, ports);
	if (rc < 0) {
		LOG("%s: ring region from the core is invalid (%s)", nf->name,
		    rc == -EPROTO ? "magic/version mismatch: core and libxnv "
		    "versions differ" : "bad geometry");
		return rc;
	}
	nf->rx = ports[GNTS_RING_RX];
	nf->tx = ports[GNTS_RING_TX];
	rc = gnts_client_map(nf->cl, a->pool_ref, 0, &va, &sz, err,
			     sizeof(err));
	if (rc < 0) {
		LOG("%s: cannot map the pool of group '%s': %s", nf->name,
		    nf->group, err);
		return rc;
	}
	nf->pool = va;
	nf->pool_bytes = sz;
	if ((uint64_t)a->pool_bufs * a->buf_size > sz || a->buf_size == 0) {
		LOG("%s: pool geometry from the core does not fit its region",
		    nf->name);
		return -EPROTO;
	}
	return 0;
}

int
xnv_nf_init(int argc, char **argv, struct xnv_nf **out)
{
	struct gnts_attach_req req;
	struct sigaction sa;
	char err[GNTS_ERR_LEN];
	struct xnv_nf *nf;
	const char *sock;
	int consumed, rc;

	nf = calloc(1, sizeof(*nf));
	if (nf == NULL)
		return -ENOMEM;
	memset(&req, 0, sizeof(req));
	consumed = parse_args(argc, argv, &req, nf, &sock);
	if (consumed < 0) {
		free(nf);
		return consumed;
	}
	snprintf(nf->name, sizeof(nf->name), "%s", req.name);
	snprintf(nf->group, sizeof(nf->group), "%s", req.group);
	rc = gnts_client_attach(sock, &req, &nf->att, &nf->cl, err,
				sizeof(err));
	if (rc < 0) {
		LOG("%s: attach refused: %s", nf->name, err);
		free(nf);
		return rc;
	}
	rc = map_regions(nf);
	if (rc < 0) {
		xnv_nf_close(nf);
		return rc;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	LOG("%s: attached as domain %u, service %s (id %u), group %s, "
	    "%u buffers of %u B, rings of %u", nf->name, nf->att.domid,
	    req.service, nf->att.service_id, req.group, nf->att.pool_bufs,
	    nf->att.buf_size, nf->att.ring_size);
	*out = nf;
	return consumed;
}

static void
idle_backoff(unsigned *idle)
{
	unsigned n = (*idle)++;

	if (n < IDLE_PAUSES) {
#if defined(__x86_64__) || defined(__i386__)
		__builtin_ia32_pause();
#endif
	} else if (n < IDLE_YIELDS) {
		sched_yield();
	} else {
		unsigned us = 1u << ((n - IDLE_YIELDS) / 16 < 8 ?
				      (n - IDLE_YIELDS) / 16 : 8);
		struct timespec ts = {
			.tv_nsec = (long)(us > IDLE_SLEEP_MAX_US ?
					  IDLE_SLEEP_MAX_US : us) * 1000,
		};
		nanosleep(&ts, NULL);
	}
}

static int
core_alive(struct xnv_nf *nf)
{
	char err[GNTS_ERR_LEN];

	if (gnts_client_alive(nf->cl, err, sizeof(err)))
		return 1;
	LOG("%s: detached by the core: %s", nf->name, err);
	return 0;
}

/* Turn one descriptor from the core into a packet; 0 if out of bounds. */
static inline int
desc_to_pkt(const struct xnv_nf *nf, const struct gnts_desc *d,
	    struct xnv_pkt *p)
{
	uint32_t bs = nf->att.buf_size;

	if (d->buf >= nf->att.pool_bufs || (uint32_t)d->off + d->len > bs)
		return 0;
	p->buf = nf->pool + (size_t)d->buf * bs;
	p->buf_size = bs;
	p->off = d->off;
	p->len = d->len;
	p->hash = d->hash;
	p->in_port = d->dst;
	return 1;
}

/* Push all of @p n descriptors to the tx ring, waiting for room. */
static int
push_all(struct xnv_nf *nf, struct gnts_desc *out, unsigned n)
{
	unsigned done = 0, idle = 0;

	while (done < n) {
		done += gnts_ring_enqueue_burst(&nf->tx, out + done, n - done);
		if (nf->tx.broken)
			return -EPROTO;
		if (done < n) {
			/* The core drains this ring continuously: wait with
			 * pause (and yield, unless --busy-poll, in case the
			 * core shares our CPU), never sleep. */
			if ((++idle & 1023u) == 0 && !core_alive(nf))
				return -ECONNRESET;
#if defined(__x86_64__) || defined(__i386__)
			__builtin_ia32_pause();
#endif
			if (!nf->busy_poll && idle > IDLE_PAUSES)
				sched_yield();
		}
	}
	return 0;
}

/* Return code of xnv_nf_run() once the core is gone. */
static int
gone_rc(const struct xnv_nf *nf)
{
	return gnts_client_gone_status(nf->cl) == -ESHUTDOWN ? 0 : -ECONNRESET;
}

int
xnv_nf_run(struct xnv_nf *nf, xnv_handler_t handler, void *ctx)
{
	struct gnts_desc in[BURST], out[BURST];
	unsigned idle = 0, bursts = 0, i, n;
	struct xnv_pkt p;
	int rc = 0;

	while (!nf->stop && !xnv_signalled) {
		n = gnts_ring_dequeue_burst(&nf->rx, in, BURST);
		if (nf->rx.broken) {
			LOG("%s: core's rx ring index is impossible", nf->name);
			rc = -EPROTO;
			break;
		}
		if (n == 0) {
			if (((idle & 255u) == 255u || idle >= IDLE_YIELDS) &&
			    !core_alive(nf)) {
				rc = gone_rc(nf);
				break;
			}
			if (!nf->busy_poll)
				idle_backoff(&idle);
			else
				idle++;
			continue;
		}
		idle = 0;
		nf->st.rx += n;
		for (i = 0; i < n; i++) {
			xnv_action_t a;

			out[i] = in[i];
			if (!desc_to_pkt(nf, &in[i], &p)) {
				nf->st.bad_rx++;
				out[i].action = XNV_ACT_DROP;
				continue;
			}
			a = handler(&p, ctx);
			out[i].off = (uint16_t)p.off;
			out[i].len = (uint16_t)p.len;
			out[i].action = (uint8_t)(a >> 16);
			out[i].dst = (uint16_t)a;
			out[i].flags = 0;
			if (out[i].action == XNV_ACT_DROP)
				nf->st.dropped++;
			else
				nf->st.tx++;
		}
		rc = push_all(nf, out, n);
		if (rc == -ECONNRESET)
			rc = gone_rc(nf);
		if (rc < 0 || gnts_client_gone_status(nf->cl) != 0)
			break;
		if ((++bursts & (ALIVE_EVERY - 1)) == 0 && !core_alive(nf)) {
			rc = gone_rc(nf);
			break;
		}
	}
	if (!nf->quiet)
		LOG("%s: stopped: rx %llu tx %llu dropped %llu", nf->name,
		    (unsigned long long)nf->st.rx,
		    (unsigned long long)nf->st.tx,
		    (unsigned long long)nf->st.dropped);
	return rc;
}

void
xnv_nf_stop(struct xnv_nf *nf)
{
	nf->stop = 1;
}

void
xnv_nf_close(struct xnv_nf *nf)
{
	if (nf == NULL)
		return;
	gnts_client_unmap(nf->pool, nf->pool_bytes);
	gnts_client_unmap(nf->ring_va, nf->ring_bytes);
	gnts_client_close(nf->cl);
	free(nf);
}

void
xnv_nf_get_stats(const struct xnv_nf *nf, struct xnv_nf_stats *st)
{
	*st = nf->st;
}

uint16_t
xnv_nf_service_id(const struct xnv_nf *nf)
{
	return (uint16_t)nf->att.service_id;
}

uint16_t
xnv_nf_port_count(const struct xnv_nf *nf)
{
	return (uint16_t)nf->att.n_ports;
}

const char *
xnv_nf_name(const struct xnv_nf *nf)
{
	return nf->name;
}

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
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "nf_pvt.h"

#ifndef XNV_VERSION
#error "XNV_VERSION: build with the Makefile (it passes -DXNV_VERSION)"
#endif

#define ATTACH_TIMEOUT_MS 10000u	/* xen: the core's answer */

volatile sig_atomic_t libxnv_signalled;

static void
on_signal(int sig)
{
	(void)sig;
	libxnv_signalled = 1;
}

/* The program's own name, for --version and usage errors. */
static const char *
prog_name(const char *argv0)
{
	const char *slash = strrchr(argv0, '/');

	return slash != NULL ? slash + 1 : argv0;
}

static void
usage(const char *prog)
{
	fprintf(stdout,
		"usage: %s [libxnv options] [-- NF options]\n"
		"  --service NAME   service this NF provides (env XNV_SERVICE; required\n"
		"                   in host mode; in a Xen domain its nfv_service)\n"
		"  --group NAME     trust group (env XNV_GROUP; default \"0\"; in a Xen\n"
		"                   domain not allowed: its nfv_trust_group)\n"
		"  --name NAME      instance name for logs (default SERVICE-PID; in a\n"
		"                   Xen domain not allowed: <domain name>.<device>)\n"
		"  --socket PATH    xnv-core socket (env XNV_SOCKET; default %s)\n"
		"  --backend B      auto (default), host (unix socket) or xen (XenStore\n"
		"                   + grant refs; auto picks xen in a Xen domain that\n"
		"                   has an xnv device) (env XNV_BACKEND)\n"
		"  --dev N          xen: the domain's xnv device to use (default: the\n"
		"                   first one not connected)\n"
		"  --attach-timeout S  xen: seconds to wait for the core's answer to\n"
		"                   an attach (env XNV_ATTACH_TIMEOUT; default 10)\n"
		"  --idle-sleep M   when idle: poll (never back off; = --busy-poll),\n"
		"                   adaptive (pause, yield, sleeps up to 200 us) or\n"
		"                   doorbell (default: adaptive, then sleep until the\n"
		"                   core kicks; polls if the core has no doorbells)\n"
		"                   (env XNV_IDLE_SLEEP)\n"
		"  --rt-priority N  run the NF's polling thread SCHED_FIFO at N (1..99):\n"
		"                   woken, it runs at once whatever shares its CPU;\n"
		"                   busy-polling, it keeps other tasks off it (env\n"
		"                   XNV_RT_PRIORITY; default: SCHED_OTHER)\n"
		"  --alloc N        keep N empty buffers at hand for packets the NF\n"
		"                   originates (xnv_pkt_alloc; env XNV_ALLOC; default 0;\n"
		"                   at most the core's ring_size)\n"
		"  --reattach       wait for xnv-core when none runs yet, or when it\n"
		"                   stops or dies, and attach again (env\n"
		"                   XNV_REATTACH=1; default: exit)\n"
		"  --quiet          no statistics line on exit\n"
		"  --version        print the version and exit\n"
		"  -h, --help       this text\n", prog, GNTS_DEFAULT_SOCKET);
	fflush(stdout);
}

void
libxnv_log(int level, const char *fmt, ...)
{
	char line[512];
	va_list ap;
	size_t n = gnts_log_stamp(level, line, sizeof(line));
	int k;

	k = snprintf(line + n, sizeof(line) - n, "xnv: ");
	n += k > 0 ? (size_t)k : 0;
	va_start(ap, fmt);
	k = vsnprintf(line + n, sizeof(line) - n - 1, fmt, ap);
	va_end(ap);
	n += k < 0 ? 0 : (size_t)k < sizeof(line) - n - 1 ? (size_t)k :
	     sizeof(line) - n - 2;
	line[n++] = '\n';
	/* One write: lines of several NF threads never mix. */
	(void)fwrite(line, 1, n, stderr);
}

const char *
xnv_version(void)
{
	return XNV_VERSION;
}

/* "xnv-forwarder (XenNetVM) 0.1.0" */
static void
print_version(const char *argv0)
{
	printf("%s (XenNetVM) %s\n", prog_name(argv0), xnv_version());
	fflush(stdout);
}

static int
copy_name(char *dst, const char *src, const char *what)
{
	if (src == NULL || src[0] == '\0') {
		USAGE("%s must not be empty", what);
		return -EINVAL;
	}
	if (strlen(src) >= GNTS_ATTACH_NAME_LEN) {
		USAGE("%s '%s' is longer than %u characters", what, src,
		    GNTS_ATTACH_NAME_LEN - 1);
		return -EINVAL;
	}
	strcpy(dst, src);
	return 0;
}

/* What the options say besides the request itself. */
struct attach_opts {
	const char *sock;
	const char *backend;
	const char *service, *group, *name, *alloc, *reattach, *idle;
	const char *timeout;
	const char *rt;		/* --rt-priority */
	int dev;
};

/* Defaults from the environment (options override them). */
static void
read_env(struct attach_opts *ao)
{
	memset(ao, 0, sizeof(*ao));
	ao->service = getenv("XNV_SERVICE");
	ao->group = getenv("XNV_GROUP");
	ao->alloc = getenv("XNV_ALLOC");
	ao->reattach = getenv("XNV_REATTACH");
	ao->idle = getenv("XNV_IDLE_SLEEP");
	ao->sock = getenv("XNV_SOCKET");
	ao->backend = getenv("XNV_BACKEND");
	ao->timeout = getenv("XNV_ATTACH_TIMEOUT");
	ao->rt = getenv("XNV_RT_PRIORITY");
	ao->dev = -1;
}

/* --attach-timeout: whole seconds, 1 to 3600, into @p ms. */
static int
parse_timeout(const char *arg, unsigned *ms)
{
	char *e;
	long v = strtol(arg, &e, 10);

	if (*arg == '\0' || *e != '\0' || v < 1 || v > 3600) {
		USAGE("--attach-timeout %s: expected seconds from 1 to 3600",
		      arg);
		return -EINVAL;
	}
	*ms = (unsigned)v * 1000u;
	return 0;
}

static int
parse_dev(const char *arg, int *dev)
{
	char *e;
	long v = strtol(arg, &e, 10);

	if (*arg == '\0' || *e != '\0' || v < 0 ||
	    v >= (long)GNTS_XEN_MAX_DEVS) {
		USAGE("--dev %s: expected a device number from 0 to %u", arg,
		    GNTS_XEN_MAX_DEVS - 1);
		return -EINVAL;
	}
	*dev = (int)v;
	return 0;
}

/* getopt over argv[0..end): the options before "--". */
static int
read_opts(int end, char **argv, struct xnv_nf *nf, struct attach_opts *ao)
{
	static const struct option opts[] = {
		{ "service", required_argument, NULL, 's' },
		{ "group", required_argument, NULL, 'g' },
		{ "name", required_argument, NULL, 'n' },
		{ "socket", required_argument, NULL, 'S' },
		{ "busy-poll", no_argument, NULL, 'b' },
		{ "idle-sleep", required_argument, NULL, 'I' },
		{ "alloc", required_argument, NULL, 'a' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "backend", required_argument, NULL, 'B' },
		{ "dev", required_argument, NULL, 'D' },
		{ "attach-timeout", required_argument, NULL, 'T' },
		{ "reattach", no_argument, NULL, 'r' },
		{ "rt-priority", required_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(end, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 's': ao->service = optarg; break;
		case 'g': ao->group = optarg; break;
		case 'n': ao->name = optarg; break;
		case 'S': ao->sock = optarg; break;
		case 'B': ao->backend = optarg; break;
		case 'D':
			if (parse_dev(optarg, &ao->dev) < 0)
				return -EINVAL;
			break;
		case 'T': ao->timeout = optarg; break;
		case 'b': ao->idle = "poll"; break;
		case 'I': ao->idle = optarg; break;
		case 'a': ao->alloc = optarg; break;
		case 'q': nf->quiet = 1; break;
		case 'r': ao->reattach = "1"; break;
		case 'P': ao->rt = optarg; break;
		case 'h': usage(argv[0]); return -EAGAIN;
		case 'V': print_version(argv[0]); return -EAGAIN;
		default:
			USAGE("%s: unknown or incomplete option '%s' (libxnv's "
			    "options: see --help; NF options go after --)",
			    prog_name(argv[0]), argv[optind - 1]);
			return -EINVAL;
		}
	}
	if (optind < end) {
		USAGE("%s: unexpected argument '%s' (NF options go after --)",
		    prog_name(argv[0]), argv[optind]);
		return -EINVAL;
	}
	return 0;
}

/* --backend: auto picks the first available one (xen in a Xen domain
 * that has an xnv device, else host). */
static const struct gnts_cli_ops *
resolve_backend(struct attach_opts *ao)
{
	const struct gnts_cli_ops *ops = gnts_cli_backend(ao->backend);

	if (ops == NULL)
		USAGE("--backend %s: expected auto or one of this libxnv's "
		    "backends (%s)", ao->backend, gnts_cli_kinds());
	else
		ao->backend = ops->name;
	return ops;
}

static int
parse_alloc(const char *alloc, struct gnts_attach_req *req)
{
	char *e;
	unsigned long v = strtoul(alloc, &e, 10);

	/* The core knows its ring size, and refuses more than that; no
	 * ring is larger than GNTS_RING_MAX. */
	if (*alloc == '\0' || *e != '\0' || v > GNTS_RING_MAX) {
		USAGE("--alloc %s: expected a number from 0 to %u (and no more "
		    "than xnv-core's ring_size)", alloc, GNTS_RING_MAX);
		return -EINVAL;
	}
	req->alloc_bufs = (uint32_t)v;
	return 0;
}

/* --rt-priority: a number, and a policy this process may take (tried
 * here, taken by the thread that runs the loop: io.c). */
static int
parse_rt(const char *rt, struct xnv_nf *nf)
{
	char err[160];
	int rc;

	if (rt == NULL)
		return 0;
	nf->rt_priority = gnts_rt_priority_parse(rt);
	if (nf->rt_priority < 0) {
		USAGE("--rt-priority %s: expected %d to %d", rt,
		      GNTS_RT_PRIO_MIN, GNTS_RT_PRIO_MAX);
		return -EINVAL;
	}
	rc = gnts_thread_rt_check(nf->rt_priority, err, sizeof(err));
	if (rc < 0)
		LOG(ERR, "--rt-priority %d: %s", nf->rt_priority, err);
	return rc;
}

static int
parse_idle(const char *idle, struct xnv_nf *nf)
{
	nf->idle = idle == NULL ? GNTS_IDLE_DOORBELL : gnts_idle_parse(idle);
	if (nf->idle >= 0)
		return 0;
	USAGE("--idle-sleep %s: expected poll, adaptive or doorbell", idle);
	return -EINVAL;
}

/* The request from the options; the backend decides what may be left
 * empty.  0 or -EINVAL (said why). */
static int
fill_req(const struct attach_opts *ao, const struct gnts_cli_ops *ops,
	 struct gnts_attach_req *req, struct xnv_nf *nf)
{
	const char *service = ao->service, *group = ao->group;
	int rc;

	if (ao->alloc != NULL && (rc = parse_alloc(ao->alloc, req)) < 0)
		return rc;
	if ((rc = parse_idle(ao->idle, nf)) < 0)
		return rc;
	if (ao->timeout != NULL &&
	    (rc = parse_timeout(ao->timeout, &nf->cfg.timeout_ms)) < 0)
		return rc;
	/* Doorbells whatever the policy: a polling NF still kicks a core
	 * that sleeps. */
	req->flags |= GNTS_REQ_BELL;
	if (ao->reattach != NULL) {
		if (strcmp(ao->reattach, "0") != 0 &&
		    strcmp(ao->reattach, "1") != 0) {
			USAGE("XNV_REATTACH=%s: expected 0 or 1", ao->reattach);
			return -EINVAL;
		}
		nf->reattach = ao->reattach[0] == '1';
	}
	if (ops->flags & GNTS_CLI_DOMAIN_NAMES) {
		/* The domain's config names group and instance (a guest
		 * cannot choose them); a service given is checked against
		 * it by the core. */
		if (group != NULL || ao->name != NULL) {
			USAGE("%s: in a Xen domain the %s comes from the "
			    "domain's config (%s), not the NF", group != NULL ?
			    "--group / XNV_GROUP" : "--name", group != NULL ?
			    "trust group" : "instance name", group != NULL ?
			    "nfv_trust_group" : "<domain name>.<device>");
			return -EINVAL;
		}
		service = service != NULL ? service : "";
		group = "";
	} else if (service == NULL) {
		USAGE("no service given: use --service NAME or XNV_SERVICE");
		return -EINVAL;
	} else if (group == NULL) {
		group = "0";
	}
	if ((service[0] && (rc = copy_name(req->service, service,
					    "service")) < 0) ||
	    (group[0] && (rc = copy_name(req->group, group, "group")) < 0))
		return rc;
	if (ao->name != NULL)
		return copy_name(req->name, ao->name, "name");
	if (!(ops->flags & GNTS_CLI_DOMAIN_NAMES))
		snprintf(req->name, sizeof(req->name), "%.20s-%d", service,
			 (int)getpid());
	return 0;
}

/* Parse options into @p req, @p nf and @p ao; returns arguments
 * consumed. */
static int
parse_args(int argc, char **argv, struct gnts_attach_req *req,
	   struct xnv_nf *nf, struct attach_opts *ao)
{
	const struct gnts_cli_ops *ops;
	int c, end = argc, rc;

	/* Only look at arguments before "--": the rest is the NF's. */
	for (c = 1; c < argc; c++)
		if (strcmp(argv[c], "--") == 0) {
			end = c;
			break;
		}
	read_env(ao);
	if ((rc = read_opts(end, argv, nf, ao)) < 0)
		return rc;
	if ((ops = resolve_backend(ao)) == NULL)
		return -EINVAL;
	if ((rc = fill_req(ao, ops, req, nf)) < 0 ||
	    (rc = parse_rt(ao->rt, nf)) < 0)
		return rc;
	if (ao->sock == NULL)
		ao->sock = GNTS_DEFAULT_SOCKET;
	return end < argc ? end + 1 : end;
}

int
libxnv_map(struct xnv_nf *nf)
{
	struct gnts_ring_port ports[GNTS_RING_COUNT];
	const struct gnts_attach_rsp *a = &nf->att;
	char err[GNTS_ERR_LEN];
	void *va;
	size_t sz;
	int rc;

	rc = gnts_cli_map(nf->cli, a->ring_ref, &nf->ring_va, &nf->ring_bytes, err,
		     sizeof(err));
	if (rc < 0) {
		LOG(ERR, "%s: cannot map ring region: %s", nf->name, err);
		return rc;
	}
	rc = gnts_ring_region_attach(nf->ring_va, nf->ring_bytes,
				     a->ring_size, ports);
	if (rc < 0) {
		LOG(ERR, "%s: ring region from the core is invalid (%s)",
		    nf->name, rc == -EPROTO ? "magic/version mismatch: core "
		    "and libxnv versions differ" : "bad geometry");
		return rc;
	}
	nf->rx = ports[GNTS_RING_RX];
	nf->tx = ports[GNTS_RING_TX];
	nf->free = ports[GNTS_RING_FREE];
	nf->ctl = gnts_ring_region_ctl(nf->ring_va);
	/* Our doorbell end (this attach's): tell the core we kick it. */
	nf->bell = gnts_cli_bell(nf->cli);
	nf->armed = 0;
	nf->unacked = 0;
	if (nf->bell != NULL)
		gnts_ring_kicks_set(&nf->tx);
	libxnv_stats_publish(nf);
	rc = gnts_cli_map(nf->cli, a->pool_ref, &va, &sz, err, sizeof(err));
	if (rc < 0) {
		LOG(ERR, "%s: cannot map the pool of group '%s': %s", nf->name,
		    nf->group, err);
		return rc;
	}
	nf->pool = va;
	nf->pool_bytes = sz;
	if ((uint64_t)a->pool_bufs * a->buf_size > sz || a->buf_size == 0) {
		LOG(ERR, "%s: pool geometry from the core does not fit its "
		    "region", nf->name);
		return -EPROTO;
	}
	return 0;
}

int
xnv_nf_args(int argc, char **argv)
{
	struct gnts_attach_req req;
	struct attach_opts ao;
	struct xnv_nf nf;

	memset(&req, 0, sizeof(req));
	memset(&nf, 0, sizeof(nf));
	return parse_args(argc, argv, &req, &nf, &ao);
}

int
xnv_nf_init(int argc, char **argv, struct xnv_nf **out)
{
	struct gnts_attach_req req;
	struct sigaction sa;
	char err[GNTS_ERR_LEN];
	struct xnv_nf *nf;
	struct attach_opts ao;
	int consumed, rc;

	nf = calloc(1, sizeof(*nf));
	if (nf == NULL)
		return -ENOMEM;
	memset(&req, 0, sizeof(req));
	nf->cfg.timeout_ms = ATTACH_TIMEOUT_MS;
	consumed = parse_args(argc, argv, &req, nf, &ao);
	if (consumed < 0) {
		free(nf);
		return consumed;
	}
	snprintf(nf->name, sizeof(nf->name), "%s", req.name);
	snprintf(nf->group, sizeof(nf->group), "%s", req.group);
	snprintf(nf->sock, sizeof(nf->sock), "%s", ao.sock);
	nf->backend = ao.backend;	/* a static string of the backend */
	nf->cfg.socket = nf->sock;
	nf->cfg.dev = ao.dev;
	nf->req = req;
	rc = gnts_cli_attach(nf->backend, &nf->cfg, &nf->req, &nf->att,
			     &nf->cli, err, sizeof(err));
	if (rc == -EHOSTDOWN && nf->reattach) {
		/* --reattach waits for the first core as for a later one. */
		LOG(INFO, "%s: --reattach: waiting for xnv-core at %s", nf->name,
		    nf->sock);
		rc = libxnv_wait_core(nf, err, sizeof(err));
	}
	req = nf->req;
	snprintf(nf->name, sizeof(nf->name), "%s", req.name);
	snprintf(nf->group, sizeof(nf->group), "%s", req.group);
	if (rc < 0) {
		/* No core at all is not a refusal; and -EINVAL is kept for
		 * bad options (a usage error). */
		LOG(ERR, "%s: %s%s", nf->name[0] ? nf->name : "NF (Xen domain)",
		    rc == -EHOSTDOWN || rc == -EINTR ? "" : "attach refused: ",
		    rc == -EINTR ? "stopped while waiting for xnv-core" : err);
		free(nf);
		return rc == -EINVAL ? -EPERM : rc;
	}
	rc = libxnv_map(nf);
	if (rc < 0) {
		xnv_nf_close(nf);
		return rc;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	LOG(INFO, "%s: attached as domain %u, service %s (id %u), group %s, "
	    "%u buffers of %u B, rings of %u", nf->name, nf->att.domid,
	    req.service, nf->att.service_id, req.group, nf->att.pool_bufs,
	    nf->att.buf_size, nf->att.ring_size);
	*out = nf;
	return consumed;
}

void
xnv_nf_close(struct xnv_nf *nf)
{
	if (nf == NULL)
		return;
	if (nf->cli != NULL) {
		gnts_cli_unmap(nf->cli, nf->pool, nf->pool_bytes);
		gnts_cli_unmap(nf->cli, nf->ring_va, nf->ring_bytes);
		gnts_cli_close(nf->cli);
	}
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

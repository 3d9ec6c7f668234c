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

#include "nf_pvt.h"

volatile sig_atomic_t xnv_signalled;

static void
on_signal(int sig)
{
	(void)sig;
	xnv_signalled = 1;
}

static void
usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s [libxnv options] [-- NF options]\n"
		"  --service NAME   service this NF provides (env XNV_SERVICE; required\n"
		"                   in host mode; in a Xen domain its nfv_service)\n"
		"  --group NAME     trust group (env XNV_GROUP; default \"0\"; in a Xen\n"
		"                   domain its nfv_trust_group)\n"
		"  --name NAME      instance name for logs (default SERVICE-PID)\n"
		"  --socket PATH    xnv-core socket (env XNV_SOCKET; default %s)\n"
		"  --backend B      auto (default), host (unix socket) or xen (XenStore\n"
		"                   + grant refs; auto picks xen in a Xen domain that\n"
		"                   has an xnv device) (env XNV_BACKEND)\n"
		"  --dev N          xen: the domain's xnv device to use (default: the\n"
		"                   first one not connected)\n"
		"  --busy-poll      never back off when idle\n"
		"  --alloc N        keep N empty buffers at hand for packets the NF\n"
		"                   originates (xnv_pkt_alloc; env XNV_ALLOC; default 0)\n"
		"  --reattach       when xnv-core stops or dies, wait for it and attach\n"
		"                   again (env XNV_REATTACH=1; default: exit)\n"
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
struct attach_opts {
	const char *sock;
	const char *backend;
	int dev;
};

static int
parse_args(int argc, char **argv, struct gnts_attach_req *req,
	   struct xnv_nf *nf, struct attach_opts *ao)
{
	static const struct option opts[] = {
		{ "service", required_argument, NULL, 's' },
		{ "group", required_argument, NULL, 'g' },
		{ "name", required_argument, NULL, 'n' },
		{ "socket", required_argument, NULL, 'S' },
		{ "busy-poll", no_argument, NULL, 'b' },
		{ "alloc", required_argument, NULL, 'a' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "backend", required_argument, NULL, 'B' },
		{ "dev", required_argument, NULL, 'D' },
		{ "reattach", no_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *service = getenv("XNV_SERVICE");
	const char *group = getenv("XNV_GROUP");
	const char *name = NULL, *alloc = getenv("XNV_ALLOC");
	const char *reattach = getenv("XNV_REATTACH");
	int c, end = argc, rc;

	/* Only look at arguments before "--": the rest is the NF's. */
	for (c = 1; c < argc; c++)
		if (strcmp(argv[c], "--") == 0) {
			end = c;
			break;
		}
	ao->sock = getenv("XNV_SOCKET");
	ao->backend = getenv("XNV_BACKEND");
	ao->dev = -1;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(end, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 's': service = optarg; break;
		case 'g': group = optarg; break;
		case 'n': name = optarg; break;
		case 'S': ao->sock = optarg; break;
		case 'B': ao->backend = optarg; break;
		case 'D': {
			char *e;
			long v = strtol(optarg, &e, 10);

			if (*optarg == '\0' || *e != '\0' || v < 0 ||
			    v >= (long)GNTS_XEN_MAX_DEVS) {
				LOG("--dev %s: expected a device number from 0 "
				    "to %u", optarg, GNTS_XEN_MAX_DEVS - 1);
				return -EINVAL;
			}
			ao->dev = (int)v;
			break;
		}
		case 'b': nf->busy_poll = 1; break;
		case 'a': alloc = optarg; break;
		case 'q': nf->quiet = 1; break;
		case 'r': reattach = "1"; break;
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
	if (alloc != NULL) {
		char *e;
		unsigned long v = strtoul(alloc, &e, 10);

		if (*alloc == '\0' || *e != '\0' || v > GNTS_RING_MAX) {
			LOG("--alloc %s: expected a number from 0 to %u", alloc,
			    GNTS_RING_MAX);
			return -EINVAL;
		}
		req->alloc_bufs = (uint32_t)v;
	}
	if (reattach != NULL) {
		if (strcmp(reattach, "0") != 0 && strcmp(reattach, "1") != 0) {
			LOG("XNV_REATTACH=%s: expected 0 or 1", reattach);
			return -EINVAL;
		}
		nf->reattach = reattach[0] == '1';
	}
	if (ao->backend == NULL || strcmp(ao->backend, "auto") == 0)
		ao->backend = gnts_xen_client_available() ? "xen" : "host";
	if (strcmp(ao->backend, "host") != 0 &&
	    strcmp(ao->backend, "xen") != 0) {
		LOG("--backend %s: expected auto, host or xen", ao->backend);
		return -EINVAL;
	}
	if (strcmp(ao->backend, "xen") == 0) {
		/* The domain's config names service and group; given ones
		 * are checked against it by the core. */
		if (service == NULL)
			service = "";
		if (group == NULL)
			group = "";
	} else if (service == NULL) {
		LOG("no service given: use --service NAME or XNV_SERVICE");
		return -EINVAL;
	}
	if ((service[0] && (rc = copy_name(req->service, service,
					    "service")) < 0) ||
	    (group == NULL && (rc = copy_name(req->group, "0", "group")) < 0) ||
	    (group != NULL && group[0] &&
	     (rc = copy_name(req->group, group, "group")) < 0))
		return rc;
	if (name != NULL) {
		if ((rc = copy_name(req->name, name, "name")) < 0)
			return rc;
	} else if (strcmp(ao->backend, "host") == 0) {
		snprintf(req->name, sizeof(req->name), "%.20s-%d", service,
			 (int)getpid());
	}	/* xen: the core names it <domain>.<device> */
	if (ao->sock == NULL)
		ao->sock = GNTS_DEFAULT_SOCKET;
	return end < argc ? end + 1 : end;
}

static int
map_one(struct xnv_nf *nf, gnts_ref_t ref, void **va, size_t *sz, char *err,
	size_t errlen)
{
	if (nf->xc != NULL)
		return gnts_xen_client_map(nf->xc, ref, va, sz, err, errlen);
	return gnts_client_map(nf->cl, ref, 0, va, sz, err, errlen);
}

static void
unmap_one(struct xnv_nf *nf, void *va, size_t sz)
{
	if (nf->xc != NULL)
		gnts_xen_client_unmap(nf->xc, va, sz);
	else
		gnts_client_unmap(va, sz);
}

int
xnv_nf_map(struct xnv_nf *nf)
{
	struct gnts_ring_port ports[GNTS_RING_COUNT];
	const struct gnts_attach_rsp *a = &nf->att;
	char err[GNTS_ERR_LEN];
	void *va;
	size_t sz;
	int rc;

	rc = map_one(nf, a->ring_ref, &nf->ring_va, &nf->ring_bytes, err,
		     sizeof(err));
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
	nf->free = ports[GNTS_RING_FREE];
	nf->ctl = gnts_ring_region_ctl(nf->ring_va);
	rc = map_one(nf, a->pool_ref, &va, &sz, err, sizeof(err));
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
	struct attach_opts ao;
	int consumed, rc;

	nf = calloc(1, sizeof(*nf));
	if (nf == NULL)
		return -ENOMEM;
	memset(&req, 0, sizeof(req));
	consumed = parse_args(argc, argv, &req, nf, &ao);
	if (consumed < 0) {
		free(nf);
		return consumed;
	}
	snprintf(nf->name, sizeof(nf->name), "%s", req.name);
	snprintf(nf->group, sizeof(nf->group), "%s", req.group);
	if (strcmp(ao.backend, "xen") == 0)
		rc = gnts_xen_client_attach(ao.dev, &req, 10000, &nf->att,
					    req.name, req.service, req.group,
					    &nf->xc, err, sizeof(err));
	else
		rc = gnts_client_attach(ao.sock, &req, &nf->att, &nf->cl, err,
					sizeof(err));
	snprintf(nf->name, sizeof(nf->name), "%s", req.name);
	snprintf(nf->sock, sizeof(nf->sock), "%s", ao.sock);
	nf->req = req;
	snprintf(nf->group, sizeof(nf->group), "%s", req.group);
	if (rc < 0) {
		LOG("%s: attach refused: %s", nf->name, err);
		free(nf);
		return rc;
	}
	rc = xnv_nf_map(nf);
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

void
xnv_nf_close(struct xnv_nf *nf)
{
	if (nf == NULL)
		return;
	unmap_one(nf, nf->pool, nf->pool_bytes);
	unmap_one(nf, nf->ring_va, nf->ring_bytes);
	gnts_client_close(nf->cl);
	gnts_xen_client_close(nf->xc);
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

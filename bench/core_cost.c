/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * core-cost: what xnv-core's own data path costs each packet, on one
 * thread, away from the scheduler: the core's objects (dom0-core) set up
 * as xnv-core sets them up (pools, net_null ports, chains, an NF attached
 * through xnv_rec_attach() with its ring region and doorbell), and the
 * main loop's data-path calls (xnv_rx_port(), xnv_rx_nf()) run in passes.
 *
 *   core-cost [EAL args] -- MODE [ROUNDS]
 *
 *   core  net_null0 (64 B) -> out (net_null1): port I/O and steering
 *   nf    net_null0 (64 B) -> fwd -> out, fwd a forwarder NF played in
 *         this process between two passes: it takes what its rx ring
 *         holds and hands it back with XNV_NEXT, untouched, as
 *         xnv-forwarder does (its work is outside what is timed)
 *
 * The command line splits as xnv-core's does (dom0-core/eal_args.h; the
 * same memory defaults).  Exit status (xnv_nf_exit_status(), as the NFs):
 * 0, or after -h / --help; 2 for a usage error (one line); 1 for any
 * other error.
 *
 * Prints the packets the core moved and the best (lowest) and median ns
 * per packet of the core's calls over ROUNDS rounds (default 200) of
 * 2^10 passes, after one round not counted: the best round is one
 * nothing interrupted.  Both sides run on one CPU, so the rings' lines
 * never cross between CPUs as they do between xnv-core and a real NF:
 * the figure is the core's instructions and its own misses, not the
 * ring transfers.  Under `valgrind --tool=callgrind
 * --toggle-collect=xnv_rx_port --toggle-collect=xnv_rx_nf` the
 * instructions counted over the packets printed are the core's
 * instructions per packet, the same from run to run (bench/README.md).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ethdev.h>

#include <gntshare/backend.h>
#include <xnv/nf.h>

#include "core.h"
#include "doorbell.h"
#include "bench_args.h"
#include "eal_args.h"

#define PASSES (1u << 10)
#define MAX_ROUNDS 100000u
#define NF_BURST 32u		/* libxnv moves 32 */
#define NF_DOM 1000000u		/* the played NF's peer id: no connection */

int xnv_logtype;	/* the core's (main.c): its log lines go there */

static const char *const configs[][2] = {
	{ "core", "[port in]\ndev = net_null0,size=64\nchain = out\n"
		  "[port out]\ndev = net_null1\n" },
	{ "nf", "[port in]\ndev = net_null0,size=64\nchain = fwd -> out\n"
		"[port out]\ndev = net_null1\n[service fwd]\n" },
};

/* The NF this process plays: its side of the rings, its doorbell end. */
struct played_nf {
	struct gnts_ring_port ring[GNTS_RING_COUNT];
	struct gnts_bell *core_bell;
	int fds[2];		/* the NF's ends of the doorbells (unused) */
};

static void
usage(FILE *f)
{
	fprintf(f, "usage: core-cost [EAL args] -- MODE [ROUNDS]\n"
		"  MODE    core: net_null0 -> out; nf: net_null0 -> fwd -> "
		"out, one forwarder\n"
		"          played in this process\n"
		"  ROUNDS  rounds of %u passes of the core's loop, the best "
		"and the median\n"
		"          printed (default 200)\n"
		"Exit status: 0, 2 for a usage error, 1 for any other error.\n",
		PASSES);
}

/* The args after "--": 0, -EAGAIN (-h / --help said) or -EINVAL (a
 * usage error said in one line).  *@p mode: index in configs[]. */
static int
parse_args(int argc, char **argv, unsigned *mode, unsigned *rounds)
{
	int rc = bench_no_options("core-cost", argc, argv, usage,
				  "EAL args go before '--'");

	if (rc != 0)
		return rc;
	if (argc < 2 || argc > 3) {
		fprintf(stderr, "core-cost: expected MODE [ROUNDS] after '--' "
			"(see --help)\n");
		return -EINVAL;
	}
	for (*mode = 0; *mode < RTE_DIM(configs); (*mode)++)
		if (strcmp(argv[1], configs[*mode][0]) == 0)
			break;
	if (*mode == RTE_DIM(configs)) {
		fprintf(stderr, "core-cost: MODE %s: expected core or nf\n",
			argv[1]);
		return -EINVAL;
	}
	if (argc == 3)
		return bench_rounds("core-cost", argv[2], MAX_ROUNDS, rounds);
	return 0;
}

/* The config of @p mode read from a file in @p dir, as xnv-core reads
 * its own; its NF socket there too.  0, or 1 after a line on stderr. */
static int
load_config(struct xnv_core *c, unsigned mode, const char *dir)
{
	char path[256], err[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/core.ini", dir);
	f = fopen(path, "w");
	if (f == NULL || fputs(configs[mode][1], f) < 0 || fclose(f) != 0) {
		fprintf(stderr, "core-cost: %s: %s\n", path, strerror(errno));
		return 1;
	}
	if (xnv_config_load(path, &c->cfg, err, sizeof(err)) < 0) {
		fprintf(stderr, "core-cost: %s\n", err);
		return 1;
	}
	unlink(path);
	snprintf(c->cfg.socket, sizeof(c->cfg.socket), "%s/xnv.sock", dir);
	return 0;
}

/* What main.c's setup() does for this config: services, chains, pools,
 * ports, the NF server (the attach callbacks need it), rx gates. */
static int
setup(struct xnv_core *c, char *err, size_t errlen)
{
	static const struct gnts_srv_cb cb = { .check = xnv_rec_check };
	const struct gnts_srv_cfg scfg = { .socket = c->cfg.socket,
					   .cb = &cb, .ctx = c };
	uint16_t i;
	int rc;

	c->tsc_hz = rte_get_tsc_hz();
	c->start_tsc = rte_rdtsc();
	c->stall_tsc = c->cfg.stall_timeout_ms * c->tsc_hz / 1000;
	c->idle = GNTS_IDLE_POLL;
	xnv_services_init(c);
	c->spill_ring_used = (uint32_t)((uint64_t)c->cfg.ring_size *
					c->cfg.spill_pct / 100);
	for (i = 0; i < c->cfg.n_ports; i++)
		c->port_chain[i] = (uint16_t)xnv_chain_new(c,
							   &c->cfg.ports[i].chain);
	if ((rc = xnv_workers_init(c)) < 0) {
		snprintf(err, errlen, "no memory for the counters");
		return rc;
	}
	if ((rc = xnv_bells_open(c)) < 0) {
		snprintf(err, errlen, "epoll: %s", strerror(-rc));
		return rc;
	}
	for (i = 0; i < c->cfg.n_groups; i++)
		if ((rc = xnv_pool_create(c, i, err, errlen)) < 0)
			return rc;
	for (i = 0; i < c->cfg.n_ports; i++)
		if ((rc = xnv_port_open(c, i, err, errlen)) < 0)
			return rc;
	if ((rc = gnts_srv_open("host", &scfg, &c->srv, err, errlen)) < 0)
		return rc;
	xnv_dom_setup(c);
	xnv_update_rx_gates(c);
	return 0;
}

/* One forwarder for service 0, attached as the host backend would attach
 * it (its doorbell pair included), its rings mapped on our side. */
static int
attach_nf(struct xnv_core *c, struct played_nf *p, char *err, size_t errlen)
{
	struct gnts_attach_req req;
	struct gnts_attach_rsp rsp;
	struct gnts_peer_cred cred;
	struct xnv_nfrec *nf;
	int rc;

	memset(&req, 0, sizeof(req));
	memset(&cred, 0, sizeof(cred));
	snprintf(req.name, sizeof(req.name), "fwd-played");
	snprintf(req.service, sizeof(req.service), "%s",
		 c->cfg.services[0].name);
	snprintf(req.group, sizeof(req.group), "%s", c->cfg.groups[0].name);
	rc = gnts_bell_host_pair(&p->core_bell, p->fds, 1);
	if (rc < 0) {
		snprintf(err, errlen, "doorbell pair: %s", strerror(-rc));
		return rc;
	}
	rc = xnv_rec_attach(c, NF_DOM, &cred, &req, p->core_bell, &rsp, err,
			    errlen);
	if (rc < 0)
		return rc;
	nf = &c->nfs[rsp.nf_id];
	return gnts_ring_region_attach(nf->ring_region->va,
				       nf->ring_region->size, rsp.ring_size,
				       p->ring);
}

/* The played forwarder: everything in its rx ring back on its tx ring
 * with XNV_NEXT, in bursts of NF_BURST, as far as the tx ring has room. */
static void
forward(struct played_nf *p)
{
	struct gnts_ring_port *rx = &p->ring[GNTS_RING_RX];
	struct gnts_ring_port *tx = &p->ring[GNTS_RING_TX];
	struct gnts_desc d[NF_BURST];
	unsigned n, i, room;

	for (;;) {
		room = tx->size - gnts_ring_count(tx, 1);
		n = gnts_ring_dequeue_burst(rx, d, RTE_MIN(room, NF_BURST));
		if (n == 0)
			return;
		for (i = 0; i < n; i++) {
			d[i].action = GNTS_ACT_NEXT;
			d[i].flags = 0;
		}
		(void)gnts_ring_enqueue_burst(tx, d, n);
	}
}

static uint64_t
sent(struct xnv_core *c)
{
	uint64_t n = 0;
	uint16_t i;

	xnv_workers_fold(c);
	for (i = 0; i < c->cfg.n_ports; i++)
		n += c->ports[i].tx;
	return n;
}

/* One round of PASSES passes: the core's data-path calls timed, the
 * played NF between them.  @return the core's cycles. */
static uint64_t
round_run(struct xnv_core *c, struct played_nf *p)
{
	uint64_t cycles = 0;
	unsigned k;
	uint16_t i;

	for (k = 0; k < PASSES; k++) {
		uint64_t now = rte_rdtsc();

		for (i = 0; i < c->cfg.n_ports; i++)
			(void)xnv_rx_port(c, i, now);
		for (i = 0; i < c->n_active; i++)
			(void)xnv_rx_nf(c, &c->nfs[c->active[i]], now);
		cycles += rte_rdtsc() - now;
		if (p != NULL)
			forward(p);
	}
	return cycles;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Rounds of the loop; the line on stdout.  0, or 1 after a line on
 * stderr. */
static int
measure(struct xnv_core *c, unsigned mode, struct played_nf *p,
	unsigned rounds)
{
	double *ns = calloc(rounds, sizeof(*ns));
	uint64_t pkts = 0, n0;
	unsigned r;

	if (ns == NULL) {
		fprintf(stderr, "core-cost: out of memory\n");
		return 1;
	}
	(void)round_run(c, p);		/* warm-up, not counted */
	for (r = 0; r < rounds; r++) {
		uint64_t cyc;

		n0 = sent(c);
		cyc = round_run(c, p);
		n0 = sent(c) - n0;
		pkts += n0;
		ns[r] = n0 ? (double)cyc * 1e9 / c->tsc_hz / n0 : 1e9;
	}
	if (pkts == 0) {
		fprintf(stderr, "core-cost: no packet went through\n");
		free(ns);
		return 1;
	}
	qsort(ns, rounds, sizeof(*ns), cmp_double);
	printf("core-cost: %s: %" PRIu64 " packets (%" PRIu64 " with the "
	       "warm-up): %.2f ns per packet (best of %u rounds), %.2f "
	       "median\n", configs[mode][0], pkts, sent(c), ns[0], rounds,
	       ns[rounds / 2]);
	free(ns);
	return 0;
}

/* The core's side torn down as at its exit; then the played NF's end. */
static void
teardown(struct xnv_core *c, struct played_nf *p)
{
	uint16_t i;

	c->shutting_down = 1;
	for (i = 0; i < XNV_MAX_NFS; i++) {
		xnv_rec_detach(c, &c->nfs[i], "core-cost is done");
		xnv_rec_finish(c, &c->nfs[i]);
		xnv_free_parked(&c->nfs[i].pend);
	}
	if (c->srv != NULL)
		gnts_srv_close(c->srv);
	for (i = 0; i < c->cfg.n_ports; i++) {
		xnv_free_parked(&c->ports[i].pend);
		xnv_port_close(c, i);
	}
	for (i = 0; i < XNV_MAX_POOLS; i++)
		xnv_pool_destroy(&c->pools[i]);
	xnv_bells_close(c);
	xnv_config_free(&c->cfg);
	gnts_bell_close(p->core_bell);
	for (int i = 0; i < 2; i++)
		if (p->fds[i] >= 0)
			close(p->fds[i]);
}

static int
run(struct xnv_core *c, unsigned mode, unsigned rounds)
{
	struct played_nf nf = { .fds = { -1, -1 } };
	char err[512] = "";
	int rc;

	rc = setup(c, err, sizeof(err));
	if (rc == 0 && c->cfg.n_services > 0)
		rc = attach_nf(c, &nf, err, sizeof(err));
	if (rc < 0)
		fprintf(stderr, "core-cost: %s\n", err[0] ? err : strerror(-rc));
	else
		rc = measure(c, mode, c->cfg.n_services > 0 ? &nf : NULL,
			     rounds);
	teardown(c, &nf);
	return rc != 0;
}

int
main(int argc, char **argv)
{
	char dir[] = "/tmp/core-cost.XXXXXX";
	struct xnv_core *c;
	unsigned mode = 0, rounds = 200;
	char **eal_argv, **app_argv;
	int eal_argc, app_argc, rc;

	if (xnv_split_args(argc, argv, &eal_argc, &eal_argv, &app_argc,
			   &app_argv) < 0)
		return 1;
	rc = parse_args(app_argc, app_argv, &mode, &rounds);
	if (rc < 0) {
		free(eal_argv);
		return xnv_nf_exit_status(rc);
	}
	c = calloc(1, sizeof(*c));
	if (c == NULL || mkdtemp(dir) == NULL) {
		fprintf(stderr, "core-cost: %s\n", strerror(errno));
		free(c);
		free(eal_argv);
		return 1;
	}
	/* The config first, as xnv-core: it decides EAL's devices. */
	rc = load_config(c, mode, dir);
	if (rc == 0 && (xnv_eal_from_config(&eal_argc, &eal_argv, &c->cfg) < 0 ||
			rte_eal_init(eal_argc, eal_argv) < 0)) {
		fprintf(stderr, "core-cost: EAL init failed\n");
		rc = 1;
	}
	if (rc == 0) {
		xnv_logtype = rte_log_register("xnv.core");
		rte_log_set_level(xnv_logtype, RTE_LOG_WARNING);
		rc = run(c, mode, rounds);
		rte_eal_cleanup();
	}
	(void)rmdir(dir);
	free(c);
	free(eal_argv);
	return rc;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * xnv-core: the Dom0 engine.  Usage:
 *   xnv-core [EAL options] -- --config FILE [options]
 * Reads the config before touching DPDK (bad input fails fast with nothing
 * started), then builds pools, ports and the NF socket, and runs the data
 * path on the main lcore until SIGINT/SIGTERM, --duration or --idle-exit.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_pause.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>

#include <gntshare/backend.h>

#include "core.h"
#include "doorbell.h"
#include "ctl.h"
#include "eal_args.h"
#include "logsink.h"
#include "notify.h"
#include "opts.h"
#include "preflight.h"
#include "table_out.h"

int xnv_logtype;
static volatile sig_atomic_t quit, dump_stats;
static struct xnv_core core;

/*
 * The config read and checked, all that can be without DPDK; its
 * warnings printed.  --check-config: lines as a compiler's ("FILE:LINE:
 * ..."), and "FILE: ok" at the end.  @return 0, or -1 (said).
 */
static int
load_config(struct xnv_config *cfg, const struct opts *o)
{
	const char *pfx = o->check_only ? "" : "xnv-core: ";
	char err[1024];
	unsigned i;
	int rc;

	rc = xnv_config_load(o->config, cfg, err, sizeof(err));
	if (rc == 0 && (rc = xnv_dom_policy_check(cfg, o->backend, err,
						   sizeof(err))) < 0)
		xnv_config_free(cfg);
	if (rc < 0) {
		fprintf(stderr, "%s%s%s\n", pfx, o->check_only ? "" :
			"config error: ", err);
		return -1;
	}
	for (i = 0; i < cfg->n_warnings; i++)
		fprintf(stderr, "%s%s\n", pfx, cfg->warnings[i]);
	/* The capture files ports read: net_pcap's own failure is a probe
	 * error that does not say what is wrong. */
	if (xnv_preflight_config(cfg, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s%s\n", pfx, err);
		xnv_config_free(cfg);
		return -1;
	}
	if (o->check_only)
		printf("%s: ok\n", o->config);
	return 0;
}

static char runtime_dir[PATH_MAX];

/* EAL leaves its runtime directory behind, empty with --in-memory or
 * --no-shconf; rmdir removes it only if nothing is left in it. */
static void
remove_runtime_dir(void)
{
	if (runtime_dir[0] != '\0')
		(void)rmdir(runtime_dir);
}

static void
on_signal(int sig)
{
	if (sig == SIGUSR1)
		dump_stats = 1;
	else
		quit = 1;
}

static void
gnts_to_rte_log(int level, const char *msg)
{
	rte_log((uint32_t)(level <= GNTS_LOG_ERR ? RTE_LOG_ERR :
		level == GNTS_LOG_WARNING ? RTE_LOG_WARNING : RTE_LOG_INFO),
		xnv_logtype, "xnv-core: %s\n", msg);
}

/* Where NFs attach: the backend's server (gntshare/backend.h). */
static int
open_backend(struct xnv_core *c, const char *kind, char *err, size_t errlen)
{
	static const struct gnts_srv_cb cb = {
		.check = xnv_rec_check,
		.attach = xnv_rec_attach,
		.death = xnv_rec_death,
		.suspend = xnv_rec_suspend,
		.map_denied = xnv_rec_map_denied,
		.domain_gone = xnv_dom_gone,
	};
	const struct gnts_srv_cfg cfg = {
		.socket = c->cfg.socket, .cb = &cb, .ctx = c,
		.socket_mode = c->cfg.socket_mode,
		.socket_group_set = c->cfg.socket_group_set,
		.socket_gid = (gid_t)c->cfg.socket_gid,
	};
	char where[256];
	int rc;

	rc = gnts_srv_open(kind, &cfg, &c->srv, err, errlen);
	if (rc == 0)
		XLOG(INFO, "NFs attach %s; EAL runtime directory %s\n",
		     gnts_srv_where(c->srv, where, sizeof(where)),
		     rte_eal_get_runtime_dir());
	return rc;
}

static int
setup(struct xnv_core *c, const char *backend)
{
	char err[512];
	uint16_t i;
	int rc;

	if ((rc = xnv_workers_check(c, err, sizeof(err))) < 0)
		goto fail;
	xnv_services_init(c);
	c->spill_ring_used = (uint32_t)((uint64_t)c->cfg.ring_size *
					c->cfg.spill_pct / 100);
	for (i = 0; i < c->cfg.n_ports; i++) {
		rc = xnv_chain_new(c, &c->cfg.ports[i].chain);
		if (rc < 0) {
			snprintf(err, sizeof(err), "chain table full");
			goto fail;
		}
		c->port_chain[i] = (uint16_t)rc;
	}
	if (xnv_fabric_start(c) < 0) {
		snprintf(err, sizeof(err), "chain table full");
		rc = -ENOSPC;
		goto fail;
	}
	if ((rc = xnv_ctl_register(c)) < 0) {
		snprintf(err, sizeof(err), "cannot register telemetry commands");
		goto fail;
	}
	err[0] = '\0';
	if ((rc = xnv_flows_create(c, err, sizeof(err))) < 0) {
		if (err[0] == '\0')
			snprintf(err, sizeof(err), "cannot create the flow "
				 "table: %s", strerror(-rc));
		goto fail;
	}
	for (i = 0; i < c->cfg.n_groups; i++)
		if ((rc = xnv_pool_create(c, i, err, sizeof(err))) < 0)
			goto fail;
	for (i = 0; i < c->cfg.n_ports; i++) {
		if ((rc = xnv_port_open(c, i, err, sizeof(err))) < 0)
			goto fail;
		xnv_pace_init(&c->ports[i].pace, c->cfg.ports[i].rx_rate,
			      c->tsc_hz);
		if (c->cfg.ports[i].rx_rate != 0)
			XLOG(INFO, "port %s: rx paced to %u packets/s\n",
			     c->cfg.ports[i].name, c->cfg.ports[i].rx_rate);
	}
	if ((rc = xnv_latency_init(c)) < 0) {
		snprintf(err, sizeof(err), "no memory for latency histograms");
		goto fail;
	}
	if (c->cfg.latency)
		XLOG(INFO, "latency on: rx-to-tx time of every packet sent "
		     "by a port (/xnv/port/latency)\n");
	if ((rc = open_backend(c, backend, err, sizeof(err))) < 0)
		goto fail;
	xnv_ctl_pointer_write(c);
	xnv_dom_setup(c);
	/* gntalloc cannot share a region: a pool per NF, whatever the
	 * config says. */
	c->own_pools = c->cfg.own_pools || !gnts_region_shareable();
	if (c->cfg.own_pools)
		XLOG(INFO, "nf_pools = own: each NF gets a pool of its own of "
		     "its group's pool_bufs; packets crossing pools are "
		     "copied\n");
	for (i = 0; i < c->cfg.n_ports; i++)
		if (c->cfg.ports[i].chain.n > 0 && c->cfg.ports[i].rx_when_ready)
			XLOG(INFO, "port %s: rx waits until every service of "
			     "its chain has an NF\n", c->cfg.ports[i].name);
	xnv_update_rx_gates(c);
	if ((rc = xnv_workers_start(c, err, sizeof(err))) < 0)
		goto fail;
	return 0;
fail:
	XLOG(ERR, "%s\n", err);
	return rc;
}

/* Stop the traffic: NFs detached, parked packets freed. */
static void
quiesce(struct xnv_core *c)
{
	uint16_t i;

	/* Detach every NF (telling it why) and reclaim its buffers. */
	c->shutting_down = 1;
	for (i = 0; i < XNV_MAX_NFS; i++) {
		xnv_rec_detach(c, &c->nfs[i], "xnv-core is shutting down");
		/* One that left before, its tx ring still draining: what it
		 * held is reclaimed (and counted) now too. */
		xnv_rec_finish(c, &c->nfs[i]);
		c->drops[XNV_DROP_SHUTDOWN] += c->nfs[i].pend.n;
		xnv_free_parked(&c->nfs[i].pend);
	}
	c->n_active = 0;
	gnts_srv_close(c->srv);
	c->srv = NULL;
	xnv_ctl_pointer_remove();
	for (i = 0; i < c->cfg.n_ports; i++) {
		c->drops[XNV_DROP_SHUTDOWN] += c->ports[i].pend.n;
		xnv_free_parked(&c->ports[i].pend);
	}
}

static void
teardown(struct xnv_core *c)
{
	uint16_t i;

	for (i = 0; i < c->cfg.n_ports; i++)
		xnv_port_close(c, i);
	xnv_flows_destroy(c);
	xnv_config_free(&c->cfg);
	for (i = 0; i < XNV_MAX_POOLS; i++)
		xnv_pool_destroy(&c->pools[i]);
	xnv_bells_close(c);
}

/*
 * --idle-exit: rx idle for idle_tsc since the last packet, or since every
 * port with a chain started to receive when none came at all (an empty
 * capture); then stop once every buffer is home, or anyway after ten
 * times as long.  @return 1 to stop.
 */
static int
idle_exit_due(const struct xnv_core *c, uint64_t now, uint64_t idle_tsc,
	      double idle_ms)
{
	uint64_t since = c->first_rx_tsc ? c->last_rx_tsc : c->rx_open_tsc;

	if (idle_tsc == 0 || since == 0 || now <= since ||
	    now - since <= idle_tsc)
		return 0;
	if (xnv_in_flight(c) == 0 && xnv_pending_empty(c)) {
		if (c->first_rx_tsc == 0)
			XLOG(INFO, "no packet received in %.0f ms since rx "
			     "started: stopping (--idle-exit)\n", idle_ms);
		else
			XLOG(INFO, "rx idle for %.0f ms and every buffer "
			     "is home: stopping\n", idle_ms);
		return 1;
	}
	if (now - since > 10 * idle_tsc) {
		XLOG(WARNING, "rx idle%s but %" PRIu64 " buffers still out: "
		     "stopping anyway\n", c->first_rx_tsc ? "" :
		     " (no packet received)", xnv_in_flight(c));
		return 1;
	}
	return 0;
}

/* SIGUSR1's table: made in memory with the workers parked (the NFs'
 * counters), written to stdout by a thread of its own (table_out.h), so
 * a stdout nobody reads stops no lcore. */
static void
print_table(struct xnv_core *c, double secs)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (f == NULL) {
		XLOG(ERR, "SIGUSR1: no memory for the table: %s\n",
		     strerror(errno));
		return;
	}
	xnv_workers_park(c, 1);
	xnv_stats_print(c, f, secs);
	xnv_workers_park(c, 0);
	if (fclose(f) != 0) {
		XLOG(ERR, "SIGUSR1: no memory for the table\n");
		free(buf);
		return;
	}
	(void)xnv_table_out(buf, len);
}

static void
run(struct xnv_core *c, const struct opts *o)
{
	uint64_t hz = c->tsc_hz, start = rte_rdtsc(), next_ctl = 0;
	uint64_t idle_tsc = (uint64_t)(o->idle_exit_ms * 1e-3 * hz);
	uint64_t end = o->duration_s > 0 ?
		       start + (uint64_t)(o->duration_s * hz) : UINT64_MAX;
	struct xnv_worker *self = xnv_worker_self();	/* worker 0 */
	unsigned idle = 0, work;
	uint16_t i;

	xnv_lcore_rt(c);
	xnv_flows_online(c, 0, 1);
	while (!quit) {
		uint64_t now = rte_rdtsc();

		work = 0;
		for (i = 0; i < c->cfg.n_ports; i++)
			work += xnv_rx_port(c, i, now);
		work += xnv_rx_nfs(c, 0, now);
		if (unlikely(c->workers.n > 1))
			work += xnv_steered_rx(c, self, now);
		if (work != 0) {
			idle = 0;
			if (unlikely(self->n_dozing != 0))
				xnv_bells_wake_all(c);
		} else if (c->idle != GNTS_IDLE_POLL)
			xnv_idle_backoff(c, &idle);
		if (now < next_ctl)
			continue;
		/* Control plane once per millisecond: what the control
		 * thread handed over (attach, death, ...), telemetry
		 * commands, the NFs' heartbeats. */
		next_ctl = now + hz / 1000;
		xnv_flows_quiescent(c, 0);	/* no rule set held from here */
		(void)gnts_srv_poll(c->srv);
		xnv_rec_requests(c);	/* other workers' quarantines */
		/* A clock read after the poll: the loop's `now` may be old
		 * (a slow poll, a stopped core) and would date a moving
		 * heartbeat into the past. */
		xnv_rec_watch(c, rte_rdtsc());	/* its own NFs' */
		xnv_rec_sweep(c);
		xnv_port_link_watch(c, now);
		xnv_ctl_poll(c);
		xnv_workers_fold(c);
		if (dump_stats) {
			dump_stats = 0;
			print_table(c, (double)(now - start) / hz);
		}
		if (now >= end) {
			XLOG(INFO, "--duration reached\n");
			break;
		}
		if (idle_exit_due(c, now, idle_tsc, o->idle_exit_ms))
			break;
	}
	xnv_flows_online(c, 0, 0);
}

/*
 * Everything before EAL: the command line, the config, the checks that
 * need no DPDK, the CPU latency hold, EAL's arguments.  @return -1 to go
 * on (*eal_argv set), else the exit status (nothing left allocated).
 */
static int
before_eal(struct xnv_core *c, int argc, char **argv, struct opts *o,
	   int *eal_argc, char ***eal_argv)
{
	char err[512];
	int app_argc, rc;
	char **app_argv;

	if (xnv_split_args(argc, argv, eal_argc, eal_argv, &app_argc,
			   &app_argv) < 0)
		return 1;
	if (xnv_parse_opts(app_argc, app_argv, app_argv != argv, o) < 0) {
		free(*eal_argv);
		return 2;	/* a usage error */
	}
	rc = load_config(&c->cfg, o);
	if (rc < 0 || o->check_only) {
		xnv_config_free(&c->cfg);
		free(*eal_argv);
		return rc < 0 ? 1 : 0;
	}
	if (o->socket != NULL)
		snprintf(c->cfg.socket, sizeof(c->cfg.socket), "%s", o->socket);
	rc = xnv_preflight_start(&c->cfg, o->backend, o->stats_json, err,
				 sizeof(err));
	if (rc < 0)
		fprintf(stderr, "xnv-core: %s\n", err);
	else if (o->cpu_latency_us >= 0 &&
		 (rc = xnv_cpu_latency_hold(o->cpu_latency_us, err,
					    sizeof(err))) < 0)
		fprintf(stderr, "xnv-core: --cpu-latency %d: %s\n",
			o->cpu_latency_us, err);
	else if (o->rt_priority > 0 &&
		 (rc = gnts_thread_rt_check(o->rt_priority, err,
					    sizeof(err))) < 0)
		fprintf(stderr, "xnv-core: --rt-priority %d: %s\n",
			o->rt_priority, err);
	if (rc < 0) {
		xnv_config_free(&c->cfg);
		free(*eal_argv);
		return 1;
	}
	if (xnv_eal_from_config(eal_argc, eal_argv, &c->cfg) < 0) {
		free(*eal_argv);
		return 1;
	}
	return -1;
}

/* EAL up, every log line through the log sink from then on, signals
 * caught.  @return 0, or -1 (said; *eal_argv freed, EAL cleaned up). */
static int
start_eal(struct xnv_core *c, const struct opts *o, int eal_argc,
	  char **eal_argv)
{
	struct sigaction sa;
	char err[512];

	/* Registered before EAL's own handlers, so it runs after them (after
	 * telemetry unlinks its socket). */
	atexit(remove_runtime_dir);
	xnv_logtype = rte_log_register("xnv.core");
	rte_log_set_level(xnv_logtype, RTE_LOG_INFO);
	/* From here on every log line, EAL's included, starts with its time
	 * and level (logsink.h). */
	if (xnv_logsink_open(err, sizeof(err)) < 0)
		fprintf(stderr, "xnv-core: %s\n", err);
	if (xnv_eal_notice()[0] != '\0')
		XLOG(NOTICE, "%s\n", xnv_eal_notice());
	if (o->cpu_latency_us >= 0)
		XLOG(INFO, "CPU wake-up latency held at %d us while running "
		     "(/dev/cpu_dma_latency)\n", o->cpu_latency_us);
	if (rte_eal_init(eal_argc, eal_argv) < 0) {
		fprintf(stderr, "xnv-core: EAL init failed: %s\n",
			rte_strerror(rte_errno));
		free(eal_argv);
		return -1;
	}
	/* From here on, logging never waits for stderr (logsink.h). */
	if (xnv_logsink_start((size_t)c->cfg.log_buffer_kib << 10, err,
			      sizeof(err)) < 0) {
		fprintf(stderr, "xnv-core: %s\n", err);
		rte_eal_cleanup();
		free(eal_argv);
		return -1;
	}
	gnts_set_logger(gnts_to_rte_log);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGUSR1, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	return 0;
}

int
main(int argc, char **argv)
{
	struct xnv_core *c = &core;
	struct opts o = { .idle = GNTS_IDLE_DOORBELL, .idle_max_us = 2000,
			  .cpu_latency_us = -1 };
	int eal_argc, rc;
	char **eal_argv;
	uint64_t start;

	rc = before_eal(c, argc, argv, &o, &eal_argc, &eal_argv);
	if (rc >= 0)
		return rc;
	if (start_eal(c, &o, eal_argc, eal_argv) < 0)
		return 1;
	c->tsc_hz = rte_get_tsc_hz();
	c->stall_tsc = c->cfg.stall_timeout_ms * c->tsc_hz / 1000;
	c->heartbeat_tsc = c->cfg.heartbeat_timeout_ms * c->tsc_hz / 1000;
	c->hoard_tsc = c->cfg.hoard_timeout_ms * c->tsc_hz / 1000;
	start = rte_rdtsc();
	c->start_tsc = start;
	c->idle = o.idle;
	c->idle_max_us = (unsigned)o.idle_max_us;
	c->rt_priority = o.rt_priority;
	rc = xnv_workers_init(c);	/* worker 0: this lcore (worker.h) */
	if (rc < 0)
		XLOG(ERR, "no memory for the main lcore's counters\n");
	else if ((rc = xnv_bells_open(c)) < 0)
		XLOG(ERR, "epoll for the doorbells: %s\n", strerror(-rc));
	else
		rc = setup(c, o.backend);
	if (rc == 0) {
		/* Every port started, the NF socket listening (notify.h). */
		xnv_notify("READY=1\nSTATUS=forwarding");
		run(c, &o);
		xnv_notify("STOPPING=1");
	}
	xnv_workers_stop(c);	/* what they held dropped, counted */
	quiesce(c);
	if (rc == 0) {
		double el = (double)(rte_rdtsc() - start) / c->tsc_hz;

		xnv_workers_fold(c);	/* what quiesce counted */
		xnv_table_out_wait();	/* SIGUSR1's last table first */
		xnv_stats_print(c, stdout, el);
		if (o.stats_json && xnv_stats_json(c, o.stats_json, el) < 0) {
			XLOG(ERR, "cannot write %s\n", o.stats_json);
			rc = -EIO;
		}
	}
	teardown(c);
	snprintf(runtime_dir, sizeof(runtime_dir), "%s",
		 rte_eal_get_runtime_dir());
	rte_eal_cleanup();
	/* Last: what quiesce, teardown and EAL cleanup logged goes out too,
	 * waiting a bounded time for stderr. */
	xnv_logsink_stop(XNV_LOGSINK_STOP_MS);
	free(eal_argv);
	return rc == 0 ? 0 : 1;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* xnv-core's command line: see opts.h. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gntshare/backend.h>
#include <gntshare/bell.h>

#include "core.h"
#include "opts.h"

static void
usage(FILE *f)
{
	fprintf(f,
		"usage: xnv-core [EAL options] -- --config FILE [options]\n"
		"       xnv-core --check-config FILE [--backend host|xen]\n"
		"  --config FILE      INI configuration (ports, groups, services, chains;\n"
		"                     docs/CONFIG.md)\n"
		"  --check-config FILE  check FILE as far as can be without starting\n"
		"                     DPDK, print its warnings, 'FILE: ok'; exit 0 or 1\n"
		"                     (for the host backend unless --backend says)\n"
		"  --socket PATH      NF socket, overrides [core] socket\n"
		"  --duration SEC     stop after SEC seconds\n"
		"  --idle-exit MS     stop once rx has been idle MS ms (since the\n"
		"                     last packet, or since rx started if none came)\n"
		"                     and every buffer is back in its pool (pcap runs)\n"
		"  --stats-json FILE  write the final counters as JSON\n"
		"  --idle-sleep MODE  when idle: poll (never back off; = --busy-poll),\n"
		"                     adaptive (spin, pause, yield, then sleep up to\n"
		"                     50 us), doorbell (default: adaptive, then wait\n"
		"                     on the NFs' doorbells and ports' rx interrupts,\n"
		"                     polling other ports at least every\n"
		"                     --idle-sleep-max us)\n"
		"  --idle-sleep-max US  longest doorbell wait (default 2000, 50..1000000)\n"
		"  --cpu-latency US   hold the CPUs' wake-up latency at US while running\n"
		"                     (/dev/cpu_dma_latency): idle CPUs stay in idle\n"
		"                     states that wake within US, so a sleeping NF or\n"
		"                     core wakes sooner, at the price of power (and of\n"
		"                     host CPU in a VM); default: the system's choice\n"
		"  --rt-priority N    run the data-path lcores SCHED_FIFO at N (1..99;\n"
		"                     the control threads stay as they are): a woken\n"
		"                     lcore runs at once whatever shares its CPU; one\n"
		"                     that polls busy keeps other tasks off it;\n"
		"                     default: SCHED_OTHER\n"
		"  --backend host|xen how NFs attach: host processes on the unix\n"
		"                     socket (default), or Xen domains through\n"
		"                     XenStore and grant refs (Dom0, gntshare module);\n"
		"                     this build has: %s\n"
		"  --version          print the version and exit\n"
		"  -h, --help         this text\n"
		"Exit status: 0 after a clean stop, 2 for a usage error, 1 for\n"
		"any other error.\n"
		"EAL memory: unless given, --in-memory when 2 MiB hugepages are free,\n"
		"else --no-huge (logged); --iova-mode=va unless given (the pools\n"
		"are DMA-mapped by virtual address: PCI NICs on vfio-pci).\n"
		"SIGUSR1 prints the counters.\n",
		gnts_srv_kinds());
}

static int
parse_num(const char *opt, const char *v, double *out)
{
	char *end;

	*out = strtod(v, &end);
	if (end == v || *end != '\0' || *out <= 0) {
		fprintf(stderr, "xnv-core: %s %s: expected a positive number\n",
			opt, v);
		return -1;
	}
	return 0;
}

/* --cpu-latency US: 0 to 1000000, or -1 said in one line. */
static int
cpu_latency_arg(const char *v)
{
	char *end;
	long us = strtol(v, &end, 10);

	if (end != v && *end == '\0' && us >= 0 && us <= 1000000)
		return (int)us;
	fprintf(stderr, "xnv-core: --cpu-latency %s: expected 0 to 1000000 "
		"(us)\n", v);
	return -1;
}

/* Option @p c (getopt_long's value) with argument @p v into @p o.
 * @return 0, or -1 (said in one line). */
static int
one_opt(int c, const char *v, struct opts *o)
{
	switch (c) {
	case 'c': o->config = v; break;
	case 'C': o->config = v; o->check_only = 1; break;
	case 's':
		if (v[0] != '/') {
			fprintf(stderr, "xnv-core: --socket %s: expected an "
				"absolute path\n", v);
			return -1;
		}
		o->socket = v;
		break;
	case 'j': o->stats_json = v; break;
	case 'b': o->idle = GNTS_IDLE_POLL; break;
	case 'I':
		if ((o->idle = gnts_idle_parse(v)) < 0) {
			fprintf(stderr, "xnv-core: --idle-sleep %s: expected "
				"poll, adaptive or doorbell\n", v);
			return -1;
		}
		break;
	case 'M':
		if (parse_num("--idle-sleep-max", v, &o->idle_max_us))
			return -1;
		if (o->idle_max_us < 50 || o->idle_max_us > 1e6) {
			fprintf(stderr, "xnv-core: --idle-sleep-max %s: "
				"expected 50 to 1000000 (us)\n", v);
			return -1;
		}
		break;
	case 'L':
		o->cpu_latency_us = cpu_latency_arg(v);
		return o->cpu_latency_us < 0 ? -1 : 0;
	case 'R':
		if ((o->rt_priority = gnts_rt_priority_parse(v)) < 0) {
			fprintf(stderr, "xnv-core: --rt-priority %s: expected %d "
				"to %d\n", v, GNTS_RT_PRIO_MIN,
				GNTS_RT_PRIO_MAX);
			return -1;
		}
		break;
	case 'B':
		if (gnts_srv_backend(v) == NULL) {
			fprintf(stderr, "xnv-core: --backend %s: expected one "
				"of: %s\n", v, gnts_srv_kinds());
			return -1;
		}
		o->backend = v;
		break;
	case 'd': return parse_num("--duration", v, &o->duration_s);
	case 'i': return parse_num("--idle-exit", v, &o->idle_exit_ms);
	case 'h': usage(stdout); exit(0);
	case 'V':
		printf("xnv-core (XenNetVM) %s\n", XNV_VERSION);
		exit(0);
	default:
		return -1;
	}
	return 0;
}

/* @p sep: the command line had a '--' (what is before it is EAL's). */
int
xnv_parse_opts(int argc, char **argv, int sep, struct opts *o)
{
	static const struct option lo[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "check-config", required_argument, NULL, 'C' },
		{ "socket", required_argument, NULL, 's' },
		{ "duration", required_argument, NULL, 'd' },
		{ "idle-exit", required_argument, NULL, 'i' },
		{ "stats-json", required_argument, NULL, 'j' },
		{ "busy-poll", no_argument, NULL, 'b' },
		{ "idle-sleep", required_argument, NULL, 'I' },
		{ "idle-sleep-max", required_argument, NULL, 'M' },
		{ "cpu-latency", required_argument, NULL, 'L' },
		{ "rt-priority", required_argument, NULL, 'R' },
		{ "backend", required_argument, NULL, 'B' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		if (c == '?' || c == ':') {
			fprintf(stderr, "xnv-core: unknown or incomplete option "
				"'%s' (%s)\n", argv[optind - 1], sep ?
				"see --help" : "EAL options go before '--', "
				"xnv-core's after it: xnv-core [EAL options] -- "
				"--config FILE");
			return -1;
		}
		if (one_opt(c, optarg, o) < 0)
			return -1;
	}
	if (optind < argc) {
		fprintf(stderr, "xnv-core: unexpected argument '%s'\n",
			argv[optind]);
		return -1;
	}
	if (o->config == NULL) {
		fprintf(stderr, "xnv-core: --config FILE is required "
			"(usage: xnv-core [EAL options] -- --config FILE; "
			"see --help)\n");
		return -1;
	}
	return 0;
}

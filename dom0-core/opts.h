/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * xnv-core's own command line (after EAL's '--'): what main.c runs with.
 */
#ifndef XNV_OPTS_H
#define XNV_OPTS_H

struct opts {
	const char *config;
	int check_only;		/* --check-config: read, check, exit */
	const char *socket;
	const char *stats_json;
	double duration_s;
	double idle_exit_ms;
	int idle;		/* --idle-sleep, enum gnts_idle */
	double idle_max_us;	/* --idle-sleep-max */
	int cpu_latency_us;	/* --cpu-latency; -1: not asked for */
	int rt_priority;	/* --rt-priority; 0: not asked for */
	const char *backend;	/* --backend: a gntshare backend */
};

/* Parse @p argc / @p argv into @p o (its defaults set by the caller);
 * @p sep: the command line had a '--' (what is before it is EAL's).
 * --help and --version print and exit.  @return 0, or -1 said in one
 * line on stderr. */
int xnv_parse_opts(int argc, char **argv, int sep, struct opts *o);

#endif

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The arguments after "--" of the C bench tools (core_cost.c,
 * flow_cost.c): what they check alike, each error said in one line
 * that names the tool.
 */
#ifndef XNV_BENCH_ARGS_H
#define XNV_BENCH_ARGS_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* -h / --help anywhere: @p usage on stdout, -EAGAIN; any other option:
 * -EINVAL, said with @p where (where options go instead: the tools take
 * positional arguments only); else 0. */
static inline int
bench_no_options(const char *prog, int argc, char **argv,
		 void (*usage)(FILE *), const char *where)
{
	int i;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
			usage(stdout);
			return -EAGAIN;
		}
		if (argv[i][0] == '-' && argv[i][1] != '\0') {
			fprintf(stderr, "%s: unknown option '%s' (%s; see "
				"--help)\n", prog, argv[i], where);
			return -EINVAL;
		}
	}
	return 0;
}

/* ROUNDS @p arg, 1 to @p max, into *@p rounds: 0, or -EINVAL said. */
static inline int
bench_rounds(const char *prog, const char *arg, unsigned max,
	     unsigned *rounds)
{
	char *end;
	unsigned long v = strtoul(arg, &end, 10);

	if (arg[0] < '0' || arg[0] > '9' || *end != '\0' || v == 0 ||
	    v > max) {
		fprintf(stderr, "%s: ROUNDS %s: expected a number from 1 to "
			"%u\n", prog, arg, max);
		return -EINVAL;
	}
	*rounds = (unsigned)v;
	return 0;
}

#endif /* XNV_BENCH_ARGS_H */

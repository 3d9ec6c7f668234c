/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the tools that attach like an NF through gntshare (xnv-hostile,
 * xnv-bellhostile) parse alike: the options saying where and as what they
 * attach, --wait, and a usage error's one line (header only).
 */
#ifndef XNV_TOOL_OPTS_H
#define XNV_TOOL_OPTS_H

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include <gntshare/proto.h>

/* getopt_long() rows of --socket, --service, --group and --name. */
#define TOOL_ATTACH_OPTIONS \
	{ "socket", required_argument, NULL, 'S' }, \
	{ "service", required_argument, NULL, 's' }, \
	{ "group", required_argument, NULL, 'g' }, \
	{ "name", required_argument, NULL, 'n' }

/* Option @p c with argument @p arg into *@p sock or @p req if it is one
 * of TOOL_ATTACH_OPTIONS.  @return 1 if it was, 0 if not. */
static inline int
tool_attach_opt(int c, const char *arg, const char **sock,
		struct gnts_attach_req *req)
{
	char *field;
	size_t len;

	switch (c) {
	case 'S':
		*sock = arg;
		return 1;
	case 's': field = req->service; len = sizeof(req->service); break;
	case 'g': field = req->group; len = sizeof(req->group); break;
	case 'n': field = req->name; len = sizeof(req->name); break;
	default:
		return 0;
	}
	snprintf(field, len, "%s", arg);
	return 1;
}

/* --wait @p arg of @p prog: seconds, 0 or more, into *@p out.  0, or
 * -EINVAL said in one line. */
static inline int
tool_wait_arg(const char *prog, const char *arg, double *out)
{
	char *end;

	*out = strtod(arg, &end);
	if (end != arg && *end == '\0' && *out >= 0)
		return 0;
	fprintf(stderr, "%s: --wait %s: expected seconds, 0 or more\n", prog,
		arg);
	return -EINVAL;
}

/* getopt_long() returned an option @p prog does not take (or one without
 * its argument): one line.  -EINVAL. */
static inline int
tool_bad_option(const char *prog, char **argv)
{
	fprintf(stderr, "%s: unknown or incomplete option '%s' (see --help)\n",
		prog, argv[optind - 1]);
	return -EINVAL;
}

/* Arguments left after the options: one line and -EINVAL; else 0. */
static inline int
tool_no_args(const char *prog, int argc, char **argv)
{
	if (optind >= argc)
		return 0;
	fprintf(stderr, "%s: unexpected argument '%s'\n", prog, argv[optind]);
	return -EINVAL;
}

#endif

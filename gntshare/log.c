/* SPDX-License-Identifier: BSD-3-Clause */
/* Where gntshare's messages go (both sides); see gntshare.h. */
#include <stdarg.h>
#include <stdio.h>

#include "gntshare/gntshare.h"

static void (*logger)(int, const char *);

void
gnts_set_logger(void (*fn)(int level, const char *msg))
{
	logger = fn;
}

void
gnts_log(int level, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (logger != NULL)
		logger(level, buf);
	else
		fprintf(stderr, "gntshare: %s\n", buf);
}

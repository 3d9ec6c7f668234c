/* SPDX-License-Identifier: BSD-3-Clause */
/* Time helpers shared by the test tools (header only). */
#ifndef XNV_TOOL_TIME_H
#define XNV_TOOL_TIME_H

#include <time.h>

/* Seconds on the monotonic clock. */
static inline double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

#endif

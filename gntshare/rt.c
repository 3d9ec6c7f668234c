/* SPDX-License-Identifier: BSD-3-Clause */
/* A data-path thread's real-time priority (--rt-priority of xnv-core and
 * of libxnv): see gntshare/bell.h. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gntshare/bell.h"

int
gnts_rt_priority_parse(const char *s)
{
	char *end;
	long v;

	if (s == NULL || *s == '\0')
		return -1;
	v = strtol(s, &end, 10);
	return *end == '\0' && v >= GNTS_RT_PRIO_MIN && v <= GNTS_RT_PRIO_MAX
	       ? (int)v : -1;
}

int
gnts_thread_rt(int prio, char *err, size_t len)
{
	struct sched_param sp = { .sched_priority = prio };
	int rc = pthread_setschedparam(pthread_self(),
				       prio > 0 ? SCHED_FIFO : SCHED_OTHER,
				       &sp);

	if (rc != 0)
		snprintf(err, len, "SCHED_FIFO at priority %d: %s%s", prio,
			 strerror(rc), rc == EPERM ? " (needs CAP_SYS_NICE, "
			 "or an RLIMIT_RTPRIO of at least the priority)" : "");
	return -rc;
}

int
gnts_thread_rt_check(int prio, char *err, size_t len)
{
	struct sched_param old;
	int policy, rc;

	if (pthread_getschedparam(pthread_self(), &policy, &old) != 0) {
		policy = SCHED_OTHER;
		old.sched_priority = 0;
	}
	rc = gnts_thread_rt(prio, err, len);
	if (rc == 0)
		(void)pthread_setschedparam(pthread_self(), policy, &old);
	return rc;
}

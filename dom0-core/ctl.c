/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Control plane on DPDK telemetry (commands listed in CONTROL.md).
 *
 * Telemetry calls us on its own thread; the data path is single-threaded
 * and lock-free.  So a callback only posts its request and waits: the main
 * loop runs it between bursts (xnv_ctl_poll, once per millisecond) with a
 * consistent view, under the mutex the callback waits on.  A direct
 * command (the flow rules: a rule set may take long to build) runs on
 * telemetry's thread instead, with its own locking, and posts only what
 * touches the main loop's state (xnv_ctl_on_loop).
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_lcore.h>
#include <rte_telemetry.h>

#include "core.h"
#include "ctl.h"

#define CTL_TIMEOUT_S 2

/* A command, or a function a direct command runs on the loop. */
struct ctl_req {
	const struct xnv_ctl_cmd *cmd;
	const char *params;
	struct rte_tel_data *d;
	void (*fn)(struct xnv_core *c, void *arg);
	void *arg;
	int done;
};

static struct xnv_core *core;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv;		/* on CLOCK_MONOTONIC: see register */
static struct ctl_req *pending;
static atomic_int posted;		/* read without the lock by the loop */

/* Reply {"error": msg}: the command failed and changed nothing. */
int
xnv_ctl_error(struct rte_tel_data *d, const char *fmt, ...)
{
	char msg[RTE_TEL_MAX_STRING_LEN];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* Telemetry strings hold 127 characters: say so when cut. */
	if (n >= (int)sizeof(msg))
		memcpy(msg + sizeof(msg) - 4, "...", 4);
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "error", msg);
	return 0;
}

static const struct xnv_ctl_cmd *
find(const char *name)
{
	const struct xnv_ctl_cmd *c;

	for (c = xnv_ctl_cmds; c->name != NULL; c++)
		if (strcmp(c->name, name) == 0)
			return c;
	return NULL;
}

/* Hand @p r to the loop and wait until it ran it; 0, or -ETIMEDOUT
 * when it was withdrawn unrun. */
static int
post(struct ctl_req *r)
{
	struct timespec until;
	int rc = 0;

	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += CTL_TIMEOUT_S;
	pthread_mutex_lock(&mu);
	while (pending != NULL && rc == 0)
		rc = pthread_cond_timedwait(&cv, &mu, &until);
	if (rc == 0) {
		pending = r;
		/* Release: the request (pending and *r) is written before
		 * the loop can see the flag set. */
		atomic_store_explicit(&posted, 1, memory_order_release);
		while (!r->done && rc == 0)
			rc = pthread_cond_timedwait(&cv, &mu, &until);
		if (!r->done) {
			/* Still ours: withdraw it so the loop never sees a
			 * request whose caller has returned, and let the next
			 * waiting caller post its own. */
			pending = NULL;
			/* Release: pending is cleared before the flag
			 * (the loop rechecks pending under the lock anyway). */
			atomic_store_explicit(&posted, 0,
					      memory_order_release);
			pthread_cond_broadcast(&cv);
		}
	}
	pthread_mutex_unlock(&mu);
	return r->done ? 0 : -ETIMEDOUT;
}

int
xnv_ctl_on_loop(void (*fn)(struct xnv_core *c, void *arg), void *arg)
{
	struct ctl_req r = { .fn = fn, .arg = arg };

	if (rte_lcore_id() == rte_get_main_lcore()) {
		fn(core, arg);
		return 0;
	}
	return post(&r);
}

static int
on_command(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct ctl_req r = { .cmd = find(cmd), .params = params, .d = d };

	if (r.cmd == NULL)
		return -EINVAL;
	if (r.cmd->needs_param && (params == NULL || *params == '\0'))
		return xnv_ctl_error(d, "%s needs a parameter: %s", cmd,
				     r.cmd->help);
	if (r.cmd->direct) {
		r.cmd->fn(core, params, d);
		return 0;
	}
	if (post(&r) < 0)
		xnv_ctl_busy(d);
	return 0;
}

int
xnv_ctl_busy(struct rte_tel_data *d)
{
	/* Not run at all: safe to ask again ("busy": 1 says so). */
	xnv_ctl_error(d, "xnv-core did not answer within %d s", CTL_TIMEOUT_S);
	rte_tel_data_add_dict_int(d, "busy", 1);
	return 0;
}

void
xnv_ctl_poll(struct xnv_core *c)
{
	/* Acquire pairs with the release in on_command: the request's
	 * fields are visible once we see the flag. */
	if (!atomic_load_explicit(&posted, memory_order_acquire))
		return;
	pthread_mutex_lock(&mu);
	if (pending != NULL) {
		/* A command may change what the workers read: they wait
		 * (worker.h). */
		xnv_workers_park(c, 1);
		xnv_workers_fold(c);	/* the counters it may report */
		if (pending->cmd != NULL)
			pending->cmd->fn(c, pending->params, pending->d);
		else
			pending->fn(c, pending->arg);
		xnv_workers_park(c, 0);
		pending->done = 1;
		pending = NULL;
		/* Release: the reply (pending->d, done) is complete before
		 * the flag says nothing is posted; the caller itself reads
		 * done under the mutex. */
		atomic_store_explicit(&posted, 0, memory_order_release);
		pthread_cond_broadcast(&cv);
	}
	pthread_mutex_unlock(&mu);
}

int
xnv_ctl_register(struct xnv_core *c)
{
	const struct xnv_ctl_cmd *cmd;
	pthread_condattr_t ca;
	int rc;

	core = c;
	/* Deadlines on the monotonic clock: a clock change must not stretch
	 * or cut a caller's wait. */
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&cv, &ca);
	pthread_condattr_destroy(&ca);
	for (cmd = xnv_ctl_cmds; cmd->name != NULL; cmd++) {
		rc = rte_telemetry_register_cmd(cmd->name, on_command,
						cmd->help);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* Parse a decimal id parameter; -1 if it is not one. */
long
xnv_ctl_id(const char *params)
{
	char *end;
	long v;

	if (params == NULL || *params == '\0')
		return -1;
	v = strtol(params, &end, 10);
	return (*end == '\0' && v >= 0) ? v : -1;
}

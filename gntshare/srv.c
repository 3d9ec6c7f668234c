/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The server side's backend registry and handle (backend.h).  The core
 * calls these; only the table below names a backend.
 *
 * The backend runs in a control thread: it reads sockets or XenStore,
 * applies its limits and answers what it can alone (a MAP, a refusal).
 * What needs the owner (struct gnts_srv_cb) is handed to the owner's
 * thread through a one-slot mailbox: the control thread posts the call
 * and waits; the owner runs it in gnts_srv_poll() and signals.  Detaches
 * go the other way through a queue the control thread drains before each
 * pass.  Nothing the owner does ever waits for the control thread, and
 * nothing a peer sends reaches the owner's thread but these callbacks.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "backends.h"

static const struct gnts_srv_ops *const backends[] = {
	&gnts_host_srv_ops,
#ifdef GNTS_HAVE_XEN
	&gnts_xen_srv_ops,
#endif
};

#define N_BACKENDS (sizeof(backends) / sizeof(backends[0]))

const char *
gnts_srv_kinds(void)
{
	static char kinds[64];
	size_t i, o = 0;

	for (i = 0; i < N_BACKENDS && o < sizeof(kinds); i++)
		o += (size_t)snprintf(kinds + o, sizeof(kinds) - o, "%s%s",
				      i ? ", " : "", backends[i]->name);
	return kinds;
}

const struct gnts_srv_ops *
gnts_srv_backend(const char *kind)
{
	size_t i;

	for (i = 0; i < N_BACKENDS; i++)
		if (strcmp(backends[i]->name, kind) == 0)
			return backends[i];
	return NULL;
}

enum job_kind { JOB_CHECK, JOB_ATTACH, JOB_DEATH, JOB_MAP_DENIED, JOB_GONE,
		JOB_SUSPEND };

/* A callback handed to the owner's thread; lives on the poster's stack. */
struct job {
	enum job_kind kind;
	gnts_peer_t peer;
	const struct gnts_peer_cred *cred;
	const struct gnts_attach_req *req;
	struct gnts_bell *bell;
	struct gnts_attach_rsp *rsp;
	char *err;
	size_t errlen;
	gnts_ref_t ref;
	const char *why;
	uint32_t domain;
	int rc;
	int done;
};

/* Set in the control thread: the handle it serves. */
static __thread struct gnts_srv *control_of;

#define DETACH_QUEUE 256	/* > attached peers a backend can have */

/* What the owner queues for the control thread: a detach of a peer
 * (how = 0), or a pause / destroy of a domain (enum gnts_punish). */
struct detach_cmd {
	gnts_peer_t peer;	/* or the domain, for a punishment */
	int how;
	int status;
	char why[GNTS_ERR_LEN];
};

struct gnts_srv {
	const struct gnts_srv_ops *ops;
	void *impl;
	struct gnts_srv_cb owner_cb;	/* the owner's callbacks */
	void *owner_ctx;
	pthread_t thread;
	int threaded;			/* the control thread runs */
	atomic_int stop;
	int wake_fd;			/* eventfd: a command queued, stop */
	pthread_mutex_t mu;		/* guards everything below */
	pthread_cond_t cv;		/* job posted, job done, thread gone */
	int exited;
	struct job *job;		/* posted, not yet run */
	gnts_peer_t dying;		/* peer of the death being run */
	int in_death;
	struct detach_cmd dq[DETACH_QUEUE];
	unsigned dq_head, dq_n;
	uint64_t callbacks;
	struct gnts_srv_counters snap;	/* the backend's, each pass */
};

static int
run_job(struct gnts_srv *s, struct job *j)
{
	const struct gnts_srv_cb *cb = &s->owner_cb;

	switch (j->kind) {
	case JOB_CHECK:
		return cb->check(s->owner_ctx, j->req, j->err, j->errlen);
	case JOB_ATTACH:
		return cb->attach(s->owner_ctx, j->peer, j->cred, j->req, j->bell,
				  j->rsp, j->err, j->errlen);
	case JOB_DEATH:
		/* Its own detach of the peer: the backend has ended it. */
		s->dying = j->peer;
		s->in_death = 1;
		cb->death(s->owner_ctx, j->peer);
		s->in_death = 0;
		return 0;
	case JOB_MAP_DENIED:
		cb->map_denied(s->owner_ctx, j->peer, j->ref, j->why);
		return 0;
	case JOB_GONE:
		cb->domain_gone(s->owner_ctx, j->domain);
		return 0;
	case JOB_SUSPEND:
		cb->suspend(s->owner_ctx, j->peer, j->why);
		return 0;
	}
	return -EINVAL;
}

/* Drop queued detaches of @p peer (under mu): it attaches anew, so they
 * were meant for an earlier incarnation the backend has already ended. */
static void
forget_detaches(struct gnts_srv *s, gnts_peer_t peer)
{
	unsigned i, k = 0;

	for (i = 0; i < s->dq_n; i++) {
		struct detach_cmd *d = &s->dq[(s->dq_head + i) % DETACH_QUEUE];

		if (d->peer != peer || d->how != 0)
			s->dq[(s->dq_head + k++) % DETACH_QUEUE] = *d;
	}
	s->dq_n = k;
}

/* From the backend: run @p j on the owner's thread and wait for it (or
 * run it here when this is not the control thread: at open and close). */
static int
hand_over(struct gnts_srv *s, struct job *j)
{
	if (control_of != s) {
		s->callbacks++;
		return run_job(s, j);
	}
	pthread_mutex_lock(&s->mu);
	if (j->kind == JOB_ATTACH)
		forget_detaches(s, j->peer);
	s->job = j;
	pthread_cond_broadcast(&s->cv);
	while (!j->done)
		pthread_cond_wait(&s->cv, &s->mu);
	pthread_mutex_unlock(&s->mu);
	return j->rc;
}

static int
cb_check(void *ctx, const struct gnts_attach_req *req, char *err,
	 size_t errlen)
{
	struct job j = { .kind = JOB_CHECK, .req = req, .err = err,
			 .errlen = errlen };

	return hand_over(ctx, &j);
}

static int
cb_attach(void *ctx, gnts_peer_t peer, const struct gnts_peer_cred *cred,
	  const struct gnts_attach_req *req, struct gnts_bell *bell,
	  struct gnts_attach_rsp *rsp, char *err, size_t errlen)
{
	struct job j = { .kind = JOB_ATTACH, .peer = peer, .cred = cred,
			 .req = req, .bell = bell, .rsp = rsp, .err = err,
			 .errlen = errlen };

	return hand_over(ctx, &j);
}

static void
cb_death(void *ctx, gnts_peer_t peer)
{
	struct job j = { .kind = JOB_DEATH, .peer = peer };

	(void)hand_over(ctx, &j);
}

static void
cb_map_denied(void *ctx, gnts_peer_t peer, gnts_ref_t ref, const char *why)
{
	struct job j = { .kind = JOB_MAP_DENIED, .peer = peer, .ref = ref,
			 .why = why };

	(void)hand_over(ctx, &j);
}

static void
cb_suspend(void *ctx, gnts_peer_t peer, const char *why)
{
	struct job j = { .kind = JOB_SUSPEND, .peer = peer, .why = why };

	(void)hand_over(ctx, &j);
}

static void
cb_domain_gone(void *ctx, uint32_t domain)
{
	struct job j = { .kind = JOB_GONE, .domain = domain };

	(void)hand_over(ctx, &j);
}

/* Run the detaches the owner queued (control thread, or at close). */
static void
drain_detaches(struct gnts_srv *s)
{
	struct detach_cmd d;

	for (;;) {
		pthread_mutex_lock(&s->mu);
		if (s->dq_n == 0) {
			pthread_mutex_unlock(&s->mu);
			return;
		}
		d = s->dq[s->dq_head];
		s->dq_head = (s->dq_head + 1) % DETACH_QUEUE;
		s->dq_n--;
		pthread_mutex_unlock(&s->mu);
		if (d.how != 0)
			s->ops->punish(s->impl, d.peer, (enum gnts_punish)d.how,
				       d.why);
		else
			s->ops->detach(s->impl, d.peer, d.status, d.why);
	}
}

/* The control thread has work: a command queued, or stop. */
static void
wake_control(struct gnts_srv *s)
{
	uint64_t one = 1;

	if (s->wake_fd >= 0)
		(void)!write(s->wake_fd, &one, sizeof(one));
}

/*
 * Nothing was pending: wait for the backend's fds (a connection, a
 * message, a deadline) or a wake_control(), at most WAIT_MAX_MS; a
 * backend with nothing to wait on gets a 1 ms nap.  Idle, the thread
 * costs no CPU then (32 idle NFs: it woke 1000 times a second before).
 */
#define WAIT_MAX_MS 100

static void
idle_wait(struct gnts_srv *s)
{
	const struct timespec nap = { 0, 1000000 };
	uint64_t n;

	if (s->ops->wait == NULL || s->wake_fd < 0 ||
	    s->ops->wait(s->impl, s->wake_fd, WAIT_MAX_MS) < 0) {
		nanosleep(&nap, NULL);
		return;
	}
	(void)!read(s->wake_fd, &n, sizeof(n));
}

static void *
control_thread(void *arg)
{
	struct gnts_srv *s = arg;
	struct gnts_srv_counters ct;

	control_of = s;
	while (!atomic_load(&s->stop)) {
		int n;

		drain_detaches(s);
		n = s->ops->poll(s->impl);
		memset(&ct, 0, sizeof(ct));
		if (s->ops->counters != NULL)
			s->ops->counters(s->impl, &ct);
		pthread_mutex_lock(&s->mu);
		s->snap = ct;
		pthread_mutex_unlock(&s->mu);
		if (n <= 0)
			idle_wait(s);
	}
	pthread_mutex_lock(&s->mu);
	s->exited = 1;
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
	return NULL;
}

/*
 * The control thread runs off the caller's CPUs: the caller is the core's
 * data path, pinned to its lcore, and a busy poller; the thread would
 * otherwise share that CPU with it (and wait for it).  Other CPUs exist:
 * those; else the caller's.
 */
static void
control_cpus(pthread_attr_t *attr)
{
	cpu_set_t mine, others;
	long n = sysconf(_SC_NPROCESSORS_ONLN), i;

	if (pthread_getaffinity_np(pthread_self(), sizeof(mine), &mine) != 0)
		return;
	CPU_ZERO(&others);
	for (i = 0; i < n && i < CPU_SETSIZE; i++)
		if (!CPU_ISSET(i, &mine))
			CPU_SET(i, &others);
	if (CPU_COUNT(&others) > 0)
		(void)pthread_attr_setaffinity_np(attr, sizeof(others), &others);
}

int
gnts_srv_open(const char *kind, const struct gnts_srv_cfg *cfg,
	      struct gnts_srv **out, char *err, size_t errlen)
{
	const struct gnts_srv_ops *ops;
	struct gnts_srv_cfg mine = *cfg;
	pthread_attr_t attr;
	struct gnts_srv_cb cb;
	struct gnts_srv *s;
	int rc;

	if (kind == NULL)
		kind = "host";
	ops = gnts_srv_backend(kind);
	if (ops == NULL) {
		snprintf(err, errlen, "backend '%s' is unknown or not built in "
			 "(this build has: %s)", kind, gnts_srv_kinds());
		return -EINVAL;
	}
	s = calloc(1, sizeof(*s));
	if (s == NULL) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	s->ops = ops;
	s->owner_cb = *cfg->cb;
	s->owner_ctx = cfg->ctx;
	cb = (struct gnts_srv_cb){
		.check = cfg->cb->check != NULL ? cb_check : NULL,
		.attach = cb_attach, .death = cb_death,
		.map_denied = cfg->cb->map_denied != NULL ? cb_map_denied :
			      NULL,
		.domain_gone = cfg->cb->domain_gone != NULL ?
			       cb_domain_gone : NULL,
		.suspend = cfg->cb->suspend != NULL ? cb_suspend : NULL,
	};
	mine.cb = &cb;
	mine.ctx = s;
	pthread_mutex_init(&s->mu, NULL);
	pthread_cond_init(&s->cv, NULL);
	/* Without it (fds exhausted) the thread naps as a backend with no
	 * wait op does. */
	s->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	rc = ops->open(&mine, &s->impl, err, errlen);
	s->threaded = rc == 0;	/* before the thread reads it */
	pthread_attr_init(&attr);
	control_cpus(&attr);
	if (rc == 0 && (rc = -pthread_create(&s->thread, &attr,
					     control_thread, s)) < 0) {
		snprintf(err, errlen, "cannot start the control thread: %s",
			 strerror(-rc));
		s->threaded = 0;
		ops->close(s->impl);
	}
	pthread_attr_destroy(&attr);
	if (rc < 0) {
		if (s->wake_fd >= 0)
			close(s->wake_fd);
		free(s);
		return rc;
	}
	pthread_setname_np(s->thread, "xnv-control");
	*out = s;
	return 0;
}

int
gnts_srv_poll(struct gnts_srv *s)
{
	struct job *j;

	pthread_mutex_lock(&s->mu);
	j = s->job;
	s->job = NULL;
	pthread_mutex_unlock(&s->mu);
	if (j == NULL)
		return 0;
	j->rc = run_job(s, j);
	pthread_mutex_lock(&s->mu);
	s->callbacks++;
	j->done = 1;
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
	return 1;
}

/* Queue @p cmd for the control thread (0), or -ENOSPC. */
static int
queue_cmd(struct gnts_srv *s, const struct detach_cmd *cmd)
{
	pthread_mutex_lock(&s->mu);
	if (s->dq_n == DETACH_QUEUE) {
		pthread_mutex_unlock(&s->mu);
		gnts_log(GNTS_LOG_ERR, "control queue full: peer %u not told "
			 "why (%s)", cmd->peer, cmd->why);
		return -ENOSPC;
	}
	s->dq[(s->dq_head + s->dq_n++) % DETACH_QUEUE] = *cmd;
	pthread_mutex_unlock(&s->mu);
	wake_control(s);
	return 0;
}

void
gnts_srv_detach(struct gnts_srv *s, gnts_peer_t peer, int status,
		const char *why)
{
	struct detach_cmd d = { .peer = peer, .status = status };

	if (s->in_death && s->dying == peer)
		return;
	if (!s->threaded) {
		s->ops->detach(s->impl, peer, status, why);
		return;
	}
	snprintf(d.why, sizeof(d.why), "%s", why);
	(void)queue_cmd(s, &d);
}

int
gnts_srv_punish(struct gnts_srv *s, uint32_t domain, enum gnts_punish how,
		const char *why)
{
	struct detach_cmd d = { .peer = domain, .how = (int)how };

	if (s->ops->punish == NULL)
		return -ENOTSUP;
	snprintf(d.why, sizeof(d.why), "%s", why);
	if (!s->threaded) {
		s->ops->punish(s->impl, domain, how, d.why);
		return 0;
	}
	return queue_cmd(s, &d);
}

uint32_t
gnts_srv_domain_of(const struct gnts_srv *s, gnts_peer_t peer)
{
	return s->ops->domain_of(peer);
}

const char *
gnts_srv_domain_words(const struct gnts_srv *s, uint32_t domain, char *buf,
		      size_t len)
{
	s->ops->domain_words(domain, buf, len);
	return buf;
}

void
gnts_srv_counters(struct gnts_srv *s, struct gnts_srv_counters *ct)
{
	pthread_mutex_lock(&s->mu);
	*ct = s->snap;
	ct->callbacks = s->callbacks;
	pthread_mutex_unlock(&s->mu);
}

/* Stop the control thread, running what it hands over meanwhile. */
static void
stop_thread(struct gnts_srv *s)
{
	atomic_store(&s->stop, 1);
	wake_control(s);
	pthread_mutex_lock(&s->mu);
	while (!s->exited) {
		struct job *j = s->job;

		if (j == NULL) {
			pthread_cond_wait(&s->cv, &s->mu);
			continue;
		}
		s->job = NULL;
		pthread_mutex_unlock(&s->mu);
		j->rc = run_job(s, j);
		pthread_mutex_lock(&s->mu);
		j->done = 1;
		pthread_cond_broadcast(&s->cv);
	}
	pthread_mutex_unlock(&s->mu);
	pthread_join(s->thread, NULL);
	s->threaded = 0;
}

void
gnts_srv_close(struct gnts_srv *s)
{
	if (s == NULL)
		return;
	if (s->threaded)
		stop_thread(s);
	drain_detaches(s);
	s->ops->close(s->impl);
	if (s->wake_fd >= 0)
		close(s->wake_fd);
	pthread_cond_destroy(&s->cv);
	pthread_mutex_destroy(&s->mu);
	free(s);
}

const char *
gnts_srv_kind(const struct gnts_srv *s)
{
	return s->ops->name;
}

const char *
gnts_srv_attach_words(const struct gnts_srv *s, gnts_peer_t peer, pid_t pid,
		      char *buf, size_t len)
{
	s->ops->attach_words(peer, pid, buf, len);
	return buf;
}

const char *
gnts_srv_peer_words(const struct gnts_srv *s, gnts_peer_t peer, char *buf,
		    size_t len)
{
	s->ops->peer_words(peer, buf, len);
	return buf;
}

const char *
gnts_srv_death_words(const struct gnts_srv *s)
{
	return s->ops->death_words;
}

const char *
gnts_srv_where(const struct gnts_srv *s, char *buf, size_t len)
{
	s->ops->where(s->impl, buf, len);
	return buf;
}

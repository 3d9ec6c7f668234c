/* SPDX-License-Identifier: BSD-3-Clause */
/* SIGUSR1's table written by a thread of its own (table_out.h). */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "table_out.h"

struct job {
	char *buf;
	size_t len;
};

static struct {
	pthread_mutex_t lock;
	pthread_cond_t done;
	int busy;		/* a writer thread has a table */
	unsigned skipped;	/* asked for while busy, since the last out */
} out = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0 };

static void *
writer(void *arg)
{
	struct job *j = arg;
	unsigned skipped;

	fwrite(j->buf, 1, j->len, stdout);
	fflush(stdout);
	free(j->buf);
	free(j);
	pthread_mutex_lock(&out.lock);
	skipped = out.skipped;
	out.skipped = 0;
	out.busy = 0;
	pthread_cond_broadcast(&out.done);
	pthread_mutex_unlock(&out.lock);
	if (skipped > 0)
		XLOG(NOTICE, "SIGUSR1: stdout took the table; %u asked for "
		     "while it waited were skipped\n", skipped);
	return NULL;
}

/* A detached thread for @p j, with every signal blocked in it (they are
 * the main thread's to take).  @return 0 or an errno. */
static int
start(struct job *j)
{
	pthread_attr_t attr;
	sigset_t all, old;
	pthread_t t;
	int rc;

	if ((rc = pthread_attr_init(&attr)) != 0)
		return rc;
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&t, &attr, writer, j);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	return rc;
}

int
xnv_table_out(char *buf, size_t len)
{
	struct job *j;
	int rc = 0;

	pthread_mutex_lock(&out.lock);
	if (out.busy) {
		if (out.skipped++ == 0)
			XLOG(WARNING, "SIGUSR1: the last table is still being "
			     "written to stdout (is it read?): this one and "
			     "the next until it is out are skipped\n");
		rc = -EBUSY;
	} else {
		out.busy = 1;
	}
	pthread_mutex_unlock(&out.lock);
	if (rc != 0) {
		free(buf);
		return rc;
	}
	j = malloc(sizeof(*j));
	rc = j == NULL ? ENOMEM : 0;
	if (j != NULL) {
		*j = (struct job){ .buf = buf, .len = len };
		rc = start(j);
	}
	if (rc == 0)
		return 0;
	XLOG(ERR, "SIGUSR1: no thread to write the table: %s; skipped\n",
	     strerror(rc));
	free(j);
	free(buf);
	pthread_mutex_lock(&out.lock);
	out.busy = 0;
	pthread_mutex_unlock(&out.lock);
	return -rc;
}

void
xnv_table_out_wait(void)
{
	pthread_mutex_lock(&out.lock);
	while (out.busy)
		pthread_cond_wait(&out.done, &out.lock);
	pthread_mutex_unlock(&out.lock);
}

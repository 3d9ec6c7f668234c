/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The pointer file: how xnv-ctl finds a core from its NF socket.
 *
 * Next to the NF socket (the socket's real path, symlinks resolved, plus
 * ".ctl") the core writes, once telemetry listens:
 *
 *     telemetry=/var/run/dpdk/xnv-1a2b3c4d/dpdk_telemetry.v2
 *     pid=1234
 *
 * written whole (a temporary file renamed over it), removed at a clean
 * exit.  A core killed hard leaves it behind: the reader checks the pid
 * (dom0-core/python/xnv/locate.py).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_eal.h>

#include "core.h"
#include "ctl.h"

#define POINTER_SUFFIX ".ctl"

static char pointer[PATH_MAX + sizeof(POINTER_SUFFIX)];

/* The pointer file's path for @p socket: its real path when it exists
 * (xnv-ctl resolves the same way), else the path as configured. */
static int
pointer_path(const char *socket, char *out, size_t len)
{
	char real[PATH_MAX];
	const char *base = realpath(socket, real) != NULL ? real : socket;
	int n = snprintf(out, len, "%s" POINTER_SUFFIX, base);

	return n > 0 && (size_t)n < len ? 0 : -ENAMETOOLONG;
}

void
xnv_ctl_pointer_write(const struct xnv_core *c)
{
	char tmp[sizeof(pointer) + 16];
	FILE *f;
	int ok;

	if (pointer_path(c->cfg.socket, pointer, sizeof(pointer)) < 0 ||
	    snprintf(tmp, sizeof(tmp), "%s.%d", pointer, (int)getpid()) >=
	    (int)sizeof(tmp)) {
		XLOG(WARNING, "no pointer file for xnv-ctl: path too long\n");
		pointer[0] = '\0';
		return;
	}
	f = fopen(tmp, "w");
	if (f == NULL)
		goto fail;
	ok = fprintf(f, "telemetry=%s/dpdk_telemetry.v2\npid=%d\n",
		     rte_eal_get_runtime_dir(), (int)getpid()) > 0;
	ok = fclose(f) == 0 && ok;
	if (ok && rename(tmp, pointer) == 0) {
		XLOG(INFO, "xnv-ctl finds this core through %s\n", pointer);
		return;
	}
fail:
	XLOG(WARNING, "cannot write %s for xnv-ctl: %s\n", pointer,
	     strerror(errno));
	unlink(tmp);
	pointer[0] = '\0';
}

void
xnv_ctl_pointer_remove(void)
{
	if (pointer[0] != '\0')
		unlink(pointer);
	pointer[0] = '\0';
}

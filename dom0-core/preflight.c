/* SPDX-License-Identifier: BSD-3-Clause */
/* Checks before EAL starts; see preflight.h. */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <gntshare/backend.h>

#include "config_devargs.h"
#include "pcap_check.h"
#include "preflight.h"

int
xnv_preflight_config(const struct xnv_config *cfg, char *err, size_t errlen)
{
	const struct xnv_port_cfg *p;
	char why[1024];
	uint16_t i;

	for (i = 0; i < cfg->n_ports; i++) {
		p = &cfg->ports[i];
		if (xnv_devargs_check_ifaces(p->dev, why, sizeof(why)) < 0) {
			snprintf(err, errlen, "%s:%u: [port %s] dev = %s: %s",
				 cfg->path, p->line, p->name, p->dev, why);
			return -1;
		}
		if (xnv_pcap_check_dev(p->dev, why, sizeof(why)) < 0) {
			snprintf(err, errlen, "%s:%u: port %s: %s", cfg->path,
				 p->line, p->name, why);
			return -1;
		}
	}
	return 0;
}

/*
 * Somebody accepting connections on @p path: 1, with its pid in *@p pid
 * (0 if unknown).  The connection is closed at once; a core takes that
 * as a client that left (gntshare's host_listen.c looks the same way).
 */
static int
core_listening(const char *path, pid_t *pid)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct ucred cred;
	socklen_t len = sizeof(cred);
	int fd, live;

	*pid = 0;
	if (strlen(path) >= sizeof(sa.sun_path))
		return 0;
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return 0;
	/* A live core with a full backlog answers EAGAIN: still there. */
	live = connect(fd, (const struct sockaddr *)&sa, sizeof(sa)) == 0 ||
	       errno == EAGAIN;
	if (live && getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0)
		*pid = cred.pid;
	close(fd);
	return live;
}

static int
check_socket(const char *path, char *err, size_t errlen)
{
	char dir[sizeof(((struct sockaddr_un *)0)->sun_path)], *slash;
	struct stat st;
	pid_t pid;

	if (lstat(path, &st) == 0 && S_ISSOCK(st.st_mode) &&
	    core_listening(path, &pid)) {
		if (pid > 0)
			snprintf(err, errlen, "another xnv-core (pid %d) is "
				 "listening on %s: stop it first, or give this "
				 "one another socket", (int)pid, path);
		else
			snprintf(err, errlen, "another xnv-core is listening "
				 "on %s: stop it first, or give this one "
				 "another socket", path);
		return -1;
	}
	/* Its directory: there (bind() says the rest), or one the
	 * backend can make (one level: mkdir). */
	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash == NULL || slash == dir)
		return 0;
	*slash = '\0';
	if (stat(dir, &st) == 0) {
		if (S_ISDIR(st.st_mode))
			return 0;
		errno = ENOTDIR;
	} else if (errno == ENOENT) {
		char parent[sizeof(dir)];

		snprintf(parent, sizeof(parent), "%s", dir);
		slash = strrchr(parent, '/');
		slash[slash == parent] = '\0';
		if (access(parent, W_OK | X_OK) == 0)
			return 0;
	}
	snprintf(err, errlen, "cannot create the socket directory %s: %s "
		 "(create it, or give [core] socket or --socket a directory "
		 "this user may write)", dir, strerror(errno));
	return -1;
}

/*
 * One core per socket also when two start at the same moment, before
 * either listens: each binds an abstract unix socket named after the
 * path (FNV-1a of it: abstract names are short), and the second bind
 * fails.  The fd is kept for the life of the process, which is what holds
 * the claim; the kernel lets it go when the process ends, however it
 * ends, so there is no file to go stale.
 */
static int
claim_socket(const char *path, char *err, size_t errlen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	uint64_t h = 0xcbf29ce484222325ull;
	const char *c;
	int fd, n;

	for (c = path; *c != '\0'; c++)
		h = (h ^ (uint8_t)*c) * 0x100000001b3ull;
	n = snprintf(sa.sun_path + 1, sizeof(sa.sun_path) - 1,
		     "xnv-core:%016llx", (unsigned long long)h);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd >= 0 && bind(fd, (const struct sockaddr *)&sa,
			    (socklen_t)(offsetof(struct sockaddr_un, sun_path) +
					1 + (size_t)n)) == 0)
		return 0;	/* fd held until exit: the claim */
	if (errno == EADDRINUSE)
		snprintf(err, errlen, "another xnv-core is starting on %s: "
			 "stop it first, or give this one another socket",
			 path);
	else
		snprintf(err, errlen, "cannot claim the socket %s: %s", path,
			 strerror(errno));
	if (fd >= 0)
		close(fd);
	return -1;
}

/* @p path can be written (made and removed again if it was not there;
 * opened non-blocking: a FIFO nobody reads must not hang the start). */
static int
check_writable(const char *path, char *err, size_t errlen)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK),
	    made = 0;

	if (fd < 0 && errno == ENOENT) {
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		made = fd >= 0;
	}
	if (fd < 0) {
		snprintf(err, errlen, "--stats-json %s: cannot write it: %s",
			 path, strerror(errno));
		return -1;
	}
	close(fd);
	if (made)
		unlink(path);
	return 0;
}

/* EAL's VFIO setup (run whatever the devices) gives up, with "Cannot init
 * VFIO", when sysfs has no module directory: a container that mounts only
 * part of /sys (systemd-nspawn --private-network) looks like that. */
static int
check_sysfs_modules(char *err, size_t errlen)
{
	struct stat st;

	if (stat("/sys/module", &st) == 0)
		return 0;
	snprintf(err, errlen, "/sys/module: %s: DPDK's EAL needs it to start "
		 "(its VFIO check); in a container, bind-mount it read-only "
		 "(systemd-nspawn --bind-ro=/sys/module, docker -v "
		 "/sys/module:/sys/module:ro)", strerror(errno));
	return -1;
}

int
xnv_preflight_start(const struct xnv_config *cfg, const char *backend,
		    const char *stats_json, char *err, size_t errlen)
{
	const struct gnts_srv_ops *ops = gnts_srv_backend(backend ? backend :
							  "host");

	/* The socket is checked where NFs connect on it; the path is
	 * claimed whatever the backend (it names the core: its EAL file
	 * prefix, its control pointer). */
	if ((ops != NULL && ops->listens &&
	     check_socket(cfg->socket, err, errlen) < 0) ||
	    claim_socket(cfg->socket, err, errlen) < 0)
		return -1;
	if (stats_json != NULL && check_writable(stats_json, err, errlen) < 0)
		return -1;
	return check_sysfs_modules(err, errlen);
}

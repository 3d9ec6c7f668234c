/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Host backend, core side: the socket file and its directory.  Bound
 * under a temporary name, given its mode and group, and renamed once it
 * listens; a stale file left by a dead core is removed, a live core's is
 * left alone.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "gntshare/backend.h"
#include "host_listen.h"

static int
fill_addr(struct sockaddr_un *sa, const char *path)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sa->sun_path))
		return -ENAMETOOLONG;
	strcpy(sa->sun_path, path);
	return 0;
}

/* 1 if something accepts connections on @p path. */
static int
socket_live(const struct sockaddr_un *sa)
{
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK,
			0);
	int live;

	if (fd < 0)
		return 0;
	/* Non-blocking: a live core with a full backlog answers EAGAIN,
	 * which still means somebody is there. */
	live = connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) == 0 ||
	       errno == EAGAIN;
	close(fd);
	return live;
}

/*
 * Bind and listen under a temporary name, then rename it to @p path: the
 * socket file appears only once it accepts connections, and with its
 * mode and group (@p cfg), so an NF started the moment it exists is never
 * refused.  (A path too long for the
 * temporary name is bound directly.)
 */
static int
bind_listen(int fd, const struct sockaddr_un *sa, const char *path,
	    const struct gnts_srv_cfg *cfg)
{
	struct sockaddr_un tmp;
	char name[sizeof(tmp.sun_path) + 8];
	mode_t mode = cfg->socket_mode != 0 ? cfg->socket_mode : 0600;
	int direct;

	snprintf(name, sizeof(name), "%s.new", path);
	direct = fill_addr(&tmp, name) < 0;
	if (direct)
		tmp = *sa;
	else
		unlink(name);	/* left by a core that died right here */
	if (bind(fd, (const struct sockaddr *)&tmp, sizeof(tmp)) < 0 ||
	    (cfg->socket_group_set &&
	     chown(tmp.sun_path, (uid_t)-1, cfg->socket_gid) < 0) ||
	    chmod(tmp.sun_path, mode) < 0 || listen(fd, 64) < 0 ||
	    (!direct && rename(tmp.sun_path, path) < 0)) {
		int e = -errno;

		if (!direct)
			unlink(tmp.sun_path);
		return e;
	}
	return 0;
}

/*
 * The socket's directory (/run/xnv), made if missing: private, but
 * searchable by the group and others the socket's mode lets in (0750 for
 * 0660), and in the socket's group.  An existing one is left as it is
 * (said once if it keeps them out).
 */
static int
socket_dir(const struct gnts_srv_cfg *cfg, char *err, size_t errlen)
{
	char dir[sizeof(((struct sockaddr_un *)0)->sun_path)], *slash;
	unsigned m = cfg->socket_mode != 0 ? cfg->socket_mode : 0600;
	mode_t dm = 0700 | (m & 0070 ? 0050 : 0) | (m & 0007 ? 0005 : 0);
	mode_t x = dm & 0111;	/* what it takes to reach the socket */
	struct stat st;

	snprintf(dir, sizeof(dir), "%s", cfg->socket);
	slash = strrchr(dir, '/');
	if (slash == NULL || slash == dir)
		return 0;
	*slash = '\0';
	if (mkdir(dir, 0700) < 0) {
		if (errno != EEXIST) {
			int e = -errno;

			snprintf(err, errlen, "cannot create the socket "
				 "directory %s: %s", dir, strerror(-e));
			return e;
		}
		if (stat(dir, &st) == 0 && (st.st_mode & x) != x)
			gnts_log(GNTS_LOG_WARNING, "socket directory %s is "
				 "%04o (left as it is): not every NF socket "
				 "mode %04o lets in can reach the socket", dir,
				 (unsigned)(st.st_mode & 07777), m);
		return 0;	/* else bind() says what is wrong */
	}
	if ((cfg->socket_group_set &&
	     chown(dir, (uid_t)-1, cfg->socket_gid) < 0) ||
	    chmod(dir, dm) < 0) {
		int e = -errno;

		snprintf(err, errlen, "cannot set up %s: %s", dir,
			 strerror(-e));
		return e;
	}
	return 0;
}

int
gnts_host_listen(const struct gnts_srv_cfg *cfg, char *err, size_t errlen)
{
	const char *path = cfg->socket;
	struct sockaddr_un sa;
	struct stat st;
	int fd, rc;

	if (fill_addr(&sa, path) < 0) {
		snprintf(err, errlen, "socket path too long: %s", path);
		return -ENAMETOOLONG;
	}
	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode)) {
			snprintf(err, errlen,
				 "%s exists and is not a socket", path);
			return -EEXIST;
		}
		if (socket_live(&sa)) {
			snprintf(err, errlen,
				 "another xnv-core is listening on %s", path);
			return -EADDRINUSE;
		}
		unlink(path);
		gnts_log(GNTS_LOG_WARNING,
			 "removed stale socket %s (its core is gone)", path);
	}
	rc = socket_dir(cfg, err, errlen);
	if (rc < 0)
		return rc;
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	rc = fd < 0 ? -errno : bind_listen(fd, &sa, path, cfg);
	if (rc < 0) {
		snprintf(err, errlen, "cannot listen on %s: %s", path,
			 strerror(-rc));
		if (fd >= 0)
			close(fd);
		return rc;
	}
	return fd;
}

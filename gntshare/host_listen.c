/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Host backend, core side: the socket file.  Bound under a temporary
 * name and renamed once it listens; a stale file left by a dead core is
 * removed, a live core's is left alone.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "gntshare/gntshare.h"
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
 * socket file appears only once it accepts connections, so an NF started
 * the moment it exists is never refused.  (A path too long for the
 * temporary name is bound directly.)
 */
static int
bind_listen(int fd, const struct sockaddr_un *sa, const char *path)
{
	struct sockaddr_un tmp;
	char name[sizeof(tmp.sun_path) + 8];
	int direct;

	snprintf(name, sizeof(name), "%s.new", path);
	direct = fill_addr(&tmp, name) < 0;
	if (direct)
		tmp = *sa;
	else
		unlink(name);	/* left by a core that died right here */
	if (bind(fd, (const struct sockaddr *)&tmp, sizeof(tmp)) < 0 ||
	    chmod(tmp.sun_path, 0600) < 0 || listen(fd, 64) < 0 ||
	    (!direct && rename(tmp.sun_path, path) < 0)) {
		int e = -errno;

		if (!direct)
			unlink(tmp.sun_path);
		return e;
	}
	return 0;
}

int
gnts_host_listen(const char *path, char *err, size_t errlen)
{
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
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	rc = fd < 0 ? -errno : bind_listen(fd, &sa, path);
	if (rc < 0) {
		snprintf(err, errlen, "cannot listen on %s: %s", path,
			 strerror(-rc));
		if (fd >= 0)
			close(fd);
		return rc;
	}
	return fd;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* xnv-xl running xl, and reading a small file (xl_run.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gntshare/xen.h>

#include "xl_run.h"
#include "xs_dev.h"

const char *xl_bin = "xl";

int
xl_read_file(const char *path, char **data, size_t *len)
{
	FILE *f = fopen(path, "r");
	size_t cap = 4096, n = 0;
	char *b;

	if (f == NULL) {
		ERR("cannot read %s: %s", path, strerror(errno));
		return -1;
	}
	b = malloc(cap);
	while (b != NULL) {
		size_t k = fread(b + n, 1, cap - n, f);

		n += k;
		if (k == 0)
			break;
		if (n == cap) {
			char *nb = cap > (1u << 20) ? NULL : realloc(b, cap * 2);

			if (nb == NULL) {
				free(b);
				b = NULL;
				break;
			}
			b = nb;
			cap *= 2;
		}
	}
	fclose(f);
	if (b == NULL) {
		ERR("%s: larger than 1 MiB", path);
		return -1;
	}
	*data = b;
	*len = n;
	return 0;
}

/* Run argv; with @p out, capture the first line of its stdout and drop
 * its stderr (a query: the caller says what a failure means, in one
 * line; only a program that cannot run is said here). */
int
xl_run(char *const argv[], char *out, size_t outlen)
{
	int fd[2], st, err = 2;
	pid_t pid;

	if (out != NULL && pipe(fd) < 0)
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		if (out != NULL) {
			int nul = open("/dev/null", O_WRONLY);

			err = fcntl(2, F_DUPFD_CLOEXEC, 3);
			dup2(fd[1], 1);
			if (nul >= 0)
				dup2(nul, 2);
			close(fd[0]);
			close(fd[1]);
		}
		execvp(argv[0], argv);
		dprintf(err, "xnv-xl: cannot run %s: %s\n", argv[0],
			strerror(errno));
		_exit(127);
	}
	if (out != NULL) {
		ssize_t n;

		close(fd[1]);
		n = read(fd[0], out, outlen - 1);
		out[n > 0 ? n : 0] = '\0';
		out[strcspn(out, "\n")] = '\0';
		close(fd[0]);
	}
	if (waitpid(pid, &st, 0) < 0)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

int
xl_domid(const char *name)
{
	char *argv[] = { (char *)xl_bin, "domid", (char *)name, NULL };
	char out[32];
	long v;
	char *e;

	if (xl_run(argv, out, sizeof(out)) != 0)
		return -1;
	v = strtol(out, &e, 10);
	return (e == out || *e != '\0' || v <= 0 ||
		v > GNTS_XEN_MAX_DOMID) ? -1 : (int)v;
}

int
xl_simple(const char *verb, const char *name)
{
	char *argv[] = { (char *)xl_bin, (char *)verb, (char *)name, NULL };

	return xl_run(argv, NULL, 0);
}

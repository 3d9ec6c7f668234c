/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * xt-tel: one DPDK telemetry command for the Dom0 scenarios (tests/xen),
 * whose initramfs has no Python for xnv-ctl: the same protocol xnv-ctl
 * and dpdk-telemetry.py speak (SOCK_SEQPACKET, a JSON greeting, then
 * "CMD,PARAM" -> one JSON reply).
 *
 *   xt-tel RUNTIME_DIR CMD [PARAM]   prints the reply; exit 0 if it has
 *                                    no "error" key, 1 if it has, 2 on
 *                                    a socket error
 */
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int
main(int argc, char **argv)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	char buf[16384], cmd[512];
	ssize_t n;
	int fd;

	if (argc < 3) {
		fprintf(stderr, "usage: xt-tel RUNTIME_DIR CMD [PARAM]\n");
		return 2;
	}
	snprintf(a.sun_path, sizeof(a.sun_path), "%s/dpdk_telemetry.v2",
		 argv[1]);
	snprintf(cmd, sizeof(cmd), "%s%s%s", argv[2], argc > 3 ? "," : "",
		 argc > 3 ? argv[3] : "");
	fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    read(fd, buf, sizeof(buf)) <= 0 ||		/* the greeting */
	    write(fd, cmd, strlen(cmd)) < 0 ||
	    (n = read(fd, buf, sizeof(buf) - 1)) <= 0) {
		perror("xt-tel");
		return 2;
	}
	buf[n] = '\0';
	printf("%s\n", buf);
	return strstr(buf, "\"error\"") != NULL;
}

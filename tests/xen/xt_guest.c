// SPDX-License-Identifier: BSD-3-Clause
/*
 * xt-guest: the DomU side of tests/xen.  Runs commands Dom0 writes into this
 * domain's XenStore and answers each one (XEN-IN-QEMU.md section 7):
 *
 *   Dom0 writes  data/refs/<set>/n, data/refs/<set>/<k> ("r r r ...", <=256)
 *   Dom0 writes  data/cmd  = "<seq> <op> <args...>"
 *   guest writes data/ack  = "<seq> ok [detail]" | "<seq> err <errno> <what>"
 *
 *   map <set> <slot> <rw|ro>   map the refs of <set> (granting domain 0)
 *   fill <slot> <seed>         write the pattern of <seed> over the mapping
 *   check <slot> <seed>        verify it: "ok" or "err 0 word <i> ..."
 *   unmap <slot>               unmap
 *   exit                       ack and exit 0
 *
 * Relative XenStore paths resolve under /local/domain/<own domid>/.
 * usage: xt-guest <deadline seconds>
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <xengnttab.h>
#include <xenstore.h>

#define NSLOTS 8

static struct xs_handle *xs;
static xengnttab_handle *gt;
static struct {
	void *va;
	uint32_t n;
} slot[NSLOTS];

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static uint64_t pattern(uint64_t seed, size_t i)
{
	return (seed * 0x9e3779b97f4a7c15ull) ^ (i * 0xbf58476d1ce4e5b9ull) ^ i;
}

static int put(const char *path, const char *val)
{
	return xs_write(xs, XBT_NULL, path, val, strlen(val)) ? 0 : -1;
}

/* Read data/refs/<set>: returns count, *refs malloc'd; -1 on error. */
static int read_refs(const char *set, uint32_t **refs)
{
	char path[128], *v, *p, *end;
	unsigned int len, n, k, got = 0;

	snprintf(path, sizeof(path), "data/refs/%s/n", set);
	v = xs_read(xs, XBT_NULL, path, &len);
	if (!v)
		return -1;
	n = strtoul(v, NULL, 10);
	free(v);
	*refs = calloc(n ? n : 1, sizeof(**refs));
	for (k = 0; got < n; k++) {
		snprintf(path, sizeof(path), "data/refs/%s/%u", set, k);
		v = xs_read(xs, XBT_NULL, path, &len);
		if (!v)
			break;
		for (p = v; got < n; p = end) {
			unsigned long r = strtoul(p, &end, 10);

			if (end == p)
				break;
			(*refs)[got++] = r;
		}
		free(v);
	}
	if (got != n) {
		free(*refs);
		return -1;
	}
	return n;
}

static void run(const char *cmd, char *out, size_t outlen)
{
	char op[16] = "", a1[64] = "", a2[64] = "";
	unsigned int s;
	uint64_t seed, *w;
	size_t i, words;

	sscanf(cmd, "%15s %63s %63s %*s", op, a1, a2);
	s = strtoul(a1, NULL, 10);
	if (!strcmp(op, "map")) {
		uint32_t *refs;
		int n, prot = PROT_READ;

		sscanf(cmd, "%*s %63s %u %63s", a1, &s, a2);
		if (!strcmp(a2, "rw"))
			prot |= PROT_WRITE;
		n = read_refs(a1, &refs);
		if (n <= 0 || s >= NSLOTS || slot[s].va) {
			snprintf(out, outlen, "err %d refs of %s", EINVAL, a1);
			return;
		}
		errno = 0;
		slot[s].va = xengnttab_map_domain_grant_refs(gt, n, 0, refs,
							     prot);
		free(refs);
		if (!slot[s].va) {
			snprintf(out, outlen, "err %d map", errno);
			return;
		}
		slot[s].n = n;
		snprintf(out, outlen, "ok %d pages", n);
		return;
	}
	if (s >= NSLOTS || (strcmp(op, "exit") && !slot[s].va)) {
		snprintf(out, outlen, "err %d no mapping in slot", EINVAL);
		return;
	}
	words = (size_t)slot[s].n * 4096 / 8;
	w = slot[s].va;
	seed = strtoull(a2, NULL, 0);
	if (!strcmp(op, "fill")) {
		for (i = 0; i < words; i++)
			w[i] = pattern(seed, i);
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		snprintf(out, outlen, "ok");
	} else if (!strcmp(op, "check")) {
		for (i = 0; i < words; i++)
			if (w[i] != pattern(seed, i))
				break;
		if (i == words)
			snprintf(out, outlen, "ok");
		else
			snprintf(out, outlen, "err 0 word %zu is %#" PRIx64
				 " want %#" PRIx64, i, w[i], pattern(seed, i));
	} else if (!strcmp(op, "unmap")) {
		int r = xengnttab_unmap(gt, slot[s].va, slot[s].n);

		slot[s].va = NULL;
		snprintf(out, outlen, r ? "err %d unmap" : "ok", errno);
	} else if (!strcmp(op, "exit")) {
		snprintf(out, outlen, "ok bye");
	} else {
		snprintf(out, outlen, "err %d unknown op", EINVAL);
	}
}

int main(int argc, char **argv)
{
	double deadline = now() + (argc > 1 ? atof(argv[1]) : 60);
	unsigned long last = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	xs = xs_open(0);
	gt = xengnttab_open(NULL, 0);
	if (!xs || !gt) {
		fprintf(stderr, "xt-guest: open xenstore/gntdev: %s\n",
			strerror(errno));
		return 1;
	}
	put("data/ready", "1");
	while (now() < deadline) {
		char out[256], ack[300], *cmd;
		unsigned int len;
		unsigned long seq;

		cmd = xs_read(xs, XBT_NULL, "data/cmd", &len);
		if (!cmd || sscanf(cmd, "%lu", &seq) != 1 || seq <= last) {
			free(cmd);
			usleep(5000);
			continue;
		}
		last = seq;
		run(strchr(cmd, ' ') ? strchr(cmd, ' ') + 1 : "", out,
		    sizeof(out));
		printf("xt-guest: [%s] -> %s\n", cmd, out);
		snprintf(ack, sizeof(ack), "%lu %s", seq, out);
		put("data/ack", ack);
		if (!strncmp(out, "ok bye", 6)) {
			free(cmd);
			return 0;
		}
		free(cmd);
	}
	fprintf(stderr, "xt-guest: deadline passed\n");
	return 2;
}

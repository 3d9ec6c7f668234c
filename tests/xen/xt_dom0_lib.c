// SPDX-License-Identifier: BSD-3-Clause
/*
 * What xt-dom0's checks (xt_dom0.c) are made of; see xt_dom0_lib.h.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/klog.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <xenstore.h>

#include <gntshare/kmod.h>

#include "xt_dom0_lib.h"

struct xs_handle *xs;
int failed, passed;
static unsigned long seq;

/* XT_SCALE (the Dom0 command line's xt_scale=, from XNV_TIME_SCALE):
 * every timeout below is multiplied by it. */
double scale = 1;

double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

void check(const char *name, int ok, const char *fmt, ...)
{
	static double last;
	double t = now();
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (!last)
		last = t;
	if (ok) {
		passed++;
		printf("XT-CHECK ok %s (%s) [%.1f s]\n", name, msg, t - last);
	} else {
		failed++;
		printf("XT-CHECK FAIL %s: %s [%.1f s]\n", name, msg, t - last);
	}
	last = t;
}

static uint64_t pattern(uint64_t seed, size_t i)
{
	return (seed * 0x9e3779b97f4a7c15ull) ^ (i * 0xbf58476d1ce4e5b9ull) ^ i;
}

void fill(void *va, unsigned int pages, uint64_t seed)
{
	uint64_t *w = va;
	size_t i;

	for (i = 0; i < (size_t)pages * PAGE / 8; i++)
		w[i] = pattern(seed, i);
}

long verify(const void *va, unsigned int pages, uint64_t seed)
{
	const uint64_t *w = va;
	size_t i;

	for (i = 0; i < (size_t)pages * PAGE / 8; i++)
		if (w[i] != pattern(seed, i))
			return (long)i;
	return -1;
}

/* ---- memory --------------------------------------------------------- */

int buf_new(struct buf *b, unsigned int pages)
{
	b->pages = pages;
	b->fd = memfd_create("xt-pool", MFD_CLOEXEC);
	if (b->fd < 0 || ftruncate(b->fd, (off_t)pages * PAGE))
		return -errno;
	b->va = mmap(NULL, (size_t)pages * PAGE, PROT_READ | PROT_WRITE,
		     MAP_SHARED, b->fd, 0);
	return b->va == MAP_FAILED ? -errno : 0;
}

void buf_drop(struct buf *b)
{
	munmap(b->va, (size_t)b->pages * PAGE);
	close(b->fd);
	b->va = NULL;
}

/* Dirty a lot of fresh memory so that freed pages would be reused. */
void churn(unsigned int mib)
{
	size_t len = (size_t)mib << 20;
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return;
	memset(p, 0x5a, len);
	munmap(p, len);
}

/* ---- module --------------------------------------------------------- */

int gs_grant(int fd, void *va, unsigned int n, unsigned int dom,
	     unsigned int flags, uint32_t *refs, uint32_t *handle)
{
	struct gntshare_ioc_grant g = {
		.addr = (uintptr_t)va, .refs = (uintptr_t)refs,
		.nr_pages = n, .refs_count = n, .domid = dom, .flags = flags,
	};

	if (ioctl(fd, GNTSHARE_IOC_GRANT, &g))
		return -errno;
	*handle = g.handle;
	return 0;
}

int gs_revoke(int fd, uint32_t h, unsigned int flags, unsigned int *busy)
{
	struct gntshare_ioc_revoke r = { .handle = h, .flags = flags };

	if (ioctl(fd, GNTSHARE_IOC_REVOKE, &r))
		return -errno;
	*busy = r.busy;
	return 0;
}

int gs_status(int fd, uint32_t h, struct gntshare_ioc_status *st)
{
	memset(st, 0, sizeof(*st));
	st->handle = h;
	return ioctl(fd, GNTSHARE_IOC_STATUS, st) ? -errno : 0;
}

/* Poll STATUS until DONE; returns seconds waited or -1 on timeout/error. */
double drain(int fd, uint32_t h, double limit, unsigned int *last)
{
	double t0 = now();
	struct gntshare_ioc_status st;

	while (now() - t0 < limit * scale) {
		if (gs_status(fd, h, &st))
			return -1;
		*last = st.busy;
		if (st.state == GNTSHARE_STATE_DONE)
			return now() - t0;
		usleep(20000);
	}
	return -1;
}

/* ---- guests over XenStore ------------------------------------------- */

static int xsw(unsigned int dom, const char *rel, const char *val)
{
	char path[128];

	snprintf(path, sizeof(path), "/local/domain/%u/%s", dom, rel);
	return xs_write(xs, XBT_NULL, path, val, strlen(val)) ? 0 : -1;
}

static char *xsr(unsigned int dom, const char *rel)
{
	char path[128];
	unsigned int len;

	snprintf(path, sizeof(path), "/local/domain/%u/%s", dom, rel);
	return xs_read(xs, XBT_NULL, path, &len);
}

/* Publish refs as data/refs/<set>/<k> ("r r ...", 256 per node), n last. */
void publish(unsigned int dom, const char *set, const uint32_t *refs,
	     unsigned int n)
{
	char rel[96], val[256 * 11 + 1];
	unsigned int i, k;

	for (k = 0; k * 256 < n; k++) {
		size_t off = 0;

		for (i = k * 256; i < n && i < (k + 1) * 256; i++)
			off += snprintf(val + off, sizeof(val) - off, "%u ",
					refs[i]);
		snprintf(rel, sizeof(rel), "data/refs/%s/%u", set, k);
		xsw(dom, rel, val);
	}
	snprintf(rel, sizeof(rel), "data/refs/%s/n", set);
	snprintf(val, sizeof(val), "%u", n);
	xsw(dom, rel, val);
}

/*
 * Send one command, wait for its ack.  Returns 0 for "ok", the errno of
 * "err <errno>" (0 is mapped to -2: a failed check), -1 on timeout.
 * The ack's text goes to reply.
 */
int rpc(unsigned int dom, char *reply, size_t rlen, const char *fmt, ...)
{
	char cmd[256], body[200];
	double t0 = now();
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(body, sizeof(body), fmt, ap);
	va_end(ap);
	snprintf(cmd, sizeof(cmd), "%lu %s", ++seq, body);
	xsw(dom, "data/cmd", cmd);
	while (now() - t0 < 30 * scale) {
		char *a = xsr(dom, "data/ack");
		unsigned long s;
		int n = 0, e;

		if (a && sscanf(a, "%lu %n", &s, &n) == 1 && s == seq) {
			snprintf(reply, rlen, "dom%u %s: %s", dom, body, a + n);
			if (!strncmp(a + n, "ok", 2))
				e = 0;
			else if (!strncmp(a + n, "err ", 4))
				e = atoi(a + n + 4) ? atoi(a + n + 4) : -2;
			else
				e = -2;
			free(a);
			return e;
		}
		free(a);
		usleep(5000);
	}
	snprintf(reply, rlen, "dom%u %s: no answer in %g s", dom, body,
		 30 * scale);
	return -1;
}

int wait_ready(unsigned int dom, double limit)
{
	double t0 = now();

	while (now() - t0 < limit * scale) {
		char *v = xsr(dom, "data/ready");

		if (v) {
			free(v);
			return 0;
		}
		usleep(20000);
	}
	return -1;
}

/* Run a list of guest commands (STEPS()); stop at the first that is not ok. */
int steps(int *r, char *msg, size_t mlen, ...)
{
	va_list ap;
	unsigned int dom;

	va_start(ap, mlen);
	while ((dom = va_arg(ap, unsigned int))) {
		const char *c = va_arg(ap, const char *);

		*r = rpc(dom, msg, mlen, "%s", c);
		if (*r) {
			va_end(ap);
			return -1;
		}
	}
	va_end(ap);
	return 0;
}

/* ---- kernel log ----------------------------------------------------- */

int klog_has(const char *s)
{
	static char log[1 << 17];
	int n = klogctl(3, log, sizeof(log) - 1);

	if (n < 0)
		return 0;
	log[n] = 0;
	return strstr(log, s) != NULL;
}

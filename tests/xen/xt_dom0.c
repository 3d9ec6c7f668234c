// SPDX-License-Identifier: BSD-3-Clause
/*
 * xt-dom0: the Dom0 side of tests/xen.  Drives the gntshare kernel module
 * (gntshare/include/gntshare/kmod.h) and two DomUs running xt-guest, and
 * prints one line per check:
 *   XT-CHECK ok <name> (<detail>)
 *   XT-CHECK FAIL <name>: <reason>
 * Exit status: number of failed checks (0 = all passed).
 * What the checks are made of (the check lines, memory, the module's
 * ioctls, the guests over XenStore) is xt_dom0_lib.[ch].
 *
 * usage: xt-dom0 <pages> <gnttab_max_frames> <domid1> <domid2>
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xenstore.h>

#include <gntshare/kmod.h>

#include "xt_dom0_lib.h"

#define CHURN_MIB 96u	/* fresh memory dirtied to reuse freed pages */

/* ---- checks --------------------------------------------------------- */

static void check_device(int *fd)
{
	struct gntshare_ioc_version v = { 0 };
	struct stat sb;

	if (stat(GNTSHARE_KMOD_DEVICE, &sb)) {
		check("device", 0, "stat %s: %s", GNTSHARE_KMOD_DEVICE,
		      strerror(errno));
		return;
	}
	*fd = open(GNTSHARE_KMOD_DEVICE, O_RDWR | O_CLOEXEC);
	if (*fd < 0 || ioctl(*fd, GNTSHARE_IOC_VERSION, &v)) {
		check("device", 0, "open/VERSION: %s", strerror(errno));
		return;
	}
	check("device", S_ISCHR(sb.st_mode) && (sb.st_mode & 07777) == 0600 &&
	      v.magic == GNTSHARE_KMOD_MAGIC && v.abi == GNTSHARE_KMOD_ABI &&
	      v.page_size == PAGE,
	      "%s mode %04o magic %#x abi %u max_pages %u page %u",
	      GNTSHARE_KMOD_DEVICE, sb.st_mode & 07777, v.magic, v.abi,
	      v.max_pages, v.page_size);
}

static void check_bad_args(int fd, unsigned int d1)
{
	struct gntshare_ioc_grant g;
	struct gntshare_ioc_status st;
	uint32_t refs[4], h;
	unsigned int busy;
	char *ro, *hole, *anon, *shro, *gap;
	struct buf b;
	int e[11], ok;

	buf_new(&b, 4);
	ro = mmap(NULL, 4 * PAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	hole = mmap(NULL, 4 * PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	anon = mmap(NULL, 4 * PAGE, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	shro = mmap(NULL, 4 * PAGE, PROT_READ, MAP_SHARED, b.fd, 0);
	gap = mmap(NULL, 4 * PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	munmap(gap, 4 * PAGE);		/* a hole nothing is mapped in */
	e[0] = gs_grant(fd, (char *)b.va + 8, 1, d1, 0, refs, &h);
	e[1] = gs_grant(fd, b.va, 0, d1, 0, refs, &h);
	memset(&g, 0, sizeof(g));
	g.addr = (uintptr_t)b.va;
	g.refs = (uintptr_t)refs;
	g.nr_pages = 4;
	g.refs_count = 3;
	g.domid = d1;
	e[2] = ioctl(fd, GNTSHARE_IOC_GRANT, &g) ? -errno : 0;
	e[3] = gs_grant(fd, b.va, 4, 0x7ff0, 0, refs, &h);
	e[4] = gs_grant(fd, hole, 4, d1, 0, refs, &h);
	e[5] = gs_grant(fd, ro, 4, d1, 0, refs, &h);
	e[6] = gs_revoke(fd, 12345, 0, &busy);
	e[7] = gs_status(fd, 12345, &st);
	e[8] = gs_grant(fd, anon, 4, d1, 0, refs, &h);
	e[9] = gs_grant(fd, shro, 4, d1, 0, refs, &h);
	e[10] = gs_grant(fd, gap, 4, d1, 0, refs, &h);
	/* private or anonymous memory is of the wrong kind (EINVAL), a
	 * read-only shared mapping cannot be pinned for writing (EFAULT) */
	ok = e[0] == -EINVAL && e[1] == -EINVAL && e[2] == -EINVAL &&
	     e[3] == -EINVAL && e[4] == -EINVAL && e[5] == -EINVAL &&
	     e[6] == -ENOENT && e[7] == -ENOENT && e[8] == -EINVAL &&
	     e[9] == -EFAULT && e[10] == -EFAULT;
	check("grant-bad-arguments", ok,
	      "unaligned %d, 0 pages %d, short refs %d, reserved domid %d, private PROT_NONE %d, private read-only %d, revoke/status unknown handle %d/%d, private anonymous rw %d, shared memfd read-only %d, unmapped %d",
	      e[0], e[1], e[2], e[3], e[4], e[5], e[6], e[7], e[8], e[9],
	      e[10]);
	munmap(ro, 4 * PAGE);
	munmap(hole, 4 * PAGE);
	munmap(anon, 4 * PAGE);
	munmap(shro, 4 * PAGE);
	buf_drop(&b);
}

#define BUDGET "/sys/module/gntshare/parameters/max_pinned_pages"

static int put_budget(const char *v)
{
	FILE *f = fopen(BUDGET, "w");
	int r;

	if (f == NULL)
		return -errno;
	r = fputs(v, f) < 0 ? -EIO : 0;
	return fclose(f) ? -errno : r;
}

/* max_pinned_pages = 2: a grant of 4 pages is refused with EDQUOT and a
 * kernel log line naming the parameter; back to 0 (half of RAM) it goes
 * through. */
static void check_budget(int fd, unsigned int d1)
{
	uint32_t refs[4], h = 0;
	unsigned int busy = 0;
	struct buf b;
	int w, e1, e2, e3 = -1, logged;

	buf_new(&b, 4);
	w = put_budget("2");
	e1 = w ? w : gs_grant(fd, b.va, 4, d1, 0, refs, &h);
	w = put_budget("0");
	e2 = w ? w : gs_grant(fd, b.va, 4, d1, 0, refs, &h);
	if (!e2)
		e3 = gs_revoke(fd, h, 0, &busy);
	logged = system("dmesg | grep -q 'max_pinned_pages 2 '") == 0;
	check("pinned-pages-budget", e1 == -EDQUOT && logged && !e2 && !e3 &&
	      !busy, "max_pinned_pages=2: 4-page grant %d (want %d), kernel log names it: %s; =0: grant %d, revoke %d busy %u",
	      e1, -EDQUOT, logged ? "yes" : "no", e2, e3, busy);
	buf_drop(&b);
}

/* What the checks below share: the module's fd, the guests, the pool
 * granted to both and its refs. */
struct xt {
	int fd;
	unsigned int n, maxf, d1, d2;
	uint32_t *refs1, *refs2, *refs3, h1, h2;
	struct buf pool;
	char msg[512];
};

/* (1) one buffer, granted to two domains: own refs each, same pages; then
 * zero copy: every party sees every other party's writes.  @return 0, or
 * -1 when the grant failed (nothing after it can run). */
static int check_shared_pool(struct xt *x)
{
	struct gntshare_ioc_status st;
	unsigned int n = x->n, d1 = x->d1, d2 = x->d2;
	int e, r, i, j, overlap = 0;
	double t;

	e = buf_new(&x->pool, n);
	if (!e)
		e = gs_grant(x->fd, x->pool.va, n, d1, 0, x->refs1, &x->h1);
	if (!e)
		e = gs_grant(x->fd, x->pool.va, n, d2, 0, x->refs2, &x->h2);
	for (i = 0; !e && i < (int)n; i++)
		for (j = 0; j < (int)n; j++)
			overlap += x->refs1[i] == x->refs2[j];
	if (!e)
		e = gs_status(x->fd, x->h1, &st);
	check("grant-one-pool-to-two-domains",
	      !e && !overlap && st.state == GNTSHARE_STATE_GRANTED &&
	      st.domid == d1 && st.nr_pages == n && st.busy == n,
	      "%u pages, handles %u/%u, refs dom%u %u..%u, dom%u %u..%u, shared refs %d, err %d",
	      n, x->h1, x->h2, d1, x->refs1[0], x->refs1[n - 1], d2,
	      x->refs2[0], x->refs2[n - 1], overlap, e);
	if (e)
		return -1;
	publish(d1, "pool", x->refs1, n);
	publish(d2, "pool", x->refs2, n);
	publish(d2, "foreign", x->refs1, n);

	t = now();
	fill(x->pool.va, n, 1);
	r = STEPS(&e, x->msg, d1, "map pool 0 rw", d2, "map pool 0 rw",
		  d1, "check 0 1", d1, "fill 0 2", d2, "check 0 2",
		  d2, "fill 0 3", d1, "check 0 3");
	if (!r && verify(x->pool.va, n, 3) >= 0) {
		r = -1;
		snprintf(x->msg, sizeof(x->msg),
			 "Dom0 does not see dom%u's write", d2);
	}
	if (r)
		check("zero-copy-dom0-domU1-domU2", 0, "%s", x->msg);
	else
		check("zero-copy-dom0-domU1-domU2", 1,
		      "Dom0 wrote, dom%u read+wrote, dom%u read+wrote, Dom0 read: all saw every write (%.2f s)",
		      d1, d2, now() - t);
	return 0;
}

/* (2) the other domain's refs: Xen refuses them; (3) revoke: unmapped
 * ends at once, mapped stays busy and pinned, drains once unmapped. */
static void check_revoke(struct xt *x)
{
	struct gntshare_ioc_status st;
	unsigned int n = x->n, d1 = x->d1, d2 = x->d2, busy = 0, busy2;
	unsigned int last = 0;
	char *msg = x->msg;
	int r, e, i;
	double t;

	r = rpc(d2, msg, sizeof(x->msg), "map foreign 1 rw");
	check("foreign-refs-refused", r == EINVAL,
	      "dom%u mapping dom%u's refs: %s (want err %d EINVAL at mmap)",
	      d2, d1, msg, EINVAL);
	if (!r)
		rpc(d2, msg, sizeof(x->msg), "unmap 1");

	r = rpc(d2, msg, sizeof(x->msg), "unmap 0");
	e = r ? r : gs_revoke(x->fd, x->h2, 0, &busy);
	i = gs_status(x->fd, x->h2, &st);
	check("revoke-unmapped-ends-at-once", !e && !busy && i == -ENOENT,
	      "busy %u after dom%u unmapped, then STATUS %d (want -ENOENT), err %d",
	      busy, d2, i, e);

	e = gs_revoke(x->fd, x->h1, 0, &busy);
	busy2 = 0;
	if (!e)
		e = gs_status(x->fd, x->h1, &st);
	if (!e)
		busy2 = st.busy;
	buf_drop(&x->pool);	/* only the module's pin keeps the pages now */
	churn(CHURN_MIB);
	r = STEPS(&i, msg, d1, "check 0 3", d1, "fill 0 4", d1, "check 0 4");
	check("revoke-while-mapped-keeps-pages",
	      !e && busy == n && busy2 == n &&
	      st.state == GNTSHARE_STATE_REVOKING && !r,
	      "REVOKE busy %u, STATUS busy %u state %u; Dom0 dropped its mapping and dirtied %u MiB; dom%u's pages: %s",
	      busy, busy2, st.state, CHURN_MIB, d1, r ? msg : "intact, still writable");

	r = rpc(d1, msg, sizeof(x->msg), "unmap 0");
	t = r ? -1 : drain(x->fd, x->h1, 15, &last);
	i = gs_status(x->fd, x->h1, &st);
	check("drain-after-unmap", t >= 0 && i == -ENOENT,
	      "STATUS reached DONE %.3f s after dom%u unmapped (last busy %u), next STATUS %d",
	      t, d1, last, i);
}

/* A read-only grant cannot be mapped writable; read-only it reads. */
static void check_readonly(struct xt *x)
{
	unsigned int d1 = x->d1, busy = 0;
	char *msg = x->msg;
	struct buf b;
	uint32_t h3;
	int r, e, i, j;

	buf_new(&b, 16);
	fill(b.va, 16, 5);
	e = gs_grant(x->fd, b.va, 16, d1, GNTSHARE_GRANT_READONLY, x->refs3,
		     &h3);
	if (!e)
		publish(d1, "ro", x->refs3, 16);
	r = e ? e : rpc(d1, msg, sizeof(x->msg), "map ro 2 rw");
	if (!r)
		rpc(d1, msg + 256, 256, "unmap 2");
	j = r > 0 && !STEPS(&i, msg + 256, d1, "map ro 2 ro", d1, "check 2 5",
			    d1, "unmap 2");
	e = gs_revoke(x->fd, h3, 0, &busy);
	check("readonly-grant", r > 0 && j && !e && !busy,
	      "writable map: %s; read-only map+check: %s; revoke busy %u",
	      msg, j ? "ok" : msg + 256, busy);
	buf_drop(&b);
}

/* Closing the fd revokes; busy frames are then kept by the kernel. */
static void check_fd_release(struct xt *x)
{
	int f2 = open(GNTSHARE_KMOD_DEVICE, O_RDWR | O_CLOEXEC);
	int f3 = open(GNTSHARE_KMOD_DEVICE, O_RDWR | O_CLOEXEC);
	unsigned int d1 = x->d1;
	char *msg = x->msg;
	struct buf b, c;
	uint32_t h3;
	int r, e, i, j;

	buf_new(&b, 16);
	buf_new(&c, 16);
	fill(c.va, 16, 6);
	e = gs_grant(f2, b.va, 16, d1, 0, x->refs3, &h3);
	if (!e)
		publish(d1, "closed", x->refs3, 16);
	e = e ? e : gs_grant(f3, c.va, 16, d1, 0, x->refs3, &h3);
	if (!e)
		publish(d1, "busyclose", x->refs3, 16);
	close(f2);
	r = e ? e : rpc(d1, msg, sizeof(x->msg), "map closed 3 rw");
	i = e ? e : STEPS(&j, msg + 256, d1, "map busyclose 4 rw");
	close(f3);
	buf_drop(&c);
	churn(CHURN_MIB);
	if (!i)
		i = STEPS(&j, msg + 256, d1, "check 4 6", d1, "unmap 4");
	check("fd-release-revokes", r > 0 && !i,
	      "refs of a closed fd: %s; mapped while closed: %s",
	      msg, i ? msg + 256 : "kept by the kernel, intact");
	buf_drop(&b);
}

/* Grant table full: ENOSPC, everything undone, a clear log message. */
static void check_table_full(struct xt *x)
{
	unsigned int big = x->maxf * 512 + 1, busy = 1;
	uint32_t *brefs = calloc(big, 4), h3;
	struct buf b, pool;
	int e, e2, r;

	e = brefs == NULL ? -ENOMEM : buf_new(&b, big);
	e = e ? e : gs_grant(x->fd, b.va, big, x->d1, 0, brefs, &h3);
	e2 = brefs == NULL ? -ENOMEM :
	     gs_grant(x->fd, b.va, big, x->d1, 0, brefs, &h3);
	if (brefs != NULL)
		buf_drop(&b);
	buf_new(&pool, x->n);
	r = gs_grant(x->fd, pool.va, x->n, x->d1, 0, x->refs1, &h3);
	if (!r)
		r = gs_revoke(x->fd, h3, 0, &busy);
	check("grant-table-full-unwinds",
	      e == -ENOSPC && e2 == -ENOSPC && !r && !busy &&
	      klog_has("gnttab_max_frames"),
	      "%u pages with gnttab_max_frames=%u: %d, %d (want -ENOSPC twice); then %u pages: %d; log names gnttab_max_frames: %s",
	      big, x->maxf, e, e2, x->n, r,
	      klog_has("gnttab_max_frames") ? "yes" : "no");
	buf_drop(&pool);
	free(brefs);
}

/* A domain destroyed while it maps: STATUS drains to 0. */
static void check_destroy_drain(struct xt *x)
{
	unsigned int d2 = x->d2, busy = 0, last = 0;
	struct buf pool;
	int e, r;
	double t;

	buf_new(&pool, x->n);
	e = gs_grant(x->fd, pool.va, x->n, d2, 0, x->refs2, &x->h2);
	if (!e)
		publish(d2, "q", x->refs2, x->n);
	r = e ? e : rpc(d2, x->msg, sizeof(x->msg), "map q 2 rw");
	e = r ? r : gs_revoke(x->fd, x->h2, 0, &busy);
	if (!e) {
		char cmd[64];

		snprintf(cmd, sizeof(cmd), "xl destroy %u", d2);
		e = system(cmd);
	}
	t = e ? -1 : drain(x->fd, x->h2, 20, &last);
	check("drain-after-domain-destroy", !e && busy == x->n && t >= 0,
	      "REVOKE busy %u while dom%u maps, xl destroy, DONE after %.3f s (last busy %u), err %d %s",
	      busy, d2, t, last, e, r ? x->msg : "");
	buf_drop(&pool);
}

int main(int argc, char **argv)
{
	static struct xt x = { .fd = -1 };
	double t;
	int r;

	if (argc != 5) {
		fprintf(stderr, "usage: xt-dom0 <pages> <gnttab_max_frames> <domid1> <domid2>\n");
		return 100;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (getenv("XT_SCALE") != NULL && atof(getenv("XT_SCALE")) >= 1)
		scale = atof(getenv("XT_SCALE"));
	x.n = atoi(argv[1]);
	x.maxf = atoi(argv[2]);
	x.d1 = atoi(argv[3]);
	x.d2 = atoi(argv[4]);
	x.refs1 = calloc(x.n, 4);
	x.refs2 = calloc(x.n, 4);
	x.refs3 = calloc(x.n, 4);
	xs = xs_open(0);
	if (!xs || !x.refs1 || !x.refs2 || !x.refs3) {
		printf("XT-CHECK FAIL setup: xs_open: %s\n", strerror(errno));
		return 100;
	}

	check_device(&x.fd);
	if (x.fd < 0)
		return failed;
	check_bad_args(x.fd, x.d1);
	check_budget(x.fd, x.d1);

	t = now();
	r = wait_ready(x.d1, 60) || wait_ready(x.d2, 60);
	check("guests-ready", !r, "dom%u and dom%u in %.1f s", x.d1, x.d2,
	      now() - t);
	if (r || check_shared_pool(&x) < 0)
		return failed;
	check_revoke(&x);
	check_readonly(&x);
	check_fd_release(&x);
	check_table_full(&x);
	check_destroy_drain(&x);

	rpc(x.d1, x.msg, sizeof(x.msg), "exit");
	close(x.fd);
	printf("XT: %d passed, %d failed\n", passed, failed);
	return failed;
}

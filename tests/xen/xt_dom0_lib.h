// SPDX-License-Identifier: BSD-3-Clause
/*
 * What xt-dom0's checks (xt_dom0.c) are made of (xt_dom0_lib.c): one
 * XT-CHECK line per check (check(), counted in passed and failed), memory
 * filled with a pattern and verified against it, the gntshare module's
 * ioctls (gs_grant(), gs_revoke(), gs_status(), drain()), and the two
 * guests running xt-guest, driven over XenStore through xs (publish(),
 * rpc(), STEPS(), wait_ready()).  Every timeout is multiplied by scale
 * (XT_SCALE).
 */
#ifndef XT_DOM0_LIB_H
#define XT_DOM0_LIB_H

#include <stddef.h>
#include <stdint.h>

#include <gntshare/kmod.h>

#define PAGE 4096u

extern struct xs_handle *xs;
extern int failed, passed;
extern double scale;		/* XT_SCALE: every timeout is multiplied by it */

double now(void);
/* One line: XT-CHECK ok <name> (<detail>) or XT-CHECK FAIL <name>: <reason> */
void check(const char *name, int ok, const char *fmt, ...);
void fill(void *va, unsigned int pages, uint64_t seed);
/* The index of the first word that is not the pattern of seed, or -1. */
long verify(const void *va, unsigned int pages, uint64_t seed);

/* ---- memory --------------------------------------------------------- */

struct buf {
	void *va;
	int fd;
	unsigned int pages;
};

int buf_new(struct buf *b, unsigned int pages);
void buf_drop(struct buf *b);
/* Dirty a lot of fresh memory so that freed pages would be reused. */
void churn(unsigned int mib);

/* ---- module --------------------------------------------------------- */

int gs_grant(int fd, void *va, unsigned int n, unsigned int dom,
	     unsigned int flags, uint32_t *refs, uint32_t *handle);
int gs_revoke(int fd, uint32_t h, unsigned int flags, unsigned int *busy);
int gs_status(int fd, uint32_t h, struct gntshare_ioc_status *st);
/* Poll STATUS until DONE; returns seconds waited or -1 on timeout/error. */
double drain(int fd, uint32_t h, double limit, unsigned int *last);

/* ---- guests over XenStore ------------------------------------------- */

/* Publish refs as data/refs/<set>/<k> ("r r ...", 256 per node), n last. */
void publish(unsigned int dom, const char *set, const uint32_t *refs,
	     unsigned int n);
/* Send one command, wait for its ack: 0 for "ok", the errno of "err
 * <errno>" (0 is mapped to -2), -1 on timeout; the ack's text in reply. */
int rpc(unsigned int dom, char *reply, size_t rlen, const char *fmt, ...);
int wait_ready(unsigned int dom, double limit);
/* Run a list of guest commands; stop at the first that is not ok. */
#define STEPS(r, buf, ...) steps(r, buf, 256, __VA_ARGS__, 0u)
int steps(int *r, char *msg, size_t mlen, ...);

/* Does the kernel log hold s? */
int klog_has(const char *s);

#endif

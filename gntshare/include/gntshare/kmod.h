/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause */
/*
 * gntshare kernel module: ioctl interface (UAPI).
 *
 * Shared by the module (gntshare/kmod/gntshare.c) and user space (the xen
 * backend of libgntshare, tests/xen).  Only fixed-size types; pointers travel
 * as __u64, so 32-bit callers on a 64-bit kernel use the same layout.
 *
 * Device: GNTSHARE_KMOD_DEVICE, a misc char device, root only (0600).
 * Every open file is an independent set of grants; closing it (or process
 * exit) ends every grant it still holds (see GNTSHARE_IOC_REVOKE).
 *
 * One grant ref per 4 KiB frame.  GRANT the same memory once per domain that
 * may map it: each call pins the pages again and returns fresh refs naming
 * that domid only, so Xen refuses them to every other domain.
 */
#ifndef GNTSHARE_KMOD_H
#define GNTSHARE_KMOD_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define GNTSHARE_KMOD_DEVICE	"/dev/xen/gntshare"
#define GNTSHARE_KMOD_MAGIC	0x676e7473u	/* "gnts" */
#define GNTSHARE_KMOD_ABI	1u		/* bump on any incompatible change */
#define GNTSHARE_KMOD_MAX_PAGES	(1u << 20)	/* per GRANT call: 4 GiB */

/*
 * ioctl numbers: Xen grant family 'G' (gntdev/gntalloc use 0..12);
 * gntshare uses sequence numbers 0x40..0x4f.
 */
#define GNTSHARE_IOC_TYPE	'G'

/* VERSION: out only.  Check magic and abi before anything else. */
struct gntshare_ioc_version {
	__u32 magic;		/* out: GNTSHARE_KMOD_MAGIC */
	__u32 abi;		/* out: GNTSHARE_KMOD_ABI */
	__u32 max_pages;	/* out: GNTSHARE_KMOD_MAX_PAGES */
	__u32 page_size;	/* out: 4096 (bytes per frame / per ref) */
};

/* GRANT flags */
#define GNTSHARE_GRANT_READONLY	0x1u	/* grantee may map read-only only */

/*
 * GRANT: pin nr_pages pages at addr (FOLL_WRITE | FOLL_LONGTERM: the caller
 * must have the range mapped writable, and only shared file-backed memory
 * is taken: a MAP_SHARED memfd, hugetlbfs or tmpfs mapping) and grant each
 * 4 KiB frame to domid.  refs[i] is the ref of the frame at addr + i * 4096.
 * All or nothing: on error nothing stays pinned or granted.
 * Errors: EINVAL (bad field, or memory of another kind: private,
 * anonymous, device), EFAULT (a hole in the range, a read-only mapping, or
 * the refs array), ENOMEM, ENOSPC (Dom0's grant table is full: raise Xen's
 * gnttab_max_frames; the module says so in the kernel log), EDQUOT (the
 * module's budget of pinned pages, its parameter max_pinned_pages, would
 * be passed; frames a domain keeps mapped after their revoke stay
 * counted), other errors of pin_user_pages.
 */
struct gntshare_ioc_grant {
	__u64 addr;		/* in: user virtual address, 4 KiB aligned */
	__u64 refs;		/* in: user pointer to __u32 refs[refs_count] */
	__u32 nr_pages;		/* in: 1 .. GNTSHARE_KMOD_MAX_PAGES */
	__u32 refs_count;	/* in: capacity of refs[], >= nr_pages */
	__u16 domid;		/* in: grantee domain */
	__u16 flags;		/* in: GNTSHARE_GRANT_* */
	__u32 handle;		/* out: names this grant in REVOKE / STATUS */
};

/* REVOKE flags */
#define GNTSHARE_REVOKE_FORGET	0x1u	/* hand busy frames to the kernel */

/*
 * REVOKE: end the grants of a handle.  Frames nobody maps end at once and
 * are unpinned.  Frames the grantee still maps cannot end yet ("busy"):
 *  - default: the module keeps them pinned and still granted, retries
 *    gnttab_try_end_foreign_access() on every STATUS / REVOKE of the handle,
 *    and keeps the handle until a call reports busy == 0 (the handle is gone
 *    after that call; later calls get ENOENT).  Never reuse the memory while
 *    busy > 0: the grantee can still read and write it.
 *  - GNTSHARE_REVOKE_FORGET: busy frames go to gnttab_end_foreign_access(),
 *    which keeps its own page reference and ends them later by itself (a
 *    1 s timer; Dom0 option grant_table.free_per_iteration=0 drains all at
 *    once).  The handle is gone at once.  The memory still must not be reused
 *    while the grantee maps it, but nothing can tell when that stops: use
 *    the default mode when you need to know.
 * Closing the file revokes every handle left in FORGET mode.
 */
struct gntshare_ioc_revoke {
	__u32 handle;		/* in */
	__u32 flags;		/* in: GNTSHARE_REVOKE_* */
	__u32 busy;		/* out: frames not ended yet */
	__u32 pad;		/* must be 0 */
};

/* STATUS state values */
#define GNTSHARE_STATE_GRANTED	1u	/* not revoked */
#define GNTSHARE_STATE_REVOKING	2u	/* revoked, busy frames remain */
#define GNTSHARE_STATE_DONE	3u	/* revoked, all ended: handle freed now */

/*
 * STATUS: describe a handle.  For a revoked handle this retries ending its
 * busy frames first; once busy reaches 0 it reports GNTSHARE_STATE_DONE
 * and frees the handle (poll STATUS until DONE to wait for a grantee).
 */
struct gntshare_ioc_status {
	__u32 handle;		/* in */
	__u32 state;		/* out: GNTSHARE_STATE_* */
	__u32 busy;		/* out: frames whose grant has not ended */
	__u32 nr_pages;		/* out: frames of the grant */
	__u16 domid;		/* out */
	__u16 flags;		/* out: GNTSHARE_GRANT_* given at GRANT */
	__u32 pad;		/* out: 0 */
};

#define GNTSHARE_IOC_VERSION \
	_IOR(GNTSHARE_IOC_TYPE, 0x40, struct gntshare_ioc_version)
#define GNTSHARE_IOC_GRANT \
	_IOWR(GNTSHARE_IOC_TYPE, 0x41, struct gntshare_ioc_grant)
#define GNTSHARE_IOC_REVOKE \
	_IOWR(GNTSHARE_IOC_TYPE, 0x42, struct gntshare_ioc_revoke)
#define GNTSHARE_IOC_STATUS \
	_IOWR(GNTSHARE_IOC_TYPE, 0x43, struct gntshare_ioc_status)

#endif /* GNTSHARE_KMOD_H */

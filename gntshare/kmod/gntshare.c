// SPDX-License-Identifier: GPL-2.0
/*
 * gntshare: grant existing user pages to Xen domains.
 *
 * Stock Linux grants only pages it allocates itself (gntalloc), for one
 * domain.  XenNetVM grants one packet pool to every domain of a trust group:
 * this module pins the caller's pages and grants each 4 KiB frame to a given
 * domid, once per GRANT call, so several domains get their own refs to the
 * same pages.  The interface is in gntshare/include/gntshare/kmod.h.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/fs.h>
#include <linux/list.h>
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/mmap_lock.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include <xen/grant_table.h>
#include <xen/page.h>
#include <xen/xen.h>

#include <gntshare/kmod.h>

/*
 * The budget of pinned pages, over every grant of every open file: a page
 * granted to n domains counts n times, and a frame a domain keeps mapped
 * after its revoke stays counted until it unmaps.  0: half of RAM.
 */
static unsigned long max_pinned_pages;
module_param(max_pinned_pages, ulong, 0644);
MODULE_PARM_DESC(max_pinned_pages,
		 "pages all grants may hold pinned at once (0: half of RAM)");
static atomic_long_t nr_pinned_all;	/* pages counted against it */

static unsigned long gs_budget(void)
{
	unsigned long m = READ_ONCE(max_pinned_pages);

	return m ? m : totalram_pages() / 2;
}

/* Count @n pages against the budget: 0, or -EDQUOT (counted nothing). */
static int gs_reserve(unsigned int n)
{
	long now = atomic_long_add_return(n, &nr_pinned_all);

	if ((unsigned long)now <= gs_budget())
		return 0;
	atomic_long_sub(n, &nr_pinned_all);
	pr_warn_ratelimited("cannot pin %u more pages: %ld of max_pinned_pages %lu are pinned (raise /sys/module/gntshare/parameters/max_pinned_pages, or end grants still mapped)\n",
			    n, now - (long)n, gs_budget());
	return -EDQUOT;
}

/*
 * Only shared, file-backed memory (memfd, hugetlbfs, tmpfs: what xnv-core
 * grants) may be granted: a private page can be replaced under the
 * grantee by copy-on-write, and device memory (VM_IO, VM_PFNMAP) has no
 * struct page to pin.  0, -EFAULT (a hole) or -EINVAL (another kind).
 */
static int gs_check_memory(unsigned long addr, unsigned long len)
{
	struct mm_struct *mm = current->mm;
	unsigned long end = addr + len;
	struct vm_area_struct *vma;
	int ret = 0;

	if (end < addr)
		return -EINVAL;
	mmap_read_lock(mm);
	while (!ret && addr < end) {
		vma = vma_lookup(mm, addr);
		if (!vma)
			ret = -EFAULT;
		else if (!(vma->vm_flags & VM_SHARED) || !vma->vm_file ||
			 (vma->vm_flags & (VM_IO | VM_PFNMAP | VM_MIXEDMAP)))
			ret = -EINVAL;
		else
			addr = vma->vm_end;
	}
	mmap_read_unlock(mm);
	return ret;
}

/* One GRANT call: nr_pages pinned pages, each granted to domid. */
struct gs_grant {
	struct list_head list;
	u32 handle;
	domid_t domid;
	u16 flags;
	bool revoked;
	unsigned int nr_pages;
	unsigned int nr_pinned;		/* pages[0 .. nr_pinned) were pinned */
	unsigned int nr_granted;	/* refs[0 .. nr_granted) were granted */
	struct page **pages;		/* NULL once the frame is released */
	grant_ref_t *refs;
};

/* One open file: its grants. */
struct gs_file {
	struct mutex lock;		/* protects grants and next_handle */
	struct list_head grants;
	u32 next_handle;
};

static void gs_unpin(struct gs_grant *g, unsigned int i)
{
	unpin_user_pages_dirty_lock(&g->pages[i], 1,
				    !(g->flags & GNTSHARE_GRANT_READONLY));
	g->pages[i] = NULL;
	atomic_long_dec(&nr_pinned_all);
}

/*
 * Try to end every frame still held; unpin those that ended.
 * Returns the number of frames still mapped by the grantee.
 */
static unsigned int gs_try_end(struct gs_grant *g)
{
	unsigned int i, busy = 0;

	for (i = 0; i < g->nr_granted; i++) {
		if (!g->pages[i])
			continue;
		if (gnttab_try_end_foreign_access(g->refs[i]))
			gs_unpin(g, i);
		else
			busy++;
	}
	return busy;
}

/*
 * Release everything: end the grants (busy ones are handed to the kernel's
 * deferred list with a page reference of their own), unpin every page.
 * Returns the number of frames handed over.
 */
static unsigned int gs_forget(struct gs_grant *g)
{
	unsigned int i, deferred = 0;

	for (i = 0; i < g->nr_pinned; i++) {
		struct page *page = g->pages[i];

		if (!page)
			continue;
		if (i < g->nr_granted &&
		    !gnttab_try_end_foreign_access(g->refs[i])) {
			/* consumed by gnttab_end_foreign_access() */
			get_page(page);
			gnttab_end_foreign_access(g->refs[i], page);
			deferred++;
		}
		gs_unpin(g, i);
	}
	if (deferred)
		pr_info("%u frame(s) still mapped by domain %u: their grants end when it unmaps them\n",
			deferred, g->domid);
	return deferred;
}

static void gs_free(struct gs_grant *g)
{
	kvfree(g->pages);
	kvfree(g->refs);
	kfree(g);
}

static struct gs_grant *gs_find(struct gs_file *f, u32 handle)
{
	struct gs_grant *g;

	list_for_each_entry(g, &f->grants, list)
		if (g->handle == handle)
			return g;
	return NULL;
}

static int gs_pin(struct gs_grant *g, unsigned long addr)
{
	while (g->nr_pinned < g->nr_pages) {
		unsigned int left = g->nr_pages - g->nr_pinned;
		int n;

		n = pin_user_pages_fast(addr + (unsigned long)g->nr_pinned * PAGE_SIZE,
					left, FOLL_WRITE | FOLL_LONGTERM,
					g->pages + g->nr_pinned);
		if (n <= 0)
			return n ? n : -EFAULT;
		g->nr_pinned += n;
	}
	return 0;
}

static int gs_grant_frames(struct gs_grant *g)
{
	int ro = !!(g->flags & GNTSHARE_GRANT_READONLY);

	while (g->nr_granted < g->nr_pages) {
		struct page *page = g->pages[g->nr_granted];
		int ref;

		ref = gnttab_grant_foreign_access(g->domid,
						  xen_page_to_gfn(page), ro);
		if (ref < 0) {
			if (ref == -ENOSPC)
				pr_warn("grant table full after %u of %u frames for domain %u: raise Xen's gnttab_max_frames (512 refs per frame)\n",
					g->nr_granted, g->nr_pages, g->domid);
			return ref;
		}
		g->refs[g->nr_granted++] = ref;
	}
	return 0;
}

static long gs_ioctl_grant(struct gs_file *f, void __user *arg)
{
	struct gntshare_ioc_grant req;
	struct gs_grant *g;
	int ret;

	if (copy_from_user(&req, arg, sizeof(req)))
		return -EFAULT;
	if (!req.nr_pages || req.nr_pages > GNTSHARE_KMOD_MAX_PAGES ||
	    req.refs_count < req.nr_pages || !PAGE_ALIGNED(req.addr) ||
	    (req.flags & ~GNTSHARE_GRANT_READONLY) ||
	    req.domid >= DOMID_FIRST_RESERVED)
		return -EINVAL;

	g = kzalloc(sizeof(*g), GFP_KERNEL);
	if (!g)
		return -ENOMEM;
	g->domid = req.domid;
	g->flags = req.flags;
	g->nr_pages = req.nr_pages;
	g->pages = kvcalloc(req.nr_pages, sizeof(*g->pages), GFP_KERNEL);
	g->refs = kvcalloc(req.nr_pages, sizeof(*g->refs), GFP_KERNEL);
	if (!g->pages || !g->refs) {
		ret = -ENOMEM;
		goto err_free;
	}

	ret = gs_check_memory(req.addr, (unsigned long)req.nr_pages * PAGE_SIZE);
	if (!ret)
		ret = gs_reserve(req.nr_pages);
	if (ret)
		goto err_free;
	ret = gs_pin(g, req.addr);
	/* What was never pinned is not counted (gs_unpin counts the rest). */
	atomic_long_sub(g->nr_pages - g->nr_pinned, &nr_pinned_all);
	if (ret)
		goto err_release;
	ret = gs_grant_frames(g);
	if (ret)
		goto err_release;
	if (copy_to_user(u64_to_user_ptr(req.refs), g->refs,
			 array_size(req.nr_pages, sizeof(u32)))) {
		ret = -EFAULT;
		goto err_release;
	}

	mutex_lock(&f->lock);
	do {
		g->handle = f->next_handle++;
	} while (!g->handle || gs_find(f, g->handle));
	mutex_unlock(&f->lock);
	if (put_user(g->handle,
		     &((struct gntshare_ioc_grant __user *)arg)->handle)) {
		ret = -EFAULT;
		goto err_release;
	}
	mutex_lock(&f->lock);
	list_add_tail(&g->list, &f->grants);
	mutex_unlock(&f->lock);
	return 0;

err_release:
	gs_forget(g);
err_free:
	gs_free(g);
	return ret;
}

static long gs_ioctl_revoke(struct gs_file *f, void __user *arg)
{
	struct gntshare_ioc_revoke req;
	struct gs_grant *g;
	unsigned int busy;

	if (copy_from_user(&req, arg, sizeof(req)))
		return -EFAULT;
	if ((req.flags & ~GNTSHARE_REVOKE_FORGET) || req.pad)
		return -EINVAL;

	mutex_lock(&f->lock);
	g = gs_find(f, req.handle);
	if (!g) {
		mutex_unlock(&f->lock);
		return -ENOENT;
	}
	g->revoked = true;
	if (req.flags & GNTSHARE_REVOKE_FORGET)
		busy = gs_forget(g);
	else
		busy = gs_try_end(g);
	if (!busy || (req.flags & GNTSHARE_REVOKE_FORGET)) {
		list_del(&g->list);
		gs_free(g);
	}
	mutex_unlock(&f->lock);

	req.busy = busy;
	return copy_to_user(arg, &req, sizeof(req)) ? -EFAULT : 0;
}

static long gs_ioctl_status(struct gs_file *f, void __user *arg)
{
	struct gntshare_ioc_status st;
	struct gs_grant *g;

	if (copy_from_user(&st, arg, sizeof(st)))
		return -EFAULT;

	mutex_lock(&f->lock);
	g = gs_find(f, st.handle);
	if (!g) {
		mutex_unlock(&f->lock);
		return -ENOENT;
	}
	st.nr_pages = g->nr_pages;
	st.domid = g->domid;
	st.flags = g->flags;
	st.pad = 0;
	if (!g->revoked) {
		st.state = GNTSHARE_STATE_GRANTED;
		st.busy = g->nr_pages;
	} else {
		st.busy = gs_try_end(g);
		st.state = st.busy ? GNTSHARE_STATE_REVOKING :
				     GNTSHARE_STATE_DONE;
		if (!st.busy) {
			list_del(&g->list);
			gs_free(g);
		}
	}
	mutex_unlock(&f->lock);

	return copy_to_user(arg, &st, sizeof(st)) ? -EFAULT : 0;
}

static long gs_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct gs_file *f = file->private_data;
	void __user *uarg = (void __user *)arg;
	struct gntshare_ioc_version ver = {
		.magic = GNTSHARE_KMOD_MAGIC,
		.abi = GNTSHARE_KMOD_ABI,
		.max_pages = GNTSHARE_KMOD_MAX_PAGES,
		.page_size = XEN_PAGE_SIZE,
	};

	switch (cmd) {
	case GNTSHARE_IOC_VERSION:
		return copy_to_user(uarg, &ver, sizeof(ver)) ? -EFAULT : 0;
	case GNTSHARE_IOC_GRANT:
		return gs_ioctl_grant(f, uarg);
	case GNTSHARE_IOC_REVOKE:
		return gs_ioctl_revoke(f, uarg);
	case GNTSHARE_IOC_STATUS:
		return gs_ioctl_status(f, uarg);
	default:
		return -ENOTTY;
	}
}

static int gs_open(struct inode *inode, struct file *file)
{
	struct gs_file *f;

	f = kzalloc(sizeof(*f), GFP_KERNEL);
	if (!f)
		return -ENOMEM;
	mutex_init(&f->lock);
	INIT_LIST_HEAD(&f->grants);
	f->next_handle = 1;
	file->private_data = f;
	return 0;
}

static int gs_release(struct inode *inode, struct file *file)
{
	struct gs_file *f = file->private_data;
	struct gs_grant *g, *tmp;

	list_for_each_entry_safe(g, tmp, &f->grants, list) {
		list_del(&g->list);
		gs_forget(g);
		gs_free(g);
	}
	mutex_destroy(&f->lock);
	kfree(f);
	return 0;
}

static const struct file_operations gs_fops = {
	.owner = THIS_MODULE,
	.open = gs_open,
	.release = gs_release,
	.unlocked_ioctl = gs_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.llseek = noop_llseek,
};

static struct miscdevice gs_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "xen/gntshare",		/* devtmpfs: /dev/xen/gntshare */
	.fops = &gs_fops,
	.mode = 0600,
};

static int __init gs_init(void)
{
	int ret;

	BUILD_BUG_ON(PAGE_SIZE != XEN_PAGE_SIZE);
	BUILD_BUG_ON(sizeof(grant_ref_t) != sizeof(__u32));
	if (!xen_domain())
		return -ENODEV;
	ret = misc_register(&gs_misc);
	if (ret)
		pr_err("misc_register failed: %d\n", ret);
	return ret;
}

static void __exit gs_exit(void)
{
	misc_deregister(&gs_misc);
}

module_init(gs_init);
module_exit(gs_exit);

MODULE_LICENSE("GPL");
MODULE_AUTHOR("XenNetVM");
MODULE_DESCRIPTION("Grant existing user pages to Xen domains, per domain");
MODULE_VERSION(GNTSHARE_VERSION);	/* Kbuild: the project's VERSION */

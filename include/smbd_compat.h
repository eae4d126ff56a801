/* SPDX-License-Identifier: GPL-2.0 */
/*
 * smbd builds against two kernel series: Debian 12's default 6.1 and its
 * 6.12. One source; what 6.1 lacks is supplied here, nowhere else.
 *
 * - <linux/unaligned.h> is 6.12's name for <asm/unaligned.h>;
 * - __assign_str() lost its source argument in 6.10;
 * - iov_iter_extract_pages() arrived in 6.3; 6.1's iov_iter_get_pages2()
 *   refuses kvec iterators (ksmbd's buffers) and takes page references;
 * - ib_device_get_netdev() is exported from 6.12 only.
 */
#ifndef _SMBD_COMPAT_H
#define _SMBD_COMPAT_H

#include <linux/version.h>

#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 12, 0)
#include <linux/unaligned.h>
#else
#include <asm/unaligned.h>
#endif

/* Tracepoints: the event's field and its argument share their name. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 10, 0)
#define smbd_assign_str(field)	__assign_str(field)
#else
#define smbd_assign_str(field)	__assign_str(field, field)
#endif

#include <linux/bvec.h>
#include <linux/mm.h>
#include <linux/uio.h>
#include <linux/vmalloc.h>

/*
 * The pages under the current segment of a kvec or bvec iterator, at most
 * @maxsize bytes in @maxpages pages, into the caller's array *@pages; no
 * page references are taken (the caller owns the memory, as with the
 * kernel iterators of iov_iter_extract_pages()). One segment per call:
 * callers loop. Advances @i by the bytes returned; -EFAULT for any other
 * kind of iterator, or a kvec over memory no page backs.
 *
 * A kvec's page: from the linear map's address, else from the page
 * tables (vmalloc, and module memory, such as the static padding 6.1's
 * cifs.ko adds to compounds: virt_to_page() of it names some other page).
 * Built on every kernel, so that KUnit checks it against the kernel's
 * own iov_iter_extract_pages(); used in its place before 6.3.
 */
static inline ssize_t
smbd_compat_extract_pages(struct iov_iter *i, struct page ***pages,
			  size_t maxsize, unsigned int maxpages,
			  unsigned int flags, size_t *offset0)
{
	struct page **p = *pages;
	unsigned long seg = 0;
	size_t skip = i->iov_offset, len, off, k;

	maxsize = min(maxsize, iov_iter_count(i));
	if (!maxsize || !maxpages)
		return 0;
	if (iov_iter_is_kvec(i)) {
		const struct kvec *kv = i->kvec;
		char *va;

		while (seg < i->nr_segs && skip >= kv[seg].iov_len)
			skip -= kv[seg++].iov_len;
		if (seg == i->nr_segs)
			return 0;
		va = (char *)kv[seg].iov_base + skip;
		off = offset_in_page(va);
		len = min(maxsize, kv[seg].iov_len - skip);
		len = min(len, (size_t)maxpages * PAGE_SIZE - off);
		va -= off;
		for (k = 0; k * PAGE_SIZE < off + len; k++, va += PAGE_SIZE) {
			p[k] = virt_addr_valid(va) ? virt_to_page(va) :
						     vmalloc_to_page(va);
			if (!p[k])
				return -EFAULT;
		}
	} else if (iov_iter_is_bvec(i)) {
		const struct bio_vec *bv = i->bvec;
		size_t at;

		while (seg < i->nr_segs && skip >= bv[seg].bv_len)
			skip -= bv[seg++].bv_len;
		if (seg == i->nr_segs)
			return 0;
		at = bv[seg].bv_offset + skip;
		off = at % PAGE_SIZE;
		len = min(maxsize, bv[seg].bv_len - skip);
		len = min(len, (size_t)maxpages * PAGE_SIZE - off);
		for (k = 0; k * PAGE_SIZE < off + len; k++)
			p[k] = nth_page(bv[seg].bv_page, at / PAGE_SIZE + k);
	} else {
		return -EFAULT;
	}
	iov_iter_advance(i, len);
	*offset0 = off;
	return len;
}

#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 3, 0)
#define iov_iter_extract_pages smbd_compat_extract_pages
#endif

#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 12, 0)
#include <rdma/ib_verbs.h>

/* @port's netdev, held, or NULL: the driver's, else the one set on it. */
static inline struct net_device *smbd_port_netdev(struct ib_device *ibdev,
						  u32 port)
{
	struct net_device *nd;

	if (ibdev->ops.get_netdev) {
		nd = ibdev->ops.get_netdev(ibdev, port);
	} else {
		rcu_read_lock();
		nd = rcu_dereference(ibdev->port_data[port].netdev);
		if (nd)
			dev_hold(nd);
		rcu_read_unlock();
	}
	/* As the core's: not a netdev on its way out. */
	if (nd && nd->reg_state != NETREG_REGISTERED) {
		dev_put(nd);
		nd = NULL;
	}
	return nd;
}
#else
#define smbd_port_netdev ib_device_get_netdev
#endif

#endif /* _SMBD_COMPAT_H */

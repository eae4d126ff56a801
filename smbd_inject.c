// SPDX-License-Identifier: GPL-2.0
/*
 * smbd: fault injection, the kernel's way (Documentation/fault-injection/).
 *
 * With CONFIG_FAULT_INJECTION_DEBUG_FS each point has a directory under
 * /sys/kernel/debug/smbd/ with the usual knobs (probability, interval,
 * times, space, verbose, task-filter, stacktrace filters) and one file of
 * ours, "fired", that counts the faults it injected:
 *   fail_post   a post accepts only the first k work requests of its
 *               chain and fails the rest with -ENOMEM (a provider whose
 *               queue is full); k is random, 0 included
 *   fail_dma    a DMA mapping fails (a send's pages, a registration, an
 *               rdma_rw context)
 *   fail_mr     a memory registration fails (ib_map_mr_sg() maps less)
 *   fail_wc     a successful completion is reported as a failed one
 *               (IB_WC_GENERAL_ERR), as a provider does on a local error
 *   corrupt_rdma_read   one byte of what an RDMA Read brought in is
 *               changed once it is there (as if the wire had changed it)
 *   corrupt_rdma_write  one byte of what a posted RDMA Write sends is
 *               changed in its slot before the post (writes that wait,
 *               sent from the consumer's memory, are left alone)
 * The corrupt points test a consumer's own checks of the payload (the
 * SMB 3.1.1 RDMA transforms): the transport delivers the bytes.
 * Without CONFIG_FAULT_INJECTION (Debian's kernels) the corrupt points
 * are smbd's own, as smbd/dev_fatal is, so that those checks are tested
 * on the kernels users run: the same directories with "probability" (in
 * percent), "times" (faults left; -1, the default, for no limit) and
 * "fired"; the other points are compiled out. failslab and
 * fail_page_alloc reach smbd's allocations through their own stack
 * filters (require-start/require-end).
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/debugfs.h>
#include <linux/fault-inject.h>
#include <linux/prandom.h>
#include <rdma/ib_verbs.h>

#include "smbd_internal.h"

#ifdef CONFIG_FAULT_INJECTION

struct smbd_fail_point {
	const char *name;
	struct fault_attr attr;
	atomic_t fired;
};

static struct smbd_fail_point smbd_fail_points[SMBD_FAIL_NR] = {
	[SMBD_FAIL_POST] = { .name = "fail_post",
			     .attr = FAULT_ATTR_INITIALIZER },
	[SMBD_FAIL_DMA] = { .name = "fail_dma",
			    .attr = FAULT_ATTR_INITIALIZER },
	[SMBD_FAIL_MR] = { .name = "fail_mr",
			   .attr = FAULT_ATTR_INITIALIZER },
	[SMBD_FAIL_WC] = { .name = "fail_wc",
			   .attr = FAULT_ATTR_INITIALIZER },
	[SMBD_FAIL_CORRUPT_READ] = { .name = "corrupt_rdma_read",
				     .attr = FAULT_ATTR_INITIALIZER },
	[SMBD_FAIL_CORRUPT_WRITE] = { .name = "corrupt_rdma_write",
				      .attr = FAULT_ATTR_INITIALIZER },
};

/**
 * smbd_should_fail() - should this call fail on purpose
 * @point: the fault point
 *
 * Context: any.
 * Return: true when the point's fault attribute says so; counted.
 */
bool smbd_should_fail(enum smbd_fail_point_id point)
{
	struct smbd_fail_point *p = &smbd_fail_points[point];

	if (!should_fail(&p->attr, 1))
		return false;
	atomic_inc(&p->fired);
	return true;
}

/**
 * smbd_inject_init() - the fault points' debugfs directories
 * @root: smbd's debugfs directory
 *
 * Context: process (module init).
 */
void smbd_inject_init(struct dentry *root)
{
	struct dentry *dir;
	int i;

	for (i = 0; i < SMBD_FAIL_NR; i++) {
		struct smbd_fail_point *p = &smbd_fail_points[i];

		/* A forced failure is expected here: no stack dump each. */
		p->attr.verbose = 0;
		dir = fault_create_debugfs_attr(p->name, root, &p->attr);
		if (IS_ERR(dir))
			continue;
		debugfs_create_atomic_t("fired", 0444, dir, &p->fired);
	}
}

#else

/* The corrupt points without the kernel's framework: see the top. */
struct smbd_corrupt_point {
	const char *name;
	u32 probability;
	atomic_t times;
	atomic_t fired;
};

static struct smbd_corrupt_point smbd_corrupt_points[] = {
	{ .name = "corrupt_rdma_read", .times = ATOMIC_INIT(-1) },
	{ .name = "corrupt_rdma_write", .times = ATOMIC_INIT(-1) },
};

/**
 * smbd_should_corrupt() - should this RDMA payload be changed on purpose
 * @point: SMBD_FAIL_CORRUPT_READ or SMBD_FAIL_CORRUPT_WRITE
 *
 * Context: any.
 * Return: true at the point's probability while it has faults left;
 * counted.
 */
bool smbd_should_corrupt(enum smbd_fail_point_id point)
{
	struct smbd_corrupt_point *p =
		&smbd_corrupt_points[point - SMBD_FAIL_CORRUPT_READ];
	u32 prob = READ_ONCE(p->probability);
	int t;

	if (!prob || (prob < 100 && get_random_u32_below(100) >= prob))
		return false;
	/* one of the faults left, when they are counted (-1: no limit) */
	t = atomic_read(&p->times);
	if (!t || (t > 0 && atomic_dec_if_positive(&p->times) < 0))
		return false;
	atomic_inc(&p->fired);
	return true;
}

/**
 * smbd_inject_init() - the corrupt points' debugfs directories
 * @root: smbd's debugfs directory
 *
 * Context: process (module init).
 */
void smbd_inject_init(struct dentry *root)
{
	struct dentry *dir;
	int i;

	for (i = 0; i < ARRAY_SIZE(smbd_corrupt_points); i++) {
		struct smbd_corrupt_point *p = &smbd_corrupt_points[i];

		dir = debugfs_create_dir(p->name, root);
		debugfs_create_u32("probability", 0600, dir, &p->probability);
		debugfs_create_atomic_t("times", 0600, dir, &p->times);
		debugfs_create_atomic_t("fired", 0400, dir, &p->fired);
	}
}

#endif /* CONFIG_FAULT_INJECTION */

/**
 * smbd_corrupt_byte() - change the middle byte of @len bytes of data
 * @it: where the data is (a kernel iterator, not advanced)
 * @len: its length
 *
 * For the corrupt_rdma_read point: the byte is read and written back
 * with its lowest bit flipped, through copies of @it.
 *
 * Context: process.
 */
void smbd_corrupt_byte(const struct iov_iter *it, size_t len)
{
	struct iov_iter i;
	u8 b;

	if (!len)
		return;
	i = *it;
	i.data_source = ITER_SOURCE;
	iov_iter_advance(&i, len / 2);
	if (copy_from_iter(&b, 1, &i) != 1)
		return;
	b ^= 0x01;
	i = *it;
	i.data_source = ITER_DEST;
	iov_iter_advance(&i, len / 2);
	if (copy_to_iter(&b, 1, &i) != 1)
		pr_debug("corrupt_rdma_read: the byte was not written back\n");
}

/**
 * smbd_fail_post_keep() - how much of a chain the fail_post point lets go
 * @n: the requests of a chain about to be posted (at least one), on which
 *	the point fired (smbd_should_fail(SMBD_FAIL_POST))
 *
 * The chain goes only in part: its first k requests (k random, from 0 to
 * all but one) and the rest are refused with -ENOMEM, as by a provider
 * whose queue filled up (smbd_post(), smbd_post_recv()).
 *
 * Context: any.
 * Return: k.
 */
u32 smbd_fail_post_keep(u32 n)
{
	return n ? get_random_u32_below(n) : 0;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: what include/smbd_compat.h supplies to kernels before 6.3, held
 * against the kernel's own iov_iter_extract_pages() on the test kernel.
 * The reliability re-audit's R3: the compat took a kvec over module
 * memory (6.1's cifs.ko pads compounds from a static buffer) for linear
 * memory, and sent the bytes of an unrelated page to the server.
 */
#include <kunit/test.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/uio.h>
#include <linux/vmalloc.h>

#include "smbd_compat.h"

#define CPK_PAGES	4

/* Module memory, as cifs.ko's smb2_padding is. */
static u8 cpk_static[3 * PAGE_SIZE] __aligned(PAGE_SIZE);

struct cpk_buf {
	const char *name;
	u8 *(*get)(struct kunit *test);
};

static u8 *cpk_module(struct kunit *test)
{
	return cpk_static;
}

static u8 *cpk_kmalloc(struct kunit *test)
{
	return kunit_kmalloc(test, 3 * PAGE_SIZE, GFP_KERNEL);
}

static void cpk_vfree(void *p)
{
	vfree(p);
}

static u8 *cpk_vmalloc(struct kunit *test)
{
	u8 *p = vmalloc(3 * PAGE_SIZE);

	if (p && kunit_add_action_or_reset(test, cpk_vfree, p))
		return NULL;
	return p;
}

static const struct cpk_buf cpk_bufs[] = {
	{ "module", cpk_module },
	{ "kmalloc", cpk_kmalloc },
	{ "vmalloc", cpk_vmalloc },
};

KUNIT_ARRAY_PARAM_DESC(cpk_buf, cpk_bufs, name);

/*
 * Two kvec segments over the buffer, the first starting inside a page
 * and crossing two page edges: each call of the compat returns the same
 * bytes, offset and pages as the kernel's, and leaves the iterator where
 * the kernel's leaves it.
 */
static void smbd_compat_extract_kvec(struct kunit *test)
{
	const struct cpk_buf *b = test->param_value;
	struct page *mine[CPK_PAGES], *theirs[CPK_PAGES];
	struct page **pm = mine, **pt = theirs;
	struct iov_iter im, it;
	struct kvec kv[2];
	size_t om, ot;
	ssize_t nm, nt;
	int calls = 0;
	u8 *buf = b->get(test);

	KUNIT_ASSERT_NOT_NULL(test, buf);
	kv[0].iov_base = buf + 100;
	kv[0].iov_len = 2 * PAGE_SIZE + 7;
	kv[1].iov_base = buf + 2 * PAGE_SIZE + 300;
	kv[1].iov_len = 9;
	iov_iter_kvec(&im, ITER_SOURCE, kv, 2, kv[0].iov_len + kv[1].iov_len);
	it = im;
	while (iov_iter_count(&it)) {
		memset(mine, 0, sizeof(mine));
		memset(theirs, 0, sizeof(theirs));
		nt = iov_iter_extract_pages(&it, &pt, SIZE_MAX, CPK_PAGES, 0,
					    &ot);
		nm = smbd_compat_extract_pages(&im, &pm, SIZE_MAX, CPK_PAGES,
					       0, &om);
		KUNIT_ASSERT_GT(test, nt, 0);
		KUNIT_ASSERT_EQ(test, nm, nt);
		KUNIT_EXPECT_EQ(test, om, ot);
		KUNIT_EXPECT_EQ(test, iov_iter_count(&im), iov_iter_count(&it));
		KUNIT_EXPECT_EQ(test, memcmp(mine, theirs, sizeof(mine)), 0);
		/* Not in the linear map: the pages the page tables name. */
		if (!virt_addr_valid(buf))
			KUNIT_EXPECT_PTR_EQ(test, mine[0],
					    vmalloc_to_page(calls ? kv[1].iov_base :
							    buf));
		KUNIT_ASSERT_LT(test, ++calls, 8);
	}
	KUNIT_EXPECT_EQ(test, calls, 2);
	KUNIT_EXPECT_EQ(test, iov_iter_count(&im), 0U);
}

static struct kunit_case smbd_compat_cases[] = {
	KUNIT_CASE_PARAM(smbd_compat_extract_kvec, cpk_buf_gen_params),
	{}
};

static struct kunit_suite smbd_compat_suite = {
	.name = "smbd_compat",
	.test_cases = smbd_compat_cases,
};

kunit_test_suites(&smbd_compat_suite);

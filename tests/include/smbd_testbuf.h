/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A test buffer for smbd's test modules: vmalloc memory and a bio_vec
 * array over it, so one buffer can be handed to smbd as an ITER_KVEC or
 * as an ITER_BVEC of its pages.
 */
#ifndef _SMBD_TESTBUF_H
#define _SMBD_TESTBUF_H

#include <linux/bvec.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/uio.h>
#include <linux/vmalloc.h>

struct testbuf {
	u8 *va;
	size_t size;
	struct bio_vec *bv;
};

static inline void testbuf_free(struct testbuf *b)
{
	vfree(b->va);
	kvfree(b->bv);
	b->va = NULL;
	b->bv = NULL;
}

static inline int testbuf_alloc(struct testbuf *b, size_t size)
{
	b->size = size;
	b->va = vmalloc(max_t(size_t, size, 1));
	/* vmalloc memory is page-aligned: a range spans at most these */
	b->bv = kvmalloc_array(DIV_ROUND_UP(size, PAGE_SIZE) + 1,
			       sizeof(*b->bv), GFP_KERNEL);
	if (b->va && b->bv)
		return 0;
	testbuf_free(b);
	return -ENOMEM;
}

/*
 * testbuf_iter: @len bytes of @b from @off as ITER_KVEC (through @kv) or,
 * with @bvec, as ITER_BVEC over the pages behind them.
 */
static inline void testbuf_iter(struct testbuf *b, size_t off, size_t len,
				unsigned int dir, bool bvec, struct kvec *kv,
				struct iov_iter *it)
{
	size_t pos = off, left = len, po, l;
	unsigned int n = 0;

	if (!bvec) {
		kv->iov_base = b->va + off;
		kv->iov_len = len;
		iov_iter_kvec(it, dir, kv, 1, len);
		return;
	}
	while (left) {
		po = offset_in_page(pos);
		l = min_t(size_t, PAGE_SIZE - po, left);
		bvec_set_page(&b->bv[n++], vmalloc_to_page(b->va + pos), l, po);
		pos += l;
		left -= l;
	}
	iov_iter_bvec(it, dir, b->bv, n, len);
}

#endif /* _SMBD_TESTBUF_H */

// SPDX-License-Identifier: GPL-2.0
/*
 * smbd_cifs: the kernel SMB client's SMB Direct interface on smbd.ko.
 *
 * adapters/build.sh links this file, with adapters/cifs-common/, into
 * cifs.ko, built from Debian's linux-source-6.1 (fs/smb/client), in place
 * of cifs's own smbdirect.o.
 * cifs calls the functions its smbdirect.h declares (smbd_get_connection,
 * smbd_reconnect, smbd_destroy, smbd_send, smbd_recv, smbd_register_mr,
 * smbd_deregister_mr) and reads some fields of struct smbd_connection
 * (the connection parameters of [MS-SMBD] 3.1.1.1 for its I/O sizes and
 * DebugData, transport_status, rdma_readwrite_threshold, max_frmr_depth,
 * the counters DebugData prints) and of struct smbd_mr (mr->iova, rkey
 * and length for the SMB2 channel info). Everything else is smbd's:
 * negotiation, credits, segmentation and reassembly, keep-alive,
 * registration with verified remote invalidation.
 *
 * This is the 6.12 adapter (adapters/cifs/) on 6.1's interface: 6.1's
 * cifs carries a request's data, and hands a buffer to register, as an
 * array of pages (the first one may start at an offset, the last one may
 * end early) where 6.12's uses an iov_iter. smbd takes iov_iters, so the
 * pages become bvecs: for a send, in an array the conn keeps, sized at
 * connection for the largest message (within a bound of ours); for a
 * registration, in an array that lives with it.
 *
 * This file holds what is 6.1's; the rest, the same for 6.12, is
 * adapters/cifs-common/smbd_cifs_conn.c.
 */

#include <linux/bvec.h>
#include <linux/highmem.h>
#include <linux/kref.h>
#include <linux/slab.h>
#include <linux/uio.h>

#include "cifsglob.h"
#include "cifsproto.h"
#include "cifs_debug.h"
#include "smbdirect.h"

#include <smbd.h>

#include "smbd_cifs.h"

/*
 * The largest I/O cifs may do over RDMA: one I/O is one descriptor in its
 * channel info, so what a single registration always maps, whatever the
 * offset of the buffer in its first page (smbd's max_reg_size: a 6.1
 * direct I/O's first page may start at an offset, so a full-size I/O
 * spans one page more). Whole pages besides: 6.1's buffered and
 * uncached reads register every page in full (rq_tailsz PAGE_SIZE), up
 * to the I/O size rounded up to a page, which must not exceed it. 0 when
 * not even a page fits.
 */
static u32 smbd_cifs_max_io(const struct smbd_sock_info *si)
{
	return round_down(si->max_reg_size, PAGE_SIZE);
}

/*
 * The longest message the send bvecs are reserved for. The server's
 * MaxFragmentedSize bounds a message but has no upper bound of its own
 * ([MS-SMBD] 2.2.2, 3.1.5.7): reserved from it, a server could have every
 * connection and reconnect allocate 16 MiB of bvecs. cifs's longest
 * message is a WRITE of the server's MaxWriteSize (8 MiB from Windows and
 * ksmbd) and its header, which this covers: SMB2's longest message over
 * Direct TCP ([MS-SMB2] 2.1). A longer one is still sent, from one copy
 * (smbd_cifs_copy()).
 */
#define SMBD_CIFS_BV_MSG_MAX	SMBD_STREAM_MAX_MSG

/*
 * Room in @c's send bvecs for a message of @max_len bytes: each of its
 * page parts (at most %SMBD_MORE_MAX; a message with more is copied)
 * may start and end in a partial page. Under the server mutex (no send
 * runs), or before cifs has the conn.
 */
static int smbd_cifs_bv_reserve(struct smbd_cifs_conn *c, u32 max_len)
{
	unsigned int need = DIV_ROUND_UP(max_len, PAGE_SIZE) +
			    2 * SMBD_MORE_MAX;
	struct bio_vec *bv;

	if (need <= c->parts.bv_max)
		return 0;
	bv = kvmalloc_array(need, sizeof(*bv), GFP_KERNEL);
	if (!bv)
		return -ENOMEM;
	kvfree(c->parts.bv);
	c->parts.bv = bv;
	c->parts.bv_max = need;
	return 0;
}

/* smbd_cifs.h: 6.1's cifs keeps the state in transport_status. */
void smbd_cifs_set_status(struct smbd_connection *info,
			  enum smbd_cifs_status st)
{
	static const enum smbd_connection_status to[] = {
		[SMBD_CIFS_UP] = SMBD_CONNECTED,
		[SMBD_CIFS_DOWN] = SMBD_DISCONNECTED,
		[SMBD_CIFS_GONE] = SMBD_DESTROYED,
	};

	info->transport_status = to[st];
}

/*
 * smbd_cifs.h: cifs must be able to size its I/O (smbd_cifs_max_io()),
 * and the send bvecs are reserved for the peer's longest message.
 */
int smbd_cifs_check(struct smbd_cifs_conn *c, const struct smbd_sock_info *si)
{
	if (!smbd_cifs_max_io(si))
		return -EOPNOTSUPP;
	return smbd_cifs_bv_reserve(c, min_t(u32, SMBD_CIFS_BV_MSG_MAX,
					    si->max_fragmented_send_size));
}

/* smbd_cifs.h: what cifs reads of a new connection, its I/O sizes among them. */
void smbd_cifs_info(struct smbd_cifs_conn *c, const struct smbd_sock_info *si)
{
	struct smbd_connection *info = &c->info;

	/*
	 * cifs's I/O sizes come from these ([MS-SMBD] 3.1.4.7). 6.1's cifs
	 * shows the keep-alive interval in seconds, as its tunable.
	 */
	info->receive_credit_max = smbd_receive_credit_max;
	info->send_credit_target = smbd_send_credit_target;
	info->max_send_size = si->max_send_size;
	info->max_fragmented_send_size = si->max_fragmented_send_size;
	info->max_receive_size = si->max_recv_size;
	info->max_fragmented_recv_size = si->max_fragmented_recv_size;
	info->max_readwrite_size = smbd_cifs_max_io(si);
	info->keep_alive_interval = si->keepalive_interval_ms / 1000;
	smbd_cifs_set_status(info, SMBD_CIFS_UP);
	info->protocol = 0x100;	/* SMB Direct 1.0 ([MS-SMBD] 2.2.1) */
	info->max_frmr_depth = info->max_readwrite_size / PAGE_SIZE;
	info->responder_resources = si->responder_resources;
	info->rdma_readwrite_threshold = rdma_readwrite_threshold;
	info->mr_type = IB_MR_TYPE_MEM_REG;
}

/*
 * The pages of @rqst (rqst_page_get_length() tells each one's part) as
 * bvecs into @bv, which has room for rq_npages, or only counted when @bv
 * is NULL; empty parts are left out, *@nbv says how many went.
 * Return: their bytes; -EINVAL for a part beyond its page (6.1's cifs
 * sizes every page of a request at PAGE_SIZE).
 */
static ssize_t smbd_cifs_bvecs(const struct smb_rqst *rqst,
			       struct bio_vec *bv, unsigned int *nbv)
{
	unsigned int i, len, off, n = 0;
	size_t total = 0;

	for (i = 0; i < rqst->rq_npages; i++) {
		rqst_page_get_length(rqst, i, &len, &off);
		if (WARN_ON_ONCE(len > PAGE_SIZE || off > PAGE_SIZE - len))
			return -EINVAL;
		if (!len)
			continue;
		if (bv)
			bvec_set_page(&bv[n], rqst->rq_pages[i], len, off);
		n++;
		total += len;
	}
	*nbv = n;
	return total;
}

/* The data pages of @rqst as the next part of the message. */
static int smbd_cifs_add_pages(struct smbd_cifs_parts *pt,
			       const struct smb_rqst *rqst)
{
	struct bio_vec *bv = NULL;
	struct iov_iter it;
	unsigned int n;
	ssize_t len;

	if (!rqst->rq_npages)
		return 0;
	if (!pt->copy && rqst->rq_npages <= pt->bv_max - pt->bv_n)
		bv = pt->bv + pt->bv_n;
	len = smbd_cifs_bvecs(rqst, bv, &n);
	if (len < 0)
		return len;
	if (!bv) {
		pt->copy = true;
		pt->len += len;
		return 0;
	}
	pt->bv_n += n;
	iov_iter_bvec(&it, ITER_SOURCE, bv, n, len);
	smbd_cifs_add(pt, &it);
	return 0;
}

/*
 * smbd_cifs.h. Rare: more parts than smbd joins, or more pages than the
 * conn's bvecs hold.
 */
void *smbd_cifs_copy(struct TCP_Server_Info *server, size_t len,
		     struct smb_rqst *rqst, int num_rqst)
{
	unsigned int j, plen, off;
	size_t n, done = 0;
	struct iov_iter it;
	void *buf;
	int i;

	buf = kvmalloc(len, GFP_KERNEL);
	if (!buf)
		return ERR_PTR(-ENOMEM);
	for (i = 0; i < num_rqst; i++) {
		smbd_cifs_kvecs(server, &rqst[i], &it);
		n = iov_iter_count(&it);
		if (n > len - done)
			goto fault;
		done += copy_from_iter(buf + done, n, &it);
		/* The pages passed smbd_cifs_bvecs(): each part is in its page. */
		for (j = 0; j < rqst[i].rq_npages; j++) {
			rqst_page_get_length(&rqst[i], j, &plen, &off);
			if (plen > len - done)
				goto fault;
			memcpy_from_page(buf + done, rqst[i].rq_pages[j], off,
					 plen);
			done += plen;
		}
	}
	if (done == len)
		return buf;
fault:
	kvfree(buf);
	return ERR_PTR(-EFAULT);
}

/* smbd_cifs.h: the kvecs, then the data pages, of each request. */
int smbd_cifs_build(struct TCP_Server_Info *server, struct smbd_cifs_conn *c,
		    struct smb_rqst *rqst, int num_rqst)
{
	struct smbd_cifs_parts *pt = &c->parts;
	struct iov_iter it;
	int i, ret;

	pt->n = 0;
	pt->len = 0;
	pt->bv_n = 0;
	pt->copy = false;
	for (i = 0; i < num_rqst; i++) {
		smbd_cifs_kvecs(server, &rqst[i], &it);
		smbd_cifs_add(pt, &it);
		ret = smbd_cifs_add_pages(pt, &rqst[i]);
		if (ret)
			return ret;
	}
	return pt->len > (size_t)c->info.max_fragmented_send_size ?
	       -EMSGSIZE : 0;
}

/**
 * smbd_register_mr() - open a buffer to the server for RDMA
 * @info: the connection
 * @pages: the buffer's pages
 * @num_pages: how many
 * @offset: where the buffer starts in the first page
 * @tailsz: its bytes in the last page (in the only one: from @offset)
 * @writing: true when the server writes into the buffer (RDMA Write, an
 *	SMB2 READ), false when it reads from it (RDMA Read, an SMB2 WRITE)
 * @need_invalidate: the server may invalidate it with Send with
 *	Invalidate; smbd checks any remote invalidation against the rkey and
 *	invalidates locally otherwise, so this changes nothing here
 *
 * One MR with a fresh rkey and only the access the I/O needs ([MS-SMBD]
 * 3.1.4.3); cifs sizes its I/O so that one always suffices
 * (smbd_cifs_max_io()). On the current connection, which the
 * registration then holds: cifs calls this without the server mutex, and
 * a reconnect may replace it meanwhile. The bvecs smbd_register() gets
 * live with the registration; 6.1's cifs gives every page but the first
 * and last in full, so one MR maps them without a gap.
 *
 * Context: process; sleeps while every MR is in use.
 * Return: the registration, or NULL.
 */
struct smbd_mr *smbd_register_mr(struct smbd_connection *info,
				 struct page *pages[], int num_pages,
				 int offset, int tailsz, bool writing,
				 bool need_invalidate)
{
	/* The buffer in cifs's request form: rqst_page_get_length() says. */
	const struct smb_rqst r = {
		.rq_pages = pages,
		.rq_npages = max(num_pages, 0),
		.rq_offset = offset,
		.rq_pagesz = PAGE_SIZE,
		.rq_tailsz = tailsz,
	};
	struct smbd_cifs_mr *m;
	struct iov_iter it;
	unsigned int n;
	ssize_t len;

	if (!r.rq_npages || offset < 0 || tailsz < 0)
		return NULL;
	m = kvzalloc(struct_size(m, bv, r.rq_npages), GFP_KERNEL);
	if (!m)
		return NULL;
	len = smbd_cifs_bvecs(&r, m->bv, &n);
	if (len <= 0) {
		cifs_dbg(VFS, "smbd: %d pages to register make %zd bytes\n",
			 num_pages, len);
		kvfree(m);
		return NULL;
	}
	iov_iter_bvec(&it, writing ? ITER_DEST : ITER_SOURCE, m->bv, n, len);
	return smbd_cifs_register(info, m, &it, writing, need_invalidate);
}

// SPDX-License-Identifier: GPL-2.0
/*
 * smbd: RDMA read and write, an SMB2 server's side ([MS-SMBD] 3.1.4.5,
 * 3.1.4.6).
 *
 * smbd_rdma_read() and smbd_rdma_write() slice the peer's descriptors
 * (smbd_desc_slice(): MaxReadWriteSize, offsets, lengths), and move each
 * slice in chunks through the kernel's rdma_rw API, which registers the
 * sink of an iWARP RDMA read as that protocol requires. A context count
 * bounds the send queue space they use. A responder's small RDMA Write
 * goes from a pre-mapped slot instead and is not waited for
 * (smbd_rdma_write_posted()).
 */

#include <linux/errno.h>
#include <linux/slab.h>
#include <linux/uio.h>
#include <rdma/ib_verbs.h>
#include <rdma/rw.h>

#include "smbd_internal.h"
#include "smbd_trace.h"

/*
 * Remote segments sliced at a time: a transfer over more descriptors
 * (an SMB2 channel info may hold 4,095) is sliced again, window after
 * window.
 */
#define SMBD_RW_SEGS		16

/*
 * Fill @sgl with @len bytes of @it, pages that follow each other joined
 * within @lim (smbd_sg_add()); returns the entries used.
 */
static int smbd_rw_sg(struct iov_iter *it, size_t len, struct scatterlist *sgl,
		      u32 max, const struct smbd_sg_limit *lim)
{
	struct page *pages[16], **pp = pages;
	size_t off, got, n;
	u32 nents = 0, k;
	ssize_t ret;

	sg_init_table(sgl, smbd_sg_entries(it, len, max));
	while (len && nents < max) {
		ret = iov_iter_extract_pages(it, &pp, len,
					     min_t(u32, ARRAY_SIZE(pages),
						   max - nents), 0, &off);
		if (ret <= 0)
			return -EFAULT;
		got = ret;
		len -= got;
		for (k = 0; got; k++) {
			n = min_t(size_t, got, PAGE_SIZE - off);
			nents = smbd_sg_add(sgl, nents, pages[k], off, n, lim);
			got -= n;
			off = 0;
		}
	}
	if (len)
		return -EFAULT;
	sg_mark_end(&sgl[nents - 1]);
	return nents;
}

/* Contexts came back: wake the first waiter, if any. */
static void smbd_rw_wake(struct smbd_sock *sk)
{
	if (wq_has_sleeper(&sk->ss_rw_wq))
		wake_up(&sk->ss_rw_wq);
}

/*
 * Take up to @want rdma_rw contexts of the budget, waiting for at least
 * one; returns how many, or 0 once disconnected. The waiters queue
 * exclusively: a return of contexts wakes the first, and a waiter that
 * leaves some behind wakes the next, so a 1 MiB transfer's return does
 * not wake every worker queued behind the budget (eight contexts are two
 * such transfers). The order is not strict: a thread that comes while
 * the woken one is on its way may take the contexts first, and the woken
 * one queues again at the end. A state change wakes them all
 * (smbd_sock_wake()).
 */
static u32 smbd_rw_ctx_get(struct smbd_sock *sk, u32 want)
{
	DEFINE_WAIT(wait);
	bool more;
	u32 got;

	for (;;) {
		spin_lock_bh(&sk->ss_lock);
		if (sk->ss_state != SMBD_CONNECTED) {
			spin_unlock_bh(&sk->ss_lock);
			got = 0;
			break;
		}
		got = min(sk->ss_rdma.rw_avail, want);
		if (got) {
			sk->ss_rdma.rw_avail -= got;
			more = sk->ss_rdma.rw_avail;
			spin_unlock_bh(&sk->ss_lock);
			if (more)
				smbd_rw_wake(sk);
			break;
		}
		/* Queued before the lock goes: a return after it wakes us. */
		prepare_to_wait_exclusive(&sk->ss_rw_wq, &wait,
					  TASK_UNINTERRUPTIBLE);
		spin_unlock_bh(&sk->ss_lock);
		schedule();
	}
	finish_wait(&sk->ss_rw_wq, &wait);
	return got;
}

/* Give @n contexts back. Context: any; takes ss_lock. */
static void smbd_rw_ctx_put(struct smbd_sock *sk, u32 n)
{
	spin_lock_bh(&sk->ss_lock);
	sk->ss_rdma.rw_avail += n;
	spin_unlock_bh(&sk->ss_lock);
	smbd_rw_wake(sk);
}

/*
 * siw sends an unsignalled RDMA Write of a page or more from the pages
 * themselves and counts it done while TCP still holds them (see
 * ss_ep.tx_sig_bytes): signal such a request, so that siw copies it and the
 * wait covers it. The request is the context's, ours until the chain is
 * done.
 */
static void smbd_rw_wr_signal(const struct smbd_sock *sk, struct smbd_op *op,
			      struct ib_send_wr *wr)
{
	if (wr->opcode != IB_WR_RDMA_WRITE ||
	    wr->send_flags & IB_SEND_SIGNALED ||
	    smbd_wr_bytes(wr) < sk->ss_ep.tx_sig_bytes)
		return;
	wr->wr_cqe = &op->op_cqe.cqe;
	wr->send_flags |= IB_SEND_SIGNALED;
}

/* The context and gather list of one piece in a chain. */
struct smbd_rw_slot {
	struct rdma_rw_ctx ctx;
	int nents;
	struct scatterlist sgl[SMBD_RW_SLOT_PAGES];
};

/*
 * Move @n pieces as one chain of work requests and wait once: a 1 MiB
 * read or write is one round trip, not four. The last request of each
 * piece is signalled (and on siw each large RDMA Write). A post that
 * fails partway is fenced by smbd_op_wait(): the pages of every piece
 * stay mapped until the device is done with all of the chain's requests,
 * unsignalled ones included ("Posted work" in Documentation/smbd.rst).
 * @n contexts of the budget are held.
 */
static int smbd_rw_chain(struct smbd_sock *sk, struct smbd_op *op,
			 struct smbd_rw_slot *sl, struct iov_iter *it,
			 const struct smbd_buf_desc *pc, u32 n,
			 enum dma_data_direction dir)
{
	struct ib_send_wr *first = NULL;
	u32 i, ready = 0;
	int ret = 0;

	for (i = 0; i < n; i++) {
		ret = smbd_rw_sg(it, pc[i].length, sl[i].sgl,
				 SMBD_RW_SLOT_PAGES, &sk->ss_ep.rw_seg);
		if (ret < 0)
			break;
		sl[i].nents = ret;
		if (smbd_should_fail(SMBD_FAIL_DMA)) {
			ret = -ENOMEM;
			break;
		}
		ret = rdma_rw_ctx_init(&sl[i].ctx, sk->ss_ep.qp, sk->ss_ep.port_num,
				       sl[i].sgl, sl[i].nents, 0, pc[i].offset,
				       pc[i].token, dir);
		if (ret < 0)
			break;
		ready++;
		ret = 0;
	}
	if (!ret) {
		struct ib_send_wr *wr, *last = NULL;

		/*
		 * rdma_rw_ctx_wrs() signals a context's last request only
		 * when it ends the chain: link the pieces ourselves.
		 */
		for (i = 0; i < n; i++) {
			wr = rdma_rw_ctx_wrs(&sl[i].ctx, sk->ss_ep.qp,
					     sk->ss_ep.port_num, &op->op_cqe.cqe, NULL);
			if (last)
				last->next = wr;
			else
				first = wr;
			for (;; wr = wr->next) {
				smbd_rw_wr_signal(sk, op, wr);
				if (!wr->next)
					break;
			}
			last = wr;
		}
		/*
		 * Every signalled request posted is waited for, and a chain
		 * taken in part is fenced: the pages stay mapped until the
		 * device is done with all of them.
		 */
		smbd_op_post(sk, op, first);
		ret = smbd_op_wait(sk, op);
	}
	for (i = 0; i < ready; i++)
		rdma_rw_ctx_destroy(&sl[i].ctx, sk->ss_ep.qp, sk->ss_ep.port_num,
				    sl[i].sgl, sl[i].nents, dir);
	return ret;
}

/*
 * What a transfer works in: a window of the peer's segments and a slot
 * per piece of a chain. A connection keeps the last one from one
 * transfer to the next (ss_rdma.rw_scratch, freed with the socket): a transfer
 * allocates only when another one holds it or it has too few slots.
 */
struct smbd_rw_scratch {
	u32 nslot;
	struct smbd_buf_desc seg[SMBD_RW_SEGS];
	struct smbd_rw_slot sl[] __counted_by(nslot);
};

static struct smbd_rw_scratch *smbd_rw_scratch_get(struct smbd_sock *sk,
						   u32 nslot)
{
	struct smbd_rw_scratch *sc = xchg(&sk->ss_rdma.rw_scratch, NULL);

	if (sc && sc->nslot >= nslot)
		return sc;
	kvfree(sc);
	sc = kvmalloc(struct_size(sc, sl, nslot), GFP_KERNEL);
	if (sc)
		sc->nslot = nslot;
	return sc;
}

static void smbd_rw_scratch_put(struct smbd_sock *sk,
				struct smbd_rw_scratch *sc)
{
	if (sc && cmpxchg(&sk->ss_rdma.rw_scratch, NULL, sc))
		kvfree(sc);
}

/* Give @ws back with its context of the budget; the caller wakes. */
static void smbd_wslot_put_locked(struct smbd_sock *sk, struct smbd_wslot *ws)
{
	lockdep_assert_held(&sk->ss_lock);
	ws->ws_busy = false;
	list_add(&ws->ws_node, &sk->ss_rdma.wslot_free);
	sk->ss_rdma.rw_avail++;
}

/**
 * smbd_wslot_done() - a posted RDMA Write completed: its slot is free
 * @cq: the send completion queue
 * @wc: the completion
 *
 * The slot and its context of the budget go back; a write that failed
 * (or was flushed) ends the connection, as any failed request does.
 *
 * Context: the send CQ's completion handler (softirq or workqueue).
 */
void smbd_wslot_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct smbd_wslot *ws = container_of(wc->wr_cqe, struct smbd_wslot,
					     ws_cqe.cqe);
	struct smbd_sock *sk = cq->cq_context;
	enum ib_wc_status status = smbd_wc_begin(cq, wc, false);

	spin_lock_bh(&sk->ss_lock);
	if (!ws->ws_busy) {
		/*
		 * A completion for a slot that is free: none is known
		 * (siw flushes twice only reads); taking it back twice
		 * would corrupt the list and the budget.
		 */
		spin_unlock_bh(&sk->ss_lock);
		WARN_ONCE(status == IB_WC_SUCCESS,
			  "smbd: connection %u: a posted write completed twice\n",
			  sk->ss_id);
		return;
	}
	if (status == IB_WC_SUCCESS) {
		sk->ss_stats.rdma_writes++;
		sk->ss_stats.rdma_writes_posted++;
		sk->ss_stats.rdma_write_bytes += ws->ws_len;
	}
	smbd_wslot_put_locked(sk, ws);
	spin_unlock_bh(&sk->ss_lock);
	smbd_rw_wake(sk);
	if (status != IB_WC_SUCCESS)
		smbd_wr_failed(sk, status, "posted RDMA write");
}

/*
 * A responder's small RDMA Write into one segment of the peer's buffer:
 * copied into a pre-mapped slot and posted as one signalled request,
 * not waited for. The caller's memory is free at once; the slot comes
 * back with the completion (smbd_wslot_done()). A message the caller
 * sends afterwards is posted behind it on the same send queue, and a
 * reliable connection places an RDMA Write's data before the peer sees a
 * later Send complete (InfiniBand's ordering rules; RDMAP's, RFC 5040
 * 5.5), so the peer reads the data only after it landed, as [MS-SMBD]
 * 3.1.4.5 requires of the response that follows.
 *
 * One lock hold takes the slot, a context of the budget and a place in
 * the gate (the teardown frees the slots only after the gate's last
 * thread left). Returns the bytes posted; -EAGAIN when no slot or no
 * context is free, or the socket has no slots (the caller waits for the
 * write instead); or the post's error, which ends the connection.
 */
static ssize_t smbd_rdma_write_posted(struct smbd_sock *sk,
				      struct iov_iter *from,
				      const struct smbd_buf_desc *seg)
{
	size_t len = iov_iter_count(from);
	const struct ib_send_wr *bad;
	struct smbd_wslot *ws;
	int ret;

	spin_lock_bh(&sk->ss_lock);
	if (len > sk->ss_rdma.wslot_len || !sk->ss_rdma.rw_avail ||
	    list_empty(&sk->ss_rdma.wslot_free) || sk->ss_ep.qp_closed ||
	    sk->ss_state != SMBD_CONNECTED) {
		spin_unlock_bh(&sk->ss_lock);
		return -EAGAIN;
	}
	ws = list_first_entry(&sk->ss_rdma.wslot_free, struct smbd_wslot, ws_node);
	list_del(&ws->ws_node);
	ws->ws_busy = true;
	sk->ss_rdma.rw_avail--;
	sk->ss_ep.posting++;
	spin_unlock_bh(&sk->ss_lock);

	if (copy_from_iter(ws->ws_buf, len, from) != len) {
		ret = -EFAULT;
		goto put;
	}
	if (smbd_should_fail(SMBD_FAIL_CORRUPT_WRITE))
		((u8 *)ws->ws_buf)[len / 2] ^= 0x01;
	ib_dma_sync_single_for_device(sk->ss_ep.ibdev, ws->ws_sge.addr, len,
				      DMA_TO_DEVICE);
	ws->ws_len = len;
	ws->ws_sge.length = len;
	ws->ws_wr.remote_addr = seg->offset;
	ws->ws_wr.rkey = seg->token;
	ret = smbd_post(sk, &ws->ws_wr.wr, &bad, SMBD_POST_ENTERED);
	if (!ret) {
		smbd_post_leave(sk);
		return len;
	}
put:
	/* One request: refused whole, nothing of it on the queue. */
	spin_lock_bh(&sk->ss_lock);
	smbd_wslot_put_locked(sk, ws);
	spin_unlock_bh(&sk->ss_lock);
	smbd_rw_wake(sk);
	smbd_post_leave(sk);
	if (ret != -EFAULT)
		smbd_sock_error(sk, ret);
	return ret;
}

/* One transfer while smbd_rdma_rw() moves it. */
struct smbd_rw_xfer {
	const struct smbd_buf_desc *descs;	/* the peer's buffer */
	u32 ndescs;
	u64 offset;				/* where in it the transfer starts */
	size_t len;
	size_t done;				/* bytes moved so far */
	u32 max_rw;				/* MaxReadWriteSize */
	u32 chunk;				/* bytes per rdma_rw context */
	u32 page_chunk;				/* from a page's start, or 0 */
	enum dma_data_direction dir;
};

/*
 * Where in its page @it is, when its pages follow one another (a single
 * kvec or bvec); SMBD_LEAD_NONE otherwise.
 */
static u32 smbd_rw_lead(const struct iov_iter *it)
{
	if (it->nr_segs != 1)
		return SMBD_LEAD_NONE;
	if (iov_iter_is_kvec(it))
		return offset_in_page(it->kvec->iov_base + it->iov_offset);
	if (iov_iter_is_bvec(it))
		return offset_in_page(it->bvec->bv_offset + it->iov_offset);
	return SMBD_LEAD_NONE;
}

/*
 * The next window of the peer's buffer, from where the transfer is, into
 * @seg: its segments, at most SMBD_RW_SEGS of them (a buffer with more
 * goes a window at a time). Returns how many, or why none.
 */
static int smbd_rw_window(const struct smbd_rw_xfer *x,
			  struct smbd_buf_desc *seg)
{
	int nseg = smbd_desc_slice(x->descs, x->ndescs, x->offset + x->done,
				   x->len - x->done, x->max_rw, seg,
				   SMBD_RW_SEGS);

	/* More segments than a window: this one first, full. */
	return nseg == -E2BIG ? SMBD_RW_SEGS : nseg;
}

/*
 * A small write into one segment goes from a posted slot: sliced on the
 * stack, with no scratch taken (a second writer on the connection would
 * allocate one). Returns the bytes written, -EAGAIN when the transfer is
 * not one for a slot, or an error.
 */
static ssize_t smbd_rw_try_slot(struct smbd_sock *sk, struct iov_iter *it,
				const struct smbd_rw_xfer *x)
{
	struct smbd_buf_desc one;
	int nseg;

	if (x->dir != DMA_TO_DEVICE || x->len > SMBD_WSLOT_MAX)
		return -EAGAIN;
	nseg = smbd_desc_slice(x->descs, x->ndescs, x->offset, x->len,
			       x->max_rw, &one, 1);
	if (nseg < 0 && nseg != -E2BIG)
		return nseg;
	return nseg == 1 ? smbd_rdma_write_posted(sk, it, &one) : -EAGAIN;
}

/*
 * Move the transfer, a window of segments at a time, each window in
 * chains of as many rdma_rw contexts as the budget gives (smbd_rw_chain()),
 * with @sc's @nslot slots. Returns 0 or why it stopped; x->done says how
 * far it got.
 */
static int smbd_rw_move(struct smbd_sock *sk, struct iov_iter *it,
			struct smbd_rw_xfer *x, struct smbd_rw_scratch *sc,
			u32 nslot)
{
	struct smbd_buf_desc pc[SMBD_RW_CTXS];
	struct smbd_buf_desc *seg = sc->seg;
	u32 i = 0, segoff = 0, n, got, lead;
	struct smbd_op *op;
	int nseg, ret = 0;

	nseg = smbd_rw_window(x, seg);
	if (nseg < 0)
		return nseg;
	op = smbd_op_start(sk, true, GFP_KERNEL);
	if (IS_ERR(op))
		return PTR_ERR(op);
	while (x->done < x->len && !ret) {
		if (i == nseg) {
			/* The next window, from where this one ended. */
			nseg = smbd_rw_window(x, seg);
			if (nseg < 0) {
				ret = nseg;
				break;
			}
			i = 0;
			segoff = 0;
		}
		/*
		 * An iWARP read lands in a registration of the chunk's pages
		 * plus one: a buffer whose pages follow one another moves
		 * as much as they hold from where it starts in its page
		 * (1 MiB from a page's start is one read, not two).
		 */
		lead = x->page_chunk ? smbd_rw_lead(it) : SMBD_LEAD_NONE;
		n = smbd_desc_pieces(seg, nseg, i, segoff,
				     lead == SMBD_LEAD_NONE ? x->chunk :
							      x->page_chunk,
				     lead, pc, nslot);
		got = smbd_rw_ctx_get(sk, n);
		if (!got) {
			ret = READ_ONCE(sk->ss_err) ?: -ENOTCONN;
			break;
		}
		ret = smbd_rw_chain(sk, op, sc->sl, it, pc, got, x->dir);
		smbd_rw_ctx_put(sk, got);
		/* Go on after the pieces moved. */
		for (n = 0; n < got && !ret; n++) {
			x->done += pc[n].length;
			segoff += pc[n].length;
			if (segoff == seg[i].length) {
				i++;
				segoff = 0;
			}
		}
	}
	smbd_op_end(sk, op);
	spin_lock_bh(&sk->ss_lock);
	if (x->dir == DMA_FROM_DEVICE) {
		sk->ss_stats.rdma_reads++;
		sk->ss_stats.rdma_read_bytes += x->done;
	} else {
		sk->ss_stats.rdma_writes++;
		sk->ss_stats.rdma_write_bytes += x->done;
	}
	spin_unlock_bh(&sk->ss_lock);
	return ret;
}

static ssize_t smbd_rdma_rw(struct smbd_sock *sk, struct iov_iter *it,
			    const struct smbd_buf_desc *descs, u32 ndescs,
			    u64 offset, enum dma_data_direction dir)
{
	struct smbd_rw_xfer x = {
		.descs = descs, .ndescs = ndescs, .offset = offset,
		.len = iov_iter_count(it), .dir = dir,
	};
	struct smbd_rw_scratch *sc = NULL;
	ssize_t ret = 0;
	u32 nslot;

	might_sleep();
	if (!x.len)
		return 0;
	if (user_backed_iter(it))
		return -EFAULT;
	/* Sized with the queue pair (smbd_ep_size()), never 0 then. */
	x.chunk = dir == DMA_FROM_DEVICE ? sk->ss_ep.rw_read_chunk :
					   sk->ss_ep.rw_chunk;
	/* What one registration maps from a page's start (its pages). */
	if (dir == DMA_FROM_DEVICE && sk->ss_ep.iwarp && x.chunk)
		x.page_chunk = x.chunk + PAGE_SIZE;
	if (WARN_ON_ONCE(!x.chunk)) {
		ret = -ENOTCONN;
		goto out;
	}
	x.max_rw = READ_ONCE(sk->ss_neg.max_read_write_size);
	ret = smbd_rw_try_slot(sk, it, &x);
	if (ret != -EAGAIN) {
		if (ret > 0) {
			x.done = ret;
			ret = 0;
		}
		goto out;
	}
	ret = 0;
	/*
	 * As many slots as pieces, up to a chain's worth: a window holds
	 * at most SMBD_RW_SEGS segments, each of which ends at most one
	 * piece short of a context's chunk.
	 */
	nslot = min_t(size_t, x.len / x.chunk +
		      min_t(u32, ndescs, SMBD_RW_SEGS), SMBD_RW_CTXS);
	sc = smbd_rw_scratch_get(sk, nslot);
	if (!sc)
		ret = -ENOMEM;
	else
		ret = smbd_rw_move(sk, it, &x, sc, nslot);
out:
	trace_smbd_rdma_rw(sk, dir == DMA_TO_DEVICE, ndescs, x.done,
			   ret ?: x.done);
	smbd_rw_scratch_put(sk, sc);
	return ret ?: x.done;
}

/**
 * smbd_rdma_read() - read the peer's registered buffer ([MS-SMBD] 3.1.4.6)
 * @sk: a connected socket
 * @to: where the data goes (a kernel iterator); its length is how much
 * @descs: the peer's Buffer Descriptors V1, as decoded by
 *	smbd_desc_decode() from its message
 * @ndescs: their number
 * @offset: where in the peer's buffer (the descriptors laid end to end)
 *	to start
 *
 * Any number of descriptors: they are taken SMBD_RW_SEGS at a time.
 *
 * Context: process; sleeps until the data is in @to.
 * Return: the bytes read; -EINVAL, -ERANGE (beyond the descriptors),
 * -EMSGSIZE (above MaxReadWriteSize), -EFAULT, -ENOMEM, -ENOTCONN, or
 * the connection's error: an access the peer's registration refuses ends
 * the connection.
 */
ssize_t smbd_rdma_read(struct smbd_sock *sk, struct iov_iter *to,
		       const struct smbd_buf_desc *descs, u32 ndescs,
		       u64 offset)
{
	struct iov_iter start = *to;
	ssize_t ret;

	ret = smbd_rdma_rw(sk, to, descs, ndescs, offset, DMA_FROM_DEVICE);
	if (ret > 0 && smbd_should_fail(SMBD_FAIL_CORRUPT_READ))
		smbd_corrupt_byte(&start, ret);
	return ret;
}
EXPORT_SYMBOL_NS_GPL(smbd_rdma_read, SMBD);

/**
 * smbd_rdma_write() - write into the peer's buffer ([MS-SMBD] 3.1.4.5)
 * @sk: a connected socket
 * @from: the data (a kernel iterator)
 * @descs: the peer's Buffer Descriptors V1
 * @ndescs: their number
 * @offset: where in the peer's buffer to start
 *
 * A message sent after this returns reaches the peer after the data.
 * On a responder, a write of up to the posted_write_max parameter's
 * bytes into one descriptor is copied and posted, and this returns
 * without waiting for the device (while one of its slots is free); a
 * write that then fails ends the connection, so the message sent after
 * it never arrives.
 *
 * Context: process; may sleep until the device is done with @from, and
 * for a context of the connection's RDMA budget. Takes ss_lock.
 * Return: as smbd_rdma_read().
 */
ssize_t smbd_rdma_write(struct smbd_sock *sk, struct iov_iter *from,
			const struct smbd_buf_desc *descs, u32 ndescs,
			u64 offset)
{
	return smbd_rdma_rw(sk, from, descs, ndescs, offset, DMA_TO_DEVICE);
}
EXPORT_SYMBOL_NS_GPL(smbd_rdma_write, SMBD);

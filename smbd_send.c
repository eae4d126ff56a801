// SPDX-License-Identifier: GPL-2.0
/*
 * smbd: the send engine ([MS-SMBD] 3.1.4.2, 3.1.5.1, 3.1.5.4, 3.1.6.2):
 * a message planned, built and posted segment by segment, the gather
 * lists that map or copy its payload, the send completions, and the
 * negotiation messages. The writers' API is smbd_write.c.
 *
 * Sends cut a message into segments (smbd_seg_plan_*), take one Send
 * Credit each (smbd_cred_send_begin()), and post them in chains of up to
 * SMBD_SEND_BATCH work requests of which the last is signalled, and on
 * siw every one of a page or more (ss_ep.tx_sig_bytes).
 *
 * A blocking send maps the sender's pages for the device and returns
 * once every segment completed (zero-copy), failing if one did not.
 * Non-blocking sends, SMBD_SEND_COPY sends, sends from user memory and
 * payloads of at most SMBD_COPYBREAK bytes are copied; a send that
 * copied everything by request returns once posted. Copies go to the
 * send context's slot, or to a copy buffer it borrows (smbd_xfer.c).
 *
 * Empty messages (credit grants, keep-alives and their answers) go
 * through it too (smbd_write.c: smbd_send_empty()).
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <kunit/visibility.h>
#include <linux/errno.h>
#include <linux/slab.h>
#include <linux/uio.h>
#include <rdma/ib_verbs.h>

#include "smbd_internal.h"
#include "smbd_trace.h"

/**
 * smbd_send_negotiate_locked() - post one negotiate message
 * @sk: a socket in negotiation
 * @pdu: the message
 * @len: its length, at most a send context's slot (%SMBD_TX_SLOT)
 *
 * Context: any; caller holds @sk->ss_lock.
 * Return: 0, -ENOBUFS with no free send context, or the post's error.
 */
int smbd_send_negotiate_locked(struct smbd_sock *sk, const void *pdu,
			       u32 len)
{
	const struct ib_send_wr *bad;
	struct smbd_send_ctx *tx;
	int ret;

	lockdep_assert_held(&sk->ss_lock);
	BUILD_BUG_ON(sizeof(struct smbd_neg_resp_pdu) > SMBD_TX_SLOT ||
		     sizeof(struct smbd_neg_req_pdu) > SMBD_TX_SLOT);
	if (WARN_ON_ONCE(len > SMBD_TX_SLOT))
		return -EINVAL;
	tx = list_first_entry_or_null(&sk->ss_tx.free, struct smbd_send_ctx,
				      tx_node);
	if (!tx)
		return -ENOBUFS;
	list_del(&tx->tx_node);
	sk->ss_tx.free_count--;
	tx->tx_seq = ++sk->ss_tx.seq;
	memcpy(tx->tx_buf, pdu, len);
	tx->tx_sge[0].length = len;
	tx->tx_wr.num_sge = 1;
	tx->tx_wr.opcode = IB_WR_SEND;
	tx->tx_wait = NULL;
	tx->tx_wr.next = NULL;
	tx->tx_wr.send_flags = IB_SEND_SIGNALED;
	ib_dma_sync_single_for_device(sk->ss_ep.ibdev, tx->tx_dma, len,
				      DMA_TO_DEVICE);
	ret = smbd_post(sk, &tx->tx_wr, &bad, SMBD_POST_LOCKED);
	if (ret)
		smbd_tx_put_locked(sk, tx);
	else
		set_bit(SMBD_NEG_POSTED, &sk->ss_neg_trace);
	return ret;
}

/**
 * smbd_send_negotiate() - post the Negotiate Request
 * @sk: an initiator whose RDMA connection is established
 * @pdu: the message
 * @len: its length
 *
 * Context: process (connection manager handler).
 * Return: 0 or a negative errno.
 */
int smbd_send_negotiate(struct smbd_sock *sk, const void *pdu, u32 len)
{
	int ret;

	spin_lock_bh(&sk->ss_lock);
	ret = smbd_send_negotiate_locked(sk, pdu, len);
	spin_unlock_bh(&sk->ss_lock);
	return ret;
}

/**
 * smbd_tx_unmap() - give the sender's pages back
 * @sk: the socket
 * @tx: a send context no longer on the queue pair
 *
 * Unmaps what smbd_tx_fill() mapped for this context.
 *
 * Context: any.
 */
void smbd_tx_unmap(struct smbd_sock *sk, struct smbd_send_ctx *tx)
{
	u32 i;

	for (i = 1; i <= tx->tx_nmapped; i++)
		ib_dma_unmap_page(sk->ss_ep.ibdev, tx->tx_sge[i].addr,
				  tx->tx_sge[i].length, DMA_TO_DEVICE);
	tx->tx_nmapped = 0;
}

/**
 * smbd_tx_wait_put() - a batch of a blocking send is done
 * @w: the sender's wait, or NULL
 * @err: 0 when the device completed the batch, else why not
 *
 * Wakes the sender after its last batch. The error is stored before the
 * reference is dropped: the fully ordered atomic_dec_and_test() and the
 * completion publish it to the sender.
 *
 * Context: any.
 */
void smbd_tx_wait_put(struct smbd_send_wait *w, int err)
{
	if (!w)
		return;
	if (err)
		WRITE_ONCE(w->sw_err, err);
	if (atomic_dec_and_test(&w->sw_pending))
		complete(&w->sw_done);
}

/**
 * smbd_tx_abandon() - give up the sends whose completions never came
 * @sk: a socket whose send queue is fenced: nothing posted before the
 *	marker is running any more
 *
 * A dying queue pair's provider may lose completions (siw did, after
 * the error state). Every send still waited for gives its pages back and
 * wakes its blocking sender with -ECONNABORTED; the context itself stays
 * out of the free list (the connection is over), and a completion that
 * still comes for it finds nothing left to do but return it.
 *
 * Context: the send completion handler (the fence's marker), or process
 * (smbd_sock_dead()); takes ss_lock, under which smbd_send_done() and a
 * sender's smbd_post_failed() touch the same contexts.
 */
void smbd_tx_abandon(struct smbd_sock *sk)
{
	struct smbd_send_ctx *tx, *pos;
	u32 i;

	/* ss_lock: against a sender's smbd_post_failed() on the same ones. */
	spin_lock_bh(&sk->ss_lock);
	for (i = 0; sk->ss_tx.ctxs && i < sk->ss_tx.nr; i++) {
		tx = &sk->ss_tx.ctxs[i];
		/* Pairs with smbd_post_batch(): its batch is complete. */
		if (!smp_load_acquire(&tx->tx_wait))
			continue;
		list_for_each_entry(pos, &tx->tx_batch, tx_node)
			smbd_tx_unmap(sk, pos);
		smbd_tx_unmap(sk, tx);
		smbd_tx_wait_put(tx->tx_wait, -ECONNABORTED);
		tx->tx_wait = NULL;
	}
	spin_unlock_bh(&sk->ss_lock);
}

/* Copy @n bytes from the parts of a message, in order. */
static size_t smbd_copy_parts(struct iov_iter *parts, u32 nparts, u32 *cur,
			      void *dst, size_t n)
{
	size_t done = 0, k;

	while (done < n && *cur < nparts) {
		k = copy_from_iter(dst + done, n - done, &parts[*cur]);
		done += k;
		if (!iov_iter_count(&parts[*cur]))
			(*cur)++;
		else if (!k)
			break;
	}
	return done;
}

/*
 * Map @len bytes of kernel iterator @it into the gather list of @tx from
 * entry *@nsge on, using at most @max entries. Physically contiguous
 * pages share an entry. Returns the bytes mapped; the iterator advances
 * by exactly that much.
 */
static size_t smbd_tx_map_iter(struct smbd_sock *sk,
			       struct smbd_send_ctx *tx, struct iov_iter *it,
			       size_t len, u32 *nsge, u32 max)
{
	struct page *pages[SMBD_TX_SGE_MAX], **pp = pages;
	size_t off, got, done = 0;
	ssize_t ret;
	u32 k = 0;

	if (*nsge >= max || user_backed_iter(it))
		return 0;
	ret = iov_iter_extract_pages(it, &pp, len, max - *nsge, 0, &off);
	if (ret <= 0)
		return 0;
	got = ret;
	while (done < got && *nsge < max) {
		size_t n = min_t(size_t, got - done, PAGE_SIZE - off);
		struct page *first = pages[k];
		u64 dma;

		while (done + n < got &&
		       page_to_pfn(pages[k + 1]) == page_to_pfn(pages[k]) + 1) {
			k++;
			n += min_t(size_t, got - done - n, PAGE_SIZE);
		}
		if (smbd_should_fail(SMBD_FAIL_DMA))
			break;
		dma = ib_dma_map_page(sk->ss_ep.ibdev, first, off, n,
				      DMA_TO_DEVICE);
		if (ib_dma_mapping_error(sk->ss_ep.ibdev, dma))
			break;
		tx->tx_sge[*nsge].addr = dma;
		tx->tx_sge[*nsge].length = n;
		(*nsge)++;
		done += n;
		off = 0;
		k++;
	}
	/* What could not be mapped is copied by the caller. */
	if (done < got)
		iov_iter_revert(it, got - done);
	return done;
}

/**
 * smbd_tx_map() - map as much of a segment's payload as the device takes
 * @sk: the socket
 * @tx: the segment's send context; its header is already in tx_buf
 * @parts: the message's parts
 * @nparts: how many
 * @cur: the part being sent; advanced as parts are used up
 * @hdr_len: the header's length on the wire
 * @len: the payload bytes of this segment
 *
 * Starts the gather list with the header and maps the parts' pages from
 * *@cur on, keeping the last gather entry for smbd_tx_copy(). Memory of
 * the user's, a failed mapping or too few gather entries stop it short.
 *
 * Context: any.
 * Return: the payload bytes mapped; the parts advance by as much.
 */
u32 smbd_tx_map(struct smbd_sock *sk, struct smbd_send_ctx *tx,
		struct iov_iter *parts, u32 nparts, u32 *cur, u32 hdr_len,
		u32 len)
{
	u32 nsge = 1, done = 0;

	tx->tx_sge[0].length = hdr_len;
	while (done < len && *cur < nparts) {
		struct iov_iter *it = &parts[*cur];
		size_t n;

		if (!iov_iter_count(it)) {
			(*cur)++;
			continue;
		}
		n = smbd_tx_map_iter(sk, tx, it, len - done, &nsge,
				     sk->ss_ep.tx_sge - 1);
		if (!n)
			break;
		done += n;
	}
	tx->tx_nmapped = nsge - 1;
	tx->tx_wr.num_sge = nsge;
	return done;
}

/**
 * smbd_tx_copy() - copy the rest of a segment's payload after its header
 * @sk: the socket
 * @tx: the segment's send context, after smbd_tx_map() (or with only the
 *	header's gather entry: tx_sge[0].length and tx_wr.num_sge of 1)
 * @parts: the message's parts
 * @nparts: how many
 * @cur: the part being sent; advanced as parts are used up
 * @len: the payload bytes left, at most smbd_tx_room()
 *
 * Context: any.
 * Return: the bytes copied (fewer only on a fault, and none if @len is
 * more than the buffer holds, a bug in the caller).
 */
u32 smbd_tx_copy(struct smbd_sock *sk, struct smbd_send_ctx *tx,
		 struct iov_iter *parts, u32 nparts, u32 *cur, u32 len)
{
	u32 nsge = tx->tx_wr.num_sge, n = 0;

	/* Never past the buffer: a segment the plan made too large fails. */
	if (WARN_ON_ONCE(len > smbd_tx_room(sk, tx)))
		return 0;
	if (len) {
		/* The copy goes right after the header's padding. */
		n = smbd_copy_parts(parts, nparts, cur,
				    tx->tx_buf + SMBD_DATA_OFFSET, len);
		if (nsge == 1) {
			tx->tx_sge[0].length = SMBD_DATA_OFFSET + n;
		} else {
			tx->tx_sge[nsge].addr = tx->tx_dma + SMBD_DATA_OFFSET;
			tx->tx_sge[nsge].length = n;
			nsge++;
		}
	}
	ib_dma_sync_single_for_device(sk->ss_ep.ibdev, tx->tx_dma,
				      len ? SMBD_DATA_OFFSET + n :
				      tx->tx_sge[0].length, DMA_TO_DEVICE);
	tx->tx_wr.num_sge = nsge;
	return n;
}

/**
 * smbd_tx_release() - give up every send before the buffers go
 * @sk: a socket whose queue pair is gone, or was never used
 *
 * A send whose completion never came: left on the queue pair by a failed
 * post, or lost by a provider that flushes its drain marker ahead of
 * older requests (siw after a fatal error). The queue pair is gone, so
 * the pages are free: give them back and wake their sender, which must
 * not take a send nobody saw complete for a sent one.
 *
 * Context: process.
 */
void smbd_tx_release(struct smbd_sock *sk)
{
	u32 i;

	for (i = 0; sk->ss_tx.ctxs && i < sk->ss_tx.nr; i++) {
		struct smbd_send_ctx *tx = &sk->ss_tx.ctxs[i];

		smbd_tx_unmap(sk, tx);
		smbd_tx_wait_put(tx->tx_wait, -ECONNABORTED);
		tx->tx_wait = NULL;
	}
}

/*
 * A negotiation message completed with @status: noted for the timer's
 * report, and an initiator whose request went starts probing the peer's
 * queue pair until the response comes (smbd_neg_probe_work()).
 */
static void smbd_neg_sent_locked(struct smbd_sock *sk,
				 enum ib_wc_status status)
{
	lockdep_assert_held(&sk->ss_lock);
	set_bit(status == IB_WC_SUCCESS ? SMBD_NEG_SENT : SMBD_NEG_SEND_FAILED,
		&sk->ss_neg_trace);
	/*
	 * Under ss_lock, with the state: whoever calls the teardown leaves
	 * NEGOTIATING first, and the teardown drains before it cancels the
	 * probe, so nothing queues it after that. One chain only: the send
	 * queue has room for one probe.
	 */
	if (status == IB_WC_SUCCESS && !sk->ss_responder &&
	    !sk->ss_ep.iwarp && sk->ss_state == SMBD_NEGOTIATING &&
	    !test_and_set_bit(SMBD_NEG_PROBING, &sk->ss_neg_trace))
		queue_delayed_work(smbd_wq, &sk->ss_probe_work,
				   msecs_to_jiffies(SMBD_NEG_PROBE_MS));
}

/**
 * smbd_send_done() - a signalled send completed, or any send failed
 * @cq: the send completion queue
 * @wc: the completion
 *
 * Context: softirq, or ib_core's completion workqueue (cq_poll); never
 * sleeps.
 */
void smbd_send_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct smbd_send_ctx *tx = container_of(wc->wr_cqe,
						struct smbd_send_ctx, tx_cqe.cqe);
	struct smbd_sock *sk = tx->tx_sk;
	const struct smbd_sock_ops *ops;
	struct smbd_send_ctx *pos, *next;
	struct smbd_send_wait *w;
	u32 n = 1, waiters;
	bool closing, space;

	smbd_wc_begin(cq, wc, false);
	/*
	 * An unsignalled request completes only when flushed or failed; the
	 * signalled tail of its batch completes after it and returns it.
	 */
	if (!(tx->tx_wr.send_flags & IB_SEND_SIGNALED)) {
		if (wc->status != IB_WC_SUCCESS)
			smbd_wr_failed(sk, wc->status, "send");
		return;
	}

	/*
	 * Every request of the batch is done (a send queue completes in
	 * order): its pages go back to their blocking sender, with the
	 * result ([MS-SMBD] 3.1.4.2, 3.1.5.4: the provider's result goes to
	 * the caller). The tail speaks for the whole batch: a request that
	 * fails moves a reliable connection's queue pair to the error state,
	 * so every later one, the tail included, is flushed with an error.
	 * The unsignalled requests need not find their sender. Under
	 * ss_lock: smbd_tx_abandon() may give the same batch up from a
	 * device's death, outside this handler.
	 */
	spin_lock_bh(&sk->ss_lock);
	list_for_each_entry(pos, &tx->tx_batch, tx_node) {
		smbd_tx_unmap(sk, pos);
		n++;
	}
	smbd_tx_unmap(sk, tx);
	trace_smbd_send_done(sk, tx->tx_seq, n, wc->status);
	w = tx->tx_wait;
	tx->tx_wait = NULL;
	smbd_tx_wait_put(w, wc->status == IB_WC_SUCCESS ? 0 : -ECONNABORTED);

	if (sk->ss_state < SMBD_CONNECTED)	/* a negotiate message */
		smbd_neg_sent_locked(sk, wc->status);
	list_for_each_entry_safe(pos, next, &tx->tx_batch, tx_node)
		smbd_tx_put_locked(sk, pos);
	INIT_LIST_HEAD(&tx->tx_batch);
	smbd_tx_put_locked(sk, tx);
	ops = sk->ss_ops;
	closing = sk->ss_state == SMBD_REFUSING;
	space = smbd_space_locked(sk, true);
	waiters = sk->ss_tx.waiters;
	spin_unlock_bh(&sk->ss_lock);

	if (closing) {
		/* The failure response is out: now end the connection. */
		smbd_sock_error(sk, -EPROTO);
		return;
	}

	if (wc->status != IB_WC_SUCCESS)
		smbd_wr_failed(sk, wc->status, "send");
	/*
	 * Send buffers are free: only a sender can want them, and one that
	 * waits counted itself in ss_tx.waiters under ss_lock first.
	 */
	if (waiters)
		wake_up_all(&sk->ss_send_wq);
	if (space && ops && ops->write_space)
		ops->write_space(sk);
}

/* Must this send be signalled even inside a batch? See ss_ep.tx_sig_bytes. */
static bool smbd_tx_must_signal(const struct smbd_sock *sk,
				const struct smbd_send_ctx *tx)
{
	return smbd_wr_bytes(&tx->tx_wr) >= sk->ss_ep.tx_sig_bytes;
}

/*
 * ib_post_send() refused the chain from @head at @bad. The requests
 * before it were posted: a signalled one completes as usual, with the
 * unsignalled ones it owns. Unsignalled ones whose owner was not posted
 * (the orphans) would complete unseen: the queue pair is fenced, and
 * then they come back, with their pages ("Posted work" in
 * Documentation/smbd.rst). The rest come back at once, and their owners'
 * sender hears @err. Called by the sender itself, which waits for its
 * batches after this returns. Context: process; sleeps.
 */
static void smbd_post_failed(struct smbd_sock *sk, struct smbd_send_ctx *head,
			     const struct ib_send_wr *bad, int err)
{
	struct ib_send_wr *wr, *orphans = NULL;
	struct smbd_send_ctx *tx, *next;
	LIST_HEAD(orphaned);
	LIST_HEAD(back);

	for (wr = &head->tx_wr; wr != bad; wr = wr->next) {
		if (wr->send_flags & IB_SEND_SIGNALED)
			orphans = NULL;
		else if (!orphans)
			orphans = wr;
	}
	/* Under ss_lock: a fence's smbd_tx_abandon() walks the same ones. */
	spin_lock_bh(&sk->ss_lock);
	for (wr = orphans; wr && wr != bad; wr = wr->next) {
		tx = container_of(wr, struct smbd_send_ctx, tx_wr);
		list_move_tail(&tx->tx_node, &orphaned);
	}
	for (wr = (struct ib_send_wr *)bad; wr; wr = wr->next) {
		tx = container_of(wr, struct smbd_send_ctx, tx_wr);
		list_del_init(&tx->tx_node);
		smbd_tx_unmap(sk, tx);
		smbd_tx_wait_put(tx->tx_wait, err);
		tx->tx_wait = NULL;
		list_add_tail(&tx->tx_node, &back);
	}
	spin_unlock_bh(&sk->ss_lock);
	smbd_sock_error(sk, err);
	if (!list_empty(&orphaned)) {
		smbd_qp_fence(sk);
		list_for_each_entry_safe(tx, next, &orphaned, tx_node) {
			smbd_tx_unmap(sk, tx);
			list_move_tail(&tx->tx_node, &back);
		}
	}
	spin_lock_bh(&sk->ss_lock);
	list_for_each_entry_safe(tx, next, &back, tx_node)
		smbd_tx_put_locked(sk, tx);
	spin_unlock_bh(&sk->ss_lock);
}

/* The smbd_send event of each request of a chain about to be posted. */
static void smbd_trace_chain(struct smbd_sock *sk, struct smbd_send_ctx *head)
{
	struct ib_send_wr *wr;

	for (wr = &head->tx_wr; wr; wr = wr->next) {
		struct smbd_send_ctx *tx = container_of(wr, struct smbd_send_ctx,
							tx_wr);
		struct smbd_data_hdr h;

		smbd_data_hdr_decode(tx->tx_buf, &h);
		trace_smbd_send(sk, tx->tx_seq, &h,
				wr->opcode == IB_WR_SEND_WITH_INV,
				wr->send_flags & IB_SEND_SIGNALED);
	}
}

/*
 * Post a batch of filled send contexts as one chain. The last one is
 * signalled, and any that smbd_tx_must_signal() picks; each signalled one
 * owns the unsignalled ones before it (on its tx_batch) and returns them
 * when it completes. @w: the blocking sender of the batch, which waits
 * for every signalled completion and its result, or NULL.
 */
static int smbd_post_batch(struct smbd_sock *sk, struct list_head *batch,
			   struct smbd_send_wait *w)
{
	struct smbd_send_ctx *tx, *next, *head, *prev = NULL;
	const struct ib_send_wr *bad_wr = NULL;
	LIST_HEAD(owned);
	int ret;

	if (list_empty(batch))
		return 0;
	head = list_first_entry(batch, struct smbd_send_ctx, tx_node);
	list_for_each_entry_safe(tx, next, batch, tx_node) {
		tx->tx_wr.next = NULL;
		if (prev)
			prev->tx_wr.next = &tx->tx_wr;
		prev = tx;
		if (!list_is_last(&tx->tx_node, batch) &&
		    !smbd_tx_must_signal(sk, tx)) {
			tx->tx_wr.send_flags = 0;
			list_move_tail(&tx->tx_node, &owned);
			continue;
		}
		tx->tx_wr.send_flags = IB_SEND_SIGNALED;
		if (w)
			atomic_inc(&w->sw_pending);
		list_del_init(&tx->tx_node);
		list_splice_init(&owned, &tx->tx_batch);
		/* Last: smbd_tx_abandon() walks the batch of one it sees. */
		smp_store_release(&tx->tx_wait, w);
	}

	if (trace_smbd_send_enabled())
		smbd_trace_chain(sk, head);
	ret = smbd_post(sk, &head->tx_wr, &bad_wr, SMBD_POST_SENDER);
	if (ret)
		smbd_post_failed(sk, head, bad_wr ?: &head->tx_wr, ret);
	return ret;
}

/*
 * A Send Credit for the next segment; for an @empty message only if it
 * has something to carry.
 */
static enum smbd_cred_verdict smbd_send_verdict(struct smbd_sock *sk,
						u16 *grant, bool empty)
{
	lockdep_assert_held(&sk->ss_lock);
	if (empty)
		return smbd_cred_empty_begin(&sk->ss_cred, smbd_ka_msg_due(sk),
					     grant);
	return smbd_cred_send_begin(&sk->ss_cred, grant);
}

/*
 * Take a send context and a Send Credit for the next segment, and a copy
 * buffer for it if @copy. @empty: the empty message of smbd_send_empty(),
 * which goes only if it grants or a keep-alive needs it, as decided now
 * (smbd_cred_empty_begin()). Returns 0 with *@txp and *@grant set,
 * -EAGAIN when the caller must post its batch and wait, -ENODATA when
 * the empty message has nothing to carry, or the connection's error.
 */
static int smbd_take_credit(struct smbd_sock *sk, struct smbd_send_ctx **txp,
			    u16 *grant, bool copy, bool empty)
{
	enum smbd_cred_verdict v;

	lockdep_assert_held(&sk->ss_lock);
	if (sk->ss_state != SMBD_CONNECTED)
		return sk->ss_err ?: -ENOTCONN;
	if (!sk->ss_tx.free_count || (copy && !sk->ss_tx.copy_free_count))
		return -EAGAIN;
	v = smbd_send_verdict(sk, grant, empty);
	if (v == SMBD_CRED_LAST_CREDIT) {
		/* [MS-SMBD] 3.1.5.9: post one more so the message can grant. */
		if (smbd_post_recvs(sk, true) > 0)
			v = smbd_send_verdict(sk, grant, empty);
	}
	if (v == SMBD_CRED_NOTHING_DUE)
		return -ENODATA;
	if (v != SMBD_CRED_SEND)
		return -EAGAIN;
	*txp = list_first_entry(&sk->ss_tx.free, struct smbd_send_ctx, tx_node);
	list_del(&(*txp)->tx_node);
	sk->ss_tx.free_count--;
	(*txp)->tx_seq = ++sk->ss_tx.seq;
	if (copy)
		smbd_tx_lend_copy_locked(sk, *txp);
	return 0;
}

/*
 * One upper-layer message on its way out (smbd_send_msg()): its parts and
 * how far they are consumed, the sends filled but not yet posted, and
 * what went.
 */
struct smbd_tx_run {
	struct iov_iter *parts;
	u32 nparts;
	u32 cur;			/* the part being consumed */
	struct smbd_send_wait *w;	/* see smbd_send_msg() */
	struct list_head batch;		/* filled, not yet posted */
	u32 nbatch;
	u32 sent;			/* payload bytes filled */
	u32 mapped;			/* of them, mapped (zero-copy) */
};

/* Post the sends @run filled, if any (smbd_post_batch()). */
static int smbd_run_post(struct smbd_sock *sk, struct smbd_tx_run *run)
{
	if (!run->nbatch)
		return 0;
	run->nbatch = 0;
	return smbd_post_batch(sk, &run->batch, run->w);
}

/*
 * A segment that mapped what it could has more left to copy than its
 * slot holds: lend it a copy buffer, waiting for one if none is free.
 * Only this sender and the sends it posted hold copy buffers, so its own
 * filled batch goes out first. Returns 0, or why not (the batch's post
 * failed or the connection is over); @tx is still the caller's.
 *
 * The segment's header @h moves to the copy buffer, granting too the
 * receives posted meanwhile ([MS-SMBD] 3.1.5.9): a grant that fell due
 * while we held the send mutex was left to our next message, and this
 * may be the last one.
 */
static int smbd_tx_wait_copy(struct smbd_sock *sk, struct smbd_send_ctx *tx,
			     struct smbd_data_hdr *h, struct smbd_tx_run *run)
{
	u16 more = 0;
	int ret;

	ret = smbd_run_post(sk, run);
	if (ret)
		return ret;
	spin_lock_bh(&sk->ss_lock);
	while (sk->ss_state == SMBD_CONNECTED && !sk->ss_tx.copy_free_count) {
		sk->ss_tx.waiters++;
		sk->ss_cnt.copy_waits++;
		spin_unlock_bh(&sk->ss_lock);
		/*
		 * Not interruptible: the segment has its credit and its
		 * mapped pages, and the copy buffers come back with the
		 * completions of sends already posted, or at the error.
		 */
		wait_event(sk->ss_send_wq,
			   READ_ONCE(sk->ss_tx.copy_free_count) ||
			   READ_ONCE(sk->ss_state) != SMBD_CONNECTED);
		spin_lock_bh(&sk->ss_lock);
		sk->ss_tx.waiters--;
	}
	ret = sk->ss_state == SMBD_CONNECTED ? 0 : sk->ss_err ?: -ENOTCONN;
	if (!ret) {
		smbd_tx_lend_copy_locked(sk, tx);
		more = smbd_cred_take_grant(&sk->ss_cred);
		if (more && !h->credits_granted)
			sk->ss_stats.grants_sent++;
		if (more)
			trace_smbd_credit_grant(sk, more);
	}
	spin_unlock_bh(&sk->ss_lock);
	if (!ret) {
		h->credits_granted += more;
		smbd_data_hdr_encode(h, tx->tx_buf);
	}
	return ret;
}

/*
 * Could smbd_take_credit(..., @copy) succeed now (or is the connection
 * gone)? A segment that copies nothing or fits its slot needs no copy
 * buffer, and must not wait for one.
 */
static bool smbd_send_possible(struct smbd_sock *sk, bool copy)
{
	bool ok;

	spin_lock_bh(&sk->ss_lock);
	ok = sk->ss_state != SMBD_CONNECTED || smbd_space_locked(sk, copy);
	spin_unlock_bh(&sk->ss_lock);
	return ok;
}

/*
 * The bytes of @nparts iterators, and where in its message they start: at
 * 0, or where a non-blocking call left a message half-sent, which they
 * must then complete exactly.
 */
static int smbd_send_span(struct smbd_sock *sk, struct iov_iter *parts,
			  u32 nparts, u32 *total, u32 *start)
{
	u32 len = 0, i;

	for (i = 0; i < nparts; i++) {
		if (iov_iter_count(&parts[i]) > U32_MAX - len)
			return -EMSGSIZE;
		len += iov_iter_count(&parts[i]);
	}
	if (sk->ss_tx.msg_done < sk->ss_tx.msg_len) {
		*total = sk->ss_tx.msg_len;
		*start = sk->ss_tx.msg_done;
		if (len != *total - *start)
			return -EINVAL;
	} else {
		*total = len;
		*start = 0;
	}
	return 0;
}

/*
 * The header of segment @seg, as decided with its Send Credit: the grant
 * it carries, the credits asked ([MS-SMBD] 3.1.5.1, 3.1.5.9) and a
 * keep-alive's RESPONSE_REQUESTED (3.1.6.2).
 */
static void smbd_seg_hdr_locked(struct smbd_sock *sk,
				const struct smbd_seg *seg, u16 grant,
				struct smbd_data_hdr *h)
{
	u32 rearm;

	lockdep_assert_held(&sk->ss_lock);
	h->flags = smbd_ka_on_send(&sk->ss_ka, &rearm);
	if (h->flags & SMBD_FLAG_RESPONSE_REQUESTED) {
		sk->ss_stats.keepalives_sent++;
		trace_smbd_keepalive(sk, SMBD_TRACE_KA_ASK);
	}
	if (rearm)
		mod_delayed_work(smbd_wq, &sk->ss_ka_work,
				 msecs_to_jiffies(rearm));
	h->credits_requested = smbd_cred_requested(&sk->ss_cred);
	h->credits_granted = grant;
	h->remaining_data_length = seg->remaining;
	h->data_offset = seg->data_offset;
	h->data_length = seg->data_length;
	sk->ss_stats.segs_sent++;
	if (!seg->data_length)
		sk->ss_cnt.empty_sent++;
	if (grant) {
		sk->ss_stats.grants_sent++;
		trace_smbd_credit_grant(sk, grant);
	}
}

/*
 * A send context and a Send Credit for segment @seg (smbd_take_credit()),
 * and its header in *@h. Out of either, @run's filled sends go out first;
 * then the sender waits unless @nonblock. Returns 0 with *@txp set, or
 * why not.
 */
static int smbd_seg_take(struct smbd_sock *sk, struct smbd_tx_run *run,
			 const struct smbd_seg *seg, bool copy, bool nonblock,
			 bool empty, struct smbd_send_ctx **txp,
			 struct smbd_data_hdr *h)
{
	u16 grant;
	u64 t0;
	int ret;

	spin_lock_bh(&sk->ss_lock);
	while ((ret = smbd_take_credit(sk, txp, &grant, copy,
				       empty)) == -EAGAIN) {
		if (run->nbatch) {
			spin_unlock_bh(&sk->ss_lock);
			ret = smbd_run_post(sk, run);
			spin_lock_bh(&sk->ss_lock);
			if (ret)
				break;
			continue;
		}
		if (nonblock)
			break;
		sk->ss_tx.waiters++;
		sk->ss_stats.credit_waits++;
		trace_smbd_credit_stall(sk, 0);
		spin_unlock_bh(&sk->ss_lock);
		t0 = ktime_get_ns();
		ret = wait_event_interruptible(sk->ss_send_wq,
					       smbd_send_possible(sk, copy));
		t0 = ktime_get_ns() - t0;
		spin_lock_bh(&sk->ss_lock);
		sk->ss_cnt.credit_stall_ns += t0;
		sk->ss_tx.waiters--;
		if (ret)
			break;
	}
	if (!ret)
		smbd_seg_hdr_locked(sk, seg, grant, h);
	spin_unlock_bh(&sk->ss_lock);
	return ret;
}

/*
 * Fill @tx with its header @h and the segment's payload: mapped where it
 * may be (@zcopy), else copied, to a copy buffer if the slot is too small;
 * then queue it on @run's batch. @inv: the token it invalidates, or NULL.
 * On failure @tx is given back and the credit is spent.
 */
static int smbd_seg_fill(struct smbd_sock *sk, struct smbd_tx_run *run,
			 struct smbd_send_ctx *tx, struct smbd_data_hdr *h,
			 bool zcopy, const u32 *inv)
{
	u32 len = h->data_length, mapped, left;
	int ret = 0;

	smbd_data_hdr_encode(h, tx->tx_buf);
	mapped = smbd_tx_map(sk, tx, run->parts, run->nparts, &run->cur,
			     smbd_data_hdr_wire_len(h), zcopy ? len : 0);
	left = len - mapped;
	if (left > smbd_tx_room(sk, tx))
		ret = smbd_tx_wait_copy(sk, tx, h, run);
	if (!ret && smbd_tx_copy(sk, tx, run->parts, run->nparts, &run->cur,
				 left) != left)
		/*
		 * A fault in a kernel iterator, or a segment larger than its
		 * buffer (a bug).
		 */
		ret = -EFAULT;
	if (ret) {
		smbd_tx_unmap(sk, tx);
		spin_lock_bh(&sk->ss_lock);
		smbd_tx_put_locked(sk, tx);
		spin_unlock_bh(&sk->ss_lock);
		if (ret == -EFAULT)
			smbd_sock_error(sk, -EFAULT);
		return ret;
	}
	if (inv) {
		tx->tx_wr.opcode = IB_WR_SEND_WITH_INV;
		tx->tx_wr.ex.invalidate_rkey = *inv;
	} else {
		tx->tx_wr.opcode = IB_WR_SEND;
	}
	list_add_tail(&tx->tx_node, &run->batch);
	run->nbatch++;
	run->sent += len;
	run->mapped += mapped;
	return 0;
}

/* Give back the sends @run filled and never posted. */
static void smbd_run_drop(struct smbd_sock *sk, struct smbd_tx_run *run)
{
	struct smbd_send_ctx *tx, *next;

	if (!run->nbatch)
		return;
	list_for_each_entry(tx, &run->batch, tx_node)
		smbd_tx_unmap(sk, tx);
	spin_lock_bh(&sk->ss_lock);
	list_for_each_entry_safe(tx, next, &run->batch, tx_node)
		smbd_tx_put_locked(sk, tx);
	spin_unlock_bh(&sk->ss_lock);
	run->nbatch = 0;
}

/*
 * Account @sent bytes of a message of @total from @start, @mapped of them
 * zero-copy; a message sent whole is done.
 */
static void smbd_send_account(struct smbd_sock *sk, u32 total, u32 start,
			      u32 sent, u32 mapped)
{
	sk->ss_tx.msg_len = total;
	sk->ss_tx.msg_done = start + sent;
	spin_lock_bh(&sk->ss_lock);
	if (sk->ss_tx.msg_done == total) {
		sk->ss_tx.msg_len = 0;
		sk->ss_tx.msg_done = 0;
		/* An empty message (smbd_send_empty()) carries none. */
		if (total)
			sk->ss_stats.msgs_sent++;
	}
	sk->ss_stats.bytes_sent += sent;
	sk->ss_stats.bytes_zcopy += mapped;
	spin_unlock_bh(&sk->ss_lock);
}

/**
 * smbd_send_msg() - the send engine: one upper-layer message on the wire
 * @sk: a socket
 * @parts: the message, in @nparts iterators; or what is left of one a
 *	non-blocking call left half-sent
 * @nparts: how many
 * @w: a blocking sender's wait: its pages may be mapped (zero-copy) and
 *	every batch reports its result to it; NULL to copy everything and
 *	not wait for the device (non-blocking and SMBD_SEND_COPY sends)
 * @inv: the peer's token to invalidate with the message's first segment
 *	([MS-SMBD] 3.1.5.4: exactly one segment), or NULL
 * @nonblock: never sleep for Send Credits
 * @empty: the empty message of smbd_send_empty(): nothing goes (-ENODATA)
 *	unless it has something to carry (smbd_take_credit())
 *
 * Each segment is planned (smbd_seg_plan_get()), given a send context
 * and a Send Credit (smbd_seg_take()), built (smbd_seg_fill()) and posted
 * in batches (smbd_post_batch()).
 *
 * Context: process; may sleep unless @nonblock. Caller holds
 * @sk->ss_send_mutex.
 * Return: the bytes accepted, or a negative errno when none were.
 */
ssize_t smbd_send_msg(struct smbd_sock *sk, struct iov_iter *parts,
		      u32 nparts, struct smbd_send_wait *w, const u32 *inv,
		      bool nonblock, bool empty)
{
	struct smbd_tx_run run = { .parts = parts, .nparts = nparts, .w = w };
	struct smbd_seg_plan plan;
	u32 total, start, idx;
	int ret;

	lockdep_assert_held(&sk->ss_send_mutex);
	ret = smbd_send_span(sk, parts, nparts, &total, &start);
	if (ret)
		return ret;
	ret = smbd_seg_plan_init(&plan, total, sk->ss_neg.max_send_size,
				 sk->ss_neg.max_fragmented_send_size);
	if (ret)
		return ret;

	INIT_LIST_HEAD(&run.batch);
	for (idx = start / plan.max_payload; idx < plan.nsegs; idx++) {
		struct smbd_send_ctx *tx;
		struct smbd_data_hdr h;
		struct smbd_seg seg;
		bool zcopy, copy;

		smbd_seg_plan_get(&plan, idx, &seg);
		/* Mapped if it may be, else copied: to a copy buffer if big. */
		zcopy = w && seg.data_length > SMBD_COPYBREAK;
		copy = !zcopy &&
		       seg.data_length > SMBD_TX_SLOT_DATA;
		ret = smbd_seg_take(sk, &run, &seg, copy, nonblock, empty,
				    &tx, &h);
		if (!ret)
			ret = smbd_seg_fill(sk, &run, tx, &h, zcopy,
					    idx ? NULL : inv);
		if (!ret && (run.nbatch == SMBD_SEND_BATCH ||
			     idx + 1 == plan.nsegs))
			ret = smbd_run_post(sk, &run);
		if (ret)
			break;
	}
	smbd_run_drop(sk, &run);

	if (!run.sent && !(ret == 0 && total == 0) &&
	    idx == start / plan.max_payload)
		return ret ?: -EAGAIN;
	smbd_send_account(sk, total, start, run.sent, run.mapped);
	return run.sent;
}

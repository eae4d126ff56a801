// SPDX-License-Identifier: GPL-2.0
/*
 * smbd: sending ([MS-SMBD] 3.1.4.2, 3.1.5.1, 3.1.5.4, 3.1.6.2).
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
 * Empty messages (credit grants, keep-alives and their answers) go out
 * from the grant and keep-alive works on smbd_wq, or from a reader's
 * thread when it gives buffers back (smbd_read.c). The initiator's
 * negotiation probe lives here too: it is a send of its own.
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
 * smbd_neg_probe_done() - a probe of the peer's queue pair completed
 * @cq: the send CQ
 * @wc: the probe's completion
 *
 * Success: the peer's queue pair is alive, so keep waiting for its
 * Negotiate Response and probe again. A flush: our queue pair left RTS
 * for another reason, which ends the connection all the same. Retries
 * exhausted: the peer is gone (-ECONNRESET). Anything else, such as a
 * peer that refuses remote writes: our queue pair is in the error state
 * (-ECONNABORTED). A probe still out when the response came ends a
 * connection just established.
 *
 * Context: the CQ's completion context (softirq); takes ss_lock.
 */
void smbd_neg_probe_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct smbd_sock *sk = container_of(wc->wr_cqe, struct smbd_sock,
					    ss_probe_cqe.cqe);
	bool gone = wc->status == IB_WC_RETRY_EXC_ERR;

	smbd_wc_trace(cq, wc);

	if (wc->status == IB_WC_SUCCESS) {
		spin_lock_bh(&sk->ss_lock);
		WRITE_ONCE(sk->ss_neg_probes, sk->ss_neg_probes + 1);
		if (sk->ss_state == SMBD_NEGOTIATING)
			queue_delayed_work(smbd_wq, &sk->ss_probe_work,
					   msecs_to_jiffies(SMBD_NEG_PROBE_MS));
		spin_unlock_bh(&sk->ss_lock);
		return;
	}
	if (wc->status != IB_WC_WR_FLUSH_ERR)
		pr_info_ratelimited("initiator probe of the peer's queue pair failed (%s) %s\n",
				    ib_wc_status_msg(wc->status),
				    READ_ONCE(sk->ss_state) == SMBD_NEGOTIATING ?
				    "before its Negotiate Response" :
				    "after negotiation");
	smbd_sock_error(sk, gone ? -ECONNRESET : -ECONNABORTED);
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

	smbd_wc_status(cq, wc);
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

	if (sk->ss_state < SMBD_CONNECTED) {	/* a negotiate message */
		set_bit(wc->status == IB_WC_SUCCESS ? SMBD_NEG_SENT :
			SMBD_NEG_SEND_FAILED, &sk->ss_neg_trace);
		/*
		 * Under ss_lock, with the state: whoever calls the teardown
		 * leaves NEGOTIATING first, and the teardown drains before
		 * it cancels the probe, so nothing queues it after that. One
		 * chain only: the send queue has room for one probe.
		 */
		if (wc->status == IB_WC_SUCCESS && !sk->ss_responder &&
		    !sk->ss_ep.iwarp && sk->ss_state == SMBD_NEGOTIATING &&
		    !test_and_set_bit(SMBD_NEG_PROBING, &sk->ss_neg_trace)) {
			queue_delayed_work(smbd_wq, &sk->ss_probe_work,
					   msecs_to_jiffies(SMBD_NEG_PROBE_MS));
		}
	}
	list_for_each_entry_safe(pos, next, &tx->tx_batch, tx_node)
		smbd_tx_put_locked(sk, pos);
	INIT_LIST_HEAD(&tx->tx_batch);
	smbd_tx_put_locked(sk, tx);
	ops = sk->ss_ops;
	closing = sk->ss_state == SMBD_REFUSING;
	space = smbd_space_locked(sk, true);
	waiters = sk->ss_send_waiters;
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
	 * waits counted itself in ss_send_waiters under ss_lock first.
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
	ret = smbd_post_send(sk, &head->tx_wr, &bad_wr);
	if (ret)
		smbd_post_failed(sk, head, bad_wr ?: &head->tx_wr, ret);
	return ret;
}

/*
 * A keep-alive needs a message now: the peer's RESPONSE_REQUESTED is not
 * answered yet ([MS-SMBD] 3.1.5.8), or our own request waits for a
 * message to carry it (3.1.5.1, 3.1.6.2).
 */
static bool smbd_ka_msg_due(struct smbd_sock *sk)
{
	lockdep_assert_held(&sk->ss_lock);
	return sk->ss_ka.reply_due || sk->ss_ka.state == SMBD_KA_PENDING;
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
	if (!sk->ss_tx_free_count || (copy && !sk->ss_copy_free_count))
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
	*txp = list_first_entry(&sk->ss_tx_free, struct smbd_send_ctx, tx_node);
	list_del(&(*txp)->tx_node);
	sk->ss_tx_free_count--;
	(*txp)->tx_seq = ++sk->ss_tx_seq;
	if (copy)
		smbd_tx_lend_copy_locked(sk, *txp);
	return 0;
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
			     struct smbd_data_hdr *h, struct list_head *batch,
			     u32 *nbatch, struct smbd_send_wait *w)
{
	u16 more = 0;
	int ret;

	if (*nbatch) {
		*nbatch = 0;
		ret = smbd_post_batch(sk, batch, w);
		if (ret)
			return ret;
	}
	spin_lock_bh(&sk->ss_lock);
	while (sk->ss_state == SMBD_CONNECTED && !sk->ss_copy_free_count) {
		sk->ss_send_waiters++;
		sk->ss_cnt.copy_waits++;
		spin_unlock_bh(&sk->ss_lock);
		/*
		 * Not interruptible: the segment has its credit and its
		 * mapped pages, and the copy buffers come back with the
		 * completions of sends already posted, or at the error.
		 */
		wait_event(sk->ss_send_wq,
			   READ_ONCE(sk->ss_copy_free_count) ||
			   READ_ONCE(sk->ss_state) != SMBD_CONNECTED);
		spin_lock_bh(&sk->ss_lock);
		sk->ss_send_waiters--;
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
 * Send one upper-layer message made of @nparts iterators, or continue one
 * a non-blocking call left half-sent. Caller holds ss_send_mutex.
 * @w: a blocking sender's wait: its pages may be mapped (zero-copy) and
 * every batch reports its result to it; NULL to copy everything and not
 * wait for the device (non-blocking and SMBD_SEND_COPY sends).
 * @inv: the peer's token to invalidate with the message's first segment
 * ([MS-SMBD] 3.1.5.4: exactly one segment), or NULL.
 * @nonblock: never sleep for Send Credits.
 * @empty: the empty message of smbd_send_empty(): nothing goes (-ENODATA)
 * unless it has something to carry (smbd_take_credit()).
 * Returns the bytes accepted.
 */
static ssize_t smbd_send_msg(struct smbd_sock *sk, struct iov_iter *parts,
			     u32 nparts, struct smbd_send_wait *w,
			     const u32 *inv, bool nonblock, bool empty)
{
	u32 total, start, idx, rearm, sent = 0, cur = 0, len = 0, i;
	struct smbd_seg_plan plan;
	u32 mapped = 0, seg_mapped, hdr_len;
	struct smbd_send_ctx *tx;
	LIST_HEAD(batch);
	u32 nbatch = 0;
	int ret = 0;

	lockdep_assert_held(&sk->ss_send_mutex);
	for (i = 0; i < nparts; i++) {
		if (iov_iter_count(&parts[i]) > U32_MAX - len)
			return -EMSGSIZE;
		len += iov_iter_count(&parts[i]);
	}
	if (sk->ss_tx_msg_done < sk->ss_tx_msg_len) {
		total = sk->ss_tx_msg_len;
		start = sk->ss_tx_msg_done;
		if (len != total - start)
			return -EINVAL;
	} else {
		total = len;
		start = 0;
	}
	ret = smbd_seg_plan_init(&plan, total, sk->ss_neg.max_send_size,
				 sk->ss_neg.max_fragmented_send_size);
	if (ret)
		return ret;

	for (idx = start / plan.max_payload; idx < plan.nsegs; idx++) {
		struct smbd_data_hdr h;
		struct smbd_seg seg;
		u16 grant, flags;
		bool zcopy, copy;

		smbd_seg_plan_get(&plan, idx, &seg);
		/* Mapped if it may be, else copied: to a copy buffer if big. */
		zcopy = w && seg.data_length > SMBD_COPYBREAK;
		copy = !zcopy &&
		       seg.data_length > SMBD_TX_SLOT_DATA;
		spin_lock_bh(&sk->ss_lock);
		while ((ret = smbd_take_credit(sk, &tx, &grant, copy,
					       empty)) == -EAGAIN) {
			if (nbatch) {
				spin_unlock_bh(&sk->ss_lock);
				ret = smbd_post_batch(sk, &batch, w);
				nbatch = 0;
				spin_lock_bh(&sk->ss_lock);
				if (ret)
					break;
				continue;
			}
			if (nonblock)
				break;
			sk->ss_send_waiters++;
			sk->ss_stats.credit_waits++;
			trace_smbd_credit_stall(sk, 0);
			spin_unlock_bh(&sk->ss_lock);
			ret = wait_event_interruptible(sk->ss_send_wq,
						       smbd_send_possible(sk, copy));
			spin_lock_bh(&sk->ss_lock);
			sk->ss_send_waiters--;
			if (ret)
				break;
		}
		if (ret) {
			spin_unlock_bh(&sk->ss_lock);
			break;
		}
		flags = smbd_ka_on_send(&sk->ss_ka, &rearm);
		if (flags & SMBD_FLAG_RESPONSE_REQUESTED) {
			sk->ss_stats.keepalives_sent++;
			trace_smbd_keepalive(sk, SMBD_TRACE_KA_ASK);
		}
		if (rearm)
			mod_delayed_work(smbd_wq, &sk->ss_ka_work,
					 msecs_to_jiffies(rearm));
		h.credits_requested = smbd_cred_requested(&sk->ss_cred);
		sk->ss_stats.segs_sent++;
		if (!seg.data_length)
			sk->ss_cnt.empty_sent++;
		if (grant) {
			sk->ss_stats.grants_sent++;
			trace_smbd_credit_grant(sk, grant);
		}
		spin_unlock_bh(&sk->ss_lock);

		h.credits_granted = grant;
		h.flags = flags;
		h.remaining_data_length = seg.remaining;
		h.data_offset = seg.data_offset;
		h.data_length = seg.data_length;
		smbd_data_hdr_encode(&h, tx->tx_buf);
		hdr_len = smbd_data_hdr_wire_len(&h);
		seg_mapped = smbd_tx_map(sk, tx, parts, nparts, &cur, hdr_len,
					 zcopy ? seg.data_length : 0);
		if (seg.data_length - seg_mapped > smbd_tx_room(sk, tx))
			ret = smbd_tx_wait_copy(sk, tx, &h, &batch, &nbatch,
						w);
		if (!ret && smbd_tx_copy(sk, tx, parts, nparts, &cur,
					 seg.data_length - seg_mapped) !=
		    seg.data_length - seg_mapped)
			/*
			 * A fault in a kernel iterator, or a segment larger
			 * than its buffer (a bug); the credit is spent.
			 */
			ret = -EFAULT;
		if (ret) {
			smbd_tx_unmap(sk, tx);
			spin_lock_bh(&sk->ss_lock);
			smbd_tx_put_locked(sk, tx);
			spin_unlock_bh(&sk->ss_lock);
			if (ret == -EFAULT)
				smbd_sock_error(sk, -EFAULT);
			break;
		}
		mapped += seg_mapped;
		if (inv && idx == 0) {
			tx->tx_wr.opcode = IB_WR_SEND_WITH_INV;
			tx->tx_wr.ex.invalidate_rkey = *inv;
		} else {
			tx->tx_wr.opcode = IB_WR_SEND;
		}
		list_add_tail(&tx->tx_node, &batch);
		sent += seg.data_length;
		if (++nbatch == SMBD_SEND_BATCH || idx + 1 == plan.nsegs) {
			ret = smbd_post_batch(sk, &batch, w);
			nbatch = 0;
			if (ret)
				break;
		}
	}

	if (nbatch) {
		struct smbd_send_ctx *next;

		/* Filled but never posted: return them. */
		list_for_each_entry(tx, &batch, tx_node)
			smbd_tx_unmap(sk, tx);
		spin_lock_bh(&sk->ss_lock);
		list_for_each_entry_safe(tx, next, &batch, tx_node)
			smbd_tx_put_locked(sk, tx);
		spin_unlock_bh(&sk->ss_lock);
	}
	if (!sent && !(ret == 0 && total == 0) && idx == start / plan.max_payload)
		return ret ?: -EAGAIN;
	sk->ss_tx_msg_len = total;
	sk->ss_tx_msg_done = start + sent;
	spin_lock_bh(&sk->ss_lock);
	if (sk->ss_tx_msg_done == total) {
		sk->ss_tx_msg_len = 0;
		sk->ss_tx_msg_done = 0;
		/* An empty message (smbd_send_empty()) carries none. */
		if (total)
			sk->ss_stats.msgs_sent++;
	}
	sk->ss_stats.bytes_sent += sent;
	sk->ss_stats.bytes_zcopy += mapped;
	spin_unlock_bh(&sk->ss_lock);
	return sent;
}

/*
 * The send mutex for one that must not wait for it. If it is taken, the
 * holder is told (@owed) before a last try, and its unlock settles what
 * is owed (smbd_send_release()): the holder may post nothing more, so
 * neither a completion nor its next message may come to do it.
 * @owed: ss_send_nb_waiting for a non-blocking sender, which waits for
 * write_space; ss_grant_owed for an empty message (smbd_send_empty()).
 */
static bool smbd_send_trylock(struct smbd_sock *sk, bool *owed)
{
	if (mutex_trylock(&sk->ss_send_mutex))
		return true;
	WRITE_ONCE(*owed, true);
	smp_mb();	/* the flag before the retry; see smbd_send_release() */
	return mutex_trylock(&sk->ss_send_mutex);
}

/*
 * Let the send mutex go, and settle what those who found it taken
 * meanwhile left to us (smbd_send_trylock()). An empty message that
 * could not go has the grant work decide again, so that a grant due is
 * not lost ([MS-SMBD] 3.1.5.8, 3.1.5.9) and a keep-alive not missed
 * (3.1.6.2); a late decision costs nothing (smbd_cred_empty_begin()).
 * Each flag is taken and cleared at once, so that of two unlocks only
 * one settles it.
 * Returns true when a non-blocking sender found the mutex taken: the
 * caller owes it the write_space upcall.
 */
static bool smbd_send_release(struct smbd_sock *sk)
{
	mutex_unlock(&sk->ss_send_mutex);
	smp_mb();	/* the unlock before the flags; see smbd_send_trylock() */
	if (READ_ONCE(sk->ss_grant_owed) && xchg(&sk->ss_grant_owed, false))
		queue_work(smbd_wq, &sk->ss_grant_work);
	return READ_ONCE(sk->ss_send_nb_waiting) &&
	       xchg(&sk->ss_send_nb_waiting, false);
}

/**
 * smbd_write_space() - the write_space upcall, if a send could go now
 * @sk: the socket
 *
 * Context: process.
 */
void smbd_write_space(struct smbd_sock *sk)
{
	const struct smbd_sock_ops *ops;
	bool space;

	spin_lock_bh(&sk->ss_lock);
	ops = sk->ss_ops;
	space = smbd_space_locked(sk, true);
	spin_unlock_bh(&sk->ss_lock);
	if (space && ops && ops->write_space)
		ops->write_space(sk);
}

/**
 * smbd_send_empty() - an empty message for credits or keep-alive
 * @sk: a connected socket
 *
 * Sent only if it has something to carry when it takes its credit: a
 * grant, a keep-alive answer or our keep-alive request
 * (smbd_cred_empty_begin(), [MS-SMBD] 3.1.5.1, 3.1.5.8, 3.1.6.2). Those
 * who decided to call this decided earlier, and another may have sent
 * it meanwhile: then nothing goes, and no Send Credit is spent. Never
 * between the segments of a half-sent message, never waiting for a
 * credit. When another sender holds the send mutex, its unlock has the
 * grant work decide again (ss_grant_owed, smbd_send_release()); if the
 * holder sends another segment first, that one carries the grant.
 *
 * Context: process; does not sleep (takes ss_send_mutex only by trylock);
 * takes ss_lock (_bh).
 * Return: true when a non-blocking sender found the send mutex taken
 * meanwhile: the caller owes it smbd_write_space().
 */
bool smbd_send_empty(struct smbd_sock *sk)
{
	struct iov_iter it;

	if (!smbd_send_trylock(sk, &sk->ss_grant_owed))
		return false;
	/* Never between the segments of a half-sent message. */
	if (sk->ss_tx_msg_done == sk->ss_tx_msg_len) {
		iov_iter_kvec(&it, ITER_SOURCE, NULL, 0, 0);
		smbd_send_msg(sk, &it, 1, NULL, NULL, true, true);
	}
	return smbd_send_release(sk);
}
EXPORT_SYMBOL_IF_KUNIT(smbd_send_empty);

/* Record one part of a SEND_MORE message; caller holds ss_send_mutex. */
static ssize_t smbd_send_more(struct smbd_sock *sk, struct iov_iter *from,
			      bool nonblock)
{
	size_t n = iov_iter_count(from);

	lockdep_assert_held(&sk->ss_send_mutex);
	if (nonblock || sk->ss_tx_msg_done < sk->ss_tx_msg_len)
		return -EOPNOTSUPP;
	if (sk->ss_more_n == SMBD_MORE_MAX - 1)
		return -E2BIG;
	if (n > sk->ss_neg.max_fragmented_send_size - sk->ss_more_len)
		return -EMSGSIZE;
	sk->ss_more[sk->ss_more_n++] = *from;
	sk->ss_more_len += n;
	iov_iter_advance(from, n);
	return n;
}

/*
 * A sender lets the send mutex go. A non-blocking sender that found it
 * taken meanwhile (smbd_send_trylock()) got -EAGAIN and waits for
 * write_space; the completions of what we posted may all have run before
 * this unlock, with the mutex still taken, and none is left to bring the
 * upcall. The grant work makes it: not from inside the consumer's send.
 */
static void smbd_send_unlock(struct smbd_sock *sk)
{
	if (smbd_send_release(sk))
		smbd_owe_write_space(sk);
}

/**
 * smbd_owe_write_space() - have the grant work make the write_space upcall
 * @sk: the socket
 *
 * For a caller inside the consumer's own send or receive call, which
 * must not make the upcall itself; smbd_write_space() makes it only if a
 * send could go by then.
 *
 * Context: process or softirq; takes ss_lock (_bh).
 */
void smbd_owe_write_space(struct smbd_sock *sk)
{
	spin_lock_bh(&sk->ss_lock);
	sk->ss_space_due = true;
	spin_unlock_bh(&sk->ss_lock);
	queue_work(smbd_wq, &sk->ss_grant_work);
}

static ssize_t __smbd_sock_send(struct smbd_sock *sk, struct iov_iter *from,
				unsigned int flags, const u32 *inv)
{
	bool nonblock = flags & SMBD_SEND_NONBLOCK;
	struct smbd_send_wait wait, *w;
	ssize_t ret;

	if (!nonblock)
		might_sleep();
	if (READ_ONCE(sk->ss_state) != SMBD_CONNECTED)
		return READ_ONCE(sk->ss_err) ?: -ENOTCONN;
	if (nonblock) {
		if (!smbd_send_trylock(sk, &sk->ss_send_nb_waiting))
			return -EAGAIN;
	} else if (mutex_lock_interruptible(&sk->ss_send_mutex)) {
		return -ERESTARTSYS;
	}

	atomic_set(&wait.sw_pending, 1);
	wait.sw_err = 0;
	init_completion(&wait.sw_done);
	/* Copied sends do not wait for the device. */
	w = nonblock || flags & SMBD_SEND_COPY ? NULL : &wait;
	if (sk->ss_more_n && nonblock) {
		ret = -EOPNOTSUPP;
	} else if (flags & SMBD_SEND_MORE) {
		ret = inv ? -EINVAL : smbd_send_more(sk, from, nonblock);
	} else if (sk->ss_more_n) {
		sk->ss_more[sk->ss_more_n++] = *from;
		ret = smbd_send_msg(sk, sk->ss_more, sk->ss_more_n, w, inv,
				    false, false);
		/* The last part was consumed through its copy. */
		if (ret >= 0)
			iov_iter_advance(from, iov_iter_count(from));
		sk->ss_more_n = 0;
		sk->ss_more_len = 0;
	} else {
		ret = smbd_send_msg(sk, from, 1, w, inv, nonblock, false);
	}
	smbd_send_unlock(sk);

	/*
	 * Wait for every batch this send posted, uninterruptibly (the
	 * completions always come, flushed at worst, or teardown stands in
	 * for them): the device may still read the pages it mapped, and
	 * [MS-SMBD] 3.1.4.2 and 3.1.5.4 want the provider's result returned.
	 * A segment that did not complete makes the send fail, with the
	 * connection's error. The next sender is already posting meanwhile.
	 */
	if (!atomic_dec_and_test(&wait.sw_pending))
		wait_for_completion(&wait.sw_done);
	if (ret >= 0 && READ_ONCE(wait.sw_err))
		ret = READ_ONCE(sk->ss_err) ?: wait.sw_err;
	return ret;
}

/**
 * smbd_sock_send() - send one upper-layer message ([MS-SMBD] 3.1.4.2)
 * @sk: a connected socket
 * @from: the message (any kernel iov_iter); consumed as it is sent
 * @flags: %SMBD_SEND_NONBLOCK, %SMBD_SEND_MORE, %SMBD_SEND_COPY
 *
 * The message is cut into segments of at most MaxSendSize bytes
 * (3.1.5.4) that go out in order, never interleaved with another
 * message's; senders are served one message at a time in the order they
 * came. An empty @from sends an empty message: it carries credits and
 * keep-alive state and is delivered to nobody.
 *
 * Blocking (the default) waits for Send Credits, posts every segment
 * with @from's pages mapped for the device (no copy), and returns once
 * the device is done with them; @from's memory may be reused then. It
 * returns the count only if the device completed every segment; if one
 * failed, or was flushed, the connection is lost and the call returns
 * its error ([MS-SMBD] 3.1.4.2, 3.1.5.4). With
 * %SMBD_SEND_NONBLOCK the payload is copied and the call never sleeps:
 * it returns -EAGAIN when not even the first segment could go, or the
 * bytes of the segments that went; the rest of that message must be the
 * next send on this socket (the write_space upcall tells when to try
 * again). A non-blocking send does not wait for the device: a failure
 * after it returned shows as the connection's error on later calls.
 *
 * %SMBD_SEND_COPY: as blocking, but the payload is copied into smbd's
 * pre-mapped send buffers (a send context's slot, or for more than 488
 * bytes one of the connection's copy buffers, which it may wait for, as
 * for a credit) and the call returns once the segments are
 * posted, not completed, and as a non-blocking send it reports a later
 * failure on later calls. For small messages under the consumer's own
 * lock: one network round trip less per message held under it. On the
 * last part of a %SMBD_SEND_MORE message it copies every part, so all of
 * them may be reused on return; on other parts it does nothing, and
 * %SMBD_SEND_NONBLOCK takes precedence.
 *
 * With %SMBD_SEND_MORE, @from is one part of a message whose remaining
 * parts follow; nothing is sent and the part is not copied: the memory
 * and the kvec/bvec array behind @from must stay untouched until the
 * send of the last part (without %SMBD_SEND_MORE) returns, which sends
 * the whole message. At most %SMBD_MORE_MAX parts; one thread builds
 * such a message at a time; %SMBD_SEND_NONBLOCK is not supported for
 * them (-EOPNOTSUPP).
 *
 * Context: process; sleeps unless %SMBD_SEND_NONBLOCK. Takes the socket's
 * ss_send_mutex.
 * Return: bytes accepted (a part's length for %SMBD_SEND_MORE, the whole
 * message's for the last part); -EMSGSIZE above MaxFragmentedSendSize;
 * -E2BIG for too many parts; -EAGAIN; -ENOTCONN or the connection's
 * error once it is lost, or when a segment of a blocking send failed
 * (-ECONNABORTED if nothing else ended it first); -ERESTARTSYS.
 */
ssize_t smbd_sock_send(struct smbd_sock *sk, struct iov_iter *from,
		       unsigned int flags)
{
	return __smbd_sock_send(sk, from, flags, NULL);
}
EXPORT_SYMBOL_NS_GPL(smbd_sock_send, SMBD);

/**
 * smbd_sock_send_inv() - send a message that invalidates a peer's token
 * @sk: a connected socket
 * @from: the message, as for smbd_sock_send()
 * @flags: as for smbd_sock_send(); with %SMBD_SEND_MORE the token goes
 *	with the last part instead (-EINVAL here)
 * @remote_token: the peer's rkey (from its Buffer Descriptor) that the
 *	peer's device invalidates when the message arrives
 *
 * [MS-SMBD] 3.1.4.2 and 3.1.5.4: exactly one segment of the message, the
 * first, is a Send with Invalidate. An SMB2 server uses it on the
 * response to a READ or WRITE whose buffer it has finished with.
 *
 * Context: process; sleeps unless %SMBD_SEND_NONBLOCK.
 * Return: as smbd_sock_send().
 */
ssize_t smbd_sock_send_inv(struct smbd_sock *sk, struct iov_iter *from,
			   unsigned int flags, u32 remote_token)
{
	return __smbd_sock_send(sk, from, flags, &remote_token);
}
EXPORT_SYMBOL_NS_GPL(smbd_sock_send_inv, SMBD);

/**
 * smbd_grant_work() - send a credit grant or a keep-alive message
 * @work: ss_grant_work
 *
 * Queued by a receive completion when a grant or an answer is due
 * (smbd_cred_empty_due()), by whoever owes write_space, and by the unlock
 * of the send mutex when an empty message found it taken
 * (smbd_send_release()). It decides again what is due: a grant, an
 * answer, or our keep-alive request still pending ([MS-SMBD] 3.1.5.8,
 * 3.1.6.2).
 *
 * Context: process (smbd_wq).
 */
void smbd_grant_work(struct work_struct *work)
{
	struct smbd_sock *sk = container_of(work, struct smbd_sock,
					    ss_grant_work);
	bool due, space;

	spin_lock_bh(&sk->ss_lock);
	due = sk->ss_state == SMBD_CONNECTED &&
	      smbd_cred_empty_due(&sk->ss_cred, smbd_ka_msg_due(sk));
	space = sk->ss_space_due;
	sk->ss_space_due = false;
	spin_unlock_bh(&sk->ss_lock);
	if (due && smbd_send_empty(sk))
		space = true;
	if (space)
		smbd_write_space(sk);
}

/**
 * smbd_neg_probe_work() - is the peer's queue pair still there?
 * @work: ss_probe_work
 *
 * The Negotiation Timer gives the responder 120 s ([MS-SMBD] 3.1.4.1),
 * but a responder that drops the connection before it is established on
 * its side sends nothing over InfiniBand or RoCE: its connection manager
 * sends no DREQ in that state, and its queue pair, moved to the error
 * state, drops our packets. The stock ksmbd of Linux 6.12 does so when
 * it loses a race with our Negotiate Request. iWARP has TCP to tell.
 *
 * So while the response is due, post a signalled zero-length RDMA Write
 * every SMBD_NEG_PROBE_MS. It needs no memory or key at the peer (IBA
 * C9-88), consumes no receive and places no data; rdma_cm gives every
 * RC queue pair remote write access. The peer's queue pair acknowledges
 * it, or our retries run out and the probe fails: then the connection is
 * gone, and the connect fails at once with -ECONNRESET instead of at the
 * timer's end. A peer that refuses remote writes loses the connection
 * too (-ECONNABORTED), but only after it left a Negotiate Request
 * unanswered for SMBD_NEG_PROBE_MS.
 *
 * Context: process (smbd_wq).
 */
void smbd_neg_probe_work(struct work_struct *work)
{
	struct smbd_sock *sk = container_of(to_delayed_work(work),
					    struct smbd_sock, ss_probe_work);
	struct ib_rdma_wr wr = {
		.wr.wr_cqe = &sk->ss_probe_cqe.cqe,
		.wr.opcode = IB_WR_RDMA_WRITE,
		.wr.send_flags = IB_SEND_SIGNALED,
	};

	/*
	 * The state, under ss_lock, guards the queue pair: the teardown's
	 * callers leave NEGOTIATING before it drains and destroys it. A post
	 * that fails leaves the Negotiation Timer to end the connection,
	 * and its line to say so.
	 */
	spin_lock_bh(&sk->ss_lock);
	if (sk->ss_state == SMBD_NEGOTIATING &&
	    smbd_qp_post(sk, &wr.wr, NULL))
		set_bit(SMBD_NEG_PROBE_UNPOSTED, &sk->ss_neg_trace);
	spin_unlock_bh(&sk->ss_lock);
}

/**
 * smbd_ka_work() - the idle connection timer ([MS-SMBD] 3.1.6.2)
 * @work: ss_ka_work
 *
 * Context: process (smbd_wq).
 */
void smbd_ka_work(struct work_struct *work)
{
	struct smbd_sock *sk = container_of(to_delayed_work(work),
					    struct smbd_sock, ss_ka_work);
	enum smbd_ka_action act;
	u32 rearm;

	spin_lock_bh(&sk->ss_lock);
	if (sk->ss_state != SMBD_CONNECTED) {
		spin_unlock_bh(&sk->ss_lock);
		return;
	}
	act = smbd_ka_on_timer(&sk->ss_ka, smbd_now_ms(), &rearm);
	if (rearm)
		mod_delayed_work(smbd_wq, &sk->ss_ka_work,
				 msecs_to_jiffies(rearm));
	spin_unlock_bh(&sk->ss_lock);

	if (act == SMBD_KA_ACT_TERMINATE) {
		trace_smbd_keepalive(sk, SMBD_TRACE_KA_TIMEOUT);
		pr_info_ratelimited("peer did not answer a keep-alive\n");
		smbd_sock_error(sk, -ETIMEDOUT);
	} else if (act == SMBD_KA_ACT_SEND && smbd_send_empty(sk)) {
		smbd_write_space(sk);
	}
}

// SPDX-License-Identifier: GPL-2.0
/*
 * smbd: the data path ([MS-SMBD] 3.1.4.2, 3.1.5.1, 3.1.5.4 to 3.1.5.9).
 *
 * Operation
 *   Receives complete in softirq (IB_POLL_SOFTIRQ): negotiation messages
 *   are answered there, data messages are validated, credited and queued
 *   for the consumer, and buffers are reposted in one chained post. A
 *   credit-only message goes out from the reader's thread when it gives
 *   buffers back, or from smbd_wq when the handler finds it due; so do a
 *   keep-alive and its answer. Nothing else leaves the handler.
 *   Sends cut a message into segments (smbd_seg_plan_*), take one Send
 *   Credit each (smbd_cred_send_begin), and post them in chains of up to
 *   SMBD_SEND_BATCH work requests of which the last is signalled, and on
 *   siw every one of a page or more (ss_tx_sig_bytes).
 *
 * Buffer ownership
 *   Every buffer is allocated and DMA-mapped once, when the queue pair is
 *   created, and unmapped when it is destroyed. A receive context is on
 *   the receive queue, on ss_rx_ready (holding data for the consumer) or
 *   on ss_rx_free. A send context is on ss_tx_free or in flight; a
 *   signalled one owns the unsignalled ones posted before it (since the
 *   previous signalled one) and returns them all on its completion.
 *
 * Copies
 *   A blocking send maps the sender's pages for the device and returns
 *   once every segment completed (zero-copy), failing if one did not; a segment
 *   needing more gather entries than the device has copies its
 *   remainder into the context's pre-mapped buffer, right after the
 *   header. Non-blocking sends, SMBD_SEND_COPY sends, sends from user
 *   memory and payloads of at most SMBD_COPYBREAK bytes are copied; a
 *   send that copied everything by request returns once posted. Received
 *   payload is copied out of the receive buffer into the consumer's
 *   iov_iter.
 *
 * Error handling
 *   A protocol violation, a failed post or a completion error ends the
 *   connection through smbd_sock_error(); flushed completions during
 *   teardown only return their buffers.
 */

#include <linux/errno.h>
#include <linux/slab.h>
#include <linux/uio.h>
#include <rdma/ib_verbs.h>

#include "smbd_internal.h"

#define SMBD_SEND_BATCH	16

/* Fragments of one long message received before the reader is woken. */
#define SMBD_RX_WAKE_SEGS	16

/*
 * Payload of at most this many bytes per segment is copied even by a
 * blocking send: cheaper than mapping it and waiting for the device.
 */
#define SMBD_COPYBREAK	256

/* Work for the completion handler to do once the lock is dropped. */
#define SMBD_ACT_DATA		BIT(0)
#define SMBD_ACT_GRANT		BIT(1)
#define SMBD_ACT_SPACE		BIT(2)

static void smbd_recv_done(struct ib_cq *cq, struct ib_wc *wc);
/*
 * A probe of the peer's queue pair completed. Success: the peer's queue
 * pair is alive, so keep waiting for its Negotiate Response and probe
 * again. A flush: our queue pair left RTS for another reason, which ends
 * the connection all the same. Retries exhausted: the peer is gone
 * (-ECONNRESET). Anything else, such as a peer that refuses remote
 * writes: our queue pair is in the error state (-ECONNABORTED). A probe
 * still out when the response came ends a connection just established.
 */
static void smbd_neg_probe_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct smbd_sock *sk = container_of(wc->wr_cqe, struct smbd_sock,
					    ss_probe_cqe);
	bool gone = wc->status == IB_WC_RETRY_EXC_ERR;

	if (wc->status == IB_WC_SUCCESS) {
		spin_lock(&sk->ss_lock);
		WRITE_ONCE(sk->ss_neg_probes, sk->ss_neg_probes + 1);
		if (sk->ss_state == SMBD_NEGOTIATING)
			queue_delayed_work(smbd_wq, &sk->ss_probe_work,
					   msecs_to_jiffies(SMBD_NEG_PROBE_MS));
		spin_unlock(&sk->ss_lock);
		return;
	}
	if (wc->status != IB_WC_WR_FLUSH_ERR)
		pr_info_ratelimited("smbd: initiator probe of the peer's queue pair failed (%s) %s\n",
				    ib_wc_status_msg(wc->status),
				    READ_ONCE(sk->ss_state) == SMBD_NEGOTIATING ?
				    "before its Negotiate Response" :
				    "after negotiation");
	smbd_sock_error(sk, gone ? -ECONNRESET : -ECONNABORTED);
}

static void smbd_send_done(struct ib_cq *cq, struct ib_wc *wc);
static void smbd_tx_unmap(struct smbd_sock *sk, struct smbd_send_ctx *tx);
static void smbd_tx_wait_put(struct smbd_send_wait *w, int err);
static void smbd_rx_part_free(struct smbd_sock *sk);

/**
 * smbd_xfer_alloc() - allocate and map the send and receive buffers
 * @sk: a socket whose queue pair was just created
 *
 * Receive buffers hold MaxReceiveSize bytes and at least the 512 bytes
 * [MS-SMBD] 3.1.4.1/3.1.7.2 require for the negotiate receive.
 *
 * Context: process; may sleep.
 * Return: 0 or -ENOMEM.
 */
int smbd_xfer_alloc(struct smbd_sock *sk)
{
	u32 rx_len = max_t(u32, sk->ss_params.max_recv_size,
			   SMBD_NEGOTIATE_RECV_SIZE);
	u32 tx_len = max_t(u32, sk->ss_params.max_send_size,
			   sizeof(struct smbd_neg_resp_pdu));
	int node = ibdev_to_node(sk->ss_ibdev);
	u32 i, j;

	sk->ss_rx_ctxs = kcalloc_node(sk->ss_nr_rx, sizeof(*sk->ss_rx_ctxs),
				      GFP_KERNEL, node);
	sk->ss_tx_ctxs = kcalloc_node(sk->ss_nr_tx, sizeof(*sk->ss_tx_ctxs),
				      GFP_KERNEL, node);
	if (!sk->ss_rx_ctxs || !sk->ss_tx_ctxs)
		goto nomem;

	for (i = 0; i < sk->ss_nr_rx; i++) {
		struct smbd_recv_ctx *rx = &sk->ss_rx_ctxs[i];

		rx->rx_sk = sk;
		rx->rx_cqe.done = smbd_recv_done;
		rx->rx_len = rx_len;
		rx->rx_buf = kmalloc_node(rx_len, GFP_KERNEL, node);
		if (!rx->rx_buf)
			goto nomem;
		rx->rx_dma = ib_dma_map_single(sk->ss_ibdev, rx->rx_buf, rx_len,
					       DMA_FROM_DEVICE);
		if (ib_dma_mapping_error(sk->ss_ibdev, rx->rx_dma)) {
			kfree(rx->rx_buf);
			rx->rx_buf = NULL;
			goto nomem;
		}
		rx->rx_sge.addr = rx->rx_dma;
		rx->rx_sge.length = rx_len;
		rx->rx_sge.lkey = sk->ss_pd->local_dma_lkey;
		rx->rx_wr.wr_cqe = &rx->rx_cqe;
		rx->rx_wr.sg_list = &rx->rx_sge;
		rx->rx_wr.num_sge = 1;
		list_add_tail(&rx->rx_node, &sk->ss_rx_free);
	}
	for (i = 0; i < sk->ss_nr_tx; i++) {
		struct smbd_send_ctx *tx = &sk->ss_tx_ctxs[i];

		tx->tx_sk = sk;
		tx->tx_cqe.done = smbd_send_done;
		INIT_LIST_HEAD(&tx->tx_batch);
		/* Zeroed: no stale heap bytes; smbd_data_hdr_encode() pads. */
		tx->tx_buf = kzalloc_node(tx_len, GFP_KERNEL, node);
		if (!tx->tx_buf)
			goto nomem;
		tx->tx_dma = ib_dma_map_single(sk->ss_ibdev, tx->tx_buf, tx_len,
					       DMA_TO_DEVICE);
		if (ib_dma_mapping_error(sk->ss_ibdev, tx->tx_dma)) {
			kfree(tx->tx_buf);
			tx->tx_buf = NULL;
			goto nomem;
		}
		for (j = 0; j < SMBD_TX_SGE_MAX; j++)
			tx->tx_sge[j].lkey = sk->ss_pd->local_dma_lkey;
		tx->tx_sge[0].addr = tx->tx_dma;
		tx->tx_wr.wr_cqe = &tx->tx_cqe;
		tx->tx_wr.sg_list = tx->tx_sge;
		tx->tx_wr.num_sge = 1;
		tx->tx_wr.opcode = IB_WR_SEND;
		list_add_tail(&tx->tx_node, &sk->ss_tx_free);
		sk->ss_tx_free_count++;
	}
	return 0;
nomem:
	smbd_xfer_free(sk);
	return -ENOMEM;
}

/**
 * smbd_xfer_free() - unmap and free the buffers
 * @sk: a socket whose queue pair is drained or was never used
 *
 * Context: process.
 */
void smbd_xfer_free(struct smbd_sock *sk)
{
	u32 rx_len = max_t(u32, sk->ss_params.max_recv_size,
			   SMBD_NEGOTIATE_RECV_SIZE);
	u32 tx_len = max_t(u32, sk->ss_params.max_send_size,
			   sizeof(struct smbd_neg_resp_pdu));
	u32 i;

	for (i = 0; sk->ss_rx_ctxs && i < sk->ss_nr_rx; i++) {
		struct smbd_recv_ctx *rx = &sk->ss_rx_ctxs[i];

		if (!rx->rx_buf)
			continue;
		ib_dma_unmap_single(sk->ss_ibdev, rx->rx_dma, rx_len,
				    DMA_FROM_DEVICE);
		kfree(rx->rx_buf);
	}
	for (i = 0; sk->ss_tx_ctxs && i < sk->ss_nr_tx; i++) {
		struct smbd_send_ctx *tx = &sk->ss_tx_ctxs[i];

		if (!tx->tx_buf)
			continue;
		/*
		 * A send whose completion never came: left on the queue
		 * pair by a failed post, or lost by a provider that flushes
		 * its drain marker ahead of older requests (siw after a
		 * fatal error). The queue pair is gone, so the pages are
		 * free: give them back and wake their sender, which must not
		 * take a send nobody saw complete for a sent one.
		 */
		smbd_tx_unmap(sk, tx);
		smbd_tx_wait_put(tx->tx_wait, -ECONNABORTED);
		tx->tx_wait = NULL;
		ib_dma_unmap_single(sk->ss_ibdev, tx->tx_dma, tx_len,
				    DMA_TO_DEVICE);
		kfree(tx->tx_buf);
	}
	kfree(sk->ss_rx_ctxs);
	kfree(sk->ss_tx_ctxs);
	/* The head of a message that never completed goes with the buffers. */
	smbd_rx_part_free(sk);
	sk->ss_rx_ctxs = NULL;
	sk->ss_tx_ctxs = NULL;
	INIT_LIST_HEAD(&sk->ss_rx_free);
	INIT_LIST_HEAD(&sk->ss_rx_ready);
	INIT_LIST_HEAD(&sk->ss_tx_free);
	sk->ss_tx_free_count = 0;
}

/* ---- receive side ---- */

/* Could a non-blocking send take a credit and a buffer now? */
static bool smbd_space_locked(struct smbd_sock *sk)
{
	const struct smbd_credits *c = &sk->ss_cred;

	lockdep_assert_held(&sk->ss_lock);
	return sk->ss_state == SMBD_CONNECTED && sk->ss_tx_free_count &&
	       smbd_cred_can_send(c, !list_empty(&sk->ss_rx_free));
}

/*
 * Post up to @n free receive buffers in one chained post. Returns how
 * many were posted or a negative errno.
 */
static int smbd_post_recv_chain(struct smbd_sock *sk, u32 n)
{
	struct smbd_recv_ctx *rx, *prev = NULL, *first = NULL;
	const struct ib_recv_wr *bad;
	u32 i = 0;
	int ret;

	lockdep_assert_held(&sk->ss_lock);
	while (i < n && !list_empty(&sk->ss_rx_free)) {
		rx = list_first_entry(&sk->ss_rx_free, struct smbd_recv_ctx,
				      rx_node);
		list_del(&rx->rx_node);
		rx->rx_wr.next = NULL;
		if (prev)
			prev->rx_wr.next = &rx->rx_wr;
		else
			first = rx;
		prev = rx;
		i++;
	}
	if (!i)
		return 0;
	ret = ib_post_recv(sk->ss_qp, &first->rx_wr, &bad);
	if (!ret)
		return i;

	/* Buffers from @bad on were not posted. */
	for (rx = first, i = 0; &rx->rx_wr != bad; i++)
		rx = container_of(rx->rx_wr.next, struct smbd_recv_ctx, rx_wr);
	ret = i ? i : ret;
	while (rx) {
		struct ib_recv_wr *next = rx->rx_wr.next;

		list_add(&rx->rx_node, &sk->ss_rx_free);
		rx = next ? container_of(next, struct smbd_recv_ctx, rx_wr) :
			    NULL;
	}
	return ret;
}

/**
 * smbd_post_negotiate_recv() - the receive for the first message
 * @sk: a socket with a queue pair
 *
 * [MS-SMBD] 3.1.4.1, 3.1.7.2: at least 512 bytes, posted before the
 * connection can deliver anything; not counted as a credit.
 *
 * Context: process.
 * Return: 0 or a negative errno.
 */
int smbd_post_negotiate_recv(struct smbd_sock *sk)
{
	int ret;

	spin_lock_bh(&sk->ss_lock);
	ret = smbd_post_recv_chain(sk, 1);
	spin_unlock_bh(&sk->ss_lock);
	return ret == 1 ? 0 : (ret < 0 ? ret : -ENOMEM);
}

/**
 * smbd_post_recvs() - post the receives the credit state wants
 * @sk: a negotiated socket
 * @send_queued: a sender waits for a credit (the last-credit rule may
 *	need one more receive)
 *
 * [MS-SMBD] 3.1.5.9: only receives really posted are counted, so only
 * those are ever granted.
 *
 * Context: any; caller holds @sk->ss_lock.
 * Return: receives posted, or a negative errno (the queue pair failed).
 */
int smbd_post_recvs(struct smbd_sock *sk, bool send_queued)
{
	u16 want;
	int ret;

	lockdep_assert_held(&sk->ss_lock);
	want = smbd_cred_recv_wanted(&sk->ss_cred, send_queued);
	if (!want)
		return 0;
	ret = smbd_post_recv_chain(sk, want);
	if (ret > 0)
		smbd_cred_recv_posted(&sk->ss_cred, ret);
	return ret;
}

/* Post one negotiate message on a free send context. */
static int smbd_send_negotiate_locked(struct smbd_sock *sk, const void *pdu,
				      u32 len)
{
	struct smbd_send_ctx *tx;
	int ret;

	lockdep_assert_held(&sk->ss_lock);
	tx = list_first_entry_or_null(&sk->ss_tx_free, struct smbd_send_ctx,
				      tx_node);
	if (!tx)
		return -ENOBUFS;
	list_del(&tx->tx_node);
	sk->ss_tx_free_count--;
	memcpy(tx->tx_buf, pdu, len);
	tx->tx_sge[0].length = len;
	tx->tx_wr.num_sge = 1;
	tx->tx_wr.opcode = IB_WR_SEND;
	tx->tx_wait = NULL;
	tx->tx_wr.next = NULL;
	tx->tx_wr.send_flags = IB_SEND_SIGNALED;
	ib_dma_sync_single_for_device(sk->ss_ibdev, tx->tx_dma, len,
				      DMA_TO_DEVICE);
	ret = ib_post_send(sk->ss_qp, &tx->tx_wr, NULL);
	if (ret) {
		list_add(&tx->tx_node, &sk->ss_tx_free);
		sk->ss_tx_free_count++;
	} else {
		set_bit(SMBD_NEG_POSTED, &sk->ss_neg_trace);
	}
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

/*
 * [MS-SMBD] 3.1.5.3: a failure Negotiate Response, then a graceful end.
 * The connection ends once the response's send completes, so the
 * disconnect cannot overtake it (the Negotiation Timer is the backstop).
 */
static int smbd_send_failure_locked(struct smbd_sock *sk, u32 status)
{
	struct smbd_neg_resp_pdu resp;

	lockdep_assert_held(&sk->ss_lock);
	smbd_neg_resp_build_failure(status, &resp);
	if (smbd_send_negotiate_locked(sk, &resp, sizeof(resp)))
		return -EPROTO;
	sk->ss_close_on_send = true;
	return 0;
}

/* Set up the connection's protocol state from the negotiated values. */
static void smbd_proto_setup(struct smbd_sock *sk)
{
	smbd_cred_init(&sk->ss_cred, &sk->ss_params, &sk->ss_neg);
	smbd_reasm_init(&sk->ss_reasm, sk->ss_neg.max_fragmented_recv_size);
	smbd_ka_init(&sk->ss_ka, sk->ss_params.keepalive_interval_ms,
		     sk->ss_params.keepalive_timeout_ms);
}

/* [MS-SMBD] 3.1.5.6 and 3.1.5.3: the responder answers the request. */
static int smbd_recv_neg_req(struct smbd_sock *sk, struct smbd_recv_ctx *rx,
			     u32 len, unsigned int *act)
{
	struct smbd_neg_resp_pdu resp;
	enum smbd_neg_err err;
	u16 granted;
	u32 status;
	int ret;

	err = smbd_neg_req_process(&sk->ss_params, rx->rx_buf, len, &sk->ss_neg);
	list_add(&rx->rx_node, &sk->ss_rx_free);
	if (err) {
		pr_info_ratelimited("smbd: negotiate request refused: %s\n",
				    smbd_neg_err_str(err));
		status = smbd_neg_err_reply_status(err);
		if (!status)
			return -EPROTO;
		return smbd_send_failure_locked(sk, status);
	}

	smbd_proto_setup(sk);
	ret = smbd_post_recvs(sk, false);
	granted = smbd_cred_take_grant(&sk->ss_cred);
	if (ret <= 0 || !granted)
		return smbd_send_failure_locked(sk,
						SMBD_STATUS_INSUFFICIENT_RESOURCES);
	smbd_neg_resp_build(&sk->ss_params, &sk->ss_neg, granted, &resp);
	ret = smbd_send_negotiate_locked(sk, &resp, sizeof(resp));
	if (ret)
		return ret;
	smbd_established(sk);
	return 0;
}

/* [MS-SMBD] 3.1.5.7: the initiator checks the response. */
static int smbd_recv_neg_resp(struct smbd_sock *sk, struct smbd_recv_ctx *rx,
			      u32 len, unsigned int *act)
{
	enum smbd_neg_err err;
	int ret;

	err = smbd_neg_resp_process(&sk->ss_params, rx->rx_buf, len,
				    &sk->ss_neg);
	list_add(&rx->rx_node, &sk->ss_rx_free);
	if (err) {
		pr_info_ratelimited("smbd: negotiate response refused: %s\n",
				    smbd_neg_err_str(err));
		return -EPROTO;
	}
	smbd_proto_setup(sk);
	ret = smbd_post_recvs(sk, false);
	if (ret <= 0)
		return ret < 0 ? ret : -ENOMEM;
	smbd_established(sk);
	/* The responder holds no credit until we grant the receives. */
	*act |= SMBD_ACT_GRANT;
	return 0;
}

/* [MS-SMBD] 3.1.5.5 and 3.1.5.8: a Data Transfer message. */
static int smbd_recv_data(struct smbd_sock *sk, struct smbd_recv_ctx *rx,
			  struct ib_wc *wc, unsigned int *act)
{
	enum smbd_reasm_event ev;
	struct smbd_data_hdr h;
	enum smbd_rx_err err;
	bool first, reply;
	int ret;

	list_add(&rx->rx_node, &sk->ss_rx_free);
	if (wc->byte_len > sk->ss_neg.max_recv_size) {
		pr_info_ratelimited("smbd: message of %u bytes above MaxReceiveSize\n",
				    wc->byte_len);
		return -EPROTO;
	}
	err = smbd_rx_parse(rx->rx_buf, wc->byte_len,
			    sk->ss_neg.max_fragmented_recv_size, &h);
	if (!err)
		err = smbd_cred_on_recv(&sk->ss_cred, &h);
	if (err)
		goto violation;

	if (h.flags & SMBD_FLAG_RESPONSE_REQUESTED)
		sk->ss_stats.keepalives_answered++;
	/* The idle timer finds this receive when it fires: no re-arm here. */
	reply = smbd_ka_on_recv(&sk->ss_ka, h.flags, smbd_now_ms());
	if (wc->wc_flags & IB_WC_WITH_INVALIDATE) {
		/* [MS-SMBD] 3.1.5.8: InvalidatedToken, and which MR it was. */
		sk->ss_rx_inv_pending = true;
		sk->ss_rx_inv_token = wc->ex.invalidate_rkey;
		smbd_reg_remote_inv(sk, wc->ex.invalidate_rkey);
	}

	first = !sk->ss_reasm.active;
	err = smbd_reasm_add(&sk->ss_reasm, &h, &ev);
	if (err)
		goto violation;
	sk->ss_stats.segs_recv++;
	if (ev != SMBD_REASM_NONE) {
		list_del(&rx->rx_node);
		rx->rx_data_off = h.data_offset;
		rx->rx_data_len = h.data_length;
		rx->rx_first = first;
		rx->rx_msg_total = h.data_length + h.remaining_data_length;
		rx->rx_last = ev == SMBD_REASM_COMPLETE;
		rx->rx_invalidated = false;
		if (rx->rx_last) {
			rx->rx_invalidated = sk->ss_rx_inv_pending;
			rx->rx_token = sk->ss_rx_inv_token;
			sk->ss_rx_inv_pending = false;
			sk->ss_rx_complete_msgs++;
			sk->ss_stats.msgs_recv++;
		}
		sk->ss_stats.bytes_recv += h.data_length;
		list_add_tail(&rx->rx_node, &sk->ss_rx_ready);
		/*
		 * Wake the reader for a whole message, or every few
		 * fragments of a long one, or when the peer's credits run
		 * low and only the reader can give buffers back.
		 */
		if (rx->rx_last || ++sk->ss_rx_unwoken >= SMBD_RX_WAKE_SEGS ||
		    sk->ss_cred.recv_posted <= SMBD_RX_WAKE_SEGS) {
			sk->ss_rx_unwoken = 0;
			*act |= SMBD_ACT_DATA;
		}
	}
	if (h.credits_granted && smbd_space_locked(sk))
		*act |= SMBD_ACT_SPACE;

	ret = smbd_post_recvs(sk, sk->ss_send_waiters > 0);
	if (ret < 0)
		return ret;
	if (reply || smbd_cred_grant_due(&sk->ss_cred))
		*act |= SMBD_ACT_GRANT;
	return 0;

violation:
	pr_info_ratelimited("smbd: data transfer refused: %s\n",
			    smbd_rx_err_str(err));
	return -EPROTO;
}

static void smbd_recv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct smbd_recv_ctx *rx = container_of(wc->wr_cqe,
						struct smbd_recv_ctx, rx_cqe);
	struct smbd_sock *sk = rx->rx_sk;
	const struct smbd_sock_ops *ops;
	unsigned int act = 0;
	u32 waiters;
	int ret = 0;

	if (wc->status != IB_WC_SUCCESS) {
		spin_lock(&sk->ss_lock);
		list_add(&rx->rx_node, &sk->ss_rx_free);
		if (sk->ss_cred.recv_posted)
			sk->ss_cred.recv_posted--;
		spin_unlock(&sk->ss_lock);
		if (wc->status != IB_WC_WR_FLUSH_ERR) {
			pr_info_ratelimited("smbd: receive failed: %s\n",
					    ib_wc_status_msg(wc->status));
			smbd_sock_error(sk, -ECONNABORTED);
		}
		return;
	}

	ib_dma_sync_single_for_cpu(sk->ss_ibdev, rx->rx_dma, rx->rx_len,
				   DMA_FROM_DEVICE);
	spin_lock(&sk->ss_lock);
	switch (sk->ss_close_on_send ? SMBD_CLOSED : sk->ss_state) {
	case SMBD_NEGOTIATING:
		set_bit(SMBD_NEG_RECEIVED, &sk->ss_neg_trace);
		if (sk->ss_responder)
			ret = smbd_recv_neg_req(sk, rx, wc->byte_len, &act);
		else
			ret = smbd_recv_neg_resp(sk, rx, wc->byte_len, &act);
		break;
	case SMBD_CONNECTED:
		ret = smbd_recv_data(sk, rx, wc, &act);
		break;
	default:
		list_add(&rx->rx_node, &sk->ss_rx_free);
		break;
	}
	ops = sk->ss_ops;
	waiters = sk->ss_send_waiters;
	spin_unlock(&sk->ss_lock);

	if (ret) {
		smbd_sock_error(sk, ret);
		return;
	}
	/*
	 * Readers for a message; senders for credits, and for a message too:
	 * the receive it reposted may let a sender use its last credit.
	 * CONNECTED woke everyone in smbd_set_state().
	 */
	if (act & SMBD_ACT_DATA)
		wake_up_all(&sk->ss_recv_wq);
	if (waiters && act & (SMBD_ACT_DATA | SMBD_ACT_SPACE))
		wake_up_all(&sk->ss_send_wq);
	if (act & SMBD_ACT_GRANT)
		queue_work(smbd_wq, &sk->ss_grant_work);
	if (ops && act & SMBD_ACT_DATA && ops->data_ready)
		ops->data_ready(sk);
	if (ops && act & SMBD_ACT_SPACE && ops->write_space)
		ops->write_space(sk);
}

/* ---- send side ---- */

/* Give the sender's pages back: unmap what this send mapped. */
static void smbd_tx_unmap(struct smbd_sock *sk, struct smbd_send_ctx *tx)
{
	u32 i;

	for (i = 1; i <= tx->tx_nmapped; i++)
		ib_dma_unmap_page(sk->ss_ibdev, tx->tx_sge[i].addr,
				  tx->tx_sge[i].length, DMA_TO_DEVICE);
	tx->tx_nmapped = 0;
}

/*
 * A batch of a blocking send is done: @err is 0 when the device completed
 * it, else why not. Wake the sender after its last batch. The error is
 * stored before the reference is dropped: the fully ordered
 * atomic_dec_and_test() and the completion publish it to the sender.
 */
static void smbd_tx_wait_put(struct smbd_send_wait *w, int err)
{
	if (!w)
		return;
	if (err)
		WRITE_ONCE(w->sw_err, err);
	if (atomic_dec_and_test(&w->sw_pending))
		complete(&w->sw_done);
}

static void smbd_send_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct smbd_send_ctx *tx = container_of(wc->wr_cqe,
						struct smbd_send_ctx, tx_cqe);
	struct smbd_sock *sk = tx->tx_sk;
	const struct smbd_sock_ops *ops;
	struct smbd_send_wait *w;
	struct smbd_send_ctx *pos;
	u32 n = 1, waiters;
	bool closing, space;

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
	 * The unsignalled requests need not find their sender.
	 */
	list_for_each_entry(pos, &tx->tx_batch, tx_node) {
		smbd_tx_unmap(sk, pos);
		n++;
	}
	smbd_tx_unmap(sk, tx);
	w = tx->tx_wait;
	tx->tx_wait = NULL;
	smbd_tx_wait_put(w, wc->status == IB_WC_SUCCESS ? 0 : -ECONNABORTED);

	spin_lock(&sk->ss_lock);
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
		    !sk->ss_iwarp && sk->ss_state == SMBD_NEGOTIATING &&
		    !test_and_set_bit(SMBD_NEG_PROBING, &sk->ss_neg_trace)) {
			sk->ss_probe_cqe.done = smbd_neg_probe_done;
			queue_delayed_work(smbd_wq, &sk->ss_probe_work,
					   msecs_to_jiffies(SMBD_NEG_PROBE_MS));
		}
	}
	list_splice_init(&tx->tx_batch, &sk->ss_tx_free);
	list_add(&tx->tx_node, &sk->ss_tx_free);
	sk->ss_tx_free_count += n;
	ops = sk->ss_ops;
	closing = sk->ss_close_on_send;
	space = smbd_space_locked(sk);
	waiters = sk->ss_send_waiters;
	spin_unlock(&sk->ss_lock);

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

/* Must this send be signalled even inside a batch? See ss_tx_sig_bytes. */
static bool smbd_tx_must_signal(const struct smbd_sock *sk,
				const struct smbd_send_ctx *tx)
{
	return smbd_wr_bytes(&tx->tx_wr) >= sk->ss_tx_sig_bytes;
}

/*
 * ib_post_send() refused the chain from @head at @bad. The requests
 * before it were posted: a signalled one completes as usual, with the
 * unsignalled ones it owns; unsignalled ones whose owner was not posted
 * are left to the teardown's drain, and smbd_xfer_free() unmaps them.
 * The rest come back now, and their owners' sender hears @err.
 */
static void smbd_post_failed(struct smbd_sock *sk, struct smbd_send_ctx *head,
			     const struct ib_send_wr *bad, int err)
{
	struct ib_send_wr *wr, *orphans = NULL;
	struct smbd_send_ctx *tx;
	LIST_HEAD(back);
	u32 n = 0;

	for (wr = &head->tx_wr; wr != bad; wr = wr->next) {
		if (wr->send_flags & IB_SEND_SIGNALED)
			orphans = NULL;
		else if (!orphans)
			orphans = wr;
	}
	for (wr = orphans; wr && wr != bad; wr = wr->next) {
		tx = container_of(wr, struct smbd_send_ctx, tx_wr);
		list_del_init(&tx->tx_node);
	}
	for (wr = (struct ib_send_wr *)bad; wr; wr = wr->next) {
		tx = container_of(wr, struct smbd_send_ctx, tx_wr);
		list_del_init(&tx->tx_node);
		smbd_tx_unmap(sk, tx);
		smbd_tx_wait_put(tx->tx_wait, err);
		tx->tx_wait = NULL;
		list_add_tail(&tx->tx_node, &back);
		n++;
	}
	spin_lock_bh(&sk->ss_lock);
	list_splice(&back, &sk->ss_tx_free);
	sk->ss_tx_free_count += n;
	spin_unlock_bh(&sk->ss_lock);
	smbd_sock_error(sk, err);
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
		tx->tx_wait = w;
		if (w)
			atomic_inc(&w->sw_pending);
		list_del_init(&tx->tx_node);
		list_splice_init(&owned, &tx->tx_batch);
	}

	ret = ib_post_send(sk->ss_qp, &head->tx_wr, &bad_wr);
	if (ret)
		smbd_post_failed(sk, head, bad_wr ?: &head->tx_wr, ret);
	return ret;
}

/*
 * Take a send context and a Send Credit for the next segment. Returns 0
 * with *@txp and *@grant set, -EAGAIN when the caller must post its
 * batch and wait, or the connection's error.
 */
static int smbd_take_credit(struct smbd_sock *sk, struct smbd_send_ctx **txp,
			    u16 *grant)
{
	enum smbd_cred_verdict v;

	lockdep_assert_held(&sk->ss_lock);
	if (sk->ss_state != SMBD_CONNECTED)
		return sk->ss_err ?: -ENOTCONN;
	if (!sk->ss_tx_free_count)
		return -EAGAIN;
	v = smbd_cred_send_begin(&sk->ss_cred, grant);
	if (v == SMBD_CRED_LAST_CREDIT) {
		/* [MS-SMBD] 3.1.5.9: post one more so the message can grant. */
		if (smbd_post_recvs(sk, true) > 0)
			v = smbd_cred_send_begin(&sk->ss_cred, grant);
	}
	if (v != SMBD_CRED_SEND)
		return -EAGAIN;
	*txp = list_first_entry(&sk->ss_tx_free, struct smbd_send_ctx, tx_node);
	list_del(&(*txp)->tx_node);
	sk->ss_tx_free_count--;
	return 0;
}

/* Could smbd_take_credit() succeed now (or is the connection gone)? */
static bool smbd_send_possible(struct smbd_sock *sk)
{
	struct smbd_credits *c = &sk->ss_cred;
	bool ok;

	spin_lock_bh(&sk->ss_lock);
	ok = sk->ss_state != SMBD_CONNECTED ||
	     (sk->ss_tx_free_count &&
	      smbd_cred_can_send(c, !list_empty(&sk->ss_rx_free)));
	spin_unlock_bh(&sk->ss_lock);
	return ok;
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
static size_t smbd_tx_map(struct smbd_sock *sk, struct smbd_send_ctx *tx,
			  struct iov_iter *it, size_t len, u32 *nsge, u32 max)
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
		dma = ib_dma_map_page(sk->ss_ibdev, first, off, n,
				      DMA_TO_DEVICE);
		if (ib_dma_mapping_error(sk->ss_ibdev, dma))
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

/*
 * Build the gather list of one segment: the header (@hdr_len bytes,
 * already in tx_buf), then @len payload bytes from the message's parts.
 * With @zcopy the parts' pages are mapped as they are; a segment needing
 * more gather entries than the device has, or from user memory, has its
 * remainder copied into tx_buf after the header. Returns the payload
 * bytes taken (fewer only on a fault) and adds the mapped ones to
 * *@mapped.
 */
static size_t smbd_tx_fill(struct smbd_sock *sk, struct smbd_send_ctx *tx,
			   struct iov_iter *parts, u32 nparts, u32 *cur,
			   u32 hdr_len, u32 len, bool zcopy, u32 *mapped)
{
	u32 nsge = 1, done = 0, bounce;

	tx->tx_sge[0].length = hdr_len;
	/* The last entry is kept for the copied remainder. */
	while (zcopy && done < len && *cur < nparts) {
		struct iov_iter *it = &parts[*cur];
		size_t n;

		if (!iov_iter_count(it)) {
			(*cur)++;
			continue;
		}
		n = smbd_tx_map(sk, tx, it, len - done, &nsge,
				sk->ss_tx_sge - 1);
		if (!n)
			break;
		done += n;
	}
	tx->tx_nmapped = nsge - 1;
	*mapped += done;
	if (done < len) {
		/* The copy goes right after the header's padding. */
		bounce = smbd_copy_parts(parts, nparts, cur,
					 tx->tx_buf + SMBD_DATA_OFFSET,
					 len - done);
		if (nsge == 1) {
			tx->tx_sge[0].length = SMBD_DATA_OFFSET + bounce;
		} else {
			tx->tx_sge[nsge].addr = tx->tx_dma + SMBD_DATA_OFFSET;
			tx->tx_sge[nsge].length = bounce;
			nsge++;
		}
		done += bounce;
		ib_dma_sync_single_for_device(sk->ss_ibdev, tx->tx_dma,
					      SMBD_DATA_OFFSET + bounce,
					      DMA_TO_DEVICE);
	} else {
		ib_dma_sync_single_for_device(sk->ss_ibdev, tx->tx_dma,
					      hdr_len, DMA_TO_DEVICE);
	}
	tx->tx_wr.num_sge = nsge;
	return done;
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
 * Returns the bytes accepted.
 */
static ssize_t smbd_send_msg(struct smbd_sock *sk, struct iov_iter *parts,
			     u32 nparts, struct smbd_send_wait *w,
			     const u32 *inv, bool nonblock)
{
	u32 total, start, idx, rearm, sent = 0, cur = 0, len = 0, i;
	struct smbd_seg_plan plan;
	u32 mapped = 0, seg_mapped;
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

		smbd_seg_plan_get(&plan, idx, &seg);
		spin_lock_bh(&sk->ss_lock);
		while ((ret = smbd_take_credit(sk, &tx, &grant)) == -EAGAIN) {
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
			spin_unlock_bh(&sk->ss_lock);
			ret = wait_event_interruptible(sk->ss_send_wq,
						       smbd_send_possible(sk));
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
		if (flags & SMBD_FLAG_RESPONSE_REQUESTED)
			sk->ss_stats.keepalives_sent++;
		if (rearm)
			mod_delayed_work(smbd_wq, &sk->ss_ka_work,
					 msecs_to_jiffies(rearm));
		h.credits_requested = sk->ss_cred.send_credit_target;
		sk->ss_stats.segs_sent++;
		if (grant)
			sk->ss_stats.grants_sent++;
		spin_unlock_bh(&sk->ss_lock);

		h.credits_granted = grant;
		h.flags = flags;
		h.remaining_data_length = seg.remaining;
		h.data_offset = seg.data_offset;
		h.data_length = seg.data_length;
		smbd_data_hdr_encode(&h, tx->tx_buf);
		seg_mapped = 0;
		if (smbd_tx_fill(sk, tx, parts, nparts, &cur,
				 smbd_data_hdr_wire_len(&h), seg.data_length,
				 w && seg.data_length > SMBD_COPYBREAK,
				 &seg_mapped) != seg.data_length) {
			/* A fault in a kernel iterator; the credit is spent. */
			smbd_tx_unmap(sk, tx);
			spin_lock_bh(&sk->ss_lock);
			list_add(&tx->tx_node, &sk->ss_tx_free);
			sk->ss_tx_free_count++;
			spin_unlock_bh(&sk->ss_lock);
			smbd_sock_error(sk, -EFAULT);
			ret = -EFAULT;
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
		/* Filled but never posted: return them. */
		list_for_each_entry(tx, &batch, tx_node)
			smbd_tx_unmap(sk, tx);
		spin_lock_bh(&sk->ss_lock);
		list_for_each_entry(tx, &batch, tx_node)
			sk->ss_tx_free_count++;
		list_splice_init(&batch, &sk->ss_tx_free);
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
		sk->ss_stats.msgs_sent++;
	}
	sk->ss_stats.bytes_sent += sent;
	sk->ss_stats.bytes_zcopy += mapped;
	spin_unlock_bh(&sk->ss_lock);
	return sent;
}

/*
 * The send mutex for a non-blocking sender. If it is taken, the holder
 * is told (ss_send_nb_waiting) before a last try: smbd_send_empty() may
 * post nothing, so no completion would bring the write_space upcall the
 * sender now waits for.
 */
static bool smbd_send_trylock(struct smbd_sock *sk)
{
	if (mutex_trylock(&sk->ss_send_mutex))
		return true;
	WRITE_ONCE(sk->ss_send_nb_waiting, true);
	smp_mb();	/* the flag before the retry; see smbd_send_empty() */
	return mutex_trylock(&sk->ss_send_mutex);
}

/* The write_space upcall, if a send could go now. */
static void smbd_write_space(struct smbd_sock *sk)
{
	const struct smbd_sock_ops *ops;
	bool space;

	spin_lock_bh(&sk->ss_lock);
	ops = sk->ss_ops;
	space = smbd_space_locked(sk);
	spin_unlock_bh(&sk->ss_lock);
	if (space && ops && ops->write_space)
		ops->write_space(sk);
}

/*
 * An empty message for credits or keep-alive, if it can go now. Returns
 * true when a non-blocking sender found the send mutex taken meanwhile:
 * the caller owes it smbd_write_space().
 */
static bool smbd_send_empty(struct smbd_sock *sk)
{
	struct iov_iter it;

	if (!mutex_trylock(&sk->ss_send_mutex))
		return false;	/* the sender's next message carries it */
	/* Never between the segments of a half-sent message. */
	if (sk->ss_tx_msg_done == sk->ss_tx_msg_len) {
		iov_iter_kvec(&it, ITER_SOURCE, NULL, 0, 0);
		smbd_send_msg(sk, &it, 1, NULL, NULL, true);
	}
	mutex_unlock(&sk->ss_send_mutex);
	smp_mb();	/* the unlock before the flag; see smbd_send_trylock() */
	if (!READ_ONCE(sk->ss_send_nb_waiting))
		return false;
	WRITE_ONCE(sk->ss_send_nb_waiting, false);
	return true;
}

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
		if (!smbd_send_trylock(sk))
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
				    false);
		/* The last part was consumed through its copy. */
		if (ret >= 0)
			iov_iter_advance(from, iov_iter_count(from));
		sk->ss_more_n = 0;
		sk->ss_more_len = 0;
	} else {
		ret = smbd_send_msg(sk, from, 1, w, inv, nonblock);
	}
	mutex_unlock(&sk->ss_send_mutex);

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
 * pre-mapped send buffers and the call returns once the segments are
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
 * smbd_grant_work() - send a credit grant or a keep-alive answer
 * @work: ss_grant_work
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
	      (sk->ss_ka.reply_due || smbd_cred_grant_due(&sk->ss_cred));
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
		.wr.wr_cqe = &sk->ss_probe_cqe,
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
	    ib_post_send(sk->ss_qp, &wr.wr, NULL))
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
		pr_info_ratelimited("smbd: peer did not answer a keep-alive\n");
		smbd_sock_error(sk, -ETIMEDOUT);
	} else if (act == SMBD_KA_ACT_SEND && smbd_send_empty(sk)) {
		smbd_write_space(sk);
	}
}

/* ---- consumer receive ---- */

/*
 * Return consumed buffers and repost. A grant that is due goes out from
 * here, on the reader's thread: no work item between the reader freeing
 * buffers and the peer hearing of them ([MS-SMBD] 3.1.5.8).
 */
static void smbd_rx_return(struct smbd_sock *sk, struct list_head *done)
{
	bool grant, waiters;
	int ret = 0;

	spin_lock_bh(&sk->ss_lock);
	list_splice_init(done, &sk->ss_rx_free);
	if (sk->ss_state == SMBD_CONNECTED)
		ret = smbd_post_recvs(sk, sk->ss_send_waiters > 0);
	if (ret < 0) {
		spin_unlock_bh(&sk->ss_lock);
		pr_info_ratelimited("smbd: reposting receives failed: %d\n",
				    ret);
		smbd_sock_error(sk, -ECONNABORTED);
		return;
	}
	grant = sk->ss_state == SMBD_CONNECTED &&
		smbd_cred_grant_due(&sk->ss_cred);
	waiters = sk->ss_send_waiters;
	spin_unlock_bh(&sk->ss_lock);
	/*
	 * Not the write_space upcall from inside the consumer's own receive
	 * call: the grant work makes it.
	 */
	if (grant && smbd_send_empty(sk)) {
		spin_lock_bh(&sk->ss_lock);
		sk->ss_space_due = true;
		spin_unlock_bh(&sk->ss_lock);
		queue_work(smbd_wq, &sk->ss_grant_work);
	}
	/* A sender held back by the last-credit rule may go on now. */
	if (waiters)
		wake_up_all(&sk->ss_send_wq);
}

static bool smbd_rx_ready(struct smbd_sock *sk)
{
	return !list_empty_careful(&sk->ss_rx_ready) ||
	       READ_ONCE(sk->ss_state) != SMBD_CONNECTED;
}

/*
 * Wait for data. With @started, a message is half read: we must not give
 * up on a signal (its rest would be taken for a new message), only on a
 * fatal one, which ends the connection.
 */
static int smbd_rx_wait(struct smbd_sock *sk, bool nonblock, bool started)
{
	int ret;

	if (nonblock)
		return -EAGAIN;
	if (!started)
		return wait_event_interruptible(sk->ss_recv_wq, smbd_rx_ready(sk));
	ret = wait_event_killable(sk->ss_recv_wq, smbd_rx_ready(sk));
	if (ret)
		smbd_sock_error(sk, -EINTR);
	return ret;
}

static void smbd_rx_part_free(struct smbd_sock *sk)
{
	kvfree(sk->ss_rx_part);
	sk->ss_rx_part = NULL;
	sk->ss_rx_part_len = 0;
	sk->ss_rx_part_size = 0;
}

/*
 * A non-blocking smbd_sock_recv() found no whole message. Every fragment
 * queued then belongs to the one message in progress ([MS-SMBD] 3.1.5.8:
 * messages arrive whole and in order), and each holds a receive buffer
 * that backs one of the peer's Send Credits. A message may be longer
 * than all receive buffers together (MaxFragmentedSize against
 * ReceiveCreditMax x MaxReceiveSize): held there, it would take every
 * credit the peer could get and never complete (3.1.5.9 grants only
 * receives really posted). So move the fragments' payload into a buffer
 * of the socket's own, sized by the message length the first fragment
 * gives (the data length plus RemainingDataLength, checked against
 * MaxFragmentedRecvSize on receipt), and give the receive buffers back
 * to be reposted and granted.
 *
 * Returns 0 once a whole message is queued (the moved head, if any, is
 * in ss_rx_part), -EAGAIN while it is not, the connection's error once
 * it is lost without a whole message, -ENOMEM.
 */
static int smbd_rx_absorb(struct smbd_sock *sk)
{
	struct smbd_recv_ctx *rx;

	lockdep_assert_held(&sk->ss_recv_mutex);
	for (;;) {
		LIST_HEAD(held);
		bool up;
		int err;

		spin_lock_bh(&sk->ss_lock);
		if (sk->ss_rx_complete_msgs) {
			spin_unlock_bh(&sk->ss_lock);
			return 0;
		}
		up = sk->ss_state == SMBD_CONNECTED;
		err = sk->ss_err;
		/* A message that can no longer complete is not worth a copy. */
		if (up)
			list_splice_init(&sk->ss_rx_ready, &held);
		spin_unlock_bh(&sk->ss_lock);
		if (!up)
			return err ?: -ENOTCONN;
		if (list_empty(&held))
			return -EAGAIN;

		rx = list_first_entry(&held, struct smbd_recv_ctx, rx_node);
		err = 0;
		if (!sk->ss_rx_part) {
			/* Only a consumer mixing both read calls gets here. */
			if (WARN_ON_ONCE(!rx->rx_first))
				err = -EINVAL;
			else
				sk->ss_rx_part = kvmalloc(rx->rx_msg_total,
							  GFP_KERNEL |
							  __GFP_NOWARN);
			if (!err && !sk->ss_rx_part)
				err = -ENOMEM;
			if (err) {
				/* Back where they were, ahead of later ones. */
				spin_lock_bh(&sk->ss_lock);
				list_splice(&held, &sk->ss_rx_ready);
				spin_unlock_bh(&sk->ss_lock);
				return err;
			}
			sk->ss_rx_part_size = rx->rx_msg_total;
			sk->ss_rx_part_len = 0;
		}
		list_for_each_entry(rx, &held, rx_node) {
			/* Reassembly keeps a message within its stated length. */
			if (WARN_ON_ONCE(rx->rx_data_len > sk->ss_rx_part_size -
						   sk->ss_rx_part_len)) {
				err = -EPROTO;
				break;
			}
			memcpy(sk->ss_rx_part + sk->ss_rx_part_len,
			       rx->rx_buf + rx->rx_data_off, rx->rx_data_len);
			sk->ss_rx_part_len += rx->rx_data_len;
		}
		smbd_rx_return(sk, &held);
		if (err) {
			/* Never hand out what is left of it as a message. */
			smbd_rx_part_free(sk);
			smbd_sock_error(sk, err);
			return err;
		}
	}
}

/**
 * smbd_sock_recv() - receive one whole upper-layer message
 * @sk: a connected socket
 * @to: where the message goes
 * @flags: %SMBD_RECV_NONBLOCK
 * @info: about the message; may be NULL
 *
 * Messages come whole and in order ([MS-SMBD] 3.1.5.8). A message
 * longer than @to is consumed and cut: -EMSGSIZE, with its length in
 * @info. Fragments are copied out as they arrive, so a message larger
 * than all receive buffers together still comes through: a blocking call
 * copies them into @to and waits for the rest; a non-blocking call that
 * finds only part of a message moves that part into a buffer of the
 * socket's own (allocated then, as large as the message) and returns
 * -EAGAIN, so the receive buffers go back to the peer; the call that
 * finds the last fragment returns the whole message. Do not mix with
 * smbd_sock_recv_stream() on one socket.
 *
 * Context: process; sleeps unless %SMBD_RECV_NONBLOCK, which never waits
 * for the peer but may sleep in a GFP_KERNEL allocation.
 * Return: the message length; -EAGAIN; -EMSGSIZE; -ENOMEM (non-blocking,
 * nothing consumed); the connection's error once it is lost and no
 * whole message is queued; -ERESTARTSYS.
 */
ssize_t smbd_sock_recv(struct smbd_sock *sk, struct iov_iter *to,
		       unsigned int flags, struct smbd_recv_info *info)
{
	bool nonblock = flags & SMBD_RECV_NONBLOCK, started = false;
	bool last = false, trunc = false;
	struct smbd_recv_ctx *rx, *tmp;
	u32 msg_len = 0;
	ssize_t ret;

	if (nonblock) {
		if (!mutex_trylock(&sk->ss_recv_mutex))
			return -EAGAIN;
		ret = smbd_rx_absorb(sk);
		if (ret)
			goto out;
	} else if (mutex_lock_interruptible(&sk->ss_recv_mutex)) {
		return -ERESTARTSYS;
	}

	if (sk->ss_rx_part) {
		/* The head a non-blocking call moved out: the message began. */
		u32 n = min_t(u32, sk->ss_rx_part_len, iov_iter_count(to));

		if (n && copy_to_iter(sk->ss_rx_part, n, to) != n)
			trunc = true;
		if (n < sk->ss_rx_part_len)
			trunc = true;
		msg_len = sk->ss_rx_part_len;
		started = true;
		smbd_rx_part_free(sk);
	}

	while (!last) {
		LIST_HEAD(done);

		spin_lock_bh(&sk->ss_lock);
		if (list_empty(&sk->ss_rx_ready) ||
		    (nonblock && !started && !sk->ss_rx_complete_msgs)) {
			bool up = sk->ss_state == SMBD_CONNECTED;
			int err = sk->ss_err;

			spin_unlock_bh(&sk->ss_lock);
			if (!up && list_empty_careful(&sk->ss_rx_ready)) {
				ret = err ?: -ENOTCONN;
				goto out;
			}
			ret = smbd_rx_wait(sk, nonblock, started);
			if (ret)
				goto out;
			continue;
		}
		list_for_each_entry_safe(rx, tmp, &sk->ss_rx_ready, rx_node) {
			list_move_tail(&rx->rx_node, &done);
			if (rx->rx_last) {
				sk->ss_rx_complete_msgs--;
				last = true;
				break;
			}
		}
		spin_unlock_bh(&sk->ss_lock);

		list_for_each_entry(rx, &done, rx_node) {
			u32 n = min_t(u32, rx->rx_data_len, iov_iter_count(to));

			if (rx->rx_first)
				started = true;
			if (n && copy_to_iter(rx->rx_buf + rx->rx_data_off, n, to) != n)
				trunc = true;
			if (n < rx->rx_data_len)
				trunc = true;
			msg_len += rx->rx_data_len;
			if (rx->rx_last && info) {
				info->invalidated = rx->rx_invalidated;
				info->token = rx->rx_token;
			}
		}
		started = true;
		smbd_rx_return(sk, &done);
	}
	if (info)
		info->msg_len = msg_len;
	/* Not the conditional operator: u32 would turn -EMSGSIZE positive. */
	ret = msg_len;
	if (trunc)
		ret = -EMSGSIZE;
out:
	mutex_unlock(&sk->ss_recv_mutex);
	return ret;
}
EXPORT_SYMBOL_NS_GPL(smbd_sock_recv, SMBD);

/**
 * smbd_sock_recv_stream() - read messages as SMB2-over-TCP framing
 * @sk: a connected socket
 * @to: where the bytes go
 * @flags: %SMBD_RECV_NONBLOCK
 *
 * For consumers written for SMB2 over TCP (cifs, ksmbd): each message
 * reads as a 4-byte big-endian length followed by the message, the way
 * Direct TCP frames it (MS-SMB2 2.1). A read stops at the end of a
 * message. Do not mix with smbd_sock_recv() on one socket.
 *
 * Context: process; sleeps unless %SMBD_RECV_NONBLOCK.
 * Return: bytes read (0 only for an empty @to); -EAGAIN; the
 * connection's error once it is lost and nothing is queued;
 * -ERESTARTSYS.
 */
ssize_t smbd_sock_recv_stream(struct smbd_sock *sk, struct iov_iter *to,
			      unsigned int flags)
{
	bool nonblock = flags & SMBD_RECV_NONBLOCK;
	struct smbd_recv_ctx *rx;
	ssize_t copied = 0;
	int ret;

	if (nonblock) {
		if (!mutex_trylock(&sk->ss_recv_mutex))
			return -EAGAIN;
	} else if (mutex_lock_interruptible(&sk->ss_recv_mutex)) {
		return -ERESTARTSYS;
	}

	while (iov_iter_count(to)) {
		LIST_HEAD(done);
		bool mid = sk->ss_stream_hdr_left || sk->ss_stream_msg_left;
		u32 n;

		spin_lock_bh(&sk->ss_lock);
		rx = list_first_entry_or_null(&sk->ss_rx_ready,
					      struct smbd_recv_ctx, rx_node);
		if (!rx) {
			bool up = sk->ss_state == SMBD_CONNECTED;

			spin_unlock_bh(&sk->ss_lock);
			if (copied)
				break;
			if (!up && list_empty_careful(&sk->ss_rx_ready)) {
				ret = READ_ONCE(sk->ss_err) ?: -ENOTCONN;
				goto out_err;
			}
			ret = smbd_rx_wait(sk, nonblock, mid);
			if (ret)
				goto out_err;
			continue;
		}
		if (!mid) {
			if (copied)	/* stop at a message boundary */
				goto unlock_break;
			sk->ss_stream_hdr_left = 4;
			sk->ss_stream_msg_left = rx->rx_msg_total;
		}
		spin_unlock_bh(&sk->ss_lock);

		if (sk->ss_stream_hdr_left) {
			/* No data of this message read yet: msg_left is its length. */
			__be32 hdr = cpu_to_be32(sk->ss_stream_msg_left);
			u32 off = 4 - sk->ss_stream_hdr_left;

			n = min_t(u32, sk->ss_stream_hdr_left, iov_iter_count(to));
			if (copy_to_iter((u8 *)&hdr + off, n, to) != n) {
				ret = -EFAULT;
				goto out_err;
			}
			sk->ss_stream_hdr_left -= n;
			copied += n;
			if (sk->ss_stream_hdr_left)
				break;
			continue;
		}

		n = min_t(u32, rx->rx_data_len, iov_iter_count(to));
		if (n && copy_to_iter(rx->rx_buf + rx->rx_data_off, n, to) != n) {
			ret = -EFAULT;
			goto out_err;
		}
		rx->rx_data_off += n;
		rx->rx_data_len -= n;
		sk->ss_stream_msg_left -= n;
		copied += n;
		if (!rx->rx_data_len) {
			spin_lock_bh(&sk->ss_lock);
			list_move_tail(&rx->rx_node, &done);
			if (rx->rx_last)
				sk->ss_rx_complete_msgs--;
			spin_unlock_bh(&sk->ss_lock);
			smbd_rx_return(sk, &done);
			if (rx->rx_last) {
				sk->ss_stream_msg_left = 0;
				break;
			}
		}
		continue;
unlock_break:
		spin_unlock_bh(&sk->ss_lock);
		break;
	}
	mutex_unlock(&sk->ss_recv_mutex);
	return copied;
out_err:
	mutex_unlock(&sk->ss_recv_mutex);
	return copied ?: ret;
}
EXPORT_SYMBOL_NS_GPL(smbd_sock_recv_stream, SMBD);

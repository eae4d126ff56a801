// SPDX-License-Identifier: GPL-2.0
/*
 * smbd: receive completions ([MS-SMBD] 3.1.5.2, 3.1.5.3, 3.1.5.6 to
 * 3.1.5.8).
 *
 * Receives complete in softirq or ib_core's completion workqueue
 * (module parameter cq_poll). Negotiation messages
 * are answered there; data messages are validated (smbd_rx_parse()),
 * credited (smbd_cred_on_recv()), reassembled and queued for the
 * consumer, and buffers are reposted in one chained post. A credit-only
 * message or a keep-alive answer that falls due is left to the grant
 * work: nothing is sent from the handler but a Negotiate Response.
 *
 * A protocol violation or a completion error ends the connection through
 * smbd_sock_error(); flushed completions during teardown only return
 * their buffers.
 */

#include <linux/errno.h>
#include <linux/slab.h>
#include <linux/uio.h>
#include <rdma/ib_verbs.h>

#include "smbd_internal.h"
#include "smbd_trace.h"

/* Work for the completion handler to do once the lock is dropped. */
#define SMBD_ACT_DATA		BIT(0)
#define SMBD_ACT_GRANT		BIT(1)
#define SMBD_ACT_SPACE		BIT(2)	/* write_space: any send may go */
#define SMBD_ACT_WAKE		BIT(3)	/* a waiting sender may go */

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
	smbd_set_state(sk, SMBD_REFUSING);
	return 0;
}

/*
 * Set up the connection's protocol state from the negotiated values, once
 * smbd_xfer_split() has made the receives they call for.
 */
static void smbd_proto_setup(struct smbd_sock *sk)
{
	smbd_cred_init(&sk->ss_cred, &sk->ss_params, &sk->ss_neg);
	smbd_reasm_init(&sk->ss_reasm, sk->ss_neg.max_fragmented_recv_size);
	smbd_ka_init(&sk->ss_ka, sk->ss_params.keepalive_interval_ms,
		     sk->ss_params.keepalive_timeout_ms);
}

/*
 * Peer input refused under [MS-SMBD] @section for @reason: count it in
 * total and in @count (its reason's slot of ss_cnt), and trace it. The
 * caller ends the connection.
 */
static void smbd_refuse(struct smbd_sock *sk, u32 *count, const char *section,
			const char *reason)
{
	lockdep_assert_held(&sk->ss_lock);
	sk->ss_stats.peer_refusals++;
	(*count)++;
	trace_smbd_refused(sk, section, reason);
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
	list_add(&rx->rx_node, &sk->ss_rx.free);
	if (err) {
		smbd_refuse(sk, &sk->ss_cnt.neg_refused[err], "3.1.5.6",
			    smbd_neg_err_str(err));
		status = smbd_neg_err_reply_status(err);
		if (!status)
			return -EPROTO;
		return smbd_send_failure_locked(sk, status);
	}

	ret = smbd_xfer_split(sk);
	if (ret)
		return ret;
	smbd_proto_setup(sk);
	ret = smbd_post_recvs(sk, false);
	granted = smbd_cred_take_grant(&sk->ss_cred);
	trace_smbd_credit_grant(sk, granted);
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
	list_add(&rx->rx_node, &sk->ss_rx.free);
	if (err) {
		smbd_refuse(sk, &sk->ss_cnt.neg_refused[err], "3.1.5.7",
			    smbd_neg_err_str(err));
		return -EPROTO;
	}
	ret = smbd_xfer_split(sk);
	if (ret)
		return ret;
	smbd_proto_setup(sk);
	ret = smbd_post_recvs(sk, false);
	if (ret <= 0)
		return ret < 0 ? ret : -ENOMEM;
	smbd_established(sk);
	/* The responder holds no credit until we grant the receives. */
	*act |= SMBD_ACT_GRANT;
	return 0;
}

/*
 * A segment with payload, or the end of a message, goes to the readers
 * (ss_rx.ready): @first and @last of its message, as its header @h says.
 * The readers are woken for a whole message, or every few fragments of a
 * long one, or when the peer's credits run low and only a reader can
 * give buffers back.
 */
static void smbd_rx_ready(struct smbd_sock *sk, struct smbd_recv_ctx *rx,
			  const struct smbd_data_hdr *h, bool first, bool last,
			  unsigned int *act)
{
	lockdep_assert_held(&sk->ss_lock);
	list_del(&rx->rx_node);
	rx->rx_data_off = h->data_offset;
	rx->rx_data_len = h->data_length;
	rx->rx_first = first;
	rx->rx_msg_total = h->data_length + h->remaining_data_length;
	rx->rx_last = last;
	rx->rx_invalidated = false;
	if (rx->rx_last) {
		rx->rx_invalidated = sk->ss_rx.inv_pending;
		rx->rx_token = sk->ss_rx.inv_token;
		sk->ss_rx.inv_pending = false;
		sk->ss_rx.complete_msgs++;
		sk->ss_stats.msgs_recv++;
	}
	sk->ss_stats.bytes_recv += h->data_length;
	list_add_tail(&rx->rx_node, &sk->ss_rx.ready);
	if (rx->rx_last || ++sk->ss_rx.unwoken >= SMBD_RX_WAKE_SEGS ||
	    smbd_cred_recv_short(&sk->ss_cred, SMBD_RX_WAKE_SEGS)) {
		sk->ss_rx.unwoken = 0;
		*act |= SMBD_ACT_DATA;
	}
}

/*
 * After a valid Data Transfer message: post the receives its credits
 * allow, then say who may go on. Credits granted, or a receive posted
 * just now, can let a sender go, the second by making its last Send
 * Credit usable ([MS-SMBD] 3.1.5.9) even when the message granted none;
 * an empty message is due to grant or to answer a keep-alive (@reply).
 */
static int smbd_recv_after(struct smbd_sock *sk, const struct smbd_data_hdr *h,
			   bool reply, unsigned int *act)
{
	int ret;

	lockdep_assert_held(&sk->ss_lock);
	ret = smbd_post_recvs(sk, sk->ss_tx.waiters > 0);
	if (ret < 0)
		return ret;
	if (h->credits_granted || ret > 0) {
		if (smbd_space_locked(sk, true))
			*act |= SMBD_ACT_SPACE | SMBD_ACT_WAKE;
		else if (smbd_space_locked(sk, false))
			*act |= SMBD_ACT_WAKE;
	}
	if (smbd_cred_empty_due(&sk->ss_cred, reply))
		*act |= SMBD_ACT_GRANT;
	return 0;
}

/* [MS-SMBD] 3.1.5.5 and 3.1.5.8: a Data Transfer message. */
static int smbd_recv_data(struct smbd_sock *sk, struct smbd_recv_ctx *rx,
			  struct ib_wc *wc, unsigned int *act)
{
	bool inv = wc->wc_flags & IB_WC_WITH_INVALIDATE;
	enum smbd_reasm_event ev;
	struct smbd_data_hdr h;
	enum smbd_rx_err err;
	bool first, reply;

	list_add(&rx->rx_node, &sk->ss_rx.free);
	/*
	 * Only a Send places a message: an RDMA Write with Immediate from a
	 * peer holding one of our rkeys consumes a receive too, and the
	 * buffer then holds an older message, or nothing ever written.
	 */
	if (wc->opcode != IB_WC_RECV) {
		err = SMBD_RX_ERR_OPCODE;
		goto violation;
	}
	err = smbd_rx_parse(rx->rx_buf, wc->byte_len, sk->ss_neg.max_recv_size,
			    sk->ss_neg.max_fragmented_recv_size, &h);
	if (!err)
		err = smbd_cred_on_recv(&sk->ss_cred, &h);
	if (err)
		goto violation;

	trace_smbd_recv_data(sk, rx->rx_seq, &h);
	if (h.flags & SMBD_FLAG_RESPONSE_REQUESTED) {
		sk->ss_stats.keepalives_answered++;
		trace_smbd_keepalive(sk, SMBD_TRACE_KA_ASKED);
	}
	/* The idle timer finds this receive when it fires: no re-arm here. */
	reply = smbd_ka_on_recv(&sk->ss_ka, h.flags, smbd_now_ms());
	/*
	 * [MS-SMBD] 3.1.5.8: the device invalidated one of our rkeys with
	 * this message. The registration knows it at once, whatever the
	 * message carries: smbd_deregister() has nothing left to do for it.
	 */
	if (inv)
		smbd_reg_remote_inv(sk, wc->ex.invalidate_rkey);

	first = !sk->ss_reasm.active;
	err = smbd_reasm_add(&sk->ss_reasm, &h, &ev);
	if (err)
		goto violation;
	sk->ss_stats.segs_recv++;
	if (!h.data_length)
		sk->ss_cnt.empty_recv++;
	if (ev == SMBD_REASM_COMPLETE && !first)
		sk->ss_cnt.reassembled++;
	if (ev != SMBD_REASM_NONE) {
		/*
		 * InvalidatedToken goes up with the message this segment
		 * belongs to, once its last segment is in. A message with
		 * no payload (credits, a keep-alive) is none of the upper
		 * layer's, nor a segment of the one in progress: its token
		 * is for no message, and told only to the registration.
		 */
		if (inv) {
			sk->ss_rx.inv_pending = true;
			sk->ss_rx.inv_token = wc->ex.invalidate_rkey;
		}
		smbd_rx_ready(sk, rx, &h, first, ev == SMBD_REASM_COMPLETE,
			      act);
	}
	return smbd_recv_after(sk, &h, reply, act);

violation:
	smbd_refuse(sk, &sk->ss_cnt.rx_refused[err], "3.1.5.8",
		    smbd_rx_err_str(err));
	return -EPROTO;
}

/**
 * smbd_recv_done() - a receive completed
 * @cq: the receive completion queue
 * @wc: the completion
 *
 * Context: softirq, or ib_core's completion workqueue (cq_poll); never
 * sleeps.
 */
void smbd_recv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct smbd_recv_ctx *rx = container_of(wc->wr_cqe,
						struct smbd_recv_ctx, rx_cqe.cqe);
	struct smbd_sock *sk = rx->rx_sk;
	const struct smbd_sock_ops *ops;
	unsigned int act = 0;
	u32 waiters;
	int ret = 0;

	trace_smbd_recv(sk, rx->rx_seq, wc->status, wc->byte_len);
	if (smbd_wc_begin(cq, wc, false) != IB_WC_SUCCESS) {
		spin_lock_bh(&sk->ss_lock);
		list_add(&rx->rx_node, &sk->ss_rx.free);
		smbd_cred_recv_lost(&sk->ss_cred);
		spin_unlock_bh(&sk->ss_lock);
		/* Flushed: the queue pair is going, and its ender reports. */
		if (wc->status != IB_WC_WR_FLUSH_ERR)
			smbd_wr_failed(sk, wc->status, "receive");
		return;
	}

	ib_dma_sync_single_for_cpu(sk->ss_ep.ibdev, rx->rx_dma, rx->rx_len,
				   DMA_FROM_DEVICE);
	spin_lock_bh(&sk->ss_lock);
	switch (sk->ss_state) {
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
	case SMBD_CONNECTING:
		/*
		 * [MS-SMBD] 3.1.5.2, 3.1.5.7: the initiator speaks first,
		 * its Negotiate Request once the connection is established;
		 * the responder only answers it. A message before that is a
		 * violation; it took the one receive posted for the
		 * response, which would then find none.
		 */
		list_add(&rx->rx_node, &sk->ss_rx.free);
		smbd_refuse(sk, &sk->ss_cnt.neg_refused[SMBD_NEG_ERR_EARLY],
			    "3.1.5.7", smbd_neg_err_str(SMBD_NEG_ERR_EARLY));
		ret = -EPROTO;
		break;
	default:
		list_add(&rx->rx_node, &sk->ss_rx.free);
		break;
	}
	ops = sk->ss_ops;
	waiters = sk->ss_tx.waiters;
	spin_unlock_bh(&sk->ss_lock);

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
		smbd_wake_all(&sk->ss_recv_wq);
	if (waiters && act & (SMBD_ACT_DATA | SMBD_ACT_WAKE))
		wake_up_all(&sk->ss_send_wq);
	if (act & SMBD_ACT_GRANT)
		queue_work(smbd_wq, &sk->ss_grant_work);
	if (ops && act & SMBD_ACT_DATA && ops->data_ready)
		ops->data_ready(sk);
	if (ops && act & SMBD_ACT_SPACE && ops->write_space)
		ops->write_space(sk);
}

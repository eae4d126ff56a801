// SPDX-License-Identifier: GPL-2.0
/*
 * smbd: the queue pair's one post path, its gate and its fence
 * (Documentation/smbd.rst, "Posted work").
 *
 * Every work request reaches the device through smbd_post() or, for a
 * marker, smbd_post_marker() (the send queue), or smbd_post_recv() (the
 * receive queue): the gate, the fail_post fault point, a device that died
 * and a KUnit suite's fake are there.
 *
 * The gate: threads that the teardown does not exclude by a mutex post
 * only while ss_ep.qp_closed is clear, checked under ss_lock, and count
 * themselves in ss_ep.posting until their post returned; the teardown
 * closes the gate and waits for them before it drains the queue pair.
 *
 * The fence: after a failure that may leave requests on the send queue
 * that no completion will report (a chain the provider took only in
 * part, an unsignalled request whose signalled owner was refused, a
 * registration or invalidation that failed), the queue pair goes to the
 * error state and one marker is posted after everything else; the send
 * queue completes in order, so once the marker is seen the device is
 * done with all of it.
 *
 * With the ops of smbd_op.c they keep the rule of posted work: the memory
 * a request names goes back to its owner only once the device is done
 * with it.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <kunit/visibility.h>
#include <linux/delay.h>
#include <linux/errno.h>
#include <rdma/ib_verbs.h>

#include "smbd_internal.h"

/* How long a fence marker is retried on a queue pair still full. */
#define SMBD_FENCE_TRIES	500
#define SMBD_FENCE_RETRY_MS	10

/**
 * smbd_post_leave() - leave the gate after a post
 * @sk: the socket; the caller counted itself in ss_ep.posting
 *
 * The teardown waits for the last one out.
 *
 * Context: process or softirq.
 */
void smbd_post_leave(struct smbd_sock *sk)
{
	bool wake;

	spin_lock_bh(&sk->ss_lock);
	wake = !--sk->ss_ep.posting && sk->ss_ep.qp_closed;
	spin_unlock_bh(&sk->ss_lock);
	if (wake)
		smbd_wake_all(&sk->ss_res_wq);
}

/*
 * The send queue itself: refused on a device that died (as mlx5 and mlx4
 * do after a fatal error, whichever the device), a KUnit suite's fake, or
 * the provider's. Only smbd_post() calls it (and a KUnit case).
 */
VISIBLE_IF_KUNIT int smbd_qp_post(struct smbd_sock *sk,
				  const struct ib_send_wr *first,
				  const struct ib_send_wr **bad)
{
	if (unlikely(READ_ONCE(sk->ss_ep.dead))) {
		*bad = first;
		return -EIO;
	}
	if (unlikely(smbd_fake(sk)))
		return smbd_fake(sk)->post_send(sk, first, bad);
	return ib_post_send(sk->ss_ep.qp, first, bad);
}
EXPORT_SYMBOL_IF_KUNIT(smbd_qp_post);

/* The receive queue, as smbd_qp_post() the send queue. */
static int smbd_qp_post_recv(struct smbd_sock *sk,
			     const struct ib_recv_wr *first,
			     const struct ib_recv_wr **bad)
{
	if (unlikely(READ_ONCE(sk->ss_ep.dead))) {
		*bad = first;
		return -EIO;
	}
	if (unlikely(smbd_fake(sk)))
		return smbd_fake(sk)->post_recv(sk, first, bad);
	return ib_post_recv(sk->ss_ep.qp, first, bad);
}

/*
 * The fail_post point's cut: post the first part of the chain @first
 * (smbd_fail_post_keep() of its length) with @post and refuse the rest
 * as a provider out of room does: -ENOMEM with *@bad at the first request
 * not posted, or @post's own error. Send and receive chains differ only
 * in their type, hence a macro.
 */
#define smbd_post_cut(post, sk, first, bad) ({				\
	typeof(first) _first = (first), _wr, _last = NULL;		\
	typeof(bad) _bad = (bad);					\
	u32 _n = 0, _keep;						\
	int _ret = 0;							\
									\
	for (_wr = _first; _wr; _wr = _wr->next)			\
		_n++;							\
	_keep = smbd_fail_post_keep(_n);				\
	for (_wr = _first; _wr && _keep--; _wr = _wr->next)		\
		_last = _wr;						\
	if (_last) {							\
		_last->next = NULL;					\
		_ret = post(sk, _first, _bad);				\
		_last->next = _wr;					\
	}								\
	if (!_ret) {							\
		*_bad = _wr;						\
		_ret = -ENOMEM;						\
	}								\
	_ret;								\
})

/*
 * The gate as @how says, then the send queue; @fault: the fail_post point
 * may refuse part of the chain.
 */
static int smbd_post_how(struct smbd_sock *sk, struct ib_send_wr *first,
			 const struct ib_send_wr **bad,
			 enum smbd_post_how how, bool fault)
{
	const struct ib_send_wr *ignored;
	bool gate = false;
	int ret;

	if (!bad)
		bad = &ignored;
	switch (how) {
	case SMBD_POST_GATE:
		spin_lock_bh(&sk->ss_lock);
		if (sk->ss_ep.qp_closed) {
			ret = sk->ss_err ?: -ENOTCONN;
			spin_unlock_bh(&sk->ss_lock);
			*bad = first;
			return ret;
		}
		sk->ss_ep.posting++;
		spin_unlock_bh(&sk->ss_lock);
		gate = true;
		break;
	case SMBD_POST_LOCKED:
		lockdep_assert_held(&sk->ss_lock);
		if (sk->ss_ep.qp_closed) {
			*bad = first;
			return sk->ss_err ?: -ENOTCONN;
		}
		break;
	case SMBD_POST_SENDER:
		lockdep_assert_held(&sk->ss_send_mutex);
		break;
	default:
		WARN_ON_ONCE(!READ_ONCE(sk->ss_ep.posting));
		break;
	}
	if (fault && smbd_should_fail(SMBD_FAIL_POST))
		ret = smbd_post_cut(smbd_qp_post, sk, first, bad);
	else
		ret = smbd_qp_post(sk, first, bad);
	if (gate)
		smbd_post_leave(sk);
	return ret;
}

/**
 * smbd_post() - post a chain of send work requests: the one way to the
 *	queue pair's send queue
 * @sk: the socket
 * @first: the chain
 * @bad: set to the first request not posted, on error (@first when the
 *	gate was closed); may be NULL for a chain of one
 * @how: how the caller is kept from the teardown, checked here
 *
 * Every send, RDMA Read or Write, registration and invalidation goes
 * through here (a marker through smbd_post_marker()): the gate, the
 * fail_post fault point, a device that died, a KUnit suite's fake,
 * ib_post_send().
 *
 * Context: process or softirq; %SMBD_POST_LOCKED: caller holds ss_lock;
 * %SMBD_POST_SENDER: caller holds ss_send_mutex; %SMBD_POST_ENTERED:
 * caller is inside the gate.
 * Return: 0, -ENOTCONN (or the connection's error) when the gate is
 * closed, or the post's error; on a post error part of the chain may be
 * on the queue: the caller fences (smbd_qp_fence()) before it frees what
 * it names.
 */
int smbd_post(struct smbd_sock *sk, struct ib_send_wr *first,
	      const struct ib_send_wr **bad, enum smbd_post_how how)
{
	return smbd_post_how(sk, first, bad, how, true);
}

/**
 * smbd_post_marker() - post one marker to the send queue, as smbd_post()
 *	does but never refused by the fail_post point
 * @sk: the socket
 * @wr: the marker (the fence's, the negotiation probe's): its completion
 *	tests nothing of a refusal
 * @how: as for smbd_post()
 *
 * Context: as for smbd_post().
 * Return: as for smbd_post().
 */
int smbd_post_marker(struct smbd_sock *sk, struct ib_send_wr *wr,
		     enum smbd_post_how how)
{
	return smbd_post_how(sk, wr, NULL, how, false);
}

/**
 * smbd_wc_begin() - the one prologue of every completion handler
 * @cq: the completion queue it came from (its context is the socket)
 * @wc: the completion; its wr_cqe is in a struct smbd_cqe
 * @exact: the completion of a marker (smbd_post_marker(): the fence's,
 *	the negotiation probe's), which no fault is injected into
 *
 * Decides the status the handler acts on, the device's or the fail_wc
 * fault point's (a success reported as IB_WC_GENERAL_ERR, as a provider
 * does on a local error), and traces the completion with it by its
 * context's id (smbd_wc_trace()).
 *
 * Context: completion handler.
 * Return: that status, also in @wc.
 */
enum ib_wc_status smbd_wc_begin(struct ib_cq *cq, struct ib_wc *wc,
				bool exact)
{
	if (!exact && wc->status == IB_WC_SUCCESS &&
	    smbd_should_fail(SMBD_FAIL_WC))
		wc->status = IB_WC_GENERAL_ERR;
	smbd_wc_trace(cq, wc);
	return wc->status;
}

/**
 * smbd_post_recv() - post a chain of receive work requests: the one way
 *	to the receive queue
 * @sk: the socket
 * @first: the chain
 * @bad: set to the first request not posted, on error
 *
 * The fail_post point applies as to smbd_post(). Receive reposts are kept
 * from the teardown by the state (Documentation/smbd.rst, "Posted work").
 *
 * Context: any; caller holds ss_lock.
 * Return: 0, or a negative errno with *@bad set.
 */
int smbd_post_recv(struct smbd_sock *sk, struct ib_recv_wr *first,
		   const struct ib_recv_wr **bad)
{
	lockdep_assert_held(&sk->ss_lock);
	if (smbd_should_fail(SMBD_FAIL_POST))
		return smbd_post_cut(smbd_qp_post_recv, sk, first, bad);
	return smbd_qp_post_recv(sk, first, bad);
}

/*
 * Move the queue pair to the error state and post the marker, once per
 * connection. Returns false when there is nothing to wait for: no queue
 * pair was ever made.
 *
 * Only a queue pair in the error state is fenced by the marker: on one
 * still ready to send, the marker would complete at once while the peer
 * could still reach the MRs ([MS-SMBD] 3.1.4.4). When the move fails, or
 * the provider refuses the marker for good (mlx5 and mlx4 refuse every
 * post after a fatal error), nothing is posted and the fence completes
 * only with the teardown's drain. A marker refused for want of room
 * (-ENOMEM) is tried again: the queue pair flushes what it holds.
 */
static bool smbd_fence_post(struct smbd_sock *sk)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };
	struct ib_rdma_wr wr = {
		.wr.wr_cqe = &sk->ss_ep.fence_cqe.cqe,
		.wr.opcode = IB_WR_RDMA_WRITE,
		.wr.send_flags = IB_SEND_SIGNALED,
	};
	int tries = SMBD_FENCE_TRIES, ret;
	bool post;

	spin_lock_bh(&sk->ss_lock);
	if (!sk->ss_ep.qp_closed && !READ_ONCE(sk->ss_ep.qp)) {
		spin_unlock_bh(&sk->ss_lock);
		return false;
	}
	/* A dead device: smbd_sock_dead() completes the fence itself. */
	post = !sk->ss_ep.qp_closed && !sk->ss_ep.fence_posted &&
	       !READ_ONCE(sk->ss_ep.dead);
	if (post) {
		sk->ss_ep.fence_posted = true;
		sk->ss_ep.posting++;
	}
	spin_unlock_bh(&sk->ss_lock);
	if (!post)
		return true;

	if (smbd_fake(sk))
		ret = smbd_fake(sk)->to_error(sk);
	else
		ret = ib_modify_qp(sk->ss_ep.qp, &attr, IB_QP_STATE);
	if (!ret) {
		while ((ret = smbd_post_marker(sk, &wr.wr,
					       SMBD_POST_ENTERED)) == -ENOMEM &&
		       --tries)
			msleep(SMBD_FENCE_RETRY_MS);
	}
	WRITE_ONCE(sk->ss_ep.fence_err, ret);
	if (ret)
		pr_warn_ratelimited("connection %u: no fence (%d): waits end with the teardown\n",
				    sk->ss_id, ret);
	smbd_post_leave(sk);
	return true;
}

/**
 * smbd_qp_fence_start() - have everything posted so far flushed
 * @sk: a socket whose connection ended
 *
 * As smbd_qp_fence(), without the wait: every request on the queue pair
 * completes soon, in error, and wakes whoever waits for it.
 *
 * Context: process; may sleep.
 * Return: false when there is nothing to wait for (no queue pair yet);
 * else ss_ep.fence_done completes once the fence is done.
 */
bool smbd_qp_fence_start(struct smbd_sock *sk)
{
	might_sleep();
	return smbd_fence_post(sk);
}

/**
 * smbd_qp_fence() - make the device finish with everything posted so far
 * @sk: a socket whose connection failed (or is failing); the gate keeps
 *	its queue pair alive while the marker is posted
 *
 * Moves the queue pair to the error state, where the peer reaches none
 * of its MRs, and waits for a marker posted after every request already
 * on the send queue: then none of them is running. Once per connection;
 * later callers wait for the same marker. After the teardown closed the
 * gate, its drain does the same and completes the wait. When the queue
 * pair cannot be fenced (ss_ep.fence_err) only that drain completes it;
 * on a dead device (smbd_sock_dead()) nothing is posted and the wait
 * ends at once.
 *
 * Context: process; sleeps.
 */
void smbd_qp_fence(struct smbd_sock *sk)
{
	might_sleep();
	if (smbd_fence_post(sk))
		wait_for_completion(&sk->ss_ep.fence_done);
}

/**
 * smbd_qp_close() - close the gate and wait for the threads inside it
 * @sk: the socket; the caller drains the queue pair next
 *
 * Context: process; sleeps. Caller holds ss_ep.teardown_mutex.
 */
void smbd_qp_close(struct smbd_sock *sk)
{
	lockdep_assert_held(&sk->ss_ep.teardown_mutex);
	spin_lock_bh(&sk->ss_lock);
	sk->ss_ep.qp_closed = true;
	spin_unlock_bh(&sk->ss_lock);
	wait_event(sk->ss_res_wq, !READ_ONCE(sk->ss_ep.posting));
}
EXPORT_SYMBOL_IF_KUNIT(smbd_qp_close);

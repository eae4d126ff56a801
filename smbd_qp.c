// SPDX-License-Identifier: GPL-2.0
/*
 * smbd: the queue pair's gate and fence (Documentation/smbd.rst, "Posted
 * work").
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

/**
 * smbd_post_gated() - post a chain of send work requests through the gate
 * @sk: the socket
 * @first: the chain
 * @bad: set to the first request not posted, on error (@first when the
 *	gate was closed)
 *
 * For threads the teardown does not otherwise exclude (it holds
 * ss_send_mutex against senders): nothing is posted once the teardown
 * closed the gate.
 *
 * Context: process or softirq.
 * Return: 0, -ENOTCONN (or the connection's error) when closed, or the
 * post's error; on a post error part of the chain may be on the queue:
 * the caller fences (smbd_qp_fence()) before it frees what it names.
 */
int smbd_post_gated(struct smbd_sock *sk, struct ib_send_wr *first,
		    const struct ib_send_wr **bad)
{
	int ret;

	spin_lock_bh(&sk->ss_lock);
	if (sk->ss_ep.qp_closed) {
		ret = sk->ss_err ?: -ENOTCONN;
		spin_unlock_bh(&sk->ss_lock);
		*bad = first;
		return ret;
	}
	sk->ss_ep.posting++;
	spin_unlock_bh(&sk->ss_lock);
	ret = smbd_post_send(sk, first, bad);
	smbd_post_leave(sk);
	return ret;
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
		while ((ret = smbd_qp_post(sk, &wr.wr, NULL)) == -ENOMEM &&
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

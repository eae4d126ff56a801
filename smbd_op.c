// SPDX-License-Identifier: GPL-2.0
/*
 * smbd: threads that post and wait (registrations, invalidations, RDMA
 * read and write).
 *
 * A thread that posts work requests and waits for them holds a struct
 * smbd_op on ss_op_list for as long as it uses the queue pair. Teardown
 * drains the queue pair, completes every op still waiting (a provider
 * may lose completions of a dying queue pair), waits for the threads to
 * leave, and only then frees the MRs and the queue pair.
 */

#include <linux/errno.h>
#include <linux/slab.h>
#include <linux/uio.h>
#include <rdma/ib_verbs.h>

#include "smbd_internal.h"

static void smbd_op_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct smbd_op *op = container_of(wc->wr_cqe, struct smbd_op, op_cqe);
	struct smbd_sock *sk = cq->cq_context;

	spin_lock(&sk->ss_lock);
	if (wc->status != IB_WC_SUCCESS && !op->op_status)
		op->op_status = wc->status == IB_WC_WR_FLUSH_ERR ?
				-ECONNABORTED : -EIO;
	/* Every request's memory stays the waiter's until the last is done. */
	if (!op->op_finished && !--op->op_pending) {
		op->op_finished = true;
		complete(&op->op_done);
	}
	spin_unlock(&sk->ss_lock);
	if (wc->status != IB_WC_SUCCESS)
		smbd_wr_failed(sk, wc->status, "memory or RDMA work");
}

/**
 * smbd_op_start() - join ss_op_list if the connection is up
 * @sk: the socket
 * @op: the caller's op, on its stack
 *
 * Context: process.
 * Return: true when the thread may post; it must call smbd_op_end().
 */
bool smbd_op_start(struct smbd_sock *sk, struct smbd_op *op)
{
	bool ok;

	op->op_cqe.done = smbd_op_done;
	init_completion(&op->op_done);
	op->op_status = 0;
	op->op_pending = 1;
	op->op_finished = false;
	spin_lock_bh(&sk->ss_lock);
	ok = sk->ss_state == SMBD_CONNECTED;
	if (ok)
		list_add_tail(&op->op_node, &sk->ss_op_list);
	spin_unlock_bh(&sk->ss_lock);
	return ok;
}

/**
 * smbd_op_rearm() - ready @op for @n more signalled requests
 * @sk: the socket
 * @op: a started op whose earlier requests are all done
 * @n: how many signalled requests will complete it
 *
 * Context: process.
 */
void smbd_op_rearm(struct smbd_sock *sk, struct smbd_op *op, u32 n)
{
	spin_lock_bh(&sk->ss_lock);
	reinit_completion(&op->op_done);
	op->op_pending = n;
	op->op_finished = false;
	spin_unlock_bh(&sk->ss_lock);
}

/**
 * smbd_op_unposted() - some of @op's signalled requests were not posted
 * @sk: the socket
 * @op: the op
 * @n: how many will never complete
 * @err: what @op finishes with
 *
 * @op finishes once the posted ones have completed (flushed at worst:
 * the caller ends the connection).
 *
 * Context: process.
 */
void smbd_op_unposted(struct smbd_sock *sk, struct smbd_op *op, u32 n,
		      int err)
{
	spin_lock_bh(&sk->ss_lock);
	if (!op->op_status)
		op->op_status = err;
	op->op_pending -= min(n, op->op_pending);
	if (!op->op_finished && !op->op_pending) {
		op->op_finished = true;
		complete(&op->op_done);
	}
	spin_unlock_bh(&sk->ss_lock);
}

/**
 * smbd_op_wait() - wait until every request of @op is done
 * @op: a started op with requests posted
 *
 * Uninterruptible: the requests' memory stays the caller's until then.
 * Teardown completes a wait whose completions never came.
 *
 * Context: process; sleeps.
 * Return: 0, or the first error of its requests.
 */
int smbd_op_wait(struct smbd_op *op)
{
	/* The request is on the queue pair: its memory stays ours. */
	wait_for_completion(&op->op_done);
	return op->op_status;
}

/**
 * smbd_op_end() - leave ss_op_list: the thread no longer uses the queue pair
 * @sk: the socket
 * @op: a started op
 *
 * Context: process.
 */
void smbd_op_end(struct smbd_sock *sk, struct smbd_op *op)
{
	spin_lock_bh(&sk->ss_lock);
	list_del(&op->op_node);
	spin_unlock_bh(&sk->ss_lock);
	wake_up_all(&sk->ss_res_wq);
}

/**
 * smbd_ops_abort() - end every wait on a drained queue pair
 * @sk: a socket whose queue pair was drained and is not yet destroyed
 *
 * Completes the ops whose completion never came, then waits until every
 * thread has left ss_op_list (releasing its rdma_rw context needs the queue
 * pair).
 *
 * Context: process; caller holds ss_teardown_mutex.
 */
void smbd_ops_abort(struct smbd_sock *sk)
{
	struct smbd_op *op;

	lockdep_assert_held(&sk->ss_teardown_mutex);
	spin_lock_bh(&sk->ss_lock);
	list_for_each_entry(op, &sk->ss_op_list, op_node) {
		if (op->op_finished)
			continue;
		op->op_finished = true;
		op->op_status = -ECONNABORTED;
		complete(&op->op_done);
	}
	spin_unlock_bh(&sk->ss_lock);
	wake_up_all(&sk->ss_res_wq);
	wait_event(sk->ss_res_wq, list_empty_careful(&sk->ss_op_list));
}

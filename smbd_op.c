// SPDX-License-Identifier: GPL-2.0
/*
 * smbd: posted work (Documentation/smbd.rst, "Posted work"): the
 * threads that post and wait (registrations, invalidations, RDMA read
 * and write).
 *
 * The rule: a work request that reached the provider is accounted for
 * until its completion, or a completion ordered after it, has been seen,
 * whatever failed; the memory it names goes back to its owner only after
 * that. Three mechanisms keep it: the gate and the fence (smbd_qp.c says
 * what each is), and the ops, here. A thread waiting for its own
 * signalled requests holds a struct smbd_op on ss_op_list from
 * smbd_op_start() to smbd_op_end(); its count of pending requests covers
 * every signalled request that was posted, so only their completions (or
 * a fence or the teardown, once nothing posted before is running) wake
 * it. The op is not the thread's: a completion may name it after a fence
 * gave the wait up (siw delivers some after the error state), or twice
 * (siw flushes a queued RDMA Read from two places), so an op whose
 * requests did not all complete, or one of which completed in error,
 * lives on, as an orphan, until the completion queue is gone.
 */

#include <kunit/visibility.h>
#include <linux/errno.h>
#include <linux/slab.h>
#include <linux/uio.h>
#include <rdma/ib_verbs.h>

#include "smbd_internal.h"

static void smbd_op_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct smbd_op *op = container_of(wc->wr_cqe, struct smbd_op,
					  op_cqe.cqe);
	struct smbd_sock *sk = cq->cq_context;
	enum ib_wc_status status = smbd_wc_begin(cq, wc, false);
	bool orphan;

	spin_lock_bh(&sk->ss_lock);
	/* Live: not freed, not reused (the op outlives its completions). */
	if (WARN_ONCE(op->op_magic != SMBD_OP_LIVE,
		      "smbd: completion for an op that is gone (magic %#x)\n",
		      op->op_magic)) {
		spin_unlock_bh(&sk->ss_lock);
		return;
	}
	if (status != IB_WC_SUCCESS)
		op->op_errored = true;
	if (!op->op_posted) {
		/*
		 * One completion more than was posted. siw flushes an RDMA
		 * Read that it had queued but not sent twice, from its
		 * outbound read queue and from its send slot: a flush, on a
		 * connection already failing, whose op is kept to the end.
		 * A success here would be a provider's or our own bug.
		 */
		WARN_ONCE(status == IB_WC_SUCCESS,
			  "smbd: connection %u: a completion beyond those posted\n",
			  sk->ss_id);
		spin_unlock_bh(&sk->ss_lock);
		return;
	}
	op->op_posted--;
	orphan = op->op_orphan;
	if (!orphan && op->op_pending) {
		/* Zero after a fence gave the wait up (smbd_ops_abandon()). */
		if (status != IB_WC_SUCCESS && !op->op_status)
			op->op_status = status == IB_WC_WR_FLUSH_ERR ?
					-ECONNABORTED : -EIO;
		/* Every request's memory stays the waiter's to the last. */
		if (!--op->op_pending && !op->op_finished) {
			op->op_finished = true;
			complete(&op->op_done);
		}
	}
	spin_unlock_bh(&sk->ss_lock);
	/* An orphan's thread has left after a fence: the connection failed. */
	if (!orphan && status != IB_WC_SUCCESS)
		smbd_wr_failed(sk, status, "memory or RDMA work");
}

/**
 * smbd_op_start() - join ss_op_list while the queue pair is there
 * @sk: the socket
 * @connected: only on a connected socket (else: any socket whose
 *	teardown has not closed the gate, to invalidate and fence)
 * @gfp: allocation flags of the op
 *
 * Context: process.
 * Return: the op, for smbd_op_post() and smbd_op_wait(); the thread must
 * call smbd_op_end(). ERR_PTR(-ENOMEM), or of -ENOTCONN or the
 * connection's error when the gate is closed (or, with @connected, the
 * socket is not connected).
 */
struct smbd_op *smbd_op_start(struct smbd_sock *sk, bool connected,
			      gfp_t gfp)
{
	struct smbd_op *op, *spare = NULL;
	int err;

	/*
	 * One that ended on this socket, else a new one. One allocated
	 * while the lock was dropped is used even if another thread has
	 * kept one meanwhile: nothing else would free it.
	 */
	for (;;) {
		spin_lock_bh(&sk->ss_lock);
		if (sk->ss_ep.qp_closed || !sk->ss_ep.qp ||
		    (connected && sk->ss_state != SMBD_CONNECTED)) {
			err = sk->ss_err ?: -ENOTCONN;
			spin_unlock_bh(&sk->ss_lock);
			kfree(spare);
			return ERR_PTR(err);
		}
		if (spare) {
			op = spare;
			break;
		}
		op = list_first_entry_or_null(&sk->ss_op_cache, struct smbd_op,
					      op_node);
		if (op) {
			list_del(&op->op_node);
			sk->ss_op_cached--;
			break;
		}
		spin_unlock_bh(&sk->ss_lock);
		spare = kmalloc(sizeof(*spare), gfp);
		if (!spare)
			return ERR_PTR(-ENOMEM);
	}
	smbd_cqe_init(sk, &op->op_cqe, SMBD_WC_OP, smbd_op_done);
	init_completion(&op->op_done);
	op->op_status = 0;
	op->op_pending = 0;
	op->op_posted = 0;
	op->op_finished = true;
	op->op_orphan = false;
	op->op_errored = false;
	op->op_magic = SMBD_OP_LIVE;
	list_add_tail(&op->op_node, &sk->ss_op_list);
	spin_unlock_bh(&sk->ss_lock);
	return op;
}
EXPORT_SYMBOL_IF_KUNIT(smbd_op_start);

/* The signalled requests of @op in the chain from @first up to @bad. */
static u32 smbd_op_signalled(const struct smbd_op *op,
			     const struct ib_send_wr *first,
			     const struct ib_send_wr *bad)
{
	const struct ib_send_wr *wr;
	u32 n = 0;

	for (wr = first; wr && wr != bad; wr = wr->next)
		if (wr->wr_cqe == &op->op_cqe.cqe &&
		    wr->send_flags & IB_SEND_SIGNALED)
			n++;
	return n;
}

/**
 * smbd_op_post() - post a chain whose signalled requests complete @op
 * @sk: the socket
 * @op: a started op whose earlier requests are all done
 * @first: the chain; the requests @op waits for carry &op->op_cqe and
 *	IB_SEND_SIGNALED
 *
 * Through the gate, and only while connected. @op then counts exactly
 * the signalled requests that were posted. A chain refused, whole or in
 * part, ends the connection and records the error in @op; the caller's
 * smbd_op_wait() fences before it returns.
 *
 * Context: process.
 */
void smbd_op_post(struct smbd_sock *sk, struct smbd_op *op,
		  struct ib_send_wr *first)
{
	u32 nsig = smbd_op_signalled(op, first, NULL);
	const struct ib_send_wr *bad = NULL;
	int ret = 0;

	spin_lock_bh(&sk->ss_lock);
	reinit_completion(&op->op_done);
	if (sk->ss_ep.qp_closed || sk->ss_state != SMBD_CONNECTED) {
		/* Nothing posted: the wait returns at once, and fences. */
		if (!op->op_status)
			op->op_status = sk->ss_err ?: -ENOTCONN;
		nsig = 0;
	}
	op->op_pending = nsig;
	op->op_posted += nsig;
	op->op_finished = !nsig;
	if (!nsig) {
		complete(&op->op_done);
		spin_unlock_bh(&sk->ss_lock);
		return;
	}
	sk->ss_ep.posting++;
	spin_unlock_bh(&sk->ss_lock);

	ret = smbd_post(sk, first, &bad, SMBD_POST_ENTERED);
	if (ret) {
		u32 went = smbd_op_signalled(op, first, bad);

		spin_lock_bh(&sk->ss_lock);
		if (!op->op_status)
			op->op_status = ret;
		/*
		 * A fence may have given the wait up meanwhile (the part
		 * that went failed, or another thread's fence completed):
		 * smbd_ops_abandon() left nothing pending to take back.
		 */
		op->op_pending -= min(op->op_pending, nsig - went);
		/* Completions counted twice may have taken some already. */
		op->op_posted -= min(op->op_posted, nsig - went);
		if (!op->op_pending && !op->op_finished) {
			op->op_finished = true;
			complete(&op->op_done);
		}
		spin_unlock_bh(&sk->ss_lock);
	}
	smbd_post_leave(sk);
	if (ret)
		smbd_sock_error(sk, ret);
}
EXPORT_SYMBOL_IF_KUNIT(smbd_op_post);

/**
 * smbd_op_wait() - wait until every posted request of @op is done
 * @sk: the socket
 * @op: a started op
 *
 * Uninterruptible: the requests' memory stays the caller's until then.
 * On any failure the queue pair is fenced (smbd_qp_fence()) first, so
 * that no request of the caller's, signalled or not, is still running
 * and no MR of its is reachable when this returns. The teardown
 * completes a wait whose completions never came, after its drain.
 *
 * Context: process; sleeps.
 * Return: 0, or the first error of its requests or of their posting.
 */
int smbd_op_wait(struct smbd_sock *sk, struct smbd_op *op)
{
	wait_for_completion(&op->op_done);
	if (READ_ONCE(op->op_status))
		smbd_qp_fence(sk);
	return op->op_status;
}
EXPORT_SYMBOL_IF_KUNIT(smbd_op_wait);

/**
 * smbd_op_end() - leave ss_op_list: the thread no longer uses the queue pair
 * @sk: the socket
 * @op: a started op, with nothing pending; the thread's no more
 *
 * When every request it counted completed and none in error, the op is
 * kept for the socket's next thread (up to %SMBD_OP_CACHE of them, freed
 * with the socket) or freed. Else completions may still name it: those a
 * fence gave up, and those a provider makes twice when it flushes (siw);
 * it is left on ss_op_orphans until the completion queue is gone.
 *
 * Context: process.
 */
void smbd_op_end(struct smbd_sock *sk, struct smbd_op *op)
{
	spin_lock_bh(&sk->ss_lock);
	WARN_ON_ONCE(op->op_pending);
	list_del(&op->op_node);
	if (op->op_posted || op->op_errored) {
		op->op_orphan = true;
		list_add_tail(&op->op_node, &sk->ss_op_orphans);
		op = NULL;
	} else if (sk->ss_op_cached < SMBD_OP_CACHE) {
		/* No completion names it any more: the next thread's. */
		op->op_magic = SMBD_OP_DEAD;
		list_add(&op->op_node, &sk->ss_op_cache);
		sk->ss_op_cached++;
		op = NULL;
	}
	spin_unlock_bh(&sk->ss_lock);
	smbd_wake_all(&sk->ss_res_wq);
	if (op) {
		op->op_magic = SMBD_OP_DEAD;
		kfree(op);
	}
}
EXPORT_SYMBOL_IF_KUNIT(smbd_op_end);

/**
 * smbd_ops_abandon() - end the waits whose completions will never come
 * @sk: a socket whose queue pair is drained or fenced: nothing posted
 *	before is running any more
 *
 * A provider may deliver the completions of a dying queue pair late, or
 * not at all (siw, after the error state): every op still waiting
 * finishes, with its first error or -ECONNABORTED. A completion that
 * still comes for one finds nothing pending, or an orphan (smbd_op_end()),
 * and only counts.
 *
 * Context: any; caller holds ss_lock.
 */
void smbd_ops_abandon(struct smbd_sock *sk)
{
	struct smbd_op *op;

	lockdep_assert_held(&sk->ss_lock);
	list_for_each_entry(op, &sk->ss_op_list, op_node) {
		op->op_pending = 0;
		if (op->op_finished)
			continue;
		op->op_finished = true;
		if (!op->op_status)
			op->op_status = -ECONNABORTED;
		complete(&op->op_done);
	}
}

/**
 * smbd_ops_abort() - end every wait on a drained queue pair
 * @sk: a socket whose gate is closed and whose queue pair was drained
 *	(or never made); not yet destroyed
 *
 * Nothing can complete any more: completes the ops whose completion
 * never came and the fence, then waits until every thread has left
 * ss_op_list (releasing its rdma_rw context needs the queue pair).
 *
 * Context: process; sleeps. Caller holds ss_ep.teardown_mutex.
 */
void smbd_ops_abort(struct smbd_sock *sk)
{
	lockdep_assert_held(&sk->ss_ep.teardown_mutex);
	spin_lock_bh(&sk->ss_lock);
	WARN_ON_ONCE(!sk->ss_ep.qp_closed || sk->ss_ep.posting);
	smbd_ops_abandon(sk);
	spin_unlock_bh(&sk->ss_lock);
	complete_all(&sk->ss_ep.fence_done);
	wake_up_all(&sk->ss_res_wq);
	wait_event(sk->ss_res_wq, list_empty_careful(&sk->ss_op_list));
}

/**
 * smbd_ops_take_orphans() - take the ops left for completions to come
 * @sk: a socket whose queue pair is destroyed: no completion names an op
 *	any more, but the send completion queue may not be freed yet
 * @to: the list they move to, freed by smbd_ops_free_list() once the
 *	send completion queue is
 *
 * Context: process. Caller holds ss_ep.teardown_mutex or ss_ep.cm_mutex.
 */
void smbd_ops_take_orphans(struct smbd_sock *sk, struct list_head *to)
{
	lockdep_assert(lockdep_is_held(&sk->ss_ep.cm_mutex) ||
		       lockdep_is_held(&sk->ss_ep.teardown_mutex));
	spin_lock_bh(&sk->ss_lock);
	list_splice_init(&sk->ss_op_orphans, to);
	spin_unlock_bh(&sk->ss_lock);
}

/**
 * smbd_ops_free_list() - free ops taken by smbd_ops_take_orphans()
 * @ops: the list; its send completion queue is freed
 *
 * Context: any.
 */
void smbd_ops_free_list(struct list_head *ops)
{
	struct smbd_op *op, *next;

	list_for_each_entry_safe(op, next, ops, op_node) {
		list_del(&op->op_node);
		op->op_magic = SMBD_OP_DEAD;
		kfree(op);
	}
}

/**
 * smbd_ops_free_orphans() - free the ops whose completions never came
 * @sk: a socket whose send completion queue is freed: nothing can name
 *	an op any more
 *
 * Context: process. Caller holds ss_ep.teardown_mutex or ss_ep.cm_mutex.
 */
void smbd_ops_free_orphans(struct smbd_sock *sk)
{
	LIST_HEAD(gone);

	WARN_ON_ONCE(sk->ss_ep.send_cq);
	smbd_ops_take_orphans(sk, &gone);
	smbd_ops_free_list(&gone);
}
EXPORT_SYMBOL_IF_KUNIT(smbd_ops_free_orphans);

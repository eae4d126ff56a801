// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: the lifetime rule of posted work (Documentation/smbd.rst,
 * "Posted work"; smbd_op.c), on a socket whose queue pair is a fake
 * (struct smbd_fake_qp). The fake records what is posted and takes a
 * chain only up to a chosen request, as a provider with a full queue
 * does; the cases deliver the completions themselves, in the order a
 * provider may: late, in error, or never.
 */
#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/spinlock.h>
#include <net/net_namespace.h>
#include <rdma/ib_verbs.h>

#include "smbd_internal.h"

#define OPK_MAX_WRS	8

/* The fake queue pair; the cases run one at a time. */
struct opk_fake {
	spinlock_t lock;		/* posts come from several threads */
	int accept;			/* requests taken before refusing; -1 all */
	u32 taken;			/* requests taken, fence marker included */
	u32 op_wrs;			/* of them, the cases' own */
	bool errored;			/* moved to the error state */
	int to_error_ret;		/* the move to the error state fails */
	bool marker;			/* the fence's marker was taken */
	u32 marker_tries;		/* posts of the marker */
	int marker_refusals;		/* refused before it is taken; -1 all */
	int marker_ret;			/* with this error */
	/* a fence's marker completes while the refused post returns */
	struct opk_ctx *fence_on_refusal;
	/* and these flushes of its op's requests, before it */
	struct opk_ctx *flush_on_refusal;
	u32 flushes_on_refusal;
	/* the last RDMA Write taken, and its first gather entry */
	struct ib_rdma_wr wr;
	struct ib_sge sge;
};

static struct opk_fake opk;

static void opk_complete(struct opk_ctx *c, struct ib_cqe *cqe,
			 enum ib_wc_status status);
static void opk_flush_op(struct opk_ctx *c, u32 n);

static int opk_post_send(struct smbd_sock *sk, const struct ib_send_wr *first,
			 const struct ib_send_wr **bad)
{
	struct opk_ctx *fence, *flush;
	const struct ib_send_wr *wr;
	u32 flushes;
	int ret = 0;

	spin_lock(&opk.lock);
	for (wr = first; wr; wr = wr->next) {
		if (wr->wr_cqe == &sk->ss_ep.fence_cqe.cqe) {
			opk.marker_tries++;
			if (opk.marker_refusals) {
				if (opk.marker_refusals > 0)
					opk.marker_refusals--;
				if (bad)
					*bad = wr;
				ret = opk.marker_ret;
				break;
			}
		}
		if (opk.accept >= 0 && opk.taken >= opk.accept) {
			if (bad)
				*bad = wr;
			ret = -ENOMEM;
			break;
		}
		opk.taken++;
		if (wr->wr_cqe == &sk->ss_ep.fence_cqe.cqe)
			opk.marker = true;
		else
			opk.op_wrs++;
		/*
		 * The cases' own chains are bare requests, not RDMA ones;
		 * the fence's marker is an RDMA Write of nothing.
		 */
		if (wr->opcode == IB_WR_RDMA_WRITE && wr->num_sge) {
			opk.wr = *rdma_wr(wr);
			opk.wr.wr.next = NULL;
			opk.sge = wr->sg_list[0];
		}
	}
	fence = ret ? opk.fence_on_refusal : NULL;
	opk.fence_on_refusal = NULL;
	flush = ret ? opk.flush_on_refusal : NULL;
	flushes = flush ? opk.flushes_on_refusal : 0;
	opk.flush_on_refusal = NULL;
	spin_unlock(&opk.lock);
	if (flush)
		opk_flush_op(flush, flushes);
	if (fence)
		opk_complete(fence, &sk->ss_ep.fence_cqe.cqe, IB_WC_WR_FLUSH_ERR);
	return ret;
}

static int opk_to_error(struct smbd_sock *sk)
{
	int ret;

	spin_lock(&opk.lock);
	ret = opk.to_error_ret;
	if (!ret) {
		opk.errored = true;
		/* Only the cases' requests are limited, not the marker. */
		opk.accept = -1;
	}
	spin_unlock(&opk.lock);
	return ret;
}

/* The event work tells the peer when a case ends the connection. */
static void opk_disconnect(struct smbd_sock *sk)
{
}

/* No receive, drain or teardown: the cases free the socket themselves. */
static const struct smbd_fake_qp opk_qp = {
	.post_send = opk_post_send,
	.to_error = opk_to_error,
	.disconnect = opk_disconnect,
};

/* Never dereferenced: the fake stands in for every use. */
static struct ib_qp opk_ib_qp;

struct opk_ctx {
	struct smbd_sock *sk;
	struct ib_cq cq;		/* only cq_context is read */
	struct smbd_op *op;
	struct ib_send_wr wr[OPK_MAX_WRS];
	struct completion waited;	/* the waiter thread has ended */
	bool started;
	bool reaped;			/* and its completion was taken */
	bool ended;			/* smbd_op_end() ran */
	int ret;
};

/* A connected socket on the fake queue pair. */
static struct opk_ctx *opk_setup(struct kunit *test, int accept)
{
	struct smbd_params params;
	struct opk_ctx *c;

	memset(&opk, 0, sizeof(opk));
	spin_lock_init(&opk.lock);
	opk.accept = accept;
	c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, c);
	smbd_params_init(&params, false);
	c->sk = smbd_sock_alloc(&init_net, &params, false);
	KUNIT_ASSERT_NOT_NULL(test, c->sk);
	c->sk->ss_ep.fake = &opk_qp;
	c->sk->ss_ep.qp = &opk_ib_qp;
	spin_lock_bh(&c->sk->ss_lock);
	c->sk->ss_state = SMBD_CONNECTED;
	spin_unlock_bh(&c->sk->ss_lock);
	c->cq.cq_context = c->sk;
	init_completion(&c->waited);
	test->priv = c;
	return c;
}

/* The socket gone: its event work (a fence) finished first. */
static void opk_release_waiter(struct opk_ctx *c, u32 nwr);

static void opk_exit(struct kunit *test)
{
	struct opk_ctx *c = test->priv;

	if (!c || !c->sk)
		return;
	opk_release_waiter(c, OPK_MAX_WRS);
	if (c->op && !c->ended)
		smbd_op_end(c->sk, c->op);
	mutex_lock(&c->sk->ss_ep.teardown_mutex);
	smbd_ops_free_orphans(c->sk);
	mutex_unlock(&c->sk->ss_ep.teardown_mutex);
	flush_work(&c->sk->ss_disconnect_work);
	/* The posted-write cases' slots (the buffers' only ones here). */
	if (c->sk->ss_rdma.wslots)
		smbd_xfer_free(c->sk);
	c->sk->ss_ep.ibdev = NULL;
	c->sk->ss_ep.pd = NULL;
	c->sk->ss_ep.qp = NULL;
	smbd_sock_free(c->sk);
	c->sk = NULL;
}

/* Requests 0..n-1 chained, for c->op; @sig says which are signalled. */
static void opk_chain(struct opk_ctx *c, u32 n, u32 sig)
{
	u32 i;

	for (i = 0; i < n; i++) {
		c->wr[i] = (struct ib_send_wr) {
			.wr_cqe = &c->op->op_cqe.cqe,
			.opcode = IB_WR_RDMA_READ,
			.send_flags = sig & BIT(i) ? IB_SEND_SIGNALED : 0,
			.next = i + 1 < n ? &c->wr[i + 1] : NULL,
		};
	}
}

/* A completion as the CQ's poller delivers it. */
static void opk_complete(struct opk_ctx *c, struct ib_cqe *cqe,
			 enum ib_wc_status status)
{
	struct ib_wc wc = { .wr_cqe = cqe, .status = status };

	local_bh_disable();
	cqe->done(&c->cq, &wc);
	local_bh_enable();
}

/* @n flushes of c->op's requests. */
static void opk_flush_op(struct opk_ctx *c, u32 n)
{
	while (n--)
		opk_complete(c, &c->op->op_cqe.cqe, IB_WC_WR_FLUSH_ERR);
}

static int opk_waiter(void *arg)
{
	struct opk_ctx *c = arg;

	smbd_op_post(c->sk, c->op, &c->wr[0]);
	c->ret = smbd_op_wait(c->sk, c->op);
	/* No code of this module's after: it may be unloaded. */
	kthread_complete_and_exit(&c->waited, 0);
}

/* A thread posts c->wr and waits, as smbd_rdma_read() does. */
static void opk_wait_start(struct kunit *test, struct opk_ctx *c)
{
	struct task_struct *t = kthread_run(opk_waiter, c, "smbd_opk");

	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	c->started = true;
}

static void opk_end(struct opk_ctx *c)
{
	smbd_op_end(c->sk, c->op);
	c->ended = true;
}

/* Has the waiter returned, within @timeout? */
static bool opk_waited(struct opk_ctx *c, unsigned long timeout)
{
	if (!c->reaped && c->started)
		c->reaped = wait_for_completion_timeout(&c->waited, timeout);
	return c->reaped;
}

static bool opk_marker(void)
{
	bool m;

	spin_lock(&opk.lock);
	m = opk.marker;
	spin_unlock(&opk.lock);
	return m;
}

/* Poll for a second until the cases' requests taken are @n. */
static bool opk_until_wrs(u32 n)
{
	int i;

	for (i = 0; i < 100 && READ_ONCE(opk.op_wrs) != n; i++)
		usleep_range(10000, 11000);
	return READ_ONCE(opk.op_wrs) == n;
}

/* Poll for a second until the fence's marker was taken. */
static bool opk_until_marker(void)
{
	int i;

	for (i = 0; i < 100 && !opk_marker(); i++)
		usleep_range(10000, 11000);
	return opk_marker();
}

/*
 * Whatever a failed case left: the waiter released with flushes of
 * every request it may wait for and the marker, so it cannot outlive
 * the case.
 */
static void opk_release_waiter(struct opk_ctx *c, u32 nwr)
{
	u32 i;

	if (!c->started || opk_waited(c, 0))
		return;
	for (i = 0; i < nwr; i++)
		if (c->wr[i].send_flags & IB_SEND_SIGNALED)
			opk_complete(c, &c->op->op_cqe.cqe, IB_WC_WR_FLUSH_ERR);
	opk_complete(c, &c->sk->ss_ep.fence_cqe.cqe, IB_WC_WR_FLUSH_ERR);
	wait_for_completion(&c->waited);
	c->reaped = true;
}

/*
 * The fence's marker completes, in the queue's order after the case's
 * requests: the thread returns @ret, and its op, which saw an error, is
 * kept for completions still to come, with nothing counted.
 */
static void opk_fenced_kept(struct kunit *test, struct opk_ctx *c, int ret)
{
	opk_complete(c, &c->sk->ss_ep.fence_cqe.cqe, IB_WC_WR_FLUSH_ERR);
	KUNIT_ASSERT_TRUE(test, opk_waited(c, 5 * HZ));
	KUNIT_EXPECT_EQ(test, c->ret, ret);
	opk_end(c);
	KUNIT_ASSERT_FALSE(test, list_empty_careful(&c->sk->ss_op_orphans));
	/* Completions may still name it: not kept for another thread. */
	KUNIT_EXPECT_EQ(test, c->sk->ss_op_cached, 0);
	KUNIT_EXPECT_EQ(test, c->op->op_posted, 0U);
}

/*
 * [MS-SMBD] 3.1.4.4 and the reliability audit's finding 2: a chain the
 * provider takes in part leaves an unsignalled request on the queue
 * that no completion reports. The waiter must not return (and hand its
 * pages back) when the signalled requests before the refused one are
 * done, only once the fence's marker shows the queue ran past it.
 */
static void smbd_op_partial_post_fences(struct kunit *test)
{
	struct opk_ctx *c = opk_setup(test, 3);

	c->op = smbd_op_start(c->sk, true, GFP_KERNEL);
	KUNIT_ASSERT_FALSE(test, IS_ERR(c->op));
	/* u s u s: the provider takes the first three. */
	opk_chain(c, 4, BIT(1) | BIT(3));
	opk_wait_start(test, c);
	KUNIT_ASSERT_TRUE(test, opk_until_wrs(3));
	/* The signalled request that went is done. */
	opk_complete(c, &c->op->op_cqe.cqe, IB_WC_SUCCESS);
	/* The unsignalled one after it may still run: no return yet. */
	KUNIT_EXPECT_FALSE(test, opk_waited(c, HZ / 2));
	KUNIT_EXPECT_TRUE(test, opk_until_marker());
	KUNIT_EXPECT_TRUE(test, READ_ONCE(opk.errored));
	/* The marker: everything before it is done. */
	if (!c->reaped) {
		opk_complete(c, &c->sk->ss_ep.fence_cqe.cqe, IB_WC_WR_FLUSH_ERR);
		KUNIT_EXPECT_TRUE(test, opk_waited(c, 5 * HZ));
	}
	opk_release_waiter(c, 0);
	KUNIT_EXPECT_EQ(test, c->ret, -ENOMEM);
	opk_end(c);
}

/*
 * The reliability re-audit's R4: a chain taken in part while a fence
 * completes (another thread's, or the event work's). The fence gives the
 * wait up (smbd_ops_abandon() leaves nothing pending); taking back the
 * requests that did not go must not wrap the count below zero, where
 * smbd_op_end() warns and the op would wait for 4 billion completions.
 */
static void smbd_op_partial_post_under_fence(struct kunit *test)
{
	struct opk_ctx *c = opk_setup(test, 1);

	c->op = smbd_op_start(c->sk, true, GFP_KERNEL);
	KUNIT_ASSERT_FALSE(test, IS_ERR(c->op));
	/* s s s: the provider takes the first, the fence lands at once. */
	opk_chain(c, 3, BIT(0) | BIT(1) | BIT(2));
	opk.fence_on_refusal = c;
	smbd_op_post(c->sk, c->op, &c->wr[0]);
	KUNIT_EXPECT_EQ(test, READ_ONCE(opk.op_wrs), 1U);
	spin_lock_bh(&c->sk->ss_lock);
	KUNIT_EXPECT_EQ(test, c->op->op_pending, 0U);
	KUNIT_EXPECT_EQ(test, c->op->op_posted, 1U);
	KUNIT_EXPECT_TRUE(test, c->op->op_finished);
	spin_unlock_bh(&c->sk->ss_lock);
	KUNIT_EXPECT_EQ(test, smbd_op_wait(c->sk, c->op), -ECONNABORTED);
	/* The request that went still completes, and is counted. */
	opk_complete(c, &c->op->op_cqe.cqe, IB_WC_WR_FLUSH_ERR);
	spin_lock_bh(&c->sk->ss_lock);
	KUNIT_EXPECT_EQ(test, c->op->op_posted, 0U);
	KUNIT_EXPECT_EQ(test, c->op->op_pending, 0U);
	spin_unlock_bh(&c->sk->ss_lock);
	opk_end(c);
}

/*
 * A chain taken in part, and the one request that went is flushed twice
 * (siw, as in smbd_op_flushed_twice below) before its poster takes back
 * the requests that did not go. The doubled flush already took one of
 * those from the count of posted requests: it must stop at zero, not
 * wrap to wait for 4 billion completions.
 */
static void smbd_op_partial_post_flushed_twice(struct kunit *test)
{
	struct opk_ctx *c = opk_setup(test, 1);
	struct smbd_op *op;

	c->op = smbd_op_start(c->sk, true, GFP_KERNEL);
	KUNIT_ASSERT_FALSE(test, IS_ERR(c->op));
	op = c->op;
	/* s s s: the provider takes the first, and flushes it twice. */
	opk_chain(c, 3, BIT(0) | BIT(1) | BIT(2));
	opk.flush_on_refusal = c;
	opk.flushes_on_refusal = 2;
	opk_wait_start(test, c);
	KUNIT_ASSERT_TRUE(test, opk_until_marker());
	spin_lock_bh(&c->sk->ss_lock);
	KUNIT_EXPECT_EQ(test, op->op_posted, 0U);
	KUNIT_EXPECT_EQ(test, op->op_pending, 0U);
	KUNIT_EXPECT_TRUE(test, op->op_errored);
	spin_unlock_bh(&c->sk->ss_lock);
	/* In error: the thread returns after the marker, not before. */
	KUNIT_EXPECT_FALSE(test, opk_waited(c, HZ / 4));
	/* The flush came first: the request's error, not the post's. */
	opk_fenced_kept(test, c, -ECONNABORTED);
}

/* The connection ends; its event work moves the queue pair and fences. */
static void opk_end_connection(struct opk_ctx *c)
{
	smbd_sock_error(c->sk, -ECONNRESET);
	flush_work(&c->sk->ss_disconnect_work);
}

/*
 * The re-audit's R1: the fence is the marker on a queue pair in the error
 * state, where the peer reaches none of the MRs ([MS-SMBD] 3.1.4.4). When
 * the queue pair does not go there, a marker would complete on a live one
 * and say "fenced" while the peer can still write: nothing is posted, and
 * waits end only with the teardown's drain.
 */
static void smbd_op_fence_needs_error_state(struct kunit *test)
{
	struct opk_ctx *c = opk_setup(test, -1);

	opk.to_error_ret = -EIO;
	opk_end_connection(c);
	KUNIT_EXPECT_EQ(test, READ_ONCE(opk.marker_tries), 0U);
	KUNIT_EXPECT_FALSE(test, opk_marker());
	KUNIT_EXPECT_EQ(test, READ_ONCE(c->sk->ss_ep.fence_err), -EIO);
	KUNIT_EXPECT_FALSE(test, completion_done(&c->sk->ss_ep.fence_done));
}

/*
 * R1 again: a provider that refuses every post after a fatal error (mlx5
 * and mlx4 return -EIO) refuses the marker for good. It is tried once,
 * not for seconds, and with no warning (a panic under panic_on_warn);
 * a marker refused for want of room is tried until the queue flushed.
 */
static void smbd_op_fence_refused(struct kunit *test)
{
	struct opk_ctx *c = opk_setup(test, -1);
	unsigned long t0 = jiffies;

	opk.marker_refusals = -1;
	opk.marker_ret = -EIO;
	opk_end_connection(c);
	KUNIT_EXPECT_LT(test, jiffies_to_msecs(jiffies - t0), 1000U);
	KUNIT_EXPECT_EQ(test, READ_ONCE(opk.marker_tries), 1U);
	KUNIT_EXPECT_TRUE(test, READ_ONCE(opk.errored));
	KUNIT_EXPECT_EQ(test, READ_ONCE(c->sk->ss_ep.fence_err), -EIO);
	KUNIT_EXPECT_FALSE(test, completion_done(&c->sk->ss_ep.fence_done));
	opk_exit(test);

	c = opk_setup(test, -1);
	opk.marker_refusals = 3;
	opk.marker_ret = -ENOMEM;
	opk_end_connection(c);
	KUNIT_EXPECT_EQ(test, READ_ONCE(opk.marker_tries), 4U);
	KUNIT_EXPECT_TRUE(test, opk_marker());
	KUNIT_EXPECT_EQ(test, READ_ONCE(c->sk->ss_ep.fence_err), 0);
}

/*
 * A waiter on two signalled requests whose first fails: the connection
 * ends and its event work fences; returns once the marker is out.
 */
static struct opk_ctx *opk_first_fails(struct kunit *test)
{
	struct opk_ctx *c = opk_setup(test, -1);

	c->op = smbd_op_start(c->sk, true, GFP_KERNEL);
	KUNIT_ASSERT_FALSE(test, IS_ERR(c->op));
	opk_chain(c, 2, BIT(0) | BIT(1));
	opk_wait_start(test, c);
	KUNIT_ASSERT_TRUE(test, opk_until_wrs(2));
	opk_complete(c, &c->op->op_cqe.cqe, IB_WC_REM_ACCESS_ERR);
	KUNIT_ASSERT_TRUE(test, opk_until_marker());
	return c;
}

/*
 * Issue 40, a device that dies: mlx5 in its internal-error state raises
 * IB_EVENT_DEVICE_FATAL, refuses every post and may complete nothing
 * more. A thread waiting for an RDMA read (a ksmbd worker) or for the
 * fence must return within seconds, with an error, and nothing is posted
 * to the device after (not the fence's marker either).
 */
static void smbd_op_dead_device(struct kunit *test)
{
	struct opk_ctx *c = opk_setup(test, -1);
	const struct ib_send_wr *bad = NULL;
	struct ib_send_wr wr = {};

	c->op = smbd_op_start(c->sk, true, GFP_KERNEL);
	KUNIT_ASSERT_FALSE(test, IS_ERR(c->op));
	opk_chain(c, 2, BIT(1));
	opk_wait_start(test, c);
	KUNIT_ASSERT_TRUE(test, opk_until_wrs(2));
	/* No completion ever comes. */
	smbd_sock_dead(c->sk);
	/* Else the exit releases the waiter before its op goes. */
	KUNIT_ASSERT_TRUE(test, opk_waited(c, HZ));
	KUNIT_EXPECT_EQ(test, c->ret, -ECONNABORTED);
	flush_work(&c->sk->ss_disconnect_work);
	KUNIT_EXPECT_EQ(test, READ_ONCE(c->sk->ss_err), -EIO);
	KUNIT_EXPECT_EQ(test, READ_ONCE(opk.marker_tries), 0U);
	KUNIT_EXPECT_FALSE(test, READ_ONCE(opk.errored));
	/* Nothing reaches the device any more. */
	KUNIT_EXPECT_EQ(test, smbd_qp_post(c->sk, &wr, &bad), -EIO);
	KUNIT_EXPECT_PTR_EQ(test, bad, (const struct ib_send_wr *)&wr);
	KUNIT_EXPECT_EQ(test, READ_ONCE(opk.op_wrs), 2U);
	/* The fence is given: later failures do not wait (no wait here). */
	KUNIT_EXPECT_TRUE(test, completion_done(&c->sk->ss_ep.fence_done));
	opk_end(c);
	/* Still counted, for a completion the provider may make up. */
	KUNIT_EXPECT_FALSE(test, list_empty_careful(&c->sk->ss_op_orphans));
}

/*
 * The same when the connection had ended before and its fence's marker
 * is out: the device will never complete it; the waiters for it return.
 */
static void smbd_op_dead_device_marker_out(struct kunit *test)
{
	struct opk_ctx *c = opk_first_fails(test);

	/* The waiter waits on the fence. */
	KUNIT_EXPECT_FALSE(test, opk_waited(c, HZ / 4));
	smbd_sock_dead(c->sk);
	KUNIT_ASSERT_TRUE(test, opk_waited(c, HZ));
	KUNIT_EXPECT_EQ(test, c->ret, -EIO);
	opk_end(c);
}

/*
 * Finding 1: a thread that started while connected but posts only after
 * the teardown closed the gate (and drained the queue pair) must post
 * nothing: the flush of such a request would come after the waits were
 * ended, or never.
 */
static void smbd_op_no_post_after_close(struct kunit *test)
{
	struct opk_ctx *c = opk_setup(test, -1);

	c->op = smbd_op_start(c->sk, true, GFP_KERNEL);
	KUNIT_ASSERT_FALSE(test, IS_ERR(c->op));
	opk_chain(c, 2, BIT(1));
	/* The connection ends, and the teardown closes the gate... */
	smbd_sock_error(c->sk, -ECONNRESET);
	flush_work(&c->sk->ss_disconnect_work);
	mutex_lock(&c->sk->ss_ep.teardown_mutex);
	smbd_qp_close(c->sk);
	mutex_unlock(&c->sk->ss_ep.teardown_mutex);
	/* ... and its drain stands in for the fence. */
	complete_all(&c->sk->ss_ep.fence_done);
	/* Only now does the thread post. */
	opk_wait_start(test, c);
	KUNIT_EXPECT_TRUE(test, opk_waited(c, 5 * HZ));
	KUNIT_EXPECT_EQ(test, READ_ONCE(opk.op_wrs), 0U);
	opk_release_waiter(c, 2);
	KUNIT_EXPECT_EQ(test, c->ret, -ECONNRESET);
	opk_end(c);
}

/*
 * A fence gives up a wait whose completions have not come (siw, after a
 * TERMINATE, delivers some later, some never). The thread then leaves;
 * a completion that comes after must find its op, still live; the op
 * stays (a flush may come twice) until the completion queue is gone.
 */
static void smbd_op_late_completion_after_give_up(struct kunit *test)
{
	struct opk_ctx *c = opk_first_fails(test);

	/* The marker comes before the second request's completion. */
	opk_complete(c, &c->sk->ss_ep.fence_cqe.cqe, IB_WC_WR_FLUSH_ERR);
	KUNIT_ASSERT_TRUE(test, opk_waited(c, 5 * HZ));
	KUNIT_EXPECT_EQ(test, c->ret, -EIO);
	opk_end(c);
	/* Still counted: kept for the completion to come. */
	KUNIT_ASSERT_FALSE(test, list_empty_careful(&c->sk->ss_op_orphans));
	opk_complete(c, &c->op->op_cqe.cqe, IB_WC_WR_FLUSH_ERR);
	KUNIT_EXPECT_EQ(test, c->op->op_posted, 0U);
	KUNIT_EXPECT_FALSE(test, list_empty_careful(&c->sk->ss_op_orphans));
	/* The exit frees it, as the teardown does (kmemleak otherwise). */
}

/*
 * siw flushes an RDMA Read it had queued but not yet sent twice: from
 * its outbound read queue, where the Read goes when it is queued, and
 * from its send slot, which it still holds (siw_sq_flush(): the slot's
 * Read counts as queued). The second completion counts a request that
 * is still to complete, and one more comes after everything posted was
 * counted. The op must then outlive its thread, and the thread must
 * return only after the fence: a completion counted twice ends its wait
 * early, while a request it waits for may still be on the queue.
 */
static void smbd_op_flushed_twice(struct kunit *test)
{
	struct opk_ctx *c = opk_setup(test, -1);
	struct smbd_op *op;

	c->op = smbd_op_start(c->sk, true, GFP_KERNEL);
	KUNIT_ASSERT_FALSE(test, IS_ERR(c->op));
	op = c->op;
	/* s s: two Reads, each the end of a piece. */
	opk_chain(c, 2, BIT(0) | BIT(1));
	opk_wait_start(test, c);
	KUNIT_ASSERT_TRUE(test, opk_until_wrs(2));
	smbd_sock_error(c->sk, -ECONNRESET);
	KUNIT_ASSERT_TRUE(test, opk_until_marker());
	/* The first Read flushed twice: both requests look done... */
	opk_complete(c, &op->op_cqe.cqe, IB_WC_WR_FLUSH_ERR);
	opk_complete(c, &op->op_cqe.cqe, IB_WC_WR_FLUSH_ERR);
	/* ... but the thread waits for the marker: it is in error. */
	KUNIT_EXPECT_FALSE(test, opk_waited(c, HZ / 4));
	/* The second Read's flush, then the marker, in the queue's order. */
	opk_complete(c, &op->op_cqe.cqe, IB_WC_WR_FLUSH_ERR);
	/* Nothing counted, yet kept: a flush may still come for it. */
	opk_fenced_kept(test, c, -ECONNABORTED);
	opk_complete(c, &op->op_cqe.cqe, IB_WC_WR_FLUSH_ERR);
	KUNIT_EXPECT_EQ(test, op->op_magic, SMBD_OP_LIVE);
	mutex_lock(&c->sk->ss_ep.teardown_mutex);
	smbd_ops_free_orphans(c->sk);
	mutex_unlock(&c->sk->ss_ep.teardown_mutex);
	KUNIT_EXPECT_TRUE(test, list_empty_careful(&c->sk->ss_op_orphans));
}

/* A fence's marker flushed on @cq, as the CQ's poller delivers it. */
static void opk_fence_flushed(struct smbd_sock *sk, struct ib_cq *cq)
{
	struct ib_wc wc = { .wr_cqe = &sk->ss_ep.fence_cqe.cqe,
			    .status = IB_WC_WR_FLUSH_ERR };

	cq->cq_context = sk;
	local_bh_disable();
	wc.wr_cqe->done(cq, &wc);
	local_bh_enable();
}

#define OPK_DEAD_SOCKS	4
#define OPK_DEAD_MS	300

/*
 * debugfs dev_fatal on a device whose queue pairs flush nothing: every
 * connection's fence is started before the first wait, so the wait is
 * bounded once (OPK_DEAD_MS), not once per connection, while
 * smbd_socks_lock holds up every connect and release. Each connection
 * ends; none is marked dead (its teardown drains it).
 */
static void smbd_op_dead_fences_waited_once(struct kunit *test)
{
	struct smbd_sock *sks[OPK_DEAD_SOCKS] = {};
	struct opk_ctx *c = opk_setup(test, -1);
	struct smbd_params params;
	struct ib_device *dev;
	unsigned long t0, ms;
	struct ib_cq *cqs;
	int i;

	/* Taken first: a marker left unflushed would hold the event work. */
	cqs = kunit_kcalloc(test, OPK_DEAD_SOCKS, sizeof(*cqs), GFP_KERNEL);
	dev = kunit_kzalloc(test, sizeof(*dev), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, cqs);
	KUNIT_ASSERT_NOT_NULL(test, dev);
	dev->dev.init_name = "smbd_opk";	/* its log lines' name */
	smbd_params_init(&params, false);
	for (i = 0; i < OPK_DEAD_SOCKS; i++) {
		sks[i] = i ? smbd_sock_alloc(&init_net, &params, false) :
			     c->sk;
		if (!sks[i])
			break;
		sks[i]->ss_ep.fake = &opk_qp;
		sks[i]->ss_ep.qp = &opk_ib_qp;
		sks[i]->ss_ep.ibdev = dev;
		spin_lock_bh(&sks[i]->ss_lock);
		sks[i]->ss_state = SMBD_CONNECTED;
		spin_unlock_bh(&sks[i]->ss_lock);
	}
	if (i == OPK_DEAD_SOCKS) {
		t0 = jiffies;
		smbd_socks_dead_ms(dev, OPK_DEAD_MS);
		ms = jiffies_to_msecs(jiffies - t0);
		/* One at a time, it took OPK_DEAD_SOCKS * OPK_DEAD_MS. */
		KUNIT_EXPECT_GE(test, ms, OPK_DEAD_MS);
		KUNIT_EXPECT_LT(test, ms, 2 * OPK_DEAD_MS);
		for (i = 0; i < OPK_DEAD_SOCKS; i++) {
			KUNIT_EXPECT_FALSE(test, READ_ONCE(sks[i]->ss_ep.dead));
			KUNIT_EXPECT_EQ(test, READ_ONCE(sks[i]->ss_err), -EIO);
		}
	} else {
		KUNIT_FAIL(test, "socket %d not allocated", i);
	}
	/* The markers flush at last; the sockets go (c's with the case). */
	for (i = 0; i < OPK_DEAD_SOCKS && sks[i]; i++) {
		opk_fence_flushed(sks[i], &cqs[i]);
		flush_work(&sks[i]->ss_disconnect_work);
		sks[i]->ss_ep.ibdev = NULL;
		if (!i)
			continue;
		sks[i]->ss_ep.qp = NULL;
		smbd_sock_free(sks[i]);
	}
}

/*
 * An op whose every request completed, in order and without error, is
 * kept when its thread leaves, dead to any completion, and is the next
 * thread's: ops do not pile up on a connection, nor is one allocated per
 * I/O.
 */
static void smbd_op_done_kept_for_next(struct kunit *test)
{
	struct opk_ctx *c = opk_setup(test, -1);
	struct smbd_op *op;
	u32 id;

	c->op = smbd_op_start(c->sk, true, GFP_KERNEL);
	KUNIT_ASSERT_FALSE(test, IS_ERR(c->op));
	opk_chain(c, 3, BIT(1) | BIT(2));
	opk_wait_start(test, c);
	KUNIT_ASSERT_TRUE(test, opk_until_wrs(3));
	opk_complete(c, &c->op->op_cqe.cqe, IB_WC_SUCCESS);
	opk_complete(c, &c->op->op_cqe.cqe, IB_WC_SUCCESS);
	KUNIT_ASSERT_TRUE(test, opk_waited(c, 5 * HZ));
	KUNIT_EXPECT_EQ(test, c->ret, 0);
	KUNIT_EXPECT_FALSE(test, opk_marker());
	id = c->op->op_cqe.id;
	opk_end(c);
	KUNIT_EXPECT_TRUE(test, list_empty_careful(&c->sk->ss_op_orphans));
	KUNIT_EXPECT_TRUE(test, list_empty_careful(&c->sk->ss_op_list));
	KUNIT_EXPECT_EQ(test, c->sk->ss_op_cached, 1);
	KUNIT_EXPECT_EQ(test, c->op->op_magic, SMBD_OP_DEAD);

	op = smbd_op_start(c->sk, true, GFP_KERNEL);
	KUNIT_ASSERT_FALSE(test, IS_ERR(op));
	KUNIT_EXPECT_PTR_EQ(test, op, c->op);
	KUNIT_EXPECT_EQ(test, c->sk->ss_op_cached, 0);
	KUNIT_EXPECT_EQ(test, op->op_magic, SMBD_OP_LIVE);
	KUNIT_EXPECT_EQ(test, op->op_posted, 0);
	KUNIT_EXPECT_TRUE(test, op->op_finished);
	/* A new name: a trace tells the two uses apart. */
	KUNIT_EXPECT_GT(test, op->op_cqe.id, id);
	smbd_op_end(c->sk, op);
}

/*
 * At most SMBD_OP_CACHE ended ops are kept; the others are freed at
 * once and the kept ones with the socket (kmemleak reports either).
 * Nothing is kept from a socket whose gate is closed.
 */
static void smbd_op_cache_bounded(struct kunit *test)
{
	struct opk_ctx *c = opk_setup(test, -1);
	struct smbd_op *ops[SMBD_OP_CACHE + 2];
	int i;

	for (i = 0; i < ARRAY_SIZE(ops); i++) {
		ops[i] = smbd_op_start(c->sk, true, GFP_KERNEL);
		KUNIT_ASSERT_FALSE(test, IS_ERR(ops[i]));
	}
	KUNIT_EXPECT_EQ(test, c->sk->ss_op_cached, 0);
	for (i = 0; i < ARRAY_SIZE(ops); i++)
		smbd_op_end(c->sk, ops[i]);
	KUNIT_EXPECT_EQ(test, c->sk->ss_op_cached, SMBD_OP_CACHE);
	KUNIT_EXPECT_EQ(test, list_count_nodes(&c->sk->ss_op_cache),
			SMBD_OP_CACHE);

	/* A closed gate: no op, cached or new. */
	spin_lock_bh(&c->sk->ss_lock);
	c->sk->ss_ep.qp_closed = true;
	spin_unlock_bh(&c->sk->ss_lock);
	KUNIT_EXPECT_TRUE(test, IS_ERR(smbd_op_start(c->sk, false, GFP_KERNEL)));
	KUNIT_EXPECT_EQ(test, c->sk->ss_op_cached, SMBD_OP_CACHE);
}

/*
 * The same, and the completion never comes: the teardown frees the op
 * once the completion queue is gone (kmemleak reports it otherwise).
 */
static void smbd_op_orphan_freed_at_teardown(struct kunit *test)
{
	struct opk_ctx *c = opk_setup(test, -1);

	c->op = smbd_op_start(c->sk, true, GFP_KERNEL);
	KUNIT_ASSERT_FALSE(test, IS_ERR(c->op));
	opk_chain(c, 1, BIT(0));
	opk_wait_start(test, c);
	KUNIT_ASSERT_TRUE(test, opk_until_wrs(1));
	smbd_sock_error(c->sk, -ECONNRESET);
	KUNIT_ASSERT_TRUE(test, opk_until_marker());
	opk_complete(c, &c->sk->ss_ep.fence_cqe.cqe, IB_WC_WR_FLUSH_ERR);
	KUNIT_ASSERT_TRUE(test, opk_waited(c, 5 * HZ));
	KUNIT_EXPECT_EQ(test, c->ret, -ECONNABORTED);
	opk_end(c);
	KUNIT_ASSERT_FALSE(test, list_empty_careful(&c->sk->ss_op_orphans));
	/* Completions may still name it: not kept for another thread. */
	KUNIT_EXPECT_EQ(test, c->sk->ss_op_cached, 0);
	mutex_lock(&c->sk->ss_ep.teardown_mutex);
	smbd_ops_free_orphans(c->sk);
	mutex_unlock(&c->sk->ss_ep.teardown_mutex);
	KUNIT_EXPECT_TRUE(test, list_empty_careful(&c->sk->ss_op_orphans));
}

/*
 * Each op names its completions when it starts (struct smbd_cqe): a
 * number no other context of the connection has, and its kind; the fence
 * and the probe were named with the socket.
 */
static void smbd_op_cqe_named(struct kunit *test)
{
	struct opk_ctx *c = opk_setup(test, -1);
	struct smbd_op *op2;

	c->op = smbd_op_start(c->sk, true, GFP_KERNEL);
	KUNIT_ASSERT_FALSE(test, IS_ERR(c->op));
	op2 = smbd_op_start(c->sk, true, GFP_KERNEL);
	KUNIT_ASSERT_FALSE(test, IS_ERR(op2));
	KUNIT_EXPECT_EQ(test, c->op->op_cqe.kind, SMBD_WC_OP);
	KUNIT_EXPECT_EQ(test, c->sk->ss_ep.fence_cqe.kind, SMBD_WC_FENCE);
	KUNIT_EXPECT_EQ(test, c->sk->ss_probe_cqe.kind, SMBD_WC_PROBE);
	KUNIT_EXPECT_GT(test, c->sk->ss_ep.fence_cqe.id, 0);
	KUNIT_EXPECT_NE(test, c->sk->ss_ep.fence_cqe.id, c->sk->ss_probe_cqe.id);
	KUNIT_EXPECT_GT(test, c->op->op_cqe.id, c->sk->ss_probe_cqe.id);
	KUNIT_EXPECT_EQ(test, op2->op_cqe.id, c->op->op_cqe.id + 1);
	KUNIT_EXPECT_PTR_EQ(test, c->op->op_cqe.cqe.done, op2->op_cqe.cqe.done);
	smbd_op_end(c->sk, op2);
	opk_end(c);
}

/*
 * The posted-write cases' device and PD: no DMA device, so mapping is
 * the buffer's own address (what rxe and siw do); nothing else is read.
 */
static struct ib_device opk_ibdev;
static struct ib_pd opk_pd = { .local_dma_lkey = 0x5eed };

#define OPK_WLEN	4096
#define OPK_TOKEN	0xabcd1234
#define OPK_ADDR	0x100000ULL

/*
 * A connected responder with its slots for small RDMA Writes, and what
 * smbd_rdma_write() reads of a queue pair made for it.
 */
static struct opk_ctx *opk_setup_wslots(struct kunit *test)
{
	struct opk_ctx *c;
	struct smbd_sock *sk;

	if (!IS_ENABLED(CONFIG_INFINIBAND_VIRT_DMA))
		kunit_skip(test, "needs virtual DMA (rxe or siw configured)");
	c = opk_setup(test, -1);
	sk = c->sk;
	sk->ss_responder = true;
	sk->ss_ep.ibdev = &opk_ibdev;
	sk->ss_ep.pd = &opk_pd;
	sk->ss_ep.rw_chunk = SMBD_RW_CHUNK;
	sk->ss_ep.rw_read_chunk = SMBD_RW_READ_CHUNK;
	sk->ss_neg.max_read_write_size = SZ_1M;
	sk->ss_rdma.rw_ctxs = SMBD_RW_CTXS;
	sk->ss_rdma.rw_avail = SMBD_RW_CTXS;
	smbd_wslots_alloc(sk, SZ_16K);
	KUNIT_ASSERT_NOT_NULL(test, sk->ss_rdma.wslots);
	return c;
}

/* smbd_rdma_write() of OPK_WLEN bytes of @fill, 512 bytes into one segment. */
static ssize_t opk_write(struct kunit *test, struct opk_ctx *c, u8 fill)
{
	struct smbd_buf_desc d = {
		.offset = OPK_ADDR, .token = OPK_TOKEN, .length = SZ_8K,
	};
	u8 *src = kunit_kmalloc(test, OPK_WLEN, GFP_KERNEL);
	struct kvec kv = { .iov_base = src, .iov_len = OPK_WLEN };
	struct iov_iter it;
	ssize_t n;

	KUNIT_ASSERT_NOT_NULL(test, src);
	memset(src, fill, OPK_WLEN);
	iov_iter_kvec(&it, ITER_SOURCE, &kv, 1, OPK_WLEN);
	n = smbd_rdma_write(c->sk, &it, &d, 1, 512);
	/* Returned: the caller's memory is its own again. */
	memset(src, 0, OPK_WLEN);
	return n;
}

static u32 opk_wslots_free(struct smbd_sock *sk)
{
	u32 n;

	spin_lock_bh(&sk->ss_lock);
	n = list_count_nodes(&sk->ss_rdma.wslot_free);
	spin_unlock_bh(&sk->ss_lock);
	return n;
}

/*
 * [MS-SMBD] 3.1.4.5, a responder's small write (smbd_rw.c): copied and
 * posted as one signalled RDMA Write into the segment, and the call
 * returns before its completion; the completion gives the slot and the
 * context back and counts the write. Without posted writes this call
 * would wait for the device.
 */
static void smbd_rw_posted_write_unwaited(struct kunit *test)
{
	struct opk_ctx *c = opk_setup_wslots(test);
	struct smbd_sock *sk = c->sk;

	KUNIT_ASSERT_EQ(test, opk_write(test, c, 0x5a), OPK_WLEN);
	KUNIT_ASSERT_EQ(test, opk.op_wrs, 1);
	KUNIT_EXPECT_EQ(test, opk.wr.wr.opcode, IB_WR_RDMA_WRITE);
	KUNIT_EXPECT_TRUE(test, opk.wr.wr.send_flags & IB_SEND_SIGNALED);
	KUNIT_EXPECT_EQ(test, opk.wr.wr.num_sge, 1);
	KUNIT_EXPECT_EQ(test, opk.wr.rkey, OPK_TOKEN);
	KUNIT_EXPECT_EQ(test, opk.wr.remote_addr, OPK_ADDR + 512);
	KUNIT_EXPECT_EQ(test, opk.sge.length, OPK_WLEN);
	KUNIT_EXPECT_EQ(test, opk.sge.lkey, opk_pd.local_dma_lkey);
	/* The device reads smbd's copy, not the caller's memory. */
	KUNIT_EXPECT_NULL(test, memchr_inv((void *)(uintptr_t)opk.sge.addr,
					   0x5a, OPK_WLEN));
	KUNIT_EXPECT_EQ(test, sk->ss_rdma.rw_avail, SMBD_RW_CTXS - 1);
	KUNIT_EXPECT_EQ(test, opk_wslots_free(sk), SMBD_WSLOTS - 1);
	KUNIT_EXPECT_EQ(test, sk->ss_stats.rdma_writes, 0);
	KUNIT_EXPECT_EQ(test, sk->ss_ep.posting, 0);

	opk_complete(c, opk.wr.wr.wr_cqe, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, sk->ss_rdma.rw_avail, SMBD_RW_CTXS);
	KUNIT_EXPECT_EQ(test, opk_wslots_free(sk), SMBD_WSLOTS);
	KUNIT_EXPECT_EQ(test, sk->ss_stats.rdma_writes, 1);
	KUNIT_EXPECT_EQ(test, sk->ss_stats.rdma_writes_posted, 1);
	KUNIT_EXPECT_EQ(test, sk->ss_stats.rdma_write_bytes, OPK_WLEN);
	KUNIT_EXPECT_EQ(test, READ_ONCE(sk->ss_state), SMBD_CONNECTED);
}

/*
 * Every slot in flight at once, each with its own completion entry; each
 * completion gives back its own.
 */
static void smbd_rw_posted_writes_fill_slots(struct kunit *test)
{
	struct opk_ctx *c = opk_setup_wslots(test);
	struct ib_cqe *cqe[SMBD_WSLOTS];
	u32 i;

	for (i = 0; i < SMBD_WSLOTS; i++) {
		KUNIT_ASSERT_EQ(test, opk_write(test, c, i + 1), OPK_WLEN);
		cqe[i] = opk.wr.wr.wr_cqe;
		KUNIT_EXPECT_NULL(test,
				  memchr_inv((void *)(uintptr_t)opk.sge.addr,
					     i + 1, OPK_WLEN));
	}
	KUNIT_EXPECT_EQ(test, opk_wslots_free(c->sk), 0);
	KUNIT_EXPECT_EQ(test, c->sk->ss_rdma.rw_avail, 0);
	for (i = 1; i < SMBD_WSLOTS; i++)
		KUNIT_EXPECT_PTR_NE(test, cqe[i], cqe[i - 1]);
	for (i = 0; i < SMBD_WSLOTS; i++)
		opk_complete(c, cqe[i], IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, opk_wslots_free(c->sk), SMBD_WSLOTS);
	KUNIT_EXPECT_EQ(test, c->sk->ss_rdma.rw_avail, SMBD_RW_CTXS);
	KUNIT_EXPECT_EQ(test, c->sk->ss_stats.rdma_writes_posted, SMBD_WSLOTS);
}

/*
 * The provider refuses the write: nothing of it is on the queue, so the
 * slot and the context come back at once, the caller gets the error,
 * and the connection ends (the response it would send must not claim
 * data that never went).
 */
static void smbd_rw_posted_write_refused(struct kunit *test)
{
	struct opk_ctx *c = opk_setup_wslots(test);
	struct smbd_sock *sk = c->sk;

	opk.accept = 0;
	KUNIT_EXPECT_EQ(test, opk_write(test, c, 0x5a), -ENOMEM);
	/* The event work fences through the gate: let it finish first. */
	flush_work(&sk->ss_disconnect_work);
	KUNIT_EXPECT_EQ(test, opk.op_wrs, 0);
	KUNIT_EXPECT_EQ(test, sk->ss_rdma.rw_avail, SMBD_RW_CTXS);
	KUNIT_EXPECT_EQ(test, opk_wslots_free(sk), SMBD_WSLOTS);
	KUNIT_EXPECT_EQ(test, sk->ss_ep.posting, 0);
	KUNIT_EXPECT_NE(test, READ_ONCE(sk->ss_state), SMBD_CONNECTED);
	KUNIT_EXPECT_EQ(test, sk->ss_stats.rdma_writes, 0);
}

/*
 * The write completes in error (the peer's key refused it): the slot
 * comes back, nothing is counted as written, and the connection ends,
 * so the response queued behind it never reaches the peer.
 */
static void smbd_rw_posted_write_failed(struct kunit *test)
{
	struct opk_ctx *c = opk_setup_wslots(test);
	struct smbd_sock *sk = c->sk;

	KUNIT_ASSERT_EQ(test, opk_write(test, c, 0x5a), OPK_WLEN);
	opk_complete(c, opk.wr.wr.wr_cqe, IB_WC_REM_ACCESS_ERR);
	KUNIT_EXPECT_EQ(test, sk->ss_rdma.rw_avail, SMBD_RW_CTXS);
	KUNIT_EXPECT_EQ(test, opk_wslots_free(sk), SMBD_WSLOTS);
	KUNIT_EXPECT_EQ(test, sk->ss_stats.rdma_writes, 0);
	KUNIT_EXPECT_NE(test, READ_ONCE(sk->ss_state), SMBD_CONNECTED);
	KUNIT_EXPECT_EQ(test, READ_ONCE(sk->ss_err), -ECONNABORTED);
}

/* After the teardown closed the gate, nothing is posted, nor a slot taken. */
static void smbd_rw_posted_write_gate_closed(struct kunit *test)
{
	struct opk_ctx *c = opk_setup_wslots(test);
	struct smbd_sock *sk = c->sk;

	spin_lock_bh(&sk->ss_lock);
	sk->ss_ep.qp_closed = true;
	spin_unlock_bh(&sk->ss_lock);
	KUNIT_EXPECT_LT(test, opk_write(test, c, 0x5a), 0);
	KUNIT_EXPECT_EQ(test, opk.taken, 0);
	KUNIT_EXPECT_EQ(test, opk_wslots_free(sk), SMBD_WSLOTS);
	KUNIT_EXPECT_EQ(test, sk->ss_rdma.rw_avail, SMBD_RW_CTXS);
}

static struct kunit_case smbd_op_cases[] = {
	KUNIT_CASE(smbd_rw_posted_write_unwaited),
	KUNIT_CASE(smbd_rw_posted_writes_fill_slots),
	KUNIT_CASE(smbd_rw_posted_write_refused),
	KUNIT_CASE(smbd_rw_posted_write_failed),
	KUNIT_CASE(smbd_rw_posted_write_gate_closed),
	KUNIT_CASE(smbd_op_cqe_named),
	KUNIT_CASE(smbd_op_partial_post_fences),
	KUNIT_CASE(smbd_op_partial_post_under_fence),
	KUNIT_CASE(smbd_op_partial_post_flushed_twice),
	KUNIT_CASE(smbd_op_fence_needs_error_state),
	KUNIT_CASE(smbd_op_fence_refused),
	KUNIT_CASE(smbd_op_dead_device),
	KUNIT_CASE(smbd_op_dead_device_marker_out),
	KUNIT_CASE(smbd_op_no_post_after_close),
	KUNIT_CASE(smbd_op_late_completion_after_give_up),
	KUNIT_CASE(smbd_op_flushed_twice),
	KUNIT_CASE(smbd_op_done_kept_for_next),
	KUNIT_CASE(smbd_op_cache_bounded),
	KUNIT_CASE(smbd_op_orphan_freed_at_teardown),
	KUNIT_CASE(smbd_op_dead_fences_waited_once),
	{}
};

static struct kunit_suite smbd_op_suite = {
	.name = "smbd_op",
	.exit = opk_exit,
	.test_cases = smbd_op_cases,
};

kunit_test_suite(smbd_op_suite);

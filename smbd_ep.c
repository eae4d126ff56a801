// SPDX-License-Identifier: GPL-2.0
/*
 * smbd: the endpoint of a connection. A socket's allocation; the one
 * set-up of its endpoint (smbd_ep_init(): queue pair and completion
 * queues sized from the device, buffers, MR pool), for a device and for a
 * KUnit suite's fake alike; the queue pair's events, a device that dies
 * or whose link comes back, the initiator's probe of the peer's queue
 * pair while negotiating, and the one verbs teardown. The connection
 * manager handler (smbd_cm.c) and the socket API (smbd_sock.c) drive it.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <kunit/visibility.h>
#include <linux/dma-mapping.h>
#include <linux/module.h>
#include <linux/irq_poll.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>

#include "smbd_internal.h"

static void smbd_qp_event_work(struct work_struct *work);

/*
 * The fence's marker completed (smbd_qp_fence()): the send queue ran up
 * to it in order, so nothing posted before is running. Waits whose
 * completions a dying queue pair lost are given up now rather than at
 * the teardown, which a consumer waiting for them would never reach.
 */
static void smbd_fence_give_up(struct smbd_sock *sk)
{
	spin_lock_bh(&sk->ss_lock);
	smbd_ops_abandon(sk);
	spin_unlock_bh(&sk->ss_lock);
	smbd_tx_abandon(sk);
	complete_all(&sk->ss_ep.fence_done);
}

static void smbd_fence_done(struct ib_cq *cq, struct ib_wc *wc)
{
	smbd_wc_begin(cq, wc, true);
	smbd_fence_give_up(cq->cq_context);
}

/**
 * smbd_sock_dead() - the socket's device stopped for good
 * @sk: a socket on a device that reported IB_EVENT_DEVICE_FATAL
 *
 * The device moves no more data and completes nothing of its own: mlx5
 * and mlx4, in their internal-error state, refuse every post, make up
 * the flush completions of what was posted in software (mlx5 answers
 * its drain the same way), and their recovery resets the function and
 * re-adds the device. So the connection ends (-EIO), nothing is posted
 * to it any more (smbd_post()), its teardown does not drain it, and
 * whatever still waits for it is given up now, the fence included:
 * a marker would be refused, or never complete. Posted work whose
 * completion comes after all finds its context, or an orphan op, until
 * the completion queues go.
 *
 * Context: process. Called under smbd_socks_lock by smbd_socks_dead().
 */
void smbd_sock_dead(struct smbd_sock *sk)
{
	bool open;

	WRITE_ONCE(sk->ss_ep.dead, true);
	smbd_sock_error(sk, -EIO);
	/*
	 * Through the gate: the teardown frees the send contexts given up
	 * here only once we are out. Once it closed the gate, it gives
	 * everything up itself (smbd_ops_abort(), smbd_xfer_free()).
	 */
	spin_lock_bh(&sk->ss_lock);
	open = !sk->ss_ep.qp_closed;
	if (open)
		sk->ss_ep.posting++;
	spin_unlock_bh(&sk->ss_lock);
	if (!open)
		return;
	smbd_fence_give_up(sk);
	smbd_post_leave(sk);
}
EXPORT_SYMBOL_IF_KUNIT(smbd_sock_dead);

/* How long debugfs dev_fatal waits for the queue pairs to flush. */
#define SMBD_DEAD_QUIESCE_MS	10000

/**
 * smbd_socks_dead_ms() - every connection on a device that stopped for good
 * @ibdev: the device
 * @quiesce_ms: when not 0, first flush every connection's queue pair
 *	through its fence, and wait up to this long for them all (debugfs
 *	dev_fatal's stand-in for a device that stopped: a soft device still
 *	moves data); one not flushed by then is left to its teardown
 *
 * The fences are all started before the first wait, so that the wait is
 * bounded once, not once per connection: smbd_socks_lock holds up every
 * connect and release meanwhile.
 *
 * Context: process; sleeps. Takes smbd_socks_lock.
 */
VISIBLE_IF_KUNIT void smbd_socks_dead_ms(struct ib_device *ibdev,
					 unsigned int quiesce_ms)
{
	unsigned long end = jiffies + msecs_to_jiffies(quiesce_ms);
	struct smbd_sock *sk;
	u32 n = 0, late = 0;

	mutex_lock(&smbd_socks_lock);
	if (quiesce_ms) {
		list_for_each_entry(sk, &smbd_socks, ss_all_node) {
			if (READ_ONCE(sk->ss_ep.ibdev) != ibdev)
				continue;
			smbd_sock_error(sk, -EIO);
			smbd_qp_fence_start(sk);
		}
	}
	list_for_each_entry(sk, &smbd_socks, ss_all_node) {
		if (READ_ONCE(sk->ss_ep.ibdev) != ibdev)
			continue;
		/*
		 * A queue pair not known to be flushed (no marker out, or
		 * none completed in time) may still run requests: that
		 * connection only ends, and its teardown drains it as on a
		 * live device. The fence was started above: this only
		 * finds the marker.
		 */
		if (quiesce_ms && smbd_qp_fence_start(sk) &&
		    (READ_ONCE(sk->ss_ep.fence_err) ||
		     !wait_for_completion_timeout(&sk->ss_ep.fence_done,
						  time_after(end, jiffies) ?
						  end - jiffies : 1))) {
			late++;
			continue;
		}
		smbd_sock_dead(sk);
		n++;
	}
	mutex_unlock(&smbd_socks_lock);
	ibdev_warn(ibdev, "smbd: fatal device error: %u connections ended\n",
		   n + late);
	if (late)
		ibdev_warn(ibdev, "smbd: %u of them not flushed within %u ms: drained by their teardown\n",
			   late, quiesce_ms);
}
EXPORT_SYMBOL_IF_KUNIT(smbd_socks_dead_ms);

/**
 * smbd_socks_dead() - every connection on a device that stopped for good
 * @ibdev: the device
 * @quiesce: flush the queue pairs first, for up to SMBD_DEAD_QUIESCE_MS
 *	(smbd_socks_dead_ms())
 *
 * smbd_dev.c calls it on IB_EVENT_DEVICE_FATAL (see smbd_sock_dead()).
 *
 * Context: process; sleeps. Takes smbd_socks_lock.
 */
void smbd_socks_dead(struct ib_device *ibdev, bool quiesce)
{
	smbd_socks_dead_ms(ibdev, quiesce ? SMBD_DEAD_QUIESCE_MS : 0);
}

/**
 * smbd_socks_link_up() - a port whose link went down is active again
 * @ibdev: the device
 * @port: the port (IB_EVENT_PORT_ACTIVE's)
 *
 * While the link was down the peer may have ended a connection, and a
 * connection with nothing outstanding would not learn it before its
 * idle timer, minutes later, with the consumer's requests waiting on a
 * reply that cannot come. Each connected socket on the port probes its
 * peer now (smbd_ka_on_link_up(); the keep-alive of [MS-SMBD] 3.1.6.2):
 * a live peer answers, a gone one ends the connection within the
 * keep-alive timeout (plus one retransmission of the queue pair: the
 * first packets after a link up may be lost), or sooner when the probe's
 * send fails.
 *
 * Not on iWARP: TCP carries the connection there, tells of a peer that
 * closed it, and may still be backing off its retransmissions when the
 * link comes back: a probe's timeout would end connections that
 * survive.
 *
 * smbd_dev.c calls it on IB_EVENT_PORT_ACTIVE.
 *
 * Context: process; sleeps. Takes smbd_socks_lock, then each socket's
 * ss_lock.
 */
void smbd_socks_link_up(struct ib_device *ibdev, u32 port)
{
	struct smbd_sock *sk;
	u32 n = 0;

	if (rdma_protocol_iwarp(ibdev, port))
		return;
	mutex_lock(&smbd_socks_lock);
	list_for_each_entry(sk, &smbd_socks, ss_all_node) {
		if (READ_ONCE(sk->ss_ep.ibdev) != ibdev ||
		    READ_ONCE(sk->ss_ep.port_num) != port)
			continue;
		spin_lock_bh(&sk->ss_lock);
		if (sk->ss_state == SMBD_CONNECTED &&
		    smbd_ka_on_link_up(&sk->ss_ka, sk->ss_ep.resend_ms)) {
			mod_delayed_work(smbd_wq, &sk->ss_ka_work, 0);
			n++;
		}
		spin_unlock_bh(&sk->ss_lock);
	}
	mutex_unlock(&smbd_socks_lock);
	if (n)
		ibdev_info(ibdev, "smbd: port %u active again: %u connections probe their peers\n",
			   port, n);
}

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

	smbd_wc_begin(cq, wc, true);

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
	    smbd_post_marker(sk, &wr.wr, SMBD_POST_LOCKED))
		set_bit(SMBD_NEG_PROBE_UNPOSTED, &sk->ss_neg_trace);
	spin_unlock_bh(&sk->ss_lock);
}

/**
 * smbd_sock_alloc() - a new socket
 * @net: its network namespace
 * @params: its parameters, copied
 * @responder: a listener's child, or a listener (true), or an initiator
 *
 * The socket is on the debugfs list, with its locks, wait queues and
 * works initialised; the caller sets up the rest.
 *
 * Context: process; takes smbd_socks_lock.
 * Return: the socket, or NULL.
 */
struct smbd_sock *smbd_sock_alloc(struct net *net,
				  const struct smbd_params *params,
				  bool responder)
{
	static atomic_t smbd_next_id;
	struct smbd_sock *sk = kzalloc(sizeof(*sk), GFP_KERNEL);

	if (!sk)
		return NULL;
	sk->ss_id = atomic_inc_return(&smbd_next_id);
	sk->ss_net = net;
	sk->ss_params = *params;
	sk->ss_responder = responder;
	spin_lock_init(&sk->ss_lock);
	init_waitqueue_head(&sk->ss_wait);
	init_waitqueue_head(&sk->ss_send_wq);
	init_waitqueue_head(&sk->ss_recv_wq);
	init_waitqueue_head(&sk->ss_res_wq);
	init_waitqueue_head(&sk->ss_rw_wq);
	sk->ss_state = SMBD_CREATED;
	sk->ss_cm_last = -1;
	INIT_LIST_HEAD(&sk->ss_rx.free);
	INIT_LIST_HEAD(&sk->ss_rx.ready);
	INIT_LIST_HEAD(&sk->ss_tx.free);
	INIT_LIST_HEAD(&sk->ss_tx.copy_free);
	INIT_LIST_HEAD(&sk->ss_rdma.wslot_free);
	INIT_LIST_HEAD(&sk->ss_accept_node);
	INIT_LIST_HEAD(&sk->ss_rdma.reg_free);
	INIT_LIST_HEAD(&sk->ss_op_list);
	INIT_LIST_HEAD(&sk->ss_op_orphans);
	INIT_LIST_HEAD(&sk->ss_op_cache);
	mutex_init(&sk->ss_send_mutex);
	mutex_init(&sk->ss_recv_mutex);
	mutex_init(&sk->ss_ep.teardown_mutex);
	mutex_init(&sk->ss_ep.cm_mutex);
	init_completion(&sk->ss_ep.removal_done);
	INIT_WORK(&sk->ss_grant_work, smbd_grant_work);
	INIT_DELAYED_WORK(&sk->ss_ka_work, smbd_ka_work);
	INIT_DELAYED_WORK(&sk->ss_neg_work, smbd_neg_timeout);
	INIT_DELAYED_WORK(&sk->ss_probe_work, smbd_neg_probe_work);
	INIT_WORK(&sk->ss_disconnect_work, smbd_event_work);
	INIT_WORK(&sk->ss_ep.qp_event_work, smbd_qp_event_work);
	init_completion(&sk->ss_ep.fence_done);
	smbd_cqe_init(sk, &sk->ss_ep.fence_cqe, SMBD_WC_FENCE, smbd_fence_done);
	smbd_cqe_init(sk, &sk->ss_probe_cqe, SMBD_WC_PROBE, smbd_neg_probe_done);
	smbd_debugfs_sock_add(sk);
	mutex_lock(&smbd_socks_lock);
	list_add_tail(&sk->ss_all_node, &smbd_socks);
	mutex_unlock(&smbd_socks_lock);
	return sk;
}
EXPORT_SYMBOL_IF_KUNIT(smbd_sock_alloc);

/**
 * smbd_sock_free() - the last of a socket
 * @sk: a socket no transfer, work or thread uses any more
 *
 * Off the list of sockets (its counters into its device's totals,
 * smbd_sock_retire()) and freed with what it still holds.
 *
 * Context: process; takes smbd_socks_lock.
 */
void smbd_sock_free(struct smbd_sock *sk)
{
	mutex_lock(&smbd_socks_lock);
	/* What it did goes to its device's totals as it leaves the list. */
	smbd_sock_retire(sk);
	list_del(&sk->ss_all_node);
	mutex_unlock(&smbd_socks_lock);
	smbd_debugfs_sock_del(sk);
	kfree(sk->ss_lq);
	/* No transfer runs on a socket being freed, nor any thread. */
	kvfree(sk->ss_rdma.rw_scratch);
	smbd_ops_free_list(&sk->ss_op_cache);
	kfree(sk);
}
EXPORT_SYMBOL_IF_KUNIT(smbd_sock_free);

/*
 * ib_free_cq() may free a softirq completion queue whose poll handler is
 * still running: ib_poll_handler() rearms the queue after the
 * irq_poll_complete() that lets ib_free_cq()'s irq_poll_disable() return,
 * and our drain returns from inside that same handler (its marker's
 * completion). Debian's 6.1 and 6.12 ib_core do not wait for it; the
 * handler runs with bottom halves off, an RCU read-side section, so once
 * the queue pair is gone (no new completion, no new run) one grace
 * period sees the last run out. The queues are freed after it, off the
 * teardown's path, with a reference on the device that its
 * unregistration waits for (Documentation/smbd.rst, "Posted work").
 */
struct smbd_cq_grave {
	struct rcu_work rwork;
	struct ib_device *ibdev;
	struct ib_cq *cq[2];
	struct list_head orphans;
};

static void smbd_cq_grave_work(struct work_struct *work)
{
	struct smbd_cq_grave *g = container_of(to_rcu_work(work),
					       struct smbd_cq_grave, rwork);
	int i;

	for (i = 0; i < ARRAY_SIZE(g->cq); i++)
		if (g->cq[i])
			ib_free_cq(g->cq[i]);
	/* Nothing can name them now that the send queue's CQ is gone. */
	smbd_ops_free_list(&g->orphans);
	ib_device_put(g->ibdev);
	kfree(g);
}

/*
 * Room to free @ibdev's completion queues later, taken before they are
 * made: -ENODEV when the device is being unregistered.
 */
static int smbd_cq_grave_alloc(struct smbd_sock *sk, struct ib_device *ibdev)
{
	struct smbd_cq_grave *g = kzalloc(sizeof(*g), GFP_KERNEL);

	if (!g)
		return -ENOMEM;
	if (!ib_device_try_get(ibdev)) {
		kfree(g);
		return -ENODEV;
	}
	g->ibdev = ibdev;
	INIT_LIST_HEAD(&g->orphans);
	INIT_RCU_WORK(&g->rwork, smbd_cq_grave_work);
	sk->ss_ep.grave = g;
	return 0;
}

/*
 * No poll handler runs on @cq, nor will: it may go, and what its
 * completions name with it. For a queue pair that was not drained (a
 * dead device), whose handlers may still be at work on the last
 * completions the provider made up. irq_poll_disable() waits for a run
 * scheduled or under way to reach its irq_poll_complete(), and no run
 * starts after it; the grace period then sees the rest of the last one
 * (its rearm) out. A CQ polled from a work queue is waited for by
 * ib_free_cq() itself.
 */
static void smbd_cq_quiesce(struct ib_cq *cq)
{
	if (cq->poll_ctx != IB_POLL_SOFTIRQ)
		return;
	irq_poll_disable(&cq->iop);
	synchronize_rcu();
	/* ib_free_cq() disables it again; nothing can schedule it now. */
	irq_poll_enable(&cq->iop);
}

/*
 * The completion queues of a destroyed queue pair, and the ops that may
 * name them, go after a grace period (struct smbd_cq_grave); or at once,
 * @now, for a queue pair that was not drained: the caller frees what the
 * completions name next, so their handlers must be done first.
 */
static void smbd_cq_bury(struct smbd_sock *sk, bool now)
{
	struct smbd_cq_grave *g = sk->ss_ep.grave;

	sk->ss_ep.grave = NULL;
	g->cq[0] = sk->ss_ep.send_cq;
	g->cq[1] = sk->ss_ep.recv_cq;
	sk->ss_ep.send_cq = NULL;
	sk->ss_ep.recv_cq = NULL;
	smbd_ops_take_orphans(sk, &g->orphans);
	if (!now) {
		queue_rcu_work(smbd_wq, &g->rwork);
		return;
	}
	if (g->cq[0])
		smbd_cq_quiesce(g->cq[0]);
	if (g->cq[1])
		smbd_cq_quiesce(g->cq[1]);
	smbd_cq_grave_work(&g->rwork.work);
}

/**
 * smbd_cq_graves_wait() - wait until every buried completion queue is freed
 *
 * For the module's exit: the grace periods have ended and their work has
 * run when this returns.
 *
 * Context: process; sleeps.
 */
void smbd_cq_graves_wait(void)
{
	rcu_barrier();
	flush_workqueue(smbd_wq);
}

/*
 * Close the gate of a socket whose setup failed, under the handler's
 * ss_ep.cm_mutex (a teardown has smbd_qp_close()): no thread posts from
 * now on (a fence of smbd_qp_event_work() among them), and the threads
 * inside have returned from their posts.
 */
static void smbd_qp_gate_shut(struct smbd_sock *sk)
{
	spin_lock_bh(&sk->ss_lock);
	sk->ss_ep.qp_closed = true;
	spin_unlock_bh(&sk->ss_lock);
	wait_event(sk->ss_res_wq, !READ_ONCE(sk->ss_ep.posting));
}

/*
 * Free the verbs objects; the queue pair, if any, must be drained. By
 * the handler that failed to build them (ss_ep.cm_mutex), or by a teardown
 * (ss_ep.teardown_mutex) once the id is detached.
 */
static void smbd_qp_destroy(struct smbd_sock *sk, struct rdma_cm_id *id)
{
	lockdep_assert(lockdep_is_held(&sk->ss_ep.cm_mutex) ||
		       lockdep_is_held(&sk->ss_ep.teardown_mutex));
	/*
	 * Closed already by a teardown or a failed connection request; a
	 * setup that failed before posting anything closes it here.
	 */
	smbd_qp_gate_shut(sk);
	complete_all(&sk->ss_ep.fence_done);
	if (smbd_fake(sk)) {
		smbd_fake(sk)->destroy(sk);
		sk->ss_ep.send_cq = NULL;
		sk->ss_ep.recv_cq = NULL;
		sk->ss_ep.pd = NULL;
	} else if (sk->ss_ep.qp) {
		rdma_destroy_qp(id);
	}
	sk->ss_ep.qp = NULL;
	/* No event comes after the queue pair is gone. */
	cancel_work_sync(&sk->ss_ep.qp_event_work);
	if (sk->ss_ep.grave)
		smbd_cq_bury(sk, READ_ONCE(sk->ss_ep.dead));
	else
		smbd_ops_free_orphans(sk);
	smbd_tx_release(sk);
	smbd_xfer_free(sk);
	smbd_mr_free(sk);
	if (sk->ss_ep.pd)
		ib_dealloc_pd(sk->ss_ep.pd);
	sk->ss_ep.pd = NULL;
	/* The device may go now; debugfs keeps its name (ss_ep.devname). */
	WRITE_ONCE(sk->ss_ep.ibdev, NULL);
}

/*
 * The queue pair's asynchronous events. A provider may call this in any
 * context, hard IRQ included (mlx4 does, from its event queue's
 * interrupt): it takes no lock and does not sleep. A fatal event is
 * recorded and the work ends the connection.
 */
static void smbd_qp_event(struct ib_event *event, void *ctx)
{
	struct smbd_sock *sk = ctx;

	switch (event->event) {
	case IB_EVENT_CQ_ERR:
	case IB_EVENT_QP_FATAL:
	case IB_EVENT_QP_REQ_ERR:
	case IB_EVENT_QP_ACCESS_ERR:
		atomic_cmpxchg(&sk->ss_ep.qp_event, 0, event->event + 1);
		queue_work(smbd_wq, &sk->ss_ep.qp_event_work);
		break;
	default:
		break;
	}
}

/* A fatal queue pair event, from process context (smbd_qp_event()). */
static void smbd_qp_event_work(struct work_struct *work)
{
	struct smbd_sock *sk = container_of(work, struct smbd_sock,
					    ss_ep.qp_event_work);
	int ev = atomic_read(&sk->ss_ep.qp_event) - 1;

	/* On iWARP a peer's teardown often ends this way: no alarm. */
	if (READ_ONCE(sk->ss_state) == SMBD_CONNECTED)
		pr_warn_ratelimited("QP error event %s\n",
				    ib_event_msg(ev));
	smbd_sock_error(sk, -ECONNABORTED);
}

/*
 * How far a scatter entry of an RDMA Read or Write for @ibdev may grow:
 * what its DMA device maps as one segment, in bytes and within its
 * segment boundary, and (through a bounce buffer, as swiotlb or Xen's
 * would) in one mapping; at least a page. A soft device (rxe, siw)
 * reaches memory by its kernel address: no limit.
 */
static void smbd_ep_seg_limit(struct ib_device *ibdev,
			      struct smbd_sg_limit *lim)
{
	size_t max = ib_dma_max_seg_size(ibdev);

	lim->boundary = ULONG_MAX;
	if (!ib_uses_virt_dma(ibdev)) {
		max = min(max, dma_max_mapping_size(ibdev->dma_device));
		lim->boundary = dma_get_seg_boundary(ibdev->dma_device);
	}
	lim->max = max_t(size_t, rounddown(max, PAGE_SIZE), PAGE_SIZE);
}

/*
 * Everything sized from the device: queue depths from max_qp_wr, the
 * read depths from max_qp_rd_atom/max_qp_init_rd_atom ([MS-SMBD] 6).
 * @mrs: room for an MR pool. Returns the gather entries a send request
 * may have, or -ENOMEM when the device's queues are too small for the
 * parameters (smbd_dev_short() already refused a device too small for
 * the least), or its registrations shorter than two pages.
 */
static int smbd_ep_size(struct smbd_sock *sk, const struct smbd_device *sd,
			bool mrs)
{
	u32 room, qp_sge, rw_wrs, extra;

	sk->ss_ep.iwarp = sd->sd_iwarp;
	sk->ss_ep.frmr_pages = sd->sd_max_frmr_pages;
	sk->ss_ep.rw_chunk = smbd_rw_chunk_bytes(sd->sd_max_frmr_pages);
	sk->ss_ep.rw_read_chunk = smbd_rw_read_chunk_bytes(sd);
	sk->ss_ep.responder_resources = min_t(u32, sd->sd_max_rd_atom, 32);
	sk->ss_ep.initiator_depth = min_t(u32, sd->sd_max_init_rd_atom, 8);
	qp_sge = min_t(u32, sd->sd_max_send_sge, SMBD_QP_SGE_MAX);

	/*
	 * The send queue holds the sends, a registration and an
	 * invalidation per MR, and the RDMA work of every rdma_rw context
	 * (a chunk's pages over the gather limit, plus the registration
	 * and invalidation rdma_rw adds on iWARP reads, which it counts
	 * itself in max_send_wr but not in our completion queue). One slot
	 * of each queue stays free for ib_drain_qp(), and two of the send
	 * queue: for a negotiation probe that may still be out once
	 * connected (smbd_neg_probe_work()), and for the fence
	 * (smbd_qp_fence()).
	 */
	/*
	 * Registrations are the initiator's (an SMB2 client's buffers,
	 * [MS-SMBD] 3.1.4.3); a responder moves data with rdma_rw and gets
	 * a pool only when its consumer asks for one.
	 */
	if (!mrs)
		sk->ss_rdma.nr_reg = 0;
	else if (sk->ss_params.mr_count)
		sk->ss_rdma.nr_reg = sk->ss_params.mr_count;
	else if (sk->ss_responder)
		sk->ss_rdma.nr_reg = 0;
	else
		sk->ss_rdma.nr_reg =
			clamp_t(u32, 2 * sk->ss_ep.responder_resources, 8, 64);
	sk->ss_rdma.rw_ctxs = SMBD_RW_CTXS;
	rw_wrs = smbd_rw_wrs(sd, qp_sge);
	extra = 2 * sk->ss_rdma.nr_reg + rw_wrs;
	/*
	 * rdma_rw adds up to three requests per context to the send queue
	 * (smbd_qp_create()'s max_rdma_ctxs), and the send completion
	 * queue is as deep: neither may pass the device's limits.
	 */
	room = min_t(u32, sd->sd_max_qp_wr, sd->sd_max_cqe);
	/*
	 * A pool smbd chose (not the consumer's mr_count) shrinks towards
	 * the 8 smbd_dev_short() counts on, to fit a small queue.
	 */
	if (mrs && !sk->ss_params.mr_count && sk->ss_rdma.nr_reg > 8 &&
	    room < extra + 16 + 3 + 3 * sk->ss_rdma.rw_ctxs) {
		sk->ss_rdma.nr_reg = 8;
		if (room > rw_wrs + 16 + 3 + 3 * sk->ss_rdma.rw_ctxs + 2 * 8)
			sk->ss_rdma.nr_reg = (room - rw_wrs - 16 - 3 -
					 3 * sk->ss_rdma.rw_ctxs) / 2;
		extra = 2 * sk->ss_rdma.nr_reg + rw_wrs;
	}
	if (!sk->ss_ep.rw_chunk ||
	    room < extra + 16 + 3 + 3 * sk->ss_rdma.rw_ctxs) {
		pr_warn_ratelimited("%s: max_qp_wr/max_cqe %u below the %u these parameters need (%u MRs)\n",
				    sk->ss_ep.devname, room,
				    extra + 16 + 3 + 3 * sk->ss_rdma.rw_ctxs,
				    sk->ss_rdma.nr_reg);
		return -ENOMEM;
	}
	room -= 3;
	sk->ss_tx.nr = min_t(u32, sk->ss_params.send_credit_target,
			     room - extra - 3 * sk->ss_rdma.rw_ctxs);
	sk->ss_rx.nr = min_t(u32, sk->ss_params.recv_credit_max, room);
	sk->ss_params.recv_credit_max = sk->ss_rx.nr;
	sk->ss_ep.sq_depth = sk->ss_tx.nr + extra + 3;
	sk->ss_ep.rq_depth = sk->ss_rx.nr + 1;
	return qp_sge;
}

/*
 * The verbs objects of an endpoint on a real device, sized by
 * smbd_ep_size() (@qp_sge gather entries per send): the protection
 * domain, the completion queues and the queue pair of @id. On failure
 * what was made stays for smbd_qp_destroy().
 */
static int smbd_ep_create_verbs(struct smbd_sock *sk, struct rdma_cm_id *id,
				int qp_sge)
{
	struct ib_device *ibdev = id->device;
	struct ib_qp_init_attr attr = {};
	enum ib_poll_context poll;
	int ret;

	ret = smbd_cq_grave_alloc(sk, ibdev);
	if (ret)
		return ret;
	sk->ss_ep.pd = ib_alloc_pd(ibdev, 0);
	if (IS_ERR(sk->ss_ep.pd)) {
		ret = PTR_ERR(sk->ss_ep.pd);
		sk->ss_ep.pd = NULL;
		return ret;
	}
	poll = smbd_cq_poll_context();
	sk->ss_ep.send_cq = ib_alloc_cq_any(ibdev, sk, sk->ss_ep.sq_depth +
					 3 * sk->ss_rdma.rw_ctxs, poll);
	if (IS_ERR(sk->ss_ep.send_cq)) {
		ret = PTR_ERR(sk->ss_ep.send_cq);
		sk->ss_ep.send_cq = NULL;
		return ret;
	}
	sk->ss_ep.recv_cq = ib_alloc_cq_any(ibdev, sk, sk->ss_ep.rq_depth, poll);
	if (IS_ERR(sk->ss_ep.recv_cq)) {
		ret = PTR_ERR(sk->ss_ep.recv_cq);
		sk->ss_ep.recv_cq = NULL;
		return ret;
	}
	WRITE_ONCE(sk->ss_ep.send_cq_id, sk->ss_ep.send_cq->res.id);
	WRITE_ONCE(sk->ss_ep.recv_cq_id, sk->ss_ep.recv_cq->res.id);

	attr.event_handler = smbd_qp_event;
	attr.qp_context = sk;
	attr.send_cq = sk->ss_ep.send_cq;
	attr.recv_cq = sk->ss_ep.recv_cq;
	attr.cap.max_send_wr = sk->ss_ep.sq_depth;
	attr.cap.max_recv_wr = sk->ss_ep.rq_depth;
	attr.cap.max_send_sge = qp_sge;
	attr.cap.max_rdma_ctxs = sk->ss_rdma.rw_ctxs;
	attr.cap.max_recv_sge = 1;
	attr.sq_sig_type = IB_SIGNAL_REQ_WR;
	attr.qp_type = IB_QPT_RC;
	attr.port_num = id->port_num;
	ret = rdma_create_qp(id, sk->ss_ep.pd, &attr);
	if (ret)
		return ret;
	sk->ss_ep.qp = id->qp;
	/* The provider may round up, never down. */
	sk->ss_ep.tx_sge = min_t(u32, attr.cap.max_send_sge, SMBD_TX_SGE_MAX);
	return 0;
}

/*
 * A software RoCE device (rxe) answers from the host's CPU, and its
 * responder has no congestion control: each ACK timeout resends up to
 * 128 packets into the queue that made the ACK late. Under load (16 busy
 * connections in a TCG guest) ACKs lagged past rdma_cm's default (about
 * 0.5 s), and at times past 2.1 s in the 16 x 64 MiB soak. Give it about
 * 8.6 s per try: a dead peer is still found within about a minute (7
 * tries), and keep-alive sooner. The ack_timeout parameter sets it on
 * any RoCE or InfiniBand device.
 */
static int smbd_ep_ack_timeout(struct smbd_sock *sk, struct rdma_cm_id *id)
{
	u8 ack = sk->ss_params.ack_timeout ?: SMBD_SOFT_ROCE_ACK_TIMEOUT;
	int ret;

	if (sk->ss_ep.iwarp || !(sk->ss_params.ack_timeout ||
				 ib_uses_virt_dma(sk->ss_ep.ibdev)))
		return 0;
	ret = rdma_set_ack_timeout(id, ack);
	if (ret)
		return ret;
	/*
	 * 4.096 us << ack (IBA 9.7.6.1.3), in ms, rounded up; ack is at
	 * most 31 (smbd_params_check()): under 9e6 ms.
	 */
	sk->ss_ep.resend_ms = DIV_ROUND_UP_ULL(4096ULL << ack, NSEC_PER_MSEC);
	return 0;
}

/*
 * smbd_ep_init() - build a socket's endpoint on a device
 * @sk: a socket from smbd_sock_alloc(), its ss_ep.cm_mutex held
 * @id: its connection manager id (a fake's may be NULL)
 * @ibdev: the device
 * @sd: what smbd knows of it (smbd_dev_get())
 * @fake: a KUnit suite's fake endpoint, whose verbs objects it takes;
 *	NULL on a real device
 *
 * The one set-up of an endpoint, for a real device and a fake alike: the
 * device's name and port, the sizes (smbd_ep_size()), the verbs objects
 * (made here, or the fake's), which sends are signalled, the local ACK
 * timeout (only where rdma_cm has a real id), the send and receive
 * buffers, and the MR pool (a fake has one only if it asks). On failure
 * what was made stays for smbd_qp_destroy().
 */
static int smbd_ep_init(struct smbd_sock *sk, struct rdma_cm_id *id,
			struct ib_device *ibdev, const struct smbd_device *sd,
			const struct smbd_fake_ep *fake)
{
	bool mrs = fake ? fake->mrs : true;
	int qp_sge, ret;

	lockdep_assert_held(&sk->ss_ep.cm_mutex);
	/* From now on smbd_socks_dead() finds the socket by its device. */
	WRITE_ONCE(sk->ss_ep.ibdev, ibdev);
	strscpy(sk->ss_ep.devname, fake ? "fake" : dev_name(&ibdev->dev),
		sizeof(sk->ss_ep.devname));
	if (!fake)
		WRITE_ONCE(sk->ss_ep.port_num, id->port_num);
	qp_sge = smbd_ep_size(sk, sd, mrs);
	if (qp_sge < 0)
		return qp_sge;
	if (fake) {
		sk->ss_ep.pd = fake->pd;
		sk->ss_ep.send_cq = fake->send_cq;
		sk->ss_ep.recv_cq = fake->recv_cq;
		sk->ss_ep.qp = fake->qp;
		sk->ss_ep.tx_sge = min_t(u32, qp_sge, SMBD_TX_SGE_MAX);
	} else {
		ret = smbd_ep_create_verbs(sk, id, qp_sge);
		if (!ret)
			ret = smbd_ep_ack_timeout(sk, id);
		if (ret)
			return ret;
	}
	/*
	 * siw hands the pages of an unsignalled request of a page or more
	 * to TCP as they are (zero-copy) and counts it done once queued
	 * there: a later signalled completion does not mean TCP has sent
	 * them, and a buffer reused then goes out changed. It copies the
	 * data of a signalled request. So on siw every send of a page or
	 * more is signalled; elsewhere only a batch's last one.
	 */
	sk->ss_ep.tx_sig_bytes = ibdev->ops.driver_id == RDMA_DRIVER_SIW ?
				 PAGE_SIZE : U32_MAX;
	if (!fake)
		smbd_ep_seg_limit(ibdev, &sk->ss_ep.rw_seg);
	ret = smbd_xfer_alloc(sk, smbd_recv_done, smbd_send_done);
	if (!ret && mrs)
		ret = smbd_mr_alloc(sk);
	return ret;
}

/**
 * smbd_qp_create() - build a connection's endpoint on its id's device
 * @sk: a socket from smbd_sock_alloc()
 * @id: its connection manager id, bound to a device
 *
 * smbd_ep_init() on a real device. On failure nothing of it is left.
 *
 * Context: process; sleeps. Caller holds @sk->ss_ep.cm_mutex.
 * Return: 0, -ENODEV for a device smbd does not know or that died, or the
 * set-up's errno.
 */
int smbd_qp_create(struct smbd_sock *sk, struct rdma_cm_id *id)
{
	struct smbd_device sd;
	int ret;

	lockdep_assert_held(&sk->ss_ep.cm_mutex);
	if (!smbd_dev_get(id->device, &sd))
		return -ENODEV;
	ret = smbd_ep_init(sk, id, id->device, &sd, NULL);
	/*
	 * A fatal error the device reported since smbd_dev_get() above may
	 * have ended its connections before it could see this one: both
	 * take smbd_devices_lock, so one of them sees the other.
	 */
	if (!ret && !smbd_dev_get(id->device, &sd))
		ret = -EIO;
	if (ret)
		smbd_qp_destroy(sk, id);
	return ret;
}

/**
 * smbd_ep_undo() - take down an endpoint that never carried a connection
 * @sk: a connection request's child that failed before it was published
 * @id: its id, which rdma_cm destroys
 *
 * The gate first, as a teardown does: a post after the drain's marker
 * would leave the device a request when the queue pair goes. Then the
 * drain, and every verbs object freed.
 *
 * Context: process; sleeps. Caller holds @sk->ss_ep.cm_mutex.
 */
void smbd_ep_undo(struct smbd_sock *sk, struct rdma_cm_id *id)
{
	lockdep_assert_held(&sk->ss_ep.cm_mutex);
	smbd_qp_gate_shut(sk);
	if (sk->ss_ep.qp)
		smbd_qp_drain(sk);
	smbd_qp_destroy(sk, id);
}

/**
 * smbd_verbs_teardown() - stop every use of the queue pair and free it
 * @sk: the socket
 * @id: its connection manager id, detached from @sk by the caller
 * @disconnect: tell the peer first (rdma_disconnect)
 *
 * Steps: no new work (the state is past CONNECTED); every sender and
 * reader has left (their mutexes); the peer is told; the gate closes and
 * the threads inside it leave; the queue pair is drained so every
 * completion has run; the waits nothing completed are ended and their
 * threads leave; timers and work are stopped; queue pair, CQs, buffers
 * and PD are freed.
 *
 * Context: process; sleeps. Caller holds @sk->ss_ep.teardown_mutex and has
 * finished the event work (it runs the consumer's upcalls, which may
 * take that mutex).
 */
void smbd_verbs_teardown(struct smbd_sock *sk, struct rdma_cm_id *id,
			 bool disconnect)
{
	lockdep_assert_held(&sk->ss_ep.teardown_mutex);
	/* The negotiation probe relies on it (smbd_neg_probe_work()). */
	WARN_ON_ONCE(READ_ONCE(sk->ss_state) == SMBD_NEGOTIATING);

	mutex_lock(&sk->ss_send_mutex);
	mutex_lock(&sk->ss_recv_mutex);
	if (disconnect)
		smbd_ep_disconnect(sk, id);
	/*
	 * "Posted work" in Documentation/smbd.rst: no thread posts after
	 * the gate closes, the drain then sees every request posted, and
	 * only after it are the waits that nothing completed ended.
	 */
	smbd_qp_close(sk);
	if (sk->ss_ep.qp)
		smbd_qp_drain(sk);
	smbd_ops_abort(sk);
	cancel_delayed_work_sync(&sk->ss_neg_work);
	cancel_delayed_work_sync(&sk->ss_probe_work);
	cancel_delayed_work_sync(&sk->ss_ka_work);
	cancel_work_sync(&sk->ss_grant_work);
	smbd_qp_destroy(sk, id);
	mutex_unlock(&sk->ss_recv_mutex);
	mutex_unlock(&sk->ss_send_mutex);
}

#if IS_ENABLED(CONFIG_KUNIT)
/**
 * smbd_ep_fake_attach() - give a socket a KUnit suite's fake endpoint
 * @sk: a socket from smbd_sock_alloc(), in CREATED
 * @ep: the fake: its calls, device limits and verbs objects. A device
 *	without a dma_device has buffers mapped at their kernel addresses
 *	(ib_uses_virt_dma()), as rxe and siw have.
 *
 * smbd_ep_init(), as on a device, with the fake's verbs objects: the
 * sizing, the buffers, and an MR pool only if @ep asks for one. Nothing is posted and the state
 * is left as it is. A listener's connection request calls it through
 * the listener's fake (&smbd_fake_qp.child) with @sk's id already set,
 * and @ep->cm_id NULL.
 *
 * Context: process; may sleep. Caller holds @sk->ss_ep.cm_mutex.
 * Return: 0 or a negative errno (the socket is then only to be freed:
 * smbd_sock_release(), or the failing handler's own path).
 */
int smbd_ep_fake_attach(struct smbd_sock *sk, const struct smbd_fake_ep *ep)
{
	lockdep_assert_held(&sk->ss_ep.cm_mutex);
	sk->ss_ep.fake = ep->ops;
	if (ep->cm_id) {
		ep->cm_id->context = sk;
		WRITE_ONCE(sk->ss_ep.cm_id, ep->cm_id);
	}
	return smbd_ep_init(sk, ep->cm_id, ep->ibdev, &ep->sd, ep);
}
EXPORT_SYMBOL_IF_KUNIT(smbd_ep_fake_attach);

#endif

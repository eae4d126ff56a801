// SPDX-License-Identifier: GPL-2.0
/*
 * smbd: SMB Direct ([MS-SMBD]) for in-kernel consumers.
 *
 * This file owns the module, the RDMA devices and the connections: an
 * ib_client records what each device can do (debugfs smbd/devices); the
 * connection manager handler, queue pair set-up, connect ([MS-SMBD]
 * 3.1.4.1), listen and accept (3.1.7.2), the one state-change function,
 * the error funnel and the one teardown path live here. The data path is
 * smbd_xfer.c.
 */

#include <linux/debugfs.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>

#include "smbd_internal.h"

static LIST_HEAD(smbd_devices);
/* Every socket, for debugfs smbd/connections. */
static LIST_HEAD(smbd_socks);
static DEFINE_MUTEX(smbd_socks_lock);
static DEFINE_MUTEX(smbd_devices_lock);	/* protects smbd_devices */
static struct dentry *smbd_debugfs_root;
static struct ib_client smbd_ib_client;
struct workqueue_struct *smbd_wq;

/*
 * [MS-SMBD] 2.1 needs reliable in-order messages and RDMA read and
 * write; memory registration needs fast registration work requests.
 */
static bool smbd_ib_usable(struct ib_device *ibdev)
{
	const struct ib_device_attr *attr = &ibdev->attrs;

	if (!(attr->device_cap_flags & IB_DEVICE_MEM_MGT_EXTENSIONS))
		return false;
	return attr->max_send_sge >= 2 && attr->max_recv_sge >= 1 &&
	       attr->max_qp_wr > 0 && attr->max_fast_reg_page_list_len > 0;
}

static int smbd_ib_add(struct ib_device *ibdev)
{
	const struct ib_device_attr *attr = &ibdev->attrs;
	struct smbd_device *sd;

	if (!smbd_ib_usable(ibdev)) {
		ibdev_info(ibdev, "smbd: no fast registration or too few SGEs, not used\n");
		return -EOPNOTSUPP;
	}

	sd = kzalloc_node(sizeof(*sd), GFP_KERNEL, ibdev_to_node(ibdev));
	if (!sd)
		return -ENOMEM;
	sd->sd_ibdev = ibdev;
	sd->sd_iwarp = rdma_protocol_iwarp(ibdev, rdma_start_port(ibdev));
	sd->sd_max_qp_wr = attr->max_qp_wr;
	sd->sd_max_send_sge = attr->max_send_sge;
	sd->sd_max_recv_sge = attr->max_recv_sge;
	sd->sd_max_cqe = attr->max_cqe;
	sd->sd_max_rd_atom = attr->max_qp_rd_atom;
	sd->sd_max_init_rd_atom = attr->max_qp_init_rd_atom;
	sd->sd_max_frmr_pages = attr->max_fast_reg_page_list_len;
	sd->sd_max_sgl_rd = attr->max_sgl_rd;

	mutex_lock(&smbd_devices_lock);
	list_add_tail(&sd->sd_list, &smbd_devices);
	mutex_unlock(&smbd_devices_lock);
	ib_set_client_data(ibdev, &smbd_ib_client, sd);

	ibdev_info(ibdev, "smbd: %s device, qp_wr %u send_sge %u frmr_pages %u ird %u ord %u\n",
		   sd->sd_iwarp ? "iWARP" : "IB/RoCE", sd->sd_max_qp_wr,
		   sd->sd_max_send_sge, sd->sd_max_frmr_pages,
		   sd->sd_max_rd_atom, sd->sd_max_init_rd_atom);
	return 0;
}

static void smbd_ib_remove(struct ib_device *ibdev, void *client_data)
{
	struct smbd_device *sd = client_data;

	mutex_lock(&smbd_devices_lock);
	list_del(&sd->sd_list);
	mutex_unlock(&smbd_devices_lock);
	ibdev_info(ibdev, "smbd: device removed\n");
	kfree(sd);
}

static struct ib_client smbd_ib_client = {
	.name = "smbd",
	.add = smbd_ib_add,
	.remove = smbd_ib_remove,
};

/* ---- sockets: state ---- */

static const char * const smbd_state_names[] = {
	[SMBD_CREATED] = "created",
	[SMBD_CONNECTING] = "connecting",
	[SMBD_LISTENING] = "listening",
	[SMBD_NEGOTIATING] = "negotiating",
	[SMBD_CONNECTED] = "connected",
	[SMBD_DISCONNECTING] = "disconnecting",
	[SMBD_CLOSED] = "closed",
};

/**
 * smbd_set_state() - the one place a socket changes state
 * @sk: the socket
 * @state: the new state
 *
 * Refuses transitions the life cycle does not have (nothing leaves
 * CLOSED; nothing goes back to CONNECTED), so a late completion or event
 * can never revive a connection being torn down. Wakes every waiter.
 *
 * Context: any; caller holds @sk->ss_lock.
 * Return: true if the state changed.
 */
bool smbd_set_state(struct smbd_sock *sk, enum smbd_state state)
{
	enum smbd_state old = sk->ss_state;
	bool ok;

	lockdep_assert_held(&sk->ss_lock);

	switch (state) {
	case SMBD_CONNECTING:
	case SMBD_LISTENING:
		ok = old == SMBD_CREATED;
		break;
	case SMBD_NEGOTIATING:
		ok = old == SMBD_CREATED || old == SMBD_CONNECTING;
		break;
	case SMBD_CONNECTED:
		ok = old == SMBD_NEGOTIATING;
		break;
	case SMBD_DISCONNECTING:
		ok = old == SMBD_CONNECTING || old == SMBD_NEGOTIATING ||
		     old == SMBD_CONNECTED;
		break;
	case SMBD_CLOSED:
		ok = old != SMBD_CLOSED;
		break;
	default:
		ok = false;
	}
	if (!ok)
		return false;
	sk->ss_state = state;
	pr_debug("smbd: %p %s -> %s\n", sk, smbd_state_names[old],
		 smbd_state_names[state]);
	wake_up_all(&sk->ss_wait);
	return true;
}

/**
 * smbd_sock_error() - end a connection because of an error
 * @sk: the socket
 * @err: negative errno reported to the consumer from now on
 *
 * The single funnel for protocol violations, provider errors, timeouts
 * and peer disconnects: the first error wins, the state moves to
 * DISCONNECTING and the event work disconnects and tells the consumer.
 *
 * Context: any (completion handlers run in softirq).
 */
void smbd_sock_error(struct smbd_sock *sk, int err)
{
	spin_lock_bh(&sk->ss_lock);
	if (!sk->ss_err)
		sk->ss_err = err;
	/*
	 * Queued with the state change, under the lock: once release has
	 * set DISCONNECTING, nothing queues the work after its cancel.
	 */
	if (smbd_set_state(sk, SMBD_DISCONNECTING))
		queue_work(smbd_wq, &sk->ss_disconnect_work);
	spin_unlock_bh(&sk->ss_lock);
	smbd_xfer_wake(sk);
}

/* A listener's reap work releases children that died unaccepted. */
static void smbd_reap_work(struct work_struct *work)
{
	struct smbd_sock *sk = container_of(work, struct smbd_sock,
					    ss_reap_work);
	struct smbd_sock *child, *tmp;
	LIST_HEAD(dead);

	spin_lock_bh(&sk->ss_lock);
	list_for_each_entry_safe(child, tmp, &sk->ss_pending, ss_accept_node) {
		if (READ_ONCE(child->ss_state) >= SMBD_DISCONNECTING) {
			list_move(&child->ss_accept_node, &dead);
			child->ss_queued = SMBD_Q_NONE;
			sk->ss_pending_len--;
		}
	}
	list_for_each_entry_safe(child, tmp, &sk->ss_accept_q, ss_accept_node) {
		if (READ_ONCE(child->ss_state) >= SMBD_DISCONNECTING) {
			list_move(&child->ss_accept_node, &dead);
			child->ss_queued = SMBD_Q_NONE;
			sk->ss_accept_len--;
		}
	}
	spin_unlock_bh(&sk->ss_lock);
	list_for_each_entry_safe(child, tmp, &dead, ss_accept_node) {
		list_del_init(&child->ss_accept_node);
		smbd_sock_release(child);
	}
}

/* Tell the consumer what happened; disconnect; reap a dead child. */
static void smbd_event_work(struct work_struct *work)
{
	struct smbd_sock *sk = container_of(work, struct smbd_sock,
					    ss_disconnect_work);
	void (*done)(struct smbd_sock *sk, int status);
	struct smbd_sock *listener;
	struct rdma_cm_id *id;
	enum smbd_state state;
	int err;

	spin_lock_bh(&sk->ss_lock);
	state = sk->ss_state;
	err = sk->ss_err;
	done = NULL;
	if (state >= SMBD_CONNECTED || err) {
		done = sk->ss_connect_done;
		sk->ss_connect_done = NULL;
	}
	listener = READ_ONCE(sk->ss_listener);
	spin_unlock_bh(&sk->ss_lock);

	/*
	 * A detached id is its new owner's to disconnect. Not under
	 * ss_cm_mutex: on iWARP rdma_disconnect() can wait for the connect
	 * reply, whose handler takes that mutex. The id stays valid: whoever
	 * detached it cancels this work before destroying it.
	 */
	if (state == SMBD_DISCONNECTING) {
		mutex_lock(&sk->ss_cm_mutex);
		id = sk->ss_cm_id;
		mutex_unlock(&sk->ss_cm_mutex);
		if (id)
			rdma_disconnect(id);
	}
	if (done)
		done(sk, state == SMBD_CONNECTED ? 0 : (err ?: -ECONNRESET));
	if (listener) {
		if (state >= SMBD_DISCONNECTING)
			queue_work(smbd_wq, &listener->ss_reap_work);
		return;
	}
	if (sk->ss_ops && sk->ss_ops->state_change)
		sk->ss_ops->state_change(sk);
}

/*
 * The Negotiation Timer expired ([MS-SMBD] 3.1.4.1, 3.1.7.2): say once
 * where the connection stopped, then end it. Called by the timer's work
 * and by a blocking connect whose wait ran out first.
 */
static void smbd_neg_expired(struct smbd_sock *sk)
{
	enum smbd_state state = READ_ONCE(sk->ss_state);
	int ev = READ_ONCE(sk->ss_cm_last);
	unsigned long neg = READ_ONCE(sk->ss_neg_trace);
	char probes[48] = "";

	if (state >= SMBD_CONNECTED)
		return;
	/*
	 * Where it stopped: resolution, the CM exchange, or SMBD; and in
	 * SMBD, which side lost the message (ours was never sent, never
	 * completed by the provider, or the peer's never came, though its
	 * queue pair answered our probes).
	 */
	if (!sk->ss_responder && !sk->ss_iwarp && neg & BIT(SMBD_NEG_SENT))
		snprintf(probes, sizeof(probes), "; %u probes answered%s",
			 READ_ONCE(sk->ss_neg_probes),
			 neg & BIT(SMBD_NEG_PROBE_UNPOSTED) ? ", one unposted" :
			 "");
	if (!test_and_set_bit(SMBD_NEG_EXPIRED, &sk->ss_neg_trace))
		pr_info_ratelimited("smbd: %s negotiation timed out (%s, last CM event: %s; our Negotiate %s %s, %s from the peer%s)\n",
				    sk->ss_responder ? "responder" : "initiator",
				    smbd_state_names[state],
				    ev < 0 ? "none" : rdma_event_msg(ev),
				    sk->ss_responder ? "Response" : "Request",
				    !(neg & BIT(SMBD_NEG_POSTED)) ? "not posted" :
				    neg & BIT(SMBD_NEG_SEND_FAILED) ? "failed" :
				    neg & BIT(SMBD_NEG_SENT) ? "sent" :
				    "posted but not completed",
				    neg & BIT(SMBD_NEG_RECEIVED) ? "a message" :
				    "nothing", probes);
	smbd_sock_error(sk, -ETIMEDOUT);
}

static void smbd_neg_timeout(struct work_struct *work)
{
	smbd_neg_expired(container_of(to_delayed_work(work),
				      struct smbd_sock, ss_neg_work));
}

static struct smbd_sock *smbd_sock_alloc(struct net *net,
					 const struct smbd_params *params,
					 bool responder)
{
	struct smbd_sock *sk = kzalloc(sizeof(*sk), GFP_KERNEL);

	if (!sk)
		return NULL;
	sk->ss_net = net;
	sk->ss_params = *params;
	sk->ss_responder = responder;
	spin_lock_init(&sk->ss_lock);
	init_waitqueue_head(&sk->ss_wait);
	sk->ss_state = SMBD_CREATED;
	sk->ss_cm_last = -1;
	INIT_LIST_HEAD(&sk->ss_rx_free);
	INIT_LIST_HEAD(&sk->ss_rx_ready);
	INIT_LIST_HEAD(&sk->ss_tx_free);
	INIT_LIST_HEAD(&sk->ss_accept_node);
	INIT_LIST_HEAD(&sk->ss_pending);
	INIT_LIST_HEAD(&sk->ss_accept_q);
	INIT_LIST_HEAD(&sk->ss_reg_free);
	INIT_LIST_HEAD(&sk->ss_op_list);
	mutex_init(&sk->ss_send_mutex);
	mutex_init(&sk->ss_recv_mutex);
	mutex_init(&sk->ss_teardown_mutex);
	mutex_init(&sk->ss_cm_mutex);
	INIT_WORK(&sk->ss_grant_work, smbd_grant_work);
	INIT_DELAYED_WORK(&sk->ss_ka_work, smbd_ka_work);
	INIT_DELAYED_WORK(&sk->ss_neg_work, smbd_neg_timeout);
	INIT_DELAYED_WORK(&sk->ss_probe_work, smbd_neg_probe_work);
	INIT_WORK(&sk->ss_disconnect_work, smbd_event_work);
	INIT_WORK(&sk->ss_reap_work, smbd_reap_work);
	mutex_lock(&smbd_socks_lock);
	list_add_tail(&sk->ss_all_node, &smbd_socks);
	mutex_unlock(&smbd_socks_lock);
	return sk;
}

/* The last of a socket: off the debugfs list, freed. */
static void smbd_sock_free(struct smbd_sock *sk)
{
	mutex_lock(&smbd_socks_lock);
	list_del(&sk->ss_all_node);
	mutex_unlock(&smbd_socks_lock);
	kfree(sk);
}

/**
 * smbd_sock_create() - a new, unconnected SMB Direct socket
 * @net: network namespace for address resolution
 * @params: local parameters, or NULL for the defaults of the role chosen
 *	later (see smbd_params_init())
 * @skp: the new socket
 *
 * Context: process; may sleep.
 * Return: 0, -EINVAL for parameters smbd could not honour, -ENOMEM.
 */
int smbd_sock_create(struct net *net, const struct smbd_params *params,
		     struct smbd_sock **skp)
{
	struct smbd_params def;
	struct smbd_sock *sk;

	if (!params) {
		smbd_params_init(&def, false);
		params = &def;
	}
	if (smbd_params_check(params))
		return -EINVAL;
	sk = smbd_sock_alloc(net, params, false);
	if (!sk)
		return -ENOMEM;
	/* The role is known at connect or listen: see smbd_sock_listen(). */
	sk->ss_params_default = params == &def;
	*skp = sk;
	return 0;
}
EXPORT_SYMBOL_NS_GPL(smbd_sock_create, SMBD);

/**
 * smbd_sock_set_ops() - install the consumer's upcalls
 * @sk: the socket
 * @ops: upcalls, or NULL for none
 * @priv: the consumer's pointer, returned by smbd_sock_priv()
 *
 * Context: process. Call before connecting, or right after accepting.
 */
void smbd_sock_set_ops(struct smbd_sock *sk, const struct smbd_sock_ops *ops,
		       void *priv)
{
	spin_lock_bh(&sk->ss_lock);
	sk->ss_priv = priv;
	sk->ss_ops = ops;
	spin_unlock_bh(&sk->ss_lock);
}
EXPORT_SYMBOL_NS_GPL(smbd_sock_set_ops, SMBD);

/**
 * smbd_sock_priv() - the consumer's pointer
 * @sk: the socket
 *
 * Context: any.
 * Return: what smbd_sock_set_ops() installed.
 */
void *smbd_sock_priv(const struct smbd_sock *sk)
{
	return READ_ONCE(sk->ss_priv);
}
EXPORT_SYMBOL_NS_GPL(smbd_sock_priv, SMBD);

/* ---- queue pair ---- */

/*
 * Free the verbs objects; the queue pair, if any, must be drained. By
 * the handler that failed to build them (ss_cm_mutex), or by a teardown
 * (ss_teardown_mutex) once the id is detached.
 */
static void smbd_qp_destroy(struct smbd_sock *sk, struct rdma_cm_id *id)
{
	lockdep_assert(lockdep_is_held(&sk->ss_cm_mutex) ||
		       lockdep_is_held(&sk->ss_teardown_mutex));
	if (sk->ss_qp) {
		rdma_destroy_qp(id);
		sk->ss_qp = NULL;
	}
	if (sk->ss_send_cq)
		ib_free_cq(sk->ss_send_cq);
	if (sk->ss_recv_cq)
		ib_free_cq(sk->ss_recv_cq);
	sk->ss_send_cq = NULL;
	sk->ss_recv_cq = NULL;
	smbd_xfer_free(sk);
	smbd_mr_free(sk);
	if (sk->ss_pd)
		ib_dealloc_pd(sk->ss_pd);
	sk->ss_pd = NULL;
}

static void smbd_qp_event(struct ib_event *event, void *ctx)
{
	struct smbd_sock *sk = ctx;

	switch (event->event) {
	case IB_EVENT_CQ_ERR:
	case IB_EVENT_QP_FATAL:
	case IB_EVENT_QP_REQ_ERR:
	case IB_EVENT_QP_ACCESS_ERR:
		/* On iWARP a peer's teardown often ends this way: no alarm. */
		if (READ_ONCE(sk->ss_state) == SMBD_CONNECTED)
			pr_warn_ratelimited("smbd: QP error event %s\n",
					    ib_event_msg(event->event));
		smbd_sock_error(sk, -ECONNABORTED);
		break;
	default:
		break;
	}
}

/*
 * Everything sized from the device: queue depths from max_qp_wr, the
 * read depths from max_qp_rd_atom/max_qp_init_rd_atom ([MS-SMBD] 6).
 * One send gather entry suffices (header and payload share a buffer).
 */
static int smbd_qp_create(struct smbd_sock *sk, struct rdma_cm_id *id)
{
	struct ib_device *ibdev = id->device;
	struct smbd_device *sd = ib_get_client_data(ibdev, &smbd_ib_client);
	struct ib_qp_init_attr attr = {};
	u32 room, qp_sge, rw_wrs, extra;
	int ret;

	lockdep_assert_held(&sk->ss_cm_mutex);
	if (!sd)
		return -ENODEV;
	sk->ss_ibdev = ibdev;
	sk->ss_iwarp = sd->sd_iwarp;

	sk->ss_responder_resources = min_t(u32, sd->sd_max_rd_atom, 32);
	sk->ss_initiator_depth = min_t(u32, sd->sd_max_init_rd_atom, 8);
	sk->ss_port_num = id->port_num;
	qp_sge = min_t(u32, sd->sd_max_send_sge, SMBD_QP_SGE_MAX);

	/*
	 * The send queue holds the sends, a registration and an
	 * invalidation per MR, and the RDMA work of every rdma_rw context
	 * (a chunk's pages over the gather limit, plus the registration
	 * and invalidation rdma_rw adds on iWARP reads, which it counts
	 * itself in max_send_wr but not in our completion queue). One slot
	 * of each queue stays free for ib_drain_qp(), and one of the send
	 * queue for a negotiation probe that may still be out once
	 * connected (smbd_neg_probe_work()).
	 */
	/*
	 * Registrations are the initiator's (an SMB2 client's buffers,
	 * [MS-SMBD] 3.1.4.3); a responder moves data with rdma_rw and gets
	 * a pool only when its consumer asks for one.
	 */
	if (sk->ss_params.mr_count)
		sk->ss_nr_reg = sk->ss_params.mr_count;
	else if (sk->ss_responder)
		sk->ss_nr_reg = 0;
	else
		sk->ss_nr_reg = clamp_t(u32, 2 * sk->ss_responder_resources,
					8, 64);
	sk->ss_rw_ctxs = SMBD_RW_CTXS;
	rw_wrs = sk->ss_rw_ctxs * (DIV_ROUND_UP(SMBD_RW_CHUNK_PAGES, qp_sge) + 3);
	extra = 2 * sk->ss_nr_reg + rw_wrs;
	room = min_t(u32, sd->sd_max_qp_wr, sd->sd_max_cqe) - 2;
	if (room < extra + 16)
		return -ENOMEM;
	sk->ss_nr_tx = min_t(u32, sk->ss_params.send_credit_target,
			     room - extra);
	sk->ss_nr_rx = min_t(u32, sk->ss_params.recv_credit_max, room);
	sk->ss_params.recv_credit_max = sk->ss_nr_rx;
	sk->ss_sq_depth = sk->ss_nr_tx + extra + 2;
	sk->ss_rq_depth = sk->ss_nr_rx + 1;

	sk->ss_pd = ib_alloc_pd(ibdev, 0);
	if (IS_ERR(sk->ss_pd)) {
		ret = PTR_ERR(sk->ss_pd);
		sk->ss_pd = NULL;
		return ret;
	}
	sk->ss_send_cq = ib_alloc_cq_any(ibdev, sk, sk->ss_sq_depth +
					 3 * sk->ss_rw_ctxs, IB_POLL_SOFTIRQ);
	if (IS_ERR(sk->ss_send_cq)) {
		ret = PTR_ERR(sk->ss_send_cq);
		sk->ss_send_cq = NULL;
		goto fail;
	}
	sk->ss_recv_cq = ib_alloc_cq_any(ibdev, sk, sk->ss_rq_depth,
					 IB_POLL_SOFTIRQ);
	if (IS_ERR(sk->ss_recv_cq)) {
		ret = PTR_ERR(sk->ss_recv_cq);
		sk->ss_recv_cq = NULL;
		goto fail;
	}

	attr.event_handler = smbd_qp_event;
	attr.qp_context = sk;
	attr.send_cq = sk->ss_send_cq;
	attr.recv_cq = sk->ss_recv_cq;
	attr.cap.max_send_wr = sk->ss_sq_depth;
	attr.cap.max_recv_wr = sk->ss_rq_depth;
	attr.cap.max_send_sge = qp_sge;
	attr.cap.max_rdma_ctxs = sk->ss_rw_ctxs;
	attr.cap.max_recv_sge = 1;
	attr.sq_sig_type = IB_SIGNAL_REQ_WR;
	attr.qp_type = IB_QPT_RC;
	attr.port_num = id->port_num;
	ret = rdma_create_qp(id, sk->ss_pd, &attr);
	if (ret)
		goto fail;
	sk->ss_qp = id->qp;
	/* The provider may round up, never down. */
	sk->ss_tx_sge = min_t(u32, attr.cap.max_send_sge, SMBD_TX_SGE_MAX);
	/*
	 * siw hands the pages of an unsignalled request of a page or more
	 * to TCP as they are (zero-copy) and counts it done once queued
	 * there: a later signalled completion does not mean TCP has sent
	 * them, and a buffer reused then goes out changed. It copies the
	 * data of a signalled request. So on siw every send of a page or
	 * more is signalled; elsewhere only a batch's last one.
	 */
	sk->ss_tx_sig_bytes = ibdev->ops.driver_id == RDMA_DRIVER_SIW ?
			      PAGE_SIZE : U32_MAX;

	/*
	 * A software RoCE device (rxe) answers from the host's CPU, and its
	 * responder has no congestion control: each ACK timeout resends up
	 * to 128 packets into the queue that made the ACK late. Under load
	 * (16 busy connections in a TCG guest) ACKs lagged past rdma_cm's
	 * default (about 0.5 s), and still past 2.1 s 11 and 45 times in two
	 * 16 x 64 MiB runs. Give it about 8.6 s per try: a dead peer is
	 * still found within about a minute (7 tries), and keep-alive
	 * sooner.
	 */
	if (!sk->ss_iwarp && (sk->ss_params.ack_timeout ||
			      ib_uses_virt_dma(ibdev))) {
		ret = rdma_set_ack_timeout(id, sk->ss_params.ack_timeout ?:
					   SMBD_SOFT_ROCE_ACK_TIMEOUT);
		if (ret)
			goto fail;
	}

	ret = smbd_xfer_alloc(sk);
	if (!ret)
		ret = smbd_mr_alloc(sk);
	if (ret)
		goto fail;
	return 0;
fail:
	smbd_qp_destroy(sk, id);
	return ret;
}

/**
 * smbd_verbs_teardown() - stop every use of the queue pair and free it
 * @sk: the socket
 * @id: its connection manager id, detached from @sk by the caller
 * @disconnect: tell the peer first (rdma_disconnect)
 *
 * Steps: no new work (the state is past CONNECTED); the event work is
 * finished; every sender and reader has left (their mutexes); the peer
 * is told; the queue pair is drained so every completion has run; timers
 * and work are stopped; queue pair, CQs, buffers and PD are freed.
 *
 * Context: process; sleeps. Caller holds @sk->ss_teardown_mutex.
 */
static void smbd_verbs_teardown(struct smbd_sock *sk, struct rdma_cm_id *id,
				bool disconnect)
{
	lockdep_assert_held(&sk->ss_teardown_mutex);
	/* The negotiation probe relies on it (smbd_neg_probe_work()). */
	WARN_ON_ONCE(READ_ONCE(sk->ss_state) == SMBD_NEGOTIATING);

	cancel_work_sync(&sk->ss_disconnect_work);
	mutex_lock(&sk->ss_send_mutex);
	mutex_lock(&sk->ss_recv_mutex);
	if (id && disconnect)
		rdma_disconnect(id);
	if (sk->ss_qp) {
		ib_drain_qp(sk->ss_qp);
		smbd_ops_abort(sk);
	}
	cancel_delayed_work_sync(&sk->ss_neg_work);
	cancel_delayed_work_sync(&sk->ss_probe_work);
	cancel_delayed_work_sync(&sk->ss_ka_work);
	cancel_work_sync(&sk->ss_grant_work);
	smbd_qp_destroy(sk, id);
	mutex_unlock(&sk->ss_recv_mutex);
	mutex_unlock(&sk->ss_send_mutex);
}

/*
 * Take @sk's connection manager id from it, if it still holds @id (any id
 * when @id is NULL): from now on no handler builds on it, and the caller
 * destroys it. Returns the id taken, or NULL.
 */
static struct rdma_cm_id *smbd_cm_detach(struct smbd_sock *sk,
					 struct rdma_cm_id *id)
{
	struct rdma_cm_id *cur;

	mutex_lock(&sk->ss_cm_mutex);
	cur = sk->ss_cm_id;
	if (id && cur != id)
		cur = NULL;
	if (cur)
		WRITE_ONCE(sk->ss_cm_id, NULL);
	mutex_unlock(&sk->ss_cm_mutex);
	return cur;
}

/*
 * [MS-SMBD] 3.1.7.1 on device removal: rdma_cm waits until every id on
 * the device is gone, so we cannot wait for the consumer to release the
 * socket. Free the verbs objects now and let rdma_cm destroy the id
 * (return 1); the socket stays, dead, until smbd_sock_release().
 */
static int smbd_cm_device_removal(struct smbd_sock *sk, struct rdma_cm_id *id)
{
	smbd_sock_error(sk, -ENODEV);
	mutex_lock(&sk->ss_teardown_mutex);
	if (!smbd_cm_detach(sk, id)) {
		/* smbd_sock_release() owns the id and destroys it. */
		mutex_unlock(&sk->ss_teardown_mutex);
		return 0;
	}
	smbd_verbs_teardown(sk, id, false);
	if (sk->ss_is_listener) {
		spin_lock_bh(&sk->ss_lock);
		smbd_set_state(sk, SMBD_CLOSED);
		spin_unlock_bh(&sk->ss_lock);
	}
	mutex_unlock(&sk->ss_teardown_mutex);
	return 1;
}

/* ---- addresses and ports ---- */

/* [MS-SMBD] 1.9, 2.1: SMB Direct's port on the device @id is bound to. */
static u16 smbd_default_port(struct rdma_cm_id *id)
{
	return rdma_protocol_iwarp(id->device, id->port_num) ?
	       SMBD_PORT_IWARP : SMBD_PORT_IB;
}

static u16 smbd_addr_port(const struct sockaddr *a)
{
	if (a->sa_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)a)->sin6_port);
	return ntohs(((const struct sockaddr_in *)a)->sin_port);
}

static void smbd_addr_set_port(struct sockaddr *a, u16 port)
{
	if (a->sa_family == AF_INET6)
		((struct sockaddr_in6 *)a)->sin6_port = htons(port);
	else
		((struct sockaddr_in *)a)->sin_port = htons(port);
}

static int smbd_addr_len(const struct sockaddr *a)
{
	switch (a->sa_family) {
	case AF_INET:
		return sizeof(struct sockaddr_in);
	case AF_INET6:
		return sizeof(struct sockaddr_in6);
	default:
		return -EAFNOSUPPORT;
	}
}

/* ---- connection manager ---- */

static void smbd_conn_param(struct smbd_sock *sk, struct rdma_conn_param *cp,
			    struct smbd_irdord_pdu *priv)
{
	memset(cp, 0, sizeof(*cp));
	cp->responder_resources = sk->ss_responder_resources;
	cp->initiator_depth = sk->ss_initiator_depth;
	/*
	 * Not 7: rxe takes 7 as "retry forever", and a soft-RoCE device
	 * that retransmits forever under load fills memory with packets.
	 */
	cp->retry_count = 6;
	/* A credit bug must show as an error, never as a silent retry. */
	cp->rnr_retry_count = 0;
	cp->flow_control = 0;
	if (sk->ss_iwarp) {
		/* [MS-SMBD] 6.1: IRD/ORD in the private data on iWARP. */
		smbd_irdord_encode(cp->responder_resources, cp->initiator_depth,
				   priv);
		cp->private_data = priv;
		cp->private_data_len = sizeof(*priv);
	}
}

/*
 * Whether the connection manager handler, holding @sk->ss_cm_mutex, may
 * still build on @id: the socket still owns it (no release or device
 * removal detached it) and is in @state (no error or shutdown ended the
 * attempt). See "Ownership" in Documentation/smbd.rst.
 */
static bool smbd_cm_owns(struct smbd_sock *sk, struct rdma_cm_id *id,
			 enum smbd_state state)
{
	lockdep_assert_held(&sk->ss_cm_mutex);
	return sk->ss_cm_id == id && READ_ONCE(sk->ss_state) == state;
}

/* [MS-SMBD] 3.1.4.1: the initiator's queue pair, then the CM request. */
static int smbd_cm_route_resolved(struct smbd_sock *sk, struct rdma_cm_id *id)
{
	struct smbd_irdord_pdu priv;
	struct rdma_conn_param cp;
	int ret;

	lockdep_assert_held(&sk->ss_cm_mutex);
	ret = smbd_qp_create(sk, id);
	if (ret)
		return ret;
	/* [MS-SMBD] 3.1.4.1: a receive for the Negotiate Response first. */
	ret = smbd_post_negotiate_recv(sk);
	if (ret)
		return ret;
	smbd_conn_param(sk, &cp, &priv);
	/* In the event handler: the id's handler mutex is held. */
	return rdma_connect_locked(id, &cp);
}

/* [MS-SMBD] 3.1.5.2: connected; the initiator sends the first message. */
static int smbd_cm_established(struct smbd_sock *sk, struct rdma_cm_id *id)
{
	struct smbd_neg_req_pdu req;
	bool ok;

	lockdep_assert_held(&sk->ss_cm_mutex);
	if (sk->ss_cm_id != id || !sk->ss_qp)
		return -ECONNABORTED;
	spin_lock_bh(&sk->ss_lock);
	ok = smbd_set_state(sk, SMBD_NEGOTIATING);
	spin_unlock_bh(&sk->ss_lock);
	if (!ok)
		return 0;	/* ended meanwhile; whoever ended it reports */
	smbd_neg_req_build(&sk->ss_params, &req);
	return smbd_send_negotiate(sk, &req, sizeof(req));
}

/*
 * Admission of connections still negotiating: each holds a queue pair and
 * its buffers (about 1 MiB with the defaults) until the Negotiate Request
 * arrives or the responder's Negotiation Timer ends it ([MS-SMBD] 3.1.7.2),
 * and the backlog counts only negotiated connections.
 */
static unsigned int max_negotiating = 32;
module_param(max_negotiating, uint, 0644);
MODULE_PARM_DESC(max_negotiating,
		 "Most connections a listener holds before they finish SMB Direct negotiation; more connection requests are refused and counted (default 32)");

/* Take a place for a new child on @lsk, or count the refusal. */
static bool smbd_listener_admit(struct smbd_sock *lsk)
{
	bool ok;

	spin_lock_bh(&lsk->ss_lock);
	ok = lsk->ss_state == SMBD_LISTENING &&
	     lsk->ss_accept_len < lsk->ss_backlog &&
	     lsk->ss_pending_len < READ_ONCE(max_negotiating);
	if (ok)
		lsk->ss_pending_len++;
	else
		lsk->ss_stats.conns_refused++;
	/*
	 * Full: some may be dead without having queued the reap (a device
	 * removal cancels their event work); have them counted out.
	 */
	if (!ok && lsk->ss_state == SMBD_LISTENING)
		queue_work(smbd_wq, &lsk->ss_reap_work);
	spin_unlock_bh(&lsk->ss_lock);
	return ok;
}

/**
 * smbd_child_negotiated() - a listener's child finished negotiating
 * @sk: the child, just CONNECTED ([MS-SMBD] 3.1.5.6)
 *
 * Moves it from the listener's pending list to its accept queue, where
 * smbd_sock_accept() finds it, and tells the listener's consumer.
 *
 * Context: softirq (receive completion); takes the listener's ss_lock.
 */
void smbd_child_negotiated(struct smbd_sock *sk)
{
	struct smbd_sock *lsk = READ_ONCE(sk->ss_listener);

	if (!lsk)
		return;
	cancel_delayed_work(&sk->ss_neg_work);
	spin_lock(&lsk->ss_lock);
	/* Not if the reap or the listener's release took it meanwhile. */
	if (lsk->ss_state == SMBD_LISTENING &&
	    sk->ss_queued == SMBD_Q_PENDING) {
		list_move_tail(&sk->ss_accept_node, &lsk->ss_accept_q);
		sk->ss_queued = SMBD_Q_ACCEPT;
		lsk->ss_pending_len--;
		lsk->ss_accept_len++;
		wake_up_all(&lsk->ss_wait);
	}
	spin_unlock(&lsk->ss_lock);
	if (lsk->ss_ops && lsk->ss_ops->data_ready)
		lsk->ss_ops->data_ready(lsk);
}

/*
 * [MS-SMBD] 3.1.7.2: a connection arrives on a listener. The child gets
 * its queue pair and a receive for the Negotiate Request before the
 * accept, and sends nothing until that request arrives (on iWARP the
 * initiator must send first). Returning non-zero rejects and frees @id.
 * Once the child is on the listener's pending list, others may release
 * it: its ss_cm_mutex, held until the accept is done and its timer
 * armed, keeps them out until then (the id is theirs to destroy).
 */
static int smbd_cm_connect_request(struct smbd_sock *lsk, struct rdma_cm_id *id,
				   struct rdma_cm_event *event)
{
	const struct rdma_conn_param *peer = &event->param.conn;
	struct smbd_irdord_pdu priv;
	struct rdma_conn_param cp;
	struct smbd_sock *sk;
	u32 ird, ord;
	int ret;

	if (!smbd_listener_admit(lsk))
		return -ECONNREFUSED;

	ret = -ENOMEM;
	sk = smbd_sock_alloc(lsk->ss_net, &lsk->ss_params, true);
	if (!sk)
		goto unadmit;
	mutex_lock(&sk->ss_cm_mutex);
	WRITE_ONCE(sk->ss_cm_id, id);
	id->context = sk;
	ret = smbd_qp_create(sk, id);
	if (ret)
		goto fail;

	/*
	 * rdma_cm gives the peer's values from our side already: its
	 * initiator_depth is the ORD we may use (the peer's IRD), its
	 * responder_resources the IRD we need (the peer's ORD). A peer that
	 * offers 0 (cifs sets no initiator depth) leaves ours as it is.
	 */
	if (peer->initiator_depth)
		sk->ss_initiator_depth = min_t(u32, sk->ss_initiator_depth,
					       peer->initiator_depth);
	if (peer->responder_resources)
		sk->ss_responder_resources = min_t(u32, sk->ss_responder_resources,
						   peer->responder_resources);
	smbd_conn_param(sk, &cp, &priv);
	if (sk->ss_iwarp) {
		ret = smbd_irdord_accept(sk->ss_responder_resources,
					 sk->ss_initiator_depth,
					 peer->private_data,
					 peer->private_data_len, &ird, &ord);
		if (ret == -ECONNREFUSED)
			goto fail;
		if (!ret) {
			/* Our ORD serves the peer's IRD and vice versa. */
			cp.initiator_depth = ird;
			cp.responder_resources = ord;
			smbd_irdord_encode(ird, ord, &priv);
		} else {
			cp.private_data = NULL;
			cp.private_data_len = 0;
		}
	}
	sk->ss_initiator_depth = cp.initiator_depth;
	sk->ss_responder_resources = cp.responder_resources;

	ret = smbd_post_negotiate_recv(sk);
	if (ret)
		goto fail;

	spin_lock_bh(&sk->ss_lock);
	smbd_set_state(sk, SMBD_NEGOTIATING);
	spin_unlock_bh(&sk->ss_lock);
	spin_lock_bh(&lsk->ss_lock);
	if (lsk->ss_state != SMBD_LISTENING) {
		/* Shut down meanwhile. */
		spin_unlock_bh(&lsk->ss_lock);
		ret = -ECONNREFUSED;
		goto fail;
	}
	sk->ss_listener = lsk;
	list_add_tail(&sk->ss_accept_node, &lsk->ss_pending);
	sk->ss_queued = SMBD_Q_PENDING;
	spin_unlock_bh(&lsk->ss_lock);

	/* Published: from here on the listener's release or reap frees it. */
	ret = rdma_accept(id, &cp);
	if (ret) {
		mutex_unlock(&sk->ss_cm_mutex);
		smbd_sock_error(sk, ret);
		return 0;
	}
	/* [MS-SMBD] 3.1.7.2: the responder's Negotiation Timer. */
	queue_delayed_work(smbd_wq, &sk->ss_neg_work,
			   msecs_to_jiffies(sk->ss_params.negotiate_timeout_ms));
	mutex_unlock(&sk->ss_cm_mutex);
	return 0;
fail:
	if (sk->ss_qp)
		ib_drain_qp(sk->ss_qp);
	smbd_qp_destroy(sk, id);
	mutex_unlock(&sk->ss_cm_mutex);
	smbd_mr_release(sk);
	smbd_sock_free(sk);
unadmit:
	spin_lock_bh(&lsk->ss_lock);
	lsk->ss_pending_len--;
	spin_unlock_bh(&lsk->ss_lock);
	return ret ?: -ECONNREFUSED;
}

static int smbd_cm_handler(struct rdma_cm_id *id, struct rdma_cm_event *event)
{
	struct smbd_sock *sk = id->context;
	struct sockaddr *dst;
	int ret = 0;

	if (event->event != RDMA_CM_EVENT_CONNECT_REQUEST)
		WRITE_ONCE(sk->ss_cm_last, event->event);
	switch (event->event) {
	case RDMA_CM_EVENT_CONNECT_REQUEST:
		return smbd_cm_connect_request(sk, id, event);
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		/* Port 0: the default of the device that reaches the peer. */
		dst = (struct sockaddr *)&id->route.addr.dst_addr;
		if (!smbd_addr_port(dst))
			smbd_addr_set_port(dst, smbd_default_port(id));
		ret = rdma_resolve_route(id, 5000);
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		mutex_lock(&sk->ss_cm_mutex);
		if (smbd_cm_owns(sk, id, SMBD_CONNECTING))
			ret = smbd_cm_route_resolved(sk, id);
		else
			ret = -ECONNABORTED;
		mutex_unlock(&sk->ss_cm_mutex);
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		if (!sk->ss_responder) {
			mutex_lock(&sk->ss_cm_mutex);
			ret = smbd_cm_established(sk, id);
			mutex_unlock(&sk->ss_cm_mutex);
		}
		break;
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
		ret = -EHOSTUNREACH;
		break;
	case RDMA_CM_EVENT_REJECTED:
		ret = -ECONNREFUSED;
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		smbd_sock_error(sk, -ECONNRESET);
		break;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		return smbd_cm_device_removal(sk, id);
	default:
		break;
	}
	if (ret)
		smbd_sock_error(sk, ret);
	return 0;
}

/* Events of the short-lived id smbd_listen_port() binds: none matter. */
static int smbd_cm_probe_handler(struct rdma_cm_id *id,
				 struct rdma_cm_event *event)
{
	return 0;
}

/*
 * The port a listener on @addr takes when it asks for port 0: that of
 * the RDMA device owning the address. A wildcard address has no single
 * device, so it needs an explicit port.
 */
static int smbd_listen_port(struct net *net, const struct sockaddr *addr)
{
	struct rdma_cm_id *id;
	int ret;

	id = rdma_create_id(net, smbd_cm_probe_handler, NULL, RDMA_PS_TCP,
			    IB_QPT_RC);
	if (IS_ERR(id))
		return PTR_ERR(id);
	ret = rdma_bind_addr(id, (struct sockaddr *)addr);
	if (!ret)
		ret = id->device ? smbd_default_port(id) : -EDESTADDRREQ;
	rdma_destroy_id(id);
	return ret;
}

/**
 * smbd_sock_getname() - a socket's local or peer address
 * @sk: a bound, listening, connecting or connected socket
 * @addr: filled with the address and port
 * @peer: the peer's address rather than the local one
 *
 * Context: process; may sleep. Takes the socket's ss_cm_mutex.
 * Return: 0; -ENOTCONN when the socket has no RDMA connection id (new,
 * or its device went away).
 */
int smbd_sock_getname(struct smbd_sock *sk, struct sockaddr_storage *addr,
		      bool peer)
{
	int ret = -ENOTCONN;

	mutex_lock(&sk->ss_cm_mutex);
	if (sk->ss_cm_id) {
		struct rdma_addr *ra = &sk->ss_cm_id->route.addr;

		memcpy(addr, peer ? &ra->dst_addr : &ra->src_addr,
		       sizeof(*addr));
		ret = 0;
	}
	mutex_unlock(&sk->ss_cm_mutex);
	return ret;
}
EXPORT_SYMBOL_NS_GPL(smbd_sock_getname, SMBD);

/* ---- initiator ---- */

/**
 * smbd_sock_connect_async() - start connecting ([MS-SMBD] 3.1.4.1)
 * @sk: a new socket
 * @dst: the peer; sockaddr_in or sockaddr_in6 with its port, or port 0
 *	for SMB Direct's default on the device that reaches the peer
 *	(%SMBD_PORT_IWARP on iWARP, %SMBD_PORT_IB on IB/RoCE)
 * @done: called once from process context with 0 when negotiation
 *	succeeded or a negative errno; may be NULL
 *
 * Context: process; may sleep. Takes the socket's ss_cm_mutex.
 * Return: 0 if the attempt started (@done will be called), or an errno.
 */
int smbd_sock_connect_async(struct smbd_sock *sk, const struct sockaddr *dst,
			    void (*done)(struct smbd_sock *sk, int status))
{
	struct rdma_cm_id *id;
	int ret;

	if (smbd_addr_len(dst) < 0)
		return -EAFNOSUPPORT;
	id = rdma_create_id(sk->ss_net, smbd_cm_handler, sk, RDMA_PS_TCP,
			    IB_QPT_RC);
	if (IS_ERR(id))
		return PTR_ERR(id);

	mutex_lock(&sk->ss_cm_mutex);
	spin_lock_bh(&sk->ss_lock);
	if (!smbd_set_state(sk, SMBD_CONNECTING)) {
		spin_unlock_bh(&sk->ss_lock);
		mutex_unlock(&sk->ss_cm_mutex);
		rdma_destroy_id(id);
		return -EISCONN;
	}
	sk->ss_connect_done = done;
	spin_unlock_bh(&sk->ss_lock);
	WRITE_ONCE(sk->ss_cm_id, id);
	mutex_unlock(&sk->ss_cm_mutex);

	/* [MS-SMBD] 3.1.4.1: the initiator's Negotiation Timer. */
	queue_delayed_work(smbd_wq, &sk->ss_neg_work,
			   msecs_to_jiffies(sk->ss_params.negotiate_timeout_ms));
	ret = rdma_resolve_addr(id, NULL, (struct sockaddr *)dst, 5000);
	if (ret) {
		spin_lock_bh(&sk->ss_lock);
		sk->ss_connect_done = NULL;
		sk->ss_err = ret;
		smbd_set_state(sk, SMBD_CLOSED);
		spin_unlock_bh(&sk->ss_lock);
		return ret;
	}
	return 0;
}
EXPORT_SYMBOL_NS_GPL(smbd_sock_connect_async, SMBD);

/**
 * smbd_sock_connect() - connect and negotiate ([MS-SMBD] 3.1.4.1)
 * @sk: a new socket
 * @dst: the peer, as for smbd_sock_connect_async()
 *
 * Waits at most the Negotiation Timer (negotiate_timeout_ms, 120 s by
 * default) for the RDMA connection and the negotiation.
 *
 * Context: process; sleeps.
 * Return: 0 once connected; -ETIMEDOUT, -ECONNREFUSED, -EHOSTUNREACH,
 * -ECONNRESET, -EPROTO (negotiation refused) or -ERESTARTSYS.
 */
int smbd_sock_connect(struct smbd_sock *sk, const struct sockaddr *dst)
{
	long left, tmo;
	int ret;

	ret = smbd_sock_connect_async(sk, dst, NULL);
	if (ret)
		return ret;
	tmo = msecs_to_jiffies(sk->ss_params.negotiate_timeout_ms);
	left = wait_event_interruptible_timeout(sk->ss_wait,
						READ_ONCE(sk->ss_state) >= SMBD_CONNECTED,
						tmo);
	if (!left)
		smbd_neg_expired(sk);	/* ahead of the timer's own work */
	else if (left < 0)
		smbd_sock_error(sk, (int)left);
	spin_lock_bh(&sk->ss_lock);
	ret = sk->ss_state == SMBD_CONNECTED ? 0 : (sk->ss_err ?: -ECONNRESET);
	spin_unlock_bh(&sk->ss_lock);
	return ret;
}
EXPORT_SYMBOL_NS_GPL(smbd_sock_connect, SMBD);

/**
 * smbd_established() - negotiation succeeded ([MS-SMBD] 3.1.5.6, 3.1.5.7)
 * @sk: the socket
 *
 * Role becomes ESTABLISHED; the idle timer starts; a child joins its
 * listener's accept queue; the consumer hears of it from process context.
 *
 * Context: softirq (receive completion); caller holds @sk->ss_lock.
 */
void smbd_established(struct smbd_sock *sk)
{
	u32 ms;

	lockdep_assert_held(&sk->ss_lock);
	if (!smbd_set_state(sk, SMBD_CONNECTED))
		return;
	cancel_delayed_work(&sk->ss_neg_work);
	ms = smbd_ka_on_established(&sk->ss_ka, smbd_now_ms());
	if (ms)
		mod_delayed_work(smbd_wq, &sk->ss_ka_work, msecs_to_jiffies(ms));
	if (!sk->ss_responder)
		queue_work(smbd_wq, &sk->ss_disconnect_work);
}

/* ---- responder ---- */

/**
 * smbd_sock_bind() - the local address of a listener
 * @sk: a new socket
 * @addr: sockaddr_in or sockaddr_in6 with the port to listen on. Port 0
 *	on an address of an RDMA device picks SMB Direct's default for that
 *	device ([MS-SMBD] 1.9, 2.1: %SMBD_PORT_IWARP on iWARP, %SMBD_PORT_IB
 *	on IB/RoCE); a wildcard address needs an explicit port (one listener
 *	per port serves both kinds of device).
 *
 * Context: process; may sleep. Takes the socket's ss_cm_mutex.
 * Return: 0; -EDESTADDRREQ for port 0 on a wildcard address or on one
 * with no RDMA device; -EAFNOSUPPORT; or an errno from the RDMA
 * connection manager (-EADDRINUSE, -EADDRNOTAVAIL).
 */
int smbd_sock_bind(struct smbd_sock *sk, const struct sockaddr *addr)
{
	struct sockaddr_storage a;
	struct rdma_cm_id *id;
	int ret, len;

	if (READ_ONCE(sk->ss_state) != SMBD_CREATED || sk->ss_cm_id)
		return -EINVAL;
	len = smbd_addr_len(addr);
	if (len < 0)
		return len;
	memcpy(&a, addr, len);
	if (!smbd_addr_port(addr)) {
		ret = smbd_listen_port(sk->ss_net, addr);
		if (ret < 0)
			return ret;
		smbd_addr_set_port((struct sockaddr *)&a, ret);
	}
	id = rdma_create_id(sk->ss_net, smbd_cm_handler, sk, RDMA_PS_TCP,
			    IB_QPT_RC);
	if (IS_ERR(id))
		return PTR_ERR(id);
	ret = rdma_bind_addr(id, (struct sockaddr *)&a);
	if (ret) {
		rdma_destroy_id(id);
		return ret;
	}
	mutex_lock(&sk->ss_cm_mutex);
	WRITE_ONCE(sk->ss_cm_id, id);
	mutex_unlock(&sk->ss_cm_mutex);
	sk->ss_is_listener = true;
	return 0;
}
EXPORT_SYMBOL_NS_GPL(smbd_sock_bind, SMBD);

/**
 * smbd_sock_listen() - accept connections on a bound socket
 * @sk: a bound socket
 * @backlog: most connections waiting for smbd_sock_accept()
 *
 * Accepted connections use this socket's parameters with the
 * responder's Negotiation Timer ([MS-SMBD] 3.1.7.2: 5 s by default).
 *
 * Context: process; may sleep.
 * Return: 0 or an errno.
 */
int smbd_sock_listen(struct smbd_sock *sk, int backlog)
{
	int ret;

	if (!sk->ss_cm_id || backlog <= 0)
		return -EINVAL;
	sk->ss_backlog = backlog;
	sk->ss_responder = true;
	/* Created without parameters: the responder's defaults (5 s timer). */
	if (sk->ss_params_default)
		smbd_params_init(&sk->ss_params, true);
	spin_lock_bh(&sk->ss_lock);
	ret = smbd_set_state(sk, SMBD_LISTENING) ? 0 : -EINVAL;
	spin_unlock_bh(&sk->ss_lock);
	if (ret)
		return ret;
	ret = rdma_listen(sk->ss_cm_id, backlog);
	if (ret) {
		spin_lock_bh(&sk->ss_lock);
		smbd_set_state(sk, SMBD_CLOSED);
		spin_unlock_bh(&sk->ss_lock);
	}
	return ret;
}
EXPORT_SYMBOL_NS_GPL(smbd_sock_listen, SMBD);

static bool smbd_accept_ready(struct smbd_sock *lsk)
{
	return !list_empty_careful(&lsk->ss_accept_q) ||
	       READ_ONCE(lsk->ss_state) != SMBD_LISTENING;
}

/**
 * smbd_sock_accept() - take a negotiated connection from a listener
 * @lsk: a listening socket
 * @newp: the connection
 * @flags: %SMBD_RECV_NONBLOCK to return -EAGAIN instead of waiting
 *
 * Context: process; may sleep.
 * Return: 0, -EAGAIN, -EINVAL (not listening) or -ERESTARTSYS.
 */
int smbd_sock_accept(struct smbd_sock *lsk, struct smbd_sock **newp,
		     unsigned int flags)
{
	struct smbd_sock *sk;
	int ret;

	for (;;) {
		spin_lock_bh(&lsk->ss_lock);
		if (lsk->ss_state != SMBD_LISTENING) {
			spin_unlock_bh(&lsk->ss_lock);
			return -EINVAL;
		}
		sk = list_first_entry_or_null(&lsk->ss_accept_q,
					      struct smbd_sock, ss_accept_node);
		if (sk) {
			list_del_init(&sk->ss_accept_node);
			sk->ss_queued = SMBD_Q_NONE;
			lsk->ss_accept_len--;
			WRITE_ONCE(sk->ss_listener, NULL);
			spin_unlock_bh(&lsk->ss_lock);
			/*
			 * Its event work may have read the listener before:
			 * let it finish, so it cannot queue the listener's
			 * reap once the listener is gone.
			 */
			flush_work(&sk->ss_disconnect_work);
			*newp = sk;
			return 0;
		}
		spin_unlock_bh(&lsk->ss_lock);
		if (flags & SMBD_RECV_NONBLOCK)
			return -EAGAIN;
		ret = wait_event_interruptible(lsk->ss_wait,
					       smbd_accept_ready(lsk));
		if (ret)
			return ret;
	}
}
EXPORT_SYMBOL_NS_GPL(smbd_sock_accept, SMBD);

/**
 * smbd_sock_query() - the negotiated values ([MS-SMBD] 3.1.4.7)
 * @sk: a connected socket
 * @info: filled on success
 *
 * Context: any.
 * Return: 0 while connected; -ENOTCONN before, or the connection's
 * error once it is lost.
 */
int smbd_sock_query(struct smbd_sock *sk, struct smbd_sock_info *info)
{
	int ret = 0;

	spin_lock_bh(&sk->ss_lock);
	if (sk->ss_state != SMBD_CONNECTED) {
		ret = sk->ss_err ?: -ENOTCONN;
		goto out;
	}
	info->max_send_size = sk->ss_neg.max_send_size;
	info->max_recv_size = sk->ss_neg.max_recv_size;
	info->max_fragmented_send_size = sk->ss_neg.max_fragmented_send_size;
	info->max_fragmented_recv_size = sk->ss_neg.max_fragmented_recv_size;
	info->max_read_write_size = sk->ss_neg.max_read_write_size;
	info->keepalive_interval_ms = sk->ss_params.keepalive_interval_ms;
	info->send_credits = sk->ss_cred.send_credits;
	info->recv_credits = sk->ss_cred.recv_posted;
	info->recv_credit_target = sk->ss_cred.recv_credit_target;
	info->iwarp = sk->ss_iwarp;
	info->initiator_depth = sk->ss_initiator_depth;
	info->responder_resources = sk->ss_responder_resources;
	/* One page of an MR may go to an unaligned start. */
	info->max_reg_size = sk->ss_nr_reg ?
		min_t(u32, (sk->ss_regs[0].reg_max_pages - 1) * PAGE_SIZE,
		      sk->ss_neg.max_read_write_size) : 0;
out:
	spin_unlock_bh(&sk->ss_lock);
	return ret;
}
EXPORT_SYMBOL_NS_GPL(smbd_sock_query, SMBD);

/**
 * smbd_sock_stats() - what a connection has done
 * @sk: the socket
 * @stats: filled with a snapshot of its counters
 *
 * Context: any.
 */
void smbd_sock_stats(struct smbd_sock *sk, struct smbd_sock_stats *stats)
{
	spin_lock_bh(&sk->ss_lock);
	*stats = sk->ss_stats;
	spin_unlock_bh(&sk->ss_lock);
}
EXPORT_SYMBOL_NS_GPL(smbd_sock_stats, SMBD);

/**
 * smbd_sock_shutdown() - end the connection, keep the socket
 * @sk: the socket
 *
 * Sends and receives fail from now on; on a listener, accepting stops
 * and a blocked smbd_sock_accept() returns. smbd_sock_release() still
 * frees.
 *
 * Context: any.
 */
void smbd_sock_shutdown(struct smbd_sock *sk)
{
	if (sk->ss_is_listener) {
		/* Stop accepting; a blocked smbd_sock_accept() returns. */
		spin_lock_bh(&sk->ss_lock);
		smbd_set_state(sk, SMBD_CLOSED);
		spin_unlock_bh(&sk->ss_lock);
		return;
	}
	smbd_sock_error(sk, -ESHUTDOWN);
}
EXPORT_SYMBOL_NS_GPL(smbd_sock_shutdown, SMBD);

static void smbd_listener_release(struct smbd_sock *lsk)
{
	struct smbd_sock *sk, *tmp;
	struct rdma_cm_id *id;
	LIST_HEAD(children);

	mutex_lock(&lsk->ss_teardown_mutex);
	id = smbd_cm_detach(lsk, NULL);
	mutex_unlock(&lsk->ss_teardown_mutex);
	/* No more connection requests once the id is gone. */
	if (id)
		rdma_destroy_id(id);
	spin_lock_bh(&lsk->ss_lock);
	smbd_set_state(lsk, SMBD_CLOSED);
	list_splice_init(&lsk->ss_pending, &children);
	list_splice_init(&lsk->ss_accept_q, &children);
	list_for_each_entry(sk, &children, ss_accept_node)
		sk->ss_queued = SMBD_Q_NONE;
	lsk->ss_accept_len = 0;
	lsk->ss_pending_len = 0;
	spin_unlock_bh(&lsk->ss_lock);
	/* Their handlers may still read ss_listener: it stays valid. */
	list_for_each_entry_safe(sk, tmp, &children, ss_accept_node) {
		list_del_init(&sk->ss_accept_node);
		smbd_sock_release(sk);
	}
	/*
	 * Last: a child's event work queues the reap until that child's
	 * release has cancelled it.
	 */
	cancel_work_sync(&lsk->ss_reap_work);
}

/**
 * smbd_sock_release() - end the connection and free the socket
 * @sk: the socket; gone when this returns
 *
 * The one teardown path, in order: stop (state DISCONNECTING), tell the
 * peer (rdma_disconnect), end connection manager events
 * (rdma_destroy_id waits for a running handler), stop the timers and
 * work, flush and drain the queue pair so every completion has run, then
 * free queue pair, CQs, buffers (unmapped) and PD. A listener first
 * releases the connections it has not handed out.
 *
 * Context: process; sleeps: takes the socket's ss_teardown_mutex and
 * ss_cm_mutex, and waits for a running connection manager handler. Not
 * from an smbd upcall.
 */
void smbd_sock_release(struct smbd_sock *sk)
{
	struct rdma_cm_id *id;
	bool was_up;

	if (!sk)
		return;
	if (sk->ss_is_listener) {
		smbd_listener_release(sk);
		smbd_sock_free(sk);
		return;
	}

	spin_lock_bh(&sk->ss_lock);
	if (!sk->ss_err)
		sk->ss_err = -ESHUTDOWN;
	was_up = sk->ss_state == SMBD_CONNECTED ||
		 sk->ss_state == SMBD_NEGOTIATING;
	smbd_set_state(sk, SMBD_DISCONNECTING);
	sk->ss_connect_done = NULL;
	spin_unlock_bh(&sk->ss_lock);
	smbd_xfer_wake(sk);

	/*
	 * DISCONNECTING is set: nothing queues the event work any more, and
	 * completions queue no timer or grant work.
	 */
	mutex_lock(&sk->ss_teardown_mutex);
	id = smbd_cm_detach(sk, NULL);
	smbd_verbs_teardown(sk, id, was_up);
	mutex_unlock(&sk->ss_teardown_mutex);
	/* Waits for a running event handler; none comes after. */
	if (id)
		rdma_destroy_id(id);

	spin_lock_bh(&sk->ss_lock);
	smbd_set_state(sk, SMBD_CLOSED);
	spin_unlock_bh(&sk->ss_lock);
	smbd_mr_release(sk);
	smbd_sock_free(sk);
}
EXPORT_SYMBOL_NS_GPL(smbd_sock_release, SMBD);

/* ---- debugfs ---- */

static int smbd_devices_show(struct seq_file *m, void *v)
{
	struct smbd_device *sd;

	seq_puts(m, "device\ttype\tqp_wr\tsend_sge\trecv_sge\tcqe\tird\tord\tfrmr_pages\n");
	mutex_lock(&smbd_devices_lock);
	list_for_each_entry(sd, &smbd_devices, sd_list)
		seq_printf(m, "%s\t%s\t%u\t%u\t%u\t%u\t%u\t%u\t%u\n",
			   dev_name(&sd->sd_ibdev->dev),
			   sd->sd_iwarp ? "iwarp" : "ib/roce",
			   sd->sd_max_qp_wr, sd->sd_max_send_sge,
			   sd->sd_max_recv_sge, sd->sd_max_cqe,
			   sd->sd_max_rd_atom, sd->sd_max_init_rd_atom,
			   sd->sd_max_frmr_pages);
	mutex_unlock(&smbd_devices_lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(smbd_devices);

/* One block per socket: who, what was negotiated, what it has done. */
static int smbd_connections_show(struct seq_file *m, void *v)
{
	struct sockaddr_storage src = {}, dst = {};
	struct smbd_sock_stats st;
	struct smbd_sock *sk;
	bool addr;

	mutex_lock(&smbd_socks_lock);
	list_for_each_entry(sk, &smbd_socks, ss_all_node) {
		/*
		 * Never wait here: a handler may hold ss_cm_mutex through a
		 * connect, and smbd_socks_lock would hold up every socket.
		 */
		addr = false;
		if (mutex_trylock(&sk->ss_cm_mutex)) {
			addr = sk->ss_cm_id;
			if (addr) {
				memcpy(&src, &sk->ss_cm_id->route.addr.src_addr,
				       sizeof(src));
				memcpy(&dst, &sk->ss_cm_id->route.addr.dst_addr,
				       sizeof(dst));
			}
			mutex_unlock(&sk->ss_cm_mutex);
		}
		smbd_sock_stats(sk, &st);
		seq_printf(m, "%s %s %s", sk->ss_is_listener ? "listener" :
			   sk->ss_responder ? "responder" : "initiator",
			   smbd_state_names[READ_ONCE(sk->ss_state)],
			   sk->ss_ibdev ? dev_name(&sk->ss_ibdev->dev) : "-");
		if (addr && sk->ss_is_listener)
			seq_printf(m, " %pISpc", &src);
		else if (addr)
			seq_printf(m, " %pISpc -> %pISpc", &src, &dst);
		if (sk->ss_is_listener) {
			seq_printf(m, " negotiating %u accept_q %u refused %llu\n",
				   READ_ONCE(sk->ss_pending_len),
				   READ_ONCE(sk->ss_accept_len),
				   st.conns_refused);
			continue;
		}
		seq_putc(m, '\n');
		seq_printf(m, "  neg: max_send %u max_recv %u max_frag_send %u max_frag_recv %u max_rw %u ird %u ord %u\n",
			   sk->ss_neg.max_send_size, sk->ss_neg.max_recv_size,
			   sk->ss_neg.max_fragmented_send_size,
			   sk->ss_neg.max_fragmented_recv_size,
			   sk->ss_neg.max_read_write_size,
			   sk->ss_responder_resources, sk->ss_initiator_depth);
		seq_printf(m, "  msgs: sent %llu recv %llu; segs: sent %llu recv %llu; bytes: sent %llu (zero-copy %llu) recv %llu\n",
			   st.msgs_sent, st.msgs_recv, st.segs_sent,
			   st.segs_recv, st.bytes_sent, st.bytes_zcopy,
			   st.bytes_recv);
		seq_printf(m, "  credits: grants %llu waits %llu; keep-alive: sent %llu answered %llu\n",
			   st.grants_sent, st.credit_waits, st.keepalives_sent,
			   st.keepalives_answered);
		seq_printf(m, "  mr: registered %llu local_inv %llu remote_inv %llu remote_inv_unknown %llu\n",
			   st.mrs_registered, st.mrs_local_inv,
			   st.mrs_remote_inv, st.remote_inv_unknown);
		seq_printf(m, "  rdma: reads %llu (%llu bytes) writes %llu (%llu bytes)\n",
			   st.rdma_reads, st.rdma_read_bytes, st.rdma_writes,
			   st.rdma_write_bytes);
	}
	mutex_unlock(&smbd_socks_lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(smbd_connections);

static int __init smbd_init(void)
{
	int ret;

	/* Writeback through an SMB client may wait on this queue. */
	smbd_wq = alloc_workqueue("smbd", WQ_MEM_RECLAIM | WQ_UNBOUND, 0);
	if (!smbd_wq)
		return -ENOMEM;
	smbd_debugfs_root = debugfs_create_dir("smbd", NULL);
	debugfs_create_file("devices", 0444, smbd_debugfs_root, NULL,
			    &smbd_devices_fops);
	debugfs_create_file("connections", 0444, smbd_debugfs_root, NULL,
			    &smbd_connections_fops);

	ret = ib_register_client(&smbd_ib_client);
	if (ret) {
		debugfs_remove_recursive(smbd_debugfs_root);
		destroy_workqueue(smbd_wq);
		return ret;
	}
	pr_info("smbd: SMB Direct 1.0 ([MS-SMBD]) loaded\n");
	return 0;
}

static void __exit smbd_exit(void)
{
	ib_unregister_client(&smbd_ib_client);
	debugfs_remove_recursive(smbd_debugfs_root);
	destroy_workqueue(smbd_wq);
}

module_init(smbd_init);
module_exit(smbd_exit);

MODULE_DESCRIPTION("SMB Direct (MS-SMBD) transport for in-kernel SMB consumers");
MODULE_LICENSE("GPL");

// SPDX-License-Identifier: GPL-2.0
/*
 * smbd: the connection manager side of a connection. The rdma_cm event
 * handler: connect ([MS-SMBD] 3.1.4.1), a listener's incoming connections
 * with their admission (3.1.7.2), establishment (3.1.5.2), disconnect and
 * device removal (3.1.7.1); the iWARP IRD/ORD private data (6.1, 6.2);
 * the ports (1.9, 2.1). It builds on the endpoint (smbd_ep.c) and is
 * driven by the socket API (smbd_sock.c).
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <kunit/visibility.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>

#include "smbd_internal.h"

/**
 * smbd_cm_detach() - take a socket's connection manager id from it
 * @sk: the socket
 * @id: the id it must still hold, or NULL for any
 *
 * From then on no handler builds on the id, and the caller destroys it
 * (or has rdma_cm destroy it).
 *
 * Context: process; takes ss_ep.cm_mutex.
 * Return: the id taken, or NULL when @sk held none (or another).
 */
struct rdma_cm_id *smbd_cm_detach(struct smbd_sock *sk,
				  struct rdma_cm_id *id)
{
	struct rdma_cm_id *cur;

	mutex_lock(&sk->ss_ep.cm_mutex);
	cur = sk->ss_ep.cm_id;
	if (id && cur != id)
		cur = NULL;
	if (cur)
		WRITE_ONCE(sk->ss_ep.cm_id, NULL);
	mutex_unlock(&sk->ss_ep.cm_mutex);
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
	/*
	 * The event work may be using the id: it must be done before the id
	 * goes. Not under ss_ep.teardown_mutex: it runs the consumer's upcalls.
	 */
	cancel_work_sync(&sk->ss_disconnect_work);
	mutex_lock(&sk->ss_ep.teardown_mutex);
	if (!smbd_cm_detach(sk, id)) {
		/* smbd_sock_release() owns the id and destroys it. */
		mutex_unlock(&sk->ss_ep.teardown_mutex);
		return 0;
	}
	/* A release from now on waits for this handler to be done. */
	WRITE_ONCE(sk->ss_ep.removed, true);
	smbd_verbs_teardown(sk, id, false);
	spin_lock_bh(&sk->ss_lock);
	if (smbd_is_listener(sk))
		smbd_set_state(sk, SMBD_CLOSED);
	/*
	 * [MS-SMBD] 3.1.7.1: the upper layer is told, an async connect's
	 * done() is called, a listener's dead child is reaped: the event
	 * work cancelled above runs again, with the id detached. Unless the
	 * consumer released the socket meanwhile (it cancels the work).
	 */
	if (!sk->ss_released)
		queue_work(smbd_wq, &sk->ss_disconnect_work);
	spin_unlock_bh(&sk->ss_lock);
	mutex_unlock(&sk->ss_ep.teardown_mutex);
	/* The last touch of the socket (smbd_ep_wait_removal()). */
	complete(&sk->ss_ep.removal_done);
	return 1;
}

/* [MS-SMBD] 1.9, 2.1: SMB Direct's port on the device @id is bound to. */
static u16 smbd_default_port(struct rdma_cm_id *id)
{
	return rdma_protocol_iwarp(id->device, id->port_num) ?
	       SMBD_PORT_IWARP : SMBD_PORT_IB;
}

/**
 * smbd_dev_class_ok() - may a socket use the device its id is bound to
 * @p: the socket's parameters
 * @id: an id bound to a device (id->device set)
 *
 * Context: any.
 * Return: true when @p's dev_class admits @id's device and port.
 */
bool smbd_dev_class_ok(const struct smbd_params *p, struct rdma_cm_id *id)
{
	switch (p->dev_class) {
	case SMBD_DEV_IB:
		return rdma_ib_or_roce(id->device, id->port_num);
	case SMBD_DEV_IWARP:
		return rdma_protocol_iwarp(id->device, id->port_num);
	default:
		return true;
	}
}

static void smbd_conn_param(struct smbd_sock *sk, struct rdma_conn_param *cp,
			    struct smbd_irdord_pdu *priv)
{
	memset(cp, 0, sizeof(*cp));
	cp->responder_resources = sk->ss_ep.responder_resources;
	cp->initiator_depth = sk->ss_ep.initiator_depth;
	/*
	 * Not 7: rxe takes 7 as "retry forever", and a soft-RoCE device
	 * that retransmits forever under load fills memory with packets.
	 */
	cp->retry_count = 6;
	/* A credit bug must show as an error, never as a silent retry. */
	cp->rnr_retry_count = 0;
	cp->flow_control = 0;
	if (sk->ss_ep.iwarp) {
		/* [MS-SMBD] 6.1: IRD/ORD in the private data on iWARP. */
		smbd_irdord_encode(cp->responder_resources, cp->initiator_depth,
				   priv);
		cp->private_data = priv;
		cp->private_data_len = sizeof(*priv);
	}
}

/*
 * Whether the connection manager handler, holding @sk->ss_ep.cm_mutex, may
 * still build on @id: the socket still owns it (no release or device
 * removal detached it) and is in @state (no error or shutdown ended the
 * attempt). See "Ownership" in Documentation/smbd.rst.
 */
static bool smbd_cm_owns(struct smbd_sock *sk, struct rdma_cm_id *id,
			 enum smbd_state state)
{
	lockdep_assert_held(&sk->ss_ep.cm_mutex);
	return sk->ss_ep.cm_id == id && READ_ONCE(sk->ss_state) == state;
}

/* [MS-SMBD] 3.1.4.1: the initiator's queue pair, then the CM request. */
static int smbd_cm_route_resolved(struct smbd_sock *sk, struct rdma_cm_id *id)
{
	struct smbd_irdord_pdu priv;
	struct rdma_conn_param cp;
	int ret;

	lockdep_assert_held(&sk->ss_ep.cm_mutex);
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
static int smbd_cm_established(struct smbd_sock *sk, struct rdma_cm_id *id,
			       const struct rdma_conn_param *reply)
{
	struct smbd_neg_req_pdu req;
	u32 ird, ord;
	bool ok;
	int ret;

	lockdep_assert_held(&sk->ss_ep.cm_mutex);
	if (sk->ss_ep.cm_id != id || !sk->ss_ep.qp)
		return -ECONNABORTED;
	/*
	 * [MS-SMBD] 6.2: on iWARP the accepting peer's reply may carry the
	 * IRD/ORD negotiate header (an MPA v1 peer's only way to say them);
	 * ours are then the values it transmits.
	 */
	if (sk->ss_ep.iwarp) {
		ret = smbd_irdord_reply(sk->ss_ep.responder_resources,
					sk->ss_ep.initiator_depth,
					reply->private_data,
					reply->private_data_len, &ird, &ord);
		if (ret == -ECONNREFUSED)
			return ret;
		if (!ret) {
			sk->ss_ep.responder_resources = ird;
			sk->ss_ep.initiator_depth = ord;
		}
	}
	spin_lock_bh(&sk->ss_lock);
	ok = smbd_set_state(sk, SMBD_NEGOTIATING);
	spin_unlock_bh(&sk->ss_lock);
	if (!ok)
		return 0;	/* ended meanwhile; whoever ended it reports */
	smbd_neg_req_build(&sk->ss_params, &req);
	return smbd_send_negotiate(sk, &req, sizeof(req));
}

#if IS_ENABLED(CONFIG_KUNIT)
/**
 * smbd_ep_fake_start() - start a socket on a KUnit suite's fake endpoint
 * @sk: a socket from smbd_sock_alloc(), in CREATED
 * @ep: the fake: its calls, device limits and verbs objects. A device
 *	without a dma_device has buffers mapped at their kernel addresses
 *	(ib_uses_virt_dma()), as rxe and siw have.
 *
 * Does what the connection manager handler does once the device is known,
 * on the endpoint smbd_ep_fake_attach() gives it: an initiator is left as
 * at ROUTE_RESOLVED (CONNECTING, the receive for the Negotiate Response
 * posted), a responder as at CONNECT_REQUEST (NEGOTIATING, the receive for
 * the Negotiate Request posted); each with its Negotiation Timer running
 * ([MS-SMBD] 3.1.4.1, 3.1.7.2). smbd_ep_fake_established() then plays the
 * initiator's ESTABLISHED. smbd_sock_release() tears it down.
 *
 * Context: process; may sleep.
 * Return: 0 or a negative errno (the socket is then only to be released).
 */
int smbd_ep_fake_start(struct smbd_sock *sk, const struct smbd_fake_ep *ep)
{
	int ret;

	mutex_lock(&sk->ss_ep.cm_mutex);
	ret = smbd_ep_fake_attach(sk, ep);
	if (ret)
		goto out;
	spin_lock_bh(&sk->ss_lock);
	smbd_set_state(sk, sk->ss_responder ? SMBD_NEGOTIATING :
			   SMBD_CONNECTING);
	spin_unlock_bh(&sk->ss_lock);
	queue_delayed_work(smbd_wq, &sk->ss_neg_work,
			   msecs_to_jiffies(sk->ss_params.negotiate_timeout_ms));
	ret = smbd_post_negotiate_recv(sk);
out:
	mutex_unlock(&sk->ss_ep.cm_mutex);
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(smbd_ep_fake_start);

/**
 * smbd_ep_fake_established() - the initiator's ESTABLISHED, on a fake
 * @sk: an initiator started by smbd_ep_fake_start()
 *
 * Sends the Negotiate Request, as the handler does ([MS-SMBD] 3.1.5.2).
 *
 * Context: process; may sleep.
 * Return: 0 or the send's errno.
 */
int smbd_ep_fake_established(struct smbd_sock *sk)
{
	struct rdma_conn_param reply = {};
	int ret;

	mutex_lock(&sk->ss_ep.cm_mutex);
	ret = smbd_cm_established(sk, sk->ss_ep.cm_id, &reply);
	mutex_unlock(&sk->ss_ep.cm_mutex);
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(smbd_ep_fake_established);
#endif

/* Take a place for a new child on @lsk, or count the refusal. */
static bool smbd_listener_admit(struct smbd_sock *lsk)
{
	bool ok;

	spin_lock_bh(&lsk->ss_lock);
	ok = lsk->ss_state == SMBD_LISTENING &&
	     lsk->ss_lq->accept_len < lsk->ss_lq->backlog &&
	     lsk->ss_lq->pending_len < smbd_max_negotiating();
	if (ok)
		lsk->ss_lq->pending_len++;
	else
		lsk->ss_stats.conns_refused++;
	/*
	 * Full: some may be dead without having queued the reap (a device
	 * removal cancels their event work); have them counted out.
	 */
	if (!ok && lsk->ss_state == SMBD_LISTENING)
		queue_work(smbd_wq, &lsk->ss_lq->reap_work);
	spin_unlock_bh(&lsk->ss_lock);
	return ok;
}

/*
 * A child's RDMA read depths, and the accept's parameters that carry
 * them (*@cp, with the iWARP IRD/ORD exchange in *@priv). Returns 0, or
 * -ECONNREFUSED when the peer's private data asks what we cannot give.
 */
static int smbd_child_depths(struct smbd_sock *sk,
			     const struct rdma_conn_param *peer,
			     struct rdma_conn_param *cp,
			     struct smbd_irdord_pdu *priv)
{
	u32 ird, ord;
	int ret;

	/*
	 * rdma_cm gives the peer's values from our side already: its
	 * initiator_depth is the ORD we may use (the peer's IRD), its
	 * responder_resources the IRD we need (the peer's ORD). A peer that
	 * offers 0 (cifs sets no initiator depth) leaves ours as it is.
	 */
	if (peer->initiator_depth)
		sk->ss_ep.initiator_depth = min_t(u32, sk->ss_ep.initiator_depth,
						  peer->initiator_depth);
	if (peer->responder_resources)
		sk->ss_ep.responder_resources =
			min_t(u32, sk->ss_ep.responder_resources,
			      peer->responder_resources);
	smbd_conn_param(sk, cp, priv);
	if (sk->ss_ep.iwarp) {
		ret = smbd_irdord_accept(sk->ss_ep.responder_resources,
					 sk->ss_ep.initiator_depth,
					 peer->private_data,
					 peer->private_data_len, &ird, &ord);
		if (ret == -ECONNREFUSED)
			return ret;
		if (!ret) {
			/* Our ORD serves the peer's IRD and vice versa. */
			cp->initiator_depth = ird;
			cp->responder_resources = ord;
			smbd_irdord_encode(ird, ord, priv);
		} else {
			cp->private_data = NULL;
			cp->private_data_len = 0;
		}
	}
	sk->ss_ep.initiator_depth = cp->initiator_depth;
	sk->ss_ep.responder_resources = cp->responder_resources;
	return 0;
}

/*
 * A child whose receive is posted goes NEGOTIATING, on its listener's
 * pending list. Returns -ECONNREFUSED if the listener was shut down
 * meanwhile.
 */
static int smbd_child_queue(struct smbd_sock *lsk, struct smbd_sock *sk)
{
	spin_lock_bh(&sk->ss_lock);
	smbd_set_state(sk, SMBD_NEGOTIATING);
	spin_unlock_bh(&sk->ss_lock);
	spin_lock_bh(&lsk->ss_lock);
	if (lsk->ss_state != SMBD_LISTENING) {
		/* Shut down meanwhile. */
		spin_unlock_bh(&lsk->ss_lock);
		return -ECONNREFUSED;
	}
	sk->ss_listener = lsk;
	list_add_tail(&sk->ss_accept_node, &lsk->ss_lq->pending);
	sk->ss_queued = SMBD_Q_PENDING;
	spin_unlock_bh(&lsk->ss_lock);
	return 0;
}

/*
 * A child that failed before it was published: undo its verbs and free it.
 * Called with its ss_ep.cm_mutex, which it drops.
 */
static void smbd_child_fail(struct smbd_sock *sk, struct rdma_cm_id *id)
{
	/*
	 * rdma_cm destroys @id once we return non-zero. From NEGOTIATING
	 * on, an error (a fatal queue pair event, a receive completed in
	 * error, a device's fatal error) queues the event work, which
	 * disconnects the id the socket holds: the socket holds none from
	 * now on.
	 */
	lockdep_assert_held(&sk->ss_ep.cm_mutex);
	WRITE_ONCE(sk->ss_ep.cm_id, NULL);
	smbd_ep_undo(sk, id);
	mutex_unlock(&sk->ss_ep.cm_mutex);
	/*
	 * Nothing queues the event work once the socket is CLOSED; one
	 * queued before, or running (it may have waited for ss_ep.cm_mutex
	 * above), is done before the socket goes.
	 */
	spin_lock_bh(&sk->ss_lock);
	smbd_set_state(sk, SMBD_CLOSED);
	spin_unlock_bh(&sk->ss_lock);
	cancel_work_sync(&sk->ss_disconnect_work);
	smbd_mr_release(sk);
	smbd_sock_free(sk);
}

/*
 * [MS-SMBD] 3.1.7.2: a connection arrives on a listener. The child gets
 * its queue pair and a receive for the Negotiate Request before the
 * accept, and sends nothing until that request arrives (on iWARP the
 * initiator must send first). Returning non-zero rejects and frees @id.
 * Once the child is on the listener's pending list, others may release
 * it: its ss_ep.cm_mutex, held until the accept is done and its timer
 * armed, keeps them out until then (the id is theirs to destroy).
 */
static int smbd_cm_connect_request(struct smbd_sock *lsk, struct rdma_cm_id *id,
				   struct rdma_cm_event *event)
{
	struct smbd_irdord_pdu priv;
	struct rdma_conn_param cp;
	struct smbd_sock *sk;
	int ret;

	/*
	 * A wildcard listener hears every device; the class it does not
	 * serve is refused before it takes a place in the backlog.
	 */
	if (!smbd_dev_class_ok(&lsk->ss_params, id)) {
		spin_lock_bh(&lsk->ss_lock);
		lsk->ss_stats.conns_wrong_class++;
		spin_unlock_bh(&lsk->ss_lock);
		return -ECONNREFUSED;
	}
	if (!smbd_listener_admit(lsk))
		return -ECONNREFUSED;

	ret = -ENOMEM;
	sk = smbd_sock_alloc(lsk->ss_net, &lsk->ss_params, true);
	if (!sk)
		goto unadmit;
	mutex_lock(&sk->ss_ep.cm_mutex);
	WRITE_ONCE(sk->ss_ep.cm_id, id);
	id->context = sk;
	/* A KUnit suite's listener has its fake build the child's. */
	if (smbd_fake(lsk))
		ret = smbd_fake(lsk)->child(lsk, sk);
	else
		ret = smbd_qp_create(sk, id);
	if (!ret)
		ret = smbd_child_depths(sk, &event->param.conn, &cp, &priv);
	if (!ret)
		ret = smbd_post_negotiate_recv(sk);
	if (!ret)
		ret = smbd_child_queue(lsk, sk);
	if (ret)
		goto fail;

	/* Published: from here on the listener's release or reap frees it. */
	ret = smbd_ep_accept(sk, id, &cp);
	if (ret) {
		mutex_unlock(&sk->ss_ep.cm_mutex);
		smbd_sock_error(sk, ret);
		return 0;
	}
	/* [MS-SMBD] 3.1.7.2: the responder's Negotiation Timer. */
	queue_delayed_work(smbd_wq, &sk->ss_neg_work,
			   msecs_to_jiffies(sk->ss_params.negotiate_timeout_ms));
	mutex_unlock(&sk->ss_ep.cm_mutex);
	return 0;
fail:
	smbd_child_fail(sk, id);
unadmit:
	spin_lock_bh(&lsk->ss_lock);
	lsk->ss_lq->pending_len--;
	spin_unlock_bh(&lsk->ss_lock);
	return ret ?: -ECONNREFUSED;
}

/**
 * smbd_cm_handler() - the connection manager's events on a socket's id
 * @id: the id; its context is the socket
 * @event: the event
 *
 * Address and route resolution, a listener's connect requests, the
 * connection's establishment, its end, and device removal.
 *
 * Context: process, in rdma_cm's handler (its handler_mutex held, as for
 * every event of the id).
 * Return: non-zero for rdma_cm to destroy the id: a connect request
 * refused, or a device removal whose handler took the id from the socket
 * (0 when a release had taken it first, and destroys it).
 */
int smbd_cm_handler(struct rdma_cm_id *id, struct rdma_cm_event *event)
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
		if (!smbd_dev_class_ok(&sk->ss_params, id))
			ret = -EPROTONOSUPPORT;
		else if (!smbd_addr_port(dst))
			smbd_addr_set_port(dst, smbd_default_port(id));
		if (!ret)
			ret = rdma_resolve_route(id, 5000);
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		mutex_lock(&sk->ss_ep.cm_mutex);
		if (smbd_cm_owns(sk, id, SMBD_CONNECTING))
			ret = smbd_cm_route_resolved(sk, id);
		else
			ret = -ECONNABORTED;
		mutex_unlock(&sk->ss_ep.cm_mutex);
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		if (!sk->ss_responder) {
			mutex_lock(&sk->ss_ep.cm_mutex);
			ret = smbd_cm_established(sk, id, &event->param.conn);
			mutex_unlock(&sk->ss_ep.cm_mutex);
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
	case RDMA_CM_EVENT_ADDR_CHANGE:
		/*
		 * The address moved to another device (a bonding failover):
		 * the queue pair stays on the old one. End the connection;
		 * the consumer reconnects over the new path. A listener
		 * has no queue pair to lose and is left as it is.
		 */
		if (!smbd_is_listener(sk))
			smbd_sock_error(sk, -ENETRESET);
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
EXPORT_SYMBOL_IF_KUNIT(smbd_cm_handler);

/* Events of the short-lived id smbd_listen_port() binds: none matter. */
static int smbd_cm_probe_handler(struct rdma_cm_id *id,
				 struct rdma_cm_event *event)
{
	return 0;
}

/**
 * smbd_listen_port() - the port a listener takes when it asks for port 0
 * @net: the listener's network namespace
 * @addr: its address
 *
 * That of the RDMA device owning the address ([MS-SMBD] 1.9, 2.1: 445 for
 * InfiniBand and RoCE, 5445 for iWARP). A wildcard address has no single
 * device, so it needs an explicit port.
 *
 * Context: process; sleeps (a transient rdma_cm id).
 * Return: the port, -EDESTADDRREQ for an address without a device, or
 * another negative errno.
 */
int smbd_listen_port(struct net *net, const struct sockaddr *addr)
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

// SPDX-License-Identifier: GPL-2.0
/*
 * smbd: the socket API its consumers call (include/smbd.h): create,
 * connect ([MS-SMBD] 3.1.4.1), bind, listen and accept (3.1.7.2), query
 * (3.1.4.7), shutdown and the one release path. Sending is smbd_write.c's,
 * reading smbd_read.c's, registration smbd_mr.c's and RDMA read/write
 * smbd_rw.c's.
 */

#include <kunit/visibility.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <rdma/rdma_cm.h>

#include "smbd_internal.h"

/* A listener's reap work releases children that died unaccepted. */
static void smbd_reap_work(struct work_struct *work)
{
	struct smbd_listen_q *lq = container_of(work, struct smbd_listen_q,
						reap_work);
	struct smbd_sock *sk = lq->lsk;
	struct smbd_sock *child, *tmp;
	LIST_HEAD(dead);

	spin_lock_bh(&sk->ss_lock);
	list_for_each_entry_safe(child, tmp, &sk->ss_lq->pending, ss_accept_node) {
		if (READ_ONCE(child->ss_state) >= SMBD_DISCONNECTING) {
			list_move(&child->ss_accept_node, &dead);
			child->ss_queued = SMBD_Q_NONE;
			sk->ss_lq->pending_len--;
		}
	}
	list_for_each_entry_safe(child, tmp, &sk->ss_lq->accept_q, ss_accept_node) {
		if (READ_ONCE(child->ss_state) >= SMBD_DISCONNECTING) {
			list_move(&child->ss_accept_node, &dead);
			child->ss_queued = SMBD_Q_NONE;
			sk->ss_lq->accept_len--;
		}
	}
	spin_unlock_bh(&sk->ss_lock);
	list_for_each_entry_safe(child, tmp, &dead, ss_accept_node) {
		list_del_init(&child->ss_accept_node);
		smbd_sock_release(child);
	}
}

/* A listener's queues of children, and the work that reaps dead ones. */
static struct smbd_listen_q *smbd_listen_q_alloc(struct smbd_sock *sk)
{
	struct smbd_listen_q *lq = kzalloc(sizeof(*lq), GFP_KERNEL);

	if (!lq)
		return NULL;
	lq->lsk = sk;
	INIT_LIST_HEAD(&lq->pending);
	INIT_LIST_HEAD(&lq->accept_q);
	INIT_WORK(&lq->reap_work, smbd_reap_work);
	return lq;
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

	might_sleep();
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

/**
 * smbd_sock_getname() - a socket's local or peer address
 * @sk: a bound, listening, connecting or connected socket
 * @addr: filled with the address and port
 * @peer: the peer's address rather than the local one
 *
 * Context: process; may sleep. Takes the socket's ss_ep.cm_mutex.
 * Return: 0; -ENOTCONN when the socket has no RDMA connection id (new,
 * or its device went away).
 */
int smbd_sock_getname(struct smbd_sock *sk, struct sockaddr_storage *addr,
		      bool peer)
{
	int ret = -ENOTCONN;

	might_sleep();
	mutex_lock(&sk->ss_ep.cm_mutex);
	if (sk->ss_ep.cm_id) {
		struct rdma_addr *ra = &sk->ss_ep.cm_id->route.addr;

		memcpy(addr, peer ? &ra->dst_addr : &ra->src_addr,
		       sizeof(*addr));
		ret = 0;
	}
	mutex_unlock(&sk->ss_ep.cm_mutex);
	return ret;
}
EXPORT_SYMBOL_NS_GPL(smbd_sock_getname, SMBD);

/*
 * A socket smbd_sock_shutdown() closed before it was used: nothing else
 * leaves one that is not a listener CLOSED with -ESHUTDOWN while it is
 * still the consumer's (smbd_sock_release() frees it).
 */
static bool smbd_shut_unused(const struct smbd_sock *sk)
{
	return READ_ONCE(sk->ss_state) == SMBD_CLOSED &&
	       READ_ONCE(sk->ss_err) == -ESHUTDOWN;
}

/**
 * smbd_sock_connect_async() - start connecting ([MS-SMBD] 3.1.4.1)
 * @sk: a new socket
 * @dst: the peer; sockaddr_in or sockaddr_in6 with its port, or port 0
 *	for SMB Direct's default on the device that reaches the peer
 *	(%SMBD_PORT_IWARP on iWARP, %SMBD_PORT_IB on IB/RoCE)
 * @done: called once from process context with 0 when negotiation
 *	succeeded or a negative errno; may be NULL
 *
 * Context: process; may sleep. Takes the socket's ss_ep.cm_mutex.
 * Return: 0 if the attempt started (@done will be called); -EINVAL for
 * a bound socket; -ESHUTDOWN for one shut down before it connected
 * (smbd_sock_shutdown()); -EISCONN for one connecting or used already;
 * or an errno.
 */
int smbd_sock_connect_async(struct smbd_sock *sk, const struct sockaddr *dst,
			    void (*done)(struct smbd_sock *sk, int status))
{
	struct rdma_cm_id *id;
	int ret;

	might_sleep();
	if (smbd_addr_len(dst) < 0)
		return -EAFNOSUPPORT;
	/* A bound socket is a listener: its id is not for connecting. */
	if (smbd_is_listener(sk))
		return -EINVAL;
	if (smbd_shut_unused(sk))
		return -ESHUTDOWN;
	id = rdma_create_id(sk->ss_net, smbd_cm_handler, sk, RDMA_PS_TCP,
			    IB_QPT_RC);
	if (IS_ERR(id))
		return PTR_ERR(id);

	mutex_lock(&sk->ss_ep.cm_mutex);
	spin_lock_bh(&sk->ss_lock);
	if (!smbd_set_state(sk, SMBD_CONNECTING)) {
		/* A shutdown may have come since the check above. */
		ret = smbd_shut_unused(sk) ? -ESHUTDOWN : -EISCONN;
		spin_unlock_bh(&sk->ss_lock);
		mutex_unlock(&sk->ss_ep.cm_mutex);
		rdma_destroy_id(id);
		return ret;
	}
	sk->ss_connect_done = done;
	spin_unlock_bh(&sk->ss_lock);
	WRITE_ONCE(sk->ss_ep.cm_id, id);
	mutex_unlock(&sk->ss_ep.cm_mutex);

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
 * -ECONNRESET, -EPROTO (negotiation refused), -ESHUTDOWN (shut down
 * before or while connecting) or -ERESTARTSYS; or what
 * smbd_sock_connect_async() returns.
 */
int smbd_sock_connect(struct smbd_sock *sk, const struct sockaddr *dst)
{
	long left, tmo;
	int ret;

	might_sleep();
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
 * smbd_sock_bind() - the local address of a listener
 * @sk: a new socket
 * @addr: sockaddr_in or sockaddr_in6 with the port to listen on. Port 0
 *	on an address of an RDMA device picks SMB Direct's default for that
 *	device ([MS-SMBD] 1.9, 2.1: %SMBD_PORT_IWARP on iWARP, %SMBD_PORT_IB
 *	on IB/RoCE); a wildcard address needs an explicit port (one listener
 *	per port serves both kinds of device). An IPv6 address, the
 *	wildcard too, serves IPv6 only: a listener for each family, on one
 *	port, serves both. A specific address of a device that the
 *	socket's dev_class excludes is refused here, before anything
 *	listens on it (an iWARP listener would take the TCP port).
 *
 * Context: process; may sleep. Takes the socket's ss_ep.cm_mutex.
 * Return: 0; -EINVAL for a socket bound, connecting or used already;
 * -EDESTADDRREQ for port 0 on a wildcard address or on one with no RDMA
 * device; -EPROTONOSUPPORT for an address of a device of the wrong
 * class; -EAFNOSUPPORT; -ENOMEM; or an errno from the RDMA connection
 * manager (-EADDRINUSE, -EADDRNOTAVAIL).
 */
int smbd_sock_bind(struct smbd_sock *sk, const struct sockaddr *addr)
{
	struct smbd_listen_q *lq;
	struct sockaddr_storage a;
	struct rdma_cm_id *id;
	int ret, len;

	might_sleep();
	if (READ_ONCE(sk->ss_state) != SMBD_CREATED || sk->ss_ep.cm_id)
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
	/* Only a listener has queues of children, and children to reap. */
	lq = smbd_listen_q_alloc(sk);
	if (!lq)
		return -ENOMEM;
	id = rdma_create_id(sk->ss_net, smbd_cm_handler, sk, RDMA_PS_TCP,
			    IB_QPT_RC);
	if (IS_ERR(id)) {
		kfree(lq);
		return PTR_ERR(id);
	}
	/*
	 * Not the namespace's bindv6only: with it off an IPv6 wildcard
	 * would take IPv4 too, and an IPv4 listener on the same port would
	 * then fail with -EADDRINUSE.
	 */
	ret = a.ss_family == AF_INET6 ? rdma_set_afonly(id, 1) : 0;
	if (!ret)
		ret = rdma_bind_addr(id, (struct sockaddr *)&a);
	if (!ret && id->device && !smbd_dev_class_ok(&sk->ss_params, id))
		ret = -EPROTONOSUPPORT;
	if (ret) {
		rdma_destroy_id(id);
		kfree(lq);
		return ret;
	}
	/* A specific address is one device's: debugfs names it. */
	if (id->device)
		strscpy(sk->ss_ep.devname, dev_name(&id->device->dev),
			sizeof(sk->ss_ep.devname));
	/*
	 * The queues before the id: a device removal that finds the id
	 * finds a listener, and closes it (smbd_cm_device_removal()).
	 */
	WRITE_ONCE(sk->ss_lq, lq);
	mutex_lock(&sk->ss_ep.cm_mutex);
	WRITE_ONCE(sk->ss_ep.cm_id, id);
	mutex_unlock(&sk->ss_ep.cm_mutex);
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
 * Context: process; may sleep. Takes the socket's ss_ep.teardown_mutex.
 * Return: 0; -EINVAL for a socket not bound, listening already, or
 * whose device was removed; or an errno from rdma_listen().
 */
int smbd_sock_listen(struct smbd_sock *sk, int backlog)
{
	struct rdma_cm_id *id;
	int ret;

	might_sleep();
	/* Bound by smbd_sock_bind(), which made the listener's queues. */
	if (!smbd_is_listener(sk) || backlog <= 0)
		return -EINVAL;
	/*
	 * A device removal takes the id (under the teardown mutex) and
	 * closes the listener: before this, or after rdma_listen().
	 */
	mutex_lock(&sk->ss_ep.teardown_mutex);
	id = READ_ONCE(sk->ss_ep.cm_id);
	spin_lock_bh(&sk->ss_lock);
	ret = id && smbd_set_state(sk, SMBD_LISTENING) ? 0 : -EINVAL;
	if (!ret) {
		sk->ss_lq->backlog = backlog;
		sk->ss_responder = true;
		/* Created without parameters: the responder's defaults. */
		if (sk->ss_params_default)
			smbd_params_init(&sk->ss_params, true);
	}
	spin_unlock_bh(&sk->ss_lock);
	if (!ret) {
		ret = rdma_listen(id, backlog);
		if (ret) {
			spin_lock_bh(&sk->ss_lock);
			smbd_set_state(sk, SMBD_CLOSED);
			spin_unlock_bh(&sk->ss_lock);
		}
	}
	mutex_unlock(&sk->ss_ep.teardown_mutex);
	return ret;
}
EXPORT_SYMBOL_NS_GPL(smbd_sock_listen, SMBD);

#if IS_ENABLED(CONFIG_KUNIT)
/**
 * smbd_sock_fake_listen() - a listener on a KUnit suite's fake
 * @sk: a responder from smbd_sock_alloc(), in CREATED
 * @fake: the fake; its @child op builds each connection request's child
 * @backlog: most connections waiting for smbd_sock_accept()
 *
 * smbd_sock_bind() and smbd_sock_listen() without an id: the suite plays
 * RDMA_CM_EVENT_CONNECT_REQUEST through smbd_cm_handler() on ids whose
 * context is @sk, and smbd_sock_release() frees it as any listener.
 *
 * Context: process; may sleep.
 * Return: 0 or -ENOMEM.
 */
int smbd_sock_fake_listen(struct smbd_sock *sk, const struct smbd_fake_qp *fake,
			  int backlog)
{
	struct smbd_listen_q *lq = smbd_listen_q_alloc(sk);

	if (!lq)
		return -ENOMEM;
	lq->backlog = backlog;
	sk->ss_ep.fake = fake;
	WRITE_ONCE(sk->ss_lq, lq);
	spin_lock_bh(&sk->ss_lock);
	smbd_set_state(sk, SMBD_LISTENING);
	spin_unlock_bh(&sk->ss_lock);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(smbd_sock_fake_listen);
#endif

static bool smbd_accept_ready(struct smbd_sock *lsk)
{
	return !list_empty_careful(&lsk->ss_lq->accept_q) ||
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

	might_sleep();	/* flush_work() even when not waiting */
	for (;;) {
		spin_lock_bh(&lsk->ss_lock);
		if (lsk->ss_state != SMBD_LISTENING) {
			spin_unlock_bh(&lsk->ss_lock);
			return -EINVAL;
		}
		sk = list_first_entry_or_null(&lsk->ss_lq->accept_q,
					      struct smbd_sock, ss_accept_node);
		if (sk) {
			list_del_init(&sk->ss_accept_node);
			sk->ss_queued = SMBD_Q_NONE;
			lsk->ss_lq->accept_len--;
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
	info->iwarp = sk->ss_ep.iwarp;
	info->initiator_depth = sk->ss_ep.initiator_depth;
	info->responder_resources = sk->ss_ep.responder_resources;
	info->send_gather = sk->ss_ep.tx_sge;
	/* One page of an MR may go to an unaligned start. */
	info->max_reg_size = sk->ss_rdma.nr_reg ?
		min_t(u32, (sk->ss_rdma.regs[0].reg_max_pages - 1) * PAGE_SIZE,
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
 * and a blocked smbd_sock_accept() returns. A socket not connecting yet
 * is closed for good rather than left as it was: a later
 * smbd_sock_connect() fails with -ESHUTDOWN (smbd_sock_bind() and
 * smbd_sock_listen() with -EINVAL), so a shutdown that comes just before
 * the connect it was meant to stop is not lost. (shutdown(2) of an
 * unconnected TCP socket fails with -ENOTCONN instead; this call has no
 * error to return, and its callers use it to stop whatever the socket
 * does.) smbd_sock_release() still frees.
 *
 * Context: any.
 */
void smbd_sock_shutdown(struct smbd_sock *sk)
{
	if (smbd_is_listener(sk)) {
		/* Stop accepting; a blocked smbd_sock_accept() returns. */
		spin_lock_bh(&sk->ss_lock);
		smbd_set_state(sk, SMBD_CLOSED);
		spin_unlock_bh(&sk->ss_lock);
		return;
	}
	spin_lock_bh(&sk->ss_lock);
	if (sk->ss_state == SMBD_CREATED) {
		/* No connection to end, and none may start. */
		if (!sk->ss_err)
			sk->ss_err = -ESHUTDOWN;
		smbd_set_state(sk, SMBD_CLOSED);
		spin_unlock_bh(&sk->ss_lock);
		return;
	}
	spin_unlock_bh(&sk->ss_lock);
	smbd_sock_error(sk, -ESHUTDOWN);
}
EXPORT_SYMBOL_NS_GPL(smbd_sock_shutdown, SMBD);

static void smbd_listener_release(struct smbd_sock *lsk)
{
	struct smbd_sock *sk, *tmp;
	struct rdma_cm_id *id;
	LIST_HEAD(children);

	/* A device removal may have queued the event work (its upcall). */
	spin_lock_bh(&lsk->ss_lock);
	lsk->ss_released = true;
	spin_unlock_bh(&lsk->ss_lock);
	cancel_work_sync(&lsk->ss_disconnect_work);
	mutex_lock(&lsk->ss_ep.teardown_mutex);
	id = smbd_cm_detach(lsk, NULL);
	mutex_unlock(&lsk->ss_ep.teardown_mutex);
	smbd_ep_wait_removal(lsk);
	/* No more connection requests once the id is gone. */
	if (id)
		rdma_destroy_id(id);
	spin_lock_bh(&lsk->ss_lock);
	smbd_set_state(lsk, SMBD_CLOSED);
	list_splice_init(&lsk->ss_lq->pending, &children);
	list_splice_init(&lsk->ss_lq->accept_q, &children);
	list_for_each_entry(sk, &children, ss_accept_node)
		sk->ss_queued = SMBD_Q_NONE;
	lsk->ss_lq->accept_len = 0;
	lsk->ss_lq->pending_len = 0;
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
	cancel_work_sync(&lsk->ss_lq->reap_work);
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
 * Context: process; sleeps: takes the socket's ss_ep.teardown_mutex and
 * ss_ep.cm_mutex, and waits for a running connection manager handler. Not
 * from an smbd upcall.
 */
void smbd_sock_release(struct smbd_sock *sk)
{
	struct rdma_cm_id *id;
	bool was_up;

	might_sleep();
	if (!sk)
		return;
	if (smbd_is_listener(sk)) {
		smbd_listener_release(sk);
		smbd_sock_free(sk);
		return;
	}

	spin_lock_bh(&sk->ss_lock);
	if (!sk->ss_err)
		sk->ss_err = -ESHUTDOWN;
	was_up = sk->ss_state == SMBD_CONNECTED ||
		 sk->ss_state == SMBD_NEGOTIATING ||
		 sk->ss_state == SMBD_REFUSING;
	smbd_set_state(sk, SMBD_DISCONNECTING);
	sk->ss_connect_done = NULL;
	sk->ss_released = true;
	spin_unlock_bh(&sk->ss_lock);
	smbd_sock_wake(sk);

	/*
	 * DISCONNECTING and ss_released are set: nothing queues the event
	 * work any more, and completions queue no timer or grant work. The
	 * work runs upcalls, which may take ss_ep.teardown_mutex: finish it
	 * before taking that mutex.
	 */
	cancel_work_sync(&sk->ss_disconnect_work);
	mutex_lock(&sk->ss_ep.teardown_mutex);
	id = smbd_cm_detach(sk, NULL);
	smbd_verbs_teardown(sk, id, was_up);
	mutex_unlock(&sk->ss_ep.teardown_mutex);
	smbd_ep_wait_removal(sk);
	/* Waits for a running event handler; none comes after. */
	if (id)
		smbd_ep_destroy_id(sk, id);

	spin_lock_bh(&sk->ss_lock);
	smbd_set_state(sk, SMBD_CLOSED);
	spin_unlock_bh(&sk->ss_lock);
	smbd_mr_release(sk);
	smbd_sock_free(sk);
}
EXPORT_SYMBOL_NS_GPL(smbd_sock_release, SMBD);

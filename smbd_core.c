// SPDX-License-Identifier: GPL-2.0
/*
 * smbd: the core of a connection. The one function that changes a
 * socket's state, the error funnel every failure goes through, the event
 * work that disconnects and tells the consumer, the Negotiation Timer
 * ([MS-SMBD] 3.1.4.1, 3.1.7.2) and the step to ESTABLISHED (3.1.5.6).
 * Nothing here builds or frees verbs objects (smbd_ep.c) or moves data
 * (smbd_xfer.c and the files above it, smbd_op.c, smbd_mr.c, smbd_rw.c);
 * they all call in here, never the other way.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <kunit/visibility.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>

#include "smbd_internal.h"
#include "smbd_trace.h"

struct workqueue_struct *smbd_wq;
/* Every socket, for debugfs smbd/connections. */
LIST_HEAD(smbd_socks);
DEFINE_MUTEX(smbd_socks_lock);	/* protects smbd_socks */

static const char * const smbd_state_names[] = {
	[SMBD_CREATED] = "created",
	[SMBD_CONNECTING] = "connecting",
	[SMBD_LISTENING] = "listening",
	[SMBD_NEGOTIATING] = "negotiating",
	[SMBD_REFUSING] = "refusing",
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
	case SMBD_REFUSING:
		ok = old == SMBD_NEGOTIATING && sk->ss_responder;
		break;
	case SMBD_CONNECTED:
		ok = old == SMBD_NEGOTIATING;
		break;
	case SMBD_DISCONNECTING:
		ok = old == SMBD_CONNECTING || old == SMBD_NEGOTIATING ||
		     old == SMBD_REFUSING || old == SMBD_CONNECTED;
		break;
	case SMBD_CLOSED:
		ok = old != SMBD_CLOSED;
		break;
	default:
		ok = false;
	}
	if (!ok)
		return false;
	WRITE_ONCE(sk->ss_state, state);
	trace_smbd_state(sk, old, state);
	smbd_sock_wake(sk);
	return true;
}
EXPORT_SYMBOL_IF_KUNIT(smbd_set_state);

/**
 * smbd_sock_error() - end a connection because of an error
 * @sk: the socket
 * @err: negative errno reported to the consumer from now on
 *
 * The single funnel for protocol violations, provider errors, timeouts
 * and peer disconnects: the first error wins, the state moves to
 * DISCONNECTING and the event work disconnects and tells the consumer.
 *
 * Context: any (completion handlers run in softirq or a workqueue).
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
}
EXPORT_SYMBOL_IF_KUNIT(smbd_sock_error);

/*
 * @sk, a child of listener @lsk, finished negotiating ([MS-SMBD] 3.1.5.6): move
 * it from the pending list to the accept queue, where smbd_sock_accept()
 * finds it, and tell the listener's consumer. From the child's event
 * work, not from its receive completion: the listener's lock and upcall
 * stay out of the completion handlers.
 */
static void smbd_child_negotiated(struct smbd_sock *sk, struct smbd_sock *lsk)
{
	spin_lock_bh(&lsk->ss_lock);
	/* Not if the reap or the listener's release took it meanwhile. */
	if (lsk->ss_state == SMBD_LISTENING &&
	    sk->ss_queued == SMBD_Q_PENDING) {
		list_move_tail(&sk->ss_accept_node, &lsk->ss_lq->accept_q);
		sk->ss_queued = SMBD_Q_ACCEPT;
		lsk->ss_lq->pending_len--;
		lsk->ss_lq->accept_len++;
		wake_up_all(&lsk->ss_wait);
	}
	spin_unlock_bh(&lsk->ss_lock);
	if (lsk->ss_ops && lsk->ss_ops->data_ready)
		lsk->ss_ops->data_ready(lsk);
}

/**
 * smbd_event_work() - a socket's state change, told and acted on
 * @work: the socket's ss_disconnect_work
 *
 * Tells the consumer what happened (its connect upcall, its state
 * change), disconnects a connection that ended, and puts a negotiated
 * child of a listener on its accept queue or reaps a dead one.
 *
 * Context: process (smbd's work queue); takes ss_lock and the
 * listener's, and calls the consumer's upcalls without either.
 */
void smbd_event_work(struct work_struct *work)
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
	 * ss_ep.cm_mutex: on iWARP rdma_disconnect() can wait for the connect
	 * reply, whose handler takes that mutex. The id stays valid: whoever
	 * detached it cancels this work before destroying it.
	 */
	if (state == SMBD_DISCONNECTING) {
		mutex_lock(&sk->ss_ep.cm_mutex);
		id = sk->ss_ep.cm_id;
		mutex_unlock(&sk->ss_ep.cm_mutex);
		smbd_ep_disconnect(sk, id);
		/*
		 * Pending work fails now, whoever ended the connection: on
		 * InfiniBand and RoCE rdma_disconnect() has put the queue
		 * pair in the error state already, but on iWARP it starts a
		 * graceful close, and siw completes nothing posted until
		 * that close is done, which a peer waiting on us may never
		 * let happen. The fence flushes it all; no need to wait for
		 * it here (smbd_qp_fence_start()).
		 */
		smbd_qp_fence_start(sk);
	}
	if (done)
		done(sk, state == SMBD_CONNECTED ? 0 : (err ?: -ECONNRESET));
	if (listener) {
		if (state == SMBD_CONNECTED)
			smbd_child_negotiated(sk, listener);
		else if (state >= SMBD_DISCONNECTING)
			queue_work(smbd_wq, &listener->ss_lq->reap_work);
		return;
	}
	if (sk->ss_ops && sk->ss_ops->state_change)
		sk->ss_ops->state_change(sk);
}

/**
 * smbd_neg_expired() - the Negotiation Timer expired
 * @sk: the socket, not yet connected
 *
 * [MS-SMBD] 3.1.4.1, 3.1.7.2: says once where the connection stopped,
 * then ends it with -ETIMEDOUT. Nothing for a socket connected by then.
 * Called by the timer's work and by a blocking connect whose wait ran
 * out first.
 *
 * Context: process; takes ss_lock through smbd_sock_error().
 */
void smbd_neg_expired(struct smbd_sock *sk)
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
	if (!sk->ss_responder && !sk->ss_ep.iwarp && neg & BIT(SMBD_NEG_SENT))
		snprintf(probes, sizeof(probes), "; %u probes answered%s",
			 READ_ONCE(sk->ss_neg_probes),
			 neg & BIT(SMBD_NEG_PROBE_UNPOSTED) ? ", one unposted" :
			 "");
	if (!test_and_set_bit(SMBD_NEG_EXPIRED, &sk->ss_neg_trace))
		pr_info_ratelimited("%s negotiation timed out (%s, last CM event: %s; our Negotiate %s %s, %s from the peer%s)\n",
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

/**
 * smbd_neg_timeout() - the Negotiation Timer's work
 * @work: the socket's ss_neg_work
 *
 * Context: process (smbd's work queue).
 */
void smbd_neg_timeout(struct work_struct *work)
{
	smbd_neg_expired(container_of(to_delayed_work(work),
				      struct smbd_sock, ss_neg_work));
}

/**
 * smbd_established() - negotiation succeeded ([MS-SMBD] 3.1.5.6, 3.1.5.7)
 * @sk: the socket
 *
 * Role becomes ESTABLISHED; the idle timer starts; the event work tells
 * the consumer, or puts a listener's child on its accept queue.
 *
 * Context: the receive completion handler; caller holds @sk->ss_lock.
 */
void smbd_established(struct smbd_sock *sk)
{
	u32 ms;

	lockdep_assert_held(&sk->ss_lock);
	if (!smbd_set_state(sk, SMBD_CONNECTED))
		return;
	trace_smbd_negotiated(sk);
	cancel_delayed_work(&sk->ss_neg_work);
	ms = smbd_ka_on_established(&sk->ss_ka, smbd_now_ms());
	if (ms)
		mod_delayed_work(smbd_wq, &sk->ss_ka_work, msecs_to_jiffies(ms));
	queue_work(smbd_wq, &sk->ss_disconnect_work);
}

/**
 * smbd_state_name() - a state's name, for logs and debugfs
 * @state: the state
 *
 * Context: any.
 * Return: a static string.
 */
const char *smbd_state_name(enum smbd_state state)
{
	return state < ARRAY_SIZE(smbd_state_names) && smbd_state_names[state] ?
	       smbd_state_names[state] : "?";
}
EXPORT_SYMBOL_IF_KUNIT(smbd_state_name);

/**
 * smbd_sock_wake() - wake every waiter of every kind
 * @sk: the socket
 *
 * For a change every waiter must see (the state, an error): connectors
 * and acceptors, senders, readers, and threads waiting for MRs, rdma_rw
 * contexts or the ops to leave.
 *
 * Context: any.
 */
void smbd_sock_wake(struct smbd_sock *sk)
{
	wake_up_all(&sk->ss_wait);
	wake_up_all(&sk->ss_send_wq);
	wake_up_all(&sk->ss_recv_wq);
	wake_up_all(&sk->ss_res_wq);
	wake_up_all(&sk->ss_rw_wq);
}

/**
 * smbd_wr_failed() - a work request completed in error: end the connection
 * @sk: the socket
 * @status: the completion's status
 * @what: what failed, for the log ("send", "memory registration", ...)
 *
 * A flush on a connection nobody is ending means the provider took the
 * queue pair out of RTS by itself (rxe does so silently when it cannot
 * build a packet), or a request with no completion entry of its own
 * failed before it (an unsignalled part of an rdma_rw chain): say so, as
 * for any other failure. Sends, registrations and RDMA reads and writes
 * all end here.
 *
 * Context: a completion handler (softirq or workqueue).
 */
void smbd_wr_failed(struct smbd_sock *sk, enum ib_wc_status status,
		    const char *what)
{
	if (status != IB_WC_WR_FLUSH_ERR) {
		spin_lock_bh(&sk->ss_lock);
		sk->ss_cnt.wr_errors++;
		spin_unlock_bh(&sk->ss_lock);
	}
	if (status != IB_WC_WR_FLUSH_ERR ||
	    READ_ONCE(sk->ss_state) == SMBD_CONNECTED)
		pr_info_ratelimited("%s failed: %s\n", what,
				    ib_wc_status_msg(status));
	smbd_sock_error(sk, -ECONNABORTED);
}

/*
 * The totals of the sockets gone, by device name, since smbd was loaded:
 * a socket's counters move here as it leaves smbd_socks, under
 * smbd_socks_lock, so that a device's totals (its retired ones and its
 * sockets' now, smbd_netlink.c) never count a socket twice or miss it.
 * The first SMBD_RETIRED_MAX names are kept; a device added after that
 * many has the totals of its live sockets only.
 */
#define SMBD_RETIRED_MAX	32

static struct smbd_retired smbd_retired[SMBD_RETIRED_MAX];

/**
 * smbd_stats_add() - add one socket's counters to others
 * @to: the sum
 * @st: what to add
 *
 * Context: any; the caller holds what protects both.
 */
void smbd_stats_add(struct smbd_sock_stats *to,
		    const struct smbd_sock_stats *st)
{
	const u64 *f = (const u64 *)st;
	u64 *t = (u64 *)to;
	u32 i;

	/* Every member is a u64 counter (include/smbd.h). */
	BUILD_BUG_ON(sizeof(*st) % sizeof(u64));
	for (i = 0; i < sizeof(*st) / sizeof(u64); i++)
		t[i] += f[i];
}

/* The retired totals of device @name, NULL if it has none (or no room). */
static struct smbd_retired *smbd_retired_of(const char *name, bool add)
{
	u32 i;

	lockdep_assert_held(&smbd_socks_lock);
	for (i = 0; i < SMBD_RETIRED_MAX; i++) {
		if (!strcmp(smbd_retired[i].name, name))
			return &smbd_retired[i];
		if (!smbd_retired[i].name[0]) {
			if (!add)
				return NULL;
			strscpy(smbd_retired[i].name, name,
				sizeof(smbd_retired[i].name));
			return &smbd_retired[i];
		}
	}
	return NULL;
}

/**
 * smbd_sock_retire() - a socket's counters into its device's totals
 * @sk: a socket leaving smbd_socks, for good
 *
 * Nothing for a socket that never had a device, or a listener.
 *
 * Context: process. Caller holds smbd_socks_lock.
 */
void smbd_sock_retire(struct smbd_sock *sk)
{
	struct smbd_retired *r;

	lockdep_assert_held(&smbd_socks_lock);
	if (!sk->ss_ep.devname[0] || smbd_is_listener(sk))
		return;
	r = smbd_retired_of(sk->ss_ep.devname, true);
	if (!r)
		return;
	spin_lock_bh(&sk->ss_lock);
	smbd_stats_add(&r->st, &sk->ss_stats);
	r->wr_errors += sk->ss_cnt.wr_errors;
	r->credit_stall_ns += sk->ss_cnt.credit_stall_ns;
	spin_unlock_bh(&sk->ss_lock);
	r->conns++;
}

/**
 * smbd_retired_get() - the totals of a device's sockets gone
 * @name: the device's name
 * @r: filled with a copy
 *
 * Context: process. Caller holds smbd_socks_lock.
 * Return: false when the device has none.
 */
bool smbd_retired_get(const char *name, struct smbd_retired *r)
{
	struct smbd_retired *p = smbd_retired_of(name, false);

	if (p)
		*r = *p;
	return p;
}

/**
 * smbd_sock_addrs_try() - a socket's addresses, without waiting
 * @sk: the socket
 * @src: filled with its local address
 * @dst: filled with its peer's
 *
 * Never waits for the cm mutex: a handler may hold it through a
 * connect, and the callers (debugfs, netlink) hold smbd_socks_lock,
 * which every socket's allocation and free takes.
 *
 * Context: process.
 * Return: true when the addresses were read; false when the cm mutex was
 * busy or the socket has no connection id.
 */
bool smbd_sock_addrs_try(struct smbd_sock *sk, struct sockaddr_storage *src,
			 struct sockaddr_storage *dst)
{
	bool addr = false;

	if (mutex_trylock(&sk->ss_ep.cm_mutex)) {
		addr = sk->ss_ep.cm_id;
		if (addr) {
			memcpy(src, &sk->ss_ep.cm_id->route.addr.src_addr,
			       sizeof(*src));
			memcpy(dst, &sk->ss_ep.cm_id->route.addr.dst_addr,
			       sizeof(*dst));
		}
		mutex_unlock(&sk->ss_ep.cm_mutex);
	}
	return addr;
}

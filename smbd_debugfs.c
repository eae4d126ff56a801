// SPDX-License-Identifier: GPL-2.0
/*
 * smbd: what debugfs shows of the connections.
 *
 * /sys/kernel/debug/smbd/connections is the one-screen summary, a block
 * per socket (like ss). /sys/kernel/debug/smbd/conn/<id>/, one directory
 * per socket from its allocation to its free, has:
 *   state       state, role, error, device, addresses
 *   negotiated  what negotiation settled ([MS-SMBD] 3.1.1.1)
 *   credits     credits both ways, buffers, waiters (3.1.5.1, 3.1.5.9)
 *   counters    every counter of the connection, one "name value" a line
 *   refusals    peer input refused, by [MS-SMBD] section and reason
 * The <id> is the conn= of the summary and of the tracepoints.
 *
 * Every file is read under the socket's ss_lock, or with its cm mutex
 * only tried; debugfs_remove() waits for a read in progress before the
 * socket is freed.
 */

#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/hrtimer.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/seq_file.h>
#include <rdma/rdma_cm.h>

#include "smbd_internal.h"

static struct dentry *smbd_conn_root;

static const char *smbd_dbg_role(const struct smbd_sock *sk)
{
	return smbd_is_listener(sk) ? "listener" :
	       sk->ss_responder ? "responder" : "initiator";
}

/* One block per socket: who, what was negotiated, what it has done. */
static int smbd_connections_show(struct seq_file *m, void *v)
{
	struct sockaddr_storage src = {}, dst = {};
	struct smbd_sock_stats st;
	struct smbd_sock *sk;
	bool addr;

	mutex_lock(&smbd_socks_lock);
	list_for_each_entry(sk, &smbd_socks, ss_all_node) {
		addr = smbd_sock_addrs_try(sk, &src, &dst);
		spin_lock_bh(&sk->ss_lock);
		st = sk->ss_stats;
		spin_unlock_bh(&sk->ss_lock);
		seq_printf(m, "%s %s conn=%u %s", smbd_dbg_role(sk),
			   smbd_state_name(READ_ONCE(sk->ss_state)), sk->ss_id,
			   sk->ss_ep.devname[0] ? sk->ss_ep.devname : "-");
		if (addr && smbd_is_listener(sk))
			seq_printf(m, " %pISpc", &src);
		else if (addr)
			seq_printf(m, " %pISpc -> %pISpc", &src, &dst);
		if (smbd_is_listener(sk)) {
			seq_printf(m, " negotiating %u accept_q %u refused %llu wrong_class %llu\n",
				   READ_ONCE(sk->ss_lq->pending_len),
				   READ_ONCE(sk->ss_lq->accept_len),
				   st.conns_refused, st.conns_wrong_class);
			continue;
		}
		seq_putc(m, '\n');
		seq_printf(m, "  neg: max_send %u max_recv %u max_frag_send %u max_frag_recv %u max_rw %u ird %u ord %u\n",
			   sk->ss_neg.max_send_size, sk->ss_neg.max_recv_size,
			   sk->ss_neg.max_fragmented_send_size,
			   sk->ss_neg.max_fragmented_recv_size,
			   sk->ss_neg.max_read_write_size,
			   sk->ss_ep.responder_resources, sk->ss_ep.initiator_depth);
		seq_printf(m, "  msgs: sent %llu recv %llu; segs: sent %llu recv %llu; bytes: sent %llu (zero-copy %llu) recv %llu\n",
			   st.msgs_sent, st.msgs_recv, st.segs_sent,
			   st.segs_recv, st.bytes_sent, st.bytes_zcopy,
			   st.bytes_recv);
		seq_printf(m, "  credits: grants %llu waits %llu; keep-alive: sent %llu answered %llu; refused %llu\n",
			   st.grants_sent, st.credit_waits, st.keepalives_sent,
			   st.keepalives_answered, st.peer_refusals);
		seq_printf(m, "  mr: registered %llu local_inv %llu remote_inv %llu remote_inv_unknown %llu\n",
			   st.mrs_registered, st.mrs_local_inv,
			   st.mrs_remote_inv, st.remote_inv_unknown);
		seq_printf(m, "  rdma: reads %llu (%llu bytes) writes %llu (%llu bytes) posted %llu\n",
			   st.rdma_reads, st.rdma_read_bytes, st.rdma_writes,
			   st.rdma_write_bytes, st.rdma_writes_posted);
	}
	mutex_unlock(&smbd_socks_lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(smbd_connections);

static int smbd_conn_state_show(struct seq_file *m, void *v)
{
	struct sockaddr_storage src = {}, dst = {};
	struct smbd_sock *sk = m->private;
	enum smbd_state state;
	bool addr;
	int err;

	addr = smbd_sock_addrs_try(sk, &src, &dst);
	spin_lock_bh(&sk->ss_lock);
	state = sk->ss_state;
	err = sk->ss_err;
	spin_unlock_bh(&sk->ss_lock);
	seq_printf(m, "state %s\nrole %s\nerror %d\ndevice %s\n",
		   smbd_state_name(state), smbd_dbg_role(sk), err,
		   sk->ss_ep.devname[0] ? sk->ss_ep.devname : "-");
	if (addr)
		seq_printf(m, "local %pISpc\npeer %pISpc\n", &src, &dst);
	/* The completion queues' ids, as smbd_wc_* traces name them (0: none yet). */
	seq_printf(m, "send_cq %u\nrecv_cq %u\n", READ_ONCE(sk->ss_ep.send_cq_id),
		   READ_ONCE(sk->ss_ep.recv_cq_id));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(smbd_conn_state);

static int smbd_conn_negotiated_show(struct seq_file *m, void *v)
{
	struct smbd_sock *sk = m->private;
	struct smbd_negotiated n;
	u8 ird, ord;

	spin_lock_bh(&sk->ss_lock);
	n = sk->ss_neg;
	ird = sk->ss_ep.responder_resources;
	ord = sk->ss_ep.initiator_depth;
	spin_unlock_bh(&sk->ss_lock);
	seq_printf(m, "max_send_size %u\nmax_receive_size %u\nmax_fragmented_send_size %u\nmax_fragmented_receive_size %u\nmax_read_write_size %u\npeer_credits_requested %u\ninitial_send_credits %u\nird %u\nord %u\n",
		   n.max_send_size, n.max_recv_size,
		   n.max_fragmented_send_size, n.max_fragmented_recv_size,
		   n.max_read_write_size, n.peer_credits_requested,
		   n.send_credits, ird, ord);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(smbd_conn_negotiated);

static int smbd_conn_credits_show(struct seq_file *m, void *v)
{
	struct smbd_sock *sk = m->private;
	struct smbd_credits c;
	u32 tx_free, copy_free, nr_copy, waiters;

	spin_lock_bh(&sk->ss_lock);
	c = sk->ss_cred;
	tx_free = sk->ss_tx.free_count;
	copy_free = sk->ss_tx.copy_free_count;
	nr_copy = sk->ss_tx.nr_copy;
	waiters = sk->ss_tx.waiters;
	spin_unlock_bh(&sk->ss_lock);
	seq_printf(m, "send_credits %u\nsend_credit_target %u\nreceive_credit_max %u\nreceive_credit_target %u\nreceives_posted %u\npeer_holds %u\nsend_buffers_free %u\ncopy_buffers %u\ncopy_buffers_free %u\nsenders_waiting %u\n",
		   c.send_credits, c.send_credit_target, c.recv_credit_max,
		   c.recv_credit_target, c.recv_posted, c.recv_granted,
		   tx_free, nr_copy, copy_free, waiters);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(smbd_conn_credits);

static int smbd_conn_counters_show(struct seq_file *m, void *v)
{
	struct smbd_sock *sk = m->private;
	struct smbd_sock_stats st;
	struct smbd_counters c;

	spin_lock_bh(&sk->ss_lock);
	st = sk->ss_stats;
	c = sk->ss_cnt;
	spin_unlock_bh(&sk->ss_lock);
	seq_printf(m, "msgs_sent %llu\nmsgs_recv %llu\nsegs_sent %llu\nsegs_recv %llu\nbytes_sent %llu\nbytes_zero_copy %llu\nbytes_recv %llu\n",
		   st.msgs_sent, st.msgs_recv, st.segs_sent, st.segs_recv,
		   st.bytes_sent, st.bytes_zcopy, st.bytes_recv);
	seq_printf(m, "empty_sent %llu\nempty_recv %llu\nreassembled %llu\ncopy_waits %llu\n",
		   c.empty_sent, c.empty_recv, c.reassembled, c.copy_waits);
	seq_printf(m, "grants_sent %llu\ncredit_stalls %llu\nkeepalives_sent %llu\nkeepalives_answered %llu\n",
		   st.grants_sent, st.credit_waits, st.keepalives_sent,
		   st.keepalives_answered);
	seq_printf(m, "mrs_registered %llu\nmrs_local_inv %llu\nmrs_remote_inv %llu\nremote_inv_unknown %llu\n",
		   st.mrs_registered, st.mrs_local_inv, st.mrs_remote_inv,
		   st.remote_inv_unknown);
	seq_printf(m, "rdma_reads %llu\nrdma_read_bytes %llu\nrdma_writes %llu\nrdma_write_bytes %llu\nrdma_writes_posted %llu\n",
		   st.rdma_reads, st.rdma_read_bytes, st.rdma_writes,
		   st.rdma_write_bytes, st.rdma_writes_posted);
	seq_printf(m, "conns_refused %llu\nconns_wrong_class %llu\npeer_refusals %llu\ncompletion_errors %llu\ncredit_stall_ns %llu\n",
		   st.conns_refused, st.conns_wrong_class, st.peer_refusals,
		   c.wr_errors, c.credit_stall_ns);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(smbd_conn_counters);

static int smbd_conn_refusals_show(struct seq_file *m, void *v)
{
	struct smbd_sock *sk = m->private;
	struct smbd_counters c;
	u32 i;

	spin_lock_bh(&sk->ss_lock);
	c = sk->ss_cnt;
	spin_unlock_bh(&sk->ss_lock);
	/* Negotiation: 3.1.5.6 on a responder, 3.1.5.7 on an initiator. */
	for (i = 1; i < SMBD_NEG_ERR_NR; i++)
		seq_printf(m, "%s negotiate: %s: %u\n",
			   sk->ss_responder ? "3.1.5.6" : "3.1.5.7",
			   smbd_neg_err_str(i), c.neg_refused[i]);
	for (i = 1; i < SMBD_RX_ERR_NR; i++)
		seq_printf(m, "3.1.5.8 data: %s: %u\n", smbd_rx_err_str(i),
			   c.rx_refused[i]);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(smbd_conn_refusals);

#ifdef CONFIG_FAULT_INJECTION_DEBUG_FS
/*
 * conn/<id>/qp_event (write-only, with the kernel's fault injection): the
 * queue pair's event handler is called from a hard-IRQ timer with
 * IB_EVENT_QP_ACCESS_ERR, as a provider that delivers events from its
 * interrupt handler does (mlx4). The write returns once it ran.
 */
static enum hrtimer_restart smbd_inject_qp_event(struct hrtimer *t)
{
	struct smbd_sock *sk = container_of(t, struct smbd_sock,
					    ss_ep.inject_timer);
	struct ib_qp *qp = sk->ss_ep.qp;
	struct ib_event ev = {
		.device = qp->device,
		.element.qp = qp,
		.event = IB_EVENT_QP_ACCESS_ERR,
	};

	qp->event_handler(&ev, qp->qp_context);
	complete(&sk->ss_ep.inject_done);
	return HRTIMER_NORESTART;
}

static ssize_t smbd_conn_qp_event_write(struct file *file,
					const char __user *buf, size_t len,
					loff_t *pos)
{
	struct smbd_sock *sk = file->private_data;
	ssize_t ret = len;

	/* The queue pair stays while the teardown cannot run. */
	mutex_lock(&sk->ss_ep.teardown_mutex);
	if (!sk->ss_ep.qp || !sk->ss_ep.qp->event_handler) {
		ret = -ENOTCONN;
	} else {
		reinit_completion(&sk->ss_ep.inject_done);
		hrtimer_start(&sk->ss_ep.inject_timer, ns_to_ktime(NSEC_PER_USEC),
			      HRTIMER_MODE_REL_HARD);
		wait_for_completion(&sk->ss_ep.inject_done);
		/* Until the callback has returned. */
		hrtimer_cancel(&sk->ss_ep.inject_timer);
	}
	mutex_unlock(&sk->ss_ep.teardown_mutex);
	return ret;
}

static const struct file_operations smbd_conn_qp_event_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = smbd_conn_qp_event_write,
	.llseek = noop_llseek,
};

static void smbd_debugfs_inject_add(struct smbd_sock *sk)
{
	hrtimer_init(&sk->ss_ep.inject_timer, CLOCK_MONOTONIC,
		     HRTIMER_MODE_REL_HARD);
	sk->ss_ep.inject_timer.function = smbd_inject_qp_event;
	init_completion(&sk->ss_ep.inject_done);
	debugfs_create_file("qp_event", 0200, sk->ss_debugfs, sk,
			    &smbd_conn_qp_event_fops);
}
#else
static void smbd_debugfs_inject_add(struct smbd_sock *sk)
{
}
#endif

/**
 * smbd_debugfs_sock_add() - the debugfs directory of a new socket
 * @sk: the socket, with its id
 *
 * Context: process.
 */
void smbd_debugfs_sock_add(struct smbd_sock *sk)
{
	char name[16];

	snprintf(name, sizeof(name), "%u", sk->ss_id);
	sk->ss_debugfs = debugfs_create_dir(name, smbd_conn_root);
	debugfs_create_file("state", 0444, sk->ss_debugfs, sk,
			    &smbd_conn_state_fops);
	debugfs_create_file("negotiated", 0444, sk->ss_debugfs, sk,
			    &smbd_conn_negotiated_fops);
	debugfs_create_file("credits", 0444, sk->ss_debugfs, sk,
			    &smbd_conn_credits_fops);
	debugfs_create_file("counters", 0444, sk->ss_debugfs, sk,
			    &smbd_conn_counters_fops);
	debugfs_create_file("refusals", 0444, sk->ss_debugfs, sk,
			    &smbd_conn_refusals_fops);
	smbd_debugfs_inject_add(sk);
}

/**
 * smbd_debugfs_sock_del() - remove a socket's debugfs directory
 * @sk: the socket, about to be freed
 *
 * Returns once no read of its files is in progress.
 *
 * Context: process; may sleep.
 */
void smbd_debugfs_sock_del(struct smbd_sock *sk)
{
	debugfs_remove_recursive(sk->ss_debugfs);
	sk->ss_debugfs = NULL;
}

/**
 * smbd_debugfs_init() - the connections file and the conn directory
 * @root: smbd's debugfs directory
 *
 * Context: process (module init).
 */
void smbd_debugfs_init(struct dentry *root)
{
	debugfs_create_file("connections", 0444, root, NULL,
			    &smbd_connections_fops);
	smbd_conn_root = debugfs_create_dir("conn", root);
}

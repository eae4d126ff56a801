// SPDX-License-Identifier: GPL-2.0
/*
 * smbd: SMB Direct ([MS-SMBD]) for in-kernel consumers.
 *
 * The module: its work queue, its debugfs directory (smbd/devices from
 * smbd_dev.c, smbd/connections here) and the RDMA device client.
 */

#include <linux/debugfs.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/seq_file.h>
#include <rdma/rdma_cm.h>

#include "smbd_internal.h"

static struct dentry *smbd_debugfs_root;

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
			   smbd_state_name(READ_ONCE(sk->ss_state)),
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
	debugfs_create_file("connections", 0444, smbd_debugfs_root, NULL,
			    &smbd_connections_fops);

	ret = smbd_dev_init(smbd_debugfs_root);
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
	smbd_dev_exit();
	debugfs_remove_recursive(smbd_debugfs_root);
	destroy_workqueue(smbd_wq);
}

module_init(smbd_init);
module_exit(smbd_exit);

MODULE_DESCRIPTION("SMB Direct (MS-SMBD) transport for in-kernel SMB consumers");
MODULE_LICENSE("GPL");

// SPDX-License-Identifier: GPL-2.0
/*
 * smbd_cifs: the kernel SMB client's SMB Direct interface on smbd.ko.
 *
 * adapters/build.sh links this file, with adapters/cifs-common/, into
 * cifs.ko, built from Debian's linux-source-6.12 (fs/smb/client), in place
 * of cifs's own smbdirect.o.
 * cifs calls the functions its smbdirect.h declares (smbd_get_connection,
 * smbd_reconnect, smbd_destroy, smbd_send, smbd_recv, smbd_register_mr,
 * smbd_deregister_mr) and reads some fields of struct smbd_connection
 * (socket.parameters and socket.status for its I/O sizes and DebugData,
 * max_frmr_depth, the counters DebugData prints) and of struct smbd_mr
 * (mr->iova, rkey and length for the SMB2 channel info). Everything else
 * is smbd's: negotiation, credits, segmentation and reassembly,
 * keep-alive, registration with verified remote invalidation.
 *
 * This file holds what is 6.12's: what cifs reads of a connection,
 * sending and registering (6.12's cifs hands an iov_iter). The rest, the
 * same for 6.1, is adapters/cifs-common/smbd_cifs_conn.c.
 */

#include <linux/kref.h>
#include <linux/slab.h>
#include <linux/uio.h>

#include "cifsglob.h"
#include "cifsproto.h"
#include "cifs_debug.h"
#include "smbdirect.h"

#include <smbd.h>

#include "smbd_cifs.h"

/* smbd_cifs.h: 6.12's cifs keeps the state in socket.status. */
void smbd_cifs_set_status(struct smbd_connection *info,
			  enum smbd_cifs_status st)
{
	static const enum smbdirect_socket_status to[] = {
		[SMBD_CIFS_UP] = SMBDIRECT_SOCKET_CONNECTED,
		[SMBD_CIFS_DOWN] = SMBDIRECT_SOCKET_DISCONNECTED,
		[SMBD_CIFS_GONE] = SMBDIRECT_SOCKET_DESTROYED,
	};

	info->socket.status = to[st];
}

/*
 * smbd_cifs.h: no RDMA I/O, or less than a page: cifs's I/O size would be
 * below a page and its max_frmr_depth 0, which netfs takes as no segment
 * limit on a read (sreq_max_segs).
 */
int smbd_cifs_check(struct smbd_cifs_conn *c, const struct smbd_sock_info *si)
{
	return si->max_reg_size < PAGE_SIZE ? -EOPNOTSUPP : 0;
}

/* smbd_cifs.h: what cifs reads of a new connection, its I/O sizes among them. */
void smbd_cifs_info(struct smbd_cifs_conn *c, const struct smbd_sock_info *si)
{
	struct smbdirect_socket_parameters *sp = &c->info.socket.parameters;

	/*
	 * cifs's I/O sizes come from these ([MS-SMBD] 3.1.4.7). One I/O is
	 * one descriptor in cifs's channel info, so its size is what a
	 * single registration maps.
	 */
	sp->recv_credit_max = smbd_receive_credit_max;
	sp->send_credit_target = smbd_send_credit_target;
	sp->max_send_size = si->max_send_size;
	sp->max_fragmented_send_size = si->max_fragmented_send_size;
	sp->max_recv_size = si->max_recv_size;
	sp->max_fragmented_recv_size = si->max_fragmented_recv_size;
	/*
	 * Whole pages: netfs cuts I/O by max_frmr_depth pages, and a peer's
	 * MaxReadWriteSize need not be a multiple of one.
	 */
	sp->max_read_write_size = round_down(si->max_reg_size, PAGE_SIZE);
	sp->keepalive_interval_msec = si->keepalive_interval_ms;
	smbd_cifs_set_status(&c->info, SMBD_CIFS_UP);
	c->info.protocol = 0x100;	/* SMB Direct 1.0 ([MS-SMBD] 2.2.1) */
	c->info.max_frmr_depth = sp->max_read_write_size / PAGE_SIZE;
	c->info.responder_resources = si->responder_resources;
	c->info.rdma_readwrite_threshold = rdma_readwrite_threshold;
	c->info.mr_type = IB_MR_TYPE_MEM_REG;
}

static void smbd_cifs_add(struct smbd_cifs_parts *pt, const struct iov_iter *it)
{
	if (!iov_iter_count(it))
		return;
	if (pt->n < ARRAY_SIZE(pt->it))
		pt->it[pt->n] = *it;
	pt->n++;
	pt->len += iov_iter_count(it);
}

/* The SMB2 part of @rqst's kvecs: a 4-byte RFC 1002 length is not sent. */
static void smbd_cifs_kvecs(struct TCP_Server_Info *server,
			    struct smb_rqst *rqst, struct iov_iter *it)
{
	struct kvec *iov = rqst->rq_iov;
	unsigned int i, nvec = rqst->rq_nvec;
	size_t len = 0;

	if (!is_smb1(server) && nvec >= 2 && iov[0].iov_len == 4) {
		iov++;
		nvec--;
	}
	for (i = 0; i < nvec; i++)
		len += iov[i].iov_len;
	iov_iter_kvec(it, ITER_SOURCE, iov, nvec, len);
}

/* Rare: more parts than smbd joins. Send the message from one copy. */
static ssize_t smbd_cifs_send_copy(struct TCP_Server_Info *server,
				   struct smbd_sock *sk, size_t len,
				   struct smb_rqst *rqst, int num_rqst)
{
	struct iov_iter from, it;
	size_t done = 0;
	struct kvec kv;
	ssize_t n;
	void *buf;
	int i;

	buf = kvmalloc(len, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	for (i = 0; i < num_rqst; i++) {
		smbd_cifs_kvecs(server, &rqst[i], &it);
		done += copy_from_iter(buf + done, iov_iter_count(&it), &it);
		it = rqst[i].rq_iter;
		done += copy_from_iter(buf + done, iov_iter_count(&it), &it);
	}
	kv.iov_base = buf;
	kv.iov_len = done;
	iov_iter_kvec(&from, ITER_SOURCE, &kv, 1, done);
	n = done == len ? smbd_sock_send(sk, &from,
					 smbd_send_copy_flag(len)) : -EFAULT;
	kvfree(buf);
	return n;
}

/**
 * smbd_send() - send one SMB2 message (a compound chain is one message)
 * @server: the cifs server
 * @num_rqst: requests in @rqst
 * @rqst: the requests; their kvecs and data iterators are not consumed
 *
 * All requests go as one upper-layer message: smbd segments it by
 * MaxSendSize and keeps its segments together ([MS-SMBD] 3.1.5.4). The
 * data pages of a message over SMBD_SEND_COPY_MAX are sent from where
 * they are, without a copy, and the call waits for the device; a smaller
 * message is copied and the call returns once it is posted.
 *
 * Context: process, with the server mutex held; sleeps for Send Credits.
 * Return: 0; -EAGAIN while there is no connection; -EINTR if a signal
 * came before anything was sent; -EMSGSIZE above MaxFragmentedSendSize;
 * -ECONNABORTED when the connection is lost or a signal cut the message,
 * which cifs answers with a reconnect.
 */
int smbd_send(struct TCP_Server_Info *server, int num_rqst,
	      struct smb_rqst *rqst)
{
	struct smbd_cifs_parts *pt;
	struct smbd_cifs_conn *c;
	struct smbd_sock *sk;
	struct iov_iter it;
	ssize_t n = 0;
	unsigned int i;

	if (!server->smbd_conn)
		return -EAGAIN;
	c = smbd_cifs(server->smbd_conn);
	sk = smbd_cifs_sk(c);
	if (!sk)
		return -EAGAIN;
	pt = &c->parts;
	pt->n = 0;
	pt->len = 0;
	for (i = 0; i < (unsigned int)num_rqst; i++) {
		smbd_cifs_kvecs(server, &rqst[i], &it);
		smbd_cifs_add(pt, &it);
		smbd_cifs_add(pt, &rqst[i].rq_iter);
	}
	if (!pt->len)
		return 0;
	if (pt->len > c->info.socket.parameters.max_fragmented_send_size)
		return -EMSGSIZE;

	if (pt->n > ARRAY_SIZE(pt->it)) {
		i = 0;
		n = smbd_cifs_send_copy(server, sk, pt->len, rqst, num_rqst);
	} else {
		/* Small messages are copied: no wait under srv_mutex. */
		unsigned int last = smbd_send_copy_flag(pt->len);

		for (i = 0; i < pt->n; i++) {
			n = smbd_sock_send(sk, &pt->it[i],
					   i + 1 < pt->n ? SMBD_SEND_MORE : last);
			if (n < 0)
				break;
		}
	}
	if (n >= 0 && (size_t)n == pt->len)
		return 0;
	/* Nothing recorded or sent yet: cifs may simply try again. */
	if (n == -ERESTARTSYS && i == 0)
		return -EINTR;
	/* Lost, or cut short by a signal: the peer cannot parse what follows. */
	smbd_cifs_set_status(&c->info, SMBD_CIFS_DOWN);
	smbd_sock_shutdown(sk);
	return -ECONNABORTED;
}

/**
 * smbd_register_mr() - open a buffer to the server for RDMA
 * @info: the connection
 * @iter: the buffer; not consumed
 * @writing: true when the server writes into the buffer (RDMA Write, an
 *	SMB2 READ), false when it reads from it (RDMA Read, an SMB2 WRITE)
 * @need_invalidate: the server may invalidate it with Send with
 *	Invalidate; smbd checks any remote invalidation against the rkey and
 *	invalidates locally otherwise, so this changes nothing here
 *
 * One MR with a fresh rkey and only the access the I/O needs ([MS-SMBD]
 * 3.1.4.3); cifs sizes its I/O so that one always suffices. On the
 * current connection, which the registration then holds: cifs calls
 * this without the server mutex, and a reconnect may replace it
 * meanwhile.
 *
 * Context: process; sleeps while every MR is in use.
 * Return: the registration, or NULL.
 */
struct smbd_mr *smbd_register_mr(struct smbd_connection *info,
				 struct iov_iter *iter, bool writing,
				 bool need_invalidate)
{
	struct smbd_cifs_conn *c = smbd_cifs(info);
	struct smbd_buf_desc d;
	struct smbd_cifs_mr *m;
	struct iov_iter it = *iter;
	int ret;

	m = kzalloc(sizeof(*m), GFP_KERNEL);
	if (!m)
		return NULL;
	m->link = smbd_cifs_link_get(c);
	ret = m->link ? smbd_register(m->link->sk, &it, writing ?
				      SMBD_REG_PEER_WRITES :
				      SMBD_REG_PEER_READS, &d, 1, &m->reg) :
			-ENOTCONN;
	if (ret != 1) {
		cifs_dbg(VFS, "smbd: registering %zu bytes failed: %d\n",
			 iov_iter_count(iter), ret);
		if (m->link)
			smbd_cifs_link_put(m->link);
		kfree(m);
		return NULL;
	}
	m->view.iova = d.offset;
	m->view.rkey = d.token;
	m->view.length = d.length;
	m->mr.mr = &m->view;
	m->mr.conn = info;
	m->mr.state = MR_REGISTERED;
	m->mr.dir = writing ? DMA_FROM_DEVICE : DMA_TO_DEVICE;
	m->mr.need_invalidate = need_invalidate;
	atomic_inc(&info->mr_used_count);
	return &m->mr;
}

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

/* smbd_cifs.h. Rare: more parts than smbd joins. */
void *smbd_cifs_copy(struct TCP_Server_Info *server, size_t len,
		     struct smb_rqst *rqst, int num_rqst)
{
	struct iov_iter it;
	size_t n, done = 0;
	void *buf;
	int i;

	buf = kvmalloc(len, GFP_KERNEL);
	if (!buf)
		return ERR_PTR(-ENOMEM);
	for (i = 0; i < num_rqst; i++) {
		smbd_cifs_kvecs(server, &rqst[i], &it);
		n = iov_iter_count(&it);
		if (n > len - done)
			goto fault;
		done += copy_from_iter(buf + done, n, &it);
		it = rqst[i].rq_iter;
		n = iov_iter_count(&it);
		if (n > len - done)
			goto fault;
		done += copy_from_iter(buf + done, n, &it);
	}
	if (done == len)
		return buf;
fault:
	kvfree(buf);
	return ERR_PTR(-EFAULT);
}

/* smbd_cifs.h: the kvecs, then the data iterator, of each request. */
int smbd_cifs_build(struct TCP_Server_Info *server, struct smbd_cifs_conn *c,
		    struct smb_rqst *rqst, int num_rqst)
{
	struct smbd_cifs_parts *pt = &c->parts;
	struct iov_iter it;
	int i;

	pt->n = 0;
	pt->len = 0;
	pt->copy = false;
	for (i = 0; i < num_rqst; i++) {
		smbd_cifs_kvecs(server, &rqst[i], &it);
		smbd_cifs_add(pt, &it);
		smbd_cifs_add(pt, &rqst[i].rq_iter);
	}
	return pt->len > c->info.socket.parameters.max_fragmented_send_size ?
	       -EMSGSIZE : 0;
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
	struct iov_iter it = *iter;
	struct smbd_cifs_mr *m;

	m = kzalloc(sizeof(*m), GFP_KERNEL);
	if (!m)
		return NULL;
	return smbd_cifs_register(info, m, &it, writing, need_invalidate);
}

// SPDX-License-Identifier: GPL-2.0
/*
 * smbd_cifs_conn: the kernel SMB client's SMB Direct connections on
 * smbd.ko, the part that is the same for every kernel series
 * (adapters/cifs-common/; smbd_cifs.h says which part is the series').
 *
 * Lifetime: server->smbd_conn is one smbd_cifs_conn for the life of the
 * cifs server, across reconnects: cifs reads the pointer without a lock
 * where it registers a buffer (smb2_new_read_req(), smb2_async_writev())
 * and in DebugData, so a reconnect must not free what a reader may still
 * hold. Each connection is an smbd_cifs_link, current in the conn until
 * a reconnect or smbd_destroy() replaces it; a link holds its socket,
 * and a reference for being current and one per live registration, so
 * a READ or WRITE that cifs completes after a reconnect still finds the
 * MR it deregisters. Only the final smbd_destroy() (the server is going:
 * not the one a reconnect makes) clears server->smbd_conn and drops
 * cifs's reference to the conn; every link holds one too.
 *
 * Serialisation is cifs's: smbd_send() runs under the server mutex, as
 * do smbd_reconnect() and smbd_destroy(); smbd_recv() runs only in the
 * demultiplex thread, which is also the one that reconnects and destroys.
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

/* cifs's tunables (/proc/fs/cifs/...), read at each connection. */
int rdma_readwrite_threshold = 4096;
int smbd_max_frmr_depth = 2048;
int smbd_keep_alive_interval = 120;		/* seconds */
int smbd_max_receive_size = 1364;
int smbd_max_fragmented_recv_size = 1024 * 1024;
int smbd_max_send_size = 1364;
int smbd_send_credit_target = 255;
int smbd_receive_credit_max = 255;

static void smbd_cifs_free(struct kref *ref)
{
	struct smbd_cifs_conn *c = container_of(ref, struct smbd_cifs_conn,
						ref);

	kvfree(c->parts.bv);
	kfree(c);
}

static void smbd_cifs_put(struct smbd_cifs_conn *c)
{
	kref_put(&c->ref, smbd_cifs_free);
}

static void smbd_cifs_link_free(struct kref *ref)
{
	struct smbd_cifs_link *l = container_of(ref, struct smbd_cifs_link,
					       ref);

	smbd_sock_release(l->sk);
	smbd_cifs_put(l->conn);
	kfree(l);
}

/* Drop a reference to @l: its socket and its conn's go with the last. */
void smbd_cifs_link_put(struct smbd_cifs_link *l)
{
	kref_put(&l->ref, smbd_cifs_link_free);
}

/* The current link with a reference, or NULL. */
struct smbd_cifs_link *smbd_cifs_link_get(struct smbd_cifs_conn *c)
{
	struct smbd_cifs_link *l;

	spin_lock(&c->lock);
	l = c->link;
	if (l)
		kref_get(&l->ref);
	spin_unlock(&c->lock);
	return l;
}

/* Copy smbd's view of the connection into the fields cifs prints. */
static void smbd_cifs_refresh(struct smbd_cifs_conn *c)
{
	struct smbd_connection *info = &c->info;
	struct smbd_sock *sk = smbd_cifs_sk(c);
	struct smbd_sock_stats st;
	struct smbd_sock_info si;

	if (!sk) {
		smbd_cifs_set_status(info, SMBD_CIFS_DOWN);
		return;
	}
	if (smbd_sock_query(sk, &si) == 0) {
		atomic_set(&info->send_credits, si.send_credits);
		atomic_set(&info->receive_credits, si.recv_credits);
		info->receive_credit_target = si.recv_credit_target;
	} else {
		smbd_cifs_set_status(info, SMBD_CIFS_DOWN);
	}
	smbd_sock_stats(sk, &st);
	info->count_send_empty = st.segs_sent - st.msgs_sent;
	info->count_enqueue_reassembly_queue = st.segs_recv;
	info->count_dequeue_reassembly_queue = st.msgs_recv;
}

/* smbd's upcall: the connection was established or lost. */
static void smbd_cifs_state_change(struct smbd_sock *sk)
{
	struct smbd_cifs_link *l = smbd_sock_priv(sk);
	struct smbd_sock_info si;

	/* Not for a link a reconnect has replaced. */
	if (READ_ONCE(l->conn->link) == l && smbd_sock_query(sk, &si))
		smbd_cifs_set_status(&l->conn->info, SMBD_CIFS_DOWN);
}

static const struct smbd_sock_ops smbd_cifs_ops = {
	.state_change = smbd_cifs_state_change,
};

static void smbd_cifs_params(struct smbd_params *p)
{
	smbd_params_init(p, false);
	p->recv_credit_max = clamp(smbd_receive_credit_max, 1, 65535);
	p->send_credit_target = clamp(smbd_send_credit_target, 1, 65535);
	p->max_send_size = clamp(smbd_max_send_size, 128, 65536);
	p->max_recv_size = clamp(smbd_max_receive_size, 128, 65536);
	/*
	 * cifs's own sizes, as the stock client offers them: a Windows
	 * server refuses a PreferredSendSize above 8136 ([MS-SMBD] WIN<6>).
	 */
	p->large_size = 0;
	/*
	 * No more than smbd_recv() can frame as the 24-bit length cifs
	 * reads ([MS-SMB2] 2.1): a longer message would end the connection.
	 */
	p->max_fragmented_recv_size = clamp(smbd_max_fragmented_recv_size,
					    128 * 1024, SMBD_STREAM_MAX_MSG);
	p->max_read_write_size = clamp_t(u32, smbd_max_frmr_depth, 1, 4096) *
				 PAGE_SIZE;
	p->keepalive_interval_ms = max(smbd_keep_alive_interval, 0) * 1000;
}

/*
 * A connected smbd socket to @dst. A port other than SMB's 445 that the
 * mount gave is tried first; then SMB Direct's default for the device
 * that reaches the peer ([MS-SMBD] 1.9: 5445 on iWARP, 445 on IB/RoCE),
 * then both well-known ones (a Linux ksmbd listens on 5445 for every
 * device as soon as one iWARP device exists). Only a refusal moves on to
 * the next port; each attempt gets a new socket.
 */
static int smbd_cifs_connect(struct smbd_cifs_link *l, struct net *net,
			     const struct sockaddr *dst)
{
	u16 ports[4], given = smbd_addr_port(dst);
	struct sockaddr_storage a;
	struct smbd_params p;
	int i, n = 0, ret;

	if (given && given != SMBD_PORT_IB)
		ports[n++] = given;
	ports[n++] = 0;
	ports[n++] = SMBD_PORT_IWARP;
	ports[n++] = SMBD_PORT_IB;
	smbd_cifs_params(&p);
	memset(&a, 0, sizeof(a));
	ret = smbd_addr_len(dst);
	if (ret < 0)
		return ret;
	memcpy(&a, dst, ret);
	for (i = 0, ret = -ECONNREFUSED; i < n && ret == -ECONNREFUSED; i++) {
		ret = smbd_sock_create(net, &p, &l->sk);
		if (ret)
			return ret;
		smbd_sock_set_ops(l->sk, &smbd_cifs_ops, l);
		smbd_addr_set_port((struct sockaddr *)&a, ports[i]);
		ret = smbd_sock_connect(l->sk, (struct sockaddr *)&a);
		if (ret) {
			smbd_sock_release(l->sk);
			l->sk = NULL;
		}
	}
	return ret;
}

/*
 * Connect @c to @dst and make the link current; @c has none. Under the
 * server mutex, or before cifs has the conn.
 */
static int smbd_cifs_link_new(struct smbd_cifs_conn *c,
			      struct TCP_Server_Info *server,
			      const struct sockaddr *dst)
{
	struct smbd_cifs_link *l;
	struct smbd_sock_info si;
	int ret;

	l = kzalloc(sizeof(*l), GFP_KERNEL);
	if (!l)
		return -ENOMEM;
	/* The socket's upcalls may come as soon as it connects. */
	kref_init(&l->ref);
	kref_get(&c->ref);
	l->conn = c;
	ret = smbd_cifs_connect(l, cifs_net_ns(server), dst);
	if (!ret)
		ret = smbd_sock_query(l->sk, &si);
	/* What the series' cifs needs of a connection to use it. */
	if (!ret)
		ret = smbd_cifs_check(c, &si);
	if (ret) {
		cifs_dbg(VFS, "smbd: SMB Direct connection to %pISpc failed: %d\n",
			 dst, ret);
		if (l->sk)
			smbd_sock_release(l->sk);
		smbd_cifs_put(c);
		kfree(l);
		return ret;
	}
	smbd_cifs_info(c, &si);
	spin_lock(&c->lock);
	WARN_ON_ONCE(c->link);
	c->link = l;
	spin_unlock(&c->lock);
	smbd_cifs_refresh(c);
	return 0;
}

/* The current link, if any, shut down and no longer current. */
static void smbd_cifs_unlink(struct smbd_cifs_conn *c)
{
	struct smbd_cifs_link *l;

	spin_lock(&c->lock);
	l = c->link;
	c->link = NULL;
	spin_unlock(&c->lock);
	if (!l)
		return;
	smbd_sock_shutdown(l->sk);
	smbd_cifs_link_put(l);
}

/**
 * smbd_get_connection() - connect a cifs server over SMB Direct
 * @server: the cifs server; its network namespace is used
 * @dstaddr: the server's address (IPv4 or IPv6)
 *
 * Context: process; sleeps through address resolution, the connection
 * and SMB Direct negotiation ([MS-SMBD] 3.1.5.2).
 * Return: the connection, or NULL (cifs then fails the mount or retries
 * the reconnect).
 */
struct smbd_connection *smbd_get_connection(struct TCP_Server_Info *server,
					    struct sockaddr *dstaddr)
{
	struct smbd_cifs_conn *c;

	c = kzalloc(sizeof(*c), GFP_KERNEL);
	if (!c)
		return NULL;
	spin_lock_init(&c->lock);
	kref_init(&c->ref);
	if (smbd_cifs_link_new(c, server, dstaddr)) {
		smbd_cifs_put(c);
		return NULL;
	}
	return &c->info;
}

/**
 * smbd_destroy() - end a cifs server's SMB Direct connection
 * @server: the cifs server; server->smbd_conn may be NULL
 *
 * Wakes the demultiplex thread if it waits for data and shuts the
 * connection down; its smbd socket goes once cifs has deregistered every
 * buffer of it. A reconnect's destroy (the server needs reconnecting)
 * keeps server->smbd_conn for the next connection: cifs may be about to
 * register a buffer through it. Any other is final: the server is going,
 * and server->smbd_conn is cleared.
 *
 * Context: process, with the server mutex held or from the demultiplex
 * thread as it exits.
 */
void smbd_destroy(struct TCP_Server_Info *server)
{
	struct smbd_cifs_conn *c;
	bool final;

	if (!server->smbd_conn)
		return;
	c = smbd_cifs(server->smbd_conn);
	spin_lock(&server->srv_lock);
	final = server->tcpStatus != CifsNeedReconnect;
	spin_unlock(&server->srv_lock);
	smbd_cifs_unlink(c);
	if (!final) {
		smbd_cifs_set_status(&c->info, SMBD_CIFS_DOWN);
		return;
	}
	smbd_cifs_set_status(&c->info, SMBD_CIFS_GONE);
	server->smbd_conn = NULL;
	smbd_cifs_put(c);
}

/**
 * smbd_reconnect() - make sure a cifs server has a live connection
 * @server: the cifs server
 *
 * Context: process, with the server mutex held.
 * Return: 0 when connected (again); -ENOENT otherwise.
 */
int smbd_reconnect(struct TCP_Server_Info *server)
{
	struct smbd_sock_info si;
	struct smbd_sock *sk;
	struct sockaddr *dst;

	sk = server->smbd_conn ? smbd_cifs_sk(smbd_cifs(server->smbd_conn)) :
				 NULL;
	if (sk && !smbd_sock_query(sk, &si))
		return 0;
	smbd_destroy(server);
	dst = (struct sockaddr *)&server->dstaddr;
	if (server->smbd_conn)
		return smbd_cifs_link_new(smbd_cifs(server->smbd_conn), server,
					  dst) ? -ENOENT : 0;
	server->smbd_conn = smbd_get_connection(server, dst);
	return server->smbd_conn ? 0 : -ENOENT;
}

/* The SMB2 part of @rqst's kvecs: a 4-byte RFC 1002 length is not sent. */
void smbd_cifs_kvecs(struct TCP_Server_Info *server, struct smb_rqst *rqst,
		     struct iov_iter *it)
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

/*
 * @it as the next part of @pt's message; past %SMBD_MORE_MAX parts the
 * message is marked to go from one copy.
 */
void smbd_cifs_add(struct smbd_cifs_parts *pt, const struct iov_iter *it)
{
	if (!iov_iter_count(it))
		return;
	if (pt->n < ARRAY_SIZE(pt->it))
		pt->it[pt->n++] = *it;
	else
		pt->copy = true;
	pt->len += iov_iter_count(it);
}

/*
 * @c's message as smbd_cifs_build() made it, or from @copy
 * (all of it in one buffer, which this frees) when it is marked so.
 * Small messages are copied by smbd: no wait under the server mutex.
 * Return: 0 when all of it went; -EINTR when a signal came before
 * anything was sent (cifs may simply try again); -ECONNABORTED when the
 * connection is lost or a signal cut the message, after which the peer
 * cannot parse what follows: the connection is shut down for cifs's
 * reconnect.
 */
static int smbd_cifs_send_msg(struct smbd_cifs_conn *c,
			      struct smbd_sock *sk, void *copy)
{
	struct smbd_cifs_parts *pt = &c->parts;
	unsigned int last = smbd_send_copy_flag(pt->len);
	unsigned int i = 0;
	struct iov_iter it;
	struct kvec kv;
	ssize_t n = 0;

	if (copy) {
		kv.iov_base = copy;
		kv.iov_len = pt->len;
		iov_iter_kvec(&it, ITER_SOURCE, &kv, 1, kv.iov_len);
		n = smbd_sock_send(sk, &it, last);
		kvfree(copy);
	} else {
		for (i = 0; i < pt->n; i++) {
			n = smbd_sock_send(sk, &pt->it[i],
					   i + 1 < pt->n ? SMBD_SEND_MORE : last);
			if (n < 0)
				break;
		}
	}
	if (n >= 0 && (size_t)n == pt->len)
		return 0;
	if (n == -ERESTARTSYS && i == 0)
		return -EINTR;
	smbd_cifs_set_status(&c->info, SMBD_CIFS_DOWN);
	smbd_sock_shutdown(sk);
	return -ECONNABORTED;
}

/**
 * smbd_send() - send one SMB2 message (a compound chain is one message)
 * @server: the cifs server
 * @num_rqst: requests in @rqst
 * @rqst: the requests: kvecs, then data (6.12: an iterator; 6.1:
 *	pages); neither is consumed or changed
 *
 * All requests go as one upper-layer message: smbd segments it by
 * MaxSendSize and keeps its segments together ([MS-SMBD] 3.1.5.4). The
 * data of a message over SMBD_SEND_COPY_MAX is sent from where it is,
 * without a copy, and the call waits for the device; a smaller message
 * is copied and the call returns once it is posted.
 *
 * Context: process, with the server mutex held; sleeps for Send Credits.
 * Return: 0; -EAGAIN while there is no connection; -EINTR if a signal
 * came before anything was sent; -EMSGSIZE above MaxFragmentedSendSize;
 * -EINVAL (6.1) for a page part beyond its page; -ENOMEM when a message
 * that must be copied finds no memory (nothing was sent for these);
 * -ECONNABORTED when the connection is lost or a signal cut the message,
 * which cifs answers with a reconnect.
 */
int smbd_send(struct TCP_Server_Info *server, int num_rqst,
	      struct smb_rqst *rqst)
{
	struct smbd_cifs_conn *c;
	struct smbd_sock *sk;
	void *buf = NULL;
	int ret;

	if (!server->smbd_conn)
		return -EAGAIN;
	c = smbd_cifs(server->smbd_conn);
	sk = smbd_cifs_sk(c);
	if (!sk)
		return -EAGAIN;
	ret = smbd_cifs_build(server, c, rqst, num_rqst);
	if (ret || !c->parts.len)
		return ret;
	if (c->parts.copy) {
		buf = smbd_cifs_copy(server, c->parts.len, rqst, num_rqst);
		if (IS_ERR(buf))
			return PTR_ERR(buf);
	}
	return smbd_cifs_send_msg(c, sk, buf);
}

/**
 * smbd_recv() - read from the byte stream cifs expects
 * @info: the connection
 * @msg: msg_iter is filled and advanced
 *
 * Each SMB2 message reads as its 4-byte big-endian length and then the
 * message, as over TCP ([MS-SMB2] 2.1); smbd reassembles it from its
 * Data Transfer messages ([MS-SMBD] 3.1.5.8).
 *
 * Context: the demultiplex thread; sleeps until data arrives.
 * Return: bytes read; -ERESTARTSYS on a signal; the connection's error
 * once it is lost.
 */
int smbd_recv(struct smbd_connection *info, struct msghdr *msg)
{
	struct smbd_cifs_conn *c = smbd_cifs(info);
	struct smbd_sock *sk = smbd_cifs_sk(c);
	ssize_t n;

	/* Between a loss and the reconnect, which this error asks for. */
	if (!sk) {
		smbd_cifs_set_status(info, SMBD_CIFS_DOWN);
		return -ECONNABORTED;
	}
	n = smbd_sock_recv_stream(sk, &msg->msg_iter, 0);
	if (n < 0 && n != -ERESTARTSYS)
		smbd_cifs_set_status(info, SMBD_CIFS_DOWN);
	else
		smbd_cifs_refresh(c);
	return n;
}

/* smbd_cifs.h: the end of smbd_register_mr(). */
struct smbd_mr *smbd_cifs_register(struct smbd_connection *info,
				   struct smbd_cifs_mr *m, struct iov_iter *it,
				   bool writing, bool need_invalidate)
{
	size_t len = iov_iter_count(it);
	struct smbd_buf_desc d;
	int ret;

	m->link = smbd_cifs_link_get(smbd_cifs(info));
	ret = m->link ? smbd_register(m->link->sk, it, writing ?
				      SMBD_REG_PEER_WRITES :
				      SMBD_REG_PEER_READS, &d, 1, &m->reg) :
			-ENOTCONN;
	if (ret != 1) {
		cifs_dbg(VFS, "smbd: registering %zu bytes failed: %d\n", len,
			 ret);
		if (m->link)
			smbd_cifs_link_put(m->link);
		kvfree(m);
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

/**
 * smbd_deregister_mr() - close a buffer to the server
 * @mr: from smbd_register_mr()
 *
 * When this returns the server can no longer reach the buffer: the MR was
 * invalidated by the server with its exact rkey, or here ([MS-SMBD]
 * 3.1.4.4), or the connection is gone.
 *
 * Context: process; sleeps for the local invalidation.
 * Return: 0, or the error that ended the connection before or while the
 * MR was invalidated (smbd_deregister()), as cifs's own smbdirect.c
 * returns a failed invalidation. @mr is freed and the buffer unreachable
 * either way; cifs's callers go on as for 0.
 */
int smbd_deregister_mr(struct smbd_mr *mr)
{
	struct smbd_cifs_mr *m = container_of(mr, struct smbd_cifs_mr, mr);
	struct smbd_cifs_link *l = m->link;
	int ret;

	ret = smbd_deregister(l->sk, m->reg);
	atomic_dec(&l->conn->info.mr_used_count);
	kvfree(m);
	/* May be the last of the link, and of the conn. */
	smbd_cifs_link_put(l);
	return ret;
}

MODULE_IMPORT_NS(SMBD);

// SPDX-License-Identifier: GPL-2.0
/*
 * smbd_ksmbd_io: the kernel SMB server's SMB Direct connections on
 * smbd.ko, the same for every kernel series: a ksmbd connection and its
 * handler thread made of each accepted socket (smbd_ksmbd_new_conn(),
 * with the series' smbd_ksmbd_attach() and smbd_ksmbd_publish()), and
 * the reads, sends and RDMA transfers of ksmbd's transport operations,
 * which the series' smbd_ksmbd.c puts in its operations table next to
 * its own ->disconnect (and, on 6.12, ->shutdown and ->free_transport).
 *
 * Reading: the handler thread reads without blocking in smbd and sleeps
 * on its own wait queue, woken by smbd's upcalls and when the connection
 * is shut down, and at least every KSMBD_TCP_RECV_TIMEOUT to look at
 * ksmbd_conn_alive(), as over TCP. Sends run under the connection's
 * srv_mutex; reads only in the handler thread.
 */

#define SUBMOD_NAME	"smbd"

#include <linux/kthread.h>
#include <linux/slab.h>
#include <linux/uio.h>
#include <linux/wait.h>

#include "glob.h"
#include "connection.h"
#include "smb_common.h"
#include "transport_rdma.h"

#include <smbd.h>

#include "smbd_ksmbd.h"

/* 6.1's ksmbd has no such flags of its own. */
#ifndef KSMBD_DEFAULT_GFP
#define KSMBD_DEFAULT_GFP	GFP_KERNEL
#endif

/* SMB2 channel info is an array of Buffer Descriptors V1 ([MS-SMBD] 2.2.3.1). */
static_assert(sizeof(struct smb2_buffer_desc_v1) == SMBD_BUF_DESC_LEN);

/* Descriptors decoded on the stack; more are allocated. */
#define SMBD_KSMBD_STACK_DESCS	4
/* ReadChannelInfoLength and WriteChannelInfoLength are 16-bit fields. */
#define SMBD_KSMBD_MAX_DESCS	(U16_MAX / SMBD_BUF_DESC_LEN)

/*
 * smbd's upcalls, data_ready (from a completion handler) and
 * state_change (process): wake the handler thread in smbd_ksmbd_read()
 * if it sleeps. wq_has_sleeper()'s barrier orders the count before the
 * look at the queue, against the one the thread's wait sets its state
 * with before it reads the count: it either sees the new count or is
 * seen on the queue. A thread at work (ksmbd reads the header and the
 * message in two calls) costs no wait-queue lock.
 */
static void smbd_ksmbd_kick(struct smbd_sock *sk)
{
	struct smbd_ksmbd_conn *c = smbd_sock_priv(sk);

	atomic_inc(&c->events);
	if (wq_has_sleeper(&c->wait))
		wake_up(&c->wait);
}

static const struct smbd_sock_ops smbd_ksmbd_sock_ops = {
	.data_ready = smbd_ksmbd_kick,
	.state_change = smbd_ksmbd_kick,
};

/* ---- connections ---- */

/* ksmbd's view of the peer's address ("hosts allow", sessions). */
static void smbd_ksmbd_set_peer(struct ksmbd_conn *conn)
{
	const struct sockaddr_storage *a = &conn->peer_addr;

	if (a->ss_family == AF_INET) {
		const struct sockaddr_in *sin = (const struct sockaddr_in *)a;

		conn->inet_addr = sin->sin_addr.s_addr;
	}
#if IS_ENABLED(CONFIG_IPV6)
	if (a->ss_family == AF_INET6) {
		const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)a;

		memcpy(conn->inet6_addr, &sin6->sin6_addr, 16);
	}
#endif
}

/*
 * Give up a connection whose handler thread never ran: undo what the
 * handler would have, then end it as the handler's last act would (the
 * series' ->disconnect).
 */
static void smbd_ksmbd_drop(struct ksmbd_conn *conn)
{
	if (IS_ENABLED(CONFIG_UNICODE))
		utf8_unload(conn->um);
	unload_nls(conn->local_nls);
	conn->transport->ops->disconnect(conn->transport);
}

/*
 * [MS-SMBD] 3.1.7.2: the upper layer hears of a new connection. smbd
 * has negotiated it already; ksmbd gets a connection and its thread.
 */
void smbd_ksmbd_new_conn(struct smbd_sock *sk, u16 port)
{
	struct smbd_ksmbd_conn *c;
	struct task_struct *handler;
	struct ksmbd_conn *conn;
	int ret;

	c = kzalloc(sizeof(*c), KSMBD_DEFAULT_GFP);
	conn = c ? ksmbd_conn_alloc() : NULL;
	if (!conn) {
		kfree(c);
		smbd_sock_release(sk);
		return;
	}
	c->sk = sk;
	init_waitqueue_head(&c->wait);
	atomic_set(&c->events, 0);
	smbd_sock_set_ops(sk, &smbd_ksmbd_sock_ops, c);
	c->transport.conn = conn;
	conn->transport = &c->transport;
	smbd_ksmbd_attach(c);

	/* Tree connects check "hosts allow" against it. */
	ret = smbd_sock_getname(sk, &conn->peer_addr, true);
	if (ret) {
		pr_info_ratelimited("no peer address for a new connection: %d\n",
				    ret);
		smbd_ksmbd_drop(conn);
		return;
	}
	smbd_ksmbd_set_peer(conn);
	smbd_ksmbd_publish(conn);
	ksmbd_debug(RDMA, "SMB Direct connection from %pISpc\n",
		    &conn->peer_addr);

	/* From here on the connection is the handler thread's. */
	handler = kthread_run(ksmbd_conn_handler_loop, conn, "ksmbd:r%u",
			      port);
	if (IS_ERR(handler)) {
		pr_err("cannot start a connection thread: %ld\n",
		       PTR_ERR(handler));
		smbd_ksmbd_drop(conn);
	}
}

/**
 * smbd_ksmbd_read() - read from the byte stream ksmbd expects
 * @t: the transport
 * @buf: where the bytes go
 * @size: how many: ksmbd reads the 4-byte length, then the message
 * @max_retries: waits of KSMBD_TCP_RECV_TIMEOUT without data to allow;
 *	negative for no limit
 *
 * Each SMB2 message reads as its 4-byte big-endian length and then the
 * message, as over Direct TCP ([MS-SMB2] 2.1); smbd reassembles it from
 * its Data Transfer messages ([MS-SMBD] 3.1.5.8). As ksmbd's TCP
 * transport does, the thread looks at ksmbd_conn_alive() at least every
 * KSMBD_TCP_RECV_TIMEOUT (another thread may end the connection, or the
 * client may have been idle past ksmbd's deadtime) and may be frozen
 * while it waits.
 *
 * Context: the connection's handler thread; sleeps until @size bytes came.
 * Return: @size; -ESHUTDOWN once ksmbd ends the connection; -EAGAIN
 * when @max_retries waits passed without data; the connection's error
 * once it is lost.
 */
int smbd_ksmbd_read(struct ksmbd_transport *t, char *buf, unsigned int size,
		    int max_retries)
{
	struct smbd_ksmbd_conn *c = smbd_ksmbd(t);
	struct kvec kv = { .iov_base = buf, .iov_len = size };
	struct iov_iter to;
	ssize_t n;
	long left;
	int seen;

	iov_iter_kvec(&to, ITER_DEST, &kv, 1, size);
	while (iov_iter_count(&to)) {
		if (!ksmbd_conn_alive(t->conn))
			return -ESHUTDOWN;
		/*
		 * Sampled before smbd is asked: an upcall for data that
		 * smbd_sock_recv_stream() did not see yet changes it.
		 */
		seen = atomic_read(&c->events);
		n = smbd_sock_recv_stream(c->sk, &to, SMBD_RECV_NONBLOCK);
		if (n > 0)
			continue;	/* @to has advanced */
		if (n != -EAGAIN)
			return n ? n : -ECONNRESET;
		left = wait_event_freezable_timeout(c->wait,
						    atomic_read(&c->events) != seen,
						    KSMBD_TCP_RECV_TIMEOUT);
		if (left > 0)
			continue;
		if (left < 0)
			flush_signals(current);
		if (!max_retries)
			return -EAGAIN;
		if (max_retries > 0)
			max_retries--;
	}
	return size;
}

/**
 * smbd_ksmbd_writev() - send one SMB2 message (a compound is one message)
 * @t: the transport
 * @iov: the message as for Direct TCP: a 4-byte RFC 1002 length, then
 *	the SMB2 message (with a transform header, iov[0] holds both)
 * @niov: entries in @iov
 * @size: bytes in @iov, the length included
 * @need_invalidate: the response ends the client's use of a buffer it
 *	registered (SMB2_CHANNEL_RDMA_V1_INVALIDATE)
 * @remote_key: that buffer's token, for Send with Invalidate
 *
 * The length is not sent: SMB Direct keeps message boundaries itself
 * ([MS-SMBD] 2.2.3). The rest goes as one upper-layer message
 * ([MS-SMBD] 3.1.4.2), segmented by MaxSendSize (3.1.5.4), its first
 * segment a Send with Invalidate of @remote_key when asked; the pages of
 * a response over SMBD_SEND_COPY_MAX are sent from where they are.
 *
 * Context: process, with the connection's srv_mutex held; sleeps for
 * Send Credits, and for a response larger than SMBD_SEND_COPY_MAX until
 * the device is done with @iov (smaller ones are copied).
 * Return: @size; -EMSGSIZE above MaxFragmentedSendSize; the connection's
 * error once it is lost.
 */
int smbd_ksmbd_writev(struct ksmbd_transport *t, struct kvec *iov, int niov,
		      int size, bool need_invalidate, unsigned int remote_key)
{
	struct smbd_ksmbd_conn *c = smbd_ksmbd(t);
	unsigned int flags;
	struct iov_iter from;
	size_t total = 0;
	bool started = false;
	ssize_t n;
	int i;

	for (i = 0; i < niov; i++)
		total += iov[i].iov_len;
	if (size < 4 || total < (size_t)size)
		return -EINVAL;
	if (size == 4)
		return size;	/* no message */
	iov_iter_kvec(&from, ITER_SOURCE, iov, niov, size);
	iov_iter_advance(&from, 4);

	/* Small responses are copied: no wait under srv_mutex. */
	flags = smbd_send_copy_flag(size - 4);
	/* A send cut short by a signal goes on where it stopped. */
	while (iov_iter_count(&from)) {
		if (need_invalidate)
			n = smbd_sock_send_inv(c->sk, &from, flags, remote_key);
		else
			n = smbd_sock_send(c->sk, &from, flags);
		if (n < 0) {
			/* Half a message: the peer cannot parse what follows. */
			if (started)
				smbd_sock_shutdown(c->sk);
			return n;
		}
		started = true;
	}
	return size;
}

/*
 * [MS-SMBD] 3.1.4.5 and 3.1.4.6: move @len bytes between @buf and the
 * client's buffer, described by the channel info of its READ or WRITE
 * (@desc, @desc_len bytes: Buffer Descriptors V1, 2.2.3.1, as the client
 * sent them). smbd_desc_decode() refuses an array that is empty, not a
 * whole number of descriptors, or holds one of length 0 or past 2^64;
 * smbd checks the transfer against the descriptors' total and
 * MaxReadWriteSize.
 */
static int smbd_ksmbd_rdma(struct ksmbd_transport *t, void *buf,
			   unsigned int len,
			   const struct smb2_buffer_desc_v1 *desc,
			   unsigned int desc_len, bool read)
{
	struct smbd_buf_desc stack[SMBD_KSMBD_STACK_DESCS], *d = stack;
	struct smbd_ksmbd_conn *c = smbd_ksmbd(t);
	struct kvec kv = { .iov_base = buf, .iov_len = len };
	u32 max = desc_len / SMBD_BUF_DESC_LEN;
	struct iov_iter it;
	ssize_t ret;
	int nd;

	ksmbd_debug(RDMA, "RDMA %s, len %#x, channel info %u bytes\n",
		    read ? "read" : "write", len, desc_len);
	if (!len)
		return 0;
	if (!max || max > SMBD_KSMBD_MAX_DESCS)
		return -EINVAL;
	if (max > ARRAY_SIZE(stack)) {
		d = kmalloc_array(max, sizeof(*d), KSMBD_DEFAULT_GFP);
		if (!d)
			return -ENOMEM;
	}
	nd = smbd_desc_decode(desc, desc_len, d, max);
	if (nd < 0) {
		ret = nd;
		goto out;
	}
	iov_iter_kvec(&it, read ? ITER_DEST : ITER_SOURCE, &kv, 1, len);
	if (read)
		ret = smbd_rdma_read(c->sk, &it, d, nd, 0);
	else
		ret = smbd_rdma_write(c->sk, &it, d, nd, 0);
	if (ret >= 0 && (size_t)ret != len)
		ret = -EIO;
	/*
	 * [MS-SMB2] 3.3.5.13: descriptors that hold less than the transfer,
	 * or a transfer above MaxReadWriteSize, are the client's error:
	 * STATUS_INVALID_PARAMETER, which ksmbd answers for -EINVAL (any
	 * other error becomes STATUS_INVALID_HANDLE).
	 */
	if (ret == -ERANGE || ret == -EMSGSIZE)
		ret = -EINVAL;
out:
	if (d != stack)
		kfree(d);
	if (ret < 0) {
		ksmbd_debug(RDMA, "RDMA %s of %u bytes failed: %zd\n",
			    read ? "read" : "write", len, ret);
		return ret;
	}
	return 0;
}

/**
 * smbd_ksmbd_rdma_read() - fetch the data of an SMB2 WRITE
 * @t: the transport
 * @buf: where the data goes
 * @len: its length (the WRITE's RemainingBytes)
 * @desc: the WRITE's channel info, as the client sent it
 * @desc_len: its length in bytes (WriteChannelInfoLength)
 *
 * RDMA Reads from the client's buffer ([MS-SMBD] 3.1.4.6).
 *
 * Context: process (a ksmbd worker); sleeps until the data is in @buf.
 * Return: 0; -EINVAL for malformed channel info; -ERANGE when it
 * describes less than @len bytes; -EMSGSIZE above MaxReadWriteSize;
 * -ENOMEM; the connection's error.
 */
int smbd_ksmbd_rdma_read(struct ksmbd_transport *t, void *buf,
			 unsigned int len, struct smb2_buffer_desc_v1 *desc,
			 unsigned int desc_len)
{
	return smbd_ksmbd_rdma(t, buf, len, desc, desc_len, true);
}

/**
 * smbd_ksmbd_rdma_write() - deliver the data of an SMB2 READ
 * @t: the transport
 * @buf: the data
 * @len: its length
 * @desc: the READ's channel info, as the client sent it
 * @desc_len: its length in bytes (ReadChannelInfoLength)
 *
 * RDMA Writes into the client's buffer ([MS-SMBD] 3.1.4.5); the READ
 * response sent afterwards reaches the client after the data.
 *
 * Context: process (a ksmbd worker); sleeps until the device is done
 * with @buf.
 * Return: as smbd_ksmbd_rdma_read().
 */
int smbd_ksmbd_rdma_write(struct ksmbd_transport *t, void *buf,
			  unsigned int len, struct smb2_buffer_desc_v1 *desc,
			  unsigned int desc_len)
{
	return smbd_ksmbd_rdma(t, buf, len, desc, desc_len, false);
}

// SPDX-License-Identifier: GPL-2.0
/*
 * smbd_ksmbd: the kernel SMB server's SMB Direct transport on smbd.ko.
 *
 * adapters/build.sh links this file into ksmbd.ko, built from Debian's
 * linux-source-6.12 (fs/smb/server), in place of ksmbd's own
 * transport_rdma.o. ksmbd calls what its transport_rdma.h declares
 * (ksmbd_rdma_init, ksmbd_rdma_stop_listening, ksmbd_rdma_destroy,
 * ksmbd_rdma_capable_netdev, init_smbd_max_io_size,
 * get_smbd_max_read_write_size) and, on each connection, the transport
 * operations at the end of this file; nothing else of transport_rdma.o.
 * Everything else is smbd's: negotiation, credits, segmentation and
 * reassembly, keep-alive, RDMA read and write.
 *
 * Listening: an smbd listener on every IPv4 address of the initial
 * network namespace (as the stock ksmbd) and one on every IPv6 address
 * (unlike it: ksmbd lists IPv6 interfaces to multichannel clients too),
 * on port 5445 when an iWARP device exists at ksmbd_rdma_init() and on
 * 445 otherwise: iWARP runs over TCP, and ksmbd's own TCP listener has
 * 445 ([MS-SMBD] 1.9). An accept thread per listener makes each
 * negotiated connection a ksmbd connection with its handler thread
 * (ksmbd_conn_handler_loop), as ksmbd's TCP transport does.
 *
 * Lifetime: a struct smbd_ksmbd_conn is one connection's ksmbd transport
 * and owns its smbd socket. The accept thread hands it to ksmbd and never
 * touches it again. The handler thread's last act is ->disconnect: the
 * socket is shut down (every reader and sender wakes and fails) and
 * ksmbd_conn_free() drops the handler's reference. ->free_transport runs
 * when the last reference to the ksmbd connection goes (ksmbd's release
 * work, or stop_sessions()) and releases the socket. ->shutdown
 * (ksmbd_conn_abort(), stop_sessions()) only shuts the socket down. So
 * the socket lives as long as anyone can reach the transport: a late
 * send (an oplock break) fails, it never touches freed memory. smbd's
 * upcalls (which only wake the handler thread) end inside
 * smbd_sock_release(), before the transport is freed.
 *
 * Reading: the handler thread reads without blocking in smbd and sleeps
 * on its own wait queue, woken by smbd's upcalls and by ->shutdown, and
 * at least every KSMBD_TCP_RECV_TIMEOUT to look at ksmbd_conn_alive(),
 * as over TCP.
 *
 * Serialisation is ksmbd's: ksmbd_rdma_init(), ksmbd_rdma_stop_listening()
 * and ksmbd_rdma_destroy() run under its init_lock; sends run under the
 * connection's srv_mutex; reads only in the handler thread. Which RDMA
 * devices there are is smbd's to know (smbd_any_iwarp(),
 * smbd_netdev_capable()).
 */

#define SUBMOD_NAME	"smbd"

#include <linux/kthread.h>
#include <linux/mutex.h>
#include <linux/netdevice.h>
#include <linux/slab.h>
#include <linux/uio.h>
#include <linux/wait.h>
#include <net/ip.h>
#include <net/ipv6.h>

#include "glob.h"
#include "connection.h"
#include "smb_common.h"
#include "transport_rdma.h"

#include <smbd.h>

/* SMB2 channel info is an array of Buffer Descriptors V1 ([MS-SMBD] 2.2.3.1). */
static_assert(sizeof(struct smb2_buffer_desc_v1) == SMBD_BUF_DESC_LEN);

/* Descriptors decoded on the stack; more are allocated. */
#define SMBD_KSMBD_STACK_DESCS	4
/* ReadChannelInfoLength and WriteChannelInfoLength are 16-bit fields. */
#define SMBD_KSMBD_MAX_DESCS	(U16_MAX / SMBD_BUF_DESC_LEN)

/**
 * struct smbd_ksmbd_conn - one SMB Direct connection of ksmbd
 * @transport: what ksmbd sees (conn->transport)
 * @sk: the smbd socket, released by ->free_transport only
 * @wait: the handler thread waits here for @events to change
 * @events: counts smbd's upcalls (data arrived, connection lost) and
 *	shutdowns
 */
struct smbd_ksmbd_conn {
	struct ksmbd_transport transport;
	struct smbd_sock *sk;
	wait_queue_head_t wait;
	atomic_t events;
};

/* A listener and its accept thread. */
struct smbd_ksmbd_listener {
	struct smbd_sock *lsk;
	struct task_struct *acceptor;
};

/* IPv4's and IPv6's, on one port (under ksmbd's init_lock). */
static struct smbd_ksmbd_listener smbd_ksmbd_ls[2];
static u16 smbd_ksmbd_port;

/* ksmbd.mountd's "smbd max io size" (the largest RDMA read or write). */
static unsigned int smbd_ksmbd_max_io = SMBD_DEFAULT_IOSIZE;

static const struct ksmbd_transport_ops smbd_ksmbd_transport_ops;

static struct smbd_ksmbd_conn *smbd_ksmbd(struct ksmbd_transport *t)
{
	return container_of(t, struct smbd_ksmbd_conn, transport);
}

/* ---- connections ---- */

/*
 * smbd's upcalls, data_ready (softirq) and state_change (process): wake
 * the handler thread in smbd_ksmbd_read().
 */
static void smbd_ksmbd_kick(struct smbd_sock *sk)
{
	struct smbd_ksmbd_conn *c = smbd_sock_priv(sk);

	atomic_inc(&c->events);
	wake_up(&c->wait);
}

static const struct smbd_sock_ops smbd_ksmbd_sock_ops = {
	.data_ready = smbd_ksmbd_kick,
	.state_change = smbd_ksmbd_kick,
};

/* ksmbd's view of the peer: its address and the hash of conn_list. */
static void smbd_ksmbd_set_peer(struct ksmbd_conn *conn)
{
	const struct sockaddr_storage *a = &conn->peer_addr;

	if (a->ss_family == AF_INET) {
		const struct sockaddr_in *sin = (const struct sockaddr_in *)a;

		conn->inet_addr = sin->sin_addr.s_addr;
		conn->inet_hash = ipv4_addr_hash(sin->sin_addr.s_addr);
	}
#if IS_ENABLED(CONFIG_IPV6)
	if (a->ss_family == AF_INET6) {
		const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)a;

		memcpy(conn->inet6_addr, &sin6->sin6_addr, 16);
		conn->inet_hash = ipv6_addr_hash(&sin6->sin6_addr);
	}
#endif
}

/*
 * Give up a connection whose handler thread never ran: undo what the
 * handler would have, then ksmbd's own teardown (which frees the
 * transport and the socket through ->free_transport).
 */
static void smbd_ksmbd_drop(struct ksmbd_conn *conn)
{
	if (IS_ENABLED(CONFIG_UNICODE))
		utf8_unload(conn->um);
	unload_nls(conn->local_nls);
	smbd_sock_shutdown(smbd_ksmbd(conn->transport)->sk);
	ksmbd_conn_free(conn);
}

/*
 * [MS-SMBD] 3.1.7.2: the upper layer hears of a new connection. smbd
 * has negotiated it already; ksmbd gets a connection and its thread.
 */
static void smbd_ksmbd_new_conn(struct smbd_sock *sk)
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
	c->transport.ops = &smbd_ksmbd_transport_ops;
	conn->transport = &c->transport;

	/* Tree connects check "hosts allow" against it. */
	ret = smbd_sock_getname(sk, &conn->peer_addr, true);
	if (ret) {
		pr_info_ratelimited("no peer address for a new connection: %d\n",
				    ret);
		smbd_ksmbd_drop(conn);
		return;
	}
	smbd_ksmbd_set_peer(conn);
	down_write(&conn_list_lock);
	hash_add(conn_list, &conn->hlist, conn->inet_hash);
	up_write(&conn_list_lock);
	ksmbd_debug(RDMA, "SMB Direct connection from %pISpc\n",
		    &conn->peer_addr);

	/* From here on the connection is the handler thread's. */
	handler = kthread_run(ksmbd_conn_handler_loop, conn, "ksmbd:r%u",
			      smbd_ksmbd_port);
	if (IS_ERR(handler)) {
		pr_err("cannot start a connection thread: %ld\n",
		       PTR_ERR(handler));
		smbd_ksmbd_drop(conn);
	}
}

/* The accept thread: ends when the listener is shut down. */
static int smbd_ksmbd_accept_fn(void *arg)
{
	struct smbd_sock *lsk = arg;
	struct smbd_sock *sk;
	int ret;

	while (!kthread_should_stop()) {
		ret = smbd_sock_accept(lsk, &sk, 0);
		if (ret == -ERESTARTSYS || ret == -EINTR) {
			flush_signals(current);
			continue;
		}
		if (ret)
			break;
		smbd_ksmbd_new_conn(sk);
	}
	return 0;
}

/* ---- transport operations ---- */

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
static int smbd_ksmbd_read(struct ksmbd_transport *t, char *buf,
			   unsigned int size, int max_retries)
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
static int smbd_ksmbd_writev(struct ksmbd_transport *t, struct kvec *iov,
			     int niov, int size, bool need_invalidate,
			     unsigned int remote_key)
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
static int smbd_ksmbd_rdma_read(struct ksmbd_transport *t, void *buf,
				unsigned int len,
				struct smb2_buffer_desc_v1 *desc,
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
static int smbd_ksmbd_rdma_write(struct ksmbd_transport *t, void *buf,
				 unsigned int len,
				 struct smb2_buffer_desc_v1 *desc,
				 unsigned int desc_len)
{
	return smbd_ksmbd_rdma(t, buf, len, desc, desc_len, false);
}

/**
 * smbd_ksmbd_shutdown() - end a connection, keep the transport
 * @t: the transport
 *
 * The handler thread's read and any send fail from now on; ksmbd's
 * teardown follows from the handler thread.
 *
 * Context: process (ksmbd_conn_abort(), stop_sessions()).
 */
static void smbd_ksmbd_shutdown(struct ksmbd_transport *t)
{
	struct smbd_ksmbd_conn *c = smbd_ksmbd(t);

	smbd_sock_shutdown(c->sk);
	atomic_inc(&c->events);
	wake_up(&c->wait);
}

/**
 * smbd_ksmbd_disconnect() - the handler thread is done with a connection
 * @t: the transport; may be freed when this returns
 *
 * Ends the connection ([MS-SMBD] 3.1.7.1) and drops the handler's
 * reference to the ksmbd connection; ->free_transport follows once the
 * last reference goes.
 *
 * Context: the connection's handler thread, as it exits.
 */
static void smbd_ksmbd_disconnect(struct ksmbd_transport *t)
{
	smbd_sock_shutdown(smbd_ksmbd(t)->sk);
	ksmbd_conn_free(t->conn);
}

/**
 * smbd_ksmbd_free_transport() - free a connection's transport
 * @t: the transport; gone when this returns
 *
 * Releases the smbd socket: the queue pair is drained and every buffer
 * unmapped before it is freed.
 *
 * Context: process (ksmbd's release work or stop_sessions()); sleeps.
 */
static void smbd_ksmbd_free_transport(struct ksmbd_transport *t)
{
	struct smbd_ksmbd_conn *c = smbd_ksmbd(t);

	smbd_sock_release(c->sk);
	kfree(c);
}

static const struct ksmbd_transport_ops smbd_ksmbd_transport_ops = {
	.read		= smbd_ksmbd_read,
	.writev		= smbd_ksmbd_writev,
	.rdma_read	= smbd_ksmbd_rdma_read,
	.rdma_write	= smbd_ksmbd_rdma_write,
	.shutdown	= smbd_ksmbd_shutdown,
	.disconnect	= smbd_ksmbd_disconnect,
	.free_transport	= smbd_ksmbd_free_transport,
};

/* ---- what ksmbd calls ---- */

/**
 * init_smbd_max_io_size() - ksmbd.mountd's "smbd max io size"
 * @sz: the largest SMB2 READ or WRITE with an RDMA channel, in bytes
 *
 * Clamped to 512 KiB .. 16 MiB as the stock ksmbd does; listeners
 * created from now on offer it as MaxReadWriteSize ([MS-SMBD] 3.1.5.6).
 *
 * Context: process (ksmbd's startup request).
 */
void init_smbd_max_io_size(unsigned int sz)
{
	WRITE_ONCE(smbd_ksmbd_max_io,
		   clamp_val(sz, SMBD_MIN_IOSIZE, SMBD_MAX_IOSIZE));
}

/**
 * get_smbd_max_read_write_size() - the largest RDMA READ or WRITE
 *
 * ksmbd refuses an SMB2 READ or WRITE with an RDMA channel above it.
 *
 * Context: any.
 * Return: bytes.
 */
unsigned int get_smbd_max_read_write_size(void)
{
	return READ_ONCE(smbd_ksmbd_max_io);
}

/**
 * ksmbd_rdma_capable_netdev() - is an RDMA device bound to a netdev
 * @netdev: a network interface
 *
 * For the RDMA_CAPABLE flag of FSCTL_QUERY_NETWORK_INTERFACE_INFO: true
 * when an RDMA device that smbd can use has @netdev as a port (RoCE,
 * iWARP) or has a port with @netdev's GID (IPoIB).
 *
 * Context: process, with the RTNL held (ksmbd's caller); may sleep.
 * Return: true if SMB Direct can reach @netdev's addresses.
 */
bool ksmbd_rdma_capable_netdev(struct net_device *netdev)
{
	return smbd_netdev_capable(netdev);
}

/*
 * Listen on @addr and start the accept thread; @l stays empty on failure.
 * Context: process, under ksmbd's init_lock; sleeps.
 */
static int smbd_ksmbd_listen(struct smbd_ksmbd_listener *l,
			     const struct sockaddr *addr,
			     const struct smbd_params *p)
{
	struct task_struct *task;
	struct smbd_sock *lsk;
	int ret;

	ret = smbd_sock_create(&init_net, p, &lsk);
	if (ret)
		return ret;
	ret = smbd_sock_bind(lsk, addr);
	if (!ret)
		ret = smbd_sock_listen(lsk, KSMBD_SOCKET_BACKLOG);
	if (ret)
		goto fail;
	task = kthread_create(smbd_ksmbd_accept_fn, lsk, "ksmbd-rdma%s:%u",
			      addr->sa_family == AF_INET6 ? "6" : "",
			      smbd_ksmbd_port);
	if (IS_ERR(task)) {
		ret = PTR_ERR(task);
		goto fail;
	}
	/* The thread may end on its own: kthread_stop_put() needs it. */
	get_task_struct(task);
	l->lsk = lsk;
	l->acceptor = task;
	wake_up_process(task);
	return 0;

fail:
	smbd_sock_release(lsk);
	return ret;
}

/*
 * Shut @l's listener down, which ends a blocked smbd_sock_accept(), wait
 * for the accept thread, then release the listener with the connections
 * nobody accepted. Nothing when @l is empty.
 * Context: process, under ksmbd's init_lock; sleeps.
 */
static void smbd_ksmbd_unlisten(struct smbd_ksmbd_listener *l)
{
	if (!l->lsk)
		return;
	smbd_sock_shutdown(l->lsk);
	kthread_stop_put(l->acceptor);
	l->acceptor = NULL;
	smbd_sock_release(l->lsk);
	l->lsk = NULL;
}

/**
 * ksmbd_rdma_init() - start listening for SMB Direct connections
 *
 * A listener on every IPv4 address of the initial network namespace and
 * one on every IPv6 address, on port 5445 if an iWARP device exists now
 * and 445 otherwise, with MaxReadWriteSize from init_smbd_max_io_size();
 * each with its accept thread. ksmbd lists IPv6 addresses among its
 * interfaces too (FSCTL_QUERY_NETWORK_INTERFACE_INFO), flagged
 * RDMA-capable by their device: a multichannel client tries them. IPv4
 * alone serves when IPv6 cannot be had.
 *
 * Context: process, under ksmbd's init_lock; sleeps.
 * Return: 0, or an errno (ksmbd then does not start); nothing is left
 * behind on failure.
 */
int ksmbd_rdma_init(void)
{
	struct sockaddr_in sin = {
		.sin_family = AF_INET,
		.sin_addr.s_addr = htonl(INADDR_ANY),
	};
	struct sockaddr_in6 sin6 = {
		.sin6_family = AF_INET6,
		.sin6_addr = IN6ADDR_ANY_INIT,
	};
	struct smbd_params p;
	u16 port;
	int ret;

	if (smbd_ksmbd_ls[0].lsk)
		return 0;
	/* [MS-SMBD] 1.9: 5445 as soon as an iWARP device exists, else 445. */
	port = smbd_any_iwarp() ? SMBD_PORT_IWARP : SMBD_PORT_IB;
	sin.sin_port = htons(port);
	sin6.sin6_port = htons(port);
	smbd_ksmbd_port = port;

	smbd_params_init(&p, true);
	/*
	 * ksmbd's own SMB Direct limits (transport_rdma.c): 255 credits
	 * each way and 1364-byte messages, as the cifs adapter keeps cifs's.
	 */
	p.recv_credit_max = 255;
	p.send_credit_target = 255;
	p.max_send_size = 1364;
	p.max_recv_size = 1364;
	p.max_read_write_size = get_smbd_max_read_write_size();
	ret = smbd_ksmbd_listen(&smbd_ksmbd_ls[0], (struct sockaddr *)&sin,
				&p);
	if (ret) {
		pr_err("cannot listen for SMB Direct on port %u: %d\n", port,
		       ret);
		return ret;
	}
	if (IS_ENABLED(CONFIG_IPV6)) {
		ret = smbd_ksmbd_listen(&smbd_ksmbd_ls[1],
					(struct sockaddr *)&sin6, &p);
		if (ret)
			pr_warn("no SMB Direct over IPv6 on port %u: %d\n",
				port, ret);
	}
	ksmbd_debug(RDMA, "SMB Direct listeners on port %u\n", port);
	return 0;
}

/**
 * ksmbd_rdma_stop_listening() - accept no more SMB Direct connections
 *
 * Ends both listeners with their accept threads; the connections nobody
 * accepted go with them. Connections already handed to ksmbd stay
 * (ksmbd's stop_sessions() ends them). Does nothing when not listening.
 *
 * Context: process, under ksmbd's init_lock; sleeps.
 */
void ksmbd_rdma_stop_listening(void)
{
	smbd_ksmbd_unlisten(&smbd_ksmbd_ls[1]);
	smbd_ksmbd_unlisten(&smbd_ksmbd_ls[0]);
}

/**
 * ksmbd_rdma_destroy() - the last of SMB Direct until the next init
 *
 * Stops listening if still needed. Safe without a prior
 * ksmbd_rdma_init() and when called twice.
 *
 * Context: process, under ksmbd's init_lock; sleeps.
 */
void ksmbd_rdma_destroy(void)
{
	ksmbd_rdma_stop_listening();
}

MODULE_IMPORT_NS(SMBD);

// SPDX-License-Identifier: GPL-2.0
/*
 * smbd_ksmbd: the kernel SMB server's SMB Direct transport on smbd.ko.
 *
 * adapters/build.sh links this file into ksmbd.ko, built from Debian's
 * linux-source-6.1 (fs/smb/server), in place of ksmbd's own
 * transport_rdma.o. ksmbd calls what its transport_rdma.h declares
 * (ksmbd_rdma_init, ksmbd_rdma_stop_listening, ksmbd_rdma_destroy,
 * ksmbd_rdma_capable_netdev, init_smbd_max_io_size,
 * get_smbd_max_read_write_size) and, on each connection, the transport
 * operations at the end of this file; nothing else of transport_rdma.o.
 * Everything else is smbd's: negotiation, credits, segmentation and
 * reassembly, keep-alive, RDMA read and write.
 *
 * Listening keeps each port to its device class ([MS-SMBD] 1.9: 5445
 * for iWARP, 445 for InfiniBand and RoCE), so that an iWARP and a RoCE
 * port on one host do not answer each other's connections:
 * - 5445 on the IPv4 and IPv6 wildcard addresses of the initial network
 *   namespace, for iWARP only (smbd refuses the connection requests of
 *   other devices there). rdma_cm extends a wildcard listener to every
 *   device, those added later too.
 * - 445 on each address (IPv4 and IPv6: ksmbd lists both to multichannel
 *   clients) of an InfiniBand or RoCE device, one listener each. A
 *   wildcard cannot serve there: on iWARP a listener takes the TCP port,
 *   which ksmbd's own TCP listener holds, and rdma_cm (in 6.1 as in
 *   6.12) fails a whole wildcard listen (and drops a device added later
 *   from rdma_cm) when one device refuses. smbd_ksmbd_resync() follows
 *   the addresses and devices as they come and go.
 * An accept thread per listener makes each negotiated connection a
 * ksmbd connection with its handler thread (ksmbd_conn_handler_loop), as
 * ksmbd's TCP transport does.
 *
 * Lifetime: a struct smbd_ksmbd_conn is one connection's ksmbd transport
 * and owns its smbd socket. The accept thread hands it to ksmbd and never
 * touches it again. 6.1's ksmbd has no ->free_transport (its last
 * ksmbd_conn_put() only frees the ksmbd connection), so the handler
 * thread's last act, ->disconnect, frees the transport, as 6.1's TCP
 * transport frees its own there: the socket is released (every reader
 * and sender wakes and fails; smbd's upcalls, which only wake the
 * handler thread, end inside smbd_sock_release()), then
 * ksmbd_conn_free() takes the connection off conn_list and drops the
 * handler's reference, then the transport goes. The 6.12 adapter's
 * guarantee that a late send (an oplock break) fails cannot be kept: a
 * send after ->disconnect would touch freed memory, as over 6.1's TCP.
 * What keeps senders off is ksmbd's own fence, which ->disconnect comes
 * after: the handler thread marks the connection releasing and waits for
 * its r_count, held by every request in work and every oplock or lease
 * break that found the connection not releasing, to drop to 0.
 *
 * No ->shutdown: its only caller in 6.1, stop_sessions(), drops
 * conn_list_lock around it and then walks on from the connection it
 * shut down, which that connection's handler thread, woken, may have
 * taken off conn_list and freed meanwhile. ksmbd calls
 * ksmbd_rdma_stop_listening() right before stop_sessions() (both under
 * init_lock, whenever ksmbd stops or resets): it shuts every connection
 * on smbd_ksmbd_conns down instead, while stop_sessions() only marks
 * them exiting under conn_list_lock, which their handler threads need
 * for writing to leave conn_list.
 *
 * Reading: the handler thread reads without blocking in smbd and sleeps
 * on its own wait queue, woken by smbd's upcalls and when ksmbd stops
 * listening, and at least every KSMBD_TCP_RECV_TIMEOUT to look at
 * ksmbd_conn_alive(), as over TCP.
 *
 * Serialisation: ksmbd_rdma_init(), ksmbd_rdma_stop_listening() and
 * ksmbd_rdma_destroy() run under ksmbd's init_lock; they and the resync
 * work change the listeners under smbd_ksmbd_ls_lock (taken before the
 * RTNL); the connections are listed on smbd_ksmbd_conns under
 * smbd_ksmbd_conns_lock; sends run under the connection's srv_mutex;
 * reads only in the handler thread. Which RDMA devices there are, and of
 * which class, is smbd's to know (smbd_netdev_classes(),
 * smbd_register_dev_notifier()).
 */

#define SUBMOD_NAME	"smbd"

#include <linux/inetdevice.h>
#include <linux/kthread.h>
#include <linux/mutex.h>
#include <linux/netdevice.h>
#include <linux/rtnetlink.h>
#include <linux/slab.h>
#include <linux/uio.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <net/addrconf.h>
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
 * @sk: the smbd socket, released with the transport only
 * @wait: the handler thread waits here for @events to change
 * @events: counts smbd's upcalls (data arrived, connection lost) and
 *	shutdowns
 * @node: on smbd_ksmbd_conns until the transport is freed
 */
struct smbd_ksmbd_conn {
	struct ksmbd_transport transport;
	struct smbd_sock *sk;
	wait_queue_head_t wait;
	atomic_t events;
	struct list_head node;
};

/*
 * Every transport not yet freed, for ksmbd_rdma_stop_listening() to end
 * (6.1's stop_sessions() cannot safely call a ->shutdown).
 */
static DEFINE_SPINLOCK(smbd_ksmbd_conns_lock);
static LIST_HEAD(smbd_ksmbd_conns);

/*
 * A listener and its accept thread. @ended: the thread left on its own,
 * the listener having closed under it (its device went away; a wildcard
 * listener never closes so: rdma_cm ends only its per-device part).
 * @stopping: smbd_ksmbd_unlisten() is ending it.
 */
struct smbd_ksmbd_listener {
	struct smbd_sock *lsk;
	struct task_struct *acceptor;
	u16 port;
	bool ended;
	bool stopping;
};

/* A port-445 listener on one address of an InfiniBand or RoCE device. */
struct smbd_ksmbd_addr_ls {
	struct list_head node;
	struct sockaddr_storage addr;	/* port 0 */
	struct smbd_ksmbd_listener l;
	bool seen;			/* in the last resync's addresses */
};

/*
 * Under smbd_ksmbd_ls_lock: the 5445 wildcard listeners (IPv4, IPv6),
 * the 445 listeners per address, whether ksmbd listens at all, the
 * parameters of every listener and the resync's retry count.
 */
static DEFINE_MUTEX(smbd_ksmbd_ls_lock);
static struct smbd_ksmbd_listener smbd_ksmbd_iw[2];
static LIST_HEAD(smbd_ksmbd_ib);
static bool smbd_ksmbd_running;
static struct smbd_params smbd_ksmbd_params;
static unsigned int smbd_ksmbd_retries;
/* An address, interface or device event came since the last resync. */
static int smbd_ksmbd_event;

static void smbd_ksmbd_resync(struct work_struct *work);
static DECLARE_DELAYED_WORK(smbd_ksmbd_resync_work, smbd_ksmbd_resync);
static void smbd_ksmbd_resync_soon(unsigned long delay);

/* ksmbd.mountd's "smbd max io size" (the largest RDMA read or write). */
static unsigned int smbd_ksmbd_max_io = SMBD_DEFAULT_IOSIZE;

/*
 * Never written: not const only because 6.1's struct ksmbd_transport
 * points to its operations without const.
 */
static struct ksmbd_transport_ops smbd_ksmbd_transport_ops __ro_after_init;

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

/*
 * ksmbd's view of the peer's address (6.1's conn_list is a plain list:
 * no hash to set; ksmbd_conn_alloc() listed the connection already).
 */
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
 * Free a transport with its socket and the handler's (or the accept
 * thread's) reference to the ksmbd connection. The socket goes first:
 * meanwhile the connection stays on conn_list, so stop_sessions() (and
 * ksmbd's module exit after it) waits for the queue pair to drain.
 * Context: process; sleeps.
 */
static void smbd_ksmbd_free(struct smbd_ksmbd_conn *c)
{
	spin_lock(&smbd_ksmbd_conns_lock);
	list_del(&c->node);
	spin_unlock(&smbd_ksmbd_conns_lock);
	smbd_sock_release(c->sk);
	ksmbd_conn_free(c->transport.conn);
	kfree(c);
}

/*
 * Give up a connection whose handler thread never ran: undo what the
 * handler would have, then free it as its ->disconnect would.
 */
static void smbd_ksmbd_drop(struct ksmbd_conn *conn)
{
	if (IS_ENABLED(CONFIG_UNICODE))
		utf8_unload(conn->um);
	unload_nls(conn->local_nls);
	smbd_ksmbd_free(smbd_ksmbd(conn->transport));
}

/*
 * [MS-SMBD] 3.1.7.2: the upper layer hears of a new connection. smbd
 * has negotiated it already; ksmbd gets a connection and its thread.
 */
static void smbd_ksmbd_new_conn(struct smbd_sock *sk, u16 port)
{
	struct smbd_ksmbd_conn *c;
	struct task_struct *handler;
	struct ksmbd_conn *conn;
	int ret;

	c = kzalloc(sizeof(*c), GFP_KERNEL);
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
	/*
	 * ksmbd_conn_alloc() listed the connection without a transport:
	 * harmless, as only stop_sessions() looks at the transports on
	 * conn_list, and never while an accept thread runs.
	 */
	conn->transport = &c->transport;
	spin_lock(&smbd_ksmbd_conns_lock);
	list_add_tail(&c->node, &smbd_ksmbd_conns);
	spin_unlock(&smbd_ksmbd_conns_lock);

	/* Tree connects check "hosts allow" against it. */
	ret = smbd_sock_getname(sk, &conn->peer_addr, true);
	if (ret) {
		pr_info_ratelimited("no peer address for a new connection: %d\n",
				    ret);
		smbd_ksmbd_drop(conn);
		return;
	}
	smbd_ksmbd_set_peer(conn);
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

/*
 * The accept thread: ends when the listener is shut down or closes on
 * its own (its device went away: the resync then reaps it).
 */
static int smbd_ksmbd_accept_fn(void *arg)
{
	struct smbd_ksmbd_listener *l = arg;
	struct smbd_sock *sk;
	int ret;

	while (!kthread_should_stop()) {
		ret = smbd_sock_accept(l->lsk, &sk, 0);
		if (ret == -ERESTARTSYS || ret == -EINTR) {
			flush_signals(current);
			continue;
		}
		if (ret)
			break;
		smbd_ksmbd_new_conn(sk, l->port);
	}
	if (!kthread_should_stop() && !READ_ONCE(l->stopping)) {
		WRITE_ONCE(l->ended, true);
		smbd_ksmbd_resync_soon(0);
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
		d = kmalloc_array(max, sizeof(*d), GFP_KERNEL);
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
 * smbd_ksmbd_disconnect() - the handler thread is done with a connection
 * @t: the transport; freed when this returns
 *
 * Ends the connection ([MS-SMBD] 3.1.7.1) and frees the transport with
 * its socket (the queue pair is drained and every buffer unmapped before
 * it is freed), dropping the handler's reference to the ksmbd
 * connection, as 6.1's TCP transport does: 6.1 has no ->free_transport.
 * ksmbd calls it only once nothing can send any more (the connection is
 * releasing and its r_count has dropped to 0).
 *
 * Context: the connection's handler thread, as it exits; sleeps.
 */
static void smbd_ksmbd_disconnect(struct ksmbd_transport *t)
{
	smbd_ksmbd_free(smbd_ksmbd(t));
}

static struct ksmbd_transport_ops smbd_ksmbd_transport_ops __ro_after_init = {
	.read		= smbd_ksmbd_read,
	.writev		= smbd_ksmbd_writev,
	.rdma_read	= smbd_ksmbd_rdma_read,
	.rdma_write	= smbd_ksmbd_rdma_write,
	.disconnect	= smbd_ksmbd_disconnect,
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
 * Context: process, under smbd_ksmbd_ls_lock; sleeps.
 */
static int smbd_ksmbd_listen(struct smbd_ksmbd_listener *l,
			     const struct sockaddr *addr, u8 dev_class)
{
	struct smbd_params p = smbd_ksmbd_params;
	struct task_struct *task;
	struct smbd_sock *lsk;
	int ret;

	lockdep_assert_held(&smbd_ksmbd_ls_lock);
	p.dev_class = dev_class;
	ret = smbd_sock_create(&init_net, &p, &lsk);
	if (ret)
		return ret;
	ret = smbd_sock_bind(lsk, addr);
	if (!ret)
		ret = smbd_sock_listen(lsk, KSMBD_SOCKET_BACKLOG);
	if (ret)
		goto fail;
	l->lsk = lsk;
	l->port = ntohs(addr->sa_family == AF_INET6 ?
			((const struct sockaddr_in6 *)addr)->sin6_port :
			((const struct sockaddr_in *)addr)->sin_port);
	l->ended = false;
	l->stopping = false;
	task = kthread_create(smbd_ksmbd_accept_fn, l, "ksmbd-rdma%s:%u",
			      addr->sa_family == AF_INET6 ? "6" : "", l->port);
	if (IS_ERR(task)) {
		ret = PTR_ERR(task);
		l->lsk = NULL;
		goto fail;
	}
	/* The thread may end on its own: kthread_stop() needs it. */
	get_task_struct(task);
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
 * Context: process, under smbd_ksmbd_ls_lock; sleeps.
 */
static void smbd_ksmbd_unlisten(struct smbd_ksmbd_listener *l)
{
	if (!l->lsk)
		return;
	WRITE_ONCE(l->stopping, true);
	smbd_sock_shutdown(l->lsk);
	kthread_stop(l->acceptor);
	put_task_struct(l->acceptor);
	l->acceptor = NULL;
	smbd_sock_release(l->lsk);
	l->lsk = NULL;
}

/* ---- following addresses and devices: the 445 listeners ---- */

/* Most addresses the 445 listeners follow; more are left without one. */
#define SMBD_KSMBD_ADDRS_MAX	64

/* Resync delays after a failed listen: a RoCE GID lags its address. */
static const unsigned int smbd_ksmbd_retry_ms[] = { 200, 500, 1000, 2000, 5000 };

/*
 * Have smbd_ksmbd_resync() run @delay jiffies from now (sooner if it is
 * already due). Context: any, atomic too (the IPv6 address chain).
 */
static void smbd_ksmbd_resync_soon(unsigned long delay)
{
	if (READ_ONCE(smbd_ksmbd_running))
		mod_delayed_work(system_long_wq, &smbd_ksmbd_resync_work, delay);
}

/* An address to listen on, and whether an iWARP device shares its netdev. */
struct smbd_ksmbd_addr {
	struct sockaddr_storage sa;
	bool iwarp_too;
};

/* Add @sa to @out[*n], if there is room. */
static void smbd_ksmbd_addr_add(struct smbd_ksmbd_addr *out, unsigned int *n,
				const struct sockaddr_storage *sa, bool iwarp_too)
{
	if (*n < SMBD_KSMBD_ADDRS_MAX) {
		out[*n].sa = *sa;
		out[(*n)++].iwarp_too = iwarp_too;
	}
}

/*
 * @dev's usable addresses, into @out from *@n on. An IPv6 address still
 * in duplicate address detection is left out, and makes *@tentative
 * true (the resync retries: its GID may come after the address event).
 * Context: process, under the RTNL.
 */
static void smbd_ksmbd_dev_addrs(struct net_device *dev,
				 struct smbd_ksmbd_addr *out, unsigned int *n,
				 bool iwarp_too, bool *tentative)
{
	struct in_device *in_dev = __in_dev_get_rtnl(dev);
	struct sockaddr_storage ss;
	const struct in_ifaddr *ifa;
	struct inet6_dev *idev;
	struct inet6_ifaddr *ifp;

	ASSERT_RTNL();
	if (in_dev) {
		in_dev_for_each_ifa_rtnl(ifa, in_dev) {
			struct sockaddr_in *sin = (struct sockaddr_in *)&ss;

			memset(&ss, 0, sizeof(ss));
			sin->sin_family = AF_INET;
			sin->sin_addr.s_addr = ifa->ifa_local;
			smbd_ksmbd_addr_add(out, n, &ss, iwarp_too);
		}
	}
	idev = IS_ENABLED(CONFIG_IPV6) ? __in6_dev_get(dev) : NULL;
	if (!idev)
		return;
	read_lock_bh(&idev->lock);
	list_for_each_entry(ifp, &idev->addr_list, if_list) {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;

		if (ifp->flags & IFA_F_DADFAILED)
			continue;
		if (ifp->flags & IFA_F_TENTATIVE) {
			*tentative = true;
			continue;
		}
		memset(&ss, 0, sizeof(ss));
		sin6->sin6_family = AF_INET6;
		sin6->sin6_addr = ifp->addr;
		if (ipv6_addr_type(&ifp->addr) & IPV6_ADDR_LINKLOCAL)
			sin6->sin6_scope_id = dev->ifindex;
		smbd_ksmbd_addr_add(out, n, &ss, iwarp_too);
	}
	read_unlock_bh(&idev->lock);
}

/*
 * The addresses of the up interfaces of the initial namespace that an
 * InfiniBand or RoCE device smbd uses lies below (smbd_netdev_classes()).
 * Context: process; takes the RTNL.
 * Return: how many are in @out.
 */
static unsigned int smbd_ksmbd_addrs(struct smbd_ksmbd_addr *out,
				     bool *tentative)
{
	struct net_device *dev;
	unsigned int n = 0, cls;

	rtnl_lock();
	for_each_netdev(&init_net, dev) {
		if (!(dev->flags & IFF_UP) || (dev->flags & IFF_LOOPBACK))
			continue;
		cls = smbd_netdev_classes(dev);
		if (cls & BIT(SMBD_DEV_IB))
			smbd_ksmbd_dev_addrs(dev, out, &n,
					     cls & BIT(SMBD_DEV_IWARP),
					     tentative);
	}
	rtnl_unlock();
	return n;
}

/* The 445 listener on @sa, if any. Context: under smbd_ksmbd_ls_lock. */
static struct smbd_ksmbd_addr_ls *
smbd_ksmbd_find(const struct sockaddr_storage *sa)
{
	struct smbd_ksmbd_addr_ls *a;

	lockdep_assert_held(&smbd_ksmbd_ls_lock);
	list_for_each_entry(a, &smbd_ksmbd_ib, node)
		if (!memcmp(&a->addr, sa, sizeof(*sa)))
			return a;
	return NULL;
}

/*
 * Listen on port 445 of @sa, for InfiniBand and RoCE only.
 * Context: process, under smbd_ksmbd_ls_lock; sleeps.
 * Return: 0; -EPROTONOSUPPORT when rdma_cm gives @sa to an iWARP device;
 * or the listen's errno (-ENODEV while a RoCE GID is not there yet).
 */
static int smbd_ksmbd_add_ls(const struct sockaddr_storage *sa)
{
	struct sockaddr_storage bind_addr = *sa;
	struct smbd_ksmbd_addr_ls *a;
	int ret;

	a = kzalloc(sizeof(*a), GFP_KERNEL);
	if (!a)
		return -ENOMEM;
	a->addr = *sa;
	if (sa->ss_family == AF_INET6)
		((struct sockaddr_in6 *)&bind_addr)->sin6_port =
			htons(SMBD_PORT_IB);
	else
		((struct sockaddr_in *)&bind_addr)->sin_port =
			htons(SMBD_PORT_IB);
	ret = smbd_ksmbd_listen(&a->l, (struct sockaddr *)&bind_addr,
				SMBD_DEV_IB);
	if (ret) {
		kfree(a);
		return ret;
	}
	a->seen = true;
	list_add_tail(&a->node, &smbd_ksmbd_ib);
	ksmbd_debug(RDMA, "SMB Direct listener on %pISpc\n", &bind_addr);
	return 0;
}

/* Context: process, under smbd_ksmbd_ls_lock; sleeps. */
static void smbd_ksmbd_drop_ls(struct smbd_ksmbd_addr_ls *a)
{
	lockdep_assert_held(&smbd_ksmbd_ls_lock);
	ksmbd_debug(RDMA, "no SMB Direct listener on %pISc any more\n",
		    &a->addr);
	list_del(&a->node);
	smbd_ksmbd_unlisten(&a->l);
	kfree(a);
}

/*
 * Bring the 445 listeners in line with the addresses: one on each
 * address of an InfiniBand or RoCE device, none elsewhere; a listener
 * whose device went away is replaced (or dropped with its address).
 * Runs on smbd_ksmbd_resync_soon(): address, interface and RDMA device events,
 * and a listener that closed on its own; after a failed listen, again
 * a few times with a growing delay.
 * Context: process (system_long_wq, or ksmbd_rdma_init()); takes
 * smbd_ksmbd_ls_lock and the RTNL (in that order); sleeps.
 */
static void smbd_ksmbd_resync(struct work_struct *work)
{
	struct smbd_ksmbd_addr_ls *a, *tmp;
	struct smbd_ksmbd_addr *addrs;
	bool retry = false;
	unsigned int i, n;
	int ret;

	addrs = kcalloc(SMBD_KSMBD_ADDRS_MAX, sizeof(*addrs), GFP_KERNEL);
	mutex_lock(&smbd_ksmbd_ls_lock);
	if (!smbd_ksmbd_running)
		goto out;
	/* Each event gives the failed addresses a new round of retries. */
	if (xchg(&smbd_ksmbd_event, 0))
		smbd_ksmbd_retries = 0;
	if (!addrs) {
		retry = true;
		goto again;
	}
	n = smbd_ksmbd_addrs(addrs, &retry);
	list_for_each_entry(a, &smbd_ksmbd_ib, node)
		a->seen = false;
	for (i = 0; i < n; i++) {
		a = smbd_ksmbd_find(&addrs[i].sa);
		if (a && !READ_ONCE(a->l.ended)) {
			a->seen = true;
			continue;
		}
		if (a)
			smbd_ksmbd_drop_ls(a);
		ret = smbd_ksmbd_add_ls(&addrs[i].sa);
		if (ret == -EPROTONOSUPPORT) {
			/*
			 * rdma_cm gives an address to the first device with
			 * its netdev, and 6.1 cannot ask for a class.
			 */
			pr_warn_ratelimited("%pISc: rdma_cm picks the iWARP device of its interface%s, so InfiniBand and RoCE have no SMB Direct listener on port %u there\n",
					    &addrs[i].sa,
					    addrs[i].iwarp_too ?
					    " over the RoCE one" : "",
					    SMBD_PORT_IB);
		} else if (ret) {
			ksmbd_debug(RDMA, "cannot listen on %pISc: %d\n",
				    &addrs[i].sa, ret);
			retry = true;
		}
	}
	list_for_each_entry_safe(a, tmp, &smbd_ksmbd_ib, node)
		if (!a->seen)
			smbd_ksmbd_drop_ls(a);
again:
	if (!retry)
		smbd_ksmbd_retries = 0;
	else if (smbd_ksmbd_retries < ARRAY_SIZE(smbd_ksmbd_retry_ms))
		/* not later than a run an event asked for meanwhile */
		queue_delayed_work(system_long_wq, &smbd_ksmbd_resync_work,
				   msecs_to_jiffies(smbd_ksmbd_retry_ms[smbd_ksmbd_retries++]));
out:
	mutex_unlock(&smbd_ksmbd_ls_lock);
	kfree(addrs);
}

/*
 * An event that may change the listeners: a resync shortly (a RoCE GID
 * follows its address), with a new round of retries.
 */
static void smbd_ksmbd_event_on(struct net_device *dev, unsigned long event)
{
	switch (event) {
	case NETDEV_UP:
	case NETDEV_DOWN:
	case NETDEV_CHANGE:		/* carrier: IPv6 DAD may go on */
	case NETDEV_CHANGEUPPER:
		break;
	default:
		return;
	}
	if (dev && !net_eq(dev_net(dev), &init_net))
		return;
	WRITE_ONCE(smbd_ksmbd_event, 1);
	smbd_ksmbd_resync_soon(msecs_to_jiffies(smbd_ksmbd_retry_ms[0]));
}

/* Interface events: the RTNL held. */
static int smbd_ksmbd_netdev_event(struct notifier_block *nb,
				   unsigned long event, void *ptr)
{
	smbd_ksmbd_event_on(netdev_notifier_info_to_dev(ptr), event);
	return NOTIFY_DONE;
}

/* IPv4 address events: the RTNL held. */
static int smbd_ksmbd_inet_event(struct notifier_block *nb,
				 unsigned long event, void *ptr)
{
	const struct in_ifaddr *ifa = ptr;

	smbd_ksmbd_event_on(ifa->ifa_dev->dev, event);
	return NOTIFY_DONE;
}

/* IPv6 address events: atomic. */
static int smbd_ksmbd_inet6_event(struct notifier_block *nb,
				  unsigned long event, void *ptr)
{
	const struct inet6_ifaddr *ifp = ptr;

	smbd_ksmbd_event_on(ifp->idev->dev, event);
	return NOTIFY_DONE;
}

/* smbd's RDMA device events: process context. */
static int smbd_ksmbd_dev_event(struct notifier_block *nb,
				unsigned long event, void *ptr)
{
	smbd_ksmbd_event_on(NULL, NETDEV_UP);
	return NOTIFY_DONE;
}

static struct notifier_block smbd_ksmbd_netdev_nb = {
	.notifier_call = smbd_ksmbd_netdev_event,
};

static struct notifier_block smbd_ksmbd_inet_nb = {
	.notifier_call = smbd_ksmbd_inet_event,
};

static struct notifier_block smbd_ksmbd_inet6_nb = {
	.notifier_call = smbd_ksmbd_inet6_event,
};

static struct notifier_block smbd_ksmbd_smbd_nb = {
	.notifier_call = smbd_ksmbd_dev_event,
};

/*
 * Follow addresses, interfaces and RDMA devices, or stop. Registering
 * the interface notifier replays the interfaces there are (a resync).
 * Context: process, without smbd_ksmbd_ls_lock or the RTNL; sleeps.
 */
static void smbd_ksmbd_follow(bool on)
{
	int ret;

	if (on) {
		/* None of these fails but on a block registered twice. */
		ret = register_inetaddr_notifier(&smbd_ksmbd_inet_nb);
		if (!ret && IS_ENABLED(CONFIG_IPV6))
			ret = register_inet6addr_notifier(&smbd_ksmbd_inet6_nb);
		if (!ret)
			ret = register_netdevice_notifier(&smbd_ksmbd_netdev_nb);
		if (!ret)
			ret = smbd_register_dev_notifier(&smbd_ksmbd_smbd_nb);
		WARN_ON_ONCE(ret);
		return;
	}
	smbd_unregister_dev_notifier(&smbd_ksmbd_smbd_nb);
	unregister_netdevice_notifier(&smbd_ksmbd_netdev_nb);
	if (IS_ENABLED(CONFIG_IPV6))
		unregister_inet6addr_notifier(&smbd_ksmbd_inet6_nb);
	unregister_inetaddr_notifier(&smbd_ksmbd_inet_nb);
}

/**
 * ksmbd_rdma_init() - start listening for SMB Direct connections
 *
 * Port 5445 on the IPv4 and IPv6 wildcard addresses for iWARP, and 445
 * on each address of an InfiniBand or RoCE device, followed from here
 * on as addresses and devices come and go ([MS-SMBD] 1.9); each listener
 * with its accept thread and MaxReadWriteSize from
 * init_smbd_max_io_size(). ksmbd lists IPv6 addresses among its
 * interfaces too (FSCTL_QUERY_NETWORK_INTERFACE_INFO), flagged
 * RDMA-capable by their device: a multichannel client tries them. IPv4
 * alone serves when IPv6 cannot be had; an address left without its 445
 * listener is retried a few times, then at the next event.
 *
 * Context: process, under ksmbd's init_lock; sleeps. Takes the RTNL.
 * Return: 0, or an errno (ksmbd then does not start): the IPv4 5445
 * listener failed; nothing is left behind on failure.
 */
int ksmbd_rdma_init(void)
{
	struct sockaddr_in sin = {
		.sin_family = AF_INET,
		.sin_addr.s_addr = htonl(INADDR_ANY),
		.sin_port = htons(SMBD_PORT_IWARP),
	};
	struct sockaddr_in6 sin6 = {
		.sin6_family = AF_INET6,
		.sin6_addr = IN6ADDR_ANY_INIT,
		.sin6_port = htons(SMBD_PORT_IWARP),
	};
	struct smbd_params *p = &smbd_ksmbd_params;
	int ret;

	mutex_lock(&smbd_ksmbd_ls_lock);
	if (smbd_ksmbd_running) {
		mutex_unlock(&smbd_ksmbd_ls_lock);
		return 0;
	}
	smbd_params_init(p, true);
	/*
	 * ksmbd's own SMB Direct limits (transport_rdma.c): 255 credits
	 * each way and 1364-byte messages, as the cifs adapter keeps cifs's.
	 */
	p->recv_credit_max = 255;
	p->send_credit_target = 255;
	p->max_send_size = 1364;
	p->max_recv_size = 1364;
	p->max_read_write_size = get_smbd_max_read_write_size();
	ret = smbd_ksmbd_listen(&smbd_ksmbd_iw[0], (struct sockaddr *)&sin,
				SMBD_DEV_IWARP);
	if (ret) {
		mutex_unlock(&smbd_ksmbd_ls_lock);
		pr_err("cannot listen for SMB Direct on port %u: %d\n",
		       SMBD_PORT_IWARP, ret);
		return ret;
	}
	if (IS_ENABLED(CONFIG_IPV6)) {
		ret = smbd_ksmbd_listen(&smbd_ksmbd_iw[1],
					(struct sockaddr *)&sin6,
					SMBD_DEV_IWARP);
		if (ret)
			pr_warn("no SMB Direct over IPv6 on port %u: %d\n",
				SMBD_PORT_IWARP, ret);
	}
	WRITE_ONCE(smbd_ksmbd_running, true);
	smbd_ksmbd_retries = 0;
	mutex_unlock(&smbd_ksmbd_ls_lock);

	smbd_ksmbd_follow(true);
	/* The 445 listeners are up before ksmbd says it is running. */
	cancel_delayed_work_sync(&smbd_ksmbd_resync_work);
	smbd_ksmbd_resync(&smbd_ksmbd_resync_work.work);
	ksmbd_debug(RDMA, "SMB Direct listeners on ports %u and %u\n",
		    SMBD_PORT_IWARP, SMBD_PORT_IB);
	return 0;
}

/*
 * End every connection handed to ksmbd, as the 6.12 adapter's ->shutdown
 * does from stop_sessions(): each handler thread's read and any send
 * fail from now on, and ksmbd's teardown follows from the handler
 * thread, which frees the transport.
 * Context: any; no new connection may come (no accept thread is left).
 */
static void smbd_ksmbd_shutdown_all(void)
{
	struct smbd_ksmbd_conn *c;

	spin_lock(&smbd_ksmbd_conns_lock);
	list_for_each_entry(c, &smbd_ksmbd_conns, node) {
		smbd_sock_shutdown(c->sk);
		atomic_inc(&c->events);
		wake_up(&c->wait);
	}
	spin_unlock(&smbd_ksmbd_conns_lock);
}

/**
 * ksmbd_rdma_stop_listening() - accept no more SMB Direct connections
 *
 * Stops following addresses and devices, then ends every listener with
 * its accept thread; the connections nobody accepted go with them.
 * Then ends the connections already handed to ksmbd: 6.1 calls this
 * only right before stop_sessions(), which ends every connection but
 * cannot safely do so through a ->shutdown (see the top of this file).
 *
 * Context: process, under ksmbd's init_lock; sleeps. Takes the RTNL.
 */
void ksmbd_rdma_stop_listening(void)
{
	struct smbd_ksmbd_addr_ls *a, *tmp;

	mutex_lock(&smbd_ksmbd_ls_lock);
	if (!smbd_ksmbd_running) {
		mutex_unlock(&smbd_ksmbd_ls_lock);
		smbd_ksmbd_shutdown_all();
		return;
	}
	WRITE_ONCE(smbd_ksmbd_running, false);
	mutex_unlock(&smbd_ksmbd_ls_lock);

	smbd_ksmbd_follow(false);
	mutex_lock(&smbd_ksmbd_ls_lock);
	list_for_each_entry_safe(a, tmp, &smbd_ksmbd_ib, node)
		smbd_ksmbd_drop_ls(a);
	smbd_ksmbd_unlisten(&smbd_ksmbd_iw[1]);
	smbd_ksmbd_unlisten(&smbd_ksmbd_iw[0]);
	mutex_unlock(&smbd_ksmbd_ls_lock);
	/* No thread or notifier is left to queue it again. */
	cancel_delayed_work_sync(&smbd_ksmbd_resync_work);
	smbd_ksmbd_shutdown_all();
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

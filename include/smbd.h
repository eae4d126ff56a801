/* SPDX-License-Identifier: GPL-2.0 */
/*
 * smbd: SMB Direct ([MS-SMBD]) for in-kernel consumers. The public API.
 *
 * A struct smbd_sock is one SMB Direct connection, or a listener. It moves
 * upper-layer messages (for SMB2: one SMB2 message or compound, without
 * the 4-byte length prefix of SMB2 over TCP) and keeps their boundaries.
 *
 * Life of a socket:
 *
 *   smbd_sock_create()
 *     initiator: smbd_sock_connect() or smbd_sock_connect_async()
 *     responder: smbd_sock_bind(), smbd_sock_listen(), smbd_sock_accept()
 *   smbd_sock_send() / smbd_sock_recv() / smbd_sock_recv_stream()
 *   smbd_sock_shutdown()   (optional: end the connection, keep the socket;
 *                           before a connect, that connect then fails)
 *   smbd_sock_release()    (always: end it and free everything)
 *
 * Exported in the SMBD symbol namespace: MODULE_IMPORT_NS(SMBD).
 */
#ifndef _SMBD_H
#define _SMBD_H

#include <linux/errno.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/socket.h>
#include <linux/types.h>
#include <linux/uio.h>

/* The module's version (modinfo, DKMS). */
#define SMBD_VERSION		"0.15.0"

struct net;
struct smbd_sock;

/**
 * struct smbd_params - local choices made before negotiation
 * @recv_credit_max: Connection.ReceiveCreditMax, most receives we post
 * @send_credit_target: Connection.SendCreditTarget, credits we ask for
 * @max_send_size: Connection.MaxSendSize before negotiation, unless
 *	@large_size is larger
 * @max_recv_size: Connection.MaxReceiveSize before negotiation, unless
 *	@large_size is larger; the size of each receive buffer as made
 * @large_size: a larger message size offered both ways, for a peer that
 *	offers as much (another smbd); 0 for none. No more is offered than
 *	one send gathers from pages (20 KiB on rxe, 12 KiB on siw). Its
 *	receives are cut from the same memory as @recv_credit_max buffers
 *	of @max_recv_size, so there are fewer of them, and a connection
 *	offers it only if that memory holds at least 16, and its copy
 *	buffers' at least one (Documentation/smbd.rst, "The receive
 *	split"). Windows Server
 *	refuses an initiator that offers to send more than 8136 bytes
 *	([MS-SMBD] WIN<6>): a consumer that may connect to one sets 0 here
 *	and keeps @max_send_size within that, as the cifs adapter does.
 * @max_fragmented_recv_size: Connection.MaxFragmentedRecvSize; a consumer
 *	that reads with smbd_sock_recv_stream() keeps it within
 *	%SMBD_STREAM_MAX_MSG
 * @max_read_write_size: Connection.MaxReadWriteSize limit of this side:
 *	0 for no RDMA read or write, else at least
 *	%SMBD_MIN_READ_WRITE_SIZE
 * @keepalive_interval_ms: Connection.KeepaliveInterval; 0 disables it
 * @keepalive_timeout_ms: wait for the answer to a keep-alive ([MS-SMBD]
 *	3.1.5.1, WIN<4>)
 * @negotiate_timeout_ms: the Negotiation Timer ([MS-SMBD] 3.1.2.1)
 * @mr_count: registrations smbd_register() can hold at once; 0 sizes an
 *	initiator's pool from the device (twice the RDMA reads the peer may
 *	issue, 8 to 64) and gives a responder none
 * @copy_buffers: send buffers of @max_send_size bytes (fewer of the
 *	negotiated size if the split made it larger) for payload that is
 *	copied: a message sent with %SMBD_SEND_COPY or %SMBD_SEND_NONBLOCK,
 *	or the part of one the device cannot gather from where it lies. A
 *	send copies up to 488 bytes into a small buffer of its own; more
 *	waits for one of these. 0 gives a quarter of the send contexts (16
 *	with the defaults); at most one per send context is used.
 * @ack_timeout: local ACK timeout of an InfiniBand or RoCE queue pair,
 *	4.096 us << @ack_timeout (1 to 31); 0 keeps rdma_cm's choice, or
 *	about 8.6 s on a software RoCE device. Ignored on iWARP, where TCP
 *	times out. A dead peer is found after 7 such timeouts.
 * @dev_class: the RDMA devices the socket may use: %SMBD_DEV_ANY, or
 *	%SMBD_DEV_IB (InfiniBand and RoCE) or %SMBD_DEV_IWARP alone. A
 *	listener refuses connection requests that arrive on another class
 *	and cannot be bound to an address of one; an initiator fails its
 *	connect when the peer's route leaves through one. This keeps each
 *	well-known port to its class ([MS-SMBD] 1.9: 5445 for iWARP, 445
 *	for the others) when both kinds share a host.
 *
 * [MS-SMBD] 3.1.4.1 (initiator) and 3.1.7.2 (responder) leave these to
 * the implementation; smbd_params_init() fills the defaults.
 */
struct smbd_params {
	u16 recv_credit_max;
	u16 send_credit_target;
	u32 max_send_size;
	u32 max_recv_size;
	u32 large_size;
	u32 max_fragmented_recv_size;
	u32 max_read_write_size;
	u32 keepalive_interval_ms;
	u32 keepalive_timeout_ms;
	u32 negotiate_timeout_ms;
	u16 mr_count;
	u8 ack_timeout;
	u8 dev_class;
	u16 copy_buffers;
};

/* struct smbd_params.dev_class */
#define SMBD_DEV_ANY		0
#define SMBD_DEV_IB		1	/* InfiniBand, RoCE v1 and v2 */
#define SMBD_DEV_IWARP		2

/**
 * struct smbd_sock_ops - upcalls to the consumer; all optional
 * @data_ready: message data arrived; on a listener, a connection is
 *	ready for smbd_sock_accept(). From a completion handler, in softirq
 *	or a workqueue (module parameter cq_poll; a listener's: smbd's work
 *	queue): must not sleep, nor accept from here.
 * @write_space: a send that returned -EAGAIN (or a partial count) may go
 *	on. Any context: must not sleep. It may come while that send is
 *	still returning: a consumer notes that it waits before it sends.
 * @state_change: the connection was established or lost, by its peer,
 *	an error, shutdown or the removal of its device ([MS-SMBD] 3.1.7.1).
 *	Process context (smbd's work queue), with no lock of smbd's held:
 *	may sleep and call smbd_deregister() or smbd_sock_shutdown(), but
 *	not smbd_sock_release() (which waits for it).
 */
struct smbd_sock_ops {
	void (*data_ready)(struct smbd_sock *sk);
	void (*write_space)(struct smbd_sock *sk);
	void (*state_change)(struct smbd_sock *sk);
};

/**
 * struct smbd_sock_info - what a connection negotiated ([MS-SMBD] 3.1.4.7)
 * @max_send_size: Connection.MaxSendSize
 * @max_recv_size: Connection.MaxReceiveSize
 * @max_fragmented_send_size: largest message smbd_sock_send() takes
 * @max_fragmented_recv_size: largest message we receive
 * @max_read_write_size: largest RDMA transfer of one upper-layer I/O; 0
 *	for none (a side's limit is 0, or the peer's is below
 *	%SMBD_MIN_READ_WRITE_SIZE), else at least %SMBD_MIN_READ_WRITE_SIZE
 * @keepalive_interval_ms: Connection.KeepaliveInterval
 * @send_credits: Send Credits held now
 * @recv_credits: receives posted now (the peer's credits and those about
 *	to be granted)
 * @recv_credit_target: the peer's CreditsRequested, capped
 * @iwarp: the connection runs over iWARP
 * @initiator_depth: RDMA reads this side may issue at once (ORD)
 * @responder_resources: RDMA reads the peer may issue at once (IRD)
 * @max_reg_size: the largest buffer smbd_register() always maps into a
 *	single descriptor, whatever its offset in the first page (no gap
 *	inside it); 0 without an MR pool. Consumers that send one
 *	descriptor per I/O (cifs) size their I/O by it.
 * @send_gather: gather entries of one send: the header takes one and a
 *	copy one, so a segment's payload goes out zero-copy only if it
 *	spans at most @send_gather - 2 runs of contiguous pages; the rest
 *	is copied (3 on Intel's X722, 4 on qedr)
 */
struct smbd_sock_info {
	u32 max_send_size;
	u32 max_recv_size;
	u32 max_fragmented_send_size;
	u32 max_fragmented_recv_size;
	u32 max_read_write_size;
	u32 keepalive_interval_ms;
	u32 send_credits;
	u32 recv_credits;
	u32 recv_credit_target;
	bool iwarp;
	u8 initiator_depth;
	u8 responder_resources;
	u32 max_reg_size;
	u32 send_gather;
};

/**
 * struct smbd_sock_stats - what a connection has done
 * @msgs_sent: upper-layer messages sent
 * @msgs_recv: upper-layer messages received
 * @segs_sent: Data Transfer messages sent, empty ones included
 * @segs_recv: Data Transfer messages received, empty ones included
 * @bytes_sent: payload bytes sent
 * @bytes_zcopy: of @bytes_sent, those sent from the sender's own pages
 *	mapped for the device (the rest were copied into smbd's buffers)
 * @bytes_recv: payload bytes received
 * @grants_sent: messages that granted credits
 * @credit_waits: times a sender waited for a Send Credit or a buffer
 * @keepalives_sent: keep-alive probes sent (RESPONSE_REQUESTED set)
 * @keepalives_answered: the peer's probes answered
 * @mrs_registered: MRs registered by smbd_register()
 * @mrs_local_inv: MRs smbd_deregister() invalidated locally
 * @mrs_remote_inv: MRs the peer invalidated (Send with Invalidate) with
 *	the right rkey, so no local invalidation was needed
 * @remote_inv_unknown: invalidations by the peer of an rkey that was no
 *	live registration of ours
 * @rdma_reads: RDMA read work completed by smbd_rdma_read() calls
 * @rdma_read_bytes: bytes they moved
 * @rdma_writes: RDMA write work completed by smbd_rdma_write() calls
 * @rdma_write_bytes: bytes they moved
 * @conns_refused: a listener's connection requests refused: backlog full,
 *	or max_negotiating connections still negotiating (module parameter)
 * @conns_wrong_class: a listener's connection requests refused because
 *	they came through a device of a class its @dev_class excludes
 * @peer_refusals: messages from the peer refused by [MS-SMBD] 3.1.5.x;
 *	each ends the connection, and the smbd_refused tracepoint says why
 * @rdma_writes_posted: of @rdma_writes, those copied and not waited for
 *	(a responder's small writes: the posted_write_max parameter)
 */
struct smbd_sock_stats {
	u64 msgs_sent;
	u64 msgs_recv;
	u64 segs_sent;
	u64 segs_recv;
	u64 bytes_sent;
	u64 bytes_zcopy;
	u64 bytes_recv;
	u64 grants_sent;
	u64 credit_waits;
	u64 keepalives_sent;
	u64 keepalives_answered;
	u64 mrs_registered;
	u64 mrs_local_inv;
	u64 mrs_remote_inv;
	u64 remote_inv_unknown;
	u64 rdma_reads;
	u64 rdma_read_bytes;
	u64 rdma_writes;
	u64 rdma_write_bytes;
	u64 conns_refused;
	u64 conns_wrong_class;
	u64 peer_refusals;
	u64 rdma_writes_posted;
};

/* Flags of smbd_sock_send(). */
#define SMBD_SEND_NONBLOCK	0x1	/* never sleep: -EAGAIN or a partial count */
#define SMBD_SEND_MORE		0x2	/* more parts of this message follow */
#define SMBD_SEND_COPY		0x4	/* copy; return once posted, not completed */

/* Most parts one message may be built from with %SMBD_SEND_MORE. */
#define SMBD_MORE_MAX		16

/*
 * Messages up to this size are cheaper copied (%SMBD_SEND_COPY) than
 * mapped and waited for: a copy of 16 KiB costs less than the round trip
 * a blocking send waits. A hint for consumers.
 */
#define SMBD_SEND_COPY_MAX	16384

/* The send flag for a message of @len bytes by that hint. */
static inline unsigned int smbd_send_copy_flag(size_t len)
{
	return len <= SMBD_SEND_COPY_MAX ? SMBD_SEND_COPY : 0;
}

/* Flags of smbd_sock_recv(), smbd_sock_recv_stream(), smbd_sock_accept(). */
#define SMBD_RECV_NONBLOCK	0x1

/*
 * The longest message smbd_sock_recv_stream() can frame: the Direct TCP
 * header it writes carries a 24-bit length after a zero byte ([MS-SMB2]
 * 2.1).
 */
#define SMBD_STREAM_MAX_MSG	0x00ffffff

/**
 * struct smbd_recv_info - about a message smbd_sock_recv() returned
 * @msg_len: its length, even when it did not fit the buffer
 * @invalidated: the peer invalidated one of our registrations with a
 *	segment of this message ([MS-SMBD] 3.1.5.8); @token says which. A
 *	message with no payload (credits, a keep-alive) is never returned,
 *	and a token it brings is reported with no other message; its
 *	registration is invalidated all the same, and smbd_deregister()
 *	has nothing to do for it
 * @token: the invalidated token (rkey)
 */
struct smbd_recv_info {
	u32 msg_len;
	bool invalidated;
	u32 token;
};

/**
 * struct smbd_buf_desc - Buffer Descriptor V1 ([MS-SMBD] 2.2.3.1), host order
 * @offset: the peer's address of the buffer (its registration's iova)
 * @token: the registration's steering tag (rkey)
 * @length: bytes
 *
 * On the wire it is 16 little-endian bytes (smbd_desc_encode()), inside
 * the upper layer's messages (SMB2 READ/WRITE channel info).
 */
struct smbd_buf_desc {
	u64 offset;
	u32 token;
	u32 length;
};

#define SMBD_BUF_DESC_LEN	16	/* one descriptor on the wire */

struct smbd_reg;	/* a registered buffer: smbd_register() */

/* Flags of smbd_register(): what the peer may do with the buffer. */
#define SMBD_REG_PEER_WRITES	0x1	/* peer RDMA-writes into it (a read) */
#define SMBD_REG_PEER_READS	0x2	/* peer RDMA-reads from it (a write) */

/*
 * The smallest Connection.MaxReadWriteSize smbd uses. [MS-SMBD] 3.1.5.7
 * takes whatever the peer offers, but no upper-layer read or write of
 * less than a page is worth an RDMA transfer, and a consumer sizes its
 * I/O by it: a smaller offer leaves the connection without RDMA read or
 * write (0), as an offer of 0 does.
 */
#define SMBD_MIN_READ_WRITE_SIZE	4096

/* Default ports ([MS-SMBD] 1.9): iWARP uses 5445, IB and RoCE use 445. */
#define SMBD_PORT_IWARP		5445
#define SMBD_PORT_IB		445

/**
 * smbd_addr_len() - the length of an IPv4 or IPv6 socket address
 * @a: the address
 *
 * Context: any.
 * Return: its length, or -EAFNOSUPPORT for any other family.
 */
static inline int smbd_addr_len(const struct sockaddr *a)
{
	switch (a->sa_family) {
	case AF_INET:
		return sizeof(struct sockaddr_in);
	case AF_INET6:
		return sizeof(struct sockaddr_in6);
	default:
		return -EAFNOSUPPORT;
	}
}

/**
 * smbd_addr_port() - the port of an IPv4 or IPv6 socket address
 * @a: the address
 *
 * Context: any.
 * Return: the port in host order.
 */
static inline u16 smbd_addr_port(const struct sockaddr *a)
{
	if (a->sa_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)a)->sin6_port);
	return ntohs(((const struct sockaddr_in *)a)->sin_port);
}

/**
 * smbd_addr_set_port() - set the port of an IPv4 or IPv6 socket address
 * @a: the address
 * @port: the port in host order
 *
 * Context: any.
 */
static inline void smbd_addr_set_port(struct sockaddr *a, u16 port)
{
	if (a->sa_family == AF_INET6)
		((struct sockaddr_in6 *)a)->sin6_port = htons(port);
	else
		((struct sockaddr_in *)a)->sin_port = htons(port);
}

void smbd_params_init(struct smbd_params *p, bool responder);

int smbd_sock_create(struct net *net, const struct smbd_params *params,
		     struct smbd_sock **skp);
void smbd_sock_set_ops(struct smbd_sock *sk, const struct smbd_sock_ops *ops,
		       void *priv);
void *smbd_sock_priv(const struct smbd_sock *sk);

int smbd_sock_connect(struct smbd_sock *sk, const struct sockaddr *dst);
int smbd_sock_connect_async(struct smbd_sock *sk, const struct sockaddr *dst,
			    void (*done)(struct smbd_sock *sk, int status));

int smbd_sock_bind(struct smbd_sock *sk, const struct sockaddr *addr);
int smbd_sock_listen(struct smbd_sock *sk, int backlog);
int smbd_sock_accept(struct smbd_sock *lsk, struct smbd_sock **newp,
		     unsigned int flags);

ssize_t smbd_sock_send(struct smbd_sock *sk, struct iov_iter *from,
		       unsigned int flags);
ssize_t smbd_sock_recv(struct smbd_sock *sk, struct iov_iter *to,
		       unsigned int flags, struct smbd_recv_info *info);
ssize_t smbd_sock_recv_stream(struct smbd_sock *sk, struct iov_iter *to,
			      unsigned int flags);

ssize_t smbd_sock_send_inv(struct smbd_sock *sk, struct iov_iter *from,
			   unsigned int flags, u32 remote_token);

int smbd_register(struct smbd_sock *sk, struct iov_iter *iter,
		  unsigned int flags, struct smbd_buf_desc *descs,
		  u32 max_descs, struct smbd_reg **regp);
int smbd_deregister(struct smbd_sock *sk, struct smbd_reg *reg);
ssize_t smbd_rdma_read(struct smbd_sock *sk, struct iov_iter *to,
		       const struct smbd_buf_desc *descs, u32 ndescs,
		       u64 offset);
ssize_t smbd_rdma_write(struct smbd_sock *sk, struct iov_iter *from,
			const struct smbd_buf_desc *descs, u32 ndescs,
			u64 offset);

void smbd_desc_encode(const struct smbd_buf_desc *d, void *wire);
int smbd_desc_decode(const void *wire, u32 len, struct smbd_buf_desc *descs,
		     u32 max_descs);

int smbd_sock_query(struct smbd_sock *sk, struct smbd_sock_info *info);
int smbd_sock_getname(struct smbd_sock *sk, struct sockaddr_storage *addr,
		      bool peer);
void smbd_sock_stats(struct smbd_sock *sk, struct smbd_sock_stats *stats);
void smbd_sock_shutdown(struct smbd_sock *sk);
void smbd_sock_release(struct smbd_sock *sk);

struct net_device;
bool smbd_netdev_capable(struct net_device *netdev);
unsigned int smbd_netdev_classes(struct net_device *netdev);

/* Events of smbd_register_dev_notifier(); the data is a struct ib_device. */
#define SMBD_DEV_UP		1
#define SMBD_DEV_DOWN		2

struct notifier_block;
int smbd_register_dev_notifier(struct notifier_block *nb);
int smbd_unregister_dev_notifier(struct notifier_block *nb);

#endif /* _SMBD_H */

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * smbd: private structures shared by the files of smbd.ko.
 *
 * Field prefixes: sd_ struct smbd_device, ss_ struct smbd_sock,
 * rx_ struct smbd_recv_ctx, tx_ struct smbd_send_ctx.
 */
#ifndef _SMBD_INTERNAL_H
#define _SMBD_INTERNAL_H

#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/hrtimer.h>
#include <linux/jiffies.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/pfn.h>
#include <linux/scatterlist.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/uio.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>

#include "smbd_compat.h"

#include "smbd.h"
#include "smbd_proto.h"
#include "uapi/smbd_netlink.h"

/* A profile's name, in the record of each device it capped. */
#define SMBD_PROFILE_NAME_MAX	16

/**
 * struct smbd_device - an RDMA device smbd can use
 * @sd_list: entry in smbd_devices, protected by smbd_devices_lock
 * @sd_ibdev: the device; valid until its ib_client remove callback
 * @sd_events: its asynchronous event handler (IB_EVENT_DEVICE_FATAL)
 * @sd_fatal: the device reported a fatal error: no new connection on it
 *	(smbd_dev_get()) until it is removed and added again; set once,
 *	under smbd_devices_lock
 * @sd_iwarp: iWARP (port 5445, initiator sends first) rather than IB/RoCE
 * @sd_max_qp_wr: work requests per queue
 * @sd_max_send_sge: gather entries per send
 * @sd_max_recv_sge: scatter entries per receive
 * @sd_max_cqe: entries per completion queue
 * @sd_max_rd_atom: RDMA reads this device serves at once (IRD)
 * @sd_max_init_rd_atom: RDMA reads this device issues at once (ORD)
 * @sd_max_frmr_pages: pages one fast-registered MR can map
 * @sd_max_sgl_rd: scatter entries of an RDMA read sink (0: same as send)
 * @sd_max_sge_rd: gather entries of an RDMA Read request (0: not said)
 * @sd_max_inline: inline data of a send (smbd asks for none)
 * @sd_profile: the profile that capped these (debugfs smbd/dev_profile),
 *	"" when none did
 * @sd_use: whether smbd runs connections on it (%SMBD_USE_YES), or why
 *	not: a device it cannot use is recorded all the same, for the
 *	administrator (SMBD_CMD_DEV_GET), and nothing else looks at it
 * @sd_short_of: with %SMBD_USE_SHORT, the limit below smbd's minimum
 * @sd_have: what the device has of @sd_short_of
 * @sd_need: what smbd needs of it
 *
 * Immutable after smbd_ib_add() but for @sd_fatal; connections size
 * everything from these rather than from constants that fit one provider
 * only.
 */
struct smbd_device {
	struct list_head sd_list;
	struct ib_device *sd_ibdev;
	struct ib_event_handler sd_events;
	bool sd_fatal;
	bool sd_iwarp;
	u32 sd_max_qp_wr;
	u32 sd_max_send_sge;
	u32 sd_max_recv_sge;
	u32 sd_max_cqe;
	u32 sd_max_rd_atom;
	u32 sd_max_init_rd_atom;
	u32 sd_max_frmr_pages;
	u32 sd_max_sgl_rd;
	u32 sd_max_sge_rd;
	u32 sd_max_inline;
	char sd_profile[SMBD_PROFILE_NAME_MAX];
	u8 sd_use;
	const char *sd_short_of;
	u32 sd_have;
	u32 sd_need;
};

/**
 * enum smbd_cap_id - the device limits a profile caps
 * @SMBD_CAP_QP_WR: max_qp_wr
 * @SMBD_CAP_CQE: max_cqe
 * @SMBD_CAP_SEND_SGE: max_send_sge
 * @SMBD_CAP_RECV_SGE: max_recv_sge
 * @SMBD_CAP_SGE_RD: max_sge_rd
 * @SMBD_CAP_RD_ATOM: max_qp_rd_atom
 * @SMBD_CAP_INIT_RD_ATOM: max_qp_init_rd_atom
 * @SMBD_CAP_FRMR_PAGES: max_fast_reg_page_list_len
 * @SMBD_CAP_INLINE: max_inline_data
 * @SMBD_CAP_NR: how many
 */
enum smbd_cap_id {
	SMBD_CAP_QP_WR,
	SMBD_CAP_CQE,
	SMBD_CAP_SEND_SGE,
	SMBD_CAP_RECV_SGE,
	SMBD_CAP_SGE_RD,
	SMBD_CAP_RD_ATOM,
	SMBD_CAP_INIT_RD_ATOM,
	SMBD_CAP_FRMR_PAGES,
	SMBD_CAP_INLINE,
	SMBD_CAP_NR
};

/**
 * struct smbd_profile - the limits of a device family (smbd_profile.c)
 * @name: how debugfs smbd/dev_profile names it
 * @iwarp: an iWARP device (run it on siw), else InfiniBand or RoCE (rxe)
 * @cap: the most smbd takes of each attribute (0: the device's own)
 */
struct smbd_profile {
	const char *name;
	bool iwarp;
	u32 cap[SMBD_CAP_NR];
};

/**
 * enum smbd_state - life of a socket; changed only by smbd_set_state()
 * @SMBD_CREATED: new, nothing set up
 * @SMBD_CONNECTING: initiator: resolving, creating the QP, connecting
 * @SMBD_LISTENING: a listener
 * @SMBD_NEGOTIATING: RDMA connection up, SMB Direct negotiation running
 * @SMBD_REFUSING: responder: negotiation failed ([MS-SMBD] 3.1.5.3); a
 *	failure Negotiate Response is on its way, and the connection ends
 *	once its send completes
 * @SMBD_CONNECTED: Connection.Role "ESTABLISHED": data may flow
 * @SMBD_DISCONNECTING: ending: no new work; waiting for the provider
 * @SMBD_CLOSED: ended; only smbd_sock_release() is left to do
 */
enum smbd_state {
	SMBD_CREATED,
	SMBD_CONNECTING,
	SMBD_LISTENING,
	SMBD_NEGOTIATING,
	SMBD_REFUSING,
	SMBD_CONNECTED,
	SMBD_DISCONNECTING,
	SMBD_CLOSED,
};

/*
 * How far negotiation got, bits of ss_neg_trace: set as it happens, read
 * when the Negotiation Timer expires to say which side lost what.
 */
enum smbd_neg_trace {
	SMBD_NEG_POSTED,	/* our negotiate message was posted */
	SMBD_NEG_SENT,		/* ... and its send completed */
	SMBD_NEG_SEND_FAILED,	/* ... and its send completed in error */
	SMBD_NEG_RECEIVED,	/* a message arrived while negotiating */
	SMBD_NEG_EXPIRED,	/* the Negotiation Timer's end was reported */
	SMBD_NEG_PROBING,	/* the one chain of probes was started */
	SMBD_NEG_PROBE_UNPOSTED,	/* ... and a probe could not be posted */
};

/**
 * enum smbd_trace_ka - keep-alive events (3.1.5.1, 3.1.5.8, 3.1.6.2)
 * @SMBD_TRACE_KA_ASK: our message asks the peer for an answer
 * @SMBD_TRACE_KA_ASKED: the peer asked us for one
 * @SMBD_TRACE_KA_TIMEOUT: the peer did not answer ours in time
 */
enum smbd_trace_ka {
	SMBD_TRACE_KA_ASK,
	SMBD_TRACE_KA_ASKED,
	SMBD_TRACE_KA_TIMEOUT,
};

/**
 * enum smbd_trace_inv - how an MR's window closed (3.1.4.4, 3.1.5.8)
 * @SMBD_TRACE_INV_LOCAL: we invalidated it
 * @SMBD_TRACE_INV_REMOTE: the peer's Send with Invalidate did
 * @SMBD_TRACE_INV_UNKNOWN: the peer invalidated an rkey not ours in use
 */
enum smbd_trace_inv {
	SMBD_TRACE_INV_LOCAL,
	SMBD_TRACE_INV_REMOTE,
	SMBD_TRACE_INV_UNKNOWN,
};

/**
 * struct smbd_counters - what the socket API does not show (debugfs
 *	smbd/conn/<id>/, and netlink)
 * @empty_sent: messages sent without payload (grants, keep-alives)
 * @empty_recv: messages received without payload
 * @reassembled: messages received in more than one segment
 * @wr_errors: work requests completed in error, not flushed
 * @neg_refused: negotiate messages refused, by enum smbd_neg_err
 * @rx_refused: data messages refused, by enum smbd_rx_err
 * @copy_waits: times a sender waited for a copy buffer
 * @credit_stall_ns: how long senders waited for a Send Credit, in all
 */
struct smbd_counters {
	u64 empty_sent;
	u64 copy_waits;
	u64 empty_recv;
	u64 reassembled;
	u64 wr_errors;
	u64 credit_stall_ns;
	u32 neg_refused[SMBD_NEG_ERR_NR];
	u32 rx_refused[SMBD_RX_ERR_NR];
};

/* Where a listener's child is: set under the listener's ss_lock. */
enum smbd_queued {
	SMBD_Q_NONE,		/* on no list of the listener's */
	SMBD_Q_PENDING,		/* on ss_lq->pending: negotiating */
	SMBD_Q_ACCEPT,		/* on ss_lq->accept_q: waiting for accept */
};

/* What a completion context's work requests are (struct smbd_cqe). */
enum smbd_wc_kind {
	SMBD_WC_RECV,		/* a receive */
	SMBD_WC_SEND,		/* a send */
	SMBD_WC_REG,		/* an MR of the pool registered or invalidated */
	SMBD_WC_OP,		/* what a thread waits for: RDMA read or write, invalidation */
	SMBD_WC_FENCE,		/* the teardown's marker (smbd_qp_fence()) */
	SMBD_WC_PROBE,		/* a probe of the peer while negotiating */
	SMBD_WC_WSLOT,		/* a responder's RDMA Write posted unwaited */
};

/**
 * struct smbd_cqe - a completion context, named for traces
 * @cqe: what its work requests point at (wr_cqe); .done handles them
 * @id: its number, unique among the contexts of its connection (and so
 *	of each of its completion queues), from 1
 * @kind: enum smbd_wc_kind
 *
 * Named once, when the context is set up (smbd_cqe_init()): every
 * completion, flush and error traced for it carries @id with the
 * restrack id of the completion queue it came on, and a buffer reused
 * names the same context each time.
 */
struct smbd_cqe {
	struct ib_cqe cqe;
	u32 id;
	u8 kind;
};

/**
 * struct smbd_bufs - equal buffers packed into chunks, each mapped once
 * @chunk: the chunks' memory, @nchunks of them
 * @dma: each chunk's DMA address
 * @nchunks: chunks allocated (a failed allocation leaves fewer)
 * @chunk_len: bytes of each chunk but the last, as allocated and mapped
 * @total: bytes of all chunks, as allocated and mapped
 * @per_chunk: buffers in each chunk (the last may hold fewer)
 * @stride: bytes from one buffer to the next: the size, aligned for DMA
 * @n: buffers in all
 * @dir: the direction they are mapped for
 *
 * @per_chunk, @stride and @n change when negotiation cuts the same
 * chunks into larger buffers (smbd_xfer_split()); @chunk_len and @total
 * do not.
 *
 * A kmalloc() per buffer rounds each up to a power of two: a 1364-byte
 * buffer (cifs's and ksmbd's size) took a 2 KiB object. Chunks of up to
 * 32 KiB (PAGE_ALLOC_COSTLY_ORDER) waste at most one stride each.
 */
struct smbd_bufs {
	void **chunk;
	u64 *dma;
	u32 nchunks;
	u32 chunk_len;
	u32 total;
	u32 per_chunk;
	u32 stride;
	u32 n;
	enum dma_data_direction dir;
};

/**
 * struct smbd_recv_ctx - one receive buffer, DMA-mapped once
 * @rx_cqe: completion entry; .done is smbd_recv_done()
 * @rx_sk: owning socket
 * @rx_node: on ss_rx.free (not posted) or ss_rx.ready (holding data)
 * @rx_wr: its receive work request
 * @rx_sge: its scatter entry
 * @rx_buf: the buffer, @rx_len bytes
 * @rx_dma: its DMA address
 * @rx_len: size of @rx_buf
 * @rx_data_off: payload offset in @rx_buf (valid on ss_rx.ready)
 * @rx_data_len: payload bytes (valid on ss_rx.ready)
 * @rx_msg_total: the whole message's length (first fragment only)
 * @rx_first: first fragment of its upper-layer message
 * @rx_last: last fragment of its upper-layer message
 * @rx_invalidated: the peer invalidated @rx_token with this message
 * @rx_token: the invalidated token
 * @rx_seq: the connection's count of receives posted when this one was
 *	(tracepoints)
 */
struct smbd_recv_ctx {
	struct smbd_cqe rx_cqe;
	struct smbd_sock *rx_sk;
	struct list_head rx_node;
	struct ib_recv_wr rx_wr;
	struct ib_sge rx_sge;
	void *rx_buf;
	u64 rx_dma;
	u32 rx_len;
	u32 rx_data_off;
	u32 rx_data_len;
	u32 rx_msg_total;
	bool rx_first;
	bool rx_last;
	bool rx_invalidated;
	u32 rx_token;
	u32 rx_seq;
};

/*
 * An initiator on InfiniBand or RoCE probes its peer's queue pair this
 * long after its Negotiate Request completed, and again as long as no
 * Negotiate Response came (smbd_neg_probe_work()).
 */
#define SMBD_NEG_PROBE_MS	2000

/* Local ACK timeout of a software RoCE device: 4.096 us << 21, ~8.6 s. */
#define SMBD_SOFT_ROCE_ACK_TIMEOUT	21

/* Gather entries of a queue pair (rdma_rw uses them all). */
#define SMBD_QP_SGE_MAX		32
/* rdma_rw contexts of a connection, and the bytes one of them moves. */
#define SMBD_RW_CTXS		8
#define SMBD_RW_CHUNK		(256U << 10)
#define SMBD_RW_CHUNK_PAGES	(SMBD_RW_CHUNK / PAGE_SIZE + 1)
/*
 * An iWARP RDMA Read lands in a registration: one context moves as much
 * as one registration maps (rdma_rw gives it 256 pages at most), so a
 * 1 MiB read is one or two reads, not four (smbd_rw_read_chunk_bytes()).
 */
#define SMBD_RW_READ_CHUNK	(255U * PAGE_SIZE)
/* Gather entries of one context's piece, a read's or a write's. */
#define SMBD_RW_SLOT_PAGES	(SMBD_RW_READ_CHUNK / PAGE_SIZE + 1)

/*
 * Fragments of one long message received before the reader is woken;
 * with this few receives posted, the peer is short of credits and the
 * reader reposts what it gave back at once (smbd_read.c).
 */
#define SMBD_RX_WAKE_SEGS	16

/*
 * A responder's RDMA Writes of up to the posted_write_max parameter
 * (default %SMBD_WSLOT_DEFAULT bytes, at most %SMBD_WSLOT_MAX) into one
 * of the peer's buffers are copied into one of %SMBD_WSLOTS pre-mapped
 * slots and posted without a wait (smbd_rw.c).
 */
#define SMBD_WSLOTS		8
#define SMBD_WSLOT_DEFAULT	16384U
#define SMBD_WSLOT_MAX		65536U

/**
 * struct smbd_wslot - a responder's slot for an RDMA Write posted unwaited
 * @ws_cqe: completion entry; .done returns the slot (smbd_wslot_done())
 * @ws_node: on ss_rdma.wslot_free while no write holds it (under ss_lock)
 * @ws_busy: taken by a write whose completion is not seen yet (ss_lock)
 * @ws_len: bytes of the write in flight, counted when it completes
 * @ws_wr: the work request: one signalled RDMA Write
 * @ws_sge: its gather entry, in @ws_buf
 * @ws_buf: ss_rdma.wslot_len bytes of ss_rdma.wslot_bufs, DMA-mapped once
 */
struct smbd_wslot {
	struct smbd_cqe ws_cqe;
	struct list_head ws_node;
	bool ws_busy;
	u32 ws_len;
	struct ib_rdma_wr ws_wr;
	struct ib_sge ws_sge;
	void *ws_buf;
};

/* Gather entries of one send: the header, mapped payload, one bounce. */
#define SMBD_TX_SGE_MAX	8

/*
 * Each send context owns a slot of this many bytes, DMA-mapped once: the
 * header with its padding and up to SMBD_TX_SLOT_DATA bytes of copied
 * payload (at least SMBD_COPYBREAK, and every negotiate message). A
 * send that copies more borrows one of the connection's copy
 * buffers (struct smbd_copy_buf): a connection keeps fewer of those than
 * send contexts, since most of its sends map their payload or copy little.
 */
#define SMBD_TX_SLOT	512
#define SMBD_TX_SLOT_DATA	(SMBD_TX_SLOT - SMBD_DATA_OFFSET)

/*
 * Payload of at most this many bytes per segment is copied even by a
 * blocking send: cheaper than mapping it and waiting for the device.
 */
#define SMBD_COPYBREAK	256
static_assert(SMBD_TX_SLOT_DATA >= SMBD_COPYBREAK);

/**
 * struct smbd_copy_buf - a buffer for a send's copied payload
 * @cb_node: on ss_tx.copy_free while no send holds it
 * @cb_buf: ss_tx.copy_len bytes (MaxSendSize), in a chunk DMA-mapped once
 * @cb_dma: its DMA address
 */
struct smbd_copy_buf {
	struct list_head cb_node;
	void *cb_buf;
	u64 cb_dma;
};

/**
 * struct smbd_send_wait - a blocking sender waiting for its batches
 * @sw_pending: posted batches of the send not completed yet, plus one
 *	held by the sender while it posts
 * @sw_done: completed when @sw_pending drops to zero
 * @sw_err: 0, or a negative errno once a batch failed, was flushed, was
 *	never posted or never completed; set before its reference is put
 */
struct smbd_send_wait {
	atomic_t sw_pending;
	struct completion sw_done;
	int sw_err;
};

/**
 * struct smbd_send_ctx - one send context with its pre-mapped buffer
 * @tx_cqe: completion entry; .done is smbd_send_done()
 * @tx_sk: owning socket
 * @tx_node: on ss_tx.free, or on a signalled context's @tx_batch
 * @tx_batch: for a signalled work request of a posted batch, the
 *	unsignalled contexts posted since the previous signalled one
 * @tx_wait: for a signalled one, the blocking sender of the batch, which
 *	waits for its completion and result, or NULL
 * @tx_wr: the work request
 * @tx_sge: gather list: [0] the header in @tx_buf, then
 *	[1..@tx_nmapped] the sender's own pages, then possibly the rest of
 *	the payload copied into @tx_buf after the header
 * @tx_nmapped: entries of @tx_sge mapped for this send only
 * @tx_copy: a copy buffer lent to this send (the payload it copies does
 *	not fit the context's own slot), or NULL
 * @tx_buf: where the header and copied payload go: the context's own
 *	%SMBD_TX_SLOT bytes of ss_tx.slots, or @tx_copy's buffer
 * @tx_dma: its DMA address
 * @tx_seq: the connection's count of sends when this one was taken
 *	(tracepoints)
 */
struct smbd_send_ctx {
	struct smbd_cqe tx_cqe;
	struct smbd_sock *tx_sk;
	struct list_head tx_node;
	struct list_head tx_batch;
	struct smbd_send_wait *tx_wait;
	struct ib_send_wr tx_wr;
	struct ib_sge tx_sge[SMBD_TX_SGE_MAX];
	u32 tx_nmapped;
	u32 tx_seq;
	struct smbd_copy_buf *tx_copy;
	void *tx_buf;
	u64 tx_dma;
};

/**
 * struct smbd_op - a thread waiting for its signalled work requests
 * @op_node: on ss_op_list while its thread uses the queue pair; then, if
 *	completions may still name it, on ss_op_orphans until the completion
 *	queue is gone; else on ss_op_cache for the next thread, or freed
 * @op_cqe: completion entry of the requests; .done is smbd_op_done()
 * @op_done: completed by the last request's completion, or by teardown
 * @op_status: 0, or why a request or the connection failed
 * @op_pending: requests the thread waits for (under ss_lock)
 * @op_posted: signalled requests posted whose completion was not seen
 *	(under ss_lock); smbd_op_end() frees the op only at 0
 * @op_finished: @op_done was completed (under ss_lock)
 * @op_orphan: the thread has left; the op stays until the completion
 *	queue is gone
 * @op_errored: a completion in error came (under ss_lock): the provider
 *	flushed, and may flush a request twice (siw, an RDMA Read queued but
 *	not sent), so a completion may still come; the op is an orphan then
 * @op_magic: SMBD_OP_LIVE from smbd_op_start() until smbd_op_end() (or
 *	the orphan's end), then SMBD_OP_DEAD, cached or freed: a completion
 *	that finds anything else names an op that is gone
 *	(Documentation/smbd.rst, "Posted work")
 *
 * Allocated by smbd_op_start(): a fence may end the wait of a thread
 * whose completions the provider delivers late (smbd_ops_abandon()), and
 * those must still find the op. Teardown completes every op still
 * waiting once the queue pair is drained, and waits for their threads
 * to leave before destroying it.
 */
struct smbd_op {
	struct list_head op_node;
	struct smbd_cqe op_cqe;
	struct completion op_done;
	int op_status;
	u32 op_pending;
	u32 op_posted;
	bool op_finished;
	bool op_orphan;
	bool op_errored;
	u32 op_magic;
};

#define SMBD_OP_LIVE	0x6f706c76	/* "oplv" */
#define SMBD_OP_DEAD	0x6f706464	/* "opdd" */
/* Ended ops a socket keeps for its next threads (smbd_op_end()). */
#define SMBD_OP_CACHE	4

/**
 * struct smbd_reg - one fast-registration MR of the pool
 * @reg_node: on ss_rdma.reg_free while unused
 * @reg_next: the next MR of the same registration (smbd_register())
 * @reg_sk: owning socket
 * @reg_mr: the MR; NULL once the queue pair is gone
 * @reg_sgl: @reg_max_pages scatter entries, allocated once
 * @reg_max_pages: pages one registration maps
 * @reg_nents: entries filled; mapped for DMA when @reg_mapped
 * @reg_mapped: @reg_sgl is DMA-mapped
 * @reg_dir: DMA direction of the mapping
 * @reg_live: the peer may reach it: registered, not invalidated
 * @reg_remote_inv: the peer invalidated its rkey ([MS-SMBD] 3.1.5.8)
 * @reg_wr: its registration work request
 * @reg_inv_wr: its local invalidation work request
 * @reg_cqe: completion entry of @reg_wr (errors end the connection)
 */
struct smbd_reg {
	struct list_head reg_node;
	struct smbd_reg *reg_next;
	struct smbd_sock *reg_sk;
	struct ib_mr *reg_mr;
	struct scatterlist *reg_sgl;
	u32 reg_max_pages;
	u32 reg_nents;
	bool reg_mapped;
	enum dma_data_direction reg_dir;
	bool reg_live;
	bool reg_remote_inv;
	struct ib_reg_wr reg_wr;
	struct ib_send_wr reg_inv_wr;
	struct smbd_cqe reg_cqe;
};

/**
 * struct smbd_fake_qp - a KUnit suite's stand-in for the verbs endpoint
 * @post_send: takes a send chain, as ib_post_send()
 * @post_recv: takes a receive chain, as ib_post_recv()
 * @to_error: moves the queue pair to the error state, as ib_modify_qp()
 *	(0 or its error)
 * @drain: as ib_drain_qp(): returns once every completion has run
 * @disconnect: as rdma_disconnect() on the socket's id
 * @destroy: frees the queue pair, CQs and PD the suite gave the socket
 * @destroy_id: as rdma_destroy_id() on the id the suite gave the socket
 *	(required when it gave one): waits for a handler the suite is
 *	running on it, and no event comes after
 * @child: a listener's only call (smbd_sock_fake_listen()): builds the
 *	child of a connection request, @sk, in place of the device's
 *	verbs objects, with smbd_ep_fake_attach(); 0 or an errno. Called
 *	from the handler, with @sk's ss_ep.cm_mutex held
 *
 * Every verbs call of the data path and the teardown goes through
 * smbd_post(), smbd_post_recv() and the inline helpers below, which call these
 * when a suite set @sk->ss_ep.fake. With a kernel built without KUnit, smbd
 * calls the verbs directly.
 */
struct smbd_fake_qp {
	int (*post_send)(struct smbd_sock *sk, const struct ib_send_wr *first,
			 const struct ib_send_wr **bad);
	int (*post_recv)(struct smbd_sock *sk, const struct ib_recv_wr *first,
			 const struct ib_recv_wr **bad);
	int (*to_error)(struct smbd_sock *sk);
	void (*drain)(struct smbd_sock *sk);
	void (*disconnect)(struct smbd_sock *sk);
	void (*destroy)(struct smbd_sock *sk);
	void (*destroy_id)(struct smbd_sock *sk, struct rdma_cm_id *id);
	int (*child)(struct smbd_sock *lsk, struct smbd_sock *sk);
};

/**
 * struct smbd_fake_ep - what a KUnit suite gives smbd_ep_fake_start()
 * @ops: the fake's calls
 * @sd: the limits of the fake device, which size the queues and pools
 * @ibdev: the device (buffers are mapped with it)
 * @pd: the protection domain (its local_dma_lkey is used)
 * @qp: the queue pair (never passed to the verbs: @ops stand in)
 * @send_cq: the send completion queue (handlers read its cq_context)
 * @recv_cq: the receive completion queue
 * @cm_id: the connection manager id the socket holds (its context set to
 *	the socket), on which the suite plays rdma_cm events through
 *	smbd_cm_handler(); never passed to rdma_cm (@ops stand in)
 * @mrs: an MR pool, sized as on a device (smbd_register()); @ibdev must
 *	then implement alloc_mr, map_mr_sg and dereg_mr, and be @pd's
 *	device; each MR maps up to @sd's sd_max_frmr_pages
 */
struct smbd_fake_ep {
	const struct smbd_fake_qp *ops;
	struct smbd_device sd;
	struct ib_device *ibdev;
	struct ib_pd *pd;
	struct ib_qp *qp;
	struct ib_cq *send_cq;
	struct ib_cq *recv_cq;
	struct rdma_cm_id *cm_id;
	bool mrs;
};

/**
 * struct smbd_sg_limit - how far a gather entry may grow (smbd_sg_add())
 * @max: bytes in one entry; 0: a page an entry
 * @boundary: a mask of the addresses no entry crosses, as
 *	dma_get_seg_boundary() gives it (ULONG_MAX: none)
 */
struct smbd_sg_limit {
	u32 max;
	unsigned long boundary;
};

struct smbd_cq_grave;

/**
 * struct smbd_ep - a connection's endpoint: its connection manager id and
 *	verbs objects, the sizes taken from its device, and the gate and
 *	fence of posted work
 * @teardown_mutex: serialises the verbs teardown of smbd_sock_release()
 *	and of device removal; taken before @cm_mutex. @qp is NULL once
 *	that ran.
 * @cm_mutex: guards @cm_id, written only under it; the connection
 *	manager handler builds the verbs objects under it while the socket
 *	still holds the id (Documentation/smbd.rst, "Ownership"). Held
 *	briefly, never across a wait for the provider or rdma_cm.
 * @cm_id: the connection manager id, while the socket holds it
 * @ibdev: the device, while the queue pair is there (NULL after)
 * @devname: its name, kept for debugfs after the device is gone
 * @iwarp: an iWARP device (else IB or RoCE)
 * @port_num: the port of @cm_id's route
 * @pd: the protection domain
 * @send_cq: the send completion queue
 * @recv_cq: the receive completion queue
 * @grave: what frees the completion queues of a real device after an
 *	RCU grace period, with a reference on it (smbd_cq_bury())
 * @send_cq_id: @send_cq's restrack id (the cq= of smbd_wc_*), for debugfs
 * @recv_cq_id: @recv_cq's
 * @cqe_ids: completion contexts named so far (smbd_cqe_init())
 * @qp: the queue pair
 * @sq_depth: send queue depth
 * @rq_depth: receive queue depth
 * @tx_sge: gather entries per send
 * @frmr_pages: pages one of our registrations maps (the device's
 *	max_fast_reg_page_list_len, as its profile left it)
 * @rw_chunk: bytes one rdma_rw context moves (smbd_rw_chunk_bytes())
 * @rw_read_chunk: bytes one moves into our memory, an RDMA Read
 *	(smbd_rw_read_chunk_bytes())
 * @rw_seg: how far one scatter entry of an RDMA Read or Write may grow
 *	when it joins pages that follow each other in memory: what the
 *	device maps as one segment (0 bytes on a fake: a page per entry)
 * @tx_sig_bytes: sends this big are signalled
 * @initiator_depth: RDMA reads we may issue at once (ORD)
 * @responder_resources: RDMA reads the peer may issue at once (IRD)
 * @resend_ms: the local ACK timeout smbd gave the queue pair, in ms (a
 *	packet lost is resent after it); 0 when rdma_cm's own is kept
 * @qp_closed: the gate (Documentation/smbd.rst, "Posted work"; under the
 *	socket's ss_lock): no thread posts once the teardown set it, before
 *	it drains
 * @fence_posted: the fence's marker is out (ss_lock)
 * @fence_err: why the marker is not out after all: the queue pair did
 *	not go to the error state, or the provider refused the marker
 *	(written once, by the thread that posts it)
 * @posting: threads between the check of @qp_closed and the end of their
 *	post, which the teardown waits for (ss_lock)
 * @fence_cqe: the marker's completion context (smbd_qp_fence())
 * @fence_done: completes with the marker's completion, or after the
 *	teardown's drain
 * @qp_event: a fatal event of the queue pair, as enum ib_event_type + 1
 *	(0: none). The provider may report it from hard IRQ, where no lock
 *	of ours may be taken: the handler sets it and queues @qp_event_work,
 *	which ends the connection.
 * @qp_event_work: see @qp_event
 * @inject_timer: debugfs conn/<id>/qp_event calls the handler from hard
 *	IRQ with it
 * @inject_done: the timer's call returned
 * @fake: a KUnit suite's stand-in for the verbs (smbd_ep_fake_start())
 * @dead: the device reported a fatal error (IB_EVENT_DEVICE_FATAL,
 *	smbd_sock_dead()): it moves no data and completes nothing of its
 *	own any more, so smbd posts nothing to it, drains nothing and waits
 *	for none of its completions (set once, read with READ_ONCE)
 * @removed: a device removal took the id (set under @teardown_mutex)
 * @removal_done: completes when that removal's handler no longer touches
 *	the socket (smbd_ep_wait_removal())
 *
 * Immutable once negotiating, but for the gate and fence fields, whose
 * lock is given above. Today one per socket and torn down with it
 * (smbd_verbs_teardown(), whose steps are safe to repeat).
 */
struct smbd_ep {
	struct mutex teardown_mutex;	/* see above */
	struct mutex cm_mutex;		/* see above */
	struct rdma_cm_id *cm_id;
	struct ib_device *ibdev;
	char devname[IB_DEVICE_NAME_MAX];
	bool iwarp;
	u32 port_num;
	struct ib_pd *pd;
	struct ib_cq *send_cq;
	struct ib_cq *recv_cq;
	struct smbd_cq_grave *grave;
	u32 send_cq_id;
	u32 recv_cq_id;
	atomic_t cqe_ids;
	struct ib_qp *qp;
	u32 sq_depth;
	u32 rq_depth;
	u32 tx_sge;
	u32 tx_sig_bytes;
	u32 frmr_pages;
	u32 rw_chunk;
	u32 rw_read_chunk;
	struct smbd_sg_limit rw_seg;
	u8 initiator_depth;
	u8 responder_resources;
	u32 resend_ms;

	bool qp_closed;
	bool fence_posted;
	int fence_err;
	u32 posting;
	struct smbd_cqe fence_cqe;
	struct completion fence_done;

	atomic_t qp_event;
	struct work_struct qp_event_work;
#ifdef CONFIG_FAULT_INJECTION_DEBUG_FS
	struct hrtimer inject_timer;
	struct completion inject_done;
#endif
#if IS_ENABLED(CONFIG_KUNIT)
	const struct smbd_fake_qp *fake;
#endif
	bool dead;
	bool removed;
	struct completion removal_done;
};

/**
 * struct smbd_listen_q - a listener's incoming connections
 * @lsk: the listener
 * @pending: children still negotiating
 * @accept_q: children negotiated, waiting for smbd_sock_accept()
 * @backlog: most children on both lists (smbd_sock_listen())
 * @accept_len: children on @accept_q
 * @pending_len: children on @pending, or being set up
 * @reap_work: frees the children that died on the lists
 *
 * All but @lsk and @reap_work under the listener's ss_lock. Each child
 * names its listener (ss_listener) and the list it is on (ss_queued,
 * ss_accept_node). Allocated by smbd_sock_bind(), freed with the
 * listener.
 */
struct smbd_listen_q {
	struct smbd_sock *lsk;
	struct list_head pending;
	struct list_head accept_q;
	u32 backlog;
	u32 accept_len;
	u32 pending_len;
	struct work_struct reap_work;
};

/**
 * struct smbd_rxq - a connection's receive side: its buffers and readers
 * @ctxs: the receive contexts, @nr of them
 * @bufs: their buffers, @nr of their rx_len
 * @nr: how many
 * @seq: receives posted (names them in traces)
 * @free: contexts not posted
 * @ready: contexts holding data for the readers, in order
 * @complete_msgs: whole messages on @ready
 * @unwoken: fragments queued since the readers were last woken
 * @repost_due: buffers given back, not yet reposted (under the socket's
 *	ss_recv_mutex)
 * @inv_pending: the peer invalidated one of our rkeys with a segment of
 *	the message in progress; @inv_token is the rkey ([MS-SMBD] 3.1.5.8)
 * @inv_token: see @inv_pending
 * @stream_hdr_left: bytes of the stream's length still to give the
 *	reader (smbd_sock_recv_stream())
 * @stream_msg_left: bytes of the stream's message still to give
 * @part: the head of a message that a non-blocking smbd_sock_recv() moved
 *	out of the receive buffers before its last fragment came, @part_len
 *	of @part_size bytes
 * @part_len: see @part
 * @part_size: see @part
 *
 * Under the socket's ss_lock but for @repost_due, the stream fields and
 * @part, which are the reader's (ss_recv_mutex). Sized and allocated by
 * smbd_xfer_alloc(), freed by smbd_xfer_free().
 */
struct smbd_rxq {
	struct smbd_recv_ctx *ctxs;
	struct smbd_bufs bufs;
	u32 nr;
	u32 seq;
	struct list_head free;
	struct list_head ready;
	u32 complete_msgs;
	u32 unwoken;
	bool repost_due;
	bool inv_pending;
	u32 inv_token;
	u32 stream_hdr_left;
	u32 stream_msg_left;
	void *part;
	u32 part_len;
	u32 part_size;
};

/**
 * struct smbd_txq - a connection's send side: its buffers and senders
 * @ctxs: the send contexts, @nr of them
 * @nr: how many
 * @seq: sends posted (names them in traces)
 * @free: contexts not posted, @free_count of them
 * @free_count: see @free
 * @slots: the contexts' own buffers, @nr of SMBD_TX_SLOT bytes
 * @copy_bufs: the copy buffers' memory, @nr_copy of @copy_len
 * @copy: the copy buffers, lent to a segment whose payload its slot
 *	cannot hold
 * @nr_copy: how many
 * @copy_len: their size: max_send_size, or the negotiated size
 * @copy_free: copy buffers not lent, @copy_free_count of them
 * @copy_free_count: see @copy_free
 * @waiters: senders waiting for a Send Credit or a buffer
 * @msg_len: the message a non-blocking send left half-sent, or 0
 * @msg_done: bytes of it sent
 * @more: the parts of a SEND_MORE message, @more_n of them, @more_len
 *	bytes
 * @more_n: see @more
 * @more_len: see @more
 * @nb_waiting: a non-blocking send found the send mutex taken
 * @grant_owed: an empty message found the send mutex taken
 * @space_due: the grant work owes write_space
 *
 * Under the socket's ss_lock but for the message fields (@msg_len to
 * @grant_owed), which are the sender's (ss_send_mutex); @nb_waiting and
 * @grant_owed are set under ss_lock too. Sized and allocated by
 * smbd_xfer_alloc(), freed by smbd_xfer_free().
 */
struct smbd_txq {
	struct smbd_send_ctx *ctxs;
	u32 nr;
	u32 seq;
	struct list_head free;
	u32 free_count;
	struct smbd_bufs slots;
	struct smbd_bufs copy_bufs;
	struct smbd_copy_buf *copy;
	u32 nr_copy;
	u32 copy_len;
	struct list_head copy_free;
	u32 copy_free_count;
	u32 waiters;
	u32 msg_len;
	u32 msg_done;
	struct iov_iter more[SMBD_MORE_MAX];
	u32 more_n;
	u32 more_len;
	bool nb_waiting;
	bool grant_owed;
	bool space_due;
};

/**
 * struct smbd_rdma_res - what a connection has for memory registration
 *	and RDMA read and write
 * @regs: the MR pool, @nr_reg of them (smbd_mr_alloc())
 * @nr_reg: how many
 * @reg_free: MRs not in use
 * @rw_avail: rdma_rw contexts free, of @rw_ctxs
 * @rw_ctxs: rdma_rw contexts the queue pair was sized for
 * @rw_scratch: a transfer's slots, kept between transfers (smbd_rw.c),
 *	or NULL
 * @wslot_bufs: a responder's slots for small RDMA Writes (smbd_rw.c),
 *	SMBD_WSLOTS of @wslot_len: made with the other buffers, freed with
 *	them
 * @wslots: the slots
 * @wslot_len: their size
 * @wslot_free: slots not posted
 *
 * Lists and counts under the socket's ss_lock.
 */
struct smbd_rdma_res {
	struct smbd_reg *regs;
	u32 nr_reg;
	struct list_head reg_free;
	u32 rw_avail;
	u32 rw_ctxs;
	struct smbd_rw_scratch *rw_scratch;
	struct smbd_bufs wslot_bufs;
	struct smbd_wslot *wslots;
	u32 wslot_len;
	struct list_head wslot_free;
};

/*
 * struct smbd_sock - one SMB Direct connection or listener
 *
 * Private: each member is described where it is declared; the endpoint
 * (@ss_ep) and a listener's queues (@ss_lq, allocated apart, as only a
 * listener has them) in their own structures.
 *
 * Immutable after creation: @ss_net, @ss_responder; @ss_params once
 * connecting or listening, but for what the buffers allow: @large_size
 * cleared by smbd_xfer_alloc() and @recv_credit_max set by it and by
 * smbd_xfer_split() (under @ss_lock, before any receive is posted).
 * Protected by @ss_lock (always taken with _bh: the completion handlers
 * run in softirq or in a workqueue, module parameter cq_poll): @ss_state,
 * @ss_err, the protocol state (@ss_cred, @ss_reasm, @ss_ka, @ss_neg
 * until connected), the lists, @ss_tx.free_count, a listener's queues
 * (@ss_lq, itself set once by smbd_sock_bind()).
 * @ss_send_mutex serialises senders: one upper-layer message at a time
 * goes on the wire, in the order senders took the mutex.
 * @ss_recv_mutex serialises readers and protects the stream framing
 * position and the partial message (@ss_rx.part).
 * The endpoint's mutexes: see struct smbd_ep.
 */
struct smbd_sock {
	/* What the consumer made, and how it hears of it. */
	struct net *ss_net;
	struct smbd_params ss_params;
	bool ss_responder;
	bool ss_params_default;		/* created with NULL params */
	const struct smbd_sock_ops *ss_ops;
	void *ss_priv;

	spinlock_t ss_lock;		/* see above */
	struct list_head ss_all_node;	/* smbd_socks (debugfs) */
	u32 ss_id;			/* names it in traces and debugfs */
	struct dentry *ss_debugfs;	/* smbd/conn/<ss_id> */
	enum smbd_state ss_state;
	int ss_err;
	/*
	 * One queue per kind of waiter, each woken only by what may let
	 * that kind proceed; a state change (smbd_set_state(),
	 * smbd_sock_error()) wakes them all (smbd_sock_wake()).
	 */
	wait_queue_head_t ss_wait;	/* connect: the state; accept: the accept queue */
	wait_queue_head_t ss_send_wq;	/* senders: a Send Credit and a send buffer */
	wait_queue_head_t ss_recv_wq;	/* readers: ss_rx.ready */
	wait_queue_head_t ss_res_wq;	/* MRs, ss_op_list leavers, the gate */
	wait_queue_head_t ss_rw_wq;	/* rdma_rw contexts: exclusive */
	void (*ss_connect_done)(struct smbd_sock *sk, int status);
	/* Released: nothing may queue the event work any more (ss_lock). */
	bool ss_released;

	/* How the negotiation went, named if it times out. */
	int ss_cm_last;			/* the last rdma_cm event (-1: none) */
	unsigned long ss_neg_trace;	/* how far its messages got (SMBD_NEG_*) */
	/*
	 * Probes of the peer's queue pair while the Negotiate Response is
	 * due (smbd_neg_probe_work()): how many it answered (written under
	 * ss_lock, named on timeout), and the completion entry of the one
	 * probe that can be out.
	 */
	u32 ss_neg_probes;
	struct smbd_cqe ss_probe_cqe;

	struct smbd_ep ss_ep;

	/* The protocol's state ([MS-SMBD] 3.1.1.1), under ss_lock. */
	struct smbd_negotiated ss_neg;
	struct smbd_credits ss_cred;
	struct smbd_reasm ss_reasm;
	struct smbd_keepalive ss_ka;

	/* The readers' side. */
	struct smbd_rxq ss_rx;
	struct mutex ss_recv_mutex;	/* one reader at a time */

	/* The senders' side. */
	struct smbd_txq ss_tx;
	struct mutex ss_send_mutex;	/* one message on the wire at a time */

	struct work_struct ss_grant_work;
	struct delayed_work ss_ka_work;
	struct delayed_work ss_neg_work;
	struct delayed_work ss_probe_work;
	struct work_struct ss_disconnect_work;

	/* A listener's child: its listener, and where it is queued there. */
	struct smbd_sock *ss_listener;
	struct list_head ss_accept_node;
	u8 ss_queued;			/* which listener list (its ss_lock) */
	/* A listener's own, allocated by smbd_sock_bind(); NULL otherwise. */
	struct smbd_listen_q *ss_lq;

	/* Memory registration and RDMA read/write. */
	struct smbd_rdma_res ss_rdma;
	struct list_head ss_op_list;	/* threads using the queue pair */
	struct list_head ss_op_orphans;	/* ops of threads gone, still posted */
	struct list_head ss_op_cache;	/* ended ops, for the next threads */
	u32 ss_op_cached;

	struct smbd_sock_stats ss_stats;	/* under ss_lock */
	struct smbd_counters ss_cnt;		/* under ss_lock */
};

/* A bound socket, listening or about to: it has a listener's queues. */
static inline bool smbd_is_listener(const struct smbd_sock *sk)
{
	return READ_ONCE(sk->ss_lq);
}

/*
 * Wake @wq's waiters, if it has any. The caller changed what they wait
 * for first: wq_has_sleeper()'s barrier pairs with the one a waiter sets
 * its state with before it looks again, so none is missed, and a queue
 * that nobody waits on (the common case of ss_res_wq, and of ss_recv_wq
 * under a consumer that reads without blocking) costs no lock.
 */
static inline void smbd_wake_all(struct wait_queue_head *wq)
{
	if (wq_has_sleeper(wq))
		wake_up_all(wq);
}

/**
 * smbd_cqe_init() - name a completion context and set its handler
 * @sk: its connection
 * @c: the context's entry
 * @kind: what its work requests are
 * @done: their completion handler
 *
 * Context: any; the ids come from an atomic count.
 */
static inline void smbd_cqe_init(struct smbd_sock *sk, struct smbd_cqe *c,
				 enum smbd_wc_kind kind,
				 void (*done)(struct ib_cq *cq, struct ib_wc *wc))
{
	c->cqe.done = done;
	c->id = atomic_inc_return(&sk->ss_ep.cqe_ids);
	c->kind = kind;
}

/* smbd_core.c */
extern struct workqueue_struct *smbd_wq;
void smbd_cq_graves_wait(void);
void smbd_sock_dead(struct smbd_sock *sk);
void smbd_socks_dead(struct ib_device *ibdev, bool quiesce);
#if IS_ENABLED(CONFIG_KUNIT)
void smbd_socks_dead_ms(struct ib_device *ibdev, unsigned int quiesce_ms);
#endif
void smbd_socks_link_up(struct ib_device *ibdev, u32 port);
extern struct list_head smbd_socks;	/* every socket, for debugfs */
extern struct mutex smbd_socks_lock;	/* protects smbd_socks */

/**
 * struct smbd_retired - what a device's sockets that are gone did
 * @name: the device's name ("" for a free entry)
 * @conns: how many
 * @st: their counters, summed
 * @wr_errors: their work requests completed in error
 * @credit_stall_ns: their senders' time waiting for a credit
 *
 * Under smbd_socks_lock (smbd_core.c).
 */
struct smbd_retired {
	char name[IB_DEVICE_NAME_MAX];
	u64 conns;
	struct smbd_sock_stats st;
	u64 wr_errors;
	u64 credit_stall_ns;
};

void smbd_stats_add(struct smbd_sock_stats *to,
		    const struct smbd_sock_stats *st);
void smbd_sock_retire(struct smbd_sock *sk);
bool smbd_retired_get(const char *name, struct smbd_retired *r);
bool smbd_sock_addrs_try(struct smbd_sock *sk, struct sockaddr_storage *src,
			 struct sockaddr_storage *dst);
bool smbd_set_state(struct smbd_sock *sk, enum smbd_state state);
const char *smbd_state_name(enum smbd_state state);
void smbd_sock_error(struct smbd_sock *sk, int err);
void smbd_sock_wake(struct smbd_sock *sk);
void smbd_wr_failed(struct smbd_sock *sk, enum ib_wc_status status,
		    const char *what);
void smbd_event_work(struct work_struct *work);
void smbd_neg_expired(struct smbd_sock *sk);
void smbd_neg_timeout(struct work_struct *work);
void smbd_established(struct smbd_sock *sk);

/* smbd_debugfs.c */
void smbd_debugfs_init(struct dentry *root);
void smbd_debugfs_sock_add(struct smbd_sock *sk);
/* smbd_netlink.c */
int smbd_nl_init(void);
void smbd_nl_exit(void);
void smbd_debugfs_sock_del(struct smbd_sock *sk);

/* smbd_dev.c */
struct dentry;
bool smbd_dev_get(struct ib_device *ibdev, struct smbd_device *sd);

/**
 * struct smbd_dev_info - what netlink tells of a device
 * @rec: a copy of smbd's record of it (not to follow @rec.sd_ibdev)
 * @name: the device's name
 * @netdev: its first port's interface, "" when it has none
 * @index: the device's index, as rdma(8) shows it
 */
struct smbd_dev_info {
	struct smbd_device rec;
	char name[IB_DEVICE_NAME_MAX];
	char netdev[IFNAMSIZ];
	u32 index;
};

int smbd_dev_info_at(struct net *net, u32 pos, struct smbd_dev_info *di);
typedef int (*smbd_netdev_walk_fn)(void *arg, const struct smbd_device *sd,
				   struct net_device *via);
int smbd_netdev_walk(struct net_device *netdev, smbd_netdev_walk_fn fn,
		     void *arg);

/* smbd_profile.c */
u32 smbd_profile_count(void);
const struct smbd_profile *smbd_profile_at(u32 i);
const char *smbd_cap_name(enum smbd_cap_id cap);
u32 smbd_cap_get(const struct smbd_device *sd, enum smbd_cap_id cap);
int smbd_profile_parse(char *buf, struct smbd_profile *prof);
void smbd_profile_apply(const struct smbd_profile *prof,
			struct smbd_device *sd);
u32 smbd_rw_chunk_bytes(u32 frmr_pages);
u32 smbd_rw_read_chunk_bytes(const struct smbd_device *sd);
u32 smbd_rw_wrs(const struct smbd_device *sd, u32 qp_sge);
const char *smbd_dev_short(const struct smbd_device *sd, u32 *have,
			   u32 *need);
int smbd_dev_init(struct dentry *root,
		  void (*dead)(struct ib_device *ibdev, bool quiesce),
		  void (*link_up)(struct ib_device *ibdev, u32 port));
void smbd_dev_exit(void);

/* smbd_ep.c: the endpoint */
struct smbd_sock *smbd_sock_alloc(struct net *net,
				  const struct smbd_params *params,
				  bool responder);
void smbd_sock_free(struct smbd_sock *sk);
int smbd_qp_create(struct smbd_sock *sk, struct rdma_cm_id *id);
void smbd_ep_undo(struct smbd_sock *sk, struct rdma_cm_id *id);
void smbd_verbs_teardown(struct smbd_sock *sk, struct rdma_cm_id *id,
			 bool disconnect);
void smbd_neg_probe_work(struct work_struct *work);
void smbd_neg_probe_done(struct ib_cq *cq, struct ib_wc *wc);

/* smbd_cm.c: the connection manager handler */
struct rdma_cm_id *smbd_cm_detach(struct smbd_sock *sk,
				  struct rdma_cm_id *id);
int smbd_cm_handler(struct rdma_cm_id *id, struct rdma_cm_event *event);
int smbd_listen_port(struct net *net, const struct sockaddr *addr);
bool smbd_dev_class_ok(const struct smbd_params *p, struct rdma_cm_id *id);

#if IS_ENABLED(CONFIG_KUNIT)
/* smbd_ep.c, smbd_cm.c */
int smbd_ep_fake_attach(struct smbd_sock *sk, const struct smbd_fake_ep *ep);
int smbd_ep_fake_start(struct smbd_sock *sk, const struct smbd_fake_ep *ep);
int smbd_ep_fake_established(struct smbd_sock *sk);
/* smbd_sock.c */
int smbd_sock_fake_listen(struct smbd_sock *sk, const struct smbd_fake_qp *fake,
			  int backlog);
#endif

/* smbd_params.c: the module parameters read outside smbd_params_init() */
enum ib_poll_context smbd_cq_poll_context(void);
u32 smbd_posted_write_max(void);
unsigned int smbd_max_negotiating(void);

/* smbd_qp.c: the one post path, the gate and the fence (posted work) */

/**
 * enum smbd_post_how - how a post to the send queue is kept from the
 *	teardown's drain (Documentation/smbd.rst, "Posted work")
 * @SMBD_POST_GATE: smbd_post() passes the gate itself: for a thread that
 *	nothing else keeps out (a registration)
 * @SMBD_POST_ENTERED: the caller passed the gate (it counted itself in
 *	ss_ep.posting) and leaves it with smbd_post_leave(): an op, a posted
 *	RDMA Write, the fence's marker
 * @SMBD_POST_LOCKED: the caller holds ss_lock, under which the gate is
 *	checked here: a negotiation message, the negotiation probe
 * @SMBD_POST_SENDER: the caller holds ss_send_mutex, which the teardown
 *	takes before it closes the gate: the send engine
 */
enum smbd_post_how {
	SMBD_POST_GATE,
	SMBD_POST_ENTERED,
	SMBD_POST_LOCKED,
	SMBD_POST_SENDER,
};

int smbd_post(struct smbd_sock *sk, struct ib_send_wr *first,
	      const struct ib_send_wr **bad, enum smbd_post_how how);
int smbd_post_marker(struct smbd_sock *sk, struct ib_send_wr *wr,
		     enum smbd_post_how how);
int smbd_post_recv(struct smbd_sock *sk, struct ib_recv_wr *first,
		   const struct ib_recv_wr **bad);
void smbd_post_leave(struct smbd_sock *sk);
enum ib_wc_status smbd_wc_begin(struct ib_cq *cq, struct ib_wc *wc,
				bool exact);
bool smbd_qp_fence_start(struct smbd_sock *sk);
void smbd_qp_fence(struct smbd_sock *sk);
void smbd_qp_close(struct smbd_sock *sk);

/* A KUnit suite's fake endpoint, if the socket has one (else NULL). */
static inline const struct smbd_fake_qp *smbd_fake(const struct smbd_sock *sk)
{
#if IS_ENABLED(CONFIG_KUNIT)
	return sk->ss_ep.fake;
#else
	return NULL;
#endif
}

#if IS_ENABLED(CONFIG_KUNIT)
int smbd_qp_post(struct smbd_sock *sk, const struct ib_send_wr *first,
		 const struct ib_send_wr **bad);
#endif

/*
 * Every completion of the queue pair has run (ib_drain_qp()). Not on a
 * dead device: it completes nothing more of its own, and refuses the
 * drain's posts (mlx4: ib_core warns) or answers them itself (mlx5).
 * Returns false when it did not drain.
 */
static inline bool smbd_qp_drain(struct smbd_sock *sk)
{
	if (READ_ONCE(sk->ss_ep.dead))
		return false;
	if (smbd_fake(sk))
		smbd_fake(sk)->drain(sk);
	else
		ib_drain_qp(sk->ss_ep.qp);
	return true;
}

/*
 * Before a release frees the socket: a device removal that took its id
 * touches the socket until it has let the teardown mutex go, and
 * mutex_unlock() may still use a mutex another task has taken since.
 */
static inline void smbd_ep_wait_removal(struct smbd_sock *sk)
{
	if (READ_ONCE(sk->ss_ep.removed))
		wait_for_completion(&sk->ss_ep.removal_done);
}

/* The socket's connection manager id, detached from it, goes. */
static inline void smbd_ep_destroy_id(struct smbd_sock *sk,
				      struct rdma_cm_id *id)
{
	if (smbd_fake(sk))
		smbd_fake(sk)->destroy_id(sk, id);
	else
		rdma_destroy_id(id);
}

/* Accept a connection request on @id (rdma_accept()); a fake's is taken. */
static inline int smbd_ep_accept(struct smbd_sock *sk, struct rdma_cm_id *id,
				 struct rdma_conn_param *cp)
{
	if (smbd_fake(sk))
		return 0;
	return rdma_accept(id, cp);
}

/* Tell the peer (rdma_disconnect() on @id, if there is one). */
static inline void smbd_ep_disconnect(struct smbd_sock *sk,
				      struct rdma_cm_id *id)
{
	if (smbd_fake(sk))
		smbd_fake(sk)->disconnect(sk);
	else if (id)
		rdma_disconnect(id);
}

/* smbd_op.c: threads that post and wait */
struct smbd_op *smbd_op_start(struct smbd_sock *sk, bool connected,
			      gfp_t gfp);
void smbd_op_post(struct smbd_sock *sk, struct smbd_op *op,
		  struct ib_send_wr *first);
int smbd_op_wait(struct smbd_sock *sk, struct smbd_op *op);
void smbd_op_end(struct smbd_sock *sk, struct smbd_op *op);
void smbd_ops_abandon(struct smbd_sock *sk);
void smbd_ops_abort(struct smbd_sock *sk);
void smbd_ops_free_orphans(struct smbd_sock *sk);
void smbd_ops_take_orphans(struct smbd_sock *sk, struct list_head *to);
void smbd_ops_free_list(struct list_head *ops);

/* smbd_inject.c: fault injection (compiled out without the kernel's) */
enum smbd_fail_point_id {
	SMBD_FAIL_POST,
	SMBD_FAIL_DMA,
	SMBD_FAIL_MR,
	SMBD_FAIL_WC,
	SMBD_FAIL_CORRUPT_READ,
	SMBD_FAIL_CORRUPT_WRITE,
	SMBD_FAIL_NR,
};

#ifdef CONFIG_FAULT_INJECTION
bool smbd_should_fail(enum smbd_fail_point_id point);
#else
/* smbd's own corrupt points; the others are compiled out */
bool smbd_should_corrupt(enum smbd_fail_point_id point);
static inline bool smbd_should_fail(enum smbd_fail_point_id point)
{
	return (point == SMBD_FAIL_CORRUPT_READ ||
		point == SMBD_FAIL_CORRUPT_WRITE) && smbd_should_corrupt(point);
}
#endif
void smbd_corrupt_byte(const struct iov_iter *it, size_t len);
void smbd_inject_init(struct dentry *root);
u32 smbd_fail_post_keep(u32 n);
void smbd_wc_trace(struct ib_cq *cq, const struct ib_wc *wc);

/* smbd_mr.c: memory registration */
int smbd_mr_alloc(struct smbd_sock *sk);
void smbd_mr_free(struct smbd_sock *sk);
void smbd_mr_release(struct smbd_sock *sk);
void smbd_reg_remote_inv(struct smbd_sock *sk, u32 rkey);

/* smbd_rw.c: the completion of an RDMA Write posted unwaited */
void smbd_wslot_done(struct ib_cq *cq, struct ib_wc *wc);

/* smbd_xfer.c: the buffers, their copy-buffer lending, receive posts */
int smbd_xfer_split(struct smbd_sock *sk);
int smbd_xfer_alloc(struct smbd_sock *sk,
		    void (*recv_done)(struct ib_cq *cq, struct ib_wc *wc),
		    void (*send_done)(struct ib_cq *cq, struct ib_wc *wc));
void smbd_xfer_free(struct smbd_sock *sk);
void smbd_wslots_alloc(struct smbd_sock *sk, u32 len);
bool smbd_space_locked(struct smbd_sock *sk, bool copy);
int smbd_post_negotiate_recv(struct smbd_sock *sk);
int smbd_post_recvs(struct smbd_sock *sk, bool send_queued);
u32 smbd_tx_room(const struct smbd_sock *sk, const struct smbd_send_ctx *tx);
void smbd_tx_lend_copy_locked(struct smbd_sock *sk, struct smbd_send_ctx *tx);
void smbd_tx_put_locked(struct smbd_sock *sk, struct smbd_send_ctx *tx);
void smbd_rx_part_free(struct smbd_sock *sk);

/* smbd_recv.c: receive completions */
void smbd_recv_done(struct ib_cq *cq, struct ib_wc *wc);

/* smbd_send.c: the send engine */
/* Send requests posted per chain; only the last is signalled (not on siw). */
#define SMBD_SEND_BATCH	16

ssize_t smbd_send_msg(struct smbd_sock *sk, struct iov_iter *parts,
		      u32 nparts, struct smbd_send_wait *w, const u32 *inv,
		      bool nonblock, bool empty);
void smbd_send_done(struct ib_cq *cq, struct ib_wc *wc);
int smbd_send_negotiate_locked(struct smbd_sock *sk, const void *pdu,
			       u32 len);
int smbd_send_negotiate(struct smbd_sock *sk, const void *pdu, u32 len);
void smbd_tx_unmap(struct smbd_sock *sk, struct smbd_send_ctx *tx);
void smbd_tx_wait_put(struct smbd_send_wait *w, int err);
void smbd_tx_abandon(struct smbd_sock *sk);
void smbd_tx_release(struct smbd_sock *sk);
u32 smbd_tx_map(struct smbd_sock *sk, struct smbd_send_ctx *tx,
		struct iov_iter *parts, u32 nparts, u32 *cur, u32 hdr_len,
		u32 len);
u32 smbd_tx_copy(struct smbd_sock *sk, struct smbd_send_ctx *tx,
		 struct iov_iter *parts, u32 nparts, u32 *cur, u32 len);

/* smbd_write.c: the writers' side */
bool smbd_send_empty(struct smbd_sock *sk);
void smbd_write_space(struct smbd_sock *sk);
void smbd_owe_write_space(struct smbd_sock *sk);
void smbd_grant_work(struct work_struct *work);
void smbd_ka_work(struct work_struct *work);

/*
 * A keep-alive needs a message now: the peer's RESPONSE_REQUESTED is not
 * answered yet ([MS-SMBD] 3.1.5.8), or our own request waits for a
 * message to carry it (3.1.5.1, 3.1.6.2). Caller holds ss_lock.
 */
static inline bool smbd_ka_msg_due(struct smbd_sock *sk)
{
	lockdep_assert_held(&sk->ss_lock);
	return sk->ss_ka.reply_due || sk->ss_ka.state == SMBD_KA_PENDING;
}

/* The keep-alive clock ([MS-SMBD] 3.1.6.2): jiffies, in ms. */
static inline u64 smbd_now_ms(void)
{
	return jiffies64_to_msecs(get_jiffies_64());
}

/*
 * The bytes a work request gathers: siw sends one of ss_ep.tx_sig_bytes or
 * more from the pages themselves, so such a request is signalled.
 */
static inline u32 smbd_wr_bytes(const struct ib_send_wr *wr)
{
	u32 bytes = 0;
	int i;

	for (i = 0; i < wr->num_sge; i++)
		bytes += wr->sg_list[i].length;
	return bytes;
}

/*
 * How many entries of a scatter list of @max the next @len bytes of @it
 * fill: the pages they span, which iov_iter_npages() caps at @max (or
 * @max where it cannot tell). Initialising only those keeps a 4 KiB I/O
 * from clearing a list sized for the largest one, and a 256 KiB piece of
 * a 1 MiB transfer from clearing the whole transfer's (sg_init_table()
 * showed in the 4 KiB and 1 MiB profiles).
 */
static inline u32 smbd_sg_entries(const struct iov_iter *it, size_t len,
				  u32 max)
{
	struct iov_iter part = *it;
	u32 n;

	iov_iter_truncate(&part, len);
	n = iov_iter_npages(&part, max);
	return n ?: max;
}

/*
 * Put @len bytes at @off of @page after the @nents entries of @sgl: into
 * the last one where the page follows it in physical memory and the entry
 * stays within @lim (its bytes, and its boundary: an entry crossing it
 * would be one segment the device cannot take), else into a new one.
 * Returns the entries in use. A buffer that is contiguous (a kmalloc()ed
 * one, say) then goes to the device as a few long gather entries, not one
 * per page: an RDMA Write of 256 KiB is one work request instead of
 * ceil(64 / max_sge).
 */
static inline u32 smbd_sg_add(struct scatterlist *sgl, u32 nents,
			      struct page *page, u32 off, u32 len,
			      const struct smbd_sg_limit *lim)
{
	if (nents) {
		struct scatterlist *last = &sgl[nents - 1];
		unsigned long pfn = page_to_pfn(sg_page(last));
		u32 end = last->offset + last->length;
		u64 grown = (u64)last->length + len;
		u64 start = PFN_PHYS(pfn) + last->offset;

		if (!off && PAGE_ALIGNED(end) && grown <= lim->max &&
		    !((start ^ (start + grown - 1)) & ~(u64)lim->boundary) &&
		    pfn + end / PAGE_SIZE == page_to_pfn(page)) {
			last->length += len;
			return nents;
		}
	}
	sg_set_page(&sgl[nents], page, len, off);
	return nents + 1;
}

#endif /* _SMBD_INTERNAL_H */

// SPDX-License-Identifier: GPL-2.0
/*
 * smbd: the data path's buffers ([MS-SMBD] 3.1.4.1, 3.1.5.9).
 *
 * The layer under smbd_recv.c, smbd_send.c and smbd_read.c: it owns the
 * send and receive contexts, their slots and the copy buffers (lent to a
 * send by smbd_tx_lend_copy_locked(), returned by smbd_tx_put_locked()),
 * and posts the receives.
 *
 * Buffer ownership
 *   Every buffer is allocated and DMA-mapped once, when the queue pair is
 *   created, and unmapped when it is destroyed. Negotiation may lay the
 *   receive and copy buffers out again, larger and fewer, in the same
 *   mapped chunks (smbd_xfer_split()), before any of them is posted. A
 *   receive context is on the receive queue, on ss_rx.ready (holding
 *   data for the consumer) or on ss_rx.free. A send context is on
 *   ss_tx.free or in flight; a signalled one owns the unsignalled ones
 *   posted before it (since the previous signalled one) and returns them
 *   all on its completion.
 *
 * Posting receives
 *   Receives are posted in one chained post, only as many as the credit
 *   state wants (smbd_cred_recv_wanted()), and only those really posted
 *   are counted ([MS-SMBD] 3.1.5.9).
 *
 * Copies
 *   smbd_tx_map() and smbd_tx_copy() build the gather list of one
 *   segment: the header in the context's pre-mapped slot, then the
 *   payload's pages mapped for the device (zero-copy), or copied right
 *   after the header when the sender asked for a copy, the memory is the
 *   user's, or the segment needs more gather entries than the device has.
 *   A copy larger than the slot goes to a copy buffer the send borrows
 *   (smbd_tx_lend_copy_locked()) and gives back with its context
 *   (smbd_tx_put_locked()). Sends are serialised by ss_send_mutex, so
 *   only the sender and the sends it posted hold copy buffers, and a
 *   sender that finds none free posts what it filled before it waits.
 */

#include <kunit/visibility.h>
#include <linux/cache.h>
#include <linux/dma-mapping.h>
#include <linux/errno.h>
#include <linux/slab.h>
#include <linux/uio.h>
#include <rdma/ib_verbs.h>

#include "smbd_internal.h"

/* The size of each copy buffer: a whole send, the largest negotiated. */
static u32 smbd_copy_len(const struct smbd_sock *sk)
{
	return sk->ss_tx.copy_len;
}

/* A buffer's size laid out in a chunk: aligned for the CPU and for DMA. */
static u32 smbd_stride(u32 size)
{
	return ALIGN(size, max_t(u32, L1_CACHE_BYTES,
				 dma_get_cache_alignment()));
}

/* The largest chunk: the costliest order the page allocator still favours. */
#define SMBD_CHUNK_MAX	(PAGE_SIZE << PAGE_ALLOC_COSTLY_ORDER)

/* Chunk @c's length as allocated and mapped, whatever the buffers now. */
static u32 smbd_bufs_chunk_len(const struct smbd_bufs *b, u32 c)
{
	return min(b->chunk_len, b->total - c * b->chunk_len);
}

/*
 * Allocate and map @n zeroed buffers of @size bytes in chunks. On failure
 * what was made stays recorded for smbd_bufs_free().
 */
static int smbd_bufs_alloc(struct smbd_sock *sk, struct smbd_bufs *b, u32 n,
			   u32 size, enum dma_data_direction dir)
{
	struct ib_device *dev = sk->ss_ep.ibdev;
	int node = ibdev_to_node(dev);
	u32 nchunks;

	b->dir = dir;
	b->n = n;
	b->stride = smbd_stride(size);
	b->per_chunk = max_t(u32, 1, SMBD_CHUNK_MAX / b->stride);
	b->chunk_len = b->per_chunk * b->stride;
	b->total = n * b->stride;
	nchunks = DIV_ROUND_UP(n, b->per_chunk);
	b->chunk = kcalloc_node(nchunks, sizeof(*b->chunk), GFP_KERNEL, node);
	b->dma = kcalloc_node(nchunks, sizeof(*b->dma), GFP_KERNEL, node);
	if (!b->chunk || !b->dma)
		return -ENOMEM;
	while (b->nchunks < nchunks) {
		u32 len = smbd_bufs_chunk_len(b, b->nchunks);
		/* Zeroed: no stale heap bytes can reach the wire. */
		void *p = kzalloc_node(len, GFP_KERNEL, node);
		u64 dma;

		if (!p)
			return -ENOMEM;
		dma = ib_dma_map_single(dev, p, len, dir);
		if (ib_dma_mapping_error(dev, dma)) {
			kfree(p);
			return -ENOMEM;
		}
		b->chunk[b->nchunks] = p;
		b->dma[b->nchunks++] = dma;
	}
	return 0;
}

static void smbd_bufs_free(struct smbd_sock *sk, struct smbd_bufs *b)
{
	u32 c;

	for (c = 0; c < b->nchunks; c++) {
		ib_dma_unmap_single(sk->ss_ep.ibdev, b->dma[c],
				    smbd_bufs_chunk_len(b, c), b->dir);
		kfree(b->chunk[c]);
	}
	kfree(b->chunk);
	kfree(b->dma);
	memset(b, 0, sizeof(*b));
}

/*
 * How many buffers of @size bytes @b's chunks hold: the count it would
 * have after smbd_bufs_cut().
 */
static u32 smbd_bufs_fit(const struct smbd_bufs *b, u32 size)
{
	return smbd_split_count(b->chunk_len, b->total, smbd_stride(size));
}

/*
 * Lay @b's chunks out again as the @n buffers of @size bytes that
 * smbd_bufs_fit() found room for; the chunks stay mapped as they were.
 */
static void smbd_bufs_cut(struct smbd_bufs *b, u32 size, u32 n)
{
	b->stride = smbd_stride(size);
	b->per_chunk = b->chunk_len / b->stride;
	b->n = n;
}

/* Buffer @i of @b, and its DMA address in *@dma. */
static void *smbd_buf(const struct smbd_bufs *b, u32 i, u64 *dma)
{
	u32 c = i / b->per_chunk, off = (i % b->per_chunk) * b->stride;

	*dma = b->dma[c] + off;
	return b->chunk[c] + off;
}

/* Point @tx at its own slot: where its header goes when it borrows none. */
static void smbd_tx_use_slot(struct smbd_sock *sk, struct smbd_send_ctx *tx)
{
	tx->tx_copy = NULL;
	tx->tx_buf = smbd_buf(&sk->ss_tx.slots, tx - sk->ss_tx.ctxs,
			      &tx->tx_dma);
	tx->tx_sge[0].addr = tx->tx_dma;
}

/**
 * smbd_tx_room() - how much payload a send context can take copied
 * @sk: the socket
 * @tx: a send context taken from ss_tx.free
 *
 * Context: any.
 * Return: the bytes after the header in the context's slot, or in the
 * copy buffer it borrowed.
 */
u32 smbd_tx_room(const struct smbd_sock *sk, const struct smbd_send_ctx *tx)
{
	return (tx->tx_copy ? smbd_copy_len(sk) : SMBD_TX_SLOT) -
	       SMBD_DATA_OFFSET;
}

/**
 * smbd_tx_lend_copy_locked() - give a send a copy buffer
 * @sk: the socket, with a copy buffer free
 * @tx: a send context taken from ss_tx.free that has none; its header
 *	is (re)written to the buffer after this
 *
 * Context: any; caller holds @sk->ss_lock.
 */
void smbd_tx_lend_copy_locked(struct smbd_sock *sk, struct smbd_send_ctx *tx)
{
	struct smbd_copy_buf *cb;

	lockdep_assert_held(&sk->ss_lock);
	cb = list_first_entry(&sk->ss_tx.copy_free, struct smbd_copy_buf,
			      cb_node);
	list_del(&cb->cb_node);
	sk->ss_tx.copy_free_count--;
	tx->tx_copy = cb;
	tx->tx_buf = cb->cb_buf;
	tx->tx_dma = cb->cb_dma;
	tx->tx_sge[0].addr = cb->cb_dma;
}

/**
 * smbd_tx_put_locked() - return a send context, and its copy buffer
 * @sk: the socket
 * @tx: a context no longer on the queue pair nor in a sender's hands
 *
 * Context: any; caller holds @sk->ss_lock.
 */
void smbd_tx_put_locked(struct smbd_sock *sk, struct smbd_send_ctx *tx)
{
	lockdep_assert_held(&sk->ss_lock);
	if (tx->tx_copy) {
		list_add(&tx->tx_copy->cb_node, &sk->ss_tx.copy_free);
		sk->ss_tx.copy_free_count++;
		smbd_tx_use_slot(sk, tx);
	}
	list_add(&tx->tx_node, &sk->ss_tx.free);
	sk->ss_tx.free_count++;
}

/* Put the first @n receive contexts on ss_rx.free, on @sk's buffers. */
static void smbd_rx_lay_out(struct smbd_sock *sk, u32 n, u32 len)
{
	u32 i;

	INIT_LIST_HEAD(&sk->ss_rx.free);
	for (i = 0; i < n; i++) {
		struct smbd_recv_ctx *rx = &sk->ss_rx.ctxs[i];

		rx->rx_len = len;
		rx->rx_buf = smbd_buf(&sk->ss_rx.bufs, i, &rx->rx_dma);
		rx->rx_sge.addr = rx->rx_dma;
		rx->rx_sge.length = len;
		list_add_tail(&rx->rx_node, &sk->ss_rx.free);
	}
	sk->ss_rx.nr = n;
}

/* Put the first @n copy buffers on ss_tx.copy_free, each of @len bytes. */
static void smbd_copy_lay_out(struct smbd_sock *sk, u32 n, u32 len)
{
	u32 i;

	INIT_LIST_HEAD(&sk->ss_tx.copy_free);
	for (i = 0; i < n; i++) {
		struct smbd_copy_buf *cb = &sk->ss_tx.copy[i];

		cb->cb_buf = smbd_buf(&sk->ss_tx.copy_bufs, i, &cb->cb_dma);
		list_add_tail(&cb->cb_node, &sk->ss_tx.copy_free);
	}
	sk->ss_tx.nr_copy = n;
	sk->ss_tx.copy_free_count = n;
	sk->ss_tx.copy_len = len;
}

/**
 * smbd_wslots_alloc() - a responder's slots for small RDMA Writes
 * @sk: a socket whose queue pair was just created
 * @len: bytes of each slot (the posted_write_max parameter); 0 for none
 *
 * %SMBD_WSLOTS slots, mapped once (smbd_rw.c posts from them). They are
 * an optimisation: without the memory, or on an initiator, every write
 * is waited for. smbd_xfer_free() frees them.
 *
 * Context: process; may sleep.
 */
void smbd_wslots_alloc(struct smbd_sock *sk, u32 len)
{
	int node = ibdev_to_node(sk->ss_ep.ibdev);
	u32 i;

	if (!sk->ss_responder || !len)
		return;
	sk->ss_rdma.wslots = kcalloc_node(SMBD_WSLOTS,
					  sizeof(*sk->ss_rdma.wslots),
					  GFP_KERNEL, node);
	if (!sk->ss_rdma.wslots ||
	    smbd_bufs_alloc(sk, &sk->ss_rdma.wslot_bufs, SMBD_WSLOTS, len,
			    DMA_TO_DEVICE)) {
		smbd_bufs_free(sk, &sk->ss_rdma.wslot_bufs);
		kfree(sk->ss_rdma.wslots);
		sk->ss_rdma.wslots = NULL;
		return;
	}
	for (i = 0; i < SMBD_WSLOTS; i++) {
		struct smbd_wslot *ws = &sk->ss_rdma.wslots[i];
		u64 dma;

		smbd_cqe_init(sk, &ws->ws_cqe, SMBD_WC_WSLOT, smbd_wslot_done);
		ws->ws_buf = smbd_buf(&sk->ss_rdma.wslot_bufs, i, &dma);
		ws->ws_sge.addr = dma;
		ws->ws_sge.lkey = sk->ss_ep.pd->local_dma_lkey;
		ws->ws_wr.wr.wr_cqe = &ws->ws_cqe.cqe;
		ws->ws_wr.wr.sg_list = &ws->ws_sge;
		ws->ws_wr.wr.num_sge = 1;
		ws->ws_wr.wr.opcode = IB_WR_RDMA_WRITE;
		ws->ws_wr.wr.send_flags = IB_SEND_SIGNALED;
		list_add_tail(&ws->ws_node, &sk->ss_rdma.wslot_free);
	}
	sk->ss_rdma.wslot_len = len;
}
EXPORT_SYMBOL_IF_KUNIT(smbd_wslots_alloc);

/*
 * The large size to offer: no more than one send can gather from pages
 * wherever a segment starts in them (the header takes one gather entry
 * and smbd_tx_copy() keeps one, so a payload spans at most tx_sge - 2
 * pages), for a blocking send of page vectors stays zero-copy; and only
 * if the buffers can be cut for it once it is negotiated:
 * %SMBD_SPLIT_MIN_RECVS receives of it, and a copy buffer.
 */
static void smbd_xfer_check_offer(struct smbd_sock *sk, u32 rx_len)
{
	struct smbd_params *p = &sk->ss_params;
	u32 gather = sk->ss_ep.tx_sge > 3 ?
		     (sk->ss_ep.tx_sge - 3) * PAGE_SIZE : 0;

	p->large_size = min(p->large_size, gather);
	if (p->large_size > rx_len &&
	    smbd_bufs_fit(&sk->ss_rx.bufs, p->large_size) <
	    SMBD_SPLIT_MIN_RECVS)
		p->large_size = 0;
	if (p->large_size > sk->ss_tx.copy_len &&
	    !smbd_bufs_fit(&sk->ss_tx.copy_bufs, p->large_size))
		p->large_size = 0;
}

/**
 * smbd_xfer_alloc() - allocate and map the send and receive buffers
 * @sk: a socket whose queue pair was just created
 * @recv_done: the receive completion handler
 * @send_done: the send completion handler
 *
 * Receive buffers hold MaxReceiveSize bytes and at least the 512 bytes
 * [MS-SMBD] 3.1.4.1/3.1.7.2 require for the negotiate receive. Whether
 * the socket can offer its large size is decided here, from the memory
 * just allocated; smbd_xfer_split() cuts it once negotiation is done.
 *
 * Context: process; may sleep.
 * Return: 0 or -ENOMEM.
 */
int smbd_xfer_alloc(struct smbd_sock *sk,
		    void (*recv_done)(struct ib_cq *cq, struct ib_wc *wc),
		    void (*send_done)(struct ib_cq *cq, struct ib_wc *wc))
{
	u32 rx_len = max_t(u32, sk->ss_params.max_recv_size,
			   SMBD_NEGOTIATE_RECV_SIZE);
	int node = ibdev_to_node(sk->ss_ep.ibdev);
	u32 i, j;

	sk->ss_tx.nr_copy = sk->ss_params.copy_buffers ?: sk->ss_tx.nr / 4;
	sk->ss_tx.nr_copy = clamp_t(u32, sk->ss_tx.nr_copy, 1, sk->ss_tx.nr);
	sk->ss_tx.copy_len = sk->ss_params.max_send_size;
	sk->ss_rx.ctxs = kcalloc_node(sk->ss_rx.nr, sizeof(*sk->ss_rx.ctxs),
				      GFP_KERNEL, node);
	sk->ss_tx.ctxs = kcalloc_node(sk->ss_tx.nr, sizeof(*sk->ss_tx.ctxs),
				      GFP_KERNEL, node);
	sk->ss_tx.copy = kcalloc_node(sk->ss_tx.nr_copy,
				      sizeof(*sk->ss_tx.copy), GFP_KERNEL,
				      node);
	if (!sk->ss_rx.ctxs || !sk->ss_tx.ctxs || !sk->ss_tx.copy ||
	    smbd_bufs_alloc(sk, &sk->ss_rx.bufs, sk->ss_rx.nr, rx_len,
			    DMA_FROM_DEVICE) ||
	    smbd_bufs_alloc(sk, &sk->ss_tx.slots, sk->ss_tx.nr, SMBD_TX_SLOT,
			    DMA_TO_DEVICE) ||
	    smbd_bufs_alloc(sk, &sk->ss_tx.copy_bufs, sk->ss_tx.nr_copy,
			    smbd_copy_len(sk), DMA_TO_DEVICE)) {
		smbd_xfer_free(sk);
		return -ENOMEM;
	}
	smbd_xfer_check_offer(sk, rx_len);

	for (i = 0; i < sk->ss_rx.nr; i++) {
		struct smbd_recv_ctx *rx = &sk->ss_rx.ctxs[i];

		rx->rx_sk = sk;
		smbd_cqe_init(sk, &rx->rx_cqe, SMBD_WC_RECV, recv_done);
		rx->rx_sge.lkey = sk->ss_ep.pd->local_dma_lkey;
		rx->rx_wr.wr_cqe = &rx->rx_cqe.cqe;
		rx->rx_wr.sg_list = &rx->rx_sge;
		rx->rx_wr.num_sge = 1;
	}
	smbd_rx_lay_out(sk, sk->ss_rx.nr, rx_len);
	for (i = 0; i < sk->ss_tx.nr; i++) {
		struct smbd_send_ctx *tx = &sk->ss_tx.ctxs[i];

		tx->tx_sk = sk;
		smbd_cqe_init(sk, &tx->tx_cqe, SMBD_WC_SEND, send_done);
		INIT_LIST_HEAD(&tx->tx_batch);
		for (j = 0; j < SMBD_TX_SGE_MAX; j++)
			tx->tx_sge[j].lkey = sk->ss_ep.pd->local_dma_lkey;
		smbd_tx_use_slot(sk, tx);
		tx->tx_wr.wr_cqe = &tx->tx_cqe.cqe;
		tx->tx_wr.sg_list = tx->tx_sge;
		tx->tx_wr.num_sge = 1;
		tx->tx_wr.opcode = IB_WR_SEND;
		list_add_tail(&tx->tx_node, &sk->ss_tx.free);
		sk->ss_tx.free_count++;
	}
	smbd_copy_lay_out(sk, sk->ss_tx.nr_copy, smbd_copy_len(sk));
	smbd_wslots_alloc(sk, smbd_posted_write_max());
	return 0;
}

/**
 * smbd_xfer_split() - cut the buffers for the sizes just negotiated
 * @sk: a socket whose negotiation succeeded a moment ago: no receive is
 *	posted and no copy buffer lent
 *
 * Where the peer took the large size we offered (another smbd), the same
 * receive memory is laid out again as fewer receives of the negotiated
 * MaxReceiveSize, and ReceiveCreditMax becomes their count ([MS-SMBD]
 * 3.1.5.9 counts only receives really posted, so the credits we grant
 * follow); likewise the copy buffers for MaxSendSize. A peer that offered
 * no more than we made (every stock one) leaves both as they are. The
 * chunks stay mapped as allocated: smbd_xfer_free() unmaps them by their
 * own lengths.
 *
 * Context: any; caller holds @sk->ss_lock.
 * Return: 0, or -EPROTO if the buffers cannot hold the sizes (a bug:
 * smbd_xfer_alloc() offered only what they can).
 */
int smbd_xfer_split(struct smbd_sock *sk)
{
	u32 recv = sk->ss_neg.max_recv_size, send = sk->ss_neg.max_send_size;
	u32 n;

	lockdep_assert_held(&sk->ss_lock);
	if (recv > sk->ss_rx.ctxs[0].rx_len) {
		n = smbd_bufs_fit(&sk->ss_rx.bufs, recv);
		if (WARN_ON_ONCE(!n || n > sk->ss_rx.nr))
			return -EPROTO;
		smbd_bufs_cut(&sk->ss_rx.bufs, recv, n);
		smbd_rx_lay_out(sk, n, recv);
		sk->ss_params.recv_credit_max = n;
	}
	if (send > smbd_copy_len(sk)) {
		if (WARN_ON_ONCE(sk->ss_tx.copy_free_count != sk->ss_tx.nr_copy))
			return -EPROTO;
		n = smbd_bufs_fit(&sk->ss_tx.copy_bufs, send);
		if (WARN_ON_ONCE(!n || n > sk->ss_tx.nr_copy))
			return -EPROTO;
		smbd_bufs_cut(&sk->ss_tx.copy_bufs, send, n);
		smbd_copy_lay_out(sk, n, send);
	}
	return 0;
}

/**
 * smbd_xfer_free() - unmap and free the buffers
 * @sk: a socket whose queue pair is drained or was never used, its sends
 *	given up (smbd_tx_release())
 *
 * Context: process.
 */
void smbd_xfer_free(struct smbd_sock *sk)
{
	smbd_bufs_free(sk, &sk->ss_rx.bufs);
	smbd_bufs_free(sk, &sk->ss_tx.slots);
	smbd_bufs_free(sk, &sk->ss_tx.copy_bufs);
	/* A posted write's completion is seen, or none can come any more. */
	smbd_bufs_free(sk, &sk->ss_rdma.wslot_bufs);
	kfree(sk->ss_rdma.wslots);
	sk->ss_rdma.wslots = NULL;
	sk->ss_rdma.wslot_len = 0;
	INIT_LIST_HEAD(&sk->ss_rdma.wslot_free);
	kfree(sk->ss_rx.ctxs);
	kfree(sk->ss_tx.ctxs);
	kfree(sk->ss_tx.copy);
	/* The head of a message that never completed goes with the buffers. */
	smbd_rx_part_free(sk);
	sk->ss_rx.ctxs = NULL;
	sk->ss_tx.ctxs = NULL;
	sk->ss_tx.copy = NULL;
	INIT_LIST_HEAD(&sk->ss_rx.free);
	INIT_LIST_HEAD(&sk->ss_rx.ready);
	INIT_LIST_HEAD(&sk->ss_tx.free);
	INIT_LIST_HEAD(&sk->ss_tx.copy_free);
	sk->ss_tx.free_count = 0;
	sk->ss_tx.copy_free_count = 0;
}
EXPORT_SYMBOL_IF_KUNIT(smbd_xfer_free);

/**
 * smbd_space_locked() - could a send take a credit and a buffer now
 * @sk: the socket
 * @copy: a send that copies more than a slot holds, so needs a copy
 *	buffer too (any non-blocking send may: write_space asks with it)
 *
 * Context: any; caller holds @sk->ss_lock.
 * Return: true when connected with a free send context, a free copy
 * buffer if @copy, and a Send Credit that smbd_cred_send_begin() would
 * give.
 */
bool smbd_space_locked(struct smbd_sock *sk, bool copy)
{
	const struct smbd_credits *c = &sk->ss_cred;

	lockdep_assert_held(&sk->ss_lock);
	return sk->ss_state == SMBD_CONNECTED && sk->ss_tx.free_count &&
	       (!copy || sk->ss_tx.copy_free_count) &&
	       smbd_cred_can_send(c, !list_empty(&sk->ss_rx.free));
}

/*
 * Post up to @n free receive buffers in one chained post. Returns how
 * many were posted or a negative errno.
 */
static int smbd_post_recv_chain(struct smbd_sock *sk, u32 n)
{
	struct smbd_recv_ctx *rx, *prev = NULL, *first = NULL;
	const struct ib_recv_wr *bad;
	u32 i = 0;
	int ret;

	lockdep_assert_held(&sk->ss_lock);
	while (i < n && !list_empty(&sk->ss_rx.free)) {
		rx = list_first_entry(&sk->ss_rx.free, struct smbd_recv_ctx,
				      rx_node);
		list_del(&rx->rx_node);
		rx->rx_seq = ++sk->ss_rx.seq;
		rx->rx_wr.next = NULL;
		if (prev)
			prev->rx_wr.next = &rx->rx_wr;
		else
			first = rx;
		prev = rx;
		i++;
	}
	if (!i)
		return 0;
	ret = smbd_post_recv(sk, &first->rx_wr, &bad);
	if (!ret)
		return i;

	/* Buffers from @bad on were not posted. */
	for (rx = first, i = 0; &rx->rx_wr != bad; i++)
		rx = container_of(rx->rx_wr.next, struct smbd_recv_ctx, rx_wr);
	ret = i ? i : ret;
	while (rx) {
		struct ib_recv_wr *next = rx->rx_wr.next;

		list_add(&rx->rx_node, &sk->ss_rx.free);
		rx = next ? container_of(next, struct smbd_recv_ctx, rx_wr) :
			    NULL;
	}
	return ret;
}

/**
 * smbd_post_negotiate_recv() - the receive for the first message
 * @sk: a socket with a queue pair
 *
 * [MS-SMBD] 3.1.4.1, 3.1.7.2: at least 512 bytes, posted before the
 * connection can deliver anything; not counted as a credit.
 *
 * Context: process.
 * Return: 0 or a negative errno.
 */
int smbd_post_negotiate_recv(struct smbd_sock *sk)
{
	int ret;

	spin_lock_bh(&sk->ss_lock);
	ret = smbd_post_recv_chain(sk, 1);
	spin_unlock_bh(&sk->ss_lock);
	return ret == 1 ? 0 : (ret < 0 ? ret : -ENOMEM);
}

/**
 * smbd_post_recvs() - post the receives the credit state wants
 * @sk: a negotiated socket
 * @send_queued: a sender waits for a credit (the last-credit rule may
 *	need one more receive)
 *
 * [MS-SMBD] 3.1.5.9: only receives really posted are counted, so only
 * those are ever granted.
 *
 * Context: any; caller holds @sk->ss_lock.
 * Return: receives posted, or a negative errno (the queue pair failed).
 */
int smbd_post_recvs(struct smbd_sock *sk, bool send_queued)
{
	u16 want;
	int ret;

	lockdep_assert_held(&sk->ss_lock);
	want = smbd_cred_recv_wanted(&sk->ss_cred, send_queued);
	if (!want)
		return 0;
	ret = smbd_post_recv_chain(sk, want);
	if (ret > 0)
		smbd_cred_recv_posted(&sk->ss_cred, ret);
	return ret;
}

/**
 * smbd_rx_part_free() - drop the head of a message moved out of the buffers
 * @sk: the socket
 *
 * Context: process; caller holds ss_recv_mutex, or the socket is being
 * freed.
 */
void smbd_rx_part_free(struct smbd_sock *sk)
{
	kvfree(sk->ss_rx.part);
	sk->ss_rx.part = NULL;
	sk->ss_rx.part_len = 0;
	sk->ss_rx.part_size = 0;
}

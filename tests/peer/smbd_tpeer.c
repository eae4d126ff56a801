// SPDX-License-Identifier: GPL-2.0
/*
 * The raw-verbs test peer (tests/include/smbd_tpeer.h): connections over
 * rdma_cm with their own queue pair, buffers mapped once, completions on
 * a workqueue-polled CQ. Built into each test module that includes it.
 */
#include <linux/jiffies.h>
#include <linux/slab.h>

#include "../include/smbd_tpeer.h"

static void tpeer_recv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct tpeer_rx *rx = container_of(wc->wr_cqe, struct tpeer_rx, cqe);
	struct tpeer *p = rx->p;

	if (wc->status != IB_WC_SUCCESS) {
		/* A flush is the drain of our own teardown. */
		if (wc->status != IB_WC_WR_FLUSH_ERR) {
			WRITE_ONCE(p->disc, true);
			wake_up(&p->wait);
		}
		return;
	}
	ib_dma_sync_single_for_cpu(p->id->device, rx->dma, p->cfg.buf_size,
				   DMA_FROM_DEVICE);
	rx->len = wc->byte_len;
	spin_lock(&p->lock);
	list_add_tail(&rx->node, &p->ready);
	spin_unlock(&p->lock);
	wake_up(&p->wait);
}

static void tpeer_send_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct tpeer_tx *tx = container_of(wc->wr_cqe, struct tpeer_tx, cqe);
	struct tpeer *p = tx->p;

	if (wc->status != IB_WC_SUCCESS) {
		WRITE_ONCE(p->tx_err, -EIO);
		WRITE_ONCE(p->disc, true);
	}
	atomic_dec(&p->tx_busy);
	wake_up(&p->wait);
}

/**
 * tpeer_post_recv() - post receive buffer @rx of @p
 * @p: the connection
 * @rx: one of its receive buffers, not posted
 *
 * Return: 0 or the provider's error.
 */
int tpeer_post_recv(struct tpeer *p, struct tpeer_rx *rx)
{
	struct ib_sge sge = {
		.addr = rx->dma, .length = p->cfg.buf_size,
		.lkey = p->pd->local_dma_lkey,
	};
	struct ib_recv_wr wr = {
		.wr_cqe = &rx->cqe, .sg_list = &sge, .num_sge = 1,
	};

	return ib_post_recv(p->id->qp, &wr, NULL);
}

/**
 * tpeer_alloc() - a connection of shape @cfg, not connected
 * @cfg: its shape; cfg->size bytes are allocated, zeroed
 *
 * Return: the connection, or NULL without memory.
 */
struct tpeer *tpeer_alloc(const struct tpeer_cfg *cfg)
{
	struct tpeer *p;

	p = kzalloc(max(cfg->size, sizeof(*p)), GFP_KERNEL);
	if (!p)
		return NULL;
	p->rx = kcalloc(cfg->nr_rx, sizeof(*p->rx), GFP_KERNEL);
	p->tx = kcalloc(cfg->nr_tx, sizeof(*p->tx), GFP_KERNEL);
	if (!p->rx || !p->tx) {
		kfree(p->rx);
		kfree(p->tx);
		kfree(p);
		return NULL;
	}
	p->kind = TPEER_CONN;
	p->cfg = *cfg;
	spin_lock_init(&p->lock);
	INIT_LIST_HEAD(&p->ready);
	INIT_LIST_HEAD(&p->lnode);
	init_waitqueue_head(&p->wait);
	init_completion(&p->resolved);
	init_completion(&p->established);
	atomic_set(&p->tx_busy, 0);
	return p;
}

static void *tpeer_buf(struct ib_device *dev, u32 size,
		       enum dma_data_direction dir, u64 *dma)
{
	void *buf = kzalloc(size, GFP_KERNEL);

	if (!buf)
		return NULL;
	*dma = ib_dma_map_single(dev, buf, size, dir);
	if (ib_dma_mapping_error(dev, *dma)) {
		kfree(buf);
		return NULL;
	}
	return buf;
}

/* Queue pair and buffers on @id; cfg.nr_post receives posted. */
static int tpeer_qp_create(struct tpeer *p, struct rdma_cm_id *id)
{
	struct ib_device *dev = id->device;
	struct ib_qp_init_attr attr = {};
	u32 i;
	int ret;

	p->pd = ib_alloc_pd(dev, 0);
	if (IS_ERR(p->pd)) {
		ret = PTR_ERR(p->pd);
		p->pd = NULL;
		return ret;
	}
	p->cq = ib_alloc_cq_any(dev, p, p->cfg.nr_rx + p->cfg.nr_tx + 8,
				IB_POLL_WORKQUEUE);
	if (IS_ERR(p->cq)) {
		ret = PTR_ERR(p->cq);
		p->cq = NULL;
		return ret;
	}
	attr.send_cq = p->cq;
	attr.recv_cq = p->cq;
	attr.cap.max_send_wr = p->cfg.nr_tx + 1;	/* + the drain's */
	attr.cap.max_recv_wr = p->cfg.nr_rx + 1;
	attr.cap.max_send_sge = 1;
	attr.cap.max_recv_sge = 1;
	attr.sq_sig_type = IB_SIGNAL_REQ_WR;
	attr.qp_type = IB_QPT_RC;
	ret = rdma_create_qp(id, p->pd, &attr);
	if (ret)
		return ret;
	for (i = 0; i < p->cfg.nr_tx; i++) {
		struct tpeer_tx *tx = &p->tx[i];

		tx->p = p;
		tx->cqe.done = tpeer_send_done;
		tx->buf = tpeer_buf(dev, p->cfg.buf_size, DMA_TO_DEVICE,
				    &tx->dma);
		if (!tx->buf)
			return -ENOMEM;
	}
	for (i = 0; i < p->cfg.nr_rx; i++) {
		struct tpeer_rx *rx = &p->rx[i];

		rx->p = p;
		rx->cqe.done = tpeer_recv_done;
		rx->buf = tpeer_buf(dev, p->cfg.buf_size, DMA_FROM_DEVICE,
				    &rx->dma);
		if (!rx->buf)
			return -ENOMEM;
		if (i < p->cfg.nr_post) {
			ret = tpeer_post_recv(p, rx);
			if (ret)
				return ret;
		}
	}
	return 0;
}

/* Undo tpeer_qp_create() on @id, whatever step it reached. */
static void tpeer_qp_free(struct tpeer *p, struct rdma_cm_id *id)
{
	struct ib_device *dev = id->device;
	u32 i;

	if (id->qp) {
		ib_drain_qp(id->qp);
		rdma_destroy_qp(id);
	}
	if (p->cq)
		ib_free_cq(p->cq);
	p->cq = NULL;
	for (i = 0; i < p->cfg.nr_rx; i++) {
		if (!p->rx[i].buf)
			continue;
		ib_dma_unmap_single(dev, p->rx[i].dma, p->cfg.buf_size,
				    DMA_FROM_DEVICE);
		kfree(p->rx[i].buf);
		p->rx[i].buf = NULL;
	}
	for (i = 0; i < p->cfg.nr_tx; i++) {
		if (!p->tx[i].buf)
			continue;
		ib_dma_unmap_single(dev, p->tx[i].dma, p->cfg.buf_size,
				    DMA_TO_DEVICE);
		kfree(p->tx[i].buf);
		p->tx[i].buf = NULL;
	}
	if (p->pd)
		ib_dealloc_pd(p->pd);
	p->pd = NULL;
}

static void tpeer_free(struct tpeer *p)
{
	kfree(p->rx);
	kfree(p->tx);
	kfree(p);
}

/**
 * tpeer_destroy() - disconnect @p and free it with the module's structure
 * @p: a connection from tpeer_alloc() or tpeer_take(), or NULL
 *
 * The queue pair is drained first: no buffer is freed while the device
 * may still use it.
 */
void tpeer_destroy(struct tpeer *p)
{
	if (!p)
		return;
	if (p->id) {
		if (p->id->qp)
			rdma_disconnect(p->id);
		tpeer_qp_free(p, p->id);
		rdma_destroy_id(p->id);
	}
	tpeer_free(p);
}

/* What the other end sent with its request or reply. */
static void tpeer_keep_priv(struct tpeer *p, const struct rdma_conn_param *c)
{
	p->cm_priv_len = c->private_data ?
			 min_t(u32, c->private_data_len, TPEER_PRIV_MAX) : 0;
	if (p->cm_priv_len)
		memcpy(p->cm_priv, c->private_data, p->cm_priv_len);
	p->cm_resp = c->responder_resources;
	p->cm_init = c->initiator_depth;
}

static int tpeer_accept(struct tpeer_listener *l, struct rdma_cm_id *id,
			const struct rdma_cm_event *ev)
{
	struct rdma_conn_param cp = {
		.responder_resources = l->cfg.ird ?: 1,
		.initiator_depth = l->cfg.ord ?: 1,
		.retry_count = 6, .rnr_retry_count = l->cfg.rnr_retry,
		.private_data = l->cfg.priv,
		.private_data_len = l->cfg.priv_len,
	};
	struct tpeer *p = tpeer_alloc(&l->cfg);

	if (!p)
		return -ENOMEM;
	tpeer_keep_priv(p, &ev->param.conn);
	p->id = id;
	id->context = p;
	if (tpeer_qp_create(p, id) || rdma_accept(id, &cp)) {
		tpeer_qp_free(p, id);
		tpeer_free(p);
		return -ENOMEM;		/* rdma_cm destroys @id */
	}
	spin_lock(&l->lock);
	list_add_tail(&p->lnode, &l->conns);
	spin_unlock(&l->lock);
	wake_up(&l->wait);
	return 0;
}

static int tpeer_cm_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	int *kind = id->context;
	struct tpeer *p;

	/* A request's new id has its listener's context until accepted. */
	if (*kind == TPEER_LISTENER)
		return ev->event == RDMA_CM_EVENT_CONNECT_REQUEST ?
		       tpeer_accept(id->context, id, ev) : 0;

	p = id->context;
	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		/* Not ev->event, which is 0: the route never comes. */
		if (rdma_resolve_route(id, 2000)) {
			p->cm_event = RDMA_CM_EVENT_ROUTE_ERROR;
			complete(&p->resolved);
		}
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		complete(&p->resolved);
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		if (p->active)
			tpeer_keep_priv(p, &ev->param.conn);
		complete(&p->established);
		wake_up(&p->wait);
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_REJECTED:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		p->cm_event = ev->event;
		WRITE_ONCE(p->disc, true);
		complete(&p->resolved);
		complete(&p->established);
		wake_up(&p->wait);
		break;
	default:
		break;
	}
	return 0;
}

/**
 * tpeer_connect() - connect @p to @dst
 * @p: a connection from tpeer_alloc()
 * @dst: the address of an RDMA listener
 *
 * Context: process; waits up to 5 s for each of resolution and connect.
 * Return: 0 once established; -EHOSTUNREACH, -ETIMEDOUT, -ECONNREFUSED
 * or an error of a step. @p is tpeer_destroy()'s to free either way.
 */
int tpeer_connect(struct tpeer *p, struct sockaddr *dst)
{
	struct rdma_conn_param cp = {
		.responder_resources = p->cfg.ird ?: 1,
		.initiator_depth = p->cfg.ord ?: 1,
		.retry_count = 6, .rnr_retry_count = p->cfg.rnr_retry,
		.private_data = p->cfg.priv,
		.private_data_len = p->cfg.priv_len,
	};
	int ret;

	p->active = true;
	p->id = rdma_create_id(&init_net, tpeer_cm_handler, p, RDMA_PS_TCP,
			       IB_QPT_RC);
	if (IS_ERR(p->id)) {
		ret = PTR_ERR(p->id);
		p->id = NULL;
		return ret;
	}
	ret = rdma_resolve_addr(p->id, NULL, dst, 2000);
	if (ret)
		return ret;
	if (!wait_for_completion_timeout(&p->resolved, 5 * HZ) || p->cm_event)
		return -EHOSTUNREACH;
	ret = tpeer_qp_create(p, p->id) ?: rdma_connect(p->id, &cp);
	if (ret)
		return ret;
	/* A rejection completes the wait at once. */
	if (!wait_for_completion_timeout(&p->established, 5 * HZ))
		return -ETIMEDOUT;
	return p->cm_event ? -ECONNREFUSED : 0;
}

/**
 * tpeer_listen() - accept connections of shape @cfg on @addr
 * @l: the listener, zeroed or unlistened
 * @addr: where to listen
 * @backlog: requests rdma_cm may queue
 * @cfg: the shape of each connection
 *
 * Return: 0 or an error; tpeer_unlisten() undoes either.
 */
int tpeer_listen(struct tpeer_listener *l, struct sockaddr *addr,
		 int backlog, const struct tpeer_cfg *cfg)
{
	int ret;

	l->kind = TPEER_LISTENER;
	l->cfg = *cfg;
	spin_lock_init(&l->lock);
	INIT_LIST_HEAD(&l->conns);
	init_waitqueue_head(&l->wait);
	l->id = rdma_create_id(&init_net, tpeer_cm_handler, l, RDMA_PS_TCP,
			       IB_QPT_RC);
	if (IS_ERR(l->id)) {
		ret = PTR_ERR(l->id);
		l->id = NULL;
		return ret;
	}
	ret = rdma_bind_addr(l->id, addr);
	return ret ?: rdma_listen(l->id, backlog);
}

/**
 * tpeer_take() - the oldest connection @l accepted
 * @l: the listener
 * @ms: how long to wait for one
 *
 * Return: the connection, maybe not yet established (wait for
 * p->established), or NULL.
 */
struct tpeer *tpeer_take(struct tpeer_listener *l, unsigned int ms)
{
	struct tpeer *p = NULL;

	if (ms)
		wait_event_timeout(l->wait, !list_empty_careful(&l->conns),
				   msecs_to_jiffies(ms));
	spin_lock(&l->lock);
	if (!list_empty(&l->conns)) {
		p = list_first_entry(&l->conns, struct tpeer, lnode);
		list_del_init(&p->lnode);
	}
	spin_unlock(&l->lock);
	return p;
}

/**
 * tpeer_unlisten() - stop @l and destroy what it accepted and nobody took
 * @l: the listener; safe to call again, and after a failed tpeer_listen()
 */
void tpeer_unlisten(struct tpeer_listener *l)
{
	struct tpeer *p;

	if (l->id)
		rdma_destroy_id(l->id);
	l->id = NULL;
	if (l->kind != TPEER_LISTENER)
		return;
	while ((p = tpeer_take(l, 0)))
		tpeer_destroy(p);
}

/**
 * tpeer_next() - take the oldest completed receive of @p, if any
 * @p: the connection
 *
 * Return: the buffer, the caller's until it posts it again, or NULL.
 */
struct tpeer_rx *tpeer_next(struct tpeer *p)
{
	struct tpeer_rx *rx;

	spin_lock_bh(&p->lock);
	rx = list_first_entry_or_null(&p->ready, struct tpeer_rx, node);
	if (rx)
		list_del(&rx->node);
	spin_unlock_bh(&p->lock);
	return rx;
}

/**
 * tpeer_recv() - wait up to @ms for a receive of @p and take it
 * @p: the connection
 * @ms: how long to wait
 *
 * Not cut short by the end of the connection: a receive completion runs
 * on its CQ's workqueue and may come after the rdma_cm event of a
 * disconnect that followed it.
 *
 * Return: as tpeer_next().
 */
struct tpeer_rx *tpeer_recv(struct tpeer *p, unsigned int ms)
{
	wait_event_timeout(p->wait, !list_empty_careful(&p->ready),
			   msecs_to_jiffies(ms));
	return tpeer_next(p);
}

/**
 * tpeer_wait_rx() - wait up to @ms for a receive of @p to be ready
 * @p: the connection
 * @ms: how long to wait
 *
 * The end of the connection ends the wait after a grace of 300 ms, for
 * a receive completion still on its way (see tpeer_recv()).
 */
void tpeer_wait_rx(struct tpeer *p, unsigned int ms)
{
	wait_event_timeout(p->wait, !list_empty_careful(&p->ready) ||
			   READ_ONCE(p->disc), msecs_to_jiffies(ms));
	if (list_empty_careful(&p->ready))
		wait_event_timeout(p->wait, !list_empty_careful(&p->ready),
				   msecs_to_jiffies(300));
}

/**
 * tpeer_wait_down() - wait up to @ms for @p to end
 * @p: the connection
 * @ms: how long to wait
 *
 * Return: true if the connection ended (p->cm_event says how).
 */
bool tpeer_wait_down(struct tpeer *p, unsigned int ms)
{
	return wait_event_timeout(p->wait, READ_ONCE(p->disc),
				  msecs_to_jiffies(ms)) > 0 ||
	       READ_ONCE(p->disc);
}

/**
 * tpeer_tx_slot() - the next send buffer of @p, once it is free
 * @p: the connection
 *
 * Sends complete in order, so the buffers are used in turn.
 *
 * Return: the buffer, or NULL after 3 s (or at the end of the
 * connection) with all of them in flight.
 */
struct tpeer_tx *tpeer_tx_slot(struct tpeer *p)
{
	struct tpeer_tx *tx;

	if (!wait_event_timeout(p->wait,
				atomic_read(&p->tx_busy) < p->cfg.nr_tx ||
				READ_ONCE(p->disc), 3 * HZ) ||
	    atomic_read(&p->tx_busy) >= p->cfg.nr_tx)
		return NULL;
	tx = &p->tx[p->tx_head];
	p->tx_head = (p->tx_head + 1) % p->cfg.nr_tx;
	return tx;
}

/**
 * tpeer_post() - send the first @len bytes of @tx, signalled
 * @p: the connection
 * @tx: a buffer from tpeer_tx_slot(), filled
 * @len: bytes to send, 0 for a send without data
 *
 * Return: 0 or the provider's error.
 */
int tpeer_post(struct tpeer *p, struct tpeer_tx *tx, u32 len)
{
	struct ib_sge sge = {
		.addr = tx->dma, .length = len, .lkey = p->pd->local_dma_lkey,
	};
	struct ib_send_wr wr = {
		.wr_cqe = &tx->cqe, .sg_list = &sge, .num_sge = len ? 1 : 0,
		.opcode = IB_WR_SEND, .send_flags = IB_SEND_SIGNALED,
	};
	int ret;

	ib_dma_sync_single_for_device(p->id->device, tx->dma,
				      p->cfg.buf_size, DMA_TO_DEVICE);
	atomic_inc(&p->tx_busy);
	ret = ib_post_send(p->id->qp, &wr, NULL);
	if (ret)
		atomic_dec(&p->tx_busy);
	return ret;
}

/**
 * tpeer_send() - send @len bytes of the first send buffer and wait
 * @p: a connection with one send buffer (cfg.nr_tx 1), not in flight
 * @len: bytes to send
 *
 * Return: 0 once the send completed successfully, -ETIMEDOUT after 5 s,
 * -EIO if it or any send before it on @p failed, or the provider's error.
 */
int tpeer_send(struct tpeer *p, u32 len)
{
	int ret = tpeer_post(p, &p->tx[0], len);

	if (ret)
		return ret;
	if (!wait_event_timeout(p->wait, !atomic_read(&p->tx_busy), 5 * HZ))
		return -ETIMEDOUT;
	return READ_ONCE(p->tx_err);
}

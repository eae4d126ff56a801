// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: the connection layer (state, negotiation in both roles, the send
 * and receive paths, credits, flushes, the teardown) on a loopback: two
 * ends joined by a fake endpoint (struct smbd_fake_qp) that turns each
 * send posted on one end into a receive completion on the other, copying
 * the gather list into the buffer the other end posted, as an RC queue
 * pair does. Completions are delivered from a work item, in softirq-like
 * context (bottom halves off), in the order the case chooses: as posted,
 * receives first or sends first (each completion queue stays in order);
 * a case may also hold them. Either end may instead be a raw peer, which
 * the case drives with hand-built messages (the hostile peer of the VM
 * tests, in seconds). Errors are injected per end: a post refused at a
 * chosen request, a queue pair moved to the error state (everything
 * posted flushed), a receiver with no receive posted (RNR). Like a
 * provider, the fake refuses a post beyond the depth the queue pair was
 * made with; its send queue frees an entry only once a completion at or
 * after it was polled, the strictest rule a device may keep.
 *
 * The buffers are the sockets' own, mapped by a device without a
 * dma_device (ib_uses_virt_dma()), so the gather entries are kernel
 * addresses, as on rxe and siw. Only what a real provider alone shows
 * (the wire, timing, rdma_cm) is left to the VM tests.
 */

#include "smbd_lb.h"

struct lb_pair *lb_cur;

static struct lb_end *lb_end_of(struct lb_pair *lp, struct smbd_sock *sk)
{
	if (lp->a.sk == sk)
		return &lp->a;
	if (lp->b.sk == sk)
		return &lp->b;
	return NULL;
}

static void lb_queue(struct lb_pair *lp, struct lb_end *e, bool recv,
		     const struct ib_wc *wc, bool disconnect)
{
	struct lb_wc *c = kzalloc(sizeof(*c), GFP_ATOMIC);

	lockdep_assert_held(&lp->lock);
	if (WARN_ON(!c))
		return;
	c->seq = ++lp->seq;
	c->disconnect = disconnect;
	if (wc)
		c->wc = *wc;
	if (c->wc.status == IB_WC_WR_FLUSH_ERR)
		e->flushed++;
	list_add_tail(&c->node, recv ? &e->recv_q : &e->send_q);
	queue_work(lp->wq, &lp->work);
}

/*
 * A send queue completion of @e: its polling frees the entries of the
 * unsignalled requests before it and its own.
 */
static void lb_queue_send(struct lb_pair *lp, struct lb_end *e,
			  const struct ib_wc *wc)
{
	lb_queue(lp, e, false, wc, false);
	list_last_entry(&e->send_q, struct lb_wc, node)->sq_wrs =
		e->sq_unsig + 1;
	e->sq_unsig = 0;
}

/* The QP of @e goes to the error state: what it holds is flushed. */
static void lb_error(struct lb_pair *lp, struct lb_end *e)
{
	lockdep_assert_held(&lp->lock);
	e->errored = true;
	while (e->rq_len) {
		struct ib_wc wc = {
			.wr_cqe = e->rq[e->rq_head].cqe,
			.status = IB_WC_WR_FLUSH_ERR,
			.opcode = IB_WC_RECV,
			.qp = &e->qp,
		};

		e->rq_head = (e->rq_head + 1) % LB_RQ;
		e->rq_len--;
		lb_queue(lp, e, true, &wc, false);
	}
}

/*
 * One message from @from to its peer: into the peer's first posted
 * receive, or a raw peer's list. Returns the sender's status.
 */
static enum ib_wc_status lb_transfer(struct lb_pair *lp, struct lb_end *from,
				     const struct ib_sge *sg, int nsge,
				     const struct ib_send_wr *wr)
{
	struct lb_end *to = from->peer;
	struct ib_wc rwc = { .opcode = IB_WC_RECV };
	struct lb_rx rx;
	u32 len = 0, off = 0;
	int i;

	lockdep_assert_held(&lp->lock);
	for (i = 0; i < nsge; i++)
		len += sg[i].length;
	if (!to || to->errored || (!to->raw && !to->sk))
		return IB_WC_RETRY_EXC_ERR;
	if (to->raw) {
		struct lb_msg *m = kmalloc(struct_size(m, data, len),
					   GFP_ATOMIC);

		if (WARN_ON(!m))
			return IB_WC_GENERAL_ERR;
		for (i = 0; i < nsge; off += sg[i].length, i++)
			memcpy(m->data + off, (void *)(uintptr_t)sg[i].addr,
			       sg[i].length);
		m->len = len;
		list_add_tail(&m->node, &to->msgs);
		to->nmsgs++;
		wake_up_all(&lp->raw_wq);
		return IB_WC_SUCCESS;
	}
	if (!to->rq_len) {
		from->rnr++;
		return IB_WC_RNR_RETRY_EXC_ERR;
	}
	rx = to->rq[to->rq_head];
	to->rq_head = (to->rq_head + 1) % LB_RQ;
	to->rq_len--;
	rwc.wr_cqe = rx.cqe;
	rwc.qp = &to->qp;
	if (len > rx.len) {
		rwc.status = IB_WC_LOC_LEN_ERR;
		lb_queue(lp, to, true, &rwc, false);
		lb_error(lp, to);
		return IB_WC_REM_INV_REQ_ERR;
	}
	for (i = 0; i < nsge; off += sg[i].length, i++)
		memcpy((void *)(uintptr_t)rx.addr + off,
		       (void *)(uintptr_t)sg[i].addr, sg[i].length);
	rwc.byte_len = len;
	if (wr && wr->opcode == IB_WR_SEND_WITH_INV) {
		rwc.wc_flags = IB_WC_WITH_INVALIDATE;
		rwc.ex.invalidate_rkey = wr->ex.invalidate_rkey;
	}
	lb_queue(lp, to, true, &rwc, false);
	return IB_WC_SUCCESS;
}

static enum ib_wc_opcode lb_wc_opcode(enum ib_wr_opcode op)
{
	switch (op) {
	case IB_WR_RDMA_WRITE:
		return IB_WC_RDMA_WRITE;
	case IB_WR_RDMA_READ:
		return IB_WC_RDMA_READ;
	case IB_WR_REG_MR:
		return IB_WC_REG_MR;
	case IB_WR_LOCAL_INV:
		return IB_WC_LOCAL_INV;
	default:
		return IB_WC_SEND;
	}
}

/* A send of a Data Transfer message with a payload (more than a header). */
static bool lb_is_data(const struct ib_send_wr *wr)
{
	u32 len = 0;
	int i;

	if (wr->opcode != IB_WR_SEND && wr->opcode != IB_WR_SEND_WITH_INV)
		return false;
	for (i = 0; i < wr->num_sge; i++)
		len += wr->sg_list[i].length;
	return len > sizeof(struct smbd_data_hdr_pdu);
}

int lb_post_send(struct smbd_sock *sk, const struct ib_send_wr *first,
		 const struct ib_send_wr **bad)
{
	struct lb_pair *lp = lb_cur;
	const struct ib_send_wr *wr;
	unsigned long flags;
	struct lb_end *e;
	bool stall;
	int ret = 0;

	spin_lock_irqsave(&lp->lock, flags);
	e = lb_end_of(lp, sk);
	for (wr = first; e && wr; wr = wr->next) {
		struct ib_wc wc = {
			.wr_cqe = wr->wr_cqe,
			.opcode = lb_wc_opcode(wr->opcode),
			.qp = &e->qp,
		};

		/* The case's refusal counts the sends of message data only. */
		if (lb_is_data(wr) && !e->fail_send--) {
			if (bad)
				*bad = wr;
			ret = -ENOMEM;
			break;
		}
		/* As a provider: no more than the depth the QP was made with. */
		if (e->sq_used >= sk->ss_ep.sq_depth) {
			e->sq_full++;
			if (bad)
				*bad = wr;
			ret = -ENOMEM;
			break;
		}
		e->sq_used++;
		e->sq_peak = max(e->sq_peak, e->sq_used);
		e->sends++;
		if (wr->send_flags & IB_SEND_SIGNALED)
			e->signalled++;
		if (lb_is_data(wr)) {
			e->data_sends++;
			if (wr->send_flags & IB_SEND_SIGNALED)
				e->data_signalled++;
		}
		if (e->errored) {
			wc.status = IB_WC_WR_FLUSH_ERR;
			lb_queue_send(lp, e, &wc);
			continue;
		}
		if (wr->opcode == IB_WR_SEND ||
		    wr->opcode == IB_WR_SEND_WITH_INV)
			wc.status = lb_transfer(lp, e, wr->sg_list, wr->num_sge,
						wr);
		if (wc.status != IB_WC_SUCCESS) {
			/* Reported whether signalled or not; the QP errs. */
			lb_queue_send(lp, e, &wc);
			lb_error(lp, e);
		} else if (wr->send_flags & IB_SEND_SIGNALED) {
			lb_queue_send(lp, e, &wc);
		} else {
			e->sq_unsig++;
		}
	}
	if (e && e->fail_send < -1)
		e->fail_send = -1;
	stall = e && e->stall_post && lb_is_data(first);
	if (stall)
		e->stall_post = false;
	spin_unlock_irqrestore(&lp->lock, flags);
	if (WARN_ON(!e)) {
		if (bad)
			*bad = first;
		return -ENOTCONN;
	}
	if (stall) {
		/* A data send is posted from process context. */
		flush_work(&lp->work);
		complete(&e->stalled);
		wait_for_completion(&e->go);
	}
	return ret;
}

int lb_post_recv(struct smbd_sock *sk, const struct ib_recv_wr *first,
		 const struct ib_recv_wr **bad)
{
	struct lb_pair *lp = lb_cur;
	const struct ib_recv_wr *wr;
	unsigned long flags;
	struct lb_end *e;
	int ret = 0;

	spin_lock_irqsave(&lp->lock, flags);
	e = lb_end_of(lp, sk);
	for (wr = first; e && wr; wr = wr->next) {
		/* As a provider: no more than the depth the QP was made with. */
		if (!e->fail_recv-- || e->rq_len >= sk->ss_ep.rq_depth ||
		    e->rq_len == LB_RQ || wr->num_sge != 1) {
			*bad = wr;
			ret = -ENOMEM;
			break;
		}
		e->rq[(e->rq_head + e->rq_len) % LB_RQ] = (struct lb_rx) {
			.cqe = wr->wr_cqe,
			.addr = wr->sg_list[0].addr,
			.len = wr->sg_list[0].length,
		};
		e->rq_len++;
		if (e->errored)
			lb_error(lp, e);
	}
	if (e && e->fail_recv < -1)
		e->fail_recv = -1;
	spin_unlock_irqrestore(&lp->lock, flags);
	if (WARN_ON(!e)) {
		*bad = first;
		return -ENOTCONN;
	}
	return ret;
}

int lb_to_error(struct smbd_sock *sk)
{
	struct lb_pair *lp = lb_cur;
	struct lb_end *e;

	spin_lock_bh(&lp->lock);
	e = lb_end_of(lp, sk);
	if (e)
		lb_error(lp, e);
	spin_unlock_bh(&lp->lock);
	return 0;
}

/*
 * The next completion by the pair's order: the head of one of the four
 * queues (each stays in order), ranked by its kind first when the order
 * puts receives or sends first, then by when it was posted.
 */
static struct lb_wc *lb_next(struct lb_pair *lp)
{
	struct list_head *q[] = { &lp->a.recv_q, &lp->b.recv_q,
				  &lp->a.send_q, &lp->b.send_q };
	bool held[] = { false, false, lp->a.hold_send, lp->b.hold_send };
	struct lb_wc *best = NULL, *c;
	int i, rank, best_rank = 0;

	for (i = 0; i < ARRAY_SIZE(q); i++) {
		bool recv = i < 2;

		if (list_empty(q[i]) || held[i])
			continue;
		c = list_first_entry(q[i], struct lb_wc, node);
		rank = (lp->order == LB_RECV_FIRST && !recv) ||
		       (lp->order == LB_SEND_FIRST && recv);
		if (!best || rank < best_rank ||
		    (rank == best_rank && c->seq < best->seq)) {
			best = c;
			best_rank = rank;
		}
	}
	return best;
}

static struct lb_end *lb_wc_end(struct lb_pair *lp, struct lb_wc *c,
				bool *recv)
{
	struct lb_end *ends[] = { &lp->a, &lp->b };
	int i;

	for (i = 0; i < ARRAY_SIZE(ends); i++) {
		struct lb_wc *pos;

		list_for_each_entry(pos, &ends[i]->recv_q, node)
			if (pos == c) {
				*recv = true;
				return ends[i];
			}
		list_for_each_entry(pos, &ends[i]->send_q, node)
			if (pos == c) {
				*recv = false;
				return ends[i];
			}
	}
	return NULL;
}

static void lb_work(struct work_struct *work)
{
	struct lb_pair *lp = container_of(work, struct lb_pair, work);

	for (;;) {
		struct smbd_sock *sk = NULL;
		struct lb_wc *c;
		struct lb_end *e;
		bool recv = false;

		spin_lock_bh(&lp->lock);
		c = lp->hold ? NULL : lb_next(lp);
		e = c ? lb_wc_end(lp, c, &recv) : NULL;
		if (c)
			list_del(&c->node);
		if (e && !recv)
			e->sq_used -= c->sq_wrs;
		if (e)
			sk = e->sk;
		spin_unlock_bh(&lp->lock);
		if (!c)
			return;
		/* An end destroyed meanwhile took its own completions. */
		if (sk && c->disconnect) {
			smbd_sock_error(sk, -ECONNRESET);
		} else if (sk) {
			local_bh_disable();
			c->wc.wr_cqe->done(recv ? &e->recv_cq : &e->send_cq,
					   &c->wc);
			local_bh_enable();
		}
		kfree(c);
	}
}

bool lb_idle(struct lb_pair *lp, struct lb_end *e)
{
	bool idle;

	spin_lock_bh(&lp->lock);
	idle = list_empty(&e->send_q) && list_empty(&e->recv_q);
	spin_unlock_bh(&lp->lock);
	return idle;
}

/* Hold completions (as a CQ not yet polled), or let them run again. */
void lb_hold(struct lb_pair *lp, bool hold)
{
	spin_lock_bh(&lp->lock);
	lp->hold = hold;
	if (!hold)
		queue_work(lp->wq, &lp->work);
	spin_unlock_bh(&lp->lock);
}

/* As ib_drain_qp(): error state, then every completion has run. */
void lb_drain(struct smbd_sock *sk)
{
	struct lb_pair *lp = lb_cur;
	struct lb_end *e;

	spin_lock_bh(&lp->lock);
	if (!READ_ONCE(sk->ss_ep.qp_closed))
		lp->drain_gate_open++;
	e = lb_end_of(lp, sk);
	if (e) {
		lb_error(lp, e);
		e->hold_send = false;
	}
	/* A CQ the case held is polled again: the drain waits for it. */
	lp->hold = false;
	queue_work(lp->wq, &lp->work);
	spin_unlock_bh(&lp->lock);
	if (!e)
		return;
	do {
		flush_work(&lp->work);
	} while (!lb_idle(lp, e));
}

/* As rdma_disconnect(): this QP errs; the peer's handler hears of it. */
void lb_disconnect(struct smbd_sock *sk)
{
	struct lb_pair *lp = lb_cur;
	struct lb_end *e;

	spin_lock_bh(&lp->lock);
	e = lb_end_of(lp, sk);
	if (e) {
		lb_error(lp, e);
		if (e->peer && e->peer->raw)
			e->peer->disconnected = true;
		else if (e->peer && e->peer->sk)
			lb_queue(lp, e->peer, true, NULL, true);
		wake_up_all(&lp->raw_wq);
	}
	spin_unlock_bh(&lp->lock);
}

/* The socket's QP, CQs and PD go: nothing may reach it any more. */
void lb_destroy(struct smbd_sock *sk)
{
	struct lb_pair *lp = lb_cur;
	struct lb_wc *c, *tmp;
	struct lb_end *e;

	spin_lock_bh(&lp->lock);
	e = lb_end_of(lp, sk);
	if (e) {
		e->leftover = e->rq_len;
		e->rq_len = 0;
		list_for_each_entry_safe(c, tmp, &e->send_q, node) {
			e->leftover += !c->disconnect;
			list_del(&c->node);
			kfree(c);
		}
		list_for_each_entry_safe(c, tmp, &e->recv_q, node) {
			e->leftover += !c->disconnect;
			list_del(&c->node);
			kfree(c);
		}
		e->sk = NULL;
	}
	spin_unlock_bh(&lp->lock);
	/* A delivery that took the socket before it went has ended. */
	flush_work(&lp->work);
}

/* As rdma_destroy_id(): waits for a running handler; none comes after. */
void lb_destroy_id(struct smbd_sock *sk, struct rdma_cm_id *id)
{
	struct lb_end *e = container_of(id, struct lb_end, id);
	struct rdma_cm_event ev = { .event = RDMA_CM_EVENT_DEVICE_REMOVAL };

	mutex_lock(&e->id_mutex);
	/* A handler running when the destroy came: the destroy waits. */
	if (e->rm_in_destroy) {
		e->rm_in_destroy = false;
		e->rm_ret = smbd_cm_handler(id, &ev);
	}
	e->id_gone = true;
	e->id_destroys++;
	mutex_unlock(&e->id_mutex);
}

/*
 * rdma_cm's event @type on @e's id, unless the id is gone; a non-zero
 * return of the handler destroys the id. Returns the handler's.
 */
int lb_cm_event(struct lb_end *e, enum rdma_cm_event_type type)
{
	struct rdma_cm_event ev = { .event = type };
	int ret = 0;

	mutex_lock(&e->id_mutex);
	if (!e->id_gone) {
		ret = smbd_cm_handler(&e->id, &ev);
		if (ret) {
			e->id_gone = true;
			e->id_destroys++;
		}
	}
	mutex_unlock(&e->id_mutex);
	return ret;
}

static const struct smbd_fake_qp lb_ops = {
	.post_send = lb_post_send,
	.post_recv = lb_post_recv,
	.to_error = lb_to_error,
	.drain = lb_drain,
	.disconnect = lb_disconnect,
	.destroy = lb_destroy,
	.destroy_id = lb_destroy_id,
};

/*
 * The device's memory registrations, for an end with an MR pool: an MR
 * the fake keeps out of the device's resource tracking (it has none),
 * and a mapping that only records where the pages are (the addresses
 * are the kernel's, ib_uses_virt_dma()). The peer's RDMA never touches
 * them: the cases play its Send with Invalidate with the rkey alone.
 */
static struct ib_mr *lb_alloc_mr(struct ib_pd *pd, enum ib_mr_type type,
				 u32 max_num_sg)
{
	static atomic_t lb_mr_keys;
	struct ib_mr *mr = kzalloc(sizeof(*mr), GFP_KERNEL);

	if (!mr)
		return ERR_PTR(-ENOMEM);
	mr->res.no_track = true;
	/* The low byte is the key smbd_register() turns with each use. */
	mr->lkey = (u32)atomic_inc_return(&lb_mr_keys) << 8;
	mr->rkey = mr->lkey;
	return mr;
}

static int lb_map_mr_sg(struct ib_mr *mr, struct scatterlist *sg, int nents,
			unsigned int *sg_offset)
{
	struct scatterlist *s;
	int i;

	mr->iova = sg_dma_address(sg);
	mr->length = 0;
	for_each_sg(sg, s, nents, i)
		mr->length += sg_dma_len(s);
	return nents;
}

static int lb_dereg_mr(struct ib_mr *mr, struct ib_udata *udata)
{
	kfree(mr);
	return 0;
}

/* Limits like rxe's, which smbd sizes its queues from. */
const struct smbd_device lb_sd = {
	.sd_max_qp_wr = LB_RQ,
	.sd_max_send_sge = 8,
	.sd_max_recv_sge = 1,
	.sd_max_cqe = 4096,
	.sd_max_rd_atom = 16,
	.sd_max_init_rd_atom = 16,
	.sd_max_frmr_pages = 512,
};

static void lb_end_init(struct lb_pair *lp, struct lb_end *e,
			struct lb_end *peer, u32 id)
{
	e->peer = peer;
	e->fail_send = -1;
	e->fail_recv = -1;
	e->send_cq.res.id = 2 * id;
	e->recv_cq.res.id = 2 * id + 1;
	INIT_LIST_HEAD(&e->send_q);
	INIT_LIST_HEAD(&e->recv_q);
	INIT_LIST_HEAD(&e->msgs);
	mutex_init(&e->id_mutex);
	init_completion(&e->stalled);
	init_completion(&e->go);
}

/* A pair with nothing on it yet; lb_sock() or lb_raw() fills each end. */
struct lb_pair *lb_pair(struct kunit *test)
{
	struct lb_pair *lp = kunit_kzalloc(test, sizeof(*lp), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, lp);
	spin_lock_init(&lp->lock);
	INIT_WORK(&lp->work, lb_work);
	init_waitqueue_head(&lp->raw_wq);
	lp->wq = alloc_ordered_workqueue("smbd_lb", 0);
	KUNIT_ASSERT_NOT_NULL(test, lp->wq);
	lp->pd.device = &lp->dev;
	lp->dev.ops.alloc_mr = lb_alloc_mr;
	lp->dev.ops.map_mr_sg = lb_map_mr_sg;
	lp->dev.ops.dereg_mr = lb_dereg_mr;
	lp->dev.attrs.max_fast_reg_page_list_len = lb_sd.sd_max_frmr_pages;
	lb_end_init(lp, &lp->a, &lp->b, 1);
	lb_end_init(lp, &lp->b, &lp->a, 2);
	lb_cur = lp;
	test->priv = lp;
	return lp;
}

/* End @e becomes a socket with @p (NULL: the defaults), started. */
struct smbd_sock *lb_sock_sd(struct kunit *test, struct lb_end *e,
			     const struct smbd_params *p,
			     const struct smbd_device *sd, int *err)
{
	struct lb_pair *lp = test->priv;
	bool responder = e == &lp->b;
	struct smbd_fake_ep ep = {
		.ops = &lb_ops,
		.sd = *sd,
		.ibdev = &lp->dev,
		.pd = &lp->pd,
		.qp = &e->qp,
		.send_cq = &e->send_cq,
		.recv_cq = &e->recv_cq,
		.cm_id = &e->id,
		.mrs = e->mrs,
	};
	struct smbd_params def;
	struct smbd_sock *sk;

	if (!p) {
		smbd_params_init(&def, responder);
		p = &def;
	}
	sk = smbd_sock_alloc(&init_net, p, responder);
	KUNIT_ASSERT_NOT_NULL(test, sk);
	e->send_cq.cq_context = sk;
	e->recv_cq.cq_context = sk;
	spin_lock_bh(&lp->lock);
	e->sk = sk;
	spin_unlock_bh(&lp->lock);
	e->socks++;
	e->id_gone = false;
	*err = smbd_ep_fake_start(sk, &ep);
	return sk;
}

struct smbd_sock *lb_sock(struct kunit *test, struct lb_end *e,
			  const struct smbd_params *p)
{
	struct smbd_sock *sk;
	int err;

	sk = lb_sock_sd(test, e, p, &lb_sd, &err);
	KUNIT_ASSERT_EQ(test, err, 0);
	return sk;
}

void lb_release(struct lb_end *e)
{
	struct smbd_sock *sk = e->sk;

	if (sk)
		smbd_sock_release(sk);
}

void lb_exit(struct kunit *test)
{
	struct lb_pair *lp = test->priv;
	struct lb_end *ends[] = { &lp->a, &lp->b };
	struct lb_msg *m, *tmp;
	int i;

	if (!lp)
		return;
	smbd_sock_release(lp->lsk);
	for (i = 0; i < ARRAY_SIZE(ends); i++) {
		/* A poster a failed case left stopped would hold the teardown. */
		spin_lock_bh(&lp->lock);
		ends[i]->stall_post = false;
		spin_unlock_bh(&lp->lock);
		complete_all(&ends[i]->go);
		lb_release(ends[i]);
		smbd_sock_release(ends[i]->dead);
		list_for_each_entry_safe(m, tmp, &ends[i]->msgs, node)
			kfree(m);
	}
	destroy_workqueue(lp->wq);
	lb_cur = NULL;
	KUNIT_EXPECT_EQ_MSG(test, lp->drain_gate_open, 0,
			    "a queue pair drained with its gate open");
}

enum smbd_state lb_state(struct smbd_sock *sk)
{
	return READ_ONCE(sk->ss_state);
}

/* Wait for @sk to reach @state or beyond; returns the state it is in. */
enum smbd_state lb_wait_state(struct smbd_sock *sk,
			      enum smbd_state state)
{
	wait_event_timeout(sk->ss_wait, lb_state(sk) >= state,
			   msecs_to_jiffies(LB_WAIT_MS));
	return lb_state(sk);
}

u32 lb_send_credits(struct smbd_sock *sk)
{
	struct smbd_sock_info info;

	smbd_sock_query(sk, &info);
	return info.send_credits;
}

/* Both ends of @lp sockets, negotiated with these parameters. */
void lb_connect_pair(struct kunit *test, struct lb_pair *lp,
		     const struct smbd_params *pa,
		     const struct smbd_params *pb,
		     const struct smbd_device *sd)
{
	int err;

	lb_sock_sd(test, &lp->a, pa, sd, &err);
	KUNIT_ASSERT_EQ(test, err, 0);
	lb_sock_sd(test, &lp->b, pb, sd, &err);
	KUNIT_ASSERT_EQ(test, err, 0);
	KUNIT_ASSERT_EQ(test, smbd_ep_fake_established(lp->a.sk), 0);
	KUNIT_ASSERT_EQ(test, lb_wait_state(lp->a.sk, SMBD_CONNECTED),
			SMBD_CONNECTED);
	KUNIT_ASSERT_EQ(test, lb_wait_state(lp->b.sk, SMBD_CONNECTED),
			SMBD_CONNECTED);
	/*
	 * The initiator's grant work sends its first grant at once: let it
	 * land, so the case starts from a quiet pair.
	 */
	KUNIT_ASSERT_TRUE(test, lb_until(lb_send_credits(lp->b.sk) > 0));
	flush_work(&lp->a.sk->ss_grant_work);
	flush_work(&lp->work);
}

/* A new pair, both ends sockets, negotiated with these parameters. */
void lb_connect_sd(struct kunit *test, const struct smbd_params *pa,
		   const struct smbd_params *pb,
		   const struct smbd_device *sd)
{
	lb_connect_pair(test, lb_pair(test), pa, pb, sd);
}

void lb_connect(struct kunit *test, const struct smbd_params *pa,
		const struct smbd_params *pb)
{
	lb_connect_sd(test, pa, pb, &lb_sd);
}

void lb_fill(u8 *buf, u32 len, u32 seed)
{
	u32 i;

	for (i = 0; i < len; i++)
		buf[i] = (u8)(seed * 131 + i * 7 + (i >> 8));
}

ssize_t lb_send(struct smbd_sock *sk, void *buf, size_t len,
		unsigned int flags)
{
	struct kvec v = { .iov_base = buf, .iov_len = len };
	struct iov_iter it;

	iov_iter_kvec(&it, ITER_SOURCE, &v, 1, len);
	return smbd_sock_send(sk, &it, flags);
}

ssize_t lb_recv(struct smbd_sock *sk, void *buf, size_t len,
		unsigned int flags, struct smbd_recv_info *info)
{
	struct kvec v = { .iov_base = buf, .iov_len = len };
	struct iov_iter it;

	iov_iter_kvec(&it, ITER_DEST, &v, 1, len);
	return smbd_sock_recv(sk, &it, flags, info);
}

static int lb_thread_fn(void *arg)
{
	struct lb_thread *t = arg;

	t->ret = lb_recv(t->sk, t->buf, t->len, 0, &t->info);
	complete(&t->done);
	return 0;
}

void lb_run_reader(struct kunit *test, struct lb_thread *t,
		   struct smbd_sock *sk, void *buf, u32 len)
{
	init_completion(&t->done);
	t->sk = sk;
	t->buf = buf;
	t->len = len;
	t->task = kthread_run(lb_thread_fn, t, "smbd_lb_reader");
	KUNIT_ASSERT_FALSE(test, IS_ERR(t->task));
}

bool lb_done(struct completion *c)
{
	return wait_for_completion_timeout(c, msecs_to_jiffies(LB_WAIT_MS));
}

static bool lb_reader_done(struct lb_thread *t)
{
	return lb_done(&t->done);
}

/*
 * Whether the reader returned in time; if not, shut its socket down and
 * wait for it, so that it never outlives the case's stack.
 */
bool lb_reader_finish(struct lb_thread *t)
{
	if (lb_reader_done(t))
		return true;
	smbd_sock_shutdown(t->sk);
	wait_for_completion(&t->done);
	return false;
}

/*
 * A non-blocking send, retried while it returns -EAGAIN for up to @ms:
 * a credit still to come, or the send mutex held a moment by the grant
 * work's empty message (a non-blocking sender never waits for it).
 */
ssize_t lb_send_within(struct smbd_sock *sk, void *buf, size_t len,
		       unsigned int ms)
{
	ssize_t ret;

	lb_until_ms((ret = lb_send(sk, buf, len, SMBD_SEND_NONBLOCK |
				   SMBD_SEND_COPY)) != -EAGAIN, ms);
	return ret;
}

ssize_t lb_send_soon(struct smbd_sock *sk, void *buf, size_t len)
{
	return lb_send_within(sk, buf, len, LB_WAIT_MS);
}

/*
 * Send @len bytes from @from while a reader on @to takes them (a message
 * larger than the receive buffers flows only as it is read), compare.
 */

static int lb_xmit_fn(void *arg)
{
	struct lb_xmit *x = arg;

	x->ret = smbd_sock_send(x->sk, &x->it, x->flags);
	complete(&x->done);
	return 0;
}

/* Start smbd_sock_send() of @it (whose memory outlives the send). */
struct lb_xmit *lb_xmit_start(struct kunit *test, struct smbd_sock *sk,
			      const struct iov_iter *it,
			      unsigned int flags)
{
	struct lb_xmit *x = kunit_kzalloc(test, sizeof(*x), GFP_KERNEL);
	struct task_struct *task;

	KUNIT_ASSERT_NOT_NULL(test, x);
	init_completion(&x->done);
	x->sk = sk;
	x->it = *it;
	x->flags = flags;
	task = kthread_create(lb_xmit_fn, x, "smbd_lb_xmit");
	KUNIT_ASSERT_FALSE(test, IS_ERR(task));
	/* Kept for lb_xmit_asleep() until lb_xmit_finish(). */
	x->task = get_task_struct(task);
	wake_up_process(task);
	return x;
}

/*
 * Has the sender gone to sleep (waiting for credits or a copy buffer),
 * and not been woken since? Blocked tasks leave their run queue; one
 * preempted between setting its state and testing its wait's condition
 * stays on it. Only then must a wake bring it on: had it tested the
 * condition after the change it waits for, it would go without one,
 * and a missing wake would pass unseen.
 */
bool lb_xmit_asleep(const struct lb_xmit *x)
{
	return READ_ONCE(x->task->__state) & TASK_NORMAL &&
	       !READ_ONCE(x->task->on_rq);
}

/*
 * Its result, waited for LB_WAIT_MS at most: a send still blocked then
 * (a credit or a copy buffer that never comes back) is shut down, waited
 * for, so it never outlives the case's memory, and fails the case in
 * seconds, not at KUnit's timeout.
 */
ssize_t lb_xmit_finish(struct kunit *test, struct lb_xmit *x)
{
	if (!lb_done(&x->done)) {
		smbd_sock_shutdown(x->sk);
		wait_for_completion(&x->done);
		KUNIT_FAIL(test, "the blocking send never returned");
	}
	put_task_struct(x->task);
	return x->ret;
}

ssize_t lb_send_bounded(struct kunit *test, struct smbd_sock *sk,
			const struct iov_iter *it, unsigned int flags)
{
	return lb_xmit_finish(test, lb_xmit_start(test, sk, it, flags));
}

void lb_roundtrip_flags(struct kunit *test, struct smbd_sock *from,
			struct smbd_sock *to, u32 len, u32 seed,
			unsigned int flags)
{
	u8 *tx = kunit_kmalloc(test, len ?: 1, GFP_KERNEL);
	u8 *rx = kunit_kzalloc(test, len + 1, GFP_KERNEL);
	struct lb_thread t;
	struct iov_iter it;
	struct kvec v;

	KUNIT_ASSERT_NOT_NULL(test, tx);
	KUNIT_ASSERT_NOT_NULL(test, rx);
	lb_fill(tx, len, seed);
	lb_run_reader(test, &t, to, rx, len + 1);
	v.iov_base = tx;
	v.iov_len = len;
	iov_iter_kvec(&it, ITER_SOURCE, &v, 1, len);
	KUNIT_EXPECT_EQ_MSG(test, lb_send_bounded(test, from, &it, flags),
			    (ssize_t)len, "send of %u bytes", len);
	if (!lb_reader_finish(&t))
		KUNIT_FAIL(test, "receive of %u bytes never returned", len);
	KUNIT_ASSERT_EQ_MSG(test, t.ret, (ssize_t)len, "receive of %u bytes",
			    len);
	KUNIT_EXPECT_EQ(test, t.info.msg_len, len);
	KUNIT_EXPECT_EQ_MSG(test, memcmp(tx, rx, len), 0,
			    "%u bytes changed on the way", len);
	kunit_kfree(test, tx);
	kunit_kfree(test, rx);
}

void lb_roundtrip(struct kunit *test, struct smbd_sock *from,
		  struct smbd_sock *to, u32 len, u32 seed)
{
	lb_roundtrip_flags(test, from, to, len, seed, 0);
}

u32 lb_payload(struct smbd_sock *sk)
{
	struct smbd_sock_info info;

	smbd_sock_query(sk, &info);
	return info.max_send_size - SMBD_DATA_OFFSET;
}

/* ---- a raw peer: the case writes its messages ---- */

void lb_raw(struct lb_pair *lp, struct lb_end *e)
{
	spin_lock_bh(&lp->lock);
	e->raw = true;
	spin_unlock_bh(&lp->lock);
}

/* @raw sends @len bytes; returns the status its send would complete with. */
enum ib_wc_status lb_raw_send(struct lb_pair *lp, struct lb_end *raw,
			      const void *buf, u32 len)
{
	struct ib_sge sge = { .addr = (uintptr_t)buf, .length = len };
	enum ib_wc_status st;

	spin_lock_bh(&lp->lock);
	st = lb_transfer(lp, raw, &sge, 1, NULL);
	spin_unlock_bh(&lp->lock);
	return st;
}

/* The same as a Send with Invalidate of @rkey ([MS-SMBD] 3.1.4.4). */
enum ib_wc_status lb_raw_send_inv(struct lb_pair *lp,
				  struct lb_end *raw, const void *buf,
				  u32 len, u32 rkey)
{
	struct ib_sge sge = { .addr = (uintptr_t)buf, .length = len };
	struct ib_send_wr wr = {
		.opcode = IB_WR_SEND_WITH_INV,
		.ex.invalidate_rkey = rkey,
	};
	enum ib_wc_status st;

	spin_lock_bh(&lp->lock);
	st = lb_transfer(lp, raw, &sge, 1, &wr);
	spin_unlock_bh(&lp->lock);
	return st;
}

/* Wait for @raw's message @i (from 0); a copy the case keeps, or NULL. */
struct lb_msg *lb_raw_msg(struct kunit *test, struct lb_pair *lp,
			  struct lb_end *raw, u32 i)
{
	struct lb_msg *m, *found = NULL, *copy;
	size_t size;

	wait_event_timeout(lp->raw_wq, READ_ONCE(raw->nmsgs) > i,
			   msecs_to_jiffies(LB_WAIT_MS));
	/* Messages are only ever added (freed at the case's end). */
	spin_lock_bh(&lp->lock);
	list_for_each_entry(m, &raw->msgs, node)
		if (!i--) {
			found = m;
			break;
		}
	spin_unlock_bh(&lp->lock);
	if (!found)
		return NULL;
	size = struct_size(found, data, found->len);
	copy = kunit_kmalloc(test, size, GFP_KERNEL);
	if (copy)
		memcpy(copy, found, size);
	return copy;
}

void lb_neg_req(struct smbd_neg_req_pdu *q, u16 minv, u16 maxv,
		u16 credits, u32 send, u32 recv, u32 frag)
{
	*q = (struct smbd_neg_req_pdu) {
		.min_version = cpu_to_le16(minv),
		.max_version = cpu_to_le16(maxv),
		.credits_requested = cpu_to_le16(credits),
		.preferred_send_size = cpu_to_le32(send),
		.max_receive_size = cpu_to_le32(recv),
		.max_fragmented_size = cpu_to_le32(frag),
	};
}

void lb_neg_resp(struct smbd_neg_resp_pdu *r, u16 granted, u32 send,
		 u32 recv)
{
	*r = (struct smbd_neg_resp_pdu) {
		.min_version = cpu_to_le16(0x0100),
		.max_version = cpu_to_le16(0x0100),
		.negotiated_version = cpu_to_le16(0x0100),
		.credits_requested = cpu_to_le16(255),
		.credits_granted = cpu_to_le16(granted),
		.max_read_write_size = cpu_to_le32(1048576),
		.preferred_send_size = cpu_to_le32(send),
		.max_receive_size = cpu_to_le32(recv),
		.max_fragmented_size = cpu_to_le32(1048576),
	};
}

/* A Data Transfer message: header, padding, @len payload bytes. */
u32 lb_data(u8 *buf, u16 requested, u16 granted, u16 flags,
	    u32 remaining, u32 off, u32 len)
{
	struct smbd_data_hdr_pdu *h = (void *)buf;

	memset(buf, 0, SMBD_DATA_OFFSET);
	if (len)
		lb_fill(buf + off, len, remaining);
	h->credits_requested = cpu_to_le16(requested);
	h->credits_granted = cpu_to_le16(granted);
	h->flags = cpu_to_le16(flags);
	h->remaining_data_length = cpu_to_le32(remaining);
	h->data_offset = cpu_to_le32(len ? off : 0);
	h->data_length = cpu_to_le32(len);
	return len ? off + len : sizeof(*h);
}

/*
 * On @lp: the initiator a with @p (NULL: the defaults), negotiated by a
 * raw responder b that grants @granted.
 */
void lb_raw_responder_on(struct kunit *test, struct lb_pair *lp,
			 u16 granted, const struct smbd_params *p)
{
	struct smbd_neg_resp_pdu r;
	struct lb_msg *m;

	lb_raw(lp, &lp->b);
	lb_sock(test, &lp->a, p);
	KUNIT_ASSERT_EQ(test, smbd_ep_fake_established(lp->a.sk), 0);
	m = lb_raw_msg(test, lp, &lp->b, 0);
	KUNIT_ASSERT_NOT_NULL(test, m);
	KUNIT_ASSERT_EQ(test, m->len, sizeof(struct smbd_neg_req_pdu));
	lb_neg_resp(&r, granted, 1364, 8192);
	KUNIT_ASSERT_EQ(test, lb_raw_send(lp, &lp->b, &r, sizeof(r)),
			IB_WC_SUCCESS);
	KUNIT_ASSERT_EQ(test, lb_wait_state(lp->a.sk, SMBD_CONNECTED),
			SMBD_CONNECTED);
}

void lb_raw_responder(struct kunit *test, u16 granted)
{
	lb_raw_responder_on(test, lb_pair(test), granted, NULL);
}

/*
 * The responder b with @p (NULL: the defaults), negotiated by a raw
 * initiator a that asks for @credits; b's Negotiate Response is a's
 * message 0.
 */
struct smbd_sock *lb_raw_initiator(struct kunit *test, u16 credits,
				   const struct smbd_params *p)
{
	struct lb_pair *lp = lb_pair(test);
	struct smbd_neg_req_pdu q;
	struct smbd_sock *b;

	lb_raw(lp, &lp->a);
	b = lb_sock(test, &lp->b, p);
	lb_neg_req(&q, 0x0100, 0x0100, credits, 1364, 8192, 1048576);
	KUNIT_ASSERT_EQ(test, lb_raw_send(lp, &lp->a, &q, sizeof(q)),
			IB_WC_SUCCESS);
	KUNIT_ASSERT_EQ(test, lb_wait_state(b, SMBD_CONNECTED),
			SMBD_CONNECTED);
	return b;
}

/* ---- the cases ---- */

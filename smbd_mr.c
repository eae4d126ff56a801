// SPDX-License-Identifier: GPL-2.0
/*
 * smbd: memory registration and RDMA read/write ([MS-SMBD] 3.1.4.3 to
 * 3.1.4.6).
 *
 * Registrations (an SMB2 client's READ and WRITE buffers)
 *   A pool of fast-registration MRs, each with its own scatter list, is
 *   allocated with the queue pair. smbd_register() cuts the consumer's
 *   iterator into runs a single MR can map (page-aligned inside, at most
 *   the MR's page count), maps them and posts one REG_MR per MR with a
 *   fresh rkey and only the access the peer needs. The descriptors go to
 *   the peer in the consumer's own message; the send queue runs in order,
 *   so the registration is in force before that message leaves.
 *   smbd_deregister() closes the window: an MR the peer invalidated with
 *   exactly its rkey (a receive completion with IB_WC_WITH_INVALIDATE,
 *   recorded by smbd_reg_remote_inv()) needs nothing more; every other
 *   one is invalidated locally and waited for. Only then are the pages
 *   unmapped and handed back.
 *
 * RDMA read and write (an SMB2 server's side)
 *   smbd_rdma_read() and smbd_rdma_write() slice the peer's descriptors
 *   (smbd_desc_slice(): MaxReadWriteSize, offsets, lengths), and move each
 *   slice in chunks through the kernel's rdma_rw API, which registers
 *   the sink of an iWARP RDMA read as that protocol requires. A context
 *   count bounds the send queue space they use.
 *
 * Teardown
 *   A thread that posts and waits holds a struct smbd_op on ss_op_list.
 *   Teardown drains the queue pair, completes every op still waiting (a
 *   provider may lose completions of a dying queue pair), waits for the
 *   threads to leave, and only then frees the MRs and the queue pair.
 *   Registrations the consumer still holds become empty shells that
 *   smbd_deregister() returns to the pool.
 */

#include <linux/errno.h>
#include <linux/slab.h>
#include <linux/uio.h>
#include <rdma/ib_verbs.h>
#include <rdma/rw.h>

#include "smbd_internal.h"

/* Remote segments one smbd_rdma_read()/smbd_rdma_write() may cover. */
#define SMBD_RW_SEGS		16

static void smbd_op_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct smbd_op *op = container_of(wc->wr_cqe, struct smbd_op, op_cqe);
	struct smbd_sock *sk = cq->cq_context;

	spin_lock(&sk->ss_lock);
	if (wc->status != IB_WC_SUCCESS && !op->op_status)
		op->op_status = wc->status == IB_WC_WR_FLUSH_ERR ?
				-ECONNABORTED : -EIO;
	/* Every request's memory stays the waiter's until the last is done. */
	if (!op->op_finished && !--op->op_pending) {
		op->op_finished = true;
		complete(&op->op_done);
	}
	spin_unlock(&sk->ss_lock);
	if (wc->status != IB_WC_SUCCESS)
		smbd_wr_failed(sk, wc->status, "memory or RDMA work");
}

/* Join ss_op_list if the connection is up; the thread may then post. */
static bool smbd_op_start(struct smbd_sock *sk, struct smbd_op *op)
{
	bool ok;

	op->op_cqe.done = smbd_op_done;
	init_completion(&op->op_done);
	op->op_status = 0;
	op->op_pending = 1;
	op->op_finished = false;
	spin_lock_bh(&sk->ss_lock);
	ok = sk->ss_state == SMBD_CONNECTED;
	if (ok)
		list_add_tail(&op->op_node, &sk->ss_op_list);
	spin_unlock_bh(&sk->ss_lock);
	return ok;
}

/* Ready @op for @n more signalled requests. */
static void smbd_op_rearm(struct smbd_sock *sk, struct smbd_op *op, u32 n)
{
	spin_lock_bh(&sk->ss_lock);
	reinit_completion(&op->op_done);
	op->op_pending = n;
	op->op_finished = false;
	spin_unlock_bh(&sk->ss_lock);
}

/*
 * @n of @op's signalled requests were not posted: nothing will complete
 * them. @op finishes with @err once the posted ones have completed
 * (flushed at worst: the caller ends the connection).
 */
static void smbd_op_unposted(struct smbd_sock *sk, struct smbd_op *op,
			     u32 n, int err)
{
	spin_lock_bh(&sk->ss_lock);
	if (!op->op_status)
		op->op_status = err;
	op->op_pending -= min(n, op->op_pending);
	if (!op->op_finished && !op->op_pending) {
		op->op_finished = true;
		complete(&op->op_done);
	}
	spin_unlock_bh(&sk->ss_lock);
}

static int smbd_op_wait(struct smbd_op *op)
{
	/* The request is on the queue pair: its memory stays ours. */
	wait_for_completion(&op->op_done);
	return op->op_status;
}

static void smbd_op_end(struct smbd_sock *sk, struct smbd_op *op)
{
	spin_lock_bh(&sk->ss_lock);
	list_del(&op->op_node);
	spin_unlock_bh(&sk->ss_lock);
	wake_up_all(&sk->ss_res_wq);
}

/**
 * smbd_ops_abort() - end every wait on a drained queue pair
 * @sk: a socket whose queue pair was drained and is not yet destroyed
 *
 * Completes the ops whose completion never came, then waits until every
 * thread has left ss_op_list (releasing its rdma_rw context needs the queue
 * pair).
 *
 * Context: process; caller holds ss_teardown_mutex.
 */
void smbd_ops_abort(struct smbd_sock *sk)
{
	struct smbd_op *op;

	lockdep_assert_held(&sk->ss_teardown_mutex);
	spin_lock_bh(&sk->ss_lock);
	list_for_each_entry(op, &sk->ss_op_list, op_node) {
		if (op->op_finished)
			continue;
		op->op_finished = true;
		op->op_status = -ECONNABORTED;
		complete(&op->op_done);
	}
	spin_unlock_bh(&sk->ss_lock);
	wake_up_all(&sk->ss_res_wq);
	wait_event(sk->ss_res_wq, list_empty_careful(&sk->ss_op_list));
}

static void smbd_reg_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct smbd_sock *sk = cq->cq_context;

	if (wc->status != IB_WC_SUCCESS)
		smbd_wr_failed(sk, wc->status, "memory registration");
}

/**
 * smbd_mr_alloc() - allocate the MR pool and the rdma_rw budget
 * @sk: a socket whose queue pair was just created
 *
 * Context: process; may sleep.
 * Return: 0 or a negative errno.
 */
int smbd_mr_alloc(struct smbd_sock *sk)
{
	u32 pages, i;

	pages = min_t(u32, DIV_ROUND_UP(sk->ss_params.max_read_write_size,
					PAGE_SIZE) + 1,
		      sk->ss_ibdev->attrs.max_fast_reg_page_list_len);
	sk->ss_regs = kcalloc(sk->ss_nr_reg, sizeof(*sk->ss_regs), GFP_KERNEL);
	if (!sk->ss_regs)
		return -ENOMEM;
	for (i = 0; i < sk->ss_nr_reg; i++) {
		struct smbd_reg *reg = &sk->ss_regs[i];
		struct ib_mr *mr;

		reg->reg_sk = sk;
		reg->reg_max_pages = pages;
		reg->reg_cqe.done = smbd_reg_done;
		reg->reg_sgl = kcalloc(pages, sizeof(*reg->reg_sgl), GFP_KERNEL);
		if (!reg->reg_sgl)
			goto nomem;
		mr = ib_alloc_mr(sk->ss_pd, IB_MR_TYPE_MEM_REG, pages);
		if (IS_ERR(mr))
			goto nomem;
		reg->reg_mr = mr;
		list_add_tail(&reg->reg_node, &sk->ss_reg_free);
	}
	sk->ss_rw_avail = sk->ss_rw_ctxs;
	return 0;
nomem:
	smbd_mr_free(sk);
	smbd_mr_release(sk);
	return -ENOMEM;
}

/**
 * smbd_mr_free() - free the MRs once the queue pair is drained
 * @sk: the socket; smbd_ops_abort() has run
 *
 * Registrations the consumer still holds keep their struct, empty, for
 * smbd_deregister().
 *
 * Context: process.
 */
void smbd_mr_free(struct smbd_sock *sk)
{
	u32 i;

	for (i = 0; sk->ss_regs && i < sk->ss_nr_reg; i++) {
		struct smbd_reg *reg = &sk->ss_regs[i];

		if (reg->reg_mapped)
			ib_dma_unmap_sg(sk->ss_ibdev, reg->reg_sgl,
					reg->reg_nents, reg->reg_dir);
		reg->reg_mapped = false;
		reg->reg_live = false;
		if (reg->reg_mr)
			ib_dereg_mr(reg->reg_mr);
		reg->reg_mr = NULL;
	}
}

/**
 * smbd_mr_release() - free the pool's memory
 * @sk: a socket being freed
 *
 * Context: process.
 */
void smbd_mr_release(struct smbd_sock *sk)
{
	u32 i;

	for (i = 0; sk->ss_regs && i < sk->ss_nr_reg; i++)
		kfree(sk->ss_regs[i].reg_sgl);
	kfree(sk->ss_regs);
	sk->ss_regs = NULL;
	INIT_LIST_HEAD(&sk->ss_reg_free);
}

/**
 * smbd_reg_remote_inv() - the peer invalidated one of our rkeys
 * @sk: the socket
 * @rkey: the rkey a receive completion reported invalidated
 *
 * [MS-SMBD] 3.1.5.8: recorded on the live registration with exactly that
 * rkey, which smbd_deregister() then need not invalidate itself. Any
 * other rkey is only counted.
 *
 * Context: softirq (receive completion); caller holds ss_lock.
 */
void smbd_reg_remote_inv(struct smbd_sock *sk, u32 rkey)
{
	u32 i;

	lockdep_assert_held(&sk->ss_lock);
	for (i = 0; sk->ss_regs && i < sk->ss_nr_reg; i++) {
		struct smbd_reg *reg = &sk->ss_regs[i];

		if (reg->reg_live && reg->reg_mr && reg->reg_mr->rkey == rkey) {
			reg->reg_live = false;
			reg->reg_remote_inv = true;
			return;
		}
	}
	sk->ss_stats.remote_inv_unknown++;
	pr_info_ratelimited("smbd: peer invalidated rkey %#x, not one of ours in use\n",
			    rkey);
}

static bool smbd_reg_available(struct smbd_sock *sk)
{
	return !list_empty_careful(&sk->ss_reg_free) ||
	       READ_ONCE(sk->ss_state) != SMBD_CONNECTED;
}

/* Take an MR from the pool, waiting for one; NULL once disconnected. */
static struct smbd_reg *smbd_reg_get(struct smbd_sock *sk)
{
	struct smbd_reg *reg = NULL;

	for (;;) {
		spin_lock_bh(&sk->ss_lock);
		if (sk->ss_state == SMBD_CONNECTED) {
			reg = list_first_entry_or_null(&sk->ss_reg_free,
						       struct smbd_reg,
						       reg_node);
			if (reg)
				list_del_init(&reg->reg_node);
		}
		spin_unlock_bh(&sk->ss_lock);
		if (reg || READ_ONCE(sk->ss_state) != SMBD_CONNECTED)
			return reg;
		if (wait_event_killable(sk->ss_res_wq, smbd_reg_available(sk)))
			return NULL;
	}
}

static void smbd_reg_put(struct smbd_sock *sk, struct smbd_reg *reg)
{
	if (reg->reg_mapped)
		ib_dma_unmap_sg(sk->ss_ibdev, reg->reg_sgl, reg->reg_nents,
				reg->reg_dir);
	reg->reg_mapped = false;
	reg->reg_next = NULL;
	spin_lock_bh(&sk->ss_lock);
	reg->reg_live = false;
	reg->reg_remote_inv = false;
	list_add(&reg->reg_node, &sk->ss_reg_free);
	spin_unlock_bh(&sk->ss_lock);
	wake_up_all(&sk->ss_res_wq);
}

static void smbd_reg_put_all(struct smbd_sock *sk, struct smbd_reg *reg)
{
	struct smbd_reg *next;

	for (; reg; reg = next) {
		next = reg->reg_next;
		smbd_reg_put(sk, reg);
	}
}

/*
 * How many entries of a scatter list of @max a walk over @it can fill:
 * the pages @it spans, which iov_iter_npages() caps at @max. Initialising
 * only those keeps a 4 KiB I/O from clearing a list sized for the largest
 * one (sg_init_table() showed in the 4 KiB profiles).
 */
static u32 smbd_sg_entries(const struct iov_iter *it, u32 max)
{
	u32 n = iov_iter_npages(it, max);

	return n ?: max;
}

/*
 * Fill @reg's scatter list from @it: whole pages inside, a partial page
 * only first or last, at most reg_max_pages (what one fast registration
 * maps without a gap). Returns the bytes taken.
 */
static size_t smbd_reg_fill(struct smbd_reg *reg, struct iov_iter *it)
{
	struct page *pages[16], **pp = pages;
	size_t off, got, taken = 0, n;
	bool ends_on_page = true;
	ssize_t ret;
	u32 k;

	reg->reg_nents = 0;
	sg_init_table(reg->reg_sgl,
		      smbd_sg_entries(it, reg->reg_max_pages));
	while (iov_iter_count(it) && reg->reg_nents < reg->reg_max_pages) {
		ret = iov_iter_extract_pages(it, &pp, iov_iter_count(it),
					     min_t(u32, ARRAY_SIZE(pages),
						   reg->reg_max_pages -
						   reg->reg_nents),
					     0, &off);
		if (ret <= 0)
			break;
		got = ret;
		for (k = 0; got; k++) {
			n = min_t(size_t, got, PAGE_SIZE - off);
			/* A gap: the next registration starts here. */
			if (reg->reg_nents && (off || !ends_on_page)) {
				iov_iter_revert(it, got);
				goto done;
			}
			sg_set_page(&reg->reg_sgl[reg->reg_nents++], pages[k],
				    n, off);
			ends_on_page = off + n == PAGE_SIZE;
			taken += n;
			got -= n;
			off = 0;
		}
	}
done:
	if (reg->reg_nents)
		sg_mark_end(&reg->reg_sgl[reg->reg_nents - 1]);
	return taken;
}

/**
 * smbd_register() - open a buffer to the peer's RDMA ([MS-SMBD] 3.1.4.3)
 * @sk: a connected socket
 * @iter: the buffer (a kernel iterator: kvec, bvec, folio queue, xarray);
 *	advanced past it
 * @flags: exactly one of %SMBD_REG_PEER_WRITES (the peer RDMA-writes into
 *	it: an SMB2 READ) and %SMBD_REG_PEER_READS (the peer RDMA-reads from
 *	it: an SMB2 WRITE); the registration grants nothing more
 * @descs: filled with the Buffer Descriptors V1 covering the buffer, in
 *	order, one per MR
 * @max_descs: room in @descs
 * @regp: the registration, for smbd_deregister()
 *
 * The buffer is cut where one MR cannot map it (a gap inside a page, or
 * the device's page limit); each MR gets a fresh rkey. The memory must
 * stay until smbd_deregister() returns.
 *
 * Context: process; sleeps while the MR pool is empty (woken by
 * smbd_deregister() and by the connection's end).
 * Return: the number of descriptors; -EINVAL (bad flags, empty buffer),
 * -EOPNOTSUPP (a responder created without an MR pool, params.mr_count 0),
 * -EMSGSIZE (above MaxReadWriteSize), -E2BIG (more descriptors needed
 * than @max_descs), -ENOTCONN, -EFAULT, -ENOMEM, or the connection's
 * error. On error nothing stays registered.
 */
int smbd_register(struct smbd_sock *sk, struct iov_iter *iter,
		  unsigned int flags, struct smbd_buf_desc *descs,
		  u32 max_descs, struct smbd_reg **regp)
{
	struct smbd_reg *first = NULL, **tail = &first, *reg, *last = NULL;
	size_t len = iov_iter_count(iter);
	enum dma_data_direction dir;
	struct smbd_op busy;
	int access, n = 0, ret = 0;

	might_sleep();
	*regp = NULL;
	if (flags == SMBD_REG_PEER_WRITES) {
		dir = DMA_FROM_DEVICE;
		access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE;
	} else if (flags == SMBD_REG_PEER_READS) {
		dir = DMA_TO_DEVICE;
		access = IB_ACCESS_REMOTE_READ;
	} else {
		return -EINVAL;
	}
	if (!len || !max_descs)
		return -EINVAL;
	if (len > READ_ONCE(sk->ss_neg.max_read_write_size))
		return -EMSGSIZE;
	if (user_backed_iter(iter))
		return -EFAULT;
	if (!smbd_op_start(sk, &busy))
		return READ_ONCE(sk->ss_err) ?: -ENOTCONN;
	/* Fixed once connected: a responder that asked for no pool. */
	if (!sk->ss_nr_reg)
		ret = -EOPNOTSUPP;

	while (!ret && iov_iter_count(iter)) {
		struct ib_mr *mr;
		int nents;

		if (n == max_descs) {
			ret = -E2BIG;
			break;
		}
		reg = smbd_reg_get(sk);
		if (!reg) {
			ret = READ_ONCE(sk->ss_err) ?: -ENOTCONN;
			break;
		}
		*tail = reg;
		tail = &reg->reg_next;
		if (!smbd_reg_fill(reg, iter)) {
			ret = -EFAULT;
			break;
		}
		reg->reg_dir = dir;
		nents = ib_dma_map_sg(sk->ss_ibdev, reg->reg_sgl,
				      reg->reg_nents, dir);
		if (!nents) {
			ret = -ENOMEM;
			break;
		}
		reg->reg_mapped = true;
		mr = reg->reg_mr;
		if (ib_map_mr_sg(mr, reg->reg_sgl, nents, NULL,
				 PAGE_SIZE) != nents) {
			ret = -EIO;
			break;
		}
		ib_update_fast_reg_key(mr, ib_inc_rkey(mr->rkey));
		reg->reg_wr = (struct ib_reg_wr) {
			.wr.opcode = IB_WR_REG_MR,
			.wr.wr_cqe = &reg->reg_cqe,
			.mr = mr,
			.key = mr->rkey,
			.access = access,
		};
		if (last)
			last->reg_wr.wr.next = &reg->reg_wr.wr;
		last = reg;
		descs[n].offset = mr->iova;
		descs[n].token = mr->rkey;
		descs[n].length = mr->length;
		n++;
	}
	if (!ret && last) {
		const struct ib_send_wr *bad = NULL;

		last->reg_wr.wr.send_flags = IB_SEND_SIGNALED;
		/* Before the post: a completion may not find them dead. */
		spin_lock_bh(&sk->ss_lock);
		for (reg = first; reg; reg = reg->reg_next)
			reg->reg_live = true;
		sk->ss_stats.mrs_registered += n;
		spin_unlock_bh(&sk->ss_lock);
		ret = ib_post_send(sk->ss_qp, &first->reg_wr.wr, &bad);
		if (ret) {
			/* Nothing reaches the peer through a dead QP. */
			smbd_sock_error(sk, ret);
		}
	}
	if (ret) {
		smbd_reg_put_all(sk, first);
		n = ret;
	} else {
		*regp = first;
	}
	smbd_op_end(sk, &busy);
	return n;
}
EXPORT_SYMBOL_NS_GPL(smbd_register, SMBD);

/**
 * smbd_deregister() - close a buffer to the peer ([MS-SMBD] 3.1.4.4)
 * @sk: the socket of the registration
 * @reg: what smbd_register() returned; invalid afterwards
 *
 * Returns once the peer can no longer reach the buffer and none of its
 * access is still running: each MR is invalidated locally (and waited
 * for) unless the peer invalidated exactly its rkey with a message we
 * received; on a lost connection the queue pair is put in the error
 * state. The buffer then belongs to the consumer again.
 *
 * Context: process; sleeps.
 * Return: 0, or the error that ended the connection while invalidating
 * (the buffer is unreachable all the same).
 */
int smbd_deregister(struct smbd_sock *sk, struct smbd_reg *reg)
{
	struct ib_send_wr *head = NULL, **tail = &head, *last = NULL;
	const struct ib_send_wr *bad = NULL;
	u32 local = 0, remote = 0;
	struct smbd_reg *r;
	struct smbd_op op;
	int ret = 0;

	might_sleep();
	if (!reg)
		return 0;
	if (!smbd_op_start(sk, &op)) {
		/*
		 * The connection is gone. Teardown may be running: do as it
		 * does, under its mutex; a queue pair still there is put in
		 * the error state, where the peer reaches nothing.
		 */
		struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };

		mutex_lock(&sk->ss_teardown_mutex);
		if (sk->ss_qp)
			ib_modify_qp(sk->ss_qp, &attr, IB_QP_STATE);
		smbd_reg_put_all(sk, reg);
		mutex_unlock(&sk->ss_teardown_mutex);
		return READ_ONCE(sk->ss_err) ?: -ENOTCONN;
	}
	spin_lock_bh(&sk->ss_lock);
	for (r = reg; r; r = r->reg_next) {
		if (r->reg_remote_inv) {
			remote++;
			continue;
		}
		if (!r->reg_live || !r->reg_mr)
			continue;
		r->reg_inv_wr = (struct ib_send_wr) {
			.opcode = IB_WR_LOCAL_INV,
			.wr_cqe = &r->reg_cqe,
			.ex.invalidate_rkey = r->reg_mr->rkey,
		};
		*tail = &r->reg_inv_wr;
		tail = &r->reg_inv_wr.next;
		last = &r->reg_inv_wr;
		local++;
	}
	sk->ss_stats.mrs_local_inv += local;
	sk->ss_stats.mrs_remote_inv += remote;
	spin_unlock_bh(&sk->ss_lock);

	if (last) {
		last->wr_cqe = &op.op_cqe;
		last->send_flags = IB_SEND_SIGNALED;
		ret = ib_post_send(sk->ss_qp, head, &bad);
		if (ret) {
			/* The signalled invalidation is the last: unposted. */
			smbd_op_unposted(sk, &op, 1, ret);
			smbd_sock_error(sk, ret);
		}
		/*
		 * A failed invalidation or a flushed one leaves the queue
		 * pair in the error state: unreachable either way.
		 */
		ret = smbd_op_wait(&op);
	}
	/* Still on ss_op_list: teardown waits before it frees the MRs. */
	smbd_reg_put_all(sk, reg);
	smbd_op_end(sk, &op);
	return ret;
}
EXPORT_SYMBOL_NS_GPL(smbd_deregister, SMBD);

/* Fill @sgl with @len bytes of @it; returns the entries used. */
static int smbd_rw_sg(struct iov_iter *it, size_t len, struct scatterlist *sgl,
		      u32 max)
{
	struct page *pages[16], **pp = pages;
	size_t off, got, n;
	u32 nents = 0, k;
	ssize_t ret;

	sg_init_table(sgl, smbd_sg_entries(it, max));
	while (len && nents < max) {
		ret = iov_iter_extract_pages(it, &pp, len,
					     min_t(u32, ARRAY_SIZE(pages),
						   max - nents), 0, &off);
		if (ret <= 0)
			return -EFAULT;
		got = ret;
		len -= got;
		for (k = 0; got; k++) {
			n = min_t(size_t, got, PAGE_SIZE - off);
			sg_set_page(&sgl[nents++], pages[k], n, off);
			got -= n;
			off = 0;
		}
	}
	if (len)
		return -EFAULT;
	sg_mark_end(&sgl[nents - 1]);
	return nents;
}

static bool smbd_rw_ctx_free(struct smbd_sock *sk)
{
	return READ_ONCE(sk->ss_rw_avail) ||
	       READ_ONCE(sk->ss_state) != SMBD_CONNECTED;
}

/*
 * Take up to @want rdma_rw contexts of the budget, waiting for at least
 * one; returns how many, or 0 once disconnected.
 */
static u32 smbd_rw_ctx_get(struct smbd_sock *sk, u32 want)
{
	u32 got;

	for (;;) {
		spin_lock_bh(&sk->ss_lock);
		if (sk->ss_state != SMBD_CONNECTED) {
			spin_unlock_bh(&sk->ss_lock);
			return 0;
		}
		got = min(sk->ss_rw_avail, want);
		if (got) {
			sk->ss_rw_avail -= got;
			spin_unlock_bh(&sk->ss_lock);
			return got;
		}
		spin_unlock_bh(&sk->ss_lock);
		wait_event(sk->ss_res_wq, smbd_rw_ctx_free(sk));
	}
}

static void smbd_rw_ctx_put(struct smbd_sock *sk, u32 n)
{
	spin_lock_bh(&sk->ss_lock);
	sk->ss_rw_avail += n;
	spin_unlock_bh(&sk->ss_lock);
	wake_up_all(&sk->ss_res_wq);
}

/* The signalled requests of @op in the chain from @first up to @bad. */
static u32 smbd_op_signalled(const struct smbd_op *op,
			     const struct ib_send_wr *first,
			     const struct ib_send_wr *bad)
{
	const struct ib_send_wr *wr;
	u32 n = 0;

	for (wr = first; wr && wr != bad; wr = wr->next)
		if (wr->wr_cqe == &op->op_cqe &&
		    wr->send_flags & IB_SEND_SIGNALED)
			n++;
	return n;
}

/*
 * siw sends an unsignalled RDMA Write of a page or more from the pages
 * themselves and counts it done while TCP still holds them (see
 * ss_tx_sig_bytes): signal such a request, so that siw copies it and the
 * wait covers it. The request is the context's, ours until the chain is
 * done.
 */
static void smbd_rw_wr_signal(const struct smbd_sock *sk, struct smbd_op *op,
			      struct ib_send_wr *wr)
{
	if (wr->opcode != IB_WR_RDMA_WRITE ||
	    wr->send_flags & IB_SEND_SIGNALED ||
	    smbd_wr_bytes(wr) < sk->ss_tx_sig_bytes)
		return;
	wr->wr_cqe = &op->op_cqe;
	wr->send_flags |= IB_SEND_SIGNALED;
}

/* The context and gather list of one piece in a chain. */
struct smbd_rw_slot {
	struct rdma_rw_ctx ctx;
	int nents;
	struct scatterlist sgl[SMBD_RW_CHUNK_PAGES];
};

/*
 * Move @n pieces as one chain of work requests and wait once: a 1 MiB
 * read or write is one round trip, not four. The last request of each
 * piece is signalled (and on siw each large RDMA Write), so that a post
 * that fails partway still has a completion for every piece that went:
 * the pages of a posted piece stay mapped until the device is done with
 * them (flushed, once the failure ended the connection). @n contexts of
 * the budget are held.
 */
static int smbd_rw_chain(struct smbd_sock *sk, struct smbd_op *op,
			 struct smbd_rw_slot *sl, struct iov_iter *it,
			 const struct smbd_buf_desc *pc, u32 n,
			 enum dma_data_direction dir)
{
	const struct ib_send_wr *bad = NULL;
	struct ib_send_wr *first = NULL;
	u32 i, ready = 0;
	int ret = 0;

	for (i = 0; i < n; i++) {
		ret = smbd_rw_sg(it, pc[i].length, sl[i].sgl,
				 SMBD_RW_CHUNK_PAGES);
		if (ret < 0)
			break;
		sl[i].nents = ret;
		ret = rdma_rw_ctx_init(&sl[i].ctx, sk->ss_qp, sk->ss_port_num,
				       sl[i].sgl, sl[i].nents, 0, pc[i].offset,
				       pc[i].token, dir);
		if (ret < 0)
			break;
		ready++;
		ret = 0;
	}
	if (!ret) {
		struct ib_send_wr *wr, *last = NULL;
		u32 nsig;

		/*
		 * rdma_rw_ctx_wrs() signals a context's last request only
		 * when it ends the chain: link the pieces ourselves.
		 */
		for (i = 0; i < n; i++) {
			wr = rdma_rw_ctx_wrs(&sl[i].ctx, sk->ss_qp,
					     sk->ss_port_num, &op->op_cqe, NULL);
			if (last)
				last->next = wr;
			else
				first = wr;
			for (;; wr = wr->next) {
				smbd_rw_wr_signal(sk, op, wr);
				if (!wr->next)
					break;
			}
			last = wr;
		}
		nsig = smbd_op_signalled(op, first, NULL);
		smbd_op_rearm(sk, op, nsig);
		ret = ib_post_send(sk->ss_qp, first, &bad);
		if (ret) {
			u32 went = smbd_op_signalled(op, first, bad ?: first);

			smbd_op_unposted(sk, op, nsig - went, ret);
			smbd_sock_error(sk, ret);
		}
		ret = smbd_op_wait(op);
	}
	for (i = 0; i < ready; i++)
		rdma_rw_ctx_destroy(&sl[i].ctx, sk->ss_qp, sk->ss_port_num,
				    sl[i].sgl, sl[i].nents, dir);
	return ret;
}

static ssize_t smbd_rdma_rw(struct smbd_sock *sk, struct iov_iter *it,
			    const struct smbd_buf_desc *descs, u32 ndescs,
			    u64 offset, enum dma_data_direction dir)
{
	struct smbd_buf_desc pc[SMBD_RW_CTXS];
	size_t len = iov_iter_count(it), done = 0;
	struct smbd_rw_slot *sl = NULL;
	struct smbd_buf_desc *seg;
	u32 i = 0, segoff = 0, n, got, nslot;
	struct smbd_op op;
	int nseg, ret = 0;

	might_sleep();
	if (!len)
		return 0;
	if (user_backed_iter(it))
		return -EFAULT;
	seg = kcalloc(SMBD_RW_SEGS, sizeof(*seg), GFP_KERNEL);
	if (!seg) {
		ret = -ENOMEM;
		goto out;
	}
	nseg = smbd_desc_slice(descs, ndescs, offset, len,
			       READ_ONCE(sk->ss_neg.max_read_write_size), seg,
			       SMBD_RW_SEGS);
	if (nseg < 0) {
		ret = nseg;
		goto out;
	}
	/*
	 * As many slots as pieces, up to a chain's worth: each segment
	 * ends at most one piece short of SMBD_RW_CHUNK.
	 */
	nslot = min_t(size_t, len / SMBD_RW_CHUNK + nseg, SMBD_RW_CTXS);
	sl = kvmalloc_array(nslot, sizeof(*sl), GFP_KERNEL);
	if (!sl) {
		ret = -ENOMEM;
		goto out;
	}
	if (!smbd_op_start(sk, &op)) {
		ret = READ_ONCE(sk->ss_err) ?: -ENOTCONN;
		goto out;
	}
	while (i < nseg && !ret) {
		n = smbd_desc_pieces(seg, nseg, i, segoff, SMBD_RW_CHUNK, pc,
				     nslot);
		got = smbd_rw_ctx_get(sk, n);
		if (!got) {
			ret = READ_ONCE(sk->ss_err) ?: -ENOTCONN;
			break;
		}
		ret = smbd_rw_chain(sk, &op, sl, it, pc, got, dir);
		smbd_rw_ctx_put(sk, got);
		/* Go on after the pieces moved. */
		for (n = 0; n < got && !ret; n++) {
			done += pc[n].length;
			segoff += pc[n].length;
			if (segoff == seg[i].length) {
				i++;
				segoff = 0;
			}
		}
	}
	smbd_op_end(sk, &op);
	spin_lock_bh(&sk->ss_lock);
	if (dir == DMA_FROM_DEVICE) {
		sk->ss_stats.rdma_reads++;
		sk->ss_stats.rdma_read_bytes += done;
	} else {
		sk->ss_stats.rdma_writes++;
		sk->ss_stats.rdma_write_bytes += done;
	}
	spin_unlock_bh(&sk->ss_lock);
out:
	kfree(seg);
	kvfree(sl);
	return ret ?: done;
}

/**
 * smbd_rdma_read() - read the peer's registered buffer ([MS-SMBD] 3.1.4.6)
 * @sk: a connected socket
 * @to: where the data goes (a kernel iterator); its length is how much
 * @descs: the peer's Buffer Descriptors V1, as decoded by
 *	smbd_desc_decode() from its message
 * @ndescs: their number
 * @offset: where in the peer's buffer (the descriptors laid end to end)
 *	to start
 *
 * Context: process; sleeps until the data is in @to.
 * Return: the bytes read; -EINVAL, -ERANGE (beyond the descriptors),
 * -EMSGSIZE (above MaxReadWriteSize), -E2BIG (too many segments),
 * -EFAULT, -ENOMEM, -ENOTCONN, or the connection's error: an access the
 * peer's registration refuses ends the connection.
 */
ssize_t smbd_rdma_read(struct smbd_sock *sk, struct iov_iter *to,
		       const struct smbd_buf_desc *descs, u32 ndescs,
		       u64 offset)
{
	return smbd_rdma_rw(sk, to, descs, ndescs, offset, DMA_FROM_DEVICE);
}
EXPORT_SYMBOL_NS_GPL(smbd_rdma_read, SMBD);

/**
 * smbd_rdma_write() - write into the peer's buffer ([MS-SMBD] 3.1.4.5)
 * @sk: a connected socket
 * @from: the data (a kernel iterator)
 * @descs: the peer's Buffer Descriptors V1
 * @ndescs: their number
 * @offset: where in the peer's buffer to start
 *
 * A message sent after this returns reaches the peer after the data.
 *
 * Context: process; sleeps until the device is done with @from.
 * Return: as smbd_rdma_read().
 */
ssize_t smbd_rdma_write(struct smbd_sock *sk, struct iov_iter *from,
			const struct smbd_buf_desc *descs, u32 ndescs,
			u64 offset)
{
	return smbd_rdma_rw(sk, from, descs, ndescs, offset, DMA_TO_DEVICE);
}
EXPORT_SYMBOL_NS_GPL(smbd_rdma_write, SMBD);

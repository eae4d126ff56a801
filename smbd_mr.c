// SPDX-License-Identifier: GPL-2.0
/*
 * smbd: memory registration ([MS-SMBD] 3.1.4.3, 3.1.4.4, 3.1.5.8).
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
 * Teardown
 *   Registration threads hold a struct smbd_op (smbd_op.c) while they
 *   post and wait. Registrations the consumer still holds when the queue
 *   pair goes become empty shells that smbd_deregister() returns to the
 *   pool.
 */

#include <linux/errno.h>
#include <linux/slab.h>
#include <linux/uio.h>
#include <rdma/ib_verbs.h>

#include "smbd_internal.h"
#include "smbd_trace.h"

static void smbd_reg_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct smbd_sock *sk = cq->cq_context;

	if (smbd_wc_begin(cq, wc, false) != IB_WC_SUCCESS)
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
		      sk->ss_ep.frmr_pages);
	sk->ss_rdma.regs = kcalloc(sk->ss_rdma.nr_reg, sizeof(*sk->ss_rdma.regs), GFP_KERNEL);
	if (!sk->ss_rdma.regs)
		return -ENOMEM;
	for (i = 0; i < sk->ss_rdma.nr_reg; i++) {
		struct smbd_reg *reg = &sk->ss_rdma.regs[i];
		struct ib_mr *mr;

		reg->reg_sk = sk;
		reg->reg_max_pages = pages;
		smbd_cqe_init(sk, &reg->reg_cqe, SMBD_WC_REG, smbd_reg_done);
		reg->reg_sgl = kcalloc(pages, sizeof(*reg->reg_sgl), GFP_KERNEL);
		if (!reg->reg_sgl)
			goto nomem;
		mr = ib_alloc_mr(sk->ss_ep.pd, IB_MR_TYPE_MEM_REG, pages);
		if (IS_ERR(mr))
			goto nomem;
		reg->reg_mr = mr;
		list_add_tail(&reg->reg_node, &sk->ss_rdma.reg_free);
	}
	sk->ss_rdma.rw_avail = sk->ss_rdma.rw_ctxs;
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

	for (i = 0; sk->ss_rdma.regs && i < sk->ss_rdma.nr_reg; i++) {
		struct smbd_reg *reg = &sk->ss_rdma.regs[i];

		if (reg->reg_mapped)
			ib_dma_unmap_sg(sk->ss_ep.ibdev, reg->reg_sgl,
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

	for (i = 0; sk->ss_rdma.regs && i < sk->ss_rdma.nr_reg; i++)
		kfree(sk->ss_rdma.regs[i].reg_sgl);
	kfree(sk->ss_rdma.regs);
	sk->ss_rdma.regs = NULL;
	INIT_LIST_HEAD(&sk->ss_rdma.reg_free);
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
 * Context: the receive completion handler; caller holds ss_lock.
 */
void smbd_reg_remote_inv(struct smbd_sock *sk, u32 rkey)
{
	u32 i;

	lockdep_assert_held(&sk->ss_lock);
	for (i = 0; sk->ss_rdma.regs && i < sk->ss_rdma.nr_reg; i++) {
		struct smbd_reg *reg = &sk->ss_rdma.regs[i];

		if (reg->reg_live && reg->reg_mr && reg->reg_mr->rkey == rkey) {
			reg->reg_live = false;
			reg->reg_remote_inv = true;
			trace_smbd_mr_inv(sk, rkey, SMBD_TRACE_INV_REMOTE);
			return;
		}
	}
	sk->ss_stats.remote_inv_unknown++;
	trace_smbd_mr_inv(sk, rkey, SMBD_TRACE_INV_UNKNOWN);
}

/* MRs free in the pool; caller holds ss_lock. */
static u32 smbd_reg_free_count(struct smbd_sock *sk)
{
	struct smbd_reg *reg;
	u32 n = 0;

	lockdep_assert_held(&sk->ss_lock);
	list_for_each_entry(reg, &sk->ss_rdma.reg_free, reg_node)
		n++;
	return n;
}

static bool smbd_reg_available(struct smbd_sock *sk, u32 want)
{
	bool ok;

	spin_lock_bh(&sk->ss_lock);
	ok = sk->ss_state != SMBD_CONNECTED ||
	     smbd_reg_free_count(sk) >= want;
	spin_unlock_bh(&sk->ss_lock);
	return ok;
}

/*
 * Take an MR from the pool; NULL once disconnected, or when the pool is
 * empty and @want is 0. With @want, first wait until @want are free: a
 * thread waits holding none, so that threads needing several MRs each
 * cannot hold the pool between them.
 */
static struct smbd_reg *smbd_reg_get(struct smbd_sock *sk, u32 want)
{
	struct smbd_reg *reg = NULL;

	for (;;) {
		if (want && wait_event_killable(sk->ss_res_wq,
						smbd_reg_available(sk, want)))
			return NULL;
		spin_lock_bh(&sk->ss_lock);
		if (sk->ss_state == SMBD_CONNECTED) {
			reg = list_first_entry_or_null(&sk->ss_rdma.reg_free,
						       struct smbd_reg,
						       reg_node);
			if (reg)
				list_del_init(&reg->reg_node);
		}
		spin_unlock_bh(&sk->ss_lock);
		/* Another thread may have taken it since the wait. */
		if (reg || !want || READ_ONCE(sk->ss_state) != SMBD_CONNECTED)
			return reg;
	}
}

static void smbd_reg_put(struct smbd_sock *sk, struct smbd_reg *reg)
{
	if (reg->reg_mapped)
		ib_dma_unmap_sg(sk->ss_ep.ibdev, reg->reg_sgl, reg->reg_nents,
				reg->reg_dir);
	reg->reg_mapped = false;
	reg->reg_next = NULL;
	spin_lock_bh(&sk->ss_lock);
	reg->reg_live = false;
	reg->reg_remote_inv = false;
	list_add(&reg->reg_node, &sk->ss_rdma.reg_free);
	spin_unlock_bh(&sk->ss_lock);
	smbd_wake_all(&sk->ss_res_wq);
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
		      smbd_sg_entries(it, iov_iter_count(it),
				      reg->reg_max_pages));
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

/* What smbd_register()'s @flags open: the DMA direction and MR access. */
static int smbd_reg_access(unsigned int flags, enum dma_data_direction *dir,
			   int *access)
{
	if (flags == SMBD_REG_PEER_WRITES) {
		*dir = DMA_FROM_DEVICE;
		*access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE;
	} else if (flags == SMBD_REG_PEER_READS) {
		*dir = DMA_TO_DEVICE;
		*access = IB_ACCESS_REMOTE_READ;
	} else {
		return -EINVAL;
	}
	return 0;
}

/* A registration's MRs while smbd_register() builds it. */
struct smbd_reg_chain {
	struct smbd_reg *first;
	struct smbd_reg **tail;		/* where the next one goes */
	struct smbd_reg *last;		/* mapped, its REG_MR built */
	size_t taken;			/* bytes of the iterator they cover */
	int n;				/* descriptors filled */
};

/* Give the chain's MRs back and its bytes to the iterator: start again. */
static void smbd_reg_chain_reset(struct smbd_sock *sk,
				 struct smbd_reg_chain *c,
				 struct iov_iter *iter)
{
	smbd_reg_put_all(sk, c->first);
	iov_iter_revert(iter, c->taken);
	c->first = NULL;
	c->tail = &c->first;
	c->last = NULL;
	c->taken = 0;
	c->n = 0;
}

/*
 * Map the next part of @iter with @reg: its pages for the device, then its
 * MR under a fresh rkey; build the MR's REG_MR request and the Buffer
 * Descriptor V1 @desc the peer will use ([MS-SMBD] 2.2.3.1). Returns the
 * bytes taken, or why none (@reg stays on the caller's chain).
 */
static ssize_t smbd_reg_map(struct smbd_sock *sk, struct smbd_reg *reg,
			    struct iov_iter *iter,
			    enum dma_data_direction dir, int access,
			    struct smbd_buf_desc *desc)
{
	struct ib_mr *mr = reg->reg_mr;
	size_t got;
	int nents;

	got = smbd_reg_fill(reg, iter);
	if (!got)
		return -EFAULT;
	reg->reg_dir = dir;
	nents = smbd_should_fail(SMBD_FAIL_DMA) ? 0 :
		ib_dma_map_sg(sk->ss_ep.ibdev, reg->reg_sgl,
			      reg->reg_nents, dir);
	if (!nents)
		return -ENOMEM;
	reg->reg_mapped = true;
	if (smbd_should_fail(SMBD_FAIL_MR) ||
	    ib_map_mr_sg(mr, reg->reg_sgl, nents, NULL,
			 PAGE_SIZE) != nents)
		return -EIO;
	ib_update_fast_reg_key(mr, ib_inc_rkey(mr->rkey));
	reg->reg_wr = (struct ib_reg_wr) {
		.wr.opcode = IB_WR_REG_MR,
		.wr.wr_cqe = &reg->reg_cqe.cqe,
		.mr = mr,
		.key = mr->rkey,
		.access = access,
	};
	desc->offset = mr->iova;
	desc->token = mr->rkey;
	desc->length = mr->length;
	trace_smbd_mr_reg(sk, mr->rkey, mr->length,
			  access & IB_ACCESS_REMOTE_WRITE);
	return got;
}

/*
 * Post the chain's REG_MR requests, the last one signalled. On failure the
 * connection ends and nothing of the chain runs.
 */
static int smbd_reg_post(struct smbd_sock *sk, struct smbd_reg_chain *c)
{
	const struct ib_send_wr *bad = NULL;
	struct smbd_reg *reg;
	int ret;

	c->last->reg_wr.wr.send_flags = IB_SEND_SIGNALED;
	/* Before the post: a completion may not find them dead. */
	spin_lock_bh(&sk->ss_lock);
	for (reg = c->first; reg; reg = reg->reg_next)
		reg->reg_live = true;
	sk->ss_stats.mrs_registered += c->n;
	spin_unlock_bh(&sk->ss_lock);
	ret = smbd_post(sk, &c->first->reg_wr.wr, &bad, SMBD_POST_GATE);
	if (ret) {
		smbd_sock_error(sk, ret);
		/*
		 * [MS-SMBD] 3.1.4.3: a registration that failed leaves
		 * nothing open to the peer. Part of the chain may be on the
		 * queue: once fenced, none of it runs and the queue pair
		 * reaches nothing.
		 */
		if (bad != &c->first->reg_wr.wr)
			smbd_qp_fence(sk);
	}
	return ret;
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
 * smbd_deregister() and by the connection's end), holding no MR while
 * it waits.
 * Return: the number of descriptors; -EINVAL (bad flags, empty buffer),
 * -EOPNOTSUPP (a responder created without an MR pool, params.mr_count 0),
 * -EMSGSIZE (above MaxReadWriteSize), -E2BIG (more descriptors needed
 * than @max_descs), -ENOBUFS (more MRs needed than the pool holds),
 * -ENOTCONN, -EFAULT, -ENOMEM, -EIO, or the connection's error. On error
 * nothing stays registered, and nothing the device may still touch.
 */
int smbd_register(struct smbd_sock *sk, struct iov_iter *iter,
		  unsigned int flags, struct smbd_buf_desc *descs,
		  u32 max_descs, struct smbd_reg **regp)
{
	struct smbd_reg_chain c = { .tail = &c.first };
	size_t len = iov_iter_count(iter);
	enum dma_data_direction dir;
	struct smbd_reg *reg;
	struct smbd_op *busy;
	int access, ret = 0;
	u32 want = 1;

	might_sleep();
	*regp = NULL;
	ret = smbd_reg_access(flags, &dir, &access);
	if (ret)
		return ret;
	if (!len || !max_descs)
		return -EINVAL;
	if (len > READ_ONCE(sk->ss_neg.max_read_write_size))
		return -EMSGSIZE;
	if (user_backed_iter(iter))
		return -EFAULT;
	busy = smbd_op_start(sk, true, GFP_KERNEL);
	if (IS_ERR(busy))
		return PTR_ERR(busy);
	/* Fixed once connected: a responder that asked for no pool. */
	if (!sk->ss_rdma.nr_reg)
		ret = -EOPNOTSUPP;

	while (!ret && iov_iter_count(iter)) {
		ssize_t got;

		if (c.n == max_descs) {
			ret = -E2BIG;
			break;
		}
		/* After a restart, wait for as many as it took before. */
		reg = smbd_reg_get(sk, want > 1 ? want : 0);
		want = 1;
		if (!reg && c.n && READ_ONCE(sk->ss_state) == SMBD_CONNECTED) {
			/*
			 * The pool ran dry halfway: give back what this
			 * registration holds and start again once it could
			 * have one more.
			 */
			if (c.n >= sk->ss_rdma.nr_reg) {
				ret = -ENOBUFS;
				break;
			}
			want = c.n + 1;
			smbd_reg_chain_reset(sk, &c, iter);
			continue;
		}
		if (!reg && !c.n)
			reg = smbd_reg_get(sk, 1);
		if (!reg) {
			ret = READ_ONCE(sk->ss_err) ?: -ENOTCONN;
			break;
		}
		*c.tail = reg;
		c.tail = &reg->reg_next;
		got = smbd_reg_map(sk, reg, iter, dir, access, &descs[c.n]);
		if (got < 0) {
			ret = got;
			break;
		}
		c.taken += got;
		if (c.last)
			c.last->reg_wr.wr.next = &reg->reg_wr.wr;
		c.last = reg;
		c.n++;
	}
	if (!ret && c.last)
		ret = smbd_reg_post(sk, &c);
	if (ret) {
		smbd_reg_put_all(sk, c.first);
		c.n = ret;
	} else {
		*regp = c.first;
	}
	smbd_op_end(sk, busy);
	return c.n;
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
	u32 local = 0, remote = 0;
	struct smbd_reg *r;
	struct smbd_op *op;
	int ret = 0;

	might_sleep();
	if (!reg)
		return 0;
	/* Small, and the buffer cannot go back without it. */
	op = smbd_op_start(sk, false, GFP_KERNEL | __GFP_NOFAIL);
	if (IS_ERR(op)) {
		/*
		 * The teardown closed the gate: once it is done (its mutex)
		 * the queue pair is drained and gone, and the MRs with it.
		 */
		mutex_lock(&sk->ss_ep.teardown_mutex);
		smbd_reg_put_all(sk, reg);
		mutex_unlock(&sk->ss_ep.teardown_mutex);
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
			.wr_cqe = &r->reg_cqe.cqe,
			.ex.invalidate_rkey = r->reg_mr->rkey,
		};
		*tail = &r->reg_inv_wr;
		tail = &r->reg_inv_wr.next;
		last = &r->reg_inv_wr;
		local++;
		trace_smbd_mr_inv(sk, r->reg_mr->rkey, SMBD_TRACE_INV_LOCAL);
	}
	sk->ss_stats.mrs_local_inv += local;
	sk->ss_stats.mrs_remote_inv += remote;
	spin_unlock_bh(&sk->ss_lock);

	if (last) {
		last->wr_cqe = &op->op_cqe.cqe;
		last->send_flags = IB_SEND_SIGNALED;
		/*
		 * Refused (the connection is failing), taken in part, or
		 * completed in error: smbd_op_wait() fences, and a fenced
		 * queue pair reaches no MR ([MS-SMBD] 3.1.4.4).
		 */
		smbd_op_post(sk, op, head);
		ret = smbd_op_wait(sk, op);
	}
	/* Still on ss_op_list: teardown waits before it frees the MRs. */
	smbd_reg_put_all(sk, reg);
	smbd_op_end(sk, op);
	return ret;
}
EXPORT_SYMBOL_NS_GPL(smbd_deregister, SMBD);

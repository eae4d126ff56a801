// SPDX-License-Identifier: GPL-2.0
/*
 * smbd: the consumer's reads ([MS-SMBD] 3.1.4.2 "receive", 3.1.5.8).
 *
 * Received payload waits on ss_rx.ready in its receive buffer and is
 * copied from there into the consumer's iov_iter, as whole messages
 * (smbd_sock_recv()) or as SMB2-over-TCP framing (smbd_sock_recv_stream()).
 * Each buffer read empty goes back to be reposted when the reader finds
 * nothing more to read (at once when the peer runs short of credits), and
 * a grant that is then due leaves from the reader's own thread.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/errno.h>
#include <linux/slab.h>
#include <linux/uio.h>
#include <rdma/ib_verbs.h>

#include "smbd_internal.h"

/*
 * Repost the buffers the reader gave back. A grant that is due goes out
 * from here, on the reader's thread: no work item between the reader
 * freeing buffers and the peer hearing of them ([MS-SMBD] 3.1.5.8).
 */
static void smbd_rx_repost(struct smbd_sock *sk)
{
	bool grant, waiters;
	int ret = 0;

	lockdep_assert_held(&sk->ss_recv_mutex);
	sk->ss_rx.repost_due = false;
	spin_lock_bh(&sk->ss_lock);
	if (sk->ss_state == SMBD_CONNECTED)
		ret = smbd_post_recvs(sk, sk->ss_tx.waiters > 0);
	if (ret < 0) {
		spin_unlock_bh(&sk->ss_lock);
		pr_info_ratelimited("reposting receives failed: %d\n",
				    ret);
		smbd_sock_error(sk, -ECONNABORTED);
		return;
	}
	grant = sk->ss_state == SMBD_CONNECTED &&
		smbd_cred_grant_due(&sk->ss_cred);
	waiters = sk->ss_tx.waiters;
	spin_unlock_bh(&sk->ss_lock);
	/*
	 * Not the write_space upcall from inside the consumer's own receive
	 * call: the grant work makes it.
	 */
	if (grant && smbd_send_empty(sk))
		smbd_owe_write_space(sk);
	/* A sender held back by the last-credit rule may go on now. */
	if (waiters)
		wake_up_all(&sk->ss_send_wq);
}

/*
 * Give consumed buffers back. They are reposted when the reader pauses
 * (smbd_rx_idle(): it finds nothing more to read), so that a post is not
 * between a message and the consumer that waits for it; the next receive
 * completion reposts them too. At once when the peer is short of credits
 * or a sender waits for one (@now, or either seen here): the peer must
 * not wait on our reader.
 */
static void smbd_rx_return(struct smbd_sock *sk, struct list_head *done,
			   bool now)
{
	bool space;

	lockdep_assert_held(&sk->ss_recv_mutex);
	spin_lock_bh(&sk->ss_lock);
	/*
	 * A sender held back by the last-credit rule ([MS-SMBD] 3.1.5.1:
	 * one Send Credit, nothing to grant) can send once a buffer is back
	 * to be posted and granted. A blocking one is woken below; a
	 * non-blocking one waits for write_space, which no completion may
	 * bring: the grant work makes it, not this receive call.
	 */
	space = !smbd_space_locked(sk, true);
	list_splice_init(done, &sk->ss_rx.free);
	space = space && smbd_space_locked(sk, true);
	now = now || sk->ss_tx.waiters ||
	      smbd_cred_recv_short(&sk->ss_cred, SMBD_RX_WAKE_SEGS);
	spin_unlock_bh(&sk->ss_lock);
	if (space)
		smbd_owe_write_space(sk);
	if (now)
		smbd_rx_repost(sk);
	else
		sk->ss_rx.repost_due = true;
}

/* The reader found nothing to read: repost what it gave back. */
static void smbd_rx_idle(struct smbd_sock *sk)
{
	if (sk->ss_rx.repost_due)
		smbd_rx_repost(sk);
}

static bool smbd_rx_ready(struct smbd_sock *sk)
{
	return !list_empty_careful(&sk->ss_rx.ready) ||
	       READ_ONCE(sk->ss_state) != SMBD_CONNECTED;
}

/*
 * Wait for data. With @started, a message is half read: we must not give
 * up on a signal (its rest would be taken for a new message), only on a
 * fatal one, which ends the connection.
 */
static int smbd_rx_wait(struct smbd_sock *sk, bool nonblock, bool started)
{
	int ret;

	smbd_rx_idle(sk);
	if (nonblock)
		return -EAGAIN;
	if (!started)
		return wait_event_interruptible(sk->ss_recv_wq, smbd_rx_ready(sk));
	ret = wait_event_killable(sk->ss_recv_wq, smbd_rx_ready(sk));
	if (ret)
		smbd_sock_error(sk, -EINTR);
	return ret;
}

/*
 * A non-blocking smbd_sock_recv() found no whole message. Every fragment
 * queued then belongs to the one message in progress ([MS-SMBD] 3.1.5.8:
 * messages arrive whole and in order), and each holds a receive buffer
 * that backs one of the peer's Send Credits. A message may be longer
 * than all receive buffers together (MaxFragmentedSize against
 * ReceiveCreditMax x MaxReceiveSize): held there, it would take every
 * credit the peer could get and never complete (3.1.5.9 grants only
 * receives really posted). So move the fragments' payload into a buffer
 * of the socket's own, sized by the message length the first fragment
 * gives (the data length plus RemainingDataLength, checked against
 * MaxFragmentedRecvSize on receipt), and give the receive buffers back
 * to be reposted and granted.
 *
 * Returns 0 once a whole message is queued (the moved head, if any, is
 * in ss_rx.part), -EAGAIN while it is not, the connection's error once
 * it is lost without a whole message, -ENOMEM.
 */
static int smbd_rx_absorb(struct smbd_sock *sk)
{
	struct smbd_recv_ctx *rx;

	lockdep_assert_held(&sk->ss_recv_mutex);
	for (;;) {
		LIST_HEAD(held);
		bool up;
		int err;

		spin_lock_bh(&sk->ss_lock);
		if (sk->ss_rx.complete_msgs) {
			spin_unlock_bh(&sk->ss_lock);
			return 0;
		}
		up = sk->ss_state == SMBD_CONNECTED;
		err = sk->ss_err;
		/* A message that can no longer complete is not worth a copy. */
		if (up)
			list_splice_init(&sk->ss_rx.ready, &held);
		spin_unlock_bh(&sk->ss_lock);
		if (!up)
			return err ?: -ENOTCONN;
		if (list_empty(&held))
			return -EAGAIN;

		rx = list_first_entry(&held, struct smbd_recv_ctx, rx_node);
		err = 0;
		if (!sk->ss_rx.part) {
			/* Only a consumer mixing both read calls gets here. */
			if (WARN_ON_ONCE(!rx->rx_first))
				err = -EINVAL;
			else
				sk->ss_rx.part = kvmalloc(rx->rx_msg_total,
							  GFP_KERNEL |
							  __GFP_NOWARN);
			if (!err && !sk->ss_rx.part)
				err = -ENOMEM;
			if (err) {
				/* Back where they were, ahead of later ones. */
				spin_lock_bh(&sk->ss_lock);
				list_splice(&held, &sk->ss_rx.ready);
				spin_unlock_bh(&sk->ss_lock);
				return err;
			}
			sk->ss_rx.part_size = rx->rx_msg_total;
			sk->ss_rx.part_len = 0;
		}
		list_for_each_entry(rx, &held, rx_node) {
			/* Reassembly keeps a message within its stated length. */
			if (WARN_ON_ONCE(rx->rx_data_len > sk->ss_rx.part_size -
						   sk->ss_rx.part_len)) {
				err = -EPROTO;
				break;
			}
			memcpy(sk->ss_rx.part + sk->ss_rx.part_len,
			       rx->rx_buf + rx->rx_data_off, rx->rx_data_len);
			sk->ss_rx.part_len += rx->rx_data_len;
		}
		smbd_rx_return(sk, &held, true);
		if (err) {
			/* Never hand out what is left of it as a message. */
			smbd_rx_part_free(sk);
			smbd_sock_error(sk, err);
			return err;
		}
	}
}

/*
 * Copy the fragments on @done into @to, as much as fits (*@trunc set if
 * not all did), and the last one's InvalidatedToken into @info. Returns
 * the bytes they held.
 */
static u32 smbd_rx_copy(struct list_head *done, struct iov_iter *to,
			struct smbd_recv_info *info, bool *trunc)
{
	struct smbd_recv_ctx *rx;
	u32 len = 0;

	list_for_each_entry(rx, done, rx_node) {
		u32 n = min_t(u32, rx->rx_data_len, iov_iter_count(to));

		if (n && copy_to_iter(rx->rx_buf + rx->rx_data_off, n, to) != n)
			*trunc = true;
		if (n < rx->rx_data_len)
			*trunc = true;
		len += rx->rx_data_len;
		if (rx->rx_last && info) {
			info->invalidated = rx->rx_invalidated;
			info->token = rx->rx_token;
		}
	}
	return len;
}

/**
 * smbd_sock_recv() - receive one whole upper-layer message
 * @sk: a connected socket
 * @to: where the message goes
 * @flags: %SMBD_RECV_NONBLOCK
 * @info: about the message; may be NULL
 *
 * Messages come whole and in order ([MS-SMBD] 3.1.5.8). A message
 * longer than @to is consumed and cut: -EMSGSIZE, with its length in
 * @info. Fragments are copied out as they arrive, so a message larger
 * than all receive buffers together still comes through: a blocking call
 * copies them into @to and waits for the rest; a non-blocking call that
 * finds only part of a message moves that part into a buffer of the
 * socket's own (allocated then, as large as the message) and returns
 * -EAGAIN, so the receive buffers go back to the peer; the call that
 * finds the last fragment returns the whole message. Do not mix with
 * smbd_sock_recv_stream() on one socket.
 *
 * Context: process; sleeps unless %SMBD_RECV_NONBLOCK, which never waits
 * for the peer but may sleep in a GFP_KERNEL allocation.
 * Return: the message length; -EAGAIN; -EMSGSIZE; -ENOMEM (non-blocking,
 * nothing consumed); the connection's error once it is lost and no
 * whole message is queued; -ERESTARTSYS.
 */
ssize_t smbd_sock_recv(struct smbd_sock *sk, struct iov_iter *to,
		       unsigned int flags, struct smbd_recv_info *info)
{
	bool nonblock = flags & SMBD_RECV_NONBLOCK, started = false;
	bool last = false, trunc = false;
	struct smbd_recv_ctx *rx, *tmp;
	u32 msg_len = 0;
	ssize_t ret;

	if (nonblock) {
		if (!mutex_trylock(&sk->ss_recv_mutex))
			return -EAGAIN;
		ret = smbd_rx_absorb(sk);
		if (ret)
			goto out;
	} else if (mutex_lock_interruptible(&sk->ss_recv_mutex)) {
		return -ERESTARTSYS;
	}

	if (sk->ss_rx.part) {
		/* The head a non-blocking call moved out: the message began. */
		u32 n = min_t(u32, sk->ss_rx.part_len, iov_iter_count(to));

		if (n && copy_to_iter(sk->ss_rx.part, n, to) != n)
			trunc = true;
		if (n < sk->ss_rx.part_len)
			trunc = true;
		msg_len = sk->ss_rx.part_len;
		started = true;
		smbd_rx_part_free(sk);
	}

	while (!last) {
		LIST_HEAD(done);

		spin_lock_bh(&sk->ss_lock);
		if (list_empty(&sk->ss_rx.ready) ||
		    (nonblock && !started && !sk->ss_rx.complete_msgs)) {
			bool up = sk->ss_state == SMBD_CONNECTED;
			int err = sk->ss_err;

			spin_unlock_bh(&sk->ss_lock);
			if (!up && list_empty_careful(&sk->ss_rx.ready)) {
				ret = err ?: -ENOTCONN;
				goto out;
			}
			ret = smbd_rx_wait(sk, nonblock, started);
			if (ret)
				goto out;
			continue;
		}
		list_for_each_entry_safe(rx, tmp, &sk->ss_rx.ready, rx_node) {
			list_move_tail(&rx->rx_node, &done);
			if (rx->rx_last) {
				sk->ss_rx.complete_msgs--;
				last = true;
				break;
			}
		}
		spin_unlock_bh(&sk->ss_lock);

		msg_len += smbd_rx_copy(&done, to, info, &trunc);
		started = true;
		smbd_rx_return(sk, &done, false);
	}
	if (info)
		info->msg_len = msg_len;
	/* Not the conditional operator: u32 would turn -EMSGSIZE positive. */
	ret = msg_len;
	if (trunc)
		ret = -EMSGSIZE;
out:
	if (ret == -EAGAIN)
		smbd_rx_idle(sk);
	mutex_unlock(&sk->ss_recv_mutex);
	return ret;
}
EXPORT_SYMBOL_NS_GPL(smbd_sock_recv, SMBD);

/*
 * The stream's 4-byte big-endian length of the message being read ahead
 * of its data, or what a short read left of it. Returns the bytes copied
 * or -EFAULT. Caller holds ss_recv_mutex.
 */
static ssize_t smbd_stream_hdr(struct smbd_sock *sk, struct iov_iter *to)
{
	/* No data of this message read yet: msg_left is its length. */
	__be32 hdr = cpu_to_be32(sk->ss_rx.stream_msg_left);
	u32 off = 4 - sk->ss_rx.stream_hdr_left;
	u32 n = min_t(u32, sk->ss_rx.stream_hdr_left, iov_iter_count(to));

	lockdep_assert_held(&sk->ss_recv_mutex);
	if (copy_to_iter((u8 *)&hdr + off, n, to) != n)
		return -EFAULT;
	sk->ss_rx.stream_hdr_left -= n;
	return n;
}

/*
 * The payload of @rx into @to, as much as fits. A buffer read whole goes
 * back to the receive queue; *@end is set when it was its message's last.
 * Returns the bytes copied or -EFAULT. Caller holds ss_recv_mutex.
 */
static ssize_t smbd_stream_data(struct smbd_sock *sk,
				struct smbd_recv_ctx *rx, struct iov_iter *to,
				bool *end)
{
	u32 n = min_t(u32, rx->rx_data_len, iov_iter_count(to));
	LIST_HEAD(done);
	bool last;

	lockdep_assert_held(&sk->ss_recv_mutex);
	*end = false;
	if (n && copy_to_iter(rx->rx_buf + rx->rx_data_off, n, to) != n)
		return -EFAULT;
	rx->rx_data_off += n;
	rx->rx_data_len -= n;
	sk->ss_rx.stream_msg_left -= n;
	if (rx->rx_data_len)
		return n;
	/* Read before the buffer goes back: a receive may reuse it at once. */
	last = rx->rx_last;
	spin_lock_bh(&sk->ss_lock);
	list_move_tail(&rx->rx_node, &done);
	if (last)
		sk->ss_rx.complete_msgs--;
	spin_unlock_bh(&sk->ss_lock);
	smbd_rx_return(sk, &done, false);
	if (last) {
		sk->ss_rx.stream_msg_left = 0;
		*end = true;
	}
	return n;
}

/**
 * smbd_sock_recv_stream() - read messages as SMB2-over-TCP framing
 * @sk: a connected socket
 * @to: where the bytes go
 * @flags: %SMBD_RECV_NONBLOCK
 *
 * For consumers written for SMB2 over TCP (cifs, ksmbd): each message
 * reads as a 4-byte big-endian length followed by the message, the way
 * Direct TCP frames it ([MS-SMB2] 2.1). A read stops at the end of a
 * message. Do not mix with smbd_sock_recv() on one socket.
 *
 * That header's first byte is zero and its length 24 bits: a message
 * longer than %SMBD_STREAM_MAX_MSG cannot be framed, and the reader
 * could not skip it, so it ends the connection with -EMSGSIZE. Only a
 * socket whose max_fragmented_recv_size exceeds that limit can receive
 * one.
 *
 * Context: process; sleeps unless %SMBD_RECV_NONBLOCK.
 * Return: bytes read (0 only for an empty @to); -EAGAIN; -EMSGSIZE
 * when the next message is longer than %SMBD_STREAM_MAX_MSG; the
 * connection's error once it is lost and nothing is queued;
 * -ERESTARTSYS.
 */
ssize_t smbd_sock_recv_stream(struct smbd_sock *sk, struct iov_iter *to,
			      unsigned int flags)
{
	bool nonblock = flags & SMBD_RECV_NONBLOCK;
	struct smbd_recv_ctx *rx;
	ssize_t copied = 0;
	int ret;

	if (nonblock) {
		if (!mutex_trylock(&sk->ss_recv_mutex))
			return -EAGAIN;
	} else if (mutex_lock_interruptible(&sk->ss_recv_mutex)) {
		return -ERESTARTSYS;
	}

	while (iov_iter_count(to)) {
		bool mid = sk->ss_rx.stream_hdr_left || sk->ss_rx.stream_msg_left;
		bool end;
		ssize_t n;

		spin_lock_bh(&sk->ss_lock);
		rx = list_first_entry_or_null(&sk->ss_rx.ready,
					      struct smbd_recv_ctx, rx_node);
		if (!rx) {
			bool up = sk->ss_state == SMBD_CONNECTED;

			spin_unlock_bh(&sk->ss_lock);
			if (copied)
				break;
			if (!up && list_empty_careful(&sk->ss_rx.ready)) {
				ret = READ_ONCE(sk->ss_err) ?: -ENOTCONN;
				goto out_err;
			}
			ret = smbd_rx_wait(sk, nonblock, mid);
			if (ret)
				goto out_err;
			continue;
		}
		if (!mid) {
			if (copied)	/* stop at a message boundary */
				goto unlock_break;
			if (rx->rx_msg_total > SMBD_STREAM_MAX_MSG) {
				spin_unlock_bh(&sk->ss_lock);
				smbd_sock_error(sk, -EMSGSIZE);
				ret = -EMSGSIZE;
				goto out_err;
			}
			sk->ss_rx.stream_hdr_left = 4;
			sk->ss_rx.stream_msg_left = rx->rx_msg_total;
		}
		spin_unlock_bh(&sk->ss_lock);

		if (sk->ss_rx.stream_hdr_left) {
			n = smbd_stream_hdr(sk, to);
			if (n < 0) {
				ret = n;
				goto out_err;
			}
			copied += n;
			if (sk->ss_rx.stream_hdr_left)
				break;
			continue;
		}
		n = smbd_stream_data(sk, rx, to, &end);
		if (n < 0) {
			ret = n;
			goto out_err;
		}
		copied += n;
		if (end)
			break;
		continue;
unlock_break:
		spin_unlock_bh(&sk->ss_lock);
		break;
	}
	mutex_unlock(&sk->ss_recv_mutex);
	return copied;
out_err:
	mutex_unlock(&sk->ss_recv_mutex);
	return copied ?: ret;
}
EXPORT_SYMBOL_NS_GPL(smbd_sock_recv_stream, SMBD);

// SPDX-License-Identifier: GPL-2.0
/*
 * smbd: the writers' side ([MS-SMBD] 3.1.4.2, 3.1.5.1, 3.1.6.2), as
 * smbd_read.c is the readers'. smbd_sock_send() and smbd_sock_send_inv()
 * with SEND_MORE, the send mutex and what those who found it taken leave
 * to its holder, the write_space upcall, and the empty messages (credit
 * grants, keep-alives and their answers) sent from the grant and
 * keep-alive works on smbd_wq or from a reader's thread. Every message
 * goes through the send engine (smbd_send.c: smbd_send_msg()).
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <kunit/visibility.h>
#include <linux/errno.h>
#include <linux/uio.h>
#include <rdma/ib_verbs.h>

#include "smbd_internal.h"
#include "smbd_trace.h"

/*
 * The send mutex for one that must not wait for it. If it is taken, the
 * holder is told (@owed) before a last try, and its unlock settles what
 * is owed (smbd_send_release()): the holder may post nothing more, so
 * neither a completion nor its next message may come to do it.
 * @owed: ss_tx.nb_waiting for a non-blocking sender, which waits for
 * write_space; ss_tx.grant_owed for an empty message (smbd_send_empty()).
 */
static bool smbd_send_trylock(struct smbd_sock *sk, bool *owed)
{
	if (mutex_trylock(&sk->ss_send_mutex))
		return true;
	WRITE_ONCE(*owed, true);
	smp_mb();	/* the flag before the retry; see smbd_send_release() */
	return mutex_trylock(&sk->ss_send_mutex);
}

/*
 * Let the send mutex go, and settle what those who found it taken
 * meanwhile left to us (smbd_send_trylock()). An empty message that
 * could not go has the grant work decide again, so that a grant due is
 * not lost ([MS-SMBD] 3.1.5.8, 3.1.5.9) and a keep-alive not missed
 * (3.1.6.2); a late decision costs nothing (smbd_cred_empty_begin()).
 * Each flag is taken and cleared at once, so that of two unlocks only
 * one settles it.
 * Returns true when a non-blocking sender found the mutex taken: the
 * caller owes it the write_space upcall.
 */
static bool smbd_send_release(struct smbd_sock *sk)
{
	mutex_unlock(&sk->ss_send_mutex);
	smp_mb();	/* the unlock before the flags; see smbd_send_trylock() */
	if (READ_ONCE(sk->ss_tx.grant_owed) && xchg(&sk->ss_tx.grant_owed, false))
		queue_work(smbd_wq, &sk->ss_grant_work);
	return READ_ONCE(sk->ss_tx.nb_waiting) &&
	       xchg(&sk->ss_tx.nb_waiting, false);
}

/**
 * smbd_write_space() - the write_space upcall, if a send could go now
 * @sk: the socket
 *
 * Context: process.
 */
void smbd_write_space(struct smbd_sock *sk)
{
	const struct smbd_sock_ops *ops;
	bool space;

	spin_lock_bh(&sk->ss_lock);
	ops = sk->ss_ops;
	space = smbd_space_locked(sk, true);
	spin_unlock_bh(&sk->ss_lock);
	if (space && ops && ops->write_space)
		ops->write_space(sk);
}

/**
 * smbd_send_empty() - an empty message for credits or keep-alive
 * @sk: a connected socket
 *
 * Sent only if it has something to carry when it takes its credit: a
 * grant, a keep-alive answer or our keep-alive request
 * (smbd_cred_empty_begin(), [MS-SMBD] 3.1.5.1, 3.1.5.8, 3.1.6.2). Those
 * who decided to call this decided earlier, and another may have sent
 * it meanwhile: then nothing goes, and no Send Credit is spent. Never
 * between the segments of a half-sent message, never waiting for a
 * credit. When another sender holds the send mutex, its unlock has the
 * grant work decide again (ss_tx.grant_owed, smbd_send_release()); if the
 * holder sends another segment first, that one carries the grant.
 *
 * Context: process; does not sleep (takes ss_send_mutex only by trylock);
 * takes ss_lock (_bh).
 * Return: true when a non-blocking sender found the send mutex taken
 * meanwhile: the caller owes it smbd_write_space().
 */
bool smbd_send_empty(struct smbd_sock *sk)
{
	struct iov_iter it;

	if (!smbd_send_trylock(sk, &sk->ss_tx.grant_owed))
		return false;
	/* Never between the segments of a half-sent message. */
	if (sk->ss_tx.msg_done == sk->ss_tx.msg_len) {
		iov_iter_kvec(&it, ITER_SOURCE, NULL, 0, 0);
		smbd_send_msg(sk, &it, 1, NULL, NULL, true, true);
	}
	return smbd_send_release(sk);
}
EXPORT_SYMBOL_IF_KUNIT(smbd_send_empty);

/* Record one part of a SEND_MORE message; caller holds ss_send_mutex. */
static ssize_t smbd_send_more(struct smbd_sock *sk, struct iov_iter *from,
			      bool nonblock)
{
	size_t n = iov_iter_count(from);

	lockdep_assert_held(&sk->ss_send_mutex);
	if (nonblock || sk->ss_tx.msg_done < sk->ss_tx.msg_len)
		return -EOPNOTSUPP;
	if (sk->ss_tx.more_n == SMBD_MORE_MAX - 1)
		return -E2BIG;
	if (n > sk->ss_neg.max_fragmented_send_size - sk->ss_tx.more_len)
		return -EMSGSIZE;
	sk->ss_tx.more[sk->ss_tx.more_n++] = *from;
	sk->ss_tx.more_len += n;
	iov_iter_advance(from, n);
	return n;
}

/*
 * A sender lets the send mutex go. A non-blocking sender that found it
 * taken meanwhile (smbd_send_trylock()) got -EAGAIN and waits for
 * write_space; the completions of what we posted may all have run before
 * this unlock, with the mutex still taken, and none is left to bring the
 * upcall. The grant work makes it: not from inside the consumer's send.
 */
static void smbd_send_unlock(struct smbd_sock *sk)
{
	if (smbd_send_release(sk))
		smbd_owe_write_space(sk);
}

/**
 * smbd_owe_write_space() - have the grant work make the write_space upcall
 * @sk: the socket
 *
 * For a caller inside the consumer's own send or receive call, which
 * must not make the upcall itself; smbd_write_space() makes it only if a
 * send could go by then.
 *
 * Context: process or softirq; takes ss_lock (_bh).
 */
void smbd_owe_write_space(struct smbd_sock *sk)
{
	spin_lock_bh(&sk->ss_lock);
	sk->ss_tx.space_due = true;
	spin_unlock_bh(&sk->ss_lock);
	queue_work(smbd_wq, &sk->ss_grant_work);
}

static ssize_t __smbd_sock_send(struct smbd_sock *sk, struct iov_iter *from,
				unsigned int flags, const u32 *inv)
{
	bool nonblock = flags & SMBD_SEND_NONBLOCK;
	struct smbd_send_wait wait, *w;
	ssize_t ret;

	if (!nonblock)
		might_sleep();
	if (READ_ONCE(sk->ss_state) != SMBD_CONNECTED)
		return READ_ONCE(sk->ss_err) ?: -ENOTCONN;
	if (nonblock) {
		if (!smbd_send_trylock(sk, &sk->ss_tx.nb_waiting))
			return -EAGAIN;
	} else if (mutex_lock_interruptible(&sk->ss_send_mutex)) {
		return -ERESTARTSYS;
	}

	atomic_set(&wait.sw_pending, 1);
	wait.sw_err = 0;
	init_completion(&wait.sw_done);
	/* Copied sends do not wait for the device. */
	w = nonblock || flags & SMBD_SEND_COPY ? NULL : &wait;
	if (sk->ss_tx.more_n && nonblock) {
		ret = -EOPNOTSUPP;
	} else if (flags & SMBD_SEND_MORE) {
		ret = inv ? -EINVAL : smbd_send_more(sk, from, nonblock);
	} else if (sk->ss_tx.more_n) {
		sk->ss_tx.more[sk->ss_tx.more_n++] = *from;
		ret = smbd_send_msg(sk, sk->ss_tx.more, sk->ss_tx.more_n, w, inv,
				    false, false);
		/* The last part was consumed through its copy. */
		if (ret >= 0)
			iov_iter_advance(from, iov_iter_count(from));
		sk->ss_tx.more_n = 0;
		sk->ss_tx.more_len = 0;
	} else {
		ret = smbd_send_msg(sk, from, 1, w, inv, nonblock, false);
	}
	smbd_send_unlock(sk);

	/*
	 * Wait for every batch this send posted, uninterruptibly (the
	 * completions always come, flushed at worst, or teardown stands in
	 * for them): the device may still read the pages it mapped, and
	 * [MS-SMBD] 3.1.4.2 and 3.1.5.4 want the provider's result returned.
	 * A segment that did not complete makes the send fail, with the
	 * connection's error. The next sender is already posting meanwhile.
	 */
	if (!atomic_dec_and_test(&wait.sw_pending))
		wait_for_completion(&wait.sw_done);
	if (ret >= 0 && READ_ONCE(wait.sw_err))
		ret = READ_ONCE(sk->ss_err) ?: wait.sw_err;
	return ret;
}

/**
 * smbd_sock_send() - send one upper-layer message ([MS-SMBD] 3.1.4.2)
 * @sk: a connected socket
 * @from: the message (any kernel iov_iter); consumed as it is sent
 * @flags: %SMBD_SEND_NONBLOCK, %SMBD_SEND_MORE, %SMBD_SEND_COPY
 *
 * The message is cut into segments of at most MaxSendSize bytes
 * (3.1.5.4) that go out in order, never interleaved with another
 * message's; senders are served one message at a time in the order they
 * came. An empty @from sends an empty message: it carries credits and
 * keep-alive state and is delivered to nobody.
 *
 * Blocking (the default) waits for Send Credits, posts every segment
 * with @from's pages mapped for the device (no copy), and returns once
 * the device is done with them; @from's memory may be reused then. It
 * returns the count only if the device completed every segment; if one
 * failed, or was flushed, the connection is lost and the call returns
 * its error ([MS-SMBD] 3.1.4.2, 3.1.5.4). With
 * %SMBD_SEND_NONBLOCK the payload is copied and the call never sleeps:
 * it returns -EAGAIN when not even the first segment could go, or the
 * bytes of the segments that went; the rest of that message must be the
 * next send on this socket (the write_space upcall tells when to try
 * again). A non-blocking send does not wait for the device: a failure
 * after it returned shows as the connection's error on later calls.
 *
 * %SMBD_SEND_COPY: as blocking, but the payload is copied into smbd's
 * pre-mapped send buffers (a send context's slot, or for more than 488
 * bytes one of the connection's copy buffers, which it may wait for, as
 * for a credit) and the call returns once the segments are
 * posted, not completed, and as a non-blocking send it reports a later
 * failure on later calls. For small messages under the consumer's own
 * lock: one network round trip less per message held under it. On the
 * last part of a %SMBD_SEND_MORE message it copies every part, so all of
 * them may be reused on return; on other parts it does nothing, and
 * %SMBD_SEND_NONBLOCK takes precedence.
 *
 * With %SMBD_SEND_MORE, @from is one part of a message whose remaining
 * parts follow; nothing is sent and the part is not copied: the memory
 * and the kvec/bvec array behind @from must stay untouched until the
 * send of the last part (without %SMBD_SEND_MORE) returns, which sends
 * the whole message. At most %SMBD_MORE_MAX parts; one thread builds
 * such a message at a time; %SMBD_SEND_NONBLOCK is not supported for
 * them (-EOPNOTSUPP).
 *
 * Context: process; sleeps unless %SMBD_SEND_NONBLOCK. Takes the socket's
 * ss_send_mutex.
 * Return: bytes accepted (a part's length for %SMBD_SEND_MORE, the whole
 * message's for the last part); -EMSGSIZE above MaxFragmentedSendSize;
 * -E2BIG for too many parts; -EAGAIN; -ENOTCONN or the connection's
 * error once it is lost, or when a segment of a blocking send failed
 * (-ECONNABORTED if nothing else ended it first); -ERESTARTSYS.
 */
ssize_t smbd_sock_send(struct smbd_sock *sk, struct iov_iter *from,
		       unsigned int flags)
{
	return __smbd_sock_send(sk, from, flags, NULL);
}
EXPORT_SYMBOL_NS_GPL(smbd_sock_send, SMBD);

/**
 * smbd_sock_send_inv() - send a message that invalidates a peer's token
 * @sk: a connected socket
 * @from: the message, as for smbd_sock_send()
 * @flags: as for smbd_sock_send(); with %SMBD_SEND_MORE the token goes
 *	with the last part instead (-EINVAL here)
 * @remote_token: the peer's rkey (from its Buffer Descriptor) that the
 *	peer's device invalidates when the message arrives
 *
 * [MS-SMBD] 3.1.4.2 and 3.1.5.4: exactly one segment of the message, the
 * first, is a Send with Invalidate. An SMB2 server uses it on the
 * response to a READ or WRITE whose buffer it has finished with.
 *
 * Context: process; sleeps unless %SMBD_SEND_NONBLOCK.
 * Return: as smbd_sock_send().
 */
ssize_t smbd_sock_send_inv(struct smbd_sock *sk, struct iov_iter *from,
			   unsigned int flags, u32 remote_token)
{
	return __smbd_sock_send(sk, from, flags, &remote_token);
}
EXPORT_SYMBOL_NS_GPL(smbd_sock_send_inv, SMBD);

/**
 * smbd_grant_work() - send a credit grant or a keep-alive message
 * @work: ss_grant_work
 *
 * Queued by a receive completion when a grant or an answer is due
 * (smbd_cred_empty_due()), by whoever owes write_space, and by the unlock
 * of the send mutex when an empty message found it taken
 * (smbd_send_release()). It decides again what is due: a grant, an
 * answer, or our keep-alive request still pending ([MS-SMBD] 3.1.5.8,
 * 3.1.6.2).
 *
 * Context: process (smbd_wq).
 */
void smbd_grant_work(struct work_struct *work)
{
	struct smbd_sock *sk = container_of(work, struct smbd_sock,
					    ss_grant_work);
	bool due, space;

	spin_lock_bh(&sk->ss_lock);
	due = sk->ss_state == SMBD_CONNECTED &&
	      smbd_cred_empty_due(&sk->ss_cred, smbd_ka_msg_due(sk));
	space = sk->ss_tx.space_due;
	sk->ss_tx.space_due = false;
	spin_unlock_bh(&sk->ss_lock);
	if (due && smbd_send_empty(sk))
		space = true;
	if (space)
		smbd_write_space(sk);
}

/**
 * smbd_ka_work() - the idle connection timer ([MS-SMBD] 3.1.6.2)
 * @work: ss_ka_work
 *
 * Context: process (smbd_wq).
 */
void smbd_ka_work(struct work_struct *work)
{
	struct smbd_sock *sk = container_of(to_delayed_work(work),
					    struct smbd_sock, ss_ka_work);
	enum smbd_ka_action act;
	u32 rearm;

	spin_lock_bh(&sk->ss_lock);
	if (sk->ss_state != SMBD_CONNECTED) {
		spin_unlock_bh(&sk->ss_lock);
		return;
	}
	act = smbd_ka_on_timer(&sk->ss_ka, smbd_now_ms(), &rearm);
	if (rearm)
		mod_delayed_work(smbd_wq, &sk->ss_ka_work,
				 msecs_to_jiffies(rearm));
	spin_unlock_bh(&sk->ss_lock);

	if (act == SMBD_KA_ACT_TERMINATE) {
		trace_smbd_keepalive(sk, SMBD_TRACE_KA_TIMEOUT);
		pr_info_ratelimited("peer did not answer a keep-alive\n");
		smbd_sock_error(sk, -ETIMEDOUT);
	} else if (act == SMBD_KA_ACT_SEND && smbd_send_empty(sk)) {
		smbd_write_space(sk);
	}
}

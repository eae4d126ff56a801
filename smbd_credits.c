// SPDX-License-Identifier: GPL-2.0
/*
 * smbd: credit arithmetic, the pure part ([MS-SMBD] 3.1.5.1, 3.1.5.8,
 * 3.1.5.9).
 *
 * A credit is leave to send one message, backed by one receive buffer
 * posted at the peer. We keep two counts on the receive side: receives
 * posted, and of those the ones already announced to the peer in
 * CreditsGranted. A grant never exceeds what is posted, so the peer can
 * never send into an empty receive queue (which, with rnr_retry 0, kills
 * the queue pair); a peer that sends without a credit is caught here.
 *
 * The caller serialises every call on one connection (smbd holds the
 * socket's ss_lock; there is no lock of credits' own). These functions
 * only count; posting receives and sending messages is the caller's.
 */

#include <linux/kernel.h>
#include <linux/minmax.h>
#include <linux/module.h>

#include "smbd_proto.h"

/**
 * smbd_cred_init() - credit state once negotiation has succeeded
 * @c: the state
 * @p: local parameters
 * @n: values from negotiation
 *
 * [MS-SMBD] 3.1.5.6, 3.1.5.7: SendCredits starts at the CreditsGranted of
 * the Negotiate Response on the initiator and at zero on the responder;
 * ReceiveCreditTarget is the peer's CreditsRequested, which we cap at our
 * ReceiveCreditMax. No receive is counted yet: the negotiate receive is
 * not a credit.
 *
 * Context: any.
 */
void smbd_cred_init(struct smbd_credits *c, const struct smbd_params *p,
		    const struct smbd_negotiated *n)
{
	c->send_credits = n->send_credits;
	c->send_credit_target = p->send_credit_target;
	c->recv_credit_max = p->recv_credit_max;
	c->recv_credit_target = clamp_t(u16, n->peer_credits_requested, 1,
					p->recv_credit_max);
	c->recv_posted = 0;
	c->recv_granted = 0;
}
EXPORT_SYMBOL_IF_KUNIT(smbd_cred_init);

/**
 * smbd_cred_recv_wanted() - how many receives to post now
 * @c: the state
 * @send_queued: a message is waiting for a Send Credit
 *
 * [MS-SMBD] 3.1.5.9: fill up to ReceiveCreditTarget, never beyond
 * ReceiveCreditMax. When nothing is posted, or when only the last Send
 * Credit is left for a waiting message, post at least one more, so that
 * message has a credit to grant (the last-credit rule of 3.1.5.1) — as
 * long as ReceiveCreditMax allows and nothing posted is still ungranted.
 *
 * Context: any; the caller serialises the calls on one state (ss_lock).
 * Return: the number of receives to post; zero when none are wanted.
 */
u16 smbd_cred_recv_wanted(const struct smbd_credits *c, bool send_queued)
{
	u16 target = min(c->recv_credit_target, c->recv_credit_max);
	bool need_one;

	if (c->recv_posted < target)
		return target - c->recv_posted;

	need_one = !c->recv_posted ||
		   (c->send_credits == 1 && send_queued &&
		    !smbd_cred_ungranted(c));
	if (need_one && c->recv_posted < c->recv_credit_max)
		return 1;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(smbd_cred_recv_wanted);

/**
 * smbd_cred_recv_posted() - account receives really posted
 * @c: the state
 * @n: how many the provider accepted
 *
 * Only receives the provider accepted are counted, so only those can
 * ever be granted ([MS-SMBD] 3.1.5.9: "for each success"). Counting more
 * than ReceiveCreditMax is a bug in the caller and is clamped.
 *
 * Context: any; the caller serialises the calls on one state (ss_lock).
 */
void smbd_cred_recv_posted(struct smbd_credits *c, u16 n)
{
	u32 posted = (u32)c->recv_posted + n;

	if (WARN_ON_ONCE(posted > c->recv_credit_max))
		posted = c->recv_credit_max;
	c->recv_posted = posted;
}
EXPORT_SYMBOL_IF_KUNIT(smbd_cred_recv_posted);

/**
 * smbd_cred_recv_lost() - a posted receive completed in error
 * @c: the state
 *
 * [MS-SMBD] 3.1.5.9 counts only receives really posted: one the provider
 * flushed or failed is posted no more, and no credit may stand for it.
 * The queue pair is in the error state by then and the connection ends;
 * the counts stay consistent meanwhile, so nothing a late caller
 * computes from them (a grant, a wake-up) can exceed what is posted.
 *
 * Context: any; the caller serialises the calls on one state (ss_lock).
 */
void smbd_cred_recv_lost(struct smbd_credits *c)
{
	if (c->recv_posted)
		c->recv_posted--;
	c->recv_granted = min(c->recv_granted, c->recv_posted);
}
EXPORT_SYMBOL_IF_KUNIT(smbd_cred_recv_lost);

/**
 * smbd_cred_recv_short() - are receives running out at our side
 * @c: the state
 * @n: how few is short
 *
 * Receive buffers holding data the consumer has not read yet are not
 * posted, and only the reader gives them back. With @n or fewer posted,
 * the peer is about to run out of credits ([MS-SMBD] 3.1.5.1) until the
 * reader runs: the receive path wakes it for a part of a message, not
 * only for a whole one.
 *
 * Context: any; the caller serialises the calls on one state (ss_lock).
 * Return: true when at most @n receives are posted.
 */
bool smbd_cred_recv_short(const struct smbd_credits *c, u16 n)
{
	return c->recv_posted <= n;
}
EXPORT_SYMBOL_IF_KUNIT(smbd_cred_recv_short);

/**
 * smbd_cred_ungranted() - receives posted but not yet announced
 * @c: the state
 *
 * Context: any; the caller serialises the calls on one state (ss_lock).
 * Return: the credits the next message would grant.
 */
u16 smbd_cred_ungranted(const struct smbd_credits *c)
{
	return c->recv_posted - c->recv_granted;
}
EXPORT_SYMBOL_IF_KUNIT(smbd_cred_ungranted);

/**
 * smbd_cred_take_grant() - announce every receive posted and not yet granted
 * @c: the state
 *
 * For the CreditsGranted of a message being built: the responder's
 * Negotiate Response ([MS-SMBD] 3.1.5.6: CreditsGranted =
 * ReceiveCredits), and every Data Transfer message through
 * smbd_cred_send_begin().
 *
 * Context: any; the caller serialises the calls on one state (ss_lock).
 * Return: the credits granted, never more than receives posted.
 */
u16 smbd_cred_take_grant(struct smbd_credits *c)
{
	u16 grant = smbd_cred_ungranted(c);

	c->recv_granted += grant;
	return grant;
}
EXPORT_SYMBOL_IF_KUNIT(smbd_cred_take_grant);

/**
 * smbd_cred_grant_due() - should a message go out just to grant credits
 * @c: the state
 *
 * [MS-SMBD] 3.1.5.8 asks for a prompt grant when receives were reposted
 * and nothing else is queued. Granting after every single receive would
 * double the message count, so, like Windows and ksmbd, we grant in
 * batches: an empty message is due once the peer holds no more than a
 * quarter of its target and something is ungranted. A waiting upper-layer
 * message carries the grant anyway. With a target of one credit this is
 * "as soon as the peer holds none", which keeps single-credit operation
 * going.
 *
 * Context: any; the caller serialises the calls on one state (ss_lock).
 * Return: true when the caller should send a credit-only message.
 */
bool smbd_cred_grant_due(const struct smbd_credits *c)
{
	return smbd_cred_ungranted(c) &&
	       c->recv_granted <= c->recv_credit_target / 4;
}
EXPORT_SYMBOL_IF_KUNIT(smbd_cred_grant_due);

/**
 * smbd_cred_empty_due() - is an empty message due
 * @c: the state
 * @reply_due: the peer asked for an answer (SMB_DIRECT_RESPONSE_REQUESTED)
 *	that no message has carried yet
 *
 * [MS-SMBD] 3.1.5.8 and 3.1.6.2: a message that carries no payload goes
 * out for a grant that is due (smbd_cred_grant_due()) or to answer a
 * keep-alive at once. Whether it can go now is smbd_cred_send_begin()'s
 * to say: it too needs a Send Credit, and the last one only with a grant.
 *
 * Context: any; the caller serialises the calls on one state (ss_lock).
 * Return: true when the caller should send an empty message.
 */
bool smbd_cred_empty_due(const struct smbd_credits *c, bool reply_due)
{
	return reply_due || smbd_cred_grant_due(c);
}
EXPORT_SYMBOL_IF_KUNIT(smbd_cred_empty_due);

/**
 * smbd_cred_requested() - CreditsRequested for the next message
 * @c: the state
 *
 * [MS-SMBD] 3.1.5.1: every message asks for the Send Credit target we
 * negotiated (Connection.SendCreditTarget), which stays fixed.
 *
 * Context: any; the caller serialises the calls on one state (ss_lock).
 * Return: the CreditsRequested value.
 */
u16 smbd_cred_requested(const struct smbd_credits *c)
{
	return c->send_credit_target;
}
EXPORT_SYMBOL_IF_KUNIT(smbd_cred_requested);

/**
 * smbd_cred_send_begin() - take a Send Credit for the next message
 * @c: the state
 * @granted: CreditsGranted for that message, set on %SMBD_CRED_SEND
 *
 * [MS-SMBD] 3.1.5.1: no message goes out without a Send Credit, and the
 * last credit is spent only by a message that grants the peer at least
 * one: otherwise both sides could end up with none and wait forever.
 * Every message grants all receives posted and not yet announced.
 *
 * Context: any; the caller serialises the calls on one state (ss_lock).
 * Return: %SMBD_CRED_SEND with one credit consumed and the grant
 * accounted; otherwise nothing changed.
 */
enum smbd_cred_verdict smbd_cred_send_begin(struct smbd_credits *c,
					    u16 *granted)
{
	if (!c->send_credits)
		return SMBD_CRED_NO_CREDITS;
	if (c->send_credits == 1 && !smbd_cred_ungranted(c))
		return SMBD_CRED_LAST_CREDIT;

	c->send_credits--;
	*granted = smbd_cred_take_grant(c);
	return SMBD_CRED_SEND;
}
EXPORT_SYMBOL_IF_KUNIT(smbd_cred_send_begin);

/**
 * smbd_cred_empty_begin() - take a Send Credit for an empty message, if due
 * @c: the state
 * @answer_due: a keep-alive needs this message: the peer's
 *	SMB_DIRECT_RESPONSE_REQUESTED is still unanswered, or our own
 *	request is pending ([MS-SMBD] 3.1.5.1, 3.1.6.2)
 * @granted: CreditsGranted for that message, set on %SMBD_CRED_SEND
 *
 * An empty message carries nothing but its CreditsGranted and Flags.
 * [MS-SMBD] 3.1.5.8 sends one promptly only when the credits it returns
 * are more than zero, or to answer RESPONSE_REQUESTED; 3.1.6.2 sends one
 * for our own keep-alive. Whether one is due is decided apart from the
 * send (smbd_cred_empty_due(), the keep-alive timer), by more than one
 * party: one that sends after another has granted everything would
 * send a message granting nothing, which costs the peer a receive and
 * gives it nothing to go on. Decided here again, with the credit taken
 * in the same step, a late decision sends nothing. Otherwise the rules
 * of smbd_cred_send_begin() apply, the last credit (3.1.5.1) included.
 *
 * Context: any; the caller serialises the calls on one state (ss_lock).
 * Return: %SMBD_CRED_NOTHING_DUE when the message would carry nothing
 * (nothing changed), else as smbd_cred_send_begin().
 */
enum smbd_cred_verdict smbd_cred_empty_begin(struct smbd_credits *c,
					     bool answer_due, u16 *granted)
{
	if (!answer_due && !smbd_cred_ungranted(c))
		return SMBD_CRED_NOTHING_DUE;
	return smbd_cred_send_begin(c, granted);
}
EXPORT_SYMBOL_IF_KUNIT(smbd_cred_empty_begin);

/**
 * smbd_cred_can_send() - would smbd_cred_send_begin() give a credit now
 * @c: the state
 * @can_post: a free receive buffer is at hand, so the receive that
 *	smbd_cred_recv_wanted() asks for under the last-credit rule can be
 *	posted first
 *
 * The senders' wait condition and the write_space upcall ask this, so a
 * sender is woken exactly when its smbd_cred_send_begin() can succeed:
 * with two credits or more, or with the last one and something to grant
 * ([MS-SMBD] 3.1.5.1), ungranted already or about to be posted.
 *
 * Context: any; the caller serialises the calls on one state (ss_lock).
 * Return: true when a message can take a Send Credit.
 */
bool smbd_cred_can_send(const struct smbd_credits *c, bool can_post)
{
	if (c->send_credits > 1)
		return true;
	if (!c->send_credits)
		return false;
	return smbd_cred_ungranted(c) ||
	       (can_post && smbd_cred_recv_wanted(c, true));
}
EXPORT_SYMBOL_IF_KUNIT(smbd_cred_can_send);

/**
 * smbd_cred_on_recv() - account a received Data Transfer message
 * @c: the state
 * @h: its header, already validated by smbd_rx_parse()
 *
 * [MS-SMBD] 3.1.5.8: the message used one of the peer's credits and one
 * of our receives; its CreditsGranted adds to SendCredits; its
 * CreditsRequested becomes ReceiveCreditTarget, which we cap at
 * ReceiveCreditMax. A peer that sends while holding no credit has broken
 * the protocol. SendCredits is capped at the 16-bit range: counting
 * fewer credits than a runaway peer grants only makes us send less.
 *
 * Context: any; the caller serialises the calls on one state (ss_lock).
 * Return: %SMBD_RX_OK or %SMBD_RX_ERR_CREDIT_OVERRUN (nothing changed).
 */
enum smbd_rx_err smbd_cred_on_recv(struct smbd_credits *c,
				   const struct smbd_data_hdr *h)
{
	if (!c->recv_granted)
		return SMBD_RX_ERR_CREDIT_OVERRUN;

	c->recv_granted--;
	c->recv_posted--;
	c->send_credits = min_t(u32, c->send_credits + h->credits_granted,
				SMBD_MAX_CREDITS);
	c->recv_credit_target = clamp_t(u16, h->credits_requested, 1,
					c->recv_credit_max);
	return SMBD_RX_OK;
}
EXPORT_SYMBOL_IF_KUNIT(smbd_cred_on_recv);

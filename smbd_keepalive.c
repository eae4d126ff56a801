// SPDX-License-Identifier: GPL-2.0
/*
 * smbd: keep-alive and the idle connection timer, the pure part
 * ([MS-SMBD] 3.1.2.2, 3.1.5.1, 3.1.5.5, 3.1.5.8, 3.1.6.2).
 *
 * The state machine decides; the caller owns the timer. The timer is
 * re-armed lazily: a receive only notes its time, and the timer, when it
 * fires, re-arms itself for the rest of the interval if the connection
 * was not idle all along. Touching a timer for every message would cost
 * more than the message on a busy connection.
 *
 *   any receive        -> state NONE, last receive = now
 *   timer, state NONE  -> idle for KeepaliveInterval: state PENDING, send
 *                         a message now, timer = keep-alive timeout;
 *                         otherwise timer = the rest of the interval
 *   send while PENDING -> RESPONSE_REQUESTED set, state SENT,
 *                         timer = keep-alive timeout
 *   timer, not NONE    -> the peer is gone: terminate
 *   link up, NONE      -> the timer fires now and probes as if the
 *                         interval had passed (the peer may
 *                         have dropped the connection while the link
 *                         was down, and with nothing outstanding our
 *                         side would not learn it for a whole interval);
 *                         that probe waits one retransmission longer
 *
 * The literal text of 3.1.5.8 would make our reply to the peer's
 * RESPONSE_REQUESTED ask for a reply in turn, and two peers following it
 * would bounce messages forever. The peer's request is therefore kept in
 * its own flag (@reply_due): it makes us send promptly but never sets the
 * flag on what we send. Windows and ksmbd answer the same way.
 */

#include <linux/kernel.h>
#include <linux/module.h>

#include "smbd_proto.h"

/**
 * smbd_ka_init() - keep-alive state of a new connection
 * @ka: the state
 * @interval_ms: KeepaliveInterval; 0 disables keep-alives
 * @timeout_ms: how long a probe waits for the peer
 *
 * Context: any.
 */
void smbd_ka_init(struct smbd_keepalive *ka, u32 interval_ms, u32 timeout_ms)
{
	ka->state = SMBD_KA_NONE;
	ka->reply_due = false;
	ka->interval_ms = interval_ms;
	ka->timeout_ms = timeout_ms;
	ka->last_rx_ms = 0;
	ka->probe = false;
	ka->probe_grace_ms = 0;
	ka->wait_ms = timeout_ms;
}
EXPORT_SYMBOL_IF_KUNIT(smbd_ka_init);

/**
 * smbd_ka_on_established() - negotiation succeeded
 * @ka: the state
 * @now_ms: the time now, in ms on any monotonic clock
 *
 * [MS-SMBD] 3.1.5.6, 3.1.5.7: the idle connection timer starts at
 * KeepaliveInterval when the connection is established.
 *
 * Context: any; caller holds the connection's keep-alive lock.
 * Return: the timer value in ms, 0 when keep-alives are disabled.
 */
u32 smbd_ka_on_established(struct smbd_keepalive *ka, u64 now_ms)
{
	ka->state = SMBD_KA_NONE;
	ka->last_rx_ms = now_ms;
	return ka->interval_ms;
}
EXPORT_SYMBOL_IF_KUNIT(smbd_ka_on_established);

/**
 * smbd_ka_on_recv() - any message was received
 * @ka: the state
 * @flags: the message's Flags
 * @now_ms: the time now, on the clock of smbd_ka_on_established()
 *
 * [MS-SMBD] 3.1.5.5: every received message restarts the idle period
 * and clears KeepaliveRequested. The timer is left alone: it finds the
 * new idle period when it fires (smbd_ka_on_timer()). 3.1.5.8:
 * RESPONSE_REQUESTED asks for a prompt message back.
 *
 * Context: any; caller holds the connection's keep-alive lock.
 * Return: true when a message must go out promptly (the peer asked and
 * no message has answered yet).
 */
bool smbd_ka_on_recv(struct smbd_keepalive *ka, u16 flags, u64 now_ms)
{
	ka->state = SMBD_KA_NONE;
	ka->last_rx_ms = now_ms;
	/* The peer is there: a probe for a link that came back is moot. */
	ka->probe = false;
	if (flags & SMBD_FLAG_RESPONSE_REQUESTED)
		ka->reply_due = true;
	return ka->reply_due;
}
EXPORT_SYMBOL_IF_KUNIT(smbd_ka_on_recv);

/**
 * smbd_ka_on_timer() - the idle connection timer expired
 * @ka: the state
 * @now_ms: the time now, on the clock of smbd_ka_on_established()
 * @rearm_ms: set to when the timer must fire next, 0 for never
 *
 * [MS-SMBD] 3.1.6.2: with no probe outstanding and nothing received for
 * KeepaliveInterval, start one, and wait at most the keep-alive timeout
 * for it to be answered (a probe for a link that came back, one
 * retransmission longer); with one outstanding (pending for lack of a
 * credit, or sent and unanswered), the peer is gone. A receive within
 * the interval only moves the timer to the end of the new idle period.
 *
 * Context: any; caller holds the connection's keep-alive lock.
 * Return: what the connection must do.
 */
enum smbd_ka_action smbd_ka_on_timer(struct smbd_keepalive *ka, u64 now_ms,
				     u32 *rearm_ms)
{
	u64 idle;

	*rearm_ms = 0;
	if (!ka->interval_ms)
		return SMBD_KA_ACT_NONE;
	if (ka->state != SMBD_KA_NONE)
		return SMBD_KA_ACT_TERMINATE;
	idle = now_ms > ka->last_rx_ms ? now_ms - ka->last_rx_ms : 0;
	if (idle < ka->interval_ms && !ka->probe) {
		*rearm_ms = ka->interval_ms - (u32)idle;
		return SMBD_KA_ACT_NONE;
	}
	ka->wait_ms = ka->timeout_ms;
	if (ka->probe)
		ka->wait_ms = min_t(u64, (u64)ka->timeout_ms +
				    ka->probe_grace_ms, U32_MAX);
	ka->probe = false;
	ka->state = SMBD_KA_PENDING;
	/* If the probe cannot go out in time, the peer is gone too. */
	*rearm_ms = ka->wait_ms;
	return SMBD_KA_ACT_SEND;
}
EXPORT_SYMBOL_IF_KUNIT(smbd_ka_on_timer);

/**
 * smbd_ka_on_send() - a Data Transfer message is about to be posted
 * @ka: the state
 * @rearm_ms: set to the probe's wait (the keep-alive timeout, or more
 *	after a link up) when this message is our probe, else 0 (leave the
 *	timer alone)
 *
 * [MS-SMBD] 3.1.5.1: the first message sent while a probe is pending
 * carries RESPONSE_REQUESTED and moves the state to SENT. Any message
 * answers a request of the peer.
 *
 * Context: any; caller holds the connection's keep-alive lock.
 * Return: the Flags for the message.
 */
u16 smbd_ka_on_send(struct smbd_keepalive *ka, u32 *rearm_ms)
{
	ka->reply_due = false;
	*rearm_ms = 0;
	if (ka->state != SMBD_KA_PENDING)
		return 0;
	ka->state = SMBD_KA_SENT;
	*rearm_ms = ka->wait_ms;
	return SMBD_FLAG_RESPONSE_REQUESTED;
}
EXPORT_SYMBOL_IF_KUNIT(smbd_ka_on_send);

/**
 * smbd_ka_on_link_up() - the connection's port came back (a link up
 *	after it went down)
 * @ka: the state
 * @resend_ms: how long the transport waits before it resends a packet
 *	that was not acknowledged (the queue pair's local ACK timeout),
 *	0 when that is short next to the keep-alive timeout
 *
 * While the link was down the peer may have ended the connection (its
 * sends failed) with nothing of ours outstanding to fail in turn: our
 * side would wait a whole KeepaliveInterval, and the consumer's requests
 * with it. The idle connection timer ([MS-SMBD] 3.1.6.2) is made to
 * expire now instead: it sends a message that asks for a reply and waits
 * for it, as after an idle interval. The first packets after a link up
 * may be lost (the neighbour entry is resolved anew), and a soft RoCE
 * queue pair resends only after its ACK timeout (about 8.6 s, longer
 * than the keep-alive timeout): this probe waits the keep-alive timeout
 * plus @resend_ms, capped at the interval, so that a live peer keeps its
 * connection. A probe already outstanding keeps its own deadline; a
 * message received before the timer fires cancels the probe
 * (smbd_ka_on_recv()).
 *
 * Context: any; caller holds the connection's keep-alive lock.
 * Return: true when the caller must fire the idle timer now; false when
 * keep-alives are disabled or a probe is already outstanding.
 */
bool smbd_ka_on_link_up(struct smbd_keepalive *ka, u32 resend_ms)
{
	if (!ka->interval_ms || ka->state != SMBD_KA_NONE)
		return false;
	ka->probe = true;
	ka->probe_grace_ms = min(resend_ms, ka->interval_ms);
	return true;
}
EXPORT_SYMBOL_IF_KUNIT(smbd_ka_on_link_up);

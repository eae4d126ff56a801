/* SPDX-License-Identifier: GPL-2.0 */
/*
 * smbd: the pure protocol core of SMB Direct ([MS-SMBD]).
 *
 * Everything declared here is plain computation over host-order state:
 * no verbs calls, no locks, no sleeping, no allocation. The connection
 * code (smbd_recv.c, smbd_send.c, smbd_xfer.c) owns the locking and calls into these
 * functions; the KUnit suites in kunit/ drive them directly.
 *
 * Files: smbd_negotiate.c (2.2.1, 2.2.2, 3.1.5.2, 3.1.5.3, 3.1.5.6,
 * 3.1.5.7, 6.2), smbd_frag.c (2.2.3, 3.1.5.4, 3.1.5.8), smbd_credits.c
 * (3.1.5.1, 3.1.5.9), smbd_keepalive.c (3.1.2.2, 3.1.5.5, 3.1.6.2),
 * smbd_desc.c (2.2.3.1, 3.1.4.5, 3.1.4.6).
 */
#ifndef _SMBD_PROTO_H
#define _SMBD_PROTO_H

#include <linux/types.h>
#include "smbd.h"
#include "smbd_pdu.h"

/*
 * The functions below are exported only to the KUnit module, and only
 * when the kernel has KUnit (EXPORT_SYMBOL_IF_KUNIT).
 */
#include <kunit/visibility.h>

/* Send Credits are 16-bit on the wire; we never count more than that. */
#define SMBD_MAX_CREDITS	U16_MAX

/**
 * struct smbd_negotiated - connection values fixed by negotiation
 * @max_send_size: Connection.MaxSendSize, bound on every message we send
 * @max_recv_size: Connection.MaxReceiveSize, bound on what the peer sends
 * @max_fragmented_send_size: Connection.MaxFragmentedSendSize, bound on
 *	one upper-layer message we send
 * @max_fragmented_recv_size: Connection.MaxFragmentedRecvSize (ours)
 * @max_read_write_size: Connection.MaxReadWriteSize
 * @peer_credits_requested: the peer's CreditsRequested, i.e. the first
 *	Connection.ReceiveCreditTarget
 * @send_credits: initial Connection.SendCredits (zero on the responder)
 *
 * Fixed for the life of the connection once negotiation succeeds
 * ([MS-SMBD] 1.7).
 */
struct smbd_negotiated {
	u32 max_send_size;
	u32 max_recv_size;
	u32 max_fragmented_send_size;
	u32 max_fragmented_recv_size;
	u32 max_read_write_size;
	u16 peer_credits_requested;
	u16 send_credits;
};

/**
 * enum smbd_neg_err - why a negotiate message is refused
 * @SMBD_NEG_OK: valid
 * @SMBD_NEG_ERR_SHORT: shorter than the fixed message
 * @SMBD_NEG_ERR_VERSION: 0x0100 not offered (request) or not chosen
 *	(response)
 * @SMBD_NEG_ERR_CREDITS_REQUESTED: CreditsRequested is zero
 * @SMBD_NEG_ERR_CREDITS_GRANTED: CreditsGranted is zero (response)
 * @SMBD_NEG_ERR_RECV_SIZE: MaxReceiveSize below 128
 * @SMBD_NEG_ERR_FRAG_SIZE: MaxFragmentedSize below 131072
 * @SMBD_NEG_ERR_PREF_SEND_SIZE: PreferredSendSize above our
 *	MaxReceiveSize (response)
 * @SMBD_NEG_ERR_STATUS: Status is not STATUS_SUCCESS (response)
 * @SMBD_NEG_ERR_EARLY: a message came before our Negotiate Request went
 *	out (initiator): the peer spoke first
 * @SMBD_NEG_ERR_NR: how many values there are
 */
enum smbd_neg_err {
	SMBD_NEG_OK = 0,
	SMBD_NEG_ERR_SHORT,
	SMBD_NEG_ERR_VERSION,
	SMBD_NEG_ERR_CREDITS_REQUESTED,
	SMBD_NEG_ERR_CREDITS_GRANTED,
	SMBD_NEG_ERR_RECV_SIZE,
	SMBD_NEG_ERR_FRAG_SIZE,
	SMBD_NEG_ERR_PREF_SEND_SIZE,
	SMBD_NEG_ERR_STATUS,
	SMBD_NEG_ERR_EARLY,
	SMBD_NEG_ERR_NR
};

/**
 * struct smbd_neg_req - host-order Negotiate Request ([MS-SMBD] 2.2.1)
 * @min_version: MinVersion, lowest protocol version offered
 * @max_version: MaxVersion, highest protocol version offered
 * @credits_requested: CreditsRequested, the sender's Send Credit target
 * @preferred_send_size: PreferredSendSize, largest message it would send
 * @max_receive_size: MaxReceiveSize, largest message it accepts
 * @max_fragmented_size: MaxFragmentedSize, largest upper-layer message
 *	it reassembles
 */
struct smbd_neg_req {
	u16 min_version;
	u16 max_version;
	u16 credits_requested;
	u32 preferred_send_size;
	u32 max_receive_size;
	u32 max_fragmented_size;
};

/**
 * struct smbd_neg_resp - host-order Negotiate Response ([MS-SMBD] 2.2.2)
 * @min_version: MinVersion the responder supports
 * @max_version: MaxVersion the responder supports
 * @negotiated_version: NegotiatedVersion, the version chosen
 * @credits_requested: CreditsRequested, the responder's Send Credit target
 * @credits_granted: CreditsGranted, the initiator's first Send Credits
 * @status: Status, an NTSTATUS; not STATUS_SUCCESS refuses the connection
 * @max_read_write_size: MaxReadWriteSize, largest RDMA Read or Write
 * @preferred_send_size: PreferredSendSize, largest message it would send
 * @max_receive_size: MaxReceiveSize, largest message it accepts
 * @max_fragmented_size: MaxFragmentedSize, largest upper-layer message
 *	it reassembles
 */
struct smbd_neg_resp {
	u16 min_version;
	u16 max_version;
	u16 negotiated_version;
	u16 credits_requested;
	u16 credits_granted;
	u32 status;
	u32 max_read_write_size;
	u32 preferred_send_size;
	u32 max_receive_size;
	u32 max_fragmented_size;
};

int smbd_params_check(const struct smbd_params *p);
u32 smbd_offer_send(const struct smbd_params *p);
u32 smbd_offer_recv(const struct smbd_params *p);

/*
 * A connection offers its large size only if its receive memory holds
 * this many receives of it: fewer credits would stall a peer that sends
 * many small messages.
 */
#define SMBD_SPLIT_MIN_RECVS	16
u32 smbd_split_count(u32 chunk, u32 total, u32 stride);

void smbd_neg_req_encode(const struct smbd_neg_req *req,
			 struct smbd_neg_req_pdu *pdu);
void smbd_neg_req_decode(const struct smbd_neg_req_pdu *pdu,
			 struct smbd_neg_req *req);
void smbd_neg_resp_encode(const struct smbd_neg_resp *resp,
			  struct smbd_neg_resp_pdu *pdu);
void smbd_neg_resp_decode(const struct smbd_neg_resp_pdu *pdu,
			  struct smbd_neg_resp *resp);

void smbd_neg_req_build(const struct smbd_params *p,
			struct smbd_neg_req_pdu *pdu);
enum smbd_neg_err smbd_neg_req_process(const struct smbd_params *p,
				       const void *buf, u32 len,
				       struct smbd_negotiated *out);
u32 smbd_neg_err_reply_status(enum smbd_neg_err err);
void smbd_neg_resp_build(const struct smbd_params *p,
			 const struct smbd_negotiated *n, u16 credits_granted,
			 struct smbd_neg_resp_pdu *pdu);
void smbd_neg_resp_build_failure(u32 status, struct smbd_neg_resp_pdu *pdu);
enum smbd_neg_err smbd_neg_resp_process(const struct smbd_params *p,
					const void *buf, u32 len,
					struct smbd_negotiated *out);
const char *smbd_neg_err_str(enum smbd_neg_err err);

void smbd_irdord_encode(u32 ird, u32 ord, struct smbd_irdord_pdu *pdu);
int smbd_irdord_accept(u32 own_ird, u32 own_ord, const void *priv, u32 len,
		       u32 *ird, u32 *ord);
int smbd_irdord_reply(u32 own_ird, u32 own_ord, const void *priv, u32 len,
		      u32 *ird, u32 *ord);

/**
 * struct smbd_data_hdr - host-order Data Transfer header ([MS-SMBD] 2.2.3)
 * @credits_requested: CreditsRequested, the sender's Send Credit target
 * @credits_granted: CreditsGranted, Send Credits given to the receiver
 * @flags: Flags (SMB_DIRECT_RESPONSE_REQUESTED)
 * @remaining_data_length: RemainingDataLength, bytes of the upper-layer
 *	message after this one's
 * @data_offset: DataOffset, where the payload starts, from the header's
 *	start
 * @data_length: DataLength, the payload bytes in this message
 */
struct smbd_data_hdr {
	u16 credits_requested;
	u16 credits_granted;
	u16 flags;
	u32 remaining_data_length;
	u32 data_offset;
	u32 data_length;
};

/**
 * enum smbd_rx_err - why a received Data Transfer message ends the
 *	connection ([MS-SMBD] 3.1.5.8)
 * @SMBD_RX_OK: valid
 * @SMBD_RX_ERR_RECV_SIZE: longer than MaxReceiveSize
 * @SMBD_RX_ERR_SHORT: shorter than the 20-byte header
 * @SMBD_RX_ERR_CREDITS_REQUESTED: CreditsRequested is zero
 * @SMBD_RX_ERR_OFFSET_ALIGN: DataOffset is not a multiple of 8
 * @SMBD_RX_ERR_OFFSET_OVERLAP: a payload that overlaps the header
 * @SMBD_RX_ERR_BOUNDS: DataOffset + DataLength beyond the bytes received
 * @SMBD_RX_ERR_TOO_LARGE: DataLength + RemainingDataLength beyond
 *	MaxFragmentedRecvSize
 * @SMBD_RX_ERR_FRAGMENT: a segment that does not continue the message
 *	being reassembled
 * @SMBD_RX_ERR_CREDIT_OVERRUN: the peer sent without holding a credit
 * @SMBD_RX_ERR_OPCODE: a receive consumed by something other than a Send
 *	(an RDMA Write with Immediate): no message was placed in the buffer
 * @SMBD_RX_ERR_NR: how many values there are
 */
enum smbd_rx_err {
	SMBD_RX_OK = 0,
	SMBD_RX_ERR_RECV_SIZE,
	SMBD_RX_ERR_SHORT,
	SMBD_RX_ERR_CREDITS_REQUESTED,
	SMBD_RX_ERR_OFFSET_ALIGN,
	SMBD_RX_ERR_OFFSET_OVERLAP,
	SMBD_RX_ERR_BOUNDS,
	SMBD_RX_ERR_TOO_LARGE,
	SMBD_RX_ERR_FRAGMENT,
	SMBD_RX_ERR_CREDIT_OVERRUN,
	SMBD_RX_ERR_OPCODE,
	SMBD_RX_ERR_NR
};

void smbd_data_hdr_encode(const struct smbd_data_hdr *h,
			  struct smbd_data_msg_pdu *msg);
void smbd_data_hdr_decode(const struct smbd_data_hdr_pdu *pdu,
			  struct smbd_data_hdr *h);
u32 smbd_data_hdr_wire_len(const struct smbd_data_hdr *h);
enum smbd_rx_err smbd_rx_parse(const void *buf, u32 len, u32 max_recv,
			       u32 max_frag_recv, struct smbd_data_hdr *h);
const char *smbd_rx_err_str(enum smbd_rx_err err);

/**
 * struct smbd_seg_plan - how one upper-layer message is cut into Data
 *	Transfer messages ([MS-SMBD] 3.1.5.4)
 * @msg_len: bytes in the upper-layer message
 * @max_payload: payload bytes per segment: MaxSendSize - DataOffset
 * @nsegs: number of segments; one for an empty message
 */
struct smbd_seg_plan {
	u32 msg_len;
	u32 max_payload;
	u32 nsegs;
};

/**
 * struct smbd_seg - one segment of a plan
 * @msg_offset: where its payload starts in the upper-layer message
 * @data_offset: DataOffset to send (0 for an empty message)
 * @data_length: DataLength to send
 * @remaining: RemainingDataLength to send
 * @invalidate: this segment carries the remote token to invalidate
 */
struct smbd_seg {
	u32 msg_offset;
	u32 data_offset;
	u32 data_length;
	u32 remaining;
	bool invalidate;
};

int smbd_seg_plan_init(struct smbd_seg_plan *plan, u32 msg_len,
		       u32 max_send_size, u32 max_frag_send_size);
void smbd_seg_plan_get(const struct smbd_seg_plan *plan, u32 idx,
		       struct smbd_seg *seg);

/**
 * enum smbd_reasm_event - what a valid received message means for the
 *	upper layer
 * @SMBD_REASM_NONE: no payload and no message in progress: a credit
 *	grant or keep-alive, nothing to deliver
 * @SMBD_REASM_PARTIAL: payload appended; the message continues
 * @SMBD_REASM_COMPLETE: payload appended; the message is complete
 */
enum smbd_reasm_event {
	SMBD_REASM_NONE,
	SMBD_REASM_PARTIAL,
	SMBD_REASM_COMPLETE,
};

/**
 * struct smbd_reasm - reassembly state ([MS-SMBD] 3.1.5.8)
 * @max_size: Connection.MaxFragmentedRecvSize
 * @remaining: Connection.FragmentReassemblyRemaining
 * @received: payload bytes of the message in progress (or just completed)
 * @active: a fragmented message is in progress
 */
struct smbd_reasm {
	u32 max_size;
	u32 remaining;
	u32 received;
	bool active;
};

void smbd_reasm_init(struct smbd_reasm *r, u32 max_size);
enum smbd_rx_err smbd_reasm_add(struct smbd_reasm *r,
				const struct smbd_data_hdr *h,
				enum smbd_reasm_event *ev);

/**
 * struct smbd_credits - credit state of one connection ([MS-SMBD] 3.1.1.1)
 * @send_credits: Connection.SendCredits: messages we may still send
 * @send_credit_target: Connection.SendCreditTarget: what we ask for
 * @recv_credit_max: Connection.ReceiveCreditMax
 * @recv_credit_target: Connection.ReceiveCreditTarget: the peer's latest
 *	CreditsRequested, capped at @recv_credit_max and at least 1
 * @recv_posted: receives posted (Connection.ReceiveCredits in the spec's
 *	sense: what backs the peer's credits, granted or not yet)
 * @recv_granted: of @recv_posted, those announced to the peer in
 *	CreditsGranted: the peer's Send Credits as we count them
 *
 * Invariants: @recv_granted <= @recv_posted <= @recv_credit_max, and
 * @send_credits <= %SMBD_MAX_CREDITS.
 */
struct smbd_credits {
	u32 send_credits;
	u16 send_credit_target;
	u16 recv_credit_max;
	u16 recv_credit_target;
	u16 recv_posted;
	u16 recv_granted;
};

/**
 * enum smbd_cred_verdict - may a message be sent now ([MS-SMBD] 3.1.5.1)
 * @SMBD_CRED_SEND: yes; one Send Credit was consumed
 * @SMBD_CRED_NO_CREDITS: no Send Credit left; wait for a grant
 * @SMBD_CRED_LAST_CREDIT: only the last credit is left and the message
 *	would grant nothing; post a receive first or wait for a grant
 * @SMBD_CRED_NOTHING_DUE: an empty message would carry nothing: no
 *	credit to grant, no keep-alive to answer or ask for; send none
 *	(smbd_cred_empty_begin() only)
 */
enum smbd_cred_verdict {
	SMBD_CRED_SEND,
	SMBD_CRED_NO_CREDITS,
	SMBD_CRED_LAST_CREDIT,
	SMBD_CRED_NOTHING_DUE,
};

void smbd_cred_init(struct smbd_credits *c, const struct smbd_params *p,
		    const struct smbd_negotiated *n);
u16 smbd_cred_recv_wanted(const struct smbd_credits *c, bool send_queued);
void smbd_cred_recv_posted(struct smbd_credits *c, u16 n);
void smbd_cred_recv_lost(struct smbd_credits *c);
bool smbd_cred_recv_short(const struct smbd_credits *c, u16 n);
u16 smbd_cred_ungranted(const struct smbd_credits *c);
u16 smbd_cred_take_grant(struct smbd_credits *c);
bool smbd_cred_grant_due(const struct smbd_credits *c);
bool smbd_cred_empty_due(const struct smbd_credits *c, bool reply_due);
u16 smbd_cred_requested(const struct smbd_credits *c);
enum smbd_cred_verdict smbd_cred_send_begin(struct smbd_credits *c,
					    u16 *granted);
enum smbd_cred_verdict smbd_cred_empty_begin(struct smbd_credits *c,
					     bool answer_due, u16 *granted);
bool smbd_cred_can_send(const struct smbd_credits *c, bool can_post);
enum smbd_rx_err smbd_cred_on_recv(struct smbd_credits *c,
				   const struct smbd_data_hdr *h);

/**
 * enum smbd_ka_state - Connection.KeepaliveRequested ([MS-SMBD] 3.1.1.1)
 * @SMBD_KA_NONE: no keep-alive of ours outstanding
 * @SMBD_KA_PENDING: the idle timer fired; our next message asks for a reply
 * @SMBD_KA_SENT: a message asking for a reply went out; waiting
 */
enum smbd_ka_state {
	SMBD_KA_NONE,
	SMBD_KA_PENDING,
	SMBD_KA_SENT,
};

/**
 * enum smbd_ka_action - what the idle timer asks of the connection
 * @SMBD_KA_ACT_NONE: nothing
 * @SMBD_KA_ACT_SEND: send a message now (it will ask for a reply)
 * @SMBD_KA_ACT_TERMINATE: the peer did not answer; end the connection
 */
enum smbd_ka_action {
	SMBD_KA_ACT_NONE,
	SMBD_KA_ACT_SEND,
	SMBD_KA_ACT_TERMINATE,
};

/**
 * struct smbd_keepalive - keep-alive and idle timer state
 * @state: Connection.KeepaliveRequested for our own probes
 * @reply_due: the peer asked for a prompt reply (RESPONSE_REQUESTED)
 *	and none has gone out yet
 * @interval_ms: Connection.KeepaliveInterval; 0 disables keep-alives
 * @timeout_ms: how long a probe waits for any message from the peer
 * @last_rx_ms: when the last message arrived (or the connection was
 *	established), in ms on the caller's monotonic clock
 * @probe: the link came back: the idle timer probes when it fires, idle
 *	or not (smbd_ka_on_link_up())
 * @probe_grace_ms: how much longer than @timeout_ms that probe waits
 * @wait_ms: how long the probe under way waits for the peer
 *
 * Our probes and the peer's are tracked apart, so a reply never asks for
 * a reply in turn and two peers cannot ping-pong (see
 * Documentation/smbd.rst, keep-alive).
 */
struct smbd_keepalive {
	enum smbd_ka_state state;
	bool reply_due;
	u32 interval_ms;
	u32 timeout_ms;
	u64 last_rx_ms;
	bool probe;
	u32 probe_grace_ms;
	u32 wait_ms;
};

void smbd_ka_init(struct smbd_keepalive *ka, u32 interval_ms, u32 timeout_ms);
u32 smbd_ka_on_established(struct smbd_keepalive *ka, u64 now_ms);
bool smbd_ka_on_recv(struct smbd_keepalive *ka, u16 flags, u64 now_ms);
enum smbd_ka_action smbd_ka_on_timer(struct smbd_keepalive *ka, u64 now_ms,
				     u32 *rearm_ms);
u16 smbd_ka_on_send(struct smbd_keepalive *ka, u32 *rearm_ms);
bool smbd_ka_on_link_up(struct smbd_keepalive *ka, u32 resend_ms);

/*
 * Buffer Descriptors V1 ([MS-SMBD] 2.2.3.1): smbd_desc_encode() and
 * smbd_desc_decode() are public (smbd.h); smbd_desc_slice() cuts the
 * peer's descriptors down to the segments of one RDMA read or write
 * ([MS-SMBD] 3.1.4.5, 3.1.4.6).
 */
int smbd_desc_slice(const struct smbd_buf_desc *d, u32 n, u64 offset, u64 len,
		    u32 max_rw, struct smbd_buf_desc *out, u32 max_out);
/*
 * smbd_desc_pieces() cuts those segments into the pieces of one chain;
 * with a lead other than %SMBD_LEAD_NONE, each piece is as long as the
 * chunk's pages hold from where in its page our buffer is.
 */
#define SMBD_LEAD_NONE	U32_MAX
u32 smbd_desc_pieces(const struct smbd_buf_desc *seg, u32 nseg, u32 i,
		     u32 off, u32 chunk, u32 lead, struct smbd_buf_desc *pc,
		     u32 max);

#endif /* _SMBD_PROTO_H */

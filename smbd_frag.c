// SPDX-License-Identifier: GPL-2.0
/*
 * smbd: Data Transfer messages, the pure part.
 *
 * Encode and decode the Data Transfer header ([MS-SMBD] 2.2.3), validate
 * a received message against the bytes really received ([MS-SMBD]
 * 3.1.5.8), cut an upper-layer message into segments ([MS-SMBD] 3.1.5.4)
 * and track the reassembly of a fragmented one ([MS-SMBD] 3.1.5.8).
 *
 * All length arithmetic on peer values is done in 64 bits, so no field
 * combination can wrap around a check.
 */

#include <linux/errno.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include "smbd_compat.h"

#include "smbd_proto.h"

/**
 * smbd_data_hdr_encode() - write a Data Transfer header ([MS-SMBD] 2.2.3)
 * @h: host-order fields; a payload goes at %SMBD_DATA_OFFSET
 * @msg: the %SMBD_DATA_OFFSET bytes to fill: the header, then the padding
 *
 * Reserved and the padding are written as zero ([MS-SMBD] 3.1.5.4): a
 * send buffer is reused for every kind of message, so nothing may be
 * left of what it carried before. An empty message sends only the first
 * 20 bytes.
 *
 * Context: any.
 */
void smbd_data_hdr_encode(const struct smbd_data_hdr *h,
			  struct smbd_data_msg_pdu *msg)
{
	struct smbd_data_hdr_pdu *pdu = &msg->hdr;

	msg->padding = 0;
	pdu->credits_requested = cpu_to_le16(h->credits_requested);
	pdu->credits_granted = cpu_to_le16(h->credits_granted);
	pdu->flags = cpu_to_le16(h->flags);
	pdu->reserved = 0;
	pdu->remaining_data_length = cpu_to_le32(h->remaining_data_length);
	pdu->data_offset = cpu_to_le32(h->data_offset);
	pdu->data_length = cpu_to_le32(h->data_length);
}
EXPORT_SYMBOL_IF_KUNIT(smbd_data_hdr_encode);

/**
 * smbd_data_hdr_decode() - read a Data Transfer header ([MS-SMBD] 2.2.3)
 * @pdu: 20 wire bytes; need not be aligned
 * @h: host-order fields; Reserved is ignored
 *
 * Context: any.
 */
void smbd_data_hdr_decode(const struct smbd_data_hdr_pdu *pdu,
			  struct smbd_data_hdr *h)
{
	h->credits_requested = get_unaligned_le16(&pdu->credits_requested);
	h->credits_granted = get_unaligned_le16(&pdu->credits_granted);
	h->flags = get_unaligned_le16(&pdu->flags);
	h->remaining_data_length =
		get_unaligned_le32(&pdu->remaining_data_length);
	h->data_offset = get_unaligned_le32(&pdu->data_offset);
	h->data_length = get_unaligned_le32(&pdu->data_length);
}
EXPORT_SYMBOL_IF_KUNIT(smbd_data_hdr_decode);

/**
 * smbd_data_hdr_wire_len() - bytes before the payload of a message we send
 * @h: the header we send
 *
 * [MS-SMBD] 3.1.5.4: an empty message is the bare 20-byte header; a
 * message with a payload puts it at DataOffset, after zero padding.
 *
 * Context: any.
 * Return: 20 for an empty message, DataOffset otherwise.
 */
u32 smbd_data_hdr_wire_len(const struct smbd_data_hdr *h)
{
	return h->data_length ? h->data_offset :
				sizeof(struct smbd_data_hdr_pdu);
}
EXPORT_SYMBOL_IF_KUNIT(smbd_data_hdr_wire_len);

/**
 * smbd_rx_parse() - validate a received Data Transfer message
 * @buf: the received bytes
 * @len: how many bytes the receive completion reported
 * @max_recv: Connection.MaxReceiveSize
 * @max_frag_recv: Connection.MaxFragmentedRecvSize
 * @h: the decoded header, valid only on %SMBD_RX_OK
 *
 * [MS-SMBD] 3.1.5.8, each failure ending the connection: at most
 * MaxReceiveSize bytes (the buffer may be larger: it also serves the
 * negotiate receive, 3.1.4.1, and a message beyond the negotiated size
 * breaks the protocol even when it fits); at least 20 bytes;
 * CreditsRequested at least 1; DataOffset a multiple of 8; DataOffset +
 * DataLength within the bytes received; DataLength +
 * RemainingDataLength within MaxFragmentedRecvSize. We also refuse a
 * payload that would overlap the header (DataOffset below 20 with a
 * non-zero DataLength), which the literal rules let through. Bytes after
 * the payload are allowed and ignored.
 *
 * Context: any.
 * Return: %SMBD_RX_OK or the first rule broken.
 */
enum smbd_rx_err smbd_rx_parse(const void *buf, u32 len, u32 max_recv,
			       u32 max_frag_recv, struct smbd_data_hdr *h)
{
	if (len > max_recv)
		return SMBD_RX_ERR_RECV_SIZE;
	if (len < sizeof(struct smbd_data_hdr_pdu))
		return SMBD_RX_ERR_SHORT;
	smbd_data_hdr_decode(buf, h);

	if (!h->credits_requested)
		return SMBD_RX_ERR_CREDITS_REQUESTED;
	if (h->data_offset % 8)
		return SMBD_RX_ERR_OFFSET_ALIGN;
	if (h->data_length &&
	    h->data_offset < sizeof(struct smbd_data_hdr_pdu))
		return SMBD_RX_ERR_OFFSET_OVERLAP;
	if ((u64)h->data_offset + h->data_length > len)
		return SMBD_RX_ERR_BOUNDS;
	if ((u64)h->data_length + h->remaining_data_length > max_frag_recv)
		return SMBD_RX_ERR_TOO_LARGE;
	return SMBD_RX_OK;
}
EXPORT_SYMBOL_IF_KUNIT(smbd_rx_parse);

/**
 * smbd_rx_err_str() - a short name for a receive verdict
 * @err: the verdict
 *
 * Context: any.
 * Return: a static string, for logs and tracepoints.
 */
const char *smbd_rx_err_str(enum smbd_rx_err err)
{
	static const char * const names[] = {
		[SMBD_RX_OK] = "ok",
		[SMBD_RX_ERR_RECV_SIZE] = "message above MaxReceiveSize",
		[SMBD_RX_ERR_SHORT] = "short message",
		[SMBD_RX_ERR_CREDITS_REQUESTED] = "zero credits requested",
		[SMBD_RX_ERR_OFFSET_ALIGN] = "data offset not 8-byte aligned",
		[SMBD_RX_ERR_OFFSET_OVERLAP] = "data overlaps header",
		[SMBD_RX_ERR_BOUNDS] = "data beyond message",
		[SMBD_RX_ERR_TOO_LARGE] = "message above max fragmented size",
		[SMBD_RX_ERR_FRAGMENT] = "inconsistent fragment",
		[SMBD_RX_ERR_CREDIT_OVERRUN] = "sent without a credit",
		[SMBD_RX_ERR_OPCODE] = "not a send",
	};

	if ((unsigned int)err >= ARRAY_SIZE(names))
		return "unknown";
	return names[err];
}
EXPORT_SYMBOL_IF_KUNIT(smbd_rx_err_str);

/**
 * smbd_seg_plan_init() - plan the segments of one upper-layer message
 * @plan: the plan to fill
 * @msg_len: bytes in the message; 0 for an empty message
 * @max_send_size: Connection.MaxSendSize
 * @max_frag_send_size: Connection.MaxFragmentedSendSize
 *
 * [MS-SMBD] 3.1.5.4: a message longer than MaxFragmentedSendSize is not
 * sent. Every segment puts its payload at DataOffset 24 and carries
 * min(bytes left, MaxSendSize - 24) bytes, so DataOffset + DataLength
 * never exceeds MaxSendSize. An empty message is one segment with no
 * payload.
 *
 * Context: any.
 * Return: 0; -EMSGSIZE when the message is too long; -EINVAL when
 * MaxSendSize leaves no room for a payload.
 */
int smbd_seg_plan_init(struct smbd_seg_plan *plan, u32 msg_len,
		       u32 max_send_size, u32 max_frag_send_size)
{
	if (max_send_size <= SMBD_DATA_OFFSET)
		return -EINVAL;
	if (msg_len > max_frag_send_size)
		return -EMSGSIZE;

	plan->msg_len = msg_len;
	plan->max_payload = max_send_size - SMBD_DATA_OFFSET;
	/* Not DIV_ROUND_UP: msg_len + max_payload - 1 can wrap 32 bits. */
	plan->nsegs = msg_len ? 1 + (msg_len - 1) / plan->max_payload : 1;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(smbd_seg_plan_init);

/**
 * smbd_seg_plan_get() - one segment of a plan
 * @plan: a plan from smbd_seg_plan_init()
 * @idx: segment index, below @plan->nsegs
 * @seg: the segment's fields
 *
 * RemainingDataLength counts the bytes after this segment, so it reaches
 * zero exactly on the last one. The remote token to invalidate, if any,
 * rides on the first segment only ([MS-SMBD] 3.1.5.4: exactly one).
 *
 * Context: any.
 */
void smbd_seg_plan_get(const struct smbd_seg_plan *plan, u32 idx,
		       struct smbd_seg *seg)
{
	u32 start = idx * plan->max_payload;

	seg->invalidate = idx == 0;
	if (!plan->msg_len || start >= plan->msg_len) {
		seg->msg_offset = plan->msg_len;
		seg->data_offset = 0;
		seg->data_length = 0;
		seg->remaining = 0;
		return;
	}
	seg->msg_offset = start;
	seg->data_offset = SMBD_DATA_OFFSET;
	seg->data_length = min(plan->max_payload, plan->msg_len - start);
	seg->remaining = plan->msg_len - start - seg->data_length;
}
EXPORT_SYMBOL_IF_KUNIT(smbd_seg_plan_get);

/**
 * smbd_reasm_init() - empty reassembly state
 * @r: the state
 * @max_size: Connection.MaxFragmentedRecvSize
 *
 * Context: any.
 */
void smbd_reasm_init(struct smbd_reasm *r, u32 max_size)
{
	r->max_size = max_size;
	r->remaining = 0;
	r->received = 0;
	r->active = false;
}
EXPORT_SYMBOL_IF_KUNIT(smbd_reasm_init);

/**
 * smbd_reasm_add() - account one valid received message
 * @r: the reassembly state
 * @h: a header that passed smbd_rx_parse()
 * @ev: what the message means for the upper layer
 *
 * [MS-SMBD] 3.1.5.8: the first segment sets FragmentReassemblyRemaining
 * to its RemainingDataLength; each later one subtracts its DataLength;
 * RemainingDataLength 0 completes the message, and completing it while
 * bytes are still expected ends the connection.
 *
 * We hold continuations to a stricter rule, as Windows does: each must
 * state exactly the bytes left after it (RemainingDataLength ==
 * FragmentReassemblyRemaining - DataLength), so a peer can neither grow
 * nor cut short a message midway. A segment with no payload in the
 * middle of a message is legal. A message with neither payload nor
 * RemainingDataLength carries only credits or a keep-alive: it is not a
 * segment and never disturbs the message in progress (a Linux peer may
 * send such a credit grant between two segments).
 *
 * On %SMBD_REASM_COMPLETE, @r->received holds the message length until
 * the next call.
 *
 * Context: any.
 * Return: %SMBD_RX_OK, %SMBD_RX_ERR_FRAGMENT or %SMBD_RX_ERR_TOO_LARGE.
 */
enum smbd_rx_err smbd_reasm_add(struct smbd_reasm *r,
				const struct smbd_data_hdr *h,
				enum smbd_reasm_event *ev)
{
	u64 total;

	if (!h->data_length && !h->remaining_data_length) {
		*ev = SMBD_REASM_NONE;
		return SMBD_RX_OK;
	}

	if (!r->active) {
		total = (u64)h->data_length + h->remaining_data_length;
		if (total > r->max_size)
			return SMBD_RX_ERR_TOO_LARGE;
		r->received = h->data_length;
		r->remaining = h->remaining_data_length;
	} else {
		if (h->data_length > r->remaining ||
		    h->remaining_data_length != r->remaining - h->data_length)
			return SMBD_RX_ERR_FRAGMENT;
		r->received += h->data_length;
		r->remaining = h->remaining_data_length;
	}

	r->active = r->remaining != 0;
	*ev = r->active ? SMBD_REASM_PARTIAL : SMBD_REASM_COMPLETE;
	return SMBD_RX_OK;
}
EXPORT_SYMBOL_IF_KUNIT(smbd_reasm_add);

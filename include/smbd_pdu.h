/* SPDX-License-Identifier: GPL-2.0 */
/*
 * smbd: SMB Direct ([MS-SMBD]) wire format.
 *
 * Every structure here is exactly what crosses the wire: packed,
 * little-endian, with its size checked at compile time. Host-order
 * mirrors and their converters live in smbd_proto.h.
 */
#ifndef _SMBD_PDU_H
#define _SMBD_PDU_H

#include <linux/build_bug.h>
#include <linux/stddef.h>
#include <linux/types.h>

/* [MS-SMBD] 1.7: the only protocol version, SMB Direct 1.0. */
#define SMBD_PROTOCOL_V1		0x0100

/* [MS-SMBD] 2.2.3: Flags of a Data Transfer message. */
#define SMBD_FLAG_RESPONSE_REQUESTED	0x0001

/* [MS-SMBD] 3.1.5.6, 3.1.5.7: lower bounds a peer must offer. */
#define SMBD_MIN_RECEIVE_SIZE		128
#define SMBD_MIN_FRAGMENTED_SIZE	131072

/* [MS-SMBD] 3.1.4.1, 3.1.7.2: the receive posted before negotiation. */
#define SMBD_NEGOTIATE_RECV_SIZE	512

/* NTSTATUS values carried in a Negotiate Response ([MS-SMBD] 3.1.5.3). */
#define SMBD_STATUS_SUCCESS			0x00000000
#define SMBD_STATUS_NOT_SUPPORTED		0xC00000BB
#define SMBD_STATUS_INSUFFICIENT_RESOURCES	0xC000009A

/**
 * struct smbd_neg_req_pdu - Negotiate Request, [MS-SMBD] 2.2.1
 * @min_version: lowest protocol version the initiator supports
 * @max_version: highest protocol version the initiator supports
 * @reserved: sent as zero, ignored on receipt
 * @credits_requested: Send Credits asked of the responder
 * @preferred_send_size: largest message the initiator wants to send
 * @max_receive_size: largest message the initiator can receive
 * @max_fragmented_size: largest upper-layer message it can reassemble
 */
struct smbd_neg_req_pdu {
	__le16 min_version;
	__le16 max_version;
	__le16 reserved;
	__le16 credits_requested;
	__le32 preferred_send_size;
	__le32 max_receive_size;
	__le32 max_fragmented_size;
} __packed;

/**
 * struct smbd_neg_resp_pdu - Negotiate Response, [MS-SMBD] 2.2.2
 * @min_version: always 0x0100
 * @max_version: always 0x0100
 * @negotiated_version: chosen version, or 0 in a failure response
 * @reserved: sent as zero, ignored on receipt
 * @credits_requested: Send Credits asked of the initiator
 * @credits_granted: initial Send Credits granted to the initiator
 * @status: NTSTATUS, zero on success
 * @max_read_write_size: largest RDMA transfer for one upper-layer I/O
 * @preferred_send_size: largest message the responder will send
 * @max_receive_size: largest message the responder can receive
 * @max_fragmented_size: largest upper-layer message it can reassemble
 */
struct smbd_neg_resp_pdu {
	__le16 min_version;
	__le16 max_version;
	__le16 negotiated_version;
	__le16 reserved;
	__le16 credits_requested;
	__le16 credits_granted;
	__le32 status;
	__le32 max_read_write_size;
	__le32 preferred_send_size;
	__le32 max_receive_size;
	__le32 max_fragmented_size;
} __packed;

/**
 * struct smbd_data_hdr_pdu - Data Transfer header, [MS-SMBD] 2.2.3
 * @credits_requested: total Send Credits the sender wants to hold
 * @credits_granted: Send Credits granted to the receiver by this message
 * @flags: %SMBD_FLAG_RESPONSE_REQUESTED or zero
 * @reserved: sent as zero, ignored on receipt
 * @remaining_data_length: bytes of the upper-layer message after this one
 * @data_offset: offset of the payload from the start of this header
 * @data_length: payload bytes in this message
 *
 * An empty message is exactly this header (20 bytes). A message with a
 * payload carries 4 bytes of zero padding and the payload at offset
 * %SMBD_DATA_OFFSET.
 */
struct smbd_data_hdr_pdu {
	__le16 credits_requested;
	__le16 credits_granted;
	__le16 flags;
	__le16 reserved;
	__le32 remaining_data_length;
	__le32 data_offset;
	__le32 data_length;
} __packed;

/* [MS-SMBD] 3.1.5.4: payload offset we send (8-byte aligned, after padding). */
#define SMBD_DATA_OFFSET	24

/**
 * struct smbd_data_msg_pdu - what we write before a payload, [MS-SMBD] 2.2.3
 * @hdr: the Data Transfer header
 * @padding: up to %SMBD_DATA_OFFSET; MUST be zero (3.1.5.4)
 */
struct smbd_data_msg_pdu {
	struct smbd_data_hdr_pdu hdr;
	__le32 padding;
} __packed;

/**
 * struct smbd_buffer_desc_v1 - SMB_DIRECT_BUFFER_DESCRIPTOR_V1, [MS-SMBD] 2.2.3.1
 * @offset: provider address of the first byte (the MR's iova)
 * @token: steering tag (the MR's rkey)
 * @length: bytes in the region
 */
struct smbd_buffer_desc_v1 {
	__le64 offset;
	__le32 token;
	__le32 length;
} __packed;

/**
 * struct smbd_irdord_pdu - IRD/ORD negotiate header, [MS-SMBD] 6.1
 * @ird: incoming RDMA read depth of the sender
 * @ord: outgoing RDMA read depth of the sender
 *
 * Carried at the start of the iWARP connection private data. The
 * specification states no byte order; Linux peers use network order.
 */
struct smbd_irdord_pdu {
	__be32 ird;
	__be32 ord;
} __packed;

static_assert(sizeof(struct smbd_neg_req_pdu) == 20);
static_assert(sizeof(struct smbd_neg_resp_pdu) == 32);
static_assert(sizeof(struct smbd_data_hdr_pdu) == 20);
static_assert(sizeof(struct smbd_buffer_desc_v1) == 16);
static_assert(offsetof(struct smbd_buffer_desc_v1, offset) == 0);
static_assert(offsetof(struct smbd_buffer_desc_v1, token) == 8);
static_assert(offsetof(struct smbd_buffer_desc_v1, length) == 12);
static_assert(sizeof(struct smbd_irdord_pdu) == 8);
/* The payload offset is 8-byte aligned and leaves 4 bytes of padding. */
static_assert(!(SMBD_DATA_OFFSET % 8));
static_assert(sizeof(struct smbd_data_hdr_pdu) + 4 == SMBD_DATA_OFFSET);
static_assert(sizeof(struct smbd_data_msg_pdu) == SMBD_DATA_OFFSET);
static_assert(sizeof(struct smbd_neg_resp_pdu) <= SMBD_NEGOTIATE_RECV_SIZE);

#endif /* _SMBD_PDU_H */

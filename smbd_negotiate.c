// SPDX-License-Identifier: GPL-2.0
/*
 * smbd: SMB Direct negotiation, the pure part.
 *
 * Encode and decode the Negotiate Request and Response ([MS-SMBD] 2.2.1,
 * 2.2.2), the check of the local parameters, the checks and results of
 * each side ([MS-SMBD] 3.1.5.6 responder, 3.1.5.7 initiator),
 * and the iWARP IRD/ORD private data ([MS-SMBD] 6.1, 6.2).
 *
 * Nothing here touches a device or a global: the caller passes the bytes
 * it received and gets a verdict and the connection values back. The
 * local defaults and the module parameters that set them are in
 * smbd_params.c.
 */

#include <linux/errno.h>
#include <linux/kernel.h>
#include <linux/minmax.h>
#include <linux/module.h>
#include <linux/string.h>
#include "smbd_compat.h"

#include "smbd_proto.h"

/**
 * smbd_params_check() - refuse local parameters we could not honour
 * @p: parameters chosen by the consumer
 *
 * We must offer a peer what we demand of it ([MS-SMBD] 3.1.5.6, 3.1.5.7):
 * at least 128-byte messages, 128 KiB reassembly and one credit. A send
 * size must leave room for a payload after the 24-byte header. A
 * MaxReadWriteSize is 0 (no RDMA read or write) or at least
 * %SMBD_MIN_READ_WRITE_SIZE, the floor negotiation keeps to.
 *
 * Context: any.
 * Return: 0, or -EINVAL naming no field (the caller logs the values).
 */
int smbd_params_check(const struct smbd_params *p)
{
	if (!p->recv_credit_max || !p->send_credit_target)
		return -EINVAL;
	if (p->max_send_size < SMBD_MIN_RECEIVE_SIZE ||
	    p->max_recv_size < SMBD_MIN_RECEIVE_SIZE)
		return -EINVAL;
	if (p->max_fragmented_recv_size < SMBD_MIN_FRAGMENTED_SIZE)
		return -EINVAL;
	if (p->max_read_write_size &&
	    p->max_read_write_size < SMBD_MIN_READ_WRITE_SIZE)
		return -EINVAL;
	if (!p->negotiate_timeout_ms)
		return -EINVAL;
	if (p->keepalive_interval_ms && !p->keepalive_timeout_ms)
		return -EINVAL;
	if (p->ack_timeout > 31)	/* a 5-bit field (IBA 9.7.6.1.3) */
		return -EINVAL;
	if (p->dev_class > SMBD_DEV_IWARP)
		return -EINVAL;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(smbd_params_check);

/**
 * smbd_neg_req_encode() - write a Negotiate Request ([MS-SMBD] 2.2.1)
 * @req: host-order fields
 * @pdu: wire buffer to fill; Reserved is written as zero
 *
 * Context: any.
 */
void smbd_neg_req_encode(const struct smbd_neg_req *req,
			 struct smbd_neg_req_pdu *pdu)
{
	pdu->min_version = cpu_to_le16(req->min_version);
	pdu->max_version = cpu_to_le16(req->max_version);
	pdu->reserved = 0;
	pdu->credits_requested = cpu_to_le16(req->credits_requested);
	pdu->preferred_send_size = cpu_to_le32(req->preferred_send_size);
	pdu->max_receive_size = cpu_to_le32(req->max_receive_size);
	pdu->max_fragmented_size = cpu_to_le32(req->max_fragmented_size);
}
EXPORT_SYMBOL_IF_KUNIT(smbd_neg_req_encode);

/**
 * smbd_neg_req_decode() - read a Negotiate Request ([MS-SMBD] 2.2.1)
 * @pdu: 20 wire bytes; need not be aligned
 * @req: host-order fields; Reserved is ignored
 *
 * Context: any.
 */
void smbd_neg_req_decode(const struct smbd_neg_req_pdu *pdu,
			 struct smbd_neg_req *req)
{
	req->min_version = get_unaligned_le16(&pdu->min_version);
	req->max_version = get_unaligned_le16(&pdu->max_version);
	req->credits_requested = get_unaligned_le16(&pdu->credits_requested);
	req->preferred_send_size = get_unaligned_le32(&pdu->preferred_send_size);
	req->max_receive_size = get_unaligned_le32(&pdu->max_receive_size);
	req->max_fragmented_size = get_unaligned_le32(&pdu->max_fragmented_size);
}
EXPORT_SYMBOL_IF_KUNIT(smbd_neg_req_decode);

/**
 * smbd_neg_resp_encode() - write a Negotiate Response ([MS-SMBD] 2.2.2)
 * @resp: host-order fields
 * @pdu: wire buffer to fill; Reserved is written as zero
 *
 * Context: any.
 */
void smbd_neg_resp_encode(const struct smbd_neg_resp *resp,
			  struct smbd_neg_resp_pdu *pdu)
{
	pdu->min_version = cpu_to_le16(resp->min_version);
	pdu->max_version = cpu_to_le16(resp->max_version);
	pdu->negotiated_version = cpu_to_le16(resp->negotiated_version);
	pdu->reserved = 0;
	pdu->credits_requested = cpu_to_le16(resp->credits_requested);
	pdu->credits_granted = cpu_to_le16(resp->credits_granted);
	pdu->status = cpu_to_le32(resp->status);
	pdu->max_read_write_size = cpu_to_le32(resp->max_read_write_size);
	pdu->preferred_send_size = cpu_to_le32(resp->preferred_send_size);
	pdu->max_receive_size = cpu_to_le32(resp->max_receive_size);
	pdu->max_fragmented_size = cpu_to_le32(resp->max_fragmented_size);
}
EXPORT_SYMBOL_IF_KUNIT(smbd_neg_resp_encode);

/**
 * smbd_neg_resp_decode() - read a Negotiate Response ([MS-SMBD] 2.2.2)
 * @pdu: 32 wire bytes; need not be aligned
 * @resp: host-order fields; Reserved is ignored
 *
 * Context: any.
 */
void smbd_neg_resp_decode(const struct smbd_neg_resp_pdu *pdu,
			  struct smbd_neg_resp *resp)
{
	resp->min_version = get_unaligned_le16(&pdu->min_version);
	resp->max_version = get_unaligned_le16(&pdu->max_version);
	resp->negotiated_version = get_unaligned_le16(&pdu->negotiated_version);
	resp->credits_requested = get_unaligned_le16(&pdu->credits_requested);
	resp->credits_granted = get_unaligned_le16(&pdu->credits_granted);
	resp->status = get_unaligned_le32(&pdu->status);
	resp->max_read_write_size = get_unaligned_le32(&pdu->max_read_write_size);
	resp->preferred_send_size = get_unaligned_le32(&pdu->preferred_send_size);
	resp->max_receive_size = get_unaligned_le32(&pdu->max_receive_size);
	resp->max_fragmented_size = get_unaligned_le32(&pdu->max_fragmented_size);
}
EXPORT_SYMBOL_IF_KUNIT(smbd_neg_resp_decode);

/**
 * smbd_offer_send() - the largest message we offer to send
 * @p: local parameters
 *
 * Connection.MaxSendSize as our negotiate message carries it (the
 * request's PreferredSendSize, the response's after negotiation):
 * @p->large_size where that is larger. A connection whose buffers cannot
 * hold it has cleared it before it negotiates (smbd_split_count()).
 * Windows Server 2012 R2 and later refuse a request whose
 * PreferredSendSize is above 8136 ([MS-SMBD] 3.1.5.6, WIN<6>): an
 * initiator that may reach one offers less, as the cifs adapter does.
 *
 * Context: any.
 * Return: the size in bytes.
 */
u32 smbd_offer_send(const struct smbd_params *p)
{
	return max(p->max_send_size, p->large_size);
}
EXPORT_SYMBOL_IF_KUNIT(smbd_offer_send);

/**
 * smbd_offer_recv() - the largest message we offer to receive
 * @p: local parameters
 *
 * MaxReceiveSize as our negotiate message carries it, @p->large_size
 * where that is larger. Negotiation takes the smaller of this and the
 * peer's PreferredSendSize, so a peer that offers less (every stock
 * one) leaves the receives as they were made.
 *
 * Context: any.
 * Return: the size in bytes.
 */
u32 smbd_offer_recv(const struct smbd_params *p)
{
	return max(p->max_recv_size, p->large_size);
}
EXPORT_SYMBOL_IF_KUNIT(smbd_offer_recv);

/**
 * smbd_split_count() - how many buffers of one size chunks of memory hold
 * @chunk: bytes of every chunk but the last
 * @total: bytes of all the chunks together
 * @stride: bytes of one buffer, aligned as it will be laid out
 *
 * No buffer straddles two chunks: each chunk is one DMA mapping. This is
 * how many receives (or copy buffers) a connection has once negotiation
 * says how large a message is (Documentation/smbd.rst, "The receive
 * split"); %SMBD_SPLIT_MIN_RECVS of the large size must fit for a
 * connection to offer it at all.
 *
 * Context: any.
 * Return: the count; 0 if a buffer is larger than every chunk.
 */
u32 smbd_split_count(u32 chunk, u32 total, u32 stride)
{
	if (!chunk || !stride)
		return 0;
	return total / chunk * (chunk / stride) + total % chunk / stride;
}
EXPORT_SYMBOL_IF_KUNIT(smbd_split_count);

/**
 * smbd_neg_req_build() - the initiator's Negotiate Request ([MS-SMBD] 3.1.5.2)
 * @p: local parameters
 * @pdu: wire buffer to fill
 *
 * MinVersion = MaxVersion = 0x0100, Reserved 0, CreditsRequested =
 * SendCreditTarget, PreferredSendSize = MaxSendSize, MaxReceiveSize and
 * MaxFragmentedSize = MaxFragmentedRecvSize; the sizes are the ones we
 * offer (smbd_offer_send(), smbd_offer_recv()).
 *
 * Context: any.
 */
void smbd_neg_req_build(const struct smbd_params *p,
			struct smbd_neg_req_pdu *pdu)
{
	struct smbd_neg_req req = {
		.min_version = SMBD_PROTOCOL_V1,
		.max_version = SMBD_PROTOCOL_V1,
		.credits_requested = p->send_credit_target,
		.preferred_send_size = smbd_offer_send(p),
		.max_receive_size = smbd_offer_recv(p),
		.max_fragmented_size = p->max_fragmented_recv_size,
	};

	smbd_neg_req_encode(&req, pdu);
}
EXPORT_SYMBOL_IF_KUNIT(smbd_neg_req_build);

/**
 * smbd_neg_req_process() - the responder's handling of a Negotiate Request
 * @p: local parameters
 * @buf: the received bytes
 * @len: how many bytes the receive completion reported
 * @out: the connection values, valid only on %SMBD_NEG_OK
 *
 * [MS-SMBD] 3.1.5.6, in the order that decides whether a failure
 * response goes out: a message shorter than 20 bytes ends the
 * connection; a version range without 0x0100 is answered with
 * STATUS_NOT_SUPPORTED (see smbd_neg_err_reply_status()); zero
 * CreditsRequested, MaxReceiveSize below 128 or MaxFragmentedSize below
 * 131072 end the connection without a response. Trailing bytes after the
 * 20 are ignored.
 *
 * On success, "ours" being what we offer (smbd_offer_recv(),
 * smbd_offer_send()): MaxReceiveSize = max(128, min(ours,
 * PreferredSendSize)), MaxSendSize = min(ours, MaxReceiveSize),
 * MaxFragmentedSendSize = MaxFragmentedSize, ReceiveCreditTarget =
 * CreditsRequested, and our SendCredits stay zero until the initiator
 * grants some. MaxReadWriteSize is ours alone: the request carries none
 * ([MS-SMBD] 2.2.1), and smbd_params_check() kept it to the floor.
 *
 * Context: any.
 * Return: %SMBD_NEG_OK or the first rule broken.
 */
enum smbd_neg_err smbd_neg_req_process(const struct smbd_params *p,
				       const void *buf, u32 len,
				       struct smbd_negotiated *out)
{
	struct smbd_neg_req req;

	if (len < sizeof(struct smbd_neg_req_pdu))
		return SMBD_NEG_ERR_SHORT;
	smbd_neg_req_decode(buf, &req);

	if (req.min_version > SMBD_PROTOCOL_V1 ||
	    req.max_version < SMBD_PROTOCOL_V1)
		return SMBD_NEG_ERR_VERSION;
	if (!req.credits_requested)
		return SMBD_NEG_ERR_CREDITS_REQUESTED;
	if (req.max_receive_size < SMBD_MIN_RECEIVE_SIZE)
		return SMBD_NEG_ERR_RECV_SIZE;
	if (req.max_fragmented_size < SMBD_MIN_FRAGMENTED_SIZE)
		return SMBD_NEG_ERR_FRAG_SIZE;

	out->max_recv_size = max_t(u32, SMBD_MIN_RECEIVE_SIZE,
				   min(smbd_offer_recv(p),
				       req.preferred_send_size));
	out->max_send_size = min(smbd_offer_send(p), req.max_receive_size);
	out->max_fragmented_send_size = req.max_fragmented_size;
	out->max_fragmented_recv_size = p->max_fragmented_recv_size;
	out->max_read_write_size = p->max_read_write_size;
	out->peer_credits_requested = req.credits_requested;
	out->send_credits = 0;
	return SMBD_NEG_OK;
}
EXPORT_SYMBOL_IF_KUNIT(smbd_neg_req_process);

/**
 * smbd_neg_err_reply_status() - does a refused request get an answer
 * @err: what smbd_neg_req_process() returned
 *
 * [MS-SMBD] 3.1.5.6: only a version mismatch is answered, with
 * STATUS_NOT_SUPPORTED; every other violation ends the connection
 * silently.
 *
 * Context: any.
 * Return: the NTSTATUS for a failure response, or 0 for none.
 */
u32 smbd_neg_err_reply_status(enum smbd_neg_err err)
{
	return err == SMBD_NEG_ERR_VERSION ? SMBD_STATUS_NOT_SUPPORTED : 0;
}
EXPORT_SYMBOL_IF_KUNIT(smbd_neg_err_reply_status);

/**
 * smbd_neg_resp_build() - the responder's successful Negotiate Response
 * @p: local parameters
 * @n: values from smbd_neg_req_process()
 * @credits_granted: receives really posted for the peer (ReceiveCredits)
 * @pdu: wire buffer to fill
 *
 * [MS-SMBD] 3.1.5.3: NegotiatedVersion 0x0100, CreditsRequested =
 * SendCreditTarget, CreditsGranted = ReceiveCredits, PreferredSendSize =
 * MaxSendSize, MaxReceiveSize and MaxFragmentedSize = MaxFragmentedRecvSize
 * as negotiated, Status 0.
 *
 * Context: any.
 */
void smbd_neg_resp_build(const struct smbd_params *p,
			 const struct smbd_negotiated *n, u16 credits_granted,
			 struct smbd_neg_resp_pdu *pdu)
{
	struct smbd_neg_resp resp = {
		.min_version = SMBD_PROTOCOL_V1,
		.max_version = SMBD_PROTOCOL_V1,
		.negotiated_version = SMBD_PROTOCOL_V1,
		.credits_requested = p->send_credit_target,
		.credits_granted = credits_granted,
		.status = SMBD_STATUS_SUCCESS,
		.max_read_write_size = n->max_read_write_size,
		.preferred_send_size = n->max_send_size,
		.max_receive_size = n->max_recv_size,
		.max_fragmented_size = n->max_fragmented_recv_size,
	};

	smbd_neg_resp_encode(&resp, pdu);
}
EXPORT_SYMBOL_IF_KUNIT(smbd_neg_resp_build);

/**
 * smbd_neg_resp_build_failure() - a failure Negotiate Response
 * @status: the NTSTATUS to report; not zero
 * @pdu: wire buffer to fill
 *
 * [MS-SMBD] 3.1.5.3: MinVersion = MaxVersion = 0x0100, Status set, every
 * other field zero.
 *
 * Context: any.
 */
void smbd_neg_resp_build_failure(u32 status, struct smbd_neg_resp_pdu *pdu)
{
	struct smbd_neg_resp resp = {
		.min_version = SMBD_PROTOCOL_V1,
		.max_version = SMBD_PROTOCOL_V1,
		.status = status,
	};

	smbd_neg_resp_encode(&resp, pdu);
}
EXPORT_SYMBOL_IF_KUNIT(smbd_neg_resp_build_failure);

/**
 * smbd_neg_resp_process() - the initiator's handling of a Negotiate Response
 * @p: local parameters (the values our request carried)
 * @buf: the received bytes
 * @len: how many bytes the receive completion reported
 * @out: the connection values, valid only on %SMBD_NEG_OK
 *
 * [MS-SMBD] 3.1.5.7: the message must be at least 32 bytes, with
 * NegotiatedVersion 0x0100, MaxReceiveSize >= 128, MaxFragmentedSize >=
 * 131072, CreditsGranted > 0, CreditsRequested > 0, PreferredSendSize <=
 * our MaxReceiveSize and Status 0. A failure response fails the version
 * check first (its NegotiatedVersion is zero) but is reported by its
 * Status, which says more.
 *
 * On success, "ours" being what we offer: MaxReceiveSize = max(128,
 * min(ours, PreferredSendSize)), MaxSendSize = min(ours, MaxReceiveSize),
 * MaxReadWriteSize = min(ours, MaxReadWriteSize) or 0 below
 * %SMBD_MIN_READ_WRITE_SIZE, SendCredits = CreditsGranted,
 * ReceiveCreditTarget = CreditsRequested, MaxFragmentedSendSize =
 * MaxFragmentedSize.
 *
 * Context: any.
 * Return: %SMBD_NEG_OK or the first rule broken.
 */
enum smbd_neg_err smbd_neg_resp_process(const struct smbd_params *p,
					const void *buf, u32 len,
					struct smbd_negotiated *out)
{
	struct smbd_neg_resp resp;

	if (len < sizeof(struct smbd_neg_resp_pdu))
		return SMBD_NEG_ERR_SHORT;
	smbd_neg_resp_decode(buf, &resp);

	if (resp.status != SMBD_STATUS_SUCCESS)
		return SMBD_NEG_ERR_STATUS;
	if (resp.negotiated_version != SMBD_PROTOCOL_V1)
		return SMBD_NEG_ERR_VERSION;
	if (resp.max_receive_size < SMBD_MIN_RECEIVE_SIZE)
		return SMBD_NEG_ERR_RECV_SIZE;
	if (resp.max_fragmented_size < SMBD_MIN_FRAGMENTED_SIZE)
		return SMBD_NEG_ERR_FRAG_SIZE;
	if (!resp.credits_granted)
		return SMBD_NEG_ERR_CREDITS_GRANTED;
	if (!resp.credits_requested)
		return SMBD_NEG_ERR_CREDITS_REQUESTED;
	if (resp.preferred_send_size > smbd_offer_recv(p))
		return SMBD_NEG_ERR_PREF_SEND_SIZE;

	out->max_recv_size = max_t(u32, SMBD_MIN_RECEIVE_SIZE,
				   min(smbd_offer_recv(p),
				       resp.preferred_send_size));
	out->max_send_size = min(smbd_offer_send(p), resp.max_receive_size);
	out->max_read_write_size = min(p->max_read_write_size,
				       resp.max_read_write_size);
	/*
	 * The section sets no lower bound, nor lists this among the fields
	 * that fail a response: a peer that offers less than the floor
	 * gets a connection with no RDMA read or write, as with 0, rather
	 * than one whose registrations no upper-layer I/O fits.
	 */
	if (out->max_read_write_size < SMBD_MIN_READ_WRITE_SIZE)
		out->max_read_write_size = 0;
	out->max_fragmented_send_size = resp.max_fragmented_size;
	out->max_fragmented_recv_size = p->max_fragmented_recv_size;
	out->peer_credits_requested = resp.credits_requested;
	out->send_credits = resp.credits_granted;
	return SMBD_NEG_OK;
}
EXPORT_SYMBOL_IF_KUNIT(smbd_neg_resp_process);

/**
 * smbd_neg_err_str() - a short name for a negotiation verdict
 * @err: the verdict
 *
 * Context: any.
 * Return: a static string, for logs and tracepoints.
 */
const char *smbd_neg_err_str(enum smbd_neg_err err)
{
	static const char * const names[] = {
		[SMBD_NEG_OK] = "ok",
		[SMBD_NEG_ERR_SHORT] = "short message",
		[SMBD_NEG_ERR_VERSION] = "version",
		[SMBD_NEG_ERR_CREDITS_REQUESTED] = "zero credits requested",
		[SMBD_NEG_ERR_CREDITS_GRANTED] = "zero credits granted",
		[SMBD_NEG_ERR_RECV_SIZE] = "max receive size below 128",
		[SMBD_NEG_ERR_FRAG_SIZE] = "max fragmented size below 131072",
		[SMBD_NEG_ERR_PREF_SEND_SIZE] = "preferred send size too large",
		[SMBD_NEG_ERR_STATUS] = "failure status",
		[SMBD_NEG_ERR_EARLY] = "message before the request",
	};

	if ((unsigned int)err >= ARRAY_SIZE(names))
		return "unknown";
	return names[err];
}
EXPORT_SYMBOL_IF_KUNIT(smbd_neg_err_str);

/**
 * smbd_irdord_encode() - the IRD/ORD negotiate header ([MS-SMBD] 6.1)
 * @ird: our incoming RDMA read depth
 * @ord: our outgoing RDMA read depth
 * @pdu: 8 bytes of connection private data to fill (network order, as
 *	Linux peers use; the specification states none)
 *
 * Context: any.
 */
void smbd_irdord_encode(u32 ird, u32 ord, struct smbd_irdord_pdu *pdu)
{
	pdu->ird = cpu_to_be32(ird);
	pdu->ord = cpu_to_be32(ord);
}
EXPORT_SYMBOL_IF_KUNIT(smbd_irdord_encode);

/*
 * The IRD/ORD negotiate header of @priv, when it holds one: network order,
 * or the host (little-endian) order of old Linux initiators. A big-endian
 * reading that gives a value above 0xffff while the little-endian one does
 * not is taken as such a peer, as ksmbd does.
 */
static bool smbd_irdord_decode(const void *priv, u32 len, u32 *ird, u32 *ord)
{
	const struct smbd_irdord_pdu *pdu = priv;

	if (!priv || len < sizeof(*pdu))
		return false;
	*ird = get_unaligned_be32(&pdu->ird);
	*ord = get_unaligned_be32(&pdu->ord);
	if (*ird > U16_MAX || *ord > U16_MAX) {
		u32 le_ird = get_unaligned_le32(&pdu->ird);
		u32 le_ord = get_unaligned_le32(&pdu->ord);

		if (le_ird <= U16_MAX && le_ord <= U16_MAX) {
			*ird = le_ird;
			*ord = le_ord;
		}
	}
	return true;
}

/**
 * smbd_irdord_accept() - the accepting side's IRD/ORD ([MS-SMBD] 6.2)
 * @own_ird: our incoming RDMA read depth
 * @own_ord: our outgoing RDMA read depth
 * @priv: the connection private data received (may be NULL)
 * @len: its length
 * @ird: IRD to program and reply with: min(own ORD, peer IRD)
 * @ord: ORD to program and reply with: min(own IRD, peer ORD)
 *
 * The header may be in the host order of old Linux initiators
 * (smbd_irdord_decode()).
 *
 * Context: any.
 * Return: 0 with *@ird and *@ord set; -ENODATA when no header is present
 * (leave IRD/ORD to the provider); -ECONNREFUSED when a depth negotiates
 * to zero, in which case the connection must be rejected.
 */
int smbd_irdord_accept(u32 own_ird, u32 own_ord, const void *priv, u32 len,
		       u32 *ird, u32 *ord)
{
	u32 peer_ird, peer_ord;

	if (!smbd_irdord_decode(priv, len, &peer_ird, &peer_ord))
		return -ENODATA;
	*ird = min(own_ord, peer_ird);
	*ord = min(own_ird, peer_ord);
	if (!*ird || !*ord)
		return -ECONNREFUSED;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(smbd_irdord_accept);

/**
 * smbd_irdord_reply() - the connecting side's IRD/ORD ([MS-SMBD] 6.2)
 * @own_ird: the incoming RDMA read depth we asked for
 * @own_ord: the outgoing RDMA read depth we asked for
 * @priv: the private data of the accepting peer's reply (may be NULL)
 * @len: its length
 * @ird: set to the IRD the reply transmits, at most @own_ird
 * @ord: set to the ORD the reply transmits, at most @own_ord
 *
 * The connecting peer's IRD and ORD are the values the accepting peer
 * transmitted: what it computed from ours and its own (smbd_irdord_accept()
 * on our side), so never more than we asked for from a peer that follows
 * 6.2; one that offers more is held to what we asked.
 *
 * Context: any.
 * Return: 0 with *@ird and *@ord set; -ENODATA when the reply holds no
 * header (an MPA v2 peer: the provider negotiated them); -ECONNREFUSED
 * when it transmits a depth of zero, which no accepted connection has.
 */
int smbd_irdord_reply(u32 own_ird, u32 own_ord, const void *priv, u32 len,
		      u32 *ird, u32 *ord)
{
	u32 peer_ird, peer_ord;

	if (!smbd_irdord_decode(priv, len, &peer_ird, &peer_ord))
		return -ENODATA;
	if (!peer_ird || !peer_ord)
		return -ECONNREFUSED;
	*ird = min(own_ird, peer_ird);
	*ord = min(own_ord, peer_ord);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(smbd_irdord_reply);

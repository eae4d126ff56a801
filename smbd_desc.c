// SPDX-License-Identifier: GPL-2.0
/*
 * smbd: Buffer Descriptors V1, the pure part.
 *
 * Write and read the 16-byte wire form ([MS-SMBD] 2.2.3.1) and work out
 * which pieces of the peer's registered buffer an RDMA read or write
 * touches ([MS-SMBD] 3.1.4.5, 3.1.4.6). Descriptors come from the peer
 * inside upper-layer messages and are never trusted: every Length and
 * Offset is checked before use, and all sums are done so that they
 * cannot wrap.
 *
 * A descriptor is well formed when its Length is not zero and its last
 * byte, Offset + Length - 1, is still a 64-bit address: the region may
 * end exactly at 2^64 but not go past it.
 */

#include <asm/page.h>
#include <linux/errno.h>
#include <linux/kernel.h>
#include <linux/limits.h>
#include <linux/minmax.h>
#include <linux/module.h>
#include "smbd_compat.h"

#include "smbd_proto.h"

/* The wire structure of smbd_pdu.h is the size the public API promises. */
static_assert(sizeof(struct smbd_buffer_desc_v1) == SMBD_BUF_DESC_LEN);

/* Length non-zero and Offset + Length not beyond 2^64 (RW-04). */
static bool smbd_desc_ok(const struct smbd_buf_desc *d)
{
	return d->length && d->offset <= U64_MAX - (d->length - 1);
}

/**
 * smbd_desc_encode() - write one Buffer Descriptor V1 ([MS-SMBD] 2.2.3.1)
 * @d: the descriptor, host order (as smbd_register() returns it)
 * @wire: %SMBD_BUF_DESC_LEN bytes to fill; need not be aligned
 *
 * Offset, Token and Length, each little-endian, with no padding. The
 * upper layer copies the result into its own message (for SMB2, the
 * channel info of a READ or WRITE request).
 *
 * Context: any.
 */
void smbd_desc_encode(const struct smbd_buf_desc *d, void *wire)
{
	struct smbd_buffer_desc_v1 *pdu = wire;

	put_unaligned_le64(d->offset, &pdu->offset);
	put_unaligned_le32(d->token, &pdu->token);
	put_unaligned_le32(d->length, &pdu->length);
}
EXPORT_SYMBOL_NS_GPL(smbd_desc_encode, SMBD);

/**
 * smbd_desc_decode() - read an array of Buffer Descriptors V1 from the peer
 * @wire: the bytes of the array as the peer sent them; need not be aligned
 * @len: their number; a multiple of %SMBD_BUF_DESC_LEN
 * @descs: where the decoded descriptors go, in wire order
 * @max_descs: room in @descs
 *
 * [MS-SMBD] 2.2.3.1 gives the layout; RW-04 of the requirements says what
 * a peer's array must satisfy before [MS-SMBD] 3.1.4.5 or 3.1.4.6 may use
 * it: a whole number of descriptors, at least one, none with Length 0,
 * and none whose Offset + Length goes past 2^64. The array is refused as
 * a whole; on failure @descs holds nothing meaningful. The Token and the
 * Offset are otherwise opaque: only the peer's RDMA provider can tell
 * whether they name memory it registered.
 *
 * Context: any.
 * Return: the number of descriptors decoded (at least 1); -EINVAL when
 * @len is 0 or not a multiple of %SMBD_BUF_DESC_LEN, or a descriptor has
 * Length 0 or wraps; -E2BIG when there are more than @max_descs.
 */
int smbd_desc_decode(const void *wire, u32 len, struct smbd_buf_desc *descs,
		     u32 max_descs)
{
	const struct smbd_buffer_desc_v1 *pdu = wire;
	u32 n = len / SMBD_BUF_DESC_LEN, i;

	if (!len || len % SMBD_BUF_DESC_LEN)
		return -EINVAL;
	if (n > max_descs)
		return -E2BIG;

	for (i = 0; i < n; i++) {
		struct smbd_buf_desc *d = &descs[i];

		d->offset = get_unaligned_le64(&pdu[i].offset);
		d->token = get_unaligned_le32(&pdu[i].token);
		d->length = get_unaligned_le32(&pdu[i].length);
		if (!smbd_desc_ok(d))
			return -EINVAL;
	}
	/* n <= U32_MAX / 16, so it fits an int. */
	return n;
}
EXPORT_SYMBOL_NS_GPL(smbd_desc_decode, SMBD);

/**
 * smbd_desc_slice() - the remote segments of one RDMA read or write
 * @d: the peer's descriptors; together, in order, they describe one buffer
 * @n: their number
 * @offset: the first byte of that buffer to transfer
 * @len: bytes to transfer (the local buffer's length)
 * @max_rw: Connection.MaxReadWriteSize
 * @out: where the segments go
 * @max_out: room in @out
 *
 * [MS-SMBD] 3.1.4.5 and 3.1.4.6 (RW-01, RW-02): consume the descriptors'
 * Length fields to find the one holding byte @offset, and let @len say
 * how many are covered. The first segment is that descriptor with its
 * Offset advanced and its Length shrunk to the part after @offset; the
 * ones in the middle are copied whole; the last is shrunk to the part
 * still needed. Tokens are copied unchanged. A single descriptor may
 * yield a segment trimmed at both ends.
 *
 * RW-04: @len is bounded by MaxReadWriteSize, every descriptor must be
 * well formed (Length not 0, Offset + Length not past 2^64) whether or
 * not it is covered, and the range must lie within the descriptors'
 * total. The total is summed in 64 bits: even 2^32 - 1 descriptors of
 * 2^32 - 1 bytes each stay below 2^64, so it cannot wrap; @offset + @len
 * is never formed, so a huge @offset cannot wrap either.
 *
 * Checks run in the order of the return values below, all before @out is
 * written; only -E2BIG leaves a partial result in @out.
 *
 * Context: any.
 * Return: the number of segments written to @out (at least 1); -EINVAL
 * when @len or @n is 0 or a descriptor is malformed; -EMSGSIZE when @len
 * is above @max_rw; -ERANGE when [@offset, @offset + @len) is not inside
 * the descriptors' total; -E2BIG when more than @max_out segments are
 * needed.
 */
int smbd_desc_slice(const struct smbd_buf_desc *d, u32 n, u64 offset, u64 len,
		    u32 max_rw, struct smbd_buf_desc *out, u32 max_out)
{
	u64 total = 0, pos = offset, left = len;
	u32 i, nout = 0;

	if (!len || !n)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		if (!smbd_desc_ok(&d[i]))
			return -EINVAL;
		total += d[i].length;
	}
	if (len > max_rw)
		return -EMSGSIZE;
	if (offset > total || len > total - offset)
		return -ERANGE;
	/* The count is returned as an int. */
	max_out = min_t(u32, max_out, INT_MAX);

	/* RW-01: skip the descriptors wholly before @offset. */
	for (i = 0; pos >= d[i].length; i++)
		pos -= d[i].length;

	/*
	 * RW-02: @pos is the start inside d[i], non-zero only for the first
	 * segment. The range check above guarantees d[] does not run out
	 * before @left reaches zero.
	 */
	while (left) {
		u32 take = min_t(u64, d[i].length - pos, left);

		if (nout == max_out)
			return -E2BIG;
		/* pos < length, and the descriptor ends by 2^64: no wrap. */
		out[nout].offset = d[i].offset + pos;
		out[nout].token = d[i].token;
		out[nout].length = take;
		nout++;
		left -= take;
		pos = 0;
		i++;
	}
	return nout;
}
EXPORT_SYMBOL_IF_KUNIT(smbd_desc_slice);

/**
 * smbd_desc_pieces() - the next pieces of a sliced RDMA read or write
 * @seg: the segments from smbd_desc_slice()
 * @nseg: their number
 * @i: the segment to start in
 * @off: bytes of @seg[@i] already moved
 * @chunk: the most bytes one piece (one rdma_rw context) moves
 * @lead: %SMBD_LEAD_NONE, or where in its page our buffer is at the first
 *	piece (below %PAGE_SIZE; the buffer's pages follow one another, as a
 *	single kvec's do): each piece then ends where the pages of @chunk
 *	bytes from its page's start end, so that one registration of that
 *	many pages maps it (an iWARP read), and a buffer that starts on a
 *	page moves in pieces of @chunk
 * @pc: filled with the pieces: address, token and length each
 * @max: most pieces to give
 *
 * The pieces follow one another through the segments, each within one
 * segment, all but a segment's last exactly @chunk bytes (less the lead
 * of their start in its page).
 *
 * Context: any.
 * Return: the number of pieces (0 when @i is past the last segment).
 */
u32 smbd_desc_pieces(const struct smbd_buf_desc *seg, u32 nseg, u32 i,
		     u32 off, u32 chunk, u32 lead, struct smbd_buf_desc *pc,
		     u32 max)
{
	u32 n;

	for (n = 0; n < max && i < nseg; n++) {
		/* Never an empty piece: a lead is below a page, a chunk not. */
		u32 room = lead < chunk ? chunk - lead : chunk;

		pc[n].offset = seg[i].offset + off;
		pc[n].token = seg[i].token;
		pc[n].length = min(seg[i].length - off, room);
		if (lead != SMBD_LEAD_NONE)
			lead = (lead + pc[n].length) & (PAGE_SIZE - 1);
		off += pc[n].length;
		if (off == seg[i].length) {
			i++;
			off = 0;
		}
	}
	return n;
}
EXPORT_SYMBOL_IF_KUNIT(smbd_desc_pieces);

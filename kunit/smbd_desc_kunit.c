// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: Buffer Descriptors V1 ([MS-SMBD] 2.2.3.1), decoding a peer's
 * array (RW-04) and slicing it for one RDMA read or write ([MS-SMBD]
 * 3.1.4.5, 3.1.4.6; RW-01, RW-02, RW-04).
 */
#include <asm/page.h>
#include <kunit/test.h>
#include <linux/limits.h>
#include <linux/math.h>
#include <linux/string.h>

#include "smbd_proto.h"

#define U32M	((u64)U32_MAX)
#define MIB	(1024 * 1024)

/* ---- encoding ---- */

/* Offset, Token, Length: little-endian, in that order, nothing else. */
static void smbd_desc_encode_bytes(struct kunit *test)
{
	static const u8 want[SMBD_BUF_DESC_LEN] = {
		0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01,
		0x44, 0x33, 0x22, 0x11,
		0x88, 0x77, 0x66, 0x55,
	};
	const struct smbd_buf_desc d = {
		.offset = 0x0102030405060708ULL,
		.token = 0x11223344,
		.length = 0x55667788,
	};
	u8 buf[SMBD_BUF_DESC_LEN + 3];
	unsigned int i;

	/* At an odd address, with guard bytes on both sides. */
	memset(buf, 0xaa, sizeof(buf));
	smbd_desc_encode(&d, buf + 1);
	KUNIT_EXPECT_EQ(test, buf[0], 0xaa);
	KUNIT_EXPECT_MEMEQ(test, buf + 1, want, sizeof(want));
	for (i = SMBD_BUF_DESC_LEN + 1; i < sizeof(buf); i++)
		KUNIT_EXPECT_EQ_MSG(test, buf[i], 0xaa, "byte %u", i);
}

/* [MS-SMBD] 4.4: the single descriptor of a 1 MiB write. */
static void smbd_desc_example_4_4(struct kunit *test)
{
	static const u8 wire[SMBD_BUF_DESC_LEN] = {
		0x12, 0xe0, 0xcd, 0xab, 0x00, 0x00, 0x00, 0x00,
		0x56, 0xbc, 0x00, 0x1a, 0x00, 0x00, 0x10, 0x00,
	};
	struct smbd_buf_desc d, seg;
	u8 back[SMBD_BUF_DESC_LEN];

	KUNIT_ASSERT_EQ(test, smbd_desc_decode(wire, sizeof(wire), &d, 1), 1);
	KUNIT_EXPECT_EQ(test, d.offset, 0xABCDE012ULL);
	KUNIT_EXPECT_EQ(test, d.token, 0x1A00BC56);
	KUNIT_EXPECT_EQ(test, d.length, MIB);

	smbd_desc_encode(&d, back);
	KUNIT_EXPECT_MEMEQ(test, back, wire, sizeof(wire));

	/* The responder reads the whole 1 MiB in one segment. */
	KUNIT_ASSERT_EQ(test, smbd_desc_slice(&d, 1, 0, MIB, MIB, &seg, 1), 1);
	KUNIT_EXPECT_EQ(test, seg.offset, 0xABCDE012ULL);
	KUNIT_EXPECT_EQ(test, seg.token, 0x1A00BC56);
	KUNIT_EXPECT_EQ(test, seg.length, MIB);
}

/* Whatever we encode, decode gives back field for field, at any alignment. */
static void smbd_desc_round_trip(struct kunit *test)
{
	static const struct smbd_buf_desc in[] = {
		{ 0x0102030405060708ULL, 0x11223344, 0x55667788 },
		{ 0, 0, 1 },
		{ 0xfffffffe00000000ULL, 0xffffffff, U32_MAX },
		{ U64_MAX, 0x80000000, 1 },		/* ends at 2^64 */
		{ U64_MAX - U32M + 1, 7, U32_MAX },	/* ends at 2^64 */
		{ 0x8000000000000000ULL, 0x00010203, 4096 },
	};
	const u32 len = ARRAY_SIZE(in) * SMBD_BUF_DESC_LEN;
	struct smbd_buf_desc out[ARRAY_SIZE(in) + 1];
	unsigned int shift, i;
	u8 *buf;

	buf = kunit_kzalloc(test, len + 8, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	for (shift = 0; shift < 8; shift += 3) {
		for (i = 0; i < ARRAY_SIZE(in); i++)
			smbd_desc_encode(&in[i],
					 buf + shift + i * SMBD_BUF_DESC_LEN);
		memset(out, 0x5a, sizeof(out));
		KUNIT_ASSERT_EQ(test, smbd_desc_decode(buf + shift, len, out,
						       ARRAY_SIZE(out)),
				(int)ARRAY_SIZE(in));
		for (i = 0; i < ARRAY_SIZE(in); i++) {
			KUNIT_EXPECT_EQ_MSG(test, out[i].offset, in[i].offset,
					    "shift %u desc %u", shift, i);
			KUNIT_EXPECT_EQ_MSG(test, out[i].token, in[i].token,
					    "shift %u desc %u", shift, i);
			KUNIT_EXPECT_EQ_MSG(test, out[i].length, in[i].length,
					    "shift %u desc %u", shift, i);
		}
		/* Nothing is written past the descriptors decoded. */
		KUNIT_EXPECT_EQ(test, out[ARRAY_SIZE(in)].length, 0x5a5a5a5a);
	}
}

/* ---- decoding a peer's array (RW-04) ---- */

struct dec_case {
	const char *name;
	struct smbd_buf_desc d[3];
	u32 nd;		/* descriptors encoded */
	u32 len;	/* bytes passed; 0 means nd * 16 */
	bool zero_len;	/* really pass 0 bytes */
	u32 max;
	int want;
};

#define D(o, t, l)	{ (o), (t), (l) }
#define OK3		{ D(0x1000, 1, 100), D(0x2000, 2, 200), D(0x3000, 3, 300) }

static const struct dec_case dec_cases[] = {
	{ "len 0", OK3, 3, 0, true, 8, -EINVAL },
	{ "len 15", OK3, 3, 15, false, 8, -EINVAL },
	{ "len 17", OK3, 3, 17, false, 8, -EINVAL },
	{ "len 47", OK3, 3, 47, false, 8, -EINVAL },
	{ "len 16: one", OK3, 3, 16, false, 8, 1 },
	{ "three", OK3, 3, 0, false, 8, 3 },
	{ "three, room for exactly three", OK3, 3, 0, false, 3, 3 },
	{ "three, room for two", OK3, 3, 0, false, 2, -E2BIG },
	{ "one, no room", OK3, 1, 0, false, 0, -E2BIG },
	{ "zero length, only", { D(0x1000, 1, 0) }, 1, 0, false, 8, -EINVAL },
	{ "zero length, last",
	  { D(0x1000, 1, 100), D(0x2000, 2, 200), D(0x3000, 3, 0) },
	  3, 0, false, 8, -EINVAL },
	{ "zero length, first",
	  { D(0x1000, 1, 0), D(0x2000, 2, 200), D(0x3000, 3, 300) },
	  3, 0, false, 8, -EINVAL },
	{ "zero length at offset 0", { D(0, 1, 0) }, 1, 0, false, 8, -EINVAL },
	{ "ends at 2^64", { D(U64_MAX - 99, 1, 100) }, 1, 0, false, 8, 1 },
	{ "ends at 2^64 + 1", { D(U64_MAX - 98, 1, 100) }, 1, 0, false, 8,
	  -EINVAL },
	{ "offset U64_MAX, length 1", { D(U64_MAX, 1, 1) }, 1, 0, false, 8, 1 },
	{ "offset U64_MAX, length 2", { D(U64_MAX, 1, 2) }, 1, 0, false, 8,
	  -EINVAL },
	{ "length U32_MAX ends at 2^64", { D(U64_MAX - U32M + 1, 1, U32_MAX) },
	  1, 0, false, 8, 1 },
	{ "length U32_MAX wraps", { D(U64_MAX - U32M + 2, 1, U32_MAX) },
	  1, 0, false, 8, -EINVAL },
	{ "wraps, second of three",
	  { D(0x1000, 1, 100), D(U64_MAX - 5, 2, 10), D(0x3000, 3, 300) },
	  3, 0, false, 8, -EINVAL },
};

KUNIT_ARRAY_PARAM_DESC(dec, dec_cases, name);

static void smbd_desc_decode_bad(struct kunit *test)
{
	const struct dec_case *c = test->param_value;
	u8 wire[3 * SMBD_BUF_DESC_LEN];
	struct smbd_buf_desc out[8];
	int ret, k;
	u32 len, i;

	memset(wire, 0, sizeof(wire));
	for (i = 0; i < c->nd; i++)
		smbd_desc_encode(&c->d[i], wire + i * SMBD_BUF_DESC_LEN);
	len = c->zero_len ? 0 : c->len ?: c->nd * SMBD_BUF_DESC_LEN;
	KUNIT_ASSERT_LE(test, len, sizeof(wire));
	KUNIT_ASSERT_LE(test, c->max, ARRAY_SIZE(out));

	ret = smbd_desc_decode(wire, len, out, c->max);
	KUNIT_ASSERT_EQ(test, ret, c->want);
	for (k = 0; k < ret; k++) {
		KUNIT_EXPECT_EQ_MSG(test, out[k].offset, c->d[k].offset, "%d", k);
		KUNIT_EXPECT_EQ_MSG(test, out[k].token, c->d[k].token, "%d", k);
		KUNIT_EXPECT_EQ_MSG(test, out[k].length, c->d[k].length, "%d", k);
	}
}

/* ---- slicing (RW-01, RW-02, RW-04) ---- */

#define SEGS	4

struct slice_case {
	const char *name;
	struct smbd_buf_desc d[SEGS];
	u32 n;
	u64 offset, len;
	u32 max_rw, max_out;
	int want;
	struct smbd_buf_desc seg[SEGS];
};

/* Three regions of 100, 200 and 300 bytes: a 600-byte buffer. */
#define A3 { D(0x1000, 1, 100), D(0x20000, 2, 200), D(0x300000, 3, 300) }
/* Three regions of 2^32 - 1 bytes: the total needs 34 bits. */
#define B3 { D(0x1000000000ULL, 7, U32_MAX), D(0x2000000000ULL, 8, U32_MAX), \
	     D(0x3000000000ULL, 9, U32_MAX) }
#define RW	MIB

static const struct slice_case slice_cases[] = {
	{ "offset 0, whole buffer", A3, 3, 0, 600, RW, SEGS, 3,
	  { D(0x1000, 1, 100), D(0x20000, 2, 200), D(0x300000, 3, 300) } },
	{ "offset 0, first region exactly", A3, 3, 0, 100, RW, SEGS, 1,
	  { D(0x1000, 1, 100) } },
	{ "offset 0, 1 byte", A3, 3, 0, 1, RW, SEGS, 1, { D(0x1000, 1, 1) } },
	{ "inside first, trimmed both ends", A3, 3, 10, 50, RW, SEGS, 1,
	  { D(0x100a, 1, 50) } },
	{ "inside first to its end", A3, 3, 10, 90, RW, SEGS, 1,
	  { D(0x100a, 1, 90) } },
	{ "spanning 2", A3, 3, 50, 100, RW, SEGS, 2,
	  { D(0x1032, 1, 50), D(0x20000, 2, 50) } },
	{ "spanning 3", A3, 3, 50, 400, RW, SEGS, 3,
	  { D(0x1032, 1, 50), D(0x20000, 2, 200), D(0x300000, 3, 150) } },
	{ "spanning 3 to the end", A3, 3, 99, 501, RW, SEGS, 3,
	  { D(0x1063, 1, 1), D(0x20000, 2, 200), D(0x300000, 3, 300) } },
	{ "ending exactly at a boundary", A3, 3, 50, 250, RW, SEGS, 2,
	  { D(0x1032, 1, 50), D(0x20000, 2, 200) } },
	{ "starting exactly at a boundary", A3, 3, 100, 10, RW, SEGS, 1,
	  { D(0x20000, 2, 10) } },
	{ "starting at the last boundary", A3, 3, 300, 300, RW, SEGS, 1,
	  { D(0x300000, 3, 300) } },
	{ "middle region exactly", A3, 3, 100, 200, RW, SEGS, 1,
	  { D(0x20000, 2, 200) } },
	{ "last byte", A3, 3, 599, 1, RW, SEGS, 1, { D(0x30012b, 3, 1) } },
	{ "offset at the very end", A3, 3, 600, 1, RW, SEGS, -ERANGE },
	{ "offset past the end", A3, 3, 601, 1, RW, SEGS, -ERANGE },
	{ "len beyond total by 1", A3, 3, 0, 601, RW, SEGS, -ERANGE },
	{ "offset 1, len beyond total by 1", A3, 3, 1, 600, RW, SEGS, -ERANGE },
	{ "len == max_rw", A3, 3, 50, 100, 100, SEGS, 2,
	  { D(0x1032, 1, 50), D(0x20000, 2, 50) } },
	{ "len == max_rw + 1", A3, 3, 50, 101, 100, SEGS, -EMSGSIZE },
	{ "max_rw 0", A3, 3, 0, 1, 0, SEGS, -EMSGSIZE },
	{ "len 2^32, max_rw U32_MAX", B3, 3, 0, 1ULL << 32, U32_MAX, SEGS,
	  -EMSGSIZE },
	{ "out exactly enough", A3, 3, 50, 400, RW, 3, 3,
	  { D(0x1032, 1, 50), D(0x20000, 2, 200), D(0x300000, 3, 150) } },
	{ "out too small", A3, 3, 50, 400, RW, 2, -E2BIG },
	{ "out 0", A3, 3, 0, 1, RW, 0, -E2BIG },
	{ "len 0", A3, 3, 0, 0, RW, SEGS, -EINVAL },
	{ "no descriptors", A3, 0, 0, 1, RW, SEGS, -EINVAL },
	{ "zero-length descriptor in the range",
	  { D(0x1000, 1, 100), D(0x20000, 2, 0), D(0x300000, 3, 300) },
	  3, 0, 200, RW, SEGS, -EINVAL },
	{ "zero-length descriptor after the range",
	  { D(0x1000, 1, 100), D(0x20000, 2, 200), D(0x300000, 3, 0) },
	  3, 0, 10, RW, SEGS, -EINVAL },
	{ "wrapping descriptor after the range",
	  { D(0x1000, 1, 100), D(U64_MAX - 5, 2, 10) },
	  2, 0, 10, RW, SEGS, -EINVAL },
	{ "region ending at 2^64", { D(U64_MAX - 9, 5, 10) }, 1, 5, 5, RW,
	  SEGS, 1, { D(U64_MAX - 4, 5, 5) } },
	{ "offset U64_MAX", A3, 3, U64_MAX, 1, RW, SEGS, -ERANGE },
	{ "offset + len wraps to 4", B3, 3, U64_MAX - 5, 10, RW, SEGS,
	  -ERANGE },
	{ "offset + len wraps to 0", B3, 3, U64_MAX - 9, 10, RW, SEGS,
	  -ERANGE },
	{ "u32 max: into the second", B3, 3, U32M + 5, 100, RW, SEGS, 1,
	  { D(0x2000000005ULL, 8, 100) } },
	{ "u32 max: across the 2^32 - 1 boundary", B3, 3, 2 * U32M - 1, 2, RW,
	  SEGS, 2, { D(0x2000000000ULL + U32M - 1, 8, 1),
		     D(0x3000000000ULL, 9, 1) } },
	{ "u32 max: len U32_MAX from 1", B3, 3, 1, U32_MAX, U32_MAX, SEGS, 2,
	  { D(0x1000000001ULL, 7, U32_MAX - 1), D(0x2000000000ULL, 8, 1) } },
	{ "u32 max: whole middle", B3, 3, U32M, U32_MAX, U32_MAX, SEGS, 1,
	  { D(0x2000000000ULL, 8, U32_MAX) } },
	{ "u32 max: last byte", B3, 3, 3 * U32M - 1, 1, RW, SEGS, 1,
	  { D(0x3000000000ULL + U32M - 1, 9, 1) } },
	{ "u32 max: offset at the end", B3, 3, 3 * U32M, 1, RW, SEGS,
	  -ERANGE },
	{ "u32 max: len beyond total by 1", B3, 3, 2 * U32M + 1, U32_MAX,
	  U32_MAX, SEGS, -ERANGE },
};

KUNIT_ARRAY_PARAM_DESC(slice, slice_cases, name);

static void smbd_desc_slice_cases(struct kunit *test)
{
	const struct slice_case *c = test->param_value;
	struct smbd_buf_desc out[SEGS + 1];
	int ret, i;

	/* The last entry is a guard: never written. */
	memset(out, 0x5a, sizeof(out));
	ret = smbd_desc_slice(c->d, c->n, c->offset, c->len, c->max_rw, out,
			      c->max_out);
	KUNIT_ASSERT_EQ(test, ret, c->want);
	for (i = 0; i < ret; i++) {
		KUNIT_EXPECT_EQ_MSG(test, out[i].offset, c->seg[i].offset,
				    "segment %d", i);
		KUNIT_EXPECT_EQ_MSG(test, out[i].token, c->seg[i].token,
				    "segment %d", i);
		KUNIT_EXPECT_EQ_MSG(test, out[i].length, c->seg[i].length,
				    "segment %d", i);
	}
	KUNIT_EXPECT_EQ(test, out[SEGS].length, 0x5a5a5a5a);
	KUNIT_EXPECT_EQ(test, out[c->max_out].token, 0x5a5a5a5a);
	/* Failures other than -E2BIG leave @out alone. */
	if (ret < 0 && ret != -E2BIG)
		KUNIT_EXPECT_EQ(test, out[0].offset, 0x5a5a5a5a5a5a5a5aULL);
}

/*
 * Every (offset, len) over a buffer of five regions: the segments must
 * map byte for byte onto the regions laid end to end. The oracle walks
 * the regions one byte at a time, independently of the code under test.
 */
static const struct smbd_buf_desc walk_d[] = {
	D(0x10000, 11, 7), D(0x5000, 12, 1), D(0xa00000, 13, 16),
	D(0x40, 14, 3), D(0x7777000, 15, 9),
};

#define WALK_TOTAL	(7 + 1 + 16 + 3 + 9)

static void walk_addr(u32 pos, u64 *addr, u32 *token)
{
	u32 i = 0;

	while (pos >= walk_d[i].length)
		pos -= walk_d[i++].length;
	*addr = walk_d[i].offset + pos;
	*token = walk_d[i].token;
}

static void smbd_desc_slice_every_range(struct kunit *test)
{
	struct smbd_buf_desc out[ARRAY_SIZE(walk_d)];
	u32 off, len;

	for (off = 0; off <= WALK_TOTAL; off++) {
		for (len = 1; len <= WALK_TOTAL + 1; len++) {
			u32 pos = off, b;
			int ret, k;

			ret = smbd_desc_slice(walk_d, ARRAY_SIZE(walk_d), off,
					      len, WALK_TOTAL + 1, out,
					      ARRAY_SIZE(out));
			if (off + len > WALK_TOTAL) {
				KUNIT_ASSERT_EQ_MSG(test, ret, -ERANGE,
						    "off %u len %u", off, len);
				continue;
			}
			KUNIT_ASSERT_GT_MSG(test, ret, 0, "off %u len %u",
					    off, len);
			for (k = 0; k < ret; k++) {
				KUNIT_ASSERT_GT(test, out[k].length, 0);
				for (b = 0; b < out[k].length; b++, pos++) {
					u64 addr;
					u32 token;

					walk_addr(pos, &addr, &token);
					KUNIT_ASSERT_EQ_MSG(test,
							    out[k].offset + b,
							    addr,
							    "off %u len %u seg %d",
							    off, len, k);
					KUNIT_ASSERT_EQ(test, out[k].token,
							token);
				}
				/* One segment per region: none is split. */
				if (k + 1 < ret)
					KUNIT_ASSERT_NE(test,
							out[k].offset +
							out[k].length,
							out[k + 1].offset);
			}
			KUNIT_ASSERT_EQ_MSG(test, pos, off + len,
					    "off %u len %u", off, len);
		}
	}
}

/*
 * smbd_desc_pieces(): every way through three segments, in chains of 1 to
 * 4 pieces, covers each byte once and in order, never crosses a segment,
 * and cuts a piece short only at a segment's end.
 */
static void smbd_desc_pieces_walk(struct kunit *test)
{
	static const struct smbd_buf_desc seg[] = {
		{ .offset = 0x10000, .token = 1, .length = 600 },
		{ .offset = 0x90000, .token = 2, .length = 256 },
		{ .offset = 0x50000, .token = 3, .length = 44 },
	};
	struct smbd_buf_desc pc[4];
	u32 max, i, off, n, k, total, chunk = 256;

	for (max = 1; max <= ARRAY_SIZE(pc); max++) {
		i = 0;
		off = 0;
		total = 0;
		while (i < ARRAY_SIZE(seg)) {
			n = smbd_desc_pieces(seg, ARRAY_SIZE(seg), i, off, chunk,
					     SMBD_LEAD_NONE, pc, max);
			KUNIT_ASSERT_GT(test, n, 0);
			KUNIT_ASSERT_LE(test, n, max);
			for (k = 0; k < n; k++) {
				KUNIT_ASSERT_LT(test, i, ARRAY_SIZE(seg));
				KUNIT_EXPECT_EQ(test, pc[k].offset,
						seg[i].offset + off);
				KUNIT_EXPECT_EQ(test, pc[k].token, seg[i].token);
				KUNIT_ASSERT_GT(test, pc[k].length, 0);
				KUNIT_ASSERT_LE(test, pc[k].length, chunk);
				KUNIT_ASSERT_LE(test, off + pc[k].length,
						seg[i].length);
				off += pc[k].length;
				total += pc[k].length;
				if (off == seg[i].length) {
					i++;
					off = 0;
				} else {
					KUNIT_EXPECT_EQ(test, pc[k].length, chunk);
				}
			}
		}
		KUNIT_EXPECT_EQ(test, total, 900);
		KUNIT_EXPECT_EQ(test, smbd_desc_pieces(seg, ARRAY_SIZE(seg), i, 0,
						       chunk, SMBD_LEAD_NONE,
						       pc, max), 0);
	}
	/* 600 at 256: 256, 256, 88; then 256; then 44. */
	n = smbd_desc_pieces(seg, ARRAY_SIZE(seg), 0, 0, chunk, SMBD_LEAD_NONE,
			     pc, 4);
	KUNIT_ASSERT_EQ(test, n, 4);
	KUNIT_EXPECT_EQ(test, pc[2].length, 88);
	KUNIT_EXPECT_EQ(test, pc[2].offset, 0x10000 + 512);
	KUNIT_EXPECT_EQ(test, pc[3].offset, 0x90000);
}

/*
 * smbd_desc_pieces() with a lead (an iWARP read into a buffer whose pages
 * follow one another): each piece spans at most the chunk's pages from
 * where it starts in its page, a buffer that starts on a page moves a
 * whole chunk per piece, and a piece cut short by a segment's end leaves
 * the next one its lead. The pages a piece spans are counted the way a
 * registration maps them.
 */
static void smbd_desc_pieces_lead(struct kunit *test)
{
	const u32 chunk = 4 * PAGE_SIZE;
	struct smbd_buf_desc seg[] = {
		{ .offset = 0x100000, .token = 1, .length = 10 * PAGE_SIZE },
		{ .offset = 0x900000, .token = 2, .length = 5000 },
		{ .offset = 0x500000, .token = 3, .length = 3 * PAGE_SIZE },
	};
	static const u32 leads[] = { 0, 1, 100, PAGE_SIZE - 1 };
	struct smbd_buf_desc pc[8];
	u32 l, k, n, lead, total, pieces;

	for (l = 0; l < ARRAY_SIZE(leads); l++) {
		n = smbd_desc_pieces(seg, ARRAY_SIZE(seg), 0, 0, chunk,
				     leads[l], pc, ARRAY_SIZE(pc));
		KUNIT_ASSERT_LE(test, n, ARRAY_SIZE(pc));
		lead = leads[l];
		total = 0;
		for (k = 0; k < n; k++) {
			pieces = DIV_ROUND_UP(lead + pc[k].length, PAGE_SIZE);
			KUNIT_EXPECT_LE(test, pieces, 4);
			KUNIT_EXPECT_GT(test, pc[k].length, 0);
			total += pc[k].length;
			lead = (lead + pc[k].length) % PAGE_SIZE;
		}
		KUNIT_EXPECT_EQ(test, total, 13 * PAGE_SIZE + 5000);
	}
	/* From a page's start: 4, 4 and 2 pages, then 5000, then 3 pages. */
	n = smbd_desc_pieces(seg, ARRAY_SIZE(seg), 0, 0, chunk, 0, pc,
			     ARRAY_SIZE(pc));
	KUNIT_ASSERT_EQ(test, n, 5);
	KUNIT_EXPECT_EQ(test, pc[0].length, chunk);
	KUNIT_EXPECT_EQ(test, pc[1].length, chunk);
	KUNIT_EXPECT_EQ(test, pc[2].length, 2 * PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, pc[3].length, 5000);
	/* 5000 bytes in, the last segment's 3 pages span 4: one piece. */
	KUNIT_EXPECT_EQ(test, pc[4].length, 3 * PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, pc[4].offset, 0x500000);
	/* From 100 bytes in: the first piece stops where its 4 pages end. */
	n = smbd_desc_pieces(seg, ARRAY_SIZE(seg), 0, 0, chunk, 100, pc, 2);
	KUNIT_ASSERT_EQ(test, n, 2);
	KUNIT_EXPECT_EQ(test, pc[0].length, chunk - 100);
	KUNIT_EXPECT_EQ(test, pc[1].length, chunk);
	KUNIT_EXPECT_EQ(test, pc[1].offset, 0x100000 + chunk - 100);
	/* Without a lead, pieces of the chunk whatever the buffer. */
	n = smbd_desc_pieces(seg, ARRAY_SIZE(seg), 0, 0, chunk - PAGE_SIZE,
			     SMBD_LEAD_NONE, pc, 1);
	KUNIT_EXPECT_EQ(test, pc[0].length, chunk - PAGE_SIZE);
}

static struct kunit_case smbd_desc_cases[] = {
	KUNIT_CASE(smbd_desc_encode_bytes),
	KUNIT_CASE(smbd_desc_example_4_4),
	KUNIT_CASE(smbd_desc_round_trip),
	KUNIT_CASE_PARAM(smbd_desc_decode_bad, dec_gen_params),
	KUNIT_CASE_PARAM(smbd_desc_slice_cases, slice_gen_params),
	KUNIT_CASE(smbd_desc_slice_every_range),
	KUNIT_CASE(smbd_desc_pieces_walk),
	KUNIT_CASE(smbd_desc_pieces_lead),
	{}
};

static struct kunit_suite smbd_desc_suite = {
	.name = "smbd_desc",
	.test_cases = smbd_desc_cases,
};

kunit_test_suites(&smbd_desc_suite);

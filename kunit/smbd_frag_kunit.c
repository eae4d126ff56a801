// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: segmentation ([MS-SMBD] 3.1.5.4), receive validation and
 * reassembly ([MS-SMBD] 3.1.5.8).
 */
#include <kunit/test.h>
#include <linux/string.h>

#include "smbd_proto.h"

#define MIB (1024 * 1024)

/* ---- segmentation ---- */

struct seg_case {
	const char *name;
	u32 msg_len, max_send, max_frag;
	int want_ret;
	u32 want_nsegs;
	u32 want_last_len;
};

static const struct seg_case seg_cases[] = {
	{ "empty message", 0, 1364, MIB, 0, 1, 0 },
	{ "1 byte", 1, 1364, MIB, 0, 1, 1 },
	{ "1339 bytes", 1339, 1364, MIB, 0, 1, 1339 },
	{ "1340 bytes: one full segment", 1340, 1364, MIB, 0, 1, 1340 },
	{ "1341 bytes: two segments", 1341, 1364, MIB, 0, 2, 1 },
	{ "2680 bytes", 2680, 1364, MIB, 0, 2, 1340 },
	{ "2681 bytes", 2681, 1364, MIB, 0, 3, 1 },
	{ "4.3 example: 64 KiB at 1024", 65536, 1024, 131072, 0, 66, 536 },
	{ "exactly max fragmented", MIB, 1364, MIB, 0, 783, MIB - 782 * 1340 },
	{ "one above max fragmented", MIB + 1, 1364, MIB, -EMSGSIZE, 0, 0 },
	{ "minimum send size 128", 1000, 128, 131072, 0, 10, 1000 - 9 * 104 },
	{ "send size 25: 1-byte payloads", 3, 25, 131072, 0, 3, 1 },
	{ "send size 24: no room", 3, 24, 131072, -EINVAL, 0, 0 },
	{ "largest message, largest segments", 0xffffffff, 0xffffffff, 0xffffffff, 0, 2, 24 },
};

KUNIT_ARRAY_PARAM_DESC(seg, seg_cases, name);

/*
 * Check every segment of the plan against 3.1.5.4: DataOffset 24 and
 * 8-byte aligned, DataOffset + DataLength within MaxSendSize, payloads
 * contiguous and complete, RemainingDataLength counting the bytes after
 * each segment, the invalidate token on exactly one segment.
 */
static void smbd_seg_plan(struct kunit *test)
{
	const struct seg_case *c = test->param_value;
	struct smbd_seg_plan plan;
	u32 i, next = 0, ninv = 0;
	struct smbd_seg s;
	int ret;

	ret = smbd_seg_plan_init(&plan, c->msg_len, c->max_send, c->max_frag);
	KUNIT_ASSERT_EQ(test, ret, c->want_ret);
	if (ret)
		return;
	KUNIT_ASSERT_EQ(test, plan.nsegs, c->want_nsegs);

	for (i = 0; i < plan.nsegs; i++) {
		smbd_seg_plan_get(&plan, i, &s);
		ninv += s.invalidate;
		KUNIT_EXPECT_EQ(test, s.msg_offset, next);
		if (!c->msg_len) {
			KUNIT_EXPECT_EQ(test, s.data_offset, 0);
			KUNIT_EXPECT_EQ(test, s.data_length, 0);
			KUNIT_EXPECT_EQ(test, s.remaining, 0);
			continue;
		}
		KUNIT_EXPECT_EQ(test, s.data_offset, SMBD_DATA_OFFSET);
		KUNIT_EXPECT_EQ(test, s.data_offset % 8, 0);
		KUNIT_EXPECT_GT(test, s.data_length, 0);
		KUNIT_EXPECT_LE(test, (u64)s.data_offset + s.data_length,
				(u64)c->max_send);
		KUNIT_EXPECT_EQ(test, (u64)s.remaining,
				(u64)c->msg_len - s.msg_offset - s.data_length);
		next = s.msg_offset + s.data_length;
		if (i + 1 < plan.nsegs)
			KUNIT_EXPECT_EQ(test, s.data_length, c->max_send - 24);
	}
	KUNIT_EXPECT_EQ(test, s.remaining, 0);
	KUNIT_EXPECT_EQ(test, s.data_length, c->want_last_len);
	KUNIT_EXPECT_EQ(test, next, c->msg_len);
	KUNIT_EXPECT_EQ(test, ninv, 1);
}

/* [MS-SMBD] 4.3: the first segment of 64 KiB says 64536 bytes follow. */
static void smbd_seg_example_4_3(struct kunit *test)
{
	struct smbd_seg_plan plan;
	struct smbd_seg s;

	KUNIT_ASSERT_EQ(test, smbd_seg_plan_init(&plan, 65536, 1024, 131072), 0);
	smbd_seg_plan_get(&plan, 0, &s);
	KUNIT_EXPECT_EQ(test, s.data_length, 1000);
	KUNIT_EXPECT_EQ(test, s.remaining, 64536);
	KUNIT_EXPECT_TRUE(test, s.invalidate);
	smbd_seg_plan_get(&plan, 1, &s);
	KUNIT_EXPECT_EQ(test, s.remaining, 63536);
	KUNIT_EXPECT_FALSE(test, s.invalidate);
	smbd_seg_plan_get(&plan, 65, &s);
	KUNIT_EXPECT_EQ(test, s.data_length, 536);
	KUNIT_EXPECT_EQ(test, s.remaining, 0);
}

/* A plan's segments, fed to a receiver, reassemble to the same length. */
static void smbd_seg_reassembles(struct kunit *test)
{
	static const u32 lens[] = { 1, 1339, 1340, 1341, 4096, 65536, 131072 };
	unsigned int k;

	for (k = 0; k < ARRAY_SIZE(lens); k++) {
		enum smbd_reasm_event ev = SMBD_REASM_NONE;
		struct smbd_seg_plan plan;
		struct smbd_reasm r;
		u32 i;

		smbd_reasm_init(&r, 131072);
		KUNIT_ASSERT_EQ(test, smbd_seg_plan_init(&plan, lens[k], 1364, 131072), 0);
		for (i = 0; i < plan.nsegs; i++) {
			struct smbd_data_hdr h = { .credits_requested = 1 };
			struct smbd_seg s;

			smbd_seg_plan_get(&plan, i, &s);
			h.data_offset = s.data_offset;
			h.data_length = s.data_length;
			h.remaining_data_length = s.remaining;
			KUNIT_ASSERT_EQ(test, smbd_reasm_add(&r, &h, &ev), SMBD_RX_OK);
			KUNIT_EXPECT_EQ(test, ev, i + 1 < plan.nsegs ?
					SMBD_REASM_PARTIAL : SMBD_REASM_COMPLETE);
		}
		KUNIT_EXPECT_EQ(test, r.received, lens[k]);
	}
}

/* ---- receive validation ---- */

struct rx_case {
	const char *name;
	u16 credits_req;
	u32 offset, length, remaining;
	u32 buf_len;
	enum smbd_rx_err want;
};

#define MAXF 131072
#define MAXR 600	/* MaxReceiveSize; the buffer holds more */

static const struct rx_case rx_cases[] = {
	{ "4.2 example", 10, 24, 500, 0, 524, SMBD_RX_OK },
	{ "19 bytes", 10, 0, 0, 0, 19, SMBD_RX_ERR_SHORT },
	{ "empty message, 20 bytes", 10, 0, 0, 0, 20, SMBD_RX_OK },
	{ "credits requested 0", 0, 24, 500, 0, 524, SMBD_RX_ERR_CREDITS_REQUESTED },
	{ "credits requested 1", 1, 24, 500, 0, 524, SMBD_RX_OK },
	{ "offset 25", 10, 25, 100, 0, 524, SMBD_RX_ERR_OFFSET_ALIGN },
	{ "offset 28", 10, 28, 100, 0, 524, SMBD_RX_ERR_OFFSET_ALIGN },
	{ "offset 4 on an empty message", 10, 4, 0, 0, 20, SMBD_RX_ERR_OFFSET_ALIGN },
	{ "offset 32", 10, 32, 500, 0, 532, SMBD_RX_OK },
	{ "offset 16 overlaps header", 10, 16, 8, 0, 524, SMBD_RX_ERR_OFFSET_OVERLAP },
	{ "offset 0 with data", 10, 0, 1, 0, 524, SMBD_RX_ERR_OFFSET_OVERLAP },
	{ "offset 24, no data", 10, 24, 0, 0, 24, SMBD_RX_OK },
	{ "data one beyond message", 10, 24, 501, 0, 524, SMBD_RX_ERR_BOUNDS },
	{ "message one short", 10, 24, 500, 0, 523, SMBD_RX_ERR_BOUNDS },
	{ "trailing bytes, MaxReceiveSize", 10, 24, 500, 0, MAXR, SMBD_RX_OK },
	{ "MaxReceiveSize + 1", 10, 24, 500, 0, MAXR + 1, SMBD_RX_ERR_RECV_SIZE },
	{ "empty, above MaxReceiveSize", 10, 0, 0, 0, 0xffffffff, SMBD_RX_ERR_RECV_SIZE },
	{ "offset beyond message", 10, 32, 0, 0, 24, SMBD_RX_ERR_BOUNDS },
	{ "offset + length wraps 32 bits", 10, 0xfffffff8, 16, 0, 524, SMBD_RX_ERR_BOUNDS },
	{ "length wraps 32 bits", 10, 24, 0xffffffff, 0, 524, SMBD_RX_ERR_BOUNDS },
	{ "total = max fragmented", 10, 24, 500, MAXF - 500, 524, SMBD_RX_OK },
	{ "total = max fragmented + 1", 10, 24, 500, MAXF - 499, 524, SMBD_RX_ERR_TOO_LARGE },
	{ "remaining wraps 32 bits", 10, 24, 500, 0xffffff0c, 524, SMBD_RX_ERR_TOO_LARGE },
	{ "remaining 0xffffffff, empty", 10, 0, 0, 0xffffffff, 20, SMBD_RX_ERR_TOO_LARGE },
};

KUNIT_ARRAY_PARAM_DESC(rx, rx_cases, name);

static void smbd_rx_validate(struct kunit *test)
{
	const struct rx_case *c = test->param_value;
	u8 *buf = kunit_kzalloc(test, MAXR + 8, GFP_KERNEL);
	struct smbd_data_hdr h = {
		.credits_requested = c->credits_req, .credits_granted = 1,
		.data_offset = c->offset, .data_length = c->length,
		.remaining_data_length = c->remaining,
	};
	struct smbd_data_hdr got;
	enum smbd_rx_err err;

	KUNIT_ASSERT_NOT_NULL(test, buf);
	smbd_data_hdr_encode(&h, (void *)buf);
	err = smbd_rx_parse(buf, c->buf_len, MAXR, MAXF, &got);
	KUNIT_EXPECT_EQ_MSG(test, err, c->want, "got %s", smbd_rx_err_str(err));
	if (err == SMBD_RX_OK) {
		KUNIT_EXPECT_EQ(test, got.data_offset, c->offset);
		KUNIT_EXPECT_EQ(test, got.data_length, c->length);
		KUNIT_EXPECT_EQ(test, got.remaining_data_length, c->remaining);
		KUNIT_EXPECT_EQ(test, got.credits_granted, 1);
	}
}

/* ---- reassembly ---- */

struct reasm_step {
	u32 length, remaining;
	enum smbd_rx_err want;
	enum smbd_reasm_event ev;
	u32 received;	/* checked on COMPLETE */
};

struct reasm_case {
	const char *name;
	struct reasm_step steps[4];
	unsigned int nsteps;
};

#define OK_P(l, r)	{ l, r, SMBD_RX_OK, SMBD_REASM_PARTIAL, 0 }
#define OK_C(l, t)	{ l, 0, SMBD_RX_OK, SMBD_REASM_COMPLETE, t }
#define OK_N		{ 0, 0, SMBD_RX_OK, SMBD_REASM_NONE, 0 }
#define BAD(l, r, e)	{ l, r, e, 0, 0 }

static const struct reasm_case reasm_cases[] = {
	{ "single message", { OK_C(500, 500) }, 1 },
	{ "three fragments", { OK_P(1340, 2000), OK_P(1340, 660), OK_C(660, 3340) }, 3 },
	{ "credit-only message alone", { OK_N }, 1 },
	{ "credit-only message mid-sequence",
	  { OK_P(1340, 1000), OK_N, OK_C(1000, 2340) }, 3 },
	{ "empty segment mid-sequence",
	  { OK_P(1340, 1000), OK_P(0, 1000), OK_C(1000, 2340) }, 3 },
	{ "empty first segment", { OK_P(0, 1000), OK_C(1000, 1000) }, 2 },
	{ "remaining inflated mid-sequence",
	  { OK_P(1340, 2000), BAD(1340, 1000, SMBD_RX_ERR_FRAGMENT) }, 2 },
	{ "remaining shrunk mid-sequence",
	  { OK_P(1340, 2000), BAD(1340, 500, SMBD_RX_ERR_FRAGMENT) }, 2 },
	{ "last segment too early",
	  { OK_P(1340, 2000), BAD(1340, 0, SMBD_RX_ERR_FRAGMENT) }, 2 },
	{ "segment longer than remaining",
	  { OK_P(1340, 100), BAD(200, 0, SMBD_RX_ERR_FRAGMENT) }, 2 },
	{ "total at max", { OK_P(100, MAXF - 100), OK_C(MAXF - 100, MAXF) }, 2 },
	{ "total above max", { BAD(100, MAXF - 99, SMBD_RX_ERR_TOO_LARGE) }, 1 },
	{ "two messages back to back",
	  { OK_P(10, 10), OK_C(10, 20), OK_C(7, 7) }, 3 },
};

KUNIT_ARRAY_PARAM_DESC(reasm, reasm_cases, name);

static void smbd_reasm_sequence(struct kunit *test)
{
	const struct reasm_case *c = test->param_value;
	struct smbd_reasm r;
	unsigned int i;

	smbd_reasm_init(&r, MAXF);
	for (i = 0; i < c->nsteps; i++) {
		const struct reasm_step *st = &c->steps[i];
		struct smbd_data_hdr h = {
			.credits_requested = 1,
			.data_offset = st->length ? 24 : 0,
			.data_length = st->length,
			.remaining_data_length = st->remaining,
		};
		enum smbd_reasm_event ev;
		enum smbd_rx_err err;

		err = smbd_reasm_add(&r, &h, &ev);
		KUNIT_ASSERT_EQ_MSG(test, err, st->want, "step %u: %s", i,
				    smbd_rx_err_str(err));
		if (err != SMBD_RX_OK)
			return;
		KUNIT_EXPECT_EQ_MSG(test, ev, st->ev, "step %u", i);
		if (ev == SMBD_REASM_COMPLETE) {
			KUNIT_EXPECT_EQ_MSG(test, r.received, st->received,
					    "step %u", i);
			KUNIT_EXPECT_FALSE(test, r.active);
		}
		if (ev == SMBD_REASM_PARTIAL)
			KUNIT_EXPECT_TRUE(test, r.active);
	}
}

static struct kunit_case smbd_frag_cases[] = {
	KUNIT_CASE_PARAM(smbd_seg_plan, seg_gen_params),
	KUNIT_CASE(smbd_seg_example_4_3),
	KUNIT_CASE(smbd_seg_reassembles),
	KUNIT_CASE_PARAM(smbd_rx_validate, rx_gen_params),
	KUNIT_CASE_PARAM(smbd_reasm_sequence, reasm_gen_params),
	{}
};

static struct kunit_suite smbd_frag_suite = {
	.name = "smbd_frag",
	.test_cases = smbd_frag_cases,
};

kunit_test_suites(&smbd_frag_suite);

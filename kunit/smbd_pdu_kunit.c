// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: the wire format ([MS-SMBD] 2.2) against the examples of
 * [MS-SMBD] section 4, byte for byte.
 */
#include <kunit/test.h>
#include <linux/stddef.h>
#include <linux/string.h>

#include "smbd_proto.h"

/* [MS-SMBD] 4.1: the Negotiate Request. */
static const u8 neg_req_4_1[] = {
	0x00, 0x01, 0x00, 0x01, 0x00, 0x00, 0x0a, 0x00, 0x00, 0x04,
	0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00,
};

/* [MS-SMBD] 4.1: the Negotiate Response. */
static const u8 neg_resp_4_1[] = {
	0x00, 0x01, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00, 0x0a, 0x00, 0x0a,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x04,
	0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00,
};

/* [MS-SMBD] 4.2: a 500-byte payload, requesting 10 and granting 1. */
static const u8 data_hdr_4_2[] = {
	0x0a, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x18, 0x00, 0x00, 0x00, 0xf4, 0x01, 0x00, 0x00,
};

/* [MS-SMBD] 4.4: a Buffer Descriptor V1 for 1 MiB. */
static const u8 desc_4_4[] = {
	0x12, 0xe0, 0xcd, 0xab, 0x00, 0x00, 0x00, 0x00,
	0x56, 0xbc, 0x00, 0x1a, 0x00, 0x00, 0x10, 0x00,
};

static void smbd_pdu_neg_req_vector(struct kunit *test)
{
	struct smbd_neg_req req = {
		.min_version = 0x0100, .max_version = 0x0100,
		.credits_requested = 10, .preferred_send_size = 1024,
		.max_receive_size = 1024, .max_fragmented_size = 131072,
	};
	struct smbd_neg_req_pdu pdu;
	struct smbd_neg_req back;

	memset(&pdu, 0xff, sizeof(pdu));
	smbd_neg_req_encode(&req, &pdu);
	KUNIT_EXPECT_MEMEQ(test, &pdu, neg_req_4_1, sizeof(neg_req_4_1));

	smbd_neg_req_decode((const void *)neg_req_4_1, &back);
	KUNIT_EXPECT_EQ(test, back.min_version, req.min_version);
	KUNIT_EXPECT_EQ(test, back.max_version, req.max_version);
	KUNIT_EXPECT_EQ(test, back.credits_requested, req.credits_requested);
	KUNIT_EXPECT_EQ(test, back.preferred_send_size, req.preferred_send_size);
	KUNIT_EXPECT_EQ(test, back.max_receive_size, req.max_receive_size);
	KUNIT_EXPECT_EQ(test, back.max_fragmented_size, req.max_fragmented_size);
}

static void smbd_pdu_neg_resp_vector(struct kunit *test)
{
	struct smbd_neg_resp resp = {
		.min_version = 0x0100, .max_version = 0x0100,
		.negotiated_version = 0x0100, .credits_requested = 10,
		.credits_granted = 10, .status = 0,
		.max_read_write_size = 1048576, .preferred_send_size = 1024,
		.max_receive_size = 1024, .max_fragmented_size = 131072,
	};
	struct smbd_neg_resp_pdu pdu;
	struct smbd_neg_resp back;

	memset(&pdu, 0xff, sizeof(pdu));
	smbd_neg_resp_encode(&resp, &pdu);
	KUNIT_EXPECT_MEMEQ(test, &pdu, neg_resp_4_1, sizeof(neg_resp_4_1));

	smbd_neg_resp_decode((const void *)neg_resp_4_1, &back);
	KUNIT_EXPECT_EQ(test, back.min_version, resp.min_version);
	KUNIT_EXPECT_EQ(test, back.max_version, resp.max_version);
	KUNIT_EXPECT_EQ(test, back.negotiated_version, resp.negotiated_version);
	KUNIT_EXPECT_EQ(test, back.credits_requested, resp.credits_requested);
	KUNIT_EXPECT_EQ(test, back.credits_granted, resp.credits_granted);
	KUNIT_EXPECT_EQ(test, back.status, resp.status);
	KUNIT_EXPECT_EQ(test, back.max_read_write_size, resp.max_read_write_size);
	KUNIT_EXPECT_EQ(test, back.preferred_send_size, resp.preferred_send_size);
	KUNIT_EXPECT_EQ(test, back.max_receive_size, resp.max_receive_size);
	KUNIT_EXPECT_EQ(test, back.max_fragmented_size, resp.max_fragmented_size);
}

static void smbd_pdu_data_hdr_vector(struct kunit *test)
{
	struct smbd_data_hdr h = {
		.credits_requested = 10, .credits_granted = 1, .flags = 0,
		.remaining_data_length = 0, .data_offset = 24,
		.data_length = 500,
	};
	static const u8 zero[4];
	struct smbd_data_msg_pdu pdu;
	struct smbd_data_hdr back;

	/* A reused buffer: what it held before must not reach the wire. */
	memset(&pdu, 0xff, sizeof(pdu));
	smbd_data_hdr_encode(&h, &pdu);
	KUNIT_EXPECT_MEMEQ(test, &pdu, data_hdr_4_2, sizeof(data_hdr_4_2));
	KUNIT_EXPECT_EQ(test, smbd_data_hdr_wire_len(&h), 24);
	/* [MS-SMBD] 3.1.5.4: Padding MUST be set to 0x00000000. */
	KUNIT_EXPECT_MEMEQ(test, (u8 *)&pdu + 20, zero, sizeof(zero));

	smbd_data_hdr_decode((const void *)data_hdr_4_2, &back);
	KUNIT_EXPECT_EQ(test, back.credits_requested, h.credits_requested);
	KUNIT_EXPECT_EQ(test, back.credits_granted, h.credits_granted);
	KUNIT_EXPECT_EQ(test, back.flags, h.flags);
	KUNIT_EXPECT_EQ(test, back.remaining_data_length, h.remaining_data_length);
	KUNIT_EXPECT_EQ(test, back.data_offset, h.data_offset);
	KUNIT_EXPECT_EQ(test, back.data_length, h.data_length);
}

/* [MS-SMBD] 3.1.5.4: an empty message is the bare 20-byte header. */
static void smbd_pdu_data_hdr_empty(struct kunit *test)
{
	static const u8 want[20] = { 0xff, 0x00, 0x03, 0x00, 0x01, 0x00 };
	struct smbd_data_hdr h = {
		.credits_requested = 255, .credits_granted = 3,
		.flags = SMBD_FLAG_RESPONSE_REQUESTED,
	};
	struct smbd_data_msg_pdu pdu;

	memset(&pdu, 0xaa, sizeof(pdu));
	smbd_data_hdr_encode(&h, &pdu);
	KUNIT_EXPECT_MEMEQ(test, &pdu, want, sizeof(want));
	KUNIT_EXPECT_EQ(test, smbd_data_hdr_wire_len(&h), 20);
}

static void smbd_pdu_buffer_desc_vector(struct kunit *test)
{
	struct smbd_buffer_desc_v1 d = {
		.offset = cpu_to_le64(0xABCDE012ULL),
		.token = cpu_to_le32(0x1A00BC56),
		.length = cpu_to_le32(0x00100000),
	};

	KUNIT_EXPECT_MEMEQ(test, &d, desc_4_4, sizeof(desc_4_4));
}

/* Decoding must not assume alignment: the bytes may sit anywhere. */
static void smbd_pdu_unaligned_decode(struct kunit *test)
{
	u8 *buf = kunit_kzalloc(test, sizeof(neg_resp_4_1) + 1, GFP_KERNEL);
	struct smbd_neg_resp resp;
	struct smbd_data_hdr h;

	KUNIT_ASSERT_NOT_NULL(test, buf);
	memcpy(buf + 1, neg_resp_4_1, sizeof(neg_resp_4_1));
	smbd_neg_resp_decode((const void *)(buf + 1), &resp);
	KUNIT_EXPECT_EQ(test, resp.max_read_write_size, 1048576);
	KUNIT_EXPECT_EQ(test, resp.max_fragmented_size, 131072);

	memcpy(buf + 1, data_hdr_4_2, sizeof(data_hdr_4_2));
	smbd_data_hdr_decode((const void *)(buf + 1), &h);
	KUNIT_EXPECT_EQ(test, h.data_length, 500);
	KUNIT_EXPECT_EQ(test, h.data_offset, 24);
}

struct smbd_field_case {
	const char *name;
	size_t offset;
	size_t want;
};

#define FIELD(type, field, off) \
	{ #type "." #field, offsetof(struct type, field), off }

/* [MS-SMBD] 2.2.1, 2.2.2, 2.2.3, 2.2.3.1, 6.1: every field's offset. */
static const struct smbd_field_case smbd_field_cases[] = {
	FIELD(smbd_neg_req_pdu, min_version, 0),
	FIELD(smbd_neg_req_pdu, max_version, 2),
	FIELD(smbd_neg_req_pdu, reserved, 4),
	FIELD(smbd_neg_req_pdu, credits_requested, 6),
	FIELD(smbd_neg_req_pdu, preferred_send_size, 8),
	FIELD(smbd_neg_req_pdu, max_receive_size, 12),
	FIELD(smbd_neg_req_pdu, max_fragmented_size, 16),
	FIELD(smbd_neg_resp_pdu, min_version, 0),
	FIELD(smbd_neg_resp_pdu, max_version, 2),
	FIELD(smbd_neg_resp_pdu, negotiated_version, 4),
	FIELD(smbd_neg_resp_pdu, reserved, 6),
	FIELD(smbd_neg_resp_pdu, credits_requested, 8),
	FIELD(smbd_neg_resp_pdu, credits_granted, 10),
	FIELD(smbd_neg_resp_pdu, status, 12),
	FIELD(smbd_neg_resp_pdu, max_read_write_size, 16),
	FIELD(smbd_neg_resp_pdu, preferred_send_size, 20),
	FIELD(smbd_neg_resp_pdu, max_receive_size, 24),
	FIELD(smbd_neg_resp_pdu, max_fragmented_size, 28),
	FIELD(smbd_data_hdr_pdu, credits_requested, 0),
	FIELD(smbd_data_hdr_pdu, credits_granted, 2),
	FIELD(smbd_data_hdr_pdu, flags, 4),
	FIELD(smbd_data_hdr_pdu, reserved, 6),
	FIELD(smbd_data_hdr_pdu, remaining_data_length, 8),
	FIELD(smbd_data_hdr_pdu, data_offset, 12),
	FIELD(smbd_data_hdr_pdu, data_length, 16),
	FIELD(smbd_buffer_desc_v1, offset, 0),
	FIELD(smbd_buffer_desc_v1, token, 8),
	FIELD(smbd_buffer_desc_v1, length, 12),
	FIELD(smbd_irdord_pdu, ird, 0),
	FIELD(smbd_irdord_pdu, ord, 4),
};

KUNIT_ARRAY_PARAM_DESC(smbd_field, smbd_field_cases, name);

static void smbd_pdu_field_offset(struct kunit *test)
{
	const struct smbd_field_case *c = test->param_value;

	KUNIT_EXPECT_EQ(test, c->offset, c->want);
}

static struct kunit_case smbd_pdu_cases[] = {
	KUNIT_CASE(smbd_pdu_neg_req_vector),
	KUNIT_CASE(smbd_pdu_neg_resp_vector),
	KUNIT_CASE(smbd_pdu_data_hdr_vector),
	KUNIT_CASE(smbd_pdu_data_hdr_empty),
	KUNIT_CASE(smbd_pdu_buffer_desc_vector),
	KUNIT_CASE(smbd_pdu_unaligned_decode),
	KUNIT_CASE_PARAM(smbd_pdu_field_offset, smbd_field_gen_params),
	{}
};

static struct kunit_suite smbd_pdu_suite = {
	.name = "smbd_pdu",
	.test_cases = smbd_pdu_cases,
};

kunit_test_suites(&smbd_pdu_suite);

// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: negotiation ([MS-SMBD] 3.1.5.2, 3.1.5.3, 3.1.5.6, 3.1.5.7, 6.2).
 *
 * Every boundary of the responder's and the initiator's checks, the
 * values each side derives, the failure response, and a round trip
 * between the two sides over several parameter pairs.
 */
#include <kunit/test.h>
#include <linux/string.h>
#include <linux/unaligned.h>

#include "smbd_proto.h"

/*
 * Local parameters used by the tables: the defaults of each role, less
 * the large size, which the round trip's later cases, smbd_neg_split()
 * and smbd_neg_large_pref_send() test.
 */
static void params(struct smbd_params *p, bool responder)
{
	smbd_params_init(p, responder);
	p->large_size = 0;
}

static void smbd_neg_defaults(struct kunit *test)
{
	struct smbd_params p;

	params(&p, false);
	/* 64 buffers of 8192 bytes: Windows' MaxReceiveSize (WIN<3>). */
	KUNIT_EXPECT_EQ(test, p.recv_credit_max, 64);
	KUNIT_EXPECT_EQ(test, p.send_credit_target, 64);
	KUNIT_EXPECT_EQ(test, p.max_send_size, 8192);
	KUNIT_EXPECT_EQ(test, p.max_recv_size, 8192);
	smbd_params_init(&p, false);
	/* At most 32 KiB to another smbd, cut from the same memory. */
	KUNIT_EXPECT_EQ(test, p.large_size, 32768);
	KUNIT_EXPECT_EQ(test, p.max_fragmented_recv_size, 1048576);
	KUNIT_EXPECT_EQ(test, p.keepalive_interval_ms, 120000);
	KUNIT_EXPECT_EQ(test, p.keepalive_timeout_ms, 5000);
	/* [MS-SMBD] 3.1.4.1: 120 s on the initiator. */
	KUNIT_EXPECT_EQ(test, p.negotiate_timeout_ms, 120000);
	KUNIT_EXPECT_EQ(test, smbd_params_check(&p), 0);

	/* [MS-SMBD] 3.1.7.2: 5 s on the responder. */
	params(&p, true);
	KUNIT_EXPECT_EQ(test, p.negotiate_timeout_ms, 5000);
	KUNIT_EXPECT_EQ(test, smbd_params_check(&p), 0);
}

static void smbd_neg_params_check(struct kunit *test)
{
	struct smbd_params p;

	params(&p, false);
	p.max_recv_size = 127;
	KUNIT_EXPECT_EQ(test, smbd_params_check(&p), -EINVAL);
	p.max_recv_size = 128;
	KUNIT_EXPECT_EQ(test, smbd_params_check(&p), 0);
	p.max_send_size = 127;
	KUNIT_EXPECT_EQ(test, smbd_params_check(&p), -EINVAL);
	p.max_send_size = 128;
	p.max_fragmented_recv_size = 131071;
	KUNIT_EXPECT_EQ(test, smbd_params_check(&p), -EINVAL);
	p.max_fragmented_recv_size = 131072;
	KUNIT_EXPECT_EQ(test, smbd_params_check(&p), 0);
	p.recv_credit_max = 0;
	KUNIT_EXPECT_EQ(test, smbd_params_check(&p), -EINVAL);
	p.recv_credit_max = 1;
	p.send_credit_target = 0;
	KUNIT_EXPECT_EQ(test, smbd_params_check(&p), -EINVAL);
	p.send_credit_target = 1;
	KUNIT_EXPECT_EQ(test, smbd_params_check(&p), 0);
	/* MaxReadWriteSize: 0 (none) or at least SMBD_MIN_READ_WRITE_SIZE. */
	p.max_read_write_size = 0;
	KUNIT_EXPECT_EQ(test, smbd_params_check(&p), 0);
	p.max_read_write_size = 1;
	KUNIT_EXPECT_EQ(test, smbd_params_check(&p), -EINVAL);
	p.max_read_write_size = SMBD_MIN_READ_WRITE_SIZE - 1;
	KUNIT_EXPECT_EQ(test, smbd_params_check(&p), -EINVAL);
	p.max_read_write_size = SMBD_MIN_READ_WRITE_SIZE;
	KUNIT_EXPECT_EQ(test, smbd_params_check(&p), 0);
	/* The local ACK timeout is a 5-bit exponent; 0 keeps the default. */
	KUNIT_EXPECT_EQ(test, p.ack_timeout, 0);
	p.ack_timeout = 31;
	KUNIT_EXPECT_EQ(test, smbd_params_check(&p), 0);
	p.ack_timeout = 32;
	KUNIT_EXPECT_EQ(test, smbd_params_check(&p), -EINVAL);
	p.ack_timeout = 0;
	/* Any device by default; IB/RoCE or iWARP alone; nothing else. */
	KUNIT_EXPECT_EQ(test, p.dev_class, SMBD_DEV_ANY);
	p.dev_class = SMBD_DEV_IB;
	KUNIT_EXPECT_EQ(test, smbd_params_check(&p), 0);
	p.dev_class = SMBD_DEV_IWARP;
	KUNIT_EXPECT_EQ(test, smbd_params_check(&p), 0);
	p.dev_class = SMBD_DEV_IWARP + 1;
	KUNIT_EXPECT_EQ(test, smbd_params_check(&p), -EINVAL);
}

/* [MS-SMBD] 3.1.5.2: what the initiator sends. */
static void smbd_neg_req_built(struct kunit *test)
{
	struct smbd_neg_req_pdu pdu;
	struct smbd_params p;
	struct smbd_neg_req r;

	params(&p, false);
	p.send_credit_target = 77;
	p.max_send_size = 2000;
	p.max_recv_size = 3000;
	p.max_fragmented_recv_size = 500000;
	memset(&pdu, 0xff, sizeof(pdu));
	smbd_neg_req_build(&p, &pdu);
	smbd_neg_req_decode(&pdu, &r);
	KUNIT_EXPECT_EQ(test, r.min_version, 0x0100);
	KUNIT_EXPECT_EQ(test, r.max_version, 0x0100);
	KUNIT_EXPECT_EQ(test, le16_to_cpu(pdu.reserved), 0);
	KUNIT_EXPECT_EQ(test, r.credits_requested, 77);
	KUNIT_EXPECT_EQ(test, r.preferred_send_size, 2000);
	KUNIT_EXPECT_EQ(test, r.max_receive_size, 3000);
	KUNIT_EXPECT_EQ(test, r.max_fragmented_size, 500000);
}

/*
 * The responder's table. Each case starts from the [MS-SMBD] 4.1 request
 * and changes what it names; 0 in want_recv/want_send means "not
 * checked" (a refused request).
 */
struct req_case {
	const char *name;
	u16 min_version, max_version, credits;
	u32 pref_send, max_recv, max_frag;
	u32 len;
	enum smbd_neg_err want;
	u32 want_recv, want_send;
};

#define REQ_OK(n, mn, mx, cr, ps, mr, mf, l, wr, ws) \
	{ n, mn, mx, cr, ps, mr, mf, l, SMBD_NEG_OK, wr, ws }
#define REQ_BAD(n, mn, mx, cr, ps, mr, mf, l, err) \
	{ n, mn, mx, cr, ps, mr, mf, l, err, 0, 0 }
#define V1 0x0100
#define E_SHORT SMBD_NEG_ERR_SHORT
#define E_VER SMBD_NEG_ERR_VERSION
#define E_CRQ SMBD_NEG_ERR_CREDITS_REQUESTED
#define E_CGR SMBD_NEG_ERR_CREDITS_GRANTED
#define E_RECV SMBD_NEG_ERR_RECV_SIZE
#define E_FRAG SMBD_NEG_ERR_FRAG_SIZE
#define E_PREF SMBD_NEG_ERR_PREF_SEND_SIZE
#define E_STAT SMBD_NEG_ERR_STATUS
#define NS SMBD_STATUS_NOT_SUPPORTED

static const struct req_case req_cases[] = {
	REQ_OK("4.1 example", V1, V1, 10, 1024, 1024, 131072, 20, 1024, 1024),
	REQ_BAD("19 bytes", V1, V1, 10, 1024, 1024, 131072, 19, E_SHORT),
	REQ_BAD("0 bytes", V1, V1, 10, 1024, 1024, 131072, 0, E_SHORT),
	REQ_OK("512 bytes, trailing junk", V1, V1, 10, 1024, 1024, 131072, 512, 1024, 1024),
	REQ_OK("range 0x0000-0x0100", 0, V1, 10, 1024, 1024, 131072, 20, 1024, 1024),
	REQ_OK("range 0x0100-0x0200", V1, 0x0200, 10, 1024, 1024, 131072, 20, 1024, 1024),
	REQ_BAD("range 0x0101-0x0200", 0x0101, 0x0200, 10, 1024, 1024, 131072, 20, E_VER),
	REQ_BAD("range 0x0000-0x00ff", 0, 0x00ff, 10, 1024, 1024, 131072, 20, E_VER),
	REQ_BAD("inverted range", 0x0200, V1, 10, 1024, 1024, 131072, 20, E_VER),
	REQ_BAD("version 0xffff", 0xffff, 0xffff, 10, 1024, 1024, 131072, 20, E_VER),
	REQ_BAD("version before credits", 0, 0, 0, 1024, 0, 0, 20, E_VER),
	REQ_BAD("short before version", 0, 0, 10, 1024, 1024, 131072, 19, E_SHORT),
	REQ_BAD("credits 0", V1, V1, 0, 1024, 1024, 131072, 20, E_CRQ),
	REQ_OK("credits 1", V1, V1, 1, 1024, 1024, 131072, 20, 1024, 1024),
	REQ_OK("credits 0xffff", V1, V1, 0xffff, 1024, 1024, 131072, 20, 1024, 1024),
	REQ_BAD("max receive 127", V1, V1, 10, 1024, 127, 131072, 20, E_RECV),
	REQ_OK("max receive 128", V1, V1, 10, 1024, 128, 131072, 20, 1024, 128),
	REQ_OK("max receive 0xffffffff", V1, V1, 10, 1024, 0xffffffff, 131072, 20, 1024, 1364),
	REQ_BAD("max fragmented 131071", V1, V1, 10, 1024, 1024, 131071, 20, E_FRAG),
	REQ_OK("max fragmented 131072", V1, V1, 10, 1024, 1024, 131072, 20, 1024, 1024),
	REQ_OK("max fragmented 0xffffffff", V1, V1, 10, 1024, 1024, 0xffffffff, 20, 1024, 1024),
	REQ_OK("preferred send 0 floors to 128", V1, V1, 10, 0, 1024, 131072, 20, 128, 1024),
	REQ_OK("preferred send 127 floors to 128", V1, V1, 10, 127, 1024, 131072, 20, 128, 1024),
	REQ_OK("preferred send 129", V1, V1, 10, 129, 1024, 131072, 20, 129, 1024),
	REQ_OK("preferred send 0xffffffff", V1, V1, 10, 0xffffffff, 1024, 131072, 20, 1364, 1024),
};

KUNIT_ARRAY_PARAM_DESC(req, req_cases, name);

static void smbd_neg_responder(struct kunit *test)
{
	const struct req_case *c = test->param_value;
	u8 *buf = kunit_kzalloc(test, 512, GFP_KERNEL);
	struct smbd_neg_req req = {
		.min_version = c->min_version, .max_version = c->max_version,
		.credits_requested = c->credits,
		.preferred_send_size = c->pref_send,
		.max_receive_size = c->max_recv,
		.max_fragmented_size = c->max_frag,
	};
	struct smbd_negotiated n;
	struct smbd_params p;
	enum smbd_neg_err err;

	KUNIT_ASSERT_NOT_NULL(test, buf);
	params(&p, true);
	/* The table is written for the stock peers' 1364-byte limits. */
	p.max_send_size = 1364;
	p.max_recv_size = 1364;
	memset(buf, 0x5a, 512);
	smbd_neg_req_encode(&req, (void *)buf);
	memset(&n, 0xcc, sizeof(n));
	err = smbd_neg_req_process(&p, buf, c->len, &n);
	KUNIT_ASSERT_EQ_MSG(test, err, c->want, "got %s", smbd_neg_err_str(err));
	if (err != SMBD_NEG_OK)
		return;

	KUNIT_EXPECT_EQ(test, n.max_recv_size, c->want_recv);
	KUNIT_EXPECT_EQ(test, n.max_send_size, c->want_send);
	KUNIT_EXPECT_EQ(test, n.max_fragmented_send_size, c->max_frag);
	KUNIT_EXPECT_EQ(test, n.max_fragmented_recv_size, p.max_fragmented_recv_size);
	KUNIT_EXPECT_EQ(test, n.max_read_write_size, p.max_read_write_size);
	KUNIT_EXPECT_EQ(test, n.peer_credits_requested, c->credits);
	/* [MS-SMBD] 3.1.5.6: the request grants nothing. */
	KUNIT_EXPECT_EQ(test, n.send_credits, 0);
}

/* [MS-SMBD] 3.1.5.6: only a version mismatch is answered. */
static void smbd_neg_reply_status(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, smbd_neg_err_reply_status(E_VER),
			SMBD_STATUS_NOT_SUPPORTED);
	KUNIT_EXPECT_EQ(test, smbd_neg_err_reply_status(E_SHORT), 0);
	KUNIT_EXPECT_EQ(test, smbd_neg_err_reply_status(E_CRQ), 0);
	KUNIT_EXPECT_EQ(test, smbd_neg_err_reply_status(E_RECV), 0);
	KUNIT_EXPECT_EQ(test, smbd_neg_err_reply_status(E_FRAG), 0);
	KUNIT_EXPECT_EQ(test, smbd_neg_err_reply_status(SMBD_NEG_OK), 0);
}

/* [MS-SMBD] 3.1.5.3: the failure response, byte for byte. */
static void smbd_neg_failure_response(struct kunit *test)
{
	static const u8 want[32] = {
		0x00, 0x01, 0x00, 0x01, [12] = 0xbb, 0x00, 0x00, 0xc0,
	};
	struct smbd_neg_resp_pdu pdu;

	memset(&pdu, 0xff, sizeof(pdu));
	smbd_neg_resp_build_failure(SMBD_STATUS_NOT_SUPPORTED, &pdu);
	KUNIT_EXPECT_MEMEQ(test, &pdu, want, sizeof(want));
}

/* [MS-SMBD] 3.1.5.3: the success response carries the negotiated values. */
static void smbd_neg_success_response(struct kunit *test)
{
	struct smbd_negotiated n = {
		.max_send_size = 1000, .max_recv_size = 900,
		.max_fragmented_send_size = 200000,
		.max_fragmented_recv_size = 300000,
		.max_read_write_size = 4 << 20,
	};
	struct smbd_neg_resp_pdu pdu;
	struct smbd_neg_resp r;
	struct smbd_params p;

	params(&p, true);
	p.send_credit_target = 42;
	memset(&pdu, 0xff, sizeof(pdu));
	smbd_neg_resp_build(&p, &n, 17, &pdu);
	smbd_neg_resp_decode(&pdu, &r);
	KUNIT_EXPECT_EQ(test, r.min_version, 0x0100);
	KUNIT_EXPECT_EQ(test, r.max_version, 0x0100);
	KUNIT_EXPECT_EQ(test, r.negotiated_version, 0x0100);
	KUNIT_EXPECT_EQ(test, le16_to_cpu(pdu.reserved), 0);
	KUNIT_EXPECT_EQ(test, r.credits_requested, 42);
	KUNIT_EXPECT_EQ(test, r.credits_granted, 17);
	KUNIT_EXPECT_EQ(test, r.status, 0);
	KUNIT_EXPECT_EQ(test, r.max_read_write_size, 4 << 20);
	KUNIT_EXPECT_EQ(test, r.preferred_send_size, 1000);
	KUNIT_EXPECT_EQ(test, r.max_receive_size, 900);
	KUNIT_EXPECT_EQ(test, r.max_fragmented_size, 300000);
}

/* The initiator's table: each case changes the [MS-SMBD] 4.1 response. */
struct resp_case {
	const char *name;
	u16 version, credits_req, credits_granted;
	u32 status, rw, pref_send, max_recv, max_frag;
	u32 len;
	enum smbd_neg_err want;
	u32 want_recv, want_send, want_rw;
};

#define RESP_OK(n, v, cr, cg, st, rw, ps, mr, mf, l, wr, ws, wrw) \
	{ n, v, cr, cg, st, rw, ps, mr, mf, l, SMBD_NEG_OK, wr, ws, wrw }
#define RESP_BAD(n, v, cr, cg, st, rw, ps, mr, mf, l, err) \
	{ n, v, cr, cg, st, rw, ps, mr, mf, l, err, 0, 0, 0 }
#define MIB (1024 * 1024)

static const struct resp_case resp_cases[] = {
	RESP_OK("4.1 example", V1, 10, 10, 0, MIB, 1024, 1024, 131072, 32, 1024, 1024, MIB),
	RESP_BAD("31 bytes", V1, 10, 10, 0, MIB, 1024, 1024, 131072, 31, E_SHORT),
	RESP_OK("64 bytes, trailing junk",
		V1, 10, 10, 0, MIB, 1024, 1024, 131072, 64, 1024, 1024, MIB),
	RESP_BAD("version 0", 0, 10, 10, 0, MIB, 1024, 1024, 131072, 32, E_VER),
	RESP_BAD("version 0x0101", 0x0101, 10, 10, 0, MIB, 1024, 1024, 131072, 32, E_VER),
	RESP_BAD("max receive 127", V1, 10, 10, 0, MIB, 1024, 127, 131072, 32, E_RECV),
	RESP_OK("max receive 128", V1, 10, 10, 0, MIB, 1024, 128, 131072, 32, 1024, 128, MIB),
	RESP_BAD("max fragmented 131071", V1, 10, 10, 0, MIB, 1024, 1024, 131071, 32, E_FRAG),
	RESP_OK("max fragmented 131072",
		V1, 10, 10, 0, MIB, 1024, 1024, 131072, 32, 1024, 1024, MIB),
	RESP_BAD("credits granted 0", V1, 10, 0, 0, MIB, 1024, 1024, 131072, 32, E_CGR),
	RESP_OK("credits granted 1", V1, 10, 1, 0, MIB, 1024, 1024, 131072, 32, 1024, 1024, MIB),
	RESP_BAD("credits requested 0", V1, 0, 10, 0, MIB, 1024, 1024, 131072, 32, E_CRQ),
	RESP_OK("preferred send = our max receive",
		V1, 10, 10, 0, MIB, 1364, 1024, 131072, 32, 1364, 1024, MIB),
	RESP_BAD("preferred send above our max receive",
		 V1, 10, 10, 0, MIB, 1365, 1024, 131072, 32, E_PREF),
	RESP_OK("preferred send 100 floors to 128",
		V1, 10, 10, 0, MIB, 100, 1024, 131072, 32, 128, 1024, MIB),
	RESP_BAD("status not supported",
		 V1, 10, 10, NS, MIB, 1024, 1024, 131072, 32, E_STAT),
	RESP_BAD("failure response layout", 0, 0, 0, NS, 0, 0, 0, 0, 32, E_STAT),
	RESP_BAD("status 1", V1, 10, 10, 1, MIB, 1024, 1024, 131072, 32, E_STAT),
	RESP_OK("read/write 16 MiB capped to ours",
		V1, 10, 10, 0, 16 * MIB, 1024, 1024, 131072, 32, 1024, 1024, 8 * MIB),
	RESP_OK("read/write 0", V1, 10, 10, 0, 0, 1024, 1024, 131072, 32, 1024, 1024, 0),
	/* Below SMBD_MIN_READ_WRITE_SIZE: no RDMA read or write, as with 0. */
	RESP_OK("read/write 1 is none", V1, 10, 10, 0, 1, 1024, 1024, 131072, 32, 1024, 1024, 0),
	RESP_OK("read/write 4095 is none",
		V1, 10, 10, 0, 4095, 1024, 1024, 131072, 32, 1024, 1024, 0),
	RESP_OK("read/write 4096",
		V1, 10, 10, 0, 4096, 1024, 1024, 131072, 32, 1024, 1024, 4096),
	RESP_OK("max receive 0xffffffff",
		V1, 10, 10, 0, MIB, 1024, 0xffffffff, 131072, 32, 1024, 1364, MIB),
};

KUNIT_ARRAY_PARAM_DESC(resp, resp_cases, name);

static void smbd_neg_initiator(struct kunit *test)
{
	const struct resp_case *c = test->param_value;
	u8 *buf = kunit_kzalloc(test, 64, GFP_KERNEL);
	struct smbd_neg_resp resp = {
		.min_version = V1, .max_version = V1,
		.negotiated_version = c->version,
		.credits_requested = c->credits_req,
		.credits_granted = c->credits_granted, .status = c->status,
		.max_read_write_size = c->rw, .preferred_send_size = c->pref_send,
		.max_receive_size = c->max_recv, .max_fragmented_size = c->max_frag,
	};
	struct smbd_negotiated n;
	struct smbd_params p;
	enum smbd_neg_err err;

	KUNIT_ASSERT_NOT_NULL(test, buf);
	params(&p, false);
	/* The table is written for the stock peers' 1364-byte limits. */
	p.max_send_size = 1364;
	p.max_recv_size = 1364;
	memset(buf, 0xa5, 64);
	smbd_neg_resp_encode(&resp, (void *)buf);
	err = smbd_neg_resp_process(&p, buf, c->len, &n);
	KUNIT_ASSERT_EQ_MSG(test, err, c->want, "got %s", smbd_neg_err_str(err));
	if (err != SMBD_NEG_OK)
		return;

	KUNIT_EXPECT_EQ(test, n.max_recv_size, c->want_recv);
	KUNIT_EXPECT_EQ(test, n.max_send_size, c->want_send);
	KUNIT_EXPECT_EQ(test, n.max_read_write_size, c->want_rw);
	KUNIT_EXPECT_EQ(test, n.max_fragmented_send_size, c->max_frag);
	KUNIT_EXPECT_EQ(test, n.max_fragmented_recv_size, p.max_fragmented_recv_size);
	KUNIT_EXPECT_EQ(test, n.send_credits, c->credits_granted);
	KUNIT_EXPECT_EQ(test, n.peer_credits_requested, c->credits_req);
}

/*
 * Both sides end with limits the other can honour: what one side sends
 * fits what the other receives, and what one reassembles bounds what
 * the other sends as one message. The large size (smbd_params.large_size)
 * is offered both ways in the negotiate messages and taken only where the
 * peer offers as much; where a case names the sizes negotiated each way
 * (i_to_r, r_to_i), they are checked too.
 */
struct pair_case {
	const char *name;
	u32 i_send, i_recv, i_large, r_send, r_recv, r_large;
	u32 i_to_r, r_to_i;
};

static const struct pair_case pair_cases[] = {
	{ "stock sizes", 1364, 1364, 0, 1364, 1364, 0 },
	{ "smbd defaults", 8192, 8192, 0, 8192, 8192, 0, 8192, 8192 },
	{ "windows responder", 1364, 1364, 0, 1364, 8192, 0 },
	{ "big initiator", 8192, 8192, 0, 1364, 1364, 0 },
	{ "asymmetric", 8192, 1364, 0, 1364, 8192, 0 },
	{ "minimum", 128, 128, 0, 128, 128, 0 },
	{ "minimum initiator", 128, 128, 0, 8192, 8192, 0 },
	{ "two smbd", 8192, 8192, 32768, 8192, 8192, 32768, 32768, 32768 },
	{ "initiator offers none", 8192, 8192, 0, 8192, 8192, 32768, 8192, 8192 },
	{ "responder offers none", 8192, 8192, 32768, 8192, 8192, 0, 8192, 8192 },
	{ "stock initiator", 1364, 1364, 0, 8192, 8192, 32768, 1364, 1364 },
	{ "stock responder", 8192, 8192, 32768, 1364, 1364, 0, 1364, 1364 },
	/* A Windows server would refuse the 32 KiB offer (WIN<6>). */
	{ "1364/8192 responder", 8192, 8192, 32768, 1364, 8192, 0, 8192, 1364 },
	{ "unequal", 8192, 8192, 16384, 8192, 8192, 32768, 16384, 16384 },
	{ "below max sizes", 65536, 65536, 32768, 8192, 8192, 32768, 32768, 32768 },
};

KUNIT_ARRAY_PARAM_DESC(pair, pair_cases, name);

static void smbd_neg_round_trip(struct kunit *test)
{
	const struct pair_case *c = test->param_value;
	struct smbd_negotiated ni, nr;
	struct smbd_neg_resp_pdu resp;
	struct smbd_neg_req_pdu req;
	struct smbd_params pi, pr;
	struct smbd_neg_req q;

	params(&pi, false);
	params(&pr, true);
	pi.max_send_size = c->i_send;
	pi.max_recv_size = c->i_recv;
	pi.large_size = c->i_large;
	pr.max_send_size = c->r_send;
	pr.max_recv_size = c->r_recv;
	pr.large_size = c->r_large;
	pi.max_fragmented_recv_size = 131072;
	pi.send_credit_target = 10;
	pr.send_credit_target = 20;

	smbd_neg_req_build(&pi, &req);
	smbd_neg_req_decode(&req, &q);
	KUNIT_EXPECT_EQ(test, q.preferred_send_size, max(c->i_send, c->i_large));
	KUNIT_EXPECT_EQ(test, q.max_receive_size, max(c->i_recv, c->i_large));
	KUNIT_ASSERT_EQ(test, smbd_neg_req_process(&pr, &req, sizeof(req), &nr),
			SMBD_NEG_OK);
	smbd_neg_resp_build(&pr, &nr, 5, &resp);
	KUNIT_ASSERT_EQ(test, smbd_neg_resp_process(&pi, &resp, sizeof(resp), &ni),
			SMBD_NEG_OK);

	KUNIT_EXPECT_LE(test, ni.max_send_size, nr.max_recv_size);
	KUNIT_EXPECT_LE(test, nr.max_send_size, ni.max_recv_size);
	/* Never more than either side offered. */
	KUNIT_EXPECT_LE(test, nr.max_recv_size, smbd_offer_recv(&pr));
	KUNIT_EXPECT_LE(test, ni.max_recv_size, smbd_offer_recv(&pi));
	KUNIT_EXPECT_LE(test, ni.max_send_size, smbd_offer_send(&pi));
	KUNIT_EXPECT_LE(test, nr.max_send_size, smbd_offer_send(&pr));
	if (c->i_to_r) {
		KUNIT_EXPECT_EQ(test, ni.max_send_size, c->i_to_r);
		KUNIT_EXPECT_EQ(test, nr.max_recv_size, c->i_to_r);
		KUNIT_EXPECT_EQ(test, nr.max_send_size, c->r_to_i);
		KUNIT_EXPECT_EQ(test, ni.max_recv_size, c->r_to_i);
	}
	KUNIT_EXPECT_EQ(test, ni.max_fragmented_send_size, nr.max_fragmented_recv_size);
	KUNIT_EXPECT_EQ(test, nr.max_fragmented_send_size, ni.max_fragmented_recv_size);
	KUNIT_EXPECT_EQ(test, ni.send_credits, 5);
	KUNIT_EXPECT_EQ(test, nr.send_credits, 0);
	KUNIT_EXPECT_EQ(test, ni.peer_credits_requested, 20);
	KUNIT_EXPECT_EQ(test, nr.peer_credits_requested, 10);
	KUNIT_EXPECT_GE(test, ni.max_send_size, SMBD_MIN_RECEIVE_SIZE);
	KUNIT_EXPECT_GE(test, nr.max_send_size, SMBD_MIN_RECEIVE_SIZE);
}

/*
 * A response that prefers to send more than we offered to receive is
 * refused ([MS-SMBD] 3.1.5.7): with the large size, more than it.
 */
static void smbd_neg_large_pref_send(struct kunit *test)
{
	struct smbd_neg_resp resp = {
		.min_version = 0x0100, .max_version = 0x0100,
		.negotiated_version = 0x0100, .credits_requested = 255,
		.credits_granted = 255, .max_read_write_size = 1048576,
		.max_receive_size = 8192, .max_fragmented_size = 1048576,
	};
	struct smbd_neg_resp_pdu pdu;
	struct smbd_negotiated n;
	struct smbd_params p;

	params(&p, false);
	p.large_size = 32768;
	resp.preferred_send_size = 32768;
	smbd_neg_resp_encode(&resp, &pdu);
	KUNIT_EXPECT_EQ(test, smbd_neg_resp_process(&p, &pdu, sizeof(pdu), &n),
			SMBD_NEG_OK);
	KUNIT_EXPECT_EQ(test, n.max_recv_size, 32768);
	resp.preferred_send_size = 32769;
	smbd_neg_resp_encode(&resp, &pdu);
	KUNIT_EXPECT_EQ(test, smbd_neg_resp_process(&p, &pdu, sizeof(pdu), &n),
			SMBD_NEG_ERR_PREF_SEND_SIZE);
	p.large_size = 0;
	resp.preferred_send_size = 8193;
	smbd_neg_resp_encode(&resp, &pdu);
	KUNIT_EXPECT_EQ(test, smbd_neg_resp_process(&p, &pdu, sizeof(pdu), &n),
			SMBD_NEG_ERR_PREF_SEND_SIZE);
}

/* How many buffers the same chunks hold once cut for another size. */
static void smbd_neg_split(struct kunit *test)
{
	/* 64 receives of 8 KiB in 32 KiB chunks: 16 of 32 KiB, 32 of 16. */
	KUNIT_EXPECT_EQ(test, smbd_split_count(32768, 524288, 8192), 64);
	KUNIT_EXPECT_EQ(test, smbd_split_count(32768, 524288, 16384), 32);
	KUNIT_EXPECT_EQ(test, smbd_split_count(32768, 524288, 32768), 16);
	KUNIT_EXPECT_EQ(test, smbd_split_count(32768, 524288, 65536), 0);
	/* 255 of 1364 bytes (stride 1408): 23 a chunk, 2 in the last. */
	KUNIT_EXPECT_EQ(test, smbd_split_count(23 * 1408, 255 * 1408, 1408), 255);
	KUNIT_EXPECT_EQ(test, smbd_split_count(23 * 1408, 255 * 1408, 32768), 0);
	KUNIT_EXPECT_EQ(test, smbd_split_count(23 * 1408, 255 * 1408, 16384), 11);
	/* A short last chunk holds what fits in it, none straddles. */
	KUNIT_EXPECT_EQ(test, smbd_split_count(32768, 4 * 32768 + 24576, 16384), 9);
	KUNIT_EXPECT_EQ(test, smbd_split_count(32768, 4 * 32768 + 8192, 16384), 8);
	KUNIT_EXPECT_EQ(test, smbd_split_count(0, 65536, 8192), 0);
	KUNIT_EXPECT_EQ(test, smbd_split_count(32768, 65536, 0), 0);
	/* The default's memory holds the 16 a connection needs to offer. */
	KUNIT_EXPECT_GE(test, smbd_split_count(32768, 64 * 8192, 32768),
			SMBD_SPLIT_MIN_RECVS);
}

/* [MS-SMBD] 6.2: the accepting side's IRD/ORD. */
static void smbd_neg_irdord(struct kunit *test)
{
	static const u8 legacy_le[8] = { 32, 0, 0, 0, 1, 0, 0, 0 };
	struct smbd_irdord_pdu pdu;
	u32 ird = 0, ord = 0;
	u8 *raw = (u8 *)&pdu;

	smbd_irdord_encode(16, 8, &pdu);
	KUNIT_EXPECT_EQ(test, raw[3], 16);
	KUNIT_EXPECT_EQ(test, raw[7], 8);
	KUNIT_EXPECT_EQ(test, raw[0], 0);

	/* IRD = min(own ORD, peer IRD), ORD = min(own IRD, peer ORD). */
	KUNIT_EXPECT_EQ(test, smbd_irdord_accept(32, 4, &pdu, 8, &ird, &ord), 0);
	KUNIT_EXPECT_EQ(test, ird, 4);
	KUNIT_EXPECT_EQ(test, ord, 8);
	KUNIT_EXPECT_EQ(test, smbd_irdord_accept(2, 64, &pdu, 8, &ird, &ord), 0);
	KUNIT_EXPECT_EQ(test, ird, 16);
	KUNIT_EXPECT_EQ(test, ord, 2);

	/* A depth negotiating to zero rejects the connection. */
	smbd_irdord_encode(0, 8, &pdu);
	KUNIT_EXPECT_EQ(test, smbd_irdord_accept(32, 4, &pdu, 8, &ird, &ord),
			-ECONNREFUSED);
	smbd_irdord_encode(16, 8, &pdu);
	KUNIT_EXPECT_EQ(test, smbd_irdord_accept(0, 4, &pdu, 8, &ird, &ord),
			-ECONNREFUSED);

	/* No header, or a short one: leave IRD/ORD to the provider. */
	KUNIT_EXPECT_EQ(test, smbd_irdord_accept(32, 4, NULL, 0, &ird, &ord),
			-ENODATA);
	KUNIT_EXPECT_EQ(test, smbd_irdord_accept(32, 4, &pdu, 7, &ird, &ord),
			-ENODATA);

	/* An old Linux initiator wrote host (little-endian) order. */
	KUNIT_EXPECT_EQ(test, smbd_irdord_accept(32, 32, legacy_le, 8, &ird, &ord), 0);
	KUNIT_EXPECT_EQ(test, ird, 32);
	KUNIT_EXPECT_EQ(test, ord, 1);
}

/*
 * [MS-SMBD] 6.2: the connecting side takes the values the accepting
 * peer transmits, never above what it asked for; no header leaves them
 * to the provider; a depth of zero is no connection.
 */
static void smbd_neg_irdord_reply(struct kunit *test)
{
	static const u8 legacy_le[8] = { 3, 0, 0, 0, 2, 0, 0, 0 };
	struct smbd_irdord_pdu pdu;
	u32 ird = 0, ord = 0;

	/* Our side accepting (32, 8) from a peer asking (4, 16). */
	smbd_irdord_encode(4, 16, &pdu);
	KUNIT_ASSERT_EQ(test, smbd_irdord_accept(32, 8, &pdu, 8, &ird, &ord), 0);
	/* The reply the peer takes: its IRD 4 (our ORD), its ORD 16. */
	smbd_irdord_encode(ird, ord, &pdu);
	KUNIT_EXPECT_EQ(test, smbd_irdord_reply(4, 16, &pdu, 8, &ird, &ord), 0);
	KUNIT_EXPECT_EQ(test, ird, 4);
	KUNIT_EXPECT_EQ(test, ord, 16);

	/* Less than asked: taken. */
	smbd_irdord_encode(1, 2, &pdu);
	KUNIT_EXPECT_EQ(test, smbd_irdord_reply(32, 8, &pdu, 8, &ird, &ord), 0);
	KUNIT_EXPECT_EQ(test, ird, 1);
	KUNIT_EXPECT_EQ(test, ord, 2);
	/* More than asked: held to what was asked. */
	smbd_irdord_encode(64, 64, &pdu);
	KUNIT_EXPECT_EQ(test, smbd_irdord_reply(32, 8, &pdu, 8, &ird, &ord), 0);
	KUNIT_EXPECT_EQ(test, ird, 32);
	KUNIT_EXPECT_EQ(test, ord, 8);
	/* Host order, as old Linux peers wrote it. */
	KUNIT_EXPECT_EQ(test, smbd_irdord_reply(32, 8, legacy_le, 8, &ird, &ord), 0);
	KUNIT_EXPECT_EQ(test, ird, 3);
	KUNIT_EXPECT_EQ(test, ord, 2);

	ird = 7;
	ord = 7;
	KUNIT_EXPECT_EQ(test, smbd_irdord_reply(32, 8, NULL, 0, &ird, &ord),
			-ENODATA);
	KUNIT_EXPECT_EQ(test, smbd_irdord_reply(32, 8, &pdu, 7, &ird, &ord),
			-ENODATA);
	KUNIT_EXPECT_EQ(test, ird, 7);
	KUNIT_EXPECT_EQ(test, ord, 7);
	smbd_irdord_encode(0, 8, &pdu);
	KUNIT_EXPECT_EQ(test, smbd_irdord_reply(32, 8, &pdu, 8, &ird, &ord),
			-ECONNREFUSED);
	smbd_irdord_encode(4, 0, &pdu);
	KUNIT_EXPECT_EQ(test, smbd_irdord_reply(32, 8, &pdu, 8, &ird, &ord),
			-ECONNREFUSED);
}

static struct kunit_case smbd_negotiate_cases[] = {
	KUNIT_CASE(smbd_neg_defaults),
	KUNIT_CASE(smbd_neg_params_check),
	KUNIT_CASE(smbd_neg_req_built),
	KUNIT_CASE_PARAM(smbd_neg_responder, req_gen_params),
	KUNIT_CASE(smbd_neg_reply_status),
	KUNIT_CASE(smbd_neg_failure_response),
	KUNIT_CASE(smbd_neg_success_response),
	KUNIT_CASE_PARAM(smbd_neg_initiator, resp_gen_params),
	KUNIT_CASE_PARAM(smbd_neg_round_trip, pair_gen_params),
	KUNIT_CASE(smbd_neg_large_pref_send),
	KUNIT_CASE(smbd_neg_split),
	KUNIT_CASE(smbd_neg_irdord),
	KUNIT_CASE(smbd_neg_irdord_reply),
	{}
};

static struct kunit_suite smbd_negotiate_suite = {
	.name = "smbd_negotiate",
	.test_cases = smbd_negotiate_cases,
};

kunit_test_suites(&smbd_negotiate_suite);

// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: keep-alive and the idle connection timer ([MS-SMBD] 3.1.2.2,
 * 3.1.5.1, 3.1.5.5, 3.1.5.8, 3.1.6.2).
 */
#include <kunit/test.h>

#include "smbd_proto.h"

#define IVL 120000
#define TMO 5000

static void smbd_ka_established(struct kunit *test)
{
	struct smbd_keepalive ka;

	smbd_ka_init(&ka, IVL, TMO);
	KUNIT_EXPECT_EQ(test, smbd_ka_on_established(&ka), IVL);
	KUNIT_EXPECT_EQ(test, ka.state, SMBD_KA_NONE);

	smbd_ka_init(&ka, 0, TMO);
	KUNIT_EXPECT_EQ(test, smbd_ka_on_established(&ka), 0);
	KUNIT_EXPECT_EQ(test, smbd_ka_on_timer(&ka), SMBD_KA_ACT_NONE);
}

/* Idle: probe, then the peer's silence ends the connection (3.1.6.2). */
static void smbd_ka_probe_unanswered(struct kunit *test)
{
	struct smbd_keepalive ka;
	u32 rearm;

	smbd_ka_init(&ka, IVL, TMO);
	smbd_ka_on_established(&ka);
	KUNIT_ASSERT_EQ(test, smbd_ka_on_timer(&ka), SMBD_KA_ACT_SEND);
	KUNIT_EXPECT_EQ(test, ka.state, SMBD_KA_PENDING);
	KUNIT_EXPECT_EQ(test, smbd_ka_on_send(&ka, &rearm),
			SMBD_FLAG_RESPONSE_REQUESTED);
	KUNIT_EXPECT_EQ(test, rearm, TMO);
	KUNIT_EXPECT_EQ(test, ka.state, SMBD_KA_SENT);
	/* Later messages do not ask again and leave the timer alone. */
	KUNIT_EXPECT_EQ(test, smbd_ka_on_send(&ka, &rearm), 0);
	KUNIT_EXPECT_EQ(test, rearm, 0);
	KUNIT_EXPECT_EQ(test, smbd_ka_on_timer(&ka), SMBD_KA_ACT_TERMINATE);
}

/* Any message from the peer answers the probe and re-arms (3.1.5.5). */
static void smbd_ka_probe_answered(struct kunit *test)
{
	struct smbd_keepalive ka;
	bool now = true;
	u32 rearm;

	smbd_ka_init(&ka, IVL, TMO);
	smbd_ka_on_established(&ka);
	smbd_ka_on_timer(&ka);
	smbd_ka_on_send(&ka, &rearm);
	KUNIT_EXPECT_EQ(test, smbd_ka_on_recv(&ka, 0, &now), IVL);
	KUNIT_EXPECT_FALSE(test, now);
	KUNIT_EXPECT_EQ(test, ka.state, SMBD_KA_NONE);
	/* The next idle period starts a new probe, not a termination. */
	KUNIT_EXPECT_EQ(test, smbd_ka_on_timer(&ka), SMBD_KA_ACT_SEND);
}

/* A probe that could not be sent for a whole interval: terminate. */
static void smbd_ka_pending_expires(struct kunit *test)
{
	struct smbd_keepalive ka;

	smbd_ka_init(&ka, IVL, TMO);
	smbd_ka_on_established(&ka);
	KUNIT_ASSERT_EQ(test, smbd_ka_on_timer(&ka), SMBD_KA_ACT_SEND);
	KUNIT_EXPECT_EQ(test, smbd_ka_on_timer(&ka), SMBD_KA_ACT_TERMINATE);
}

/* A received message clears a probe not yet sent: no flag goes out. */
static void smbd_ka_pending_cleared(struct kunit *test)
{
	struct smbd_keepalive ka;
	bool now;
	u32 rearm;

	smbd_ka_init(&ka, IVL, TMO);
	smbd_ka_on_timer(&ka);
	smbd_ka_on_recv(&ka, 0, &now);
	KUNIT_EXPECT_EQ(test, smbd_ka_on_send(&ka, &rearm), 0);
	KUNIT_EXPECT_EQ(test, rearm, 0);
}

/* 3.1.5.8: the peer asks; we answer promptly, without asking back. */
static void smbd_ka_peer_request(struct kunit *test)
{
	struct smbd_keepalive ka;
	bool now = false;
	u32 rearm;

	smbd_ka_init(&ka, IVL, TMO);
	smbd_ka_on_established(&ka);
	KUNIT_EXPECT_EQ(test, smbd_ka_on_recv(&ka, SMBD_FLAG_RESPONSE_REQUESTED,
					      &now), IVL);
	KUNIT_EXPECT_TRUE(test, now);
	KUNIT_EXPECT_EQ(test, smbd_ka_on_send(&ka, &rearm), 0);
	KUNIT_EXPECT_EQ(test, rearm, 0);
	KUNIT_EXPECT_FALSE(test, ka.reply_due);
	smbd_ka_on_recv(&ka, 0, &now);
	KUNIT_EXPECT_FALSE(test, now);

	/* Our own probe pending at the same time still asks. */
	smbd_ka_on_recv(&ka, SMBD_FLAG_RESPONSE_REQUESTED, &now);
	smbd_ka_on_timer(&ka);
	KUNIT_EXPECT_EQ(test, smbd_ka_on_send(&ka, &rearm),
			SMBD_FLAG_RESPONSE_REQUESTED);
	KUNIT_EXPECT_FALSE(test, ka.reply_due);
}

/* The reply stays due until a message goes out, whatever arrives meanwhile. */
static void smbd_ka_reply_stays_due(struct kunit *test)
{
	struct smbd_keepalive ka;
	bool now;
	u32 rearm;

	smbd_ka_init(&ka, IVL, TMO);
	smbd_ka_on_recv(&ka, SMBD_FLAG_RESPONSE_REQUESTED, &now);
	smbd_ka_on_recv(&ka, 0, &now);
	KUNIT_EXPECT_TRUE(test, now);
	smbd_ka_on_send(&ka, &rearm);
	smbd_ka_on_recv(&ka, 0, &now);
	KUNIT_EXPECT_FALSE(test, now);
}

/*
 * Two peers: A goes idle and probes; B answers; then both are quiet.
 * Following 3.1.5.8 literally (the reply asking again) would never end.
 */
static void smbd_ka_no_ping_pong(struct kunit *test)
{
	struct smbd_keepalive a, b;
	struct smbd_keepalive *from = &a, *to = &b, *tmp;
	unsigned int msgs = 0;
	bool now;
	u16 flags;
	u32 rearm;

	smbd_ka_init(&a, IVL, TMO);
	smbd_ka_init(&b, IVL, TMO);
	KUNIT_ASSERT_EQ(test, smbd_ka_on_timer(&a), SMBD_KA_ACT_SEND);
	now = true;
	while (now && msgs < 100) {
		flags = smbd_ka_on_send(from, &rearm);
		msgs++;
		smbd_ka_on_recv(to, flags, &now);
		tmp = from;
		from = to;
		to = tmp;
	}
	KUNIT_EXPECT_EQ(test, msgs, 2);
	KUNIT_EXPECT_EQ(test, a.state, SMBD_KA_NONE);
	KUNIT_EXPECT_EQ(test, b.state, SMBD_KA_NONE);
	KUNIT_EXPECT_FALSE(test, a.reply_due);
	KUNIT_EXPECT_FALSE(test, b.reply_due);
}

static struct kunit_case smbd_keepalive_cases[] = {
	KUNIT_CASE(smbd_ka_established),
	KUNIT_CASE(smbd_ka_probe_unanswered),
	KUNIT_CASE(smbd_ka_probe_answered),
	KUNIT_CASE(smbd_ka_pending_expires),
	KUNIT_CASE(smbd_ka_pending_cleared),
	KUNIT_CASE(smbd_ka_peer_request),
	KUNIT_CASE(smbd_ka_reply_stays_due),
	KUNIT_CASE(smbd_ka_no_ping_pong),
	{}
};

static struct kunit_suite smbd_keepalive_suite = {
	.name = "smbd_keepalive",
	.test_cases = smbd_keepalive_cases,
};

kunit_test_suites(&smbd_keepalive_suite);

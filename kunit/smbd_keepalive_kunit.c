// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: keep-alive and the idle connection timer ([MS-SMBD] 3.1.2.2,
 * 3.1.5.1, 3.1.5.5, 3.1.5.8, 3.1.6.2).
 */
#include <kunit/test.h>

#include "smbd_proto.h"

#define IVL 120000
#define TMO 5000
#define T0 1000000ULL	/* an arbitrary start on the caller's clock */

/* The timer fires at @now and finds the connection not idle. */
static void expect_not_idle(struct kunit *test, struct smbd_keepalive *ka,
			    u64 now, u64 want_rearm)
{
	u32 rearm;

	KUNIT_EXPECT_EQ(test, smbd_ka_on_timer(ka, now, &rearm),
			SMBD_KA_ACT_NONE);
	KUNIT_EXPECT_EQ(test, ka->state, SMBD_KA_NONE);
	KUNIT_EXPECT_EQ(test, (u64)rearm, want_rearm);
}

static void smbd_ka_established(struct kunit *test)
{
	struct smbd_keepalive ka;
	u32 rearm = 1;

	smbd_ka_init(&ka, IVL, TMO);
	KUNIT_EXPECT_EQ(test, smbd_ka_on_established(&ka, T0), IVL);
	KUNIT_EXPECT_EQ(test, ka.state, SMBD_KA_NONE);

	smbd_ka_init(&ka, 0, TMO);
	KUNIT_EXPECT_EQ(test, smbd_ka_on_established(&ka, T0), 0);
	KUNIT_EXPECT_EQ(test, smbd_ka_on_timer(&ka, T0 + IVL, &rearm),
			SMBD_KA_ACT_NONE);
	KUNIT_EXPECT_EQ(test, rearm, 0);
}

/* Idle: probe, then the peer's silence ends the connection (3.1.6.2). */
static void smbd_ka_probe_unanswered(struct kunit *test)
{
	struct smbd_keepalive ka;
	u32 rearm;

	smbd_ka_init(&ka, IVL, TMO);
	smbd_ka_on_established(&ka, T0);
	KUNIT_ASSERT_EQ(test, smbd_ka_on_timer(&ka, T0 + IVL, &rearm),
			SMBD_KA_ACT_SEND);
	KUNIT_EXPECT_EQ(test, ka.state, SMBD_KA_PENDING);
	/* The probe must go out and be answered within the timeout. */
	KUNIT_EXPECT_EQ(test, rearm, TMO);
	KUNIT_EXPECT_EQ(test, smbd_ka_on_send(&ka, &rearm),
			SMBD_FLAG_RESPONSE_REQUESTED);
	KUNIT_EXPECT_EQ(test, rearm, TMO);
	KUNIT_EXPECT_EQ(test, ka.state, SMBD_KA_SENT);
	/* Later messages do not ask again and leave the timer alone. */
	KUNIT_EXPECT_EQ(test, smbd_ka_on_send(&ka, &rearm), 0);
	KUNIT_EXPECT_EQ(test, rearm, 0);
	KUNIT_EXPECT_EQ(test, smbd_ka_on_timer(&ka, T0 + IVL + TMO, &rearm),
			SMBD_KA_ACT_TERMINATE);
	KUNIT_EXPECT_EQ(test, rearm, 0);
}

/* Any message from the peer answers the probe (3.1.5.5). */
static void smbd_ka_probe_answered(struct kunit *test)
{
	struct smbd_keepalive ka;
	u64 rx = T0 + IVL + 10;
	u32 rearm;

	smbd_ka_init(&ka, IVL, TMO);
	smbd_ka_on_established(&ka, T0);
	smbd_ka_on_timer(&ka, T0 + IVL, &rearm);
	smbd_ka_on_send(&ka, &rearm);
	KUNIT_EXPECT_FALSE(test, smbd_ka_on_recv(&ka, 0, rx));
	KUNIT_EXPECT_EQ(test, ka.state, SMBD_KA_NONE);
	/*
	 * The timer armed for the probe's timeout finds the connection
	 * alive and moves on to the end of the idle period that began
	 * with the answer.
	 */
	expect_not_idle(test, &ka, T0 + IVL + TMO, rx + IVL - (T0 + IVL + TMO));
	/* A whole quiet interval later: a new probe, not a termination. */
	KUNIT_EXPECT_EQ(test, smbd_ka_on_timer(&ka, rx + IVL, &rearm),
			SMBD_KA_ACT_SEND);
}

/* Receives within the interval only push the next check back. */
static void smbd_ka_busy_rearms_lazily(struct kunit *test)
{
	struct smbd_keepalive ka;
	u64 now = T0;
	u32 rearm;
	int i;

	smbd_ka_init(&ka, IVL, TMO);
	smbd_ka_on_established(&ka, T0);
	for (i = 0; i < 1000; i++) {
		now += 100;
		smbd_ka_on_recv(&ka, 0, now);
	}
	/* The timer armed at establishment fires: the rest of the period. */
	expect_not_idle(test, &ka, T0 + IVL, now - T0);
	/* One ms early is still not idle; on time it is. */
	expect_not_idle(test, &ka, now + IVL - 1, 1);
	KUNIT_EXPECT_EQ(test, smbd_ka_on_timer(&ka, now + IVL, &rearm),
			SMBD_KA_ACT_SEND);
	KUNIT_EXPECT_EQ(test, rearm, TMO);
}

/* A clock that reads earlier than the last receive counts as not idle. */
static void smbd_ka_clock_behind(struct kunit *test)
{
	struct smbd_keepalive ka;

	smbd_ka_init(&ka, IVL, TMO);
	smbd_ka_on_established(&ka, T0);
	smbd_ka_on_recv(&ka, 0, T0 + 50);
	expect_not_idle(test, &ka, T0, IVL);
}

/* A probe that could not be sent within the timeout: terminate. */
static void smbd_ka_pending_expires(struct kunit *test)
{
	struct smbd_keepalive ka;
	u32 rearm;

	smbd_ka_init(&ka, IVL, TMO);
	smbd_ka_on_established(&ka, T0);
	KUNIT_ASSERT_EQ(test, smbd_ka_on_timer(&ka, T0 + IVL, &rearm),
			SMBD_KA_ACT_SEND);
	KUNIT_EXPECT_EQ(test, smbd_ka_on_timer(&ka, T0 + IVL + TMO, &rearm),
			SMBD_KA_ACT_TERMINATE);
}

/* A received message clears a probe not yet sent: no flag goes out. */
static void smbd_ka_pending_cleared(struct kunit *test)
{
	struct smbd_keepalive ka;
	u32 rearm;

	smbd_ka_init(&ka, IVL, TMO);
	smbd_ka_on_established(&ka, T0);
	smbd_ka_on_timer(&ka, T0 + IVL, &rearm);
	smbd_ka_on_recv(&ka, 0, T0 + IVL + 1);
	KUNIT_EXPECT_EQ(test, smbd_ka_on_send(&ka, &rearm), 0);
	KUNIT_EXPECT_EQ(test, rearm, 0);
}

/* 3.1.5.8: the peer asks; we answer promptly, without asking back. */
static void smbd_ka_peer_request(struct kunit *test)
{
	struct smbd_keepalive ka;
	u32 rearm;

	smbd_ka_init(&ka, IVL, TMO);
	smbd_ka_on_established(&ka, T0);
	KUNIT_EXPECT_TRUE(test, smbd_ka_on_recv(&ka,
						SMBD_FLAG_RESPONSE_REQUESTED,
						T0 + 1));
	KUNIT_EXPECT_EQ(test, smbd_ka_on_send(&ka, &rearm), 0);
	KUNIT_EXPECT_EQ(test, rearm, 0);
	KUNIT_EXPECT_FALSE(test, ka.reply_due);
	KUNIT_EXPECT_FALSE(test, smbd_ka_on_recv(&ka, 0, T0 + 2));

	/* Our own probe pending at the same time still asks. */
	smbd_ka_on_recv(&ka, SMBD_FLAG_RESPONSE_REQUESTED, T0 + 3);
	smbd_ka_on_timer(&ka, T0 + 3 + IVL, &rearm);
	KUNIT_EXPECT_EQ(test, smbd_ka_on_send(&ka, &rearm),
			SMBD_FLAG_RESPONSE_REQUESTED);
	KUNIT_EXPECT_FALSE(test, ka.reply_due);
}

/* The reply stays due until a message goes out, whatever arrives meanwhile. */
static void smbd_ka_reply_stays_due(struct kunit *test)
{
	struct smbd_keepalive ka;
	u32 rearm;

	smbd_ka_init(&ka, IVL, TMO);
	smbd_ka_on_recv(&ka, SMBD_FLAG_RESPONSE_REQUESTED, T0);
	KUNIT_EXPECT_TRUE(test, smbd_ka_on_recv(&ka, 0, T0 + 1));
	smbd_ka_on_send(&ka, &rearm);
	KUNIT_EXPECT_FALSE(test, smbd_ka_on_recv(&ka, 0, T0 + 2));
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
	u64 now = T0 + IVL;
	bool more;
	u16 flags;
	u32 rearm;

	smbd_ka_init(&a, IVL, TMO);
	smbd_ka_init(&b, IVL, TMO);
	smbd_ka_on_established(&a, T0);
	smbd_ka_on_established(&b, T0);
	KUNIT_ASSERT_EQ(test, smbd_ka_on_timer(&a, now, &rearm),
			SMBD_KA_ACT_SEND);
	more = true;
	while (more && msgs < 100) {
		flags = smbd_ka_on_send(from, &rearm);
		msgs++;
		more = smbd_ka_on_recv(to, flags, ++now);
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

/*
 * A link that came back: the timer probes at once, not an interval
 * later; the probe then runs as an idle one (asks, waits the timeout).
 */
static void smbd_ka_link_up_probes(struct kunit *test)
{
	struct smbd_keepalive ka;
	u32 rearm;

	smbd_ka_init(&ka, IVL, TMO);
	smbd_ka_on_established(&ka, T0);
	KUNIT_ASSERT_TRUE(test, smbd_ka_on_link_up(&ka, 0));
	KUNIT_ASSERT_EQ(test, smbd_ka_on_timer(&ka, T0 + 10, &rearm),
			SMBD_KA_ACT_SEND);
	KUNIT_EXPECT_EQ(test, rearm, TMO);
	KUNIT_EXPECT_EQ(test, smbd_ka_on_send(&ka, &rearm),
			SMBD_FLAG_RESPONSE_REQUESTED);
	KUNIT_EXPECT_EQ(test, smbd_ka_on_timer(&ka, T0 + 10 + TMO, &rearm),
			SMBD_KA_ACT_TERMINATE);

	/* Answered: the next probe is an interval after the answer. */
	smbd_ka_init(&ka, IVL, TMO);
	smbd_ka_on_established(&ka, T0);
	smbd_ka_on_link_up(&ka, 0);
	smbd_ka_on_timer(&ka, T0 + 10, &rearm);
	smbd_ka_on_send(&ka, &rearm);
	smbd_ka_on_recv(&ka, 0, T0 + 20);
	expect_not_idle(test, &ka, T0 + 20, IVL);
}

/*
 * The first packets after a link up may be lost, and a soft RoCE queue
 * pair resends only after its ACK timeout (about 8.6 s, more than the
 * keep-alive timeout): the link-up probe waits one resend longer, both
 * while it waits for a credit and once sent, so that a live peer keeps
 * its connection. Only that probe: the next idle one waits the timeout.
 * The wait never exceeds timeout + interval.
 */
#define RESEND 8590

static void smbd_ka_link_up_waits_resend(struct kunit *test)
{
	struct smbd_keepalive ka;
	u32 rearm;

	smbd_ka_init(&ka, IVL, TMO);
	smbd_ka_on_established(&ka, T0);
	KUNIT_ASSERT_TRUE(test, smbd_ka_on_link_up(&ka, RESEND));
	KUNIT_ASSERT_EQ(test, smbd_ka_on_timer(&ka, T0 + 10, &rearm),
			SMBD_KA_ACT_SEND);
	KUNIT_EXPECT_EQ(test, rearm, TMO + RESEND);
	KUNIT_EXPECT_EQ(test, smbd_ka_on_send(&ka, &rearm),
			SMBD_FLAG_RESPONSE_REQUESTED);
	KUNIT_EXPECT_EQ(test, rearm, TMO + RESEND);
	/* The answer, after the resend: the connection lives. */
	smbd_ka_on_recv(&ka, 0, T0 + 10 + RESEND + 100);
	KUNIT_EXPECT_EQ(test, ka.state, SMBD_KA_NONE);

	/* The next probe is an idle one: the timeout alone. */
	KUNIT_ASSERT_EQ(test, smbd_ka_on_timer(&ka, T0 + 10 + RESEND + 100 + IVL,
					       &rearm), SMBD_KA_ACT_SEND);
	KUNIT_EXPECT_EQ(test, rearm, TMO);
	smbd_ka_on_send(&ka, &rearm);
	KUNIT_EXPECT_EQ(test, rearm, TMO);

	/* A queue pair that resends after hours waits an interval more. */
	smbd_ka_init(&ka, IVL, TMO);
	smbd_ka_on_established(&ka, T0);
	smbd_ka_on_link_up(&ka, U32_MAX);
	smbd_ka_on_timer(&ka, T0 + 10, &rearm);
	KUNIT_EXPECT_EQ(test, rearm, TMO + IVL);
}

/*
 * A message from the peer before the timer fires cancels the probe; one
 * outstanding keeps its deadline (no second probe, no early end); with
 * keep-alives off there is no probe.
 */
static void smbd_ka_link_up_moot(struct kunit *test)
{
	struct smbd_keepalive ka;
	u32 rearm;

	smbd_ka_init(&ka, IVL, TMO);
	smbd_ka_on_established(&ka, T0);
	smbd_ka_on_link_up(&ka, RESEND);
	smbd_ka_on_recv(&ka, 0, T0 + 5);
	KUNIT_EXPECT_EQ(test, smbd_ka_on_timer(&ka, T0 + 10, &rearm),
			SMBD_KA_ACT_NONE);
	KUNIT_EXPECT_EQ(test, rearm, IVL - 5);

	smbd_ka_on_timer(&ka, T0 + 5 + IVL, &rearm);
	KUNIT_EXPECT_EQ(test, ka.state, SMBD_KA_PENDING);
	KUNIT_EXPECT_FALSE(test, smbd_ka_on_link_up(&ka, RESEND));
	smbd_ka_on_send(&ka, &rearm);
	/* It keeps its own deadline: an idle probe's. */
	KUNIT_EXPECT_EQ(test, rearm, TMO);
	KUNIT_EXPECT_FALSE(test, smbd_ka_on_link_up(&ka, RESEND));
	KUNIT_EXPECT_EQ(test, ka.state, SMBD_KA_SENT);

	smbd_ka_init(&ka, 0, TMO);
	smbd_ka_on_established(&ka, T0);
	KUNIT_EXPECT_FALSE(test, smbd_ka_on_link_up(&ka, RESEND));
	KUNIT_EXPECT_EQ(test, smbd_ka_on_timer(&ka, T0 + 10, &rearm),
			SMBD_KA_ACT_NONE);
	KUNIT_EXPECT_EQ(test, rearm, 0);
}

static struct kunit_case smbd_keepalive_cases[] = {
	KUNIT_CASE(smbd_ka_established),
	KUNIT_CASE(smbd_ka_probe_unanswered),
	KUNIT_CASE(smbd_ka_probe_answered),
	KUNIT_CASE(smbd_ka_busy_rearms_lazily),
	KUNIT_CASE(smbd_ka_clock_behind),
	KUNIT_CASE(smbd_ka_pending_expires),
	KUNIT_CASE(smbd_ka_pending_cleared),
	KUNIT_CASE(smbd_ka_peer_request),
	KUNIT_CASE(smbd_ka_reply_stays_due),
	KUNIT_CASE(smbd_ka_no_ping_pong),
	KUNIT_CASE(smbd_ka_link_up_probes),
	KUNIT_CASE(smbd_ka_link_up_waits_resend),
	KUNIT_CASE(smbd_ka_link_up_moot),
	{}
};

static struct kunit_suite smbd_keepalive_suite = {
	.name = "smbd_keepalive",
	.test_cases = smbd_keepalive_cases,
};

kunit_test_suites(&smbd_keepalive_suite);

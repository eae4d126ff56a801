// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: credits ([MS-SMBD] 3.1.5.1, 3.1.5.8, 3.1.5.9).
 *
 * Unit cases for each rule, then a two-peer simulation that runs both
 * credit state machines against each other, in random orders, from a
 * single credit up to 255, and checks that neither ever sends without a
 * credit and that they never deadlock.
 */
#include <kunit/test.h>
#include <linux/prandom.h>
#include <linux/string.h>

#include "smbd_proto.h"

static void cred_setup(struct smbd_credits *c, u16 max, u16 target,
		       u16 peer_requested, u16 send_credits)
{
	struct smbd_params p;
	struct smbd_negotiated n = {
		.peer_credits_requested = peer_requested,
		.send_credits = send_credits,
	};

	smbd_params_init(&p, false);
	p.recv_credit_max = max;
	p.send_credit_target = target;
	smbd_cred_init(c, &p, &n);
}

/* [MS-SMBD] 3.1.5.6/3.1.5.7: starting values; the peer's target is capped. */
static void smbd_cred_initial(struct kunit *test)
{
	struct smbd_credits c;

	cred_setup(&c, 255, 255, 10, 0);
	KUNIT_EXPECT_EQ(test, c.send_credits, 0);
	KUNIT_EXPECT_EQ(test, c.recv_credit_target, 10);
	KUNIT_EXPECT_EQ(test, c.recv_posted, 0);
	KUNIT_EXPECT_EQ(test, c.recv_granted, 0);

	cred_setup(&c, 255, 255, 0xffff, 7);
	KUNIT_EXPECT_EQ(test, c.send_credits, 7);
	KUNIT_EXPECT_EQ(test, c.recv_credit_target, 255);

	cred_setup(&c, 16, 255, 0, 7);
	KUNIT_EXPECT_EQ(test, c.recv_credit_target, 1);
}

/* [MS-SMBD] 3.1.5.9: fill to the target, never beyond the maximum. */
static void smbd_cred_refill(struct kunit *test)
{
	struct smbd_credits c;

	cred_setup(&c, 255, 255, 10, 5);
	KUNIT_EXPECT_EQ(test, smbd_cred_recv_wanted(&c, false), 10);
	smbd_cred_recv_posted(&c, 4);
	KUNIT_EXPECT_EQ(test, smbd_cred_recv_wanted(&c, false), 6);
	smbd_cred_recv_posted(&c, 6);
	KUNIT_EXPECT_EQ(test, smbd_cred_recv_wanted(&c, false), 0);
	KUNIT_EXPECT_EQ(test, smbd_cred_ungranted(&c), 10);

	cred_setup(&c, 8, 255, 200, 5);
	KUNIT_EXPECT_EQ(test, smbd_cred_recv_wanted(&c, false), 8);
}

/* Grants never exceed receives posted (CR-05), and each goes out once. */
static void smbd_cred_grant_only_posted(struct kunit *test)
{
	struct smbd_credits c;
	u16 g = 0xffff;

	cred_setup(&c, 255, 255, 10, 5);
	KUNIT_EXPECT_EQ(test, smbd_cred_send_begin(&c, &g), SMBD_CRED_SEND);
	KUNIT_EXPECT_EQ(test, g, 0);
	smbd_cred_recv_posted(&c, 3);
	KUNIT_EXPECT_EQ(test, smbd_cred_send_begin(&c, &g), SMBD_CRED_SEND);
	KUNIT_EXPECT_EQ(test, g, 3);
	KUNIT_EXPECT_EQ(test, smbd_cred_send_begin(&c, &g), SMBD_CRED_SEND);
	KUNIT_EXPECT_EQ(test, g, 0);
	KUNIT_EXPECT_EQ(test, c.recv_granted, 3);
	KUNIT_EXPECT_EQ(test, c.send_credits, 2);

	/* The responder's Negotiate Response grants what it posted. */
	cred_setup(&c, 255, 255, 10, 0);
	smbd_cred_recv_posted(&c, smbd_cred_recv_wanted(&c, false));
	KUNIT_EXPECT_EQ(test, smbd_cred_take_grant(&c), 10);
	KUNIT_EXPECT_EQ(test, smbd_cred_take_grant(&c), 0);
}

/* [MS-SMBD] 3.1.5.1: no credit, no message; the last credit must grant. */
struct last_case {
	const char *name;
	u16 send_credits, posted, granted;
	enum smbd_cred_verdict want;
	u16 want_grant;
};

static const struct last_case last_cases[] = {
	{ "no credits", 0, 5, 0, SMBD_CRED_NO_CREDITS, 0 },
	{ "no credits, nothing posted", 0, 0, 0, SMBD_CRED_NO_CREDITS, 0 },
	{ "last credit, nothing to grant", 1, 5, 5, SMBD_CRED_LAST_CREDIT, 0 },
	{ "last credit, nothing posted", 1, 0, 0, SMBD_CRED_LAST_CREDIT, 0 },
	{ "last credit, one to grant", 1, 5, 4, SMBD_CRED_SEND, 1 },
	{ "two credits, nothing to grant", 2, 5, 5, SMBD_CRED_SEND, 0 },
	{ "many credits, all to grant", 100, 9, 0, SMBD_CRED_SEND, 9 },
};

KUNIT_ARRAY_PARAM_DESC(last, last_cases, name);

static void smbd_cred_last_credit(struct kunit *test)
{
	const struct last_case *lc = test->param_value;
	struct smbd_credits c;
	u16 g = 0xffff;

	cred_setup(&c, 255, 255, 255, lc->send_credits);
	c.recv_posted = lc->posted;
	c.recv_granted = lc->granted;
	/* The senders' wait condition agrees with the verdict. */
	KUNIT_EXPECT_EQ(test, smbd_cred_can_send(&c, false),
			lc->want == SMBD_CRED_SEND);
	KUNIT_ASSERT_EQ(test, smbd_cred_send_begin(&c, &g), lc->want);
	if (lc->want == SMBD_CRED_SEND) {
		KUNIT_EXPECT_EQ(test, g, lc->want_grant);
		KUNIT_EXPECT_EQ(test, c.send_credits, lc->send_credits - 1);
		KUNIT_EXPECT_EQ(test, c.recv_granted, lc->posted);
	} else {
		KUNIT_EXPECT_EQ(test, g, 0xffff);
		KUNIT_EXPECT_EQ(test, c.send_credits, lc->send_credits);
		KUNIT_EXPECT_EQ(test, c.recv_granted, lc->granted);
	}
}

/*
 * [MS-SMBD] 3.1.5.8: an empty message goes only to grant credits or to
 * answer RESPONSE_REQUESTED; 3.1.6.2: or to carry our own keep-alive
 * (@answer stands for both). A sender that decided on one too late,
 * after another message took every grant, finds nothing due: it sends
 * nothing and spends no credit. Otherwise the rules of any message hold,
 * the last credit's (3.1.5.1) among them.
 */
struct empty_case {
	const char *name;
	u16 send_credits, posted, granted;
	bool answer;
	enum smbd_cred_verdict want;
	u16 want_grant;
};

static const struct empty_case empty_cases[] = {
	{ "nothing due", 5, 10, 10, false, SMBD_CRED_NOTHING_DUE, 0 },
	{ "nothing due, last credit", 1, 10, 10, false,
	  SMBD_CRED_NOTHING_DUE, 0 },
	{ "nothing due, no credits", 0, 10, 10, false,
	  SMBD_CRED_NOTHING_DUE, 0 },
	{ "receives to grant", 5, 10, 7, false, SMBD_CRED_SEND, 3 },
	{ "an answer, nothing to grant", 5, 10, 10, true, SMBD_CRED_SEND, 0 },
	{ "an answer and a grant", 5, 10, 7, true, SMBD_CRED_SEND, 3 },
	{ "last credit, an answer, nothing to grant", 1, 10, 10, true,
	  SMBD_CRED_LAST_CREDIT, 0 },
	{ "last credit, one to grant", 1, 10, 9, false, SMBD_CRED_SEND, 1 },
	{ "no credits, one to grant", 0, 10, 9, false, SMBD_CRED_NO_CREDITS, 0 },
};

KUNIT_ARRAY_PARAM_DESC(empty, empty_cases, name);

static void smbd_cred_empty_message(struct kunit *test)
{
	const struct empty_case *ec = test->param_value;
	struct smbd_credits c;
	u16 g = 0xffff;

	cred_setup(&c, 255, 255, 255, ec->send_credits);
	c.recv_posted = ec->posted;
	c.recv_granted = ec->granted;
	KUNIT_ASSERT_EQ(test, smbd_cred_empty_begin(&c, ec->answer, &g),
			ec->want);
	KUNIT_EXPECT_EQ(test, c.recv_posted, ec->posted);
	if (ec->want == SMBD_CRED_SEND) {
		KUNIT_EXPECT_EQ(test, g, ec->want_grant);
		KUNIT_EXPECT_EQ(test, c.send_credits, ec->send_credits - 1);
		KUNIT_EXPECT_EQ(test, c.recv_granted, ec->posted);
	} else {
		/* Nothing sent: no credit spent, nothing granted. */
		KUNIT_EXPECT_EQ(test, g, 0xffff);
		KUNIT_EXPECT_EQ(test, c.send_credits, ec->send_credits);
		KUNIT_EXPECT_EQ(test, c.recv_granted, ec->granted);
	}
}

/*
 * [MS-SMBD] 3.1.5.9: with the last credit held back, one more receive is
 * wanted beyond the target, so the waiting message can grant it; but not
 * beyond ReceiveCreditMax, and not when a grant is already pending.
 */
static void smbd_cred_last_credit_posts_one(struct kunit *test)
{
	struct smbd_credits c;
	u16 g;

	cred_setup(&c, 20, 255, 10, 1);
	c.recv_posted = 10;
	c.recv_granted = 10;
	KUNIT_EXPECT_EQ(test, smbd_cred_send_begin(&c, &g), SMBD_CRED_LAST_CREDIT);
	KUNIT_EXPECT_EQ(test, smbd_cred_recv_wanted(&c, false), 0);
	KUNIT_ASSERT_EQ(test, smbd_cred_recv_wanted(&c, true), 1);
	/* A waiting sender may go once it can post that receive. */
	KUNIT_EXPECT_FALSE(test, smbd_cred_can_send(&c, false));
	KUNIT_EXPECT_TRUE(test, smbd_cred_can_send(&c, true));
	smbd_cred_recv_posted(&c, 1);
	KUNIT_EXPECT_TRUE(test, smbd_cred_can_send(&c, false));
	KUNIT_EXPECT_EQ(test, smbd_cred_recv_wanted(&c, true), 0);
	KUNIT_EXPECT_EQ(test, smbd_cred_send_begin(&c, &g), SMBD_CRED_SEND);
	KUNIT_EXPECT_EQ(test, g, 1);
	KUNIT_EXPECT_EQ(test, c.send_credits, 0);

	/* At ReceiveCreditMax nothing more can be posted: wait for a grant. */
	cred_setup(&c, 10, 255, 10, 1);
	c.recv_posted = 10;
	c.recv_granted = 10;
	KUNIT_EXPECT_EQ(test, smbd_cred_recv_wanted(&c, true), 0);
	KUNIT_EXPECT_FALSE(test, smbd_cred_can_send(&c, true));
	c.send_credits = 0;
	c.recv_granted = 9;
	KUNIT_EXPECT_FALSE(test, smbd_cred_can_send(&c, true));
}

/* [MS-SMBD] 3.1.5.8: a received message spends a credit and may grant. */
static void smbd_cred_receive(struct kunit *test)
{
	struct smbd_data_hdr h = { .credits_requested = 300, .credits_granted = 4 };
	struct smbd_credits c;

	cred_setup(&c, 255, 255, 10, 1);
	/* Nothing granted yet: the peer cannot hold a credit. */
	KUNIT_EXPECT_EQ(test, smbd_cred_on_recv(&c, &h), SMBD_RX_ERR_CREDIT_OVERRUN);
	KUNIT_EXPECT_EQ(test, c.send_credits, 1);

	smbd_cred_recv_posted(&c, 2);
	smbd_cred_take_grant(&c);
	KUNIT_EXPECT_EQ(test, smbd_cred_on_recv(&c, &h), SMBD_RX_OK);
	KUNIT_EXPECT_EQ(test, c.send_credits, 5);
	KUNIT_EXPECT_EQ(test, c.recv_posted, 1);
	KUNIT_EXPECT_EQ(test, c.recv_granted, 1);
	/* CreditsRequested 300 is capped at our ReceiveCreditMax. */
	KUNIT_EXPECT_EQ(test, c.recv_credit_target, 255);

	h.credits_requested = 3;
	h.credits_granted = 0xffff;
	KUNIT_EXPECT_EQ(test, smbd_cred_on_recv(&c, &h), SMBD_RX_OK);
	KUNIT_EXPECT_EQ(test, c.recv_credit_target, 3);
	KUNIT_EXPECT_EQ(test, c.send_credits, SMBD_MAX_CREDITS);
	/* The second message used the last credit we had granted. */
	KUNIT_EXPECT_EQ(test, smbd_cred_on_recv(&c, &h), SMBD_RX_ERR_CREDIT_OVERRUN);
}

/* When a credit-only message is due: the peer is down to a quarter. */
static void smbd_cred_grant_batching(struct kunit *test)
{
	struct smbd_credits c;

	cred_setup(&c, 255, 255, 255, 10);
	c.recv_posted = 255;
	c.recv_granted = 64;
	KUNIT_EXPECT_FALSE(test, smbd_cred_grant_due(&c));
	c.recv_granted = 63;
	KUNIT_EXPECT_TRUE(test, smbd_cred_grant_due(&c));
	c.recv_posted = 63;
	KUNIT_EXPECT_FALSE(test, smbd_cred_grant_due(&c));

	/* A single credit: due as soon as the peer holds none. */
	cred_setup(&c, 1, 1, 1, 1);
	c.recv_posted = 1;
	c.recv_granted = 1;
	KUNIT_EXPECT_FALSE(test, smbd_cred_grant_due(&c));
	c.recv_granted = 0;
	KUNIT_EXPECT_TRUE(test, smbd_cred_grant_due(&c));
}

/*
 * [MS-SMBD] 3.1.5.9: a receive flushed or failed is posted no more, and
 * no credit may stand for it; the counts never wrap.
 */
static void smbd_cred_lost_receive(struct kunit *test)
{
	struct smbd_credits c;

	cred_setup(&c, 255, 255, 10, 1);
	smbd_cred_recv_posted(&c, 3);
	smbd_cred_take_grant(&c);
	smbd_cred_recv_lost(&c);
	KUNIT_EXPECT_EQ(test, c.recv_posted, 2);
	KUNIT_EXPECT_EQ(test, c.recv_granted, 2);
	KUNIT_EXPECT_EQ(test, smbd_cred_ungranted(&c), 0);

	/* One still ungranted: the lost one is taken from the posted. */
	smbd_cred_recv_posted(&c, 1);
	smbd_cred_recv_lost(&c);
	KUNIT_EXPECT_EQ(test, c.recv_posted, 2);
	KUNIT_EXPECT_EQ(test, c.recv_granted, 2);

	smbd_cred_recv_lost(&c);
	smbd_cred_recv_lost(&c);
	KUNIT_EXPECT_EQ(test, c.recv_posted, 0);
	KUNIT_EXPECT_EQ(test, c.recv_granted, 0);
	/* More completions in error than receives counted (the negotiate one). */
	smbd_cred_recv_lost(&c);
	KUNIT_EXPECT_EQ(test, c.recv_posted, 0);
	KUNIT_EXPECT_EQ(test, c.recv_granted, 0);
	KUNIT_EXPECT_EQ(test, smbd_cred_ungranted(&c), 0);
	KUNIT_EXPECT_EQ(test, smbd_cred_take_grant(&c), 0);
}

/*
 * The receive path's other questions: when receives run short (the
 * reader is woken for part of a message), when an empty message is due
 * (a grant, or a keep-alive answer, 3.1.5.8, 3.1.6.2), and what every
 * message requests (3.1.5.1: the negotiated Send Credit target).
 */
static void smbd_cred_recv_questions(struct kunit *test)
{
	struct smbd_credits c;

	cred_setup(&c, 255, 17, 255, 1);
	KUNIT_EXPECT_EQ(test, smbd_cred_requested(&c), 17);
	KUNIT_EXPECT_TRUE(test, smbd_cred_recv_short(&c, 0));
	smbd_cred_recv_posted(&c, 16);
	KUNIT_EXPECT_TRUE(test, smbd_cred_recv_short(&c, 16));
	KUNIT_EXPECT_FALSE(test, smbd_cred_recv_short(&c, 15));

	/* Nothing ungranted: only an answer makes an empty message due. */
	smbd_cred_take_grant(&c);
	KUNIT_EXPECT_FALSE(test, smbd_cred_grant_due(&c));
	KUNIT_EXPECT_FALSE(test, smbd_cred_empty_due(&c, false));
	KUNIT_EXPECT_TRUE(test, smbd_cred_empty_due(&c, true));
	/* The peer used its credits down to a quarter: a grant is due. */
	c.recv_granted = 255 / 4;
	c.recv_posted = 255 / 4 + 1;
	KUNIT_EXPECT_TRUE(test, smbd_cred_empty_due(&c, false));
	KUNIT_EXPECT_EQ(test, smbd_cred_requested(&c), 17);
}

/* ---- two peers ---- */

#define SIM_RING 1024

struct sim_side {
	struct smbd_credits c;
	struct smbd_data_hdr *ring;	/* messages in flight to this side */
	unsigned int head, tail;
	u32 to_send, delivered, msgs_sent;
};

struct sim_case {
	const char *name;
	u16 max_a, target_a, max_b, target_b;
	u32 msgs_a, msgs_b;
	u32 seed;
};

static const struct sim_case sim_cases[] = {
	{ "single credit both ways", 1, 1, 1, 1, 200, 200, 1 },
	{ "single credit, one talker", 1, 1, 1, 1, 300, 0, 2 },
	{ "single credit, other talker", 1, 1, 1, 1, 0, 300, 3 },
	{ "defaults both ways", 255, 255, 255, 255, 3000, 3000, 4 },
	{ "defaults, bulk one way", 255, 255, 255, 255, 5000, 0, 5 },
	{ "small receive side", 255, 255, 2, 2, 1000, 1000, 6 },
	{ "asymmetric targets", 3, 1, 1, 3, 500, 500, 7 },
	{ "windows-like", 255, 255, 255, 10, 2000, 100, 8 },
};

KUNIT_ARRAY_PARAM_DESC(sim, sim_cases, name);

static bool sim_push(struct kunit *test, struct sim_side *to,
		     const struct smbd_data_hdr *h)
{
	KUNIT_ASSERT_LT(test, to->tail - to->head, SIM_RING);
	to->ring[to->tail++ % SIM_RING] = *h;
	return true;
}

/* One turn of a side: maybe receive, repost, maybe send. */
static bool sim_turn(struct kunit *test, struct sim_side *s,
		     struct sim_side *peer, struct rnd_state *rnd)
{
	struct smbd_data_hdr h = { 0 };
	bool progress = false;
	u16 n, g;

	if (s->head != s->tail && prandom_u32_state(rnd) % 4) {
		h = s->ring[s->head++ % SIM_RING];
		KUNIT_ASSERT_EQ(test, smbd_cred_on_recv(&s->c, &h), SMBD_RX_OK);
		s->delivered += h.data_length;
		progress = true;
	}

	n = smbd_cred_recv_wanted(&s->c, s->to_send > 0);
	if (n) {
		smbd_cred_recv_posted(&s->c, n);
		progress = true;
	}
	KUNIT_ASSERT_LE(test, s->c.recv_granted, s->c.recv_posted);
	KUNIT_ASSERT_LE(test, s->c.recv_posted, s->c.recv_credit_max);

	if (!s->to_send && !smbd_cred_empty_due(&s->c, false))
		return progress;
	if (smbd_cred_send_begin(&s->c, &g) != SMBD_CRED_SEND)
		return progress;

	h.credits_requested = smbd_cred_requested(&s->c);
	h.credits_granted = g;
	h.data_length = s->to_send ? 1 : 0;
	s->to_send -= h.data_length;
	s->msgs_sent++;
	return sim_push(test, peer, &h);
}

static void smbd_cred_two_peers(struct kunit *test)
{
	const struct sim_case *sc = test->param_value;
	struct sim_side *a, *b;
	struct rnd_state rnd;
	unsigned int idle = 0;
	u32 turns;

	a = kunit_kzalloc(test, sizeof(*a), GFP_KERNEL);
	b = kunit_kzalloc(test, sizeof(*b), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, a);
	KUNIT_ASSERT_NOT_NULL(test, b);
	a->ring = kunit_kcalloc(test, SIM_RING, sizeof(*a->ring), GFP_KERNEL);
	b->ring = kunit_kcalloc(test, SIM_RING, sizeof(*b->ring), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, a->ring);
	KUNIT_ASSERT_NOT_NULL(test, b->ring);
	prandom_seed_state(&rnd, sc->seed);

	/* Negotiation: B (responder) posts and grants in its response. */
	cred_setup(&b->c, sc->max_b, sc->target_b, sc->target_a, 0);
	smbd_cred_recv_posted(&b->c, smbd_cred_recv_wanted(&b->c, false));
	cred_setup(&a->c, sc->max_a, sc->target_a, sc->target_b,
		   smbd_cred_take_grant(&b->c));
	KUNIT_ASSERT_GT(test, a->c.send_credits, 0);
	a->to_send = sc->msgs_a;
	b->to_send = sc->msgs_b;

	for (turns = 0; turns < 1000000; turns++) {
		bool pa = false, pb = false;

		if (prandom_u32_state(&rnd) & 1)
			pa = sim_turn(test, a, b, &rnd);
		else
			pb = sim_turn(test, b, a, &rnd);
		if (!a->to_send && !b->to_send &&
		    a->head == a->tail && b->head == b->tail)
			break;
		idle = (pa || pb) ? 0 : idle + 1;
		/* Many turns in a row with nothing moving: deadlock. */
		KUNIT_ASSERT_LT_MSG(test, idle, 200U,
				    "deadlock: a %u/%u left, b %u/%u left",
				    a->to_send, a->c.send_credits,
				    b->to_send, b->c.send_credits);
	}
	KUNIT_EXPECT_EQ(test, b->delivered, sc->msgs_a);
	KUNIT_EXPECT_EQ(test, a->delivered, sc->msgs_b);
	kunit_info(test, "%u turns, %u+%u messages for %u+%u payloads",
		   turns, a->msgs_sent, b->msgs_sent, sc->msgs_a, sc->msgs_b);
}

static struct kunit_case smbd_credits_cases[] = {
	KUNIT_CASE(smbd_cred_initial),
	KUNIT_CASE(smbd_cred_refill),
	KUNIT_CASE(smbd_cred_grant_only_posted),
	KUNIT_CASE_PARAM(smbd_cred_last_credit, last_gen_params),
	KUNIT_CASE_PARAM(smbd_cred_empty_message, empty_gen_params),
	KUNIT_CASE(smbd_cred_last_credit_posts_one),
	KUNIT_CASE(smbd_cred_receive),
	KUNIT_CASE(smbd_cred_grant_batching),
	KUNIT_CASE(smbd_cred_lost_receive),
	KUNIT_CASE(smbd_cred_recv_questions),
	KUNIT_CASE_PARAM(smbd_cred_two_peers, sim_gen_params),
	{}
};

static struct kunit_suite smbd_credits_suite = {
	.name = "smbd_credits",
	.test_cases = smbd_credits_cases,
};

kunit_test_suites(&smbd_credits_suite);

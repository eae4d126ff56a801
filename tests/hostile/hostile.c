// SPDX-License-Identifier: GPL-2.0
/*
 * smbd_hostile.ko: a hostile SMB Direct peer speaking raw verbs, in both
 * roles, that feeds smbd mutated traffic and checks smbd's health as it
 * goes. It builds and parses every message itself, by byte offset
 * ([MS-SMBD] 2.2), and shares no code with smbd's encoder, decoder or
 * checks; smbd's side runs through the public API (include/smbd.h).
 *
 *   echo "server|client|cifs|cifs-close <ip> <port> <seed> <msgs> <fatal>" > ctl
 *   cat result
 *
 * in /sys/kernel/debug/smbd_hostile0 and smbd_hostile1: two lanes, each
 * running one command at a time, so that two runs can go at once.
 *
 * server: the hostile peer listens, smbd connects (smbd is the initiator)
 * client: smbd listens, the hostile peer connects (smbd is the responder)
 * cifs: the hostile peer listens for cifs on smbd, which the guest plan
 *	mounts in a loop; <msgs> is the connections to serve, <fatal> the
 *	most seconds to serve them (h_cifs())
 * cifs-close: as cifs, but every connection is closed once its Negotiate
 *	Request came, unanswered (for the stock cifs: its mount must end)
 *
 * Each run: the negotiation message at, below and above its limits;
 * named malformed Data Transfer messages; <msgs> legal mutations in bulk
 * (payloads, padding and Reserved garbage, credit values, fragmentation,
 * empty credit-only messages, boundary sizes, stalls), each message
 * delivered byte for byte; random header mutations (bit flips, boundary
 * values, truncation, extension) until <fatal> messages in all ended
 * the connection; keep-alive storms; credit starvation; (client) a flood of
 * connections that never negotiate. A fresh connection after every
 * fatal message must negotiate and echo data both ways. Every message
 * smbd sends is checked: sizes, credits, Reserved and Padding zero.
 * Then, each on a connection of its own, two findings of the reliability
 * audit and issue 40: a sender at its last Send Credit woken by a receive
 * reposted (last-credit-wake), a peer with few credits sending a message
 * in one-byte segments (few-credits-small-segments), that peer as
 * Microsoft's MS-SMBD test suite has it, which at no credit reads one
 * message and needs it to grant (few-credits-sdk, few-credits-sdk-stream),
 * and RDMA Writes with Immediate refused (on RoCE; the sockets they ended
 * are kept until unload, for the guest plan to read the reason of the
 * refusal in smbd's debugfs).
 * Result lines: "ok NAME", "not ok NAME - why", "info ...".
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/inet.h>
#include <linux/jiffies.h>
#include <linux/list.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/uio.h>
#include <linux/unaligned.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>

#include "smbd.h"
#include "../include/smbd_testctl.h"
#include "../include/smbd_tpeer.h"

/* ---- the wire, by byte offset ([MS-SMBD] 2.2) ---- */

/* Data Transfer message, 2.2.3: 20-byte header, payload usually at 24 */
#define DT_CREDITS_REQ		0
#define DT_CREDITS_GRANTED	2
#define DT_FLAGS		4
#define DT_RESERVED		6
#define DT_REMAINING		8
#define DT_DATA_OFFSET		12
#define DT_DATA_LENGTH		16
#define DT_HDR_LEN		20
#define DT_PAYLOAD		24
#define DT_RESPONSE_REQUESTED	0x0001

/* Negotiate Request, 2.2.1 */
#define NQ_MIN_VERSION		0
#define NQ_MAX_VERSION		2
#define NQ_RESERVED		4
#define NQ_CREDITS_REQ		6
#define NQ_PREF_SEND		8
#define NQ_MAX_RECV		12
#define NQ_MAX_FRAG		16
#define NQ_LEN			20

/* Negotiate Response, 2.2.2 */
#define NP_MIN_VERSION		0
#define NP_MAX_VERSION		2
#define NP_NEG_VERSION		4
#define NP_RESERVED		6
#define NP_CREDITS_REQ		8
#define NP_CREDITS_GRANTED	10
#define NP_STATUS		12
#define NP_MAX_RW		16
#define NP_PREF_SEND		20
#define NP_MAX_RECV		24
#define NP_MAX_FRAG		28
#define NP_LEN			32

#define V1			0x0100
#define ST_NOT_SUPPORTED	0xC00000BB
#define MIN_RECV		128
#define MIN_FRAG		131072

/* ---- the hostile peer's resources ---- */

#define H_NR_RX		64	/* receives posted: the credits we grant */
#define H_NR_TX		16	/* sends in flight */
#define H_BUF		4096	/* each buffer: room for oversize messages */
#define H_RECV		1364	/* MaxReceiveSize we announce by default */
#define H_FRAG		(1024 * 1024)
#define H_MSG_MAX	8192	/* largest upper-layer message we move */
#define OUT_MAX		(64 * 1024)

/* Messages smbd sent us, reassembled. */
struct hmsg {
	struct list_head node;
	u32 len;
	u8 data[];
};

/* What smbd did wrong on the wire, over a run. */
struct hwire {
	u64 msgs;		/* Data Transfer messages from smbd */
	u64 data_msgs;		/* of them, with a payload: padding checked */
	u64 pad_bad, rsvd_bad, size_bad, hdr_bad, credit_bad;
	char pad_why[96], rsvd_why[64], size_why[64], hdr_why[96];
	char credit_why[64];
};

struct hconn {
	struct tpeer p;		/* first: the library allocates us */
	/* protocol state, test thread only */
	bool negotiated;
	u8 neg[NQ_LEN + NP_LEN];	/* the negotiation message received */
	u32 neg_len;
	bool neg_got;
	u32 send_credits;	/* smbd granted us */
	u32 peer_credits;	/* we granted smbd, not used yet */
	u32 to_grant;		/* receives reposted, not granted yet */
	u32 max_send;		/* smbd's MaxReceiveSize: our largest message */
	u32 max_recv;		/* what we announced */
	bool need_reply;	/* smbd asked for a keep-alive answer */
	u64 ka_asked;		/* smbd's messages asking for a response */
	u8 *asm_buf;
	u32 asm_len, asm_rem;
	bool asm_active;
	struct list_head inbox;	/* struct hmsg */
	u64 got;		/* messages smbd sent us since the last look */
	struct hwire *w;
};

/* ---- PRNG: xorshift64, seeded per run ---- */

static u64 rnd(u64 *s)
{
	u64 x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*s = x;
	return x;
}

static u32 below(u64 *s, u32 n)
{
	return n ? (u32)((rnd(s) >> 16) % n) : 0;
}

static bool chance(u64 *s, u32 one_in)
{
	return below(s, one_in) == 0;
}

/* ---- the raw-verbs peer: tests/include/smbd_tpeer.h ---- */

static const struct tpeer_cfg h_cfg = {
	.nr_rx = H_NR_RX, .nr_post = H_NR_RX, .nr_tx = H_NR_TX,
	.buf_size = H_BUF,
	/* Finite: a send beyond smbd's receives fails instead of hanging. */
	.rnr_retry = 3,
	.size = sizeof(struct hconn),
};

/* tpeer_alloc() makes the struct tpeer at the start of ours. */
static_assert(offsetof(struct hconn, p) == 0);

/* The protocol state of @t, a new connection; NULL (@t freed) on failure. */
static struct hconn *h_init(struct tpeer *t, struct hwire *w)
{
	struct hconn *c = container_of(t, struct hconn, p);

	if (!t)
		return NULL;
	c->w = w;
	INIT_LIST_HEAD(&c->inbox);
	c->max_recv = H_RECV;
	c->to_grant = H_NR_RX;
	c->asm_buf = kmalloc(H_MSG_MAX * 2, GFP_KERNEL);
	if (!c->asm_buf) {
		tpeer_destroy(t);
		return NULL;
	}
	return c;
}

static struct hconn *h_alloc(struct hwire *w)
{
	return h_init(tpeer_alloc(&h_cfg), w);
}

static struct hconn *h_take(struct tpeer_listener *l, struct hwire *w,
			    unsigned int ms)
{
	return h_init(tpeer_take(l, ms), w);
}

static void h_inbox_free(struct hconn *c)
{
	struct hmsg *m, *t;

	list_for_each_entry_safe(m, t, &c->inbox, node) {
		list_del(&m->node);
		kfree(m);
	}
}

static void h_destroy(struct hconn *c)
{
	if (!c)
		return;
	h_inbox_free(c);
	kfree(c->asm_buf);
	tpeer_destroy(&c->p);
}

/* ---- what smbd sends: every message checked ---- */

static void h_note(u64 *count, char *why, size_t size, const char *fmt, ...)
	__printf(4, 5);
static void h_note(u64 *count, char *why, size_t size, const char *fmt, ...)
{
	va_list ap;

	if (!(*count)++) {
		va_start(ap, fmt);
		vscnprintf(why, size, fmt, ap);
		va_end(ap);
	}
}

static void h_deliver(struct hconn *c)
{
	struct hmsg *m = kmalloc(sizeof(*m) + c->asm_len, GFP_KERNEL);

	if (!m)
		return;
	m->len = c->asm_len;
	memcpy(m->data, c->asm_buf, c->asm_len);
	list_add_tail(&m->node, &c->inbox);
}

/* One Data Transfer message from smbd: our own checks of 2.2.3/3.1.5.4. */
static void h_rx_data(struct hconn *c, const u8 *b, u32 len)
{
	struct hwire *w = c->w;
	u16 creq, cgr, flags, rsvd;
	u32 rem, off, dlen, i;

	w->msgs++;
	c->got++;
	if (len > c->max_recv)
		h_note(&w->size_bad, w->size_why, sizeof(w->size_why),
		       "%u-byte message, we take %u", len, c->max_recv);
	if (!c->peer_credits)
		h_note(&w->credit_bad, w->credit_why, sizeof(w->credit_why),
		       "message %llu sent without a credit", w->msgs);
	else
		c->peer_credits--;
	if (len < DT_HDR_LEN) {
		h_note(&w->hdr_bad, w->hdr_why, sizeof(w->hdr_why),
		       "%u-byte message", len);
		return;
	}
	creq = get_unaligned_le16(b + DT_CREDITS_REQ);
	cgr = get_unaligned_le16(b + DT_CREDITS_GRANTED);
	flags = get_unaligned_le16(b + DT_FLAGS);
	rsvd = get_unaligned_le16(b + DT_RESERVED);
	rem = get_unaligned_le32(b + DT_REMAINING);
	off = get_unaligned_le32(b + DT_DATA_OFFSET);
	dlen = get_unaligned_le32(b + DT_DATA_LENGTH);

	if (rsvd)
		h_note(&w->rsvd_bad, w->rsvd_why, sizeof(w->rsvd_why),
		       "Reserved 0x%04x in message %llu", rsvd, w->msgs);
	if (!creq || (flags & ~DT_RESPONSE_REQUESTED) || (!dlen && off) ||
	    (dlen && (off % 8 || off < DT_HDR_LEN || (u64)off + dlen > len)) ||
	    (u64)dlen + rem > H_FRAG) {
		h_note(&w->hdr_bad, w->hdr_why, sizeof(w->hdr_why),
		       "creq %u flags 0x%x off %u len %u rem %u in %u bytes",
		       creq, flags, off, dlen, rem, len);
		return;
	}
	c->send_credits = min_t(u32, c->send_credits + cgr, U16_MAX);
	if (flags & DT_RESPONSE_REQUESTED) {
		c->need_reply = true;
		c->ka_asked++;
	}
	if (dlen) {
		w->data_msgs++;
		for (i = DT_HDR_LEN; i < off; i++) {
			if (b[i]) {
				h_note(&w->pad_bad, w->pad_why,
				       sizeof(w->pad_why),
				       "byte %u is 0x%02x (%*phN) in message %llu",
				       i, b[i], (int)(off - DT_HDR_LEN),
				       b + DT_HDR_LEN, w->msgs);
				break;
			}
		}
	}
	if (!dlen && !rem)
		return;		/* credits or a keep-alive only */
	if (!c->asm_active) {
		c->asm_len = 0;
		c->asm_rem = rem;
	} else if (dlen > c->asm_rem || rem != c->asm_rem - dlen) {
		h_note(&w->hdr_bad, w->hdr_why, sizeof(w->hdr_why),
		       "fragment of %u says %u remain, %u expected",
		       dlen, rem, c->asm_rem - dlen);
		c->asm_active = false;
		return;
	}
	if (c->asm_len + dlen > H_MSG_MAX * 2) {
		h_note(&w->hdr_bad, w->hdr_why, sizeof(w->hdr_why),
		       "message above %u bytes", H_MSG_MAX * 2);
		c->asm_active = false;
		return;
	}
	memcpy(c->asm_buf + c->asm_len, b + off, dlen);
	c->asm_len += dlen;
	c->asm_rem = rem;
	c->asm_active = rem != 0;
	if (!rem)
		h_deliver(c);
}

/* Look at one message that arrived and post its buffer again. */
static void h_rx(struct hconn *c, struct tpeer_rx *rx)
{
	if (!c->negotiated) {
		if (!c->neg_got) {
			c->neg_len = min_t(u32, rx->len, sizeof(c->neg));
			memcpy(c->neg, rx->buf, c->neg_len);
			c->neg_len = rx->len;
			c->neg_got = true;
		}
	} else {
		h_rx_data(c, rx->buf, rx->len);
	}
	if (!READ_ONCE(c->p.disc) && !tpeer_post_recv(&c->p, rx))
		c->to_grant++;
}

/* Look at everything that arrived, in order. */
static void h_poll(struct hconn *c)
{
	struct tpeer_rx *rx;

	while ((rx = tpeer_next(&c->p)))
		h_rx(c, rx);
}

/* Wait up to @ms for a message (see tpeer_wait_rx()) and look at it. */
static void h_wait_msg(struct hconn *c, unsigned int ms)
{
	tpeer_wait_rx(&c->p, ms);
	h_poll(c);
}

/* ---- building our Data Transfer messages ---- */

struct hdt {
	u16 creq, cgrant, flags, rsvd;
	u32 remaining, doff, dlen;
	u32 wire_len;
	u8 fill;		/* padding and trailing bytes */
	bool grant_set;		/* cgrant chosen, not "all we have" */
};

static void h_dt_default(struct hdt *d, u32 dlen, u32 remaining)
{
	memset(d, 0, sizeof(*d));
	d->creq = H_NR_RX;
	d->remaining = remaining;
	d->doff = dlen ? DT_PAYLOAD : 0;
	d->dlen = dlen;
	d->wire_len = dlen ? DT_PAYLOAD + dlen : DT_HDR_LEN;
}

static void h_dt_write(u8 *b, const struct hdt *d, const u8 *payload)
{
	u32 n;

	put_unaligned_le16(d->creq, b + DT_CREDITS_REQ);
	put_unaligned_le16(d->cgrant, b + DT_CREDITS_GRANTED);
	put_unaligned_le16(d->flags, b + DT_FLAGS);
	put_unaligned_le16(d->rsvd, b + DT_RESERVED);
	put_unaligned_le32(d->remaining, b + DT_REMAINING);
	put_unaligned_le32(d->doff, b + DT_DATA_OFFSET);
	put_unaligned_le32(d->dlen, b + DT_DATA_LENGTH);
	n = min_t(u32, d->wire_len, H_BUF);
	if (n > DT_HDR_LEN)
		memset(b + DT_HDR_LEN, d->fill, n - DT_HDR_LEN);
	if (payload && d->doff < H_BUF) {
		n = min_t(u32, d->dlen, H_BUF - d->doff);
		memcpy(b + d->doff, payload, n);
	}
}

/*
 * Wait until we hold a Send Credit (the last one too: smbd grants what it
 * granted, whether or not our message grants back). @drain runs while we
 * wait so that smbd's reader frees receives and smbd grants again.
 */
struct hside;
static int hs_drain(struct hside *s, bool wait);

static int h_credit(struct hconn *c, struct hside *s)
{
	unsigned long end = jiffies + 5 * HZ;

	for (;;) {
		h_poll(c);
		if (c->send_credits)
			return 0;
		if (READ_ONCE(c->p.disc))
			return -ENOTCONN;
		if (time_after(jiffies, end))
			return -ETIMEDOUT;
		if (s)
			hs_drain(s, false);
		wait_event_timeout(c->p.wait, !list_empty_careful(&c->p.ready) ||
				   READ_ONCE(c->p.disc), msecs_to_jiffies(5));
	}
}

/*
 * Post one Data Transfer message built from @d and @payload, looking at
 * nothing that arrived: h_send_dt() without its wait, for a caller that
 * holds a credit or sends beyond them on purpose. Grants what we have
 * reposted unless @d chose its grant.
 */
static int h_post_dt(struct hconn *c, struct hdt *d, const u8 *payload)
{
	struct tpeer_tx *tx;
	int ret;

	if (!d->grant_set)
		d->cgrant = min_t(u32, c->to_grant, U16_MAX);
	tx = tpeer_tx_slot(&c->p);
	if (!tx)
		return -ETIMEDOUT;
	h_dt_write(tx->buf, d, payload);
	ret = tpeer_post(&c->p, tx, min_t(u32, d->wire_len, H_BUF));
	if (ret)
		return ret;
	if (c->send_credits)
		c->send_credits--;
	c->to_grant -= min_t(u32, d->cgrant, c->to_grant);
	c->peer_credits += d->cgrant;
	c->need_reply = false;
	return 0;
}

/*
 * Send one Data Transfer message built from @d and @payload. Grants what
 * we have reposted unless @d chose its grant; needs a credit unless
 * @force (a send beyond credits, on purpose).
 */
static int h_send_dt(struct hconn *c, struct hside *s, struct hdt *d,
		     const u8 *payload, bool force)
{
	int ret;

	if (!force) {
		ret = h_credit(c, s);
		if (ret)
			return ret;
	} else {
		h_poll(c);
	}
	return h_post_dt(c, d, payload);
}

/* An empty message granting what we have (and answering a keep-alive). */
static int h_grant(struct hconn *c)
{
	struct hdt d;

	h_dt_default(&d, 0, 0);
	return h_send_dt(c, NULL, &d, NULL, false);
}

/* ---- smbd's end ---- */

struct hside {
	struct smbd_sock *sk;
	wait_queue_head_t wq;
	struct completion done;
	int status;
	u8 *rbuf;
	struct list_head expect;	/* struct hmsg: what must arrive */
	u32 nexpect;
	int err;			/* recv error seen */
	atomic_t ev;			/* upcalls so far */
	u64 delivered;
	u64 wrong;			/* deliveries that were not expected */
	char why[128];
	struct hconn *c;		/* the hostile end, to keep it polled */
};

static void hs_wake(struct smbd_sock *sk)
{
	struct hside *s = smbd_sock_priv(sk);

	atomic_inc(&s->ev);
	wake_up(&s->wq);
}

static void hs_connected(struct smbd_sock *sk, int status)
{
	struct hside *s = smbd_sock_priv(sk);

	s->status = status;
	complete(&s->done);
}

static const struct smbd_sock_ops hs_ops = {
	.data_ready = hs_wake,
	.write_space = hs_wake,
	.state_change = hs_wake,
};

static struct hside *hs_alloc(void)
{
	struct hside *s = kzalloc(sizeof(*s), GFP_KERNEL);

	if (!s)
		return NULL;
	s->rbuf = kmalloc(H_MSG_MAX * 2, GFP_KERNEL);
	if (!s->rbuf) {
		kfree(s);
		return NULL;
	}
	init_waitqueue_head(&s->wq);
	init_completion(&s->done);
	INIT_LIST_HEAD(&s->expect);
	return s;
}

static void hs_expect_clear(struct hside *s)
{
	struct hmsg *m, *t;

	list_for_each_entry_safe(m, t, &s->expect, node) {
		list_del(&m->node);
		kfree(m);
	}
	s->nexpect = 0;
}

static void hs_free(struct hside *s)
{
	if (!s)
		return;
	smbd_sock_release(s->sk);
	hs_expect_clear(s);
	kfree(s->rbuf);
	kfree(s);
}

static int hs_expect(struct hside *s, const u8 *data, u32 len)
{
	struct hmsg *m = kmalloc(sizeof(*m) + len, GFP_KERNEL);

	if (!m)
		return -ENOMEM;
	m->len = len;
	memcpy(m->data, data, len);
	list_add_tail(&m->node, &s->expect);
	s->nexpect++;
	return 0;
}

static __printf(2, 3) void hs_wrong(struct hside *s, const char *fmt, ...)
{
	va_list ap;

	if (!s->wrong++) {
		va_start(ap, fmt);
		vscnprintf(s->why, sizeof(s->why), fmt, ap);
		va_end(ap);
	}
}

/*
 * Take what smbd delivers and compare it with what is expected, in
 * order. @wait: until nothing is expected (3 s without progress at most)
 * or the connection ends. Returns 0, -EAGAIN (still expecting), or the
 * error smbd_sock_recv() gave.
 */
static int hs_drain(struct hside *s, bool wait)
{
	unsigned long end = jiffies + 3 * HZ;
	struct iov_iter it;
	struct kvec kv;
	struct hmsg *m;
	ssize_t n;
	int ev;

	if (s->err)
		return s->err;
	for (;;) {
		ev = atomic_read(&s->ev);
		kv.iov_base = s->rbuf;
		kv.iov_len = H_MSG_MAX * 2;
		iov_iter_kvec(&it, ITER_DEST, &kv, 1, kv.iov_len);
		n = smbd_sock_recv(s->sk, &it, SMBD_RECV_NONBLOCK, NULL);
		if (n == -EAGAIN) {
			if (!wait || !s->nexpect)
				return s->nexpect ? -EAGAIN : 0;
			if (time_after(jiffies, end))
				return -EAGAIN;
			if (s->c)
				h_poll(s->c);
			wait_event_timeout(s->wq, atomic_read(&s->ev) != ev,
					   msecs_to_jiffies(2));
			continue;
		}
		if (n < 0) {
			s->err = n;
			return n;
		}
		end = jiffies + 3 * HZ;
		m = list_first_entry_or_null(&s->expect, struct hmsg, node);
		if (!m) {
			hs_wrong(s, "unexpected %zd-byte message", n);
			continue;
		}
		if (m->len != n || memcmp(m->data, s->rbuf, n)) {
			u32 i = 0;

			while (i < min_t(u32, m->len, n) &&
			       m->data[i] == s->rbuf[i])
				i++;
			hs_wrong(s, "%zd bytes delivered, %u sent, first difference at %u",
				 n, m->len, i);
		} else {
			s->delivered++;
		}
		list_del(&m->node);
		kfree(m);
		s->nexpect--;
	}
}

/* smbd sends @len bytes; NONBLOCK with waits, so a stall cannot hang us. */
static int hs_send(struct hside *s, const u8 *data, u32 len, unsigned int ms)
{
	unsigned long end = jiffies + msecs_to_jiffies(ms);
	struct iov_iter it;
	struct kvec kv;
	u32 done = 0;
	ssize_t n;
	int ev;

	while (done < len) {
		ev = atomic_read(&s->ev);
		kv.iov_base = (void *)data + done;
		kv.iov_len = len - done;
		iov_iter_kvec(&it, ITER_SOURCE, &kv, 1, len - done);
		n = smbd_sock_send(s->sk, &it, SMBD_SEND_NONBLOCK);
		if (n > 0) {
			done += n;
			continue;
		}
		if (n != -EAGAIN)
			return n;
		if (time_after(jiffies, end))
			return -ETIMEDOUT;
		if (s->c) {
			h_poll(s->c);
			if (s->c->to_grant >= 8 && s->c->send_credits)
				h_grant(s->c);
		}
		wait_event_timeout(s->wq, atomic_read(&s->ev) != ev,
				   msecs_to_jiffies(2));
	}
	return 0;
}

/*
 * Wait up to @ms for smbd to report the connection lost; what it still
 * delivers must be expected. (A NONBLOCK read keeps saying -EAGAIN while
 * half a message is queued, even once the connection is gone: the loss
 * is read from smbd_sock_query().)
 */
static bool hs_ends(struct hside *s, unsigned int ms)
{
	unsigned long end = jiffies + msecs_to_jiffies(ms);
	struct smbd_sock_info info;
	int ret;

	for (;;) {
		ret = hs_drain(s, false);
		if (ret && ret != -EAGAIN)
			return true;
		if (smbd_sock_query(s->sk, &info)) {
			hs_drain(s, false);
			return true;
		}
		if (time_after(jiffies, end))
			return false;
		if (s->c)
			h_poll(s->c);
		usleep_range(5000, 6000);
	}
}

/* ---- a run: one role over one provider ---- */

/* How a connection of cifs mode ends (h_cifs()). */
enum {
	HC_CLOSE_AT_ONCE,	/* established, then closed: no response */
	HC_BAD_RESP,		/* a Negotiate Response smbd must refuse */
	HC_CLOSE_AFTER_FIRST,	/* the SMB2 NEGOTIATE read, then closed */
	HC_NAMED_DT,		/* a named malformed Data Transfer message */
	HC_RANDOM_DT,		/* a random mutation of a valid one */
	HC_STALL,		/* silence after the first message, closed */
	HC_NR
};

static const char * const hc_names[HC_NR] = {
	"close-at-once", "refused-response", "close-after-first-message",
	"named-malformed", "random-mutation", "stall",
};

struct hrun {
	bool server;		/* the hostile peer listens, smbd connects */
	bool cifs;		/* ... and cifs on smbd mounts (h_cifs()) */
	bool close_only;	/* ... every ending is HC_CLOSE_AT_ONCE */
	const char *pfx;
	struct sockaddr_storage addr;
	u64 seed, rs;
	u32 target_msgs, target_fatal;
	struct tpeer_listener hl;	/* server */
	bool hl_up;
	struct smbd_sock *lsk;	/* client: smbd's listener */
	struct hwire w;
	/* counts */
	u64 mutated, legal_msgs, logical_msgs, hostile_msgs;
	u64 fatal, either_ended, either_kept, legal_kept, reconnects;
	u64 ka_sent, stalls, echoes;
	u64 fail_conn, fail_echo, fail_legal, fail_fatal, fail_neg;
	u64 open_j, close_j, echo_j, ends_j;	/* time spent, jiffies */
	/* cifs mode */
	u64 cifs_ends[HC_NR], cifs_negotiated, cifs_first, cifs_ended_by_peer;
	u64 cifs_gave_up;
	char why_conn[128], why_echo[128], why_legal[160], why_fatal[160];
	char why_neg[160];
	struct testctl_out *out;	/* the result file of its lane */
};

/* Two lanes, so that both providers can run at once. */
static struct testctl hctl[2];

static __printf(4, 5) bool h_check(struct hrun *r, bool ok, const char *name,
				   const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ok = testctl_vcheck(r->out, ok, r->pfx, name, fmt, ap);
	va_end(ap);
	return ok;
}

#define CHECK(r, ok, name, fmt, ...) h_check(r, ok, name, fmt, ##__VA_ARGS__)

static __printf(4, 5) void h_fail(u64 *count, char *why, size_t size,
				  const char *fmt, ...)
{
	va_list ap;

	if (!(*count)++) {
		va_start(ap, fmt);
		vscnprintf(why, size, fmt, ap);
		va_end(ap);
	}
}

#define FAIL(run, what, fmt, ...) do {					\
	struct hrun *r_ = (run);					\
									\
	h_fail(&r_->fail_##what, r_->why_##what, sizeof(r_->why_##what),	\
	       fmt, ##__VA_ARGS__);					\
} while (0)

/* The base negotiation messages the hostile peer sends. */
static void h_req_base(u8 *b)
{
	memset(b, 0, H_BUF);
	put_unaligned_le16(V1, b + NQ_MIN_VERSION);
	put_unaligned_le16(V1, b + NQ_MAX_VERSION);
	put_unaligned_le16(H_NR_RX, b + NQ_CREDITS_REQ);
	put_unaligned_le32(H_RECV, b + NQ_PREF_SEND);
	put_unaligned_le32(H_RECV, b + NQ_MAX_RECV);
	put_unaligned_le32(H_FRAG, b + NQ_MAX_FRAG);
}

static void h_resp_base(u8 *b)
{
	memset(b, 0, H_BUF);
	put_unaligned_le16(V1, b + NP_MIN_VERSION);
	put_unaligned_le16(V1, b + NP_MAX_VERSION);
	put_unaligned_le16(V1, b + NP_NEG_VERSION);
	put_unaligned_le16(H_NR_RX, b + NP_CREDITS_REQ);
	put_unaligned_le16(H_NR_RX, b + NP_CREDITS_GRANTED);
	put_unaligned_le32(1048576, b + NP_MAX_RW);
	put_unaligned_le32(H_RECV, b + NP_PREF_SEND);
	put_unaligned_le32(H_RECV, b + NP_MAX_RECV);
	put_unaligned_le32(H_FRAG, b + NP_MAX_FRAG);
}

/* A connected pair: the hostile end and smbd's. */
struct hpair {
	struct hconn *c;
	struct hside *s;
};

static void hp_close(struct hpair *p)
{
	/* Ours first: smbd sees the disconnect before it is released. */
	h_destroy(p->c);
	hs_free(p->s);
	p->s = NULL;
	p->c = NULL;
}

/* What we may send after negotiating: smbd's MaxReceiveSize. */
static u32 h_clamp_recv(u32 pref)
{
	return max_t(u32, MIN_RECV, min_t(u32, H_RECV, pref));
}

/* smbd's Negotiate Request, checked by our reading of 2.2.1/3.1.5.2 */
static void h_check_req(struct hrun *r, struct hconn *c)
{
	const u8 *req = c->neg;

	if (c->neg_len != NQ_LEN ||
	    get_unaligned_le16(req + NQ_MIN_VERSION) != V1 ||
	    get_unaligned_le16(req + NQ_MAX_VERSION) != V1 ||
	    get_unaligned_le16(req + NQ_RESERVED) ||
	    !get_unaligned_le16(req + NQ_CREDITS_REQ) ||
	    get_unaligned_le32(req + NQ_MAX_RECV) < MIN_RECV ||
	    get_unaligned_le32(req + NQ_MAX_FRAG) < MIN_FRAG)
		FAIL(r, neg, "smbd's Negotiate Request: %u bytes %*ph",
		     c->neg_len, NQ_LEN, req);
}

/* Send Negotiate Response @resp (@len bytes); the connection is ours. */
static int h_send_resp(struct hconn *c, const u8 *resp, u32 len)
{
	struct tpeer_tx *tx;
	int ret;

	tx = tpeer_tx_slot(&c->p);
	if (!tx)
		return -ETIMEDOUT;
	memcpy(tx->buf, resp, min_t(u32, len, H_BUF));
	ret = tpeer_post(&c->p, tx, len);
	if (ret)
		return ret;
	c->negotiated = true;
	c->send_credits = 0;
	c->peer_credits = len >= NP_LEN ?
		get_unaligned_le16(resp + NP_CREDITS_GRANTED) : 0;
	c->to_grant = H_NR_RX - min_t(u32, H_NR_RX, c->peer_credits);
	c->max_recv = len >= NP_LEN ?
		get_unaligned_le32(resp + NP_MAX_RECV) : H_RECV;
	c->max_send = len >= NP_LEN ?
		h_clamp_recv(get_unaligned_le32(resp + NP_PREF_SEND)) :
		MIN_RECV;
	return 0;
}

/*
 * Server role: smbd connects to our listener; we answer with @resp
 * (@len bytes; NULL: never). @abandon, with no @resp: drop the
 * connection after the request as the stock ksmbd can (queue pair to
 * the error state, no disconnect), with a short ACK timeout for smbd.
 * Returns 0 connected, smbd's connect status, -ETIME when smbd never
 * reported one, or a setup error (*@setup set). smbd's socket is never
 * released before its connect has ended.
 */
static int hp_open_server(struct hrun *r, struct hpair *p, const u8 *resp,
			  u32 len, u32 neg_ms, bool abandon, bool *setup)
{
	struct ib_qp_attr qa = { .qp_state = IB_QPS_ERR };
	struct smbd_params sp;
	int ret;

	*setup = true;
	/* A connection that arrived after an earlier case gave up on it. */
	while ((p->c = h_take(&r->hl, &r->w, 0)))
		h_destroy(p->c);
	p->s = hs_alloc();
	if (!p->s)
		return -ENOMEM;
	smbd_params_init(&sp, false);
	/* The verdicts assume smbd's sizes are ours (H_RECV). */
	sp.max_send_size = H_RECV;
	sp.max_recv_size = H_RECV;
	sp.negotiate_timeout_ms = neg_ms ?: 5000;
	/*
	 * 4.096 us << 18: retries run out 7 x 1.07 s after a probe, and
	 * the request itself has 7.5 s to be acknowledged in a busy guest.
	 */
	if (abandon)
		sp.ack_timeout = 18;
	ret = smbd_sock_create(&init_net, &sp, &p->s->sk);
	if (ret)
		return ret;
	smbd_sock_set_ops(p->s->sk, &hs_ops, p->s);
	ret = smbd_sock_connect_async(p->s->sk, (struct sockaddr *)&r->addr,
				      hs_connected);
	if (ret)
		return ret;
	ret = -ETIMEDOUT;
	p->c = h_take(&r->hl, &r->w, 5000);
	if (!p->c)
		goto wait;
	p->s->c = p->c;
	wait_for_completion_timeout(&p->c->p.established, 5 * HZ);
	/* smbd's Negotiate Request, checked by our reading of 2.2.1/3.1.5.2 */
	h_wait_msg(p->c, 5000);
	if (!p->c->neg_got)
		goto wait;
	h_check_req(r, p->c);
	if (resp) {
		ret = h_send_resp(p->c, resp, len);
		if (ret)
			goto wait;
	} else if (abandon) {
		ret = ib_modify_qp(p->c->p.id->qp, &qa, IB_QP_STATE);
		if (ret)
			goto wait;
	}
	*setup = false;
	ret = 0;
wait:
	/* smbd's Negotiation Timer ends the connect at the latest. */
	if (!wait_for_completion_timeout(&p->s->done,
					 msecs_to_jiffies(sp.negotiate_timeout_ms + 5000)))
		return -ETIME;
	return ret ?: p->s->status;
}

/*
 * Client role: we connect to smbd's listener and send @req (@len bytes).
 * Returns 0 connected and accepted, <0 otherwise (*@setup for errors of
 * ours). The response, if any, is in p->c->neg.
 */
static int hp_open_client(struct hrun *r, struct hpair *p, const u8 *req,
			  u32 len, bool *setup)
{
	unsigned long end;
	struct tpeer_tx *tx;
	int ret;

	*setup = true;
	p->s = NULL;
	p->c = h_alloc(&r->w);
	if (!p->c)
		return -ENOMEM;
	ret = tpeer_connect(&p->c->p, (struct sockaddr *)&r->addr);
	if (ret)
		return ret;
	tx = tpeer_tx_slot(&p->c->p);
	if (!tx)
		return -ETIMEDOUT;
	memcpy(tx->buf, req, min_t(u32, len, H_BUF));
	ret = tpeer_post(&p->c->p, tx, len);
	if (ret)
		return ret;
	*setup = false;
	h_wait_msg(p->c, 3000);
	if (!p->c->neg_got)
		return -ECONNRESET;
	if (p->c->neg_len < NP_LEN ||
	    get_unaligned_le32(p->c->neg + NP_STATUS))
		return -EPROTO;
	p->s = hs_alloc();
	if (!p->s)
		return -ENOMEM;
	end = jiffies + 5 * HZ;
	do {
		ret = smbd_sock_accept(r->lsk, &p->s->sk, SMBD_RECV_NONBLOCK);
		if (ret != -EAGAIN)
			break;
		usleep_range(5000, 6000);
	} while (time_before(jiffies, end));
	if (ret) {
		*setup = true;
		return ret;
	}
	smbd_sock_set_ops(p->s->sk, &hs_ops, p->s);
	p->s->c = p->c;
	p->c->negotiated = true;
	p->c->send_credits = get_unaligned_le16(p->c->neg + NP_CREDITS_GRANTED);
	p->c->peer_credits = 0;
	p->c->to_grant = H_NR_RX;	/* all posted, none granted yet */
	p->c->max_recv = get_unaligned_le32(req + NQ_MAX_RECV);
	p->c->max_send = h_clamp_recv(get_unaligned_le32(req + NQ_PREF_SEND));
	return 0;
}

/* Check a successful Negotiate Response from smbd (client role). */
static void h_check_resp(struct hrun *r, struct hconn *c, const u8 *req)
{
	const u8 *b = c->neg;

	if (c->neg_len != NP_LEN ||
	    get_unaligned_le16(b + NP_MIN_VERSION) != V1 ||
	    get_unaligned_le16(b + NP_MAX_VERSION) != V1 ||
	    get_unaligned_le16(b + NP_NEG_VERSION) != V1 ||
	    get_unaligned_le16(b + NP_RESERVED) ||
	    !get_unaligned_le16(b + NP_CREDITS_REQ) ||
	    !get_unaligned_le16(b + NP_CREDITS_GRANTED) ||
	    get_unaligned_le32(b + NP_PREF_SEND) >
	    get_unaligned_le32(req + NQ_MAX_RECV) ||
	    get_unaligned_le32(b + NP_MAX_RECV) < MIN_RECV ||
	    get_unaligned_le32(b + NP_MAX_FRAG) < MIN_FRAG)
		FAIL(r, neg, "smbd's Negotiate Response: %u bytes %*ph",
		     c->neg_len, NP_LEN, b);
}

/* A valid connection with the default negotiation. */
static int hp_open(struct hrun *r, struct hpair *p)
{
	u8 *b = kmalloc(H_BUF, GFP_KERNEL);
	bool setup;
	int ret;

	unsigned long t0 = jiffies;

	if (!b)
		return -ENOMEM;
	r->reconnects++;
	if (r->server) {
		h_resp_base(b);
		ret = hp_open_server(r, p, b, NP_LEN, 0, false, &setup);
	} else {
		h_req_base(b);
		ret = hp_open_client(r, p, b, NQ_LEN, &setup);
		if (!ret)
			h_check_resp(r, p->c, b);
	}
	kfree(b);
	if (ret) {
		FAIL(r, conn, "valid connection %llu failed: %d", r->reconnects,
		     ret);
		hp_close(p);
	}
	r->open_j += jiffies - t0;
	return ret;
}

/*
 * smbd sends @len bytes of @data on @p and we must get them, granting it
 * credits as it needs them, within 5 s. 0, or the error with @got, the
 * bytes of the first message that came (0 if none).
 */
static int hp_from_smbd(struct hpair *p, const u8 *data, u32 len, u32 *got)
{
	unsigned long end = jiffies + 5 * HZ;
	struct hconn *c = p->c;
	struct hmsg *m;
	int ret;

	/* smbd needs credits, which ride on our messages. */
	h_poll(c);
	if (c->to_grant && c->send_credits)
		h_grant(c);
	ret = hs_send(p->s, data, len, 5000);
	while (!ret && list_empty(&c->inbox) && time_before(jiffies, end)) {
		wait_event_timeout(c->p.wait, !list_empty_careful(&c->p.ready) ||
				   READ_ONCE(c->p.disc), msecs_to_jiffies(20));
		h_poll(c);
		if (c->to_grant >= 8 && c->send_credits)
			h_grant(c);
	}
	m = list_first_entry_or_null(&c->inbox, struct hmsg, node);
	*got = m ? m->len : 0;
	if (!ret && (!m || m->len != len || memcmp(m->data, data, len)))
		ret = -EIO;
	h_inbox_free(c);
	return ret;
}

/*
 * Health: data both ways on @p. We send @len bytes (fragmented as needed)
 * and smbd must deliver them; smbd sends them back and we must get them.
 */
static bool hp_echo(struct hrun *r, struct hpair *p, u32 len)
{
	struct hconn *c = p->c;
	struct hside *s = p->s;
	u32 maxpay = c->max_send - DT_PAYLOAD, done = 0, n, got;
	unsigned long t0 = jiffies;
	struct hdt d;
	u8 *data;
	u32 i;
	int ret;

	data = kmalloc(len, GFP_KERNEL);
	if (!data)
		return false;
	for (i = 0; i < len; i++)
		data[i] = rnd(&r->rs);
	ret = hs_expect(s, data, len);
	while (!ret && done < len) {
		n = min(maxpay, len - done);
		h_dt_default(&d, n, len - done - n);
		ret = h_send_dt(c, s, &d, data + done, false);
		done += n;
	}
	if (!ret)
		ret = hs_drain(s, true);
	if (ret || s->wrong) {
		FAIL(r, echo, "to smbd: %d, %s", ret, s->wrong ? s->why : "");
		goto out;
	}
	/* Back. */
	c->got = 0;
	ret = hp_from_smbd(p, data, len, &got);
	if (ret)
		FAIL(r, echo, "from smbd: %d, got %u of %u bytes%s", ret, got,
		     len, ret == -EIO && got == len ? ", different" : "");
out:
	kfree(data);
	if (!ret)
		r->echoes++;
	r->echo_j += jiffies - t0;
	return !ret;
}

/* ---- 1. negotiation at, below and above the limits ---- */

enum { X_OK, X_REFUSE, X_EITHER };

struct hneg_case {
	const char *name;
	u8 off;		/* field offset; 0xff: none */
	u8 size;	/* 2 or 4 */
	u32 val;
	u32 len;	/* bytes sent */
	u8 shift;	/* the message starts this many junk bytes late */
	u8 expect;
};

#define NC(n, o, s, v, x) { n, o, s, v, 0, 0, x }
#define NL(n, l, x) { n, 0xff, 0, 0, l, 0, x }

static const struct hneg_case resp_cases[] = {
	NL("resp-valid", NP_LEN, X_OK),
	NC("resp-minver-0", NP_MIN_VERSION, 2, 0, X_EITHER),
	NC("resp-minver-0200", NP_MIN_VERSION, 2, 0x0200, X_EITHER),
	NC("resp-maxver-00ff", NP_MAX_VERSION, 2, 0x00ff, X_EITHER),
	NC("resp-maxver-ffff", NP_MAX_VERSION, 2, 0xffff, X_EITHER),
	NC("resp-negver-0", NP_NEG_VERSION, 2, 0, X_REFUSE),
	NC("resp-negver-00ff", NP_NEG_VERSION, 2, 0x00ff, X_REFUSE),
	NC("resp-negver-0101", NP_NEG_VERSION, 2, 0x0101, X_REFUSE),
	NC("resp-negver-0200", NP_NEG_VERSION, 2, 0x0200, X_REFUSE),
	NC("resp-negver-ffff", NP_NEG_VERSION, 2, 0xffff, X_REFUSE),
	NC("resp-reserved-ffff", NP_RESERVED, 2, 0xffff, X_OK),
	NC("resp-creq-0", NP_CREDITS_REQ, 2, 0, X_REFUSE),
	NC("resp-creq-1", NP_CREDITS_REQ, 2, 1, X_OK),
	NC("resp-creq-65535", NP_CREDITS_REQ, 2, 65535, X_OK),
	NC("resp-cgrant-0", NP_CREDITS_GRANTED, 2, 0, X_REFUSE),
	NC("resp-cgrant-1", NP_CREDITS_GRANTED, 2, 1, X_OK),
	NC("resp-cgrant-65535", NP_CREDITS_GRANTED, 2, 65535, X_OK),
	NC("resp-status-not-supported", NP_STATUS, 4, ST_NOT_SUPPORTED,
	   X_REFUSE),
	NC("resp-status-1", NP_STATUS, 4, 1, X_REFUSE),
	NC("resp-status-80000000", NP_STATUS, 4, 0x80000000, X_REFUSE),
	NC("resp-maxrw-0", NP_MAX_RW, 4, 0, X_EITHER),
	NC("resp-maxrw-ffffffff", NP_MAX_RW, 4, 0xffffffff, X_OK),
	NC("resp-prefsend-0", NP_PREF_SEND, 4, 0, X_OK),
	NC("resp-prefsend-127", NP_PREF_SEND, 4, 127, X_OK),
	NC("resp-prefsend-128", NP_PREF_SEND, 4, 128, X_OK),
	NC("resp-prefsend-1364", NP_PREF_SEND, 4, 1364, X_OK),
	NC("resp-prefsend-1365", NP_PREF_SEND, 4, 1365, X_REFUSE),
	NC("resp-prefsend-ffffffff", NP_PREF_SEND, 4, 0xffffffff, X_REFUSE),
	NC("resp-maxrecv-0", NP_MAX_RECV, 4, 0, X_REFUSE),
	NC("resp-maxrecv-127", NP_MAX_RECV, 4, 127, X_REFUSE),
	NC("resp-maxrecv-128", NP_MAX_RECV, 4, 128, X_OK),
	NC("resp-maxrecv-ffffffff", NP_MAX_RECV, 4, 0xffffffff, X_OK),
	NC("resp-maxfrag-0", NP_MAX_FRAG, 4, 0, X_REFUSE),
	NC("resp-maxfrag-131071", NP_MAX_FRAG, 4, 131071, X_REFUSE),
	NC("resp-maxfrag-131072", NP_MAX_FRAG, 4, 131072, X_OK),
	NC("resp-maxfrag-ffffffff", NP_MAX_FRAG, 4, 0xffffffff, X_OK),
	NL("resp-len-1", 1, X_REFUSE),
	NL("resp-len-20", 20, X_REFUSE),
	NL("resp-len-31", 31, X_REFUSE),
	NL("resp-len-33", 33, X_OK),
	NL("resp-len-37", 37, X_OK),
	NL("resp-len-512", 512, X_OK),
	NL("resp-len-2048", 2048, X_REFUSE),
	{ "resp-shifted-1", 0xff, 0, 0, NP_LEN + 1, 1, X_REFUSE },
	{ "resp-shifted-8", 0xff, 0, 0, NP_LEN + 8, 8, X_REFUSE },
};

static const struct hneg_case req_cases[] = {
	NL("req-valid", NQ_LEN, X_OK),
	{ "req-ver-0000-ffff", NQ_MIN_VERSION, 2, 0, NQ_LEN, 0, X_OK },
	NC("req-maxver-0200", NQ_MAX_VERSION, 2, 0x0200, X_OK),
	NC("req-minver-0101", NQ_MIN_VERSION, 2, 0x0101, X_REFUSE),
	NC("req-minver-0200", NQ_MIN_VERSION, 2, 0x0200, X_REFUSE),
	NC("req-maxver-00ff", NQ_MAX_VERSION, 2, 0x00ff, X_REFUSE),
	NC("req-maxver-0", NQ_MAX_VERSION, 2, 0, X_REFUSE),
	NC("req-reserved-ffff", NQ_RESERVED, 2, 0xffff, X_OK),
	NC("req-creq-0", NQ_CREDITS_REQ, 2, 0, X_REFUSE),
	NC("req-creq-1", NQ_CREDITS_REQ, 2, 1, X_OK),
	NC("req-creq-65535", NQ_CREDITS_REQ, 2, 65535, X_OK),
	NC("req-prefsend-0", NQ_PREF_SEND, 4, 0, X_OK),
	NC("req-prefsend-127", NQ_PREF_SEND, 4, 127, X_OK),
	NC("req-prefsend-128", NQ_PREF_SEND, 4, 128, X_OK),
	NC("req-prefsend-ffffffff", NQ_PREF_SEND, 4, 0xffffffff, X_OK),
	NC("req-maxrecv-0", NQ_MAX_RECV, 4, 0, X_REFUSE),
	NC("req-maxrecv-127", NQ_MAX_RECV, 4, 127, X_REFUSE),
	NC("req-maxrecv-128", NQ_MAX_RECV, 4, 128, X_OK),
	NC("req-maxrecv-ffffffff", NQ_MAX_RECV, 4, 0xffffffff, X_OK),
	NC("req-maxfrag-0", NQ_MAX_FRAG, 4, 0, X_REFUSE),
	NC("req-maxfrag-131071", NQ_MAX_FRAG, 4, 131071, X_REFUSE),
	NC("req-maxfrag-131072", NQ_MAX_FRAG, 4, 131072, X_OK),
	NC("req-maxfrag-ffffffff", NQ_MAX_FRAG, 4, 0xffffffff, X_OK),
	NL("req-len-1", 1, X_REFUSE),
	NL("req-len-19", 19, X_REFUSE),
	NL("req-len-21", 21, X_OK),
	NL("req-len-33", 33, X_OK),
	NL("req-len-512", 512, X_OK),
	NL("req-len-2048", 2048, X_REFUSE),
	{ "req-shifted-1", 0xff, 0, 0, NQ_LEN + 1, 1, X_REFUSE },
};

/* The failure response for a version smbd does not speak, 3.1.5.3. */
static bool h_notsup_ok(const struct hconn *c)
{
	const u8 *b = c->neg;
	u32 i;

	if (c->neg_len != NP_LEN ||
	    get_unaligned_le16(b + NP_MIN_VERSION) != V1 ||
	    get_unaligned_le16(b + NP_MAX_VERSION) != V1 ||
	    get_unaligned_le32(b + NP_STATUS) != ST_NOT_SUPPORTED)
		return false;
	for (i = NP_NEG_VERSION; i < NP_LEN; i++)
		if ((i < NP_STATUS || i >= NP_STATUS + 4) && b[i])
			return false;
	return true;
}

/*
 * Case @nc's negotiation message in @msg (H_BUF bytes), built in @b (as
 * many): a response (@server) or a request. Returns the bytes to send.
 */
static u32 h_neg_msg(bool server, const struct hneg_case *nc, u8 *b, u8 *msg)
{
	u32 i;

	if (server)
		h_resp_base(b);
	else
		h_req_base(b);
	if (!strcmp(nc->name, "req-ver-0000-ffff"))
		put_unaligned_le16(0xffff, b + NQ_MAX_VERSION);
	if (nc->off != 0xff && nc->size == 2)
		put_unaligned_le16(nc->val, b + nc->off);
	else if (nc->off != 0xff)
		put_unaligned_le32(nc->val, b + nc->off);
	memset(msg, 0x5a, nc->shift);
	memcpy(msg + nc->shift, b, H_BUF - nc->shift);
	for (i = (server ? NP_LEN : NQ_LEN) + nc->shift; i < H_BUF; i++)
		msg[i] = 0xa5;
	return nc->len ?: (server ? NP_LEN : NQ_LEN);
}

static void h_neg_case(struct hrun *r, const struct hneg_case *nc)
{
	bool setup, version, echo = true;
	struct hpair p = {};
	u8 *b, *msg;
	u32 len;
	int ret;

	b = kzalloc(H_BUF * 2, GFP_KERNEL);
	if (!b)
		return;
	msg = b + H_BUF;
	len = h_neg_msg(r->server, nc, b, msg);
	/* 3.1.5.6: a version range without 0x0100 gets an answer */
	version = !r->server && len >= NQ_LEN &&
		  (get_unaligned_le16(msg + NQ_MIN_VERSION) > V1 ||
		   get_unaligned_le16(msg + NQ_MAX_VERSION) < V1);

	if (r->server)
		ret = hp_open_server(r, &p, msg, len, 0, false, &setup);
	else
		ret = hp_open_client(r, &p, msg, len, &setup);
	if (setup && ret) {
		CHECK(r, false, nc->name, "setup failed: %d", ret);
		goto out;
	}
	if (!ret && !r->server)
		h_check_resp(r, p.c, msg + nc->shift);
	if (!ret && nc->expect != X_REFUSE)
		echo = hp_echo(r, &p, 1 + below(&r->rs, 600));
	if (nc->expect == X_OK)
		CHECK(r, !ret && echo, nc->name, "connect %d, echo %s", ret,
		      echo ? "ok" : "failed");
	else if (nc->expect == X_REFUSE && r->server)
		CHECK(r, ret < 0, nc->name, "connect returned %d", ret);
	else if (nc->expect == X_REFUSE && version)
		CHECK(r, ret && p.c && h_notsup_ok(p.c) &&
		      wait_event_timeout(p.c->p.wait, READ_ONCE(p.c->p.disc),
					 5 * HZ),
		      nc->name, "%d: STATUS_NOT_SUPPORTED then disconnect, got %u bytes %*ph",
		      ret, p.c ? p.c->neg_len : 0, NP_LEN, p.c ? p.c->neg : b);
	else if (nc->expect == X_REFUSE)
		CHECK(r, ret && p.c && !p.c->neg_got &&
		      wait_event_timeout(p.c->p.wait, READ_ONCE(p.c->p.disc),
					 5 * HZ),
		      nc->name, "%d: no answer then disconnect, got %u bytes",
		      ret, p.c ? p.c->neg_len : 0);
	else
		CHECK(r, ret < 0 || echo, nc->name, "connect %d, echo %s",
		      ret, echo ? "ok" : "failed");
	if (!r->server && nc->expect == X_REFUSE) {
		struct smbd_sock *sk = NULL;

		ret = smbd_sock_accept(r->lsk, &sk, SMBD_RECV_NONBLOCK);
		if (ret != -EAGAIN)
			FAIL(r, neg, "%s: accept gave %d", nc->name, ret);
		smbd_sock_release(sk);
	}
out:
	hp_close(&p);
	kfree(b);
}

/*
 * Server role: we take smbd's Negotiate Request and stay silent.
 * - Alive (@abandon false): smbd's timer must fire, not before. On RoCE
 *   smbd probes our queue pair meanwhile (every 2 s from its request on,
 *   so at least once even after a slow setup), and we answer.
 * - Gone (@abandon true): our queue pair goes to the error state and no
 *   disconnect is sent, as the stock ksmbd's race did over RoCE. smbd
 *   must find out long before its timer: at once on iWARP (siw closes
 *   the stream), by its probe on RoCE ([MS-SMBD] 3.1.4.1 gives a peer
 *   120 s, not a dead one).
 */
static void h_neg_silent(struct hrun *r, bool abandon)
{
	u32 ms, neg_ms = abandon ? 30000 : 8000;
	unsigned long t0 = jiffies;
	struct hpair p = {};
	bool setup, good;
	int ret;

	ret = hp_open_server(r, &p, NULL, 0, neg_ms, abandon, &setup);
	ms = jiffies_to_msecs(jiffies - t0);
	if (abandon)
		good = ret == -ECONNRESET && ms < 20000;
	else
		good = ret == -ETIMEDOUT && ms >= neg_ms - 500 &&
		       ms < neg_ms + 5000;
	CHECK(r, good && !setup, abandon ? "peer-abandons" : "resp-never-sent",
	      "connect gave %d after %u ms (timer %u ms)", ret, ms, neg_ms);
	hp_close(&p);
}

/* Client role: 32 connections that never negotiate. */
static void h_flood(struct hrun *r)
{
	struct hconn *cs[32] = {};
	unsigned int i, up = 0, dropped = 0;
	unsigned long t0, end;
	struct hpair p = {};

	for (i = 0; i < ARRAY_SIZE(cs); i++) {
		cs[i] = h_alloc(&r->w);
		if (cs[i] && !tpeer_connect(&cs[i]->p, (struct sockaddr *)&r->addr))
			up++;
	}
	t0 = jiffies;
	end = t0 + 12 * HZ;
	for (i = 0; i < ARRAY_SIZE(cs); i++) {
		if (!cs[i])
			continue;
		wait_event_timeout(cs[i]->p.wait, READ_ONCE(cs[i]->p.disc),
				   time_after(end, jiffies) ? end - jiffies : 1);
		dropped += READ_ONCE(cs[i]->p.disc);
	}
	CHECK(r, up > 0 && dropped == ARRAY_SIZE(cs), "flood-dropped",
	      "%u of %zu connected, %u dropped within %u ms", up,
	      ARRAY_SIZE(cs), dropped, jiffies_to_msecs(jiffies - t0));
	for (i = 0; i < ARRAY_SIZE(cs); i++)
		h_destroy(cs[i]);
	CHECK(r, !hp_open(r, &p) && hp_echo(r, &p, 2000),
	      "flood-listener-survives", "fresh connection after the flood");
	hp_close(&p);
}

/* ---- 2. Data Transfer mutations ---- */

/* Our model of 3.1.5.8 (and smbd's documented stricter rules). */
static int h_verdict(const struct hdt *d, u32 maxrecv, u32 maxfrag,
		     bool *deliver)
{
	*deliver = false;
	if (d->wire_len > maxrecv || d->wire_len < DT_HDR_LEN || !d->creq ||
	    d->doff % 8 || (d->dlen && d->doff < DT_HDR_LEN) ||
	    (u64)d->doff + d->dlen > d->wire_len ||
	    (u64)d->dlen + d->remaining > maxfrag)
		return X_REFUSE;
	if (!d->dlen && !d->remaining)
		return (d->doff || (d->flags & ~DT_RESPONSE_REQUESTED)) ?
			X_EITHER : X_OK;
	*deliver = true;
	return (d->flags & ~DT_RESPONSE_REQUESTED) ? X_EITHER : X_OK;
}

static const u32 bounds[] = {
	0, 1, 7, 8, 16, 19, 20, 23, 24, 25, 32, 127, 128, 1339, 1340, 1363,
	1364, 1365, 4096, 131072, 1048576, 1048577, 0x7fffffff, 0x80000000,
	0xfffffff8, 0xffffffff,
};

/*
 * One hostile message on @p, by our verdict: X_OK ones must be delivered
 * exactly (and the connection live), X_REFUSE ones must end it, X_EITHER
 * either. Returns true when the connection ended.
 */
static bool h_hostile_one(struct hrun *r, struct hpair *p, const char *name,
			  struct hdt *d, u8 *payload)
{
	u32 maxrecv = p->c->max_send, maxfrag = H_FRAG;
	struct smbd_sock_info info;
	bool deliver, ended;
	unsigned long t0;
	struct hdt close;
	u8 probe[16];
	int x, ret;
	u32 i;

	if (!smbd_sock_query(p->s->sk, &info))
		maxfrag = info.max_fragmented_recv_size;
	x = h_verdict(d, maxrecv, maxfrag, &deliver);
	/* A message left open is closed: exactly, or short (a lie). */
	if (x != X_REFUSE && deliver && d->remaining) {
		if (d->remaining > maxrecv - DT_PAYLOAD)
			x = X_REFUSE;
	}
	r->hostile_msgs++;
	r->mutated++;
	ret = h_send_dt(p->c, p->s, d, payload, false);
	if (ret) {
		FAIL(r, fatal, "%s: send failed %d", name, ret);
		return true;
	}
	if (x != X_REFUSE && deliver) {
		u8 *want = kmalloc(H_MSG_MAX, GFP_KERNEL);
		u32 n = d->dlen;

		if (!want)
			return true;
		memcpy(want, p->c->p.tx[(p->c->p.tx_head + H_NR_TX - 1) % H_NR_TX].buf +
		       d->doff, n);
		if (d->remaining) {
			/* close it with exactly the bytes it announced */
			h_dt_default(&close, d->remaining, 0);
			for (i = 0; i < d->remaining; i++)
				want[n + i] = rnd(&r->rs);
			ret = h_send_dt(p->c, p->s, &close, want + n, false);
			n += d->remaining;
		}
		hs_expect(p->s, want, n);
		kfree(want);
	} else if (x == X_REFUSE && d->remaining &&
		   d->wire_len >= DT_HDR_LEN && d->creq && !(d->doff % 8) &&
		   (u64)d->doff + d->dlen <= d->wire_len &&
		   (u64)d->dlen + d->remaining <= maxfrag &&
		   d->wire_len <= maxrecv) {
		/* A lie: the message ends before the bytes it announced. */
		h_dt_default(&close, 1, 0);
		ret = h_send_dt(p->c, p->s, &close, probe, false);
	}
	/* A probe after it: delivered exactly, or the connection is gone. */
	if (x != X_REFUSE && !ret) {
		for (i = 0; i < sizeof(probe); i++)
			probe[i] = rnd(&r->rs);
		hs_expect(p->s, probe, sizeof(probe));
		h_dt_default(&close, sizeof(probe), 0);
		ret = h_send_dt(p->c, p->s, &close, probe, false);
	}
	if (x == X_OK) {
		ret = ret ?: hs_drain(p->s, true);
		if (ret || p->s->wrong)
			FAIL(r, legal, "%s: legal message, connection %d, %s",
			     name, ret, p->s->wrong ? p->s->why : "");
		else
			r->legal_kept++;
		return ret || p->s->wrong;
	}
	if (x == X_EITHER) {
		ret = ret ?: hs_drain(p->s, true);
		if (p->s->wrong)
			FAIL(r, fatal, "%s: %s", name, p->s->why);
		ended = ret && ret != -EAGAIN;
		if (!ended && ret == -EAGAIN)
			ended = hs_ends(p->s, 3000);
		if (ended)
			r->either_ended++;
		else
			r->either_kept++;
		return ended || p->s->wrong;
	}
	r->fatal++;
	t0 = jiffies;
	ended = hs_ends(p->s, 4000);
	r->ends_j += jiffies - t0;
	if (!ended || p->s->wrong)
		FAIL(r, fatal, "%s (creq %u off %u len %u rem %u wire %u flags 0x%x): %s",
		     name, d->creq, d->doff, d->dlen, d->remaining,
		     d->wire_len, d->flags,
		     p->s->wrong ? p->s->why : "connection still up");
	return true;
}

/*
 * Spend our Send Credits on empty messages that grant nothing, for at most
 * @ms, until the peer can grant no more (it holds no credit of ours: a
 * pause alone is no proof, its grant may be late), then send up to 8
 * beyond them (*@forced: how many were tried). Returns the last send's
 * error.
 */
static int h_exceed_credits(struct hconn *c, unsigned int ms, u32 *forced)
{
	unsigned long end = jiffies + msecs_to_jiffies(ms);
	struct hdt d;
	int ret = 0;

	h_dt_default(&d, 0, 0);
	d.grant_set = true;
	while (!ret && time_before(jiffies, end) && !READ_ONCE(c->p.disc)) {
		h_poll(c);
		if (!c->send_credits) {
			msleep(50);
			h_poll(c);
			if (!c->send_credits && !c->peer_credits)
				break;
			if (!c->send_credits)
				continue;	/* its last credit may grant */
		}
		ret = h_send_dt(c, NULL, &d, NULL, false);
	}
	for (*forced = 0; *forced < 8 && !ret && !READ_ONCE(c->p.disc);
	     (*forced)++)
		ret = h_send_dt(c, NULL, &d, NULL, true);
	return ret;
}

/*
 * Sends beyond the credits smbd granted. First smbd spends its own Send
 * Credits (it sends until -EAGAIN) and we grant none back, so it can no
 * longer send us a grant; we spend every credit we hold, then send 8
 * more. smbd must end the connection; or, if it had no receive posted
 * for them, our sends fail (RNR) and smbd must end it on our disconnect.
 */
static bool h_beyond_credits(struct hrun *r, struct hpair *p)
{
	struct hconn *c = p->c;
	struct iov_iter it;
	struct kvec kv;
	u8 buf[64] = {};
	u32 i, n = 0;
	bool ended;
	int ret = 0;

	do {
		kv.iov_base = buf;
		kv.iov_len = sizeof(buf);
		iov_iter_kvec(&it, ITER_SOURCE, &kv, 1, sizeof(buf));
	} while (smbd_sock_send(p->s->sk, &it, SMBD_SEND_NONBLOCK) > 0 &&
		 ++n < 1000);
	ret = h_exceed_credits(c, 2000, &i);
	h_inbox_free(c);
	r->hostile_msgs += i;
	r->mutated += i;
	r->fatal++;
	ended = hs_ends(p->s, 2000);
	if (!ended && READ_ONCE(c->p.disc)) {
		/* our QP broke (RNR): smbd never took them; now tell it */
		rdma_disconnect(c->p.id);
		ended = hs_ends(p->s, 4000);
		testctl_info(r->out, "%s dt-beyond-credits: sends failed (no receive posted), smbd ended on disconnect: %s",
			     r->pfx, ended ? "yes" : "no");
	}
	if (!ended || p->s->wrong)
		FAIL(r, fatal, "dt-beyond-credits (%u sends by smbd first, send %d): %s",
		     n, ret, p->s->wrong ? p->s->why : "connection still up");
	return true;
}

struct hnamed {
	const char *name;
	u32 doff, dlen, remaining, wire_len;
	u16 creq;
	bool over_credit;
};

/*
 * Named messages. DEF: a plain 8-byte message with Reserved set. MRX in
 * dlen: MaxReceiveSize - 24 (MRX1: one more); MRX in wire_len: DataOffset
 * + DataLength.
 */
#define DEF	0xffffffffu
#define MRX	0xfffffffeu
#define MRX1	0xfffffffdu
static const struct hnamed named[] = {
	{ "dt-offset-misaligned", 25, 8, 0, 64, 10, false },
	{ "dt-offset-4", 4, 8, 0, 64, 10, false },
	{ "dt-offset-overlap-16", 16, 8, 0, 64, 10, false },
	{ "dt-offset-0-with-data", 0, 8, 0, 64, 10, false },
	{ "dt-offset-beyond", 72, 8, 0, 64, 10, false },
	{ "dt-offset-huge", 0xfffffff8, 8, 0, 64, 10, false },
	{ "dt-length-beyond", 24, 100, 0, 64, 10, false },
	{ "dt-length-huge", 24, 0xffffffff, 0, 64, 10, false },
	{ "dt-remaining-above-maxfrag", 24, 8, 0x7fffffff, 32, 10, false },
	{ "dt-remaining-lie", 24, 8, 5000, 32, 10, false },
	{ "dt-creq-0", 24, 8, 0, 32, 0, false },
	{ "dt-over-maxrecv", 24, MRX1, 0, MRX, 10, false },
	{ "dt-over-buffer", 24, 4000, 0, 4024, 10, false },
	{ "dt-short-19", 0, 0, 0, 19, 10, false },
	{ "dt-short-1", 0, 0, 0, 1, 10, false },
	{ "dt-beyond-credits", 24, 8, 0, 32, 10, true },
	/* legal at the boundary: must be delivered */
	{ "dt-exact-maxrecv", 24, MRX, 0, MRX, 10, false },
	{ "dt-offset-32-junk-padding", 32, 40, 0, 72, 10, false },
	{ "dt-trailing-bytes", 24, 8, 0, 200, 10, false },
	{ "dt-reserved-set", DEF, 0, 0, 0, 10, false },
	{ "dt-creq-65535", 24, 8, 0, 32, 65535, false },
};

static void h_named(struct hrun *r, struct hpair *p, const struct hnamed *n)
{
	u32 mr = p->c->max_send;
	u8 *payload = kmalloc(H_BUF, GFP_KERNEL);
	struct hdt d;
	bool ended;
	u32 i;

	if (!payload)
		return;
	for (i = 0; i < H_BUF; i++)
		payload[i] = rnd(&r->rs);
	h_dt_default(&d, 8, 0);
	if (n->doff != DEF) {
		d.doff = n->doff;
		d.dlen = n->dlen == MRX ? mr - DT_PAYLOAD :
			 n->dlen == MRX1 ? mr - DT_PAYLOAD + 1 : n->dlen;
		d.remaining = n->remaining;
		d.wire_len = n->wire_len == MRX ? d.doff + d.dlen : n->wire_len;
	} else {
		d.rsvd = 0xa5a5;
	}
	d.creq = n->creq;
	d.fill = 0xee;
	if (n->over_credit)
		ended = h_beyond_credits(r, p);
	else
		ended = h_hostile_one(r, p, n->name, &d, payload);
	kfree(payload);
	if (ended) {
		unsigned long t0 = jiffies;

		hp_close(p);
		r->close_j += jiffies - t0;
		hp_open(r, p);
		if (p->s && !hp_echo(r, p, 1 + below(&r->rs, 400)))
			FAIL(r, conn, "echo after %s failed", n->name);
	}
}

/* A random hostile mutation of a valid one-fragment message. */
static void h_mutate(struct hrun *r, struct hdt *d, u32 mr, char *what,
		     size_t size)
{
	static const char * const fields[] = {
		"creq", "flags", "reserved", "remaining", "offset", "length",
	};
	u32 f, v, bit;

	switch (below(&r->rs, 4)) {
	case 0: /* a bit flip in the header, CreditsGranted spared */
		do {
			bit = below(&r->rs, DT_HDR_LEN * 8);
		} while (bit / 8 == DT_CREDITS_GRANTED ||
			 bit / 8 == DT_CREDITS_GRANTED + 1);
		scnprintf(what, size, "flip bit %u", bit);
		if (bit < 16)
			d->creq ^= 1 << bit;
		else if (bit >= 32 && bit < 48)
			d->flags ^= 1 << (bit - 32);
		else if (bit >= 48 && bit < 64)
			d->rsvd ^= 1 << (bit - 48);
		else if (bit < 96)
			d->remaining ^= 1u << (bit - 64);
		else if (bit < 128)
			d->doff ^= 1u << (bit - 96);
		else
			d->dlen ^= 1u << (bit - 128);
		break;
	case 1: /* a field set to a boundary value */
		f = below(&r->rs, ARRAY_SIZE(fields));
		v = bounds[below(&r->rs, ARRAY_SIZE(bounds))];
		if (v == 1364 || v == 1365 || v == 1363)
			v = mr + v - 1364;
		scnprintf(what, size, "%s = %u", fields[f], v);
		switch (f) {
		case 0:
			d->creq = v;
			break;
		case 1:
			d->flags = v;
			break;
		case 2:
			d->rsvd = v;
			break;
		case 3:
			d->remaining = v;
			break;
		case 4:
			d->doff = v;
			break;
		default:
			d->dlen = v;
			break;
		}
		break;
	case 2: /* truncated */
		d->wire_len = below(&r->rs, d->wire_len);
		scnprintf(what, size, "cut to %u bytes", d->wire_len);
		break;
	default: /* extended */
		d->wire_len += 1 + below(&r->rs, mr + 64 - d->wire_len);
		scnprintf(what, size, "extended to %u bytes", d->wire_len);
		break;
	}
}

static void h_hostile_random(struct hrun *r, struct hpair *p)
{
	u8 *payload = kmalloc(H_BUF, GFP_KERNEL);
	char what[48], name[64];
	struct hdt d;
	u32 i, mr, tries = 0;
	bool ended;

	if (!payload)
		return;
	/* the named cases count too: target_fatal in the whole run */
	while (p->s && r->fatal + r->either_ended < r->target_fatal &&
	       tries++ < r->target_fatal * 4) {
		mr = p->c->max_send;
		for (i = 0; i < H_BUF; i++)
			payload[i] = rnd(&r->rs);
		h_dt_default(&d, 1 + below(&r->rs, mr - DT_PAYLOAD), 0);
		d.fill = rnd(&r->rs);
		h_mutate(r, &d, mr, what, sizeof(what));
		scnprintf(name, sizeof(name), "random %u (%s)", tries, what);
		ended = h_hostile_one(r, p, name, &d, payload);
		if (ended) {
			unsigned long t0 = jiffies;

			hp_close(p);
			r->close_j += jiffies - t0;
			if (hp_open(r, p))
				break;
			/* every 4th echoes; the others go on mutating */
			if (!(r->reconnects % 4) &&
			    !hp_echo(r, p, 1 + below(&r->rs, 400)))
				FAIL(r, conn, "echo after %s failed", name);
		}
	}
	kfree(payload);
}

/* ---- 3. legal mutations in bulk ---- */

/*
 * One upper-layer message, legal in every byte that matters but built
 * unlike a plain sender would: fragment sizes, padding and Reserved
 * garbage, larger DataOffset, trailing bytes, CreditsRequested values,
 * grants held back, empty messages between, keep-alive requests, stalls.
 */
static int h_legal_msg(struct hrun *r, struct hpair *p, u8 *data)
{
	struct hconn *c = p->c;
	u32 mr = c->max_send, len, done = 0, room, i;
	bool mutated;
	struct hdt d;
	int ret;

	switch (below(&r->rs, 16)) {
	case 0:
		len = 1;
		break;
	case 1:
		len = mr - DT_PAYLOAD;
		break;
	case 2:
		len = mr - DT_PAYLOAD + 1;
		break;
	case 3:
		len = 1 + below(&r->rs, H_MSG_MAX);
		break;
	case 4:
	case 5:
	case 6:
		len = 1 + below(&r->rs, 2 * mr);
		break;
	default:
		len = 1 + below(&r->rs, 256);
		break;
	}
	for (i = 0; i < len; i++)
		data[i] = rnd(&r->rs);
	ret = hs_expect(p->s, data, len);
	r->logical_msgs++;

	if (chance(&r->rs, 8)) {	/* an empty credit-only message first */
		h_dt_default(&d, 0, 0);
		d.creq = 1 + below(&r->rs, 255);
		d.rsvd = chance(&r->rs, 2) ? rnd(&r->rs) : 0;
		ret = ret ?: h_send_dt(c, p->s, &d, NULL, false);
		r->legal_msgs++;
		r->mutated++;
	}
	while (!ret && done < len) {
		mutated = false;
		h_dt_default(&d, 0, 0);
		d.doff = DT_PAYLOAD;
		if (chance(&r->rs, 4)) {
			d.doff = DT_PAYLOAD + 8 * (1 + below(&r->rs, 4));
			mutated = true;
		}
		room = mr - d.doff;
		d.dlen = min(len - done, room);
		if (chance(&r->rs, 3)) {	/* a shorter fragment */
			d.dlen = below(&r->rs, d.dlen + 1);
			if (!d.dlen && !done)
				d.dlen = 1;	/* the first one carries data */
			mutated = true;
		}
		d.remaining = len - done - d.dlen;
		d.wire_len = d.doff + d.dlen;
		if (!d.dlen) {	/* no payload: DataOffset 0 (2.2.3) */
			d.doff = 0;
			d.wire_len = DT_HDR_LEN;
		}
		if (chance(&r->rs, 4)) {	/* trailing bytes */
			d.wire_len += below(&r->rs, mr - d.wire_len + 1);
			mutated = true;
		}
		if (chance(&r->rs, 2)) {
			d.fill = rnd(&r->rs) | 1;
			mutated |= d.doff > DT_HDR_LEN || d.wire_len >
				   d.doff + d.dlen;
		}
		if (chance(&r->rs, 3)) {
			d.rsvd = rnd(&r->rs) | 1;
			mutated = true;
		}
		switch (below(&r->rs, 8)) {
		case 0:
			/* 1 lets smbd grant one at a time: a slow path */
			d.creq = chance(&r->rs, 16) ? 1 : 2 + below(&r->rs, 8);
			mutated = true;
			break;
		case 1:
			d.creq = 65535;
			mutated = true;
			break;
		case 2:
			d.creq = 2 + below(&r->rs, 1000);
			mutated = true;
			break;
		default:
			break;
		}
		if (c->peer_credits >= 16 && chance(&r->rs, 4)) {
			h_poll(c);
			d.cgrant = below(&r->rs, c->to_grant + 1);
			d.grant_set = true;
			mutated = true;
		}
		if (chance(&r->rs, 64)) {
			d.flags = DT_RESPONSE_REQUESTED;
			r->ka_sent++;
			mutated = true;
		}
		if (!mutated) {	/* every message gets one at least */
			d.rsvd = 0x8000 | below(&r->rs, 0x8000);
		}
		ret = h_send_dt(c, p->s, &d, data + done, false);
		done += d.dlen;
		r->legal_msgs++;
		r->mutated++;
		if (done < len && chance(&r->rs, 400)) {
			msleep(20 + below(&r->rs, 80));	/* a stall midway */
			r->stalls++;
		}
	}
	if (ret)
		return ret;
	ret = hs_drain(p->s, false);
	return ret == -EAGAIN ? 0 : ret;
}

static void h_legal_bulk(struct hrun *r, struct hpair *p)
{
	u8 *data = kmalloc(H_MSG_MAX, GFP_KERNEL);
	u64 start = r->mutated;
	int ret = 0;

	if (!data)
		return;
	while (!ret && r->mutated - start < r->target_msgs)
		ret = h_legal_msg(r, p, data);
	if (!ret)
		ret = hs_drain(p->s, true);
	if (ret || p->s->wrong)
		FAIL(r, legal, "bulk: connection %d after %llu messages, %s",
		     ret, r->mutated - start, p->s->wrong ? p->s->why : "");
	kfree(data);
}

/* A storm of empty keep-alive requests: smbd answers and stays up. */
static void h_ka_storm(struct hrun *r, struct hpair *p)
{
	struct smbd_sock_stats st;
	u32 i, n = 300;
	unsigned long end;
	u64 before;
	struct hdt d;
	int ret = 0;

	h_poll(p->c);
	p->c->got = 0;
	smbd_sock_stats(p->s->sk, &st);
	before = st.keepalives_answered;
	for (i = 0; i < n && !ret; i++) {
		h_dt_default(&d, 0, 0);
		d.flags = DT_RESPONSE_REQUESTED;
		ret = h_send_dt(p->c, p->s, &d, NULL, false);
		r->mutated++;
		r->ka_sent++;
	}
	end = jiffies + 5 * HZ;
	do {
		msleep(20);
		h_poll(p->c);
		smbd_sock_stats(p->s->sk, &st);
	} while (st.keepalives_answered - before < n &&
		 time_before(jiffies, end));
	CHECK(r, !ret && p->c->got > 0 && st.keepalives_answered - before == n,
	      "keepalive-storm", "%u requests sent (%d), smbd counted %llu, sent %llu messages",
	      n, ret, st.keepalives_answered - before, p->c->got);
	CHECK(r, !ret && hp_echo(r, p, 3000), "keepalive-storm-then-data",
	      "connection %d", ret);
}

/*
 * Credits: we stop granting; smbd may send only what we granted, then
 * must wait (NONBLOCK: -EAGAIN); a grant lets it go on.
 */
static void h_starve(struct hrun *r, struct hpair *p)
{
	struct hconn *c = p->c;
	struct iov_iter it;
	u32 sent = 0, had;
	struct kvec kv;
	u8 buf[64] = {};
	unsigned long end;
	ssize_t n = 0;

	/* Settle: what smbd holds is what we granted and it did not use. */
	msleep(50);
	h_poll(c);
	had = c->peer_credits;
	while (sent < had + 4) {
		kv.iov_base = buf;
		kv.iov_len = sizeof(buf);
		iov_iter_kvec(&it, ITER_SOURCE, &kv, 1, sizeof(buf));
		n = smbd_sock_send(p->s->sk, &it, SMBD_SEND_NONBLOCK);
		if (n != sizeof(buf))
			break;
		sent++;
	}
	msleep(50);
	h_poll(c);
	CHECK(r, n == -EAGAIN && sent <= had && !r->w.credit_bad,
	      "starve-smbd-waits", "sent %u with %u credits, then %zd",
	      sent, had, n);
	h_inbox_free(c);
	if (c->send_credits)
		h_grant(c);
	end = jiffies + 3 * HZ;
	do {
		kv.iov_base = buf;
		kv.iov_len = sizeof(buf);
		iov_iter_kvec(&it, ITER_SOURCE, &kv, 1, sizeof(buf));
		n = smbd_sock_send(p->s->sk, &it, SMBD_SEND_NONBLOCK);
		if (n == -EAGAIN)
			usleep_range(5000, 6000);
		h_poll(c);
	} while (n == -EAGAIN && time_before(jiffies, end));
	CHECK(r, n == sizeof(buf), "starve-grant-releases", "send gave %zd", n);
	msleep(20);
	h_poll(c);
	h_inbox_free(c);
}

/* ---- findings 7 and 8 of the reliability audit ---- */

/*
 * A connection on which we ask smbd for @creq credits. As the server we
 * grant smbd @grant in the Negotiate Response; as the client smbd grants
 * first, and we grant nothing yet.
 */
static int hp_open_creq(struct hrun *r, struct hpair *p, u16 creq, u16 grant)
{
	u8 *b = kmalloc(H_BUF, GFP_KERNEL);
	bool setup;
	int ret;

	if (!b)
		return -ENOMEM;
	if (r->server) {
		h_resp_base(b);
		put_unaligned_le16(creq, b + NP_CREDITS_REQ);
		put_unaligned_le16(grant, b + NP_CREDITS_GRANTED);
		ret = hp_open_server(r, p, b, NP_LEN, 0, false, &setup);
	} else {
		h_req_base(b);
		put_unaligned_le16(creq, b + NQ_CREDITS_REQ);
		ret = hp_open_client(r, p, b, NQ_LEN, &setup);
	}
	kfree(b);
	return ret;
}

/*
 * smbd's consumer sending (or, with @recv, receiving) one message,
 * blocking, off the test thread; with @stream, receiving as ksmbd does
 * (hsnd_stream()).
 */
struct hsnd {
	struct work_struct work;
	struct smbd_sock *sk;
	struct completion done;
	bool recv, stream;
	ssize_t ret;
	u32 len;
	u8 data[];
};

/*
 * @snd->len bytes of the SMB2-over-TCP stream (a 4-byte length, then the
 * message), read as ksmbd's smbd_ksmbd_read() does: smbd_sock_recv_stream()
 * without blocking, and between tries a wait for an upcall (hs_wake()).
 * 10 s without a byte ends it, as ksmbd's own timeout would.
 */
static ssize_t hsnd_stream(struct hsnd *snd, struct iov_iter *it)
{
	struct hside *s = smbd_sock_priv(snd->sk);
	unsigned long end = jiffies + 10 * HZ;
	ssize_t n;
	int ev;

	while (iov_iter_count(it)) {
		ev = atomic_read(&s->ev);
		n = smbd_sock_recv_stream(snd->sk, it, SMBD_RECV_NONBLOCK);
		if (n > 0) {
			end = jiffies + 10 * HZ;
			continue;
		}
		if (n != -EAGAIN)
			return n ?: -ECONNRESET;
		if (time_after(jiffies, end))
			return -ETIMEDOUT;
		wait_event_timeout(s->wq, atomic_read(&s->ev) != ev,
				   msecs_to_jiffies(100));
	}
	return snd->len;
}

static void hsnd_fn(struct work_struct *work)
{
	struct hsnd *snd = container_of(work, struct hsnd, work);
	struct kvec kv = { .iov_base = snd->data, .iov_len = snd->len };
	struct iov_iter it;

	iov_iter_kvec(&it, snd->recv ? ITER_DEST : ITER_SOURCE, &kv, 1,
		      snd->len);
	if (snd->stream)
		snd->ret = hsnd_stream(snd, &it);
	else
		snd->ret = snd->recv ? smbd_sock_recv(snd->sk, &it, 0, NULL) :
				       smbd_sock_send(snd->sk, &it, 0);
	complete(&snd->done);
}

/* The Send Credits smbd holds when its consumer starts sending. */
#define LC_HELD		3

/*
 * Has smbd reached the state of finding 7? Its sender waits (a credit
 * wait counted, LC_HELD - 1 segments came, the send has not returned) at
 * its last Send Credit, with @rmax receives posted, its ReceiveCreditMax
 * and target both: no buffer left to post, and every receive posted
 * granted to us (we hold as many credits). Says why not in @why.
 */
static bool h_lc_ready(struct hpair *p, struct hsnd *snd, u32 rmax, u64 waits0,
		       char *why, size_t size)
{
	struct smbd_sock_info info = {};
	struct smbd_sock_stats st;
	struct hconn *c = p->c;
	int q;

	h_poll(c);
	q = smbd_sock_query(p->s->sk, &info);
	smbd_sock_stats(p->s->sk, &st);
	if (!q && !completion_done(&snd->done) && st.credit_waits > waits0 &&
	    c->got == LC_HELD - 1 && info.send_credits == 1 &&
	    info.recv_credits == rmax && info.recv_credit_target == rmax &&
	    c->send_credits == rmax)
		return true;
	scnprintf(why, size,
		  "setup: query %d, send %s, %llu credit waits, %llu segments from smbd, smbd holds %u credits, %u receives posted (target %u, we asked %u), we hold %u",
		  q, completion_done(&snd->done) ? "returned" : "waiting",
		  st.credit_waits - waits0, c->got, info.send_credits,
		  info.recv_credits, info.recv_credit_target, rmax,
		  c->send_credits);
	return false;
}

/*
 * Finding 7: a sender waiting for its last Send Credit must be woken by a
 * receive reposted, not only by a message that grants credits.
 *
 * We ask for smbd's ReceiveCreditMax, so that every receive it can post
 * is granted to us, and grant it LC_HELD credits. Its consumer sends one
 * message of LC_HELD + 3 segments, blocking: LC_HELD - 1 go out and the
 * next waits, as the last credit may go only with a grant and smbd has no
 * buffer left to post ([MS-SMBD] 3.1.5.1). We send one empty message that
 * grants nothing and asks for a response: smbd reposts its receive, which
 * its last credit may now grant, and must send within 1 s.
 */
static void h_last_credit(struct hrun *r)
{
	static const char name[] = "last-credit-wake";
	struct smbd_sock_info info = {};
	struct smbd_sock_stats st;
	struct hsnd *snd = NULL;
	struct smbd_params sp;
	struct hpair p = {};
	unsigned long end, t0;
	struct hconn *c;
	struct hmsg *m;
	bool done = true;
	u32 rmax, maxpay, len, ms, i;
	char why[256];
	struct hdt d;
	int ret;

	/* smbd's ReceiveCreditMax: the default both roles were given */
	smbd_params_init(&sp, !r->server);
	rmax = sp.recv_credit_max;
	ret = hp_open_creq(r, &p, rmax, LC_HELD + 1);
	if (ret) {
		CHECK(r, false, name, "connect: %d", ret);
		goto out;
	}
	c = p.c;
	if (!r->server) {
		/* smbd granted us every receive; we grant it LC_HELD */
		h_dt_default(&d, 0, 0);
		d.creq = rmax;
		d.cgrant = LC_HELD;
		d.grant_set = true;
		ret = h_send_dt(c, NULL, &d, NULL, false);
	}
	/* As the initiator smbd spends one of LC_HELD + 1 on its grant. */
	end = jiffies + 3 * HZ;
	while (!ret && time_before(jiffies, end)) {
		h_poll(c);
		ret = smbd_sock_query(p.s->sk, &info);
		if (!ret && info.send_credits == LC_HELD &&
		    info.recv_credits == rmax && c->send_credits + 1 >= rmax)
			break;
		usleep_range(5000, 6000);
	}
	maxpay = info.max_send_size - DT_PAYLOAD;
	len = (LC_HELD + 3) * maxpay - maxpay / 2;
	if (ret || info.send_credits != LC_HELD || info.recv_credits != rmax ||
	    c->send_credits + 1 < rmax || len > H_MSG_MAX * 2) {
		CHECK(r, false, name,
		      "setup: %d, smbd holds %u credits (%u wanted), %u receives posted (we asked %u), we hold %u, message of %u bytes",
		      ret, info.send_credits, LC_HELD, info.recv_credits, rmax,
		      c->send_credits, len);
		goto out;
	}
	snd = kmalloc(struct_size(snd, data, len), GFP_KERNEL);
	if (!snd)
		goto out;
	INIT_WORK(&snd->work, hsnd_fn);
	init_completion(&snd->done);
	snd->sk = p.s->sk;
	snd->recv = false;
	snd->stream = false;
	snd->len = len;
	for (i = 0; i < len; i++)
		snd->data[i] = rnd(&r->rs);
	smbd_sock_stats(p.s->sk, &st);
	h_inbox_free(c);
	c->got = 0;
	done = false;
	queue_work(system_unbound_wq, &snd->work);

	/* Until it waits, then a little longer: asleep, nothing more sent. */
	end = jiffies + 3 * HZ;
	while (!h_lc_ready(&p, snd, rmax, st.credit_waits, why, sizeof(why)) &&
	       time_before(jiffies, end))
		usleep_range(2000, 3000);
	msleep(100);
	if (!h_lc_ready(&p, snd, rmax, st.credit_waits, why, sizeof(why))) {
		CHECK(r, false, name, "%s", why);
		goto finish;
	}

	/* The empty message: CreditsGranted 0, RESPONSE_REQUESTED. */
	c->got = 0;
	h_dt_default(&d, 0, 0);
	d.creq = rmax;
	d.cgrant = 0;
	d.grant_set = true;
	d.flags = DT_RESPONSE_REQUESTED;
	ret = h_send_dt(c, NULL, &d, NULL, false);
	t0 = jiffies;
	end = t0 + HZ;
	while (!ret && !c->got && !READ_ONCE(c->p.disc) &&
	       time_before(jiffies, end)) {
		wait_event_timeout(c->p.wait, !list_empty_careful(&c->p.ready) ||
				   READ_ONCE(c->p.disc), msecs_to_jiffies(10));
		h_poll(c);
	}
	ms = jiffies_to_msecs(jiffies - t0);
	CHECK(r, !ret && c->got, name,
	      "%s %u ms after our empty message granting 0 with RESPONSE_REQUESTED (send %d; smbd at its last Send Credit, %u receives posted, all granted to us, a sender waiting)",
	      c->got ? "smbd answered" : "smbd silent for", ms, ret, rmax);

finish:
	/* Credits for the rest: the message must arrive whole. */
	h_poll(c);
	if (c->send_credits && c->to_grant)
		h_grant(c);
	end = jiffies + 5 * HZ;
	while (list_empty(&c->inbox) && !READ_ONCE(c->p.disc) &&
	       time_before(jiffies, end)) {
		wait_event_timeout(c->p.wait, !list_empty_careful(&c->p.ready) ||
				   READ_ONCE(c->p.disc), msecs_to_jiffies(20));
		h_poll(c);
		if (c->to_grant >= 8 && c->send_credits)
			h_grant(c);
	}
	done = wait_for_completion_timeout(&snd->done, 5 * HZ);
	m = list_first_entry_or_null(&c->inbox, struct hmsg, node);
	CHECK(r, done && snd->ret == len && m && m->len == len &&
	      !memcmp(m->data, snd->data, len), "last-credit-wake-then-message",
	      "send %s %zd of %u bytes, we got %u%s", done ? "gave" : "still waiting,",
	      done ? snd->ret : 0, len, m ? m->len : 0,
	      m && m->len == len && memcmp(m->data, snd->data, len) ?
	      ", different" : "");
out:
	if (!done) {
		/* Its end wakes the sender; only then may the socket go. */
		h_destroy(p.c);
		p.c = NULL;
		smbd_sock_shutdown(p.s->sk);
		wait_for_completion(&snd->done);
	}
	hp_close(&p);
	if (snd)
		flush_work(&snd->work);
	kfree(snd);
}

/*
 * smbd's consumer on @p reading @len bytes, blocking or (@stream) as
 * ksmbd does, in a work item (hsnd_fn()); the caller waits for ->done
 * and frees it with kvfree().
 */
static struct hsnd *hsnd_reader(struct hpair *p, u32 len, bool stream)
{
	struct hsnd *rcv = kvmalloc(struct_size(rcv, data, len), GFP_KERNEL);

	if (!rcv)
		return NULL;
	INIT_WORK(&rcv->work, hsnd_fn);
	init_completion(&rcv->done);
	rcv->sk = p->s->sk;
	rcv->recv = true;
	rcv->stream = stream;
	rcv->len = len;
	queue_work(system_unbound_wq, &rcv->work);
	return rcv;
}

/* The few-credits peer: its CreditsRequested, and its message. */
#define FC_CREDITS	10
#define FC_SEGS		2048
#define FC_SEND		(H_MSG_MAX * 2)	/* smbd's own message, with @busy */

/*
 * A peer that holds few credits and sends a message in many tiny
 * segments (any DataLength from 0 up is legal, [MS-SMBD] 2.2.3): we ask
 * smbd for FC_CREDITS, grant it back only what we repost, as a Windows
 * client does, and send one upper-layer message of FC_SEGS bytes as
 * FC_SEGS one-byte segments while smbd's consumer waits for it in a
 * blocking receive. Each segment spends one of our credits; smbd must
 * grant them back as its receives are posted again ([MS-SMBD] 3.1.5.8,
 * 3.1.5.9), whatever it holds itself. A wait of 5 s for a credit is a
 * stall and fails the case; the longest wait is reported. At our last
 * credit we ask for a response (SMB_DIRECT_RESPONSE_REQUESTED), as a
 * Windows client does. With @busy, smbd's consumer sends a message of
 * its own meanwhile, as a server answering earlier requests does: that
 * sender, not the grant work, then holds the send path whenever smbd's
 * credits run low.
 */
static void h_few_credits(struct hrun *r, bool busy)
{
	const char *name = busy ? "few-credits-small-segments-while-sending" :
			   "few-credits-small-segments";
	unsigned long t0, w0, longest = 0;
	struct hsnd *rcv = NULL;
	struct hsnd *snd = NULL;
	bool done = true, sdone = true;
	struct hpair p = {};
	u32 i, sent = 0;
	struct hconn *c;
	struct hmsg *m;
	struct hdt d;
	int ret;

	ret = hp_open_creq(r, &p, FC_CREDITS, FC_CREDITS);
	if (ret) {
		CHECK(r, false, name, "connect: %d", ret);
		goto out;
	}
	c = p.c;
	rcv = hsnd_reader(&p, FC_SEGS, false);
	if (!rcv)
		goto out;
	done = false;
	if (busy) {
		snd = kmalloc(struct_size(snd, data, FC_SEND), GFP_KERNEL);
		if (!snd)
			goto finish;
		INIT_WORK(&snd->work, hsnd_fn);
		init_completion(&snd->done);
		snd->sk = p.s->sk;
		snd->recv = false;
		snd->stream = false;
		snd->len = FC_SEND;
		for (i = 0; i < FC_SEND; i++)
			snd->data[i] = rnd(&r->rs);
		h_inbox_free(c);
		sdone = false;
		queue_work(system_unbound_wq, &snd->work);
	}

	t0 = jiffies;
	for (i = 0; i < FC_SEGS; i++) {
		u8 byte = i * 7 + 1;

		h_dt_default(&d, 1, FC_SEGS - 1 - i);
		d.creq = FC_CREDITS;
		h_poll(c);
		if (c->send_credits == 1)
			d.flags = DT_RESPONSE_REQUESTED;
		w0 = jiffies;
		ret = h_send_dt(c, NULL, &d, &byte, false);
		if (ret)
			break;
		longest = max(longest, jiffies - w0);
		sent++;
	}
	done = wait_for_completion_timeout(&rcv->done, 5 * HZ);
	if (snd) {
		unsigned long end = jiffies + 5 * HZ;

		/* Credits for the rest of smbd's message. */
		while (!completion_done(&snd->done) && !READ_ONCE(c->p.disc) &&
		       time_before(jiffies, end)) {
			h_poll(c);
			if (c->to_grant && c->send_credits)
				h_grant(c);
			wait_event_timeout(c->p.wait,
					   !list_empty_careful(&c->p.ready) ||
					   READ_ONCE(c->p.disc),
					   msecs_to_jiffies(10));
		}
		h_poll(c);
		sdone = completion_done(&snd->done);
		m = list_first_entry_or_null(&c->inbox, struct hmsg, node);
		CHECK(r, sdone && snd->ret == FC_SEND && m &&
		      m->len == FC_SEND && !memcmp(m->data, snd->data, FC_SEND),
		      "few-credits-own-message-through",
		      "smbd's send %s %zd of %u bytes, we got %u",
		      sdone ? "gave" : "still waits", sdone ? snd->ret : 0,
		      FC_SEND, m ? m->len : 0);
	}
	for (i = 0; done && rcv->ret == FC_SEGS && i < FC_SEGS; i++)
		if (rcv->data[i] != (u8)(i * 7 + 1))
			break;
	CHECK(r, !ret && done && rcv->ret == FC_SEGS && i == FC_SEGS, name,
	      "%u of %u one-byte segments sent with %u credits (last send %d) in %u ms, longest wait for a credit %u ms; smbd's receive %s %zd%s",
	      sent, FC_SEGS, FC_CREDITS, ret,
	      jiffies_to_msecs(jiffies - t0), jiffies_to_msecs(longest),
	      done ? "gave" : "still waits", done ? rcv->ret : 0,
	      done && rcv->ret == FC_SEGS && i < FC_SEGS ?
	      ", different data" : "");
	testctl_info(r->out,
		     "%s %s: %u one-byte segments in %u ms, longest wait for a credit %u ms",
		     r->pfx, name, sent, jiffies_to_msecs(jiffies - t0),
		     jiffies_to_msecs(longest));
finish:
	if (!done || !sdone) {
		/* Its end wakes reader and sender; only then may it go. */
		h_destroy(p.c);
		p.c = NULL;
		smbd_sock_shutdown(p.s->sk);
		if (!done)
			wait_for_completion(&rcv->done);
		if (!sdone)
			wait_for_completion(&snd->done);
	}
out:
	hp_close(&p);
	if (rcv)
		flush_work(&rcv->work);
	if (snd)
		flush_work(&snd->work);
	kvfree(rcv);
	kfree(snd);
}

/* The few-credits peer of Microsoft's test suite: its message, its asks. */
#define FS_SEGS		4096
#define FS_CREQ		255

/*
 * Take exactly one message from smbd, the oldest, waiting up to @ms, and
 * look at it (h_rx(): our credits, the checks of every message, its
 * buffer posted again: one receive per message read). Unlike h_poll(),
 * it leaves the others queued and unread, what they grant not ours yet.
 * Says what came in @what. Returns the message's CreditsGranted,
 * -ENOTCONN or -ETIMEDOUT.
 */
static int h_take_one(struct hconn *c, unsigned int ms, char *what,
		      size_t size)
{
	u8 h[DT_HDR_LEN] = {};
	struct tpeer_rx *rx;
	u32 len;

	tpeer_wait_rx(&c->p, ms);
	rx = tpeer_next(&c->p);
	if (!rx)
		return READ_ONCE(c->p.disc) ? -ENOTCONN : -ETIMEDOUT;
	len = rx->len;
	memcpy(h, rx->buf, min_t(u32, len, DT_HDR_LEN));
	h_rx(c, rx);
	scnprintf(what, size,
		  "%u bytes, CreditsRequested %u, CreditsGranted %u, Flags 0x%x, RemainingDataLength %u, DataOffset %u, DataLength %u",
		  len, get_unaligned_le16(h + DT_CREDITS_REQ),
		  get_unaligned_le16(h + DT_CREDITS_GRANTED),
		  get_unaligned_le16(h + DT_FLAGS),
		  get_unaligned_le32(h + DT_REMAINING),
		  get_unaligned_le32(h + DT_DATA_OFFSET),
		  get_unaligned_le32(h + DT_DATA_LENGTH));
	return get_unaligned_le16(h + DT_CREDITS_GRANTED);
}

/*
 * Issue 40: the few-credits peer as Microsoft's MS-SMBD test suite has it
 * (SmbdDataTransfer_SmallLengthSegment, and its SDK's SmbdClient). It
 * asks for FC_CREDITS in the negotiation; its MaxReceiveSize stays H_RECV,
 * as hp_open_creq() sets none (the suite's 1024 would change nothing:
 * smbd sends it only 20-byte credit messages). Then one upper-layer
 * message of FS_SEGS bytes as one-byte segments, each asking for FS_CREQ
 * credits (smbd's target becomes its ReceiveCreditMax: no spare receive,
 * its grants follow its reader) and granting one, whatever we reposted;
 * never RESPONSE_REQUESTED. (The suite pads each segment to smbd's
 * MaxReceiveSize; not we: padding carries no credit.)
 *
 * While it holds a credit it sends. At none it takes exactly one message,
 * the oldest, waiting 5 s at most, and that message must grant: [MS-SMBD]
 * 3.1.5.8 sends an empty message only to grant or to answer
 * RESPONSE_REQUESTED. One granting nothing stops the suite, whatever
 * grant waits unread behind it, and fails the case at once. h_poll()
 * would take every message ready and add up their grants, so that such a
 * message went unseen: h_take_one() takes one. Our H_NR_RX receives hold
 * those left unread: smbd grants only while we hold at most a quarter of
 * its target, so few wait. smbd's consumer reads the message whole in a
 * blocking receive, or with @stream as ksmbd does (hsnd_stream()). The
 * messages left unread at the end must grant too; the longest wait for a
 * credit is reported.
 */
static void h_few_credits_sdk(struct hrun *r, bool stream)
{
	const char *name = stream ? "few-credits-sdk-stream" :
			   "few-credits-sdk";
	u32 i, len, sent = 0, nread = 0, zero = 0, unread = 0, behind = 0;
	unsigned long t0, w0, longest = 0;
	char what[160], why[224] = "";
	struct hsnd *rcv = NULL;
	struct hpair p = {};
	bool done = true;
	struct hconn *c;
	const u8 *data;
	struct hdt d;
	int ret, got;

	ret = hp_open_creq(r, &p, FC_CREDITS, FC_CREDITS);
	if (ret) {
		CHECK(r, false, name, "connect: %d", ret);
		goto out;
	}
	c = p.c;
	/* The stream has the message's 4-byte length first. */
	len = FS_SEGS + (stream ? 4 : 0);
	rcv = hsnd_reader(&p, len, stream);
	if (!rcv)
		goto out;
	done = false;

	t0 = jiffies;
	for (i = 0; i < FS_SEGS; i++) {
		u8 byte = i * 7 + 1;

		if (!c->send_credits) {
			w0 = jiffies;
			got = h_take_one(c, 5000, what, sizeof(what));
			longest = max(longest, jiffies - w0);
			if (got < 0) {
				ret = got;
				scnprintf(why, sizeof(why),
					  "segment %u: no credit, and no message from smbd within 5 s (%d); ",
					  i, got);
				break;
			}
			nread++;
			zero += !got;
			if (!c->send_credits) {
				ret = -EPROTO;
				scnprintf(why, sizeof(why),
					  "segment %u: no credit, and message %u from smbd (%llu in all) leaves us none: %s; ",
					  i, nread, c->got, what);
				break;
			}
		}
		h_dt_default(&d, 1, FS_SEGS - 1 - i);
		d.creq = FS_CREQ;
		d.cgrant = 1;
		d.grant_set = true;
		ret = h_post_dt(c, &d, &byte);
		if (ret)
			break;
		sent++;
	}
	if (sent == FS_SEGS)
		done = wait_for_completion_timeout(&rcv->done, 5 * HZ);
	else
		done = completion_done(&rcv->done);
	/* What we did not need to read: it must grant too. */
	while ((got = h_take_one(c, 0, what, sizeof(what))) >= 0) {
		unread++;
		behind += got;
		if (got)
			continue;
		if (!zero++)
			scnprintf(why, sizeof(why),
				  "message %llu from smbd, left unread, grants none: %s; ",
				  c->got, what);
	}
	data = rcv->data + (stream ? 4 : 0);
	for (i = 0; done && rcv->ret == len && i < FS_SEGS; i++)
		if (data[i] != (u8)(i * 7 + 1))
			break;
	if (stream && done && rcv->ret == len &&
	    get_unaligned_be32(rcv->data) != FS_SEGS)
		i = 0;
	CHECK(r, !ret && !zero && done && rcv->ret == len && i == FS_SEGS,
	      name,
	      "%s%u of %u one-byte segments sent (last post %d) in %u ms, %u messages read at no credit, %u granting none, longest wait for a credit %u ms; smbd's receive %s %zd of %u bytes%s",
	      why, sent, FS_SEGS, ret, jiffies_to_msecs(jiffies - t0), nread,
	      zero, jiffies_to_msecs(longest), done ? "gave" : "still waits",
	      done ? rcv->ret : 0, len,
	      done && rcv->ret == len && i < FS_SEGS ? ", different data" : "");
	testctl_info(r->out,
		     "%s %s: %u one-byte segments in %u ms, %u messages read at no credit, longest wait for a credit %u ms, %u messages granting none, %u left unread (granting %u)",
		     r->pfx, name, sent, jiffies_to_msecs(jiffies - t0), nread,
		     jiffies_to_msecs(longest), zero, unread, behind);
	if (!done) {
		/* Its end wakes the reader; only then may it go. */
		h_destroy(p.c);
		p.c = NULL;
		smbd_sock_shutdown(p.s->sk);
		wait_for_completion(&rcv->done);
	}
out:
	hp_close(&p);
	if (rcv)
		flush_work(&rcv->work);
	kvfree(rcv);
}

/*
 * smbd's sockets whose connection ended on our RDMA Write with Immediate,
 * kept until unload: the reason of the refusal is in their debugfs
 * refusals file alone, which the guest plan reads.
 */
#define H_KEPT_MAX	8
static DEFINE_MUTEX(h_kept_lock);
static struct hside *h_kept[H_KEPT_MAX];
static unsigned int h_nkept;

static bool h_keep(struct hside *s)
{
	bool kept = false;

	mutex_lock(&h_kept_lock);
	if (h_nkept < H_KEPT_MAX) {
		s->c = NULL;
		h_kept[h_nkept++] = s;
		kept = true;
	}
	mutex_unlock(&h_kept_lock);
	return kept;
}

/* An RDMA Write with Immediate of @len bytes of @tx to @raddr, @rkey. */
static int h_post_write_imm(struct hconn *c, struct tpeer_tx *tx, u32 len,
			    u64 raddr, u32 rkey)
{
	struct ib_sge sge = {
		.addr = tx->dma, .length = len, .lkey = c->p.pd->local_dma_lkey,
	};
	struct ib_rdma_wr wr = {
		.wr = {
			.wr_cqe = &tx->cqe, .sg_list = &sge,
			.num_sge = len ? 1 : 0,
			.opcode = IB_WR_RDMA_WRITE_WITH_IMM,
			.send_flags = IB_SEND_SIGNALED,
			.ex.imm_data = cpu_to_be32(0x5eed),
		},
		.remote_addr = raddr, .rkey = rkey,
	};
	int ret;

	ib_dma_sync_single_for_device(c->p.id->device, tx->dma, H_BUF,
				      DMA_TO_DEVICE);
	atomic_inc(&c->p.tx_busy);
	ret = ib_post_send(c->p.id->qp, &wr.wr, NULL);
	if (ret)
		atomic_dec(&c->p.tx_busy);
	return ret;
}

/* Every receive smbd posts holds a valid Data Transfer message of ours. */
static int h_prime_recvs(struct hrun *r, struct hpair *p, u32 rmax)
{
	u8 data[16];
	struct hdt d;
	u32 i, j;
	int ret = 0;

	/* The queue takes them in order: twice round. */
	for (i = 0; !ret && i < 2 * rmax; i++) {
		for (j = 0; j < sizeof(data); j++)
			data[j] = rnd(&r->rs);
		ret = hs_expect(p->s, data, sizeof(data));
		h_dt_default(&d, sizeof(data), 0);
		d.creq = rmax;
		ret = ret ?: h_send_dt(p->c, p->s, &d, data, false);
		if (!ret && !(i % 8)) {
			ret = hs_drain(p->s, false);
			ret = ret == -EAGAIN ? 0 : ret;
		}
	}
	ret = ret ?: hs_drain(p->s, true);
	return ret ?: (p->s->wrong ? -EIO : 0);
}

/*
 * Finding 8: an RDMA Write with Immediate consumes one of smbd's receives
 * and places no message in its buffer ([MS-SMBD] 3.1.5.8 takes messages
 * from Sends only). smbd must end the connection, refusing it as "not a
 * send", without reading the buffer.
 * @len 0: no key needed (IBA C9-88); refused as too short otherwise, so
 *	the reason tells (the guest plan reads it from the socket kept).
 * @len 64: into a buffer smbd's consumer registered for us to write,
 *	after every receive smbd posts has held a valid message of ours:
 *	otherwise that older message would be delivered again.
 * RoCE only: iWARP has no immediate data.
 */
static void h_write_imm(struct hrun *r, u32 len)
{
	const char *name = len ? "write-imm-64-ends" : "write-imm-0-ends";
	struct smbd_sock_info info = {};
	struct smbd_reg *reg = NULL;
	struct smbd_buf_desc desc;
	struct smbd_sock_stats st;
	struct smbd_params sp;
	struct hpair p = {};
	u64 raddr = 0, refused;
	struct iov_iter it;
	bool ended = false;
	u8 *buf = NULL;
	struct tpeer_tx *tx;
	struct kvec kv;
	u32 rkey = 0, rmax, got;
	int ret;

	/* Asking for all smbd can post: each of its buffers is posted. */
	smbd_params_init(&sp, !r->server);
	rmax = sp.recv_credit_max;
	ret = hp_open_creq(r, &p, rmax, H_NR_RX) ?:
	      smbd_sock_query(p.s->sk, &info);
	if (ret) {
		CHECK(r, false, name, "connect: %d", ret);
		goto out;
	}
	if (info.iwarp) {
		testctl_out_add(r->out, "skip %s/%s - iWARP has no immediate data",
				r->pfx, name);
		goto out;
	}
	if (len) {
		ret = h_prime_recvs(r, &p, rmax);
		if (ret) {
			CHECK(r, false, name, "setup: %d, %s", ret, p.s->why);
			goto out;
		}
		buf = kzalloc(PAGE_SIZE, GFP_KERNEL);
		if (!buf)
			goto out;
		kv.iov_base = buf;
		kv.iov_len = PAGE_SIZE;
		iov_iter_kvec(&it, ITER_DEST, &kv, 1, PAGE_SIZE);
		ret = smbd_register(p.s->sk, &it, SMBD_REG_PEER_WRITES, &desc, 1,
				    &reg);
		if (ret != 1 || desc.length < len) {
			CHECK(r, false, name, "setup: smbd_register gave %d", ret);
			goto out;
		}
		raddr = desc.offset;
		rkey = desc.token;
		/*
		 * smbd posts the registration and returns: its MR is valid
		 * once smbd's send queue ran past it, as any later message
		 * of smbd's shows (a consumer sends the descriptor in one).
		 * We learned the descriptor directly: wait for a message.
		 */
		ret = hp_from_smbd(&p, (const u8 *)"reg", 3, &got);
		if (ret) {
			CHECK(r, false, name,
			      "setup: smbd's message after registering: %d, %u bytes",
			      ret, got);
			goto out;
		}
	}
	ret = h_credit(p.c, p.s);
	tx = ret ? NULL : tpeer_tx_slot(&p.c->p);
	if (!tx) {
		CHECK(r, false, name, "setup: no credit or send slot (%d)", ret);
		goto out;
	}
	memset(tx->buf, 0x5e, len);
	smbd_sock_stats(p.s->sk, &st);
	refused = st.peer_refusals;
	ret = h_post_write_imm(p.c, tx, len, raddr, rkey);
	if (!ret)
		p.c->send_credits--;	/* it took a receive of smbd's */
	ended = !ret && hs_ends(p.s, 3000);
	smbd_sock_stats(p.s->sk, &st);
	refused = st.peer_refusals - refused;
	CHECK(r, ended && refused == 1 && !p.s->wrong, name,
	      "post %d, %s, %llu refusals, %s", ret,
	      ended ? "connection ended" : "connection still up after 3 s",
	      refused, p.s->wrong ? p.s->why : "nothing delivered");
out:
	if (reg)
		smbd_deregister(p.s->sk, reg);
	kfree(buf);
	if (ended && h_keep(p.s)) {
		testctl_info(r->out, "%s %s: smbd's socket kept until unload, for the plan's check of its refusal reason",
			     r->pfx, name);
		p.s = NULL;
	}
	hp_close(&p);
}

/* ---- a run ---- */

static void h_report_wire(struct hrun *r)
{
	struct hwire *w = &r->w;

	CHECK(r, w->data_msgs > 0 && !w->pad_bad, "smbd-padding-zero",
	      "%llu of %llu data messages from smbd with non-zero padding%s%s",
	      w->pad_bad, w->data_msgs, w->pad_bad ? ": first " : "",
	      w->pad_why);
	CHECK(r, w->msgs > 0 && !w->rsvd_bad, "smbd-reserved-zero",
	      "%llu of %llu%s%s", w->rsvd_bad, w->msgs,
	      w->rsvd_bad ? ": first " : "", w->rsvd_why);
	CHECK(r, !w->size_bad, "smbd-within-our-maxrecv", "%llu%s%s",
	      w->size_bad, w->size_bad ? ": first " : "", w->size_why);
	CHECK(r, !w->credit_bad, "smbd-within-our-credits", "%llu%s%s",
	      w->credit_bad, w->credit_bad ? ": first " : "", w->credit_why);
	CHECK(r, !w->hdr_bad, "smbd-headers-valid", "%llu%s%s", w->hdr_bad,
	      w->hdr_bad ? ": first " : "", w->hdr_why);
}

static void h_run(struct hrun *r)
{
	const struct hneg_case *negs = req_cases;
	size_t ncases = ARRAY_SIZE(req_cases);
	unsigned long t0 = jiffies, t;
	struct hpair p = {};
	size_t i;

	if (r->server) {
		negs = resp_cases;
		ncases = ARRAY_SIZE(resp_cases);
	}
	testctl_info(r->out, "%s seed %llu msgs %u fatal %u", r->pfx,
		     r->seed, r->target_msgs, r->target_fatal);

	/* 1. negotiation */
	for (i = 0; i < ncases; i++)
		h_neg_case(r, &negs[i]);
	if (r->server) {
		h_neg_silent(r, false);
		h_neg_silent(r, true);
	}
	CHECK(r, !r->fail_neg, "negotiation-messages-from-smbd", "%s",
	      r->why_neg);
	t = jiffies;
	testctl_info(r->out, "%s negotiation: %zu cases in %u ms", r->pfx,
		     ncases, jiffies_to_msecs(t - t0));

	/* 2. named Data Transfer cases */
	if (hp_open(r, &p))
		goto out;
	CHECK(r, hp_echo(r, &p, 5000), "first-echo", "both ways, 5000 bytes");
	for (i = 0; i < ARRAY_SIZE(named) && p.s; i++)
		h_named(r, &p, &named[i]);

	/* 3. legal bulk, keep-alive storm, starvation */
	if (p.s) {
		h_legal_bulk(r, &p);
		h_ka_storm(r, &p);
		h_starve(r, &p);
	}
	testctl_info(r->out,
		     "%s legal: %llu mutated messages (%llu upper-layer messages, %llu keep-alive requests, %llu stalls) in %u ms",
		     r->pfx, r->mutated, r->logical_msgs, r->ka_sent, r->stalls,
		     jiffies_to_msecs(jiffies - t));

	/* 4. random hostile mutations until enough of them were fatal */
	t = jiffies;
	if (p.s)
		h_hostile_random(r, &p);
	testctl_info(r->out,
		     "%s hostile: %llu messages, %llu fatal, %llu either ended / %llu kept, %llu legal kept, %llu connections, in %u ms",
		     r->pfx, r->hostile_msgs, r->fatal, r->either_ended,
		     r->either_kept, r->legal_kept, r->reconnects,
		     jiffies_to_msecs(jiffies - t));
	testctl_info(r->out,
		     "%s time in ms: connecting %u, closing %u, echoing %u, waiting for the end %u",
		     r->pfx, jiffies_to_msecs(r->open_j),
		     jiffies_to_msecs(r->close_j), jiffies_to_msecs(r->echo_j),
		     jiffies_to_msecs(r->ends_j));
	if (p.s)
		CHECK(r, hp_echo(r, &p, 4000), "last-echo", "after everything");
	hp_close(&p);

	/* 5. findings 7 and 8 of the reliability audit */
	h_last_credit(r);
	h_few_credits(r, false);
	h_few_credits(r, true);
	h_few_credits_sdk(r, false);
	h_few_credits_sdk(r, true);
	h_write_imm(r, 0);
	h_write_imm(r, 64);

	if (!r->server)
		h_flood(r);
out:
	CHECK(r, !r->fail_conn && r->reconnects > 1, "fresh-connections",
	      "%llu connections, %llu failed%s%s", r->reconnects, r->fail_conn,
	      r->fail_conn ? ": " : "", r->why_conn);
	CHECK(r, !r->fail_echo && r->echoes > 1, "echo-both-ways",
	      "%llu echoes, %llu failed%s%s", r->echoes, r->fail_echo,
	      r->fail_echo ? ": " : "", r->why_echo);
	CHECK(r, !r->fail_legal && r->legal_msgs >= r->target_msgs,
	      "legal-mutations-delivered",
	      "%llu messages, %llu failures%s%s", r->legal_msgs,
	      r->fail_legal, r->fail_legal ? ": " : "", r->why_legal);
	CHECK(r, !r->fail_fatal && r->fatal + r->either_ended > 0,
	      "fatal-mutations-end-connection",
	      "%llu fatal, %llu failures%s%s", r->fatal, r->fail_fatal,
	      r->fail_fatal ? ": " : "", r->why_fatal);
	CHECK(r, r->mutated >= r->target_msgs, "volume",
	      "%llu mutated messages, %u wanted", r->mutated, r->target_msgs);
	h_report_wire(r);
	testctl_out_add(r->out,
			"info hostile %s seed %llu: %llu mutated messages (%llu legal, %llu hostile: %llu fatal), %llu connections, %llu from smbd (%llu with data), %u ms",
			r->pfx, r->seed, r->mutated, r->legal_msgs,
			r->hostile_msgs, r->fatal, r->reconnects, r->w.msgs,
			r->w.data_msgs, jiffies_to_msecs(jiffies - t0));
}

/*
 * ---- cifs mode: the hostile server against the kernel SMB client ----
 *
 * The guest plan mounts (mount -t cifs -o rdma, cifs built on smbd) in a
 * loop while we serve. Every connection gets its Negotiate Request checked,
 * then meets one of the endings HC_* in turn; no mount may succeed, hang
 * or hurt the client's kernel.
 */

/* The response cases smbd must refuse, in turn. */
static const struct hneg_case *hc_bad_resp(u32 n)
{
	u32 i, k = 0, nbad = 0;

	for (i = 0; i < ARRAY_SIZE(resp_cases); i++)
		nbad += resp_cases[i].expect == X_REFUSE;
	n %= nbad;
	for (i = 0; i < ARRAY_SIZE(resp_cases); i++)
		if (resp_cases[i].expect == X_REFUSE && k++ == n)
			return &resp_cases[i];
	return &resp_cases[0];
}

/* Wait up to @ms for the client to end the connection. */
static bool hc_ends(struct hconn *c, unsigned int ms)
{
	return wait_event_timeout(c->p.wait, READ_ONCE(c->p.disc),
				  msecs_to_jiffies(ms));
}

/*
 * Spend every credit cifs's smbd granted on empty messages that grant
 * nothing back (smbd absorbs them; holding no credit of ours, it cannot
 * grant again), then send beyond. Returns whether smbd ended the
 * connection ([MS-SMBD] 3.1.5.8: a message beyond the credits).
 */
static bool hc_beyond_credits(struct hconn *c)
{
	u32 forced;

	h_exceed_credits(c, 3000, &forced);
	return hc_ends(c, 3000);
}

static void hc_one(struct hrun *r, struct hconn *c, u32 n, u8 *b, u8 *msg)
{
	const struct hnamed *nm;
	u32 kind, round, len, i;
	char what[48];
	struct hdt d;

	c->w = &r->w;
	if (!wait_for_completion_timeout(&c->p.established, 5 * HZ)) {
		FAIL(r, conn, "connection %u never established", n);
		return;
	}
	h_wait_msg(c, 5000);
	if (!c->neg_got) {
		/*
		 * cifs may give up a connect it no longer needs (a failed
		 * mount kills its reconnect): smbd then disconnects before
		 * its Negotiate Request. Silence on a live connection is not
		 * that.
		 */
		if (READ_ONCE(c->p.disc))
			r->cifs_gave_up++;
		else
			FAIL(r, conn, "connection %u: no Negotiate Request", n);
		return;
	}
	h_check_req(r, c);
	/* The endings take turns among connections that negotiated. */
	kind = r->close_only ? HC_CLOSE_AT_ONCE : r->cifs_negotiated % HC_NR;
	round = r->cifs_negotiated++ / HC_NR;
	r->cifs_ends[kind]++;
	if (kind == HC_CLOSE_AT_ONCE)
		return;
	/* A seeded start: over runs, every case comes up. */
	round += r->seed;
	if (kind == HC_BAD_RESP) {
		const struct hneg_case *nc = hc_bad_resp(round);

		len = h_neg_msg(true, nc, b, msg);
		if (h_send_resp(c, msg, len))
			return;
		if (hc_ends(c, 3000))
			r->cifs_ended_by_peer++;
		else
			FAIL(r, fatal, "%s: cifs's smbd kept the connection",
			     nc->name);
		return;
	}
	nm = &named[round % ARRAY_SIZE(named)];
	h_resp_base(msg);
	/*
	 * Beyond the credits: grant cifs's smbd only 8 credits. Its SMB2
	 * NEGOTIATE (one or two segments) and its grants spend them, and as
	 * we grant nothing back it soon cannot grant again: then what it
	 * granted is all we hold.
	 */
	if (kind == HC_NAMED_DT && nm->over_credit)
		put_unaligned_le16(8, msg + NP_CREDITS_GRANTED);
	if (h_send_resp(c, msg, NP_LEN))
		return;
	/* cifs's SMB2 NEGOTIATE request, checked as it arrives */
	for (i = 0; i < 50 && list_empty(&c->inbox) && !READ_ONCE(c->p.disc);
	     i++)
		h_wait_msg(c, 100);
	if (list_empty(&c->inbox)) {
		if (READ_ONCE(c->p.disc))
			r->cifs_gave_up++;
		else
			FAIL(r, conn, "connection %u: no first message from cifs",
			     n);
		return;
	}
	r->cifs_first++;
	for (i = 0; i < H_BUF; i++)
		b[i] = rnd(&r->rs);
	switch (kind) {
	case HC_NAMED_DT:
		h_dt_default(&d, 8, 0);
		if (nm->doff != DEF) {
			d.doff = nm->doff;
			d.dlen = nm->dlen == MRX ? c->max_send - DT_PAYLOAD :
				 nm->dlen == MRX1 ? c->max_send - DT_PAYLOAD + 1 :
				 nm->dlen;
			d.remaining = nm->remaining;
			d.wire_len = nm->wire_len == MRX ? d.doff + d.dlen :
				     nm->wire_len;
		} else {
			d.rsvd = 0xa5a5;
		}
		d.creq = nm->creq;
		d.fill = 0xee;
		if (!nm->over_credit) {
			h_send_dt(c, NULL, &d, b, false);
			break;
		}
		if (hc_beyond_credits(c))
			r->cifs_ended_by_peer++;
		else
			FAIL(r, fatal, "%s: cifs's smbd kept the connection",
			     nm->name);
		r->mutated++;
		return;
	case HC_RANDOM_DT:
		h_dt_default(&d, 64, 0);
		h_mutate(r, &d, c->max_send, what, sizeof(what));
		h_send_dt(c, NULL, &d, b, false);
		break;
	case HC_STALL:
		msleep(500 + below(&r->rs, 1500));
		return;
	default:
		return;
	}
	r->mutated++;
	if (hc_ends(c, 3000))
		r->cifs_ended_by_peer++;
}

/*
 * Serve @conns connections, or for @secs seconds: the plan's mount loop
 * makes them. Result lines: the connections served, smbd's negotiation
 * and data messages checked on the wire.
 */
static void h_cifs(struct hrun *r, u32 conns, u32 secs)
{
	unsigned long end = jiffies + secs * HZ, t0 = jiffies;
	const char *missing = NULL;
	struct hconn *c;
	u8 *b;
	u32 i;

	b = kzalloc(H_BUF * 2, GFP_KERNEL);
	if (!b)
		return;
	while (r->reconnects < conns && time_before(jiffies, end)) {
		c = h_take(&r->hl, &r->w, 500);
		if (!c)
			continue;
		hc_one(r, c, r->reconnects++, b, b + H_BUF);
		h_destroy(c);
	}
	kfree(b);
	for (i = 0; i < HC_NR; i++)
		testctl_info(r->out, "%s %s: %llu", r->pfx, hc_names[i],
			     r->cifs_ends[i]);
	CHECK(r, r->reconnects >= conns, "connections",
	      "%llu of %u in %u ms (%llu negotiated, %llu given up by cifs before negotiating, %llu first messages, %llu ended by cifs)",
	      r->reconnects, conns, jiffies_to_msecs(jiffies - t0),
	      r->cifs_negotiated, r->cifs_gave_up, r->cifs_first,
	      r->cifs_ended_by_peer);
	if (!r->close_only) {	/* cifs-close has one ending only */
		for (i = 0; i < HC_NR; i++)
			if (!r->cifs_ends[i] && !missing)
				missing = hc_names[i];
		CHECK(r, !missing, "every-ending", "%s", missing ?: "all met");
	}
	CHECK(r, !r->fail_conn, "every-connection-negotiates", "%llu%s%s",
	      r->fail_conn, r->fail_conn ? ": first " : "", r->why_conn);
	CHECK(r, !r->fail_neg, "negotiate-requests-valid", "%llu%s%s",
	      r->fail_neg, r->fail_neg ? ": first " : "", r->why_neg);
	CHECK(r, !r->fail_fatal, "refusals-end-connection",
	      "%llu kept%s%s", r->fail_fatal, r->fail_fatal ? ": first " : "",
	      r->why_fatal);
	CHECK(r, !r->w.credit_bad, "cifs-within-our-credits", "%llu%s%s",
	      r->w.credit_bad, r->w.credit_bad ? ": first " : "",
	      r->w.credit_why);
	CHECK(r, (r->w.data_msgs || r->close_only) && !r->w.pad_bad,
	      "cifs-padding-zero",
	      "%llu of %llu data messages with non-zero padding%s%s",
	      r->w.pad_bad, r->w.data_msgs, r->w.pad_bad ? ": first " : "",
	      r->w.pad_why);
	CHECK(r, !r->w.hdr_bad && !r->w.rsvd_bad && !r->w.size_bad,
	      "cifs-messages-valid", "%llu of %llu bad%s%s",
	      r->w.hdr_bad + r->w.rsvd_bad + r->w.size_bad, r->w.msgs,
	      r->w.hdr_bad ? ": first " : "", r->w.hdr_why);
}

static int h_cmd(struct testctl *tc, char *line)
{
	char role[16], ip[40];
	unsigned int port, msgs, fatal;
	unsigned long long seed;
	struct hrun *r;
	int ret;

	if (sscanf(line, "%15s %39s %u %llu %u %u", role, ip, &port, &seed,
		   &msgs, &fatal) != 6)
		return -EINVAL;
	r = kzalloc(sizeof(*r), GFP_KERNEL);
	if (!r)
		return -ENOMEM;
	r->out = &tc->out;
	r->close_only = !strcmp(role, "cifs-close");
	r->cifs = r->close_only || !strcmp(role, "cifs");
	r->server = r->cifs || !strcmp(role, "server");
	r->pfx = r->close_only ? "cifs-close" : r->cifs ? "cifs" :
		 r->server ? "server" : "client";
	r->seed = seed ?: 1;
	r->rs = r->seed;
	r->target_msgs = msgs;
	r->target_fatal = fatal;
	if (testctl_addr(ip, port, &r->addr)) {
		kfree(r);
		return -EINVAL;
	}
	if (r->server) {
		ret = tpeer_listen(&r->hl, (struct sockaddr *)&r->addr, 8,
				   &h_cfg);
	} else {
		struct smbd_params sp;

		smbd_params_init(&sp, true);
		sp.max_send_size = H_RECV;
		sp.max_recv_size = H_RECV;
		/* A buffer to register for write-imm-64-ends (h_write_imm()) */
		sp.mr_count = 2;
		ret = smbd_sock_create(&init_net, &sp, &r->lsk) ?:
		      smbd_sock_bind(r->lsk, (struct sockaddr *)&r->addr) ?:
		      smbd_sock_listen(r->lsk, 64);
	}
	if (CHECK(r, !ret, "listen", "%d", ret)) {
		if (r->cifs)
			h_cifs(r, msgs, fatal);
		else
			h_run(r);
	}
	if (r->server)
		tpeer_unlisten(&r->hl);
	smbd_sock_release(r->lsk);
	kfree(r);
	return 0;
}

static int h_cmd0(char *line)
{
	return h_cmd(&hctl[0], line);
}

static int h_cmd1(char *line)
{
	return h_cmd(&hctl[1], line);
}

static int __init smbd_hostile_init(void)
{
	int ret;

	ret = testctl_init(&hctl[0], "smbd_hostile0", OUT_MAX, 128, h_cmd0);
	if (ret)
		return ret;
	ret = testctl_init(&hctl[1], "smbd_hostile1", OUT_MAX, 128, h_cmd1);
	if (ret) {
		testctl_remove(&hctl[0]);
		testctl_out_free(&hctl[0].out);
	}
	return ret;
}

static void __exit smbd_hostile_exit(void)
{
	int i;

	for (i = 0; i < 2; i++) {
		testctl_remove(&hctl[i]);
		testctl_out_free(&hctl[i].out);
	}
	for (i = 0; i < h_nkept; i++)
		hs_free(h_kept[i]);
}

module_init(smbd_hostile_init);
module_exit(smbd_hostile_exit);
MODULE_DESCRIPTION("smbd against a hostile raw-verbs SMB Direct peer");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(SMBD);

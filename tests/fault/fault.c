// SPDX-License-Identifier: GPL-2.0
/*
 * smbd_fault.ko: fault and bad-input tests of smbd against a raw-verbs
 * peer that misbehaves on purpose, plus keep-alive between two smbd
 * sockets. Driven from the guest:
 *
 *   echo "<test> <ip> <port>" > /sys/kernel/debug/smbd_fault/ctl
 *   cat /sys/kernel/debug/smbd_fault/result
 *
 * Each test writes "ok|not ok <name> - <detail>" lines to the result
 * (tests/include/smbd_testctl.h). Tests:
 *   ka-idle       two smbd sockets, 1 s keep-alive, idle 4.5 s: still
 *                 connected, probes sent and answered, data still flows
 *   ka-dead       smbd initiator against a raw peer that negotiates and
 *                 then never answers: dropped within interval + timeout
 *   neg-silent    raw initiator connects to an smbd listener and sends
 *                 nothing: dropped by the responder's Negotiation Timer
 *   neg-silent-null  the same with a listener created with NULL params
 *   neg-flood     12 raw initiators that never negotiate: with smbd's
 *                 max_negotiating at 8, 8 are held and 4 refused and
 *                 counted; the timer frees the places for a real client
 *   neg-version   raw initiator offers only version 0x0200: answered
 *                 with STATUS_NOT_SUPPORTED, then disconnected
 *   neg-short     raw initiator sends a 19-byte request: disconnected,
 *                 no answer
 *   hold          an smbd pair over <ip> with a thread streaming data
 *                 each way, kept after the command returns; then
 *   held          both ends still moving data (before a disruption)
 *   dead          both ends report the connection lost, the streams
 *                 stopped with an error, nothing hangs (after it)
 *   release       release the held pair (also done on module unload)
 *   bad-<case>    raw responder negotiates, then sends a malformed Data
 *                 Transfer message: smbd ends the connection (-EPROTO)
 *                 cases: align, overlap, bounds, credits0, toolarge,
 *                 fragment, oversize
 *   big-nb        raw responder sends legal messages larger than all of
 *                 smbd's receive buffers together (1 MiB in 783
 *                 fragments), read by non-blocking smbd_sock_recv()
 *                 calls woken by data_ready only: each arrives whole
 *                 (or cut, -EMSGSIZE), the peer never stalls for want
 *                 of credits; then half a message and a release
 *   send-fail     raw responder grants credits but posts no receive
 *                 after smbd's first grant: a blocking smbd_sock_send()
 *                 whose send fails (rxe: RNR retry exceeded) returns an
 *                 error, not its count ([MS-SMBD] 3.1.5.4); a send the
 *                 peer could take first still returns its count
 */
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/inet.h>
#include <linux/jiffies.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uio.h>
#include <linux/unaligned.h>
#include <linux/vmalloc.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>

#include "smbd.h"
#include "smbd_pdu.h"
#include "../include/smbd_testctl.h"
#include "../include/smbd_tpeer.h"

#define RAW_NR_RX	32
#define RAW_BUF		2048
#define RESULT_MAX	8192

/* One test at a time: the ctl file runs each command under its lock. */
static struct testctl fault_tc;

static __printf(3, 4) void report(bool ok, const char *name,
				  const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	testctl_vcheck(&fault_tc.out, ok, NULL, name, fmt, ap);
	va_end(ap);
}

/* ---- the raw peer (tests/include/smbd_tpeer.h), one send buffer ---- */

struct raw_peer {
	struct tpeer t;			/* first: the library allocates us */
	u32 peer_max_recv;		/* what smbd receives from us */
	u32 credits;			/* Send Credits smbd granted us */
	u16 grant;			/* receives reposted, not granted yet */
};

static const struct tpeer_cfg raw_cfg = {
	.nr_rx = RAW_NR_RX, .nr_post = RAW_NR_RX, .nr_tx = 1,
	.buf_size = RAW_BUF, .rnr_retry = 7, .size = sizeof(struct raw_peer),
};

/* tpeer_alloc() makes the struct tpeer at the start of ours. */
static_assert(offsetof(struct raw_peer, t) == 0);

static void raw_destroy(struct raw_peer *p)
{
	if (p)
		tpeer_destroy(&p->t);
}

/* A raw initiator connected to @dst, or NULL with *@err set. */
static struct raw_peer *raw_connect(struct sockaddr *dst, int *err)
{
	struct tpeer *t = tpeer_alloc(&raw_cfg);

	*err = t ? tpeer_connect(t, dst) : -ENOMEM;
	if (*err) {
		tpeer_destroy(t);
		return NULL;
	}
	return container_of(t, struct raw_peer, t);
}

/* As a responder: answer a Negotiate Request, granting @credits. */
static int raw_negotiate_responder(struct raw_peer *p, u16 credits)
{
	struct smbd_neg_resp_pdu *r = p->t.tx[0].buf;
	struct tpeer_rx *rx = tpeer_recv(&p->t, 5000);

	if (!rx || rx->len < sizeof(struct smbd_neg_req_pdu))
		return -EPROTO;
	/*
	 * [MS-SMBD] 3.1.5.7: smbd receives at most our PreferredSendSize
	 * (1364 below), and we send from a RAW_BUF buffer.
	 */
	p->peer_max_recv = le32_to_cpu(((struct smbd_neg_req_pdu *)rx->buf)->max_receive_size);
	p->peer_max_recv = min3(p->peer_max_recv, 1364U, (u32)RAW_BUF);
	memset(r, 0, sizeof(*r));
	r->min_version = cpu_to_le16(SMBD_PROTOCOL_V1);
	r->max_version = cpu_to_le16(SMBD_PROTOCOL_V1);
	r->negotiated_version = cpu_to_le16(SMBD_PROTOCOL_V1);
	r->credits_requested = cpu_to_le16(credits);
	r->credits_granted = cpu_to_le16(credits);
	r->max_read_write_size = cpu_to_le32(1048576);
	r->preferred_send_size = cpu_to_le32(1364);
	r->max_receive_size = cpu_to_le32(RAW_BUF);
	r->max_fragmented_size = cpu_to_le32(131072);
	return tpeer_send(&p->t, sizeof(*r));
}

static void fast_params(struct smbd_params *sp, bool responder)
{
	smbd_params_init(sp, responder);
	sp->keepalive_interval_ms = 1000;
	sp->keepalive_timeout_ms = 1000;
}

/* Wait up to @ms for @sk to be no longer connected; elapsed ms or -1. */
static long wait_dropped(struct smbd_sock *sk, unsigned int ms)
{
	struct smbd_sock_info info;
	unsigned long start = jiffies;

	while (jiffies_to_msecs(jiffies - start) < ms) {
		if (smbd_sock_query(sk, &info))
			return jiffies_to_msecs(jiffies - start);
		msleep(50);
	}
	return -1;
}

/* An smbd listener on @addr with the responder's default parameters. */
static int smbd_listener(struct sockaddr *addr, struct smbd_sock **lskp)
{
	struct smbd_params sp;

	smbd_params_init(&sp, true);
	return smbd_sock_create(&init_net, &sp, lskp) ?:
	       smbd_sock_bind(*lskp, addr) ?: smbd_sock_listen(*lskp, 4);
}

/*
 * An smbd initiator (@sp, or defaults; upcalls @ops) negotiated with a
 * raw responder of shape @cfg (or raw_cfg) listening on @addr, which
 * grants 10 credits. The connect is async: the raw peer answers from
 * this thread. *@pp is the raw peer, or NULL.
 */
static int smbd_to_raw_ops(struct raw_peer **pp, struct sockaddr *addr,
			   const struct tpeer_cfg *cfg,
			   const struct smbd_params *sp,
			   const struct smbd_sock_ops *ops, void *priv,
			   struct smbd_sock **skp)
{
	struct tpeer_listener l = {};
	struct smbd_sock_info info;
	struct tpeer *t = NULL;
	int i, ret;

	*pp = NULL;
	ret = tpeer_listen(&l, addr, 1, cfg ?: &raw_cfg) ?:
	      smbd_sock_create(&init_net, sp, skp);
	if (!ret) {
		smbd_sock_set_ops(*skp, ops, priv);
		ret = smbd_sock_connect_async(*skp, addr, NULL);
	}
	if (!ret) {
		t = tpeer_take(&l, 5000);
		if (t)
			*pp = container_of(t, struct raw_peer, t);
		if (!t || !wait_for_completion_timeout(&t->established, 5 * HZ))
			ret = -ETIMEDOUT;
	}
	/* An accepted connection outlives its listener. */
	tpeer_unlisten(&l);
	ret = ret ?: raw_negotiate_responder(*pp, 10);
	for (i = 0; !ret && i < 100 && smbd_sock_query(*skp, &info); i++)
		msleep(20);
	return ret ?: smbd_sock_query(*skp, &info);
}

static int smbd_to_raw(struct raw_peer **pp, struct sockaddr *addr,
		       const struct smbd_params *sp, struct smbd_sock **skp)
{
	return smbd_to_raw_ops(pp, addr, NULL, sp, NULL, NULL, skp);
}

/* ---- the tests ---- */

static void test_ka_idle(struct sockaddr *addr)
{
	struct smbd_sock *lsk = NULL, *csk = NULL, *ssk = NULL;
	struct smbd_sock_stats cs, ss;
	struct smbd_params sp;
	struct smbd_sock_info info;
	char msg[16] = "still alive", buf[16];
	struct kvec kv;
	struct iov_iter it;
	int ret;

	fast_params(&sp, true);
	ret = smbd_sock_create(&init_net, &sp, &lsk) ?:
	      smbd_sock_bind(lsk, addr) ?: smbd_sock_listen(lsk, 4);
	if (!ret) {
		fast_params(&sp, false);
		ret = smbd_sock_create(&init_net, &sp, &csk) ?:
		      smbd_sock_connect(csk, addr) ?:
		      smbd_sock_accept(lsk, &ssk, 0);
	}
	report(!ret, "ka-idle connect", "%d", ret);
	if (ret)
		goto out;

	msleep(4500);
	ret = smbd_sock_query(csk, &info) ?: smbd_sock_query(ssk, &info);
	report(!ret, "ka-idle still connected after 4.5 s idle", "%d", ret);
	smbd_sock_stats(csk, &cs);
	smbd_sock_stats(ssk, &ss);
	report(cs.keepalives_sent + ss.keepalives_sent >= 3,
	       "ka-idle probes sent", "%llu + %llu",
	       cs.keepalives_sent, ss.keepalives_sent);
	report(cs.keepalives_answered + ss.keepalives_answered >= 3 &&
	       cs.keepalives_sent <= ss.keepalives_answered + 1 &&
	       ss.keepalives_sent <= cs.keepalives_answered + 1,
	       "ka-idle probes answered", "%llu + %llu",
	       cs.keepalives_answered, ss.keepalives_answered);
	/* No ping-pong: a handful of messages per second, not thousands. */
	report(cs.segs_sent + ss.segs_sent < 40, "ka-idle no ping-pong",
	       "%llu messages in 4.5 s", cs.segs_sent + ss.segs_sent);

	kv.iov_base = msg;
	kv.iov_len = sizeof(msg);
	iov_iter_kvec(&it, ITER_SOURCE, &kv, 1, sizeof(msg));
	ret = smbd_sock_send(csk, &it, 0);
	kv.iov_base = buf;
	iov_iter_kvec(&it, ITER_DEST, &kv, 1, sizeof(buf));
	if (ret == sizeof(msg))
		ret = smbd_sock_recv(ssk, &it, 0, NULL);
	report(ret == sizeof(msg) && !memcmp(msg, buf, sizeof(msg)),
	       "ka-idle data after idle", "%d", ret);
out:
	smbd_sock_release(csk);
	smbd_sock_release(ssk);
	smbd_sock_release(lsk);
}

static void test_ka_dead(struct sockaddr *addr)
{
	struct smbd_sock *sk = NULL;
	struct smbd_sock_stats st;
	struct raw_peer *p;
	struct smbd_params sp;
	long ms;
	int ret;

	fast_params(&sp, false);
	ret = smbd_to_raw(&p, addr, &sp, &sk);
	report(!ret, "ka-dead negotiated with the raw peer", "%d", ret);
	if (ret)
		goto out;
	/* The peer now never answers: interval 1 s + timeout 1 s. */
	ms = wait_dropped(sk, 6000);
	smbd_sock_stats(sk, &st);
	report(ms >= 0 && ms <= 4000, "ka-dead silent peer dropped in time",
	       "after %ld ms", ms);
	report(st.keepalives_sent >= 1, "ka-dead probe was sent", "%llu",
	       st.keepalives_sent);
out:
	smbd_sock_release(sk);
	raw_destroy(p);
}

/*
 * @null_params: the listener is created without parameters, as a
 * consumer that wants the defaults does; it must still run the
 * responder's timer, not the initiator's 120 s.
 */
static void test_neg_silent(struct sockaddr *addr, bool null_params)
{
	const char *name = null_params ? "neg-silent-null" : "neg-silent";
	struct smbd_sock *lsk = NULL, *ssk = NULL;
	struct raw_peer *p = NULL;
	unsigned long start;
	long ms = -1;
	int ret;

	if (null_params)
		ret = smbd_sock_create(&init_net, NULL, &lsk) ?:
		      smbd_sock_bind(lsk, addr) ?: smbd_sock_listen(lsk, 4);
	else
		ret = smbd_listener(addr, &lsk);
	if (!ret)
		p = raw_connect(addr, &ret);
	report(!ret, name, "raw initiator connected: %d", ret);
	if (ret)
		goto out;
	start = jiffies;
	/* [MS-SMBD] 3.1.7.2: the responder waits 5 s for the request. */
	if (tpeer_wait_down(&p->t, 10000))
		ms = jiffies_to_msecs(jiffies - start);
	report(ms >= 4000 && ms <= 7000, name,
	       "dropped by the responder's negotiation timer after %ld ms", ms);
	ret = smbd_sock_accept(lsk, &ssk, SMBD_RECV_NONBLOCK);
	report(ret == -EAGAIN, name, "nothing to accept: %d", ret);
out:
	smbd_sock_release(ssk);
	raw_destroy(p);
	smbd_sock_release(lsk);
}

/* The plan sets smbd's max_negotiating to this for the neg-flood test. */
#define FLOOD_ADMIT	8
#define FLOOD_EXTRA	4

/*
 * A flood of connections that never negotiate: a listener holds at most
 * max_negotiating of them, refuses and counts the rest, and once the
 * responder's Negotiation Timer has dropped them a real client gets in.
 */
static void test_neg_flood(struct sockaddr *addr)
{
	struct raw_peer *p[FLOOD_ADMIT + FLOOD_EXTRA] = {};
	bool held[FLOOD_ADMIT + FLOOD_EXTRA] = {};
	struct smbd_sock *lsk = NULL, *cli = NULL, *srv = NULL;
	struct smbd_sock_stats st;
	int up = 0, refused = 0, gone = 0, ret;
	unsigned int i;

	ret = smbd_listener(addr, &lsk);
	report(!ret, "neg-flood", "listener: %d", ret);
	if (ret)
		goto out;
	for (i = 0; i < ARRAY_SIZE(p); i++) {
		p[i] = raw_connect(addr, &ret);
		held[i] = p[i];
		if (held[i])
			up++;
		else
			refused++;
	}
	smbd_sock_stats(lsk, &st);
	report(up == FLOOD_ADMIT && refused == FLOOD_EXTRA, "neg-flood",
	       "%d held while negotiating, %d refused (want %d and %d)",
	       up, refused, FLOOD_ADMIT, FLOOD_EXTRA);
	report(st.conns_refused == FLOOD_EXTRA, "neg-flood",
	       "refusals counted: %llu", st.conns_refused);
	for (i = 0; i < ARRAY_SIZE(p); i++)
		if (held[i] && tpeer_wait_down(&p[i]->t, 10000))
			gone++;
	report(gone == up, "neg-flood",
	       "%d of %d dropped by the negotiation timer", gone, up);
	ret = smbd_sock_create(&init_net, NULL, &cli) ?:
	      smbd_sock_connect(cli, addr) ?: smbd_sock_accept(lsk, &srv, 0);
	report(!ret, "neg-flood", "a client gets in afterwards: %d", ret);
out:
	smbd_sock_release(cli);
	smbd_sock_release(srv);
	for (i = 0; i < ARRAY_SIZE(p); i++)
		raw_destroy(p[i]);
	smbd_sock_release(lsk);
}

static void test_neg_bad_request(struct sockaddr *addr, bool version)
{
	struct smbd_sock *lsk = NULL;
	struct raw_peer *p = NULL;
	struct smbd_neg_req_pdu *q;
	struct tpeer_rx *rx;
	int ret;

	ret = smbd_listener(addr, &lsk);
	if (!ret)
		p = raw_connect(addr, &ret);
	if (!ret) {
		q = p->t.tx[0].buf;
		memset(q, 0, sizeof(*q));
		q->min_version = cpu_to_le16(version ? 0x0200 : SMBD_PROTOCOL_V1);
		q->max_version = cpu_to_le16(version ? 0x0200 : SMBD_PROTOCOL_V1);
		q->credits_requested = cpu_to_le16(10);
		q->preferred_send_size = cpu_to_le32(1364);
		q->max_receive_size = cpu_to_le32(1364);
		q->max_fragmented_size = cpu_to_le32(131072);
		ret = tpeer_send(&p->t, version ? sizeof(*q) : 19);
	}
	report(!ret, version ? "neg-version request sent" :
	       "neg-short request sent", "%d", ret);
	if (ret)
		goto out;
	rx = tpeer_recv(&p->t, version ? 3000 : 1500);
	if (version) {
		struct smbd_neg_resp_pdu *r = rx ? rx->buf : NULL;
		static const u8 zero[sizeof(*r) - 4];

		/* [MS-SMBD] 3.1.5.3: failure response, other fields zero. */
		report(r && rx->len >= sizeof(*r) &&
		       le32_to_cpu(r->status) == SMBD_STATUS_NOT_SUPPORTED &&
		       le16_to_cpu(r->min_version) == SMBD_PROTOCOL_V1 &&
		       le16_to_cpu(r->max_version) == SMBD_PROTOCOL_V1 &&
		       !r->negotiated_version && !r->credits_granted &&
		       !memcmp((u8 *)r + 16, zero, 16),
		       "neg-version answered STATUS_NOT_SUPPORTED",
		       "len %u status 0x%x", rx ? rx->len : 0,
		       r ? le32_to_cpu(r->status) : 0);
	} else {
		report(!rx, "neg-short no answer", "%s",
		       rx ? "got one" : "none");
	}
	report(tpeer_wait_down(&p->t, 5000),
	       version ? "neg-version disconnected" : "neg-short disconnected",
	       "%d", p->t.cm_event);
out:
	raw_destroy(p);
	smbd_sock_release(lsk);
}

struct bad_case {
	const char *name;
	u16 credits_requested;
	u32 offset, length, remaining, wire_len;
};

static const struct bad_case bad_cases[] = {
	{ "align", 10, 25, 8, 0, 64 },
	{ "overlap", 10, 16, 8, 0, 64 },
	{ "bounds", 10, 24, 100, 0, 64 },
	{ "credits0", 0, 24, 8, 0, 32 },
	{ "toolarge", 10, 24, 8, 0x7fffffff, 32 },
	{ "short", 10, 0, 0, 0, 19 },
	{ "oversize", 10, 24, 1500, 0, 1524 },
};

static void test_bad(struct sockaddr *addr, const char *which)
{
	const struct bad_case *bc = NULL;
	struct smbd_data_hdr_pdu *h;
	struct raw_peer *p;
	struct smbd_sock *sk = NULL;
	char name[48], buf[64], n2[96];
	struct iov_iter it;
	struct kvec kv;
	unsigned int i;
	long ms;
	int ret;

	for (i = 0; i < ARRAY_SIZE(bad_cases); i++)
		if (!strcmp(which, bad_cases[i].name))
			bc = &bad_cases[i];
	if (!bc) {
		report(false, "bad", "unknown case %s", which);
		return;
	}
	snprintf(name, sizeof(name), "bad-%s", bc->name);
	ret = smbd_to_raw(&p, addr, NULL, &sk);
	snprintf(n2, sizeof(n2), "%s negotiated", name);
	report(!ret, n2, "%d", ret);
	if (ret)
		goto out;

	h = p->t.tx[0].buf;
	memset(h, 0, RAW_BUF);
	h->credits_requested = cpu_to_le16(bc->credits_requested);
	h->credits_granted = cpu_to_le16(1);
	h->remaining_data_length = cpu_to_le32(bc->remaining);
	h->data_offset = cpu_to_le32(bc->offset);
	h->data_length = cpu_to_le32(bc->length);
	ret = tpeer_send(&p->t, bc->wire_len);
	ms = wait_dropped(sk, 3000);
	snprintf(n2, sizeof(n2), "%s connection ended", name);
	report(ms >= 0, n2, "after %ld ms", ms);
	kv.iov_base = buf;
	kv.iov_len = sizeof(buf);
	iov_iter_kvec(&it, ITER_DEST, &kv, 1, sizeof(buf));
	ret = smbd_sock_recv(sk, &it, SMBD_RECV_NONBLOCK, NULL);
	snprintf(n2, sizeof(n2), "%s nothing delivered", name);
	report(ret < 0 && ret != -EAGAIN, n2, "recv says %d", ret);
	snprintf(n2, sizeof(n2), "%s peer saw the disconnect", name);
	report(tpeer_wait_down(&p->t, 5000), n2, "%d", p->t.cm_event);
out:
	smbd_sock_release(sk);
	raw_destroy(p);
}

/* ---- messages larger than every receive buffer, read non-blocking ---- */

struct big_msg {
	u32 len;
	u32 frags;		/* send only this many fragments; 0: all */
	u8 seed;
};

struct big_ctx {
	struct raw_peer *p;
	const struct big_msg *msgs;
	u32 nmsgs;
	u32 frag;		/* payload bytes per fragment */
	u32 sent;		/* fragments sent */
	int err;
	bool finished;
	struct completion done;
	atomic_t data_ready;
	wait_queue_head_t wq;
};

static u8 big_byte(u32 i, u8 seed)
{
	return (u8)(i * 131 + (i >> 9) + seed);
}

static bool big_check(const u8 *buf, u32 len, u8 seed)
{
	u32 i;

	for (i = 0; i < len; i++)
		if (buf[i] != big_byte(i, seed))
			return false;
	return true;
}

/* Take the credits of every message smbd sent us; repost their receives. */
static void raw_take_grants(struct raw_peer *p)
{
	struct smbd_data_hdr_pdu *h;
	struct tpeer_rx *rx;

	while ((rx = tpeer_next(&p->t))) {
		h = rx->buf;
		if (rx->len >= sizeof(*h))
			p->credits += le16_to_cpu(h->credits_granted);
		if (!tpeer_post_recv(&p->t, rx))
			p->grant++;
	}
}

/*
 * One Data Transfer message ([MS-SMBD] 2.2.3) carrying bytes @off to
 * @off + @n of @m, spending one of the credits smbd granted (waiting up
 * to 10 s for one) and granting back the receives we reposted.
 */
static int raw_send_frag(struct raw_peer *p, const struct big_msg *m, u32 off,
			 u32 n)
{
	struct smbd_data_hdr_pdu *h = p->t.tx[0].buf;
	u8 *d = (u8 *)h + SMBD_DATA_OFFSET;
	u32 i;

	raw_take_grants(p);
	while (!p->credits) {
		if (!wait_event_timeout(p->t.wait,
					!list_empty_careful(&p->t.ready) ||
					READ_ONCE(p->t.disc), 10 * HZ))
			return -ETIMEDOUT;
		if (READ_ONCE(p->t.disc))
			return -ECONNRESET;
		raw_take_grants(p);
	}
	p->credits--;
	memset(h, 0, SMBD_DATA_OFFSET);
	h->credits_requested = cpu_to_le16(255);
	h->credits_granted = cpu_to_le16(p->grant);
	p->grant = 0;
	h->remaining_data_length = cpu_to_le32(m->len - off - n);
	h->data_offset = cpu_to_le32(SMBD_DATA_OFFSET);
	h->data_length = cpu_to_le32(n);
	for (i = 0; i < n; i++)
		d[i] = big_byte(off + i, m->seed);
	return tpeer_send(&p->t, SMBD_DATA_OFFSET + n);
}

static int big_sender(void *arg)
{
	struct big_ctx *c = arg;
	u32 k, off, n, frags;
	int ret = 0;

	for (k = 0; !ret && k < c->nmsgs; k++) {
		const struct big_msg *m = &c->msgs[k];

		for (off = 0, frags = 0; !ret && off < m->len; off += n) {
			if (m->frags && frags == m->frags)
				break;
			n = min(c->frag, m->len - off);
			ret = raw_send_frag(c->p, m, off, n);
			if (!ret)
				c->sent++;
			frags++;
		}
	}
	c->err = ret;
	WRITE_ONCE(c->finished, true);
	wake_up(&c->wq);
	kthread_complete_and_exit(&c->done, 0);
}

static void big_data_ready(struct smbd_sock *sk)
{
	struct big_ctx *c = smbd_sock_priv(sk);

	atomic_inc(&c->data_ready);
	wake_up(&c->wq);
}

static const struct smbd_sock_ops big_ops = {
	.data_ready = big_data_ready,
};

/*
 * Read one message with non-blocking calls, sleeping only until the
 * data_ready upcall (or, with @until_done, the sender's end) and never
 * for more than 10 s: a reader nobody wakes has stalled.
 */
static ssize_t big_recv(struct big_ctx *c, struct smbd_sock *sk, void *buf,
			u32 cap, struct smbd_recv_info *ri, u32 *eagain,
			bool until_done)
{
	struct kvec kv = { .iov_base = buf, .iov_len = cap };
	struct iov_iter it;
	bool fin;
	ssize_t n;
	int before;

	for (;;) {
		before = atomic_read(&c->data_ready);
		fin = READ_ONCE(c->finished);
		iov_iter_kvec(&it, ITER_DEST, &kv, 1, cap);
		n = smbd_sock_recv(sk, &it, SMBD_RECV_NONBLOCK, ri);
		if (n != -EAGAIN || (until_done && fin))
			return n;
		(*eagain)++;
		if (!wait_event_timeout(c->wq,
					atomic_read(&c->data_ready) != before ||
					(until_done && READ_ONCE(c->finished)),
					10 * HZ))
			return -ETIMEDOUT;
	}
}

static void test_big_nb(struct sockaddr *addr)
{
	struct smbd_sock *sk = NULL;
	struct smbd_recv_info ri = {};
	struct smbd_sock_info info = {};
	struct big_msg msgs[4];
	struct task_struct *t;
	struct big_ctx *c;
	struct raw_peer *p = NULL;
	u32 max = 0, eagain = 0;
	u8 *buf = NULL;
	ssize_t n;
	int ret;

	c = kzalloc(sizeof(*c), GFP_KERNEL);
	if (!c) {
		report(false, "big-nb setup", "out of memory");
		goto out_free;
	}
	init_completion(&c->done);
	init_waitqueue_head(&c->wq);
	atomic_set(&c->data_ready, 0);
	ret = smbd_to_raw_ops(&p, addr, NULL, NULL, &big_ops, c, &sk) ?:
	      smbd_sock_query(sk, &info);
	c->p = p;
	max = info.max_fragmented_recv_size;
	if (!ret && p->peer_max_recv <= SMBD_DATA_OFFSET)
		ret = -EPROTO;
	if (!ret) {
		buf = vmalloc(max);
		ret = buf ? 0 : -ENOMEM;
	}
	report(!ret, "big-nb negotiated", "%d", ret);
	if (ret)
		goto out;
	c->frag = p->peer_max_recv - SMBD_DATA_OFFSET;

	/*
	 * The whole MaxFragmentedSize, a half one read into 100 bytes, a
	 * short one, and a whole one of which only 400 fragments come.
	 */
	msgs[0] = (struct big_msg){ .len = max, .seed = 1 };
	msgs[1] = (struct big_msg){ .len = max / 2, .seed = 2 };
	msgs[2] = (struct big_msg){ .len = 100, .seed = 3 };
	msgs[3] = (struct big_msg){ .len = max, .frags = 400, .seed = 4 };
	c->msgs = msgs;
	c->nmsgs = ARRAY_SIZE(msgs);
	t = kthread_run(big_sender, c, "smbd_big_tx");
	if (IS_ERR(t)) {
		report(false, "big-nb sender thread", "%ld", PTR_ERR(t));
		goto out;
	}

	n = big_recv(c, sk, buf, max, &ri, &eagain, false);
	smbd_sock_query(sk, &info);
	report(n == max && ri.msg_len == max && big_check(buf, max, 1),
	       "big-nb message above all receive buffers arrives whole",
	       "%zd of %u bytes in fragments of %u, %u receive credits at most; %u x -EAGAIN, data_ready %d",
	       n, max, c->frag, info.recv_credit_target, eagain,
	       atomic_read(&c->data_ready));
	if (n != max)
		goto out_sender;
	n = big_recv(c, sk, buf, 100, &ri, &eagain, false);
	report(n == -EMSGSIZE && ri.msg_len == max / 2 &&
	       big_check(buf, 100, 2),
	       "big-nb cut message: -EMSGSIZE, its length, its head",
	       "%zd, msg_len %u of %u", n, ri.msg_len, max / 2);
	n = big_recv(c, sk, buf, max, &ri, &eagain, false);
	report(n == 100 && ri.msg_len == 100 && big_check(buf, 100, 3),
	       "big-nb next message intact", "%zd", n);
	/* Half of a message: taken in, never delivered. */
	n = big_recv(c, sk, buf, max, &ri, &eagain, true);
	report(n == -EAGAIN, "big-nb half a message is not delivered", "%zd",
	       n);
out_sender:
	wait_for_completion(&c->done);
	report(!c->err && c->sent == DIV_ROUND_UP(max, c->frag) +
	       DIV_ROUND_UP(max / 2, c->frag) + 1 + 400,
	       "big-nb peer never ran out of credits",
	       "sender: %d after %u fragments", c->err, c->sent);
out:
	/* With half a message taken in: its buffer must go with the socket. */
	smbd_sock_release(sk);
out_free:
	raw_destroy(p);
	vfree(buf);
	kfree(c);
}

/* ---- a blocking send whose completion fails ---- */

/*
 * The raw responder has @nr_ok receives beyond the two that take the
 * Negotiate Request and smbd's first credit grant: the first @nr_ok
 * one-segment sends of @len bytes land, the next one meets no receive
 * (rxe: RNR NAK). The RNR retry count of smbd's queue pair comes from
 * the responder's REP: 0, as smbd itself asks, so that send completes
 * in error at once. Each blocking send must return what the provider
 * said.
 */
static void test_send_fail(struct sockaddr *addr, u32 len, int nr_ok)
{
	struct tpeer_cfg cfg = raw_cfg;
	struct smbd_sock *sk = NULL;
	struct raw_peer *p = NULL;
	char name[48], n2[96];
	struct iov_iter it;
	struct kvec kv;
	struct tpeer_rx *rx;
	u8 *msg = NULL;
	ssize_t n;
	long ms;
	int i, ret;

	snprintf(name, sizeof(name), "send-fail-%u", len);
	cfg.nr_post = 2 + nr_ok;
	cfg.rnr_retry = 0;
	msg = kmalloc(len, GFP_KERNEL);
	ret = msg ? smbd_to_raw_ops(&p, addr, &cfg, NULL, NULL, NULL, &sk) :
	      -ENOMEM;
	/* The credit grant smbd sends once negotiated: not reposted. */
	rx = ret ? NULL : tpeer_recv(&p->t, 5000);
	if (!ret && !rx)
		ret = -ETIMEDOUT;
	snprintf(n2, sizeof(n2), "%s negotiated, credits granted", name);
	report(!ret, n2, "%d", ret);
	if (ret)
		goto out;
	memset(msg, 0x5a, len);

	for (i = 0; i < nr_ok; i++) {
		kv.iov_base = msg;
		kv.iov_len = len;
		iov_iter_kvec(&it, ITER_SOURCE, &kv, 1, len);
		n = smbd_sock_send(sk, &it, 0);
		rx = n == len ? tpeer_recv(&p->t, 5000) : NULL;
		snprintf(n2, sizeof(n2), "%s send that completes returns its count",
			 name);
		report(n == len && rx, n2, "%zd, %s", n,
		       rx ? "received" : "not received");
	}
	kv.iov_base = msg;
	kv.iov_len = len;
	iov_iter_kvec(&it, ITER_SOURCE, &kv, 1, len);
	n = smbd_sock_send(sk, &it, 0);
	snprintf(n2, sizeof(n2), "%s send that fails returns an error", name);
	report(n < 0, n2, "%zd", n);
	snprintf(n2, sizeof(n2), "%s connection ended", name);
	ms = wait_dropped(sk, 5000);
	report(ms >= 0, n2, "after %ld ms", ms);
out:
	kfree(msg);
	smbd_sock_release(sk);
	raw_destroy(p);
}

/* ---- a held pair streaming data, for teardown tests ---- */

struct held_end {
	struct smbd_sock *sk;
	struct task_struct *tx, *rx;
	atomic64_t sent, recvd;
	atomic_t changes;		/* state_change upcalls */
	int changes_held;		/* ... when "held" last looked */
	int tx_err, rx_err;
};

static struct smbd_sock *held_lsk;
static struct held_end held[2];

/* [MS-SMBD] 3.1.7.1: the consumer is told the connection was lost. */
static void held_state_change(struct smbd_sock *sk)
{
	struct held_end *e = smbd_sock_priv(sk);

	atomic_inc(&e->changes);
}

static const struct smbd_sock_ops held_ops = {
	.state_change = held_state_change,
};

static int held_tx(void *arg)
{
	struct held_end *e = arg;
	static char buf[8192];
	struct iov_iter it;
	struct kvec kv;
	ssize_t n;

	while (!kthread_should_stop()) {
		kv.iov_base = buf;
		kv.iov_len = sizeof(buf);
		iov_iter_kvec(&it, ITER_SOURCE, &kv, 1, sizeof(buf));
		n = smbd_sock_send(e->sk, &it, 0);
		if (n < 0) {
			e->tx_err = n;
			break;
		}
		atomic64_add(n, &e->sent);
	}
	while (!kthread_should_stop())
		msleep(20);
	return 0;
}

static int held_rx(void *arg)
{
	struct held_end *e = arg;
	struct iov_iter it;
	struct kvec kv;
	char *buf;
	ssize_t n;

	buf = kmalloc(16384, GFP_KERNEL);
	while (buf && !kthread_should_stop()) {
		kv.iov_base = buf;
		kv.iov_len = 16384;
		iov_iter_kvec(&it, ITER_DEST, &kv, 1, 16384);
		n = smbd_sock_recv(e->sk, &it, 0, NULL);
		if (n < 0) {
			e->rx_err = n;
			break;
		}
		atomic64_add(n, &e->recvd);
	}
	kfree(buf);
	while (!kthread_should_stop())
		msleep(20);
	return 0;
}

static void held_release(void)
{
	int i;

	/* Shut down first so blocked senders and readers return. */
	for (i = 0; i < 2; i++)
		if (held[i].sk)
			smbd_sock_shutdown(held[i].sk);
	for (i = 0; i < 2; i++) {
		if (held[i].tx)
			kthread_stop(held[i].tx);
		if (held[i].rx)
			kthread_stop(held[i].rx);
		smbd_sock_release(held[i].sk);
		memset(&held[i], 0, sizeof(held[i]));
	}
	smbd_sock_release(held_lsk);
	held_lsk = NULL;
}

static void test_hold(struct sockaddr *addr)
{
	int i, ret;

	held_release();
	ret = smbd_sock_create(&init_net, NULL, &held_lsk) ?:
	      smbd_sock_bind(held_lsk, addr) ?: smbd_sock_listen(held_lsk, 2) ?:
	      smbd_sock_create(&init_net, NULL, &held[0].sk) ?:
	      smbd_sock_connect(held[0].sk, addr) ?:
	      smbd_sock_accept(held_lsk, &held[1].sk, 0);
	for (i = 0; !ret && i < 2; i++) {
		smbd_sock_set_ops(held[i].sk, &held_ops, &held[i]);
		held[i].tx = kthread_run(held_tx, &held[i], "smbd_held_tx%d", i);
		held[i].rx = kthread_run(held_rx, &held[i], "smbd_held_rx%d", i);
		if (IS_ERR(held[i].tx) || IS_ERR(held[i].rx)) {
			ret = -ENOMEM;
			held[i].tx = IS_ERR(held[i].tx) ? NULL : held[i].tx;
			held[i].rx = IS_ERR(held[i].rx) ? NULL : held[i].rx;
		}
	}
	report(!ret, "hold connected and streaming", "%d", ret);
	if (ret)
		held_release();
}

static void test_held(bool expect_dead)
{
	s64 before[2], after[2];
	struct smbd_sock_info info;
	int i, lost = 0, ms;

	if (!held[0].sk || !held[1].sk) {
		report(false, expect_dead ? "dead" : "held", "no held pair");
		return;
	}
	/*
	 * Dead: first until both ends know (the second end hears of it from
	 * the first, and may still hand its reader what had arrived).
	 */
	for (ms = 0; expect_dead && ms < 2000; ms += 50) {
		if (smbd_sock_query(held[0].sk, &info) &&
		    smbd_sock_query(held[1].sk, &info))
			break;
		msleep(50);
	}
	msleep(expect_dead ? 100 : 0);
	for (i = 0; i < 2; i++)
		before[i] = atomic64_read(&held[i].recvd);
	/*
	 * Progress, not speed: a live pair moves data both ways within 5 s
	 * even on a loaded emulated machine; a dead one moves none in 1 s.
	 */
	for (ms = 0; ms < (expect_dead ? 1000 : 5000); ms += 250) {
		msleep(250);
		if (!expect_dead &&
		    atomic64_read(&held[0].recvd) > before[0] &&
		    atomic64_read(&held[1].recvd) > before[1])
			break;
	}
	for (i = 0; i < 2; i++) {
		after[i] = atomic64_read(&held[i].recvd);
		lost += smbd_sock_query(held[i].sk, &info) != 0;
	}
	if (!expect_dead) {
		for (i = 0; i < 2; i++)
			held[i].changes_held = atomic_read(&held[i].changes);
		struct smbd_sock_info i0 = {}, i1 = {};
		struct smbd_sock_stats s0, s1;

		smbd_sock_query(held[0].sk, &i0);
		smbd_sock_query(held[1].sk, &i1);
		smbd_sock_stats(held[0].sk, &s0);
		smbd_sock_stats(held[1].sk, &s1);
		report(!lost && after[0] > before[0] && after[1] > before[1],
		       "held both ends moving data",
		       "%lld and %lld bytes in %d ms; credits %u/%u posted %u/%u waits %llu/%llu segs %llu/%llu",
		       after[0] - before[0], after[1] - before[1], ms + 250,
		       i0.send_credits, i1.send_credits, i0.recv_credits,
		       i1.recv_credits, s0.credit_waits, s1.credit_waits,
		       s0.segs_sent, s1.segs_sent);
		return;
	}
	report(lost == 2, "dead both ends report the connection lost",
	       "%d of 2", lost);
	/* The upcall comes from smbd's work queue: give it 2 s. */
	for (ms = 0; ms < 2000; ms += 50) {
		if (atomic_read(&held[0].changes) > held[0].changes_held &&
		    atomic_read(&held[1].changes) > held[1].changes_held)
			break;
		msleep(50);
	}
	report(atomic_read(&held[0].changes) > held[0].changes_held &&
	       atomic_read(&held[1].changes) > held[1].changes_held,
	       "dead both consumers told (state_change)",
	       "%d and %d upcalls since held",
	       atomic_read(&held[0].changes) - held[0].changes_held,
	       atomic_read(&held[1].changes) - held[1].changes_held);
	report(after[0] == before[0] && after[1] == before[1],
	       "dead no data moves any more", "%lld and %lld bytes",
	       after[0] - before[0], after[1] - before[1]);
	report(held[0].tx_err && held[1].tx_err && held[0].rx_err &&
	       held[1].rx_err, "dead blocked senders and readers returned",
	       "tx %d %d rx %d %d", held[0].tx_err, held[1].tx_err,
	       held[0].rx_err, held[1].rx_err);
}

/*
 * ---- async connects while the device goes away ----
 *
 * "async-start": a listener, and a thread that starts an asynchronous
 * connect to it every 50 ms and keeps the sockets, so that when the
 * guest deletes the device connects are at every step (resolving,
 * connecting, negotiating, connected). "async-check": every connect
 * started must have had its done() exactly once within 2 s of the
 * removal, and the connected ones their state_change ([MS-SMBD] 3.1.7.1).
 */
#define ASYNC_MAX	64

struct async_conn {
	struct smbd_sock *sk;
	atomic_t done;			/* done() calls */
	int status;
	atomic_t changes;		/* state_change calls after done() */
};

static struct async_conn async_conns[ASYNC_MAX];
static atomic_t async_n;
static struct smbd_sock *async_lsk;
static struct task_struct *async_task, *async_accept_task;
static struct sockaddr_storage async_addr;

static void async_done(struct smbd_sock *sk, int status)
{
	struct async_conn *c = smbd_sock_priv(sk);

	c->status = status;
	atomic_inc(&c->done);
}

static void async_state_change(struct smbd_sock *sk)
{
	struct async_conn *c = smbd_sock_priv(sk);

	if (atomic_read(&c->done))
		atomic_inc(&c->changes);
}

static const struct smbd_sock_ops async_ops = {
	.state_change = async_state_change,
};

static int async_thread(void *arg)
{
	struct async_conn *c;
	int i;

	while (!kthread_should_stop() && atomic_read(&async_n) < ASYNC_MAX) {
		i = atomic_read(&async_n);
		c = &async_conns[i];
		if (smbd_sock_create(&init_net, NULL, &c->sk))
			break;
		smbd_sock_set_ops(c->sk, &async_ops, c);
		if (smbd_sock_connect_async(c->sk,
					    (struct sockaddr *)&async_addr,
					    async_done)) {
			/* Refused at once (no device): no done() is due. */
			smbd_sock_release(c->sk);
			c->sk = NULL;
			msleep(50);
			continue;
		}
		atomic_inc(&async_n);
		msleep(50);
	}
	while (!kthread_should_stop())
		msleep(20);
	return 0;
}

/* The listener's children: accepted and kept until async-check. */
static struct smbd_sock *async_children[ASYNC_MAX];

static int async_accept_thread(void *arg)
{
	struct smbd_sock *nsk;
	int n = 0;

	while (!kthread_should_stop()) {
		if (n < ASYNC_MAX && !smbd_sock_accept(async_lsk, &nsk, 0))
			async_children[n++] = nsk;
		else
			msleep(20);
	}
	return 0;
}

static void async_release(void)
{
	int i;

	if (async_task)
		kthread_stop(async_task);
	async_task = NULL;
	if (async_lsk)
		smbd_sock_shutdown(async_lsk);
	if (async_accept_task)
		kthread_stop(async_accept_task);
	async_accept_task = NULL;
	for (i = 0; i < ASYNC_MAX; i++) {
		smbd_sock_release(async_conns[i].sk);
		smbd_sock_release(async_children[i]);
		async_children[i] = NULL;
	}
	memset(async_conns, 0, sizeof(async_conns));
	atomic_set(&async_n, 0);
	smbd_sock_release(async_lsk);
	async_lsk = NULL;
}

static void test_async_start(struct sockaddr *addr)
{
	int ret;

	async_release();
	memcpy(&async_addr, addr, sizeof(async_addr));
	ret = smbd_sock_create(&init_net, NULL, &async_lsk) ?:
	      smbd_sock_bind(async_lsk, addr) ?:
	      smbd_sock_listen(async_lsk, ASYNC_MAX);
	if (!ret) {
		async_accept_task = kthread_run(async_accept_thread, NULL,
						"smbd_async_a");
		if (IS_ERR(async_accept_task)) {
			ret = PTR_ERR(async_accept_task);
			async_accept_task = NULL;
		}
	}
	if (!ret) {
		async_task = kthread_run(async_thread, NULL, "smbd_async_c");
		if (IS_ERR(async_task)) {
			ret = PTR_ERR(async_task);
			async_task = NULL;
		}
	}
	report(!ret, "async-start connects under way", "%d", ret);
	if (ret)
		async_release();
}

static void test_async_check(void)
{
	int i, n, ms, missing = 0, twice = 0, up = 0, untold = 0;

	if (async_task)
		kthread_stop(async_task);
	async_task = NULL;
	n = atomic_read(&async_n);
	for (ms = 0; ms <= 2000; ms += 50) {
		missing = 0;
		for (i = 0; i < n; i++)
			missing += !atomic_read(&async_conns[i].done);
		if (!missing)
			break;
		msleep(50);
	}
	for (i = 0; i < n; i++) {
		struct async_conn *c = &async_conns[i];

		twice += atomic_read(&c->done) > 1;
		/*
		 * The event work that calls done(0) calls state_change too:
		 * a connection that was up and was then lost had two.
		 */
		if (atomic_read(&c->done) && !c->status) {
			up++;
			untold += atomic_read(&c->changes) < 2;
		}
	}
	report(n > 0 && !missing,
	       "async every connect told (done) after the device went",
	       "%d connects, %d without done() 2 s after", n, missing);
	report(!twice, "async done() called once", "%d called twice", twice);
	report(!untold, "async connected ones told the connection was lost",
	       "%d of %d connected had no state_change", untold, up);
	async_release();
}

/*
 * [MS-SMBD] 6.1, 6.2 over iWARP: the IRD/ORD negotiate header, the only
 * way an MPA v1 peer (Windows, older Chelsio) learns them. The raw peer
 * reads back the header smbd sends and sends smbd other values.
 */
static void irdord_put(u8 *b, u32 ird, u32 ord, bool le)
{
	if (le) {
		put_unaligned_le32(ird, b);
		put_unaligned_le32(ord, b + 4);
	} else {
		put_unaligned_be32(ird, b);
		put_unaligned_be32(ord, b + 4);
	}
}

/* @addr with the next port: a second listener beside the first. */
static void next_port(struct sockaddr_storage *ss, struct sockaddr *addr)
{
	memcpy(ss, addr, sizeof(*ss));
	if (ss->ss_family == AF_INET6) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;

		s6->sin6_port = htons(ntohs(s6->sin6_port) + 1);
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)ss;

		s4->sin_port = htons(ntohs(s4->sin_port) + 1);
	}
}

/*
 * A raw initiator offering rdma_cm IRD/ORD 16 and @hdr (or none) to the
 * smbd listener at @addr: 0 once accepted, the reply's private data in
 * @t; or tpeer_connect()'s error.
 */
static int irdord_connect(struct sockaddr *addr, const u8 *hdr,
			  struct tpeer **tp)
{
	struct tpeer_cfg cfg = raw_cfg;

	cfg.priv = hdr;
	cfg.priv_len = hdr ? 8 : 0;
	cfg.ird = 16;
	cfg.ord = 16;
	*tp = tpeer_alloc(&cfg);
	return *tp ? tpeer_connect(*tp, addr) : -ENOMEM;
}

/* The reply's header as "IRD/ORD", or "none" */
static void irdord_str(const struct tpeer *t, char *b, size_t n, u32 *ird,
		       u32 *ord)
{
	*ird = 0;
	*ord = 0;
	if (t->cm_priv_len < 8) {
		snprintf(b, n, "none (%u bytes)", t->cm_priv_len);
		return;
	}
	*ird = get_unaligned_be32(t->cm_priv);
	*ord = get_unaligned_be32(t->cm_priv + 4);
	snprintf(b, n, "IRD %u ORD %u", *ird, *ord);
}

static void test_irdord(struct sockaddr *addr)
{
	static const struct {
		const char *name;
		u32 ird, ord;
		bool le, none;
		int want;		/* tpeer_connect()'s result */
		u32 want_ird, want_ord;	/* in smbd's reply; 0: no header */
	} acc[] = {
		/* smbd: IRD min(32, 16), ORD min(8, 16) from rdma_cm */
		{ "accept-header", 3, 2, false, false, 0, 3, 2 },
		{ "accept-header-large", 64, 64, false, false, 0, 8, 16 },
		{ "accept-legacy-le", 5, 4, true, false, 0, 5, 4 },
		{ "accept-ird-zero-refused", 0, 4, false, false, -ECONNREFUSED },
		{ "accept-ord-zero-refused", 4, 0, false, false, -ECONNREFUSED },
		{ "accept-no-header", 0, 0, false, true, 0, 0, 0 },
	};
	struct smbd_sock *lsk = NULL, *csk = NULL;
	struct sockaddr_storage ss2;
	struct tpeer_cfg cfg = raw_cfg;
	struct smbd_sock_info info = {};
	struct raw_peer *p = NULL;
	struct smbd_params sp;
	struct tpeer *t;
	u32 ird, ord;
	char got[48];
	u8 hdr[8];
	int i, ret;

	/*
	 * smbd connects: its request carries the IRD/ORD it gives rdma_cm
	 * (what an MPA v1 peer has no other way to learn), and it takes
	 * what the reply's header says.
	 */
	irdord_put(hdr, 1, 2, false);
	cfg.priv = hdr;
	cfg.priv_len = sizeof(hdr);
	cfg.ird = 16;
	cfg.ord = 16;
	smbd_params_init(&sp, false);
	ret = smbd_to_raw_ops(&p, addr, &cfg, &sp, NULL, NULL, &csk);
	if (ret) {
		report(false, "irdord connect", "%d", ret);
	} else {
		t = &p->t;
		ird = t->cm_priv_len >= 8 ? get_unaligned_be32(t->cm_priv) : 0;
		ord = t->cm_priv_len >= 8 ? get_unaligned_be32(t->cm_priv + 4) : 0;
		report(t->cm_priv_len >= 8 && ird && ord &&
		       ird == t->cm_init && ord == t->cm_resp,
		       "irdord request-header",
		       "%u bytes: IRD %u ORD %u; rdma_cm's (MPA): IRD %u ORD %u",
		       t->cm_priv_len, ird, ord, t->cm_init, t->cm_resp);
		smbd_sock_query(csk, &info);
		report(info.responder_resources == 1 && info.initiator_depth == 2,
		       "irdord reply-taken",
		       "the reply said IRD 1 ORD 2; smbd now IRD %u ORD %u",
		       info.responder_resources, info.initiator_depth);
	}
	if (csk)
		smbd_sock_release(csk);
	raw_destroy(p);

	/* smbd accepts: its reply follows 6.2 from what it was sent. */
	next_port(&ss2, addr);
	ret = smbd_listener((struct sockaddr *)&ss2, &lsk);
	if (ret) {
		report(false, "irdord listen", "%d", ret);
		goto out;
	}
	for (i = 0; i < ARRAY_SIZE(acc); i++) {
		irdord_put(hdr, acc[i].ird, acc[i].ord, acc[i].le);
		ret = irdord_connect((struct sockaddr *)&ss2,
				     acc[i].none ? NULL : hdr, &t);
		if (t)
			irdord_str(t, got, sizeof(got), &ird, &ord);
		else
			strscpy(got, "-", sizeof(got));
		report(ret == acc[i].want &&
		       (ret || (ird == acc[i].want_ird && ord == acc[i].want_ord)),
		       acc[i].name,
		       "sent %s IRD %u ORD %u: connect %d (want %d), reply %s (want IRD %u ORD %u)",
		       acc[i].none ? "no header, not" :
		       acc[i].le ? "little-endian" : "network order",
		       acc[i].ird, acc[i].ord, ret, acc[i].want, got,
		       acc[i].want_ird, acc[i].want_ord);
		tpeer_destroy(t);
	}
out:
	if (lsk)
		smbd_sock_release(lsk);
}

static int fault_run(char *cmd)
{
	char test[32], ip[40];
	struct sockaddr_storage ss;
	unsigned int port;

	strscpy(ip, "0.0.0.0", sizeof(ip));
	port = 0;
	if (sscanf(cmd, "%31s %39s %u", test, ip, &port) < 1 ||
	    testctl_addr(ip, port, &ss))
		return -EINVAL;

	if (!strcmp(test, "hold"))
		test_hold((struct sockaddr *)&ss);
	else if (!strcmp(test, "held"))
		test_held(false);
	else if (!strcmp(test, "dead"))
		test_held(true);
	else if (!strcmp(test, "release"))
		held_release();
	else if (!strcmp(test, "async-start"))
		test_async_start((struct sockaddr *)&ss);
	else if (!strcmp(test, "async-check"))
		test_async_check();
	else if (!strcmp(test, "ka-idle"))
		test_ka_idle((struct sockaddr *)&ss);
	else if (!strcmp(test, "ka-dead"))
		test_ka_dead((struct sockaddr *)&ss);
	else if (!strcmp(test, "neg-silent"))
		test_neg_silent((struct sockaddr *)&ss, false);
	else if (!strcmp(test, "neg-silent-null"))
		test_neg_silent((struct sockaddr *)&ss, true);
	else if (!strcmp(test, "neg-flood"))
		test_neg_flood((struct sockaddr *)&ss);
	else if (!strcmp(test, "neg-version"))
		test_neg_bad_request((struct sockaddr *)&ss, true);
	else if (!strcmp(test, "neg-short"))
		test_neg_bad_request((struct sockaddr *)&ss, false);
	else if (!strncmp(test, "bad-", 4))
		test_bad((struct sockaddr *)&ss, test + 4);
	else if (!strcmp(test, "big-nb"))
		test_big_nb((struct sockaddr *)&ss);
	else if (!strcmp(test, "irdord"))
		test_irdord((struct sockaddr *)&ss);
	else if (!strcmp(test, "send-fail"))
		test_send_fail((struct sockaddr *)&ss, 1000, 1);
	else if (!strcmp(test, "send-fail-copied"))
		test_send_fail((struct sockaddr *)&ss, 100, 1);
	else if (!strcmp(test, "send-fail-credits"))
		test_send_fail((struct sockaddr *)&ss, 65536, 0);
	else
		report(false, test, "unknown test");
	return 0;
}

static int __init smbd_fault_init(void)
{
	return testctl_init(&fault_tc, "smbd_fault", RESULT_MAX, 95, fault_run);
}

static void __exit smbd_fault_exit(void)
{
	testctl_remove(&fault_tc);
	/* Connections still open at unload are ended and freed here. */
	held_release();
	async_release();
	testctl_out_free(&fault_tc.out);
}

module_init(smbd_fault_init);
module_exit(smbd_fault_exit);
MODULE_DESCRIPTION("smbd fault and bad-input tests against a raw verbs peer");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(SMBD);

// SPDX-License-Identifier: GPL-2.0
/*
 * smbd_test: transport tests of smbd through its public API only
 * (include/smbd.h), driven from user space through debugfs:
 *
 *   /sys/kernel/debug/smbd_test/ctl      write one command line
 *   /sys/kernel/debug/smbd_test/result   what the last command found
 *
 * Commands (ADDR is an IPv4 address, PORT a number):
 *
 *   listen ADDR PORT
 *	start a server: a listener thread that accepts connections and one
 *	thread per connection serving the test protocol below.
 *   stop ADDR PORT
 *	stop that server; checks that every connection had ended by itself
 *	once its client was gone, with -ENOTCONN, -ECONNRESET or
 *	-ECONNABORTED.
 *   echo ADDR PORT [sizes=0,1,...,max] [random=N] [seed=S] [iwarp=0|1]
 *	[msize=B]
 *	one connection (whose negotiated message size both ways must be B,
 *	if given); each size (and N random sizes) is sent from a
 *	seeded PRNG with a CRC32 trailer, echoed by the server and compared
 *	byte for byte, through ITER_KVEC and ITER_BVEC at odd offsets; plus
 *	the API edges (non-blocking receive, -EMSGSIZE, oversized send,
 *	listen, accept and bind on a connection,
 *	SMBD_SEND_MORE, upcalls) and the server's own count of what it got.
 *   stream ADDR PORT [conns=N] [bytes=B] [msg=B] [seed=S] [dir=up|down|both]
 *	N connections (odd ones through smbd_sock_connect_async()) each
 *	move B bytes in messages of msg bytes at once: the client sends
 *	(up, the default), the server sends (down), or each second pair of
 *	connections the other way (both: connections 2, 3, 6, 7, ... down);
 *	the receiver checks every byte; prints the aggregate rate.
 *   credit ADDR PORT [msg=B] [stall_ms=MS]
 *	the server stops reading for stall_ms: a blocking send must block
 *	until it reads again, a non-blocking one must see -EAGAIN (or a
 *	partial count) and then write_space; nothing may be lost.
 *   refused ADDR PORT
 *	connecting where nobody listens fails, and does not hang.
 *   defport ADDR 0 iwarp=0|1
 *	port 0 picks SMB Direct's port of the device, for a listener and
 *	for a connection; the wildcard address needs a port.
 *   devclass ADDR PORT iwarp=0|1
 *	sockets kept to one device class: bind, connect and a wildcard
 *	listener of the wrong class refuse (PORT and PORT + 1).
 *   rr ADDR PORT [msg=B] [count=N]
 *	(the benchmark) N round trips of one msg-byte message through the
 *	ECHO server, each sent when the last came back; prints round trips
 *	per second, p50 and p99.
 *   connrate ADDR PORT [count=N]
 *	(the benchmark) N connections set up and released one after the
 *	other; prints setups per second and the connect's p50 and p99.
 * ADDR is IPv4 or IPv6 (without brackets).
 * Every client command also takes timeout=SECONDS (default 120): past
 * it, its sockets are shut down so that blocked calls return.
 *
 * The result file has one line per check, "ok NAME [- detail]" or
 * "not ok NAME - reason", and "info TEXT" lines.
 *
 * Test protocol. A control message is exactly ST_CTL_LEN bytes starting
 * with ST_CTL_MAGIC (random data never matches it). The client opens with
 * HELLO(mode), the server answers READY. ECHO: every other message is
 * sent back as it came. SINK: every other message is a struct st_hdr and
 * a slice of a pattern both sides derive from the seed; the server checks
 * all of it. STALL: like SINK after the server slept stall_ms. SOURCE: the
 * server sends such messages, a[3] bytes in all, and the client checks
 * them. END makes the server answer STATS with what it counted (SOURCE:
 * sent) since HELLO.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bvec.h>
#include <linux/completion.h>
#include <linux/crc32.h>
#include <linux/delay.h>
#include <linux/err.h>
#include <linux/in.h>
#include <linux/inet.h>
#include <linux/in6.h>
#include <net/ipv6.h>
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/list.h>
#include <linux/math64.h>
#include <linux/minmax.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/prandom.h>
#include <linux/sched/debug.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/string.h>
#include <linux/uio.h>
#include <linux/vmalloc.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <net/net_namespace.h>

#include "smbd.h"
#include "../include/smbd_testbuf.h"
#include "../include/smbd_testctl.h"
#include "../include/smbd_testsrv.h"

#define ST_CTL_MAGIC	"smbd_test ctl v1"	/* 16 bytes, no NUL on the wire */
#define ST_CTL_LEN	64
#define ST_DATA_MAGIC	0x7e57da7a
#define ST_PAT_SLACK	4096		/* pattern offsets vary in [0, 4096) */
#define ST_MAX_SIZES	64
#define ST_MAX_SOCKS	40
#define ST_MAX_CONNS	32
#define ST_OUT_MAX	(64 << 10)
#define ST_LINE_MAX	1024
#define ST_CANARY	0xa5

enum st_op { ST_OP_HELLO = 1, ST_OP_READY, ST_OP_END, ST_OP_STATS };
enum st_mode { ST_MODE_NONE, ST_MODE_ECHO, ST_MODE_SINK, ST_MODE_STALL,
	       ST_MODE_SOURCE };

/*
 * HELLO: a[0] seed, a[1] largest message (SINK/STALL/SOURCE), a[2] stall
 * ms (STALL), a[3] bytes the server sends (SOURCE)
 */
/* STATS: a[0] messages, a[1] bytes, a[2] bad, a[3] empty, a[4] detail */
struct st_ctl {
	u8 magic[16];
	__le32 op;
	__le32 mode;
	__le64 a[5];
};

static_assert(sizeof(struct st_ctl) == ST_CTL_LEN);

/* Head of a SINK/STALL/SOURCE data message; a pattern slice follows. */
struct st_hdr {
	__le32 magic;
	__le32 seq;
	__le32 len;
	__le32 zero;
};

/* ------------------------------------------------------------ output */

static struct testctl st_tc;	/* ctl, result; its lock runs commands */

#define st_out_add(fmt, ...) testctl_out_add(&st_tc.out, fmt, ##__VA_ARGS__)
#define st_info(fmt, ...) st_out_add("info " fmt, ##__VA_ARGS__)

/* st_check: one check result; the detail goes after " - " when given */
static __printf(3, 4) bool st_check(bool ok, const char *name,
				    const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ok = testctl_vcheck(&st_tc.out, ok, NULL, name, fmt, ap);
	va_end(ap);
	return ok;
}

/* ------------------------------------------------------------ buffers */

/* A vmalloc()ed buffer that iterators can cover as kvec or bvec. */
static struct iov_iter *st_iter_of(struct testbuf *b, struct kvec *kv,
				   struct iov_iter *it)
{
	testbuf_iter(b, 0, b->size, ITER_DEST, false, kv, it);
	return it;
}

/* st_fill: PRNG bytes from @seed; a CRC32 of the rest in the last 4 */
static void st_fill(u8 *p, u32 len, u64 seed)
{
	struct rnd_state rs;
	__le32 crc;

	prandom_seed_state(&rs, seed);
	prandom_bytes_state(&rs, p, len);
	if (len >= 8) {
		crc = cpu_to_le32(crc32_le(~0, p, len - 4));
		memcpy(p + len - 4, &crc, 4);
	}
}

static bool st_trailer_ok(const u8 *p, u32 len)
{
	__le32 crc = cpu_to_le32(crc32_le(~0, p, len - 4));

	return !memcmp(p + len - 4, &crc, 4);
}

static u8 *st_pattern(u64 seed, u32 msg)
{
	struct rnd_state rs;
	u8 *p = vmalloc(msg + ST_PAT_SLACK);

	if (p) {
		prandom_seed_state(&rs, seed);
		prandom_bytes_state(&rs, p, msg + ST_PAT_SLACK);
	}
	return p;
}

static u32 st_pat_off(u32 seq)
{
	return (seq * 251) % ST_PAT_SLACK;
}

static u32 st_ms_since(ktime_t t)
{
	return ktime_ms_delta(ktime_get(), t);
}

/* ------------------------------------------------------------ control */

static bool st_is_ctl(const u8 *p, ssize_t len)
{
	return len == ST_CTL_LEN && !memcmp(p, ST_CTL_MAGIC, 16);
}

static int st_send_ctl(struct smbd_sock *sk, u32 op, u32 mode, const u64 *a)
{
	struct st_ctl m = { .op = cpu_to_le32(op), .mode = cpu_to_le32(mode) };
	struct kvec kv = { .iov_base = &m, .iov_len = sizeof(m) };
	struct iov_iter it;
	ssize_t n;
	int i;

	memcpy(m.magic, ST_CTL_MAGIC, 16);
	for (i = 0; a && i < ARRAY_SIZE(m.a); i++)
		m.a[i] = cpu_to_le64(a[i]);
	iov_iter_kvec(&it, ITER_SOURCE, &kv, 1, sizeof(m));
	n = smbd_sock_send(sk, &it, 0);
	if (n == sizeof(m))
		return 0;
	return n < 0 ? n : -EIO;
}

/* st_recv_ctl: receive the control message @op; its a[] into @a */
static int st_recv_ctl(struct smbd_sock *sk, u32 op, u64 *a, char *why,
		       size_t whylen)
{
	struct smbd_recv_info ri = {};
	struct st_ctl m;
	struct kvec kv = { .iov_base = &m, .iov_len = sizeof(m) };
	struct iov_iter it;
	ssize_t n;
	int i;

	iov_iter_kvec(&it, ITER_DEST, &kv, 1, sizeof(m));
	n = smbd_sock_recv(sk, &it, 0, &ri);
	if (n < 0) {
		scnprintf(why, whylen, "recv of control %u: %zd (msg_len %u)",
			  op, n, ri.msg_len);
		return n;
	}
	if (!st_is_ctl((u8 *)&m, n) || le32_to_cpu(m.op) != op) {
		scnprintf(why, whylen, "want control %u, got a %zd-byte message",
			  op, n);
		return -EPROTO;
	}
	for (i = 0; a && i < ARRAY_SIZE(m.a); i++)
		a[i] = le64_to_cpu(m.a[i]);
	return 0;
}

/* ------------------------------------------------------------ server */

struct st_conn {
	struct testsrv_conn tc;	/* first: the server allocates it */
	char problem[128];	/* the first one */
};

/* Counters of one HELLO..END session of a connection. */
struct st_session {
	enum st_mode mode;
	u64 seed;
	u32 msg;
	u32 stall_ms;
	u8 *pat;
	u64 msgs;
	u64 bytes;
	u64 bad;
	u64 empty;
	u64 detail;	/* ECHO: unchecked (< 8 bytes); SINK: first bad seq + 1 */
	u32 seq;
};

static LIST_HEAD(st_servers);	/* struct testsrv, under st_tc.lock */

static __printf(2, 3) void st_conn_problem(struct st_conn *c,
					   const char *fmt, ...)
{
	va_list ap;

	if (c->problem[0])
		return;
	va_start(ap, fmt);
	vscnprintf(c->problem, sizeof(c->problem), fmt, ap);
	va_end(ap);
	pr_info("server conn %u: %s\n", c->tc.id, c->problem);
}

static bool st_sink_check(struct st_session *s, const u8 *p, u32 n)
{
	const struct st_hdr *h = (const void *)p;

	if (n < sizeof(*h) || n > s->msg || le32_to_cpu(h->magic) != ST_DATA_MAGIC ||
	    le32_to_cpu(h->seq) != s->seq || le32_to_cpu(h->len) != n ||
	    h->zero)
		return false;
	return !memcmp(p + sizeof(*h), s->pat + st_pat_off(s->seq),
		       n - sizeof(*h));
}

/* A SINK/STALL/SOURCE data message: its header, and the iterator over it. */
struct st_sink_msg {
	struct st_hdr hdr;
	struct kvec kv[2];
	struct iov_iter it;
};

static void st_sink_prep(struct st_sink_msg *m, const u8 *pat, u32 seq,
			 u32 len)
{
	m->hdr.magic = cpu_to_le32(ST_DATA_MAGIC);
	m->hdr.seq = cpu_to_le32(seq);
	m->hdr.len = cpu_to_le32(len);
	m->hdr.zero = 0;
	m->kv[0].iov_base = &m->hdr;
	m->kv[0].iov_len = sizeof(m->hdr);
	m->kv[1].iov_base = (void *)pat + st_pat_off(seq);
	m->kv[1].iov_len = len - sizeof(m->hdr);
	iov_iter_kvec(&m->it, ITER_SOURCE, m->kv, 2, len);
}

/*
 * st_send_pattern: send @bytes as pattern messages of at most @msg bytes
 * (at least a header), numbered from *@seq, until done or *@stop is set.
 * *@seq and *@sent count what went. 0, or the failed send's error (-EIO
 * for a short one).
 */
static int st_send_pattern(struct smbd_sock *sk, const u8 *pat, u32 msg,
			   u64 bytes, const bool *stop, u32 *seq, u64 *sent)
{
	struct st_sink_msg m;
	ssize_t n;
	u32 len;

	while (bytes && !(stop && READ_ONCE(*stop))) {
		len = max_t(u32, min_t(u64, bytes, msg), sizeof(struct st_hdr));
		st_sink_prep(&m, pat, *seq, len);
		n = smbd_sock_send(sk, &m.it, 0);
		if (n != len)
			return n < 0 ? n : -EIO;
		(*seq)++;
		*sent += len;
		bytes -= min_t(u64, bytes, len);
	}
	return 0;
}

/* st_source: send @bytes of SOURCE messages; false on a failure */
static bool st_source(struct st_conn *c, struct st_session *s, u64 bytes)
{
	int err = st_send_pattern(c->tc.sk, s->pat, s->msg, bytes,
				  &c->tc.srv->stopping, &s->seq, &s->bytes);

	s->msgs = s->seq;
	if (err)
		st_conn_problem(c, "SOURCE message %u: send %d", s->seq, err);
	return !err;
}

/* st_serve_ctl: handle a control message; false ends the connection */
static bool st_serve_ctl(struct st_conn *c, struct st_session *s,
			 const struct st_ctl *m)
{
	u64 a[5];
	int err, i;

	switch (le32_to_cpu(m->op)) {
	case ST_OP_HELLO:
		vfree(s->pat);
		memset(s, 0, sizeof(*s));
		s->mode = le32_to_cpu(m->mode);
		s->seed = le64_to_cpu(m->a[0]);
		s->msg = le64_to_cpu(m->a[1]);
		s->stall_ms = le64_to_cpu(m->a[2]);
		if (s->mode == ST_MODE_SINK || s->mode == ST_MODE_STALL ||
		    s->mode == ST_MODE_SOURCE) {
			s->pat = s->msg <= SZ_16M ? st_pattern(s->seed, s->msg) : NULL;
			if (!s->pat) {
				st_conn_problem(c, "no pattern for msg %u", s->msg);
				return false;
			}
		} else if (s->mode != ST_MODE_ECHO) {
			st_conn_problem(c, "HELLO with mode %u", s->mode);
			return false;
		}
		err = st_send_ctl(c->tc.sk, ST_OP_READY, s->mode, NULL);
		if (err) {
			st_conn_problem(c, "send READY: %d", err);
			return false;
		}
		/* Read nothing for a while: the client runs out of credits. */
		for (i = 0; s->mode == ST_MODE_STALL && i < s->stall_ms / 20 &&
		     !READ_ONCE(c->tc.srv->stopping); i++)
			msleep(20);
		if (s->mode == ST_MODE_SOURCE)
			return st_source(c, s, le64_to_cpu(m->a[3]));
		return true;
	case ST_OP_END:
		a[0] = s->msgs;
		a[1] = s->bytes;
		a[2] = s->bad;
		a[3] = s->empty;
		a[4] = s->detail;
		err = st_send_ctl(c->tc.sk, ST_OP_STATS, s->mode, a);
		/*
		 * The client may leave the moment it has the STATS, before
		 * the provider saw them acknowledged: a blocking send then
		 * fails with the connection's error ([MS-SMBD] 3.1.5.4). The
		 * next receive ends the connection; the client checks that
		 * it got them.
		 */
		if (err == -ECONNRESET || err == -ECONNABORTED ||
		    err == -ENOTCONN)
			return true;
		if (err) {
			st_conn_problem(c, "send STATS: %d", err);
			return false;
		}
		return true;
	default:
		st_conn_problem(c, "control op %u", le32_to_cpu(m->op));
		return false;
	}
}

/* A connection's thread: serve the test protocol until the client leaves. */
static int st_serve(struct testsrv_conn *tc)
{
	struct st_conn *c = container_of(tc, struct st_conn, tc);
	struct smbd_sock *sk = tc->sk;
	struct smbd_sock_info info = {};
	struct smbd_recv_info ri;
	struct st_session s = {};
	struct iov_iter it;
	struct kvec kv;
	ssize_t n, m;
	u8 *buf = NULL;
	u32 cap;
	int err;

	err = smbd_sock_query(sk, &info);
	cap = info.max_fragmented_recv_size;
	/* A client that connected only to leave (connrate) is gone already. */
	if (err == -ECONNRESET || err == -ENOTCONN || err == -ECONNABORTED) {
		tc->end_err = err;
		goto out;
	}
	if (err || !cap || cap > SZ_64M) {
		st_conn_problem(c, "query: %d, max_fragmented_recv_size %u",
				err, cap);
		tc->end_err = err ?: -EINVAL;
		goto out;
	}
	buf = vmalloc(cap);
	if (!buf) {
		tc->end_err = -ENOMEM;
		goto out;
	}

	for (;;) {
		kv.iov_base = buf;
		kv.iov_len = cap;
		iov_iter_kvec(&it, ITER_DEST, &kv, 1, cap);
		memset(&ri, 0, sizeof(ri));
		n = smbd_sock_recv(sk, &it, 0, &ri);
		if (n < 0) {
			tc->end_err = n;
			if (n == -EMSGSIZE)
				st_conn_problem(c, "-EMSGSIZE: msg_len %u > %u",
						ri.msg_len, cap);
			break;
		}
		if (n > cap || ri.msg_len != n)
			st_conn_problem(c, "recv returned %zd, msg_len %u",
					n, ri.msg_len);
		if (st_is_ctl(buf, n)) {
			if (!st_serve_ctl(c, &s, (struct st_ctl *)buf)) {
				tc->end_err = -EPROTO;
				break;
			}
			continue;
		}
		s.msgs++;
		s.bytes += n;
		if (!n)
			s.empty++;
		switch (s.mode) {
		case ST_MODE_ECHO:
			if (n >= 8 && !st_trailer_ok(buf, n))
				s.bad++;
			else if (n < 8)
				s.detail++;
			kv.iov_base = buf;
			kv.iov_len = n;
			iov_iter_kvec(&it, ITER_SOURCE, &kv, 1, n);
			m = smbd_sock_send(sk, &it, 0);
			if (m != n) {
				st_conn_problem(c, "echo of %zd bytes: send %zd",
						n, m);
				tc->end_err = m < 0 ? m : -EIO;
				goto out;
			}
			break;
		case ST_MODE_SINK:
		case ST_MODE_STALL:
			if (!st_sink_check(&s, buf, n)) {
				if (!s.bad)
					s.detail = s.seq + 1ULL;
				s.bad++;
			}
			s.seq++;
			break;
		case ST_MODE_SOURCE:
			st_conn_problem(c, "%zd-byte message to a SOURCE", n);
			tc->end_err = -EPROTO;
			goto out;
		default:
			st_conn_problem(c, "%zd-byte message before HELLO", n);
			tc->end_err = -EPROTO;
			goto out;
		}
	}
out:
	vfree(s.pat);
	vfree(buf);
	return tc->end_err;
}

/*
 * A listener is not a connection: connecting it, binding it again or
 * listening twice refuse (its id and queues stay as they are), and it
 * goes on listening.
 */
static void st_listener_wrong_role(struct smbd_sock *lsk,
				   struct sockaddr_storage *bound)
{
	struct sockaddr_storage now;
	int c, b, l, g;

	c = smbd_sock_connect_async(lsk, (struct sockaddr *)bound, NULL);
	b = smbd_sock_bind(lsk, (struct sockaddr *)bound);
	l = smbd_sock_listen(lsk, 4);
	g = smbd_sock_getname(lsk, &now, false);
	st_check(c == -EINVAL && b == -EINVAL && l == -EINVAL && !g &&
		 !memcmp(&now, bound, sizeof(now)), "listen/wrong-role-refused",
		 "connect %d, bind %d, listen %d on a listener; still bound: %d",
		 c, b, l, g);
}

static void st_server_start(const struct sockaddr_storage *addr)
{
	struct sockaddr_storage bound;
	struct testsrv *srv;
	const char *step = "";
	int err;

	if (testsrv_find(&st_servers, addr)) {
		st_check(false, "listen", "already listening there");
		return;
	}
	srv = kzalloc(sizeof(*srv), GFP_KERNEL);
	if (!srv) {
		st_check(false, "listen", "out of memory");
		return;
	}
	srv->serve = st_serve;
	srv->conn_size = sizeof(struct st_conn);
	srv->name = "smbd_test";
	err = testsrv_start(srv, addr, 64, &step);
	if (!err) {
		step = "smbd_sock_getname";
		err = smbd_sock_getname(srv->lsk, &bound, false);
		if (err)
			testsrv_stop(srv, &st_tc.out, 0, NULL, NULL);
	}
	if (err) {
		st_check(false, "listen", "%s: %d", step, err);
		kfree(srv);
		return;
	}
	list_add_tail(&srv->node, &st_servers);
	st_check(true, "listen", "%pISpc", &bound);
	st_listener_wrong_role(srv->lsk, &bound);
}

/* What st_server_stop() counts of the connections' ends. */
struct st_ends {
	u32 bad_end;
	u32 problems;
	char first[160];
};

static void st_conn_ended(struct testsrv_conn *tc, void *arg)
{
	struct st_conn *c = container_of(tc, struct st_conn, tc);
	struct st_ends *e = arg;

	/*
	 * A peer's teardown may surface first as a QP error on iWARP
	 * (-ECONNABORTED) rather than as a disconnect.
	 */
	if (!tc->ended_by_stop && tc->end_err != -ENOTCONN &&
	    tc->end_err != -ECONNRESET && tc->end_err != -ECONNABORTED) {
		if (!e->bad_end++ && !e->first[0])
			scnprintf(e->first, sizeof(e->first),
				  "connection %u ended with %d", tc->id,
				  tc->end_err);
	}
	if (c->problem[0] && !e->problems++ && !e->first[0])
		scnprintf(e->first, sizeof(e->first), "connection %u: %s",
			  tc->id, c->problem);
}

/* Every client is gone: each connection must have seen it. */
static void st_server_stop(struct testsrv *srv)
{
	struct st_ends e = {};

	testsrv_stop(srv, &st_tc.out, 15, st_conn_ended, &e);
	st_check(!e.bad_end && !e.problems, "stop/server-connections-clean",
		 "%u connections, %u ended with an unexpected error, %u had problems%s%s",
		 srv->accepted, e.bad_end, e.problems, e.first[0] ? ": " : "",
		 e.first);
	st_check(!srv->accept_errors, "stop/no-accept-errors",
		 "accepted %u, %u accept errors (last %d)", srv->accepted,
		 srv->accept_errors, srv->last_accept_err);
	list_del(&srv->node);
	kfree(srv);
}

/* ------------------------------------------------------------ client */

struct st_cmd {
	struct sockaddr_storage dst;
	u32 sizes[ST_MAX_SIZES];
	unsigned int nr_sizes;
	u32 nrandom;
	u64 seed;
	int iwarp;
	u32 conns;
	u64 bytes;
	u32 msg;
	u32 stall_ms;
	u32 timeout_s;
	u32 count;
	u32 msize;	/* "msize=": the message size both ways must be */
	enum { ST_DIR_UP, ST_DIR_DOWN, ST_DIR_BOTH } dir;

	/* the watchdog: past timeout_s, shut every socket down */
	struct mutex lock;
	struct smbd_sock *socks[ST_MAX_SOCKS];
	bool expired;
	struct delayed_work watchdog;
};

#define ST_SIZE_MAX	U32_MAX	/* "max" in sizes= */

/* Upcall counters of one client socket. */
struct st_upcalls {
	atomic_t data_ready;
	atomic_t write_space;
	atomic_t state_change;
	wait_queue_head_t wq;
	struct completion connected;
	int connect_status;
};

static void st_data_ready(struct smbd_sock *sk)
{
	struct st_upcalls *u = smbd_sock_priv(sk);

	atomic_inc(&u->data_ready);
	wake_up(&u->wq);
}

static void st_write_space(struct smbd_sock *sk)
{
	struct st_upcalls *u = smbd_sock_priv(sk);

	atomic_inc(&u->write_space);
	wake_up(&u->wq);
}

static void st_state_change(struct smbd_sock *sk)
{
	struct st_upcalls *u = smbd_sock_priv(sk);

	atomic_inc(&u->state_change);
	wake_up(&u->wq);
}

static const struct smbd_sock_ops st_ops = {
	.data_ready = st_data_ready,
	.write_space = st_write_space,
	.state_change = st_state_change,
};

static void st_connect_done(struct smbd_sock *sk, int status)
{
	struct st_upcalls *u = smbd_sock_priv(sk);

	u->connect_status = status;
	complete(&u->connected);
}

static void st_upcalls_init(struct st_upcalls *u)
{
	memset(u, 0, sizeof(*u));
	init_waitqueue_head(&u->wq);
	init_completion(&u->connected);
}

static void st_watchdog(struct work_struct *w)
{
	struct st_cmd *c = container_of(w, struct st_cmd, watchdog.work);
	int i;

	mutex_lock(&c->lock);
	WRITE_ONCE(c->expired, true);
	pr_warn("timeout (%u s): shutting the test's sockets down\n",
		c->timeout_s);
	for (i = 0; i < ST_MAX_SOCKS; i++)
		if (c->socks[i])
			smbd_sock_shutdown(c->socks[i]);
	mutex_unlock(&c->lock);
}

static void st_release(struct st_cmd *c, struct smbd_sock *sk)
{
	int i;

	if (!sk)
		return;
	mutex_lock(&c->lock);
	for (i = 0; i < ST_MAX_SOCKS; i++)
		if (c->socks[i] == sk)
			c->socks[i] = NULL;
	mutex_unlock(&c->lock);
	smbd_sock_release(sk);
}

/*
 * st_connect: a connected client socket with the upcalls @u (may be NULL),
 * through smbd_sock_connect_async() when @async; registered with the
 * watchdog. Returns 0 or an error, with *skp NULL on error.
 */
/* st_track: the watchdog shuts @sk down past the timeout; or release */
static int st_track(struct st_cmd *c, struct smbd_sock *sk)
{
	int i;

	mutex_lock(&c->lock);
	for (i = 0; i < ST_MAX_SOCKS && c->socks[i]; i++)
		;
	if (i < ST_MAX_SOCKS)
		c->socks[i] = sk;
	mutex_unlock(&c->lock);
	if (i == ST_MAX_SOCKS) {
		smbd_sock_release(sk);
		return -EMFILE;
	}
	return 0;
}

static int st_connect(struct st_cmd *c, struct st_upcalls *u, bool async,
		      struct smbd_sock **skp)
{
	struct smbd_params p;
	struct smbd_sock *sk;
	int err;

	*skp = NULL;
	smbd_params_init(&p, false);
	err = smbd_sock_create(&init_net, &p, &sk);
	if (err)
		return err;
	if (u)
		smbd_sock_set_ops(sk, &st_ops, u);
	err = st_track(c, sk);
	if (err)
		return err;
	if (async && u) {
		err = smbd_sock_connect_async(sk, (struct sockaddr *)&c->dst,
					      st_connect_done);
		if (!err) {
			if (wait_for_completion_timeout(&u->connected,
							c->timeout_s * HZ))
				err = u->connect_status;
			else
				err = -ETIMEDOUT;
		}
	} else {
		err = smbd_sock_connect(sk, (struct sockaddr *)&c->dst);
	}
	if (err) {
		if (err == -ETIMEDOUT && async && u) {
			/* the done callback may still come: end it first */
			smbd_sock_shutdown(sk);
			wait_for_completion_timeout(&u->connected, 20 * HZ);
		}
		st_release(c, sk);
		return err;
	}
	*skp = sk;
	return 0;
}

/* st_hello_a: HELLO(@mode, @a) and its READY; reason in @why */
static int st_hello_a(struct smbd_sock *sk, u32 mode, const u64 *a,
		      char *why, size_t whylen)
{
	int err = st_send_ctl(sk, ST_OP_HELLO, mode, a);

	if (err) {
		scnprintf(why, whylen, "send HELLO: %d", err);
		return err;
	}
	return st_recv_ctl(sk, ST_OP_READY, NULL, why, whylen);
}

/* st_hello: HELLO(@mode) and its READY; 0 or an error, reason in @why */
static int st_hello(struct smbd_sock *sk, u32 mode, u64 seed, u32 msg,
		    u32 stall_ms, char *why, size_t whylen)
{
	u64 a[5] = { seed, msg, stall_ms };

	return st_hello_a(sk, mode, a, why, whylen);
}

/* st_end: END, and the server's STATS into @a */
static int st_end(struct smbd_sock *sk, u64 *a, char *why, size_t whylen)
{
	int err = st_send_ctl(sk, ST_OP_END, 0, NULL);

	if (err) {
		scnprintf(why, whylen, "send END: %d", err);
		return err;
	}
	return st_recv_ctl(sk, ST_OP_STATS, a, why, whylen);
}

/* ------------------------------------------------------------ echo */

struct st_echo {
	struct st_cmd *c;
	struct smbd_sock *sk;
	struct st_upcalls u;
	struct testbuf sbuf;
	struct testbuf rbuf;
	u32 max;
	u64 sent_msgs;	/* non-empty data messages the server must count */
	u64 sent_bytes;
	u32 idx;
};

/* st_echo_recv: receive the echo of @len bytes from @sp and compare */
static bool st_echo_recv(struct st_echo *e, const u8 *sp, u32 len,
			 bool bvec, const char *name)
{
	u32 roff = (e->idx * 5) & 7, i;
	struct smbd_recv_info ri = {};
	struct iov_iter it;
	struct kvec kv;
	ssize_t n;
	u8 *rp;

	/* 16 bytes beyond the message stay in the iterator: must stay 0xa5 */
	memset(e->rbuf.va, ST_CANARY, roff + len + 16);
	testbuf_iter(&e->rbuf, roff, len + 16, ITER_DEST, bvec, &kv, &it);
	n = smbd_sock_recv(e->sk, &it, 0, &ri);
	rp = e->rbuf.va + roff;
	if (n != len || ri.msg_len != len)
		return st_check(false, name, "recv returned %zd, msg_len %u, want %u",
				n, ri.msg_len, len);
	if (memcmp(rp, sp, len)) {
		for (i = 0; i < len && rp[i] == sp[i]; i++)
			;
		return st_check(false, name, "echo differs from byte %u of %u",
				i, len);
	}
	for (i = 0; i < 16; i++)
		if (rp[len + i] != ST_CANARY)
			return st_check(false, name,
					"recv wrote beyond the message (byte %u)",
					len + i);
	if (iov_iter_count(&it) != 16)
		return st_check(false, name, "iterator left with %zu, want 16",
				iov_iter_count(&it));
	return true;
}

/* st_echo_one: send @len PRNG bytes, get them back; one check @name */
static bool st_echo_one(struct st_echo *e, u32 len, const char *name)
{
	u32 soff = (e->idx * 3) & 7;
	bool bvec = e->idx & 1;
	struct iov_iter it;
	struct kvec kv;
	ssize_t n;
	u8 *sp = e->sbuf.va + soff;

	e->idx++;
	st_fill(sp, len, e->c->seed ^ ((u64)e->idx << 32));
	testbuf_iter(&e->sbuf, soff, len, ITER_SOURCE, bvec, &kv, &it);
	n = smbd_sock_send(e->sk, &it, 0);
	if (n != len)
		return st_check(false, name, "send returned %zd, want %u", n, len);
	if (iov_iter_count(&it))
		return st_check(false, name, "send left %zu bytes in the iterator",
				iov_iter_count(&it));
	if (!len)
		return st_check(true, name, "send returned 0; nothing comes back");
	e->sent_msgs++;
	e->sent_bytes += len;
	if (!st_echo_recv(e, sp, len, !bvec, name))
		return false;
	return st_check(true, name, "%s out, %s back", bvec ? "bvec" : "kvec",
			bvec ? "kvec" : "bvec");
}

/* st_zc_delta: bytes_zcopy and bytes_sent since the last call */
static void st_zc_delta(struct smbd_sock *sk, struct smbd_sock_stats *last,
			u64 *zc, u64 *sent)
{
	struct smbd_sock_stats now;

	smbd_sock_stats(sk, &now);
	*zc = now.bytes_zcopy - last->bytes_zcopy;
	*sent = now.bytes_sent - last->bytes_sent;
	*last = now;
}

/*
 * Zero-copy sends: a blocking send maps the caller's pages and returns
 * only when the device is done with them, so the caller may scribble on
 * them at once; pieces beyond the device's gather limit are copied; a
 * non-blocking send copies everything.
 */
static void st_echo_zcopy_run(struct st_echo *e, struct kvec *pkv, u32 npkv)
{
	u32 len = min_t(u32, SZ_64K, e->max / 4), i, off, tail;
	u8 *sp = e->sbuf.va, *want = e->sbuf.va + e->max / 2;
	struct smbd_sock_stats last;
	struct smbd_sock_info info;
	struct iov_iter it;
	struct kvec kv;
	u64 zc, sent;
	ssize_t n;

	if (len < 8192) {
		st_out_add("skip echo/zcopy - max_fragmented_send_size %u", e->max);
		return;
	}
	smbd_sock_stats(e->sk, &last);

	/* 1. bvec at an odd offset; overwritten as soon as send returns */
	st_fill(sp + 3, len, e->c->seed + 11);
	memcpy(want, sp + 3, len);
	testbuf_iter(&e->sbuf, 3, len, ITER_SOURCE, true, &kv, &it);
	n = smbd_sock_send(e->sk, &it, 0);
	memset(sp, 0xee, len + 3);
	st_zc_delta(e->sk, &last, &zc, &sent);
	if (n != len) {
		st_check(false, "echo/zcopy-blocking", "send returned %zd, want %u",
			 n, len);
		return;
	}
	e->sent_msgs++;
	e->sent_bytes += len;
	/*
	 * Every segment is mapped but a last one of at most 256 bytes
	 * (smbd's copy break), which is copied: 24-byte headers.
	 */
	tail = 0;
	memset(&info, 0, sizeof(info));
	if (!smbd_sock_query(e->sk, &info) && info.max_send_size > 24) {
		tail = len % (info.max_send_size - 24);
		if (tail > 256)
			tail = 0;
	}
	/*
	 * With fewer gather entries than a segment's pages (at an odd
	 * offset) need, part of each is copied: something is mapped.
	 */
	if (info.max_send_size > 24 && info.send_gather >= 2 &&
	    info.send_gather - 2 <
	    DIV_ROUND_UP(info.max_send_size - 24, PAGE_SIZE) + 1) {
		if (st_echo_recv(e, want, len, false, "echo/zcopy-blocking"))
			st_check(zc > 0 && zc <= len - tail && sent == len,
				 "echo/zcopy-blocking",
				 "%u bytes from a bvec over %u gather entries: %llu mapped, the rest copied, %llu sent; buffer reused on return, echo intact",
				 len, info.send_gather, zc, sent);
	} else if (st_echo_recv(e, want, len, false, "echo/zcopy-blocking")) {
		st_check(zc == len - tail && sent == len, "echo/zcopy-blocking",
			 "%u bytes from a bvec: %llu mapped (want %u), %llu sent; buffer reused on return, echo intact",
			 len, zc, len - tail, sent);
	}

	/*
	 * 2. 40 scattered 97-byte pieces: more than the device gathers in
	 * one segment, so part is mapped and the rest copied.
	 */
	st_fill(want, npkv * 97, e->c->seed + 13);
	for (i = 0; i < npkv; i++) {
		off = i * 200 + (i & 3);
		memcpy(sp + off, want + i * 97, 97);
		pkv[i].iov_base = sp + off;
		pkv[i].iov_len = 97;
	}
	iov_iter_kvec(&it, ITER_SOURCE, pkv, npkv, npkv * 97);
	n = smbd_sock_send(e->sk, &it, 0);
	memset(sp, 0xee, npkv * 200 + 4);
	st_zc_delta(e->sk, &last, &zc, &sent);
	if (n != npkv * 97) {
		st_check(false, "echo/zcopy-scattered",
			 "send returned %zd, want %u", n, npkv * 97);
		return;
	}
	e->sent_msgs++;
	e->sent_bytes += n;
	if (st_echo_recv(e, want, npkv * 97, true, "echo/zcopy-scattered"))
		st_check(zc > 0 && zc < sent && sent == npkv * 97,
			 "echo/zcopy-scattered",
			 "%u kvec pieces of 97 bytes: %llu mapped, %llu copied",
			 npkv, zc, sent - zc);

	/* 3. non-blocking: copied, so the caller may reuse at once too */
	len = 5000;
	st_fill(sp, len, e->c->seed + 12);
	memcpy(want, sp, len);
	testbuf_iter(&e->sbuf, 0, len, ITER_SOURCE, false, &kv, &it);
	n = smbd_sock_send(e->sk, &it, SMBD_SEND_NONBLOCK);
	memset(sp, 0xee, len);
	st_zc_delta(e->sk, &last, &zc, &sent);
	if (n != len) {
		st_check(false, "echo/zcopy-nonblock-copies",
			 "non-blocking send returned %zd, want %u", n, len);
		return;
	}
	e->sent_msgs++;
	e->sent_bytes += len;
	if (st_echo_recv(e, want, len, true, "echo/zcopy-nonblock-copies"))
		st_check(zc == 0 && sent == len, "echo/zcopy-nonblock-copies",
			 "%llu of %llu bytes mapped (want 0)", zc, sent);

	/*
	 * 4. SMBD_SEND_COPY: a bvec a blocking send would map is copied,
	 * in several segments, and may be reused once the call returns.
	 */
	len = 12000;
	st_fill(sp + 5, len, e->c->seed + 14);
	memcpy(want, sp + 5, len);
	testbuf_iter(&e->sbuf, 5, len, ITER_SOURCE, true, &kv, &it);
	n = smbd_sock_send(e->sk, &it, SMBD_SEND_COPY);
	memset(sp, 0xee, len + 5);
	st_zc_delta(e->sk, &last, &zc, &sent);
	if (n != len) {
		st_check(false, "echo/zcopy-copy-flag",
			 "send returned %zd, want %u", n, len);
		return;
	}
	e->sent_msgs++;
	e->sent_bytes += len;
	if (st_echo_recv(e, want, len, true, "echo/zcopy-copy-flag"))
		st_check(zc == 0 && sent == len, "echo/zcopy-copy-flag",
			 "%llu of %llu bytes mapped (want 0); buffer reused on return, echo intact",
			 zc, sent);

	/* 5. ... and with it on the last part, every part is copied */
	len = 9000;
	st_fill(want, len, e->c->seed + 15);
	memcpy(sp, want, len);
	pkv[0].iov_base = sp;
	pkv[0].iov_len = 6000;
	iov_iter_kvec(&it, ITER_SOURCE, pkv, 1, 6000);
	n = smbd_sock_send(e->sk, &it, SMBD_SEND_MORE);
	if (n == 6000) {
		testbuf_iter(&e->sbuf, 6000, len - 6000, ITER_SOURCE, true,
			     &kv, &it);
		n = smbd_sock_send(e->sk, &it, SMBD_SEND_COPY);
	}
	memset(sp, 0xee, len);
	st_zc_delta(e->sk, &last, &zc, &sent);
	if (n != len) {
		st_check(false, "echo/zcopy-copy-more",
			 "send returned %zd, want %u", n, len);
		return;
	}
	e->sent_msgs++;
	e->sent_bytes += len;
	if (st_echo_recv(e, want, len, true, "echo/zcopy-copy-more"))
		st_check(zc == 0 && sent == len, "echo/zcopy-copy-more",
			 "two parts, SMBD_SEND_COPY on the last: %llu of %llu bytes mapped (want 0)",
			 zc, sent);
}

static noinline_for_stack void st_echo_zcopy(struct st_echo *e)
{
	struct kvec *pkv = kcalloc(40, sizeof(*pkv), GFP_KERNEL);

	if (!pkv) {
		st_check(false, "echo/zcopy", "out of memory");
		return;
	}
	st_echo_zcopy_run(e, pkv, 40);
	kfree(pkv);
}

/*
 * A connection is not a listener: listen, accept and bind refuse on it
 * (it has no listener's queues to touch), and it still works after.
 */
static void st_echo_wrong_role(struct st_echo *e)
{
	struct smbd_sock *nsk = NULL;
	struct smbd_sock_info info;
	struct sockaddr_in sin = {
		.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_ANY),
	};
	int l, a, b;

	l = smbd_sock_listen(e->sk, 4);
	a = smbd_sock_accept(e->sk, &nsk, SMBD_RECV_NONBLOCK);
	b = smbd_sock_bind(e->sk, (struct sockaddr *)&sin);
	if (st_check(l == -EINVAL && a == -EINVAL && !nsk && b == -EINVAL &&
		     !smbd_sock_query(e->sk, &info), "echo/wrong-role-refused",
		     "listen %d, accept %d, bind %d on a connection", l, a, b))
		st_echo_one(e, 100, "echo/works-after-wrong-role");
}

static void st_echo_edges(struct st_echo *e)
{
	struct smbd_recv_info ri = {};
	struct iov_iter it;
	struct kvec kv;
	ssize_t n, m1, m2, m3;
	struct iov_iter mit[3];
	struct kvec mkv[3];
	u32 len = 5000, before;
	u8 *sp = e->sbuf.va;
	u8 small[100];
	long t;

	st_echo_one(e, 100, "echo/before-edges");
	st_echo_zcopy(e);
	st_echo_wrong_role(e);

	/* Oversized: refused, and the connection still works. */
	if (e->max < e->sbuf.size) {
		st_fill(sp, e->max + 1, e->c->seed + 1);
		testbuf_iter(&e->sbuf, 0, e->max + 1, ITER_SOURCE, false, &kv, &it);
		n = smbd_sock_send(e->sk, &it, 0);
		if (st_check(n == -EMSGSIZE || n == -EINVAL, "echo/oversized-send-refused",
			     "send of max_fragmented_send_size + 1 = %u: %zd",
			     e->max + 1, n))
			st_echo_one(e, 100, "echo/works-after-oversized-send");
	}

	/*
	 * Too small a buffer: -EMSGSIZE with the length, the part that fit,
	 * and the message is consumed whole.
	 */
	st_fill(sp, len, e->c->seed + 2);
	before = atomic_read(&e->u.data_ready);
	kv.iov_base = sp;
	kv.iov_len = len;
	iov_iter_kvec(&it, ITER_SOURCE, &kv, 1, len);
	n = smbd_sock_send(e->sk, &it, 0);
	if (n != len) {
		st_check(false, "echo/recv-emsgsize", "send returned %zd", n);
		return;
	}
	e->sent_msgs++;
	e->sent_bytes += len;
	/* wait for the echo to arrive, then ask with 100 bytes of room */
	t = wait_event_timeout(e->u.wq, atomic_read(&e->u.data_ready) != before,
			       e->c->timeout_s * HZ);
	st_check(t > 0, "echo/data-ready-upcall", "data_ready called %d times",
		 atomic_read(&e->u.data_ready));
	kv.iov_base = small;
	kv.iov_len = sizeof(small);
	iov_iter_kvec(&it, ITER_DEST, &kv, 1, sizeof(small));
	n = smbd_sock_recv(e->sk, &it, 0, &ri);
	st_check(n == -EMSGSIZE && ri.msg_len == len &&
		 !memcmp(small, sp, sizeof(small)), "echo/recv-emsgsize",
		 "recv into 100 bytes: %zd, msg_len %u (want -EMSGSIZE, %u)%s",
		 n, ri.msg_len, len,
		 memcmp(small, sp, sizeof(small)) ? ", the 100 bytes differ" : "");
	kv.iov_base = e->rbuf.va;
	kv.iov_len = e->rbuf.size;
	iov_iter_kvec(&it, ITER_DEST, &kv, 1, e->rbuf.size);
	n = smbd_sock_recv(e->sk, &it, SMBD_RECV_NONBLOCK, &ri);
	st_check(n == -EAGAIN, "echo/emsgsize-consumes-message",
		 "the next non-blocking recv: %zd", n);
	if (n != -EAGAIN)
		return;

	/*
	 * One message in three calls with SMBD_SEND_MORE: a two-element
	 * kvec, a bvec and a kvec. The parts are not copied until the last
	 * call: their memory and arrays stay untouched until it returns.
	 */
	len = 4500;
	st_fill(sp, len, e->c->seed + 3);
	mkv[0].iov_base = sp;
	mkv[0].iov_len = 400;
	mkv[1].iov_base = sp + 400;
	mkv[1].iov_len = 600;
	mkv[2].iov_base = sp + 4000;
	mkv[2].iov_len = 500;
	iov_iter_kvec(&mit[0], ITER_SOURCE, mkv, 2, 1000);
	testbuf_iter(&e->sbuf, 1000, 3000, ITER_SOURCE, true, &kv, &mit[1]);
	iov_iter_kvec(&mit[2], ITER_SOURCE, &mkv[2], 1, 500);
	m1 = smbd_sock_send(e->sk, &mit[0], SMBD_SEND_MORE);
	m2 = m1 == 1000 ? smbd_sock_send(e->sk, &mit[1], SMBD_SEND_MORE) : 0;
	m3 = m2 == 3000 ? smbd_sock_send(e->sk, &mit[2], 0) : 0;
	if (m1 == -EOPNOTSUPP) {
		/* smbd has SMBD_SEND_MORE: refusing it is a defect */
		st_check(false, "echo/send-more", "SMBD_SEND_MORE: -EOPNOTSUPP");
		return;
	}
	if (m1 != 1000 || m2 != 3000 || m3 != len) {
		/* the connection is in an unknown state: stop here */
		st_check(false, "echo/send-more",
			 "returned %zd %zd %zd (want 1000 3000, then the message: %u)",
			 m1, m2, m3, len);
		return;
	}
	e->sent_msgs++;
	e->sent_bytes += len;
	if (st_echo_recv(e, sp, len, false, "echo/send-more"))
		st_check(true, "echo/send-more",
			 "kvec[2] + bvec + kvec parts, one 4500-byte message");
}

/*
 * st_stream_frame: read one frame of smbd_sock_recv_stream() (a 4-byte
 * big-endian length and the message) into @buf, in reads of at most
 * @chunk bytes that ask for up to 10 bytes more than the frame has left:
 * no read may go past the end of the frame. Returns the message length.
 */
static int st_stream_frame(struct smbd_sock *sk, u8 *buf, u32 cap, u32 chunk,
			   char *why, size_t whylen)
{
	u32 got = 0, want = 4, ask;
	struct iov_iter it;
	struct kvec kv;
	__be32 be;
	ssize_t n;

	while (got < want) {
		ask = min3(chunk, want - got + 10, cap - got);
		kv.iov_base = buf + got;
		kv.iov_len = ask;
		iov_iter_kvec(&it, ITER_DEST, &kv, 1, ask);
		n = smbd_sock_recv_stream(sk, &it, 0);
		if (n <= 0 || n > ask) {
			scnprintf(why, whylen, "recv_stream of %u at %u: %zd",
				  ask, got, n);
			return n < 0 ? n : -EIO;
		}
		got += n;
		if (got >= 4 && want == 4) {
			memcpy(&be, buf, 4);
			want = 4 + be32_to_cpu(be);
			if (want > cap || want < 4) {
				scnprintf(why, whylen, "frame length %u", want - 4);
				return -EMSGSIZE;
			}
		}
		if (got > want) {
			scnprintf(why, whylen,
				  "a read of %zd went %u bytes past a %u-byte frame",
				  n, got - want, want);
			return -EPROTO;
		}
	}
	return want - 4;
}

/* On a new connection, the echoes read with smbd_sock_recv_stream(). */
static void st_echo_stream(struct st_echo *e)
{
	static const u32 sizes[] = { 3000, 1, 70000 };
	u64 bytes = 0, a[5];
	struct smbd_sock *sk;
	char why[128] = "";
	struct st_ctl *m;
	struct iov_iter it;
	struct kvec kv;
	u8 *buf = e->rbuf.va;
	u32 i, off = 0;
	ssize_t n;
	int err;

	if (e->max < 70000 + 64)
		return;
	err = st_connect(e->c, NULL, false, &sk);
	if (!st_check(!err, "echo/recv-stream-connect", "%d", err))
		return;
	err = st_send_ctl(sk, ST_OP_HELLO, ST_MODE_ECHO, NULL);
	if (err) {
		scnprintf(why, sizeof(why), "send HELLO: %d", err);
		goto out;
	}
	err = st_stream_frame(sk, buf, e->rbuf.size, 777, why, sizeof(why));
	if (err < 0)
		goto out;
	m = (struct st_ctl *)(buf + 4);
	if (err != ST_CTL_LEN || !st_is_ctl(buf + 4, err) ||
	    le32_to_cpu(m->op) != ST_OP_READY) {
		scnprintf(why, sizeof(why), "READY frame: %d bytes", err);
		err = -EPROTO;
		goto out;
	}
	/* all three out first: the frames queue up behind each other */
	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		st_fill(e->sbuf.va + off, sizes[i], e->c->seed + 10 + i);
		kv.iov_base = e->sbuf.va + off;
		kv.iov_len = sizes[i];
		iov_iter_kvec(&it, ITER_SOURCE, &kv, 1, sizes[i]);
		n = smbd_sock_send(sk, &it, 0);
		if (n != sizes[i]) {
			scnprintf(why, sizeof(why), "send %u: %zd", sizes[i], n);
			err = -EIO;
			goto out;
		}
		off += sizes[i];
		bytes += sizes[i];
	}
	for (off = 0, i = 0; i < ARRAY_SIZE(sizes); off += sizes[i], i++) {
		err = st_stream_frame(sk, buf, e->rbuf.size, 777 + i * 1000,
				      why, sizeof(why));
		if (err < 0)
			goto out;
		if (err != sizes[i] || memcmp(buf + 4, e->sbuf.va + off, err)) {
			scnprintf(why, sizeof(why),
				  "frame %u: %d bytes (want %u)%s", i, err,
				  sizes[i], err == sizes[i] ? ", data differs" : "");
			err = -EBADMSG;
			goto out;
		}
	}
	err = st_send_ctl(sk, ST_OP_END, 0, NULL);
	if (!err)
		err = st_stream_frame(sk, buf, e->rbuf.size, 4096, why, sizeof(why));
	if (err < 0)
		goto out;
	m = (struct st_ctl *)(buf + 4);
	for (i = 0; i < ARRAY_SIZE(a); i++)
		a[i] = le64_to_cpu(m->a[i]);
	if (err != ST_CTL_LEN || le32_to_cpu(m->op) != ST_OP_STATS ||
	    a[0] != ARRAY_SIZE(sizes) || a[1] != bytes || a[2]) {
		scnprintf(why, sizeof(why),
			  "STATS frame of %d bytes: %llu messages %llu bytes %llu bad",
			  err, a[0], a[1], a[2]);
		err = -EBADMSG;
		goto out;
	}
	err = 0;
out:
	st_check(!err, "echo/recv-stream", "%s",
		 err ? why : "3 messages as 4-byte length + message frames, no read past a frame");
	st_release(e->c, sk);
}

static void st_cmd_echo(struct st_cmd *c)
{
	struct smbd_sock_info info = {};
	struct rnd_state rs;
	struct st_echo *e;
	char name[64], why[128] = "";
	struct iov_iter it;
	struct kvec kv;
	ssize_t n;
	u64 a[5];
	ktime_t t0;
	u32 len, i;
	int err;

	e = kzalloc(sizeof(*e), GFP_KERNEL);
	if (!e) {
		st_check(false, "echo/connect", "out of memory");
		return;
	}
	e->c = c;
	st_upcalls_init(&e->u);
	t0 = ktime_get();
	err = st_connect(c, &e->u, false, &e->sk);
	if (!st_check(!err, "echo/connect", "%d after %u ms", err, st_ms_since(t0)))
		goto out;
	err = smbd_sock_query(e->sk, &info);
	st_info("echo: negotiated max_send %u max_recv %u max_frag_send %u max_frag_recv %u max_rw %u ka %u ms send_credits %u recv_credits %u target %u iwarp %d ird/ord %u/%u",
		info.max_send_size, info.max_recv_size,
		info.max_fragmented_send_size, info.max_fragmented_recv_size,
		info.max_read_write_size, info.keepalive_interval_ms,
		info.send_credits, info.recv_credits, info.recv_credit_target,
		info.iwarp, info.responder_resources, info.initiator_depth);
	st_check(!err && info.max_fragmented_send_size && info.max_send_size &&
		 info.send_credits && (c->iwarp < 0 || info.iwarp == c->iwarp),
		 "echo/query", "%d, iwarp %d (want %d)", err, info.iwarp, c->iwarp);
	if (c->msize)
		st_check(!err && info.max_send_size == c->msize &&
			 info.max_recv_size == c->msize, "echo/message-size",
			 "max_send %u max_recv %u, want %u both",
			 info.max_send_size, info.max_recv_size, c->msize);
	wait_event_timeout(e->u.wq, atomic_read(&e->u.state_change) > 0, 5 * HZ);
	st_check(atomic_read(&e->u.state_change) > 0, "echo/state-change-upcall",
		 "state_change called %d times on connect",
		 atomic_read(&e->u.state_change));
	e->max = info.max_fragmented_send_size;
	if (err || !e->max || e->max > SZ_64M)
		goto out;
	if (testbuf_alloc(&e->sbuf, e->max + 64) ||
	    testbuf_alloc(&e->rbuf, e->max + 64)) {
		st_check(false, "echo/buffers", "out of memory for %u", e->max);
		goto out;
	}

	err = st_hello(e->sk, ST_MODE_ECHO, 0, 0, 0, why, sizeof(why));
	if (!st_check(!err, "echo/hello", "%s", why))
		goto out;
	/* Nothing queued: a non-blocking receive says -EAGAIN at once. */
	n = smbd_sock_recv(e->sk, st_iter_of(&e->rbuf, &kv, &it), SMBD_RECV_NONBLOCK,
			   NULL);
	st_check(n == -EAGAIN, "echo/recv-nonblock-empty", "recv: %zd", n);

	for (i = 0; i < c->nr_sizes; i++) {
		len = c->sizes[i] == ST_SIZE_MAX ? e->max : c->sizes[i];
		if (c->sizes[i] == ST_SIZE_MAX)
			snprintf(name, sizeof(name), "echo/size-max");
		else
			snprintf(name, sizeof(name), "echo/size-%u", len);
		if (len > e->max) {
			st_check(false, name, "larger than max_fragmented_send_size %u",
				 e->max);
			continue;
		}
		st_echo_one(e, len, name);
	}
	prandom_seed_state(&rs, c->seed);
	for (i = 0; i < c->nrandom; i++) {
		len = prandom_u32_state(&rs) % (e->max + 1);
		snprintf(name, sizeof(name), "echo/random-%u-size-%u", i, len);
		st_echo_one(e, len, name);
	}
	st_echo_edges(e);

	err = st_end(e->sk, a, why, sizeof(why));
	if (!st_check(!err, "echo/end", "%s", why))
		goto out;
	st_check(a[0] == e->sent_msgs && a[1] == e->sent_bytes && !a[2] && !a[3],
		 "echo/server-counts",
		 "server got %llu messages, %llu bytes, %llu bad trailers, %llu empty; sent %llu, %llu",
		 a[0], a[1], a[2], a[3], e->sent_msgs, e->sent_bytes);
	st_release(c, e->sk);
	e->sk = NULL;
	st_echo_stream(e);
out:
	st_release(c, e->sk);
	testbuf_free(&e->sbuf);
	testbuf_free(&e->rbuf);
	kfree(e);
}

/* ------------------------------------------------------------ stream */

struct st_worker {
	struct st_cmd *c;
	struct st_stream *st;
	u32 idx;
	struct smbd_sock *sk;
	struct st_upcalls u;
	struct completion ready;	/* connected (or failed) */
	struct completion done;
	struct task_struct *task;
	int err;
	char why[128];
	u8 *pat;
	bool down;	/* the server sends (SOURCE) */
	u64 msgs;
	u64 bytes;
	u32 ms;
};

struct st_stream {
	struct completion go;
	bool abort;
};

/* st_worker_recv: receive and check the server's SOURCE messages */
static int st_worker_recv(struct st_worker *w, u8 *buf)
{
	struct st_session s = { .msg = w->c->msg, .pat = w->pat };
	struct smbd_recv_info ri;
	struct iov_iter it;
	struct kvec kv;
	ssize_t n;

	while (w->bytes < w->c->bytes) {
		kv.iov_base = buf;
		kv.iov_len = s.msg;
		iov_iter_kvec(&it, ITER_DEST, &kv, 1, s.msg);
		memset(&ri, 0, sizeof(ri));
		n = smbd_sock_recv(w->sk, &it, 0, &ri);
		if (n < 0) {
			scnprintf(w->why, sizeof(w->why),
				  "recv after %llu messages: %zd (msg_len %u)",
				  w->msgs, n, ri.msg_len);
			return n;
		}
		if (!st_sink_check(&s, buf, n)) {
			scnprintf(w->why, sizeof(w->why),
				  "message %u (%zd bytes) is not what the server was to send",
				  s.seq, n);
			return -EBADMSG;
		}
		s.seq++;
		w->msgs++;
		w->bytes += n;
	}
	return 0;
}

static int st_worker_thread(void *arg)
{
	struct st_worker *w = arg;
	struct st_cmd *c = w->c;
	u64 a[5] = { c->seed + w->idx, c->msg, 0, c->bytes };
	u8 *buf = NULL;
	ktime_t t0;
	u32 seq = 0;

	st_upcalls_init(&w->u);
	if (w->down) {
		buf = vmalloc(c->msg);
		if (!buf) {
			w->err = -ENOMEM;
			scnprintf(w->why, sizeof(w->why), "no receive buffer");
			complete(&w->ready);
			goto out;
		}
	}
	w->err = st_connect(c, &w->u, w->idx & 1, &w->sk);
	if (w->err) {
		scnprintf(w->why, sizeof(w->why), "connect: %d", w->err);
		complete(&w->ready);
		goto out;
	}
	w->err = st_hello_a(w->sk, w->down ? ST_MODE_SOURCE : ST_MODE_SINK,
			    a, w->why, sizeof(w->why));
	complete(&w->ready);
	if (w->err)
		goto out;
	wait_for_completion(&w->st->go);
	if (READ_ONCE(w->st->abort)) {
		w->err = -ECANCELED;
		goto out;
	}
	t0 = ktime_get();
	if (w->down) {
		/* The server started sending after READY: it may be ahead. */
		w->err = st_worker_recv(w, buf);
	} else {
		w->err = st_send_pattern(w->sk, w->pat, c->msg, c->bytes, NULL,
					 &seq, &w->bytes);
		w->msgs = seq;
		if (w->err)
			scnprintf(w->why, sizeof(w->why), "send %u: %d", seq,
				  w->err);
	}
	if (w->err)
		goto out;
	w->err = st_end(w->sk, a, w->why, sizeof(w->why));
	w->ms = st_ms_since(t0);
	if (!w->err && (a[0] != w->msgs || a[1] != w->bytes || a[2])) {
		scnprintf(w->why, sizeof(w->why),
			  "server counted %llu messages %llu bytes %llu bad (first seq %llu); %s %llu, %llu",
			  a[0], a[1], a[2], a[4] - 1,
			  w->down ? "received" : "sent", w->msgs, w->bytes);
		w->err = -EBADMSG;
	}
out:
	vfree(buf);
	st_release(c, w->sk);
	w->sk = NULL;
	kthread_complete_and_exit(&w->done, 0);
}

static void st_cmd_stream(struct st_cmd *c)
{
	struct st_worker *w;
	struct st_stream st = {};
	struct task_struct *t;
	u32 i, started = 0, nconn = 0, nok = 0, ms, maxms = 0, minms = U32_MAX;
	u32 ndown = 0;
	u64 total = 0, rate10;
	char first[192] = "";
	ktime_t t0;

	if (c->conns > ST_MAX_CONNS || c->msg < sizeof(struct st_hdr)) {
		st_check(false, "stream/setup", "conns %u (max %u), msg %u",
			 c->conns, ST_MAX_CONNS, c->msg);
		return;
	}
	init_completion(&st.go);
	w = kcalloc(c->conns, sizeof(*w), GFP_KERNEL);
	for (i = 0; w && i < c->conns; i++) {
		/* the server derives the same pattern from the same seed */
		w[i].pat = st_pattern(c->seed + i, c->msg);
		if (!w[i].pat)
			break;
	}
	if (!w || i < c->conns) {
		st_check(false, "stream/setup", "out of memory");
		goto out;
	}
	for (i = 0; i < c->conns; i++) {
		w[i].c = c;
		w[i].st = &st;
		w[i].idx = i;
		w[i].down = c->dir == ST_DIR_DOWN ||
			    (c->dir == ST_DIR_BOTH && (i & 2));
		init_completion(&w[i].ready);
		init_completion(&w[i].done);
		t = kthread_create(st_worker_thread, &w[i], "smbd_test_w%u", i);
		if (IS_ERR(t)) {
			st_check(false, "stream/setup", "kthread_create: %ld",
				 PTR_ERR(t));
			break;
		}
		w[i].task = get_task_struct(t);
		wake_up_process(t);
		started++;
	}
	for (i = 0; i < started; i++) {
		testsrv_wait(&w[i].ready, "a stream worker's connection",
			     w[i].task, c->timeout_s + 30);
		if (!w[i].err)
			nconn++;
		else if (!first[0])
			scnprintf(first, sizeof(first), "connection %u: %s", i,
				  w[i].why);
	}
	st_check(nconn == c->conns, "stream/connect",
		 "%u of %u connected (odd ones with connect_async)%s%s",
		 nconn, c->conns, first[0] ? "; " : "", first);
	if (nconn != started)
		WRITE_ONCE(st.abort, true);
	t0 = ktime_get();
	complete_all(&st.go);
	first[0] = '\0';
	for (i = 0; i < started; i++) {
		testsrv_wait(&w[i].done, "a stream worker", w[i].task,
			     c->timeout_s + 30);
		if (!w[i].err) {
			nok++;
			maxms = max(maxms, w[i].ms);
			minms = min(minms, w[i].ms);
		} else if (!first[0] && w[i].err != -ECANCELED && w[i].why[0]) {
			scnprintf(first, sizeof(first), "connection %u: %s", i,
				  w[i].why);
		}
		total += w[i].bytes;
		put_task_struct(w[i].task);
	}
	ms = max_t(u32, st_ms_since(t0), 1);
	for (i = 0; i < c->conns; i++)
		ndown += w[i].down;
	st_check(nok == c->conns, "stream/data",
		 "%u of %u connections moved %llu bytes each (%u of them server to client), verified by the receiver%s%s",
		 nok, c->conns, c->bytes, ndown, first[0] ? "; " : "", first);
	/* MiB/s, times 10 */
	rate10 = div64_u64(total * 10000ULL, (u64)ms * 1048576ULL);
	st_info("stream: %u connections (%u server to client) x %llu bytes in %u-byte messages: %llu bytes in %u ms = %llu.%llu MiB/s aggregate (per connection %u..%u ms)",
		c->conns, ndown, c->bytes, c->msg, total, ms,
		div_u64(rate10, 10), rate10 % 10, nok ? minms : 0, maxms);
out:
	for (i = 0; w && i < c->conns; i++)
		vfree(w[i].pat);
	kfree(w);
}

/* ------------------------------------------------------------ credit */

/* st_send_nb: one whole message with SMBD_SEND_NONBLOCK, waiting for
 * write_space whenever it says -EAGAIN or takes part of it.
 */
static ssize_t st_send_nb(struct st_cmd *c, struct smbd_sock *sk,
			  struct st_upcalls *u, struct st_sink_msg *m, u32 len,
			  size_t done, u32 *again)
{
	ssize_t n;
	int ws;

	while (done < len) {
		/* go on from what the calls took, whatever they did */
		iov_iter_kvec(&m->it, ITER_SOURCE, m->kv, 2, len);
		iov_iter_advance(&m->it, done);
		ws = atomic_read(&u->write_space);
		n = smbd_sock_send(sk, &m->it, SMBD_SEND_NONBLOCK);
		if (n < 0 && n != -EAGAIN)
			return n;
		if (n > 0) {
			done += n;
			continue;
		}
		(*again)++;
		if (!wait_event_timeout(u->wq, atomic_read(&u->write_space) != ws ||
					READ_ONCE(c->expired), c->timeout_s * HZ) ||
		    READ_ONCE(c->expired))
			return -ETIMEDOUT;
	}
	return done;
}

static void st_credit_blocking(struct st_cmd *c, const u8 *pat)
{
	struct smbd_sock_stats stats = {};
	struct smbd_sock_info info = {};
	struct st_upcalls u;
	struct smbd_sock *sk;
	struct st_sink_msg m;
	char why[128] = "";
	u32 sent = 0, cap = 100000, d = 0, at = 0, credits = U32_MAX, i;
	bool blocked = false;
	ktime_t t_ready, t;
	ssize_t n = 0;
	u64 a[5];
	int err;

	st_upcalls_init(&u);
	err = st_connect(c, &u, false, &sk);
	if (!st_check(!err, "credit/blocking-connect", "%d", err))
		return;
	err = st_hello(sk, ST_MODE_STALL, c->seed, c->msg, c->stall_ms, why,
		       sizeof(why));
	if (!st_check(!err, "credit/blocking-hello", "%s", why))
		goto out;
	t_ready = ktime_get();
	/* The server reads nothing for stall_ms from now. */
	while (sent < cap && st_ms_since(t_ready) < c->stall_ms) {
		st_sink_prep(&m, pat, sent, c->msg);
		t = ktime_get();
		n = smbd_sock_send(sk, &m.it, 0);
		d = st_ms_since(t);
		at = st_ms_since(t_ready);
		if (n != c->msg)
			break;
		sent++;
		/* a send that waited until the server read again */
		if (d >= 200 && at + 200 >= c->stall_ms) {
			blocked = true;
			break;
		}
		if (!smbd_sock_query(sk, &info))
			credits = info.send_credits;
	}
	if (!st_check(n == c->msg, "credit/blocking-send-completes",
		      "send %u: %zd after %u ms", sent, n, d))
		goto out;
	smbd_sock_stats(sk, &stats);
	st_check(blocked && stats.credit_waits, "credit/blocking-send-blocks",
		 "message %u waited %u ms, returned %u ms after the %u ms stall began; %u credits before it, credit_waits %llu",
		 sent, d, at, c->stall_ms, credits, stats.credit_waits);
	for (i = 0; i < 16; i++) {
		st_sink_prep(&m, pat, sent, c->msg);
		n = smbd_sock_send(sk, &m.it, 0);
		if (n != c->msg)
			break;
		sent++;
	}
	err = st_end(sk, a, why, sizeof(why));
	st_check(!err && a[0] == sent && a[1] == (u64)sent * c->msg && !a[2],
		 "credit/blocking-nothing-lost",
		 "%s%sserver counted %llu messages %llu bytes %llu bad; sent %u",
		 why, why[0] ? "; " : "", err ? 0 : a[0], err ? 0 : a[1],
		 err ? 0 : a[2], sent);
out:
	st_release(c, sk);
}

static void st_credit_nonblock(struct st_cmd *c, const u8 *pat)
{
	struct st_upcalls u;
	struct smbd_sock *sk;
	struct st_sink_msg m;
	char why[128] = "";
	u32 sent = 0, cap = 100000, at = 0, i, again = 0, ws_at;
	bool stopped = false;
	ktime_t t_ready;
	ssize_t n = 0;
	long left;
	int ws = 0;
	u64 a[5];
	int err;

	st_upcalls_init(&u);
	err = st_connect(c, &u, false, &sk);
	if (!st_check(!err, "credit/nonblock-connect", "%d", err))
		return;
	err = st_hello(sk, ST_MODE_STALL, c->seed, c->msg, c->stall_ms, why,
		       sizeof(why));
	if (!st_check(!err, "credit/nonblock-hello", "%s", why))
		goto out;
	t_ready = ktime_get();
	while (sent < cap && st_ms_since(t_ready) < c->stall_ms) {
		st_sink_prep(&m, pat, sent, c->msg);
		ws = atomic_read(&u.write_space);
		n = smbd_sock_send(sk, &m.it, SMBD_SEND_NONBLOCK);
		if (n != c->msg) {
			stopped = true;
			break;
		}
		sent++;
	}
	at = st_ms_since(t_ready);
	if (!st_check(stopped && (n == -EAGAIN || (n >= 0 && n < c->msg)) &&
		      at < c->stall_ms, "credit/nonblock-eagain",
		      "message %u: %zd after %u ms of the %u ms stall",
		      sent, n, at, c->stall_ms))
		goto out;
	left = wait_event_timeout(u.wq, atomic_read(&u.write_space) != ws,
				  msecs_to_jiffies(c->stall_ms) + 20 * HZ);
	ws_at = st_ms_since(t_ready);
	st_check(left > 0, "credit/nonblock-write-space",
		 "write_space %s %u ms after the stall began (-EAGAIN at %u ms)",
		 left > 0 ? "came" : "did not come in 20 s;", ws_at, at);
	/* the rest of the message the last call took part of */
	if (n > 0) {
		n = st_send_nb(c, sk, &u, &m, c->msg, n, &again);
		if (n != c->msg)
			goto stats;
		sent++;
	} else {
		n = st_send_nb(c, sk, &u, &m, c->msg, 0, &again);
		if (n != c->msg)
			goto stats;
		sent++;
	}
	st_info("credit: after the first write_space (at %u ms), %u more non-blocking sends said -EAGAIN; the message went at %u ms",
		ws_at, again, st_ms_since(t_ready));
	for (i = 0; i < 16; i++) {
		st_sink_prep(&m, pat, sent, c->msg);
		n = st_send_nb(c, sk, &u, &m, c->msg, 0, &again);
		if (n != c->msg)
			break;
		sent++;
	}
stats:
	err = st_end(sk, a, why, sizeof(why));
	st_check(!err && a[0] == sent && a[1] == (u64)sent * c->msg && !a[2],
		 "credit/nonblock-nothing-lost",
		 "%s%slast send %zd; server counted %llu messages %llu bytes %llu bad; sent %u",
		 why, why[0] ? "; " : "", n, err ? 0 : a[0], err ? 0 : a[1],
		 err ? 0 : a[2], sent);
out:
	st_release(c, sk);
}

static void st_cmd_credit(struct st_cmd *c)
{
	u8 *pat;

	if (c->msg < sizeof(struct st_hdr) || c->msg > SZ_16M) {
		st_check(false, "credit/setup", "msg %u", c->msg);
		return;
	}
	pat = st_pattern(c->seed, c->msg);
	if (!pat) {
		st_check(false, "credit/setup", "out of memory");
		return;
	}
	st_credit_blocking(c, pat);
	st_credit_nonblock(c, pat);
	vfree(pat);
}

/* ------------------------------------------------------------ refused */

static void st_cmd_refused(struct st_cmd *c)
{
	struct smbd_sock *sk;
	ktime_t t0 = ktime_get();
	int err;

	err = st_connect(c, NULL, false, &sk);
	st_check(err < 0 && !READ_ONCE(c->expired), "connect/refused",
		 "connect to a port with no listener: %d after %u ms", err,
		 st_ms_since(t0));
	if (!err)
		st_release(c, sk);
}

/*
 * defport ADDR 0 iwarp=N: port 0 means SMB Direct's port for the device
 * ([MS-SMBD] 1.9, 2.1): 5445 on iWARP, 445 on IB/RoCE, for a listener
 * bound to ADDR and for a connection to ADDR alike; a listener on the
 * wildcard address needs an explicit port.
 */
static void st_cmd_defport(struct st_cmd *c)
{
	u16 want = c->iwarp == 1 ? SMBD_PORT_IWARP : SMBD_PORT_IB;
	struct smbd_sock *lsk = NULL, *nsk = NULL, *sk = NULL;
	struct sockaddr_storage any = {}, got;
	struct smbd_recv_info ri = {};
	struct iov_iter it;
	struct smbd_params p;
	struct st_upcalls *u;
	u8 *msg, *in;
	struct kvec kv;
	ssize_t n;
	int err;

	if (c->iwarp < 0 || testsrv_port(&c->dst)) {
		st_check(false, "defport", "needs port 0 and iwarp=0|1");
		return;
	}
	/* the buffers after the upcalls: a small stack frame */
	u = kzalloc(sizeof(*u) + 100 + 128, GFP_KERNEL);
	if (!u) {
		st_check(false, "defport", "out of memory");
		return;
	}
	msg = (u8 *)(u + 1);
	in = msg + 100;
	st_upcalls_init(u);
	smbd_params_init(&p, true);

	err = smbd_sock_create(&init_net, &p, &lsk);
	if (!err) {
		any.ss_family = c->dst.ss_family;
		err = smbd_sock_bind(lsk, (struct sockaddr *)&any);
		smbd_sock_release(lsk);
		lsk = NULL;
	}
	st_check(err == -EDESTADDRREQ, "defport/wildcard-needs-port",
		 "bind to the wildcard address with port 0: %d (want %d)", err,
		 -EDESTADDRREQ);

	err = smbd_sock_create(&init_net, &p, &lsk) ?: st_track(c, lsk);
	if (err) {
		lsk = NULL;
		goto fail;
	}
	err = smbd_sock_bind(lsk, (struct sockaddr *)&c->dst) ?:
	      smbd_sock_listen(lsk, 4) ?:
	      smbd_sock_getname(lsk, &got, false);
	if (!st_check(!err && testsrv_port(&got) == want, "defport/listener",
		      "bind to %pISc port 0: %d, bound to %pISpc (want port %u)",
		      &c->dst, err, err ? &c->dst : &got, want))
		goto out;

	smbd_params_init(&p, false);
	err = smbd_sock_create(&init_net, &p, &sk) ?: st_track(c, sk);
	if (err) {
		sk = NULL;
		goto fail;
	}
	smbd_sock_set_ops(sk, &st_ops, u);
	err = smbd_sock_connect_async(sk, (struct sockaddr *)&c->dst,
				      st_connect_done);
	if (!err)
		err = smbd_sock_accept(lsk, &nsk, 0);
	if (!err)
		err = st_track(c, nsk);
	if (err) {
		nsk = NULL;
		st_check(false, "defport/connect", "connect and accept: %d", err);
		goto out;
	}
	if (!wait_for_completion_timeout(&u->connected, c->timeout_s * HZ) ||
	    u->connect_status) {
		st_check(false, "defport/connect", "connect: %d",
			 u->connect_status ?: -ETIMEDOUT);
		goto out;
	}
	err = smbd_sock_getname(sk, &got, true);
	st_check(!err && testsrv_port(&got) == want, "defport/connect",
		 "connected to %pISpc (want port %u): %d", &got, want, err);

	/* one message across it */
	st_fill(msg, 100, c->seed);
	kv.iov_base = msg;
	kv.iov_len = 100;
	iov_iter_kvec(&it, ITER_SOURCE, &kv, 1, 100);
	n = smbd_sock_send(sk, &it, 0);
	if (n == 100) {
		kv.iov_base = in;
		kv.iov_len = 128;
		iov_iter_kvec(&it, ITER_DEST, &kv, 1, 128);
		n = smbd_sock_recv(nsk, &it, 0, &ri);
	}
	st_check(n == 100 && !memcmp(in, msg, 100),
		 "defport/data", "a 100-byte message: %zd", n);
	goto out;
fail:
	st_check(false, "defport", "socket: %d", err);
out:
	st_release(c, sk);
	st_release(c, nsk);
	st_release(c, lsk);
	kfree(u);
}

/* Create a socket of class @cls for @c, tracked for the watchdog. */
static int st_class_sock(struct st_cmd *c, bool responder, u8 cls,
			 struct smbd_sock **skp)
{
	struct smbd_params p;
	int err;

	smbd_params_init(&p, responder);
	p.dev_class = cls;
	err = smbd_sock_create(&init_net, &p, skp);
	if (!err)
		err = st_track(c, *skp);
	if (err)
		*skp = NULL;
	return err;
}

/*
 * devclass ADDR PORT iwarp=N: a socket kept to one device class
 * (smbd_params.dev_class, which keeps 5445 to iWARP and 445 to IB/RoCE
 * when both share a host, [MS-SMBD] 1.9). ADDR belongs to a device of
 * the class iwarp=N names; "own" is that class, "other" the other one.
 * Binding an "other" listener to ADDR fails before it listens; an "own"
 * one on ADDR:PORT accepts an "own" initiator and an unrestricted one,
 * while an "other" initiator fails before it connects; a wildcard
 * "other" listener on PORT+1 refuses the request and counts it. An
 * unknown class is refused at creation.
 */
static void st_cmd_devclass(struct st_cmd *c)
{
	struct sockaddr_storage any = {}, dst = c->dst;
	struct smbd_sock *lsk = NULL, *wsk = NULL, *sk = NULL, *nsk = NULL;
	u8 own = c->iwarp ? SMBD_DEV_IWARP : SMBD_DEV_IB;
	u8 other = c->iwarp ? SMBD_DEV_IB : SMBD_DEV_IWARP;
	struct smbd_sock_stats st;
	struct st_upcalls *u;
	struct smbd_params p;
	u16 port = testsrv_port(&c->dst);
	int err, i;

	if (c->iwarp < 0 || !port) {
		st_check(false, "devclass", "needs a port and iwarp=0|1");
		return;
	}
	u = kzalloc(sizeof(*u), GFP_KERNEL);
	if (!u) {
		st_check(false, "devclass", "out of memory");
		return;
	}
	smbd_params_init(&p, true);
	p.dev_class = SMBD_DEV_IWARP + 1;
	err = smbd_sock_create(&init_net, &p, &sk);
	if (!err)
		smbd_sock_release(sk);
	sk = NULL;
	st_check(err == -EINVAL, "devclass/unknown-class",
		 "a socket of class %u: %d (want %d)", p.dev_class, err,
		 -EINVAL);

	err = st_class_sock(c, true, other, &lsk);
	if (!err)
		err = smbd_sock_bind(lsk, (struct sockaddr *)&c->dst);
	st_check(err == -EPROTONOSUPPORT, "devclass/bind-other",
		 "bind a listener of the other class to %pISpc: %d (want %d)",
		 &c->dst, err, -EPROTONOSUPPORT);
	st_release(c, lsk);

	err = st_class_sock(c, true, own, &lsk) ?:
	      smbd_sock_bind(lsk, (struct sockaddr *)&c->dst) ?:
	      smbd_sock_listen(lsk, 4);
	if (!st_check(!err, "devclass/bind-own",
		      "a listener of its own class on %pISpc: %d", &c->dst, err))
		goto out;

	/* an initiator of the other class fails before it connects */
	err = st_class_sock(c, false, other, &sk);
	if (!err)
		err = smbd_sock_connect(sk, (struct sockaddr *)&c->dst);
	st_check(err == -EPROTONOSUPPORT, "devclass/connect-other",
		 "an initiator of the other class to %pISpc: %d (want %d)",
		 &c->dst, err, -EPROTONOSUPPORT);
	st_release(c, sk);
	sk = NULL;

	/* own class, then no class: both accepted */
	for (i = 0; i < 2; i++) {
		st_upcalls_init(u);
		err = st_class_sock(c, false, i ? SMBD_DEV_ANY : own, &sk);
		if (!err) {
			smbd_sock_set_ops(sk, &st_ops, u);
			err = smbd_sock_connect_async(sk,
						      (struct sockaddr *)&c->dst,
						      st_connect_done);
		}
		if (!err)
			err = smbd_sock_accept(lsk, &nsk, 0);
		if (!err)
			err = st_track(c, nsk);
		else
			nsk = NULL;
		if (!err && !wait_for_completion_timeout(&u->connected,
							 c->timeout_s * HZ))
			err = -ETIMEDOUT;
		if (!err)
			err = u->connect_status;
		if (err == -ETIMEDOUT) {
			smbd_sock_shutdown(sk);
			wait_for_completion_timeout(&u->connected, 20 * HZ);
		}
		st_check(!err, i ? "devclass/connect-any" : "devclass/connect-own",
			 "an initiator of %s class to %pISpc: %d",
			 i ? "no" : "its own", &c->dst, err);
		st_release(c, sk);
		st_release(c, nsk);
		sk = NULL;
		nsk = NULL;
	}

	/* a wildcard listener of the other class refuses, and counts it */
	any.ss_family = c->dst.ss_family;
	smbd_addr_set_port((struct sockaddr *)&any, port + 1);
	smbd_addr_set_port((struct sockaddr *)&dst, port + 1);
	err = st_class_sock(c, true, other, &wsk) ?:
	      smbd_sock_bind(wsk, (struct sockaddr *)&any) ?:
	      smbd_sock_listen(wsk, 4);
	if (!st_check(!err, "devclass/wildcard-other",
		      "a wildcard listener of the other class on port %u: %d",
		      port + 1, err))
		goto out;
	err = st_class_sock(c, false, SMBD_DEV_ANY, &sk);
	if (!err)
		err = smbd_sock_connect(sk, (struct sockaddr *)&dst);
	smbd_sock_stats(wsk, &st);
	st_check(err == -ECONNREFUSED && st.conns_wrong_class == 1 &&
		 !st.conns_refused, "devclass/wildcard-refuses",
		 "connect to %pISpc: %d (want %d); the listener counted %llu of the wrong class, %llu others refused",
		 &dst, err, -ECONNREFUSED, st.conns_wrong_class,
		 st.conns_refused);
out:
	st_release(c, sk);
	st_release(c, wsk);
	st_release(c, lsk);
	kfree(u);
}

/* ------------------------------------------------------------ bench */

/*
 * The benchmark's commands (scripts/bench.sh). Each reports one "info"
 * line of figures, and "ok" only when every message came back intact.
 */

static int st_u32_cmp(const void *a, const void *b)
{
	u32 x = *(const u32 *)a, y = *(const u32 *)b;

	return x < y ? -1 : x > y;
}

/* st_pct: the @pct-th percentile of the sorted @v[@n] */
static u32 st_pct(const u32 *v, u32 n, u32 pct)
{
	return n ? v[min_t(u32, n - 1, div_u64((u64)n * pct, 100))] : 0;
}

/*
 * rr: count= round trips of one msg=-byte message (default 4 KiB) through
 * the ECHO server on one connection, each sent when the last came back,
 * after 100 not counted. Reports round trips per second, p50 and p99.
 */
static void st_cmd_rr(struct st_cmd *c)
{
	u32 i, n = c->count, warm = 100, len = c->msg, *ns = NULL, ms;
	struct smbd_sock *sk = NULL;
	struct smbd_recv_info ri;
	struct st_upcalls u;
	struct iov_iter it;
	struct kvec kv;
	u8 *out, *in;
	char why[128] = "";
	ktime_t t0, t;
	ssize_t r;
	u64 a[5];
	int err;

	out = kvmalloc(len, GFP_KERNEL);
	in = kvmalloc(len, GFP_KERNEL);
	ns = kvmalloc_array(n, sizeof(*ns), GFP_KERNEL);
	if (!out || !in || !ns || len < 8) {
		st_check(false, "rr/setup", "msg %u, count %u", len, n);
		goto out;
	}
	st_fill(out, len, c->seed);
	st_upcalls_init(&u);
	err = st_connect(c, &u, false, &sk);
	if (!st_check(!err, "rr/connect", "%d", err))
		goto out;
	err = st_hello(sk, ST_MODE_ECHO, 0, 0, 0, why, sizeof(why));
	if (!st_check(!err, "rr/hello", "%s", why))
		goto out;
	t0 = ktime_get();
	for (i = 0; i < warm + n; i++) {
		t = ktime_get();
		kv.iov_base = out;
		kv.iov_len = len;
		iov_iter_kvec(&it, ITER_SOURCE, &kv, 1, len);
		r = smbd_sock_send(sk, &it, 0);
		if (r == len) {
			kv.iov_base = in;
			iov_iter_kvec(&it, ITER_DEST, &kv, 1, len);
			r = smbd_sock_recv(sk, &it, 0, &ri);
		}
		if (r != len || memcmp(in, out, len)) {
			scnprintf(why, sizeof(why), "round trip %u: %zd", i, r);
			break;
		}
		if (i == warm)
			t0 = t;
		if (i >= warm)
			ns[i - warm] = min_t(s64, ktime_to_ns(ktime_sub(ktime_get(), t)),
					     U32_MAX);
	}
	ms = max_t(u32, st_ms_since(t0), 1);
	if (!st_check(i == warm + n, "rr/data", "%s", why))
		goto out;
	err = st_end(sk, a, why, sizeof(why));
	st_check(!err && a[0] == warm + n && !a[2], "rr/server-counts",
		 "%s%sserver echoed %llu messages, %llu with a bad trailer",
		 why, why[0] ? "; " : "", a[0], a[2]);
	sort(ns, n, sizeof(*ns), st_u32_cmp, NULL);
	st_info("rr: %u round trips of %u bytes in %u ms: %llu per s, p50 %u us, p99 %u us",
		n, len, ms, div_u64((u64)n * 1000, ms),
		st_pct(ns, n, 50) / 1000, st_pct(ns, n, 99) / 1000);
out:
	st_release(c, sk);
	kvfree(ns);
	kvfree(in);
	kvfree(out);
}

/*
 * connrate: count= connections set up (rdma_cm connect and SMB Direct
 * negotiation) and released, one after the other. Reports setups per
 * second and the p50 and p99 of the connect alone.
 */
static void st_cmd_connrate(struct st_cmd *c)
{
	u32 i, n = c->count, *ns, ms;
	struct smbd_sock *sk;
	ktime_t t0, t;
	int err = 0;

	ns = kvmalloc_array(n, sizeof(*ns), GFP_KERNEL);
	if (!ns) {
		st_check(false, "connrate/setup", "count %u", n);
		return;
	}
	t0 = ktime_get();
	for (i = 0; i < n && !READ_ONCE(c->expired); i++) {
		t = ktime_get();
		err = st_connect(c, NULL, false, &sk);
		if (err)
			break;
		ns[i] = min_t(s64, ktime_to_ns(ktime_sub(ktime_get(), t)), U32_MAX);
		st_release(c, sk);
	}
	ms = max_t(u32, st_ms_since(t0), 1);
	if (st_check(i == n, "connrate/connect", "connection %u: %d", i, err)) {
		sort(ns, n, sizeof(*ns), st_u32_cmp, NULL);
		st_info("connrate: %u connections set up and released in %u ms: %llu.%llu per s, connect p50 %u us, p99 %u us",
			n, ms, div_u64((u64)n * 1000, ms),
			div_u64((u64)n * 10000, ms) % 10,
			st_pct(ns, n, 50) / 1000, st_pct(ns, n, 99) / 1000);
	}
	kvfree(ns);
}

/* ------------------------------------------------------------ commands */

static int st_parse_sizes(struct st_cmd *c, char *v)
{
	char *tok;
	u64 x;

	c->nr_sizes = 0;
	while ((tok = strsep(&v, ",")) != NULL) {
		if (!*tok)
			continue;
		if (c->nr_sizes == ST_MAX_SIZES)
			return -E2BIG;
		if (!strcmp(tok, "max")) {
			c->sizes[c->nr_sizes++] = ST_SIZE_MAX;
			continue;
		}
		x = memparse(tok, &tok);
		if (*tok || x >= ST_SIZE_MAX)
			return -EINVAL;
		c->sizes[c->nr_sizes++] = x;
	}
	return 0;
}

static int st_parse_u64(const char *v, u64 *out)
{
	char *end;
	u64 x = memparse(v, &end);

	if (*end || end == v)
		return -EINVAL;
	*out = x;
	return 0;
}

static int st_parse_u32(const char *v, u32 *out)
{
	u64 x;

	if (st_parse_u64(v, &x) || x > U32_MAX)
		return -EINVAL;
	*out = x;
	return 0;
}

static int st_parse_dir(struct st_cmd *c, const char *v)
{
	if (!strcmp(v, "up"))
		c->dir = ST_DIR_UP;
	else if (!strcmp(v, "down"))
		c->dir = ST_DIR_DOWN;
	else if (!strcmp(v, "both"))
		c->dir = ST_DIR_BOTH;
	else
		return -EINVAL;
	return 0;
}

static int st_parse(struct st_cmd *c, int argc, char **argv)
{
	u32 iw = 0;
	char *k, *v;
	int i, err;

	/* IPv4 or IPv6 (no brackets); port 0 asks for SMB Direct's default */
	if (argc < 3 ||
	    inet_pton_with_scope(&init_net, AF_UNSPEC, argv[1], argv[2], &c->dst))
		return -EINVAL;
	for (i = 3; i < argc; i++) {
		k = argv[i];
		v = strchr(k, '=');
		if (!v)
			return -EINVAL;
		*v++ = '\0';
		if (!strcmp(k, "sizes"))
			err = st_parse_sizes(c, v);
		else if (!strcmp(k, "random"))
			err = st_parse_u32(v, &c->nrandom);
		else if (!strcmp(k, "seed"))
			err = kstrtou64(v, 0, &c->seed);
		else if (!strcmp(k, "iwarp"))
			err = kstrtou32(v, 10, &iw) ?: (iw > 1 ? -EINVAL : 0);
		else if (!strcmp(k, "conns"))
			err = st_parse_u32(v, &c->conns);
		else if (!strcmp(k, "bytes"))
			err = st_parse_u64(v, &c->bytes);
		else if (!strcmp(k, "msg"))
			err = st_parse_u32(v, &c->msg);
		else if (!strcmp(k, "stall_ms"))
			err = st_parse_u32(v, &c->stall_ms);
		else if (!strcmp(k, "timeout"))
			err = st_parse_u32(v, &c->timeout_s);
		else if (!strcmp(k, "dir"))
			err = st_parse_dir(c, v);
		else if (!strcmp(k, "msize"))
			err = st_parse_u32(v, &c->msize);
		else if (!strcmp(k, "count"))
			err = st_parse_u32(v, &c->count) ?: (c->count ? 0 : -EINVAL);
		else
			err = -EINVAL;
		if (err)
			return err;
		if (!strcmp(k, "iwarp"))
			c->iwarp = iw;
	}
	return c->timeout_s ? 0 : -EINVAL;
}

static int st_run(char *line)
{
	/*
	 * Around one segment of smbd's 8192-byte messages, and of the
	 * 12 and 20 KiB two smbd ends negotiate over siw and rxe
	 */
	static const u32 def_sizes[] = { 0, 1, 4096, 8167, 8168, 8169, 12263,
					 12264, 12265, 20455, 20456, 20457,
					 65536, ST_SIZE_MAX };
	struct testsrv *srv;
	struct st_cmd *c;
	char **argv;
	int argc, err;

	argv = argv_split(GFP_KERNEL, line, &argc);
	if (!argv)
		return -ENOMEM;
	c = kzalloc(sizeof(*c), GFP_KERNEL);
	if (!c || !argc) {
		err = c ? -EINVAL : -ENOMEM;
		goto out;
	}
	memcpy(c->sizes, def_sizes, sizeof(def_sizes));
	c->nr_sizes = ARRAY_SIZE(def_sizes);
	c->seed = 0x5eed;
	c->iwarp = -1;
	c->conns = 16;
	c->bytes = SZ_64M;
	c->msg = SZ_64K;
	c->stall_ms = 3000;
	c->timeout_s = 120;
	c->count = 10000;
	mutex_init(&c->lock);
	INIT_DELAYED_WORK(&c->watchdog, st_watchdog);
	err = st_parse(c, argc, argv);
	if (err) {
		st_out_add("error: cannot parse \"%s ...\": %d", argv[0], err);
		goto out;
	}

	if (!strcmp(argv[0], "listen")) {
		st_server_start(&c->dst);
		goto out;
	}
	if (!strcmp(argv[0], "stop")) {
		srv = testsrv_find(&st_servers, &c->dst);
		if (srv)
			st_server_stop(srv);
		else
			st_check(false, "stop", "no server on %pISpc", &c->dst);
		goto out;
	}

	schedule_delayed_work(&c->watchdog, c->timeout_s * HZ);
	if (!strcmp(argv[0], "echo"))
		st_cmd_echo(c);
	else if (!strcmp(argv[0], "stream"))
		st_cmd_stream(c);
	else if (!strcmp(argv[0], "credit"))
		st_cmd_credit(c);
	else if (!strcmp(argv[0], "refused"))
		st_cmd_refused(c);
	else if (!strcmp(argv[0], "defport"))
		st_cmd_defport(c);
	else if (!strcmp(argv[0], "devclass"))
		st_cmd_devclass(c);
	else if (!strcmp(argv[0], "rr"))
		st_cmd_rr(c);
	else if (!strcmp(argv[0], "connrate"))
		st_cmd_connrate(c);
	else
		err = -EINVAL;
	cancel_delayed_work_sync(&c->watchdog);
	if (c->expired)
		st_check(false, "timeout", "\"%s\" ran past %u s; its sockets were shut down",
			 argv[0], c->timeout_s);
	if (err)
		st_out_add("error: unknown command \"%s\"", argv[0]);
out:
	kfree(c);
	argv_free(argv);
	return err;
}

/* ------------------------------------------------------------ module */

static int __init st_init(void)
{
	return testctl_init(&st_tc, "smbd_test", ST_OUT_MAX, ST_LINE_MAX,
			    st_run);
}

static void __exit st_exit(void)
{
	struct testsrv *srv, *tmp;

	testctl_remove(&st_tc);
	mutex_lock(&st_tc.lock);
	list_for_each_entry_safe(srv, tmp, &st_servers, node)
		st_server_stop(srv);
	mutex_unlock(&st_tc.lock);
	testctl_out_free(&st_tc.out);
}

module_init(st_init);
module_exit(st_exit);

MODULE_DESCRIPTION("smbd transport tests, driven through debugfs");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(SMBD);

// SPDX-License-Identifier: GPL-2.0
/*
 * smbd_mr_test.ko: memory registration, invalidation and RDMA read/write
 * through smbd's public API ([MS-SMBD] 3.1.4.3 to 3.1.4.6), smbd to smbd.
 *
 * debugfs /sys/kernel/debug/smbd_mr_test/ctl takes one command:
 *   listen ADDR PORT    a server: for each request it RDMA-writes a
 *                       pattern into the client's buffer or RDMA-reads
 *                       and checks it, then answers, with Send with
 *                       Invalidate when asked
 *   stop ADDR PORT
 *   stop-posted ADDR PORT  the same, checking that some of the server's
 *                       RDMA writes, not all, were posted unwaited
 *   mr ADDR PORT        the client checks (below), each an "ok"/"not ok"
 *   mr-brief ADDR PORT  the same without the MaxReadWriteSize transfers
 *                       and the 4,095 descriptors
 *   rw ADDR PORT        only their RDMA reads and writes: every size up to
 *                       MaxReadWriteSize and 1 to 4,095 descriptors
 *   pool ADDR PORT      16 threads share a pool of 4 MRs
 *   pool-split ADDR PORT 4 threads whose registrations need 2 MRs each
 *                       share a pool of 4 (none may wait holding one);
 *                       one that needs 5 is refused at once
 *   bench ADDR PORT     RDMA write and read throughput at 1 MiB
 *   faults ADDR PORT SECONDS THREADS [clean]
 *                       a workload that survives faults (below)
 * and /sys/kernel/debug/smbd_mr_test/result has their lines.
 *
 * Client checks: sizes 1, 4095, 4096, 4097, 1 MiB and MaxReadWriteSize,
 * page-aligned and not, kvec and bvec, in both directions; buffers cut
 * into several descriptors; remote invalidation of exactly the right
 * rkey needs no local invalidation, of another rkey or of none does;
 * after deregistration the peer's RDMA through the old descriptor fails
 * (and ends that connection) with the buffer untouched; teardown with
 * registrations held and an RDMA read in flight.
 *
 * faults: THREADS threads, each on its own connection with a pool of 4
 * MRs, do I/Os until SECONDS are over: a buffer of 1 byte to 1 MiB, kvec
 * or bvec, registered for the server to RDMA-write or RDMA-read, the
 * answer sometimes a Send with Invalidate, then deregistered; or a
 * message of up to 256 KiB, in up to three parts, that the server checks
 * (MT_OP_PAD). Any error ends that connection and the thread connects
 * again; it also does so on its own every few dozen I/Os. Meant to run
 * while smbd's fault points (or failslab) fail calls: the checks are
 * that every thread ends in time and that no I/O that succeeded moved
 * other data, nor touched the bytes around its buffer. With "clean", no
 * fault is expected: any error fails too.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bvec.h>
#include <linux/crc32.h>
#include <linux/delay.h>
#include <linux/inet.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/prandom.h>
#include <linux/sched/debug.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/uio.h>
#include <linux/vmalloc.h>
#include <net/net_namespace.h>

#include "smbd.h"
#include "../include/smbd_testbuf.h"
#include "../include/smbd_testctl.h"
#include "../include/smbd_testsrv.h"

#define MT_MAGIC	0x6d727431	/* "mrt1" */
#define MT_MAX_DESC	16
/*
 * Descriptors a request may carry: as many as an SMB2 channel info
 * (ReadChannelInfoLength and WriteChannelInfoLength are 16-bit).
 */
#define MT_WIRE_DESC	(U16_MAX / SMBD_BUF_DESC_LEN)
#define MT_CANARY	0xa5
#define MT_OUT_MAX	(32 << 10)

/*
 * The BENCH ops move the data without filling or checking it. PAD: a
 * message of len bytes of the seed's pattern follows the request; the
 * server checks it (no descriptors).
 */
enum mt_op {
	MT_OP_WRITE = 1, MT_OP_READ, MT_OP_SLOW_READ,
	MT_OP_BENCH_WRITE, MT_OP_BENCH_READ, MT_OP_PAD,
};

/* A request: what to do with the client's buffer, then how to answer. */
struct mt_req {
	__le32 magic;
	__le32 op;
	__le64 seed;
	__le64 offset;
	__le32 len;
	__le32 inv;		/* 1: answer with Send with Invalidate */
	__le32 inv_token;
	__le32 ndesc;
	u8 desc[MT_WIRE_DESC * SMBD_BUF_DESC_LEN];	/* ndesc of them sent */
};

/* A request's length on the wire: its descriptors only. */
static size_t mt_req_len(u32 ndesc)
{
	return offsetof(struct mt_req, desc) +
	       min_t(u32, ndesc, MT_WIRE_DESC) * SMBD_BUF_DESC_LEN;
}

static int mt_req_send(struct smbd_sock *sk, struct mt_req *req)
{
	struct kvec kv = { .iov_base = req,
			   .iov_len = mt_req_len(le32_to_cpu(req->ndesc)) };
	struct iov_iter it;
	ssize_t n;

	iov_iter_kvec(&it, ITER_SOURCE, &kv, 1, kv.iov_len);
	n = smbd_sock_send(sk, &it, 0);
	if (n < 0)
		return n;
	return n == kv.iov_len ? 0 : -EPROTO;
}

struct mt_resp {
	__le32 magic;
	__le32 status;		/* 0, or a negative errno */
};

static struct testctl mt_ctl;
#define mt_check(ok, name, fmt, ...) \
	testctl_check(&mt_ctl.out, ok, NULL, name, fmt, ##__VA_ARGS__)
#define mt_info(fmt, ...) testctl_info(&mt_ctl.out, fmt, ##__VA_ARGS__)

/* mt_fill: the pattern of @seed at byte @pos of a buffer, @len bytes */
static void mt_fill(u8 *p, size_t len, u64 seed, size_t pos)
{
	size_t i;

	for (i = 0; i < len; i++) {
		u64 x = seed ^ ((pos + i) / 8 * 0x9e3779b97f4a7c15ULL);

		x ^= x >> 29;
		x *= 0xbf58476d1ce4e5b9ULL;
		p[i] = x >> (8 * ((pos + i) % 8));
	}
}

static bool mt_is_pattern(const u8 *p, size_t len, u64 seed, size_t pos,
			  size_t *bad)
{
	u8 chunk[64];
	size_t i, n, k;

	for (i = 0; i < len; i += n) {
		n = min(len - i, sizeof(chunk));
		mt_fill(chunk, n, seed, pos + i);
		if (memcmp(chunk, p + i, n)) {
			for (k = 0; k < n && chunk[k] == p[i + k]; k++)
				;
			*bad = i + k;
			return false;
		}
	}
	return true;
}

/* A kthread whose work is done: sleep until kthread_stop(). */
static void mt_wait_stop(void)
{
	while (!kthread_should_stop()) {
		set_current_state(TASK_INTERRUPTIBLE);
		if (kthread_should_stop())
			break;
		schedule();
	}
	__set_current_state(TASK_RUNNING);
}

static int mt_kvec_io(struct smbd_sock *sk, void *buf, size_t len,
		      bool send)
{
	struct kvec kv = { .iov_base = buf, .iov_len = len };
	struct iov_iter it;
	ssize_t n;

	iov_iter_kvec(&it, send ? ITER_SOURCE : ITER_DEST, &kv, 1, len);
	n = send ? smbd_sock_send(sk, &it, 0) : smbd_sock_recv(sk, &it, 0, NULL);
	if (n < 0)
		return n;
	return n == len ? 0 : -EPROTO;
}

/* ------------------------------------------------------------ server */

struct mt_server {
	struct testsrv ts;	/* first: on mt_servers */
	atomic_t requests;
	atomic_t rw_errors;
	atomic64_t writes;	/* RDMA writes of its connections that ended */
	atomic64_t posted;	/* of them, posted unwaited from smbd's slots */
};

struct mt_conn {
	struct testsrv_conn tc;	/* first: the server allocates it */
	struct smbd_buf_desc *descs;	/* MT_WIRE_DESC, decoded requests */
	u8 *data;		/* the thread's buffer, grown on demand */
	size_t size;		/* of data */
	size_t cap;		/* MaxReadWriteSize: the most data may grow to */
};

static LIST_HEAD(mt_servers);	/* under mt_ctl.lock */

/* Room for @len bytes in @c's buffer: 0, -EMSGSIZE or -ENOMEM. */
static int mt_conn_room(struct mt_conn *c, size_t len)
{
	size_t size;

	if (len > c->cap)
		return -EMSGSIZE;
	if (c->data && len <= c->size)
		return 0;
	/* In steps of 1 MiB: most connections never need MaxReadWriteSize. */
	size = min(round_up(max_t(size_t, len, 1), SZ_1M), c->cap);
	vfree(c->data);
	c->size = 0;
	c->data = vmalloc(size);
	if (!c->data)
		return -ENOMEM;
	c->size = size;
	return 0;
}

/* A PAD request: take its message, whatever happens, and check it. */
static int mt_serve_pad(struct mt_conn *c, u32 len, u64 seed)
{
	size_t bad;
	int err;

	if (!len)
		return -EINVAL;
	err = mt_conn_room(c, len) ?:
	      mt_kvec_io(c->tc.sk, c->data, len, false);
	if (err)
		return err;
	return mt_is_pattern(c->data, len, seed, 0, &bad) ? 0 : -EBADMSG;
}

static int mt_serve_one(struct mt_conn *c, struct mt_req *req)
{
	struct smbd_buf_desc *descs = c->descs;
	struct mt_resp resp = { .magic = cpu_to_le32(MT_MAGIC) };
	u32 op = le32_to_cpu(req->op), len = le32_to_cpu(req->len);
	u64 seed = le64_to_cpu(req->seed), off = le64_to_cpu(req->offset);
	u32 ndesc = le32_to_cpu(req->ndesc);
	struct mt_server *srv = container_of(c->tc.srv, struct mt_server, ts);
	struct smbd_sock *sk = c->tc.sk;
	struct iov_iter it;
	struct kvec kv;
	size_t bad;
	ssize_t n;
	u8 *data;
	int nd;

	atomic_inc(&srv->requests);
	if (op == MT_OP_PAD) {
		n = mt_serve_pad(c, len, seed);
		/*
		 * A failed check is answered; any other error may have left
		 * the message untaken: the connection ends.
		 */
		if (n && n != -EBADMSG)
			return n;
		goto answer;
	}
	nd = ndesc <= MT_WIRE_DESC ?
	     smbd_desc_decode(req->desc, ndesc * SMBD_BUF_DESC_LEN, descs,
			      MT_WIRE_DESC) : -E2BIG;
	n = nd < 0 ? nd : mt_conn_room(c, len);
	if (n)
		goto answer;
	data = c->data;
	kv.iov_base = data;
	kv.iov_len = len;
	if (op == MT_OP_WRITE || op == MT_OP_BENCH_WRITE) {
		if (op == MT_OP_WRITE)
			mt_fill(data, len, seed, 0);
		iov_iter_kvec(&it, ITER_SOURCE, &kv, 1, len);
		n = smbd_rdma_write(sk, &it, descs, nd, off);
	} else if (op == MT_OP_BENCH_READ) {
		iov_iter_kvec(&it, ITER_DEST, &kv, 1, len);
		n = smbd_rdma_read(sk, &it, descs, nd, off);
	} else {
		memset(data, 0, len);
		iov_iter_kvec(&it, ITER_DEST, &kv, 1, len);
		n = smbd_rdma_read(sk, &it, descs, nd, off);
		if (n == len && !mt_is_pattern(data, len, seed, 0, &bad))
			n = -EBADMSG;
		if (op == MT_OP_SLOW_READ)
			msleep(200);
	}
	if (n >= 0 && n != len)
		n = -EIO;
	if (n < 0)
		atomic_inc(&srv->rw_errors);
answer:
	resp.status = cpu_to_le32(n < 0 ? n : 0);
	kv.iov_base = &resp;
	kv.iov_len = sizeof(resp);
	iov_iter_kvec(&it, ITER_SOURCE, &kv, 1, sizeof(resp));
	if (le32_to_cpu(req->inv))
		n = smbd_sock_send_inv(sk, &it, 0, le32_to_cpu(req->inv_token));
	else
		n = smbd_sock_send(sk, &it, 0);
	return n < 0 ? n : 0;
}

static int mt_serve(struct testsrv_conn *tc)
{
	struct mt_conn *c = container_of(tc, struct mt_conn, tc);
	struct mt_server *srv = container_of(tc->srv, struct mt_server, ts);
	struct smbd_sock_info info = {};
	struct smbd_sock_stats st;
	struct mt_req *req;

	req = kmalloc(sizeof(*req), GFP_KERNEL);
	c->descs = kvmalloc_array(MT_WIRE_DESC, sizeof(*c->descs), GFP_KERNEL);
	if (!smbd_sock_query(c->tc.sk, &info))
		c->cap = info.max_read_write_size;
	while (req && c->descs && c->cap) {
		struct kvec kv = { .iov_base = req, .iov_len = sizeof(*req) };
		struct iov_iter it;
		ssize_t n;

		iov_iter_kvec(&it, ITER_DEST, &kv, 1, sizeof(*req));
		n = smbd_sock_recv(c->tc.sk, &it, 0, NULL);
		if (n < (ssize_t)offsetof(struct mt_req, desc) ||
		    le32_to_cpu(req->magic) != MT_MAGIC ||
		    n != mt_req_len(le32_to_cpu(req->ndesc)))
			break;
		if (mt_serve_one(c, req))
			break;
	}
	smbd_sock_stats(c->tc.sk, &st);
	atomic64_add(st.rdma_writes, &srv->writes);
	atomic64_add(st.rdma_writes_posted, &srv->posted);
	vfree(c->data);
	c->data = NULL;
	kvfree(c->descs);
	c->descs = NULL;
	kfree(req);
	/* Whatever ended the loop, the client hears of it: released. */
	return 0;
}

static void mt_server_start(const struct sockaddr_storage *addr)
{
	struct mt_server *srv;
	const char *step = "";
	int err;

	srv = kzalloc(sizeof(*srv), GFP_KERNEL);
	if (!srv) {
		mt_check(false, "listen", "out of memory");
		return;
	}
	srv->ts.serve = mt_serve;
	srv->ts.conn_size = sizeof(struct mt_conn);
	srv->ts.name = "smbd_mr";
	srv->ts.reap = true;
	err = testsrv_start(&srv->ts, addr, 32, &step);
	if (err) {
		mt_check(false, "listen", "%pISpc: %s: %d", addr, step, err);
		kfree(srv);
		return;
	}
	mt_check(true, "listen", "%pISpc", addr);
	list_add_tail(&srv->ts.node, &mt_servers);
}

/*
 * @posted: the clients' traffic had small writes into one descriptor and
 * others: check that smbd posted some of its RDMA writes unwaited from
 * its slots (posted_write_max) and waited for the rest.
 */
static void mt_server_stop(struct mt_server *srv, bool posted)
{
	testsrv_stop(&srv->ts, &mt_ctl.out, 0, NULL, NULL);
	mt_check(!srv->ts.accept_errors, "stop/no-accept-errors",
		 "%u accept errors (last %d)", srv->ts.accept_errors,
		 srv->ts.last_accept_err);
	mt_info("server %pISpc: %d requests, %d RDMA errors", &srv->ts.addr,
		atomic_read(&srv->requests), atomic_read(&srv->rw_errors));
	mt_info("server %pISpc: %lld of %lld RDMA writes posted unwaited",
		&srv->ts.addr, atomic64_read(&srv->posted),
		atomic64_read(&srv->writes));
	/* The clients checked both kinds' data. */
	if (posted)
		mt_check(atomic64_read(&srv->posted) > 0 &&
			 atomic64_read(&srv->posted) <
			 atomic64_read(&srv->writes), "stop/posted-writes",
			 "%lld of %lld RDMA writes posted",
			 atomic64_read(&srv->posted),
			 atomic64_read(&srv->writes));
	list_del(&srv->ts.node);
	kfree(srv);
}

/* ------------------------------------------------------------ client */

struct mt_cmd {
	struct sockaddr_storage dst;
	u64 seed;
	u32 neg_timeout_ms;	/* 0: smbd's default */
	u32 ka_interval_ms;	/* with ka_timeout_ms; 0: smbd's default */
	u32 ka_timeout_ms;
};

static int mt_connect(struct mt_cmd *c, u16 mr_count, struct smbd_sock **skp)
{
	struct smbd_params p;
	int err;

	smbd_params_init(&p, false);
	p.mr_count = mr_count;
	if (c->neg_timeout_ms)
		p.negotiate_timeout_ms = c->neg_timeout_ms;
	if (c->ka_interval_ms) {
		p.keepalive_interval_ms = c->ka_interval_ms;
		p.keepalive_timeout_ms = c->ka_timeout_ms;
	}
	err = smbd_sock_create(&init_net, &p, skp);
	if (err)
		return err;
	err = smbd_sock_connect(*skp, (struct sockaddr *)&c->dst);
	if (err) {
		smbd_sock_release(*skp);
		*skp = NULL;
	}
	return err;
}

static struct mt_req *mt_req_new(u32 op, u64 seed, u64 off, u32 len,
				 const struct smbd_buf_desc *d, int nd,
				 bool inv, u32 inv_token)
{
	struct mt_req *req;
	int i;

	/* Only as long as it is sent: most requests carry one descriptor. */
	req = kzalloc(mt_req_len(nd), GFP_KERNEL);
	if (!req)
		return NULL;
	req->magic = cpu_to_le32(MT_MAGIC);
	req->op = cpu_to_le32(op);
	req->seed = cpu_to_le64(seed);
	req->offset = cpu_to_le64(off);
	req->len = cpu_to_le32(len);
	req->inv = cpu_to_le32(inv);
	req->inv_token = cpu_to_le32(inv_token);
	req->ndesc = cpu_to_le32(nd);
	for (i = 0; i < nd; i++)
		smbd_desc_encode(&d[i], req->desc + i * SMBD_BUF_DESC_LEN);
	return req;
}

/* The server's answer: 0 and its status in @status, or a transport error. */
static int mt_answer(struct smbd_sock *sk, s32 *status)
{
	struct mt_resp resp;
	int err;

	err = mt_kvec_io(sk, &resp, sizeof(resp), false);
	if (err)
		return err;
	if (le32_to_cpu(resp.magic) != MT_MAGIC)
		return -EPROTO;
	*status = le32_to_cpu(resp.status);
	return 0;
}

/*
 * A request for @reg's buffer (descriptors @d, @nd) and its answer: a
 * transport error, or 0 and the server's status in @status.
 */
static int mt_request_status(struct smbd_sock *sk, u32 op, u64 seed,
			     u64 off, u32 len, const struct smbd_buf_desc *d,
			     int nd, bool inv, u32 inv_token, s32 *status)
{
	struct mt_req *req;
	int err;

	req = mt_req_new(op, seed, off, len, d, nd, inv, inv_token);
	if (!req)
		return -ENOMEM;
	err = mt_req_send(sk, req);
	kfree(req);
	return err ?: mt_answer(sk, status);
}

/* The same, the server's status as the error. */
static int mt_request(struct smbd_sock *sk, u32 op, u64 seed, u64 off,
		      u32 len, const struct smbd_buf_desc *d, int nd,
		      bool inv, u32 inv_token)
{
	s32 status;
	int err;

	err = mt_request_status(sk, op, seed, off, len, d, nd, inv, inv_token,
				&status);
	return err ?: status;
}

struct mt_client {
	struct mt_cmd *c;
	struct smbd_sock *sk;
	struct smbd_buf_desc d[MT_MAX_DESC];
	struct testbuf buf;
	u32 max_rw;
	u32 max_reg;	/* smbd_sock_info.max_reg_size: one MR's worth */
	u32 n;
};

/*
 * One transfer: register @len bytes of the buffer at @off, have the
 * server RDMA-write (@peer_writes) or RDMA-read them, deregister, check.
 * @inv: 0 no Send with Invalidate, 1 of the right rkey, 2 of @other.
 */
static bool mt_xfer(struct mt_client *m, const char *name, size_t off,
		    size_t len, bool bvec, bool peer_writes, int inv,
		    u32 other, int want_ndesc)
{
	struct smbd_buf_desc *d = m->d;
	struct smbd_sock_stats s0, s1;
	u64 seed = m->c->seed + m->n++;
	struct smbd_reg *reg;
	struct iov_iter it;
	struct kvec kv;
	u64 local, remote;
	size_t bad;
	int nd, err;

	memset(m->buf.va, MT_CANARY, off + len + 64);
	if (!peer_writes)
		mt_fill(m->buf.va + off, len, seed, 0);
	smbd_sock_stats(m->sk, &s0);
	testbuf_iter(&m->buf, off, len, peer_writes ? ITER_DEST : ITER_SOURCE,
		     bvec, &kv, &it);
	nd = smbd_register(m->sk, &it, peer_writes ? SMBD_REG_PEER_WRITES :
			   SMBD_REG_PEER_READS, d, MT_MAX_DESC, &reg);
	if (nd < 0)
		return mt_check(false, name, "register %zu bytes: %d", len, nd);
	err = mt_request(m->sk, peer_writes ? MT_OP_WRITE : MT_OP_READ, seed,
			 0, len, d, nd, inv != 0, inv == 1 ? d[0].token : other);
	err = smbd_deregister(m->sk, reg) ?: err;
	smbd_sock_stats(m->sk, &s1);
	local = s1.mrs_local_inv - s0.mrs_local_inv;
	remote = s1.mrs_remote_inv - s0.mrs_remote_inv;
	if (err)
		return mt_check(false, name, "server or deregister: %d", err);
	if (peer_writes && !mt_is_pattern(m->buf.va + off, len, seed, 0, &bad))
		return mt_check(false, name, "data differs at byte %zu of %zu",
				bad, len);
	if (memchr_inv(m->buf.va, MT_CANARY, off) ||
	    memchr_inv(m->buf.va + off + len, MT_CANARY, 64))
		return mt_check(false, name, "bytes around the buffer changed");
	if (want_ndesc && nd != want_ndesc)
		return mt_check(false, name, "%d descriptors, want %d", nd,
				want_ndesc);
	if (inv == 1 && nd == 1 && (remote != 1 || local != 0))
		return mt_check(false, name,
				"right rkey invalidated by the peer: %llu remote, %llu local (want 1, 0)",
				remote, local);
	if (inv != 1 && (remote != 0 || local != nd))
		return mt_check(false, name,
				"no matching remote invalidation: %llu remote, %llu local (want 0, %d)",
				remote, local, nd);
	return mt_check(true, name,
			"%zu bytes at +%zu, %s, %d descriptor(s), %llu local and %llu remote invalidation(s)",
			len, off, bvec ? "bvec" : "kvec", nd, local, remote);
}

/* Three pieces of the buffer, with gaps inside pages: three MRs. */
static void mt_scattered(struct mt_client *m)
{
	struct smbd_buf_desc d[MT_MAX_DESC];
	static const size_t po[3] = { 100, 3 * PAGE_SIZE + 7, 9 * PAGE_SIZE };
	static const size_t pl[3] = { 5000, 200, 2 * PAGE_SIZE - 1 };
	u64 seed = m->c->seed + 1000;
	struct smbd_reg *reg;
	struct iov_iter it;
	struct kvec kv[3];
	size_t pos = 0, bad;
	int nd, err, i;

	memset(m->buf.va, MT_CANARY, 12 * PAGE_SIZE);
	for (i = 0; i < 3; i++) {
		kv[i].iov_base = m->buf.va + po[i];
		kv[i].iov_len = pl[i];
	}
	iov_iter_kvec(&it, ITER_DEST, kv, 3, pl[0] + pl[1] + pl[2]);
	nd = smbd_register(m->sk, &it, SMBD_REG_PEER_WRITES, d, MT_MAX_DESC,
			   &reg);
	if (nd < 0) {
		mt_check(false, "mr/scattered", "register: %d", nd);
		return;
	}
	err = mt_request(m->sk, MT_OP_WRITE, seed, 0, pl[0] + pl[1] + pl[2],
			 d, nd, false, 0);
	err = smbd_deregister(m->sk, reg) ?: err;
	for (i = 0; i < 3 && !err; i++) {
		if (!mt_is_pattern(m->buf.va + po[i], pl[i], seed, pos, &bad))
			err = -EBADMSG;
		pos += pl[i];
	}
	mt_check(!err && nd >= 3, "mr/scattered",
		 "3 kvec pieces with gaps inside pages: %d descriptors, %d", nd,
		 err);
}

/* Several MRs held at once, invalidated by the peer out of order. */
static void mt_wrong_rkey(struct mt_client *m)
{
	struct smbd_buf_desc da, db;
	struct smbd_sock_stats s0, s1;
	struct smbd_reg *ra, *rb;
	struct iov_iter it;
	struct kvec kv;
	int na, nb, err;

	smbd_sock_stats(m->sk, &s0);
	testbuf_iter(&m->buf, 0, 8192, ITER_DEST, false, &kv, &it);
	na = smbd_register(m->sk, &it, SMBD_REG_PEER_WRITES, &da, 1, &ra);
	testbuf_iter(&m->buf, 3 * 8192, 8192, ITER_DEST, false, &kv, &it);
	nb = smbd_register(m->sk, &it, SMBD_REG_PEER_WRITES, &db, 1, &rb);
	if (na != 1 || nb != 1) {
		mt_check(false, "mr/other-rkey-invalidated", "register: %d %d",
			 na, nb);
		smbd_deregister(m->sk, na == 1 ? ra : NULL);
		smbd_deregister(m->sk, nb == 1 ? rb : NULL);
		return;
	}
	/* A's request, answered invalidating B's rkey */
	err = mt_request(m->sk, MT_OP_WRITE, 7, 0, 8192, &da, 1, true,
			 db.token);
	err = smbd_deregister(m->sk, ra) ?: err;
	err = smbd_deregister(m->sk, rb) ?: err;
	smbd_sock_stats(m->sk, &s1);
	mt_check(!err && s1.mrs_local_inv - s0.mrs_local_inv == 1 &&
		 s1.mrs_remote_inv - s0.mrs_remote_inv == 1,
		 "mr/other-rkey-invalidated",
		 "peer invalidated B answering A: A %s locally, B found invalidated (%llu local, %llu remote; %d)",
		 s1.mrs_local_inv - s0.mrs_local_inv == 1 ? "invalidated" : "NOT invalidated",
		 s1.mrs_local_inv - s0.mrs_local_inv,
		 s1.mrs_remote_inv - s0.mrs_remote_inv, err);
}

/*
 * After deregistration the old descriptor opens nothing: the server's
 * RDMA write through it fails (ending that connection), and the buffer
 * keeps its bytes.
 */
static void mt_window_closed(struct mt_cmd *c, struct mt_client *m)
{
	struct smbd_buf_desc d;
	struct smbd_sock *sk;
	struct smbd_reg *reg;
	struct iov_iter it;
	struct kvec kv;
	int nd, err;

	err = mt_connect(c, 0, &sk);
	if (err) {
		mt_check(false, "mr/window-closed", "connect: %d", err);
		return;
	}
	memset(m->buf.va, MT_CANARY, 16384);
	testbuf_iter(&m->buf, 0, 16384, ITER_DEST, false, &kv, &it);
	nd = smbd_register(sk, &it, SMBD_REG_PEER_WRITES, &d, 1, &reg);
	if (nd == 1) {
		/* the window is open: this one must work */
		err = mt_request(sk, MT_OP_WRITE, 5, 0, 16384, &d, 1, false, 0);
		err = smbd_deregister(sk, reg) ?: err;
	} else {
		err = nd;
	}
	if (err) {
		mt_check(false, "mr/window-closed", "first transfer: %d", err);
		goto out;
	}
	memset(m->buf.va, MT_CANARY, 16384);
	err = mt_request(sk, MT_OP_WRITE, 6, 0, 16384, &d, 1, false, 0);
	mt_check(err < 0 && !memchr_inv(m->buf.va, MT_CANARY, 16384),
		 "mr/window-closed",
		 "RDMA write through a deregistered descriptor: %d, buffer %s",
		 err, memchr_inv(m->buf.va, MT_CANARY, 16384) ? "CHANGED" :
		 "untouched");
out:
	smbd_sock_release(sk);
}

/*
 * Teardown with registrations held and a slow server read in flight:
 * each registration one MR's worth, at most 1 MiB (a device with short
 * registrations, cxgb4's, maps less).
 */
static void mt_teardown(struct mt_cmd *c, struct mt_client *m)
{
	struct smbd_buf_desc d[4];
	struct smbd_reg *reg[4] = {};
	struct smbd_sock *sk;
	struct mt_req *req;
	struct iov_iter it;
	struct kvec kv;
	u32 len = min_t(u32, SZ_1M, m->max_reg);
	int err, i, nd = 0;

	err = mt_connect(c, 0, &sk);
	if (err) {
		mt_check(false, "mr/teardown-with-registrations", "connect: %d",
			 err);
		return;
	}
	for (i = 0; i < 4; i++) {
		testbuf_iter(&m->buf, i * SZ_1M, len, ITER_SOURCE, i & 1,
			     &kv, &it);
		if (smbd_register(sk, &it, SMBD_REG_PEER_READS, &d[i], 1,
				  &reg[i]) == 1)
			nd++;
	}
	req = kzalloc(mt_req_len(1), GFP_KERNEL);
	if (req && nd == 4) {
		req->magic = cpu_to_le32(MT_MAGIC);
		req->op = cpu_to_le32(MT_OP_SLOW_READ);
		req->len = cpu_to_le32(len);
		req->ndesc = cpu_to_le32(1);
		smbd_desc_encode(&d[3], req->desc);
		err = mt_req_send(sk, req);
	}
	kfree(req);
	/* the server is reading (or about to): end it all now */
	msleep(20);
	smbd_sock_shutdown(sk);
	for (i = 0; i < 2; i++)
		smbd_deregister(sk, reg[i]);
	/* reg[2], reg[3] are still registered: release frees them */
	smbd_sock_release(sk);
	mt_check(nd == 4 && !err, "mr/teardown-with-registrations",
		 "4 registrations, 2 left to release, a read in flight: %d", err);
}

/*
 * The descriptors @d[@nd] of one registration cut into pieces: with
 * @misaligned, lengths alternate between @unit - 1 and @unit + 1 (the
 * last takes what is left), else all are @unit. A piece never crosses
 * a registered descriptor. Returns how many were written to @out.
 */
static u32 mt_cut(const struct smbd_buf_desc *d, int nd, u32 unit,
		  bool misaligned, struct smbd_buf_desc *out, u32 max)
{
	u32 n = 0, off = 0, want;
	int r = 0;

	while (r < nd && n < max) {
		want = misaligned ? (n & 1 ? unit + 1 : unit - 1) : unit;
		want = min(want, d[r].length - off);
		out[n].offset = d[r].offset + off;
		out[n].token = d[r].token;
		out[n].length = want;
		n++;
		off += want;
		if (off == d[r].length) {
			r++;
			off = 0;
		}
	}
	return r == nd ? n : 0;
}

/*
 * [MS-SMBD] 3.1.4.5, 3.1.4.6: the server moves a buffer described by
 * @k descriptors, as an SMB2 READ or WRITE's channel info may list up
 * to 4,095 (a 16-bit length): pieces of one registration, each direction,
 * checked byte for byte and around. @misaligned: odd lengths, and the
 * buffer at an odd offset. Within MaxReadWriteSize and 1 MiB.
 */
static void mt_descs(struct mt_client *m, u32 k, bool misaligned)
{
	/* At most 1 MiB in all: siw in the TCG guest moves 1-3 MiB/s. */
	u32 unit = min_t(u32, PAGE_SIZE, min_t(u32, m->max_rw, SZ_1M) / k & ~7U);
	size_t off = misaligned ? 3 : 0, len, bad;
	struct smbd_buf_desc *pc;
	char name[48], why[96] = "";
	int dir, nd, err;
	u32 n = 0, u;

	snprintf(name, sizeof(name), "mr/descs-%u-%s", k,
		 misaligned ? "misaligned" : "aligned");
	/* unit - 1 and unit + 1 alternate: k pieces fit in k * unit bytes */
	len = (size_t)k * unit - (misaligned && k % 2 ? 1 : 0);
	pc = kvmalloc_array(MT_WIRE_DESC, sizeof(*pc), GFP_KERNEL);
	if (!pc || unit < 2) {
		mt_check(false, name, "setup: unit %u of %u bytes", unit,
			 m->max_rw);
		kvfree(pc);
		return;
	}
	for (dir = 0; dir < 2 && !why[0]; dir++) {
		bool peer_writes = !dir;
		u64 seed = m->c->seed + m->n++;
		struct smbd_reg *reg;
		struct iov_iter it;
		struct kvec kv;

		memset(m->buf.va, MT_CANARY, off + len + 64);
		if (!peer_writes)
			mt_fill(m->buf.va + off, len, seed, 0);
		testbuf_iter(&m->buf, off, len,
			     peer_writes ? ITER_DEST : ITER_SOURCE, dir, &kv,
			     &it);
		nd = smbd_register(m->sk, &it, peer_writes ?
				   SMBD_REG_PEER_WRITES : SMBD_REG_PEER_READS,
				   m->d, MT_MAX_DESC, &reg);
		if (nd < 0) {
			snprintf(why, sizeof(why), "register %zu bytes: %d",
				 len, nd);
			break;
		}
		/*
		 * A piece never crosses a registration: with short ones
		 * (cxgb4's) 4,095 pieces of the unit may not cover the
		 * buffer; take slightly longer pieces then.
		 */
		for (u = unit, n = 0; !n && u < 2 * unit; u += unit / 16 + 1)
			n = mt_cut(m->d, nd, u, misaligned, pc, MT_WIRE_DESC);
		err = n ? mt_request(m->sk, peer_writes ? MT_OP_WRITE :
				     MT_OP_READ, seed, 0, len, pc, n, false, 0) :
			  -E2BIG;
		err = smbd_deregister(m->sk, reg) ?: err;
		if (err)
			snprintf(why, sizeof(why), "%s over %u descriptors: %d",
				 peer_writes ? "write" : "read", n, err);
		else if (peer_writes &&
			 !mt_is_pattern(m->buf.va + off, len, seed, 0, &bad))
			snprintf(why, sizeof(why),
				 "write: data differs at byte %zu of %zu", bad,
				 len);
		else if (memchr_inv(m->buf.va, MT_CANARY, off) ||
			 memchr_inv(m->buf.va + off + len, MT_CANARY, 64))
			snprintf(why, sizeof(why), "%s: bytes around changed",
				 peer_writes ? "write" : "read");
	}
	mt_check(!why[0], name, "%s%u descriptors of about %u bytes, %zu in all, both ways",
		 why[0] ? why : "", n, unit, len);
	kvfree(pc);
}

/*
 * The client checks; with @all false only the RDMA reads and writes of
 * every size and descriptor count ("rw": what a device's limits shape),
 * not the registration's other rules. @brief ("mr-brief": every rule,
 * as after a fault run) leaves out the two longest transfers, the
 * MaxReadWriteSize ones and the 4,095 descriptors (about half the time
 * under TCG).
 */
static void mt_cmd_mr(struct mt_cmd *c, bool all, bool brief)
{
	static const struct { size_t off, len; } sz[] = {
		{ 0, 1 }, { 0, 4095 }, { 0, 4096 }, { 0, 4097 },
		{ 1, 4096 }, { 100, 4097 }, { 0, SZ_1M }, { 3, SZ_1M },
	};
	static const u32 ndescs[] = { 1, 2, 16, 256, MT_WIRE_DESC };
	struct smbd_sock_info info = {};
	struct mt_client m = { .c = c };
	char name[64];
	int err, i;
	u32 max;

	err = mt_connect(c, 0, &m.sk);
	if (!mt_check(!err, "mr/connect", "%d", err))
		return;
	err = smbd_sock_query(m.sk, &info);
	m.max_rw = info.max_read_write_size;
	m.max_reg = info.max_reg_size;
	mt_info("max_read_write_size %u", m.max_rw);
	if (err || !m.max_rw || testbuf_alloc(&m.buf, m.max_rw + PAGE_SIZE)) {
		mt_check(false, "mr/buffer", "%d, max_rw %u", err, m.max_rw);
		goto out;
	}
	for (i = 0; i < ARRAY_SIZE(sz); i++) {
		snprintf(name, sizeof(name), "mr/peer-writes-%zu@%zu", sz[i].len,
			 sz[i].off);
		mt_xfer(&m, name, sz[i].off, sz[i].len, i & 1, true, 0, 0, 0);
		snprintf(name, sizeof(name), "mr/peer-reads-%zu@%zu", sz[i].len,
			 sz[i].off);
		mt_xfer(&m, name, sz[i].off, sz[i].len, !(i & 1), false, 0, 0, 0);
	}
	/*
	 * MaxReadWriteSize, or as much as MT_MAX_DESC registrations map
	 * where they are short (cxgb4 without DSGL: 31 pages each).
	 */
	max = min_t(u64, m.max_rw, (u64)MT_MAX_DESC * m.max_reg);
	if (max < m.max_rw)
		mt_info("max_reg_size %u: %u descriptors map %u bytes", m.max_reg,
			MT_MAX_DESC, max);
	if (!brief) {
		mt_xfer(&m, "mr/peer-writes-max", 0, max, true, true, 0, 0, 0);
		mt_xfer(&m, "mr/peer-reads-max", 0, max, false, false, 0, 0,
			0);
	}
	if (all) {
		mt_xfer(&m, "mr/remote-invalidate", 0, 65536, false, true, 1, 0, 1);
		mt_xfer(&m, "mr/remote-invalidate-read", 5, 65536, true, false,
			1, 0, 1);
		mt_scattered(&m);
	}
	/* brief: not the last count, MT_WIRE_DESC */
	for (i = 0; i < ARRAY_SIZE(ndescs) - (brief ? 1 : 0); i++) {
		mt_descs(&m, ndescs[i], false);
		mt_descs(&m, ndescs[i], true);
	}
	if (all) {
		mt_wrong_rkey(&m);
		mt_window_closed(c, &m);
		mt_teardown(c, &m);
	}
out:
	smbd_sock_release(m.sk);
	testbuf_free(&m.buf);
}

/* ------------------------------------------------------------ pool */

struct mt_user {
	struct mt_cmd *c;
	struct smbd_sock *sk;
	struct completion done;
	u8 *buf;
	int err;
	int idx;
};

/* One request and its answer at a time on the shared connection. */
static DEFINE_MUTEX(mt_pool_lock);

static int mt_user_thread(void *arg)
{
	struct mt_user *u = arg;
	struct smbd_buf_desc d[2];
	struct smbd_reg *reg;
	struct iov_iter it;
	struct kvec kv;
	size_t bad;
	int i, nd;

	for (i = 0; i < 8 && !u->err; i++) {
		kv.iov_base = u->buf;
		kv.iov_len = 32768;
		iov_iter_kvec(&it, ITER_DEST, &kv, 1, 32768);
		nd = smbd_register(u->sk, &it, SMBD_REG_PEER_WRITES, d, 2, &reg);
		if (nd < 0) {
			u->err = nd;
			break;
		}
		/* hold it a little: the others must wait for the pool */
		usleep_range(5000, 10000);
		mutex_lock(&mt_pool_lock);
		u->err = mt_request(u->sk, MT_OP_WRITE, u->idx * 100 + i, 0,
				    32768, d, nd, i & 1, d[0].token);
		mutex_unlock(&mt_pool_lock);
		u->err = smbd_deregister(u->sk, reg) ?: u->err;
		if (!u->err &&
		    !mt_is_pattern(u->buf, 32768, u->idx * 100 + i, 0, &bad))
			u->err = -EBADMSG;
	}
	complete(&u->done);
	return 0;
}

/*
 * 16 threads on one connection whose pool has 4 MRs. One request at a
 * time goes through the connection (a lock), but registrations are held
 * across it, so most threads wait for an MR.
 */
static void mt_cmd_pool(struct mt_cmd *c)
{
	struct mt_user *u;
	struct smbd_sock *sk;
	struct task_struct *t;
	int i, err, bad = 0;

	err = mt_connect(c, 4, &sk);
	if (!mt_check(!err, "pool/connect", "%d", err))
		return;
	u = kcalloc(16, sizeof(*u), GFP_KERNEL);
	for (i = 0; u && i < 16; i++) {
		u[i].c = c;
		u[i].sk = sk;
		u[i].idx = i;
		init_completion(&u[i].done);
		u[i].buf = vmalloc(32768);
		if (!u[i].buf) {
			u[i].err = -ENOMEM;
			complete(&u[i].done);
			continue;
		}
		t = kthread_run(mt_user_thread, &u[i], "smbd_mr_u%d", i);
		if (IS_ERR(t)) {
			u[i].err = PTR_ERR(t);
			complete(&u[i].done);
		}
	}
	for (i = 0; u && i < 16; i++) {
		wait_for_completion(&u[i].done);
		if (u[i].err)
			bad++;
		vfree(u[i].buf);
	}
	mt_check(u && !bad, "pool/16-users-4-mrs",
		 "16 threads x 8 registrations through 4 MRs: %d failed", bad);
	kfree(u);
	smbd_sock_release(sk);
}

/* ------------------------------------------------------------ pool-split */

struct mt_split {
	struct smbd_sock *sk;
	struct page *pages[6];
	u32 pieces;		/* non-adjacent pieces: MRs needed */
	u32 rounds;
	int err;
	struct completion done;
};

/*
 * @pieces pieces of 1 KiB, each inside its own page and not touching the
 * next (a gap), so that each needs an MR of its own; registered and
 * deregistered @rounds times with the pool shared.
 */
static int mt_split_thread(void *arg)
{
	struct mt_split *m = arg;
	struct smbd_buf_desc d[6];
	struct bio_vec bv[6];
	struct smbd_reg *reg;
	struct iov_iter it;
	u32 i, r;
	int nd;

	allow_signal(SIGKILL);
	for (r = 0; r < m->rounds && !m->err; r++) {
		for (i = 0; i < m->pieces; i++)
			bvec_set_page(&bv[i], m->pages[i], 1024, 512);
		iov_iter_bvec(&it, ITER_DEST, bv, m->pieces, 1024 * m->pieces);
		nd = smbd_register(m->sk, &it, SMBD_REG_PEER_WRITES, d,
				   ARRAY_SIZE(d), &reg);
		if (nd < 0) {
			m->err = nd;
			break;
		}
		if (nd != m->pieces) {
			smbd_deregister(m->sk, reg);
			m->err = -EPROTO;
			break;
		}
		/* Hold it a moment, so that the others run out of MRs. */
		usleep_range(100, 2000);
		m->err = smbd_deregister(m->sk, reg);
	}
	complete(&m->done);
	mt_wait_stop();
	return 0;
}

/*
 * Run @n splitters; one that is still registering after @secs is killed
 * (smbd_register() waits killably) and reported under @name.
 */
static void mt_split_run(struct mt_split *m, int n, const char *name,
			 unsigned int secs)
{
	struct task_struct *t[4] = {};
	int i, late = 0;

	for (i = 0; i < n; i++) {
		init_completion(&m[i].done);
		t[i] = kthread_run(mt_split_thread, &m[i], "smbd_mr_s%d", i);
		if (IS_ERR(t[i])) {
			m[i].err = PTR_ERR(t[i]);
			t[i] = NULL;
			complete(&m[i].done);
		}
	}
	for (i = 0; i < n; i++) {
		if (wait_for_completion_timeout(&m[i].done, secs * HZ))
			continue;
		/* Stuck in smbd_register(): its wait is killable. */
		late++;
		send_sig(SIGKILL, t[i], 1);
		wait_for_completion(&m[i].done);
	}
	for (i = 0; i < n; i++)
		if (t[i])
			kthread_stop(t[i]);
	if (late)
		mt_check(false, name, "%d of %d threads still registering after %u s",
			 late, n, secs);
}

static void mt_cmd_split(struct mt_cmd *c)
{
	struct mt_split *m;
	struct smbd_sock *sk;
	int i, j, err, bad = 0;

	err = mt_connect(c, 4, &sk);
	if (!mt_check(!err, "pool-split/connect", "%d", err))
		return;
	m = kcalloc(5, sizeof(*m), GFP_KERNEL);
	for (i = 0; m && i < 5; i++) {
		m[i].sk = sk;
		m[i].pieces = i ? 2 : 5;
		m[i].rounds = i ? 200 : 1;
		for (j = 0; j < 6; j++) {
			m[i].pages[j] = alloc_page(GFP_KERNEL);
			if (!m[i].pages[j])
				m[i].err = -ENOMEM;
		}
	}
	if (m) {
		/* One registration that needs more MRs than the pool has. */
		mt_split_run(m, 1, "pool-split/more-mrs-than-the-pool", 10);
		mt_check(m[0].err == -ENOBUFS, "pool-split/more-mrs-than-the-pool",
			 "5 pieces, a pool of 4: %d (want %d)", m[0].err,
			 -ENOBUFS);
		mt_split_run(m + 1, 4, "pool-split/4-users-2-mrs-each", 60);
		for (i = 1; i < 5; i++)
			bad += m[i].err != 0;
		mt_check(!bad, "pool-split/4-users-2-mrs-each",
			 "4 threads x 200 registrations of 2 MRs through 4: %d failed",
			 bad);
	}
	for (i = 0; m && i < 5; i++)
		for (j = 0; j < 6; j++)
			if (m[i].pages[j])
				__free_page(m[i].pages[j]);
	kfree(m);
	smbd_sock_release(sk);
}

/* ------------------------------------------------------------ bench */

/*
 * RDMA throughput at 1 MiB, as an SMB2 client sees it: each I/O
 * registers the buffer, asks the server to RDMA-write into it (a READ)
 * or RDMA-read from it (a WRITE), takes the answer (a Send with
 * Invalidate of the buffer's rkey) and deregisters. The data is neither
 * filled nor checked (the mr command checks it).
 */
static void mt_bench_dir(struct mt_client *m, bool peer_writes, u32 ios)
{
	const char *what = peer_writes ? "rdma-write" : "rdma-read";
	struct smbd_sock_stats s0, s1;
	struct smbd_reg *reg;
	struct iov_iter it;
	struct kvec kv;
	u64 us, rate10;
	ktime_t t0;
	int nd, err = 0;
	u32 i;

	smbd_sock_stats(m->sk, &s0);
	t0 = ktime_get();
	for (i = 0; i < ios && !err; i++) {
		testbuf_iter(&m->buf, 0, SZ_1M,
			     peer_writes ? ITER_DEST : ITER_SOURCE, i & 1, &kv,
			     &it);
		nd = smbd_register(m->sk, &it, peer_writes ?
				   SMBD_REG_PEER_WRITES : SMBD_REG_PEER_READS,
				   m->d, MT_MAX_DESC, &reg);
		if (nd < 0) {
			err = nd;
			break;
		}
		err = mt_request(m->sk, peer_writes ? MT_OP_BENCH_WRITE :
				 MT_OP_BENCH_READ, 0, 0, SZ_1M, m->d, nd,
				 nd == 1, m->d[0].token);
		err = smbd_deregister(m->sk, reg) ?: err;
	}
	us = max_t(u64, ktime_us_delta(ktime_get(), t0), 1);
	smbd_sock_stats(m->sk, &s1);
	if (!mt_check(!err, peer_writes ? "bench/rdma-write" :
		      "bench/rdma-read", "%u I/Os of 1 MiB: %d", i, err))
		return;
	/* MiB/s, times 10 */
	rate10 = div64_u64((u64)ios * 10000000ULL, us);
	mt_info("bench %s 1 MiB: %u I/Os in %llu ms = %llu.%llu MiB/s (register, peer %s, answer with Send with Invalidate, deregister; %llu remote and %llu local invalidations)",
		what, ios, div_u64(us, 1000), div_u64(rate10, 10), rate10 % 10,
		peer_writes ? "RDMA-writes" : "RDMA-reads",
		s1.mrs_remote_inv - s0.mrs_remote_inv,
		s1.mrs_local_inv - s0.mrs_local_inv);
}

static void mt_cmd_bench(struct mt_cmd *c)
{
	struct mt_client m = { .c = c };
	int err;

	err = mt_connect(c, 0, &m.sk);
	if (!mt_check(!err, "bench/connect", "%d", err))
		return;
	if (testbuf_alloc(&m.buf, SZ_1M + PAGE_SIZE)) {
		mt_check(false, "bench/buffer", "out of memory");
	} else {
		mt_bench_dir(&m, true, 16);
		mt_bench_dir(&m, false, 16);
	}
	smbd_sock_release(m.sk);
	testbuf_free(&m.buf);
}

/* ------------------------------------------------------------ faults */

#define MT_FAULT_MRS		4	/* each connection's MR pool */
#define MT_FAULT_IO_MAX		SZ_1M
#define MT_FAULT_PAD_MAX	SZ_256K
#define MT_FAULT_NEG_MS		10000	/* not the initiator's 120 s */
/*
 * A fault may cost the peer's disconnect: an allocation that fails in
 * ib_cm's DREQ (failslab, from smbd's disconnect work) leaves the other
 * side connected, and a client waiting for its answer only learns from
 * its idle connection timer ([MS-SMBD] 3.1.6.2). Not after 120 s: the
 * threads end within MT_FAULT_GRACE_S.
 */
#define MT_FAULT_KA_MS		5000
#define MT_FAULT_GRACE_S	60	/* after SECONDS, to end */
#define MT_FAULT_KILL_S		10	/* after SIGKILL, to end */
#define MT_FAULT_PARTS		3

/*
 * One thread of the faults command. It touches nothing else: a thread
 * that does not end keeps it, and the command leaves it to it.
 */
struct mt_fault {
	struct mt_cmd c;
	struct completion done;
	struct task_struct *task;
	unsigned long deadline;
	bool stop;
	bool ended;		/* its completion was taken */
	bool late;
	bool stuck;
	struct smbd_sock *sk;
	struct testbuf buf;
	struct smbd_buf_desc d[MT_MAX_DESC];
	u32 max_io;
	u32 max_pad;
	u32 left;		/* I/Os before connecting again on our own */
	u64 seed;
	int setup_err;
	u32 ios;		/* finished: answered, or failed after a send */
	u32 pads;
	u32 checked;
	u32 corrupt;
	u32 reg_errors;
	u32 req_errors;
	u32 dereg_errors;
	u32 pad_errors;
	u32 connects;
	u32 connect_errors;
	u32 pokes;		/* server writes into a deregistered buffer */
	u32 poke_refused;
	const char *phase;	/* what it does now: told when it is late */
	char why[128];		/* the first corruption */
};

static void mt_fault_phase(struct mt_fault *f, const char *phase)
{
	WRITE_ONCE(f->phase, phase);
}

static __printf(2, 3) void mt_fault_bad(struct mt_fault *f,
					const char *fmt, ...)
{
	char msg[sizeof(f->why)];
	va_list ap;

	va_start(ap, fmt);
	vscnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (!f->corrupt++)
		strscpy(f->why, msg, sizeof(f->why));
	pr_err("faults: %s\n", msg);
}

static bool mt_fault_going(struct mt_fault *f)
{
	return time_before(jiffies, f->deadline) && !READ_ONCE(f->stop) &&
	       !signal_pending(current);
}

/* Most sizes small, a few above 256 KiB: rdma_rw chains of many pieces. */
static u32 mt_fault_len(u32 max)
{
	u32 r = get_random_u32_below(16), len;

	if (r < 10)
		len = 1 + get_random_u32_below(2 * PAGE_SIZE);
	else if (r < 15)
		len = 1 + get_random_u32_below(SZ_64K);
	else
		len = SZ_256K + 1 + get_random_u32_below(SZ_1M - SZ_256K);
	return min(len, max);
}

static int mt_fault_connect(struct mt_fault *f)
{
	struct smbd_sock_info info = {};
	int err;

	f->sk = NULL;
	mt_fault_phase(f, "connect");
	err = mt_connect(&f->c, MT_FAULT_MRS, &f->sk);
	if (err) {
		f->sk = NULL;
	} else {
		err = smbd_sock_query(f->sk, &info);
		/* Two MRs for the largest I/O: the pool holds four. */
		f->max_io = min_t(u32, min_t(u32, MT_FAULT_IO_MAX,
					     info.max_read_write_size),
				  2 * info.max_reg_size);
		f->max_pad = min_t(u32, MT_FAULT_PAD_MAX,
				   info.max_fragmented_send_size);
		if (!err && (!f->max_io || !f->max_pad))
			err = -EOPNOTSUPP;
		if (err) {
			smbd_sock_release(f->sk);
			f->sk = NULL;
		}
	}
	if (err) {
		f->connect_errors++;
		msleep_interruptible(20);
		return err;
	}
	f->connects++;
	f->left = 8 + get_random_u32_below(33);
	return 0;
}

/*
 * Register a buffer, have the server RDMA-write or RDMA-read it, answer
 * (sometimes with Send with Invalidate), deregister, check.
 */
static int mt_fault_rdma(struct mt_fault *f)
{
	bool peer_writes = get_random_u32_below(2);
	bool bvec = get_random_u32_below(2);
	bool inv = !get_random_u32_below(3);
	size_t off = get_random_u32_below(2) ?
		     get_random_u32_below(PAGE_SIZE) : 0;
	u32 len = mt_fault_len(f->max_io);
	const char *dir = peer_writes ? "peer-writes" : "peer-reads";
	u64 seed = f->seed++;
	u8 *va = f->buf.va;
	struct smbd_reg *reg;
	struct iov_iter it;
	struct kvec kv;
	s32 status = 0;
	int nd, err, derr;
	size_t bad;

	memset(va, MT_CANARY, off + len + 64);
	if (!peer_writes)
		mt_fill(va + off, len, seed, 0);
	testbuf_iter(&f->buf, off, len, peer_writes ? ITER_DEST : ITER_SOURCE,
		     bvec, &kv, &it);
	mt_fault_phase(f, "register");
	nd = smbd_register(f->sk, &it, peer_writes ? SMBD_REG_PEER_WRITES :
			   SMBD_REG_PEER_READS, f->d, MT_MAX_DESC, &reg);
	if (nd < 0) {
		f->reg_errors++;
		return nd;
	}
	mt_fault_phase(f, peer_writes ? "write request and answer" :
			  "read request and answer");
	err = mt_request_status(f->sk, peer_writes ? MT_OP_WRITE : MT_OP_READ,
				seed, 0, len, f->d, nd, inv, f->d[0].token,
				&status);
	mt_fault_phase(f, "deregister");
	derr = smbd_deregister(f->sk, reg);
	f->ios++;
	/* Whatever failed, nothing outside the buffer may have changed. */
	if (memchr_inv(va, MT_CANARY, off) ||
	    memchr_inv(va + off + len, MT_CANARY, 64))
		mt_fault_bad(f, "bytes around a %s buffer of %u bytes at +%zu changed",
			     dir, len, off);
	else if (!err && status == -EBADMSG)
		mt_fault_bad(f, "the server read other data than the %u bytes registered (%s)",
			     len, bvec ? "bvec" : "kvec");
	else if (!err && !status && peer_writes &&
		 !mt_is_pattern(va + off, len, seed, 0, &bad))
		mt_fault_bad(f, "peer-writes data differs at byte %zu of %u (%s, +%zu, %d MRs)",
			     bad, len, bvec ? "bvec" : "kvec", off, nd);
	else if (!err && !status)
		f->checked++;
	if (err || status) {
		f->req_errors++;
		return err ?: status;
	}
	if (derr)
		f->dereg_errors++;
	/*
	 * [MS-SMBD] 3.1.4.4: once deregistered, the peer reaches nothing.
	 * Now and then, and after every failed deregistration, have the
	 * server RDMA-write into the old descriptors: it must fail, and
	 * change nothing. On our own connection a refused write ends it.
	 */
	if (!derr && get_random_u32_below(16))
		return 0;
	memset(va, MT_CANARY, off + len + 64);
	f->pokes++;
	mt_fault_phase(f, "poke request and answer");
	err = mt_request_status(f->sk, MT_OP_WRITE, seed, 0, len, f->d, nd,
				false, 0, &status);
	if (memchr_inv(va, MT_CANARY, off + len + 64))
		mt_fault_bad(f, "a write into %u deregistered bytes at +%zu (%d MRs) landed",
			     len, off, nd);
	else if (!err && !status)
		mt_fault_bad(f, "a server write into %u deregistered bytes succeeded",
			     len);
	else
		f->poke_refused++;
	return derr ?: err ?: status;
}

/*
 * A request the server answers after checking the message that follows
 * it: up to 256 KiB, several segments, sent in up to three parts
 * (SMBD_SEND_MORE), the last one sometimes a bvec, zero-copy or copied.
 */
static int mt_fault_pad(struct mt_fault *f)
{
	u32 len = min(get_random_u32_below(4) ?
		      1 + get_random_u32_below(SZ_32K) :
		      1 + get_random_u32_below(f->max_pad), f->max_pad);
	u32 nparts = min_t(u32, len, 1 + get_random_u32_below(MT_FAULT_PARTS));
	unsigned int flags = get_random_u32_below(2) ? SMBD_SEND_COPY : 0;
	bool bvec = get_random_u32_below(2);
	struct iov_iter it[MT_FAULT_PARTS];
	struct kvec kv[MT_FAULT_PARTS];
	u64 seed = f->seed++;
	struct mt_req *req;
	size_t pos = 0, l;
	s32 status = 0;
	ssize_t n = 0;
	int err;
	u32 i;

	mt_fill(f->buf.va, len, seed, 0);
	mt_fault_phase(f, "message request");
	req = mt_req_new(MT_OP_PAD, seed, 0, len, NULL, 0, false, 0);
	if (!req) {
		f->pad_errors++;
		return -ENOMEM;
	}
	err = mt_req_send(f->sk, req);
	kfree(req);
	for (i = 0; !err && i < nparts; i++) {
		bool last = i == nparts - 1;

		/* at least a byte for each part after this one */
		l = last ? len - pos :
		    1 + get_random_u32_below(len - pos - (nparts - 1 - i));
		testbuf_iter(&f->buf, pos, l, ITER_SOURCE, last && bvec, &kv[i],
			     &it[i]);
		n = smbd_sock_send(f->sk, &it[i], last ? flags : SMBD_SEND_MORE);
		if (n < 0)
			err = n;
		pos += l;
	}
	if (!err && n != len)
		err = -EPROTO;
	mt_fault_phase(f, "message answer");
	err = err ?: mt_answer(f->sk, &status);
	f->ios++;
	f->pads++;
	if (!err && status == -EBADMSG)
		mt_fault_bad(f, "server: other data in a message of %u bytes, %u part(s), %s",
			     len, nparts, flags ? "copied" : "zero-copy");
	else if (!err && !status)
		f->checked++;
	if (err || status) {
		f->pad_errors++;
		return err ?: status;
	}
	return 0;
}

static int mt_fault_thread(void *arg)
{
	struct mt_fault *f = arg;
	int err;

	allow_signal(SIGKILL);
	f->setup_err = testbuf_alloc(&f->buf, MT_FAULT_IO_MAX + 2 * PAGE_SIZE);
	while (!f->setup_err && mt_fault_going(f)) {
		if (!f->sk && mt_fault_connect(f))
			continue;
		err = get_random_u32_below(4) ? mt_fault_rdma(f) :
		      mt_fault_pad(f);
		/* On an error, and now and then on our own: a new connection */
		if (err || !--f->left) {
			mt_fault_phase(f, "release");
			smbd_sock_release(f->sk);
			f->sk = NULL;
		}
		cond_resched();
	}
	if (f->sk)
		smbd_sock_release(f->sk);
	f->sk = NULL;
	testbuf_free(&f->buf);
	/* The module's text may go once this returns: no code of ours after. */
	kthread_complete_and_exit(&f->done, 0);
}

/* Wait for the threads until @end; false when the writer was killed. */
static bool mt_fault_wait(struct mt_fault **fs, u32 n, unsigned long end)
{
	bool killed = false;
	long left;
	u32 i;

	for (i = 0; i < n; i++) {
		if (!killed) {
			left = max_t(long, (long)(end - jiffies), 1);
			/* killable: not a hung task, as a long wait would be */
			left = wait_for_completion_killable_timeout(&fs[i]->done,
								    left);
			fs[i]->ended = left > 0;
			killed = left < 0;
		}
		if (!fs[i]->ended)
			fs[i]->ended = try_wait_for_completion(&fs[i]->done);
	}
	return !killed;
}

/* Sum of the threads' counters (the finished ones). */
struct mt_fault_sum {
	u32 ios, pads, checked, corrupt, errors, reg, req, dereg, pad;
	u32 connects, reconnects, connect_errors;
	u32 pokes, poke_refused;
	const char *why;
};

static void mt_fault_add(struct mt_fault_sum *s, const struct mt_fault *f)
{
	s->ios += f->ios;
	s->pads += f->pads;
	s->checked += f->checked;
	s->corrupt += f->corrupt;
	s->reg += f->reg_errors;
	s->req += f->req_errors;
	s->dereg += f->dereg_errors;
	s->pad += f->pad_errors;
	s->errors += f->reg_errors + f->req_errors + f->dereg_errors +
		     f->pad_errors;
	s->connects += f->connects;
	s->reconnects += f->connects ? f->connects - 1 : 0;
	s->connect_errors += f->connect_errors;
	s->pokes += f->pokes;
	s->poke_refused += f->poke_refused;
	if (f->corrupt && !s->why)
		s->why = f->why;
}

static void mt_fault_report(struct mt_fault_sum *s, u32 started, u32 stuck,
			    bool clean)
{
	mt_info("faults: %u I/Os (%u messages checked by the server), %u checked, %u errors (register %u, request %u, deregister %u, message %u)",
		s->ios, s->pads, s->checked, s->errors, s->reg, s->req,
		s->dereg, s->pad);
	mt_info("faults: %u connections (%u reconnects, after errors or every 8 to 40 I/Os), %u failed connects; %u of %u threads counted",
		s->connects, s->reconnects, s->connect_errors, started - stuck,
		started);
	mt_info("faults: %u server writes into deregistered buffers, %u refused",
		s->pokes, s->poke_refused);
	if (s->corrupt)
		mt_check(false, "faults/no-corruption",
			 "%u of %u I/Os moved other data or changed bytes around their buffer; first: %s",
			 s->corrupt, s->ios, s->why);
	else
		mt_check(s->checked, "faults/no-corruption", "%u I/Os checked",
			 s->checked);
	if (clean)
		mt_check(s->ios && !s->errors && !s->connect_errors,
			 "faults/no-errors",
			 "%u I/Os, %u errors, %u failed connects", s->ios,
			 s->errors, s->connect_errors);
}

/*
 * faults: @nthreads threads for @secs seconds, each ended within 60 s
 * after; one that is not is asked to stop (SIGKILL) and, if it still
 * runs, left with its memory and a reference to the module.
 */
static void mt_cmd_faults(struct mt_cmd *c, u32 secs, u32 nthreads,
			  bool clean)
{
	unsigned long deadline = jiffies + secs * HZ;
	struct mt_fault_sum sum = {};
	u32 i, started = 0, late = 0, stuck = 0;
	ktime_t t0 = ktime_get();
	struct mt_fault **fs;
	struct task_struct *t;
	unsigned long end;
	bool killed;
	s64 ms;

	fs = kcalloc(nthreads, sizeof(*fs), GFP_KERNEL);
	if (!fs) {
		mt_check(false, "faults/start", "out of memory");
		return;
	}
	for (i = 0; i < nthreads; i++) {
		fs[i] = kzalloc(sizeof(*fs[i]), GFP_KERNEL);
		if (!fs[i])
			break;
		fs[i]->c = *c;
		fs[i]->c.neg_timeout_ms = MT_FAULT_NEG_MS;
		fs[i]->c.ka_interval_ms = MT_FAULT_KA_MS;
		fs[i]->c.ka_timeout_ms = MT_FAULT_KA_MS;
		fs[i]->deadline = deadline;
		fs[i]->seed = get_random_u64();
		init_completion(&fs[i]->done);
		t = kthread_create(mt_fault_thread, fs[i], "smbd_mr_f%u", i);
		if (IS_ERR(t))
			break;
		fs[i]->task = get_task_struct(t);
		wake_up_process(t);
		started++;
	}
	if (started < nthreads)
		mt_check(false, "faults/start", "%u of %u threads started",
			 started, nthreads);

	killed = !mt_fault_wait(fs, started,
				deadline + MT_FAULT_GRACE_S * HZ);
	ms = ktime_ms_delta(ktime_get(), t0);
	for (i = 0; i < started; i++) {
		if (fs[i]->ended)
			continue;
		fs[i]->late = true;
		late++;
		/* Where it waits, for the log: before it is woken */
		mt_info("faults: thread %u is late, in: %s", i,
			READ_ONCE(fs[i]->phase) ?: "-");
		sched_show_task(fs[i]->task);
		WRITE_ONCE(fs[i]->stop, true);
		send_sig(SIGKILL, fs[i]->task, 1);
	}
	/* Short and bounded, so uninterruptible even for a killed writer. */
	end = jiffies + MT_FAULT_KILL_S * HZ;
	for (i = 0; i < started; i++) {
		if (!fs[i]->late ||
		    wait_for_completion_timeout(&fs[i]->done,
						max_t(long, (long)(end - jiffies),
						      1)))
			continue;
		fs[i]->stuck = true;
		stuck++;
	}
	if (killed)
		mt_info("faults: the command was killed: its threads were stopped");
	if (late)
		mt_check(false, "faults/finished",
			 "%u threads still running %lld ms after the start (%u + %u s); %u of them %u s after SIGKILL too",
			 late, ms, secs, MT_FAULT_GRACE_S, stuck,
			 MT_FAULT_KILL_S);
	else
		mt_check(true, "faults/finished",
			 "%u threads ended %lld ms after the start (%u s and at most %u more)",
			 started, ms, secs, MT_FAULT_GRACE_S);

	for (i = 0; i < started; i++) {
		if (fs[i]->stuck)
			continue;
		if (fs[i]->setup_err)
			mt_check(false, "faults/buffer", "thread %u: %d", i,
				 fs[i]->setup_err);
		mt_fault_add(&sum, fs[i]);
	}
	mt_fault_report(&sum, started, stuck, clean);

	for (i = 0; i < nthreads && fs[i]; i++) {
		if (fs[i]->stuck) {
			/* Its code and memory must stay: no unloading. */
			__module_get(THIS_MODULE);
			continue;
		}
		if (fs[i]->task)
			put_task_struct(fs[i]->task);
		kfree(fs[i]);
	}
	kfree(fs);
}

/* ------------------------------------------------------------ commands */

#define MT_FAULT_SECS_MAX	600
#define MT_FAULT_THREADS_MAX	16

/* faults ADDR PORT SECONDS THREADS [clean] */
static int mt_faults_args(struct mt_cmd *c, int argc, char **argv)
{
	bool clean = argc == 6 && !strcmp(argv[5], "clean");
	u32 secs, threads;

	if ((argc != 5 && !clean) || kstrtou32(argv[3], 10, &secs) ||
	    kstrtou32(argv[4], 10, &threads) || !secs ||
	    secs > MT_FAULT_SECS_MAX || !threads ||
	    threads > MT_FAULT_THREADS_MAX)
		return -EINVAL;
	mt_cmd_faults(c, secs, threads, clean);
	return 0;
}

static u64 mt_keepalives(struct smbd_sock *sk)
{
	struct smbd_sock_stats st;

	smbd_sock_stats(sk, &st);
	return st.keepalives_sent;
}

/* The idle connection timer of the silent command's client. */
#define MT_SILENT_KA_MS		2000
#define MT_SILENT_SLACK_MS	8000	/* events, and rxe's own retries */
#define MT_SILENT_WAIT_MS	60000	/* at most, for a client left waiting */

/*
 * silent: a request the server refuses (a message request of 0 bytes)
 * ends the connection from its side. With the plan having ib_cm lose
 * every DREQ (failslab on its DREQ sender), no word of it reaches the
 * client, which waits for its answer: its idle connection timer must end
 * the connection ([MS-SMBD] 3.1.6.2: a keep-alive request, no answer
 * within the timeout), within KeepaliveInterval, the timeout and a
 * slack. Without the plan's fault the disconnect arrives at once.
 */
static void mt_cmd_silent(struct mt_cmd *c)
{
	u32 bound = 2 * MT_SILENT_KA_MS + MT_SILENT_SLACK_MS;
	unsigned long end;
	struct smbd_sock *sk;
	struct mt_resp resp;
	struct mt_req *req;
	struct iov_iter it;
	struct kvec kv;
	ssize_t n;
	ktime_t t0;
	s64 ms;
	int err;

	c->ka_interval_ms = MT_SILENT_KA_MS;
	c->ka_timeout_ms = MT_SILENT_KA_MS;
	err = mt_connect(c, 1, &sk);
	if (!mt_check(!err, "silent/connect", "%d", err))
		return;
	req = mt_req_new(MT_OP_PAD, 0, 0, 0, NULL, 0, false, 0);
	err = req ? mt_req_send(sk, req) : -ENOMEM;
	kfree(req);
	if (!mt_check(!err, "silent/request", "%d", err))
		goto out;
	/* Polled, so that a client no timer ends is a failure, not a hang. */
	t0 = ktime_get();
	end = jiffies + msecs_to_jiffies(MT_SILENT_WAIT_MS);
	do {
		kv.iov_base = &resp;
		kv.iov_len = sizeof(resp);
		iov_iter_kvec(&it, ITER_DEST, &kv, 1, sizeof(resp));
		n = smbd_sock_recv(sk, &it, SMBD_RECV_NONBLOCK, NULL);
		if (n != -EAGAIN)
			break;
		msleep_interruptible(20);
	} while (time_before(jiffies, end) && !signal_pending(current));
	ms = ktime_ms_delta(ktime_get(), t0);
	if (n >= 0)
		mt_check(false, "silent/ends",
			 "an answer (%zd bytes) to a refused request", n);
	else if (n == -EAGAIN)
		mt_check(false, "silent/ends",
			 "still connected %lld ms after the server ended the connection (keep-alive every %u ms, answer within %u ms)",
			 ms, MT_SILENT_KA_MS, MT_SILENT_KA_MS);
	else
		mt_check(ms <= bound, "silent/ends",
			 "the client saw %zd after %lld ms, %llu keep-alive(s) sent (at most %u: keep-alive every %u ms, answer within %u ms)",
			 n, ms, mt_keepalives(sk), bound, MT_SILENT_KA_MS,
			 MT_SILENT_KA_MS);
out:
	smbd_sock_release(sk);
}

static int mt_run(char *line)
{
	struct mt_server *srv;
	struct mt_cmd c = { .seed = 0x6d72 };
	char **argv;
	int argc, err = 0;

	argv = argv_split(GFP_KERNEL, line, &argc);
	if (!argv)
		return -ENOMEM;
	if (argc < 3 || inet_pton_with_scope(&init_net, AF_UNSPEC, argv[1],
					     argv[2], &c.dst)) {
		err = -EINVAL;
		goto out;
	}
	if (!strcmp(argv[0], "faults")) {
		err = mt_faults_args(&c, argc, argv);
		goto out;
	}
	if (argc != 3) {
		err = -EINVAL;
		goto out;
	}
	srv = testsrv_find(&mt_servers, &c.dst);
	if (!strcmp(argv[0], "listen"))
		mt_server_start(&c.dst);
	else if (!strcmp(argv[0], "stop") && srv)
		mt_server_stop(srv, false);
	else if (!strcmp(argv[0], "stop-posted") && srv)
		mt_server_stop(srv, true);
	else if (!strcmp(argv[0], "mr"))
		mt_cmd_mr(&c, true, false);
	else if (!strcmp(argv[0], "mr-brief"))
		mt_cmd_mr(&c, true, true);
	else if (!strcmp(argv[0], "rw"))
		mt_cmd_mr(&c, false, false);
	else if (!strcmp(argv[0], "pool"))
		mt_cmd_pool(&c);
	else if (!strcmp(argv[0], "pool-split"))
		mt_cmd_split(&c);
	else if (!strcmp(argv[0], "bench"))
		mt_cmd_bench(&c);
	else if (!strcmp(argv[0], "silent"))
		mt_cmd_silent(&c);
	else
		err = -EINVAL;
out:
	argv_free(argv);
	return err;
}

static int __init smbd_mr_test_init(void)
{
	return testctl_init(&mt_ctl, "smbd_mr_test", MT_OUT_MAX, 256, mt_run);
}

static void __exit smbd_mr_test_exit(void)
{
	struct mt_server *srv, *tmp;

	testctl_remove(&mt_ctl);
	list_for_each_entry_safe(srv, tmp, &mt_servers, ts.node)
		mt_server_stop(srv, false);
	testctl_out_free(&mt_ctl.out);
}

module_init(smbd_mr_test_init);
module_exit(smbd_mr_test_exit);

MODULE_DESCRIPTION("smbd memory registration and RDMA read/write tests");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(SMBD);

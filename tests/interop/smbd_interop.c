// SPDX-License-Identifier: GPL-2.0
/*
 * smbd_interop: smbd against the kernel's stock SMB Direct peers, through
 * smbd's public API only (include/smbd.h), driven from user space through
 * debugfs:
 *
 *   /sys/kernel/debug/smbd_interop/ctl      write one command line
 *   /sys/kernel/debug/smbd_interop/result   what the last command found
 *
 * Commands (ADDR is an IPv4 address, PORT a number; timeout=SECONDS bounds
 * every wait, default 30):
 *
 *   client ADDR PORT [timeout=S]
 *	smbd as the initiator against a stock ksmbd listening there. Two
 *	connections. The first checks the negotiated values
 *	(smbd_sock_query()), sends an SMB2 NEGOTIATE request offering 3.0,
 *	3.0.2 and 3.1.1 (with preauth integrity and encryption contexts)
 *	and checks the response smbd_sock_recv() returns. The second offers
 *	3.0 and 3.0.2 and reads the response with smbd_sock_recv_stream():
 *	a 4-byte big-endian length, then exactly that message.
 *   listen ADDR PORT [timeout=S]
 *	smbd as the responder for a stock cifs: a thread accepts connections
 *	and on each checks the negotiated values and the first message,
 *	which must be an SMB2 NEGOTIATE request, then releases the connection
 *	without answering (the mount fails). timeout= bounds the wait for
 *	that first message.
 *   wait ADDR PORT [conns=N] [timeout=S]
 *	wait until that responder has checked N connections (default 1).
 *   stop ADDR PORT
 *	stop that responder and report its checks: every check of its first
 *	connection, and one for all the connections after it.
 *   connect ADDR PORT [timeout=S]
 *	one smbd connection to a stock ksmbd, released once negotiated
 *	(first/connect): the plan restarts ksmbd before each.
 *   selffirst ADDR PORT [conns=N] [timeout=S]
 *	N times: an smbd listener on ADDR PORT and at once an smbd
 *	connection to it, accepted; one check for all (self/first-connects).
 *
 * The result file has one line per check, "ok NAME [- detail]" or
 * "not ok NAME - reason", and "info TEXT" lines.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/err.h>
#include <linux/in.h>
#include <linux/inet.h>
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/list.h>
#include <linux/math64.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uio.h>
#include <linux/unaligned.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <net/net_namespace.h>

#include "smbd.h"
#include "../include/smbd_testctl.h"
#include "../include/smbd_testsrv.h"

#define SI_OUT_MAX	(16 << 10)
#define SI_LINE_MAX	256
#define SI_MSG_MAX	(64 << 10)	/* largest NEGOTIATE we take */
#define SI_BACKLOG	8

/* ------------------------------------------------------------ SMB2 */

/* [MS-SMB2] 2.2.1.2: the SYNC header */
struct si_smb2_hdr {
	__le32 protocol_id;
	__le16 structure_size;
	__le16 credit_charge;
	__le32 status;
	__le16 command;
	__le16 credit_request;
	__le32 flags;
	__le32 next_command;
	__le64 message_id;
	__le32 process_id;
	__le32 tree_id;
	__le64 session_id;
	u8 signature[16];
} __packed;

/* [MS-SMB2] 2.2.3: NEGOTIATE request, up to Dialects */
struct si_neg_req {
	struct si_smb2_hdr hdr;
	__le16 structure_size;
	__le16 dialect_count;
	__le16 security_mode;
	__le16 reserved;
	__le32 capabilities;
	u8 client_guid[16];
	__le32 neg_ctx_offset;
	__le16 neg_ctx_count;
	__le16 reserved2;
} __packed;

/* [MS-SMB2] 2.2.4: NEGOTIATE response, up to Buffer */
struct si_neg_rsp {
	struct si_smb2_hdr hdr;
	__le16 structure_size;
	__le16 security_mode;
	__le16 dialect_revision;
	__le16 neg_ctx_count;
	u8 server_guid[16];
	__le32 capabilities;
	__le32 max_transact_size;
	__le32 max_read_size;
	__le32 max_write_size;
	__le64 system_time;
	__le64 server_start_time;
	__le16 security_buffer_offset;
	__le16 security_buffer_length;
	__le32 neg_ctx_offset;
} __packed;

/* [MS-SMB2] 2.2.3.1: NEGOTIATE_CONTEXT; its data follows */
struct si_neg_ctx {
	__le16 type;
	__le16 data_length;
	__le32 reserved;
} __packed;

static_assert(sizeof(struct si_smb2_hdr) == 64);
static_assert(sizeof(struct si_neg_req) == 64 + 36);
static_assert(sizeof(struct si_neg_rsp) == 64 + 64);
static_assert(sizeof(struct si_neg_ctx) == 8);

#define SMB2_PROTO_ID			0x424d53fe	/* 0xFE 'S' 'M' 'B' */
#define SMB2_NEGOTIATE			0x0000
#define SMB2_FLAGS_SERVER_TO_REDIR	0x00000001
#define SMB2_SIGNING_ENABLED		0x0001
#define SMB2_DIALECT_300		0x0300
#define SMB2_DIALECT_302		0x0302
#define SMB2_DIALECT_311		0x0311
#define SMB2_PREAUTH_CTX		0x0001
#define SMB2_ENCRYPTION_CTX		0x0002
#define SMB2_PREAUTH_SHA512		0x0001
#define SMB2_AES128_CCM			0x0001
#define SMB2_AES128_GCM			0x0002
#define SI_SALT_LEN			32

/*
 * si_build_negotiate: an SMB2 NEGOTIATE request ([MS-SMB2] 2.2.3) into
 * @buf offering @dialects; when 3.1.1 is among them, with a preauth
 * integrity context (SHA-512 and a salt) and an encryption context
 * (AES-128-GCM, AES-128-CCM) at 8-byte aligned offsets (2.2.3.1).
 * Returns the message length.
 */
static size_t si_build_negotiate(u8 *buf, size_t size, const u16 *dialects,
				 unsigned int n)
{
	struct si_neg_req *req = (struct si_neg_req *)buf;
	bool smb311 = false;
	struct si_neg_ctx *ctx;
	size_t len, off;
	unsigned int i;
	u8 *d;

	memset(buf, 0, size);
	req->hdr.protocol_id = cpu_to_le32(SMB2_PROTO_ID);
	req->hdr.structure_size = cpu_to_le16(64);
	req->hdr.command = cpu_to_le16(SMB2_NEGOTIATE);
	req->hdr.credit_request = cpu_to_le16(31);
	req->hdr.message_id = 0;
	req->structure_size = cpu_to_le16(36);
	req->dialect_count = cpu_to_le16(n);
	req->security_mode = cpu_to_le16(SMB2_SIGNING_ENABLED);
	get_random_bytes(req->client_guid, sizeof(req->client_guid));
	len = sizeof(*req);
	for (i = 0; i < n; i++) {
		put_unaligned_le16(dialects[i], buf + len);
		len += 2;
		if (dialects[i] == SMB2_DIALECT_311)
			smb311 = true;
	}
	if (!smb311)
		return len;

	off = ALIGN(len, 8);
	req->neg_ctx_offset = cpu_to_le32(off);
	req->neg_ctx_count = cpu_to_le16(2);

	/* 2.2.3.1.1: HashAlgorithmCount, SaltLength, HashAlgorithms, Salt */
	ctx = (struct si_neg_ctx *)(buf + off);
	ctx->type = cpu_to_le16(SMB2_PREAUTH_CTX);
	ctx->data_length = cpu_to_le16(6 + SI_SALT_LEN);
	d = (u8 *)(ctx + 1);
	put_unaligned_le16(1, d);
	put_unaligned_le16(SI_SALT_LEN, d + 2);
	put_unaligned_le16(SMB2_PREAUTH_SHA512, d + 4);
	get_random_bytes(d + 6, SI_SALT_LEN);
	off = ALIGN(off + sizeof(*ctx) + 6 + SI_SALT_LEN, 8);

	/* 2.2.3.1.2: CipherCount, Ciphers */
	ctx = (struct si_neg_ctx *)(buf + off);
	ctx->type = cpu_to_le16(SMB2_ENCRYPTION_CTX);
	ctx->data_length = cpu_to_le16(6);
	d = (u8 *)(ctx + 1);
	put_unaligned_le16(2, d);
	put_unaligned_le16(SMB2_AES128_GCM, d + 2);
	put_unaligned_le16(SMB2_AES128_CCM, d + 4);
	return off + sizeof(*ctx) + 6;
}

/* ------------------------------------------------------------ output */

static struct testctl si_tc;	/* ctl, result; its lock runs commands */

#define si_out_add testctl_out_add
#define si_info testctl_info
/* si_check: the check PREFIX/NAME; the detail goes after " - " */
#define si_check testctl_check

/* ------------------------------------------------------------ helpers */

/*
 * A guard: past its time it shuts the socket down, so that a blocked
 * smbd_sock_recv() returns. Disarm it before the socket is released.
 */
struct si_guard {
	struct delayed_work work;
	struct smbd_sock *sk;
	bool fired;
};

static void si_guard_fire(struct work_struct *w)
{
	struct si_guard *g = container_of(to_delayed_work(w), struct si_guard,
					  work);

	WRITE_ONCE(g->fired, true);
	pr_warn("timeout: shutting a connection down\n");
	smbd_sock_shutdown(g->sk);
}

static void si_guard_arm(struct si_guard *g, struct smbd_sock *sk, u32 secs)
{
	g->sk = sk;
	g->fired = false;
	INIT_DELAYED_WORK(&g->work, si_guard_fire);
	schedule_delayed_work(&g->work, secs * HZ);
}

static bool si_guard_disarm(struct si_guard *g)
{
	cancel_delayed_work_sync(&g->work);
	return READ_ONCE(g->fired);
}

static ssize_t si_send(struct smbd_sock *sk, const void *buf, size_t len)
{
	struct kvec kv = { .iov_base = (void *)buf, .iov_len = len };
	struct iov_iter it;

	iov_iter_kvec(&it, ITER_SOURCE, &kv, 1, len);
	return smbd_sock_send(sk, &it, 0);
}

static ssize_t si_recv(struct smbd_sock *sk, void *buf, size_t len,
		       struct smbd_recv_info *info)
{
	struct kvec kv = { .iov_base = buf, .iov_len = len };
	struct iov_iter it;

	iov_iter_kvec(&it, ITER_DEST, &kv, 1, len);
	return smbd_sock_recv(sk, &it, 0, info);
}

static ssize_t si_recv_stream(struct smbd_sock *sk, void *buf, size_t len,
			      unsigned int flags)
{
	struct kvec kv = { .iov_base = buf, .iov_len = len };
	struct iov_iter it;

	iov_iter_kvec(&it, ITER_DEST, &kv, 1, len);
	return smbd_sock_recv_stream(sk, &it, flags);
}

/*
 * si_check_query: the values smbd negotiated with a stock peer are sane.
 * Both stock peers ask for 1364-byte messages and reassemble at least
 * 128 KiB. A responder holds Send Credits only once the initiator's first
 * message granted some: @credits says whether to check them.
 */
static void si_check_query(struct testctl_out *o, const char *p,
			   struct smbd_sock *sk, bool sizes, bool credits)
{
	struct smbd_sock_info in;
	int err;

	err = smbd_sock_query(sk, &in);
	if (err) {
		si_check(o, false, p, sizes ? "query" : "query-credits",
			 "smbd_sock_query: %d", err);
		return;
	}
	if (sizes) {
		si_info(o, "%s: max_send %u max_recv %u max_frag_send %u max_frag_recv %u max_rw %u iwarp %d ird %u ord %u",
			p, in.max_send_size, in.max_recv_size,
			in.max_fragmented_send_size,
			in.max_fragmented_recv_size, in.max_read_write_size,
			in.iwarp, in.responder_resources, in.initiator_depth);
		si_check(o, in.max_send_size >= 128 && in.max_send_size <= 1364,
			 p, "query/max-send-size", "%u, want 128..1364",
			 in.max_send_size);
		si_check(o, in.max_fragmented_send_size >= 131072, p,
			 "query/max-fragmented-send-size", "%u, want >= 131072",
			 in.max_fragmented_send_size);
		si_check(o, in.max_read_write_size > 0, p,
			 "query/max-read-write-size", "%u",
			 in.max_read_write_size);
	}
	if (credits)
		si_check(o, in.send_credits > 0 && in.recv_credits > 0, p,
			 "query/credits", "send %u, receive %u, target %u",
			 in.send_credits, in.recv_credits,
			 in.recv_credit_target);
}

/* si_ctx_walk: the negotiate contexts of @buf fit in @len; end and types */
static bool si_ctx_walk(const u8 *buf, size_t len, u32 off, u16 count,
			size_t *end, u32 *types, bool *sha512)
{
	const struct si_neg_ctx *ctx;
	u16 dl;

	*types = 0;
	*sha512 = false;
	*end = off;
	while (count--) {
		if (off % 8 || off + sizeof(*ctx) > len)
			return false;
		ctx = (const struct si_neg_ctx *)(buf + off);
		dl = le16_to_cpu(ctx->data_length);
		if (off + sizeof(*ctx) + dl > len)
			return false;
		if (le16_to_cpu(ctx->type) < 32)
			*types |= BIT(le16_to_cpu(ctx->type));
		/* 2.2.3.1.1: HashAlgorithmCount, SaltLength, HashAlgorithms */
		if (le16_to_cpu(ctx->type) == SMB2_PREAUTH_CTX && dl >= 6 &&
		    get_unaligned_le16(ctx + 1) >= 1 &&
		    get_unaligned_le16((u8 *)(ctx + 1) + 4) ==
		    SMB2_PREAUTH_SHA512)
			*sha512 = true;
		*end = off + sizeof(*ctx) + dl;
		off = ALIGN(*end, 8);
	}
	return true;
}

/* si_check_header: the SYNC header of the first message either way */
static void si_check_header(struct testctl_out *o, const char *p,
			    const struct si_smb2_hdr *h, bool response)
{
	u32 flags = le32_to_cpu(h->flags);

	si_check(o, le32_to_cpu(h->protocol_id) == SMB2_PROTO_ID, p,
		 "protocol-id", "0x%08x", le32_to_cpu(h->protocol_id));
	si_check(o, le16_to_cpu(h->command) == SMB2_NEGOTIATE, p, "command",
		 "%u", le16_to_cpu(h->command));
	si_check(o, le16_to_cpu(h->structure_size) == 64 &&
		 !!(flags & SMB2_FLAGS_SERVER_TO_REDIR) == response &&
		 !h->next_command && !h->message_id, p, "header",
		 "StructureSize %u, Flags 0x%x, NextCommand %u, MessageId %llu",
		 le16_to_cpu(h->structure_size), flags,
		 le32_to_cpu(h->next_command), le64_to_cpu(h->message_id));
}

/*
 * si_check_neg_rsp: @buf is a successful NEGOTIATE response ([MS-SMB2]
 * 2.2.4) to a request that offered @dialects.
 */
static void si_check_neg_rsp(struct testctl_out *o, const char *p,
			     const u8 *buf, size_t len, const u16 *dialects,
			     unsigned int n)
{
	const struct si_neg_rsp *rsp = (const struct si_neg_rsp *)buf;
	u16 dialect, sb_off, sb_len, count;
	bool offered = false, sha512;
	unsigned int i;
	size_t end;
	u32 types;

	if (!si_check(o, len >= sizeof(*rsp), p, "length",
		      "%zu bytes, want >= %zu", len, sizeof(*rsp)))
		return;
	si_check_header(o, p, &rsp->hdr, true);
	si_check(o, !rsp->hdr.status, p, "status", "0x%08x",
		 le32_to_cpu(rsp->hdr.status));
	si_check(o, le16_to_cpu(rsp->structure_size) == 65, p,
		 "structure-size", "%u", le16_to_cpu(rsp->structure_size));
	dialect = le16_to_cpu(rsp->dialect_revision);
	for (i = 0; i < n; i++)
		if (dialects[i] == dialect)
			offered = true;
	si_check(o, offered, p, "dialect", "0x%04x", dialect);
	sb_off = le16_to_cpu(rsp->security_buffer_offset);
	sb_len = le16_to_cpu(rsp->security_buffer_length);
	si_check(o, !sb_len || (sb_off >= sizeof(*rsp) &&
				sb_off + sb_len <= len), p, "security-buffer",
		 "offset %u, length %u, message %zu bytes", sb_off, sb_len,
		 len);
	si_info(o, "%s: dialect 0x%04x, security mode 0x%x, capabilities 0x%x, max transact/read/write %u/%u/%u, %zu bytes",
		p, dialect, le16_to_cpu(rsp->security_mode),
		le32_to_cpu(rsp->capabilities),
		le32_to_cpu(rsp->max_transact_size),
		le32_to_cpu(rsp->max_read_size),
		le32_to_cpu(rsp->max_write_size), len);
	if (dialect != SMB2_DIALECT_311)
		return;
	/* 2.2.4: a 3.1.1 response carries the preauth integrity context */
	count = le16_to_cpu(rsp->neg_ctx_count);
	si_check(o, count >= 1 && le32_to_cpu(rsp->neg_ctx_offset) >=
		 sizeof(*rsp) &&
		 si_ctx_walk(buf, len, le32_to_cpu(rsp->neg_ctx_offset), count,
			     &end, &types, &sha512) &&
		 (types & BIT(SMB2_PREAUTH_CTX)) && sha512, p,
		 "negotiate-contexts", "%u at offset %u", count,
		 le32_to_cpu(rsp->neg_ctx_offset));
}

/*
 * si_check_neg_req: @buf, the first message of an SMB2 client, is a
 * NEGOTIATE request ([MS-SMB2] 2.2.3) whose length is what DialectCount
 * and the negotiate contexts (3.1.1 only) make it, give or take the
 * padding of the last item to 8 bytes.
 */
static void si_check_neg_req(struct testctl_out *o, const char *p,
			     const u8 *buf, size_t len)
{
	const struct si_neg_req *req = (const struct si_neg_req *)buf;
	size_t base, end, i;
	bool smb311 = false, sha512 = false, fits;
	char list[64] = "";
	u16 n, count = 0;
	u32 types = 0;
	int l = 0;

	if (!si_check(o, len >= sizeof(*req), p, "length",
		      "%zu bytes, want >= %zu", len, sizeof(*req)))
		return;
	si_check_header(o, p, &req->hdr, false);
	si_check(o, le16_to_cpu(req->structure_size) == 36, p,
		 "structure-size", "%u", le16_to_cpu(req->structure_size));
	n = le16_to_cpu(req->dialect_count);
	base = sizeof(*req) + 2 * (size_t)n;
	if (!si_check(o, n > 0 && base <= len, p, "dialect-count",
		      "%u dialects, message %zu bytes", n, len))
		return;
	for (i = 0; i < n; i++) {
		u16 d = get_unaligned_le16(buf + sizeof(*req) + 2 * i);

		if (d == SMB2_DIALECT_311)
			smb311 = true;
		l += scnprintf(list + l, sizeof(list) - l, "%s0x%04x",
			       i ? "," : "", d);
	}
	if (smb311) {
		u32 off = le32_to_cpu(req->neg_ctx_offset);

		count = le16_to_cpu(req->neg_ctx_count);
		fits = count && off >= base &&
		       si_ctx_walk(buf, len, off, count, &end, &types, &sha512);
	} else {
		fits = true;
		end = base;
	}
	si_check(o, fits && (len == end || len == ALIGN(end, 8)), p,
		 "message-length",
		 "%zu bytes; %u dialects, %u contexts end at %zu", len, n,
		 count, fits ? end : 0);
	if (smb311)
		si_check(o, sha512, p, "preauth-context",
			 "context types 0x%x", types);
	si_info(o, "%s: dialects %s, security mode 0x%x, capabilities 0x%x, %u contexts (types 0x%x), %zu bytes",
		p, list, le16_to_cpu(req->security_mode),
		le32_to_cpu(req->capabilities), count, types, len);
}

/* ------------------------------------------------------------ client */

#define SI_REQ_MAX	256

struct si_cmd {
	struct sockaddr_storage addr;
	u32 timeout_s;
	u32 conns;
	struct si_guard guard;
	u8 req[SI_REQ_MAX];
	u8 *msg;
};

static int si_connect(struct si_cmd *c, const char *p, struct smbd_sock **skp)
{
	struct testctl_out *o = &si_tc.out;
	struct smbd_params par;
	struct smbd_sock *sk;
	ktime_t t0;
	int err;

	smbd_params_init(&par, false);
	par.negotiate_timeout_ms = c->timeout_s * 1000;
	err = smbd_sock_create(&init_net, &par, &sk);
	if (err) {
		si_check(o, false, p, "connect", "smbd_sock_create: %d", err);
		return err;
	}
	t0 = ktime_get();
	err = smbd_sock_connect(sk, (struct sockaddr *)&c->addr);
	if (err) {
		si_check(o, false, p, "connect",
			 "smbd_sock_connect to %pISpc: %d after %lld ms",
			 &c->addr, err, ktime_ms_delta(ktime_get(), t0));
		smbd_sock_release(sk);
		return err;
	}
	si_check(o, true, p, "connect", "%pISpc, negotiated in %lld ms",
		 &c->addr, ktime_ms_delta(ktime_get(), t0));
	*skp = sk;
	return 0;
}

static bool si_send_negotiate(struct si_cmd *c, const char *p,
			      struct smbd_sock *sk, const u16 *dialects,
			      unsigned int n)
{
	size_t len = si_build_negotiate(c->req, sizeof(c->req), dialects, n);
	ssize_t ret = si_send(sk, c->req, len);

	return si_check(&si_tc.out, ret == len, p, "send-negotiate",
			"smbd_sock_send(%zu bytes): %zd", len, ret);
}

/* One connection: NEGOTIATE for 3.0, 3.0.2, 3.1.1; smbd_sock_recv(). */
static void si_client_recv(struct si_cmd *c)
{
	static const u16 dialects[] = { SMB2_DIALECT_300, SMB2_DIALECT_302,
					SMB2_DIALECT_311 };
	struct smbd_recv_info info = { };
	const char *p = "ksmbd";
	struct smbd_sock *sk;
	bool expired;
	ssize_t n;

	if (si_connect(c, p, &sk))
		return;
	si_check_query(&si_tc.out, p, sk, true, true);
	if (!si_send_negotiate(c, p, sk, dialects, ARRAY_SIZE(dialects)))
		goto out;
	si_guard_arm(&c->guard, sk, c->timeout_s);
	n = si_recv(sk, c->msg, SI_MSG_MAX, &info);
	expired = si_guard_disarm(&c->guard);
	if (!si_check(&si_tc.out, n > 0 && n == info.msg_len, p,
		      "recv-response", "smbd_sock_recv: %zd, msg_len %u%s", n,
		      info.msg_len, expired ? " (timed out)" : ""))
		goto out;
	si_check_neg_rsp(&si_tc.out, "ksmbd/response", c->msg, n, dialects,
			 ARRAY_SIZE(dialects));
out:
	smbd_sock_release(sk);
}

/*
 * Another connection: NEGOTIATE for 3.0 and 3.0.2; the response read with
 * smbd_sock_recv_stream(), as SMB2 over TCP frames it: 4 bytes of
 * big-endian length first, then the message, with no read crossing its
 * end.
 */
static void si_client_stream(struct si_cmd *c)
{
	static const u16 dialects[] = { SMB2_DIALECT_300, SMB2_DIALECT_302 };
	const char *p = "ksmbd-stream";
	unsigned int reads = 0;
	struct smbd_sock *sk;
	size_t got = 0;
	bool expired;
	__be32 hdr;
	ssize_t n;
	u32 mlen;

	if (si_connect(c, p, &sk))
		return;
	if (!si_send_negotiate(c, p, sk, dialects, ARRAY_SIZE(dialects)))
		goto out;
	si_guard_arm(&c->guard, sk, c->timeout_s);
	n = si_recv_stream(sk, &hdr, sizeof(hdr), 0);
	mlen = be32_to_cpu(hdr);
	if (!si_check(&si_tc.out, n == sizeof(hdr) &&
		      mlen >= sizeof(struct si_neg_rsp) && mlen <= SI_MSG_MAX,
		      p, "length-prefix", "read %zd, message length %u", n,
		      n == sizeof(hdr) ? mlen : 0)) {
		si_guard_disarm(&c->guard);
		goto out;
	}
	/* Reads offer more room than the message: none may go past it. */
	while (got < mlen) {
		n = si_recv_stream(sk, c->msg + got, SI_MSG_MAX - got, 0);
		if (n <= 0)
			break;
		got += n;
		reads++;
	}
	si_check(&si_tc.out, got == mlen, p, "message",
		 "%zu of %u bytes in %u read(s), last %zd", got, mlen, reads,
		 n);
	n = si_recv_stream(sk, &hdr, sizeof(hdr), SMBD_RECV_NONBLOCK);
	si_check(&si_tc.out, n == -EAGAIN, p, "nothing-more",
		 "non-blocking read after the message: %zd", n);
	expired = si_guard_disarm(&c->guard);
	if (expired)
		si_check(&si_tc.out, false, p, "timeout", "past %u s",
			 c->timeout_s);
	if (got == mlen)
		si_check_neg_rsp(&si_tc.out, "ksmbd-stream/response", c->msg,
				 got, dialects, ARRAY_SIZE(dialects));
out:
	smbd_sock_release(sk);
}

static void si_cmd_client(struct si_cmd *c)
{
	c->msg = kvmalloc(SI_MSG_MAX, GFP_KERNEL);
	if (!c->msg) {
		si_check(&si_tc.out, false, "ksmbd", "setup", "no memory");
		return;
	}
	si_client_recv(c);
	si_client_stream(c);
	kvfree(c->msg);
}

/* ------------------------------------------------------------ responder */

struct si_server {
	struct testsrv ts;	/* first: on si_servers */
	u32 timeout_s;
	struct mutex serve_lock;	/* one connection checked at a time */
	struct testctl_out out;	/* the first connection's checks */
	struct si_guard guard;
	u8 *msg;
	unsigned int conns;	/* connections checked */
	unsigned int later_bad;	/* later ones with a failed check */
	wait_queue_head_t wq;
};

static LIST_HEAD(si_servers);	/* under si_tc.lock */

/*
 * si_serve: check one accepted connection of a stock cifs: the negotiated
 * values, and its first message, an SMB2 NEGOTIATE request. Only the
 * first connection's checks are printed; later ones (cifs reconnects and
 * retries its NEGOTIATE once) are only counted. No answer: cifs sees the
 * connection end (released when this returns), and fails.
 */
static int si_serve(struct testsrv_conn *tc)
{
	struct si_server *srv = container_of(tc->srv, struct si_server, ts);
	struct smbd_recv_info info = { };
	struct testctl_out *o = &srv->out;
	struct smbd_sock *sk = tc->sk;
	const char *p = "cifs";
	unsigned int before;
	bool first, expired;
	ssize_t n;

	mutex_lock(&srv->serve_lock);
	/* Shut down by a stop while it waited: nothing to check. */
	if (READ_ONCE(srv->ts.stopping)) {
		mutex_unlock(&srv->serve_lock);
		return 0;
	}
	first = !srv->conns;
	mutex_lock(&o->lock);
	o->quiet = !first;
	before = o->failed;
	mutex_unlock(&o->lock);

	si_check(o, true, p, "accept", "connection %u on %pISpc",
		 srv->conns + 1, &srv->ts.addr);
	si_check_query(o, p, sk, true, false);
	si_guard_arm(&srv->guard, sk, srv->timeout_s);
	n = si_recv(sk, srv->msg, SI_MSG_MAX, &info);
	expired = si_guard_disarm(&srv->guard);
	if (si_check(o, n > 0 && n == info.msg_len, p, "recv",
		     "smbd_sock_recv: %zd, msg_len %u%s", n, info.msg_len,
		     expired ? " (timed out)" : "")) {
		si_check_query(o, p, sk, false, true);
		si_check_neg_req(o, "cifs/negotiate", srv->msg, n);
	}

	mutex_lock(&o->lock);
	o->quiet = false;
	if (!first && o->failed != before)
		srv->later_bad++;
	mutex_unlock(&o->lock);
	if (!first)
		si_info(o, "cifs: connection %u: first message %zd bytes, command %u, %s",
			srv->conns + 1, n,
			n >= 64 ? get_unaligned_le16(srv->msg + 12) : 0xffff,
			o->failed != before ? "a check FAILED" : "checks passed");
	WRITE_ONCE(srv->conns, srv->conns + 1);
	mutex_unlock(&srv->serve_lock);
	wake_up(&srv->wq);
	return 0;
}

static void si_server_free(struct si_server *srv)
{
	kvfree(srv->msg);
	testctl_out_free(&srv->out);
	kfree(srv);
}

static void si_cmd_listen(struct si_cmd *c)
{
	struct testctl_out *o = &si_tc.out;
	struct si_server *srv;
	const char *step = "allocation";
	int err = -ENOMEM;

	if (testsrv_find(&si_servers, &c->addr)) {
		si_check(o, false, "cifs", "listen", "already listening on %pISpc",
			 &c->addr);
		return;
	}
	srv = kzalloc(sizeof(*srv), GFP_KERNEL);
	if (!srv) {
		si_check(o, false, "cifs", "listen", "no memory");
		return;
	}
	srv->timeout_s = c->timeout_s;
	mutex_init(&srv->serve_lock);
	init_waitqueue_head(&srv->wq);
	srv->ts.serve = si_serve;
	srv->ts.conn_size = sizeof(struct testsrv_conn);
	srv->ts.name = "smbd_iop";
	srv->ts.reap = true;
	srv->msg = kvmalloc(SI_MSG_MAX, GFP_KERNEL);
	if (srv->msg && !testctl_out_init(&srv->out, SI_OUT_MAX))
		err = testsrv_start(&srv->ts, &c->addr, SI_BACKLOG, &step);
	if (err) {
		si_check(o, false, "cifs", "listen", "%s on %pISpc: %d", step,
			 &c->addr, err);
		si_server_free(srv);
		return;
	}
	list_add(&srv->ts.node, &si_servers);
	si_check(o, true, "cifs", "listen", "%pISpc", &c->addr);
}

static void si_cmd_wait(struct si_cmd *c)
{
	struct si_server *srv = testsrv_find(&si_servers, &c->addr);
	unsigned int n;

	if (!srv) {
		si_check(&si_tc.out, false, "cifs", "wait", "no responder on %pISpc",
			 &c->addr);
		return;
	}
	/* Killable only: the shell writing the command gets SIGCHLDs. */
	wait_event_killable_timeout(srv->wq, READ_ONCE(srv->conns) >= c->conns,
				    c->timeout_s * HZ);
	n = READ_ONCE(srv->conns);
	si_check(&si_tc.out, n >= c->conns, "cifs", "wait",
		 "%u connection(s) checked, want %u within %u s", n, c->conns,
		 c->timeout_s);
}

static void si_server_stop(struct si_server *srv)
{
	struct testctl_out *o = &si_tc.out;
	unsigned int n;

	testsrv_stop(&srv->ts, o, 0, NULL, NULL);
	list_del(&srv->ts.node);
	n = srv->conns;
	testctl_out_copy(o, &srv->out);
	si_check(o, n >= 1, "cifs", "connections",
		 "%u connection(s) from cifs", n);
	si_check(o, !srv->later_bad, "cifs", "later-connections",
		 "%u after the first, %u with a failed check",
		 n ? n - 1 : 0, srv->later_bad);
	si_check(o, !srv->ts.accept_errors, "cifs", "accept-errors",
		 "%u accept errors (last %d)", srv->ts.accept_errors,
		 srv->ts.last_accept_err);
	si_server_free(srv);
}

static void si_cmd_stop(struct si_cmd *c)
{
	struct si_server *srv = testsrv_find(&si_servers, &c->addr);

	if (srv)
		si_server_stop(srv);
	else
		si_check(&si_tc.out, false, "cifs", "stop",
			 "no responder on %pISpc", &c->addr);
}

/* ------------------------------------------------------------ commands */

/*
 * connect: one connection and no more, then released: the plan restarts
 * the stock ksmbd before each, so each is the first its listener sees.
 */
static void si_cmd_connect(struct si_cmd *c)
{
	struct smbd_sock *sk;

	if (!si_connect(c, "first", &sk))
		smbd_sock_release(sk);
}

/*
 * selffirst: conns times, smbd's own listener on the address and an smbd
 * initiator connecting to it at once: every connect the first its
 * listener sees. One check for all of them.
 */
static void si_cmd_selffirst(struct si_cmd *c)
{
	struct testctl_out *o = &si_tc.out;
	struct smbd_sock *lsk, *sk, *child;
	s64 ms, worst = 0, total = 0;
	unsigned int i, bad = 0, good = 0;
	struct smbd_params par;
	char why[160] = "";
	ktime_t t0;
	int err, tries;

	for (i = 0; i < c->conns; i++) {
		lsk = NULL;
		sk = NULL;
		child = NULL;
		smbd_params_init(&par, true);
		err = smbd_sock_create(&init_net, &par, &lsk) ?:
		      smbd_sock_bind(lsk, (struct sockaddr *)&c->addr) ?:
		      smbd_sock_listen(lsk, 4);
		if (err) {
			scnprintf(why, sizeof(why), "listener %u: %d", i, err);
			goto next;
		}
		smbd_params_init(&par, false);
		par.negotiate_timeout_ms = c->timeout_s * 1000;
		err = smbd_sock_create(&init_net, &par, &sk);
		if (err) {
			scnprintf(why, sizeof(why), "socket %u: %d", i, err);
			goto next;
		}
		t0 = ktime_get();
		err = smbd_sock_connect(sk, (struct sockaddr *)&c->addr);
		ms = ktime_ms_delta(ktime_get(), t0);
		if (err) {
			scnprintf(why, sizeof(why),
				  "connect %u: %d after %lld ms", i, err, ms);
			goto next;
		}
		/* Negotiated on both ends: the child is queued by now. */
		for (tries = 0; tries < 100; tries++) {
			err = smbd_sock_accept(lsk, &child, SMBD_RECV_NONBLOCK);
			if (err != -EAGAIN)
				break;
			msleep(20);
		}
		if (err) {
			scnprintf(why, sizeof(why), "accept %u: %d", i, err);
		} else {
			good++;
			worst = max(worst, ms);
			total += ms;
		}
next:
		if (err)
			bad++;
		smbd_sock_release(child);
		smbd_sock_release(sk);
		smbd_sock_release(lsk);
	}
	si_check(o, c->conns && !bad, "self", "first-connects",
		 "%u connects to a new listener on %pISpc, %u failed; of the others %lld ms worst, %lld ms mean%s%s",
		 c->conns, &c->addr, bad, worst,
		 good ? div_s64(total, good) : 0, bad ? "; last: " : "", why);
}

static int si_parse(struct si_cmd *c, int argc, char **argv)
{
	u32 port;
	char *v;
	int i, err;

	if (argc < 3)
		return -EINVAL;
	if (kstrtou32(argv[2], 10, &port) || !port ||
	    testctl_addr(argv[1], port, &c->addr))
		return -EINVAL;
	for (i = 3; i < argc; i++) {
		v = strchr(argv[i], '=');
		if (!v)
			return -EINVAL;
		*v++ = '\0';
		if (!strcmp(argv[i], "timeout"))
			err = kstrtou32(v, 10, &c->timeout_s);
		else if (!strcmp(argv[i], "conns"))
			err = kstrtou32(v, 10, &c->conns);
		else
			err = -EINVAL;
		if (err)
			return err;
	}
	return c->timeout_s && c->timeout_s <= 600 ? 0 : -EINVAL;
}

static int si_run(char *line)
{
	struct si_cmd *c;
	char **argv;
	int argc, err = 0;

	argv = argv_split(GFP_KERNEL, line, &argc);
	if (!argv)
		return -ENOMEM;
	c = kzalloc(sizeof(*c), GFP_KERNEL);
	if (!c || !argc) {
		err = c ? -EINVAL : -ENOMEM;
		goto out;
	}
	c->timeout_s = 30;
	c->conns = 1;
	err = si_parse(c, argc, argv);
	if (err)
		goto out;
	if (!strcmp(argv[0], "client"))
		si_cmd_client(c);
	else if (!strcmp(argv[0], "listen"))
		si_cmd_listen(c);
	else if (!strcmp(argv[0], "wait"))
		si_cmd_wait(c);
	else if (!strcmp(argv[0], "stop"))
		si_cmd_stop(c);
	else if (!strcmp(argv[0], "connect"))
		si_cmd_connect(c);
	else if (!strcmp(argv[0], "selffirst"))
		si_cmd_selffirst(c);
	else
		err = -EINVAL;
out:
	if (err)
		si_out_add(&si_tc.out, "error: cannot run \"%s ...\": %d",
			   argc ? argv[0] : "", err);
	kfree(c);
	argv_free(argv);
	return err;
}

/* ------------------------------------------------------------ module */

static int __init si_init(void)
{
	return testctl_init(&si_tc, "smbd_interop", SI_OUT_MAX, SI_LINE_MAX,
			    si_run);
}

static void __exit si_exit(void)
{
	struct si_server *srv, *tmp;

	testctl_remove(&si_tc);
	mutex_lock(&si_tc.lock);
	list_for_each_entry_safe(srv, tmp, &si_servers, ts.node)
		si_server_stop(srv);
	mutex_unlock(&si_tc.lock);
	testctl_out_free(&si_tc.out);
}

module_init(si_init);
module_exit(si_exit);

MODULE_DESCRIPTION("smbd against the stock ksmbd and cifs, driven through debugfs");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(SMBD);

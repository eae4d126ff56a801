// SPDX-License-Identifier: GPL-2.0
/*
 * smbd_smb2c.ko: an SMB2 client of the test suite's own that takes the
 * only road a Windows client takes to SMB Direct ([MS-SMB2] 3.2.4.2.3,
 * 3.2.5.3.3, [MS-SMBD] 1.3): SMB 3.1.1 (or 3.0.2) over TCP first, NTLMv2, signing
 * (required), FSCTL_QUERY_NETWORK_INTERFACE_INFO, then an RDMA channel
 * through smbd to an interface the server marks RDMA-capable, the
 * session bound to it, and file I/O through Buffer Descriptor V1 lists
 * (SMB2_CHANNEL_RDMA_V1 and SMB2_CHANNEL_RDMA_V1_INVALIDATE).
 *
 * It builds and parses every SMB2 and NTLMSSP message itself: nothing of
 * cifs, ksmbd or smbd's SMB side is used, only smbd's transport API
 * (include/smbd.h) and the kernel's crypto and socket calls.
 *
 * debugfs /sys/kernel/debug/smbd_smb2c/ctl takes one command:
 *   win LABEL TCPADDR RDMAADDR RDMAPORT USER PASSWORD SHARE [DIALECT]
 * DIALECT is 3.1.1 (the default, as Windows 11 negotiates: SHA-512
 * preauthentication integrity, the 3.1.1 key derivation, and the RDMA
 * transform capabilities offered, [MS-SMB2] 2.2.3.1.6) or 3.0.2;
 * and /sys/kernel/debug/smbd_smb2c/result has its lines: "ok NAME" or
 * "not ok NAME - why" for each step (NAME is LABEL/step), and one
 * "info iface IFINDEX v4|v6 ADDRESS CAPABILITY SPEED" line per entry the
 * server listed, for the guest plan to check per interface.
 *
 * Every step is bounded: a watchdog shuts both connections down when the
 * command runs past SC_DEADLINE_S, so a silent server fails the checks
 * instead of hanging the plan.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <crypto/hash.h>
#include <linux/inet.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/net.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/uio.h>
#include <linux/unaligned.h>
#include <linux/workqueue.h>
#include <net/net_namespace.h>
#include <net/sock.h>

#include "smbd.h"
#include "../include/smbd_testbuf.h"
#include "../include/smbd_testctl.h"

#define SC_OUT_MAX	(32 << 10)
#define SC_MSG_MAX	(128 << 10)	/* largest message either way */
#define SC_DEADLINE_S	240
#define SC_CREDITS	256		/* CreditRequest of every request */
#define SC_DESC_MAX	(U16_MAX / SMBD_BUF_DESC_LEN)	/* 4,095 */
#define SC_REG_DESC	64		/* descriptors one registration gives */
/* The WRITE: 4,095 descriptors of 1,025 bytes (4,197,375 bytes). */
#define SC_BIG_UNIT	1025
#define SC_BUF_SIZE	(SC_DESC_MAX * SC_BIG_UNIT + PAGE_SIZE)
#define SC_CANARY	0x5c

/* [MS-SMB2] 2.2.1.2: the SMB2 header (sync form), 64 bytes. */
#define H_PROTO		0
#define H_SIZE		4
#define H_CHARGE	6
#define H_STATUS	8
#define H_CMD		12
#define H_CREDIT	14
#define H_FLAGS		16
#define H_NEXT		20
#define H_MID		24
#define H_PID		32
#define H_TID		36
#define H_SID		40
#define H_SIG		48
#define H_LEN		64

#define FL_RESPONSE	0x1
#define FL_ASYNC	0x2
#define FL_SIGNED	0x8

enum {
	C_NEGOTIATE = 0, C_SESSION_SETUP, C_LOGOFF, C_TREE_CONNECT,
	C_TREE_DISCONNECT, C_CREATE, C_CLOSE, C_FLUSH, C_READ, C_WRITE,
	C_LOCK, C_IOCTL, C_CANCEL, C_ECHO
};

#define ST_SUCCESS		0x00000000
#define ST_PENDING		0x00000103
#define ST_MORE_PROCESSING	0xc0000016
#define ST_INVALID_PARAMETER	0xc000000d
#define ST_INVALID_SIGNATURE	0xc000a000
#define ST_END_OF_FILE		0xc0000011

#define D_SMB302	0x0302
#define D_SMB311	0x0311
#define ST_NO_PREAUTH_OVERLAP	0xc05d0000
#define CAP_MULTI_CHANNEL	0x08
/*
 * Signing enabled and required, as a client that requires it: ksmbd signs
 * the final SESSION_SETUP answer of an SMB 3.0.x session only then.
 */
#define SEC_SIGNING		0x03
#define SESS_FLAG_BINDING	0x01
/* [MS-SMB2] 2.2.3.1: negotiate context types, and what smb2c offers */
#define CTX_PREAUTH		0x0001
#define CTX_ENCRYPTION		0x0002
#define CTX_RDMA_XFORM		0x0007
#define CTX_SIGNING		0x0008
#define PREAUTH_SHA512		0x0001
#define SIGN_CMAC		0x0001
#define SIGN_GMAC		0x0002
#define XFORM_NONE		0x0000
#define XFORM_ENCRYPTION	0x0001
#define XFORM_SIGNING		0x0002
#define CIPHER_AES128_CCM	0x0001	/* 2.2.3.1.2 (GCM: 0x0002, 0x0004) */
#define CIPHER_AES256_CCM	0x0003
#define SC_HASH_LEN		64		/* SHA-512 */
#define SC_XFORM_MAX		4		/* transform ids kept */
#define CH_RDMA_V1		1
#define CH_RDMA_V1_INVALIDATE	2
#define CH_RDMA_TRANSFORM	3
/*
 * [MS-SMB2] 2.2.43, 2.2.43.1: SMB2_RDMA_TRANSFORM (16 bytes) and one
 * signing SMB2_RDMA_CRYPTO_TRANSFORM (8 bytes and a 16-byte AES-CMAC
 * signature, no nonce): 40 bytes, the descriptors 8-byte aligned after.
 */
#define XF_LEN			16
#define XF_CRYPTO_LEN		(8 + 16)
#define XF_SIGN_LEN		(XF_LEN + XF_CRYPTO_LEN)
#define XF_TYPE_SIGNING		2
#define READ_FLAG_XFORM		0x1	/* SMB2_READFLAG_RESPONSE_RDMA_TRANSFORM */
#define FSCTL_QUERY_NETWORK_INTERFACE_INFO	0x001401fc
#define IFACE_RSS	0x1
#define IFACE_RDMA	0x2
#define IFACE_LEN	152
#define SC_IFACE_MAX	256		/* entries parsed at most */

/* [MS-NLMP] 2.2.2.5 */
#define NTLM_FLAGS	(0x00000001 /* UNICODE */ | 0x00000004 /* REQUEST_TARGET */ | \
			 0x00000200 /* NTLM */ | 0x00008000 /* ALWAYS_SIGN */ | \
			 0x00080000 /* EXTENDED_SESSIONSECURITY */ | \
			 0x00800000 /* TARGET_INFO */ | 0x20000000 /* 128 */ | \
			 0x80000000 /* 56 */)
#define NTLM_DOMAIN	"WORKGROUP"
#define NTLM_HOST	"SMBDTEST"

struct sc_conn {
	const char *what;		/* "tcp" or "rdma" */
	struct socket *tcp;
	struct smbd_sock *sk;
	u64 mid;			/* next MessageId */
	u32 credits;			/* granted, not yet spent */
	bool sign;
	u8 key[16];			/* its signing key, when @sign */
	struct smbd_recv_info rinfo;	/* of the last message (rdma) */
	u32 rlen;			/* length of the last message */
	u32 max_write;			/* the server's MaxWriteSize */
	u16 dialect;			/* negotiated */
	/* 3.1.1 ([MS-SMB2] 3.2.5.2): what the NEGOTIATE answer chose */
	u8 preauth[SC_HASH_LEN];	/* Connection.PreauthIntegrityHashValue */
	u16 cipher, sign_alg;		/* 0: no such context answered */
	bool xform_answered;		/* an RDMA transform context came */
	u8 nr_xform;			/* Connection.RDMATransformIds */
	u16 xform[SC_XFORM_MAX];
};

/* True when @c negotiated the RDMA transform @id and signs. */
static bool sc_xform(const struct sc_conn *c, u16 id)
{
	int i;

	for (i = 0; i < c->nr_xform; i++)
		if (c->xform[i] == id)
			return c->sign;
	return false;
}

/*
 * [MS-SMB2] 3.2.4.7: a WRITE's SMB2_RDMA_TRANSFORM at @at with one
 * signing transform carrying @sig; @dlen bytes of descriptors of channel
 * @inner follow at XF_SIGN_LEN.
 */
static void sc_xform_put(u8 *at, u32 dlen, u32 inner, const u8 sig[16])
{
	memset(at, 0, XF_SIGN_LEN);
	put_unaligned_le16(XF_SIGN_LEN, at);
	put_unaligned_le16(dlen, at + 2);
	put_unaligned_le32(inner, at + 4);
	put_unaligned_le16(1, at + 8);
	put_unaligned_le16(XF_TYPE_SIGNING, at + XF_LEN);
	put_unaligned_le16(16, at + XF_LEN + 2);
	memcpy(at + XF_LEN + 8, sig, 16);
}

struct sc_run {
	const char *label;
	struct sockaddr_storage tcp_dst, rdma_dst;
	const char *tcp_host, *user, *pass, *share;
	u16 dialect;			/* the one asked for: 3.0.2 or 3.1.1 */
	u8 guid[16];
	u64 sid;
	u8 sess_sign[16];		/* Session.SigningKey */
	u32 tid;
	u8 fid[16];
	u32 max_rw;
	struct sc_conn tcp, rdma;
	u8 *tx, *rx;
	struct testbuf buf;
	u64 seed;
	u32 xf_verified;		/* READ payloads checked by signature */
	struct mutex lock;		/* the sockets against the watchdog */
	struct delayed_work watchdog;
	bool expired;
};

static struct testctl sc_ctl;
#define sc_info(fmt, ...) testctl_info(&sc_ctl.out, fmt, ##__VA_ARGS__)

static __printf(4, 5) bool sc_check(struct sc_run *r, bool ok,
				    const char *name, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ok = testctl_vcheck(&sc_ctl.out, ok, r->label, name, fmt, ap);
	va_end(ap);
	return ok;
}

/* ---- MD4 ([RFC1320]), for the NT hash; the kernel's crypto has none ---- */

static void sc_md4_block(u32 h[4], const u8 *p)
{
	static const u8 r2[16] = { 0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14,
				   3, 7, 11, 15 };
	static const u8 r3[16] = { 0, 8, 4, 12, 2, 10, 6, 14, 1, 9, 5, 13,
				   3, 11, 7, 15 };
	static const u8 s[3][4] = { { 3, 7, 11, 19 }, { 3, 5, 9, 13 },
				    { 3, 9, 11, 15 } };
	u32 x[16], a = h[0], b = h[1], c = h[2], d = h[3], f, t;
	int i, k;

	for (i = 0; i < 16; i++)
		x[i] = get_unaligned_le32(p + 4 * i);
	for (i = 0; i < 48; i++) {
		if (i < 16) {
			f = (b & c) | (~b & d);
			k = i;
		} else if (i < 32) {
			f = ((b & c) | (b & d) | (c & d)) + 0x5a827999;
			k = r2[i - 16];
		} else {
			f = (b ^ c ^ d) + 0x6ed9eba1;
			k = r3[i - 32];
		}
		t = rol32(a + f + x[k], s[i / 16][i % 4]);
		a = d;
		d = c;
		c = b;
		b = t;
	}
	h[0] += a;
	h[1] += b;
	h[2] += c;
	h[3] += d;
}

static void sc_md4(const u8 *msg, size_t len, u8 out[16])
{
	u32 h[4] = { 0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476 };
	u8 tail[128] = {};
	size_t full = len & ~63UL, n = len - full, tl;
	int i;

	for (i = 0; i < full; i += 64)
		sc_md4_block(h, msg + i);
	memcpy(tail, msg + full, n);
	tail[n] = 0x80;
	tl = n + 9 > 64 ? 128 : 64;
	put_unaligned_le64((u64)len * 8, tail + tl - 8);
	for (i = 0; i < tl; i += 64)
		sc_md4_block(h, tail + i);
	for (i = 0; i < 4; i++)
		put_unaligned_le32(h[i], out + 4 * i);
}

/* ---- hashes through the crypto API ---- */

/* @alg keyed with @key (NULL: none) over @n parts: its digest in @out */
static int sc_hash(const char *alg, const u8 *key, unsigned int klen,
		   const struct kvec *parts, int n, u8 *out)
{
	struct crypto_shash *tfm;
	int i, err;

	tfm = crypto_alloc_shash(alg, 0, 0);
	if (IS_ERR(tfm))
		return PTR_ERR(tfm);
	{
		SHASH_DESC_ON_STACK(desc, tfm);

		desc->tfm = tfm;
		err = key ? crypto_shash_setkey(tfm, key, klen) : 0;
		err = err ?: crypto_shash_init(desc);
		for (i = 0; i < n && !err; i++)
			err = crypto_shash_update(desc, parts[i].iov_base,
						  parts[i].iov_len);
		err = err ?: crypto_shash_final(desc, out);
		shash_desc_zero(desc);
	}
	crypto_free_shash(tfm);
	return err;
}

static int sc_hmac_md5(const u8 *key, const void *a, size_t alen,
		       const void *b, size_t blen, u8 out[16])
{
	struct kvec p[2] = { { (void *)a, alen }, { (void *)b, blen } };

	return sc_hash("hmac(md5)", key, 16, p, b ? 2 : 1, out);
}

/*
 * [MS-SMB2] 3.1.4.2: SP800-108 counter mode, HMAC-SHA256, one round,
 * L = 128. The signing key from a session key: for 3.0.x the label
 * "SMB2AESCMAC" and the context "SmbSign"; for 3.1.1 the label
 * "SMBSigningKey" and the context @preauth, the session's (or, binding,
 * the channel's) preauthentication integrity hash (3.2.5.3.1).
 */
static int sc_signing_key(const u8 session_key[16], const u8 *preauth,
			  u8 out[16])
{
	static const u8 one[4] = { 0, 0, 0, 1 }, zero[1] = { 0 };
	static const u8 l128[4] = { 0, 0, 0, 128 };
	struct kvec p[5] = {
		{ (void *)one, 4 }, { "SMB2AESCMAC", 12 }, { (void *)zero, 1 },
		{ "SmbSign", 8 }, { (void *)l128, 4 },
	};
	u8 full[32];
	int err;

	if (preauth) {
		p[1] = (struct kvec){ "SMBSigningKey", 14 };
		p[3] = (struct kvec){ (void *)preauth, SC_HASH_LEN };
	}
	err = sc_hash("hmac(sha256)", session_key, 16, p, 5, full);
	memcpy(out, full, 16);
	memzero_explicit(full, sizeof(full));
	return err;
}

/*
 * [MS-SMB2] 3.2.4.2.2.2, 3.2.5.2: @hash = SHA-512(@hash || @msg), the
 * preauthentication integrity hash carried over one more message.
 */
static int sc_preauth(u8 hash[SC_HASH_LEN], const u8 *msg, u32 len)
{
	struct kvec p[2] = { { hash, SC_HASH_LEN }, { (void *)msg, len } };

	return sc_hash("sha512", NULL, 0, p, 2, hash);
}

/* AES-128-CMAC of @len bytes at @buf (an RDMA payload, 3.1.4.1) */
static int sc_cmac_raw(const u8 key[16], const void *buf, size_t len,
		       u8 out[16])
{
	struct kvec p = { (void *)buf, len };

	return sc_hash("cmac(aes)", key, 16, &p, 1, out);
}

/* [MS-SMB2] 3.1.4.1: AES-128-CMAC of @msg with its Signature zeroed. */
static int sc_cmac(const u8 key[16], u8 *msg, u32 len, u8 out[16])
{
	u8 saved[16];
	int err;

	memcpy(saved, msg + H_SIG, 16);
	memset(msg + H_SIG, 0, 16);
	err = sc_cmac_raw(key, msg, len, out);
	memcpy(msg + H_SIG, saved, 16);
	return err;
}

static int sc_sign(const u8 key[16], u8 *msg, u32 len)
{
	u8 mac[16];
	int err;

	put_unaligned_le32(get_unaligned_le32(msg + H_FLAGS) | FL_SIGNED,
			   msg + H_FLAGS);
	err = sc_cmac(key, msg, len, mac);
	if (!err)
		memcpy(msg + H_SIG, mac, 16);
	return err;
}

/* 0 when @msg is signed with @key; -ENOMSG unsigned, -EBADMSG wrongly. */
static int sc_verify(const u8 key[16], u8 *msg, u32 len)
{
	u8 mac[16];
	int err;

	if (!(get_unaligned_le32(msg + H_FLAGS) & FL_SIGNED))
		return -ENOMSG;
	err = sc_cmac(key, msg, len, mac);
	if (err)
		return err;
	return memcmp(mac, msg + H_SIG, 16) ? -EBADMSG : 0;
}

/*
 * True when @msg's Signature is the MAC of a 4-byte Direct TCP length
 * field (0 or the message's) and the message: a server that signed its
 * TCP framing along with the message.
 */
static bool sc_prefixed(const u8 key[16], u8 *msg, u32 len)
{
	__be32 pre[2] = { 0, cpu_to_be32(len) };
	struct kvec p[2] = { { NULL, 4 }, { msg, len } };
	u8 saved[16], mac[16];
	bool same = false;
	int i;

	memcpy(saved, msg + H_SIG, 16);
	memset(msg + H_SIG, 0, 16);
	for (i = 0; i < 2 && !same; i++) {
		p[0].iov_base = &pre[i];
		same = !sc_hash("cmac(aes)", key, 16, p, 2, mac) &&
		       !memcmp(mac, saved, 16);
	}
	memcpy(msg + H_SIG, saved, 16);
	return same;
}

/* ASCII @s as UTF-16LE at @out, upper-cased with @upper: its length */
static u32 sc_utf16(u8 *out, const char *s, bool upper)
{
	u32 n = 0;

	for (; *s; s++, n += 2)
		put_unaligned_le16(upper ? toupper(*s) : *s, out + n);
	return n;
}

/* ---- transports: TCP (a 4-byte length first) and smbd ---- */

static int sc_tcp_io(struct socket *s, void *buf, u32 len, bool send)
{
	struct msghdr mh = { .msg_flags = send ? MSG_NOSIGNAL : MSG_WAITALL };
	struct kvec kv;
	int n;

	while (len) {
		kv.iov_base = buf;
		kv.iov_len = len;
		n = send ? kernel_sendmsg(s, &mh, &kv, 1, len) :
			   kernel_recvmsg(s, &mh, &kv, 1, len, MSG_WAITALL);
		if (n <= 0)
			return n ?: -ECONNRESET;
		buf += n;
		len -= n;
	}
	return 0;
}

static int sc_send(struct sc_conn *c, u8 *msg, u32 len)
{
	struct kvec kv = { msg, len };
	struct iov_iter it;
	__be32 nb;
	ssize_t n;
	int err;

	if (c->tcp) {
		nb = cpu_to_be32(len);
		err = sc_tcp_io(c->tcp, &nb, 4, true);
		return err ?: sc_tcp_io(c->tcp, msg, len, true);
	}
	iov_iter_kvec(&it, ITER_SOURCE, &kv, 1, len);
	n = smbd_sock_send(c->sk, &it, 0);
	if (n < 0)
		return n;
	return n == len ? 0 : -EIO;
}

static int sc_recv(struct sc_conn *c, u8 *buf)
{
	struct kvec kv = { buf, SC_MSG_MAX };
	struct iov_iter it;
	__be32 nb;
	ssize_t n;
	u32 len;
	int err;

	memset(&c->rinfo, 0, sizeof(c->rinfo));
	if (c->tcp) {
		err = sc_tcp_io(c->tcp, &nb, 4, false);
		if (err)
			return err;
		len = be32_to_cpu(nb) & 0xffffff;
		if (len > SC_MSG_MAX)
			return -EMSGSIZE;
		err = sc_tcp_io(c->tcp, buf, len, false);
		c->rlen = len;
		return err;
	}
	iov_iter_kvec(&it, ITER_DEST, &kv, 1, SC_MSG_MAX);
	n = smbd_sock_recv(c->sk, &it, 0, &c->rinfo);
	if (n < 0)
		return n;
	c->rlen = n;
	return 0;
}

/*
 * Fill the header of the request in r->tx for @c: @cmd, the session and
 * tree ids of the run, a MessageId later.
 */
static u8 *sc_req(struct sc_run *r, u16 cmd, u32 body_len)
{
	u8 *h = r->tx;

	memset(h, 0, H_LEN + body_len);
	memcpy(h + H_PROTO, "\xfeSMB", 4);
	put_unaligned_le16(64, h + H_SIZE);
	put_unaligned_le16(cmd, h + H_CMD);
	put_unaligned_le16(SC_CREDITS, h + H_CREDIT);
	put_unaligned_le32(0xfeff, h + H_PID);
	put_unaligned_le32(r->tid, h + H_TID);
	put_unaligned_le64(r->sid, h + H_SID);
	return h + H_LEN;
}

/*
 * Send the request in r->tx (@len bytes, @charge credits) on @c, signed
 * with @key (NULL: @c's key if it signs, else unsigned), and receive its
 * final answer into r->rx (interim STATUS_PENDING answers skipped). The
 * answer to a signed request must be signed with the same key, except a
 * SESSION_SETUP's, which the caller checks. Returns the NT status in
 * @status, or a negative errno.
 */
static int sc_call(struct sc_run *r, struct sc_conn *c, u32 len, u16 charge,
		   const u8 *key, u32 *status)
{
	u16 cmd = get_unaligned_le16(r->tx + H_CMD), spend = max_t(u16, charge, 1);
	u64 mid = c->mid;
	u8 *h = r->rx;
	int err;

	*status = 0;
	if (!key && c->sign)
		key = c->key;
	if (c->credits < spend)
		return -ENOSPC;
	put_unaligned_le16(charge, r->tx + H_CHARGE);
	put_unaligned_le64(mid, r->tx + H_MID);
	c->mid += spend;
	c->credits -= spend;
	if (key) {
		err = sc_sign(key, r->tx, len);
		if (err)
			return err;
	}
	err = sc_send(c, r->tx, len);
	if (err)
		return err;
	for (;;) {
		err = sc_recv(c, h);
		if (err)
			return err;
		/* the shortest answer: LOGOFF's and ECHO's, 4 bytes */
		if (c->rlen < H_LEN + 4 || memcmp(h, "\xfeSMB", 4) ||
		    !(get_unaligned_le32(h + H_FLAGS) & FL_RESPONSE) ||
		    get_unaligned_le16(h + H_CMD) != cmd ||
		    get_unaligned_le64(h + H_MID) != mid) {
			pr_info("%s: %s: answer to command %u mid %llu: %u bytes, command %u, mid %llu, status %#x\n",
				r->label, c->what, cmd, mid, c->rlen,
				get_unaligned_le16(h + H_CMD),
				get_unaligned_le64(h + H_MID),
				get_unaligned_le32(h + H_STATUS));
			return -EPROTO;
		}
		c->credits += get_unaligned_le16(h + H_CREDIT);
		*status = get_unaligned_le32(h + H_STATUS);
		if (*status == ST_PENDING &&
		    (get_unaligned_le32(h + H_FLAGS) & FL_ASYNC))
			continue;
		break;
	}
	if (key && cmd != C_SESSION_SETUP) {
		err = sc_verify(key, h, c->rlen);
		if (err)
			pr_info("%s: %s: answer to command %u (%u bytes, status %#x, flags %#x) not signed right: %d%s\n",
				r->label, c->what, cmd, c->rlen, *status,
				get_unaligned_le32(h + H_FLAGS), err,
				err == -EBADMSG && sc_prefixed(key, h, c->rlen) ?
				"; it is the MAC of the message after its 4-byte TCP length" : "");
		return err;
	}
	return 0;
}

/* Echo until @c holds @need credits (the server grants some each time). */
static int sc_credits(struct sc_run *r, struct sc_conn *c, u32 need)
{
	int i, err = 0;
	u32 st;

	for (i = 0; i < 16 && c->credits < need && !err; i++) {
		put_unaligned_le16(4, sc_req(r, C_ECHO, 4));
		err = sc_call(r, c, H_LEN + 4, 1, NULL, &st);
		if (!err && st)
			err = -EREMOTEIO;
	}
	return err ?: (c->credits < need ? -ENOSPC : 0);
}

/* ---- SMB2 commands ---- */

/* One negotiate context at @at ([MS-SMB2] 2.2.3.1): its length, padded. */
static u32 sc_ctx(u8 *at, u16 type, const void *data, u16 len)
{
	put_unaligned_le16(type, at);
	put_unaligned_le16(len, at + 2);
	memcpy(at + 8, data, len);
	return ALIGN(8 + len, 8);
}

/*
 * [MS-SMB2] 3.2.5.2: the contexts of a 3.1.1 NEGOTIATE answer (@b its
 * body, the whole answer r->rx). Returns 0, or a negative errno with
 * @why filled: a context out of the answer, no or two preauthentication
 * contexts, an algorithm not offered, two RDMA transform contexts, one
 * shorter than its ids or with an id smb2c did not offer.
 */
static int sc_neg_contexts(struct sc_run *r, struct sc_conn *c, const u8 *b,
			   char *why, size_t wlen)
{
	u32 off = get_unaligned_le32(b + 60), n = get_unaligned_le16(b + 6);
	u32 i, k, type, dlen, npre = 0, nx = 0, cnt;
	const u8 *d;

	for (i = 0; i < n; i++, off = ALIGN(off + 8 + dlen, 8)) {
		if (off > c->rlen || c->rlen - off < 8) {
			snprintf(why, wlen, "context %u of %u out of the answer", i, n);
			return -EPROTO;
		}
		type = get_unaligned_le16(r->rx + off);
		dlen = get_unaligned_le16(r->rx + off + 2);
		d = r->rx + off + 8;
		if (dlen > c->rlen - off - 8) {
			snprintf(why, wlen, "context %#x of %u bytes out of the answer",
				 type, dlen);
			return -EPROTO;
		}
		switch (type) {
		case CTX_PREAUTH:
			npre++;
			if (dlen < 6 || get_unaligned_le16(d) != 1 ||
			    get_unaligned_le16(d + 4) != PREAUTH_SHA512) {
				snprintf(why, wlen, "preauthentication context not SHA-512");
				return -EPROTO;
			}
			break;
		case CTX_ENCRYPTION:
			if (dlen >= 4 && get_unaligned_le16(d) == 1)
				c->cipher = get_unaligned_le16(d + 2);
			break;
		case CTX_SIGNING:
			if (dlen < 4 || get_unaligned_le16(d) != 1) {
				snprintf(why, wlen, "signing context of %u bytes", dlen);
				return -EPROTO;
			}
			c->sign_alg = get_unaligned_le16(d + 2);
			break;
		case CTX_RDMA_XFORM:
			cnt = dlen >= 8 ? get_unaligned_le16(d) : 0;
			if (nx++ || dlen < 8 || !cnt || dlen < 8 + 2 * cnt ||
			    cnt > SC_XFORM_MAX) {
				snprintf(why, wlen,
					 "RDMA transform context: %u of them, %u bytes, count %u",
					 nx, dlen, cnt);
				return -EPROTO;
			}
			c->xform_answered = true;
			for (k = 0; k < cnt; k++) {
				type = get_unaligned_le16(d + 8 + 2 * k);
				if (type > XFORM_SIGNING) {
					snprintf(why, wlen, "RDMA transform %#x not offered",
						 type);
					return -EPROTO;
				}
				/* 2.2.4.1.6: NONE alone means none in common */
				if (type != XFORM_NONE)
					c->xform[c->nr_xform++] = type;
			}
			break;
		}
	}
	if (npre != 1) {
		snprintf(why, wlen, "%u preauthentication contexts", npre);
		return -EPROTO;
	}
	/* smb2c signs with AES-CMAC only; it did offer AES-GMAC */
	if (c->sign_alg && c->sign_alg != SIGN_CMAC) {
		snprintf(why, wlen, "signing algorithm %#x chosen, smb2c has AES-CMAC only",
			 c->sign_alg);
		return -EOPNOTSUPP;
	}
	return 0;
}

/* NEGOTIATEs whose RDMA transform context the server must refuse */
enum sc_neg_bad {
	NB_NONE,
	NB_TWO,		/* a second RDMA transform context */
	NB_COUNT0,	/* TransformCount 0 */
	NB_SHORT,	/* DataLength 4, shorter than the context's fields */
	NB_NR
};

/*
 * [MS-SMB2] 2.2.3, 3.2.4.2.2.2: multichannel, signing enabled, and the
 * dialect of the run. For 3.1.1 the contexts Windows 11 sends (<137>):
 * SHA-512 preauthentication with a 32-byte salt, the four AES ciphers,
 * AES-GMAC and AES-CMAC signing, and the RDMA transforms ENCRYPTION and
 * SIGNING; the connection's preauthentication hash carried over both
 * messages. With @bad (3.1.1), the transform context malformed as it
 * says: 0 when the server refuses it with STATUS_INVALID_PARAMETER
 * (3.3.5.4).
 */
static int sc_negotiate(struct sc_run *r, struct sc_conn *c,
			enum sc_neg_bad bad, u16 *dialect, u32 *caps,
			char *why, size_t wlen)
{
	static const u8 ciphers[] = { 4, 0, 2, 0, 1, 0, 4, 0, 3, 0 };
	static const u8 signing[] = { 2, 0, 2, 0, 1, 0 };
	static const u8 xform[] = { 2, 0, 0, 0, 0, 0, 0, 0, 1, 0, 2, 0 };
	static const u8 xform0[] = { 0, 0, 0, 0, 0, 0, 0, 0 };
	bool v311 = r->dialect == D_SMB311;
	u8 pre[38] = { 1, 0, 32, 0, 1, 0 };
	u32 st, len = 38, at, xlen = sizeof(xform);
	const u8 *x = xform;
	u8 *b;
	int err;

	b = sc_req(r, C_NEGOTIATE, v311 ? 40 + 4 * 64 : 38);
	put_unaligned_le16(36, b);
	put_unaligned_le16(1, b + 2);
	put_unaligned_le16(SEC_SIGNING, b + 4);
	put_unaligned_le32(CAP_MULTI_CHANNEL, b + 8);
	memcpy(b + 12, r->guid, 16);
	put_unaligned_le16(D_SMB302, b + 36);
	if (v311) {
		put_unaligned_le16(2, b + 2);
		put_unaligned_le16(D_SMB311, b + 38);
		at = H_LEN + 40;
		put_unaligned_le32(at, b + 28);
		put_unaligned_le16(4, b + 32);
		get_random_bytes(pre + 6, 32);
		at += sc_ctx(r->tx + at, CTX_PREAUTH, pre, sizeof(pre));
		at += sc_ctx(r->tx + at, CTX_ENCRYPTION, ciphers, sizeof(ciphers));
		at += sc_ctx(r->tx + at, CTX_SIGNING, signing, sizeof(signing));
		if (bad == NB_TWO) {
			at += sc_ctx(r->tx + at, CTX_RDMA_XFORM, xform,
				     sizeof(xform));
			put_unaligned_le16(5, b + 32);
		} else if (bad == NB_COUNT0) {
			x = xform0;
			xlen = sizeof(xform0);
		} else if (bad == NB_SHORT) {
			xlen = 4;
		}
		/* the last context unpadded: the request ends with it */
		at += 8 + xlen;
		sc_ctx(r->tx + at - 8 - xlen, CTX_RDMA_XFORM, x, xlen);
		len = at - H_LEN;
	}
	c->credits = 1;
	err = sc_call(r, c, H_LEN + len, 0, NULL, &st);
	if (bad) {
		snprintf(why, wlen, "error %d, status %#x (want %#x)", err, st,
			 ST_INVALID_PARAMETER);
		return !err && st == ST_INVALID_PARAMETER ? 0 : -EPROTO;
	}
	if (err || st || c->rlen < H_LEN + 64) {
		snprintf(why, wlen, "error %d, status %#x, %u bytes", err, st,
			 c->rlen);
		return err ?: -EREMOTEIO;
	}
	b = r->rx + H_LEN;
	*dialect = get_unaligned_le16(b + 4);
	*caps = get_unaligned_le32(b + 24);
	c->max_write = get_unaligned_le32(b + 36);
	c->dialect = *dialect;
	if (*dialect != D_SMB311)
		return 0;
	memset(c->preauth, 0, SC_HASH_LEN);
	err = sc_preauth(c->preauth, r->tx, H_LEN + len);
	err = err ?: sc_preauth(c->preauth, r->rx, c->rlen);
	if (err) {
		snprintf(why, wlen, "SHA-512: %d", err);
		return err;
	}
	return sc_neg_contexts(r, c, b, why, wlen);
}

/* The security buffer of the SESSION_SETUP answer in r->rx. */
static u8 *sc_sess_blob(struct sc_run *r, struct sc_conn *c, u32 *len)
{
	u8 *b = r->rx + H_LEN;
	u32 off = get_unaligned_le16(b + 4);

	if (c->rlen < H_LEN + 8)
		return NULL;
	*len = get_unaligned_le16(b + 6);
	if (off < H_LEN + 8 || off + *len > c->rlen)
		return NULL;
	return r->rx + off;
}

/* An NTLMSSP payload field at @at ([MS-NLMP] 2.2.1.3): @len bytes at @off. */
static void sc_ntlm_field(u8 *msg, u32 at, u32 len, u32 off)
{
	put_unaligned_le16(len, msg + at);
	put_unaligned_le16(len, msg + at + 2);
	put_unaligned_le32(off, msg + at + 4);
}

/*
 * [MS-NLMP] 3.1.5.1.2, 3.3.2: the AUTHENTICATE_MESSAGE answering the
 * CHALLENGE_MESSAGE @ch (@chlen bytes), NTLMv2, into @out; the session
 * key in @skey. Returns its length or a negative errno.
 */
static int sc_ntlm_auth(struct sc_run *r, const u8 *ch, u32 chlen, u8 *out,
			u32 room, u8 skey[16])
{
	u32 ti_len, ti_off, blob_len, pos, ulen, dlen, hlen, nt_len;
	u8 nthash[16], owf[16], proof[16], *pw, *who, *blob;
	int err;

	if (chlen < 48 || memcmp(ch, "NTLMSSP", 8) ||
	    get_unaligned_le32(ch + 8) != 2)
		return -EPROTO;
	ti_len = get_unaligned_le16(ch + 40);
	ti_off = get_unaligned_le32(ch + 44);
	if (ti_off > chlen || ti_len > chlen - ti_off)
		return -EPROTO;
	blob_len = 28 + ti_len + 4;
	nt_len = 16 + blob_len;
	if (64 + 24 + nt_len + 2 * (strlen(NTLM_DOMAIN) + strlen(r->user) +
				    strlen(NTLM_HOST)) > room)
		return -E2BIG;

	/* NTOWFv2: HMAC-MD5 keyed with MD4(UTF-16(password)) */
	pw = kmalloc(2 * strlen(r->pass) + 2 * strlen(r->user) +
		     2 * strlen(NTLM_DOMAIN) + 2, GFP_KERNEL);
	if (!pw)
		return -ENOMEM;
	sc_md4(pw, sc_utf16(pw, r->pass, false), nthash);
	who = pw;
	hlen = sc_utf16(who, r->user, true);
	hlen += sc_utf16(who + hlen, NTLM_DOMAIN, false);
	err = sc_hmac_md5(nthash, who, hlen, NULL, 0, owf);
	kfree(pw);
	if (err)
		return err;

	/* the fixed part, then LM (24 zeros), NT, domain, user, host */
	memset(out, 0, 64 + 24 + nt_len);
	memcpy(out, "NTLMSSP", 8);
	put_unaligned_le32(3, out + 8);
	pos = 64;
	sc_ntlm_field(out, 12, 24, pos);
	pos += 24;
	sc_ntlm_field(out, 20, nt_len, pos);
	blob = out + pos + 16;
	blob[0] = 1;
	blob[1] = 1;
	put_unaligned_le64(div_u64(ktime_get_real_ns(), 100) +
			   116444736000000000ULL, blob + 8);
	get_random_bytes(blob + 16, 8);
	memcpy(blob + 28, ch + ti_off, ti_len);
	err = sc_hmac_md5(owf, ch + 24, 8, blob, blob_len, proof);
	if (err)
		return err;
	memcpy(out + pos, proof, 16);
	err = sc_hmac_md5(owf, proof, 16, NULL, 0, skey);
	if (err)
		return err;
	pos += nt_len;
	dlen = sc_utf16(out + pos, NTLM_DOMAIN, false);
	sc_ntlm_field(out, 28, dlen, pos);
	pos += dlen;
	ulen = sc_utf16(out + pos, r->user, false);
	sc_ntlm_field(out, 36, ulen, pos);
	pos += ulen;
	hlen = sc_utf16(out + pos, NTLM_HOST, false);
	sc_ntlm_field(out, 44, hlen, pos);
	pos += hlen;
	sc_ntlm_field(out, 52, 0, pos);		/* no session key */
	put_unaligned_le32(NTLM_FLAGS, out + 60);
	memzero_explicit(owf, sizeof(owf));
	memzero_explicit(nthash, sizeof(nthash));
	return pos;
}

/*
 * [MS-SMB2] 3.2.4.2.3 and 3.2.5.3: NTLMSSP in two SESSION_SETUP rounds.
 * @binding: bind r->sid to @c ([MS-SMB2] 3.2.5.3.3): both requests
 * signed with Session.SigningKey. The signing key the exchange yields
 * (Session.SigningKey, or this channel's) goes to @key, checked against
 * the final answer's signature. In 3.1.1 the key's context is the
 * preauthentication hash of @c's NEGOTIATE exchange carried over both
 * requests and the first answer (3.2.5.3.1; binding, the channel's own).
 * @why says what failed.
 */
static int sc_session_setup(struct sc_run *r, struct sc_conn *c,
			    bool binding, u8 key[16], char *why, size_t wlen)
{
	bool v311 = c->dialect == D_SMB311;
	u8 *b, *blob, skey[16], hash[SC_HASH_LEN];
	u32 st, blen;
	int err, n;

	b = sc_req(r, C_SESSION_SETUP, 24 + 32);
	put_unaligned_le16(25, b);
	b[2] = binding ? SESS_FLAG_BINDING : 0;
	b[3] = SEC_SIGNING;
	put_unaligned_le16(H_LEN + 24, b + 12);
	put_unaligned_le16(32, b + 14);
	memcpy(b + 24, "NTLMSSP", 8);
	put_unaligned_le32(1, b + 32);
	put_unaligned_le32(NTLM_FLAGS, b + 36);
	err = sc_call(r, c, H_LEN + 24 + 32, 1, binding ? r->sess_sign : NULL,
		      &st);
	if (err || st != ST_MORE_PROCESSING) {
		snprintf(why, wlen, "NEGOTIATE_MESSAGE: error %d, status %#x",
			 err, st);
		return err ?: -EREMOTEIO;
	}
	if (v311) {
		memcpy(hash, c->preauth, SC_HASH_LEN);
		err = sc_preauth(hash, r->tx, H_LEN + 24 + 32);
		err = err ?: sc_preauth(hash, r->rx, c->rlen);
		if (err)
			return err;
	}
	if (!binding)
		r->sid = get_unaligned_le64(r->rx + H_SID);
	blob = sc_sess_blob(r, c, &blen);
	if (!blob) {
		snprintf(why, wlen, "CHALLENGE_MESSAGE outside the answer");
		return -EPROTO;
	}
	/* the challenge moves to r->tx's tail: r->rx is reused */
	if (blen > SC_MSG_MAX / 4) {
		snprintf(why, wlen, "CHALLENGE_MESSAGE of %u bytes", blen);
		return -EPROTO;
	}
	b = sc_req(r, C_SESSION_SETUP, 24);
	memcpy(r->tx + SC_MSG_MAX - blen, blob, blen);
	n = sc_ntlm_auth(r, r->tx + SC_MSG_MAX - blen, blen, b + 24,
			 SC_MSG_MAX / 2, skey);
	if (n < 0) {
		snprintf(why, wlen, "AUTHENTICATE_MESSAGE: %d", n);
		return n;
	}
	put_unaligned_le16(25, b);
	b[2] = binding ? SESS_FLAG_BINDING : 0;
	b[3] = SEC_SIGNING;
	put_unaligned_le16(H_LEN + 24, b + 12);
	put_unaligned_le16(n, b + 14);
	err = sc_call(r, c, H_LEN + 24 + n, 1, binding ? r->sess_sign : NULL,
		      &st);
	if (err || st) {
		snprintf(why, wlen, "AUTHENTICATE_MESSAGE answered: error %d, status %#x",
			 err, st);
		return err ?: -EREMOTEIO;
	}
	/* the request as sent (signed, when binding) */
	err = v311 ? sc_preauth(hash, r->tx, H_LEN + 24 + n) : 0;
	err = err ?: sc_signing_key(skey, v311 ? hash : NULL, key);
	memzero_explicit(skey, sizeof(skey));
	if (err)
		return err;
	/* [MS-SMB2] 3.3.5.5.3: the final answer is signed with that key */
	err = sc_verify(key, r->rx, c->rlen);
	if (err)
		snprintf(why, wlen, "final answer not signed with the %s signing key",
			 binding ? "channel's" : "session's");
	return err;
}

static int sc_tree_connect(struct sc_run *r, struct sc_conn *c)
{
	char path[160];
	u32 st, n;
	u8 *b;
	int err;

	snprintf(path, sizeof(path), "\\\\%s\\%s", r->tcp_host, r->share);
	b = sc_req(r, C_TREE_CONNECT, 8 + 2 * strlen(path));
	put_unaligned_le16(9, b);
	n = sc_utf16(b + 8, path, false);
	put_unaligned_le16(H_LEN + 8, b + 4);
	put_unaligned_le16(n, b + 6);
	err = sc_call(r, c, H_LEN + 8 + n, 1, NULL, &st);
	if (err)
		return err;
	if (st)
		return -EREMOTEIO;
	r->tid = get_unaligned_le32(r->rx + H_TID);
	return 0;
}

static int sc_create(struct sc_run *r, struct sc_conn *c, const char *name)
{
	u32 st, n;
	u8 *b;
	int err;

	b = sc_req(r, C_CREATE, 56 + 2 * strlen(name));
	put_unaligned_le16(57, b);
	put_unaligned_le32(2, b + 4);		/* Impersonation */
	/* FILE_READ_DATA, FILE_WRITE_DATA, FILE_READ_ATTRIBUTES, SYNCHRONIZE */
	put_unaligned_le32(0x00100083, b + 24);
	put_unaligned_le32(0x80, b + 28);	/* FILE_ATTRIBUTE_NORMAL */
	put_unaligned_le32(7, b + 32);		/* share read, write, delete */
	put_unaligned_le32(5, b + 36);		/* FILE_OVERWRITE_IF */
	put_unaligned_le32(0x40, b + 40);	/* FILE_NON_DIRECTORY_FILE */
	n = sc_utf16(b + 56, name, false);
	put_unaligned_le16(H_LEN + 56, b + 44);
	put_unaligned_le16(n, b + 46);
	err = sc_call(r, c, H_LEN + 56 + n, 1, NULL, &st);
	if (err)
		return err;
	if (st || c->rlen < H_LEN + 88)
		return -EREMOTEIO;
	memcpy(r->fid, r->rx + H_LEN + 64, 16);
	return 0;
}

static int sc_simple(struct sc_run *r, struct sc_conn *c, u16 cmd)
{
	u32 st, len = 4;
	u8 *b;
	int err;

	if (cmd == C_CLOSE) {
		b = sc_req(r, cmd, 24);
		put_unaligned_le16(24, b);
		memcpy(b + 8, r->fid, 16);
		len = 24;
	} else {
		put_unaligned_le16(4, sc_req(r, cmd, 4));
	}
	err = sc_call(r, c, H_LEN + len, 1, NULL, &st);
	return err ?: (st ? -EREMOTEIO : 0);
}

/*
 * [MS-SMB2] 2.2.31.4, 3.3.5.15.11: the server's interfaces, one info
 * line each; true when @want (the RDMA address asked for) is among them
 * marked RDMA-capable.
 */
static bool sc_interfaces(struct sc_run *r, struct sc_conn *c, int *nr,
			  char *why, size_t wlen)
{
	const struct sockaddr_in6 *want6 = (void *)&r->rdma_dst;
	const struct sockaddr_in *want = (void *)&r->rdma_dst;
	u32 st, off, cnt, pos = 0, next, cap;
	bool found = false;
	u8 *b, *e, *sa;
	int err;

	b = sc_req(r, C_IOCTL, 56);
	put_unaligned_le16(57, b);
	put_unaligned_le32(FSCTL_QUERY_NETWORK_INTERFACE_INFO, b + 4);
	memset(b + 8, 0xff, 16);
	put_unaligned_le32(H_LEN + 56, b + 24);
	put_unaligned_le32(H_LEN + 56, b + 36);
	put_unaligned_le32(SC_MSG_MAX / 2, b + 44);
	put_unaligned_le32(1, b + 48);		/* SMB2_0_IOCTL_IS_FSCTL */
	err = sc_call(r, c, H_LEN + 56, 1, NULL, &st);
	*nr = 0;
	if (err || st) {
		snprintf(why, wlen, "error %d, status %#x", err, st);
		return false;
	}
	if (c->rlen < H_LEN + 48) {
		snprintf(why, wlen, "answer of %u bytes", c->rlen);
		return false;
	}
	b = r->rx + H_LEN;
	off = get_unaligned_le32(b + 32);
	cnt = get_unaligned_le32(b + 36);
	if (off > c->rlen || cnt > c->rlen - off) {
		snprintf(why, wlen, "output %u bytes at %u, answer %u", cnt,
			 off, c->rlen);
		return false;
	}
	while (cnt - pos >= IFACE_LEN && *nr < SC_IFACE_MAX) {
		e = r->rx + off + pos;
		sa = e + 24;
		cap = get_unaligned_le32(e + 8);
		(*nr)++;
		if (get_unaligned_le16(sa) == 2) {
			sc_info("iface %u v4 %pI4 %u %llu",
				get_unaligned_le32(e + 4), sa + 4, cap,
				get_unaligned_le64(e + 16));
			if (want->sin_family == AF_INET &&
			    !memcmp(sa + 4, &want->sin_addr, 4) &&
			    (cap & IFACE_RDMA))
				found = true;
		} else if (get_unaligned_le16(sa) == 0x17) {
			sc_info("iface %u v6 %pI6c %u %llu",
				get_unaligned_le32(e + 4), sa + 8, cap,
				get_unaligned_le64(e + 16));
			if (want->sin_family == AF_INET6 &&
			    !memcmp(sa + 8, &want6->sin6_addr, 16) &&
			    (cap & IFACE_RDMA))
				found = true;
		}
		next = get_unaligned_le32(e);
		if (!next)
			break;
		if (next < IFACE_LEN || next > cnt - pos) {
			snprintf(why, wlen, "entry %d: Next %u, %u bytes left",
				 *nr, next, cnt - pos);
			return false;
		}
		pos += next;
	}
	if (!found)
		snprintf(why, wlen, "%pISc not listed RDMA-capable among %d entries",
			 &r->rdma_dst, *nr);
	return found;
}

/* ---- I/O through Buffer Descriptor V1 lists ---- */

static u8 sc_pat(u64 seed, size_t i)
{
	return (u8)((i * 2654435761U) >> 13) ^ (u8)(seed * 131) ^ (u8)(i >> 11);
}

/*
 * The registered descriptors @d[@nd] cut into at most @max pieces of
 * @unit bytes (a piece never crosses a registered descriptor; the last
 * of each is shorter). Returns the count; the bytes covered in @len.
 */
static u32 sc_cut(const struct smbd_buf_desc *d, int nd, u32 unit, u32 max,
		  struct smbd_buf_desc *out, size_t *len)
{
	u32 n = 0, off;
	int i;

	*len = 0;
	for (i = 0; i < nd && n < max; i++) {
		for (off = 0; off < d[i].length && n < max; n++) {
			out[n].offset = d[i].offset + off;
			out[n].token = d[i].token;
			out[n].length = min(unit, d[i].length - off);
			off += out[n].length;
			*len += out[n].length;
		}
	}
	return n;
}

/*
 * [MS-SMB2] 2.2.19, 2.2.21: a READ (@write false) or WRITE request in
 * r->tx on r->fid at file offset 0, through channel @ch, of @len bytes
 * (READ's Length, WRITE's RemainingBytes), with @clen bytes of channel
 * information right after the 48 fixed bytes, which it returns.
 */
static u8 *sc_rw_req(struct sc_run *r, bool write, u32 ch, u32 len, u32 clen)
{
	u8 *b = sc_req(r, write ? C_WRITE : C_READ, 48 + clen);

	put_unaligned_le16(49, b);
	memcpy(b + 16, r->fid, 16);
	/* the two share the 48 bytes, but for these fields' places */
	put_unaligned_le32(ch, b + (write ? 32 : 36));
	put_unaligned_le32(len, b + (write ? 36 : 4));
	put_unaligned_le16(H_LEN + 48, b + (write ? 40 : 44));
	put_unaligned_le16(clen, b + (write ? 42 : 46));
	return b;
}

/*
 * [MS-SMB2] 3.2.5.11: the answer in r->rx to a signed READ through an
 * RDMA channel on a connection that negotiated the signing transform:
 * SMB2_READFLAG_RESPONSE_RDMA_TRANSFORM, and in Buffer an
 * SMB2_RDMA_TRANSFORM (no channel) with exactly one signing transform of
 * a 16-byte signature, copied to @sig.
 */
static int sc_read_xform(struct sc_run *r, u8 sig[16], char *why,
			 size_t wlen)
{
	const u8 *b = r->rx + H_LEN, *x;
	u32 off = b[2], len = get_unaligned_le32(b + 4);

	if (!(get_unaligned_le32(b + 12) & READ_FLAG_XFORM) ||
	    len != XF_SIGN_LEN || off != H_LEN + 16 ||
	    r->rdma.rlen < off + len) {
		snprintf(why, wlen,
			 "READ answer without the signing transform: flags %#x, DataOffset %u, DataLength %u, %u bytes",
			 get_unaligned_le32(b + 12), off, len, r->rdma.rlen);
		return -EPROTO;
	}
	x = r->rx + off;
	if (get_unaligned_le16(x) || get_unaligned_le16(x + 2) ||
	    get_unaligned_le32(x + 4) || get_unaligned_le16(x + 8) != 1 ||
	    get_unaligned_le16(x + XF_LEN) != XF_TYPE_SIGNING ||
	    get_unaligned_le16(x + XF_LEN + 2) != 16 ||
	    get_unaligned_le16(x + XF_LEN + 4)) {
		snprintf(why, wlen, "READ answer's transform: %*ph", XF_SIGN_LEN - 16,
			 x);
		return -EPROTO;
	}
	memcpy(sig, x + XF_LEN + 8, 16);
	return 0;
}

/*
 * One SMB2 WRITE (@write) or READ on the RDMA channel of @len bytes at
 * file offset 0, through @k pieces of @unit bytes of a buffer at @boff;
 * @inv: SMB2_CHANNEL_RDMA_V1_INVALIDATE. Where the signing transform was
 * negotiated, as Windows 11 ([MS-SMB2] 3.2.4.7, 3.2.5.11): a WRITE goes
 * with SMB2_CHANNEL_RDMA_TRANSFORM, its data's signature and the
 * descriptors inside; a READ's answer must carry the signature of the
 * data the server wrote, checked once the buffer is deregistered (the
 * server can no longer change it). Fills @why on failure; the bytes
 * moved in @moved.
 */
static int sc_rdma_io(struct sc_run *r, bool write, size_t boff, size_t len,
		      u32 k, u32 unit, bool inv, size_t *moved, char *why,
		      size_t wlen)
{
	struct sc_conn *c = &r->rdma;
	struct smbd_buf_desc reg_d[SC_REG_DESC], *pc;
	bool xf = sc_xform(c, XFORM_SIGNING);
	u32 n, st, i, got, dlen, clen, ch;
	u8 *b, *d, sig[16], mac[16];
	struct smbd_reg *reg;
	struct iov_iter it;
	struct kvec kv;
	int nd, err, derr;
	u16 charge;

	pc = kvmalloc_array(SC_DESC_MAX, sizeof(*pc), GFP_KERNEL);
	if (!pc)
		return -ENOMEM;
	testbuf_iter(&r->buf, boff, len, write ? ITER_SOURCE : ITER_DEST,
		     unit & 1, &kv, &it);
	nd = smbd_register(c->sk, &it, write ? SMBD_REG_PEER_READS :
			   SMBD_REG_PEER_WRITES, reg_d, SC_REG_DESC, &reg);
	if (nd < 0) {
		snprintf(why, wlen, "register %zu bytes: %d", len, nd);
		kvfree(pc);
		return nd;
	}
	/* a transform leaves room for 4,093 in WriteChannelInfoLength */
	n = sc_cut(reg_d, nd, unit, min_t(u32, k, write && xf ?
					  (U16_MAX - XF_SIGN_LEN) / SMBD_BUF_DESC_LEN :
					  SC_DESC_MAX), pc, moved);
	charge = DIV_ROUND_UP(*moved, SZ_64K);
	err = sc_credits(r, c, charge);
	if (err) {
		snprintf(why, wlen, "%u credits wanted, %u held: %d", charge,
			 c->credits, err);
		goto out;
	}
	dlen = n * SMBD_BUF_DESC_LEN;
	clen = write && xf ? XF_SIGN_LEN + dlen : dlen;
	if (write && xf) {
		/* the pieces cover the first *moved bytes of the buffer */
		err = sc_cmac_raw(c->key, r->buf.va + boff, *moved, sig);
		if (err) {
			snprintf(why, wlen, "signing the data: %d", err);
			goto out;
		}
	}
	ch = inv ? CH_RDMA_V1_INVALIDATE : CH_RDMA_V1;
	b = sc_rw_req(r, write, write && xf ? CH_RDMA_TRANSFORM : ch, *moved,
		      clen);
	d = b + 48;
	if (write && xf) {
		sc_xform_put(d, dlen, ch, sig);
		d += XF_SIGN_LEN;
	}
	for (i = 0; i < n; i++)
		smbd_desc_encode(&pc[i], d + i * SMBD_BUF_DESC_LEN);
	err = sc_call(r, c, H_LEN + 48 + clen, charge, NULL, &st);
	if (err || st) {
		snprintf(why, wlen, "%s over %u descriptors: error %d, status %#x",
			 write ? "WRITE" : "READ", n, err, st);
		err = err ?: -EREMOTEIO;
		goto out;
	}
	if (c->rlen < H_LEN + 16) {
		snprintf(why, wlen, "%s answered in %u bytes",
			 write ? "WRITE" : "READ", c->rlen);
		err = -EPROTO;
		goto out;
	}
	b = r->rx + H_LEN;
	got = write ? get_unaligned_le32(b + 4) :
		      get_unaligned_le32(b + 4) + get_unaligned_le32(b + 8);
	if (!write && xf) {
		err = sc_read_xform(r, sig, why, wlen);
		if (err)
			goto out;
		got = get_unaligned_le32(b + 8);
	} else if (!write && get_unaligned_le32(b + 12)) {
		snprintf(why, wlen, "READ answered with flags %#x, no transform negotiated",
			 get_unaligned_le32(b + 12));
		err = -EPROTO;
		goto out;
	}
	if (got != *moved) {
		snprintf(why, wlen, "%s of %zu bytes answered %u",
			 write ? "WRITE" : "READ", *moved, got);
		err = -EIO;
	} else if (inv != (c->rinfo.invalidated &&
			   c->rinfo.token == pc[0].token)) {
		snprintf(why, wlen, "%s %s: answer %s token %#x (ours %#x)",
			 write ? "WRITE" : "READ",
			 inv ? "RDMA_V1_INVALIDATE" : "RDMA_V1",
			 c->rinfo.invalidated ? "invalidated" : "did not invalidate",
			 c->rinfo.token, pc[0].token);
		err = -EIO;
	}
	if (!err)
		*why = 0;
out:
	derr = smbd_deregister(c->sk, reg);
	if (derr && !err) {
		snprintf(why, wlen, "deregister: %d", derr);
		err = derr;
	}
	/* the server can no longer write the buffer: check what it wrote */
	if (!err && !write && xf) {
		err = sc_cmac_raw(c->key, r->buf.va + boff, *moved, mac);
		if (!err && memcmp(mac, sig, 16))
			err = -EBADMSG;
		if (err)
			snprintf(why, wlen,
				 "READ data of %zu bytes does not match its transform's signature: %d",
				 *moved, err);
		else
			r->xf_verified++;
	}
	kvfree(pc);
	return err;
}

/*
 * @k descriptors of @unit bytes: write a pattern through them, read it
 * back through as many into a buffer with canaries around, compare.
 * Misaligned (@unit odd): the buffer at an odd address, bvec pieces.
 */
static void sc_descs(struct sc_run *r, u32 k, u32 unit)
{
	bool odd = unit & 1;
	size_t boff = odd ? 3 : 0, len = (size_t)k * unit, moved = 0, i;
	char name[48], why[160] = "";
	u64 seed = r->seed++;
	ktime_t t0 = ktime_get();
	int err;

	snprintf(name, sizeof(name), "descs-%u-%s", k,
		 odd ? "misaligned" : "aligned");
	for (i = 0; i < len; i++)
		r->buf.va[boff + i] = sc_pat(seed, i);
	err = sc_rdma_io(r, true, boff, len, k, unit, odd, &moved, why,
			 sizeof(why));
	if (!err) {
		len = moved;
		sc_info("written %zu", len);
		memset(r->buf.va, SC_CANARY, boff + len + 64);
		err = sc_rdma_io(r, false, boff, len, k, unit, !odd, &moved,
				 why, sizeof(why));
	}
	if (!err && moved != len) {
		snprintf(why, sizeof(why), "read %zu of %zu", moved, len);
		err = -EIO;
	}
	for (i = 0; !err && i < len; i++) {
		if (r->buf.va[boff + i] != sc_pat(seed, i)) {
			snprintf(why, sizeof(why), "byte %zu of %zu differs", i,
				 len);
			err = -EIO;
		}
	}
	if (!err && (memchr_inv(r->buf.va, SC_CANARY, boff) ||
		     memchr_inv(r->buf.va + boff + len, SC_CANARY, 64))) {
		snprintf(why, sizeof(why), "bytes around the read buffer changed");
		err = -EIO;
	}
	sc_check(r, !err, name, "%s%s%u-byte pieces, %zu bytes written and read back, %lld ms",
		 why, why[0] ? "; " : "", unit, len,
		 ktime_ms_delta(ktime_get(), t0));
}

/*
 * WRITEs the server must refuse at once, the connection going on: more
 * bytes than MaxReadWriteSize, and more bytes than the descriptors hold.
 */
static void sc_refused(struct sc_run *r)
{
	struct sc_conn *c = &r->rdma;
	struct smbd_buf_desc d = { .offset = 0x10000, .token = 0x1234 };
	static const char * const what[] = { "write-above-max-refused",
					     "write-beyond-descriptors-refused" };
	ktime_t t0;
	u32 st, len;
	int i, err;
	u8 *b;

	for (i = 0; i < 2; i++) {
		/* above both limits: SMB Direct's and the SMB2 dialect's */
		len = i ? 8192 : max(r->max_rw, c->max_write) + 4096;
		d.length = i ? 4096 : len;
		err = sc_credits(r, c, DIV_ROUND_UP(len, SZ_64K));
		b = sc_rw_req(r, true, CH_RDMA_V1, len, SMBD_BUF_DESC_LEN);
		smbd_desc_encode(&d, b + 48);
		t0 = ktime_get();
		err = err ?: sc_call(r, c, H_LEN + 48 + SMBD_BUF_DESC_LEN,
				     DIV_ROUND_UP(len, SZ_64K), NULL, &st);
		sc_check(r, !err && st == ST_INVALID_PARAMETER &&
			 ktime_ms_delta(ktime_get(), t0) < 5000, what[i],
			 "%u bytes, descriptor of %u: error %d, status %#x (want %#x) after %lld ms",
			 len, d.length, err, st, ST_INVALID_PARAMETER,
			 ktime_ms_delta(ktime_get(), t0));
	}
}

/* The malformed or false transforms sc_xform_refused() sends. */
enum sc_xf_bad {
	XB_COUNT0, XB_TYPE7, XB_TWO, XB_INFO8, XB_DESC_BEYOND, XB_MISALIGNED,
	XB_INNER_NONE, XB_SIG17, XB_SIG8, XB_BAD_SIG, XB_DATA_CHANGED,
	XB_READ_CH3, XB_WRITE_CH4,
	XB_ENC_PLAIN,		/* encryption, in a request not encrypted */
	XB_NOT_NEGOTIATED,	/* a well-formed transform, not negotiated */
	XB_NR
};

static const struct {
	const char *name;
	u32 want;
} sc_xf_bad[XB_NR] = {
	[XB_COUNT0] = { "transform-count-0", ST_INVALID_PARAMETER },
	[XB_TYPE7] = { "transform-type-7", ST_INVALID_PARAMETER },
	[XB_TWO] = { "two-signing-transforms", ST_INVALID_PARAMETER },
	[XB_INFO8] = { "channel-info-8-bytes", ST_INVALID_PARAMETER },
	[XB_DESC_BEYOND] = { "descriptors-beyond-channel-info", ST_INVALID_PARAMETER },
	[XB_MISALIGNED] = { "descriptors-misaligned", ST_INVALID_PARAMETER },
	[XB_INNER_NONE] = { "inner-channel-none", ST_INVALID_PARAMETER },
	[XB_SIG17] = { "signature-17-bytes", ST_INVALID_PARAMETER },
	[XB_SIG8] = { "signature-8-bytes", ST_INVALID_PARAMETER },
	[XB_BAD_SIG] = { "signature-changed", ST_INVALID_SIGNATURE },
	[XB_DATA_CHANGED] = { "data-changed-after-signing", ST_INVALID_SIGNATURE },
	[XB_READ_CH3] = { "read-channel-transform", ST_INVALID_PARAMETER },
	[XB_WRITE_CH4] = { "write-channel-4", ST_INVALID_PARAMETER },
	[XB_ENC_PLAIN] = { "encryption-transform-not-encrypted", ST_INVALID_PARAMETER },
	[XB_NOT_NEGOTIATED] = { "transform-not-negotiated", ST_INVALID_PARAMETER },
};

#define XB_OFFSET	(8ULL << 20)	/* beyond what sc_descs() writes */
#define XB_LEN		4096

/*
 * [MS-SMB2] 3.3.5.13, 3.3.5.12: WRITEs through a registered 4 KiB whose
 * SMB2_RDMA_TRANSFORM is malformed, or whose signature does not match
 * the data the server reads, each refused with the status the spec
 * names, at file offset 8 MiB (the file must not grow there; the plan
 * checks its size), the channel going on; and a READ with
 * SMB2_CHANNEL_RDMA_TRANSFORM, which only a WRITE may carry; and an
 * encryption transform (negotiated: the client offers ciphers) in a
 * request that is signed, not encrypted. Where the signing transform was
 * not negotiated, one well-formed transform only.
 */
static void sc_xform_refused(struct sc_run *r)
{
	struct sc_conn *c = &r->rdma;
	struct smbd_buf_desc rd[2];
	u32 st, dlen = SMBD_BUF_DESC_LEN, clen, doff, i, ch, nl;
	struct smbd_reg *reg;
	struct iov_iter it;
	struct kvec kv;
	u8 sig[16], xb[128], *b, *x = xb;
	bool nego = sc_xform(&r->rdma, XFORM_SIGNING), skip;
	bool enc = sc_xform(&r->rdma, XFORM_ENCRYPTION);
	int nd, err, derr, bad;

	for (i = 0; i < XB_LEN; i++)
		r->buf.va[i] = sc_pat(r->seed, i);
	r->seed++;
	testbuf_iter(&r->buf, 0, XB_LEN, ITER_SOURCE, false, &kv, &it);
	nd = smbd_register(c->sk, &it, SMBD_REG_PEER_READS, rd, 2, &reg);
	if (!sc_check(r, nd == 1, "xform-refused-register", "%d", nd))
		goto out;
	err = sc_cmac_raw(c->key, r->buf.va, XB_LEN, sig);
	for (bad = 0; bad < XB_NR && !err; bad++) {
		/* a not-negotiated case where negotiated, the others not */
		skip = bad == XB_NOT_NEGOTIATED;
		if (skip == nego || (bad == XB_ENC_PLAIN && !enc))
			continue;
		err = sc_credits(r, c, 1);
		if (err)
			break;
		ch = CH_RDMA_TRANSFORM;
		doff = XF_SIGN_LEN;
		/* the channel information first, the request around it */
		memset(x, 0, sizeof(xb));
		sc_xform_put(x, dlen, CH_RDMA_V1, sig);
		switch (bad) {
		case XB_COUNT0:
			put_unaligned_le16(0, x + 8);
			break;
		case XB_TYPE7:
			put_unaligned_le16(7, x + XF_LEN);
			break;
		case XB_TWO:
			/* a second signing transform, the descriptors after */
			memcpy(x + XF_SIGN_LEN, x + XF_LEN, XF_CRYPTO_LEN);
			put_unaligned_le16(2, x + 8);
			doff += XF_CRYPTO_LEN;
			break;
		case XB_MISALIGNED:
			doff += 4;
			break;
		case XB_INNER_NONE:
			put_unaligned_le32(0, x + 4);
			break;
		case XB_SIG17:
			put_unaligned_le16(17, x + XF_LEN + 2);
			doff = ALIGN(XF_SIGN_LEN + 1, 8);
			break;
		case XB_SIG8:
			put_unaligned_le16(8, x + XF_LEN + 2);
			doff = XF_SIGN_LEN - 8;
			break;
		case XB_BAD_SIG:
			x[XF_LEN + 8 + 5] ^= 0x10;
			break;
		case XB_WRITE_CH4:
			ch = 4;
			break;
		case XB_ENC_PLAIN:
			/* well formed: the 16-byte tag, the cipher's nonce */
			put_unaligned_le16(XFORM_ENCRYPTION, x + XF_LEN);
			nl = r->rdma.cipher == CIPHER_AES128_CCM ||
			     r->rdma.cipher == CIPHER_AES256_CCM ? 11 : 12;
			put_unaligned_le16(nl, x + XF_LEN + 4);
			doff = ALIGN(XF_SIGN_LEN + nl, 8);
			break;
		}
		put_unaligned_le16(doff, x);
		smbd_desc_encode(&rd[0], x + doff);
		clen = doff + dlen;
		/* the message ends with the channel information's 8 bytes */
		if (bad == XB_INFO8)
			clen = 8;
		if (bad == XB_DESC_BEYOND)
			put_unaligned_le16(2 * dlen, x + 2);
		b = sc_rw_req(r, bad != XB_READ_CH3, ch, XB_LEN, clen);
		put_unaligned_le64(XB_OFFSET, b + 8);
		memcpy(b + 48, x, clen);
		/*
		 * A channel the server must refuse, with the channel
		 * information also inline as data: a server that took the
		 * channel for none would write it (and the file would grow
		 * to 8 MiB, which the plan checks) instead of refusing it.
		 */
		if (bad == XB_WRITE_CH4 || bad == XB_NOT_NEGOTIATED) {
			put_unaligned_le16(H_LEN + 48, b + 2);
			put_unaligned_le32(clen, b + 4);
		}
		/* the registered data changed after it was signed */
		if (bad == XB_DATA_CHANGED)
			r->buf.va[XB_LEN / 2] ^= 0x01;
		err = sc_call(r, c, H_LEN + 48 + clen, 1, NULL, &st);
		if (bad == XB_DATA_CHANGED)
			r->buf.va[XB_LEN / 2] ^= 0x01;
		sc_check(r, !err && st == sc_xf_bad[bad].want,
			 sc_xf_bad[bad].name,
			 "error %d, status %#x (want %#x)", err, st,
			 sc_xf_bad[bad].want);
	}
	derr = smbd_deregister(c->sk, reg);
	sc_check(r, !err && !derr, "xform-refused-channel-goes-on", "%d, deregister %d",
		 err, derr);
	return;
out:
	if (nd >= 0)
		smbd_deregister(c->sk, reg);
}

/* ---- the command ---- */

static void sc_watchdog(struct work_struct *w)
{
	struct sc_run *r = container_of(w, struct sc_run, watchdog.work);

	mutex_lock(&r->lock);
	r->expired = true;
	pr_info("%s: past %d s, shutting the connections down\n", r->label,
		SC_DEADLINE_S);
	if (r->tcp.tcp)
		kernel_sock_shutdown(r->tcp.tcp, SHUT_RDWR);
	if (r->rdma.sk)
		smbd_sock_shutdown(r->rdma.sk);
	mutex_unlock(&r->lock);
}

static int sc_tcp_connect(struct sc_run *r)
{
	struct socket *s;
	int err;

	err = sock_create_kern(&init_net, r->tcp_dst.ss_family, SOCK_STREAM,
			       IPPROTO_TCP, &s);
	if (err)
		return err;
	s->sk->sk_rcvtimeo = 60 * HZ;
	s->sk->sk_sndtimeo = 60 * HZ;
	err = kernel_connect(s, (struct sockaddr *)&r->tcp_dst,
			     r->tcp_dst.ss_family == AF_INET6 ?
			     sizeof(struct sockaddr_in6) :
			     sizeof(struct sockaddr_in), 0);
	if (err) {
		sock_release(s);
		return err;
	}
	mutex_lock(&r->lock);
	if (r->expired) {
		mutex_unlock(&r->lock);
		sock_release(s);
		return -ETIMEDOUT;
	}
	r->tcp.tcp = s;
	mutex_unlock(&r->lock);
	return 0;
}

static int sc_rdma_connect(struct sc_run *r)
{
	struct smbd_sock_info info;
	struct smbd_params p;
	struct smbd_sock *sk;
	int err;

	smbd_params_init(&p, false);
	err = smbd_sock_create(&init_net, &p, &sk);
	if (err)
		return err;
	mutex_lock(&r->lock);
	if (r->expired) {
		mutex_unlock(&r->lock);
		smbd_sock_release(sk);
		return -ETIMEDOUT;
	}
	r->rdma.sk = sk;
	mutex_unlock(&r->lock);
	err = smbd_sock_connect(sk, (struct sockaddr *)&r->rdma_dst);
	if (!err)
		err = smbd_sock_query(sk, &info);
	if (!err)
		r->max_rw = info.max_read_write_size;
	return err;
}

/*
 * What a 3.1.1 NEGOTIATE answer on @c chose, one info line for the plan:
 * "info contexts tcp|rdma cipher C signing S rdma-transform none|ID,..."
 * (S 0: no signing context, AES-CMAC by default; "none": no RDMA
 * transform context answered, "0": only SMB2_RDMA_TRANSFORM_NONE).
 */
static void sc_contexts_info(struct sc_run *r, struct sc_conn *c)
{
	char ids[32] = "none";
	int i, n = 0;

	if (c->dialect != D_SMB311)
		return;
	if (c->xform_answered)
		n = scnprintf(ids, sizeof(ids), "%s", c->nr_xform ? "" : "0");
	for (i = 0; i < c->nr_xform; i++)
		n += scnprintf(ids + n, sizeof(ids) - n, "%s%u", i ? "," : "",
			       c->xform[i]);
	sc_info("contexts %s cipher %u signing %u rdma-transform %s", c->what,
		c->cipher, c->sign_alg, ids);
}

/*
 * [MS-SMB2] 3.3.5.4: NEGOTIATEs whose RDMA transform context is
 * malformed, each on a TCP connection of its own, refused with
 * STATUS_INVALID_PARAMETER. False when a connection cannot be made.
 */
static bool sc_neg_refused(struct sc_run *r)
{
	static const char * const name[NB_NR] = {
		[NB_TWO] = "neg-two-transform-contexts",
		[NB_COUNT0] = "neg-transform-count-0",
		[NB_SHORT] = "neg-transform-context-short",
	};
	char why[96];
	struct socket *s;
	u32 caps;
	u16 dialect;
	int bad, err;

	for (bad = NB_TWO; bad < NB_NR; bad++) {
		why[0] = 0;
		err = sc_tcp_connect(r);
		if (!err) {
			r->tcp.mid = 0;
			err = sc_negotiate(r, &r->tcp, bad, &dialect, &caps,
					   why, sizeof(why));
		}
		sc_check(r, !err, name[bad], "%s%s%d", why, why[0] ? "; " : "",
			 err);
		mutex_lock(&r->lock);
		s = r->tcp.tcp;
		r->tcp.tcp = NULL;
		mutex_unlock(&r->lock);
		if (!s)
			return false;
		sock_release(s);
	}
	r->tcp.mid = 0;
	return true;
}

/* The TCP half: up to the interface list. False when it cannot go on. */
static bool sc_tcp_part(struct sc_run *r)
{
	char why[160] = "";
	u32 caps = 0;
	u16 dialect = 0;
	int err, nr;
	bool ok;

	if (r->dialect == D_SMB311 && !sc_neg_refused(r))
		return false;
	err = sc_tcp_connect(r);
	err = err ?: sc_negotiate(r, &r->tcp, NB_NONE, &dialect, &caps, why,
				  sizeof(why));
	if (!sc_check(r, !err && dialect == r->dialect &&
		      (caps & CAP_MULTI_CHANNEL), "tcp-negotiate",
		      "%s%sdialect %#x, capabilities %#x, error %d", why,
		      why[0] ? "; " : "", dialect, caps, err))
		return false;
	sc_contexts_info(r, &r->tcp);
	err = sc_session_setup(r, &r->tcp, false, r->sess_sign, why,
			       sizeof(why));
	if (!sc_check(r, !err, "tcp-session-setup",
		      "%sNTLMv2 as %s, session %#llx%s", why, r->user, r->sid,
		      err ? "" : ", final answer signed"))
		return false;
	r->tcp.sign = true;
	memcpy(r->tcp.key, r->sess_sign, 16);
	err = sc_tree_connect(r, &r->tcp);
	if (!sc_check(r, !err, "tcp-tree-connect", "\\\\%s\\%s: %d, tree %#x",
		      r->tcp_host, r->share, err, r->tid))
		return false;
	why[0] = 0;
	ok = sc_interfaces(r, &r->tcp, &nr, why, sizeof(why));
	return sc_check(r, ok, "tcp-interfaces", "%s%s%d entries, signed",
			why, why[0] ? "; " : "", nr);
}

/* The RDMA channel: bound to the session, then I/O through it. */
static void sc_rdma_part(struct sc_run *r)
{
	static const u32 ks[] = { 1, 2, 16, 256, SC_DESC_MAX };
	char why[160] = "", name[40];
	u32 caps = 0, unit;
	u16 dialect = 0;
	ktime_t t0;
	int err, i;

	t0 = ktime_get();
	err = sc_rdma_connect(r);
	err = err ?: sc_negotiate(r, &r->rdma, NB_NONE, &dialect, &caps, why,
				  sizeof(why));
	if (!sc_check(r, !err && dialect == r->dialect, "rdma-negotiate",
		      "%s%s%pISpc, dialect %#x, MaxReadWriteSize %u, error %d, %lld ms",
		      why, why[0] ? "; " : "", &r->rdma_dst, dialect, r->max_rw,
		      err, ktime_ms_delta(ktime_get(), t0)))
		return;
	sc_contexts_info(r, &r->rdma);
	why[0] = 0;
	err = sc_session_setup(r, &r->rdma, true, r->rdma.key, why,
			       sizeof(why));
	if (!sc_check(r, !err, "rdma-bind",
		      "%ssession %#llx bound, requests signed with Session.SigningKey%s",
		      why, r->sid, err ? "" : ", final answer with the channel's"))
		return;
	r->rdma.sign = true;
	snprintf(name, sizeof(name), "smb2c-%s.bin", r->label);
	err = sc_create(r, &r->rdma, name);
	if (!sc_check(r, !err, "rdma-create", "%s over the bound channel: %d",
		      name, err))
		return;
	for (i = 0; i < ARRAY_SIZE(ks); i++) {
		/* 1 MiB at most each (siw moves 1-3 MiB/s under TCG) */
		unit = min_t(u32, PAGE_SIZE, SZ_1M / ks[i]);
		sc_descs(r, ks[i], unit);
		/*
		 * 4,095 misaligned: the 1,025-byte pieces (4 MiB).
		 * The time goes by the descriptor (each an RDMA operation,
		 * a few milliseconds under TCG), not by the byte.
		 */
		sc_descs(r, ks[i], ks[i] == SC_DESC_MAX ? SC_BIG_UNIT : unit - 1);
	}
	sc_refused(r);
	sc_xform_refused(r);
	if (sc_xform(&r->rdma, XFORM_SIGNING))
		sc_check(r, r->xf_verified == 2 * ARRAY_SIZE(ks), "xform-reads-verified",
			 "%u READs answered with the signing transform, their data matching it",
			 r->xf_verified);
	err = sc_simple(r, &r->rdma, C_CLOSE);
	sc_check(r, !err, "rdma-close", "%d", err);
}

static void sc_cmd_win(struct sc_run *r)
{
	int err;

	INIT_DELAYED_WORK(&r->watchdog, sc_watchdog);
	schedule_delayed_work(&r->watchdog, SC_DEADLINE_S * HZ);
	if (sc_tcp_part(r))
		sc_rdma_part(r);
	if (r->tcp.sign) {
		err = sc_simple(r, &r->tcp, C_LOGOFF);
		sc_check(r, !err, "tcp-logoff", "%d", err);
	}
	cancel_delayed_work_sync(&r->watchdog);
	sc_check(r, !r->expired, "in-time", "within %d s", SC_DEADLINE_S);
	if (r->rdma.sk)
		smbd_sock_release(r->rdma.sk);
	if (r->tcp.tcp)
		sock_release(r->tcp.tcp);
}

/* MD4 against [RFC1320]'s own examples, before it is trusted. */
static bool sc_md4_ok(void)
{
	static const u8 want_abc[16] = {
		0xa4, 0x48, 0x01, 0x7a, 0xaf, 0x21, 0xd8, 0x52,
		0x5f, 0xc1, 0x0a, 0xe8, 0x7a, 0xa6, 0x72, 0x9d };
	static const u8 want_long[16] = {	/* "1234567890" x 8 */
		0xe3, 0x3b, 0x4d, 0xdc, 0x9c, 0x38, 0xf2, 0x19,
		0x9c, 0x3e, 0x7b, 0x16, 0x4f, 0xcc, 0x05, 0x36 };
	u8 out[16], msg[80];
	int i;

	sc_md4((const u8 *)"abc", 3, out);
	if (memcmp(out, want_abc, 16))
		return false;
	for (i = 0; i < 80; i++)
		msg[i] = '0' + (i + 1) % 10;
	sc_md4(msg, 80, out);
	return !memcmp(out, want_long, 16);
}

static int sc_run_cmd(char *line)
{
	struct sc_run *r;
	char **argv;
	int argc, err = 0;

	argv = argv_split(GFP_KERNEL, line, &argc);
	if (!argv)
		return -ENOMEM;
	if ((argc != 8 && argc != 9) || strcmp(argv[0], "win") ||
	    (argc == 9 && strcmp(argv[8], "3.0.2") && strcmp(argv[8], "3.1.1"))) {
		err = -EINVAL;
		goto out;
	}
	r = kzalloc(sizeof(*r), GFP_KERNEL);
	if (!r) {
		err = -ENOMEM;
		goto out;
	}
	mutex_init(&r->lock);
	r->label = argv[1];
	r->tcp_host = argv[2];
	r->user = argv[5];
	r->pass = argv[6];
	r->share = argv[7];
	/* as Windows 11 and Server 2022 and later: 3.1.1 */
	r->dialect = argc == 9 && !strcmp(argv[8], "3.0.2") ? D_SMB302 :
							     D_SMB311;
	r->tcp.what = "tcp";
	r->rdma.what = "rdma";
	r->seed = get_random_u32();
	generate_random_uuid(r->guid);
	if (inet_pton_with_scope(&init_net, AF_UNSPEC, argv[2], "445",
				 &r->tcp_dst) ||
	    inet_pton_with_scope(&init_net, AF_UNSPEC, argv[3], argv[4],
				 &r->rdma_dst)) {
		err = -EINVAL;
	} else {
		r->tx = kvmalloc(SC_MSG_MAX, GFP_KERNEL);
		r->rx = kvmalloc(SC_MSG_MAX, GFP_KERNEL);
		if (!r->tx || !r->rx || testbuf_alloc(&r->buf, SC_BUF_SIZE))
			err = -ENOMEM;
		else if (sc_check(r, sc_md4_ok(), "md4",
				  "[RFC1320] examples"))
			sc_cmd_win(r);
		testbuf_free(&r->buf);
	}
	kvfree(r->tx);
	kvfree(r->rx);
	kfree(r);
out:
	argv_free(argv);
	return err;
}

static int __init smbd_smb2c_init(void)
{
	return testctl_init(&sc_ctl, "smbd_smb2c", SC_OUT_MAX, 256,
			    sc_run_cmd);
}

static void __exit smbd_smb2c_exit(void)
{
	testctl_remove(&sc_ctl);
	testctl_out_free(&sc_ctl.out);
}

module_init(smbd_smb2c_init);
module_exit(smbd_smb2c_exit);

MODULE_DESCRIPTION("smbd tests: an SMB2 client that reaches SMB Direct the Windows way");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(SMBD);
MODULE_SOFTDEP("pre: md5 hmac sha256 sha512 cmac aes");

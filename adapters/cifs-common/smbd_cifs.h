/* SPDX-License-Identifier: GPL-2.0 */
/*
 * smbd_cifs.h: between the cifs adapter's files. One is the same for
 * every kernel series (adapters/cifs-common/smbd_cifs_conn.c): the
 * connection across reconnects, its links, receiving, sending a message
 * once its parts are known, and the end of a registration. One is the
 * series' own (adapters/cifs/ for 6.12, adapters/cifs-6.1/), smbd_cifs.c:
 * what cifs reads of a connection, a message's data parts and copy, and
 * registering, where 6.1's cifs hands pages and 6.12's an iov_iter.
 * Include after cifs's own headers and <smbd.h>.
 */
#ifndef _SMBD_CIFS_H
#define _SMBD_CIFS_H

#include <linux/bvec.h>
#include <linux/kref.h>
#include <linux/spinlock.h>
#include <linux/uio.h>

/**
 * struct smbd_cifs_parts - one SMB Direct message, as smbd_send() builds it
 * @it: its parts, for smbd_sock_send() with %SMBD_SEND_MORE
 * @n: parts of the message in @it
 * @len: the message's bytes
 * @bv: 6.1 only: the bvecs behind the page parts of @it; they stay until
 *	the last part is sent
 * @bv_n: 6.1 only: bvecs of @bv in use
 * @bv_max: 6.1 only: room in @bv, enough for any message up to
 *	MaxFragmentedSendSize and a bound of the adapter's, made of at
 *	most %SMBD_MORE_MAX parts
 * @copy: the message does not fit @it (or, 6.1, @bv): send it from one
 *	copy
 */
struct smbd_cifs_parts {
	struct iov_iter it[SMBD_MORE_MAX];
	unsigned int n;
	size_t len;
	struct bio_vec *bv;
	unsigned int bv_n;
	unsigned int bv_max;
	bool copy;
};

/**
 * struct smbd_cifs_conn - a cifs server's SMB Direct side, across reconnects
 * @info: what cifs sees (server->smbd_conn)
 * @lock: guards @link against registrations (the server mutex orders
 *	the rest: sends, reconnect and destroy; receives run in the thread
 *	that reconnects)
 * @link: the current connection, or NULL between a loss and a reconnect
 * @ref: cifs's reference until the final smbd_destroy(), and each link's
 * @parts: the message smbd_send() is building (under the server mutex)
 */
struct smbd_cifs_conn {
	struct smbd_connection info;
	spinlock_t lock;		/* guards @link */
	struct smbd_cifs_link *link;
	struct kref ref;
	struct smbd_cifs_parts parts;
};

/**
 * struct smbd_cifs_link - one SMB Direct connection of a cifs server
 * @conn: whose connection it is (a reference)
 * @sk: the smbd socket; its upcalls get the link
 * @ref: @conn's while current, and one per live registration
 */
struct smbd_cifs_link {
	struct smbd_cifs_conn *conn;
	struct smbd_sock *sk;
	struct kref ref;
};

/**
 * struct smbd_cifs_mr - one registration as cifs sees it
 * @mr: cifs's view; mr.mr points to @view
 * @view: only iova, rkey and length are filled: cifs copies them into
 *	the SMB2 channel info ([MS-SMB2] 2.2.19, 2.2.21); it is no verbs
 *	object and nothing hands it to a device
 * @reg: smbd's registration
 * @link: the connection it was made on (a reference)
 * @bv: 6.1 only: the buffer's pages, as smbd_register() got them
 */
struct smbd_cifs_mr {
	struct smbd_mr mr;
	struct ib_mr view;
	struct smbd_reg *reg;
	struct smbd_cifs_link *link;
	struct bio_vec bv[];
};

/* What cifs shows of a connection's state (DebugData, its checks). */
enum smbd_cifs_status {
	SMBD_CIFS_UP,
	SMBD_CIFS_DOWN,		/* lost, or between a loss and a reconnect */
	SMBD_CIFS_GONE,		/* the final smbd_destroy() */
};

static inline struct smbd_cifs_conn *smbd_cifs(struct smbd_connection *info)
{
	return container_of(info, struct smbd_cifs_conn, info);
}

/*
 * The current link's socket, for the callers the server mutex (or the
 * demultiplex thread) orders against a reconnect; NULL while there is
 * no connection.
 */
static inline struct smbd_sock *smbd_cifs_sk(struct smbd_cifs_conn *c)
{
	return c->link ? c->link->sk : NULL;
}

/* smbd_cifs_conn.c */
struct smbd_cifs_link *smbd_cifs_link_get(struct smbd_cifs_conn *c);
void smbd_cifs_link_put(struct smbd_cifs_link *l);
void smbd_cifs_kvecs(struct TCP_Server_Info *server, struct smb_rqst *rqst,
		     struct iov_iter *it);
void smbd_cifs_add(struct smbd_cifs_parts *pt, const struct iov_iter *it);
/*
 * The end of the series' smbd_register_mr(): @it in @m (zeroed and
 * kvfree()able) on @info's current connection, with only the access the
 * I/O needs; @m is freed on failure.
 */
struct smbd_mr *smbd_cifs_register(struct smbd_connection *info,
				   struct smbd_cifs_mr *m, struct iov_iter *it,
				   bool writing, bool need_invalidate);

/* the series' smbd_cifs.c */
void smbd_cifs_set_status(struct smbd_connection *info,
			  enum smbd_cifs_status st);
int smbd_cifs_check(struct smbd_cifs_conn *c, const struct smbd_sock_info *si);
void smbd_cifs_info(struct smbd_cifs_conn *c, const struct smbd_sock_info *si);
/*
 * smbd_send(), under the server mutex: @rqst as @c's parts (-EMSGSIZE
 * above MaxFragmentedSendSize); when they are marked for a copy, the
 * message in one kvmalloc()ed buffer of @len bytes, or an error pointer.
 */
int smbd_cifs_build(struct TCP_Server_Info *server, struct smbd_cifs_conn *c,
		    struct smb_rqst *rqst, int num_rqst);
void *smbd_cifs_copy(struct TCP_Server_Info *server, size_t len,
		     struct smb_rqst *rqst, int num_rqst);

#endif /* _SMBD_CIFS_H */

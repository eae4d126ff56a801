/* SPDX-License-Identifier: GPL-2.0 */
/*
 * smbd: tracepoints, system "smbd" (/sys/kernel/tracing/events/smbd/).
 *
 * Every event names its connection by conn (struct smbd_sock's ss_id,
 * also in /sys/kernel/debug/smbd/connections). Sends and receives carry
 * seq, the connection's count of work requests posted on that queue: a
 * send's completion reports the seq of the signalled request and how
 * many requests it completed (the unsignalled ones before it, in order),
 * a receive's completion the seq its buffer was posted with.
 *
 * smbd_wc_done, smbd_wc_flush and smbd_wc_error trace every completion
 * by its context's name (struct smbd_cqe): cq, the completion queue's
 * restrack id (as the RDMA core's events and "rdma resource" name it),
 * and cid, the context's number on its connection.
 *
 * Section numbers are [MS-SMBD]'s.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM smbd

#if !defined(_SMBD_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _SMBD_TRACE_H

#include <linux/tracepoint.h>
#include <rdma/ib_cm.h>		/* the event names trace/misc/rdma.h lists */
#include <rdma/rdma_cm.h>
#include <trace/misc/rdma.h>

#include "smbd_internal.h"

TRACE_DEFINE_ENUM(SMBD_CREATED);
TRACE_DEFINE_ENUM(SMBD_CONNECTING);
TRACE_DEFINE_ENUM(SMBD_LISTENING);
TRACE_DEFINE_ENUM(SMBD_NEGOTIATING);
TRACE_DEFINE_ENUM(SMBD_REFUSING);
TRACE_DEFINE_ENUM(SMBD_CONNECTED);
TRACE_DEFINE_ENUM(SMBD_DISCONNECTING);
TRACE_DEFINE_ENUM(SMBD_CLOSED);
TRACE_DEFINE_ENUM(SMBD_TRACE_KA_ASK);
TRACE_DEFINE_ENUM(SMBD_TRACE_KA_ASKED);
TRACE_DEFINE_ENUM(SMBD_TRACE_KA_TIMEOUT);
TRACE_DEFINE_ENUM(SMBD_TRACE_INV_LOCAL);
TRACE_DEFINE_ENUM(SMBD_TRACE_INV_REMOTE);
TRACE_DEFINE_ENUM(SMBD_TRACE_INV_UNKNOWN);
TRACE_DEFINE_ENUM(SMBD_WC_RECV);
TRACE_DEFINE_ENUM(SMBD_WC_SEND);
TRACE_DEFINE_ENUM(SMBD_WC_REG);
TRACE_DEFINE_ENUM(SMBD_WC_OP);
TRACE_DEFINE_ENUM(SMBD_WC_FENCE);
TRACE_DEFINE_ENUM(SMBD_WC_PROBE);
TRACE_DEFINE_ENUM(SMBD_WC_WSLOT);

#define smbd_show_state(s)						\
	__print_symbolic(s,						\
			 { SMBD_CREATED, "created" },			\
			 { SMBD_CONNECTING, "connecting" },		\
			 { SMBD_LISTENING, "listening" },		\
			 { SMBD_NEGOTIATING, "negotiating" },		\
			 { SMBD_REFUSING, "refusing" },			\
			 { SMBD_CONNECTED, "connected" },		\
			 { SMBD_DISCONNECTING, "disconnecting" },	\
			 { SMBD_CLOSED, "closed" })

#define smbd_show_wc_kind(k)						\
	__print_symbolic(k,						\
			 { SMBD_WC_RECV, "recv" },			\
			 { SMBD_WC_SEND, "send" },			\
			 { SMBD_WC_REG, "reg" },			\
			 { SMBD_WC_OP, "op" },				\
			 { SMBD_WC_FENCE, "fence" },			\
			 { SMBD_WC_PROBE, "probe" },			\
			 { SMBD_WC_WSLOT, "wslot" })

#define smbd_show_flags(f)						\
	__print_flags(f, "|", { SMBD_FLAG_RESPONSE_REQUESTED, "RESPONSE_REQUESTED" })

/* State changes (smbd_set_state()), with the error that ended a connection. */
TRACE_EVENT(smbd_state,
	    TP_PROTO(const struct smbd_sock *sk, enum smbd_state old,
		     enum smbd_state new),
	    TP_ARGS(sk, old, new),
	    TP_STRUCT__entry(__field(u32, conn)
			     __field(int, old)
			     __field(int, new)
			     __field(int, err)
			     __field(bool, responder)
			     ),
	    TP_fast_assign(__entry->conn = sk->ss_id;
			   __entry->old = old;
			   __entry->new = new;
			   __entry->err = sk->ss_err;
			   __entry->responder = sk->ss_responder;
			   ),
	    TP_printk("conn=%u %s %s -> %s err=%d", __entry->conn,
		      __entry->responder ? "responder" : "initiator",
		      smbd_show_state(__entry->old), smbd_show_state(__entry->new),
		      __entry->err)
	    );

/* Negotiation succeeded (3.1.5.6, 3.1.5.7): what the connection runs with. */
TRACE_EVENT(smbd_negotiated,
	    TP_PROTO(const struct smbd_sock *sk),
	    TP_ARGS(sk),
	    TP_STRUCT__entry(__field(u32, conn)
			     __field(u32, max_send)
			     __field(u32, max_recv)
			     __field(u32, max_frag_send)
			     __field(u32, max_frag_recv)
			     __field(u32, max_rw)
			     __field(u16, send_credits)
			     __field(u16, peer_requested)
			     ),
	    TP_fast_assign(__entry->conn = sk->ss_id;
			   __entry->max_send = sk->ss_neg.max_send_size;
			   __entry->max_recv = sk->ss_neg.max_recv_size;
			   __entry->max_frag_send = sk->ss_neg.max_fragmented_send_size;
			   __entry->max_frag_recv = sk->ss_neg.max_fragmented_recv_size;
			   __entry->max_rw = sk->ss_neg.max_read_write_size;
			   __entry->send_credits = sk->ss_neg.send_credits;
			   __entry->peer_requested = sk->ss_neg.peer_credits_requested;
			   ),
	    TP_printk("conn=%u max_send=%u max_recv=%u max_frag_send=%u max_frag_recv=%u max_rw=%u send_credits=%u peer_requested=%u",
		      __entry->conn, __entry->max_send, __entry->max_recv,
		      __entry->max_frag_send, __entry->max_frag_recv,
		      __entry->max_rw, __entry->send_credits,
		      __entry->peer_requested)
	    );

/* Peer input refused: the connection ends (3.1.5.x), or the peer is told. */
TRACE_EVENT(smbd_refused,
	    TP_PROTO(const struct smbd_sock *sk, const char *section,
		     const char *reason),
	    TP_ARGS(sk, section, reason),
	    TP_STRUCT__entry(__field(u32, conn)
			     __string(section, section)
			     __string(reason, reason)
			     ),
	    TP_fast_assign(__entry->conn = sk->ss_id;
			   smbd_assign_str(section);
			   smbd_assign_str(reason);
			   ),
	    TP_printk("conn=%u [MS-SMBD] %s: %s", __entry->conn,
		      __get_str(section), __get_str(reason))
	    );

/* A Data Transfer message segment about to be posted (3.1.5.4). */
TRACE_EVENT(smbd_send,
	    TP_PROTO(const struct smbd_sock *sk, u32 seq,
		     const struct smbd_data_hdr *h, bool inv, bool signalled),
	    TP_ARGS(sk, seq, h, inv, signalled),
	    TP_STRUCT__entry(__field(u32, conn)
			     __field(u32, seq)
			     __field(u32, len)
			     __field(u32, remaining)
			     __field(u16, granted)
			     __field(u16, requested)
			     __field(u16, flags)
			     __field(bool, inv)
			     __field(bool, signalled)
			     ),
	    TP_fast_assign(__entry->conn = sk->ss_id;
			   __entry->seq = seq;
			   __entry->len = h->data_length;
			   __entry->remaining = h->remaining_data_length;
			   __entry->granted = h->credits_granted;
			   __entry->requested = h->credits_requested;
			   __entry->flags = h->flags;
			   __entry->inv = inv;
			   __entry->signalled = signalled;
			   ),
	    TP_printk("conn=%u seq=%u len=%u remaining=%u granted=%u requested=%u flags=%s%s%s",
		      __entry->conn, __entry->seq, __entry->len,
		      __entry->remaining, __entry->granted, __entry->requested,
		      smbd_show_flags(__entry->flags),
		      __entry->inv ? " with-invalidate" : "",
		      __entry->signalled ? " signalled" : "")
	    );

/* A signalled send completed, and @n requests up to @seq with it (status: enum ib_wc_status). */
TRACE_EVENT(smbd_send_done,
	    TP_PROTO(const struct smbd_sock *sk, u32 seq, u32 n, int status),
	    TP_ARGS(sk, seq, n, status),
	    TP_STRUCT__entry(__field(u32, conn)
			     __field(u32, seq)
			     __field(u32, n)
			     __field(int, status)
			     ),
	    TP_fast_assign(__entry->conn = sk->ss_id;
			   __entry->seq = seq;
			   __entry->n = n;
			   __entry->status = status;
			   ),
	    TP_printk("conn=%u seq=%u n=%u status=%d", __entry->conn,
		      __entry->seq, __entry->n, __entry->status)
	    );

/* A receive completed: @len bytes, or @status. */
TRACE_EVENT(smbd_recv,
	    TP_PROTO(const struct smbd_sock *sk, u32 seq, int status, u32 len),
	    TP_ARGS(sk, seq, status, len),
	    TP_STRUCT__entry(__field(u32, conn)
			     __field(u32, seq)
			     __field(int, status)
			     __field(u32, len)
			     ),
	    TP_fast_assign(__entry->conn = sk->ss_id;
			   __entry->seq = seq;
			   __entry->status = status;
			   __entry->len = len;
			   ),
	    TP_printk("conn=%u seq=%u status=%d len=%u", __entry->conn,
		      __entry->seq, __entry->status, __entry->len)
	    );

/* A received Data Transfer message that passed 3.1.5.8's checks. */
TRACE_EVENT(smbd_recv_data,
	    TP_PROTO(const struct smbd_sock *sk, u32 seq,
		     const struct smbd_data_hdr *h),
	    TP_ARGS(sk, seq, h),
	    TP_STRUCT__entry(__field(u32, conn)
			     __field(u32, seq)
			     __field(u32, len)
			     __field(u32, remaining)
			     __field(u16, granted)
			     __field(u16, requested)
			     __field(u16, flags)
			     __field(u32, send_credits)
			     ),
	    TP_fast_assign(__entry->conn = sk->ss_id;
			   __entry->seq = seq;
			   __entry->len = h->data_length;
			   __entry->remaining = h->remaining_data_length;
			   __entry->granted = h->credits_granted;
			   __entry->requested = h->credits_requested;
			   __entry->flags = h->flags;
			   __entry->send_credits = sk->ss_cred.send_credits;
			   ),
	    TP_printk("conn=%u seq=%u len=%u remaining=%u granted=%u requested=%u flags=%s send_credits=%u",
		      __entry->conn, __entry->seq, __entry->len,
		      __entry->remaining, __entry->granted, __entry->requested,
		      smbd_show_flags(__entry->flags), __entry->send_credits)
	    );

DECLARE_EVENT_CLASS(smbd_credit_class,
		    TP_PROTO(const struct smbd_sock *sk, u32 granted),
		    TP_ARGS(sk, granted),
		    TP_STRUCT__entry(__field(u32, conn)
				     __field(u32, granted)
				     __field(u32, send_credits)
				     __field(u16, recv_posted)
				     __field(u16, recv_granted)
				     __field(u32, tx_free)
				     ),
		    TP_fast_assign(__entry->conn = sk->ss_id;
				   __entry->granted = granted;
				   __entry->send_credits = sk->ss_cred.send_credits;
				   __entry->recv_posted = sk->ss_cred.recv_posted;
				   __entry->recv_granted = sk->ss_cred.recv_granted;
				   __entry->tx_free = sk->ss_tx.free_count;
				   ),
		    TP_printk("conn=%u granted=%u send_credits=%u recv_posted=%u peer_holds=%u tx_free=%u",
			      __entry->conn, __entry->granted, __entry->send_credits,
			      __entry->recv_posted, __entry->recv_granted,
			      __entry->tx_free)
		    );

/* A sender waits for a Send Credit or a send buffer (3.1.5.1). */
DEFINE_EVENT(smbd_credit_class, smbd_credit_stall,
	     TP_PROTO(const struct smbd_sock *sk, u32 granted),
	     TP_ARGS(sk, granted));

/* A message grants the peer @granted credits (3.1.5.8, 3.1.5.9). */
DEFINE_EVENT(smbd_credit_class, smbd_credit_grant,
	     TP_PROTO(const struct smbd_sock *sk, u32 granted),
	     TP_ARGS(sk, granted));

TRACE_EVENT(smbd_keepalive,
	    TP_PROTO(const struct smbd_sock *sk, enum smbd_trace_ka what),
	    TP_ARGS(sk, what),
	    TP_STRUCT__entry(__field(u32, conn)
			     __field(int, what)
			     ),
	    TP_fast_assign(__entry->conn = sk->ss_id;
			   __entry->what = what;
			   ),
	    TP_printk("conn=%u %s", __entry->conn,
		      __print_symbolic(__entry->what,
				       { SMBD_TRACE_KA_ASK, "request" },
				       { SMBD_TRACE_KA_ASKED, "answer-due" },
				       { SMBD_TRACE_KA_TIMEOUT, "timeout" }))
	    );

/* An MR registered for the peer (3.1.4.3): its rkey and bytes. */
TRACE_EVENT(smbd_mr_reg,
	    TP_PROTO(const struct smbd_sock *sk, u32 rkey, u64 len, bool peer_writes),
	    TP_ARGS(sk, rkey, len, peer_writes),
	    TP_STRUCT__entry(__field(u32, conn)
			     __field(u32, rkey)
			     __field(u64, len)
			     __field(bool, peer_writes)
			     ),
	    TP_fast_assign(__entry->conn = sk->ss_id;
			   __entry->rkey = rkey;
			   __entry->len = len;
			   __entry->peer_writes = peer_writes;
			   ),
	    TP_printk("conn=%u rkey=%#x len=%llu peer=%s", __entry->conn,
		      __entry->rkey, __entry->len,
		      __entry->peer_writes ? "writes" : "reads")
	    );

TRACE_EVENT(smbd_mr_inv,
	    TP_PROTO(const struct smbd_sock *sk, u32 rkey, enum smbd_trace_inv how),
	    TP_ARGS(sk, rkey, how),
	    TP_STRUCT__entry(__field(u32, conn)
			     __field(u32, rkey)
			     __field(int, how)
			     ),
	    TP_fast_assign(__entry->conn = sk->ss_id;
			   __entry->rkey = rkey;
			   __entry->how = how;
			   ),
	    TP_printk("conn=%u rkey=%#x %s", __entry->conn, __entry->rkey,
		      __print_symbolic(__entry->how,
				       { SMBD_TRACE_INV_LOCAL, "local" },
				       { SMBD_TRACE_INV_REMOTE, "remote" },
				       { SMBD_TRACE_INV_UNKNOWN, "remote-unknown" }))
	    );

/* An RDMA Read or Write over the peer's descriptors (3.1.4.5, 3.1.4.6). */
TRACE_EVENT(smbd_rdma_rw,
	    TP_PROTO(const struct smbd_sock *sk, bool write, u32 ndesc, u64 len,
		     long ret),
	    TP_ARGS(sk, write, ndesc, len, ret),
	    TP_STRUCT__entry(__field(u32, conn)
			     __field(bool, write)
			     __field(u32, ndesc)
			     __field(u64, len)
			     __field(long, ret)
			     ),
	    TP_fast_assign(__entry->conn = sk->ss_id;
			   __entry->write = write;
			   __entry->ndesc = ndesc;
			   __entry->len = len;
			   __entry->ret = ret;
			   ),
	    TP_printk("conn=%u %s descriptors=%u len=%llu ret=%ld", __entry->conn,
		      __entry->write ? "write" : "read", __entry->ndesc,
		      __entry->len, __entry->ret)
	    );

/*
 * A completion on @cq (whose context is the socket) of the context @c
 * names (struct smbd_cqe), with the status its handler acts on; the
 * vendor error only for a failure (a successful completion's is not
 * defined).
 */
DECLARE_EVENT_CLASS(smbd_wc_class,
		    TP_PROTO(const struct ib_cq *cq, const struct smbd_cqe *c,
			     const struct ib_wc *wc),
		    TP_ARGS(cq, c, wc),
		    TP_STRUCT__entry(__field(u32, conn)
				     __field(u32, cq_id)
				     __field(u32, cid)
				     __field(u8, kind)
				     __field(unsigned long, status)
				     __field(u32, vendor_err)
				     ),
		    TP_fast_assign(__entry->conn =
					((const struct smbd_sock *)cq->cq_context)->ss_id;
				   __entry->cq_id = cq->res.id;
				   __entry->cid = c->id;
				   __entry->kind = c->kind;
				   __entry->status = wc->status;
				   __entry->vendor_err = wc->status == IB_WC_SUCCESS ?
							 0 : wc->vendor_err;
				   ),
		    TP_printk("conn=%u cq=%u cid=%u kind=%s status=%s (%lu/0x%x)",
			      __entry->conn, __entry->cq_id, __entry->cid,
			      smbd_show_wc_kind(__entry->kind),
			      rdma_show_wc_status(__entry->status),
			      __entry->status, __entry->vendor_err)
		    );

#define DEFINE_SMBD_WC_EVENT(name)					\
	DEFINE_EVENT(smbd_wc_class, name,				\
		     TP_PROTO(const struct ib_cq *cq,			\
			      const struct smbd_cqe *c,			\
			      const struct ib_wc *wc),			\
		     TP_ARGS(cq, c, wc))

/* A completion that succeeded. */
DEFINE_SMBD_WC_EVENT(smbd_wc_done);
/* A work request flushed: its queue pair left RTS (a teardown, an error). */
DEFINE_SMBD_WC_EVENT(smbd_wc_flush);
/* A work request that failed (or that fail_wc reported failed). */
DEFINE_SMBD_WC_EVENT(smbd_wc_error);

#endif /* _SMBD_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE smbd_trace
#include <trace/define_trace.h>

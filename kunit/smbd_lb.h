/* SPDX-License-Identifier: GPL-2.0 */
/*
 * KUnit: the loopback fixture of the connection layer's suite
 * (smbd_lb.c): two ends joined by a fake endpoint, raw peers, injected
 * errors, and the helpers the cases drive them with.
 */
#ifndef SMBD_LB_H
#define SMBD_LB_H

#include <kunit/test.h>
#include <linux/bvec.h>
#include <linux/cache.h>
#include <linux/debug_locks.h>
#include <linux/delay.h>
#include <linux/dma-mapping.h>
#include <linux/kthread.h>
#include <linux/mm.h>
#include <linux/sched/task.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/uio.h>
#include <linux/workqueue.h>
#include <net/net_namespace.h>
#include <rdma/ib_verbs.h>

#include "smbd_internal.h"
#include "smbd_pdu.h"

#define LB_RQ		512		/* receives an end can hold posted */
#define LB_WAIT_MS	5000		/* longest a case waits for an event */
#define LB_STATUS_NOT_SUPPORTED	0xc00000bb

enum lb_order { LB_FIFO, LB_RECV_FIRST, LB_SEND_FIRST };

struct lb_end;

/* A completion (or the peer's disconnect) waiting for delivery. */
struct lb_wc {
	struct list_head node;
	u64 seq;			/* posting order, across the queues */
	u32 sq_wrs;			/* send queue entries its polling frees */
	bool disconnect;		/* rdma_cm's DISCONNECTED, not a wc */
	struct ib_wc wc;
};

struct lb_rx {				/* a posted receive */
	struct ib_cqe *cqe;
	u64 addr;
	u32 len;
};

struct lb_msg {				/* a message a raw peer received */
	struct list_head node;
	u32 len;
	u8 data[];
};

struct lb_end {
	struct smbd_sock *sk;		/* NULL: raw, or destroyed */
	bool raw;
	bool mrs;			/* its socket gets an MR pool */
	struct lb_end *peer;
	struct ib_qp qp;
	struct ib_cq send_cq;
	struct ib_cq recv_cq;
	struct lb_rx rq[LB_RQ];
	u32 rq_head;
	u32 rq_len;
	bool errored;
	int fail_send;			/* refuse the data send this many on */
	int fail_recv;			/* the same for receives; -1: never */
	u32 sends;			/* send requests taken */
	u32 signalled;			/* of them, signalled */
	u32 data_sends;			/* of them, Data Transfer with payload */
	u32 data_signalled;		/* of those, signalled */
	u32 rnr;			/* sends that found no receive posted */
	/*
	 * The send queue, as strict as a device that reuses an entry only
	 * once a completion at or after it was polled: entries in use, of
	 * them unsignalled ones no completion covers yet, the most in use
	 * at once, and posts refused for want of one.
	 */
	u32 sq_used;
	u32 sq_unsig;
	u32 sq_peak;
	u32 sq_full;
	u32 flushed;			/* completions flushed */
	u32 leftover;			/* posted or queued at destroy */
	bool disconnected;		/* a raw peer was told */
	/*
	 * The connection manager id the socket holds. As rdma_cm does, a
	 * handler runs under id_mutex, and the id goes once: destroyed by
	 * the socket, or by "rdma_cm" when a handler returned non-zero.
	 */
	struct rdma_cm_id id;
	struct mutex id_mutex;		/* a handler runs under it */
	bool id_gone;
	u32 id_destroys;
	/* Once: the removal comes while the socket's release destroys the id. */
	bool rm_in_destroy;
	int rm_ret;
	u32 socks;			/* sockets it was, each with an id */
	struct smbd_sock *dead;		/* its verbs gone, still to release */
	/*
	 * Once: the next data send's poster, once its completions have
	 * run, stops in the post (@stalled) until the case lets it go on.
	 */
	bool stall_post;
	struct completion stalled, go;
	bool hold_send;			/* its send completions wait */
	struct list_head send_q;	/* completions for the send CQ */
	struct list_head recv_q;	/* for the receive CQ */
	struct list_head msgs;		/* raw: what it received */
	u32 nmsgs;
};

struct lb_pair {
	spinlock_t lock;		/* everything below */
	struct work_struct work;	/* delivers completions */
	struct workqueue_struct *wq;
	wait_queue_head_t raw_wq;	/* a raw peer received something */
	bool hold;
	enum lb_order order;
	u64 seq;
	struct lb_end a;		/* the initiator */
	struct lb_end b;		/* the responder */
	struct ib_device dev;
	struct ib_pd pd;
	/*
	 * A fake listener, whose connection request makes b its child
	 * (conn_child_fails_in_window()): the request's handler has
	 * returned; the child's state_change upcalls, those that came
	 * after that return; its disconnects of an id it still held.
	 */
	struct smbd_sock *lsk;
	bool child_returned;
	u32 child_upcalls;
	bool child_upcall_late;
	u32 child_disc_with_id;
	/*
	 * Drains that began with the socket's gate open: a thread could
	 * still post behind the drain's marker (every case checks none).
	 */
	u32 drain_gate_open;
};

/* A reader in its own thread, as a consumer's receive loop is. */
struct lb_thread {
	struct task_struct *task;
	struct completion done;
	struct smbd_sock *sk;
	void *buf;
	u32 len;
	struct smbd_recv_info info;
	ssize_t ret;
};

/* A send on a thread of its own, so that the case can bound its wait. */
struct lb_xmit {
	struct completion done;
	struct task_struct *task;
	struct smbd_sock *sk;
	struct iov_iter it;
	unsigned int flags;
	ssize_t ret;
};

/* Poll @cond for up to @ms milliseconds; its last value. */
#define lb_until_ms(cond, ms) ({					\
	unsigned long __end = jiffies + msecs_to_jiffies(ms);		\
	bool __ok;							\
	while (!(__ok = (cond)) && time_before(jiffies, __end))		\
		usleep_range(1000, 2000);				\
	__ok;								\
})

#define lb_until(cond) lb_until_ms(cond, LB_WAIT_MS)

/* The cases run one at a time; the fake's calls find their pair here. */
extern struct lb_pair *lb_cur;
extern const struct smbd_device lb_sd;

int lb_post_send(struct smbd_sock *sk, const struct ib_send_wr *first,
		 const struct ib_send_wr **bad);
int lb_post_recv(struct smbd_sock *sk, const struct ib_recv_wr *first,
		 const struct ib_recv_wr **bad);
int lb_to_error(struct smbd_sock *sk);
bool lb_idle(struct lb_pair *lp, struct lb_end *e);
void lb_hold(struct lb_pair *lp, bool hold);
void lb_drain(struct smbd_sock *sk);
void lb_disconnect(struct smbd_sock *sk);
void lb_destroy(struct smbd_sock *sk);
void lb_destroy_id(struct smbd_sock *sk, struct rdma_cm_id *id);
int lb_cm_event(struct lb_end *e, enum rdma_cm_event_type type);
struct lb_pair *lb_pair(struct kunit *test);
struct smbd_sock *lb_sock_sd(struct kunit *test, struct lb_end *e,
			     const struct smbd_params *p,
			     const struct smbd_device *sd, int *err);
struct smbd_sock *lb_sock(struct kunit *test, struct lb_end *e,
			  const struct smbd_params *p);
void lb_release(struct lb_end *e);
void lb_exit(struct kunit *test);
enum smbd_state lb_state(struct smbd_sock *sk);
enum smbd_state lb_wait_state(struct smbd_sock *sk,
			      enum smbd_state state);
u32 lb_send_credits(struct smbd_sock *sk);
void lb_connect_pair(struct kunit *test, struct lb_pair *lp,
		     const struct smbd_params *pa,
		     const struct smbd_params *pb,
		     const struct smbd_device *sd);
void lb_connect_sd(struct kunit *test, const struct smbd_params *pa,
		   const struct smbd_params *pb,
		   const struct smbd_device *sd);
void lb_connect(struct kunit *test, const struct smbd_params *pa,
		const struct smbd_params *pb);
void lb_fill(u8 *buf, u32 len, u32 seed);
ssize_t lb_send(struct smbd_sock *sk, void *buf, size_t len,
		unsigned int flags);
ssize_t lb_recv(struct smbd_sock *sk, void *buf, size_t len,
		unsigned int flags, struct smbd_recv_info *info);
void lb_run_reader(struct kunit *test, struct lb_thread *t,
		   struct smbd_sock *sk, void *buf, u32 len);
bool lb_done(struct completion *c);
bool lb_reader_finish(struct lb_thread *t);
ssize_t lb_send_within(struct smbd_sock *sk, void *buf, size_t len,
		       unsigned int ms);
ssize_t lb_send_soon(struct smbd_sock *sk, void *buf, size_t len);
struct lb_xmit *lb_xmit_start(struct kunit *test, struct smbd_sock *sk,
			      const struct iov_iter *it,
			      unsigned int flags);
bool lb_xmit_asleep(const struct lb_xmit *x);
ssize_t lb_xmit_finish(struct kunit *test, struct lb_xmit *x);
ssize_t lb_send_bounded(struct kunit *test, struct smbd_sock *sk,
			const struct iov_iter *it, unsigned int flags);
void lb_roundtrip_flags(struct kunit *test, struct smbd_sock *from,
			struct smbd_sock *to, u32 len, u32 seed,
			unsigned int flags);
void lb_roundtrip(struct kunit *test, struct smbd_sock *from,
		  struct smbd_sock *to, u32 len, u32 seed);
u32 lb_payload(struct smbd_sock *sk);
void lb_raw(struct lb_pair *lp, struct lb_end *e);
enum ib_wc_status lb_raw_send(struct lb_pair *lp, struct lb_end *raw,
			      const void *buf, u32 len);
enum ib_wc_status lb_raw_send_inv(struct lb_pair *lp,
				  struct lb_end *raw, const void *buf,
				  u32 len, u32 rkey);
struct lb_msg *lb_raw_msg(struct kunit *test, struct lb_pair *lp,
			  struct lb_end *raw, u32 i);
void lb_neg_req(struct smbd_neg_req_pdu *q, u16 minv, u16 maxv,
		u16 credits, u32 send, u32 recv, u32 frag);
void lb_neg_resp(struct smbd_neg_resp_pdu *r, u16 granted, u32 send,
		 u32 recv);
u32 lb_data(u8 *buf, u16 requested, u16 granted, u16 flags,
	    u32 remaining, u32 off, u32 len);
void lb_raw_responder_on(struct kunit *test, struct lb_pair *lp,
			 u16 granted, const struct smbd_params *p);
void lb_raw_responder(struct kunit *test, u16 granted);
struct smbd_sock *lb_raw_initiator(struct kunit *test, u16 credits,
				   const struct smbd_params *p);

#endif /* SMBD_LB_H */

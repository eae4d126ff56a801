/* SPDX-License-Identifier: GPL-2.0 */
/*
 * smbd_tpeer.h: the raw-verbs test peer shared by the test modules that
 * must speak to smbd as a peer smbd does not control (tests/fault,
 * tests/hostile). It knows RDMA and nothing of SMB Direct: a reliable
 * connection over rdma_cm with fixed pools of send and receive buffers,
 * each mapped once. What goes in the buffers is the test module's.
 *
 * The library is tests/peer/smbd_tpeer.c, built into each module that
 * uses it (a one-line tpeer.c there includes it), so each has its own
 * copy and none exports a symbol.
 *
 * A connection is a struct tpeer at the start of a structure of the
 * module's own (cfg.size bytes, zeroed), made by tpeer_alloc() and
 * tpeer_connect() or accepted by a tpeer_listener; tpeer_destroy() frees
 * it. Receives complete onto a queue the module empties with
 * tpeer_next() and posts again with tpeer_post_recv(); sends go from
 * tpeer_tx_slot() buffers, signalled, and complete in order.
 */
#ifndef SMBD_TPEER_H
#define SMBD_TPEER_H

#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/list.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>

/**
 * struct tpeer_cfg - the shape of a test peer's connection
 * @nr_rx: receive buffers
 * @nr_post: of them, how many are posted when the queue pair is made
 * @nr_tx: send buffers, the sends in flight at most
 * @buf_size: bytes in each buffer
 * @rnr_retry: the RNR retry count we offer (7: for ever)
 * @size: bytes to allocate per connection, at least sizeof(struct tpeer):
 *	the module's structure, with its struct tpeer first
 * @priv: private data to send with the connect request or the accept
 *	(an IRD/ORD negotiate header, [MS-SMBD] 6.1), or NULL for none
 * @priv_len: its length
 * @ird: the RDMA read depth offered to rdma_cm, incoming (0: 1)
 * @ord: outgoing (0: 1)
 */
struct tpeer_cfg {
	u32 nr_rx;
	u32 nr_post;
	u32 nr_tx;
	u32 buf_size;
	u8 rnr_retry;
	size_t size;
	const void *priv;
	u8 priv_len;
	u8 ird, ord;
};

/* The most private data of the peer a connection keeps. */
#define TPEER_PRIV_MAX	32

struct tpeer;

/* A receive buffer; @len is what the last completion brought. */
struct tpeer_rx {
	struct ib_cqe cqe;
	struct tpeer *p;
	void *buf;
	u64 dma;
	u32 len;
	struct list_head node;		/* on tpeer.ready */
};

/* A send buffer, mapped to the device once. */
struct tpeer_tx {
	struct ib_cqe cqe;
	struct tpeer *p;
	void *buf;
	u64 dma;
};

enum { TPEER_LISTENER = 1, TPEER_CONN };

/**
 * struct tpeer - one connection of the test peer
 * @kind: TPEER_CONN (an rdma_cm id's context is a listener or a tpeer)
 * @cfg: its shape, copied at allocation
 * @id: the rdma_cm id, with its queue pair once connected
 * @pd: the protection domain
 * @cq: one completion queue for sends and receives, polled on a workqueue
 * @rx: @cfg.nr_rx receive buffers
 * @tx: @cfg.nr_tx send buffers, used in turn from @tx_head
 * @tx_head: the next send buffer; the test thread's only
 * @tx_busy: sends posted and not completed
 * @lock: protects @ready
 * @ready: receives completed, not yet taken by tpeer_next()
 * @lnode: on the listener's queue until taken
 * @wait: woken by every completion and by the end of the connection
 * @resolved: the route is resolved (or could not be)
 * @established: the connection is up (or will never be)
 * @cm_event: the rdma_cm event that ended the connection (or
 *	RDMA_CM_EVENT_ROUTE_ERROR when no route could be asked for); 0, which
 *	is no such event, before
 * @tx_err: -EIO once a send completed in error; it stays
 * @disc: the connection ended or a receive completed in error
 * @active: made by tpeer_connect()
 * @cm_priv: the private data the other end sent (its request, for an
 *	accepted connection; its reply, once one of tpeer_connect()'s is
 *	established), the first TPEER_PRIV_MAX bytes
 * @cm_priv_len: how much of it there was, up to TPEER_PRIV_MAX
 * @cm_resp: responder_resources of the same event, as rdma_cm gave it
 *	(a request's: the requester's ORD, seen from here)
 * @cm_init: initiator_depth of the same event (a request's: the
 *	requester's IRD)
 */
struct tpeer {
	int kind;
	struct tpeer_cfg cfg;
	struct rdma_cm_id *id;
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct tpeer_rx *rx;
	struct tpeer_tx *tx;
	unsigned int tx_head;
	atomic_t tx_busy;
	int tx_err;
	spinlock_t lock;		/* protects ready */
	struct list_head ready;
	struct list_head lnode;
	wait_queue_head_t wait;
	struct completion resolved, established;
	int cm_event;
	bool disc;
	bool active;
	u8 cm_priv[TPEER_PRIV_MAX];
	u8 cm_priv_len;
	u8 cm_resp, cm_init;
};

/**
 * struct tpeer_listener - accepts connections for a test thread to take
 * @kind: TPEER_LISTENER
 * @cfg: the shape of each connection accepted
 * @id: the listening rdma_cm id
 * @lock: protects @conns
 * @conns: accepted, not yet taken by tpeer_take()
 * @wait: woken by each connection accepted
 */
struct tpeer_listener {
	int kind;
	struct tpeer_cfg cfg;
	struct rdma_cm_id *id;
	spinlock_t lock;		/* protects conns */
	struct list_head conns;
	wait_queue_head_t wait;
};

struct tpeer *tpeer_alloc(const struct tpeer_cfg *cfg);
int tpeer_connect(struct tpeer *p, struct sockaddr *dst);
void tpeer_destroy(struct tpeer *p);

int tpeer_listen(struct tpeer_listener *l, struct sockaddr *addr,
		 int backlog, const struct tpeer_cfg *cfg);
struct tpeer *tpeer_take(struct tpeer_listener *l, unsigned int ms);
void tpeer_unlisten(struct tpeer_listener *l);

int tpeer_post_recv(struct tpeer *p, struct tpeer_rx *rx);
struct tpeer_rx *tpeer_next(struct tpeer *p);
struct tpeer_rx *tpeer_recv(struct tpeer *p, unsigned int ms);
void tpeer_wait_rx(struct tpeer *p, unsigned int ms);
bool tpeer_wait_down(struct tpeer *p, unsigned int ms);

struct tpeer_tx *tpeer_tx_slot(struct tpeer *p);
int tpeer_post(struct tpeer *p, struct tpeer_tx *tx, u32 len);
int tpeer_send(struct tpeer *p, u32 len);

#endif /* SMBD_TPEER_H */

// SPDX-License-Identifier: GPL-2.0
/*
 * smbd_churn.ko: a consumer that gives up at every step of a connection,
 * in both roles, thousands of times, to prove the ownership rule between
 * rdma_cm's event handler and smbd_sock_release() (Documentation/smbd.rst,
 * "Ownership"). Driven from the guest:
 *
 *   echo "<command> <ip> <port> [key=value...]" > /sys/kernel/debug/smbd_churn/ctl
 *   cat /sys/kernel/debug/smbd_churn/result
 *
 * Commands:
 *   initiator  an smbd listener on <ip>:<port> whose accept thread takes
 *              connections and releases them after 0-3 ms; iters= (1000)
 *              initiators from threads= (4) threads each release their
 *              socket at one step of connect, in turn: right after
 *              create, right after connect_async, once the address is
 *              resolved, once the route is resolved (the connect request
 *              goes out while the queue pair is being built), once
 *              established (negotiating), once connected, or after a
 *              random delay. Every step must have been seen at a release.
 *   responder  iters= (200) rounds: a listener on <ip>:<port>, conns= (4)
 *              initiators connecting to it, and the listener released,
 *              in turn, once a child is negotiating, once one is queued
 *              for accept, or after a random delay of up to max_ms=
 *              (400); some rounds accept one first and release it at
 *              once, some shut the listener down before releasing it. Releases of listeners holding
 *              negotiating and holding queued children must be seen.
 *   health     a fresh connect and a 64 KiB echo on <ip>:<port> work.
 *   cq-free    iters= (4) rounds of a connect, a 64 KiB echo and the
 *              release of both ends, with the device's req_notify_cq
 *              held delay_ms= (40) ms whenever the completion queue's
 *              softirq poll handler rearms it (a kprobe): the window in
 *              which an unpatched ib_free_cq() frees a softirq CQ under
 *              its handler is opened wide, and KASAN reports the
 *              use-after-free unless smbd waits the handler out
 *              (struct smbd_cq_grave in smbd_ep.c).
 *   listen-close  (siw) iters= (4) listeners released while the TCP
 *              handshake of a connection to them is held delay_ms= ms
 *              between the child socket's clone and its queueing (a
 *              kprobe): TCP then drops the child, whose callbacks are
 *              the listener's, and KASAN reports a use-after-free
 *              unless siw frees its listening endpoint only after such
 *              handshakes (tests/kernel/siw-listener-children.patch).
 *   quiet=1    (any command) errors that come from a device going away
 *              are expected: no coverage check (rdma link delete runs).
 *   secs=N     (initiator) stop handing out iterations after N s.
 *
 * The step a socket was at when released is read from smbd's private
 * socket state (this is a white-box test).
 */
#define pr_fmt(fmt) "smbd_churn: " fmt

#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/inet.h>
#include <linux/kprobes.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/random.h>
#include <linux/uio.h>
#include <linux/vmalloc.h>
#include <net/inet_sock.h>
#include <net/net_namespace.h>
#include <net/tcp_states.h>

#include "smbd_internal.h"
#include "../include/smbd_testctl.h"

static struct testctl tc;

/* Where an initiator is released: the steps of [MS-SMBD] 3.1.4.1. */
enum churn_step {
	CS_CREATED,		/* created, never connected */
	CS_STARTED,		/* connect_async returned, no CM event yet */
	CS_ADDR,		/* address resolved, route being resolved */
	CS_ROUTE,		/* route resolved: QP built, request out */
	CS_NEGOTIATING,		/* established, negotiation running */
	CS_CONNECTED,		/* negotiated */
	CS_RANDOM,		/* after a random delay */
	CS_NR,
};

static const char * const step_names[CS_NR] = {
	"created", "started", "addr-resolved", "route-resolved",
	"negotiating", "connected", "random",
};

struct churn_run {
	struct sockaddr_storage dst;
	u32 iters;
	u32 threads;
	unsigned long deadline;		/* jiffies; 0: none */
	bool quiet;
	atomic_t next;			/* iterations handed out */
	atomic_t seen[CS_NR];		/* releases at each step */
	atomic_t released;		/* sockets released */
	atomic_t connected;		/* attempts that reached CONNECTED */
	atomic_t failed;		/* attempts that ended with an error */
	atomic_t running;
	struct completion done;
};

/* The step @sk is at now, from its state and the last CM event. */
static enum churn_step churn_step_of(struct smbd_sock *sk)
{
	enum smbd_state state = READ_ONCE(sk->ss_state);
	int ev = READ_ONCE(sk->ss_cm_last);

	if (state == SMBD_CONNECTED)
		return CS_CONNECTED;
	if (state == SMBD_NEGOTIATING)
		return CS_NEGOTIATING;
	if (state != SMBD_CONNECTING)
		return CS_NR;	/* failed or ended */
	switch (ev) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		return CS_ADDR;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		return CS_ROUTE;
	case -1:
		return CS_STARTED;
	default:
		return CS_NR;
	}
}

/*
 * Wait until @sk reaches @want or passes it (or fails), polling: the
 * events run on rdma_cm's workqueue and smbd's completion handlers.
 * Returns the step seen last.
 */
static enum churn_step churn_wait_step(struct smbd_sock *sk,
				       enum churn_step want)
{
	unsigned long end = jiffies + 10 * HZ;
	enum churn_step s;

	for (;;) {
		s = churn_step_of(sk);
		if (s == CS_NR || s >= want || time_after(jiffies, end))
			return s;
		usleep_range(10, 30);
	}
}

static void churn_one(struct churn_run *r, u32 i)
{
	enum churn_step want = i % CS_NR, at;
	struct smbd_params sp;
	struct smbd_sock *sk;
	int ret;

	smbd_params_init(&sp, false);
	sp.negotiate_timeout_ms = 10000;
	if (smbd_sock_create(&init_net, &sp, &sk))
		return;
	at = CS_CREATED;
	if (want == CS_CREATED)
		goto release;
	ret = smbd_sock_connect_async(sk, (struct sockaddr *)&r->dst, NULL);
	if (ret) {
		atomic_inc(&r->failed);
		at = CS_NR;
		goto release;
	}
	if (want == CS_RANDOM) {
		usleep_range(1, 1 + get_random_u32_below(20000));
		at = CS_RANDOM;
	} else {
		at = churn_wait_step(sk, want);
	}
	if (READ_ONCE(sk->ss_state) == SMBD_CONNECTED)
		atomic_inc(&r->connected);
	if (at == CS_NR)
		atomic_inc(&r->failed);
release:
	if (at != CS_NR)
		atomic_inc(&r->seen[at]);
	smbd_sock_release(sk);
	atomic_inc(&r->released);
}

static int churn_thread(void *arg)
{
	struct churn_run *r = arg;
	u32 i;

	while ((i = atomic_inc_return(&r->next) - 1) < r->iters) {
		if (r->deadline && time_after(jiffies, r->deadline))
			break;
		churn_one(r, i);
		cond_resched();
	}
	if (atomic_dec_and_test(&r->running))
		complete(&r->done);
	return 0;
}

/* Run r->threads churn threads to the end. */
static void churn_threads(struct churn_run *r)
{
	u32 t;

	init_completion(&r->done);
	atomic_set(&r->running, 1);
	for (t = 0; t < r->threads; t++) {
		struct task_struct *k;

		atomic_inc(&r->running);
		k = kthread_run(churn_thread, r, "smbd_churn/%u", t);
		if (IS_ERR(k))
			atomic_dec(&r->running);
	}
	/* In slices: a long churn is no hung task. */
	if (!atomic_dec_and_test(&r->running))
		while (!wait_for_completion_timeout(&r->done, 10 * HZ))
			;
}

/* The listener side of the initiator churn: accept, hold briefly, release. */
struct churn_acceptor {
	struct smbd_sock *lsk;
	struct task_struct *task;
	atomic_t accepted;
};

static int churn_accept_thread(void *arg)
{
	struct churn_acceptor *a = arg;
	struct smbd_sock *sk;

	while (!kthread_should_stop()) {
		if (smbd_sock_accept(a->lsk, &sk, SMBD_RECV_NONBLOCK)) {
			usleep_range(200, 500);
			continue;
		}
		atomic_inc(&a->accepted);
		usleep_range(1, 1 + get_random_u32_below(3000));
		smbd_sock_release(sk);
	}
	return 0;
}

static int churn_listen(struct sockaddr_storage *addr, u32 backlog,
			struct smbd_sock **lskp)
{
	struct smbd_params sp;
	int ret;

	smbd_params_init(&sp, true);
	ret = smbd_sock_create(&init_net, &sp, lskp);
	if (ret)
		return ret;
	ret = smbd_sock_bind(*lskp, (struct sockaddr *)addr) ?:
	      smbd_sock_listen(*lskp, backlog);
	if (ret) {
		smbd_sock_release(*lskp);
		*lskp = NULL;
	}
	return ret;
}

static void cmd_initiator(struct churn_run *r)
{
	struct churn_acceptor a = {};
	unsigned long start = jiffies;
	char line[200];
	size_t n = 0;
	u32 s, missing = 0;
	int ret;

	ret = churn_listen(&r->dst, 64, &a.lsk);
	if (!testctl_check(&tc.out, !ret, NULL, "initiator-listen", "%d", ret))
		return;
	a.task = kthread_run(churn_accept_thread, &a, "smbd_churn/acc");
	if (IS_ERR(a.task)) {
		smbd_sock_release(a.lsk);
		return;
	}
	churn_threads(r);
	kthread_stop(a.task);
	smbd_sock_release(a.lsk);

	for (s = 0; s < CS_NR; s++) {
		n += scnprintf(line + n, sizeof(line) - n, " %s %d",
			       step_names[s], atomic_read(&r->seen[s]));
		if (!atomic_read(&r->seen[s]))
			missing++;
	}
	testctl_info(&tc.out, "initiator %d releases in %u ms, %d connected, %d failed, %d accepted; at:%s",
		     atomic_read(&r->released),
		     jiffies_to_msecs(jiffies - start),
		     atomic_read(&r->connected), atomic_read(&r->failed),
		     atomic_read(&a.accepted), line);
	if (r->quiet)
		return;
	testctl_check(&tc.out, !missing, NULL, "initiator-every-step",
		      "%u of %u steps never seen at a release", missing,
		      (u32)CS_NR);
	testctl_check(&tc.out, atomic_read(&r->connected) > 0, NULL,
		      "initiator-some-connected", "%d",
		      atomic_read(&r->connected));
}

/* Wait up to 5 s for a listener's count at @n to be non-zero. */
static void churn_wait_listener(struct smbd_sock *lsk, u32 *n)
{
	unsigned long end = jiffies + 5 * HZ;

	while (!READ_ONCE(*n) && time_before(jiffies, end))
		usleep_range(50, 100);
}

/* One round of the responder churn. */
static void churn_round(struct churn_run *r, u32 conns, u32 max_ms,
			u32 round, atomic_t *pending_seen, atomic_t *queued_seen)
{
	struct smbd_sock *lsk, *acc, **cl;
	struct smbd_params sp;
	u32 i;

	cl = kcalloc(conns, sizeof(*cl), GFP_KERNEL);
	if (!cl)
		return;
	if (churn_listen(&r->dst, conns, &lsk)) {
		atomic_inc(&r->failed);
		kfree(cl);
		return;
	}
	smbd_params_init(&sp, false);
	sp.negotiate_timeout_ms = 10000;
	for (i = 0; i < conns; i++) {
		if (smbd_sock_create(&init_net, &sp, &cl[i]))
			continue;
		if (smbd_sock_connect_async(cl[i], (struct sockaddr *)&r->dst,
					    NULL))
			atomic_inc(&r->failed);
	}
	/* Release with children negotiating, queued, or at random. */
	switch (round % 3) {
	case 0:
		churn_wait_listener(lsk, &lsk->ss_lq->pending_len);
		break;
	case 1:
		churn_wait_listener(lsk, &lsk->ss_lq->accept_len);
		break;
	default:
		usleep_range(1, 1 + get_random_u32_below(max_ms * 1000 + 1));
	}
	if (round % 4 == 1 && !smbd_sock_accept(lsk, &acc, SMBD_RECV_NONBLOCK))
		smbd_sock_release(acc);
	if (round % 5 == 2)
		smbd_sock_shutdown(lsk);
	if (READ_ONCE(lsk->ss_lq->pending_len))
		atomic_inc(pending_seen);
	if (READ_ONCE(lsk->ss_lq->accept_len))
		atomic_inc(queued_seen);
	for (i = 0; i < conns; i++)
		if (cl[i] && READ_ONCE(cl[i]->ss_state) == SMBD_CONNECTED)
			atomic_inc(&r->connected);
	smbd_sock_release(lsk);
	for (i = 0; i < conns; i++)
		smbd_sock_release(cl[i]);
	kfree(cl);
}

static void cmd_responder(struct churn_run *r, u32 conns, u32 max_ms)
{
	unsigned long start = jiffies;
	atomic_t pending_seen, queued_seen;
	u32 i;

	atomic_set(&pending_seen, 0);
	atomic_set(&queued_seen, 0);
	for (i = 0; i < r->iters; i++)
		churn_round(r, conns, max_ms, i, &pending_seen, &queued_seen);
	testctl_info(&tc.out, "responder %u listener releases in %u ms, %d with children negotiating, %d with children queued, %d initiators connected, %d failed",
		     r->iters, jiffies_to_msecs(jiffies - start),
		     atomic_read(&pending_seen), atomic_read(&queued_seen),
		     atomic_read(&r->connected), atomic_read(&r->failed));
	if (r->quiet)
		return;
	testctl_check(&tc.out, atomic_read(&pending_seen) > 0, NULL,
		      "responder-release-negotiating", "%d",
		      atomic_read(&pending_seen));
	testctl_check(&tc.out, atomic_read(&queued_seen) > 0, NULL,
		      "responder-release-queued", "%d",
		      atomic_read(&queued_seen));
}

/* A new connection still negotiates and moves data both ways. */
static void cmd_health(struct churn_run *r)
{
	struct smbd_sock *lsk = NULL, *srv = NULL, *cli = NULL;
	const size_t len = 65536;
	u8 *tx = vmalloc(len), *rx = vmalloc(len);
	struct kvec kv;
	struct iov_iter it;
	ssize_t n = -ENOMEM;
	int ret = -ENOMEM;

	if (!tx || !rx)
		goto out;
	get_random_bytes(tx, len);
	ret = churn_listen(&r->dst, 4, &lsk) ?:
	      smbd_sock_create(&init_net, NULL, &cli) ?:
	      smbd_sock_connect(cli, (struct sockaddr *)&r->dst) ?:
	      smbd_sock_accept(lsk, &srv, 0);
	if (ret)
		goto out;
	kv.iov_base = tx;
	kv.iov_len = len;
	iov_iter_kvec(&it, ITER_SOURCE, &kv, 1, len);
	n = smbd_sock_send(cli, &it, 0);
	if (n != len)
		goto out;
	kv.iov_base = rx;
	iov_iter_kvec(&it, ITER_DEST, &kv, 1, len);
	n = smbd_sock_recv(srv, &it, 0, NULL);
out:
	testctl_check(&tc.out, !ret && n == len && !memcmp(tx, rx, len), NULL,
		      "health", "connect %d, message %zd of %zu bytes", ret, n,
		      len);
	smbd_sock_release(cli);
	smbd_sock_release(srv);
	smbd_sock_release(lsk);
	vfree(tx);
	vfree(rx);
}

#ifdef CONFIG_KPROBES
/* The delay the cq-free probe holds a softirq rearm for, 0: none. */
static u32 cqf_delay_ms;
static atomic_t cqf_held;

static int cqf_pre(struct kprobe *p, struct pt_regs *regs)
{
	u32 ms = READ_ONCE(cqf_delay_ms);

	/* ib_poll_handler(), after its irq_poll_complete() */
	if (ms && in_serving_softirq()) {
		atomic_inc(&cqf_held);
		mdelay(ms);
	}
	return 0;
}

/* One connection, an echo, and both ends released with the probe armed. */
static int cqf_round(struct churn_run *r, struct smbd_sock *lsk,
		     struct kprobe *kp, u32 delay_ms, u8 *tx, u8 *rx, size_t len)
{
	struct smbd_sock *srv = NULL, *cli = NULL;
	struct iov_iter it;
	struct kvec kv;
	ssize_t n;
	int ret;

	ret = smbd_sock_create(&init_net, NULL, &cli) ?:
	      smbd_sock_connect(cli, (struct sockaddr *)&r->dst) ?:
	      smbd_sock_accept(lsk, &srv, 0);
	if (ret)
		goto out;
	/* The probe goes on the device's own rearm, whichever provider. */
	if (!kp->addr) {
		kp->addr = (kprobe_opcode_t *)cli->ss_ep.ibdev->ops.req_notify_cq;
		ret = register_kprobe(kp);
		if (ret) {
			kp->addr = NULL;
			goto out;
		}
	}
	kv.iov_base = tx;
	kv.iov_len = len;
	iov_iter_kvec(&it, ITER_SOURCE, &kv, 1, len);
	n = smbd_sock_send(cli, &it, 0);
	if (n == len) {
		kv.iov_base = rx;
		iov_iter_kvec(&it, ITER_DEST, &kv, 1, len);
		n = smbd_sock_recv(srv, &it, 0, NULL);
	}
	if (n != len || memcmp(tx, rx, len))
		ret = n < 0 ? n : -EIO;
out:
	WRITE_ONCE(cqf_delay_ms, delay_ms);
	smbd_sock_release(cli);
	smbd_sock_release(srv);
	WRITE_ONCE(cqf_delay_ms, 0);
	return ret;
}

static void cmd_cq_free(struct churn_run *r, u32 delay_ms)
{
	struct kprobe kp = { .pre_handler = cqf_pre };
	struct smbd_sock *lsk = NULL;
	const size_t len = 65536;
	u8 *tx = vmalloc(len), *rx = vmalloc(len);
	int ret = -ENOMEM;
	u32 i = 0;

	atomic_set(&cqf_held, 0);
	if (tx && rx)
		ret = churn_listen(&r->dst, 4, &lsk);
	if (!ret)
		get_random_bytes(tx, len);
	for (; !ret && i < r->iters; i++)
		ret = cqf_round(r, lsk, &kp, delay_ms, tx, rx, len);
	if (kp.addr)
		unregister_kprobe(&kp);
	smbd_sock_release(lsk);
	testctl_check(&tc.out, !ret && i == r->iters, NULL, "cq-free",
		      "%u of %u rounds, error %d", i, r->iters, ret);
	/* Else the window was never opened: the check proves nothing. */
	testctl_check(&tc.out, atomic_read(&cqf_held) > 0, NULL,
		      "cq-free-window", "%d softirq rearms held %u ms",
		      atomic_read(&cqf_held), delay_ms);
	vfree(tx);
	vfree(rx);
}

/* The port whose TCP handshakes the listen-close probe holds, 0: none. */
static u16 lcl_port;
static u32 lcl_delay_ms;
static atomic_t lcl_held, lcl_closed;

/*
 * inet_csk_complete_hashdance(listener, child, req, own_req): the child
 * socket is cloned from the listener (its callbacks and sk_user_data,
 * siw's listening endpoint, with it) and about to be queued for accept,
 * or dropped if the listener is no longer listening. Hold the first one
 * of a round there, in the softirq, while the test releases the listener.
 */
static int lcl_pre(struct kprobe *p, struct pt_regs *regs)
{
	struct sock *sk = (struct sock *)regs_get_kernel_argument(regs, 0);
	u16 port = READ_ONCE(lcl_port);

	if (port && inet_sk(sk)->inet_num == port &&
	    atomic_inc_return(&lcl_held) == 1) {
		mdelay(READ_ONCE(lcl_delay_ms));
		/* Else the test thread came too late: the round shows nothing. */
		if (READ_ONCE(sk->sk_state) != TCP_LISTEN)
			atomic_inc(&lcl_closed);
	}
	return 0;
}

/*
 * One listener, one initiator, and the listener released while the
 * handshake of the initiator's TCP connection (siw's) is held between
 * cloning the child socket and queueing it: the child is dropped once
 * the listener is closed, with the listener's callbacks, after siw freed
 * the listening endpoint unless it waits such handshakes out.
 */
static int lcl_round(struct churn_run *r, u32 delay_ms)
{
	unsigned long end = jiffies + 5 * HZ;
	struct smbd_sock *lsk = NULL, *cli = NULL;
	struct smbd_params sp;
	int ret;

	ret = churn_listen(&r->dst, 4, &lsk);
	if (ret)
		return ret;
	atomic_set(&lcl_held, 0);
	WRITE_ONCE(lcl_delay_ms, delay_ms);
	WRITE_ONCE(lcl_port, ntohs(((struct sockaddr_in *)&r->dst)->sin_port));
	smbd_params_init(&sp, false);
	ret = smbd_sock_create(&init_net, &sp, &cli) ?:
	      smbd_sock_connect_async(cli, (struct sockaddr *)&r->dst, NULL);
	while (!ret && !atomic_read(&lcl_held) && time_before(jiffies, end))
		usleep_range(20, 50);
	smbd_sock_release(lsk);
	WRITE_ONCE(lcl_port, 0);
	smbd_sock_release(cli);
	return ret;
}

static void cmd_listen_close(struct churn_run *r, u32 delay_ms)
{
	struct kprobe kp = {
		.symbol_name = "inet_csk_complete_hashdance",
		.pre_handler = lcl_pre,
	};
	u32 i;
	int ret;

	ret = register_kprobe(&kp);
	if (ret) {
		testctl_check(&tc.out, false, NULL, "listen-close",
			      "kprobe: %d", ret);
		return;
	}
	atomic_set(&lcl_closed, 0);
	for (i = 0; !ret && i < r->iters; i++)
		ret = lcl_round(r, delay_ms);
	unregister_kprobe(&kp);
	testctl_check(&tc.out, !ret, NULL, "listen-close",
		      "%u of %u rounds, error %d", i, r->iters, ret);
	/*
	 * Every round's listener closed while its handshake was held; only
	 * over siw is there a TCP handshake to hold.
	 */
	testctl_check(&tc.out, r->iters && atomic_read(&lcl_closed) == r->iters,
		      NULL, "listen-close-window",
		      "%d of %u listeners closed during a handshake held %u ms",
		      atomic_read(&lcl_closed), r->iters, delay_ms);
}
#else
static void cmd_cq_free(struct churn_run *r, u32 delay_ms)
{
	testctl_out_add(&tc.out, "skip cq-free - no CONFIG_KPROBES\n");
}

static void cmd_listen_close(struct churn_run *r, u32 delay_ms)
{
	testctl_out_add(&tc.out, "skip listen-close - no CONFIG_KPROBES\n");
}
#endif

static int churn_cmd(char *line)
{
	u32 conns = 4, max_ms = 400, port = 0, secs = 0, delay_ms = 40, v;
	char *cmd, *ip, *arg;
	struct churn_run *r;
	int ret = 0;

	cmd = strsep(&line, " ");
	ip = strsep(&line, " ");
	arg = strsep(&line, " ");
	if (!cmd || !ip || !arg || kstrtou32(arg, 0, &port))
		return -EINVAL;
	r = kzalloc(sizeof(*r), GFP_KERNEL);
	if (!r)
		return -ENOMEM;
	r->iters = strcmp(cmd, "responder") ? 1000 : 200;
	if (!strcmp(cmd, "cq-free") || !strcmp(cmd, "listen-close"))
		r->iters = 4;
	r->threads = 4;
	while ((arg = strsep(&line, " "))) {
		if (sscanf(arg, "iters=%u", &v) == 1)
			r->iters = v;
		else if (sscanf(arg, "threads=%u", &v) == 1)
			r->threads = clamp_t(u32, v, 1, 32);
		else if (sscanf(arg, "conns=%u", &v) == 1)
			conns = clamp_t(u32, v, 1, 64);
		else if (sscanf(arg, "max_ms=%u", &v) == 1)
			max_ms = v;
		else if (sscanf(arg, "quiet=%u", &v) == 1)
			r->quiet = v;
		else if (sscanf(arg, "secs=%u", &v) == 1)
			secs = v;
		else if (sscanf(arg, "delay_ms=%u", &v) == 1)
			delay_ms = min_t(u32, v, 200);
		else if (*arg)
			ret = -EINVAL;
	}
	if (secs)
		r->deadline = jiffies + secs * HZ;
	if (!ret)
		ret = testctl_addr(ip, port, &r->dst);
	if (ret)
		goto out;
	if (!strcmp(cmd, "initiator"))
		cmd_initiator(r);
	else if (!strcmp(cmd, "responder"))
		cmd_responder(r, conns, max_ms);
	else if (!strcmp(cmd, "health"))
		cmd_health(r);
	else if (!strcmp(cmd, "cq-free"))
		cmd_cq_free(r, delay_ms);
	else if (!strcmp(cmd, "listen-close"))
		cmd_listen_close(r, delay_ms);
	else
		ret = -EINVAL;
out:
	kfree(r);
	return ret;
}

static int __init smbd_churn_init(void)
{
	return testctl_init(&tc, "smbd_churn", 8192, 256, churn_cmd);
}

static void __exit smbd_churn_exit(void)
{
	testctl_remove(&tc);
	testctl_out_free(&tc.out);
}

module_init(smbd_churn_init);
module_exit(smbd_churn_exit);

MODULE_DESCRIPTION("smbd test: release at every step of connect, both roles");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(SMBD);

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * smbd_testsrv.h: the server the test modules of smbd (tests/<dir>/) run
 * on its public API, included after smbd_testctl.h: a listener thread
 * that accepts, and a thread per connection that runs the module's
 * serve() and then releases the connection.
 *
 * The module embeds struct testsrv first in its server and struct
 * testsrv_conn first in its connection (conn_size), keeps its servers on
 * a list under its command lock, and stops each one with testsrv_stop(),
 * which checks that every thread ended as it must.
 */
#ifndef SMBD_TESTSRV_H
#define SMBD_TESTSRV_H

#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/in6.h>
#include <linux/kthread.h>
#include <linux/list.h>
#include <linux/sched/debug.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <net/ipv6.h>

#include "smbd.h"

struct testsrv;

/* One accepted connection and the thread that serves it. */
struct testsrv_conn {
	struct list_head node;		/* on testsrv.conns */
	struct testsrv *srv;
	struct smbd_sock *sk;		/* NULL once released, under srv->lock */
	struct task_struct *task;	/* a reference of ours */
	struct completion done;		/* serve() returned, sk released */
	u32 id;				/* 1 for the first accepted */
	int end_err;			/* what serve() returned */
	bool ended_by_stop;		/* testsrv_stop() shut it down */
	bool reaped;			/* done was waited for */
};

struct testsrv {
	struct list_head node;		/* on the module's list of servers */
	struct sockaddr_storage addr;	/* as asked: port 0 for the default */
	struct smbd_sock *lsk;
	struct task_struct *task;	/* the listener thread, referenced */
	struct completion done;		/* its accept loop ended */
	struct mutex lock;		/* conns, testsrv_conn.sk */
	struct list_head conns;
	/* set before testsrv_start() */
	int (*serve)(struct testsrv_conn *c);	/* a connection's thread */
	size_t conn_size;	/* of the module's connection, testsrv_conn first */
	const char *name;	/* of the threads: NAME_l, NAME_cID */
	bool reap;		/* free ended connections at each accept */
	/* the listener thread's */
	bool stopping;
	u32 accepted;
	u32 accept_errors;
	int last_accept_err;
};

static inline u16 testsrv_port(const struct sockaddr_storage *a)
{
	if (a->ss_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)a)->sin6_port);
	return ntohs(((const struct sockaddr_in *)a)->sin_port);
}

/* The same family, address and port. */
static inline bool testsrv_addr_eq(const struct sockaddr_storage *a,
				   const struct sockaddr_storage *b)
{
	const struct sockaddr_in6 *a6 = (const void *)a, *b6 = (const void *)b;
	const struct sockaddr_in *a4 = (const void *)a, *b4 = (const void *)b;

	if (a->ss_family != b->ss_family || testsrv_port(a) != testsrv_port(b))
		return false;
	if (a->ss_family == AF_INET6)
		return ipv6_addr_equal(&a6->sin6_addr, &b6->sin6_addr);
	return a4->sin_addr.s_addr == b4->sin_addr.s_addr;
}

/* The server of @list (struct testsrv first in each) on @a, or NULL. */
static inline void *testsrv_find(struct list_head *list,
				 const struct sockaddr_storage *a)
{
	struct testsrv *srv;

	list_for_each_entry(srv, list, node)
		if (testsrv_addr_eq(&srv->addr, a))
			return srv;
	return NULL;
}

/*
 * testsrv_wait: wait for @done; past @quiet_s seconds, show where @task
 * (when known) is stuck, and again every 60 s until it completes.
 * Killable, so that a long run is no hung task.
 */
static inline void testsrv_wait(struct completion *done, const char *what,
				struct task_struct *task, u32 quiet_s)
{
	long left;

	left = wait_for_completion_killable_timeout(done, quiet_s * HZ);
	while (!left) {
		pr_warn("still waiting for %s\n", what);
		if (task)
			sched_show_task(task);
		left = wait_for_completion_killable_timeout(done, 60 * HZ);
	}
	if (left < 0)
		wait_for_completion(done);
}

static int testsrv_conn_thread(void *arg)
{
	struct testsrv_conn *c = arg;
	struct smbd_sock *sk = c->sk;

	/* the fallback when smbd_sock_shutdown() does not end a call */
	allow_signal(SIGKILL);
	c->end_err = c->srv->serve(c);
	mutex_lock(&c->srv->lock);
	c->sk = NULL;
	mutex_unlock(&c->srv->lock);
	smbd_sock_release(sk);
	kthread_complete_and_exit(&c->done, 0);
}

/* Free the connections whose thread has ended (a client that reconnects). */
static inline void testsrv_reap(struct testsrv *srv)
{
	struct testsrv_conn *c, *tmp;
	LIST_HEAD(ended);

	mutex_lock(&srv->lock);
	list_for_each_entry_safe(c, tmp, &srv->conns, node)
		if (completion_done(&c->done))
			list_move_tail(&c->node, &ended);
	mutex_unlock(&srv->lock);
	list_for_each_entry_safe(c, tmp, &ended, node) {
		put_task_struct(c->task);
		list_del(&c->node);
		kfree(c);
	}
}

static int testsrv_listen_thread(void *arg)
{
	struct testsrv *srv = arg;
	struct testsrv_conn *c;
	struct smbd_sock *nsk;
	struct task_struct *t;
	int err;

	/* the fallback when smbd_sock_shutdown() does not end an accept */
	allow_signal(SIGKILL);
	while (!READ_ONCE(srv->stopping)) {
		err = smbd_sock_accept(srv->lsk, &nsk, 0);
		if (err) {
			if (READ_ONCE(srv->stopping) || signal_pending(current))
				break;
			srv->accept_errors++;
			srv->last_accept_err = err;
			pr_info("accept on %pISpc: %d\n", &srv->addr, err);
			if (srv->accept_errors >= 100)
				break;
			msleep(20);
			continue;
		}
		if (srv->reap)
			testsrv_reap(srv);
		c = kzalloc(srv->conn_size, GFP_KERNEL);
		if (!c) {
			smbd_sock_release(nsk);
			continue;
		}
		c->srv = srv;
		c->sk = nsk;
		c->id = ++srv->accepted;
		init_completion(&c->done);
		t = kthread_create(testsrv_conn_thread, c, "%s_c%u", srv->name,
				   c->id);
		if (IS_ERR(t)) {
			smbd_sock_release(nsk);
			kfree(c);
			continue;
		}
		c->task = get_task_struct(t);
		mutex_lock(&srv->lock);
		list_add_tail(&c->node, &srv->conns);
		mutex_unlock(&srv->lock);
		wake_up_process(t);
	}
	kthread_complete_and_exit(&srv->done, 0);
}

/*
 * testsrv_start: @srv (zeroed, with serve, conn_size and name set)
 * listens on @addr with @backlog and accepts on a thread of its own.
 * A bound socket is not a connection yet: connecting it must refuse.
 * Returns 0, or an error with *@step the call that failed (@srv's
 * socket released).
 */
static inline int testsrv_start(struct testsrv *srv,
				const struct sockaddr_storage *addr,
				int backlog, const char **step)
{
	const struct sockaddr *sa = (const struct sockaddr *)addr;
	struct smbd_params p;
	int err;

	srv->addr = *addr;
	mutex_init(&srv->lock);
	INIT_LIST_HEAD(&srv->conns);
	init_completion(&srv->done);
	smbd_params_init(&p, true);
	*step = "smbd_sock_create";
	err = smbd_sock_create(&init_net, &p, &srv->lsk);
	if (err)
		return err;
	*step = "smbd_sock_bind";
	err = smbd_sock_bind(srv->lsk, sa);
	if (err)
		goto fail;
	*step = "smbd_sock_connect_async on a bound socket";
	err = smbd_sock_connect_async(srv->lsk, sa, NULL);
	if (err != -EINVAL) {
		err = err ?: -EISCONN;
		goto fail;
	}
	*step = "smbd_sock_listen";
	err = smbd_sock_listen(srv->lsk, backlog);
	if (err)
		goto fail;
	*step = "kthread_create";
	srv->task = kthread_create(testsrv_listen_thread, srv, "%s_l%u",
				   srv->name, testsrv_port(addr));
	if (IS_ERR(srv->task)) {
		err = PTR_ERR(srv->task);
		goto fail;
	}
	get_task_struct(srv->task);
	wake_up_process(srv->task);
	return 0;
fail:
	smbd_sock_release(srv->lsk);
	srv->lsk = NULL;
	return err;
}

/*
 * testsrv_stop: stop @srv, checking (to @o) that smbd_sock_shutdown()
 * ends its blocked accept (stop/accept-returns-on-shutdown) and each
 * connection's blocked calls (stop/recv-returns-on-shutdown), with
 * SIGKILL as the fallback. With @linger_s, the clients are gone first:
 * each connection must end by itself within @linger_s seconds
 * (stop/peer-release-ends-connections). @ended(c, @arg) sees each
 * connection before it is freed, then the listener is released; @srv
 * itself stays the caller's.
 */
static inline void testsrv_stop(struct testsrv *srv, struct testctl_out *o,
				u32 linger_s,
				void (*ended)(struct testsrv_conn *c, void *arg),
				void *arg)
{
	u32 lingering = 0, linger_id = 0, n = 0;
	unsigned long deadline;
	struct testsrv_conn *c, *tmp;
	bool listener_ok;

	WRITE_ONCE(srv->stopping, true);
	smbd_sock_shutdown(srv->lsk);
	listener_ok = wait_for_completion_timeout(&srv->done, 10 * HZ);
	testctl_check(o, listener_ok, NULL, "stop/accept-returns-on-shutdown",
		      "%s", listener_ok ? "" :
		      "a blocked smbd_sock_accept() did not return in 10 s; SIGKILL");
	if (!listener_ok) {
		sched_show_task(srv->task);
		send_sig(SIGKILL, srv->task, 1);
		testsrv_wait(&srv->done, "the listener thread", srv->task, 10);
	}
	put_task_struct(srv->task);

	deadline = jiffies + linger_s * HZ;
	list_for_each_entry(c, &srv->conns, node) {
		long left = max_t(long, (long)(deadline - jiffies), 1);

		if (!linger_s)
			break;
		if (wait_for_completion_timeout(&c->done, left)) {
			c->reaped = true;
		} else {
			if (!lingering++)
				linger_id = c->id;
			pr_info("connection %u is still up; its thread:\n", c->id);
			sched_show_task(c->task);
		}
	}
	mutex_lock(&srv->lock);
	list_for_each_entry(c, &srv->conns, node) {
		if (c->sk) {
			c->ended_by_stop = true;
			smbd_sock_shutdown(c->sk);
		}
	}
	mutex_unlock(&srv->lock);
	list_for_each_entry_safe(c, tmp, &srv->conns, node) {
		if (!c->reaped && !wait_for_completion_timeout(&c->done, 10 * HZ)) {
			testctl_check(o, false, NULL, "stop/recv-returns-on-shutdown",
				      "connection %u still blocked 10 s after shutdown; sent SIGKILL",
				      c->id);
			sched_show_task(c->task);
			send_sig(SIGKILL, c->task, 1);
			testsrv_wait(&c->done, "a connection thread", c->task, 10);
		}
		put_task_struct(c->task);
		n++;
		if (ended)
			ended(c, arg);
		list_del(&c->node);
		kfree(c);
	}
	if (linger_s)
		testctl_check(o, !lingering, NULL, "stop/peer-release-ends-connections",
			      "%u of %u connections (first: %u) still up %u s after their clients left",
			      lingering, n, linger_id, linger_s);
	smbd_sock_release(srv->lsk);
	srv->lsk = NULL;
}

#endif /* SMBD_TESTSRV_H */

// SPDX-License-Identifier: GPL-2.0
/*
 * smbd_ksmbd: the kernel SMB server's SMB Direct transport on smbd.ko.
 *
 * adapters/build.sh links this file into ksmbd.ko, built from Debian's
 * linux-source-6.12 (fs/smb/server), in place of ksmbd's own
 * transport_rdma.o, with the two files every series shares
 * (adapters/ksmbd-common/): smbd_ksmbd_ports.c listens
 * (ksmbd_rdma_init() and the rest of transport_rdma.h) and hands each
 * negotiated connection to smbd_ksmbd_new_conn() here; smbd_ksmbd_io.c
 * reads, sends and does the RDMA transfers. Here a connection becomes a
 * ksmbd connection with its handler thread (ksmbd_conn_handler_loop), as
 * over ksmbd's TCP transport, and ends. Everything else is smbd's:
 * negotiation, credits, segmentation and reassembly, keep-alive, RDMA
 * read and write.
 *
 * Lifetime: a struct smbd_ksmbd_conn is one connection's ksmbd transport
 * and owns its smbd socket. The accept thread hands it to ksmbd and never
 * touches it again. The handler thread's last act is ->disconnect: the
 * socket is shut down (every reader and sender wakes and fails) and
 * ksmbd_conn_free() drops the handler's reference. ->free_transport runs
 * when the last reference to the ksmbd connection goes (ksmbd's release
 * work, or stop_sessions()) and releases the socket. ->shutdown
 * (ksmbd_conn_abort(), stop_sessions()) only shuts the socket down. So
 * the socket lives as long as anyone can reach the transport: a late
 * send (an oplock break) fails, it never touches freed memory. smbd's
 * upcalls (which only wake the handler thread) end inside
 * smbd_sock_release(), before the transport is freed.
 *
 * Serialisation: sends run under the connection's srv_mutex; reads
 * only in the handler thread.
 */

#define SUBMOD_NAME	"smbd"

#include <linux/kthread.h>
#include <linux/netdevice.h>
#include <linux/slab.h>
#include <linux/uio.h>
#include <linux/wait.h>
#include <net/ip.h>
#include <net/ipv6.h>

#include "glob.h"
#include "connection.h"
#include "smb_common.h"
#include "transport_rdma.h"

#include <smbd.h>

#include "smbd_ksmbd.h"

static const struct ksmbd_transport_ops smbd_ksmbd_transport_ops;

/* ---- connections ---- */

/* ksmbd's view of the peer: its address and the hash of conn_list. */
static void smbd_ksmbd_set_peer(struct ksmbd_conn *conn)
{
	const struct sockaddr_storage *a = &conn->peer_addr;

	if (a->ss_family == AF_INET) {
		const struct sockaddr_in *sin = (const struct sockaddr_in *)a;

		conn->inet_addr = sin->sin_addr.s_addr;
		conn->inet_hash = ipv4_addr_hash(sin->sin_addr.s_addr);
	}
#if IS_ENABLED(CONFIG_IPV6)
	if (a->ss_family == AF_INET6) {
		const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)a;

		memcpy(conn->inet6_addr, &sin6->sin6_addr, 16);
		conn->inet_hash = ipv6_addr_hash(&sin6->sin6_addr);
	}
#endif
}

/*
 * Give up a connection whose handler thread never ran: undo what the
 * handler would have, then ksmbd's own teardown (which frees the
 * transport and the socket through ->free_transport).
 */
static void smbd_ksmbd_drop(struct ksmbd_conn *conn)
{
	if (IS_ENABLED(CONFIG_UNICODE))
		utf8_unload(conn->um);
	unload_nls(conn->local_nls);
	smbd_sock_shutdown(smbd_ksmbd(conn->transport)->sk);
	ksmbd_conn_free(conn);
}

/*
 * [MS-SMBD] 3.1.7.2: the upper layer hears of a new connection. smbd
 * has negotiated it already; ksmbd gets a connection and its thread.
 */
void smbd_ksmbd_new_conn(struct smbd_sock *sk, u16 port)
{
	struct smbd_ksmbd_conn *c;
	struct task_struct *handler;
	struct ksmbd_conn *conn;
	int ret;

	c = kzalloc(sizeof(*c), KSMBD_DEFAULT_GFP);
	conn = c ? ksmbd_conn_alloc() : NULL;
	if (!conn) {
		kfree(c);
		smbd_sock_release(sk);
		return;
	}
	c->sk = sk;
	init_waitqueue_head(&c->wait);
	atomic_set(&c->events, 0);
	smbd_sock_set_ops(sk, &smbd_ksmbd_sock_ops, c);
	c->transport.conn = conn;
	c->transport.ops = &smbd_ksmbd_transport_ops;
	conn->transport = &c->transport;

	/* Tree connects check "hosts allow" against it. */
	ret = smbd_sock_getname(sk, &conn->peer_addr, true);
	if (ret) {
		pr_info_ratelimited("no peer address for a new connection: %d\n",
				    ret);
		smbd_ksmbd_drop(conn);
		return;
	}
	smbd_ksmbd_set_peer(conn);
	down_write(&conn_list_lock);
	hash_add(conn_list, &conn->hlist, conn->inet_hash);
	up_write(&conn_list_lock);
	ksmbd_debug(RDMA, "SMB Direct connection from %pISpc\n",
		    &conn->peer_addr);

	/* From here on the connection is the handler thread's. */
	handler = kthread_run(ksmbd_conn_handler_loop, conn, "ksmbd:r%u",
			      port);
	if (IS_ERR(handler)) {
		pr_err("cannot start a connection thread: %ld\n",
		       PTR_ERR(handler));
		smbd_ksmbd_drop(conn);
	}
}

/* ---- transport operations (the rest: smbd_ksmbd_io.c) ---- */

/**
 * smbd_ksmbd_shutdown() - end a connection, keep the transport
 * @t: the transport
 *
 * The handler thread's read and any send fail from now on; ksmbd's
 * teardown follows from the handler thread.
 *
 * Context: process (ksmbd_conn_abort(), stop_sessions()).
 */
static void smbd_ksmbd_shutdown(struct ksmbd_transport *t)
{
	struct smbd_ksmbd_conn *c = smbd_ksmbd(t);

	smbd_sock_shutdown(c->sk);
	atomic_inc(&c->events);
	wake_up(&c->wait);
}

/**
 * smbd_ksmbd_disconnect() - the handler thread is done with a connection
 * @t: the transport; may be freed when this returns
 *
 * Ends the connection ([MS-SMBD] 3.1.7.1) and drops the handler's
 * reference to the ksmbd connection; ->free_transport follows once the
 * last reference goes.
 *
 * Context: the connection's handler thread, as it exits.
 */
static void smbd_ksmbd_disconnect(struct ksmbd_transport *t)
{
	smbd_sock_shutdown(smbd_ksmbd(t)->sk);
	ksmbd_conn_free(t->conn);
}

/**
 * smbd_ksmbd_free_transport() - free a connection's transport
 * @t: the transport; gone when this returns
 *
 * Releases the smbd socket: the queue pair is drained and every buffer
 * unmapped before it is freed.
 *
 * Context: process (ksmbd's release work or stop_sessions()); sleeps.
 */
static void smbd_ksmbd_free_transport(struct ksmbd_transport *t)
{
	struct smbd_ksmbd_conn *c = smbd_ksmbd(t);

	smbd_sock_release(c->sk);
	kfree(c);
}

static const struct ksmbd_transport_ops smbd_ksmbd_transport_ops = {
	.read		= smbd_ksmbd_read,
	.writev		= smbd_ksmbd_writev,
	.rdma_read	= smbd_ksmbd_rdma_read,
	.rdma_write	= smbd_ksmbd_rdma_write,
	.shutdown	= smbd_ksmbd_shutdown,
	.disconnect	= smbd_ksmbd_disconnect,
	.free_transport	= smbd_ksmbd_free_transport,
};

/* ---- what ksmbd calls ---- */

/*
 * Connections already handed to ksmbd stay: ksmbd's stop_sessions(),
 * right after ksmbd_rdma_stop_listening(), ends each through ->shutdown.
 * Context: process, under ksmbd's init_lock.
 */
void smbd_ksmbd_conns_stop(void)
{
}

MODULE_IMPORT_NS(SMBD);

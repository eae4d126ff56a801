// SPDX-License-Identifier: GPL-2.0
/*
 * smbd_ksmbd: the kernel SMB server's SMB Direct transport on smbd.ko.
 *
 * adapters/build.sh links this file into ksmbd.ko, built from Debian's
 * linux-source-6.12 (fs/smb/server), in place of ksmbd's own
 * transport_rdma.o, with the two files every series shares
 * (adapters/ksmbd-common/): smbd_ksmbd_ports.c listens
 * (ksmbd_rdma_init() and the rest of transport_rdma.h) and hands each
 * negotiated connection to smbd_ksmbd_new_conn() in smbd_ksmbd_io.c,
 * which makes it a ksmbd connection with its handler thread
 * (ksmbd_conn_handler_loop), as over ksmbd's TCP transport, and reads,
 * sends and does the RDMA transfers. Here is what differs by series:
 * the transport's operations, how a new connection is published to
 * ksmbd, and how it ends. Everything else is smbd's:
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

/* ---- connections (made in smbd_ksmbd_io.c) ---- */

/**
 * smbd_ksmbd_attach() - give a new transport its operations
 * @c: the transport
 *
 * Context: the listener's accept thread.
 */
void smbd_ksmbd_attach(struct smbd_ksmbd_conn *c)
{
	c->transport.ops = &smbd_ksmbd_transport_ops;
}

/**
 * smbd_ksmbd_publish() - list a new connection on conn_list
 * @conn: the connection, its peer's address set
 *
 * 6.12's conn_list is a hash by the peer's address.
 *
 * Context: the listener's accept thread; takes conn_list_lock.
 */
void smbd_ksmbd_publish(struct ksmbd_conn *conn)
{
	if (conn->peer_addr.ss_family == AF_INET)
		conn->inet_hash = ipv4_addr_hash(conn->inet_addr);
#if IS_ENABLED(CONFIG_IPV6)
	if (conn->peer_addr.ss_family == AF_INET6)
		conn->inet_hash =
			ipv6_addr_hash((const struct in6_addr *)conn->inet6_addr);
#endif
	down_write(&conn_list_lock);
	hash_add(conn_list, &conn->hlist, conn->inet_hash);
	up_write(&conn_list_lock);
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

// SPDX-License-Identifier: GPL-2.0
/*
 * smbd_ksmbd: the kernel SMB server's SMB Direct transport on smbd.ko.
 *
 * adapters/build.sh links this file into ksmbd.ko, built from Debian's
 * linux-source-6.1 (fs/smb/server), in place of ksmbd's own
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
 * touches it again. 6.1's ksmbd has no ->free_transport (its last
 * ksmbd_conn_put() only frees the ksmbd connection), so the handler
 * thread's last act, ->disconnect, frees the transport, as 6.1's TCP
 * transport frees its own there: the socket is released (every reader
 * and sender wakes and fails; smbd's upcalls, which only wake the
 * handler thread, end inside smbd_sock_release()), then
 * ksmbd_conn_free() takes the connection off conn_list and drops the
 * handler's reference, then the transport goes. The 6.12 adapter's
 * guarantee that a late send (an oplock break) fails cannot be kept: a
 * send after ->disconnect would touch freed memory, as over 6.1's TCP.
 * What keeps senders off is ksmbd's own fence, which ->disconnect comes
 * after: the handler thread marks the connection releasing and waits for
 * its r_count, held by every request in work and every oplock or lease
 * break that found the connection not releasing, to drop to 0.
 *
 * No ->shutdown: its only caller in 6.1, stop_sessions(), drops
 * conn_list_lock around it and then walks on from the connection it
 * shut down, which that connection's handler thread, woken, may have
 * taken off conn_list and freed meanwhile. ksmbd calls
 * ksmbd_rdma_stop_listening() right before stop_sessions() (both under
 * init_lock, whenever ksmbd stops or resets): it shuts every connection
 * on smbd_ksmbd_conns down instead, while stop_sessions() only marks
 * them exiting under conn_list_lock, which their handler threads need
 * for writing to leave conn_list.
 *
 * Serialisation: the connections are listed on smbd_ksmbd_conns under
 * smbd_ksmbd_conns_lock; sends run under the connection's srv_mutex;
 * reads only in the handler thread.
 */

#define SUBMOD_NAME	"smbd"

#include <linux/netdevice.h>
#include <linux/slab.h>
#include <linux/uio.h>
#include <linux/wait.h>

#include "glob.h"
#include "connection.h"
#include "smb_common.h"
#include "transport_rdma.h"

#include <smbd.h>

#include "smbd_ksmbd.h"

/*
 * Every transport not yet freed, for ksmbd_rdma_stop_listening() to end
 * (6.1's stop_sessions() cannot safely call a ->shutdown).
 */
static DEFINE_SPINLOCK(smbd_ksmbd_conns_lock);
static LIST_HEAD(smbd_ksmbd_conns);

/*
 * Never written: not const only because 6.1's struct ksmbd_transport
 * points to its operations without const.
 */
static struct ksmbd_transport_ops smbd_ksmbd_transport_ops __ro_after_init;

/* ---- connections (made in smbd_ksmbd_io.c) ---- */

/*
 * Free a transport with its socket and the handler's (or the accept
 * thread's) reference to the ksmbd connection. The socket goes first:
 * meanwhile the connection stays on conn_list, so stop_sessions() (and
 * ksmbd's module exit after it) waits for the queue pair to drain.
 * Context: process; sleeps.
 */
static void smbd_ksmbd_free(struct smbd_ksmbd_conn *c)
{
	spin_lock(&smbd_ksmbd_conns_lock);
	list_del(&c->node);
	spin_unlock(&smbd_ksmbd_conns_lock);
	smbd_sock_release(c->sk);
	ksmbd_conn_free(c->transport.conn);
	kfree(c);
}

/**
 * smbd_ksmbd_attach() - give a new transport its operations
 * @c: the transport
 *
 * Lists it on smbd_ksmbd_conns for smbd_ksmbd_conns_stop().
 * ksmbd_conn_alloc() listed the connection on conn_list before it had a
 * transport: harmless, as only stop_sessions() looks at the transports
 * on conn_list, and never while an accept thread runs.
 *
 * Context: the listener's accept thread; takes smbd_ksmbd_conns_lock.
 */
void smbd_ksmbd_attach(struct smbd_ksmbd_conn *c)
{
	c->transport.ops = &smbd_ksmbd_transport_ops;
	spin_lock(&smbd_ksmbd_conns_lock);
	list_add_tail(&c->node, &smbd_ksmbd_conns);
	spin_unlock(&smbd_ksmbd_conns_lock);
}

/**
 * smbd_ksmbd_publish() - nothing left to publish on 6.1
 * @conn: the connection, its peer's address set
 *
 * 6.1's conn_list is a plain list, and ksmbd_conn_alloc() put the
 * connection on it.
 *
 * Context: the listener's accept thread.
 */
void smbd_ksmbd_publish(struct ksmbd_conn *conn)
{
}

/* ---- transport operations (the rest: smbd_ksmbd_io.c) ---- */

/**
 * smbd_ksmbd_disconnect() - the handler thread is done with a connection
 * @t: the transport; freed when this returns
 *
 * Ends the connection ([MS-SMBD] 3.1.7.1) and frees the transport with
 * its socket (the queue pair is drained and every buffer unmapped before
 * it is freed), dropping the handler's reference to the ksmbd
 * connection, as 6.1's TCP transport does: 6.1 has no ->free_transport.
 * ksmbd calls it only once nothing can send any more (the connection is
 * releasing and its r_count has dropped to 0).
 *
 * Context: the connection's handler thread, as it exits; sleeps.
 */
static void smbd_ksmbd_disconnect(struct ksmbd_transport *t)
{
	smbd_ksmbd_free(smbd_ksmbd(t));
}

static struct ksmbd_transport_ops smbd_ksmbd_transport_ops __ro_after_init = {
	.read		= smbd_ksmbd_read,
	.writev		= smbd_ksmbd_writev,
	.rdma_read	= smbd_ksmbd_rdma_read,
	.rdma_write	= smbd_ksmbd_rdma_write,
	.disconnect	= smbd_ksmbd_disconnect,
};

/* ---- what ksmbd calls ---- */

/*
 * End every connection handed to ksmbd, as the 6.12 adapter's ->shutdown
 * does from stop_sessions(): each handler thread's read and any send
 * fail from now on, and ksmbd's teardown follows from the handler
 * thread, which frees the transport.
 * ksmbd_rdma_stop_listening() calls it once no accept thread is left:
 * 6.1 calls that right before stop_sessions(), which ends every
 * connection but cannot safely do so through a ->shutdown (see the top
 * of this file).
 * Context: process, under ksmbd's init_lock.
 */
void smbd_ksmbd_conns_stop(void)
{
	struct smbd_ksmbd_conn *c;

	spin_lock(&smbd_ksmbd_conns_lock);
	list_for_each_entry(c, &smbd_ksmbd_conns, node) {
		smbd_sock_shutdown(c->sk);
		atomic_inc(&c->events);
		wake_up(&c->wait);
	}
	spin_unlock(&smbd_ksmbd_conns_lock);
}

MODULE_IMPORT_NS(SMBD);

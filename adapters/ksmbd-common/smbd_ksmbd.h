/* SPDX-License-Identifier: GPL-2.0 */
/*
 * smbd_ksmbd.h: between the ksmbd adapter's files. Two are the same for
 * every kernel series (adapters/ksmbd-common/): smbd_ksmbd_ports.c
 * listens, smbd_ksmbd_io.c makes a ksmbd connection of what it
 * accepts and moves the connection's data. One is the series' own
 * (adapters/ksmbd/ for 6.12, adapters/ksmbd-6.1/): smbd_ksmbd.c
 * publishes and ends ksmbd connections, where 6.1's and 6.12's ksmbd
 * differ. Include after ksmbd's own headers.
 */
#ifndef _SMBD_KSMBD_H
#define _SMBD_KSMBD_H

#include <linux/atomic.h>
#include <linux/list.h>
#include <linux/types.h>
#include <linux/wait.h>

struct smbd_sock;
struct smb2_buffer_desc_v1;

/**
 * struct smbd_ksmbd_conn - one SMB Direct connection of ksmbd
 * @transport: what ksmbd sees (conn->transport)
 * @sk: the smbd socket, released with the transport (6.12: by
 *	->free_transport; 6.1: by ->disconnect)
 * @wait: the handler thread waits here for @events to change
 * @events: counts smbd's upcalls (data arrived, connection lost) and
 *	shutdowns
 * @node: 6.1 only: on its list of transports not yet freed
 */
struct smbd_ksmbd_conn {
	struct ksmbd_transport transport;
	struct smbd_sock *sk;
	wait_queue_head_t wait;
	atomic_t events;
	struct list_head node;
};

static inline struct smbd_ksmbd_conn *smbd_ksmbd(struct ksmbd_transport *t)
{
	return container_of(t, struct smbd_ksmbd_conn, transport);
}

/* smbd_ksmbd_io.c: the transport operations every series shares. */
int smbd_ksmbd_read(struct ksmbd_transport *t, char *buf, unsigned int size,
		    int max_retries);
int smbd_ksmbd_writev(struct ksmbd_transport *t, struct kvec *iov, int niov,
		      int size, bool need_invalidate, unsigned int remote_key);
int smbd_ksmbd_rdma_read(struct ksmbd_transport *t, void *buf,
			 unsigned int len, struct smb2_buffer_desc_v1 *desc,
			 unsigned int desc_len);
int smbd_ksmbd_rdma_write(struct ksmbd_transport *t, void *buf,
			  unsigned int len, struct smb2_buffer_desc_v1 *desc,
			  unsigned int desc_len);

/*
 * smbd_ksmbd_io.c: [MS-SMBD] 3.1.7.2, the upper layer hears of a new
 * connection @sk, accepted on @port, whose owner it becomes.
 * Context: the listener's accept thread; sleeps.
 */
void smbd_ksmbd_new_conn(struct smbd_sock *sk, u16 port);

/*
 * smbd_ksmbd.c, the series' part of smbd_ksmbd_new_conn():
 * smbd_ksmbd_attach() gives the new transport @c (its ksmbd connection
 * made, its socket's upcalls set) the series' operations, before anything
 * can end it through them; smbd_ksmbd_publish() makes the connection,
 * its peer's address known, findable as the series' ksmbd expects,
 * before its handler thread starts.
 * Context: the listener's accept thread; sleeps.
 */
void smbd_ksmbd_attach(struct smbd_ksmbd_conn *c);
void smbd_ksmbd_publish(struct ksmbd_conn *conn);

/*
 * smbd_ksmbd.c: the end of ksmbd_rdma_stop_listening(), for the
 * connections already handed to ksmbd.
 */
void smbd_ksmbd_conns_stop(void);

#endif /* _SMBD_KSMBD_H */

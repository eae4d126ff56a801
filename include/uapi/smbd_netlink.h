/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * smbd's generic netlink family: what SMB Direct is doing, for
 * administrators and monitoring (smbdctl, Documentation/smbd.rst).
 *
 * Family "smbd", version 1. The format is stable: attributes and
 * commands are only ever added, at the end; a reader skips what it does
 * not know. Integers are in host order but for ports (also host order,
 * u16) and addresses (network order, 4 or 16 bytes).
 *
 * Commands (requests carry the family header only, unless said):
 *   SMBD_CMD_INFO_GET  doit: the module (SMBD_A_VERSION, SMBD_A_NR_*).
 *   SMBD_CMD_DEV_GET   dump: every RDMA device smbd was offered, used or
 *                      not (SMBD_A_DEV_*), that the caller's network
 *                      namespace may see; SMBD_A_STATS, the totals of
 *                      every connection it carried since smbd was
 *                      loaded (by its name), those of every namespace.
 *   SMBD_CMD_IF_GET    dump: every interface of the caller's namespace
 *                      and the RDMA devices that reach it (SMBD_A_IF_*):
 *                      what a server reports as RDMA-capable.
 *   SMBD_CMD_CONN_GET  dump: the listeners and connections of the
 *                      caller's namespace; doit: the one of SMBD_A_ID.
 *   SMBD_CMD_PROBE     doit, CAP_NET_ADMIN in the namespace's user
 *                      namespace: connect to SMBD_A_PEER/SMBD_A_PEER_PORT
 *                      and negotiate ([MS-SMBD] 3.1.5.2-3.1.5.7), waiting
 *                      at most SMBD_A_TIMEOUT_MS (default 5000, at most
 *                      60000); the reply tells the device and what was
 *                      negotiated, and the connection is closed. A failure
 *                      is the request's error, with an extended ack.
 * Every query but SMBD_CMD_PROBE is open to unprivileged callers: it
 * shows what ss(8) shows of TCP and rdma(8) of RDMA resources.
 */
#ifndef _UAPI_SMBD_NETLINK_H
#define _UAPI_SMBD_NETLINK_H

#define SMBD_GENL_NAME		"smbd"
#define SMBD_GENL_VERSION	1

enum smbd_nl_cmd {
	SMBD_CMD_UNSPEC,
	SMBD_CMD_INFO_GET,
	SMBD_CMD_DEV_GET,
	SMBD_CMD_IF_GET,
	SMBD_CMD_CONN_GET,
	SMBD_CMD_PROBE,

	__SMBD_CMD_MAX,
	SMBD_CMD_MAX = __SMBD_CMD_MAX - 1
};

/* SMBD_A_ROLE */
enum smbd_nl_role {
	SMBD_ROLE_LISTENER,
	SMBD_ROLE_INITIATOR,
	SMBD_ROLE_RESPONDER,
};

/* SMBD_A_DEV_CLASS: the port ([MS-SMBD] 1.9): 445 or 5445. */
enum smbd_nl_class {
	SMBD_CLASS_IB,		/* InfiniBand or RoCE */
	SMBD_CLASS_IWARP,
};

/* SMBD_A_DEV_USE: whether smbd runs connections on a device, or why not. */
enum smbd_nl_use {
	SMBD_USE_YES,
	SMBD_USE_NO_FRWR,	/* no fast registration (MEM_MGT_EXTENSIONS) */
	SMBD_USE_SHORT,		/* a limit below smbd's minimum: SMBD_A_DEV_SHORT_* */
	SMBD_USE_DEAD,		/* a fatal event: unused until added again */
};

enum smbd_nl_attr {
	SMBD_A_UNSPEC,
	SMBD_A_PAD,
	/* SMBD_CMD_INFO_GET */
	SMBD_A_VERSION,		/* string */
	SMBD_A_NR_DEVS,		/* u32: devices smbd uses */
	SMBD_A_NR_LISTENERS,	/* u32, in the caller's namespace */
	SMBD_A_NR_CONNS,	/* u32, in the caller's namespace */
	/* A device (SMBD_CMD_DEV_GET; a connection's too) */
	SMBD_A_DEV_NAME,	/* string */
	SMBD_A_DEV_INDEX,	/* u32: the RDMA device's index (rdma(8)) */
	SMBD_A_DEV_CLASS,	/* u8: enum smbd_nl_class */
	SMBD_A_DEV_NETDEV,	/* string: its first port's interface, if any */
	SMBD_A_DEV_USE,		/* u8: enum smbd_nl_use */
	SMBD_A_DEV_SHORT_OF,	/* string: the limit it is short of */
	SMBD_A_DEV_SHORT_HAVE,	/* u32: what it has of it */
	SMBD_A_DEV_SHORT_NEED,	/* u32: what smbd needs */
	SMBD_A_DEV_LIMITS,	/* nest: SMBD_LIM_A_* */
	SMBD_A_DEV_PROFILE,	/* string: a test profile capping the limits */
	SMBD_A_DEV_CONNS,	/* u32: connections on it now */
	/* An interface (SMBD_CMD_IF_GET) */
	SMBD_A_IF_NAME,		/* string */
	SMBD_A_IF_INDEX,	/* u32 */
	SMBD_A_IF_CLASSES,	/* u32: BIT(enum smbd_nl_class) of each reaching it */
	SMBD_A_IF_PATH,		/* nest, once per device reaching it: */
				/* SMBD_A_DEV_NAME, SMBD_A_DEV_CLASS, and */
	SMBD_A_IF_VIA,		/* string: the interface below that is its port */
	/* A listener or a connection (SMBD_CMD_CONN_GET) */
	SMBD_A_ID,		/* u32: the conn= of traces and debugfs */
	SMBD_A_ROLE,		/* u8: enum smbd_nl_role */
	SMBD_A_STATE,		/* string: created ... closed */
	SMBD_A_ERROR,		/* s32: the errno that ended it, 0 */
	SMBD_A_LOCAL,		/* binary: 4 or 16 bytes */
	SMBD_A_LOCAL_PORT,	/* u16 */
	SMBD_A_PEER,		/* binary: 4 or 16 bytes */
	SMBD_A_PEER_PORT,	/* u16 */
	SMBD_A_PENDING,		/* u32: a listener's connections negotiating */
	SMBD_A_ACCEPT_QUEUE,	/* u32: ... and negotiated, not yet accepted */
	SMBD_A_NEG,		/* nest: SMBD_NEG_A_* */
	SMBD_A_CREDITS,		/* nest: SMBD_CRED_A_* */
	SMBD_A_STATS,		/* nest: SMBD_STAT_A_* */
	SMBD_A_REFUSALS,	/* nest of SMBD_A_REFUSAL, each nonzero count */
	SMBD_A_REFUSAL,		/* nest: SMBD_REF_A_* */
	/* SMBD_CMD_PROBE's request */
	SMBD_A_TIMEOUT_MS,	/* u32 */
	/* A device's totals: SMBD_A_STATS of its connections, those gone too */
	SMBD_A_DEV_CONNS_TOTAL,	/* u64: connections it has carried */

	__SMBD_A_MAX,
	SMBD_A_MAX = __SMBD_A_MAX - 1
};

/* SMBD_A_DEV_LIMITS: the device's limits as smbd took them, u32 each. */
enum smbd_nl_lim_attr {
	SMBD_LIM_A_UNSPEC,
	SMBD_LIM_A_QP_WR,
	SMBD_LIM_A_SEND_SGE,
	SMBD_LIM_A_RECV_SGE,
	SMBD_LIM_A_CQE,
	SMBD_LIM_A_RD_ATOM,
	SMBD_LIM_A_INIT_RD_ATOM,
	SMBD_LIM_A_FRMR_PAGES,
	SMBD_LIM_A_SGE_RD,

	__SMBD_LIM_A_MAX,
	SMBD_LIM_A_MAX = __SMBD_LIM_A_MAX - 1
};

/* SMBD_A_NEG: what negotiation settled ([MS-SMBD] 3.1.1.1), u32 each. */
enum smbd_nl_neg_attr {
	SMBD_NEG_A_UNSPEC,
	SMBD_NEG_A_MAX_SEND,
	SMBD_NEG_A_MAX_RECV,
	SMBD_NEG_A_MAX_FRAG_SEND,
	SMBD_NEG_A_MAX_FRAG_RECV,
	SMBD_NEG_A_MAX_RW,
	SMBD_NEG_A_IRD,
	SMBD_NEG_A_ORD,

	__SMBD_NEG_A_MAX,
	SMBD_NEG_A_MAX = __SMBD_NEG_A_MAX - 1
};

/* SMBD_A_CREDITS: credits now ([MS-SMBD] 3.1.5.1, 3.1.5.9), u32 each. */
enum smbd_nl_cred_attr {
	SMBD_CRED_A_UNSPEC,
	SMBD_CRED_A_SEND,
	SMBD_CRED_A_SEND_TARGET,
	SMBD_CRED_A_RECV_MAX,
	SMBD_CRED_A_RECV_TARGET,
	SMBD_CRED_A_RECV_POSTED,
	SMBD_CRED_A_SENDERS_WAITING,

	__SMBD_CRED_A_MAX,
	SMBD_CRED_A_MAX = __SMBD_CRED_A_MAX - 1
};

/* SMBD_A_STATS: since the connection began, u64 each. */
enum smbd_nl_stat_attr {
	SMBD_STAT_A_UNSPEC,
	SMBD_STAT_A_PAD,
	SMBD_STAT_A_MSGS_SENT,		/* upper-layer messages */
	SMBD_STAT_A_MSGS_RECV,
	SMBD_STAT_A_SEGS_SENT,		/* data transfer messages */
	SMBD_STAT_A_SEGS_RECV,
	SMBD_STAT_A_BYTES_SENT,		/* payload bytes */
	SMBD_STAT_A_BYTES_ZCOPY,	/* ... of them sent without a copy */
	SMBD_STAT_A_BYTES_RECV,
	SMBD_STAT_A_GRANTS_SENT,	/* messages sent to grant credits only */
	SMBD_STAT_A_CREDIT_STALLS,	/* a sender waited for a credit */
	SMBD_STAT_A_CREDIT_STALL_NS,	/* ... for this long in all */
	SMBD_STAT_A_KEEPALIVES_SENT,
	SMBD_STAT_A_KEEPALIVES_ANSWERED,
	SMBD_STAT_A_MRS_REGISTERED,
	SMBD_STAT_A_MRS_LOCAL_INV,
	SMBD_STAT_A_MRS_REMOTE_INV,
	SMBD_STAT_A_RDMA_READS,		/* done by this side */
	SMBD_STAT_A_RDMA_READ_BYTES,
	SMBD_STAT_A_RDMA_WRITES,
	SMBD_STAT_A_RDMA_WRITE_BYTES,
	SMBD_STAT_A_CONNS_REFUSED,	/* a listener's: refused connections */
	SMBD_STAT_A_CONNS_WRONG_CLASS,	/* ... on a device of the wrong class */
	SMBD_STAT_A_PEER_REFUSALS,	/* the peer's messages refused */
	SMBD_STAT_A_COMPLETION_ERRORS,	/* work requests completed in error */

	__SMBD_STAT_A_MAX,
	SMBD_STAT_A_MAX = __SMBD_STAT_A_MAX - 1
};

/* SMBD_A_REFUSAL: one kind of peer input refused, and how often. */
enum smbd_nl_ref_attr {
	SMBD_REF_A_UNSPEC,
	SMBD_REF_A_SECTION,	/* string: the [MS-SMBD] section, "3.1.5.8" */
	SMBD_REF_A_REASON,	/* string */
	SMBD_REF_A_COUNT,	/* u32 */

	__SMBD_REF_A_MAX,
	SMBD_REF_A_MAX = __SMBD_REF_A_MAX - 1
};

#endif /* _UAPI_SMBD_NETLINK_H */

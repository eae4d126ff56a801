// SPDX-License-Identifier: GPL-2.0
/*
 * smbd: the generic netlink family "smbd" (include/uapi/smbd_netlink.h),
 * the administrator's view of devices, interfaces, listeners and
 * connections, and a connect test. smbdctl(8) reads it.
 *
 * Why netlink and not debugfs or sysfs (Documentation/smbd.rst): a
 * stable, typed format that grows by attributes without breaking readers;
 * readable without root and without debugfs mounted (monitoring runs
 * unprivileged); per network namespace, like the connections it shows;
 * and a request with arguments and an error message for the connect
 * test. debugfs keeps what only a developer needs.
 *
 * The family runs its handlers without the genetlink mutex (parallel_ops):
 * a connect test may sleep for seconds. Each takes the locks it needs:
 * smbd_socks_lock, then a socket's cm mutex only tried, then its ss_lock;
 * smbd_devices_lock alone.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/in.h>
#include <linux/in6.h>
#include <linux/module.h>
#include <linux/netdevice.h>
#include <net/genetlink.h>
#include <net/netlink.h>

#include "smbd_internal.h"

static struct genl_family smbd_nl_family;

/* The connect test's wait, when the request names none, and its cap. */
#define SMBD_NL_PROBE_MS	5000
#define SMBD_NL_PROBE_MAX_MS	60000

/*
 * Beyond a policy's own s16 bounds: a range of its own (not const: 6.1's
 * struct nla_policy points at it without).
 */
static struct netlink_range_validation smbd_nl_timeout_range = {
	.min = 1,
	.max = SMBD_NL_PROBE_MAX_MS,
};

static const struct nla_policy smbd_nl_policy[SMBD_A_MAX + 1] = {
	[SMBD_A_ID] = { .type = NLA_U32 },
	[SMBD_A_PEER] = { .type = NLA_BINARY, .len = sizeof(struct in6_addr) },
	[SMBD_A_PEER_PORT] = NLA_POLICY_MIN(NLA_U16, 1),
	[SMBD_A_TIMEOUT_MS] = NLA_POLICY_FULL_RANGE(NLA_U32,
						    &smbd_nl_timeout_range),
};

static void *smbd_nl_put_hdr(struct sk_buff *skb, u32 portid, u32 seq,
			     int flags, u8 cmd)
{
	return genlmsg_put(skb, portid, seq, &smbd_nl_family, flags, cmd);
}

/* An address as its bytes and port; nothing for one of no family. */
static int smbd_nl_put_addr(struct sk_buff *skb, int attr, int port_attr,
			    const struct sockaddr_storage *ss)
{
	const struct sockaddr_in6 *s6 = (const void *)ss;
	const struct sockaddr_in *s4 = (const void *)ss;

	if (ss->ss_family == AF_INET)
		return nla_put_in_addr(skb, attr, s4->sin_addr.s_addr) ?:
		       nla_put_u16(skb, port_attr, ntohs(s4->sin_port));
	if (ss->ss_family == AF_INET6)
		return nla_put_in6_addr(skb, attr, &s6->sin6_addr) ?:
		       nla_put_u16(skb, port_attr, ntohs(s6->sin6_port));
	return 0;
}

/* What one message tells of a socket, taken under its locks. */
struct smbd_nl_conn {
	struct sockaddr_storage local, peer;
	struct smbd_negotiated neg;
	struct smbd_credits cred;
	struct smbd_sock_stats st;
	struct smbd_counters cnt;
	enum smbd_state state;
	u32 waiters, pending, accept_len;
	int err;
	u8 ird, ord;
	bool addr;
};

/* SMBD_CMD_INFO_GET */

static int smbd_nl_info_get(struct sk_buff *skb, struct genl_info *info)
{
	struct net *net = genl_info_net(info);
	u32 devs = 0, lsn = 0, conns = 0, pos;
	struct smbd_dev_info *di;
	struct smbd_sock *sk;
	struct sk_buff *msg;
	void *hdr;

	di = kmalloc(sizeof(*di), GFP_KERNEL);
	if (!di)
		return -ENOMEM;
	for (pos = 0; !smbd_dev_info_at(net, pos, di); pos++)
		if (di->rec.sd_use == SMBD_USE_YES && !di->rec.sd_fatal)
			devs++;
	kfree(di);
	mutex_lock(&smbd_socks_lock);
	list_for_each_entry(sk, &smbd_socks, ss_all_node) {
		if (!net_eq(sk->ss_net, net))
			continue;
		if (smbd_is_listener(sk))
			lsn++;
		else
			conns++;
	}
	mutex_unlock(&smbd_socks_lock);

	msg = genlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	hdr = smbd_nl_put_hdr(msg, info->snd_portid, info->snd_seq, 0,
			      SMBD_CMD_INFO_GET);
	if (!hdr ||
	    nla_put_string(msg, SMBD_A_VERSION, SMBD_VERSION) ||
	    nla_put_u32(msg, SMBD_A_NR_DEVS, devs) ||
	    nla_put_u32(msg, SMBD_A_NR_LISTENERS, lsn) ||
	    nla_put_u32(msg, SMBD_A_NR_CONNS, conns)) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);
}

/* SMBD_CMD_DEV_GET */

static int smbd_nl_put_limits(struct sk_buff *skb, const struct smbd_device *sd)
{
	struct nlattr *nest = nla_nest_start(skb, SMBD_A_DEV_LIMITS);

	if (!nest ||
	    nla_put_u32(skb, SMBD_LIM_A_QP_WR, sd->sd_max_qp_wr) ||
	    nla_put_u32(skb, SMBD_LIM_A_SEND_SGE, sd->sd_max_send_sge) ||
	    nla_put_u32(skb, SMBD_LIM_A_RECV_SGE, sd->sd_max_recv_sge) ||
	    nla_put_u32(skb, SMBD_LIM_A_CQE, sd->sd_max_cqe) ||
	    nla_put_u32(skb, SMBD_LIM_A_RD_ATOM, sd->sd_max_rd_atom) ||
	    nla_put_u32(skb, SMBD_LIM_A_INIT_RD_ATOM, sd->sd_max_init_rd_atom) ||
	    nla_put_u32(skb, SMBD_LIM_A_FRMR_PAGES, sd->sd_max_frmr_pages) ||
	    nla_put_u32(skb, SMBD_LIM_A_SGE_RD, sd->sd_max_sge_rd))
		return -EMSGSIZE;
	nla_nest_end(skb, nest);
	return 0;
}

/* What the device named @name carried: its connections, and totals. */
struct smbd_nl_dev_tot {
	struct smbd_nl_conn c;	/* only .st and .cnt */
	u64 conns_total;
	u32 conns_now;
};

static int smbd_nl_put_stats(struct sk_buff *skb, const struct smbd_nl_conn *c);

/*
 * @t: the totals of the device named @name: the retired ones and every
 * socket on it now; its connections now count those of @net connected.
 */
static void smbd_nl_dev_totals(struct net *net, const char *name,
			       struct smbd_nl_dev_tot *t)
{
	struct smbd_retired r;
	struct smbd_sock *sk;

	memset(t, 0, sizeof(*t));
	mutex_lock(&smbd_socks_lock);
	if (smbd_retired_get(name, &r)) {
		t->c.st = r.st;
		t->c.cnt.wr_errors = r.wr_errors;
		t->c.cnt.credit_stall_ns = r.credit_stall_ns;
		t->conns_total = r.conns;
	}
	list_for_each_entry(sk, &smbd_socks, ss_all_node) {
		if (smbd_is_listener(sk) || strcmp(sk->ss_ep.devname, name))
			continue;
		spin_lock_bh(&sk->ss_lock);
		smbd_stats_add(&t->c.st, &sk->ss_stats);
		t->c.cnt.wr_errors += sk->ss_cnt.wr_errors;
		t->c.cnt.credit_stall_ns += sk->ss_cnt.credit_stall_ns;
		if (net_eq(sk->ss_net, net) && sk->ss_state == SMBD_CONNECTED)
			t->conns_now++;
		spin_unlock_bh(&sk->ss_lock);
		t->conns_total++;
	}
	mutex_unlock(&smbd_socks_lock);
}

static int smbd_nl_fill_dev(struct sk_buff *skb, const struct smbd_dev_info *di,
			    const struct smbd_nl_dev_tot *t)
{
	const struct smbd_device *sd = &di->rec;
	u8 use = sd->sd_use;

	if (use == SMBD_USE_YES && sd->sd_fatal)
		use = SMBD_USE_DEAD;
	if (nla_put_string(skb, SMBD_A_DEV_NAME, di->name) ||
	    nla_put_u32(skb, SMBD_A_DEV_INDEX, di->index) ||
	    nla_put_u8(skb, SMBD_A_DEV_CLASS,
		       sd->sd_iwarp ? SMBD_CLASS_IWARP : SMBD_CLASS_IB) ||
	    (di->netdev[0] &&
	     nla_put_string(skb, SMBD_A_DEV_NETDEV, di->netdev)) ||
	    nla_put_u8(skb, SMBD_A_DEV_USE, use) ||
	    nla_put_u32(skb, SMBD_A_DEV_CONNS, t->conns_now) ||
	    nla_put_u64_64bit(skb, SMBD_A_DEV_CONNS_TOTAL, t->conns_total,
			      SMBD_A_PAD) ||
	    (sd->sd_profile[0] &&
	     nla_put_string(skb, SMBD_A_DEV_PROFILE, sd->sd_profile)))
		return -EMSGSIZE;
	if (use == SMBD_USE_SHORT &&
	    (nla_put_string(skb, SMBD_A_DEV_SHORT_OF, sd->sd_short_of) ||
	     nla_put_u32(skb, SMBD_A_DEV_SHORT_HAVE, sd->sd_have) ||
	     nla_put_u32(skb, SMBD_A_DEV_SHORT_NEED, sd->sd_need)))
		return -EMSGSIZE;
	return smbd_nl_put_limits(skb, sd) ?: smbd_nl_put_stats(skb, &t->c);
}

/* cb->args[0]: how many devices the dump has given. */
static int smbd_nl_dev_dump(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct net *net = sock_net(skb->sk);
	struct smbd_nl_dev_tot *t;
	struct smbd_dev_info *di;
	int ret = 0;
	void *hdr;

	di = kmalloc(sizeof(*di), GFP_KERNEL);
	t = kmalloc(sizeof(*t), GFP_KERNEL);
	if (!di || !t) {
		kfree(di);
		kfree(t);
		return -ENOMEM;
	}
	while (!smbd_dev_info_at(net, cb->args[0], di)) {
		smbd_nl_dev_totals(net, di->name, t);
		hdr = smbd_nl_put_hdr(skb, NETLINK_CB(cb->skb).portid,
				      cb->nlh->nlmsg_seq, NLM_F_MULTI,
				      SMBD_CMD_DEV_GET);
		if (!hdr) {
			ret = skb->len;
			break;
		}
		if (smbd_nl_fill_dev(skb, di, t)) {
			genlmsg_cancel(skb, hdr);
			ret = skb->len;
			break;
		}
		genlmsg_end(skb, hdr);
		cb->args[0]++;
	}
	kfree(di);
	kfree(t);
	/* A device too big for an empty message would stop the dump. */
	return ret;
}

/* SMBD_CMD_IF_GET */

struct smbd_nl_if {
	struct sk_buff *skb;
	u32 classes;
};

/* One device reaching the interface: a path, and its class. */
static int smbd_nl_if_path(void *arg, const struct smbd_device *sd,
			   struct net_device *via)
{
	struct smbd_nl_if *ni = arg;
	u8 cls = sd->sd_iwarp ? SMBD_CLASS_IWARP : SMBD_CLASS_IB;
	struct nlattr *nest;

	ni->classes |= BIT(cls);
	nest = nla_nest_start(ni->skb, SMBD_A_IF_PATH);
	if (!nest ||
	    nla_put_string(ni->skb, SMBD_A_DEV_NAME,
			   dev_name(&sd->sd_ibdev->dev)) ||
	    nla_put_u8(ni->skb, SMBD_A_DEV_CLASS, cls) ||
	    nla_put_string(ni->skb, SMBD_A_IF_VIA, via->name))
		return -EMSGSIZE;
	nla_nest_end(ni->skb, nest);
	return 0;
}

/* The interface of @net with the lowest index at or above @from, held. */
static struct net_device *smbd_nl_next_netdev(struct net *net, int from)
{
	struct net_device *dev, *best = NULL;

	rcu_read_lock();
	for_each_netdev_rcu(net, dev)
		if (dev->ifindex >= from &&
		    (!best || dev->ifindex < best->ifindex))
			best = dev;
	if (best)
		dev_hold(best);
	rcu_read_unlock();
	return best;
}

static int smbd_nl_fill_if(struct sk_buff *skb, struct net_device *dev)
{
	struct smbd_nl_if ni = { .skb = skb };

	if (nla_put_string(skb, SMBD_A_IF_NAME, dev->name) ||
	    nla_put_u32(skb, SMBD_A_IF_INDEX, dev->ifindex))
		return -EMSGSIZE;
	if (smbd_netdev_walk(dev, smbd_nl_if_path, &ni))
		return -EMSGSIZE;
	return nla_put_u32(skb, SMBD_A_IF_CLASSES, ni.classes);
}

/* cb->args[0]: the interface index to go on from. */
static int smbd_nl_if_dump(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct net *net = sock_net(skb->sk);
	struct net_device *dev;
	void *hdr;
	int err;

	while ((dev = smbd_nl_next_netdev(net, cb->args[0]))) {
		hdr = smbd_nl_put_hdr(skb, NETLINK_CB(cb->skb).portid,
				      cb->nlh->nlmsg_seq, NLM_F_MULTI,
				      SMBD_CMD_IF_GET);
		err = hdr ? smbd_nl_fill_if(skb, dev) : -EMSGSIZE;
		if (err && hdr)
			genlmsg_cancel(skb, hdr);
		else if (!err)
			genlmsg_end(skb, hdr);
		if (err) {
			dev_put(dev);
			return skb->len;
		}
		cb->args[0] = dev->ifindex + 1;
		dev_put(dev);
	}
	return 0;
}

/* SMBD_CMD_CONN_GET */

/* Caller holds smbd_socks_lock: @sk stays. */
static void smbd_nl_conn_snap(struct smbd_sock *sk, struct smbd_nl_conn *c)
{
	lockdep_assert_held(&smbd_socks_lock);
	memset(c, 0, sizeof(*c));
	c->addr = smbd_sock_addrs_try(sk, &c->local, &c->peer);
	spin_lock_bh(&sk->ss_lock);
	c->state = sk->ss_state;
	c->err = sk->ss_err;
	c->neg = sk->ss_neg;
	c->cred = sk->ss_cred;
	c->st = sk->ss_stats;
	c->cnt = sk->ss_cnt;
	c->waiters = sk->ss_tx.waiters;
	c->ird = sk->ss_ep.responder_resources;
	c->ord = sk->ss_ep.initiator_depth;
	if (sk->ss_lq) {
		c->pending = sk->ss_lq->pending_len;
		c->accept_len = sk->ss_lq->accept_len;
	}
	spin_unlock_bh(&sk->ss_lock);
}

static int smbd_nl_put_neg(struct sk_buff *skb, const struct smbd_nl_conn *c)
{
	struct nlattr *nest = nla_nest_start(skb, SMBD_A_NEG);

	if (!nest ||
	    nla_put_u32(skb, SMBD_NEG_A_MAX_SEND, c->neg.max_send_size) ||
	    nla_put_u32(skb, SMBD_NEG_A_MAX_RECV, c->neg.max_recv_size) ||
	    nla_put_u32(skb, SMBD_NEG_A_MAX_FRAG_SEND,
			c->neg.max_fragmented_send_size) ||
	    nla_put_u32(skb, SMBD_NEG_A_MAX_FRAG_RECV,
			c->neg.max_fragmented_recv_size) ||
	    nla_put_u32(skb, SMBD_NEG_A_MAX_RW, c->neg.max_read_write_size) ||
	    nla_put_u32(skb, SMBD_NEG_A_IRD, c->ird) ||
	    nla_put_u32(skb, SMBD_NEG_A_ORD, c->ord))
		return -EMSGSIZE;
	nla_nest_end(skb, nest);
	return 0;
}

static int smbd_nl_put_credits(struct sk_buff *skb,
			       const struct smbd_nl_conn *c)
{
	struct nlattr *nest = nla_nest_start(skb, SMBD_A_CREDITS);

	if (!nest ||
	    nla_put_u32(skb, SMBD_CRED_A_SEND, c->cred.send_credits) ||
	    nla_put_u32(skb, SMBD_CRED_A_SEND_TARGET,
			c->cred.send_credit_target) ||
	    nla_put_u32(skb, SMBD_CRED_A_RECV_MAX, c->cred.recv_credit_max) ||
	    nla_put_u32(skb, SMBD_CRED_A_RECV_TARGET,
			c->cred.recv_credit_target) ||
	    nla_put_u32(skb, SMBD_CRED_A_RECV_POSTED, c->cred.recv_posted) ||
	    nla_put_u32(skb, SMBD_CRED_A_SENDERS_WAITING, c->waiters))
		return -EMSGSIZE;
	nla_nest_end(skb, nest);
	return 0;
}

static int smbd_nl_put_stats(struct sk_buff *skb, const struct smbd_nl_conn *c)
{
	const struct smbd_sock_stats *st = &c->st;
	struct nlattr *nest = nla_nest_start(skb, SMBD_A_STATS);
	const struct {
		int attr;
		u64 val;
	} v[] = {
		{ SMBD_STAT_A_MSGS_SENT, st->msgs_sent },
		{ SMBD_STAT_A_MSGS_RECV, st->msgs_recv },
		{ SMBD_STAT_A_SEGS_SENT, st->segs_sent },
		{ SMBD_STAT_A_SEGS_RECV, st->segs_recv },
		{ SMBD_STAT_A_BYTES_SENT, st->bytes_sent },
		{ SMBD_STAT_A_BYTES_ZCOPY, st->bytes_zcopy },
		{ SMBD_STAT_A_BYTES_RECV, st->bytes_recv },
		{ SMBD_STAT_A_GRANTS_SENT, st->grants_sent },
		{ SMBD_STAT_A_CREDIT_STALLS, st->credit_waits },
		{ SMBD_STAT_A_CREDIT_STALL_NS, c->cnt.credit_stall_ns },
		{ SMBD_STAT_A_KEEPALIVES_SENT, st->keepalives_sent },
		{ SMBD_STAT_A_KEEPALIVES_ANSWERED, st->keepalives_answered },
		{ SMBD_STAT_A_MRS_REGISTERED, st->mrs_registered },
		{ SMBD_STAT_A_MRS_LOCAL_INV, st->mrs_local_inv },
		{ SMBD_STAT_A_MRS_REMOTE_INV, st->mrs_remote_inv },
		{ SMBD_STAT_A_RDMA_READS, st->rdma_reads },
		{ SMBD_STAT_A_RDMA_READ_BYTES, st->rdma_read_bytes },
		{ SMBD_STAT_A_RDMA_WRITES, st->rdma_writes },
		{ SMBD_STAT_A_RDMA_WRITE_BYTES, st->rdma_write_bytes },
		{ SMBD_STAT_A_CONNS_REFUSED, st->conns_refused },
		{ SMBD_STAT_A_CONNS_WRONG_CLASS, st->conns_wrong_class },
		{ SMBD_STAT_A_PEER_REFUSALS, st->peer_refusals },
		{ SMBD_STAT_A_COMPLETION_ERRORS, c->cnt.wr_errors },
	};
	u32 i;

	if (!nest)
		return -EMSGSIZE;
	for (i = 0; i < ARRAY_SIZE(v); i++)
		if (nla_put_u64_64bit(skb, v[i].attr, v[i].val,
				      SMBD_STAT_A_PAD))
			return -EMSGSIZE;
	nla_nest_end(skb, nest);
	return 0;
}

static int smbd_nl_put_refusal(struct sk_buff *skb, const char *section,
			       const char *reason, u32 count)
{
	struct nlattr *nest;

	if (!count)
		return 0;
	nest = nla_nest_start(skb, SMBD_A_REFUSAL);
	if (!nest ||
	    nla_put_string(skb, SMBD_REF_A_SECTION, section) ||
	    nla_put_string(skb, SMBD_REF_A_REASON, reason) ||
	    nla_put_u32(skb, SMBD_REF_A_COUNT, count))
		return -EMSGSIZE;
	nla_nest_end(skb, nest);
	return 0;
}

/* Negotiation: 3.1.5.6 on a responder, 3.1.5.7 on an initiator. */
static int smbd_nl_put_refusals(struct sk_buff *skb, bool responder,
				const struct smbd_nl_conn *c)
{
	struct nlattr *nest = nla_nest_start(skb, SMBD_A_REFUSALS);
	u32 i;

	if (!nest)
		return -EMSGSIZE;
	for (i = 1; i < SMBD_NEG_ERR_NR; i++)
		if (smbd_nl_put_refusal(skb, responder ? "3.1.5.6" : "3.1.5.7",
					smbd_neg_err_str(i),
					c->cnt.neg_refused[i]))
			return -EMSGSIZE;
	for (i = 1; i < SMBD_RX_ERR_NR; i++)
		if (smbd_nl_put_refusal(skb, "3.1.5.8", smbd_rx_err_str(i),
					c->cnt.rx_refused[i]))
			return -EMSGSIZE;
	nla_nest_end(skb, nest);
	return 0;
}

/* Caller holds smbd_socks_lock. */
static int smbd_nl_fill_conn(struct sk_buff *skb, struct smbd_sock *sk,
			     struct smbd_nl_conn *c)
{
	bool lsn = smbd_is_listener(sk);
	u8 role = lsn ? SMBD_ROLE_LISTENER : sk->ss_responder ?
		  SMBD_ROLE_RESPONDER : SMBD_ROLE_INITIATOR;

	smbd_nl_conn_snap(sk, c);
	if (nla_put_u32(skb, SMBD_A_ID, sk->ss_id) ||
	    nla_put_u8(skb, SMBD_A_ROLE, role) ||
	    nla_put_string(skb, SMBD_A_STATE, smbd_state_name(c->state)) ||
	    nla_put_s32(skb, SMBD_A_ERROR, c->err))
		return -EMSGSIZE;
	if (sk->ss_ep.devname[0] &&
	    (nla_put_string(skb, SMBD_A_DEV_NAME, sk->ss_ep.devname) ||
	     nla_put_u8(skb, SMBD_A_DEV_CLASS, sk->ss_ep.iwarp ?
			SMBD_CLASS_IWARP : SMBD_CLASS_IB)))
		return -EMSGSIZE;
	if (c->addr &&
	    (smbd_nl_put_addr(skb, SMBD_A_LOCAL, SMBD_A_LOCAL_PORT,
			      &c->local) ||
	     (!lsn && smbd_nl_put_addr(skb, SMBD_A_PEER, SMBD_A_PEER_PORT,
				       &c->peer))))
		return -EMSGSIZE;
	if (lsn)
		return nla_put_u32(skb, SMBD_A_PENDING, c->pending) ?:
		       nla_put_u32(skb, SMBD_A_ACCEPT_QUEUE, c->accept_len) ?:
		       smbd_nl_put_stats(skb, c);
	return smbd_nl_put_neg(skb, c) ?: smbd_nl_put_credits(skb, c) ?:
	       smbd_nl_put_stats(skb, c) ?:
	       smbd_nl_put_refusals(skb, sk->ss_responder, c);
}

/* cb->args[0]: the lowest id still to give (sockets are listed by id). */
static int smbd_nl_conn_dump(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct net *net = sock_net(skb->sk);
	struct smbd_nl_conn *c;
	struct smbd_sock *sk;
	void *hdr;

	c = kmalloc(sizeof(*c), GFP_KERNEL);
	if (!c)
		return -ENOMEM;
	mutex_lock(&smbd_socks_lock);
	list_for_each_entry(sk, &smbd_socks, ss_all_node) {
		if (sk->ss_id < cb->args[0] || !net_eq(sk->ss_net, net))
			continue;
		hdr = smbd_nl_put_hdr(skb, NETLINK_CB(cb->skb).portid,
				      cb->nlh->nlmsg_seq, NLM_F_MULTI,
				      SMBD_CMD_CONN_GET);
		if (!hdr)
			break;
		if (smbd_nl_fill_conn(skb, sk, c)) {
			genlmsg_cancel(skb, hdr);
			break;
		}
		genlmsg_end(skb, hdr);
		cb->args[0] = (long)sk->ss_id + 1;
	}
	mutex_unlock(&smbd_socks_lock);
	kfree(c);
	return skb->len;
}

/*
 * Reply to @info with one socket's message of @cmd: @sk, or the one of
 * @id in the caller's namespace when @sk is NULL (-ENOENT if none).
 */
static int smbd_nl_conn_reply(struct genl_info *info, u8 cmd,
			      struct smbd_sock *sk, u32 id)
{
	struct net *net = genl_info_net(info);
	struct smbd_nl_conn *c;
	struct smbd_sock *pos;
	struct sk_buff *msg;
	int ret = -ENOMEM;
	void *hdr;

	c = kmalloc(sizeof(*c), GFP_KERNEL);
	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!c || !msg)
		goto out;
	hdr = smbd_nl_put_hdr(msg, info->snd_portid, info->snd_seq, 0, cmd);
	ret = -EMSGSIZE;
	if (!hdr)
		goto out;
	mutex_lock(&smbd_socks_lock);
	if (!sk)
		list_for_each_entry(pos, &smbd_socks, ss_all_node)
			if (pos->ss_id == id && net_eq(pos->ss_net, net))
				sk = pos;
	ret = sk ? smbd_nl_fill_conn(msg, sk, c) : -ENOENT;
	mutex_unlock(&smbd_socks_lock);
	if (ret)
		goto out;
	genlmsg_end(msg, hdr);
	kfree(c);
	return genlmsg_reply(msg, info);
out:
	nlmsg_free(msg);
	kfree(c);
	return ret;
}

static int smbd_nl_conn_get(struct sk_buff *skb, struct genl_info *info)
{
	int ret;

	if (GENL_REQ_ATTR_CHECK(info, SMBD_A_ID))
		return -EINVAL;
	ret = smbd_nl_conn_reply(info, SMBD_CMD_CONN_GET, NULL,
				 nla_get_u32(info->attrs[SMBD_A_ID]));
	if (ret == -ENOENT)
		NL_SET_BAD_ATTR(info->extack, info->attrs[SMBD_A_ID]);
	return ret;
}

/* SMBD_CMD_PROBE */

/* The connect test's failure, said as the administrator needs it. */
static void smbd_nl_probe_why(struct netlink_ext_ack *extack, int err)
{
	switch (err) {
	case -ECONNREFUSED:
		NL_SET_ERR_MSG(extack,
			       "refused: no SMB Direct listener at that address and port, or the peer refused the connection");
		break;
	case -ETIMEDOUT:
		NL_SET_ERR_MSG(extack,
			       "no answer in time: the address does not reach an RDMA device, or the peer does not negotiate");
		break;
	case -EHOSTUNREACH:
	case -ENETUNREACH:
	case -EADDRNOTAVAIL:
	case -ENODEV:
		NL_SET_ERR_MSG(extack,
			       "no RDMA device reaches that address (is an rxe or siw link, or a NIC, on its interface?)");
		break;
	case -EPROTO:
		NL_SET_ERR_MSG(extack,
			       "the peer's negotiation was refused ([MS-SMBD] 3.1.5.7): see the kernel log");
		break;
	default:
		NL_SET_ERR_MSG(extack, "the connection failed");
		break;
	}
}

static int smbd_nl_probe(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *a = info->attrs[SMBD_A_PEER];
	struct sockaddr_storage dst = {};
	struct sockaddr_in6 *s6 = (void *)&dst;
	struct sockaddr_in *s4 = (void *)&dst;
	struct smbd_params p;
	struct smbd_sock *sk;
	u16 port;
	int ret;

	if (GENL_REQ_ATTR_CHECK(info, SMBD_A_PEER) ||
	    GENL_REQ_ATTR_CHECK(info, SMBD_A_PEER_PORT))
		return -EINVAL;
	port = nla_get_u16(info->attrs[SMBD_A_PEER_PORT]);
	if (nla_len(a) == sizeof(struct in_addr)) {
		s4->sin_family = AF_INET;
		s4->sin_addr.s_addr = nla_get_in_addr(a);
		s4->sin_port = htons(port);
	} else if (nla_len(a) == sizeof(struct in6_addr)) {
		s6->sin6_family = AF_INET6;
		s6->sin6_addr = nla_get_in6_addr(a);
		s6->sin6_port = htons(port);
	} else {
		NL_SET_ERR_MSG_ATTR(info->extack, a,
				    "an address is 4 (IPv4) or 16 (IPv6) bytes");
		return -EINVAL;
	}
	smbd_params_init(&p, false);
	p.negotiate_timeout_ms = SMBD_NL_PROBE_MS;
	if (info->attrs[SMBD_A_TIMEOUT_MS])
		p.negotiate_timeout_ms =
			nla_get_u32(info->attrs[SMBD_A_TIMEOUT_MS]);
	ret = smbd_sock_create(genl_info_net(info), &p, &sk);
	if (ret)
		return ret;
	ret = smbd_sock_connect(sk, (struct sockaddr *)&dst);
	if (ret)
		smbd_nl_probe_why(info->extack, ret);
	else	/* the socket is the caller's: it stays */
		ret = smbd_nl_conn_reply(info, SMBD_CMD_PROBE, sk, 0);
	smbd_sock_release(sk);
	return ret;
}

static const struct genl_ops smbd_nl_ops[] = {
	{
		.cmd = SMBD_CMD_INFO_GET,
		.doit = smbd_nl_info_get,
	},
	{
		.cmd = SMBD_CMD_DEV_GET,
		.dumpit = smbd_nl_dev_dump,
	},
	{
		.cmd = SMBD_CMD_IF_GET,
		.dumpit = smbd_nl_if_dump,
	},
	{
		.cmd = SMBD_CMD_CONN_GET,
		.doit = smbd_nl_conn_get,
		.dumpit = smbd_nl_conn_dump,
	},
	{
		.cmd = SMBD_CMD_PROBE,
		.doit = smbd_nl_probe,
		.flags = GENL_UNS_ADMIN_PERM,
	},
};

static struct genl_family smbd_nl_family = {
	.name = SMBD_GENL_NAME,
	.version = SMBD_GENL_VERSION,
	.maxattr = SMBD_A_MAX,
	.policy = smbd_nl_policy,
	.netnsok = true,
	.parallel_ops = true,
	.module = THIS_MODULE,
	.ops = smbd_nl_ops,
	.n_ops = ARRAY_SIZE(smbd_nl_ops),
};

/**
 * smbd_nl_init() - register the "smbd" generic netlink family
 *
 * Context: process (module init), once smbd follows devices.
 * Return: 0 or genl_register_family()'s errno.
 */
int smbd_nl_init(void)
{
	return genl_register_family(&smbd_nl_family);
}

/**
 * smbd_nl_exit() - unregister it
 *
 * Returns once no request of the family runs (a connect test included).
 *
 * Context: process (module exit).
 */
void smbd_nl_exit(void)
{
	genl_unregister_family(&smbd_nl_family);
}

// SPDX-License-Identifier: GPL-2.0
/*
 * smbdctl: the kernel's answers (SMBD_CMD_INFO_GET, DEV_GET, IF_GET,
 * CONN_GET) read into plain structures, and their names.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "smbdctl.h"

const char *const stat_names[SMBD_STAT_A_MAX + 1] = {
	[SMBD_STAT_A_MSGS_SENT] = "msgs_sent",
	[SMBD_STAT_A_MSGS_RECV] = "msgs_recv",
	[SMBD_STAT_A_SEGS_SENT] = "segs_sent",
	[SMBD_STAT_A_SEGS_RECV] = "segs_recv",
	[SMBD_STAT_A_BYTES_SENT] = "bytes_sent",
	[SMBD_STAT_A_BYTES_ZCOPY] = "bytes_zero_copy",
	[SMBD_STAT_A_BYTES_RECV] = "bytes_recv",
	[SMBD_STAT_A_GRANTS_SENT] = "grants_sent",
	[SMBD_STAT_A_CREDIT_STALLS] = "credit_stalls",
	[SMBD_STAT_A_CREDIT_STALL_NS] = "credit_stall_ns",
	[SMBD_STAT_A_KEEPALIVES_SENT] = "keepalives_sent",
	[SMBD_STAT_A_KEEPALIVES_ANSWERED] = "keepalives_answered",
	[SMBD_STAT_A_MRS_REGISTERED] = "mrs_registered",
	[SMBD_STAT_A_MRS_LOCAL_INV] = "mrs_local_inv",
	[SMBD_STAT_A_MRS_REMOTE_INV] = "mrs_remote_inv",
	[SMBD_STAT_A_RDMA_READS] = "rdma_reads",
	[SMBD_STAT_A_RDMA_READ_BYTES] = "rdma_read_bytes",
	[SMBD_STAT_A_RDMA_WRITES] = "rdma_writes",
	[SMBD_STAT_A_RDMA_WRITE_BYTES] = "rdma_write_bytes",
	[SMBD_STAT_A_CONNS_REFUSED] = "conns_refused",
	[SMBD_STAT_A_CONNS_WRONG_CLASS] = "conns_wrong_class",
	[SMBD_STAT_A_PEER_REFUSALS] = "peer_refusals",
	[SMBD_STAT_A_COMPLETION_ERRORS] = "completion_errors",
};

const char *const lim_names[SMBD_LIM_A_MAX + 1] = {
	[SMBD_LIM_A_QP_WR] = "max_qp_wr",
	[SMBD_LIM_A_SEND_SGE] = "max_send_sge",
	[SMBD_LIM_A_RECV_SGE] = "max_recv_sge",
	[SMBD_LIM_A_CQE] = "max_cqe",
	[SMBD_LIM_A_RD_ATOM] = "max_qp_rd_atom",
	[SMBD_LIM_A_INIT_RD_ATOM] = "max_qp_init_rd_atom",
	[SMBD_LIM_A_FRMR_PAGES] = "max_fast_reg_page_list_len",
	[SMBD_LIM_A_SGE_RD] = "max_sge_rd",
};

const char *const neg_names[SMBD_NEG_A_MAX + 1] = {
	[SMBD_NEG_A_MAX_SEND] = "max_send_size",
	[SMBD_NEG_A_MAX_RECV] = "max_receive_size",
	[SMBD_NEG_A_MAX_FRAG_SEND] = "max_fragmented_send_size",
	[SMBD_NEG_A_MAX_FRAG_RECV] = "max_fragmented_receive_size",
	[SMBD_NEG_A_MAX_RW] = "max_read_write_size",
	[SMBD_NEG_A_IRD] = "ird",
	[SMBD_NEG_A_ORD] = "ord",
};

const char *const cred_names[SMBD_CRED_A_MAX + 1] = {
	[SMBD_CRED_A_SEND] = "send_credits",
	[SMBD_CRED_A_SEND_TARGET] = "send_credit_target",
	[SMBD_CRED_A_RECV_MAX] = "receive_credit_max",
	[SMBD_CRED_A_RECV_TARGET] = "receive_credit_target",
	[SMBD_CRED_A_RECV_POSTED] = "receives_posted",
	[SMBD_CRED_A_SENDERS_WAITING] = "senders_waiting",
};

const char *class_name(uint8_t cls)
{
	return cls == SMBD_CLASS_IWARP ? "iwarp" : "ib/roce";
}

const char *role_name(uint8_t role)
{
	switch (role) {
	case SMBD_ROLE_LISTENER:
		return "listener";
	case SMBD_ROLE_INITIATOR:
		return "initiator";
	case SMBD_ROLE_RESPONDER:
		return "responder";
	}
	return "?";
}

const char *use_name(uint8_t use)
{
	switch (use) {
	case SMBD_USE_YES:
		return "used";
	case SMBD_USE_NO_FRWR:
		return "no-frwr";
	case SMBD_USE_SHORT:
		return "short";
	case SMBD_USE_DEAD:
		return "dead";
	}
	return "?";
}

/* "192.0.2.1:445", "[2001:db8::1]:445", or without the port. */
char *addr_str(const struct addr *a, char *buf, size_t len, bool port)
{
	char ip[INET6_ADDRSTRLEN] = "-";

	if (a->family)
		inet_ntop(a->family, a->bytes, ip, sizeof(ip));
	if (!port || !a->family)
		snprintf(buf, len, "%s", ip);
	else if (a->family == AF_INET6)
		snprintf(buf, len, "[%s]:%u", ip, a->port);
	else
		snprintf(buf, len, "%s:%u", ip, a->port);
	return buf;
}

bool addr_wild(const struct addr *a)
{
	static const unsigned char zero[16];

	return !memcmp(a->bytes, zero, a->family == AF_INET6 ? 16 : 4);
}

static void addr_from(struct addr *a, const struct nlattr *ip,
		      const struct nlattr *port)
{
	if (!ip || (nla_len(ip) != 4 && nla_len(ip) != 16))
		return;
	a->family = nla_len(ip) == 4 ? AF_INET : AF_INET6;
	memcpy(a->bytes, nla_data(ip), nla_len(ip));
	a->port = port ? nla_u16(port) : 0;
}

static void copy_str(char *dst, size_t len, const struct nlattr *a)
{
	snprintf(dst, len, "%s", a ? nla_str(a) : "");
}

/* Grow @arr of @n elements of @size by one, zeroed. */
static void *grow(void *arr, int n, size_t size)
{
	char *p = realloc(arr, (n + 1) * size);

	if (!p) {
		perror("smbdctl");
		exit(EXIT_ERROR);
	}
	memset(p + n * size, 0, size);
	return p;
}

static int info_msg(uint8_t cmd, const char *data, size_t len, void *arg)
{
	struct nlattr *tb[SMBD_A_MAX + 1];
	struct state *st = arg;

	nl_parse(tb, SMBD_A_MAX, data, len);
	copy_str(st->version, sizeof(st->version), tb[SMBD_A_VERSION]);
	return 0;
}

/* The u32 attributes of a nest, by type, into @v (1 to @max). */
static void nest_u32s(const struct nlattr *nest, int max, uint32_t *v)
{
	struct nlattr *tb[SMBD_STAT_A_MAX + 1];
	int i;

	nl_parse_nested(tb, max, nest);
	for (i = 1; i <= max; i++)
		v[i] = tb[i] ? nla_u32(tb[i]) : 0;
}

static void nest_u64s(const struct nlattr *nest, int max,
		      unsigned long long *v)
{
	struct nlattr *tb[SMBD_STAT_A_MAX + 1];
	int i;

	nl_parse_nested(tb, max, nest);
	for (i = 1; i <= max; i++)
		v[i] = tb[i] ? nla_u64(tb[i]) : 0;
}

static int dev_msg(uint8_t cmd, const char *data, size_t len, void *arg)
{
	struct nlattr *tb[SMBD_A_MAX + 1], *lt[SMBD_LIM_A_MAX + 1];
	struct state *st = arg;
	struct dev *d;
	int i;

	nl_parse(tb, SMBD_A_MAX, data, len);
	st->devs = grow(st->devs, st->ndevs, sizeof(*d));
	d = &st->devs[st->ndevs++];
	copy_str(d->name, sizeof(d->name), tb[SMBD_A_DEV_NAME]);
	copy_str(d->netdev, sizeof(d->netdev), tb[SMBD_A_DEV_NETDEV]);
	copy_str(d->short_of, sizeof(d->short_of), tb[SMBD_A_DEV_SHORT_OF]);
	copy_str(d->profile, sizeof(d->profile), tb[SMBD_A_DEV_PROFILE]);
	d->index = tb[SMBD_A_DEV_INDEX] ? nla_u32(tb[SMBD_A_DEV_INDEX]) : 0;
	d->cls = tb[SMBD_A_DEV_CLASS] ? nla_u8(tb[SMBD_A_DEV_CLASS]) : 0;
	d->use = tb[SMBD_A_DEV_USE] ? nla_u8(tb[SMBD_A_DEV_USE]) : 0;
	d->conns = tb[SMBD_A_DEV_CONNS] ? nla_u32(tb[SMBD_A_DEV_CONNS]) : 0;
	d->have = tb[SMBD_A_DEV_SHORT_HAVE] ? nla_u32(tb[SMBD_A_DEV_SHORT_HAVE]) : 0;
	d->need = tb[SMBD_A_DEV_SHORT_NEED] ? nla_u32(tb[SMBD_A_DEV_SHORT_NEED]) : 0;
	if (tb[SMBD_A_DEV_LIMITS]) {
		nl_parse_nested(lt, SMBD_LIM_A_MAX, tb[SMBD_A_DEV_LIMITS]);
		for (i = 1; i <= SMBD_LIM_A_MAX; i++)
			d->lim[i] = lt[i] ? nla_u32(lt[i]) : 0;
	}
	d->conns_total = tb[SMBD_A_DEV_CONNS_TOTAL] ?
			 nla_u64(tb[SMBD_A_DEV_CONNS_TOTAL]) : 0;
	if (tb[SMBD_A_STATS])
		nest_u64s(tb[SMBD_A_STATS], SMBD_STAT_A_MAX, d->stats);
	return 0;
}

/* Each SMBD_A_IF_PATH of an interface's message. */
static void if_paths(struct iface *f, const char *data, size_t len)
{
	const struct nlattr *a = (const void *)data;
	struct nlattr *pt[SMBD_A_MAX + 1];
	struct iface_path *p;

	while (len >= NLA_HDRLEN && a->nla_len >= NLA_HDRLEN &&
	       a->nla_len <= len) {
		size_t step = NLA_ALIGN(a->nla_len);

		if ((a->nla_type & NLA_TYPE_MASK) == SMBD_A_IF_PATH &&
		    f->npaths < MAX_PATHS) {
			nl_parse_nested(pt, SMBD_A_MAX, a);
			p = &f->paths[f->npaths++];
			copy_str(p->dev, sizeof(p->dev), pt[SMBD_A_DEV_NAME]);
			copy_str(p->via, sizeof(p->via), pt[SMBD_A_IF_VIA]);
			p->cls = pt[SMBD_A_DEV_CLASS] ?
				 nla_u8(pt[SMBD_A_DEV_CLASS]) : 0;
		}
		if (step >= len)
			break;
		len -= step;
		a = (const void *)((const char *)a + step);
	}
}

static int if_msg(uint8_t cmd, const char *data, size_t len, void *arg)
{
	struct nlattr *tb[SMBD_A_MAX + 1];
	struct state *st = arg;
	struct iface *f;

	nl_parse(tb, SMBD_A_MAX, data, len);
	st->ifs = grow(st->ifs, st->nifs, sizeof(*f));
	f = &st->ifs[st->nifs++];
	copy_str(f->name, sizeof(f->name), tb[SMBD_A_IF_NAME]);
	f->index = tb[SMBD_A_IF_INDEX] ? nla_u32(tb[SMBD_A_IF_INDEX]) : 0;
	f->classes = tb[SMBD_A_IF_CLASSES] ? nla_u32(tb[SMBD_A_IF_CLASSES]) : 0;
	if_paths(f, data, len);
	return 0;
}

static void conn_refusals(struct conn *c, const struct nlattr *nest)
{
	const struct nlattr *a = nla_data(nest);
	struct nlattr *rt[SMBD_REF_A_MAX + 1];
	size_t len = nla_len(nest);
	struct refusal *r;

	while (len >= NLA_HDRLEN && a->nla_len >= NLA_HDRLEN &&
	       a->nla_len <= len) {
		size_t step = NLA_ALIGN(a->nla_len);

		if ((a->nla_type & NLA_TYPE_MASK) == SMBD_A_REFUSAL &&
		    c->nref < MAX_REFUSALS) {
			nl_parse_nested(rt, SMBD_REF_A_MAX, a);
			r = &c->ref[c->nref++];
			copy_str(r->section, sizeof(r->section),
				 rt[SMBD_REF_A_SECTION]);
			copy_str(r->reason, sizeof(r->reason),
				 rt[SMBD_REF_A_REASON]);
			r->count = rt[SMBD_REF_A_COUNT] ?
				   nla_u32(rt[SMBD_REF_A_COUNT]) : 0;
		}
		if (step >= len)
			break;
		len -= step;
		a = (const void *)((const char *)a + step);
	}
}

void conn_from_attrs(struct conn *c, const char *data, size_t len)
{
	struct nlattr *tb[SMBD_A_MAX + 1];

	nl_parse(tb, SMBD_A_MAX, data, len);
	memset(c, 0, sizeof(*c));
	c->id = tb[SMBD_A_ID] ? nla_u32(tb[SMBD_A_ID]) : 0;
	c->role = tb[SMBD_A_ROLE] ? nla_u8(tb[SMBD_A_ROLE]) : 0;
	c->err = tb[SMBD_A_ERROR] ? (int32_t)nla_u32(tb[SMBD_A_ERROR]) : 0;
	copy_str(c->state, sizeof(c->state), tb[SMBD_A_STATE]);
	copy_str(c->dev, sizeof(c->dev), tb[SMBD_A_DEV_NAME]);
	c->has_cls = tb[SMBD_A_DEV_CLASS];
	c->cls = c->has_cls ? nla_u8(tb[SMBD_A_DEV_CLASS]) : 0;
	addr_from(&c->local, tb[SMBD_A_LOCAL], tb[SMBD_A_LOCAL_PORT]);
	addr_from(&c->peer, tb[SMBD_A_PEER], tb[SMBD_A_PEER_PORT]);
	c->pending = tb[SMBD_A_PENDING] ? nla_u32(tb[SMBD_A_PENDING]) : 0;
	c->acceptq = tb[SMBD_A_ACCEPT_QUEUE] ?
		     nla_u32(tb[SMBD_A_ACCEPT_QUEUE]) : 0;
	c->has_neg = tb[SMBD_A_NEG];
	if (c->has_neg)
		nest_u32s(tb[SMBD_A_NEG], SMBD_NEG_A_MAX, c->neg);
	c->has_cred = tb[SMBD_A_CREDITS];
	if (c->has_cred)
		nest_u32s(tb[SMBD_A_CREDITS], SMBD_CRED_A_MAX, c->cred);
	c->has_stats = tb[SMBD_A_STATS];
	if (c->has_stats)
		nest_u64s(tb[SMBD_A_STATS], SMBD_STAT_A_MAX, c->stats);
	if (tb[SMBD_A_REFUSALS])
		conn_refusals(c, tb[SMBD_A_REFUSALS]);
}

static int conn_msg(uint8_t cmd, const char *data, size_t len, void *arg)
{
	struct state *st = arg;

	st->conns = grow(st->conns, st->nconns, sizeof(*st->conns));
	conn_from_attrs(&st->conns[st->nconns++], data, len);
	return 0;
}

/* Everything the kernel tells. Return: 0 or a negative errno. */
int model_load(struct state *st)
{
	int ret;

	memset(st, 0, sizeof(*st));
	ret = nl_do(SMBD_CMD_INFO_GET, NULL, 0, info_msg, st);
	if (!ret)
		ret = nl_dump(SMBD_CMD_DEV_GET, dev_msg, st);
	if (!ret)
		ret = nl_dump(SMBD_CMD_IF_GET, if_msg, st);
	if (!ret)
		ret = nl_dump(SMBD_CMD_CONN_GET, conn_msg, st);
	return ret;
}

void model_free(struct state *st)
{
	free(st->devs);
	free(st->ifs);
	free(st->conns);
	memset(st, 0, sizeof(*st));
}

// SPDX-License-Identifier: GPL-2.0
/*
 * smbdctl: generic netlink, spoken directly (no library): resolve the
 * "smbd" family, send a request, walk the replies' attributes.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>

#include "smbdctl.h"

#define NL_BUF	65536

static int nl_fd = -1;
static uint16_t nl_family;
static uint32_t nl_seq;
/* The last error's extended acknowledgment, "" when it had none. */
char nl_errmsg[256];

struct nl_req {
	struct nlmsghdr n;
	struct genlmsghdr g;
	char buf[256];
};

/* Append attribute @type of @len bytes to @n (of room @max). */
static int nl_put(struct nlmsghdr *n, size_t max, int type, const void *data,
		  size_t len)
{
	struct nlattr *a = (void *)((char *)n + NLMSG_ALIGN(n->nlmsg_len));
	size_t need = NLA_ALIGN(NLA_HDRLEN + len);

	if (NLMSG_ALIGN(n->nlmsg_len) + need > max)
		return -ENOSPC;
	a->nla_type = type;
	a->nla_len = NLA_HDRLEN + len;
	memcpy((char *)a + NLA_HDRLEN, data, len);
	memset((char *)a + NLA_HDRLEN + len, 0, need - a->nla_len);
	n->nlmsg_len = NLMSG_ALIGN(n->nlmsg_len) + need;
	return 0;
}

/* Index the attributes of @data (@len bytes) by type, up to @max. */
void nl_parse(struct nlattr **tb, int max, const void *data, size_t len)
{
	const struct nlattr *a = data;
	size_t step;

	memset(tb, 0, sizeof(*tb) * (max + 1));
	while (len >= NLA_HDRLEN) {
		int type = a->nla_type & NLA_TYPE_MASK;

		if (a->nla_len < NLA_HDRLEN || a->nla_len > len)
			break;
		if (type <= max)
			tb[type] = (struct nlattr *)a;
		step = NLA_ALIGN(a->nla_len);
		if (step >= len)
			break;
		len -= step;
		a = (const void *)((const char *)a + step);
	}
}

void nl_parse_nested(struct nlattr **tb, int max, const struct nlattr *nest)
{
	nl_parse(tb, max, nla_data(nest), nla_len(nest));
}

/* The errno and message of an NLMSG_ERROR. */
static int nl_error(const struct nlmsghdr *h)
{
	const struct nlmsgerr *e = NLMSG_DATA(h);
	struct nlattr *tb[NLMSGERR_ATTR_MAX + 1];
	size_t off;

	if (h->nlmsg_len < NLMSG_LENGTH(sizeof(*e)))
		return -EPROTO;
	if (!e->error || !(h->nlmsg_flags & NLM_F_ACK_TLVS))
		return e->error;
	/* With NETLINK_CAP_ACK the request is not echoed past its header. */
	off = NLMSG_LENGTH(sizeof(*e));
	if (!(h->nlmsg_flags & NLM_F_CAPPED))
		off += e->msg.nlmsg_len - NLMSG_HDRLEN;
	if (off < h->nlmsg_len) {
		nl_parse(tb, NLMSGERR_ATTR_MAX, (const char *)h + off,
			 h->nlmsg_len - off);
		if (tb[NLMSGERR_ATTR_MSG])
			snprintf(nl_errmsg, sizeof(nl_errmsg), "%s",
				 (const char *)nla_data(tb[NLMSGERR_ATTR_MSG]));
	}
	return e->error;
}

/*
 * Send @req and hand each reply of the family to @fn until the dump's
 * end or the acknowledgment. Return: 0 or a negative errno (the
 * kernel's, with nl_errmsg).
 */
static int nl_talk(struct nl_req *req, nl_msg_fn fn, void *arg)
{
	static char buf[NL_BUF];
	bool dump = req->n.nlmsg_flags & NLM_F_DUMP;
	int ret = 0;
	ssize_t len;

	nl_errmsg[0] = 0;
	req->n.nlmsg_seq = ++nl_seq;
	req->n.nlmsg_flags |= NLM_F_REQUEST | NLM_F_ACK;
	if (send(nl_fd, req, req->n.nlmsg_len, 0) < 0)
		return -errno;
	for (;;) {
		struct nlmsghdr *h;

		len = recv(nl_fd, buf, sizeof(buf), 0);
		if (len < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		for (h = (void *)buf; NLMSG_OK(h, len); h = NLMSG_NEXT(h, len)) {
			if (h->nlmsg_seq != req->n.nlmsg_seq)
				continue;
			if (h->nlmsg_type == NLMSG_DONE)
				return ret;
			if (h->nlmsg_type == NLMSG_ERROR) {
				int err = nl_error(h);

				if (err || !dump)
					return err ? err : ret;
				continue;
			}
			if (h->nlmsg_type == nl_family && fn && !ret) {
				const struct genlmsghdr *g = NLMSG_DATA(h);

				ret = fn(g->cmd, (const char *)g + GENL_HDRLEN,
					 h->nlmsg_len - NLMSG_LENGTH(GENL_HDRLEN),
					 arg);
			}
		}
	}
}

static void nl_req_init(struct nl_req *req, uint16_t type, uint8_t cmd,
			uint16_t flags)
{
	memset(req, 0, sizeof(*req));
	req->n.nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN);
	req->n.nlmsg_type = type;
	req->n.nlmsg_flags = flags;
	req->g.cmd = cmd;
	req->g.version = SMBD_GENL_VERSION;
}

static int nl_family_id(uint8_t cmd, const char *data, size_t len, void *arg)
{
	struct nlattr *tb[CTRL_ATTR_MAX + 1];

	nl_parse(tb, CTRL_ATTR_MAX, data, len);
	if (!tb[CTRL_ATTR_FAMILY_ID])
		return -EPROTO;
	nl_family = nla_u16(tb[CTRL_ATTR_FAMILY_ID]);
	return 0;
}

/*
 * Open the socket and find the family. Return: 0, -ENOENT when smbd is
 * not loaded, or another negative errno.
 */
int nl_open(void)
{
	int one = 1, ret;
	struct nl_req req;
	uint16_t type = GENL_ID_CTRL;

	nl_fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (nl_fd < 0)
		return -errno;
	setsockopt(nl_fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	setsockopt(nl_fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
	nl_req_init(&req, type, CTRL_CMD_GETFAMILY, 0);
	req.g.version = 1;
	nl_put(&req.n, sizeof(req), CTRL_ATTR_FAMILY_NAME, SMBD_GENL_NAME,
	       sizeof(SMBD_GENL_NAME));
	/* The controller's reply comes with its own type: take it. */
	nl_family = type;
	ret = nl_talk(&req, nl_family_id, NULL);
	if (ret) {
		nl_family = 0;
		return ret;
	}
	return nl_family ? 0 : -ENOENT;
}

void nl_close(void)
{
	if (nl_fd >= 0)
		close(nl_fd);
	nl_fd = -1;
}

int nl_dump(uint8_t cmd, nl_msg_fn fn, void *arg)
{
	struct nl_req req;

	nl_req_init(&req, nl_family, cmd, NLM_F_DUMP);
	return nl_talk(&req, fn, arg);
}

/* A doit request with the attributes of @attrs (type, data, len each). */
int nl_do(uint8_t cmd, const struct nl_attr_out *attrs, int n, nl_msg_fn fn,
	  void *arg)
{
	struct nl_req req;
	int i;

	nl_req_init(&req, nl_family, cmd, 0);
	for (i = 0; i < n; i++)
		if (nl_put(&req.n, sizeof(req), attrs[i].type, attrs[i].data,
			   attrs[i].len))
			return -ENOSPC;
	return nl_talk(&req, fn, arg);
}

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * smbdctl: what smbd is doing, and why SMB Direct is not used
 * (smbdctl(8), include/uapi/smbd_netlink.h).
 */
#ifndef SMBDCTL_H
#define SMBDCTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <linux/netlink.h>

#include "../../include/uapi/smbd_netlink.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* Exit codes (smbdctl(8)). */
#define EXIT_OK		0	/* done; doctor: nothing wrong */
#define EXIT_FINDING	1	/* doctor: something to fix; probe: failed */
#define EXIT_USAGE	2	/* a bad command line */
#define EXIT_NO_SMBD	3	/* smbd is not loaded (status, probe) */
#define EXIT_ERROR	4	/* the kernel refused or failed a request */

static inline void *nla_data(const struct nlattr *a)
{
	return (char *)a + NLA_HDRLEN;
}

static inline int nla_len(const struct nlattr *a)
{
	return a->nla_len - NLA_HDRLEN;
}

static inline uint8_t nla_u8(const struct nlattr *a)
{
	return *(uint8_t *)nla_data(a);
}

static inline uint16_t nla_u16(const struct nlattr *a)
{
	uint16_t v;

	memcpy(&v, nla_data(a), sizeof(v));
	return v;
}

static inline uint32_t nla_u32(const struct nlattr *a)
{
	uint32_t v;

	memcpy(&v, nla_data(a), sizeof(v));
	return v;
}

static inline uint64_t nla_u64(const struct nlattr *a)
{
	uint64_t v;

	memcpy(&v, nla_data(a), sizeof(v));
	return v;
}

/* A string attribute, with its NUL checked. */
static inline const char *nla_str(const struct nlattr *a)
{
	const char *s = nla_data(a);

	return nla_len(a) > 0 && s[nla_len(a) - 1] == 0 ? s : "?";
}

/* nl.c */
typedef int (*nl_msg_fn)(uint8_t cmd, const char *data, size_t len,
			 void *arg);

struct nl_attr_out {
	int type;
	const void *data;
	size_t len;
};

extern char nl_errmsg[256];
int nl_open(void);
void nl_close(void);
int nl_dump(uint8_t cmd, nl_msg_fn fn, void *arg);
int nl_do(uint8_t cmd, const struct nl_attr_out *attrs, int n, nl_msg_fn fn,
	  void *arg);
void nl_parse(struct nlattr **tb, int max, const void *data, size_t len);
void nl_parse_nested(struct nlattr **tb, int max, const struct nlattr *nest);

/* model.c: what the kernel said, as smbdctl keeps it */
#define MAX_PATHS	8
#define MAX_REFUSALS	32

struct addr {
	int family;		/* AF_INET, AF_INET6, 0: none */
	unsigned char bytes[16];
	uint16_t port;
};

struct dev {
	char name[64];
	char netdev[32];
	char short_of[32];
	char profile[32];
	uint32_t index, have, need, conns;
	uint32_t lim[SMBD_LIM_A_MAX + 1];
	unsigned long long conns_total;
	unsigned long long stats[SMBD_STAT_A_MAX + 1];
	uint8_t cls, use;
};

struct iface_path {
	char dev[64];
	char via[32];
	uint8_t cls;
};

struct iface {
	char name[32];
	uint32_t index, classes;
	int npaths;
	struct iface_path paths[MAX_PATHS];
};

struct refusal {
	char section[16];
	char reason[64];
	uint32_t count;
};

struct conn {
	char state[24];
	char dev[64];
	struct addr local, peer;
	uint32_t id, pending, acceptq;
	int32_t err;
	uint8_t role, cls;
	bool has_cls, has_neg, has_cred, has_stats;
	uint32_t neg[SMBD_NEG_A_MAX + 1];
	uint32_t cred[SMBD_CRED_A_MAX + 1];
	unsigned long long stats[SMBD_STAT_A_MAX + 1];
	int nref;
	struct refusal ref[MAX_REFUSALS];
};

struct state {
	char version[32];
	int ndevs, nifs, nconns;
	struct dev *devs;
	struct iface *ifs;
	struct conn *conns;
};

int model_load(struct state *st);
void model_free(struct state *st);
void conn_from_attrs(struct conn *c, const char *data, size_t len);
const char *class_name(uint8_t cls);
const char *role_name(uint8_t role);
const char *use_name(uint8_t use);
char *addr_str(const struct addr *a, char *buf, size_t len, bool port);
bool addr_wild(const struct addr *a);
extern const char *const stat_names[SMBD_STAT_A_MAX + 1];
extern const char *const lim_names[SMBD_LIM_A_MAX + 1];
extern const char *const neg_names[SMBD_NEG_A_MAX + 1];
extern const char *const cred_names[SMBD_CRED_A_MAX + 1];

/* status.c */
int cmd_status(int argc, char **argv, bool json, bool stats);
void json_conn(const struct conn *c, bool stats);

/* doctor.c */
int cmd_doctor(int argc, char **argv, bool json);
int cmd_probe(int argc, char **argv, bool json);

/* json.c: one object written as it goes */
void js_begin(char open);
void js_end(char close);
void js_key(const char *k);
void js_str(const char *k, const char *v);
void js_u64(const char *k, uint64_t v);
void js_i64(const char *k, int64_t v);
void js_bool(const char *k, bool v);
void js_newline(void);

#endif

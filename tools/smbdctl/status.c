// SPDX-License-Identifier: GPL-2.0
/*
 * smbdctl status: devices, interfaces, listeners and connections, as a
 * table (in the style of ss and rdma resource) or as JSON (-j); -s adds
 * each connection's counters.
 */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "smbdctl.h"

/* Which sections to show: all, or the one named. */
enum { SEC_DEVS = 1, SEC_IFS = 2, SEC_LSN = 4, SEC_CONNS = 8, SEC_ALL = 15 };

static const char *conn_class(const struct conn *c)
{
	return c->has_cls ? class_name(c->cls) : "-";
}

static void text_devs(const struct state *st, bool stats)
{
	int i, j;

	printf("%-12s %-5s %-8s %-12s %-8s %s\n", "DEVICE", "INDEX", "CLASS",
	       "NETDEV", "USE", "CONNS");
	for (i = 0; i < st->ndevs; i++) {
		const struct dev *d = &st->devs[i];

		printf("%-12s %-5u %-8s %-12s %-8s %u", d->name, d->index,
		       class_name(d->cls), d->netdev[0] ? d->netdev : "-",
		       use_name(d->use), d->conns);
		if (d->use == SMBD_USE_SHORT)
			printf("  (%s %u, needs %u)", d->short_of, d->have,
			       d->need);
		if (d->profile[0])
			printf("  profile %s", d->profile);
		putchar('\n');
		if (!stats)
			continue;
		printf("    %llu connections carried:", d->conns_total);
		printf(" bytes sent %llu recv %llu",
		       d->stats[SMBD_STAT_A_BYTES_SENT],
		       d->stats[SMBD_STAT_A_BYTES_RECV]);
		printf(" rdma read %llu bytes write %llu bytes\n",
		       d->stats[SMBD_STAT_A_RDMA_READ_BYTES],
		       d->stats[SMBD_STAT_A_RDMA_WRITE_BYTES]);
		printf("   ");
		for (j = 1; j <= SMBD_LIM_A_MAX; j++)
			printf(" %s %u", lim_names[j], d->lim[j]);
		putchar('\n');
	}
}

static void text_ifs(const struct state *st)
{
	int i, j;

	printf("%-16s %-6s %s\n", "INTERFACE", "RDMA", "REACHED BY");
	for (i = 0; i < st->nifs; i++) {
		const struct iface *f = &st->ifs[i];

		printf("%-16s %-6s", f->name, f->classes ? "yes" : "no");
		for (j = 0; j < f->npaths; j++)
			printf(" %s(%s%s%s)", f->paths[j].dev,
			       class_name(f->paths[j].cls),
			       strcmp(f->paths[j].via, f->name) ? " via " : "",
			       strcmp(f->paths[j].via, f->name) ?
			       f->paths[j].via : "");
		if (!f->npaths)
			printf(" -");
		putchar('\n');
	}
}

static void text_lsn(const struct state *st, bool stats)
{
	char a[64];
	int i;

	printf("%-6s %-10s %-10s %-8s %-24s %-8s %s\n", "ID", "STATE", "DEVICE",
	       "CLASS", "LOCAL", "PENDING", "ACCEPT_Q");
	for (i = 0; i < st->nconns; i++) {
		const struct conn *c = &st->conns[i];

		if (c->role != SMBD_ROLE_LISTENER)
			continue;
		printf("%-6u %-10s %-10s %-8s %-24s %-8u %u\n", c->id,
		       c->state, c->dev[0] ? c->dev : "*", conn_class(c),
		       addr_str(&c->local, a, sizeof(a), true), c->pending,
		       c->acceptq);
		if (stats && c->has_stats)
			printf("       refused %llu wrong_class %llu\n",
			       c->stats[SMBD_STAT_A_CONNS_REFUSED],
			       c->stats[SMBD_STAT_A_CONNS_WRONG_CLASS]);
	}
}

static void text_conn_stats(const struct conn *c)
{
	const unsigned long long *s = c->stats;
	const uint32_t *n = c->neg;
	int i;

	printf("       msgs sent %llu recv %llu", s[SMBD_STAT_A_MSGS_SENT],
	       s[SMBD_STAT_A_MSGS_RECV]);
	printf("  bytes sent %llu (zero-copy %llu) recv %llu\n",
	       s[SMBD_STAT_A_BYTES_SENT], s[SMBD_STAT_A_BYTES_ZCOPY],
	       s[SMBD_STAT_A_BYTES_RECV]);
	printf("       rdma read %llu (%llu bytes)", s[SMBD_STAT_A_RDMA_READS],
	       s[SMBD_STAT_A_RDMA_READ_BYTES]);
	printf(" write %llu (%llu bytes)  mrs %llu\n",
	       s[SMBD_STAT_A_RDMA_WRITES], s[SMBD_STAT_A_RDMA_WRITE_BYTES],
	       s[SMBD_STAT_A_MRS_REGISTERED]);
	printf("       credits %u/%u posted %u", c->cred[SMBD_CRED_A_SEND],
	       c->cred[SMBD_CRED_A_SEND_TARGET],
	       c->cred[SMBD_CRED_A_RECV_POSTED]);
	printf("  stalls %llu (%llu ms)  keep-alives %llu",
	       s[SMBD_STAT_A_CREDIT_STALLS],
	       s[SMBD_STAT_A_CREDIT_STALL_NS] / 1000000,
	       s[SMBD_STAT_A_KEEPALIVES_SENT]);
	printf("  refused %llu  errors %llu\n", s[SMBD_STAT_A_PEER_REFUSALS],
	       s[SMBD_STAT_A_COMPLETION_ERRORS]);
	if (c->has_neg) {
		printf("       negotiated send %u recv %u fragmented %u",
		       n[SMBD_NEG_A_MAX_SEND], n[SMBD_NEG_A_MAX_RECV],
		       n[SMBD_NEG_A_MAX_FRAG_RECV]);
		printf(" rw %u ird %u ord %u\n", n[SMBD_NEG_A_MAX_RW],
		       n[SMBD_NEG_A_IRD], n[SMBD_NEG_A_ORD]);
	}
	for (i = 0; i < c->nref; i++)
		printf("       refused [MS-SMBD] %s %s: %u\n", c->ref[i].section,
		       c->ref[i].reason, c->ref[i].count);
}

static void text_conns(const struct state *st, bool stats)
{
	char a[64], b[64];
	int i;

	printf("%-6s %-10s %-13s %-10s %-8s %-24s %s\n", "ID", "ROLE", "STATE",
	       "DEVICE", "CLASS", "LOCAL", "PEER");
	for (i = 0; i < st->nconns; i++) {
		const struct conn *c = &st->conns[i];

		if (c->role == SMBD_ROLE_LISTENER)
			continue;
		printf("%-6u %-10s %-13s %-10s %-8s %-24s %s", c->id,
		       role_name(c->role), c->state, c->dev[0] ? c->dev : "-",
		       conn_class(c), addr_str(&c->local, a, sizeof(a), true),
		       addr_str(&c->peer, b, sizeof(b), true));
		if (c->err)
			printf("  error %d (%s)", c->err, strerror(-c->err));
		putchar('\n');
		if (stats && c->has_stats)
			text_conn_stats(c);
	}
}

static void json_addr(const char *k, const struct addr *a)
{
	char buf[64];

	if (!a->family)
		return;
	js_key(k);
	js_begin('{');
	js_str("address", addr_str(a, buf, sizeof(buf), false));
	js_u64("port", a->port);
	js_end('}');
}

static void json_stats(const unsigned long long *st)
{
	int j;

	js_key("stats");
	js_begin('{');
	for (j = 1; j <= SMBD_STAT_A_MAX; j++)
		if (stat_names[j])
			js_u64(stat_names[j], st[j]);
	js_end('}');
}

static void json_dev(const struct dev *d, bool stats)
{
	int j;

	js_key(NULL);
	js_begin('{');
	js_str("name", d->name);
	js_u64("index", d->index);
	js_str("class", class_name(d->cls));
	if (d->netdev[0])
		js_str("netdev", d->netdev);
	js_str("use", use_name(d->use));
	js_u64("connections", d->conns);
	if (d->use == SMBD_USE_SHORT) {
		js_str("short_of", d->short_of);
		js_u64("has", d->have);
		js_u64("needs", d->need);
	}
	if (d->profile[0])
		js_str("profile", d->profile);
	if (stats) {
		js_u64("connections_total", d->conns_total);
		js_key("limits");
		js_begin('{');
		for (j = 1; j <= SMBD_LIM_A_MAX; j++)
			js_u64(lim_names[j], d->lim[j]);
		js_end('}');
		json_stats(d->stats);
	}
	js_end('}');
}

static void json_if(const struct iface *f)
{
	int j;

	js_key(NULL);
	js_begin('{');
	js_str("name", f->name);
	js_u64("index", f->index);
	js_bool("rdma_capable", f->classes);
	js_key("paths");
	js_begin('[');
	for (j = 0; j < f->npaths; j++) {
		js_key(NULL);
		js_begin('{');
		js_str("device", f->paths[j].dev);
		js_str("class", class_name(f->paths[j].cls));
		js_str("via", f->paths[j].via);
		js_end('}');
	}
	js_end(']');
	js_end('}');
}

static void json_u32s(const char *k, const uint32_t *v, int max,
		      const char *const *names)
{
	int j;

	js_key(k);
	js_begin('{');
	for (j = 1; j <= max; j++)
		if (names[j])
			js_u64(names[j], v[j]);
	js_end('}');
}

static void json_conn_stats(const struct conn *c)
{
	int j;

	json_stats(c->stats);
	js_key("refusals");
	js_begin('[');
	for (j = 0; j < c->nref; j++) {
		js_key(NULL);
		js_begin('{');
		js_str("section", c->ref[j].section);
		js_str("reason", c->ref[j].reason);
		js_u64("count", c->ref[j].count);
		js_end('}');
	}
	js_end(']');
}

/* One listener or connection, as JSON. */
void json_conn(const struct conn *c, bool stats)
{
	js_key(NULL);
	js_begin('{');
	js_u64("id", c->id);
	js_str("role", role_name(c->role));
	js_str("state", c->state);
	if (c->err)
		js_i64("error", c->err);
	if (c->dev[0])
		js_str("device", c->dev);
	if (c->has_cls)
		js_str("class", class_name(c->cls));
	json_addr("local", &c->local);
	json_addr("peer", &c->peer);
	if (c->role == SMBD_ROLE_LISTENER) {
		js_u64("pending", c->pending);
		js_u64("accept_queue", c->acceptq);
	}
	if (c->has_neg)
		json_u32s("negotiated", c->neg, SMBD_NEG_A_MAX, neg_names);
	if (c->has_cred)
		json_u32s("credits", c->cred, SMBD_CRED_A_MAX, cred_names);
	if (stats && c->has_stats)
		json_conn_stats(c);
	js_end('}');
}

static void json_conns(const struct state *st, bool listeners, bool stats)
{
	int i;

	js_key(listeners ? "listeners" : "connections");
	js_begin('[');
	for (i = 0; i < st->nconns; i++) {
		bool lsn = st->conns[i].role == SMBD_ROLE_LISTENER;

		if (lsn == listeners)
			json_conn(&st->conns[i], stats);
	}
	js_end(']');
}

static void json_status(const struct state *st, int sec, bool stats)
{
	int i;

	js_begin('{');
	js_str("version", st->version);
	if (sec & SEC_DEVS) {
		js_key("devices");
		js_begin('[');
		for (i = 0; i < st->ndevs; i++)
			json_dev(&st->devs[i], stats);
		js_end(']');
	}
	if (sec & SEC_IFS) {
		js_key("interfaces");
		js_begin('[');
		for (i = 0; i < st->nifs; i++)
			json_if(&st->ifs[i]);
		js_end(']');
	}
	if (sec & SEC_LSN)
		json_conns(st, true, stats);
	if (sec & SEC_CONNS)
		json_conns(st, false, stats);
	js_end('}');
	js_newline();
}

static int section(const char *s)
{
	static const struct {
		const char *name;
		int sec;
	} secs[] = {
		{ "devices", SEC_DEVS }, { "dev", SEC_DEVS },
		{ "interfaces", SEC_IFS }, { "if", SEC_IFS },
		{ "listeners", SEC_LSN }, { "listen", SEC_LSN },
		{ "connections", SEC_CONNS }, { "conn", SEC_CONNS },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(secs); i++)
		if (!strcmp(s, secs[i].name))
			return secs[i].sec;
	return 0;
}

/* smbdctl status [devices|interfaces|listeners|connections] */
int cmd_status(int argc, char **argv, bool json, bool stats)
{
	struct state st;
	int sec = SEC_ALL, ret;

	if (argc > 1) {
		sec = section(argv[1]);
		if (!sec || argc > 2) {
			fprintf(stderr,
				"smbdctl: status [devices|interfaces|listeners|connections]\n");
			return EXIT_USAGE;
		}
	}
	ret = model_load(&st);
	if (ret) {
		fprintf(stderr, "smbdctl: the kernel said %s%s%s\n",
			strerror(-ret), nl_errmsg[0] ? ": " : "", nl_errmsg);
		return EXIT_ERROR;
	}
	if (json) {
		json_status(&st, sec, stats);
	} else {
		if (sec == SEC_ALL)
			printf("smbd %s\n\n", st.version);
		if (sec & SEC_DEVS)
			text_devs(&st, stats);
		if ((sec & SEC_IFS) && sec != SEC_ALL)
			text_ifs(&st);
		if (sec == SEC_ALL)
			putchar('\n');
		if (sec & SEC_LSN)
			text_lsn(&st, stats);
		if (sec == SEC_ALL)
			putchar('\n');
		if (sec & SEC_CONNS)
			text_conns(&st, stats);
	}
	model_free(&st);
	return EXIT_OK;
}

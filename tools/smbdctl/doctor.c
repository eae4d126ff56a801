// SPDX-License-Identifier: GPL-2.0
/*
 * smbdctl doctor [ADDRESS]: why SMB Direct is or is not used here, each
 * finding with its fix; and smbdctl probe ADDRESS [PORT], the connect
 * test it runs (SMBD_CMD_PROBE).
 */

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "smbdctl.h"

enum level { L_OK, L_NOTE, L_PROBLEM };

#define FIX_PROFILE \
	"lift the test profile (echo none > /sys/kernel/debug/smbd/dev_profile), then remove and add the device again"
#define FIX_SHORT \
	"use a device with more of it, or raise it in the device's driver or firmware settings"
#define FIX_SMBD "modprobe smbd (installed by smbd-dkms: dkms status smbd)"

static const char *const level_names[] = { "ok", "note", "problem" };
static bool doc_json;
static int doc_problems;

/* Where doctor looks; tests point these elsewhere. */
static const char *sys_module = "/sys/module";
static const char *ksmbd_conf = "/etc/ksmbd/ksmbd.conf";
static const char *kallsyms = "/proc/kallsyms";

/* One finding: @check names the kind, @fix may be NULL. */
static void finding(enum level lv, const char *check, const char *fix,
		    const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (lv == L_PROBLEM)
		doc_problems++;
	if (doc_json) {
		js_key(NULL);
		js_begin('{');
		js_str("check", check);
		js_str("level", level_names[lv]);
		js_str("message", msg);
		if (fix)
			js_str("fix", fix);
		js_end('}');
		return;
	}
	printf("%-8s %s: %s\n", level_names[lv], check, msg);
	if (fix)
		printf("%-8s fix: %s\n", "", fix);
}

static bool path_exists(const char *fmt, const char *a, const char *b)
{
	char p[512];
	struct stat sb;

	snprintf(p, sizeof(p), fmt, a, b);
	return !stat(p, &sb);
}

/*
 * Is module @m of this kernel built in, or where? Looks up the running
 * kernel's modules.dep and modules.builtin for "/@m.ko".
 */
static bool kernel_has_module(const char *m)
{
	static const char *const files[] = { "modules.dep", "modules.builtin" };
	char path[256], line[1024], want[64];
	struct utsname u;
	size_t i;
	FILE *f;

	if (path_exists("%s/%s", sys_module, m))
		return true;
	if (uname(&u))
		return false;
	snprintf(want, sizeof(want), "/%s.ko", m);
	for (i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "/lib/modules/%s/%s", u.release,
			 files[i]);
		f = fopen(path, "r");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f)) {
			char *colon = strchr(line, ':');

			if (colon)
				*colon = 0;
			if (strstr(line, want)) {
				fclose(f);
				return true;
			}
		}
		fclose(f);
	}
	return false;
}

/*
 * Does module @m have function @fn (/proc/kallsyms)? The stock SMB
 * Direct code's own: cifs's smbd_conn_upcall, ksmbd's smb_direct_cm_handler.
 */
static bool module_has_symbol(const char *m, const char *fn)
{
	char line[512], want[128];
	bool found = false;
	FILE *f;

	f = fopen(kallsyms, "r");
	if (!f)
		return false;
	snprintf(want, sizeof(want), " %s\t[%s]", fn, m);
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, want);
	fclose(f);
	return found;
}

/* cifs or ksmbd: loaded, and on smbd or the kernel's own SMB Direct. */
static void check_consumer(const char *m, const char *stock_fn,
			   const char *stock_cfg)
{
	char fix[512];
	bool on_rdma;

	snprintf(fix, sizeof(fix),
		 "install the %s built on smbd (apt install smbd-dkms; dkms status smbd lists it), stop its users (%s), then: modprobe -r %s && modprobe %s",
		 m, !strcmp(m, "cifs") ? "umount -a -t cifs" :
		 "ksmbd.control --shutdown", m, m);
	if (!path_exists("%s/%s", sys_module, m)) {
		finding(L_NOTE, m, NULL, "%s is not loaded", m);
		return;
	}
	if (path_exists("%s/smbd/holders/%s", sys_module, m)) {
		finding(L_OK, m, NULL, "%s runs SMB Direct on smbd", m);
		return;
	}
	/* rdma_cm's holders where ib_core is a module (Debian's kernels). */
	on_rdma = path_exists("%s/rdma_cm/holders/%s", sys_module, m) ||
		  module_has_symbol(m, stock_fn);
	if (on_rdma)
		finding(L_PROBLEM, m, fix,
			"%s is the kernel's own module with its own SMB Direct: its RDMA connections bypass smbd (not in smbdctl status, the stock code's limits and bugs)",
			m);
	else
		finding(L_PROBLEM, m, fix,
			"%s is the kernel's own module without SMB Direct (%s is not set, as on Debian's kernels): %s",
			m, stock_cfg, !strcmp(m, "cifs") ?
			"mount -o rdma fails" : "it serves TCP only");
}

static void check_consumers(void)
{
	check_consumer("cifs", "smbd_conn_upcall", "CONFIG_CIFS_SMB_DIRECT");
	check_consumer("ksmbd", "smb_direct_cm_handler",
		       "CONFIG_SMB_SERVER_SMBDIRECT");
}

/* "server multi channel support" in ksmbd.conf's [global]. */
static void check_multichannel(void)
{
	char line[512], key[128], val[64];
	bool global = false, found = false, on = false;
	FILE *f;

	if (!path_exists("%s/%s", sys_module, "ksmbd"))
		return;
	f = fopen(ksmbd_conf, "r");
	if (!f) {
		finding(L_NOTE, "ksmbd-multichannel", NULL,
			"cannot read %s: %s", ksmbd_conf, strerror(errno));
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		char *s = line + strspn(line, " \t");

		if (*s == '[') {
			global = !strncmp(s, "[global]", 8);
			continue;
		}
		if (!global ||
		    strncmp(s, "server multi channel support", 28) ||
		    sscanf(s, "%127[^=]= %63s", key, val) != 2)
			continue;
		found = true;
		on = !strcasecmp(val, "yes") || !strcasecmp(val, "true") ||
		     !strcmp(val, "1");
	}
	fclose(f);
	if (on) {
		finding(L_OK, "ksmbd-multichannel", NULL,
			"ksmbd offers multichannel (%s)", ksmbd_conf);
		return;
	}
	finding(L_PROBLEM, "ksmbd-multichannel",
		"set \"server multi channel support = yes\" in [global] of ksmbd.conf, then restart ksmbd (ksmbd.control --shutdown; ksmbd.mountd)",
		"ksmbd's multichannel is off (%s in %s): a Windows client reaches SMB Direct only through multichannel, so it stays on TCP",
		found ? "set to no" : "not set, off by default", ksmbd_conf);
}

static void check_devices(const struct state *st)
{
	char msg[256];
	int i, used = 0;

	for (i = 0; i < st->ndevs; i++) {
		const struct dev *d = &st->devs[i];

		switch (d->use) {
		case SMBD_USE_YES:
			used++;
			finding(L_OK, "device", NULL, "%s (%s%s%s) is used, %u connections",
				d->name, class_name(d->cls),
				d->netdev[0] ? " on " : "", d->netdev, d->conns);
			break;
		case SMBD_USE_SHORT:
			snprintf(msg, sizeof(msg), "%s", d->profile[0] ?
				 FIX_PROFILE : FIX_SHORT);
			finding(L_PROBLEM, "device", msg,
				"%s is not used: its %s is %u, below the %u smbd needs",
				d->name, d->short_of, d->have, d->need);
			break;
		case SMBD_USE_NO_FRWR:
			finding(L_PROBLEM, "device",
				"use a device (or driver) with fast memory registration",
				"%s is not used: it has no fast memory registration (IB_DEVICE_MEM_MGT_EXTENSIONS), which SMB Direct's RDMA reads and writes need",
				d->name);
			break;
		default:
			finding(L_PROBLEM, "device",
				"remove and add the device again (rdma link delete / add, or reload its driver)",
				"%s reported a fatal error: no connection runs on it", d->name);
			break;
		}
	}
	if (used)
		return;
	finding(L_PROBLEM, "device",
		"a NIC's RDMA driver, or a soft device: modprobe rdma_rxe && rdma link add rxe0 type rxe netdev IFACE (RoCE), or modprobe siw && rdma link add siw0 type siw netdev IFACE (iWARP)",
		"no RDMA device smbd can use: nothing here speaks SMB Direct");
	if (!kernel_has_module("rdma_rxe"))
		finding(L_NOTE, "kernel", NULL,
			"this kernel has no soft-RoCE (rdma_rxe, CONFIG_RDMA_RXE)");
	if (!kernel_has_module("siw"))
		finding(L_NOTE, "kernel", NULL,
			"this kernel has no soft-iWARP (siw, CONFIG_RDMA_SIW; Debian's kernels ship without it)");
}

/* The interfaces below @name (/sys/class/net/NAME/lower_*), in @buf. */
static void lower_names(const char *name, char *buf, size_t len)
{
	char path[128];
	struct dirent *e;
	size_t off = 0;
	DIR *d;

	buf[0] = 0;
	snprintf(path, sizeof(path), "/sys/class/net/%s", name);
	d = opendir(path);
	if (!d)
		return;
	while ((e = readdir(d)) && off + 1 < len)
		if (!strncmp(e->d_name, "lower_", 6))
			off += snprintf(buf + off, len - off, "%s%s",
					off ? ", " : "", e->d_name + 6);
	closedir(d);
}

/* The interface of @st named @name, if smbd listed it. */
static const struct iface *iface_of(const struct state *st, const char *name)
{
	int i;

	for (i = 0; i < st->nifs; i++)
		if (!strcmp(st->ifs[i].name, name))
			return &st->ifs[i];
	return NULL;
}

static bool usable_ifa(const struct ifaddrs *ifa)
{
	const struct sockaddr_in6 *s6 = (const void *)ifa->ifa_addr;

	if (!ifa->ifa_addr || (ifa->ifa_flags & IFF_LOOPBACK) ||
	    !(ifa->ifa_flags & IFF_UP))
		return false;
	if (ifa->ifa_addr->sa_family == AF_INET)
		return true;
	return ifa->ifa_addr->sa_family == AF_INET6 &&
	       !IN6_IS_ADDR_LINKLOCAL(&s6->sin6_addr);
}

static void ifa_addr(const struct ifaddrs *ifa, struct addr *a)
{
	memset(a, 0, sizeof(*a));
	a->family = ifa->ifa_addr->sa_family;
	if (a->family == AF_INET)
		memcpy(a->bytes, &((struct sockaddr_in *)ifa->ifa_addr)->sin_addr, 4);
	else
		memcpy(a->bytes, &((struct sockaddr_in6 *)ifa->ifa_addr)->sin6_addr, 16);
}

static void check_interface(const struct state *st, const struct ifaddrs *ifa)
{
	const struct iface *f = iface_of(st, ifa->ifa_name);
	char ip[64], lower[256], fix[512], how[256] = "";
	struct addr a;
	int j;

	ifa_addr(ifa, &a);
	addr_str(&a, ip, sizeof(ip), false);
	if (f && f->classes) {
		for (j = 0; j < f->npaths; j++)
			snprintf(how + strlen(how), sizeof(how) - strlen(how),
				 "%s%s (%s, port %s)", j ? ", " : "",
				 f->paths[j].dev, class_name(f->paths[j].cls),
				 f->paths[j].via);
		finding(L_OK, "interface", NULL,
			"%s (%s) is RDMA-capable, as a server reports it: %s",
			ifa->ifa_name, ip, how);
		return;
	}
	lower_names(ifa->ifa_name, lower, sizeof(lower));
	snprintf(fix, sizeof(fix),
		 "give %s an RDMA device: the NIC's RDMA driver, or rdma link add rxe_%s type rxe netdev %s (soft RoCE)",
		 lower[0] ? lower : ifa->ifa_name, lower[0] ? lower : ifa->ifa_name,
		 lower[0] ? lower : ifa->ifa_name);
	if (lower[0])
		finding(L_NOTE, "interface", fix,
			"%s (%s) has no RDMA device below it (below it: %s, none an RDMA device's port): a server reports it without RDMA_CAPABLE and clients use TCP there",
			ifa->ifa_name, ip, lower);
	else
		finding(L_NOTE, "interface", fix,
			"%s (%s) has no RDMA device: a server reports it without RDMA_CAPABLE and clients use TCP there",
			ifa->ifa_name, ip);
}

/* A listener of @st for @a (or the wildcard) at @port, of class @cls. */
static const struct conn *listener_for(const struct state *st,
				       const struct addr *a, uint16_t port,
				       uint8_t cls)
{
	int i;

	for (i = 0; i < st->nconns; i++) {
		const struct conn *c = &st->conns[i];

		if (c->role != SMBD_ROLE_LISTENER || c->local.port != port ||
		    c->local.family != a->family ||
		    (c->has_cls && c->cls != cls))
			continue;
		if (addr_wild(&c->local) ||
		    !memcmp(c->local.bytes, a->bytes,
			    a->family == AF_INET ? 4 : 16))
			return c;
	}
	return NULL;
}

static int nr_listeners(const struct state *st)
{
	int i, n = 0;

	for (i = 0; i < st->nconns; i++)
		n += st->conns[i].role == SMBD_ROLE_LISTENER;
	return n;
}

static int probe_reply(uint8_t cmd, const char *data, size_t len, void *arg)
{
	conn_from_attrs(arg, data, len);
	return 0;
}

/* SMBD_CMD_PROBE of @a. Return: 0 with @c filled, or a negative errno. */
static int probe(const struct addr *a, uint32_t timeout_ms, struct conn *c)
{
	struct nl_attr_out at[3] = {
		{ SMBD_A_PEER, a->bytes, a->family == AF_INET ? 4 : 16 },
		{ SMBD_A_PEER_PORT, &a->port, sizeof(a->port) },
		{ SMBD_A_TIMEOUT_MS, &timeout_ms, sizeof(timeout_ms) },
	};

	return nl_do(SMBD_CMD_PROBE, at, 3, probe_reply, c);
}

static void probe_finding(const struct addr *a, const char *why)
{
	char ip[64], fix[256];
	struct conn c;
	int ret;

	addr_str(a, ip, sizeof(ip), true);
	ret = probe(a, 5000, &c);
	if (!ret) {
		finding(L_OK, "connect", NULL,
			"%s answers SMB Direct%s: through %s (%s), negotiated send %u receive %u read/write %u",
			ip, why, c.dev, c.has_cls ? class_name(c.cls) : "-",
			c.neg[SMBD_NEG_A_MAX_SEND], c.neg[SMBD_NEG_A_MAX_RECV],
			c.neg[SMBD_NEG_A_MAX_RW]);
		return;
	}
	if (ret == -EPERM) {
		finding(L_NOTE, "connect", "run smbdctl doctor as root",
			"%s not tried: a connect test needs CAP_NET_ADMIN", ip);
		return;
	}
	snprintf(fix, sizeof(fix), "%s", nl_errmsg[0] ? nl_errmsg : strerror(-ret));
	finding(L_PROBLEM, "connect",
		"see the listener (smbdctl status listeners) and the device (smbdctl status devices) on that address, and dmesg",
		"%s%s does not answer SMB Direct: %s", ip, why, fix);
}

/* Each RDMA-capable address: a listener of each class reaching it. */
static void check_listeners(const struct state *st, struct ifaddrs *ifas,
			    bool server)
{
	char ip[64], fix[256];
	struct ifaddrs *ifa;
	struct addr a;
	int j;

	for (ifa = ifas; ifa; ifa = ifa->ifa_next) {
		const struct iface *f;

		if (!usable_ifa(ifa))
			continue;
		f = iface_of(st, ifa->ifa_name);
		if (!f)
			continue;
		ifa_addr(ifa, &a);
		for (j = 0; j < f->npaths; j++) {
			a.port = f->paths[j].cls == SMBD_CLASS_IWARP ? 5445 : 445;
			addr_str(&a, ip, sizeof(ip), true);
			if (listener_for(st, &a, a.port, f->paths[j].cls)) {
				finding(L_OK, "listener", NULL,
					"%s listens for %s (%s)", ip,
					class_name(f->paths[j].cls), f->paths[j].dev);
				probe_finding(&a, "");
				continue;
			}
			if (!server)
				continue;
			snprintf(fix, sizeof(fix),
				 "restart the server once %s is up (ksmbd.control --shutdown; ksmbd.mountd), and see dmesg for its listeners",
				 f->paths[j].dev);
			finding(L_PROBLEM, "listener", fix,
				"no SMB Direct listener for %s at %s: clients reaching it through %s are refused",
				class_name(f->paths[j].cls), ip, f->paths[j].dev);
		}
	}
	if (!server)
		finding(L_NOTE, "listener", NULL,
			"no server here (ksmbd not loaded, no listener)");
}

/* doctor ADDRESS: the server at ADDRESS, on both SMB Direct ports. */
static void check_remote(const char *host)
{
	static const uint16_t ports[] = { 445, 5445 };
	char ip[2][64], why[2][256];
	struct addr a = {};
	int i, ret[2];
	struct conn c;

	if (inet_pton(AF_INET, host, a.bytes) == 1) {
		a.family = AF_INET;
	} else if (inet_pton(AF_INET6, host, a.bytes) == 1) {
		a.family = AF_INET6;
	} else {
		finding(L_PROBLEM, "connect", "give an IPv4 or IPv6 address",
			"%s is not an address", host);
		return;
	}
	for (i = 0; i < 2; i++) {
		a.port = ports[i];
		addr_str(&a, ip[i], sizeof(ip[i]), true);
		ret[i] = probe(&a, 5000, &c);
		snprintf(why[i], sizeof(why[i]), "%s",
			 nl_errmsg[0] ? nl_errmsg : strerror(-ret[i]));
		if (!ret[i])
			finding(L_OK, "connect", NULL,
				"%s answers SMB Direct: through %s (%s), negotiated send %u receive %u read/write %u",
				ip[i], c.dev, c.has_cls ? class_name(c.cls) : "-",
				c.neg[SMBD_NEG_A_MAX_SEND],
				c.neg[SMBD_NEG_A_MAX_RECV],
				c.neg[SMBD_NEG_A_MAX_RW]);
		else if (ret[i] == -EPERM)
			break;
	}
	if (ret[0] == -EPERM) {
		finding(L_NOTE, "connect", "run smbdctl doctor as root",
			"%s not tried: a connect test needs CAP_NET_ADMIN", host);
		return;
	}
	/* One port is enough: a device has one class (IB/RoCE 445, iWARP 5445). */
	if (ret[0] && ret[1])
		finding(L_PROBLEM, "connect",
			"check the server's listeners (smbdctl doctor there) and that an RDMA device here reaches the address (smbdctl status interfaces)",
			"%s answers SMB Direct on neither port: %s: %s; %s: %s",
			host, ip[0], why[0], ip[1], why[1]);
}

/* smbdctl doctor [ADDRESS] */
int cmd_doctor(int argc, char **argv, bool json)
{
	struct ifaddrs *ifas = NULL, *ifa;
	struct state st;
	bool server;
	int ret;

	if (getenv("SMBDCTL_SYS_MODULE"))
		sys_module = getenv("SMBDCTL_SYS_MODULE");
	if (getenv("SMBDCTL_KSMBD_CONF"))
		ksmbd_conf = getenv("SMBDCTL_KSMBD_CONF");
	if (argc > 2) {
		fprintf(stderr, "smbdctl: doctor [ADDRESS]\n");
		return EXIT_USAGE;
	}
	doc_json = json;
	if (json) {
		js_begin('{');
		js_key("findings");
		js_begin('[');
	}
	ret = nl_open();
	if (ret) {
		finding(L_PROBLEM, "smbd", FIX_SMBD, "smbd is not loaded%s",
			ret == -ENOENT ? "" : " (netlink failed)");
		check_consumers();
		goto out;
	}
	ret = model_load(&st);
	if (ret) {
		finding(L_PROBLEM, "smbd", NULL, "smbd did not answer: %s",
			strerror(-ret));
		goto out;
	}
	finding(L_OK, "smbd", NULL, "smbd %s is loaded", st.version);
	check_consumers();
	check_multichannel();
	check_devices(&st);
	if (getifaddrs(&ifas))
		ifas = NULL;
	for (ifa = ifas; ifa; ifa = ifa->ifa_next)
		if (usable_ifa(ifa))
			check_interface(&st, ifa);
	server = nr_listeners(&st) ||
		 path_exists("%s/%s", sys_module, "ksmbd");
	check_listeners(&st, ifas, server);
	if (argc == 2)
		check_remote(argv[1]);
	freeifaddrs(ifas);
	model_free(&st);
out:
	if (json) {
		js_end(']');
		js_u64("problems", doc_problems);
		js_end('}');
		js_newline();
	} else {
		printf("%d problem%s\n", doc_problems, doc_problems == 1 ? "" : "s");
	}
	return doc_problems ? EXIT_FINDING : EXIT_OK;
}

/* smbdctl probe ADDRESS [PORT]: one connect test. */
int cmd_probe(int argc, char **argv, bool json)
{
	struct addr a = {};
	struct conn c;
	char *end;
	long port = 445;
	int ret;

	if (argc < 2 || argc > 3)
		goto usage;
	if (inet_pton(AF_INET, argv[1], a.bytes) == 1)
		a.family = AF_INET;
	else if (inet_pton(AF_INET6, argv[1], a.bytes) == 1)
		a.family = AF_INET6;
	else
		goto usage;
	if (argc == 3) {
		port = strtol(argv[2], &end, 10);
		if (*end || port < 1 || port > 65535)
			goto usage;
	}
	a.port = port;
	ret = probe(&a, 5000, &c);
	if (ret) {
		fprintf(stderr, "smbdctl: %s: %s\n", strerror(-ret),
			nl_errmsg[0] ? nl_errmsg : "no detail");
		return ret == -EPERM ? EXIT_ERROR : EXIT_FINDING;
	}
	if (json) {
		json_conn(&c, false);
		js_newline();
	} else {
		printf("connected through %s (%s): ", c.dev,
		       c.has_cls ? class_name(c.cls) : "-");
		printf("max_send_size %u max_receive_size %u ",
		       c.neg[SMBD_NEG_A_MAX_SEND], c.neg[SMBD_NEG_A_MAX_RECV]);
		printf("max_read_write_size %u ird %u ord %u\n",
		       c.neg[SMBD_NEG_A_MAX_RW], c.neg[SMBD_NEG_A_IRD],
		       c.neg[SMBD_NEG_A_ORD]);
	}
	return EXIT_OK;
usage:
	fprintf(stderr, "smbdctl: probe ADDRESS [PORT]\n");
	return EXIT_USAGE;
}

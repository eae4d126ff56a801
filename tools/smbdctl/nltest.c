// SPDX-License-Identifier: GPL-2.0
/*
 * A test, not installed: the "smbd" netlink family's refusals
 * (tests/guest/smb/plan-77-smbdctl.sh): bad requests, each refused with
 * its errno; and what an unprivileged caller may and may not do. Built
 * with smbdctl's netlink code (make smbdctl-nltest).
 *
 *   nltest bad       (as root) every bad request, "ok"/"not ok" a line
 *   nltest unpriv    (as a user) queries answered, the connect test not
 *   nltest get ID    SMBD_CMD_CONN_GET of one id: "id role state"
 * Exit 0 when every case went as it should.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "smbdctl.h"

static int failures;

/* A case: what came back against what should. */
static void expect(const char *name, int got, int want1, int want2)
{
	bool ok = got == want1 || got == want2;

	printf("%s %s: %d (%s)%s%s\n", ok ? "ok" : "not ok", name, got,
	       got ? strerror(-got) : "success", nl_errmsg[0] ? ": " : "",
	       nl_errmsg);
	failures += !ok;
}

static int req(uint8_t cmd, const struct nl_attr_out *a, int n)
{
	return nl_do(cmd, a, n, NULL, NULL);
}

static void bad(void)
{
	static const unsigned char ip4[5] = { 192, 0, 2, 1, 0 };
	static const unsigned char ip17[17] = { 0x20, 0x01, 0x0d, 0xb8 };
	static const unsigned char unreach[4] = { 198, 18, 0, 1 };
	uint16_t port = 445, port0 = 0, id16 = 1;
	uint32_t tmo0 = 0, tmo_big = 60001, tmo = 2000, noid = 0xffffffff;
	uint32_t x = 0;
	struct nl_attr_out a[3];
	int ret;

	expect("probe-without-address", req(SMBD_CMD_PROBE, NULL, 0), -EINVAL, -EINVAL);
	a[0] = (struct nl_attr_out){ SMBD_A_PEER, ip4, 5 };
	a[1] = (struct nl_attr_out){ SMBD_A_PEER_PORT, &port, 2 };
	expect("probe-5-byte-address", req(SMBD_CMD_PROBE, a, 2), -EINVAL, -EINVAL);
	a[0].len = 4;
	expect("probe-without-port", req(SMBD_CMD_PROBE, a, 1), -EINVAL, -EINVAL);
	a[1].data = &port0;
	expect("probe-port-0", req(SMBD_CMD_PROBE, a, 2), -ERANGE, -EINVAL);
	a[0] = (struct nl_attr_out){ SMBD_A_PEER, ip17, 17 };
	a[1].data = &port;
	expect("probe-17-byte-address", req(SMBD_CMD_PROBE, a, 2), -ERANGE, -EINVAL);
	a[0] = (struct nl_attr_out){ SMBD_A_PEER, ip4, 4 };
	a[2] = (struct nl_attr_out){ SMBD_A_TIMEOUT_MS, &tmo0, 4 };
	expect("probe-timeout-0", req(SMBD_CMD_PROBE, a, 3), -ERANGE, -EINVAL);
	a[2].data = &tmo_big;
	expect("probe-timeout-over-60s", req(SMBD_CMD_PROBE, a, 3), -ERANGE, -EINVAL);
	a[0].data = unreach;
	a[2].data = &tmo;
	/* No RDMA device reaches 198.18.0.1: refused, and said why. */
	ret = req(SMBD_CMD_PROBE, a, 3);
	if (ret == -ENETUNREACH || ret == -EADDRNOTAVAIL || ret == -ETIMEDOUT)
		ret = -EHOSTUNREACH;
	expect("probe-unreachable", ret, -EHOSTUNREACH, -EHOSTUNREACH);
	if (!nl_errmsg[0]) {
		printf("not ok probe-unreachable-says-why\n");
		failures++;
	}
	expect("conn-get-without-id", req(SMBD_CMD_CONN_GET, NULL, 0), -EINVAL, -EINVAL);
	a[0] = (struct nl_attr_out){ SMBD_A_ID, &noid, 4 };
	expect("conn-get-unknown-id", req(SMBD_CMD_CONN_GET, a, 1), -ENOENT, -ENOENT);
	a[0] = (struct nl_attr_out){ SMBD_A_ID, &id16, 2 };
	expect("conn-get-short-id", req(SMBD_CMD_CONN_GET, a, 1), -ERANGE, -EINVAL);
	a[0] = (struct nl_attr_out){ SMBD_A_MAX + 5, &x, 4 };
	expect("unknown-attribute", req(SMBD_CMD_INFO_GET, a, 1), -EINVAL, -EINVAL);
	expect("unknown-command", req(SMBD_CMD_MAX + 20, NULL, 0), -EOPNOTSUPP, -EOPNOTSUPP);
	expect("info-get", req(SMBD_CMD_INFO_GET, NULL, 0), 0, 0);
}

static void unpriv(void)
{
	static const unsigned char ip4[4] = { 192, 0, 2, 1 };
	uint16_t port = 445;
	struct nl_attr_out a[2] = {
		{ SMBD_A_PEER, ip4, 4 },
		{ SMBD_A_PEER_PORT, &port, 2 },
	};

	expect("unprivileged-info", req(SMBD_CMD_INFO_GET, NULL, 0), 0, 0);
	expect("unprivileged-dump-devices",
	       nl_dump(SMBD_CMD_DEV_GET, NULL, NULL), 0, 0);
	expect("unprivileged-dump-connections",
	       nl_dump(SMBD_CMD_CONN_GET, NULL, NULL), 0, 0);
	expect("unprivileged-probe-refused", req(SMBD_CMD_PROBE, a, 2),
	       -EPERM, -EPERM);
}

static int show(uint8_t cmd, const char *data, size_t len, void *arg)
{
	struct conn c;

	conn_from_attrs(&c, data, len);
	printf("%u %s %s\n", c.id, role_name(c.role), c.state);
	return 0;
}

int main(int argc, char **argv)
{
	int ret = nl_open();

	if (ret) {
		fprintf(stderr, "nltest: no smbd family: %s\n", strerror(-ret));
		return 2;
	}
	if (argc == 2 && !strcmp(argv[1], "bad")) {
		bad();
	} else if (argc == 2 && !strcmp(argv[1], "unpriv")) {
		unpriv();
	} else if (argc == 3 && !strcmp(argv[1], "get")) {
		uint32_t id = strtoul(argv[2], NULL, 0);
		struct nl_attr_out a = { SMBD_A_ID, &id, 4 };

		ret = nl_do(SMBD_CMD_CONN_GET, &a, 1, show, NULL);
		if (ret)
			fprintf(stderr, "nltest: %s %s\n", strerror(-ret), nl_errmsg);
		failures = !!ret;
	} else {
		fprintf(stderr, "usage: nltest bad | unpriv | get ID\n");
		return 2;
	}
	nl_close();
	return failures ? 1 : 0;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * smbdctl: what smbd (SMB Direct for the Linux kernel) is doing, and why
 * SMB Direct is or is not used. See smbdctl(8).
 */

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "smbdctl.h"

#ifndef SMBDCTL_VERSION
#define SMBDCTL_VERSION "unknown"
#endif

static void print_help(FILE *f)
{
	fputs("usage: smbdctl [-j] [-s] status|show [devices|interfaces|listeners|connections]\n"
	      "       smbdctl [-j] doctor [ADDRESS]\n"
	      "       smbdctl [-j] probe ADDRESS [PORT]\n"
	      "       smbdctl -V | -h\n"
	      "  -j  JSON    -s  statistics    (see smbdctl(8))\n", f);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "stats", no_argument, NULL, 's' },
		{ "statistics", no_argument, NULL, 's' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	bool json = false, stats = false;
	const char *cmd;
	int c, ret;

	while ((c = getopt_long(argc, argv, "+jsVh", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 's':
			stats = true;
			break;
		case 'V':
			printf("smbdctl %s\n", SMBDCTL_VERSION);
			return EXIT_OK;
		case 'h':
			print_help(stdout);
			return EXIT_OK;
		default:
			print_help(stderr);
			return EXIT_USAGE;
		}
	}
	argc -= optind;
	argv += optind;
	cmd = argc ? argv[0] : "status";
	if (!strcmp(cmd, "doctor"))
		return cmd_doctor(argc, argv, json);
	if (strcmp(cmd, "status") && strcmp(cmd, "show") &&
	    strcmp(cmd, "probe")) {
		print_help(stderr);
		return EXIT_USAGE;
	}
	ret = nl_open();
	if (ret) {
		fprintf(stderr, "smbdctl: %s\n", ret == -ENOENT ?
			"smbd is not loaded (modprobe smbd)" : strerror(-ret));
		return ret == -ENOENT ? EXIT_NO_SMBD : EXIT_ERROR;
	}
	if (!strcmp(cmd, "probe"))
		ret = cmd_probe(argc, argv, json);
	else
		ret = cmd_status(argc ? argc : 1, argv, json, stats);
	nl_close();
	return ret;
}

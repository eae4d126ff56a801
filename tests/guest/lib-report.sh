#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Guest library of what every plan repeats: the result lines the harness
# counts (SMBD-TEST: ok, not ok, skip; tests/vm/check-log.sh), the
# clock, the kernel command line, smbd.ko's load and the providers'
# addresses (lib-ifaces.sh). The other libraries source it; so do /init
# and a plan that uses none of them.

# shellcheck source=tests/guest/lib-ifaces.sh
. /smbd/lib-ifaces.sh

ok() { echo "SMBD-TEST: ok $1${2:+ - $2}"; }
nok() { echo "SMBD-TEST: not ok $1${2:+ - $2}"; }
skip() { echo "SMBD-TEST: skip $1${2:+ - $2}"; }
# result STATUS NAME [DETAIL]: ok or not ok, DETAIL either way; returns STATUS
result() {
	if [ "$1" = 0 ]; then ok "$2" "${3:-}"; else nok "$2" "${3:-}"; fi
	return "$1"
}

uptime_s() { cut -d' ' -f1 /proc/uptime; }
# since T0: the seconds since uptime T0, one decimal
since() { awk -v a="$1" -v b="$(uptime_s)" 'BEGIN { printf "%.1f", b - a }'; }
# rate BYTES T0: BYTES in MiB/s over the time since uptime T0, one decimal
rate() {
	awk -v b="$1" -v t0="$2" -v t1="$(uptime_s)" 'BEGIN {
		t = t1 - t0; if (t < 0.01) t = 0.01; printf "%.1f\n", b / 1048576 / t }'
}

md5() { md5sum "$1" 2>/dev/null | cut -d' ' -f1; }
drop_caches() { sync; echo 3 > /proc/sys/vm/drop_caches; }

# karg NAME [DEFAULT]: VALUE of the last NAME=VALUE in /proc/cmdline, or DEFAULT
karg() {
	_kv=${2-}
	# shellcheck disable=SC2013 # words, not lines
	for _ka in $(cat /proc/cmdline); do
		case $_ka in "$1="*) _kv=${_ka#*=} ;; esac
	done
	printf '%s\n' "$_kv"
}

# load_smbd [CHECK]: insmod smbd.ko unless it is loaded; CHECK: its result
# shellcheck disable=SC2120 # CHECK is optional
load_smbd() {
	grep -q '^smbd ' /proc/modules && return 0
	/usr/sbin/insmod /smbd/smbd.ko
	_ls=$?
	[ -z "${1:-}" ] || result $_ls "$1"
	return $_ls
}

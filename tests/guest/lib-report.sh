#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Guest library of what every plan repeats: the result lines the harness
# counts (SMBD-TEST: ok, not ok, skip; tests/harness/check-log.sh) and
# the clock. The other libraries source it; so does a plan that uses none
# of them.

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

md5() { md5sum "$1" 2>/dev/null | cut -d' ' -f1; }
drop_caches() { sync; echo 3 > /proc/sys/vm/drop_caches; }

#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Guest library for the plans that drive smbd_test.ko (tests/kmod)
# through debugfs: result reporting and one-command runs.

D=/sys/kernel/debug/smbd_test
INSMOD=/usr/sbin/insmod
RMMOD=/usr/sbin/rmmod
export INSMOD RMMOD D

# shellcheck source=tests/guest/lib-report.sh
. /smbd/lib-report.sh

# run PREFIX COMMAND...: one smbd_test command; its result lines become
# SMBD-TEST (ok / not ok / skip) and SMBD-INFO lines named PREFIX/...
run() {
	prefix=$1
	shift
	t0=$(uptime_s)
	if ! echo "$*" > $D/ctl 2>/tmp/st-ctl.err; then
		nok "$prefix/$1" "writing \"$*\" failed: $(cat /tmp/st-ctl.err)"
	fi
	cat $D/result > /tmp/st-result
	if [ ! -s /tmp/st-result ]; then
		nok "$prefix/$1" "\"$*\" gave no result"
	fi
	st_report "$prefix" "$1" /tmp/st-result
	echo "    ($1 took $(since "$t0") s)"
}

# st_report PREFIX NAME FILE: a test module's result lines in FILE as
# SMBD-TEST and SMBD-INFO lines named PREFIX/...; any other line fails
# PREFIX/NAME.
st_report() {
	while IFS= read -r l; do
		case $l in
		"ok "*) echo "SMBD-TEST: ok $1/${l#ok }" ;;
		"not ok "*) echo "SMBD-TEST: not ok $1/${l#not ok }" ;;
		"skip "*) echo "SMBD-TEST: skip $1/${l#skip }" ;;
		"info "*) echo "SMBD-INFO: $1: ${l#info }" ;;
		*) nok "$1/$2" "$l" ;;
		esac
	done < "$3"
}

# st_seed PREFIX: the hostile peer's seed in $seed: smbdtest.hostile_seed=N
# from the kernel command line, else from the clock; printed, so that a
# run can be repeated
st_seed() {
	seed=$(karg smbdtest.hostile_seed)
	[ -n "$seed" ] || seed=$(($(date +%s) % 1000000 + 1))
	echo "SMBD-INFO: $1 seed $seed (smbdtest.hostile_seed=$seed repeats this run)"
}

# st_insmod PREFIX NAME: smbd.ko if it is not loaded yet, then
# /smbd/NAME.ko; reports PREFIX/load-smbd and PREFIX/load-NAME and
# returns non-zero when NAME did not load
st_insmod() {
	load_smbd "$1/load-smbd"
	if [ ! -f "/smbd/$2.ko" ]; then
		nok "$1/load-$2" "no /smbd/$2.ko in the image"
		return 1
	fi
	if ! $INSMOD "/smbd/$2.ko"; then
		nok "$1/load-$2"
		return 1
	fi
	ok "$1/load-$2"
}

# st_load: smbd.ko if it is not loaded yet, then smbd_test.ko
st_load() {
	load_smbd transport/load-smbd
	if ! $INSMOD /smbd/smbd_test.ko; then
		nok transport/load-smbd_test
		return 1
	fi
	ok transport/load-smbd_test
}

# edges BYTES: echo sizes around the segment boundaries of BYTES-byte
# messages (a 24-byte header, then the payload)
edges() {
	_b=$(($1 - 24))
	echo "0,1,$((_b - 1)),$_b,$((_b + 1)),$((2 * _b)),$((2 * _b + 1)),4096,65536,max"
}

# msize_on GATHER: the message size two smbd ends with the defaults
# negotiate over a device whose sends gather GATHER entries (smbd uses at
# most 8; siw has 6): the large size, but no more than a send gathers
# from pages, (GATHER - 3) pages; the default size if that is more (the
# plan sets LARGE and DEF_SIZE from smbd's parameters)
msize_on() {
	_m=$((($1 - 3) * 4096))
	[ "$LARGE" -lt "$_m" ] && _m=$LARGE
	[ "$DEF_SIZE" -gt "$_m" ] && _m=$DEF_SIZE
	echo "$_m"
}

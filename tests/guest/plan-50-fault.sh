#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Guest plan: fault and bad-input tests of smbd against a raw-verbs peer
# (tests/fault/smbd_fault.c), over rxe and over siw. Leaves smbd loaded.

CTL=/sys/kernel/debug/smbd_fault/ctl
RES=/sys/kernel/debug/smbd_fault/result

lsmod | grep -q '^smbd ' || insmod /smbd/smbd.ko
if ! insmod /smbd/smbd_fault.ko; then
	echo "SMBD-TEST: not ok fault: load smbd_fault.ko"
	exit 0
fi

run() {	# run <provider> <test> <ip> <port>
	echo "$2 $3 $4" > $CTL
	sed "s/^SMBD-TEST: \(ok\|not ok\) /SMBD-TEST: \1 fault[$1] /" $RES
}

for p in "rxe 192.0.2.1" "siw 192.0.2.17"; do
	set -- $p
	run $1 ka-idle $2 7101
	run $1 ka-dead $2 7102
	run $1 neg-silent $2 7103
	run $1 neg-version $2 7104
	run $1 neg-short $2 7105
	port=7110
	for c in align overlap bounds credits0 toolarge short oversize; do
		port=$((port + 1))
		run $1 bad-$c $2 $port
	done
done

rmmod smbd_fault
[ $? = 0 ] && echo "SMBD-TEST: ok fault: unload smbd_fault.ko" ||
	echo "SMBD-TEST: not ok fault: unload smbd_fault.ko"

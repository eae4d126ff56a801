#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Guest plan: consumers that give up at every step of a connection, in
# both roles, over rxe and siw (tests/churn/smbd_churn.c), then the same
# with the RDMA device deleted under the churn (rdma link delete). Each
# provider ends with a health check: a new connection still negotiates
# and moves data. Runs from the kernel command line:
#   smbdtest.churn_iters=N        initiator releases per provider (1050)
#   smbdtest.churn_rounds=N       listener releases per provider (45)

CTL=/sys/kernel/debug/smbd_churn/ctl
RES=/sys/kernel/debug/smbd_churn/result
RDMA=/usr/bin/rdma
[ -x $RDMA ] || RDMA=/sbin/rdma
ITERS=1050
ROUNDS=45
# shellcheck disable=SC2013 # words, not lines
for a in $(cat /proc/cmdline); do
	case $a in
	smbdtest.churn_iters=*) ITERS=${a#*=} ;;
	smbdtest.churn_rounds=*) ROUNDS=${a#*=} ;;
	esac
done

ok() { echo "SMBD-TEST: ok $1${2:+ - $2}"; }
nok() { echo "SMBD-TEST: not ok $1${2:+ - $2}"; }

lsmod | grep -q '^smbd ' || /usr/sbin/insmod /smbd/smbd.ko
if ! /usr/sbin/insmod /smbd/smbd_churn.ko; then
	nok churn/load
	exit 0
fi

# run PREFIX COMMAND...: one command; its result lines become SMBD-TEST
# and SMBD-INFO lines; no result at all is a failure.
run() {
	prefix=$1
	shift
	t0=$(cut -d' ' -f1 /proc/uptime)
	echo "$*" > $CTL || nok "$prefix/$1" "writing \"$*\" failed"
	cat $RES > /tmp/churn-result
	[ -s /tmp/churn-result ] || nok "$prefix/$1" "no result"
	while IFS= read -r l; do
		case $l in
		"ok "*) echo "SMBD-TEST: ok $prefix/${l#ok }" ;;
		"not ok "*) echo "SMBD-TEST: not ok $prefix/${l#not ok }" ;;
		"info "*) echo "SMBD-INFO: $prefix: ${l#info }" ;;
		*) nok "$prefix/$1" "$l" ;;
		esac
	done < /tmp/churn-result
	echo "    ($1 took $(awk -v a="$t0" -v b="$(cut -d' ' -f1 /proc/uptime)" 'BEGIN { printf "%.1f", b - a }') s)"
}

for p in "rxe 192.0.2.1 rxe0 rxe smbdr0" "siw 192.0.2.17 siw0 siw smbds0"; do
	set -- $p
	run churn/$1 initiator $2 7300 iters=$ITERS threads=4
	run churn/$1 responder $2 7301 iters=$ROUNDS conns=4 max_ms=400
	run churn/$1 health $2 7302

	# The device goes away under the churn: whatever fails must fail
	# cleanly, and the link delete must return.
	echo "initiator $2 7303 iters=100000 secs=12 threads=4 quiet=1" > $CTL &
	cpid=$!
	sleep 3
	if timeout 60 $RDMA link delete $3; then
		ok "churn/$1/link-delete-during-churn"
	else
		nok "churn/$1/link-delete-during-churn" "rdma link delete did not return"
	fi
	# The churn stops handing out attempts after 12 s; those under way
	# fail or end within their resolve timeouts.
	if timeout 120 sh -c "while kill -0 $cpid 2>/dev/null; do sleep 1; done"; then
		ok "churn/$1/churn-ends-without-device"
		sed -n 's/^info /SMBD-INFO: churn\/'"$1"'\/link-delete: /p' $RES
	else
		nok "churn/$1/churn-ends-without-device" "still running after 120 s"
	fi
	wait $cpid 2>/dev/null
	$RDMA link add $3 type $4 netdev $5
	run churn/$1/after-link-delete health $2 7304
done

if /usr/sbin/rmmod smbd_churn; then ok churn/unload; else nok churn/unload; fi

#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Guest plan: fault and bad-input tests of smbd against a raw-verbs peer
# (tests/fault/fault.c), over rxe and over siw. Leaves smbd loaded.

# shellcheck source=tests/guest/lib-report.sh
. /smbd/lib-report.sh

CTL=/sys/kernel/debug/smbd_fault/ctl
RES=/sys/kernel/debug/smbd_fault/result

load_smbd
if ! insmod /smbd/smbd_fault.ko; then
	echo "SMBD-TEST: not ok fault: load smbd_fault.ko"
	exit 0
fi

# fault_run <provider> <test> <ip> <port>: every test but "release" must print
# at least one result; one that printed none (or a command the module
# refused) is a failure, not a silent pass.
fault_run() {
	if ! echo "$2 $3 $4" > $CTL; then
		echo "SMBD-TEST: not ok fault[$1] $2 - smbd_fault refused the command"
		return
	fi
	sed -n "s/^\(ok\|not ok\) /SMBD-TEST: \1 fault[$1] /p" $RES
	[ "$2" = release ] || grep -qE '^(ok|not ok) ' $RES ||
		echo "SMBD-TEST: not ok fault[$1] $2 - printed no result"
}

for p in "rxe $RXE_ADDR" "siw $SIW_ADDR"; do
	set -- $p
	fault_run "$1" ka-idle "$2" 7101
	fault_run "$1" ka-dead "$2" 7102
	fault_run "$1" neg-silent "$2" 7103
	fault_run "$1" neg-version "$2" 7104
	fault_run "$1" neg-short "$2" 7105
	fault_run "$1" neg-silent-null "$2" 7106
	echo 8 > /sys/module/smbd/parameters/max_negotiating
	fault_run "$1" neg-flood "$2" 7107
	echo 32 > /sys/module/smbd/parameters/max_negotiating
	port=7110
	for c in align overlap bounds credits0 toolarge short oversize; do
		port=$((port + 1))
		fault_run "$1" bad-$c "$2" "$port"
	done
	fault_run "$1" big-nb "$2" 7120
done

# [MS-SMBD] 6.1, 6.2: the IRD/ORD negotiate header on iWARP, read back
# and answered with other values by the raw peer (what an MPA v1 peer
# lives on). siw only: RoCE has no such header.
fault_run siw irdord "$SIW_ADDR" 7130

# A blocking send whose send fails must say so. Over rxe only: a send
# into a queue pair with no receive posted completes with an RNR error
# there; siw completes a send once it has gone out, before the peer's
# termination comes back, so the provider reports success.
fault_run rxe send-fail "$RXE_ADDR" 7121
fault_run rxe send-fail-copied "$RXE_ADDR" 7122
fault_run rxe send-fail-credits "$RXE_ADDR" 7123

RDMA=/usr/bin/rdma
[ -x $RDMA ] || RDMA=/sbin/rdma

# conn_ids ROLE: the debugfs ids of smbd's connections in ROLE
# (initiator, responder) that are connected
conn_ids() {
	sed -n "s/^$1 connected conn=\([0-9]*\) .*/\1/p" /sys/kernel/debug/smbd/connections
}

# A fatal queue pair event delivered from hard IRQ (as mlx4 does): the
# handler may take no lock of smbd's and must not sleep; the connection
# ends, and lockdep, watching, says nothing. Needs the test kernel's
# fault injection (conn/<id>/qp_event).
for p in "rxe $RXE_ADDR" "siw $SIW_ADDR"; do
	set -- $p
	fault_run "$1" hold "$2" 7203
	fault_run "$1" held "$2" 0
	id=$(conn_ids initiator | head -n 1)
	f=/sys/kernel/debug/smbd/conn/$id/qp_event
	if [ -n "$id" ] && [ -e "$f" ] && echo 1 > "$f"; then
		echo "SMBD-TEST: ok fault[$1] QP event from hard IRQ delivered (conn $id)"
	else
		echo "SMBD-TEST: not ok fault[$1] QP event from hard IRQ delivered - conn '$id', $f"
	fi
	fault_run "$1" dead "$2" 0
	fault_run "$1" release "$2" 0
done

# Teardown: the device goes away under a streaming pair (rdma link
# delete = cable pull), over each provider. The sockets stay held across
# the removal: their debugfs files must still read (the device's name,
# not the freed device), and both consumers must be told. Then the
# same with asynchronous connects at every step when the device goes:
# each must hear done() ([MS-SMBD] 3.1.7.1).
for p in "rxe $RXE_ADDR rxe0 rxe smbdr0" "siw $SIW_ADDR siw0 siw smbds0"; do
	set -- $p
	fault_run "$1" hold "$2" 7201
	fault_run "$1" held "$2" 0
	ids="$(conn_ids initiator) $(conn_ids responder)"
	if timeout 60 $RDMA link delete $3; then
		echo "SMBD-TEST: ok fault[$1] link delete during transfer returned"
	else
		echo "SMBD-TEST: not ok fault[$1] link delete during transfer returned"
	fi
	fault_run "$1" dead "$2" 0
	bad=0
	for id in $ids; do
		grep -qx "device $3" /sys/kernel/debug/smbd/conn/$id/state || bad=1
	done
	grep -E "^(initiator|responder) .* conn=" /sys/kernel/debug/smbd/connections > /tmp/fault-conns || bad=1
	for id in $ids; do
		grep -qE "conn=$id $3( |\$)" /tmp/fault-conns || bad=1
	done
	if [ -n "$ids" ] && [ $bad = 0 ]; then
		echo "SMBD-TEST: ok fault[$1] debugfs after the device went names it ($ids)"
	else
		echo "SMBD-TEST: not ok fault[$1] debugfs after the device went names it - ids '$ids'"
		cat /tmp/fault-conns
	fi
	fault_run "$1" release "$2" 0
	$RDMA link add $3 type $4 netdev $5
	fault_run "$1" async-start "$2" 7204
	sleep 2
	if timeout 60 $RDMA link delete $3; then
		echo "SMBD-TEST: ok fault[$1] link delete during async connects returned"
	else
		echo "SMBD-TEST: not ok fault[$1] link delete during async connects returned"
	fi
	fault_run "$1" async-check "$2" 0
	$RDMA link add $3 type $4 netdev $5
	$RDMA link show | grep -q "^link $3/" &&
		echo "SMBD-TEST: ok fault[$1] device back after the test" ||
		echo "SMBD-TEST: not ok fault[$1] device back after the test"
done

# Unload the consumer with a connection streaming: it must end cleanly.
fault_run rxe hold "$RXE_ADDR" 7202
fault_run rxe held "$RXE_ADDR" 0
rmmod smbd_fault
[ $? = 0 ] && echo "SMBD-TEST: ok fault: unload smbd_fault.ko with a live connection" ||
	echo "SMBD-TEST: not ok fault: unload smbd_fault.ko with a live connection"
rmmod smbd
[ $? = 0 ] && echo "SMBD-TEST: ok fault: unload smbd.ko after its consumer" ||
	echo "SMBD-TEST: not ok fault: unload smbd.ko after its consumer"
load_smbd

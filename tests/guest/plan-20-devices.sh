#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Guest plan: smbd's ib_client sees the rxe (RoCE) and siw (iWARP)
# devices with their real limits, follows a device's removal and return,
# and survives being unloaded and loaded again.

DEVS=/sys/kernel/debug/smbd/devices
RDMA=/usr/bin/rdma
[ -x $RDMA ] || RDMA=/sbin/rdma

result() {	# result <status> <name>
	if [ "$1" = 0 ]; then
		echo "SMBD-TEST: ok $2"
	else
		echo "SMBD-TEST: not ok $2"
	fi
}

# listed <device> <type>: the device is in smbd's table with that type
listed() {
	grep -q "^$1	$2	" $DEVS
}

lsmod | grep -q '^smbd ' || insmod /smbd/smbd.ko
echo "smbd devices:"
cat $DEVS

listed rxe0 "ib/roce"
result $? "devices: rxe0 seen as IB/RoCE"
listed siw0 iwarp
result $? "devices: siw0 seen as iWARP"
# siw serves at most 6 send SGEs: the table must show the device's own.
awk '$1 == "siw0" { exit !($4 >= 2 && $4 <= 6) }' $DEVS
result $? "devices: siw0 send SGE limit is the device's"

$RDMA link delete rxe0
! listed rxe0 "ib/roce"
result $? "devices: rxe0 removal followed"
$RDMA link add rxe0 type rxe netdev smbdr0
listed rxe0 "ib/roce"
result $? "devices: rxe0 return followed"

rmmod smbd
result $? "devices: unload smbd.ko"
insmod /smbd/smbd.ko
result $? "devices: reload smbd.ko"
listed rxe0 "ib/roce" && listed siw0 iwarp
result $? "devices: both devices seen after reload"

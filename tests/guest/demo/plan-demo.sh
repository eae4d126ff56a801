#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Guest plan of the demo: load smbd and show what it sees.
RDMA=/usr/bin/rdma
[ -x $RDMA ] || RDMA=/sbin/rdma

echo "SMBD-DEMO-BEGIN"
echo "== RDMA links in the VM (soft-RoCE and soft-iWARP on dummy netdevs)"
$RDMA link show
/usr/sbin/ip -br addr show | grep smbd
echo
echo "== modprobe-equivalent: insmod smbd.ko"
insmod /smbd/smbd.ko && echo "smbd loaded"
dmesg | grep 'smbd:' | sed 's/^\[[ 0-9.]*\] /  /'
echo
echo "== what smbd sees: /sys/kernel/debug/smbd/devices"
cat /sys/kernel/debug/smbd/devices
echo
echo "== an smbd connection pair streaming data both ways, per provider"
insmod /smbd/smbd_fault.ko
for p in "rxe 192.0.2.1" "siw 192.0.2.17"; do
	set -- $p
	echo "-- over $1 ($2)"
	echo "hold $2 7400" > /sys/kernel/debug/smbd_fault/ctl
	cat /sys/kernel/debug/smbd_fault/result | sed 's/^SMBD-TEST: //'
	echo "held" > /sys/kernel/debug/smbd_fault/ctl
	cat /sys/kernel/debug/smbd_fault/result | sed 's/^SMBD-TEST: //'
	echo "release" > /sys/kernel/debug/smbd_fault/ctl
done
rmmod smbd_fault
echo
echo "== removing rxe0: smbd follows the device away"
$RDMA link delete rxe0
cat /sys/kernel/debug/smbd/devices
rmmod smbd && echo "smbd unloaded"
echo "SMBD-DEMO-END"

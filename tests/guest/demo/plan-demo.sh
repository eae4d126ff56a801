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
dmesg | grep 'smbd' | sed 's/^\[[ 0-9.]*\] /  /'
echo
echo "== what smbd sees: /sys/kernel/debug/smbd/devices"
cat /sys/kernel/debug/smbd/devices
echo
echo "== removing rxe0: smbd follows the device away"
$RDMA link delete rxe0
cat /sys/kernel/debug/smbd/devices
rmmod smbd && echo "smbd unloaded"
echo "SMBD-DEMO-END"

#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Guest plan: smbd's ib_client sees the rxe (RoCE) and siw (iWARP)
# devices with their real limits, follows a device's removal and return,
# and survives being unloaded and loaded again. Then the RDMA_CAPABLE
# flag of each interface: VLANs, bonds and bridges above RDMA ports, and
# the same above a plain interface.

DEVS=/sys/kernel/debug/smbd/devices
RDMA=/usr/bin/rdma
[ -x $RDMA ] || RDMA=/sbin/rdma

# shellcheck source=tests/guest/lib-report.sh
. /smbd/lib-report.sh

# listed <device> <type>: the device is in smbd's table with that type
listed() {
	grep -q "^$1	$2	" $DEVS
}

load_smbd
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
load_smbd
result $? "devices: reload smbd.ko"
listed rxe0 "ib/roce" && listed siw0 iwarp
result $? "devices: both devices seen after reload"

# The RDMA_CAPABLE flag a server reports for each interface
# (smbd_netdev_capable(), smbd's debugfs "interfaces"): an interface
# above an RDMA port (a VLAN, a bridge, a bond, a VLAN on a bond) is
# capable; the same above an interface no RDMA device uses is not.
IFACES=/sys/kernel/debug/smbd/interfaces
IP=/usr/sbin/ip
[ -x $IP ] || IP=/sbin/ip
# capable NAME IF WANT: smbd says WANT (yes or no) for IF
capable() {
	_got=$(awk -v i="$2" '$1 == i { print $2 }' $IFACES)
	if [ "$_got" = "$3" ]; then
		echo "SMBD-TEST: ok interfaces: $1 - $2 $_got"
	else
		echo "SMBD-TEST: not ok interfaces: $1 - $2 says \"$_got\", want $3"
	fi
}
# ifaces_up and ifaces_down: lib-ifaces.sh (lib-report.sh sources it)
ifaces_up
echo "smbd interfaces:"
cat $IFACES
capable "RoCE port" smbdr0 yes
capable "iWARP port" smbds0 yes
capable "VLAN on a RoCE port" smbdr0.7 yes
capable "VLAN on an iWARP port" smbds0.7 yes
capable "bond of a RoCE port" smbdbond0 yes
capable "VLAN on a bond of a RoCE port" smbdbond0.9 yes
capable "bridge with a RoCE port" smbdbr0 yes
capable "loopback" lo no
capable "plain interface" smbdn0 no
capable "VLAN on a plain interface" smbdn0.7 no
capable "bridge with a plain interface" smbdbr1 no
capable "veth" smbdv0 no
capable "VLAN on a veth" smbdv0.5 no
ifaces_down
! grep -q "^rxec" $DEVS
result $? "interfaces: the extra devices are gone"

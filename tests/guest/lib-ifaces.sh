# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# Guest library: the addresses of the ports /init makes, and the
# interfaces whose RDMA capability the plans check (plan-20-devices
# through smbd's debugfs, smb/plan-76-windows through ksmbd's
# FSCTL_QUERY_NETWORK_INTERFACE_INFO) above them (rxe0 on smbdr0, siw0 on
# smbds0). lib-report.sh sources it. Needs IP and RDMA (the commands).
#
# ifaces_up adds them; IFACES_ADDRS=1 also gives each its own IPv4
# address (from IFACES_LIST) and sets it up, as a server lists only
# running interfaces. ifaces_down removes everything ifaces_up made.
#
# IFACES_LIST, one interface a line: NAME ADDRESS CAPABLE SPEED, where
# CAPABLE (yes or no) is whether an RDMA device smbd can use lies below
# it, and SPEED its link speed in bit/s as a server reports it (dummy
# devices have none: ksmbd's 1 Gb/s default; veth 10 Gb/s).

# The providers' addresses (IPv4, a /28 each): rxe0 on smbdr0 and rxe1 on
# smbdr1, siw0 on smbds0 and siw1 on smbds1.
# shellcheck disable=SC2034 # /init and the plans use them
RXE_ADDR=192.0.2.1 RXE1_ADDR=192.0.2.2 SIW_ADDR=192.0.2.17 SIW1_ADDR=192.0.2.18

IFACES_LIST="\
smbdr0 $RXE_ADDR yes 1000000000
smbds0 $SIW_ADDR yes 1000000000
smbdn0 192.0.2.65 no 1000000000
smbdr0.7 192.0.2.81 yes 1000000000
smbds0.7 192.0.2.82 yes 1000000000
smbdn0.7 192.0.2.83 no 1000000000
smbdbond0 192.0.2.84 yes 1000000000
smbdbond0.9 192.0.2.89 yes 1000000000
smbdbr0 192.0.2.85 yes 1000000000
smbdbr1 192.0.2.86 no 1000000000
smbdv0 192.0.2.87 no 10000000000
smbdv0.5 192.0.2.88 no 10000000000"

_ifq() { "$@" >/dev/null 2>&1; }

ifaces_up() {
	_ifq "$IP" link add smbdn0 type dummy
	_ifq "$IP" link add link smbdr0 name smbdr0.7 type vlan id 7
	_ifq "$IP" link add link smbds0 name smbds0.7 type vlan id 7
	_ifq "$IP" link add link smbdn0 name smbdn0.7 type vlan id 7
	# a bond of a RoCE port, and a VLAN on it
	_ifq "$IP" link add smbdc0 type dummy
	_ifq "$RDMA" link add rxec0 type rxe netdev smbdc0
	_ifq "$IP" link add smbdbond0 type bond
	_ifq "$IP" link set smbdc0 master smbdbond0
	_ifq "$IP" link add link smbdbond0 name smbdbond0.9 type vlan id 9
	# bridges with a RoCE port and with a plain one
	_ifq "$IP" link add smbdc1 type dummy
	_ifq "$RDMA" link add rxec1 type rxe netdev smbdc1
	_ifq "$IP" link add smbdbr0 type bridge forward_delay 0 stp_state 0
	_ifq "$IP" link set smbdc1 master smbdbr0
	_ifq "$IP" link add smbdn1 type dummy
	_ifq "$IP" link add smbdbr1 type bridge forward_delay 0 stp_state 0
	_ifq "$IP" link set smbdn1 master smbdbr1
	# a plain device with a link speed, and a VLAN on it
	_ifq "$IP" link add smbdv0 type veth peer name smbdv1
	_ifq "$IP" link add link smbdv0 name smbdv0.5 type vlan id 5
	[ "${IFACES_ADDRS:-0}" = 1 ] || return 0
	for _l in smbdn0 smbdc0 smbdc1 smbdn1 smbdv1 smbdv0; do
		_ifq "$IP" link set $_l up
	done
	echo "$IFACES_LIST" | while read -r _n _a _w _s; do
		case $_n in smbdr0 | smbds0) continue ;; esac
		_ifq "$IP" addr add "$_a/32" dev "$_n"
		_ifq "$IP" link set "$_n" up
	done
}

ifaces_down() {
	for _l in smbdr0.7 smbds0.7 smbdn0.7 smbdv0.5 smbdbond0.9 smbdbond0 \
		  smbdbr0 smbdbr1 smbdv0; do
		_ifq "$IP" link delete $_l
	done
	_ifq "$RDMA" link delete rxec0
	_ifq "$RDMA" link delete rxec1
	for _l in smbdc0 smbdc1 smbdn0 smbdn1; do
		_ifq "$IP" link delete $_l
	done
}

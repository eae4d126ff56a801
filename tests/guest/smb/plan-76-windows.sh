#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Guest plan (the SMB VM, tests/run.sh): the road a Windows client takes
# to SMB Direct, against ksmbd on smbd (adapters/ksmbd), by the tests' own
# SMB2 client (tests/smb2c/smbd_smb2c.c, no cifs or smbd SMB code):
#   SMB 3.0.2 over TCP to a plain interface's address, NTLMv2, signing
#   required; FSCTL_QUERY_NETWORK_INTERFACE_INFO; an RDMA channel through
#   smbd to an address the server flags RDMA-capable (rxe0's, then
#   siw0's), the session bound to it ([MS-SMB2] 3.2.5.3.3: requests signed
#   with Session.SigningKey, the final answer with the channel's key); a
#   file written and read back through Buffer Descriptor V1 lists of 1, 2,
#   16, 256 and 4,095 descriptors, aligned and misaligned (4,095 of
#   1,025 bytes: 4,197,375 bytes), RDMA_V1 and RDMA_V1_INVALIDATE (the
#   invalidation seen by smbd); WRITEs above
#   MaxReadWriteSize or beyond their descriptors refused at once, the
#   channel going on.
# The server lists every interface (no "interfaces =" line), and the plan
# adds, each with an address of its own (lib-ifaces.sh): VLANs on a RoCE,
# an iWARP and a plain port; a bond of a RoCE port and a VLAN on it;
# bridges with a RoCE and a plain port; a veth (10 Gb/s) and a VLAN on it. Each must be flagged RDMA-capable
# exactly when an RDMA device lies below it, with the speed of the device
# below (1 Gb/s, ksmbd's default, where none is known; 10 Gb/s for veth).
# At the end those interfaces are gone, ksmbd and the client unloaded.

# shellcheck source=tests/guest/lib-smbpair.sh
. /smbd/lib-smbpair.sh
# shellcheck source=tests/guest/lib-bounded.sh
. /smbd/lib-bounded.sh
SMB_KSMBD_KO=/smbd/ksmbd.ko

RDMA=/usr/bin/rdma
[ -x $RDMA ] || RDMA=/sbin/rdma
IP=/sbin/ip
[ -x $IP ] || IP=/usr/sbin/ip
C=/sys/kernel/debug/smbd_smb2c
T=/tmp/windows
LIMIT=60
RUN_LIMIT=300	# the client's own watchdog ends a command at 240 s
TCP_ADDR=192.0.2.65	# on smbdn0, a plain interface (lib-ifaces.sh)
BIG=4197375	# the largest write: 4,095 descriptors of 1,025 bytes

blog() { echo "    windows: $*"; }

mkdir -p $T
if ! grep -q '^smbd ' /proc/modules; then
	if $SMB_INSMOD /smbd/smbd.ko; then ok windows/load-smbd; else nok windows/load-smbd; fi
fi
if ! $SMB_INSMOD /smbd/smbd_smb2c.ko; then
	nok windows/load-smbd_smb2c
	exit 0
fi
ok windows/load-smbd_smb2c

# ---------------------------------------------------------------- interfaces

# shellcheck source=tests/guest/lib-ifaces.sh
. /smbd/lib-ifaces.sh
echo "$IFACES_LIST" > $T/want
topology_up() { IFACES_ADDRS=1 ifaces_up; }
topology_down() { ifaces_down; }

# running NAME: the interface is up with carrier (ksmbd lists only those)
running() { $IP link show "$1" 2>/dev/null | grep -q 'LOWER_UP'; }

topology_up
_bad=
_w=10
while :; do
	_bad=
	while read -r _n _a _w2 _s; do
		running "$_n" || _bad="$_bad $_n"
	done < $T/want
	[ -z "$_bad" ] || [ $_w -le 0 ] && break
	sleep 1
	_w=$((_w - 1))
done
[ -z "$_bad" ]
result $? windows/topology "interfaces not running:$_bad" ||
	$IP -br addr show | indent "ip: "

# ---------------------------------------------------------------- server

SMB_MULTICHANNEL=yes SMB_INTERFACES=
smb_server_start
if ! result $? windows/ksmbd-start "server multi channel support = yes"; then
	topology_down
	$SMB_RMMOD smbd_smb2c
	exit 0
fi
PORT=$(smb_rdma_port)
blog "ksmbd listens for SMB Direct on port $PORT"

# ifname INDEX: the interface with that index
ifname() {
	for _f in /sys/class/net/*/ifindex; do
		[ "$(cat "$_f")" = "$1" ] && { _f=${_f%/ifindex}; echo "${_f##*/}"; return; }
	done
	echo "?$1"
}

# check_interfaces P: each interface of $T/want as the FSCTL listed it
# (IPv4 entries of $T/res: "info iface INDEX v4 ADDRESS CAPABILITY SPEED")
check_interfaces() {
	awk '$1 == "info" && $2 == "iface" && $4 == "v4" { print $3, $5, $6, $7 }' $T/res > $T/ifs
	while read -r _i _a _c _s; do
		echo "$(ifname "$_i") $_a capability $_c speed $_s"
	done < $T/ifs | indent "fsctl: "
	while read -r _n _a _w _s; do
		_l=$(awk -v a="$_a" '$2 == a { print; exit }' $T/ifs)
		if [ -z "$_l" ]; then
			nok "windows/$1/interface/$_n" "$_a not listed"
			continue
		fi
		# shellcheck disable=SC2086 # the fields of one line: words
		set -- "$1" $_l
		_got=no
		[ $(($4 & 2)) -ne 0 ] && _got=yes
		_name=$(ifname "$2")
		[ "$_name" = "$_n" ] && [ "$_got" = "$_w" ] && [ "$5" = "$_s" ]
		result $? "windows/$1/interface/$_n" "$_a listed as $_name, RDMA-capable $_got (want $_w), speed $5 (want $_s)"
	done < $T/want
}

# client P ADDR: the whole road for provider P, RDMA to ADDR
client() {
	p=$1 a=$2
	rm -f "$SMB_EXPORT/$SMB_SHARE/smb2c-$p.bin"
	bounded $RUN_LIMIT sh -c "echo 'win $p $TCP_ADDR $a $PORT $SMB_USER $SMB_PASS $SMB_SHARE' > $C/ctl"
	result $? "windows/$p/command" "$(why), $B_T s" || show_out
	cat $C/result > $T/res 2>/dev/null
	sed -n 's/^\(not ok\|ok\) /SMBD-TEST: \1 windows\//p' $T/res
	grep -E '^(ok|not ok) .*descs-4095-|^ok .*rdma-bind' $T/res |
		sed "s/^/SMBD-INFO: windows: $p: /"
	check_interfaces "$p"
	# the last write (4,095 pieces of 1,025 bytes at offset 0, as far as
	# the registration's descriptors allowed: "info written N") is on disk
	_want=$(awk '$1 == "info" && $2 == "written" { n = $3 } END { print n }' $T/res)
	_sz=$(stat -c %s "$SMB_EXPORT/$SMB_SHARE/smb2c-$p.bin" 2>/dev/null || echo 0)
	# (each registration may leave under 1,025 bytes uncut)
	[ "$_sz" = "$_want" ] && [ "$_sz" -gt $((BIG - BIG / 16)) ]
	result $? "windows/$p/file-on-server" "size $_sz, want $_want (about $BIG)"
}

why() {
	case $B_RC in
	hung) echo "hung (still running after its limit)" ;;
	*) echo "rc=$B_RC" ;;
	esac
}

HUNG=0
client rxe 192.0.2.1
[ "$HUNG" = 0 ] && [ -d /sys/class/infiniband/siw0 ] && client siw 192.0.2.17

# ---------------------------------------------------------------- teardown

if [ "$HUNG" = 0 ]; then
	bounded $LIMIT smb_server_stop
	result $? windows/ksmbd-stop "$(why), $B_T s" || show_out
	bounded $LIMIT $SMB_RMMOD smbd_smb2c
	result $? windows/unload-smbd_smb2c "$(why), $B_T s" || show_out
else
	nok windows/teardown "not tried: the client hung"
fi
topology_down
! $RDMA link show 2>/dev/null | grep -q "rxec"
result $? windows/interfaces-gone

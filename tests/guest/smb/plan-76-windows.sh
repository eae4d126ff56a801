#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Guest plan (the SMB VM, tests/run.sh): the road a Windows client takes
# to SMB Direct, against ksmbd on smbd (adapters/ksmbd), by the tests' own
# SMB2 client (tests/smb2c/smbd_smb2c.c, no cifs or smbd SMB code):
#   SMB 3.1.1 over rxe, as Windows 11 (SHA-512 preauthentication, the
#   3.1.1 signing keys, ciphers, signing and RDMA transform contexts
#   offered; with the signing transform negotiated, every WRITE's data
#   signed in an SMB2_RDMA_TRANSFORM and every READ's checked against
#   the server's, and malformed or false transforms refused with the
#   status [MS-SMB2] 3.3.5.13 names), 3.0.2 over siw (a transform
#   refused there), each first over TCP to a plain interface's address, NTLMv2, signing
#   required; FSCTL_QUERY_NETWORK_INTERFACE_INFO; an RDMA channel through
#   smbd to an address the server flags RDMA-capable (rxe0's, then
#   siw0's), the session bound to it ([MS-SMB2] 3.2.5.3.3: requests signed
#   with Session.SigningKey, the final answer with the channel's key); a
#   file written and read back through Buffer Descriptor V1 lists of 1, 2,
#   16, 256 and 4,095 descriptors, aligned and misaligned (4,095 of
#   1,025 bytes: 4,197,375 bytes), RDMA_V1 and RDMA_V1_INVALIDATE (the
#   invalidation seen by smbd); WRITEs above
#   MaxReadWriteSize or beyond their descriptors refused at once, the
#   channel going on. RoCE goes to port 445, iWARP to 5445, as Windows.
# Ports ([MS-SMBD] 1.9, adapters/ksmbd: 445 on each RoCE address, 5445 on
# the wildcard for iWARP only), with smbd_interop.ko's bare SMB Direct
# connect: the listeners are there; rxe reaches 445 and is refused at
# once on 5445 (counted as the wrong class), siw reaches 5445; an address
# added to rxe0's netdev gets its 445 listener and loses it when deleted;
# rxe0 deleted and added again takes its listener away and back.
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
PLAN_NAME=windows	# its log lines: "    windows: ..." (blog)
LIMIT=60
RUN_LIMIT=300	# the client's own watchdog ends a command at 240 s
# smbdn0's address (lib-ifaces.sh), a plain interface
TCP_ADDR=$(echo "$IFACES_LIST" | awk '$1 == "smbdn0" { print $2 }')
BIG=4197375	# the largest write: 4,095 descriptors of 1,025 bytes

mkdir -p $T
load_smbd windows/load-smbd
if ! $SMB_INSMOD /smbd/smbd_smb2c.ko; then
	nok windows/load-smbd_smb2c
	exit 0
fi
ok windows/load-smbd_smb2c
$SMB_INSMOD /smbd/smbd_interop.ko
result $? windows/load-smbd_interop

# ---------------------------------------------------------------- interfaces

echo "$IFACES_LIST" > $T/want	# lib-ifaces.sh's
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

# contexts P: what ksmbd answered to a 3.1.1 NEGOTIATE's contexts, on
# each connection ("info contexts tcp|rdma cipher C signing S
# rdma-transform IDS"): a cipher chosen, AES-CMAC signing, and both RDMA
# transforms, encryption and signing (1,2; adapters/patches/6.12/
# ksmbd-rdma-transform-*.patch: encryption with a cipher chosen), the
# same on the RDMA channel as on TCP ([MS-SMB2] 3.3.5.4; the channel
# offers what the first connection got, 3.2.4.2.2.2)
contexts() {
	_t=$(awk '$2 == "contexts" && $3 == "tcp"' $T/res)
	_r=$(awk '$2 == "contexts" && $3 == "rdma"' $T/res)
	echo "SMBD-INFO: windows: $1: ${_t#info } / ${_r#info }"
	[ -n "$_t" ] && [ -n "$_r" ] && [ "${_t#* tcp }" = "${_r#* rdma }" ] &&
		echo "$_t" | awk '$5 > 0 && $7 == 1 && $9 == "1,2" { ok = 1 } END { exit !ok }'
	result $? "windows/$1/contexts" "tcp: ${_t:-none}; rdma: ${_r:-none}"
}

# client P ADDR PORT DIALECT: the whole road for provider P, RDMA to ADDR:PORT
client() {
	p=$1 a=$2
	rm -f "$SMB_EXPORT/$SMB_SHARE/smb2c-$p.bin"
	bounded $RUN_LIMIT sh -c "echo 'win $p $TCP_ADDR $a $3 $SMB_USER $SMB_PASS $SMB_SHARE $4' > $C/ctl"
	result $? "windows/$p/command" "$(why), $B_T s" || show_out
	cat $C/result > $T/res 2>/dev/null
	sed -n 's/^\(not ok\|ok\) /SMBD-TEST: \1 windows\//p' $T/res
	grep -E '^(ok|not ok) .*descs-4095-|^ok .*rdma-bind' $T/res |
		sed "s/^/SMBD-INFO: windows: $p: /"
	check_interfaces "$p"
	[ "$4" = 3.1.1 ] && contexts "$p"
	# the last write (4,095 pieces of 1,025 bytes at offset 0, as far as
	# the registration's descriptors allowed: "info written N") is on disk
	_want=$(awk '$1 == "info" && $2 == "written" { n = $3 } END { print n }' $T/res)
	_sz=$(stat -c %s "$SMB_EXPORT/$SMB_SHARE/smb2c-$p.bin" 2>/dev/null || echo 0)
	# (each registration may leave under 1,025 bytes uncut)
	[ "$_sz" = "$_want" ] && [ "$_sz" -gt $((BIG - BIG / 16)) ]
	result $? "windows/$p/file-on-server" "size $_sz, want $_want (about $BIG)"
}

HUNG=0
# Windows 11 and Server 2022 and later negotiate 3.1.1; older ones 3.0.2
client rxe "$RXE_ADDR" 445 3.1.1
[ "$HUNG" = 0 ] && [ -d /sys/class/infiniband/siw0 ] && client siw "$SIW_ADDR" 5445 3.0.2

# ---------------------------------------------------------------- ports

I=/sys/kernel/debug/smbd_interop
DBG=/sys/kernel/debug/smbd/connections
EXTRA=192.0.2.9		# added to rxe0's netdev for a while
EXTRA6=2001:db8:9::9

# smbd_listening ADDR:PORT: an smbd listener there (IPv6: [ADDR]:PORT)
smbd_listening() { grep "^listener listening " $DBG | grep -qF " $1 "; }
not_listening() { ! smbd_listening "$1"; }
# released DEV: no listener of ksmbd's (in any state) on DEV any more
released() { ! grep -q "^listener [a-z]* conn=[0-9]* $1 " $DBG; }

# connect NAME ADDR PORT WANT: a bare SMB Direct connect to ksmbd; WANT
# "ok" (negotiated) or "refused" (-ECONNREFUSED within 5 s)
connect() {
	bounded $LIMIT sh -c "echo 'connect $2 $3 timeout=20' > $I/ctl"
	_r=$(grep -m1 'connect' $I/result 2>/dev/null)
	case $4 in
	ok) case $_r in "ok "*) true ;; *) false ;; esac ;;
	*) case $_r in
	   *": -111 after"*) awk -v t="$B_T" 'BEGIN { exit !(t < 5) }' ;;
	   *) false ;;
	   esac ;;
	esac
	result $? "windows/ports/$1" "$2:$3 $4 wanted: $_r ($B_T s)"
}

# wrong_class: what the 5445 IPv4 listener counted
wrong_class() {
	sed -n 's/^listener .* 0\.0\.0\.0:5445 .*wrong_class \([0-9]*\).*/\1/p' $DBG
}

if [ "$HUNG" = 0 ]; then
	smbd_listening "$RXE_ADDR:445" && smbd_listening 0.0.0.0:5445 &&
		not_listening "$SIW_ADDR:445" && not_listening "$RXE_ADDR:5445"
	result $? windows/ports/listeners "445 on rxe0's address only, 5445 on the wildcard" ||
		grep '^listener' $DBG | indent "smbd: "
	connect rxe-445 "$RXE_ADDR" 445 ok
	w0=$(wrong_class)
	connect rxe-5445-refused "$RXE_ADDR" 5445 refused
	echo "SMBD-INFO: windows: ports: rxe to 5445 refused in $B_T s: $_r"
	w1=$(wrong_class)
	[ "${w1:-0}" -eq $((${w0:-0} + 1)) ]
	result $? windows/ports/wrong-class-counted "the 5445 listener counted $w0, then $w1"
	[ -d /sys/class/infiniband/siw0 ] && connect siw-5445 "$SIW_ADDR" 5445 ok

	# an address comes and goes
	nd=$($RDMA link show rxe0/1 2>/dev/null | sed -n 's/.* netdev \([^ ]*\).*/\1/p')
	$IP addr add $EXTRA/32 dev "$nd"
	$IP -6 addr add $EXTRA6/128 dev "$nd" nodad
	t0=$(uptime_s)
	smb_wait 10 smbd_listening $EXTRA:445 && smb_wait 10 smbd_listening "[$EXTRA6]:445"
	_rc=$?
	echo "SMBD-INFO: windows: ports: listeners on the new addresses within $(since "$t0") s"
	result $_rc windows/ports/address-added "$EXTRA and $EXTRA6 on $nd: a 445 listener each" &&
		connect address-added-445 $EXTRA 445 ok
	$IP addr del $EXTRA/32 dev "$nd"
	$IP -6 addr del $EXTRA6/128 dev "$nd"
	smb_wait 10 not_listening $EXTRA:445 && smb_wait 10 not_listening "[$EXTRA6]:445"
	result $? windows/ports/address-deleted "$EXTRA and $EXTRA6 off $nd: their listeners gone"

	# the device goes and comes back
	bounded $LIMIT $RDMA link delete rxe0
	smb_wait 10 released rxe0
	result $? windows/ports/device-deleted "rxe0 deleted ($(why), $B_T s): its listeners released" ||
		grep '^listener' $DBG | indent "smbd: "
	bounded $LIMIT $RDMA link add rxe0 type rxe netdev "$nd"
	t0=$(uptime_s)
	smb_wait 10 smbd_listening "$RXE_ADDR:445"
	_rc=$?
	echo "SMBD-INFO: windows: ports: rxe0 back, its 445 listener $(since "$t0") s after rdma link add returned"
	result $_rc windows/ports/device-added "rxe0 added on $nd ($(why), $B_T s): its listener back" &&
		connect device-added-445 "$RXE_ADDR" 445 ok
fi

# ---------------------------------------------------------------- teardown

if [ "$HUNG" = 0 ]; then
	bounded $LIMIT smb_server_stop
	result $? windows/ksmbd-stop "$(why), $B_T s" || show_out
	bounded $LIMIT $SMB_RMMOD smbd_smb2c
	result $? windows/unload-smbd_smb2c "$(why), $B_T s" || show_out
	bounded $LIMIT $SMB_RMMOD smbd_interop
	result $? windows/unload-smbd_interop "$(why), $B_T s" || show_out
else
	nok windows/teardown "not tried: the client hung"
fi
topology_down
! $RDMA link show 2>/dev/null | grep -q "rxec"
result $? windows/interfaces-gone

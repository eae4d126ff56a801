#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Guest plan of the demo, as a user would do it: install smbd.ko and the
# SMB client and server built on it (/smbd/cifs.ko, /smbd/ksmbd.ko) in
# /lib/modules/$(uname -r)/updates, where depmod prefers them to the
# kernel's own cifs and ksmbd; "modprobe smbd"; mount a share with
# "mount -t cifs -o rdma" over soft-RoCE and soft-iWARP (modprobe loads
# our cifs), both mounted at once; copy data both ways; show throughput
# and what smbdctl(8) says of the two connections. Each step is a check (SMBD-TEST lines, demo/...): the demo
# (scripts/demo.sh) fails when one fails, and the test command runs this
# plan last in its SMB VM. It leaves our modules in updates/.

# shellcheck source=tests/guest/lib-smb.sh
. /smbd/lib-smb.sh
# shellcheck source=tests/guest/lib-report.sh
. /smbd/lib-report.sh

RDMA=/usr/bin/rdma
CTL=/usr/sbin/smbdctl
JQ=/usr/bin/jq
# SMB_CIFS_KO and SMB_KSMBD_KO stay empty: lib-smb.sh loads cifs and
# ksmbd with modprobe, so from updates/, and they must be ours.
SMB_CIFS_KO='' SMB_KSMBD_KO=''
SMB_CIFS_WANT=ours SMB_KSMBD_WANT=ours
MNT=/mnt/demo
FAILED=0
# smbddemo.break=1 on the kernel command line (SMBD_DEMO_BREAK=1 for
# scripts/demo.sh): the siw mount asks for a share that does not exist,
# to show the demo failing
BREAK=0
[ "$(karg smbddemo.break)" = 1 ] && BREAK=1

# demo_check NAME DETAIL: demo/NAME ok or not by _rc; FAILED counts the nots
demo_check() {
	result "$_rc" "demo/$1" "${2:-}" || FAILED=$((FAILED + 1))
	return "$_rc"
}
# demo_end: the demo's verdict, and the end
demo_end() {
	echo "SMBD-DEMO-RESULT: $FAILED failed"
	echo "SMBD-DEMO-END"
	exit 0
}

# copy BYTES SRC DST FLAG: dd with 1 MiB blocks, prints MiB/s
copy() { _c=$(smb_dd_rate "$@") && echo "$_c MiB/s"; }

echo "SMBD-DEMO-BEGIN"
echo "== RDMA links in the VM (soft-RoCE and soft-iWARP on dummy netdevs)"
$RDMA link show
/usr/sbin/ip -br addr show | grep smbd
echo
upd=/lib/modules/$(uname -r)/updates
echo "== install smbd.ko, cifs.ko and ksmbd.ko in $upd; depmod -a"
mkdir -p "$upd"
cp /smbd/smbd.ko /smbd/cifs.ko /smbd/ksmbd.ko "$upd"/ && /usr/sbin/depmod -a
_rc=$?
demo_check install "in $upd, depmod -a" || demo_end
# Otherwise modprobe would quietly load the kernel's own cifs and ksmbd.
for m in smbd cifs ksmbd; do
	path=$(/usr/sbin/modinfo -n $m)
	echo "  modinfo -n $m: $path"
	case $path in
	"$upd"/*) _rc=0 ;;
	*) _rc=1 ;;
	esac
	demo_check "modinfo-$m" "$path" || demo_end
done
echo
echo "== modprobe smbd"
/usr/sbin/modprobe smbd
_rc=$?
demo_check modprobe-smbd || demo_end
dmesg | grep 'smbd:' | sed 's/^\[[ 0-9.]*\] /  /'
echo
echo "== install smbdctl; what smbd sees: smbdctl status devices"
cp /smbd/smbdctl /usr/sbin/smbdctl
$CTL status devices | sed 's/^/  /'
echo
echo "== the SMB server: modprobe ksmbd (on smbd), ksmbd.mountd"
smb_server_start
_rc=$?
demo_check ksmbd-start "ksmbd on smbd, from updates/" || demo_end
head -c 67108864 /dev/urandom > /tmp/demo-64m
MOUNTED=
for p in "rxe $RXE_ADDR" "siw $SIW_ADDR"; do
	# shellcheck disable=SC2086 # two words
	set -- $p
	echo
	echo "== over $1: mount -t cifs //$2/$SMB_SHARE $MNT-$1 -o rdma,vers=3.1.1 (cifs on smbd)"
	if [ $BREAK = 1 ] && [ "$1" = siw ]; then
		SMB_SHARE=no-such-share smb_mount "$2" "$MNT-$1"
	else
		smb_mount "$2" "$MNT-$1"
	fi
	_rc=$?
	demo_check "$1/mount" "cifs on smbd, from updates/" || continue
	MOUNTED="$MOUNTED $1"
	echo "  lsmod: $(grep -E '^(smbd|cifs|ksmbd) ' /proc/modules | cut -d' ' -f1,4 | tr '\n' ' ')"
	grep " $MNT-$1 " /proc/mounts | sed 's/password=[^,]*/password=*/; s/^/  /'
	w=$(copy 67108864 /tmp/demo-64m "$MNT-$1/data" oflag=direct)
	_rc=$?
	demo_check "$1/write" "64 MiB, O_DIRECT: $w"
	echo "-- copy 64 MiB to the share (O_DIRECT): $w"
	drop_caches
	r=$(copy 67108864 "$MNT-$1/data" /tmp/demo-back iflag=direct)
	echo "-- copy it back (O_DIRECT): $r"
	cmp -s /tmp/demo-64m /tmp/demo-back
	_rc=$?
	demo_check "$1/read-intact" "64 MiB back, O_DIRECT: $r"
	rm -f /tmp/demo-back
done
echo
echo "-- cifs: /proc/fs/cifs/DebugData (SMB Direct part)"
grep -E 'SMBDirect|Conn |MR ' /proc/fs/cifs/DebugData | sed 's/^/  /'
echo
echo "== smbdctl status; smbdctl -s status connections: both mounts, what each moved by RDMA"
$CTL status | sed 's/^/  /'
echo
$CTL -s status connections | sed 's/^/  /'
$CTL -j -s status > /tmp/demo-status.json
for p in $MOUNTED; do
	case $p in
	rxe) dev=rxe0 port=445 ;;
	siw) dev=siw0 port=5445 ;;
	esac
	# cifs's connection on the device, and ksmbd's, which moved the
	# 64 MiB by RDMA read (the write) and RDMA write (the read)
	$JQ -e --arg d $dev --arg p $port '
		([.connections[] | select(.role == "initiator" and .state == "connected" and .device == $d and .peer.port == ($p | tonumber))] | length == 1) and
		([.connections[] | select(.role == "responder" and .device == $d and .stats.rdma_read_bytes >= 67108864 and .stats.rdma_write_bytes >= 67108864)] | length == 1)' \
		/tmp/demo-status.json >/dev/null
	_rc=$?
	demo_check "$p/over-smbd" "smbdctl: cifs's connection on $dev, 64 MiB each way by RDMA on ksmbd's"
done
for p in $MOUNTED; do
	rm -f "$MNT-$p/data"
	SMB_KEEP_MODULE=1 smb_umount "$MNT-$p"
	_rc=$?
	demo_check "$p/umount"
done
echo
smb_unload_module cifs
_rc=$?
demo_check unload-cifs
smb_server_stop
_rc=$?
demo_check ksmbd-stop "ksmbd stopped and unloaded"
rmmod smbd
_rc=$?
demo_check unload-smbd
demo_end

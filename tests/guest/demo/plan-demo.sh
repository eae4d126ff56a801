#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Guest plan of the demo, as a user would do it: install smbd.ko and the
# SMB client and server built on it (/smbd/cifs.ko, /smbd/ksmbd.ko) in
# /lib/modules/$(uname -r)/updates, where depmod prefers them to the
# kernel's own cifs and ksmbd; "modprobe smbd"; mount a share with
# "mount -t cifs -o rdma" over soft-RoCE and soft-iWARP (modprobe loads
# our cifs); copy data both ways; show throughput and smbd's connection
# statistics.

# shellcheck source=tests/guest/lib-smb.sh
. /smbd/lib-smb.sh

RDMA=/usr/bin/rdma
# SMB_CIFS_KO and SMB_KSMBD_KO stay empty: lib-smb.sh loads cifs and
# ksmbd with modprobe, so from updates/.
MNT=/mnt/demo

# copy BYTES SRC DST FLAG: dd with 1 MiB blocks, prints MiB/s
copy() {
	_t0=$(cut -d' ' -f1 /proc/uptime)
	dd if="$2" of="$3" bs=1M count=$(($1 / 1048576)) "$4" 2>/dev/null || return 1
	awk -v b="$1" -v t0="$_t0" -v t1="$(cut -d' ' -f1 /proc/uptime)" \
		'BEGIN { t = t1 - t0; if (t < 0.01) t = 0.01; printf "%.1f MiB/s\n", b / 1048576 / t }'
}

echo "SMBD-DEMO-BEGIN"
echo "== RDMA links in the VM (soft-RoCE and soft-iWARP on dummy netdevs)"
$RDMA link show
/usr/sbin/ip -br addr show | grep smbd
echo
upd=/lib/modules/$(uname -r)/updates
echo "== install smbd.ko, cifs.ko and ksmbd.ko in $upd; depmod -a"
mkdir -p "$upd"
cp /smbd/smbd.ko /smbd/cifs.ko /smbd/ksmbd.ko "$upd"/ && /usr/sbin/depmod -a ||
	{ echo "install or depmod failed"; echo "SMBD-DEMO-END"; exit 1; }
# Otherwise modprobe would quietly load the kernel's own cifs and ksmbd.
for m in smbd cifs ksmbd; do
	path=$(/usr/sbin/modinfo -n $m)
	echo "  modinfo -n $m: $path"
	case $path in
	"$upd"/*) ;;
	*) echo "$m does not resolve to $upd"; echo "SMBD-DEMO-END"; exit 1 ;;
	esac
done
echo
echo "== modprobe smbd"
/usr/sbin/modprobe smbd || { echo "modprobe smbd failed"; echo "SMBD-DEMO-END"; exit 1; }
echo "smbd loaded"
dmesg | grep 'smbd:' | sed 's/^\[[ 0-9.]*\] /  /'
echo
echo "== what smbd sees: /sys/kernel/debug/smbd/devices"
cat /sys/kernel/debug/smbd/devices
echo
echo "== the SMB server: modprobe ksmbd (on smbd), ksmbd.mountd"
smb_server_start || exit 1
head -c 67108864 /dev/urandom > /tmp/demo-64m
for p in "rxe 192.0.2.1" "siw 192.0.2.17"; do
	set -- $p
	echo
	echo "== over $1: mount -t cifs //$2/$SMB_SHARE $MNT -o rdma,vers=3.1.1 (cifs on smbd)"
	smb_mount "$2" "$MNT" || continue
	echo "  lsmod: $(grep -E '^(smbd|cifs|ksmbd) ' /proc/modules | cut -d' ' -f1,4 | tr '\n' ' ')"
	grep " $MNT " /proc/mounts | sed 's/password=[^,]*/password=*/; s/^/  /'
	echo "-- copy 64 MiB to the share (O_DIRECT): $(copy 67108864 /tmp/demo-64m $MNT/data oflag=direct)"
	sync
	echo 3 > /proc/sys/vm/drop_caches
	echo "-- copy it back (O_DIRECT): $(copy 67108864 $MNT/data /tmp/demo-back iflag=direct)"
	if cmp -s /tmp/demo-64m /tmp/demo-back; then echo "-- the data came back intact"; else echo "-- DATA DIFFERS"; fi
	echo "-- cifs: /proc/fs/cifs/DebugData (SMB Direct part)"
	grep -E 'SMBDirect|Conn |MR ' /proc/fs/cifs/DebugData | sed 's/^/  /'
	echo "-- smbd: /sys/kernel/debug/smbd/connections"
	sed 's/^/  /' /sys/kernel/debug/smbd/connections
	rm -f $MNT/data /tmp/demo-back
	SMB_KEEP_MODULE=1 smb_umount "$MNT" && echo "-- unmounted"
done
echo
smb_unload_module cifs && echo "== cifs unloaded"
smb_server_stop && echo "== ksmbd stopped and unloaded"
rmmod smbd && echo "== smbd unloaded"
echo "SMBD-DEMO-END"

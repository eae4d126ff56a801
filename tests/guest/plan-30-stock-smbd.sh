#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Guest plan: the stock SMB-over-RDMA test bed. The test kernel's own
# ksmbd serves a tmpfs share over SMB Direct and its own cifs mounts it
# with "-o rdma", over soft-RoCE (rxe0, 192.0.2.1) and over soft-iWARP
# (siw0, 192.0.2.17): data written and read back intact, SMB Direct and
# RDMA read/write really used, throughput printed as SMBD-INFO, and both
# modules unload. Leaves no mount and no cifs/ksmbd module behind.
#   smbdtest.stock_providers=P,...  rxe,siw (the default) or one: the
#   test command runs rxe here, as the bulk VM's plan-70 and plan-71 run
#   the stock ksmbd over rxe and the stock cifs over siw; tests/soak.sh
#   matrix runs both

# shellcheck source=tests/guest/lib-smb.sh
. /smbd/lib-smb.sh

data=/tmp/smb-data
mkdir -p $data
dd if=/dev/urandom of=$data/1m bs=1M count=1 2>/dev/null
dd if=/dev/urandom of=$data/8m bs=1M count=8 2>/dev/null
want_1m=$(md5 $data/1m)
want_8m=$(md5 $data/8m)
share=$SMB_EXPORT/$SMB_SHARE

# cycle NAME ADDR: the whole cycle over one RDMA provider
cycle() {
	name=$1 addr=$2
	t=stock-smbd/$name
	mnt=/mnt/smb-$name
	t0=$(uptime_s)

	smb_server_start
	result $? "$t/ksmbd-start" || { smb_server_stop; return; }
	echo "    smb: ksmbd $(cat "$SMB_CTL_DIR/stats"), SMB Direct port $(smb_rdma_port)"
	/usr/bin/rdma resource show cm_id 2>/dev/null | sed 's/^/    smb: cm_id: /'

	smb_mount "$addr" "$mnt"
	if ! result $? "$t/mount-rdma"; then
		dmesg | tail -n 20 | sed 's/^/    /'
		SMB_KEEP_MODULE=0 smb_umount "$mnt"
		smb_server_stop
		return
	fi
	grep " $mnt " /proc/mounts | sed 's/password=[^,]*/password=*/; s/^/    smb: /'
	smb_check_rdma_session "$addr"
	result $? "$t/smb-direct-session"

	# Buffered writes; checked on the server's tmpfs, then read back over
	# the mount with the client's page cache dropped.
	for f in 1m 8m; do
		if [ $f = 1m ]; then want=$want_1m; else want=$want_8m; fi
		dd if=$data/$f of="$mnt/$f" bs=1M conv=fsync 2>/dev/null
		rc=$?
		got=$(md5 "$share/$f" 2>/dev/null)
		[ $rc = 0 ] && [ "$got" = "$want" ]
		result $? "$t/write-$f" "dd rc=$rc, server has md5 ${got:-none}, want $want"
		drop_caches
		got=$(md5 "$mnt/$f" 2>/dev/null)
		[ "$got" = "$want" ]
		result $? "$t/read-$f" "read md5 ${got:-none}, want $want"
	done
	# A file made on the server, read by the client (nothing cached).
	cp $data/1m "$share/from-server"
	got=$(md5 "$mnt/from-server" 2>/dev/null)
	[ "$got" = "$want_1m" ]
	result $? "$t/read-server-file" "read md5 ${got:-none}, want $want_1m"

	smb_check_rdma_rw "$mnt/rw-1m" $data/1m
	result $? "$t/rdma-read-write-used"

	# Throughput: 8 MiB with O_DIRECT, 1 MiB requests.
	w=$(smb_dd_rate 8388608 $data/8m "$mnt/tput" oflag=direct)
	wrc=$?
	drop_caches
	r=$(smb_dd_rate 8388608 "$mnt/tput" /tmp/smb-tput.back iflag=direct)
	rrc=$?
	got=$(md5 /tmp/smb-tput.back 2>/dev/null)
	rm -f /tmp/smb-tput.back
	[ $wrc = 0 ] && [ $rrc = 0 ] && [ "$got" = "$want_8m" ] && [ "$(md5 "$share/tput")" = "$want_8m" ]
	result $? "$t/direct-io-8m" "write rc=$wrc read rc=$rrc md5 ${got:-none}"
	echo "SMBD-INFO: stock cifs->ksmbd over $name: write ${w:-?} MB/s read ${r:-?} MB/s (8 MiB, O_DIRECT, 1 MiB requests)"

	rm -f "$mnt"/*
	SMB_KEEP_MODULE=1 smb_umount "$mnt"
	result $? "$t/umount"
	smb_unload_module cifs
	result $? "$t/rmmod-cifs"
	SMB_KEEP_MODULE=1 smb_server_stop
	result $? "$t/ksmbd-stop"
	smb_unload_module ksmbd
	result $? "$t/rmmod-ksmbd"
	echo "SMBD-INFO: stock cifs->ksmbd over $name: cycle took $(since "$t0") s"
}

for p in $(karg smbdtest.stock_providers rxe,siw | tr ',' ' '); do
	case $p in
	rxe) cycle rxe "$RXE_ADDR" ;;
	siw) cycle siw "$SIW_ADDR" ;;
	*) result 1 "stock-smbd/providers" "smbdtest.stock_providers: no provider $p" ;;
	esac
done

# Leave the guest clean for later plans.
SMB_KEEP_MODULE=0 smb_umount /mnt/smb-rxe >/dev/null 2>&1
SMB_KEEP_MODULE=0 smb_umount /mnt/smb-siw >/dev/null 2>&1
smb_server_stop >/dev/null 2>&1
rm -rf $data
left=$(grep -E ' cifs | smb3 ' /proc/mounts; grep -E '^(cifs|ksmbd) ' /proc/modules)
[ -z "$left" ]
result $? "stock-smbd/clean" "left: $left"

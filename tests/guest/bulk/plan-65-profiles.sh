#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Guest plan (the bulk VM, tests/run.sh: without kmemleak, which halves
# the data rate; KASAN and lockdep on): smbd under the limits of the RDMA
# NICs users run it on. Each device profile (smbd_profile.c; the sources
# of its numbers are in Documentation/testing.rst) runs on the soft
# provider of its class, rxe for InfiniBand and RoCE, siw for iWARP:
#   - the profile goes into debugfs smbd/dev_profile and the device is
#     removed and added again (a profile caps the devices added after
#     it); smbd/devices shows the device capped;
#   - smbd_test.ko: an echo across the segment edges of the size two
#     smbd ends negotiate with those gather entries, kvec and bvec (the
#     page vectors go out zero-copy where the entries allow);
#   - smbd_mr_test.ko's rw: registrations of 1 B to 1 MiB and of
#     MaxReadWriteSize, cut into several descriptors where the profile's
#     registrations are short, and 1 to 4,095 descriptors, written and
#     read by the peer's RDMA (plan-47 runs the registration's other
#     rules);
#   - cifs on smbd mounting ksmbd on smbd: 4 MiB written and read back
#     with buffered and with O_DIRECT I/O, checked on the server's disk
#     and over the mount, through RDMA (the client's registrations and
#     the server's RDMA reads and writes counted).
# Then a device below the least smbd works with is refused, with a
# message naming the attribute, shown once; and the devices come back
# without a profile. smbdtest.profiles=NAME,... runs only those.

# shellcheck source=tests/guest/lib-smbpair.sh
. /smbd/lib-smbpair.sh
# shellcheck source=tests/guest/lib-st.sh
. /smbd/lib-st.sh

T=/tmp/profiles
PLAN_NAME=profiles
LIMIT=60
MNT=/mnt/smbprof
RDMA=/usr/bin/rdma
[ -x $RDMA ] || RDMA=/sbin/rdma
DBG=/sys/kernel/debug/smbd
# shellcheck disable=SC2034 # lib-bounded.sh reads it
CONNS=$DBG/connections
PROF=$DBG/dev_profile
ST=/sys/kernel/debug/smbd_test
MT=/sys/kernel/debug/smbd_mr_test
PORT=7445
mkdir -p $T
# shellcheck source=tests/guest/lib-bounded.sh
. /smbd/lib-bounded.sh

ONLY=$(karg smbdtest.profiles "")

# dev_field DEV COLUMN: a column of DEV's line in smbd/devices (1: name)
dev_field() { awk -v d="$1" -v c="$2" '$1 == d { print $c }' $DBG/devices; }

# link_active DEV NETDEV: DEV up on NETDEV, whether smbd uses it or not
link_active() {
	$RDMA link show 2>/dev/null | grep -Eq "^link $1/1 .*state ACTIVE.* netdev $2( |\$)"
}

# readd DEV TYPE NETDEV [refused]: DEV removed and added again, back in
# smbd's table (with "refused": only active, for a device smbd refuses)
readd() {
	bounded $LIMIT $RDMA link delete "$1" || { show_out; return 1; }
	bounded $LIMIT $RDMA link add "$1" type "$2" netdev "$3" || { show_out; return 1; }
	if [ "${4:-}" = refused ]; then
		smb_wait 10 link_active "$1" "$3"
	else
		smb_wait 10 device_back "$1" "$3"
	fi
}

# st_run DIR PREFIX COMMAND...: one command of a test module (D: its
# debugfs directory)
st_run() {
	D=$1
	shift
	run "$@"
}

# profile NAME CLASS CAPS...: one profile's checks (CAPS: its
# attribute=value list from dev_profile)
profile() {
	name=$1 class=$2
	shift 2
	t=profiles/$name
	if [ "$class" = iwarp ]; then
		dev=siw0 type=siw ndev=smbds0 addr=$SIW_ADDR iw=1 base=$SIW_SGE
	else
		dev=rxe0 type=rxe ndev=smbdr0 addr=$RXE_ADDR iw=0 base=$RXE_SGE
	fi
	want=$base
	for c in "$@"; do
		case $c in
		max_send_sge=*) [ "${c#*=}" -lt "$want" ] && want=${c#*=} ;;
		esac
	done
	# (not t0: lib-st.sh's run() sets that)
	pt0=$(uptime_s)
	echo "$name" > $PROF
	readd $dev $type $ndev
	result $? "$t/device-readded" "$dev on $ndev: $(why $LIMIT)" || return
	got=$(dev_field $dev 4) gp=$(dev_field $dev 11)
	[ "$got" = "$want" ] && [ "$gp" = "$name" ]
	result $? "$t/device-capped" "smbd/devices: send_sge $got (want $want), profile $gp"
	grep "^$dev	" $DBG/devices | sed 's/^/    /'

	# The transport, smbd to smbd.
	gather=$want
	[ "$gather" -gt 8 ] && gather=8
	MSIZE=$(msize_on "$gather")
	st_run $ST "$t" listen "$addr" $PORT
	st_run $ST "$t" echo "$addr" $PORT sizes="$(edges "$MSIZE")" \
		msize="$MSIZE" seed=0x9f0f iwarp=$iw timeout=180
	st_run $ST "$t" stop "$addr" $PORT
	st_run $MT "$t" listen "$addr" $((PORT + 1))
	st_run $MT "$t" rw "$addr" $((PORT + 1))
	st_run $MT "$t" stop "$addr" $((PORT + 1))

	# SMB: cifs on smbd to ksmbd on smbd.
	share=$SMB_EXPORT/$SMB_SHARE
	smb_server_start
	result $? "$t/ksmbd-start" || { smb_server_stop; return; }
	smb_mount "$addr" "$MNT"
	if result $? "$t/mount-rdma"; then
		rdma_mark
		# 4 MiB: four 1 MiB requests each way, each cut to the
		# profile's registrations (16 MiB took 9 s a profile and
		# found nothing more)
		xfer "$t" "$MNT" $CONC buffered
		xfer "$t" "$MNT" $CONC direct
		rdma_since
		[ "$RDMA_REG" -gt 0 ] && [ "$RDMA_RD" -gt 0 ] && [ "$RDMA_WR" -gt 0 ]
		result $? "$t/smb-rdma" "$RDMA_REG MRs registered by cifs, $RDMA_RD RDMA reads and $RDMA_WR RDMA writes by ksmbd"
		echo "SMBD-INFO: profiles: $name on $type: $RDMA_REG MRs, $RDMA_RD RDMA reads, $RDMA_WR RDMA writes; 4 MiB O_DIRECT write $XFER_WR MiB/s, read $XFER_RD MiB/s"
	fi
	SMB_KEEP_MODULE=1 smb_umount "$MNT"
	result $? "$t/umount"
	SMB_KEEP_MODULE=1 smb_server_stop
	result $? "$t/ksmbd-stop"
	echo "SMBD-INFO: profiles: $name took $(since "$pt0") s"
}

# refused: a device short of what smbd needs is not used, and the log
# says which attribute, once
refused() {
	t=profiles/below-minimum
	mark=$(smb_kmsg_mark)
	_rc=0
	echo "max_send_sge=1" > $PROF || _rc=1
	result $_rc "$t/profile-set" || return
	readd rxe0 rxe smbdr0 refused
	result $? "$t/device-readded" "$(why $LIMIT)"
	n=$(smb_kmsg_since "$mark" | grep -c 'rxe0: smbd: max_send_sge 1 is below the 2 smbd needs (profile custom), not used')
	[ "$n" = 1 ] && ! grep -q "^rxe0	" $DBG/devices
	result $? "$t/refused-once" "$n messages; smbd/devices: $(grep -c '^rxe0	' $DBG/devices) rxe0 lines"
	# Nobody connects over it.
	st_run $ST "$t" refused "$RXE_ADDR" $PORT timeout=30
}

load_smbd profiles/load-smbd
for m in smbd_test smbd_mr_test; do
	if [ ! -f /smbd/$m.ko ]; then
		$SMBD_MISSING profiles/load-$m "no /smbd/$m.ko in this image"
		exit 0
	fi
	if ! $INSMOD /smbd/$m.ko; then
		nok profiles/load-$m
		exit 0
	fi
done
ok profiles/load-test-modules
[ -e $PROF ] || { nok profiles/dev_profile "no $PROF"; exit 0; }
DEF_SIZE=$(cat /sys/module/smbd/parameters/max_send_size)
LARGE=$(cat /sys/module/smbd/parameters/large_message_size)
RXE_SGE=$(dev_field rxe0 4)
SIW_SGE=$(dev_field siw0 4)
SMB_CIFS_KO=/smbd/cifs.ko
SMB_KSMBD_KO=/smbd/ksmbd.ko
pair_data

sed 1d $PROF > $T/list
while read -r name class caps; do
	[ "$name" = none ] && continue
	case ",$ONLY," in
	,,|*",$name,"*) ;;
	*) continue ;;
	esac
	# shellcheck disable=SC2086 # the caps, one per word
	profile "$name" "$class" $caps
done < $T/list

refused
echo none > $PROF
readd rxe0 rxe smbdr0 && readd siw0 siw smbds0
result $? profiles/devices-back "$(why $LIMIT)"
grep -q "^rxe0	.*	-\$" $DBG/devices && grep -q "^siw0	.*	-\$" $DBG/devices
result $? profiles/no-profile "$(cat $DBG/devices)"

smb_unload_module cifs
smb_unload_module ksmbd
for m in smbd_mr_test smbd_test; do
	$RMMOD $m || nok profiles/unload-$m
done
unload_smbd profiles

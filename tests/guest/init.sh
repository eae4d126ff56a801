#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# /init of the smbd test VM (busybox sh). Sets up soft-RDMA links on
# dummy netdevs, two per provider (rxe0 and rxe1, siw0 and siw1), runs
# every /smbd/plan*.sh, dumps kmemleak and reboots (with QEMU's
# -no-reboot a reboot ends QEMU; this kernel has no ACPI, so a power-off
# would only halt).
#
# busybox sh runs its own applets before $PATH: call iproute2 and kmod by
# full path. Output protocol, one per line (see tests/vm/check-log.sh):
#   SMBD-SETUP: ok|FAILED <step>   setup progress
#   SMBD-TEST: ok|not ok|skip <name> [- reason]
#   SMBD-GUEST-DONE                 all plans finished

# No "set -e": PID 1 must never exit (that panics); each step reports.

export PATH=/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root
IP=/usr/sbin/ip
RDMA=/usr/bin/rdma
MODPROBE=/usr/sbin/modprobe

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
exec </dev/console >/dev/console 2>&1
mkdir -p /dev/pts /dev/shm
mount -t debugfs debugfs /sys/kernel/debug
mount -t tmpfs tmpfs /tmp
mount -t tmpfs tmpfs /run
# the providers' addresses (lib-ifaces.sh), karg, the clock; PID 1
# must not exit, as a failed "." would make it
if [ -r /smbd/lib-report.sh ]; then
	# shellcheck source=tests/guest/lib-report.sh
	. /smbd/lib-report.sh
else
	echo "SMBD-TEST: not ok init/lib-report - /smbd/lib-report.sh missing"
fi

# end this boot: with QEMU's -no-reboot, QEMU exits
reboot_now() {
	sync
	reboot -f
	echo b > /proc/sysrq-trigger 2>/dev/null
	sleep 1000
}

# step NAME CMD...: run CMD, print its output and result; a failed step is
# also a failed test so that the run cannot pass without it.
step() {
	name=$1
	shift
	if out=$("$@" 2>&1); then
		echo "SMBD-SETUP: ok $name"
		[ -n "$out" ] && echo "$out" | sed 's/^/    /'
		return 0
	else
		rc=$?
		echo "SMBD-SETUP: FAILED $name (rc=$rc)"
		[ -n "$out" ] && echo "$out" | sed 's/^/    /'
		echo "SMBD-TEST: not ok guest-setup/$name - rc=$rc"
		return $rc
	fi
}

echo "SMBD-GUEST: kernel $(uname -r), $(nproc) cpus, $(awk '/MemTotal/ {print $2 " kB"}' /proc/meminfo)"
echo "SMBD-GUEST: cmdline $(cat /proc/cmdline)"
echo "SMBD-GUEST: uptime $(uptime_s) s at /init"

# A kernel report before /init comes from booting the kernel itself, with
# no smbd or test code loaded yet (seen once: KASAN on an interrupt taken
# inside start_kernel under TCG). End this boot at once; tests/vm/vm-run.sh
# keeps its log and boots once more.
r=$(dmesg | grep -m1 -E '\] (BUG: |WARNING: |Oops|UBSAN: |general protection fault)')
if [ -n "$r" ]; then
	echo "SMBD-GUEST: kernel report while booting, before /init: $r"
	reboot_now
fi

# Network: only dummy links with TEST-NET-1 and 2001:db8:: (documentation)
# addresses; the VM has no NIC. Each port has two transmit queues, as
# every RDMA NIC has several: ksmbd then flags it RSS_CAPABLE in
# FSCTL_QUERY_NETWORK_INTERFACE_INFO, and cifs opens more than one channel
# to one interface when max_channels asks for it (plan-75's one-device
# case; a single-queue port would keep it to one).
port() { $IP link add "$1" numtxqueues 2 numrxqueues 2 type dummy; }
step "lo up" $IP link set lo up
step "smbdr0 dummy" port smbdr0
step "smbdr0 addr" $IP addr add $RXE_ADDR/28 dev smbdr0
step "smbdr0 addr6" $IP -6 addr add 2001:db8::1/64 dev smbdr0 nodad
# Jumbo frames, as RoCE fabrics run: rxe's path MTU becomes 4096, so a
# 1364-byte SMB Direct message is one packet instead of two.
step "smbdr0 mtu" $IP link set smbdr0 mtu 9000
step "smbdr0 up" $IP link set smbdr0 up
# A second link per provider, on the same subnet, for SMB multichannel
# (tests/guest/smb/plan-75-multichannel.sh): rxe1 and siw1 below.
step "smbdr1 dummy" port smbdr1
step "smbdr1 addr" $IP addr add $RXE1_ADDR/28 dev smbdr1
step "smbdr1 addr6" $IP -6 addr add 2001:db8::2/64 dev smbdr1 nodad
step "smbdr1 mtu" $IP link set smbdr1 mtu 9000
step "smbdr1 up" $IP link set smbdr1 up
step "smbds0 dummy" port smbds0
step "smbds0 addr" $IP addr add $SIW_ADDR/28 dev smbds0
step "smbds0 addr6" $IP -6 addr add 2001:db8:0:1::1/64 dev smbds0 nodad
step "smbds0 up" $IP link set smbds0 up
step "smbds1 dummy" port smbds1
step "smbds1 addr" $IP addr add $SIW1_ADDR/28 dev smbds1
step "smbds1 addr6" $IP -6 addr add 2001:db8:0:1::2/64 dev smbds1 nodad
step "smbds1 up" $IP link set smbds1 up
step "accept_local" sysctl -w net.ipv4.conf.all.accept_local=1
# smbdtest.stock=1: Debian's stock kernel (tests/vm/stock-kernel.sh), which
# has rxe but no siw and no kmemleak; only then may those be missing.
STOCK=0
[ "$(karg smbdtest.stock)" = 1 ] && STOCK=1
echo "SMBD-GUEST: stock kernel mode $STOCK"
# smbdtest.strict=1 (tests/run.sh): a test module missing from the image
# is a failure; a developer's run with only some of them skips the rest.
SMBD_MISSING=skip
[ "$(karg smbdtest.strict)" = 1 ] && SMBD_MISSING=nok
export SMBD_MISSING
step "modprobe rdma_rxe" $MODPROBE rdma_rxe
step "rxe0 on smbdr0" $RDMA link add rxe0 type rxe netdev smbdr0
step "rxe1 on smbdr1" $RDMA link add rxe1 type rxe netdev smbdr1
if [ $STOCK = 1 ] && ! $MODPROBE -n siw 2>/dev/null; then
	echo "SMBD-SETUP: skip siw (this kernel has none)"
else
	step "modprobe siw" $MODPROBE siw
	step "siw0 on smbds0" $RDMA link add siw0 type siw netdev smbds0
	step "siw1 on smbds1" $RDMA link add siw1 type siw netdev smbds1
fi
step "rdma link" $RDMA link show
step "net links" $IP -br link show
step "net addrs" $IP -br addr show

# Ignore whatever kmemleak suspects boot itself left: only what the plans
# leak is reported at the end.
# smbdtest.kmemleak=off turns kmemleak off for a run that cannot afford it
# (the bulk run: kmemleak's global lock and backtrace on every allocation
# halve rxe's packet rate); tests/vm/check-log.sh knows the "disabled" line
# that follows this message.
KML=/sys/kernel/debug/kmemleak
KML_OFF=0
[ "$(karg smbdtest.kmemleak)" = off ] && KML_OFF=1
if [ $KML_OFF = 1 ] && [ -w $KML ]; then
	echo "SMBD-SETUP: ok kmemleak off by request (smbdtest.kmemleak=off)"
	echo off > $KML
elif [ -w $KML ]; then
	echo scan > $KML
	echo clear > $KML
	echo "SMBD-SETUP: ok kmemleak baseline"
fi

# Generic KASAN holds freed slab objects in a quarantine and trims it only
# inside allocations that may sleep (kasan_quarantine_reduce() is called
# from __kasan_slab_alloc() and __kasan_kmalloc() for blocking gfp flags
# alone). A bulk transfer over rxe allocates and frees every packet with
# GFP_ATOMIC, and while the only process waits in the test command nothing
# else allocates: the quarantine then kept nearly every packet freed since
# the start (2.5 GB of slab, 722k skbuff heads at 16 x 64 MiB) until rxe's
# atomic allocations failed and it flushed its queue pairs. A short
# process every 2 s makes enough sleeping allocations to keep the
# quarantine trimmed; with one every 15 s the slab stayed under 400 MiB.
kq=""
if dmesg | grep -q 'KernelAddressSanitizer initialized'; then
	(while :; do sleep 2; done) &
	kq=$!
	echo "SMBD-SETUP: ok kasan quarantine keeper (pid $kq)"
fi
echo "SMBD-GUEST: uptime $(uptime_s) s before plans"

# Each plan runs under a timeout (smbdtest.plan_timeout=SECONDS on the
# kernel command line, default 600) so one hung plan does not cost the
# others and the kmemleak check.
ptmo=$(karg smbdtest.plan_timeout 600)
for plan in /smbd/plan*.sh; do
	[ -f "$plan" ] || continue
	echo "SMBD-PLAN: begin $plan"
	(cd /tmp && timeout "$ptmo" /bin/sh "$plan")
	rc=$?
	echo "SMBD-PLAN: end $plan rc=$rc"
	if [ $rc = 143 ] || [ $rc = 124 ]; then
		echo "SMBD-TEST: not ok plan/${plan##*/} - timed out after $ptmo s"
	fi
done

[ -n "$kq" ] && kill "$kq"
echo "SMBD-GUEST: uptime $(uptime_s) s after plans"
if [ $KML_OFF = 1 ]; then
	echo "SMBD-SETUP: skip kmemleak check (off by request)"
elif [ -w $KML ]; then
	echo scan > $KML
	sleep 6
	echo scan > $KML
	echo SMBD-KMEMLEAK-BEGIN
	cat $KML
	echo SMBD-KMEMLEAK-END
elif [ $STOCK = 1 ]; then
	echo "SMBD-SETUP: skip kmemleak (this kernel has none)"
else
	echo "SMBD-SETUP: FAILED kmemleak (no $KML)"
	echo "SMBD-TEST: not ok guest-setup/kmemleak - $KML missing"
fi
echo "SMBD-GUEST: uptime $(uptime_s) s at end"
echo SMBD-GUEST-DONE
reboot_now

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Boot the smbd test kernel with an initramfs under QEMU (TCG) and capture
# its serial console.
#   vm-run.sh KERNEL_CACHE_DIR INITRAMFS LOGFILE [TIMEOUT_SECONDS]
# The VM has no network device of any kind. A guest still running after
# TIMEOUT_SECONDS (default 1200) is killed. Exit 0 iff the guest printed
# SMBD-GUEST-DONE. Extra kernel arguments may be given in $SMBD_VM_APPEND.
# When the caller opened fd 3, each plan's start and end, with the checks
# passed and failed so far, and a line a minute inside a long plan, go
# there as they happen (tests/vm/vm-progress.py; $SMBD_VM_LABEL names the
# VM).
set -euo pipefail

[ $# -ge 3 ] || { echo "usage: $0 KERNEL_CACHE_DIR INITRAMFS LOGFILE [TIMEOUT_SECONDS]" >&2; exit 2; }
kdir=$1 initrd=$2 log=$3 tmo=${4:-1200}
here=$(cd "$(dirname "$0")" && pwd)
bzimage=$kdir/build/arch/x86/boot/bzImage
[ -f "$bzimage" ] || { echo "vm-run: no $bzimage" >&2; exit 2; }
[ -f "$initrd" ] || { echo "vm-run: no $initrd" >&2; exit 2; }

# Without ACPI the guest finds CPUs in SeaBIOS's MP table, which lists one
# CPU per socket: hence 2 sockets of 1 core, not QEMU's default 1x2 cores.
# panic=-1 reboots at once on a panic and -no-reboot turns that reboot
# into QEMU's exit; the guest's /init also ends with a reboot.
append="console=ttyS0,115200 panic=-1 oops=panic panic_on_warn=0 loglevel=7"
append+=" kmemleak=on nokaslr rdinit=/init printk.devkmsg=on dummy.numdummies=0"
append+=" ${SMBD_VM_APPEND:-}"

mkdir -p "$(dirname "$log")"
start=$(date +%s)
# A guest whose kernel reported a bug before /init (tests/guest/init.sh)
# ends at once; its log is kept as LOGFILE.boot1 and the VM boots once
# more. A second such boot is judged like any other.
for attempt in 1 2; do
	: > "$log"
	rc=0
	# -nodefaults and -nic none: no NIC, no default devices; the only
	# device the guest talks through is the serial port, written to $log.
	timeout --kill-after=10 "$tmo" \
		qemu-system-x86_64 -accel tcg -nodefaults -no-user-config -nic none \
		-no-reboot -m 3G -smp 2,sockets=2,cores=1,threads=1 -cpu max -display none -monitor none \
		-chardev file,id=con0,path="$log" -serial chardev:con0 \
		-kernel "$bzimage" -initrd "$initrd" -append "$append" \
		</dev/null &
	vm=$!
	# Progress for whoever watches: to fd 3 when the caller opened it.
	watch=""
	if { true >&3; } 2>/dev/null; then
		/usr/bin/python3 "$here/vm-progress.py" "$log" "$vm" \
			"${SMBD_VM_LABEL:-vm}" >&3 2>/dev/null &
		watch=$!
	fi
	wait "$vm" || rc=$?
	[ -z "$watch" ] || wait "$watch" || true
	if [ $attempt = 2 ] ||
	   ! grep -aq 'SMBD-GUEST: kernel report while booting' "$log"; then
		break
	fi
	mv "$log" "$log.boot1"
	echo "vm-run: the kernel reported a bug while booting, before /init and any smbd code (log kept in $log.boot1); booting again" >&2
	grep -a -m1 'SMBD-GUEST: kernel report while booting' "$log.boot1" |
		tr -d '\r' | sed 's/^/    /' >&2
done
secs=$(( $(date +%s) - start ))

case $rc in
0) why="exited" ;;
124 | 137) why="TIMED OUT after $tmo s (killed)" ;;
*) why="failed (rc=$rc)" ;;
esac
boot=$(grep -a -m1 'SMBD-GUEST: uptime .* at /init' "$log" | sed 's/.*uptime \([0-9.]*\) s.*/\1/' || true)
echo "vm-run: qemu $why, wall ${secs} s, guest reached /init at ${boot:-?} s uptime" >&2

if grep -aq 'SMBD-GUEST-DONE' "$log"; then
	exit 0
fi
echo "vm-run: guest did not print SMBD-GUEST-DONE (crash, hang or timeout); last lines:" >&2
tail -n 20 "$log" | tr -d '\r' | sed 's/^/    /' >&2
exit 1

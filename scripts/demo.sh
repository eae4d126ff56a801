#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The smbd demo: installs what it needs, builds (or reuses) the test
# kernel, smbd.ko and the kernel SMB client and server on smbd
# (adapters/build.sh), boots a QEMU VM (no network device) with a
# soft-RoCE (rxe) and a soft-iWARP (siw) device, installs the three
# modules in the guest's /lib/modules/*/updates, runs "modprobe smbd",
# mounts a share with "mount -t cifs -o rdma" over each provider, copies
# data, and prints the throughput and smbd's connection statistics.
# Exits non-zero when any step fails (each is a check of the guest plan,
# tests/guest/demo/plan-demo.sh, which the test command runs too).
#
#   scripts/demo.sh
#   SMBD_DEMO_BREAK=1 scripts/demo.sh   the siw mount asks for a share
#                                       that does not exist: exits 1
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
out=$top/out/demo
mkdir -p "$out"
cd "$top"

echo "== setup (Debian packages)"
bash scripts/setup.sh
echo "== test kernel"
kcache=$(bash tests/vm/build-kernel.sh)
echo "== building smbd.ko, and cifs.ko and ksmbd.ko on smbd from Debian's linux-source-6.12; smbdctl"
{ make -s KDIR="$kcache/build" &&
	bash adapters/build.sh "$kcache/build" out/adapters cifs ksmbd &&
	make -s -C tools/smbdctl; } \
	>"$out/build.log" 2>&1 || { cat "$out/build.log"; exit 1; }
echo "== booting the VM (QEMU, TCG, -nic none)"
# shellcheck disable=SC2046 # a list of paths
bash tests/vm/mkinitramfs.sh "$kcache" "$out/initrd.cpio.gz" smbd.ko \
	$(ls out/adapters/*.ko) tools/smbdctl/smbdctl tests/guest/demo/plan-demo.sh \
	>"$out/initrd.log" 2>&1
[ "${SMBD_DEMO_BREAK:-0}" = 1 ] && export SMBD_VM_APPEND="${SMBD_VM_APPEND:-} smbddemo.break=1"
SMBD_VM_LABEL=demo-vm bash tests/vm/vm-run.sh "$kcache" "$out/initrd.cpio.gz" "$out/console.log" 600 3>&1
awk '/SMBD-DEMO-BEGIN/ { on = 1; next } /SMBD-DEMO-END/ { on = 0 } on' \
	"$out/console.log" | tr -d '\r' | grep -v '^SMBD-DEMO-RESULT'
echo "(full console log: $out/console.log)"
# The verdict: every step of the plan passed, and the plan got to its end.
res=$(tr -d '\r' <"$out/console.log" | sed -n 's/^SMBD-DEMO-RESULT: \([0-9]*\) failed$/\1/p')
if [ -z "$res" ]; then
	echo "demo: FAILED (the guest plan did not finish)"
	exit 1
fi
if [ "$res" != 0 ]; then
	echo "demo: FAILED ($res step(s) failed):"
	tr -d '\r' <"$out/console.log" | grep '^SMBD-TEST: not ok' | sed 's/^SMBD-TEST: /  /'
	exit 1
fi
echo "demo: every step passed ($(tr -d '\r' <"$out/console.log" | grep -c '^SMBD-TEST: ok'))"

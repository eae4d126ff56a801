#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The smbd demo: installs what it needs, builds (or reuses) the test
# kernel and smbd.ko, boots a QEMU VM (no network device) with a soft-RoCE
# (rxe) and a soft-iWARP (siw) device, loads smbd, shows what it sees and
# runs a connection pair over each provider.
#
#   scripts/demo.sh
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
out=$top/out/demo
mkdir -p "$out"
cd "$top"

echo "== setup (Debian packages)"
bash scripts/setup.sh
echo "== test kernel"
kcache=$(bash scripts/build-kernel.sh)
echo "== building smbd.ko"
{ make -s KDIR="$kcache/build" && make -s -C tests/fault KDIR="$kcache/build"; } \
	>"$out/build.log" 2>&1 || { cat "$out/build.log"; exit 1; }
echo "== booting the VM (QEMU, TCG, -nic none)"
bash scripts/mkinitramfs.sh "$kcache" "$out/initrd.cpio.gz" smbd.ko \
	tests/fault/smbd_fault.ko tests/guest/demo/plan-demo.sh >"$out/initrd.log" 2>&1
bash scripts/vm-run.sh "$kcache" "$out/initrd.cpio.gz" "$out/console.log" 600
awk '/SMBD-DEMO-BEGIN/ { on = 1; next } /SMBD-DEMO-END/ { on = 0 } on' \
	"$out/console.log" | tr -d '\r'
echo "(full console log: $out/console.log)"

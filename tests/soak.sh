#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The bulk soak, its own command (about 20 minutes in the TCG guest; the
# test command runs 16 x 16 MiB): 16 connections per provider, 64 MiB
# each, half of them each way, over rxe and siw, every byte checked,
# under KASAN and lockdep.
#
#   tests/soak.sh            SMBD_BULK=CONNSxSIZE to change the size
#
# Ends with "N passed, N failed" like tests/run.sh. Logs go to out/soak/.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
out=$top/out/soak
rm -rf "$out"
mkdir -p "$out"
cd "$top"

bash scripts/setup.sh >"$out/setup.log" 2>&1 || { tail -n 20 "$out/setup.log"; echo "0 passed, 1 failed"; exit 1; }
kcache=$(bash scripts/build-kernel.sh 2>"$out/kernel.log") || { tail -n 40 "$out/kernel.log"; echo "0 passed, 1 failed"; exit 1; }
if ! { make -s -j"$(nproc)" KDIR="$kcache/build" && make -s -C tests/kmod KDIR="$kcache/build"; } >"$out/build.log" 2>&1; then
	tail -n 40 "$out/build.log"
	echo "0 passed, 1 failed"
	exit 1
fi
SMBD_VM_TIMEOUT=${SMBD_BULK_TIMEOUT:-4800} \
SMBD_VM_APPEND="smbdtest.bulk=${SMBD_BULK:-16x64M} smbdtest.plan_timeout=4700 smbdtest.kmemleak=off" \
SMBD_VM_PLANS=tests/guest/bulk/plan-60-bulk.sh \
	bash tests/vm-test.sh "$out/vm-bulk.log" smbd.ko tests/kmod/smbd_test.ko \
	>"$out/vm-bulk-summary.log" 2>&1
rc=$?
grep -a 'SMBD-INFO: bulk' "$out/vm-bulk.log" | tr -d '\r' || true
cat "$out/vm-bulk-summary.log"
exit $rc

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run the smbd VM tests end to end.
#   tests/vm/vm-test.sh LOGFILE [EXTRA_FILE...]
# Installs what is missing (scripts/setup.sh), builds or reuses the test
# kernel, packs an initramfs with EXTRA_FILEs (modules, plan scripts) and
# tests/guest/plan-*.sh, boots it and judges the console log. The last line
# printed is check-log.sh's "N passed, N failed[, N skipped]".
# Environment: SMBD_VM_TIMEOUT (seconds, default 1200), SMBD_VM_APPEND,
# SMBD_VM_PLANS (the plan scripts instead of tests/guest/plan-*.sh),
# SMBD_VM_KERNEL (a kernel cache directory instead of the test kernel's,
# e.g. from tests/vm/stock-kernel.sh).
set -euo pipefail

[ $# -ge 1 ] || { echo "usage: $0 LOGFILE [EXTRA_FILE...]" >&2; exit 2; }
top=$(cd "$(dirname "$0")/../.." && pwd)
log=$1
shift

bash "$top/scripts/setup.sh"
kdir=${SMBD_VM_KERNEL:-$(bash "$top/tests/vm/build-kernel.sh")}

initrd=$(mktemp "${TMPDIR:-/tmp}/smbd-initramfs.XXXXXX.cpio.gz")
trap 'rm -f "$initrd"' EXIT
# shellcheck disable=SC2086 # a list of paths
bash "$top/tests/vm/mkinitramfs.sh" "$kdir" "$initrd" "$@" \
	${SMBD_VM_PLANS:-"$top"/tests/guest/plan-*.sh}

vmrc=0
bash "$top/tests/vm/vm-run.sh" "$kdir" "$initrd" "$log" "${SMBD_VM_TIMEOUT:-1200}" || vmrc=$?
crc=0
bash "$top/tests/vm/check-log.sh" "$log" || crc=$?
if [ $crc -ne 0 ]; then exit $crc; fi
exit $vmrc

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The smbd benchmark (Documentation/performance.rst), side by side with the
# stock SMB Direct code, raw verbs and SMB over TCP:
#   scripts/bench.sh [OUTDIR]        (default out/bench)
# Installs what it needs, builds (once, cached like the test kernel) a bench
# kernel without the bug finders (tests/vm/build-kernel.sh bench), builds
# smbd.ko, smbd_test.ko and cifs.ko and ksmbd.ko on smbd against it in a
# copy of the tree, and boots one VM that runs
# tests/guest/bench/plan-90-bench.sh. Then scripts/bench-report.py writes
# OUTDIR/results.txt (the table, every figure as a ratio to stock cifs to
# stock ksmbd and to raw verbs), results.json, chart.png and profile.txt.
# Not part of the test command: about 75 minutes with the defaults (the
# cost part about 25 of them).
# Environment (each maps to the plan's smbdbench.* option):
#   SMBD_BENCH_REPEAT (3)  SMBD_BENCH_RUNTIME (5 s per run)
#   SMBD_BENCH_PROVIDERS ("siw rxe")  SMBD_BENCH_PARTS ("verbs api smb cost trace scale mc tcp";
#   "cost" is the transport's CPU per I/O, a part of its own)
#   SMBD_BENCH_PAIRS ("stock.stock smbd.stock stock.smbd smbd.smbd"; a
#   pairing may add a mount option and smbd.ko parameters, in that order:
#   smbd.smbd-sign, stock.stock-seal, smbd.smbd:cq_poll=workqueue; and
#   smbd.smbd-sign~noxform, cifs on smbd without the RDMA transform; the
#   report gives the signed and sealed figures a table of their own)
#   SMBD_BENCH_PROFILE (1: perf profiles of stock.stock and smbd.smbd)
#   SMBD_BENCH_SMBD (smbd.ko's module parameters, "name=value,...")
#   SMBD_BENCH_JOBS (only these fio jobs, e.g. "randread_4k_qd1")
#   SMBD_BENCH_SCALE_MAX (256: the scale part fills one listener up to
#   this many connections)
#   SMBD_BENCH_COST_OFFSETS (1: the cost part's first round also prints the
#   instructions of smbd.ko its samples landed on; scripts/bench-lines.sh
#   turns them into source lines)
#   SMBD_BENCH_KERNEL (bench; plain: the bench kernel without the fixes
#   to the stock code, as users build it from Debian's source)
#   SMBD_BENCH_SRC (a tree, e.g. a worktree of an older commit: its
#   smbd.ko, smbd_test.ko, cifs.ko and ksmbd.ko, run by this tree's plan)
#   SMBD_BENCH_DOC=1 also rewrites Documentation/performance.rst and its
#   chart from this run, and Documentation/performance.json (the ratios
#   the next runs' summaries compare theirs with; SMBD_BENCH_BASELINE=1
#   writes only that).
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$top/out/bench}
mkdir -p "$out"
out=$(cd "$out" && pwd)
start=$(date +%s)

bash "$top/scripts/setup.sh"
# The benchmark's own packages: fio and perf run in the guest, matplotlib
# draws the chart on the host, perftest is the raw verbs baseline.
need=()
for p in fio perftest linux-perf python3-matplotlib; do
	[ "$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null)" = installed ] || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
	[ "$(id -u)" = 0 ] || { echo "bench: missing packages (${need[*]}); run as root" >&2; exit 1; }
	echo "bench: installing ${need[*]}"
	DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

case ${SMBD_BENCH_KERNEL:-bench} in
bench | plain) kc=$(bash "$top/tests/vm/build-kernel.sh" "${SMBD_BENCH_KERNEL:-bench}") ;;
*) echo "bench: SMBD_BENCH_KERNEL is bench or plain" >&2; exit 2 ;;
esac
echo "bench: kernel $kc"
echo "$kc" > "$out/kernel-dir"

# Build in a copy: the tree's own modules are for the test kernel.
src=$out/src
rm -rf "$src"
mkdir -p "$src"
# SMBD_BENCH_SRC: the modules of another commit's tree (say a worktree
# of an older one), measured by this tree's plan.
mods_top=${SMBD_BENCH_SRC:-$top}
tar -C "$mods_top" --exclude=./out --exclude=./.git -cf - . | tar -C "$src" -xf -
make -s -C "$src" clean >/dev/null 2>&1 || true
make -s -C "$src" -j"$(nproc)" KDIR="$kc/build" >"$out/build.log" 2>&1 ||
	{ tail -n 30 "$out/build.log"; exit 1; }
make -s -C "$src/tests/kmod" KDIR="$kc/build" >>"$out/build.log" 2>&1 ||
	{ tail -n 30 "$out/build.log"; exit 1; }
bash "$src/adapters/build.sh" "$kc/build" "$out/mods" cifs ksmbd >>"$out/build.log" 2>&1 ||
	{ tail -n 30 "$out/build.log"; exit 1; }
cp "$src/smbd.ko" "$src/tests/kmod/smbd_test.ko" "$out/mods/"

# The cost part's map of each SMB Direct implementation's functions
# (tests/guest/bench/cost.awk): smbd.ko whole and the adapters' objects
# in cifs.ko and ksmbd.ko; the stock SMB Direct objects of the bench
# kernel's cifs.ko and ksmbd.ko.
syms=$out/mods/cost-syms.txt
# funcs COMPONENT DSO OBJECT...: "COMPONENT DSO FUNCTION" per function
funcs() {
	local c=$1 d=$2
	shift 2
	nm --defined-only "$@" | awk -v c="$c" -v d="$d" '$2 ~ /^[tT]$/ { print c, d, $3 }'
}
{
	echo "smbd [smbd] *"
	funcs smbd '[cifs]' "$out"/mods/cifs-build/fs/smb/client/smbd_*.o
	funcs smbd '[ksmbd]' "$out"/mods/ksmbd-build/fs/smb/server/smbd_*.o
	funcs cifs-rdma '[cifs]' "$kc/build/fs/smb/client/smbdirect.o"
	funcs ksmbd-rdma '[ksmbd]' "$kc/build/fs/smb/server/transport_rdma.o"
} | sort -u > "$syms"

initrd=$out/initrd.cpio.gz
SMBD_INITRAMFS_TOOLS="fio perf" bash "$top/tests/vm/mkinitramfs.sh" "$kc" "$initrd" \
	"$out/mods/smbd.ko" "$out/mods/smbd_test.ko" "$out/mods/cifs.ko" \
	"$out/mods/ksmbd.ko" "$top/tests/guest/bench/plan-90-bench.sh" \
	"$top/tests/guest/bench/trace-qd1.awk" "$top/tests/guest/bench/cost.awk" "$syms"

arg() { printf '%s' "$1" | tr ' ' '+'; }
# The TCG guest finds its two TSCs unsynchronized and falls back to the
# jiffies clock (4 ms steps): take the TSC, which QEMU derives from one
# host clock for every vCPU. Its rate is the host's TSC rate, which the
# guest cannot always measure (TCG's PIT is too irregular to calibrate
# against, and then the guest has no TSC at all): give it.
tsc_khz=$(awk '/^cpu MHz/ { printf "%d", $4 * 1000; exit }' /proc/cpuinfo)
append="tsc=reliable smbdtest.kmemleak=off smbdtest.plan_timeout=14000"
[ -n "$tsc_khz" ] && [ "$tsc_khz" -gt 0 ] && append+=" tsc_early_khz=$tsc_khz"
append+=" smbdbench.repeat=${SMBD_BENCH_REPEAT:-3} smbdbench.runtime=${SMBD_BENCH_RUNTIME:-5}"
append+=" smbdbench.providers=$(arg "${SMBD_BENCH_PROVIDERS:-siw rxe}")"
append+=" smbdbench.parts=$(arg "${SMBD_BENCH_PARTS:-verbs api smb trace scale mc tcp}")"
append+=" smbdbench.pairs=$(arg "${SMBD_BENCH_PAIRS:-stock.stock smbd.stock stock.smbd smbd.smbd}")"
append+=" smbdbench.profile=${SMBD_BENCH_PROFILE:-1}"
append+=" smbdbench.kernel=${SMBD_BENCH_KERNEL:-bench}"
[ -n "${SMBD_BENCH_SMBD:-}" ] && append+=" smbdbench.smbd=$(arg "$SMBD_BENCH_SMBD")"
[ -n "${SMBD_BENCH_SCALE_MAX:-}" ] && append+=" smbdbench.scale_max=$SMBD_BENCH_SCALE_MAX"
[ -n "${SMBD_BENCH_JOBS:-}" ] && append+=" smbdbench.jobs=$(arg "$SMBD_BENCH_JOBS")"
[ -n "${SMBD_BENCH_COST_OFFSETS:-}" ] && append+=" smbdbench.cost_offsets=$SMBD_BENCH_COST_OFFSETS"
echo "bench: booting the VM (log: $out/bench.log)"
SMBD_VM_APPEND="$append" SMBD_VM_LABEL=bench-vm \
	bash "$top/tests/vm/vm-run.sh" "$kc" "$initrd" "$out/bench.log" 14400 3>&1 ||
	echo "bench: the VM did not finish cleanly; reporting what it printed" >&2
rm -f "$initrd"

# The summary fails (exit status 3) when an SMB figure of an smbd pairing
# is below stock's, or a ratio to stock fell by more than 10% since the
# previous landed run (Documentation/performance.json, which a run with
# SMBD_BENCH_DOC=1 rewrites).
report=(/usr/bin/python3 "$top/scripts/bench-report.py" "$out/bench.log" "$out")
[ "${SMBD_BENCH_DOC:-0}" = 1 ] && report+=(--doc "$top/Documentation")
[ -f "$top/Documentation/performance.json" ] &&
	report+=(--previous "$top/Documentation/performance.json")
# SMBD_BENCH_BASELINE=1: this run's ratios become the previous landed
# run's for the runs after it (as SMBD_BENCH_DOC=1 makes them).
[ "${SMBD_BENCH_BASELINE:-0}" = 1 ] &&
	report+=(--baseline "$top/Documentation/performance.json")
report+=(--commit "$(git -C "$mods_top" rev-parse --short HEAD 2>/dev/null || echo unknown)")
rc=0
"${report[@]}" || rc=$?
echo "bench: took $(($(date +%s) - start)) s; results in $out"
[ $rc = 0 ] || echo "bench: the summary failed (see its end in $out/results.txt)" >&2
exit $rc

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The smbd test command: every check, ending with one line
# "N passed, N failed" (", N skipped" when any were skipped).
#
#   tests/run.sh
#
# 1. installs what it needs (scripts/setup.sh) and builds or reuses the
#    test kernel (tests/vm/build-kernel.sh);
# 2. host checks: smbd builds W=1-clean against Debian's newest 6.12
#    headers and against the test kernel, sparse (C=2) is clean, smbd's
#    files call each other one way only (scripts/check-layers.py),
#    checkpatch --strict is clean, the log checker passes its self-test;
# 3. boots the test kernel in QEMU with smbd.ko and smbd_kunit.ko and runs
#    tests/guest/plan-*.sh: KUnit suites (every case counts) and
#    integration checks, failing on any KASAN, lockdep, WARNING, Oops,
#    hung task, RCU stall or kmemleak report;
# 4. a second VM boot for the bulk transfer (tests/guest/bulk): 16
#    connections x 16 MiB, half of them each way, over rxe and over siw,
#    every byte checked (SMBD_BULK=CONNSxSIZE to change it; the 16 x
#    64 MiB soak is tests/soak.sh);
# 5. a third VM boot for the SMB pairings (tests/guest/smb): the kernel
#    SMB client and server built on smbd (adapters/build.sh) against the
#    stock ones and each other, mount -o rdma over rxe and siw;
#    then Debian's stock kernel in the VM with the modules built against
#    its headers (tests/guest/stock);
# 6. mutation checks (tests/mutants.sh): protocol rules broken on purpose
#    must make the KUnit suites fail.
# Logs go to out/test/.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
out=$top/out/test
rm -rf "$out"
mkdir -p "$out"
cd "$top"
start=$(date +%s)

pass=0
fail=0
skip=0
# What failed, repeated just above the closing line: a long run's output
# is often seen only by its tail.
failed_names=()

# failed <what>: count and name a failure that is not a check's
failed() {
	fail=$((fail + 1))
	failed_names+=("$1")
	echo "not ok - $1"
}

# took <start>: the seconds since <start> (date +%s), for the progress
# lines: where the run's time goes
took() {
	echo "$(($(date +%s) - $1)) s"
}

# check <name> <command...>: run a host check, log its output
check() {
	local name=$1 log t0
	shift
	log=$out/${check_tag:-host}-$((pass + fail + 1)).log
	t0=$(date +%s)
	if "$@" >"$log" 2>&1; then
		pass=$((pass + 1))
		echo "ok - $name [$(took "$t0")]"
	else
		fail=$((fail + 1))
		failed_names+=("$name")
		echo "not ok - $name (log: $log) [$(took "$t0")]"
		tail -n 25 "$log" | sed 's/^/    /'
	fi
}

# add_counts <log>: add a sub-run's closing "N passed, N failed[, N skipped]"
add_counts() {
	local line p f s
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$1" | tail -n 1)
	if [ -z "$line" ]; then
		failed "$2 reported no result"
		return
	fi
	# check-log.sh's failures ("-- [kind] name") and tests/mutants.sh's
	# ("not ok ...").
	while IFS= read -r l; do
		failed_names+=("$2: $l")
	done < <(grep -aE '^(-- \[|not ok )' "$1" | sed -E 's/^-- //')
	# The start of each kernel report, again at the end of the run: CI may
	# keep only the last part of what the run printed. Registers, code
	# bytes and the module list are left out there, so that the call
	# trace fits.
	awk '/^-- \[kernel\]/ { n = 24; print; next }
	     n > 0 && /^   \| / {
		if ($0 ~ /^   \| +(Modules linked|Code:|RSP:|RAX:|RDX:|RBP:|R10:|R13:|FS:|CS:|CR2:|DR[0-9]:|Hardware name)/)
			next
		print; n--; next
	     }
	     { n = 0 }' "$1" >>"$out/report-heads.log"
	p=$(sed -E 's/^([0-9]+) passed.*/\1/' <<<"$line")
	f=$(sed -E 's/^[0-9]+ passed, ([0-9]+) failed.*/\1/' <<<"$line")
	s=$(sed -nE 's/.*, ([0-9]+) skipped.*/\1/p' <<<"$line")
	pass=$((pass + p))
	fail=$((fail + f))
	skip=$((skip + ${s:-0}))
}

# build <kdir> [make args]: a clean build that must print no warning
build() {
	local kdir=$1 log rc
	shift
	make -s KDIR="$kdir" clean >/dev/null 2>&1
	log=$(make -j"$(nproc)" KDIR="$kdir" W=1 "$@" 2>&1)
	rc=$?
	printf '%s\n' "$log"
	[ $rc -eq 0 ] && ! grep -qE 'warning:|error:' <<<"$log"
}

# The consumer test modules, built against smbd.ko's Module.symvers.
test_dirs="tests/kmod tests/fault tests/churn tests/hostile tests/interop tests/mr tests/smb2c"
test_modules=""
build_test_modules() {
	local kdir=$1 d log rc=0

	for d in $test_dirs; do
		make -s -C "$d" KDIR="$kdir" clean >/dev/null 2>&1
		log=$(make -C "$d" KDIR="$kdir" 2>&1) || rc=1
		printf '%s\n' "$log"
		grep -qE 'warning:|error:' <<<"$log" && rc=1
		test_modules+=" $(ls "$d"/*.ko 2>/dev/null)"
	done
	return $rc
}

finish() {
	local line="$pass passed, $fail failed"

	[ $skip -gt 0 ] && line+=", $skip skipped"
	# Where the VMs' time went (tests/vm/vm-progress.py's NAME.log.times).
	if compgen -G "$out/*.log.times" >/dev/null; then
		echo "== the VMs' longest stretches (s, VM, plan, the result or end they led to):"
		for f in "$out"/*.log.times; do
			n=${f##*/}
			sed "s|^\([0-9]*\) |\1 ${n%.log.times} |" "$f"
		done | sort -rn | head -n 12 | sed 's/^/  /'
	fi
	if [ -s "$out/report-heads.log" ]; then
		echo "== kernel reports (their first lines; the whole ones are above):"
		cat "$out/report-heads.log"
	fi
	if [ ${#failed_names[@]} -gt 0 ]; then
		echo "== failed:"
		printf '  %s\n' "${failed_names[@]}"
	fi
	echo "test run: $(($(date +%s) - start)) s"
	echo "$line"
	[ $fail -eq 0 ]
	exit
}

if ! bash scripts/setup.sh >"$out/setup.log" 2>&1; then
	tail -n 20 "$out/setup.log"
	failed "setup (installing packages)"
	finish
fi
# The host checks that need neither the test kernel nor each other's
# results, run while the test kernel builds: the builds against Debian's
# headers, the Debian package with its DKMS builds for Debian's two
# kernels, and checkpatch. A kernel build leaves one core idle while it
# unpacks the source and links, and so does the package's install
# (unpacking, dpkg, DKMS's steps): together they take less time than
# one after the other. Their lines are shown, and counted, once the
# kernel is built. Neither builds in the other's tree.
# The stock kernels' directories, for their VMs below: $out/stock-dirs.
early_checks() {
	local check_tag=early
	pass=0
	fail=0
	skip=0
	failed_names=()
	debian=$(ls -d /usr/src/linux-headers-6.12.*-amd64 2>/dev/null | sort -V | tail -n 1)
	debian61=$(find /usr/src -maxdepth 1 -name 'linux-headers-6.1.0-*-amd64' |
		grep -E -- '-[0-9]+-amd64$' | sort -V | tail -n 1)
	check "build against Debian headers ${debian##*/} (W=1, no warnings)" \
		build "$debian"
	check "build against Debian headers ${debian61##*/} (W=1, no warnings)" \
		build "$debian61"
	# The Debian package, installed and removed in a scratch root with
	# Debian's two kernels' modules (tests/vm/stock-kernel.sh): DKMS builds
	# smbd, cifs and ksmbd for both (adapters/build.sh, which fails on an
	# adapter's W=1 or sparse warning), and its modules go to the stock-kernel
	# VMs below, through $deb_mods.
	local stock_dirs=()
	for series in 6.12 6.1; do
		if d=$(bash tests/vm/stock-kernel.sh $series 2>>"$out/stock-kernel.log"); then
			stock_dirs+=("$d")
		else
			tail -n 20 "$out/stock-kernel.log"
			failed "Debian's stock $series kernel (download and unpack)"
		fi
	done
	t0=$(date +%s)
	if deb=$(bash scripts/mkdeb.sh "$out/deb-pkg" 2>"$out/mkdeb.log"); then
		pass=$((pass + 1))
		echo "ok - scripts/mkdeb.sh builds ${deb##*/}"
		# Debian's package checker: no error and no warning.
		check "lintian: ${deb##*/} has no error or warning" \
			lintian --fail-on error,warning "$deb"
		[ ${#stock_dirs[@]} = 0 ] ||
			bash scripts/deb-check.sh "$deb" "$deb_mods" "${stock_dirs[@]}" \
				>"$out/deb-summary.log" 2>&1
		cp "$deb_mods/deb-check.log" "$out/" 2>/dev/null
		grep -E '^(ok|not ok) ' "$out/deb-summary.log"
		add_counts "$out/deb-summary.log" "Debian package"
		echo "Debian package checks took $(took "$t0")"
	else
		cat "$out/mkdeb.log"
		failed "scripts/mkdeb.sh builds the Debian package"
	fi
	check "checkpatch --strict clean" scripts/checkpatch.sh
	printf '%s\n' "${stock_dirs[@]}" >"$out/stock-dirs"
	if [ "$skip" -gt 0 ]; then
		echo "$pass passed, $fail failed, $skip skipped"
	else
		echo "$pass passed, $fail failed"
	fi
}
# The Debian package's modules are kept outside the tree: a "make clean"
# (build() above) deletes every .ko under it, out/ included.
deb_mods=$(mktemp -d "${TMPDIR:-/tmp}/smbd-deb-mods.XXXXXX")
early_pid=""
# In a process group of its own: a run stopped half-way stops its makes,
# DKMS builds and downloads too.
trap 'rm -rf "$deb_mods"; [ -z "$early_pid" ] || kill -TERM -- -"$early_pid" 2>/dev/null' EXIT
set -m
early_checks >"$out/early.log" 2>&1 </dev/null &
early_pid=$!
set +m

# Its progress (a line every 30 s while it builds) shows, and is logged.
t0=$(date +%s)
kernel_ok=1
if ! kcache=$(bash tests/vm/build-kernel.sh 2> >(tee "$out/kernel.log" >&2)); then
	tail -n 40 "$out/kernel.log"
	kernel_ok=0
else
	echo "test kernel: $kcache (built in $(cat "$kcache/build-seconds") s; this step $(took "$t0"))"
fi
t0=$(date +%s)
wait "$early_pid"
early_pid=""
grep -v -E '^[0-9]+ passed, [0-9]+ failed' "$out/early.log"
echo "the host checks run alongside the kernel build ended $(took "$t0") after it"
add_counts "$out/early.log" "host checks"
mapfile -t stock_dirs < <(grep . "$out/stock-dirs" 2>/dev/null)
if [ $kernel_ok = 0 ]; then
	failed "test kernel build"
	finish
fi
# The SMB consumers on smbd.
adapter_parts="cifs ksmbd"
check "build against the test kernel with sparse (W=1, C=2, no warnings)" \
	build "$kcache/build" C=2
check "smbd's files call each other one way only (no cycle; the pure ones nothing outside)" \
	/usr/bin/python3 scripts/check-layers.py smbd_*.o
# shellcheck disable=SC2086 # a list of words
check "build ${adapter_parts// /.ko and }.ko on smbd against the test kernel" \
	bash adapters/build.sh "$kcache/build" out/adapters $adapter_parts
# kernel-doc (the test kernel's scripts/kernel-doc): every kernel-doc
# block of smbd's sources, headers and KUnit suites complete.
check_kerneldoc() {
	local o
	o=$(perl "$kcache/src/scripts/kernel-doc" -none smbd_*.c include/*.h \
		kunit/*.c 2>&1)
	[ -z "$o" ] || { printf '%s\n' "$o"; return 1; }
}
check "kernel-doc -none: no warnings" check_kerneldoc
# modinfo: version (smbd.h's SMBD_VERSION), author, description, and a
# description of every parameter (the guest's plan-21 checks their
# ranges).
check_modinfo() {
	local want
	want=$(sed -n 's/^#define SMBD_VERSION[[:space:]]*"\(.*\)"/\1/p' include/smbd.h)
	/sbin/modinfo smbd.ko | grep -E '^(version|author|description|parm):'
	[ -n "$want" ] && [ "$(/sbin/modinfo -F version smbd.ko)" = "$want" ] &&
		[ -n "$(/sbin/modinfo -F author smbd.ko)" ] &&
		[ -n "$(/sbin/modinfo -F description smbd.ko)" ] &&
		/sbin/modinfo -F parm smbd.ko | awk '
			{ n++; d = $0; sub(/^[^:]*:/, "", d); if (length(d) < 30) bad++ }
			END { exit !(n >= 9 && !bad) }'
}
check "modinfo: version, author, description, every parameter described" \
	check_modinfo
check "log checker self-test (reports, KTAP counts, clean log)" \
	bash tests/harness/selftest.sh

check "build the test modules (W=1, no warnings)" \
	build_test_modules "$kcache/build"
# smbdctl (tools/smbdctl) and the netlink family's refusal test, for the
# SMB VM's plan-77 and the demo.
build_smbdctl() {
	local log rc=0

	make -s -C tools/smbdctl clean >/dev/null 2>&1
	log=$(make -C tools/smbdctl smbdctl smbdctl-nltest 2>&1) || rc=1
	printf '%s\n' "$log"
	grep -qE 'warning:|error:' <<<"$log" && rc=1
	return $rc
}
check "build smbdctl and its netlink test (-Wall -Wextra, no warnings)" \
	build_smbdctl

# vm_run NAME DESCRIPTION TIMEOUT APPEND PLANS INFO MODULE...: one VM
# (PLANS empty: tests/guest/plan-*.sh) logged to $out/NAME{,-summary}.log,
# its SMBD-INFO lines matching INFO shown, its summary counted.
vm_run() {
	local name=$1 what=$2 tmo=$3 append=$4 plans=$5 info=$6 t0
	shift 6
	t0=$(date +%s)
	SMBD_VM_TIMEOUT=$tmo SMBD_VM_APPEND="smbdtest.strict=1 $append" \
	SMBD_VM_PLANS=$plans SMBD_VM_LABEL=$name \
		bash tests/vm/vm-test.sh "$out/$name.log" "$@" \
		3>&1 >"$out/$name-summary.log" 2>&1
	[ -z "$info" ] || grep -aE "SMBD-INFO: ($info)" "$out/$name.log" | tr -d '\r' || true
	cat "$out/$name-summary.log"
	add_counts "$out/$name-summary.log" "$what"
	echo "$what took $(took "$t0")"
}

# The main VM: KUnit, devices, parameters, the transport and its fault,
# churn, hostile and trace plans. The hostile peer serves over rxe (smbd
# connecting: the RoCE-only cases) and connects over siw; all four of
# its lanes, with more messages, are tests/soak.sh hostile. The stock
# test bed (plan-30) runs over rxe; tests/soak.sh matrix runs it over
# both.
if [ -f smbd.ko ] && [ -f kunit/smbd_kunit.ko ]; then
	# shellcheck disable=SC2086 # a list of paths
	vm_run vm "VM run" "${SMBD_VM_TIMEOUT:-2700}" \
		"smbdtest.plan_timeout=900 smbdtest.hostile_lanes=rxe:server,siw:client smbdtest.stock_providers=rxe" "" "" \
		smbd.ko kunit/smbd_kunit.ko $test_modules
else
	failed "VM tests (no modules were built)"
fi

# The bulk transfer: 16 connections per provider, 16 MiB each, half of
# them each way (the 16 x 64 MiB soak is its own command, tests/soak.sh:
# about 20 minutes). SMBD_BULK=CONNSxSIZE changes it. Then smbd as real
# NICs (device profiles): the transport, RDMA and cifs on smbd mounting
# ksmbd on smbd under four of them, which between them hold each
# extreme smbd sizes itself by: the fewest gather entries and the
# shortest queues (irdma-gen1, iWARP), registrations of 32 pages
# (cxgb4-nodsgl, iWARP), four gather entries on RoCE (qedr), 511-page
# registrations and an ORD of 128 (mlx4). Every profile is
# tests/soak.sh profiles (SMBD_PROFILES=NAME,... picks others; plan-65).
# Then the SMB pairings
# (tests/guest/smb/plan-70 to 72): cifs and ksmbd, each stock or on smbd
# (adapters/), cifs on smbd to the stock ksmbd over rxe, the stock cifs
# to ksmbd on smbd over siw, and both on smbd (signed and sealed mounts
# too) over siw: the demo below and the SMB VM's plans mount both on smbd
# over rxe (each pairing over both providers is tests/soak.sh matrix);
# the SMB2 client that reaches ksmbd on
# smbd the Windows way and the bare SMB Direct connects that check its
# ports (plan-76); then the demo's own plan (scripts/demo.sh), last as it
# installs our modules in updates/. Without kmemleak: its global lock and
# backtrace on every allocation halve the packet rate (a pairing's cycle
# takes a quarter longer under it), and the same code paths run under
# kmemleak in the other VMs (the SMB VM's plans mount cifs on smbd on
# ksmbd on smbd). KASAN and lockdep stay on.
smb_modules=$(ls out/adapters/cifs.ko out/adapters/ksmbd.ko 2>/dev/null | tr '\n' ' ')
smb_extra=$(ls tests/hostile/smbd_hostile.ko tests/smb2c/smbd_smb2c.ko tests/interop/smbd_interop.ko \
	tools/smbdctl/smbdctl tools/smbdctl/smbdctl-nltest 2>/dev/null)
if [ -f smbd.ko ] && [ -f tests/kmod/smbd_test.ko ]; then
	# shellcheck disable=SC2086 # a list of paths
	vm_run vm-bulk "bulk VM run" "${SMBD_BULK_TIMEOUT:-4800}" \
		"smbdtest.bulk=${SMBD_BULK:-16x16M} smbdtest.profiles=${SMBD_PROFILES:-irdma-gen1,cxgb4-nodsgl,qedr,mlx4} smbdtest.pair_providers=smbd.stock:rxe,stock.smbd:siw,smbd.smbd:siw smbdtest.plan_timeout=4700 smbdtest.kmemleak=off" \
		"tests/guest/bulk/plan-60-bulk.sh tests/guest/bulk/plan-65-profiles.sh $(ls tests/guest/smb/plan-7[0126]-*.sh | tr '\n' ' ') tests/guest/demo/plan-demo.sh" \
		"bulk|profiles|smb|windows" \
		smbd.ko tests/kmod/smbd_test.ko $(ls tests/mr/smbd_mr_test.ko 2>/dev/null) $smb_modules $smb_extra
fi

# The SMB VM, under kmemleak, for the paths where leaks hide: cifs on
# smbd against the hostile server (plan-73-hostile-mount.sh), the device
# removed, dying and its cable pulled for 10 s under SMB I/O (plan-74,
# over siw: Debian's two kernels run the same rounds over rxe below,
# with the cable pulled for 15 s), multichannel with a device deleted
# under a write (plan-75, over rxe), and smbdctl with the netlink family
# it reads, each doctor finding provoked (plan-77). tests/soak.sh matrix
# runs plan-74 and plan-75 over both providers with every round.
if [ -f smbd.ko ] && [ -n "$smb_modules" ]; then
	# shellcheck disable=SC2086 # a list of paths
	vm_run vm-smb "SMB VM run" "${SMBD_SMB_TIMEOUT:-3600}" \
		"smbdtest.plan_timeout=1200 smbdtest.removal_providers=siw smbdtest.cable_downs=10 smbdtest.multichannel_providers=rxe" \
		"$(ls tests/guest/smb/plan-*.sh | grep -v 'plan-7[0126]-' | tr '\n' ' ')" \
		"hostile-mount|removal|multichannel|smbdctl" \
		smbd.ko $smb_modules $smb_extra
else
	failed "SMB pairings (no cifs.ko or ksmbd.ko on smbd was built)"
fi

# Debian's own kernels (linux-image packages, tests/vm/stock-kernel.sh),
# 6.12 and 6.1, with their rdma_rxe: smbd.ko, cifs.ko and ksmbd.ko as the
# Debian package's DKMS installed them (above) go to updates/dkms,
# modprobe loads them, and cifs on smbd mounts ksmbd on smbd over rxe.
# Then the removal, dying-device and cable-pull rounds of plan-74 over
# rxe (Debian's kernels have no siw), the cable pulled for 15 s (past
# the SMB timeouts; over rxe a 1 s pull fails the queue pairs as this one
# does, and the test kernel runs that one).
# No KASAN there: the log checker counts WARN, BUG and hung tasks.
for skdir in "${stock_dirs[@]}"; do
	rel=$(cat "$skdir/build/include/config/kernel.release")
	plain=$out/stock-$rel
	updates=""
	mkdir -p "$plain"
	for m in smbd cifs ksmbd; do
		f=$(ls "$deb_mods/$rel/$m".ko* 2>/dev/null | head -n 1)
		[ -n "$f" ] || continue
		updates+=" $f"
		# plain copies for the plan's own module checks
		case $f in
		*.xz) xz -dc "$f" > "$plain/$m.ko" ;;
		*) cp "$f" "$plain/$m.ko" ;;
		esac
	done
	if [ "$(echo $updates | wc -w)" != 3 ]; then
		failed "Debian's stock kernel $rel VM: the package installed no smbd, cifs and ksmbd for it"
		continue
	fi
	series=$(echo "$rel" | cut -d. -f1,2)
	SMBD_VM_UPDATES=$updates SMBD_VM_KERNEL=$skdir \
		vm_run "vm-stock-$rel" "stock-kernel $rel VM run" 1500 \
		"smbdtest.stock=1 smbdtest.plan_timeout=1200 smbdtest.removal_providers=rxe smbdtest.fatal_rounds=1 smbdtest.cable_downs_rxe=15 smbdtest.removal_prefix=stock-$series/removal" \
		"tests/guest/stock/plan-80-stock.sh tests/guest/smb/plan-74-removal.sh" "stock" \
		"$plain/smbd.ko" "$plain/cifs.ko" "$plain/ksmbd.ko"
done

if [ -x tests/mutants.sh ]; then
	t0=$(date +%s)
	bash tests/mutants.sh "$kcache" "$out/mutants" >"$out/mutants-summary.log" 2>&1
	grep -E '^(ok|not ok) ' "$out/mutants-summary.log"
	add_counts "$out/mutants-summary.log" "mutation checks"
	echo "mutation checks took $(took "$t0")"
fi

finish

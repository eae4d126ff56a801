#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Mutation checks: break one protocol rule at a time in a copy of the
# tree and prove the KUnit suites notice. Each mutant is built as its own
# smbd.ko/smbd_kunit.ko pair (two copies of the tree, one per core, each
# built once; a mutant rebuilds what its file touches, and the file is
# put back after); one VM boot loads the pairs in turn and the KUnit case
# named for the mutant must report "not ok".
#
#   tests/mutants.sh KERNEL_CACHE_DIR OUTDIR
#
# Prints "ok <mutant>" / "not ok <mutant>" and ends with
# "N passed, N failed".
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
kcache=$1
outdir=$2
rm -rf "$outdir"
mkdir -p "$outdir/mods"
outdir=$(cd "$outdir" && pwd)

# The mutants: tests/mutants/NN-NAME.patch, each one broken rule (its
# first lines say which, and "Case: NAME" the KUnit case that must fail),
# as a diff that git apply (or patch -p1) takes
mutants=("$top"/tests/mutants/*.patch)

pass=0
fail=0
plan=$outdir/plan-50-mutants.sh
echo '#!/bin/sh' >"$plan"
declare -A want_case

# Two copies of the tree, one per core: each builds every other mutant.
# A mutant of one of smbd's own .c files is built without kbuild: the
# file's compile command as kbuild saved it (.FILE.o.cmd), then the
# links of smbd.o and smbd.ko, in the kernel's build directory as kbuild
# runs them, from the unchanged objects and the mutant's. kbuild's own
# pass over the tree cost 3 s a mutant, the compile one. A mutant that
# calls a kernel symbol smbd.o did not (its version is not in
# smbd.mod.c), or of another file (a header, which the KUnit module
# includes too), is built by make.
# build_half K: the mutants of index I (1-based) with I % 2 == K, in
# copy K; for each, $outdir/res-I: "case CASE" (built) or "not ok ..."
saved_cmd() {
	sed -n "s|^savedcmd_$1 := ||p" "$(dirname "$1")/.$(basename "$1").cmd"
}

build_fast() {
	local src=$1 o=$1/${2%.c}.o c1 c2 c3
	c1=$(saved_cmd "$o")
	c2=$(saved_cmd "$src/smbd.o")
	c3=$(saved_cmd "$src/smbd.ko")
	# a kbuild that saves its commands otherwise: make does it
	[ -n "$c1" ] && [ -n "$c2" ] && [ -n "$c3" ] || return 2
	(cd "$kcache/build" && eval "$c1" && eval "$c2" && eval "$c3") || return 1
	# no symbol the unchanged module does not import
	[ -z "$(nm -u "$src/smbd.o" | awk '{ print $2 }' | sort |
		comm -23 - "$src/base/imports")" ] || return 2
}

build_half() {
	local k=$1 src=$outdir/src$1 i=0 m name tcase file built rc
	mkdir -p "$src"
	(cd "$top" && git ls-files -z | xargs -0 cp --parents -t "$src")
	if ! make -C "$src" KDIR="$kcache/build" W= >"$outdir/build-0-$k.log" 2>&1; then
		echo "not ok mutants: the unchanged tree does not build" >"$outdir/res-0-$k"
		return
	fi
	mkdir -p "$src/base"
	cp -p "$src"/smbd*.o "$src/smbd.ko" "$src/kunit/smbd_kunit.ko" "$src/base/"
	nm -u "$src/smbd.o" | awk '{ print $2 }' | sort >"$src/base/imports"
	for m in "${mutants[@]}"; do
		i=$((i + 1))
		[ $((i % 2)) = "$k" ] || continue
		name=$(basename "$m" .patch)
		name=${name#[0-9][0-9]-}
		tcase=$(sed -n 's/^Case: //p' "$m")
		file=$(sed -n 's|^+++ b/||p' "$m")
		if [ -z "$tcase" ] || ! patch -d "$src" -p1 --fuzz=0 --no-backup-if-mismatch -s \
			<"$m" >"$outdir/apply-$i.log" 2>&1; then
			echo "not ok mutant $name: could not apply it ($(basename "$m"))" >"$outdir/res-$i"
			continue
		fi
		built=1
		rc=3
		case $file in
		smbd_*.c)
			build_fast "$src" "$file" >"$outdir/build-$i.log" 2>&1
			rc=$?
			;;
		esac
		case $rc in
		0) cp "$src/base/smbd_kunit.ko" "$src/kunit/smbd_kunit.ko" ;;
		1) built=0 ;;
		*)
			make -C "$src" KDIR="$kcache/build" W= >>"$outdir/build-$i.log" 2>&1 ||
				built=0
			;;
		esac
		if [ $built = 1 ]; then
			cp "$src/smbd.ko" "$outdir/mods/smbd-m$i.ko"
			cp "$src/kunit/smbd_kunit.ko" "$outdir/mods/smbd_kunit-m$i.ko"
		fi
		# the next mutant starts from the unchanged file and objects
		# (the source newer than them: make rebuilds what it touches)
		patch -d "$src" -p1 -R --fuzz=0 --no-backup-if-mismatch -s <"$m"
		touch "$src/$file"
		cp -p "$src"/base/smbd*.o "$src/"
		if [ $built = 0 ]; then
			echo "not ok mutant $name: does not build" >"$outdir/res-$i"
		else
			echo "case $tcase" >"$outdir/res-$i"
		fi
	done
	rm -rf "$src"
}
build_half 0 &
build_half 1
wait
for k in 0 1; do
	if [ -s "$outdir/res-0-$k" ]; then
		cat "$outdir/res-0-$k"
		echo "0 passed, 1 failed"
		exit 1
	fi
done

i=0
for m in "${mutants[@]}"; do
	i=$((i + 1))
	res=$(cat "$outdir/res-$i" 2>/dev/null)
	case $res in
	"case "*) ;;
	*)
		fail=$((fail + 1))
		echo "${res:-not ok mutant $(basename "$m" .patch): not built}"
		continue
		;;
	esac
	want_case[$i]=${res#case }
	# Only the mutant's case runs (KUnit's filter_glob, which module
	# suites honour): each load takes seconds, not the whole harness.
	cat >>"$plan" <<EOF
echo "SMBD-MUTANT-BEGIN $i"
printf '%s' '*.${want_case[$i]}' > /sys/module/kunit/parameters/filter_glob
insmod /smbd/smbd-m$i.ko && insmod /smbd/smbd_kunit-m$i.ko
rmmod smbd_kunit; rmmod smbd
echo "SMBD-MUTANT-END $i"
EOF
done

if [ ${#want_case[@]} -gt 0 ]; then
	initrd=$outdir/initrd.cpio.gz
	log=$outdir/vm.log
	bash "$top/tests/vm/mkinitramfs.sh" "$kcache" "$initrd" "$outdir"/mods/*.ko "$plan" \
		>"$outdir/initrd.log" 2>&1
	# A load takes seconds in the guest (one case; one that waits for
	# what a mutant took away runs into its 5 s bound, and the loopback's
	# into LB_WAIT_MS): 30 s each, and a margin.
	ptmo=$((${#want_case[@]} * 30 + 120))
	# No kmemleak: the run looks for failing cases, not leaks (the
	# unchanged modules run under it in the main VM).
	SMBD_VM_APPEND="smbdtest.plan_timeout=$ptmo smbdtest.kmemleak=off" \
		bash "$top/tests/vm/vm-run.sh" "$kcache" "$initrd" "$log" \
		$((ptmo + 300)) >"$outdir/vm-run.log" 2>&1
	tr -d '\r' <"$log" >"$log.txt"
	i=0
	for m in "${mutants[@]}"; do
		name=$(basename "$m" .patch)
		name=${name#[0-9][0-9]-}
		i=$((i + 1))
		[ -n "${want_case[$i]:-}" ] || continue
		# The mutant's own section of the log must show its case
		# failing; a section that never ended did not run to the end.
		if ! grep -q "SMBD-MUTANT-END $i\$" "$log.txt"; then
			fail=$((fail + 1))
			echo "not ok mutant $name did not run to its end (the VM or its plan stopped first)"
		elif awk -v b="SMBD-MUTANT-BEGIN $i" -v e="SMBD-MUTANT-END $i" \
			'$0 ~ (b "$") { on = 1 } $0 ~ (e "$") { on = 0 } on' "$log.txt" |
			grep -cE "not ok [0-9]+ ${want_case[$i]}\$" >/dev/null; then
			pass=$((pass + 1))
			echo "ok mutant $name caught by ${want_case[$i]}"
		else
			fail=$((fail + 1))
			echo "not ok mutant $name survived (${want_case[$i]} did not fail)"
		fi
	done
fi

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]

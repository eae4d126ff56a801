#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Where in smbd's code the cost part's samples fell, as source lines:
#   SMBD_BENCH_COST_OFFSETS=1 scripts/bench.sh OUTDIR
#   scripts/bench-lines.sh OUTDIR [PATTERN]
# reads OUTDIR/bench.log's SMBD-BENCH-COST-OFF lines (the instructions of
# smbd.ko and of the adapters' functions that cpu-clock samples landed
# on, first round only), keeps those whose "provider=P pair=PAIR test=T"
# matches PATTERN (an extended regular expression, default: all), and
# prints each instruction's samples with the source line gdb gives it.
# The bench builds without debug information, so the objects are built
# again from the run's copy of the tree (OUTDIR/src) against the same
# kernel, with -g, which changes no instruction (the .text sizes are
# compared); a line inlined into a function shows where it came from.
set -euo pipefail

out=${1:?usage: bench-lines.sh OUTDIR [PATTERN]}
pat=${2:-.}
log=$out/bench.log
[ -r "$log" ] || { echo "bench-lines: no $log" >&2; exit 1; }
command -v gdb >/dev/null || { echo "bench-lines: gdb is needed" >&2; exit 1; }
kc=$(cat "$out/kernel-dir" 2>/dev/null) ||
	{ echo "bench-lines: $out/kernel-dir is missing (a run before this script)" >&2; exit 1; }

g=$out/src-g
if [ ! -e "$g/done" ]; then
	rm -rf "$g"
	mkdir -p "$g"
	tar -C "$out/src" -cf - . | tar -C "$g" -xf -
	make -s -C "$g" clean >/dev/null 2>&1 || true
	make -s -C "$g" -j"$(nproc)" KDIR="$kc/build" KCFLAGS=-g >"$g/build.log" 2>&1 ||
		{ tail -n 20 "$g/build.log"; exit 1; }
	KCFLAGS=-g bash "$g/adapters/build.sh" "$kc/build" "$g/mods" cifs ksmbd \
		>>"$g/build.log" 2>&1 || { tail -n 20 "$g/build.log"; exit 1; }
	# The same instructions as the measured objects, or the lines lie.
	for ko in src/smbd.ko mods/cifs.ko mods/ksmbd.ko; do
		a=$(size -A "$out/$ko" | awk '$1 == ".text" { print $2 }')
		b=$(size -A "$g/${ko#src/}" | awk '$1 == ".text" { print $2 }')
		[ "$a" = "$b" ] ||
			{ echo "bench-lines: $ko built with -g has $b bytes of .text, not $a" >&2; exit 1; }
	done
	touch "$g/done"
fi

ko_of() {
	case $1 in
	smbd_cifs_*) echo "$g/mods/cifs.ko" ;;
	smbd_ksmbd_*) echo "$g/mods/ksmbd.ko" ;;
	*) echo "$g/smbd.ko" ;;
	esac
}

# The guest's console ends its lines with a carriage return.
tr -d '\r' < "$log" | grep '^SMBD-BENCH-COST-OFF: ' | grep -E -- "$pat" |
while read -r _ prov pair test count where; do
	ko=$(ko_of "$where")
	# Quoted: a compiler's clone has dots in its name (f.constprop.0).
	line=$({ gdb -q -batch -ex "info line *('${where%+*}'+${where##*+})" "$ko" \
		2>/dev/null || true; } |
		sed -n 's/^Line \([0-9]*\) of "\([^"]*\)".*/\2:\1/p' | head -n 1)
	printf '%s %s %s %5d  %-40s %s\n' "${prov#provider=}" "${pair#pair=}" \
		"${test#test=}" "$count" "$where" "${line:-?}"
done

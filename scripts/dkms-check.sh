#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# DKMS add, build and install of smbd (dkms.conf) for a kernel whose
# headers are installed, in scratch trees: nothing goes to /usr/src or
# /lib/modules, and only the module signing key that dkms makes once to
# /var/lib/dkms.
#   scripts/dkms-check.sh HEADERS_DIR OUTDIR [MODULES_DIR]
# HEADERS_DIR: /usr/src/linux-headers-<release>. Copies the modules DKMS
# installed (smbd.ko, cifs.ko, ksmbd.ko, from its updates/ tree) to
# OUTDIR. MODULES_DIR (default /lib/modules/<release>, when it has them):
# the kernel's own modules; modprobe must then prefer DKMS's cifs and
# ksmbd, with smbd, to the kernel's. Exit 0 only if all of that holds.
set -euo pipefail

[ $# -ge 2 ] || { echo "usage: $0 HEADERS_DIR OUTDIR [MODULES_DIR]" >&2; exit 2; }
top=$(cd "$(dirname "$0")/.." && pwd)
hdr=$(cd "$1" && pwd)
out=$2
rel=${hdr##*/linux-headers-}
ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' "$top/dkms.conf")
want=$(sed -n 's/^#define SMBD_VERSION[[:space:]]*"\(.*\)"$/\1/p' "$top/include/smbd.h")
[ -n "$ver" ] && [ "$ver" = "$want" ] ||
	{ echo "dkms: dkms.conf says $ver, smbd.h $want" >&2; exit 1; }
command -v dkms >/dev/null || { echo "dkms: not installed (scripts/setup.sh)" >&2; exit 1; }

t=$(mktemp -d "${TMPDIR:-/tmp}/smbd-dkms.XXXXXX")
trap 'rm -rf "$t"' EXIT
mkdir -p "$t/src/smbd-$ver" "$t/dkms" "$t/install/$rel"
(cd "$top" && git ls-files -z | xargs -0 cp --parents -t "$t/src/smbd-$ver")
opts=(--sourcetree "$t/src" --dkmstree "$t/dkms" --installtree "$t/install"
      -k "$rel" --kernelsourcedir "$hdr" --no-depmod)
dkms add -m smbd -v "$ver" "${opts[@]}"
if ! dkms build -m smbd -v "$ver" "${opts[@]}"; then
	tail -n 40 "$t/dkms/smbd/$ver/build/make.log" 2>/dev/null || true
	exit 1
fi
dkms install -m smbd -v "$ver" "${opts[@]}"
dkms status -m smbd -v "$ver" "${opts[@]}" || true
mkdir -p "$out"
for m in smbd cifs ksmbd; do
	f=$(find "$t/install" -path "*/updates/*" -name "$m.ko*" | head -n 1)
	[ -n "$f" ] || { echo "dkms: $m.ko was not installed under updates/" >&2; exit 1; }
	echo "dkms: installed ${f#"$t/install/"}"
	cp "$f" "$out/"
done

# modprobe prefers them: a module tree with the kernel's own cifs and
# ksmbd (when this machine has them) and the DKMS ones in updates/.
mods=${3:-/lib/modules/$rel}
if [ -d "$mods/kernel/fs/smb" ]; then
	b=$t/base/lib/modules/$rel
	mkdir -p "$b/kernel/fs" "$b/updates"
	cp -a "$mods/kernel/fs/smb" "$b/kernel/fs/"
	cp -a "$mods"/modules.builtin* "$b/" 2>/dev/null || true
	cp -a "$t/install/$rel/updates/." "$b/updates/"
	/sbin/depmod -b "$t/base" "$rel"
	for m in cifs ksmbd; do
		dep=$(/sbin/modprobe -d "$t/base" -S "$rel" --show-depends "$m")
		echo "$dep" | sed "s|$t/base||; s/^/dkms: modprobe $m: /"
		echo "$dep" | grep -q "updates/dkms/$m\.ko" &&
			echo "$dep" | grep -q "updates/dkms/smbd\.ko" ||
			{ echo "dkms: modprobe $m does not take the DKMS module and smbd" >&2; exit 1; }
	done
elif [ -n "${3:-}" ]; then
	echo "dkms: $mods has no kernel/fs/smb to compare with" >&2
	exit 1
fi

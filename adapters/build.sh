#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the in-kernel SMB consumers on smbd:
#   adapters/build.sh KDIR OUTDIR [cifs] [ksmbd]
#
# cifs.ko and ksmbd.ko are built from Debian's linux-source-6.12 or
# linux-source-6.1, the kernel's series (fs/smb/client, fs/smb/server),
# unchanged, except that each one's SMB
# Direct object is replaced in its object list by our adapter
# (adapters/<name>/Kbuild): smbd_cifs.o and smbd_cifs_conn.o
# (adapters/cifs-common/, every series') for cifs, smbd_ksmbd.o,
# smbd_ksmbd_ports.o and smbd_ksmbd_io.o (adapters/ksmbd-common/) for
# ksmbd;
# and cifs gets adapters/patches/cifs-multichannel-mount.patch (a kernel built
# without CONFIG_CIFS_DFS_UPCALL, as the test kernel is, would otherwise
# open no extra channel at mount; with it, as Debian's are, the patched
# code is not built) and, in both series, adapters/patches/cifs-demux-sigkill.patch
# (a mount failing at once could leave cifsd stuck, holding cifs), ksmbd
# adapters/patches/ksmbd-rdma-read-signature.patch (6.1: its twin in
# adapters/patches/6.1/; a client that requires signing could not read
# over RDMA) and
# adapters/patches/ksmbd-iface-speed.patch (link speeds of VLANs, bonds, bridges).
# For 6.12, cifs also gets adapters/patches/6.12/cifs-write-mr-unsent.patch (a
# write whose request was not sent kept its RDMA registration, and with
# it the connection); cifs and ksmbd get
# adapters/patches/6.12/{cifs,ksmbd}-rdma-transform-{signing,encryption}.patch
# (the SMB 3.1.1 RDMA transforms: signed and encrypted READs and WRITEs
# keep RDMA, for any client that offers them, as Windows 11 does). In both series cifs gets
# adapters/patches/both/cifs-reconnect-lstrp.patch (a reconnect that took
# over three echo intervals was torn down at once as unresponsive; the
# fixes in both/ are the adapters' alone, the test kernel's own cifs does
# not carry them), and <series>/cifs-seal-rdma-iosize.patch (sealed I/O
# sized for RDMA, not for the messages it travels in: writes of 1 MiB
# and more failed over soft-RoCE). For 6.1: ksmbd gets adapters/patches/ksmbd-iface-speed.patch and
# adapters/patches/6.1/ksmbd-share-config-old-tools.patch (with Debian 12's
# ksmbd-tools, 6.1's ksmbd refused every share) and
# adapters/patches/6.1/ksmbd-opinfo-put-null.patch (an open without an oplock
# oopsed it); the others do not apply.
# The kernel source is extracted at build time into a cache outside the
# tree ($SMBD_CACHE, default ~/.cache/smbd), keyed by the package version;
# it is never part of the repository. KDIR is a kernel build tree of the
# same upstream version: the test kernel's, or Debian's linux-headers.
# smbd.ko must be built against KDIR first (its Module.symvers at the top
# of the tree). The modules end up in OUTDIR/cifs.ko and OUTDIR/ksmbd.ko.
# The adapters must compile without a warning (W=1, sparse); cifs's and ksmbd's
# own files are built as the kernel builds them.
set -euo pipefail

[ $# -ge 2 ] || { echo "usage: $0 KDIR OUTDIR [cifs] [ksmbd]" >&2; exit 2; }
top=$(cd "$(dirname "$0")/.." && pwd)
kdir=$(cd "$1" && pwd)
mkdir -p "$2"
out=$(cd "$2" && pwd)
shift 2
parts=${*:-cifs ksmbd}

cache=${SMBD_CACHE:-$HOME/.cache/smbd}
[ -f "$top/Module.symvers" ] || { echo "build smbd.ko first (make KDIR=$kdir)" >&2; exit 1; }

# The kernel series picks the source package and the adapters: 6.12's in
# adapters/<name>/, 6.1's in adapters/<name>-6.1/ (cifs and ksmbd changed
# their SMB Direct interfaces between the two).
kver=$(cat "$kdir/include/config/kernel.release")
case $kver in
6.12.*) series=6.12 suffix= ;;
6.1.*) series=6.1 suffix=-6.1 ;;
*) echo "adapters: $kdir is $kver; supported: 6.1 and 6.12" >&2; exit 1 ;;
esac
pkg=linux-source-$series
tarball=$(ls /usr/src/$pkg.tar.* 2>/dev/null | head -n 1)
[ -n "$tarball" ] || { echo "$pkg is not installed (run scripts/setup.sh)" >&2; exit 1; }

ver=$(dpkg-query -W -f='${Version}' $pkg)
mkdir -p "$cache"
cache=$(cd "$cache" && pwd)
src=$cache/smb-src-$ver-3
exec 9>"$cache/.lock-smb-src"
flock 9
if [ ! -f "$src/.done" ]; then
	echo "adapters: extracting fs/smb from $tarball" >&2
	rm -rf "$src" "$src.tmp"
	mkdir -p "$src.tmp"
	# fs/internal.h: 6.1's ksmbd includes it
	tar -xf "$tarball" -C "$src.tmp" --wildcards $pkg/fs/smb \
		$pkg/fs/nls $pkg/Makefile $pkg/scripts/asn1_compiler.c \
		$pkg/include/linux/asn1.h \
		$pkg/include/linux/asn1_ber_bytecode.h $pkg/fs/internal.h
	mv "$src.tmp/$pkg" "$src"
	rmdir "$src.tmp"
	touch "$src/.done"
fi
flock -u 9

# The source and the kernel must be the same upstream release.
srcver=$(awk '/^VERSION =/ {v=$3} /^PATCHLEVEL =/ {p=$3} /^SUBLEVEL =/ {s=$3} END {print v "." p "." s}' "$src/Makefile")
case $kver in
"$srcver" | "$srcver"[!0-9]*) ;;
*) echo "adapters: $kdir is $kver, the source is $srcver" >&2; exit 1 ;;
esac

# Debian's linux-headers have no scripts/asn1_compiler, which cifs and
# ksmbd need for their SPNEGO parsers: build one from the source, and
# generate their parsers before kbuild looks for the tool.
asn1c=$kdir/scripts/asn1_compiler
if [ ! -x "$asn1c" ]; then
	asn1c=$src/asn1_compiler
	[ -x "$asn1c" ] || gcc -O2 -I"$src/include" -o "$asn1c" "$src/scripts/asn1_compiler.c"
fi

# build NAME DIR MODULE ADAPTER [PATCH...]: PATCH, from adapters/patches/, is a fix
# to the stock code of NAME outside its SMB Direct object (each explained
# in its file)
build() {
	local name=$1 dir=$2 mod=$3 adapter=$4 b log rc=0 p total watcher ours objs
	shift 4
	b=$out/$name-build
	rm -rf "$b"
	mkdir -p "$b/fs/smb"
	cp -a "$src/fs/smb/$dir" "$src/fs/smb/common" "$b/fs/smb/"
	cp -a "$src/fs/nls" "$b/fs/"	# nls_ucs2_utils.h
	[ ! -f "$src/fs/internal.h" ] || cp "$src/fs/internal.h" "$b/fs/"
	for p in "$@"; do
		patch -d "$b" -p1 --forward --no-backup-if-mismatch -s < "$top/adapters/patches/$p" ||
			{ echo "adapters: $p did not apply" >&2; return 1; }
	done
	# the series' adapter, and what every series shares (adapters/<name>-common/)
	ours=$adapter
	ln -s "$top/adapters/$name$suffix/$adapter" "$b/fs/smb/$dir/$adapter"
	for p in "$top/adapters/$name-common"/*; do
		[ -e "$p" ] || continue
		ln -s "$p" "$b/fs/smb/$dir/${p##*/}"
		case $p in *.c) ours+=" ${p##*/}" ;; esac
	done
	cp "$top/adapters/$name$suffix/Kbuild" "$b/fs/smb/$dir/Kbuild"
	for a in "$b/fs/smb/$dir"/*.asn1; do
		"$asn1c" "$a" "${a%.asn1}.asn1.c" "${a%.asn1}.asn1.h"
	done
	log=$out/$name-build.log
	# A line every 30 s on stderr: objects built of how many (one per C file).
	total=$(find "$b/fs/smb/$dir" -name "*.c" | wc -l)
	SECONDS=0
	while sleep 30; do
		echo "adapters: $mod: $(find "$b/fs/smb/$dir" -name "*.o" | wc -l) of $total objects built, $SECONDS s" >&2
	done &
	watcher=$!
	make -C "$kdir" M="$b/fs/smb/$dir" SMBD_TOP="$top" \
		KBUILD_EXTRA_SYMBOLS="$top/Module.symvers" \
		-j"$(nproc)" modules >"$log" 2>&1 || rc=$?
	kill $watcher 2>/dev/null || true
	# W=1 and sparse for our files alone: rebuild them with both, in
	# one pass of kbuild (a pass per file cost its start-up each time).
	objs=""
	for p in $ours; do
		rm -f "$b/fs/smb/$dir/${p%.c}.o"
		objs+=" ${p%.c}.o"
	done
	# shellcheck disable=SC2086 # a list of targets
	[ $rc != 0 ] || make -C "$kdir" M="$b/fs/smb/$dir" SMBD_TOP="$top" W=1 \
		$(command -v sparse >/dev/null && echo C=1) \
		KBUILD_EXTRA_SYMBOLS="$top/Module.symvers" \
		-j"$(nproc)" $objs >>"$log" 2>&1 || rc=$?
	if [ $rc != 0 ] || grep -E "(${ours// /|}):[0-9]+:[0-9]+: (warning|error)" "$log" >/dev/null; then
		grep -E -A3 'warning|error' "$log" | head -n 60 >&2
		echo "adapters: building $mod failed (log: $log)" >&2
		return 1
	fi
	cp "$b/fs/smb/$dir/$mod" "$out/$mod"
	echo "adapters: $out/$mod ($kver)" >&2
}

for p in $parts; do
	case $series/$p in
	6.12/cifs) build cifs client cifs.ko smbd_cifs.c cifs-multichannel-mount.patch \
		cifs-demux-sigkill.patch 6.12/cifs-write-mr-unsent.patch \
		both/cifs-reconnect-lstrp.patch 6.12/cifs-seal-rdma-iosize.patch \
		6.12/cifs-rdma-transform-signing.patch \
		6.12/cifs-rdma-transform-encryption.patch ;;
	6.12/ksmbd) build ksmbd server ksmbd.ko smbd_ksmbd.c ksmbd-rdma-read-signature.patch ksmbd-iface-speed.patch \
		6.12/ksmbd-rdma-transform-signing.patch \
		6.12/ksmbd-rdma-transform-encryption.patch ;;
	6.1/cifs) build cifs client cifs.ko smbd_cifs.c cifs-demux-sigkill.patch \
		both/cifs-reconnect-lstrp.patch 6.1/cifs-seal-rdma-iosize.patch \
		6.1/cifs-rdma-transform-signing.patch \
		6.1/cifs-rdma-transform-encryption.patch ;;
	6.1/ksmbd) build ksmbd server ksmbd.ko smbd_ksmbd.c \
		6.1/ksmbd-rdma-read-signature.patch ksmbd-iface-speed.patch \
		6.1/ksmbd-share-config-old-tools.patch 6.1/ksmbd-opinfo-put-null.patch \
		6.1/ksmbd-rdma-transform-signing.patch \
		6.1/ksmbd-rdma-transform-encryption.patch ;;
	*) echo "adapters: unknown part $p" >&2; exit 2 ;;
	esac
done

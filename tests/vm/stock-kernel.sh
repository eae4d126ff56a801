#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Debian's stock kernel for the VM: the linux-image package matching the
# newest installed linux-headers of the series (6.12 by default, or 6.1:
#   tests/vm/stock-kernel.sh [6.12|6.1]
# linux-headers-6.12.*-amd64 or linux-headers-6.1.0-*-amd64), downloaded from Debian's
# archive (apt-get download) and unpacked into a cache outside the tree,
# laid out the way tests/vm/mkinitramfs.sh and tests/vm/vm-run.sh expect a
# kernel cache directory:
#   $SMBD_CACHE/stock-<release>/build/arch/x86/boot/bzImage
#   $SMBD_CACHE/stock-<release>/build/include/config/kernel.release
#   $SMBD_CACHE/stock-<release>/modroot/lib/modules/<release>/
# Only the modules a test VM can need are kept (fs, net, crypto, lib,
# arch, drivers/infiniband, the dummy netdev). Prints the directory.
set -euo pipefail

cache=${SMBD_CACHE:-$HOME/.cache/smbd}
series=${1:-6.12}
case $series in
6.12) pat='6\.12\.[0-9]+\+deb[0-9]+-amd64' ;;
6.1) pat='6\.1\.0-[0-9]+-amd64' ;;
*) echo "stock-kernel: series $series: 6.12 or 6.1" >&2; exit 2 ;;
esac
hdr=$(find /usr/src -maxdepth 1 -name 'linux-headers-*' | grep -E "/linux-headers-$pat\$" |
	sort -V | tail -n 1)
[ -n "$hdr" ] || { echo "stock-kernel: no linux-headers of $series for amd64 (run scripts/setup.sh)" >&2; exit 1; }
rel=${hdr#/usr/src/linux-headers-}
out=$cache/stock-$rel
mkdir -p "$cache"
exec 9>"$cache/.lock-stock"
flock 9
if [ -f "$out/.done" ]; then
	echo "$out"
	exit 0
fi

rm -rf "$out" "$out.tmp"
mkdir -p "$out.tmp/deb"
echo "stock-kernel: downloading linux-image-$rel-unsigned" >&2
(cd "$out.tmp" && apt-get download "linux-image-$rel-unsigned" >&2) ||
	(cd "$out.tmp" && apt-get download "linux-image-$rel" >&2)
dpkg-deb -x "$out.tmp"/linux-image-*.deb "$out.tmp/deb"
mods=$out.tmp/deb/lib/modules/$rel
[ -d "$mods" ] || { echo "stock-kernel: no modules for $rel in the package" >&2; exit 1; }

mkdir -p "$out.tmp/build/arch/x86/boot" "$out.tmp/build/include/config" \
	"$out.tmp/modroot/lib/modules/$rel/kernel/drivers/net"
cp "$out.tmp/deb/boot/vmlinuz-$rel" "$out.tmp/build/arch/x86/boot/bzImage"
cp "$out.tmp/deb/boot/config-$rel" "$out.tmp/build/.config"
echo "$rel" > "$out.tmp/build/include/config/kernel.release"
dst=$out.tmp/modroot/lib/modules/$rel
cp -a "$mods"/modules.builtin* "$mods"/modules.order "$dst/"
for d in fs net crypto lib arch drivers/infiniband; do
	mkdir -p "$dst/kernel/$(dirname $d)"
	cp -a "$mods/kernel/$d" "$dst/kernel/$d"
done
cp -a "$mods"/kernel/drivers/net/dummy.ko* "$dst/kernel/drivers/net/"
depmod -b "$out.tmp/modroot" "$rel"
rm -rf "$out.tmp/deb" "$out.tmp"/*.deb
mv "$out.tmp" "$out"
touch "$out/.done"
echo "$out"

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the Debian package smbd-dkms_<version>_<arch>.deb:
#   scripts/mkdeb.sh [OUTDIR]          (default: out/deb)
# It carries smbd's source to /usr/src/smbd-<version> (what dkms.conf
# builds: smbd.ko, and cifs.ko and ksmbd.ko on smbd from the kernel
# series' linux-source), and maintainer scripts that build and install
# them with DKMS for every installed kernel of the series smbd supports
# (6.1 and 6.12) whose headers, and linux-source of the same release, are
# installed, and remove them with the package. Kernels installed later get them from dkms's own kernel hooks
# (dkms.conf: AUTOINSTALL). It also carries smbdctl(8), compiled here
# (so the package is of this machine's architecture, not "all"), and its
# man page. Prints the path of the package.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
out=$(mkdir -p "${1:-$top/out/deb}" && cd "${1:-$top/out/deb}" && pwd)
ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' "$top/dkms.conf")
want=$(sed -n 's/^#define SMBD_VERSION[[:space:]]*"\(.*\)"$/\1/p' "$top/include/smbd.h")
if [ -z "$ver" ] || [ "$ver" != "$want" ]; then
	echo "mkdeb: dkms.conf says $ver, smbd.h $want" >&2
	exit 1
fi
# A native package's changelog (scripts/debian/changelog): its newest
# entry is this version, and names the maintainer.
logver=$(sed -n '1s/^smbd (\(.*\)) .*/\1/p' "$top/scripts/debian/changelog")
if [ "$logver" != "$ver" ]; then
	echo "mkdeb: scripts/debian/changelog's newest entry is $logver, not $ver" >&2
	exit 1
fi
maint=$(sed -n 's/^ -- \(.*>\)  .*/\1/p' "$top/scripts/debian/changelog" | head -n 1)

r=$(mktemp -d "${TMPDIR:-/tmp}/smbd-deb.XXXXXX")
trap 'rm -rf "$r"' EXIT
src=$r/usr/src/smbd-$ver
doc=$r/usr/share/doc/smbd-dkms
mkdir -p "$src" "$doc" "$r/DEBIAN"
# The module's source only: not the tests, scripts or documents.
(cd "$top" && git ls-files -z -- Kbuild Makefile dkms.conf '*.c' '*.h' \
	adapters ':!tests' ':!scripts' ':!tools' |
	xargs -0 cp --parents -t "$src")
cp "$top/README" "$top/Documentation/admin-guide.rst" "$doc/"
# smbdctl(8), built (in a copy) with Debian's hardening flags, and its
# man page.
arch=$(dpkg --print-architecture)
b=$(mktemp -d "${TMPDIR:-/tmp}/smbd-ctl.XXXXXX")
trap 'rm -rf "$r" "$b"' EXIT
mkdir -p "$b/tools" "$b/include/uapi" "$r/usr/sbin" "$r/usr/share/man/man8"
cp -r "$top/tools/smbdctl" "$b/tools/"
cp "$top/include/smbd.h" "$b/include/"
cp "$top/include/uapi/smbd_netlink.h" "$b/include/uapi/"
make -s -C "$b/tools/smbdctl" clean >/dev/null
export DEB_BUILD_MAINT_OPTIONS=hardening=+all
make -s -C "$b/tools/smbdctl" \
	CFLAGS="$(dpkg-buildflags --get CFLAGS)" \
	CPPFLAGS="$(dpkg-buildflags --get CPPFLAGS)" \
	LDFLAGS="$(dpkg-buildflags --get LDFLAGS)" >&2
install -m 0755 "$b/tools/smbdctl/smbdctl" "$r/usr/sbin/smbdctl"
strip --remove-section=.comment --remove-section=.note --strip-unneeded \
	"$r/usr/sbin/smbdctl"
gzip -9n < "$top/tools/smbdctl/smbdctl.8" > "$r/usr/share/man/man8/smbdctl.8.gz"
gzip -9n < "$top/scripts/debian/changelog" > "$doc/changelog.gz"
# cifs.ko and ksmbd.ko keep the kernel's own MODULE_VERSION, which DKMS's
# version check would take as "the kernel has this module already" and
# refuse to install them: skip that check for smbd, at this install and
# at every kernel's autoinstall.
mkdir -p "$r/usr/share/dkms/modules_to_force_install"
echo smbd_version-override > "$r/usr/share/dkms/modules_to_force_install/smbd"
cat > "$doc/copyright" <<EOF
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: smbd

Files: *
Copyright: 2026 The smbd maintainers
License: GPL-2.0

Files: usr/src/smbd-*/adapters/patches/*
Copyright: 2026 The smbd maintainers (the changes); the Linux kernel's cifs
 and ksmbd authors (the context lines of the kernel files they change)
License: GPL-2.0

License: GPL-2.0
 On Debian systems, the full text of the GNU General Public License
 version 2 can be found in /usr/share/common-licenses/GPL-2.
EOF

size=$(du -sk "$r/usr" | cut -f1)
cat > "$r/DEBIAN/control" <<EOF
Package: smbd-dkms
Version: $ver
Architecture: $arch
Section: kernel
Priority: optional
Maintainer: $maint
Installed-Size: $size
Depends: dkms (>= 3.0), patch, xz-utils, build-essential, libc6 (>= 2.34)
Recommends: linux-headers-amd64, linux-source-6.1, linux-source-6.12
Description: SMB Direct (SMB2 over RDMA) for the kernel's SMB client and server (DKMS)
 smbd.ko implements SMB Direct ([MS-SMBD]) on the kernel's RDMA stack, for
 RoCE, InfiniBand and iWARP devices, and gives cifs (the SMB client) and
 ksmbd (the SMB server) their RDMA transport: mount -t cifs -o rdma, and
 ksmbd serving over RDMA, with Debian's own kernels, which are built
 without SMB Direct.
 .
 DKMS builds smbd.ko, and cifs.ko and ksmbd.ko from the kernel series'
 linux-source (6.1 or 6.12) with their SMB Direct object replaced by
 smbd's, for every installed kernel of these series whose headers, and
 linux-source of the same release, are installed. They go to
 updates/dkms, which modprobe prefers over the kernel's own cifs and
 ksmbd.
 .
 smbdctl(8) shows the devices, listeners and connections with their
 counters, and its doctor says why SMB Direct is or is not used.
EOF

cat > "$r/DEBIAN/postinst" <<EOF
#!/bin/sh
# smbd-dkms: build and install smbd, cifs and ksmbd with DKMS for every
# installed kernel of a series smbd supports (6.1, 6.12) with headers and
# that series' linux-source of the kernel's release.
set -e
v=$ver
[ "\$1" = configure ] || exit 0
if [ -e /var/lib/dkms/smbd/\$v ]; then
	dkms remove -m smbd -v \$v --all >/dev/null || true
fi
dkms add -m smbd -v \$v >/dev/null
rc=0
for d in /lib/modules/*; do
	k=\${d##*/}
	case \$k in
	6.1.*|6.12.*) ;;
	*) continue ;;
	esac
	if [ ! -f "\$d/build/Makefile" ]; then
		echo "smbd-dkms: \$k: no headers (apt install linux-headers-\$k), skipped"
		continue
	fi
	# cifs and ksmbd are built from linux-source of the kernel's
	# release: Debian may ship a newer source than an installed kernel
	# (its headers' metapackage lagging). Such a kernel is skipped, as
	# one without headers is, before anything is built for it.
	series=\$(echo "\$k" | cut -d. -f1,2)
	src=""
	if ls /usr/src/linux-source-\$series.tar.* >/dev/null 2>&1; then
		src=\$(dpkg-query -W -f='\${Version}' linux-source-\$series 2>/dev/null || true)
		src=\${src%%-*}
	fi
	if [ -z "\$src" ]; then
		echo "smbd-dkms: \$k: no linux-source-\$series (apt install linux-source-\$series), skipped"
		continue
	fi
	rel=\$(cat "\$d/build/include/config/kernel.release" 2>/dev/null || true)
	case \$rel in
	"\$src"|"\$src"[!0-9]*) ;;
	*)
		echo "smbd-dkms: \$k: the installed linux-source-\$series is \$src, the kernel \${rel:-of no known release}; skipped until the two match"
		continue
		;;
	esac
	echo "smbd-dkms: building smbd, cifs and ksmbd for \$k"
	if dkms install -m smbd -v \$v -k "\$k"; then
		continue
	fi
	# the same mismatch, seen by adapters/build.sh (a source
	# replaced between the check above and the build)
	if grep -q 'the source is' /var/lib/dkms/smbd/\$v/build/make.log 2>/dev/null; then
		echo "smbd-dkms: \$k: the installed linux-source is of another release (\$(grep -o 'the source is [0-9.]*' /var/lib/dkms/smbd/\$v/build/make.log | tail -n 1)); skipped until the two match"
		continue
	fi
	echo "smbd-dkms: \$k: build failed (/var/lib/dkms/smbd/\$v/build/make.log)" >&2
	rc=1
done
exit \$rc
EOF

cat > "$r/DEBIAN/prerm" <<EOF
#!/bin/sh
# smbd-dkms: the modules go with the package, from every kernel.
set -e
v=$ver
case "\$1" in
remove|upgrade|deconfigure)
	if [ -e /var/lib/dkms/smbd/\$v ]; then
		dkms remove -m smbd -v \$v --all
	fi
	;;
esac
exit 0
EOF
chmod 0755 "$r/DEBIAN/postinst" "$r/DEBIAN/prerm"
(cd "$r" && find usr -type f -print0 | sort -z | xargs -0 md5sum) > "$r/DEBIAN/md5sums"

export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git -C "$top" log -1 --format=%ct 2>/dev/null || date +%s)}
deb=$out/smbd-dkms_${ver}_${arch}.deb
dpkg-deb --root-owner-group -Zxz --build "$r" "$deb" >/dev/null
echo "$deb"

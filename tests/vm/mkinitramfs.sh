#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the smbd test initramfs.
#   mkinitramfs.sh KERNEL_CACHE_DIR OUT.cpio.gz [EXTRA_FILE...]
# KERNEL_CACHE_DIR is what tests/vm/build-kernel.sh printed. The image holds
# busybox-static (applets as symlinks), iproute2's ip and rdma, kmod, the
# rdma-core tools (rping, ibv_devinfo, perftest's ib_*_bw when installed)
# with libibverbs/librdmacm and the verbs provider plugins, the tools
# named in $SMBD_INITRAMFS_TOOLS (the benchmark's fio and perf), ksmbd-tools
# and mount.cifs (the stock SMB peers' user space), the kernel's modules,
# tests/guest/init.sh as /init, and tests/guest/lib-*.sh and each
# EXTRA_FILE in /smbd/.
set -euo pipefail

[ $# -ge 2 ] || { echo "usage: $0 KERNEL_CACHE_DIR OUT.cpio.gz [EXTRA_FILE...]" >&2; exit 2; }
kdir=$(cd "$1" && pwd)
out=$2
shift 2
top=$(cd "$(dirname "$0")/../.." && pwd)

kver=$(cat "$kdir/build/include/config/kernel.release")
modsrc=$kdir/modroot/lib/modules/$kver
[ -d "$modsrc" ] || { echo "mkinitramfs: no modules in $modsrc" >&2; exit 1; }

root=$(mktemp -d "${TMPDIR:-/tmp}/smbd-initramfs.XXXXXX")
trap 'rm -rf "$root"' EXIT

# Debian 12 layout: /bin, /sbin, /lib, /lib64 point into /usr, so every
# host path (ldd's /lib/..., the ELF interpreter /lib64/...) resolves.
mkdir -p "$root"/usr/{bin,sbin,lib,lib64} "$root"/{dev,proc,sys,tmp,run,etc,root,smbd}
for d in bin sbin lib lib64; do ln -s "usr/$d" "$root/$d"; done
# mktemp -d made the future / mode 0700: open it to other users (ksmbd
# resolves share paths as the SMB user).
chmod 0755 "$root"
chmod 1777 "$root/tmp"

# Copy a host file to the same path in the image (symlinks dereferenced).
put() {
	local src=$1 dst=${2:-$1}
	[ -e "$root$dst" ] && return 0
	mkdir -p "$(dirname "$root$dst")"
	cp -L "$src" "$root$dst"
}

# Copy an ELF file and every shared library it needs, plus the loader.
put_elf() {
	local f=$1 lib
	put "$f" "${2:-$f}"
	# ldd prints "name => /path (addr)" or "/path (addr)"; "not found" fails.
	if ldd "$f" 2>/dev/null | grep -c 'not found' >/dev/null; then
		echo "mkinitramfs: $f: missing libraries" >&2
		ldd "$f" >&2
		exit 1
	fi
	for lib in $(ldd "$f" 2>/dev/null | awk '/=> \// {print $3} /^[[:space:]]*\// {print $1}'); do
		put "$lib"
	done
}

# Real binaries first, so busybox's applet links never shadow them.
put_elf /usr/sbin/ip
if [ -x /usr/bin/rdma ]; then rdma=/usr/bin/rdma; else rdma=/sbin/rdma; fi
put_elf "$rdma" /usr/bin/rdma
put_elf /usr/bin/kmod
for t in modprobe insmod rmmod lsmod modinfo depmod; do
	ln -sf ../bin/kmod "$root/usr/sbin/$t"
done
for t in rping ibv_devinfo ibv_devices ibv_rc_pingpong udaddy ucmatose \
	ib_write_bw ib_read_bw ib_send_bw ib_write_lat ib_read_lat ib_send_lat; do
	p=$(command -v "$t" 2>/dev/null) || continue
	put_elf "$p" "/usr/bin/$t"
done
for t in rping ibv_devinfo; do
	[ -e "$root/usr/bin/$t" ] || { echo "mkinitramfs: $t not installed (run scripts/setup.sh)" >&2; exit 1; }
done
# jq: the plans read smbdctl's JSON with it (tests/guest/smb/plan-77).
[ -x /usr/bin/jq ] || { echo "mkinitramfs: jq not installed (run scripts/setup.sh)" >&2; exit 1; }
put_elf /usr/bin/jq

# The benchmark's tools (scripts/bench.sh): SMBD_INITRAMFS_TOOLS="fio perf",
# each required.
for t in ${SMBD_INITRAMFS_TOOLS:-}; do
	p=$(command -v "$t" 2>/dev/null) ||
		{ echo "mkinitramfs: $t not installed (scripts/bench.sh installs it)" >&2; exit 1; }
	put_elf "$p" "/usr/bin/$t"
done

# glibc dlopen()s libgcc_s for pthread_exit/cancel (rping's threads).
put_elf "$(ldconfig -p | awk '/libgcc_s.so.1 .*x86-64/ {print $NF; exit}')"

# Verbs provider plugins (dlopen()ed by libibverbs) and their .driver files.
multi=/usr/lib/x86_64-linux-gnu
for f in "$multi"/libibverbs/*.so; do put_elf "$f"; done
for f in /etc/libibverbs.d/*.driver; do put "$f"; done
for p in rxe siw; do
	ls "$root$multi"/libibverbs/lib$p-rdmav*.so >/dev/null 2>&1 ||
		{ echo "mkinitramfs: no $p verbs provider (install ibverbs-providers)" >&2; exit 1; }
done
# The stock SMB peers' user space (tests/guest/lib-smb.sh): ksmbd-tools'
# multicall binary, which acts on the name it is called by (so the
# ksmbd.* names stay symlinks to it), and cifs-utils' mount.cifs. glib's
# g_convert() (password hashing: UTF-8 to UTF-16LE) loads glibc's gconv
# modules at run time.
ksmbd_tools=/usr/libexec/ksmbd.tools
[ -x $ksmbd_tools ] || { echo "mkinitramfs: no $ksmbd_tools (install ksmbd-tools)" >&2; exit 1; }
[ -x /usr/sbin/mount.cifs ] || { echo "mkinitramfs: no mount.cifs (install cifs-utils)" >&2; exit 1; }
put_elf $ksmbd_tools
for t in ksmbd.mountd ksmbd.control ksmbd.adduser ksmbd.addshare; do
	ln -sf ../libexec/ksmbd.tools "$root/usr/sbin/$t"
done
put_elf /usr/sbin/mount.cifs
ln -sf mount.cifs "$root/usr/sbin/mount.smb3"
gconv=$multi/gconv
for f in gconv-modules gconv-modules.cache UTF-16.so UTF-32.so; do
	if [ -e "$gconv/$f" ]; then put "$gconv/$f"; fi
done
if [ -d "$gconv/gconv-modules.d" ]; then
	for f in "$gconv"/gconv-modules.d/*.conf; do put "$f"; done
fi

# A loader cache so that plugins find their libraries in any directory.
printf '%s\n' /usr/lib/x86_64-linux-gnu "$multi/libibverbs" > "$root/etc/ld.so.conf"
ldconfig -r "$root" 2>/dev/null || true

# busybox-static and its applets, only where nothing real is installed.
cp /bin/busybox "$root/usr/bin/busybox"
for a in $("$root/usr/bin/busybox" --list-full); do
	a=${a#/}
	case "$a" in bin/* | sbin/* | usr/bin/* | usr/sbin/*) ;; *) continue ;; esac
	[ -e "$root/$a" ] || [ -L "$root/$a" ] && continue
	[ "$a" = bin/busybox ] && continue
	ln -s /usr/bin/busybox "$root/$a"
done

# Minimal /etc. ksmbd.mountd needs its guest account (nobody) and maps the
# SMB test user (smbtest, see lib-smb.sh) to a local one; mount.cifs wants
# /etc/mtab, which is the kernel's mount table here.
cat > "$root/etc/passwd" <<'EOF'
root:x:0:0:root:/root:/bin/sh
smbtest:x:1000:1000:smbd test user:/tmp:/bin/sh
nobody:x:65534:65534:nobody:/nonexistent:/bin/false
EOF
cat > "$root/etc/group" <<'EOF'
root:x:0:
smbtest:x:1000:
nogroup:x:65534:
EOF
ln -s /proc/self/mounts "$root/etc/mtab"
mkdir -p "$root/etc/ksmbd" "$root/var/lib" "$root/var/tmp" "$root/mnt"
ln -s /run "$root/var/run"
echo smbdtest > "$root/etc/hostname"
printf '127.0.0.1 localhost\n::1 localhost\n' > "$root/etc/hosts"

# Kernel modules, without the links back into the host's build tree.
mkdir -p "$root/lib/modules"
cp -a "$modsrc" "$root/lib/modules/"
rm -f "$root/lib/modules/$kver/build" "$root/lib/modules/$kver/source"
# $SMBD_VM_UPDATES: modules installed as DKMS installs them, in updates/
# (which modprobe prefers to the kernel's own).
if [ -n "${SMBD_VM_UPDATES:-}" ]; then
	mkdir -p "$root/lib/modules/$kver/updates/dkms"
	for f in $SMBD_VM_UPDATES; do
		cp "$f" "$root/lib/modules/$kver/updates/dkms/"
	done
	depmod -b "$root" "$kver"
elif [ ! -s "$root/lib/modules/$kver/modules.dep" ]; then
	depmod -b "$root" "$kver"
fi

# The test payload and /init. The plans' shell libraries
# (tests/guest/lib-*.sh, sourced as /smbd/lib-*.sh) are always there; an
# EXTRA_FILE of the same name replaces one.
for f in "$top"/tests/guest/lib-*.sh; do
	if [ -f "$f" ]; then cp "$f" "$root/smbd/"; fi
done
for f in "$@"; do
	[ -f "$f" ] || { echo "mkinitramfs: $f: no such file" >&2; exit 1; }
	cp "$f" "$root/smbd/"
done
chmod a+x "$root"/smbd/*.sh 2>/dev/null || true
install -m 0755 "$top/tests/guest/init.sh" "$root/init"
# Console for /init's stdio before devtmpfs is mounted.
mknod -m 600 "$root/dev/console" c 5 1 2>/dev/null || true
mknod -m 666 "$root/dev/null" c 1 3 2>/dev/null || true

mkdir -p "$(dirname "$out")"
(cd "$root" && find . -print0 | LC_ALL=C sort -z |
	cpio --null -o -H newc --quiet -R 0:0) | gzip -1 > "$out.tmp"
mv "$out.tmp" "$out"

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The Debian package (scripts/mkdeb.sh), installed and removed with dpkg
# as an admin would, in a scratch root: an overlay over / in a private
# mount namespace, thrown away at the end, so the host is left as it was.
#   scripts/deb-check.sh DEB OUTDIR STOCK_KERNEL_DIR...
# STOCK_KERNEL_DIR: Debian kernels as tests/vm/stock-kernel.sh lays them
# out; each one's modules are put under the scratch root's
# /lib/modules/<release> (over the host's, which hold the headers' build
# link). Checks, one "ok - " or "not ok - " line each, then
# "N passed, N failed":
#  - dpkg -i installs it, and its postinst builds smbd, cifs and ksmbd
#    with DKMS for every kernel given; smbdctl and its man page are there;
#  - a kernel whose headers are of another release than linux-source
#    (6.12.0-smbdfake, headers made up here) is skipped, nothing built;
#  - for each kernel: the three modules are in updates/dkms, and
#    modprobe takes DKMS's cifs and ksmbd, with smbd, over the kernel's;
#  - dpkg --purge removes them all, and DKMS's and the package's files
#    (smbdctl too);
#  - the host has no trace of it.
# The installed modules are copied to OUTDIR/<release>/.
set -uo pipefail

[ $# -ge 3 ] || { echo "usage: $0 DEB OUTDIR STOCK_KERNEL_DIR..." >&2; exit 2; }
deb=$(realpath "$1")
mkdir -p "$2"
out=$(cd "$2" && pwd)
shift 2
pkgver=$(dpkg-deb -f "$deb" Version)
pass=0
fail=0
# tally STATUS NAME: "ok - NAME" or "not ok - NAME" by STATUS, counted
tally() {
	if [ "$1" = 0 ]; then
		pass=$((pass + 1))
		echo "ok - $2"
	else
		fail=$((fail + 1))
		echo "not ok - $2"
	fi
}

t=$(mktemp -d "${TMPDIR:-/tmp}/smbd-debroot.XXXXXX")
trap 'rm -rf "$t"' EXIT
mkdir -p "$t/u/deb-out" "$t/w" "$t/m"
cp "$deb" "$t/u/smbd-dkms.deb"
rels=()
mounts=""
lm=$(realpath /lib/modules)	# /usr/lib/modules with a merged /usr
for s in "$@"; do
	rel=$(cat "$s/build/include/config/kernel.release")
	rels+=("$rel")
	mkdir -p "$t/ku-$rel" "$t/kw-$rel" "$t/u$lm/$rel"
	# the kernel's modules over the host's tree (its headers' build link)
	lower=$s/modroot/lib/modules/$rel
	[ ! -d "/lib/modules/$rel" ] || lower+=:/lib/modules/$rel
	mounts+="mount -t overlay overlay -o lowerdir=$lower,upperdir=$t/ku-$rel,workdir=$t/kw-$rel $t/m$lm/$rel && "
done
# A 6.12 kernel's headers of a release no linux-source-6.12 is: the
# postinst must skip it before DKMS builds anything (a build would fail).
fake=6.12.0-smbdfake
mkdir -p "$t/u$lm/$fake/build/include/config"
echo '# headers of no real kernel (scripts/deb-check.sh)' > "$t/u$lm/$fake/build/Makefile"
echo 6.12.0 > "$t/u$lm/$fake/build/include/config/kernel.release"

# What runs in the scratch root: each step's verdict as a word in
# /deb-out/verdicts, read back below.
cat > "$t/u/deb-steps.sh" <<EOF
#!/bin/bash
v=/deb-out/verdicts
say() { echo "\$1 \$2" >> \$v; }
echo "== dpkg -i"
dpkg -i /smbd-dkms.deb > /deb-out/install.log 2>&1; say install \$?
cat /deb-out/install.log
dkms status -m smbd
grep -q "^smbd-dkms: $fake: the installed linux-source-6.12 is .*skipped until the two match" /deb-out/install.log &&
	! grep -q "building smbd, cifs and ksmbd for $fake" /deb-out/install.log &&
	[ ! -e /var/lib/dkms/smbd/$pkgver/$fake ]
say fake \$?
echo "== smbdctl"
/usr/sbin/smbdctl -V
[ "\$(/usr/sbin/smbdctl -V)" = "smbdctl $pkgver" ] &&
	zcat /usr/share/man/man8/smbdctl.8.gz | grep -q '^.SH EXIT STATUS'
say tool \$?
for rel in ${rels[*]}; do
	r=0
	for m in smbd cifs ksmbd; do
		f=\$(ls /lib/modules/\$rel/updates/dkms/\$m.ko* 2>/dev/null | head -n 1)
		[ -n "\$f" ] || { echo "\$rel: no updates/dkms/\$m.ko"; r=1; continue; }
		mkdir -p /deb-out/\$rel && cp "\$f" /deb-out/\$rel/
	done
	dkms status -m smbd -v $pkgver -k \$rel | grep -q ': installed' || r=1
	for m in cifs ksmbd; do
		dep=\$(modprobe -S \$rel --show-depends \$m 2>&1)
		echo "\$dep" | sed "s/^/\$rel: modprobe \$m: /"
		echo "\$dep" | grep -q "updates/dkms/\$m\\.ko" &&
			echo "\$dep" | grep -q "updates/dkms/smbd\\.ko" || r=1
	done
	say built-\$rel \$r
done
echo "== dpkg --purge"
dpkg --purge smbd-dkms; r=\$?
[ ! -e /usr/src/smbd-$pkgver ] && [ ! -e /var/lib/dkms/smbd ] &&
	[ ! -e /usr/sbin/smbdctl ] && [ ! -e /usr/share/man/man8/smbdctl.8.gz ] || r=1
for rel in ${rels[*]}; do
	if ls /lib/modules/\$rel/updates/dkms/ 2>/dev/null | grep -E '^(smbd|cifs|ksmbd)\\.ko'; then
		echo "\$rel: left in updates/dkms"; r=1
	fi
	dep=\$(modprobe -S \$rel --show-depends cifs 2>&1)
	echo "\$dep" | sed "s/^/\$rel: modprobe cifs: /"
	echo "\$dep" | grep -q "kernel/fs/smb/client/cifs\\.ko" || r=1
done
say purge \$r
EOF
chmod +x "$t/u/deb-steps.sh"

# A PID namespace too: when this script is killed (a CI timeout), unshare
# takes every process of the scratch root with it.
unshare -m -p --fork --kill-child /bin/bash -c "set -e
	mount --make-rprivate /
	mount -t overlay overlay -o lowerdir=/,upperdir=$t/u,workdir=$t/w $t/m
	mount -t proc proc $t/m/proc
	mount --bind /dev $t/m/dev
	mount --rbind /sys $t/m/sys
	mount -t tmpfs tmpfs $t/m/tmp
	$mounts true
	chroot $t/m /deb-steps.sh" > "$out/deb-check.log" 2>&1 &
upid=$!
trap 'kill $upid 2>/dev/null; wait $upid; rm -rf "$t"' EXIT
trap 'exit 1' TERM INT HUP
wait $upid
grep -E ': (modprobe|no |left)|Error|error:' "$out/deb-check.log" | head -n 40

verdict() { awk -v k="$1" '$1 == k { print $2 }' "$t/u/deb-out/verdicts" 2>/dev/null; }
tally "$(verdict install)" "smbd-dkms: dpkg -i installs it, DKMS builds for ${rels[*]}"
tally "$(verdict fake)" "smbd-dkms: $fake (headers of another release than linux-source-6.12) skipped, nothing built"
tally "$(verdict tool)" "smbd-dkms: smbdctl $pkgver and its man page installed"
for rel in "${rels[@]}"; do
	tally "$(verdict "built-$rel")" "smbd-dkms: smbd, cifs and ksmbd in $rel's updates/dkms, preferred by modprobe"
	[ -d "$t/u/deb-out/$rel" ] && rm -rf "${out:?}/$rel" && cp -a "$t/u/deb-out/$rel" "$out/"
done
tally "$(verdict purge)" "smbd-dkms: dpkg --purge removes the modules, DKMS's and the package's files"
r=0
if dpkg-query -W smbd-dkms >/dev/null 2>&1 || ls -d /usr/src/smbd-* /var/lib/dkms/smbd 2>/dev/null ||
   ls /lib/modules/*/updates/dkms/smbd.ko* 2>/dev/null; then
	r=1
fi
tally $r "smbd-dkms: the host has no trace of it"
[ $fail = 0 ] || tail -n 40 "$out/deb-check.log"
echo "$pass passed, $fail failed"
[ $fail = 0 ]

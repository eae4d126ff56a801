#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build (or reuse) the smbd test kernel from Debian's linux-source-6.12.
#   build-kernel.sh [bench|plain]
# With "bench", the bench kernel (scripts/bench.sh) instead: the same
# kernel without the bug finders (tests/kernel/smbd-bench.config).
# With "plain", the bench kernel without the fixes to the stock code
# (tests/kernel/*.patch, adapters/patches/*.patch): the kernel users
# build from Debian's source, for the benchmark's SMBD_BENCH_KERNEL=plain.
# Only the siw lock change below stays (a lock's flavour, for lockdep).
#
# The result is cached outside the tree, keyed by the source package version
# and the hash of tests/kernel/smbd-test.config, of the fixes in
# tests/kernel/*.patch and adapters/patches/*.patch and of this script's
# build steps (KEY-BEGIN to KEY-END, the siw fix below included), and reused by later runs:
#   $SMBD_CACHE/kernel-<version>-<hash>/build    the kernel build tree (KDIR)
#   $SMBD_CACHE/kernel-<version>-<hash>/modroot  modules_install output
# A new hash with the same configuration rebuilds from the newest such
# kernel's objects only what the changed source files touch (below).
# Prints the cache directory on stdout; progress goes to stderr.
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
frag=$top/tests/kernel/smbd-test.config
flavour=${1:-test}
cache=${SMBD_CACHE:-$HOME/.cache/smbd}
case $flavour in
test) name=kernel ;;
bench | plain)
	name=bench-kernel
	[ "$flavour" = bench ] || name=bench-plain-kernel
	# The test fragment above its bug finders, less the keys the bench
	# fragment sets, then the bench fragment.
	bfrag=$top/tests/kernel/smbd-bench.config
	keys=$(grep -oE '^CONFIG_[A-Z0-9_]+' "$bfrag" | sed 's/$/=/')
	merged=$(mktemp "${TMPDIR:-/tmp}/smbd-bench-config.XXXXXX")
	trap 'rm -f "$merged"; kill ${watcher:-} 2>/dev/null || true' EXIT
	{ sed '/^# Bug finders/,$d' "$frag" | grep -vF "$keys"; cat "$bfrag"; } > "$merged"
	frag=$merged
	;;
*) echo "usage: $0 [bench|plain]" >&2; exit 2 ;;
esac
tarball=$(ls /usr/src/linux-source-6.12.tar.* 2>/dev/null | head -n 1)
[ -n "$tarball" ] || { echo "linux-source-6.12 is not installed (run scripts/setup.sh)" >&2; exit 1; }

ver=$(dpkg-query -W -f='${Version}' linux-source-6.12)
shopt -s nullglob	# either folder may hold none
# The fixes: the test kernel's own, and those the adapters carry too
# (adapters/build.sh applies them to the cifs and ksmbd it builds).
patches=("$top"/tests/kernel/*.patch "$top"/adapters/patches/*.patch)
if [ "$flavour" = plain ]; then
	patches=()
fi
hash=$( { cat "$frag" "${patches[@]}"; sed -n '/^# KEY-BEGIN/,/^# KEY-END/p' "$0"; } | sha256sum | cut -c1-12)
out=$cache/$name-$ver-$hash
mkdir -p "$cache"

exec 9>"$cache/.lock"
flock 9

if [ -f "$out/.done" ]; then
	echo "test kernel: reusing $out" >&2
	echo "$out"
	exit 0
fi

# A line at least every 30 s on stderr while the kernel is made: the
# step, and the objects built of about how many (the most a build of this
# flavour made before, or the test kernel's count when there was none).
total=$(cat "$cache/$name"-*/objects 2>/dev/null | sort -n | tail -n 1 || true)
total=${total:-1440}
progress() {
	local n
	while sleep 30; do
		if [ -d "$out/build/kernel" ]; then
			n=$(find "$out/build" -name '*.o' 2>/dev/null | wc -l)
			echo "test kernel: $n of about $total objects built, $SECONDS s" >&2
		else
			echo "test kernel: extracting, patching and configuring, $SECONDS s" >&2
		fi
	done
}
SECONDS=0
progress &
watcher=$!
[ "$flavour" != test ] || trap 'kill $watcher 2>/dev/null || true' EXIT

# KEY-BEGIN: changes between here and KEY-END rebuild the kernel.
rm -rf "$out"
mkdir -p "$out"
echo "test kernel: extracting $tarball" >&2
tar -xf "$tarball" -C "$out"
mv "$out"/linux-source-6.12 "$out/src"
# One fix to the provider, not to smbd: siw takes sk_callback_lock in its
# socket callbacks with read_lock(), but TCP calls them in process context
# too (release_sock() running the backlog, with softirqs on), while the
# TCP core takes the lock in softirq context under a socket's slock
# (inet_child_forget() when a listener closes). Lockdep reports it
# ("SOFTIRQ-safe -> SOFTIRQ-unsafe lock order", clock-AF_INET) as soon as
# a siw listener closes with a connection in its accept queue, and then
# turns itself off for the rest of the boot: smbd's own lock bugs would go
# unseen. The _bh forms are what softirq callers already run with.
for f in siw_cm.c siw_qp.c; do
	sed -i -e 's/read_lock(&sk->sk_callback_lock)/read_lock_bh(\&sk->sk_callback_lock)/' \
	       -e 's/read_unlock(&sk->sk_callback_lock)/read_unlock_bh(\&sk->sk_callback_lock)/' \
		"$out/src/drivers/infiniband/sw/siw/$f"
done
if grep -q 'read_\(un\)\?lock(&sk->sk_callback_lock)' "$out"/src/drivers/infiniband/sw/siw/*.c ||
   ! grep -q 'read_lock_bh(&sk->sk_callback_lock)' "$out/src/drivers/infiniband/sw/siw/siw_qp.c"; then
	echo "test kernel: the siw sk_callback_lock fix did not apply" >&2
	exit 1
fi
# Fixes to the stock code the tests talk to, each explained in its file:
# tests/kernel/ksmbd-negotiate-race.patch (the stock ksmbd dropped about one
# connection in 200 before reading its Negotiate Request),
# tests/kernel/siw-listener-close.patch (a connection closed before siw
# accepted it freed the listener: use-after-free at its destroy),
# tests/kernel/siw-listener-children.patch (a handshake completing as a
# listener closed read siw's freed listening endpoint),
# tests/kernel/cifs-negotiate-disconnect.patch (the stock cifs hung for good
# when a server closed a connection still negotiating, and freed its
# receive pool under a posted receive),
# adapters/patches/cifs-multichannel-mount.patch (without CONFIG_CIFS_DFS_UPCALL,
# as here, cifs opened no extra channel at mount),
# tests/kernel/cifs-smbd-destroy-work.patch (at umount, the stock cifs could
# run its disconnect work on the cm_id it had just destroyed),
# adapters/patches/cifs-demux-sigkill.patch (a mount failing at once could leave
# cifsd waiting for good for a SIGKILL it had dropped),
# tests/kernel/siw-cep-signals.patch (siw flushed the signals of whoever waited
# for a busy connection endpoint, cifsd's SIGKILL among them),
# tests/kernel/siw-preaccept-cep-leak.patch (siw leaked the endpoint of a
# connection its peer closed before the MPA request),
# tests/kernel/iwcm-dropped-conn-req.patch (iw_cm never answered a connect
# request queued for a listener being destroyed: the provider's endpoint
# and the private data leaked) and
# tests/kernel/smbdirect-drain-room.patch (the stock cifs and ksmbd left no
# room in their queues for ib_drain_qp(): a warning and no drain on rxe).
for p in "${patches[@]}"; do
	patch -d "$out/src" -p1 --forward --no-backup-if-mismatch -s < "$p" ||
		{ echo "test kernel: $(basename "$p") did not apply" >&2; exit 1; }
done
mkdir -p "$out/build"
start=$(date +%s)
make -s -C "$out/src" O="$out/build" tinyconfig >/dev/null
"$out/src/scripts/kconfig/merge_config.sh" -m -O "$out/build" "$out/build/.config" "$frag" >/dev/null
make -s -C "$out/src" O="$out/build" olddefconfig >/dev/null

# Every line of the fragment must have survived olddefconfig.
bad=0
while IFS= read -r l; do
	case "$l" in
	CONFIG_*=n) grep -q "^${l%%=*}=" "$out/build/.config" && { echo "config: $l lost" >&2; bad=1; } ;;
	CONFIG_*) grep -qxF "$l" "$out/build/.config" || { echo "config: $l lost" >&2; bad=1; } ;;
	esac
done < "$frag"
[ $bad = 0 ] || exit 1

# A kernel of this version and flavour built before with the same
# configuration but other fixes (another hash) seeds the build: its build
# tree is copied with the paths it recorded moved here, the source files
# that differ between the two trees are made newer than its objects (the
# ones the fixes touch alike keep its times), and make rebuilds what
# depends on them only. Without such a kernel, or when a file is in one
# tree only, the whole kernel is built.
seed=""
dones=("$cache/$name-$ver"-*/.done)
if [ ${#dones[@]} -gt 0 ]; then
	while IFS= read -r d; do
		d=${d%/.done}
		if [ "$d" != "$out" ] && [ -d "$d/src" ] &&
		   cmp -s "$d/build/.config" "$out/build/.config"; then
			seed=$d
			break
		fi
	done < <(ls -td "${dones[@]}")
fi
if [ -n "$seed" ]; then
	# diff: 0 the same, 1 differences, anything else trouble
	drc=0
	differ=$(diff -rq "$seed/src" "$out/src") || drc=$?
	if [ $drc -gt 1 ] || grep -q '^Only in ' <<<"$differ"; then
		echo "test kernel: $seed differs by more than file contents, not seeding from it" >&2
		seed=""
	fi
fi
if [ -n "$seed" ]; then
	echo "test kernel: seeding from $seed" >&2
	cp -a "$seed/build/." "$out/build/"
	# the dependency lists (.cmd) and whatever else names the seed's trees
	grep -rlIZ -- "$seed/" "$out/build" |
		xargs -0 -r sed -i -e "s|$seed/src/|$out/src/|g" -e "s|$seed/build/|$out/build/|g"
	{
		for p in "${patches[@]}"; do
			sed -n 's|^+++ b/\([^[:space:]]*\).*|\1|p' "$p"
		done
		echo drivers/infiniband/sw/siw/siw_cm.c	# the siw sed above
		echo drivers/infiniband/sw/siw/siw_qp.c
	} | sort -u | while IFS= read -r f; do
		if [ -f "$seed/src/$f" ] && cmp -s "$seed/src/$f" "$out/src/$f"; then
			touch -r "$seed/src/$f" "$out/src/$f"
		fi
	done
	sed -n 's|^Files .* and \(.*\) differ$|\1|p' <<<"$differ" | while IFS= read -r f; do
		touch "$f"
	done
fi

echo "test kernel: building in $out/build ($(nproc) jobs)" >&2
make -s -C "$out/src" O="$out/build" -j"$(nproc)" bzImage modules >"$out/build.log" 2>&1 ||
	{ tail -n 40 "$out/build.log" >&2; exit 1; }
make -s -C "$out/src" O="$out/build" INSTALL_MOD_PATH="$out/modroot" \
	INSTALL_MOD_STRIP=1 DEPMOD=/sbin/depmod modules_install >/dev/null
# KEY-END
kill $watcher 2>/dev/null || true
find "$out/build" -name '*.o' | wc -l > "$out/objects"
end=$(date +%s)
echo "$((end - start))" > "$out/build-seconds"
echo "test kernel: built in $((end - start)) s" >&2
touch "$out/.done"
echo "$out"

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Install, from Debian's registry, everything the smbd build and VM test
# harness need. Idempotent and quiet: when every package is present it
# prints nothing and touches no network; otherwise it runs "apt-get update"
# once and installs only the missing packages (never upgrades installed ones,
# so the cached test kernel, keyed by the linux-source version, stays valid).
set -euo pipefail

export DEBIAN_FRONTEND=noninteractive

# Always wanted. linux-headers-6.12-amd64 and linux-headers-amd64 are
# Debian's metapackages that pull in the newest linux-headers-6.12.*-amd64
# and linux-headers-6.1.0-*-amd64 (Debian 12's default kernel) at install
# time.
pkgs=(
	linux-source-6.12 linux-headers-6.12-amd64
	linux-source-6.1 linux-headers-amd64
	build-essential bc flex bison libelf-dev libssl-dev dwarves patch
	xz-utils gzip cpio kmod sparse python3 gawk coreutils util-linux
	qemu-system-x86 busybox-static iproute2
	rdma-core ibverbs-utils ibverbs-providers rdmacm-utils
	libibverbs1 librdmacm1
	ksmbd-tools cifs-utils dkms lintian jq
)
# Installed when the registry has them.
optional=(perftest)

installed() {
	[ "$(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null)" = installed ]
}

# The headers of the kernel that linux-source-SERIES is the source of
# (PATTERN: its headers' names, between linux-headers- and -amd64): the
# adapters build cifs and ksmbd from that source against Debian's
# headers and stock kernel (tests/vm/stock-kernel.sh takes the newest
# headers installed), which must be the same release. The metapackages
# can lag: on 2026-12-02 linux-headers-6.12-amd64 still pulled 6.12.117
# when linux-source-6.12 was 6.12.118. Nothing when the source is not
# installed or the registry has no such headers.
source_headers() {
	local v
	v=$(dpkg-query -W -f='${Version}' "linux-source-$1" 2>/dev/null) || return 0
	[ -n "$v" ] || return 0
	# shellcheck disable=SC2046 # a list of names
	apt-cache policy $(apt-cache pkgnames "linux-headers-$1." 2>/dev/null |
		grep -E "^linux-headers-$2-amd64\$") 2>/dev/null |
		awk -v v="$v" '/^[^ ]/ { sub(/:$/, ""); p = $1 }
			$1 == "Candidate:" && $2 == v { print p; exit }'
}

h612='6\.12\.[0-9]+\+deb[0-9]+'
h61='6\.1\.0-[0-9]+'

# Everything missing: the packages, and the sources' own headers.
missing_now() {
	local p
	missing=()
	for p in "${pkgs[@]}" "${optional[@]}" \
		$(source_headers 6.12 "$h612") $(source_headers 6.1 "$h61"); do
		installed "$p" || missing+=("$p")
	done
}

missing_now
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" != 0 ]; then
	echo "setup.sh: missing packages (${missing[*]}); run as root" >&2
	exit 1
fi

echo "setup.sh: installing ${missing[*]}"
apt-get update -qq >/dev/null

want=()
for p in "${missing[@]}"; do
	if printf '%s\n' "${optional[@]}" | grep -qxF "$p"; then
		# Optional: skip quietly when the registry has no candidate.
		cand=$(apt-cache policy "$p" 2>/dev/null | awk '/Candidate:/ {print $2}')
		if [ -z "$cand" ] || [ "$cand" = "(none)" ]; then continue; fi
	fi
	want+=("$p")
done
[ ${#want[@]} -eq 0 ] && exit 0

apt-get install -y -qq --no-install-recommends "${want[@]}" >/dev/null

# The sources installed just now: their headers too.
want=()
for p in $(source_headers 6.12 "$h612") $(source_headers 6.1 "$h61"); do
	installed "$p" || want+=("$p")
done
if [ ${#want[@]} -gt 0 ]; then
	echo "setup.sh: installing ${want[*]}"
	apt-get install -y -qq --no-install-recommends "${want[@]}" >/dev/null
fi

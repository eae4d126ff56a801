#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# checkpatch --strict over every C file and header of smbd, with the
# checkpatch.pl of Debian's linux-source-6.12 (extracted once into the
# cache). Exit status 0 only when it finds nothing.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cache=${SMBD_CACHE:-$HOME/.cache/smbd}/checkpatch
tarball=$(ls /usr/src/linux-source-6.12.tar.* 2>/dev/null | head -n 1)

if [ ! -x "$cache/scripts/checkpatch.pl" ]; then
	[ -n "$tarball" ] || { echo "checkpatch: linux-source-6.12 missing" >&2; exit 1; }
	mkdir -p "$cache"
	tar -xf "$tarball" -C "$cache" --strip-components=1 --wildcards \
		'*/scripts/checkpatch.pl' '*/scripts/spelling.txt' \
		'*/scripts/const_structs.checkpatch'
fi

cd "$top"
mapfile -t files < <(git ls-files -co --exclude-standard -- '*.c' '*.h' | sort)
[ ${#files[@]} -gt 0 ] || exit 0
out=$(perl "$cache/scripts/checkpatch.pl" --no-tree --strict --terse --show-types \
	--ignore FILE_PATH_CHANGES -f "${files[@]}" 2>&1 | grep -E ': (ERROR|WARNING|CHECK):' |
	# cifs's own names, which the cifs adapter must use
	grep -vE '^adapters/cifs(-6\.1|-common)?/[^:]*:[0-9]+: CHECK:CAMELCASE: Avoid CamelCase: <(tcpStatus|CifsNeedReconnect)>$' |
	# the one place that tells kernel series apart, on purpose
	grep -vE '^include/smbd_compat\.h:[0-9]+: (WARNING:(LINUX_VERSION_CODE|CONSTANT_COMPARISON)|CHECK:MACRO_ARG_REUSE):' || true)
if [ -n "$out" ]; then
	printf '%s\n' "$out"
	echo "checkpatch: $(printf '%s\n' "$out" | wc -l) findings in ${#files[@]} files"
	exit 1
fi
echo "checkpatch: ${#files[@]} files clean"

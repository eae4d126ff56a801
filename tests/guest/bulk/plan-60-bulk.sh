#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Guest plan, booted on its own by tests/run.sh: the bulk transfer. Over
# rxe and then siw, 16 concurrent smbd connections each send 64 MiB in
# 64 KiB messages to smbd_test's sink server, which checks every byte
# (sequence, length and content against the pattern both sides derive).
# The aggregate throughput is reported as SMBD-INFO. Sizes from the
# kernel command line: smbdtest.bulk=CONNSxBYTES (default 16x64M; the
# test command asks for 16x16M), smbdtest.bulk_timeout=S (default 2400
# per provider).
#
# Known limit: at 16x64M, soft-RoCE in the TCG guest with KASAN and
# kmemleak sometimes collapses after about 500 MB: 1.5 GB of 2 KiB slab
# objects (packet-sized) and their kmemleak records fill the guest until
# rxe's ACK allocations fail and the OOM killer runs. Runs of the same
# size also pass (3.1-3.3 MiB/s); the cause is not yet found.

# shellcheck source=tests/guest/lib-st.sh
. /smbd/lib-st.sh

BULK=16x64M
BULK_TIMEOUT=2400
PORT=5445
# shellcheck disable=SC2013 # words, not lines
for a in $(cat /proc/cmdline); do
	case $a in
	smbdtest.bulk=*) BULK=${a#*=} ;;
	smbdtest.bulk_timeout=*) BULK_TIMEOUT=${a#*=} ;;
	esac
done

# bulk NAME ADDR
bulk() {
	p=bulk/$1
	run "$p" listen "$2" $PORT
	run "$p/$BULK" stream "$2" $PORT conns="${BULK%%x*}" \
		bytes="${BULK#*x}" msg=65536 timeout="$BULK_TIMEOUT"
	run "$p" stop "$2" $PORT
}

st_load || exit 0
bulk rxe 192.0.2.1
bulk siw 192.0.2.17
if $RMMOD smbd_test; then ok bulk/unload-smbd_test; else nok bulk/unload-smbd_test; fi

#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Guest plan, booted on its own by tests/run.sh: the bulk transfer. Over
# rxe and then siw, 16 concurrent smbd connections each move 64 MiB in
# 64 KiB messages, every second pair of them from smbd_test's server to
# its client and the others from client to server; the receiver checks
# every byte (sequence, length and content against the pattern both
# sides derive).
# The aggregate throughput is reported as SMBD-INFO, and after each
# provider the guest's free memory and slab, and for rxe its transport
# counters (retransmissions, duplicates, retry-exceeded and RNR errors).
# Sizes from the kernel command line: smbdtest.bulk=CONNSxBYTES (default
# 16x64M, what the test command runs), smbdtest.bulk_timeout=S (default
# 2400 per provider).
#
# tests/run.sh boots this VM with smbdtest.kmemleak=off (KASAN and lockdep
# stay on): kmemleak would halve the rate.
# At 16x64M over rxe this plan used to fail about 512 MiB in: rxe flushed
# most queue pairs at once with no error completion. The guest had run
# out of memory: the test kernel's KASAN quarantine had grown until rxe's
# atomic packet allocations failed (see the quarantine keeper in
# tests/guest/init.sh).

# shellcheck source=tests/guest/lib-st.sh
. /smbd/lib-st.sh

BULK=$(karg smbdtest.bulk 16x64M)
BULK_TIMEOUT=$(karg smbdtest.bulk_timeout 2400)
PORT=5445

# counters NAME DEVICE: what the run cost the guest, and the provider's
# own counters (rxe: retransmissions, duplicates, errors; all nonzero ones)
counters() {
	m=$(awk '/^MemFree|^Slab/ { printf "%s %d MiB ", $1, $2 / 1024 }' \
		/proc/meminfo)
	c=""
	for f in /sys/class/infiniband/"$2"/ports/1/hw_counters/*; do
		[ -r "$f" ] || continue
		v=$(cat "$f")
		[ "$v" = 0 ] || c="$c ${f##*/}=$v"
	done
	echo "SMBD-INFO: bulk/$1: after the run: $m${c:+;$c}"
}

# bulk NAME ADDR DEVICE
bulk() {
	p=bulk/$1
	run "$p" listen "$2" $PORT
	run "$p/$BULK" stream "$2" $PORT conns="${BULK%%x*}" \
		bytes="${BULK#*x}" msg=65536 dir=both timeout="$BULK_TIMEOUT"
	run "$p" stop "$2" $PORT
	counters "$1" "$3"
}

# rxe's requester moves a queue pair to the error state without a word
# when it cannot build a packet (no address vector, no skb, a failed
# copy); with dynamic debug its rxe_dbg_qp() lines name the path, so a
# run that fails that way says why in the log. They are KERN_DEBUG: the
# console shows them only at console log level 8.
DDC=/sys/kernel/debug/dynamic_debug/control
PRINTK_WAS=$(cut -f1 /proc/sys/kernel/printk)
if [ -w $DDC ] && echo 'module rdma_rxe file rxe_req.c +p' > $DDC &&
	echo 8 > /proc/sys/kernel/printk; then
	echo "SMBD-SETUP: ok rxe requester debug messages on"
fi

st_load || exit 0
bulk rxe "$RXE_ADDR" rxe0
bulk siw "$SIW_ADDR" siw0
if $RMMOD smbd_test; then ok bulk/unload-smbd_test; else nok bulk/unload-smbd_test; fi
# The plans after this one (plan-65) run with the console as it was.
[ -w $DDC ] && echo 'module rdma_rxe file rxe_req.c -p' > $DDC
echo "$PRINTK_WAS" > /proc/sys/kernel/printk

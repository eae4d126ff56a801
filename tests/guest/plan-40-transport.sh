#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Guest plan: smbd's transport through its public API, with the test
# consumer smbd_test.ko (tests/kmod) driven through debugfs, over soft-RoCE
# (rxe0, 192.0.2.1) and soft-iWARP (siw0, 192.0.2.17), one at a time:
# an in-kernel echo/sink server and clients that check every byte (echo of
# the edge sizes and random ones, recv_stream framing, API edges), credit
# pressure (blocking and non-blocking sends against a server that stops
# reading), N concurrent connections with their throughput as SMBD-INFO,
# and a connect where nobody listens. Loads smbd.ko if it is not loaded
# and leaves it loaded; unloads smbd_test.ko.
#
# The concurrent runs are CONNSxBYTES specs (BYTES sent by each
# connection; K/M/G suffixes). Under TCG with KASAN and lockdep a
# connection moves well under 1 MiB/s, so the defaults are small. siw
# runs stay under ~10 s: under sustained load its siw_tx thread
# (siw_run_sq(), no cond_resched()) does not schedule for 20 s and more on
# this PREEMPT_NONE kernel, a soft lockup report. Longer runs from the
# kernel command line (SMBD_VM_APPEND):
#   smbdtest.transport_rxe=16x64M,1x8M   rxe runs (default 16x2M)
#   smbdtest.transport_siw=16x64M        siw runs (default 16x256K,4x1M)
#   smbdtest.transport_random=N          random echo sizes (default 8)
#   smbdtest.transport_timeout=S         limit of each run (default 240)

D=/sys/kernel/debug/smbd_test
INSMOD=/usr/sbin/insmod
RMMOD=/usr/sbin/rmmod
RXE_RUNS=16x2M
SIW_RUNS=16x256K,4x1M
RANDOM_SIZES=8
STREAM_TIMEOUT=240
PORT=5445
# shellcheck disable=SC2013 # words, not lines
for a in $(cat /proc/cmdline); do
	case $a in
	smbdtest.transport_rxe=*) RXE_RUNS=${a#*=} ;;
	smbdtest.transport_siw=*) SIW_RUNS=${a#*=} ;;
	smbdtest.transport_random=*) RANDOM_SIZES=${a#*=} ;;
	smbdtest.transport_timeout=*) STREAM_TIMEOUT=${a#*=} ;;
	esac
done

ok() { echo "SMBD-TEST: ok $1${2:+ - $2}"; }
nok() { echo "SMBD-TEST: not ok $1${2:+ - $2}"; }
uptime_s() { cut -d' ' -f1 /proc/uptime; }

# run PREFIX COMMAND...: one smbd_test command; its result lines become
# SMBD-TEST (ok / not ok / skip) and SMBD-INFO lines named PREFIX/...
run() {
	prefix=$1
	shift
	t0=$(uptime_s)
	if ! echo "$*" > $D/ctl 2>/tmp/st-ctl.err; then
		nok "$prefix/$1" "writing \"$*\" failed: $(cat /tmp/st-ctl.err)"
	fi
	cat $D/result > /tmp/st-result
	if [ ! -s /tmp/st-result ]; then
		nok "$prefix/$1" "\"$*\" gave no result"
	fi
	while IFS= read -r l; do
		case $l in
		"ok "*) echo "SMBD-TEST: ok $prefix/${l#ok }" ;;
		"not ok "*) echo "SMBD-TEST: not ok $prefix/${l#not ok }" ;;
		"skip "*) echo "SMBD-TEST: skip $prefix/${l#skip }" ;;
		"info "*) echo "SMBD-INFO: $prefix: ${l#info }" ;;
		*) nok "$prefix/$1" "$l" ;;
		esac
	done < /tmp/st-result
	echo "    ($1 took $(awk -v a="$t0" -v b="$(uptime_s)" 'BEGIN { printf "%.1f", b - a }') s)"
}

# provider NAME ADDR IWARP RUNS: every scenario over one RDMA provider
provider() {
	p=transport/$1
	a=$2
	run "$p" listen "$a" $PORT
	run "$p" refused "$a" $((PORT + 1)) timeout=60
	run "$p" echo "$a" $PORT \
		sizes=0,1,1339,1340,1341,2680,2681,4096,65536,max \
		random="$RANDOM_SIZES" seed=0x5eed iwarp="$3" timeout=180
	run "$p" credit "$a" $PORT msg=3000 stall_ms=3000 timeout=120
	for r in $(echo "$4" | tr ',' ' '); do
		run "$p/$r" stream "$a" $PORT conns="${r%%x*}" bytes="${r#*x}" \
			msg=65536 timeout="$STREAM_TIMEOUT"
	done
	run "$p" stop "$a" $PORT
}

if ! grep -q '^smbd ' /proc/modules; then
	if $INSMOD /smbd/smbd.ko; then ok transport/load-smbd; else nok transport/load-smbd; fi
fi
if ! $INSMOD /smbd/smbd_test.ko; then
	nok transport/load-smbd_test
	exit 0
fi
ok transport/load-smbd_test

provider rxe 192.0.2.1 0 "$RXE_RUNS"
provider siw 192.0.2.17 1 "$SIW_RUNS"

if $RMMOD smbd_test; then ok transport/unload-smbd_test; else nok transport/unload-smbd_test; fi

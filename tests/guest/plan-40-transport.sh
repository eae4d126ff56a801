#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Guest plan: smbd's transport through its public API, with the test
# consumer smbd_test.ko (tests/kmod) driven through debugfs, over soft-RoCE
# (rxe0, 192.0.2.1) and soft-iWARP (siw0, 192.0.2.17), one at a time:
# an in-kernel echo/sink server and clients that check every byte (echo of
# the edge sizes and random ones, recv_stream framing, API edges; again
# with 1364-byte messages and completions in the other cq_poll context;
# the first echo at the large size two smbd ends negotiate), credit
# pressure (blocking and non-blocking sends against a server that stops
# reading), N concurrent connections with their throughput as SMBD-INFO,
# a connect where nobody listens, the default ports (port 0), sockets kept
# to one device class (smbd_params.dev_class), and echo
# over IPv6. Loads smbd.ko if it is not loaded
# and leaves it loaded; unloads smbd_test.ko.
#
# The concurrent runs are CONNSxBYTES specs (BYTES sent by each
# connection; K/M/G suffixes). Under TCG with KASAN and lockdep the
# connections share 1-3 MiB/s, so the defaults here are small; the bulk
# run (16 x 64 MiB per provider) has its own VM boot
# (tests/guest/bulk/plan-60-bulk.sh). Other runs from the kernel command
# line (SMBD_VM_APPEND):
#   smbdtest.transport_rxe=16x64M,1x8M   rxe runs (default 16x2M)
#   smbdtest.transport_siw=16x64M        siw runs (default 16x1M)
#   smbdtest.transport_random=N          random echo sizes (default 8)
#   smbdtest.transport_timeout=S         limit of each run (default 240)

# shellcheck source=tests/guest/lib-st.sh
. /smbd/lib-st.sh

RXE_RUNS=$(karg smbdtest.transport_rxe 16x2M)
SIW_RUNS=$(karg smbdtest.transport_siw 16x1M)
RANDOM_SIZES=$(karg smbdtest.transport_random 8)
STREAM_TIMEOUT=$(karg smbdtest.transport_timeout 240)
PORT=5445

# msize BYTES: smbd's default message size both ways (module parameters,
# read at each listen and connect)
msize() {
	echo "$1" > /sys/module/smbd/parameters/max_send_size &&
		echo "$1" > /sys/module/smbd/parameters/max_receive_size ||
		nok "transport/msize-$1" "cannot set smbd's message size"
}

# cqpoll MODE: where the connections made from now on handle completions
cqpoll() {
	echo "$1" > /sys/module/smbd/parameters/cq_poll ||
		nok "transport/cq_poll-$1" "cannot set smbd's cq_poll"
}

# scenarios NAME ADDR IWARP RUNS GATHER: every scenario over one RDMA
# provider
scenarios() {
	p=transport/$1
	a=$2
	MSIZE=$(msize_on "$5")
	run "$p" listen "$a" $PORT
	run "$p" refused "$a" $((PORT + 1)) timeout=60
	run "$p" echo "$a" $PORT sizes="$(edges "$MSIZE")" msize="$MSIZE" \
		random="$RANDOM_SIZES" seed=0x5eed iwarp="$3" timeout=180
	# Again at 1364 bytes, what every stock peer uses, and with
	# completions handled in the other context (cq_poll)
	msize 1364
	cqpoll "$CQ_OTHER"
	run "$p/1364" listen "$a" $((PORT + 2))
	run "$p/1364" echo "$a" $((PORT + 2)) sizes="$(edges 1364)" \
		msize=1364 random=2 seed=0x1364 iwarp="$3" timeout=180
	run "$p/1364" stop "$a" $((PORT + 2))
	msize "$DEF_SIZE"
	cqpoll "$CQ_POLL"
	run "$p" credit "$a" $PORT msg=3000 stall_ms=3000 timeout=120
	for r in $(echo "$4" | tr ',' ' '); do
		run "$p/$r" stream "$a" $PORT conns="${r%%x*}" bytes="${r#*x}" \
			msg=65536 timeout="$STREAM_TIMEOUT"
	done
	run "$p" stop "$a" $PORT
	run "$p" defport "$a" 0 iwarp="$3" timeout=60
	run "$p" devclass "$a" $((PORT + 4)) iwarp="$3" timeout=60
}

# scenarios6 NAME ADDR IWARP GATHER: the same over IPv6, echo only
scenarios6() {
	p=transport/$1/ipv6
	MSIZE=$(msize_on "$4")
	run "$p" listen "$2" $PORT
	run "$p" echo "$2" $PORT sizes=0,1,$((MSIZE - 24)),$((MSIZE - 23)),65536 random=2 \
		seed=0x6eed iwarp="$3" timeout=180
	run "$p" stop "$2" $PORT
}

st_load || exit 0
# Two smbd ends with the defaults move a larger size both ways, cut from
# 64 receives of 8 KiB (smbd_params.large_size, msize_on); at 1364 bytes
# the same 64 receives cannot hold 16 of it, so 1364 stays.
DEF_SIZE=$(cat /sys/module/smbd/parameters/max_send_size)
LARGE=$(cat /sys/module/smbd/parameters/large_message_size)
CQ_POLL=$(cat /sys/module/smbd/parameters/cq_poll)
CQ_OTHER=softirq
[ "$CQ_POLL" = softirq ] && CQ_OTHER=workqueue

scenarios rxe "$RXE_ADDR" 0 "$RXE_RUNS" 8
scenarios siw "$SIW_ADDR" 1 "$SIW_RUNS" 6
scenarios6 rxe 2001:db8::1 0 8
scenarios6 siw 2001:db8:0:1::1 1 6

if $RMMOD smbd_test; then ok transport/unload-smbd_test; else nok transport/unload-smbd_test; fi

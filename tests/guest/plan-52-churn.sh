#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Guest plan: consumers that give up at every step of a connection, in
# both roles, over rxe and siw (tests/churn/smbd_churn.c), then the same
# with the RDMA device deleted under the churn (rdma link delete). Each
# provider ends with a health check: a new connection still negotiates
# and moves data. Runs from the kernel command line:
#   smbdtest.churn_iters=N        initiator releases per provider (300;
#                                 tests/soak.sh churn runs 3000)
#   smbdtest.churn_rounds=N       listener releases per provider (25)

# shellcheck source=tests/guest/lib-st.sh
. /smbd/lib-st.sh
D=/sys/kernel/debug/smbd_churn
RDMA=/usr/bin/rdma
[ -x $RDMA ] || RDMA=/sbin/rdma
ITERS=$(karg smbdtest.churn_iters 300)
ROUNDS=$(karg smbdtest.churn_rounds 25)

load_smbd
if ! $INSMOD /smbd/smbd_churn.ko; then
	nok churn/load
	exit 0
fi

for p in "rxe $RXE_ADDR rxe0 rxe smbdr0" "siw $SIW_ADDR siw0 siw smbds0"; do
	set -- $p
	run churn/$1 initiator $2 7300 iters=$ITERS threads=4
	run churn/$1 responder $2 7301 iters=$ROUNDS conns=4 max_ms=400
	run churn/$1 health $2 7302
	# An unpatched ib_free_cq() under a poll handler held in its rearm:
	# KASAN reports a use-after-free unless smbd waits the handler out.
	run churn/$1 cq-free $2 7305 iters=4 delay_ms=40
	# siw: a listener released while a TCP handshake to it is held
	# after the child socket's clone; without siw waiting such
	# handshakes out, KASAN reports a use-after-free of its endpoint.
	[ "$1" = siw ] && run churn/$1 listen-close $2 7306 iters=4 delay_ms=150

	# The device goes away under the churn: whatever fails must fail
	# cleanly, and the link delete must return.
	echo "initiator $2 7303 iters=100000 secs=12 threads=4 quiet=1" > $D/ctl &
	cpid=$!
	sleep 3
	if timeout 60 $RDMA link delete $3; then
		ok "churn/$1/link-delete-during-churn"
	else
		nok "churn/$1/link-delete-during-churn" "rdma link delete did not return"
	fi
	# The churn stops handing out attempts after 12 s; those under way
	# fail or end within their resolve timeouts.
	if timeout 120 sh -c "while kill -0 $cpid 2>/dev/null; do sleep 1; done"; then
		ok "churn/$1/churn-ends-without-device"
		sed -n 's/^info /SMBD-INFO: churn\/'"$1"'\/link-delete: /p' $D/result
	else
		nok "churn/$1/churn-ends-without-device" "still running after 120 s"
	fi
	wait $cpid 2>/dev/null
	$RDMA link add $3 type $4 netdev $5
	run churn/$1/after-link-delete health $2 7304
done

if $RMMOD smbd_churn; then ok churn/unload; else nok churn/unload; fi

#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Guest plan: memory registration, invalidation and RDMA read/write
# through smbd's API, smbd to smbd, with smbd_mr_test.ko (tests/mr), over
# soft-RoCE (rxe0) and then soft-iWARP (siw0): registered buffers of
# every edge size written and read by the peer's RDMA, several
# descriptors, remote invalidation checked against the rkey, the access
# window closed after deregistration, teardown with registrations held
# and RDMA in flight, 16 users sharing a pool of 4 MRs, and users whose
# registrations need 2 MRs each (none may wait holding one). Loads
# smbd.ko if needed; unloads smbd_mr_test.ko.

# shellcheck source=tests/guest/lib-st.sh
. /smbd/lib-st.sh
D=/sys/kernel/debug/smbd_mr_test
PORT=6445

load_smbd mr/load-smbd
if ! /usr/sbin/insmod /smbd/smbd_mr_test.ko; then
	nok mr/load-smbd_mr_test
	exit 0
fi
ok mr/load-smbd_mr_test

for p in "rxe:$RXE_ADDR" "siw:$SIW_ADDR"; do
	name=${p%%:*}
	addr=${p#*:}
	run "mr/$name" listen "$addr" $PORT
	run "mr/$name" mr "$addr" $PORT
	run "mr/$name" pool "$addr" $PORT
	run "mr/$name" pool-split "$addr" $PORT
	run "mr/$name" bench "$addr" $PORT
	run "mr/$name" stop-posted "$addr" $PORT
done

if /usr/sbin/rmmod smbd_mr_test; then ok mr/unload-smbd_mr_test; else nok mr/unload-smbd_mr_test; fi

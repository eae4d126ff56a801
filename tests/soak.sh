#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The long runs, commands of their own (the test command runs shorter
# versions of both):
#
#   tests/soak.sh [bulk]   16 connections per provider, 64 MiB each, half
#                          of them each way, over rxe and siw, every byte
#                          checked, under KASAN and lockdep (about 20
#                          minutes in the TCG guest; the test command runs
#                          16 x 16 MiB). SMBD_BULK=CONNSxSIZE changes it.
#   tests/soak.sh first    200 first connects per provider to the stock
#                          ksmbd, each right after it starts, and 200 to
#                          smbd's own listener, each right after it
#                          starts (tests/guest/plan-46-first.sh; about 25
#                          minutes; the test command runs 25).
#                          SMBD_FIRST=N changes the count.
#   tests/soak.sh churn    3000 initiator releases per provider at random
#                          steps of connect, and 250 listener releases
#                          (tests/guest/plan-52-churn.sh; about 12
#                          minutes; the test command runs 300 and 25).
#                          SMBD_CHURN=N changes the first count (the
#                          second is a twelfth of it).
#   tests/soak.sh hostile  the hostile raw-verbs peer in both roles over
#                          rxe and siw with 40000 mutated legal messages
#                          per role (tests/guest/plan-55-hostile.sh; the
#                          test command sends 6000). SMBD_HOSTILE=N
#                          changes the count.
#   tests/soak.sh profiles smbd as each of the real NICs it knows (device
#                          profiles, tests/guest/bulk/plan-65-profiles.sh:
#                          the transport, RDMA and cifs on smbd mounting
#                          ksmbd on smbd under every profile; about 8
#                          minutes; the test command runs four).
#   tests/soak.sh matrix   what the test command runs over one provider,
#                          over both: the stock test bed (plan-30), the
#                          pairings (plan-70 to 72, signed and sealed
#                          mounts included), every removal, dying-device
#                          and cable round (plan-74: 1 and 15 s over rxe,
#                          10 and 15 s over siw) and multichannel
#                          (plan-75), under kmemleak (about 30 minutes).
#
# Ends with "N passed, N failed" like tests/run.sh. Logs go to out/soak/.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
out=$top/out/soak
rm -rf "$out"
mkdir -p "$out"
cd "$top" || exit 1
what=${1:-bulk}
case $what in
bulk) tdir=tests/kmod ;;
first) tdir=tests/interop ;;
churn) tdir=tests/churn ;;
hostile) tdir=tests/hostile ;;
profiles) tdir="tests/kmod tests/mr" ;;
matrix) tdir="" ;;
*) echo "usage: $0 [bulk|first|churn|hostile|profiles|matrix]" >&2; exit 2 ;;
esac

bash scripts/setup.sh >"$out/setup.log" 2>&1 || { tail -n 20 "$out/setup.log"; echo "0 passed, 1 failed"; exit 1; }
kcache=$(bash tests/vm/build-kernel.sh 2>"$out/kernel.log") || { tail -n 40 "$out/kernel.log"; echo "0 passed, 1 failed"; exit 1; }
build_all() {
	local d

	make -s -j"$(nproc)" KDIR="$kcache/build" || return 1
	for d in $tdir; do
		make -s -C "$d" KDIR="$kcache/build" || return 1
	done
	case $what in
	profiles | matrix)
		bash adapters/build.sh "$kcache/build" out/adapters cifs ksmbd ;;
	esac
}
if ! build_all >"$out/build.log" 2>&1; then
	tail -n 40 "$out/build.log"
	echo "0 passed, 1 failed"
	exit 1
fi
# soak_vm NAME TIMEOUT APPEND PLAN MODULE...: one VM run, its figures,
# its closing line; the exit status is the run's
soak_vm() {
	local name=$1 tmo=$2 append=$3 plan=$4

	shift 4
	SMBD_VM_TIMEOUT=$tmo SMBD_VM_APPEND=$append SMBD_VM_PLANS=$plan \
		bash tests/vm/vm-test.sh "$out/vm-$name.log" smbd.ko "$@" \
		>"$out/vm-$name-summary.log" 2>&1
	rc=$?
	grep -a "SMBD-INFO: $name" "$out/vm-$name.log" | tr -d '\r' || true
	cat "$out/vm-$name-summary.log"
	return $rc
}

if [ "$what" = first ]; then
	n=${SMBD_FIRST:-200}
	soak_vm first $((600 + n * 12)) \
		"smbdtest.first=$n smbdtest.plan_timeout=$((300 + n * 12))" \
		tests/guest/plan-46-first.sh tests/interop/smbd_interop.ko
elif [ "$what" = churn ]; then
	n=${SMBD_CHURN:-3000}
	soak_vm churn $((900 + n / 2)) \
		"smbdtest.churn_iters=$n smbdtest.churn_rounds=$((n / 12)) smbdtest.plan_timeout=$((600 + n / 2))" \
		tests/guest/plan-52-churn.sh tests/churn/smbd_churn.ko
elif [ "$what" = hostile ]; then
	n=${SMBD_HOSTILE:-40000}
	soak_vm hostile $((900 + n / 20)) \
		"smbdtest.hostile_msgs=$n smbdtest.plan_timeout=$((600 + n / 20))" \
		tests/guest/plan-55-hostile.sh tests/hostile/smbd_hostile.ko
elif [ "$what" = profiles ]; then
	soak_vm profiles 2400 \
		"smbdtest.profiles=${SMBD_PROFILES:-} smbdtest.plan_timeout=2000 smbdtest.kmemleak=off" \
		tests/guest/bulk/plan-65-profiles.sh tests/kmod/smbd_test.ko \
		tests/mr/smbd_mr_test.ko out/adapters/cifs.ko out/adapters/ksmbd.ko
elif [ "$what" = matrix ]; then
	soak_vm matrix 4200 "smbdtest.plan_timeout=1500" \
		"tests/guest/plan-30-stock-smbd.sh tests/guest/smb/plan-70-cifs-smbd.sh tests/guest/smb/plan-71-ksmbd-smbd.sh tests/guest/smb/plan-72-both-smbd.sh tests/guest/smb/plan-74-removal.sh tests/guest/smb/plan-75-multichannel.sh" \
		out/adapters/cifs.ko out/adapters/ksmbd.ko
else
	soak_vm bulk "${SMBD_BULK_TIMEOUT:-4800}" \
		"smbdtest.bulk=${SMBD_BULK:-16x64M} smbdtest.plan_timeout=4700 smbdtest.kmemleak=off" \
		tests/guest/bulk/plan-60-bulk.sh tests/kmod/smbd_test.ko
fi

#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Guest plan: first connects ([MS-SMBD] 3.1.5.2), each right after its
# listener starts, over rxe and siw:
# 1. against the stock ksmbd, restarted (ksmbd.control -s, ksmbd.mountd)
#    before each connect, its module loaded afresh every fifth time:
#    smbd_interop's "connect", one connection, released once negotiated;
# 2. against smbd's own listener, created before each connect and
#    released after it (smbd_interop's "selffirst").
# Every connect must negotiate within its Negotiation Timer (10 s here,
# where one takes about 0.2 s). A connect that fails dumps the provider's
# counters and the kernel log, with ksmbd's RDMA debug log in it, and
# smbd's own account of the negotiation ("our message posted, sent or
# failed; a message or nothing from the peer"). smbdtest.first=N sets N (default 8); the
# 200 per provider of tests/soak.sh take about N minutes.

# shellcheck source=tests/guest/lib-smb.sh
. /smbd/lib-smb.sh

# shellcheck source=tests/guest/lib-st.sh
. /smbd/lib-st.sh

D=/sys/kernel/debug/smbd_interop
N=$(karg smbdtest.first 8)
TIMEOUT=10

# dump WHAT: the provider counters that moved and the recent kernel log
dump() {
	echo "    first: $1: provider counters:"
	for f in /sys/class/infiniband/*/ports/1/hw_counters/*; do
		v=$(cat "$f" 2>/dev/null)
		[ -n "$v" ] && [ "$v" != 0 ] && echo "      ${f#/sys/class/infiniband/} $v"
	done
	/usr/bin/rdma resource show cm_id 2>&1 | sed 's/^/      cm_id: /'
	sed 's/^/      smbd: /' /sys/kernel/debug/smbd/connections
	dmesg | tail -n 60 | sed 's/^/      kmsg: /'
}

st_insmod first smbd_interop || exit 0

# ksmbd_first PROVIDER ADDR: N times ksmbd (re)started, then one connect.
# Every fifth start loads the module afresh; the others restart the
# server (ksmbd.control -s, ksmbd.mountd), which stops and starts its
# listener.
ksmbd_first() {
	p=first/$1/ksmbd
	i=0 n=0 bad=0 worst=0 why=""
	t0=$(uptime_s)
	while [ $i -lt "$N" ]; do
		i=$((i + 1))
		if [ $((i % 5)) = 1 ]; then
			smb_server_start
		else
			smb_server_restart
		fi || {
			bad=$((bad + 1))
			why="ksmbd did not start ($i)"
			smb_server_stop
			break
		}
		[ $i = 1 ] && port=$(smb_rdma_port)
		# ksmbd's RDMA debug log: its side of a connect that fails
		smb_rdma_debug_on
		echo "connect $2 $port timeout=$TIMEOUT" > $D/ctl
		r=$(cat $D/result)
		n=$((n + 1))
		case $r in
		"ok "*)
			ms=$(echo "$r" | sed -n 's/.*negotiated in \([0-9]*\) ms.*/\1/p')
			[ "${ms:-0}" -gt "$worst" ] && worst=$ms
			;;
		*)
			bad=$((bad + 1))
			why="connect $i: $r"
			echo "    $p: connect $i: $r"
			dump "$1 connect $i"
			;;
		esac
		if [ $((i % 5)) = 0 ] || [ $i = "$N" ]; then
			smb_server_stop ||
				{ bad=$((bad + 1)); why="ksmbd did not stop ($i)"; break; }
		fi
	done
	[ $bad = 0 ] && [ $n = "$N" ]
	st=$?
	msg="$n of $N connects, each right after ksmbd started: $bad failed, $worst ms worst, $(since "$t0") s${why:+; last: $why}"
	if [ $st = 0 ]; then ok "$p/first-connects" "$msg"; else nok "$p/first-connects" "$msg"; fi
}

# self_first PROVIDER ADDR PORT
self_first() {
	t0=$(uptime_s)
	echo "selffirst $2 $3 conns=$N timeout=$TIMEOUT" > $D/ctl
	cat $D/result > /tmp/first-result
	[ -s /tmp/first-result ] || nok "first/$1/self" "no result"
	while IFS= read -r l; do
		case $l in
		"ok "*) echo "SMBD-TEST: ok first/$1/${l#ok } ($(since "$t0") s)" ;;
		"not ok "*) echo "SMBD-TEST: not ok first/$1/${l#not ok }"; dump "$1 self" ;;
		"") ;;
		*) nok "first/$1/self" "$l" ;;
		esac
	done < /tmp/first-result
}

t_all=$(uptime_s)
self_first rxe "$RXE_ADDR" 7501
self_first siw "$SIW_ADDR" 7502
ksmbd_first rxe "$RXE_ADDR"
ksmbd_first siw "$SIW_ADDR"
echo "SMBD-INFO: first: $N per provider and listener, $(since "$t_all") s"

if $RMMOD smbd_interop; then ok first/unload-smbd_interop; else nok first/unload-smbd_interop; fi

#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Guest plan: smbd's tracepoints (include/smbd_trace.h), read back through
# tracefs. With every smbd event on, over rxe: an echo and a credit stall
# (smbd_test.ko), registrations with local and remote invalidation and
# RDMA read and write (smbd_mr_test.ko), then keep-alive, a data message
# refused and a negotiate request refused (smbd_fault.ko). Then each
# event class must have fired with the fields its scenario implies, and
# every send traced must be covered by a send completion of its
# connection (seq and n). Loads smbd.ko if it is not loaded and leaves
# it loaded; unloads the test modules.

# shellcheck source=tests/guest/lib-st.sh
. /smbd/lib-st.sh

T=/sys/kernel/tracing
A=192.0.2.1
OUT=/tmp/smbd-trace

[ -d $T/events ] || mount -t tracefs nodev $T
lsmod | grep -q '^smbd ' || $INSMOD /smbd/smbd.ko
if [ ! -d $T/events/smbd ]; then
	nok trace/events "no $T/events/smbd"
	exit 0
fi
for m in smbd_test smbd_mr_test smbd_fault; do
	if [ ! -f /smbd/$m.ko ]; then
		[ "$SMBD_MISSING" = nok ] && w=nok || w=skip
		if [ $w = nok ]; then nok trace/load-$m "no /smbd/$m.ko"; else
			echo "SMBD-TEST: skip trace/load-$m - no /smbd/$m.ko"; fi
		exit 0
	fi
done

echo 0 > $T/tracing_on
echo 8192 > $T/buffer_size_kb
echo > $T/trace
echo 1 > $T/events/smbd/enable
echo 1 > $T/tracing_on

$INSMOD /smbd/smbd_test.ko
D=/sys/kernel/debug/smbd_test
run trace/st listen $A 5447
run trace/st echo $A 5447 sizes=0,1,4096,10000 random=0 seed=0x7ace \
	iwarp=0 timeout=120
run trace/st credit $A 5447 msg=3000 stall_ms=1000 timeout=120
run trace/st stop $A 5447
$RMMOD smbd_test

$INSMOD /smbd/smbd_mr_test.ko
D=/sys/kernel/debug/smbd_mr_test
run trace/mr listen $A 6447
run trace/mr mr $A 6447
run trace/mr stop $A 6447
$RMMOD smbd_mr_test

$INSMOD /smbd/smbd_fault.ko
# fault TEST PORT: one smbd_fault test, its result lines as SMBD-TEST
fault() {
	echo "$1 $A $2" > /sys/kernel/debug/smbd_fault/ctl ||
		nok "trace/fault/$1" "smbd_fault refused the command"
	sed -n "s/^\(ok\|not ok\) /SMBD-TEST: \1 trace\/fault\//p" \
		/sys/kernel/debug/smbd_fault/result
}
fault ka-idle 7301
fault bad-align 7302
fault neg-version 7303

echo 0 > $T/tracing_on
echo 0 > $T/events/smbd/enable
cat $T/trace > $OUT
echo > $T/trace
echo "SMBD-INFO: trace/lines $(grep -c ' smbd_' $OUT)"

# debugfs: a directory per socket, from its creation to its release,
# read while an smbd pair streams (smbd_fault's hold).
C=/sys/kernel/debug/smbd/conn
S=/sys/kernel/debug/smbd/connections
base=$(ls $C | wc -l)
fault hold 7304
sleep 2
dirs=$(ls $C | wc -l)
[ "$dirs" = $((base + 3)) ] && ok debugfs/conn-dirs "$dirs" ||
	nok debugfs/conn-dirs "$dirs, want $base + 3 (listener, initiator, responder)"
# val FILE NAME: the value of line "NAME value" of FILE
val() { sed -n "s/^$2 //p" "$1"; }
up=0
for d in $C/*; do
	id=${d##*/}
	for f in state negotiated credits counters refusals; do
		[ -r "$d/$f" ] || nok "debugfs/conn-$id/$f" "missing"
	done
	grep -q " conn=$id " $S || nok "debugfs/conn-$id/in-summary" "no conn=$id in $S"
	[ "$(val "$d/state" state)" = connected ] || continue
	up=$((up + 1))
	r=$(val "$d/state" role)
	sent=$(val "$d/counters" msgs_sent)
	bytes=$(val "$d/counters" bytes_sent)
	ms=$(val "$d/negotiated" max_send_size)
	tgt=$(val "$d/credits" send_credit_target)
	posted=$(val "$d/credits" receives_posted)
	reasons=$(grep -cE '^3\.1\.5\.[678] (negotiate|data): .+: 0$' "$d/refusals")
	sleep 1
	sent2=$(val "$d/counters" msgs_sent)
	if [ "${sent:-0}" -gt 0 ] && [ "${bytes:-0}" -gt 0 ] &&
	   [ "${sent2:-0}" -gt "$sent" ] && [ "${ms:-0}" -ge 128 ] &&
	   [ "${tgt:-0}" -gt 0 ] && [ "${posted:-0}" -gt 0 ] &&
	   [ "$reasons" = 18 ]; then
		ok "debugfs/$r" "msgs_sent $sent then $sent2, max_send_size $ms, send_credit_target $tgt, receives_posted $posted, $reasons reasons at 0"
	else
		nok "debugfs/$r" "msgs_sent $sent then $sent2, bytes_sent $bytes, max_send_size $ms, send_credit_target $tgt, receives_posted $posted, $reasons of 18 reasons at 0"
		sed 's/^/    /' $d/*
	fi
done
[ $up = 2 ] && ok debugfs/connected-pair || nok debugfs/connected-pair "$up connected"
fault release 0
dirs=$(ls $C | wc -l)
[ "$dirs" = "$base" ] && ok debugfs/conn-dirs-gone "$dirs" ||
	nok debugfs/conn-dirs-gone "$dirs left, want $base"
$RMMOD smbd_fault

# has NAME EVENT [PATTERN]: EVENT fired, with a line matching PATTERN
has() {
	n=$(grep -c " smbd_$2: " $OUT)
	if [ -n "$3" ]; then
		n=$(grep " smbd_$2: " $OUT | grep -cE "$3")
	fi
	if [ "$n" -gt 0 ]; then
		ok "trace/$1" "$n events"
	else
		nok "trace/$1" "no smbd_$2 event${3:+ matching /$3/}"
	fi
}

has state-connecting state 'initiator connecting -> negotiating err=0'
has state-connected state 'negotiating -> connected err=0'
has state-refusing state 'responder negotiating -> refusing'
has negotiated negotiated 'max_send=[1-9][0-9]+ max_recv=[1-9][0-9]+ .* max_rw=[1-9][0-9]*'
has send send 'seq=[0-9]+ len=[0-9]+ remaining=[0-9]+ granted=[0-9]+ requested=[1-9]'
has send-with-invalidate send 'with-invalidate'
has send-done send_done 'seq=[0-9]+ n=[1-9][0-9]* status=0'
has recv recv 'seq=[0-9]+ status=0 len=[0-9]+'
has recv-data recv_data 'len=[0-9]+ remaining=[0-9]+ granted=[0-9]+ requested=[1-9]'
has credit-stall credit_stall
has credit-grant credit_grant 'granted=[1-9]'
has keepalive-request keepalive 'request'
has keepalive-answer-due keepalive 'answer-due'
has mr-reg mr_reg 'rkey=0x[0-9a-f]+ len=[1-9][0-9]* peer=(reads|writes)'
has mr-inv-local mr_inv 'local'
has mr-inv-remote mr_inv ' remote$'
has rdma-read rdma_rw ' read descriptors=[1-9][0-9]* len=[1-9][0-9]* ret=[1-9]'
has rdma-write rdma_rw ' write descriptors=[1-9][0-9]* len=[1-9][0-9]* ret=[1-9]'
has refused-data refused '\[MS-SMBD\] 3\.1\.5\.8: data offset not 8-byte aligned'
has refused-negotiate refused '\[MS-SMBD\] 3\.1\.5\.6: version'

# Every send traced is covered by a completion of its connection: a
# completion of seq S with n requests covers S-n+1..S. Connections that
# ended in error may lose unsignalled sends to the teardown: the echo
# and mr connections end cleanly, so count the uncovered per connection
# and require none on a connection that never saw an error.
awk '
	/ smbd_state: / {
		for (i = 1; i <= NF; i++) {
			if ($i ~ /^conn=/) c = substr($i, 6)
			if ($i ~ /^err=/ && $i != "err=0" && $i != "err=-108") bad[c] = 1
		}
	}
	/ smbd_send: / {
		for (i = 1; i <= NF; i++) {
			if ($i ~ /^conn=/) c = substr($i, 6)
			if ($i ~ /^seq=/) s = substr($i, 5) + 0
		}
		sent[c " " s] = 1
	}
	/ smbd_send_done: / {
		for (i = 1; i <= NF; i++) {
			if ($i ~ /^conn=/) c = substr($i, 6)
			if ($i ~ /^seq=/) s = substr($i, 5) + 0
			if ($i ~ /^n=/) n = substr($i, 3) + 0
		}
		for (k = s - n + 1; k <= s; k++) done[c " " k] = 1
	}
	END {
		for (k in sent) {
			split(k, p, " ")
			if (!(k in done) && !(p[1] in bad)) { miss++; ex = k }
			total++
		}
		printf "%d %d %s\n", total, miss + 0, ex
	}' $OUT > /tmp/smbd-trace-seq
read -r total miss ex < /tmp/smbd-trace-seq
if [ "$total" -gt 0 ] && [ "$miss" = 0 ]; then
	ok trace/send-completions-match "$total sends, each covered by a completion"
else
	nok trace/send-completions-match "$miss of $total sends without a completion (conn seq: $ex)"
	grep -E " smbd_(send|send_done|state): conn=${ex%% *} " $OUT |
		head -n 40 | sed 's/^/    /'
fi

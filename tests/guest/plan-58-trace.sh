#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Guest plan: smbd's tracepoints (include/smbd_trace.h), read back through
# tracefs. With every smbd event on, over rxe: an echo and a credit stall
# (smbd_test.ko), registrations with local and remote invalidation and
# RDMA read and write (smbd_mr_test.ko), then keep-alive, a data message
# refused and a negotiate request refused (smbd_fault.ko). Then each
# event class must have fired with the fields its scenario implies,
# every send traced must be covered by a send completion of its
# connection (seq and n), and every completion names its context
# consistently (smbd_wc_*: cq and cid); one completion failed on purpose
# (fail_wc) is named on a queue its connection's debugfs shows. Loads smbd.ko if it is not loaded and leaves
# it loaded; unloads the test modules.

# shellcheck source=tests/guest/lib-st.sh
. /smbd/lib-st.sh

T=/sys/kernel/tracing
A=$RXE_ADDR
OUT=/tmp/smbd-trace

[ -d $T/events ] || mount -t tracefs nodev $T
load_smbd
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
run trace/mr mr-brief $A 6447
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
	   [ "$reasons" = 19 ]; then
		ok "debugfs/$r" "msgs_sent $sent then $sent2, max_send_size $ms, send_credit_target $tgt, receives_posted $posted, $reasons reasons at 0"
	else
		nok "debugfs/$r" "msgs_sent $sent then $sent2, bytes_sent $bytes, max_send_size $ms, send_credit_target $tgt, receives_posted $posted, $reasons of 19 reasons at 0"
		sed 's/^/    /' $d/*
	fi
done
[ $up = 2 ] && ok debugfs/connected-pair || nok debugfs/connected-pair "$up connected"

# One completion failed on purpose (fail_wc, once) while the pair
# streams: smbd_wc_error names it by a completion queue of its own
# connection, as that connection's debugfs state gives them.
FI=/sys/kernel/debug/smbd/fail_wc
if [ -d $FI ]; then
	times=$(cat $FI/times)
	echo > $T/trace
	echo 1 > $T/events/smbd/smbd_wc_error/enable
	echo 1 > $T/tracing_on
	echo 1 > $FI/interval
	echo 0 > $FI/space
	echo 1 > $FI/times
	echo 100 > $FI/probability
	sleep 2
	echo 0 > $FI/probability
	echo "$times" > $FI/times
	echo 0 > $T/tracing_on
	echo 0 > $T/events/smbd/smbd_wc_error/enable
	e=$(grep -m1 ' smbd_wc_error: ' $T/trace)
	conn=$(echo "$e" | sed -n 's/.* conn=\([0-9]*\) .*/\1/p')
	cq=$(echo "$e" | sed -n 's/.* cq=\([0-9]*\) .*/\1/p')
	if echo "$e" | grep -qE 'cid=[1-9][0-9]* kind=[a-z]+ status=GENERAL_ERR \([0-9]+/0x0\)$' &&
	   grep -qxE "(send|recv)_cq $cq" "$C/$conn/state" 2>/dev/null; then
		ok trace/wc-error-named "${e#* smbd_wc_error: }"
	else
		nok trace/wc-error-named "event: ${e:-none}; conn $conn: $(tr '\n' ' ' < "$C/$conn/state" 2>/dev/null)"
	fi
	echo > $T/trace
else
	echo "SMBD-TEST: skip trace/wc-error-named - no $FI (CONFIG_FAULT_INJECTION_DEBUG_FS)"
fi
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
# Completions by their context's name (struct smbd_cqe): each kind the
# scenarios use completes, and a connection's teardown flushes the
# receives it had posted.
for k in recv send reg op; do
	has wc-done-$k wc_done "cq=[0-9]+ cid=[1-9][0-9]* kind=$k status=SUCCESS \(0/0x0\)$"
done
has wc-flush-recv wc_flush 'cid=[1-9][0-9]* kind=recv status=WR_FLUSH_ERR \([0-9]+/0x0\)$'
has wc-fence 'wc_[df][a-z]*' 'kind=fence '

# On each connection a context keeps its kind and its completion queue
# from one completion to the next, and receives complete on one queue,
# everything else on another.
awk '
	/ smbd_wc_(done|flush|error): / {
		for (i = 1; i <= NF; i++) {
			if ($i ~ /^conn=/) c = substr($i, 6)
			if ($i ~ /^cq=/) q = substr($i, 4)
			if ($i ~ /^cid=/) id = substr($i, 5)
			if ($i ~ /^kind=/) k = substr($i, 6)
		}
		key = c " " id
		if (key in kind && (kind[key] != k || cq[key] != q)) { bad++; ex = key }
		if (!(key in kind)) ctxs++
		kind[key] = k; cq[key] = q
		side = k == "recv" ? "r" : "s"
		if ((c, side) in qof && qof[c, side] != q) { bad++; ex = key }
		qof[c, side] = q
		if (!(c in conns)) nconns++
		conns[c] = 1
	}
	END {
		for (c in conns)
			if ((c, "r") in qof && (c, "s") in qof && qof[c, "r"] == qof[c, "s"]) { bad++; ex = c }
		printf "%d %d %d %s\n", ctxs + 0, nconns + 0, bad + 0, ex
	}' $OUT > /tmp/smbd-trace-cid
read -r ctxs nconns bad ex < /tmp/smbd-trace-cid
if [ "$ctxs" -gt 0 ] && [ "$bad" = 0 ]; then
	ok trace/wc-contexts-named "$ctxs contexts on $nconns connections, each on one queue with one kind"
else
	nok trace/wc-contexts-named "$bad inconsistent of $ctxs contexts (conn cid: $ex)"
	grep -E " smbd_wc_[a-z]+: conn=${ex%% *} " $OUT | head -n 20 | sed 's/^/    /'
fi

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

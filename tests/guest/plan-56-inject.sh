#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Guest plan: kernel fault injection into smbd, over soft-RoCE (rxe0) and
# then soft-iWARP (siw0), with smbd_mr_test.ko (tests/mr) on both sides.
# The points: smbd's own (smbd_inject.c: fail_post, fail_dma, fail_mr,
# fail_wc under /sys/kernel/debug/smbd) and the kernel's failslab and
# fail_page_alloc, limited by their stack filters to calls made from
# smbd.ko's text and not through the provider's module (the provider's
# own allocations are its business: rxe once left a queue pair that
# never flushed its receive queue after one failed inside it). For each point: a server ("listen"), the point on, 4
# client threads doing registrations, RDMA reads and writes and messages
# of several segments for 5 s, connecting again after every error
# ("faults"), the point off. Checks: the point fired; every thread ended
# in time; no I/O that succeeded moved other data or touched the bytes
# around its buffer; after a deregistration (every failed one, and 1 in
# 16 of the others) the server RDMA-writes into the old descriptors,
# which must fail and change nothing ([MS-SMBD] 3.1.4.4; on siw this
# draws a TERMINATE, whose late completions once hit a dead stack
# frame); a short run right after sees no error at all. On rxe, ib_cm
# then loses every DREQ, as under failslab when its allocation fails: a
# server ending a connection is silent to its client, whose keep-alive
# must end it within seconds (inject/rxe/lost-dreq). Last,
# per provider, the memory registration check list on a fresh server
# (inject/<prov>/clean-after): every rule, without the two longest
# transfers that plan-47 runs ("mr-brief"). Kernel reports (KASAN,
# lockdep, kmemleak, hung tasks) fail the run as everywhere else. Loads
# smbd.ko if needed; unloads smbd_mr_test.ko. About 4 minutes under TCG.

# shellcheck source=tests/guest/lib-st.sh
. /smbd/lib-st.sh
D=/sys/kernel/debug/smbd_mr_test
FI=/sys/kernel/debug/smbd
SECS=5
THREADS=4
# failslab and fail_page_alloc count no faults of their own: "times"
# counts down from here, one per fault
TIMES=1000000
SAVED=/tmp/inject-saved

# knob DIR FILE VALUE: write VALUE; false when the file is missing
knob() {
	[ -e "$1/$2" ] || return 1
	echo "$3" > "$1/$2"
}

# knob_save DIR FILE...: remember the values knob_restore writes back
knob_save() {
	_kd=$1
	shift
	for _kf in "$@"; do
		[ -e "$_kd/$_kf" ] && echo "$_kd/$_kf $(cat "$_kd/$_kf")" >> $SAVED
	done
}

knob_restore() {
	[ -f $SAVED ] || return 0
	while read -r _kp _kv; do
		echo "$_kv" > "$_kp"
	done < $SAVED
	rm -f $SAVED
}

# Every point off, whatever ended the plan.
all_off() {
	for _ad in $FI/fail_post $FI/fail_dma $FI/fail_mr $FI/fail_wc \
		/sys/kernel/debug/failslab /sys/kernel/debug/fail_page_alloc; do
		knob "$_ad" probability 0
	done
	knob_restore
}
trap all_off EXIT
trap 'all_off; exit 143' INT TERM

# knobs_now DIR: the point's knobs as they are, for a report
knobs_now() {
	for _kf in probability interval times space task-filter \
		stacktrace-depth require-start require-end reject-start \
		reject-end; do
		[ -e "$1/$_kf" ] && printf ' %s=%s' "$_kf" "$(cat "$1/$_kf")"
	done
}

# fired PREFIX N WHAT: the point must have failed something
fired() {
	if [ "$2" -gt 0 ] 2>/dev/null; then
		ok "$1/fired" "$2"
	else
		nok "$1/fired" "${2:-?} faults injected in $SECS s ($3)"
	fi
}

# hex16 STRING: STRING if it is 16 hex digits and not 0, else nothing
hex16() {
	case $1 in
	0000000000000000) ;;
	[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]) echo "$1" ;;
	esac
}

# hex_add HEX16 N: HEX16 + N; module text does not cross a 4 GiB
# boundary, so the upper half stays
hex_add() {
	printf '%s%08x' "$(echo "$1" | cut -c1-8)" \
		$((0x$(echo "$1" | cut -c9-16) + $2))
}

# hex_min A B: the lower of two 16-digit addresses
hex_min() {
	printf '%s\n%s\n' "$1" "$2" | sort | head -n 1
}

# mod_text MODULE: TEXT_START and TEXT_END (16 hex digits), the range of
# MODULE's functions for require-start/-end or reject-start/-end, or
# empty. From its .text section and its first function to its last
# function rounded up to the page, plus a page; never past .text plus
# the module's size (/proc/modules), an upper bound.
mod_text() {
	TEXT_START=""
	TEXT_END=""
	_ts=$(hex16 "$(sed 's/^0x//' "/sys/module/$1/sections/.text" 2>/dev/null)")
	_tz=$(awk -v m="$1" '$1 == m { print $2 }' /proc/modules)
	[ -n "$_ts" ] && [ -n "$_tz" ] || return 0
	grep -i "^[0-9a-f]* t [^ ]*[[:space:]]\\[$1\\]\$" /proc/kallsyms |
		cut -d' ' -f1 | sort > /tmp/inject-syms
	_tf=$(hex16 "$(head -n 1 /tmp/inject-syms)")
	_tl=$(hex16 "$(tail -n 1 /tmp/inject-syms)")
	rm -f /tmp/inject-syms
	[ -n "$_tf" ] && _ts=$(hex_min "$_ts" "$_tf")
	TEXT_START=$_ts
	TEXT_END=$(hex_add "$_ts" "$_tz")
	if [ -n "$_tl" ]; then
		_tb=$(printf '%s%08x' "$(echo "$_tl" | cut -c1-8)" \
			$(((0x$(echo "$_tl" | cut -c9-16) | 0xfff) + 1 + 4096)))
		TEXT_END=$(hex_min "$TEXT_END" "$_tb")
	fi
}

# smbd_point PREFIX ADDR PORT POINT PROBABILITY: one of smbd's points
smbd_point() {
	_p=$1/$4
	_d=$FI/$4
	if [ ! -f "$_d/fired" ]; then
		echo "SMBD-TEST: skip $_p - no $_d/fired (no CONFIG_FAULT_INJECTION_DEBUG_FS)"
		return
	fi
	run "$_p" listen "$2" "$3"
	_f0=$(cat "$_d/fired")
	knob_save "$_d" probability interval times space verbose
	knob "$_d" verbose 0
	knob "$_d" interval 1
	knob "$_d" times -1
	knob "$_d" space 0
	knob "$_d" probability "$5"
	echo "SMBD-INFO: $_p: probability $5 %, interval 1, times -1; $THREADS threads for $SECS s"
	faults "$_p" "$2" "$3"
	# what the point was at the window's end, should it not have fired
	_kn=$(knobs_now "$_d")
	knob "$_d" probability 0
	_f1=$(cat "$_d/fired")
	after_window "$_p" "$2" "$3" $((_f1 - _f0)) "probability $5 %; at the end:$_kn"
}

# faults PREFIX ADDR PORT: the faults command with the point on; if it
# still runs 45 s after its window, smbd's connections go to the log
# while its threads still wait (the command tells where they wait)
faults() {
	: > /tmp/inject-running
	(
		sleep $((SECS + 45))
		[ -e /tmp/inject-running ] || exit 0
		echo "SMBD-INFO: $1: still running $((SECS + 45)) s after the start; smbd's connections:"
		sed 's/^/    /' /sys/kernel/debug/smbd/connections
	) &
	_wp=$!
	run "$1" faults "$2" "$3" $SECS $THREADS
	rm -f /tmp/inject-running
	kill $_wp 2>/dev/null
	wait $_wp 2>/dev/null
}

# after_window PREFIX ADDR PORT FIRED WHAT: the point is off: its knobs
# back, how often it fired, a short run that must see no error, the
# server stopped
after_window() {
	knob_restore
	fired "$1" "$4" "$5"
	run "$1/clean" faults "$2" "$3" 2 2 clean
	run "$1" stop "$2" "$3"
}

# stack_filter DIR PREFIX INTERVAL REQ_START REQ_END REJ_START REJ_END:
# failslab's or fail_page_alloc's knobs (in DIR, saved first for
# knob_restore): every INTERVAL-th call with a frame in REQ_START-REQ_END
# and none in REJ_START-REJ_END (hex, or empty for no such range), all
# the times, sleeping allocations and order-0 pages too; the probability
# is still the caller's to set
stack_filter() {
	knob_save "$1" probability interval times space verbose task-filter \
		stacktrace-depth require-start require-end reject-start \
		reject-end ignore-gfp-wait min-order cache-filter
	knob "$1" verbose 0
	knob "$1" interval "$3"
	knob "$1" times $TIMES
	knob "$1" space 0
	knob "$1" task-filter N
	knob "$1" stacktrace-depth 32
	if [ -n "$6" ]; then
		knob "$1" reject-start "0x$6"
		knob "$1" reject-end "0x$7"
	else
		knob "$1" reject-start 0
		knob "$1" reject-end 0
	fi
	knob "$1" require-start "$4"
	knob "$1" require-end "$5"
	knob "$1" ignore-gfp-wait N ||
		echo "SMBD-INFO: $2: no ignore-gfp-wait: only allocations that cannot sleep fail"
	knob "$1" min-order 0
	knob "$1" cache-filter N
}

# kernel_point PREFIX ADDR PORT NAME PROBABILITY INTERVAL PROVIDER:
# failslab or fail_page_alloc, only for calls with smbd.ko's text on the
# stack and not the provider's (PROVIDER: its module): smbd's own
# allocations and ib_core's on its behalf, not the provider's internals
kernel_point() {
	_p=$1/$4
	_d=/sys/kernel/debug/$4
	if [ ! -d "$_d" ]; then
		echo "SMBD-TEST: skip $_p - no $_d"
		return
	fi
	if [ ! -e "$_d/require-start" ] || [ ! -e "$_d/stacktrace-depth" ]; then
		echo "SMBD-TEST: skip $_p - no stack filter (CONFIG_FAULT_INJECTION_STACKTRACE_FILTER)"
		return
	fi
	if [ -z "$TEXT_START" ]; then
		echo "SMBD-TEST: skip $_p - smbd.ko's text not found"
		return
	fi
	run "$_p" listen "$2" "$3"
	mod_text "$7"
	_js=$TEXT_START _je=$TEXT_END
	smbd_text
	stack_filter "$_d" "$_p" "$6" "0x$TEXT_START" "0x$TEXT_END" "$_js" "$_je"
	knob "$_d" probability "$5"
	echo "SMBD-INFO: $_p: probability $5 %, interval $6, stack filter 0x$TEXT_START-0x$TEXT_END depth 32, not through $7; $THREADS threads for $SECS s"
	faults "$_p" "$2" "$3"
	knob "$_d" probability 0
	_t1=$(cat "$_d/times")
	after_window "$_p" "$2" "$3" $((TIMES - _t1)) "probability $5 %, interval $6"
}

# lost_dreq PREFIX ADDR PORT: ib_cm loses every DREQ (failslab, only
# for calls through its DREQ sender: ib_send_cm_dreq, and the function
# before it when that is its helper), as one whose allocation failed
# under the failslab point does; the server then ends a connection
# without a word to its client, which must find out by its idle
# connection timer (the mr command "silent"). InfiniBand's CM only: on
# iWARP the close is TCP's.
lost_dreq() {
	_p=$1/lost-dreq
	_d=/sys/kernel/debug/failslab
	if [ ! -e "$_d/require-start" ]; then
		echo "SMBD-TEST: skip $_p - no failslab stack filter"
		return
	fi
	awk '$2 ~ /^[tT]$/ { print $1, $3 }' /proc/kallsyms | sort \
		> /tmp/inject-syms
	_e=$(awk 'f { print $1; exit } $2 == "ib_send_cm_dreq" { f = 1 }' /tmp/inject-syms)
	_s=$(awk '$2 == "ib_send_cm_dreq" { print (p == "cm_send_dreq_locked") ? pa : $1; exit }
		  { p = $2; pa = $1 }' /tmp/inject-syms)
	rm -f /tmp/inject-syms
	if [ -z "$(hex16 "$_s")" ] || [ -z "$(hex16 "$_e")" ]; then
		echo "SMBD-TEST: skip $_p - ib_send_cm_dreq not in /proc/kallsyms"
		return
	fi
	run "$_p" listen "$2" "$3"
	stack_filter "$_d" "$_p" 1 "0x$_s" "0x$_e" "" ""
	knob "$_d" probability 100
	echo "SMBD-INFO: $_p: every allocation through 0x$_s-0x$_e (ib_cm's DREQ) fails"
	run "$_p" silent "$2" "$3"
	knob "$_d" probability 0
	_t1=$(cat "$_d/times")
	knob_restore
	fired "$_p" $((TIMES - _t1)) "ib_cm's DREQ"
	run "$_p" stop "$2" "$3"
}

# clean_after PREFIX ADDR PORT: the mr-brief command's check list on a
# fresh server, as one result; its failed checks are listed as info
clean_after() {
	run "$1/clean-after" listen "$2" "$3"
	_t0=$(uptime_s)
	: > /tmp/st-result
	if echo "mr-brief $2 $3" > $D/ctl 2>/tmp/st-ctl.err; then
		cat $D/result > /tmp/st-result
	else
		echo "not ok mr - writing \"mr-brief $2 $3\" failed: $(cat /tmp/st-ctl.err)" > /tmp/st-result
	fi
	_ok=$(grep -c '^ok ' /tmp/st-result)
	_bad=$(grep -c '^not ok ' /tmp/st-result)
	while IFS= read -r _l; do
		case $_l in
		"ok "*) ;;
		"info "*) echo "SMBD-INFO: $1/clean-after: ${_l#info }" ;;
		*) echo "SMBD-INFO: $1/clean-after: $_l" ;;
		esac
	done < /tmp/st-result
	if [ "$_bad" -eq 0 ] && [ "$_ok" -gt 0 ]; then
		ok "$1/clean-after" "the $_ok checks of the mr-brief command passed"
	else
		nok "$1/clean-after" "$_bad of $((_ok + _bad)) checks of the mr-brief command failed"
	fi
	echo "    (mr took $(since "$_t0") s)"
	run "$1/clean-after" stop "$2" "$3"
}

# smbd_text: mod_text smbd
smbd_text() { mod_text smbd; }

st_insmod inject smbd_mr_test || exit 0
rm -f $SAVED
smbd_text
[ -n "$TEXT_START" ] &&
	echo "SMBD-INFO: inject: smbd.ko's text for the stack filters: 0x$TEXT_START to 0x$TEXT_END"

# Faults per point: smbd's points are called thousands of times in 5 s
# (fail_mr once per I/O, hence more); failslab once in 4 of smbd's
# allocations at 1 %, so that most connects still succeed (once in 8,
# siw's window saw as few as 4 faults: 2 % of its windows would have
# seen none).
for p in "rxe:$RXE_ADDR:6545" "siw:$SIW_ADDR:6555"; do
	name=${p%%:*}
	addr=${p#*:}
	port=${addr#*:}
	addr=${addr%:*}
	prov=rdma_rxe
	[ "$name" = siw ] && prov=siw
	smbd_point "inject/$name" "$addr" "$port" fail_post 2
	smbd_point "inject/$name" "$addr" $((port + 1)) fail_dma 2
	smbd_point "inject/$name" "$addr" $((port + 2)) fail_mr 5
	smbd_point "inject/$name" "$addr" $((port + 3)) fail_wc 2
	kernel_point "inject/$name" "$addr" $((port + 4)) failslab 1 4 $prov
	kernel_point "inject/$name" "$addr" $((port + 5)) fail_page_alloc 2 1 $prov
	[ "$name" = rxe ] && lost_dreq "inject/$name" "$addr" $((port + 7))
	clean_after "inject/$name" "$addr" $((port + 6))
done

if $RMMOD smbd_mr_test; then ok inject/unload-smbd_mr_test; else nok inject/unload-smbd_mr_test; fi

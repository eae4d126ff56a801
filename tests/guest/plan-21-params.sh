#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Guest plan: smbd's module parameters. Each one reads its documented
# default, refuses a value just outside its range (and keeps the old
# one), takes one at each end of the range, and is put back. Loads
# smbd.ko if it is not loaded and leaves it loaded.

# shellcheck source=tests/guest/lib-report.sh
. /smbd/lib-report.sh

load_smbd
P=/sys/module/smbd/parameters

# takes NAME DEFAULT VALUE...: NAME takes each VALUE; then DEFAULT again
takes() {
	_n=$1 _def=$2 _f=$P/$1
	shift 2
	for _g in "$@"; do
		if echo "$_g" > "$_f" 2>/dev/null && [ "$(cat "$_f")" = "$_g" ]; then
			ok "params/$_n/takes-$_g"
		else
			nok "params/$_n/takes-$_g" "now $(cat "$_f")"
		fi
	done
	echo "$_def" > "$_f"
}

# param NAME DEFAULT MIN MAX: the checks of one parameter
param() {
	n=$1 def=$2 min=$3 max=$4 f=$P/$1
	if [ ! -f "$f" ]; then
		nok "params/$n" "no $f"
		return
	fi
	v=$(cat "$f")
	[ "$v" = "$def" ] && ok "params/$n/default" "$v" ||
		nok "params/$n/default" "reads $v, documented $def"
	bad=""
	[ "$min" -gt 0 ] && bad="$((min - 1))"
	bad="$bad $((max + 1)) x"
	for b in $bad; do
		if echo "$b" > "$f" 2>/dev/null; then
			nok "params/$n/refuses-$b" "took $b, now $(cat "$f")"
		elif [ "$(cat "$f")" != "$def" ]; then
			nok "params/$n/refuses-$b" "refused, but changed to $(cat "$f")"
		else
			ok "params/$n/refuses-$b"
		fi
	done
	takes "$n" "$def" "$min" "$max"
}

param send_credit_target 64 1 65535
param receive_credit_max 64 1 65535
param max_send_size 8192 128 65536
param max_receive_size 8192 128 65536
param large_message_size 32768 0 65536
param keepalive_interval 120 0 3600
param keepalive_timeout 5 1 600
param negotiate_timeout 120 1 600
param responder_negotiate_timeout 5 1 600
param max_negotiating 32 1 4096
param copy_buffers 0 0 65535
param posted_write_max 16384 0 65536

# choice NAME DEFAULT VALUE...: a parameter that takes one of some words
choice() {
	n=$1 def=$2 f=$P/$1
	shift 2
	v=$(cat "$f" 2>/dev/null)
	[ "$v" = "$def" ] && ok "params/$n/default" "$v" ||
		nok "params/$n/default" "reads $v, documented $def"
	if echo bogus > "$f" 2>/dev/null || [ "$(cat "$f")" != "$def" ]; then
		nok "params/$n/refuses-bogus" "now $(cat "$f")"
	else
		ok "params/$n/refuses-bogus"
	fi
	takes "$n" "$def" "$@"
}

choice cq_poll softirq softirq workqueue

# Every parameter the module has is one of those above.
extra=$(ls $P | grep -vxE 'send_credit_target|receive_credit_max|max_send_size|max_receive_size|large_message_size|keepalive_interval|keepalive_timeout|negotiate_timeout|responder_negotiate_timeout|max_negotiating|copy_buffers|posted_write_max|cq_poll' | tr '\n' ' ')
[ -z "$extra" ] && ok params/all-checked || nok params/all-checked "untested: $extra"

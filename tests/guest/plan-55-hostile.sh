#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Guest plan: smbd against a hostile raw-verbs SMB Direct peer
# (tests/hostile/smbd_hostile.c), in both roles, over rxe and over siw:
# negotiation messages at and beyond their limits, malformed and mutated
# Data Transfer messages, keep-alive storms, credit abuse, a flood of
# connections that never negotiate; smbd's health checked throughout.
# SMBD_HOSTILE_SEED (kernel command line smbdtest.hostile_seed=N) fixes
# the seed; otherwise it comes from the clock and is printed.
# Loads smbd.ko if needed; unloads smbd_hostile.ko.

# shellcheck source=tests/guest/lib-st.sh
. /smbd/lib-st.sh
D=/sys/kernel/debug/smbd_hostile
MSGS=10000
FATAL=100

seed=""
# shellcheck disable=SC2013 # words, not lines
for a in $(cat /proc/cmdline); do
	case $a in smbdtest.hostile_seed=*) seed=${a#*=} ;; esac
done
[ -n "$seed" ] || seed=$(( $(date +%s) % 1000000 + 1 ))
echo "SMBD-INFO: hostile seed $seed (smbdtest.hostile_seed=$seed repeats this run)"

if ! grep -q '^smbd ' /proc/modules; then
	if $INSMOD /smbd/smbd.ko; then ok hostile/load-smbd; else nok hostile/load-smbd; fi
fi
if ! $INSMOD /smbd/smbd_hostile.ko; then
	nok hostile/load-smbd_hostile
	exit 0
fi
ok hostile/load-smbd_hostile

t0=$(uptime_s)
port=7300
for p in rxe:192.0.2.1 siw:192.0.2.17; do
	name=${p%%:*}
	addr=${p#*:}
	for role in server client; do
		port=$((port + 1))
		run "hostile/$name" "$role" "$addr" $port $seed $MSGS $FATAL
	done
done
echo "SMBD-INFO: hostile plan took $(awk -v a="$t0" -v b="$(uptime_s)" 'BEGIN { printf "%.1f", b - a }') s"

if $RMMOD smbd_hostile; then ok hostile/unload-smbd_hostile; else nok hostile/unload-smbd_hostile; fi

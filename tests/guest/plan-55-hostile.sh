#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Guest plan: smbd against a hostile raw-verbs SMB Direct peer
# (tests/hostile/hostile.c), in both roles, over rxe and over siw:
# negotiation messages at and beyond their limits, malformed and mutated
# Data Transfer messages, keep-alive storms, credit abuse, a flood of
# connections that never negotiate; smbd's health checked throughout.
# rxe and siw run at once, in the module's two lanes (smbd_hostile0 and
# smbd_hostile1), each server role then client role.
# The seed comes from the clock and is printed; smbdtest.hostile_seed=N
# on the kernel command line repeats a run; smbdtest.hostile_msgs=N sets
# the mutated legal messages per role (6000; tests/soak.sh hostile runs
# 40000); smbdtest.hostile_lanes=PROVIDER:ROLE,... the lanes' parts
# (all four by default; ROLE is the hostile peer's. The test command
# runs the peer as the server over rxe, smbd connecting, where the
# RoCE-only cases are, and as the client over siw; tests/soak.sh hostile
# runs all four).
# Loads smbd.ko if needed; unloads smbd_hostile.ko.

# shellcheck source=tests/guest/lib-st.sh
. /smbd/lib-st.sh
MSGS=$(karg smbdtest.hostile_msgs 6000)
case $MSGS in '' | *[!0-9]*) MSGS=6000 ;; esac
FATAL=60
LANES=$(karg smbdtest.hostile_lanes rxe:server,rxe:client,siw:server,siw:client)
# lane_on PROVIDER ROLE: that lane's part runs (PROVIDER:* for any role)
lane_on() {
	case ",$LANES," in *",$1:$2,"*) return 0 ;; esac
	[ "$2" = "*" ] && case ",$LANES," in *",$1:"*) return 0 ;; esac
	return 1
}

st_seed hostile

st_insmod hostile smbd_hostile || exit 0

# lane <n> <provider> <addr> <port>: both roles, results to /tmp
lane() {
	for role in server client; do
		if ! lane_on "$2" $role; then
			set -- "$1" "$2" "$3" $(($4 + 1))
			continue
		fi
		t=$(uptime_s)
		if echo "$role $3 $4 $seed $MSGS $FATAL" > "/sys/kernel/debug/smbd_hostile$1/ctl"; then
			cat "/sys/kernel/debug/smbd_hostile$1/result" > "/tmp/hostile-$2-$role"
		else
			echo "not ok $role/command - writing it failed" > "/tmp/hostile-$2-$role"
		fi
		echo "info $role took $(since "$t") s" >> "/tmp/hostile-$2-$role"
		port=$(($4 + 1))
		set -- "$1" "$2" "$3" $port
	done
}

mark="hostile-mark-$(uptime_s)"
echo "$mark" > /dev/kmsg
t0=$(uptime_s)
lane 0 rxe "$RXE_ADDR" 7401 &
p0=$!
lane 1 siw "$SIW_ADDR" 7411 &
p1=$!
wait $p0 $p1
echo "SMBD-INFO: hostile plan took $(since "$t0") s for $LANES"

for f in rxe-server rxe-client siw-server siw-client; do
	lane_on "${f%%-*}" "${f#*-}" || continue
	prefix=hostile/${f%%-*}
	if [ ! -s /tmp/hostile-$f ]; then
		nok "$prefix/${f#*-}" "no result"
		continue
	fi
	st_report "$prefix" "${f#*-}" /tmp/hostile-$f
done

# The stall case on RoCE: smbd probed our live queue pair while it waited
# for the Negotiate Response, and still waited for its timer (the timer's
# line counts the probes answered; siw is never probed).
n=$(dmesg | sed -n "/$mark/,\$p" | grep -c 'initiator negotiation timed out (.*; [1-9][0-9]* probes answered')
if ! lane_on rxe server; then
	:	# smbd never connected over rxe
elif [ "$n" -ge 1 ]; then ok hostile/rxe/stall-probes-answered "$n"; else nok hostile/rxe/stall-probes-answered "no timeout line with probes answered"; fi

# RDMA Writes with Immediate on RoCE (write-imm-*-ends): smbd's sockets
# whose connection they ended are kept until the unload below; each must
# have refused the write as "not a send" (no API gives the reason), not
# parsed its receive buffer (a zero-length write: "short message").
kept=$(cat /tmp/hostile-rxe-server /tmp/hostile-rxe-client 2>/dev/null | grep -c "socket kept until unload")
found=$(grep -lx '3\.1\.5\.8 data: not a send: 1' /sys/kernel/debug/smbd/conn/*/refusals 2>/dev/null | wc -l)
if ! lane_on rxe "*"; then
	:	# no lane over rxe
elif [ "$kept" -ge 1 ] && [ "$found" -ge "$kept" ]; then
	ok hostile/rxe/write-imm-refused-not-a-send "$found of $kept kept sockets"
else
	why=$(grep -h ': [1-9][0-9]*$' /sys/kernel/debug/smbd/conn/*/refusals 2>/dev/null | sort | uniq -c | tr -s ' \n' ' ')
	nok hostile/rxe/write-imm-refused-not-a-send "$found of $kept kept sockets refused it as 'not a send'; their refusals:${why:- none}"
fi

if $RMMOD smbd_hostile; then ok hostile/unload-smbd_hostile; else nok hostile/unload-smbd_hostile; fi

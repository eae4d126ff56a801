#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Guest library for plans whose commands may hang in the kernel
# (smb/plan-74-removal.sh, smb/plan-75-multichannel.sh): run a command
# under a bound, and when it outlives it, print its and its children's
# kernel stacks and leave it; and what those plans share around it
# (smbd's debugfs snapshots, the device coming back, ksmbd's stop). The
# plan sets T (its work directory), PLAN_NAME (its name in log lines),
# LIMIT (seconds after which an rmmod has hung), MNT (its cifs mount
# point), RDMA (the rdma tool), DBG (smbd's debugfs directory) and CONNS
# ($DBG/connections). Needs lib-smb.sh.

indent() { sed "s/^/    $1/"; }
# blog MSG...: a log line of the plan ("    PLAN_NAME: MSG...")
blog() { echo "    $PLAN_NAME: $*"; }

# descendants PID: every process below PID
descendants() {
	cat /proc/[0-9]*/stat 2>/dev/null | awk -v root="$1" '
		{ pid = $1; sub(/.*\) /, ""); pp[pid] = $2 }
		END {
			n = 1; q[1] = root
			for (i = 1; i <= n; i++)
				for (p in pp)
					if (pp[p] == q[i]) { q[++n] = p; print p }
		}'
}

# stacks PID...: each PID's and its descendants' kernel stacks
stacks() {
	for _sp in "$@" $(for _sq in "$@"; do descendants "$_sq"; done); do
		[ -r "/proc/$_sp/stack" ] || continue
		blog "task $_sp $(cat "/proc/$_sp/comm" 2>/dev/null) ($(sed 's/.*) //' "/proc/$_sp/stat" 2>/dev/null | cut -d' ' -f1)):"
		indent "      " < "/proc/$_sp/stack"
	done
}

# bounded SECS CMD...: run CMD (a command or a function) in the
# background, wait up to SECS for it to end. B_RC: its exit status, or
# "hung" (it and its children are then sent SIGKILL, which a task stuck
# in the kernel outlives; their stacks are printed, HUNG=1); B_T: the
# seconds it took; $T/b.out: its output. Returns 0 iff CMD ended with 0.
bounded() {
	_bs=$1
	shift
	rm -f "$T/b.rc"
	_bt0=$(uptime_s)
	("$@" > "$T/b.out" 2>&1; echo $? > "$T/b.rc") &
	_bp=$!
	_bn=$((_bs * 5))
	while [ ! -s "$T/b.rc" ] && [ $_bn -gt 0 ]; do
		sleep 0.2
		_bn=$((_bn - 1))
	done
	# shellcheck disable=SC2034 # the plans read it
	B_T=$(since "$_bt0")
	if [ -s "$T/b.rc" ]; then
		wait $_bp
		B_RC=$(cat "$T/b.rc")
		return "$B_RC"
	fi
	B_RC=hung
	# shellcheck disable=SC2034 # the plans read it
	HUNG=1
	blog "still running after $_bs s: $*"
	stacks $_bp
	# shellcheck disable=SC2046 # a list of pids
	kill -9 $_bp $(descendants $_bp) 2>/dev/null
	return 1
}

# tbounded SECS PROGRAM...: PROGRAM under timeout SECS (it ends one that
# runs too long: status 143), itself bounded at SECS + 10 (for one stuck
# in the kernel, which no signal ends)
tbounded() {
	_ts=$1
	shift
	bounded $((_ts + 10)) timeout "$_ts" "$@"
}

# show_out: the output of the last bounded command
show_out() { [ -s "$T/b.out" ] && indent "  " < "$T/b.out"; }

rmmod_q() { $SMB_RMMOD "$1" 2>/dev/null; }
# rmmod_wait NAME: rmmod NAME, retrying while it is in use (cifs and
# ksmbd drop their last references from worker threads), up to LIMIT - 5 s
rmmod_wait() {
	smb_loaded "$1" || return 0
	smb_wait $((LIMIT - 5)) rmmod_q "$1" && return 0
	$SMB_RMMOD "$1"
	grep "^$1 " /proc/modules
	return 1
}

# past T0 SECS: SECS have passed since uptime T0
past() { awk -v a="$1" -v s="$2" -v b="$(uptime_s)" 'BEGIN { exit !(b - a >= s) }'; }

# why [SECS]: what the last bounded command came to, for a report (SECS:
# its bound)
why() {
	case $B_RC in
	hung) echo "hung (still running after ${1:-its limit}${1:+ s})" ;;
	143) echo "timed out (rc 143)" ;;
	*) echo "rc=$B_RC" ;;
	esac
}

mounted() { grep -q " $MNT cifs " /proc/mounts; }

# device_back DEV NETDEV: DEV active on NETDEV, and in smbd's table when
# smbd is loaded
device_back() {
	$RDMA link show 2>/dev/null | grep -Eq "^link $1/1 .*state ACTIVE.* netdev $2( |\$)" &&
		{ [ ! -e "$DBG/devices" ] || grep -q "^$1	" "$DBG/devices"; }
}

# snapshot: smbd's debugfs connections into $T/conns (bounded: a read
# that hangs sets SNAP_HUNG, and no more reads are tried until the plan
# clears it)
snapshot() {
	[ "$SNAP_HUNG" = 1 ] && return 1
	if bounded 10 cat "$CONNS"; then
		cp "$T/b.out" "$T/conns"
		return 0
	fi
	[ "$B_RC" = hung ] && SNAP_HUNG=1
	return 1
}

# connected_on DEV: in the last snapshot, a connection still connected on DEV
connected_on() {
	awk -v d="$1" '($1 == "initiator" || $1 == "responder") &&
		$2 == "connected" && $4 == d { f = 1 } END { exit !f }' "$T/conns"
}

# no_connections SECS: within SECS, smbd shows no socket at all (no
# connection, no listener)
no_connections() {
	_nt=$(uptime_s)
	while :; do
		if snapshot; then
			grep -qE '^(initiator|responder|listener) ' "$T/conns" || return 0
		fi
		[ "$SNAP_HUNG" = 1 ] && return 1
		past "$_nt" "$1" && return 1
		sleep 0.2
	done
}

# ksmbd_stop: ksmbd.control -s (ksmbd stops: the kill_server write
# returns once every connection is down), then ksmbd.mountd ends.
# In this shell, whose child ksmbd.mountd is.
ksmbd_stop() {
	# shellcheck disable=SC2034 # the plans read B_T
	_rc=0 B_RC=0 B_T=0
	if [ -e "$SMB_CTL_DIR/kill_server" ]; then
		tbounded "$LIMIT" $SMB_CONTROL -s || _rc=1
	fi
	# ksmbd.control hung: ksmbd.mountd may never be told
	[ "$B_RC" = hung ] && SMB_MOUNTD_PID=
	smb_mountd_end || _rc=2
	return $_rc
}

# stack_down T: cifs unloaded, ksmbd stopped and unloaded, the export
# unmounted, then no smbd socket left within 10 s; each step bounded by
# LIMIT and a check T/STEP. TEARDOWN_HUNG=1 when a step hung.
# shellcheck disable=SC2034 # the plans read TEARDOWN_HUNG
stack_down() {
	bounded "$LIMIT" rmmod_wait cifs
	_rc=$?
	result $_rc "$1/rmmod-cifs" "$(why "$LIMIT"), $B_T s"
	[ $_rc = 0 ] || { show_out; [ "$B_RC" = hung ] || smb_task_stacks; }
	[ "$B_RC" = hung ] && TEARDOWN_HUNG=1

	ksmbd_stop
	_rc=$?
	result $_rc "$1/ksmbd-stop" "ksmbd.control -s $(why "$LIMIT"), $B_T s; step $_rc (1 ksmbd.control, 2 ksmbd.mountd did not exit)"
	[ $_rc = 0 ] || show_out
	if [ "$B_RC" = hung ]; then
		TEARDOWN_HUNG=1
		nok "$1/rmmod-ksmbd" "not tried: stopping ksmbd hung"
	else
		bounded "$LIMIT" rmmod_wait ksmbd
		_rc=$?
		result $_rc "$1/rmmod-ksmbd" "$(why "$LIMIT"), $B_T s"
		[ $_rc = 0 ] || { show_out; [ "$B_RC" = hung ] || smb_task_stacks; }
		[ "$B_RC" = hung ] && TEARDOWN_HUNG=1
	fi
	grep -q " $SMB_EXPORT tmpfs " /proc/mounts && umount "$SMB_EXPORT"

	SNAP_HUNG=0
	no_connections 10
	result $? "$1/no-connection-left" "$(grep -E '^(initiator|responder|listener) ' "$T/conns" 2>/dev/null | head -n 4 | tr '\n' ';')"
}

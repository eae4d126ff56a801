#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Guest plan (the SMB VM, tests/run.sh): the RDMA device removed under
# real SMB I/O, with cifs on smbd (adapters/cifs) mounting ksmbd on smbd
# (adapters/ksmbd), over rxe and then siw. Each round:
#   mount; 2 writers and 2 readers (dd, O_DIRECT, 1 MiB requests, 48 MiB
#   each) in the background, and smbd's debugfs (connections,
#   conn/*/state) read in a loop; after ~2 s of I/O, rdma link delete.
#   The delete must return (60 s); every connection on the device must
#   leave "connected" within 10 s (every consumer, cifs and ksmbd, is
#   told); every dd must end within 60 s of the delete (done or an I/O
#   error: both fine; still running: hung); debugfs must stay readable
#   and print the removed device's name or "-", nothing else; umount -f
#   must return; the device comes back (rdma link add) and a fresh mount
#   moves a file both ways intact.
# Then the same rounds with a device that dies instead (issue 40; mlx5's
# internal error): smbd's debugfs smbd/dev_fatal plays
# IB_EVENT_DEVICE_FATAL on it (each queue pair flushed first, as a
# device that stopped leaves it; then every post refused and nothing
# drained); the same checks, every consumer told and every dd ended
# within seconds; then health recovery (rdma link delete and add) and a
# fresh mount.
# Then a cable pulled (issue 40): ip link set NETDEV down under the same
# I/O, for 10 s and 15 s over siw (a 1 s outage ends there as a 10 s one
# does: the connections kept) and for 1 s and 15 s over rxe (there 10 s
# ends as 1 s does: the queue pairs fail at once), then up. The 15 s
# round runs with the SMB timeouts shortened so that the outage outlasts
# them: the mount's echo_interval=2 (cifs calls the server unresponsive
# after 3 echo intervals) and smbd's keep-alive of 2 s with 2 s for its
# answer ([MS-SMBD] 3.1.6.2), on both ends. Over rxe the down link leaves no
# route to the peer's address (the requester's packets are refused, the
# queue pair errors at once); over siw TCP retransmits under the queue
# pair. Either way: the down and up return; every dd ends within 60 s of
# the up (done, or an I/O error); debugfs stays readable and sane; the
# device is active again; the same mount moves a file both ways intact
# (the I/O resumed, or cifs reconnected); umount returns.
# After the rounds, rmmod cifs, stopping ksmbd (ksmbd.control -s) and
# rmmod ksmbd must each return within 60 s (both once hung after a
# removal), and smbd must hold no connection. At the end the devices are
# as /init made them, and smbd.ko unloads (as after plan-72).
# Every command that might hang runs in the background under a bound
# (bounded): a task stuck in the kernel cannot stop the plan.
#   smbdtest.removal_rounds=N     rounds per provider (1)
#   smbdtest.fatal_rounds=N       dying-device rounds per provider (1)
#   smbdtest.cable_downs=S,S,...  a cable round per provider for each down
#                                 time in seconds (10,15; 0: none)
#   smbdtest.cable_downs_rxe=S,S,...  the same over rxe (1,15)
#   smbdtest.removal_providers=P,...  rxe,siw (the default) or one of them
#   smbdtest.removal_prefix=NAME  the checks' names begin with NAME/ (removal)
# Debian's kernels (the stock-kernel VMs) run it over rxe (no siw there);
# dev_fatal is smbd's own, there without CONFIG_FAULT_INJECTION.

# shellcheck source=tests/guest/lib-smbpair.sh
. /smbd/lib-smbpair.sh
# shellcheck source=tests/guest/lib-bounded.sh
. /smbd/lib-bounded.sh
SMB_CIFS_KO=/smbd/cifs.ko	# both on smbd
SMB_KSMBD_KO=/smbd/ksmbd.ko

RDMA=/usr/bin/rdma
[ -x $RDMA ] || RDMA=/sbin/rdma
IP=/usr/sbin/ip
[ -x $IP ] || IP=/sbin/ip
DBG=/sys/kernel/debug/smbd
CONNS=$DBG/connections
MNT=/mnt/removal
T=/tmp/removal		# the plan's work files
PLAN_NAME=removal	# its log lines: "    removal: ..." (blog)
# the RDMA devices at the start: ksmbd's 445 listeners name theirs
DEVS=
for _d in /sys/class/infiniband/*; do
	[ -e "$_d" ] && DEVS="$DEVS ${_d##*/}"
done
ROUNDS=$(karg smbdtest.removal_rounds 1)	# rounds per provider
case $ROUNDS in '' | *[!0-9]*) ROUNDS=1 ;; esac
FATAL_ROUNDS=$(karg smbdtest.fatal_rounds 1)	# and with a dying device
case $FATAL_ROUNDS in '' | *[!0-9]*) FATAL_ROUNDS=1 ;; esac
# and with a cable pulled: the down times
CABLE_DOWNS=$(karg smbdtest.cable_downs 10,15 | tr ',' ' ')
case $CABLE_DOWNS in 0 | *[!0-9\ ]*) CABLE_DOWNS="" ;; esac
# over rxe a 10 s outage ends as a 1 s one does (the queue pairs fail at
# once, rxe's CM with them): not run there unless asked for
CABLE_DOWNS_RXE=$(karg smbdtest.cable_downs_rxe 1,15 | tr ',' ' ')
case $CABLE_DOWNS_RXE in 0 | *[!0-9\ ]*) CABLE_DOWNS_RXE="" ;; esac
CABLE_LONG=15		# a down time this long outlasts the shortened timeouts
# the providers (Debian's kernels have no siw)
PROVIDERS=$(karg smbdtest.removal_providers rxe,siw | tr ',' ' ')
RP=$(karg smbdtest.removal_prefix removal)	# the checks' names begin so
PARAMS=/sys/module/smbd/parameters
DD_MB=${DD_MB:-48}	# MiB each writer and each reader moves (1 MiB requests)
IO_WAIT=2		# seconds of I/O before the delete
IO_FLOW=12		# then at most this long for the writers' first MiB
LIMIT=60		# a command (or a dd after the delete) running longer has hung
TOLD=10			# seconds after the delete for no connection on the device
CHECK_MB=4		# the fresh mount's file, each way

# range "V...": "min..max" of the values, "-" when none
range() {
	echo "$1" | awk '{ for (i = 1; i <= NF; i++) { v = $i + 0
		if (n++ == 0 || v < lo) lo = v; if (n == 1 || v > hi) hi = v } }
		END { if (n) printf "%.1f..%.1f", lo, hi; else printf "-" }'
}

# dbg_loop: read debugfs connections and conn/*/state until $T/dbg.stop
# exists: their first lines to stdout ("C " a socket of connections, "S "
# the state and device of a state file), "@" before each pass, "E ..."
# when connections gave nothing (the listener is always there). A
# conn/<id> directory may go between the glob and the read: no error.
dbg_loop() {
	while [ ! -e $T/dbg.stop ]; do
		echo "@ $(uptime_s)"
		_c=0
		{ while IFS= read -r _l; do
			case $_l in
			initiator* | responder* | listener*)
				echo "C $_l"
				_c=$((_c + 1))
				;;
			esac
		done < $CONNS; } 2>/dev/null
		[ $_c -gt 0 ] || echo "E connections: nothing read"
		for _f in "$DBG"/conn/*/state; do
			{ while IFS= read -r _l; do
				case $_l in state* | device*) echo "S $_l" ;; esac
			done < "$_f"; } 2>/dev/null
		done
		sleep 0.05
	done
}

# dbg_bad DEV: the debugfs lines of $T/dbg.log that are not sane (at most
# 5 printed): a socket line must be "ROLE STATE conn=N DEV|- ...", a
# state file's state a known state and its device "-", DEV or, for a
# listener of ksmbd's bound to one address (a 445 listener on another
# device), one of the devices there were before ($DEVS)
dbg_bad() {
	awk -v dev="$1" -v devs=" $DEVS " '
		function st(s) {
			return s ~ /^(created|connecting|listening|negotiating|refusing|connected|disconnecting|closed)$/
		}
		function known(d) { return d == dev || d == "-" || index(devs, " " d " ") }
		/^C / {
			good = $2 ~ /^(initiator|responder|listener)$/ && st($3) &&
			       $4 ~ /^conn=[0-9]+$/ &&
			       ($5 == dev || $5 == "-" || ($2 == "listener" && known($5)))
		}
		/^S / && $2 == "state" { good = NF == 3 && st($3) }
		/^S / && $2 == "device" { good = NF == 3 && known($3) }
		/^S / && $2 != "state" && $2 != "device" { good = 0 }
		/^[CS] / && !good { if (n++ < 5) print }
		END { exit n == 0 }' $T/dbg.log
}

# written: the bytes the writers got onto the server's disk
written() {
	_s=0
	for _f in "$share/w1" "$share/w2"; do
		[ -f "$_f" ] && _s=$((_s + $(stat -c %s "$_f")))
	done
	echo $_s
}

IO="w1 w2 r1 r2"	# the dd's: writers w*, readers r* (of files on the share)
# io_start: the dd's in the background (pid_X; end_X and rc_X once ended)
io_start() {
	for _io in $IO; do
		case $_io in
		w*) dd if=/dev/zero of="$MNT/$_io" bs=1M count="$DD_MB" oflag=direct 2> "$T/io-$_io.err" & ;;
		r*) dd if="$MNT/$_io" of=/dev/null bs=1M iflag=direct 2> "$T/io-$_io.err" & ;;
		esac
		eval "pid_$_io=\$! end_$_io= rc_$_io="
	done
}
# io_poll T0: note the dd's that ended (end_X: seconds since uptime T0);
# returns 0 once all have
io_poll() {
	_all=0 _ip=""
	for _io in $IO; do
		eval "_ip=\$pid_$_io _ie=\$end_$_io"
		[ -n "$_ie" ] && continue
		if kill -0 "$_ip" 2>/dev/null; then
			_all=1
			continue
		fi
		wait "$_ip"
		_ir=$?
		_ie=$(since "$1")
		eval "rc_$_io=\$_ir end_$_io=\$_ie"
	done
	return $_all
}
# io_running: the dd's still running
io_running() {
	for _io in $IO; do
		eval "_ip=\$pid_$_io _ie=\$end_$_io"
		[ -z "$_ie" ] && kill -0 "$_ip" 2>/dev/null && printf ' %s' "$_io"
	done
}
# io_how: each dd's end and status, with its error message
io_how() {
	for _io in $IO; do
		eval "_ie=\$end_$_io _ir=\$rc_$_io"
		_m=$(grep -m1 '^dd:' "$T/io-$_io.err" 2>/dev/null | sed 's/^dd: //')
		if [ -n "$_ie" ]; then
			printf ' %s %s s rc %s%s;' "$_io" "$_ie" "$_ir" "${_m:+ ($_m)}"
		else
			printf ' %s running;' "$_io"
		fi
	done
}

# io_ended WHAT: every dd ended within LIMIT of the event (WHAT: its
# name; t_ev its uptime); a dd still running is shown, killed, and HUNG
# set if SIGKILL does not end it
io_ended() {
	hung=$(io_running)
	for _io in $IO; do
		eval "_ie=\$end_$_io"
		[ -n "$_ie" ] && END_TS="$END_TS $_ie"
	done
	if [ -z "$hung" ]; then
		ok "$t/io-ended" "every dd within $LIMIT s of the $1"
	else
		nok "$t/io-ended" "hung:$hung still running $LIMIT s after the $1"
		for _io in $hung; do
			eval "_ip=\$pid_$_io"
			stacks "$_ip"
			kill -9 "$_ip" 2>/dev/null
		done
		smb_task_stacks
		sleep 5
		io_poll "$t_ev"
		if [ -n "$(io_running)" ]; then
			blog "after SIGKILL, still there:$(io_running)"
			HUNG=1
		fi
	fi
}

# dbg_end WHAT: smbd's debugfs a moment longer, then its reader stops: it
# must have read throughout, and only sane lines
dbg_end() {
	sleep 2
	[ $SNAP_HUNG = 0 ] && snapshot && grep -E "^(initiator|responder) " $T/conns | indent "smbd: "
	touch $T/dbg.stop
	dbg_rc=0
	if smb_wait 10 smb_gone $dbg_pid; then
		wait $dbg_pid
	else
		dbg_rc=1
		HUNG=1
		stacks $dbg_pid
		# shellcheck disable=SC2046 # a list of pids
		kill -9 $dbg_pid $(descendants $dbg_pid) 2>/dev/null
	fi
	passes=$(awk '/^D1$/ { on = 1; next } on && /^@ / { n++ } END { print n + 0 }' $T/dbg.log)
	# the longest pass (a read that blocked shows here)
	gap=$(awk '/^@ / { if (n++ && $2 - t > g) g = $2 - t; t = $2 } END { printf "%.1f", g }' $T/dbg.log)
	DBG_GAPS="$DBG_GAPS $gap"
	errs=$(grep -c '^E ' $T/dbg.log)
	[ "$errs" = 0 ] || dbg_rc=2
	[ "$passes" -ge 2 ] || dbg_rc=3
	[ $SNAP_HUNG = 0 ] || dbg_rc=4
	result $dbg_rc "$t/debugfs-readable" "$(grep -c '^@ ' $T/dbg.log) passes, $passes after the $1 returned, the longest $gap s; step $dbg_rc (1 the reader hung, 2 connections read empty $errs times, 3 fewer than 2 passes after it, 4 a read hung)"
	if bad=$(dbg_bad "$dev"); then
		nok "$t/debugfs-sane" "$(echo "$bad" | tr '\n' ';')"
	else
		ok "$t/debugfs-sane" "$(grep -c '^[CS] ' $T/dbg.log) lines read, device $dev or -"
	fi
	rm -f $T/dbg.log
}

# same_mount_io: the check file written and read back over the mount the
# I/O ran on; sets cio_rc (0 or the failed step), cio_wr/cio_rd and
# cio_err (what a dd that failed said, its last line)
same_mount_io() {
	cio_rc=0 cio_wr="" cio_rd="" cio_srv="" cio_got="" cio_err=""
	bounded $LIMIT dd if=$T/check of=$MNT/check bs=1M oflag=direct || cio_rc=1
	cio_wr=$B_T
	if [ $cio_rc = 0 ]; then
		cio_srv=$(md5 "$share/check")
		[ "$cio_srv" = "$CHECK_MD5" ] || cio_rc=2
	fi
	if [ $cio_rc = 0 ]; then
		bounded $LIMIT dd if=$MNT/check of=$T/check.back bs=1M iflag=direct || cio_rc=3
		cio_rd=$B_T
	fi
	if [ $cio_rc = 0 ]; then
		cio_got=$(md5 $T/check.back)
		[ "$cio_got" = "$CHECK_MD5" ] || cio_rc=4
	fi
	case $cio_rc in
	1 | 3)
		cio_err="; dd: $(why $LIMIT), $(grep -v records $T/b.out 2>/dev/null | tail -n 1)"
		blog "$(why $LIMIT):"
		show_out
		;;
	esac
	rm -f $T/check.back
}

# cable_after: a cable round after the link came up (round() set t,
# dev, ndev, i, t_ret, w0, ids0 and dbg_pid): the dd's end, debugfs was
# readable, the device is active, the same mount moves data, umount
# returns. Returns non-zero when something hung.
cable_after() {
	t_ev=$t_ret
	while ! io_poll "$t_ev" && ! past "$t_ev" $LIMIT; do
		sleep 0.2
	done
	ids1=""
	snapshot && ids1=$(awk '$2 == "connected" { print $3 }' $T/conns | sort | tr '\n' ' ')
	kept=0
	for _id in $ids0; do
		case " $ids1 " in *" $_id "*) kept=$((kept + 1)) ;; esac
	done
	CABLE_KEPT="$CABLE_KEPT ${i}s:$kept/$(echo "$ids0" | wc -w)"
	echo "SMBD-INFO: $t: down ${i} s (the down and up took $del_t s), $((w0 >> 20)) MiB written before; $kept of the connections before still connected after; dd ended (s after the up):$(io_how)"
	io_ended up
	dbg_end up

	smb_wait 10 device_back "$dev" "$ndev"
	result $? "$t/device-active" "$dev active on $ndev again and in smbd/devices" || return 1

	# rxe sends its packets through a route lookup, and one that fails
	# while the link is down moves the queue pair to the error state:
	# when a CM message goes out in the window (the disconnect of a
	# connection the outage ended), the GSI queue pair too on 6.12
	# (rdma res shows it), and no connection is made on the device
	# again until it is added anew. No hardware does that: a link down
	# drops packets, it fails no send. Whether the device still makes
	# connections is asked of rping, which knows nothing of smbd; when
	# it cannot, the device is re-added, as after a removal, and the
	# log says so. A GSI queue pair in the error state answers without
	# rping's 15 s.
	gsi=$($RDMA res show qp link "$dev/1" lqpn 1 2>/dev/null | tr -s ' ')
	case $gsi in
	*" state ERR "*) _cm=1 ;;
	*) cm_works "$addr"; _cm=$? ;;
	esac
	if [ $_cm != 0 ]; then
		CABLE_CM="$CABLE_CM ${i}s"
		blog "no rdma_cm connection on $dev after the link came back (rping, or its GSI queue pair: ${gsi:-?}): re-added"
		bounded $LIMIT $RDMA link delete "$dev" &&
			bounded $LIMIT $RDMA link add "$dev" type "$type" netdev "$ndev"
		smb_wait 10 device_back "$dev" "$ndev" && cm_works "$addr"
		result $? "$t/cm-recovered" "$dev deleted and added ($(why $LIMIT)): rping connects" || return 1
	fi

	# The mount the I/O ran on: the I/O resumed, or cifs reconnected.
	t_io=$(uptime_s)
	same_mount_io
	result $cio_rc "$t/same-mount-io" "$CHECK_MB MiB O_DIRECT over the mount $(since "$t_io") s after the dd's ended: write ${cio_wr:--} s, read ${cio_rd:--} s; md5 want $CHECK_MD5 server ${cio_srv:--} read ${cio_got:--}; step $cio_rc (1 write, 2 on the server, 3 read, 4 read back)$cio_err" &&
		FRESH=$((FRESH + 1))

	# Once the link is back, the server answers at once: cifs must not
	# find it unresponsive. Without adapters/patches/both/cifs-reconnect-
	# lstrp.patch it did, after a reconnect that took over three echo
	# intervals (the last response's time was that of the abort), and
	# tore the new connection down under the request that waited for it.
	# Over rxe only: there no connection outlives an outage under I/O
	# (rxe errors the queue pair that sends into it), so whatever cifs
	# says after the up is about a new connection. Over siw TCP carries
	# the connection through; when it resumes after more than three
	# echo intervals without a response, cifs rightly gives up on it.
	late=$(dmesg | awk -v m="$up_mark" 'index($0, m) { on = 1; next } on && /has not responded/' | head -n 1)
	if [ "$type" = rxe ]; then
		[ -z "$late" ]
		result $? "$t/no-late-unresponsive" "cifs after the up: ${late:-nothing unresponsive}"
	elif [ -n "$late" ]; then
		blog "$t: cifs after the up (the connection outlived the outage): $late"
	fi

	bounded $LIMIT umount $MNT
	_rc=$?
	um=$(why $LIMIT) umt=$B_T
	if [ "$B_RC" != hung ] && mounted; then
		bounded 10 umount -f $MNT
		mounted && bounded 10 umount -l $MNT
		_rc=1
	fi
	result $_rc "$t/umount" "umount $um, $umt s$(mounted && echo ', still mounted')"
	[ $_rc = 0 ] || show_out
	UMOUNT_TS="$UMOUNT_TS $umt"
	[ $HUNG = 0 ]
}

# cm_works ADDR: rping (rdma_cm, no smbd) connects to a listener of its
# own on ADDR and makes one round trip, within 10 s
cm_works() {
	timeout 15 rping -s -a "$1" -p 7998 -C 1 > /dev/null 2>&1 &
	_rp=$!
	_rc=1
	for _ in 1 2 3; do
		sleep 1
		timeout 10 rping -c -a "$1" -p 7998 -C 1 > /dev/null 2>&1 && { _rc=0; break; }
		kill -0 $_rp 2>/dev/null || break
	done
	kill $_rp 2>/dev/null
	wait $_rp 2>/dev/null
	return $_rc
}

# ka_set INTERVAL TIMEOUT: smbd's keep-alive for the connections made
# from now on (both ends: cifs's and ksmbd's)
ka_set() {
	echo "$1" > $PARAMS/keepalive_interval && echo "$2" > $PARAMS/keepalive_timeout
}

# round P DEV TYPE NETDEV ADDR I KIND: one removal (KIND removal), dying
# device (fatal) or cable pulled for I seconds (cable) under I/O. Returns
# non-zero when something hung or the device did not come back: no more
# rounds.
round() {
	p=$1 dev=$2 type=$3 ndev=$4 addr=$5 i=$6 kind=$7
	t=$RP/$p/round$i
	[ "$kind" = fatal ] && t=$RP/$p/fatal$i
	[ "$kind" = cable ] && t=$RP/$p/cable${i}s
	HUNG=0 SNAP_HUNG=0
	rm -f "$share/w1" "$share/w2" "$share/check"
	mopt=""
	if [ "$kind" = cable ] && [ "$i" -ge $CABLE_LONG ]; then
		# the outage outlasts cifs's 3 echo intervals and smbd's
		# keep-alive with its answer
		ka0="$(cat $PARAMS/keepalive_interval) $(cat $PARAMS/keepalive_timeout)"
		ka_set 2 2
		mopt=echo_interval=2
	fi
	bounded $LIMIT smb_mount "$addr" $MNT $mopt
	_rc=$?
	# shellcheck disable=SC2086 # two words
	[ -n "$mopt" ] && ka_set $ka0
	if ! result $_rc "$t/mount" "$(why $LIMIT), $B_T s"; then
		show_out
		[ $HUNG = 0 ]
		return
	fi

	# The I/O, with debugfs read all along.
	rm -f $T/dbg.stop
	: > $T/dbg.log
	dbg_loop >> $T/dbg.log 2>/dev/null &
	dbg_pid=$!
	t_io=$(uptime_s)
	io_start
	sleep $IO_WAIT
	_w=$((IO_FLOW * 5))
	while [ "$(written)" -lt 1048576 ] && [ $_w -gt 0 ] && [ -n "$(io_running)" ]; do
		sleep 0.2
		_w=$((_w - 1))
	done
	w0=$(written)
	io_poll "$t_io"
	run0=$(io_running)
	_rc=0
	[ "$run0" = " $IO" ] || _rc=1
	[ "$w0" -ge 1048576 ] || _rc=2
	if snapshot; then
		grep -qE "^initiator connected conn=[0-9]+ $dev " $T/conns || _rc=3
		grep -qE "^responder connected conn=[0-9]+ $dev " $T/conns || _rc=3
		grep -E "^(initiator|responder) " $T/conns | indent "smbd: "
	else
		_rc=4
	fi
	result $_rc "$t/io-running" "$((w0 >> 20)) MiB written after $(since "$t_io") s; running:$run0;$([ $_rc = 0 ] || io_how) step $_rc (1 a dd not running, 2 no data written, 3 no connection on $dev both ways, 4 connections unreadable)"

	# The removal, the device's death, or the cable.
	t_del=$(uptime_s)
	if [ "$kind" = fatal ]; then
		bounded $LIMIT sh -c "echo $dev > $DBG/dev_fatal"
		step=dev-fatal-returned
	elif [ "$kind" = cable ]; then
		ids0=$(awk '$2 == "connected" { print $3 }' $T/conns | sort | tr '\n' ' ')
		# A link taken down loses its IPv6 addresses unless told to
		# keep them; a cable pulled keeps them (and the plans after
		# this one need them).
		kad=/proc/sys/net/ipv6/conf/$ndev/keep_addr_on_down
		kad0=$(cat "$kad" 2>/dev/null)
		[ -n "$kad0" ] && echo 1 > "$kad"
		addrs0=$($IP -o addr show dev "$ndev" scope global | awk '{ print $4 }' | sort | tr '\n' ' ')
		bounded $LIMIT sh -c "$IP link set $ndev down && sleep $i && $IP link set $ndev up"
		step=link-down-up-returned
	else
		bounded $LIMIT $RDMA link delete "$dev"
		step=link-delete-returned
	fi
	del_rc=$B_RC del_t=$B_T
	echo D1 >> $T/dbg.log
	t_ret=$(uptime_s)
	# the kernel log from here on (cable_after)
	up_mark="smbdtest: $t: up at $t_ret"
	echo "$up_mark" > /dev/kmsg
	DEL_TS="$DEL_TS $del_t"
	result "$([ "$del_rc" = 0 ]; echo $?)" "$t/$step" "$(why $LIMIT), $del_t s"
	[ "$del_rc" = 0 ] || show_out
	if [ "$kind" = cable ]; then
		[ -n "$kad0" ] && echo "$kad0" > "$kad"
		addrs1=$($IP -o addr show dev "$ndev" scope global | awk '{ print $4 }' | sort | tr '\n' ' ')
		[ "$addrs1" = "$addrs0" ]
		result $? "$t/addresses-kept" "$ndev before: $addrs0; after: $addrs1"
		cable_after
		return
	fi

	# Every connection on the device leaves connected (the removal ends
	# them: cifs and ksmbd are told); every dd ends.
	told=""
	while :; do
		io_poll "$t_del"
		io_done=$?
		_snap=0
		if [ -z "$told" ] && [ $SNAP_HUNG = 0 ]; then
			_snap=1
			snapshot && ! connected_on "$dev" && told=$(since "$t_ret")
		fi
		if [ $io_done = 0 ] || past "$t_del" $LIMIT; then
			[ -n "$told" ] && break
			{ [ $SNAP_HUNG = 1 ] || past "$t_ret" $TOLD; } && break
		fi
		[ $_snap = 1 ] || sleep 0.2
	done
	if [ $SNAP_HUNG = 1 ]; then
		_s="connections unreadable (a read hung)"
	elif [ -n "$told" ]; then
		_s="$told s after the delete returned"
		TOLD_TS="$TOLD_TS $told"
	else
		_s="still there $TOLD s after the delete returned: $(grep -E "^(initiator|responder) connected conn=[0-9]+ $dev( |\$)" $T/conns | tr '\n' ';')"
	fi
	result "$([ -n "$told" ]; echo $?)" "$t/consumers-told" "no connection connected on $dev: $_s"

	echo "SMBD-INFO: $t: delete took $del_t s (rc $del_rc), $((w0 >> 20)) MiB written before; dd ended (s after the delete):$(io_how)"
	t_ev=$t_del
	io_ended delete
	dbg_end delete

	# umount -f; the device back.
	bounded $LIMIT umount -f $MNT
	_rc=$?
	um=$(why $LIMIT) umt=$B_T
	if [ "$B_RC" != hung ] && mounted; then
		bounded 10 umount -l $MNT
		_rc=1
	fi
	result $_rc "$t/umount" "umount -f $um, $umt s$(mounted && echo ', still mounted')"
	[ $_rc = 0 ] || show_out
	UMOUNT_TS="$UMOUNT_TS $umt"

	# A dead device recovers as mlx5's health work does it: removed, then
	# added again.
	if [ "$kind" = fatal ]; then
		bounded $LIMIT $RDMA link delete "$dev"
		_rc=$?
		result $_rc "$t/recovery-delete" "$(why $LIMIT), $B_T s" || show_out
		[ $_rc = 0 ] || return 1
	fi
	bounded $LIMIT $RDMA link add "$dev" type "$type" netdev "$ndev"
	add=$(why $LIMIT)
	show_out
	smb_wait 10 device_back "$dev" "$ndev"
	_rc=$?
	result $_rc "$t/link-add" "rdma link add $add; $dev active on $ndev and in smbd/devices" || return 1
	[ $HUNG = 0 ] || return 1

	# A fresh mount moves data both ways, intact.
	_rc=0 cio_wr="" cio_rd="" cio_srv="" cio_got=""
	bounded $LIMIT smb_mount "$addr" $MNT || _rc=1
	[ $_rc = 1 ] && { blog "$(why $LIMIT):"; show_out; }
	if [ $_rc = 0 ]; then
		snapshot && grep -qE "^initiator connected conn=[0-9]+ $dev " $T/conns || _rc=2
	fi
	if [ $_rc = 0 ]; then
		same_mount_io
		[ $cio_rc = 0 ] || _rc=$((cio_rc + 2))
	fi
	if mounted; then
		bounded $LIMIT umount $MNT || { [ $_rc = 0 ] && _rc=7; show_out; }
	fi
	result $_rc "$t/fresh-mount" "$CHECK_MB MiB O_DIRECT: write ${cio_wr:--} s, read ${cio_rd:--} s; md5 want $CHECK_MD5 server ${cio_srv:--} read ${cio_got:--}; step $_rc (1 mount, 2 no connection on $dev, 3 write, 4 on the server, 5 read, 6 read back, 7 umount)" &&
		FRESH=$((FRESH + 1))
	[ $HUNG = 0 ]
}

# removal_provider P DEV TYPE NETDEV ADDR: ksmbd up, the rounds, everything down
removal_provider() {
	p=$1
	t0=$(uptime_s)
	DEL_TS="" TOLD_TS="" END_TS="" UMOUNT_TS="" FRESH=0 CABLE_KEPT="" CABLE_CM="" DBG_GAPS=""
	smb_server_start
	if ! result $? "$RP/$p/ksmbd-start"; then
		ksmbd_stop
		bounded $LIMIT rmmod_wait ksmbd
		grep -q " $SMB_EXPORT tmpfs " /proc/mounts && umount "$SMB_EXPORT"
		return
	fi
	share=$SMB_EXPORT/$SMB_SHARE
	for n in r1 r2; do
		dd if=/dev/zero of="$share/$n" bs=1M count="$DD_MB" 2>/dev/null
	done
	chmod 0666 "$share"/r?
	blog "ksmbd listens for SMB Direct on port $(smb_rdma_port)"

	# The rounds, "KIND:I" each (round() sets i: the shell has no
	# locals).
	rounds=""
	_n=1
	while [ $_n -le "$ROUNDS" ]; do rounds="$rounds removal:$_n"; _n=$((_n + 1)); done
	_n=1
	while [ $_n -le "$FATAL_ROUNDS" ]; do rounds="$rounds fatal:$_n"; _n=$((_n + 1)); done
	_downs=$CABLE_DOWNS
	[ "$p" = rxe ] && _downs=$CABLE_DOWNS_RXE
	for _n in $_downs; do rounds="$rounds cable:$_n"; done
	all=$(echo "$rounds" | wc -w) done_rounds=0
	for r in $rounds; do
		done_rounds=$((done_rounds + 1))
		if ! round "$@" "${r#*:}" "${r%%:*}"; then
			blog "rounds stopped after round $done_rounds ($r: a step hung or the device did not come back)"
			break
		fi
	done
	echo "SMBD-INFO: removal $p: $done_rounds of $all rounds ($ROUNDS removed, $FATAL_ROUNDS with a dying device, cable pulled for:$(echo " $_downs" | sed 's/ \([0-9][0-9]*\)/ \1 s/g')) ($FRESH fresh or same mounts good), delete took $(range "$DEL_TS") s, dd ended $(range "$END_TS") s after the delete or up, no connection on $2 $(range "$TOLD_TS") s after the delete returned, umount took $(range "$UMOUNT_TS") s, the longest debugfs pass $(range "$DBG_GAPS") s, connections kept over a cable round:${CABLE_KEPT:- -}, no rdma_cm connection (device re-added) after:${CABLE_CM:- -}"

	# Everything down: each must return within LIMIT.
	if mounted; then
		bounded $LIMIT umount -f $MNT
		[ "$B_RC" != hung ] && mounted && bounded 10 umount -l $MNT
	fi
	rm -f "$share"/* 2>/dev/null
	stack_down "$RP/$p"
	echo "SMBD-INFO: removal $p: took $(since "$t0") s"
}

# ---------------------------------------------------------------- main

for k in $SMB_CIFS_KO $SMB_KSMBD_KO; do
	if [ ! -f "$k" ]; then
		${SMBD_MISSING:-skip} removal "no $k in this image"
		exit 0
	fi
done
rm -rf $T
mkdir -p $T $MNT
head -c $((CHECK_MB << 20)) /dev/urandom > $T/check
CHECK_MD5=$(md5 $T/check)
t_all=$(uptime_s)
TEARDOWN_HUNG=0 HUNG=0
echo "SMBD-INFO: removal: per provider $ROUNDS removal rounds (smbdtest.removal_rounds=N), $FATAL_ROUNDS with a dying device (smbdtest.fatal_rounds=N), a cable pulled for:${CABLE_DOWNS:- none} s, over rxe for:${CABLE_DOWNS_RXE:- none} s (smbdtest.cable_downs=S,S..., smbdtest.cable_downs_rxe=S,S...); $DD_MB MiB per dd"

for pv in "rxe rxe0 rxe smbdr0 $RXE_ADDR" "siw siw0 siw smbds0 $SIW_ADDR"; do
	# shellcheck disable=SC2086 # the provider's words
	set -- $pv
	case " $PROVIDERS " in *" $1 "*) ;; *) continue ;; esac
	if [ $TEARDOWN_HUNG = 1 ]; then
		nok "$RP/$1/not-run" "the previous provider's teardown hung"
		continue
	fi
	if ! device_back "$2" "$4"; then
		nok "$RP/$1/not-run" "no active $2 on $4 to start with"
		continue
	fi
	removal_provider "$@"
done

# The devices as /init made them (a round that failed may have left one
# out), nothing of cifs or ksmbd left, and smbd.ko unloads.
_rc=0 miss=""
for d in rxe0:rxe:smbdr0 siw0:siw:smbds0; do
	dev=${d%%:*} ndev=${d##*:} type=${d#*:}
	type=${type%:*}
	case " $PROVIDERS " in *" $type "*) ;; *) continue ;; esac
	device_back "$dev" "$ndev" && continue
	miss="$miss $dev"
	$RDMA link show 2>/dev/null | grep -q "^link $dev/" ||
		bounded $LIMIT $RDMA link add "$dev" type "$type" netdev "$ndev"
	smb_wait 10 device_back "$dev" "$ndev" || _rc=1
done
result $_rc $RP/devices-restored "${miss:+missing at the end, added again:$miss; }$($RDMA link show 2>/dev/null | tr '\n' ';')"

left=$(grep -E ' cifs | smb3 ' /proc/mounts; grep -E '^(cifs|ksmbd) ' /proc/modules)
_rc=0
[ -z "$left" ] || _rc=1
result $_rc $RP/clean "${left:+left: $(echo "$left" | tr '\n' ';')}"

holders=""
for h in /sys/module/smbd/holders/*; do
	[ -e "$h" ] && holders="$holders ${h##*/}"
done
if [ -n "$holders" ]; then
	skip $RP/rmmod-smbd "held by:$holders"
else
	bounded $LIMIT rmmod_wait smbd
	_rc=$?
	result $_rc $RP/rmmod-smbd "$(why $LIMIT), $B_T s"
fi
rm -rf $T
echo "SMBD-INFO: removal: the plan took $(since "$t_all") s"

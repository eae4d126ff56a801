#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Guest plan (the SMB VM, tests/run.sh): SMB3 multichannel over SMB
# Direct, with cifs on smbd (adapters/cifs) mounting ksmbd on smbd
# (adapters/ksmbd), over two RDMA devices of one provider at a time
# (/init: rxe0 on smbdr0 192.0.2.1 and rxe1 on smbdr1 192.0.2.2; siw0 on
# smbds0 192.0.2.17 and siw1 on smbds1 192.0.2.18). For rxe, then siw:
#   ksmbd runs with "server multi channel support = yes" and lists only
#   the provider's two interfaces (bind interfaces only), both flagged
#   RDMA_CAPABLE in FSCTL_QUERY_NETWORK_INTERFACE_INFO: that flag is
#   smbd_netdev_capable(), through ksmbd_rdma_capable_netdev().
#   mount -o rdma,multichannel,max_channels=4 on the first address:
#   cifs opens a channel to every other address ksmbd lists (IPv4 and
#   IPv6: ksmbd on smbd listens on both), none fails;
#   cifs's DebugData shows more than one channel, and a channel on each
#   of the two addresses' interfaces; smbd's debugfs shows a connection
#   in each device, cifs's (initiator) and ksmbd's (responder).
#   16 MiB written and read back with O_DIRECT (1 MiB requests), intact
#   on the server's disk and as read; each device carried part of it
#   (smbd's RDMA byte counters, summed per device, are printed).
#   The second device deleted (rdma link delete) under a 32 MiB O_DIRECT
#   write: the delete returns; no connection on the device stays
#   "connected" beyond 10 s; the write ends within 60 s of the delete
#   (done, and then intact on the server, or an I/O error: both fine;
#   still running: hung); rdma link add brings the device back, and
#   within 60 s cifs has its channel on it again (cifs retries a lost
#   channel every 3 s: if it does not come back, that is a skip with its
#   reason, not a failure); then 16 MiB moves both ways intact.
#   umount, rmmod cifs, stopping ksmbd and rmmod ksmbd each return within
#   60 s, and smbd holds no connection.
# Then, per provider, two channels per address on one device: ksmbd lists
#   only the first port (its IPv4 and IPv6 address), which /init gave two
#   transmit queues as every RDMA NIC has, so ksmbd flags it RSS_CAPABLE
#   too; mount -o rdma,multichannel,max_channels=4 on its IPv4 address:
#   cifs opens four channels, all on that device (a second one per
#   address only because of RSS_CAPABLE: a single-queue port gives two);
#   smbd shows four cifs and four ksmbd connections on the device, and
#   8 MiB written and read back intact moved over each of ksmbd's four
#   (its RDMA bytes, per connection); then everything down as above.
# At the end the four devices are as /init made them, nothing of cifs or
# ksmbd is left, and smbd.ko unloads (as after plan-74).
# Every command that might hang runs under timeout, and in the background
# under a bound (bounded): timeout cannot end a task stuck in the kernel,
# the bound keeps it from stopping the plan.
#   smbdtest.multichannel_mb=N   MiB of the write the removal interrupts
#                                (32; under TCG siw writes 1-3 MiB/s, and
#                                the write must end within 60 s)
#   smbdtest.multichannel_providers=P,...  rxe,siw (the default) or one

# shellcheck source=tests/guest/lib-smbpair.sh
. /smbd/lib-smbpair.sh
# shellcheck source=tests/guest/lib-bounded.sh
. /smbd/lib-bounded.sh
SMB_CIFS_KO=/smbd/cifs.ko	# both on smbd
SMB_KSMBD_KO=/smbd/ksmbd.ko

RDMA=/usr/bin/rdma
[ -x $RDMA ] || RDMA=/sbin/rdma
DBG=/sys/kernel/debug/smbd
CONNS=$DBG/connections
MNT=/mnt/multichannel
T=/tmp/multichannel	# the plan's work files
PLAN_NAME=multichannel	# its log lines: "    multichannel: ..." (blog)
MOUNT_EXTRA=multichannel,max_channels=4
LIMIT=60	# a command (or the write after the delete) running longer has hung
TOLD=10		# seconds after the delete for no connection on the device
BACK=60		# seconds after the add for cifs's channel on the device again
CHANNELS=10	# seconds after the mount for the channels in DebugData
DATA_MB=16	# the transfer over both channels
DEL_MB=$(karg smbdtest.multichannel_mb 32)	# the write under the removal
# the providers, rxe,siw by default (the test command runs one)
MC_PROVIDERS=$(karg smbdtest.multichannel_providers rxe,siw)
case $DEL_MB in '' | *[!0-9]* | 0) DEL_MB=32 ;; esac
CHECK_MB=16	# the transfer after the device is back
XFER=180	# limit of one O_DIRECT copy of DATA_MB (siw: 1-3 MiB/s)

info() { echo "SMBD-INFO: multichannel: $*"; }
# fsize FILE: its size, 0 when there is none
fsize() { stat -c %s "$1" 2>/dev/null || echo 0; }
# alive PID: PID exists and is not a zombie
alive() {
	_st=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1)
	[ -n "$_st" ] && [ "$_st" != Z ]
}
# mib BYTES: in MiB, one decimal
mib() { awk -v b="$1" 'BEGIN { printf "%.1f", b / 1048576 }'; }
# mibps MIB SECS: MiB/s
mibps() { awk -v m="$1" -v t="$2" 'BEGIN { if (t < 0.01) t = 0.01; printf "%.1f", m / t }'; }

# ---------------------------------------------------------------- smbd's view

# conn_on ROLE DEV ADDR: in the last snapshot, a ROLE connection
# (initiator: cifs, responder: ksmbd) connected on DEV, from or to ADDR.
# Its line: "ROLE STATE conn=N DEV SRC:PORT -> DST:PORT".
conn_on() {
	awk -v r="$1" -v d="$2" -v a="$3:" '
		$1 == r && $2 == "connected" && $4 == d &&
		(index($5, a) == 1 || index($7, a) == 1) { f = 1 }
		END { exit !f }' $T/conns
}

# conn_lines: the socket lines of the last snapshot, ";" between them
conn_lines() {
	grep -E '^(initiator|responder) ' $T/conns | tr '\n' ';'
}

# dev_bytes: from the last snapshot, one line per device, "DEV SENT RECV
# RREAD RWRITE": the bytes cifs's connections (initiators) sent and
# received in SMB Direct messages, and the bytes ksmbd's (responders)
# moved by RDMA read (the client's writes) and RDMA write (its reads),
# summed over the device's connections, of any state. A connection's
# counters go with it: compare snapshots of the same connections only.
dev_bytes() {
	awk '
		/^(initiator|responder) / { r = $1; d = $4; seen[d] = 1; next }
		/^[a-z]/ { r = ""; next }
		r == "initiator" && $1 == "msgs:" {
			for (i = 1; i <= NF; i++)
				if ($i == "bytes:") { s[d] += $(i + 2); v[d] += $(i + 6) }
		}
		r == "responder" && $1 == "rdma:" {
			x = $4; sub(/^\(/, "", x); rr[d] += x
			y = $8; sub(/^\(/, "", y); rw[d] += y
		}
		END {
			for (d in seen)
				printf "%s %.0f %.0f %.0f %.0f\n", d, s[d], v[d], rr[d], rw[d]
		}' $T/conns
}
# dev_get FILE DEV COLUMN: a dev_bytes value (2 SENT, 3 RECV, 4 RREAD,
# 5 RWRITE), 0 when DEV or FILE is not there (always a number: it goes
# into $((...)))
dev_get() {
	[ -f "$1" ] || { echo 0; return; }
	awk -v d="$2" -v c="$3" '$1 == d { v = $c } END { printf "%.0f\n", v + 0 }' "$1"
}
# dev_delta BEFORE AFTER DEV COLUMN: AFTER's value less BEFORE's
dev_delta() {
	echo $(($(dev_get "$2" "$3" "$4") - $(dev_get "$1" "$3" "$4")))
}
# per_device BEFORE AFTER DEV...: each DEV's bytes between two dev_bytes
# files, for a report
per_device() {
	_b=$1 _a=$2
	shift 2
	_sep=""
	for _d in "$@"; do
		printf '%s%s: server RDMA read %s MiB, RDMA write %s MiB; client messages sent %s KiB, received %s KiB' \
			"$_sep" "$_d" \
			"$(mib "$(dev_delta "$_b" "$_a" "$_d" 4)")" \
			"$(mib "$(dev_delta "$_b" "$_a" "$_d" 5)")" \
			$(($(dev_delta "$_b" "$_a" "$_d" 2) >> 10)) \
			$(($(dev_delta "$_b" "$_a" "$_d" 3) >> 10))
		_sep="; "
	done
}

# ---------------------------------------------------------------- cifs's view

# debugdata ADDR: cifs's DebugData (bounded) into $T/debugdata, and the
# session of its connection to ADDR parsed into $T/chan:
#   extra N                  "Extra Channels: N" (the session has N + 1)
#   disc N                   channels marked DISCONNECTED or [RECONNECTING]
#   if IP CAPS ALLOC USED    each server interface the session knows:
#                            CAPS "rdma" or "none", ALLOC its "Allocated
#                            channels", USED 1 when "[CONNECTED]" (one of
#                            the session's channels is on it)
# (linux 6.12 fs/smb/client/cifs_debug.c: the channels are printed
# without their addresses; the interfaces with theirs.)
debugdata() {
	bounded 10 cat "$SMB_DEBUGDATA" || return 1
	cp $T/b.out $T/debugdata
	awk -v a="$1" '
		/^[0-9]+\) ConnectionId:/ { on = index($0, "Hostname: " a " ") > 0; next }
		!on { next }
		/Extra Channels:/ {
			for (i = 1; i < NF; i++) if ($i == "Channels:") extra = $(i + 1)
		}
		/DISCONNECTED|\[RECONNECTING\]/ { disc++ }
		/Capabilities:/ { caps = ($0 ~ /rdma/) ? "rdma" : "none" }
		/IPv4: |IPv6: / {
			for (i = 1; i < NF; i++) if ($i == "IPv4:" || $i == "IPv6:") ip = $(i + 1)
			ips[++n] = ip; cap[ip] = caps
		}
		/Allocated channels:/ { alloc[ip] = $NF }
		/\[CONNECTED\]/ { used[ip] = 1 }
		END {
			printf "extra %d\ndisc %d\n", extra, disc
			for (i = 1; i <= n; i++)
				printf "if %s %s %d %d\n", ips[i], cap[ips[i]], alloc[ips[i]], used[ips[i]]
		}' $T/debugdata > $T/chan
}
chan_val() { awk -v k="$1" '$1 == k { v = $2 } END { print v + 0 }' $T/chan 2>/dev/null; }
# iface_used IP: one of the session's channels is on interface IP
iface_used() { awk -v a="$1" '$1 == "if" && $2 == a && $5 == 1 { f = 1 } END { exit !f }' $T/chan 2>/dev/null; }
# ifaces: the interfaces of $T/chan, for a report
ifaces() {
	awk '$1 == "if" { printf "%s%s %s, %d channel(s)%s", sep, $2, $3, $4, $5 ? " [CONNECTED]" : ""; sep = "; " }' $T/chan 2>/dev/null
}
# channels_up A1 A2: more than one channel, none disconnected, one on
# A1's interface and one on A2's
channels_up() {
	debugdata "$1" &&
		[ "$(chan_val extra)" -ge 1 ] && [ "$(chan_val disc)" -eq 0 ] &&
		iface_used "$1" && iface_used "$2"
}
# chan_dump: the channel and interface lines of the last DebugData
chan_dump() {
	grep -E 'Extra Channels|Channel: |DISCONNECTED|RECONNECTING|Server interfaces|IPv4:|IPv6:|Capabilities|Allocated|CONNECTED' \
		$T/debugdata 2>/dev/null | head -n 40 | indent "cifs: "
}

# ---------------------------------------------------------------- steps

# mc_xfer NAME SRC: SRC (whole MiB) written over the mount with O_DIRECT
# and read back the same way, 1 MiB requests, each bounded; intact on the
# server's disk and as read. Sets XW and XR: the write's and the read's
# MiB/s ("-" when not done).
mc_xfer() {
	_n=$1 _src=$2 _f=${2##*/}
	_want=$(md5 "$_src") _mb=$(($(fsize "$_src") >> 20))
	_rc=0 XW=- XR=- _srv=- _got=- _wr="" _rd=""
	rm -f "$share/$_f" $T/back
	if tbounded $XFER dd if="$_src" of="$MNT/$_f" bs=1M oflag=direct; then
		XW=$(mibps "$_mb" "$B_T")
	else
		_rc=1 _wr=" ($(why))"
		show_out
	fi
	if [ $_rc = 0 ]; then
		_srv=$(md5 "$share/$_f")
		[ "$_srv" = "$_want" ] || _rc=2
	fi
	if [ $_rc = 0 ]; then
		drop_caches
		if tbounded $XFER dd if="$MNT/$_f" of=$T/back bs=1M iflag=direct; then
			XR=$(mibps "$_mb" "$B_T")
		else
			_rc=3 _rd=" ($(why))"
			show_out
		fi
	fi
	if [ $_rc = 0 ]; then
		_got=$(md5 $T/back)
		[ "$_got" = "$_want" ] || _rc=4
	fi
	rm -f $T/back "$share/$_f"
	result $_rc "$_n" "$_mb MiB O_DIRECT: write $XW MiB/s$_wr, read $XR MiB/s$_rd; md5 want $_want, server $_srv, read $_got; step $_rc (1 write, 2 on the server, 3 read, 4 read back)"
}

# removal: the second device deleted under an O_DIRECT write, then added
# back (uses the provider's variables). Returns non-zero when something
# hung or the device did not come back.
removal() {
	rm -f "$share/del" $T/dd.rc $T/dd.err
	(timeout $((LIMIT * 3)) dd if=$T/del of="$MNT/del" bs=1M oflag=direct 2> $T/dd.err
		echo $? > $T/dd.rc) &
	dd_pid=$!
	t_io=$(uptime_s)
	# The delete once the write is flowing: its first MiB on the server.
	_w=100
	while [ ! -s $T/dd.rc ] && [ "$(fsize "$share/del")" -lt 1048576 ] && [ $_w -gt 0 ]; do
		sleep 0.2
		_w=$((_w - 1))
	done
	w0=$(fsize "$share/del")
	snapshot && conn_on initiator "$dev2" "$a2" && on2=yes || on2=no
	if [ -s $T/dd.rc ]; then
		skip "$t/write-running-at-delete" "the $DEL_MB MiB write ended (rc $(cat $T/dd.rc)) after $(since "$t_io") s, before the delete: the removal is not under I/O (smbdtest.multichannel_mb=N for a longer one)"
	else
		[ "$w0" -ge 1048576 ]
		result $? "$t/write-running-at-delete" "$(mib "$w0") MiB on the server after $(since "$t_io") s; cifs connected on $dev2: $on2"
	fi

	# The delete.
	t_del=$(uptime_s)
	tbounded $LIMIT $RDMA link delete "$dev2"
	del_rc=$B_RC del_t=$B_T
	t_ret=$(uptime_s)
	result "$([ "$del_rc" = 0 ]; echo $?)" "$t/link-delete" "rdma link delete $dev2: $(why), $del_t s"
	[ "$del_rc" = 0 ] || show_out

	# No connection on the device stays connected (smbd tells cifs and
	# ksmbd); meanwhile the write may end.
	dd_end=""
	told=""
	while :; do
		[ -z "$dd_end" ] && [ -s $T/dd.rc ] && dd_end=$(since "$t_del")
		if snapshot && ! connected_on "$dev2"; then
			told=$(since "$t_ret")
			break
		fi
		[ "$SNAP_HUNG" = 1 ] && break
		past "$t_ret" $TOLD && break
		sleep 0.2
	done
	if [ "$SNAP_HUNG" = 1 ]; then
		_s="smbd's connections unreadable (a read hung)"
	elif [ -n "$told" ]; then
		_s="none $told s after the delete returned"
	else
		_s="still connected $TOLD s after the delete returned: $(grep -E "^(initiator|responder) connected conn=[0-9]+ $dev2( |\$)" $T/conns | tr '\n' ';')"
	fi
	result "$([ -n "$told" ]; echo $?)" "$t/connections-dropped" "connections connected on $dev2: $_s"

	# The write ends within LIMIT of the delete; once more LIMIT if it is
	# still moving then (slow, not stuck: siw under TCG).
	lim=$LIMIT ext="" sz=$(fsize "$share/del") t_grow=$t_del
	while [ -z "$dd_end" ]; do
		if [ -s $T/dd.rc ]; then
			dd_end=$(since "$t_del")
			break
		fi
		_sz=$(fsize "$share/del")
		[ "$_sz" != "$sz" ] && sz=$_sz t_grow=$(uptime_s)
		if past "$t_del" $lim; then
			if [ -z "$ext" ] && ! past "$t_grow" 5; then
				ext=" (still writing at $LIMIT s: given $LIMIT s more)"
				lim=$((LIMIT * 2))
			else
				break
			fi
		fi
		sleep 0.2
	done
	dd_msg=$(grep -m1 '^dd:' $T/dd.err 2>/dev/null | sed 's/^dd: //')
	if [ -n "$dd_end" ]; then
		wait "$dd_pid"
		dd_rc=$(cat $T/dd.rc)
		ok "$t/write-ended" "$dd_end s after the delete, rc $dd_rc${dd_msg:+ ($dd_msg)}$ext"
	else
		dd_rc=hung
		nok "$t/write-ended" "still running $lim s after the delete, $(mib "$(fsize "$share/del")") MiB on the server$ext"
		stacks "$dd_pid"
		smb_task_stacks
		_pids="$dd_pid $(descendants "$dd_pid")"
		# shellcheck disable=SC2086 # a list of pids
		kill -9 $_pids 2>/dev/null
		sleep 5
		for _q in $_pids; do
			alive "$_q" && HUNG=1
		done
		[ "$HUNG" = 1 ] && blog "after SIGKILL, still there: the write (a task stuck in the kernel)"
	fi
	if [ -n "$dd_end" ]; then
		_e="ended $dd_end s after it (rc $dd_rc${dd_msg:+: $dd_msg})"
	else
		_e="had not ended $lim s after it"
	fi
	info "$p: delete of $dev2 took $del_t s (rc $del_rc) with $(mib "$w0") MiB of $DEL_MB written; the write $_e"
	case $dd_rc in
	0)
		_srv=$(md5 "$share/del")
		[ "$_srv" = "$DEL_MD5" ]
		result $? "$t/write-intact" "md5 want $DEL_MD5, server $_srv ($(fsize "$share/del") bytes)"
		;;
	hung) ;;
	*) skip "$t/write-intact" "the write failed (rc $dd_rc${dd_msg:+: $dd_msg}): nothing to compare" ;;
	esac
	rm -f "$share/del"

	# The device back.
	[ "$HUNG" = 0 ] || return 1
	tbounded $LIMIT $RDMA link add "$dev2" type "$type" netdev "$nd2"
	_add="$(why), $B_T s"
	show_out
	smb_wait 10 device_back "$dev2" "$nd2"
	result $? "$t/link-add" "rdma link add $dev2: $_add; $dev2 active on $nd2 and in smbd/devices" || return 1

	# cifs reconnects the lost channel (its reconnect loop, every 3 s).
	t_add=$(uptime_s)
	back=""
	while ! past "$t_add" $BACK; do
		if snapshot && conn_on initiator "$dev2" "$a2" && channels_up "$a1" "$a2"; then
			back=$(since "$t_add")
			break
		fi
		[ "$SNAP_HUNG" = 1 ] && break
		sleep 1
	done
	if [ -n "$back" ]; then
		ok "$t/channel-back" "cifs connected on $dev2 ($a2) again $back s after the add; $(($(chan_val extra) + 1)) channels; $(ifaces)"
		info "$p: channel on $dev2 back $back s after rdma link add"
	else
		debugdata "$a1"
		skip "$t/channel-back" "no cifs channel connected on $dev2 ($a2) within $BACK s of the add (reported, not a failure): $(chan_val disc) channel(s) disconnected; $(ifaces); smbd: $(conn_lines)"
		info "$p: channel on $dev2 not back within $BACK s of rdma link add"
		chan_dump
	fi
	return 0
}

# teardown: umount, rmmod cifs, ksmbd stopped, rmmod ksmbd, each bounded;
# smbd left with no connection
teardown() {
	if mounted; then
		rm -f "$share"/* 2>/dev/null
		tbounded $LIMIT umount $MNT
		_rc=$?
		_um="$(why), $B_T s"
		if [ "$B_RC" != hung ] && mounted; then
			tbounded 10 umount -f $MNT
			[ "$B_RC" != hung ] && mounted && tbounded 10 umount -l $MNT
			_rc=1
		fi
		result $_rc "$t/umount" "umount $_um$(mounted && echo ', still mounted')"
		[ $_rc = 0 ] || show_out
		[ "$B_RC" = hung ] && TEARDOWN_HUNG=1
	fi
	stack_down "$t"
}

# multichannel P TYPE ND1 DEV1 A1 ND2 DEV2 A2: the whole cycle over one
# provider; the mount is on A1, the second device (DEV2 on ND2, A2) is
# the one removed
multichannel() {
	p=$1 type=$2 nd1=$3 dev1=$4 a1=$5 nd2=$6 dev2=$7 a2=$8
	t=multichannel/$p
	t0=$(uptime_s)
	HUNG=0 SNAP_HUNG=0
	share=$SMB_EXPORT/$SMB_SHARE

	SMB_MULTICHANNEL=yes SMB_INTERFACES="$nd1 $nd2"
	smb_server_start
	if ! result $? "$t/ksmbd-start" "server multi channel support = yes, interfaces = $SMB_INTERFACES"; then
		teardown
		return
	fi
	blog "ksmbd listens for SMB Direct on port $(smb_rdma_port)"

	# The mount adds its channels before it returns (cifs_mount() calls
	# cifs_try_adding_channels()).
	# (Not smb_kmsg_mark: in $(...) its counter never moves, and both
	# providers would get the same mark.)
	mark="smbd-test-multichannel-$p-mount"
	# cifs's debug messages (cifsFYI, through dynamic debug) for the mount
	if smb_load_module cifs "$SMB_CIFS_KO"; then
		echo 1 > /proc/fs/cifs/cifsFYI
		echo 'module cifs +p' > /sys/kernel/debug/dynamic_debug/control
	fi
	echo "$mark" > /dev/kmsg
	bounded $LIMIT smb_mount "$a1" $MNT "$MOUNT_EXTRA"
	_rc=$?
	if ! result $_rc "$t/mount" "//$a1 -o $SMB_MOUNT_OPTS,$MOUNT_EXTRA: $(why), $B_T s"; then
		show_out
		[ "$HUNG" = 0 ] && teardown
		[ "$HUNG" = 0 ] || TEARDOWN_HUNG=1
		return
	fi
	k=$(smb_kmsg_since "$mark")
	_opened=$(echo "$k" | grep -c 'successfully opened new channel')
	_failed=$(echo "$k" | grep -c 'failed to open extra channel')
	info "$p: mount took $B_T s; cifs opened $_opened extra channel(s), $_failed attempt(s) failed"
	echo "$k" | grep -E 'opened new channel|failed to open extra channel' | head -n 8 | indent "kmsg: "
	# Every interface ksmbd flags RDMA-capable, IPv4 and IPv6, must
	# take a channel: a client sent to one that cannot is what a wrong
	# flag or a missing listener costs ([MS-SMB2] 3.3.5.15.11).
	[ "$_failed" -eq 0 ] && [ "$_opened" -gt 0 ]
	result $? "$t/rdma-interfaces-connect" "cifs opened $_opened extra channel(s), $_failed attempt(s) failed"
	echo 0 > /proc/fs/cifs/cifsFYI
	echo 'module cifs -p' > /sys/kernel/debug/dynamic_debug/control

	# (a) cifs: the session's channels and the server's interfaces.
	_w=$((CHANNELS))
	until channels_up "$a1" "$a2" || [ $_w -le 0 ]; do
		sleep 1
		_w=$((_w - 1))
	done
	channels_up "$a1" "$a2"
	# cifs's own account of the mount (cifsFYI) when it opened too few
	result $? "$t/channels" "$(($(chan_val extra) + 1)) channels (max_channels=4), $(chan_val disc) disconnected; interfaces: $(ifaces)" ||
		echo "$k" | grep -E 'CIFS: .*(chan|iface|interface|multichannel)' | tail -n 40 | indent "fyi: "
	chan_dump
	awk -v a="$a1" -v b="$a2" '$1 == "if" && $2 ~ /^[0-9.]+$/ {
			if ($2 != a && $2 != b) bad = 1
			if ($2 == a && $3 == "rdma") fa = 1
			if ($2 == b && $3 == "rdma") fb = 1
		} END { exit !(fa && fb && !bad) }' $T/chan
	result $? "$t/interfaces-rdma" "ksmbd lists $a1 and $a2 (IPv4) only, both RDMA-capable (smbd_netdev_capable): $(ifaces)"

	# (b) smbd: a connection on each device, both ways.
	_rc=0
	if snapshot; then
		conn_on initiator "$dev1" "$a1" || _rc=1
		conn_on initiator "$dev2" "$a2" || _rc=1
		conn_on responder "$dev1" "$a1" || _rc=2
		conn_on responder "$dev2" "$a2" || _rc=2
		grep -E '^(initiator|responder) ' $T/conns | indent "smbd: "
	else
		_rc=3
	fi
	result $_rc "$t/smbd-both-devices" "$(conn_lines) step $_rc (1 no cifs connection on $dev1 to $a1 and on $dev2 to $a2, 2 no ksmbd one, 3 connections unreadable)"

	# (c) data over both channels, and how it was spread.
	rm -f $T/bytes0 $T/bytes1
	snapshot && dev_bytes > $T/bytes0
	mc_xfer "$t/direct-${DATA_MB}m" $T/data
	snapshot && dev_bytes > $T/bytes1
	info "$p: write $XW MiB/s, read $XR MiB/s ($DATA_MB MiB, O_DIRECT, 1 MiB requests, $(($(chan_val extra) + 1)) channels)"
	info "$p: per device: $(per_device $T/bytes0 $T/bytes1 "$dev1" "$dev2")"
	_rc=0
	for _d in "$dev1" "$dev2"; do
		[ $(($(dev_delta $T/bytes0 $T/bytes1 "$_d" 4) + $(dev_delta $T/bytes0 $T/bytes1 "$_d" 5))) -gt 0 ] || _rc=1
	done
	result $_rc "$t/both-devices-carried-data" "$(per_device $T/bytes0 $T/bytes1 "$dev1" "$dev2")"

	# (d) the second device removed under a write, and back.
	if removal; then
		rm -f $T/bytes0 $T/bytes1
		snapshot && dev_bytes > $T/bytes0
		mc_xfer "$t/direct-${CHECK_MB}m-after-return" $T/check
		snapshot && dev_bytes > $T/bytes1
		info "$p: after the return: write $XW MiB/s, read $XR MiB/s ($CHECK_MB MiB); per device: $(per_device $T/bytes0 $T/bytes1 "$dev1" "$dev2")"
	fi

	# (e) everything down.
	if [ "$HUNG" = 0 ]; then
		teardown
	else
		TEARDOWN_HUNG=1
		nok "$t/teardown" "not tried: a step hung"
	fi
	info "$p: cycle took $(since "$t0") s"
}

# conn_rdma DEV: from the last snapshot, "conn=N BYTES" for each ksmbd
# (responder) connection connected on DEV: what it moved by RDMA read and
# RDMA write
conn_rdma() {
	awk -v d="$1" '
		/^(initiator|responder) / {
			on = $1 == "responder" && $2 == "connected" && $4 == d
			c = $3
			next
		}
		/^[a-z]/ { on = 0; next }
		on && $1 == "rdma:" {
			x = $4; sub(/^\(/, "", x); y = $8; sub(/^\(/, "", y)
			printf "%s %.0f\n", c, x + y
		}' $T/conns
}

# one_device P ND DEV A: four channels on one RSS-capable port (ND, with
# DEV above it and A its IPv4 address), data on each
one_device() {
	p=$1 nd=$2 dev=$3 a=$4
	t=multichannel/$p/one-device
	HUNG=0 SNAP_HUNG=0
	share=$SMB_EXPORT/$SMB_SHARE
	SMB_MULTICHANNEL=yes SMB_INTERFACES=$nd
	smb_server_start
	if ! result $? "$t/ksmbd-start" "server multi channel support = yes, interfaces = $nd"; then
		teardown
		return
	fi
	bounded $LIMIT smb_mount "$a" $MNT multichannel,max_channels=4
	if ! result $? "$t/mount" "//$a -o $SMB_MOUNT_OPTS,multichannel,max_channels=4: $(why), $B_T s"; then
		show_out
		[ "$HUNG" = 0 ] && teardown
		[ "$HUNG" = 0 ] || TEARDOWN_HUNG=1
		return
	fi

	# cifs: four channels, none disconnected; the port flagged RSS.
	_w=$CHANNELS
	until { debugdata "$a" && [ "$(chan_val extra)" -ge 3 ]; } || [ $_w -le 0 ]; do
		sleep 1
		_w=$((_w - 1))
	done
	_rss=$(grep -c 'Capabilities:.*rss' $T/debugdata 2>/dev/null)
	[ "$(chan_val extra)" -eq 3 ] && [ "$(chan_val disc)" -eq 0 ] && [ "${_rss:-0}" -gt 0 ]
	result $? "$t/four-channels" "$(($(chan_val extra) + 1)) channels (max_channels=4), $(chan_val disc) disconnected; $_rss interface(s) flagged rss; interfaces: $(ifaces)" ||
		chan_dump

	# smbd: all eight connections on the one device.
	_ni=0 _nr=0
	if snapshot; then
		_ni=$(grep -cE "^initiator connected conn=[0-9]+ $dev " $T/conns)
		_nr=$(grep -cE "^responder connected conn=[0-9]+ $dev " $T/conns)
		grep -E '^(initiator|responder) ' $T/conns | indent "smbd: "
	fi
	[ "$_ni" -eq 4 ] && [ "$_nr" -eq 4 ]
	result $? "$t/smbd-four-each-way" "on $dev: $_ni cifs connection(s), $_nr ksmbd connection(s); $(conn_lines)"

	# Data over each channel: every ksmbd connection moved some by RDMA.
	rm -f $T/rdma0 $T/rdma1
	snapshot && conn_rdma "$dev" > $T/rdma0
	head -c $((8 << 20)) $T/data > $T/data8
	mc_xfer "$t/direct-8m" $T/data8
	rm -f $T/data8
	snapshot && conn_rdma "$dev" > $T/rdma1
	_per=$(awk 'NR == FNR { b[$1] = $2; next }
		{ printf "%s%s %.1f MiB", sep, $1, ($2 - b[$1]) / 1048576; sep = ", "
		  n++; if ($2 - b[$1] > 0) used++ }
		END { printf "; %d of %d carried data\n", used, n }' $T/rdma0 $T/rdma1 2>/dev/null)
	info "$p: one device, $_nr ksmbd connections: write $XW MiB/s, read $XR MiB/s; RDMA per connection: $_per"
	case $_per in
	*"; 4 of 4 carried data") _rc=0 ;;
	*) _rc=1 ;;
	esac
	result $_rc "$t/each-channel-carried-data" "RDMA per ksmbd connection: $_per"

	if [ "$HUNG" = 0 ]; then
		teardown
	else
		TEARDOWN_HUNG=1
		nok "$t/teardown" "not tried: a step hung"
	fi
}

# ---------------------------------------------------------------- main

for k in $SMB_CIFS_KO $SMB_KSMBD_KO; do
	if [ ! -f "$k" ]; then
		${SMBD_MISSING:-skip} multichannel "no $k in this image"
		exit 0
	fi
done
rm -rf $T
mkdir -p $T $MNT
head -c $((DATA_MB << 20)) /dev/urandom > $T/data
head -c $((DEL_MB << 20)) /dev/urandom > $T/del
head -c $((CHECK_MB << 20)) /dev/urandom > $T/check
DEL_MD5=$(md5 $T/del)
t_all=$(uptime_s)
TEARDOWN_HUNG=0 HUNG=0 SNAP_HUNG=0
info "$DATA_MB MiB over both channels, $DEL_MB MiB write under the removal (smbdtest.multichannel_mb=N), $CHECK_MB MiB after the return"

for pv in "rxe rxe smbdr0 rxe0 $RXE_ADDR smbdr1 rxe1 $RXE1_ADDR" \
	"siw siw smbds0 siw0 $SIW_ADDR smbds1 siw1 $SIW1_ADDR"; do
	# shellcheck disable=SC2086 # the provider's words
	set -- $pv
	case ",$MC_PROVIDERS," in *",$1,"*) ;; *) continue ;; esac
	if [ $TEARDOWN_HUNG = 1 ]; then
		nok "multichannel/$1/not-run" "the previous provider's teardown hung"
		continue
	fi
	if ! device_back "$4" "$3" || ! device_back "$7" "$6"; then
		nok "multichannel/$1/not-run" "no active $4 on $3 and $7 on $6 to start with: $($RDMA link show 2>/dev/null | tr '\n' ';')"
		continue
	fi
	multichannel "$@"
	if [ $TEARDOWN_HUNG = 1 ]; then
		nok "multichannel/$1/one-device/not-run" "the two-device cycle's teardown hung"
	elif ! device_back "$4" "$3"; then
		nok "multichannel/$1/one-device/not-run" "no active $4 on $3: $($RDMA link show 2>/dev/null | tr '\n' ';')"
	else
		one_device "$1" "$3" "$4" "$5"
	fi
done

# The devices as /init made them (a failed step may have left the second
# one out), nothing of cifs or ksmbd left, and smbd.ko unloads.
_rc=0 miss=""
for d in rxe0:rxe:smbdr0 rxe1:rxe:smbdr1 siw0:siw:smbds0 siw1:siw:smbds1; do
	dev=${d%%:*} ndev=${d##*:} type=${d#*:}
	type=${type%:*}
	device_back "$dev" "$ndev" && continue
	miss="$miss $dev"
	$RDMA link show 2>/dev/null | grep -q "^link $dev/" ||
		tbounded $LIMIT $RDMA link add "$dev" type "$type" netdev "$ndev"
	smb_wait 10 device_back "$dev" "$ndev" || _rc=1
done
result $_rc multichannel/devices-restored "${miss:+missing at the end, added again:$miss; }$($RDMA link show 2>/dev/null | tr '\n' ';')"

left=$(grep -E ' cifs | smb3 ' /proc/mounts; grep -E '^(cifs|ksmbd) ' /proc/modules)
_rc=0
[ -z "$left" ] || _rc=1
result $_rc multichannel/clean "${left:+left: $(echo "$left" | tr '\n' ';')}"

holders=""
for h in /sys/module/smbd/holders/*; do
	[ -e "$h" ] && holders="$holders ${h##*/}"
done
if [ -n "$holders" ]; then
	skip multichannel/rmmod-smbd "held by:$holders"
elif smb_loaded smbd; then
	bounded $LIMIT rmmod_wait smbd
	result $? multichannel/rmmod-smbd "$(why), $B_T s"
fi
rm -rf $T
info "the plan took $(since "$t_all") s"

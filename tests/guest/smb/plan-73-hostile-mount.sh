#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Guest plan (the SMB VM, tests/run.sh): the kernel SMB client on smbd
# (adapters/cifs) mounting in a loop against the hostile raw-verbs server
# (tests/hostile/hostile.c, "cifs" mode), over rxe and siw. Each
# connection negotiates SMB Direct and then ends in one of six ways in
# turn: closed at once, a Negotiate Response smbd must refuse, closed
# after cifs's SMB2 NEGOTIATE, a named malformed or a randomly mutated
# Data Transfer message, or a stall. Every mount must fail by itself (no
# hang, no mount), cifs must unload, and smbd must hold no connection
# afterwards; check-log.sh fails the run on any kernel report.
# The seed comes from the clock and is printed; smbdtest.hostile_seed=N
# repeats a run.

SMB_CIFS_KO=/smbd/cifs.ko	# cifs on smbd (adapters/cifs)
# shellcheck source=tests/guest/lib-smb.sh
. /smbd/lib-smb.sh
# shellcheck source=tests/guest/lib-st.sh
. /smbd/lib-st.sh

# connections the hostile server serves per provider, 4 of each ending
# (smbdtest.hostile_mounts=N)
CONNS=$(karg smbdtest.hostile_mounts 24)
case $CONNS in '' | *[!0-9]* | 0) CONNS=24 ;; esac
SECS=300		# the most it serves them for
MOUNT_TIMEOUT=60	# a mount still running past it has hung
H=/sys/kernel/debug/smbd_hostile0
MNT=/mnt/hostile

st_seed hostile-mount

st_insmod hostile-mount smbd_hostile || exit 0

# connections: smbd's connections other than listeners (debugfs: a line
# each, then indented details)
connections() {
	grep -cE '^(initiator|responder) ' /sys/kernel/debug/smbd/connections
}
no_connection_left() { [ "$(connections)" = 0 ]; }
# no_cifsd: no cifs server thread left (each holds the cifs module)
no_cifsd() { ! grep -qx cifsd /proc/[0-9]*/comm 2>/dev/null; }

# serve P KO CMD: load cifs (KO, or the stock one when empty), then start
# the hostile server's command CMD in the background (hpid)
serve() {
	if ! smb_load_module cifs "$2"; then
		nok "$1/load-cifs"
		return 1
	fi
	mkdir -p $MNT
	rm -f /tmp/hm.rc
	(
		if echo "$3" > $H/ctl; then
			echo 0 > /tmp/hm.rc
		else
			echo 1 > /tmp/hm.rc
		fi
	) &
	hpid=$!
	sleep 1
}

# served P: the hostile server's result lines (once hpid ended)
served() {
	if [ "$(cat /tmp/hm.rc 2>/dev/null)" = 0 ]; then
		cat $H/result > /tmp/hm-result
		st_report "$1" server /tmp/hm-result
	else
		nok "$1/server" "writing the command failed"
	fi
}

# loop PROVIDER ADDR: the hostile server and the mount loop against it
loop() {
	p=hostile-mount/$1
	serve "$p" "$SMB_CIFS_KO" "cifs $2 5445 $seed $CONNS $SECS" || return
	t0=$(uptime_s)
	mounts=0 mounted=0 hung=0 rcs=""
	opts="$SMB_MOUNT_OPTS,username=$SMB_USER,password=$SMB_PASS"
	while ! smb_gone $hpid; do
		mounts=$((mounts + 1))
		timeout -s KILL $MOUNT_TIMEOUT "$SMB_MOUNT_CIFS" "//$2/$SMB_SHARE" \
			$MNT -o "$opts" > /tmp/hm-mount.log 2>&1
		rc=$?
		case " $rcs " in *" $rc "*) ;; *) rcs="$rcs $rc" ;; esac
		[ $rc = 137 ] && hung=$((hung + 1))
		if grep -q " $MNT cifs " /proc/mounts; then
			mounted=$((mounted + 1))
			umount -f $MNT || umount -l $MNT
		fi
	done
	wait $hpid
	t=$(since "$t0")
	echo "SMBD-INFO: $p: $mounts mounts in $t s, exit codes:$rcs"
	served "$p"
	[ $mounts -gt 0 ] && [ $mounted = 0 ] && [ $hung = 0 ]
	result $? "$p/every-mount-fails" "$mounts mounts: $mounted succeeded, $hung hung"
	# A cifs server thread ends by itself once its mount failed. When
	# a request was queued as the connection died, cifs's
	# clean_demultiplex_info() gives it 46 s (fs/smb/client/connect.c)
	# before the thread exits and lets go of the module.
	t=$(uptime_s)
	smb_wait 60 no_cifsd || smb_task_stacks
	echo "SMBD-INFO: $p: cifs threads gone after $(since "$t") s"
	smb_unload_module cifs
	result $? "$p/rmmod-cifs"
	# A failed connect is released at once; give teardown work a moment.
	smb_wait 10 no_connection_left
	result $? "$p/no-connection-left" "$(connections) left$(grep -E '^(initiator|responder) ' /sys/kernel/debug/smbd/connections | head -n 3 | tr '\n' ';')"
}

# stock_close ADDR: the test kernel's stock cifs against a server that
# closes the connection once the Negotiate Request came, unanswered (as
# smbd's listener does to a connection still negotiating when ksmbd
# stops). Debian's 6.12 cifs then waited forever in its negotiation
# failure path when the mount was killed or its 120 s ran out, and freed
# the receive pool with the receive still posted; tests/kernel/cifs-negotiate-
# disconnect.patch fixes both. The killed mount must end, and cifs unload.
stock_close() {
	p=hostile-mount/stock-cifs
	serve "$p" "" "cifs-close $1 5445 $seed 1 30" || return
	"$SMB_MOUNT_CIFS" "//$1/$SMB_SHARE" $MNT \
		-o "$SMB_MOUNT_OPTS,username=$SMB_USER,password=$SMB_PASS" \
		> /tmp/hm-mount.log 2>&1 &
	mpid=$!
	# The server takes the request and closes; cifs waits for a
	# response that will not come.
	smb_wait 20 smb_gone $hpid
	sleep 2
	kill -9 $mpid 2>/dev/null
	t=$(uptime_s)
	smb_wait 20 smb_gone $mpid
	rc=$?
	[ $rc = 0 ] || smb_task_stacks
	result $rc "$p/killed-mount-ends" "after $(since "$t") s"
	grep -q " $MNT cifs " /proc/mounts && umount -f $MNT
	wait $hpid
	served "$p"
	smb_wait 60 no_cifsd || smb_task_stacks
	smb_unload_module cifs
	result $? "$p/rmmod-cifs"
}

t_all=$(uptime_s)
loop rxe "$RXE_ADDR"
loop siw "$SIW_ADDR"
stock_close "$RXE_ADDR"
echo "SMBD-INFO: hostile-mount plan took $(since "$t_all") s"

if $RMMOD smbd_hostile; then ok hostile-mount/unload-smbd_hostile; else nok hostile-mount/unload-smbd_hostile; fi

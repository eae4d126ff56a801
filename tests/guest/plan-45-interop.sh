#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Guest plan: smbd against the kernel's stock SMB Direct peers, with the
# test consumer smbd_interop.ko (tests/interop) driven through debugfs,
# over soft-RoCE (rxe0, 192.0.2.1) and soft-iWARP (siw0, 192.0.2.17):
#
# 1. smbd as the initiator, the stock ksmbd serving (lib-smb.sh): SMB
#    Direct negotiation completes with sane values, an SMB2 NEGOTIATE
#    request sent with smbd_sock_send() gets a valid response through
#    smbd_sock_recv(), and through smbd_sock_recv_stream() on a second
#    connection (4-byte big-endian length, then the message).
# 2. smbd as the responder, no ksmbd: the stock cifs mounts with -o rdma;
#    smbd_sock_recv() must deliver its first message, an SMB2 NEGOTIATE
#    request, intact. smbd_interop then releases the connection without
#    answering: the mount must fail by itself, and cifs must unload.
#
# Loads smbd.ko if it is not loaded and leaves it loaded; unloads
# smbd_interop.ko, ksmbd and cifs; leaves no mount behind.

# shellcheck source=tests/guest/lib-smb.sh
. /smbd/lib-smb.sh
# shellcheck source=tests/guest/lib-st.sh
. /smbd/lib-st.sh

D=/sys/kernel/debug/smbd_interop	# lib-st.sh's run drives smbd_interop
PORT=5445		# stock cifs tries 5445 first
MOUNT_TIMEOUT=60	# mount.cifs is killed past it (it should fail in seconds)

# mark NAME: a unique marker in the kernel log, printed (lib-smb.sh's
# smb_kmsg_mark counts in a subshell when its output is captured)
mark() {
	_m="interop-mark-$1-$(uptime_s)"
	echo "$_m" > /dev/kmsg
	echo "$_m"
}

# kmsg MARK: the stock peers' and smbd's kernel lines since MARK
kmsg() {
	smb_kmsg_since "$1" | grep -E 'ksmbd|CIFS|cifs|smbd' | tail -n 25 | sed 's/^/    kmsg: /'
}

# tcp_closers PREFIX ADDR: 30 TCP connections to smbd's siw listener that
# close at once (a port scan, or an initiator that gives up right after
# the TCP handshake, as the stock cifs does when a signal interrupts its
# connect). Until siw accepts such a connection it carries the
# listener's endpoint, and its close used to release the listener
# (tests/kernel/siw-listener-close.patch): later connects were refused, and
# the listener's release read freed memory. Each must connect; the cifs
# connection that follows and the listener's release show the rest.
tcp_closers() {
	rm -f /tmp/closers
	# At once, so that some close before siw's one worker accepts them.
	for _i in $(seq 30); do
		{ nc "$2" $PORT -e true 2>/dev/null && echo ok >> /tmp/closers; } &
	done
	wait
	_n=$(grep -c ok /tmp/closers 2>/dev/null)
	[ "${_n:-0}" = 30 ]
	result $? "$1/tcp-closers" "${_n:-0} of 30 connected and closed at once"
}

# cifs_against_smbd NAME ADDR: part 2 over one provider
cifs_against_smbd() {
	p=interop/$1
	addr=$2
	mnt=/mnt/interop-$1

	run "$p" listen "$addr" $PORT timeout=20
	[ "$1" = siw ] && tcp_closers "$p" "$addr"
	smb_load_module cifs "$SMB_CIFS_KO"
	result $? "$p/cifs/load-cifs" || { run "$p" stop "$addr" $PORT; return; }
	mkdir -p "$mnt"
	m=$(mark "cifs-$1")
	rm -f /tmp/si-mount.rc
	opts="$SMB_MOUNT_OPTS,username=$SMB_USER,password=$SMB_PASS"
	(
		timeout -s KILL $MOUNT_TIMEOUT "$SMB_MOUNT_CIFS" "//$addr/$SMB_SHARE" \
			"$mnt" -o "$opts" > /tmp/si-mount.log 2>&1
		echo $? > /tmp/si-mount.rc
	) &
	mpid=$!
	# smbd_interop answers nothing and releases the connection once it
	# has the first message: the mount fails by itself, in seconds.
	t0=$(uptime_s)
	smb_wait $((MOUNT_TIMEOUT + 5)) smb_gone $mpid
	result $? "$p/cifs/mount-ends" "mount.cifs still running"
	wait $mpid 2>/dev/null
	rc=$(cat /tmp/si-mount.rc 2>/dev/null)
	echo "    mount.cifs rc=${rc:-?} after $(since "$t0") s: $(tr '\n' ' ' < /tmp/si-mount.log)"
	run "$p" wait "$addr" $PORT conns=1 timeout=10
	! grep -q " $mnt cifs " /proc/mounts && [ -n "$rc" ] && [ "$rc" != 0 ] &&
		[ "$rc" != 137 ]
	result $? "$p/cifs/mount-fails" "mount.cifs rc=${rc:-none} (137: killed)"
	run "$p" stop "$addr" $PORT
	kmsg "$m"
	if grep -q " $mnt cifs " /proc/mounts; then
		umount -f "$mnt" || umount -l "$mnt"
	fi
	smb_unload_module cifs
	result $? "$p/cifs/rmmod-cifs"
}

t_start=$(uptime_s)
load_smbd interop/load-smbd
if [ ! -f /smbd/smbd_interop.ko ]; then
	[ "$SMBD_MISSING" = nok ] && w="not ok" || w=skip
	echo "SMBD-TEST: $w interop/load-smbd_interop - no /smbd/smbd_interop.ko in the image (build tests/interop and pass it)"
	exit 0
fi
if ! $INSMOD /smbd/smbd_interop.ko; then
	nok interop/load-smbd_interop
	exit 0
fi
ok interop/load-smbd_interop

# Part 1: smbd initiates, the stock ksmbd answers.
if smb_server_start; then
	ok interop/ksmbd-start
	port=$(smb_rdma_port)
	echo "    smb: ksmbd $(cat "$SMB_CTL_DIR/stats"), SMB Direct port $port"
	m=$(mark ksmbd)
	# The Negotiation Timer at its default, 120 s ([MS-SMBD] 3.1.4.1):
	# a connect takes well under a second here, but a stalled guest must
	# not fail a check a real initiator would have waited out. A connect
	# that times out all the same says where it stopped in the kernel
	# log ("smbd: initiator negotiation timed out (state, last CM event;
	# our Negotiate Request sent or not, anything from the peer)").
	smb_rdma_debug_on	# ksmbd's side of a connect that fails
	run interop/rxe client "$RXE_ADDR" "$port" timeout=120
	run interop/siw client "$SIW_ADDR" "$port" timeout=120
	kmsg "$m"
else
	nok interop/ksmbd-start
fi
smb_server_stop
result $? interop/ksmbd-stop

# Part 2: the stock cifs initiates, smbd answers (ksmbd is gone: the port
# is free).
cifs_against_smbd rxe "$RXE_ADDR"
cifs_against_smbd siw "$SIW_ADDR"

if $RMMOD smbd_interop; then ok interop/unload-smbd_interop; else nok interop/unload-smbd_interop; fi
left=$(grep -E ' cifs | smb3 ' /proc/mounts; grep -E '^(cifs|ksmbd|smbd_interop) ' /proc/modules; pidof ksmbd.mountd)
[ -z "$left" ]
result $? interop/clean "left: $left"
echo "SMBD-INFO: interop: plan took $(since "$t_start") s"

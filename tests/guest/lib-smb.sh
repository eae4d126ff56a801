# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# SMB over RDMA helpers for guest plans (busybox sh): an in-kernel SMB
# server (ksmbd + ksmbd.mountd) serving a tmpfs share, and the in-kernel
# SMB client (cifs) mounting it with SMB Direct. Source it:
#
#	. /smbd/lib-smb.sh
#
# Module choice (empty: "modprobe NAME", the test kernel's stock module):
#   SMB_KSMBD_KO=/smbd/ksmbd.ko   the server module to insmod
#   SMB_CIFS_KO=/smbd/cifs.ko     the client module to insmod
#   SMB_CIFS_PARAMS="NAME=VALUE ..."  its module parameters (insmod only)
# Which one is wanted, ours (built on smbd) or the stock one, is said, not
# guessed: SMB_CIFS_WANT and SMB_KSMBD_WANT ("ours" or "stock"; by default
# ours with a KO, stock without). A plan whose modprobe finds ours (the
# demo installs them in updates/) says "ours" with an empty KO.
# Before an insmod, the module's dependencies ("depends" in modinfo) are
# loaded: by modprobe, or from /smbd/DEP.ko when modprobe does not know
# them (smbd.ko); its soft dependencies (crypto) by modprobe, best effort.
#
# Ports: the stock ksmbd listens for SMB Direct on ONE rdma_cm port, on
# every address: 445, or 5445 as soon as any RDMA device that is not an
# IB/RoCE HCA exists when ksmbd starts (siw0 is iWARP, so here: 5445, for
# rxe0 too); smb_rdma_port prints it. ksmbd on smbd keeps each port to
# its device class: 445 on rxe0's addresses, 5445 for siw0 (plan-76
# checks). The stock cifs takes no port for RDMA: it tries 5445, then
# 445; cifs on smbd the device's port first. So both providers work with
# the same options against either server.
#
# Functions return 0 on success and print what went wrong otherwise;
# they print no SMBD-TEST lines (the plans do).

# shellcheck source=tests/guest/lib-report.sh
. /smbd/lib-report.sh

SMB_USER=${SMB_USER:-smbtest}		# in the image's /etc/passwd (uid 1000)
SMB_PASS=${SMB_PASS:-Smbd-test.1}
SMB_SHARE=${SMB_SHARE:-smbdtest}
SMB_EXPORT=${SMB_EXPORT:-/srv/smb}	# a tmpfs; the share is $SMB_EXPORT/$SMB_SHARE
SMB_EXPORT_SIZE=${SMB_EXPORT_SIZE:-256m}
SMB_KSMBD_KO=${SMB_KSMBD_KO:-}
SMB_CIFS_KO=${SMB_CIFS_KO:-}
SMB_MOUNT_OPTS=${SMB_MOUNT_OPTS:-rdma,vers=3.1.1}
SMB_MOUNTD_LOG=${SMB_MOUNTD_LOG:-/tmp/ksmbd.mountd.log}
SMB_MOUNTD_OPTS=${SMB_MOUNTD_OPTS:--v}	# -v: its log has the shares and users
# ksmbd's "server multi channel support" (yes/no). SMB_INTERFACES, when
# set (netdev names, one space apart): "bind interfaces only = yes" with
# "interfaces = $SMB_INTERFACES", so that ksmbd lists only those in
# FSCTL_QUERY_NETWORK_INTERFACE_INFO (a multichannel client's candidates)
# and binds its TCP listener to them. Read by each smb_server_start.
SMB_MULTICHANNEL=${SMB_MULTICHANNEL:-no}
SMB_INTERFACES=${SMB_INTERFACES:-}
SMB_MAX_CONNECTIONS=${SMB_MAX_CONNECTIONS:-}	# ksmbd.mountd's limit (its default: 128)

SMB_MODPROBE=/usr/sbin/modprobe
SMB_INSMOD=/usr/sbin/insmod
SMB_RMMOD=/usr/sbin/rmmod
SMB_MODINFO=/usr/sbin/modinfo
SMB_MOUNT_CIFS=/usr/sbin/mount.cifs
SMB_MOUNTD=/usr/sbin/ksmbd.mountd
SMB_CONTROL=/usr/sbin/ksmbd.control
SMB_ADDUSER=/usr/sbin/ksmbd.adduser
SMB_CTL_DIR=/sys/class/ksmbd-control
SMB_DEBUGDATA=/proc/fs/cifs/DebugData

SMBD_CONNS=/sys/kernel/debug/smbd/connections

# smbd_sum ROLE FIELD [each]: FIELD summed over smbd's connections of
# ROLE (initiator, responder, or any); FIELD is "registered" (MRs),
# "reads" or "writes" (RDMA operations), "read-bytes" or "write-bytes"
# (their bytes) or "sent-bytes" (message bytes sent). Printed whole
# (%.0f: busybox awk's %d stops at 2^31). With "each": a line
# "conn=ID VALUE" per connection instead (its ids are never reused).
smbd_sum() {
	awk -v role="$1" -v f="$2" -v each="${3:-}" '
		/^[a-z]/ { on = (role == "any" || $1 == role); id = $3 }
		on && $1 == "mr:" && f == "registered" { v[id] += $3 }
		on && $1 == "rdma:" && f == "reads" { v[id] += $3 }
		on && $1 == "rdma:" && f == "read-bytes" { v[id] += substr($4, 2) }
		on && $1 == "rdma:" && f == "writes" { v[id] += $7 }
		on && $1 == "rdma:" && f == "write-bytes" { v[id] += substr($8, 2) }
		on && $1 == "rdma:" && f == "posted-writes" { v[id] += $11 }
		on && $1 == "msgs:" && f == "sent-bytes" { v[id] += $13 }
		END {
			for (i in v) {
				if (each != "")
					printf "%s %.0f\n", i, v[i]
				n += v[i]
			}
			if (each == "")
				printf "%.0f\n", n
		}' "$SMBD_CONNS" 2>/dev/null
}

# rdma_mark, then rdma_since: RDMA_REG, RDMA_RD, RDMA_WR and RDMA_WP say
# what went by RDMA between the two (MRs registered by smbd's initiators,
# RDMA reads and writes by its responders, and of the writes those posted
# from a copy without a wait). Counted by connection: what each one there
# at the end did since the mark (all of it, for one opened since). A
# connection that went away in between (an earlier mount's, which cifs
# may tear down after its umount returned) takes nothing off.
RDMA_MARK=/tmp/smbd-rdma-mark
rdma_mark() {
	: > "$RDMA_MARK"
	for _f in "initiator registered" "responder reads" \
		  "responder writes" "responder posted-writes"; do
		# shellcheck disable=SC2086 # ROLE FIELD
		smbd_sum $_f each | sed "s/^/${_f#* } /" >> "$RDMA_MARK"
	done
}
# rdma_delta ROLE FIELD: FIELD's growth since rdma_mark
rdma_delta() {
	{ cat "$RDMA_MARK"; echo "--"; smbd_sum "$1" "$2" each; } |
		awk -v f="$2" '
			$0 == "--" { now = 1; next }
			!now { if ($1 == f) was[$2] = $3; next }
			{ n += $2 - was[$1] }
			END { printf "%.0f\n", n }'
}
# shellcheck disable=SC2034 # the callers read them
rdma_since() {
	RDMA_REG=$(rdma_delta initiator registered)
	RDMA_RD=$(rdma_delta responder reads)
	RDMA_WR=$(rdma_delta responder writes)
	RDMA_WP=$(rdma_delta responder posted-writes)
}

smb_log() { echo "    smb: $*"; }

# smb_wait SECONDS CMD...: poll CMD every 0.2 s until it succeeds
smb_wait() {
	_n=$(($1 * 5))
	shift
	while [ $_n -gt 0 ]; do
		"$@" && return 0
		sleep 0.2
		_n=$((_n - 1))
	done
	"$@"
}

smb_loaded() { grep -q "^$1 " /proc/modules; }

# smb_kmsg_mark: write a unique marker into the kernel log, print it
smb_kmsg_mark() {
	_smb_mark_n=$((${_smb_mark_n:-0} + 1))
	_m="smbd-test-mark-$$-$_smb_mark_n"
	echo "$_m" > /dev/kmsg
	echo "$_m"
}

# smb_kmsg_since MARK: the kernel log after MARK
smb_kmsg_since() {
	dmesg | sed -n "/$1/,\$p" | sed 1d
}

# smb_rdma_debug_on: ksmbd's RDMA debug log on (the file toggles)
smb_rdma_debug_on() {
	grep -q '\[rdma\]' "$SMB_CTL_DIR/debug" 2>/dev/null ||
		echo rdma > "$SMB_CTL_DIR/debug"
}

# smb_want NAME [KO]: "ours" or "stock", the cifs or ksmbd wanted
smb_want() {
	case $1 in
	cifs) _w=${SMB_CIFS_WANT:-} ;;
	ksmbd) _w=${SMB_KSMBD_WANT:-} ;;
	*) _w=any ;;
	esac
	if [ -z "$_w" ]; then
		_w=stock
		[ -n "${2:-}" ] && _w=ours
	fi
	echo "$_w"
}

# smb_load_module NAME [KO]: load module NAME, from KO when given; a
# dependency with a /smbd/DEP.ko (smbd.ko) is loaded the same way, with its
# own dependencies first. The cifs or ksmbd loaded, now or before, must be
# the one wanted (smb_want).
smb_load_module() {
	local _name=$1 _ko=${2:-} _d _want
	_want=$(smb_want "$_name" "$_ko")
	if smb_loaded "$_name"; then
		smb_module_is "$_name" "$_want" && return 0
		smb_log "the $_name loaded is not the one wanted ($_want)"
		return 1
	fi
	if [ -z "$_ko" ]; then
		$SMB_MODPROBE "$_name" || { smb_log "modprobe $_name failed"; return 1; }
		smb_module_is "$_name" "$_want" && return 0
		smb_log "modprobe $_name loaded $($SMB_MODINFO -n "$_name" 2>/dev/null), not the one wanted ($_want)"
		return 1
	fi
	[ -f "$_ko" ] || { smb_log "$_ko: no such file"; return 1; }
	for _d in $($SMB_MODINFO -F depends "$_ko" | tr ',' ' '); do
		smb_loaded "$_d" && continue
		if [ -f "/smbd/$_d.ko" ]; then
			smb_load_module "$_d" "/smbd/$_d.ko" || return 1
		else
			$SMB_MODPROBE "$_d" || { smb_log "modprobe $_d (for $_ko) failed"; return 1; }
		fi
	done
	# Its soft dependencies (crypto and NLS modules: a dozen for cifs,
	# 0.3 s a modprobe under TCG) once a boot: nothing unloads them.
	if [ ! -e "/tmp/.smb-softdeps-$_name" ]; then
		for _d in $($SMB_MODINFO -F softdep "$_ko" | sed 's/[a-z]*://g'); do
			$SMB_MODPROBE -q "$_d" 2>/dev/null || true
		done
		: > "/tmp/.smb-softdeps-$_name"
	fi
	_d=
	[ "$_name" = cifs ] && _d=${SMB_CIFS_PARAMS:-}
	# shellcheck disable=SC2086 # a list of parameters
	$SMB_INSMOD "$_ko" $_d || { smb_log "insmod $_ko $_d failed"; return 1; }
	smb_loaded "$_name" || { smb_log "$_ko did not load as $_name"; return 1; }
}

# smb_module_is NAME WANT: the loaded cifs or ksmbd is ours (built on
# smbd, so it holds smbd) for WANT "ours", the stock one for "stock": a
# module left loaded by an earlier plan must not stand in for the one a
# plan asked for
smb_module_is() {
	case $1:$2 in
	cifs:*|ksmbd:*) ;;
	*) return 0 ;;
	esac
	if [ -e /sys/module/smbd/holders/"$1" ]; then
		[ "$2" = ours ]
	else
		[ "$2" = stock ]
	fi
}

# smb_unload_module NAME: rmmod NAME, retrying while it is still in use
# (cifs and ksmbd drop their last references from worker threads)
smb_unload_module() {
	smb_loaded "$1" || return 0
	smb_wait 20 $SMB_RMMOD "$1" 2>/dev/null && return 0
	smb_log "rmmod $1 failed: $(grep "^$1 " /proc/modules)"
	smb_task_stacks
	return 1
}

# smb_task_stacks: where every kernel thread and process of cifs, ksmbd
# and smbd is (what holds a module that will not unload)
smb_task_stacks() {
	for d in /proc/[0-9]*; do
		c=$(cat "$d/comm" 2>/dev/null) || continue
		case "$c" in
		cifs*|ksmbd*|smbd*|mount*|kworker*) ;;
		*) continue ;;
		esac
		st=$(cat "$d/stack" 2>/dev/null)
		case "$c" in
		kworker*) echo "$st" | grep -qE 'cifs|smb|ksmbd' || continue ;;
		esac
		smb_log "task ${d#/proc/} $c ($(sed 's/.*) //' "$d/stat" 2>/dev/null | cut -d' ' -f1)):"
		echo "$st" | sed 's/^/        /'
		# Its signals, masks in hex (bit 8 is SIGKILL): a kernel thread
		# waiting to be killed shows whether SIGKILL was pending, ignored
		# (not yet allowed) or caught (allowed) when it went astray.
		echo "        $(grep -E '^(SigPnd|ShdPnd|SigBlk|SigIgn|SigCgt):' "$d/status" 2>/dev/null | tr '\t\n' '  ')"
	done
}

# ---------------------------------------------------------------- server

smb_server_state() {
	cut -d' ' -f2 "$SMB_CTL_DIR/stats" 2>/dev/null
}

# smb_server_start: load ksmbd, export a fresh tmpfs share, add the user,
# start ksmbd.mountd and wait until the server runs
smb_server_start() {
	smb_load_module ksmbd "$SMB_KSMBD_KO" || return 1
	mkdir -p "$SMB_EXPORT" /etc/ksmbd /run
	if ! grep -q " $SMB_EXPORT tmpfs " /proc/mounts; then
		mount -t tmpfs -o "size=$SMB_EXPORT_SIZE,mode=0755" tmpfs "$SMB_EXPORT" ||
			{ smb_log "tmpfs on $SMB_EXPORT failed"; return 1; }
	fi
	rm -rf "${SMB_EXPORT:?}/$SMB_SHARE"
	mkdir -p "$SMB_EXPORT/$SMB_SHARE"
	chmod 0777 "$SMB_EXPORT/$SMB_SHARE"
	# This kernel has no tmpfs xattrs: no DOS attributes or streams in
	# xattrs. No leases; no multichannel unless SMB_MULTICHANNEL=yes:
	# one plain session.
	# SMB_INTERFACES: two more lines (an empty line when unset);
	# SMB_MAX_CONNECTIONS: two more, and one in the share (its tree
	# connects are limited there).
	_bind=
	if [ -n "$SMB_INTERFACES" ]; then
		_bind=$(printf 'bind interfaces only = yes\ninterfaces = %s' "$SMB_INTERFACES")
	fi
	_conns= _share_conns=
	if [ -n "$SMB_MAX_CONNECTIONS" ]; then
		_conns=$(printf 'max connections = %s\nmax active sessions = %s' \
			"$SMB_MAX_CONNECTIONS" "$SMB_MAX_CONNECTIONS")
		_share_conns="max connections = $SMB_MAX_CONNECTIONS"
	fi
	cat > /etc/ksmbd/ksmbd.conf <<-EOF
	[global]
		netbios name = SMBDTEST
		server string = smbd test bed
		workgroup = WORKGROUP
		server min protocol = SMB2_10
		server max protocol = SMB3_11
		server signing = disabled
		server multi channel support = ${SMB_MULTICHANNEL:-no}
		$_bind
		$_conns
		smb2 leases = no
		map to guest = never
		guest account = nobody
		tcp port = 445
	[$SMB_SHARE]
		path = $SMB_EXPORT/$SMB_SHARE
		writeable = yes
		browseable = yes
		guest ok = no
		valid users = $SMB_USER
		store dos attributes = no
		oplocks = yes
		create mask = 0644
		directory mask = 0755
		$_share_conns
	EOF
	rm -f /etc/ksmbd/ksmbdpwd.db
	if ! _o=$($SMB_ADDUSER -a "$SMB_USER" -p "$SMB_PASS" 2>&1); then
		smb_log "ksmbd.adduser failed: $_o"
		return 1
	fi
	# -n: stay in the foreground (we keep its pid), log to stderr
	# shellcheck disable=SC2086 # options: words
	$SMB_MOUNTD ${SMB_MOUNTD_OPTS:-} -n > "$SMB_MOUNTD_LOG" 2>&1 &
	SMB_MOUNTD_PID=$!
	if ! smb_wait 30 smb_server_running; then
		smb_log "ksmbd did not reach running (state $(smb_server_state)); mountd log:"
		sed 's/^/    smb:   /' "$SMB_MOUNTD_LOG"
		return 1
	fi
}

smb_server_running() { [ "$(smb_server_state)" = running ]; }

# smb_rdma_port: the port ksmbd's SMB Direct listener uses, from rdma_cm
# (rdma resource show cm_id), or from the device types when not shown
smb_rdma_port() {
	_p=$(/usr/bin/rdma resource show cm_id 2>/dev/null |
		awk '/LISTEN/ && /ksmbd/ { for (i = 1; i < NF; i++) if ($i == "src-addr") {
			n = split($(i + 1), a, ":"); print a[n]; exit } }')
	if [ -z "$_p" ]; then
		_p=445
		for _t in /sys/class/infiniband/*/node_type; do
			case $(cat "$_t" 2>/dev/null) in *RNIC*) _p=5445 ;; esac
		done
	fi
	echo "$_p"
}

# smb_server_stop: ksmbd.control -s (stops ksmbd and ksmbd.mountd), wait
# for mountd to exit, rmmod ksmbd (set SMB_KEEP_MODULE=1 to keep it)
smb_server_stop() {
	_rc=0
	if [ -e "$SMB_CTL_DIR/kill_server" ]; then
		$SMB_CONTROL -s > /tmp/ksmbd.control.log 2>&1 || {
			smb_log "ksmbd.control -s failed: $(cat /tmp/ksmbd.control.log)"
			_rc=1
		}
	fi
	smb_mountd_end || _rc=1
	if [ "${SMB_KEEP_MODULE:-0}" != 1 ]; then
		smb_unload_module ksmbd || _rc=1
	fi
	if grep -q " $SMB_EXPORT tmpfs " /proc/mounts; then
		umount "$SMB_EXPORT" || _rc=1
	fi
	return $_rc
}

smb_gone() { ! kill -0 "$1" 2>/dev/null; }

# smb_mountd_end: once ksmbd was told to stop, wait up to 20 s for
# ksmbd.mountd (SMB_MOUNTD_PID, a child of this shell) to exit, killing
# it past that (then returns 1); no ksmbd.mountd is left either way (the
# manager forks a worker)
smb_mountd_end() {
	_me=0
	if [ -n "${SMB_MOUNTD_PID:-}" ]; then
		if ! smb_wait 20 smb_gone "$SMB_MOUNTD_PID"; then
			smb_log "ksmbd.mountd ($SMB_MOUNTD_PID) did not exit; killing it"
			kill -9 "$SMB_MOUNTD_PID" 2>/dev/null
			_me=1
		fi
		wait "$SMB_MOUNTD_PID" 2>/dev/null
	fi
	SMB_MOUNTD_PID=
	for _p in $(pidof ksmbd.mountd); do
		kill -9 "$_p" 2>/dev/null
	done
	return $_me
}

# smb_server_restart: ksmbd.control -s (the server drops every connection
# and open file), then ksmbd.mountd again; the module, the share and its
# files stay
smb_server_restart() {
	$SMB_CONTROL -s > /tmp/ksmbd.control.log 2>&1 ||
		{ smb_log "ksmbd.control -s failed: $(cat /tmp/ksmbd.control.log)"; return 1; }
	if [ -n "${SMB_MOUNTD_PID:-}" ]; then
		smb_wait 20 smb_gone "$SMB_MOUNTD_PID" ||
			{ smb_log "ksmbd.mountd did not exit"; return 1; }
		wait "$SMB_MOUNTD_PID" 2>/dev/null
	fi
	for _p in $(pidof ksmbd.mountd); do
		kill -9 "$_p" 2>/dev/null
	done
	smb_wait 20 smb_server_stopped ||
		{ smb_log "ksmbd did not stop (state $(smb_server_state))"; return 1; }
	# Not with the caller's fd 7 (lib-smbpair.sh's file held open across
	# the restart): the daemon would keep the client's mount busy.
	# shellcheck disable=SC2086 # options: words
	$SMB_MOUNTD ${SMB_MOUNTD_OPTS:-} -n >> "$SMB_MOUNTD_LOG" 2>&1 7>&- &
	SMB_MOUNTD_PID=$!
	smb_wait 30 smb_server_running ||
		{ smb_log "ksmbd did not run again (state $(smb_server_state))"; return 1; }
}

smb_server_stopped() { ! smb_server_running; }

# ---------------------------------------------------------------- client

# smb_mount ADDR MOUNTPOINT [EXTRA_OPTIONS]: load cifs, mount
# //ADDR/$SMB_SHARE with $SMB_MOUNT_OPTS (rdma,vers=3.1.1) plus the user
# and EXTRA_OPTIONS
smb_mount() {
	_addr=$1 _mnt=$2 _extra=${3:-}
	smb_load_module cifs "$SMB_CIFS_KO" || return 1
	mkdir -p "$_mnt"
	_opts="$SMB_MOUNT_OPTS,username=$SMB_USER,password=$SMB_PASS${_extra:+,$_extra}"
	if ! _o=$($SMB_MOUNT_CIFS "//$_addr/$SMB_SHARE" "$_mnt" -o "$_opts" 2>&1); then
		smb_log "mount.cifs //$_addr/$SMB_SHARE $_mnt -o ${_opts%%,password=*},... failed: $_o"
		if [ -s "$SMB_MOUNTD_LOG" ]; then
			smb_log "ksmbd.mountd log:"
			sed 's/^/    smb:   /' "$SMB_MOUNTD_LOG" | tail -n 30
		fi
		return 1
	fi
	grep -q " $_mnt cifs " /proc/mounts || { smb_log "$_mnt: not a cifs mount"; return 1; }
}

# smb_umount MOUNTPOINT: unmount (set SMB_KEEP_MODULE=1 to keep cifs loaded)
smb_umount() {
	_rc=0
	if grep -q " $1 cifs " /proc/mounts; then
		umount "$1" || { smb_log "umount $1 failed"; _rc=1; }
	fi
	if [ "${SMB_KEEP_MODULE:-0}" != 1 ]; then
		smb_unload_module cifs || _rc=1
	fi
	return $_rc
}

# smb_check_rdma_session ADDR: cifs's connection to ADDR runs over SMB
# Direct: DebugData shows its SMBDirect section (protocol version 0x100)
# and its RDMA flag, and cifs logged "RDMA transport established"
smb_check_rdma_session() {
	_s=$(awk -v a="$1" '
		/^[0-9]+\) ConnectionId:/ { on = 0 }
		/^[0-9]+\) ConnectionId:/ && index($0, "Hostname: " a " ") { on = 1 }
		on' "$SMB_DEBUGDATA" 2>/dev/null)
	if [ -z "$_s" ]; then
		smb_log "no cifs connection to $1 in $SMB_DEBUGDATA:"
		sed 's/^/    smb:   /' "$SMB_DEBUGDATA" 2>/dev/null | head -n 40
		return 1
	fi
	echo "$_s" | grep -E 'SMBDirect|Conn |MR |RDMA|Dialect' | sed 's/^/    smb: /'
	echo "$_s" | grep -q 'SMBDirect (in hex) protocol version: 100 ' ||
		{ smb_log "no SMB Direct 1.0 session to $1"; return 1; }
	echo "$_s" | grep -q '^RDMA' ||
		{ smb_log "connection to $1 not flagged RDMA"; return 1; }
	dmesg | grep -q 'RDMA transport established' ||
		{ smb_log "no 'RDMA transport established' in the kernel log"; return 1; }
}

# smb_check_rdma_rw FILE_ON_MOUNT SRC_FILE: with ksmbd's RDMA debug on,
# write SRC_FILE (>= 64 KiB) to FILE_ON_MOUNT and read it back, both with
# O_DIRECT: ksmbd must have served the write with RDMA READs and the read
# with RDMA WRITEs (SMB2 channel SMB2_CHANNEL_RDMA_V1*), not with sends
smb_check_rdma_rw() {
	_f=$1 _src=$2
	[ -w "$SMB_CTL_DIR/debug" ] || { smb_log "no $SMB_CTL_DIR/debug"; return 1; }
	grep -q '\[rdma\]' "$SMB_CTL_DIR/debug" || echo rdma > "$SMB_CTL_DIR/debug"
	_m=$(smb_kmsg_mark)
	dd if="$_src" of="$_f" bs=1M oflag=direct 2>/dev/null
	_w=$?
	dd if="$_f" of=/tmp/smb-rw.back bs=1M iflag=direct 2>/dev/null
	_r=$?
	echo rdma > "$SMB_CTL_DIR/debug"	# toggles it off again
	_k=$(smb_kmsg_since "$_m")
	_nr=$(echo "$_k" | grep -c 'RDMA read, len')
	_nw=$(echo "$_k" | grep -c 'RDMA write, len')
	smb_log "O_DIRECT write+read of $(wc -c < "$_src") bytes: ksmbd did $_nr RDMA read(s), $_nw RDMA write(s)"
	_ok=0
	if [ $_w != 0 ] || [ $_r != 0 ]; then
		smb_log "dd failed: write rc=$_w read rc=$_r"
		_ok=1
	fi
	cmp -s "$_src" /tmp/smb-rw.back || { smb_log "data read back differs"; _ok=1; }
	rm -f /tmp/smb-rw.back
	[ "$_nr" -gt 0 ] && [ "$_nw" -gt 0 ] || _ok=1
	return $_ok
}

# smb_dd_rate BYTES SRC DST [DD_FLAGS...]: copy BYTES with dd bs=1M, print
# the rate in MB/s (MiB/s, 10 ms clock)
smb_dd_rate() {
	_bytes=$1 _src=$2 _dst=$3
	shift 3
	_t0=$(uptime_s)
	dd if="$_src" of="$_dst" bs=1M count=$((_bytes / 1048576)) "$@" 2>/dev/null || return 1
	rate "$_bytes" "$_t0"
}

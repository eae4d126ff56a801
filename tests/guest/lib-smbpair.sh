# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# The SMB pairings on smbd (tests/guest/smb/plan-7*.sh): an SMB client and
# an SMB server, each the test kernel's stock module or our build on smbd
# (adapters/: /smbd/cifs.ko, /smbd/ksmbd.ko), over soft-RoCE (rxe0,
# 192.0.2.1) and soft-iWARP (siw0, 192.0.2.17). For each provider:
#   mount -o rdma; SMB Direct in use, and RDMA reads and writes done (smbd's
#   debugfs smbd/connections for our side, ksmbd's RDMA debug log for a
#   stock server); files of 1 B to 8 MiB written and read back with
#   buffered and direct I/O, and one of 16 MiB with direct I/O (its timing
#   is the throughput reported), by checksum, on the server's disk and over
#   the mount; concurrent readers and writers; the server restarted while
#   a file is open (the client reconnects and the I/O goes on); umount;
#   with PAIR_SECURED="sign seal", signed and sealed mounts moving data;
#   rmmod.
# Source it, then call: pairing CLIENT SERVER, each "smbd" or "stock".

# shellcheck source=tests/guest/lib-smb.sh
. /smbd/lib-smb.sh

SIZES="1 4095 4096 4097 1048576 8388608 16777216"
# The largest goes through direct I/O only: buffered I/O of 8 MiB already
# spans many full-size requests. 16 MiB is 16 full-size requests each way
# in a row; 64 MiB proved nothing more and cost minutes per cycle (over
# siw reads run at 1-3 MiB/s in the TCG guest).
BIG=16777216
# Each of concurrent()'s files: four 1 MiB requests, eight transfers at
# once (8 MiB files found nothing more and took a sixth of a cycle)
CONC=4194304
PAIR_DATA=/tmp/smbpair-data

pair_data() {
	[ -f $PAIR_DATA/.done ] && return 0
	mkdir -p $PAIR_DATA
	for s in $SIZES $CONC; do
		[ -f $PAIR_DATA/$s ] || head -c "$s" /dev/urandom > $PAIR_DATA/$s
	done
	touch $PAIR_DATA/.done
}

# xfer T MNT SIZE MODE: write a SIZE-byte file over the mount and read it
# back (MODE buffered: cp and the page cache dropped; direct: dd with
# O_DIRECT, 1 MiB requests); check it on the server's disk and as read.
# Sets XFER_WR and XFER_RD: the write's and the read's MiB/s.
xfer() {
	_t=$1 _mnt=$2 _s=$3 _m=$4
	_src=$PAIR_DATA/$_s _f=$_m-$_s
	_want=$(md5 "$_src")
	_w0=$(uptime_s)
	if [ "$_m" = direct ]; then
		dd if="$_src" of="$_mnt/$_f" bs=1M oflag=direct 2>/dev/null
	else
		cp "$_src" "$_mnt/$_f" && sync
	fi
	_wrc=$?
	XFER_WR=$(rate "$_s" "$_w0")
	_srv=$(md5 "$share/$_f")
	drop_caches
	_r0=$(uptime_s)
	if [ "$_m" = direct ]; then
		dd if="$_mnt/$_f" of=/tmp/smbpair.back bs=1M iflag=direct 2>/dev/null
	else
		cp "$_mnt/$_f" /tmp/smbpair.back
	fi
	_rrc=$?
	XFER_RD=$(rate "$_s" "$_r0")
	_got=$(md5 /tmp/smbpair.back)
	rm -f /tmp/smbpair.back "$_mnt/$_f"
	[ $_wrc = 0 ] && [ $_rrc = 0 ] && [ "$_srv" = "$_want" ] && [ "$_got" = "$_want" ]
	result $? "$_t/$_m-$_s" "write rc=$_wrc read rc=$_rrc; server md5 ${_srv:-none}, read ${_got:-none}, want $_want"
}

# concurrent T MNT: 4 writers and then 4 readers at once, CONC bytes
# each, while 4 other readers read files written before
concurrent() {
	_t=$1 _mnt=$2 _want=$(md5 $PAIR_DATA/$CONC) _rc=0
	for i in 1 2 3 4; do
		cp $PAIR_DATA/$CONC "$_mnt/old-$i"
	done
	sync
	drop_caches
	_pids=""
	for i in 1 2 3 4; do
		dd if=$PAIR_DATA/$CONC of="$_mnt/new-$i" bs=1M oflag=direct 2>/dev/null &
		_pids="$_pids $!"
		dd if="$_mnt/old-$i" of=/tmp/smbpair-old-$i bs=1M iflag=direct 2>/dev/null &
		_pids="$_pids $!"
	done
	for p in $_pids; do
		wait "$p" || _rc=1
	done
	for i in 1 2 3 4; do
		[ "$(md5 /tmp/smbpair-old-$i)" = "$_want" ] || _rc=2
		[ "$(md5 "$share/new-$i")" = "$_want" ] || _rc=3
		rm -f /tmp/smbpair-old-$i
	done
	drop_caches
	_pids=""
	for i in 1 2 3 4; do
		dd if="$_mnt/new-$i" of=/tmp/smbpair-new-$i bs=1M 2>/dev/null &
		_pids="$_pids $!"
	done
	for p in $_pids; do
		wait "$p" || _rc=4
	done
	for i in 1 2 3 4; do
		[ "$(md5 /tmp/smbpair-new-$i)" = "$_want" ] || _rc=5
		rm -f /tmp/smbpair-new-$i "$_mnt/new-$i" "$_mnt/old-$i"
	done
	result $_rc "$_t/concurrent-4w-8r" "step $_rc failed (1 dd, 2 old read, 3 new on server, 4 dd read, 5 new read)"
}

# restart T MNT: a file open for writing across a server restart
restart() {
	_t=$1 _mnt=$2
	exec 7>"$_mnt/open-file" || { nok "$_t/restart-open-file" "open failed"; return; }
	echo "before the restart" >&7
	_t0=$(uptime_s)
	smb_server_restart
	result $? "$_t/server-restart" || { exec 7>&-; return; }
	# The client notices, reconnects and reopens the file.
	_rc=1
	_n=0
	while [ $_n -lt 60 ]; do
		if echo "after the restart" >&7 2>/dev/null; then
			_rc=0
			break
		fi
		sleep 1
		_n=$((_n + 1))
	done
	exec 7>&-
	printf 'before the restart\nafter the restart\n' > /tmp/smbpair.want
	sync
	drop_caches
	_i=0
	while [ $_rc = 0 ] && ! cmp -s /tmp/smbpair.want "$_mnt/open-file" 2>/dev/null; do
		_i=$((_i + 1))
		[ $_i -gt 30 ] && { _rc=2; break; }
		sleep 1
	done
	cmp -s /tmp/smbpair.want "$share/open-file" || _rc=3
	result $_rc "$_t/io-after-restart" "step $_rc (1 write through the open file, 2 read over the mount, 3 on the server) after $(since "$_t0") s; server has: $(head -c 80 "$share/open-file" 2>/dev/null | tr '\n' '|')"
	echo "    smb: reconnected and wrote after $(since "$_t0") s"
	rm -f /tmp/smbpair.want "$_mnt/open-file"
}

# secured T ADDR MNT OPT: a mount with OPT, "sign" or "seal": DebugData
# says the session signs or the share encrypts, and data moves both ways
# intact, buffered and direct, and 4 MiB direct (many requests: cifs caps
# signed and sealed ones at the peer's largest message; at 0.5-1 MiB/s in
# the guest, 8 MiB cost a minute a mount and found nothing more). The
# stock cifs turns RDMA offload off for signed and sealed I/O; cifs and
# ksmbd on smbd (adapters/patches/6.*/*-rdma-transform-*.patch, 6.12 and
# 6.1) keep it through the SMB 3.1.1 RDMA signing and encryption
# transforms ([MS-SMB2] 2.2.43), checked when both are on smbd: the
# client registered buffers and the server read and wrote them. With
# the stock ksmbd, the I/O stays in messages; other pairings report what
# went by RDMA.
secured() {
	_st=$1/$4 _sa=$2 _sm=$3
	smb_mount "$_sa" "$_sm" "$4"
	if ! result $? "$_st/mount"; then
		# cifs stays loaded: the pairing's rmmod check covers it.
		SMB_KEEP_MODULE=1 smb_umount "$_sm"
		return
	fi
	# 6.1 writes " Encrypted" for a sealed share.
	case $4 in
	sign) _sw=" signed" ;;
	seal) _sw=" encrypted" ;;
	*) _sw=" $4" ;;
	esac
	grep -qi "$_sw" "$SMB_DEBUGDATA"
	result $? "$_st/in-effect" "looked for \"$_sw\" in DebugData"
	rdma_mark
	for s in 4097 1048576; do
		for m in buffered direct; do
			xfer "$_st" "$_sm" "$s" "$m"
		done
	done
	xfer "$_st" "$_sm" $CONC direct
	rdma_since
	echo "SMBD-INFO: $_st: write $XFER_WR MiB/s, read $XFER_RD MiB/s ($((CONC >> 20)) MiB, O_DIRECT); by RDMA meanwhile: $RDMA_REG MRs registered by the client, $RDMA_RD reads and $RDMA_WR writes by the server"
	if [ "$CLIENT.$SERVER" = smbd.smbd ]; then
		[ "$RDMA_REG" -gt 0 ] && [ "$RDMA_RD" -gt 0 ] && [ "$RDMA_WR" -gt 0 ]
		result $? "$_st/rdma-transform" "$4 I/O by RDMA: $RDMA_REG MRs, $RDMA_RD RDMA reads, $RDMA_WR RDMA writes"
		floor "$_st" "$_sm"
		# tamper() corrupts 4 KiB by RDMA: the transform down to 4 KiB
		_was=$(cat $XFORM_MIN 2>/dev/null)
		[ -z "$_was" ] || echo 0 > $XFORM_MIN
		tamper "$_st" "$_sm"
		[ -z "$_was" ] || echo "$_was" > $XFORM_MIN
	elif [ "$CLIENT.$SERVER" = smbd.stock ]; then
		# the stock ksmbd does not answer the transform: messages
		[ "$RDMA_REG" -eq 0 ]
		result $? "$_st/no-transform-fallback" "$4 I/O against the stock ksmbd in messages: $RDMA_REG MRs registered"
	fi
	SMB_KEEP_MODULE=1 smb_umount "$_sm"
	result $? "$_st/umount"
}

# floor_io MNT: 4 KiB O_DIRECT written to MNT and read back, intact
# (status in _rc), with the RDMA counters meanwhile (rdma_since)
floor_io() {
	rdma_mark
	dd if=/tmp/floor.want of="$1/floor" bs=4096 oflag=direct 2>/dev/null &&
		dd if="$1/floor" of=/tmp/floor.got bs=4096 iflag=direct 2>/dev/null &&
		cmp -s /tmp/floor.got /tmp/floor.want
	_rc=$?
	rdma_since
}

# floor T MNT: cifs's rdma_transform_threshold (adapters/patches/6.*/
# cifs-rdma-transform-encryption.patch): signed or sealed I/O smaller
# moves in messages, as the transform's own cryptography does not pay
# for itself there; at 0, the same I/O goes by RDMA. The threshold is
# put back after.
XFORM_MIN=/sys/module/cifs/parameters/rdma_transform_threshold
floor() {
	_ft=$1 _fm=$2
	if [ ! -w $XFORM_MIN ]; then
		nok "$_ft/transform-floor" "no $XFORM_MIN"
		return
	fi
	_fw=$(cat $XFORM_MIN)
	head -c 4096 "$PAIR_DATA/1048576" > /tmp/floor.want
	floor_io "$_fm"
	[ $_rc = 0 ] && [ "$_fw" -gt 4096 ] && [ "$RDMA_REG" = 0 ]
	result $? "$_ft/small-io-in-messages" "4 KiB written and read back (rc $_rc) under a threshold of $_fw: $RDMA_REG MRs"
	echo 0 > $XFORM_MIN
	floor_io "$_fm"
	echo "$_fw" > $XFORM_MIN
	[ $_rc = 0 ] && [ "$RDMA_REG" -ge 2 ] && [ "$RDMA_RD" -ge 1 ] && [ "$RDMA_WR" -ge 1 ]
	result $? "$_ft/threshold-0-by-rdma" "4 KiB written and read back (rc $_rc) at 0: $RDMA_REG MRs, $RDMA_RD RDMA reads, $RDMA_WR RDMA writes"
	rm -f /tmp/floor.want /tmp/floor.got "$_fm/floor"
}

# tamper T MNT: signed or sealed I/O through the RDMA transform, with one
# byte of what RDMA moved changed after it was signed or encrypted
# (smbd's fault points, once each): a 4 KiB O_DIRECT read fails (cifs
# checks or decrypts the data once its buffer is deregistered) and the
# next read is intact; a 4 KiB O_DIRECT write fails (ksmbd checks or
# decrypts it after its RDMA read: STATUS_INVALID_SIGNATURE or
# STATUS_AUTH_TAG_MISMATCH) and the server's copy stays as it was.
tamper() {
	_tt=$1 _tm=$2 _fd=/sys/kernel/debug/smbd
	_tf=$SMB_EXPORT/$SMB_SHARE/tamper
	if [ ! -d $_fd/corrupt_rdma_read ]; then
		nok "$_tt/tamper" "no smbd/corrupt_rdma_read in debugfs"
		return
	fi
	head -c 4096 "$PAIR_DATA/1048576" > /tmp/tamper.want
	tail -c 4096 "$PAIR_DATA/1048576" > /tmp/tamper.new
	# written through the mount: the server's user owns it
	cp /tmp/tamper.want "$_tm/tamper" && cmp -s "$_tf" /tmp/tamper.want
	result $? "$_tt/tamper-file" "4 KiB written through the mount, on the server intact" || return
	# corrupt P: arm point P for one fault; fired N: its count
	corrupt() { echo 100 > "$_fd/$1/probability"; echo 1 > "$_fd/$1/times"; }
	fired() { cat "$_fd/$1/fired"; }
	calm() { echo 0 > "$_fd/$1/probability"; }

	_f0=$(fired corrupt_rdma_write)
	corrupt corrupt_rdma_write
	dd if="$_tm/tamper" of=/tmp/tamper.got bs=4096 count=1 iflag=direct 2>/tmp/tamper.err
	_rc=$?
	calm corrupt_rdma_write
	_f1=$(fired corrupt_rdma_write)
	[ $_rc -ne 0 ] && [ "$_f1" -eq $((_f0 + 1)) ]
	result $? "$_tt/tamper-read-refused" "dd rc $_rc ($(tail -n 1 /tmp/tamper.err)), corrupt_rdma_write fired $_f0 then $_f1"
	dd if="$_tm/tamper" of=/tmp/tamper.got bs=4096 count=1 iflag=direct 2>/dev/null &&
		cmp -s /tmp/tamper.got /tmp/tamper.want
	result $? "$_tt/read-after-tamper" "the same read again, intact"

	_f0=$(fired corrupt_rdma_read)
	corrupt corrupt_rdma_read
	dd if=/tmp/tamper.new of="$_tm/tamper" bs=4096 count=1 oflag=direct conv=notrunc 2>/tmp/tamper.err
	_rc=$?
	calm corrupt_rdma_read
	_f1=$(fired corrupt_rdma_read)
	[ $_rc -ne 0 ] && [ "$_f1" -eq $((_f0 + 1)) ] && cmp -s "$_tf" /tmp/tamper.want
	result $? "$_tt/tamper-write-refused" "dd rc $_rc ($(tail -n 1 /tmp/tamper.err)), corrupt_rdma_read fired $_f0 then $_f1, server copy $(cmp -s "$_tf" /tmp/tamper.want && echo unchanged || echo CHANGED)"
	rm -f "$_tf" /tmp/tamper.want /tmp/tamper.new /tmp/tamper.got /tmp/tamper.err
}

# provider T NAME ADDR: one pairing's whole cycle over one provider
provider() {
	t=$1/$2
	addr=$3
	mnt=/mnt/smbpair
	share=$SMB_EXPORT/$SMB_SHARE
	t0=$(uptime_s)

	smb_server_start
	result $? "$t/ksmbd-start" || { smb_server_stop; return; }
	smb_mount "$addr" "$mnt"
	if ! result $? "$t/mount-rdma"; then
		dmesg | tail -n 30 | sed 's/^/    /'
		smb_umount "$mnt"
		smb_server_stop
		return
	fi
	smb_check_rdma_session "$addr"
	result $? "$t/smb-direct-session"

	rdma_mark
	for s in $SIZES; do
		for m in buffered direct; do
			[ "$s" = $BIG ] && [ $m = buffered ] && continue
			xfer "$t" "$mnt" "$s" "$m"
		done
	done
	# Throughput: the big direct transfer, 1 MiB requests.
	echo "SMBD-INFO: $t: write $XFER_WR MiB/s, read $XFER_RD MiB/s ($((BIG >> 20)) MiB, O_DIRECT, 1 MiB requests)"

	# RDMA, not only sends: our side says so in smbd's counters, a stock
	# server in its RDMA debug log.
	rdma_since
	if [ "$CLIENT" = smbd ]; then
		[ "$RDMA_REG" -gt 0 ]
		result $? "$t/client-registered-buffers" "$RDMA_REG MRs registered by cifs on smbd"
	fi
	if [ "$SERVER" = smbd ]; then
		[ "$RDMA_RD" -gt 0 ] && [ "$RDMA_WR" -gt 0 ]
		result $? "$t/server-rdma-read-write" "ksmbd on smbd: $RDMA_RD RDMA reads, $RDMA_WR RDMA writes"
		# The 4096- and 4097-byte O_DIRECT reads: small RDMA Writes
		# go from smbd's slots, unwaited, and their data came intact.
		[ "$RDMA_WP" -gt 0 ] && [ "$RDMA_WP" -lt "$RDMA_WR" ]
		result $? "$t/server-posted-writes" "$RDMA_WP of $RDMA_WR RDMA writes posted unwaited"
	else
		smb_check_rdma_rw "$mnt/rw-1m" $PAIR_DATA/1048576
		result $? "$t/server-rdma-read-write"
		rm -f "$mnt/rw-1m"
	fi
	sed 's/^/    smbd: /' "$SMBD_CONNS" 2>/dev/null

	concurrent "$t" "$mnt"
	restart "$t" "$mnt"

	rm -f "$mnt"/* 2>/dev/null
	SMB_KEEP_MODULE=1 smb_umount "$mnt"
	if result $? "$t/umount"; then
		for o in ${PAIR_SECURED:-}; do
			secured "$t" "$addr" "$mnt" "$o"
		done
	fi
	smb_unload_module cifs
	result $? "$t/rmmod-cifs"
	SMB_KEEP_MODULE=1 smb_server_stop
	result $? "$t/ksmbd-stop"
	smb_unload_module ksmbd
	result $? "$t/rmmod-ksmbd"
	echo "SMBD-INFO: $t: cycle took $(since "$t0") s"
}

# unload_smbd NAME: the last plan's end: smbd.ko unloads once its consumers
# are gone
unload_smbd() {
	smb_unload_module smbd
	result $? "$1/rmmod-smbd" "$(grep '^smbd ' /proc/modules)"
}

# pair_providers: the providers of the pairing $CLIENT.$SERVER, from
# smbdtest.pair_providers=CLIENT.SERVER:P+P,... (the test command runs
# the stock peers over one provider each), else $PAIR_PROVIDERS, else both
pair_providers() {
	for _e in $(karg smbdtest.pair_providers | tr ',' ' '); do
		if [ "${_e%%:*}" = "$CLIENT.$SERVER" ]; then
			echo "${_e#*:}" | tr '+' ' '
			return
		fi
	done
	echo "${PAIR_PROVIDERS:-rxe siw}"
}

# pairing CLIENT SERVER: each provider of pair_providers, then nothing
# left behind
pairing() {
	CLIENT=$1 SERVER=$2
	name=${PAIR_PREFIX:-smb}/cifs-$CLIENT.ksmbd-$SERVER
	SMB_CIFS_KO= SMB_KSMBD_KO=
	[ "$CLIENT" = smbd ] && SMB_CIFS_KO=/smbd/cifs.ko
	[ "$SERVER" = smbd ] && SMB_KSMBD_KO=/smbd/ksmbd.ko
	for k in $SMB_CIFS_KO $SMB_KSMBD_KO; do
		if [ ! -f "$k" ]; then
			${PAIR_MISSING:-$SMBD_MISSING} "$name" "no $k in this image"
			return
		fi
	done
	pair_data
	for p in $(pair_providers); do
		case $p in
		rxe) provider "$name" rxe "$RXE_ADDR" ;;
		siw) provider "$name" siw "$SIW_ADDR" ;;
		esac
	done
	smb_umount /mnt/smbpair >/dev/null 2>&1
	smb_server_stop >/dev/null 2>&1
	left=$(grep -E ' cifs | smb3 ' /proc/mounts; grep -E '^(cifs|ksmbd) ' /proc/modules)
	[ -z "$left" ]
	result $? "$name/clean" "left: $left"
}

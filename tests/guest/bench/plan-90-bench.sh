#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Guest plan of the benchmark (scripts/bench.sh boots it on the bench
# kernel, which has no bug finders). Per provider (siw on 192.0.2.17, rxe
# on 192.0.2.1 with MTU 9000), all in one boot:
#   verbs  perftest over rdma_cm: ib_send_bw, ib_write_bw and ib_read_bw at
#          1 MiB, ib_send_lat at 4 KiB;
#   api    smbd to smbd through smbd_test.ko: 1 MiB messages each way, 4 KiB
#          request/response round trips, connection setups;
#   smb    fio on the mount: 1 MiB sequential read and write at queue depth
#          1 and 8, 4 KiB random read and write at queue depth 16, 4 KiB
#          random read at queue depth 1 (one SMB round trip each), for
#          each pairing of cifs and ksmbd (stock, or on smbd);
#   trace  one 4 KiB random read at queue depth 1 after another, with
#          kprobe events at each step of both ends (trace-qd1.awk): the
#          median time of each step and the scheduler's, the workqueues'
#          and the transports' events per I/O, for each pairing;
#   scale  many connections to one listener, for stock cifs to stock
#          ksmbd and cifs on smbd to ksmbd on smbd: 1, 4, 16 and 64 cifs
#          mounts (nosharesock: a connection each), 4 KiB random reads
#          at depth 1 on all of them at once, mounts per second and
#          memory per connection, umounts per second (until rdma_cm
#          holds no connection's id); then more mounts, up to
#          smbdbench.scale_max (256) or the first that fails;
#   cost   the transports' own CPU per I/O: 4 KiB random reads at depth 1
#          and 16, 1 MiB writes at depth 1 and reads at depth 8 under a
#          profile with call chains (cost.awk), for each pairing, so each
#          role of smbd is measured against the stock code in the other;
#   mc     SMB3 multichannel, cifs on smbd to ksmbd on smbd: fio 1 MiB
#          sequential write and read at queue depth 8 with one channel
#          (ch1), two on one device (d1ch2: ksmbd lists only the first
#          port, and cifs opens a channel to its IPv4 and to its IPv6
#          address), one on each of the provider's two devices (ch2;
#          /init: rxe0 and rxe1, siw0 and siw1) and two on each (ch4: one
#          per address); each run's RDMA bytes and connections per device
#          are printed;
# and SMB over TCP once (stock cifs to stock ksmbd on 192.0.2.1).
# Every run is repeated; each prints one line
#   SMBD-BENCH: provider=P group=G test=T rep=N value=V unit=U cpu=S ...
# where cpu is the guest's busy CPU seconds (all CPUs, /proc/stat) over the
# run; fio runs add json=<fio's JSON on one line>. scripts/bench-report.py
# turns them into the table, the JSON and the chart.
# Kernel command line: smbdbench.repeat=N (3), smbdbench.runtime=S (5),
# smbdbench.providers="siw rxe", smbdbench.parts="verbs api smb cost trace scale mc tcp",
# smbdbench.pairs="stock.stock smbd.stock stock.smbd smbd.smbd" (a pairing
# may name a mount option and smbd.ko parameters for its run, in that
# order: smbd.smbd-sign, stock.stock-seal, smbd.smbd:cq_poll=workqueue),
# smbdbench.profile=0|1 (1: a perf profile of the SMB runs of
# stock.stock and smbd.smbd), smbdbench.smbd="max_send_size=8192,..."
# (smbd.ko's module parameters), smbdbench.jobs="randread_4k_qd1 ..." (only
# these SMB and cost jobs), smbdbench.scale_max=N, smbdbench.cost_offsets=1
# (the cost part's first round also prints where in smbd.ko's functions
# its samples fell: SMBD-BENCH-COST-OFF, for scripts/bench-lines.sh);
# "+" stands for a space in the lists.

# shellcheck source=tests/guest/lib-smb.sh
. /smbd/lib-smb.sh
# shellcheck source=tests/guest/lib-st.sh
. /smbd/lib-st.sh

# barg NAME [DEFAULT]: karg smbdbench.NAME, each "+" a space
barg() { karg "smbdbench.$1" "${2:-}" | tr '+' ' '; }
REPEAT=$(barg repeat 3)
RUNTIME=$(barg runtime 5)
PROVIDERS=$(barg providers "siw rxe")
PARTS=$(barg parts "verbs api smb cost trace scale mc tcp")
PAIRS=$(barg pairs "stock.stock smbd.stock stock.smbd smbd.smbd")
PROFILE=$(barg profile 1)
SMBD_ARGS=$(barg smbd | tr ',' ' ')
ONLY_JOBS=$(barg jobs)
SCALE_MAX=$(barg scale_max 256)
COST_OFFSETS=$(barg cost_offsets 0)

RDMA=/usr/bin/rdma
MNT=/mnt/bench
# shellcheck disable=SC2034 # read by lib-smb.sh
SMB_EXPORT_SIZE=1g
FILE_MB=256
# Kernel messages on the console would cut into the result lines.
dmesg -n 1

# Busy CPU time of all CPUs in USER_HZ ticks: user nice system irq softirq
# steal.
ticks() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9 }' /proc/stat; }
in_list() { case " $1 " in *" $2 "*) return 0 ;; esac; return 1; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }
cpus() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", (b - a) / 100 }'; }
bench() { echo "SMBD-BENCH: $*"; }

# thread_ticks: "TID COMM TICKS" of every thread, TICKS its user and
# system time in 1/100 s (a comm's blanks become _)
thread_ticks() {
	cat /proc/[0-9]*/task/[0-9]*/stat 2>/dev/null |
		awk '{
			n = split($0, a, ") "); split(a[n], f, " ")
			c = substr($0, index($0, "(") + 1)
			c = substr(c, 1, length(c) - length(a[n]) - 2)
			gsub(/ /, "_", c)
			print $1, c, f[12] + f[13]
		}'
}

# thread_top BEFORE AFTER: the threads that ran between two thread_ticks,
# summed by name (a number in it made #: kworker/1:2 is kworker/#:#),
# the busiest first, as "NAME TICKS ..."; a thread gone by then (fio's
# own) is not counted
thread_top() {
	awk 'NR == FNR { t[$1] = $3; next }
		{ d = $3 - t[$1]; c = $2; gsub(/[0-9]+/, "#", c)
		  if ($2 ~ /^siw_tx/) c = $2
		  if (d > 0) s[c] += d }
		END { for (c in s) print s[c], c }' "$1" "$2" |
		sort -rn | head -n 8 | awk '{ printf "%s %s ", $2, $1 }'
}
problem() { echo "SMBD-BENCH-ERROR: $*"; }

addr_of() { case $1 in rxe) echo "$RXE_ADDR" ;; siw) echo "$SIW_ADDR" ;; esac; }
dev_of() { echo "${1}0"; }

# ------------------------------------------------------------ raw verbs

# listening PORT: an rdma_cm id listens on PORT
listening() { $RDMA resource show cm_id 2>/dev/null | grep -q "LISTEN.*:$1 "; }

VPORT=18515
# perf_run TOOL DEV ADDR SIZE ITERS: one perftest client and server pair;
# sets P_SECS and P_CPU (the client's wall time and the guest's CPU) and
# leaves the client's output in /tmp/perf-client.out
perf_run() {
	VPORT=$((VPORT + 1))
	"$1" -d "$2" -R -F -s "$4" -n "$5" -p $VPORT > /tmp/perf-server.out 2>&1 &
	_spid=$!
	if ! smb_wait 10 listening $VPORT; then
		problem "$1 server did not listen: $(cat /tmp/perf-server.out)"
		kill $_spid 2>/dev/null
		return 1
	fi
	_c0=$(ticks) _t0=$(uptime_s)
	"$1" -d "$2" -R -F -s "$4" -n "$5" -p $VPORT "$3" > /tmp/perf-client.out 2>&1
	_rc=$?
	_t1=$(uptime_s) _c1=$(ticks)
	wait $_spid
	tail -n 3 /tmp/perf-client.out | sed "s/^/    $1: /"
	P_SECS=$(secs "$_t0" "$_t1") P_CPU=$(cpus "$_c0" "$_c1")
	if [ $_rc != 0 ]; then
		problem "$1 -s $4 -n $5 $3: rc $_rc: $(tail -n 3 /tmp/perf-client.out | tr '\n' ' ')"
		return 1
	fi
}

# perftest's own figure: the last number row's column N
perf_col() { awk -v c="$1" '$1 ~ /^[0-9]+$/ && NF >= c { v = $c } END { print v + 0 }' /tmp/perf-client.out; }

# verbs_bw PROVIDER TOOL: 1 MiB messages. Timed as a whole process, less a
# short run's time (connection setup): the rate does not depend on
# perftest's idea of the CPU clock. Its own figure is kept as "perftest".
verbs_bw() {
	vn=$((RUNTIME * 100)) vn0=20 _size=1048576
	_addr=$(addr_of "$1") _dev=$(dev_of "$1")
	for _r in $(seq "$REPEAT"); do
		perf_run "$2" "$_dev" "$_addr" $_size $vn0 || return
		_s0=$P_SECS _cpu0=$P_CPU
		perf_run "$2" "$_dev" "$_addr" $_size $vn || return
		_own=$(perf_col 4)
		_mbs=$(awk -v n=$((vn - vn0)) -v s=$_size -v a="$_s0" -v b="$P_SECS" \
			'BEGIN { d = b - a; if (d < 0.01) d = 0.01; printf "%.1f", n * s / d / 1e6 }')
		_cpu=$(awk -v a="$_cpu0" -v b="$P_CPU" 'BEGIN { printf "%.3f", b - a }')
		bench "provider=$1 group=verbs test=${2#ib_} rep=$_r value=$_mbs unit=MB/s cpu=$_cpu" \
			"bytes=$(((vn - vn0) * _size)) ios=$((vn - vn0)) secs=$(secs "$_s0" "$P_SECS") perftest=$_own"
	done
}

# verbs_lat PROVIDER: 4 KiB ping-pong (ib_send_lat), round trips timed the
# same way; perftest's own typical and 99% one-way latency are kept.
verbs_lat() {
	vn=$((RUNTIME * 5000)) vn0=100
	_addr=$(addr_of "$1") _dev=$(dev_of "$1")
	for _r in $(seq "$REPEAT"); do
		perf_run ib_send_lat "$_dev" "$_addr" 4096 $vn0 || return
		_s0=$P_SECS
		perf_run ib_send_lat "$_dev" "$_addr" 4096 $vn || return
		_ops=$(awk -v n=$((vn - vn0)) -v a="$_s0" -v b="$P_SECS" \
			'BEGIN { d = b - a; if (d < 0.01) d = 0.01; printf "%.0f", n / d }')
		bench "provider=$1 group=verbs test=send_lat rep=$_r value=$_ops unit=rt/s cpu=0" \
			"ios=$((vn - vn0)) secs=$(secs "$_s0" "$P_SECS") perftest_typical_us=$(perf_col 5) perftest_p99_us=$(perf_col 8)"
	done
}

verbs() {
	# How fast perftest thinks this CPU runs (it converts cycles with it).
	bench "provider=$1 group=info test=cpu_mhz rep=1 value=$(awk '/^cpu MHz/ { print $4; exit }' /proc/cpuinfo) unit=MHz cpu=0"
	verbs_bw "$1" ib_send_bw
	verbs_bw "$1" ib_write_bw
	verbs_bw "$1" ib_read_bw
	verbs_lat "$1"
}

# ------------------------------------------------------------ smbd API

APORT=5600
# api_run PROVIDER TEST UNIT AWK-PROGRAM COMMAND...: one smbd_test command;
# the value is what AWK-PROGRAM prints from its "info" line
api_run() {
	_p=$1 _t=$2 _u=$3 _prog=$4
	shift 4
	_c0=$(ticks) _t0=$(uptime_s)
	echo "$*" > "$D/ctl" 2>/dev/null
	_t1=$(uptime_s) _c1=$(ticks)
	cat "$D/result" > /tmp/api.out
	if grep -q '^not ok' /tmp/api.out || ! grep -q '^info' /tmp/api.out; then
		problem "$_p api $_t: $(grep -v '^ok' /tmp/api.out | tr '\n' ' ')"
		return 1
	fi
	_v=$(grep '^info' /tmp/api.out | tail -n 1 | awk "$_prog")
	bench "provider=$_p group=api test=$_t rep=$_r value=$_v unit=$_u" \
		"cpu=$(cpus "$_c0" "$_c1") secs=$(secs "$_t0" "$_t1") $API_EXTRA"
	sed 's/^/    /' /tmp/api.out
}

api() {
	_addr=$(addr_of "$1")
	APORT=$((APORT + 1))
	echo "listen $_addr $APORT" > "$D/ctl"
	_mb=$((RUNTIME * 100))
	for _r in $(seq "$REPEAT"); do
		for _dir in up down; do
			# "...messages: N bytes in M ms = X MiB/s ...": MB/s
			API_EXTRA="bytes=$((_mb << 20))"
			api_run "$1" "bulk_$_dir" MB/s \
				'{ sub(/.*: /, ""); printf "%.1f\n", $1 / $4 / 1000 }' \
				stream "$_addr" $APORT conns=1 bytes=${_mb}M msg=1048576 dir=$_dir timeout=600
		done
		an=$((RUNTIME * 1000))
		API_EXTRA="ios=$an"
		api_run "$1" rr_4k rt/s \
			'{ for (i = 1; i <= NF; i++) if ($i == "per") print $(i-1) }' \
			rr "$_addr" $APORT msg=4096 count=$an timeout=600
		grep '^info rr' /tmp/api.out | awk -v p="$1" -v r="$_r" '{
			for (i = 1; i <= NF; i++) { if ($i == "p50") a = $(i+1); if ($i == "p99") b = $(i+1) }
			printf "SMBD-BENCH: provider=%s group=api test=rr_4k_p50 rep=%s value=%s unit=us cpu=0\n", p, r, a
			printf "SMBD-BENCH: provider=%s group=api test=rr_4k_p99 rep=%s value=%s unit=us cpu=0\n", p, r, b }'
		an=$((RUNTIME * 20))
		API_EXTRA="ios=$an"
		api_run "$1" connect conn/s \
			'{ for (i = 1; i <= NF; i++) if ($i == "per") print $(i-1) }' \
			connrate "$_addr" $APORT count=$an timeout=600
	done
	echo "stop $_addr $APORT" > "$D/ctl"
	cat "$D/result" > /tmp/api.out
	grep -q '^not ok' /tmp/api.out && problem "$1 api stop: $(cat /tmp/api.out)"
}

# ------------------------------------------------------------ SMB (fio)

# fio_args TEST RW BS DEPTH: the arguments of one time-based fio job on
# the mount (words without spaces), for fio_run and cost_run
fio_args() {
	echo "--name=$1 --filename=$MNT/bench.dat --size=${FILE_MB}M" \
		"--rw=$2 --bs=$3 --iodepth=$4 --ioengine=libaio --direct=1" \
		"--time_based --runtime=$RUNTIME --norandommap --randrepeat=0"
}

# fio_run PROVIDER PAIR TEST RW BS DEPTH REP [PROFILE [GROUP]]: one fio
# job on the mount, reported in GROUP (smb); the figure is MB/s for 1 MiB
# jobs and IO/s for 4 KiB ones
fio_run() {
	thread_ticks > /tmp/threads0
	_c0=$(ticks) _t0=$(uptime_s)
	if [ "${8:-0}" = 1 ]; then
		/usr/bin/perf record -a -e cpu-clock -F 499 -o /tmp/perf.data -q -- \
			sleep "$RUNTIME" > /tmp/perf-record.log 2>&1 &
		_ppid=$!
	fi
	# shellcheck disable=SC2046 # one word per argument
	fio $(fio_args "$3" "$4" "$5" "$6") --lat_percentiles=1 \
		--output-format=json --output=/tmp/fio.json > /tmp/fio.err 2>&1
	_rc=$?
	_t1=$(uptime_s) _c1=$(ticks)
	thread_ticks > /tmp/threads1
	# Which threads the run's time went to (a slow round against a fast
	# one: siw's transmit thread of each CPU is named apart).
	echo "SMBD-BENCH-INFO: $1 threads $2 $3 rep $7: $(thread_top /tmp/threads0 /tmp/threads1)"
	if [ "${8:-0}" = 1 ]; then
		wait "$_ppid"
		echo "SMBD-BENCH-PROFILE-BEGIN provider=$1 pair=$2 test=$3"
		/usr/bin/perf report -i /tmp/perf.data --stdio --sort dso 2>/dev/null |
			grep -v '^#' | grep -v '^$' | head -n 15
		/usr/bin/perf report -i /tmp/perf.data --stdio --sort dso,sym 2>/dev/null |
			grep -v '^#' | grep -v '^$' | head -n 40
		[ -s /tmp/perf.data ] || sed 's/^/    perf record: /' /tmp/perf-record.log
		echo "SMBD-BENCH-PROFILE-END"
	fi
	if [ $_rc != 0 ]; then
		problem "$1 $2 $3: fio rc $_rc: $(tail -n 5 /tmp/fio.err | tr '\n' ' ') $(grep -v '^ *[{}]' /tmp/fio.json | grep -m 3 -iE 'err|fio:' | tr -d '\n')"
		dmesg | tail -n 5 | sed 's/^/    /'
		return 1
	fi
	case $4 in *read) _k=read ;; *) _k=write ;; esac
	_unit=MB/s
	[ "$5" = 4k ] && _unit=IO/s
	bench "provider=$1 group=${9:-smb} pair=$2 test=$3 rep=$7 value=0 unit=$_unit" \
		"cpu=$(cpus "$_c0" "$_c1") secs=$(secs "$_t0" "$_t1") kind=$_k" \
		"json=$(tr -d '\n\t' < /tmp/fio.json)"
}

# ------------------------------------------------------------ transport cost

# cost_run PROVIDER PAIR TEST RW BS DEPTH REP: one fio job under a
# system-wide cpu-clock profile with call chains; cost.awk charges each
# sample to the SMB Direct code it was spent in (smbd.ko and the
# adapters, stock cifs's smbdirect.o, stock ksmbd's transport_rdma.o),
# callees in the core kernel included. One line,
#   SMBD-BENCH-COST: provider=P pair=PAIR test=T rep=N ios=N hz=F
#     total=N busy=N smbd=N cifs-rdma=N ksmbd-rdma=N
# (samples; each is 1/F s of one CPU) and the functions charged most.
cost_run() {
	# shellcheck disable=SC2046 # one word per argument
	/usr/bin/perf record -a -g -e cpu-clock -F "$COST_HZ" -o /tmp/cost.data -q -- \
		fio $(fio_args "$3" "$4" "$5" "$6") \
		--output-format=json --output=/tmp/cost.json > /tmp/cost.err 2>&1 ||
		{ problem "$1 $2 $3 cost: $(tail -n 3 /tmp/cost.err | tr '\n' ' ')"; return 1; }
	_ios=$(grep -o '"total_ios" : [0-9]*' /tmp/cost.json |
		awk '$3 > m { m = $3 } END { print m + 0 }')
	_cp=${2%%:*}
	/usr/bin/perf script -i /tmp/cost.data -F comm,tid,ip,sym,dso 2>/dev/null |
		awk -v client="${_cp%%.*}" -v server="${_cp#*.}" -f /smbd/cost.awk \
			/smbd/cost-syms.txt - > /tmp/cost.out
	grep -q '^cost total [1-9]' /tmp/cost.out ||
		{ problem "$1 $2 $3 cost: no samples ($(tail -n 2 /tmp/cost.err | tr '\n' ' '))"; return 1; }
	echo "SMBD-BENCH-COST: provider=$1 pair=$2 test=$3 rep=$7 ios=$_ios hz=$COST_HZ" \
		"$(awk '$1 == "cost" && NF == 3 { printf "%s=%s ", $2, $3 }' /tmp/cost.out)"
	if [ "$7" = 1 ]; then
		grep '^cost top' /tmp/cost.out | sort -k5 -nr | head -n 12 |
			sed "s/^cost top /SMBD-BENCH-COST-TOP: provider=$1 pair=$2 test=$3 /"
		grep '^cost leaf' /tmp/cost.out | sort -k5 -nr | head -n 12 |
			sed "s/^cost leaf /SMBD-BENCH-COST-LEAF: provider=$1 pair=$2 test=$3 /"
		# The instructions of smbd.ko the samples landed on, by count.
		if [ "$COST_OFFSETS" = 1 ]; then
			/usr/bin/perf script -G -i /tmp/cost.data -F ip,sym,symoff,dso 2>/dev/null |
				awk '$NF ~ /[[\/]smbd(\.ko[.a-z]*)?\]?\)$/ ||
				     $2 ~ /^smbd_(cifs|ksmbd)_/ { n[$2]++ }
				     END { for (s in n) print n[s], s }' | sort -nr | head -n 40 |
				sed "s/^/SMBD-BENCH-COST-OFF: provider=$1 pair=$2 test=$3 /"
		fi
	fi
	rm -f /tmp/cost.data
}
COST_HZ=499
COST_JOBS="randread_4k_qd1:randread:4k:1 randread_4k_qd16:randread:4k:16
write_1m_qd1:write:1m:1 read_1m_qd8:read:1m:8"

# SMB jobs: name rw bs depth
JOBS="write_1m_qd1:write:1m:1 write_1m_qd8:write:1m:8 read_1m_qd1:read:1m:1
read_1m_qd8:read:1m:8 randread_4k_qd16:randread:4k:16
randwrite_4k_qd16:randwrite:4k:16 randread_4k_qd1:randread:4k:1"
# Only when named (smbdbench.jobs): the sizes between, where a signed or
# sealed I/O's RDMA transform starts to pay (cifs's
# rdma_transform_threshold)
MORE_JOBS="randread_16k_qd16:randread:16k:16 randread_64k_qd16:randread:64k:16
randread_256k_qd16:randread:256k:16 randwrite_64k_qd16:randwrite:64k:16"
if [ -n "$ONLY_JOBS" ]; then
	_all="$JOBS $MORE_JOBS" JOBS=
	for _j in $_all; do
		in_list "$ONLY_JOBS" "${_j%%:*}" && JOBS="$JOBS $_j"
	done
	_all=$COST_JOBS COST_JOBS=
	for _j in $_all; do
		in_list "$ONLY_JOBS" "${_j%%:*}" && COST_JOBS="$COST_JOBS $_j"
	done
fi

# smb_pair PROVIDER PAIR REP: one round of every SMB job on one pairing;
# PAIR is CLIENT.SERVER (stock or smbd), or tcp; CLIENT.SERVER-OPTION
# mounts with OPTION too (sign, seal), and runs no trace and no cost
# jobs; OPTION~noxform loads cifs on smbd with enable_rdma_transform=0
# (its signed or sealed I/O falls back to messages, as without the RDMA
# transform patches), OPTION~xformall with rdma_transform_threshold=0
# (the transform down to cifs's RDMA threshold, 4 KiB). The profiles are taken in the first round, the connection's
# counters shown after each.
smb_pair() {
	_p=$1 _pair=${2%%:*} _rep=$3 _sec=
	case $_pair in *-*) _sec=${_pair#*-} _pair=${_pair%%-*} ;; esac
	SMB_CIFS_PARAMS=
	case $_sec in
	*~noxform) _sec=${_sec%~noxform} SMB_CIFS_PARAMS=enable_rdma_transform=0 ;;
	*~xformall) _sec=${_sec%~xformall} SMB_CIFS_PARAMS=rdma_transform_threshold=0 ;;
	esac
	_addr=$(addr_of "$_p")
	smbd_params_set "$2"
	SMB_CIFS_KO= SMB_KSMBD_KO= SMB_MOUNT_OPTS=rdma,vers=3.1.1${_sec:+,$_sec}
	case $_pair in
	tcp) _addr=$RXE_ADDR SMB_MOUNT_OPTS=vers=3.1.1 ;;
	*)
		[ "${_pair%.*}" = smbd ] && SMB_CIFS_KO=/smbd/cifs.ko
		[ "${_pair#*.}" = smbd ] && SMB_KSMBD_KO=/smbd/ksmbd.ko
		;;
	esac
	if ! smb_server_start; then
		problem "$_p $2: ksmbd did not start"
		smb_server_stop
		smbd_params_set
		return
	fi
	# The file lives on the server's tmpfs from the start: every read
	# test reads data, every write test overwrites it.
	head -c $((FILE_MB << 20)) /dev/urandom > "$SMB_EXPORT/$SMB_SHARE/bench.dat"
	# ksmbd acts as the SMB user's local account (uid 1000) on its disk.
	chown 1000:1000 "$SMB_EXPORT/$SMB_SHARE/bench.dat"
	if ! smb_mount "$_addr" $MNT; then
		problem "$_p $2: mount failed"
		smb_umount $MNT
		smb_server_stop
		smbd_params_set
		return
	fi
	if [ "$_pair" != tcp ] && ! grep -q SMBDirect "$SMB_DEBUGDATA"; then
		problem "$_p $_pair: the mount does not use SMB Direct"
	fi
	_prof=0 _jobs=$JOBS
	if [ "$PROFILE" = 1 ] && [ "$_rep" = 1 ] &&
		{ [ "$2" = stock.stock ] || [ "$2" = smbd.smbd ]; }; then
		_prof=1
	fi
	# Signed and sealed I/O registers nothing, where a traced I/O starts.
	[ "$_pair" != tcp ] && [ -z "$_sec" ] && [ "$_rep" = 1 ] &&
		in_list "$PARTS" trace && trace_qd1 "$_p" "$2"
	in_list "$PARTS" smb || _jobs=
	for _j in $_jobs; do
		IFS=: read -r jn jrw jbs jqd <<-EOF
		$_j
		EOF
		fio_run "$_p" "$2" "$jn" "$jrw" "$jbs" "$jqd" "$_rep"
		case $jn in
		write_1m_qd1 | randread_4k_qd16)
			[ $_prof = 1 ] && fio_run "$_p" "$2" "$jn" "$jrw" "$jbs" "$jqd" profile 1
			;;
		esac
	done
	if [ "$_pair" != tcp ] && [ -z "$_sec" ] && in_list "$PARTS" cost; then
		for _j in $COST_JOBS; do
			IFS=: read -r jn jrw jbs jqd <<-EOF
			$_j
			EOF
			cost_run "$_p" "$2" "$jn" "$jrw" "$jbs" "$jqd" "$_rep"
		done
	fi
	# Each round's connections: their message and credit counters say
	# what a figure out of line moved; what smbd moved by RDMA (as the
	# server) and in messages (sent, by each end on smbd), summed.
	if [ "$_pair" != tcp ]; then
		grep -v '^listener' "$SMBD_CONNS" 2>/dev/null |
			sed "s/^/    smbd: $_p $2 rep $_rep: /"
		[ "$_pair" != stock.stock ] &&
			echo "SMBD-BENCH-INFO: $_p rdma $2 rep $_rep: reads $(smbd_sum any reads) ($(smbd_sum any read-bytes) bytes) writes $(smbd_sum any writes) ($(smbd_sum any write-bytes) bytes) mrs $(smbd_sum any registered) sent $(smbd_sum initiator sent-bytes) $(smbd_sum responder sent-bytes) bytes"
	fi
	SMB_KEEP_MODULE=1 smb_umount $MNT
	smb_unload_module cifs
	SMB_KEEP_MODULE=1 smb_server_stop
	smb_unload_module ksmbd
	smbd_params_set
}

# smbd_params_set [PAIR]: a pairing written CLIENT.SERVER:NAME=VALUE,...
# runs with those smbd.ko parameters (for connections made from then on);
# without PAIR, the values before are put back.
SMBD_PARAMS_SAVED=
smbd_params_set() {
	for _kv in $SMBD_PARAMS_SAVED; do
		echo "${_kv#*=}" > "/sys/module/smbd/parameters/${_kv%%=*}"
	done
	SMBD_PARAMS_SAVED=
	case ${1:-} in *:*) ;; *) return 0 ;; esac
	for _kv in $(echo "${1#*:}" | tr ',' ' '); do
		_f=/sys/module/smbd/parameters/${_kv%%=*}
		if [ -w "$_f" ]; then
			SMBD_PARAMS_SAVED="$SMBD_PARAMS_SAVED ${_kv%%=*}=$(cat "$_f")"
			echo "${_kv#*=}" > "$_f" || problem "$1: cannot set $_kv"
		else
			problem "$1: smbd has no parameter ${_kv%%=*}"
		fi
	done
}

# ------------------------------------------------------------ qd1 trace

TR=/sys/kernel/tracing
# Probes, one per step of a 4 KiB read at queue depth 1, on functions both
# stacks share (cifs's and ksmbd's own code; smbd_send, smbd_recv and
# smbd_*register_mr are cifs's SMB Direct interface, stock or smbd's) or
# on each transport's completion handlers: "p|r NAME MODULE:SYMBOL".
TRACE_PROBES="p c_reg cifs:smbd_register_mr
p c_send cifs:smbd_send
r c_send_r cifs:smbd_send
r c_recv_r cifs:smbd_recv
p c_cb cifs:smb2_readv_callback
p c_dereg cifs:smbd_deregister_mr
r c_dereg_r cifs:smbd_deregister_mr
p s_req ksmbd:ksmbd_server_process_request
p s_work ksmbd:handle_ksmbd_work
p s_rdma ksmbd:ksmbd_conn_rdma_write
r s_rdma_r ksmbd:ksmbd_conn_rdma_write
p s_write ksmbd:ksmbd_conn_write
r s_write_r ksmbd:ksmbd_conn_write
p rx_c cifs:recv_done
p rx_k ksmbd:recv_done
p rx_s smbd:smbd_recv_done
p tx_c cifs:send_done
p tx_k ksmbd:send_done
p tx_s smbd:smbd_send_done
p post_siw siw:siw_post_send
p post_rxe rdma_rxe:rxe_post_send
p prcv_siw siw:siw_post_receive
p prcv_rxe rdma_rxe:rxe_post_recv"

# trace_probes: set every probe whose function is loaded now
trace_probes() {
	echo > $TR/kprobe_events
	echo "$TRACE_PROBES" | while read -r _k _n _f; do
		echo "$_k:smbdq/$_n $_f" >> $TR/kprobe_events 2>/dev/null
	done
	echo 1 > $TR/events/smbdq/enable
	for _e in sched/sched_switch sched/sched_wakeup workqueue/workqueue_execute_start; do
		echo 1 > "$TR/events/$_e/enable"
	done
	echo 'vec == 5' > $TR/events/irq/softirq_entry/filter
	echo 1 > $TR/events/irq/softirq_entry/enable
}

# trace_qd1 PROVIDER PAIR: TRACE_IOS 4 KiB reads at depth 1 on the mount
# with the probes on. Per step, the median time of the I/Os traced, and
# per I/O the scheduler's, the workqueues' and the transports' events;
# then one I/O's events in full.
TRACE_IOS=400
trace_qd1() {
	[ -d $TR/events ] || mount -t tracefs nodev $TR 2>/dev/null
	[ -w $TR/kprobe_events ] || { problem "$1 $2 trace: no kprobe events"; return; }
	echo 0 > $TR/tracing_on
	echo 16384 > $TR/buffer_size_kb
	trace_probes
	echo > $TR/trace
	echo 1 > $TR/tracing_on
	fio --name=trace --filename="$MNT/bench.dat" --size=${FILE_MB}M \
		--rw=randread --bs=4k --iodepth=1 --ioengine=libaio --direct=1 \
		--number_ios=$TRACE_IOS --norandommap --randrepeat=0 \
		--output=/tmp/fio-trace.out > /tmp/fio.err 2>&1 ||
		problem "$1 $2 trace: fio failed: $(tail -n 3 /tmp/fio.err | tr '\n' ' ')"
	echo 0 > $TR/tracing_on
	echo "SMBD-BENCH-TRACE-BEGIN provider=$1 pair=$2"
	grep -v '^#' $TR/trace | awk -v P="$1" -v PAIR="$2" -v want=$TRACE_IOS -f /smbd/trace-qd1.awk
	echo "SMBD-BENCH-TRACE-END"
	echo 0 > $TR/events/enable
	echo > $TR/kprobe_events
	echo > $TR/trace
}

# ------------------------------------------------------------ multichannel

MC_JOBS="write_1m_qd8:write:1m:8 read_1m_qd8:read:1m:8"

# nets_of PROVIDER: its two netdevs, and the second one's device
nets_of() { case $1 in rxe) echo "smbdr0 smbdr1" ;; siw) echo "smbds0 smbds1" ;; esac; }

# mc_channels: the mount's channels (1 + DebugData's "Extra Channels")
mc_channels() {
	awk '/Extra Channels:/ { for (i = 1; i < NF; i++)
		if ($i == "Channels:") n = $(i + 1) } END { print n + 1 }' \
		"$SMB_DEBUGDATA" 2>/dev/null
}

# mc_dev_bytes: per device, the RDMA bytes ksmbd's connections moved
# (read + written) and how many connections it has, from smbd's
# connections file: "DEV BYTES CONNECTIONS" lines
mc_dev_bytes() {
	awk '/^responder / { d = $4; n[d]++; next } /^[a-z]/ { d = ""; next }
		d != "" && $1 == "rdma:" {
			x = $4; sub(/^\(/, "", x); y = $8; sub(/^\(/, "", y)
			b[d] += x + y
		}
		END { for (d in n) printf "%s %.0f %d\n", d, b[d], n[d] }' \
		/sys/kernel/debug/smbd/connections 2>/dev/null
}

# mc_round PROVIDER CHANNELS REP DEVICES: fio's multichannel jobs on a
# mount with CHANNELS channels (1: no multichannel option) over the
# provider's first DEVICES devices (ksmbd lists only their ports). Its
# label: chN, or d1chN for more than one channel on one device. Its own
# variable names: lib-smb.sh's helpers set _n and friends.
mc_round() {
	mc_p=$1 mc_n=$2 mc_rep=$3 mc_d=$4
	_addr=$(addr_of "$mc_p")
	SMB_CIFS_KO=/smbd/cifs.ko SMB_KSMBD_KO=/smbd/ksmbd.ko
	SMB_MOUNT_OPTS=rdma,vers=3.1.1
	SMB_MULTICHANNEL=yes SMB_INTERFACES=$(nets_of "$mc_p")
	mc_l=ch$mc_n
	if [ "$mc_d" = 1 ]; then
		SMB_INTERFACES=${SMB_INTERFACES%% *}
		[ "$mc_n" -gt 1 ] && mc_l=d1ch$mc_n
	fi
	_opts=
	[ "$mc_n" -gt 1 ] && _opts=multichannel,max_channels=$mc_n
	if ! smb_server_start; then
		problem "$mc_p mc $mc_l: ksmbd did not start"
		smb_server_stop
		return
	fi
	head -c $((FILE_MB << 20)) /dev/urandom > "$SMB_EXPORT/$SMB_SHARE/bench.dat"
	chown 1000:1000 "$SMB_EXPORT/$SMB_SHARE/bench.dat"
	if ! smb_mount "$_addr" $MNT "$_opts"; then
		problem "$mc_p mc $mc_l: mount failed"
		smb_umount $MNT
		smb_server_stop
		return
	fi
	_w=20
	while [ "$(mc_channels)" != "$mc_n" ] && [ $_w -gt 0 ]; do
		sleep 1
		_w=$((_w - 1))
	done
	[ "$(mc_channels)" = "$mc_n" ] ||
		problem "$mc_p mc $mc_l: the mount has $(mc_channels) channel(s)"
	for _j in $MC_JOBS; do
		IFS=: read -r jn jrw jbs jqd <<-EOF
		$_j
		EOF
		mc_dev_bytes > /tmp/mc-bytes0
		fio_run "$mc_p" "$mc_l" "$jn" "$jrw" "$jbs" "$jqd" "$mc_rep" 0 mc
		mc_dev_bytes > /tmp/mc-bytes1
		echo "SMBD-BENCH-INFO: $mc_p mc $mc_l $jn rep $mc_rep: RDMA MiB per device:" \
			"$(awk 'NR == FNR { b[$1] = $2; next }
				{ printf "%s %.0f (%d conns) ", $1, ($2 - b[$1]) / 1048576, $3 }' \
				/tmp/mc-bytes0 /tmp/mc-bytes1)"
	done
	SMB_KEEP_MODULE=1 smb_umount $MNT
	smb_unload_module cifs
	SMB_KEEP_MODULE=1 smb_server_stop
	smb_unload_module ksmbd
	SMB_MULTICHANNEL=no SMB_INTERFACES=
}

# ------------------------------------------------------------ scale

# SCALE_STEPS connections (one cifs mount each, nosharesock: a session and
# an RDMA connection of its own) to one ksmbd listener; after the last
# step, more mounts up to SCALE_MAX or the first that fails.
SCALE_STEPS="1 4 16 64"
SCALE_DIR=/mnt/scale
SCALE_FILE_MB=8

# mem_used: KiB in use that no cache holds (MemTotal less free, buffers
# and page cache; the export's tmpfs pages stay the same), and the slab's
# KiB: "USED SLAB", after dropping the caches
mem_used() {
	sync
	echo 3 > /proc/sys/vm/drop_caches
	awk '{ v[$1] = $2 } END { printf "%d %d\n",
		v["MemTotal:"] - v["MemFree:"] - v["Buffers:"] - v["Cached:"],
		v["Slab:"] }' /proc/meminfo
}

# scale_conns: cifs's connections (DebugData numbers one per server)
scale_conns() { grep -c ') ConnectionId:' "$SMB_DEBUGDATA" 2>/dev/null; }
# scale_conns_are N: as many as the mounts (a failed mount's connection
# may be listed until its cifsd has exited)
scale_conns_are() { smb_wait 5 scale_conns_is "$1"; }
scale_conns_is() { [ "$(scale_conns)" = "$1" ]; }

# scale_mount_to N: mount sc_n+1 to N; sets SC_SECS to the time the mounts
# took; fails (with sc_n the mounts that hold) at the first that fails
scale_mount_to() {
	SC_SECS=0
	_t0=$(uptime_s)
	while [ "$sc_n" -lt "$1" ]; do
		smb_mount "$sc_addr" "$SCALE_DIR/$((sc_n + 1))" nosharesock > /tmp/scale-mount.out 2>&1 ||
			return 1
		sc_n=$((sc_n + 1))
	done
	SC_SECS=$(secs "$_t0" "$(uptime_s)")
}

# scale_fio PROVIDER PAIR N REP: 4 KiB random reads at depth 1 on each of
# the first N mounts at once, each on a file of its own (one file opened
# by many sessions would wait on oplock breaks), fio's jobs reported as
# one
scale_fio() {
	{
		printf '[global]\nrw=randread\nbs=4k\niodepth=1\nioengine=libaio\n'
		printf 'direct=1\nthread=1\ntime_based=1\nruntime=%s\n' "$RUNTIME"
		printf 'size=%dM\nnorandommap=1\nrandrepeat=0\ngroup_reporting=1\n' $SCALE_FILE_MB
		printf 'invalidate=0\n'
		for _i in $(seq "$3"); do
			printf '[c%d]\nfilename=%s/%d/c%d.dat\n' "$_i" $SCALE_DIR "$_i" "$_i"
		done
	} > /tmp/scale.fio
	_c0=$(ticks) _t0=$(uptime_s)
	if ! fio --output-format=json --output=/tmp/fio.json /tmp/scale.fio > /tmp/fio.err 2>&1; then
		problem "$1 $2 scale c$3: fio failed: $(tail -n 3 /tmp/fio.err | tr '\n' ' ')"
		return 1
	fi
	bench "provider=$1 group=scale pair=$2 test=iops_c$3 rep=$4 value=0 unit=IO/s" \
		"cpu=$(cpus "$_c0" "$(ticks)") secs=$(secs "$_t0" "$(uptime_s)") kind=read" \
		"json=$(tr -d '\n\t' < /tmp/fio.json)"
}

# scale_pair PROVIDER PAIR REP: the steps on one pairing; in the first
# round, the listener is then filled up to SCALE_MAX connections
scale_pair() {
	sc_p=$1 sc_pair=${2%%:*} sc_label=$2 sc_rep=$3 sc_n=0
	sc_addr=$(addr_of "$sc_p")
	smbd_params_set "$2"
	SMB_CIFS_KO='' SMB_KSMBD_KO='' SMB_MOUNT_OPTS=rdma,vers=3.1.1
	SMB_MAX_CONNECTIONS=4096
	[ "${sc_pair%.*}" = smbd ] && SMB_CIFS_KO=/smbd/cifs.ko
	[ "${sc_pair#*.}" = smbd ] && SMB_KSMBD_KO=/smbd/ksmbd.ko
	if ! smb_server_start || ! smb_load_module cifs "$SMB_CIFS_KO"; then
		problem "$sc_p $2 scale: ksmbd or cifs did not start"
		scale_stop
		smbd_params_set
		return
	fi
	head -c $((SCALE_FILE_MB << 20)) /dev/urandom > /tmp/scale.dat
	for _i in $(seq "${SCALE_STEPS##* }"); do
		cp /tmp/scale.dat "$SMB_EXPORT/$SMB_SHARE/c$_i.dat"
	done
	rm -f /tmp/scale.dat
	chown 1000:1000 "$SMB_EXPORT/$SMB_SHARE"/c*.dat
	read -r sc_used0 sc_slab0 <<-EOF
	$(mem_used)
	EOF
	sc_mount_s=0
	for _s in $SCALE_STEPS; do
		if ! scale_mount_to "$_s"; then
			problem "$sc_p $2 scale: mount $((sc_n + 1)) failed: $(tr '\n' ' ' < /tmp/scale-mount.out)"
			break
		fi
		sc_mount_s=$(awk -v a="$sc_mount_s" -v b="$SC_SECS" 'BEGIN { print a + b }')
		scale_conns_are "$sc_n" ||
			problem "$sc_p $2 scale: $sc_n mounts but $(scale_conns) connections"
		scale_fio "$sc_p" "$2" "$_s" "$sc_rep"
	done
	if [ "$sc_n" = "${SCALE_STEPS##* }" ]; then
		read -r sc_used sc_slab <<-EOF
		$(mem_used)
		EOF
		bench "provider=$sc_p group=scale pair=$2 test=setup rep=$sc_rep" \
			"value=$(awk -v n="$sc_n" -v s="$sc_mount_s" 'BEGIN { if (s < 0.01) s = 0.01; printf "%.2f", n / s }')" \
			"unit=mounts/s cpu=0 secs=$sc_mount_s"
		bench "provider=$sc_p group=scale pair=$2 test=mem rep=$sc_rep" \
			"value=$(((sc_used - sc_used0) / sc_n)) unit=KiB cpu=0"
		bench "provider=$sc_p group=scale pair=$2 test=slab rep=$sc_rep" \
			"value=$(((sc_slab - sc_slab0) / sc_n)) unit=KiB cpu=0"
		if [ "$sc_rep" = 1 ] && [ "$SCALE_MAX" -gt "$sc_n" ]; then
			_why="all held"
			scale_mount_to "$SCALE_MAX" ||
				_why="mount $((sc_n + 1)) failed: $(tr '\n' ' ' < /tmp/scale-mount.out | cut -c 1-300)"
			scale_conns_are "$sc_n" ||
				problem "$sc_p $2 scale: $sc_n mounts but $(scale_conns) connections"
			bench "provider=$sc_p group=scale pair=$2 test=held rep=1 value=$sc_n" \
				"unit=conns cpu=0 max=$SCALE_MAX"
			_avail=$(awk '/^MemAvailable:/ { print $2 }' /proc/meminfo)
			echo "SMBD-BENCH-INFO: $sc_p $2 scale: $sc_n connections held ($_why);" \
				"MemAvailable $_avail KiB, room for about" \
				"$(awk -v a="$_avail" -v u=$((sc_used - sc_used0)) -v n="${SCALE_STEPS##* }" \
					'BEGIN { p = u / n; if (p < 1) p = 1; printf "%d", a / p }') more"
		fi
	fi
	scale_stop
	smbd_params_set
}

# scale_cm_ids: rdma_cm ids other than listeners, of any user (stock cifs
# and ksmbd, or smbd's); -1 when rdma cannot list them
scale_cm_ids() {
	if $RDMA resource show cm_id > /tmp/scale-cm-ids 2>&1; then
		grep -vc 'state LISTEN' /tmp/scale-cm-ids
	else
		echo -1
	fi
}

# scale_stop: every scale mount unmounted, the modules out. When the
# mounts are the last step's (not a round that failed short of it, nor
# the fill-up beyond it), the release rate: mounts per second from the
# first umount until rdma_cm holds no connection's id any more (cifs may
# tear a connection down after its umount returned); rdma must list at
# least one id per mount before.
scale_stop() {
	# The list first: /proc/mounts changes under each umount.
	awk -v d="$SCALE_DIR/" 'index($2, d) == 1 { print $2 }' /proc/mounts > /tmp/scale-mounts
	_nu=$(wc -l < /tmp/scale-mounts)
	_ids=$(scale_cm_ids)
	_t0=$(uptime_s)
	while read -r _m; do
		umount "$_m" || problem "$sc_p scale: umount $_m failed"
	done < /tmp/scale-mounts
	if [ "$_nu" = "${SCALE_STEPS##* }" ] && [ "$_ids" -lt "$_nu" ]; then
		problem "$sc_p $sc_label scale: rdma listed $_ids connection ids for $_nu mounts: $(head -c 300 /tmp/scale-cm-ids | tr '\n' ';')"
	elif [ "$_nu" = "${SCALE_STEPS##* }" ]; then
		_w=300
		while [ "$(scale_cm_ids)" -ne 0 ] && [ $_w -gt 0 ]; do
			sleep 0.1
			_w=$((_w - 1))
		done
		_s=$(secs "$_t0" "$(uptime_s)")
		if [ $_w -gt 0 ]; then
			bench "provider=$sc_p group=scale pair=$sc_label test=release rep=$sc_rep" \
				"value=$(awk -v n="$_nu" -v s="$_s" 'BEGIN { if (s < 0.01) s = 0.01; printf "%.2f", n / s }')" \
				"unit=mounts/s cpu=0 secs=$_s n=$_nu"
		else
			problem "$sc_p $sc_label scale: $(scale_cm_ids) rdma_cm ids left 30 s after $_nu umounts:" \
				"$($RDMA resource show cm_id 2>/dev/null | grep -v 'state LISTEN' | head -n 4 | tr '\n' ';')"
		fi
	fi
	smb_unload_module cifs
	SMB_KEEP_MODULE=1 smb_server_stop
	smb_unload_module ksmbd
	SMB_MAX_CONNECTIONS=
}

# ------------------------------------------------------------ the run

t_start=$(uptime_s)
echo "SMBD-BENCH-BEGIN repeat=$REPEAT runtime=$RUNTIME kernel=$(uname -r)$([ "$(barg kernel bench)" = plain ] && echo -plain) cpus=$(grep -c ^processor /proc/cpuinfo) smbd=${SMBD_ARGS:-defaults}"
# Latencies and the trace need a clock finer than the jiffies one.
_cs=$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null)
[ "$_cs" = tsc ] || problem "clocksource is ${_cs:-unknown}, not tsc: latencies are in jiffies"
# shellcheck disable=SC2086 # one word per parameter
$INSMOD /smbd/smbd.ko $SMBD_ARGS || problem "insmod smbd.ko failed"
if in_list "$PARTS" api; then
	$INSMOD /smbd/smbd_test.ko || problem "insmod smbd_test.ko failed"
fi
for p in $PROVIDERS; do
	t0=$(uptime_s)
	in_list "$PARTS" verbs && verbs "$p"
	in_list "$PARTS" api && api "$p"
	# Round after round of every pairing, not one pairing's runs back
	# to back: a slow phase of the guest then spreads over all of them.
	if in_list "$PARTS" smb || in_list "$PARTS" trace || in_list "$PARTS" cost; then
		_reps=$REPEAT
		in_list "$PARTS" smb || in_list "$PARTS" cost || _reps=1
		for r in $(seq "$_reps"); do
			for pair in $PAIRS; do
				smb_pair "$p" "$pair" "$r"
			done
		done
	fi
	if in_list "$PARTS" scale; then
		for r in $(seq "$REPEAT"); do
			for pair in $PAIRS; do
				case $pair in
				stock.stock | smbd.smbd | smbd.smbd:*) scale_pair "$p" "$pair" "$r" ;;
				esac
			done
		done
	fi
	if in_list "$PARTS" mc; then
		for r in $(seq "$REPEAT"); do
			mc_round "$p" 1 "$r" 1
			mc_round "$p" 2 "$r" 1
			mc_round "$p" 2 "$r" 2
			mc_round "$p" 4 "$r" 2
		done
	fi
	echo "SMBD-BENCH-INFO: $p took $(secs "$t0" "$(uptime_s)") s"
done
if in_list "$PARTS" tcp; then
	for r in $(seq "$REPEAT"); do
		smb_pair tcp tcp "$r"
	done
fi
in_list "$PARTS" api && $RMMOD smbd_test
echo "SMBD-BENCH-END took $(secs "$t_start" "$(uptime_s)") s"

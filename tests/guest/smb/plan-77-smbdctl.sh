#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Guest plan (the SMB VM, tests/run.sh): smbdctl (tools/smbdctl) and the
# netlink family it reads (smbd_netlink.c), against a set-up whose truth
# the plan knows:
# - status -j: the version, rxe0 and siw0 used with their class, the
#   interfaces they reach; unprivileged callers read it, and may not run
#   the connect test; every bad request refused with its errno
#   (tools/smbdctl/nltest.c);
# - cifs on smbd mounting ksmbd on smbd over rxe and siw at once, 8 MiB
#   written and read with O_DIRECT on each: status -j -s shows the two
#   initiators and two responders by provider, their addresses and ports,
#   and the bytes the responders moved by RDMA read and write; each
#   device's totals, which outlive the connections; a connection by its
#   id (SMBD_CMD_CONN_GET's doit);
# - doctor, each finding provoked and named with its fix: multichannel
#   off; an interface with no RDMA device below it (a VLAN on a dummy);
#   a device short of smbd's minimum (a profile); the listeners gone
#   (ksmbd stopped, loaded); the stock cifs loaded; smbd not loaded; and
#   clean (exit 0, no problem, the connect tests passing) on the healthy
#   set-up.

SMB_CIFS_KO=/smbd/cifs.ko
SMB_KSMBD_KO=/smbd/ksmbd.ko
# shellcheck source=tests/guest/lib-smb.sh
. /smbd/lib-smb.sh

CTL=/smbd/smbdctl
NLT=/smbd/smbdctl-nltest
JQ=/usr/bin/jq
t=smbdctl
ST=/tmp/smbdctl-status.json
DOC=/tmp/smbdctl-doctor.json
SIZE=8388608

if [ ! -x $CTL ] || [ ! -x $NLT ] || [ ! -x $JQ ]; then
	$SMBD_MISSING "$t" "no smbdctl, nltest or jq in this image"
	exit 0
fi

# jqt FILTER [ARGS...]: FILTER holds for $ST (jq -e)
jqt() {
	_f=$1
	shift
	$JQ -e "$@" "$_f" "$ST" >/dev/null 2>&1
}

# status [ARGS]: smbdctl -j ARGS status into $ST, valid JSON
status() {
	$CTL -j "$@" status > $ST 2>/tmp/smbdctl.err && $JQ -e . $ST >/dev/null
}

# doctor [ADDRESS]: smbdctl -j doctor into $DOC; DOC_RC its exit code
doctor() {
	$CTL -j doctor "$@" > $DOC 2>/tmp/smbdctl.err
	DOC_RC=$?
	$JQ -e . $DOC >/dev/null || { DOC_RC=99; cat $DOC; }
}

# finding CHECK LEVEL MESSAGE_PART FIX_PART: doctor said so
finding() {
	$JQ -e --arg c "$1" --arg l "$2" --arg m "$3" --arg f "$4" \
		'[.findings[] | select(.check == $c and .level == $l and
		  (.message | contains($m)) and ((.fix // "") | contains($f)))]
		 | length > 0' $DOC >/dev/null
}

# show_doctor: its findings, for the log
show_doctor() {
	$JQ -r '.findings[] | "    doctor: \(.level) \(.check): \(.message)\(if .fix then " / fix: \(.fix)" else "" end)"' $DOC 2>/dev/null
}

# as_user CMD...: CMD as the unprivileged SMB user
as_user() { su -s /bin/sh "$SMB_USER" -c "$*"; }

load_smbd "$t/load-smbd" || exit 0

# The devices and interfaces smbd sees.
status
result $? "$t/status-json" "$(cat /tmp/smbdctl.err)"
want=$($SMB_MODINFO -F version /smbd/smbd.ko)
jqt '.version == $v' --arg v "$want" &&
	jqt '[.devices[] | select(.name == "rxe0" and .class == "ib/roce" and .use == "used")] | length == 1' &&
	jqt '[.devices[] | select(.name == "siw0" and .class == "iwarp" and .use == "used")] | length == 1' &&
	jqt '[.interfaces[] | select(.name == "smbdr0" and .rdma_capable and (.paths | map(.device) | index("rxe0")))] | length == 1' &&
	jqt '[.interfaces[] | select(.name == "smbds0" and .rdma_capable and (.paths | map(.device) | index("siw0")))] | length == 1' &&
	jqt '[.interfaces[] | select(.name == "lo" and (.rdma_capable | not))] | length == 1'
result $? "$t/status-devices-interfaces" "$(cat $ST)"

# Unprivileged: the queries, not the connect test.
as_user "$CTL -j status" > /tmp/smbdctl-user.json 2>&1 && $JQ -e .version /tmp/smbdctl-user.json >/dev/null
result $? "$t/unprivileged-status" "$(head -c 300 /tmp/smbdctl-user.json)"
as_user "$NLT unpriv" > /tmp/nltest.out 2>&1
result $? "$t/unprivileged-probe-refused" "$(cat /tmp/nltest.out)"
$NLT bad > /tmp/nltest.out 2>&1
result $? "$t/bad-requests-refused" "$(cat /tmp/nltest.out)"
sed 's/^/    nltest: /' /tmp/nltest.out

# Multichannel off: doctor names it.
SMB_MULTICHANNEL=no
smb_server_start
result $? "$t/ksmbd-start" || exit 0
smb_mount "$RXE_ADDR" /mnt/ctl-rxe && smb_mount "$SIW_ADDR" /mnt/ctl-siw
result $? "$t/mount-rxe-siw" || {
	SMB_KEEP_MODULE=1 smb_umount /mnt/ctl-rxe
	smb_umount /mnt/ctl-siw
	smb_server_stop
	exit 0
}
doctor
show_doctor
[ $DOC_RC = 1 ] &&
	finding ksmbd-multichannel problem "multichannel is off" "server multi channel support = yes" &&
	finding cifs ok "on smbd" "" && finding ksmbd ok "on smbd" ""
result $? "$t/doctor-multichannel-off" "exit $DOC_RC"

# Two mounts, 8 MiB each way on each: the RDMA bytes by provider.
head -c $SIZE /dev/urandom > /tmp/ctl-data
rc=0
for p in rxe siw; do
	dd if=/tmp/ctl-data of=/mnt/ctl-$p/f bs=1M oflag=direct 2>/dev/null &&
		drop_caches &&
		dd if=/mnt/ctl-$p/f of=/tmp/ctl-back bs=1M iflag=direct 2>/dev/null &&
		cmp -s /tmp/ctl-data /tmp/ctl-back || rc=1
done
result $rc "$t/io-8m-each-way"
status -s
$CTL -s status | sed 's/^/    status: /'
# by provider: an initiator to the server's port and a responder, on the
# provider's device, the responder's RDMA at least the file each way
conns_ok() {
	jqt '[.connections[] | select(.role == "initiator" and .state == "connected" and .device == $d and .class == $c and .peer.address == $a and .peer.port == ($p | tonumber) and .stats.mrs_registered > 0)] | length == 1' \
		--arg d "$1" --arg c "$2" --arg a "$3" --arg p "$4" &&
	jqt '[.connections[] | select(.role == "responder" and .state == "connected" and .device == $d and .local.port == ($p | tonumber) and .stats.rdma_read_bytes >= ($s | tonumber) and .stats.rdma_write_bytes >= ($s | tonumber))] | length == 1' \
		--arg d "$1" --arg p "$4" --arg s $SIZE &&
	jqt '[.devices[] | select(.name == $d and .connections >= 2)] | length == 1' --arg d "$1"
}
conns_ok rxe0 ib/roce "$RXE_ADDR" 445
result $? "$t/status-rxe-connections-rdma-bytes"
conns_ok siw0 iwarp "$SIW_ADDR" 5445
result $? "$t/status-siw-connections-rdma-bytes"
# a device's totals: what its connections carried, those gone included
dev_stat() {
	$JQ -r --arg d "$1" --arg f "$2" '.devices[] | select(.name == $d) | .stats[$f]' $ST
}
dev_tot() {
	$JQ -r --arg d "$1" '.devices[] | select(.name == $d) | .connections_total' $ST
}
rd_rxe0=$(dev_stat rxe0 rdma_read_bytes)
wr_rxe0=$(dev_stat rxe0 rdma_write_bytes)
rd_siw0=$(dev_stat siw0 rdma_read_bytes)
wr_siw0=$(dev_stat siw0 rdma_write_bytes)
[ "$rd_rxe0" -ge $SIZE ] && [ "$wr_rxe0" -ge $SIZE ] &&
	[ "$rd_siw0" -ge $SIZE ] && [ "$wr_siw0" -ge $SIZE ] &&
	[ "$(dev_tot rxe0)" -ge 2 ] && [ "$(dev_tot siw0)" -ge 2 ]
result $? "$t/status-device-totals" "rxe0 $rd_rxe0/$wr_rxe0, siw0 $rd_siw0/$wr_siw0 bytes by RDMA read/write"
jqt '[.listeners[] | select(.local.port == 445)] | length >= 1' &&
	jqt '[.listeners[] | select(.local.port == 5445)] | length >= 1'
result $? "$t/status-listeners" "$($JQ -c .listeners $ST)"
id=$($JQ -r '[.connections[] | select(.role == "initiator")][0].id' $ST)
got=$($NLT get "$id" 2>&1)
[ "$got" = "$id initiator connected" ]
result $? "$t/connection-by-id" "$id: $got"

# Healthy: multichannel on, everything in place; the connect tests pass.
SMB_KEEP_MODULE=1 smb_umount /mnt/ctl-rxe
SMB_KEEP_MODULE=1 smb_umount /mnt/ctl-siw
SMB_KEEP_MODULE=1 smb_server_stop
# The connections are gone; their device's totals stay.
status -s
[ "$(dev_stat rxe0 rdma_read_bytes)" -ge "$rd_rxe0" ] &&
	[ "$(dev_stat siw0 rdma_write_bytes)" -ge "$wr_siw0" ] &&
	[ "$(dev_tot rxe0)" -ge 2 ] &&
	jqt '[.devices[] | select(.name == "rxe0" and .connections == 0)] | length == 1' &&
	jqt '[.connections[] | select(.device == "rxe0")] | length == 0'
result $? "$t/device-totals-outlive-connections" "$($JQ -c '.devices[] | select(.name == "rxe0") | {connections, connections_total, stats}' $ST)"
SMB_MULTICHANNEL=yes
smb_server_start
result $? "$t/ksmbd-restart-multichannel"
doctor
show_doctor
[ $DOC_RC = 0 ] && $JQ -e '.problems == 0' $DOC >/dev/null &&
	finding connect ok "$RXE_ADDR:445 answers SMB Direct" "" &&
	finding connect ok "$SIW_ADDR:5445 answers SMB Direct" "" &&
	finding listener ok "$RXE_ADDR:445 listens" ""
result $? "$t/doctor-healthy" "exit $DOC_RC"
doctor "$SIW_ADDR"
finding connect ok "$SIW_ADDR:5445 answers" "" && [ $DOC_RC = 0 ]
result $? "$t/doctor-remote-address" "exit $DOC_RC"

# An interface with no RDMA device below it: a VLAN on a bare dummy. And
# one on an RDMA port: capable, through it.
ip link add smbdx0 type dummy && ip link set smbdx0 up &&
	ip link add link smbdx0 name smbdx0.7 type vlan id 7 &&
	ip addr add 198.51.100.7/24 dev smbdx0.7 && ip link set smbdx0.7 up &&
	ip link add link smbdr1 name smbdr1.5 type vlan id 5 &&
	ip addr add 203.0.113.5/24 dev smbdr1.5 && ip link set smbdr1.5 up
result $? "$t/vlans-up"
doctor
finding interface note "smbdx0.7 (198.51.100.7) has no RDMA device below it (below it: smbdx0" \
	"rdma link add rxe_smbdx0 type rxe netdev smbdx0"
result $? "$t/doctor-interface-without-rdma"
status
jqt '[.interfaces[] | select(.name == "smbdr1.5" and .rdma_capable and (.paths[0].via == "smbdr1"))] | length == 1'
result $? "$t/status-vlan-over-rdma-port" "$($JQ -c '.interfaces[] | select(.name == "smbdr1.5")' $ST)"
ip link del smbdr1.5
ip link del smbdx0.7

# A device short of smbd's minimum: recorded, not used, said why.
echo "max_send_sge=1" > /sys/kernel/debug/smbd/dev_profile &&
	rdma link add rxe_x type rxe netdev smbdx0
result $? "$t/short-device-added"
status
jqt '[.devices[] | select(.name == "rxe_x" and .use == "short" and .short_of == "max_send_sge" and .has == 1 and .needs == 2)] | length == 1'
result $? "$t/status-short-device" "$($JQ -c '.devices[] | select(.name == "rxe_x")' $ST)"
doctor
finding device problem "rxe_x is not used: its max_send_sge is 1, below the 2 smbd needs" "lift the test profile"
result $? "$t/doctor-short-device"
rdma link delete rxe_x
echo none > /sys/kernel/debug/smbd/dev_profile
ip link del smbdx0

# The listeners gone: ksmbd stopped, its module loaded.
SMB_KEEP_MODULE=1 smb_server_stop
doctor
show_doctor
[ $DOC_RC = 1 ] &&
	finding listener problem "no SMB Direct listener for ib/roce at $RXE_ADDR:445" "ksmbd.mountd" &&
	finding listener problem "no SMB Direct listener for iwarp at $SIW_ADDR:5445" "ksmbd.mountd"
result $? "$t/doctor-listener-missing" "exit $DOC_RC"
smb_unload_module ksmbd

# The stock cifs.
smb_unload_module cifs && smb_load_module cifs ""
result $? "$t/stock-cifs-loaded"
doctor
finding cifs problem "kernel's own module with its own SMB Direct" "modprobe -r cifs && modprobe cifs"
result $? "$t/doctor-stock-cifs"
smb_unload_module cifs

# smbd not loaded.
smb_unload_module smbd
$CTL status > /dev/null 2>&1
rc=$?
doctor
[ $rc = 3 ] && [ $DOC_RC = 1 ] && finding smbd problem "not loaded" "modprobe smbd"
result $? "$t/smbd-not-loaded" "status exit $rc, doctor exit $DOC_RC"
rm -f /tmp/ctl-data /tmp/ctl-back

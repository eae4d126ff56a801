#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Guest sanity plan: the VM has no NIC, both soft-RDMA links exist and
# carry real RDMA traffic (rping over rdma_cm, rxe and siw).
# Prints "SMBD-TEST: ok|not ok|skip <name> [- reason]" lines.

RDMA=/usr/bin/rdma

# shellcheck source=tests/guest/lib-report.sh
. /smbd/lib-report.sh

# No network device backed by hardware (virtual ones, like our dummies,
# sit0 or lo, live under /sys/devices/virtual), no PCI network controller.
# Devices are links; bonding's control file bonding_masters is not one.
extra=
for n in /sys/class/net/*; do
	[ -L "$n" ] || continue
	case $(readlink -f "$n") in /sys/devices/virtual/*) ;; *) extra="$extra ${n##*/}" ;; esac
done
for d in /sys/bus/pci/devices/*; do
	[ -f "$d/class" ] || continue
	case $(cat "$d/class") in 0x02*) extra="$extra pci:${d##*/}" ;; esac
done
if [ -z "$extra" ]; then ok sanity/no-nic; else nok sanity/no-nic "found$extra"; fi

links=$($RDMA link show 2>&1)
echo "$links" | sed 's/^/    /'
for l in rxe0:smbdr0 siw0:smbds0; do
	dev=${l%%:*} nd=${l#*:}
	if echo "$links" | grep -Eq "^link $dev/1 .*state ACTIVE.* netdev $nd( |\$)"; then
		ok "sanity/$dev-exists"
	else
		nok "sanity/$dev-exists" "no active $dev on $nd"
	fi
done

# rping NAME ADDR PORT COUNT [ARGS...]: server in the background, client
# doing COUNT ping-pongs (SEND, RDMA READ and RDMA WRITE each); both under
# timeouts, both must succeed, and with -v every ping must be printed.
rping_test() {
	name=$1 addr=$2 port=$3 count=$4
	shift 4
	sf=/tmp/rping-s.$port cf=/tmp/rping-c.$port
	timeout 120 rping -s -a "$addr" -p "$port" -C "$count" "$@" > "$sf" 2>&1 &
	spid=$!
	crc=1
	# The server may need a moment to listen; retry the client a few times.
	for _ in 1 2 3 4 5; do
		sleep 1
		timeout 100 rping -c -a "$addr" -p "$port" -C "$count" "$@" > "$cf" 2>&1
		crc=$?
		[ $crc = 0 ] && break
		kill -0 $spid 2>/dev/null || break
	done
	wait $spid
	src=$?
	pings=$(grep -c 'ping data: rdma-ping-' "$cf")
	sed 's/^/    client: /' "$cf" | head -n 8
	sed 's/^/    server: /' "$sf" | head -n 8
	case " $* " in *" -v "*) want=$count ;; *) want=0 ;; esac
	if [ $crc = 0 ] && [ $src = 0 ] && [ "$pings" = "$want" ]; then
		ok "$name"
	else
		nok "$name" "client rc=$crc server rc=$src pings=$pings/$want"
	fi
}

# Three verified 64-byte pings, then 100 rounds of ~64 KB RDMA READ/WRITE
# with the data read back checked by the client (-V).
rping_test sanity/rping-rxe0 "$RXE_ADDR" 7174 3 -v
rping_test sanity/rping-siw0 "$SIW_ADDR" 7175 3 -v
rping_test sanity/rping-bulk-rxe0 "$RXE_ADDR" 7176 100 -S 65000 -V
rping_test sanity/rping-bulk-siw0 "$SIW_ADDR" 7177 100 -S 65000 -V

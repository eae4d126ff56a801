#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Guest plan of the stock-kernel VMs (tests/run.sh): Debian's own 6.12
# and 6.1 kernels (tests/vm/stock-kernel.sh), built without SMB Direct in
# cifs and ksmbd and without siw; checks are named stock-<series>/. smbd.ko, cifs.ko and ksmbd.ko built against
# Debian's linux-headers load, and cifs on smbd mounts a share of ksmbd on
# smbd over the kernel's own rdma_rxe, with the checks of
# tests/guest/lib-smbpair.sh, signed and sealed mounts included (through
# the RDMA transforms that both carry, on 6.12 and on 6.1, a byte changed
# on either side by smbd's own corrupt points, which it has without
# CONFIG_FAULT_INJECTION). When DKMS installed them (tests/run.sh:
# the Debian package's, scripts/deb-check.sh, then updates/dkms/ in the
# image), modprobe loads them, in place of the kernel's own cifs and
# ksmbd, before the pairing.

# shellcheck source=tests/guest/lib-smbpair.sh
. /smbd/lib-smbpair.sh

echo "    stock: kernel $(uname -r)"
series=$(uname -r | cut -d. -f1,2)
P=stock-$series
upd=/lib/modules/$(uname -r)/updates/dkms
if [ -d "$upd" ]; then
	for m in cifs ksmbd; do
		dep=$($SMB_MODPROBE --show-depends "$m" 2>&1)
		echo "$dep" | sed "s/^/    stock: modprobe -n $m: /"
		if echo "$dep" | grep -q "updates/dkms/$m\.ko" &&
		   echo "$dep" | grep -q "updates/dkms/smbd\.ko"; then
			ok "$P/dkms/modprobe-$m-takes-updates"
		else
			nok "$P/dkms/modprobe-$m-takes-updates" "$(echo "$dep" | tr '\n' ';')"
		fi
		if $SMB_MODPROBE "$m" && [ -e "/sys/module/smbd/holders/$m" ]; then
			ok "$P/dkms/modprobe-$m-on-smbd"
		else
			nok "$P/dkms/modprobe-$m-on-smbd" "$(ls /sys/module/smbd/holders 2>&1 | tr '\n' ' ')"
		fi
	done
fi
PAIR_PROVIDERS=rxe
PAIR_PREFIX=$P
PAIR_MISSING=nok	# both modules are required here
PAIR_SECURED="sign seal"
pairing smbd smbd
unload_smbd "$P"

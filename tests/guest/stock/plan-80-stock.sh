#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Guest plan of the stock-kernel VM (tests/run.sh): Debian's own 6.12
# kernel (scripts/stock-kernel.sh), built without SMB Direct in cifs and
# ksmbd and without siw. smbd.ko, cifs.ko and ksmbd.ko built against
# Debian's linux-headers load, and cifs on smbd mounts a share of ksmbd on
# smbd over the kernel's own rdma_rxe, with the checks of
# tests/guest/lib-smbpair.sh.

# shellcheck source=tests/guest/lib-smbpair.sh
. /smbd/lib-smbpair.sh

echo "    stock: kernel $(uname -r)"
PAIR_PROVIDERS=rxe
PAIR_PREFIX=stock-kernel
PAIR_MISSING=nok	# both modules are required here
pairing smbd smbd
unload_smbd stock-kernel

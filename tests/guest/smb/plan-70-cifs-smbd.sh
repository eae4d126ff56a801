#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Guest plan (the SMB VM, tests/run.sh): the kernel SMB client on smbd (adapters/cifs) against the stock ksmbd, over rxe and siw.
# See tests/guest/lib-smbpair.sh for the checks.

# shellcheck source=tests/guest/lib-smbpair.sh
. /smbd/lib-smbpair.sh

# a signed mount too: the stock ksmbd has no RDMA transform, so cifs on
# smbd must fall back to messages, its data intact
PAIR_SECURED=sign
pairing smbd stock

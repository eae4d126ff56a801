#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Guest plan (the SMB VM, tests/run.sh): the stock cifs against ksmbd on smbd (adapters/ksmbd), over rxe and siw.
# See tests/guest/lib-smbpair.sh for the checks.

# shellcheck source=tests/guest/lib-smbpair.sh
. /smbd/lib-smbpair.sh

pairing stock smbd

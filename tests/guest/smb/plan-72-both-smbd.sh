#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Guest plan (the SMB VM, tests/run.sh): cifs and ksmbd both on smbd, over rxe and siw,
# then a signed and a sealed mount on each.
# See tests/guest/lib-smbpair.sh for the checks.

# shellcheck source=tests/guest/lib-smbpair.sh
. /smbd/lib-smbpair.sh

PAIR_SECURED="sign seal"
pairing smbd smbd
unload_smbd smb

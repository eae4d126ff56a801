#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Judge a smbd test VM console log.
#   check-log.sh LOGFILE
# Counts: guest plan lines "SMBD-TEST: ok|not ok|skip <name> [- reason]";
# KUnit KTAP leaf results (per suite; "SMBD-KUNIT-EXPECT: <suite>" makes a
# suite that printed no result a failure); kernel bug reports (KASAN, BUG,
# WARNING, lockdep, Oops, panic, hung task, RCU stall, soft lockup, ...),
# one failure each; kmemleak records inside SMBD-KMEMLEAK-BEGIN/END; and a
# missing SMBD-GUEST-DONE. The last line printed is exactly
# "N passed, N failed" (", N skipped" when N > 0). Exit 0 iff no failure.
set -euo pipefail

[ $# -eq 1 ] || { echo "usage: $0 LOGFILE" >&2; exit 2; }
[ -f "$1" ] || { echo "check-log: $1: no such file" >&2; echo "0 passed, 1 failed"; exit 1; }

# Debian's python3 (setup.sh installs it), not whatever is first in PATH.
py=/usr/bin/python3
[ -x "$py" ] || py=python3

exec "$py" "$(dirname "$0")/check-log.py" "$1"

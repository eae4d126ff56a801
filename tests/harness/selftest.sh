#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Self-test of tests/vm/check-log.sh on hand-made console logs: a clean one
# must pass with every case counted; one with each kind of kernel report
# (WARNING, Oops/panic, KASAN, hung task, RCU stall, soft lockup, lockdep,
# sleeping in atomic, kmemleak, missing SMBD-GUEST-DONE) must fail once per
# report; a KTAP sample with parameters, skips, a failed suite init and an
# expected suite that never ran must be counted exactly; siw's known CM
# leak is a skip, but a leak with smbd in its backtrace still fails; a
# plan that died, an allocation failure and the OOM killer each fail;
# kmemleak turned off by request is not a report, but kmemleak disabling
# itself before or after that still is; a hung task reported again counts
# once, named by its first module frame.
#
#   tests/harness/selftest.sh
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
check=$here/../../tests/vm/check-log.sh
rc=0

expect() {	# expect <log> <want last line> <want exit 0|1>
	local out last code
	out=$(bash "$check" "$here/$1" 2>&1)
	code=$?
	last=$(tail -n 1 <<<"$out")
	[ $code -ne 0 ] && code=1
	if [ "$last" = "$2" ] && [ $code -eq "$3" ]; then
		echo "ok - $1: $last"
	else
		echo "not ok - $1: got '$last' (exit $code), want '$2' (exit $3)"
		rc=1
	fi
}

expect clean.log "5 passed, 0 failed" 0
expect bugs.log "2 passed, 11 failed" 1
expect ktap.log "5 passed, 4 failed, 3 skipped" 1
# A provider's own leak fails as any other (no known-leak list).
expect provider-leak.log "5 passed, 5 failed" 1
expect plan-died.log "5 passed, 4 failed" 1
expect kmemleak-off.log "2 passed, 2 failed" 1
# A task blocked for good is one failure, named by its first module frame.
expect hung.log "2 passed, 2 failed" 1
out=$(bash "$check" "$here/hung.log" 2>&1)
if grep -q 'hung-task in plan-71-ksmbd-smbd.sh: INFO: task cifsd:1464 blocked for more than 61 seconds. in _smbd_get_connection \[cifs\]' <<<"$out"; then
	echo "ok - hung.log: the report names _smbd_get_connection [cifs]"
else
	echo "not ok - hung.log: the report does not name its module frame"
	rc=1
fi
exit $rc

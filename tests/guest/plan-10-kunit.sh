#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Guest plan: load smbd.ko, then smbd_kunit.ko, whose suites run on load
# and report in KTAP on the console (counted by tests/vm/check-log.sh).

# shellcheck source=tests/guest/lib-report.sh
. /smbd/lib-report.sh

for suite in smbd_pdu smbd_negotiate smbd_frag smbd_credits smbd_keepalive \
	smbd_desc smbd_op smbd_conn smbd_compat smbd_profile; do
	echo "SMBD-KUNIT-EXPECT: $suite"
done

load_smbd
result $? "kunit: load smbd.ko"
insmod /smbd/smbd_kunit.ko
result $? "kunit: load smbd_kunit.ko"
rmmod smbd_kunit
result $? "kunit: unload smbd_kunit.ko"

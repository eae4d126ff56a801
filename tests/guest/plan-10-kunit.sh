#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Guest plan: load smbd.ko, then smbd_kunit.ko, whose suites run on load
# and report in KTAP on the console (counted by scripts/check-log.sh).

result() {	# result <status> <name>
	if [ "$1" = 0 ]; then
		echo "SMBD-TEST: ok $2"
	else
		echo "SMBD-TEST: not ok $2"
	fi
}

for suite in smbd_pdu smbd_negotiate smbd_frag smbd_credits smbd_keepalive \
	smbd_desc; do
	echo "SMBD-KUNIT-EXPECT: $suite"
done

insmod /smbd/smbd.ko
result $? "kunit: load smbd.ko"
insmod /smbd/smbd_kunit.ko
result $? "kunit: load smbd_kunit.ko"
rmmod smbd_kunit
result $? "kunit: unload smbd_kunit.ko"

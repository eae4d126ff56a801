// SPDX-License-Identifier: GPL-2.0
/*
 * smbd_kunit.ko: the KUnit suites of smbd's pure protocol core. Each
 * *_kunit.c registers its own suites; they run when this module loads
 * (smbd.ko must be loaded first) and report in KTAP on the console and
 * in debugfs (kunit/<suite>/results).
 */
#include <linux/module.h>

MODULE_DESCRIPTION("KUnit tests for the smbd protocol core");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);
MODULE_IMPORT_NS(SMBD);

// SPDX-License-Identifier: GPL-2.0
/* The raw-verbs test peer, built into this module. */
#include "../peer/smbd_tpeer.c"

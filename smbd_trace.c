// SPDX-License-Identifier: GPL-2.0
/*
 * smbd: the tracepoints' definitions (include/smbd_trace.h). A leaf: every
 * other file may fire them, and they call nothing back.
 */

#define CREATE_TRACE_POINTS
#include "smbd_trace.h"

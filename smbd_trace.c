// SPDX-License-Identifier: GPL-2.0
/*
 * smbd: the tracepoints' definitions (include/smbd_trace.h). A leaf: every
 * other file may fire them, and they call nothing back.
 */

#define CREATE_TRACE_POINTS
#include "smbd_trace.h"

/**
 * smbd_wc_trace() - trace a completion by its context's name
 * @cq: the completion queue it came from (its context is the socket)
 * @wc: the completion; its wr_cqe is in a struct smbd_cqe
 *
 * One event of three, by status: smbd_wc_done, smbd_wc_flush, smbd_wc_error.
 *
 * Context: completion handler; takes no lock.
 */
void smbd_wc_trace(struct ib_cq *cq, const struct ib_wc *wc)
{
	const struct smbd_cqe *c = container_of(wc->wr_cqe, struct smbd_cqe, cqe);

	if (likely(wc->status == IB_WC_SUCCESS))
		trace_smbd_wc_done(cq, c, wc);
	else if (wc->status == IB_WC_WR_FLUSH_ERR)
		trace_smbd_wc_flush(cq, c, wc);
	else
		trace_smbd_wc_error(cq, c, wc);
}

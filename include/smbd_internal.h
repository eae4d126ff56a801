/* SPDX-License-Identifier: GPL-2.0 */
/*
 * smbd: private structures shared by the files of smbd.ko.
 *
 * Field prefixes: sd_ for struct smbd_device.
 */
#ifndef _SMBD_INTERNAL_H
#define _SMBD_INTERNAL_H

#include <linux/list.h>
#include <linux/types.h>
#include <rdma/ib_verbs.h>

#include "smbd_proto.h"

/**
 * struct smbd_device - an RDMA device smbd can use
 * @sd_list: entry in smbd_devices, protected by smbd_devices_lock
 * @sd_ibdev: the device; valid until its ib_client remove callback
 * @sd_iwarp: iWARP (port 5445, initiator sends first) rather than IB/RoCE
 * @sd_max_qp_wr: work requests per queue
 * @sd_max_send_sge: gather entries per send
 * @sd_max_recv_sge: scatter entries per receive
 * @sd_max_cqe: entries per completion queue
 * @sd_max_rd_atom: RDMA reads this device serves at once (IRD)
 * @sd_max_init_rd_atom: RDMA reads this device issues at once (ORD)
 * @sd_max_frmr_pages: pages one fast-registered MR can map
 * @sd_max_sgl_rd: scatter entries of an RDMA read sink (0: same as send)
 *
 * Immutable after smbd_ib_add(); connections size everything from these
 * rather than from constants that fit one provider only.
 */
struct smbd_device {
	struct list_head sd_list;
	struct ib_device *sd_ibdev;
	bool sd_iwarp;
	u32 sd_max_qp_wr;
	u32 sd_max_send_sge;
	u32 sd_max_recv_sge;
	u32 sd_max_cqe;
	u32 sd_max_rd_atom;
	u32 sd_max_init_rd_atom;
	u32 sd_max_frmr_pages;
	u32 sd_max_sgl_rd;
};

#endif /* _SMBD_INTERNAL_H */

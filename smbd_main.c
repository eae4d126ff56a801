// SPDX-License-Identifier: GPL-2.0
/*
 * smbd: SMB Direct ([MS-SMBD]) for in-kernel consumers.
 *
 * The module: its work queue, its debugfs directory (smbd/devices from
 * smbd_dev.c, smbd/connections and smbd/conn/ from smbd_debugfs.c), the
 * RDMA device client and the netlink family (smbd_netlink.c).
 */

#include <linux/debugfs.h>
#include <linux/module.h>

#include "smbd_internal.h"

static struct dentry *smbd_debugfs_root;

static int __init smbd_init(void)
{
	int ret;

	/* Writeback through an SMB client may wait on this queue. */
	smbd_wq = alloc_workqueue("smbd", WQ_MEM_RECLAIM | WQ_UNBOUND, 0);
	if (!smbd_wq)
		return -ENOMEM;
	smbd_debugfs_root = debugfs_create_dir("smbd", NULL);
	smbd_debugfs_init(smbd_debugfs_root);
	smbd_inject_init(smbd_debugfs_root);

	ret = smbd_dev_init(smbd_debugfs_root, smbd_socks_dead,
			    smbd_socks_link_up);
	if (ret)
		goto out_debugfs;
	ret = smbd_nl_init();
	if (ret)
		goto out_dev;
	return 0;

out_dev:
	smbd_dev_exit();
out_debugfs:
	debugfs_remove_recursive(smbd_debugfs_root);
	destroy_workqueue(smbd_wq);
	return ret;
}

static void __exit smbd_exit(void)
{
	smbd_nl_exit();
	smbd_dev_exit();
	debugfs_remove_recursive(smbd_debugfs_root);
	smbd_cq_graves_wait();
	destroy_workqueue(smbd_wq);
}

module_init(smbd_init);
module_exit(smbd_exit);

MODULE_DESCRIPTION("SMB Direct (MS-SMBD) transport for in-kernel SMB consumers");
MODULE_AUTHOR("The smbd maintainers");
MODULE_VERSION(SMBD_VERSION);
MODULE_LICENSE("GPL");

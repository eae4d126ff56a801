// SPDX-License-Identifier: GPL-2.0
/*
 * smbd: the RDMA devices. An ib_client records what each device can do
 * when it appears (debugfs smbd/devices); connections size their queues
 * from that record (smbd_dev_get()).
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/if_arp.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/netdevice.h>
#include <linux/notifier.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <net/net_namespace.h>
#include <rdma/ib_verbs.h>

#include "smbd_internal.h"

static LIST_HEAD(smbd_devices);
static DEFINE_MUTEX(smbd_devices_lock);	/* protects smbd_devices */
static struct ib_client smbd_ib_client;
static BLOCKING_NOTIFIER_HEAD(smbd_dev_chain);
/* Ends the connections on a device that died (smbd_dev_init()). */
static void (*smbd_dev_dead)(struct ib_device *ibdev, bool quiesce);
/* Probes the connections on a port whose link came back. */
static void (*smbd_dev_link_up)(struct ib_device *ibdev, u32 port);

/* Does smbd run connections on @sd? (sd_use is set once, when added.) */
static bool smbd_dev_used(const struct smbd_device *sd)
{
	return sd->sd_use == SMBD_USE_YES;
}

/*
 * A device that died: no new connection on it (smbd_dev_get()), and the
 * ones on it end (smbd_socks_dead()). Once: a device recovers by being
 * removed and added again, as a new record.
 */
static void smbd_dev_fatal(struct ib_device *ibdev, bool quiesce)
{
	struct smbd_device *sd;
	bool first = false;

	mutex_lock(&smbd_devices_lock);
	list_for_each_entry(sd, &smbd_devices, sd_list) {
		if (sd->sd_ibdev == ibdev) {
			first = smbd_dev_used(sd) && !sd->sd_fatal;
			sd->sd_fatal = true;
			break;
		}
	}
	mutex_unlock(&smbd_devices_lock);
	if (first)
		smbd_dev_dead(ibdev, quiesce);
}

/*
 * The device's asynchronous events, from ib_core's work queue (process
 * context, under the device's event_handler_rwsem).
 */
static void smbd_dev_event(struct ib_event_handler *h, struct ib_event *ev)
{
	if (ev->event == IB_EVENT_DEVICE_FATAL)
		smbd_dev_fatal(ev->device, false);
	else if (ev->event == IB_EVENT_PORT_ACTIVE)
		smbd_dev_link_up(ev->device, ev->element.port_num);
}

/*
 * The profile that caps the limits smbd takes of each device added from
 * now on (debugfs smbd/dev_profile), under smbd_devices_lock.
 */
static struct smbd_profile smbd_dev_profile = { .name = "none" };

/* Why @sd is not used, in the log, once. */
static void smbd_dev_warn_unused(const struct smbd_device *sd)
{
	struct ib_device *ibdev = sd->sd_ibdev;

	if (sd->sd_use == SMBD_USE_NO_FRWR)
		ibdev_info(ibdev, "smbd: no fast memory registration (IB_DEVICE_MEM_MGT_EXTENSIONS), not used\n");
	else if (sd->sd_profile[0])
		ibdev_warn(ibdev, "smbd: %s %u is below the %u smbd needs (profile %s), not used\n",
			   sd->sd_short_of, sd->sd_have, sd->sd_need,
			   sd->sd_profile);
	else
		ibdev_warn(ibdev, "smbd: %s %u is below the %u smbd needs, not used\n",
			   sd->sd_short_of, sd->sd_have, sd->sd_need);
}

static void smbd_dev_take_attrs(struct smbd_device *sd)
{
	const struct ib_device_attr *attr = &sd->sd_ibdev->attrs;

	sd->sd_iwarp = rdma_protocol_iwarp(sd->sd_ibdev,
					   rdma_start_port(sd->sd_ibdev));
	sd->sd_max_qp_wr = attr->max_qp_wr;
	sd->sd_max_send_sge = attr->max_send_sge;
	sd->sd_max_recv_sge = attr->max_recv_sge;
	sd->sd_max_cqe = attr->max_cqe;
	sd->sd_max_rd_atom = attr->max_qp_rd_atom;
	sd->sd_max_init_rd_atom = attr->max_qp_init_rd_atom;
	sd->sd_max_frmr_pages = attr->max_fast_reg_page_list_len;
	sd->sd_max_sgl_rd = attr->max_sgl_rd;
	sd->sd_max_sge_rd = attr->max_sge_rd;
	/* ib_device_attr has no inline limit: a queue pair says its own. */
	sd->sd_max_inline = U32_MAX;
}

/*
 * [MS-SMBD] 2.1 needs reliable in-order messages and RDMA read and
 * write; memory registration needs fast registration work requests. A
 * device short of either, or of a limit smbd needs (smbd_dev_short()),
 * is not used, and the log says why, once; its record stays, for the
 * administrator (SMBD_CMD_DEV_GET), with the reason.
 */
static int smbd_ib_add(struct ib_device *ibdev)
{
	struct smbd_device *sd;

	sd = kzalloc_node(sizeof(*sd), GFP_KERNEL, ibdev_to_node(ibdev));
	if (!sd)
		return -ENOMEM;
	sd->sd_ibdev = ibdev;
	smbd_dev_take_attrs(sd);

	mutex_lock(&smbd_devices_lock);
	if (strcmp(smbd_dev_profile.name, "none")) {
		smbd_profile_apply(&smbd_dev_profile, sd);
		strscpy(sd->sd_profile, smbd_dev_profile.name,
			sizeof(sd->sd_profile));
	}
	if (!(ibdev->attrs.device_cap_flags & IB_DEVICE_MEM_MGT_EXTENSIONS))
		sd->sd_use = SMBD_USE_NO_FRWR;
	else
		sd->sd_short_of = smbd_dev_short(sd, &sd->sd_have,
						 &sd->sd_need);
	if (sd->sd_short_of)
		sd->sd_use = SMBD_USE_SHORT;
	list_add_tail(&sd->sd_list, &smbd_devices);
	mutex_unlock(&smbd_devices_lock);
	ib_set_client_data(ibdev, &smbd_ib_client, sd);
	if (!smbd_dev_used(sd)) {
		smbd_dev_warn_unused(sd);
		return 0;
	}
	INIT_IB_EVENT_HANDLER(&sd->sd_events, ibdev, smbd_dev_event);
	ib_register_event_handler(&sd->sd_events);

	ibdev_info(ibdev, "smbd: %s device, qp_wr %u send_sge %u frmr_pages %u ird %u ord %u%s%s\n",
		   sd->sd_iwarp ? "iWARP" : "IB/RoCE", sd->sd_max_qp_wr,
		   sd->sd_max_send_sge, sd->sd_max_frmr_pages,
		   sd->sd_max_rd_atom, sd->sd_max_init_rd_atom,
		   sd->sd_profile[0] ? ", profile " : "", sd->sd_profile);
	blocking_notifier_call_chain(&smbd_dev_chain, SMBD_DEV_UP, ibdev);
	return 0;
}

static void smbd_ib_remove(struct ib_device *ibdev, void *client_data)
{
	struct smbd_device *sd = client_data;

	/* sd_use is set once, before the record is the client data. */
	if (smbd_dev_used(sd)) {
		/* Waits for a call in progress. */
		ib_unregister_event_handler(&sd->sd_events);
		blocking_notifier_call_chain(&smbd_dev_chain, SMBD_DEV_DOWN,
					     ibdev);
	}
	mutex_lock(&smbd_devices_lock);
	list_del(&sd->sd_list);
	mutex_unlock(&smbd_devices_lock);
	ibdev_info(ibdev, "smbd: device removed\n");
	kfree(sd);
}

static struct ib_client smbd_ib_client = {
	.name = "smbd",
	.add = smbd_ib_add,
	.remove = smbd_ib_remove,
};

static int smbd_devices_show(struct seq_file *m, void *v)
{
	struct smbd_device *sd;

	seq_puts(m, "device\ttype\tqp_wr\tsend_sge\trecv_sge\tcqe\tird\tord\tfrmr_pages\tsge_rd\tprofile\n");
	mutex_lock(&smbd_devices_lock);
	list_for_each_entry(sd, &smbd_devices, sd_list) {
		if (!smbd_dev_used(sd))
			continue;
		seq_printf(m, "%s\t%s\t%u\t%u\t%u\t%u\t%u\t%u\t%u\t%u\t%s\n",
			   dev_name(&sd->sd_ibdev->dev),
			   sd->sd_iwarp ? "iwarp" : "ib/roce",
			   sd->sd_max_qp_wr, sd->sd_max_send_sge,
			   sd->sd_max_recv_sge, sd->sd_max_cqe,
			   sd->sd_max_rd_atom, sd->sd_max_init_rd_atom,
			   sd->sd_max_frmr_pages, sd->sd_max_sge_rd,
			   sd->sd_profile[0] ? sd->sd_profile : "-");
	}
	mutex_unlock(&smbd_devices_lock);
	return 0;
}

DEFINE_SHOW_ATTRIBUTE(smbd_devices);

/**
 * smbd_dev_get() - what smbd recorded of a device
 * @ibdev: the device
 * @sd: filled with a copy of the record
 *
 * A copy, taken under smbd_devices_lock from the list (not from the ib
 * client data, which still names the record after smbd_ib_remove() freed
 * it): the device may be removed the moment this returns.
 *
 * Context: process; takes smbd_devices_lock.
 * Return: true, or false for a device smbd does not (or no longer) use:
 * unknown, removed, or dead (IB_EVENT_DEVICE_FATAL) until it is added
 * again.
 */
bool smbd_dev_get(struct ib_device *ibdev, struct smbd_device *sd)
{
	struct smbd_device *pos;
	bool found = false;

	mutex_lock(&smbd_devices_lock);
	list_for_each_entry(pos, &smbd_devices, sd_list) {
		if (pos->sd_ibdev == ibdev) {
			*sd = *pos;
			found = smbd_dev_used(pos) && !pos->sd_fatal;
			break;
		}
	}
	mutex_unlock(&smbd_devices_lock);
	return found;
}

/**
 * smbd_dev_info_at() - a copy of one device's record, for netlink
 * @net: the caller's network namespace: devices it may not see are
 *	skipped
 * @pos: which of the rest, from 0, in the order they were added
 * @di: filled: the record (its @sd_ibdev not to be followed), the
 *	device's name and index and its first port's interface
 *
 * Devices smbd does not use are there too, with why (@sd_use).
 *
 * Context: process; takes smbd_devices_lock.
 * Return: 0, or -ENOENT past the last.
 */
int smbd_dev_info_at(struct net *net, u32 pos, struct smbd_dev_info *di)
{
	struct net_device *ndev;
	struct smbd_device *sd;
	int ret = -ENOENT;

	mutex_lock(&smbd_devices_lock);
	list_for_each_entry(sd, &smbd_devices, sd_list) {
		if (!rdma_dev_access_netns(sd->sd_ibdev, net) || pos--)
			continue;
		memset(di, 0, sizeof(*di));
		di->rec = *sd;
		di->rec.sd_ibdev = NULL;
		strscpy(di->name, dev_name(&sd->sd_ibdev->dev),
			sizeof(di->name));
		di->index = sd->sd_ibdev->index;
		ndev = smbd_port_netdev(sd->sd_ibdev,
					rdma_start_port(sd->sd_ibdev));
		if (ndev) {
			strscpy(di->netdev, ndev->name, sizeof(di->netdev));
			dev_put(ndev);
		}
		ret = 0;
		break;
	}
	mutex_unlock(&smbd_devices_lock);
	return ret;
}

/* Is @netdev one of @ibdev's ports? Caller holds smbd_devices_lock. */
static bool smbd_dev_has_netdev(struct ib_device *ibdev,
				struct net_device *netdev)
{
	struct net_device *ndev;
	union ib_gid gid;
	bool same;
	u32 port;

	lockdep_assert_held(&smbd_devices_lock);
	/* RoCE and iWARP: the port's own netdev. */
	rdma_for_each_port(ibdev, port) {
		ndev = smbd_port_netdev(ibdev, port);
		if (!ndev)
			continue;
		same = ndev == netdev;
		dev_put(ndev);
		if (same)
			return true;
	}
	/* IPoIB: the hardware address is 4 bytes of QPN, then a port GID. */
	if (netdev->type != ARPHRD_INFINIBAND ||
	    netdev->addr_len < 4 + sizeof(gid))
		return false;
	memcpy(&gid, netdev->dev_addr + 4, sizeof(gid));
	return !ib_find_gid(ibdev, &gid, &port, NULL);
}

/*
 * The interfaces an address on @netdev may use to reach a device: itself
 * and every device below it (a VLAN's real device, a bond's slaves, a
 * bridge's ports, through any number of levels), held.
 */
#define SMBD_LOWER_MAX	16

struct smbd_lower {
	struct net_device *dev[SMBD_LOWER_MAX];
	u32 n;
};

static int smbd_lower_add(struct net_device *dev,
			  struct netdev_nested_priv *priv)
{
	struct smbd_lower *l = priv->data;

	if (l->n == SMBD_LOWER_MAX)
		return 1;	/* enough: the rest is not looked at */
	dev_hold(dev);
	l->dev[l->n++] = dev;
	return 0;
}

/**
 * smbd_netdev_walk() - the RDMA devices that reach an interface, and how
 * @netdev: the interface
 * @fn: called for each device smbd uses that has @netdev or an interface
 *	below it as a port (RoCE, iWARP) or has a port with its GID (IPoIB),
 *	with @arg, the device and that interface (@via); under
 *	smbd_devices_lock, so it must not sleep. A nonzero return ends the
 *	walk
 * @arg: for @fn
 *
 * Below @netdev means through a VLAN's real device, a bond's slaves or a
 * bridge's ports, at any depth (the first 16 interfaces looked at).
 *
 * Context: process; sleeps (takes the device list's mutex). May be
 * called with the RTNL held.
 * Return: the last value @fn returned, 0 when it was not called.
 */
int smbd_netdev_walk(struct net_device *netdev, smbd_netdev_walk_fn fn,
		     void *arg)
{
	struct netdev_nested_priv priv;
	struct smbd_lower l = {};
	struct smbd_device *sd;
	int ret = 0;
	u32 i;

	might_sleep();
	priv.data = &l;
	smbd_lower_add(netdev, &priv);
	rcu_read_lock();
	netdev_walk_all_lower_dev_rcu(netdev, smbd_lower_add, &priv);
	rcu_read_unlock();
	mutex_lock(&smbd_devices_lock);
	list_for_each_entry(sd, &smbd_devices, sd_list) {
		if (!smbd_dev_used(sd))
			continue;
		for (i = 0; i < l.n; i++) {
			if (smbd_dev_has_netdev(sd->sd_ibdev, l.dev[i])) {
				ret = fn(arg, sd, l.dev[i]);
				break;
			}
		}
		if (ret)
			break;
	}
	mutex_unlock(&smbd_devices_lock);
	for (i = 0; i < l.n; i++)
		dev_put(l.dev[i]);
	return ret;
}

static int smbd_netdev_class_add(void *arg, const struct smbd_device *sd,
				 struct net_device *via)
{
	unsigned int *classes = arg;

	*classes |= BIT(sd->sd_iwarp ? SMBD_DEV_IWARP : SMBD_DEV_IB);
	return 0;
}

/**
 * smbd_netdev_classes() - which kinds of RDMA device reach an interface
 * @netdev: the interface
 *
 * Looks at @netdev and every interface below it (a VLAN's real device, a
 * bond's slaves, a bridge's ports): each RDMA device smbd uses that has
 * one of them as a port (RoCE, iWARP) or has a port with its GID (IPoIB)
 * adds its class. A soft-RoCE and a soft-iWARP device may share a netdev.
 *
 * Context: process; sleeps (takes the device list's mutex). May be
 * called with the RTNL held.
 * Return: a mask of BIT(%SMBD_DEV_IB) and BIT(%SMBD_DEV_IWARP); 0 when
 * no RDMA device smbd uses lies below @netdev.
 */
unsigned int smbd_netdev_classes(struct net_device *netdev)
{
	unsigned int classes = 0;

	smbd_netdev_walk(netdev, smbd_netdev_class_add, &classes);
	return classes;
}
EXPORT_SYMBOL_NS_GPL(smbd_netdev_classes, SMBD);

/**
 * smbd_netdev_capable() - can SMB Direct reach a network interface
 * @netdev: the interface
 *
 * For a server's interface list (the RDMA_CAPABLE flag of [MS-SMB2]
 * FSCTL_QUERY_NETWORK_INTERFACE_INFO): whether an RDMA device smbd runs
 * connections on has @netdev, or a device below it, as a port (RoCE and
 * iWARP; RoCE deployments put the address on a VLAN, a bond or a bridge
 * above the port), or has a port with @netdev's GID (IPoIB). A VLAN or a
 * bridge above an interface no RDMA device uses is not capable.
 *
 * Context: process; sleeps (takes the device list's mutex). May be
 * called with the RTNL held.
 * Return: true if SMB Direct can reach @netdev's addresses.
 */
bool smbd_netdev_capable(struct net_device *netdev)
{
	return smbd_netdev_classes(netdev) != 0;
}
EXPORT_SYMBOL_NS_GPL(smbd_netdev_capable, SMBD);

/**
 * smbd_register_dev_notifier() - hear of RDMA devices coming and going
 * @nb: called with %SMBD_DEV_UP once smbd can use a new device, and with
 *	%SMBD_DEV_DOWN before it stops using one; the data is the struct
 *	ib_device. Called in process context from ib_core's client
 *	callbacks: it may sleep, but must not wait for rdma_cm or ib_core
 *	(queue work for that). A device's addresses may still be without
 *	RDMA GIDs when %SMBD_DEV_UP comes.
 *
 * For consumers that follow devices themselves, such as a server with a
 * listener per address. Devices present before the call are not told.
 *
 * Context: process; sleeps.
 * Return: 0.
 */
int smbd_register_dev_notifier(struct notifier_block *nb)
{
	return blocking_notifier_chain_register(&smbd_dev_chain, nb);
}
EXPORT_SYMBOL_NS_GPL(smbd_register_dev_notifier, SMBD);

/**
 * smbd_unregister_dev_notifier() - undo smbd_register_dev_notifier()
 * @nb: the registered block
 *
 * Once it returns, @nb is not running and will not be called.
 *
 * Context: process; sleeps.
 * Return: 0, or -ENOENT when @nb was not registered.
 */
int smbd_unregister_dev_notifier(struct notifier_block *nb)
{
	return blocking_notifier_chain_unregister(&smbd_dev_chain, nb);
}
EXPORT_SYMBOL_NS_GPL(smbd_unregister_dev_notifier, SMBD);

/*
 * debugfs "interfaces": every interface of the initial namespace and
 * whether smbd_netdev_capable() says SMB Direct reaches it, as a server
 * would report it in FSCTL_QUERY_NETWORK_INTERFACE_INFO.
 */
#define SMBD_IFACES_MAX	64

static int smbd_interfaces_show(struct seq_file *m, void *v)
{
	struct net_device **devs, *dev;
	u32 n = 0, i;

	devs = kcalloc(SMBD_IFACES_MAX, sizeof(*devs), GFP_KERNEL);
	if (!devs)
		return -ENOMEM;
	rcu_read_lock();
	for_each_netdev_rcu(&init_net, dev) {
		if (n == SMBD_IFACES_MAX)
			break;
		dev_hold(dev);
		devs[n++] = dev;
	}
	rcu_read_unlock();
	seq_puts(m, "interface\trdma_capable\n");
	for (i = 0; i < n; i++) {
		seq_printf(m, "%s\t%s\n", devs[i]->name,
			   smbd_netdev_capable(devs[i]) ? "yes" : "no");
		dev_put(devs[i]);
	}
	kfree(devs);
	return 0;
}

DEFINE_SHOW_ATTRIBUTE(smbd_interfaces);

/*
 * debugfs smbd/dev_fatal: writing a device's name plays mlx5's internal
 * error on it, as IB_EVENT_DEVICE_FATAL would. The device may still move
 * data (a soft one does), so each connection's queue pair is first
 * flushed through the fence (as a device that stopped leaves it): none
 * of its requests runs any more and the peer reaches none of its MRs.
 * From then on the device is dead to smbd: posts refused, no drain, no
 * new connection, until it is removed and added again. Not a fault
 * point of the kernel's framework: it is there without
 * CONFIG_FAULT_INJECTION, so that the dying-device rounds also run on
 * the kernels users have (Documentation/testing.rst).
 */
static ssize_t smbd_dev_fatal_write(struct file *f, const char __user *ubuf,
				    size_t len, loff_t *pos)
{
	struct ib_device *ibdev = NULL;
	struct smbd_device *sd;
	char name[IB_DEVICE_NAME_MAX];
	ssize_t n;

	n = strncpy_from_user(name, ubuf, min(len, sizeof(name) - 1));
	if (n < 0)
		return n;
	name[n] = 0;
	strim(name);
	mutex_lock(&smbd_devices_lock);
	list_for_each_entry(sd, &smbd_devices, sd_list) {
		if (smbd_dev_used(sd) &&
		    !strcmp(dev_name(&sd->sd_ibdev->dev), name) &&
		    ib_device_try_get(sd->sd_ibdev)) {
			ibdev = sd->sd_ibdev;
			break;
		}
	}
	mutex_unlock(&smbd_devices_lock);
	if (!ibdev)
		return -ENODEV;
	smbd_dev_fatal(ibdev, true);
	ib_device_put(ibdev);
	return len;
}

static const struct file_operations smbd_dev_fatal_fops = {
	.owner = THIS_MODULE,
	.write = smbd_dev_fatal_write,
	.llseek = noop_llseek,
};

static void smbd_dev_fatal_debugfs(struct dentry *root)
{
	debugfs_create_file("dev_fatal", 0200, root, NULL, &smbd_dev_fatal_fops);
}

/*
 * debugfs smbd/dev_profile: which limits smbd takes of each device added
 * from now on. Write a profile's name, "attribute=value" caps, or both
 * (smbd_profile_parse()); "none" lifts them. Reads give the profile in
 * force, then every profile known, one per line with its class.
 */
/* One profile's line: its head, then each attribute it caps. */
static void smbd_dev_profile_line(struct seq_file *m, const char *head,
				  const struct smbd_profile *p)
{
	u32 c;

	seq_puts(m, head);
	for (c = 0; c < SMBD_CAP_NR; c++)
		if (p->cap[c])
			seq_printf(m, " %s=%u", smbd_cap_name(c), p->cap[c]);
	seq_putc(m, '\n');
}

static int smbd_dev_profile_show(struct seq_file *m, void *v)
{
	const struct smbd_profile *p;
	struct smbd_profile now;
	char head[48];
	u32 i;

	mutex_lock(&smbd_devices_lock);
	now = smbd_dev_profile;
	mutex_unlock(&smbd_devices_lock);
	snprintf(head, sizeof(head), "in force: %s", now.name);
	smbd_dev_profile_line(m, head, &now);
	for (i = 0; i < smbd_profile_count(); i++) {
		p = smbd_profile_at(i);
		snprintf(head, sizeof(head), "%s %s", p->name,
			 p->iwarp ? "iwarp" : "ib/roce");
		smbd_dev_profile_line(m, head, p);
	}
	return 0;
}

static int smbd_dev_profile_open(struct inode *inode, struct file *f)
{
	return single_open(f, smbd_dev_profile_show, NULL);
}

static ssize_t smbd_dev_profile_write(struct file *f, const char __user *ubuf,
				      size_t len, loff_t *pos)
{
	struct smbd_profile prof;
	char *buf;
	int ret;

	if (len > 256)
		return -EINVAL;
	buf = memdup_user_nul(ubuf, len);
	if (IS_ERR(buf))
		return PTR_ERR(buf);
	ret = smbd_profile_parse(buf, &prof);
	kfree(buf);
	if (ret)
		return ret;
	mutex_lock(&smbd_devices_lock);
	smbd_dev_profile = prof;
	mutex_unlock(&smbd_devices_lock);
	pr_info("device profile %s for devices added from now on\n",
		prof.name);
	return len;
}

static const struct file_operations smbd_dev_profile_fops = {
	.owner = THIS_MODULE,
	.open = smbd_dev_profile_open,
	.read = seq_read,
	.write = smbd_dev_profile_write,
	.llseek = seq_lseek,
	.release = single_release,
};

/**
 * smbd_dev_init() - start following RDMA devices
 * @root: smbd's debugfs directory, for its "devices" file
 * @dead: called once when a device reports a fatal error, to end the
 *	connections on it (smbd_socks_dead())
 * @link_up: called when a port becomes active again (a link that went
 *	down came back), to probe the connections on it
 *	(smbd_socks_link_up())
 *
 * Context: process (module init).
 * Return: 0 or ib_register_client()'s errno.
 */
int smbd_dev_init(struct dentry *root,
		  void (*dead)(struct ib_device *ibdev, bool quiesce),
		  void (*link_up)(struct ib_device *ibdev, u32 port))
{
	smbd_dev_dead = dead;
	smbd_dev_link_up = link_up;
	debugfs_create_file("devices", 0444, root, NULL, &smbd_devices_fops);
	debugfs_create_file("interfaces", 0444, root, NULL,
			    &smbd_interfaces_fops);
	smbd_dev_fatal_debugfs(root);
	debugfs_create_file("dev_profile", 0600, root, NULL,
			    &smbd_dev_profile_fops);
	return ib_register_client(&smbd_ib_client);
}

/**
 * smbd_dev_exit() - stop following RDMA devices
 *
 * Context: process (module exit), once every connection is gone.
 */
void smbd_dev_exit(void)
{
	ib_unregister_client(&smbd_ib_client);
}

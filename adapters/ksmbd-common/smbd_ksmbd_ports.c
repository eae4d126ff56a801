// SPDX-License-Identifier: GPL-2.0
/*
 * smbd_ksmbd_ports: where the kernel SMB server listens for SMB Direct,
 * on smbd.ko. One file for every kernel series: adapters/build.sh links
 * it into ksmbd.ko next to the series' smbd_ksmbd.c (adapters/ksmbd/ for
 * 6.12, adapters/ksmbd-6.1/), which makes ksmbd connections of what is
 * accepted here (smbd_ksmbd_new_conn()) and carries their data. This
 * file is ksmbd's ksmbd_rdma_init, ksmbd_rdma_stop_listening,
 * ksmbd_rdma_destroy, ksmbd_rdma_capable_netdev, init_smbd_max_io_size
 * and get_smbd_max_read_write_size (transport_rdma.h, the same in both).
 *
 * Listening keeps each port to its device class ([MS-SMBD] 1.9: 5445
 * for iWARP, 445 for InfiniBand and RoCE), so that an iWARP and a RoCE
 * port on one host do not answer each other's connections:
 * - 5445 on the IPv4 and IPv6 wildcard addresses of the initial network
 *   namespace, for iWARP only (smbd refuses the connection requests of
 *   other devices there). rdma_cm extends a wildcard listener to every
 *   device, those added later too.
 * - 445 on each address (IPv4 and IPv6: ksmbd lists both to multichannel
 *   clients) of an InfiniBand or RoCE device, one listener each. A
 *   wildcard cannot serve there: on iWARP a listener takes the TCP port,
 *   which ksmbd's own TCP listener holds, and rdma_cm (in 6.1 as in
 *   6.12) fails a whole wildcard listen (and drops a device added later
 *   from rdma_cm) when one device refuses. smbd_ksmbd_resync() follows the addresses
 *   and devices as they come and go.
 * An accept thread per listener hands each negotiated connection to
 * smbd_ksmbd_new_conn(), which makes it a ksmbd connection with its
 * handler thread (ksmbd_conn_handler_loop), as ksmbd's TCP transport
 * does.
 *
 * Serialisation: ksmbd_rdma_init(), ksmbd_rdma_stop_listening() and
 * ksmbd_rdma_destroy() run under ksmbd's init_lock; they and the resync
 * work change the listeners under smbd_ksmbd_ls_lock (taken before the
 * RTNL). Which RDMA devices there are, and of which class, is smbd's to
 * know (smbd_netdev_classes(), smbd_register_dev_notifier()).
 */

#define SUBMOD_NAME	"smbd"

#include <linux/inetdevice.h>
#include <linux/kthread.h>
#include <linux/mutex.h>
#include <linux/netdevice.h>
#include <linux/rtnetlink.h>
#include <linux/slab.h>
#include <linux/workqueue.h>
#include <net/addrconf.h>
#include <net/ipv6.h>

#include "glob.h"
#include "connection.h"
#include "transport_rdma.h"

#include <smbd.h>

#include "smbd_ksmbd.h"

/* 6.1's ksmbd has no such flags of its own. */
#ifndef KSMBD_DEFAULT_GFP
#define KSMBD_DEFAULT_GFP	GFP_KERNEL
#endif

/*
 * A listener and its accept thread. @ended: the thread left on its own,
 * the listener having closed under it (its device went away; a wildcard
 * listener never closes so: rdma_cm ends only its per-device part).
 * @stopping: smbd_ksmbd_unlisten() is ending it.
 */
struct smbd_ksmbd_listener {
	struct smbd_sock *lsk;
	struct task_struct *acceptor;
	u16 port;
	bool ended;
	bool stopping;
};

/* A port-445 listener on one address of an InfiniBand or RoCE device. */
struct smbd_ksmbd_addr_ls {
	struct list_head node;
	struct sockaddr_storage addr;	/* port 0 */
	struct smbd_ksmbd_listener l;
	bool seen;			/* in the last resync's addresses */
};

/*
 * Under smbd_ksmbd_ls_lock: the 5445 wildcard listeners (IPv4, IPv6),
 * the 445 listeners per address, whether ksmbd listens at all, the
 * parameters of every listener and the resync's retry count.
 */
static DEFINE_MUTEX(smbd_ksmbd_ls_lock);
static struct smbd_ksmbd_listener smbd_ksmbd_iw[2];
static LIST_HEAD(smbd_ksmbd_ib);
static bool smbd_ksmbd_running;
static struct smbd_params smbd_ksmbd_params;
static unsigned int smbd_ksmbd_retries;
/* An address, interface or device event came since the last resync. */
static int smbd_ksmbd_event;

static void smbd_ksmbd_resync(struct work_struct *work);
static DECLARE_DELAYED_WORK(smbd_ksmbd_resync_work, smbd_ksmbd_resync);
static void smbd_ksmbd_resync_soon(unsigned long delay);

/* ksmbd.mountd's "smbd max io size" (the largest RDMA read or write). */
static unsigned int smbd_ksmbd_max_io = SMBD_DEFAULT_IOSIZE;

/*
 * The accept thread: ends when the listener is shut down or closes on
 * its own (its device went away: the resync then reaps it).
 */
static int smbd_ksmbd_accept_fn(void *arg)
{
	struct smbd_ksmbd_listener *l = arg;
	struct smbd_sock *sk;
	int ret;

	while (!kthread_should_stop()) {
		ret = smbd_sock_accept(l->lsk, &sk, 0);
		if (ret == -ERESTARTSYS || ret == -EINTR) {
			flush_signals(current);
			continue;
		}
		if (ret)
			break;
		smbd_ksmbd_new_conn(sk, l->port);
	}
	if (!kthread_should_stop() && !READ_ONCE(l->stopping)) {
		WRITE_ONCE(l->ended, true);
		smbd_ksmbd_resync_soon(0);
	}
	return 0;
}

/**
 * init_smbd_max_io_size() - ksmbd.mountd's "smbd max io size"
 * @sz: the largest SMB2 READ or WRITE with an RDMA channel, in bytes
 *
 * Clamped to 512 KiB .. 16 MiB as the stock ksmbd does; listeners
 * created from now on offer it as MaxReadWriteSize ([MS-SMBD] 3.1.5.6).
 *
 * Context: process (ksmbd's startup request).
 */
void init_smbd_max_io_size(unsigned int sz)
{
	WRITE_ONCE(smbd_ksmbd_max_io,
		   clamp_val(sz, SMBD_MIN_IOSIZE, SMBD_MAX_IOSIZE));
}

/**
 * get_smbd_max_read_write_size() - the largest RDMA READ or WRITE
 *
 * ksmbd refuses an SMB2 READ or WRITE with an RDMA channel above it.
 *
 * Context: any.
 * Return: bytes.
 */
unsigned int get_smbd_max_read_write_size(void)
{
	return READ_ONCE(smbd_ksmbd_max_io);
}

/**
 * ksmbd_rdma_capable_netdev() - is an RDMA device bound to a netdev
 * @netdev: a network interface
 *
 * For the RDMA_CAPABLE flag of FSCTL_QUERY_NETWORK_INTERFACE_INFO: true
 * when an RDMA device that smbd can use has @netdev as a port (RoCE,
 * iWARP) or has a port with @netdev's GID (IPoIB).
 *
 * Context: process, with the RTNL held (ksmbd's caller); may sleep.
 * Return: true if SMB Direct can reach @netdev's addresses.
 */
bool ksmbd_rdma_capable_netdev(struct net_device *netdev)
{
	return smbd_netdev_capable(netdev);
}

/*
 * Listen on @addr and start the accept thread; @l stays empty on failure.
 * Context: process, under smbd_ksmbd_ls_lock; sleeps.
 */
static int smbd_ksmbd_listen(struct smbd_ksmbd_listener *l,
			     const struct sockaddr *addr, u8 dev_class)
{
	struct smbd_params p = smbd_ksmbd_params;
	struct task_struct *task;
	struct smbd_sock *lsk;
	int ret;

	lockdep_assert_held(&smbd_ksmbd_ls_lock);
	p.dev_class = dev_class;
	ret = smbd_sock_create(&init_net, &p, &lsk);
	if (ret)
		return ret;
	ret = smbd_sock_bind(lsk, addr);
	if (!ret)
		ret = smbd_sock_listen(lsk, KSMBD_SOCKET_BACKLOG);
	if (ret)
		goto fail;
	l->lsk = lsk;
	l->port = ntohs(addr->sa_family == AF_INET6 ?
			((const struct sockaddr_in6 *)addr)->sin6_port :
			((const struct sockaddr_in *)addr)->sin_port);
	l->ended = false;
	l->stopping = false;
	task = kthread_create(smbd_ksmbd_accept_fn, l, "ksmbd-rdma%s:%u",
			      addr->sa_family == AF_INET6 ? "6" : "", l->port);
	if (IS_ERR(task)) {
		ret = PTR_ERR(task);
		l->lsk = NULL;
		goto fail;
	}
	/* The thread may end on its own: kthread_stop() needs it. */
	get_task_struct(task);
	l->acceptor = task;
	wake_up_process(task);
	return 0;

fail:
	smbd_sock_release(lsk);
	return ret;
}

/*
 * Shut @l's listener down, which ends a blocked smbd_sock_accept(), wait
 * for the accept thread, then release the listener with the connections
 * nobody accepted. Nothing when @l is empty.
 * Context: process, under smbd_ksmbd_ls_lock; sleeps.
 */
static void smbd_ksmbd_unlisten(struct smbd_ksmbd_listener *l)
{
	if (!l->lsk)
		return;
	WRITE_ONCE(l->stopping, true);
	smbd_sock_shutdown(l->lsk);
	kthread_stop(l->acceptor);
	put_task_struct(l->acceptor);
	l->acceptor = NULL;
	smbd_sock_release(l->lsk);
	l->lsk = NULL;
}

/* ---- following addresses and devices: the 445 listeners ---- */

/* Most addresses the 445 listeners follow; more are left without one. */
#define SMBD_KSMBD_ADDRS_MAX	64

/* Resync delays after a failed listen: a RoCE GID lags its address. */
static const unsigned int smbd_ksmbd_retry_ms[] = { 200, 500, 1000, 2000, 5000 };

/*
 * Have smbd_ksmbd_resync() run @delay jiffies from now (sooner if it is
 * already due). Context: any, atomic too (the IPv6 address chain).
 */
static void smbd_ksmbd_resync_soon(unsigned long delay)
{
	if (READ_ONCE(smbd_ksmbd_running))
		mod_delayed_work(system_long_wq, &smbd_ksmbd_resync_work, delay);
}

/* An address to listen on, and whether an iWARP device shares its netdev. */
struct smbd_ksmbd_addr {
	struct sockaddr_storage sa;
	bool iwarp_too;
};

/* Add @sa to @out[*n], if there is room. */
static void smbd_ksmbd_addr_add(struct smbd_ksmbd_addr *out, unsigned int *n,
				const struct sockaddr_storage *sa, bool iwarp_too)
{
	if (*n < SMBD_KSMBD_ADDRS_MAX) {
		out[*n].sa = *sa;
		out[(*n)++].iwarp_too = iwarp_too;
	}
}

/*
 * @dev's usable addresses, into @out from *@n on. An IPv6 address still
 * in duplicate address detection is left out, and makes *@tentative
 * true (the resync retries: its GID may come after the address event).
 * Context: process, under the RTNL.
 */
static void smbd_ksmbd_dev_addrs(struct net_device *dev,
				 struct smbd_ksmbd_addr *out, unsigned int *n,
				 bool iwarp_too, bool *tentative)
{
	struct in_device *in_dev = __in_dev_get_rtnl(dev);
	struct sockaddr_storage ss;
	const struct in_ifaddr *ifa;
	struct inet6_dev *idev;
	struct inet6_ifaddr *ifp;

	ASSERT_RTNL();
	if (in_dev) {
		in_dev_for_each_ifa_rtnl(ifa, in_dev) {
			struct sockaddr_in *sin = (struct sockaddr_in *)&ss;

			memset(&ss, 0, sizeof(ss));
			sin->sin_family = AF_INET;
			sin->sin_addr.s_addr = ifa->ifa_local;
			smbd_ksmbd_addr_add(out, n, &ss, iwarp_too);
		}
	}
	idev = IS_ENABLED(CONFIG_IPV6) ? __in6_dev_get(dev) : NULL;
	if (!idev)
		return;
	read_lock_bh(&idev->lock);
	list_for_each_entry(ifp, &idev->addr_list, if_list) {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;

		if (ifp->flags & IFA_F_DADFAILED)
			continue;
		if (ifp->flags & IFA_F_TENTATIVE) {
			*tentative = true;
			continue;
		}
		memset(&ss, 0, sizeof(ss));
		sin6->sin6_family = AF_INET6;
		sin6->sin6_addr = ifp->addr;
		if (ipv6_addr_type(&ifp->addr) & IPV6_ADDR_LINKLOCAL)
			sin6->sin6_scope_id = dev->ifindex;
		smbd_ksmbd_addr_add(out, n, &ss, iwarp_too);
	}
	read_unlock_bh(&idev->lock);
}

/*
 * The addresses of the up interfaces of the initial namespace that an
 * InfiniBand or RoCE device smbd uses lies below (smbd_netdev_classes()).
 * Context: process; takes the RTNL.
 * Return: how many are in @out.
 */
static unsigned int smbd_ksmbd_addrs(struct smbd_ksmbd_addr *out,
				     bool *tentative)
{
	struct net_device *dev;
	unsigned int n = 0, cls;

	rtnl_lock();
	for_each_netdev(&init_net, dev) {
		if (!(dev->flags & IFF_UP) || (dev->flags & IFF_LOOPBACK))
			continue;
		cls = smbd_netdev_classes(dev);
		if (cls & BIT(SMBD_DEV_IB))
			smbd_ksmbd_dev_addrs(dev, out, &n,
					     cls & BIT(SMBD_DEV_IWARP),
					     tentative);
	}
	rtnl_unlock();
	return n;
}

/* The 445 listener on @sa, if any. Context: under smbd_ksmbd_ls_lock. */
static struct smbd_ksmbd_addr_ls *
smbd_ksmbd_find(const struct sockaddr_storage *sa)
{
	struct smbd_ksmbd_addr_ls *a;

	lockdep_assert_held(&smbd_ksmbd_ls_lock);
	list_for_each_entry(a, &smbd_ksmbd_ib, node)
		if (!memcmp(&a->addr, sa, sizeof(*sa)))
			return a;
	return NULL;
}

/*
 * Listen on port 445 of @sa, for InfiniBand and RoCE only.
 * Context: process, under smbd_ksmbd_ls_lock; sleeps.
 * Return: 0; -EPROTONOSUPPORT when rdma_cm gives @sa to an iWARP device;
 * or the listen's errno (-ENODEV while a RoCE GID is not there yet).
 */
static int smbd_ksmbd_add_ls(const struct sockaddr_storage *sa)
{
	struct sockaddr_storage bind_addr = *sa;
	struct smbd_ksmbd_addr_ls *a;
	int ret;

	a = kzalloc(sizeof(*a), KSMBD_DEFAULT_GFP);
	if (!a)
		return -ENOMEM;
	a->addr = *sa;
	if (sa->ss_family == AF_INET6)
		((struct sockaddr_in6 *)&bind_addr)->sin6_port =
			htons(SMBD_PORT_IB);
	else
		((struct sockaddr_in *)&bind_addr)->sin_port =
			htons(SMBD_PORT_IB);
	ret = smbd_ksmbd_listen(&a->l, (struct sockaddr *)&bind_addr,
				SMBD_DEV_IB);
	if (ret) {
		kfree(a);
		return ret;
	}
	a->seen = true;
	list_add_tail(&a->node, &smbd_ksmbd_ib);
	ksmbd_debug(RDMA, "SMB Direct listener on %pISpc\n", &bind_addr);
	return 0;
}

/* Context: process, under smbd_ksmbd_ls_lock; sleeps. */
static void smbd_ksmbd_drop_ls(struct smbd_ksmbd_addr_ls *a)
{
	lockdep_assert_held(&smbd_ksmbd_ls_lock);
	ksmbd_debug(RDMA, "no SMB Direct listener on %pISc any more\n",
		    &a->addr);
	list_del(&a->node);
	smbd_ksmbd_unlisten(&a->l);
	kfree(a);
}

/*
 * Bring the 445 listeners in line with the addresses: one on each
 * address of an InfiniBand or RoCE device, none elsewhere; a listener
 * whose device went away is replaced (or dropped with its address).
 * Runs on smbd_ksmbd_resync_soon(): address, interface and RDMA device events,
 * and a listener that closed on its own; after a failed listen, again
 * a few times with a growing delay.
 * Context: process (system_long_wq, or ksmbd_rdma_init()); takes
 * smbd_ksmbd_ls_lock and the RTNL (in that order); sleeps.
 */
static void smbd_ksmbd_resync(struct work_struct *work)
{
	struct smbd_ksmbd_addr_ls *a, *tmp;
	struct smbd_ksmbd_addr *addrs;
	bool retry = false;
	unsigned int i, n;
	int ret;

	addrs = kcalloc(SMBD_KSMBD_ADDRS_MAX, sizeof(*addrs),
			KSMBD_DEFAULT_GFP);
	mutex_lock(&smbd_ksmbd_ls_lock);
	if (!smbd_ksmbd_running)
		goto out;
	/* Each event gives the failed addresses a new round of retries. */
	if (xchg(&smbd_ksmbd_event, 0))
		smbd_ksmbd_retries = 0;
	if (!addrs) {
		retry = true;
		goto again;
	}
	n = smbd_ksmbd_addrs(addrs, &retry);
	list_for_each_entry(a, &smbd_ksmbd_ib, node)
		a->seen = false;
	for (i = 0; i < n; i++) {
		a = smbd_ksmbd_find(&addrs[i].sa);
		if (a && !READ_ONCE(a->l.ended)) {
			a->seen = true;
			continue;
		}
		if (a)
			smbd_ksmbd_drop_ls(a);
		ret = smbd_ksmbd_add_ls(&addrs[i].sa);
		if (ret == -EPROTONOSUPPORT) {
			/*
			 * rdma_cm gives an address to the first device with
			 * its netdev, and neither 6.1 nor 6.12 can ask for a
			 * class.
			 */
			pr_warn_ratelimited("%pISc: rdma_cm picks the iWARP device of its interface%s, so InfiniBand and RoCE have no SMB Direct listener on port %u there\n",
					    &addrs[i].sa,
					    addrs[i].iwarp_too ?
					    " over the RoCE one" : "",
					    SMBD_PORT_IB);
		} else if (ret) {
			ksmbd_debug(RDMA, "cannot listen on %pISc: %d\n",
				    &addrs[i].sa, ret);
			retry = true;
		}
	}
	list_for_each_entry_safe(a, tmp, &smbd_ksmbd_ib, node)
		if (!a->seen)
			smbd_ksmbd_drop_ls(a);
again:
	if (!retry)
		smbd_ksmbd_retries = 0;
	else if (smbd_ksmbd_retries < ARRAY_SIZE(smbd_ksmbd_retry_ms))
		/* not later than a run an event asked for meanwhile */
		queue_delayed_work(system_long_wq, &smbd_ksmbd_resync_work,
				   msecs_to_jiffies(smbd_ksmbd_retry_ms[smbd_ksmbd_retries++]));
out:
	mutex_unlock(&smbd_ksmbd_ls_lock);
	kfree(addrs);
}

/*
 * An event that may change the listeners: a resync shortly (a RoCE GID
 * follows its address), with a new round of retries.
 */
static void smbd_ksmbd_event_on(struct net_device *dev, unsigned long event)
{
	switch (event) {
	case NETDEV_UP:
	case NETDEV_DOWN:
	case NETDEV_CHANGE:		/* carrier: IPv6 DAD may go on */
	case NETDEV_CHANGEUPPER:
		break;
	default:
		return;
	}
	if (dev && !net_eq(dev_net(dev), &init_net))
		return;
	WRITE_ONCE(smbd_ksmbd_event, 1);
	smbd_ksmbd_resync_soon(msecs_to_jiffies(smbd_ksmbd_retry_ms[0]));
}

/* Interface events: the RTNL held. */
static int smbd_ksmbd_netdev_event(struct notifier_block *nb,
				   unsigned long event, void *ptr)
{
	smbd_ksmbd_event_on(netdev_notifier_info_to_dev(ptr), event);
	return NOTIFY_DONE;
}

/* IPv4 address events: the RTNL held. */
static int smbd_ksmbd_inet_event(struct notifier_block *nb,
				 unsigned long event, void *ptr)
{
	const struct in_ifaddr *ifa = ptr;

	smbd_ksmbd_event_on(ifa->ifa_dev->dev, event);
	return NOTIFY_DONE;
}

/* IPv6 address events: atomic. */
static int smbd_ksmbd_inet6_event(struct notifier_block *nb,
				  unsigned long event, void *ptr)
{
	const struct inet6_ifaddr *ifp = ptr;

	smbd_ksmbd_event_on(ifp->idev->dev, event);
	return NOTIFY_DONE;
}

/* smbd's RDMA device events: process context. */
static int smbd_ksmbd_dev_event(struct notifier_block *nb,
				unsigned long event, void *ptr)
{
	smbd_ksmbd_event_on(NULL, NETDEV_UP);
	return NOTIFY_DONE;
}

static struct notifier_block smbd_ksmbd_netdev_nb = {
	.notifier_call = smbd_ksmbd_netdev_event,
};

static struct notifier_block smbd_ksmbd_inet_nb = {
	.notifier_call = smbd_ksmbd_inet_event,
};

static struct notifier_block smbd_ksmbd_inet6_nb = {
	.notifier_call = smbd_ksmbd_inet6_event,
};

static struct notifier_block smbd_ksmbd_smbd_nb = {
	.notifier_call = smbd_ksmbd_dev_event,
};

/*
 * Follow addresses, interfaces and RDMA devices, or stop. Registering
 * the interface notifier replays the interfaces there are (a resync).
 * Context: process, without smbd_ksmbd_ls_lock or the RTNL; sleeps.
 */
static void smbd_ksmbd_follow(bool on)
{
	int ret;

	if (on) {
		/* None of these fails but on a block registered twice. */
		ret = register_inetaddr_notifier(&smbd_ksmbd_inet_nb);
		if (!ret && IS_ENABLED(CONFIG_IPV6))
			ret = register_inet6addr_notifier(&smbd_ksmbd_inet6_nb);
		if (!ret)
			ret = register_netdevice_notifier(&smbd_ksmbd_netdev_nb);
		if (!ret)
			ret = smbd_register_dev_notifier(&smbd_ksmbd_smbd_nb);
		WARN_ON_ONCE(ret);
		return;
	}
	smbd_unregister_dev_notifier(&smbd_ksmbd_smbd_nb);
	unregister_netdevice_notifier(&smbd_ksmbd_netdev_nb);
	if (IS_ENABLED(CONFIG_IPV6))
		unregister_inet6addr_notifier(&smbd_ksmbd_inet6_nb);
	unregister_inetaddr_notifier(&smbd_ksmbd_inet_nb);
}

/**
 * ksmbd_rdma_init() - start listening for SMB Direct connections
 *
 * Port 5445 on the IPv4 and IPv6 wildcard addresses for iWARP, and 445
 * on each address of an InfiniBand or RoCE device, followed from here
 * on as addresses and devices come and go ([MS-SMBD] 1.9); each listener
 * with its accept thread and MaxReadWriteSize from
 * init_smbd_max_io_size(). ksmbd lists IPv6 addresses among its
 * interfaces too (FSCTL_QUERY_NETWORK_INTERFACE_INFO), flagged
 * RDMA-capable by their device: a multichannel client tries them. IPv4
 * alone serves when IPv6 cannot be had; an address left without its 445
 * listener is retried a few times, then at the next event.
 *
 * Context: process, under ksmbd's init_lock; sleeps. Takes the RTNL.
 * Return: 0, or an errno (ksmbd then does not start): the IPv4 5445
 * listener failed; nothing is left behind on failure.
 */
int ksmbd_rdma_init(void)
{
	struct sockaddr_in sin = {
		.sin_family = AF_INET,
		.sin_addr.s_addr = htonl(INADDR_ANY),
		.sin_port = htons(SMBD_PORT_IWARP),
	};
	struct sockaddr_in6 sin6 = {
		.sin6_family = AF_INET6,
		.sin6_addr = IN6ADDR_ANY_INIT,
		.sin6_port = htons(SMBD_PORT_IWARP),
	};
	struct smbd_params *p = &smbd_ksmbd_params;
	int ret;

	mutex_lock(&smbd_ksmbd_ls_lock);
	if (smbd_ksmbd_running) {
		mutex_unlock(&smbd_ksmbd_ls_lock);
		return 0;
	}
	smbd_params_init(p, true);
	/*
	 * ksmbd's own SMB Direct limits (transport_rdma.c): 255 credits
	 * each way and 1364-byte messages, as the cifs adapter keeps cifs's.
	 */
	p->recv_credit_max = 255;
	p->send_credit_target = 255;
	p->max_send_size = 1364;
	p->max_recv_size = 1364;
	p->large_size = 0;
	p->max_read_write_size = get_smbd_max_read_write_size();
	ret = smbd_ksmbd_listen(&smbd_ksmbd_iw[0], (struct sockaddr *)&sin,
				SMBD_DEV_IWARP);
	if (ret) {
		mutex_unlock(&smbd_ksmbd_ls_lock);
		pr_err("cannot listen for SMB Direct on port %u: %d\n",
		       SMBD_PORT_IWARP, ret);
		return ret;
	}
	if (IS_ENABLED(CONFIG_IPV6)) {
		ret = smbd_ksmbd_listen(&smbd_ksmbd_iw[1],
					(struct sockaddr *)&sin6,
					SMBD_DEV_IWARP);
		if (ret)
			pr_warn("no SMB Direct over IPv6 on port %u: %d\n",
				SMBD_PORT_IWARP, ret);
	}
	WRITE_ONCE(smbd_ksmbd_running, true);
	smbd_ksmbd_retries = 0;
	mutex_unlock(&smbd_ksmbd_ls_lock);

	smbd_ksmbd_follow(true);
	/* The 445 listeners are up before ksmbd says it is running. */
	cancel_delayed_work_sync(&smbd_ksmbd_resync_work);
	smbd_ksmbd_resync(&smbd_ksmbd_resync_work.work);
	ksmbd_debug(RDMA, "SMB Direct listeners on ports %u and %u\n",
		    SMBD_PORT_IWARP, SMBD_PORT_IB);
	return 0;
}

/**
 * ksmbd_rdma_stop_listening() - accept no more SMB Direct connections
 *
 * Stops following addresses and devices, then ends every listener with
 * its accept thread; the connections nobody accepted go with them. Then
 * smbd_ksmbd_conns_stop() does what the kernel series needs for the
 * connections already handed to ksmbd, which ksmbd's stop_sessions()
 * ends right after this.
 *
 * Context: process, under ksmbd's init_lock; sleeps. Takes the RTNL.
 */
void ksmbd_rdma_stop_listening(void)
{
	struct smbd_ksmbd_addr_ls *a, *tmp;

	mutex_lock(&smbd_ksmbd_ls_lock);
	if (!smbd_ksmbd_running) {
		mutex_unlock(&smbd_ksmbd_ls_lock);
		smbd_ksmbd_conns_stop();
		return;
	}
	WRITE_ONCE(smbd_ksmbd_running, false);
	mutex_unlock(&smbd_ksmbd_ls_lock);

	smbd_ksmbd_follow(false);
	mutex_lock(&smbd_ksmbd_ls_lock);
	list_for_each_entry_safe(a, tmp, &smbd_ksmbd_ib, node)
		smbd_ksmbd_drop_ls(a);
	smbd_ksmbd_unlisten(&smbd_ksmbd_iw[1]);
	smbd_ksmbd_unlisten(&smbd_ksmbd_iw[0]);
	mutex_unlock(&smbd_ksmbd_ls_lock);
	/* No thread or notifier is left to queue it again. */
	cancel_delayed_work_sync(&smbd_ksmbd_resync_work);
	smbd_ksmbd_conns_stop();
}

/**
 * ksmbd_rdma_destroy() - the last of SMB Direct until the next init
 *
 * Stops listening if still needed. Safe without a prior
 * ksmbd_rdma_init() and when called twice.
 *
 * Context: process, under ksmbd's init_lock; sleeps.
 */
void ksmbd_rdma_destroy(void)
{
	ksmbd_rdma_stop_listening();
}


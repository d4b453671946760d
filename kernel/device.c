// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Device lifetime: creation from `rdma link add`, the port as seen through
 * the netdev, netdev events, and teardown on link delete or module unload.
 */
#include <linux/if_arp.h>
#include <linux/inetdevice.h>
#include <linux/module.h>
#include <linux/siphash.h>
#include <net/addrconf.h>
#include <net/if_inet6.h>
#include <net/net_namespace.h>
#include <rdma/ib_addr.h>

#include "sroce.h"

/* Every live sroce device, so that module unload can remove them all.
 * ib_core's own registry cannot tell our devices apart by driver id:
 * sroce uses RDMA_DRIVER_UNKNOWN so that no other provider claims it.
 */
static LIST_HEAD(sroce_devices);
static DEFINE_MUTEX(sroce_devices_lock);

static bool is_sroce(const struct ib_device *ib)
{
	return ib->ops.owner == THIS_MODULE;
}

/* Returns the sroce device on @ndev with a registration reference held
 * (release with ib_device_put), or NULL.
 */
static struct sroce_dev *sroce_get_by_netdev(struct net_device *ndev)
{
	struct ib_device *ib = ib_device_get_by_netdev(ndev, RDMA_DRIVER_UNKNOWN);

	if (!ib)
		return NULL;
	if (!is_sroce(ib)) {
		ib_device_put(ib);
		return NULL;
	}
	return to_sdev(ib);
}

static ssize_t sroce_abi_show(struct device *device,
			      struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%s\n", SROCE_ABI_ID);
}
static DEVICE_ATTR_RO(sroce_abi);

static struct sroce_dev *sdev_of(struct device *device)
{
	return rdma_device_to_drv_device(device, struct sroce_dev, ib);
}

static ssize_t parent_show(struct device *device,
			   struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%s\n", netdev_name(sdev_of(device)->ndev));
}
static DEVICE_ATTR_RO(parent);

/*
 * The device's on/off settings, one file each (0 or 1, as kstrtobool
 * reads them); the owner of each says what it does.  Read locklessly on
 * the data path, so a write takes effect from the next packet.
 */
static ssize_t setting_show(const bool *setting, char *buf)
{
	return sysfs_emit(buf, "%d\n", READ_ONCE(*setting));
}

static ssize_t setting_store(bool *setting, const char *buf, size_t count)
{
	bool on;
	int err = kstrtobool(buf, &on);

	if (err)
		return err;
	WRITE_ONCE(*setting, on);
	return count;
}

static ssize_t rx_steer_show(struct device *device,
			     struct device_attribute *attr, char *buf)
{
	return setting_show(&sdev_of(device)->rx_steer_on, buf);
}

static ssize_t rx_steer_store(struct device *device, struct device_attribute *attr,
			      const char *buf, size_t count)
{
	return setting_store(&sdev_of(device)->rx_steer_on, buf, count);
}
static DEVICE_ATTR_RW(rx_steer);

static ssize_t loopback_bypass_show(struct device *device,
				    struct device_attribute *attr, char *buf)
{
	return setting_show(&sdev_of(device)->loopback_bypass, buf);
}

static ssize_t loopback_bypass_store(struct device *device,
				     struct device_attribute *attr,
				     const char *buf, size_t count)
{
	return setting_store(&sdev_of(device)->loopback_bypass, buf, count);
}
static DEVICE_ATTR_RW(loopback_bypass);

/* In microseconds, rounded up to jiffies; 0 turns the SQ poller off. */
static ssize_t sq_poll_idle_us_show(struct device *device,
				    struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", READ_ONCE(sdev_of(device)->sq_poll_idle_us));
}

static ssize_t sq_poll_idle_us_store(struct device *device,
				     struct device_attribute *attr,
				     const char *buf, size_t count)
{
	u32 us;
	int err = kstrtou32(buf, 0, &us);

	if (err)
		return err;
	WRITE_ONCE(sdev_of(device)->sq_poll_idle_us, us);
	return count;
}
static DEVICE_ATTR_RW(sq_poll_idle_us);

static struct attribute *sroce_dev_attrs[] = {
	&dev_attr_sroce_abi.attr,
	&dev_attr_parent.attr,
	&dev_attr_rx_steer.attr,
	&dev_attr_loopback_bypass.attr,
	&dev_attr_sq_poll_idle_us.attr,
	NULL,
};

const struct attribute_group sroce_attr_group = {
	.attrs = sroce_dev_attrs,
};

/*
 * Which netdevs a device may sit on: those that carry IP, since RoCE v2 is
 * UDP/IP and every packet leaves by the IP stack (ip_local_out): Ethernet
 * NICs, veth, bridges and VLANs, but also L3 devices without a MAC, as
 * rxe takes them: tun and wireguard (ARPHRD_NONE), ipip, gre, sit,
 * ip6tnl, ip6gre, raw-IP modems, PPP.  By link type, because IPv4 sets
 * itself up on any netdev whose MTU reaches 68 (CAN's does).  Not
 * loopback (ib_core and rdma_cm map loopback addresses to the netdev that
 * owns them), not IPoIB (rdma_cm takes its addresses for InfiniBand
 * ones), and not a netdev with neither IPv4 nor IPv6 on it.
 */
static int sroce_check_netdev(struct net_device *ndev)
{
	bool has_ip;

	if (ndev->flags & IFF_LOOPBACK) {
		pr_err("sroce: %s is a loopback device: add sroce to the netdev that carries the address\n",
		       netdev_name(ndev));
		return -EINVAL;
	}
	switch (ndev->type) {
	case ARPHRD_ETHER:
	case ARPHRD_NONE:
	case ARPHRD_RAWIP:
	case ARPHRD_TUNNEL:
	case ARPHRD_TUNNEL6:
	case ARPHRD_IPGRE:
	case ARPHRD_IP6GRE:
	case ARPHRD_SIT:
	case ARPHRD_PPP:
		break;
	default:
		pr_err("sroce: %s carries no IP (link type %u)%s\n",
		       netdev_name(ndev), ndev->type,
		       ndev->type == ARPHRD_INFINIBAND ?
			       ": an IPoIB device, its HCA does RDMA itself" : "");
		return -EINVAL;
	}
	rcu_read_lock();
	has_ip = __in_dev_get_rcu(ndev) || rcu_dereference(ndev->ip6_ptr);
	rcu_read_unlock();
	if (!has_ip) {
		pr_err("sroce: %s carries no IP (neither IPv4 nor IPv6 is set up on it)\n",
		       netdev_name(ndev));
		return -EINVAL;
	}
	return 0;
}

/*
 * The node GUID (and system image GUID).  On a netdev with a MAC, the
 * EUI-64 of that MAC, as rxe and RoCE NICs derive theirs: a ConnectX user
 * finds the NIC's MAC in it.  An L3 netdev has no MAC and nothing else
 * burnt in.  Its ifindex alone would repeat across hosts and namespaces
 * (every CI container's first tunnel has the same one) while a GUID is
 * meant to be unique on the fabric, and a fresh random number per `rdma
 * link add` would change under a user who deletes and re-adds the link.
 * So: a keyed hash (SipHash) of the namespace's cookie and the ifindex,
 * under a key drawn once per module load.  Unique with overwhelming
 * probability, the same for as long as the netdev lives, a new one after
 * a reboot (as a veth's or tun's random MAC, and so the GUID of sroce on
 * such a netdev, is new too).  Marked locally administered (U/L bit set,
 * group bit clear) so it never poses as a vendor's, and never zero.
 */
static __be64 sroce_node_guid(struct net_device *ndev)
{
	static siphash_key_t key;
	__be64 guid;
	u64 h;

	if (sroce_ndev_has_mac(ndev)) {
		addrconf_addr_eui48((unsigned char *)&guid, ndev->dev_addr);
		return guid;
	}
	net_get_random_once(&key, sizeof(key));
	h = siphash_2u64(dev_net(ndev)->net_cookie, ndev->ifindex, &key);
	h &= ~(1ULL << 56);	/* individual, not group */
	h |= 1ULL << 57;	/* locally administered */
	return cpu_to_be64(h);
}

/*
 * GIDs of an L3 netdev.  ib_core makes a RoCE port's GIDs from its
 * netdev's addresses, all of them when the device registers, but the
 * address events it follows afterwards are those of Ethernet netdevs only
 * (roce_gid_mgmt, Linux 6.1 at least): an address given to a tunnel after
 * `rdma link add` would never become a GID.  So sroce has ib_core rescan
 * the device's netdev when one arrives (from a work item: the IPv6 chain
 * is atomic, and the rescan takes RTNL).  A rescan only adds, so an
 * address taken away stays a GID there until the link is made again.
 */
static void sroce_gid_rescan(struct work_struct *work)
{
	struct sroce_dev *sdev = container_of(work, struct sroce_dev, gid_rescan);

	/* Not while it unregisters (its GID table is being emptied). */
	if (!ib_device_try_get(&sdev->ib))
		return;
	rdma_roce_rescan_device(&sdev->ib);
	ib_device_put(&sdev->ib);
}

static void sroce_addr_added(struct net_device *ndev)
{
	struct sroce_dev *sdev;

	if (sroce_ndev_has_mac(ndev))
		return;		/* ib_core follows these itself */
	sdev = sroce_get_by_netdev(ndev);
	if (!sdev)
		return;
	queue_work(system_wq, &sdev->gid_rescan);
	ib_device_put(&sdev->ib);
}

static int sroce_inetaddr_event(struct notifier_block *nb, unsigned long event,
				void *ptr)
{
	struct in_ifaddr *ifa = ptr;

	if (event == NETDEV_UP)
		sroce_addr_added(ifa->ifa_dev->dev);
	return NOTIFY_DONE;
}

static int sroce_inet6addr_event(struct notifier_block *nb, unsigned long event,
				 void *ptr)
{
	struct inet6_ifaddr *ifa = ptr;

	if (event == NETDEV_UP)
		sroce_addr_added(ifa->idev->dev);
	return NOTIFY_DONE;
}

static struct notifier_block sroce_inetaddr_notifier = {
	.notifier_call = sroce_inetaddr_event,
};

static struct notifier_block sroce_inet6addr_notifier = {
	.notifier_call = sroce_inet6addr_event,
};

int sroce_newlink(const char *ibdev_name, struct net_device *ndev)
{
	struct sroce_dev *sdev;
	int err;

	err = sroce_check_netdev(ndev);
	if (err)
		return err;
	sdev = sroce_get_by_netdev(ndev);
	if (sdev) {
		pr_err("sroce: %s already carries %s\n", netdev_name(ndev),
		       dev_name(&sdev->ib.dev));
		ib_device_put(&sdev->ib);
		return -EEXIST;
	}

	sdev = ib_alloc_device(sroce_dev, ib);
	if (!sdev)
		return -ENOMEM;
	/* Before ib_set_device_ops: freeing sdev now runs no dealloc_driver. */
	sdev->counters = alloc_percpu(struct sroce_counters);
	if (!sdev->counters) {
		ib_dealloc_device(&sdev->ib);
		return -ENOMEM;
	}
	sdev->ndev = ndev;
	/* Before anything can find the device: from here on only the netdev
	 * notifier (under RTNL) writes it.
	 */
	sdev->port_was_up = sroce_port_state(sdev) == IB_PORT_ACTIVE;

	sdev->ib.node_type = RDMA_NODE_IB_CA;
	sdev->ib.phys_port_cnt = 1;
	/* One per CPU, as NICs (an interrupt each) and rxe offer: consumers
	 * open a queue per vector (nvme-rdma, iSER, SRP, NFS), and with one
	 * every CPU's I/O went through one QP.  A CQ's handler runs where its
	 * completion is made, whichever vector it asked for, as on rxe.
	 */
	sdev->ib.num_comp_vectors = num_possible_cpus();
	sdev->ib.local_dma_lkey = 0;
	sdev->ib.node_guid = sroce_node_guid(ndev);
	strscpy(sdev->ib.node_desc, "sroce", sizeof(sdev->ib.node_desc));
	/* The provider's doorbell is a POST_SEND write with no work requests;
	 * it asks for a completion event with REQ_NOTIFY_CQ when it arms a CQ
	 * holding completions not polled yet (sroce_req_notify_user_cq()).
	 */
	sdev->ib.uverbs_cmd_mask |= BIT_ULL(IB_USER_VERBS_CMD_POST_SEND) |
				    BIT_ULL(IB_USER_VERBS_CMD_REQ_NOTIFY_CQ);
	ib_set_device_ops(&sdev->ib, &sroce_dev_ops);
	INIT_WORK(&sdev->gid_rescan, sroce_gid_rescan);
	xa_init_flags(&sdev->qps, XA_FLAGS_ALLOC | XA_FLAGS_LOCK_BH);
	xa_init_flags(&sdev->mrs, XA_FLAGS_ALLOC1);
	xa_init_flags(&sdev->ahs, XA_FLAGS_ALLOC1);
	xa_init_flags(&sdev->srqs, XA_FLAGS_ALLOC1);
	sroce_cc_dev_init(sdev);
	sroce_fault_dev_init(sdev);
	sroce_rx_steer_init(sdev);
	sdev->loopback_bypass = true;
	sdev->sq_poll_idle_us = SROCE_SQ_POLL_IDLE_US;

	mutex_lock(&sroce_devices_lock);
	list_add_tail(&sdev->node, &sroce_devices);
	mutex_unlock(&sroce_devices_lock);

	err = ib_device_set_netdev(&sdev->ib, ndev, SROCE_PORT);
	if (!err)
		err = sroce_net_attach(sdev);
	if (!err)
		err = ib_register_device(&sdev->ib, ibdev_name, NULL);
	if (err) {
		/* Never registered: ib_dealloc_device runs our dealloc_driver,
		 * which takes the device off sroce_devices.
		 */
		pr_err("sroce: cannot register %s on %s: %d\n", ibdev_name,
		       netdev_name(ndev), err);
		ib_dealloc_device(&sdev->ib);
		return err;
	}
	sroce_cc_sysfs_add(sdev);
	sroce_fault_dev_add(sdev);
	pr_info("sroce: %s on %s\n", dev_name(&sdev->ib.dev), netdev_name(ndev));
	return 0;
}

/* ops.dealloc_driver: the last driver callback of a device, run once by
 * ib_core after unregistration (or by ib_dealloc_device if registration
 * failed).  ib_core frees the memory itself afterwards.
 */
void sroce_dealloc_driver(struct ib_device *ib)
{
	struct sroce_dev *sdev = to_sdev(ib);

	/* Unregistered: no notifier finds the device to queue it again. */
	cancel_work_sync(&sdev->gid_rescan);
	sroce_net_detach(sdev);
	sroce_rx_steer_exit(sdev);
	sroce_fault_dev_remove(sdev);
	WARN_ON(!xa_empty(&sdev->qps) || !xa_empty(&sdev->mrs) ||
		!xa_empty(&sdev->ahs) || !xa_empty(&sdev->srqs));
	xa_destroy(&sdev->qps);
	xa_destroy(&sdev->mrs);
	xa_destroy(&sdev->ahs);
	xa_destroy(&sdev->srqs);

	mutex_lock(&sroce_devices_lock);
	list_del(&sdev->node);
	mutex_unlock(&sroce_devices_lock);
	/* Detached and unregistered: nothing counts or reads any more. */
	free_percpu(sdev->counters);
}

enum ib_port_state sroce_port_state(struct sroce_dev *sdev)
{
	return netif_running(sdev->ndev) && netif_carrier_ok(sdev->ndev) &&
	       !READ_ONCE(sdev->fault.link_down) ? IB_PORT_ACTIVE : IB_PORT_DOWN;
}

static void sroce_port_event(struct sroce_dev *sdev)
{
	struct ib_event ev = {
		.device = &sdev->ib,
		.element.port_num = SROCE_PORT,
	};

	ev.event = sroce_port_state(sdev) == IB_PORT_ACTIVE ?
			   IB_EVENT_PORT_ACTIVE : IB_EVENT_PORT_ERR;
	ib_dispatch_event(&ev);
}

/* PMA LinkDownedCounter: a port that was ACTIVE went DOWN.  NETDEV_CHANGE
 * and NETDEV_DOWN may both report one going down: count the transition.
 */
static void sroce_note_port_state(struct sroce_dev *sdev)
{
	bool up = sroce_port_state(sdev) == IB_PORT_ACTIVE;

	if (sdev->port_was_up && !up)
		sroce_count(sdev, SROCE_CNT_LINK_DOWNED, 1);
	sdev->port_was_up = up;
}

/* ib_core raises port events for netdev changes on newer kernels, but
 * cannot know of a port we forced down: that event is always ours.
 */
void sroce_port_changed(struct sroce_dev *sdev)
{
	bool was_up = sdev->port_was_up;

	sroce_note_port_state(sdev);
	if (was_up != sdev->port_was_up)
		sroce_port_event(sdev);
}

static int sroce_netdev_event(struct notifier_block *nb, unsigned long event,
			      void *ptr)
{
	struct net_device *ndev = netdev_notifier_info_to_dev(ptr);
	struct sroce_dev *sdev = sroce_get_by_netdev(ndev);

	if (!sdev)
		return NOTIFY_DONE;

	switch (event) {
	case NETDEV_UNREGISTER:
		/* Under rtnl: a synchronous unregister would deadlock with
		 * ib_core's own netdev handling, so queue it.
		 */
		ib_unregister_device_queued(&sdev->ib);
		break;
	case NETDEV_UP:
	case NETDEV_DOWN:
	case NETDEV_CHANGE:
		sroce_note_port_state(sdev);
		if (!SROCE_CORE_RAISES_PORT_EVENTS)
			sroce_port_event(sdev);
		break;
	default:
		break;
	}
	ib_device_put(&sdev->ib);
	return NOTIFY_DONE;
}

static struct notifier_block sroce_netdev_notifier = {
	.notifier_call = sroce_netdev_event,
};

int sroce_device_init(void)
{
	int err;

	err = register_inetaddr_notifier(&sroce_inetaddr_notifier);
	if (err)
		return err;
	if (IS_ENABLED(CONFIG_IPV6)) {
		err = register_inet6addr_notifier(&sroce_inet6addr_notifier);
		if (err)
			goto err_inet;
	}
	err = register_netdevice_notifier(&sroce_netdev_notifier);
	if (err)
		goto err_inet6;
	return 0;

err_inet6:
	if (IS_ENABLED(CONFIG_IPV6))
		unregister_inet6addr_notifier(&sroce_inet6addr_notifier);
err_inet:
	unregister_inetaddr_notifier(&sroce_inetaddr_notifier);
	return err;
}

void sroce_device_exit(void)
{
	unregister_netdevice_notifier(&sroce_netdev_notifier);
	if (IS_ENABLED(CONFIG_IPV6))
		unregister_inet6addr_notifier(&sroce_inet6addr_notifier);
	unregister_inetaddr_notifier(&sroce_inetaddr_notifier);

	/* ib_unregister_device serialises with any unregistration already
	 * in flight (link delete, a queued netdev removal) on the device's
	 * unregistration lock, so when it returns that device's
	 * dealloc_driver has run and it has left the list.  The kobject
	 * reference keeps the memory valid while we wait.
	 */
	for (;;) {
		struct sroce_dev *sdev;

		mutex_lock(&sroce_devices_lock);
		sdev = list_first_entry_or_null(&sroce_devices,
						struct sroce_dev, node);
		if (sdev)
			get_device(&sdev->ib.dev);
		mutex_unlock(&sroce_devices_lock);
		if (!sdev)
			break;
		ib_unregister_device(&sdev->ib);
		put_device(&sdev->ib.dev);
	}
}

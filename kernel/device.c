// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Device lifetime: creation from `rdma link add`, the port as seen through
 * the netdev, netdev events, and teardown on link delete or module unload.
 */
#include <linux/if_arp.h>
#include <linux/module.h>
#include <net/addrconf.h>
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

static ssize_t parent_show(struct device *device,
			   struct device_attribute *attr, char *buf)
{
	struct sroce_dev *sdev =
		rdma_device_to_drv_device(device, struct sroce_dev, ib);

	return sysfs_emit(buf, "%s\n", netdev_name(sdev->ndev));
}
static DEVICE_ATTR_RO(parent);

static struct attribute *sroce_dev_attrs[] = {
	&dev_attr_sroce_abi.attr,
	&dev_attr_parent.attr,
	NULL,
};

const struct attribute_group sroce_attr_group = {
	.attrs = sroce_dev_attrs,
};

int sroce_newlink(const char *ibdev_name, struct net_device *ndev)
{
	struct sroce_dev *sdev;
	int err;

	if (ndev->type != ARPHRD_ETHER || ndev->addr_len != ETH_ALEN) {
		pr_err("sroce: %s is not an Ethernet device\n", netdev_name(ndev));
		return -EINVAL;
	}
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
	sdev->ndev = ndev;
	/* Before anything can find the device: from here on only the netdev
	 * notifier (under RTNL) writes it.
	 */
	sdev->port_was_up = sroce_port_state(sdev) == IB_PORT_ACTIVE;

	sdev->ib.node_type = RDMA_NODE_IB_CA;
	sdev->ib.phys_port_cnt = 1;
	sdev->ib.num_comp_vectors = 1;
	sdev->ib.local_dma_lkey = 0;
	addrconf_addr_eui48((unsigned char *)&sdev->ib.node_guid,
			    ndev->dev_addr);
	strscpy(sdev->ib.node_desc, "sroce", sizeof(sdev->ib.node_desc));
	/* The provider's doorbell is a POST_SEND write with no work requests. */
	sdev->ib.uverbs_cmd_mask |= BIT_ULL(IB_USER_VERBS_CMD_POST_SEND);
	ib_set_device_ops(&sdev->ib, &sroce_dev_ops);
	xa_init_flags(&sdev->qps, XA_FLAGS_ALLOC | XA_FLAGS_LOCK_BH);
	xa_init_flags(&sdev->mrs, XA_FLAGS_ALLOC1);
	xa_init_flags(&sdev->ahs, XA_FLAGS_ALLOC1);
	xa_init_flags(&sdev->srqs, XA_FLAGS_ALLOC1);
	sroce_cc_dev_init(sdev);
	sroce_fault_dev_init(sdev);

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

	sroce_net_detach(sdev);
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
	return register_netdevice_notifier(&sroce_netdev_notifier);
}

void sroce_device_exit(void)
{
	unregister_netdevice_notifier(&sroce_netdev_notifier);

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

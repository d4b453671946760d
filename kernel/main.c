// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce module entry: registers the "sroce" RDMA link type so that
 * `rdma link add NAME type sroce netdev DEV` creates a device, and tears
 * every device down again on unload.
 */
#include <linux/module.h>
#include <rdma/rdma_netlink.h>

#include "sroce.h"

static struct rdma_link_ops sroce_link_ops = {
	.type = SROCE_LINK_TYPE,
	.newlink = sroce_newlink,
};

static int __init sroce_init(void)
{
	int err;

	err = sroce_device_init();
	if (err)
		return err;
	rdma_link_register(&sroce_link_ops);
	pr_info("sroce: software RoCE v2 loaded\n");
	return 0;
}

static void __exit sroce_exit(void)
{
	/* Unregistering the link type waits for any newlink in flight, so no
	 * device can appear after this point.
	 */
	rdma_link_unregister(&sroce_link_ops);
	sroce_device_exit();
	pr_info("sroce: unloaded\n");
}

module_init(sroce_init);
module_exit(sroce_exit);

MODULE_AUTHOR("sroce developers");
MODULE_DESCRIPTION("Software RoCE v2 RDMA device");
MODULE_LICENSE("Dual BSD/GPL");
MODULE_ALIAS_RDMA_LINK(SROCE_LINK_TYPE);

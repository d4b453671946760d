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

/* Send engines: one work item per QP, each QP on a CPU of its own. */
struct workqueue_struct *sroce_wq;

static int __init sroce_init(void)
{
	int err;

	/* Per CPU: a QP's engine is queued on the CPU that last ran it
	 * (qp.c), which an unbound workqueue would treat as a mere hint.
	 * Not WQ_HIGHPRI: nice -20 senders starved ksoftirqd, so the packets
	 * they queued were not received, the CPU's backlog overflowed and
	 * 8-QP loopback runs died of retries.  Doorbells send inline anyway.
	 */
	sroce_wq = alloc_workqueue("sroce", WQ_MEM_RECLAIM | WQ_PERCPU, 0);
	if (!sroce_wq)
		return -ENOMEM;
	sroce_fault_init();
	sroce_crc_simd_init();
	sroce_local_rx_init();
	sroce_ackq_init();
	err = sroce_sqpoll_init();
	if (err)
		goto err_wq;
	err = sroce_net_init();
	if (err)
		goto err_sqpoll;
	err = sroce_device_init();
	if (err)
		goto err_net;
	rdma_link_register(&sroce_link_ops);
	pr_info("sroce: software RoCE v2 loaded\n");
	return 0;

err_net:
	sroce_net_exit();
err_sqpoll:
	sroce_sqpoll_exit();
err_wq:
	sroce_fault_exit();
	destroy_workqueue(sroce_wq);
	return err;
}

static void __exit sroce_exit(void)
{
	/* Unregistering the link type waits for any newlink in flight, so no
	 * device can appear after this point.
	 */
	rdma_link_unregister(&sroce_link_ops);
	sroce_device_exit();
	sroce_sqpoll_exit();
	sroce_local_rx_exit();
	sroce_ackq_exit();
	sroce_net_exit();
	sroce_fault_exit();
	destroy_workqueue(sroce_wq);
	pr_info("sroce: unloaded\n");
}

module_init(sroce_init);
module_exit(sroce_exit);

MODULE_AUTHOR("sroce developers");
MODULE_DESCRIPTION("Software RoCE v2 RDMA device");
MODULE_LICENSE("Dual BSD/GPL");
MODULE_VERSION(SROCE_VERSION);
MODULE_ALIAS_RDMA_LINK(SROCE_LINK_TYPE);

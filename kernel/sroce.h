/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * sroce: software RoCE v2 device.  Types shared by the kernel files.
 *
 * Object ownership: ib_core allocates every verbs object (ib_pd, ib_qp …)
 * with the size we declare through INIT_RDMA_OBJ_SIZE, so each sroce object
 * embeds its ib_* base as the first member and is reached with container_of.
 */
#ifndef SROCE_H
#define SROCE_H

#include <linux/list.h>
#include <linux/netdevice.h>
#include <rdma/ib_verbs.h>

#include "../include/uapi/sroce-abi.h"

#define SROCE_PORT 1			/* the one port of every sroce device */

struct sroce_dev {
	struct ib_device ib;		/* must stay first: ib_alloc_device */
	struct net_device *ndev;	/* held by ib_core via ib_device_set_netdev */
	struct list_head node;		/* on sroce_devices, for module unload */
};

struct sroce_ucontext {
	struct ib_ucontext ib;
};

struct sroce_pd {
	struct ib_pd ib;
};

static inline struct sroce_dev *to_sdev(struct ib_device *ib)
{
	return container_of(ib, struct sroce_dev, ib);
}

/* device.c: device lifetime, ports, netdev events */
extern const struct attribute_group sroce_attr_group;
int sroce_newlink(const char *ibdev_name, struct net_device *ndev);
void sroce_dealloc_driver(struct ib_device *ib);
enum ib_port_state sroce_port_state(struct sroce_dev *sdev);
int sroce_device_init(void);
void sroce_device_exit(void);

/* verbs.c: the ib_device_ops table */
extern const struct ib_device_ops sroce_dev_ops;
void sroce_fill_device_attrs(struct sroce_dev *sdev, struct ib_device_attr *a);

#endif /* SROCE_H */

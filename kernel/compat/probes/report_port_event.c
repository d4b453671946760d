// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* ib_core raises port events from the netdev's state itself, and offers
 * drivers ib_device_ops.report_port_event to do it their way (6.14, "RDMA/
 * core: Support link status events dispatching").
 */
#include <rdma/ib_verbs.h>

static void probe(struct ib_device *dev, struct net_device *ndev,
		  unsigned long event)
{
}

extern const struct ib_device_ops sroce_probe_ops;
const struct ib_device_ops sroce_probe_ops = { .report_port_event = probe };

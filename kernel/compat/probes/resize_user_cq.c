// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* CQ resize is ib_device_ops.resize_user_cq with an unsigned count (7.1,
 * "RDMA: Clarify that CQ resize is a user-space verb").
 */
#include <rdma/ib_verbs.h>

static int probe(struct ib_cq *cq, unsigned int cqe, struct ib_udata *udata)
{
	return 0;
}

extern const struct ib_device_ops sroce_probe_ops;
const struct ib_device_ops sroce_probe_ops = { .resize_user_cq = probe };

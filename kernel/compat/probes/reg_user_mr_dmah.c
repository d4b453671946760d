// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* ib_device_ops.reg_user_mr takes a DMA handle before udata (6.17,
 * "RDMA/core: Introduce a DMAH object and its alloc/free APIs").
 */
#include <rdma/ib_verbs.h>

static struct ib_mr *probe(struct ib_pd *pd, u64 start, u64 length, u64 virt,
			   int access, struct ib_dmah *dmah,
			   struct ib_udata *udata)
{
	return NULL;
}

extern const struct ib_device_ops sroce_probe_ops;
const struct ib_device_ops sroce_probe_ops = { .reg_user_mr = probe };

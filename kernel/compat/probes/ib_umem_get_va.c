// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* ib_umem_get() was renamed ib_umem_get_va() (7.2). */
#include <rdma/ib_umem.h>

struct ib_umem *sroce_probe(struct ib_device *dev, unsigned long addr,
			    size_t size, int access);
struct ib_umem *sroce_probe(struct ib_device *dev, unsigned long addr,
			    size_t size, int access)
{
	return ib_umem_get_va(dev, addr, size, access);
}

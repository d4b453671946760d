/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Owns struct sroce_ring (ring.c), which every send, receive and
 * completion queue is built on, and mapping it into a process.  A ring
 * has no lock of its own: its indices are under the lock of the queue
 * that embeds it.
 */
#ifndef SROCE_RING_H
#define SROCE_RING_H

#include <linux/minmax.h>
#include <linux/types.h>

#include "../include/uapi/sroce-abi.h"

struct ib_ucontext;
struct rdma_user_mmap_entry;
struct vm_area_struct;

/* ------------------------------------------------------------------------
 * Rings (ring.c): the layout of include/uapi/sroce-abi.h, in a vmalloc_user
 * buffer that user space may map.  Kernel consumers use the same rings
 * without mapping them.
 */
struct sroce_ring {
	struct sroce_ring_ctrl *ctrl;
	u8 *slots;
	u32 num_slots;
	u32 mask;
	u32 slot_size;
	size_t bytes;
	struct rdma_user_mmap_entry *mmap_entry;	/* NULL: not exported */
};

static inline void *sroce_ring_slot(const struct sroce_ring *r, u32 index)
{
	return r->slots + (size_t)(index & r->mask) * r->slot_size;
}

/*
 * The max_wr a work queue (SQ, RQ, SRQ) of @num_slots made for @requested
 * WRs reports: at least the request, and never more than a CQ made for
 * the same request holds (cq.c: requested + 1 slots, rounded up to a power
 * of two, one kept empty).  Consumers size a CQ by their own request and
 * then post what the queue reports: UCX fills its SRQ to the reported
 * max_wr, and an SRQ made for 4095 that reported its 4096 slots overflowed
 * UCX's CQ of 4095.  rxe and mlx5, whose queues keep a slot empty too,
 * report no more either.  A work queue's ring holds all its slots.
 */
static inline u32 sroce_wq_max_wr(u32 requested, u32 num_slots)
{
	return max(requested, num_slots - 1);
}

int sroce_ring_init(struct sroce_ring *r, u32 min_slots, u32 slot_size);
int sroce_ring_export(struct sroce_ring *r, struct ib_ucontext *uctx,
		      struct sroce_ring_info *info);
void sroce_ring_free(struct sroce_ring *r);
/* Any other vmalloc_user buffer shared with a process (the SQ mark page). */
struct rdma_user_mmap_entry *sroce_shared_export(void *buf, size_t bytes,
						 struct ib_ucontext *uctx);
int sroce_mmap(struct ib_ucontext *uctx, struct vm_area_struct *vma);
void sroce_mmap_free(struct rdma_user_mmap_entry *entry);

#endif /* SROCE_RING_H */

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Rings shared with user space (or private to kernel consumers): one
 * vmalloc_user buffer holding the control block and the slots, exported
 * to the process through an rdma_user_mmap_entry.
 *
 * An exported buffer belongs to its mmap entry and is freed with it, at the
 * entry's last reference: so an mmap() racing with the object's destruction
 * never maps freed memory.  Remapped vmalloc pages hold references of their
 * own, so a process that keeps a stale mapping only scribbles on pages
 * nobody else reads any more.
 */
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/vmalloc.h>
#include <rdma/uverbs_ioctl.h>

#include "sroce.h"

struct sroce_mmap_entry {
	struct rdma_user_mmap_entry rdma;
	void *buf;
};

int sroce_ring_init(struct sroce_ring *r, u32 min_slots, u32 slot_size)
{
	size_t bytes;

	if (!min_slots || min_slots > SROCE_MAX_RING_SLOTS ||
	    !is_power_of_2(slot_size))
		return -EINVAL;
	r->num_slots = roundup_pow_of_two(min_slots);
	r->mask = r->num_slots - 1;
	r->slot_size = slot_size;
	bytes = PAGE_ALIGN(SROCE_RING_SLOTS_OFFSET +
			   (size_t)r->num_slots * slot_size);
	r->ctrl = vmalloc_user(bytes);	/* zeroed */
	if (!r->ctrl)
		return -ENOMEM;
	r->bytes = bytes;
	r->slots = (u8 *)r->ctrl + SROCE_RING_SLOTS_OFFSET;
	r->mmap_entry = NULL;
	return 0;
}

/* Makes @r mappable by the process owning @uctx and describes it in @info. */
int sroce_ring_export(struct sroce_ring *r, struct ib_ucontext *uctx,
		      struct sroce_ring_info *info)
{
	struct sroce_mmap_entry *e;
	int err;

	e = kzalloc(sizeof(*e), GFP_KERNEL);
	if (!e)
		return -ENOMEM;
	e->buf = r->ctrl;
	err = rdma_user_mmap_entry_insert(uctx, &e->rdma, r->bytes);
	if (err) {
		kfree(e);
		return err;
	}
	r->mmap_entry = &e->rdma;
	info->mmap_offset = rdma_user_mmap_get_offset(&e->rdma);
	info->mmap_length = r->bytes;
	info->num_slots = r->num_slots;
	info->slot_size = r->slot_size;
	info->reserved = 0;
	return 0;
}

void sroce_ring_free(struct sroce_ring *r)
{
	if (r->mmap_entry)
		/* No new mapping after this; mmap_free frees the buffer. */
		rdma_user_mmap_entry_remove(r->mmap_entry);
	else
		vfree(r->ctrl);
	r->mmap_entry = NULL;
	r->ctrl = NULL;
	r->slots = NULL;
}

int sroce_mmap(struct ib_ucontext *uctx, struct vm_area_struct *vma)
{
	struct rdma_user_mmap_entry *rdma;
	struct sroce_mmap_entry *e;
	int err;

	rdma = rdma_user_mmap_entry_get(uctx, vma);
	if (!rdma)
		return -EINVAL;
	e = container_of(rdma, struct sroce_mmap_entry, rdma);
	err = remap_vmalloc_range(vma, e->buf, 0);
	rdma_user_mmap_entry_put(rdma);
	return err;
}

void sroce_mmap_free(struct rdma_user_mmap_entry *rdma)
{
	struct sroce_mmap_entry *e =
		container_of(rdma, struct sroce_mmap_entry, rdma);

	vfree(e->buf);
	kfree(e);
}

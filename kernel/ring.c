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
 *
 * An exported buffer is memory the process keeps resident in the kernel,
 * as much as a registered MR: it is charged to the process's pinned pages
 * against RLIMIT_MEMLOCK, as ib_umem charges an MR (and as ConnectX's CQ
 * and QP buffers, which are pinned user memory, are charged), from export
 * until the buffer is freed.  Without that, any local user could take
 * kernel memory without bound (a CQ's ring alone can be 256 MiB).
 */
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/vmalloc.h>
#include <rdma/uverbs_ioctl.h>

#include "sroce.h"

struct sroce_mmap_entry {
	struct rdma_user_mmap_entry rdma;
	void *buf;
	struct mm_struct *mm;	/* charged for the buffer's pages */
	unsigned long pages;
};

/* Charges @pages to @mm's pinned pages unless that passes RLIMIT_MEMLOCK. */
static int ring_charge(struct mm_struct *mm, unsigned long pages)
{
	unsigned long limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;

	if (atomic64_add_return(pages, &mm->pinned_vm) > limit &&
	    !capable(CAP_IPC_LOCK)) {
		atomic64_sub(pages, &mm->pinned_vm);
		return -ENOMEM;
	}
	return 0;
}

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

/* Gives back what ring_charge took for @e, and the reference on its mm.
 * Lock-free: the last reference may drop under that mm's mmap lock
 * (munmap).
 */
static void ring_uncharge(struct sroce_mmap_entry *e)
{
	atomic64_sub(e->pages, &e->mm->pinned_vm);
	mmdrop(e->mm);
}

/*
 * Makes @buf (from vmalloc_user, @bytes long, page-aligned) mappable by
 * the process owning @uctx.  The entry owns the buffer from then on:
 * rdma_user_mmap_entry_remove() lets go of it, and it is freed at the
 * entry's last reference.
 */
struct rdma_user_mmap_entry *sroce_shared_export(void *buf, size_t bytes,
						 struct ib_ucontext *uctx)
{
	struct sroce_mmap_entry *e;
	int err;

	if (!current->mm)
		return ERR_PTR(-EINVAL);	/* shared memory is a process's */
	e = kzalloc(sizeof(*e), GFP_KERNEL);
	if (!e)
		return ERR_PTR(-ENOMEM);
	e->buf = buf;
	e->pages = bytes >> PAGE_SHIFT;
	err = ring_charge(current->mm, e->pages);
	if (err) {
		kfree(e);
		return ERR_PTR(err);
	}
	e->mm = current->mm;
	mmgrab(e->mm);
	err = rdma_user_mmap_entry_insert(uctx, &e->rdma, bytes);
	if (err) {
		ring_uncharge(e);
		kfree(e);
		return ERR_PTR(err);
	}
	return &e->rdma;
}

/* Makes @r mappable by the process owning @uctx and describes it in @info. */
int sroce_ring_export(struct sroce_ring *r, struct ib_ucontext *uctx,
		      struct sroce_ring_info *info)
{
	struct rdma_user_mmap_entry *entry;

	entry = sroce_shared_export(r->ctrl, r->bytes, uctx);
	if (IS_ERR(entry))
		return PTR_ERR(entry);
	r->mmap_entry = entry;
	info->mmap_offset = rdma_user_mmap_get_offset(entry);
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
	ring_uncharge(e);
	kfree(e);
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * On-demand paging: user MRs registered with IB_ACCESS_ON_DEMAND pin
 * nothing.  Which of their pages are resident is ours to track, the way a
 * GPU driver mirrors a process (Documentation/mm/hmm.rst):
 *
 *  - hmm_range_fault() faults pages in and tells us their struct page;
 *    we keep it in pages[] (no reference: the page is ours only until the
 *    MMU notifier says otherwise).
 *  - The MMU notifier (munmap, madvise(DONTNEED), migration, swap-out,
 *    fork's copy-on-write protection, exit) clears those entries under
 *    odp->lock before the kernel frees or changes the page, so a copy that
 *    holds odp->lock and finds an entry reads and writes a live page.
 *  - The data path runs in softirq and cannot fault.  A copy that finds a
 *    page missing asks for it (one work item per MR takes the union of
 *    what was asked) and reports -EAGAIN; its caller makes the peer or
 *    itself come back: an RNR NAK on the responder, a short wait on the
 *    requester (req.c, comp.c, resp.c).  A fault the kernel refuses (the
 *    range is not mapped, or not writable) is reported to the next copy
 *    that misses in that range, as -EFAULT: a protection error.
 *
 * No implicit ODP (a key for the whole address space): explicit ranges only,
 * as rxe.
 */
#include <linux/hmm.h>
#include <linux/highmem.h>
#include <linux/mmu_notifier.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/workqueue.h>

#include "sroce.h"

/*
 * Pages faulted per hmm_range_fault() call, and published together: an
 * invalidation of any of them while the call runs costs the chunk again,
 * so a small one still gets through under frequent invalidation, and the
 * data path may use the first pages while the later ones fault.
 */
#define ODP_FAULT_CHUNK		16
/* How long one chunk may be retried while invalidations race it (ms). */
#define ODP_FAULT_TIMEOUT_MS	1000
/*
 * A miss faults this many pages from the missing one on (within the MR):
 * the packets behind it will want them, and every miss costs the sender an
 * RNR wait or a retry.  256 KiB: a 64 KiB message at 4 KiB per page, four
 * times over.
 */
#define ODP_FAULT_AHEAD		64

struct sroce_odp {
	struct mmu_interval_notifier notifier;
	struct sroce_dev *sdev;
	spinlock_t lock;		/* pages[] and the requests below */
	unsigned long start;		/* user address of pages[0] */
	u32 npages;
	bool writable;			/* fault for write: the MR may be written */
	/* The fault asked for and not yet started: pages [want_first, want_last]. */
	bool want;
	u32 want_first, want_last;
	/* The last fault that failed, for the next copy that misses there. */
	bool bad;
	u32 bad_first, bad_last;
	struct work_struct fault_work;
	atomic_t advisers;		/* synchronous prefetches running */
	struct page *pages[];		/* resident pages, NULL if not */
};

static bool odp_invalidate(struct mmu_interval_notifier *mni,
			   const struct mmu_notifier_range *range,
			   unsigned long cur_seq)
{
	struct sroce_odp *odp = container_of(mni, struct sroce_odp, notifier);
	unsigned long end = odp->start + ((unsigned long)odp->npages << PAGE_SHIFT);
	unsigned long from = max(range->start, odp->start);
	unsigned long to = min(range->end, end);
	u32 i;

	/* Only a spinlock: this may be called where sleeping is not allowed. */
	spin_lock_bh(&odp->lock);
	mmu_interval_set_seq(mni, cur_seq);
	if (from < to) {
		for (i = (from - odp->start) >> PAGE_SHIFT;
		     i < (PAGE_ALIGN(to) - odp->start) >> PAGE_SHIFT; i++)
			odp->pages[i] = NULL;
	}
	spin_unlock_bh(&odp->lock);
	sroce_count(odp->sdev, SROCE_CNT_ODP_INVALIDATIONS, 1);
	return true;
}

static const struct mmu_interval_notifier_ops odp_notifier_ops = {
	.invalidate = odp_invalidate,
};

/*
 * Makes pages [first, last] resident: faults them in if @fault, else takes
 * only those already present (prefetch without faulting).  Process
 * context.  0; -EFAULT (not mapped, not writable, process gone), which
 * the next copy that misses there reports; or -EBUSY when invalidations
 * kept racing a chunk for ODP_FAULT_TIMEOUT_MS: not the memory's fault,
 * so nothing is reported and the next miss asks again.
 */
/* Keeps the pages of @pfns that are there for pages [first, first+n). */
static void odp_store_pages_locked(struct sroce_odp *odp, u32 first, u32 n,
				   const unsigned long *pfns)
	__must_hold(&odp->lock)
{
	u32 j;

	for (j = 0; j < n; j++) {
		unsigned long pfn = pfns[j];

		/* Without faulting, a page may be absent or read-only. */
		if (!(pfn & HMM_PFN_VALID) ||
		    (odp->writable && !(pfn & HMM_PFN_WRITE)))
			continue;
		odp->pages[first + j] = hmm_pfn_to_page(pfn);
	}
}

/*
 * odp_fault() for pages [first, first+n), n <= ODP_FAULT_CHUNK: 0, the
 * error of hmm_range_fault(), or -EBUSY when invalidations kept racing
 * it for ODP_FAULT_TIMEOUT_MS.
 */
static int odp_fault_chunk(struct sroce_odp *odp, struct mm_struct *mm,
			   u32 first, u32 n, bool fault)
{
	unsigned long timeout = jiffies + msecs_to_jiffies(ODP_FAULT_TIMEOUT_MS);
	unsigned long pfns[ODP_FAULT_CHUNK];
	struct hmm_range range = {
		.notifier = &odp->notifier,
		.start = odp->start + ((unsigned long)first << PAGE_SHIFT),
		.end = odp->start + ((unsigned long)(first + n) << PAGE_SHIFT),
		.hmm_pfns = pfns,
		.default_flags = !fault ? 0 : HMM_PFN_REQ_FAULT |
				 (odp->writable ? HMM_PFN_REQ_WRITE : 0),
	};
	bool raced;
	int err;

	for (;;) {
		range.notifier_seq = mmu_interval_read_begin(&odp->notifier);
		mmap_read_lock(mm);
		err = hmm_range_fault(&range);
		mmap_read_unlock(mm);
		if (!err) {
			spin_lock_bh(&odp->lock);
			raced = mmu_interval_read_retry(&odp->notifier,
							range.notifier_seq);
			if (!raced)
				odp_store_pages_locked(odp, first, n, pfns);
			spin_unlock_bh(&odp->lock);
			if (!raced)
				return 0;
			err = -EBUSY;
		}
		/* -EBUSY: an invalidation raced us; try again a while. */
		if (err != -EBUSY || time_after(jiffies, timeout))
			return err;
	}
}

static int odp_fault(struct sroce_odp *odp, u32 first, u32 last, bool fault)
{
	struct mm_struct *mm = odp->notifier.mm;
	int err = 0;
	u32 i, n;

	if (!mmget_not_zero(mm))
		return -EFAULT;
	for (i = first; i <= last; i += n) {
		n = min_t(u32, last - i + 1, ODP_FAULT_CHUNK);
		err = odp_fault_chunk(odp, mm, i, n, fault);
		if (err)
			break;
		cond_resched();
	}
	mmput(mm);
	if (err == -EBUSY)
		return err;
	if (err) {
		spin_lock_bh(&odp->lock);
		odp->bad = true;
		odp->bad_first = i;
		odp->bad_last = last;
		spin_unlock_bh(&odp->lock);
		sroce_count(odp->sdev, SROCE_CNT_ODP_FAULT_ERRORS, 1);
		return -EFAULT;
	}
	return 0;
}

static void odp_fault_work(struct work_struct *work)
{
	struct sroce_odp *odp = container_of(work, struct sroce_odp, fault_work);
	u32 first, last;

	spin_lock_bh(&odp->lock);
	first = odp->want_first;
	last = odp->want_last;
	odp->want = false;
	spin_unlock_bh(&odp->lock);
	odp_fault(odp, first, last, true);
}

/* Asks for pages [first, last]; caller holds odp->lock. */
static void odp_request_locked(struct sroce_odp *odp, u32 first, u32 last)
{
	if (odp->want) {
		odp->want_first = min(odp->want_first, first);
		odp->want_last = max(odp->want_last, last);
	} else {
		odp->want = true;
		odp->want_first = first;
		odp->want_last = last;
	}
	queue_work(system_unbound_wq, &odp->fault_work);
}

/*
 * Are pages [first, last] all resident?  0 if so.  If not: -EFAULT when a
 * fault there already failed (reported once; the next miss tries again),
 * else -EAGAIN with the missing pages asked for.  Caller holds odp->lock.
 */
static int odp_resident_locked(struct sroce_odp *odp, u32 first, u32 last)
{
	u32 i;

	for (i = first; i <= last; i++)
		if (!odp->pages[i])
			break;
	if (i > last)
		return 0;
	if (odp->bad && i <= odp->bad_last && last >= odp->bad_first) {
		odp->bad = false;
		return -EFAULT;
	}
	sroce_count(odp->sdev, SROCE_CNT_ODP_FAULTS, 1);
	odp_request_locked(odp, i, min_t(u32, odp->npages - 1,
					 max_t(u32, last, i + ODP_FAULT_AHEAD - 1)));
	return -EAGAIN;
}

/* The pages [*first, *last] that bytes [off, off+len) of @mr lie in. */
static bool odp_pages_of(const struct sroce_odp *odp, u64 off, u64 len,
			 u32 *first, u32 *last)
{
	u64 end;

	if (!len || check_add_overflow(off, len - 1, &end) ||
	    (end >> PAGE_SHIFT) >= odp->npages)
		return false;
	*first = off >> PAGE_SHIFT;
	*last = end >> PAGE_SHIFT;
	return true;
}

/*
 * 0 if bytes [off, off+len) of @odp are resident, else the error of
 * odp_resident_locked() (-EFAULT also for a range outside the MR).
 */
static int odp_range_resident_locked(struct sroce_odp *odp, u64 off, u64 len)
	__must_hold(&odp->lock)
{
	u32 first, last;

	if (!odp_pages_of(odp, off, len, &first, &last))
		return -EFAULT;
	return odp_resident_locked(odp, first, last);
}

/* Copies between @buf and resident bytes [off, off+len) of @odp. */
static void odp_copy_locked(struct sroce_odp *odp, u64 off, void *buf, u32 len,
			    enum sroce_copy_dir dir)
	__must_hold(&odp->lock)
{
	while (len) {
		struct page *page = odp->pages[off >> PAGE_SHIFT];
		u32 in = off & ~PAGE_MASK;
		u32 n = min_t(u32, len, PAGE_SIZE - in);
		void *va = kmap_local_page(page);

		if (dir == SROCE_TO_MR) {
			memcpy(va + in, buf, n);
			flush_dcache_page(page);
		} else {
			memcpy(buf, va + in, n);
		}
		kunmap_local(va);
		buf += n;
		len -= n;
		off += n;
	}
}

/*
 * Bytes [off, off+len) of @mr resident, and copied to or from @buf unless
 * it is NULL: the error of odp_range_resident_locked(), or 0.
 */
static int odp_access(struct sroce_mr *mr, u64 off, u64 len, void *buf,
		      enum sroce_copy_dir dir)
{
	struct sroce_odp *odp = mr->odp;
	int err;

	if (!len)
		return 0;
	spin_lock_bh(&odp->lock);
	err = odp_range_resident_locked(odp, off, len);
	if (!err && buf)
		odp_copy_locked(odp, off, buf, len, dir);
	spin_unlock_bh(&odp->lock);
	return err;
}

int sroce_odp_resident(struct sroce_mr *mr, u64 off, u64 len)
{
	return odp_access(mr, off, len, NULL, SROCE_FROM_MR);
}

int sroce_odp_copy(struct sroce_mr *mr, u64 off, void *buf, u32 len,
		   enum sroce_copy_dir dir)
{
	return odp_access(mr, off, len, buf, dir);
}

/* Under odp->lock, so that an invalidation cannot take the page meanwhile. */
int sroce_odp_atomic(struct sroce_mr *mr, u64 off, struct sroce_atomic *a)
{
	struct sroce_odp *odp = mr->odp;
	void *va;
	int err;

	spin_lock_bh(&odp->lock);
	err = odp_range_resident_locked(odp, off, sizeof(u64));
	if (!err) {
		va = kmap_local_page(odp->pages[off >> PAGE_SHIFT]);
		sroce_atomic_apply(va + (off & ~PAGE_MASK), a);
		kunmap_local(va);
	}
	spin_unlock_bh(&odp->lock);
	return err;
}

int sroce_odp_init(struct sroce_mr *mr, struct sroce_dev *sdev, u64 start,
		   u64 length, int access)
{
	unsigned long first = start & PAGE_MASK;
	struct sroce_odp *odp;
	u64 end, npages;
	int err;

	/* A zero or wrapping range, or one past the user address space
	 * (implicit ODP's whole-space key among them): not supported.
	 */
	if (!length || check_add_overflow(start, length, &end) ||
	    end > TASK_SIZE)
		return -EINVAL;
	npages = (PAGE_ALIGN(end) - first) >> PAGE_SHIFT;
	if (npages > U32_MAX)
		return -EINVAL;
	odp = kvzalloc(struct_size(odp, pages, npages), GFP_KERNEL | __GFP_NOWARN);
	if (!odp)
		return -ENOMEM;
	odp->sdev = sdev;
	spin_lock_init(&odp->lock);
	odp->start = first;
	odp->npages = npages;
	odp->writable = access & (IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE |
				  IB_ACCESS_REMOTE_ATOMIC);
	INIT_WORK(&odp->fault_work, odp_fault_work);
	atomic_set(&odp->advisers, 0);
	err = mmu_interval_notifier_insert(&odp->notifier, current->mm, first,
					   npages << PAGE_SHIFT,
					   &odp_notifier_ops);
	if (err) {
		kvfree(odp);
		return err;
	}
	mr->odp = odp;
	mr->page_offset = start & ~PAGE_MASK;
	return 0;
}

/* After the MR is unpublished and a grace period passed: no copy runs. */
void sroce_odp_release(struct sroce_mr *mr)
{
	struct sroce_odp *odp = mr->odp;

	cancel_work_sync(&odp->fault_work);
	wait_var_event(&odp->advisers, !atomic_read(&odp->advisers));
	mmu_interval_notifier_remove(&odp->notifier);
	kvfree(odp);
	mr->odp = NULL;
}

/*
 * ibv_advise_mr(): prefetch the SGEs' ranges of ODP MRs.  With
 * IB_UVERBS_ADVISE_MR_FLAG_FLUSH we return once they are resident (or the
 * fault failed: -EFAULT); without, the fault is queued.  PREFETCH_NO_FAULT
 * takes only what is already mapped.  Every key must be an ODP MR of @pd
 * with the rights the advice implies, as on ConnectX (-EINVAL, -EACCES).
 */
int sroce_advise_mr(struct ib_pd *pd, enum ib_uverbs_advise_mr_advice advice,
		    u32 flags, struct ib_sge *sg_list, u32 num_sge,
		    struct uverbs_attr_bundle *attrs)
{
	struct sroce_dev *sdev = to_sdev(pd->device);
	bool sync = flags & IB_UVERBS_ADVISE_MR_FLAG_FLUSH;
	bool fault = advice != IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT;
	int need = advice == IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_WRITE ?
		   IB_ACCESS_LOCAL_WRITE : 0;
	u32 i;

	if (advice > IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT ||
	    flags & ~IB_UVERBS_ADVISE_MR_FLAG_FLUSH)
		return -EOPNOTSUPP;

	for (i = 0; i < num_sge; i++) {
		struct sroce_odp *odp = NULL;
		u32 first = 0, last = 0;
		struct sroce_mr *mr;
		int err = 0;

		rcu_read_lock();
		mr = sroce_mr_lookup(sdev, sg_list[i].lkey);
		if (!mr || mr->kind != SROCE_MR_ODP) {
			err = -EINVAL;
		} else {
			err = sroce_mr_check(mr, pd, sg_list[i].addr,
					     sg_list[i].length, need);
			if (!err && !odp_pages_of(mr->odp,
						  sroce_mr_offset(mr, sg_list[i].addr),
						  sg_list[i].length, &first, &last))
				err = sg_list[i].length ? -EFAULT : 0;
			else if (!err)
				odp = mr->odp;
		}
		if (odp && !sync) {
			spin_lock_bh(&odp->lock);
			if (fault)
				odp_request_locked(odp, first, last);
			spin_unlock_bh(&odp->lock);
			odp = NULL;
		} else if (odp) {
			/* Keeps the MR's ODP state alive once RCU is left:
			 * deregistration waits for us (sroce_odp_release).
			 */
			atomic_inc(&odp->advisers);
		}
		rcu_read_unlock();
		if (err)
			return err;
		if (!odp)
			continue;
		err = odp_fault(odp, first, last, fault);
		if (atomic_dec_and_test(&odp->advisers))
			wake_up_var(&odp->advisers);
		if (err)
			return err;
	}
	return 0;
}

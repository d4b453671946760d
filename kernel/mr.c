// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Memory regions: registration, the key table, and the copies between
 * registered memory and packets.
 *
 * Lifetime.  Every MR is published in sdev->mrs only once it is complete
 * (its index is reserved first, the entry stored last), and readers in the
 * data path hold rcu_read_lock() across lookup, check and copy.  So
 * deregistration unpublishes the MR and waits out a grace period before the
 * memory behind it goes away:
 *  - USER MRs synchronously (synchronize_rcu, then unpin), so that the
 *    pages are unpinned and RLIMIT_MEMLOCK is credited back when
 *    ibv_dereg_mr() returns, as with hardware;
 *  - DMA and FAST MRs own no pages, only their own allocation, so they go
 *    through kfree_rcu() and deregistration never blocks.
 *
 * Keys.  mr->key is the one key the MR answers to (lkey == rkey): the
 * ib_mr's lkey/rkey belong to the consumer, which changes them with
 * ib_update_fast_reg_key() before a REG_MR executes, possibly while a
 * LOCAL_INV of the previous key is still queued.
 */
#include <linux/highmem.h>
#include <linux/scatterlist.h>
#include <rdma/ib_umem.h>

#include "proto/access.h"
#include "sroce.h"

#define SROCE_MR_ACCESS (IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ | \
			 IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC | \
			 IB_ACCESS_MW_BIND | SROCE_ACCESS_FLUSH_GLOBAL)

int sroce_key_reserve(struct sroce_dev *sdev, u32 *index)
{
	/*
	 * A random index (the first free one from a random point), so that
	 * the key of the next registration cannot be guessed from this one's:
	 * about 18 random index bits and the 8-bit variant.  MRs and windows
	 * share the table, each within its own limit (num_mr, num_mw).
	 */
	u32 start = get_random_u32_inclusive(1, SROCE_MAX_MR + SROCE_MAX_MW);
	int err = xa_alloc_cyclic(&sdev->mrs, index, NULL,
				  XA_LIMIT(1, SROCE_MAX_MR + SROCE_MAX_MW),
				  &start, GFP_KERNEL);

	if (err < 0)
		return err == -EBUSY ? -ENOMEM : err;
	return 0;
}

/*
 * Reserves a table index for @mr, sets its key and publishes it.  @mr must
 * be complete: from xa_store() on, receive-path readers may use it.
 */
static int sroce_mr_publish(struct sroce_dev *sdev, struct sroce_mr *mr,
			    struct ib_pd *pd)
{
	u32 index;
	void *old;
	int err;

	if (atomic_inc_return(&sdev->num_mr) > SROCE_MAX_MR) {
		atomic_dec(&sdev->num_mr);
		return -ENOMEM;
	}
	err = sroce_key_reserve(sdev, &index);
	if (err) {
		atomic_dec(&sdev->num_mr);
		return err;
	}

	mr->key = sroce_new_key(index);
	mr->ib.lkey = mr->key;
	mr->ib.rkey = mr->key;
	/* ib_core sets the same after we return; checks need it before. */
	mr->ib.pd = pd;

	/* The slot is reserved, so this stores without allocating. */
	old = xa_store(&sdev->mrs, index, mr, GFP_KERNEL);
	if (xa_is_err(old)) {
		xa_erase(&sdev->mrs, index);
		atomic_dec(&sdev->num_mr);
		return xa_err(old);
	}
	return 0;
}

struct ib_mr *sroce_get_dma_mr(struct ib_pd *pd, int access)
{
	struct sroce_mr *mr;
	int err;

	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	mr->kind = SROCE_MR_DMA;
	mr->access = access & SROCE_MR_ACCESS;
	mr->iova = 0;
	mr->length = U64_MAX;		/* the whole kernel address space */
	mr->valid = true;
	mr->ib.iova = 0;
	mr->ib.length = U64_MAX;
	mr->ib.page_size = PAGE_SIZE;

	err = sroce_mr_publish(to_sdev(pd->device), mr, pd);
	if (err) {
		kfree(mr);
		return ERR_PTR(err);
	}
	return &mr->ib;
}

/* One struct page per PAGE_SIZE of the pinned range, in order. */
static int sroce_mr_fill_pages(struct sroce_mr *mr)
{
	struct sg_page_iter it;
	size_t npages = ib_umem_num_pages(mr->umem);
	u32 n = 0;

	/* ib_umem_get_va() refuses 0 and more than UINT_MAX pages. */
	if (WARN_ON_ONCE(!npages || npages > U32_MAX))
		return -EINVAL;
	/* __GFP_NOWARN: a huge MR must fail with -ENOMEM, not warn. */
	mr->pages = kvcalloc(npages, sizeof(*mr->pages),
			     GFP_KERNEL | __GFP_NOWARN);
	if (!mr->pages)
		return -ENOMEM;

	for_each_sgtable_page(&mr->umem->sgt_append.sgt, &it, 0) {
		if (n == npages)
			break;
		mr->pages[n++] = sg_page_iter_page(&it);
	}
	if (WARN_ON_ONCE(n != npages))
		return -EFAULT;
	mr->npages = n;
	return 0;
}

/* A USER or ODP MR's hold on its memory, let go once nothing reads it. */
static void sroce_mr_release_pages(struct sroce_mr *mr)
{
	if (mr->kind == SROCE_MR_ODP) {
		sroce_odp_release(mr);
	} else {
		kvfree(mr->pages);
		ib_umem_release(mr->umem);
	}
}

struct ib_mr *sroce_reg_user_mr(struct ib_pd *pd, u64 start, u64 length,
				u64 iova, int access, struct ib_udata *udata)
{
	struct sroce_mr *mr;
	int err;

	/*
	 * ib_uverbs has checked the access flags (ib_check_mr_access) and
	 * that start and iova share their offset in a page; ib_umem_get_va()
	 * refuses a zero or wrapping length with -EINVAL.  MRs may be as
	 * large as the process may pin: max_mr_size is U64_MAX.
	 */
	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);

	if (access & IB_ACCESS_ON_DEMAND) {
		err = sroce_odp_init(mr, to_sdev(pd->device), start, length,
				     access);
		if (err)
			goto err_free;
		mr->kind = SROCE_MR_ODP;
		goto describe;
	}
	mr->umem = ib_umem_get_va(pd->device, start, length, access);
	if (IS_ERR(mr->umem)) {
		err = PTR_ERR(mr->umem);
		goto err_free;
	}
	err = sroce_mr_fill_pages(mr);
	if (err)
		goto err_release;

	mr->kind = SROCE_MR_USER;
	mr->page_offset = ib_umem_offset(mr->umem);
describe:
	mr->access = access & SROCE_MR_ACCESS;
	mr->iova = iova;
	mr->length = length;
	mr->valid = true;
	mr->ib.iova = iova;
	mr->ib.length = length;
	mr->ib.page_size = PAGE_SIZE;

	err = sroce_mr_publish(to_sdev(pd->device), mr, pd);
	if (err)
		goto err_release;
	return &mr->ib;

err_release:
	sroce_mr_release_pages(mr);
err_free:
	kfree(mr);
	return ERR_PTR(err);
}

struct ib_mr *sroce_alloc_mr(struct ib_pd *pd, enum ib_mr_type type,
			     u32 max_num_sg)
{
	struct sroce_mr *mr;
	int err;

	if (type != IB_MR_TYPE_MEM_REG)
		return ERR_PTR(-EINVAL);
	if (!max_num_sg || max_num_sg > SROCE_MAX_FRMR_PAGES)
		return ERR_PTR(-EINVAL);

	/*
	 * The page list lives in the same allocation, so that kfree_rcu()
	 * frees both after deregistration (at most 4 KiB more).
	 */
	mr = kzalloc(sizeof(*mr) + (size_t)max_num_sg * sizeof(u64),
		     GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	mr->kind = SROCE_MR_FAST;
	mr->fast_pages = (u64 *)(mr + 1);
	mr->fast_max = max_num_sg;
	mr->fast_page_size = PAGE_SIZE;
	mr->valid = false;		/* until a REG_MR work request */

	err = sroce_mr_publish(to_sdev(pd->device), mr, pd);
	if (err) {
		kfree(mr);
		return ERR_PTR(err);
	}
	return &mr->ib;
}

static int sroce_set_page(struct ib_mr *ibmr, u64 addr)
{
	struct sroce_mr *mr = to_smr(ibmr);

	if (mr->fast_npages >= mr->fast_max)
		return -ENOMEM;
	WRITE_ONCE(mr->fast_pages[mr->fast_npages], addr);
	WRITE_ONCE(mr->fast_npages, mr->fast_npages + 1);
	return 0;
}

/*
 * Builds the page list of a FAST MR; REG_MR later makes it accessible.
 *
 * Only PAGE_SIZE pages (page_size_cap): with one page size for the life of
 * the MR, every entry a racing reader can pick up names a whole page that
 * the consumer handed in, whatever list it belongs to (see
 * sroce_mr_copy()).  Like rxe, the list is not double-buffered: a consumer
 * that maps while the previous registration is still valid (iSER chains
 * LOCAL_INV and REG_MR) changes what that registration points at; by then
 * its peer has finished with it.
 */
int sroce_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		    unsigned int *sg_offset)
{
	struct sroce_mr *mr = to_smr(ibmr);
	int n;

	if (mr->kind != SROCE_MR_FAST || ibmr->page_size != PAGE_SIZE)
		return -EINVAL;

	WRITE_ONCE(mr->fast_npages, 0);
	n = ib_sg_to_pages(ibmr, sg, sg_nents, sg_offset, sroce_set_page);
	/*
	 * ib_sg_to_pages() set ib.iova to the first byte; ib_map_mr_sg_zbva()
	 * rebases it to 0 afterwards, so remember where it falls in page 0.
	 */
	WRITE_ONCE(mr->page_offset, ibmr->iova & ~PAGE_MASK);
	return n;
}

int sroce_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct sroce_mr *mr = to_smr(ibmr);
	struct sroce_dev *sdev = to_sdev(ibmr->device);

	/*
	 * IBA 10.6.7.2.6: not while windows are bound to it.  From here on
	 * no bind can take it (sroce_mr_get_bind() fails).  ib_core's
	 * cleanup of a dying process retries after its windows are gone.
	 */
	if (atomic_cmpxchg(&mr->mw_binds, 0, -1) != 0)
		return -EBUSY;
	xa_erase(&sdev->mrs, mr->key >> 8);
	/* Before the grace period below: see struct sroce_mr_cache. */
	atomic64_inc(&sdev->mrs_gen);
	atomic_dec(&sdev->num_mr);

	if (mr->kind != SROCE_MR_USER && mr->kind != SROCE_MR_ODP) {
		kfree_rcu(mr, rcu);
		return 0;
	}
	/* Readers that found it before the erase finish their copy. */
	synchronize_rcu();
	sroce_mr_release_pages(mr);
	kfree(mr);
	return 0;
}

struct sroce_mr *sroce_mr_lookup(struct sroce_dev *sdev, u32 key)
{
	struct sroce_mr *mr = sroce_key_entry_mr(xa_load(&sdev->mrs, key >> 8));

	/* The variant must match too: a stale key misses. */
	if (!mr || READ_ONCE(mr->key) != key)
		return NULL;
	return mr;
}

struct sroce_mr *sroce_mr_lookup_cached(struct sroce_dev *sdev,
					struct sroce_mr_cache *cache, u32 key)
{
	s64 gen;

	if (!cache)
		return sroce_mr_lookup(sdev, key);
	gen = atomic64_read(&sdev->mrs_gen);
	if (cache->mr && cache->key == key && cache->gen == gen &&
	    READ_ONCE(cache->mr->key) == key)
		return cache->mr;
	cache->mr = sroce_mr_lookup(sdev, key);
	cache->key = key;
	cache->gen = gen;
	return cache->mr;
}

/* The kernel's rights are proto/access.h's, bit for bit. */
static_assert(ROCE_ACCESS_LOCAL_WRITE == IB_ACCESS_LOCAL_WRITE &&
	      ROCE_ACCESS_REMOTE_WRITE == IB_ACCESS_REMOTE_WRITE &&
	      ROCE_ACCESS_REMOTE_READ == IB_ACCESS_REMOTE_READ &&
	      ROCE_ACCESS_REMOTE_ATOMIC == IB_ACCESS_REMOTE_ATOMIC &&
	      ROCE_ACCESS_FLUSH_GLOBAL == SROCE_ACCESS_FLUSH_GLOBAL &&
	      ROCE_ACCESS_FLUSH_PERSISTENT == SROCE_ACCESS_FLUSH_PERSISTENT);

void sroce_mr_desc(struct sroce_mr *mr, struct roce_mr_desc *d)
{
	d->pd = mr->ib.pd;
	/* Orders the FAST fields below after the REG_MR that set them. */
	d->valid = smp_load_acquire(&mr->valid);
	d->access = READ_ONCE(mr->access);
	d->iova = READ_ONCE(mr->iova);
	d->length = READ_ONCE(mr->length);
}

int sroce_mr_check(struct sroce_mr *mr, struct ib_pd *pd, u64 iova, u64 len,
		   int access)
{
	struct roce_mr_desc d;

	sroce_mr_desc(mr, &d);
	switch (roce_access_check(&d, pd, iova, len, access)) {
	case ROCE_ACCESS_OK:
		return 0;
	case ROCE_ACCESS_OUT_OF_RANGE:
		return -ERANGE;
	default:
		return -EACCES;
	}
}

static void sroce_copy_piece(void *mem, void *buf, u32 n,
			     enum sroce_copy_dir dir)
{
	if (dir == SROCE_TO_MR)
		memcpy(mem, buf, n);
	else
		memcpy(buf, mem, n);
}

/*
 * Copies between @buf and the range at @iova, which sroce_mr_check()
 * accepted.  USER and FAST MRs are copied page by page, since consecutive
 * pages need not be adjacent in memory.  A FAST MR can be invalidated and
 * remapped by its consumer while a reader that checked the old
 * registration is still copying (the consumer's own race); the page index
 * is therefore bounded by the current list, so such a copy lands in some
 * page the consumer registered, never outside.
 */
int sroce_mr_copy(struct sroce_mr *mr, u64 iova, void *buf, u32 len,
		  enum sroce_copy_dir dir)
{
	u64 off;

	if (mr->kind == SROCE_MR_DMA) {
		sroce_copy_piece((void *)(uintptr_t)iova, buf, len, dir);
		return 0;
	}

	off = sroce_mr_offset(mr, iova);
	if (mr->kind == SROCE_MR_ODP)
		return sroce_odp_copy(mr, off, buf, len, dir);
	while (len) {
		u64 index = off >> PAGE_SHIFT;
		u32 in = off & ~PAGE_MASK;
		u32 n = min_t(u32, len, PAGE_SIZE - in);

		if (mr->kind == SROCE_MR_USER) {
			struct page *page;
			void *va;

			/* Fixed at registration: a miss is a caller bug. */
			if (WARN_ON_ONCE(index >= mr->npages))
				return -EFAULT;
			page = mr->pages[index];
			va = kmap_local_page(page);
			sroce_copy_piece(va + in, buf, n, dir);
			kunmap_local(va);
			if (dir == SROCE_TO_MR)
				flush_dcache_page(page);
		} else {
			/* A racing remap by the consumer: see above. */
			if (index >= READ_ONCE(mr->fast_npages))
				return 0;
			sroce_copy_piece((void *)(uintptr_t)
					 (READ_ONCE(mr->fast_pages[index]) + in),
					 buf, n, dir);
		}
		buf += n;
		len -= n;
		off += n;
	}
	return 0;
}

int sroce_mr_resident(struct sroce_mr *mr, u64 iova, u64 len)
{
	if (mr->kind != SROCE_MR_ODP)
		return 0;
	return sroce_odp_resident(mr, sroce_mr_offset(mr, iova), len);
}

/* IB atomics are atomic with respect to every other atomic of the device. */
static DEFINE_SPINLOCK(sroce_atomic_lock);

void sroce_atomic_apply(u64 *p, struct sroce_atomic *a)
{
	spin_lock(&sroce_atomic_lock);
	switch (a->op) {
	case SROCE_ATOMIC_CMP_SWAP:
		a->orig = READ_ONCE(*p);
		if (a->orig == a->compare)
			WRITE_ONCE(*p, a->value);
		break;
	case SROCE_ATOMIC_FETCH_ADD:
		a->orig = READ_ONCE(*p);
		WRITE_ONCE(*p, a->orig + a->value);
		break;
	case SROCE_ATOMIC_WRITE:
		/* Under the lock, so a compare-and-swap cannot undo it; a
		 * release store, so whoever sees it sees the writes before it.
		 */
		smp_store_release(p, a->value);
		break;
	}
	spin_unlock(&sroce_atomic_lock);
}

/*
 * -EFAULT if the 8 bytes are not mapped (only after a racing FAST
 * re-registration), -EAGAIN while an ODP page is faulted in.
 */
int sroce_mr_atomic(struct sroce_mr *mr, u64 iova, struct sroce_atomic *a)
{
	u64 off, index;
	u32 in;
	void *va;

	if (mr->kind == SROCE_MR_DMA) {
		sroce_atomic_apply((u64 *)(uintptr_t)iova, a);
		return 0;
	}
	off = sroce_mr_offset(mr, iova);
	index = off >> PAGE_SHIFT;
	in = off & ~PAGE_MASK;
	/*
	 * iova and the memory share their page offset (ib_uverbs checks it;
	 * FAST lists start where iova does), so aligned never crosses a page:
	 * but do not let the 8 bytes cross one if that ever breaks.
	 */
	if (in > PAGE_SIZE - sizeof(u64))
		return -EFAULT;

	if (mr->kind == SROCE_MR_ODP)
		return sroce_odp_atomic(mr, off, a);
	if (mr->kind == SROCE_MR_USER) {
		if (WARN_ON_ONCE(index >= mr->npages))
			return -EFAULT;
		va = kmap_local_page(mr->pages[index]);
		sroce_atomic_apply(va + in, a);
		kunmap_local(va);
		return 0;
	}
	if (index >= READ_ONCE(mr->fast_npages))
		return -EFAULT;
	sroce_atomic_apply((u64 *)(uintptr_t)(READ_ONCE(mr->fast_pages[index]) + in), a);
	return 0;
}

int sroce_sgl_walk(const struct sroce_sgl *sgl, u64 offset, u32 len,
		   int access, sroce_sgl_piece_fn piece, void *ctx)
{
	const struct sroce_sge *sge = sgl->sge;
	u32 i;

	for (i = 0; i < sgl->num_sge && len; i++) {
		u32 sge_len = sge[i].length;
		struct sroce_mr *mr;
		u64 addr;
		u32 n;
		int err;

		/* Zero-length SGEs name no memory and need no valid lkey. */
		if (offset >= sge_len) {
			offset -= sge_len;
			continue;
		}
		addr = sge[i].addr + offset;
		n = min_t(u64, sge_len - offset, len);
		offset = 0;

		rcu_read_lock();
		mr = sroce_mr_lookup_cached(sgl->sdev, sgl->cache, sge[i].lkey);
		err = mr ? sroce_mr_check(mr, sgl->pd, addr, n, access) : -EACCES;
		if (!err)
			err = piece(mr, addr, n, ctx);
		rcu_read_unlock();
		if (err)
			return err;
		len -= n;
	}
	return len ? -EINVAL : 0;	/* the list is shorter than the data */
}

struct sgl_copy_ctx {
	u8 *buf;
	enum sroce_copy_dir dir;
};

static int sgl_copy_piece(struct sroce_mr *mr, u64 addr, u32 n, void *ctx)
{
	struct sgl_copy_ctx *c = ctx;
	int err = sroce_mr_copy(mr, addr, c->buf, n, c->dir);

	c->buf += n;
	return err;
}

int sroce_sgl_copy(const struct sroce_sgl *sgl, u64 offset, void *buf,
		   u32 len, int access, enum sroce_copy_dir dir)
{
	struct sgl_copy_ctx c = { .buf = buf, .dir = dir };

	return sroce_sgl_walk(sgl, offset, len, access, sgl_copy_piece, &c);
}

struct skb_to_sgl_ctx {
	const struct sk_buff *skb;
	u32 skb_off;
};

/* One SGE's piece of the packet: its lkey resolved once for all the skb's pieces. */
static int sgl_piece_from_skb(struct sroce_mr *mr, u64 addr, u32 n, void *ctx)
{
	struct skb_to_sgl_ctx *c = ctx;
	int err = sroce_mr_copy_skb(mr, addr, c->skb, c->skb_off, n);

	c->skb_off += n;
	return err;
}

int sroce_sgl_copy_skb(const struct sroce_sgl *sgl, u64 offset,
		       const struct sk_buff *skb, u32 skb_off, u32 len,
		       int access)
{
	struct skb_to_sgl_ctx c = { skb, skb_off };

	/* The common case without the walk of the skb's pieces. */
	if (skb_off + len <= skb_headlen(skb))
		return sroce_sgl_copy(sgl, offset, skb->data + skb_off, len,
				      access, SROCE_TO_MR);
	return sroce_sgl_walk(sgl, offset, len, access, sgl_piece_from_skb, &c);
}

struct skb_to_mr_ctx {
	struct sroce_mr *mr;
	u64 iova;
};

static int skb_piece_to_mr(void *ctx, const u8 *p, u32 n)
{
	struct skb_to_mr_ctx *c = ctx;
	int err = sroce_mr_copy(c->mr, c->iova, (void *)p, n, SROCE_TO_MR);

	c->iova += n;
	return err;
}

int sroce_mr_copy_skb(struct sroce_mr *mr, u64 iova,
		      const struct sk_buff *skb, u32 skb_off, u32 len)
{
	struct skb_to_mr_ctx c = { mr, iova };

	/* An ODP MR: all of the range resident first, so a miss copies nothing. */
	int err = sroce_mr_resident(mr, iova, len);

	return err ?: sroce_skb_walk(skb, skb_off, len, skb_piece_to_mr, &c);
}

/* Does the page list cover the length ib_map_mr_sg() reported? */
static bool sroce_fast_mapped(const struct sroce_mr *mr)
{
	u64 mapped = (u64)READ_ONCE(mr->fast_npages) << PAGE_SHIFT;

	return mr->ib.length <= mapped - min_t(u64, mapped,
					       READ_ONCE(mr->page_offset));
}

/*
 * REG_MR: makes a FAST MR, mapped with ib_map_mr_sg(), accessible under
 * @new_key.  @key names the MR (its index bits; the consumer may already
 * have moved ib.lkey to the new variant).
 */
int sroce_mr_fast_reg(struct sroce_dev *sdev, struct ib_pd *pd, u32 key,
		      u32 new_key, int access)
{
	struct sroce_mr *mr;
	int err = -EINVAL;

	if (new_key >> 8 != key >> 8)
		return -EINVAL;

	rcu_read_lock();
	mr = sroce_key_entry_mr(xa_load(&sdev->mrs, key >> 8));
	if (mr && mr->kind == SROCE_MR_FAST && mr->ib.pd == pd &&
	    !READ_ONCE(mr->valid) && sroce_fast_mapped(mr)) {
		/* Latch what ib_map_mr_sg() left in the ib_mr. */
		WRITE_ONCE(mr->iova, mr->ib.iova);
		WRITE_ONCE(mr->length, mr->ib.length);
		WRITE_ONCE(mr->access, access & SROCE_MR_ACCESS);
		WRITE_ONCE(mr->key, new_key);
		mr->ib.lkey = new_key;
		mr->ib.rkey = new_key;
		/* Publishes the fields above to sroce_mr_check(). */
		smp_store_release(&mr->valid, true);
		err = 0;
	}
	rcu_read_unlock();
	return err;
}

/*
 * LOCAL_INV and SEND_WITH_INV of an MR (windows: sroce_key_invalidate()).
 * Only FAST MRs can be invalidated (IBTA allows it for fast-registered MRs
 * and type 2 memory windows).  A reader that checked the MR just before still finishes
 * its one copy (at most a packet).  Invalidating an invalid MR is allowed.
 */
int sroce_mr_invalidate(struct sroce_dev *sdev, struct ib_pd *pd, u32 key)
{
	struct sroce_mr *mr;
	int err = -EINVAL;

	rcu_read_lock();
	mr = sroce_mr_lookup(sdev, key);
	if (mr && mr->kind == SROCE_MR_FAST && mr->ib.pd == pd) {
		WRITE_ONCE(mr->valid, false);
		err = 0;
	}
	rcu_read_unlock();
	return err;
}

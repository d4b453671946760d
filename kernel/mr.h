/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Memory (mr.c, odp.c, mw.c): memory regions, the device's key table
 * that names them and memory windows by one rkey, on-demand paging, and
 * the copies between scatter lists, MRs and packets.  Owns struct
 * sroce_mr, sroce_mw and sroce_rkey_target.
 */
#ifndef SROCE_MR_H
#define SROCE_MR_H

#include <linux/atomic.h>
#include <linux/random.h>
#include <linux/rcupdate.h>
#include <linux/xarray.h>
#include <rdma/ib_verbs.h>

#include "../include/uapi/sroce-abi.h"
#include "proto/access.h"

struct scatterlist;
struct sk_buff;
struct sroce_dev;
struct uverbs_attr_bundle;

/* ------------------------------------------------------------------------
 * Memory regions (mr.c).  Keys: bits 31..8 are a random free index into
 * the device's MR table, bits 7..0 a random variant, so a key is not
 * predictable from the previous registration and a stale key misses.
 * lkey == rkey.
 */
enum sroce_mr_kind {
	SROCE_MR_DMA,		/* kernel virtual addresses, no bounds */
	SROCE_MR_USER,		/* pinned user pages */
	SROCE_MR_FAST,		/* fast registration (page list) */
	SROCE_MR_ODP,		/* user pages on demand (odp.c) */
};

struct sroce_odp;

struct sroce_mr {
	struct ib_mr ib;
	enum sroce_mr_kind kind;
	u32 key;			/* the lkey == rkey lookups match */
	int access;			/* IB_ACCESS_* */
	u64 iova;
	u64 length;
	struct ib_umem *umem;
	struct sroce_odp *odp;		/* ODP: the resident pages */
	struct page **pages;		/* USER: one per PAGE_SIZE of the range */
	u32 npages;
	u32 page_offset;		/* of iova in its first page (every kind) */
	u64 *fast_pages;		/* FAST: kernel addresses of the pages */
	u32 fast_max;
	u32 fast_npages;
	u32 fast_page_size;
	bool valid;			/* FAST: between REG_MR and LOCAL_INV */
	atomic_t mw_binds;		/* windows bound to it; -1: being deregistered */
	struct rcu_head rcu;
};

static inline struct sroce_mr *to_smr(struct ib_mr *mr)
{
	return container_of(mr, struct sroce_mr, ib);
}

enum sroce_copy_dir {
	SROCE_TO_MR,		/* received data into memory */
	SROCE_FROM_MR,		/* memory into a packet */
};

/*
 * The key table holds MRs as plain pointers and windows tagged with
 * SROCE_KEY_TAG_MW (xa_tag_pointer), so that one rkey names either.
 */
#define SROCE_KEY_TAG_MW	1
/* The MR an entry of the key table is, or NULL (empty, or a window). */
static inline struct sroce_mr *sroce_key_entry_mr(void *entry)
{
	return xa_pointer_tag(entry) ? NULL : entry;
}

/* A fresh key for table index @index: random variant bits. */
static inline u32 sroce_new_key(u32 index)
{
	return index << 8 | (get_random_u32() & 0xff);
}

/* Takes a key table index (reserved, not yet visible).  0 or -errno. */
int sroce_key_reserve(struct sroce_dev *sdev, u32 *index);
/* Returns the MR named by @key, or NULL.  Caller holds rcu_read_lock(). */
struct sroce_mr *sroce_mr_lookup(struct sroce_dev *sdev, u32 key);

/*
 * The MR one context last found by key, kept across its packets: a
 * message of 1 MiB is 1,024 lookups of one lkey otherwise.  Each cache
 * has one owner that serialises its use (a QP's requester and completer
 * under req.lock, its responder under resp.lock).  The pointer is used
 * only while the device's mrs_gen is where it was: every deregistration
 * moves it before the MR is freed (after an RCU grace period), so an RCU
 * reader that still sees the old generation holds an MR not yet freed.
 * What the MR says now (key variant, validity, range) is checked on
 * every use as before.
 */
struct sroce_mr_cache {
	struct sroce_mr *mr;
	s64 gen;
	u32 key;
};

/* sroce_mr_lookup() through @cache (may be NULL). */
struct sroce_mr *sroce_mr_lookup_cached(struct sroce_dev *sdev,
					struct sroce_mr_cache *cache, u32 key);

/* A scatter list and what its lkeys are checked against. */
struct sroce_sgl {
	struct sroce_dev *sdev;
	struct ib_pd *pd;
	const struct sroce_sge *sge;
	u32 num_sge;
	struct sroce_mr_cache *cache;	/* its owner's, or NULL */
};

/* What proto/access.h checks of @mr, read once. */
void sroce_mr_desc(struct sroce_mr *mr, struct roce_mr_desc *d);
/*
 * Checks that [iova, iova+len) lies in @mr, that @mr belongs to @pd and
 * grants every bit of @access.  0, or -EACCES (rights, PD) / -ERANGE.
 */
int sroce_mr_check(struct sroce_mr *mr, struct ib_pd *pd, u64 iova, u64 len,
		   int access);
/* Where @iova lies in a USER, FAST or ODP MR: bytes from its first page. */
static inline u64 sroce_mr_offset(const struct sroce_mr *mr, u64 iova)
{
	return iova - READ_ONCE(mr->iova) + READ_ONCE(mr->page_offset);
}

/*
 * Copies @len bytes between @buf and the checked range at @iova.  0, or for
 * an ODP MR -EAGAIN (a page is being faulted in: try again later) or
 * -EFAULT (it cannot be: a protection error).
 */
int sroce_mr_copy(struct sroce_mr *mr, u64 iova, void *buf, u32 len,
		  enum sroce_copy_dir dir);
/* A responder's atomic on 8 bytes of an MR (resp.c). */
struct sroce_atomic {
	enum {
		SROCE_ATOMIC_CMP_SWAP,
		SROCE_ATOMIC_FETCH_ADD,
		SROCE_ATOMIC_WRITE,	/* ATOMIC WRITE: a store, no result */
	} op;
	u64 compare;		/* CMP_SWAP's */
	u64 value;		/* the swap, the addend or the value stored */
	u64 orig;		/* out: what was there (CMP_SWAP, FETCH_ADD) */
};

/*
 * Applies @a to the 8 bytes at @iova (8-aligned, checked): 0, or -EAGAIN
 * or -EFAULT as above.
 */
int sroce_mr_atomic(struct sroce_mr *mr, u64 iova, struct sroce_atomic *a);
/* Applies @a at @p, under the device-wide atomics lock (mr.c's). */
void sroce_atomic_apply(u64 *p, struct sroce_atomic *a);

/* odp.c: the pages of SROCE_MR_ODP MRs; @off counts from the first page. */
int sroce_odp_init(struct sroce_mr *mr, struct sroce_dev *sdev, u64 start,
		   u64 length, int access);
void sroce_odp_release(struct sroce_mr *mr);
int sroce_odp_copy(struct sroce_mr *mr, u64 off, void *buf, u32 len,
		   enum sroce_copy_dir dir);
/* 0 if [off, off+len) is resident; else -EAGAIN (asked for) or -EFAULT. */
int sroce_odp_resident(struct sroce_mr *mr, u64 off, u64 len);
/* sroce_mr_atomic() on an ODP MR; the 8 bytes do not cross a page. */
int sroce_odp_atomic(struct sroce_mr *mr, u64 off, struct sroce_atomic *a);
int sroce_advise_mr(struct ib_pd *pd, enum ib_uverbs_advise_mr_advice advice,
		    u32 flags, struct ib_sge *sg_list, u32 num_sge,
		    struct uverbs_attr_bundle *attrs);
/* For a READ's whole range before it is answered: see sroce_odp_resident. */
int sroce_mr_resident(struct sroce_mr *mr, u64 iova, u64 len);

/*
 * Copies between a scatter list and a linear buffer, starting @offset
 * bytes into the list.  Resolves and checks every lkey against the
 * list's PD with @access.  0, or -EACCES/-ERANGE/-EINVAL for a bad SGE.
 */
int sroce_sgl_copy(const struct sroce_sgl *sgl, u64 offset, void *buf,
		   u32 len, int access, enum sroce_copy_dir dir);
/*
 * The walk under sroce_sgl_copy(): @piece gets each checked piece of the
 * list (@len bytes from @offset on), under rcu_read_lock(); its error
 * ends the walk.  -EACCES/-ERANGE for a bad key, rights or range,
 * -EINVAL when the list is shorter than @len.
 */
typedef int (*sroce_sgl_piece_fn)(struct sroce_mr *mr, u64 addr, u32 n,
				  void *ctx);
int sroce_sgl_walk(const struct sroce_sgl *sgl, u64 offset, u32 len,
		   int access, sroce_sgl_piece_fn piece, void *ctx);
/*
 * sroce_sgl_copy(..., SROCE_TO_MR) of the @len bytes at @skb_off (from
 * skb->data) of a received packet, linear or not.
 */
int sroce_sgl_copy_skb(const struct sroce_sgl *sgl, u64 offset,
		       const struct sk_buff *skb, u32 skb_off, u32 len,
		       int access);
/* sroce_mr_copy(..., SROCE_TO_MR) of the same, to a checked MR range. */
int sroce_mr_copy_skb(struct sroce_mr *mr, u64 iova,
		      const struct sk_buff *skb, u32 skb_off, u32 len);

struct ib_mr *sroce_get_dma_mr(struct ib_pd *pd, int access);
struct ib_mr *sroce_reg_user_mr(struct ib_pd *pd, u64 start, u64 length,
				u64 iova, int access, struct ib_udata *udata);
struct ib_mr *sroce_alloc_mr(struct ib_pd *pd, enum ib_mr_type type,
			     u32 max_num_sg);
int sroce_map_mr_sg(struct ib_mr *mr, struct scatterlist *sg, int sg_nents,
		    unsigned int *sg_offset);
int sroce_dereg_mr(struct ib_mr *mr, struct ib_udata *udata);
/* Work requests REG_MR / LOCAL_INV and remote invalidation. */
int sroce_mr_fast_reg(struct sroce_dev *sdev, struct ib_pd *pd, u32 key,
		      u32 new_key, int access);
int sroce_mr_invalidate(struct sroce_dev *sdev, struct ib_pd *pd, u32 key);
/* Bound windows pin their MR: a bind takes a reference, unless dying. */
static inline bool sroce_mr_get_bind(struct sroce_mr *mr)
{
	return atomic_inc_unless_negative(&mr->mw_binds);
}

/* ------------------------------------------------------------------------
 * Memory windows (mw.c).  The ib_mw is ib_core's and is freed as soon as
 * dealloc_mw returns, so what the receive path reads lives in a separate
 * sroce_window, the key table's entry, freed after a grace period.
 */
struct sroce_window;

struct sroce_mw {
	struct ib_mw ib;
	struct sroce_window *win;
};

static inline struct sroce_mw *to_smw(struct ib_mw *mw)
{
	return container_of(mw, struct sroce_mw, ib);
}

int sroce_alloc_mw(struct ib_mw *mw, struct ib_udata *udata);
int sroce_dealloc_mw(struct ib_mw *mw);

struct sroce_qp;
struct sroce_send_wqe;
/* IBV_WR_BIND_MW executing on @qp: 0, or the ib_wc_status it fails with. */
u8 sroce_mw_bind(struct sroce_qp *qp, const struct sroce_send_wqe *wqe);
/*
 * LOCAL_INV (@remote false) and SEND_WITH_INV (@remote true) of @key, an
 * MR or a window, by @qp.  0 or -EINVAL.
 */
int sroce_key_invalidate(struct sroce_qp *qp, struct ib_pd *pd, u32 key,
			 bool remote);
/*
 * What an rkey names: an MR, or a window seen through one snapshot of its
 * binding.  The responder checks a request against @desc with
 * proto/access.h's rules, then asks sroce_rkey_translate() for the bytes.
 */
struct sroce_rkey_target {
	struct roce_mr_desc desc;	/* the MR's, or the window's binding */
	struct sroce_mr *mr;		/* the memory: the MR, or the bound one */
	struct sroce_window *win;	/* NULL for an MR */
	u64 mr_va;			/* window: its first byte in the MR */
	u32 qpn;			/* window type 2: the QP it is bound to */
};

/*
 * Fills @t with what @rkey names; false if it names nothing (no entry, or
 * a stale key variant).  Caller holds rcu_read_lock() until the copy.
 */
bool sroce_rkey_lookup(struct sroce_qp *qp, u32 rkey,
		       struct sroce_rkey_target *t);
/*
 * After proto's check accepted [va, va+len) against @t->desc: the window
 * rules proto does not know (type 2's QP, the bound MR still valid) and the
 * address of @va within @t->mr.  ROCE_ACCESS_OK and *@mr_va, or a verdict.
 */
enum roce_access_verdict sroce_rkey_translate(struct sroce_qp *qp,
					      const struct sroce_rkey_target *t,
					      u64 va, u64 len, u64 *mr_va);

#endif /* SROCE_MR_H */

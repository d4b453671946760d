// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Remote access checks against a memory region; see access.h. */
#include "access.h"
#include "aeth.h"

enum roce_access_verdict roce_access_check(const struct roce_mr_desc *mr,
					   const void *pd, u64 va, u64 len,
					   u32 need)
{
	if (!mr)
		return ROCE_ACCESS_NO_MR;
	/* Even an MR spanning all memory serves only its own PD. */
	if (mr->pd != pd)
		return ROCE_ACCESS_WRONG_PD;
	if (!mr->valid)
		return ROCE_ACCESS_INVALID;
	if ((mr->access & need) != need)
		return ROCE_ACCESS_NO_RIGHT;
	/*
	 * va - iova is the offset into the MR; it must leave room for len.
	 * Neither side of the comparison can wrap: va >= iova and
	 * len <= length are established first.
	 */
	if (va < mr->iova || len > mr->length ||
	    va - mr->iova > mr->length - len)
		return ROCE_ACCESS_OUT_OF_RANGE;
	return ROCE_ACCESS_OK;
}

enum roce_access_verdict roce_reth_check(const struct roce_mr_desc *mr,
					 const void *pd,
					 const struct roce_reth *reth, u32 need)
{
	if (!reth->len)
		return ROCE_ACCESS_OK;
	return roce_access_check(mr, pd, reth->va, reth->len, need);
}

enum roce_access_verdict roce_atomic_check(const struct roce_mr_desc *mr,
					   const void *pd,
					   const struct roce_atmeth *atm)
{
	if (!roce_atomic_aligned(atm->va))
		return ROCE_ACCESS_MISALIGNED;
	return roce_access_check(mr, pd, atm->va, ROCE_ATOMIC_LEN,
				 ROCE_ACCESS_REMOTE_ATOMIC);
}

enum roce_access_verdict roce_atomic_write_check(const struct roce_mr_desc *mr,
						 const void *pd,
						 const struct roce_reth *reth)
{
	if (reth->len != ROCE_ATOMIC_LEN)
		return ROCE_ACCESS_BAD_LENGTH;
	if (!roce_atomic_aligned(reth->va))
		return ROCE_ACCESS_MISALIGNED;
	return roce_access_check(mr, pd, reth->va, ROCE_ATOMIC_LEN,
				 ROCE_ACCESS_REMOTE_WRITE);
}

u32 roce_flush_rights(const struct roce_feth *feth)
{
	u32 rights = 0;

	if (feth->placement & ~(ROCE_FLUSH_GLOBAL | ROCE_FLUSH_PERSISTENT) ||
	    feth->selectivity > ROCE_FLUSH_MR)
		return 0;
	if (feth->placement & ROCE_FLUSH_GLOBAL)
		rights |= ROCE_ACCESS_FLUSH_GLOBAL;
	if (feth->placement & ROCE_FLUSH_PERSISTENT)
		rights |= ROCE_ACCESS_FLUSH_PERSISTENT;
	return rights;
}

enum roce_access_verdict roce_flush_check(const struct roce_mr_desc *mr,
					  const void *pd,
					  const struct roce_feth *feth,
					  const struct roce_reth *reth)
{
	u32 need = roce_flush_rights(feth);

	if (!need)
		return ROCE_ACCESS_BAD_FLUSH;
	if (feth->selectivity == ROCE_FLUSH_MR)
		return roce_access_check(mr, pd, mr ? mr->iova : 0, 0, need);
	return roce_access_check(mr, pd, reth->va, reth->len, need);
}

u8 roce_access_nak(enum roce_access_verdict v)
{
	return v == ROCE_ACCESS_MISALIGNED || v == ROCE_ACCESS_BAD_LENGTH ||
	       v == ROCE_ACCESS_BAD_FLUSH ?
		       ROCE_NAK_INVALID_REQ : ROCE_NAK_REM_ACCESS_ERR;
}

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The responder's check of a remote access (the RETH of a READ or WRITE,
 * the AtomicETH of an atomic) against the memory region its R_Key named:
 * protection domain, validity, access rights, alignment and bounds.
 *
 * Pure logic, so that sroce.ko, the host unit tests and the libFuzzer
 * target run the very same code: the module fills a roce_mr_desc from its
 * MR (mr.c) and asks here.  Bounds are checked relative to the MR's start,
 * so no sum can wrap at 2^64.
 */
#ifndef SROCE_PROTO_ACCESS_H
#define SROCE_PROTO_ACCESS_H

#include "compat.h"
#include "wire.h"

ROCE_EXTERN_C_BEGIN

/* Access rights; the values are the kernel's IB_ACCESS_* (mr.c checks). */
#define ROCE_ACCESS_LOCAL_WRITE		1u
#define ROCE_ACCESS_REMOTE_WRITE	2u
#define ROCE_ACCESS_REMOTE_READ		4u
#define ROCE_ACCESS_REMOTE_ATOMIC	8u
#define ROCE_ACCESS_FLUSH_GLOBAL	(1u << 8)
#define ROCE_ACCESS_FLUSH_PERSISTENT	(1u << 9)

/* What a check needs to know about one memory region. */
struct roce_mr_desc {
	u64 iova;		/* first byte, in the consumer's address space */
	u64 length;		/* bytes; U64_MAX for "everything" */
	u32 access;		/* ROCE_ACCESS_* granted */
	const void *pd;		/* compared for identity only */
	bool valid;		/* fast-registered MRs: between REG_MR and INV */
};

enum roce_access_verdict {
	ROCE_ACCESS_OK,
	ROCE_ACCESS_NO_MR,		/* the key names no MR */
	ROCE_ACCESS_WRONG_PD,
	ROCE_ACCESS_INVALID,		/* not (or no longer) registered */
	ROCE_ACCESS_NO_RIGHT,
	ROCE_ACCESS_OUT_OF_RANGE,
	ROCE_ACCESS_MISALIGNED,		/* atomic VA not 8-byte aligned */
	ROCE_ACCESS_BAD_LENGTH,		/* ATOMIC WRITE of other than 8 bytes */
	ROCE_ACCESS_BAD_FLUSH,		/* FETH with no or a reserved type/level */
};

/* Bytes an atomic operates on, and their required alignment. */
#define ROCE_ATOMIC_LEN 8

/* An atomic's target must be naturally aligned (IBA o9-21). */
static inline bool roce_atomic_aligned(u64 va)
{
	return !(va & (ROCE_ATOMIC_LEN - 1));
}

/*
 * Is [va, va + len) inside @mr, for @pd, with every right in @need?
 * @mr NULL means the key found nothing.  len 0 is checked like any other
 * length (a memory key check); use roce_reth_check() for requests.
 */
enum roce_access_verdict roce_access_check(const struct roce_mr_desc *mr,
					   const void *pd, u64 va, u64 len,
					   u32 need);

/*
 * A READ or WRITE request's RETH.  A zero-length request accesses no
 * memory, so IBTA has the responder skip the R_Key check: OK even when
 * @mr is NULL.
 */
enum roce_access_verdict roce_reth_check(const struct roce_mr_desc *mr,
					 const void *pd,
					 const struct roce_reth *reth, u32 need);

/* An atomic's AtomicETH: 8 bytes, 8-aligned, REMOTE_ATOMIC. */
enum roce_access_verdict roce_atomic_check(const struct roce_mr_desc *mr,
					   const void *pd,
					   const struct roce_atmeth *atm);

/*
 * An ATOMIC WRITE's RETH (IBTA 1.5 A19): 8 bytes, 8-aligned, REMOTE_WRITE.
 * Its key is checked like any other: the zero-length exemption of READ
 * and WRITE does not apply, a length other than 8 being an error itself.
 */
enum roce_access_verdict roce_atomic_write_check(const struct roce_mr_desc *mr,
						 const void *pd,
						 const struct roce_reth *reth);

/*
 * The rights an RDMA FLUSH's placement type needs, of the QP and of the
 * MR alike (IBTA 1.5 A19): FLUSH_GLOBAL for global visibility,
 * FLUSH_PERSISTENT for persistence; 0 for a FETH no request may carry
 * (no placement type, or a reserved bit or level).
 */
u32 roce_flush_rights(const struct roce_feth *feth);

/*
 * An RDMA FLUSH's FETH and RETH.  Selectivity "range" checks the RETH's
 * range like any other (a zero length names no memory, but the key must
 * still name an MR that may be flushed); "whole MR" checks the key alone,
 * the RETH's address and length being meaningless then.
 */
enum roce_access_verdict roce_flush_check(const struct roce_mr_desc *mr,
					  const void *pd,
					  const struct roce_feth *feth,
					  const struct roce_reth *reth);

/*
 * The NAK (full AETH syndrome, aeth.h) a failed check answers with:
 * Invalid Request for a misaligned atomic, an ATOMIC WRITE of the wrong
 * length or a FLUSH of no valid type (the request itself is malformed),
 * Remote Access Error otherwise.
 */
u8 roce_access_nak(enum roce_access_verdict v);

ROCE_EXTERN_C_END

#endif /* SROCE_PROTO_ACCESS_H */

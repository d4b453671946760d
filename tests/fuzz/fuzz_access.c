// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer target for the responder's remote access check
 * (kernel/proto/access.c, what sroce.ko runs for every READ, WRITE,
 * atomic, ATOMIC WRITE and FLUSH).  The input is an MR description followed by
 * the extension header of a request as it arrives on the wire:
 *
 *   byte 0      bit 0..1: kind (READ RETH, WRITE RETH, atomic AtomicETH)
 *               bit 2: the request's PD differs from the MR's
 *               bit 3: the MR is not valid   bit 4: no MR at all
 *               bit 5: an ATOMIC WRITE's RETH instead, whatever the kind
 *               bit 6: a FLUSH's FETH and RETH instead (before bit 5)
 *   byte 1      the MR's access rights: bits 0..3 the IB_ACCESS_ bits of
 *               the same value, bits 4..5 FLUSH_GLOBAL and _PERSISTENT
 *   bytes 2-17  the MR's iova and length, big-endian
 *   bytes 18-   RETH (16 bytes), AtomicETH (28 bytes) or FETH + RETH
 *
 * The oracle recomputes the verdict with 128-bit arithmetic, which cannot
 * wrap: accepted means the range lies inside the MR (or is empty), the PD
 * matches, the MR is valid and every needed right is granted; and any
 * input meeting all that must be accepted.
 */
#include <stdlib.h>
#include <string.h>

#include "access.h"
#include "aeth.h"

#define CHECK(c) do { if (!(c)) abort(); } while (0)

typedef unsigned __int128 u128;

static u64 be64(const u8 *p)
{
	u64 v = 0;
	int i;

	for (i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return v;
}

static int pd_mr, pd_other;

int LLVMFuzzerTestOneInput(const u8 *data, size_t size);

int LLVMFuzzerTestOneInput(const u8 *data, size_t size)
{
	struct roce_mr_desc mr;
	const struct roce_mr_desc *m;
	const void *pd;
	u32 kind, need;
	u64 va, len;
	enum roce_access_verdict v;
	bool inside, want, awrite, flush;
	enum roce_access_verdict malformed = ROCE_ACCESS_OK;

	if (size < 18)
		return 0;
	kind = data[0] & 3;
	awrite = data[0] & 32;
	flush = data[0] & 64;
	mr.access = (data[1] & 0xf) | (u32)(data[1] & 0x30) << 4;
	mr.iova = be64(data + 2);
	mr.length = be64(data + 10);
	mr.pd = &pd_mr;
	mr.valid = !(data[0] & 8);
	m = (data[0] & 16) ? NULL : &mr;
	pd = (data[0] & 4) ? (const void *)&pd_other : (const void *)&pd_mr;
	data += 18;
	size -= 18;

	if (flush) {
		struct roce_feth feth;
		struct roce_reth reth;

		if (size < ROCE_FETH_LEN + ROCE_RETH_LEN)
			return 0;
		roce_feth_decode(data, &feth);
		roce_reth_decode(data + ROCE_FETH_LEN, &reth);
		v = roce_flush_check(m, pd, &feth, &reth);
		need = ((data[3] & 1) ? ROCE_ACCESS_FLUSH_GLOBAL : 0) |
		       ((data[3] & 2) ? ROCE_ACCESS_FLUSH_PERSISTENT : 0);
		/* Only types 1..3 and levels 0..1 are defined. */
		if (!need || (data[3] & 0xC) || (data[3] & 0x30) == 0x20 ||
		    (data[3] & 0x30) == 0x30)
			malformed = ROCE_ACCESS_BAD_FLUSH;
		if ((data[3] & 0x30) == 0x10) {	/* the whole MR: key only */
			va = mr.iova;
			len = 0;
		} else {
			va = reth.va;
			len = reth.len;
		}
	} else if (awrite) {
		struct roce_reth reth;

		if (size < ROCE_RETH_LEN)
			return 0;
		roce_reth_decode(data, &reth);
		v = roce_atomic_write_check(m, pd, &reth);
		va = reth.va;
		len = ROCE_ATOMIC_LEN;
		need = ROCE_ACCESS_REMOTE_WRITE;
		malformed = reth.len != ROCE_ATOMIC_LEN ? ROCE_ACCESS_BAD_LENGTH :
			    (va & 7) ? ROCE_ACCESS_MISALIGNED : ROCE_ACCESS_OK;
	} else if (kind == 2 || kind == 3) {
		struct roce_atmeth atm;

		if (size < ROCE_ATMETH_LEN)
			return 0;
		roce_atmeth_decode(data, &atm);
		v = roce_atomic_check(m, pd, &atm);
		va = atm.va;
		len = ROCE_ATOMIC_LEN;
		need = ROCE_ACCESS_REMOTE_ATOMIC;
		malformed = (va & 7) ? ROCE_ACCESS_MISALIGNED : ROCE_ACCESS_OK;
	} else {
		struct roce_reth reth;

		if (size < ROCE_RETH_LEN)
			return 0;
		roce_reth_decode(data, &reth);
		need = kind ? ROCE_ACCESS_REMOTE_WRITE : ROCE_ACCESS_REMOTE_READ;
		v = roce_reth_check(m, pd, &reth, need);
		va = reth.va;
		len = reth.len;
		if (!len) {		/* touches nothing: no key check */
			CHECK(v == ROCE_ACCESS_OK);
			return 0;
		}
	}

	/* Malformed requests, before any key: Invalid Request. */
	if (malformed != ROCE_ACCESS_OK) {
		CHECK(v == malformed);
		CHECK(roce_access_nak(v) == ROCE_NAK_INVALID_REQ);
		return 0;
	}
	inside = (u128)va >= mr.iova &&
		 (u128)va + len <= (u128)mr.iova + mr.length;
	want = m && pd == mr.pd && mr.valid && (mr.access & need) == need &&
	       inside;
	CHECK((v == ROCE_ACCESS_OK) == want);
	CHECK(v <= ROCE_ACCESS_MISALIGNED && v != ROCE_ACCESS_MISALIGNED);
	if (v != ROCE_ACCESS_OK)
		CHECK(roce_access_nak(v) == ROCE_NAK_REM_ACCESS_ERR);
	/* Each refusal names the first rule broken, in the documented order. */
	if (!m)
		CHECK(v == ROCE_ACCESS_NO_MR);
	else if (pd != mr.pd)
		CHECK(v == ROCE_ACCESS_WRONG_PD);
	else if (!mr.valid)
		CHECK(v == ROCE_ACCESS_INVALID);
	else if ((mr.access & need) != need)
		CHECK(v == ROCE_ACCESS_NO_RIGHT);
	else if (!inside)
		CHECK(v == ROCE_ACCESS_OUT_OF_RANGE);
	return 0;
}

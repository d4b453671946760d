// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// The responder's remote access check (proto/access.c): every refusal
// reason, the edges of an MR, and sums that would wrap at 2^64.
#include <gtest/gtest.h>

#include "access.h"
#include "aeth.h"

namespace {

constexpr u32 kAll = ROCE_ACCESS_LOCAL_WRITE | ROCE_ACCESS_REMOTE_WRITE |
		     ROCE_ACCESS_REMOTE_READ | ROCE_ACCESS_REMOTE_ATOMIC;
int pd_a, pd_b; // identities only

roce_mr_desc mr(u64 iova, u64 length, u32 access = kAll)
{
	return roce_mr_desc{iova, length, access, &pd_a, true};
}

TEST(Access, InsideIsAcceptedEdgesIncluded)
{
	auto m = mr(0x1000, 0x1000);

	EXPECT_EQ(roce_access_check(&m, &pd_a, 0x1000, 0x1000, ROCE_ACCESS_REMOTE_WRITE),
		  ROCE_ACCESS_OK);
	EXPECT_EQ(roce_access_check(&m, &pd_a, 0x1fff, 1, ROCE_ACCESS_REMOTE_READ),
		  ROCE_ACCESS_OK);
	EXPECT_EQ(roce_access_check(&m, &pd_a, 0x2000, 0, ROCE_ACCESS_REMOTE_READ),
		  ROCE_ACCESS_OK); // empty range at the very end
}

TEST(Access, OutsideIsRefused)
{
	auto m = mr(0x1000, 0x1000);

	EXPECT_EQ(roce_access_check(&m, &pd_a, 0xfff, 2, ROCE_ACCESS_REMOTE_READ),
		  ROCE_ACCESS_OUT_OF_RANGE); // starts before
	EXPECT_EQ(roce_access_check(&m, &pd_a, 0x1fff, 2, ROCE_ACCESS_REMOTE_READ),
		  ROCE_ACCESS_OUT_OF_RANGE); // ends after
	EXPECT_EQ(roce_access_check(&m, &pd_a, 0x1000, 0x1001, ROCE_ACCESS_REMOTE_READ),
		  ROCE_ACCESS_OUT_OF_RANGE); // longer than the MR
	EXPECT_EQ(roce_access_check(&m, &pd_a, 0x2001, 0, ROCE_ACCESS_REMOTE_READ),
		  ROCE_ACCESS_OUT_OF_RANGE);
}

TEST(Access, SumsThatWrapAreRefused)
{
	auto m = mr(0x1000, 0x1000);
	auto top = mr(~0ull - 0xfff, 0x1000); // the last 4 KiB of the space

	// va + len wraps to inside the MR.
	EXPECT_EQ(roce_access_check(&m, &pd_a, ~0ull - 7, 0x1010, ROCE_ACCESS_REMOTE_READ),
		  ROCE_ACCESS_OUT_OF_RANGE);
	EXPECT_EQ(roce_access_check(&m, &pd_a, 0x1800, ~0ull, ROCE_ACCESS_REMOTE_READ),
		  ROCE_ACCESS_OUT_OF_RANGE);
	// An MR that ends exactly at 2^64 works up to its last byte.
	EXPECT_EQ(roce_access_check(&top, &pd_a, ~0ull, 1, ROCE_ACCESS_REMOTE_READ),
		  ROCE_ACCESS_OK);
	EXPECT_EQ(roce_access_check(&top, &pd_a, ~0ull, 2, ROCE_ACCESS_REMOTE_READ),
		  ROCE_ACCESS_OUT_OF_RANGE);
}

TEST(Access, WholeSpaceMrStillChecksPdAndRights)
{
	auto dma = mr(0, ~0ull, ROCE_ACCESS_LOCAL_WRITE | ROCE_ACCESS_REMOTE_READ);

	EXPECT_EQ(roce_access_check(&dma, &pd_a, 0xdead0000, 64, ROCE_ACCESS_REMOTE_READ),
		  ROCE_ACCESS_OK);
	EXPECT_EQ(roce_access_check(&dma, &pd_b, 0xdead0000, 64, ROCE_ACCESS_REMOTE_READ),
		  ROCE_ACCESS_WRONG_PD);
	EXPECT_EQ(roce_access_check(&dma, &pd_a, 0xdead0000, 64, ROCE_ACCESS_REMOTE_WRITE),
		  ROCE_ACCESS_NO_RIGHT);
}

TEST(Access, EveryRightIsNeeded)
{
	auto m = mr(0, 64, ROCE_ACCESS_REMOTE_READ);

	EXPECT_EQ(roce_access_check(&m, &pd_a, 0, 8, ROCE_ACCESS_REMOTE_READ), ROCE_ACCESS_OK);
	EXPECT_EQ(roce_access_check(&m, &pd_a, 0, 8,
				    ROCE_ACCESS_REMOTE_READ | ROCE_ACCESS_REMOTE_WRITE),
		  ROCE_ACCESS_NO_RIGHT);
	EXPECT_EQ(roce_access_check(&m, &pd_a, 0, 8, ROCE_ACCESS_REMOTE_ATOMIC),
		  ROCE_ACCESS_NO_RIGHT);
}

TEST(Access, MissingOrInvalidMrIsRefused)
{
	auto m = mr(0, 64);

	m.valid = false;
	EXPECT_EQ(roce_access_check(nullptr, &pd_a, 0, 8, ROCE_ACCESS_REMOTE_READ),
		  ROCE_ACCESS_NO_MR);
	EXPECT_EQ(roce_access_check(&m, &pd_a, 0, 8, ROCE_ACCESS_REMOTE_READ),
		  ROCE_ACCESS_INVALID);
}

TEST(Access, ZeroLengthRethNeedsNoKey)
{
	roce_reth empty{0x1234, 0xbad, 0};
	roce_reth one{0x1234, 0xbad, 1};

	EXPECT_EQ(roce_reth_check(nullptr, &pd_a, &empty, ROCE_ACCESS_REMOTE_WRITE),
		  ROCE_ACCESS_OK);
	EXPECT_EQ(roce_reth_check(nullptr, &pd_a, &one, ROCE_ACCESS_REMOTE_WRITE),
		  ROCE_ACCESS_NO_MR);
}

TEST(Access, AtomicsAreEightAlignedEightBytesWithTheAtomicRight)
{
	auto m = mr(0x1000, 16);
	auto ro = mr(0x1000, 16, ROCE_ACCESS_REMOTE_READ | ROCE_ACCESS_REMOTE_WRITE);
	roce_atmeth at{0x1008, 0, 0, 0};

	EXPECT_EQ(roce_atomic_check(&m, &pd_a, &at), ROCE_ACCESS_OK);
	EXPECT_EQ(roce_atomic_check(&ro, &pd_a, &at), ROCE_ACCESS_NO_RIGHT);
	at.va = 0x1004;
	EXPECT_EQ(roce_atomic_check(&m, &pd_a, &at), ROCE_ACCESS_MISALIGNED);
	EXPECT_EQ(roce_access_nak(ROCE_ACCESS_MISALIGNED), ROCE_NAK_INVALID_REQ);
	at.va = 0x1010; // aligned, but the 8 bytes lie past the end
	EXPECT_EQ(roce_atomic_check(&m, &pd_a, &at), ROCE_ACCESS_OUT_OF_RANGE);
	EXPECT_EQ(roce_access_nak(ROCE_ACCESS_OUT_OF_RANGE), ROCE_NAK_REM_ACCESS_ERR);
}

TEST(Access, AtomicWriteIsEightAlignedEightBytesWithTheWriteRight)
{
	auto m = mr(0x1000, 16);
	auto atomic_only = mr(0x1000, 16, ROCE_ACCESS_REMOTE_ATOMIC);
	roce_reth r{0x1008, 0, 8};

	EXPECT_EQ(roce_atomic_write_check(&m, &pd_a, &r), ROCE_ACCESS_OK);
	EXPECT_EQ(roce_atomic_write_check(&atomic_only, &pd_a, &r),
		  ROCE_ACCESS_NO_RIGHT) << "it is a write: REMOTE_ATOMIC is not enough";
	EXPECT_EQ(roce_atomic_write_check(&m, &pd_b, &r), ROCE_ACCESS_WRONG_PD);
	r.va = 0x1010;
	EXPECT_EQ(roce_atomic_write_check(&m, &pd_a, &r), ROCE_ACCESS_OUT_OF_RANGE);
	r.va = 0x1004;
	EXPECT_EQ(roce_atomic_write_check(&m, &pd_a, &r), ROCE_ACCESS_MISALIGNED);
	EXPECT_EQ(roce_access_nak(ROCE_ACCESS_MISALIGNED), ROCE_NAK_INVALID_REQ);
	for (u32 len : {0u, 4u, 16u}) {
		r = roce_reth{0x1008, 0, len};
		EXPECT_EQ(roce_atomic_write_check(&m, &pd_a, &r), ROCE_ACCESS_BAD_LENGTH)
			<< len;
	}
	EXPECT_EQ(roce_access_nak(ROCE_ACCESS_BAD_LENGTH), ROCE_NAK_INVALID_REQ);
	r = roce_reth{0x1008, 0, 8};
	EXPECT_EQ(roce_atomic_write_check(nullptr, &pd_a, &r), ROCE_ACCESS_NO_MR)
		<< "the key is checked, unlike a zero-length WRITE's";
}

TEST(Access, FlushNeedsTheRightOfItsPlacementType)
{
	auto global = mr(0x1000, 0x1000, ROCE_ACCESS_FLUSH_GLOBAL);
	auto write_only = mr(0x1000, 0x1000, ROCE_ACCESS_REMOTE_WRITE);
	roce_feth f{ROCE_FLUSH_GLOBAL, ROCE_FLUSH_RANGE};
	roce_reth r{0x1000, 0, 0x1000};

	EXPECT_EQ(roce_flush_rights(&f), ROCE_ACCESS_FLUSH_GLOBAL);
	EXPECT_EQ(roce_flush_check(&global, &pd_a, &f, &r), ROCE_ACCESS_OK);
	EXPECT_EQ(roce_flush_check(&write_only, &pd_a, &f, &r), ROCE_ACCESS_NO_RIGHT)
		<< "writing is not flushing";
	f.placement = ROCE_FLUSH_PERSISTENT;
	EXPECT_EQ(roce_flush_rights(&f), ROCE_ACCESS_FLUSH_PERSISTENT);
	EXPECT_EQ(roce_flush_check(&global, &pd_a, &f, &r), ROCE_ACCESS_NO_RIGHT)
		<< "a global-only MR cannot be made persistent";
	f.placement = ROCE_FLUSH_GLOBAL | ROCE_FLUSH_PERSISTENT;
	EXPECT_EQ(roce_flush_rights(&f),
		  ROCE_ACCESS_FLUSH_GLOBAL | ROCE_ACCESS_FLUSH_PERSISTENT);
	EXPECT_EQ(roce_flush_check(&global, &pd_a, &f, &r), ROCE_ACCESS_NO_RIGHT);
	EXPECT_EQ(roce_access_nak(ROCE_ACCESS_NO_RIGHT), ROCE_NAK_REM_ACCESS_ERR);
}

TEST(Access, FlushRangeIsCheckedWholeMrIsNot)
{
	auto m = mr(0x1000, 0x1000, ROCE_ACCESS_FLUSH_GLOBAL);
	roce_feth range{ROCE_FLUSH_GLOBAL, ROCE_FLUSH_RANGE};
	roce_feth whole{ROCE_FLUSH_GLOBAL, ROCE_FLUSH_MR};
	roce_reth r{0x1800, 0, 0x801};

	EXPECT_EQ(roce_flush_check(&m, &pd_a, &range, &r), ROCE_ACCESS_OUT_OF_RANGE);
	EXPECT_EQ(roce_flush_check(&m, &pd_a, &whole, &r), ROCE_ACCESS_OK)
		<< "the whole MR: the RETH's range means nothing";
	r = roce_reth{0, 0, 0};
	EXPECT_EQ(roce_flush_check(&m, &pd_a, &whole, &r), ROCE_ACCESS_OK);
	EXPECT_EQ(roce_flush_check(nullptr, &pd_a, &whole, &r), ROCE_ACCESS_NO_MR)
		<< "but the key still names an MR";
	EXPECT_EQ(roce_flush_check(&m, &pd_b, &whole, &r), ROCE_ACCESS_WRONG_PD);
	r = roce_reth{0x1800, 0, 0};
	EXPECT_EQ(roce_flush_check(nullptr, &pd_a, &range, &r), ROCE_ACCESS_NO_MR)
		<< "unlike a zero-length WRITE, a FLUSH always names an MR";
}

TEST(Access, FlushOfNoOrAReservedTypeOrLevelIsInvalid)
{
	auto m = mr(0x1000, 0x1000,
		    ROCE_ACCESS_FLUSH_GLOBAL | ROCE_ACCESS_FLUSH_PERSISTENT);
	roce_reth r{0x1000, 0, 16};
	const roce_feth bad[] = {{0, ROCE_FLUSH_RANGE}, {4, ROCE_FLUSH_RANGE},
				 {8 | ROCE_FLUSH_GLOBAL, ROCE_FLUSH_RANGE},
				 {ROCE_FLUSH_GLOBAL, 2}, {ROCE_FLUSH_GLOBAL, 3}};

	for (const roce_feth &f : bad) {
		EXPECT_EQ(roce_flush_rights(&f), 0u);
		EXPECT_EQ(roce_flush_check(&m, &pd_a, &f, &r), ROCE_ACCESS_BAD_FLUSH)
			<< int(f.placement) << "/" << int(f.selectivity);
	}
	EXPECT_EQ(roce_access_nak(ROCE_ACCESS_BAD_FLUSH), ROCE_NAK_INVALID_REQ);
}

} // namespace

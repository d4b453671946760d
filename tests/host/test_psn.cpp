// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <gtest/gtest.h>

#include "psn.h"
#include "test_util.hpp"

namespace {

constexpr u32 kHalf = 1u << 23;

TEST(Psn, AddWrapsAt24Bits)
{
	EXPECT_EQ(psn_add(0xFFFFFF, 1), 0u);
	EXPECT_EQ(psn_add(0xFFFFFE, 5), 3u);
	EXPECT_EQ(psn_add(0x123456, 1u << 24), 0x123456u);
	EXPECT_EQ(psn_add(0, 0), 0u);
}

TEST(Psn, SubWrapsAt24Bits)
{
	EXPECT_EQ(psn_sub(0, 1), 0xFFFFFFu);
	EXPECT_EQ(psn_sub(3, 5), 0xFFFFFEu);
	EXPECT_EQ(psn_sub(0x10, 0x10), 0u);
}

TEST(Psn, DiffIsSignedAcrossWrap)
{
	EXPECT_EQ(psn_diff(0, 0xFFFFFF), 1);
	EXPECT_EQ(psn_diff(0xFFFFFF, 0), -1);
	EXPECT_EQ(psn_diff(5, 0xFFFFFB), 10);
	EXPECT_EQ(psn_diff(0x123456, 0x123456), 0);
	// The extremes of the representable range.
	EXPECT_EQ(psn_diff(kHalf - 1, 0), static_cast<s32>(kHalf - 1));
	EXPECT_EQ(psn_diff(kHalf, 0), -static_cast<s32>(kHalf));
	// Bits above 24 are ignored, whoever left them there.
	EXPECT_EQ(psn_diff(0x01000005, 5), 0);
	EXPECT_EQ(psn_diff(0xFF000007, 0x5), 2);
}

TEST(Psn, DiffIsAntisymmetricAndConsistentWithAdd)
{
	sroce_test::Rng rng(1);

	for (int i = 0; i < 100000; i++) {
		u32 a = rng.u32v() & ROCE_PSN_MASK;
		s32 d = static_cast<s32>(rng.u32v() % (2 * kHalf - 1)) -
			static_cast<s32>(kHalf - 1); // (-2^23, 2^23)
		u32 b = psn_add(a, static_cast<u32>(d));

		ASSERT_EQ(psn_diff(b, a), d) << a << " " << d;
		ASSERT_EQ(psn_diff(a, b), -d);
		ASSERT_EQ(psn_sub(b, static_cast<u32>(d)), a);
	}
}

TEST(Psn, OrderingAcrossWrap)
{
	EXPECT_TRUE(psn_before(0xFFFFF0, 0x10));
	EXPECT_TRUE(psn_after(0x10, 0xFFFFF0));
	EXPECT_FALSE(psn_after(0xFFFFF0, 0x10));
	EXPECT_TRUE(psn_before_eq(7, 7));
	EXPECT_TRUE(psn_after_eq(7, 7));
	EXPECT_FALSE(psn_before(7, 7));
	EXPECT_FALSE(psn_after(7, 7));
	EXPECT_TRUE(psn_after_eq(0, 0xFFFFFF));
	EXPECT_TRUE(psn_before_eq(0xFFFFFF, 0));
}

TEST(Psn, InRangeHalfOpenAcrossWrap)
{
	EXPECT_TRUE(psn_in_range(0xFFFFFF, 0xFFFFFE, 2));
	EXPECT_TRUE(psn_in_range(0, 0xFFFFFE, 2));
	EXPECT_TRUE(psn_in_range(1, 0xFFFFFE, 2));
	EXPECT_FALSE(psn_in_range(2, 0xFFFFFE, 2));
	EXPECT_FALSE(psn_in_range(0xFFFFFD, 0xFFFFFE, 2));
	EXPECT_FALSE(psn_in_range(5, 5, 5)); // empty range
}

TEST(Psn, ClassifyBasic)
{
	EXPECT_EQ(roce_psn_classify(5, 5, ROCE_PSN_DUP_WINDOW), ROCE_PSN_EXPECTED);
	EXPECT_EQ(roce_psn_classify(4, 5, ROCE_PSN_DUP_WINDOW), ROCE_PSN_DUPLICATE);
	EXPECT_EQ(roce_psn_classify(6, 5, ROCE_PSN_DUP_WINDOW),
		  ROCE_PSN_OUT_OF_ORDER);
}

TEST(Psn, ClassifyAcrossWrap)
{
	EXPECT_EQ(roce_psn_classify(0xFFFFFF, 2, ROCE_PSN_DUP_WINDOW),
		  ROCE_PSN_DUPLICATE);
	EXPECT_EQ(roce_psn_classify(1, 0xFFFFFF, ROCE_PSN_DUP_WINDOW),
		  ROCE_PSN_OUT_OF_ORDER);
	EXPECT_EQ(roce_psn_classify(0, 0, ROCE_PSN_DUP_WINDOW), ROCE_PSN_EXPECTED);
}

TEST(Psn, ClassifyHalfSpaceBoundary)
{
	// IBTA: the 2^23 PSNs behind ePSN are duplicates, the rest invalid.
	for (u32 epsn : {0u, 1u, kHalf, 0xFFFFFFu, 0x5A5A5Au}) {
		EXPECT_EQ(roce_psn_classify(psn_sub(epsn, kHalf), epsn,
					    ROCE_PSN_DUP_WINDOW),
			  ROCE_PSN_DUPLICATE);
		EXPECT_EQ(roce_psn_classify(psn_add(epsn, kHalf - 1), epsn,
					    ROCE_PSN_DUP_WINDOW),
			  ROCE_PSN_OUT_OF_ORDER);
		EXPECT_EQ(roce_psn_classify(psn_add(epsn, 1), epsn,
					    ROCE_PSN_DUP_WINDOW),
			  ROCE_PSN_OUT_OF_ORDER);
	}
}

TEST(Psn, ClassifyNarrowWindow)
{
	EXPECT_EQ(roce_psn_classify(1, 5, 4), ROCE_PSN_DUPLICATE);
	EXPECT_EQ(roce_psn_classify(0, 5, 4), ROCE_PSN_OUT_OF_ORDER);
	EXPECT_EQ(roce_psn_classify(0xFFFFFE, 2, 4), ROCE_PSN_DUPLICATE);
	EXPECT_EQ(roce_psn_classify(0xFFFFFD, 2, 4), ROCE_PSN_OUT_OF_ORDER);
	// window 0: nothing is a duplicate.
	EXPECT_EQ(roce_psn_classify(4, 5, 0), ROCE_PSN_OUT_OF_ORDER);
	EXPECT_EQ(roce_psn_classify(5, 5, 0), ROCE_PSN_EXPECTED);
}

TEST(Psn, ClassifyClampsOversizedWindow)
{
	// A window past 2^23 must not turn packets ahead of ePSN into dups.
	EXPECT_EQ(roce_psn_classify(6, 5, 0xFFFFFFFF), ROCE_PSN_OUT_OF_ORDER);
	EXPECT_EQ(roce_psn_classify(psn_add(5, kHalf - 1), 5, 1u << 24),
		  ROCE_PSN_OUT_OF_ORDER);
	EXPECT_EQ(roce_psn_classify(4, 5, 0xFFFFFFFF), ROCE_PSN_DUPLICATE);
}

TEST(Psn, ClassifyExhaustiveAroundEpsn)
{
	// Every PSN in the space gets exactly the class the IBTA rule gives.
	const u32 epsn = 0x000010;
	u32 counts[3] = {};

	for (u32 psn = 0; psn <= ROCE_PSN_MASK; psn++)
		counts[roce_psn_classify(psn, epsn, ROCE_PSN_DUP_WINDOW)]++;
	EXPECT_EQ(counts[ROCE_PSN_EXPECTED], 1u);
	EXPECT_EQ(counts[ROCE_PSN_DUPLICATE], kHalf);
	EXPECT_EQ(counts[ROCE_PSN_OUT_OF_ORDER], kHalf - 1);
}

} // namespace

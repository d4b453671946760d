// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// roce_crc32_copy() must be exactly memcpy + roce_crc32_update: same bytes
// in dst, same CRC state, nothing written outside dst, at every length and
// at every source and destination alignment.  The CRC side is checked
// against the bit-at-a-time reference too, so a table bug cannot hide
// behind two functions sharing it.
#include <gtest/gtest.h>

#include <vector>

#include "crc32.h"
#include "icrc.h"
#include "test_util.hpp"

namespace {

using sroce_test::ref_crc32;
using sroce_test::Rng;

constexpr u8 kGuard = 0xA5;

TEST(Crc32Copy, EqualsMemcpyPlusCrcAtEveryLengthAndAlignment)
{
	Rng rng(41);
	auto src = rng.bytes(600);

	for (size_t sa = 0; sa < 8; sa++) {
		for (size_t da = 0; da < 8; da += 3) {
			for (size_t n = 0; n + sa <= 300; n++) {
				std::vector<u8> dst(n + 16, kGuard);
				u32 seed = rng.u32v();
				u32 got = roce_crc32_copy(seed, dst.data() + da,
							  src.data() + sa, n);
				ASSERT_EQ(got, roce_crc32_update(seed, src.data() + sa, n))
					<< "src align " << sa << " dst align " << da
					<< " len " << n;
				ASSERT_EQ(got, ref_crc32(seed, src.data() + sa, n));
				ASSERT_TRUE(std::equal(src.begin() + sa, src.begin() + sa + n,
						       dst.begin() + da));
				for (size_t i = 0; i < da; i++)
					ASSERT_EQ(dst[i], kGuard) << "written before dst";
				for (size_t i = da + n; i < dst.size(); i++)
					ASSERT_EQ(dst[i], kGuard) << "written past dst";
			}
		}
	}
}

// How the data path uses it: an ICRC started over the headers, then the
// payload copied into the packet piece by piece (page fragments).
TEST(Crc32Copy, ChainsLikeUpdateOverAPayloadInPieces)
{
	Rng rng(43);
	auto payload = rng.bytes(4096 + 13);
	u32 whole = roce_crc32_update(ROCE_ICRC_SEED, payload.data(), payload.size());

	for (size_t cut : {0u, 1u, 7u, 8u, 1000u, 4095u, 4096u, 4109u}) {
		std::vector<u8> dst(payload.size());
		u32 st = roce_crc32_copy(ROCE_ICRC_SEED, dst.data(), payload.data(), cut);
		st = roce_crc32_copy(st, dst.data() + cut, payload.data() + cut,
				     payload.size() - cut);
		ASSERT_EQ(st, whole) << cut;
		ASSERT_EQ(dst, payload) << cut;
	}
}

// The carry-less-multiply engine, called directly: same CRC as the
// bit-at-a-time reference and same bytes as memcpy, from its 64-byte
// minimum through several folding rounds, with and without the copy.
class Crc32Fold : public ::testing::TestWithParam<int> {};

TEST_P(Crc32Fold, EqualsReferenceAtEveryLengthAndAlignment)
{
	const int engine = GetParam();

	if (roce_crc32_accel_begin() < engine)
		GTEST_SKIP() << "this CPU lacks engine " << engine
			     << " (1: PCLMULQDQ, 2: AVX-512 VPCLMULQDQ)";
	Rng rng(47);
	auto src = rng.bytes(1200);

	for (size_t sa = 0; sa < 16; sa += 5) {
		for (size_t n = ROCE_CRC32_FOLD_MIN; n + sa <= 1100; n++) {
			std::vector<u8> dst(n + 32, kGuard);
			u32 seed = rng.u32v();
			u32 want = ref_crc32(seed, src.data() + sa, n);

			ASSERT_EQ(roce_crc32_fold(seed, nullptr, src.data() + sa, n, engine),
				  want)
				<< "CRC only, src align " << sa << " len " << n;
			ASSERT_EQ(roce_crc32_fold(seed, dst.data() + 3, src.data() + sa, n,
						  engine),
				  want)
				<< "copy, src align " << sa << " len " << n;
			ASSERT_TRUE(std::equal(src.begin() + sa, src.begin() + sa + n,
					       dst.begin() + 3));
			for (size_t i = 0; i < 3; i++)
				ASSERT_EQ(dst[i], kGuard) << "written before dst";
			for (size_t i = 3 + n; i < dst.size(); i++)
				ASSERT_EQ(dst[i], kGuard) << "written past dst";
		}
	}
	roce_crc32_accel_end();
}

INSTANTIATE_TEST_SUITE_P(Engines, Crc32Fold,
			 ::testing::Values(ROCE_CRC32_ENGINE_PCLMUL, ROCE_CRC32_ENGINE_WIDE));

// The dispatcher hands the engine 4 KiB at a time and the tables the
// rest: a megabyte in odd pieces must come out as the tables alone say.
TEST(Crc32Dispatch, ChunksAgreeWithTables)
{
	Rng rng(53);
	auto src = rng.bytes((1u << 20) + 77);
	std::vector<u8> dst(src.size());

	roce_crc32_host_engine = ROCE_CRC32_ENGINE_TABLE;
	u32 tables = roce_crc32_update(ROCE_ICRC_SEED, src.data(), src.size());
	ASSERT_EQ(tables, ref_crc32(ROCE_ICRC_SEED, src.data(), src.size()));

	for (int engine : {ROCE_CRC32_ENGINE_PCLMUL, ROCE_CRC32_ENGINE_WIDE}) {
		roce_crc32_host_engine = engine;
		for (size_t cut : {0u, 63u, 64u, 255u, 4095u, 8192u + 5u, 300000u}) {
			u32 st = roce_crc32_copy(ROCE_ICRC_SEED, dst.data(), src.data(), cut);
			st = roce_crc32_update(st, src.data() + cut, src.size() - cut);
			ASSERT_EQ(st, tables) << "engine " << engine << " cut " << cut;
			ASSERT_TRUE(std::equal(src.begin(), src.begin() + cut, dst.begin()))
				<< cut;
		}
	}
	roce_crc32_host_engine = ROCE_CRC32_ENGINE_WIDE;
}

// Where the platform's CRC takes over (crc32_le() on kernels that
// accelerate it), a copy is a memcpy and the CRC of the copy: both must
// still agree with the tables, split anywhere, short pieces included.
TEST(Crc32Dispatch, PlatformCrcTakesCopiesAndUpdates)
{
	Rng rng(59);
	auto src = rng.bytes(70000);
	std::vector<u8> dst(src.size());
	u32 whole = ref_crc32(ROCE_ICRC_SEED, src.data(), src.size());

	roce_crc32_host_platform = true;
	for (size_t cut : {0u, 1u, 63u, 64u, 4096u, 69999u}) {
		std::fill(dst.begin(), dst.end(), 0);
		u32 st = roce_crc32_copy(ROCE_ICRC_SEED, dst.data(), src.data(), cut);
		st = roce_crc32_update(st, src.data() + cut, src.size() - cut);
		EXPECT_EQ(st, whole) << "cut " << cut;
		EXPECT_TRUE(std::equal(src.begin(), src.begin() + cut, dst.begin())) << cut;
	}
	roce_crc32_host_platform = false;
}

} // namespace

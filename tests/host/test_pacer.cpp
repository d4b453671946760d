// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// The per-QP token bucket (GCRA), driven with made-up time.
#include <gtest/gtest.h>

#include <cstdint>

#include "pacer.h"

namespace {

constexpr u64 kStart = 5'000'000'000;
// 8000 kbit/s is exactly one byte per microsecond.
constexpr u32 kBytePerUs = 8000;

TEST(Pacer, UnlimitedNeverWaits)
{
	roce_pacer pc;
	roce_pacer_init(&pc, 0, 0);
	for (int i = 0; i < 1000; i++) {
		EXPECT_EQ(roce_pacer_next_ns(&pc, kStart), kStart);
		roce_pacer_charge(&pc, 65536, kStart);
	}
	EXPECT_EQ(roce_pacer_cost_ns(&pc, 4096), 0u);
}

TEST(Pacer, CostIsBytesOverRate)
{
	roce_pacer pc;
	roce_pacer_init(&pc, kBytePerUs, 0);
	EXPECT_EQ(roce_pacer_cost_ns(&pc, 1000), 1'000'000u);
	roce_pacer_set(&pc, 10'000'000, 0); // 10 Gb/s: 0.8 ns per byte
	EXPECT_NEAR(double(roce_pacer_cost_ns(&pc, 4096)), 3276.8, 1.0);
	roce_pacer_set(&pc, 1, 0); // 1 kbit/s: 8 ms per byte
	EXPECT_EQ(roce_pacer_cost_ns(&pc, 1), 8'000'000u);
}

TEST(Pacer, NoBurstSpacesPacketsByTheirCost)
{
	roce_pacer pc;
	roce_pacer_init(&pc, kBytePerUs, 0);
	EXPECT_EQ(roce_pacer_next_ns(&pc, kStart), kStart); // idle: go
	roce_pacer_charge(&pc, 1000, kStart);
	EXPECT_EQ(roce_pacer_next_ns(&pc, kStart), kStart + 1'000'000);
	EXPECT_EQ(roce_pacer_next_ns(&pc, kStart + 999'999), kStart + 1'000'000);
	EXPECT_EQ(roce_pacer_next_ns(&pc, kStart + 1'000'000), kStart + 1'000'000);
}

TEST(Pacer, BurstGoesBackToBackThenWaits)
{
	roce_pacer pc;
	roce_pacer_init(&pc, kBytePerUs, 4000);
	int sent = 0;
	while (roce_pacer_next_ns(&pc, kStart) <= kStart) {
		roce_pacer_charge(&pc, 1000, kStart);
		ASSERT_LT(++sent, 100);
	}
	// 4000 bytes of burst plus the packet that crosses the line.
	EXPECT_EQ(sent, 5);
	EXPECT_EQ(roce_pacer_next_ns(&pc, kStart), kStart + 1'000'000);
}

TEST(Pacer, IdlingEarnsAtMostOneBurst)
{
	roce_pacer pc;
	roce_pacer_init(&pc, kBytePerUs, 4000);
	roce_pacer_charge(&pc, 1000, kStart);
	const u64 later = kStart + 3'600'000'000'000ull; // an hour
	int sent = 0;
	while (roce_pacer_next_ns(&pc, later) <= later) {
		roce_pacer_charge(&pc, 1000, later);
		ASSERT_LT(++sent, 100);
	}
	EXPECT_EQ(sent, 5);
}

// The send engine wakes late (timer slack); the burst absorbs lateness
// up to tau, so the long-run rate is still exact.
TEST(Pacer, LateWakeupsStillHoldTheRateWithinBurst)
{
	roce_pacer pc;
	const u32 rate = 50'000; // 50 Mb/s
	const u32 pkt = 1100;
	roce_pacer_init(&pc, rate, 16384);
	u64 now = kStart, bytes = 0;
	const u64 end = kStart + 5'000'000'000ull;
	u32 jitter = 1;
	while (now < end) {
		u64 next = roce_pacer_next_ns(&pc, now);
		if (next > now) {
			jitter = jitter * 1103515245 + 12345;
			now = next + (jitter >> 16) % 120'000; // up to 120 us late
			continue;
		}
		roce_pacer_charge(&pc, pkt, now);
		bytes += pkt;
	}
	double mbps = bytes * 8.0 / 5.0 / 1e6;
	EXPECT_NEAR(mbps, 50.0, 50.0 * 0.005);
}

TEST(Pacer, RateChangeAppliesToLaterPackets)
{
	roce_pacer pc;
	roce_pacer_init(&pc, kBytePerUs, 0);
	roce_pacer_charge(&pc, 1000, kStart); // 1 ms at the old rate
	roce_pacer_set(&pc, 2 * kBytePerUs, 0);
	EXPECT_EQ(roce_pacer_next_ns(&pc, kStart), kStart + 1'000'000);
	roce_pacer_charge(&pc, 1000, kStart + 1'000'000);
	EXPECT_EQ(roce_pacer_next_ns(&pc, kStart), kStart + 1'500'000);
	// Going unlimited lets everything through at once.
	roce_pacer_set(&pc, 0, 0);
	EXPECT_EQ(roce_pacer_next_ns(&pc, kStart), kStart);
}

TEST(Pacer, NoOverflowAtTheEdges)
{
	roce_pacer pc;
	roce_pacer_init(&pc, 1, UINT32_MAX); // slowest rate, largest burst
	// 2^32 bytes at 8 ms each: ~3.4e16 ns, representable.
	EXPECT_NEAR(double(roce_pacer_cost_ns(&pc, UINT32_MAX)),
		    double(UINT32_MAX) * 8e6, double(UINT32_MAX) * 8e6 * 1e-9);
	roce_pacer_init(&pc, UINT32_MAX, 0); // fastest: ~2 ps per byte
	EXPECT_LE(roce_pacer_cost_ns(&pc, UINT32_MAX), 8'000'100u);
	EXPECT_GE(roce_pacer_cost_ns(&pc, UINT32_MAX), 7'990'000u);
}

} // namespace

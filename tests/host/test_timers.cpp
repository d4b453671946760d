// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <gtest/gtest.h>

#include "timers.h"

namespace {

TEST(Timers, AckTimeoutIsPowerOfTwoTimes4096ns)
{
	EXPECT_EQ(roce_ack_timeout_ns(0), static_cast<u64>(ROCE_TIMEOUT_NONE));
	EXPECT_EQ(roce_ack_timeout_ns(1), 8192u);
	EXPECT_EQ(roce_ack_timeout_ns(14), 67108864u);		// ~67 ms
	EXPECT_EQ(roce_ack_timeout_ns(18), 1073741824u);	// ~1.07 s
	EXPECT_EQ(roce_ack_timeout_ns(31), 8796093022208ull);	// ~8.8 ks
	for (u8 t = 1; t < 31; t++)
		EXPECT_EQ(roce_ack_timeout_ns(static_cast<u8>(t + 1)),
			  2 * roce_ack_timeout_ns(t));
}

TEST(Timers, AckTimeoutOutOfRangeClampsNotInfinite)
{
	EXPECT_EQ(roce_ack_timeout_ns(32), roce_ack_timeout_ns(31));
	EXPECT_EQ(roce_ack_timeout_ns(255), roce_ack_timeout_ns(31));
}

TEST(Timers, RetransTimeoutDoublesPerTimeoutInRowUpTo8x)
{
	const u64 base = roce_ack_timeout_ns(14);	// ~67 ms

	EXPECT_EQ(roce_retrans_timeout_ns(14, 0), base);
	EXPECT_EQ(roce_retrans_timeout_ns(14, 1), 2 * base);
	EXPECT_EQ(roce_retrans_timeout_ns(14, 2), 4 * base);
	EXPECT_EQ(roce_retrans_timeout_ns(14, 3), 8 * base);
	for (unsigned n = 4; n <= 255; n++)
		EXPECT_EQ(roce_retrans_timeout_ns(14, static_cast<u8>(n)), 8 * base)
			<< n << " in a row";
}

TEST(Timers, RetransTimeoutBackOffStopsAtTheCeiling)
{
	// 16: ~268 ms, doubled twice would be ~1.07 s.
	EXPECT_EQ(roce_retrans_timeout_ns(16, 1), 2 * roce_ack_timeout_ns(16));
	EXPECT_EQ(roce_retrans_timeout_ns(16, 2), ROCE_RTO_BACKOFF_CEIL_NS);
	EXPECT_EQ(roce_retrans_timeout_ns(16, 7), ROCE_RTO_BACKOFF_CEIL_NS);
	// Never below the configured timeout, even when that is longer.
	for (u8 t = 18; t <= ROCE_ACK_TIMEOUT_MAX; t++)
		for (u8 n = 0; n < 8; n++)
			EXPECT_EQ(roce_retrans_timeout_ns(t, n), roce_ack_timeout_ns(t));
	// Monotonic in the number of timeouts, for every timeout value.
	for (u8 t = 1; t <= ROCE_ACK_TIMEOUT_MAX; t++)
		for (u8 n = 0; n < 8; n++) {
			EXPECT_LE(roce_retrans_timeout_ns(t, n),
				  roce_retrans_timeout_ns(t, static_cast<u8>(n + 1)));
			EXPECT_GE(roce_retrans_timeout_ns(t, n), roce_ack_timeout_ns(t));
		}
}

// UCX's default (UCX_RC_TIMEOUT 1 s: timeout 18), rdma_cm's on ConnectX: a
// dead peer is declared after (retry_cnt + 1) timeouts of the configured
// length, as on ConnectX; backed off, it took 27 s instead of 8.6 (UCX's gtest
// uct_cancel_test waited that long for every flush with cancel).
TEST(Timers, TimeoutsOfASecondOrMoreAreNotBackedOff)
{
	for (u8 t = 18; t <= ROCE_ACK_TIMEOUT_MAX; t++)
		for (unsigned n = 0; n <= 255; n++)
			EXPECT_EQ(roce_retrans_timeout_ns(t, static_cast<u8>(n)),
				  roce_ack_timeout_ns(t))
				<< "timeout " << int(t) << ", " << n << " in a row";
}

TEST(Timers, RetransTimeoutInfiniteStaysInfinite)
{
	for (u8 n = 0; n < 8; n++)
		EXPECT_EQ(roce_retrans_timeout_ns(0, n),
			  static_cast<u64>(ROCE_TIMEOUT_NONE));
}

TEST(Timers, RnrTimerMatchesIbtaTable)
{
	// roce-and-anchors.md 1.6, in units of 0.01 ms.
	const u32 hundredths_ms[32] = {
		65536, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192,
		256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192,
		12288, 16384, 24576, 32768, 49152,
	};

	for (u8 c = 0; c < 32; c++)
		EXPECT_EQ(roce_rnr_timer_ns(c), hundredths_ms[c] * 10000ull)
			<< "code " << int(c);
	// rxe has 61410 us here; the IBTA value is 61.44 ms.
	EXPECT_EQ(roce_rnr_timer_ns(25), 61440000u);
	// Only five bits are a timer code.
	EXPECT_EQ(roce_rnr_timer_ns(32), roce_rnr_timer_ns(0));
	EXPECT_EQ(roce_rnr_timer_ns(0x21), roce_rnr_timer_ns(1));
}

TEST(Timers, RnrTimerIncreasesFromCode1)
{
	for (u8 c = 1; c < 31; c++)
		EXPECT_LT(roce_rnr_timer_ns(c), roce_rnr_timer_ns(static_cast<u8>(c + 1)));
	EXPECT_GT(roce_rnr_timer_ns(0), roce_rnr_timer_ns(31));
}

int count_retries(bool (*consume)(u8 *), u8 start, int cap)
{
	u8 left = start;
	int n = 0;

	while (n < cap && consume(&left))
		n++;
	return n;
}

TEST(Timers, RetryCnt7IsSevenRetriesNotInfinite)
{
	for (u8 v = 0; v <= ROCE_RETRY_CNT_MAX; v++)
		EXPECT_EQ(count_retries(roce_retry_consume, v, 1000), v);
	u8 left = 0;
	EXPECT_FALSE(roce_retry_consume(&left));
	EXPECT_EQ(left, 0);
}

TEST(Timers, RnrRetry7IsInfinite)
{
	for (u8 v = 0; v < ROCE_RNR_RETRY_INFINITE; v++)
		EXPECT_EQ(count_retries(roce_rnr_retry_consume, v, 1000), v);
	EXPECT_EQ(count_retries(roce_rnr_retry_consume, 7, 100000), 100000);
	u8 left = 7;
	EXPECT_TRUE(roce_rnr_retry_consume(&left));
	EXPECT_EQ(left, 7);
}

} // namespace

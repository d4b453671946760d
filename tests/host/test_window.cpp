// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// The RC send window: full when lossless, small after a timeout, and how
// it grows back.
#include <gtest/gtest.h>

#include "window.h"

namespace {

TEST(Window, StartsFullAndStaysFullWithoutLoss)
{
	roce_window w;
	roce_window_init(&w, 128);
	EXPECT_EQ(w.cwnd, 128u);
	roce_window_acked(&w, 1'000'000);
	EXPECT_EQ(w.cwnd, 128u);
	EXPECT_TRUE(roce_window_open(&w, 127));
	EXPECT_FALSE(roce_window_open(&w, 128));
}

TEST(Window, TinyMaximumIsRaisedToTheMinimum)
{
	roce_window w;
	roce_window_init(&w, 1);
	EXPECT_EQ(w.cwnd, static_cast<u32>(ROCE_WINDOW_MIN));
}

TEST(Window, TimeoutRestartsSmallAndHalvesThreshold)
{
	roce_window w;
	roce_window_init(&w, 128);
	roce_window_timeout(&w);
	EXPECT_EQ(w.cwnd, static_cast<u32>(ROCE_WINDOW_MIN));
	EXPECT_EQ(w.ssthresh, 64u);
	EXPECT_TRUE(roce_window_open(&w, ROCE_WINDOW_MIN - 1));
	EXPECT_FALSE(roce_window_open(&w, ROCE_WINDOW_MIN));
}

TEST(Window, RepeatedTimeoutsNeverGoBelowTheMinimum)
{
	roce_window w;
	roce_window_init(&w, 128);
	for (int i = 0; i < 10; i++)
		roce_window_timeout(&w);
	EXPECT_EQ(w.cwnd, static_cast<u32>(ROCE_WINDOW_MIN));
	EXPECT_EQ(w.ssthresh, static_cast<u32>(ROCE_WINDOW_MIN));
}

TEST(Window, DoublesPerRoundTripUpToThreshold)
{
	roce_window w;
	roce_window_init(&w, 128);
	roce_window_timeout(&w);	// cwnd 4, ssthresh 64
	u32 expect[] = {8, 16, 32, 64};
	for (u32 e : expect) {
		roce_window_acked(&w, w.cwnd);	// one round trip: a whole window ACKed
		EXPECT_EQ(w.cwnd, e);
	}
}

TEST(Window, AboveThresholdOnePsnPerWindowOfAcks)
{
	roce_window w;
	roce_window_init(&w, 128);
	roce_window_timeout(&w);
	roce_window_acked(&w, 60);	// 4 -> 64
	ASSERT_EQ(w.cwnd, 64u);
	roce_window_acked(&w, 63);
	EXPECT_EQ(w.cwnd, 64u);
	roce_window_acked(&w, 1);
	EXPECT_EQ(w.cwnd, 65u);
	roce_window_acked(&w, 65 + 66);
	EXPECT_EQ(w.cwnd, 67u);
}

TEST(Window, ByteAtATimeMatchesOneBigAck)
{
	roce_window a, b;
	roce_window_init(&a, 128);
	roce_window_init(&b, 128);
	roce_window_timeout(&a);
	roce_window_timeout(&b);
	roce_window_acked(&a, 500);
	for (int i = 0; i < 500; i++)
		roce_window_acked(&b, 1);
	EXPECT_EQ(a.cwnd, b.cwnd);
	EXPECT_EQ(a.credit, b.credit);
}

TEST(Window, RecoversToTheMaximumAndStops)
{
	roce_window w;
	roce_window_init(&w, 128);
	roce_window_timeout(&w);
	roce_window_acked(&w, 100'000);
	EXPECT_EQ(w.cwnd, 128u);
	EXPECT_LE(w.cwnd, w.max);
}

} // namespace

namespace {

TEST(Window, AsksForAnAckOnlyWhenASmallWindowFills)
{
	roce_window w;
	roce_window_init(&w, 128);
	EXPECT_FALSE(roce_window_wants_ack(&w, 127));	// full window: ACK every 32 does
	roce_window_timeout(&w);
	EXPECT_FALSE(roce_window_wants_ack(&w, ROCE_WINDOW_MIN - 2));
	EXPECT_TRUE(roce_window_wants_ack(&w, ROCE_WINDOW_MIN - 1));
}

} // namespace

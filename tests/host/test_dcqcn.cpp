// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// DCQCN reaction point and CNP limiter, driven with made-up time.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <vector>

#include "dcqcn.h"

namespace {

constexpr u64 kUs = 1000;
constexpr u64 kStart = 1'000'000'000; // arbitrary, nonzero "boot time"

roce_dcqcn_params defaults()
{
	roce_dcqcn_params p;
	roce_dcqcn_default_params(&p);
	return p;
}

// Small round numbers so every step can be computed by hand.
roce_dcqcn_params simple()
{
	roce_dcqcn_params p = defaults();
	p.max_rate_kbps = 1'000'000; // 1 Gb/s
	p.min_rate_kbps = 1'000;
	p.ai_rate_kbps = 10'000;
	p.hai_rate_kbps = 100'000;
	p.byte_reset = 0; // timer only unless a test turns it on
	return p;
}

roce_dcqcn_rp fresh_rp(const roce_dcqcn_params &p)
{
	roce_dcqcn_rp rp;
	roce_dcqcn_rp_init(&rp, &p, kStart);
	return rp;
}

double alpha_of(const roce_dcqcn_rp &rp)
{
	return double(rp.alpha) / ROCE_DCQCN_ALPHA_ONE;
}

TEST(DcqcnParams, DefaultsArePaperAndConnectX)
{
	roce_dcqcn_params p = defaults();
	EXPECT_TRUE(roce_dcqcn_params_valid(&p));
	EXPECT_EQ(p.g, 4u); // 4/1024 = 1/256
	EXPECT_EQ(p.initial_alpha, ROCE_DCQCN_ALPHA_ONE);
	EXPECT_EQ(p.alpha_period_ns, 55 * kUs);
	EXPECT_EQ(p.rate_period_ns, 300 * kUs);
	EXPECT_EQ(p.byte_reset, 32767u);
	EXPECT_EQ(p.fast_recovery_steps, 5u);
	EXPECT_EQ(p.ai_rate_kbps, 5000u);
	EXPECT_EQ(p.hai_rate_kbps, 50000u);
	EXPECT_EQ(p.min_rate_kbps, 1000u);
	EXPECT_EQ(p.cnp_interval_ns, 50 * kUs);
	EXPECT_EQ(p.rate_reduce_period_ns, 4 * kUs);
}

TEST(DcqcnParams, EachBadValueIsRefused)
{
	auto bad = [](void (*change)(roce_dcqcn_params &)) {
		roce_dcqcn_params p = defaults();
		change(p);
		return !roce_dcqcn_params_valid(&p);
	};
	EXPECT_TRUE(bad([](roce_dcqcn_params &p) { p.min_rate_kbps = 0; }));
	EXPECT_TRUE(bad([](roce_dcqcn_params &p) { p.min_rate_kbps = p.max_rate_kbps + 1; }));
	EXPECT_TRUE(bad([](roce_dcqcn_params &p) { p.ai_rate_kbps = 0; }));
	EXPECT_TRUE(bad([](roce_dcqcn_params &p) { p.hai_rate_kbps = 0; }));
	EXPECT_TRUE(bad([](roce_dcqcn_params &p) { p.g = 0; }));
	EXPECT_TRUE(bad([](roce_dcqcn_params &p) { p.g = ROCE_DCQCN_G_ONE + 1; }));
	EXPECT_TRUE(bad([](roce_dcqcn_params &p) { p.initial_alpha = ROCE_DCQCN_ALPHA_ONE + 1; }));
	EXPECT_TRUE(bad([](roce_dcqcn_params &p) { p.alpha_period_ns = 0; }));
	EXPECT_TRUE(bad([](roce_dcqcn_params &p) { p.rate_period_ns = 0; }));
	EXPECT_TRUE(bad([](roce_dcqcn_params &p) { p.byte_reset = ROCE_DCQCN_MIN_BYTE_RESET - 1; }));
	EXPECT_TRUE(bad([](roce_dcqcn_params &p) {
		p.fast_recovery_steps = ROCE_DCQCN_MAX_FAST_RECOVERY + 1; }));
	// The edges themselves are fine.
	EXPECT_FALSE(bad([](roce_dcqcn_params &p) { p.min_rate_kbps = p.max_rate_kbps; }));
	EXPECT_FALSE(bad([](roce_dcqcn_params &p) { p.g = ROCE_DCQCN_G_ONE; }));
	EXPECT_FALSE(bad([](roce_dcqcn_params &p) { p.byte_reset = 0; }));
	EXPECT_FALSE(bad([](roce_dcqcn_params &p) { p.byte_reset = ROCE_DCQCN_MIN_BYTE_RESET; }));
	EXPECT_FALSE(bad([](roce_dcqcn_params &p) { p.fast_recovery_steps = 0; }));
	EXPECT_FALSE(bad([](roce_dcqcn_params &p) { p.max_rate_kbps = UINT32_MAX; }));
}

TEST(DcqcnRp, StartsUnlimitedAtMaxRate)
{
	roce_dcqcn_params p = simple();
	roce_dcqcn_rp rp = fresh_rp(p);
	EXPECT_EQ(rp.rc_kbps, p.max_rate_kbps);
	EXPECT_EQ(roce_dcqcn_rp_stage(&rp, &p), ROCE_DCQCN_UNLIMITED);
	// Time passing changes nothing while unlimited.
	EXPECT_FALSE(roce_dcqcn_rp_advance(&rp, &p, kStart + 10'000'000));
	EXPECT_FALSE(roce_dcqcn_rp_sent(&rp, &p, 1 << 20));
	EXPECT_EQ(rp.rc_kbps, p.max_rate_kbps);
}

TEST(DcqcnRp, FirstCnpHalvesAtAlphaOne)
{
	roce_dcqcn_params p = simple();
	roce_dcqcn_rp rp = fresh_rp(p);
	ASSERT_TRUE(roce_dcqcn_rp_cnp(&rp, &p, kStart, 0));
	EXPECT_EQ(rp.rt_kbps, 1'000'000u);
	EXPECT_EQ(rp.rc_kbps, 500'000u);
	// alpha = (1-g)*1 + g = 1
	EXPECT_EQ(rp.alpha, ROCE_DCQCN_ALPHA_ONE);
	EXPECT_EQ(roce_dcqcn_rp_stage(&rp, &p), ROCE_DCQCN_FAST_RECOVERY);
}

TEST(DcqcnRp, FirstCutStartsFromTheMeasuredRate)
{
	roce_dcqcn_params p = simple();
	p.rate_reduce_period_ns = 1;
	roce_dcqcn_rp rp = fresh_rp(p);
	ASSERT_TRUE(roce_dcqcn_rp_cnp(&rp, &p, kStart, 40'000));
	EXPECT_EQ(rp.rt_kbps, 40'000u);
	EXPECT_EQ(rp.rc_kbps, 20'000u);
	// Once limited, the measurement no longer matters.
	ASSERT_TRUE(roce_dcqcn_rp_cnp(&rp, &p, kStart + 1, 35'000));
	EXPECT_EQ(rp.rt_kbps, 20'000u);
	// A measurement above the line rate or below min is clamped / ignored.
	rp = fresh_rp(p);
	roce_dcqcn_rp_cnp(&rp, &p, kStart, 5'000'000);
	EXPECT_EQ(rp.rt_kbps, p.max_rate_kbps);
	rp = fresh_rp(p);
	roce_dcqcn_rp_cnp(&rp, &p, kStart, 1);
	EXPECT_EQ(rp.rt_kbps, p.min_rate_kbps);
	EXPECT_EQ(rp.rc_kbps, p.min_rate_kbps);
}

TEST(DcqcnRp, CutIsRcTimesOneMinusHalfAlpha)
{
	roce_dcqcn_params p = simple();
	p.initial_alpha = ROCE_DCQCN_ALPHA_ONE / 4;
	roce_dcqcn_rp rp = fresh_rp(p);
	ASSERT_TRUE(roce_dcqcn_rp_cnp(&rp, &p, kStart, 0));
	EXPECT_EQ(rp.rc_kbps, 875'000u); // 1 - 0.25/2
	// alpha = 0.25 * (1 - 1/256) + 1/256
	EXPECT_NEAR(alpha_of(rp), 0.25 * 255 / 256 + 1.0 / 256, 1e-5);
}

TEST(DcqcnRp, CutStopsAtMinRate)
{
	roce_dcqcn_params p = simple();
	p.rate_reduce_period_ns = 1;
	roce_dcqcn_rp rp = fresh_rp(p);
	for (int i = 0; i < 64; i++)
		roce_dcqcn_rp_cnp(&rp, &p, kStart + i * 10, 0);
	EXPECT_EQ(rp.rc_kbps, p.min_rate_kbps);
	EXPECT_GE(rp.rt_kbps, p.min_rate_kbps);
}

TEST(DcqcnRp, CnpsWithinReducePeriodAreIgnored)
{
	roce_dcqcn_params p = simple();
	roce_dcqcn_rp rp = fresh_rp(p);
	ASSERT_TRUE(roce_dcqcn_rp_cnp(&rp, &p, kStart, 0));
	EXPECT_FALSE(roce_dcqcn_rp_cnp(&rp, &p, kStart + p.rate_reduce_period_ns - 1, 0));
	EXPECT_EQ(rp.rc_kbps, 500'000u);
	EXPECT_TRUE(roce_dcqcn_rp_cnp(&rp, &p, kStart + p.rate_reduce_period_ns, 0));
	EXPECT_EQ(rp.rc_kbps, 250'000u);
	EXPECT_EQ(rp.rt_kbps, 500'000u);
}

TEST(DcqcnRp, AlphaDecaysOncePerPeriodWithoutCnp)
{
	roce_dcqcn_params p = simple();
	roce_dcqcn_rp rp = fresh_rp(p);
	roce_dcqcn_rp_cnp(&rp, &p, kStart, 0);
	roce_dcqcn_rp_advance(&rp, &p, kStart + p.alpha_period_ns - 1);
	EXPECT_EQ(rp.alpha, ROCE_DCQCN_ALPHA_ONE);
	roce_dcqcn_rp_advance(&rp, &p, kStart + p.alpha_period_ns);
	EXPECT_EQ(rp.alpha, ROCE_DCQCN_ALPHA_ONE / 256 * 255);
	roce_dcqcn_rp_advance(&rp, &p, kStart + 2 * p.alpha_period_ns);
	EXPECT_NEAR(alpha_of(rp), (255.0 / 256) * (255.0 / 256), 1e-5);
}

TEST(DcqcnRp, LazyAlphaDecayMatchesStepByStep)
{
	roce_dcqcn_params p = simple();
	roce_dcqcn_rp lazy = fresh_rp(p), stepped = fresh_rp(p);
	const u64 n = 300;
	for (u64 i = 1; i <= n; i++)
		roce_dcqcn_rp_advance(&stepped, &p, kStart + i * p.alpha_period_ns);
	roce_dcqcn_rp_advance(&lazy, &p, kStart + n * p.alpha_period_ns + 5);
	// Rounding differs (squaring vs repeated products): a few ulps of Q20.
	EXPECT_NEAR(double(lazy.alpha), double(stepped.alpha), 64.0);
	EXPECT_NEAR(alpha_of(lazy), std::pow(255.0 / 256, n), 1e-3);
	EXPECT_EQ(lazy.next_alpha_ns, stepped.next_alpha_ns);
}

TEST(DcqcnRp, AlphaReachesZeroAfterLongQuietWithoutLooping)
{
	roce_dcqcn_params p = simple();
	p.alpha_period_ns = 1; // a day of quiet is ~8.6e13 periods
	roce_dcqcn_rp rp = fresh_rp(p);
	roce_dcqcn_rp_advance(&rp, &p, kStart + 86'400ull * 1'000'000'000);
	EXPECT_EQ(rp.alpha, 0u);
	// With alpha 0 a CNP cuts nothing; alpha is then exactly g.
	roce_dcqcn_rp_cnp(&rp, &p, kStart + 86'400ull * 1'000'000'000, 0);
	EXPECT_EQ(rp.rc_kbps, p.max_rate_kbps); // alpha 0: no cut
	EXPECT_EQ(rp.alpha, p.g << 10);
}

TEST(DcqcnRp, FastRecoveryForFirstFEventsThenAdditiveThenUnlimited)
{
	roce_dcqcn_params p = simple();
	roce_dcqcn_rp rp = fresh_rp(p);
	roce_dcqcn_rp_cnp(&rp, &p, kStart, 0); // Rt 1000000, Rc 500000
	u64 t = kStart;
	u32 rc = 500'000, rt = 1'000'000;
	for (u32 i = 0; i < p.fast_recovery_steps; i++) {
		EXPECT_EQ(roce_dcqcn_rp_stage(&rp, &p), ROCE_DCQCN_FAST_RECOVERY) << i;
		t += p.rate_period_ns;
		EXPECT_TRUE(roce_dcqcn_rp_advance(&rp, &p, t));
		rc = (rt + rc + 1) / 2;
		EXPECT_EQ(rp.rc_kbps, rc) << i;
		EXPECT_EQ(rp.rt_kbps, rt) << i;
	}
	// Rc is within 1/32 of Rt: Rt at max, so additive stays clamped.
	EXPECT_EQ(roce_dcqcn_rp_stage(&rp, &p), ROCE_DCQCN_ADDITIVE);
	while (rp.limited) {
		t += p.rate_period_ns;
		roce_dcqcn_rp_advance(&rp, &p, t);
		ASSERT_LT(t - kStart, 1'000'000'000u) << "never recovered";
	}
	EXPECT_EQ(rp.rc_kbps, p.max_rate_kbps);
	EXPECT_EQ(roce_dcqcn_rp_stage(&rp, &p), ROCE_DCQCN_UNLIMITED);
}

TEST(DcqcnRp, AdditiveRaisesTargetByRai)
{
	roce_dcqcn_params p = simple();
	p.rate_reduce_period_ns = 1;
	roce_dcqcn_rp rp = fresh_rp(p);
	// Two cuts: Rt = 500000, Rc = 250000, well below max.
	roce_dcqcn_rp_cnp(&rp, &p, kStart, 0);
	roce_dcqcn_rp_cnp(&rp, &p, kStart + 1, 0);
	ASSERT_EQ(rp.rt_kbps, 500'000u);
	u64 t = kStart + 1;
	for (u32 i = 0; i < p.fast_recovery_steps; i++)
		roce_dcqcn_rp_advance(&rp, &p, t += p.rate_period_ns);
	ASSERT_EQ(roce_dcqcn_rp_stage(&rp, &p), ROCE_DCQCN_ADDITIVE);
	for (u32 i = 1; i <= 3; i++) {
		u32 rc = rp.rc_kbps;
		roce_dcqcn_rp_advance(&rp, &p, t += p.rate_period_ns);
		EXPECT_EQ(rp.rt_kbps, 500'000u + i * p.ai_rate_kbps);
		EXPECT_EQ(rp.rc_kbps, (rp.rt_kbps + rc + 1) / 2);
		// Timer alone never reaches hyper: BC stays 0 <= F.
		EXPECT_EQ(roce_dcqcn_rp_stage(&rp, &p), ROCE_DCQCN_ADDITIVE);
	}
}

TEST(DcqcnRp, HyperIncreaseNeedsBothCountersPastF)
{
	roce_dcqcn_params p = simple();
	p.max_rate_kbps = 100'000'000;
	p.byte_reset = 10'000;
	p.rate_reduce_period_ns = 1;
	roce_dcqcn_rp rp = fresh_rp(p);
	for (int i = 0; i < 12; i++) // down to ~24 Mb/s
		roce_dcqcn_rp_cnp(&rp, &p, kStart + i, 0);
	u64 t = kStart + 12;
	const u32 f = p.fast_recovery_steps;
	// F+1 timer events: T = F+1, BC = 0 -> additive.
	for (u32 i = 0; i <= f; i++)
		roce_dcqcn_rp_advance(&rp, &p, t += p.rate_period_ns);
	EXPECT_EQ(roce_dcqcn_rp_stage(&rp, &p), ROCE_DCQCN_ADDITIVE);
	// F byte events: BC = F, still not past F.
	roce_dcqcn_rp_sent(&rp, &p, f * p.byte_reset);
	EXPECT_EQ(rp.byte_events, f);
	EXPECT_EQ(roce_dcqcn_rp_stage(&rp, &p), ROCE_DCQCN_ADDITIVE);
	roce_dcqcn_rp_sent(&rp, &p, p.byte_reset - 1);
	EXPECT_EQ(rp.byte_events, f); // the counter keeps the remainder
	roce_dcqcn_rp_sent(&rp, &p, 1);
	EXPECT_EQ(rp.byte_events, f + 1);
	EXPECT_EQ(roce_dcqcn_rp_stage(&rp, &p), ROCE_DCQCN_HYPER);
	// i = min(T, BC) - F = 1 for this event, then 2 once T = F+2 too.
	u32 rt = rp.rt_kbps;
	roce_dcqcn_rp_sent(&rp, &p, p.byte_reset);
	EXPECT_EQ(rp.rt_kbps, rt + p.hai_rate_kbps);
	roce_dcqcn_rp_advance(&rp, &p, t += p.rate_period_ns);
	rt = rp.rt_kbps;
	roce_dcqcn_rp_sent(&rp, &p, p.byte_reset);
	EXPECT_EQ(rp.rt_kbps, rt + 2 * p.hai_rate_kbps);
}

TEST(DcqcnRp, CnpRestartsTheCountersAndTimers)
{
	roce_dcqcn_params p = simple();
	p.byte_reset = 10'000;
	roce_dcqcn_rp rp = fresh_rp(p);
	roce_dcqcn_rp_cnp(&rp, &p, kStart, 0);
	u64 t = kStart;
	for (int i = 0; i < 3; i++)
		roce_dcqcn_rp_advance(&rp, &p, t += p.rate_period_ns);
	roce_dcqcn_rp_sent(&rp, &p, 25'000);
	ASSERT_EQ(rp.timer_events, 3u);
	ASSERT_EQ(rp.byte_events, 2u);
	roce_dcqcn_rp_cnp(&rp, &p, t + 10, 0);
	EXPECT_EQ(rp.timer_events, 0u);
	EXPECT_EQ(rp.byte_events, 0u);
	EXPECT_EQ(rp.bytes, 0u);
	EXPECT_EQ(rp.next_increase_ns, t + 10 + p.rate_period_ns);
	EXPECT_EQ(roce_dcqcn_rp_stage(&rp, &p), ROCE_DCQCN_FAST_RECOVERY);
}

TEST(DcqcnRp, ByteCounterOffNeverCounts)
{
	roce_dcqcn_params p = simple();
	roce_dcqcn_rp rp = fresh_rp(p);
	roce_dcqcn_rp_cnp(&rp, &p, kStart, 0);
	EXPECT_FALSE(roce_dcqcn_rp_sent(&rp, &p, UINT32_MAX));
	EXPECT_EQ(rp.byte_events, 0u);
}

TEST(DcqcnRp, CatchUpIsBoundedPerCall)
{
	roce_dcqcn_params p = simple();
	p.ai_rate_kbps = 1; // recovery from min rate takes ~1e6 AI steps
	p.hai_rate_kbps = 1;
	p.byte_reset = ROCE_DCQCN_MIN_BYTE_RESET;
	p.rate_reduce_period_ns = 1;
	roce_dcqcn_rp rp = fresh_rp(p);
	for (int i = 0; i < 64; i++)
		roce_dcqcn_rp_cnp(&rp, &p, kStart + i, 0);
	ASSERT_EQ(rp.rt_kbps, p.min_rate_kbps);
	const u64 later = kStart + 1'000'000 * u64(p.rate_period_ns);
	roce_dcqcn_rp_advance(&rp, &p, later);
	EXPECT_EQ(rp.timer_events, ROCE_DCQCN_MAX_CATCHUP);
	roce_dcqcn_rp_sent(&rp, &p, UINT32_MAX);
	EXPECT_EQ(rp.byte_events, ROCE_DCQCN_MAX_CATCHUP);
	EXPECT_LT(rp.bytes, p.byte_reset);
	// Later calls go on where the last stopped.
	roce_dcqcn_rp_advance(&rp, &p, later);
	EXPECT_EQ(rp.timer_events, 2 * ROCE_DCQCN_MAX_CATCHUP);
	EXPECT_TRUE(rp.limited);
}

TEST(DcqcnRp, NoOverflowAtTheTopOfTheRange)
{
	roce_dcqcn_params p = simple();
	p.max_rate_kbps = UINT32_MAX;
	p.min_rate_kbps = 1;
	p.ai_rate_kbps = UINT32_MAX;
	p.hai_rate_kbps = UINT32_MAX;
	p.byte_reset = ROCE_DCQCN_MIN_BYTE_RESET;
	p.fast_recovery_steps = 0;
	ASSERT_TRUE(roce_dcqcn_params_valid(&p));
	roce_dcqcn_rp rp = fresh_rp(p);
	roce_dcqcn_rp_cnp(&rp, &p, kStart, 0);
	EXPECT_EQ(rp.rc_kbps, UINT32_MAX - (UINT32_MAX >> 1));
	// Alternate timer and byte events: with F = 0 the stage is hyper
	// as soon as both counted one, and i * R_HAI is far beyond a u32.
	u64 t = kStart;
	bool saw_hyper = false;
	for (int i = 0; i < 64 && rp.limited; i++) {
		u32 rc = rp.rc_kbps;
		saw_hyper |= roce_dcqcn_rp_stage(&rp, &p) == ROCE_DCQCN_HYPER;
		if (i & 1)
			roce_dcqcn_rp_sent(&rp, &p, p.byte_reset);
		else
			roce_dcqcn_rp_advance(&rp, &p, t += p.rate_period_ns);
		ASSERT_GE(rp.rc_kbps, rc) << "wrapped at event " << i;
	}
	EXPECT_TRUE(saw_hyper);
	EXPECT_EQ(rp.rc_kbps, UINT32_MAX); // clamped, not wrapped
	EXPECT_FALSE(rp.limited);
}

TEST(DcqcnRp, LoweringMaxRateClampsARunningRp)
{
	roce_dcqcn_params p = simple();
	roce_dcqcn_rp rp = fresh_rp(p);
	roce_dcqcn_rp_cnp(&rp, &p, kStart, 0);
	p.max_rate_kbps = 100'000;
	roce_dcqcn_rp_advance(&rp, &p, kStart + 1);
	EXPECT_EQ(rp.rc_kbps, 100'000u);
	EXPECT_EQ(rp.rt_kbps, 100'000u);
	roce_dcqcn_rp_advance(&rp, &p, kStart + p.rate_period_ns);
	EXPECT_FALSE(rp.limited);
}

TEST(DcqcnRp, GOfOneMakesAlphaAllOrNothing)
{
	roce_dcqcn_params p = simple();
	p.g = ROCE_DCQCN_G_ONE;
	p.initial_alpha = 0;
	roce_dcqcn_rp rp = fresh_rp(p);
	roce_dcqcn_rp_cnp(&rp, &p, kStart, 0);
	EXPECT_EQ(rp.rc_kbps, p.max_rate_kbps); // alpha was 0
	EXPECT_EQ(rp.alpha, ROCE_DCQCN_ALPHA_ONE);
	roce_dcqcn_rp_advance(&rp, &p, kStart + p.alpha_period_ns);
	EXPECT_EQ(rp.alpha, 0u);
}

TEST(DcqcnNp, OneCnpPerInterval)
{
	roce_dcqcn_params p = defaults();
	roce_dcqcn_np np = {};
	EXPECT_TRUE(roce_dcqcn_np_ce(&np, &p, kStart));
	EXPECT_FALSE(roce_dcqcn_np_ce(&np, &p, kStart));
	EXPECT_FALSE(roce_dcqcn_np_ce(&np, &p, kStart + p.cnp_interval_ns - 1));
	EXPECT_TRUE(roce_dcqcn_np_ce(&np, &p, kStart + p.cnp_interval_ns));
	EXPECT_FALSE(roce_dcqcn_np_ce(&np, &p, kStart + p.cnp_interval_ns + 1));
}

TEST(DcqcnRp, BurstOfLocalPushbacksIsOneCut)
{
	roce_dcqcn_params p = simple();
	p.cnp_interval_ns = 50 * kUs;
	p.rate_reduce_period_ns = 4 * kUs;
	roce_dcqcn_rp rp = fresh_rp(p);
	roce_dcqcn_np limit = {};

	// 100 refusals in the first 49 us: one cut, from the measured rate.
	EXPECT_TRUE(roce_dcqcn_rp_pushback(&rp, &limit, &p, kStart, 800'000));
	for (u64 t = 1; t < 50; t++)
		EXPECT_FALSE(roce_dcqcn_rp_pushback(&rp, &limit, &p,
						    kStart + t * kUs - 1, 800'000));
	EXPECT_EQ(rp.rt_kbps, 800'000u);
	EXPECT_EQ(rp.rc_kbps, 400'000u);
	// One interval later, the refusals go on: the next cut.
	EXPECT_TRUE(roce_dcqcn_rp_pushback(&rp, &limit, &p, kStart + 50 * kUs, 0));
	EXPECT_EQ(rp.rc_kbps, 200'000u);
}

TEST(DcqcnRp, PushbackRightAfterACnpCutsNoFurther)
{
	roce_dcqcn_params p = simple();
	roce_dcqcn_rp rp = fresh_rp(p);
	roce_dcqcn_np limit = {};

	ASSERT_TRUE(roce_dcqcn_rp_cnp(&rp, &p, kStart, 0));
	// Same congestion, within the reduce period: no second cut.
	EXPECT_FALSE(roce_dcqcn_rp_pushback(&rp, &limit, &p, kStart + 1, 0));
	EXPECT_EQ(rp.rc_kbps, 500'000u);
	// A pushback is a cut like a CNP, and the CNP's cut is not
	// undone: a later CNP goes on from there.
	EXPECT_TRUE(roce_dcqcn_rp_cnp(&rp, &p, kStart + p.rate_reduce_period_ns, 0));
	EXPECT_EQ(rp.rc_kbps, 250'000u);
}

TEST(DcqcnNp, UdFlowsAreLimitedEachOnItsOwn)
{
	roce_dcqcn_params p = defaults();
	roce_dcqcn_np_flows f = {};
	const u32 a = 0x1234, b = 0x1235;	// different slots

	EXPECT_TRUE(roce_dcqcn_np_flow_ce(&f, a, &p, kStart));
	EXPECT_TRUE(roce_dcqcn_np_flow_ce(&f, b, &p, kStart + 1));
	EXPECT_FALSE(roce_dcqcn_np_flow_ce(&f, a, &p, kStart + 2));
	EXPECT_FALSE(roce_dcqcn_np_flow_ce(&f, b, &p, kStart + p.cnp_interval_ns));
	EXPECT_TRUE(roce_dcqcn_np_flow_ce(&f, a, &p, kStart + p.cnp_interval_ns));
	EXPECT_TRUE(roce_dcqcn_np_flow_ce(&f, b, &p, kStart + p.cnp_interval_ns + 1));
}

TEST(DcqcnNp, UdFlowsSharingASlotAreNeverStarved)
{
	roce_dcqcn_params p = defaults();
	roce_dcqcn_np_flows f = {};
	const u32 a = 7, b = 7 + ROCE_DCQCN_NP_FLOW_SLOTS;	// same slot

	// Alternating marks: each flow still gets its CNP (more often
	// than once per interval is the price of the collision).
	for (u64 i = 0; i < 10; i++)
		EXPECT_TRUE(roce_dcqcn_np_flow_ce(&f, i % 2 ? b : a, &p, kStart + i));
	// One flow on its own is limited again.
	EXPECT_FALSE(roce_dcqcn_np_flow_ce(&f, b, &p, kStart + 10));
}

TEST(DcqcnNp, FirstCeAtTimeZeroStillSends)
{
	roce_dcqcn_params p = defaults();
	roce_dcqcn_np np = {};
	EXPECT_TRUE(roce_dcqcn_np_ce(&np, &p, 0));
	EXPECT_FALSE(roce_dcqcn_np_ce(&np, &p, 1));
}

TEST(DcqcnNp, ZeroIntervalSendsForEveryMark)
{
	roce_dcqcn_params p = defaults();
	p.cnp_interval_ns = 0;
	roce_dcqcn_np np = {};
	for (int i = 0; i < 5; i++)
		EXPECT_TRUE(roce_dcqcn_np_ce(&np, &p, kStart));
}

// Byte for byte what a ConnectX-4 Lx sends (tests/fuzz/corpus capture),
// up to the ICRC, which net.c adds over the IP header too.
TEST(DcqcnCnp, MatchesConnectXCapture)
{
	std::ifstream f(SROCE_FUZZ_CORPUS_DIR "/cnp_connectx4.bin", std::ios::binary);
	std::vector<u8> want((std::istreambuf_iterator<char>(f)), {});
	ASSERT_EQ(want.size(), size_t(ROCE_BTH_LEN + ROCE_CNP_PAD_LEN + ROCE_ICRC_LEN));
	roce_pkt_info pkt;
	ASSERT_EQ(roce_parse(want.data(), want.size(), &pkt), 0);

	u8 buf[64];
	memset(buf, 0xa5, sizeof(buf));
	ASSERT_EQ(roce_dcqcn_build_cnp(buf, sizeof(buf), pkt.bth.dest_qpn),
		  int(ROCE_BTH_LEN + ROCE_CNP_PAD_LEN));
	EXPECT_EQ(std::vector<u8>(buf, buf + ROCE_BTH_LEN + ROCE_CNP_PAD_LEN),
		  std::vector<u8>(want.begin(), want.end() - ROCE_ICRC_LEN));
	EXPECT_TRUE(pkt.bth.becn);
}

TEST(DcqcnCnp, TooSmallBufferIsRefused)
{
	u8 buf[ROCE_BTH_LEN + ROCE_CNP_PAD_LEN - 1];
	EXPECT_LT(roce_dcqcn_build_cnp(buf, sizeof(buf), 0x11), 0);
}

} // namespace

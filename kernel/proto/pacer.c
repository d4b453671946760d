// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "pacer.h"

/* 8 bits per byte, 10^6 ns per ms: bytes * 8e6 / kbit/s is ns. */
#define NS_BITS_PER_KBPS 8000000ull

void roce_pacer_init(struct roce_pacer *pc, u32 rate_kbps, u32 burst_bytes)
{
	memset(pc, 0, sizeof(*pc));
	roce_pacer_set(pc, rate_kbps, burst_bytes);
}

void roce_pacer_set(struct roce_pacer *pc, u32 rate_kbps, u32 burst_bytes)
{
	pc->rate_kbps = rate_kbps;
	pc->burst_bytes = burst_bytes;
	/* At most 8e6 << 16 (rate 1 kbit/s): no overflow below. */
	pc->ns_per_byte_q16 = rate_kbps ?
		roce_div_u64_u32(NS_BITS_PER_KBPS << 16, rate_kbps) : 0;
	pc->tau_ns = roce_pacer_cost_ns(pc, burst_bytes);
}

u64 roce_pacer_cost_ns(const struct roce_pacer *pc, u32 bytes)
{
	/* bytes < 2^32 and the cost < 2^39: split so the product fits. */
	u64 hi = (u64)(bytes >> 16) * pc->ns_per_byte_q16;
	u64 lo = (u64)(bytes & 0xffff) * pc->ns_per_byte_q16;

	return hi + (lo >> 16);
}

u64 roce_pacer_next_ns(const struct roce_pacer *pc, u64 now)
{
	if (!pc->rate_kbps || pc->tat_ns <= now + pc->tau_ns)
		return now;
	return pc->tat_ns - pc->tau_ns;
}

void roce_pacer_charge(struct roce_pacer *pc, u32 bytes, u64 now)
{
	if (!pc->rate_kbps)
		return;
	if (pc->tat_ns < now)
		pc->tat_ns = now;	/* idle time earns no more than tau */
	pc->tat_ns += roce_pacer_cost_ns(pc, bytes);
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "timers.h"

/* 4.096 us, the unit of the local ACK timeout. */
#define ACK_TIMEOUT_UNIT_NS 4096ull

u64 roce_ack_timeout_ns(u8 timeout)
{
	if (timeout == 0)
		return ROCE_TIMEOUT_NONE;
	if (timeout > ROCE_ACK_TIMEOUT_MAX)
		timeout = ROCE_ACK_TIMEOUT_MAX;
	return ACK_TIMEOUT_UNIT_NS << timeout;
}

u64 roce_retrans_timeout_ns(u8 timeout, u8 in_row)
{
	u64 base = roce_ack_timeout_ns(timeout);
	u64 ns;

	if (base == ROCE_TIMEOUT_NONE || base >= ROCE_RTO_BACKOFF_CEIL_NS)
		return base;
	ns = base << (in_row < ROCE_RTO_BACKOFF_MAX_SHIFT ?
		      in_row : ROCE_RTO_BACKOFF_MAX_SHIFT);
	return ns < ROCE_RTO_BACKOFF_CEIL_NS ? ns : ROCE_RTO_BACKOFF_CEIL_NS;
}

/* IBTA RNR NAK timer field encoding, in microseconds. */
static const u32 rnr_timer_us[ROCE_RNR_TIMER_MAX + 1] = {
	655360,	10,	20,	30,	40,	60,	80,	120,
	160,	240,	320,	480,	640,	960,	1280,	1920,
	2560,	3840,	5120,	7680,	10240,	15360,	20480,	30720,
	40960,	61440,	81920,	122880,	163840,	245760,	327680,	491520,
};

u64 roce_rnr_timer_ns(u8 code)
{
	return (u64)rnr_timer_us[code & ROCE_RNR_TIMER_MAX] * 1000;
}

bool roce_retry_consume(u8 *left)
{
	if (*left == 0)
		return false;
	(*left)--;
	return true;
}

bool roce_rnr_retry_consume(u8 *left)
{
	if (*left >= ROCE_RNR_RETRY_INFINITE)
		return true;
	if (*left == 0)
		return false;
	(*left)--;
	return true;
}

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Per-QP pacing: a token bucket written as GCRA (the "theoretical arrival
 * time" form), so its whole state is two times and a rate.  Each packet
 * moves tat on by its cost (bytes at the rate); a packet may go when tat
 * is at most tau ahead of now, tau being the burst's worth of time.  So a
 * QP never sends more than burst bytes (plus the packet that crosses the
 * line) faster than its rate, and idling earns at most one burst.
 *
 * Time is caller-supplied u64 ns; the kernel arms an hrtimer for
 * roce_pacer_next_ns() instead of spinning.
 */
#ifndef SROCE_PROTO_PACER_H
#define SROCE_PROTO_PACER_H

#include "compat.h"

ROCE_EXTERN_C_BEGIN

struct roce_pacer {
	u32 rate_kbps;		/* 0: unlimited, every packet may go */
	u32 burst_bytes;
	u64 ns_per_byte_q16;	/* cost of one byte, Q16 ns */
	u64 tau_ns;		/* the burst's worth of time at this rate */
	u64 tat_ns;		/* theoretical arrival time of the next byte */
};

/* Starts idle: the first burst may go at once. */
void roce_pacer_init(struct roce_pacer *pc, u32 rate_kbps, u32 burst_bytes);

/* New rate or burst; what was already sent keeps its cost. */
void roce_pacer_set(struct roce_pacer *pc, u32 rate_kbps, u32 burst_bytes);

/* Earliest time the next packet may go: <= @now means now. */
u64 roce_pacer_next_ns(const struct roce_pacer *pc, u64 now);

/* Cost of @bytes at the current rate, in ns (0 when unlimited). */
u64 roce_pacer_cost_ns(const struct roce_pacer *pc, u32 bytes);

/* A packet of @bytes went out at @now. */
void roce_pacer_charge(struct roce_pacer *pc, u32 bytes, u64 now);

ROCE_EXTERN_C_END

#endif /* SROCE_PROTO_PACER_H */

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * 24-bit packet sequence number arithmetic.
 *
 * PSNs wrap at 2^24 and the initial PSN is random per QP, so a wrap can
 * happen on the first packet of a connection: never compare PSNs with
 * plain < or >, always through psn_diff().
 */
#ifndef SROCE_PROTO_PSN_H
#define SROCE_PROTO_PSN_H

#include "compat.h"

#define ROCE_PSN_BITS 24
#define ROCE_PSN_MASK 0xFFFFFFu
/* Half the PSN space: the largest distance psn_diff() can express. */
#define ROCE_PSN_HALF (1u << (ROCE_PSN_BITS - 1))

static inline u32 psn_add(u32 psn, u32 n)
{
	return (psn + n) & ROCE_PSN_MASK;
}

static inline u32 psn_sub(u32 psn, u32 n)
{
	return (psn - n) & ROCE_PSN_MASK;
}

/*
 * Signed distance a - b in [-2^23, 2^23 - 1].  Shifting the 24-bit
 * difference into the top of a 32-bit word and arithmetically back
 * sign-extends it; gcc and clang (and the kernel, which relies on it
 * everywhere) define both the conversion and the signed shift.
 */
static inline s32 psn_diff(u32 a, u32 b)
{
	return (s32)((a - b) << 8) >> 8;
}

static inline bool psn_before(u32 a, u32 b)
{
	return psn_diff(a, b) < 0;
}

static inline bool psn_before_eq(u32 a, u32 b)
{
	return psn_diff(a, b) <= 0;
}

static inline bool psn_after(u32 a, u32 b)
{
	return psn_diff(a, b) > 0;
}

static inline bool psn_after_eq(u32 a, u32 b)
{
	return psn_diff(a, b) >= 0;
}

/* True if psn lies in the half-open modular range [lo, hi). */
static inline bool psn_in_range(u32 psn, u32 lo, u32 hi)
{
	return ((psn - lo) & ROCE_PSN_MASK) < ((hi - lo) & ROCE_PSN_MASK);
}

enum roce_psn_class {
	ROCE_PSN_EXPECTED,
	ROCE_PSN_DUPLICATE,
	ROCE_PSN_OUT_OF_ORDER,
};

/*
 * IBTA's responder PSN check splits the PSN space around the expected
 * PSN: the 2^23 PSNs behind ePSN are duplicates (re-ACK, re-read,
 * replay atomic), the rest are ahead of ePSN and thus a sequence error.
 * Pass window = ROCE_PSN_DUP_WINDOW for exactly that rule.
 */
#define ROCE_PSN_DUP_WINDOW ROCE_PSN_HALF

/*
 * Classify a request PSN at the responder.  A smaller window narrows the
 * duplicate region to [epsn - window, epsn - 1]; anything else that is
 * not ePSN is OUT_OF_ORDER.  window is clamped to 2^23 because a larger
 * one would call packets *ahead* of ePSN duplicates, and window 0 means
 * "no duplicates", not infinite.
 */
static inline enum roce_psn_class roce_psn_classify(u32 psn, u32 epsn,
						    u32 window)
{
	u32 behind = (epsn - psn) & ROCE_PSN_MASK;

	if (behind == 0)
		return ROCE_PSN_EXPECTED;
	if (window > ROCE_PSN_DUP_WINDOW)
		window = ROCE_PSN_DUP_WINDOW;
	if (behind <= window)
		return ROCE_PSN_DUPLICATE;
	return ROCE_PSN_OUT_OF_ORDER;
}

#endif /* SROCE_PROTO_PSN_H */

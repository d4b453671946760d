/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * DCQCN (Zhu et al., SIGCOMM'15) as pure arithmetic on caller-supplied
 * time: the reaction point (RP, the data sender's rate) and the
 * notification point's CNP limiter (NP, the receiver).  The kernel feeds
 * in ktime_get_ns(); the host tests feed in whatever time they like, so
 * every stage transition is checked deterministically.
 *
 * Rates are kbit/s in a u32 (1 kbit/s .. 4.29 Tb/s), alpha is Q20
 * (1 << 20 == 1.0), times are u64 nanoseconds.
 */
#ifndef SROCE_PROTO_DCQCN_H
#define SROCE_PROTO_DCQCN_H

#include "compat.h"

ROCE_EXTERN_C_BEGIN

#define ROCE_DCQCN_ALPHA_ONE	(1u << 20)
#define ROCE_DCQCN_G_ONE	1024u	/* g is given in 1/1024ths */

/*
 * Every knob, settable at run time.  Defaults (roce_dcqcn_default_params)
 * follow the paper where it gives a value, ConnectX firmware otherwise.
 */
struct roce_dcqcn_params {
	u32 max_rate_kbps;	/* where an RP starts and recovers to */
	u32 min_rate_kbps;	/* a cut never goes below (RPG_MIN_RATE) */
	u32 ai_rate_kbps;	/* R_AI: additive increase step */
	u32 hai_rate_kbps;	/* R_HAI: hyper increase step */
	u32 g;			/* alpha gain in 1/1024ths (paper 1/256 = 4) */
	u32 initial_alpha;	/* Q20; the paper starts at 1.0 */
	u32 alpha_period_ns;	/* K: alpha decays once per K without CNP */
	u32 rate_period_ns;	/* T: the increase timer (RPG_TIME_RESET) */
	u32 byte_reset;		/* B: bytes per byte-counter event, 0 = off */
	u32 fast_recovery_steps;	/* F */
	u32 rate_reduce_period_ns;	/* at most one cut per this */
	u32 cnp_interval_ns;	/* NP: at most one CNP per flow per this */
};

void roce_dcqcn_default_params(struct roce_dcqcn_params *p);

/*
 * Whether @p is usable: min <= max rate, nonzero rates and periods,
 * 1 <= g <= 1024, alpha <= 1.0, byte_reset 0 or >= ROCE_DCQCN_MIN_BYTE_RESET.
 * The kernel refuses a run-time change that makes this false.
 */
#define ROCE_DCQCN_MIN_BYTE_RESET	1024u
#define ROCE_DCQCN_MAX_FAST_RECOVERY	64u
bool roce_dcqcn_params_valid(const struct roce_dcqcn_params *p);

/* Reaction point: one per sending QP. */
enum roce_dcqcn_stage {
	ROCE_DCQCN_UNLIMITED,		/* at max rate, nothing to recover */
	ROCE_DCQCN_FAST_RECOVERY,	/* Rc halves its distance to Rt */
	ROCE_DCQCN_ADDITIVE,		/* Rt += R_AI */
	ROCE_DCQCN_HYPER,		/* Rt += i * R_HAI */
};

struct roce_dcqcn_rp {
	u32 rc_kbps;		/* current rate: what the pacer enforces */
	u32 rt_kbps;		/* target rate */
	u32 alpha;		/* Q20 estimate of congestion extent */
	u32 timer_events;	/* T: increase timer expiries since the cut */
	u32 byte_events;	/* BC: byte counter expiries since the cut */
	u32 bytes;		/* sent towards the next byte event */
	bool limited;		/* false: rc == max rate, timers idle */
	u64 last_cut_ns;
	u64 next_alpha_ns;	/* next alpha decay */
	u64 next_increase_ns;	/* next increase timer event */
};

void roce_dcqcn_rp_init(struct roce_dcqcn_rp *rp,
			const struct roce_dcqcn_params *p, u64 now);

/*
 * A CNP arrived: Rt = Rc, Rc *= (1 - alpha/2) (not below min), alpha
 * grows by g, both increase counters restart.  A CNP within
 * rate_reduce_period_ns of the previous cut is ignored.  Returns true if
 * the rate was cut.
 */
bool roce_dcqcn_rp_cnp(struct roce_dcqcn_rp *rp,
		       const struct roce_dcqcn_params *p, u64 now);

/*
 * Runs the alpha and increase timers up to @now (lazily: the kernel calls
 * this before each packet rather than arming two timers per QP).  At most
 * ROCE_DCQCN_MAX_CATCHUP increase events per call; later calls continue.
 * Returns true if Rc changed.
 */
#define ROCE_DCQCN_MAX_CATCHUP	256u
bool roce_dcqcn_rp_advance(struct roce_dcqcn_rp *rp,
			   const struct roce_dcqcn_params *p, u64 now);

/*
 * @bytes went out: the byte counter (at most ROCE_DCQCN_MAX_CATCHUP events
 * per call).  Returns true if Rc changed.
 */
bool roce_dcqcn_rp_sent(struct roce_dcqcn_rp *rp,
			const struct roce_dcqcn_params *p, u32 bytes);

/* The stage the next increase event will run. */
enum roce_dcqcn_stage roce_dcqcn_rp_stage(const struct roce_dcqcn_rp *rp,
					  const struct roce_dcqcn_params *p);

/* Notification point's limiter: one per receiving QP (= per flow). */
struct roce_dcqcn_np {
	bool sent_any;
	u64 last_cnp_ns;
};

/*
 * A CE-marked packet arrived: true if a CNP should go out now (and then
 * counts it as sent), false if one went out less than cnp_interval_ns ago.
 */
bool roce_dcqcn_np_ce(struct roce_dcqcn_np *np,
		      const struct roce_dcqcn_params *p, u64 now);

ROCE_EXTERN_C_END

#endif /* SROCE_PROTO_DCQCN_H */

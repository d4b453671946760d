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
#include "wire.h"

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

/*
 * The defaults as an initializer, so the kernel's per-device settings
 * can start from them statically.
 */
#define ROCE_DCQCN_DEFAULT_PARAMS {					\
	.max_rate_kbps = 100000000,	/* 100 Gb/s until told the link's */ \
	.min_rate_kbps = 1000,		/* ConnectX RPG_MIN_RATE 1 Mb/s */	\
	.ai_rate_kbps = 5000,		/* ConnectX RPG_AI_RATE 5 Mb/s */	\
	.hai_rate_kbps = 50000,		/* ConnectX RPG_HAI_RATE 50 Mb/s */	\
	.g = 4,				/* paper: 1/256 */			\
	.initial_alpha = ROCE_DCQCN_ALPHA_ONE,	/* paper; ConnectX 1023 */	\
	.alpha_period_ns = 55000,	/* paper K = 55 us */			\
	.rate_period_ns = 300000,	/* ConnectX RPG_TIME_RESET 300 us */	\
	.byte_reset = 32767,		/* ConnectX RPG_BYTE_RESET */		\
	.fast_recovery_steps = 5,	/* paper F */				\
	.rate_reduce_period_ns = 4000,	/* ConnectX monitor period 4 us */	\
	.cnp_interval_ns = 50000,	/* paper N = 50 us */			\
}

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
 * rate_reduce_period_ns of the previous cut is ignored.  An RP still at
 * full rate first drops to @current_kbps, the rate the QP was measured
 * sending at (0: unknown), like ConnectX's RATE_TO_SET_ON_FIRST_CNP = 0:
 * a sender far below line rate must not need many cuts to feel one.
 * Returns true if the rate was cut.
 */
bool roce_dcqcn_rp_cnp(struct roce_dcqcn_rp *rp,
		       const struct roce_dcqcn_params *p, u64 now,
		       u32 current_kbps);

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

/*
 * The NP's limiter for UD, whose QP has no one peer: one limiter per flow
 * (the caller's @key for receiving QP, source QP and source address) in
 * a small direct-mapped table, so no per-QP memory.  A flow that finds
 * its slot held by another takes it over: colliding flows may get CNPs
 * more often than once per interval, never less often, so a congested
 * flow is never left unnotified.
 */
#define ROCE_DCQCN_NP_FLOW_SLOTS	64u
struct roce_dcqcn_np_flow {
	u32 key;
	struct roce_dcqcn_np np;	/* sent_any == false: slot unused */
};

struct roce_dcqcn_np_flows {
	struct roce_dcqcn_np_flow slot[ROCE_DCQCN_NP_FLOW_SLOTS];
};

/* roce_dcqcn_np_ce() for the flow @key. */
bool roce_dcqcn_np_flow_ce(struct roce_dcqcn_np_flows *f, u32 key,
			   const struct roce_dcqcn_params *p, u64 now);

/*
 * The local stack refused one of the QP's packets (a qdisc dropping at
 * enqueue, a stopped transmit queue).  For a software sender that is the
 * signal a PFC pause gives a NIC, earlier than any CNP can come back: the
 * RP reacts as to a CNP, and @limit (the QP's own, apart from its NP)
 * makes a burst of refusals within cnp_interval_ns one event, as an NP
 * makes a burst of CE marks one CNP.  Returns true if the rate was cut.
 */
bool roce_dcqcn_rp_pushback(struct roce_dcqcn_rp *rp,
			    struct roce_dcqcn_np *limit,
			    const struct roce_dcqcn_params *p, u64 now,
			    u32 current_kbps);

/*
 * The CNP headers an NP sends, as ConnectX does: BTH opcode 0x81 with
 * BECN set, default P_Key, PSN 0, DestQP = @dest_qpn (the QP that sent
 * the marked data), then 16 zero bytes.  Returns the length written
 * (ROCE_BTH_LEN + ROCE_CNP_PAD_LEN) or a negative -ROCE_PERR_*.
 */
int roce_dcqcn_build_cnp(u8 *buf, size_t cap, u32 dest_qpn);

ROCE_EXTERN_C_END

#endif /* SROCE_PROTO_DCQCN_H */

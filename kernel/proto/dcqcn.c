// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "dcqcn.h"

void roce_dcqcn_default_params(struct roce_dcqcn_params *p)
{
	static const struct roce_dcqcn_params defaults = ROCE_DCQCN_DEFAULT_PARAMS;

	*p = defaults;
}

bool roce_dcqcn_params_valid(const struct roce_dcqcn_params *p)
{
	return p->min_rate_kbps >= 1 && p->min_rate_kbps <= p->max_rate_kbps &&
	       p->ai_rate_kbps >= 1 && p->hai_rate_kbps >= 1 &&
	       p->g >= 1 && p->g <= ROCE_DCQCN_G_ONE &&
	       p->initial_alpha <= ROCE_DCQCN_ALPHA_ONE &&
	       p->alpha_period_ns >= 1 && p->rate_period_ns >= 1 &&
	       (p->byte_reset == 0 || p->byte_reset >= ROCE_DCQCN_MIN_BYTE_RESET) &&
	       p->fast_recovery_steps <= ROCE_DCQCN_MAX_FAST_RECOVERY;
}

void roce_dcqcn_rp_init(struct roce_dcqcn_rp *rp,
			const struct roce_dcqcn_params *p, u64 now)
{
	*rp = (struct roce_dcqcn_rp){
		.rc_kbps = p->max_rate_kbps,
		.rt_kbps = p->max_rate_kbps,
		.alpha = p->initial_alpha,
		.next_alpha_ns = now + p->alpha_period_ns,
		.next_increase_ns = now + p->rate_period_ns,
	};
}

/* Q20 fixed point: a * b for a, b <= 1.0 cannot overflow a u64. */
static u32 q20_mul(u32 a, u32 b)
{
	return (u32)(((u64)a * b) >> 20);
}

/* alpha * (1 - g)^n by squaring, so a long quiet spell costs O(log n). */
static u32 alpha_decay(u32 alpha, u32 g, u64 n)
{
	u32 factor = (ROCE_DCQCN_G_ONE - g) << 10;	/* Q10 -> Q20 */

	while (n && alpha) {
		if (n & 1)
			alpha = q20_mul(alpha, factor);
		factor = q20_mul(factor, factor);
		n >>= 1;
	}
	return alpha;
}

static u32 clamp_rate(u64 kbps, const struct roce_dcqcn_params *p)
{
	if (kbps > p->max_rate_kbps)
		return p->max_rate_kbps;
	if (kbps < p->min_rate_kbps)
		return p->min_rate_kbps;
	return (u32)kbps;
}

bool roce_dcqcn_rp_cnp(struct roce_dcqcn_rp *rp,
		       const struct roce_dcqcn_params *p, u64 now,
		       u32 current_kbps)
{
	u64 cut;

	if (rp->limited && now - rp->last_cut_ns < p->rate_reduce_period_ns)
		return false;
	/* Pending alpha decay first, so alpha reflects the quiet time. */
	roce_dcqcn_rp_advance(rp, p, now);
	if (!rp->limited && current_kbps && current_kbps < rp->rc_kbps)
		rp->rc_kbps = clamp_rate(current_kbps, p);
	cut = ((u64)rp->rc_kbps * rp->alpha) >> 21;	/* Rc * alpha / 2 */
	rp->rt_kbps = rp->rc_kbps;
	rp->rc_kbps = clamp_rate(rp->rc_kbps - cut, p);
	rp->alpha = rp->alpha - q20_mul(rp->alpha, p->g << 10) + (p->g << 10);
	if (rp->alpha > ROCE_DCQCN_ALPHA_ONE)
		rp->alpha = ROCE_DCQCN_ALPHA_ONE;
	rp->timer_events = 0;
	rp->byte_events = 0;
	rp->bytes = 0;
	rp->limited = true;
	rp->last_cut_ns = now;
	rp->next_alpha_ns = now + p->alpha_period_ns;
	rp->next_increase_ns = now + p->rate_period_ns;
	return true;
}

enum roce_dcqcn_stage roce_dcqcn_rp_stage(const struct roce_dcqcn_rp *rp,
					  const struct roce_dcqcn_params *p)
{
	u32 hi = rp->timer_events > rp->byte_events ? rp->timer_events :
						      rp->byte_events;
	u32 lo = rp->timer_events + rp->byte_events - hi;

	if (!rp->limited)
		return ROCE_DCQCN_UNLIMITED;
	if (hi < p->fast_recovery_steps)
		return ROCE_DCQCN_FAST_RECOVERY;
	if (lo > p->fast_recovery_steps)
		return ROCE_DCQCN_HYPER;
	return ROCE_DCQCN_ADDITIVE;
}

/*
 * One increase event, staged by the counts of the events before it, so
 * the first F events after a cut are fast recovery.  The caller counts
 * the event afterwards.
 */
static void rp_increase(struct roce_dcqcn_rp *rp,
			const struct roce_dcqcn_params *p)
{
	u32 lo = rp->timer_events < rp->byte_events ? rp->timer_events :
						      rp->byte_events;

	switch (roce_dcqcn_rp_stage(rp, p)) {
	case ROCE_DCQCN_ADDITIVE:
		rp->rt_kbps = clamp_rate((u64)rp->rt_kbps + p->ai_rate_kbps, p);
		break;
	case ROCE_DCQCN_HYPER:
		rp->rt_kbps = clamp_rate((u64)rp->rt_kbps +
					 (u64)(lo - p->fast_recovery_steps) *
						 p->hai_rate_kbps, p);
		break;
	default:	/* fast recovery: Rt stays */
		break;
	}
	/* Round up, so Rc reaches Rt instead of creeping at it forever. */
	rp->rc_kbps = clamp_rate(((u64)rp->rt_kbps + rp->rc_kbps + 1) >> 1, p);
	if (rp->rc_kbps >= p->max_rate_kbps)
		rp->limited = false;
}

bool roce_dcqcn_rp_advance(struct roce_dcqcn_rp *rp,
			   const struct roce_dcqcn_params *p, u64 now)
{
	u32 before = rp->rc_kbps, n = 0;

	if (now >= rp->next_alpha_ns) {
		u64 periods = roce_div_u64_u32(now - rp->next_alpha_ns,
					       p->alpha_period_ns) + 1;

		rp->alpha = alpha_decay(rp->alpha, p->g, periods);
		rp->next_alpha_ns += periods * p->alpha_period_ns;
	}
	/* The parameters may have changed under a running RP. */
	if (rp->rc_kbps > p->max_rate_kbps || rp->rt_kbps > p->max_rate_kbps) {
		rp->rc_kbps = clamp_rate(rp->rc_kbps, p);
		rp->rt_kbps = clamp_rate(rp->rt_kbps, p);
	}
	if (!rp->limited) {
		rp->next_increase_ns = now + p->rate_period_ns;
		return rp->rc_kbps != before;
	}
	while (rp->limited && now >= rp->next_increase_ns &&
	       n++ < ROCE_DCQCN_MAX_CATCHUP) {
		rp->next_increase_ns += p->rate_period_ns;
		rp_increase(rp, p);
		rp->timer_events++;
	}
	if (!rp->limited)
		rp->next_increase_ns = now + p->rate_period_ns;
	return rp->rc_kbps != before;
}

bool roce_dcqcn_rp_sent(struct roce_dcqcn_rp *rp,
			const struct roce_dcqcn_params *p, u32 bytes)
{
	u32 before = rp->rc_kbps, n = 0;
	u64 total;

	if (!rp->limited || !p->byte_reset)
		return false;
	total = (u64)rp->bytes + bytes;
	while (rp->limited && total >= p->byte_reset &&
	       n++ < ROCE_DCQCN_MAX_CATCHUP) {
		total -= p->byte_reset;
		rp_increase(rp, p);
		rp->byte_events++;
	}
	/* Beyond the catch-up bound the rest counts towards one more event. */
	if (total >= p->byte_reset)
		total = p->byte_reset - 1;
	rp->bytes = rp->limited ? (u32)total : 0;
	return rp->rc_kbps != before;
}

int roce_dcqcn_build_cnp(u8 *buf, size_t cap, u32 dest_qpn)
{
	struct roce_pkt_info pi;

	memset(&pi, 0, sizeof(pi));
	pi.bth.opcode = ROCE_OP_CNP;
	pi.bth.pkey = ROCE_DEFAULT_PKEY;
	pi.bth.becn = true;
	pi.bth.dest_qpn = dest_qpn;
	return roce_build_headers(&pi, buf, cap);
}

bool roce_dcqcn_np_ce(struct roce_dcqcn_np *np,
		      const struct roce_dcqcn_params *p, u64 now)
{
	if (np->sent_any && now - np->last_cnp_ns < p->cnp_interval_ns)
		return false;
	np->sent_any = true;
	np->last_cnp_ns = now;
	return true;
}

bool roce_dcqcn_rp_pushback(struct roce_dcqcn_rp *rp,
			    struct roce_dcqcn_np *limit,
			    const struct roce_dcqcn_params *p, u64 now,
			    u32 current_kbps)
{
	return roce_dcqcn_np_ce(limit, p, now) &&
	       roce_dcqcn_rp_cnp(rp, p, now, current_kbps);
}

bool roce_dcqcn_np_flow_ce(struct roce_dcqcn_np_flows *f, u32 key,
			   const struct roce_dcqcn_params *p, u64 now)
{
	struct roce_dcqcn_np_flow *s = &f->slot[key % ROCE_DCQCN_NP_FLOW_SLOTS];

	if (s->key != key) {
		s->key = key;
		s->np.sent_any = false;
	}
	return roce_dcqcn_np_ce(&s->np, p, now);
}

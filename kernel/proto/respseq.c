// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "respseq.h"
#include "psn.h"

void roce_resp_seq_init(struct roce_resp_seq *s, u32 epsn)
{
	s->epsn = epsn & ROCE_PSN_MASK;
	s->msg = ROCE_MSG_NONE;
	s->nak_pending = false;
	s->uc_drop = false;
	s->renak_in = 0;
}

static enum roce_resp_verdict rc_admit(struct roce_resp_seq *s, u32 psn,
				       u32 flags)
{
	switch (roce_psn_classify(psn, s->epsn, ROCE_PSN_DUP_WINDOW)) {
	case ROCE_PSN_DUPLICATE:
		return ROCE_RESP_DUPLICATE;
	case ROCE_PSN_OUT_OF_ORDER:
		if (s->nak_pending && (!s->renak_in || --s->renak_in))
			return ROCE_RESP_DROP;
		s->nak_pending = true;
		s->renak_in = ROCE_RESP_RENAK_DROPS;
		return ROCE_RESP_NAK_PSN;
	case ROCE_PSN_EXPECTED:
		break;
	}
	s->nak_pending = false;
	if (!roce_opseq_ok((enum roce_msg_in_progress)s->msg, flags))
		return ROCE_RESP_INVALID;
	return ROCE_RESP_EXECUTE;
}

static enum roce_resp_verdict uc_admit(struct roce_resp_seq *s, u32 psn,
				       u32 flags)
{
	bool first = flags & ROCE_OPF_FIRST;

	if (psn != s->epsn || s->uc_drop) {
		/* A gap, or dropping already: only a FIRST starts over. */
		s->msg = ROCE_MSG_NONE;
		if (!first) {
			roce_resp_uc_lost(s, psn);
			return ROCE_RESP_DROP;
		}
		s->uc_drop = false;
		s->epsn = psn;
	}
	/* A FIRST inside a message wins: roce_resp_done() makes it current. */
	if (!first && !roce_opseq_ok((enum roce_msg_in_progress)s->msg, flags)) {
		roce_resp_uc_lost(s, psn);
		return ROCE_RESP_DROP;
	}
	return ROCE_RESP_EXECUTE;
}

enum roce_resp_verdict roce_resp_admit(struct roce_resp_seq *s, bool rc,
				       u32 psn, u32 flags)
{
	psn &= ROCE_PSN_MASK;
	return rc ? rc_admit(s, psn, flags) : uc_admit(s, psn, flags);
}

void roce_resp_done(struct roce_resp_seq *s, u32 flags, u32 npsn)
{
	s->msg = roce_opseq_next((enum roce_msg_in_progress)s->msg, flags);
	s->epsn = psn_add(s->epsn, npsn ? npsn : 1);
}

void roce_resp_rnr(struct roce_resp_seq *s)
{
	/*
	 * Not a sequence NAK for what follows: each one would cost the
	 * requester a transport retry per RNR wait, so a receiver that is
	 * merely slow would fail a QP whose RNR retries are infinite.
	 * Nor later: the requester waits out the RNR timer, then resends.
	 */
	s->nak_pending = true;
	s->renak_in = 0;
}

void roce_resp_uc_lost(struct roce_resp_seq *s, u32 psn)
{
	s->uc_drop = true;
	s->msg = ROCE_MSG_NONE;
	s->epsn = psn_add(psn, 1);
}

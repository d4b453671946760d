// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The RC requester's PSN bookkeeping; see sqtrack.h. */
#include "psn.h"
#include "sqtrack.h"

u32 roce_sq_npsn(u32 length, u32 mtu, bool one_packet)
{
	if (one_packet || !length || !mtu)
		return 1;
	return length / mtu + (length % mtu != 0);
}

u32 roce_sq_ack_through(const struct roce_sq_view *v, u32 comp_psn, u32 psn)
{
	u32 i;

	if (psn_before(psn, comp_psn) && psn_diff(comp_psn, psn) > 1)
		return comp_psn;	/* an old ACK */
	/* Every message whose PSNs are all through @psn: sent in full
	 * (perhaps before a rewind), or the ACK could not name it.
	 */
	for (i = v->retire; i != v->fetch; i++) {
		struct roce_sq_msg *m = roce_sq_at(v, i);

		if (m->state == ROCE_SQ_DONE)
			continue;
		if (!m->npsn)
			break;
		/* Moving past an unanswered READ or atomic would drop its
		 * response when it comes, and stop the timer that asks again.
		 */
		if (m->rd_atomic) {
			if (psn_after_eq(psn, m->first_psn))
				psn = psn_sub(m->first_psn, 1);
			break;
		}
		if (psn_after(m->last_psn, psn))
			break;
		m->state = ROCE_SQ_DONE;
	}
	return psn_after_eq(psn, comp_psn) ? psn_add(psn, 1) : comp_psn;
}

bool roce_sq_find(const struct roce_sq_view *v, u32 psn, u32 *slot)
{
	u32 i;

	for (i = v->retire; i != v->fetch; i++) {
		const struct roce_sq_msg *m = roce_sq_at(v, i);

		if (m->state == ROCE_SQ_DONE)
			continue;
		if (!m->npsn)
			break;
		if (psn_in_range(psn, m->first_psn, psn_add(m->last_psn, 1))) {
			*slot = i;
			return true;
		}
	}
	return false;
}

bool roce_sq_read_resp_offset(const struct roce_sq_msg *m, u32 psn, u32 mtu,
			      bool last, u32 payload_len, u32 *offset)
{
	s32 index = psn_diff(psn, m->first_psn);
	u64 off = (u64)(u32)index * mtu;

	if (index < 0 || off > m->length || payload_len > m->length - off)
		return false;
	if (last ? off + payload_len != m->length : payload_len != mtu)
		return false;
	*offset = (u32)off;
	return true;
}

bool roce_sq_outstanding(const struct roce_sq_view *v, u32 comp_psn,
			 u32 sent_end, u32 psn)
{
	u32 slot;

	return psn_in_range(psn, comp_psn, sent_end) && roce_sq_find(v, psn, &slot);
}

void roce_sq_seek(const struct roce_sq_view *v, u32 comp_psn, u32 mtu,
		  struct roce_sq_pos *pos)
{
	const struct roce_sq_msg *m = NULL;
	u32 i, outstanding = 0;
	s32 done;

	for (i = v->retire; i != v->fetch; i++) {
		m = roce_sq_at(v, i);
		if (m->state == ROCE_SQ_DONE)
			continue;
		if (!m->npsn || psn_after_eq(m->last_psn, comp_psn))
			break;
		if (m->rd_atomic)
			outstanding++;
	}
	pos->cur = i;
	pos->rd_atomic = outstanding;
	for (; i != v->fetch; i++) {
		struct roce_sq_msg *t = roce_sq_at(v, i);

		if (t->state == ROCE_SQ_SENT)
			t->state = ROCE_SQ_QUEUED;
	}
	if (pos->cur == v->fetch || !m->npsn) {
		/* Everything sent is acknowledged: go on with new work. */
		pos->psn = comp_psn;
		pos->offset = 0;
		return;
	}
	done = psn_diff(comp_psn, m->first_psn);
	if (done < 0)
		done = 0;
	pos->psn = psn_add(m->first_psn, done);
	pos->offset = (u64)done * mtu < m->length ? (u32)done * mtu : m->length;
}

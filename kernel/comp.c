// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The completer: what comes back to a requester (ACKs, NAKs, READ
 * responses, atomic ACKs) retires send WQEs, and the two timers that keep
 * an RC QP moving when nothing comes back (local ACK timeout, RNR wait).
 * Runs in softirq; state shared with the send work is under req.lock.
 */
#include "proto/psn.h"
#include "proto/timers.h"
#include "proto/window.h"
#include "sroce.h"
#include "sroce_trace.h"

/*
 * Responses up to @next (exclusive) are in: progress, so the retry
 * counters and the send window recover.
 */
static void comp_advance(struct sroce_qp *qp, u32 next)
{
	roce_window_acked(&qp->req.window, psn_diff(next, qp->req.comp_psn));
	qp->req.comp_psn = next;
	qp->req.gap_asked = false;
	qp->req.rnr_naked = false;
	qp->req.retry_left = qp->retry_cnt;
	qp->req.rnr_retry_left = qp->rnr_retry;
	qp->req.timeouts_in_row = 0;
	/* Packets sent before a rewind arrived after all: skip them. */
	if (psn_after(qp->req.comp_psn, qp->req.psn))
		sroce_req_seek(qp);
}

/* Everything up to and including @psn arrived; SENDs and WRITEs there are done. */
static void comp_ack_through(struct sroce_qp *qp, u32 psn)
{
	struct roce_sq_view v = sroce_sq_view(qp);
	u32 next = roce_sq_ack_through(&v, qp->req.comp_psn, psn);

	if (next != qp->req.comp_psn)
		comp_advance(qp, next);
	sroce_sq_retire(qp);
}

static void comp_restart_timer(struct sroce_qp *qp)
{
	if (qp->req.comp_psn == qp->req.sent_end || !qp->timeout) {
		sroce_retrans_stop(qp);
		return;
	}
	sroce_retrans_start(qp);
}

/* The oldest outstanding WQE fails with @status; so does the QP. */
static void comp_fail(struct sroce_qp *qp, u8 status)
{
	if (qp->req.retire != qp->req.fetch && sroce_swqe(qp, qp->req.retire)->msg.npsn) {
		struct sroce_swqe *s = sroce_swqe(qp, qp->req.retire);

		s->status = status;
		s->msg.state = ROCE_SQ_DONE;
		sroce_sq_retire(qp);
	}
	sroce_qp_error(qp, SROCE_QP_NO_EVENT);
}

/* The WQE a response PSN belongs to, or NULL. */
static struct sroce_swqe *comp_wqe_for(struct sroce_qp *qp, u32 psn)
{
	struct roce_sq_view v = sroce_sq_view(qp);
	u32 slot;

	return roce_sq_find(&v, psn, &slot) ? sroce_swqe(qp, slot) : NULL;
}

/*
 * Does @psn name a request this QP sent and has not seen answered?  A
 * response for anything else (a PSN never sent, or long acknowledged) is
 * a ghost: acting on it would retire work the peer never received, or
 * fail the QP on a stranger's word.
 */
static bool comp_psn_outstanding(struct sroce_qp *qp, u32 psn)
{
	struct roce_sq_view v = sroce_sq_view(qp);

	return roce_sq_outstanding(&v, qp->req.comp_psn, qp->req.sent_end, psn);
}

static void comp_drop(struct sroce_qp *qp)
{
	sroce_count(qp->sdev, SROCE_CNT_RX_DROPPED, 1);
}

/*
 * A READ response or atomic result found its ODP page missing (now being
 * faulted in): dropped.  Ask for it again, from this PSN, after a short
 * wait, as after an RNR NAK but without spending an RNR retry: the
 * responder answers the repeated READ or atomic from its resources.
 */
#define COMP_ODP_WAIT_NS	(100 * NSEC_PER_USEC)

static void comp_odp_wait(struct sroce_qp *qp)
{
	comp_drop(qp);
	sroce_sched_rnr_wait(qp, COMP_ODP_WAIT_NS);
}

/*
 * ATOMIC WRITE and FLUSH are answered with an empty READ RESPONSE ONLY
 * (as rxe sends it): anything else at their PSN is a bad response.
 */
static void comp_empty_resp(struct sroce_qp *qp, struct sroce_swqe *s,
			    const struct roce_pkt_info *pkt)
{
	u32 psn = pkt->bth.psn;

	if (pkt->bth.opcode != ROCE_OP_RC_READ_RESP_ONLY || pkt->payload_len) {
		comp_fail(qp, IB_WC_BAD_RESP_ERR);
		return;
	}
	comp_ack_through(qp, psn_sub(psn, 1));
	comp_advance(qp, psn_add(psn, 1));
	s->msg.state = ROCE_SQ_DONE;
	sroce_sq_retire(qp);
}

/*
 * READ responses came past a lost one: ask for the rest again, once for
 * each place they stop.  The responses in flight behind the lost one go
 * on arriving after the rewind, and each asking again would make the
 * responder send the rest once more (at 3 % loss from rxe, 18 times the
 * READs' bytes).  A response that makes progress lets the next gap ask;
 * a lost request is asked again by the local ACK timer.
 */
static void comp_ask_again(struct sroce_qp *qp)
{
	if (qp->req.gap_asked)
		return;
	qp->req.gap_asked = true;
	set_bit(0, &qp->req.need_retransmit);
}

static void comp_read_resp(struct sroce_qp *qp, struct sk_buff *skb,
			   const struct roce_pkt_info *pkt)
{
	u32 psn = pkt->bth.psn;
	struct sroce_swqe *s;
	struct sroce_sgl sgl;
	u32 offset;
	int err;

	if (psn != qp->req.comp_psn) {
		/* Lost responses: ask again; duplicates are ignored. */
		if (comp_psn_outstanding(qp, psn))
			comp_ask_again(qp);
		comp_drop(qp);
		return;
	}
	s = comp_wqe_for(qp, psn);
	if (s && sroce_wr_answered_empty(s->wqe.opcode)) {
		comp_empty_resp(qp, s, pkt);
		return;
	}
	if (!s || s->wqe.opcode != IB_WR_RDMA_READ) {
		comp_drop(qp);
		return;
	}
	if (!roce_sq_read_resp_offset(&s->msg, psn, qp->mtu,
				      pkt->op->flags & ROCE_OPF_LAST,
				      pkt->payload_len, &offset)) {
		comp_fail(qp, IB_WC_BAD_RESP_ERR);
		return;
	}
	sgl = sroce_swqe_sgl(qp, s);
	err = sroce_sgl_copy_skb(&sgl, offset, skb, pkt->payload_off,
				 pkt->payload_len, IB_ACCESS_LOCAL_WRITE);
	if (err == -EAGAIN) {
		comp_odp_wait(qp);
		return;
	}
	if (err) {
		comp_fail(qp, IB_WC_LOC_PROT_ERR);
		return;
	}
	/* A READ response acknowledges every request before it. */
	comp_ack_through(qp, psn_sub(s->msg.first_psn, 1));
	comp_advance(qp, psn_add(psn, 1));
	if (pkt->op->flags & ROCE_OPF_LAST) {
		s->msg.state = ROCE_SQ_DONE;
		sroce_sq_retire(qp);
	}
}

static void comp_atomic_ack(struct sroce_qp *qp, const struct roce_pkt_info *pkt)
{
	u32 psn = pkt->bth.psn;
	struct sroce_swqe *s;
	struct sroce_sgl sgl;
	u64 orig;
	int err;

	if (psn != qp->req.comp_psn) {
		comp_drop(qp);
		return;
	}
	s = comp_wqe_for(qp, psn);
	if (!s || !sroce_wr_is_rd_atomic(s->wqe.opcode) ||
	    s->wqe.opcode == IB_WR_RDMA_READ ||
	    sroce_wr_answered_empty(s->wqe.opcode)) {
		comp_drop(qp);
		return;
	}
	orig = pkt->atmack.orig;
	sgl = sroce_swqe_sgl(qp, s);
	err = sroce_sgl_copy(&sgl, 0, &orig, sizeof(orig), IB_ACCESS_LOCAL_WRITE,
			     SROCE_TO_MR);
	comp_ack_through(qp, psn_sub(psn, 1));
	if (err == -EAGAIN) {
		comp_odp_wait(qp);
		return;
	}
	if (err) {
		comp_fail(qp, IB_WC_LOC_PROT_ERR);
		return;
	}
	comp_advance(qp, psn_add(psn, 1));
	s->msg.state = ROCE_SQ_DONE;
	sroce_sq_retire(qp);
}

static u8 nak_status(u8 code)
{
	switch (code) {
	case ROCE_NAK_INVALID_REQ:
		return IB_WC_REM_INV_REQ_ERR;
	case ROCE_NAK_REM_ACCESS_ERR:
		return IB_WC_REM_ACCESS_ERR;
	case ROCE_NAK_REM_OP_ERR:
		return IB_WC_REM_OP_ERR;
	default:
		return IB_WC_REM_INV_RD_REQ_ERR;
	}
}

/*
 * Whether a sequence NAK naming @psn tells nothing a rewind does not
 * already answer, so it costs no transport retry: a rewind to @psn is
 * owed (an RNR wait, or an earlier NAK not yet acted on), or @psn is
 * the request the responder RNR-NAKed, with nothing acknowledged since.
 * rxe's responder NAKs the request behind every RNR-NAKed one this way,
 * and under load that NAK can arrive after the RNR wait is over and the
 * rewind already went out (CI at dd36ba4: eight such NAKs failed a QP
 * whose RNR retries are infinite).  Should a resent request at @psn be
 * lost, the retransmit timer still finds it.
 */
static bool comp_seq_nak_known(const struct sroce_qp *qp, u32 psn)
{
	if (psn != qp->req.comp_psn)
		return false;
	return qp->req.rnr_naked || qp->req.rnr_wait ||
	       test_bit(0, &qp->req.need_retransmit);
}

static void comp_aeth(struct sroce_qp *qp, const struct roce_pkt_info *pkt)
{
	u8 syn = pkt->aeth.syndrome;
	u32 psn = pkt->bth.psn;

	/*
	 * An ACK may repeat the last one (comp_psn - 1); an ACK beyond it and
	 * every NAK must name an outstanding request.
	 */
	if (!comp_psn_outstanding(qp, psn) &&
	    !(roce_aeth_is_ack(syn) && psn == psn_sub(qp->req.comp_psn, 1))) {
		comp_drop(qp);
		return;
	}
	if (roce_aeth_is_ack(syn)) {
		comp_ack_through(qp, psn);
		return;
	}
	if (roce_aeth_is_rnr_nak(syn)) {
		sroce_count(qp->sdev, SROCE_CNT_RNR_NAK_RCVD, 1);
		comp_ack_through(qp, psn_sub(psn, 1));
		if (!roce_rnr_retry_consume(&qp->req.rnr_retry_left)) {
			comp_fail(qp, IB_WC_RNR_RETRY_EXC_ERR);
			return;
		}
		qp->req.rnr_naked = psn == qp->req.comp_psn;
		sroce_sched_rnr_wait(qp, roce_rnr_timer_ns(roce_aeth_value(syn)));
		return;
	}
	/* NAKs: the PSN is the one the responder expected or refused. */
	if (roce_aeth_value(syn) == (ROCE_NAK_PSN_SEQ_ERR & ROCE_AETH_VALUE_MASK)) {
		sroce_count(qp->sdev, SROCE_CNT_SEQ_ERR_RCVD, 1);
		comp_ack_through(qp, psn_sub(psn, 1));
		if (comp_seq_nak_known(qp, psn))
			return;
		if (!roce_retry_consume(&qp->req.retry_left)) {
			comp_fail(qp, IB_WC_RETRY_EXC_ERR);
			return;
		}
		set_bit(0, &qp->req.need_retransmit);
		return;
	}
	comp_ack_through(qp, psn_sub(psn, 1));
	comp_fail(qp, nak_status(syn));
}

void sroce_comp_recv(struct sroce_qp *qp, struct sk_buff *skb,
		     const struct roce_pkt_info *pkt)
{
	u32 flags = pkt->op->flags;
	enum ib_qp_state state = READ_ONCE(qp->state);
	bool run;

	if (!sroce_qp_reliable(qp) ||
	    (state != IB_QPS_RTS && state != IB_QPS_SQD)) {
		comp_drop(qp);
		return;
	}

	spin_lock_bh(&qp->req.lock);
	if (flags & ROCE_OPF_READ_RESP) {
		if (pkt->op->hdrs & ROCE_HDR_AETH &&
		    !roce_aeth_is_ack(pkt->aeth.syndrome))
			comp_aeth(qp, pkt);
		else
			comp_read_resp(qp, skb, pkt);
	} else if (flags & ROCE_OPF_ATOMIC) {
		comp_atomic_ack(qp, pkt);
	} else {
		comp_aeth(qp, pkt);
	}
	if (READ_ONCE(qp->state) != IB_QPS_ERR && !qp->req.rnr_wait)
		comp_restart_timer(qp);
	run = sroce_sq_needs_run(qp);
	spin_unlock_bh(&qp->req.lock);
	/* Credits or a rewind: the engine goes on, a little from here (an
	 * ACK's worth: a CPU's backlog overflows if every ACK adds a
	 * window's worth), the rest from its work item.
	 */
	if (run)
		sroce_sched_run_acked(qp);
}

/* ---- timers --------------------------------------------------------------- */

/*
 * How long the retransmit timer waits from now: the QP's local ACK
 * timeout, doubled per timeout since the last progress (proto/timers.h).
 */
u64 sroce_retrans_timeout_ns(const struct sroce_qp *qp)
{
	return roce_retrans_timeout_ns(qp->timeout,
				       READ_ONCE(qp->req.timeouts_in_row));
}

void sroce_retrans_timer(struct timer_list *t)
{
	struct sroce_qp *qp = timer_container_of(qp, t, sched.retrans_timer);

	if (READ_ONCE(qp->state) != IB_QPS_RTS && READ_ONCE(qp->state) != IB_QPS_SQD)
		return;
	if (sroce_tx_paused(qp)) {
		/* Held back by our own stack, not lost: wait on. */
		sroce_retrans_start(qp);
		return;
	}
	spin_lock_bh(&qp->req.lock);
	if (qp->req.comp_psn != qp->req.sent_end) {
		sroce_count(qp->sdev, SROCE_CNT_TIMEOUTS, 1);
		if (qp->req.timeouts_in_row < U8_MAX)
			WRITE_ONCE(qp->req.timeouts_in_row, qp->req.timeouts_in_row + 1);
		trace_retrans_timeout(dev_name(&qp->sdev->ib.dev), qp->ib.qp_num,
				      qp->req.comp_psn, qp->req.timeouts_in_row,
				      qp->req.retry_left,
				      sroce_retrans_timeout_ns(qp));
		if (roce_retry_consume(&qp->req.retry_left)) {
			roce_window_timeout(&qp->req.window);
			set_bit(0, &qp->req.need_retransmit);
		} else {
			comp_fail(qp, IB_WC_RETRY_EXC_ERR);
		}
	}
	spin_unlock_bh(&qp->req.lock);
	sroce_sched_queue(qp);
}

static bool qp_sending(struct sroce_qp *qp)
{
	enum ib_qp_state state = READ_ONCE(qp->state);

	return state == IB_QPS_RTS || state == IB_QPS_SQD;
}

enum hrtimer_restart sroce_rnr_timer(struct hrtimer *t)
{
	struct sroce_qp *qp = container_of(t, struct sroce_qp, sched.rnr_timer);

	if (!qp_sending(qp))
		return HRTIMER_NORESTART;
	spin_lock_bh(&qp->req.lock);
	qp->req.rnr_wait = false;
	set_bit(0, &qp->req.need_retransmit);
	spin_unlock_bh(&qp->req.lock);
	sroce_sched_queue(qp);
	return HRTIMER_NORESTART;
}

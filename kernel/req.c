// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The send engine of a QP, run by one context at a time (qp.c picks it: the
 * doorbell, the ACK that opened the window, or the QP's work item): takes
 * work requests from the send queue, cuts messages into path-MTU packets
 * and sends them, sends the responder's READ responses, retransmits from
 * the oldest unacknowledged PSN when told to, and flushes the queues once
 * the QP has failed.
 *
 * For a user QP it first has post.c copy new WQEs from the shared ring
 * into the kernel's shadow array, validating each.  When it runs out of
 * work it asks for a doorbell.
 */
#include "proto/psn.h"
#include "proto/window.h"
#include "sroce.h"

/*
 * RC: PSNs sent and not yet acknowledged.  A rewound message restarts at
 * comp_psn or, when comp_psn moved on meanwhile, before it: nothing is
 * unacknowledged then, not 2^32 - k PSNs.
 */
static u32 req_unacked(const struct sroce_qp *qp)
{
	s32 n = psn_diff(qp->req.psn, qp->req.comp_psn);

	return n > 0 ? n : 0;
}

/* RC or an XRC send QP: acknowledged, retried, READs and atomics. */
static bool qp_is_rc(const struct sroce_qp *qp)
{
	return sroce_qp_reliable(qp);
}

/* RC: no packet may go before an ACK opens the window.  Caller holds req.lock. */
bool sroce_req_window_full(const struct sroce_qp *qp)
{
	return qp_is_rc(qp) && !roce_window_open(&qp->req.window, req_unacked(qp));
}

static bool is_rd_atomic(const struct sroce_swqe *s)
{
	return s->msg.rd_atomic;
}

/* ---- completions ----------------------------------------------------------- */

static void sq_post_cqe(struct sroce_qp *qp, struct sroce_swqe *s)
{
	struct ib_wc wc = {
		.wr_id = s->wqe.wr_id,
		.status = s->status,
		.opcode = sroce_wc_opcode(s->wqe.opcode),
		.qp = &qp->ib,
	};

	if (s->wqe.opcode == IB_WR_RDMA_READ)
		wc.byte_len = s->msg.length;
	else if (s->wqe.opcode == IB_WR_ATOMIC_CMP_AND_SWP ||
		 s->wqe.opcode == IB_WR_ATOMIC_FETCH_AND_ADD ||
		 s->wqe.opcode == SROCE_WR_ATOMIC_WRITE)
		wc.byte_len = ROCE_ATOMIC_LEN;
	if (s->status != IB_WC_SUCCESS)
		sroce_count(qp->sdev, SROCE_CNT_COMPLETION_ERRORS, 1);
	sroce_cq_post(qp->scq, &wc, false);
}

/*
 * Retires finished WQEs in order: a completion for each signaled or failed
 * one, and their slots back to the producer.  Caller holds req.lock.
 */
/*
 * SQD (IBTA 10.3.1): the requester begins no new WQE and finishes the
 * messages it has begun; once each of those has completed the SQ is
 * drained: sq_draining drops and IB_EVENT_SQ_DRAINED is raised if the
 * consumer asked for it.  WQEs posted meanwhile wait for RTS.
 */
static bool req_drain_holds(const struct sroce_qp *qp, const struct sroce_swqe *s)
{
	return READ_ONCE(qp->state) == IB_QPS_SQD && !s->msg.npsn;
}

/* Caller holds req.lock. */
static void req_check_drained(struct sroce_qp *qp)
{
	if (!READ_ONCE(qp->sq_draining) || READ_ONCE(qp->state) != IB_QPS_SQD)
		return;
	if (qp->req.retire != qp->req.cur ||
	    (qp->req.cur != qp->req.fetch && sroce_swqe(qp, qp->req.cur)->msg.npsn))
		return;
	WRITE_ONCE(qp->sq_draining, false);
	if (qp->sqd_notify)
		sroce_qp_event(qp, IB_EVENT_SQ_DRAINED);
}

void sroce_sq_retire(struct sroce_qp *qp)
{
	while (qp->req.retire != qp->req.fetch) {
		struct sroce_swqe *s = sroce_swqe(qp, qp->req.retire);

		if (s->msg.state != ROCE_SQ_DONE)
			break;
		if (is_rd_atomic(s) && qp->req.rd_atomic_outstanding)
			qp->req.rd_atomic_outstanding--;
		/* The slot is free before its completion is visible, as on
		 * hardware: a process that polls a completion may post again
		 * at once.  The shadow copy stays ours under req.lock.
		 */
		qp->req.retire++;
		if (qp->user)
			/* Pairs with the provider's acquire load of the consumer. */
			smp_store_release(&qp->sq.ctrl->consumer, qp->req.retire);
		if (s->status != IB_WC_SUCCESS || qp->sig_all ||
		    (s->wqe.send_flags & IB_SEND_SIGNALED))
			sq_post_cqe(qp, s);
	}
	req_check_drained(qp);
}

/* A WQE failed locally: complete it with @status and fail the QP. */
static void req_fail(struct sroce_qp *qp, struct sroce_swqe *s, u8 status)
{
	s->status = status;
	s->msg.state = ROCE_SQ_DONE;
	qp->req.cur++;
	qp->req.offset = 0;
	sroce_sq_retire(qp);
	sroce_qp_error(qp, SROCE_QP_NO_EVENT);
}

/* ---- packets --------------------------------------------------------------- */

/* The RC opcode of the packet; req_opcode() moves it to the QP's transport. */
static u8 req_rc_opcode(const struct sroce_swqe *s, bool first, bool last)
{
	u32 op = s->wqe.opcode;

	switch (op) {
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
		if (first && last)
			return op == IB_WR_RDMA_WRITE ? ROCE_OP_RC_WRITE_ONLY :
							ROCE_OP_RC_WRITE_ONLY_IMM;
		if (first)
			return ROCE_OP_RC_WRITE_FIRST;
		if (!last)
			return ROCE_OP_RC_WRITE_MIDDLE;
		return op == IB_WR_RDMA_WRITE ? ROCE_OP_RC_WRITE_LAST :
						ROCE_OP_RC_WRITE_LAST_IMM;
	case IB_WR_RDMA_READ:
		return ROCE_OP_RC_READ_REQ;
	case IB_WR_ATOMIC_CMP_AND_SWP:
		return ROCE_OP_RC_CMP_SWAP;
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		return ROCE_OP_RC_FETCH_ADD;
	case SROCE_WR_ATOMIC_WRITE:
		return ROCE_OP_RC_ATOMIC_WRITE;
	case SROCE_WR_FLUSH:
		return ROCE_OP_RC_FLUSH;
	default:	/* the SENDs */
		if (first && last)
			return op == IB_WR_SEND_WITH_IMM ? ROCE_OP_RC_SEND_ONLY_IMM :
			       op == IB_WR_SEND_WITH_INV ? ROCE_OP_RC_SEND_ONLY_INV :
							   ROCE_OP_RC_SEND_ONLY;
		if (first)
			return ROCE_OP_RC_SEND_FIRST;
		if (!last)
			return ROCE_OP_RC_SEND_MIDDLE;
		return op == IB_WR_SEND_WITH_IMM ? ROCE_OP_RC_SEND_LAST_IMM :
		       op == IB_WR_SEND_WITH_INV ? ROCE_OP_RC_SEND_LAST_INV :
						   ROCE_OP_RC_SEND_LAST;
	}
}

/* UC's and XRC's opcodes are RC's under their own transport bits. */
static u8 req_opcode(struct sroce_qp *qp, struct sroce_swqe *s, bool first,
		     bool last)
{
	if (sroce_qp_ud(qp))
		return s->wqe.opcode == IB_WR_SEND_WITH_IMM ?
			ROCE_OP_UD_SEND_ONLY_IMM : ROCE_OP_UD_SEND_ONLY;
	return roce_opcode_on(req_rc_opcode(s, first, last), sroce_qp_op_base(qp));
}

/*
 * The extended headers of WQE @s's packet at req.offset, by opcode: the
 * RETH of a READ, of a WRITE's first packet, of an ATOMIC WRITE and of a
 * FLUSH (with its FETH), an atomic's AtomicETH, UD's DETH.
 */
static void req_ext_headers(struct sroce_qp *qp, struct sroce_swqe *s,
			    struct roce_pkt_info *pi)
{
	const struct sroce_send_wqe *w = &s->wqe;
	u32 op = w->opcode;

	if (sroce_qp_ud(qp)) {
		pi->deth.qkey = (w->wr.ud.remote_qkey & 0x80000000) ?
					qp->qkey : w->wr.ud.remote_qkey;
		pi->deth.src_qpn = qp->ib.qp_num;
	}
	if (op == IB_WR_RDMA_READ ||
	    (qp->req.offset == 0 &&
	     (op == IB_WR_RDMA_WRITE || op == IB_WR_RDMA_WRITE_WITH_IMM))) {
		pi->reth.va = w->wr.rdma.remote_addr + qp->req.offset;
		pi->reth.rkey = w->wr.rdma.rkey;
		pi->reth.len = s->msg.length - qp->req.offset;
	} else if (op == SROCE_WR_ATOMIC_WRITE) {
		pi->reth.va = w->wr.atomic.remote_addr;
		pi->reth.rkey = w->wr.atomic.rkey;
		pi->reth.len = ROCE_ATOMIC_LEN;
	} else if (op == SROCE_WR_FLUSH) {
		pi->feth.placement = w->wr.flush.type;
		pi->feth.selectivity = w->wr.flush.level;
		pi->reth.va = w->wr.flush.remote_addr;
		pi->reth.rkey = w->wr.flush.rkey;
		pi->reth.len = w->wr.flush.length;
	} else if (op == IB_WR_ATOMIC_CMP_AND_SWP || op == IB_WR_ATOMIC_FETCH_AND_ADD) {
		pi->atmeth.va = w->wr.atomic.remote_addr;
		pi->atmeth.rkey = w->wr.atomic.rkey;
		pi->atmeth.swap_add = op == IB_WR_ATOMIC_CMP_AND_SWP ?
					      w->wr.atomic.swap : w->wr.atomic.compare_add;
		pi->atmeth.compare = w->wr.atomic.compare_add;
	}
	pi->imm_be = w->imm_data;
	pi->ieth_rkey = w->imm_data;
	pi->xrc_srqn = w->xrc_srqn;	/* only XRC opcodes carry it */
}

/* The headers of WQE @s's packet at req.offset, carrying @payload bytes. */
static void req_headers(struct sroce_qp *qp, struct sroce_swqe *s, u32 payload,
			bool last, struct roce_pkt_info *pi)
{
	pi->bth.opcode = req_opcode(qp, s, qp->req.offset == 0, last);
	pi->bth.se = last && (s->wqe.send_flags & IB_SEND_SOLICITED);
	pi->bth.pkey = ROCE_DEFAULT_PKEY;
	pi->bth.dest_qpn = sroce_qp_ud(qp) ? s->wqe.wr.ud.remote_qpn : qp->dest_qpn;
	pi->bth.psn = qp->req.psn;
	pi->bth.ackreq = qp_is_rc(qp) &&
			 (last || psn_diff(qp->req.psn, s->msg.first_psn) % SROCE_ACKREQ_EVERY ==
					  SROCE_ACKREQ_EVERY - 1 ||
			  roce_window_wants_ack(&qp->req.window, req_unacked(qp)));
	pi->bth.padcnt = roce_pad_len(payload);
	req_ext_headers(qp, s, pi);
}

/* The packet of @payload bytes is on its way: the requester moves on. */
static void req_packet_sent(struct sroce_qp *qp, struct sroce_swqe *s,
			    u32 payload, bool last)
{
	if (s->wqe.opcode == IB_WR_RDMA_READ) {
		qp->req.psn = psn_add(s->msg.last_psn, 1);
		qp->req.offset = s->msg.length;
	} else {
		qp->req.psn = psn_add(qp->req.psn, 1);
		qp->req.offset += payload;
	}
	if (psn_after(qp->req.psn, qp->req.sent_end))
		qp->req.sent_end = qp->req.psn;
	if (!last && qp->req.offset < s->msg.length)
		return;
	qp->req.cur++;
	qp->req.offset = 0;
	if (qp_is_rc(qp)) {
		s->msg.state = ROCE_SQ_SENT;
	} else {
		/* UC/UD: done once on the wire. */
		s->msg.state = ROCE_SQ_DONE;
		sroce_sq_retire(qp);
	}
}

/*
 * Builds and sends the next packet of WQE @s at req.offset.  Returns 0,
 * or a negative errno after failing the WQE (bad local buffer).
 */
static int req_send_packet(struct sroce_qp *qp, struct sroce_swqe *s)
{
	struct roce_pkt_info pi = {};
	bool is_read = s->wqe.opcode == IB_WR_RDMA_READ;
	bool is_atomic = is_rd_atomic(s) && !is_read &&
			 s->wqe.opcode != SROCE_WR_ATOMIC_WRITE &&
			 s->wqe.opcode != SROCE_WR_FLUSH;
	const struct sroce_av *av = sroce_qp_ud(qp) ? &s->av : &qp->av;
	u32 payload = 0, hdr_len;
	struct sk_buff *skb;
	bool last;
	u16 sport;
	int err, n;

	/* A UD message is one packet of up to the port MTU (checked when
	 * the WQE was taken); UD QPs have no path MTU of their own.
	 */
	if (sroce_qp_ud(qp))
		payload = s->msg.length;
	else if (!is_read && !is_atomic)
		payload = min_t(u32, qp->mtu, s->msg.length - qp->req.offset);
	last = is_read || is_atomic || qp->req.offset + payload >= s->msg.length;
	req_headers(qp, s, payload, last, &pi);

	hdr_len = roce_opcode_get(pi.bth.opcode)->hdr_len;
	skb = sroce_skb_payload(qp->sdev, hdr_len, &(struct sroce_payload){
			.inline_data = (s->wqe.send_flags & IB_SEND_INLINE) ?
					       s->inline_data + qp->req.offset : NULL,
			.sgl = sroce_swqe_sgl(qp, s),
			.offset = qp->req.offset,
			.len = payload,
			/* RC completes on the ACK: see zcopy.c */
			.by_reference = qp_is_rc(qp),
		}, &err);
	if (!skb) {
		if (err == -ENOBUFS)
			return err;	/* try again on the next run */
		if (err == -EAGAIN) {
			sroce_odp_wait(qp);	/* an ODP page is on its way */
			return err;
		}
		req_fail(qp, s, IB_WC_LOC_PROT_ERR);
		return err;
	}
	n = roce_build_headers(&pi, skb->data, hdr_len);
	if (WARN_ON_ONCE(n != hdr_len)) {
		kfree_skb(skb);
		return -EINVAL;
	}

	sport = sroce_qp_ud(qp) ?
		sroce_udp_sport(av, qp->ib.qp_num, s->wqe.wr.ud.remote_qpn) : qp->sport;
	if (sroce_skb_send(qp->sdev, av, sroce_qp_ud(qp) ? NULL : &qp->dst_cache,
			   sport, skb)) {
		/* Refused locally (queue full, neighbour unresolved): not
		 * sent, so not lost.  Send it again later, unchanged.
		 */
		sroce_tx_refused(qp);
		return -EAGAIN;
	}
	sroce_tx_resumed(qp);
	sroce_cc_sent(qp, av, hdr_len + payload + pi.bth.padcnt + ROCE_ICRC_LEN);
	req_packet_sent(qp, s, payload, last);
	return 0;
}

/* Local operations complete in order, without going to the wire. */
static void req_local_op(struct sroce_qp *qp, struct sroce_swqe *s)
{
	u8 status = IB_WC_SUCCESS;

	switch (s->wqe.opcode) {
	case IB_WR_LOCAL_INV:
		if (sroce_key_invalidate(qp, qp->ib.pd, s->wqe.imm_data, false))
			status = IB_WC_MW_BIND_ERR;
		break;
	case IB_WR_REG_MR:
		if (sroce_mr_fast_reg(qp->sdev, qp->ib.pd, s->reg_key,
				      s->reg_key, s->reg_access))
			status = IB_WC_MW_BIND_ERR;
		break;
	case IB_WR_BIND_MW:
		status = sroce_mw_bind(qp, &s->wqe);
		break;
	}
	if (status != IB_WC_SUCCESS) {
		req_fail(qp, s, status);
		return;
	}
	s->msg.state = ROCE_SQ_DONE;
	qp->req.cur++;
	sroce_sq_retire(qp);
}

/*
 * Starts the local ACK timer unless it is already counting.  "Counting"
 * is pending: while its callback runs (the timeout that asked for this
 * very resend) the timer will not fire again, and packets resent from
 * here on a CPU racing that callback would be left with no timer if they
 * too were lost.
 */
static void arm_retrans_timer(struct sroce_qp *qp)
{
	if (!qp_is_rc(qp) || !qp->timeout ||
	    sroce_retrans_pending(qp))
		return;
	sroce_retrans_start(qp);
}

/*
 * Points the requester at comp_psn, the first PSN not acknowledged: back
 * after a timeout or a sequence NAK (go-back-N: the responder drops what
 * follows a gap and answers duplicates from its resources), and forward
 * when an ACK shows that packets sent before such a rewind arrived after
 * all, so they are not sent a second time.  Caller holds req.lock.
 */
void sroce_req_seek(struct sroce_qp *qp)
{
	struct roce_sq_view v = sroce_sq_view(qp);
	struct roce_sq_pos pos;

	roce_sq_seek(&v, qp->req.comp_psn, qp->mtu, &pos);
	qp->req.cur = pos.cur;
	qp->req.psn = pos.psn;
	qp->req.offset = pos.offset;
	qp->req.rd_atomic_outstanding = pos.rd_atomic;
}

/* Go-back-N after a timeout or NAK; a no-op when all was acknowledged meanwhile. */
static void req_rewind(struct sroce_qp *qp)
{
	clear_bit(0, &qp->req.need_retransmit);
	if (qp->req.comp_psn == qp->req.sent_end)
		return;		/* nothing outstanding */
	sroce_req_seek(qp);
	sroce_count(qp->sdev, SROCE_CNT_RETRANSMITS, 1);
}

/*
 * One step of the requester: sends at most one packet or runs one local
 * operation.  Returns true if it did something.  Caller holds req.lock.
 */
static bool req_step(struct sroce_qp *qp)
{
	struct sroce_swqe *s;

	if (qp->req.rnr_wait || qp->sched.tx_backoff)
		return false;
	if (test_bit(0, &qp->req.need_retransmit))
		req_rewind(qp);
	if (qp->req.cur == qp->req.fetch)
		return false;
	s = sroce_swqe(qp, qp->req.cur);
	if (req_drain_holds(qp, s))
		return false;
	if (s->status != IB_WC_SUCCESS) {
		req_fail(qp, s, s->status);
		return true;
	}
	if (sroce_wr_is_local(s->wqe.opcode)) {
		req_local_op(qp, s);
		return true;
	}
	if (qp_is_rc(qp)) {
		if (sroce_req_window_full(qp))
			return false;
		if (qp->req.offset == 0) {
			/* A new message: fences and READ/atomic credits. */
			if ((s->wqe.send_flags & IB_SEND_FENCE) &&
			    qp->req.rd_atomic_outstanding)
				return false;
			if (is_rd_atomic(s) && qp->req.rd_atomic_outstanding >=
						  max_t(u8, qp->max_rd_atomic, 1))
				return false;
		}
	}
	if (!sroce_cc_may_send(qp))
		return false;	/* the pacer's kick timer brings us back */
	if (!s->msg.npsn) {
		/* First time on the wire: give the message its PSNs. */
		s->msg.first_psn = qp->req.psn;
		/* One per packet; a READ reserves its responses'. */
		s->msg.npsn = roce_sq_npsn(s->msg.length, qp->mtu,
					   sroce_qp_ud(qp) ||
					   (is_rd_atomic(s) &&
					    s->wqe.opcode != IB_WR_RDMA_READ));
		s->msg.last_psn = psn_add(s->msg.first_psn, s->msg.npsn - 1);
	}
	if (req_send_packet(qp, s) == 0 && qp_is_rc(qp) && is_rd_atomic(s))
		qp->req.rd_atomic_outstanding++;	/* one request packet each */
	arm_retrans_timer(qp);
	return true;
}

/* ---- the work -------------------------------------------------------------- */

/* A receive WQE of a failed QP completes with a flush error on @cq. */
void sroce_flush_recv(struct sroce_qp *qp, struct sroce_cq *cq, u64 wr_id)
{
	struct ib_wc wc = {
		.wr_id = wr_id,
		.status = IB_WC_WR_FLUSH_ERR,
		.opcode = IB_WC_RECV,
		.qp = &qp->ib,
	};

	sroce_cq_post(cq, &wc, false);
}

/*
 * Completes queued WQEs with a flush error after the QP failed, at most
 * @budget of them from each queue: the process can keep posting while we
 * flush, so the loops are bounded and the work item comes back for the
 * rest.  True if there may be more.
 */
static bool sroce_flush_queues(struct sroce_qp *qp, int budget)
{
	struct sroce_rq *rq = qp->srq || sroce_qp_xrc(qp) ? NULL : &qp->rq;
	u64 wr_id;
	bool more;
	int n;

	if (qp->user) {
		/* Ask for a doorbell before looking, so a WQE posted while we
		 * flush is either seen here or rings (as in sroce_sq_may_sleep).
		 */
		WRITE_ONCE(qp->sq.ctrl->notify, SROCE_SQ_NEED_DOORBELL);
		/* Pairs with the provider's fence between its producer
		 * store and its notify load (wq.cpp, sq_doorbell_if_needed).
		 */
		smp_mb();
	}
	spin_lock_bh(&qp->req.lock);
	/* A corrupt producer leaves nothing new to flush, only what we hold. */
	more = sroce_sq_fetch(qp, budget) > 0;
	for (n = 0; qp->req.retire != qp->req.fetch && n < budget; n++) {
		struct sroce_swqe *s = sroce_swqe(qp, qp->req.retire);

		if (s->msg.state != ROCE_SQ_DONE)
			s->status = IB_WC_WR_FLUSH_ERR;
		s->msg.state = ROCE_SQ_DONE;
		qp->req.retire++;
		if (qp->user)
			/* Pairs with the provider's acquire load of the consumer. */
			smp_store_release(&qp->sq.ctrl->consumer, qp->req.retire);
		sq_post_cqe(qp, s);
	}
	more |= qp->req.retire != qp->req.fetch;
	qp->req.cur = qp->req.retire;
	qp->req.offset = 0;
	qp->req.rd_atomic_outstanding = 0;
	spin_unlock_bh(&qp->req.lock);

	if (rq && rq->user) {
		/* Receives posted from now on must reach us too; set before
		 * draining so one posted meanwhile is either drained here or
		 * rings the doorbell.
		 */
		WRITE_ONCE(rq->ring.ctrl->notify, SROCE_RQ_NEED_DOORBELL);
		/* Pairs with the provider's fence in doorbell_if_needed(). */
		smp_mb();
	}
	sroce_resp_flush_rwqe(qp);
	sroce_qp_last_wqe(qp);
	for (n = 0; rq && n < budget; n++) {
		if (sroce_rq_pop_flushed(rq, &wr_id))
			break;
		sroce_flush_recv(qp, qp->rcq, wr_id);
	}
	return more || (rq && n == budget);
}

/*
 * One run of the send engine, by whoever holds the QP's send right (see
 * sched.c), of at most @budget packets.  True if it stopped at its budget
 * with more to do.
 */
bool sroce_send_engine(struct sroce_qp *qp, int budget)
{
	enum ib_qp_state state;

	state = READ_ONCE(qp->state);
	if (state == IB_QPS_ERR)
		return sroce_flush_queues(qp, budget);
	/* The kick timer brought us back, or new work did: try again. */
	qp->sched.tx_backoff = false;
	if (state == IB_QPS_RTR) {
		/* A responder in RTR answers READs but sends no requests. */
		return sroce_resp_send_reads(qp, &budget) && budget <= 0;
	}
	if (state != IB_QPS_RTS && state != IB_QPS_SQD)
		return false;
	if (qp->user)
		WRITE_ONCE(qp->sq.ctrl->notify, 0);

	for (;;) {
		bool did, sleep;
		int before;

		did = sroce_resp_send_reads(qp, &budget);
		before = budget;
		spin_lock_bh(&qp->req.lock);
		if (sroce_sq_fetch(qp, budget) < 0) {
			/* A corrupt ring: no completion can tell about it. */
			spin_unlock_bh(&qp->req.lock);
			sroce_qp_error(qp, IB_EVENT_QP_FATAL);
			return false;
		}
		while (budget > 0 && req_step(qp)) {
			budget--;
			did = true;
		}
		/*
		 * The packets just sent to a device of this host are received
		 * when req.lock drops.  After a burst (more than one packet, or
		 * more to send) that is done on another CPU (rxsteer.c); a lone
		 * packet is received here.
		 */
		sroce_spin_unlock_bh_sent(&qp->req.lock, before - budget > 1 ||
					  budget <= 0 || qp->req.cur != qp->req.fetch);
		if (budget <= 0)
			return true;	/* more to do: let others run first */
		if (did)
			continue;
		spin_lock_bh(&qp->req.lock);
		req_check_drained(qp);
		sleep = sroce_sq_may_sleep(qp);
		spin_unlock_bh(&qp->req.lock);
		if (sleep)
			return false;
	}
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The send engine of a QP, run by one context at a time (qp.c picks it: the
 * doorbell, the ACK that opened the window, or the QP's work item): takes
 * work requests from the send queue, cuts messages into path-MTU packets
 * and sends them, sends the responder's READ responses, retransmits from
 * the oldest unacknowledged PSN when told to, and flushes the queues once
 * the QP has failed.
 *
 * For a user QP it also copies new WQEs from the shared ring into the
 * kernel's shadow array, validating each; nothing is read from user
 * memory twice.  When it runs out of work it asks for a doorbell.
 */
#include "proto/psn.h"
#include "proto/window.h"
#include "sroce.h"

/*
 * RC: PSNs sent and not yet acknowledged.  A rewound READ restarts at its
 * first PSN while comp_psn may already be inside it (responses that did
 * come): nothing is unacknowledged then, not 2^32 - k PSNs.
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

static bool qp_is_ud(const struct sroce_qp *qp)
{
	return qp->ib.qp_type == IB_QPT_UD || qp->ib.qp_type == IB_QPT_GSI;
}

static bool is_rd_atomic(const struct sroce_swqe *s)
{
	return s->msg.rd_atomic;
}

/* Work requests that execute locally, without going to the wire. */
static bool is_local_op(u32 opcode)
{
	return opcode == IB_WR_LOCAL_INV || opcode == IB_WR_REG_MR ||
	       opcode == IB_WR_BIND_MW;
}

/* The per-QP-type policy of the ABI header, which the provider offers. */
static bool opcode_allowed(const struct sroce_qp *qp, u32 opcode)
{
	u32 allowed = sroce_qp_xrc(qp) ? SROCE_XRC_WR_OPCODES :
		      qp_is_rc(qp) ? SROCE_RC_WR_OPCODES :
		      qp_is_ud(qp) ? SROCE_UD_WR_OPCODES : SROCE_UC_WR_OPCODES;

	BUILD_BUG_ON(IB_WR_RDMA_WRITE != SROCE_WR_RDMA_WRITE ||
		     IB_WR_RDMA_WRITE_WITH_IMM != SROCE_WR_RDMA_WRITE_WITH_IMM ||
		     IB_WR_SEND != SROCE_WR_SEND ||
		     IB_WR_SEND_WITH_IMM != SROCE_WR_SEND_WITH_IMM ||
		     IB_WR_RDMA_READ != SROCE_WR_RDMA_READ ||
		     IB_WR_ATOMIC_CMP_AND_SWP != SROCE_WR_ATOMIC_CMP_AND_SWP ||
		     IB_WR_ATOMIC_FETCH_AND_ADD != SROCE_WR_ATOMIC_FETCH_AND_ADD ||
		     IB_WR_LOCAL_INV != SROCE_WR_LOCAL_INV ||
		     IB_WR_BIND_MW != SROCE_WR_BIND_MW ||
		     IB_WR_SEND_WITH_INV != SROCE_WR_SEND_WITH_INV);
	BUILD_BUG_ON(IB_SEND_FENCE != SROCE_SEND_FENCE ||
		     IB_SEND_SIGNALED != SROCE_SEND_SIGNALED ||
		     IB_SEND_SOLICITED != SROCE_SEND_SOLICITED ||
		     IB_SEND_INLINE != SROCE_SEND_INLINE);
	BUILD_BUG_ON(IB_ACCESS_REMOTE_WRITE != SROCE_ACCESS_REMOTE_WRITE ||
		     IB_ACCESS_REMOTE_READ != SROCE_ACCESS_REMOTE_READ ||
		     IB_ACCESS_REMOTE_ATOMIC != SROCE_ACCESS_REMOTE_ATOMIC ||
		     IB_ZERO_BASED != SROCE_ACCESS_ZERO_BASED);
	/* Fast registration: kernel consumers' counterpart of a window. */
	if (opcode == IB_WR_REG_MR)
		return !qp->user && qp->ib.qp_type == IB_QPT_RC;
	if (opcode >= 32 || !(allowed & SROCE_WR_BIT(opcode)))
		return false;
	/* Windows are a user-space feature; so are ATOMIC WRITE and FLUSH,
	 * whose operands only the user WQE carries (the kernel's
	 * ib_send_wr has no field for them, and no kernel consumer posts
	 * one).
	 */
	return (opcode != IB_WR_BIND_MW && opcode != SROCE_WR_ATOMIC_WRITE &&
		opcode != SROCE_WR_FLUSH) || qp->user;
}

/* FLUSH's operands go on the wire as the WQE carries them. */
static_assert(SROCE_FLUSH_GLOBAL == ROCE_FLUSH_GLOBAL &&
	      SROCE_FLUSH_PERSISTENT == ROCE_FLUSH_PERSISTENT &&
	      SROCE_FLUSH_RANGE == ROCE_FLUSH_RANGE && SROCE_FLUSH_MR == ROCE_FLUSH_MR);

enum ib_wc_opcode sroce_wc_opcode(u32 wr_opcode)
{
	switch (wr_opcode) {
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
		return IB_WC_RDMA_WRITE;
	case IB_WR_RDMA_READ:
		return IB_WC_RDMA_READ;
	case IB_WR_ATOMIC_CMP_AND_SWP:
		return IB_WC_COMP_SWAP;
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		return IB_WC_FETCH_ADD;
	case IB_WR_LOCAL_INV:
		return IB_WC_LOCAL_INV;
	case IB_WR_REG_MR:
		return IB_WC_REG_MR;
	case IB_WR_BIND_MW:
		return IB_WC_BIND_MW;
	case SROCE_WR_ATOMIC_WRITE:
		return (enum ib_wc_opcode)SROCE_WC_ATOMIC_WRITE;
	case SROCE_WR_FLUSH:
		return (enum ib_wc_opcode)SROCE_WC_FLUSH;
	default:
		return IB_WC_SEND;
	}
}

/*
 * Copies and checks one WQE from the user ring.  A WQE that is not valid
 * is kept, marked with the error it completes with, so the process sees
 * an error completion in order, like on hardware.
 */
static void sq_take_user_wqe(struct sroce_qp *qp, u32 index)
{
	const u8 *slot = sroce_ring_slot(&qp->sq, index);
	struct sroce_swqe *s = sroce_swqe(qp, index);
	struct sroce_send_wqe *w = &s->wqe;
	u64 length = 0;
	u32 i;

	memcpy(w, slot, sizeof(*w));
	s->msg = (struct roce_sq_msg){
		.state = ROCE_SQ_QUEUED,
		.rd_atomic = sroce_wr_is_rd_atomic(w->opcode),
	};
	s->status = IB_WC_SUCCESS;

	if (!opcode_allowed(qp, w->opcode)) {
		s->status = IB_WC_LOC_QP_OP_ERR;
		return;
	}
	/* An XRC SRQ number is 24 bits: never send a truncated one. */
	if (sroce_qp_xrc(qp) && !is_local_op(w->opcode) &&
	    w->xrc_srqn > ROCE_QPN_MASK) {
		s->status = IB_WC_LOC_QP_OP_ERR;
		return;
	}
	if (is_local_op(w->opcode)) {
		/* No payload: whatever the slot holds past the header is ignored. */
		w->num_sge = 0;
		w->inline_len = 0;
		w->send_flags &= ~IB_SEND_INLINE;
		return;
	}
	if (w->opcode == SROCE_WR_ATOMIC_WRITE) {
		/* Its 8 bytes go out as an inline payload (the shadow's
		 * tail holds at least that), whatever max_inline is.
		 */
		BUILD_BUG_ON(sizeof(struct sroce_sge) < ROCE_ATOMIC_LEN);
		w->num_sge = 0;
		w->inline_len = ROCE_ATOMIC_LEN;
		w->send_flags |= IB_SEND_INLINE;
		memcpy(s->inline_data, &w->wr.atomic.compare_add, ROCE_ATOMIC_LEN);
		s->msg.length = ROCE_ATOMIC_LEN;
		return;
	}
	if (w->opcode == SROCE_WR_FLUSH) {
		/* No payload; its operands are checked here, once, by the
		 * rule the responder applies to the FETH they become.
		 */
		struct roce_feth feth = { w->wr.flush.type, w->wr.flush.level };

		w->num_sge = 0;
		w->inline_len = 0;
		w->send_flags &= ~IB_SEND_INLINE;
		if (!roce_flush_rights(&feth))
			s->status = IB_WC_LOC_QP_OP_ERR;
		return;
	}
	if (w->send_flags & IB_SEND_INLINE) {
		if (w->inline_len > qp->max_inline) {
			s->status = IB_WC_LOC_LEN_ERR;
			return;
		}
		w->num_sge = 0;
		memcpy(s->inline_data, slot + sizeof(*w), w->inline_len);
		length = w->inline_len;
	} else {
		if (w->num_sge > qp->max_send_sge) {
			s->status = IB_WC_LOC_LEN_ERR;
			return;
		}
		memcpy(s->sge, slot + sizeof(*w), w->num_sge * sizeof(s->sge[0]));
		for (i = 0; i < w->num_sge; i++)
			length += s->sge[i].length;
	}
	if (length > SROCE_MAX_MSG_SIZE ||
	    (qp_is_ud(qp) && length > sroce_port_mtu(qp->sdev))) {
		s->status = IB_WC_LOC_LEN_ERR;
		return;
	}
	s->msg.length = length;

	if (qp_is_ud(qp)) {
		struct sroce_ah *ah;

		rcu_read_lock();
		ah = sroce_ah_lookup(qp->sdev, w->wr.ud.ah_num);
		if (ah && ah->ib.pd == qp->ib.pd)
			s->av = ah->av;
		else
			s->status = IB_WC_LOC_QP_OP_ERR;
		rcu_read_unlock();
	}
}

/*
 * Copies up to @max newly posted user WQEs into the shadow.  The producer
 * index is the process's to write, so it is checked against both indices
 * the kernel owns: retire <= fetch <= producer <= retire + sq_slots.  A
 * producer moved back behind fetch would otherwise read as ~2^32 new WQEs
 * and overwrite the shadows of WQEs in flight.  Returns how many posted
 * WQEs are left to fetch, or -EIO for a corrupt index.  Caller holds
 * req.lock.
 */
static int sq_fetch(struct sroce_qp *qp, u32 max)
{
	u32 prod, posted, fetched;

	if (!qp->user)
		return 0;
	/* Pairs with the provider's release store of the producer
	 * (ring.hpp): the WQEs below it are written before we read them.
	 */
	prod = smp_load_acquire(&qp->sq.ctrl->producer);
	posted = prod - qp->req.retire;
	fetched = qp->req.fetch - qp->req.retire;
	if (posted > qp->sq_slots || posted < fetched)
		return -EIO;
	for (max = min(posted - fetched, max); max; max--) {
		sq_take_user_wqe(qp, qp->req.fetch);
		qp->req.fetch++;
	}
	return prod - qp->req.fetch;
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
	if (qp_is_ud(qp))
		return s->wqe.opcode == IB_WR_SEND_WITH_IMM ?
			ROCE_OP_UD_SEND_ONLY_IMM : ROCE_OP_UD_SEND_ONLY;
	return roce_opcode_on(req_rc_opcode(s, first, last), sroce_qp_op_base(qp));
}

/*
 * Builds and sends the next packet of WQE @s at req.offset.  Returns 0,
 * or a negative errno after failing the WQE (bad local buffer).
 */
static int req_send_packet(struct sroce_qp *qp, struct sroce_swqe *s)
{
	struct roce_pkt_info pi = {};
	bool is_read = s->wqe.opcode == IB_WR_RDMA_READ;
	bool is_awrite = s->wqe.opcode == SROCE_WR_ATOMIC_WRITE;
	bool is_flush = s->wqe.opcode == SROCE_WR_FLUSH;
	bool is_atomic = is_rd_atomic(s) && !is_read && !is_awrite && !is_flush;
	u32 payload = 0, hdr_len, pad;
	const struct sroce_av *av = qp_is_ud(qp) ? &s->av : &qp->av;
	struct sk_buff *skb;
	bool last;
	int err, n;

	/* A UD message is one packet of up to the port MTU (checked when
	 * the WQE was taken); UD QPs have no path MTU of their own.
	 */
	if (qp_is_ud(qp))
		payload = s->msg.length;
	else if (!is_read && !is_atomic)
		payload = min_t(u32, qp->mtu, s->msg.length - qp->req.offset);
	last = is_read || is_atomic || qp->req.offset + payload >= s->msg.length;

	pi.bth.opcode = req_opcode(qp, s, qp->req.offset == 0, last);
	pi.bth.se = last && (s->wqe.send_flags & IB_SEND_SOLICITED);
	pi.bth.pkey = ROCE_DEFAULT_PKEY;
	pi.bth.dest_qpn = qp_is_ud(qp) ? s->wqe.wr.ud.remote_qpn : qp->dest_qpn;
	pi.bth.psn = qp->req.psn;
	pi.bth.ackreq = qp_is_rc(qp) &&
			(last || psn_diff(qp->req.psn, s->msg.first_psn) % SROCE_ACKREQ_EVERY ==
					 SROCE_ACKREQ_EVERY - 1 ||
			 roce_window_wants_ack(&qp->req.window, req_unacked(qp)));
	pad = roce_pad_len(payload);
	pi.bth.padcnt = pad;
	if (qp_is_ud(qp)) {
		pi.deth.qkey = (s->wqe.wr.ud.remote_qkey & 0x80000000) ?
				       qp->qkey : s->wqe.wr.ud.remote_qkey;
		pi.deth.src_qpn = qp->ib.qp_num;
	}
	if (is_read || (qp->req.offset == 0 &&
			(s->wqe.opcode == IB_WR_RDMA_WRITE ||
			 s->wqe.opcode == IB_WR_RDMA_WRITE_WITH_IMM))) {
		pi.reth.va = s->wqe.wr.rdma.remote_addr + qp->req.offset;
		pi.reth.rkey = s->wqe.wr.rdma.rkey;
		pi.reth.len = s->msg.length - qp->req.offset;
	}
	if (is_awrite) {
		pi.reth.va = s->wqe.wr.atomic.remote_addr;
		pi.reth.rkey = s->wqe.wr.atomic.rkey;
		pi.reth.len = ROCE_ATOMIC_LEN;
	}
	if (is_flush) {
		pi.feth.placement = s->wqe.wr.flush.type;
		pi.feth.selectivity = s->wqe.wr.flush.level;
		pi.reth.va = s->wqe.wr.flush.remote_addr;
		pi.reth.rkey = s->wqe.wr.flush.rkey;
		pi.reth.len = s->wqe.wr.flush.length;
	}
	if (is_atomic) {
		pi.atmeth.va = s->wqe.wr.atomic.remote_addr;
		pi.atmeth.rkey = s->wqe.wr.atomic.rkey;
		pi.atmeth.swap_add = s->wqe.opcode == IB_WR_ATOMIC_CMP_AND_SWP ?
					     s->wqe.wr.atomic.swap :
					     s->wqe.wr.atomic.compare_add;
		pi.atmeth.compare = s->wqe.wr.atomic.compare_add;
	}
	pi.imm_be = s->wqe.imm_data;
	pi.ieth_rkey = s->wqe.imm_data;
	pi.xrc_srqn = s->wqe.xrc_srqn;	/* only XRC opcodes carry it */

	hdr_len = roce_opcode_get(pi.bth.opcode)->hdr_len;
	skb = sroce_skb_payload(qp->sdev, hdr_len, &(struct sroce_payload){
			.inline_data = (s->wqe.send_flags & IB_SEND_INLINE) ?
					       s->inline_data + qp->req.offset : NULL,
			.pd = qp->ib.pd,
			.sge = s->sge,
			.num_sge = s->wqe.num_sge,
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

	if (sroce_skb_send(qp->sdev, av, qp_is_ud(qp) ? NULL : &qp->dst_cache,
			   qp_is_ud(qp) ? sroce_udp_sport(av, qp->ib.qp_num,
							  s->wqe.wr.ud.remote_qpn) :
					  qp->sport, skb)) {
		/* Refused locally (queue full, neighbour unresolved): not
		 * sent, so not lost.  Send it again later, unchanged.
		 */
		sroce_tx_refused(qp);
		return -EAGAIN;
	}
	sroce_tx_resumed(qp);
	sroce_cc_sent(qp, av, hdr_len + payload + pad + ROCE_ICRC_LEN);

	if (is_read) {
		qp->req.psn = psn_add(s->msg.last_psn, 1);
		qp->req.offset = s->msg.length;
	} else {
		qp->req.psn = psn_add(qp->req.psn, 1);
		qp->req.offset += payload;
	}
	if (psn_after(qp->req.psn, qp->req.sent_end))
		qp->req.sent_end = qp->req.psn;
	if (last || qp->req.offset >= s->msg.length) {
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
	if (is_local_op(s->wqe.opcode)) {
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
					   qp_is_ud(qp) ||
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
	struct sroce_rwqe rwqe;
	struct sroce_rq *rq = qp->srq || sroce_qp_xrc(qp) ? NULL : &qp->rq;
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
	more = sq_fetch(qp, budget) > 0;
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
	for (n = 0; rq && n < budget; n++) {
		if (sroce_rq_pop(rq, &rwqe))
			break;
		sroce_flush_recv(qp, qp->rcq, rwqe.wr_id);
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
		if (sq_fetch(qp, budget) < 0) {
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

int sroce_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		    const struct ib_send_wr **bad_wr)
{
	struct sroce_qp *qp = to_sqp(ibqp);
	unsigned long flags;
	int err = 0;

	if (qp->user) {
		/* The doorbell: the WQEs are in the shared ring already. */
		sroce_count(qp->sdev, SROCE_CNT_SQ_DOORBELLS, 1);
		sroce_sched_run(qp);
		return 0;
	}
	if (READ_ONCE(qp->state) < IB_QPS_RTS && READ_ONCE(qp->state) != IB_QPS_ERR) {
		*bad_wr = wr;
		return -EINVAL;
	}

	/* irqsave: kernel consumers post with interrupts off (ib_send_mad,
	 * under the MAD agent's spin_lock_irqsave), where re-enabling
	 * bottom halves is not allowed (lockdep on the debug kernel).
	 */
	spin_lock_irqsave(&qp->req.lock, flags);
	for (; wr; wr = wr->next) {
		struct sroce_swqe *s;
		u64 length = 0;
		int i;

		if (qp->req.sq_prod - qp->req.retire >= qp->sq_slots) {
			err = -ENOMEM;
			break;
		}
		if (!opcode_allowed(qp, wr->opcode) ||
		    wr->num_sge > qp->max_send_sge) {
			err = -EINVAL;
			break;
		}
		s = sroce_swqe(qp, qp->req.sq_prod);
		memset(s, 0, sizeof(*s));
		s->wqe.wr_id = wr->wr_id;
		s->wqe.opcode = wr->opcode;
		s->msg.rd_atomic = sroce_wr_is_rd_atomic(wr->opcode);
		s->wqe.send_flags = wr->send_flags & ~IB_SEND_INLINE;
		s->wqe.num_sge = wr->num_sge;
		s->wqe.imm_data = wr->opcode == IB_WR_SEND_WITH_INV ||
				  wr->opcode == IB_WR_LOCAL_INV ?
					  wr->ex.invalidate_rkey :
					  (__force u32)wr->ex.imm_data;
		for (i = 0; i < wr->num_sge; i++) {
			s->sge[i].addr = wr->sg_list[i].addr;
			s->sge[i].length = wr->sg_list[i].length;
			s->sge[i].lkey = wr->sg_list[i].lkey;
			length += wr->sg_list[i].length;
		}
		s->msg.length = length;
		switch (wr->opcode) {
		case IB_WR_RDMA_WRITE:
		case IB_WR_RDMA_WRITE_WITH_IMM:
		case IB_WR_RDMA_READ:
			s->wqe.wr.rdma.remote_addr = rdma_wr(wr)->remote_addr;
			s->wqe.wr.rdma.rkey = rdma_wr(wr)->rkey;
			break;
		case IB_WR_ATOMIC_CMP_AND_SWP:
		case IB_WR_ATOMIC_FETCH_AND_ADD:
			s->wqe.wr.atomic.remote_addr = atomic_wr(wr)->remote_addr;
			s->wqe.wr.atomic.rkey = atomic_wr(wr)->rkey;
			s->wqe.wr.atomic.compare_add = atomic_wr(wr)->compare_add;
			s->wqe.wr.atomic.swap = atomic_wr(wr)->swap;
			break;
		case IB_WR_REG_MR:
			s->reg_key = reg_wr(wr)->key;
			s->reg_access = reg_wr(wr)->access;
			s->reg_mr = reg_wr(wr)->mr;
			break;
		case IB_WR_SEND:
		case IB_WR_SEND_WITH_IMM:
			if (qp_is_ud(qp)) {
				s->wqe.wr.ud.remote_qpn = ud_wr(wr)->remote_qpn;
				s->wqe.wr.ud.remote_qkey = ud_wr(wr)->remote_qkey;
				s->av = to_sah(ud_wr(wr)->ah)->av;
			}
			break;
		default:
			break;
		}
		if (qp_is_ud(qp) && length > sroce_port_mtu(qp->sdev)) {
			err = -EINVAL;
			break;
		}
		s->msg.state = ROCE_SQ_QUEUED;
		s->status = IB_WC_SUCCESS;
		qp->req.sq_prod++;
		qp->req.fetch = qp->req.sq_prod;
	}
	spin_unlock_irqrestore(&qp->req.lock, flags);
	if (err)
		*bad_wr = wr;
	sroce_sched_run(qp);
	return err;
}

int sroce_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		    const struct ib_recv_wr **bad_wr)
{
	struct sroce_qp *qp = to_sqp(ibqp);
	int err;

	if (qp->srq || qp->user || sroce_qp_xrc(qp)) {
		*bad_wr = wr;
		return -EINVAL;
	}
	err = sroce_rq_post(&qp->rq, wr, bad_wr);
	if (READ_ONCE(qp->state) == IB_QPS_ERR)
		sroce_sched_queue(qp);	/* flush them */
	return err;
}

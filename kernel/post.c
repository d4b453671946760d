// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Work requests coming in: a kernel consumer's ib_post_send() and
 * ib_post_recv(), and a process's WQEs copied from the ring it shares
 * with us into the kernel's shadow array, each checked once (nothing is
 * read from user memory twice).  The send engine (req.c) takes them from
 * the shadow.
 */
#include "proto/access.h"
#include "sroce.h"

/* The per-QP-type policy of the ABI header, which the provider offers. */
static bool opcode_allowed(const struct sroce_qp *qp, u32 opcode)
{
	u32 allowed = sroce_qp_xrc(qp) ? SROCE_XRC_WR_OPCODES :
		      sroce_qp_reliable(qp) ? SROCE_RC_WR_OPCODES :
		      sroce_qp_ud(qp) ? SROCE_UD_WR_OPCODES : SROCE_UC_WR_OPCODES;

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

/* ATOMIC WRITE: its 8 bytes go out as an inline payload (the shadow's
 * tail holds at least that), whatever max_inline is.
 */
static void sq_take_atomic_write(struct sroce_swqe *s)
{
	struct sroce_send_wqe *w = &s->wqe;

	BUILD_BUG_ON(sizeof(struct sroce_sge) < ROCE_ATOMIC_LEN);
	w->num_sge = 0;
	w->inline_len = ROCE_ATOMIC_LEN;
	w->send_flags |= IB_SEND_INLINE;
	memcpy(s->inline_data, &w->wr.atomic.compare_add, ROCE_ATOMIC_LEN);
	s->msg.length = ROCE_ATOMIC_LEN;
}

/* FLUSH: no payload; its operands are checked here, once, by the rule
 * the responder applies to the FETH they become.
 */
static void sq_take_flush(struct sroce_swqe *s)
{
	struct sroce_send_wqe *w = &s->wqe;
	struct roce_feth feth = { w->wr.flush.type, w->wr.flush.level };

	w->num_sge = 0;
	w->inline_len = 0;
	w->send_flags &= ~IB_SEND_INLINE;
	if (!roce_flush_rights(&feth))
		s->status = IB_WC_LOC_QP_OP_ERR;
}

/*
 * The payload of a SEND, WRITE or READ WQE from @slot: inline bytes or
 * SGEs, within the QP's limits.  Sets s->msg.length, or fails the WQE.
 */
static void sq_take_payload(struct sroce_qp *qp, struct sroce_swqe *s,
			    const u8 *slot)
{
	struct sroce_send_wqe *w = &s->wqe;
	u64 length = 0;
	u32 i;

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
	    (sroce_qp_ud(qp) && length > sroce_port_mtu(qp->sdev))) {
		s->status = IB_WC_LOC_LEN_ERR;
		return;
	}
	s->msg.length = length;
}

/* UD: the address handle the WQE names, if it is of the QP's PD. */
static void sq_take_ud_address(struct sroce_qp *qp, struct sroce_swqe *s)
{
	struct sroce_ah *ah;

	rcu_read_lock();
	ah = sroce_ah_lookup(qp->sdev, s->wqe.wr.ud.ah_num);
	if (ah && ah->ib.pd == qp->ib.pd)
		s->av = ah->av;
	else
		s->status = IB_WC_LOC_QP_OP_ERR;
	rcu_read_unlock();
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
	if (sroce_qp_xrc(qp) && !sroce_wr_is_local(w->opcode) &&
	    w->xrc_srqn > ROCE_QPN_MASK) {
		s->status = IB_WC_LOC_QP_OP_ERR;
		return;
	}
	if (sroce_wr_is_local(w->opcode)) {
		/* No payload: whatever the slot holds past the header is ignored. */
		w->num_sge = 0;
		w->inline_len = 0;
		w->send_flags &= ~IB_SEND_INLINE;
		return;
	}
	if (w->opcode == SROCE_WR_ATOMIC_WRITE) {
		sq_take_atomic_write(s);
		return;
	}
	if (w->opcode == SROCE_WR_FLUSH) {
		sq_take_flush(s);
		return;
	}
	sq_take_payload(qp, s, slot);
	if (s->status == IB_WC_SUCCESS && sroce_qp_ud(qp))
		sq_take_ud_address(qp, s);
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
int sroce_sq_fetch(struct sroce_qp *qp, u32 max)
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

/* A kernel consumer's WR into the shadow slot @s: 0 or -EINVAL. */
static int post_kernel_wqe(struct sroce_qp *qp, struct sroce_swqe *s,
			   const struct ib_send_wr *wr)
{
	u64 length = 0;
	int i;

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
		if (sroce_qp_ud(qp)) {
			s->wqe.wr.ud.remote_qpn = ud_wr(wr)->remote_qpn;
			s->wqe.wr.ud.remote_qkey = ud_wr(wr)->remote_qkey;
			s->av = to_sah(ud_wr(wr)->ah)->av;
		}
		break;
	default:
		break;
	}
	if (sroce_qp_ud(qp) && length > sroce_port_mtu(qp->sdev))
		return -EINVAL;
	s->msg.state = ROCE_SQ_QUEUED;
	s->status = IB_WC_SUCCESS;
	return 0;
}

int sroce_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		    const struct ib_send_wr **bad_wr)
{
	struct sroce_qp *qp = to_sqp(ibqp);
	unsigned long flags;
	int err = 0;

	/* An XRC target has no send queue and no send CQ: uverbs' POST_SEND
	 * reaches here for it all the same (the provider refuses it first).
	 */
	if (ibqp->qp_type == IB_QPT_XRC_TGT) {
		*bad_wr = wr;
		return -EINVAL;
	}
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
		if (qp->req.sq_prod - qp->req.retire >= qp->sq_slots) {
			err = -ENOMEM;
			break;
		}
		if (!opcode_allowed(qp, wr->opcode) ||
		    wr->num_sge > qp->max_send_sge) {
			err = -EINVAL;
			break;
		}
		err = post_kernel_wqe(qp, sroce_swqe(qp, qp->req.sq_prod), wr);
		if (err)
			break;
		qp->req.sq_prod++;
		qp->req.fetch = qp->req.sq_prod;
	}
	spin_unlock_irqrestore(&qp->req.lock, flags);
	if (err)
		*bad_wr = wr;
	/*
	 * The work item sends a kernel consumer's WRs, never the caller, as
	 * rxe's task does: the caller goes on posting while the engine runs.
	 * On one device, sending inline delivered each NVMe-oF command to the
	 * target in the submitter's own softirq pass; the target's completion
	 * worker (WQ_HIGHPRI) then preempted the submitter, so fio carried
	 * one read at a time through three context switches whatever its
	 * queue depth.  Measured (docs/bench/profile-notes.md, 4 KiB random
	 * reads, rxe in the same runs): QD 32 went from 0.55x rxe to 1.02x,
	 * 128 KiB reads from 1.36x to 2.18x; QD 1 is the price, 2.1x to 1.1x.
	 */
	sroce_sched_queue(qp);
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

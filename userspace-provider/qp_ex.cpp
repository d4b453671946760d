// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The ibv_wr_* send API (QPs created with IBV_QP_INIT_ATTR_SEND_OPS_FLAGS).
 *
 * wr_start takes the send-queue lock and opens a batch at the current
 * producer index; each builder (wr_send, wr_rdma_write, ...) claims the
 * next slot and writes the WQE header; the setters (wr_set_sge,
 * wr_set_inline_data, wr_set_ud_addr, ...) amend the WQE just built.
 * Nothing is visible to the kernel until wr_complete, which publishes the
 * whole batch with one producer store and at most one doorbell, exactly as
 * ibv_post_send does for a WR list.  The bytes a batch leaves in the ring
 * are the bytes ibv_post_send would write for the equivalent WRs.
 *
 * Builders and setters return void, so the first error is parked in the
 * batch and reported by wr_complete, which then publishes nothing
 * (ibv_wr_post(3): on error the whole batch is dropped).  Errors match
 * ibv_post_send's: EINVAL for an invalid request, ENOMEM for a full ring.
 */
#include "qp.hpp"

#include "ah.hpp"

namespace sroce {
namespace {

SendQueue &sq_of(ibv_qp_ex *ibqp) noexcept { return to_qp(ibqp)->sq; }

bool payload_opcode(uint32_t op) noexcept
{
	return op < 32 && (kPayloadWrOpcodes & (1u << op));
}

/*
 * Claims the next slot and writes a header carrying wr_id, wr_flags and
 * `op`, everything else zero.  Returns the WQE for the caller's
 * opcode-specific fields, or nullptr with the batch error set.
 */
sroce_send_wqe *begin_wqe(ibv_qp_ex *ibqp, ibv_wr_opcode op) noexcept
{
	SendQueue &sq = sq_of(ibqp);
	WrBatch &b = sq.batch;
	if (b.err)
		return nullptr;
	if (b.need_dest) { /* previous WQE never got its UD address or SRQ */
		b.err = EINVAL;
		return nullptr;
	}
	const unsigned flags = ibqp->wr_flags;
	if ((flags & ~kSupportedSendFlags) ||
	    ((flags & IBV_SEND_INLINE) && !payload_opcode(op))) {
		b.err = EINVAL;
		return nullptr;
	}
	if (!wq_has_room(sq, b.next)) {
		b.err = ENOMEM;
		return nullptr;
	}

	unsigned char *slot = sq.ring.slot(b.next);
	sroce_send_wqe h{};
	h.wr_id = ibqp->wr_id;
	h.opcode = op;
	h.send_flags = flags;
	std::memcpy(slot, &h, sizeof(h));

	b.last = reinterpret_cast<sroce_send_wqe *>(slot);
	++b.next;
	b.need_dest = sq.qp_type == IBV_QPT_UD ||
		      (sq.qp_type == IBV_QPT_XRC_SEND && xrc_needs_srqn(op));
	return b.last;
}

/* The WQE a setter amends, or nullptr (error set or already pending). */
sroce_send_wqe *current_wqe(ibv_qp_ex *ibqp) noexcept
{
	WrBatch &b = sq_of(ibqp).batch;
	if (b.err)
		return nullptr;
	if (!b.last) { /* a setter before any builder */
		b.err = EINVAL;
		return nullptr;
	}
	return b.last;
}

void fail(ibv_qp_ex *ibqp, int err) noexcept
{
	WrBatch &b = sq_of(ibqp).batch;
	if (!b.err)
		b.err = err;
}

/* ---- batch control ----------------------------------------------------- */

void wr_start(ibv_qp_ex *ibqp) noexcept
{
	SendQueue &sq = sq_of(ibqp);
	sq.lock.lock(); /* held until wr_complete/wr_abort */
	sq.batch = WrBatch{.next = sq.head};
	if (!can_post_send(ibqp->qp_base.state))
		sq.batch.err = EINVAL; /* as ibv_post_send; wr_complete says */
	else if (!sq.ring.attached())
		sq.batch.err = ENOMEM; /* zero-depth send queue */
}

int wr_complete(ibv_qp_ex *ibqp) noexcept
{
	SendQueue &sq = sq_of(ibqp);
	int err = sq.batch.err;
	if (!err && sq.batch.need_dest)
		err = EINVAL;
	const bool publish = !err && sq.batch.next != sq.head;
	if (publish)
		sq_publish(sq, sq.batch.next);
	sq.batch = WrBatch{};
	sq.lock.unlock();

	/*
	 * Outside the lock, as for ibv_post_send.  A doorbell failure leaves
	 * the WQEs published: they run at the next doorbell, so the error
	 * must not be read as "batch dropped".
	 */
	if (publish)
		err = sq_doorbell_if_needed(sq);
	return err;
}

void wr_abort(ibv_qp_ex *ibqp) noexcept
{
	SendQueue &sq = sq_of(ibqp);
	/* Slots written so far are simply reused by the next batch. */
	sq.batch = WrBatch{};
	sq.lock.unlock();
}

/* ---- builders ---------------------------------------------------------- */

void wr_send(ibv_qp_ex *ibqp) noexcept
{
	begin_wqe(ibqp, IBV_WR_SEND);
}

void wr_send_imm(ibv_qp_ex *ibqp, __be32 imm_data) noexcept
{
	if (sroce_send_wqe *w = begin_wqe(ibqp, IBV_WR_SEND_WITH_IMM))
		w->imm_data = imm_data;
}

void wr_send_inv(ibv_qp_ex *ibqp, uint32_t invalidate_rkey) noexcept
{
	if (sroce_send_wqe *w = begin_wqe(ibqp, IBV_WR_SEND_WITH_INV))
		w->imm_data = invalidate_rkey;
}

void wr_rdma_write(ibv_qp_ex *ibqp, uint32_t rkey, uint64_t remote_addr) noexcept
{
	if (sroce_send_wqe *w = begin_wqe(ibqp, IBV_WR_RDMA_WRITE)) {
		w->wr.rdma.remote_addr = remote_addr;
		w->wr.rdma.rkey = rkey;
	}
}

void wr_rdma_write_imm(ibv_qp_ex *ibqp, uint32_t rkey, uint64_t remote_addr,
		       __be32 imm_data) noexcept
{
	if (sroce_send_wqe *w = begin_wqe(ibqp, IBV_WR_RDMA_WRITE_WITH_IMM)) {
		w->imm_data = imm_data;
		w->wr.rdma.remote_addr = remote_addr;
		w->wr.rdma.rkey = rkey;
	}
}

void wr_rdma_read(ibv_qp_ex *ibqp, uint32_t rkey, uint64_t remote_addr) noexcept
{
	if (sroce_send_wqe *w = begin_wqe(ibqp, IBV_WR_RDMA_READ)) {
		w->wr.rdma.remote_addr = remote_addr;
		w->wr.rdma.rkey = rkey;
	}
}

void wr_atomic_cmp_swp(ibv_qp_ex *ibqp, uint32_t rkey, uint64_t remote_addr,
		       uint64_t compare, uint64_t swap) noexcept
{
	if (sroce_send_wqe *w = begin_wqe(ibqp, IBV_WR_ATOMIC_CMP_AND_SWP)) {
		w->wr.atomic.remote_addr = remote_addr;
		w->wr.atomic.compare_add = compare;
		w->wr.atomic.swap = swap;
		w->wr.atomic.rkey = rkey;
	}
}

void wr_atomic_fetch_add(ibv_qp_ex *ibqp, uint32_t rkey, uint64_t remote_addr,
			 uint64_t add) noexcept
{
	if (sroce_send_wqe *w = begin_wqe(ibqp, IBV_WR_ATOMIC_FETCH_AND_ADD)) {
		w->wr.atomic.remote_addr = remote_addr;
		w->wr.atomic.compare_add = add;
		w->wr.atomic.rkey = rkey;
	}
}

#if SROCE_VERBS_HAVE_ATOMIC_WRITE
/* The 8 bytes are copied now: the caller's buffer may go at once. */
void wr_atomic_write(ibv_qp_ex *ibqp, uint32_t rkey, uint64_t remote_addr,
		     const void *atomic_wr) noexcept
{
	if (sroce_send_wqe *w = begin_wqe(ibqp, IBV_WR_ATOMIC_WRITE)) {
		w->wr.atomic.remote_addr = remote_addr;
		std::memcpy(&w->wr.atomic.compare_add, atomic_wr,
			    sizeof(w->wr.atomic.compare_add));
		w->wr.atomic.rkey = rkey;
	}
}
#endif

#if SROCE_VERBS_HAVE_FLUSH
/*
 * The range's length travels in the RETH's 32 bits: a longer range is
 * EINVAL (at wr_complete), as is a type or level libibverbs does not
 * define.  For the whole MR the length is meaningless and sent as 0.
 */
void wr_flush(ibv_qp_ex *ibqp, uint32_t rkey, uint64_t remote_addr, size_t len,
	      uint8_t type, uint8_t level) noexcept
{
	sroce_send_wqe *w = begin_wqe(ibqp, IBV_WR_FLUSH);
	if (!w)
		return;
	const bool whole_mr = level == IBV_FLUSH_MR;
	if (!type || (type & ~(IBV_FLUSH_GLOBAL | IBV_FLUSH_PERSISTENT)) ||
	    (level != IBV_FLUSH_RANGE && !whole_mr) ||
	    (!whole_mr && len > UINT32_MAX)) {
		fail(ibqp, EINVAL);
		return;
	}
	w->wr.flush.remote_addr = remote_addr;
	w->wr.flush.rkey = rkey;
	w->wr.flush.length = whole_mr ? 0 : static_cast<uint32_t>(len);
	w->wr.flush.type = type;
	w->wr.flush.level = level;
}
#endif

void wr_local_inv(ibv_qp_ex *ibqp, uint32_t invalidate_rkey) noexcept
{
	if (sroce_send_wqe *w = begin_wqe(ibqp, IBV_WR_LOCAL_INV))
		w->imm_data = invalidate_rkey;
}

void wr_bind_mw(ibv_qp_ex *ibqp, ibv_mw *mw, uint32_t rkey,
		const ibv_mw_bind_info *info) noexcept
{
	if (!info || validate_bind(mw, rkey, *info)) {
		fail(ibqp, EINVAL);
		return;
	}
	if (sroce_send_wqe *w = begin_wqe(ibqp, IBV_WR_BIND_MW))
		encode_bind(*w, rkey, *info);
}

/* ---- setters ----------------------------------------------------------- */

void wr_set_sge_list(ibv_qp_ex *ibqp, size_t num_sge,
		     const ibv_sge *sg_list) noexcept
{
	sroce_send_wqe *w = current_wqe(ibqp);
	if (!w)
		return;
	if (num_sge > sq_of(ibqp).max_sge || (num_sge && !sg_list)) {
		fail(ibqp, EINVAL);
		return;
	}
	/* Data now comes from SGEs, whatever an earlier setter said. */
	w->send_flags &= ~static_cast<uint32_t>(IBV_SEND_INLINE);
	w->inline_len = 0;
	w->num_sge = static_cast<uint32_t>(num_sge);
	encode_sges(w, sg_list, w->num_sge);
}

void wr_set_sge(ibv_qp_ex *ibqp, uint32_t lkey, uint64_t addr,
		uint32_t length) noexcept
{
	const ibv_sge sge{.addr = addr, .length = length, .lkey = lkey};
	wr_set_sge_list(ibqp, 1, &sge);
}

void wr_set_inline_data_list(ibv_qp_ex *ibqp, size_t num_buf,
			     const ibv_data_buf *buf_list) noexcept
{
	sroce_send_wqe *w = current_wqe(ibqp);
	if (!w)
		return;
	SendQueue &sq = sq_of(ibqp);
	if (!payload_opcode(w->opcode) || (num_buf && !buf_list)) {
		fail(ibqp, EINVAL);
		return;
	}
	uint64_t total = 0;
	for (size_t i = 0; i < num_buf; ++i)
		total += buf_list[i].length;
	if (total > sq.max_inline) {
		fail(ibqp, EINVAL);
		return;
	}

	auto *dst = reinterpret_cast<unsigned char *>(w) + sizeof(*w);
	for (size_t i = 0; i < num_buf; ++i) {
		if (buf_list[i].length == 0)
			continue;
		std::memcpy(dst, buf_list[i].addr, buf_list[i].length);
		dst += buf_list[i].length;
	}
	w->send_flags |= IBV_SEND_INLINE;
	w->num_sge = 0;
	w->inline_len = static_cast<uint32_t>(total);
}

void wr_set_inline_data(ibv_qp_ex *ibqp, void *addr, size_t length) noexcept
{
	const ibv_data_buf buf{.addr = addr, .length = length};
	wr_set_inline_data_list(ibqp, 1, &buf);
}

void wr_set_ud_addr(ibv_qp_ex *ibqp, ibv_ah *ah, uint32_t remote_qpn,
		    uint32_t remote_qkey) noexcept
{
	sroce_send_wqe *w = current_wqe(ibqp);
	if (!w)
		return;
	if (!ah) {
		fail(ibqp, EINVAL);
		return;
	}
	w->wr.ud.ah_num = to_ah(ah)->ah_num;
	w->wr.ud.remote_qpn = remote_qpn;
	w->wr.ud.remote_qkey = remote_qkey;
	w->wr.ud.reserved = 0;
	sq_of(ibqp).batch.need_dest = false;
}

void wr_set_xrc_srqn(ibv_qp_ex *ibqp, uint32_t remote_srqn) noexcept
{
	sroce_send_wqe *w = current_wqe(ibqp);
	if (!w)
		return;
	if (remote_srqn > kMaxXrcSrqn) {
		fail(ibqp, EINVAL);
		return;
	}
	w->xrc_srqn = remote_srqn;
	sq_of(ibqp).batch.need_dest = false;
}

} /* namespace */

void install_qp_ex_ops(Qp &qp, uint64_t ops) noexcept
{
	ibv_qp_ex &ex = qp.vqp.qp_ex;

	/* Only the requested builders: the others stay NULL, as elsewhere. */
	if (ops & IBV_QP_EX_WITH_SEND)
		ex.wr_send = wr_send;
	if (ops & IBV_QP_EX_WITH_SEND_WITH_IMM)
		ex.wr_send_imm = wr_send_imm;
	if (ops & IBV_QP_EX_WITH_SEND_WITH_INV)
		ex.wr_send_inv = wr_send_inv;
	if (ops & IBV_QP_EX_WITH_RDMA_WRITE)
		ex.wr_rdma_write = wr_rdma_write;
	if (ops & IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM)
		ex.wr_rdma_write_imm = wr_rdma_write_imm;
	if (ops & IBV_QP_EX_WITH_RDMA_READ)
		ex.wr_rdma_read = wr_rdma_read;
	if (ops & IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP)
		ex.wr_atomic_cmp_swp = wr_atomic_cmp_swp;
	if (ops & IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD)
		ex.wr_atomic_fetch_add = wr_atomic_fetch_add;
#if SROCE_VERBS_HAVE_ATOMIC_WRITE
	if (ops & IBV_QP_EX_WITH_ATOMIC_WRITE)
		ex.wr_atomic_write = wr_atomic_write;
#endif
#if SROCE_VERBS_HAVE_FLUSH
	if (ops & IBV_QP_EX_WITH_FLUSH)
		ex.wr_flush = wr_flush;
#endif
	if (ops & IBV_QP_EX_WITH_LOCAL_INV)
		ex.wr_local_inv = wr_local_inv;
	if (ops & IBV_QP_EX_WITH_BIND_MW)
		ex.wr_bind_mw = wr_bind_mw;

	ex.wr_set_sge = wr_set_sge;
	ex.wr_set_sge_list = wr_set_sge_list;
	ex.wr_set_inline_data = wr_set_inline_data;
	ex.wr_set_inline_data_list = wr_set_inline_data_list;
	if (qp.sq.qp_type == IBV_QPT_UD)
		ex.wr_set_ud_addr = wr_set_ud_addr;
	if (qp.sq.qp_type == IBV_QPT_XRC_SEND)
		ex.wr_set_xrc_srqn = wr_set_xrc_srqn;

	ex.wr_start = wr_start;
	ex.wr_complete = wr_complete;
	ex.wr_abort = wr_abort;

	qp.vqp.comp_mask |= VERBS_QP_EX;
}

} /* namespace sroce */

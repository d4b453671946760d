// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Work queue ring logic: ibv_post_send/ibv_post_recv encoding and the
 * doorbell protocol.  See wq.hpp for the contracts.  The QP-state checks
 * live in qp.cpp/qp_ex.cpp, which see ibv_qp::state.
 *
 * Validation mirrors what a hardware provider rejects before the WQE
 * reaches the device: an opcode the QP type cannot carry, more SGEs than
 * the QP was created with, too much inline data, unknown send flags, a UD
 * send without an AH.  Everything that needs the remote side or the MR
 * tables (bad lkeys, a misaligned atomic target, a short atomic SGE) is
 * left to the kernel, which completes the WQE with an error status, as
 * mlx5 hardware would.  (rxe rejects misaligned atomics at post time; an
 * error completion is what the IBA describes and what applications handle.)
 */
#include "wq.hpp"

#include "abi/cmd_abi.h"
#include "ah.hpp"

#include <unistd.h>

#include <cstring>
#include <mutex>

namespace sroce {
namespace {

/*
 * The opcode as the caller stored it.  Read as raw bits: a C caller can
 * store any value in the enum field, and loading an out-of-range value
 * through the C++ enum type would be undefined.
 */
uint32_t raw_opcode(const ibv_send_wr &wr) noexcept
{
	static_assert(sizeof(wr.opcode) == sizeof(uint32_t));
	uint32_t op;
	std::memcpy(&op, &wr.opcode, sizeof(op));
	return op;
}

bool opcode_in(uint32_t op, uint32_t set) noexcept
{
	return op < 32 && (set & (1u << op));
}

unsigned char *wqe_data(unsigned char *slot) noexcept
{
	return slot + sizeof(sroce_send_wqe);
}

/* 0 or EINVAL; on success *inline_len is the inline byte count. */
int validate_send_wr(const SendQueue &sq, const ibv_send_wr &wr, uint32_t op,
		     uint32_t *inline_len) noexcept
{
	if (!opcode_in(op, sq.opcodes))
		return EINVAL;
	if (wr.send_flags & ~kSupportedSendFlags)
		return EINVAL;
	*inline_len = 0;
	if (op == IBV_WR_BIND_MW) /* no scatter list: sg_list is ignored */
		return (wr.send_flags & IBV_SEND_INLINE)
			       ? EINVAL
			       : validate_bind(wr.bind_mw.mw, wr.bind_mw.rkey,
					       wr.bind_mw.bind_info);
	if (wr.num_sge < 0 || static_cast<uint32_t>(wr.num_sge) > sq.max_sge)
		return EINVAL;
	if (wr.num_sge > 0 && !wr.sg_list)
		return EINVAL;

	if (wr.send_flags & IBV_SEND_INLINE) {
		/* Inline only makes sense where payload leaves from SGEs. */
		if (!opcode_in(op, kPayloadWrOpcodes))
			return EINVAL;
		uint64_t total = 0;
		for (int i = 0; i < wr.num_sge; ++i)
			total += wr.sg_list[i].length;
		if (total > sq.max_inline)
			return EINVAL;
		*inline_len = static_cast<uint32_t>(total);
	}

	if (sq.qp_type == IBV_QPT_UD && !wr.wr.ud.ah)
		return EINVAL;
	/* An XRC SRQ number has 24 bits: never send a truncated one. */
	if (sq.qp_type == IBV_QPT_XRC_SEND && xrc_needs_srqn(op) &&
	    wr.qp_type.xrc.remote_srqn > kMaxXrcSrqn)
		return EINVAL;
	return 0;
}

void copy_inline(unsigned char *dst, const ibv_sge *sg, int num) noexcept
{
	for (int i = 0; i < num; ++i) {
		const uint32_t len = sg[i].length;
		if (len == 0)
			continue; /* addr may be anything, even NULL */
		std::memcpy(dst, reinterpret_cast<const void *>(
					 static_cast<uintptr_t>(sg[i].addr)),
			    len);
		dst += len;
	}
}

/* Fills one validated WR into `slot`: header, then SGEs or inline bytes. */
void encode_send_wr(const SendQueue &sq, const ibv_send_wr &wr, uint32_t op,
		    uint32_t inline_len, unsigned char *slot) noexcept
{
	/*
	 * Built on the stack and stored with one memcpy: every header byte,
	 * reserved ones included, is written, so a stale slot never leaks
	 * old fields into a new WQE.
	 */
	sroce_send_wqe h{};
	h.wr_id = wr.wr_id;
	h.opcode = op;
	h.send_flags = wr.send_flags;

	switch (op) {
	case IBV_WR_SEND_WITH_IMM:
		h.imm_data = wr.imm_data;
		break;
	case IBV_WR_SEND_WITH_INV:
	case IBV_WR_LOCAL_INV:
		h.imm_data = wr.invalidate_rkey;
		break;
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		h.imm_data = wr.imm_data;
		h.wr.rdma.remote_addr = wr.wr.rdma.remote_addr;
		h.wr.rdma.rkey = wr.wr.rdma.rkey;
		break;
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_READ:
		h.wr.rdma.remote_addr = wr.wr.rdma.remote_addr;
		h.wr.rdma.rkey = wr.wr.rdma.rkey;
		break;
	case IBV_WR_BIND_MW:
		encode_bind(h, wr.bind_mw.rkey, wr.bind_mw.bind_info);
		std::memcpy(slot, &h, sizeof(h));
		return;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		h.wr.atomic.remote_addr = wr.wr.atomic.remote_addr;
		h.wr.atomic.compare_add = wr.wr.atomic.compare_add;
		/* Fetch-and-add has no swap operand: don't copy stack junk. */
		h.wr.atomic.swap = op == IBV_WR_ATOMIC_CMP_AND_SWP
					   ? wr.wr.atomic.swap
					   : 0;
		h.wr.atomic.rkey = wr.wr.atomic.rkey;
		break;
	default:
		break;
	}

	if (sq.qp_type == IBV_QPT_UD) {
		h.wr.ud.ah_num = to_ah(wr.wr.ud.ah)->ah_num;
		h.wr.ud.remote_qpn = wr.wr.ud.remote_qpn;
		h.wr.ud.remote_qkey = wr.wr.ud.remote_qkey;
	}
	if (sq.qp_type == IBV_QPT_XRC_SEND && xrc_needs_srqn(op))
		h.xrc_srqn = wr.qp_type.xrc.remote_srqn;

	if (wr.send_flags & IBV_SEND_INLINE) {
		h.inline_len = inline_len;
		copy_inline(wqe_data(slot), wr.sg_list, wr.num_sge);
	} else {
		h.num_sge = static_cast<uint32_t>(wr.num_sge);
		encode_sges(reinterpret_cast<sroce_send_wqe *>(slot),
			    wr.sg_list, h.num_sge);
	}
	std::memcpy(slot, &h, sizeof(h));
}

} /* namespace */

void encode_sges(sroce_send_wqe *wqe, const ibv_sge *sg, uint32_t num) noexcept
{
	auto *dst = wqe_data(reinterpret_cast<unsigned char *>(wqe));
	for (uint32_t i = 0; i < num; ++i) {
		const sroce_sge s{.addr = sg[i].addr,
				  .length = sg[i].length,
				  .lkey = sg[i].lkey};
		std::memcpy(dst + i * sizeof(s), &s, sizeof(s));
	}
}

int validate_bind(const ibv_mw *mw, uint32_t rkey,
		  const ibv_mw_bind_info &info) noexcept
{
	constexpr uint32_t kKeyIndexMask = ~uint32_t{0xff};
	if (!mw || ((rkey ^ mw->rkey) & kKeyIndexMask))
		return EINVAL;
	if (!info.mr && (info.addr || info.length))
		return EINVAL;
	if (info.mr && info.mr->pd != mw->pd)
		return EINVAL;
	return 0;
}

void encode_bind(sroce_send_wqe &h, uint32_t rkey,
		 const ibv_mw_bind_info &info) noexcept
{
	h.num_sge = 0;
	h.inline_len = 0;
	h.wr.bind.addr = info.addr;
	h.wr.bind.length = info.length;
	h.wr.bind.mr_lkey = info.mr ? info.mr->lkey : 0;
	h.wr.bind.mw_rkey = rkey;
	h.wr.bind.access = info.mw_access_flags;
	h.wr.bind.reserved = 0;
}

int init_send_queue(SendQueue &sq, void *base, std::size_t length,
		    uint32_t num_slots, uint32_t slot_size, ibv_qp_type type,
		    uint32_t max_wr, uint32_t max_sge, uint32_t max_inline,
		    const Doorbell &doorbell) noexcept
{
	const uint32_t opcodes = wr_opcodes_for(type);
	if (!opcodes)
		return EINVAL;
	if (max_wr > num_slots)
		return EPROTO;
	const int ret = sq.ring.attach(base, length, num_slots, slot_size,
				       send_slot_bytes(max_sge, max_inline));
	if (ret)
		return ret;
	sq.head = sq.ring.producer(std::memory_order_relaxed);
	sq.seen_tail = sq.ring.consumer(std::memory_order_acquire);
	sq.depth = max_wr;
	sq.max_sge = max_sge;
	sq.max_inline = max_inline;
	sq.opcodes = opcodes;
	sq.qp_type = type;
	sq.doorbell = doorbell;
	sq.batch = WrBatch{};
	return 0;
}

int init_recv_queue(RecvQueue &rq, void *base, std::size_t length,
		    uint32_t num_slots, uint32_t slot_size, uint32_t max_wr,
		    uint32_t max_sge, const Doorbell &doorbell) noexcept
{
	if (max_wr > num_slots)
		return EPROTO;
	const int ret = rq.ring.attach(base, length, num_slots, slot_size,
				       recv_slot_bytes(max_sge));
	if (ret)
		return ret;
	rq.head = rq.ring.producer(std::memory_order_relaxed);
	rq.seen_tail = rq.ring.consumer(std::memory_order_acquire);
	rq.depth = max_wr;
	rq.max_sge = max_sge;
	rq.doorbell = doorbell;
	return 0;
}

namespace {

/* The fence-and-check of both queue kinds; see sq_doorbell_if_needed. */
int doorbell_if_needed(const Ring &ring, const Doorbell &doorbell,
		       uint32_t flag) noexcept
{
	std::atomic_thread_fence(std::memory_order_seq_cst);
	if (ring.notify(std::memory_order_relaxed) & flag)
		return doorbell.ring();
	return 0;
}

/*
 * The engine is idle and the kernel's poller may be watching the mark
 * page: set our bit instead of ringing.  The bit first, then a full
 * fence, then `watching`, paired with the kernel, which clears
 * `watching`, fences and takes every mark once more before it stops:
 * either it takes our mark, or we see 0 and ring.  The load before the
 * OR keeps a QP that posts again before the poller came from writing a
 * cache line the poller reads: a bit already set is a mark not yet taken.
 */
int mark_or_ring(const Doorbell &db) noexcept
{
	if (!db.marks)
		return db.ring();
	std::atomic_ref<__u64> word(db.marks->marks[db.mark / 64]);
	const __u64 bit = __u64(1) << (db.mark % 64);
	if (!(word.load(std::memory_order_relaxed) & bit))
		word.fetch_or(bit, std::memory_order_seq_cst);
	std::atomic_thread_fence(std::memory_order_seq_cst);
	if (!std::atomic_ref<uint32_t>(db.marks->watching).load(std::memory_order_relaxed))
		return db.ring();
	return 0;
}

} /* namespace */

int sq_doorbell_if_needed(const SendQueue &sq) noexcept
{
	/*
	 * Store-load barrier, paired with the kernel's: before its send
	 * engine sleeps it sets NEED_DOORBELL, issues smp_mb() and re-reads
	 * the producer.  With a full fence on both sides at least one of us
	 * sees the other's store: either the kernel sees the new producer and
	 * keeps draining, or we see the flag and ring.  Without the fence
	 * the load below could be satisfied before the producer store leaves
	 * the store buffer (x86 allows exactly that reordering), and the
	 * kernel would sleep with our WQEs in the ring.
	 */
	std::atomic_thread_fence(std::memory_order_seq_cst);
	const uint32_t notify = sq.ring.notify(std::memory_order_relaxed);
	if (notify & SROCE_SQ_NEED_DOORBELL)
		return sq.doorbell.ring();
	if (notify & SROCE_SQ_MARKED)
		return mark_or_ring(sq.doorbell);
	return 0;
}

int sq_post_send(SendQueue &sq, ibv_send_wr *wr, ibv_send_wr **bad_wr) noexcept
{
	int err = 0;
	bool published = false;
	{
		std::lock_guard<SpinLock> guard(sq.lock);

		if (!sq.ring.attached()) {
			/* A zero-depth send queue: every WR finds it full. */
			if (!wr)
				return 0;
			*bad_wr = wr;
			return ENOMEM;
		}

		uint32_t head = sq.head;
		for (; wr; wr = wr->next) {
			const uint32_t op = raw_opcode(*wr);
			uint32_t inline_len;
			err = validate_send_wr(sq, *wr, op, &inline_len);
			if (err)
				break;
			if (!wq_has_room(sq, head)) {
				err = ENOMEM;
				break;
			}
			encode_send_wr(sq, *wr, op, inline_len,
				       sq.ring.slot(head));
			++head;
		}
		if (err)
			*bad_wr = wr; /* as hardware providers: only on failure */

		/*
		 * The WRs before a bad one are posted, as on hardware: one
		 * producer store for the whole list.
		 */
		if (head != sq.head) {
			sq_publish(sq, head);
			published = true;
		}
	}

	/*
	 * At most one doorbell per call.  A doorbell failure is reported with
	 * *bad_wr NULL (as rxe does): no WR failed, the WQEs are in the ring
	 * and run at the next doorbell, so the caller must not post them
	 * again.
	 */
	if (published) {
		const int db_err = sq_doorbell_if_needed(sq);
		if (!err && db_err) {
			err = db_err;
			*bad_wr = nullptr;
		}
	}
	return err;
}

int rq_post_recv(RecvQueue &rq, ibv_recv_wr *wr, ibv_recv_wr **bad_wr) noexcept
{
	int err = 0;
	bool published = false;
	{
		std::lock_guard<SpinLock> guard(rq.lock);

		if (!rq.ring.attached()) {
			if (!wr)
				return 0;
			*bad_wr = wr;
			return ENOMEM;
		}

		uint32_t head = rq.head;
		for (; wr; wr = wr->next) {
			if (wr->num_sge < 0 ||
			    static_cast<uint32_t>(wr->num_sge) > rq.max_sge ||
			    (wr->num_sge > 0 && !wr->sg_list)) {
				err = EINVAL;
				break;
			}
			if (!wq_has_room(rq, head)) {
				err = ENOMEM;
				break;
			}

			unsigned char *slot = rq.ring.slot(head);
			const sroce_recv_wqe h{
				.wr_id = wr->wr_id,
				.num_sge = static_cast<uint32_t>(wr->num_sge),
				.reserved = 0,
			};
			std::memcpy(slot, &h, sizeof(h));
			for (int i = 0; i < wr->num_sge; ++i) {
				const sroce_sge s{.addr = wr->sg_list[i].addr,
						  .length = wr->sg_list[i].length,
						  .lkey = wr->sg_list[i].lkey};
				std::memcpy(slot + sizeof(h) + i * sizeof(s),
					    &s, sizeof(s));
			}
			++head;
		}
		if (err)
			*bad_wr = wr;

		if (head != rq.head) {
			rq.ring.publish_producer(head);
			rq.head = head;
			published = true;
		}
	}

	/*
	 * Normally the kernel reads the receive ring when a packet arrives
	 * and nothing more happens here.  Only a QP's RQ has a doorbell, and
	 * the kernel asks for it only in the error state, to flush what we
	 * just posted.  The fence pairs with the kernel setting the flag, as
	 * for the send queue.
	 */
	if (published && rq.doorbell.fn) {
		const int db_err = doorbell_if_needed(rq.ring, rq.doorbell,
						      SROCE_RQ_NEED_DOORBELL);
		if (!err && db_err) {
			err = db_err;
			*bad_wr = nullptr;
		}
	}
	return err;
}

int uverbs_post_send_doorbell(const Doorbell &db) noexcept
{
	/*
	 * Legacy write ABI: in_words/out_words count 4-byte words, in_words
	 * including the 8-byte header (the kernel requires in_words * 4 ==
	 * the write() length).  wr_count = 0 posts nothing; the kernel only
	 * kicks the send engine.  wqe_size must still be at least
	 * sizeof(ib_uverbs_send_wr): current kernels reject anything smaller.
	 */
	struct ibv_post_send cmd{};
	ib_uverbs_post_send_resp resp{};
	cmd.hdr.command = IB_USER_VERBS_CMD_POST_SEND;
	cmd.hdr.in_words = sizeof(cmd) / 4;
	cmd.hdr.out_words = sizeof(resp) / 4;
	ib_uverbs_post_send *core = cmd.core.get();
	core->response = reinterpret_cast<uintptr_t>(&resp);
	core->qp_handle = db.qp_handle;
	core->wr_count = 0;
	core->sge_count = 0;
	core->wqe_size = sizeof(ib_uverbs_send_wr);

	const ssize_t n = ::write(db.cmd_fd, &cmd, sizeof(cmd));
	if (n == static_cast<ssize_t>(sizeof(cmd)))
		return 0;
	return n < 0 ? errno : EIO;
}

} /* namespace sroce */

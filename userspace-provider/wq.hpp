// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Work queues: the send and receive rings of a QP and the ring of an SRQ,
 * with everything that happens on them between the application and the
 * kernel - validating work requests, encoding WQEs into slots, publishing
 * producer indices and deciding on the doorbell.
 *
 * No ibv_cmd_* and no allocation here: qp.cpp/srq.cpp create the kernel
 * objects and map the rings, then hand them to these types, and the unit
 * tests hand them rings in ordinary memory instead.
 */
#ifndef SROCE_WQ_HPP
#define SROCE_WQ_HPP

#include "ring.hpp"

#include <infiniband/verbs.h>

#include <cstdint>

namespace sroce {

/* Bit n set: ibv_wr_opcode n may be posted. */
constexpr uint32_t wr_opcode_bit(ibv_wr_opcode op)
{
	return 1u << static_cast<unsigned>(op);
}

/* Opcodes per QP type: the ABI header's one policy, which the kernel
 * enforces, in ibv_wr_opcode values (asserted equal to SROCE_WR_*).
 */
static_assert(IBV_WR_RDMA_WRITE == SROCE_WR_RDMA_WRITE &&
	      IBV_WR_RDMA_WRITE_WITH_IMM == SROCE_WR_RDMA_WRITE_WITH_IMM &&
	      IBV_WR_SEND == SROCE_WR_SEND &&
	      IBV_WR_SEND_WITH_IMM == SROCE_WR_SEND_WITH_IMM &&
	      IBV_WR_RDMA_READ == SROCE_WR_RDMA_READ &&
	      IBV_WR_ATOMIC_CMP_AND_SWP == SROCE_WR_ATOMIC_CMP_AND_SWP &&
	      IBV_WR_ATOMIC_FETCH_AND_ADD == SROCE_WR_ATOMIC_FETCH_AND_ADD &&
	      IBV_WR_LOCAL_INV == SROCE_WR_LOCAL_INV &&
	      IBV_WR_BIND_MW == SROCE_WR_BIND_MW &&
	      IBV_WR_SEND_WITH_INV == SROCE_WR_SEND_WITH_INV,
	      "WQE opcodes are libibverbs' values");
#if SROCE_VERBS_HAVE_ATOMIC_WRITE
static_assert(IBV_WR_ATOMIC_WRITE == SROCE_WR_ATOMIC_WRITE &&
		      IBV_WC_ATOMIC_WRITE == SROCE_WC_ATOMIC_WRITE,
	      "ATOMIC WRITE opcodes are libibverbs' values");
#endif
#if SROCE_VERBS_HAVE_FLUSH
static_assert(IBV_WR_FLUSH == SROCE_WR_FLUSH && IBV_WC_FLUSH == SROCE_WC_FLUSH &&
	      IBV_FLUSH_GLOBAL == SROCE_FLUSH_GLOBAL &&
	      IBV_FLUSH_PERSISTENT == SROCE_FLUSH_PERSISTENT &&
	      IBV_FLUSH_RANGE == SROCE_FLUSH_RANGE && IBV_FLUSH_MR == SROCE_FLUSH_MR,
	      "FLUSH's opcodes and operands are libibverbs' values");
#endif
static_assert(IBV_SEND_FENCE == SROCE_SEND_FENCE &&
	      IBV_SEND_SIGNALED == SROCE_SEND_SIGNALED &&
	      IBV_SEND_SOLICITED == SROCE_SEND_SOLICITED &&
	      IBV_SEND_INLINE == SROCE_SEND_INLINE,
	      "WQE send_flags are libibverbs' values");
static_assert(IBV_ACCESS_REMOTE_WRITE == SROCE_ACCESS_REMOTE_WRITE &&
	      IBV_ACCESS_REMOTE_READ == SROCE_ACCESS_REMOTE_READ &&
	      IBV_ACCESS_REMOTE_ATOMIC == SROCE_ACCESS_REMOTE_ATOMIC &&
	      IBV_ACCESS_ZERO_BASED == SROCE_ACCESS_ZERO_BASED,
	      "bind access bits are libibverbs' values");
/* ibv_post_send's: ibv_send_wr has no field for ATOMIC WRITE's value or
 * FLUSH's operands (they are ibv_wr_atomic_write()'s and ibv_wr_flush()'s
 * only, as with rxe).
 */
constexpr uint32_t kRcWrOpcodes =
	SROCE_RC_WR_OPCODES & ~SROCE_WR_BIT(SROCE_WR_ATOMIC_WRITE) &
	~SROCE_WR_BIT(SROCE_WR_FLUSH); /* a name from rdma-core 45 on */
constexpr uint32_t kUcWrOpcodes = SROCE_UC_WR_OPCODES;
constexpr uint32_t kUdWrOpcodes = SROCE_UD_WR_OPCODES;
constexpr uint32_t kXrcWrOpcodes = SROCE_XRC_WR_OPCODES;
static_assert(!(kXrcWrOpcodes & ~kRcWrOpcodes), "XRC sends a subset of RC's");
/* An XRCETH carries 24 bits of SRQ number. */
constexpr uint32_t kMaxXrcSrqn = 0xFFFFFF;
/* Work requests that go to the wire, and so to an XRC SRQ. */
constexpr bool xrc_needs_srqn(uint32_t op)
{
	return op != IBV_WR_LOCAL_INV && op != IBV_WR_BIND_MW;
}

/*
 * 0 for QP types without a send queue we drive (XRC receive QPs, raw
 * packet, ...).
 */
constexpr uint32_t wr_opcodes_for(ibv_qp_type type)
{
	switch (type) {
	case IBV_QPT_RC:
		return kRcWrOpcodes;
	case IBV_QPT_UC:
		return kUcWrOpcodes;
	case IBV_QPT_UD:
		return kUdWrOpcodes;
	case IBV_QPT_XRC_SEND:
		return kXrcWrOpcodes;
	default:
		return 0;
	}
}

/* Opcodes whose payload goes out from the SGEs (so IBV_SEND_INLINE applies). */
constexpr uint32_t kPayloadWrOpcodes =
	wr_opcode_bit(IBV_WR_SEND) | wr_opcode_bit(IBV_WR_SEND_WITH_IMM) |
	wr_opcode_bit(IBV_WR_SEND_WITH_INV) | wr_opcode_bit(IBV_WR_RDMA_WRITE) |
	wr_opcode_bit(IBV_WR_RDMA_WRITE_WITH_IMM);

/*
 * send_flags the kernel understands in a WQE.  IBV_SEND_IP_CSUM is for
 * checksum-offloading raw/UD devices; we advertise no such offload.
 */
constexpr unsigned kSupportedSendFlags = IBV_SEND_FENCE | IBV_SEND_SIGNALED |
					 IBV_SEND_SOLICITED | IBV_SEND_INLINE;

/* Bytes a send slot needs for `max_sge` SGEs or `max_inline` inline bytes. */
constexpr uint64_t send_slot_bytes(uint32_t max_sge, uint32_t max_inline)
{
	const uint64_t sges = uint64_t{max_sge} * sizeof(sroce_sge);
	return sizeof(sroce_send_wqe) + (sges > max_inline ? sges : max_inline);
}
constexpr uint64_t recv_slot_bytes(uint32_t max_sge)
{
	return sizeof(sroce_recv_wqe) + uint64_t{max_sge} * sizeof(sroce_sge);
}

/*
 * The state of a batch built with the ibv_wr_* API (qp_ex.cpp) between
 * wr_start and wr_complete/wr_abort.  Lives in the queue so the builders
 * can reach it from the ibv_qp_ex pointer alone.
 */
struct WrBatch {
	uint32_t next = 0;          /* index the next builder fills */
	int err = 0;                /* first error, reported by wr_complete */
	sroce_send_wqe *last = nullptr; /* WQE the setters amend */
	/* The last WQE still lacks its destination: a UD address
	 * (wr_set_ud_addr) or an XRC SRQ (wr_set_xrc_srqn). */
	bool need_dest = false;
};

/*
 * A QP's send queue.  `head` mirrors ctrl->producer (we are its only
 * writer, so the copy is exact and spares a load of a cache line the
 * kernel keeps polling); `seen_tail` is the kernel's consumer index as last
 * read, refreshed only when the queue looks full.  `depth` is the number of
 * outstanding WQEs allowed: the max_send_wr the application was granted,
 * which may be less than the power-of-two ring (an application that sized
 * its CQ for max_send_wr must not be able to exceed it).
 */
struct SendQueue {
	Ring ring;
	SpinLock lock;
	Doorbell doorbell;
	uint32_t head = 0;
	uint32_t seen_tail = 0;
	uint32_t depth = 0;
	uint32_t max_sge = 0;
	uint32_t max_inline = 0;
	uint32_t opcodes = 0;       /* wr_opcode_bit() set for this QP type */
	ibv_qp_type qp_type = IBV_QPT_RC;
	WrBatch batch;
};

/*
 * A QP's receive queue or an SRQ.  Receives normally need no system call:
 * the kernel reads the ring when a packet arrives.  The exception is a QP
 * in the error state, whose receives complete only by being flushed: the
 * kernel then sets SROCE_RQ_NEED_DOORBELL in the RQ's notify word, and the
 * QP's send doorbell (a POST_SEND write, which runs the flush) is rung.  An SRQ has
 * no doorbell (fn NULL): its WQEs belong to no single QP and are not
 * flushed by a QP's error.
 */
struct RecvQueue {
	Ring ring;
	SpinLock lock;
	Doorbell doorbell;
	uint32_t head = 0;
	uint32_t seen_tail = 0;
	uint32_t depth = 0; /* granted max_recv_wr / SRQ max_wr */
	uint32_t max_sge = 0;
};

/*
 * Binds a send queue to its ring and limits.  Checks that the ring has
 * room for max_wr WQEs and that a slot can hold the largest WQE the limits
 * allow.  Returns 0, EPROTO (the ring contradicts the limits) or EINVAL
 * (a QP type without a send queue we drive).
 */
int init_send_queue(SendQueue &sq, void *base, std::size_t length,
		    uint32_t num_slots, uint32_t slot_size, ibv_qp_type type,
		    uint32_t max_wr, uint32_t max_sge, uint32_t max_inline,
		    const Doorbell &doorbell) noexcept;
int init_recv_queue(RecvQueue &rq, void *base, std::size_t length,
		    uint32_t num_slots, uint32_t slot_size, uint32_t max_wr,
		    uint32_t max_sge, const Doorbell &doorbell = Doorbell{}) noexcept;

/*
 * True if the slot at free-running index `at` may be written: fewer than
 * `depth` (<= num_slots) WQEs would then be outstanding.  Re-reads
 * (acquire) the kernel's consumer index only when the cached one says
 * full, so a queue that is not near full never touches the kernel's cache
 * line.  The acquire also orders our slot writes after the kernel's last
 * read of that slot.
 */
template <typename Q> inline bool wq_has_room(Q &q, uint32_t at) noexcept
{
	if (at - q.seen_tail < q.depth)
		return true;
	q.seen_tail = q.ring.consumer(std::memory_order_acquire);
	return at - q.seen_tail < q.depth;
}

/*
 * Publishes [sq.head, new_head) to the kernel: one release store.  Caller
 * holds sq.lock.
 */
inline void sq_publish(SendQueue &sq, uint32_t new_head) noexcept
{
	sq.ring.publish_producer(new_head);
	sq.head = new_head;
}

/*
 * After publishing, and after dropping sq.lock (a doorbell is a system
 * call; other posters must not spin through it): rings the doorbell if,
 * and only if, the kernel asked for one.  Returns 0 or the doorbell's
 * errno.  Each publisher checks for itself, so two threads may both ring;
 * an extra doorbell is harmless, a missing one is not.
 */
int sq_doorbell_if_needed(const SendQueue &sq) noexcept;

/*
 * ibv_post_send on a send queue: validates and encodes each WR in turn,
 * stops at the first bad one (EINVAL) or when the ring is full (ENOMEM)
 * and points *bad_wr at it, then publishes everything encoded so far with
 * one producer store and at most one doorbell.  *bad_wr is written only
 * on failure; a failed doorbell returns its errno with *bad_wr NULL.
 */
int sq_post_send(SendQueue &sq, ibv_send_wr *wr, ibv_send_wr **bad_wr) noexcept;

/*
 * ibv_post_recv / ibv_post_srq_recv: same contract.  No system call unless
 * the QP is in the error state and the kernel asked for a doorbell to
 * flush what was posted (see RecvQueue).
 */
int rq_post_recv(RecvQueue &rq, ibv_recv_wr *wr, ibv_recv_wr **bad_wr) noexcept;

/*
 * The production doorbell: a legacy uverbs POST_SEND write() carrying no
 * work requests, which the kernel treats as "look at the send ring".
 */
int uverbs_post_send_doorbell(const Doorbell &db) noexcept;

/* Encoding shared by ibv_post_send and the ibv_wr_* builders. */
void encode_sges(sroce_send_wqe *wqe, const ibv_sge *sg, uint32_t num) noexcept;

/*
 * Memory window binds (IBV_WR_BIND_MW, ibv_wr_bind_mw, ibv_bind_mw).  What
 * the provider can see is checked at post time: a window, a new rkey that
 * keeps the window's index bits (only the low 8 bits are the consumer's),
 * an MR whenever there is a range, and an MR of the window's PD.  The
 * kernel checks the rest (window state, QP and MR rights, bounds) when
 * the WQE executes and completes it with IBV_WC_MW_BIND_ERR if it fails.
 * Returns 0 or EINVAL.
 */
int validate_bind(const ibv_mw *mw, uint32_t rkey,
		  const ibv_mw_bind_info &info) noexcept;
void encode_bind(sroce_send_wqe &h, uint32_t rkey,
		 const ibv_mw_bind_info &info) noexcept;

} /* namespace sroce */

#endif /* SROCE_WQ_HPP */

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Completion queues.  The kernel produces sroce_cqe slots into a shared
 * ring; the process consumes them without a system call (poll_cq and the
 * ibv_cq_ex poll API) and arms events by setting a flag in the ring's
 * notify word (req_notify_cq), also without one.
 */
#ifndef SROCE_CQ_HPP
#define SROCE_CQ_HPP

#include "abi/provider_abi.h"
#include "idle_poll.hpp"
#include "ring.hpp"

#include <cstring>
#include <type_traits>

namespace sroce {

struct Cq {
	/*
	 * First: libibverbs converts ibv_cq/ibv_cq_ex pointers to and from
	 * it.  Zeroed in full by the constructor: its union's larger member,
	 * ibv_cq_ex, must start with every unsupported read_* pointer NULL.
	 */
	verbs_cq vcq;
	Mapping map;
	Ring ring;
	SpinLock lock;
	uint32_t tail = 0; /* our consumer index; ctrl->consumer mirrors it */
	IdlePoll idle;     /* guarded by lock: when an empty poll yields */

	/* ibv_cq_ex batch state, valid between start_poll and end_poll. */
	uint32_t seen_head = 0; /* kernel producer as last acquired */
	bool polling = false;   /* lock held by a start_poll..end_poll batch */
	bool have_cur = false;  /* `cur` holds the CQE at `tail` */
	sroce_cqe cur{};

	Cq() noexcept { std::memset(&vcq, 0, sizeof(vcq)); }
	Cq(const Cq &) = delete;
	Cq &operator=(const Cq &) = delete;
};

inline Cq *to_cq(ibv_cq *ibcq) noexcept
{
	static_assert(std::is_standard_layout_v<Cq> && offsetof(Cq, vcq) == 0);
	return reinterpret_cast<Cq *>(ibcq);
}
inline Cq *to_cq(ibv_cq_ex *ibcq) noexcept
{
	return reinterpret_cast<Cq *>(ibcq);
}

/*
 * Binds a CQ to its ring (mapped or test memory).  The consumer starts
 * where the ring's control block says; the kernel initialises it.  Returns
 * 0 or EPROTO.  Caller holds cq.lock or owns the CQ exclusively.
 */
int init_cq_ring(Cq &cq, void *base, std::size_t length, uint32_t num_slots,
		 uint32_t slot_size) noexcept;

/* Fills the ibv_cq_ex poll API into cq.vcq.cq_ex. */
void install_cq_ex_ops(Cq &cq) noexcept;

/* wc_flags create_cq_ex accepts: the standard set plus the timestamp. */
constexpr uint64_t kSupportedWcFlags =
	uint64_t{IBV_WC_STANDARD_FLAGS} |
	uint64_t{IBV_WC_EX_WITH_COMPLETION_TIMESTAMP};

/*
 * Removes from @ibcq the completions of QP @qp_num it holds, keeping the
 * others in order, and returns how many it removed: a QP destroyed or
 * reset leaves nothing behind, as on ConnectX (mlx4, mlx5) and hns, so a
 * library may free what its wr_ids point at once the call returns.  Takes
 * the CQ lock: not to be called inside a start_poll..end_poll batch.
 */
uint32_t discard_qp_completions(ibv_cq *ibcq, uint32_t qp_num) noexcept;

/* Ops (cq.cpp). */
ibv_cq *create_cq(ibv_context *ibctx, int cqe, ibv_comp_channel *channel,
		  int comp_vector) noexcept;
ibv_cq_ex *create_cq_ex(ibv_context *ibctx,
			ibv_cq_init_attr_ex *attr) noexcept;
int destroy_cq(ibv_cq *ibcq) noexcept;
int resize_cq(ibv_cq *ibcq, int cqe) noexcept;
int poll_cq(ibv_cq *ibcq, int num_entries, ibv_wc *wc) noexcept;
int req_notify_cq(ibv_cq *ibcq, int solicited_only) noexcept;
/* Just armed: does the arm need the kernel to fire it now? (cq.cpp) */
bool armed_over_unpolled(const Cq &cq) noexcept;

} /* namespace sroce */

#endif /* SROCE_CQ_HPP */

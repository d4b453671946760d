// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Queue pairs: the kernel object plus the send ring and (without an SRQ)
 * the receive ring, mapped into the process.  Posting never allocates and
 * makes a system call only for a send doorbell the kernel asked for.
 */
#ifndef SROCE_QP_HPP
#define SROCE_QP_HPP

#include "abi/provider_abi.h"
#include "ring.hpp"
#include "wq.hpp"

#include <cstring>
#include <type_traits>

namespace sroce {

struct Qp {
	/*
	 * First: libibverbs casts ibv_qp and ibv_qp_ex pointers to
	 * verbs_qp (ibv_qp_to_qp_ex tests comp_mask & VERBS_QP_EX).  Zeroed
	 * in full by the constructor so the ibv_wr_* pointers of the union's
	 * larger member start NULL.
	 */
	verbs_qp vqp;
	SendQueue sq;
	RecvQueue rq;
	Mapping sq_map;
	Mapping rq_map;
	bool has_rq = false; /* false: receives go to an SRQ, or none (XRC) */

	Qp() noexcept { std::memset(&vqp, 0, sizeof(vqp)); }
	Qp(const Qp &) = delete;
	Qp &operator=(const Qp &) = delete;
};

inline Qp *to_qp(ibv_qp *ibqp) noexcept
{
	static_assert(std::is_standard_layout_v<Qp> && offsetof(Qp, vqp) == 0);
	return reinterpret_cast<Qp *>(ibqp);
}
inline Qp *to_qp(ibv_qp_ex *ibqp) noexcept
{
	/* qp_ex shares its address with qp in verbs_qp's union. */
	return reinterpret_cast<Qp *>(ibqp);
}

/*
 * Posting in these QP states is an immediate error (IBA 10.8.2: sends in
 * Reset, Init and RTR; C10-97.2.1: receives in Reset).  In Error the WRs
 * are accepted and flushed; in SQD/SQE sends queue up.  ibv_qp::state is
 * kept by libibverbs on every successful ibv_modify_qp/ibv_query_qp.
 */
constexpr bool can_post_send(ibv_qp_state state)
{
	return state != IBV_QPS_RESET && state != IBV_QPS_INIT &&
	       state != IBV_QPS_RTR;
}
constexpr bool can_post_recv(ibv_qp_state state)
{
	return state != IBV_QPS_RESET;
}

/*
 * The ibv_wr_* operations each QP type supports: IBV_QP_EX_WITH_X is bit
 * IBV_WR_X up to SEND_WITH_INV, so they are the same policy
 * (wr_opcodes_for); ATOMIC WRITE (opcode 15, bit 12) and FLUSH (opcode
 * 14, bit 11; rdma-core 45 on) come on top.
 */
static_assert(IBV_QP_EX_WITH_RDMA_WRITE == 1u << IBV_WR_RDMA_WRITE &&
	      IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM == 1u << IBV_WR_RDMA_WRITE_WITH_IMM &&
	      IBV_QP_EX_WITH_SEND == 1u << IBV_WR_SEND &&
	      IBV_QP_EX_WITH_SEND_WITH_IMM == 1u << IBV_WR_SEND_WITH_IMM &&
	      IBV_QP_EX_WITH_RDMA_READ == 1u << IBV_WR_RDMA_READ &&
	      IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP == 1u << IBV_WR_ATOMIC_CMP_AND_SWP &&
	      IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD == 1u << IBV_WR_ATOMIC_FETCH_AND_ADD &&
	      IBV_QP_EX_WITH_LOCAL_INV == 1u << IBV_WR_LOCAL_INV &&
	      IBV_QP_EX_WITH_BIND_MW == 1u << IBV_WR_BIND_MW &&
	      IBV_QP_EX_WITH_SEND_WITH_INV == 1u << IBV_WR_SEND_WITH_INV,
	      "send_ops bits are ibv_wr_opcode positions");
#if SROCE_VERBS_HAVE_ATOMIC_WRITE
static_assert(SROCE_RC_WR_OPCODES & (1u << IBV_WR_ATOMIC_WRITE),
	      "the kernel takes ATOMIC WRITE on RC");
#endif
#if SROCE_VERBS_HAVE_FLUSH
static_assert(SROCE_RC_WR_OPCODES & (1u << IBV_WR_FLUSH), "the kernel takes FLUSH on RC");
constexpr uint64_t kRcSendOps = kRcWrOpcodes | IBV_QP_EX_WITH_ATOMIC_WRITE |
				IBV_QP_EX_WITH_FLUSH;
#elif SROCE_VERBS_HAVE_ATOMIC_WRITE
constexpr uint64_t kRcSendOps = kRcWrOpcodes | IBV_QP_EX_WITH_ATOMIC_WRITE;
#else
constexpr uint64_t kRcSendOps = kRcWrOpcodes;
#endif
constexpr uint64_t kUcSendOps = kUcWrOpcodes;
constexpr uint64_t kUdSendOps = kUdWrOpcodes;
constexpr uint64_t kXrcSendOps = kXrcWrOpcodes;

constexpr uint64_t send_ops_for(ibv_qp_type type)
{
	switch (type) {
	case IBV_QPT_RC:
		return kRcSendOps;
	case IBV_QPT_UC:
		return kUcSendOps;
	case IBV_QPT_UD:
		return kUdSendOps;
	case IBV_QPT_XRC_SEND:
		return kXrcSendOps;
	default:
		return 0;
	}
}

/*
 * Installs the ibv_wr_* API for `send_ops_flags` (already checked against
 * send_ops_for()) and marks the QP extended.  qp.sq must be initialised.
 */
void install_qp_ex_ops(Qp &qp, uint64_t send_ops_flags) noexcept;

/* Ops (qp.cpp). */
ibv_qp *create_qp(ibv_pd *ibpd, ibv_qp_init_attr *attr) noexcept;
ibv_qp *create_qp_ex(ibv_context *ibctx, ibv_qp_init_attr_ex *attr) noexcept;
ibv_qp *open_qp(ibv_context *ibctx, ibv_qp_open_attr *attr) noexcept;
int modify_qp(ibv_qp *ibqp, ibv_qp_attr *attr, int attr_mask) noexcept;
int modify_qp_rate_limit(ibv_qp *ibqp, ibv_qp_rate_limit_attr *attr) noexcept;
int query_qp(ibv_qp *ibqp, ibv_qp_attr *attr, int attr_mask,
	     ibv_qp_init_attr *init_attr) noexcept;
int destroy_qp(ibv_qp *ibqp) noexcept;
int attach_mcast(ibv_qp *ibqp, const ibv_gid *gid, uint16_t lid) noexcept;
int detach_mcast(ibv_qp *ibqp, const ibv_gid *gid, uint16_t lid) noexcept;
int post_send(ibv_qp *ibqp, ibv_send_wr *wr, ibv_send_wr **bad_wr) noexcept;
int post_recv(ibv_qp *ibqp, ibv_recv_wr *wr, ibv_recv_wr **bad_wr) noexcept;

} /* namespace sroce */

#endif /* SROCE_QP_HPP */

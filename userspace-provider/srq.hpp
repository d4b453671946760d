// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Shared receive queues: one receive ring (same slot format as a QP's RQ)
 * that the kernel consumes on behalf of every QP attached to it.
 */
#ifndef SROCE_SRQ_HPP
#define SROCE_SRQ_HPP

#include "abi/provider_abi.h"
#include "ring.hpp"
#include "wq.hpp"

#include <cstring>
#include <type_traits>

namespace sroce {

struct Srq {
	verbs_srq vsrq; /* first; srq_num holds sroce_create_srq_resp's */
	RecvQueue rq;
	Mapping map;

	Srq() noexcept { std::memset(&vsrq, 0, sizeof(vsrq)); }
	Srq(const Srq &) = delete;
	Srq &operator=(const Srq &) = delete;
};

inline Srq *to_srq(ibv_srq *ibsrq) noexcept
{
	static_assert(std::is_standard_layout_v<Srq> && offsetof(Srq, vsrq) == 0);
	return reinterpret_cast<Srq *>(ibsrq);
}

/* Ops (srq.cpp). */
ibv_srq *create_srq(ibv_pd *ibpd, ibv_srq_init_attr *attr) noexcept;
ibv_srq *create_srq_ex(ibv_context *ibctx,
		       ibv_srq_init_attr_ex *attr) noexcept;
int modify_srq(ibv_srq *ibsrq, ibv_srq_attr *attr, int attr_mask) noexcept;
int query_srq(ibv_srq *ibsrq, ibv_srq_attr *attr) noexcept;
int destroy_srq(ibv_srq *ibsrq) noexcept;
int post_srq_recv(ibv_srq *ibsrq, ibv_recv_wr *wr,
		  ibv_recv_wr **bad_wr) noexcept;
int get_srq_num(ibv_srq *ibsrq, uint32_t *srq_num) noexcept;

} /* namespace sroce */

#endif /* SROCE_SRQ_HPP */

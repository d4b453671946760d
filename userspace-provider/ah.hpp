// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The provider's address handle.  Shared between ah.cpp, which creates it,
 * and the UD send path (wq.cpp, qp_ex.cpp), which names it in WQEs by the
 * number the kernel assigned.
 */
#ifndef SROCE_AH_HPP
#define SROCE_AH_HPP

#include <infiniband/verbs.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace sroce {

struct Ah {
	ibv_ah ibv;      /* first: libibverbs hands us &ibv */
	uint32_t ah_num; /* sroce_create_ah_resp::ah_num */
};

inline Ah *to_ah(ibv_ah *ibah) noexcept
{
	static_assert(std::is_standard_layout_v<Ah> && offsetof(Ah, ibv) == 0);
	return reinterpret_cast<Ah *>(ibah);
}

} /* namespace sroce */

#endif /* SROCE_AH_HPP */

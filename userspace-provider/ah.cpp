// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Address handles.
 *
 * The kernel creates the AH (create_user_ah): it validates the attributes
 * (RoCE requires a GRH) and resolves the destination MAC from the GID,
 * which may sleep on neighbour resolution, so there is no point duplicating
 * either check here.  Its driver response, sroce_create_ah_resp, names the
 * AH with a small number that UD send WQEs carry instead of the address
 * (wq.cpp, qp_ex.cpp): the kernel resolves it against this process's AHs
 * when it processes the WQE.
 */
#include "ah.hpp"
#include "provider.hpp"

#include <new>

namespace sroce {
namespace {

using CreateAhResp = abi::DrvResp<ib_uverbs_create_ah_resp, sroce_create_ah_resp>;

} /* namespace */

ibv_ah *create_ah(ibv_pd *ibpd, ibv_ah_attr *attr) noexcept
{
	Owned<Ah> ah(new (std::nothrow) Ah{});
	if (!ah) {
		errno = ENOMEM;
		return nullptr;
	}

	CreateAhResp resp{};
	const int ret = ibv_cmd_create_ah(ibpd, &ah->ibv, attr, resp.core(),
					  sizeof(resp));
	if (ret) {
		errno = ret;
		return nullptr;
	}
	ah->ah_num = resp.drv.ah_num;
	return &ah.release()->ibv;
}

int destroy_ah(ibv_ah *ibah) noexcept
{
	const int ret = ibv_cmd_destroy_ah(ibah);
	if (ret) {
		errno = ret;
		return ret;
	}
	delete to_ah(ibah);
	return 0;
}

} /* namespace sroce */

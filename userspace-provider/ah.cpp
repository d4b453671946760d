// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Address handles.
 *
 * The kernel creates the AH (create_user_ah): it validates the attributes
 * (RoCE requires a GRH) and resolves the destination MAC from the GID,
 * which may sleep on neighbour resolution, so there is no point duplicating
 * either check here.  For now the kernel returns no driver payload; once UD
 * sends are posted from user space, the response will carry what a WQE
 * needs to reference the AH and this object will grow to hold it.
 */
#include "provider.hpp"

#include <new>

namespace sroce {
namespace {

struct Ah {
	ibv_ah ibv;
};

Ah *to_ah(ibv_ah *ibah)
{
	static_assert(std::is_standard_layout_v<Ah> && offsetof(Ah, ibv) == 0);
	return reinterpret_cast<Ah *>(ibah);
}

} /* namespace */

ibv_ah *create_ah(ibv_pd *ibpd, ibv_ah_attr *attr) noexcept
{
	Owned<Ah> ah(new (std::nothrow) Ah{});
	if (!ah) {
		errno = ENOMEM;
		return nullptr;
	}

	ib_uverbs_create_ah_resp resp{};
	const int ret = ibv_cmd_create_ah(ibpd, &ah->ibv, attr, &resp,
					  sizeof(resp));
	if (ret) {
		errno = ret;
		return nullptr;
	}
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

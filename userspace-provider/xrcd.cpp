// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * XRC domains (ibv_open_xrcd, ibv_close_xrcd): thin wrappers over the
 * uverbs commands.  The kernel ties a domain to the file the caller names
 * (so processes that open the same file share it) and keeps the domain's
 * XRC SRQs and receive QPs; the provider object only carries what
 * libibverbs needs.  Ownership as for PDs (pd_mr.cpp).
 */
#include "provider.hpp"

#include <new>

namespace sroce {
namespace {

struct Xrcd {
	verbs_xrcd vxrcd; /* libibverbs keeps the handle in it */
};

Xrcd *to_xrcd(ibv_xrcd *ibxrcd)
{
	static_assert(std::is_standard_layout_v<Xrcd> && offsetof(Xrcd, vxrcd) == 0);
	return reinterpret_cast<Xrcd *>(ibxrcd);
}

} /* namespace */

ibv_xrcd *open_xrcd(ibv_context *ibctx, ibv_xrcd_init_attr *attr) noexcept
{
	Owned<Xrcd> xrcd(new (std::nothrow) Xrcd{});
	if (!xrcd) {
		errno = ENOMEM;
		return nullptr;
	}

	struct ibv_open_xrcd cmd{};
	ib_uverbs_open_xrcd_resp resp{};
	const int ret = ibv_cmd_open_xrcd(ibctx, &xrcd->vxrcd,
					  sizeof(xrcd->vxrcd), attr, &cmd,
					  sizeof(cmd), &resp, sizeof(resp));
	if (ret) {
		errno = ret;
		return nullptr;
	}
	return &xrcd.release()->vxrcd.xrcd;
}

int close_xrcd(ibv_xrcd *ibxrcd) noexcept
{
	Xrcd *xrcd = to_xrcd(ibxrcd);
	const int ret = ibv_cmd_close_xrcd(&xrcd->vxrcd);
	if (ret) {
		errno = ret;
		return ret; /* still in use: both halves stay */
	}
	delete xrcd;
	return 0;
}

} /* namespace sroce */

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Memory windows.  Allocation and deallocation are uverbs commands; the
 * kernel owns the window and its bindings.  Binding is a work request on
 * a QP's send queue either way: IBV_WR_BIND_MW / ibv_wr_bind_mw for type
 * 2 windows (wq.cpp, qp_ex.cpp), and ibv_bind_mw() for type 1 windows,
 * which posts the same WQE with the window's next rkey.
 *
 * Ownership as in pd_mr.cpp: the ibv_mw is handed out only once the
 * kernel object exists and freed only once the kernel destroyed it.
 */
#include "provider.hpp"
#include "qp.hpp"

#include <new>

namespace sroce {

ibv_mw *alloc_mw(ibv_pd *ibpd, ibv_mw_type type) noexcept
{
	/*
	 * Unknown types go to the kernel, which answers EINVAL like every
	 * device; EOPNOTSUPP would claim windows are missing altogether.
	 */
	Owned<ibv_mw> mw(new (std::nothrow) ibv_mw{});
	if (!mw) {
		errno = ENOMEM;
		return nullptr;
	}

	struct ibv_alloc_mw cmd{};
	ib_uverbs_alloc_mw_resp resp{};
	const int ret = ibv_cmd_alloc_mw(ibpd, type, mw.get(), &cmd,
					 sizeof(cmd), &resp, sizeof(resp));
	if (ret) {
		errno = ret;
		return nullptr;
	}
	return mw.release();
}

int dealloc_mw(ibv_mw *mw) noexcept
{
	const int ret = ibv_cmd_dealloc_mw(mw);
	if (ret) {
		errno = ret;
		return ret;
	}
	delete mw;
	return 0;
}

int bind_mw(ibv_qp *ibqp, ibv_mw *mw, ibv_mw_bind *mw_bind) noexcept
{
	/* libibverbs' inline ibv_bind_mw() checked the type and the MR's PD. */
	ibv_send_wr wr{};
	wr.wr_id = mw_bind->wr_id;
	wr.opcode = IBV_WR_BIND_MW;
	wr.send_flags = mw_bind->send_flags;
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = ibv_inc_rkey(mw->rkey);
	wr.bind_mw.bind_info = mw_bind->bind_info;

	ibv_send_wr *bad = nullptr;
	const int ret = post_send(ibqp, &wr, &bad);
	/*
	 * The window answers to the new key from the moment the bind is
	 * queued (as on hardware): also when only the doorbell failed, since
	 * the WQE is in the ring then and runs at the next one.
	 */
	if (!ret || !bad)
		mw->rkey = wr.bind_mw.rkey;
	return ret;
}

} /* namespace sroce */

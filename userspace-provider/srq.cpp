// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Shared receive queues: create/modify/query/destroy through uverbs,
 * posting through the shared ring (wq.cpp), never a system call.
 *
 * Resizing (ibv_modify_srq with IBV_SRQ_MAX_WR) follows the CQ resize
 * protocol: the process holds the SRQ lock for the whole command, so its
 * producer index is stable.  The kernel, under its own SRQ lock, copies
 * the WQEs not yet consumed [old consumer, old producer) in order into a
 * new ring, initialises both of its indices (consumer anywhere, producer
 * just past the copies), describes the new ring in the old ring's control
 * block (sroce_ring_ctrl.resized: MODIFY_SRQ has no response, and a user
 * pointer for the kernel to write through is what uverbs drivers must not
 * take) and only then switches to it; it fails with EINVAL, keeping the
 * old ring, when they do not fit.  The provider reads that description,
 * maps the new ring, resumes producing at the producer index the kernel
 * initialised, and unmaps the old one.
 */
#include "srq.hpp"

#include "provider.hpp"

#include <mutex>
#include <new>

namespace sroce {
namespace {

using CreateSrqResp =
	abi::DrvResp<ib_uverbs_create_srq_resp, sroce_create_srq_resp>;

/* ibv_srq_init_attr_ex comp_mask bits libibverbs 44 defines. */
constexpr uint32_t kKnownSrqInitMask = IBV_SRQ_INIT_ATTR_RESERVED - 1;

int map_srq_ring(Srq &srq, int cmd_fd, const sroce_ring_info &info,
		 const ibv_srq_attr &granted) noexcept
{
	if (info.mmap_length == 0)
		return EPROTO;
	Mapping m;
	int ret = m.map(cmd_fd, info.mmap_offset, info.mmap_length);
	if (ret)
		return ret;
	ret = init_recv_queue(srq.rq, m.get(), m.size(), info.num_slots,
			      info.slot_size, granted.max_wr, granted.max_sge);
	if (ret)
		return ret;
	srq.map = std::move(m); /* unmaps a previous ring, if any */
	return 0;
}

/* Shared tail of both create paths, after the kernel SRQ exists. */
ibv_srq *finish_create(Owned<Srq> srq, ibv_context *ibctx,
		       const CreateSrqResp &resp,
		       const ibv_srq_attr &granted) noexcept
{
	const int ret = map_srq_ring(*srq, ibctx->cmd_fd, resp.drv.rq, granted);
	if (ret) {
		SROCE_ERR(vctx_of(ibctx), "SRQ: cannot map its ring: %d", ret);
		(void)ibv_cmd_destroy_srq(&srq->vsrq.srq);
		errno = ret;
		return nullptr;
	}
	srq->vsrq.srq_num = resp.drv.srq_num;
	return &srq.release()->vsrq.srq;
}

} /* namespace */

ibv_srq *create_srq(ibv_pd *ibpd, ibv_srq_init_attr *attr) noexcept
{
	Owned<Srq> srq(new (std::nothrow) Srq);
	if (!srq) {
		errno = ENOMEM;
		return nullptr;
	}

	struct ibv_create_srq cmd{};
	CreateSrqResp resp{};
	const int ret = ibv_cmd_create_srq(ibpd, &srq->vsrq.srq, attr, &cmd,
					   sizeof(cmd), resp.core(),
					   sizeof(resp));
	if (ret) {
		errno = ret;
		return nullptr;
	}
	/* attr->attr now holds what the kernel granted. */
	return finish_create(std::move(srq), ibpd->context, resp, attr->attr);
}

ibv_srq *create_srq_ex(ibv_context *ibctx, ibv_srq_init_attr_ex *attr) noexcept
{
	if ((attr->comp_mask & ~kKnownSrqInitMask) ||
	    !(attr->comp_mask & IBV_SRQ_INIT_ATTR_PD)) {
		errno = EINVAL;
		return nullptr;
	}
	/*
	 * Basic and XRC SRQs.  libibverbs already routes plain basic
	 * requests to create_srq; we get those that also carry a CQ
	 * (meaningless for a basic SRQ, and ignored), the XRC ones, which
	 * complete to their own CQ and are named by number in XRC requests,
	 * and the tag-matching ones, which need TM offload we do not have.
	 */
	const ibv_srq_type type = (attr->comp_mask & IBV_SRQ_INIT_ATTR_TYPE)
					  ? attr->srq_type
					  : IBV_SRQT_BASIC;
	const uint32_t xrc_needs = IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ;
	if (type == IBV_SRQT_XRC) {
		if ((attr->comp_mask & xrc_needs) != xrc_needs ||
		    !attr->xrcd || !attr->cq) {
			errno = EINVAL;
			return nullptr;
		}
	} else if (type != IBV_SRQT_BASIC ||
		   (attr->comp_mask & (IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_TM))) {
		errno = EOPNOTSUPP;
		return nullptr;
	}

	Owned<Srq> srq(new (std::nothrow) Srq);
	if (!srq) {
		errno = ENOMEM;
		return nullptr;
	}

	struct ibv_create_xsrq cmd{};
	CreateSrqResp resp{};
	const int ret = ibv_cmd_create_srq_ex(ibctx, &srq->vsrq, attr, &cmd,
					      sizeof(cmd), resp.core(),
					      sizeof(resp));
	if (ret) {
		errno = ret;
		return nullptr;
	}
	/*
	 * ibv_create_srq_ex() calls us directly, without the bookkeeping
	 * ibv_create_srq() adds; libibverbs' command set the context only.
	 */
	srq->vsrq.srq.srq_context = attr->srq_context;
	srq->vsrq.srq.pd = attr->pd;
	return finish_create(std::move(srq), ibctx, resp, attr->attr);
}

int modify_srq(ibv_srq *ibsrq, ibv_srq_attr *attr, int attr_mask) noexcept
{
	Srq &srq = *to_srq(ibsrq);
	struct ibv_modify_srq cmd{};

	if (!(attr_mask & IBV_SRQ_MAX_WR)) {
		/* Limit only: the ring stays; posting may go on meanwhile. */
		const int ret = ibv_cmd_modify_srq(ibsrq, attr, attr_mask, &cmd,
						   sizeof(cmd));
		if (ret)
			errno = ret;
		return ret;
	}

	std::lock_guard<SpinLock> guard(srq.rq.lock);
	int ret = ibv_cmd_modify_srq(ibsrq, attr, attr_mask, &cmd, sizeof(cmd));
	if (ret) {
		errno = ret;
		return ret; /* the kernel kept the old ring */
	}
	/* The kernel's own description of the new ring, in the old one. */
	sroce_ring_info info;
	std::memcpy(&info, &srq.rq.ring.ctrl()->resized, sizeof(info));

	/*
	 * The kernel now consumes the new ring only.  If we cannot map it the
	 * SRQ is dead: detach so that posting fails instead of filling a ring
	 * nobody reads any more.  MODIFY_SRQ returns no capabilities, so the
	 * depth enforced is the one asked for (the kernel grants at least
	 * that; ibv_query_srq reports what it granted).
	 */
	const ibv_srq_attr granted{.max_wr = attr->max_wr,
				   .max_sge = srq.rq.max_sge,
				   .srq_limit = 0};
	ret = map_srq_ring(srq, ibsrq->context->cmd_fd, info, granted);
	if (ret) {
		SROCE_ERR(vctx_of(ibsrq->context),
			  "SRQ: cannot map the resized ring: %d", ret);
		srq.rq.ring.detach();
		srq.map.reset();
		errno = ret;
	}
	return ret;
}

int query_srq(ibv_srq *ibsrq, ibv_srq_attr *attr) noexcept
{
	struct ibv_query_srq cmd{};
	const int ret = ibv_cmd_query_srq(ibsrq, attr, &cmd, sizeof(cmd));
	if (ret)
		errno = ret;
	return ret;
}

int destroy_srq(ibv_srq *ibsrq) noexcept
{
	const int ret = ibv_cmd_destroy_srq(ibsrq);
	if (ret) {
		errno = ret;
		return ret;
	}
	delete to_srq(ibsrq); /* unmaps the ring */
	return 0;
}

int post_srq_recv(ibv_srq *ibsrq, ibv_recv_wr *wr, ibv_recv_wr **bad_wr) noexcept
{
	return rq_post_recv(to_srq(ibsrq)->rq, wr, bad_wr);
}

int get_srq_num(ibv_srq *ibsrq, uint32_t *srq_num) noexcept
{
	*srq_num = to_srq(ibsrq)->vsrq.srq_num;
	return 0;
}

} /* namespace sroce */

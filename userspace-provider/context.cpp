// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Context lifetime and device/port queries.
 *
 * alloc_context() runs inside ibv_open_device(): libibverbs has opened
 * /dev/infiniband/uverbsN and hands us the fd.  We let libibverbs allocate
 * and initialise the context, then GET_CONTEXT creates the kernel ucontext,
 * whose driver payload tells us which sroce ABI the kernel speaks.
 *
 * Ops left NULL in kContextOps keep libibverbs' dummies (EOPNOTSUPP):
 * flows, counters, device memory, parent/thread domains, work queues and
 * RSS, none of which sroce offers.
 */
#include "cq.hpp"
#include "provider.hpp"
#include "qp.hpp"
#include "srq.hpp"

#include <cstdio>
#include <sys/mman.h>

namespace sroce {
namespace {

/* Undo everything _verbs_init_and_alloc_context() did, then free. */
struct ContextRelease {
	void operator()(Context *ctx) const noexcept
	{
		if (ctx->sq_marks)
			::munmap(ctx->sq_marks, ctx->sq_marks_length);
		verbs_uninit_context(&ctx->vctx);
		std::free(ctx);
	}
};
using ContextPtr = std::unique_ptr<Context, ContextRelease>;

int query_device_ex(ibv_context *ibctx, const ibv_query_device_ex_input *input,
		    ibv_device_attr_ex *attr, size_t attr_size) noexcept
{
	ib_uverbs_ex_query_device_resp resp{};
	size_t resp_size = sizeof(resp);

	const int ret = ibv_cmd_query_device_any(ibctx, input, attr, attr_size,
						 &resp, &resp_size);
	if (ret) {
		errno = ret;
		return ret;
	}

	/*
	 * libibverbs does not translate fw_ver; like other soft providers we
	 * read the kernel's u64 as major.minor.sub_minor in 16-bit fields.
	 */
	const uint64_t fw = resp.base.fw_ver;
	std::snprintf(attr->orig_attr.fw_ver, sizeof(attr->orig_attr.fw_ver),
		      "%u.%u.%u", static_cast<unsigned>((fw >> 32) & 0xffff),
		      static_cast<unsigned>((fw >> 16) & 0xffff),
		      static_cast<unsigned>(fw & 0xffff));

	/* Not in the generic response: the range the kernel enforces. */
	static_assert(SROCE_QP_RATE_LIMIT_QPTS ==
		      ((1u << IBV_QPT_RC) | (1u << IBV_QPT_UC) | (1u << IBV_QPT_UD)));
	constexpr size_t pacing_end = offsetof(ibv_device_attr_ex, packet_pacing_caps) +
				      sizeof(ibv_packet_pacing_caps);
	if (attr_size >= pacing_end)
		attr->packet_pacing_caps = {
			.qp_rate_limit_min = SROCE_QP_RATE_LIMIT_MIN_KBPS,
			.qp_rate_limit_max = SROCE_QP_RATE_LIMIT_MAX_KBPS,
			.supported_qpts = SROCE_QP_RATE_LIMIT_QPTS,
		};
	return 0;
}

int query_port(ibv_context *ibctx, uint8_t port_num,
	       ibv_port_attr *port_attr) noexcept
{
	/* Not NULL: the write() fallback stores port_num into it. */
	struct ibv_query_port cmd{};

	const int ret = ibv_cmd_query_port(ibctx, port_num, port_attr, &cmd,
					   sizeof(cmd));
	if (ret)
		errno = ret;
	return ret;
}

void free_context(ibv_context *ibctx) noexcept
{
	ContextRelease{}(to_context(ibctx));
}

/* Built by assignment so unnamed ops are plainly zero (NULL). */
constexpr verbs_context_ops make_context_ops()
{
	verbs_context_ops ops{};
	ops.alloc_mw = alloc_mw;
	ops.alloc_pd = alloc_pd;
	ops.attach_mcast = attach_mcast;
	ops.bind_mw = bind_mw;
	ops.create_ah = create_ah;
	ops.create_cq = create_cq;
	ops.create_cq_ex = create_cq_ex;
	ops.create_qp = create_qp;
	ops.create_qp_ex = create_qp_ex;
	ops.create_srq = create_srq;
	ops.create_srq_ex = create_srq_ex;
	ops.dealloc_mw = dealloc_mw;
	ops.dealloc_pd = dealloc_pd;
	ops.advise_mr = advise_mr;
	ops.dereg_mr = dereg_mr;
	ops.destroy_ah = destroy_ah;
	ops.destroy_cq = destroy_cq;
	ops.destroy_qp = destroy_qp;
	ops.destroy_srq = destroy_srq;
	ops.detach_mcast = detach_mcast;
	ops.free_context = free_context;
	ops.close_xrcd = close_xrcd;
	ops.open_qp = open_qp;
	ops.open_xrcd = open_xrcd;
	ops.get_srq_num = get_srq_num;
	ops.modify_qp = modify_qp;
	ops.modify_qp_rate_limit = modify_qp_rate_limit;
	ops.modify_srq = modify_srq;
	/* The data path: ring accesses only, apart from a requested doorbell. */
	ops.poll_cq = poll_cq;
	ops.post_recv = post_recv;
	ops.post_send = post_send;
	ops.post_srq_recv = post_srq_recv;
	ops.query_device_ex = query_device_ex;
	ops.query_port = query_port;
	ops.query_qp = query_qp;
	ops.query_srq = query_srq;
	ops.reg_mr = reg_mr;
	ops.req_notify_cq = req_notify_cq;
	ops.rereg_mr = rereg_mr;
	ops.resize_cq = resize_cq;
	return ops;
}
constinit const verbs_context_ops kContextOps = make_context_ops();

using GetContextResp =
	abi::DrvResp<ib_uverbs_get_context_resp, sroce_alloc_ucontext_resp>;

/* _verbs_init_and_alloc_context() takes the offset disguised as a pointer. */
verbs_context *vctx_offset() noexcept
{
	return reinterpret_cast<verbs_context *>(offsetof(Context, vctx));
}

/*
 * Maps the context's SQ mark page.  Without it (none given, or the mmap
 * failed) every QP rings when the kernel asks for a mark: slower with
 * many QPs, never wrong.
 */
void map_sq_marks(Context &ctx, int cmd_fd,
		  const sroce_alloc_ucontext_resp &drv) noexcept
{
	if (drv.sq_marks_length < sizeof(sroce_sq_mark_page))
		return;
	void *p = ::mmap(nullptr, drv.sq_marks_length, PROT_READ | PROT_WRITE,
			 MAP_SHARED, cmd_fd, static_cast<off_t>(drv.sq_marks_offset));
	if (p == MAP_FAILED)
		return;
	ctx.sq_marks = static_cast<sroce_sq_mark_page *>(p);
	ctx.sq_marks_length = drv.sq_marks_length;
}

} /* namespace */

verbs_context *alloc_context(ibv_device *ibdev, int cmd_fd,
			     void * /*private_data: only for mlx5 */) noexcept
{
	/*
	 * Takes ownership of cmd_fd: on failure it has closed the fd and set
	 * errno.  RDMA_DRIVER_UNKNOWN matches the kernel's ops.driver_id.
	 */
	ContextPtr ctx(static_cast<Context *>(_verbs_init_and_alloc_context(
		ibdev, cmd_fd, sizeof(Context), vctx_offset(),
		RDMA_DRIVER_UNKNOWN)));
	if (!ctx)
		return nullptr;

	struct ibv_get_context cmd{};
	GetContextResp resp{};

	const int ret = abi::cmd_get_context(&ctx->vctx, &cmd, sizeof(cmd),
					     resp.core(), sizeof(resp));
	if (ret) {
		SROCE_ERR(&ctx->vctx, "GET_CONTEXT failed: %d", ret);
		ctx.reset(); /* closes cmd_fd, as a failed alloc_context must */
		errno = ret;
		return nullptr;
	}

	/*
	 * The payload stays zero if the kernel wrote none, so an old or
	 * foreign kernel is caught here too.  Destroying the ucontext again
	 * is just closing the fd, which ctx.reset() does.
	 */
	if (resp.drv.abi_version != SROCE_UVERBS_ABI_VERSION) {
		SROCE_ERR(&ctx->vctx,
			  "kernel sroce ABI %u, provider speaks %u",
			  resp.drv.abi_version, SROCE_UVERBS_ABI_VERSION);
		ctx.reset();
		errno = EPROTO;
		return nullptr;
	}
	ctx->kernel_abi = resp.drv.abi_version;
	map_sq_marks(*ctx, cmd_fd, resp.drv);

	verbs_set_ops(&ctx->vctx, &kContextOps);
	return &ctx.release()->vctx;
}

} /* namespace sroce */

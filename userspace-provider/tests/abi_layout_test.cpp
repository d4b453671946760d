// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The ABI headers pin every layout with static_assert, so merely compiling
 * this file checks them against the headers of the rdma-core release being
 * built against.  Here: the provider-specific command buffers built on top,
 * the helpers that replace driver.h's macros, and a run-time check that the
 * libibverbs actually loaded agrees with those declarations.
 */
#include "provider.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string_view>

namespace {

using GetContextResp =
	sroce::abi::DrvResp<ib_uverbs_get_context_resp, sroce_alloc_ucontext_resp>;

/* The GET_CONTEXT payload starts right after the 8-byte core response. */
static_assert(sizeof(GetContextResp) == 32);
static_assert(offsetof(GetContextResp, drv) ==
	      sizeof(ib_uverbs_get_context_resp));

/* A command payload lands at sizeof(hdr + core), with no padding. */
struct ExamplePayload {
	__aligned_u64 user_addr;
	__u32 flags;
	__u32 reserved;
};
using ExampleCreateCq =
	sroce::abi::DrvCmd<struct ibv_create_cq, ExamplePayload>;
static_assert(offsetof(ExampleCreateCq, drv) == 40);
static_assert(sizeof(ExampleCreateCq) == 56);

/*
 * Every driver payload the data path exchanges starts exactly where the
 * kernel looks for it: right after libibverbs' core struct.
 */
template <typename KResp, typename Drv, std::size_t Align = 4>
consteval std::size_t payload_offset()
{
	using R = sroce::abi::DrvResp<KResp, Drv, Align>;
	return offsetof(R, drv);
}
template <typename KResp, typename Drv, std::size_t Align = 4>
constexpr std::size_t payload_at = payload_offset<KResp, Drv, Align>();
static_assert(payload_at<ib_uverbs_create_cq_resp, sroce_create_cq_resp> == 8);
static_assert(payload_at<ib_uverbs_ex_create_cq_resp, sroce_create_cq_resp, 8> == 16);
static_assert(payload_at<ib_uverbs_resize_cq_resp, sroce_resize_cq_resp> == 8);
static_assert(payload_at<ib_uverbs_create_qp_resp, sroce_create_qp_resp> == 32);
static_assert(payload_at<ib_uverbs_ex_create_qp_resp, sroce_create_qp_resp, 8> == 40);
static_assert(payload_at<ib_uverbs_create_srq_resp, sroce_create_srq_resp> == 16);
static_assert(payload_at<ib_uverbs_create_ah_resp, sroce_create_ah_resp> == 4);
static_assert(sizeof(sroce::abi::DrvResp<ib_uverbs_create_qp_resp,
					 sroce_create_qp_resp>) == 32 + 56);
/* Extended header (24) + ib_uverbs_ex_modify_qp (120), then ours. */
using ModifyQpExCmd =
	sroce::abi::DrvCmd<struct ibv_modify_qp_ex, sroce_modify_qp_cmd>;
static_assert(offsetof(ModifyQpExCmd, drv) == 144 && sizeof(ModifyQpExCmd) == 152);
/* The payloads the ABI header does not pin itself. */
static_assert(sizeof(sroce_create_cq_resp) == 24);
static_assert(sizeof(sroce_resize_cq_resp) == 24);
static_assert(sizeof(sroce_create_srq_resp) == 32);
static_assert(sizeof(sroce_create_ah_resp) == 8);

/*
 * Offsets libibverbs' own code hard-codes (seen in its disassembly:
 * ibv_get_device_index() loads 0x2b8; verbs_set_ops() reads the op table up
 * to its last entry).
 */
static_assert(offsetof(verbs_device, sysfs) == 0x2b8);
#if SROCE_IBVERBS_PABI == 34
static_assert(offsetof(verbs_context_ops, unimport_pd) == 600);
#else
static_assert(offsetof(verbs_context_ops, unimport_pd) == 736);
#endif

constexpr auto kPattern = sroce::abi::make_name_pattern("sroce");
static_assert(std::string_view(kPattern.str) == "rdma_device:*Nsroce*");

constexpr verbs_match_ent kById = sroce::abi::match_driver_id(42);
static_assert(kById.kind == VERBS_MATCH_DRIVER_ID && kById.u.driver_id == 42);
static_assert(sroce::abi::match_sentinel().kind == VERBS_MATCH_SENTINEL);

/*
 * The static_asserts compare our declarations with the headers we compiled
 * against; this compares them with the libibverbs we run against.  It sets
 * up a context the way alloc_context() does and installs an op table whose
 * every entry is a distinct fake address (never called), then checks that
 * libibverbs, using its own compiled-in layouts, wrote each field and
 * copied each op exactly where our declarations say.  A provider built
 * against one release's declarations and run on another fails here.
 */
TEST(AbiLayout, LibibverbsAgreesAtRunTime)
{
	sroce::Device dev{};
	dev.vdev.ops = &sroce::device_ops;
	dev.vdev.refcount = 1; /* ours: the context's reference is the 2nd */

	/* ibv_get_device_index() reads verbs_device::sysfs->ibdev_idx. */
	verbs_sysfs_dev sysfs{};
	sysfs.ibdev_idx = 4242;
	dev.vdev.sysfs = &sysfs;
	EXPECT_EQ(ibv_get_device_index(&dev.vdev.device), 4242);

	/* Any fd will do: without ioctl support libibverbs uses write(). */
	const int fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	ASSERT_GE(fd, 0);
	auto *ctx = static_cast<sroce::Context *>(_verbs_init_and_alloc_context(
		&dev.vdev.device, fd, sizeof(sroce::Context),
		reinterpret_cast<verbs_context *>(offsetof(sroce::Context, vctx)),
		RDMA_DRIVER_UNKNOWN));
	ASSERT_NE(ctx, nullptr);
	verbs_context &vctx = ctx->vctx;

	EXPECT_EQ(vctx.sz, sizeof(verbs_context))
		<< "libibverbs' sizeof(verbs_context) differs from ours";
	EXPECT_EQ(vctx.context.cmd_fd, fd)
		<< "libibverbs' offsetof(verbs_context, context) differs";
	EXPECT_EQ(vctx.context.async_fd, -1);
	EXPECT_EQ(vctx.context.device, &dev.vdev.device);
	EXPECT_EQ(vctx.context.abi_compat, __VERBS_ABI_IS_EXTENDED);
	EXPECT_NE(vctx.priv, nullptr);
	EXPECT_EQ(dev.vdev.refcount.load(), 2)
		<< "verbs_device::refcount is not where libibverbs keeps it";

	constexpr uintptr_t kFakeBase = 0x5e0ce0000000;
	constexpr std::size_t kOps = sizeof(verbs_context_ops) / sizeof(void *);
	std::array<uintptr_t, kOps> slots{};
	for (std::size_t i = 0; i < kOps; ++i)
		slots[i] = kFakeBase + i * sizeof(void *);
	verbs_context_ops ops;
	static_assert(sizeof(ops) == sizeof(slots));
	std::memcpy(&ops, slots.data(), sizeof(ops));
	verbs_set_ops(&vctx, &ops);

	const auto addr = [](auto fn) { return reinterpret_cast<uintptr_t>(fn); };
#define SROCE_EXPECT_OP(landing, op)                                           \
	EXPECT_EQ(addr(landing), kFakeBase + offsetof(verbs_context_ops, op))  \
		<< "verbs_context_ops::" #op " (copied to " #landing ")"
	/* Ops verbs_set_ops() also publishes in verbs_context. */
	SROCE_EXPECT_OP(vctx.advise_mr, advise_mr);
	SROCE_EXPECT_OP(vctx.alloc_dm, alloc_dm);
	SROCE_EXPECT_OP(vctx.alloc_null_mr, alloc_null_mr);
	SROCE_EXPECT_OP(vctx.alloc_parent_domain, alloc_parent_domain);
	SROCE_EXPECT_OP(vctx.alloc_td, alloc_td);
	SROCE_EXPECT_OP(vctx.attach_counters_point_flow, attach_counters_point_flow);
	SROCE_EXPECT_OP(vctx.close_xrcd, close_xrcd);
	SROCE_EXPECT_OP(vctx.create_counters, create_counters);
	SROCE_EXPECT_OP(vctx.ibv_create_flow, create_flow);
	SROCE_EXPECT_OP(vctx.create_flow_action_esp, create_flow_action_esp);
	SROCE_EXPECT_OP(vctx.create_qp_ex, create_qp_ex);
	SROCE_EXPECT_OP(vctx.create_rwq_ind_table, create_rwq_ind_table);
	SROCE_EXPECT_OP(vctx.create_srq_ex, create_srq_ex);
	SROCE_EXPECT_OP(vctx.create_wq, create_wq);
	SROCE_EXPECT_OP(vctx.dealloc_td, dealloc_td);
	SROCE_EXPECT_OP(vctx.destroy_counters, destroy_counters);
	SROCE_EXPECT_OP(vctx.ibv_destroy_flow, destroy_flow);
	SROCE_EXPECT_OP(vctx.destroy_flow_action, destroy_flow_action);
	SROCE_EXPECT_OP(vctx.destroy_rwq_ind_table, destroy_rwq_ind_table);
	SROCE_EXPECT_OP(vctx.destroy_wq, destroy_wq);
	SROCE_EXPECT_OP(vctx.free_dm, free_dm);
	SROCE_EXPECT_OP(vctx.get_srq_num, get_srq_num);
	SROCE_EXPECT_OP(vctx.modify_cq, modify_cq);
	SROCE_EXPECT_OP(vctx.modify_flow_action_esp, modify_flow_action_esp);
	SROCE_EXPECT_OP(vctx.modify_qp_rate_limit, modify_qp_rate_limit);
	SROCE_EXPECT_OP(vctx.modify_wq, modify_wq);
	SROCE_EXPECT_OP(vctx.open_qp, open_qp);
	SROCE_EXPECT_OP(vctx.open_xrcd, open_xrcd);
	SROCE_EXPECT_OP(vctx.post_srq_ops, post_srq_ops);
	SROCE_EXPECT_OP(vctx.query_device_ex, query_device_ex);
	SROCE_EXPECT_OP(vctx.query_rt_values, query_rt_values);
	SROCE_EXPECT_OP(vctx.read_counters, read_counters);
	SROCE_EXPECT_OP(vctx.reg_dm_mr, reg_dm_mr);
#if SROCE_IBVERBS_PABI >= 65
	SROCE_EXPECT_OP(vctx.alloc_buf, alloc_buf);
	SROCE_EXPECT_OP(vctx.alloc_dmah, alloc_dmah);
	SROCE_EXPECT_OP(vctx.dealloc_dmah, dealloc_dmah);
	SROCE_EXPECT_OP(vctx.dm_export_dmabuf_fd, dm_export_dmabuf_fd);
	SROCE_EXPECT_OP(vctx.free_buf, free_buf);
	SROCE_EXPECT_OP(vctx.reg_mr_ex, reg_mr_ex);
#endif
	/* ... and in ibv_context::ops, which the inline data-path verbs call. */
	ibv_context_ops &cops = vctx.context.ops;
	SROCE_EXPECT_OP(cops.alloc_mw, alloc_mw);
	SROCE_EXPECT_OP(cops.bind_mw, bind_mw);
	SROCE_EXPECT_OP(cops.dealloc_mw, dealloc_mw);
	SROCE_EXPECT_OP(cops.poll_cq, poll_cq);
	SROCE_EXPECT_OP(cops.post_recv, post_recv);
	SROCE_EXPECT_OP(cops.post_send, post_send);
	SROCE_EXPECT_OP(cops.post_srq_recv, post_srq_recv);
	SROCE_EXPECT_OP(cops.req_notify_cq, req_notify_cq);
	SROCE_EXPECT_OP(cops._compat_alloc_pd, alloc_pd);
	SROCE_EXPECT_OP(cops._compat_async_event, async_event);
	SROCE_EXPECT_OP(cops._compat_attach_mcast, attach_mcast);
	SROCE_EXPECT_OP(cops._compat_cq_event, cq_event);
	SROCE_EXPECT_OP(cops._compat_create_ah, create_ah);
	SROCE_EXPECT_OP(cops._compat_create_cq, create_cq);
	SROCE_EXPECT_OP(cops._compat_create_qp, create_qp);
	SROCE_EXPECT_OP(cops._compat_create_srq, create_srq);
	SROCE_EXPECT_OP(cops._compat_dealloc_pd, dealloc_pd);
	SROCE_EXPECT_OP(cops._compat_dereg_mr, dereg_mr);
	SROCE_EXPECT_OP(cops._compat_destroy_ah, destroy_ah);
	SROCE_EXPECT_OP(cops._compat_destroy_cq, destroy_cq);
	SROCE_EXPECT_OP(cops._compat_destroy_qp, destroy_qp);
	SROCE_EXPECT_OP(cops._compat_destroy_srq, destroy_srq);
	SROCE_EXPECT_OP(cops._compat_detach_mcast, detach_mcast);
	SROCE_EXPECT_OP(cops._compat_modify_qp, modify_qp);
	SROCE_EXPECT_OP(cops._compat_modify_srq, modify_srq);
	SROCE_EXPECT_OP(cops._compat_query_qp, query_qp);
	SROCE_EXPECT_OP(cops._compat_query_srq, query_srq);
	SROCE_EXPECT_OP(cops._compat_reg_mr, reg_mr);
	SROCE_EXPECT_OP(cops._compat_rereg_mr, rereg_mr);
	SROCE_EXPECT_OP(cops._compat_resize_cq, resize_cq);
#undef SROCE_EXPECT_OP

	/* Closes fd and drops the context's device reference; no op runs. */
	verbs_uninit_context(&vctx);
	EXPECT_EQ(dev.vdev.refcount.load(), 1);
	std::free(ctx);
}

TEST(AbiLayout, ContextConversionsRoundTrip)
{
	sroce::Context ctx{};
	EXPECT_EQ(sroce::to_context(&ctx.vctx.context), &ctx);
	EXPECT_EQ(verbs_get_ctx(&ctx.vctx.context), nullptr)
		<< "abi_compat is not set, so verbs.h refuses the conversion";
	ctx.vctx.context.abi_compat = __VERBS_ABI_IS_EXTENDED;
	EXPECT_EQ(verbs_get_ctx(&ctx.vctx.context), &ctx.vctx);
}

TEST(AbiLayout, DeviceConversionsRoundTrip)
{
	sroce::Device dev{};
	EXPECT_EQ(sroce::abi::get_device(&dev.vdev.device), &dev.vdev);
	EXPECT_EQ(sroce::to_device(&dev.vdev), &dev);
}

} /* namespace */

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The ABI headers pin every layout with static_assert, so merely compiling
 * this file checks them.  Here: the provider-specific command buffers built
 * on top, and the helpers that replace driver.h's macros.
 */
#include "provider.hpp"

#include <gtest/gtest.h>

#include <cstddef>
#include <string_view>

namespace {

using GetContextResp =
	sroce::abi::DrvResp<ib_uverbs_get_context_resp, sroce_alloc_ucontext_resp>;

/* The GET_CONTEXT payload starts right after the 8-byte core response. */
static_assert(sizeof(GetContextResp) == 16);
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
using ModifySrqCmd =
	sroce::abi::DrvCmd<struct ibv_modify_srq, sroce_modify_srq_cmd>;
static_assert(offsetof(ModifySrqCmd, drv) == 24 && sizeof(ModifySrqCmd) == 32);
/* Extended header (24) + ib_uverbs_ex_modify_qp (120), then ours. */
using ModifyQpExCmd =
	sroce::abi::DrvCmd<struct ibv_modify_qp_ex, sroce_modify_qp_cmd>;
static_assert(offsetof(ModifyQpExCmd, drv) == 144 && sizeof(ModifyQpExCmd) == 152);
/* The payloads the ABI header does not pin itself. */
static_assert(sizeof(sroce_create_cq_resp) == 24);
static_assert(sizeof(sroce_resize_cq_resp) == 24);
static_assert(sizeof(sroce_create_srq_resp) == 32);
static_assert(sizeof(sroce_modify_srq_cmd) == 8);
static_assert(sizeof(sroce_create_ah_resp) == 8);

/* Offsets libibverbs itself hard-codes (see provider-abi.md). */
static_assert(offsetof(verbs_device, sysfs) == 0x2b8);
static_assert(offsetof(verbs_context_ops, unimport_pd) == 600);

constexpr auto kPattern = sroce::abi::make_name_pattern("sroce");
static_assert(std::string_view(kPattern.str) == "rdma_device:*Nsroce*");

constexpr verbs_match_ent kById = sroce::abi::match_driver_id(42);
static_assert(kById.kind == VERBS_MATCH_DRIVER_ID && kById.u.driver_id == 42);
static_assert(sroce::abi::match_sentinel().kind == VERBS_MATCH_SENTINEL);

TEST(AbiLayout, PinnedAtCompileTime)
{
	/* Nothing to do at run time: the static_asserts above and in the
	 * headers fail the build if any layout drifts. */
	SUCCEED();
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

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The rdma-core private provider ABI for the release being built against.
 *
 * sroce supports rdma-core 39.0 (Ubuntu 22.04), 44.0 (Debian 12), 50.0
 * (Ubuntu 24.04) and 56.1 (Debian 13), all IBVERBS_PRIVATE_34, and 65.0
 * (Debian sid), IBVERBS_PRIVATE_65, from one source tree with one build per
 * release.  CMakeLists.txt maps the installed libibverbs to
 *   SROCE_RDMA_CORE_VERSION  3900, 4400, 5000, 5601 or 6500 (major * 100 + minor)
 *   SROCE_IBVERBS_PABI       34 or 65
 * and this header includes the matching declarations:
 *   provider_abi34.h  rdma-core 39.0, 44.0, 50.0 and 56.1
 *   provider_abi65.h  rdma-core 65.0
 * Include this header, never those two directly.
 *
 * Also here: the C++ helpers that replace driver.h's macros (the same for
 * every release) and shims over the entry points whose signatures differ
 * between the releases, so the rest of the provider is version-free.
 */
#ifndef SROCE_PROVIDER_ABI_H
#define SROCE_PROVIDER_ABI_H

#if !defined(SROCE_IBVERBS_PABI) || !defined(SROCE_RDMA_CORE_VERSION)
#error "SROCE_IBVERBS_PABI and SROCE_RDMA_CORE_VERSION must be defined: build through userspace-provider/CMakeLists.txt (link sroce_provider_abi)"
#endif

#if SROCE_IBVERBS_PABI == 34
#include "provider_abi34.h"
#elif SROCE_IBVERBS_PABI == 65
#include "provider_abi65.h"
#else
#error "unsupported SROCE_IBVERBS_PABI: sroce declares the private ABI of rdma-core 39.0, 44.0, 50.0 and 56.1 (34) and 65.0 (65) only"
#endif

#if SROCE_IBVERBS_PABI_VERSION != SROCE_IBVERBS_PABI
#error "the selected ABI header does not describe SROCE_IBVERBS_PABI"
#endif

#include <cstddef>
#include <cstdint>
#include <string_view>

/*
 * RDMA FLUSH in the public verbs (ibv_wr_flush, IBV_WR_FLUSH,
 * IBV_QP_EX_WITH_FLUSH, IBV_WC_FLUSH): rdma-core 45 on.  Against 44.0 the
 * provider offers no FLUSH, there being no ibv_qp_ex member to fill.
 */
#define SROCE_VERBS_HAVE_FLUSH (SROCE_RDMA_CORE_VERSION >= 4500)
/* ATOMIC WRITE (IBV_WR_ATOMIC_WRITE, wr_atomic_write): rdma-core 44 on;
 * against 39.0 the provider offers none, as for FLUSH before 45. */
#define SROCE_VERBS_HAVE_ATOMIC_WRITE (SROCE_RDMA_CORE_VERSION >= 4400)

namespace sroce::abi {

/* ------------------------------------------------------------------------
 * Shims over the entry points whose signatures depend on the release.
 * ---------------------------------------------------------------------- */

/* verbs_register_driver_<PABI>@IBVERBS_PRIVATE_<PABI>. */
inline void register_driver(const verbs_device_ops *ops)
{
#if SROCE_IBVERBS_PABI == 34
	verbs_register_driver_34(ops);
#else
	verbs_register_driver_65(ops);
#endif
}

/* ibv_cmd_get_context(); 65 adds fd_arr, which we never pass. */
inline int cmd_get_context(verbs_context *context,
			   struct ibv_get_context *cmd, size_t cmd_size,
			   ib_uverbs_get_context_resp *resp, size_t resp_size)
{
#if SROCE_IBVERBS_PABI == 34
	return ibv_cmd_get_context(context, cmd, cmd_size, resp, resp_size);
#else
	return ibv_cmd_get_context(context, cmd, cmd_size, nullptr /* fd_arr */,
				   resp, resp_size);
#endif
}

/*
 * ibv_cmd_create_cq_ex(); 65 adds prov_attr before cq.  NULL: the kernel
 * allocates the CQ ring, as sroce always lets it.
 */
inline int cmd_create_cq_ex(ibv_context *context,
			    const ibv_cq_init_attr_ex *cq_attr, verbs_cq *cq,
			    struct ibv_create_cq_ex *cmd, size_t cmd_size,
			    ib_uverbs_ex_create_cq_resp *resp,
			    size_t resp_size, uint32_t cmd_flags)
{
#if SROCE_IBVERBS_PABI == 34
	return ibv_cmd_create_cq_ex(context, cq_attr, cq, cmd, cmd_size, resp,
				    resp_size, cmd_flags);
#else
	return ibv_cmd_create_cq_ex(context, cq_attr, nullptr /* prov_attr */,
				    cq, cmd, cmd_size, resp, resp_size,
				    cmd_flags);
#endif
}

/*
 * ibv_cmd_create_qp_ex2(); 65 appends a driver command buffer for extra
 * ioctl attributes.  NULL: our payload travels as the command's UHW.
 */
inline int cmd_create_qp_ex2(ibv_context *context, verbs_qp *qp,
			     ibv_qp_init_attr_ex *qp_attr,
			     struct ibv_create_qp_ex *cmd, size_t cmd_size,
			     ib_uverbs_ex_create_qp_resp *resp,
			     size_t resp_size)
{
#if SROCE_IBVERBS_PABI == 34
	return ibv_cmd_create_qp_ex2(context, qp, qp_attr, cmd, cmd_size, resp,
				     resp_size);
#else
	return ibv_cmd_create_qp_ex2(context, qp, qp_attr, cmd, cmd_size, resp,
				     resp_size, nullptr /* driver */);
#endif
}

/* ------------------------------------------------------------------------
 * C++ helpers that replace driver.h's macros.
 * ---------------------------------------------------------------------- */

/*
 * VERBS_NAME_MATCH(prefix): libibverbs fnmatch()es the pattern against
 * "rdma_device:N" + ibdev_name, so the pattern is "rdma_device:*N<prefix>*".
 * Built at compile time; bind the result to a constexpr variable so the
 * table can point at storage that lives as long as the library.
 */
template <std::size_t N> struct NamePattern {
	static constexpr char head[] = "rdma_device:*N";
	/* head + prefix + "*" + NUL */
	char str[sizeof(head) - 1 + (N - 1) + 2]{};
};

template <std::size_t N>
consteval NamePattern<N> make_name_pattern(const char (&prefix)[N])
{
	NamePattern<N> p{};
	std::size_t i = 0;
	for (std::size_t k = 0; k + 1 < sizeof(NamePattern<N>::head); ++k)
		p.str[i++] = NamePattern<N>::head[k];
	for (std::size_t k = 0; k + 1 < N; ++k)
		p.str[i++] = prefix[k];
	p.str[i++] = '*';
	p.str[i] = '\0';
	return p;
}

constexpr verbs_match_ent match_modalias(const char *pattern,
					 void *driver_data = nullptr)
{
	return verbs_match_ent{.driver_data = driver_data,
			       .u = {.modalias = pattern},
			       .vendor = 0,
			       .device = 0,
			       .kind = VERBS_MATCH_MODALIAS};
}

/* Name matches are modalias matches on a synthetic "rdma_device:N" string. */
template <std::size_t N>
constexpr verbs_match_ent match_name(const NamePattern<N> &pattern,
				     void *driver_data = nullptr)
{
	return match_modalias(pattern.str, driver_data);
}

constexpr verbs_match_ent match_driver_id(uint64_t driver_id)
{
	verbs_match_ent e{};
	e.u.driver_id = driver_id;
	e.kind = VERBS_MATCH_DRIVER_ID;
	return e;
}

constexpr verbs_match_ent match_sentinel() { return verbs_match_ent{}; }

/* driver.h's verbs_get_device(): the ibv_device is the first member. */
inline verbs_device *get_device(ibv_device *dev)
{
	return reinterpret_cast<verbs_device *>(dev);
}

/* driver.h's verbs_get_mr(): ibv_mr is the first member of verbs_mr. */
inline verbs_mr *get_mr(ibv_mr *mr) { return reinterpret_cast<verbs_mr *>(mr); }

} /* namespace sroce::abi */

namespace sroce::abi::layout_checks {

/* The name-pattern builder reproduces VERBS_NAME_MATCH's string. */
constexpr auto kSelfTestPattern = make_name_pattern("rxe");
static_assert(std::string_view(kSelfTestPattern.str) == "rdma_device:*Nrxe*");
static_assert(sizeof(kSelfTestPattern.str) == sizeof("rdma_device:*Nrxe*"));

} /* namespace sroce::abi::layout_checks */

#endif /* SROCE_PROVIDER_ABI_H */

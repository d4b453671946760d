// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Command buffers for libibverbs' ibv_cmd_* helpers, declared by us because
 * Debian's libibverbs-dev does not install kern-abi.h.  Everything here is
 * the same in every rdma-core release sroce supports (44.0 and 56.1,
 * IBVERBS_PRIVATE_34; 65.0, IBVERBS_PRIVATE_65); the three helpers whose
 * signatures differ are declared per release in provider_abi34.h and
 * provider_abi65.h and called through the shims in provider_abi.h.
 *
 * The wire shape libibverbs expects from a provider:
 *   cmd  = [legacy hdr (8 B) or ex hdr (24 B)][kernel core][driver payload]
 *   resp = [kernel core response][driver payload]
 * with cmd_size/resp_size covering all of it.  libibverbs fills the headers
 * and the core itself and locates the driver payload at exactly
 * sizeof(core), using its own definitions of the core structs.  On the
 * write() fallback it rewrites the header and core in place in front of the
 * payload, so the command buffer must really contain that headroom.
 *
 * The kernel's uapi structs (<rdma/ib_user_verbs.h>, from linux-libc-dev;
 * the layouts are kernel ABI, identical in the copy each rdma-core release
 * bundles, and pinned below) end in a
 * flexible `driver_data[]` array, which C++ does not allow in the middle of
 * a struct.  So the core is carried as KernelCore<K>: storage with exactly
 * K's size and alignment.  The provider never writes core fields (libibverbs
 * does); KernelCore::get() gives typed access for reading responses.
 *
 * Only the helpers a RoCE provider can use are declared.  Deliberately
 * absent: the ioctl-builder based ones (counters, DM, flow actions,
 * query_context), WQ/RWQ/flow steering, dmabuf/DM MRs, and
 * ibv_cmd_query_device, which is in the version map but does not exist.
 */
#ifndef SROCE_CMD_ABI_H
#define SROCE_CMD_ABI_H

#include "provider_abi.h"

#include <rdma/ib_user_verbs.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <new>
#include <type_traits>

extern "C" {
/* Header of an extended (IB_USER_VERBS_CMD_FLAG_EXTENDED) write command. */
struct ibv_ex_cmd_hdr {
	ib_uverbs_cmd_hdr hdr;
	ib_uverbs_ex_cmd_hdr ex_hdr;
};
} /* extern "C" */

namespace sroce::abi {

/* Size- and alignment-exact stand-in for a kernel uverbs struct. */
template <typename Kabi> struct alignas(Kabi) KernelCore {
	unsigned char bytes[sizeof(Kabi)];

	/*
	 * The byte array implicitly creates the (implicit-lifetime) kernel
	 * struct, and the kernel or libibverbs wrote it through the C layout.
	 */
	Kabi *get() noexcept
	{
		return std::launder(reinterpret_cast<Kabi *>(bytes));
	}
	const Kabi *get() const noexcept
	{
		return std::launder(reinterpret_cast<const Kabi *>(bytes));
	}
};

/* [legacy header][core]: payload and total size must be 4-byte multiples. */
template <typename Kabi> struct LegacyCmd {
	static constexpr std::size_t kAlign = 4;
	ib_uverbs_cmd_hdr hdr;
	KernelCore<Kabi> core;
};

/* [extended header][core]: everything is in 8-byte units. */
template <typename Kabi> struct ExCmd {
	static constexpr std::size_t kAlign = 8;
	ibv_ex_cmd_hdr hdr;
	KernelCore<Kabi> core;
};

template <typename T>
inline constexpr bool is_wire_struct_v =
	std::is_standard_layout_v<T> && std::is_trivially_copyable_v<T>;

/*
 * A command with a driver payload, the equivalent of DECLARE_DRV_CMD's
 * request half.  The checks reject any layout where the compiler would pad
 * between the core and the payload or after the payload: the kernel would
 * then read the payload from the wrong offset.
 */
template <typename IbvCmd, typename Drv> struct DrvCmd {
	static_assert(is_wire_struct_v<Drv>, "payload must be plain C data");
	static_assert(sizeof(IbvCmd) % alignof(Drv) == 0,
		      "payload would not start exactly at sizeof(core)");
	static_assert((sizeof(IbvCmd) + sizeof(Drv)) %
			      std::max(alignof(IbvCmd), alignof(Drv)) ==
		      0,
		      "command would have tail padding");
	static_assert((sizeof(IbvCmd) + sizeof(Drv)) % IbvCmd::kAlign == 0,
		      "command length is not a whole number of ABI words");

	IbvCmd ibv_cmd;
	Drv drv;
};

/*
 * A response with a driver payload (DECLARE_DRV_CMD's response half).
 * Align is 4 for legacy commands and 8 for extended ones.
 */
template <typename KResp, typename Drv, std::size_t Align = 4> struct DrvResp {
	static_assert(is_wire_struct_v<Drv>, "payload must be plain C data");
	static_assert(sizeof(KResp) % alignof(Drv) == 0,
		      "payload would not start exactly at sizeof(core)");
	static_assert((sizeof(KResp) + sizeof(Drv)) %
			      std::max(alignof(KResp), alignof(Drv)) ==
		      0,
		      "response would have tail padding");
	static_assert((sizeof(KResp) + sizeof(Drv)) % Align == 0,
		      "response length is not a whole number of ABI words");

	KernelCore<KResp> ibv_resp;
	Drv drv;

	/* What the ibv_cmd_* helpers take as their `resp` argument. */
	KResp *core() noexcept { return ibv_resp.get(); }
};

template <typename KResp, typename Drv>
using ExDrvResp = DrvResp<KResp, Drv, 8>;

} /* namespace sroce::abi */

extern "C" {

/*
 * Command structs under the names the ibv_cmd_* prototypes use.  Several of
 * these names are also verbs.h functions (ibv_reg_mr, ibv_alloc_pd, ...),
 * so always spell them with `struct`.
 */
#define SROCE_LEGACY_CMD(name, kabi)                                           \
	struct name : sroce::abi::LegacyCmd<kabi> {}
#define SROCE_EX_CMD(name, kabi) struct name : sroce::abi::ExCmd<kabi> {}

SROCE_LEGACY_CMD(ibv_get_context, ib_uverbs_get_context);
SROCE_LEGACY_CMD(ibv_query_port, ib_uverbs_query_port);
SROCE_LEGACY_CMD(ibv_alloc_pd, ib_uverbs_alloc_pd);
SROCE_LEGACY_CMD(ibv_reg_mr, ib_uverbs_reg_mr);
SROCE_LEGACY_CMD(ibv_rereg_mr, ib_uverbs_rereg_mr);
SROCE_LEGACY_CMD(ibv_alloc_mw, ib_uverbs_alloc_mw);
SROCE_LEGACY_CMD(ibv_open_xrcd, ib_uverbs_open_xrcd);
SROCE_LEGACY_CMD(ibv_create_cq, ib_uverbs_create_cq);
SROCE_LEGACY_CMD(ibv_resize_cq, ib_uverbs_resize_cq);
SROCE_LEGACY_CMD(ibv_create_qp, ib_uverbs_create_qp);
SROCE_LEGACY_CMD(ibv_open_qp, ib_uverbs_open_qp);
SROCE_LEGACY_CMD(ibv_query_qp, ib_uverbs_query_qp);
SROCE_LEGACY_CMD(ibv_modify_qp, ib_uverbs_modify_qp);
SROCE_LEGACY_CMD(ibv_create_srq, ib_uverbs_create_srq);
SROCE_LEGACY_CMD(ibv_create_xsrq, ib_uverbs_create_xsrq);
SROCE_LEGACY_CMD(ibv_modify_srq, ib_uverbs_modify_srq);
SROCE_LEGACY_CMD(ibv_query_srq, ib_uverbs_query_srq);
/* Sent by the provider itself (no helper): the zero-WR send doorbell. */
SROCE_LEGACY_CMD(ibv_post_send, ib_uverbs_post_send);
SROCE_EX_CMD(ibv_create_cq_ex, ib_uverbs_ex_create_cq);
SROCE_EX_CMD(ibv_modify_cq, ib_uverbs_ex_modify_cq);
SROCE_EX_CMD(ibv_create_qp_ex, ib_uverbs_ex_create_qp);
SROCE_EX_CMD(ibv_modify_qp_ex, ib_uverbs_ex_modify_qp);

#undef SROCE_LEGACY_CMD
#undef SROCE_EX_CMD

/* ------------------------------------------------------------------------
 * ibv_cmd_* helpers (IBVERBS_PRIVATE_<PABI>; same signature in every
 * supported release).  All return 0 or a positive errno
 * value (errno is usually, but not always, set as well).  `cmd` may be NULL
 * with cmd_size 0 where libibverbs only reads it; the exceptions noted below
 * dereference it.
 * ---------------------------------------------------------------------- */

/* Device and context.  ibv_cmd_get_context: see provider_abi.h. */
int ibv_cmd_query_device_any(ibv_context *context,
			     const ibv_query_device_ex_input *input,
			     ibv_device_attr_ex *attr, size_t attr_size,
			     ib_uverbs_ex_query_device_resp *resp,
			     size_t *resp_size);
/* cmd must be valid: the write() fallback stores port_num into it. */
int ibv_cmd_query_port(ibv_context *context, uint8_t port_num,
		       ibv_port_attr *port_attr, struct ibv_query_port *cmd,
		       size_t cmd_size);

/* PD, MR, MW, XRCD */
int ibv_cmd_alloc_pd(ibv_context *context, ibv_pd *pd,
		     struct ibv_alloc_pd *cmd, size_t cmd_size,
		     ib_uverbs_alloc_pd_resp *resp, size_t resp_size);
int ibv_cmd_dealloc_pd(ibv_pd *pd);
/* cmd must be valid: the core fields are filled in place. */
int ibv_cmd_reg_mr(ibv_pd *pd, void *addr, size_t length, uint64_t hca_va,
		   int access, verbs_mr *vmr, struct ibv_reg_mr *cmd,
		   size_t cmd_size, ib_uverbs_reg_mr_resp *resp,
		   size_t resp_size);
/* cmd must be valid, as for reg_mr. */
int ibv_cmd_rereg_mr(verbs_mr *vmr, uint32_t flags, void *addr, size_t length,
		     uint64_t hca_va, int access, ibv_pd *pd,
		     struct ibv_rereg_mr *cmd, size_t cmd_size,
		     ib_uverbs_rereg_mr_resp *resp, size_t resp_size);
int ibv_cmd_dereg_mr(verbs_mr *vmr);
int ibv_cmd_advise_mr(ibv_pd *pd, enum ibv_advise_mr_advice advice,
		      uint32_t flags, ibv_sge *sg_list, uint32_t num_sge);
int ibv_cmd_alloc_mw(ibv_pd *pd, enum ibv_mw_type type, ibv_mw *mw,
		     struct ibv_alloc_mw *cmd, size_t cmd_size,
		     ib_uverbs_alloc_mw_resp *resp, size_t resp_size);
int ibv_cmd_dealloc_mw(ibv_mw *mw);
int ibv_cmd_open_xrcd(ibv_context *context, verbs_xrcd *xrcd, int vxrcd_size,
		      ibv_xrcd_init_attr *attr, struct ibv_open_xrcd *cmd,
		      size_t cmd_size, ib_uverbs_open_xrcd_resp *resp,
		      size_t resp_size);
int ibv_cmd_close_xrcd(verbs_xrcd *xrcd);

/* CQ.  ibv_cmd_create_cq_ex: see provider_abi.h. */
int ibv_cmd_create_cq(ibv_context *context, int cqe, ibv_comp_channel *channel,
		      int comp_vector, ibv_cq *cq, struct ibv_create_cq *cmd,
		      size_t cmd_size, ib_uverbs_create_cq_resp *resp,
		      size_t resp_size);
int ibv_cmd_poll_cq(ibv_cq *cq, int ne, ibv_wc *wc); /* write() path only */
int ibv_cmd_req_notify_cq(ibv_cq *cq, int solicited_only); /* write() only */
int ibv_cmd_resize_cq(ibv_cq *cq, int cqe, struct ibv_resize_cq *cmd,
		      size_t cmd_size, ib_uverbs_resize_cq_resp *resp,
		      size_t resp_size);
int ibv_cmd_modify_cq(ibv_cq *cq, ibv_modify_cq_attr *attr,
		      struct ibv_modify_cq *cmd, size_t cmd_size);
int ibv_cmd_destroy_cq(ibv_cq *cq);

/* SRQ */
int ibv_cmd_create_srq(ibv_pd *pd, ibv_srq *srq, ibv_srq_init_attr *attr,
		       struct ibv_create_srq *cmd, size_t cmd_size,
		       ib_uverbs_create_srq_resp *resp, size_t resp_size);
int ibv_cmd_create_srq_ex(ibv_context *context, verbs_srq *srq,
			  ibv_srq_init_attr_ex *attr_ex,
			  struct ibv_create_xsrq *cmd, size_t cmd_size,
			  ib_uverbs_create_srq_resp *resp, size_t resp_size);
int ibv_cmd_modify_srq(ibv_srq *srq, ibv_srq_attr *srq_attr,
		       int srq_attr_mask, struct ibv_modify_srq *cmd,
		       size_t cmd_size);
int ibv_cmd_query_srq(ibv_srq *srq, ibv_srq_attr *srq_attr,
		      struct ibv_query_srq *cmd, size_t cmd_size);
int ibv_cmd_destroy_srq(ibv_srq *srq);

/* QP.  ibv_cmd_create_qp_ex2: see provider_abi.h. */
int ibv_cmd_create_qp(ibv_pd *pd, ibv_qp *qp, ibv_qp_init_attr *attr,
		      struct ibv_create_qp *cmd, size_t cmd_size,
		      ib_uverbs_create_qp_resp *resp, size_t resp_size);
int ibv_cmd_create_qp_ex(ibv_context *context, verbs_qp *qp,
			 ibv_qp_init_attr_ex *attr_ex,
			 struct ibv_create_qp *cmd, size_t cmd_size,
			 ib_uverbs_create_qp_resp *resp, size_t resp_size);
int ibv_cmd_open_qp(ibv_context *context, verbs_qp *qp, int vqp_sz,
		    ibv_qp_open_attr *attr, struct ibv_open_qp *cmd,
		    size_t cmd_size, ib_uverbs_create_qp_resp *resp,
		    size_t resp_size);
int ibv_cmd_query_qp(ibv_qp *qp, ibv_qp_attr *qp_attr, int attr_mask,
		     ibv_qp_init_attr *qp_init_attr, struct ibv_query_qp *cmd,
		     size_t cmd_size);
int ibv_cmd_modify_qp(ibv_qp *qp, ibv_qp_attr *attr, int attr_mask,
		      struct ibv_modify_qp *cmd, size_t cmd_size);
int ibv_cmd_modify_qp_ex(ibv_qp *qp, ibv_qp_attr *attr, int attr_mask,
			 struct ibv_modify_qp_ex *cmd, size_t cmd_size,
			 ib_uverbs_ex_modify_qp_resp *resp, size_t resp_size);
int ibv_cmd_destroy_qp(ibv_qp *qp);
/* Marshal whole WR lists through write(); for non-mmapped queues only. */
int ibv_cmd_post_send(ibv_qp *ibqp, ibv_send_wr *wr, ibv_send_wr **bad_wr);
int ibv_cmd_post_recv(ibv_qp *ibqp, ibv_recv_wr *wr, ibv_recv_wr **bad_wr);
int ibv_cmd_post_srq_recv(ibv_srq *srq, ibv_recv_wr *wr,
			  ibv_recv_wr **bad_wr);
int ibv_cmd_attach_mcast(ibv_qp *qp, const ibv_gid *gid, uint16_t lid);
int ibv_cmd_detach_mcast(ibv_qp *qp, const ibv_gid *gid, uint16_t lid);

/* AH: no command payload is possible, only a response payload. */
int ibv_cmd_create_ah(ibv_pd *pd, ibv_ah *ah, ibv_ah_attr *attr,
		      ib_uverbs_create_ah_resp *resp, size_t resp_size);
int ibv_cmd_destroy_ah(ibv_ah *ah);

} /* extern "C" */

/* ------------------------------------------------------------------------
 * Layout pins (kernel uverbs ABI, so the same for every release); the structural
 * checks tie each wrapper to the kernel struct it carries.
 * ---------------------------------------------------------------------- */
namespace sroce::abi::layout_checks {

static_assert(sizeof(ib_uverbs_cmd_hdr) == 8);
static_assert(sizeof(ibv_ex_cmd_hdr) == 24);

template <typename Cmd, typename Kabi>
constexpr bool legacy_cmd_ok =
	is_wire_struct_v<Cmd> &&
	alignof(Cmd) == std::max<std::size_t>(4, alignof(Kabi)) &&
	sizeof(Cmd) == sizeof(ib_uverbs_cmd_hdr) + sizeof(Kabi) &&
	sizeof(Cmd) % 4 == 0;

template <typename Cmd, typename Kabi>
constexpr bool ex_cmd_ok =
	is_wire_struct_v<Cmd> && alignof(Cmd) == 8 &&
	sizeof(Cmd) == sizeof(ibv_ex_cmd_hdr) + sizeof(Kabi) &&
	sizeof(Cmd) % 8 == 0 && sizeof(Kabi) % 8 == 0;

static_assert(legacy_cmd_ok<struct ibv_get_context, ib_uverbs_get_context>);
static_assert(legacy_cmd_ok<struct ibv_query_port, ib_uverbs_query_port>);
static_assert(legacy_cmd_ok<struct ibv_alloc_pd, ib_uverbs_alloc_pd>);
static_assert(legacy_cmd_ok<struct ibv_reg_mr, ib_uverbs_reg_mr>);
static_assert(legacy_cmd_ok<struct ibv_rereg_mr, ib_uverbs_rereg_mr>);
static_assert(legacy_cmd_ok<struct ibv_alloc_mw, ib_uverbs_alloc_mw>);
static_assert(legacy_cmd_ok<struct ibv_open_xrcd, ib_uverbs_open_xrcd>);
static_assert(legacy_cmd_ok<struct ibv_create_cq, ib_uverbs_create_cq>);
static_assert(legacy_cmd_ok<struct ibv_resize_cq, ib_uverbs_resize_cq>);
static_assert(legacy_cmd_ok<struct ibv_create_qp, ib_uverbs_create_qp>);
static_assert(legacy_cmd_ok<struct ibv_open_qp, ib_uverbs_open_qp>);
static_assert(legacy_cmd_ok<struct ibv_query_qp, ib_uverbs_query_qp>);
static_assert(legacy_cmd_ok<struct ibv_modify_qp, ib_uverbs_modify_qp>);
static_assert(legacy_cmd_ok<struct ibv_create_srq, ib_uverbs_create_srq>);
static_assert(legacy_cmd_ok<struct ibv_create_xsrq, ib_uverbs_create_xsrq>);
static_assert(legacy_cmd_ok<struct ibv_modify_srq, ib_uverbs_modify_srq>);
static_assert(legacy_cmd_ok<struct ibv_query_srq, ib_uverbs_query_srq>);
static_assert(legacy_cmd_ok<struct ibv_post_send, ib_uverbs_post_send>);
static_assert(ex_cmd_ok<struct ibv_create_cq_ex, ib_uverbs_ex_create_cq>);
static_assert(ex_cmd_ok<struct ibv_modify_cq, ib_uverbs_ex_modify_cq>);
static_assert(ex_cmd_ok<struct ibv_create_qp_ex, ib_uverbs_ex_create_qp>);
static_assert(ex_cmd_ok<struct ibv_modify_qp_ex, ib_uverbs_ex_modify_qp>);

/* Command totals, header + core (bytes). */
static_assert(sizeof(struct ibv_get_context) == 16);
static_assert(sizeof(struct ibv_alloc_pd) == 16);
static_assert(sizeof(struct ibv_query_qp) == 24);
static_assert(sizeof(struct ibv_query_port) == 24);
static_assert(sizeof(struct ibv_resize_cq) == 24);
static_assert(sizeof(struct ibv_modify_srq) == 24);
static_assert(sizeof(struct ibv_query_srq) == 24);
static_assert(sizeof(struct ibv_alloc_mw) == 24);
static_assert(sizeof(struct ibv_post_send) == 32); /* in_words = 8 */
static_assert(sizeof(ib_uverbs_post_send_resp) == 4); /* out_words = 1 */
static_assert(sizeof(ib_uverbs_send_wr) == 56);   /* minimum wqe_size */
static_assert(sizeof(struct ibv_create_cq) == 40);
static_assert(sizeof(struct ibv_create_srq) == 40);
static_assert(sizeof(struct ibv_reg_mr) == 48);
static_assert(sizeof(struct ibv_create_cq_ex) == 56);
static_assert(sizeof(struct ibv_create_qp) == 64);
static_assert(sizeof(struct ibv_create_qp_ex) == 88);
static_assert(sizeof(struct ibv_modify_qp) == 120);

/* Core response sizes (bytes): a driver payload starts right here. */
static_assert(sizeof(ib_uverbs_alloc_pd_resp) == 4);
static_assert(sizeof(ib_uverbs_create_ah_resp) == 4);
static_assert(sizeof(ib_uverbs_get_context_resp) == 8);
static_assert(sizeof(ib_uverbs_create_cq_resp) == 8);
static_assert(sizeof(ib_uverbs_resize_cq_resp) == 8);
static_assert(sizeof(ib_uverbs_alloc_mw_resp) == 8);
static_assert(sizeof(ib_uverbs_reg_mr_resp) == 12);
static_assert(sizeof(ib_uverbs_ex_create_cq_resp) == 16);
static_assert(sizeof(ib_uverbs_create_srq_resp) == 16);
static_assert(sizeof(ib_uverbs_create_qp_resp) == 32);
static_assert(sizeof(ib_uverbs_ex_create_qp_resp) == 40);
static_assert(sizeof(ib_uverbs_ex_query_device_resp) == 304);

} /* namespace sroce::abi::layout_checks */

#endif /* SROCE_CMD_ABI_H */

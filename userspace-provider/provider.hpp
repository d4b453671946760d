// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Internal declarations shared by the provider's source files (and the unit
 * tests).  Nothing here is exported: the library is built with
 * -fvisibility=hidden and libibverbs reaches us only through the ops tables.
 *
 * Every function handed to libibverbs is noexcept and the library is built
 * with -fno-exceptions: a C caller cannot unwind a C++ exception.  Errors
 * follow libibverbs' conventions per op: int-returning ops return a positive
 * errno value (and also set errno, which some callers read instead); pointer
 * returning ops set errno and return nullptr.
 */
#ifndef SROCE_PROVIDER_HPP
#define SROCE_PROVIDER_HPP

#include "abi/cmd_abi.h"
#include "abi/provider_abi.h"
#include "uapi/sroce-abi.h"

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <type_traits>

#include <string_view>

namespace sroce {

/* ------------------------------------------------------------------------
 * Device (device.cpp)
 * ---------------------------------------------------------------------- */

/*
 * One per matched uverbs device.  Allocated by alloc_device(), freed by
 * uninit_device() once libibverbs drops its last reference.
 */
struct Device {
	verbs_device vdev; /* first: libibverbs casts ibv_device* to it */
};

inline Device *to_device(verbs_device *vdev)
{
	static_assert(std::is_standard_layout_v<Device> &&
		      offsetof(Device, vdev) == 0);
	return reinterpret_cast<Device *>(vdev);
}

/* The registered op table; exposed for the unit tests. */
extern const verbs_device_ops device_ops;

/* Claims a device iff its sysfs SROCE_ABI_SYSFS_ATTR reads SROCE_ABI_ID. */
bool match_device(verbs_sysfs_dev *sysfs_dev) noexcept;

/*
 * Whether the libibverbs this process loaded, named by its file (Debian,
 * Ubuntu and rdma-core's own build install it as
 * libibverbs.so.<VERSION>, e.g. libibverbs.so.1.14.44.0), is the one the
 * provider was built against (@built, pkg-config's version).  unknown:
 * the name says no version.
 */
enum class LibibverbsMatch { same, other, unknown };
LibibverbsMatch compare_libibverbs(std::string_view loaded_file,
				   std::string_view built) noexcept;

/* ------------------------------------------------------------------------
 * Context (context.cpp)
 * ---------------------------------------------------------------------- */

/*
 * One per ibv_open_device().  libibverbs calloc()s it for us
 * (_verbs_init_and_alloc_context), so it must stay an implicit-lifetime
 * type: no constructors, no destructors, no non-trivial members.
 */
struct Context {
	verbs_context vctx;
	uint32_t kernel_abi; /* sroce_alloc_ucontext_resp::abi_version */
	/* The SQ mark page, mapped; null: the kernel gave none */
	sroce_sq_mark_page *sq_marks;
	std::size_t sq_marks_length;
};
static_assert(std::is_trivially_default_constructible_v<Context> &&
		      std::is_trivially_destructible_v<Context>,
	      "Context is calloc()ed by libibverbs");

inline Context *to_context(ibv_context *ibctx)
{
	static_assert(std::is_standard_layout_v<Context> &&
		      offsetof(Context, vctx) == 0);
	auto *raw = reinterpret_cast<unsigned char *>(ibctx) -
		    offsetof(verbs_context, context);
	return reinterpret_cast<Context *>(raw);
}

/* For logging from objects: every context we hand out is a Context. */
inline verbs_context *vctx_of(ibv_context *ibctx)
{
	return &to_context(ibctx)->vctx;
}

verbs_context *alloc_context(ibv_device *ibdev, int cmd_fd,
			     void *private_data) noexcept;

/* ------------------------------------------------------------------------
 * PD and MR (pd_mr.cpp)
 * ---------------------------------------------------------------------- */

ibv_pd *alloc_pd(ibv_context *ibctx) noexcept;
int dealloc_pd(ibv_pd *ibpd) noexcept;
ibv_mr *reg_mr(ibv_pd *ibpd, void *addr, size_t length, uint64_t hca_va,
	       int access) noexcept;
int rereg_mr(verbs_mr *vmr, int flags, ibv_pd *ibpd, void *addr,
	     size_t length, int access) noexcept;
int dereg_mr(verbs_mr *vmr) noexcept;
int advise_mr(ibv_pd *pd, enum ibv_advise_mr_advice advice, uint32_t flags,
	      ibv_sge *sg_list, uint32_t num_sge) noexcept;

/* ------------------------------------------------------------------------
 * XRC domains (xrcd.cpp)
 * ---------------------------------------------------------------------- */

ibv_xrcd *open_xrcd(ibv_context *ibctx, ibv_xrcd_init_attr *attr) noexcept;
int close_xrcd(ibv_xrcd *ibxrcd) noexcept;

/* ------------------------------------------------------------------------
 * Memory windows (mw.cpp)
 * ---------------------------------------------------------------------- */

ibv_mw *alloc_mw(ibv_pd *ibpd, ibv_mw_type type) noexcept;
int dealloc_mw(ibv_mw *mw) noexcept;
/* ibv_bind_mw (type 1): posts a bind WQE and moves mw->rkey on. */
int bind_mw(ibv_qp *ibqp, ibv_mw *mw, ibv_mw_bind *mw_bind) noexcept;

/* ------------------------------------------------------------------------
 * AH (ah.cpp)
 * ---------------------------------------------------------------------- */

ibv_ah *create_ah(ibv_pd *ibpd, ibv_ah_attr *attr) noexcept;
int destroy_ah(ibv_ah *ibah) noexcept;

/* ------------------------------------------------------------------------
 * Helpers
 * ---------------------------------------------------------------------- */

/*
 * Owner of a provider object between `new` and the moment the kernel object
 * exists and the pointer is handed to the application.  Deleting restores
 * errno so failure paths can set it first and return.
 */
template <typename T> struct ErrnoSafeDelete {
	void operator()(T *p) const noexcept
	{
		const int saved = errno;
		delete p;
		errno = saved;
	}
};
template <typename T> using Owned = std::unique_ptr<T, ErrnoSafeDelete<T>>;

} /* namespace sroce */

/*
 * verbs_log(): libibverbs' own prefix ("<ibdev>: <function>:<line>: "),
 * written to VERBS_LOG_FILE when VERBS_LOG_LEVEL >= level (release builds
 * of libibverbs log nowhere without VERBS_LOG_FILE).  Appends the newline.
 * Keeps errno intact because it is used on failure paths right before
 * returning.
 */
#define SROCE_LOG(vctx, level, fmt, ...)                                       \
	do {                                                                   \
		const int sroce_log_errno_ = errno;                            \
		__verbs_log((vctx), (level), "%s: %s:%d: " fmt "\n",           \
			    (vctx)->context.device->name, __func__,            \
			    __LINE__ __VA_OPT__(, ) __VA_ARGS__);              \
		errno = sroce_log_errno_;                                      \
	} while (0)
#define SROCE_ERR(vctx, fmt, ...)                                              \
	SROCE_LOG(vctx, VERBS_LOG_ERR, fmt __VA_OPT__(, ) __VA_ARGS__)
#define SROCE_DBG(vctx, fmt, ...)                                              \
	SROCE_LOG(vctx, VERBS_LOG_DEBUG, fmt __VA_OPT__(, ) __VA_ARGS__)

#endif /* SROCE_PROVIDER_HPP */

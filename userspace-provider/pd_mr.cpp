// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Protection domains and memory regions: thin wrappers over the uverbs
 * write commands.  The kernel owns the real objects (it pins and maps the
 * pages itself), so the provider object only carries what libibverbs needs.
 *
 * Ownership: the provider object is created before the kernel object and
 * handed to the application only once the kernel call succeeded.  It is
 * deleted only after the kernel destroyed its side; if destruction fails
 * (e.g. EBUSY, a PD still in use) both stay alive and the caller may retry.
 */
#include "provider.hpp"

#include <new>

namespace sroce {
namespace {

struct Pd {
	ibv_pd ibv;
};

/* verbs_mr is mandatory: libibverbs keeps mr_type/access in it. */
struct Mr {
	verbs_mr vmr;
};

Pd *to_pd(ibv_pd *ibpd)
{
	static_assert(std::is_standard_layout_v<Pd> && offsetof(Pd, ibv) == 0);
	return reinterpret_cast<Pd *>(ibpd);
}

Mr *to_mr(verbs_mr *vmr)
{
	static_assert(std::is_standard_layout_v<Mr> && offsetof(Mr, vmr) == 0);
	return reinterpret_cast<Mr *>(vmr);
}

} /* namespace */

ibv_pd *alloc_pd(ibv_context *ibctx) noexcept
{
	Owned<Pd> pd(new (std::nothrow) Pd{});
	if (!pd) {
		errno = ENOMEM;
		return nullptr;
	}

	struct ibv_alloc_pd cmd{};
	ib_uverbs_alloc_pd_resp resp{};
	const int ret = ibv_cmd_alloc_pd(ibctx, &pd->ibv, &cmd, sizeof(cmd),
					 &resp, sizeof(resp));
	if (ret) {
		errno = ret;
		return nullptr;
	}
	return &pd.release()->ibv;
}

int dealloc_pd(ibv_pd *ibpd) noexcept
{
	const int ret = ibv_cmd_dealloc_pd(ibpd);
	if (ret) {
		errno = ret;
		return ret;
	}
	delete to_pd(ibpd);
	return 0;
}

ibv_mr *reg_mr(ibv_pd *ibpd, void *addr, size_t length, uint64_t hca_va,
	       int access) noexcept
{
	Owned<Mr> mr(new (std::nothrow) Mr{});
	if (!mr) {
		errno = ENOMEM;
		return nullptr;
	}

	struct ibv_reg_mr cmd{};
	ib_uverbs_reg_mr_resp resp{};
	const int ret = ibv_cmd_reg_mr(ibpd, addr, length, hca_va, access,
				       &mr->vmr, &cmd, sizeof(cmd), &resp,
				       sizeof(resp));
	if (ret) {
		errno = ret;
		return nullptr;
	}
	return &mr.release()->vmr.ibv_mr;
}

/*
 * Returns 0 or an errno value; ibv_rereg_mr() turns failure into
 * IBV_REREG_MR_ERR_CMD.  On success libibverbs has refreshed lkey/rkey.
 */
int rereg_mr(verbs_mr *vmr, int flags, ibv_pd *ibpd, void *addr,
	     size_t length, int access) noexcept
{
	struct ibv_rereg_mr cmd{};
	ib_uverbs_rereg_mr_resp resp{};

	/*
	 * ibv_rereg_mr() has no IOVA argument: a new translation is addressed
	 * by its virtual address, as ibv_reg_mr() does.  The kernel ignores
	 * start/length/hca_va unless IBV_REREG_MR_CHANGE_TRANSLATION is set.
	 */
	const int ret = ibv_cmd_rereg_mr(
		vmr, static_cast<uint32_t>(flags), addr, length,
		reinterpret_cast<uintptr_t>(addr), access, ibpd, &cmd,
		sizeof(cmd), &resp, sizeof(resp));
	if (ret)
		errno = ret;
	return ret;
}

/*
 * ibv_advise_mr(): prefetch of on-demand (ODP) MRs, done by the kernel
 * (kernel/odp.c).  Returns 0 or an errno value, as libibverbs expects.
 */
int advise_mr(ibv_pd *pd, enum ibv_advise_mr_advice advice, uint32_t flags,
	      ibv_sge *sg_list, uint32_t num_sge) noexcept
{
	return ibv_cmd_advise_mr(pd, advice, flags, sg_list, num_sge);
}

int dereg_mr(verbs_mr *vmr) noexcept
{
	const int ret = ibv_cmd_dereg_mr(vmr);
	if (ret) {
		errno = ret;
		return ret;
	}
	delete to_mr(vmr);
	return 0;
}

} /* namespace sroce */

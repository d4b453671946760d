// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Queue pairs: create/modify/query/destroy through uverbs, posting through
 * the shared rings (wq.cpp).
 *
 * Creation: the kernel sizes the rings from the capabilities it grants
 * (returned in the core response and copied into the caller's cap by
 * libibverbs) and describes them in sroce_create_qp_resp.  Before handing
 * the QP out we check that the rings can carry what the caps promise: as
 * many slots as max_*_wr, and slots large enough for max_*_sge SGEs or
 * max_inline_data bytes.  A kernel that disagrees speaks another ABI, and
 * we fail with EPROTO rather than corrupt its rings later.
 *
 * XRC: a send QP (IBV_QPT_XRC_SEND) is an RC requester with a send ring
 * and no receive queue; each WQE names the remote XRC SRQ.  A receive QP
 * (IBV_QPT_XRC_RECV, from ibv_create_qp_ex with an XRC domain or
 * ibv_open_qp) belongs to the domain, not to the process: ib_core creates
 * it without driver data, so it has no rings, and it is only modified,
 * queried and destroyed.
 */
#include "qp.hpp"

#include "cq.hpp"

#include "provider.hpp"

#include <new>

namespace sroce {
namespace {

using CreateQpResp = abi::DrvResp<ib_uverbs_create_qp_resp, sroce_create_qp_resp>;
using CreateQpExResp =
	abi::ExDrvResp<ib_uverbs_ex_create_qp_resp, sroce_create_qp_resp>;
using ModifyQpExCmd = abi::DrvCmd<struct ibv_modify_qp_ex, sroce_modify_qp_cmd>;

/*
 * ibv_qp_init_attr_ex comp_mask bits create_qp_ex accepts.  TSO and RSS
 * (IND_TABLE, RX_HASH) are not RoCE-soft-device features we offer.
 */
constexpr uint32_t kSupportedQpInitMask = IBV_QP_INIT_ATTR_PD |
					  IBV_QP_INIT_ATTR_XRCD |
					  IBV_QP_INIT_ATTR_CREATE_FLAGS |
					  IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;

/* With a receive queue of its own: neither an SRQ user nor XRC. */
bool owns_rq(ibv_qp_type type, const ibv_srq *srq) noexcept
{
	return !srq && type != IBV_QPT_XRC_SEND && type != IBV_QPT_XRC_RECV;
}

/*
 * Maps one ring described by `info`, or none when the kernel made none
 * (mmap_length 0), which is only valid for a queue of depth 0.
 */
int map_ring(Mapping &m, int cmd_fd, const sroce_ring_info &info,
	     uint32_t max_wr) noexcept
{
	if (info.mmap_length == 0)
		return max_wr == 0 ? 0 : EPROTO;
	return m.map(cmd_fd, info.mmap_offset, info.mmap_length);
}

/* Everything after the kernel QP exists: map and bind the rings. */
int setup_queues(Qp &qp, ibv_context *ibctx, ibv_qp_type type,
		 const ibv_qp_cap &cap, bool has_rq,
		 const sroce_create_qp_resp &drv) noexcept
{
	const int cmd_fd = ibctx->cmd_fd;
	sroce_sq_mark_page *const marks = to_context(ibctx)->sq_marks;
	const Doorbell doorbell{
		.fn = uverbs_post_send_doorbell,
		.cmd_fd = cmd_fd,
		.qp_handle = qp.vqp.qp.handle,
		.hook = nullptr,
		/* A mark beyond the page is the kernel's bug: ring instead. */
		.marks = drv.sq_mark < SROCE_SQ_MARKS ? marks : nullptr,
		.mark = drv.sq_mark,
	};

	/* Known even without a ring (depth 0): install_qp_ex_ops reads it. */
	qp.sq.qp_type = type;
	/* The inline limit we enforce must cover what the caller was told. */
	if (drv.max_inline_data < cap.max_inline_data)
		return EPROTO;

	Mapping sq_map;
	int ret = map_ring(sq_map, cmd_fd, drv.sq, cap.max_send_wr);
	if (ret)
		return ret;
	if (sq_map.get()) {
		ret = init_send_queue(qp.sq, sq_map.get(), sq_map.size(),
				      drv.sq.num_slots, drv.sq.slot_size, type,
				      cap.max_send_wr, cap.max_send_sge,
				      drv.max_inline_data, doorbell);
		if (ret)
			return ret;
	}

	Mapping rq_map;
	if (has_rq) {
		ret = map_ring(rq_map, cmd_fd, drv.rq, cap.max_recv_wr);
		if (ret)
			return ret;
		if (rq_map.get()) {
			/* The send doorbell also flushes receives in ERR. */
			ret = init_recv_queue(qp.rq, rq_map.get(),
					      rq_map.size(), drv.rq.num_slots,
					      drv.rq.slot_size, cap.max_recv_wr,
					      cap.max_recv_sge, doorbell);
			if (ret)
				return ret;
		}
	}
	/* Without an RQ the kernel makes no ring (rq.mmap_length == 0). */

	qp.sq_map = std::move(sq_map);
	qp.rq_map = std::move(rq_map);
	qp.has_rq = has_rq;
	return 0;
}

/* Undoes a kernel QP whose user-space half could not be set up. */
void abandon_qp(Qp &qp, int err) noexcept
{
	SROCE_ERR(vctx_of(qp.vqp.qp.context),
		  "QP %u: cannot map its rings: %d", qp.vqp.qp.qp_num, err);
	(void)ibv_cmd_destroy_qp(&qp.vqp.qp);
	errno = err;
}

} /* namespace */

ibv_qp *create_qp(ibv_pd *ibpd, ibv_qp_init_attr *attr) noexcept
{
	if (!wr_opcodes_for(attr->qp_type)) {
		errno = EOPNOTSUPP; /* XRC receive (needs a domain), raw, driver */
		return nullptr;
	}

	Owned<Qp> qp(new (std::nothrow) Qp);
	if (!qp) {
		errno = ENOMEM;
		return nullptr;
	}

	struct ibv_create_qp cmd{};
	CreateQpResp resp{};
	int ret = ibv_cmd_create_qp(ibpd, &qp->vqp.qp, attr, &cmd, sizeof(cmd),
				    resp.core(), sizeof(resp));
	if (ret) {
		errno = ret;
		return nullptr;
	}

	ret = setup_queues(*qp, ibpd->context, attr->qp_type,
			   attr->cap, owns_rq(attr->qp_type, attr->srq), resp.drv);
	if (ret) {
		abandon_qp(*qp, ret);
		return nullptr;
	}
	return &qp.release()->vqp.qp;
}

ibv_qp *create_qp_ex(ibv_context *ibctx, ibv_qp_init_attr_ex *attr) noexcept
{
	const bool xrc_recv = attr->qp_type == IBV_QPT_XRC_RECV;

	/* A receive QP belongs to a domain, every other QP to a PD. */
	if (!(attr->comp_mask &
	      (xrc_recv ? IBV_QP_INIT_ATTR_XRCD : IBV_QP_INIT_ATTR_PD))) {
		errno = EINVAL;
		return nullptr;
	}
	if ((attr->comp_mask & ~kSupportedQpInitMask) ||
	    (!wr_opcodes_for(attr->qp_type) && !xrc_recv) ||
	    ((attr->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) &&
	     attr->create_flags) ||
	    ((attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) &&
	     (attr->send_ops_flags & ~send_ops_for(attr->qp_type)))) {
		errno = EOPNOTSUPP;
		return nullptr;
	}

	Owned<Qp> qp(new (std::nothrow) Qp);
	if (!qp) {
		errno = ENOMEM;
		return nullptr;
	}

	struct ibv_create_qp_ex cmd{};
	CreateQpExResp resp{};
	int ret = abi::cmd_create_qp_ex2(ibctx, &qp->vqp, attr, &cmd,
					 sizeof(cmd), resp.core(), sizeof(resp));
	if (ret) {
		errno = ret;
		return nullptr;
	}

	if (xrc_recv)
		return &qp.release()->vqp.qp; /* no rings, no posting */
	ret = setup_queues(*qp, ibctx, attr->qp_type, attr->cap,
			   owns_rq(attr->qp_type, attr->srq), resp.drv);
	if (ret) {
		abandon_qp(*qp, ret);
		return nullptr;
	}
	/* After the command: libibverbs' set_qp() zeroes vqp.comp_mask. */
	if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)
		install_qp_ex_ops(*qp, attr->send_ops_flags);
	return &qp.release()->vqp.qp;
}

/* ibv_open_qp: another handle on an XRC receive QP of a shared domain. */
ibv_qp *open_qp(ibv_context *ibctx, ibv_qp_open_attr *attr) noexcept
{
	Owned<Qp> qp(new (std::nothrow) Qp);
	if (!qp) {
		errno = ENOMEM;
		return nullptr;
	}
	struct ibv_open_qp cmd{};
	ib_uverbs_create_qp_resp resp{};
	const int ret = ibv_cmd_open_qp(ibctx, &qp->vqp, sizeof(qp->vqp), attr,
					&cmd, sizeof(cmd), &resp, sizeof(resp));
	if (ret) {
		errno = ret;
		return nullptr;
	}
	return &qp.release()->vqp.qp;
}

/*
 * A QP destroyed or reset: its completions leave its CQs in the same call
 * (cq.hpp, discard_qp_completions).  The kernel produces none for it once
 * the command has returned, and QP numbers are handed out cyclically, so
 * none of a new QP's can be among them.
 */
static void forget_completions(ibv_qp *ibqp) noexcept
{
	if (ibqp->recv_cq)
		discard_qp_completions(ibqp->recv_cq, ibqp->qp_num);
	if (ibqp->send_cq && ibqp->send_cq != ibqp->recv_cq)
		discard_qp_completions(ibqp->send_cq, ibqp->qp_num);
}

int modify_qp(ibv_qp *ibqp, ibv_qp_attr *attr, int attr_mask) noexcept
{
	int ret;
	/*
	 * Attributes from IBV_QP_RATE_LIMIT on exist only in the extended
	 * command; ibv_cmd_modify_qp refuses them.  Everything else takes
	 * the plain command, which every kernel has.
	 */
	if (attr_mask & ~(IBV_QP_RATE_LIMIT - 1)) {
		struct ibv_modify_qp_ex cmd{};
		ib_uverbs_ex_modify_qp_resp resp{};
		ret = ibv_cmd_modify_qp_ex(ibqp, attr, attr_mask, &cmd,
					   sizeof(cmd), &resp, sizeof(resp));
	} else {
		struct ibv_modify_qp cmd{};
		ret = ibv_cmd_modify_qp(ibqp, attr, attr_mask, &cmd,
					sizeof(cmd));
	}
	/*
	 * Nothing to do on the QP's rings for any transition: each index has
	 * one writer, so on RESET/ERR the kernel discards or flushes by moving
	 * its own indices, never ours.  On RESET the CQs forget the QP.
	 */
	if (ret)
		errno = ret;
	else if ((attr_mask & IBV_QP_STATE) && attr->qp_state == IBV_QPS_RESET)
		forget_completions(ibqp);
	return ret;
}

/*
 * ibv_modify_qp_rate_limit: IBV_QP_RATE_LIMIT on a QP in RTS, the burst in
 * our payload.  typical_pkt_sz is a hint for hardware that prices packets
 * ahead of time; the kernel's pacer charges each packet's real size.
 */
int modify_qp_rate_limit(ibv_qp *ibqp, ibv_qp_rate_limit_attr *attr) noexcept
{
	if (attr->comp_mask) {
		errno = EINVAL;
		return EINVAL;
	}
	ibv_qp_attr qp_attr{};
	qp_attr.rate_limit = attr->rate_limit;
	ModifyQpExCmd cmd{};
	cmd.drv.max_burst_bytes = attr->max_burst_sz;
	ib_uverbs_ex_modify_qp_resp resp{};
	const int ret = ibv_cmd_modify_qp_ex(ibqp, &qp_attr, IBV_QP_RATE_LIMIT,
					     &cmd.ibv_cmd, sizeof(cmd), &resp,
					     sizeof(resp));
	if (ret)
		errno = ret;
	return ret;
}

int query_qp(ibv_qp *ibqp, ibv_qp_attr *attr, int attr_mask,
	     ibv_qp_init_attr *init_attr) noexcept
{
	struct ibv_query_qp cmd{};
	const int ret = ibv_cmd_query_qp(ibqp, attr, attr_mask, init_attr,
					 &cmd, sizeof(cmd));
	if (ret)
		errno = ret;
	return ret;
}

int destroy_qp(ibv_qp *ibqp) noexcept
{
	const int ret = ibv_cmd_destroy_qp(ibqp);
	if (ret) {
		errno = ret;
		return ret;
	}
	forget_completions(ibqp);
	delete to_qp(ibqp); /* unmaps both rings */
	return 0;
}

/*
 * UD multicast: the kernel keeps the group's members (ibv_attach_mcast
 * directly, or librdmacm's after a join).  Nothing changes in the rings.
 */
int attach_mcast(ibv_qp *ibqp, const ibv_gid *gid, uint16_t lid) noexcept
{
	const int ret = ibv_cmd_attach_mcast(ibqp, gid, lid);
	if (ret)
		errno = ret;
	return ret;
}

int detach_mcast(ibv_qp *ibqp, const ibv_gid *gid, uint16_t lid) noexcept
{
	const int ret = ibv_cmd_detach_mcast(ibqp, gid, lid);
	if (ret)
		errno = ret;
	return ret;
}

int post_send(ibv_qp *ibqp, ibv_send_wr *wr, ibv_send_wr **bad_wr) noexcept
{
	/* An XRC receive QP has no send queue: nothing may be posted. */
	if ((!can_post_send(ibqp->state) || ibqp->qp_type == IBV_QPT_XRC_RECV) &&
	    wr) {
		*bad_wr = wr;
		return EINVAL;
	}
	return sq_post_send(to_qp(ibqp)->sq, wr, bad_wr);
}

int post_recv(ibv_qp *ibqp, ibv_recv_wr *wr, ibv_recv_wr **bad_wr) noexcept
{
	Qp &qp = *to_qp(ibqp);
	/* Without an RQ, receives go to the SRQ (ibv_post_srq_recv). */
	if ((!qp.has_rq || !can_post_recv(ibqp->state)) && wr) {
		*bad_wr = wr;
		return EINVAL;
	}
	return rq_post_recv(qp.rq, wr, bad_wr);
}

} /* namespace sroce */

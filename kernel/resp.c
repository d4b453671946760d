// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The responder: requests arriving at a QP.  Checks the PSN (RC: NAK a
 * gap once, answer duplicates from the saved READ/atomic resources; UC:
 * drop the broken message), checks keys, rights and bounds on every
 * remote access, places data, completes receives, and acknowledges
 * (resp_answer.c).  READ responses are sent from the QP's send work,
 * paced with its requests (resp_read.c); atomics, ATOMIC WRITE and
 * FLUSH are carried out in resp_atomic.c; everything else is answered
 * right here in softirq.
 */
#include <linux/highmem.h>

#include "proto/access.h"
#include "proto/psn.h"
#include "resp.h"

/* ---- receive WQEs ---------------------------------------------------------- */

/* Takes the next receive WQE into qp->resp.rwqe.  False: none posted. */
static bool resp_take_rwqe(struct sroce_qp *qp)
{
	struct sroce_srq *srq = sroce_resp_srq(qp);
	int err = srq && sroce_srq_failed(srq) ? -EIO :
		  sroce_rq_pop(srq ? &srq->rq : &qp->rq, &qp->resp.rwqe);

	if (err == -EIO) {
		/* A corrupt index or WQE: no completion can tell which; the
		 * flush then completes every WQE still there, a corrupt one
		 * too (sroce_rq_pop_flushed).  An SRQ is not flushed: it fails
		 * as a whole, as an SRQ catastrophic error does on a NIC.
		 */
		if (srq)
			sroce_srq_fail(srq);
		sroce_qp_error(qp, IB_EVENT_QP_FATAL);
		return false;
	}
	if (err)
		return false;
	if (srq)
		sroce_srq_check_limit(srq);
	if (qp->resp.xrc_srq)
		qp->resp.xrc_srqn = qp->resp.xrc_srq->srq_num;
	qp->resp.have_rwqe = true;
	qp->resp.recv_offset = 0;
	return true;
}

static void resp_complete(struct sroce_qp *qp, struct ib_wc *wc, bool se)
{
	wc->wr_id = qp->resp.rwqe.wr_id;
	wc->qp = &qp->ib;
	qp->resp.have_rwqe = false;
	if (wc->status != IB_WC_SUCCESS)
		sroce_count(qp->sdev, SROCE_CNT_COMPLETION_ERRORS, 1);
	sroce_cq_post(sroce_resp_cq(qp), wc, se);
}

/* A receive buffer could not take the data: complete it, fail the QP. */
static void resp_recv_error(struct sroce_qp *qp, int err, u32 psn, bool rc)
{
	struct ib_wc wc = {
		.status = err == -EINVAL ? IB_WC_LOC_LEN_ERR : IB_WC_LOC_PROT_ERR,
		.opcode = IB_WC_RECV,
	};

	resp_complete(qp, &wc, false);
	if (rc)
		sroce_resp_nak(qp, psn, err == -EINVAL ? ROCE_NAK_INVALID_REQ :
						   ROCE_NAK_REM_OP_ERR);
	sroce_qp_error(qp, SROCE_QP_NO_EVENT);
}

/*
 * Copies @pkt's payload into the receive WQE in progress, @offset bytes
 * in.  Not inlined: it keeps the per-packet paths that call it small
 * enough to be inlined themselves.
 */
static noinline int resp_copy_to_rwqe(struct sroce_qp *qp, u64 offset,
				      const struct sk_buff *skb,
				      const struct roce_pkt_info *pkt)
{
	struct sroce_sgl sgl = sroce_resp_sgl(qp);

	return sroce_sgl_copy_skb(&sgl, offset, skb, pkt->payload_off,
				  pkt->payload_len, IB_ACCESS_LOCAL_WRITE);
}

/* ---- UD --------------------------------------------------------------------- */

/*
 * A UD receive completion's SL on a RoCE port says which L3 header the
 * packet came with, as ConnectX reports it (its CQE's field there: 0 GRH,
 * 1 IPv6, 2 IPv4; libmlx5 and mlx5_ib pass it on as the SL).  UCX up to
 * 1.18 reads it to find the destination address in the GRH slot: with
 * SL 0 (what rxe reports) every IPv4 packet is taken for IPv6, fails
 * UCX's GID check and is dropped, so UCX's UD transport, and its RC
 * wire-up through UD, time out.  libibverbs has no field for the header
 * type itself.
 */
#define SROCE_UD_SL_IPV6	1
#define SROCE_UD_SL_IPV4	2

static void resp_ud(struct sroce_qp *qp, struct sk_buff *skb,
		    const struct roce_pkt_info *pkt)
{
	bool ipv6 = skb->protocol == htons(ETH_P_IPV6);
	struct ib_wc wc = {
		.opcode = IB_WC_RECV,
		.src_qp = pkt->deth.src_qpn,
		.wc_flags = IB_WC_GRH | IB_WC_WITH_NETWORK_HDR_TYPE,
		.network_hdr_type = ipv6 ? RDMA_NETWORK_IPV6 : RDMA_NETWORK_IPV4,
		.sl = ipv6 ? SROCE_UD_SL_IPV6 : SROCE_UD_SL_IPV4,
		.byte_len = sizeof(struct ib_grh) + pkt->payload_len,
	};
	u8 grh[sizeof(struct ib_grh)] = {};
	struct sroce_sgl sgl;
	int err;

	/* Q_Keys with the high bit are controlled; only the GSI QP uses one. */
	if (pkt->deth.qkey != qp->qkey) {
		sroce_count(qp->sdev, SROCE_CNT_RX_DROPPED, 1);
		return;
	}
	/* A WQE still held was kept by a datagram dropped on a page fault. */
	if (!qp->resp.have_rwqe && !resp_take_rwqe(qp)) {
		sroce_count(qp->sdev, SROCE_CNT_RX_DROPPED, 1);	/* no RNR on UD */
		return;
	}
	/* RoCE v2 puts the IP header in the GRH slot: IPv4 in its last 20 bytes. */
	if (ipv6)
		memcpy(grh, skb_network_header(skb), sizeof(struct ipv6hdr));
	else
		memcpy(grh + 20, skb_network_header(skb), sizeof(struct iphdr));
	sgl = sroce_resp_sgl(qp);
	err = sroce_sgl_copy(&sgl, 0, grh, sizeof(grh), IB_ACCESS_LOCAL_WRITE,
			     SROCE_TO_MR);
	if (!err)
		err = resp_copy_to_rwqe(qp, sizeof(grh), skb, pkt);
	if (err == -EAGAIN) {
		/* An ODP page on its way: this datagram is lost, the WQE kept. */
		sroce_count(qp->sdev, SROCE_CNT_RX_DROPPED, 1);
		return;
	}
	if (err) {
		wc.status = err == -EINVAL ? IB_WC_LOC_LEN_ERR : IB_WC_LOC_PROT_ERR;
		wc.wc_flags = 0;
	}
	if (pkt->op->flags & ROCE_OPF_IMM) {
		wc.wc_flags |= IB_WC_WITH_IMM;
		wc.ex.imm_data = (__force __be32)pkt->imm_be;
	}
	resp_complete(qp, &wc, pkt->bth.se);
}

/* ---- RC and UC requests ------------------------------------------------------ */

/* The receive WQE a SEND or WRITE with immediate consumes, or what to do
 * without one.
 */
static u8 resp_need_rwqe(struct sroce_qp *qp, u32 psn, bool rc)
{
	if (qp->resp.have_rwqe || resp_take_rwqe(qp))
		return RESP_OK;
	if (!rc)
		return RESP_UC_DROP;
	sroce_resp_rnr_nak(qp, psn);
	return RESP_RNR;
}

/*
 * The memory a remote access of @range names (a RETH, or the part of one a
 * packet carries), by proto/access.h's rules: a zero-length access checks
 * no key.  ROCE_ACCESS_OK with *@mr and *@mr_va (*@mr NULL when there is
 * nothing to copy), or the verdict.  Caller holds rcu_read_lock() until
 * the copy is done.  @pd: the PD the access must be in (sroce_resp_pd()).
 */
enum roce_access_verdict sroce_resp_resolve(struct sroce_qp *qp, struct ib_pd *pd,
					    const struct roce_reth *range,
					    u32 need, struct sroce_mr **mr,
					    u64 *mr_va)
{
	struct sroce_rkey_target t;
	bool found = sroce_rkey_lookup(qp, range->rkey, &t);
	enum roce_access_verdict v;

	*mr = NULL;
	v = roce_reth_check(found ? &t.desc : NULL, pd, range, need);
	if (v != ROCE_ACCESS_OK || !range->len)
		return v;
	v = sroce_rkey_translate(qp, &t, range->va, range->len, mr_va);
	if (v == ROCE_ACCESS_OK)
		*mr = t.mr;
	return v;
}

/*
 * Checks a READ or WRITE request's RETH; the NAK code or 0.  @resident:
 * the whole range must be in memory now (a READ, answered later from
 * softirq; an ODP MR's missing pages are asked for: RESP_PAGE_FAULT).
 */
static u8 resp_check_reth(struct sroce_qp *qp, const struct roce_reth *reth,
			  u32 need, bool resident)
{
	enum roce_access_verdict v;
	struct sroce_mr *mr;
	u64 mr_va;
	u8 res = 0;

	/* The QP's own remote rights come first, even for zero length. */
	if (!(qp->access & need))
		return ROCE_NAK_REM_ACCESS_ERR;
	rcu_read_lock();
	v = sroce_resp_resolve(qp, sroce_resp_pd(qp), reth, need, &mr, &mr_va);
	if (v == ROCE_ACCESS_OK && mr && resident)
		res = sroce_resp_copy_outcome(sroce_mr_resident(mr, mr_va, reth->len));
	rcu_read_unlock();
	return v == ROCE_ACCESS_OK ? res : roce_access_nak(v);
}

/* Copies a WRITE packet's payload to @range, checked again (the MR may be gone). */
static u8 resp_write_data(struct sroce_qp *qp, const struct roce_reth *range,
			  const struct sk_buff *skb, u32 skb_off)
{
	enum roce_access_verdict v;
	struct sroce_mr *mr;
	u64 mr_va;
	int err = 0;

	rcu_read_lock();
	v = sroce_resp_resolve(qp, sroce_resp_pd(qp), range, ROCE_ACCESS_REMOTE_WRITE,
			       &mr, &mr_va);
	if (mr)
		err = sroce_mr_copy_skb(mr, mr_va, skb, skb_off, range->len);
	rcu_read_unlock();
	return v == ROCE_ACCESS_OK ? sroce_resp_copy_outcome(err) : roce_access_nak(v);
}

/*
 * Protocol error or access violation: NAK (RC), and the QP fails.  No
 * receive WQE completes, so the responder learns of it by the affiliated
 * error IBTA names for it (11.6.3.2), as on ConnectX.
 */
static void resp_fatal(struct sroce_qp *qp, u32 psn, u8 nak, bool rc)
{
	if (rc)
		sroce_resp_nak(qp, psn, nak);
	sroce_qp_error(qp, nak == ROCE_NAK_INVALID_REQ ? IB_EVENT_QP_REQ_ERR :
			   nak == ROCE_NAK_REM_ACCESS_ERR ? IB_EVENT_QP_ACCESS_ERR :
							    IB_EVENT_QP_FATAL);
}

static u8 resp_send_data(struct sroce_qp *qp, struct sk_buff *skb,
			 const struct roce_pkt_info *pkt, bool rc)
{
	u32 flags = pkt->op->flags;
	u32 psn = pkt->bth.psn;
	int err;

	if (flags & ROCE_OPF_FIRST) {
		u8 res;

		/* A message in progress; but a WQE taken by this very
		 * request before a page fault (nothing copied) is its own.
		 */
		if (qp->resp.have_rwqe && qp->resp.recv_offset && rc)
			return ROCE_NAK_INVALID_REQ;
		res = resp_need_rwqe(qp, psn, rc);
		if (res)
			return res;
		qp->resp.recv_offset = 0;
	} else if (!qp->resp.have_rwqe) {
		return rc ? ROCE_NAK_INVALID_REQ : RESP_UC_DROP;
	}
	if (!(flags & ROCE_OPF_LAST) && pkt->payload_len != qp->mtu)
		return ROCE_NAK_INVALID_REQ;

	err = resp_copy_to_rwqe(qp, qp->resp.recv_offset, skb, pkt);
	if (err == -EAGAIN)
		return RESP_PAGE_FAULT;		/* the same packet again, later */
	if (err) {
		resp_recv_error(qp, err, psn, rc);
		return RESP_HANDLED;
	}
	qp->resp.recv_offset += pkt->payload_len;
	if (flags & ROCE_OPF_LAST) {
		struct ib_wc wc = {
			.opcode = IB_WC_RECV,
			.byte_len = qp->resp.recv_offset,
		};

		if (flags & ROCE_OPF_IMM) {
			wc.wc_flags |= IB_WC_WITH_IMM;
			wc.ex.imm_data = (__force __be32)pkt->imm_be;
		}
		if (flags & ROCE_OPF_INV) {
			if (sroce_key_invalidate(qp, sroce_resp_pd(qp), pkt->ieth_rkey,
						 true))
				wc.status = IB_WC_REM_INV_REQ_ERR;
			wc.wc_flags |= IB_WC_WITH_INVALIDATE;
			wc.ex.invalidate_rkey = pkt->ieth_rkey;
		}
		resp_complete(qp, &wc, pkt->bth.se);
		qp->resp.msn++;
	}
	return 0;
}

static u8 resp_write(struct sroce_qp *qp, struct sk_buff *skb,
		     const struct roce_pkt_info *pkt, bool rc)
{
	u32 flags = pkt->op->flags;
	u32 psn = pkt->bth.psn;
	struct roce_reth reth;
	u8 nak;

	if (flags & ROCE_OPF_FIRST) {
		if (pkt->reth.len > SROCE_MAX_MSG_SIZE)
			return ROCE_NAK_INVALID_REQ;	/* beyond max_msg_sz */
		nak = resp_check_reth(qp, &pkt->reth, ROCE_ACCESS_REMOTE_WRITE,
				      false);
		if (nak)
			return nak;
		qp->resp.write_va = pkt->reth.va;
		qp->resp.write_rkey = pkt->reth.rkey;
		qp->resp.write_resid = pkt->reth.len;
		qp->resp.write_len = pkt->reth.len;
	}
	if ((!(flags & ROCE_OPF_LAST) && pkt->payload_len != qp->mtu) ||
	    pkt->payload_len > qp->resp.write_resid ||
	    ((flags & ROCE_OPF_LAST) && pkt->payload_len != qp->resp.write_resid))
		return ROCE_NAK_INVALID_REQ;
	/* WRITE with immediate consumes a receive WQE: make sure of it first. */
	if (flags & ROCE_OPF_IMM) {
		nak = resp_need_rwqe(qp, psn, rc);
		if (nak)
			return nak;
	}
	reth = (struct roce_reth){ .va = qp->resp.write_va,
				   .rkey = qp->resp.write_rkey,
				   .len = pkt->payload_len };
	nak = resp_write_data(qp, &reth, skb, pkt->payload_off);
	if (nak)
		return nak;
	qp->resp.write_va += pkt->payload_len;
	qp->resp.write_resid -= pkt->payload_len;
	if (flags & ROCE_OPF_LAST) {
		if (flags & ROCE_OPF_IMM) {
			struct ib_wc wc = {
				.opcode = IB_WC_RECV_RDMA_WITH_IMM,
				.byte_len = qp->resp.write_len,
				.wc_flags = IB_WC_WITH_IMM,
				.ex.imm_data = (__force __be32)pkt->imm_be,
			};

			resp_complete(qp, &wc, pkt->bth.se);
		}
		qp->resp.msn++;
	}
	return 0;
}

/* @npsn: the PSNs the request takes, one per response packet. */
static u8 resp_read(struct sroce_qp *qp, const struct roce_pkt_info *pkt,
		    u32 *npsn)
{
	struct roce_rd_res *r;
	u8 nak;

	/* Beyond max_msg_sz, and at a small MTU its PSNs would cover half
	 * the PSN space, where duplicates and gaps stop being told apart.
	 */
	if (pkt->reth.len > SROCE_MAX_MSG_SIZE)
		return ROCE_NAK_INVALID_REQ;
	nak = resp_check_reth(qp, &pkt->reth, ROCE_ACCESS_REMOTE_READ, true);
	if (nak)
		return nak;
	if (!roce_rd_make_room(&qp->resp.rd_res, qp->max_dest_rd_atomic))
		return ROCE_NAK_INVALID_REQ;	/* peer broke its limit */
	*npsn = roce_sq_npsn(pkt->reth.len, qp->mtu, false);
	r = roce_rd_add(&qp->resp.rd_res);
	r->kind = ROCE_RD_READ;
	r->first_psn = pkt->bth.psn;
	r->last_psn = psn_add(pkt->bth.psn, *npsn - 1);
	r->next_psn = r->first_psn;
	r->va = pkt->reth.va;
	r->rkey = pkt->reth.rkey;
	r->length = pkt->reth.len;
	r->xrc_srqn = qp->resp.xrc_srq ? qp->resp.xrc_srq->srq_num : 0;
	qp->resp.msn++;
	if (*npsn == 1 && !qp->resp.reads_queued && sroce_resp_read_inline(qp, r))
		return 0;
	WRITE_ONCE(qp->resp.reads_queued, true);
	sroce_sched_queue(qp);
	return 0;
}

/* A request we have seen before (RC): answer it again without redoing it. */
static void resp_duplicate(struct sroce_qp *qp, const struct roce_pkt_info *pkt)
{
	u32 flags = pkt->op->flags;
	u32 psn = pkt->bth.psn;
	struct roce_rd_res *r;
	u8 kind;

	sroce_count(qp->sdev, SROCE_CNT_DUP_REQUESTS, 1);
	if (flags & ROCE_OPF_FLUSH) {
		/* Its writes were made visible before the first answer. */
		sroce_resp_empty_read_resp(qp, psn);
		return;
	}
	kind = (flags & ROCE_OPF_READ_REQ) ? ROCE_RD_READ :
	       (flags & ROCE_OPF_ATOMIC) ? ROCE_RD_ATOMIC :
	       (flags & ROCE_OPF_ATOMIC_WRITE) ? ROCE_RD_ATOMIC_WRITE : 0;
	if (!kind) {
		sroce_resp_ack(qp, psn_sub(qp->resp.seq.epsn, 1));
		return;
	}
	r = roce_rd_find(&qp->resp.rd_res, psn);
	/*
	 * Forgotten, or a request of another kind than the one accepted at
	 * that PSN: nothing safe to answer; the requester will retry or fail.
	 * Matched by PSN alone: a retry from rxe carries no address.
	 */
	if (!r || r->kind != kind)
		return;
	if (r->kind == ROCE_RD_ATOMIC) {
		sroce_resp_send(qp, ROCE_OP_RC_ATOMIC_ACK, psn,
				roce_aeth_ack_syndrome(ROCE_AETH_CREDITS_INVALID),
				&r->atomic_orig);
		return;
	}
	if (r->kind == ROCE_RD_ATOMIC_WRITE) {
		sroce_resp_empty_read_resp(qp, psn);	/* never stored twice */
		return;
	}
	roce_rd_restart_read(r, psn, qp->mtu);
	WRITE_ONCE(qp->resp.reads_queued, true);
	sroce_sched_queue(qp);
}

/*
 * XRC target: the request's XRCETH must name an XRC SRQ of the target's
 * domain, and every packet of a message the SRQ the message began with.
 * Anything else is an invalid request, as a malformed one is.
 */
static u8 resp_xrc_target(struct sroce_qp *qp, const struct roce_pkt_info *pkt)
{
	qp->resp.xrc_srq = sroce_xrc_srq_lookup(qp, pkt->xrc_srqn);
	if (!qp->resp.xrc_srq ||
	    (qp->resp.have_rwqe && qp->resp.xrc_srq->srq_num != qp->resp.xrc_srqn)) {
		qp->resp.xrc_srq = NULL;
		sroce_count(qp->sdev, SROCE_CNT_XRC_BAD_SRQ, 1);
		return ROCE_NAK_INVALID_REQ;
	}
	return 0;
}

/* UC: the message in progress is lost; drop until the next FIRST. */
static void resp_uc_drop(struct sroce_qp *qp, u32 psn)
{
	roce_resp_uc_lost(&qp->resp.seq, psn);
	sroce_count(qp->sdev, SROCE_CNT_RX_DROPPED, 1);
}

/* Whether the request at pkt's PSN is to be carried out; if not, it was
 * answered or dropped here by its place in the PSN sequence.
 */
static bool resp_admitted(struct sroce_qp *qp, const struct roce_pkt_info *pkt,
			  bool rc)
{
	u32 psn = pkt->bth.psn;

	switch (roce_resp_admit(&qp->resp.seq, rc, psn, pkt->op->flags)) {
	case ROCE_RESP_EXECUTE:
		return true;
	case ROCE_RESP_DUPLICATE:
		resp_duplicate(qp, pkt);
		break;
	case ROCE_RESP_NAK_PSN:
		sroce_resp_nak(qp, qp->resp.seq.epsn, ROCE_NAK_PSN_SEQ_ERR);
		break;
	case ROCE_RESP_DROP:
		sroce_count(qp->sdev, SROCE_CNT_RX_DROPPED, 1);
		break;
	case ROCE_RESP_INVALID:
		resp_fatal(qp, psn, ROCE_NAK_INVALID_REQ, rc);
		break;
	}
	return false;
}

/* Fault injection (fault.c): true if a NAK was made up for this request. */
static bool resp_injected_nak(struct sroce_qp *qp, const struct roce_pkt_info *pkt)
{
	switch (sroce_fault_resp_nak(qp, pkt->bth.opcode)) {
	case ROCE_FAULT_RNR_NAK:	/* as if no receive were posted */
		sroce_resp_rnr_nak(qp, pkt->bth.psn);
		return true;
	case ROCE_FAULT_ACCESS_NAK:	/* as if the R_Key were bad */
		resp_fatal(qp, pkt->bth.psn, ROCE_NAK_REM_ACCESS_ERR, true);
		return true;
	}
	return false;
}

/* Carries out an admitted request: RESP_OK, another RESP_* or a NAK code. */
static u8 resp_execute(struct sroce_qp *qp, struct sk_buff *skb,
		       const struct roce_pkt_info *pkt, bool rc, u32 *npsn)
{
	u32 flags = pkt->op->flags;

	if (flags & ROCE_OPF_SEND)
		return resp_send_data(qp, skb, pkt, rc);
	if (flags & ROCE_OPF_WRITE)
		return resp_write(qp, skb, pkt, rc);
	if (rc && (flags & ROCE_OPF_READ_REQ))
		return resp_read(qp, pkt, npsn);
	if (rc && (flags & ROCE_OPF_ATOMIC))
		return sroce_resp_atomic(qp, pkt);
	if (rc && (flags & ROCE_OPF_ATOMIC_WRITE))
		return sroce_resp_atomic_write(qp, skb, pkt);
	if (rc && (flags & ROCE_OPF_FLUSH))
		return sroce_resp_flush(qp, pkt);
	return ROCE_NAK_INVALID_REQ;
}

static void resp_rc_uc(struct sroce_qp *qp, struct sk_buff *skb,
		       const struct roce_pkt_info *pkt)
{
	bool rc = sroce_qp_reliable(qp);
	u32 flags = pkt->op->flags;
	u32 psn = pkt->bth.psn;
	u32 npsn = 1;
	u8 res;

	if (!resp_admitted(qp, pkt, rc))
		return;
	if (qp->xrcd) {
		res = resp_xrc_target(qp, pkt);
		if (res) {
			resp_fatal(qp, psn, res, rc);
			return;
		}
	}
	if (rc && sroce_fault_on(&qp->sdev->fault) && resp_injected_nak(qp, pkt))
		return;

	res = resp_execute(qp, skb, pkt, rc, &npsn);
	switch (res) {
	case RESP_OK:
		break;
	case RESP_PAGE_FAULT:
		if (rc)
			sroce_resp_rnr_nak(qp, psn);
		else
			resp_uc_drop(qp, psn);
		return;
	case RESP_RNR:
	case RESP_HANDLED:
		return;
	case RESP_UC_DROP:
		resp_uc_drop(qp, psn);
		return;
	default:
		if (!rc) {
			resp_uc_drop(qp, psn);
			return;
		}
		resp_fatal(qp, psn, res, rc);
		return;
	}
	roce_resp_done(&qp->resp.seq, flags, npsn);
	if (rc && pkt->bth.ackreq &&
	    !(flags & (ROCE_OPF_READ_REQ | ROCE_OPF_ATOMIC |
		       ROCE_OPF_ATOMIC_WRITE | ROCE_OPF_FLUSH)))
		sroce_resp_ack(qp, psn);
}

/*
 * The receive WQE a multi-packet SEND (an SRQ's too) took and had not yet
 * completed when the QP failed: it completes with a flush error like the
 * WQEs still in the ring, or its consumer would wait for it forever.
 */
void sroce_resp_flush_rwqe(struct sroce_qp *qp)
{
	spin_lock_bh(&qp->resp.lock);
	if (qp->resp.have_rwqe) {
		qp->resp.have_rwqe = false;
		if (!qp->xrcd) {
			sroce_flush_recv(qp, qp->rcq, qp->resp.rwqe.wr_id);
		} else {
			/* To the CQ of the XRC SRQ it came from, if that
			 * still exists (nobody waits for it otherwise).
			 */
			rcu_read_lock();
			qp->resp.xrc_srq = sroce_xrc_srq_lookup(qp, qp->resp.xrc_srqn);
			if (qp->resp.xrc_srq)
				sroce_flush_recv(qp, sroce_resp_cq(qp), qp->resp.rwqe.wr_id);
			qp->resp.xrc_srq = NULL;
			rcu_read_unlock();
		}
	}
	spin_unlock_bh(&qp->resp.lock);
}

void sroce_resp_recv(struct sroce_qp *qp, struct sk_buff *skb,
		     const struct roce_pkt_info *pkt)
{
	spin_lock_bh(&qp->resp.lock);
	/* Under resp.lock: once the flush took the lock after the QP failed
	 * (sroce_resp_flush_rwqe), no receive WQE can be taken any more.
	 */
	if (!sroce_resp_active(qp)) {
		spin_unlock_bh(&qp->resp.lock);
		sroce_count(qp->sdev, SROCE_CNT_RX_DROPPED, 1);
		return;
	}
	if (qp->ib.qp_type == IB_QPT_UD || qp->ib.qp_type == IB_QPT_GSI)
		resp_ud(qp, skb, pkt);
	else if (sroce_resp_must_wait(qp, pkt))
		sroce_resp_hold(qp, skb);
	else
		sroce_resp_take(qp, skb, pkt);
	spin_unlock_bh(&qp->resp.lock);
}

/*
 * Carries out RC, UC or XRC request @pkt, in its turn: as it arrives, or
 * once the READ responses before it have gone (resp_read.c).  Caller
 * holds resp.lock.
 */
void sroce_resp_take(struct sroce_qp *qp, struct sk_buff *skb,
		     const struct roce_pkt_info *pkt)
{
	rcu_read_lock();	/* as long as qp->resp.xrc_srq is set */
	resp_rc_uc(qp, skb, pkt);
	qp->resp.xrc_srq = NULL;
	rcu_read_unlock();
}

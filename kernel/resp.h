/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The responder's own interface between its parts: resp.c takes the
 * requests, resp_atomic.c carries out atomics, ATOMIC WRITE and FLUSH,
 * resp_answer.c sends ACKs and NAKs, resp_read.c sends READ responses
 * and holds the requests behind them.  All of it runs under the QP's
 * resp.lock.
 */
#ifndef SROCE_RESP_H
#define SROCE_RESP_H

#include "sroce.h"

/*
 * Where a request's receive side is: the QP's own PD, RQ or SRQ and
 * receive CQ, or at an XRC target those of the XRC SRQ the request's
 * XRCETH names (qp->resp.xrc_srq, set for the packet being handled).
 */
static inline struct ib_pd *sroce_resp_pd(const struct sroce_qp *qp)
{
	return qp->resp.xrc_srq ? qp->resp.xrc_srq->ib.pd : qp->ib.pd;
}

/* The receive WQE in progress as a scatter list, with the responder's cache. */
static inline struct sroce_sgl sroce_resp_sgl(struct sroce_qp *qp)
{
	return (struct sroce_sgl){
		.sdev = qp->sdev,
		.pd = sroce_resp_pd(qp),
		.sge = qp->resp.rwqe.sge,
		.num_sge = qp->resp.rwqe.num_sge,
		.cache = &qp->resp.mr_cache,
	};
}

static inline struct sroce_srq *sroce_resp_srq(const struct sroce_qp *qp)
{
	return qp->resp.xrc_srq ? qp->resp.xrc_srq : qp->srq;
}

static inline struct sroce_cq *sroce_resp_cq(const struct sroce_qp *qp)
{
	return qp->resp.xrc_srq ? to_scq(qp->resp.xrc_srq->ib.ext.cq) : qp->rcq;
}

/* Whether the responder takes requests and answers them: RTR and on, not ERR. */
static inline bool sroce_resp_active(const struct sroce_qp *qp)
{
	enum ib_qp_state state = READ_ONCE(qp->state);

	return state >= IB_QPS_RTR && state != IB_QPS_ERR;
}

/*
 * What a request handler returns: RESP_OK, a NAK code (ROCE_NAK_*, all
 * below 0x80) for the caller to send or act on, or one of the outcomes
 * that need nothing more from the caller but bookkeeping.
 */
enum sroce_resp_outcome {
	RESP_OK = 0,
	RESP_PAGE_FAULT = 0xfc,	/* an ODP page is being faulted in: RNR NAK
				 * (as ConnectX answers), or UC drop
				 */
	RESP_HANDLED = 0xfd,	/* a receive error, already completed */
	RESP_RNR = 0xfe,	/* RNR NAK sent; the request is not consumed */
	RESP_UC_DROP = 0xff,	/* UC: drop the rest of this message */
};

/* What a copy's error (mr.c) makes of a request: a NAK code or 0. */
static inline u8 sroce_resp_copy_outcome(int err)
{
	return !err ? 0 : err == -EAGAIN ? RESP_PAGE_FAULT : ROCE_NAK_REM_ACCESS_ERR;
}

/* resp_answer.c */
void sroce_resp_send_held_ack(struct sroce_qp *qp);
void sroce_resp_send(struct sroce_qp *qp, u8 opcode, u32 psn, u8 syndrome,
		     const u64 *atomic_orig);
void sroce_resp_ack(struct sroce_qp *qp, u32 psn);
void sroce_resp_nak(struct sroce_qp *qp, u32 psn, u8 nak);
void sroce_resp_rnr_nak(struct sroce_qp *qp, u32 psn);

/* resp.c */
enum roce_access_verdict sroce_resp_resolve(struct sroce_qp *qp, struct ib_pd *pd,
					    const struct roce_reth *range,
					    u32 need, struct sroce_mr **mr,
					    u64 *mr_va);

void sroce_resp_take(struct sroce_qp *qp, struct sk_buff *skb,
		     const struct roce_pkt_info *pkt);

/* resp_atomic.c */
u8 sroce_resp_atomic(struct sroce_qp *qp, const struct roce_pkt_info *pkt);
u8 sroce_resp_atomic_write(struct sroce_qp *qp, struct sk_buff *skb,
			   const struct roce_pkt_info *pkt);
u8 sroce_resp_flush(struct sroce_qp *qp, const struct roce_pkt_info *pkt);
void sroce_resp_empty_read_resp(struct sroce_qp *qp, u32 psn);

/* resp_read.c */
void sroce_resp_send_read_packet(struct sroce_qp *qp, struct roce_rd_res *r);
bool sroce_resp_read_inline(struct sroce_qp *qp, struct roce_rd_res *r);
bool sroce_resp_must_wait(const struct sroce_qp *qp,
			  const struct roce_pkt_info *pkt);
void sroce_resp_hold(struct sroce_qp *qp, struct sk_buff *skb);

#endif

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The responder's answers: ACKs (one per receive batch, held back by
 * ackq.c), NAKs and atomic ACKs, in order after any ACK held back.
 */
#include "resp.h"

static void resp_build_send(struct sroce_qp *qp, u8 opcode, u32 psn,
			    u8 syndrome, u32 msn, const u64 *atomic_orig)
{
	struct roce_pkt_info pi = {};
	struct sk_buff *skb;
	u32 len;

	/* Callers name RC's answers; an XRC target sends XRC's. */
	opcode = roce_opcode_on(opcode, sroce_qp_op_base(qp));
	len = roce_opcode_get(opcode)->hdr_len;
	pi.bth.opcode = opcode;
	pi.bth.pkey = ROCE_DEFAULT_PKEY;
	pi.bth.dest_qpn = qp->dest_qpn;
	pi.bth.psn = psn;
	pi.aeth.syndrome = syndrome;
	pi.aeth.msn = msn & ROCE_QPN_MASK;
	if (atomic_orig)
		pi.atmack.orig = *atomic_orig;
	skb = sroce_skb_alloc(qp->sdev, len);
	if (!skb)
		return;		/* the requester will time out and retry */
	roce_build_headers(&pi, skb->data, len);
	sroce_skb_send(qp->sdev, &qp->av, &qp->dst_cache, qp->sport, skb);
}

/* The ACK ackq.c holds back, if any, out now. */
void sroce_resp_send_held_ack(struct sroce_qp *qp)
{
	if (!qp->resp.ack_pending)
		return;
	qp->resp.ack_pending = false;
	resp_build_send(qp, ROCE_OP_RC_ACK, qp->resp.ack_psn,
			roce_aeth_ack_syndrome(ROCE_AETH_CREDITS_INVALID),
			qp->resp.ack_msn, NULL);
}

/* Any answer but a plain ACK: after the ACK held back, in order. */
void sroce_resp_send(struct sroce_qp *qp, u8 opcode, u32 psn, u8 syndrome,
		     const u64 *atomic_orig)
{
	sroce_resp_send_held_ack(qp);
	resp_build_send(qp, opcode, psn, syndrome, qp->resp.msn, atomic_orig);
}

/*
 * Acknowledges up to @psn when this CPU's receive batch ends (ackq.c):
 * one ACK for a burst of messages.
 */
void sroce_resp_ack(struct sroce_qp *qp, u32 psn)
{
	qp->resp.ack_psn = psn;
	qp->resp.ack_msn = qp->resp.msn;
	qp->resp.ack_pending = true;
	if (!sroce_ackq_add(qp))
		sroce_resp_send_held_ack(qp);
}

/*
 * ackq.c: the receive batch that held @qp's ACK back has ended.  The ACK
 * leaves even if the QP has moved to ERR or is being destroyed since: it
 * acknowledges messages already completed, which the consumer may have
 * seen and acted on (ibv_rc_pingpong destroys its QP at its last receive
 * completion).  A HCA's ACK has left by then; dropping ours left the
 * sender retrying into a QP that was gone.
 */
void sroce_resp_ack_flush(struct sroce_qp *qp)
{
	spin_lock_bh(&qp->resp.lock);
	qp->resp.ack_queued = false;
	sroce_resp_send_held_ack(qp);
	spin_unlock_bh(&qp->resp.lock);
}

void sroce_resp_nak(struct sroce_qp *qp, u32 psn, u8 nak)
{
	if (nak == ROCE_NAK_PSN_SEQ_ERR)
		sroce_count(qp->sdev, SROCE_CNT_SEQ_ERR_SENT, 1);
	if (nak == ROCE_NAK_REM_ACCESS_ERR)
		sroce_count(qp->sdev, SROCE_CNT_REMOTE_ACCESS_ERR, 1);
	sroce_resp_send(qp, ROCE_OP_RC_ACK, psn, nak, NULL);
}

/* RC only: the request at @psn (ePSN) waits for a receive WQE. */
void sroce_resp_rnr_nak(struct sroce_qp *qp, u32 psn)
{
	roce_resp_rnr(&qp->resp.seq);
	sroce_count(qp->sdev, SROCE_CNT_RNR_NAK_SENT, 1);
	sroce_resp_send(qp, ROCE_OP_RC_ACK, psn,
			roce_aeth_rnr_syndrome(qp->min_rnr_timer), NULL);
}

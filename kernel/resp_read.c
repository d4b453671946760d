// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * READ responses: sent from the QP's send work, paced with its requests,
 * or (a lone one-packet READ) right in the softirq that received it; and
 * the requests that arrive behind an unsent one, held until it has gone.
 */
#include "proto/psn.h"
#include "resp.h"

/*
 * A one-packet READ with nothing queued before it is answered here, in
 * the softirq that received it, as rxe does: handing it to the send work
 * cost a worker wake-up per READ (read latency was 2-3x rxe's).  Longer
 * READs stay with the work, which paces them and yields to other QPs.
 * The send right keeps the engine's backoff and pacing state ours while
 * we send.  Caller holds resp.lock.  True if the response went out.
 */
bool sroce_resp_read_inline(struct sroce_qp *qp, struct roce_rd_res *r)
{
	bool sent;

	if (!sroce_sched_try_right(qp))
		return false;
	if (!qp->sched.tx_backoff && sroce_cc_may_send(qp))
		sroce_resp_send_read_packet(qp, r);
	sent = r->done;
	sroce_sched_release_right(qp);
	return sent;
}

/*
 * The MR the next @len bytes of READ @r come from, and their address in
 * it (*@mr_va), or NULL: the range is no longer readable.  At an XRC
 * target the READ is in the PD of the SRQ it named, if that SRQ still
 * exists; in none (so no MR) if not.  Caller holds rcu_read_lock().
 */
static struct sroce_mr *read_resp_source(struct sroce_qp *qp, struct roce_rd_res *r,
					 u32 len, u64 *mr_va)
{
	struct sroce_srq *xsrq = qp->xrcd ? sroce_xrc_srq_lookup(qp, r->xrc_srqn) : NULL;
	struct ib_pd *pd = !qp->xrcd ? qp->ib.pd : xsrq ? xsrq->ib.pd : NULL;
	struct roce_reth reth = { .va = r->va + r->sent, .rkey = r->rkey, .len = len };
	struct sroce_mr *mr;

	sroce_resp_resolve(qp, pd, &reth, ROCE_ACCESS_REMOTE_READ, &mr, mr_va);
	return mr;
}

/* Sends the next packet of READ @r.  Caller holds resp.lock. */
void sroce_resp_send_read_packet(struct sroce_qp *qp, struct roce_rd_res *r)
{
	u32 len = min_t(u32, qp->mtu, r->length - r->sent);
	bool first = r->next_psn == r->first_psn;
	bool last = r->sent + len >= r->length;
	struct roce_pkt_info pi = {};
	struct sroce_mr *mr;
	struct sk_buff *skb;
	u64 mr_va = 0;
	u32 hdr_len, pad = roce_pad_len(len);
	int err;
	u8 op;

	sroce_resp_send_held_ack(qp);
	op = first && last ? ROCE_OP_RC_READ_RESP_ONLY :
	     first	   ? ROCE_OP_RC_READ_RESP_FIRST :
	     last	   ? ROCE_OP_RC_READ_RESP_LAST :
			     ROCE_OP_RC_READ_RESP_MIDDLE;
	op = roce_opcode_on(op, sroce_qp_op_base(qp));
	hdr_len = roce_opcode_get(op)->hdr_len;
	pi.bth.opcode = op;
	pi.bth.pkey = ROCE_DEFAULT_PKEY;
	pi.bth.dest_qpn = qp->dest_qpn;
	pi.bth.psn = r->next_psn;
	pi.bth.padcnt = pad;
	pi.aeth.syndrome = roce_aeth_ack_syndrome(ROCE_AETH_CREDITS_INVALID);
	pi.aeth.msn = qp->resp.msn & ROCE_QPN_MASK;

	rcu_read_lock();
	mr = NULL;
	if (len) {
		mr = read_resp_source(qp, r, len, &mr_va);
		if (!mr) {
			/* Deregistered under the request: refuse the rest. */
			rcu_read_unlock();
			r->done = true;
			sroce_resp_nak(qp, r->next_psn, ROCE_NAK_REM_ACCESS_ERR);
			return;
		}
	}
	/* Copied, never referenced: the requests held behind this READ run
	 * as soon as its last packet is built and may overwrite the bytes.
	 */
	skb = sroce_skb_payload(qp->sdev, hdr_len, &(struct sroce_payload){
			.mr = mr, .mr_va = mr_va, .len = len,
		}, &err);
	rcu_read_unlock();
	if (!skb && err == -EAGAIN) {
		sroce_odp_wait(qp);	/* an ODP page on its way: soon again */
		return;
	}
	if (!skb && err != -ENOBUFS) {
		/* An ODP page that cannot be had: refuse the rest. */
		r->done = true;
		sroce_resp_nak(qp, r->next_psn, ROCE_NAK_REM_ACCESS_ERR);
		return;
	}
	if (!skb)
		return;		/* no memory: the next run tries again */
	roce_build_headers(&pi, skb->data, hdr_len);
	if (sroce_skb_send(qp->sdev, &qp->av, &qp->dst_cache, qp->sport,
			   skb) == -EBUSY) {
		/* Not sent, so not lost: the same response again later. */
		sroce_tx_refused(qp);
		return;
	}
	sroce_tx_resumed(qp);
	sroce_cc_sent(qp, &qp->av, hdr_len + len + pad + ROCE_ICRC_LEN);
	r->sent += len;
	r->next_psn = psn_add(r->next_psn, 1);
	if (last)
		r->done = true;
}

/*
 * Requests behind a READ.  A READ's data is taken as its response packets
 * are built, which for all but a lone one-packet READ happens in the send
 * work, after the requests that follow the READ have arrived.  The IBA
 * lets a responder carry those out first (a requester that needs the
 * order fences), but rxe and ConnectX read a READ's data before they
 * execute anything behind it, and software relies on that: Open MPI
 * 4.1's osc/ucx get_accumulate READs a value and WRITEs the new one over
 * it unfenced (docs/peers.md).  So a request that arrives while a READ
 * response is unsent waits here, in order, unless it is a READ itself,
 * and once one waits everything behind it waits too.  The send work
 * carries them out as soon as the READs before them have gone, with
 * their data copied (zcopy.c says why READ responses copy).  Held
 * requests are not yet acknowledged, so their ACKs, and any NAK they
 * earn, follow the READ data as the PSN order says they must.
 *
 * A requester may have far more in flight than it is worth holding: past
 * SROCE_RESP_HELD_MAX_BYTES a request is dropped as on a lossy link (the
 * next one in order draws a PSN sequence NAK, or the requester's timer
 * resends it).
 */
#define SROCE_RESP_HELD_MAX_BYTES	(1U << 20)

/* Whether request @pkt waits behind a READ response.  Caller holds resp.lock. */
bool sroce_resp_must_wait(const struct sroce_qp *qp,
			  const struct roce_pkt_info *pkt)
{
	return !skb_queue_empty(&qp->resp.held) ||
	       (qp->resp.reads_queued && !(pkt->op->flags & ROCE_OPF_READ_REQ));
}

/* Keeps request @skb (the caller still consumes its own reference). */
void sroce_resp_hold(struct sroce_qp *qp, struct sk_buff *skb)
{
	if (qp->resp.held_bytes + skb->truesize > SROCE_RESP_HELD_MAX_BYTES) {
		sroce_count(qp->sdev, SROCE_CNT_RX_DROPPED, 1);
		return;
	}
	qp->resp.held_bytes += skb->truesize;
	__skb_queue_tail(&qp->resp.held, skb_get(skb));
	sroce_count(qp->sdev, SROCE_CNT_RX_HELD_FOR_READ, 1);
}

/* Carries out the oldest held request; false if none is held. */
static bool resp_take_held(struct sroce_qp *qp)
{
	struct sk_buff *skb = __skb_dequeue(&qp->resp.held);
	struct roce_pkt_info pkt;

	if (!skb)
		return false;
	qp->resp.held_bytes -= skb->truesize;
	/* Parsed when it arrived, from the same unchanged bytes. */
	if (sroce_resp_active(qp) && !roce_parse(skb->data, skb->len, &pkt))
		sroce_resp_take(qp, skb, &pkt);
	else
		sroce_count(qp->sdev, SROCE_CNT_RX_DROPPED, 1);
	consume_skb(skb);
	return true;
}

/*
 * RESET and destroy: what the QP held is no longer to be carried out.
 * Caller holds resp.lock.
 */
void sroce_resp_drop_held(struct sroce_qp *qp)
{
	__skb_queue_purge(&qp->resp.held);
	qp->resp.held_bytes = 0;
}

/* Sends queued READ response packets while *@budget, pacing and backoff allow. */
static bool resp_send_read_packets(struct sroce_qp *qp, int *budget)
{
	struct roce_rd_res *r;
	bool did = false;

	while (*budget > 0 && !qp->sched.tx_backoff &&
	       (r = roce_rd_next_read(&qp->resp.rd_res)) && sroce_cc_may_send(qp)) {
		sroce_resp_send_read_packet(qp, r);
		(*budget)--;
		did = true;
	}
	return did;
}

bool sroce_resp_send_reads(struct sroce_qp *qp, int *budget)
{
	bool did = false;

	/* Every engine run passes here: without a READ queued or a request
	 * held it must not take resp.lock, which the receive softirq on
	 * another CPU holds while it handles this QP's requests (a
	 * ping-pong spun on it).  Both hints are set under resp.lock before
	 * the work is scheduled.
	 */
	if (!sroce_qp_reliable(qp) ||
	    (!READ_ONCE(qp->resp.reads_queued) && !skb_queue_len_lockless(&qp->resp.held)))
		return false;
	spin_lock_bh(&qp->resp.lock);
	for (;;) {
		did |= resp_send_read_packets(qp, budget);
		if (roce_rd_next_read(&qp->resp.rd_res))
			break;		/* paced, backed off or out of budget */
		WRITE_ONCE(qp->resp.reads_queued, false);
		/* A held READ queues itself again; the rest run now. */
		if (*budget <= 0 || !resp_take_held(qp))
			break;
		(*budget)--;
		did = true;
	}
	/* Responses still to send: what comes back is received elsewhere. */
	sroce_spin_unlock_bh_sent(&qp->resp.lock, READ_ONCE(qp->resp.reads_queued) ||
				  !skb_queue_empty(&qp->resp.held));
	return did;
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The responder's requests on 8 bytes and on visibility: atomics
 * (compare-and-swap, fetch-and-add), ATOMIC WRITE and FLUSH.  Each is
 * answered at once, and the first two are remembered in the READ and
 * atomic resources, so that a duplicate gets the same answer without
 * being done twice (resp.c's resp_duplicate).
 */
#include "proto/access.h"
#include "resp.h"

/*
 * Applies @a to the 8 bytes an atomic or ATOMIC WRITE at @va works on,
 * once proto's check of the request (@v, against @t) passed: 0, or the
 * NAK.  Caller holds rcu_read_lock().
 */
static u8 resp_atomic_on_target(struct sroce_qp *qp, struct sroce_rkey_target *t,
				enum roce_access_verdict v, u64 va,
				struct sroce_atomic *a)
{
	u64 mr_va;

	if (v == ROCE_ACCESS_OK)
		v = sroce_rkey_translate(qp, t, va, ROCE_ATOMIC_LEN, &mr_va);
	if (v != ROCE_ACCESS_OK)
		return roce_access_nak(v);
	/*
	 * The peer's address was aligned, but a zero-based window may move
	 * it off alignment in our memory: our layout, not its request.
	 */
	if (!roce_atomic_aligned(mr_va))
		return ROCE_NAK_REM_ACCESS_ERR;
	return sroce_resp_copy_outcome(sroce_mr_atomic(t->mr, mr_va, a));
}

/* Remembers an atomic or ATOMIC WRITE at @psn, for its duplicates. */
static struct roce_rd_res *resp_add_atomic(struct sroce_qp *qp, u8 kind, u32 psn)
{
	struct roce_rd_res *r = roce_rd_add(&qp->resp.rd_res);

	r->kind = kind;
	r->first_psn = psn;
	r->last_psn = psn;
	qp->resp.msn++;
	return r;
}

u8 sroce_resp_atomic(struct sroce_qp *qp, const struct roce_pkt_info *pkt)
{
	const struct roce_atmeth *a = &pkt->atmeth;
	struct sroce_atomic op = {
		.op = roce_opcode_on(pkt->bth.opcode, ROCE_OP_RC_BASE) ==
		      ROCE_OP_RC_CMP_SWAP ? SROCE_ATOMIC_CMP_SWAP : SROCE_ATOMIC_FETCH_ADD,
		.compare = a->compare,
		.value = a->swap_add,
	};
	struct sroce_rkey_target t;
	bool found;
	u8 nak;

	if (!(qp->access & IB_ACCESS_REMOTE_ATOMIC))
		return ROCE_NAK_REM_ACCESS_ERR;
	if (!roce_rd_make_room(&qp->resp.rd_res, qp->max_dest_rd_atomic))
		return ROCE_NAK_INVALID_REQ;	/* peer broke its limit */

	rcu_read_lock();
	found = sroce_rkey_lookup(qp, a->rkey, &t);
	nak = resp_atomic_on_target(qp, &t,
				    roce_atomic_check(found ? &t.desc : NULL, sroce_resp_pd(qp), a),
				    a->va, &op);
	rcu_read_unlock();
	if (nak)
		return nak;

	resp_add_atomic(qp, ROCE_RD_ATOMIC, pkt->bth.psn)->atomic_orig = op.orig;
	sroce_resp_send(qp, ROCE_OP_RC_ATOMIC_ACK, pkt->bth.psn,
			roce_aeth_ack_syndrome(ROCE_AETH_CREDITS_INVALID), &op.orig);
	return 0;
}

/*
 * ATOMIC WRITE's and FLUSH's answer, as rxe sends it: an empty READ
 * RESPONSE ONLY.
 */
void sroce_resp_empty_read_resp(struct sroce_qp *qp, u32 psn)
{
	sroce_resp_send(qp, ROCE_OP_RC_READ_RESP_ONLY, psn,
			roce_aeth_ack_syndrome(ROCE_AETH_CREDITS_INVALID), NULL);
}

/*
 * RDMA ATOMIC WRITE (IBTA 1.5 A19): the 8 payload bytes stored at once,
 * byte for byte, at an aligned address the peer may write, after every
 * earlier request of this QP and never torn against an atomic.
 */
u8 sroce_resp_atomic_write(struct sroce_qp *qp, struct sk_buff *skb,
			   const struct roce_pkt_info *pkt)
{
	struct sroce_atomic op = { .op = SROCE_ATOMIC_WRITE };
	struct sroce_rkey_target t;
	bool found;
	u8 nak;

	if (!(qp->access & IB_ACCESS_REMOTE_WRITE))
		return ROCE_NAK_REM_ACCESS_ERR;
	if (pkt->payload_len != ROCE_ATOMIC_LEN || pkt->bth.padcnt)
		return ROCE_NAK_INVALID_REQ;
	if (!roce_rd_make_room(&qp->resp.rd_res, qp->max_dest_rd_atomic))
		return ROCE_NAK_INVALID_REQ;	/* peer broke its limit */
	/* The payload's bytes as they are: ATOMIC WRITE stores them as such. */
	if (skb_copy_bits(skb, pkt->payload_off, &op.value, sizeof(op.value)))
		return ROCE_NAK_INVALID_REQ;	/* parse said 8 bytes: cannot happen */

	rcu_read_lock();
	found = sroce_rkey_lookup(qp, pkt->reth.rkey, &t);
	nak = resp_atomic_on_target(qp, &t,
				    roce_atomic_write_check(found ? &t.desc : NULL,
							    sroce_resp_pd(qp), &pkt->reth),
				    pkt->reth.va, &op);
	rcu_read_unlock();
	if (nak)
		return nak;

	resp_add_atomic(qp, ROCE_RD_ATOMIC_WRITE, pkt->bth.psn);
	sroce_resp_empty_read_resp(qp, pkt->bth.psn);
	return 0;
}

/*
 * RDMA FLUSH (IBTA 1.5 A19): once this is answered, every write this QP
 * executed before it is visible to every CPU and device (global
 * visibility), to the range or to the whole MR the FETH names.  Writes
 * are executed in order by this responder with CPU stores, so a full
 * barrier before the answer is that, whatever the range.  Persistence is
 * never granted: no MR here is persistent memory (mr.c), so such a FLUSH
 * finds no MR with the right.  Keeps no responder resource: a duplicate
 * is simply answered again (resp_duplicate).
 */
u8 sroce_resp_flush(struct sroce_qp *qp, const struct roce_pkt_info *pkt)
{
	u32 need = roce_flush_rights(&pkt->feth);
	enum roce_access_verdict v;
	struct sroce_rkey_target t;
	u64 va, len, mr_va;
	bool found;

	if (!need)
		return ROCE_NAK_INVALID_REQ;
	if ((qp->access & need) != need)
		return ROCE_NAK_REM_ACCESS_ERR;

	rcu_read_lock();
	found = sroce_rkey_lookup(qp, pkt->reth.rkey, &t);
	v = roce_flush_check(found ? &t.desc : NULL, sroce_resp_pd(qp), &pkt->feth,
			     &pkt->reth);
	if (v == ROCE_ACCESS_OK) {
		bool whole = pkt->feth.selectivity == ROCE_FLUSH_MR;

		va = whole ? t.desc.iova : pkt->reth.va;
		len = whole ? 0 : pkt->reth.len;
		v = sroce_rkey_translate(qp, &t, va, len, &mr_va);
	}
	rcu_read_unlock();
	if (v != ROCE_ACCESS_OK)
		return roce_access_nak(v);

	smp_mb();	/* the earlier writes, before the answer says so */
	qp->resp.msn++;
	sroce_resp_empty_read_resp(qp, pkt->bth.psn);
	return 0;
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Queue pairs: creation, the IBTA state machine with the attribute checks
 * real devices make, and teardown.  The data path lives in req.c (send),
 * resp.c (requests in) and comp.c (responses in).
 */
#include <linux/log2.h>
#include <linux/vmalloc.h>
#include <rdma/ib_addr.h>
#include <rdma/ib_cache.h>
#include <rdma/uverbs_ioctl.h>

#include "proto/psn.h"
#include "proto/window.h"
#include "resp.h"
#include "sroce.h"

/* The QP behind @h with a reference, or NULL if it is being destroyed.
 * Caller is in an RCU read-side section that found @h.
 */
struct sroce_qp *sroce_qp_get_handle(struct sroce_qp_handle *h)
{
	return refcount_inc_not_zero(&h->ref) ? h->qp : NULL;
}

/* The QP whose handle @xa holds at @index, with a reference, or NULL. */
struct sroce_qp *sroce_qp_lookup(struct xarray *xa, unsigned long index)
{
	struct sroce_qp_handle *h;
	struct sroce_qp *qp = NULL;

	rcu_read_lock();
	h = xa_load(xa, index);
	if (h)
		qp = sroce_qp_get_handle(h);
	rcu_read_unlock();
	return qp;
}

struct sroce_qp *sroce_qp_get(struct sroce_dev *sdev, u32 qpn)
{
	return sroce_qp_lookup(&sdev->qps, qpn);
}

void sroce_qp_put(struct sroce_qp *qp)
{
	if (refcount_dec_and_test(&qp->handle->ref))
		complete(&qp->freed);
}

void sroce_qp_event(struct sroce_qp *qp, enum ib_event_type type)
{
	struct ib_event ev = {
		.device = qp->ib.device,
		.element.qp = &qp->ib,
		.event = type,
	};

	if (qp->ib.event_handler)
		qp->ib.event_handler(&ev, qp->ib.qp_context);
}

/*
 * Moves a QP to ERR unless it is there already or in RESET (destroy's
 * marker; a consumer cannot ask for RESET to ERR: ib_modify_qp_is_ok
 * refuses it, as for every device).
 */
static bool sroce_qp_set_error(struct sroce_qp *qp)
{
	unsigned long flags;
	bool was_ok;

	spin_lock_irqsave(&qp->state_lock, flags);
	was_ok = qp->state != IB_QPS_ERR && qp->state != IB_QPS_RESET;
	if (was_ok) {
		qp->state = IB_QPS_ERR;
		qp->last_wqe_due = !!qp->srq;
	}
	spin_unlock_irqrestore(&qp->state_lock, flags);
	if (!was_ok)
		return false;
	sroce_sched_stop_retry_timers(qp);
	return true;
}

/*
 * The Last WQE Reached event of a QP that receives through an SRQ, once
 * per entry into ERR, called by the flush after it completed the receive
 * WQE the QP held (sroce_resp_flush_rwqe()): from then on the QP takes no
 * WQE from the SRQ, so its consumer may reap the CQ and destroy it (IBTA
 * 10.3.1, 11.6.3.1).  ib_drain_qp() waits up to 10 s for it since 6.10,
 * and user space (UCX's rc_verbs) waits for it before destroying a QP.
 */
void sroce_qp_last_wqe(struct sroce_qp *qp)
{
	unsigned long flags;
	bool due;

	spin_lock_irqsave(&qp->state_lock, flags);
	due = qp->last_wqe_due;
	qp->last_wqe_due = false;
	spin_unlock_irqrestore(&qp->state_lock, flags);
	if (due)
		sroce_qp_event(qp, IB_EVENT_QP_LAST_WQE_REACHED);
}

/*
 * The QP failed; any context.  The send work flushes both queues once it
 * sees the error state, so completions keep their order with the ones
 * already queued.  @event is the affiliated asynchronous error to raise,
 * or SROCE_QP_NO_EVENT when a completion with an error status already
 * tells the consumer (IBTA 11.6.3; mlx5 and rxe raise nothing then).
 */
void sroce_qp_error(struct sroce_qp *qp, int event)
{
	if (!sroce_qp_set_error(qp))
		return;
	if (event != SROCE_QP_NO_EVENT)
		sroce_qp_event(qp, event);
	sroce_sched_queue(qp);
}

/* ---- creation ------------------------------------------------------------- */

static int sroce_check_caps(struct sroce_qp *qp, struct ib_qp_init_attr *init)
{
	struct ib_qp_cap *cap = &init->cap;

	/* A target QP neither posts nor receives: its queues are the SRQs'. */
	if (init->qp_type == IB_QPT_XRC_TGT) {
		memset(cap, 0, sizeof(*cap));
		return 0;
	}
	if (cap->max_send_wr > SROCE_MAX_QP_WR ||
	    cap->max_send_sge > SROCE_MAX_SGE ||
	    cap->max_inline_data > SROCE_MAX_INLINE)
		return -EINVAL;
	if (!init->srq && init->qp_type != IB_QPT_XRC_INI &&
	    (cap->max_recv_wr > SROCE_MAX_QP_WR ||
			   cap->max_recv_sge > SROCE_MAX_SGE))
		return -EINVAL;
	return 0;
}

static int sroce_sq_init(struct sroce_qp *qp, struct ib_qp_init_attr *init,
			 struct ib_udata *udata, struct sroce_create_qp_resp *resp)
{
	struct ib_qp_cap *cap = &init->cap;
	u32 tail_bytes, slots;
	int err;

	qp->max_send_sge = max_t(u32, cap->max_send_sge, 1);
	qp->max_inline = cap->max_inline_data;
	tail_bytes = max_t(u32, qp->max_send_sge * sizeof(struct sroce_sge),
			   qp->max_inline);
	slots = roundup_pow_of_two(max_t(u32, cap->max_send_wr, 1));

	if (udata) {
		struct sroce_ucontext *uctx = rdma_udata_to_drv_context(udata,
				struct sroce_ucontext, ib);
		u32 slot = roundup_pow_of_two(sizeof(struct sroce_send_wqe) +
					      tail_bytes);

		err = sroce_ring_init(&qp->sq, slots, slot);
		if (err)
			return err;
		err = sroce_ring_export(&qp->sq, &uctx->ib, &resp->sq);
		if (err)
			goto err_ring;
		qp->sq_marks = &uctx->sq_marks;
		qp->sq_mark = sroce_sq_mark_get(qp->sq_marks);
		resp->sq_mark = qp->sq_mark;
		/* Inline data may fill the whole slot tail. */
		qp->max_inline = min_t(u32, slot - sizeof(struct sroce_send_wqe),
				       SROCE_MAX_INLINE);
		tail_bytes = max(tail_bytes, qp->max_inline);
	}
	qp->sq_slots = slots;
	qp->sq_mask = slots - 1;
	qp->shadow_size = ALIGN(sizeof(struct sroce_swqe) + tail_bytes, 8);
	qp->shadow = kvcalloc(slots, qp->shadow_size, GFP_KERNEL);
	if (!qp->shadow) {
		err = -ENOMEM;
		goto err_ring;
	}
	qp->sq_max_wr = sroce_wq_max_wr(max_t(u32, cap->max_send_wr, 1), slots);
	cap->max_send_wr = qp->sq_max_wr;
	cap->max_send_sge = qp->max_send_sge;
	cap->max_inline_data = qp->max_inline;
	return 0;

err_ring:
	if (udata) {
		sroce_sq_mark_put(qp->sq_marks, qp->sq_mark);
		sroce_ring_free(&qp->sq);
	}
	return err;
}

static u32 sroce_qpn_alloc(struct sroce_dev *sdev, struct sroce_qp *qp,
			   enum ib_qp_type type, int *err)
{
	u32 qpn;

	if (type == IB_QPT_GSI) {
		*err = xa_insert_bh(&sdev->qps, 1, NULL, GFP_KERNEL);
		return 1;
	}
	*err = xa_alloc_cyclic_bh(&sdev->qps, &qpn, NULL,
				  XA_LIMIT(SROCE_FIRST_QPN, ROCE_QPN_MASK - 1),
				  &sdev->next_qpn, GFP_KERNEL);
	if (*err > 0)
		*err = 0;	/* wrapped: fine */
	return qpn;
}

/* The QP types and creators we take: 0, or the errno for the rest. */
static int qp_type_supported(const struct ib_qp_init_attr *init,
			     const struct ib_udata *udata)
{
	switch (init->qp_type) {
	case IB_QPT_RC:
	case IB_QPT_UC:
	case IB_QPT_UD:
		break;
	case IB_QPT_GSI:
		if (udata)
			return -EOPNOTSUPP;
		break;
	case IB_QPT_XRC_INI:
		/* The remote SRQ travels in the user WQE; a kernel
		 * ib_send_wr has no field for it.
		 */
		if (!udata)
			return -EOPNOTSUPP;
		break;
	case IB_QPT_XRC_TGT:
		/* ib_core creates it without driver data (it belongs to
		 * the domain, not to a process): no rings of its own.
		 */
		if (!init->xrcd)
			return -EINVAL;
		break;
	default:
		return -EOPNOTSUPP;
	}
	return init->create_flags ? -EOPNOTSUPP : 0;
}

/* The fields of a new QP that need no allocation. */
static void qp_init_fields(struct sroce_qp *qp, struct sroce_dev *sdev,
			   const struct ib_qp_init_attr *init, bool user)
{
	refcount_set(&qp->handle->ref, 1);
	qp->handle->qp = qp;
	qp->sdev = sdev;
	qp->user = user;
	qp->sq_mark = SROCE_SQ_NO_MARK;
	init_completion(&qp->freed);
	mutex_init(&qp->modify_lock);
	spin_lock_init(&qp->state_lock);
	spin_lock_init(&qp->req.lock);
	spin_lock_init(&qp->resp.lock);
	__skb_queue_head_init(&qp->resp.held);
	INIT_LIST_HEAD(&qp->mcast);
	sroce_sched_init(qp);
	sroce_cc_qp_init(qp);
	qp->state = IB_QPS_RESET;
	/* XRC: a send QP has no receive CQ, a target QP no CQ at all. */
	qp->scq = init->send_cq ? to_scq(init->send_cq) : NULL;
	qp->rcq = init->recv_cq ? to_scq(init->recv_cq) : NULL;
	qp->xrcd = init->qp_type == IB_QPT_XRC_TGT ? init->xrcd : NULL;
	qp->sig_all = init->sq_sig_type == IB_SIGNAL_ALL_WR;
	qp->pmtu = IB_MTU_1024;
	qp->mtu = 1024;
}

/*
 * The receive side: the SRQ given, an empty kernel RQ for XRC, or an RQ
 * of the QP's own (in a ring shared with the process for a user QP).
 */
static int qp_init_rq(struct sroce_qp *qp, struct ib_qp_init_attr *init,
		      struct ib_udata *udata, struct sroce_create_qp_resp *resp)
{
	int err;

	if (init->srq) {
		qp->srq = to_ssrq(init->srq);
	} else if (sroce_qp_xrc(qp)) {
		/* Never posted to: an empty kernel RQ, as for depth 0,
		 * so the paths that flush and reset RQs need no case.
		 */
		err = sroce_rq_init(&qp->rq, 1, 1, NULL, NULL);
		if (err)
			return err;
		init->cap.max_recv_wr = 0;
		init->cap.max_recv_sge = 0;
	} else {
		err = sroce_rq_init(&qp->rq, max_t(u32, init->cap.max_recv_wr, 1),
				    max_t(u32, init->cap.max_recv_sge, 1), udata,
				    &resp->rq);
		if (err)
			return err;
		init->cap.max_recv_wr = qp->rq.max_wr;
		init->cap.max_recv_sge = qp->rq.max_sge;
	}
	return 0;
}

/* RC and XRC targets: READ and atomic resources, sized for the largest
 * max_dest_rd_atomic a modify may set.
 */
static int qp_init_rd_res(struct sroce_qp *qp, const struct ib_qp_init_attr *init)
{
	struct roce_rd_res *res;

	if (init->qp_type != IB_QPT_RC && init->qp_type != IB_QPT_XRC_TGT)
		return 0;
	res = kcalloc(SROCE_MAX_RD_ATOMIC, sizeof(*res), GFP_KERNEL);
	if (!res)
		return -ENOMEM;
	roce_rd_init(&qp->resp.rd_res, res, SROCE_MAX_RD_ATOMIC);
	return 0;
}

int sroce_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		    struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(ibqp->device);
	struct sroce_qp *qp = to_sqp(ibqp);
	struct sroce_create_qp_resp resp = {};
	int err;

	err = qp_type_supported(init, udata);
	if (err)
		return err;
	if (udata && udata->outlen < sizeof(resp))
		return -EINVAL;
	err = sroce_check_caps(qp, init);
	if (err)
		return err;
	if (atomic_inc_return(&sdev->num_qp) > SROCE_MAX_QP) {
		atomic_dec(&sdev->num_qp);
		return -ENOMEM;
	}
	qp->handle = kzalloc(sizeof(*qp->handle), GFP_KERNEL);
	if (!qp->handle) {
		atomic_dec(&sdev->num_qp);
		return -ENOMEM;
	}
	qp_init_fields(qp, sdev, init, !!udata);
	resp.sq_mark = SROCE_SQ_NO_MARK;

	err = sroce_sq_init(qp, init, udata, &resp);
	if (err)
		goto err_handle;
	err = qp_init_rq(qp, init, udata, &resp);
	if (err)
		goto err_sq;
	err = qp_init_rd_res(qp, init);
	if (err)
		goto err_rq;
	err = dst_cache_init(&qp->dst_cache, GFP_KERNEL);
	if (err)
		goto err_res;

	ibqp->qp_num = sroce_qpn_alloc(sdev, qp, init->qp_type, &err);
	if (err)
		goto err_res;
	if (udata) {
		resp.max_inline_data = qp->max_inline;
		err = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (err)
			goto err_qpn;
	}
	qp->sched.cpu = cpumask_local_spread(ibqp->qp_num, dev_to_node(&sdev->ib.dev));
	/* Visible to the receive path and the poller only now that it is
	 * whole.
	 */
	xa_store_bh(&sdev->qps, ibqp->qp_num, qp->handle, GFP_KERNEL);
	if (qp->sq_marks)
		sroce_sq_mark_publish(qp->sq_marks, qp->sq_mark, qp->handle);
	return 0;

err_qpn:
	xa_erase_bh(&sdev->qps, ibqp->qp_num);
err_res:
	dst_cache_destroy(&qp->dst_cache);
	kfree(qp->resp.rd_res.res);
err_rq:
	if (!qp->srq)
		sroce_rq_free(&qp->rq);
err_sq:
	if (qp->sq_marks)
		sroce_sq_mark_put(qp->sq_marks, qp->sq_mark);
	if (qp->user)
		sroce_ring_free(&qp->sq);
	kvfree(qp->shadow);
err_handle:
	kfree(qp->handle);	/* never published */
	atomic_dec(&sdev->num_qp);
	return err;
}

/* ---- the state machine ----------------------------------------------------- */

/* Back to the state of a fresh QP: no completions for what was queued. */
static void sroce_qp_reset(struct sroce_qp *qp)
{
	sroce_sched_quiesce(qp);

	spin_lock_bh(&qp->req.lock);
	if (qp->user) {
		/* Start over at whatever the process last produced. */
		qp->req.fetch = READ_ONCE(qp->sq.ctrl->producer);
		qp->req.retire = qp->req.fetch;
		/* Pairs with the provider's acquire load of the consumer
		 * (wq.cpp): the slots are free once it sees this index.
		 */
		smp_store_release(&qp->sq.ctrl->consumer, qp->req.retire);
	} else {
		qp->req.fetch = qp->req.sq_prod;
		qp->req.retire = qp->req.sq_prod;
	}
	qp->req.cur = qp->req.fetch;
	qp->req.offset = 0;
	qp->req.rd_atomic_outstanding = 0;
	qp->req.need_retransmit = 0;
	qp->req.gap_asked = false;
	qp->req.rnr_wait = false;
	qp->req.rnr_naked = false;
	qp->sched.tx_backoff = false;
	qp->sched.tx_paused_since = 0;
	spin_unlock_bh(&qp->req.lock);

	if (!qp->srq) {
		/* RESET empties the receive queue without completions. */
		spin_lock_irq(&qp->rq.lock);
		if (qp->rq.user) {
			qp->rq.cons = READ_ONCE(qp->rq.ring.ctrl->producer);
			/* Pairs with the provider's acquire load of the consumer. */
			smp_store_release(&qp->rq.ring.ctrl->consumer, qp->rq.cons);
			WRITE_ONCE(qp->rq.ring.ctrl->notify, 0);
		} else {
			qp->rq.cons = qp->rq.prod;
		}
		spin_unlock_irq(&qp->rq.lock);
	}

	spin_lock_bh(&qp->resp.lock);
	qp->resp.have_rwqe = false;
	/* To the peer the QP last knew: it acknowledges completed messages. */
	sroce_resp_send_held_ack(qp);
	roce_resp_seq_init(&qp->resp.seq, 0);
	qp->resp.write_resid = 0;
	roce_rd_reset(&qp->resp.rd_res);
	sroce_resp_drop_held(qp);
	qp->resp.msn = 0;
	spin_unlock_bh(&qp->resp.lock);
}

static int sroce_check_attrs(struct sroce_qp *qp, struct ib_qp_attr *attr,
			     int mask)
{
	if ((mask & IB_QP_PORT) && attr->port_num != SROCE_PORT)
		return -EINVAL;
	if ((mask & IB_QP_PKEY_INDEX) && attr->pkey_index != 0)
		return -EINVAL;
	/*
	 * Any path MTU up to max_mtu, as rxe and ConnectX take it, whatever
	 * the link's (UCX's IB_PATH_MTU sets one above it): net.c sends the
	 * packets that outgrow the link in IP fragments.
	 */
	if ((mask & IB_QP_PATH_MTU) &&
	    (attr->path_mtu < IB_MTU_256 || attr->path_mtu > IB_MTU_4096))
		return -EINVAL;
	if ((mask & IB_QP_MAX_QP_RD_ATOMIC) &&
	    attr->max_rd_atomic > SROCE_MAX_RD_ATOMIC)
		return -EINVAL;
	if ((mask & IB_QP_MAX_DEST_RD_ATOMIC) &&
	    attr->max_dest_rd_atomic > SROCE_MAX_RD_ATOMIC)
		return -EINVAL;
	if ((mask & IB_QP_TIMEOUT) && attr->timeout > 31)
		return -EINVAL;
	if ((mask & IB_QP_RETRY_CNT) && attr->retry_cnt > 7)
		return -EINVAL;
	if ((mask & IB_QP_RNR_RETRY) && attr->rnr_retry > 7)
		return -EINVAL;
	if ((mask & IB_QP_MIN_RNR_TIMER) && attr->min_rnr_timer > 31)
		return -EINVAL;
	/*
	 * ON_DEMAND names nothing a QP grants, but applications pass their
	 * MR's flags here (rdma-core's ODP tests do), and ConnectX and rxe
	 * ignore it: so do we.
	 */
	if ((mask & IB_QP_ACCESS_FLAGS) &&
	    (attr->qp_access_flags & ~(IB_ACCESS_LOCAL_WRITE |
				       IB_ACCESS_REMOTE_WRITE |
				       IB_ACCESS_REMOTE_READ |
				       IB_ACCESS_REMOTE_ATOMIC |
				       IB_ACCESS_ON_DEMAND |
				       SROCE_ACCESS_FLUSH)))
		return -EINVAL;
	if ((mask & IB_QP_DEST_QPN) && attr->dest_qp_num > ROCE_QPN_MASK)
		return -EINVAL;
	return 0;
}

static void sroce_apply_attrs(struct sroce_qp *qp, struct ib_qp_attr *attr,
			      int mask, const struct sroce_av *av)
{
	if (mask & IB_QP_ACCESS_FLAGS)
		qp->access = attr->qp_access_flags;
	if (mask & IB_QP_EN_SQD_ASYNC_NOTIFY)
		qp->sqd_notify = attr->en_sqd_async_notify;
	if (mask & IB_QP_QKEY)
		qp->qkey = attr->qkey;
	if (mask & IB_QP_AV) {
		qp->av = *av;
		dst_cache_reset(&qp->dst_cache);
	}
	if (mask & IB_QP_PATH_MTU) {
		qp->pmtu = attr->path_mtu;
		qp->mtu = ib_mtu_enum_to_int(attr->path_mtu);
	}
	if (mask & IB_QP_TIMEOUT)
		qp->timeout = attr->timeout;
	if (mask & IB_QP_RETRY_CNT)
		qp->retry_cnt = attr->retry_cnt;
	if (mask & IB_QP_RNR_RETRY)
		qp->rnr_retry = attr->rnr_retry;
	if (mask & IB_QP_RQ_PSN)
		qp->rq_psn = attr->rq_psn & ROCE_PSN_MASK;
	if (mask & IB_QP_MIN_RNR_TIMER)
		qp->min_rnr_timer = attr->min_rnr_timer;
	if (mask & IB_QP_SQ_PSN)
		qp->sq_psn = attr->sq_psn & ROCE_PSN_MASK;
	if (mask & IB_QP_MAX_QP_RD_ATOMIC)
		qp->max_rd_atomic = attr->max_rd_atomic;
	if (mask & IB_QP_MAX_DEST_RD_ATOMIC)
		qp->max_dest_rd_atomic = attr->max_dest_rd_atomic;
	if (mask & IB_QP_DEST_QPN)
		qp->dest_qpn = attr->dest_qp_num;
}

/*
 * The optional driver payload of MODIFY_QP: a burst that only means
 * something next to IB_QP_RATE_LIMIT.  Longer payloads from a newer
 * provider are fine while the part we do not know is zero.
 */
static int sroce_modify_qp_payload(struct ib_udata *udata, int mask,
				   struct sroce_modify_qp_cmd *cmd)
{
	int err;

	if (!udata || !udata->inlen)
		return 0;
	if (udata->inlen > sizeof(*cmd) &&
	    !ib_is_udata_cleared(udata, sizeof(*cmd),
				 udata->inlen - sizeof(*cmd)))
		return -EOPNOTSUPP;
	err = ib_copy_from_udata(cmd, udata, min(udata->inlen, sizeof(*cmd)));
	if (err)
		return err;
	if (cmd->reserved || (cmd->max_burst_bytes && !(mask & IB_QP_RATE_LIMIT)))
		return -EINVAL;
	return 0;
}

/*
 * The attributes and what a transition resets, under both engine locks:
 * the responder's expected PSN on the way to RTR, the requester's PSNs,
 * window and retry budgets on the way to RTS.
 */
static void qp_apply_locked(struct sroce_qp *qp, struct ib_qp_attr *attr, int mask,
			    const struct sroce_av *av, enum ib_qp_state cur,
			    enum ib_qp_state new)
{
	spin_lock_bh(&qp->req.lock);
	spin_lock(&qp->resp.lock);
	sroce_apply_attrs(qp, attr, mask, av);
	if ((mask & (IB_QP_AV | IB_QP_DEST_QPN)))
		qp->sport = sroce_udp_sport(&qp->av, qp->ib.qp_num, qp->dest_qpn);
	if (new == IB_QPS_RTR && cur != IB_QPS_RTR)
		roce_resp_seq_init(&qp->resp.seq, qp->rq_psn);
	if (new == IB_QPS_RTS && cur != IB_QPS_RTS && cur != IB_QPS_SQD) {
		qp->req.psn = qp->sq_psn;
		qp->req.comp_psn = qp->sq_psn;
		qp->req.sent_end = qp->sq_psn;
		roce_window_init(&qp->req.window, SROCE_MAX_UNACKED_PSN);
		qp->req.retry_left = qp->retry_cnt;
		qp->req.rnr_retry_left = qp->rnr_retry;
		qp->req.timeouts_in_row = 0;
	}
	if (mask & IB_QP_RETRY_CNT)
		qp->req.retry_left = qp->retry_cnt;
	if (mask & IB_QP_RNR_RETRY)
		qp->req.rnr_retry_left = qp->rnr_retry;
	spin_unlock(&qp->resp.lock);
	spin_unlock_bh(&qp->req.lock);
}

int sroce_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		    struct ib_udata *udata)
{
	struct sroce_qp *qp = to_sqp(ibqp);
	struct sroce_modify_qp_cmd cmd = {};
	enum ib_qp_state cur, new;
	struct sroce_av av;
	int err;

	if (mask & ~(IB_QP_ATTR_STANDARD_BITS | IB_QP_RATE_LIMIT))
		return -EOPNOTSUPP;
	err = sroce_modify_qp_payload(udata, mask, &cmd);
	if (err)
		return err;

	mutex_lock(&qp->modify_lock);
	cur = (mask & IB_QP_CUR_STATE) ? attr->cur_qp_state : qp->state;
	new = (mask & IB_QP_STATE) ? attr->qp_state : cur;
	err = -EINVAL;
	/* The rate limit follows our own rule (sroce_cc_check_qp_limit). */
	if (!ib_modify_qp_is_ok(cur, new, ibqp->qp_type,
				mask & ~IB_QP_RATE_LIMIT))
		goto out;
	err = sroce_check_attrs(qp, attr, mask);
	if (!err && (mask & IB_QP_RATE_LIMIT))
		err = sroce_cc_check_qp_limit(qp, cur, new, attr->rate_limit,
					      cmd.max_burst_bytes);
	if (err)
		goto out;
	if (mask & IB_QP_AV) {
		err = sroce_av_from_attr(&av, &attr->ah_attr);
		if (err)
			goto out;
	}

	if (new == IB_QPS_RESET && qp->state != IB_QPS_RESET) {
		spin_lock_bh(&qp->state_lock);
		qp->state = IB_QPS_RESET;
		qp->last_wqe_due = false;
		spin_unlock_bh(&qp->state_lock);
		sroce_qp_reset(qp);
	}

	qp_apply_locked(qp, attr, mask, &av, cur, new);

	if (new == IB_QPS_ERR) {
		/* Asked for (a disconnect, a drain): no error to report. */
		if (sroce_qp_set_error(qp))
			sroce_sched_queue(qp);
	} else if (new != IB_QPS_RESET) {
		spin_lock_bh(&qp->state_lock);
		qp->state = new;
		/* Draining starts with the move to SQD, not with SQD -> SQD. */
		if (new != cur)
			WRITE_ONCE(qp->sq_draining, new == IB_QPS_SQD);
		spin_unlock_bh(&qp->state_lock);
		if (mask & IB_QP_RATE_LIMIT)
			sroce_cc_set_qp_limit(qp, attr->rate_limit,
					      cmd.max_burst_bytes);
		/* RTS: go on; SQD: the engine tells when it has drained. */
		if (new == IB_QPS_RTS || (new == IB_QPS_SQD && new != cur))
			sroce_sched_queue(qp);
	}
	err = 0;
out:
	mutex_unlock(&qp->modify_lock);
	return err;
}

int sroce_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		   struct ib_qp_init_attr *init)
{
	struct sroce_qp *qp = to_sqp(ibqp);

	memset(attr, 0, sizeof(*attr));
	memset(init, 0, sizeof(*init));
	mutex_lock(&qp->modify_lock);
	attr->qp_state = qp->state;
	attr->cur_qp_state = qp->state;
	attr->sq_draining = qp->sq_draining;
	attr->path_mtu = qp->pmtu;
	attr->path_mig_state = IB_MIG_MIGRATED;
	attr->qkey = qp->qkey;
	attr->rq_psn = qp->rq_psn;
	attr->sq_psn = qp->sq_psn;
	attr->dest_qp_num = qp->dest_qpn;
	attr->qp_access_flags = qp->access;
	attr->max_rd_atomic = qp->max_rd_atomic;
	attr->max_dest_rd_atomic = qp->max_dest_rd_atomic;
	attr->min_rnr_timer = qp->min_rnr_timer;
	attr->port_num = SROCE_PORT;
	attr->timeout = qp->timeout;
	attr->retry_cnt = qp->retry_cnt;
	attr->rnr_retry = qp->rnr_retry;
	/* An XRC target has no queues; an XRC sender no receive queue. */
	if (ibqp->qp_type != IB_QPT_XRC_TGT) {
		attr->cap.max_send_wr = qp->sq_max_wr;
		attr->cap.max_send_sge = qp->max_send_sge;
		attr->cap.max_inline_data = qp->max_inline;
	}
	if (!qp->srq && !sroce_qp_xrc(qp)) {
		attr->cap.max_recv_wr = qp->rq.max_wr;
		attr->cap.max_recv_sge = qp->rq.max_sge;
	}
	if (ibqp->qp_type == IB_QPT_RC || ibqp->qp_type == IB_QPT_UC ||
	    sroce_qp_xrc(qp)) {
		struct rdma_ah_attr *ah = &attr->ah_attr;

		ah->type = RDMA_AH_ATTR_TYPE_ROCE;
		rdma_ah_set_port_num(ah, SROCE_PORT);
		rdma_ah_set_grh(ah, NULL, qp->av.flow_label, 0,
				qp->av.hop_limit, qp->av.tclass);
		memcpy(ah->grh.dgid.raw, &qp->av.daddr, 16);
	}
	init->event_handler = ibqp->event_handler;
	init->qp_context = ibqp->qp_context;
	init->send_cq = ibqp->send_cq;
	init->recv_cq = ibqp->recv_cq;
	init->srq = ibqp->srq;
	init->xrcd = qp->xrcd;
	init->cap = attr->cap;
	init->sq_sig_type = qp->sig_all ? IB_SIGNAL_ALL_WR : IB_SIGNAL_REQ_WR;
	init->qp_type = ibqp->qp_type;
	init->port_num = SROCE_PORT;
	mutex_unlock(&qp->modify_lock);
	return 0;
}

int sroce_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata)
{
	struct sroce_qp *qp = to_sqp(ibqp);
	struct sroce_dev *sdev = qp->sdev;

	/* No new lookups, then wait out the ones in flight. */
	xa_erase_bh(&sdev->qps, ibqp->qp_num);
	if (qp->sq_marks)
		sroce_sq_mark_put(qp->sq_marks, qp->sq_mark);
	spin_lock_bh(&qp->state_lock);
	qp->state = IB_QPS_RESET;
	spin_unlock_bh(&qp->state_lock);
	sroce_qp_put(qp);
	wait_for_completion(&qp->freed);

	sroce_sched_stop(qp);
	sroce_mcast_detach_all(qp);
	spin_lock_bh(&qp->resp.lock);
	sroce_resp_drop_held(qp);
	spin_unlock_bh(&qp->resp.lock);

	dst_cache_destroy(&qp->dst_cache);
	kfree(qp->resp.rd_res.res);
	if (!qp->srq)
		sroce_rq_free(&qp->rq);
	if (qp->user)
		sroce_ring_free(&qp->sq);
	kvfree(qp->shadow);
	/* A receive path that found the handle before the erase may still be
	 * trying its reference; ib_core frees the QP as we return.
	 */
	kfree_rcu(qp->handle, rcu);
	atomic_dec(&sdev->num_qp);
	return 0;
}

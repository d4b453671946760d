// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Receive queues (a QP's own RQ and SRQs share struct sroce_rq) and SRQs.
 *
 * A user RQ is a ring the process fills without system calls: its producer
 * index and every WQE are untrusted.  sroce_rq_pop() reads the producer
 * once, checks it against our own consumer index, copies the WQE header
 * once, validates it and copies the SGEs; nothing is read from the ring
 * twice.  Lengths and keys in the SGEs are checked later, against the MRs,
 * when data is placed.
 *
 * Capacity is the ring's num_slots (indices are free-running).
 */
#include <linux/log2.h>
#include <linux/uaccess.h>
#include <rdma/uverbs_ioctl.h>

#include "sroce.h"

static u32 sroce_rq_slot_size(u32 max_sge)
{
	return roundup_pow_of_two(sizeof(struct sroce_recv_wqe) +
				  max_sge * sizeof(struct sroce_sge));
}

/* SGEs a slot of @slot_size bytes holds, capped at the device's limit. */
static u32 sroce_rq_slot_sges(u32 slot_size)
{
	return min_t(u32, (slot_size - sizeof(struct sroce_recv_wqe)) /
				  sizeof(struct sroce_sge), SROCE_MAX_SGE);
}

/*
 * @max_wr 0 (a QP that never receives) still gets a one-slot ring, so the
 * receive path finds it empty rather than absent.  rq->max_sge is what a
 * slot holds, which may exceed @max_sge: report it as the actual value.
 */
int sroce_rq_init(struct sroce_rq *rq, u32 max_wr, u32 max_sge,
		  struct ib_udata *udata, struct sroce_ring_info *info)
{
	struct sroce_ucontext *uctx;
	int err;

	if (max_sge > SROCE_MAX_SGE)
		return -EINVAL;
	err = sroce_ring_init(&rq->ring, max(max_wr, 1U),
			      sroce_rq_slot_size(max_sge));
	if (err)
		return err;
	spin_lock_init(&rq->lock);
	rq->user = !!udata;
	rq->prod = 0;
	rq->cons = 0;
	rq->max_sge = sroce_rq_slot_sges(rq->ring.slot_size);
	rq->max_wr = sroce_wq_max_wr(max(max_wr, 1U), rq->ring.num_slots);

	if (udata) {
		uctx = rdma_udata_to_drv_context(udata, struct sroce_ucontext,
						 ib);
		err = sroce_ring_export(&rq->ring, &uctx->ib, info);
		if (err)
			sroce_ring_free(&rq->ring);
	}
	return err;
}

void sroce_rq_free(struct sroce_rq *rq)
{
	sroce_ring_free(&rq->ring);
}

/* The producer index: ours for a kernel RQ, read once for a user RQ. */
static u32 sroce_rq_producer(struct sroce_rq *rq)
{
	/* Pairs with the provider's release store of the producer (ring.hpp). */
	return rq->user ? smp_load_acquire(&rq->ring.ctrl->producer) : rq->prod;
}

/*
 * The slot of the next WQE, under rq->lock; NULL with *err -EAGAIN when
 * none is posted, -EIO when the producer index is corrupt.
 */
static const struct sroce_recv_wqe *rq_next_slot(struct sroce_rq *rq, int *err)
{
	u32 prod = sroce_rq_producer(rq);

	if (prod - rq->cons > rq->ring.num_slots) {
		*err = -EIO;
		return NULL;
	}
	if (prod == rq->cons) {
		*err = -EAGAIN;
		return NULL;
	}
	return sroce_ring_slot(&rq->ring, rq->cons);
}

/* The slot taken, under rq->lock. */
static void rq_consume(struct sroce_rq *rq)
{
	rq->cons++;
	if (rq->user)
		/* Pairs with the provider's acquire load of the consumer (wq.cpp). */
		smp_store_release(&rq->ring.ctrl->consumer, rq->cons);
}

int sroce_rq_pop(struct sroce_rq *rq, struct sroce_rwqe *out)
{
	const struct sroce_recv_wqe *wqe;
	unsigned long flags;
	u32 num_sge;
	int err = 0;

	spin_lock_irqsave(&rq->lock, flags);
	wqe = rq_next_slot(rq, &err);
	if (!wqe)
		goto unlock;
	num_sge = READ_ONCE(wqe->num_sge);
	if (num_sge > rq->max_sge) {
		err = -EIO;
		goto unlock;
	}
	out->wr_id = READ_ONCE(wqe->wr_id);
	out->num_sge = num_sge;
	/* The slot holds rq->max_sge SGEs; validated @num_sge only. */
	memcpy(out->sge, wqe + 1, num_sge * sizeof(struct sroce_sge));
	rq_consume(rq);
unlock:
	spin_unlock_irqrestore(&rq->lock, flags);
	return err;
}

int sroce_rq_pop_flushed(struct sroce_rq *rq, u64 *wr_id)
{
	const struct sroce_recv_wqe *wqe;
	unsigned long flags;
	int err = 0;

	spin_lock_irqsave(&rq->lock, flags);
	wqe = rq_next_slot(rq, &err);
	if (wqe) {
		*wr_id = READ_ONCE(wqe->wr_id);
		rq_consume(rq);
	}
	spin_unlock_irqrestore(&rq->lock, flags);
	return err;
}

/* Kernel consumers' post_recv and post_srq_recv; any context. */
int sroce_rq_post(struct sroce_rq *rq, const struct ib_recv_wr *wr,
		  const struct ib_recv_wr **bad_wr)
{
	unsigned long flags;
	int err = 0;

	if (rq->user) {		/* posted through the mapping, never here */
		*bad_wr = wr;
		return -EOPNOTSUPP;
	}

	spin_lock_irqsave(&rq->lock, flags);
	for (; wr; wr = wr->next) {
		struct sroce_recv_wqe *wqe;
		struct sroce_sge *sge;
		int i;

		if (wr->num_sge < 0 || wr->num_sge > rq->max_sge) {
			err = -EINVAL;
			break;
		}
		if (rq->prod - rq->cons >= rq->ring.num_slots) {
			err = -ENOMEM;
			break;
		}
		wqe = sroce_ring_slot(&rq->ring, rq->prod);
		wqe->wr_id = wr->wr_id;
		wqe->num_sge = wr->num_sge;
		wqe->reserved = 0;
		sge = (struct sroce_sge *)(wqe + 1);
		for (i = 0; i < wr->num_sge; i++) {
			sge[i].addr = wr->sg_list[i].addr;
			sge[i].length = wr->sg_list[i].length;
			sge[i].lkey = wr->sg_list[i].lkey;
		}
		rq->prod++;
	}
	spin_unlock_irqrestore(&rq->lock, flags);
	if (err)
		*bad_wr = wr;
	return err;
}

static u32 sroce_rq_count_locked(struct sroce_rq *rq)
{
	/* A corrupt user index reads as full: no limit event from it. */
	return min(sroce_rq_producer(rq) - rq->cons, rq->ring.num_slots);
}

u32 sroce_rq_count(struct sroce_rq *rq)
{
	unsigned long flags;
	u32 n;

	spin_lock_irqsave(&rq->lock, flags);
	n = sroce_rq_count_locked(rq);
	spin_unlock_irqrestore(&rq->lock, flags);
	return n;
}

static void srq_event(struct sroce_srq *srq, enum ib_event_type type)
{
	struct ib_event ev = {
		.device = srq->ib.device,
		.element.srq = &srq->ib,
		.event = type,
	};

	if (srq->ib.event_handler)
		srq->ib.event_handler(&ev, srq->ib.srq_context);
}

/* Called after a pop: fires the armed limit once, then disarms it. */
void sroce_srq_check_limit(struct sroce_srq *srq)
{
	unsigned long flags;
	bool fire = false;

	spin_lock_irqsave(&srq->rq.lock, flags);
	if (srq->limit && sroce_rq_count_locked(&srq->rq) < srq->limit) {
		srq->limit = 0;
		fire = true;
	}
	spin_unlock_irqrestore(&srq->rq.lock, flags);

	if (fire)
		srq_event(srq, IB_EVENT_SRQ_LIMIT_REACHED);
}

void sroce_srq_fail(struct sroce_srq *srq)
{
	unsigned long flags;
	bool fire;

	spin_lock_irqsave(&srq->rq.lock, flags);
	fire = !srq->failed;
	WRITE_ONCE(srq->failed, true);
	spin_unlock_irqrestore(&srq->rq.lock, flags);

	if (fire)
		srq_event(srq, IB_EVENT_SRQ_ERR);
}

/*
 * No new lookups by number, and none still running: XRC target QPs find
 * an XRC SRQ by the number in each request's XRCETH, under RCU, with no
 * reference that would keep it (ib_core lets it be destroyed while target
 * QPs of its domain live, as on hardware).
 */
static void srq_unpublish(struct sroce_dev *sdev, struct sroce_srq *srq)
{
	xa_erase(&sdev->srqs, srq->srq_num);
	if (srq->ib.srq_type == IB_SRQT_XRC)
		synchronize_rcu();
}

/*
 * The XRC SRQ @srqn for a request to XRC target @qp: one of the target's
 * domain, or NULL.  Caller holds rcu_read_lock() while it uses the SRQ.
 */
struct sroce_srq *sroce_xrc_srq_lookup(struct sroce_qp *qp, u32 srqn)
{
	struct sroce_srq *srq = xa_load(&qp->sdev->srqs, srqn);

	if (!srq || srq->ib.srq_type != IB_SRQT_XRC ||
	    srq->ib.ext.xrc.xrcd != qp->xrcd)
		return NULL;
	return srq;
}

int sroce_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		     struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(ibsrq->device);
	struct sroce_srq *srq = to_ssrq(ibsrq);
	struct sroce_create_srq_resp resp = {};
	struct ib_srq_attr *attr = &init->attr;
	int err;

	if (init->srq_type != IB_SRQT_BASIC && init->srq_type != IB_SRQT_XRC)
		return -EOPNOTSUPP;
	if (!attr->max_wr || attr->max_wr > SROCE_MAX_SRQ_WR ||
	    attr->max_sge > SROCE_MAX_SGE)
		return -EINVAL;
	/* The limit does not arm at creation (ibv_create_srq ignores it),
	 * but one beyond the queue is a caller error.
	 */
	if (attr->srq_limit > attr->max_wr)
		return -EINVAL;
	if (udata && udata->outlen < sizeof(resp))
		return -EINVAL;

	err = sroce_rq_init(&srq->rq, attr->max_wr, attr->max_sge, udata,
			    &resp.rq);
	if (err)
		return err;
	srq->limit = 0;

	err = xa_alloc_cyclic(&sdev->srqs, &srq->srq_num, srq,
			      XA_LIMIT(1, SROCE_MAX_SRQ), &sdev->next_srq,
			      GFP_KERNEL);
	if (err < 0) {
		err = err == -EBUSY ? -ENOMEM : err;
		goto err_rq;
	}

	/* What an XRCETH names; uverbs returns it as the SRQ number. */
	if (init->srq_type == IB_SRQT_XRC)
		ibsrq->ext.xrc.srq_num = srq->srq_num;

	if (udata) {
		resp.srq_num = srq->srq_num;
		err = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (err)
			goto err_num;
	}
	attr->max_wr = srq->rq.max_wr;
	attr->max_sge = srq->rq.max_sge;
	return 0;

err_num:
	srq_unpublish(sdev, srq);
err_rq:
	sroce_rq_free(&srq->rq);
	return err;
}

/*
 * Resize: the pending WQEs move, in order, to the start of a new ring
 * (consumer 0, producer the number moved).  A user SRQ's provider posts
 * without system calls, so it must hold its SRQ lock over the call, then
 * map the new ring, which the old ring's control block describes
 * (sroce_ring_ctrl.resized, written here before the switch), and continue
 * from the producer index it finds there.  Fails with -EINVAL if more WQEs
 * are pending than @max_wr slots hold.
 */
static int sroce_srq_resize(struct sroce_srq *srq, u32 max_wr,
			    struct ib_udata *udata)
{
	struct sroce_rq *rq = &srq->rq;
	struct sroce_ring_info info = {};
	struct sroce_ring ring, old;
	struct sroce_ucontext *uctx;
	unsigned long flags;
	u32 pending, i;
	int err;

	if (rq->user && !udata)
		return -EINVAL;
	err = sroce_ring_init(&ring, max_wr, rq->ring.slot_size);
	if (err)
		return err;
	if (rq->user) {
		uctx = rdma_udata_to_drv_context(udata, struct sroce_ucontext,
						 ib);
		err = sroce_ring_export(&ring, &uctx->ib, &info);
		if (err)
			goto err_free;
	}

	spin_lock_irqsave(&rq->lock, flags);
	pending = sroce_rq_producer(rq) - rq->cons;
	if (pending > rq->ring.num_slots || pending > ring.num_slots) {
		spin_unlock_irqrestore(&rq->lock, flags);
		err = -EINVAL;
		goto err_free;
	}
	/* Where the process finds the new ring: in the old one, which it
	 * still maps (our writes are visible once the syscall returns).
	 */
	if (rq->user)
		memcpy(&rq->ring.ctrl->resized, &info, sizeof(info));
	/* Raw slots: sroce_rq_pop() validates them when it takes them. */
	for (i = 0; i < pending; i++)
		memcpy(sroce_ring_slot(&ring, i),
		       sroce_ring_slot(&rq->ring, rq->cons + i),
		       ring.slot_size);
	ring.ctrl->producer = pending;
	ring.ctrl->consumer = 0;
	old = rq->ring;
	rq->ring = ring;
	rq->prod = pending;
	rq->cons = 0;
	rq->max_wr = sroce_wq_max_wr(max_wr, ring.num_slots);
	spin_unlock_irqrestore(&rq->lock, flags);

	sroce_ring_free(&old);
	return 0;

err_free:
	sroce_ring_free(&ring);
	return err;
}

int sroce_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		     enum ib_srq_attr_mask mask, struct ib_udata *udata)
{
	struct sroce_srq *srq = to_ssrq(ibsrq);
	unsigned long flags;
	u32 max_wr;
	int err;

	if (mask & ~(IB_SRQ_MAX_WR | IB_SRQ_LIMIT))
		return -EINVAL;

	if (mask & IB_SRQ_MAX_WR) {
		if (!attr->max_wr || attr->max_wr > SROCE_MAX_SRQ_WR)
			return -EINVAL;
		/* Check the new limit before resizing: no half-done call. */
		if ((mask & IB_SRQ_LIMIT) && attr->srq_limit >=
		    sroce_wq_max_wr(attr->max_wr, roundup_pow_of_two(attr->max_wr)))
			return -EINVAL;
		err = sroce_srq_resize(srq, attr->max_wr, udata);
		if (err)
			return err;
	}

	if (mask & IB_SRQ_LIMIT) {
		spin_lock_irqsave(&srq->rq.lock, flags);
		max_wr = srq->rq.max_wr;
		if (attr->srq_limit >= max_wr) {
			spin_unlock_irqrestore(&srq->rq.lock, flags);
			return -EINVAL;
		}
		/* Armed (non-zero): the next pop below it raises the event. */
		srq->limit = attr->srq_limit;
		spin_unlock_irqrestore(&srq->rq.lock, flags);
	}
	return 0;
}

int sroce_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr)
{
	struct sroce_srq *srq = to_ssrq(ibsrq);
	unsigned long flags;

	spin_lock_irqsave(&srq->rq.lock, flags);
	attr->max_wr = srq->rq.max_wr;
	attr->max_sge = srq->rq.max_sge;
	attr->srq_limit = srq->limit;
	spin_unlock_irqrestore(&srq->rq.lock, flags);
	return 0;
}

/* ib_core destroys an SRQ only once no QP uses it (XRC: see above). */
int sroce_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata)
{
	struct sroce_srq *srq = to_ssrq(ibsrq);

	srq_unpublish(to_sdev(ibsrq->device), srq);
	sroce_rq_free(&srq->rq);
	return 0;
}

int sroce_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
			const struct ib_recv_wr **bad_wr)
{
	return sroce_rq_post(&to_ssrq(ibsrq)->rq, wr, bad_wr);
}

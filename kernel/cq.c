// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Completion queues.  A user CQ is a ring of sroce_cqe shared with the
 * process, which polls and arms it without system calls; a kernel CQ is a
 * private ring of struct ib_wc.  Either way we are the only producer, keep
 * our own producer index and only ever read the consumer's.
 *
 * Capacity.  A CQ of N slots holds N - 1 completions, and we report that
 * as ib.cqe: so a request for SROCE_MAX_CQE gets exactly that, and a CQ
 * never reports more than the device's max_cqe.
 *
 * Overflow is fatal, as IBTA has it (11.6.3.1): the first completion that
 * finds the CQ full raises IB_EVENT_CQ_ERR, and from then on nothing is
 * posted to it.  The QP whose completion had no room has lost it, so it
 * fails with a catastrophic error (IB_EVENT_QP_FATAL), and so does every
 * QP that completes here later: sroce_cq_post() does that itself.
 */
#include <linux/ktime.h>
#include <linux/log2.h>
#include <rdma/uverbs_ioctl.h>

#include "sroce.h"

/* libibverbs' ibv_wc_flags: not the kernel's ib_wc_flags. */
#define SROCE_UWC_GRH		(1u << 0)
#define SROCE_UWC_WITH_IMM	(1u << 1)
#define SROCE_UWC_IP_CSUM_OK	(1u << 2)
#define SROCE_UWC_WITH_INV	(1u << 3)

static u32 sroce_cq_capacity(const struct sroce_cq *cq)
{
	return cq->ring.num_slots - 1;
}

static u32 sroce_cq_slot_size(bool user)
{
	return user ? sizeof(struct sroce_cqe) :
		      roundup_pow_of_two(sizeof(struct ib_wc));
}

/* Completions waiting, or more than the capacity if user memory lies. */
static u32 sroce_cq_pending(const struct sroce_cq *cq)
{
	u32 cons = cq->user ? READ_ONCE(cq->ring.ctrl->consumer) : cq->cons;

	return cq->prod - cons;
}

static u32 sroce_uwc_flags(int flags)
{
	u32 u = 0;

	if (flags & IB_WC_GRH)
		u |= SROCE_UWC_GRH;
	if (flags & IB_WC_WITH_IMM)
		u |= SROCE_UWC_WITH_IMM;
	if (flags & IB_WC_WITH_INVALIDATE)
		u |= SROCE_UWC_WITH_INV;
	if (flags & IB_WC_IP_CSUM_OK)
		u |= SROCE_UWC_IP_CSUM_OK;
	/* SMAC, VLAN and network header type have no ibv_wc field. */
	return u;
}

static void sroce_cqe_from_wc(const struct sroce_cq *cq, struct sroce_cqe *cqe,
			      const struct ib_wc *wc)
{
	/*
	 * Status and opcode values are libibverbs' already: ib_wc_status
	 * matches ibv_wc_status entry for entry, opcodes 0..7 are the uapi's
	 * IB_UVERBS_WC_*, and the receive opcodes are 1 << 7 and its
	 * successor in both.  A user QP never completes REG_MR or the masked
	 * atomics, the kernel-only opcodes whose numbers differ.
	 */
	BUILD_BUG_ON(IB_WC_GENERAL_ERR != 21);
	BUILD_BUG_ON(IB_WC_LOCAL_INV != 6);
	BUILD_BUG_ON(IB_WC_RECV != 128 || IB_WC_RECV_RDMA_WITH_IMM != 129);

	memset(cqe, 0, sizeof(*cqe));
	cqe->wr_id = wc->wr_id;
	cqe->status = wc->status;
	cqe->opcode = wc->opcode;
	cqe->vendor_err = wc->vendor_err;
	cqe->byte_len = wc->byte_len;
	/* Either the big-endian immediate or the rkey, raw. */
	cqe->imm_data = wc->ex.invalidate_rkey;
	cqe->qp_num = wc->qp ? wc->qp->qp_num : 0;
	cqe->src_qp = wc->src_qp;
	cqe->wc_flags = sroce_uwc_flags(wc->wc_flags);
	cqe->pkey_index = wc->pkey_index;
	cqe->slid = wc->slid;
	cqe->sl = wc->sl;
	cqe->dlid_path_bits = wc->dlid_path_bits;
	/* Only when asked for: a clock read per CQE is not free (an
	 * emulated HPET read in a TCG guest).
	 */
	cqe->timestamp = cq->timestamps ? ktime_get_raw_ns() : 0;
}

/* What an arm for solicited completions wakes for: those, and errors. */
static bool sroce_wakes_solicited(bool solicited, const struct ib_wc *wc)
{
	return solicited || wc->status != IB_WC_SUCCESS;
}

static bool sroce_arm_fires(u32 armed, bool solicited, const struct ib_wc *wc)
{
	return (armed & SROCE_CQ_ARM_NEXT) ||
	       ((armed & SROCE_CQ_ARM_SOLICITED) &&
		sroce_wakes_solicited(solicited, wc));
}

/*
 * A user CQ's solicited_end: the producer index just past the newest
 * completion that wakes a solicited arm, published in the ring (before the
 * producer) for the provider.  Kept within the ring's length of prod, so
 * that after 2^32 other completions an old one cannot look unpolled.
 */
static void sroce_cq_note_solicited(struct sroce_cq *cq, bool wakes)
{
	if (wakes)
		cq->solicited_end = cq->prod;
	else if (cq->prod - cq->solicited_end > cq->ring.num_slots)
		cq->solicited_end = cq->prod - cq->ring.num_slots;
	WRITE_ONCE(cq->ring.ctrl->solicited_end, cq->solicited_end);
}

/* A completion that wakes a solicited arm is still unpolled. */
static bool sroce_cq_solicited_pending(const struct sroce_cq *cq)
{
	return cq->prod - cq->solicited_end < sroce_cq_pending(cq);
}

static void sroce_cq_err_event(struct sroce_cq *cq)
{
	struct ib_event ev = {
		.device = cq->ib.device,
		.element.cq = &cq->ib,
		.event = IB_EVENT_CQ_ERR,
	};

	if (cq->ib.event_handler)
		cq->ib.event_handler(&ev, cq->ib.cq_context);
}

/*
 * Callable from any context (softirq receive path, send work, verbs):
 * cq->lock is irq-safe, and the handlers run after it is dropped.  The
 * caller may hold its QP's req.lock or resp.lock (sroce_qp_error is fine
 * under either).
 */
void sroce_cq_post(struct sroce_cq *cq, const struct ib_wc *wc, bool solicited)
{
	unsigned long flags;
	bool fire = false, overflow = false;
	void *slot;

	spin_lock_irqsave(&cq->lock, flags);
	if (cq->overflow) {
		spin_unlock_irqrestore(&cq->lock, flags);
		sroce_qp_error(to_sqp(wc->qp), IB_EVENT_QP_FATAL);
		return;
	}
	/* A consumer index that is not behind us at all counts as full. */
	if (sroce_cq_pending(cq) >= sroce_cq_capacity(cq)) {
		cq->overflow = true;
		overflow = true;
		goto unlock;
	}

	slot = sroce_ring_slot(&cq->ring, cq->prod);
	if (cq->user)
		sroce_cqe_from_wc(cq, slot, wc);
	else
		memcpy(slot, wc, sizeof(*wc));
	cq->prod++;

	if (cq->user) {
		u32 *notify = &cq->ring.ctrl->notify;

		sroce_cq_note_solicited(cq, sroce_wakes_solicited(solicited, wc));

		/* Pairs with the provider's acquire load of the producer
		 * (cq.cpp): the CQE above, and solicited_end, are visible
		 * before its index.
		 */
		smp_store_release(&cq->ring.ctrl->producer, cq->prod);
		/*
		 * The process arms (atomic OR, a full barrier) and then reads
		 * our producer index; we publish and then read the arm.  The
		 * full barrier on each side means one of us sees the other:
		 * what we publish unarmed, it finds, and asks us to fire for
		 * (sroce_req_notify_user_cq()).
		 */
		smp_mb();
		if (sroce_arm_fires(READ_ONCE(*notify), solicited, wc))
			fire = xchg(notify, 0) != 0;
	} else if (sroce_arm_fires(cq->notify, solicited, wc)) {
		cq->notify = 0;
		fire = true;
	}
unlock:
	spin_unlock_irqrestore(&cq->lock, flags);

	if (overflow) {
		sroce_cq_err_event(cq);
		sroce_qp_error(to_sqp(wc->qp), IB_EVENT_QP_FATAL);
		return;
	}
	if (fire && cq->ib.comp_handler)
		cq->ib.comp_handler(&cq->ib, cq->ib.cq_context);
}

/* Allocates (and for a user CQ exports) a ring for @cqe completions. */
static int sroce_cq_ring_new(struct sroce_ring *ring, int cqe, bool user,
			     struct ib_udata *udata, struct sroce_ring_info *info)
{
	struct sroce_ucontext *uctx;
	int err;

	err = sroce_ring_init(ring, cqe + 1, sroce_cq_slot_size(user));
	if (err || !user)
		return err;
	uctx = rdma_udata_to_drv_context(udata, struct sroce_ucontext, ib);
	err = sroce_ring_export(ring, &uctx->ib, info);
	if (err)
		sroce_ring_free(ring);
	return err;
}

int sroce_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		    struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(ibcq->device);
	struct sroce_cq *cq = to_scq(ibcq);
	struct sroce_create_cq_resp resp = {};
	int err;

	if (!attr->cqe || attr->cqe > SROCE_MAX_CQE)
		return -EINVAL;
	/* Timestamps on request; overruns are never ignored. */
	if (attr->flags & ~IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION)
		return -EOPNOTSUPP;
	if (attr->comp_vector >= ibcq->device->num_comp_vectors)
		return -EINVAL;
	if (udata && udata->outlen < sizeof(resp))
		return -EINVAL;

	if (atomic_inc_return(&sdev->num_cq) > SROCE_MAX_CQ) {
		err = -ENOMEM;
		goto err_count;
	}

	spin_lock_init(&cq->lock);
	cq->user = !!udata;
	cq->prod = 0;
	cq->solicited_end = 0;	/* none: prod - solicited_end is not < pending */
	cq->cons = 0;
	cq->notify = 0;
	cq->overflow = false;
	cq->timestamps = attr->flags & IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION;
	err = sroce_cq_ring_new(&cq->ring, attr->cqe, cq->user, udata,
				&resp.cq);
	if (err)
		goto err_count;
	ibcq->cqe = sroce_cq_capacity(cq);

	if (udata) {
		err = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (err)
			goto err_ring;
	}
	return 0;

err_ring:
	sroce_ring_free(&cq->ring);
err_count:
	atomic_dec(&sdev->num_cq);
	return err;
}

/* ib_core destroys a CQ only once no QP or SRQ refers to it. */
int sroce_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
{
	struct sroce_cq *cq = to_scq(ibcq);

	sroce_ring_free(&cq->ring);
	atomic_dec(&to_sdev(ibcq->device)->num_cq);
	return 0;
}

/*
 * Moves the pending completions into a new ring.  They keep their order
 * and start at index 0: the new ring's consumer is 0 and its producer the
 * number moved.  A user CQ's provider must therefore hold its CQ lock over
 * the call, have published its consumer index before it, and afterwards
 * map the new ring and restart polling from index 0.  Fails with -EINVAL
 * if more completions are pending than the new size holds.
 */
int sroce_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata)
{
	struct sroce_cq *cq = to_scq(ibcq);
	struct sroce_resize_cq_resp resp = {};
	struct sroce_ring ring, old;
	unsigned long flags;
	u32 pending, after, i;
	int err;

	if (cqe < 1 || cqe > SROCE_MAX_CQE)
		return -EINVAL;
	if (cq->user && (!udata || udata->outlen < sizeof(resp)))
		return -EINVAL;

	/* Work requests already posted complete here soon: let the send
	 * engines produce those completions first, so the pending count is
	 * what the process has posted, as on a device that completes inline.
	 * A user process's posts may wait for the poller, which rings no
	 * doorbell (doorbell.c): they are taken first.
	 */
	if (cq->user)
		sroce_sqpoll_settle(&rdma_udata_to_drv_context(udata, struct sroce_ucontext,
							       ib)->sq_marks);
	flush_workqueue(sroce_wq);

	err = sroce_cq_ring_new(&ring, cqe, cq->user, udata, &resp.cq);
	if (err)
		return err;
	/* Before the swap, which cannot be undone; on error the process
	 * ignores the response and the entry is gone again.
	 */
	if (cq->user) {
		err = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (err)
			goto err_free;
	}

	spin_lock_irqsave(&cq->lock, flags);
	pending = sroce_cq_pending(cq);
	if (pending > sroce_cq_capacity(cq) || pending > ring.num_slots - 1) {
		spin_unlock_irqrestore(&cq->lock, flags);
		err = -EINVAL;
		goto err_free;
	}
	for (i = 0; i < pending; i++)
		memcpy(sroce_ring_slot(&ring, i),
		       sroce_ring_slot(&cq->ring, cq->prod - pending + i),
		       ring.slot_size);
	ring.ctrl->producer = pending;
	ring.ctrl->consumer = 0;
	if (cq->user)
		ring.ctrl->notify = READ_ONCE(cq->ring.ctrl->notify);
	/* The newest solicited completion, if it moved, keeps its place
	 * from the end; else none is pending.
	 */
	after = cq->prod - cq->solicited_end;
	cq->solicited_end = after < pending ? pending - after : 0;
	ring.ctrl->solicited_end = cq->solicited_end;
	old = cq->ring;
	cq->ring = ring;
	cq->prod = pending;
	cq->cons = 0;
	ibcq->cqe = sroce_cq_capacity(cq);
	spin_unlock_irqrestore(&cq->lock, flags);

	sroce_ring_free(&old);
	return 0;

err_free:
	sroce_ring_free(&ring);
	return err;
}

int sroce_poll_cq(struct ib_cq *ibcq, int num, struct ib_wc *wc)
{
	struct sroce_cq *cq = to_scq(ibcq);
	unsigned long flags;
	int n = 0;

	/* A user CQ is polled from its mapping; uverbs POLL_CQ is off. */
	if (cq->user)
		return -EOPNOTSUPP;

	spin_lock_irqsave(&cq->lock, flags);
	while (n < num && cq->cons != cq->prod) {
		memcpy(&wc[n++], sroce_ring_slot(&cq->ring, cq->cons),
		       sizeof(*wc));
		cq->cons++;
	}
	spin_unlock_irqrestore(&cq->lock, flags);
	return n;
}

/*
 * The process arms a user CQ itself (an atomic OR into the shared notify
 * word) and comes here only when, after arming, it still sees completions
 * it has not polled that the arm waits for: they were published before we
 * could see the arm, so they raised nothing.  ib_req_notify_cq() promises
 * an event for every completion added since the last poll, and ConnectX
 * raises it at once (its arm carries the consumer index); UCX sleeps on
 * that promise.  So we fire now if such a completion is still unpolled,
 * under cq->lock, where sroce_cq_post() cannot fire the same arm and a
 * resize cannot swap the ring.  An arm for solicited completions fires
 * only for a solicited (or error) one: UD's async thread in UCX arms so
 * after every event while its main thread polls, and firing for any
 * unpolled completion woke that thread for each.
 */
static int sroce_req_notify_user_cq(struct sroce_cq *cq, u32 arm)
{
	u32 *notify = &cq->ring.ctrl->notify;
	unsigned long irqflags;
	bool fire = false;
	u32 old, armed;

	spin_lock_irqsave(&cq->lock, irqflags);
	/* The same word the process ORs into; NEXT wins over SOLICITED in
	 * sroce_cq_post().
	 */
	do {
		old = READ_ONCE(*notify);
	} while (cmpxchg(notify, old, old | arm) != old);
	armed = old | arm;
	if (!cq->overflow &&
	    ((armed & SROCE_CQ_ARM_NEXT) ? sroce_cq_pending(cq) :
					   sroce_cq_solicited_pending(cq)))
		fire = xchg(notify, 0) != 0;
	spin_unlock_irqrestore(&cq->lock, irqflags);

	if (fire && cq->ib.comp_handler)
		cq->ib.comp_handler(&cq->ib, cq->ib.cq_context);
	return 0;
}

int sroce_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags)
{
	struct sroce_cq *cq = to_scq(ibcq);
	u32 arm = (flags & IB_CQ_SOLICITED_MASK) == IB_CQ_SOLICITED ?
			  SROCE_CQ_ARM_SOLICITED : SROCE_CQ_ARM_NEXT;
	unsigned long irqflags;
	int ret = 0;

	if (cq->user)
		return sroce_req_notify_user_cq(cq, arm);

	spin_lock_irqsave(&cq->lock, irqflags);
	cq->notify |= arm;
	if ((flags & IB_CQ_REPORT_MISSED_EVENTS) && cq->cons != cq->prod)
		ret = 1;
	spin_unlock_irqrestore(&cq->lock, irqflags);
	return ret;
}

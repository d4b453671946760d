/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Receive queues (srq.c): a QP's own RQ and an SRQ, which share struct
 * sroce_rq and its lock.  Owns struct sroce_rwqe, sroce_rq and sroce_srq.
 */
#ifndef SROCE_RQ_H
#define SROCE_RQ_H

#include <linux/spinlock.h>
#include <rdma/ib_verbs.h>

#include "dev.h"
#include "ring.h"

struct sroce_qp;

/* ------------------------------------------------------------------------
 * Receive queues (srq.c): a QP's own RQ and an SRQ share this.
 */
struct sroce_rwqe {			/* kernel copy of a receive WQE */
	u64 wr_id;
	u32 num_sge;
	struct sroce_sge sge[SROCE_MAX_SGE];
};

struct sroce_rq {
	spinlock_t lock;		/* consumers (rx) vs kernel producers */
	struct sroce_ring ring;		/* sroce_recv_wqe + SGEs */
	bool user;
	u32 prod;			/* kernel RQs: ours */
	u32 cons;			/* always ours; published for users */
	u32 max_sge;
	u32 max_wr;			/* reported: sroce_wq_max_wr() */
};

struct sroce_srq {
	struct ib_srq ib;
	struct sroce_rq rq;
	u32 srq_num;
	u32 limit;			/* 0: not armed */
	bool failed;			/* a corrupt WQE or index seen: set under rq.lock */
};

static inline struct sroce_srq *to_ssrq(struct ib_srq *srq)
{
	return container_of(srq, struct sroce_srq, ib);
}

int sroce_rq_init(struct sroce_rq *rq, u32 max_wr, u32 max_sge,
		  struct ib_udata *udata, struct sroce_ring_info *info);
void sroce_rq_free(struct sroce_rq *rq);
/*
 * Takes the next receive WQE into @out.  0, -EAGAIN when empty, -EIO when
 * user memory holds a corrupt index or WQE (the QP must go to error).
 */
int sroce_rq_pop(struct sroce_rq *rq, struct sroce_rwqe *out);
/*
 * Takes the next receive WQE for a flush, which needs its wr_id alone: a
 * WQE whose SGE count the process corrupted completes like any other (a
 * flush that stopped at it lost every receive behind it).  0, -EAGAIN
 * when empty, -EIO when the producer index is corrupt.
 */
int sroce_rq_pop_flushed(struct sroce_rq *rq, u64 *wr_id);
/* Posting for kernel consumers. */
int sroce_rq_post(struct sroce_rq *rq, const struct ib_recv_wr *wr,
		  const struct ib_recv_wr **bad_wr);
/* Entries waiting, for the SRQ limit event. */
u32 sroce_rq_count(struct sroce_rq *rq);
void sroce_srq_check_limit(struct sroce_srq *srq);
/*
 * The SRQ holds a WQE or index user space corrupted: marks it failed and
 * raises IB_EVENT_SRQ_ERR, once.  Every QP that reaches it fails from then
 * on (no SRQ is flushed on a QP's failure, so the corrupt WQE stays).
 */
void sroce_srq_fail(struct sroce_srq *srq);

/* Lockless: a pop racing with the failure meets the corrupt WQE itself. */
static inline bool sroce_srq_failed(const struct sroce_srq *srq)
{
	return READ_ONCE(srq->failed);
}

struct sroce_srq *sroce_xrc_srq_lookup(struct sroce_qp *qp, u32 srqn);

int sroce_create_srq(struct ib_srq *srq, struct ib_srq_init_attr *attr,
		     struct ib_udata *udata);
int sroce_modify_srq(struct ib_srq *srq, struct ib_srq_attr *attr,
		     enum ib_srq_attr_mask mask, struct ib_udata *udata);
int sroce_query_srq(struct ib_srq *srq, struct ib_srq_attr *attr);
int sroce_destroy_srq(struct ib_srq *srq, struct ib_udata *udata);
int sroce_post_srq_recv(struct ib_srq *srq, const struct ib_recv_wr *wr,
			const struct ib_recv_wr **bad_wr);

#endif /* SROCE_RQ_H */

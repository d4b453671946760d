/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Completion queues (cq.c).  Owns struct sroce_cq: its lock is taken by
 * every QP that completes there, from any context.
 */
#ifndef SROCE_CQ_H
#define SROCE_CQ_H

#include <linux/spinlock.h>
#include <rdma/ib_verbs.h>

#include "ring.h"

/* ------------------------------------------------------------------------
 * Completion queues (cq.c).
 */
struct sroce_cq {
	struct ib_cq ib;
	spinlock_t lock;		/* producers: every QP that completes here */
	struct sroce_ring ring;		/* user: sroce_cqe; kernel: ib_wc */
	bool user;
	u32 prod;			/* ours; published to ring.ctrl for users */
	u32 solicited_end;		/* user CQs: ours; see sroce_ring_ctrl */
	u32 cons;			/* kernel CQs only */
	u32 notify;			/* kernel CQs: SROCE_CQ_ARM_* */
	bool overflow;
	bool timestamps;		/* CQEs carry completion timestamps */
};

static inline struct sroce_cq *to_scq(struct ib_cq *cq)
{
	return container_of(cq, struct sroce_cq, ib);
}

/*
 * Adds one completion.  @wc uses kernel encodings; a user CQ gets it
 * translated.  Raises the completion event when armed.  -ENOSPC (and an
 * IB_EVENT_CQ_ERR) when the CQ overflows.
 */
void sroce_cq_post(struct sroce_cq *cq, const struct ib_wc *wc, bool solicited);

int sroce_create_cq(struct ib_cq *cq, const struct ib_cq_init_attr *attr,
		    struct ib_udata *udata);
int sroce_destroy_cq(struct ib_cq *cq, struct ib_udata *udata);
int sroce_resize_cq(struct ib_cq *cq, int cqe, struct ib_udata *udata);
int sroce_poll_cq(struct ib_cq *cq, int num, struct ib_wc *wc);
int sroce_req_notify_cq(struct ib_cq *cq, enum ib_cq_notify_flags flags);

#endif /* SROCE_CQ_H */

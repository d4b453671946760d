/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The SQ mark page of a user context (sqmark.c): one bit per send queue,
 * set by the process when it posts to a QP whose engine is idle, taken by
 * the send-queue poller (doorbell.c).  Layout and protocol:
 * SROCE_SQ_MARKED in include/uapi/sroce-abi.h.
 */
#ifndef SROCE_SQMARK_H
#define SROCE_SQMARK_H

#include <linux/list.h>
#include <linux/xarray.h>

#include "../include/uapi/sroce-abi.h"

struct ib_ucontext;
struct rdma_user_mmap_entry;
struct sroce_qp;
struct sroce_qp_handle;

struct sroce_sq_marks {
	struct sroce_sq_mark_page *page;	/* NULL: the context has none */
	struct rdma_user_mmap_entry *mmap_entry;
	struct xarray qps;		/* mark -> struct sroce_qp_handle */
	struct sroce_dev *sdev;		/* the context's: its sq_poll_idle_us */
	u32 words;			/* of page->marks that a mark was ever
					 * given in: what the poller reads
					 */
	/* The poller's (doorbell.c), under its lock; watching also read
	 * without it, as a hint
	 */
	struct list_head poll_node;	/* on its list while it watches */
	unsigned long poll_until;	/* jiffies: watched until then */
	bool watching;			/* page->watching set */
	u32 cursor;			/* the word its next look starts at */
};

/* At ALLOC_UCONTEXT: the page, described in @resp (length 0 if none). */
void sroce_sq_marks_init(struct sroce_sq_marks *m, struct ib_ucontext *uctx,
			 struct sroce_alloc_ucontext_resp *resp);
/* At DEALLOC_UCONTEXT, after every QP of the context is gone. */
void sroce_sq_marks_free(struct sroce_sq_marks *m);

/* A mark for a new QP's send queue, or SROCE_SQ_NO_MARK; its QP is
 * found through it once published (when the QP is whole).
 */
u32 sroce_sq_mark_get(struct sroce_sq_marks *m);
void sroce_sq_mark_publish(struct sroce_sq_marks *m, u32 mark,
			   struct sroce_qp_handle *h);
/* Before destroy waits for the QP's references: no lookup finds it after. */
void sroce_sq_mark_put(struct sroce_sq_marks *m, u32 mark);

/* Sets @mark, as the process would: the poller comes back to its QP. */
void sroce_sq_mark_set(struct sroce_sq_marks *m, u32 mark);
/*
 * Takes marks, one pass at most from where the last call stopped: the
 * QPs (each with a reference) of up to @max of them in @qps; marks beyond
 * @max stay set.  Marks of no QP (gone, or set by a process that made
 * them up) are dropped.
 */
unsigned int sroce_sq_marks_take(struct sroce_sq_marks *m, struct sroce_qp **qps,
				 unsigned int max);
/*
 * Every mark, in one pass over the page: @fn(qp) for each QP marked, with
 * a reference that is dropped after.  After page->watching was cleared.
 */
void sroce_sq_marks_drain(struct sroce_sq_marks *m,
			  void (*fn)(struct sroce_qp *qp));

#endif /* SROCE_SQMARK_H */

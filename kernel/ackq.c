// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Coalesced ACKs: one ACK per QP per receive batch.
 *
 * A requester streaming one-packet messages asks for an ACK on each (the
 * last packet of every message does), and answering each at once doubled
 * the packets of a 64-byte WRITE stream: an skb allocated, sent, received
 * and parsed for every ACK, the largest part of the per-message cost
 * (docs/bench/profile.md).  One ACK for the newest PSN acknowledges every
 * earlier one (ACKs are cumulative), so the responder only
 * notes the newest and sends it when the batch of packets it came in
 * with has been received: from this CPU's tasklet, which runs right after
 * the softirq work that queued it (the backlog or NAPI poll of the veth,
 * the NIC, or localrx.c's queue).  A lone message's ACK therefore leaves
 * in the same softirq pass as before, not after a timer; a burst of 32
 * gets one.  Any other answer of the QP (a NAK, an atomic's ACK, a READ
 * response) sends the noted ACK first, so the peer sees them in order.
 *
 * The per-CPU list is touched only on its CPU with BH off: queued by the
 * responder under resp.lock, taken by the tasklet.  A QP is on at most one
 * list (ack_queued, under resp.lock) and holds a reference while it is.
 */
#include <linux/interrupt.h>
#include <linux/percpu.h>

#include "sroce.h"

struct sroce_ackq {
	struct list_head qps;
	struct tasklet_struct tasklet;
};

static DEFINE_PER_CPU(struct sroce_ackq, sroce_ackq);

static void ackq_run(struct tasklet_struct *t)
{
	struct sroce_ackq *aq = container_of(t, struct sroce_ackq, tasklet);
	struct sroce_qp *qp, *next;
	LIST_HEAD(batch);

	list_splice_init(&aq->qps, &batch);
	list_for_each_entry_safe(qp, next, &batch, resp.ack_node) {
		list_del(&qp->resp.ack_node);
		sroce_resp_ack_flush(qp);
		sroce_qp_put(qp);
	}
}

/*
 * Queues @qp, whose resp.ack_psn and ack_msn name the ACK it holds back,
 * for this CPU's tasklet: the ACK leaves when the receive batch ends.
 * Caller holds resp.lock, so BH is off.
 * False if the QP is being destroyed and cannot be queued: the caller
 * sends the ACK itself.
 */
bool sroce_ackq_add(struct sroce_qp *qp)
{
	struct sroce_ackq *aq;

	lockdep_assert_held(&qp->resp.lock);
	if (qp->resp.ack_queued)
		return true;
	if (!sroce_qp_get_handle(qp->handle))
		return false;
	qp->resp.ack_queued = true;
	aq = this_cpu_ptr(&sroce_ackq);
	if (list_empty(&aq->qps))
		tasklet_schedule(&aq->tasklet);
	list_add_tail(&qp->resp.ack_node, &aq->qps);
	return true;
}

void sroce_ackq_init(void)
{
	int cpu;

	for_each_possible_cpu(cpu) {
		struct sroce_ackq *aq = per_cpu_ptr(&sroce_ackq, cpu);

		INIT_LIST_HEAD(&aq->qps);
		tasklet_setup(&aq->tasklet, ackq_run);
	}
}

/* After the last device is gone: every list was emptied by its tasklet. */
void sroce_ackq_exit(void)
{
	int cpu;

	for_each_possible_cpu(cpu)
		tasklet_kill(&per_cpu_ptr(&sroce_ackq, cpu)->tasklet);
}

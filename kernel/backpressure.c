// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Local backpressure, the way a PFC pause reaches a software sender: the
 * netdev queue stops (net.c then does not hand the packet over at all),
 * the qdisc fills and then refuses or drops at enqueue.  A refused
 * packet was never on the wire, so it is not lost:
 * the send engine keeps it (rebuilds it unchanged from the WQE), stops
 * pulling work and tries again later, backing off exponentially while
 * the refusals go on.  Meanwhile the retransmit timer is frozen, because
 * a packet stuck behind a local pause is not a loss either.  With DCQCN
 * on, a refusal is also a congestion signal and cuts the QP's rate as a
 * CNP would (cc.c): backing off alone would send at the old rate into
 * the same full queue as soon as it drains.
 *
 * Only the QP's send work changes this state; the retransmit timer
 * reads it.
 */
#include "sroce.h"

/* First retry soon (a qdisc drains fast); double up to ~a 10G PFC pause. */
#define SROCE_TX_BACKOFF_MIN_NS	(50 * NSEC_PER_USEC)
#define SROCE_TX_BACKOFF_MAX_NS	(4 * NSEC_PER_MSEC)

void sroce_tx_refused(struct sroce_qp *qp)
{
	u64 now = ktime_get_ns();

	sroce_count(qp->sdev, SROCE_CNT_TX_REFUSED, 1);
	sroce_cc_local_pushback(qp);
	if (!qp->sched.tx_paused_since) {
		WRITE_ONCE(qp->sched.tx_paused_since, now);
		qp->sched.tx_backoff_ns = SROCE_TX_BACKOFF_MIN_NS;
	} else if (qp->sched.tx_backoff_ns < SROCE_TX_BACKOFF_MAX_NS) {
		qp->sched.tx_backoff_ns *= 2;
	}
	qp->sched.tx_backoff = true;
	sroce_sched_kick_in(qp, qp->sched.tx_backoff_ns);
}

void sroce_tx_resumed(struct sroce_qp *qp)
{
	u64 since = qp->sched.tx_paused_since;

	if (likely(!since))
		return;
	WRITE_ONCE(qp->sched.tx_paused_since, 0);
	/* The packet that just went is the one pushed back: counted once,
	 * however many tries it took, so drops and resends can be compared.
	 */
	sroce_count(qp->sdev, SROCE_CNT_TX_RESENT, 1);
	sroce_count(qp->sdev, SROCE_CNT_TX_PAUSE_US,
		    div_u64(ktime_get_ns() - since, NSEC_PER_USEC));
	/* What waited behind the pause only now really leaves: give its
	 * ACKs a whole timeout from here.
	 */
	if (qp->timeout && sroce_retrans_pending(qp))
		sroce_retrans_start(qp);
}

bool sroce_tx_paused(const struct sroce_qp *qp)
{
	return READ_ONCE(qp->sched.tx_paused_since) != 0;
}

/*
 * Not the stack but our own memory: a page of an ODP MR the next packet
 * needs is being faulted in (odp.c).  The packet is rebuilt from the WQE
 * as after a refusal; come back when a fault has typically finished.
 */
#define SROCE_ODP_RETRY_NS	(100 * NSEC_PER_USEC)

void sroce_odp_wait(struct sroce_qp *qp)
{
	qp->sched.tx_backoff = true;
	sroce_sched_kick_in(qp, SROCE_ODP_RETRY_NS);
}

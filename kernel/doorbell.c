// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * When the send engine of a user QP may sleep, and when it must ask the
 * process for a doorbell (the NEED_DOORBELL flag in the shared SQ ring).
 *
 * The provider makes a doorbell syscall only when it sees that flag.
 * Sleeping the moment the ring runs dry would cost a syscall per burst
 * for a process that posts in bursts (perftest posts a batch, polls its
 * CQ, posts again; the gap is one CQ poll).  So after doing work the
 * engine lingers, like NAPI busy polling: a soft hrtimer looks at the
 * ring's producer index every sq_poll_us for sq_linger_us, and only then
 * does the engine raise the flag and sleep.  Lingering costs a timer tick
 * per poll, and a WQE posted meanwhile waits for the next poll, which
 * under TCG comes far later than asked: measured in the guest (idle host,
 * ib_write_bw -s 64 across / ib_send_lat -s 2 typical), linger 0: 0.003 to
 * 0.016 syscalls per WR, 85-96 us; 50 us: 0.0009, 150 us; 500 us: 0.0009,
 * 627 us.  Off is already within a twentieth of a syscall per WR, so
 * lingering is off by default: a knob for hosts where syscalls cost more
 * than latency.
 */
#include <linux/moduleparam.h>
#include "sroce.h"

static unsigned int sq_linger_us;
module_param(sq_linger_us, uint, 0644);
MODULE_PARM_DESC(sq_linger_us,
		 "how long an idle send engine keeps polling its ring before it asks for a doorbell (us, 0: never)");

static unsigned int sq_poll_us = 20;
module_param(sq_poll_us, uint, 0644);
MODULE_PARM_DESC(sq_poll_us, "ring poll interval while lingering (us, at least 1)");

static u64 poll_ns(void)
{
	return (u64)max(READ_ONCE(sq_poll_us), 1U) * NSEC_PER_USEC;
}

/* Did the process post a WQE the engine has not taken yet?  A hint. */
static bool sq_ring_has_new(struct sroce_qp *qp)
{
	return smp_load_acquire(&qp->sq.ctrl->producer) != READ_ONCE(qp->fetch);
}

/* Still within the linger period after the engine's last work? */
static bool sq_lingering(struct sroce_qp *qp)
{
	u64 linger_ns = (u64)READ_ONCE(sq_linger_us) * NSEC_PER_USEC;

	return linger_ns &&
	       ktime_get_ns() - READ_ONCE(qp->sched.last_work_ns) < linger_ns;
}

enum hrtimer_restart sroce_linger_timer(struct hrtimer *t)
{
	struct sroce_qp *qp = container_of(t, struct sroce_qp, sched.linger_timer);

	if (READ_ONCE(qp->state) != IB_QPS_RTS)
		return HRTIMER_NORESTART;
	/* New work, or the end of lingering: the engine decides. */
	if (sq_ring_has_new(qp) || !sq_lingering(qp)) {
		sroce_sched_queue(qp);
		return HRTIMER_NORESTART;
	}
	hrtimer_forward_now(t, ns_to_ktime(poll_ns()));
	return HRTIMER_RESTART;
}

/* A clock read per run of the work: only while lingering is on. */
void sroce_sq_worked(struct sroce_qp *qp)
{
	if (READ_ONCE(sq_linger_us))
		WRITE_ONCE(qp->sched.last_work_ns, ktime_get_ns());
}

/*
 * Whether the work may stop now.  If it is only blocked (send window,
 * READ credits, RNR wait, local backpressure) an ACK or a timer brings it
 * back.  If it is idle it lingers, then asks the process for a doorbell
 * and looks once more, so a WQE posted in between is never left behind.
 * Caller holds sq_lock.
 */
bool sroce_sq_may_sleep(struct sroce_qp *qp)
{
	if (!qp->user || qp->req_cur != qp->fetch || qp->rnr_wait ||
	    qp->sched.tx_backoff)
		return true;
	/* A full RC window: the ACK that opens it runs us again and picks up
	 * new WQEs, without a doorbell.  With room in the window a WQE posted
	 * now must go now: waiting for an ACK would cost it a round trip, and
	 * behind a paused link no ACK comes at all (the QP would sit on a few
	 * queued packets until its retransmit timer fired, instead of filling
	 * the queue until it refuses, which is how a pause becomes visible).
	 */
	if (sroce_req_window_full(qp))
		return true;
	if (sq_lingering(qp)) {
		sroce_sched_linger(qp, poll_ns());
		return true;
	}
	WRITE_ONCE(qp->sq.ctrl->notify, SROCE_SQ_NEED_DOORBELL);
	smp_mb();	/* pairs with the provider's fence after its producer store */
	if (smp_load_acquire(&qp->sq.ctrl->producer) == qp->fetch)
		return true;
	WRITE_ONCE(qp->sq.ctrl->notify, 0);
	return false;
}

/*
 * After an ACK: whether the engine has anything to do.  ACKs run it only
 * then, so an ACK that merely retires a message costs no run.  A WQE the
 * process posted while the engine was blocked on ACKs rang no doorbell
 * (none was asked for), so it counts as work here.  If the QP went idle
 * instead, this asks the process for its next doorbell, as the engine
 * would.  Caller holds sq_lock.
 */
bool sroce_sq_needs_run(struct sroce_qp *qp)
{
	if (qp->req_cur != qp->fetch || test_bit(0, &qp->need_retransmit))
		return true;
	if (qp->user && sq_ring_has_new(qp))
		return true;
	return !sroce_sq_may_sleep(qp);
}

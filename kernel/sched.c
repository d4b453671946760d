// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The transmit scheduler of a QP: who runs the send engine, on which CPU,
 * and the timers that bring it back (local ACK timeout, RNR wait, kick).
 * What those timers decide lives with their policies: comp.c (timeouts,
 * RNR), backpressure.c, cc.c (pacing); doorbell.c decides when a user QP
 * needs a doorbell, and its poller runs the engine through here;
 * arming and stopping them lives here, with one init, one quiesce (RESET)
 * and one stop (destroy), after which nothing re-arms.
 *
 * Who runs the engine.  A doorbell (post_send) runs it right there, so a
 * message costs no thread wake-up; everything else (ACKs, timers, callers
 * holding QP locks or with interrupts off) queues the QP's work item,
 * which also takes over when a run used its budget.  The receive softirq
 * must not send a window's worth of packets itself: they would queue
 * behind it on this CPU's backlog.  One runner at a time: a caller that
 * finds the engine busy leaves SROCE_SEND_AGAIN for the runner, which
 * looks again before it stops.
 *
 * The engine runs on one CPU at a time, the one that last ran it, and
 * the work goes there: software network devices (veth, loopback) hand
 * packets to the sending CPU's backlog, and two CPUs' backlogs would
 * reorder one flow.  A doorbell from another CPU takes the engine over
 * only when none of the QP's packets can still be queued (every PSN
 * acknowledged); until then it hands over to the work item.
 *
 * A work item belongs to the CPU it was queued on until it has run, and
 * one queued again while it runs stays on the CPU it runs on (so that it
 * never runs twice at once).  So when the engine moved (a doorbell took
 * it over on another CPU) while the work was pending on the old CPU, a
 * later request here would be absorbed by that stale item: it is carried
 * by `moved` instead.  Without that, a kick or an ACK waited for
 * whenever the old CPU got round to its work, and an item handing itself
 * over from the wrong CPU came straight back there, round and round,
 * while the QP sent nothing (seen: qp_edges sqd-drain under load).
 */
#include "sroce.h"

static bool sched_dying(const struct sroce_qp *qp)
{
	return READ_ONCE(qp->sched.dying);
}

void sroce_sched_queue(struct sroce_qp *qp)
{
	struct sroce_sched *s = &qp->sched;
	int cpu = READ_ONCE(s->cpu);

	if (sched_dying(qp))
		return;
	if (queue_work_on(cpu, sroce_wq, &s->work))
		WRITE_ONCE(s->work_cpu, cpu);
	else if (READ_ONCE(s->work_cpu) != cpu)
		queue_work_on(cpu, sroce_wq, &s->moved);
}

/* Nothing of ours in flight, so the engine may move to another CPU. */
static bool sched_quiet(const struct sroce_qp *qp)
{
	return !sroce_qp_reliable(qp) ||
	       READ_ONCE(qp->req.comp_psn) == READ_ONCE(qp->req.psn);
}

/* Packets a run of the engine may send before it lets others run. */
#define SROCE_SEND_BUDGET	64
/* ... and a run from an ACK (sroce_sched_run_acked): what one retires. */
#define SROCE_ACK_BUDGET	SROCE_ACKREQ_EVERY

/*
 * Runs the engine on @cpu, this CPU (which cannot change under the
 * caller), for as long as someone asks for it.  True if work is left over
 * for the work item: the budget ran out, or the engine belongs to another
 * CPU while packets of ours may still queue there.
 */
static bool sched_loop(struct sroce_qp *qp, int cpu, int budget)
{
	struct sroce_sched *s = &qp->sched;
	bool more = false;

	set_bit(SROCE_SEND_AGAIN, &s->flags);
	/* AGAIN before we look at RUNNING; pairs with the runner's barrier
	 * between releasing RUNNING and looking at AGAIN: either it sees
	 * our AGAIN and runs again, or we take RUNNING.
	 */
	smp_mb__after_atomic();
	while (test_bit(SROCE_SEND_AGAIN, &s->flags)) {
		if (test_and_set_bit_lock(SROCE_SEND_RUNNING, &s->flags))
			break;		/* the runner will see AGAIN */
		if (cpu != READ_ONCE(s->cpu) && !sched_quiet(qp)) {
			clear_bit_unlock(SROCE_SEND_RUNNING, &s->flags);
			return true;	/* the work item, on s->cpu */
		}
		clear_bit(SROCE_SEND_AGAIN, &s->flags);
		/* AGAIN cleared before the engine reads the rings; pairs
		 * with the barrier after set_bit above: work posted after
		 * this clear sets AGAIN again and is not lost.
		 */
		smp_mb__after_atomic();
		WRITE_ONCE(s->cpu, cpu);
		more = sroce_send_engine(qp, budget);
		clear_bit_unlock(SROCE_SEND_RUNNING, &s->flags);
		/* RUNNING released before AGAIN is read; pairs with the
		 * barrier after set_bit(AGAIN).
		 */
		smp_mb__after_atomic();
		if (more)
			break;
	}
	return more;
}

/* RESET (and destroy) quiesces the QP: nothing may queue more. */
static bool sched_stopped(const struct sroce_qp *qp)
{
	return READ_ONCE(qp->state) == IB_QPS_RESET || sched_dying(qp);
}

/*
 * Runs the engine; @from is the work item that called, NULL for a
 * doorbell.  What is left over goes to a work item that is not running
 * now, so that it can run on the engine's CPU.
 */
static void sched_run_from(struct sroce_qp *qp, struct work_struct *from)
{
	struct sroce_sched *s = &qp->sched;
	bool more;

	if (sched_stopped(qp))
		return;
	/* Inline only in process context: a softirq poster (a kernel ULP
	 * completing in softirq) would queue the packets behind itself.
	 */
	if (!in_task() || irqs_disabled()) {
		sroce_sched_queue(qp);
		return;
	}
	migrate_disable();
	more = sched_loop(qp, raw_smp_processor_id(), SROCE_SEND_BUDGET);
	migrate_enable();
	if (!more)
		return;
	if (from == &s->work) {
		if (!sched_dying(qp))
			queue_work_on(READ_ONCE(s->cpu), sroce_wq, &s->moved);
	} else {
		sroce_sched_queue(qp);
	}
}

/*
 * An ACK or a response let the engine go on (comp.c, in the receive
 * softirq): it sends from here, as TCP sends from its ACK processing,
 * but only SROCE_ACK_BUDGET packets, about what that ACK retired, so the
 * packets queued behind this softirq on this CPU's backlog stay within
 * the send window; the work item does the rest.  Leaving it all to the
 * work item starved the engine wherever the application busy-polls its
 * CQ on the same CPU (perftest, UCX, MPI): a kworker waits for the
 * scheduler to preempt the poller, while the window sat open.  Measured
 * (docs/bench/profile.md), SEND 1 MiB ran at 0.68-0.85x rxe, whose 6.1
 * tasklets send from softirq, with 40% of the samples in the kworker.
 */
void sroce_sched_run_acked(struct sroce_qp *qp)
{
	if (sched_stopped(qp))
		return;
	if (!in_serving_softirq() || irqs_disabled() ||
	    sched_loop(qp, smp_processor_id(), SROCE_ACK_BUDGET))
		sroce_sched_queue(qp);
}

void sroce_sched_run(struct sroce_qp *qp)
{
	sched_run_from(qp, NULL);
}

/*
 * The poller runs the engine as a doorbell would, but keeps what its
 * budget left over: a work item queued on its CPU would be one more task
 * there, which makes the poller give the CPU up.  What belongs to the
 * engine's CPU elsewhere goes to the work item there.
 */
bool sroce_sched_run_polled(struct sroce_qp *qp)
{
	bool more;
	int cpu;

	if (sched_stopped(qp))
		return false;
	migrate_disable();
	cpu = raw_smp_processor_id();
	more = sched_loop(qp, cpu, SROCE_SEND_BUDGET);
	migrate_enable();
	if (more && READ_ONCE(qp->sched.cpu) != cpu) {
		sroce_sched_queue(qp);
		return false;
	}
	return more;
}

bool sroce_sched_try_right(struct sroce_qp *qp)
{
	return !test_and_set_bit_lock(SROCE_SEND_RUNNING, &qp->sched.flags);
}

void sroce_sched_release_right(struct sroce_qp *qp)
{
	clear_bit_unlock(SROCE_SEND_RUNNING, &qp->sched.flags);
	/* Pairs with the barrier after set_bit(AGAIN) in sched_loop(). */
	smp_mb__after_atomic();
	/* A runner that found us holding the right left its AGAIN to us. */
	if (test_bit(SROCE_SEND_AGAIN, &qp->sched.flags))
		sroce_sched_queue(qp);
}

static void sched_work(struct work_struct *work)
{
	sched_run_from(container_of(work, struct sroce_qp, sched.work), work);
}

static void sched_moved(struct work_struct *work)
{
	sched_run_from(container_of(work, struct sroce_qp, sched.moved), work);
}

/* ---- timers ---------------------------------------------------------------- */

static enum hrtimer_restart sched_kick_timer(struct hrtimer *t)
{
	struct sroce_qp *qp = container_of(t, struct sroce_qp, sched.kick_timer);
	enum ib_qp_state state = READ_ONCE(qp->state);

	/* RTR too: a responder paces and retries its READ responses. */
	if (state == IB_QPS_RTS || state == IB_QPS_SQD || state == IB_QPS_RTR)
		sroce_sched_queue(qp);
	return HRTIMER_NORESTART;
}

void sroce_sched_kick_in(struct sroce_qp *qp, u64 ns)
{
	if (!sched_dying(qp))
		hrtimer_start(&qp->sched.kick_timer, ns_to_ktime(ns),
			      HRTIMER_MODE_REL_SOFT);
}

void sroce_sched_kick_at(struct sroce_qp *qp, u64 at_ns)
{
	if (!sched_dying(qp))
		hrtimer_start(&qp->sched.kick_timer, ns_to_ktime(at_ns),
			      HRTIMER_MODE_ABS_SOFT);
}

/*
 * (Re)starts the local ACK timer for a full timeout from now (comp.c's
 * sroce_retrans_timeout_ns).  Rounded up to whole jiffies plus one, since
 * the current jiffy is partly over: never earlier than asked (the timer
 * wheel only ever fires late).
 */
void sroce_retrans_start(struct sroce_qp *qp)
{
	u64 delay = DIV_ROUND_UP_ULL(sroce_retrans_timeout_ns(qp),
				     NSEC_PER_SEC / HZ);

	if (!sched_dying(qp))
		mod_timer(&qp->sched.retrans_timer,
			  jiffies + (unsigned long)delay + 1);
}

void sroce_retrans_stop(struct sroce_qp *qp)
{
	timer_delete(&qp->sched.retrans_timer);
}

bool sroce_retrans_pending(const struct sroce_qp *qp)
{
	return timer_pending(&qp->sched.retrans_timer);
}

/* Caller holds req.lock: rnr_wait is the completer's. */
void sroce_sched_rnr_wait(struct sroce_qp *qp, u64 ns)
{
	qp->req.rnr_wait = true;
	sroce_retrans_stop(qp);
	if (!sched_dying(qp))
		hrtimer_start(&qp->sched.rnr_timer, ns_to_ktime(ns),
			      HRTIMER_MODE_REL_SOFT);
}

void sroce_sched_stop_retry_timers(struct sroce_qp *qp)
{
	sroce_retrans_stop(qp);
	hrtimer_try_to_cancel(&qp->sched.rnr_timer);
}

/* ---- lifetime -------------------------------------------------------------- */

void sroce_sched_init(struct sroce_qp *qp)
{
	struct sroce_sched *s = &qp->sched;

	INIT_WORK(&s->work, sched_work);
	INIT_WORK(&s->moved, sched_moved);
	timer_setup(&s->retrans_timer, sroce_retrans_timer, 0);
	hrtimer_setup(&s->rnr_timer, sroce_rnr_timer, CLOCK_MONOTONIC,
		      HRTIMER_MODE_REL_SOFT);
	hrtimer_setup(&s->kick_timer, sched_kick_timer, CLOCK_MONOTONIC,
		      HRTIMER_MODE_REL_SOFT);
}

/*
 * Stops the engine and the timers of a QP already in RESET.  In RESET
 * neither the engine nor a timer starts the other again, but one may be
 * doing so right now: wait out the work, then the timers, then any work
 * a timer queued meanwhile.
 */
void sroce_sched_quiesce(struct sroce_qp *qp)
{
	struct sroce_sched *s = &qp->sched;

	cancel_work_sync(&s->work);
	cancel_work_sync(&s->moved);
	timer_delete_sync(&s->retrans_timer);
	hrtimer_cancel(&s->rnr_timer);
	hrtimer_cancel(&s->kick_timer);
	cancel_work_sync(&s->work);
	cancel_work_sync(&s->moved);
	/* A run the receive path started before RESET may still be going. */
	while (test_bit(SROCE_SEND_RUNNING, &s->flags))
		cond_resched();
}

/*
 * For good (destroy): from here every arming function refuses.  An arm
 * that read the flag just before is one of the work items or timers that
 * quiesce waits out in order, so it is cancelled behind it.
 */
void sroce_sched_stop(struct sroce_qp *qp)
{
	WRITE_ONCE(qp->sched.dying, true);
	smp_mb();	/* the flag before the cancels' first look */
	sroce_sched_quiesce(qp);
}

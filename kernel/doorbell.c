// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * When the send engine of a user QP may sleep, and when it must ask the
 * process for a doorbell (the NEED_DOORBELL flag in the shared SQ ring).
 *
 * The provider makes a doorbell syscall only when it sees that flag.  On
 * a path with any delay, ACKs keep the engine busy and pick up new WQEs,
 * so a stream rings almost never.  On a path with none (loopback, veth)
 * the whole round trip finishes inside the doorbell and the engine is
 * idle again when the syscall returns, so without help every post rings.
 *
 * The help is the send-queue poller, one kernel thread for the module,
 * as io_uring's SQPOLL thread takes submissions: an engine going idle
 * hands its QP over instead of asking for a doorbell, and the thread
 * watches the QP's producer index for sq_poll_idle_us after its last
 * work, running the engine itself when a WQE appears.  It uses a CPU the
 * process leaves idle (a CPU that halted through about half of every
 * WRITE run before, docs/bench/profile.md); it never competes for one:
 * the moment another task wants its CPU (need_resched(), or a second
 * runnable task, as vhost's and KVM's busy polling check) it gives every
 * QP back (NEED_DOORBELL, then one more look at the ring) and sleeps,
 * taking no QPs for a while if it keeps finding its CPU taken
 * (sqpoll_back_off), so two busy-polling processes on two CPUs (a
 * latency test) keep their doorbells and lose no time to it.  With
 * nothing to watch it sleeps: an idle device costs no CPU.
 *
 * A hrtimer that polled the ring instead was tried first: under TCG its
 * polls came far later than asked, and 50 us of it added ~65 us to a
 * ping-pong.
 */
#include <linux/kthread.h>
#include <linux/moduleparam.h>
#include <linux/sched.h>
#include <linux/sched/stat.h>
#include "sroce.h"

static unsigned int sq_poll_idle_us = 2000;
module_param(sq_poll_idle_us, uint, 0644);
MODULE_PARM_DESC(sq_poll_idle_us,
		 "how long the send-queue poller watches an idle user QP before the process must ring again (us, rounded up to jiffies; 0: no poller)");

/* At most this many jiffies without handovers after it gave way. */
#define SQPOLL_BACKOFF_MAX	8
/* QPs looked at per hold of the lock: bounds the bottom-half-off time. */
#define SQPOLL_BATCH		32
/*
 * QPs watched at most: one thread looks at each in turn, so a WQE waits
 * longer for it the more there are (with thousands, longer than a
 * doorbell takes: 8192 QPs streamed at 0.38x the rate of 8 with every
 * idle QP watched, 0.60x with doorbells).  More ring.
 */
#define SQPOLL_MAX_QPS		128

static struct {
	spinlock_t lock;		/* all of this, and each QP's sched.poll_node */
	struct list_head qps;		/* watched, least recently looked at first */
	unsigned int nr_qps;		/* on qps */
	bool active;			/* the thread runs and watches: processes
					 * whose QPs it has need not ring */
	unsigned long quiet_until;	/* jiffies: no handovers before */
	struct task_struct *task;
	/* The thread's own */
	bool worked;			/* ran an engine since it last gave way */
	unsigned int backoff;		/* jiffies it last stayed away */
} sqpoll;

/* Did the process post a WQE the engine has not taken yet?  A hint. */
static bool sq_ring_has_new(struct sroce_qp *qp)
{
	return smp_load_acquire(&qp->sq.ctrl->producer) != READ_ONCE(qp->req.fetch);
}

/*
 * Sets the SQ's notify word, then looks once more, so a WQE posted in
 * between either rang or is seen: with NEED_DOORBELL the process rings
 * from now on; with 0 the poller's next look finds it.  True if one was
 * seen.
 */
static bool sq_set_notify(struct sroce_qp *qp, u32 notify)
{
	WRITE_ONCE(qp->sq.ctrl->notify, notify);
	smp_mb();	/* pairs with the provider's fence after its producer store */
	return sq_ring_has_new(qp);
}

static unsigned long sqpoll_idle_jiffies(void)
{
	/* +1: the current jiffy is partly over. */
	return usecs_to_jiffies(READ_ONCE(sq_poll_idle_us)) + 1;
}

/*
 * The engine of @qp is going idle: the poller watches its ring.  True if
 * the poller is running and takes over from the doorbell; false if the
 * process must still ring (the poller, woken here, takes the QP over
 * when it gets a CPU: until then a WQE does not wait for it).  Caller
 * holds req.lock.
 */
static bool sqpoll_watch(struct sroce_qp *qp)
{
	struct sroce_sched *s = &qp->sched;
	bool taken;

	if (!READ_ONCE(sq_poll_idle_us) ||
	    time_before(jiffies, READ_ONCE(sqpoll.quiet_until)))
		return false;
	spin_lock_bh(&sqpoll.lock);
	if (list_empty(&s->poll_node)) {
		/* The list's reference: destroy waits until we let go.  The
		 * handle lives as long as the QP, whose engine is running.
		 */
		if (sqpoll.nr_qps >= SQPOLL_MAX_QPS ||
		    !sroce_qp_get_handle(qp->handle)) {
			spin_unlock_bh(&sqpoll.lock);
			return false;
		}
		list_add_tail(&s->poll_node, &sqpoll.qps);
		sqpoll.nr_qps++;
	}
	s->poll_until = jiffies + sqpoll_idle_jiffies();
	taken = sqpoll.active;
	if (taken)	/* a give-way racing with this run may have asked */
		WRITE_ONCE(qp->sq.ctrl->notify, 0);
	spin_unlock_bh(&sqpoll.lock);
	if (!taken)
		wake_up_process(sqpoll.task);
	return taken;
}

/*
 * The poller lets go of @qp: its process rings again.  Work the poller's
 * last run left over (its budget ran out) shows in no ring index, and no
 * ACK need come for it, so it goes to the work item with any new WQE.
 * Lock held.
 */
static void sqpoll_unwatch(struct sroce_qp *qp)
{
	bool again = qp->sched.poll_again;

	list_del_init(&qp->sched.poll_node);
	sqpoll.nr_qps--;
	qp->sched.poll_again = false;
	if (sq_set_notify(qp, SROCE_SQ_NEED_DOORBELL) || again)
		sroce_sched_queue(qp);
	sroce_qp_put(qp);
}

/* Stops watching, gives every QP back.  Lock held. */
static void sqpoll_deactivate(void)
{
	sqpoll.active = false;
	while (!list_empty(&sqpoll.qps))
		sqpoll_unwatch(list_first_entry(&sqpoll.qps, struct sroce_qp,
						sched.poll_node));
}

/*
 * Looks at up to SQPOLL_BATCH watched QPs, least recently looked at
 * first: takes over the doorbell of those handed over while it slept,
 * lets go of those idle for long enough or no longer sending, and runs
 * the engine of those with work.  True if any had work.  Only this
 * thread removes QPs from the list, so the ones it runs stay on it, with
 * the list's reference, after the lock drops.
 */
static bool sqpoll_scan(void)
{
	struct sroce_qp *run[SQPOLL_BATCH];
	unsigned long now = jiffies;
	int n = 0, seen, i;

	spin_lock_bh(&sqpoll.lock);
	sqpoll.active = true;
	for (seen = 0; seen < SQPOLL_BATCH && !list_empty(&sqpoll.qps); seen++) {
		struct sroce_qp *qp = list_first_entry(&sqpoll.qps,
						       struct sroce_qp,
						       sched.poll_node);
		bool new;

		if (READ_ONCE(qp->state) != IB_QPS_RTS) {
			sqpoll_unwatch(qp);	/* destroy waits for this */
			continue;
		}
		if (READ_ONCE(qp->sq.ctrl->notify))
			new = sq_set_notify(qp, 0);
		else
			new = sq_ring_has_new(qp);
		if (new || qp->sched.poll_again) {
			qp->sched.poll_until = now + sqpoll_idle_jiffies();
			run[n++] = qp;
		} else if (time_after(now, qp->sched.poll_until)) {
			sqpoll_unwatch(qp);
			continue;
		}
		list_move_tail(&qp->sched.poll_node, &sqpoll.qps);
	}
	spin_unlock_bh(&sqpoll.lock);
	sqpoll.worked |= n > 0;
	for (i = 0; i < n; i++) {
		sroce_count(run[i]->sdev, SROCE_CNT_SQ_POLLED, 1);
		run[i]->sched.poll_again = sroce_sched_run_polled(run[i]);
	}
	return n > 0;
}

/* Another task wants this CPU: the poller must not hold it. */
static bool sqpoll_contended(void)
{
	return need_resched() || !single_task_running();
}

/*
 * How long to take no handovers after giving way.  A poller that worked
 * since it last gave way met a passing task (a kworker, ksoftirqd): it
 * takes QPs again at once, or a stream would ring for a while after
 * every such task.  One that was woken only to find its CPU taken again
 * (two busy-polling processes on two CPUs) stays away twice as long each
 * time, up to SQPOLL_BACKOFF_MAX, so that waking it costs them nothing.
 */
static void sqpoll_back_off(void)
{
	if (sqpoll.worked)
		sqpoll.backoff = 0;
	else
		sqpoll.backoff = clamp(sqpoll.backoff * 2, 1U, SQPOLL_BACKOFF_MAX);
	sqpoll.worked = false;
	WRITE_ONCE(sqpoll.quiet_until, jiffies + sqpoll.backoff);
}

static int sqpoll_thread(void *unused)
{
	while (!kthread_should_stop()) {
		if (!sqpoll_contended()) {
			if (sqpoll_scan())
				continue;
			if (!list_empty(&sqpoll.qps)) {
				cpu_relax();
				continue;
			}
		} else {
			/* Give way and sleep: a runnable poller would take
			 * its share of the CPU.
			 */
			sqpoll_back_off();
		}
		spin_lock_bh(&sqpoll.lock);
		sqpoll_deactivate();
		/* A handover now finds us inactive and wakes us: set our
		 * state first, so that wake-up cannot be missed.
		 */
		set_current_state(TASK_INTERRUPTIBLE);
		spin_unlock_bh(&sqpoll.lock);
		if (!kthread_should_stop())
			schedule();
		__set_current_state(TASK_RUNNING);
	}
	spin_lock_bh(&sqpoll.lock);
	sqpoll_deactivate();
	spin_unlock_bh(&sqpoll.lock);
	return 0;
}

int sroce_sqpoll_init(void)
{
	struct task_struct *t;

	spin_lock_init(&sqpoll.lock);
	INIT_LIST_HEAD(&sqpoll.qps);
	sqpoll.quiet_until = jiffies;
	t = kthread_run(sqpoll_thread, NULL, "sroce_sqpoll");
	if (IS_ERR(t))
		return PTR_ERR(t);
	sqpoll.task = t;
	return 0;
}

/* After every device is gone: the list is empty, the thread asleep. */
void sroce_sqpoll_exit(void)
{
	kthread_stop(sqpoll.task);
}

/*
 * Whether the work may stop now.  If it is only blocked (send window,
 * READ credits, RNR wait, local backpressure) an ACK or a timer brings it
 * back.  If it is idle the poller watches the ring, or else it asks the
 * process for a doorbell and looks once more, so a WQE posted in between
 * is never left behind.  Caller holds req.lock.
 */
bool sroce_sq_may_sleep(struct sroce_qp *qp)
{
	if (!qp->user || qp->req.cur != qp->req.fetch || qp->req.rnr_wait ||
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
	if (sqpoll_watch(qp))
		return true;
	if (!sq_set_notify(qp, SROCE_SQ_NEED_DOORBELL))
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
 * would.  Caller holds req.lock.
 */
bool sroce_sq_needs_run(struct sroce_qp *qp)
{
	if (qp->req.cur != qp->req.fetch || test_bit(0, &qp->req.need_retransmit))
		return true;
	if (qp->user && sq_ring_has_new(qp))
		return true;
	return !sroce_sq_may_sleep(qp);
}

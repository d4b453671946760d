// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * When the send engine of a user QP may sleep, and when it must ask the
 * process for a doorbell (the NEED_DOORBELL flag in the shared SQ ring).
 *
 * The provider makes a doorbell syscall only when it sees that flag, or
 * SROCE_SQ_MARKED while the poller below does not watch.  On
 * a path with any delay, ACKs keep the engine busy and pick up new WQEs,
 * so a stream rings almost never.  On a path with none (loopback, veth)
 * the whole round trip finishes inside the doorbell and the engine is
 * idle again when the syscall returns, so without help every post rings.
 *
 * The help is the send-queue poller, one kernel thread for the module,
 * as io_uring's SQPOLL thread takes submissions: an engine going idle
 * asks for a mark instead of a doorbell (SROCE_SQ_MARKED), and the thread
 * watches its context's mark page (sqmark.c) for its device's
 * sq_poll_idle_us (/sys/class/infiniband/<dev>/sq_poll_idle_us) after
 * the context's last work, running the engine of each QP marked.  One bit
 * per QP lets it watch every QP of a process: when it looked at each
 * QP's producer index in turn it could watch 128, and with thousands a
 * WQE waited longer for it than for a doorbell.  It uses a CPU the
 * process leaves idle (a CPU that halted through about half of every
 * WRITE run before, docs/bench/profile.md); it never competes for one.
 * When another task wants its CPU (need_resched(), or a second runnable
 * task, as vhost's and KVM's busy polling check) it sleeps.  If it has
 * been taking marks it steps aside (sqpoll_step_aside): it sleeps still
 * watching, so the marks wait for it, until the next engine of ours goes
 * idle or a short timer ends, and where it runs then is the scheduler's
 * choice (an idle CPU if there is one).  A passing task (a kworker,
 * ksoftirqd: often the receive side of the same stream) costs the
 * stream nothing.  Otherwise it gives every context back (clears
 * `watching`, then takes the marks once more) and sleeps, taking none
 * for a while if it keeps finding its CPUs taken (sqpoll_back_off), so
 * two busy-polling processes on two CPUs (a latency test) keep their
 * doorbells and lose no time to it.
 * Every moment it is away, a stream rings: at 500 MB/s of 4 KiB WRITEs,
 * about 120 doorbells a millisecond.  With nothing to watch it sleeps:
 * an idle device costs no CPU.
 *
 * A hrtimer that polled the ring instead was tried first: under TCG its
 * polls came far later than asked, and 50 us of it added ~65 us to a
 * ping-pong.
 */
#include <linux/hrtimer.h>
#include <linux/kthread.h>
#include <linux/sched.h>
#include <linux/sched/stat.h>
#include "sroce.h"

/*
 * How long it takes no handovers after giving way without having
 * worked: the first time, and at most.  Not in jiffies: the first
 * back-off lasted until the next jiffy, up to 4 ms at HZ=250, and at
 * 500 MB/s a stream rings ~120 times a millisecond.  Not shorter than
 * 1 ms either: each back-off ends in a wake-up that may move the poller
 * (sqpoll_move_on), which a latency test feels in its p99 (2-byte p99
 * over two 3-round runs: 46-70 us with 1 ms, 57-84 us with 250 us,
 * 38-66 us before either).
 */
#define SQPOLL_BACKOFF_MIN_NS	(1 * NSEC_PER_MSEC)
#define SQPOLL_BACKOFF_MAX_NS	(32 * NSEC_PER_MSEC)
/* A give-way this long after the last one starts the back-off over. */
#define SQPOLL_BACKOFF_RESET_NS	NSEC_PER_SEC
/* Engine runs per look: bounds the bottom-half-off time of a look. */
#define SQPOLL_BATCH		32

static struct {
	/* Guards all of this, and each context's sq_marks poller fields. */
	spinlock_t lock;
	struct list_head ctxs;		/* watched mark pages, least recently
					 * looked at first
					 */
	unsigned int nr_ctxs;		/* on ctxs */
	bool active;			/* the thread runs and watches: processes
					 * whose contexts it has need not ring
					 */
	struct hrtimer quiet_timer;	/* queued while the thread backs off:
					 * no handovers until it expires.
					 * Armed by the thread only.
					 */
	struct task_struct *task;
	/* Held by the thread over a look and the engine runs it takes marks for. */
	struct mutex scanning;
	/* The thread's own */
	bool worked;			/* ran an engine since it last gave way */
	bool worked_since_aside;	/* ... since it last stepped aside */
	bool aside;			/* asleep, stepping aside, still watching:
					 * an engine going idle wakes it
					 */
	u64 backoff;			/* ns it last stayed away */
	u64 gave_way;			/* ktime_get_ns() it last did */
} sqpoll;

/* Did the process post a WQE the engine has not taken yet?  A hint. */
static bool sq_ring_has_new(struct sroce_qp *qp)
{
	/* Pairs with the provider's release store of the producer (ring.hpp). */
	return smp_load_acquire(&qp->sq.ctrl->producer) != READ_ONCE(qp->req.fetch);
}

/*
 * Sets the SQ's notify word, then looks once more, so a WQE posted in
 * between either is seen or rings (or marks, with SROCE_SQ_MARKED).  True
 * if one was seen.
 */
static bool sq_set_notify(struct sroce_qp *qp, u32 notify)
{
	WRITE_ONCE(qp->sq.ctrl->notify, notify);
	smp_mb();	/* pairs with the provider's fence after its producer store */
	return sq_ring_has_new(qp);
}

/* How long the poller watches @m after its last mark: its device's setting. */
static unsigned long sqpoll_idle_jiffies(const struct sroce_sq_marks *m)
{
	/* +1: the current jiffy is partly over. */
	return usecs_to_jiffies(READ_ONCE(m->sdev->sq_poll_idle_us)) + 1;
}

/* Marks of @m count from now on: its processes stop ringing.  Lock held. */
static void sqpoll_start_watching(struct sroce_sq_marks *m)
{
	if (m->watching)
		return;
	WRITE_ONCE(m->watching, true);
	WRITE_ONCE(m->page->watching, 1);
}

/*
 * An engine of @m's context is going idle, its QP marked: the poller
 * watches the context's marks.  If it sleeps it is woken, and takes the
 * context over when it gets a CPU: until then the process rings.
 */
static void sqpoll_watch(struct sroce_sq_marks *m)
{
	bool active;

	/* Watched already: the poller's next look takes the mark, and keeps
	 * the context while it finds some.  Spares the lock on every idle
	 * engine of a busy process.  The back-off is the timer's queued
	 * state (a lockless read), not a time compared with the clock: this
	 * runs at every idle engine and every ACK of a ping-pong, and where
	 * the clocksource is not the TSC (an HPET, acpi_pm) a clock read is
	 * a device access.
	 */
	if (READ_ONCE(m->watching)) {
		/* Its next look takes the mark: wake it if it stepped aside. */
		if (READ_ONCE(sqpoll.aside))
			wake_up_process(sqpoll.task);
		return;
	}
	if (hrtimer_is_queued(&sqpoll.quiet_timer))
		return;
	spin_lock_bh(&sqpoll.lock);
	if (list_empty(&m->poll_node)) {
		list_add_tail(&m->poll_node, &sqpoll.ctxs);
		sqpoll.nr_ctxs++;
	}
	m->poll_until = jiffies + sqpoll_idle_jiffies(m);
	active = sqpoll.active;
	if (active)
		sqpoll_start_watching(m);
	spin_unlock_bh(&sqpoll.lock);
	if (!active)
		wake_up_process(sqpoll.task);
}

/*
 * The poller lets go of @m: its processes ring again.  A post that saw
 * `watching` set before it was cleared rang no doorbell, so its mark is
 * taken here, after the barrier, and its QP goes to the work item.  Lock
 * held.
 */
static void sqpoll_unwatch(struct sroce_sq_marks *m)
{
	if (m->watching) {
		WRITE_ONCE(m->watching, false);
		WRITE_ONCE(m->page->watching, 0);
		smp_mb();	/* pairs with the provider's fence after its mark */
		sroce_sq_marks_drain(m, sroce_sched_queue);
	}
	list_del_init(&m->poll_node);
	sqpoll.nr_ctxs--;
}

/* Stops watching, gives every context back.  Lock held. */
static void sqpoll_deactivate(void)
{
	sqpoll.active = false;
	while (!list_empty(&sqpoll.ctxs))
		sqpoll_unwatch(list_first_entry(&sqpoll.ctxs,
						struct sroce_sq_marks, poll_node));
}

/* A context is going away (its QPs are gone): the poller forgets it. */
void sroce_sqpoll_forget(struct sroce_sq_marks *m)
{
	spin_lock_bh(&sqpoll.lock);
	if (!list_empty(&m->poll_node))
		sqpoll_unwatch(m);
	spin_unlock_bh(&sqpoll.lock);
}

/*
 * Looks at the watched contexts, least recently looked at first, and
 * takes up to SQPOLL_BATCH marks: starts watching those handed over
 * while it slept, lets go of those idle for long enough, and runs the
 * engine of each QP marked.  True if any was.  The marks give references
 * to the QPs, dropped after their run.
 */
static bool sqpoll_scan(void)
{
	struct sroce_qp *run[SQPOLL_BATCH];
	unsigned long now = jiffies;
	unsigned int n = 0, seen, todo, i;

	mutex_lock(&sqpoll.scanning);
	spin_lock_bh(&sqpoll.lock);
	sqpoll.active = true;
	todo = sqpoll.nr_ctxs;
	for (seen = 0; seen < todo && n < SQPOLL_BATCH; seen++) {
		struct sroce_sq_marks *m = list_first_entry(&sqpoll.ctxs,
							    struct sroce_sq_marks,
							    poll_node);
		unsigned int got;

		sqpoll_start_watching(m);
		got = sroce_sq_marks_take(m, run + n, SQPOLL_BATCH - n);
		n += got;
		if (got) {
			m->poll_until = now + sqpoll_idle_jiffies(m);
		} else if (time_after(now, m->poll_until)) {
			sqpoll_unwatch(m);
			continue;
		}
		list_move_tail(&m->poll_node, &sqpoll.ctxs);
	}
	spin_unlock_bh(&sqpoll.lock);
	if (n) {
		sqpoll.worked = true;
		sqpoll.worked_since_aside = true;
	}
	for (i = 0; i < n; i++) {
		struct sroce_qp *qp = run[i];

		sroce_count(qp->sdev, SROCE_CNT_SQ_POLLED, 1);
		/* Stopped at its budget: come back to it, as to a mark. */
		if (sroce_sched_run_polled(qp))
			sroce_sq_mark_set(qp->sq_marks, qp->sq_mark);
		sroce_qp_put(qp);
	}
	mutex_unlock(&sqpoll.scanning);
	return n > 0;
}

/*
 * When it returns, every WQE that @m's process posted before the call
 * has been taken by its engine, or its QP is queued on sroce_wq: the
 * QPs still marked run here; a look of the poller that took marks before
 * has ended (what it left at its budget is marked again, and runs here
 * too); and a poller letting go of contexts (sqpoll_unwatch, under
 * sqpoll.lock) has queued the QPs whose marks it took.  Without that
 * last wait a mark taken there, its QP not yet queued, was in neither
 * the page nor the workqueue: the caller's flush missed it (qp_edges
 * cq-resize-posted, about 1 run in 100 with two guests on two CPUs).
 * For CQ resize, which must count the completions of what the process
 * posted (sroce_resize_cq).
 */
void sroce_sqpoll_settle(struct sroce_sq_marks *m)
{
	sroce_sq_marks_drain(m, sroce_sched_run);
	mutex_lock(&sqpoll.scanning);
	mutex_unlock(&sqpoll.scanning);
	spin_lock_bh(&sqpoll.lock);
	spin_unlock_bh(&sqpoll.lock);
	sroce_sq_marks_drain(m, sroce_sched_run);
}

/* Another task wants this CPU: the poller must not hold it. */
static bool sqpoll_contended(void)
{
	return need_resched() || !single_task_running();
}

/*
 * How long to take no handovers after giving way.  A poller that worked
 * since it last gave way met a task that stayed (it stepped aside once
 * and found its CPU taken again): it takes QPs again at once, or a stream
 * would ring for a while after every such task.  One that was woken only
 * to find its CPUs taken again (two busy-polling processes on two CPUs)
 * stays away twice as long each time, up to SQPOLL_BACKOFF_MAX_NS, so
 * that waking it costs them nothing.  A give-way a second or more after
 * the last starts the back-off over: a stream that starts later must not
 * wait 32 ms.
 */
static void sqpoll_back_off(void)
{
	u64 now = ktime_get_ns();

	if (sqpoll.worked)
		sqpoll.backoff = 0;
	else if (now - sqpoll.gave_way > SQPOLL_BACKOFF_RESET_NS)
		sqpoll.backoff = SQPOLL_BACKOFF_MIN_NS;
	else
		sqpoll.backoff = clamp_t(u64, sqpoll.backoff * 2,
					 SQPOLL_BACKOFF_MIN_NS, SQPOLL_BACKOFF_MAX_NS);
	sqpoll.gave_way = now;
	sqpoll.worked = false;
	sqpoll.worked_since_aside = false;
	/* A worked poller gives way without backing off: a back-off still
	 * queued from before it worked ends now.  (A callback running now
	 * is harmless: it does nothing.)
	 */
	if (sqpoll.backoff)
		hrtimer_start(&sqpoll.quiet_timer, ns_to_ktime(sqpoll.backoff),
			      HRTIMER_MODE_REL);
	else
		hrtimer_try_to_cancel(&sqpoll.quiet_timer);
}

/* The back-off is over once the timer is no longer queued: nothing to do. */
static enum hrtimer_restart sqpoll_quiet_over(struct hrtimer *t)
{
	return HRTIMER_NORESTART;
}

/*
 * A task wants the poller's CPU while it streams (it ran an engine since
 * it last stepped aside): a kworker or ksoftirqd, often running the
 * receive side of the same stream, or the busy-polling process it works
 * for, when a wake-up put the poller beside it (the wake-up comes from
 * that process's syscall).  Giving way would hand every marked QP to a
 * work item, one more runnable task, and make every post ring until the
 * poller is back.  So it sleeps still watching: the marks wait.  The next
 * engine of ours that goes idle wakes it (sqpoll_watch), that receive
 * side done, or at the latest the timer: where it runs then is the
 * scheduler's choice, an idle CPU if there is one.  A wake-up missed
 * while `aside` is being set costs at most the timer.  If its CPU is
 * taken again when it comes back without having worked, it gives way.
 * True if it stepped aside.
 */
#define SQPOLL_ASIDE_MAX_NS	(250 * NSEC_PER_USEC)
#define SQPOLL_ASIDE_SLACK_NS	(50 * NSEC_PER_USEC)

static bool sqpoll_step_aside(void)
{
	ktime_t until = ns_to_ktime(SQPOLL_ASIDE_MAX_NS);

	if (!sqpoll.worked_since_aside)
		return false;
	sqpoll.worked_since_aside = false;
	set_current_state(TASK_INTERRUPTIBLE);
	WRITE_ONCE(sqpoll.aside, true);
	if (!kthread_should_stop())
		schedule_hrtimeout_range(&until, SQPOLL_ASIDE_SLACK_NS,
					 HRTIMER_MODE_REL);
	__set_current_state(TASK_RUNNING);
	WRITE_ONCE(sqpoll.aside, false);
	return true;
}

static int sqpoll_thread(void *unused)
{
	while (!kthread_should_stop()) {
		if (!sqpoll_contended()) {
			if (sqpoll_scan())
				continue;
			if (!list_empty(&sqpoll.ctxs)) {
				cpu_relax();
				continue;
			}
			/* Idle: the stream it worked for is over. */
			sqpoll.worked = false;
			sqpoll.worked_since_aside = false;
		} else if (sqpoll_step_aside()) {
			continue;
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
	mutex_init(&sqpoll.scanning);
	INIT_LIST_HEAD(&sqpoll.ctxs);
	hrtimer_setup(&sqpoll.quiet_timer, sqpoll_quiet_over, CLOCK_MONOTONIC,
		      HRTIMER_MODE_REL);
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
	hrtimer_cancel(&sqpoll.quiet_timer);
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
	u32 notify = SROCE_SQ_NEED_DOORBELL;

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
	if (qp->sq_mark != SROCE_SQ_NO_MARK && READ_ONCE(qp->sdev->sq_poll_idle_us)) {
		sqpoll_watch(qp->sq_marks);
		notify = SROCE_SQ_MARKED;
	}
	if (!sq_set_notify(qp, notify))
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

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The transmit scheduler of a QP (sched.c): who runs the send engine,
 * on which CPU, and every timer that brings it back.  Requester and
 * responder share it: READ responses leave through the same engine.
 */
#ifndef SROCE_SCHED_H
#define SROCE_SCHED_H

#include <linux/hrtimer.h>
#include <linux/timer.h>
#include <linux/workqueue.h>

struct sroce_qp;

/*
 * Embedded in struct sroce_qp.  Only sched.c arms or stops these timers
 * and work items; once sroce_sched_stop() has set @dying, nothing arms
 * them again, so stopping needs no re-arm protocol.
 */
struct sroce_sched {
	unsigned long flags;		/* SROCE_SEND_*: who runs the engine */
	bool dying;			/* sroce_sched_stop() began */
	int cpu;			/* that last ran it: keeps packet order */
	int work_cpu;			/* where work was last queued */
	struct work_struct work;	/* the engine's fallback runner */
	struct work_struct moved;	/* ... carried to a CPU it is not on */
	/*
	 * Local ACK timeout (comp.c's handler): a jiffies timer, not an
	 * hrtimer.  It is re-armed on every send and every ACK, and arming
	 * an hrtimer reads the clock (an emulated HPET read, ~8 us, in a
	 * TCG guest); the timer wheel needs no clock read, and IB only asks
	 * for "at least" the timeout.
	 */
	struct timer_list retrans_timer;
	struct hrtimer rnr_timer;	/* an RNR NAK's wait (comp.c's handler) */
	struct hrtimer kick_timer;	/* run later: local backpressure, the
					 * pacer, an ODP page on its way
					 */

	/* Local backpressure: the engine's, under req.lock or the send right */
	bool tx_backoff;		/* the stack refused a packet: wait */
	u64 tx_paused_since;		/* ns of the first refusal; 0: none */
	u32 tx_backoff_ns;		/* current wait between tries */
};

/*
 * RC: the requester (req.c) asks for an ACK at least this often within a
 * long message, so an ACK retires about this many packets, and a run of
 * the engine from an ACK (sroce_sched_run_acked) sends about as many.
 */
#define SROCE_ACKREQ_EVERY	32

enum {
	SROCE_SEND_RUNNING,		/* someone is in sroce_send_engine() */
	SROCE_SEND_AGAIN,		/* ... and must look again before stopping */
};

/* One init at create, one stop at destroy; quiesce for RESET. */
void sroce_sched_init(struct sroce_qp *qp);
void sroce_sched_quiesce(struct sroce_qp *qp);
void sroce_sched_stop(struct sroce_qp *qp);

/* Runs the send engine here and now if it may; else as in _queue. */
void sroce_sched_run(struct sroce_qp *qp);
/* The same from the receive softirq, a little: an ACK opened the window. */
void sroce_sched_run_acked(struct sroce_qp *qp);
/* Has the work item run it: for callers holding a QP lock. */
void sroce_sched_queue(struct sroce_qp *qp);
/*
 * The send right without running the engine (for a few packets from the
 * receive path); false if the engine holds it.  Release hands over any
 * work asked for meanwhile.
 */
bool sroce_sched_try_right(struct sroce_qp *qp);
void sroce_sched_release_right(struct sroce_qp *qp);

/* Runs the engine again after @ns, or at the absolute time @at_ns. */
void sroce_sched_kick_in(struct sroce_qp *qp, u64 ns);
void sroce_sched_kick_at(struct sroce_qp *qp, u64 at_ns);

/* The local ACK timer: (re)started for a full timeout, or stopped. */
void sroce_retrans_start(struct sroce_qp *qp);
void sroce_retrans_stop(struct sroce_qp *qp);
bool sroce_retrans_pending(const struct sroce_qp *qp);
/* Stops sending for @ns (the retransmit timer with it), then rewinds. */
void sroce_sched_rnr_wait(struct sroce_qp *qp, u64 ns);
/* The QP failed: no timeout or RNR wait may fire for it any more. */
void sroce_sched_stop_retry_timers(struct sroce_qp *qp);

/*
 * The same from the send-queue poller's thread (doorbell.c).  True if it
 * stopped at its budget on this CPU, for the poller to come back to.
 */
bool sroce_sched_run_polled(struct sroce_qp *qp);

/* Doorbell policy of user send queues and their poller (doorbell.c). */
/* A new device's sq_poll_idle_us (set through sysfs, device.c). */
#define SROCE_SQ_POLL_IDLE_US	2000
int sroce_sqpoll_init(void);
void sroce_sqpoll_exit(void);
struct sroce_sq_marks;
void sroce_sqpoll_forget(struct sroce_sq_marks *m);
void sroce_sqpoll_settle(struct sroce_sq_marks *m);
/* Caller holds req.lock. */
bool sroce_sq_may_sleep(struct sroce_qp *qp);
bool sroce_sq_needs_run(struct sroce_qp *qp);

/* backpressure.c: the stack refused a packet / took one again. */
void sroce_tx_refused(struct sroce_qp *qp);
void sroce_tx_resumed(struct sroce_qp *qp);
bool sroce_tx_paused(const struct sroce_qp *qp);
/* The engine waits for an ODP page (mr.c -EAGAIN): runs again soon. */
void sroce_odp_wait(struct sroce_qp *qp);

#endif /* SROCE_SCHED_H */

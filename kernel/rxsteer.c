// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Receive steering: the second CPU for a host that talks to itself.
 *
 * veth and loopback hand a packet to the receive softirq of the CPU that
 * sent it, and a send engine's softirqs run when it drops req.lock.  So
 * between two devices of one host (containers over veth, a device talking
 * to itself) one CPU alternates between the requester's transmit (ICRC
 * over the payload) and the responder's receive (ICRC check, copy into
 * the MR, the ACK), while the other CPU idles.  A NIC spreads receive
 * over CPUs by flow hash (RSS) and never runs into this.
 *
 * So while a send engine on this CPU drops its lock after a burst,
 * the sroce packets its softirqs receive are queued to the next online
 * CPU, which delivers them in softirq context, from a tasklet an IPI
 * schedules there (as RPS hands packets to another CPU's backlog): a
 * work item was measured to lose to receivers that busy-poll their CQ
 * on that CPU.  A lone message is received in place, as before: a hop to
 * another CPU would only add latency.
 *
 * Order within a flow is kept: each CPU has one queue per device, fed
 * only by softirqs on that CPU and drained in order by one tasklet, and
 * while anything from it is queued or being delivered, what this CPU
 * receives next goes behind it, burst or not.  A tasklet runs on one CPU
 * at a time, so a queue is never delivered out of order.
 */
#include <linux/interrupt.h>
#include <linux/smp.h>
#include "sroce.h"

/*
 * Per receiving device, off by default (sroce_dev.rx_steer_on, written
 * through /sys/class/infiniband/<dev>/rx_steer).  Delivered from a work
 * item (c1c8d8e), WRITE 64 KiB over 8 QPs went from 1.12 to 1.66 Gb/s
 * (rxe 1.06) but SEND lost 10-20%: the
 * work item shared the other CPU with a receiver that busy-polls its CQ
 * (perftest, UCX, MPI all do).  From a tasklet (docs/bench/rx-steer-on.md,
 * TCG guest, 2 vCPUs, at 1b690c3's code), loopback bandwidth gains up to 63%
 * (WRITE 64 KiB 7.96x rxe against 4.89x) and no latency figure is worse
 * than rxe's, but goodput under 1% loss falls from 0.52 to 0.36 of
 * lossless and 64-byte messages over 8 QPs lose 13%.
 */

/* A full queue drops, as a CPU's backlog does at netdev_max_backlog. */
#define SROCE_RX_STEER_MAX	1024
/* Packets per run of the work item before it lets others run. */
#define SROCE_RX_STEER_BUDGET	64

struct sroce_rx_steer {
	struct sk_buff_head queue;
	atomic_t pending;		/* queued or being delivered */
	struct tasklet_struct deliver;	/* on the next online CPU */
	call_single_data_t kick;	/* the IPI that schedules it there */
	atomic_t kicks;			/* IPIs sent and not yet handled */
	bool dead;			/* the device is going: drop, do not deliver */
	struct sroce_dev *sdev;
};

/* Set while a send engine on this CPU drops its lock after a burst. */
static DEFINE_PER_CPU(bool, sroce_tx_burst);

/*
 * Drops @lock, which a send engine held while it sent: the softirqs that
 * run at the unlock receive what it sent, on another CPU if @burst.
 */
void sroce_spin_unlock_bh_sent(spinlock_t *lock, bool burst)
	__releases(lock)
{
	this_cpu_write(sroce_tx_burst, burst);
	spin_unlock_bh(lock);
	this_cpu_write(sroce_tx_burst, false);
}

static int next_online_cpu(int cpu)
{
	int next = cpumask_next(cpu, cpu_online_mask);

	return next < nr_cpu_ids ? next : cpumask_first(cpu_online_mask);
}

static void sroce_rx_steer_deliver(struct tasklet_struct *t)
{
	struct sroce_rx_steer *st = container_of(t, struct sroce_rx_steer, deliver);
	struct sk_buff *skb;
	int n;

	for (n = 0; n < SROCE_RX_STEER_BUDGET; n++) {
		skb = skb_dequeue(&st->queue);
		if (!skb)
			return;
		if (READ_ONCE(st->dead)) {
			kfree_skb(skb);
		} else {
			rcu_read_lock();
			sroce_rx_deliver(st->sdev, skb,
					 skb->protocol == htons(ETH_P_IPV6));
			rcu_read_unlock();
		}
		/* Delivered: only now may the producer deliver in place. */
		smp_mb__before_atomic();
		atomic_dec(&st->pending);
	}
	if (!skb_queue_empty(&st->queue))
		tasklet_schedule(&st->deliver);
}

/* Hard interrupt on the receiving CPU: the tasklet runs there. */
static void sroce_rx_steer_kicked(void *info)
{
	struct sroce_rx_steer *st = info;

	tasklet_schedule(&st->deliver);
	/* Pairs with the acquire read of kicks that the exit waits on:
	 * the tasklet is scheduled before the count says we are done.
	 */
	smp_mb__before_atomic();
	atomic_dec(&st->kicks);		/* the last touch: exit waits for it */
}

/*
 * The queue was empty: no tasklet is scheduled for it, so schedule one on
 * @cpu.  An IPI still on its way (-EBUSY) has not run yet and will see
 * this packet; an offline CPU (hotplug) leaves the delivery to this one.
 */
static void rx_steer_kick(struct sroce_rx_steer *st, int cpu)
{
	int err;

	atomic_inc(&st->kicks);
	err = smp_call_function_single_async(cpu, &st->kick);
	if (err) {
		atomic_dec(&st->kicks);
		if (err != -EBUSY)
			tasklet_schedule(&st->deliver);
	}
}

/*
 * Takes @skb (an sroce packet, headers checked, ICRC not yet) to be
 * delivered on another CPU, or returns false: deliver it here.  Softirq.
 */
bool sroce_rx_steer(struct sroce_dev *sdev, struct sk_buff *skb)
{
	struct sroce_rx_steer *st;
	unsigned long flags;
	bool first;
	int cpu;

	if (!sdev->rx_steer)
		return false;
	cpu = smp_processor_id();
	st = per_cpu_ptr(sdev->rx_steer, cpu);
	/* Acquire: all that was steered is delivered (the worker's barrier). */
	if (!atomic_read_acquire(&st->pending) &&
	    !(READ_ONCE(sdev->rx_steer_on) && this_cpu_read(sroce_tx_burst)))
		return false;
	if (skb_queue_len(&st->queue) >= SROCE_RX_STEER_MAX) {
		sroce_count(sdev, SROCE_CNT_RX_DROPPED, 1);
		kfree_skb(skb);
		return true;
	}
	/* The route and the device are the receive path's, under its RCU. */
	skb_dst_drop(skb);
	skb->dev = NULL;
	atomic_inc(&st->pending);
	spin_lock_irqsave(&st->queue.lock, flags);
	__skb_queue_tail(&st->queue, skb);
	first = skb_queue_len(&st->queue) == 1;
	spin_unlock_irqrestore(&st->queue.lock, flags);
	sroce_count(sdev, SROCE_CNT_RX_STEERED, 1);
	if (first)
		rx_steer_kick(st, next_online_cpu(cpu));
	return true;
}

void sroce_rx_steer_init(struct sroce_dev *sdev)
{
	int cpu;

	/* Without it (no memory), every packet is received in place. */
	sdev->rx_steer = alloc_percpu(struct sroce_rx_steer);
	if (!sdev->rx_steer)
		return;
	for_each_possible_cpu(cpu) {
		struct sroce_rx_steer *st = per_cpu_ptr(sdev->rx_steer, cpu);

		skb_queue_head_init(&st->queue);
		atomic_set(&st->pending, 0);
		tasklet_setup(&st->deliver, sroce_rx_steer_deliver);
		INIT_CSD(&st->kick, sroce_rx_steer_kicked, st);
		atomic_set(&st->kicks, 0);
		st->dead = false;
		st->sdev = sdev;
	}
}

/* After the receive path can no longer find @sdev (an RCU grace period). */
void sroce_rx_steer_exit(struct sroce_dev *sdev)
{
	int cpu;

	if (!sdev->rx_steer)
		return;
	for_each_possible_cpu(cpu) {
		struct sroce_rx_steer *st = per_cpu_ptr(sdev->rx_steer, cpu);

		WRITE_ONCE(st->dead, true);
		/* An IPI in flight schedules the tasklet yet. */
		while (atomic_read_acquire(&st->kicks))
			cpu_relax();
		tasklet_kill(&st->deliver);
		skb_queue_purge(&st->queue);
	}
	free_percpu(sdev->rx_steer);
	sdev->rx_steer = NULL;
}

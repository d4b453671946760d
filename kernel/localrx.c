// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Packets to this host's own addresses, delivered without the IP stack.
 *
 * A device talking to itself, or to another sroce device of the same
 * namespace, routes through the loopback device: ip_local_out, netfilter's
 * OUTPUT and POSTROUTING, the neighbour layer, loopback_xmit, the backlog,
 * ip_rcv with PREROUTING, an input route lookup, LOCAL_IN and the UDP
 * socket lookup, for a packet whose destination we knew when we built it.
 * Measured (docs/bench/profile.md, 64-byte WRITEs on that path) that was
 * a fifth of sroce's CPU time per message, and rxe, whose loopback skips
 * the stack the same way, spends a tenth of it.  A NIC loops such traffic
 * back inside itself, where the host's filters and taps never see it
 * either.  Per sending device, on by default: writing 0 to
 * /sys/class/infiniband/<dev>/loopback_bypass restores the trip through
 * the stack (to capture it on lo, or to shape it with tc).
 *
 * What stays the same as on the loopback device: the packet is received
 * in softirq context on the CPU that sent it, after the sender lets
 * softirqs run (never inside the send engine, which holds QP locks), in
 * order, through the same checks and the same device choice as a packet
 * that came in by UDP (sroce_net_recv).  The queue is per CPU like the
 * backlog, and a full one refuses the packet, which the sender takes as
 * local backpressure instead of a loss.  What differs: the sender leaves
 * the ICRC out (net.c's sroce_out says why) and tells us so.
 */
#include <linux/interrupt.h>
#include <linux/netdevice.h>
#include <net/ip.h>

#include "sroce.h"

/* netdev_max_backlog's default: a queue as deep as the one it replaces. */
#define SROCE_LOCAL_RX_MAX	1000
/* Packets per tasklet run before it lets other softirqs run. */
#define SROCE_LOCAL_RX_BUDGET	64

struct sroce_local_rx {
	struct sk_buff_head queue;
	struct tasklet_struct tasklet;
};

static DEFINE_PER_CPU(struct sroce_local_rx, sroce_local_rx);

static void local_rx_run(struct tasklet_struct *t)
{
	struct sroce_local_rx *lr = container_of(t, struct sroce_local_rx, tasklet);
	struct net_device *lo;
	struct sk_buff *skb;
	int n;

	for (n = 0; n < SROCE_LOCAL_RX_BUDGET; n++) {
		skb = skb_dequeue(&lr->queue);
		if (!skb)
			return;
		lo = skb->dev;
		rcu_read_lock();
		sroce_net_recv(sroce_net_of(dev_net(lo)), skb,
			       !sroce_rx_cb(skb)->no_icrc);
		rcu_read_unlock();
		dev_put(lo);
	}
	if (!skb_queue_empty(&lr->queue))
		tasklet_schedule(&lr->tasklet);
}

/*
 * Whether @dst takes the packet to an address of this host (a local
 * route's device is the namespace's loopback device) and @sdev's bypass
 * is on.
 */
bool sroce_local_route(const struct sroce_dev *sdev, const struct dst_entry *dst)
{
	return READ_ONCE(sdev->loopback_bypass) && (dst->dev->flags & IFF_LOOPBACK);
}

/*
 * Queues @skb (network header built, ICRC in place, data at the IP
 * header) for delivery on this CPU as if it had come in on @dst's
 * loopback device; @has_icrc: false if sent without one (net.c's
 * sroce_out).  Consumes @skb; NET_XMIT_DROP if the queue is full.
 * Called with BH off, as every sender is.
 */
int sroce_local_out(struct sk_buff *skb, bool ipv6, bool has_icrc)
{
	struct net_device *lo = skb_dst(skb)->dev;
	struct sroce_local_rx *lr = this_cpu_ptr(&sroce_local_rx);

	if (skb_queue_len(&lr->queue) >= SROCE_LOCAL_RX_MAX) {
		kfree_skb(skb);
		return NET_XMIT_DROP;
	}
	if (!ipv6)
		ip_send_check(ip_hdr(skb));
	/* As loopback_xmit and the receive path would leave it. */
	skb_orphan(skb);
	skb_dst_drop(skb);
	__skb_pull(skb, skb_transport_offset(skb));	/* to the UDP header */
	skb->pkt_type = PACKET_HOST;
	skb->ip_summed = CHECKSUM_UNNECESSARY;
	dev_hold(lo);		/* its namespace stays until delivery */
	skb->dev = lo;
	sroce_rx_cb(skb)->no_icrc = !has_icrc;
	skb_queue_tail(&lr->queue, skb);
	tasklet_schedule(&lr->tasklet);
	return NET_XMIT_SUCCESS;
}

void sroce_local_rx_init(void)
{
	int cpu;

	for_each_possible_cpu(cpu) {
		struct sroce_local_rx *lr = per_cpu_ptr(&sroce_local_rx, cpu);

		skb_queue_head_init(&lr->queue);
		tasklet_setup(&lr->tasklet, local_rx_run);
	}
}

/* After the last device is gone: nothing can queue any more. */
void sroce_local_rx_exit(void)
{
	struct sk_buff *skb;
	int cpu;

	for_each_possible_cpu(cpu) {
		struct sroce_local_rx *lr = per_cpu_ptr(&sroce_local_rx, cpu);

		tasklet_kill(&lr->tasklet);
		while ((skb = skb_dequeue(&lr->queue))) {
			dev_put(skb->dev);
			kfree_skb(skb);
		}
	}
}

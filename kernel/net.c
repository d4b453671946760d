// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Network glue: the RoCE v2 UDP sockets (one pair per network namespace,
 * shared by the sroce devices there), packets out (UDP/IP headers, ICRC,
 * route) and packets in (device lookup, ICRC check, parse, hand-off).
 *
 * Sockets and routes live in the namespace of the device's netdev, so a
 * device on a netdev inside a container's namespace works there.
 */
#include <linux/highmem.h>
#include <linux/if_vlan.h>
#include <linux/inetdevice.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <net/addrconf.h>
#include <net/inet_ecn.h>
#include <net/ip.h>
#include <net/ip6_route.h>
#include <net/net_namespace.h>
#include <rdma/ib_addr.h>
#include <net/netns/generic.h>
#include <net/route.h>
#include <net/udp_tunnel.h>

#include "proto/icrc.h"
#include "sroce.h"

struct sroce_net {
	struct socket *sock4;
	struct socket *sock6;
	unsigned int users;		/* devices attached; under sroce_net_lock */
	struct list_head devs;		/* RCU list of sroce_dev_link */
};

struct sroce_dev_link {
	struct list_head node;
	struct sroce_dev *sdev;
	struct rcu_head rcu;
};

static unsigned int sroce_net_id;
static DEFINE_MUTEX(sroce_net_lock);

/* ---- packet bytes, linear or in page fragments --------------------------- */

int sroce_skb_walk(const struct sk_buff *skb, u32 off, u32 len,
		   sroce_piece_fn fn, void *ctx)
{
	const struct skb_shared_info *sh = skb_shinfo(skb);
	u32 head = skb_headlen(skb);
	int i, err;

	if (off < head) {
		u32 n = min(len, head - off);

		err = fn(ctx, skb->data + off, n);
		if (err)
			return err;
		len -= n;
	}
	off = off > head ? off - head : 0;
	for (i = 0; i < sh->nr_frags && len; i++) {
		const skb_frag_t *f = &sh->frags[i];
		u32 size = skb_frag_size(f), at, left;

		if (off >= size) {
			off -= size;
			continue;
		}
		at = skb_frag_off(f) + off;
		left = min(len, size - off);
		len -= left;
		off = 0;
		/* A fragment may run over several pages of a compound page. */
		while (left) {
			u32 in = offset_in_page(at);
			u32 n = min_t(u32, left, PAGE_SIZE - in);
			u8 *va = kmap_local_page(skb_frag_page(f) + (at >> PAGE_SHIFT));

			err = fn(ctx, va + in, n);
			kunmap_local(va);
			if (err)
				return err;
			at += n;
			left -= n;
		}
	}
	return len ? -EFAULT : 0;	/* shorter than asked (frag lists) */
}

static int crc_piece(void *ctx, const u8 *p, u32 n)
{
	u32 *st = ctx;

	*st = roce_crc32_update(*st, p, n);
	return 0;
}

/*
 * The ICRC of a packet whose payload is in page fragments (zcopy.c on
 * the way out, veth or a NIC's page buffers on the way in): the headers
 * from the linear part, the rest read in place, up to the ICRC's 4 bytes
 * at the end.  One read of the payload.
 */
static u32 icrc_nonlinear(const struct sk_buff *skb, unsigned int ip_len,
			  bool ipv6)
{
	const u8 *udp = skb_transport_header(skb);
	const u8 *bth = udp + sizeof(struct udphdr);
	u32 from = bth - skb->data + ROCE_BTH_LEN;
	u32 st = roce_icrc_begin(skb_network_header(skb), ip_len, ipv6, udp, bth);

	sroce_skb_walk(skb, from, skb->len - ROCE_ICRC_LEN - from, crc_piece, &st);
	return roce_icrc_finish(st);
}

/* The ICRC @skb should carry; its network and transport headers are set. */
static u32 icrc_of(const struct sk_buff *skb, bool ipv6)
{
	unsigned int ip_len = ipv6 ? sizeof(struct ipv6hdr) : ip_hdrlen(skb);
	const u8 *udp = skb_transport_header(skb);

	if (!skb_is_nonlinear(skb))
		return roce_icrc_compute(skb_network_header(skb), ip_len, ipv6,
					 udp, skb_tail_pointer(skb) - udp -
						      ROCE_ICRC_LEN);
	return icrc_nonlinear(skb, ip_len, ipv6);
}

/*
 * Fills the ICRC's 4 bytes at the end of @skb (whether data is at its
 * network header, sending, or at its UDP header, received by localrx.c):
 * the linear tail, or the trailer fragment, which is zcopy.c's own
 * direct-map memory on every packet we built.  With @compute false they
 * are zeroed instead, for a packet that is to stay in this host
 * (sroce_out).  The ICRC goes last: every header it covers is final.
 */
static void put_icrc(struct sk_buff *skb, bool ipv6, bool compute)
{
	u32 icrc = compute ? icrc_of(skb, ipv6) : 0;
	skb_frag_t *trailer;
	u8 *slot;

	if (!skb_is_nonlinear(skb)) {
		slot = skb_tail_pointer(skb) - ROCE_ICRC_LEN;
	} else {
		/* Not skb_store_bits(): it walks every fragment to the last,
		 * 3% of the CPU time of a 64 KiB WRITE in the profile.
		 */
		trailer = &skb_shinfo(skb)->frags[skb_shinfo(skb)->nr_frags - 1];
		slot = skb_frag_address(trailer) + skb_frag_size(trailer) -
		       ROCE_ICRC_LEN;
	}
	roce_icrc_put(slot, icrc);
}

/* ---- receive -------------------------------------------------------------- */

static struct sroce_dev *sroce_dev_in_net(struct sroce_net *sn,
					  const struct net_device *ndev)
{
	struct sroce_dev_link *l;

	list_for_each_entry_rcu(l, &sn->devs, node)
		if (l->sdev->ndev == ndev)
			return l->sdev;
	return NULL;
}

/*
 * Which device a packet is for.  Normally the netdev it arrived on; a
 * packet between two addresses of this host arrives on the loopback
 * device, so then the netdev that owns the destination address decides.
 */
static struct sroce_dev *sroce_rx_dev(struct sroce_net *sn, struct sk_buff *skb)
{
	struct net_device *ndev = skb->dev;
	struct net *net = dev_net(ndev);
	struct sroce_dev *sdev;

	sdev = sroce_dev_in_net(sn, ndev);
	if (sdev)
		return sdev;
	if (is_vlan_dev(ndev)) {
		sdev = sroce_dev_in_net(sn, vlan_dev_real_dev(ndev));
		if (sdev)
			return sdev;
	}
	if (!(ndev->flags & IFF_LOOPBACK))
		return NULL;
	if (skb->protocol == htons(ETH_P_IP))
		ndev = __ip_dev_find(net, ip_hdr(skb)->daddr, false);
#if IS_ENABLED(CONFIG_IPV6)
	else
		ndev = ipv6_dev_find(net, &ipv6_hdr(skb)->daddr, NULL);
#endif
	return ndev ? sroce_dev_in_net(sn, ndev) : NULL;
}

/*
 * Received packets shorter than this are made linear whole (it costs
 * little there); longer ones get only their headers pulled.
 */
#define SROCE_RX_LINEAR_BELOW 256

/*
 * Makes the UDP header and the packet's RoCE headers (as long as its
 * opcode says) linear, pulling no payload: our own packets arrive with
 * exactly that much in the linear part, so this costs nothing for them.
 * False if the packet is shorter than that.  @skb: data at the UDP header.
 */
static bool pull_headers(struct sk_buff *skb)
{
	unsigned int at = sizeof(struct udphdr);

	if (!pskb_may_pull(skb, at + ROCE_BTH_LEN))
		return false;
	return pskb_may_pull(skb, at + roce_opcode_get(skb->data[at])->hdr_len);
}

/* @skb: data at the UDP header, trimmed to it, headers linear. */
static bool icrc_ok(const struct sk_buff *skb, unsigned int ip_len, bool ipv6)
{
	u8 trailer[ROCE_ICRC_LEN];

	if (!skb_is_nonlinear(skb))
		return roce_icrc_verify(skb_network_header(skb), ip_len, ipv6,
					skb->data, skb->len);
	/* Linear through the BTH (pull_headers), at least 256 bytes long. */
	if (skb->len < sizeof(struct udphdr) + ROCE_BTH_LEN + ROCE_ICRC_LEN ||
	    skb_copy_bits(skb, skb->len - ROCE_ICRC_LEN, trailer, sizeof(trailer)))
		return false;
	return icrc_nonlinear(skb, ip_len, ipv6) == roce_icrc_get(trailer);
}

void sroce_rx_deliver(struct sroce_dev *sdev, struct sk_buff *skb, bool ipv6)
{
	unsigned int ip_len = ipv6 ? sizeof(struct ipv6hdr) : ip_hdrlen(skb);
	struct roce_pkt_info pkt;

	if (!sroce_rx_cb(skb)->no_icrc && !icrc_ok(skb, ip_len, ipv6)) {
		sroce_count(sdev, SROCE_CNT_ICRC_ERRORS, 1);
		kfree_skb(skb);
		return;
	}
	__skb_pull(skb, sizeof(struct udphdr));
	if (roce_parse(skb->data, skb->len, &pkt)) {
		sroce_count(sdev, SROCE_CNT_RX_MALFORMED, 1);
		kfree_skb(skb);
		return;
	}
	sroce_count(sdev, SROCE_CNT_RX_PACKETS, 1);
	sroce_count(sdev, SROCE_CNT_RX_BYTES, skb->len);
	sroce_recv(sdev, skb, &pkt);
}

struct sroce_net *sroce_net_of(struct net *net)
{
	return net_generic(net, sroce_net_id);
}

/*
 * A RoCE v2 packet for namespace @sn, from its UDP socket or from
 * localrx.c: data at the UDP header, network header set.  Consumes @skb.
 */
void sroce_net_recv(struct sroce_net *sn, struct sk_buff *skb, bool has_icrc)
{
	struct sroce_dev *sdev;
	bool ipv6 = skb->protocol == htons(ETH_P_IPV6);
	unsigned int udp_len;

	rcu_read_lock();
	sdev = sn ? sroce_rx_dev(sn, skb) : NULL;
	if (!sdev)
		goto drop;

	/*
	 * Headers linear, payload where it is: page fragments (from veth
	 * carrying a zero-copy packet, or a NIC's page buffers) are read in
	 * place for the ICRC and copied once, into the MR.  Short packets
	 * (every one that has no payload to speak of, RDMA FLUSH included:
	 * roce_icrc_verify() knows rxe's ICRC for it) and frag lists are
	 * made linear, which costs little there.
	 */
	udp_len = ntohs(udp_hdr(skb)->len);
	if (udp_len < sizeof(struct udphdr) || udp_len > skb->len)
		goto malformed;
	if (pskb_trim(skb, udp_len))	/* Ethernet padding */
		goto drop;
	if (skb_has_frag_list(skb) || skb->len < SROCE_RX_LINEAR_BELOW) {
		if (skb_linearize(skb))
			goto drop;
	} else if (!pull_headers(skb)) {
		goto malformed;
	}
	if (ipv6 && ipv6_hdr(skb)->nexthdr != IPPROTO_UDP)
		goto malformed;		/* extension headers: not RoCE v2 */
	if (sroce_fault_on(&sdev->fault)) {
		/* A rule may corrupt it: it needs the ICRC that catches that.
		 * (A packet sent without one is localrx.c's, never a clone.)
		 */
		if (!has_icrc)
			put_icrc(skb, ipv6, true);
		has_icrc = true;
		if (sroce_fault_rx(sdev, skb, ipv6) == SROCE_FAULT_TAKEN)
			goto out;
	}
	/* From here skb->cb is ours (the fault rules' held packets use it). */
	sroce_rx_cb(skb)->no_icrc = !has_icrc;
	if (!sroce_rx_steer(sdev, skb))
		sroce_rx_deliver(sdev, skb, ipv6);
out:
	rcu_read_unlock();
	return;

malformed:
	sroce_count(sdev, SROCE_CNT_RX_MALFORMED, 1);
	rcu_read_unlock();
	kfree_skb(skb);
	return;
drop:
	if (sdev)
		sroce_count(sdev, SROCE_CNT_RX_DROPPED, 1);
	rcu_read_unlock();
	kfree_skb(skb);
}

static int sroce_udp_recv(struct sock *sk, struct sk_buff *skb)
{
	sroce_net_recv(rcu_dereference_sk_user_data(sk), skb, true);
	return 0;
}

/* ---- sockets ----------------------------------------------------------- */

static struct socket *sroce_sock_open(struct net *net, bool ipv6,
				      struct sroce_net *sn)
{
	struct udp_tunnel_sock_cfg tcfg = {
		.sk_user_data = sn,
		.encap_type = 1,
		.encap_rcv = sroce_udp_recv,
	};
	struct udp_port_cfg ucfg = {
		.local_udp_port = htons(ROCE_V2_UDP_PORT),
	};
	struct socket *sock;
	int err;

	if (ipv6) {
		ucfg.family = AF_INET6;
		ucfg.ipv6_v6only = 1;
	} else {
		ucfg.family = AF_INET;
	}
	err = udp_sock_create(net, &ucfg, &sock);
	if (err)
		return ERR_PTR(err);
	sroce_setup_udp_tunnel_sock(net, sock, &tcfg);
	return sock;
}

static void sroce_net_close(struct sroce_net *sn)
{
	if (sn->sock4)
		sroce_udp_tunnel_sock_release(sn->sock4);
	if (sn->sock6)
		sroce_udp_tunnel_sock_release(sn->sock6);
	sn->sock4 = NULL;
	sn->sock6 = NULL;
}

int sroce_net_attach(struct sroce_dev *sdev)
{
	struct net *net = dev_net(sdev->ndev);
	struct sroce_net *sn = net_generic(net, sroce_net_id);
	struct sroce_dev_link *l;
	struct socket *sock;
	int err = 0;

	l = kzalloc(sizeof(*l), GFP_KERNEL);
	if (!l)
		return -ENOMEM;
	l->sdev = sdev;

	mutex_lock(&sroce_net_lock);
	if (!sn->users) {
		sock = sroce_sock_open(net, false, sn);
		if (IS_ERR(sock)) {
			err = PTR_ERR(sock);
			pr_err("sroce: cannot bind UDP port %d in this network namespace (%d)%s\n",
			       ROCE_V2_UDP_PORT, err,
			       err == -EADDRINUSE ? ": is rdma_rxe using it?" : "");
			goto out;
		}
		sn->sock4 = sock;
		if (IS_ENABLED(CONFIG_IPV6)) {
			sock = sroce_sock_open(net, true, sn);
			/* An IPv6-less namespace still does IPv4. */
			sn->sock6 = IS_ERR(sock) ? NULL : sock;
		}
	}
	sn->users++;
	list_add_tail_rcu(&l->node, &sn->devs);
	sdev->net = sn;
out:
	mutex_unlock(&sroce_net_lock);
	if (err)
		kfree(l);
	return err;
}

/*
 * sdev->net is read and cleared under sroce_net_lock only: a namespace
 * that dies takes its links away itself (sroce_net_exit_ns) and may do so
 * before the device's queued unregistration gets here.
 */
void sroce_net_detach(struct sroce_dev *sdev)
{
	struct sroce_dev_link *l, *found = NULL;
	struct sroce_net *sn;

	mutex_lock(&sroce_net_lock);
	sn = sdev->net;
	if (sn) {
		list_for_each_entry(l, &sn->devs, node)
			if (l->sdev == sdev)
				found = l;
	}
	if (found) {
		list_del_rcu(&found->node);
		if (!--sn->users)
			sroce_net_close(sn);
	}
	sdev->net = NULL;
	mutex_unlock(&sroce_net_lock);
	/* The receive path may still be looking at this device. */
	synchronize_rcu();
	kfree(found);
}

/*
 * A namespace is going away.  Its devices' netdevs went earlier in its
 * teardown, but ib_core unregisters those devices from a work item that
 * may run after this, and the net_generic area (sn) is freed as soon as
 * this returns: so the devices let go of sn here, and their later
 * sroce_net_detach finds nothing to do.
 */
static __net_exit void sroce_net_exit_ns(struct net *net)
{
	struct sroce_net *sn = net_generic(net, sroce_net_id);
	struct sroce_dev_link *l, *tmp;

	mutex_lock(&sroce_net_lock);
	sroce_net_close(sn);
	list_for_each_entry_safe(l, tmp, &sn->devs, node) {
		list_del_rcu(&l->node);
		l->sdev->net = NULL;
		kfree_rcu(l, rcu);
	}
	sn->users = 0;
	mutex_unlock(&sroce_net_lock);
}

static __net_init int sroce_net_init_ns(struct net *net)
{
	struct sroce_net *sn = net_generic(net, sroce_net_id);

	INIT_LIST_HEAD(&sn->devs);
	return 0;
}

static struct pernet_operations sroce_net_ops = {
	.init = sroce_net_init_ns,
	.exit = sroce_net_exit_ns,
	.id = &sroce_net_id,
	.size = sizeof(struct sroce_net),
};

int sroce_net_init(void)
{
	return register_pernet_subsys(&sroce_net_ops);
}

void sroce_net_exit(void)
{
	unregister_pernet_subsys(&sroce_net_ops);
}

/* ---- transmit ----------------------------------------------------------- */

/* Whether the softirq-only (NAPI) skb caches may be used here: BH off. */
static bool sroce_bh_context(void)
{
	return in_softirq() && !in_hardirq() && !in_nmi();
}

struct sk_buff *sroce_skb_alloc(struct sroce_dev *sdev, unsigned int len)
{
	unsigned int room = LL_RESERVED_SPACE(sdev->ndev) +
			    sizeof(struct ipv6hdr) + sizeof(struct udphdr);
	unsigned int data_len = room + len + ROCE_ICRC_LEN;
	unsigned int size = SKB_DATA_ALIGN(data_len) +
			    SKB_DATA_ALIGN(sizeof(struct skb_shared_info));
	struct sk_buff *skb;
	void *data;

	/*
	 * Every sender runs with BH off, as a NIC driver's NAPI poll does,
	 * so packets come from the caches the kernel keeps for that: the
	 * buffer from the per-CPU page fragment cache, the sk_buff from a
	 * per-CPU stack refilled in bulk (and refilled by sroce_recv's
	 * napi_consume_skb).  __netdev_alloc_skb took both from the slab
	 * for packets under 1 KiB (ACKs, small messages), with a kmalloc,
	 * a zeroing and a slab free each: most of a 64-byte message's
	 * allocation cost (docs/bench/profile.md).
	 */
	if (likely(size <= PAGE_SIZE && sroce_bh_context())) {
		data = napi_alloc_frag(size);
		if (!data)
			return NULL;
		skb = napi_build_skb(data, size);
		if (!skb) {
			skb_free_frag(data);
			return NULL;
		}
		skb->dev = sdev->ndev;
	} else {
		skb = __netdev_alloc_skb(sdev->ndev, data_len, GFP_ATOMIC);
		if (!skb)
			return NULL;
	}
	skb_reserve(skb, room);
	skb_put(skb, len);
	return skb;
}

static void sroce_push_udp(struct sk_buff *skb, u16 sport)
{
	struct udphdr *uh;

	__skb_push(skb, sizeof(*uh));
	skb_reset_transport_header(skb);
	uh = udp_hdr(skb);
	uh->source = htons(sport);
	uh->dest = htons(ROCE_V2_UDP_PORT);
	uh->len = htons(skb->len);
	uh->check = 0;		/* RoCE v2 senders leave it out; the ICRC covers */
}

/*
 * Whether the transmit queue @skb will leave @dev by is stopped or frozen:
 * a NIC stops it when its ring is full, which is how a PFC pause from the
 * switch reaches us.  Handing the packet over anyway would queue it in the
 * qdisc behind the pause or, on a device without one, drop it.  The queue
 * is the one the core picks for a device without ndo_select_queue; a
 * multi-queue device with its own choice is left to the qdisc's pushback.
 * Frees and counts @skb if so; the caller then reports a refusal.
 */
static bool sroce_txq_stopped(struct sroce_dev *sdev, struct net_device *dev,
			      struct sk_buff *skb)
{
	u16 q = 0;

	if (dev->real_num_tx_queues > 1) {
		if (dev->netdev_ops->ndo_select_queue)
			return false;
#ifdef CONFIG_XPS
		/* As the core sets it before it picks: XPS indexes by it. */
		if (!skb->sender_cpu)
			skb->sender_cpu = raw_smp_processor_id() + 1;
#endif
		q = netdev_pick_tx(dev, skb, NULL);
	}
	if (likely(!netif_xmit_frozen_or_stopped(netdev_get_tx_queue(dev, q))))
		return false;
	sroce_count(sdev, SROCE_CNT_TX_QUEUE_STOPPED, 1);
	kfree_skb(skb);
	return true;
}

/*
 * The part of a traffic class that picks a route: without the ECN bits,
 * as the stack routes its own sockets (ECN marks change in flight).
 */
static u8 route_dscp(u8 tclass)
{
	return tclass & ~INET_ECN_MASK;
}

/*
 * A finished packet (headers final, routed) out: its ICRC, fault
 * injection's transmit rules, then the IP stack or localrx.c.
 *
 * A packet to an address of this host that takes localrx.c's way goes
 * without an ICRC, as TCP over the loopback device goes without
 * checksums (lo claims to offload them): it never meets a wire, and the
 * wire is what the ICRC guards.  From sender to receiver it only sits in
 * this host's memory, like the MR it was read from.  Computing and
 * checking it were two of the three reads of every payload byte on that
 * path and most of its CPU time (docs/bench/profile.md); on real CPUs
 * less, but not nothing.  A device with fault rules computes it always:
 * a rule may corrupt the packet, and the receiver must catch that.
 */
static int sroce_out(struct sroce_dev *sdev, struct sk_buff *skb, bool ipv6)
{
	bool faults = sroce_fault_on(&sdev->fault);

	if (!faults && sroce_local_route(sdev, skb_dst(skb))) {
		put_icrc(skb, ipv6, false);
		return sroce_local_out(skb, ipv6, false);
	}
	put_icrc(skb, ipv6, true);
	if (faults && sroce_fault_tx(sdev, skb, ipv6) == SROCE_FAULT_TAKEN)
		return NET_XMIT_SUCCESS;
	return sroce_ip_out(sdev, skb, ipv6);
}

/*
 * A packet of a QP whose path MTU is above what the link carries (qp.c
 * takes any up to 4096, as rxe and ConnectX do) keeps its path-MTU
 * payload, which the responder checks, and leaves in IP fragments: for
 * such a packet alone, IPv4 clears the don't-fragment bit and IPv6 sets
 * ignore_df, which lets the IP layer fragment it.  The ICRC, computed
 * after, covers the IPv4 flags as the receiver's reassembled header has
 * them, without DF.  rxe sends such a packet with DF, and the IP layer
 * drops it.
 */
static bool sroce_outgrows_link(const struct sk_buff *skb,
				const struct dst_entry *dst)
{
	return skb->len > dst_mtu(dst);
}

static int sroce_send4(struct sroce_dev *sdev, const struct sroce_av *av,
		       u8 tclass, struct dst_cache *cache, struct sk_buff *skb)
{
	struct net *net = dev_net(sdev->ndev);
	struct flowi4 fl = {
		.flowi4_oif = sdev->ndev->ifindex,
		.flowi4_proto = IPPROTO_UDP,
		.daddr = av->daddr.s6_addr32[3],
		.saddr = av->saddr.s6_addr32[3],
	};
	struct rtable *rt = NULL;
	struct iphdr *iph;

	sroce_flowi4_set_tos(&fl, route_dscp(tclass));
	if (cache)
		rt = dst_cache_get_ip4(cache, &fl.saddr);
	if (!rt) {
		rt = ip_route_output_key(net, &fl);
		if (IS_ERR(rt)) {
			kfree_skb(skb);
			return PTR_ERR(rt);
		}
		if (cache)
			dst_cache_set_ip4(cache, &rt->dst, fl.saddr);
	}

	__skb_push(skb, sizeof(*iph));
	skb_reset_network_header(skb);
	iph = ip_hdr(skb);
	iph->version = 4;
	iph->ihl = sizeof(*iph) >> 2;
	iph->tos = tclass;
	iph->tot_len = htons(skb->len);
	iph->frag_off = sroce_outgrows_link(skb, &rt->dst) ? 0 : htons(IP_DF);
	iph->ttl = av->hop_limit ? av->hop_limit : 64;
	iph->protocol = IPPROTO_UDP;
	iph->saddr = fl.saddr;
	iph->daddr = fl.daddr;
	iph->check = 0;
	skb_dst_set(skb, &rt->dst);
	skb->protocol = htons(ETH_P_IP);
	ip_select_ident(net, skb, NULL);
	if (sroce_txq_stopped(sdev, rt->dst.dev, skb))
		return NET_XMIT_DROP;
	return sroce_out(sdev, skb, false);
}

#if IS_ENABLED(CONFIG_IPV6)
static int sroce_send6(struct sroce_dev *sdev, const struct sroce_av *av,
		       u8 tclass, struct dst_cache *cache, struct sk_buff *skb)
{
	struct net *net = dev_net(sdev->ndev);
	struct flowi6 fl = {
		.flowi6_oif = sdev->ndev->ifindex,
		.flowi6_proto = IPPROTO_UDP,
		.daddr = av->daddr,
		.saddr = av->saddr,
		.flowlabel = ip6_make_flowinfo(route_dscp(tclass),
					       cpu_to_be32(av->flow_label)),
	};
	struct dst_entry *dst = NULL;
	struct ipv6hdr *ip6h;

	if (cache)
		dst = dst_cache_get_ip6(cache, &fl.saddr);
	if (!dst) {
		dst = ip6_dst_lookup_flow(net, NULL, &fl, NULL);
		if (IS_ERR(dst)) {
			kfree_skb(skb);
			return PTR_ERR(dst);
		}
		if (cache)
			dst_cache_set_ip6(cache, dst, &fl.saddr);
	}

	__skb_push(skb, sizeof(*ip6h));
	skb_reset_network_header(skb);
	ip6h = ipv6_hdr(skb);
	ip6_flow_hdr(ip6h, tclass, cpu_to_be32(av->flow_label));
	ip6h->payload_len = htons(skb->len - sizeof(*ip6h));
	ip6h->nexthdr = IPPROTO_UDP;
	ip6h->hop_limit = av->hop_limit ? av->hop_limit : 64;
	ip6h->saddr = av->saddr;
	ip6h->daddr = av->daddr;
	skb_dst_set(skb, dst);
	skb->protocol = htons(ETH_P_IPV6);
	skb->ignore_df = sroce_outgrows_link(skb, dst);
	if (sroce_txq_stopped(sdev, dst->dev, skb))
		return NET_XMIT_DROP;
	return sroce_out(sdev, skb, true);
}
#endif

int sroce_ip_out(struct sroce_dev *sdev, struct sk_buff *skb, bool ipv6)
{
	struct net *net = dev_net(skb->dev);

	if (sroce_local_route(sdev, skb_dst(skb)))
		return sroce_local_out(skb, ipv6, true);

#if IS_ENABLED(CONFIG_IPV6)
	if (ipv6)
		return ip6_local_out(net, NULL, skb);
#endif
	return ip_local_out(net, NULL, skb);
}

/* Consumes @skb whatever happens.  Runs with BH off (@cache is per CPU). */
int sroce_skb_send(struct sroce_dev *sdev, const struct sroce_av *av,
		   struct dst_cache *cache, u16 sport, struct sk_buff *skb)
{
	unsigned int roce_len;
	u8 tclass = sroce_cc_tclass(sdev, av->tclass,
				    skb->data[0] == ROCE_OP_CNP);
	int err;

	/* A nonlinear packet brought its ICRC room (sroce_skb_payload). */
	if (!skb_is_nonlinear(skb))
		skb_put(skb, ROCE_ICRC_LEN);
	roce_len = skb->len;
	sroce_push_udp(skb, sport);
	skb->dev = sdev->ndev;
	/* DSCP / 8 is the 802.1p priority RoCE deployments map DSCP to
	 * (26 -> 3, the usual lossless class; CNPs' 48 -> 6), so PFC
	 * classes and priority qdisc bands see RoCE where they expect it.
	 */
	skb->priority = tclass >> 5;
	skb_clear_hash(skb);
	/* The route was cached for the AV's DSCP; a CNP goes out with
	 * another.  ECN bits do not choose routes (route_dscp), so CC's
	 * ECT(0) must not bypass the cache: it did, for every packet, and
	 * cost a FIB lookup and an uncached dst per packet on loopback.
	 */
	if (route_dscp(tclass) != route_dscp(av->tclass))
		cache = NULL;
#if IS_ENABLED(CONFIG_IPV6)
	if (av->ipv6)
		err = sroce_send6(sdev, av, tclass, cache, skb);
	else
#endif
		err = sroce_send4(sdev, av, tclass, cache, skb);
	/* NET_XMIT_CN is no success for us: RED and others return it for a
	 * packet they dropped.  Resending one that was queued after all
	 * (fq_codel's CN can mean another packet went) is a harmless
	 * duplicate; dropping one the caller thinks sent is a loss.
	 */
	if (err == NET_XMIT_DROP || err == NET_XMIT_CN || err == -ENOBUFS)
		return -EBUSY;
	if (err) {
		sroce_count(sdev, SROCE_CNT_TX_ERRORS, 1);
		return err;
	}
	sroce_count(sdev, SROCE_CNT_TX_PACKETS, 1);
	sroce_count(sdev, SROCE_CNT_TX_BYTES, roce_len);
	/* The AV's IPv4 addresses are v4-mapped, as ib_core's GIDs: its
	 * helper (which takes no const) tells both kinds of group apart.
	 */
	if (rdma_is_multicast_addr((struct in6_addr *)&av->daddr))
		sroce_count(sdev, SROCE_CNT_TX_MCAST_PACKETS, 1);
	return 0;
}

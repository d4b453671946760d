/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Packets in and out: the UDP glue (net.c), packets that stay in this
 * host (localrx.c), receive steering (rxsteer.c), building a packet's
 * payload (zcopy.c) and the receive entry (recv.c).  Owns struct
 * sroce_rx_cb and sroce_payload.
 */
#ifndef SROCE_NET_H
#define SROCE_NET_H

#include <linux/ipv6.h>
#include <linux/netdevice.h>
#include <linux/skbuff.h>
#include <linux/spinlock.h>
#include <linux/udp.h>

#include "mr.h"
#include "proto/wire.h"

struct dst_cache;
struct dst_entry;
struct net;
struct sroce_av;
struct sroce_dev;
struct sroce_mr;
struct sroce_net;

/* ------------------------------------------------------------------------
 * Network glue (net.c): one UDP socket per namespace, packets in and out.
 */
int sroce_net_attach(struct sroce_dev *sdev);
void sroce_net_detach(struct sroce_dev *sdev);
int sroce_net_init(void);
void sroce_net_exit(void);
struct sroce_net *sroce_net_of(struct net *net);
/* A packet from namespace @sn's UDP socket (or localrx.c), data at the
 * UDP header: checked, given to its device.  @has_icrc: false for a
 * packet that never left this host and was sent without one (net.c's
 * sroce_out).  Consumes @skb.
 */
void sroce_net_recv(struct sroce_net *sn, struct sk_buff *skb, bool has_icrc);
/*
 * skb->cb of a received packet from sroce_net_recv to sroce_rx_deliver
 * (rxsteer.c queues it in between).  All zero, as fault.c leaves a packet
 * it held, means a packet with an ICRC to check.
 */
struct sroce_rx_cb {
	bool no_icrc;
};

static inline struct sroce_rx_cb *sroce_rx_cb(struct sk_buff *skb)
{
	BUILD_BUG_ON(sizeof(struct sroce_rx_cb) > sizeof(skb->cb));
	return (struct sroce_rx_cb *)skb->cb;
}

/* localrx.c: packets to this host's own addresses skip the IP stack */
void sroce_local_rx_init(void);
void sroce_local_rx_exit(void);
bool sroce_local_route(const struct sroce_dev *sdev, const struct dst_entry *dst);
int sroce_local_out(struct sk_buff *skb, bool ipv6, bool has_icrc);

/* The ICRC's CRC engine, picked from the CPU at load (crc_simd.c). */
void sroce_crc_simd_init(void);

/* Headroom for Ethernet + IP + UDP in front of a RoCE packet. */
#define SROCE_HDR_ROOM (LL_MAX_HEADER + sizeof(struct ipv6hdr) + \
			sizeof(struct udphdr))
/*
 * Allocates an skb for a RoCE packet of @len bytes (BTH through pad, no
 * ICRC) and returns it with data at the BTH and len == @len.
 */
struct sk_buff *sroce_skb_alloc(struct sroce_dev *sdev, unsigned int len);
/*
 * Adds UDP/IP headers and the ICRC and sends.  Consumes @skb.  0, -EBUSY
 * when the local stack refused or dropped it under congestion (queue
 * full, qdisc drop: the packet never left, send it again later), or
 * another error (route or device unavailable).  @cache, if not NULL,
 * keeps the route to @av between packets; its owner resets it when @av
 * changes.
 */
int sroce_skb_send(struct sroce_dev *sdev, const struct sroce_av *av,
		   struct dst_cache *cache, u16 sport, struct sk_buff *skb);

/*
 * Where a packet's payload comes from (zcopy.c): inline data, a scatter
 * list (@sgl from @offset) or, for READ responses, one checked MR range
 * (@mr at @mr_va, under the caller's rcu_read_lock).
 * @by_reference: the memory stays as it is until the peer has the data
 * (an RC request's), so the packet may reference it instead of copying.
 */
struct sroce_payload {
	const void *inline_data;
	struct sroce_sgl sgl;
	u64 offset;
	struct sroce_mr *mr;
	u64 mr_va;
	u32 len;
	bool by_reference;
};

/* Below this, copying costs less than taking page references. */
#define SROCE_ZCOPY_MIN 256
/*
 * An skb holding @hdr_len bytes for the caller's headers (at skb->data),
 * then the payload and its pad: as page fragments followed by a trailer
 * fragment with room for the ICRC, or copied into the linear part.  A
 * nonlinear skb carries its ICRC room; sroce_skb_send() adds it to a
 * linear one.  NULL and *@err: -ENOBUFS, or the SGL's -EACCES, -ERANGE,
 * -EINVAL (sroce_sgl_walk).
 */
struct sk_buff *sroce_skb_payload(struct sroce_dev *sdev, u32 hdr_len,
				  const struct sroce_payload *p, int *err);

/*
 * Calls @fn on each contiguous piece of @len bytes at @off (from
 * skb->data) of @skb: its linear part, then its page fragments, mapped
 * one page at a time.  @fn's error ends the walk; -EFAULT if @skb is
 * shorter (frag lists are not walked).
 */
typedef int (*sroce_piece_fn)(void *ctx, const u8 *p, u32 n);
int sroce_skb_walk(const struct sk_buff *skb, u32 off, u32 len,
		   sroce_piece_fn fn, void *ctx);

/* A finished IP packet out to the stack, as sroce_skb_send ends (and
 * fault injection's held or duplicated packets go on).  Consumes @skb.
 */
int sroce_ip_out(struct sroce_dev *sdev, struct sk_buff *skb, bool ipv6);
/* A RoCE packet in, from its ICRC check on: @skb data at the UDP header,
 * trimmed to it.  Consumes @skb.  Under rcu_read_lock, BH off.
 */
void sroce_rx_deliver(struct sroce_dev *sdev, struct sk_buff *skb, bool ipv6);

/* rxsteer.c: a busy sender's CPU hands what it receives to the next CPU */
void sroce_rx_steer_init(struct sroce_dev *sdev);
void sroce_rx_steer_exit(struct sroce_dev *sdev);
bool sroce_rx_steer(struct sroce_dev *sdev, struct sk_buff *skb);
void sroce_spin_unlock_bh_sent(spinlock_t *lock, bool burst) __releases(lock);

/* Receive entry from net.c: @skb data at the BTH, ICRC checked. */
void sroce_recv(struct sroce_dev *sdev, struct sk_buff *skb,
		const struct roce_pkt_info *pkt);

#endif /* SROCE_NET_H */

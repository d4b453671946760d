// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Packets in: after net.c checked the ICRC and parsed the headers, pick
 * the QP (or the multicast group's QPs), check that the packet belongs to
 * it, and hand it to the responder (requests) or the completer
 * (responses).  Everything not acceptable is dropped and counted.
 */
#include <net/ipv6.h>

#include "sroce.h"

/* The P_Key table holds only the default key; match its low 15 bits. */
static bool pkey_ok(u16 pkey)
{
	return (pkey & 0x7fff) == (ROCE_DEFAULT_PKEY & 0x7fff);
}

static bool qp_takes(const struct sroce_qp *qp, const struct roce_pkt_info *pkt)
{
	switch (pkt->op->qpt) {
	case ROCE_QPT_RC:
		return qp->ib.qp_type == IB_QPT_RC;
	case ROCE_QPT_UC:
		return qp->ib.qp_type == IB_QPT_UC;
	case ROCE_QPT_UD:
		return qp->ib.qp_type == IB_QPT_UD || qp->ib.qp_type == IB_QPT_GSI;
	case ROCE_QPT_XRC:	/* requests to the target, answers to the sender */
		return qp->ib.qp_type == ((pkt->op->flags & ROCE_OPF_REQUEST) ?
					  IB_QPT_XRC_TGT : IB_QPT_XRC_INI);
	case ROCE_QPT_CNP:	/* slows any QP that sends */
		return true;
	default:
		return false;
	}
}

/*
 * RC and UC take packets only from the peer their AV names, with our
 * address as the destination, as rxe and hardware do: QPNs are handed out
 * from 16 up and a PSN window is wide, so anyone else who can reach the
 * port could otherwise write into a connection, or, with a CNP, throttle
 * it.  The UDP source port is the peer's choice per flow, so it says
 * nothing.  A QP before RTR has no AV yet, but its responder drops
 * everything anyway.  UD QPs talk to many hosts: a UD QP takes packets,
 * CNPs too, from anyone.
 */
static bool from_peer(const struct sroce_qp *qp, const struct sk_buff *skb)
{
	const struct sroce_av *av = &qp->av;

	if (skb->protocol == htons(ETH_P_IP))
		return !av->ipv6 &&
		       ip_hdr(skb)->saddr == av->daddr.s6_addr32[3] &&
		       ip_hdr(skb)->daddr == av->saddr.s6_addr32[3];
	return av->ipv6 &&
	       ipv6_addr_equal(&ipv6_hdr(skb)->saddr, &av->daddr) &&
	       ipv6_addr_equal(&ipv6_hdr(skb)->daddr, &av->saddr);
}

void sroce_recv(struct sroce_dev *sdev, struct sk_buff *skb,
		const struct roce_pkt_info *pkt)
{
	u32 qpn = pkt->bth.dest_qpn;
	struct sroce_qp *qp;

	if (!pkey_ok(pkt->bth.pkey)) {
		sroce_count(sdev, SROCE_CNT_RX_DROPPED, 1);
		goto out;
	}
	if (pkt->op->qpt == ROCE_QPT_CNP)
		sroce_count(sdev, SROCE_CNT_CNP_RCVD, 1);
	if (qpn == ROCE_QPN_MASK && pkt->op->qpt == ROCE_QPT_UD) {
		sroce_count(sdev, SROCE_CNT_RX_MCAST_PACKETS, 1);
		sroce_mcast_recv(sdev, skb, pkt);
		goto out;
	}
	qp = sroce_qp_get(sdev, qpn);
	if (!qp) {
		sroce_count(sdev, SROCE_CNT_RX_NO_QP, 1);
		goto out;
	}
	if (!qp_takes(qp, pkt) || (!sroce_qp_ud(qp) && !from_peer(qp, skb))) {
		sroce_count(sdev, SROCE_CNT_RX_DROPPED, 1);
		goto put;
	}
	if (pkt->op->qpt == ROCE_QPT_CNP) {
		sroce_cc_cnp_recv(qp);
		goto put;
	}
	if (sroce_cc_skb_ce(skb))
		sroce_cc_ce_recv(qp, skb, pkt);
	if (pkt->op->flags & ROCE_OPF_REQUEST)
		sroce_resp_recv(qp, skb, pkt);
	else
		sroce_comp_recv(qp, skb, pkt);
put:
	sroce_qp_put(qp);
out:
	/* BH is off: the sk_buff goes back to this CPU's NAPI cache, where
	 * net.c's sroce_skb_alloc takes the next one from.
	 */
	napi_consume_skb(skb, 1);
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * UD multicast: groups are keyed by their GID; each holds the QPs attached
 * to it.  An Ethernet netdev joins the matching Ethernet multicast address
 * so the packets reach us; an L3 netdev (tun, a tunnel) has no link-layer
 * filter to open.  Lookups on receive are RCU; changes take a mutex.
 */
#include <linux/inetdevice.h>
#include <net/addrconf.h>
#include <net/if_inet6.h>

#include "sroce.h"

struct sroce_mcast_group {
	struct list_head node;		/* on sroce_mcast_groups */
	struct sroce_dev *sdev;
	union ib_gid gid;
	u8 mac[ETH_ALEN];
	struct list_head members;	/* RCU list of sroce_mcast_member */
	unsigned int count;
	struct rcu_head rcu;
};

struct sroce_mcast_member {
	struct list_head group_node;	/* on group->members */
	struct list_head qp_node;	/* on qp->mcast */
	struct sroce_mcast_group *group;
	struct sroce_qp *qp;
	struct sroce_qp_handle *handle;	/* for the receive path (RCU) */
	struct rcu_head rcu;
};

static LIST_HEAD(sroce_mcast_groups);
static DEFINE_MUTEX(sroce_mcast_lock);

static struct sroce_mcast_group *group_find(struct sroce_dev *sdev,
					    const union ib_gid *gid)
{
	struct sroce_mcast_group *g;

	list_for_each_entry_rcu(g, &sroce_mcast_groups, node,
				lockdep_is_held(&sroce_mcast_lock))
		if (g->sdev == sdev && !memcmp(&g->gid, gid, sizeof(*gid)))
			return g;
	return NULL;
}

/* The Ethernet address IP multicast to this group uses. */
static int gid_to_mac(const union ib_gid *gid, u8 *mac)
{
	if (ipv6_addr_v4mapped((struct in6_addr *)gid)) {
		__be32 addr;

		memcpy(&addr, gid->raw + 12, sizeof(addr));
		if (!ipv4_is_multicast(addr))
			return -EINVAL;
		ip_eth_mc_map(addr, mac);
		return 0;
	}
	if (!ipv6_addr_is_multicast((struct in6_addr *)gid))
		return -EINVAL;
	ipv6_eth_mc_map((struct in6_addr *)gid, mac);
	return 0;
}

int sroce_attach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid)
{
	struct sroce_qp *qp = to_sqp(ibqp);
	struct sroce_dev *sdev = qp->sdev;
	struct sroce_mcast_member *m;
	struct sroce_mcast_group *g;
	u8 mac[ETH_ALEN];
	int err;

	if (ibqp->qp_type != IB_QPT_UD)
		return -EINVAL;
	err = gid_to_mac(gid, mac);
	if (err)
		return err;

	mutex_lock(&sroce_mcast_lock);
	g = group_find(sdev, gid);
	if (!g) {
		err = -ENOMEM;
		g = kzalloc(sizeof(*g), GFP_KERNEL);
		if (!g)
			goto out;
		g->sdev = sdev;
		g->gid = *gid;
		memcpy(g->mac, mac, ETH_ALEN);
		INIT_LIST_HEAD(&g->members);
		err = sroce_ndev_has_mac(sdev->ndev) ?
			      dev_mc_add(sdev->ndev, mac) : 0;
		if (err) {
			kfree(g);
			goto out;
		}
		list_add_tail_rcu(&g->node, &sroce_mcast_groups);
	}
	err = 0;
	list_for_each_entry(m, &g->members, group_node)
		if (m->qp == qp)
			goto out;	/* attaching twice is a no-op */
	err = -ENOMEM;
	if (g->count >= SROCE_MAX_MCAST_QP)
		goto out;
	m = kzalloc(sizeof(*m), GFP_KERNEL);
	if (!m)
		goto out;
	m->group = g;
	m->qp = qp;
	m->handle = qp->handle;
	list_add_tail_rcu(&m->group_node, &g->members);
	list_add_tail(&m->qp_node, &qp->mcast);
	g->count++;
	err = 0;
out:
	mutex_unlock(&sroce_mcast_lock);
	return err;
}

static void member_remove(struct sroce_mcast_member *m)
{
	struct sroce_mcast_group *g = m->group;

	list_del_rcu(&m->group_node);
	list_del(&m->qp_node);
	kfree_rcu(m, rcu);
	if (--g->count)
		return;
	list_del_rcu(&g->node);
	if (sroce_ndev_has_mac(g->sdev->ndev))
		dev_mc_del(g->sdev->ndev, g->mac);
	kfree_rcu(g, rcu);
}

int sroce_detach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid)
{
	struct sroce_qp *qp = to_sqp(ibqp);
	struct sroce_mcast_member *m;
	int err = -EINVAL;

	mutex_lock(&sroce_mcast_lock);
	list_for_each_entry(m, &qp->mcast, qp_node) {
		if (!memcmp(&m->group->gid, gid, sizeof(*gid))) {
			member_remove(m);
			err = 0;
			break;
		}
	}
	mutex_unlock(&sroce_mcast_lock);
	return err;
}

void sroce_mcast_detach_all(struct sroce_qp *qp)
{
	struct sroce_mcast_member *m, *tmp;

	mutex_lock(&sroce_mcast_lock);
	list_for_each_entry_safe(m, tmp, &qp->mcast, qp_node)
		member_remove(m);
	mutex_unlock(&sroce_mcast_lock);
}

/* Delivers a multicast UD packet to every QP attached to its group. */
void sroce_mcast_recv(struct sroce_dev *sdev, struct sk_buff *skb,
		      const struct roce_pkt_info *pkt)
{
	struct sroce_mcast_member *m;
	struct sroce_mcast_group *g;
	struct sroce_qp *qp;
	union ib_gid gid;

	if (skb->protocol == htons(ETH_P_IP))
		ipv6_addr_set_v4mapped(ip_hdr(skb)->daddr, (struct in6_addr *)&gid);
	else
		memcpy(&gid, &ipv6_hdr(skb)->daddr, sizeof(gid));

	rcu_read_lock();
	g = group_find(sdev, &gid);
	if (g) {
		/* m->qp may be freed already: only the handle outlives it. */
		list_for_each_entry_rcu(m, &g->members, group_node) {
			qp = sroce_qp_get_handle(m->handle);
			if (qp) {
				sroce_resp_recv(qp, skb, pkt);
				sroce_qp_put(qp);
			}
		}
	} else {
		sroce_count(sdev, SROCE_CNT_RX_DROPPED, 1);
	}
	rcu_read_unlock();
}

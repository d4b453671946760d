/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Owns struct sroce_av (an AH's, a QP's peer, a UD WQE's destination)
 * and struct sroce_ah (ah.c), and the UDP source port an AV gives a
 * flow.  Neither has a lock: an AH does not change after create, and a
 * QP's AV is its attribute (qp.h).
 */
#ifndef SROCE_AH_H
#define SROCE_AH_H

#include <linux/in6.h>
#include <rdma/ib_verbs.h>

struct sroce_dev;

/* ------------------------------------------------------------------------
 * Address vectors (ah.c): where a packet goes, resolved from a GID.
 */
struct sroce_av {
	bool ipv6;
	struct in6_addr saddr;		/* IPv4 as v4-mapped */
	struct in6_addr daddr;
	u8 tclass;			/* DSCP << 2 | ECN */
	u8 hop_limit;
	u32 flow_label;
};

struct sroce_ah {
	struct ib_ah ib;
	struct sroce_av av;
	u32 ah_num;
};

static inline struct sroce_ah *to_sah(struct ib_ah *ah)
{
	return container_of(ah, struct sroce_ah, ib);
}

int sroce_av_from_attr(struct sroce_av *av, const struct rdma_ah_attr *attr);
/* UD: AH by number for user WQEs; caller holds rcu_read_lock(). */
struct sroce_ah *sroce_ah_lookup(struct sroce_dev *sdev, u32 ah_num);
int sroce_create_ah(struct ib_ah *ah, struct rdma_ah_init_attr *attr,
		    struct ib_udata *udata);
int sroce_destroy_ah(struct ib_ah *ah, u32 flags);
int sroce_query_ah(struct ib_ah *ah, struct rdma_ah_attr *attr);

/*
 * UDP source port of a flow, as rxe and ConnectX pick it: from the AV's
 * flow label if the application set one, else hashed from both QPNs, in
 * 0xC000-0xFFFF.  Gives ECMP its entropy; never 0 (reserved).
 */
static inline u16 sroce_udp_sport(const struct sroce_av *av, u32 lqpn, u32 rqpn)
{
	return rdma_get_udp_sport(av->flow_label, lqpn, rqpn);
}

#endif /* SROCE_AH_H */

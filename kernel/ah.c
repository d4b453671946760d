// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Address handles and address vectors (RoCE v2 only).
 *
 * Every AH gets a number in sdev->ahs, by which user UD work requests name
 * it.  Lifetime of a lookup:
 *  - The send engine finds a user WQE's AH with sroce_ah_lookup() under
 *    rcu_read_lock(), checks that it belongs to the QP's PD and copies the
 *    av out before unlocking.
 *  - ib_core frees the AH itself as soon as destroy_ah returns, so a user
 *    AH's destruction (always sleepable: uverbs passes
 *    RDMA_DESTROY_AH_SLEEPABLE) unpublishes it and waits for a grace
 *    period.
 *  - Kernel consumers may create and destroy AHs in atomic context (the CM
 *    does, under a spinlock with interrupts off).  Their destruction cannot
 *    wait, so a kernel AH is never published: its number is only reserved
 *    (a lookup finds NULL).  Kernel QPs take the av from the ib_ah when the
 *    WR is posted and never look an AH up by number; a user QP that names
 *    a kernel AH's number, which is easy to guess, must find nothing at
 *    all, since the lookup reads ah->ib.pd before the PD check can refuse.
 *    So: a grace period only for user AHs, which are always sleepable.
 */
#include <linux/in6.h>
#include <net/ipv6.h>
#include <rdma/ib_cache.h>
#include <rdma/uverbs_ioctl.h>

#include "sroce.h"

/*
 * RoCE v1 (RDMA_NETWORK_ROCE_V1) GIDs are refused: sroce speaks RoCE v2
 * only, over UDP/IPv4 or UDP/IPv6.
 */
int sroce_av_from_attr(struct sroce_av *av, const struct rdma_ah_attr *attr)
{
	const struct ib_global_route *grh;
	const struct ib_gid_attr *sgid_attr;

	if (attr->type != RDMA_AH_ATTR_TYPE_ROCE ||
	    !(rdma_ah_get_ah_flags(attr) & IB_AH_GRH))
		return -EINVAL;
	grh = rdma_ah_read_grh(attr);
	sgid_attr = grh->sgid_attr;
	if (!sgid_attr)
		return -EINVAL;

	memset(av, 0, sizeof(*av));
	switch (rdma_gid_attr_network_type(sgid_attr)) {
	case RDMA_NETWORK_IPV4:
		av->ipv6 = false;
		break;
	case RDMA_NETWORK_IPV6:
		av->ipv6 = true;
		break;
	default:
		return -EINVAL;
	}
	memcpy(&av->saddr, sgid_attr->gid.raw, sizeof(av->saddr));
	memcpy(&av->daddr, grh->dgid.raw, sizeof(av->daddr));
	/* Both ends in one family: an IPv4 GID is v4-mapped, IPv6 is not. */
	if (ipv6_addr_v4mapped(&av->daddr) != !av->ipv6)
		return -EINVAL;
	av->tclass = grh->traffic_class;
	/*
	 * Used as the IP TTL / hop limit as given, like hardware and rxe do
	 * (IBTA A17 maps the GRH hop limit onto it).  rdma_cm fills in the
	 * route's; verbs applications choose their own.
	 */
	av->hop_limit = grh->hop_limit;
	av->flow_label = grh->flow_label & 0xfffff;	/* 20 bits */
	return 0;
}

/*
 * The CM creates and destroys AHs with interrupts off, so the table lock is
 * always taken irqsave.  Allocations stay GFP_ATOMIC: for GFP_KERNEL the
 * xarray may drop the lock to sleep, and since sdev->ahs is not
 * XA_FLAGS_LOCK_IRQ it would do so with a plain spin_unlock, leaving
 * interrupts off.  The slot stays empty (xa_load() returns NULL for it)
 * until the AH is published, if ever.
 */
static int sroce_ah_reserve_num(struct sroce_dev *sdev, struct sroce_ah *ah)
{
	unsigned long flags;
	int err;

	xa_lock_irqsave(&sdev->ahs, flags);
	err = __xa_alloc_cyclic(&sdev->ahs, &ah->ah_num, NULL,
				XA_LIMIT(1, SROCE_MAX_AH), &sdev->next_ah,
				GFP_ATOMIC);
	xa_unlock_irqrestore(&sdev->ahs, flags);
	if (err < 0)
		return err == -EBUSY ? -ENOMEM : err;
	return 0;
}

static void sroce_ah_erase(struct sroce_dev *sdev, u32 ah_num)
{
	unsigned long flags;

	xa_lock_irqsave(&sdev->ahs, flags);
	__xa_erase(&sdev->ahs, ah_num);
	xa_unlock_irqrestore(&sdev->ahs, flags);
}

int sroce_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init,
		    struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(ibah->device);
	struct sroce_ah *ah = to_sah(ibah);
	struct sroce_create_ah_resp resp = {};
	unsigned long flags;
	void *old;
	int err;

	if (udata && udata->outlen < sizeof(resp))
		return -EINVAL;
	err = sroce_av_from_attr(&ah->av, init->ah_attr);
	if (err)
		return err;

	/* A kernel AH: a number for its own sake, nothing to look up. */
	if (!udata)
		return sroce_ah_reserve_num(sdev, ah);

	/*
	 * User AH: reserve the number, answer, and only then publish, so a
	 * failed copy needs no grace period before ib_core frees the AH.
	 */
	err = sroce_ah_reserve_num(sdev, ah);
	if (err)
		return err;
	resp.ah_num = ah->ah_num;
	err = ib_copy_to_udata(udata, &resp, sizeof(resp));
	if (err)
		goto err_num;
	/* Into the reserved slot: nothing to allocate. */
	xa_lock_irqsave(&sdev->ahs, flags);
	old = __xa_store(&sdev->ahs, ah->ah_num, ah, GFP_ATOMIC);
	xa_unlock_irqrestore(&sdev->ahs, flags);
	if (xa_is_err(old)) {
		err = xa_err(old);
		goto err_num;
	}
	return 0;

err_num:
	sroce_ah_erase(sdev, ah->ah_num);
	return err;
}

int sroce_destroy_ah(struct ib_ah *ibah, u32 flags)
{
	struct sroce_dev *sdev = to_sdev(ibah->device);
	struct sroce_ah *ah = to_sah(ibah);

	sroce_ah_erase(sdev, ah->ah_num);
	/* Lookups that found it finish copying the av first (see top). */
	if (flags & RDMA_DESTROY_AH_SLEEPABLE)
		synchronize_rcu();
	return 0;
}

/*
 * The caller holds rcu_read_lock(), must refuse an AH whose ib.pd is not
 * its QP's, and must copy ah->av before unlocking.
 */
struct sroce_ah *sroce_ah_lookup(struct sroce_dev *sdev, u32 ah_num)
{
	return xa_load(&sdev->ahs, ah_num);
}

int sroce_query_ah(struct ib_ah *ibah, struct rdma_ah_attr *attr)
{
	struct sroce_ah *ah = to_sah(ibah);
	union ib_gid dgid;

	memset(attr, 0, sizeof(*attr));
	attr->type = ibah->type;
	memcpy(dgid.raw, &ah->av.daddr, sizeof(dgid.raw));
	rdma_ah_set_grh(attr, &dgid, ah->av.flow_label,
			ibah->sgid_attr ? ibah->sgid_attr->index : 0,
			ah->av.hop_limit, ah->av.tclass);
	rdma_ah_set_port_num(attr, SROCE_PORT);
	return 0;
}

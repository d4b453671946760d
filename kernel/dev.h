/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The device (device.c, verbs.c, counters.c): the limits it advertises,
 * its counters, struct sroce_dev and the verbs objects that are nothing
 * but their ib_core base (ucontext, PD, XRC domain).  What a device
 * holds of the other concepts (congestion control, fault injection, the
 * key and QP tables) is declared by their own headers.
 */
#ifndef SROCE_DEV_H
#define SROCE_DEV_H

#include <linux/atomic.h>
#include <linux/if_arp.h>
#include <linux/list.h>
#include <linux/netdevice.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <rdma/ib_addr.h>
#include <rdma/ib_verbs.h>

#include "cc.h"
#include "fault.h"
#include "sqmark.h"

#define SROCE_PORT 1			/* the one port of every sroce device */

/*
 * Limits we advertise.  They are promises: each one is enforced where the
 * object is created.
 */
#define SROCE_MAX_QP		(1 << 16)
#define SROCE_MAX_QP_WR		16384
#define SROCE_MAX_SGE		32
#define SROCE_MAX_INLINE	256
#define SROCE_MAX_CQ		(1 << 16)
/*
 * ConnectX's max_cqe (mlx4, mlx5: 2^22 - 1).  Applications size CQs for
 * it: libfabric's ofi_rxm asks 262144 entries for each endpoint's CQ.
 * A user CQ's ring, 64 B a slot, is allocated at create time: 256 MiB
 * at the most.
 */
#define SROCE_MAX_CQE		((1 << 22) - 1)
#define SROCE_MAX_MR		(1 << 18)
#define SROCE_MAX_MW		(1 << 16)
#define SROCE_MAX_PD		(1 << 16)
#define SROCE_MAX_SRQ		(1 << 16)
#define SROCE_MAX_SRQ_WR	16384
#define SROCE_MAX_AH		(1 << 16)
#define SROCE_MAX_RD_ATOMIC	128
#define SROCE_MAX_UNACKED_PSN	128	/* RC send window (proto/window.h) */
#define SROCE_MAX_MCAST_GRP	8192
#define SROCE_MAX_MCAST_QP	56
#define SROCE_MAX_MSG_SIZE	(1U << 31)
/* The largest ring: a CQ of SROCE_MAX_CQE; WQ rings are bounded by max_wr. */
#define SROCE_MAX_RING_SLOTS	(SROCE_MAX_CQE + 1)
#define SROCE_MAX_FRMR_PAGES	512

/* QPNs 0 and 1 are the special QPs; ours start at 16 like hardware's. */
#define SROCE_FIRST_QPN		16

/*
 * IB_UVERBS_ACCESS_FLUSH_GLOBAL and _PERSISTENT (uapi bits 8 and 9, 6.2):
 * a QP's or an MR's permission for the peer's RDMA FLUSH of that
 * placement type (proto/access.h's values).  A QP takes both, as ConnectX
 * and rxe do, so that rdma_cm's and pyverbs' RC QPs (which ask for both)
 * can be created.  An MR can have FLUSH_GLOBAL only where ib_core knows
 * the bit (6.2+) and the device claims IB_DEVICE_FLUSH_GLOBAL; no MR
 * here is persistent memory, so none can be flushed to persistence.  By
 * value, since 6.1's headers predate the names.
 */
#define SROCE_ACCESS_FLUSH_GLOBAL	(1 << 8)
#define SROCE_ACCESS_FLUSH_PERSISTENT	(1 << 9)
#define SROCE_ACCESS_FLUSH	(SROCE_ACCESS_FLUSH_GLOBAL | SROCE_ACCESS_FLUSH_PERSISTENT)

/* ------------------------------------------------------------------------
 * Counters: one enum, one name table (counters.c), per device and per
 * CPU.  Every packet bumps several, from whichever CPU sends or receives
 * it: one shared set of atomics would bounce its cache lines between
 * the CPUs on every packet.  Readers add the CPUs up.
 */
enum sroce_counter {
	SROCE_CNT_TX_PACKETS,
	SROCE_CNT_TX_BYTES,
	SROCE_CNT_RX_PACKETS,
	SROCE_CNT_RX_BYTES,
	SROCE_CNT_RETRANSMITS,
	SROCE_CNT_TIMEOUTS,
	SROCE_CNT_RNR_NAK_SENT,
	SROCE_CNT_RNR_NAK_RCVD,
	SROCE_CNT_SEQ_ERR_SENT,
	SROCE_CNT_SEQ_ERR_RCVD,
	SROCE_CNT_ICRC_ERRORS,
	SROCE_CNT_DUP_REQUESTS,
	SROCE_CNT_RX_MALFORMED,
	SROCE_CNT_RX_NO_QP,
	SROCE_CNT_RX_DROPPED,		/* well-formed but not acceptable */
	SROCE_CNT_TX_ERRORS,
	SROCE_CNT_REMOTE_ACCESS_ERR,
	SROCE_CNT_COMPLETION_ERRORS,
	SROCE_CNT_CNP_SENT,
	SROCE_CNT_CNP_RCVD,
	SROCE_CNT_ECN_MARKED_RCVD,	/* CE-marked RoCE packets */
	SROCE_CNT_TX_REFUSED,		/* packets the local stack pushed back */
	SROCE_CNT_TX_PAUSE_US,		/* time sending stood still for that */
	SROCE_CNT_TX_RESENT,		/* sent after being pushed back */
	SROCE_CNT_TX_QUEUE_STOPPED,	/* not handed to a stopped tx queue */
	SROCE_CNT_TX_MCAST_PACKETS,	/* of tx_packets: to a multicast group */
	SROCE_CNT_RX_MCAST_PACKETS,	/* of rx_packets: to multicast QPN */
	SROCE_CNT_LINK_DOWNED,		/* port ACTIVE -> DOWN transitions */
	SROCE_CNT_TX_ZCOPY_BYTES,	/* payload sent from registered memory */
	SROCE_CNT_TX_COPIED_BYTES,	/* payload copied into packets */
	SROCE_CNT_RX_STEERED,		/* received on another CPU (rxsteer.c) */
	SROCE_CNT_RX_HELD_FOR_READ,	/* requests that waited for a READ's
					 * response to go first (resp_read.c)
					 */
	SROCE_CNT_SQ_DOORBELLS,		/* doorbell syscalls of user SQs */
	SROCE_CNT_SQ_POLLED,		/* engine runs for WQEs the send-queue
					 * poller found (doorbell.c)
					 */
	SROCE_CNT_XRC_BAD_SRQ,		/* XRCETH named no SRQ of the domain */
	SROCE_CNT_ODP_FAULTS,		/* on-demand pages missing, fault queued */
	SROCE_CNT_ODP_FAULT_ERRORS,	/* faults the kernel refused (no mapping) */
	SROCE_CNT_ODP_INVALIDATIONS,	/* ranges the MMU notifier took away */
	/* Fault injection (fault.c): what the rules did. */
	SROCE_CNT_FAULT_DROP,
	SROCE_CNT_FAULT_DELAY,
	SROCE_CNT_FAULT_DUP,
	SROCE_CNT_FAULT_CORRUPT,
	SROCE_CNT_FAULT_RNR_NAK,
	SROCE_CNT_FAULT_ACCESS_NAK,
	SROCE_CNT_FAULT_LINK_FLAPS,	/* times the port was forced down */
	SROCE_CNT_FAULT_LINK_DOWN,	/* packets lost to a forced-down port */
	SROCE_CNT_NUM
};

struct sroce_net;

struct sroce_counters {
	u64 v[SROCE_CNT_NUM];
};

struct sroce_dev {
	struct ib_device ib;		/* must stay first: ib_alloc_device */
	struct net_device *ndev;	/* held by ib_core via ib_device_set_netdev */
	struct list_head node;		/* on sroce_devices, for module unload */
	struct sroce_net *net;		/* UDP sockets of ndev's namespace */
	bool port_was_up;		/* last port state seen, under RTNL */
	struct work_struct gid_rescan;	/* an address came to an L3 netdev */

	struct xarray qps;		/* qpn -> sroce_qp (RCU lookups) */
	u32 next_qpn;
	struct xarray mrs;		/* key index (key >> 8) -> MR or window (mw.c) */
	atomic64_t mrs_gen;		/* MRs deregistered: struct sroce_mr_cache */
	struct xarray ahs;		/* ah_num -> sroce_ah */
	u32 next_ah;
	struct xarray srqs;		/* srq_num -> sroce_srq */
	u32 next_srq;
	atomic_t num_cq, num_pd, num_qp, num_mr, num_mw;	/* against the limits */

	struct sroce_counters __percpu *counters;
	struct sroce_cc_dev cc;
	struct sroce_fault_dev fault;
	struct sroce_rx_steer __percpu *rx_steer;	/* rxsteer.c; may be NULL */

	/* Settings, read locklessly, written any time through sysfs (device.c) */
	bool rx_steer_on;		/* rxsteer.c: receive bursts on another CPU */
	bool loopback_bypass;		/* localrx.c: to own addresses without the stack */
	u32 sq_poll_idle_us;		/* doorbell.c: how long the SQ poller watches
					 * an idle context; 0: no poller
					 */
};

/*
 * Whether the device's netdev has a MAC (Ethernet, veth, VLAN, bridge)
 * or is an L3 device (tun, wireguard, ipip, gre: packets are IP from the
 * first byte, nothing to resolve below IP).
 */
static inline bool sroce_ndev_has_mac(const struct net_device *ndev)
{
	return ndev->type == ARPHRD_ETHER;
}

static inline struct sroce_dev *to_sdev(struct ib_device *ib)
{
	return container_of(ib, struct sroce_dev, ib);
}

static inline void sroce_count(struct sroce_dev *sdev, enum sroce_counter c,
			       u64 n)
{
	this_cpu_add(sdev->counters->v[c], n);
}

u64 sroce_counter_read(struct sroce_dev *sdev, enum sroce_counter c);

struct sroce_ucontext {
	struct ib_ucontext ib;
	struct sroce_sq_marks sq_marks;
};

static inline struct sroce_ucontext *to_suctx(struct ib_ucontext *uctx)
{
	return container_of(uctx, struct sroce_ucontext, ib);
}

struct sroce_pd {
	struct ib_pd ib;
};

/* An XRC domain (verbs.c): ib_core keeps its SRQs and target QPs. */
struct sroce_xrcd {
	struct ib_xrcd ib;
};

static inline struct sroce_pd *to_spd(struct ib_pd *pd)
{
	return container_of(pd, struct sroce_pd, ib);
}

/* ------------------------------------------------------------------------
 * device.c, verbs.c, counters.c
 */
extern const struct attribute_group sroce_attr_group;
int sroce_newlink(const char *ibdev_name, struct net_device *ndev);
void sroce_dealloc_driver(struct ib_device *ib);
enum ib_port_state sroce_port_state(struct sroce_dev *sdev);
/* The port state changed by our own doing (a forced link): under RTNL. */
void sroce_port_changed(struct sroce_dev *sdev);

/* The port's active RoCE MTU in bytes (0 below 256): a UD message's limit. */
static inline u32 sroce_port_mtu(struct sroce_dev *sdev)
{
	int mtu = ib_mtu_enum_to_int(iboe_get_mtu(READ_ONCE(sdev->ndev->mtu)));

	return mtu > 0 ? mtu : 0;
}

int sroce_device_init(void);
void sroce_device_exit(void);
/* Finds the sroce device on @ndev without a reference (RCU reader). */
struct sroce_dev *sroce_dev_from_netdev_rcu(struct net_device *ndev);

extern const struct ib_device_ops sroce_dev_ops;
void sroce_fill_device_attrs(struct sroce_dev *sdev, struct ib_device_attr *a);

struct rdma_hw_stats *sroce_alloc_hw_port_stats(struct ib_device *ib, u32 port);
int sroce_process_mad(struct ib_device *ib, int flags, u32 port_num,
		      const struct ib_wc *in_wc, const struct ib_grh *in_grh,
		      const struct ib_mad *in, struct ib_mad *out,
		      size_t *out_mad_size, u16 *out_mad_pkey_index);
int sroce_get_hw_stats(struct ib_device *ib, struct rdma_hw_stats *stats,
		       u32 port, int index);

extern struct workqueue_struct *sroce_wq;

#endif /* SROCE_DEV_H */

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * sroce: software RoCE v2 device.  Types shared by the kernel files.
 *
 * Object ownership: ib_core allocates every verbs object (ib_pd, ib_qp …)
 * with the size we declare through INIT_RDMA_OBJ_SIZE, so each sroce object
 * embeds its ib_* base as the first member and is reached with container_of.
 *
 * Contexts: verbs calls run in process context; the receive path (responder
 * and completer) runs in softirq from the UDP socket; each QP's send engine
 * (requester and READ responses) runs in whichever of those contexts
 * kicked it, or from its work item (qp.c); timers are soft hrtimers.
 * Locks are therefore taken with _bh where process context and softirq
 * meet.
 */
#ifndef SROCE_H
#define SROCE_H

#include <linux/hrtimer.h>
#include <linux/if_arp.h>
#include <linux/list.h>
#include <linux/random.h>
#include <linux/netdevice.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <net/dst_cache.h>
#include <rdma/ib_addr.h>
#include <rdma/ib_verbs.h>

#include "../include/uapi/sroce-abi.h"
#include "fault.h"
#include "sched.h"
#include "proto/access.h"
#include "proto/dcqcn.h"
#include "proto/pacer.h"
#include "proto/rdres.h"
#include "proto/respseq.h"
#include "proto/sqtrack.h"
#include "proto/wire.h"
#include "proto/window.h"

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

/* ------------------------------------------------------------------------
 * Counters: one enum, one name table (counters.c), per-device atomics.
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
	SROCE_CNT_SQ_DOORBELLS,		/* doorbell syscalls of user SQs */
	SROCE_CNT_SQ_POLLED,		/* engine runs for WQEs the send-queue
					 * poller found (doorbell.c) */
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

/* ------------------------------------------------------------------------
 * Congestion control (cc.c): DCQCN, pacing, ECN.  One config per device,
 * settable under /sys/class/infiniband/<dev>/cc/; module parameters give
 * the defaults.  The data path reads it without a lock: every field is a
 * u32 written whole, and any mix of old and new values is valid.
 */
struct sroce_cc_config {
	struct roce_dcqcn_params dcqcn;
	u32 enable;		/* DCQCN RP + NP, and ECT on what we send */
	u32 qp_rate_limit_kbps;	/* every QP's ceiling; 0 = none */
	u32 burst_bytes;	/* a pacer's burst */
	u32 cnp_dscp;		/* CNPs go out with this DSCP */
};

struct sroce_cc_dev {
	struct mutex lock;	/* sysfs writers */
	struct sroce_cc_config config;
	u32 gen;		/* bumped on each change; QPs resync */
	spinlock_t ud_np_lock;
	struct roce_dcqcn_np_flows ud_np;	/* CNP limiter of UD flows */
};

struct sroce_qp_cc {
	spinlock_t lock;	/* all below: CNPs (softirq) vs the send work */
	struct roce_dcqcn_rp rp;
	struct roce_pacer pacer;
	struct roce_dcqcn_np np;
	struct roce_dcqcn_np pushback;	/* limits cuts on local refusals */
	u32 gen;		/* of the device config last applied */
	bool paced;		/* the pacer has a rate: ask before each packet */
	u64 tx_bytes;		/* IP bytes of data sent: per-QP share, for
				 * `rdma resource show qp -dd` */
	/* The measured send rate, where DCQCN's first cut starts from. */
	unsigned long rate_mark_jiffies;
	u64 rate_mark_bytes;
	u32 measured_kbps;	/* over the last whole window; 0: unknown */
	/* IB_QP_RATE_LIMIT: this QP's own ceiling (0: none) and burst
	 * (0: the device's).
	 */
	u32 user_limit_kbps;
	u32 user_burst_bytes;
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
	struct xarray ahs;		/* ah_num -> sroce_ah */
	u32 next_ah;
	struct xarray srqs;		/* srq_num -> sroce_srq */
	u32 next_srq;
	atomic_t num_cq, num_pd, num_qp, num_mr, num_mw;	/* against the limits */

	atomic64_t counters[SROCE_CNT_NUM];
	struct sroce_cc_dev cc;
	struct sroce_fault_dev fault;
	struct sroce_rx_steer __percpu *rx_steer;	/* rxsteer.c; may be NULL */
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
	atomic64_add(n, &sdev->counters[c]);
}

struct sroce_ucontext {
	struct ib_ucontext ib;
};

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
 * Rings (ring.c): the layout of include/uapi/sroce-abi.h, in a vmalloc_user
 * buffer that user space may map.  Kernel consumers use the same rings
 * without mapping them.
 */
struct sroce_ring {
	struct sroce_ring_ctrl *ctrl;
	u8 *slots;
	u32 num_slots;
	u32 mask;
	u32 slot_size;
	size_t bytes;
	struct rdma_user_mmap_entry *mmap_entry;	/* NULL: not exported */
};

static inline void *sroce_ring_slot(const struct sroce_ring *r, u32 index)
{
	return r->slots + (size_t)(index & r->mask) * r->slot_size;
}

int sroce_ring_init(struct sroce_ring *r, u32 min_slots, u32 slot_size);
int sroce_ring_export(struct sroce_ring *r, struct ib_ucontext *uctx,
		      struct sroce_ring_info *info);
void sroce_ring_free(struct sroce_ring *r);
int sroce_mmap(struct ib_ucontext *uctx, struct vm_area_struct *vma);
void sroce_mmap_free(struct rdma_user_mmap_entry *entry);

/* ------------------------------------------------------------------------
 * Memory regions (mr.c).  Keys: bits 31..8 are a random free index into
 * the device's MR table, bits 7..0 a random variant, so a key is not
 * predictable from the previous registration and a stale key misses.
 * lkey == rkey.
 */
enum sroce_mr_kind {
	SROCE_MR_DMA,		/* kernel virtual addresses, no bounds */
	SROCE_MR_USER,		/* pinned user pages */
	SROCE_MR_FAST,		/* fast registration (page list) */
	SROCE_MR_ODP,		/* user pages on demand (odp.c) */
};

struct sroce_odp;

struct sroce_mr {
	struct ib_mr ib;
	enum sroce_mr_kind kind;
	u32 key;			/* the lkey == rkey lookups match */
	int access;			/* IB_ACCESS_* */
	u64 iova;
	u64 length;
	struct ib_umem *umem;
	struct sroce_odp *odp;		/* ODP: the resident pages */
	struct page **pages;		/* USER: one per PAGE_SIZE of the range */
	u32 npages;
	u32 page_offset;		/* of iova in its first page (every kind) */
	u64 *fast_pages;		/* FAST: kernel addresses of the pages */
	u32 fast_max;
	u32 fast_npages;
	u32 fast_page_size;
	bool valid;			/* FAST: between REG_MR and LOCAL_INV */
	atomic_t mw_binds;		/* windows bound to it; -1: being deregistered */
	struct rcu_head rcu;
};

static inline struct sroce_mr *to_smr(struct ib_mr *mr)
{
	return container_of(mr, struct sroce_mr, ib);
}

enum sroce_copy_dir {
	SROCE_TO_MR,		/* received data into memory */
	SROCE_FROM_MR,		/* memory into a packet */
};

/*
 * The key table holds MRs as plain pointers and windows tagged with
 * SROCE_KEY_TAG_MW (xa_tag_pointer), so that one rkey names either.
 */
#define SROCE_KEY_TAG_MW	1
/* The MR an entry of the key table is, or NULL (empty, or a window). */
static inline struct sroce_mr *sroce_key_entry_mr(void *entry)
{
	return xa_pointer_tag(entry) ? NULL : entry;
}
/* A fresh key for table index @index: random variant bits. */
static inline u32 sroce_new_key(u32 index)
{
	return index << 8 | (get_random_u32() & 0xff);
}
/* Takes a key table index (reserved, not yet visible).  0 or -errno. */
int sroce_key_reserve(struct sroce_dev *sdev, u32 *index);
/* Returns the MR named by @key, or NULL.  Caller holds rcu_read_lock(). */
struct sroce_mr *sroce_mr_lookup(struct sroce_dev *sdev, u32 key);
/* What proto/access.h checks of @mr, read once. */
void sroce_mr_desc(struct sroce_mr *mr, struct roce_mr_desc *d);
/*
 * Checks that [iova, iova+len) lies in @mr, that @mr belongs to @pd and
 * grants every bit of @access.  0, or -EACCES (rights, PD) / -ERANGE.
 */
int sroce_mr_check(struct sroce_mr *mr, struct ib_pd *pd, u64 iova, u64 len,
		   int access);
/* Where @iova lies in a USER, FAST or ODP MR: bytes from its first page. */
static inline u64 sroce_mr_offset(const struct sroce_mr *mr, u64 iova)
{
	return iova - READ_ONCE(mr->iova) + READ_ONCE(mr->page_offset);
}
/*
 * Copies @len bytes between @buf and the checked range at @iova.  0, or for
 * an ODP MR -EAGAIN (a page is being faulted in: try again later) or
 * -EFAULT (it cannot be: a protection error).
 */
int sroce_mr_copy(struct sroce_mr *mr, u64 iova, void *buf, u32 len,
		  enum sroce_copy_dir dir);
/*
 * The 8 bytes at @iova (8-aligned, checked) for atomics, mapped; NULL with
 * *err (-EAGAIN/-EFAULT as above).  Undo with sroce_mr_atomic_unmap().
 */
struct sroce_mr_map {
	struct page *page;	/* a kmap_local_page() to undo */
	bool odp;		/* ... and the ODP lock */
};
u64 *sroce_mr_atomic_ptr(struct sroce_mr *mr, u64 iova,
			 struct sroce_mr_map *m, int *err);
void sroce_mr_atomic_unmap(struct sroce_mr *mr, u64 *p,
			   const struct sroce_mr_map *m);

/* odp.c: the pages of SROCE_MR_ODP MRs; @off counts from the first page. */
int sroce_odp_init(struct sroce_mr *mr, struct sroce_dev *sdev, u64 start,
		   u64 length, int access);
void sroce_odp_release(struct sroce_mr *mr);
int sroce_odp_copy(struct sroce_mr *mr, u64 off, void *buf, u32 len,
		   enum sroce_copy_dir dir);
/* 0 if [off, off+len) is resident; else -EAGAIN (asked for) or -EFAULT. */
int sroce_odp_resident(struct sroce_mr *mr, u64 off, u64 len);
u64 *sroce_odp_atomic_map(struct sroce_mr *mr, u64 off, int *err);
void sroce_odp_atomic_unmap(struct sroce_mr *mr, u64 *p);
int sroce_advise_mr(struct ib_pd *pd, enum ib_uverbs_advise_mr_advice advice,
		    u32 flags, struct ib_sge *sg_list, u32 num_sge,
		    struct uverbs_attr_bundle *attrs);
/* For a READ's whole range before it is answered: see sroce_odp_resident. */
int sroce_mr_resident(struct sroce_mr *mr, u64 iova, u64 len);

/*
 * Copies between a scatter list and a linear buffer, starting @offset
 * bytes into the list.  Resolves and checks every lkey against @pd with
 * @access.  0, or -EACCES/-ERANGE/-EINVAL for a bad SGE.
 */
int sroce_sgl_copy(struct sroce_dev *sdev, struct ib_pd *pd,
		   const struct sroce_sge *sge, u32 num_sge, u64 offset,
		   void *buf, u32 len, int access, enum sroce_copy_dir dir);
/*
 * The walk under sroce_sgl_copy(): @piece gets each checked piece of the
 * list (@len bytes from @offset on), under rcu_read_lock(); its error
 * ends the walk.  -EACCES/-ERANGE for a bad key, rights or range,
 * -EINVAL when the list is shorter than @len.
 */
typedef int (*sroce_sgl_piece_fn)(struct sroce_mr *mr, u64 addr, u32 n,
				  void *ctx);
int sroce_sgl_walk(struct sroce_dev *sdev, struct ib_pd *pd,
		   const struct sroce_sge *sge, u32 num_sge, u64 offset,
		   u32 len, int access, sroce_sgl_piece_fn piece, void *ctx);
/*
 * sroce_sgl_copy(..., SROCE_TO_MR) of the @len bytes at @skb_off (from
 * skb->data) of a received packet, linear or not.
 */
int sroce_sgl_copy_skb(struct sroce_dev *sdev, struct ib_pd *pd,
		       const struct sroce_sge *sge, u32 num_sge, u64 offset,
		       const struct sk_buff *skb, u32 skb_off, u32 len,
		       int access);
/* sroce_mr_copy(..., SROCE_TO_MR) of the same, to a checked MR range. */
int sroce_mr_copy_skb(struct sroce_mr *mr, u64 iova,
		       const struct sk_buff *skb, u32 skb_off, u32 len);

struct ib_mr *sroce_get_dma_mr(struct ib_pd *pd, int access);
struct ib_mr *sroce_reg_user_mr(struct ib_pd *pd, u64 start, u64 length,
				u64 iova, int access, struct ib_udata *udata);
struct ib_mr *sroce_alloc_mr(struct ib_pd *pd, enum ib_mr_type type,
			     u32 max_num_sg);
int sroce_map_mr_sg(struct ib_mr *mr, struct scatterlist *sg, int sg_nents,
		    unsigned int *sg_offset);
int sroce_dereg_mr(struct ib_mr *mr, struct ib_udata *udata);
/* Work requests REG_MR / LOCAL_INV and remote invalidation. */
int sroce_mr_fast_reg(struct sroce_dev *sdev, struct ib_pd *pd, u32 key,
		      u32 new_key, int access);
int sroce_mr_invalidate(struct sroce_dev *sdev, struct ib_pd *pd, u32 key);
/* Bound windows pin their MR: a bind takes a reference, unless dying. */
static inline bool sroce_mr_get_bind(struct sroce_mr *mr)
{
	return atomic_inc_unless_negative(&mr->mw_binds);
}

/* ------------------------------------------------------------------------
 * Memory windows (mw.c).  The ib_mw is ib_core's and is freed as soon as
 * dealloc_mw returns, so what the receive path reads lives in a separate
 * sroce_window, the key table's entry, freed after a grace period.
 */
struct sroce_window;

struct sroce_mw {
	struct ib_mw ib;
	struct sroce_window *win;
};

static inline struct sroce_mw *to_smw(struct ib_mw *mw)
{
	return container_of(mw, struct sroce_mw, ib);
}

int sroce_alloc_mw(struct ib_mw *mw, struct ib_udata *udata);
int sroce_dealloc_mw(struct ib_mw *mw);

struct sroce_qp;
struct sroce_send_wqe;
/* IBV_WR_BIND_MW executing on @qp: 0, or the ib_wc_status it fails with. */
u8 sroce_mw_bind(struct sroce_qp *qp, const struct sroce_send_wqe *wqe);
/*
 * LOCAL_INV (@remote false) and SEND_WITH_INV (@remote true) of @key, an
 * MR or a window, by @qp.  0 or -EINVAL.
 */
int sroce_key_invalidate(struct sroce_qp *qp, struct ib_pd *pd, u32 key,
			 bool remote);
/*
 * What an rkey names: an MR, or a window seen through one snapshot of its
 * binding.  The responder checks a request against @desc with
 * proto/access.h's rules, then asks sroce_rkey_translate() for the bytes.
 */
struct sroce_rkey_target {
	struct roce_mr_desc desc;	/* the MR's, or the window's binding */
	struct sroce_mr *mr;		/* the memory: the MR, or the bound one */
	struct sroce_window *win;	/* NULL for an MR */
	u64 mr_va;			/* window: its first byte in the MR */
	u32 qpn;			/* window type 2: the QP it is bound to */
};
/*
 * Fills @t with what @rkey names; false if it names nothing (no entry, or
 * a stale key variant).  Caller holds rcu_read_lock() until the copy.
 */
bool sroce_rkey_lookup(struct sroce_qp *qp, u32 rkey,
		       struct sroce_rkey_target *t);
/*
 * After proto's check accepted [va, va+len) against @t->desc: the window
 * rules proto does not know (type 2's QP, the bound MR still valid) and the
 * address of @va within @t->mr.  ROCE_ACCESS_OK and *@mr_va, or a verdict.
 */
enum roce_access_verdict sroce_rkey_translate(struct sroce_qp *qp,
					      const struct sroce_rkey_target *t,
					      u64 va, u64 len, u64 *mr_va);

/* ------------------------------------------------------------------------
 * Completion queues (cq.c).
 */
struct sroce_cq {
	struct ib_cq ib;
	spinlock_t lock;		/* producers: every QP that completes here */
	struct sroce_ring ring;		/* user: sroce_cqe; kernel: ib_wc */
	bool user;
	u32 prod;			/* ours; published to ring.ctrl for users */
	u32 cons;			/* kernel CQs only */
	u32 notify;			/* kernel CQs: SROCE_CQ_ARM_* */
	bool overflow;
	bool timestamps;		/* CQEs carry completion timestamps */
};

static inline struct sroce_cq *to_scq(struct ib_cq *cq)
{
	return container_of(cq, struct sroce_cq, ib);
}

/*
 * Adds one completion.  @wc uses kernel encodings; a user CQ gets it
 * translated.  Raises the completion event when armed.  -ENOSPC (and an
 * IB_EVENT_CQ_ERR) when the CQ overflows.
 */
void sroce_cq_post(struct sroce_cq *cq, const struct ib_wc *wc, bool solicited);

int sroce_create_cq(struct ib_cq *cq, const struct ib_cq_init_attr *attr,
		    struct ib_udata *udata);
int sroce_destroy_cq(struct ib_cq *cq, struct ib_udata *udata);
int sroce_resize_cq(struct ib_cq *cq, int cqe, struct ib_udata *udata);
int sroce_poll_cq(struct ib_cq *cq, int num, struct ib_wc *wc);
int sroce_req_notify_cq(struct ib_cq *cq, enum ib_cq_notify_flags flags);

/* ------------------------------------------------------------------------
 * Receive queues (srq.c): a QP's own RQ and an SRQ share this.
 */
struct sroce_rwqe {			/* kernel copy of a receive WQE */
	u64 wr_id;
	u32 num_sge;
	struct sroce_sge sge[SROCE_MAX_SGE];
};

struct sroce_rq {
	spinlock_t lock;		/* consumers (rx) vs kernel producers */
	struct sroce_ring ring;		/* sroce_recv_wqe + SGEs */
	bool user;
	u32 prod;			/* kernel RQs: ours */
	u32 cons;			/* always ours; published for users */
	u32 max_sge;
};

struct sroce_srq {
	struct ib_srq ib;
	struct sroce_rq rq;
	u32 srq_num;
	u32 limit;			/* 0: not armed */
};

static inline struct sroce_srq *to_ssrq(struct ib_srq *srq)
{
	return container_of(srq, struct sroce_srq, ib);
}

int sroce_rq_init(struct sroce_rq *rq, u32 max_wr, u32 max_sge,
		  struct ib_udata *udata, struct sroce_ring_info *info);
void sroce_rq_free(struct sroce_rq *rq);
/*
 * Takes the next receive WQE into @out.  0, -EAGAIN when empty, -EIO when
 * user memory holds a corrupt index or WQE (the QP must go to error).
 */
int sroce_rq_pop(struct sroce_rq *rq, struct sroce_rwqe *out);
/* Posting for kernel consumers. */
int sroce_rq_post(struct sroce_rq *rq, const struct ib_recv_wr *wr,
		  const struct ib_recv_wr **bad_wr);
/* Entries waiting, for the SRQ limit event. */
u32 sroce_rq_count(struct sroce_rq *rq);
void sroce_srq_check_limit(struct sroce_srq *srq);
struct sroce_srq *sroce_xrc_srq_lookup(struct sroce_qp *qp, u32 srqn);

int sroce_create_srq(struct ib_srq *srq, struct ib_srq_init_attr *attr,
		     struct ib_udata *udata);
int sroce_modify_srq(struct ib_srq *srq, struct ib_srq_attr *attr,
		     enum ib_srq_attr_mask mask, struct ib_udata *udata);
int sroce_query_srq(struct ib_srq *srq, struct ib_srq_attr *attr);
int sroce_destroy_srq(struct ib_srq *srq, struct ib_udata *udata);
int sroce_post_srq_recv(struct ib_srq *srq, const struct ib_recv_wr *wr,
			const struct ib_recv_wr **bad_wr);

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
bool sroce_local_route(const struct dst_entry *dst);
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
 * Where a packet's payload comes from (zcopy.c): inline data, an SGL
 * (@pd, @sge, @num_sge from @offset) or, for READ responses, one checked
 * MR range (@mr at @mr_va, under the caller's rcu_read_lock).
 * @by_reference: the sender completes only once the peer has the data
 * (RC), so the packet may reference the memory instead of copying it.
 */
struct sroce_payload {
	const void *inline_data;
	struct ib_pd *pd;
	const struct sroce_sge *sge;
	u32 num_sge;
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
int sroce_ip_out(struct sk_buff *skb, bool ipv6);
/* A RoCE packet in, from its ICRC check on: @skb data at the UDP header,
 * trimmed to it.  Consumes @skb.  Under rcu_read_lock, BH off.
 */
void sroce_rx_deliver(struct sroce_dev *sdev, struct sk_buff *skb, bool ipv6);

/* rxsteer.c: a busy sender's CPU hands what it receives to the next CPU */
void sroce_rx_steer_init(struct sroce_dev *sdev);
void sroce_rx_steer_exit(struct sroce_dev *sdev);
bool sroce_rx_steer(struct sroce_dev *sdev, struct sk_buff *skb);
void sroce_spin_unlock_bh_sent(spinlock_t *lock, bool burst);

/* Receive entry from net.c: @skb data at the BTH, ICRC checked. */
void sroce_recv(struct sroce_dev *sdev, struct sk_buff *skb,
		const struct roce_pkt_info *pkt);

/* ------------------------------------------------------------------------
 * Queue pairs (qp.c) and the transport engine (req.c, resp.c, comp.c).
 */
struct sroce_swqe {			/* kernel copy of a send WQE */
	struct sroce_send_wqe wqe;	/* validated */
	struct sroce_av av;		/* UD: the AH's, resolved when taken */
	struct roce_sq_msg msg;		/* length, PSNs, state (proto/sqtrack.h) */
	u8 status;			/* ib_wc_status once done */
	struct ib_mr *reg_mr;		/* REG_MR (kernel QPs) */
	u32 reg_key;
	int reg_access;
	/* Followed by wqe.num_sge SGEs or wqe.inline_len bytes: flexible
	 * arrays, so FORTIFY_SOURCE (6.x) knows their bound is the
	 * allocation, not a zero-length field.
	 */
	union {
		DECLARE_FLEX_ARRAY(struct sroce_sge, sge);
		DECLARE_FLEX_ARRAY(u8, inline_data);
	};
};

/*
 * What the receive path finds by QP number (sdev->qps) and what multicast
 * members point to.  ib_core frees the QP itself as soon as destroy_qp
 * returns, so a reader that found the QP just before destroy erased it
 * must not take its reference in the QP: the handle holds the count and
 * outlives the QP by an RCU grace period, as windows and user AHs do.
 */
struct sroce_qp_handle {
	refcount_t ref;			/* lookups in use, +1 while the QP lives */
	struct sroce_qp *qp;
	struct rcu_head rcu;
};

struct sroce_qp {
	struct ib_qp ib;
	struct sroce_dev *sdev;
	struct sroce_qp_handle *handle;
	struct completion freed;	/* the handle's last reference dropped */

	/* --- attributes (set by modify_qp under state_lock) ----------- */
	struct mutex modify_lock;	/* serialises verbs on the QP */
	spinlock_t state_lock;		/* state vs the data path */
	enum ib_qp_state state;
	bool sq_draining;		/* in SQD, not yet drained (req.c) */
	bool sqd_notify;		/* raise IB_EVENT_SQ_DRAINED then */
	u32 dest_qpn;
	u32 qkey;
	int access;			/* IB_ACCESS_REMOTE_* */
	u8 pmtu;			/* enum ib_mtu */
	u32 mtu;			/* bytes */
	u8 timeout;			/* local ACK timeout exponent */
	u8 retry_cnt;
	u8 rnr_retry;
	u8 min_rnr_timer;		/* what we ask peers to wait */
	u8 max_rd_atomic;		/* our outstanding READ/atomic */
	u8 max_dest_rd_atomic;		/* peers' outstanding towards us */
	bool sig_all;
	struct sroce_av av;		/* RC/UC: the peer */
	struct dst_cache dst_cache;	/* RC/UC: the route to av */
	u16 sport;			/* UDP source port: constant per QP */
	u32 sq_psn;
	u32 rq_psn;

	/* --- send queue ------------------------------------------------- */
	struct sroce_cq *scq;
	struct sroce_ring sq;		/* user: the shared ring; kernel: unused */
	bool user;
	u32 max_send_sge;
	u32 max_inline;
	u8 *shadow;			/* sroce_swqe per slot */
	u32 shadow_size;		/* bytes per shadow slot */
	u32 sq_slots;
	u32 sq_mask;
	spinlock_t sq_lock;		/* req and comp state below */
	u32 sq_prod;			/* kernel QPs: producer */
	u32 fetch;			/* next slot to copy in from the ring */
	u32 retire;			/* oldest slot not completed */

	/* requester */
	u32 req_cur;			/* slot being sent */
	u32 req_offset;			/* bytes of it already sent */
	u32 req_psn;			/* next PSN to send */
	u32 sent_end;			/* one past the highest PSN ever sent */
	u32 rd_atomic_outstanding;
	bool req_fenced;
	unsigned long need_retransmit;	/* bit 0: rewind to comp_psn */

	/* completer */
	u32 comp_psn;			/* oldest PSN not acknowledged */
	u8 retry_left;
	u8 rnr_retry_left;
	u8 timeouts_in_row;		/* since comp_psn last moved: back-off */
	bool rnr_wait;			/* paused by an RNR NAK */
	struct roce_window window;	/* RC: PSNs that may be unACKed */
	struct sroce_qp_cc cc;

	/* --- transmit scheduler: send right, CPU, timers (sched.c) -------- */
	struct sroce_sched sched;

	/* --- receive side ------------------------------------------------ */
	struct sroce_cq *rcq;
	struct sroce_rq rq;		/* unused with an SRQ, and by XRC */
	struct sroce_srq *srq;
	struct ib_xrcd *xrcd;		/* XRC target: the domain of its SRQs */
	spinlock_t resp_lock;		/* responder state below */
	/*
	 * XRC target: the SRQ this request's XRCETH names, found under RCU
	 * for the one packet (an XRC SRQ may be destroyed at any time), and
	 * the number of the one the receive WQE in progress came from.
	 */
	struct sroce_srq *xrc_srq;
	u32 xrc_srqn;
	struct roce_resp_seq seq;	/* expected PSN, message in progress */
	u32 msn;
	bool have_rwqe;
	struct sroce_rwqe rwqe;		/* SEND in progress */
	u32 recv_offset;
	u64 write_va;			/* WRITE in progress */
	u32 write_rkey;
	u32 write_resid;
	struct roce_rd_ring rd_res;	/* RC: READs and atomics accepted */
	bool reads_queued;		/* a READ response may be unsent: read
					 * without resp_lock by the engine */
	/* An ACK held back until the receive batch ends (ackq.c) */
	bool ack_pending;		/* ... for ack_psn and ack_msn */
	bool ack_queued;		/* on a CPU's list, holding a reference */
	u32 ack_psn;
	u32 ack_msn;
	struct list_head ack_node;	/* that list's, on its CPU alone */
	struct list_head mcast;		/* sroce_mcast_member, groups joined (UD) */
};

static inline struct sroce_qp *to_sqp(struct ib_qp *qp)
{
	return container_of(qp, struct sroce_qp, ib);
}

/* RC and both XRC halves: acknowledged, retried, with READs and atomics. */
static inline bool sroce_qp_reliable(const struct sroce_qp *qp)
{
	return qp->ib.qp_type == IB_QPT_RC || qp->ib.qp_type == IB_QPT_XRC_INI ||
	       qp->ib.qp_type == IB_QPT_XRC_TGT;
}

static inline bool sroce_qp_xrc(const struct sroce_qp *qp)
{
	return qp->ib.qp_type == IB_QPT_XRC_INI || qp->ib.qp_type == IB_QPT_XRC_TGT;
}

/* The transport bits of the opcodes the QP sends (ROCE_OP_*_BASE). */
static inline u8 sroce_qp_op_base(const struct sroce_qp *qp)
{
	return qp->ib.qp_type == IB_QPT_UC ? ROCE_OP_UC_BASE :
	       sroce_qp_xrc(qp) ? ROCE_OP_XRC_BASE : ROCE_OP_RC_BASE;
}

static inline struct sroce_swqe *sroce_swqe(struct sroce_qp *qp, u32 index)
{
	return (struct sroce_swqe *)(qp->shadow +
				     (size_t)(index & qp->sq_mask) * qp->shadow_size);
}

/* The send queue's messages, as proto/sqtrack.h sees them.  Under sq_lock. */
static inline struct roce_sq_view sroce_sq_view(struct sroce_qp *qp)
{
	return (struct roce_sq_view){
		.base = qp->shadow,
		.stride = qp->shadow_size,
		.off = offsetof(struct sroce_swqe, msg),
		.mask = qp->sq_mask,
		.retire = qp->retire,
		.fetch = qp->fetch,
	};
}

/*
 * READ, atomics and the IBTA 1.5 placement operations: only their own
 * response completes them, and each takes one of the peer's READ/atomic
 * resources (FLUSH too: some responders count it, and a requester that
 * never exceeds the limit is right with all of them).
 */
static inline bool sroce_wr_is_rd_atomic(u32 wr_opcode)
{
	return wr_opcode == IB_WR_RDMA_READ ||
	       wr_opcode == IB_WR_ATOMIC_CMP_AND_SWP ||
	       wr_opcode == IB_WR_ATOMIC_FETCH_AND_ADD ||
	       wr_opcode == SROCE_WR_ATOMIC_WRITE ||
	       wr_opcode == SROCE_WR_FLUSH;
}

/* ATOMIC WRITE and FLUSH: answered by an empty READ RESPONSE ONLY. */
static inline bool sroce_wr_answered_empty(u32 wr_opcode)
{
	return wr_opcode == SROCE_WR_ATOMIC_WRITE || wr_opcode == SROCE_WR_FLUSH;
}

/* Looks up a QP for the receive path and takes a reference. */
struct sroce_qp *sroce_qp_get(struct sroce_dev *sdev, u32 qpn);
struct sroce_qp *sroce_qp_get_handle(struct sroce_qp_handle *h);
void sroce_qp_put(struct sroce_qp *qp);
/* Moves the QP to the error state (flushing) from any context. */
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

/* sroce_qp_error()'s @event when an error completion says it all. */
#define SROCE_QP_NO_EVENT	(-1)
void sroce_qp_error(struct sroce_qp *qp, int event);
int sroce_create_qp(struct ib_qp *qp, struct ib_qp_init_attr *init,
		    struct ib_udata *udata);
int sroce_modify_qp(struct ib_qp *qp, struct ib_qp_attr *attr, int mask,
		    struct ib_udata *udata);
int sroce_query_qp(struct ib_qp *qp, struct ib_qp_attr *attr, int mask,
		   struct ib_qp_init_attr *init);
int sroce_destroy_qp(struct ib_qp *qp, struct ib_udata *udata);
int sroce_post_send(struct ib_qp *qp, const struct ib_send_wr *wr,
		    const struct ib_send_wr **bad_wr);
int sroce_post_recv(struct ib_qp *qp, const struct ib_recv_wr *wr,
		    const struct ib_recv_wr **bad_wr);
int sroce_attach_mcast(struct ib_qp *qp, union ib_gid *gid, u16 lid);
int sroce_detach_mcast(struct ib_qp *qp, union ib_gid *gid, u16 lid);

/* req.c: the send engine, run through sroce_sched_run() */
bool sroce_send_engine(struct sroce_qp *qp, int budget);
void sroce_sq_retire(struct sroce_qp *qp);
enum ib_wc_opcode sroce_wc_opcode(u32 wr_opcode);
/* resp.c: READ responses, sent from the send work within *budget */
bool sroce_resp_send_reads(struct sroce_qp *qp, int *budget);
/* mcast.c */
void sroce_mcast_detach_all(struct sroce_qp *qp);
void sroce_mcast_recv(struct sroce_dev *sdev, struct sk_buff *skb,
		      const struct roce_pkt_info *pkt);
/* resp.c: requests arriving at a QP; comp.c: responses and ACKs */
void sroce_resp_recv(struct sroce_qp *qp, struct sk_buff *skb,
		     const struct roce_pkt_info *pkt);
void sroce_comp_recv(struct sroce_qp *qp, struct sk_buff *skb,
		     const struct roce_pkt_info *pkt);
void sroce_retrans_timer(struct timer_list *t);
u64 sroce_retrans_timeout_ns(const struct sroce_qp *qp);
enum hrtimer_restart sroce_rnr_timer(struct hrtimer *t);

/* req.c: the requester's state, for the scheduler and the completer */
bool sroce_req_window_full(const struct sroce_qp *qp);
void sroce_req_seek(struct sroce_qp *qp);
void sroce_flush_recv(struct sroce_qp *qp, struct sroce_cq *cq, u64 wr_id);
/* ackq.c: ACKs held back until a receive batch ends; resp.c sends them */
bool sroce_ackq_add(struct sroce_qp *qp);
void sroce_resp_ack_flush(struct sroce_qp *qp);
void sroce_ackq_init(void);
void sroce_ackq_exit(void);
/* resp.c: the receive WQE a failed QP had taken, flushed */
void sroce_resp_flush_rwqe(struct sroce_qp *qp);
/* qp.c: an affiliated asynchronous event of @qp */
void sroce_qp_event(struct sroce_qp *qp, enum ib_event_type type);

/* cc.c */
int sroce_cc_module_init(void);
void sroce_cc_dev_init(struct sroce_dev *sdev);
void sroce_cc_sysfs_add(struct sroce_dev *sdev);
void sroce_cc_qp_init(struct sroce_qp *qp);
int sroce_cc_check_qp_limit(const struct sroce_qp *qp, enum ib_qp_state cur,
			    enum ib_qp_state new, u32 kbps, u32 burst);
void sroce_cc_set_qp_limit(struct sroce_qp *qp, u32 kbps, u32 burst);
/* Send path: may a packet go now?  If not, the kick timer is armed. */
bool sroce_cc_may_send(struct sroce_qp *qp);
/* A packet of @roce_len bytes (BTH through ICRC) went out to @av. */
void sroce_cc_sent(struct sroce_qp *qp, const struct sroce_av *av,
		   u32 roce_len);
/* The traffic class a packet really carries: ECN bits by the config. */
u8 sroce_cc_tclass(struct sroce_dev *sdev, u8 tclass, bool cnp);
/* Receive path: a CNP for one of our QPs; a CE-marked packet for @qp. */
void sroce_cc_cnp_recv(struct sroce_dev *sdev, const struct roce_pkt_info *pkt);
bool sroce_cc_skb_ce(const struct sk_buff *skb);
void sroce_cc_ce_recv(struct sroce_qp *qp, const struct sk_buff *skb,
		      const struct roce_pkt_info *pkt);
void sroce_cc_local_pushback(struct sroce_qp *qp);
int sroce_fill_res_qp_entry(struct sk_buff *msg, struct ib_qp *ibqp);

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

/*
 * UDP source port of a flow, as rxe and ConnectX pick it: from the AV's
 * flow label if the application set one, else hashed from both QPNs, in
 * 0xC000-0xFFFF.  Gives ECMP its entropy; never 0 (reserved).
 */
static inline u16 sroce_udp_sport(const struct sroce_av *av, u32 lqpn, u32 rqpn)
{
	return rdma_get_udp_sport(av->flow_label, lqpn, rqpn);
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

#include "compat.h"

#endif /* SROCE_H */

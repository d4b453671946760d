/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Owns congestion control's state (cc.c): the device's (struct
 * sroce_cc_config in sroce_cc_dev, in struct sroce_dev) and each QP's
 * (struct sroce_qp_cc, in struct sroce_qp), each under a lock of its own,
 * and what the send and receive paths ask of them.
 */
#ifndef SROCE_CC_H
#define SROCE_CC_H

#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <rdma/ib_verbs.h>

#include "proto/dcqcn.h"
#include "proto/pacer.h"

struct roce_pkt_info;
struct sk_buff;
struct sroce_av;
struct sroce_dev;
struct sroce_qp;

/* ------------------------------------------------------------------------
 * Congestion control (cc.c): DCQCN, pacing, ECN.  One config per device,
 * settable under /sys/class/infiniband/<dev>/cc/, starting at cc.c's
 * defaults.  The data path reads it without a lock: every field is a
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
				 * `rdma resource show qp -dd`
				 */
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

/* cc.c */
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
void sroce_cc_cnp_recv(struct sroce_qp *qp);
bool sroce_cc_skb_ce(const struct sk_buff *skb);
void sroce_cc_ce_recv(struct sroce_qp *qp, const struct sk_buff *skb,
		      const struct roce_pkt_info *pkt);
void sroce_cc_local_pushback(struct sroce_qp *qp);
int sroce_fill_res_qp_entry(struct sk_buff *msg, struct ib_qp *ibqp);

#endif /* SROCE_CC_H */

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Fault injection (fault.c): per-device rules that drop, delay, duplicate
 * or corrupt packets, or answer requests with RNR or remote-access NAKs,
 * and a port forced down without touching the netdev.  Configured under
 * /sys/kernel/debug/sroce/<dev>/; the rule language and the decisions are
 * proto/fault.h's.  Off by default, and then the data path pays one
 * static branch per packet.
 */
#ifndef SROCE_FAULT_H
#define SROCE_FAULT_H

#include <linux/hrtimer.h>
#include <linux/jump_label.h>
#include <linux/mutex.h>
#include <linux/skbuff.h>
#include <linux/workqueue.h>

#include "proto/fault.h"

struct sroce_dev;
struct sroce_qp;
struct dentry;

#define SROCE_FAULT_MAX_RULES	16
/* Packets held back by delay rules at once, per device; more are lost. */
#define SROCE_FAULT_MAX_DELAYED	4096

struct sroce_fault_rule {
	struct roce_fault_rule rule;
	u32 id;			/* shown in the listing; `del ID` */
	atomic64_t matched;	/* packets selected so far: n of the next */
	atomic64_t injected;
	struct rcu_head rcu;
};

/* What the data path reads: replaced whole, under RCU, on every change. */
struct sroce_fault_rules {
	unsigned int num;
	struct rcu_head rcu;
	struct sroce_fault_rule *rule[];
};

struct sroce_fault_dev {
	bool active;		/* rules or a forced link: the hooks look */
	bool link_down;		/* the port is forced DOWN */
	struct sroce_fault_rules __rcu *rules;
	struct mutex lock;	/* writers: rules, active, link_down */
	u32 next_id;
	struct dentry *dir;
	struct delayed_work flap;	/* brings a flapped port back up */

	spinlock_t delay_lock;		/* delayed, dying */
	struct sk_buff_head delayed;	/* by due time */
	struct hrtimer delay_timer;	/* due time of the first */
	bool dying;
};

DECLARE_STATIC_KEY_FALSE(sroce_fault_key);

static inline bool sroce_fault_on(const struct sroce_fault_dev *f)
{
	return static_branch_unlikely(&sroce_fault_key) && READ_ONCE(f->active);
}

/* What a hook did with the packet it was given. */
enum sroce_fault_verdict {
	SROCE_FAULT_PASS,	/* carry on with it as usual */
	SROCE_FAULT_TAKEN,	/* dropped or held back: the hook has it */
};

void sroce_fault_init(void);
void sroce_fault_exit(void);
void sroce_fault_dev_init(struct sroce_dev *sdev);
void sroce_fault_dev_add(struct sroce_dev *sdev);	/* after registration */
void sroce_fault_dev_remove(struct sroce_dev *sdev);	/* no more packets */

/* A finished packet about to leave (headers and ICRC final), BH off. */
enum sroce_fault_verdict sroce_fault_tx(struct sroce_dev *sdev,
					struct sk_buff *skb, bool ipv6);
/* A packet arrived: skb->data at its UDP header, ICRC not yet checked. */
enum sroce_fault_verdict sroce_fault_rx(struct sroce_dev *sdev,
					struct sk_buff *skb, bool ipv6);
/* The NAK (ROCE_FAULT_RNR_NAK or _ACCESS_NAK) the responder is to send
 * instead of executing an in-sequence request, or -1.
 */
int sroce_fault_resp_nak(struct sroce_qp *qp, u8 opcode);

#endif /* SROCE_FAULT_H */

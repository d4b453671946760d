// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Congestion control: the kernel side of proto/dcqcn.c and proto/pacer.c.
 *
 * Sender (reaction point): a CNP for one of our QPs cuts its rate; the
 * send engine asks sroce_cc_may_send() before each packet, which runs the
 * DCQCN timers lazily and, when the QP's pacer says "not yet", arms the
 * QP's kick timer for the earliest allowed time instead of spinning.
 * Receiver (notification point): a CE-marked packet makes its QP send a
 * CNP to the peer QP, at most one per cnp_interval_ns.  Everything we
 * send is ECN-capable (ECT(0)) while DCQCN is on, except CNPs.
 *
 * A QP that is neither cut by DCQCN nor capped by qp_rate_limit_kbps is
 * not paced at all: the send path then costs one flag test.
 */
#include <linux/module.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/jhash.h>
#include <net/ipv6.h>
#include <net/dsfield.h>
#include <net/inet_ecn.h>
#include <rdma/rdma_netlink.h>

#include "sroce.h"

#define CREATE_TRACE_POINTS
#include "sroce_trace.h"

/* Longest burst a pacer may allow: 16 MiB, far beyond any sane setting. */
#define SROCE_CC_MAX_BURST	SROCE_QP_MAX_BURST_BYTES
#define SROCE_CC_MAX_DSCP	63

/* Send rate measurement window: a few jiffies, cheap to keep per packet. */
#define SROCE_CC_RATE_WINDOW	(HZ / 50 ?: 1)

/* UDP + IP headers in front of the RoCE packet: what the pacer charges. */
#define SROCE_UDP_IPV4_LEN	(8 + 20)
#define SROCE_UDP_IPV6_LEN	(8 + 40)

static const struct sroce_cc_config sroce_cc_defaults = {
	.dcqcn = ROCE_DCQCN_DEFAULT_PARAMS,
	.enable = 1,
	.qp_rate_limit_kbps = 0,
	.burst_bytes = 16384,
	.cnp_dscp = 48,		/* NVIDIA's CNP_DSCP default (802.1p 6) */
};

/*
 * Every setting once, with what it means: the file
 * /sys/class/infiniband/<dev>/cc/<name> holds the device's value, which
 * starts at sroce_cc_defaults.  No module parameter: one way to set each
 * thing, and a device exists before any QP of it does.
 */
#define SROCE_CC_FIELDS(X)							\
	X(enable, enable, "DCQCN and ECN marking on (1) or off (0)")		\
	X(qp_rate_limit_kbps, qp_rate_limit_kbps,				\
	  "every QP's rate ceiling in kbit/s, 0 = none")			\
	X(burst_bytes, burst_bytes, "pacer burst in bytes")			\
	X(cnp_dscp, cnp_dscp, "DSCP of the CNPs we send")			\
	X(max_rate_kbps, dcqcn.max_rate_kbps, "DCQCN line rate, kbit/s")	\
	X(min_rate_kbps, dcqcn.min_rate_kbps, "DCQCN minimum rate, kbit/s")	\
	X(ai_rate_kbps, dcqcn.ai_rate_kbps, "additive increase, kbit/s")	\
	X(hai_rate_kbps, dcqcn.hai_rate_kbps, "hyper increase, kbit/s")	\
	X(g, dcqcn.g, "alpha gain in 1/1024ths")				\
	X(initial_alpha, dcqcn.initial_alpha, "initial alpha, 1048576 = 1.0")	\
	X(alpha_period_ns, dcqcn.alpha_period_ns, "alpha decay period (K)")	\
	X(rate_period_ns, dcqcn.rate_period_ns, "rate increase timer (T)")	\
	X(byte_reset, dcqcn.byte_reset, "bytes per byte-counter event (B), 0 = off") \
	X(fast_recovery_steps, dcqcn.fast_recovery_steps, "fast recovery events (F)") \
	X(rate_reduce_period_ns, dcqcn.rate_reduce_period_ns,			\
	  "minimum time between rate cuts")					\
	X(cnp_interval_ns, dcqcn.cnp_interval_ns, "minimum time between CNPs per QP")

static bool sroce_cc_config_valid(const struct sroce_cc_config *c)
{
	return roce_dcqcn_params_valid(&c->dcqcn) && c->enable <= 1 &&
	       c->burst_bytes <= SROCE_CC_MAX_BURST &&
	       c->cnp_dscp <= SROCE_CC_MAX_DSCP;
}

void sroce_cc_dev_init(struct sroce_dev *sdev)
{
	mutex_init(&sdev->cc.lock);
	spin_lock_init(&sdev->cc.ud_np_lock);
	sdev->cc.config = sroce_cc_defaults;
}

/* ---- per-QP rate ------------------------------------------------------------ */

void sroce_cc_qp_init(struct sroce_qp *qp)
{
	struct sroce_qp_cc *cc = &qp->cc;
	const struct sroce_cc_config *c = &qp->sdev->cc.config;

	spin_lock_init(&cc->lock);
	roce_dcqcn_rp_init(&cc->rp, &c->dcqcn, ktime_get_ns());
	roce_pacer_init(&cc->pacer, 0, c->burst_bytes);
	memset(&cc->np, 0, sizeof(cc->np));
	memset(&cc->pushback, 0, sizeof(cc->pushback));
	cc->tx_bytes = 0;
	cc->rate_mark_jiffies = jiffies;
	cc->rate_mark_bytes = 0;
	cc->measured_kbps = 0;
	cc->user_limit_kbps = 0;
	cc->user_burst_bytes = 0;
	/* Differs from any real generation: the first packet syncs. */
	cc->gen = READ_ONCE(qp->sdev->cc.gen) - 1;
	cc->paced = false;
}

/*
 * The pacer's rate from the RP and the ceiling; @why is what changed one
 * of them, for the rate_change tracepoint.  Caller holds cc->lock.
 */
static void cc_apply(struct sroce_qp *qp, enum sroce_rate_reason why)
{
	struct sroce_qp_cc *cc = &qp->cc;
	const struct sroce_cc_config *c = &qp->sdev->cc.config;
	u32 limit = READ_ONCE(c->qp_rate_limit_kbps);
	u32 burst = cc->user_burst_bytes ?: READ_ONCE(c->burst_bytes);
	u32 rate = 0;

	if (READ_ONCE(c->enable) && cc->rp.limited)
		rate = cc->rp.rc_kbps;
	if (limit && (!rate || limit < rate))
		rate = limit;
	limit = cc->user_limit_kbps;
	if (limit && (!rate || limit < rate))
		rate = limit;
	if (rate != cc->pacer.rate_kbps)
		trace_rate_change(dev_name(&qp->sdev->ib.dev), qp->ib.qp_num,
				  cc->pacer.rate_kbps, rate, why,
				  roce_dcqcn_rp_stage(&cc->rp, &c->dcqcn),
				  cc->rp.alpha);
	if (rate != cc->pacer.rate_kbps || burst != cc->pacer.burst_bytes)
		roce_pacer_set(&cc->pacer, rate, burst);
	WRITE_ONCE(cc->paced, rate != 0);
}

/*
 * IB_QP_RATE_LIMIT.  ib_core 6.1's transition table allows it for raw
 * packet QPs only (later kernels leave the choice to drivers).  sroce
 * paces every QP it sends on, so it takes the limit wherever a sending
 * QP gets its send attributes: RTR->RTS and RTS->RTS, on RC, UC and UD.
 */
int sroce_cc_check_qp_limit(const struct sroce_qp *qp, enum ib_qp_state cur,
			    enum ib_qp_state new, u32 kbps, u32 burst)
{
	static_assert(SROCE_QP_RATE_LIMIT_QPTS ==
		      (BIT(IB_QPT_RC) | BIT(IB_QPT_UC) | BIT(IB_QPT_UD)));

	if (!(SROCE_QP_RATE_LIMIT_QPTS & BIT(qp->ib.qp_type)))
		return -EINVAL;
	if (new != IB_QPS_RTS || (cur != IB_QPS_RTR && cur != IB_QPS_RTS))
		return -EINVAL;
	if (kbps && (kbps < SROCE_QP_RATE_LIMIT_MIN_KBPS ||
		     kbps > SROCE_QP_RATE_LIMIT_MAX_KBPS))
		return -EINVAL;
	if (burst > SROCE_QP_MAX_BURST_BYTES)
		return -EINVAL;
	return 0;
}

void sroce_cc_set_qp_limit(struct sroce_qp *qp, u32 kbps, u32 burst)
{
	spin_lock_bh(&qp->cc.lock);
	qp->cc.user_limit_kbps = kbps;
	qp->cc.user_burst_bytes = burst;
	cc_apply(qp, SROCE_RATE_USER_LIMIT);
	spin_unlock_bh(&qp->cc.lock);
}

/*
 * Catches up with config changes and the DCQCN timers.  Caller holds
 * cc->lock.
 */
static void cc_sync(struct sroce_qp *qp, u64 now)
{
	struct sroce_qp_cc *cc = &qp->cc;
	struct sroce_cc_dev *dev = &qp->sdev->cc;
	u32 gen = READ_ONCE(dev->gen);

	if (cc->gen != gen) {
		cc->gen = gen;
		if (!READ_ONCE(dev->config.enable) && cc->rp.limited)
			roce_dcqcn_rp_init(&cc->rp, &dev->config.dcqcn, now);
		cc_apply(qp, SROCE_RATE_CONFIG);
	}
	if (cc->rp.limited &&
	    roce_dcqcn_rp_advance(&cc->rp, &dev->config.dcqcn, now))
		cc_apply(qp, SROCE_RATE_TIMER);
}

bool sroce_cc_may_send(struct sroce_qp *qp)
{
	struct sroce_qp_cc *cc = &qp->cc;
	u64 now, next;

	if (likely(!READ_ONCE(cc->paced) &&
		   cc->gen == READ_ONCE(qp->sdev->cc.gen)))
		return true;
	now = ktime_get_ns();
	spin_lock_bh(&cc->lock);
	cc_sync(qp, now);
	next = roce_pacer_next_ns(&cc->pacer, now);
	spin_unlock_bh(&cc->lock);
	if (next <= now)
		return true;
	sroce_sched_kick_at(qp, next);
	return false;
}

static u32 kbps(u64 bytes, unsigned long jiffies_elapsed)
{
	return min_t(u64, U32_MAX, div64_u64(bytes * 8 * HZ,
					    (u64)jiffies_elapsed * 1000));
}

/* Closes a measurement window when it is over; an idle gap means unknown. */
static void cc_measure(struct sroce_qp_cc *cc)
{
	unsigned long elapsed = jiffies - cc->rate_mark_jiffies;

	if (elapsed < SROCE_CC_RATE_WINDOW)
		return;
	WRITE_ONCE(cc->measured_kbps, elapsed > 4 * SROCE_CC_RATE_WINDOW ? 0 :
			kbps(cc->tx_bytes - cc->rate_mark_bytes, elapsed));
	cc->rate_mark_jiffies += elapsed;
	cc->rate_mark_bytes = cc->tx_bytes;
}

/* The QP's recent send rate, for a CNP arriving at full rate. */
static u32 cc_current_kbps(struct sroce_qp_cc *cc)
{
	unsigned long elapsed = jiffies - READ_ONCE(cc->rate_mark_jiffies);
	u32 last = READ_ONCE(cc->measured_kbps);

	/* A window half over says more than none; else trust the last. */
	if (elapsed >= SROCE_CC_RATE_WINDOW / 2 && elapsed > 0 &&
	    elapsed <= 4 * SROCE_CC_RATE_WINDOW)
		return max(last, kbps(READ_ONCE(cc->tx_bytes) -
				      READ_ONCE(cc->rate_mark_bytes), elapsed));
	return last;
}

void sroce_cc_sent(struct sroce_qp *qp, const struct sroce_av *av, u32 roce_len)
{
	struct sroce_qp_cc *cc = &qp->cc;
	const struct sroce_cc_config *c = &qp->sdev->cc.config;
	u32 bytes = roce_len + (av->ipv6 ? SROCE_UDP_IPV6_LEN : SROCE_UDP_IPV4_LEN);

	/* Only the send work writes these; readers may see stale values. */
	WRITE_ONCE(cc->tx_bytes, cc->tx_bytes + bytes);
	cc_measure(cc);
	/* Unpaced means the RP is at full rate: no byte counter to run. */
	if (!READ_ONCE(cc->paced))
		return;
	spin_lock_bh(&cc->lock);
	roce_pacer_charge(&cc->pacer, bytes, ktime_get_ns());
	if (cc->rp.limited && roce_dcqcn_rp_sent(&cc->rp, &c->dcqcn, bytes))
		cc_apply(qp, SROCE_RATE_BYTES);
	spin_unlock_bh(&cc->lock);
}

/* ---- ECN and CNPs ----------------------------------------------------------- */

u8 sroce_cc_tclass(struct sroce_dev *sdev, u8 tclass, bool cnp)
{
	tclass &= ~INET_ECN_MASK;
	/* A CE-marked CNP would ask for a CNP about a CNP: never ECT. */
	if (!cnp && READ_ONCE(sdev->cc.config.enable))
		tclass |= INET_ECN_ECT_0;
	return tclass;
}

bool sroce_cc_skb_ce(const struct sk_buff *skb)
{
	if (skb->protocol == htons(ETH_P_IP))
		return INET_ECN_is_ce(ipv4_get_dsfield(ip_hdr(skb)));
	if (skb->protocol == htons(ETH_P_IPV6))
		return INET_ECN_is_ce(ipv6_get_dsfield(ipv6_hdr(skb)));
	return false;
}

void sroce_cc_cnp_recv(struct sroce_qp *qp)
{
	struct sroce_dev *sdev = qp->sdev;
	u64 now;

	if (!READ_ONCE(sdev->cc.config.enable))
		return;
	now = ktime_get_ns();
	spin_lock_bh(&qp->cc.lock);
	cc_sync(qp, now);
	if (roce_dcqcn_rp_cnp(&qp->cc.rp, &sdev->cc.config.dcqcn, now,
			      cc_current_kbps(&qp->cc)))
		cc_apply(qp, SROCE_RATE_CNP);
	spin_unlock_bh(&qp->cc.lock);
}

/*
 * The local stack refused one of @qp's packets (backpressure.c): DCQCN
 * cuts as for a CNP (proto/dcqcn.h, roce_dcqcn_rp_pushback).  Without
 * DCQCN a refusal only makes the send work back off, as before.
 */
void sroce_cc_local_pushback(struct sroce_qp *qp)
{
	struct sroce_dev *sdev = qp->sdev;
	u64 now;

	if (!READ_ONCE(sdev->cc.config.enable))
		return;
	now = ktime_get_ns();
	spin_lock_bh(&qp->cc.lock);
	cc_sync(qp, now);
	if (roce_dcqcn_rp_pushback(&qp->cc.rp, &qp->cc.pushback,
				   &sdev->cc.config.dcqcn, now,
				   cc_current_kbps(&qp->cc)))
		cc_apply(qp, SROCE_RATE_PUSHBACK);
	spin_unlock_bh(&qp->cc.lock);
}

/*
 * A CNP to QP @dest_qpn at @to (format: roce_dcqcn_build_cnp), in the
 * CNP DSCP, not ECN-capable.
 */
static void cnp_send(struct sroce_dev *sdev, const struct sroce_av *to,
		     u16 sport, u32 dest_qpn)
{
	struct sroce_av av = *to;
	struct sk_buff *skb;
	u32 hdr_len = roce_opcode_get(ROCE_OP_CNP)->hdr_len;

	skb = sroce_skb_alloc(sdev, hdr_len);
	if (!skb)
		return;
	if (WARN_ON_ONCE(roce_dcqcn_build_cnp(skb->data, hdr_len,
					      dest_qpn) != hdr_len)) {
		kfree_skb(skb);
		return;
	}
	av.tclass = READ_ONCE(sdev->cc.config.cnp_dscp) << 2;
	if (!sroce_skb_send(sdev, &av, NULL, sport, skb))
		sroce_count(sdev, SROCE_CNT_CNP_SENT, 1);
}

/*
 * UD: the flow is (our QP, the source QP in the DETH, the source
 * address), and the CNP goes back to that address, to that QP.
 */
static void cnp_answer_ud(struct sroce_qp *qp, const struct sk_buff *skb,
			  u32 src_qpn)
{
	struct sroce_dev *sdev = qp->sdev;
	struct sroce_av av = {};
	u32 key;
	bool send;

	if (skb->protocol == htons(ETH_P_IPV6)) {
		av.ipv6 = true;
		av.saddr = ipv6_hdr(skb)->daddr;
		av.daddr = ipv6_hdr(skb)->saddr;
	} else {
		ipv6_addr_set_v4mapped(ip_hdr(skb)->daddr, &av.saddr);
		ipv6_addr_set_v4mapped(ip_hdr(skb)->saddr, &av.daddr);
	}
	/* A hash of the address's bytes: their order does not matter. */
	key = jhash2((__force const u32 *)av.daddr.s6_addr32, 4,
		     jhash_2words(qp->ib.qp_num, src_qpn, 0));
	spin_lock_bh(&sdev->cc.ud_np_lock);
	send = roce_dcqcn_np_flow_ce(&sdev->cc.ud_np, key, &sdev->cc.config.dcqcn,
				     ktime_get_ns());
	spin_unlock_bh(&sdev->cc.ud_np_lock);
	if (send)
		cnp_send(sdev, &av,
			 rdma_flow_label_to_udp_sport(rdma_calc_flow_label(qp->ib.qp_num,
									   src_qpn)),
			 src_qpn);
}

void sroce_cc_ce_recv(struct sroce_qp *qp, const struct sk_buff *skb,
		      const struct roce_pkt_info *pkt)
{
	struct sroce_dev *sdev = qp->sdev;
	bool send;

	sroce_count(sdev, SROCE_CNT_ECN_MARKED_RCVD, 1);
	if (!READ_ONCE(sdev->cc.config.enable))
		return;
	switch (qp->ib.qp_type) {
	case IB_QPT_RC:
	case IB_QPT_UC:
	case IB_QPT_XRC_TGT:
	case IB_QPT_XRC_INI:
		spin_lock_bh(&qp->cc.lock);
		send = roce_dcqcn_np_ce(&qp->cc.np, &sdev->cc.config.dcqcn,
					ktime_get_ns());
		spin_unlock_bh(&qp->cc.lock);
		if (send)
			cnp_send(sdev, &qp->av, qp->sport, qp->dest_qpn);
		break;
	case IB_QPT_UD:
		cnp_answer_ud(qp, skb, pkt->deth.src_qpn);
		break;
	default:	/* GSI: management traffic is not rate-controlled */
		break;
	}
}

/* ---- visibility ------------------------------------------------------------- */

/* `rdma resource show qp -dd`: the QP's current rate and DCQCN state. */
int sroce_fill_res_qp_entry(struct sk_buff *msg, struct ib_qp *ibqp)
{
	struct sroce_qp *qp = to_sqp(ibqp);
	struct sroce_qp_cc *cc = &qp->cc;
	struct nlattr *table;
	u32 rate, rc, rt, alpha, user_limit;
	bool limited;

	spin_lock_bh(&cc->lock);
	rate = cc->pacer.rate_kbps;
	user_limit = cc->user_limit_kbps;
	rc = cc->rp.rc_kbps;
	rt = cc->rp.rt_kbps;
	alpha = cc->rp.alpha;
	limited = cc->rp.limited;
	spin_unlock_bh(&cc->lock);

	table = nla_nest_start(msg, RDMA_NLDEV_ATTR_DRIVER);
	if (!table)
		return -EMSGSIZE;
	if (rdma_nl_put_driver_u32(msg, "pace_rate_kbps", rate) ||
	    rdma_nl_put_driver_u32(msg, "qp_rate_limit_kbps", user_limit) ||
	    rdma_nl_put_driver_u32(msg, "dcqcn_limited", limited) ||
	    rdma_nl_put_driver_u32(msg, "dcqcn_rc_kbps", rc) ||
	    rdma_nl_put_driver_u32(msg, "dcqcn_rt_kbps", rt) ||
	    rdma_nl_put_driver_u32(msg, "dcqcn_alpha_q20", alpha) ||
	    rdma_nl_put_driver_u64(msg, "tx_bytes", READ_ONCE(cc->tx_bytes))) {
		nla_nest_cancel(msg, table);
		return -EMSGSIZE;
	}
	nla_nest_end(msg, table);
	return 0;
}

/* ---- sysfs: /sys/class/infiniband/<dev>/cc/ --------------------------------- */

struct sroce_cc_attr {
	struct device_attribute attr;
	size_t offset;		/* of the u32 in struct sroce_cc_config */
};

static u32 *cc_field(struct sroce_cc_config *c, const struct device_attribute *a)
{
	return (u32 *)((u8 *)c + container_of(a, struct sroce_cc_attr, attr)->offset);
}

static ssize_t cc_show(struct device *device, struct device_attribute *attr,
		       char *buf)
{
	struct sroce_dev *sdev =
		rdma_device_to_drv_device(device, struct sroce_dev, ib);

	return sysfs_emit(buf, "%u\n", READ_ONCE(*cc_field(&sdev->cc.config, attr)));
}

static ssize_t cc_store(struct device *device, struct device_attribute *attr,
			const char *buf, size_t count)
{
	struct sroce_dev *sdev =
		rdma_device_to_drv_device(device, struct sroce_dev, ib);
	struct sroce_cc_config next;
	u32 val;
	int err;

	err = kstrtou32(buf, 0, &val);
	if (err)
		return err;
	mutex_lock(&sdev->cc.lock);
	next = sdev->cc.config;
	*cc_field(&next, attr) = val;
	if (!sroce_cc_config_valid(&next)) {
		mutex_unlock(&sdev->cc.lock);
		return -EINVAL;
	}
	WRITE_ONCE(*cc_field(&sdev->cc.config, attr), val);
	/* QPs compare generations before reading the new value. */
	smp_wmb();
	WRITE_ONCE(sdev->cc.gen, sdev->cc.gen + 1);
	mutex_unlock(&sdev->cc.lock);
	return count;
}

#define SROCE_CC_ATTR(name, field, desc)					\
	static struct sroce_cc_attr cc_attr_##name = {				\
		.attr = __ATTR(name, 0644, cc_show, cc_store),			\
		.offset = offsetof(struct sroce_cc_config, field),		\
	};
SROCE_CC_FIELDS(SROCE_CC_ATTR)

#define SROCE_CC_ATTR_PTR(name, field, desc) &cc_attr_##name.attr.attr,
static struct attribute *sroce_cc_attrs[] = {
	SROCE_CC_FIELDS(SROCE_CC_ATTR_PTR)
	NULL,
};

static const struct attribute_group sroce_cc_group = {
	.name = "cc",
	.attrs = sroce_cc_attrs,
};

/*
 * ib_core has room for one driver attribute group (the top-level one),
 * so the cc/ directory is added after registration.  device_del removes
 * it with the rest of the device's directory.
 */
void sroce_cc_sysfs_add(struct sroce_dev *sdev)
{
	int err = sysfs_create_group(&sdev->ib.dev.kobj, &sroce_cc_group);

	if (err)
		dev_warn(&sdev->ib.dev, "no cc/ settings in sysfs: %d\n", err);
}

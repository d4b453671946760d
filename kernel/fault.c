// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Fault injection, so that a project testing its RDMA code over sroce can
 * make the fabric misbehave on purpose and replay it.  Per device, under
 * debugfs (root only, and no ABI promise: this is a test facility, which
 * is what the kernel's own fault injection uses debugfs for):
 *
 *   /sys/kernel/debug/sroce/<dev>/faults   one rule per write (proto/
 *       fault.h's language), `del ID`, `clear`; reading lists the rules
 *       with how many packets each selected and hit
 *   /sys/kernel/debug/sroce/<dev>/link     `down`, `up`, `flap MS`: the
 *       port goes DOWN (IB_EVENT_PORT_ERR, every packet lost both ways)
 *       and back, the netdev untouched
 *
 * Rules are evaluated in order; the first that hits a packet acts on it,
 * and rules after it do not see that packet.  Each action is counted in
 * the port's hw_counters (fault_*).
 */
#include <linux/debugfs.h>
#include <linux/seq_file.h>
#include <linux/udp.h>

#include "sroce.h"

DEFINE_STATIC_KEY_FALSE(sroce_fault_key);

static struct dentry *sroce_fault_root;

/* A packet held back by a delay rule: when it goes on, and which way. */
struct sroce_fault_cb {
	u64 due_ns;
	u8 dir;
	bool ipv6;
};

static struct sroce_fault_cb *fault_cb(struct sk_buff *skb)
{
	BUILD_BUG_ON(sizeof(struct sroce_fault_cb) > sizeof(skb->cb));
	return (struct sroce_fault_cb *)skb->cb;
}

static const enum sroce_counter action_counter[ROCE_FAULT_NUM_ACTIONS] = {
	[ROCE_FAULT_DROP] = SROCE_CNT_FAULT_DROP,
	[ROCE_FAULT_DELAY] = SROCE_CNT_FAULT_DELAY,
	[ROCE_FAULT_DUP] = SROCE_CNT_FAULT_DUP,
	[ROCE_FAULT_CORRUPT] = SROCE_CNT_FAULT_CORRUPT,
	[ROCE_FAULT_RNR_NAK] = SROCE_CNT_FAULT_RNR_NAK,
	[ROCE_FAULT_ACCESS_NAK] = SROCE_CNT_FAULT_ACCESS_NAK,
};

/* ---- deciding ------------------------------------------------------------ */

/*
 * The first rule among @actions (a mask of ROCE_FAULT_*) that selects the
 * packet and hits it, with the packet's number for that rule in *@n; NULL
 * if none.  Caller holds rcu_read_lock().
 */
static struct sroce_fault_rule *fault_match(struct sroce_fault_dev *f, u8 dir,
					    u8 opcode, u32 qpn, u32 actions,
					    u64 *n)
{
	struct sroce_fault_rules *rules = rcu_dereference(f->rules);
	unsigned int i;

	for (i = 0; rules && i < rules->num; i++) {
		struct sroce_fault_rule *fr = rules->rule[i];
		const struct roce_fault_rule *r = &fr->rule;

		if (!(BIT(r->action) & actions) ||
		    !roce_fault_selects(r, dir, opcode, qpn))
			continue;
		*n = atomic64_inc_return(&fr->matched) - 1;
		if (!roce_fault_hits(r, *n))
			continue;
		if (r->count) {
			/* At most count hits, however many CPUs race here. */
			if (atomic64_fetch_add_unless(&fr->injected, 1,
						      r->count) == r->count)
				continue;
		} else {
			atomic64_inc(&fr->injected);
		}
		return fr;
	}
	return NULL;
}

/* ---- acting ---------------------------------------------------------------- */

/* Sends or receives @skb as if no rule had seen it. */
static void fault_go_on(struct sroce_dev *sdev, struct sk_buff *skb, u8 dir,
			bool ipv6)
{
	if (dir == ROCE_FAULT_TX)
		sroce_ip_out(sdev, skb, ipv6);
	else
		sroce_rx_deliver(sdev, skb, ipv6);
}

static void fault_delay(struct sroce_dev *sdev, struct sk_buff *skb, u8 dir,
			bool ipv6, u32 delay_us)
{
	struct sroce_fault_dev *f = &sdev->fault;
	u64 due = ktime_get_ns() + (u64)delay_us * NSEC_PER_USEC;
	struct sk_buff *pos;

	spin_lock_bh(&f->delay_lock);
	if (f->dying || skb_queue_len(&f->delayed) >= SROCE_FAULT_MAX_DELAYED) {
		spin_unlock_bh(&f->delay_lock);
		sroce_count(sdev, SROCE_CNT_FAULT_DROP, 1);
		kfree_skb(skb);
		return;
	}
	fault_cb(skb)->due_ns = due;
	fault_cb(skb)->dir = dir;
	fault_cb(skb)->ipv6 = ipv6;
	/* By due time; from the tail, since one rule's delays keep order. */
	skb_queue_reverse_walk(&f->delayed, pos)
		if (fault_cb(pos)->due_ns <= due)
			break;
	__skb_queue_after(&f->delayed, pos, skb);
	if (skb_peek(&f->delayed) == skb)
		hrtimer_start(&f->delay_timer, ns_to_ktime(due),
			      HRTIMER_MODE_ABS_SOFT);
	spin_unlock_bh(&f->delay_lock);
	sroce_count(sdev, SROCE_CNT_FAULT_DELAY, 1);
}

/* Softirq: sends on (or receives) every held packet that is due. */
static enum hrtimer_restart fault_delay_timer(struct hrtimer *t)
{
	struct sroce_fault_dev *f = container_of(t, struct sroce_fault_dev,
						 delay_timer);
	struct sroce_dev *sdev = container_of(f, struct sroce_dev, fault);
	struct sk_buff_head due;
	struct sk_buff *skb;
	u64 now = ktime_get_ns();

	__skb_queue_head_init(&due);
	spin_lock_bh(&f->delay_lock);
	while ((skb = skb_peek(&f->delayed)) && fault_cb(skb)->due_ns <= now) {
		__skb_unlink(skb, &f->delayed);
		__skb_queue_tail(&due, skb);
	}
	/* Re-armed from here, so the callback itself never restarts. */
	if (skb && !f->dying)
		hrtimer_start(t, ns_to_ktime(fault_cb(skb)->due_ns),
			      HRTIMER_MODE_ABS_SOFT);
	spin_unlock_bh(&f->delay_lock);

	rcu_read_lock();
	while ((skb = __skb_dequeue(&due))) {
		u8 dir = fault_cb(skb)->dir;
		bool ipv6 = fault_cb(skb)->ipv6;

		/* The IP layer reads its own control block from skb->cb. */
		memset(skb->cb, 0, sizeof(skb->cb));
		fault_go_on(sdev, skb, dir, ipv6);
	}
	rcu_read_unlock();
	return HRTIMER_NORESTART;
}

/*
 * Acts on a packet going @dir whose BTH is @bth_off bytes into skb->data;
 * the packet ends with its ICRC.
 */
static enum sroce_fault_verdict fault_packet(struct sroce_dev *sdev,
					     struct sk_buff *skb, bool ipv6,
					     u8 dir, unsigned int bth_off)
{
	struct sroce_fault_dev *f = &sdev->fault;
	const u8 *bth = skb->data + bth_off;
	u32 qpn = bth[5] << 16 | bth[6] << 8 | bth[7];	/* BTH DestQP */
	struct sroce_fault_rule *fr;
	struct sk_buff *copy;
	u64 n;
	u8 action;

	rcu_read_lock();
	fr = fault_match(f, dir, bth[0], qpn, ROCE_FAULT_PACKET_ACTIONS, &n);
	if (!fr) {
		rcu_read_unlock();
		return SROCE_FAULT_PASS;
	}
	action = fr->rule.action;
	if (action != ROCE_FAULT_DELAY)	/* counted once it is held */
		sroce_count(sdev, action_counter[action], 1);

	switch (action) {
	case ROCE_FAULT_DROP:
		rcu_read_unlock();
		kfree_skb(skb);
		return SROCE_FAULT_TAKEN;
	case ROCE_FAULT_CORRUPT: {
		/* One bit of what the ICRC covers; not BTH byte 4, which it
		 * masks (IBTA A17.8.1), so the receiver must notice.
		 */
		u32 bits = (skb->len - bth_off - 1) * 8;
		u32 bit = roce_fault_pick(&fr->rule, n, bits);
		u32 byte = bit / 8 + (bit / 8 >= 4);

		rcu_read_unlock();
		/* Linear first: a zero-copy payload is the sender's memory,
		 * which the flip must not reach (skb_linearize copies it).
		 */
		if (skb_unclone(skb, GFP_ATOMIC) || skb_linearize(skb))
			return SROCE_FAULT_PASS;	/* whole, then */
		skb->data[bth_off + byte] ^= BIT(bit % 8);
		return SROCE_FAULT_PASS;
	}
	case ROCE_FAULT_DUP:
		rcu_read_unlock();
		copy = skb_copy(skb, GFP_ATOMIC);
		if (copy)
			fault_go_on(sdev, copy, dir, ipv6);
		return SROCE_FAULT_PASS;
	case ROCE_FAULT_DELAY: {
		u32 us = fr->rule.delay_us;

		rcu_read_unlock();
		fault_delay(sdev, skb, dir, ipv6, us);
		return SROCE_FAULT_TAKEN;
	}
	default:
		rcu_read_unlock();
		return SROCE_FAULT_PASS;
	}
}

/* A forced-down port loses everything, as a pulled cable would. */
static bool fault_link_lost(struct sroce_dev *sdev, struct sk_buff *skb)
{
	if (!READ_ONCE(sdev->fault.link_down))
		return false;
	sroce_count(sdev, SROCE_CNT_FAULT_LINK_DOWN, 1);
	kfree_skb(skb);
	return true;
}

enum sroce_fault_verdict sroce_fault_tx(struct sroce_dev *sdev,
					struct sk_buff *skb, bool ipv6)
{
	if (fault_link_lost(sdev, skb))
		return SROCE_FAULT_TAKEN;
	return fault_packet(sdev, skb, ipv6, ROCE_FAULT_TX,
			    skb_transport_offset(skb) + sizeof(struct udphdr));
}

enum sroce_fault_verdict sroce_fault_rx(struct sroce_dev *sdev,
					struct sk_buff *skb, bool ipv6)
{
	if (fault_link_lost(sdev, skb))
		return SROCE_FAULT_TAKEN;
	/* Too short for a BTH: the receive path drops it as malformed. */
	if (skb->len < sizeof(struct udphdr) + ROCE_BTH_LEN + ROCE_ICRC_LEN)
		return SROCE_FAULT_PASS;
	return fault_packet(sdev, skb, ipv6, ROCE_FAULT_RX,
			    sizeof(struct udphdr));
}

int sroce_fault_resp_nak(struct sroce_qp *qp, u8 opcode)
{
	struct sroce_dev *sdev = qp->sdev;
	struct sroce_fault_rule *fr;
	int nak = -1;
	u64 n;

	rcu_read_lock();
	fr = fault_match(&sdev->fault, ROCE_FAULT_RX, opcode, qp->ib.qp_num,
			 ROCE_FAULT_NAK_ACTIONS, &n);
	if (fr) {
		nak = fr->rule.action;
		sroce_count(sdev, action_counter[nak], 1);
	}
	rcu_read_unlock();
	return nak;
}

/* ---- configuring ------------------------------------------------------- */

/* Whether the hooks must look; flips the static key with it.  Under lock. */
static void fault_update_active(struct sroce_fault_dev *f)
{
	struct sroce_fault_rules *rules;

	rules = rcu_dereference_protected(f->rules, lockdep_is_held(&f->lock));
	bool active = (rules && rules->num) || f->link_down;

	if (active == f->active)
		return;
	if (active)
		static_branch_inc(&sroce_fault_key);
	WRITE_ONCE(f->active, active);
	if (!active)
		static_branch_dec(&sroce_fault_key);
}

/* Publishes @next (NULL: no rules) and frees what it replaces.  Under lock. */
static void fault_publish(struct sroce_fault_dev *f,
			  struct sroce_fault_rules *next)
{
	struct sroce_fault_rules *old;

	old = rcu_replace_pointer(f->rules, next, lockdep_is_held(&f->lock));

	if (old)
		kfree_rcu(old, rcu);
	fault_update_active(f);
}

/* A copy of the current list with room for @extra more; NULL: no memory. */
static struct sroce_fault_rules *fault_copy(struct sroce_fault_dev *f,
					    unsigned int extra)
{
	struct sroce_fault_rules *cur;

	cur = rcu_dereference_protected(f->rules, lockdep_is_held(&f->lock));
	unsigned int num = cur ? cur->num : 0;
	struct sroce_fault_rules *next;

	next = kzalloc(struct_size(next, rule, num + extra), GFP_KERNEL);
	if (!next)
		return NULL;
	if (num)
		memcpy(next->rule, cur->rule, num * sizeof(cur->rule[0]));
	next->num = num;
	return next;
}

static int fault_add(struct sroce_dev *sdev, const struct roce_fault_rule *r)
{
	struct sroce_fault_dev *f = &sdev->fault;
	struct sroce_fault_rules *next;
	struct sroce_fault_rule *fr;
	int err = 0;

	fr = kzalloc(sizeof(*fr), GFP_KERNEL);
	if (!fr)
		return -ENOMEM;
	fr->rule = *r;
	if (!fr->rule.seeded)
		fr->rule.seed = get_random_u64();	/* listed: replayable */
	mutex_lock(&f->lock);
	next = fault_copy(f, 1);
	if (!next) {
		err = -ENOMEM;
	} else if (next->num >= SROCE_FAULT_MAX_RULES) {
		kfree(next);
		err = -ENOSPC;
	} else {
		fr->id = f->next_id++;
		next->rule[next->num++] = fr;
		fault_publish(f, next);
	}
	mutex_unlock(&f->lock);
	if (err)
		kfree(fr);
	return err;
}

static int fault_del(struct sroce_dev *sdev, u32 id)
{
	struct sroce_fault_dev *f = &sdev->fault;
	struct sroce_fault_rules *next;
	struct sroce_fault_rule *gone = NULL;
	unsigned int i, j;

	mutex_lock(&f->lock);
	next = fault_copy(f, 0);
	if (!next) {
		mutex_unlock(&f->lock);
		return -ENOMEM;
	}
	for (i = j = 0; i < next->num; i++) {
		if (next->rule[i]->id == id)
			gone = next->rule[i];
		else
			next->rule[j++] = next->rule[i];
	}
	next->num = j;
	if (gone)
		fault_publish(f, next);
	else
		kfree(next);
	mutex_unlock(&f->lock);
	if (!gone)
		return -ENOENT;
	kfree_rcu(gone, rcu);
	return 0;
}

static void fault_clear(struct sroce_dev *sdev)
{
	struct sroce_fault_dev *f = &sdev->fault;
	struct sroce_fault_rules *old;
	unsigned int i;

	mutex_lock(&f->lock);
	old = rcu_replace_pointer(f->rules, NULL, lockdep_is_held(&f->lock));
	fault_update_active(f);
	mutex_unlock(&f->lock);
	if (!old)
		return;
	synchronize_rcu();	/* no packet is looking at them any more */
	for (i = 0; i < old->num; i++)
		kfree(old->rule[i]);
	kfree(old);
}

static void fault_show_rule(struct seq_file *m, struct sroce_fault_rule *fr)
{
	const struct roce_fault_rule *r = &fr->rule;
	unsigned int b;
	bool first = true;

	seq_printf(m, "%u: %s dir=%s class=", fr->id,
		   roce_fault_action_name(r->action),
		   r->dirs == ROCE_FAULT_TX ? "tx" :
		   r->dirs == ROCE_FAULT_RX ? "rx" : "both");
	if (r->classes == ROCE_FAULT_ALL_CLASSES)
		seq_puts(m, "all");
	for (b = 0; r->classes != ROCE_FAULT_ALL_CLASSES && b < 4; b++) {
		if (!(r->classes & BIT(b)))
			continue;
		seq_printf(m, "%s%s", first ? "" : ",", roce_fault_class_name(b));
		first = false;
	}
	if (r->qpn == ROCE_FAULT_ANY_QPN)
		seq_puts(m, " qpn=any");
	else
		seq_printf(m, " qpn=%u", r->qpn);
	seq_printf(m, " prob=%u.%06u every=%u after=%llu count=%llu",
		   r->prob / ROCE_FAULT_PROB_ONE, r->prob % ROCE_FAULT_PROB_ONE,
		   r->every, r->after, r->count);
	if (r->action == ROCE_FAULT_DELAY)
		seq_printf(m, " delay_us=%u", r->delay_us);
	seq_printf(m, " seed=%llu matched=%lld injected=%lld\n", r->seed,
		   atomic64_read(&fr->matched), atomic64_read(&fr->injected));
}

static int faults_show(struct seq_file *m, void *unused)
{
	struct sroce_dev *sdev = m->private;
	struct sroce_fault_rules *rules;
	unsigned int i;

	mutex_lock(&sdev->fault.lock);
	rules = rcu_dereference_protected(sdev->fault.rules,
					  lockdep_is_held(&sdev->fault.lock));
	for (i = 0; rules && i < rules->num; i++)
		fault_show_rule(m, rules->rule[i]);
	mutex_unlock(&sdev->fault.lock);
	return 0;
}

static int faults_open(struct inode *inode, struct file *file)
{
	return single_open(file, faults_show, inode->i_private);
}

/* Copies a one-line command from user space, NUL-terminated. */
static int fault_read_cmd(const char __user *ubuf, size_t len, char *buf,
			  size_t size)
{
	if (!len || len >= size)
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = '\0';
	if (strnlen(buf, len + 1) != len)
		return -EINVAL;		/* a NUL inside */
	return 0;
}

static ssize_t faults_write(struct file *file, const char __user *ubuf,
			    size_t len, loff_t *ppos)
{
	struct sroce_dev *sdev = file_inode(file)->i_private;
	char buf[ROCE_FAULT_MAX_LINE];
	struct roce_fault_rule r;
	const char *why;
	u32 id;
	int err;

	err = fault_read_cmd(ubuf, len, buf, sizeof(buf));
	if (err)
		return err;
	if (sysfs_streq(buf, "clear")) {
		fault_clear(sdev);
		return len;
	}
	if (sscanf(buf, "del %u", &id) == 1) {
		err = fault_del(sdev, id);
		return err ? err : len;
	}
	why = roce_fault_parse(buf, len, &r);
	if (why) {
		pr_warn_ratelimited("sroce: %s: fault rule not taken: %s\n",
				    dev_name(&sdev->ib.dev), why);
		return -EINVAL;
	}
	err = fault_add(sdev, &r);
	return err ? err : len;
}

static const struct file_operations faults_fops = {
	.owner = THIS_MODULE,
	.open = faults_open,
	.read = seq_read,
	.llseek = seq_lseek,
	.release = single_release,
	.write = faults_write,
};

/* Forces the port down or lets it follow its netdev again. */
static void fault_set_link(struct sroce_dev *sdev, bool down)
{
	struct sroce_fault_dev *f = &sdev->fault;

	mutex_lock(&f->lock);
	if (f->link_down != down) {
		if (down)
			sroce_count(sdev, SROCE_CNT_FAULT_LINK_FLAPS, 1);
		WRITE_ONCE(f->link_down, down);
		fault_update_active(f);
		rtnl_lock();
		sroce_port_changed(sdev);
		rtnl_unlock();
	}
	mutex_unlock(&f->lock);
}

static void fault_flap_end(struct work_struct *work)
{
	struct sroce_fault_dev *f = container_of(to_delayed_work(work),
						 struct sroce_fault_dev, flap);

	fault_set_link(container_of(f, struct sroce_dev, fault), false);
}

static ssize_t link_read(struct file *file, char __user *ubuf, size_t len,
			 loff_t *ppos)
{
	struct sroce_dev *sdev = file_inode(file)->i_private;
	const char *s = READ_ONCE(sdev->fault.link_down) ? "down\n" : "up\n";

	return simple_read_from_buffer(ubuf, len, ppos, s, strlen(s));
}

#define SROCE_FAULT_MAX_FLAP_MS	60000

static ssize_t link_write(struct file *file, const char __user *ubuf,
			  size_t len, loff_t *ppos)
{
	struct sroce_dev *sdev = file_inode(file)->i_private;
	char buf[32];
	unsigned int ms;
	int err;

	err = fault_read_cmd(ubuf, len, buf, sizeof(buf));
	if (err)
		return err;
	if (sysfs_streq(buf, "down") || sysfs_streq(buf, "up")) {
		cancel_delayed_work_sync(&sdev->fault.flap);
		fault_set_link(sdev, buf[0] == 'd');
		return len;
	}
	if (sscanf(buf, "flap %u", &ms) == 1 && ms &&
	    ms <= SROCE_FAULT_MAX_FLAP_MS) {
		cancel_delayed_work_sync(&sdev->fault.flap);
		fault_set_link(sdev, true);
		schedule_delayed_work(&sdev->fault.flap, msecs_to_jiffies(ms));
		return len;
	}
	pr_warn_ratelimited("sroce: %s: link takes down, up or flap MS (1..%u)\n",
			    dev_name(&sdev->ib.dev), SROCE_FAULT_MAX_FLAP_MS);
	return -EINVAL;
}

static const struct file_operations link_fops = {
	.owner = THIS_MODULE,
	.read = link_read,
	.write = link_write,
	.llseek = default_llseek,
};

/* ---- life cycle -------------------------------------------------------- */

void sroce_fault_init(void)
{
	/* Without debugfs (or under lockdown) this is an error pointer,
	 * which debugfs takes as a parent and ignores: no knobs, no faults.
	 */
	sroce_fault_root = debugfs_create_dir("sroce", NULL);
}

void sroce_fault_exit(void)
{
	debugfs_remove_recursive(sroce_fault_root);
}

void sroce_fault_dev_init(struct sroce_dev *sdev)
{
	struct sroce_fault_dev *f = &sdev->fault;

	mutex_init(&f->lock);
	INIT_DELAYED_WORK(&f->flap, fault_flap_end);
	spin_lock_init(&f->delay_lock);
	skb_queue_head_init(&f->delayed);
	hrtimer_setup(&f->delay_timer, fault_delay_timer, CLOCK_MONOTONIC,
		      HRTIMER_MODE_ABS_SOFT);
}

void sroce_fault_dev_add(struct sroce_dev *sdev)
{
	struct dentry *dir;

	dir = debugfs_create_dir(dev_name(&sdev->ib.dev), sroce_fault_root);
	sdev->fault.dir = dir;
	debugfs_create_file("faults", 0600, dir, sdev, &faults_fops);
	debugfs_create_file("link", 0600, dir, sdev, &link_fops);
}

/*
 * After the device left the network (no packet comes in) and lost its
 * QPs (none goes out): no file can be written once debugfs_remove
 * returns, so nothing re-arms the timer or the flap once they are
 * cancelled.
 */
void sroce_fault_dev_remove(struct sroce_dev *sdev)
{
	struct sroce_fault_dev *f = &sdev->fault;

	debugfs_remove_recursive(f->dir);
	f->dir = NULL;
	cancel_delayed_work_sync(&f->flap);
	spin_lock_bh(&f->delay_lock);
	f->dying = true;
	spin_unlock_bh(&f->delay_lock);
	hrtimer_cancel(&f->delay_timer);
	skb_queue_purge(&f->delayed);
	fault_clear(sdev);
	mutex_lock(&f->lock);
	f->link_down = false;
	fault_update_active(f);
	mutex_unlock(&f->lock);
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Memory windows (type 1 and type 2B), and the resolution of remote keys,
 * which name either an MR or a window.
 *
 * A window is a view of part of an MR with its own bounds and remote
 * rights, granted by a bind; the MR itself needs only MW_BIND access.
 *  - Type 1 windows belong to their PD.  ibv_bind_mw() posts the bind as a
 *    work request on any QP of that PD and gives the window a new rkey;
 *    binding with length 0 unbinds.  They cannot be invalidated.
 *  - Type 2B windows are bound by a Bind MW work request to the QP that
 *    posted it: only requests arriving at that QP may use the rkey (and
 *    only it may invalidate it with SEND_WITH_INV), the consumer chooses
 *    the key's low 8 bits, and a bound window must be invalidated
 *    (LOCAL_INV, SEND_WITH_INV) before it is bound again.
 *
 * Concurrency.  Binds and invalidations run in a QP's send work or in the
 * receive softirq; remote accesses read the binding in softirq or the send
 * work (READ responses).  A seqlock gives readers a consistent snapshot of
 * the binding, so rights and bounds never mix two binds.  The bound MR
 * cannot be deregistered while a window holds it (mw_binds), and the
 * window state is freed only after a grace period, so a snapshot taken
 * under rcu_read_lock() stays usable until the reader unlocks.
 */
#include "proto/access.h"
#include "sroce.h"

/* What a bind may grant; LOCAL_WRITE is meaningless for a window and ignored. */
#define SROCE_MW_ACCESS (IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_WRITE | \
			 IB_ACCESS_REMOTE_ATOMIC | IB_ZERO_BASED)

struct sroce_binding {
	u32 key;			/* the rkey the window answers to */
	bool bound;
	u32 qpn;			/* type 2: the QP it is bound to */
	struct sroce_mr *mr;		/* while bound: holds a bind reference */
	u64 iova;			/* first byte as peers address it */
	u64 mr_va;			/* the same byte in the MR's addresses */
	u64 length;
	int access;			/* IB_ACCESS_REMOTE_* */
};

struct sroce_window {
	seqlock_t lock;			/* b and dead, against readers */
	struct sroce_binding b;
	bool dead;			/* deallocated: no more binds */
	enum ib_mw_type type;
	struct ib_pd *pd;
	u32 index;			/* in the key table */
	struct rcu_head rcu;
};

/* The window named by @key's index bits, or NULL.  Under rcu_read_lock(). */
static struct sroce_window *window_lookup(struct sroce_dev *sdev, u32 key)
{
	void *entry = xa_load(&sdev->mrs, key >> 8);

	if (xa_pointer_tag(entry) != SROCE_KEY_TAG_MW)
		return NULL;
	return xa_untag_pointer(entry);
}

static struct sroce_binding window_snapshot(struct sroce_window *win)
{
	struct sroce_binding b;
	unsigned int seq;

	do {
		seq = read_seqbegin(&win->lock);
		b = win->b;
	} while (read_seqretry(&win->lock, seq));
	return b;
}

/* Drops the binding, keeping the key.  Caller holds win->lock. */
static void window_unbind(struct sroce_window *win)
{
	if (win->b.bound)
		atomic_dec(&win->b.mr->mw_binds);
	win->b.bound = false;
	win->b.mr = NULL;
}

int sroce_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(ibmw->device);
	struct sroce_window *win;
	void *old;
	int err;

	/* ib_uverbs checks the type too; kernel callers get the same answer. */
	if (ibmw->type != IB_MW_TYPE_1 && ibmw->type != IB_MW_TYPE_2)
		return -EINVAL;
	if (atomic_inc_return(&sdev->num_mw) > SROCE_MAX_MW) {
		err = -ENOMEM;
		goto err_count;
	}
	win = kzalloc(sizeof(*win), GFP_KERNEL);
	if (!win) {
		err = -ENOMEM;
		goto err_count;
	}
	seqlock_init(&win->lock);
	win->type = ibmw->type;
	win->pd = ibmw->pd;
	err = sroce_key_reserve(sdev, &win->index);
	if (err)
		goto err_free;
	win->b.key = sroce_new_key(win->index);
	ibmw->rkey = win->b.key;
	to_smw(ibmw)->win = win;

	/* The slot is reserved, so this stores without allocating. */
	old = xa_store(&sdev->mrs, win->index,
		       xa_tag_pointer(win, SROCE_KEY_TAG_MW), GFP_KERNEL);
	if (xa_is_err(old)) {
		xa_erase(&sdev->mrs, win->index);
		err = xa_err(old);
		goto err_free;
	}
	return 0;

err_free:
	kfree(win);
err_count:
	atomic_dec(&sdev->num_mw);
	return err;
}

int sroce_dealloc_mw(struct ib_mw *ibmw)
{
	struct sroce_dev *sdev = to_sdev(ibmw->device);
	struct sroce_window *win = to_smw(ibmw)->win;

	xa_erase(&sdev->mrs, win->index);
	/* A bind that found the window before the erase sees it dead. */
	write_seqlock_bh(&win->lock);
	window_unbind(win);
	win->dead = true;
	write_sequnlock_bh(&win->lock);
	kfree_rcu(win, rcu);
	atomic_dec(&sdev->num_mw);
	return 0;
}

/*
 * The checks of a bind that do not depend on the window's state: the MR
 * named by the WQE, its PD, MW_BIND right, range and, for windows that
 * let peers write, its own local write right.  Fills @nb.  Under
 * rcu_read_lock().
 */
static bool bind_target_ok(struct sroce_qp *qp, struct sroce_window *win,
			   const struct sroce_send_wqe *wqe,
			   struct sroce_binding *nb)
{
	u64 addr = wqe->wr.bind.addr, length = wqe->wr.bind.length;
	int access = wqe->wr.bind.access;
	struct sroce_mr *mr;

	memset(nb, 0, sizeof(*nb));
	nb->key = wqe->wr.bind.mw_rkey;
	if (win->type == IB_MW_TYPE_2)
		nb->qpn = qp->ib.qp_num;
	if (!length)
		return win->type == IB_MW_TYPE_1;	/* type 1: unbind */

	mr = sroce_mr_lookup(qp->sdev, wqe->wr.bind.mr_lkey);
	if (!mr || sroce_mr_check(mr, win->pd, addr, length, IB_ACCESS_MW_BIND))
		return false;
	if ((access & (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC)) &&
	    !(READ_ONCE(mr->access) & IB_ACCESS_LOCAL_WRITE))
		return false;
	nb->bound = true;
	nb->mr = mr;
	nb->iova = (access & IB_ZERO_BASED) ? 0 : addr;
	nb->mr_va = addr;
	nb->length = length;
	nb->access = access & ~IB_ZERO_BASED;
	return true;
}

u8 sroce_mw_bind(struct sroce_qp *qp, const struct sroce_send_wqe *wqe)
{
	struct sroce_window *win;
	struct sroce_binding nb;
	u8 status = IB_WC_MW_BIND_ERR;

	if (wqe->wr.bind.access & ~(SROCE_MW_ACCESS | IB_ACCESS_LOCAL_WRITE))
		return status;
	rcu_read_lock();
	win = window_lookup(qp->sdev, wqe->wr.bind.mw_rkey);
	/* A window is bound through a QP of its own PD (both types). */
	if (!win || win->pd != qp->ib.pd || !bind_target_ok(qp, win, wqe, &nb))
		goto out;

	write_seqlock_bh(&win->lock);
	if (!win->dead &&
	    !(win->type == IB_MW_TYPE_2 && win->b.bound) &&
	    (!nb.bound || sroce_mr_get_bind(nb.mr))) {
		window_unbind(win);
		win->b = nb;
		status = IB_WC_SUCCESS;
	}
	write_sequnlock_bh(&win->lock);
out:
	rcu_read_unlock();
	return status;
}

/* @pd: the PD of the QP or, at an XRC target, of the SRQ the SEND is for. */
int sroce_key_invalidate(struct sroce_qp *qp, struct ib_pd *pd, u32 key,
			 bool remote)
{
	struct sroce_window *win;
	int err = -EINVAL;

	rcu_read_lock();
	win = window_lookup(qp->sdev, key);
	if (!win) {
		rcu_read_unlock();
		return sroce_mr_invalidate(qp->sdev, pd, key);
	}
	write_seqlock_bh(&win->lock);
	/*
	 * Type 1 windows are only unbound by a zero-length bind.  A type 2
	 * window can be invalidated locally through any QP of its PD, and
	 * remotely only by a SEND_WITH_INV arriving at the QP it is bound to.
	 */
	if (win->type == IB_MW_TYPE_2 && win->b.key == key &&
	    win->pd == pd &&
	    (!remote || !win->b.bound || win->b.qpn == qp->ib.qp_num)) {
		window_unbind(win);
		err = 0;
	}
	write_sequnlock_bh(&win->lock);
	rcu_read_unlock();
	return err;
}

bool sroce_rkey_lookup(struct sroce_qp *qp, u32 rkey,
		       struct sroce_rkey_target *t)
{
	void *entry = xa_load(&qp->sdev->mrs, rkey >> 8);
	struct sroce_mr *mr = sroce_key_entry_mr(entry);
	struct sroce_binding b;

	if (mr) {
		if (READ_ONCE(mr->key) != rkey)
			return false;
		*t = (struct sroce_rkey_target){ .mr = mr };
		sroce_mr_desc(mr, &t->desc);
		return true;
	}
	if (xa_pointer_tag(entry) != SROCE_KEY_TAG_MW)
		return false;
	t->win = xa_untag_pointer(entry);
	b = window_snapshot(t->win);
	if (b.key != rkey)
		return false;
	t->desc = (struct roce_mr_desc){
		.iova = b.iova,
		.length = b.length,
		.access = b.access,
		.pd = t->win->pd,
		.valid = b.bound,
	};
	t->mr = b.mr;
	t->mr_va = b.mr_va;
	t->qpn = b.qpn;
	return true;
}

enum roce_access_verdict sroce_rkey_translate(struct sroce_qp *qp,
					      const struct sroce_rkey_target *t,
					      u64 va, u64 len, u64 *mr_va)
{
	if (!t->win) {
		*mr_va = va;
		return ROCE_ACCESS_OK;
	}
	/*
	 * Type 2: QPNs are allocated cyclically over 2^24, so a destroyed
	 * QP's number names no other QP until that many more were made.
	 */
	if (t->win->type == IB_MW_TYPE_2 && t->qpn != qp->ib.qp_num)
		return ROCE_ACCESS_NO_RIGHT;
	*mr_va = t->mr_va + (va - t->desc.iova);
	/* The MR's own checks: a fast-registered one may be invalid now. */
	if (sroce_mr_check(t->mr, t->win->pd, *mr_va, len, 0))
		return ROCE_ACCESS_INVALID;
	return ROCE_ACCESS_OK;
}

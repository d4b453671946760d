/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Queue pairs (qp.c) and the transport engine (req.c, resp.c, comp.c,
 * mcast.c): the kernel copy of a send WQE, the handle the receive path
 * finds a QP by, and struct sroce_qp.
 */
#ifndef SROCE_QP_H
#define SROCE_QP_H

#include <linux/completion.h>
#include <linux/hrtimer.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/refcount.h>
#include <linux/spinlock.h>
#include <linux/timer.h>
#include <net/dst_cache.h>
#include <rdma/ib_verbs.h>

#include "../include/uapi/sroce-abi.h"
#include "ah.h"
#include "cc.h"
#include "dev.h"
#include "mr.h"
#include "ring.h"
#include "rq.h"
#include "sched.h"
#include "proto/rdres.h"
#include "proto/respseq.h"
#include "proto/sqtrack.h"
#include "proto/window.h"
#include "proto/wire.h"

struct sk_buff;
struct sroce_cq;

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

/*
 * The send queue's state (qp->req): the requester (req.c), which fetches
 * WQEs and sends them, and the completer (comp.c), which retires them as
 * responses and ACKs come back.  They share the queue's indices, so one
 * lock covers both; the completer's fields are a section here rather
 * than a sub-struct of their own.
 *
 * @lock is taken by the send engine, in whichever context runs it (the
 * doorbell's post_send, the QP's work item, the send-queue poller's
 * thread, or the receive softirq after an ACK: sched.c); by the
 * completer in the receive softirq; by the local ACK timer (timer
 * softirq) and the RNR timer (soft hrtimer); and by verbs in process
 * context: modify_qp and RESET (qp.c), and post_send of a kernel QP,
 * which takes it with irqsave (kernel consumers post with interrupts
 * off).  Everywhere else with _bh.  modify_qp takes resp.lock inside it.
 *
 * Read without it, as hints, with READ_ONCE: fetch by the send-queue
 * poller (doorbell.c), psn and comp_psn by sched.c (may the engine move
 * to another CPU), timeouts_in_row by sroce_retrans_timeout_ns().
 */
struct sroce_qp_req {
	spinlock_t lock;		/* this struct, as said above */
	u32 sq_prod;			/* kernel QPs: producer */
	u32 fetch;			/* next slot to copy in from the ring */
	u32 retire;			/* oldest slot not completed */

	/* requester */
	u32 cur;			/* slot being sent */
	u32 offset;			/* bytes of it already sent */
	u32 psn;			/* next PSN to send */
	u32 sent_end;			/* one past the highest PSN ever sent */
	u32 rd_atomic_outstanding;
	unsigned long need_retransmit;	/* bit 0: rewind to comp_psn */

	/* completer */
	u32 comp_psn;			/* oldest PSN not acknowledged */
	bool gap_asked;			/* a READ gap at comp_psn was asked for */
	u8 retry_left;
	u8 rnr_retry_left;
	u8 timeouts_in_row;		/* since comp_psn last moved: back-off */
	bool rnr_wait;			/* paused by an RNR NAK */
	bool rnr_naked;			/* RNR NAK at comp_psn, no ACK since */
	struct roce_window window;	/* RC: PSNs that may be unACKed */
	struct sroce_mr_cache mr_cache;	/* the send WQEs' lkeys */
};

/*
 * The responder's state (qp->resp, resp.c): the request being received
 * and the READs and atomics accepted.
 *
 * @lock is taken by the receive path in softirq (sroce_resp_recv); by
 * the send engine, in whichever context runs it, to send READ responses
 * (sroce_resp_send_reads) and to flush the receive WQE of a failed QP
 * (sroce_resp_flush_rwqe); by ackq.c's tasklet to send an ACK it held
 * back (sroce_resp_ack_flush); and by verbs in process context:
 * modify_qp, inside req.lock, and RESET (qp.c).  Always with bottom
 * halves off.
 */
struct sroce_qp_resp {
	spinlock_t lock;		/* this struct, as said above */
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
	struct sroce_mr_cache mr_cache;	/* the receive WQEs' lkeys */
	u64 write_va;			/* WRITE in progress */
	u32 write_rkey;
	u32 write_resid;
	u32 write_len;			/* its RETH length: the byte_len of a
					 * WRITE with immediate's receive
					 */
	struct roce_rd_ring rd_res;	/* RC: READs and atomics accepted */
	bool reads_queued;		/* a READ response may be unsent: read
					 * without resp.lock by the engine
					 */
	/* Requests that arrived behind an unsent READ response, in order
	 * (resp_read.c), and the memory their skbs take (truesize).
	 */
	struct sk_buff_head held;
	u32 held_bytes;
	/* An ACK held back until the receive batch ends (ackq.c) */
	bool ack_pending;		/* ... for ack_psn and ack_msn */
	bool ack_queued;		/* on a CPU's list, holding a reference */
	u32 ack_psn;
	u32 ack_msn;
	struct list_head ack_node;	/* that list's, on its CPU alone */
};

struct sroce_qp {
	struct ib_qp ib;
	struct sroce_dev *sdev;
	struct sroce_qp_handle *handle;
	struct completion freed;	/* the handle's last reference dropped */

	/*
	 * --- attributes ---------------------------------------------------
	 * Set by modify_qp, under modify_lock throughout: state (and the
	 * start of sq_draining) under state_lock, which the data path reads
	 * with READ_ONCE; the rest by sroce_apply_attrs() with req.lock and
	 * resp.lock both held, so a reader holding either sees them whole.
	 */
	struct mutex modify_lock;	/* serialises verbs on the QP */
	spinlock_t state_lock;		/* state vs the data path */
	enum ib_qp_state state;
	bool sq_draining;		/* in SQD, not yet drained (req.c); the
					 * engine clears it under req.lock
					 */
	bool sqd_notify;		/* raise IB_EVENT_SQ_DRAINED then */
	bool last_wqe_due;		/* SRQ: in ERR, Last WQE Reached not
					 * raised yet (sroce_qp_last_wqe())
					 */
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
	struct sroce_av av;		/* RC/UC: the peer */
	struct dst_cache dst_cache;	/* RC/UC: the route to av */
	u16 sport;			/* UDP source port: constant per QP */
	u32 sq_psn;
	u32 rq_psn;

	/* --- set at create, read-only after ------------------------------ */
	bool user;
	bool sig_all;
	struct sroce_cq *scq;
	struct sroce_ring sq;		/* user: the shared ring; kernel: unused */
	struct sroce_sq_marks *sq_marks; /* user: its context's mark page */
	u32 sq_mark;			/* there, or SROCE_SQ_NO_MARK */
	u32 max_send_sge;
	u32 max_inline;
	u8 *shadow;			/* sroce_swqe per slot */
	u32 shadow_size;		/* bytes per shadow slot */
	u32 sq_slots;
	u32 sq_max_wr;			/* reported: sroce_wq_max_wr() */
	u32 sq_mask;
	struct sroce_cq *rcq;
	struct sroce_srq *srq;
	struct ib_xrcd *xrcd;		/* XRC target: the domain of its SRQs */

	/* --- send queue: requester and completer, under req.lock --------- */
	struct sroce_qp_req req;
	struct sroce_qp_cc cc;		/* its own lock (cc.h) */

	/* --- transmit scheduler: send right, CPU, timers (sched.c) -------- */
	struct sroce_sched sched;

	/* --- receive side ------------------------------------------------ */
	struct sroce_rq rq;		/* unused with an SRQ, and by XRC; its
					 * own lock (rq.h)
					 */
	struct sroce_qp_resp resp;	/* the responder, under resp.lock */
	struct list_head mcast;		/* sroce_mcast_member, groups joined (UD):
					 * under mcast.c's sroce_mcast_lock
					 */
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

/* UD and the GSI QP: one packet a message, an address in every WQE. */
static inline bool sroce_qp_ud(const struct sroce_qp *qp)
{
	return qp->ib.qp_type == IB_QPT_UD || qp->ib.qp_type == IB_QPT_GSI;
}

/* Work requests that execute locally, without going to the wire. */
static inline bool sroce_wr_is_local(u32 opcode)
{
	return opcode == IB_WR_LOCAL_INV || opcode == IB_WR_REG_MR ||
	       opcode == IB_WR_BIND_MW;
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

/*
 * Send WQE @s's scatter list, with the send queue's MR cache: what the
 * requester sends from and the completer lands READ responses and
 * atomic results in.  Under req.lock.
 */
static inline struct sroce_sgl sroce_swqe_sgl(struct sroce_qp *qp,
					      const struct sroce_swqe *s)
{
	return (struct sroce_sgl){
		.sdev = qp->sdev,
		.pd = qp->ib.pd,
		.sge = s->sge,
		.num_sge = s->wqe.num_sge,
		.cache = &qp->req.mr_cache,
	};
}

/* The send queue's messages, as proto/sqtrack.h sees them.  Under req.lock. */
static inline struct roce_sq_view sroce_sq_view(struct sroce_qp *qp)
{
	return (struct roce_sq_view){
		.base = qp->shadow,
		.stride = qp->shadow_size,
		.off = offsetof(struct sroce_swqe, msg),
		.mask = qp->sq_mask,
		.retire = qp->req.retire,
		.fetch = qp->req.fetch,
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
struct sroce_qp *sroce_qp_lookup(struct xarray *xa, unsigned long index);
void sroce_qp_put(struct sroce_qp *qp);
/* sroce_qp_error()'s @event when an error completion says it all. */
#define SROCE_QP_NO_EVENT	(-1)
/* Moves the QP to the error state (flushing) from any context. */
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
/* post.c: copies new user WQEs into the shadow.  Caller holds req.lock. */
int sroce_sq_fetch(struct sroce_qp *qp, u32 max);
/* resp_read.c: READ responses, and the requests held behind them, sent
 * and carried out from the send work within *budget
 */
bool sroce_resp_send_reads(struct sroce_qp *qp, int *budget);
void sroce_resp_drop_held(struct sroce_qp *qp);
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
void sroce_qp_last_wqe(struct sroce_qp *qp);

#endif /* SROCE_QP_H */

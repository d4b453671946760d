/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause */
/*
 * sroce user/kernel ABI: the one header both the kernel module and the
 * rdma-core provider compile.  Everything here crosses the uverbs boundary
 * or lives in memory shared by mmap, so every layout is fixed-size and
 * pinned with static assertions.  Bump SROCE_UVERBS_ABI_VERSION on any change.
 */
#ifndef SROCE_ABI_H
#define SROCE_ABI_H

#include <linux/types.h>

#ifdef __cplusplus
#define SROCE_STATIC_ASSERT(c, m) static_assert(c, m)
#else
#define SROCE_STATIC_ASSERT(c, m) _Static_assert(c, m)
#endif
/* Where a field sits: pinned for everything in shared memory, not only the
 * sizes (a reordering that keeps a size would otherwise pass).
 */
#define SROCE_ASSERT_OFFSET(type, field, off)					\
	SROCE_STATIC_ASSERT(__builtin_offsetof(struct type, field) == (off),	\
			    #type "." #field " offset")

/* uverbs ABI version: the provider accepts exactly this one. */
#define SROCE_UVERBS_ABI_VERSION 4	/* 3: XRC; 4: the SQ mark page */

/*
 * Device matching: the kernel exposes this sysfs attribute on every sroce
 * ib_device; the provider claims a device only if the attribute reads back
 * SROCE_ABI_ID.  Unlike a name prefix, it survives `rdma dev set ... name`.
 */
#define SROCE_ABI_SYSFS_ATTR "sroce_abi"
#define SROCE_ABI_ID "sroce-1"

/* RDMA link type for `rdma link add NAME type sroce netdev DEV`. */
#define SROCE_LINK_TYPE "sroce"

/* ALLOC_UCONTEXT response payload (after ib_uverbs_get_context_resp). */
struct sroce_alloc_ucontext_resp {
	__u32 abi_version;	/* SROCE_UVERBS_ABI_VERSION */
	__u32 reserved;
	/* The context's SQ mark page (below); length 0: it has none */
	__aligned_u64 sq_marks_offset;	/* for mmap() on the uverbs fd */
	__u32 sq_marks_length;
	__u32 reserved2;
};

SROCE_STATIC_ASSERT(sizeof(struct sroce_alloc_ucontext_resp) == 24,
		    "sroce_alloc_ucontext_resp layout");
SROCE_ASSERT_OFFSET(sroce_alloc_ucontext_resp, sq_marks_offset, 8);
SROCE_ASSERT_OFFSET(sroce_alloc_ucontext_resp, sq_marks_length, 16);

/*
 * Shared rings.
 *
 * Send queue, receive queue, SRQ and CQ are rings in memory shared between
 * the kernel and the process by mmap.  A mapping is the control block below
 * followed, at SROCE_RING_SLOTS_OFFSET, by num_slots slots of slot_size
 * bytes (both powers of two).  Indices are free-running 32-bit counters;
 * slot = index & (num_slots - 1).  Each index has one writer, which
 * publishes it with a release store after filling the slots; the reader
 * loads it with acquire.  The kernel trusts nothing in this memory: it
 * keeps its own copy of every index it owns, checks every index it reads
 * (producer - consumer <= num_slots) and copies a WQE out before it looks
 * at it.
 */
/* Where a ring is and how it is cut. */
struct sroce_ring_info {
	__aligned_u64 mmap_offset;	/* for mmap() on the uverbs fd */
	__u32 mmap_length;
	__u32 num_slots;
	__u32 slot_size;
	__u32 reserved;
};

SROCE_STATIC_ASSERT(sizeof(struct sroce_ring_info) == 24, "sroce_ring_info layout");

struct sroce_ring_ctrl {
	__u32 producer;		/* written by the producer only */
	/*
	 * CQ: the producer index just past the newest solicited or error
	 * completion, what an arm for solicited completions waits for;
	 * written by the kernel before the producer, never more than the
	 * ring's length behind it (0 from a module that does not keep it).
	 */
	__u32 solicited_end;
	__u32 pad0[14];
	__u32 consumer;		/* written by the consumer only */
	__u32 pad1[15];
	__u32 notify;		/* SQ: SROCE_SQ_* (kernel); CQ: SROCE_CQ_* (user) */
	__u32 pad2;
	/*
	 * SRQ resize (ibv_modify_srq with IBV_SRQ_MAX_WR): before it switches
	 * rings the kernel describes the new one here, in the old ring, which
	 * the process still maps; the process reads it once the command has
	 * succeeded.  So the kernel never writes through a user pointer.
	 */
	struct sroce_ring_info resized;
	__u32 pad3[8];
};

SROCE_STATIC_ASSERT(sizeof(struct sroce_ring_ctrl) == 192, "sroce_ring_ctrl layout");
SROCE_ASSERT_OFFSET(sroce_ring_ctrl, producer, 0);
SROCE_ASSERT_OFFSET(sroce_ring_ctrl, solicited_end, 4);
SROCE_ASSERT_OFFSET(sroce_ring_ctrl, consumer, 64);
SROCE_ASSERT_OFFSET(sroce_ring_ctrl, notify, 128);
SROCE_ASSERT_OFFSET(sroce_ring_ctrl, resized, 136);

#define SROCE_RING_SLOTS_OFFSET 256

/*
 * SQ notify: set by the kernel, just before its send engine goes idle, to
 * ask for a doorbell (ibv_post_send's uverbs POST_SEND write with no work
 * requests).  While it is clear the kernel is still draining the ring and
 * will see new work without one.
 */
#define SROCE_SQ_NEED_DOORBELL	(1u << 0)
/*
 * SQ notify, instead of NEED_DOORBELL for a QP with a mark (create_qp's
 * sq_mark): the engine is idle, and the kernel's send-queue poller may be
 * reading the context's mark page.  The process sets the QP's bit in the
 * page (an atomic OR), issues a full fence, and rings the doorbell only if
 * the page's `watching` word is 0.  The kernel clears `watching`, issues
 * smp_mb() and takes every mark once more before it stops reading: so a
 * post either rings or is seen, as with NEED_DOORBELL.
 */
#define SROCE_SQ_MARKED		(1u << 1)

/*
 * The SQ mark page: one per context, mapped read-write by the process.
 * One thread can watch thousands of send queues through it, one bit per
 * QP, where it could look at only a few of their rings in turn.  Marks
 * are hints: the kernel takes a mark of a QP it does not know, or of one
 * with nothing posted, as no work, and reads `watching` never.
 */
#define SROCE_SQ_MARK_PAGE_SIZE	4096
#define SROCE_SQ_MARK_WORDS	((SROCE_SQ_MARK_PAGE_SIZE - 64) / 8)
#define SROCE_SQ_MARKS		(SROCE_SQ_MARK_WORDS * 64)	/* 32256 */
#define SROCE_SQ_NO_MARK	0xffffffffu

struct sroce_sq_mark_page {
	__u32 watching;		/* kernel: nonzero while the poller reads marks */
	__u32 pad[15];
	/* Mark m is bit m % 64 of word m / 64: its QP posted since the
	 * poller last took the word (an atomic exchange with 0).
	 */
	__aligned_u64 marks[SROCE_SQ_MARK_WORDS];
};

SROCE_STATIC_ASSERT(sizeof(struct sroce_sq_mark_page) == SROCE_SQ_MARK_PAGE_SIZE,
		    "sroce_sq_mark_page layout");
SROCE_ASSERT_OFFSET(sroce_sq_mark_page, marks, 64);

/*
 * RQ notify: set by the kernel once the QP is in the error state.  Receives
 * posted after that must be completed with flush errors, which only the
 * kernel can do, so the process then rings the QP's doorbell after a
 * post_recv (the same POST_SEND write).  Never set on a healthy QP.
 * Ordering as for the SQ: the process issues a full fence between its
 * producer store and reading the flag; the kernel sets the flag and
 * issues smp_mb() before it drains, so a receive posted meanwhile is
 * either drained or rings.
 */
#define SROCE_RQ_NEED_DOORBELL	(1u << 0)

/*
 * CQ notify: ibv_req_notify_cq without a system call.  The process ORs in
 * an arm flag (atomically); the kernel clears the word when it raises the
 * completion event.
 */
#define SROCE_CQ_ARM_NEXT	(1u << 0)	/* any next completion */
#define SROCE_CQ_ARM_SOLICITED	(1u << 1)	/* next solicited or error completion */

struct sroce_sge {
	__aligned_u64 addr;
	__u32 length;
	__u32 lkey;
};

SROCE_STATIC_ASSERT(sizeof(struct sroce_sge) == 16, "sroce_sge layout");

/*
 * WQE opcodes: the values of libibverbs' enum ibv_wr_opcode, which are
 * the kernel's IB_WR_* for the same operations (both sides assert it).
 */
#define SROCE_WR_RDMA_WRITE		0
#define SROCE_WR_RDMA_WRITE_WITH_IMM	1
#define SROCE_WR_SEND			2
#define SROCE_WR_SEND_WITH_IMM		3
#define SROCE_WR_RDMA_READ		4
#define SROCE_WR_ATOMIC_CMP_AND_SWP	5
#define SROCE_WR_ATOMIC_FETCH_AND_ADD	6
#define SROCE_WR_LOCAL_INV		7
#define SROCE_WR_BIND_MW		8
#define SROCE_WR_SEND_WITH_INV		9
/*
 * RDMA ATOMIC WRITE (IBTA 1.5, libibverbs' IBV_WR_ATOMIC_WRITE): the
 * 8 bytes in wr.atomic.compare_add, as the caller gave them (they land in
 * the peer's memory byte for byte), at wr.atomic.remote_addr/rkey.  No
 * SGEs, no inline data.
 */
#define SROCE_WR_ATOMIC_WRITE		15
/*
 * RDMA FLUSH (IBTA 1.5, libibverbs' IBV_WR_FLUSH): makes the peer's
 * earlier writes to wr.flush's range (or to the whole MR its rkey names)
 * globally visible or persistent.  No SGEs, no inline data.
 */
#define SROCE_WR_FLUSH			14
/* wr.flush.type bits and wr.flush.level values: libibverbs' values. */
#define SROCE_FLUSH_GLOBAL		(1u << 0)
#define SROCE_FLUSH_PERSISTENT		(1u << 1)
#define SROCE_FLUSH_RANGE		0
#define SROCE_FLUSH_MR			1

/*
 * Which opcodes each QP type takes, one bit per opcode above: the one
 * policy the kernel enforces and the provider offers (as ibv_wr_opcode
 * values, and as the IBV_QP_EX_WITH_* bits, which use the same positions
 * up to SEND_WITH_INV; ATOMIC WRITE's and FLUSH's are their own
 * IBV_QP_EX_WITH_ bits).
 * As rxe: local invalidation on RC only, windows on RC and UC, READ and
 * atomics on RC, UD sends only.  XRC send QPs take RC's operations but
 * ATOMIC WRITE and FLUSH (which have no XRC opcodes here).
 */
#define SROCE_WR_BIT(op)	(1u << (op))
#define SROCE_UD_WR_OPCODES	(SROCE_WR_BIT(SROCE_WR_SEND) |			\
				 SROCE_WR_BIT(SROCE_WR_SEND_WITH_IMM))
#define SROCE_UC_WR_OPCODES	(SROCE_UD_WR_OPCODES |				\
				 SROCE_WR_BIT(SROCE_WR_SEND_WITH_INV) |		\
				 SROCE_WR_BIT(SROCE_WR_RDMA_WRITE) |		\
				 SROCE_WR_BIT(SROCE_WR_RDMA_WRITE_WITH_IMM) |	\
				 SROCE_WR_BIT(SROCE_WR_BIND_MW))
#define SROCE_RC_WR_OPCODES	(SROCE_UC_WR_OPCODES |				\
				 SROCE_WR_BIT(SROCE_WR_RDMA_READ) |		\
				 SROCE_WR_BIT(SROCE_WR_ATOMIC_CMP_AND_SWP) |	\
				 SROCE_WR_BIT(SROCE_WR_ATOMIC_FETCH_AND_ADD) |	\
				 SROCE_WR_BIT(SROCE_WR_LOCAL_INV) |		\
				 SROCE_WR_BIT(SROCE_WR_ATOMIC_WRITE) |		\
				 SROCE_WR_BIT(SROCE_WR_FLUSH))
#define SROCE_XRC_WR_OPCODES	(SROCE_RC_WR_OPCODES &				\
				 ~(SROCE_WR_BIT(SROCE_WR_ATOMIC_WRITE) |	\
				   SROCE_WR_BIT(SROCE_WR_FLUSH)))

/* WQE send_flags: libibverbs' ibv_send_flags, the kernel's IB_SEND_*. */
#define SROCE_SEND_FENCE	(1u << 0)
#define SROCE_SEND_SIGNALED	(1u << 1)
#define SROCE_SEND_SOLICITED	(1u << 2)
#define SROCE_SEND_INLINE	(1u << 3)

/* Bind access: libibverbs' ibv_access_flags, the kernel's IB_ACCESS_*. */
#define SROCE_ACCESS_REMOTE_WRITE	(1u << 1)
#define SROCE_ACCESS_REMOTE_READ	(1u << 2)
#define SROCE_ACCESS_REMOTE_ATOMIC	(1u << 3)
#define SROCE_ACCESS_ZERO_BASED		(1u << 5)

/* Send queue slot: this header, then num_sge sroce_sge or inline_len
 * bytes of inline data.
 */
struct sroce_send_wqe {
	__aligned_u64 wr_id;
	__u32 opcode;		/* SROCE_WR_* (enum ibv_wr_opcode) */
	__u32 send_flags;	/* SROCE_SEND_* */
	__u32 num_sge;
	__u32 inline_len;	/* bytes of inline data when IBV_SEND_INLINE */
	__u32 imm_data;		/* big-endian immediate, or rkey to invalidate */
	__u32 xrc_srqn;		/* XRC send QPs: the remote XRC SRQ; else ignored */
	union {
		struct {
			__aligned_u64 remote_addr;
			__u32 rkey;
			__u32 reserved;
		} rdma;
		struct {
			__aligned_u64 remote_addr;
			__aligned_u64 compare_add;
			__aligned_u64 swap;
			__u32 rkey;
			__u32 reserved;
		} atomic;
		/*
		 * IBV_WR_BIND_MW, for both window types (ibv_bind_mw posts
		 * one too).  The kernel finds the window by mw_rkey's index
		 * bits and checks everything else when the WQE executes.
		 */
		struct {
			__aligned_u64 addr;	/* first byte, in the MR's addresses */
			__aligned_u64 length;	/* 0: unbind (type 1 only) */
			__u32 mr_lkey;		/* ignored when length is 0 */
			__u32 mw_rkey;		/* the window's new rkey */
			__u32 access;		/* SROCE_ACCESS_* */
			__u32 reserved;
		} bind;
		struct {
			__aligned_u64 remote_addr;
			__u32 rkey;
			__u32 length;	/* of the range; ignored for the MR */
			__u8 type;	/* SROCE_FLUSH_GLOBAL | _PERSISTENT */
			__u8 level;	/* SROCE_FLUSH_RANGE or SROCE_FLUSH_MR */
			__u8 reserved[6];
		} flush;
		struct {
			__u32 ah_num;	/* from the create_ah response */
			__u32 remote_qpn;
			__u32 remote_qkey;
			__u32 reserved;
		} ud;
	} wr;
};

SROCE_STATIC_ASSERT(sizeof(struct sroce_send_wqe) == 64, "sroce_send_wqe layout");
SROCE_ASSERT_OFFSET(sroce_send_wqe, wr_id, 0);
SROCE_ASSERT_OFFSET(sroce_send_wqe, opcode, 8);
SROCE_ASSERT_OFFSET(sroce_send_wqe, send_flags, 12);
SROCE_ASSERT_OFFSET(sroce_send_wqe, num_sge, 16);
SROCE_ASSERT_OFFSET(sroce_send_wqe, inline_len, 20);
SROCE_ASSERT_OFFSET(sroce_send_wqe, imm_data, 24);
SROCE_ASSERT_OFFSET(sroce_send_wqe, xrc_srqn, 28);
SROCE_ASSERT_OFFSET(sroce_send_wqe, wr.rdma.remote_addr, 32);
SROCE_ASSERT_OFFSET(sroce_send_wqe, wr.rdma.rkey, 40);
SROCE_ASSERT_OFFSET(sroce_send_wqe, wr.atomic.compare_add, 40);
SROCE_ASSERT_OFFSET(sroce_send_wqe, wr.atomic.swap, 48);
SROCE_ASSERT_OFFSET(sroce_send_wqe, wr.atomic.rkey, 56);
SROCE_ASSERT_OFFSET(sroce_send_wqe, wr.bind.length, 40);
SROCE_ASSERT_OFFSET(sroce_send_wqe, wr.bind.mr_lkey, 48);
SROCE_ASSERT_OFFSET(sroce_send_wqe, wr.bind.mw_rkey, 52);
SROCE_ASSERT_OFFSET(sroce_send_wqe, wr.bind.access, 56);
SROCE_ASSERT_OFFSET(sroce_send_wqe, wr.flush.rkey, 40);
SROCE_ASSERT_OFFSET(sroce_send_wqe, wr.flush.length, 44);
SROCE_ASSERT_OFFSET(sroce_send_wqe, wr.flush.type, 48);
SROCE_ASSERT_OFFSET(sroce_send_wqe, wr.flush.level, 49);
SROCE_ASSERT_OFFSET(sroce_send_wqe, wr.ud.ah_num, 32);
SROCE_ASSERT_OFFSET(sroce_send_wqe, wr.ud.remote_qpn, 36);
SROCE_ASSERT_OFFSET(sroce_send_wqe, wr.ud.remote_qkey, 40);

/* Receive queue and SRQ slot: this header, then num_sge sroce_sge. */
struct sroce_recv_wqe {
	__aligned_u64 wr_id;
	__u32 num_sge;
	__u32 reserved;
};

SROCE_STATIC_ASSERT(sizeof(struct sroce_recv_wqe) == 16, "sroce_recv_wqe layout");
SROCE_ASSERT_OFFSET(sroce_recv_wqe, num_sge, 8);
SROCE_ASSERT_OFFSET(sroce_sge, length, 8);
SROCE_ASSERT_OFFSET(sroce_sge, lkey, 12);

/* Completion queue slot; field values use libibverbs' encodings
 * (ibv_wc_status, ibv_wc_opcode, ibv_wc_flags), so polling is a copy.
 */
#define SROCE_WC_FLUSH		8	/* IBV_WC_FLUSH */
#define SROCE_WC_ATOMIC_WRITE	9	/* IBV_WC_ATOMIC_WRITE */
struct sroce_cqe {
	__aligned_u64 wr_id;
	__u32 status;
	__u32 opcode;
	__u32 vendor_err;
	__u32 byte_len;
	__u32 imm_data;		/* big-endian immediate, or invalidated rkey */
	__u32 qp_num;
	__u32 src_qp;
	__u32 wc_flags;
	__u16 pkey_index;
	__u16 slid;
	__u8 sl;
	__u8 dlid_path_bits;
	__u8 reserved[2];
	__aligned_u64 timestamp;	/* ns, CLOCK_MONOTONIC_RAW-like device clock */
	__u32 reserved2[2];
};

SROCE_STATIC_ASSERT(sizeof(struct sroce_cqe) == 64, "sroce_cqe layout");
SROCE_ASSERT_OFFSET(sroce_cqe, status, 8);
SROCE_ASSERT_OFFSET(sroce_cqe, opcode, 12);
SROCE_ASSERT_OFFSET(sroce_cqe, vendor_err, 16);
SROCE_ASSERT_OFFSET(sroce_cqe, byte_len, 20);
SROCE_ASSERT_OFFSET(sroce_cqe, imm_data, 24);
SROCE_ASSERT_OFFSET(sroce_cqe, qp_num, 28);
SROCE_ASSERT_OFFSET(sroce_cqe, src_qp, 32);
SROCE_ASSERT_OFFSET(sroce_cqe, wc_flags, 36);
SROCE_ASSERT_OFFSET(sroce_cqe, pkey_index, 40);
SROCE_ASSERT_OFFSET(sroce_cqe, slid, 42);
SROCE_ASSERT_OFFSET(sroce_cqe, sl, 44);
SROCE_ASSERT_OFFSET(sroce_cqe, dlid_path_bits, 45);
SROCE_ASSERT_OFFSET(sroce_cqe, timestamp, 48);

/* Create responses: where each ring is and how it is cut (sroce_ring_info). */
struct sroce_create_cq_resp {
	struct sroce_ring_info cq;
};

SROCE_STATIC_ASSERT(sizeof(struct sroce_create_cq_resp) == 24, "sroce_create_cq_resp layout");

/*
 * The new ring holds the CQEs that were unread, in order, from its
 * consumer index (the kernel initialises both indices) and the armed state
 * of the old notify word.
 */
struct sroce_resize_cq_resp {
	struct sroce_ring_info cq;
};

SROCE_STATIC_ASSERT(sizeof(struct sroce_resize_cq_resp) == 24, "sroce_resize_cq_resp layout");

/*
 * A ring with mmap_length 0 does not exist: the RQ of a QP that uses an
 * SRQ or of an XRC send QP (or a queue of depth 0).  XRC receive QPs
 * have no rings at all: the kernel owns them (ib_core creates them
 * without driver data) and answers no data for them.  num_slots >= the granted max_*_wr, which
 * the provider enforces as the queue depth.  max_inline_data equals
 * cap.max_inline_data.  Inline WQEs carry num_sge 0.
 */
struct sroce_create_qp_resp {
	struct sroce_ring_info sq;
	struct sroce_ring_info rq;	/* mmap_length 0: no RQ (SRQ, XRC) */
	__u32 max_inline_data;
	__u32 sq_mark;			/* in the context's mark page, or
					 * SROCE_SQ_NO_MARK
					 */
};

SROCE_STATIC_ASSERT(sizeof(struct sroce_create_qp_resp) == 56, "sroce_create_qp_resp layout");

/*
 * Per-QP rate limit (IBV_QP_RATE_LIMIT, ibv_modify_qp_rate_limit): the
 * kernel accepts 0 (no limit of its own) or a rate in this range, in
 * kbit/s, on RTR->RTS and RTS->RTS of RC, UC and UD QPs (a bit per
 * ibv_qp_type in SROCE_QP_RATE_LIMIT_QPTS).  The provider reports the
 * same as packet_pacing_caps: the generic query has no field for them.
 */
#define SROCE_QP_RATE_LIMIT_MIN_KBPS	100u
#define SROCE_QP_RATE_LIMIT_MAX_KBPS	400000000u	/* 400 Gbit/s */
#define SROCE_QP_RATE_LIMIT_QPTS	((1u << 2) | (1u << 3) | (1u << 4))
#define SROCE_QP_MAX_BURST_BYTES	(16u << 20)

/*
 * MODIFY_QP (extended command) payload, optional.  With IBV_QP_RATE_LIMIT:
 * the QP's pacing burst in bytes (ibv_qp_rate_limit_attr.max_burst_sz;
 * 0 = the device's cc/burst_bytes), at most SROCE_QP_MAX_BURST_BYTES.
 */
struct sroce_modify_qp_cmd {
	__u32 max_burst_bytes;
	__u32 reserved;		/* 0 */
};

SROCE_STATIC_ASSERT(sizeof(struct sroce_modify_qp_cmd) == 8, "sroce_modify_qp_cmd layout");

struct sroce_create_srq_resp {
	struct sroce_ring_info rq;
	__u32 srq_num;
	__u32 reserved;
};

SROCE_STATIC_ASSERT(sizeof(struct sroce_create_srq_resp) == 32, "sroce_create_srq_resp layout");

struct sroce_create_ah_resp {
	__u32 ah_num;			/* names the AH in UD send WQEs */
	__u32 reserved;
};

SROCE_STATIC_ASSERT(sizeof(struct sroce_create_ah_resp) == 8, "sroce_create_ah_resp layout");

#endif /* SROCE_ABI_H */

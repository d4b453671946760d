// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The opcode table.  Rows are written as (name, transport, headers, flags);
 * header offsets and total length are derived from the header mask by the
 * macros below at compile time, so a row cannot disagree with itself.
 */
#include "opcode.h"

/* hdrs is a u16 mask and offsets/lengths are u8: keep it that way. */
ROCE_STATIC_ASSERT(ROCE_EXT_COUNT <= 16, "roce_opcode_info.hdrs too narrow");
ROCE_STATIC_ASSERT(ROCE_BTH_LEN + ROCE_DETH_LEN + ROCE_XRCETH_LEN + ROCE_FETH_LEN +
		   ROCE_RETH_LEN + ROCE_ATMETH_LEN + ROCE_AETH_LEN +
		   ROCE_ATMACK_LEN + ROCE_IMM_LEN + ROCE_IETH_LEN +
		   ROCE_CNP_PAD_LEN <= 255, "header length must fit a u8");

/* Size of extension header e if present in mask h, else 0. */
#define SZ(h, e) (((h) & ROCE_HDR_##e) ? ROCE_##e##_LEN : 0)

/* End offset of each header in wire order (== start of the next one). */
#define END_BTH(h) (ROCE_BTH_LEN)
#define END_DETH(h) (END_BTH(h) + SZ(h, DETH))
#define END_XRCETH(h) (END_DETH(h) + SZ(h, XRCETH))
#define END_FETH(h) (END_XRCETH(h) + SZ(h, FETH))
#define END_RETH(h) (END_FETH(h) + SZ(h, RETH))
#define END_ATMETH(h) (END_RETH(h) + SZ(h, ATMETH))
#define END_AETH(h) (END_ATMETH(h) + SZ(h, AETH))
#define END_ATMACK(h) (END_AETH(h) + SZ(h, ATMACK))
#define END_IMM(h) (END_ATMACK(h) + SZ(h, IMM))
#define END_IETH(h) (END_IMM(h) + SZ(h, IETH))
#define END_CNP_PAD(h) (END_IETH(h) + SZ(h, CNP_PAD))

/* Offset of header e: end of the previous header; 0 when absent. */
#define OFF(h, e, prev) (((h) & ROCE_HDR_##e) ? END_##prev(h) : 0)

#define ROW(nm, qp, st, h, fl)						\
	[ROCE_OP_##nm] = {						\
		.name = #nm,						\
		.flags = (fl),						\
		.hdrs = (h),						\
		.qpt = ROCE_QPT_##qp,					\
		.status = ROCE_OPCODE_##st,				\
		.hdr_len = END_CNP_PAD(h),				\
		.off = {						\
			[ROCE_EXT_DETH] = OFF(h, DETH, BTH),		\
			[ROCE_EXT_XRCETH] = OFF(h, XRCETH, DETH),	\
			[ROCE_EXT_FETH] = OFF(h, FETH, XRCETH),		\
			[ROCE_EXT_RETH] = OFF(h, RETH, FETH),		\
			[ROCE_EXT_ATMETH] = OFF(h, ATMETH, RETH),	\
			[ROCE_EXT_AETH] = OFF(h, AETH, ATMETH),		\
			[ROCE_EXT_ATMACK] = OFF(h, ATMACK, AETH),	\
			[ROCE_EXT_IMM] = OFF(h, IMM, ATMACK),		\
			[ROCE_EXT_IETH] = OFF(h, IETH, IMM),		\
			[ROCE_EXT_CNP_PAD] = OFF(h, CNP_PAD, IETH),	\
		},							\
	}

#define OP(nm, qp, h, fl) ROW(nm, qp, SUPPORTED, h, fl)

/* Shorthands for the flag combinations of data-carrying packets. */
#define SND (ROCE_OPF_REQUEST | ROCE_OPF_SEND | ROCE_OPF_PAYLOAD)
#define WR (ROCE_OPF_REQUEST | ROCE_OPF_WRITE | ROCE_OPF_PAYLOAD)
#define RRSP (ROCE_OPF_RESPONSE | ROCE_OPF_READ_RESP | ROCE_OPF_PAYLOAD)
#define LAST_IMM (ROCE_OPF_LAST | ROCE_OPF_IMM)
#define ONLY_IMM (ROCE_OPF_ONLY | ROCE_OPF_IMM)
#define H_IMM ROCE_HDR_IMM
#define H_RETH ROCE_HDR_RETH

/*
 * SEND and WRITE rows are identical for RC, UC and XRC apart from the
 * name and, for XRC, the XRCETH (X) every request carries.
 */
#define SEND_ROWS(T, X)							\
	OP(T##_SEND_FIRST, T, X, SND | ROCE_OPF_FIRST),			\
	OP(T##_SEND_MIDDLE, T, X, SND | ROCE_OPF_MIDDLE),		\
	OP(T##_SEND_LAST, T, X, SND | ROCE_OPF_LAST),			\
	OP(T##_SEND_LAST_IMM, T, X | H_IMM, SND | LAST_IMM),		\
	OP(T##_SEND_ONLY, T, X, SND | ROCE_OPF_ONLY),			\
	OP(T##_SEND_ONLY_IMM, T, X | H_IMM, SND | ONLY_IMM)

#define WRITE_ROWS(T, X)						\
	OP(T##_WRITE_FIRST, T, X | H_RETH, WR | ROCE_OPF_FIRST),	\
	OP(T##_WRITE_MIDDLE, T, X, WR | ROCE_OPF_MIDDLE),		\
	OP(T##_WRITE_LAST, T, X, WR | ROCE_OPF_LAST),			\
	OP(T##_WRITE_LAST_IMM, T, X | H_IMM, WR | LAST_IMM),		\
	OP(T##_WRITE_ONLY, T, X | H_RETH, WR | ROCE_OPF_ONLY),		\
	OP(T##_WRITE_ONLY_IMM, T, X | H_RETH | H_IMM, WR | ONLY_IMM)

/* What RC and XRC share beyond SEND and WRITE: READ, atomics, ACKs. */
#define RELIABLE_ROWS(T, X)						\
	OP(T##_READ_REQ, T, X | ROCE_HDR_RETH,				\
	   ROCE_OPF_REQUEST | ROCE_OPF_READ_REQ | ROCE_OPF_ONLY),	\
	OP(T##_READ_RESP_FIRST, T, ROCE_HDR_AETH, RRSP | ROCE_OPF_FIRST), \
	OP(T##_READ_RESP_MIDDLE, T, 0, RRSP | ROCE_OPF_MIDDLE),		\
	OP(T##_READ_RESP_LAST, T, ROCE_HDR_AETH, RRSP | ROCE_OPF_LAST),	\
	OP(T##_READ_RESP_ONLY, T, ROCE_HDR_AETH, RRSP | ROCE_OPF_ONLY),	\
	OP(T##_ACK, T, ROCE_HDR_AETH,					\
	   ROCE_OPF_RESPONSE | ROCE_OPF_ACK | ROCE_OPF_ONLY),		\
	OP(T##_ATOMIC_ACK, T, ROCE_HDR_AETH | ROCE_HDR_ATMACK,		\
	   ROCE_OPF_RESPONSE | ROCE_OPF_ACK | ROCE_OPF_ATOMIC | ROCE_OPF_ONLY), \
	OP(T##_CMP_SWAP, T, X | ROCE_HDR_ATMETH,			\
	   ROCE_OPF_REQUEST | ROCE_OPF_ATOMIC | ROCE_OPF_ONLY),		\
	OP(T##_FETCH_ADD, T, X | ROCE_HDR_ATMETH,			\
	   ROCE_OPF_REQUEST | ROCE_OPF_ATOMIC | ROCE_OPF_ONLY),		\
	OP(T##_SEND_LAST_INV, T, X | ROCE_HDR_IETH,			\
	   SND | ROCE_OPF_LAST | ROCE_OPF_INV),				\
	OP(T##_SEND_ONLY_INV, T, X | ROCE_HDR_IETH,			\
	   SND | ROCE_OPF_ONLY | ROCE_OPF_INV)

const struct roce_opcode_info roce_opcode_table[256] = {
	SEND_ROWS(RC, 0),
	WRITE_ROWS(RC, 0),
	RELIABLE_ROWS(RC, 0),
	/* IBTA 1.5 memory placement extensions. */
	OP(RC_FLUSH, RC, ROCE_HDR_FETH | ROCE_HDR_RETH,
	   ROCE_OPF_REQUEST | ROCE_OPF_FLUSH | ROCE_OPF_ONLY),
	OP(RC_ATOMIC_WRITE, RC, ROCE_HDR_RETH,
	   ROCE_OPF_REQUEST | ROCE_OPF_ATOMIC_WRITE | ROCE_OPF_ONLY |
	   ROCE_OPF_PAYLOAD),

	SEND_ROWS(UC, 0),
	WRITE_ROWS(UC, 0),

	SEND_ROWS(XRC, ROCE_HDR_XRCETH),
	WRITE_ROWS(XRC, ROCE_HDR_XRCETH),
	RELIABLE_ROWS(XRC, ROCE_HDR_XRCETH),

	OP(UD_SEND_ONLY, UD, ROCE_HDR_DETH, SND | ROCE_OPF_ONLY),
	OP(UD_SEND_ONLY_IMM, UD, ROCE_HDR_DETH | H_IMM, SND | ONLY_IMM),

	/* Sent by the notification point to the data sender; no direction. */
	OP(CNP, CNP, ROCE_HDR_CNP_PAD, ROCE_OPF_CNP),
};

const char *roce_opcode_name(u8 opcode)
{
	const char *name = roce_opcode_table[opcode].name;

	return name ? name : "UNKNOWN";
}

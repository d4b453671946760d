/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Table-driven description of every RoCE v2 BTH opcode.
 *
 * The engine never switches on opcode values: it asks the table which
 * headers follow the BTH, where they sit, and what kind of packet it is.
 * One 256-entry array indexed by the opcode byte makes the lookup O(1)
 * and makes "unknown opcode" just another table row.
 */
#ifndef SROCE_PROTO_OPCODE_H
#define SROCE_PROTO_OPCODE_H

#include "compat.h"

ROCE_EXTERN_C_BEGIN

/* Header sizes on the wire, in bytes. */
#define ROCE_BTH_LEN 12
#define ROCE_DETH_LEN 8
#define ROCE_XRCETH_LEN 4
#define ROCE_FETH_LEN 4
#define ROCE_RETH_LEN 16
#define ROCE_ATMETH_LEN 28
#define ROCE_AETH_LEN 4
#define ROCE_ATMACK_LEN 8
#define ROCE_IMM_LEN 4
#define ROCE_IETH_LEN 4
#define ROCE_CNP_PAD_LEN 16	/* CNP: 16 reserved bytes after the BTH */
#define ROCE_ICRC_LEN 4
/* Longest BTH + extension headers of a supported opcode (XRC CMP_SWAP). */
#define ROCE_MAX_HDR_LEN (ROCE_BTH_LEN + ROCE_XRCETH_LEN + ROCE_ATMETH_LEN)

/*
 * Extension headers in the order they appear on the wire after the BTH.
 * No opcode needs two headers out of this order, so a presence mask plus
 * this order describes every layout.  RDETH (reliable datagram) never
 * occurs in RoCE v2 and is not listed.
 */
enum roce_ext {
	ROCE_EXT_DETH,
	ROCE_EXT_XRCETH,	/* XRC requests: the target's XRC SRQ */
	ROCE_EXT_FETH,
	ROCE_EXT_RETH,
	ROCE_EXT_ATMETH,
	ROCE_EXT_AETH,
	ROCE_EXT_ATMACK,
	ROCE_EXT_IMM,
	ROCE_EXT_IETH,
	ROCE_EXT_CNP_PAD,
	ROCE_EXT_COUNT
};

#define ROCE_HDR_DETH (1u << ROCE_EXT_DETH)
#define ROCE_HDR_XRCETH (1u << ROCE_EXT_XRCETH)
#define ROCE_HDR_FETH (1u << ROCE_EXT_FETH)
#define ROCE_HDR_RETH (1u << ROCE_EXT_RETH)
#define ROCE_HDR_ATMETH (1u << ROCE_EXT_ATMETH)
#define ROCE_HDR_AETH (1u << ROCE_EXT_AETH)
#define ROCE_HDR_ATMACK (1u << ROCE_EXT_ATMACK)
#define ROCE_HDR_IMM (1u << ROCE_EXT_IMM)
#define ROCE_HDR_IETH (1u << ROCE_EXT_IETH)
#define ROCE_HDR_CNP_PAD (1u << ROCE_EXT_CNP_PAD)

/* Transport of an opcode: its top three bits, plus CNP as its own kind. */
enum roce_qpt {
	ROCE_QPT_NONE,
	ROCE_QPT_RC,
	ROCE_QPT_UC,
	ROCE_QPT_UD,
	ROCE_QPT_XRC,
	ROCE_QPT_CNP,
};

enum roce_opcode_status {
	ROCE_OPCODE_UNKNOWN,	 /* reserved or not RoCE v2: drop */
	ROCE_OPCODE_SUPPORTED,
	ROCE_OPCODE_UNSUPPORTED, /* defined by IBTA, not implemented by sroce */
};

/* Direction: who sends it. */
#define ROCE_OPF_REQUEST (1u << 0)	/* requester -> responder */
#define ROCE_OPF_RESPONSE (1u << 1)	/* responder -> requester */
/* Position inside a message; ONLY is FIRST|LAST on purpose. */
#define ROCE_OPF_FIRST (1u << 2)
#define ROCE_OPF_MIDDLE (1u << 3)
#define ROCE_OPF_LAST (1u << 4)
#define ROCE_OPF_ONLY (ROCE_OPF_FIRST | ROCE_OPF_LAST)
/* Kind.  ATOMIC_ACKNOWLEDGE is ACK|ATOMIC. */
#define ROCE_OPF_SEND (1u << 5)
#define ROCE_OPF_WRITE (1u << 6)
#define ROCE_OPF_READ_REQ (1u << 7)
#define ROCE_OPF_READ_RESP (1u << 8)
#define ROCE_OPF_ATOMIC (1u << 9)
#define ROCE_OPF_ACK (1u << 10)
#define ROCE_OPF_CNP (1u << 11)
#define ROCE_OPF_FLUSH (1u << 12)
#define ROCE_OPF_ATOMIC_WRITE (1u << 13)
/* Contents. */
#define ROCE_OPF_PAYLOAD (1u << 14)	/* may carry payload (possibly 0 B) */
#define ROCE_OPF_IMM (1u << 15)
#define ROCE_OPF_INV (1u << 16)

enum roce_opcode_value {
	ROCE_OP_RC_SEND_FIRST = 0x00,
	ROCE_OP_RC_SEND_MIDDLE = 0x01,
	ROCE_OP_RC_SEND_LAST = 0x02,
	ROCE_OP_RC_SEND_LAST_IMM = 0x03,
	ROCE_OP_RC_SEND_ONLY = 0x04,
	ROCE_OP_RC_SEND_ONLY_IMM = 0x05,
	ROCE_OP_RC_WRITE_FIRST = 0x06,
	ROCE_OP_RC_WRITE_MIDDLE = 0x07,
	ROCE_OP_RC_WRITE_LAST = 0x08,
	ROCE_OP_RC_WRITE_LAST_IMM = 0x09,
	ROCE_OP_RC_WRITE_ONLY = 0x0A,
	ROCE_OP_RC_WRITE_ONLY_IMM = 0x0B,
	ROCE_OP_RC_READ_REQ = 0x0C,
	ROCE_OP_RC_READ_RESP_FIRST = 0x0D,
	ROCE_OP_RC_READ_RESP_MIDDLE = 0x0E,
	ROCE_OP_RC_READ_RESP_LAST = 0x0F,
	ROCE_OP_RC_READ_RESP_ONLY = 0x10,
	ROCE_OP_RC_ACK = 0x11,
	ROCE_OP_RC_ATOMIC_ACK = 0x12,
	ROCE_OP_RC_CMP_SWAP = 0x13,
	ROCE_OP_RC_FETCH_ADD = 0x14,
	ROCE_OP_RC_SEND_LAST_INV = 0x16,
	ROCE_OP_RC_SEND_ONLY_INV = 0x17,
	ROCE_OP_RC_FLUSH = 0x1C,
	ROCE_OP_RC_ATOMIC_WRITE = 0x1D,

	ROCE_OP_UC_SEND_FIRST = 0x20,
	ROCE_OP_UC_SEND_MIDDLE = 0x21,
	ROCE_OP_UC_SEND_LAST = 0x22,
	ROCE_OP_UC_SEND_LAST_IMM = 0x23,
	ROCE_OP_UC_SEND_ONLY = 0x24,
	ROCE_OP_UC_SEND_ONLY_IMM = 0x25,
	ROCE_OP_UC_WRITE_FIRST = 0x26,
	ROCE_OP_UC_WRITE_MIDDLE = 0x27,
	ROCE_OP_UC_WRITE_LAST = 0x28,
	ROCE_OP_UC_WRITE_LAST_IMM = 0x29,
	ROCE_OP_UC_WRITE_ONLY = 0x2A,
	ROCE_OP_UC_WRITE_ONLY_IMM = 0x2B,

	/*
	 * XRC (IBTA 1.2.1 A14): RC's operations under transport 101b.  Every
	 * request carries an XRCETH naming the XRC SRQ it is for; responses
	 * are RC's, renumbered.  ATOMIC WRITE and FLUSH are RC-only here.
	 */
	ROCE_OP_XRC_SEND_FIRST = 0xA0,
	ROCE_OP_XRC_SEND_MIDDLE = 0xA1,
	ROCE_OP_XRC_SEND_LAST = 0xA2,
	ROCE_OP_XRC_SEND_LAST_IMM = 0xA3,
	ROCE_OP_XRC_SEND_ONLY = 0xA4,
	ROCE_OP_XRC_SEND_ONLY_IMM = 0xA5,
	ROCE_OP_XRC_WRITE_FIRST = 0xA6,
	ROCE_OP_XRC_WRITE_MIDDLE = 0xA7,
	ROCE_OP_XRC_WRITE_LAST = 0xA8,
	ROCE_OP_XRC_WRITE_LAST_IMM = 0xA9,
	ROCE_OP_XRC_WRITE_ONLY = 0xAA,
	ROCE_OP_XRC_WRITE_ONLY_IMM = 0xAB,
	ROCE_OP_XRC_READ_REQ = 0xAC,
	ROCE_OP_XRC_READ_RESP_FIRST = 0xAD,
	ROCE_OP_XRC_READ_RESP_MIDDLE = 0xAE,
	ROCE_OP_XRC_READ_RESP_LAST = 0xAF,
	ROCE_OP_XRC_READ_RESP_ONLY = 0xB0,
	ROCE_OP_XRC_ACK = 0xB1,
	ROCE_OP_XRC_ATOMIC_ACK = 0xB2,
	ROCE_OP_XRC_CMP_SWAP = 0xB3,
	ROCE_OP_XRC_FETCH_ADD = 0xB4,
	ROCE_OP_XRC_SEND_LAST_INV = 0xB6,
	ROCE_OP_XRC_SEND_ONLY_INV = 0xB7,

	ROCE_OP_UD_SEND_ONLY = 0x64,
	ROCE_OP_UD_SEND_ONLY_IMM = 0x65,

	ROCE_OP_CNP = 0x81,
};

struct roce_opcode_info {
	const char *name;	/* NULL for unknown opcodes */
	u32 flags;		/* ROCE_OPF_* */
	u16 hdrs;		/* ROCE_HDR_* present after the BTH */
	u8 qpt;			/* enum roce_qpt */
	u8 status;		/* enum roce_opcode_status */
	u8 hdr_len;		/* BTH + all extension headers, in bytes */
	/* Offset of each present extension header from the BTH start. */
	u8 off[ROCE_EXT_COUNT];
};

extern const struct roce_opcode_info roce_opcode_table[256];

static inline const struct roce_opcode_info *roce_opcode_get(u8 opcode)
{
	return &roce_opcode_table[opcode];
}

static inline bool roce_opcode_supported(u8 opcode)
{
	return roce_opcode_table[opcode].status == ROCE_OPCODE_SUPPORTED;
}

/*
 * The top three bits of an opcode name its transport; RC and XRC share
 * the low five.  An RC opcode's XRC twin, or the reverse.
 */
#define ROCE_OP_TRANSPORT_MASK 0xE0
#define ROCE_OP_RC_BASE 0x00
#define ROCE_OP_UC_BASE 0x20
#define ROCE_OP_XRC_BASE 0xA0

static inline u8 roce_opcode_on(u8 rc_opcode, u8 base)
{
	return (u8)((rc_opcode & ~ROCE_OP_TRANSPORT_MASK) | base);
}

static inline unsigned int roce_ext_len(enum roce_ext e)
{
	static const u8 len[ROCE_EXT_COUNT] = {
		ROCE_DETH_LEN, ROCE_XRCETH_LEN, ROCE_FETH_LEN, ROCE_RETH_LEN, ROCE_ATMETH_LEN,
		ROCE_AETH_LEN, ROCE_ATMACK_LEN, ROCE_IMM_LEN, ROCE_IETH_LEN,
		ROCE_CNP_PAD_LEN,
	};

	return (unsigned int)e < ROCE_EXT_COUNT ? len[e] : 0;
}

/* Safe for any byte: "UNKNOWN" for holes in the table. */
const char *roce_opcode_name(u8 opcode);

ROCE_EXTERN_C_END

#endif /* SROCE_PROTO_OPCODE_H */

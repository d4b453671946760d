/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * RoCE v2 transport headers: host-order structs, their wire codecs, and
 * the single packet parser/builder pair the data path uses.
 *
 * A "packet" here is the UDP payload: BTH, extension headers, payload,
 * pad, ICRC.  IP/UDP belong to the network glue; the ICRC value is
 * icrc.h's business.  Nothing here allocates or reads outside the buffer
 * it is given.
 */
#ifndef SROCE_PROTO_WIRE_H
#define SROCE_PROTO_WIRE_H

#include "compat.h"
#include "opcode.h"
#include "aeth.h"

ROCE_EXTERN_C_BEGIN

#define ROCE_V2_UDP_PORT 4791
#define ROCE_DEFAULT_PKEY 0xFFFF
#define ROCE_GSI_QKEY 0x80010000u
#define ROCE_QPN_MASK 0xFFFFFFu

struct roce_bth {
	u8 opcode;
	bool se;	/* solicited event */
	bool migreq;
	u8 padcnt;	/* 0..3 pad bytes after the payload */
	u8 tver;	/* transport version, must be 0 */
	u16 pkey;
	bool fecn, becn;
	u32 dest_qpn;	/* 24 bits */
	bool ackreq;
	u32 psn;	/* 24 bits */
};

struct roce_reth {
	u64 va;
	u32 rkey;
	u32 len;	/* DMA length of the whole message */
};

/*
 * FETH (IBTA 1.5 A19, RDMA FLUSH): placement type in bits 3..0, selectivity
 * level in bits 5..4, the rest reserved (written 0, ignored on receive).
 */
#define ROCE_FLUSH_GLOBAL	1u	/* placement: global visibility */
#define ROCE_FLUSH_PERSISTENT	2u	/* placement: persistence */
#define ROCE_FLUSH_RANGE	0u	/* selectivity: the RETH's range */
#define ROCE_FLUSH_MR		1u	/* selectivity: the whole MR */

struct roce_feth {
	u8 placement;	/* 4 bits: ROCE_FLUSH_GLOBAL | ROCE_FLUSH_PERSISTENT */
	u8 selectivity;	/* 2 bits: ROCE_FLUSH_RANGE or ROCE_FLUSH_MR */
};

struct roce_aeth {
	u8 syndrome;	/* see aeth.h */
	u32 msn;	/* 24 bits */
};

struct roce_atmeth {
	u64 va;
	u32 rkey;
	u64 swap_add;
	u64 compare;
};

struct roce_atmack {
	u64 orig;
};

struct roce_deth {
	u32 qkey;
	u32 src_qpn;	/* 24 bits */
};

/*
 * Decoded packet.  Only the headers whose ROCE_HDR_* bit is set in
 * op->hdrs are meaningful; the parser zeroes the rest.
 *
 * imm_be holds the four immediate-data bytes in wire order (memcpy'd, not
 * byte-swapped), i.e. a __be32: exactly what ib_wc.ex.imm_data and
 * ibv_wc.imm_data carry, so it passes through untouched.
 */
struct roce_pkt_info {
	struct roce_bth bth;
	const struct roce_opcode_info *op;	/* row of bth.opcode */
	struct roce_deth deth;
	struct roce_feth feth;
	struct roce_reth reth;
	struct roce_atmeth atmeth;
	struct roce_aeth aeth;
	struct roce_atmack atmack;
	u32 imm_be;
	u32 ieth_rkey;		/* R_Key to invalidate */
	u32 xrc_srqn;		/* XRCETH: the XRC SRQ (24 bits) */
	/* Offsets are from the BTH start; payload_off == header length. */
	u32 payload_off;
	u32 payload_len;	/* excluding pad and ICRC */
	u32 icrc_off;
};

/*
 * Why a packet was rejected.  roce_parse() returns the negated value so
 * callers can test "< 0" and index per-reason drop counters with -err.
 */
enum roce_parse_err {
	ROCE_PARSE_OK,
	ROCE_PERR_TOO_SHORT,		/* < BTH + ICRC */
	ROCE_PERR_UNKNOWN_OPCODE,	/* reserved or not RoCE v2 */
	ROCE_PERR_UNSUPPORTED_OPCODE,	/* valid IBTA, not implemented */
	ROCE_PERR_BAD_TVER,		/* BTH transport version != 0 */
	ROCE_PERR_TRUNCATED_HDR,	/* too short for the ext headers */
	ROCE_PERR_BAD_PADCNT,		/* pad > payload, or pad w/o payload */
	ROCE_PERR_UNEXPECTED_PAYLOAD,	/* bytes after a payload-less op */
	ROCE_PERR_BAD_ALIGN,		/* length not a multiple of 4 */
	ROCE_PERR_NO_SPACE,		/* builder: output buffer too small */
	ROCE_PERR_COUNT
};

/* Name for any of: 0, ROCE_PERR_x, -ROCE_PERR_x.  Never NULL. */
const char *roce_parse_err_name(int err);

/*
 * Parse one RoCE v2 packet.  buf starts at the BTH, len covers BTH
 * through ICRC inclusive.  Returns 0 and fills *out, or -ROCE_PERR_*.
 * Does not check the ICRC, P_Key or QP; those need context.
 *
 * Only bytes [0, min(len, op->hdr_len)) are read, never payload or ICRC,
 * so for a paged skb it is enough that the first ROCE_MAX_HDR_LEN bytes
 * (or all of them, if fewer) are linear; len must still be the true
 * length (UDP length - 8), not skb->len, which may include Ethernet pad.
 */
int roce_parse(const u8 *buf, size_t len, struct roce_pkt_info *out);

/*
 * Write BTH and the extension headers of pi->bth.opcode (taken from the
 * opcode table, pi->op is ignored) into buf.  Fields wider than their
 * wire width are truncated; reserved bits are written as zero.  Returns
 * the number of bytes written (the payload offset) or -ROCE_PERR_*.
 */
int roce_build_headers(const struct roce_pkt_info *pi, u8 *buf, size_t cap);

/* Pad bytes that follow a payload of len bytes. */
static inline u8 roce_pad_len(u32 payload_len)
{
	return (u8)(-payload_len & 3);
}

/* Individual header codecs, for in-place edits (e.g. PSN on retransmit). */
void roce_bth_encode(u8 *p, const struct roce_bth *h);
void roce_bth_decode(const u8 *p, struct roce_bth *h);
void roce_feth_encode(u8 *p, const struct roce_feth *h);
void roce_feth_decode(const u8 *p, struct roce_feth *h);
void roce_reth_encode(u8 *p, const struct roce_reth *h);
void roce_reth_decode(const u8 *p, struct roce_reth *h);
void roce_aeth_encode(u8 *p, const struct roce_aeth *h);
void roce_aeth_decode(const u8 *p, struct roce_aeth *h);
void roce_atmeth_encode(u8 *p, const struct roce_atmeth *h);
void roce_atmeth_decode(const u8 *p, struct roce_atmeth *h);
void roce_atmack_encode(u8 *p, const struct roce_atmack *h);
void roce_atmack_decode(const u8 *p, struct roce_atmack *h);
void roce_deth_encode(u8 *p, const struct roce_deth *h);
void roce_deth_decode(const u8 *p, struct roce_deth *h);

ROCE_EXTERN_C_END

#endif /* SROCE_PROTO_WIRE_H */

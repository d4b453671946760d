// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Header codecs and the packet parser.  The parser trusts nothing but the
 * opcode table: every length it uses is checked against len before the
 * first byte beyond the BTH is touched.
 */
#include "wire.h"

/* BTH byte 1: SE | M | PadCnt(2) | TVer(4) */
#define BTH_SE 0x80
#define BTH_MIG 0x40
#define BTH_PAD_SHIFT 4
#define BTH_TVER_MASK 0x0F
/* BTH byte 4: FECN | BECN | resv6; byte 8: AckReq | resv7 */
#define BTH_FECN 0x80
#define BTH_BECN 0x40
#define BTH_ACKREQ 0x80

void roce_bth_encode(u8 *p, const struct roce_bth *h)
{
	p[0] = h->opcode;
	p[1] = (u8)((h->se ? BTH_SE : 0) | (h->migreq ? BTH_MIG : 0) |
		    (h->padcnt & 3) << BTH_PAD_SHIFT |
		    (h->tver & BTH_TVER_MASK));
	roce_put_be16(p + 2, h->pkey);
	p[4] = (u8)((h->fecn ? BTH_FECN : 0) | (h->becn ? BTH_BECN : 0));
	roce_put_be24(p + 5, h->dest_qpn);
	p[8] = h->ackreq ? BTH_ACKREQ : 0;
	roce_put_be24(p + 9, h->psn);
}

/* Reserved bits (resv6, resv7) are ignored on receive, as IBTA asks. */
void roce_bth_decode(const u8 *p, struct roce_bth *h)
{
	h->opcode = p[0];
	h->se = p[1] & BTH_SE;
	h->migreq = p[1] & BTH_MIG;
	h->padcnt = (p[1] >> BTH_PAD_SHIFT) & 3;
	h->tver = p[1] & BTH_TVER_MASK;
	h->pkey = roce_get_be16(p + 2);
	h->fecn = p[4] & BTH_FECN;
	h->becn = p[4] & BTH_BECN;
	h->dest_qpn = roce_get_be24(p + 5);
	h->ackreq = p[8] & BTH_ACKREQ;
	h->psn = roce_get_be24(p + 9);
}

void roce_feth_encode(u8 *p, const struct roce_feth *h)
{
	roce_put_be32(p, (u32)(h->selectivity & 3) << 4 | (h->placement & 0xF));
}

void roce_feth_decode(const u8 *p, struct roce_feth *h)
{
	u32 v = roce_get_be32(p);

	h->placement = v & 0xF;
	h->selectivity = (v >> 4) & 3;
}

void roce_reth_encode(u8 *p, const struct roce_reth *h)
{
	roce_put_be64(p, h->va);
	roce_put_be32(p + 8, h->rkey);
	roce_put_be32(p + 12, h->len);
}

void roce_reth_decode(const u8 *p, struct roce_reth *h)
{
	h->va = roce_get_be64(p);
	h->rkey = roce_get_be32(p + 8);
	h->len = roce_get_be32(p + 12);
}

void roce_aeth_encode(u8 *p, const struct roce_aeth *h)
{
	p[0] = h->syndrome;
	roce_put_be24(p + 1, h->msn);
}

void roce_aeth_decode(const u8 *p, struct roce_aeth *h)
{
	h->syndrome = p[0];
	h->msn = roce_get_be24(p + 1);
}

void roce_atmeth_encode(u8 *p, const struct roce_atmeth *h)
{
	roce_put_be64(p, h->va);
	roce_put_be32(p + 8, h->rkey);
	roce_put_be64(p + 12, h->swap_add);
	roce_put_be64(p + 20, h->compare);
}

void roce_atmeth_decode(const u8 *p, struct roce_atmeth *h)
{
	h->va = roce_get_be64(p);
	h->rkey = roce_get_be32(p + 8);
	h->swap_add = roce_get_be64(p + 12);
	h->compare = roce_get_be64(p + 20);
}

void roce_atmack_encode(u8 *p, const struct roce_atmack *h)
{
	roce_put_be64(p, h->orig);
}

void roce_atmack_decode(const u8 *p, struct roce_atmack *h)
{
	h->orig = roce_get_be64(p);
}

/* DETH: Q_Key(32) | reserved(8) | SrcQP(24) */
void roce_deth_encode(u8 *p, const struct roce_deth *h)
{
	roce_put_be32(p, h->qkey);
	p[4] = 0;
	roce_put_be24(p + 5, h->src_qpn);
}

void roce_deth_decode(const u8 *p, struct roce_deth *h)
{
	h->qkey = roce_get_be32(p);
	h->src_qpn = roce_get_be24(p + 5);
}

static const char *const parse_err_names[ROCE_PERR_COUNT] = {
	[ROCE_PARSE_OK] = "ok",
	[ROCE_PERR_TOO_SHORT] = "too_short",
	[ROCE_PERR_UNKNOWN_OPCODE] = "unknown_opcode",
	[ROCE_PERR_UNSUPPORTED_OPCODE] = "unsupported_opcode",
	[ROCE_PERR_BAD_TVER] = "bad_tver",
	[ROCE_PERR_TRUNCATED_HDR] = "truncated_hdr",
	[ROCE_PERR_BAD_PADCNT] = "bad_padcnt",
	[ROCE_PERR_UNEXPECTED_PAYLOAD] = "unexpected_payload",
	[ROCE_PERR_BAD_ALIGN] = "bad_align",
	[ROCE_PERR_NO_SPACE] = "no_space",
};

const char *roce_parse_err_name(int err)
{
	unsigned int i = err < 0 ? 0u - (unsigned int)err : (unsigned int)err;

	return i < ROCE_PERR_COUNT ? parse_err_names[i] : "invalid";
}

/* Decode every extension header the opcode row says is present. */
static void decode_ext(const u8 *buf, const struct roce_opcode_info *op,
		       struct roce_pkt_info *out)
{
	u16 h = op->hdrs;

	if (h & ROCE_HDR_DETH)
		roce_deth_decode(buf + op->off[ROCE_EXT_DETH], &out->deth);
	/* XRCETH: reserved(8) | XRC SRQ(24) */
	if (h & ROCE_HDR_XRCETH)
		out->xrc_srqn = roce_get_be24(buf + op->off[ROCE_EXT_XRCETH] + 1);
	if (h & ROCE_HDR_FETH)
		roce_feth_decode(buf + op->off[ROCE_EXT_FETH], &out->feth);
	if (h & ROCE_HDR_RETH)
		roce_reth_decode(buf + op->off[ROCE_EXT_RETH], &out->reth);
	if (h & ROCE_HDR_ATMETH)
		roce_atmeth_decode(buf + op->off[ROCE_EXT_ATMETH], &out->atmeth);
	if (h & ROCE_HDR_AETH)
		roce_aeth_decode(buf + op->off[ROCE_EXT_AETH], &out->aeth);
	if (h & ROCE_HDR_ATMACK)
		roce_atmack_decode(buf + op->off[ROCE_EXT_ATMACK], &out->atmack);
	if (h & ROCE_HDR_IMM)
		memcpy(&out->imm_be, buf + op->off[ROCE_EXT_IMM], ROCE_IMM_LEN);
	if (h & ROCE_HDR_IETH)
		out->ieth_rkey = roce_get_be32(buf + op->off[ROCE_EXT_IETH]);
	/* CNP_PAD is reserved: ignored on receive. */
}

int roce_parse(const u8 *buf, size_t len, struct roce_pkt_info *out)
{
	const struct roce_opcode_info *op;
	size_t body;	/* payload + pad */

	memset(out, 0, sizeof(*out));
	if (roce_unlikely(len < ROCE_BTH_LEN + ROCE_ICRC_LEN))
		return -ROCE_PERR_TOO_SHORT;

	op = &roce_opcode_table[buf[0]];
	if (roce_unlikely(op->status != ROCE_OPCODE_SUPPORTED))
		return op->status == ROCE_OPCODE_UNKNOWN ?
			-ROCE_PERR_UNKNOWN_OPCODE : -ROCE_PERR_UNSUPPORTED_OPCODE;

	roce_bth_decode(buf, &out->bth);
	out->op = op;
	if (roce_unlikely(out->bth.tver != 0))
		return -ROCE_PERR_BAD_TVER;
	if (roce_unlikely(len < (size_t)op->hdr_len + ROCE_ICRC_LEN))
		return -ROCE_PERR_TRUNCATED_HDR;

	body = len - op->hdr_len - ROCE_ICRC_LEN;
	if (op->flags & ROCE_OPF_PAYLOAD) {
		if (roce_unlikely(body < out->bth.padcnt))
			return -ROCE_PERR_BAD_PADCNT;
	} else {
		if (roce_unlikely(out->bth.padcnt != 0))
			return -ROCE_PERR_BAD_PADCNT;
		if (roce_unlikely(body != 0))
			return -ROCE_PERR_UNEXPECTED_PAYLOAD;
	}
	/*
	 * Every header is a multiple of 4 bytes and PadCnt exists to round
	 * the payload up to one, so a conforming sender never emits a
	 * ragged packet; accepting one would let a garbled length through.
	 */
	if (roce_unlikely(len & 3))
		return -ROCE_PERR_BAD_ALIGN;

	decode_ext(buf, op, out);
	out->payload_off = op->hdr_len;
	out->payload_len = (u32)(body - out->bth.padcnt);
	out->icrc_off = (u32)(len - ROCE_ICRC_LEN);
	return 0;
}

int roce_build_headers(const struct roce_pkt_info *pi, u8 *buf, size_t cap)
{
	const struct roce_opcode_info *op = &roce_opcode_table[pi->bth.opcode];
	u16 h = op->hdrs;

	if (op->status != ROCE_OPCODE_SUPPORTED)
		return op->status == ROCE_OPCODE_UNKNOWN ?
			-ROCE_PERR_UNKNOWN_OPCODE : -ROCE_PERR_UNSUPPORTED_OPCODE;
	if (cap < op->hdr_len)
		return -ROCE_PERR_NO_SPACE;

	roce_bth_encode(buf, &pi->bth);
	if (h & ROCE_HDR_DETH)
		roce_deth_encode(buf + op->off[ROCE_EXT_DETH], &pi->deth);
	if (h & ROCE_HDR_XRCETH) {
		buf[op->off[ROCE_EXT_XRCETH]] = 0;
		roce_put_be24(buf + op->off[ROCE_EXT_XRCETH] + 1, pi->xrc_srqn);
	}
	if (h & ROCE_HDR_FETH)
		roce_feth_encode(buf + op->off[ROCE_EXT_FETH], &pi->feth);
	if (h & ROCE_HDR_RETH)
		roce_reth_encode(buf + op->off[ROCE_EXT_RETH], &pi->reth);
	if (h & ROCE_HDR_ATMETH)
		roce_atmeth_encode(buf + op->off[ROCE_EXT_ATMETH], &pi->atmeth);
	if (h & ROCE_HDR_AETH)
		roce_aeth_encode(buf + op->off[ROCE_EXT_AETH], &pi->aeth);
	if (h & ROCE_HDR_ATMACK)
		roce_atmack_encode(buf + op->off[ROCE_EXT_ATMACK], &pi->atmack);
	if (h & ROCE_HDR_IMM)
		memcpy(buf + op->off[ROCE_EXT_IMM], &pi->imm_be, ROCE_IMM_LEN);
	if (h & ROCE_HDR_IETH)
		roce_put_be32(buf + op->off[ROCE_EXT_IETH], pi->ieth_rkey);
	if (h & ROCE_HDR_CNP_PAD)
		memset(buf + op->off[ROCE_EXT_CNP_PAD], 0, ROCE_CNP_PAD_LEN);
	return op->hdr_len;
}

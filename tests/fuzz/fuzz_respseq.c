// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer target for the responder's sequence decision
 * (kernel/proto/respseq.c), which sroce.ko runs on every RC and UC
 * request before it executes anything.  Input:
 *
 *   byte 0      bit 0: RC (1) or UC (0)
 *   bytes 1-3   the ePSN the QP enters RTR with
 *   then 3 bytes per request:
 *     opcode    an index into the request opcodes below (mod their count)
 *     psn       a signed offset from ePSN; -128 takes the next 3 bytes
 *               as an absolute PSN instead (anywhere in the space)
 *     how       bits 0-1: a READ's extra PSNs; bit 2: its execution
 *               fails (RC: the QP fails and is brought back to RTR;
 *               UC: the message is lost); bit 3 without bit 2, RC:
 *               no receive WQE, answered with an RNR NAK
 *
 * The oracle is the rule each verdict must follow: only ePSN executes on
 * RC, and only in sequence; duplicates lie behind ePSN and gaps ahead of
 * it, and neither moves anything; one NAK per gap (an RNR NAK counts),
 * repeated only after ROCE_RESP_RENAK_DROPS - 1 drops and never behind
 * an RNR NAK;
 * UC never NAKs, answers no duplicates, and executes out of order only a
 * FIRST.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "opcode.h"
#include "psn.h"
#include "respseq.h"

#define CHECK(c) do { if (!(c)) abort(); } while (0)

static const u8 ops[] = {
	0x00, 0x01, 0x02, 0x03, 0x04, 0x05,	/* SEND FIRST..ONLY_IMM */
	0x06, 0x07, 0x08, 0x09, 0x0A, 0x0B,	/* WRITE FIRST..ONLY_IMM */
	0x0C, 0x12, 0x13, 0x16, 0x17,	/* READ, CMP_SWAP, FETCH_ADD, SEND_*_INV */
};

int LLVMFuzzerTestOneInput(const u8 *data, size_t size);

int LLVMFuzzerTestOneInput(const u8 *data, size_t size)
{
	struct roce_resp_seq s;
	bool rc, rnr, naked = false, naked_rnr = false;
	u32 drops = 0;		/* since the last NAK */
	size_t at = 4;

	if (size < 4)
		return 0;
	rc = data[0] & 1;
	roce_resp_seq_init(&s, (u32)data[1] << 16 | data[2] << 8 | data[3]);

	while (at + 3 <= size) {
		u8 op = ops[data[at] % sizeof(ops)] + (rc ? 0 : 0x20);
		const struct roce_opcode_info *info = roce_opcode_get(op);
		int8_t off = (int8_t)data[at + 1];
		u8 how = data[at + 2];
		struct roce_resp_seq b = s;
		enum roce_resp_verdict v;
		u32 flags, psn, npsn;

		at += 3;
		if (!info->name || !(info->flags & ROCE_OPF_REQUEST))
			continue;	/* not a UC opcode (READ, atomics) */
		flags = info->flags;
		if (off == -128) {
			if (at + 3 > size)
				break;
			psn = (u32)data[at] << 16 | data[at + 1] << 8 | data[at + 2];
			at += 3;
		} else {
			psn = psn_add(s.epsn, (u32)(s32)off);
		}
		npsn = (flags & ROCE_OPF_READ_REQ) ? 1 + (how & 3) : 1;

		v = roce_resp_admit(&s, rc, psn, flags);
		rnr = rc && v == ROCE_RESP_EXECUTE && (how & 12) == 8;
		if (rnr) {
			roce_resp_rnr(&s);	/* no receive WQE */
		} else if (v == ROCE_RESP_EXECUTE) {
			if (!(how & 4))
				roce_resp_done(&s, flags, npsn);
			else if (!rc)
				roce_resp_uc_lost(&s, psn);
		}

		if (rc) {
			CHECK(!s.uc_drop);
			switch (v) {
			case ROCE_RESP_EXECUTE:
				CHECK(psn == b.epsn);
				CHECK(roce_opseq_ok(b.msg, flags));
				CHECK(how & 4 || rnr || s.epsn == psn_add(psn, npsn));
				CHECK(!rnr || (s.epsn == b.epsn && s.msg == b.msg));
				break;
			case ROCE_RESP_DUPLICATE:
				CHECK(psn_before(psn, b.epsn));
				break;
			case ROCE_RESP_NAK_PSN:
				/* Again only after ROCE_RESP_RENAK_DROPS - 1
				 * drops, and never behind an RNR NAK.
				 */
				CHECK(!naked || (!naked_rnr &&
						 drops == ROCE_RESP_RENAK_DROPS - 1));
				naked = true;
				naked_rnr = false;
				drops = 0;
				CHECK(psn_after(psn, b.epsn));
				break;
			case ROCE_RESP_DROP:
				CHECK(naked);
				drops++;
				CHECK(psn_after(psn, b.epsn));
				break;
			case ROCE_RESP_INVALID:
				CHECK(psn == b.epsn);
				CHECK(!roce_opseq_ok(b.msg, flags));
				break;
			default:
				CHECK(0);
			}
			if (v != ROCE_RESP_EXECUTE)
				CHECK(s.epsn == b.epsn && s.msg == b.msg);
			if (psn == b.epsn) {
				naked = naked_rnr = rnr;	/* an RNR NAK quiets the gap too */
				drops = 0;
			}
			if (v == ROCE_RESP_INVALID || (v == ROCE_RESP_EXECUTE && how & 4)) {
				/* The QP fails; the consumer brings it back. */
				roce_resp_seq_init(&s, psn_add(psn, 1000));
				naked = false;
			}
		} else {
			CHECK(v == ROCE_RESP_EXECUTE || v == ROCE_RESP_DROP);
			if (v == ROCE_RESP_EXECUTE)
				CHECK((psn == b.epsn && !b.uc_drop &&
				       roce_opseq_ok(b.msg, flags)) ||
				      (flags & ROCE_OPF_FIRST));
			else
				CHECK(s.uc_drop);
			CHECK(s.epsn == psn_add(psn, 1));
			if (s.uc_drop)
				CHECK(s.msg == ROCE_MSG_NONE);
		}
		CHECK(s.epsn <= ROCE_PSN_MASK);
	}
	return 0;
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// The responder's sequence decision: PSN check and opcode sequence, RC and
// UC, gaps, duplicates, wraps, and a long random run held to the rules.
#include <gtest/gtest.h>

#include <random>

#include "opcode.h"
#include "psn.h"
#include "respseq.h"

namespace {

const u8 kSendFirst = 0x00, kSendMiddle = 0x01, kSendLast = 0x02,
	 kSendOnly = 0x04, kWriteFirst = 0x06, kWriteMiddle = 0x07,
	 kWriteLast = 0x08, kWriteOnly = 0x0A, kReadReq = 0x0C,
	 kCmpSwap = 0x13;
const u8 kUc = 0x20;	// UC's opcodes are RC's plus 0x20

u32 flags_of(u8 opcode)
{
	return roce_opcode_get(opcode)->flags;
}

// The module's use of the decision: execute what is let through (always
// successfully here), @npsn PSNs for a READ.
struct Responder {
	roce_resp_seq seq{};
	bool rc;

	Responder(bool is_rc, u32 epsn) : rc(is_rc)
	{
		roce_resp_seq_init(&seq, epsn);
	}

	roce_resp_verdict rx(u8 op, u32 psn, u32 npsn = 1)
	{
		u32 f = flags_of(op);
		roce_resp_verdict v = roce_resp_admit(&seq, rc, psn, f);

		if (v == ROCE_RESP_EXECUTE)
			roce_resp_done(&seq, f, npsn);
		return v;
	}
};

TEST(RespSeq, RcMessagesInOrderExecute)
{
	Responder r(true, 10);

	EXPECT_EQ(r.rx(kSendFirst, 10), ROCE_RESP_EXECUTE);
	EXPECT_EQ(r.seq.msg, ROCE_MSG_SEND);
	EXPECT_EQ(r.rx(kSendMiddle, 11), ROCE_RESP_EXECUTE);
	EXPECT_EQ(r.rx(kSendLast, 12), ROCE_RESP_EXECUTE);
	EXPECT_EQ(r.seq.msg, ROCE_MSG_NONE);
	EXPECT_EQ(r.rx(kWriteOnly, 13), ROCE_RESP_EXECUTE);
	EXPECT_EQ(r.rx(kCmpSwap, 14), ROCE_RESP_EXECUTE);
	EXPECT_EQ(r.seq.epsn, 15u);
}

TEST(RespSeq, RcGapIsNakedOnceThenDroppedUntilEpsnComes)
{
	Responder r(true, 10);

	EXPECT_EQ(r.rx(kSendOnly, 12), ROCE_RESP_NAK_PSN);
	EXPECT_EQ(r.rx(kSendOnly, 13), ROCE_RESP_DROP);
	EXPECT_EQ(r.rx(kSendOnly, 14), ROCE_RESP_DROP);
	EXPECT_EQ(r.seq.epsn, 10u) << "a gap moves nothing";
	EXPECT_EQ(r.rx(kSendOnly, 10), ROCE_RESP_EXECUTE);
	EXPECT_EQ(r.rx(kSendOnly, 11), ROCE_RESP_EXECUTE);
	// A new gap gets its own NAK.
	EXPECT_EQ(r.rx(kSendOnly, 20), ROCE_RESP_NAK_PSN);
	EXPECT_EQ(r.rx(kSendOnly, 21), ROCE_RESP_DROP);
}

// The retransmission a NAK asked for can be lost too, and then the
// requester's go-back-N resends everything behind it.  Dropping that in
// silence left only the local ACK timeout; a window's worth of drops
// (more than a requester keeps unacknowledged) brings the NAK again.
TEST(RespSeq, RcGapIsNakedAgainAfterAWindowOfDrops)
{
	Responder r(true, 10);
	u32 psn = 11;

	ASSERT_EQ(r.rx(kWriteOnly, psn++), ROCE_RESP_NAK_PSN);
	for (u32 i = 0; i < ROCE_RESP_RENAK_DROPS - 1; i++)
		ASSERT_EQ(r.rx(kWriteOnly, psn++), ROCE_RESP_DROP) << i;
	EXPECT_EQ(r.rx(kWriteOnly, psn++), ROCE_RESP_NAK_PSN);
	EXPECT_EQ(r.rx(kWriteOnly, psn++), ROCE_RESP_DROP);
	EXPECT_EQ(r.seq.epsn, 10u);
	EXPECT_EQ(r.rx(kWriteOnly, 10), ROCE_RESP_EXECUTE);
}

// Behind an RNR NAK the requester waits out the RNR timer before it
// resends: however much arrives meanwhile, no sequence NAK cuts that short.
TEST(RespSeq, RcNoSequenceNakBehindAnRnrNak)
{
	Responder r(true, 10);

	ASSERT_EQ(roce_resp_admit(&r.seq, true, 10, flags_of(kSendOnly)),
		  ROCE_RESP_EXECUTE);
	roce_resp_rnr(&r.seq);
	for (u32 i = 0; i < 3 * ROCE_RESP_RENAK_DROPS; i++)
		ASSERT_EQ(r.rx(kSendOnly, 11 + i % 100), ROCE_RESP_DROP) << i;
}

// A receiver not ready: the RNR NAK names ePSN, and the requests already
// in flight behind it are dropped quietly.  A sequence NAK for them would
// make the requester spend a transport retry on every RNR wait, and a slow
// receiver would fail a QP whose RNR retries are infinite.
TEST(RespSeq, RcRequestsBehindAnRnrNakAreDroppedQuietly)
{
	Responder r(true, 10);

	ASSERT_EQ(roce_resp_admit(&r.seq, true, 10, flags_of(kSendOnly)),
		  ROCE_RESP_EXECUTE);
	roce_resp_rnr(&r.seq);		// no receive posted: not carried out
	EXPECT_EQ(r.seq.epsn, 10u);
	EXPECT_EQ(r.rx(kSendOnly, 11), ROCE_RESP_DROP);
	EXPECT_EQ(r.rx(kSendOnly, 12), ROCE_RESP_DROP);
	EXPECT_EQ(r.rx(kSendOnly, 9), ROCE_RESP_DUPLICATE);
	// The retry of ePSN ends the quiet; the next gap is NAKed again.
	EXPECT_EQ(r.rx(kSendOnly, 10), ROCE_RESP_EXECUTE);
	EXPECT_EQ(r.rx(kSendOnly, 12), ROCE_RESP_NAK_PSN);
}

TEST(RespSeq, RcDuplicatesChangeNothing)
{
	Responder r(true, 10);

	r.rx(kWriteFirst, 10);
	r.rx(kWriteMiddle, 11);
	roce_resp_seq before = r.seq;
	EXPECT_EQ(r.rx(kWriteFirst, 10), ROCE_RESP_DUPLICATE);
	EXPECT_EQ(r.rx(kSendOnly, 11), ROCE_RESP_DUPLICATE)
		<< "a duplicate is answered whatever its opcode";
	EXPECT_EQ(r.seq.epsn, before.epsn);
	EXPECT_EQ(r.seq.msg, before.msg);
	EXPECT_EQ(r.rx(kWriteLast, 12), ROCE_RESP_EXECUTE);
}

TEST(RespSeq, RcHalfThePsnSpaceBehindIsDuplicateTheRestAhead)
{
	const u32 e = 0x100;
	Responder r(true, e);

	EXPECT_EQ(r.rx(kSendOnly, psn_sub(e, ROCE_PSN_HALF)), ROCE_RESP_DUPLICATE);
	EXPECT_EQ(r.rx(kSendOnly, psn_sub(e, ROCE_PSN_HALF + 1)),
		  ROCE_RESP_NAK_PSN);
	EXPECT_EQ(r.rx(kSendOnly, psn_add(e, 1)), ROCE_RESP_DROP);
}

TEST(RespSeq, RcOpcodeOutOfSequenceAtEpsnIsInvalid)
{
	{
		Responder r(true, 10);
		EXPECT_EQ(r.rx(kSendMiddle, 10), ROCE_RESP_INVALID)
			<< "a MIDDLE without its FIRST";
		EXPECT_EQ(r.seq.epsn, 10u);
	}
	{
		Responder r(true, 10);
		r.rx(kSendFirst, 10);
		EXPECT_EQ(r.rx(kWriteFirst, 11), ROCE_RESP_INVALID)
			<< "a WRITE inside a SEND";
	}
	{
		Responder r(true, 10);
		r.rx(kWriteFirst, 10);
		EXPECT_EQ(r.rx(kReadReq, 11), ROCE_RESP_INVALID)
			<< "a READ inside a WRITE";
		EXPECT_EQ(r.rx(kSendLast, 11), ROCE_RESP_INVALID)
			<< "a SEND LAST ending a WRITE";
	}
}

TEST(RespSeq, RcPsnCheckComesBeforeTheOpcodeCheck)
{
	Responder r(true, 10);

	// Ahead of ePSN, a MIDDLE is a gap to NAK, not an invalid request:
	// its FIRST may be what was lost.
	EXPECT_EQ(r.rx(kSendMiddle, 11), ROCE_RESP_NAK_PSN);
	EXPECT_EQ(r.rx(kSendFirst, 10), ROCE_RESP_EXECUTE);
	EXPECT_EQ(r.rx(kSendMiddle, 11), ROCE_RESP_EXECUTE);
}

TEST(RespSeq, RcReadTakesOnePsnPerResponsePacket)
{
	Responder r(true, 10);

	EXPECT_EQ(r.rx(kReadReq, 10, 4), ROCE_RESP_EXECUTE);
	EXPECT_EQ(r.seq.epsn, 14u);
	EXPECT_EQ(r.rx(kReadReq, 12), ROCE_RESP_DUPLICATE)
		<< "a PSN inside an earlier READ's responses";
	EXPECT_EQ(r.rx(kSendOnly, 14), ROCE_RESP_EXECUTE);
}

TEST(RespSeq, RcWrapsAtTwoToThe24)
{
	Responder r(true, ROCE_PSN_MASK - 1);

	EXPECT_EQ(r.rx(kSendFirst, ROCE_PSN_MASK - 1), ROCE_RESP_EXECUTE);
	EXPECT_EQ(r.rx(kSendMiddle, ROCE_PSN_MASK), ROCE_RESP_EXECUTE);
	EXPECT_EQ(r.rx(kSendLast, 0), ROCE_RESP_EXECUTE);
	EXPECT_EQ(r.seq.epsn, 1u);
	EXPECT_EQ(r.rx(kSendOnly, ROCE_PSN_MASK), ROCE_RESP_DUPLICATE);
	EXPECT_EQ(r.rx(kSendOnly, 2), ROCE_RESP_NAK_PSN);
}

TEST(RespSeq, UcGapLosesTheMessageUpToTheNextFirst)
{
	Responder r(false, 5);

	EXPECT_EQ(r.rx(kUc + kSendFirst, 5), ROCE_RESP_EXECUTE);
	EXPECT_EQ(r.rx(kUc + kSendMiddle, 6), ROCE_RESP_EXECUTE);
	// 7 is lost
	EXPECT_EQ(r.rx(kUc + kSendLast, 8), ROCE_RESP_DROP);
	EXPECT_EQ(r.seq.msg, ROCE_MSG_NONE);
	EXPECT_EQ(r.rx(kUc + kSendMiddle, 9), ROCE_RESP_DROP)
		<< "in order again, but its message is gone";
	EXPECT_EQ(r.rx(kUc + kSendFirst, 10), ROCE_RESP_EXECUTE);
	EXPECT_EQ(r.seq.msg, ROCE_MSG_SEND);
	EXPECT_EQ(r.rx(kUc + kSendLast, 11), ROCE_RESP_EXECUTE);
	EXPECT_EQ(r.seq.epsn, 12u);
}

TEST(RespSeq, UcFirstAfterAGapStartsOverWhereverItsPsnIs)
{
	Responder r(false, 5);

	r.rx(kUc + kSendFirst, 5);
	EXPECT_EQ(r.rx(kUc + kWriteFirst, 9), ROCE_RESP_EXECUTE);
	EXPECT_EQ(r.seq.msg, ROCE_MSG_WRITE);
	EXPECT_EQ(r.seq.epsn, 10u);
	// UC has no duplicates: an older PSN that starts a message starts over.
	EXPECT_EQ(r.rx(kUc + kSendOnly, 3), ROCE_RESP_EXECUTE);
	EXPECT_EQ(r.seq.epsn, 4u);
	EXPECT_EQ(r.seq.msg, ROCE_MSG_NONE);
}

TEST(RespSeq, UcBrokenSequenceAtEpsnDropsUpToTheNextFirst)
{
	Responder r(false, 5);

	EXPECT_EQ(r.rx(kUc + kWriteMiddle, 5), ROCE_RESP_DROP);
	EXPECT_TRUE(r.seq.uc_drop);
	EXPECT_EQ(r.rx(kUc + kWriteLast, 6), ROCE_RESP_DROP);
	EXPECT_EQ(r.rx(kUc + kWriteOnly, 7), ROCE_RESP_EXECUTE);
	EXPECT_FALSE(r.seq.uc_drop);
}

TEST(RespSeq, UcNewFirstInsideAMessageWins)
{
	Responder r(false, 5);

	r.rx(kUc + kSendFirst, 5);
	EXPECT_EQ(r.rx(kUc + kWriteFirst, 6), ROCE_RESP_EXECUTE);
	EXPECT_EQ(r.seq.msg, ROCE_MSG_WRITE);
	EXPECT_EQ(r.rx(kUc + kSendMiddle, 7), ROCE_RESP_DROP)
		<< "the SEND it replaced cannot go on";
}

TEST(RespSeq, UcMessageLostInExecutionDropsItsRest)
{
	Responder r(false, 5);

	// e.g. no receive WQE for the FIRST: the module says it was lost.
	ASSERT_EQ(roce_resp_admit(&r.seq, false, 5, flags_of(kUc + kSendFirst)),
		  ROCE_RESP_EXECUTE);
	roce_resp_uc_lost(&r.seq, 5);
	EXPECT_EQ(r.rx(kUc + kSendMiddle, 6), ROCE_RESP_DROP);
	EXPECT_EQ(r.rx(kUc + kSendLast, 7), ROCE_RESP_DROP);
	EXPECT_EQ(r.rx(kUc + kSendOnly, 8), ROCE_RESP_EXECUTE);
}

TEST(RespSeq, InitForgetsEverything)
{
	Responder r(false, 5);

	r.rx(kUc + kSendMiddle, 5);	// dropping
	roce_resp_seq_init(&r.seq, 0x1234567);
	EXPECT_EQ(r.seq.epsn, 0x234567u) << "masked to 24 bits";
	EXPECT_FALSE(r.seq.uc_drop);
	EXPECT_FALSE(r.seq.nak_pending);
	EXPECT_EQ(r.seq.msg, ROCE_MSG_NONE);
}

// Random packets near ePSN, RC and UC, each verdict held to the rules.
void random_run(bool rc, unsigned seed)
{
	static const u8 ops[] = {kSendFirst, kSendMiddle, kSendLast, kSendOnly,
				 kWriteFirst, kWriteMiddle, kWriteLast,
				 kWriteOnly, kReadReq, kCmpSwap};
	std::mt19937 rng(seed);
	Responder r(rc, ROCE_PSN_MASK - 1000);
	bool naked_since_epsn = false;
	u32 drops_since_nak = 0;

	for (int i = 0; i < 50000; i++) {
		u8 op = ops[rng() % (rc ? 10 : 8)] + (rc ? 0 : kUc);
		u32 f = flags_of(op);
		int off = int(rng() % 9) - 4;	// mostly near ePSN
		u32 psn = rng() % 50 ? psn_add(r.seq.epsn, u32(off)) : rng();
		psn &= ROCE_PSN_MASK;
		u32 npsn = (f & ROCE_OPF_READ_REQ) ? 1 + rng() % 3 : 1;
		roce_resp_seq b = r.seq;
		roce_resp_verdict v = r.rx(op, psn, npsn);

		SCOPED_TRACE(testing::Message() << "packet " << i << " op "
			     << int(op) << " psn " << psn << " epsn " << b.epsn);
		if (rc) {
			ASSERT_FALSE(r.seq.uc_drop);
			if (v == ROCE_RESP_EXECUTE) {
				ASSERT_EQ(psn, b.epsn);
				ASSERT_TRUE(roce_opseq_ok(
					(roce_msg_in_progress)b.msg, f));
				ASSERT_EQ(r.seq.epsn, psn_add(psn, npsn));
			} else {
				ASSERT_EQ(r.seq.epsn, b.epsn);
				ASSERT_EQ(r.seq.msg, b.msg);
			}
			if (v == ROCE_RESP_INVALID) {
				ASSERT_EQ(psn, b.epsn);
			}
			if (v == ROCE_RESP_DUPLICATE) {
				ASSERT_TRUE(psn_before(psn, b.epsn));
			}
			if (v == ROCE_RESP_NAK_PSN || v == ROCE_RESP_DROP) {
				ASSERT_TRUE(psn_after(psn, b.epsn));
			}
			if (v == ROCE_RESP_NAK_PSN) {
				ASSERT_TRUE(!naked_since_epsn ||
					    drops_since_nak == ROCE_RESP_RENAK_DROPS - 1)
					<< "one NAK per gap, again only after "
					   "ROCE_RESP_RENAK_DROPS - 1 drops";
				naked_since_epsn = true;
				drops_since_nak = 0;
			}
			if (v == ROCE_RESP_DROP) {
				ASSERT_TRUE(naked_since_epsn);
				drops_since_nak++;
			}
			if (psn == b.epsn) {
				naked_since_epsn = false;
				drops_since_nak = 0;
			}
			if (v == ROCE_RESP_INVALID) {	// the QP would fail
				roce_resp_seq_init(&r.seq, rng());
				naked_since_epsn = false;
				drops_since_nak = 0;
			}
		} else {
			ASSERT_NE(v, ROCE_RESP_DUPLICATE);
			ASSERT_NE(v, ROCE_RESP_NAK_PSN);
			ASSERT_NE(v, ROCE_RESP_INVALID);
			if (v == ROCE_RESP_EXECUTE) {
				ASSERT_TRUE((psn == b.epsn && !b.uc_drop &&
					     roce_opseq_ok((roce_msg_in_progress)b.msg, f)) ||
					    (f & ROCE_OPF_FIRST));
				ASSERT_EQ(r.seq.epsn, psn_add(psn, 1));
			} else {
				ASSERT_TRUE(r.seq.uc_drop);
				ASSERT_EQ(r.seq.epsn, psn_add(psn, 1));
			}
			if (r.seq.uc_drop) {
				ASSERT_EQ(r.seq.msg, ROCE_MSG_NONE);
			}
		}
	}
}

TEST(RespSeq, RandomRcPacketsKeepTheRules) { random_run(true, 1); }
TEST(RespSeq, RandomUcPacketsKeepTheRules) { random_run(false, 2); }

}  // namespace

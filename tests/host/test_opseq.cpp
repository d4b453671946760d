// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// The responder's opcode sequence rules, for every request opcode of RC
// and UC against every message that may be in progress.
#include <gtest/gtest.h>

#include "opcode.h"
#include "opseq.h"

namespace {

u32 flags_of(u8 opcode)
{
	return roce_opcode_get(opcode)->flags;
}

const u8 kSendFirst = 0x00, kSendMiddle = 0x01, kSendLast = 0x02,
	 kSendOnly = 0x04, kWriteFirst = 0x06, kWriteMiddle = 0x07,
	 kWriteLast = 0x08, kWriteOnly = 0x0A, kReadReq = 0x0C,
	 kCmpSwap = 0x13, kSendLastInv = 0x16, kUcWriteMiddle = 0x27;

TEST(OpSeq, NothingInProgressTakesOnlyStarts)
{
	for (u8 op : {kSendFirst, kSendOnly, kWriteFirst, kWriteOnly, kReadReq,
		      kCmpSwap})
		EXPECT_TRUE(roce_opseq_ok(ROCE_MSG_NONE, flags_of(op))) << int(op);
	for (u8 op : {kSendMiddle, kSendLast, kWriteMiddle, kWriteLast,
		      kSendLastInv, kUcWriteMiddle})
		EXPECT_FALSE(roce_opseq_ok(ROCE_MSG_NONE, flags_of(op))) << int(op);
}

TEST(OpSeq, ASendInProgressTakesOnlyItsMiddleAndLast)
{
	for (u8 op : {kSendMiddle, kSendLast, kSendLastInv})
		EXPECT_TRUE(roce_opseq_ok(ROCE_MSG_SEND, flags_of(op))) << int(op);
	for (u8 op : {kSendFirst, kSendOnly, kWriteFirst, kWriteMiddle,
		      kWriteLast, kWriteOnly, kReadReq, kCmpSwap})
		EXPECT_FALSE(roce_opseq_ok(ROCE_MSG_SEND, flags_of(op))) << int(op);
}

TEST(OpSeq, AWriteInProgressTakesOnlyItsMiddleAndLast)
{
	for (u8 op : {kWriteMiddle, kWriteLast, kUcWriteMiddle})
		EXPECT_TRUE(roce_opseq_ok(ROCE_MSG_WRITE, flags_of(op))) << int(op);
	for (u8 op : {kSendFirst, kSendMiddle, kSendLast, kSendOnly,
		      kWriteFirst, kWriteOnly, kReadReq, kCmpSwap})
		EXPECT_FALSE(roce_opseq_ok(ROCE_MSG_WRITE, flags_of(op))) << int(op);
}

TEST(OpSeq, FirstStartsLastEndsMiddleKeeps)
{
	EXPECT_EQ(roce_opseq_next(ROCE_MSG_NONE, flags_of(kSendFirst)), ROCE_MSG_SEND);
	EXPECT_EQ(roce_opseq_next(ROCE_MSG_NONE, flags_of(kWriteFirst)), ROCE_MSG_WRITE);
	EXPECT_EQ(roce_opseq_next(ROCE_MSG_SEND, flags_of(kSendMiddle)), ROCE_MSG_SEND);
	EXPECT_EQ(roce_opseq_next(ROCE_MSG_WRITE, flags_of(kWriteMiddle)), ROCE_MSG_WRITE);
	EXPECT_EQ(roce_opseq_next(ROCE_MSG_SEND, flags_of(kSendLast)), ROCE_MSG_NONE);
	EXPECT_EQ(roce_opseq_next(ROCE_MSG_WRITE, flags_of(kWriteLast)), ROCE_MSG_NONE);
	for (u8 op : {kSendOnly, kWriteOnly, kReadReq, kCmpSwap})
		EXPECT_EQ(roce_opseq_next(ROCE_MSG_NONE, flags_of(op)), ROCE_MSG_NONE)
			<< int(op);
}

// A whole multi-packet message in either kind walks NONE -> kind -> NONE,
// and a second FIRST inside it is refused at every step.
TEST(OpSeq, WholeMessagesAndAFirstInsideThem)
{
	const u8 seqs[2][4] = {{kSendFirst, kSendMiddle, kSendMiddle, kSendLast},
			       {kWriteFirst, kWriteMiddle, kWriteMiddle, kWriteLast}};

	for (const auto &seq : seqs) {
		roce_msg_in_progress cur = ROCE_MSG_NONE;

		for (u8 op : seq) {
			ASSERT_TRUE(roce_opseq_ok(cur, flags_of(op))) << int(op);
			cur = roce_opseq_next(cur, flags_of(op));
			if (op != seq[3]) {
				EXPECT_FALSE(roce_opseq_ok(cur, flags_of(kSendFirst)));
				EXPECT_FALSE(roce_opseq_ok(cur, flags_of(kWriteFirst)));
			}
		}
		EXPECT_EQ(cur, ROCE_MSG_NONE);
	}
}

}  // namespace

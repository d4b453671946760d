// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// The RC requester's PSN bookkeeping: what ACKs complete, which message a
// response belongs to, and where go-back-N resumes.
#include <gtest/gtest.h>

#include <cstddef>
#include <vector>

#include "psn.h"
#include "sqtrack.h"

namespace {

constexpr u32 kNone = 0xffffffffu;

// The slot roce_sq_find() names for @psn, or kNone.
u32 slot_of(const roce_sq_view &v, u32 psn)
{
	u32 slot;
	return roce_sq_find(&v, psn, &slot) ? slot : kNone;
}

constexpr u32 kMtu = 1024;

// Slots shaped like the module's shadow: the message sits inside a bigger
// slot, not at its start.
struct Slot {
	u64 before[3];
	roce_sq_msg msg;
	u8 after[40];
};

struct Sq {
	std::vector<Slot> slots;
	u32 retire, fetch;
	u32 next_psn;

	Sq(u32 nslots, u32 start_index, u32 first_psn)
		: slots(nslots), retire(start_index), fetch(start_index),
		  next_psn(first_psn)
	{
	}

	roce_sq_view view()
	{
		return roce_sq_view{reinterpret_cast<u8 *>(slots.data()), sizeof(Slot),
				    offsetof(Slot, msg), static_cast<u32>(slots.size() - 1),
				    retire, fetch};
	}

	roce_sq_msg &at(u32 i) { return slots[i & (slots.size() - 1)].msg; }

	// The state of each message from the oldest, as the ACKs left them.
	std::vector<int> states()
	{
		std::vector<int> out;
		for (u32 i = retire; i != fetch; i++)
			out.push_back(at(i).state);
		return out;
	}

	// Posts a message and, if @sent, gives it PSNs as the requester does.
	u32 post(u32 length, bool rd_atomic = false, bool sent = true,
		 bool one_packet = false)
	{
		u32 i = fetch++;
		roce_sq_msg &m = at(i);
		m = roce_sq_msg{};
		m.length = length;
		m.rd_atomic = rd_atomic;
		if (sent) {
			m.first_psn = next_psn;
			m.npsn = roce_sq_npsn(length, kMtu, one_packet);
			m.last_psn = psn_add(m.first_psn, m.npsn - 1);
			m.state = ROCE_SQ_SENT;
			next_psn = psn_add(m.last_psn, 1);
		}
		return i;
	}
};

TEST(SqTrack, PacketsPerMessage)
{
	EXPECT_EQ(roce_sq_npsn(0, kMtu, false), 1u);
	EXPECT_EQ(roce_sq_npsn(1, kMtu, false), 1u);
	EXPECT_EQ(roce_sq_npsn(kMtu, kMtu, false), 1u);
	EXPECT_EQ(roce_sq_npsn(kMtu + 1, kMtu, false), 2u);
	EXPECT_EQ(roce_sq_npsn(0x80000000u, 4096, false), 0x80000u);
	EXPECT_EQ(roce_sq_npsn(0xffffffffu, 256, false), 0x1000000u);
	EXPECT_EQ(roce_sq_npsn(4096, kMtu, true), 1u);	// UD, atomics
	EXPECT_EQ(roce_sq_npsn(4096, 0, false), 1u);	// no MTU yet: no division
}

TEST(SqTrack, AckCompletesWholeMessagesOnly)
{
	Sq sq(8, 0, 100);
	u32 a = sq.post(100);		// PSN 100
	u32 b = sq.post(3 * kMtu);	// PSNs 101..103
	roce_sq_view v = sq.view();
	// An ACK in the middle of b completes a, not b.
	EXPECT_EQ(roce_sq_ack_through(&v, 100, 102), 103u);
	EXPECT_EQ(sq.at(a).state, ROCE_SQ_DONE);
	EXPECT_EQ(sq.at(b).state, ROCE_SQ_SENT);
	EXPECT_EQ(roce_sq_ack_through(&v, 103, 103), 104u);
	EXPECT_EQ(sq.at(b).state, ROCE_SQ_DONE);
}

TEST(SqTrack, OldAndRepeatedAcksChangeNothing)
{
	Sq sq(8, 0, 100);
	u32 a = sq.post(10);
	roce_sq_view v = sq.view();
	// The last ACK again (comp_psn - 1) and one long before it.
	EXPECT_EQ(roce_sq_ack_through(&v, 100, 99), 100u);
	EXPECT_EQ(roce_sq_ack_through(&v, 100, 50), 100u);
	EXPECT_EQ(sq.at(a).state, ROCE_SQ_SENT);
}

TEST(SqTrack, AckStopsBeforeAnUnansweredRead)
{
	Sq sq(8, 0, 10);
	sq.post(8);				// 10
	u32 r = sq.post(2 * kMtu, true);	// 11..12: READ
	u32 s = sq.post(8);			// 13
	roce_sq_view v = sq.view();
	// The ACK of 13 overtook the READ's responses: only 10 is done.
	EXPECT_EQ(roce_sq_ack_through(&v, 10, 13), 11u);
	EXPECT_EQ(sq.states(), (std::vector<int>{ROCE_SQ_DONE, ROCE_SQ_SENT, ROCE_SQ_SENT}));
	// The response's own PSN is still found, as the READ's; so is 13.
	EXPECT_EQ(slot_of(v, 12), r);
	EXPECT_EQ(slot_of(v, 13), s);
}

TEST(SqTrack, AcksAcrossThePsnWrap)
{
	Sq sq(8, 0xfffffffe, ROCE_PSN_MASK - 1);	// slot indices wrap too
	sq.post(4 * kMtu);		// 0xfffffe..0x000001: a
	u32 b = sq.post(1);		// 2
	roce_sq_view v = sq.view();
	EXPECT_EQ(roce_sq_ack_through(&v, ROCE_PSN_MASK - 1, 1), 2u);
	EXPECT_EQ(sq.states(), (std::vector<int>{ROCE_SQ_DONE, ROCE_SQ_SENT}));
	EXPECT_EQ(slot_of(v, 2), b);
	EXPECT_EQ(slot_of(v, 0), kNone);	// a is done: no response of it
}

TEST(SqTrack, FindStopsAtTheFirstMessageNeverSent)
{
	Sq sq(8, 0, 0);
	sq.post(8);				// 0
	sq.post(8, false, false);		// no PSNs yet
	roce_sq_view v = sq.view();
	EXPECT_EQ(slot_of(v, 0), 0u);
	EXPECT_EQ(slot_of(v, 1), kNone);
	EXPECT_EQ(slot_of(v, 0x800000), kNone);
}

TEST(SqTrack, GhostResponsesAreNotOutstanding)
{
	Sq sq(8, 0, 500);
	sq.post(8);	// 500
	sq.post(8);	// 501
	roce_sq_view v = sq.view();
	EXPECT_TRUE(roce_sq_outstanding(&v, 500, 502, 500));
	EXPECT_TRUE(roce_sq_outstanding(&v, 500, 502, 501));
	EXPECT_FALSE(roce_sq_outstanding(&v, 500, 502, 502));	// never sent
	EXPECT_FALSE(roce_sq_outstanding(&v, 500, 502, 499));	// answered
	EXPECT_FALSE(roce_sq_outstanding(&v, 500, 502, 0x123456));
}

TEST(SqTrack, SeekBackResendsFromTheLostPacket)
{
	Sq sq(8, 0, 0);
	u32 a = sq.post(8);		// 0, acknowledged below
	u32 b = sq.post(4 * kMtu);	// 1..4
	u32 c = sq.post(8);		// 5
	roce_sq_view v = sq.view();
	ASSERT_EQ(roce_sq_ack_through(&v, 0, 2), 3u);	// through b's 2nd packet
	roce_sq_pos pos;
	roce_sq_seek(&v, 3, kMtu, &pos);
	EXPECT_EQ(pos.cur, b);
	EXPECT_EQ(pos.psn, 3u);
	EXPECT_EQ(pos.offset, 2 * kMtu);
	EXPECT_EQ(pos.rd_atomic, 0u);
	EXPECT_EQ(sq.at(a).state, ROCE_SQ_DONE);
	EXPECT_EQ(sq.at(b).state, ROCE_SQ_QUEUED);
	EXPECT_EQ(sq.at(c).state, ROCE_SQ_QUEUED);
}

TEST(SqTrack, SeekAsksAReadOnlyForWhatDidNotCome)
{
	Sq sq(8, 0, 0);
	sq.post(8);				// 0: SEND
	u32 r = sq.post(3 * kMtu, true);	// 1..3: READ
	roce_sq_view v = sq.view();
	ASSERT_EQ(roce_sq_ack_through(&v, 0, 0), 1u);
	roce_sq_pos pos;
	roce_sq_seek(&v, 2, kMtu, &pos);	// its first response came
	EXPECT_EQ(pos.cur, r);
	EXPECT_EQ(pos.psn, 2u);
	EXPECT_EQ(pos.offset, kMtu);
	roce_sq_seek(&v, 1, kMtu, &pos);	// none came
	EXPECT_EQ(pos.psn, 1u);
	EXPECT_EQ(pos.offset, 0u);
}

TEST(SqTrack, SeekRestartsAnAtomicWhole)
{
	Sq sq(8, 0, 0);
	u32 a = sq.post(8, true, true, true);	// 0: an atomic, one PSN
	roce_sq_view v = sq.view();
	roce_sq_pos pos;
	roce_sq_seek(&v, 0, kMtu, &pos);
	EXPECT_EQ(pos.cur, a);
	EXPECT_EQ(pos.psn, 0u);
	EXPECT_EQ(pos.offset, 0u);
}

TEST(SqTrack, SeekCountsReadsAndAtomicsStillOutstandingBefore)
{
	Sq sq(16, 0, 0);
	sq.post(kMtu, true);			// 0: READ, its response came
	sq.post(8, true, true, true);		// 1: atomic, answered
	u32 s = sq.post(2 * kMtu);		// 2..3
	roce_sq_view v = sq.view();
	roce_sq_pos pos;
	roce_sq_seek(&v, 3, kMtu, &pos);
	EXPECT_EQ(pos.cur, s);
	EXPECT_EQ(pos.rd_atomic, 2u);
	EXPECT_EQ(pos.psn, 3u);
	EXPECT_EQ(pos.offset, kMtu);
}

TEST(SqTrack, SeekForwardPastWhatArrivedAfterARewind)
{
	Sq sq(8, 0, 0);
	sq.post(8);		// 0
	sq.post(8);		// 1
	u32 c = sq.post(8, false, false);	// not sent yet
	roce_sq_view v = sq.view();
	roce_sq_pos pos;
	// After a rewind to 0, an ACK shows 0 and 1 arrived after all.
	ASSERT_EQ(roce_sq_ack_through(&v, 0, 1), 2u);
	roce_sq_seek(&v, 2, kMtu, &pos);
	EXPECT_EQ(pos.cur, c);
	EXPECT_EQ(pos.psn, 2u);
	EXPECT_EQ(pos.offset, 0u);
}

TEST(SqTrack, SeekWithEverythingAcknowledged)
{
	Sq sq(8, 5, 77);
	sq.post(8);
	roce_sq_view v = sq.view();
	ASSERT_EQ(roce_sq_ack_through(&v, 77, 77), 78u);
	roce_sq_pos pos;
	roce_sq_seek(&v, 78, kMtu, &pos);
	EXPECT_EQ(pos.cur, sq.fetch);
	EXPECT_EQ(pos.psn, 78u);
	EXPECT_EQ(pos.offset, 0u);
	// And on an empty queue.
	Sq empty(4, 3, 9);
	roce_sq_view e = empty.view();
	roce_sq_seek(&e, 9, kMtu, &pos);
	EXPECT_EQ(pos.cur, 3u);
	EXPECT_EQ(pos.psn, 9u);
}

TEST(SqTrack, SeekOffsetNeverPassesTheMessage)
{
	Sq sq(8, 0, 0);
	u32 m = sq.post(2 * kMtu + 10);	// 0..2
	roce_sq_view v = sq.view();
	roce_sq_pos pos;
	roce_sq_seek(&v, 2, kMtu, &pos);
	EXPECT_EQ(pos.cur, m);
	EXPECT_EQ(pos.offset, 2 * kMtu);
	// A message of 4 GiB - 1 at MTU 4096: the offset is computed in 64 bits.
	Sq big(8, 0, 0);
	u32 b = big.post(0xffffffffu);
	roce_sq_view bv = big.view();
	roce_sq_seek(&bv, 0x100000 - 1, 4096, &pos);
	EXPECT_EQ(pos.cur, b);
	EXPECT_EQ(pos.offset, 0xfffff000u);
}

// Where each READ response goes, and which responses no READ sends.
TEST(SqTrack, ReadResponsesLandInsideTheirRead)
{
	roce_sq_msg m{};
	m.length = 2 * kMtu + 10;	// FIRST, MIDDLE, LAST of 10 bytes
	m.first_psn = 0xfffffe;		// across the PSN wrap
	u32 off = kNone;
	EXPECT_TRUE(roce_sq_read_resp_offset(&m, 0xfffffe, kMtu, false, kMtu, &off));
	EXPECT_EQ(off, 0u);
	EXPECT_TRUE(roce_sq_read_resp_offset(&m, 0xffffff, kMtu, false, kMtu, &off));
	EXPECT_EQ(off, kMtu);
	EXPECT_TRUE(roce_sq_read_resp_offset(&m, 0, kMtu, true, 10, &off));
	EXPECT_EQ(off, 2 * kMtu);
	// Bad responses: more bytes than asked, a last one short or early,
	// a middle one short, one past the READ or before it.
	EXPECT_FALSE(roce_sq_read_resp_offset(&m, 0, kMtu, true, 11, &off));
	EXPECT_FALSE(roce_sq_read_resp_offset(&m, 0, kMtu, true, 9, &off));
	EXPECT_FALSE(roce_sq_read_resp_offset(&m, 0xffffff, kMtu, true, kMtu, &off));
	EXPECT_FALSE(roce_sq_read_resp_offset(&m, 0xffffff, kMtu, false, kMtu - 1, &off));
	EXPECT_FALSE(roce_sq_read_resp_offset(&m, 0, kMtu, false, kMtu, &off));
	EXPECT_FALSE(roce_sq_read_resp_offset(&m, 1, kMtu, true, 0, &off));
	EXPECT_FALSE(roce_sq_read_resp_offset(&m, 0xfffffd, kMtu, false, kMtu, &off));
	// A zero-byte READ: one empty response.
	roce_sq_msg z{};
	EXPECT_TRUE(roce_sq_read_resp_offset(&z, 0, kMtu, true, 0, &off));
	EXPECT_EQ(off, 0u);
	EXPECT_FALSE(roce_sq_read_resp_offset(&z, 0, kMtu, true, 1, &off));
}

TEST(SqTrack, ReadResponseOffsetsDoNotWrap)
{
	// A 2 GiB READ at MTU 256 takes 2^23 PSNs.  At MTU 4096, index 2^20
	// is 4 GiB: in 32 bits that offset would be 0 and the response fit.
	roce_sq_msg m{};
	m.length = 0x80000000u;
	u32 off = kNone;
	EXPECT_TRUE(roce_sq_read_resp_offset(&m, (1u << 23) - 1, 256, true, 256, &off));
	EXPECT_EQ(off, 0x80000000u - 256);
	EXPECT_FALSE(roce_sq_read_resp_offset(&m, 1u << 20, 4096, false, 4096, &off));
	EXPECT_FALSE(roce_sq_read_resp_offset(&m, 1u << 20, 4096, true, 0, &off));
}

}  // namespace

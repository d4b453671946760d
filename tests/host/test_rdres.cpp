// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// The responder's READ/atomic resources: the limit, FIFO order across any
// number of wraps, duplicates found by PSN, READs restarted mid-way.
#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <random>
#include <vector>

#include "psn.h"
#include "rdres.h"

namespace {

struct Ring {
	std::vector<roce_rd_res> res;
	roce_rd_ring ring{};

	explicit Ring(u32 cap) : res(cap)
	{
		roce_rd_init(&ring, res.data(), cap);
	}

	roce_rd_res *add_read(u32 psn, u32 npsn, u32 len)
	{
		roce_rd_res *r = roce_rd_add(&ring);
		r->kind = ROCE_RD_READ;
		r->first_psn = r->next_psn = psn;
		r->last_psn = psn_add(psn, npsn - 1);
		r->length = len;
		return r;
	}

	roce_rd_res *add_atomic(u32 psn, u64 orig)
	{
		roce_rd_res *r = roce_rd_add(&ring);
		r->kind = ROCE_RD_ATOMIC;
		r->first_psn = r->last_psn = psn;
		r->atomic_orig = orig;
		return r;
	}
};

TEST(RdRes, LimitHoldsWhileTheOldestReadIsStillSending)
{
	Ring t(128);
	for (u32 i = 0; i < 3; i++) {
		ASSERT_TRUE(roce_rd_make_room(&t.ring, 3));
		t.add_read(i, 1, 64);
	}
	// A fourth outstanding request breaks a limit of 3.
	EXPECT_FALSE(roce_rd_make_room(&t.ring, 3));
	EXPECT_EQ(t.ring.count, 3u);
	// Once the oldest has been answered, it may be forgotten.
	roce_rd_next_read(&t.ring)->done = true;
	EXPECT_TRUE(roce_rd_make_room(&t.ring, 3));
	EXPECT_EQ(t.ring.count, 2u);
	EXPECT_EQ(roce_rd_find(&t.ring, 0), nullptr);
}

TEST(RdRes, AtomicsAreFinishedAtOnce)
{
	Ring t(128);
	ASSERT_TRUE(roce_rd_make_room(&t.ring, 1));
	t.add_atomic(10, 7);
	ASSERT_TRUE(roce_rd_make_room(&t.ring, 1));
	t.add_atomic(11, 8);
	EXPECT_EQ(roce_rd_find(&t.ring, 10), nullptr);
	ASSERT_NE(roce_rd_find(&t.ring, 11), nullptr);
	EXPECT_EQ(roce_rd_find(&t.ring, 11)->atomic_orig, 8u);
}

TEST(RdRes, ZeroLimitMeansOne)
{
	Ring t(4);
	ASSERT_TRUE(roce_rd_make_room(&t.ring, 0));
	t.add_atomic(1, 0);
	ASSERT_TRUE(roce_rd_make_room(&t.ring, 0));
	EXPECT_EQ(t.ring.count, 0u);
}

// The review's 2.8: a free-running u32 taken % 3 jumps at 2^32 and the
// newest entry lands on a live one.  Here indices wrap at the capacity, so
// order must survive any number of wraps, with any limit.
TEST(RdRes, OrderSurvivesManyWrapsWithALimitThatIsNoPowerOfTwo)
{
	Ring t(128);
	std::deque<u32> model;
	for (u32 psn = 0; psn < 1'000'000; psn++) {
		ASSERT_TRUE(roce_rd_make_room(&t.ring, 3));
		while (model.size() >= 3)
			model.pop_front();
		t.add_atomic(psn & ROCE_PSN_MASK, psn);
		model.push_back(psn);
		ASSERT_LT(t.ring.tail, t.ring.cap);
	}
	ASSERT_EQ(t.ring.count, model.size());
	for (u32 psn : model) {
		roce_rd_res *r = roce_rd_find(&t.ring, psn & ROCE_PSN_MASK);
		ASSERT_NE(r, nullptr) << psn;
		EXPECT_EQ(r->atomic_orig, psn);
	}
}

TEST(RdRes, LoweredLimitDropsFinishedEntriesDownToIt)
{
	Ring t(8);
	for (u32 i = 0; i < 8; i++) {
		ASSERT_TRUE(roce_rd_make_room(&t.ring, 8));
		t.add_atomic(i, i);
	}
	// modify_qp lowered max_dest_rd_atomic to 2 with 8 live entries.
	ASSERT_TRUE(roce_rd_make_room(&t.ring, 2));
	EXPECT_EQ(t.ring.count, 1u);
	EXPECT_NE(roce_rd_find(&t.ring, 7), nullptr);
	// A limit beyond the capacity is the capacity.
	for (u32 i = 8; i < 20; i++) {
		ASSERT_TRUE(roce_rd_make_room(&t.ring, 1000));
		t.add_atomic(i, i);
		ASSERT_LE(t.ring.count, t.ring.cap);
	}
}

TEST(RdRes, FindMatchesWholeRangesAcrossThePsnWrap)
{
	Ring t(16);
	ASSERT_TRUE(roce_rd_make_room(&t.ring, 16));
	t.add_read(ROCE_PSN_MASK - 1, 4, 4096);	// PSNs 0xfffffe..0x000001
	ASSERT_TRUE(roce_rd_make_room(&t.ring, 16));
	t.add_atomic(2, 5);
	for (u32 psn : {ROCE_PSN_MASK - 1, ROCE_PSN_MASK, 0u, 1u})
		EXPECT_EQ(roce_rd_find(&t.ring, psn)->kind, ROCE_RD_READ) << psn;
	EXPECT_EQ(roce_rd_find(&t.ring, 2)->kind, ROCE_RD_ATOMIC);
	EXPECT_EQ(roce_rd_find(&t.ring, 3), nullptr);
	EXPECT_EQ(roce_rd_find(&t.ring, ROCE_PSN_MASK - 2), nullptr);
}

TEST(RdRes, NewestEntryAnswersWhenRangesAlias)
{
	Ring t(16);
	ASSERT_TRUE(roce_rd_make_room(&t.ring, 16));
	t.add_atomic(100, 1);	// 2^24 PSNs ago
	ASSERT_TRUE(roce_rd_make_room(&t.ring, 16));
	t.add_atomic(100, 2);
	EXPECT_EQ(roce_rd_find(&t.ring, 100)->atomic_orig, 2u);
}

TEST(RdRes, NextReadSkipsAtomicsAndFinishedReads)
{
	Ring t(16);
	ASSERT_TRUE(roce_rd_make_room(&t.ring, 16));
	t.add_read(0, 1, 8)->done = true;
	ASSERT_TRUE(roce_rd_make_room(&t.ring, 16));
	t.add_atomic(1, 0);
	ASSERT_TRUE(roce_rd_make_room(&t.ring, 16));
	roce_rd_res *want = t.add_read(2, 3, 3000);
	ASSERT_TRUE(roce_rd_make_room(&t.ring, 16));
	t.add_read(5, 1, 8);
	EXPECT_EQ(roce_rd_next_read(&t.ring), want);
}

TEST(RdRes, RestartResendsFromTheAskedPsn)
{
	Ring t(4);
	ASSERT_TRUE(roce_rd_make_room(&t.ring, 4));
	roce_rd_res *r = t.add_read(ROCE_PSN_MASK, 3, 2500);	// 1024 MTU
	r->sent = 2500;
	r->next_psn = 2;
	r->done = true;
	roce_rd_restart_read(r, 0, 1024);	// the second PSN, after the wrap
	EXPECT_EQ(r->next_psn, 0u);
	EXPECT_EQ(r->sent, 1024u);
	EXPECT_FALSE(r->done);
	EXPECT_EQ(roce_rd_next_read(&t.ring), r);
	roce_rd_restart_read(r, ROCE_PSN_MASK, 1024);
	EXPECT_EQ(r->sent, 0u);
	// A zero-length READ has one PSN and nothing to send.
	roce_rd_res *z = t.add_read(7, 1, 0);
	roce_rd_restart_read(z, 7, 4096);
	EXPECT_EQ(z->sent, 0u);
}

// Random operations against a model: count and order never drift, the
// limit always holds, nothing is returned that was forgotten.
/*
 * A READ answered in full, then replayed for a duplicate request that was
 * still on its way when the requester already had every response: the
 * requester's next READ (its one credit back) must find room, not an
 * "exceeded limit" NAK.  A READ never answered in full keeps its slot.
 */
TEST(RdRes, AReplayOfAnAnsweredReadGivesWayToTheNextRead)
{
	Ring t(4);
	ASSERT_TRUE(roce_rd_make_room(&t.ring, 1));
	roce_rd_res *r = t.add_read(100, 4, 4096);
	r->done = true;				/* every response sent */
	roce_rd_restart_read(r, 102, 1024);	/* a late duplicate */
	ASSERT_FALSE(r->done);
	EXPECT_TRUE(roce_rd_make_room(&t.ring, 1));
	EXPECT_EQ(t.ring.count, 0u);

	r = t.add_read(200, 4, 4096);
	roce_rd_restart_read(r, 201, 1024);	/* a duplicate mid-way */
	EXPECT_FALSE(roce_rd_make_room(&t.ring, 1));
}

TEST(RdRes, RandomOperationsAgreeWithAModel)
{
	std::mt19937 rng(1234);
	Ring t(128);
	struct Entry { u32 psn; bool read; bool done; };
	std::deque<Entry> model;
	u32 psn = 0xfff000;
	for (int step = 0; step < 200'000; step++) {
		u32 max = 1 + rng() % 7;
		switch (rng() % 3) {
		case 0: {
			bool ok = roce_rd_make_room(&t.ring, max);
			while (model.size() >= max && !(model.front().read && !model.front().done))
				model.pop_front();
			ASSERT_EQ(ok, model.size() < max);
			if (ok) {
				bool read = rng() & 1;
				if (read)
					t.add_read(psn, 1, 64);
				else
					t.add_atomic(psn, psn);
				model.push_back({psn, read, false});
				psn = psn_add(psn, 1);
			}
			break;
		}
		case 1: {
			roce_rd_res *r = roce_rd_next_read(&t.ring);
			auto it = std::find_if(model.begin(), model.end(),
					       [](const Entry &e) { return e.read && !e.done; });
			ASSERT_EQ(r == nullptr, it == model.end());
			if (r) {
				ASSERT_EQ(r->first_psn, it->psn);
				r->done = it->done = true;
			}
			break;
		}
		default: {
			u32 q = psn_sub(psn, 1 + rng() % 10);
			roce_rd_res *r = roce_rd_find(&t.ring, q);
			bool in = std::any_of(model.begin(), model.end(),
					      [q](const Entry &e) { return e.psn == q; });
			ASSERT_EQ(r != nullptr, in);
		}
		}
		ASSERT_EQ(t.ring.count, model.size());
	}
}

}  // namespace

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * CQ ring logic without a kernel: ibv_poll_cq copying CQEs and handing
 * slots back, index wrap, arming through the notify word, and the
 * ibv_cq_ex poll API including the call patterns of rc_pingpong and
 * pyverbs.
 */
#include "fake_ring.hpp"

#include <array>

#include <sched.h>

namespace {

using namespace sroce;
using namespace sroce::test;

void expect_wc_is(const ibv_wc &wc, const sroce_cqe &c)
{
	EXPECT_EQ(wc.wr_id, c.wr_id);
	EXPECT_EQ(static_cast<uint32_t>(wc.status), c.status);
	EXPECT_EQ(static_cast<uint32_t>(wc.opcode), c.opcode);
	EXPECT_EQ(wc.vendor_err, c.vendor_err);
	EXPECT_EQ(wc.byte_len, c.byte_len);
	EXPECT_EQ(wc.imm_data, c.imm_data);
	EXPECT_EQ(wc.qp_num, c.qp_num);
	EXPECT_EQ(wc.src_qp, c.src_qp);
	EXPECT_EQ(wc.wc_flags, c.wc_flags);
	EXPECT_EQ(wc.pkey_index, c.pkey_index);
	EXPECT_EQ(wc.slid, c.slid);
	EXPECT_EQ(wc.sl, c.sl);
	EXPECT_EQ(wc.dlid_path_bits, c.dlid_path_bits);
}

TEST(PollCq, EmptyCqPollsNothing)
{
	FakeCq f;
	std::array<ibv_wc, 4> wc{};
	EXPECT_EQ(poll_cq(f.ibcq(), 4, wc.data()), 0);
	EXPECT_EQ(f.ring.ctrl()->consumer, 0u);
}

TEST(PollCq, CopiesEveryFieldAndAdvancesConsumer)
{
	FakeCq f;
	for (uint32_t n = 0; n < 3; ++n)
		f.produce(make_cqe(n));

	std::array<ibv_wc, 2> wc{};
	ASSERT_EQ(poll_cq(f.ibcq(), 2, wc.data()), 2);
	expect_wc_is(wc[0], make_cqe(0));
	expect_wc_is(wc[1], make_cqe(1));
	EXPECT_EQ(f.ring.ctrl()->consumer, 2u) << "slots handed back";

	ASSERT_EQ(poll_cq(f.ibcq(), 2, wc.data()), 1);
	expect_wc_is(wc[0], make_cqe(2));
	EXPECT_EQ(f.ring.ctrl()->consumer, 3u);
	EXPECT_EQ(poll_cq(f.ibcq(), 2, wc.data()), 0);

	/* ne <= 0 polls nothing and touches nothing. */
	f.produce(make_cqe(3));
	EXPECT_EQ(poll_cq(f.ibcq(), 0, wc.data()), 0);
	EXPECT_EQ(poll_cq(f.ibcq(), -1, wc.data()), 0);
	EXPECT_EQ(f.ring.ctrl()->consumer, 3u);
}

TEST(PollCq, WrapsAroundTwoToThe32)
{
	FakeCq f(4, 0xfffffff0u);
	uint32_t next = 0;
	for (int round = 0; round < 20; ++round) {
		f.produce(make_cqe(next));
		f.produce(make_cqe(next + 1));
		f.produce(make_cqe(next + 2));
		std::array<ibv_wc, 8> wc{};
		ASSERT_EQ(poll_cq(f.ibcq(), 8, wc.data()), 3) << round;
		for (uint32_t i = 0; i < 3; ++i)
			expect_wc_is(wc[i], make_cqe(next + i));
		next += 3;
	}
	EXPECT_EQ(f.ring.ctrl()->consumer, 0xfffffff0u + 60);
}

TEST(PollCq, NeverReadsMoreThanTheRingHolds)
{
	FakeCq f(4);
	f.ring.ctrl()->producer = 1000; /* a broken kernel */
	std::array<ibv_wc, 16> wc{};
	EXPECT_EQ(poll_cq(f.ibcq(), 16, wc.data()), 4);
}

TEST(PollCq, DeadCqReportsAnError)
{
	FakeCq f;
	f.cq.ring.detach(); /* as after a resize whose new ring won't map */
	std::array<ibv_wc, 1> wc{};
	EXPECT_LT(poll_cq(f.ibcq(), 1, wc.data()), 0);
	EXPECT_NE(req_notify_cq(f.ibcq(), 0), 0);
	ibv_poll_cq_attr attr{};
	EXPECT_EQ(f.cqx()->start_poll(f.cqx(), &attr), EIO);
}

/* make_cqe(n) with the QP number @qpn. */
sroce_cqe cqe_of(uint32_t qpn, uint32_t n)
{
	sroce_cqe c = make_cqe(n);
	c.qp_num = qpn;
	return c;
}

TEST(DiscardQpCompletions, KeepsTheOthersInOrderAcrossTheWrap)
{
	FakeCq f(8, 0xfffffffcu); /* the unread CQEs straddle 2^32 */
	const uint32_t qpns[] = {7, 9, 7, 7, 9, 11, 7};
	for (uint32_t i = 0; i < 7; ++i)
		f.produce(cqe_of(qpns[i], i));
	/* What the kernel may write next, beyond its producer index. */
	const sroce_cqe beyond = cqe_of(42, 99);
	std::memcpy(f.ring.slot(f.ring.ctrl()->producer), &beyond, sizeof(beyond));

	EXPECT_EQ(discard_qp_completions(f.ibcq(), 7), 4u);
	EXPECT_EQ(f.ring.ctrl()->consumer, 0xfffffffcu + 4) << "slots handed back";
	EXPECT_EQ(std::memcmp(f.ring.slot(f.ring.ctrl()->producer), &beyond,
			      sizeof(beyond)), 0) << "nothing written at the producer";

	std::array<ibv_wc, 8> wc{};
	ASSERT_EQ(poll_cq(f.ibcq(), 8, wc.data()), 3);
	expect_wc_is(wc[0], cqe_of(9, 1));
	expect_wc_is(wc[1], cqe_of(9, 4));
	expect_wc_is(wc[2], cqe_of(11, 5));

	/* The ring goes on from there. */
	f.produce(cqe_of(9, 20));
	ASSERT_EQ(poll_cq(f.ibcq(), 8, wc.data()), 1);
	expect_wc_is(wc[0], cqe_of(9, 20));
}

TEST(DiscardQpCompletions, ChangesNothingWithoutThatQp)
{
	FakeCq f(4);
	EXPECT_EQ(discard_qp_completions(f.ibcq(), 7), 0u) << "empty";
	for (uint32_t i = 0; i < 4; ++i)
		f.produce(cqe_of(9, i)); /* full */
	EXPECT_EQ(discard_qp_completions(f.ibcq(), 7), 0u);
	EXPECT_EQ(f.ring.ctrl()->consumer, 0u);
	std::array<ibv_wc, 4> wc{};
	ASSERT_EQ(poll_cq(f.ibcq(), 4, wc.data()), 4);
	for (uint32_t i = 0; i < 4; ++i)
		expect_wc_is(wc[i], cqe_of(9, i));
}

TEST(DiscardQpCompletions, AFullRingOfThatQpEmpties)
{
	FakeCq f(4);
	for (uint32_t i = 0; i < 4; ++i)
		f.produce(cqe_of(7, i));
	EXPECT_EQ(discard_qp_completions(f.ibcq(), 7), 4u);
	std::array<ibv_wc, 4> wc{};
	EXPECT_EQ(poll_cq(f.ibcq(), 4, wc.data()), 0);
	f.ring.ctrl()->producer = 1000; /* a broken kernel: bounded by the ring */
	EXPECT_LE(discard_qp_completions(f.ibcq(), 7), 4u);
	f.cq.ring.detach(); /* a dead CQ: nothing to do */
	EXPECT_EQ(discard_qp_completions(f.ibcq(), 7), 0u);
}

TEST(ReqNotifyCq, SetsTheArmFlagsWithoutClearingOthers)
{
	FakeCq f;
	EXPECT_EQ(req_notify_cq(f.ibcq(), 0), 0);
	EXPECT_EQ(f.ring.ctrl()->notify, SROCE_CQ_ARM_NEXT);
	EXPECT_EQ(req_notify_cq(f.ibcq(), 1), 0);
	EXPECT_EQ(f.ring.ctrl()->notify,
		  SROCE_CQ_ARM_NEXT | SROCE_CQ_ARM_SOLICITED);

	f.ring.ctrl()->notify = 0; /* the kernel fired the event */
	EXPECT_EQ(req_notify_cq(f.ibcq(), 1), 0);
	EXPECT_EQ(f.ring.ctrl()->notify, SROCE_CQ_ARM_SOLICITED);
}

/* The kernel's side of a solicited (or error) completion: its end first. */
void produce_solicited(FakeCq &f, uint32_t n)
{
	f.produce(make_cqe(n));
	f.ring.ctrl()->solicited_end = f.ring.ctrl()->producer;
}

TEST(ArmedOverUnpolled, AnArmOnAPolledCqNeedsNothing)
{
	FakeCq f;
	f.ring.ctrl()->notify = SROCE_CQ_ARM_NEXT;
	EXPECT_FALSE(armed_over_unpolled(f.cq));
	f.produce(make_cqe(0));
	std::array<ibv_wc, 1> wc{};
	ASSERT_EQ(poll_cq(f.ibcq(), 1, wc.data()), 1);
	EXPECT_FALSE(armed_over_unpolled(f.cq)) << "polled: nothing unpolled";
}

TEST(ArmedOverUnpolled, AnUnpolledCompletionNeedsTheEventUnlessItCame)
{
	FakeCq f(8, 0xfffffffeu); /* the indices wrap under it */
	f.produce(make_cqe(0));
	f.produce(make_cqe(1));
	f.ring.ctrl()->notify = SROCE_CQ_ARM_NEXT;
	EXPECT_TRUE(armed_over_unpolled(f.cq));
	f.ring.ctrl()->notify = 0; /* the kernel fired since the arm */
	EXPECT_FALSE(armed_over_unpolled(f.cq));
}

TEST(ArmedOverUnpolled, ASolicitedArmWaitsOnlyForASolicitedCompletion)
{
	FakeCq f(8, 0xfffffffdu);
	produce_solicited(f, 0);
	std::array<ibv_wc, 1> wc{};
	ASSERT_EQ(poll_cq(f.ibcq(), 1, wc.data()), 1);
	f.produce(make_cqe(1));
	f.produce(make_cqe(2));
	f.ring.ctrl()->notify = SROCE_CQ_ARM_SOLICITED;
	EXPECT_FALSE(armed_over_unpolled(f.cq)) << "the solicited one is polled";
	produce_solicited(f, 3);
	EXPECT_TRUE(armed_over_unpolled(f.cq));
	f.ring.ctrl()->notify = SROCE_CQ_ARM_SOLICITED | SROCE_CQ_ARM_NEXT;
	EXPECT_TRUE(armed_over_unpolled(f.cq));
}

TEST(CqEx, ExtendedPollBatch)
{
	FakeCq f;
	ibv_cq_ex *cq = f.cqx();
	ibv_poll_cq_attr attr{};

	EXPECT_EQ(cq->start_poll(cq, &attr), ENOENT);

	for (uint32_t n = 0; n < 3; ++n)
		f.produce(make_cqe(n));

	ASSERT_EQ(cq->start_poll(cq, &attr), 0);
	for (uint32_t n = 0; n < 3; ++n) {
		const sroce_cqe c = make_cqe(n);
		if (n) {
			ASSERT_EQ(cq->next_poll(cq), 0);
		}
		EXPECT_EQ(cq->wr_id, c.wr_id);
		EXPECT_EQ(static_cast<uint32_t>(cq->status), c.status);
		EXPECT_EQ(static_cast<uint32_t>(cq->read_opcode(cq)), c.opcode);
		EXPECT_EQ(cq->read_vendor_err(cq), c.vendor_err);
		EXPECT_EQ(cq->read_byte_len(cq), c.byte_len);
		EXPECT_EQ(cq->read_imm_data(cq), c.imm_data);
		EXPECT_EQ(cq->read_qp_num(cq), c.qp_num);
		EXPECT_EQ(cq->read_src_qp(cq), c.src_qp);
		EXPECT_EQ(cq->read_wc_flags(cq), c.wc_flags);
		EXPECT_EQ(cq->read_slid(cq), c.slid);
		EXPECT_EQ(cq->read_sl(cq), c.sl);
		EXPECT_EQ(cq->read_dlid_path_bits(cq), c.dlid_path_bits);
		EXPECT_EQ(cq->read_completion_ts(cq), c.timestamp);
		/* Nothing is handed back before end_poll. */
		EXPECT_EQ(f.ring.ctrl()->consumer, 0u);
	}
	EXPECT_EQ(cq->next_poll(cq), ENOENT);
	EXPECT_EQ(cq->next_poll(cq), ENOENT) << "retrying consumes nothing";

	/* A CQE arriving mid-batch is found by a later next_poll. */
	f.produce(make_cqe(3));
	ASSERT_EQ(cq->next_poll(cq), 0);
	EXPECT_EQ(cq->wr_id, make_cqe(3).wr_id);
	cq->end_poll(cq);
	EXPECT_EQ(f.ring.ctrl()->consumer, 4u);

	/* The lock was released: the plain poll API works again. */
	std::array<ibv_wc, 1> wc{};
	EXPECT_EQ(poll_cq(f.ibcq(), 1, wc.data()), 0);
}

TEST(CqEx, EndPollAfterASuccessfulNextConsumesTheCurrentCqe)
{
	/* rc_pingpong: start, next (success), end. */
	FakeCq f;
	ibv_cq_ex *cq = f.cqx();
	ibv_poll_cq_attr attr{};
	for (uint32_t n = 0; n < 3; ++n)
		f.produce(make_cqe(n));
	ASSERT_EQ(cq->start_poll(cq, &attr), 0);
	ASSERT_EQ(cq->next_poll(cq), 0);
	cq->end_poll(cq);
	EXPECT_EQ(f.ring.ctrl()->consumer, 2u);

	std::array<ibv_wc, 4> wc{};
	ASSERT_EQ(poll_cq(f.ibcq(), 4, wc.data()), 1);
	expect_wc_is(wc[0], make_cqe(2));
}

TEST(CqEx, EndPollWithoutABatchIsHarmless)
{
	/* pyverbs calls end_poll in `finally` even when start_poll failed. */
	FakeCq f;
	ibv_cq_ex *cq = f.cqx();
	ibv_poll_cq_attr attr{};
	EXPECT_EQ(cq->start_poll(cq, &attr), ENOENT);
	cq->end_poll(cq);
	f.produce(make_cqe(0));
	ASSERT_EQ(cq->start_poll(cq, &attr), 0);
	cq->end_poll(cq);
	cq->end_poll(cq);
	EXPECT_EQ(f.ring.ctrl()->consumer, 1u);
}

TEST(CqEx, RejectsNonZeroPollAttrCompMask)
{
	FakeCq f;
	f.produce(make_cqe(0));
	ibv_poll_cq_attr attr{};
	attr.comp_mask = 1;
	EXPECT_EQ(f.cqx()->start_poll(f.cqx(), &attr), EINVAL);
	attr.comp_mask = 0;
	EXPECT_EQ(f.cqx()->start_poll(f.cqx(), &attr), 0);
	f.cqx()->end_poll(f.cqx());
}

TEST(CqEx, WrapsAroundTwoToThe32)
{
	FakeCq f(4, 0xfffffffdu);
	ibv_cq_ex *cq = f.cqx();
	ibv_poll_cq_attr attr{};
	for (uint32_t n = 0; n < 4; ++n)
		f.produce(make_cqe(n));
	ASSERT_EQ(cq->start_poll(cq, &attr), 0);
	for (uint32_t n = 1; n < 4; ++n) {
		ASSERT_EQ(cq->next_poll(cq), 0);
		EXPECT_EQ(cq->wr_id, make_cqe(n).wr_id);
	}
	EXPECT_EQ(cq->next_poll(cq), ENOENT);
	cq->end_poll(cq);
	EXPECT_EQ(f.ring.ctrl()->consumer, 1u);
}

TEST(CqEx, UnsupportedReadersStayNull)
{
	FakeCq f;
	EXPECT_EQ(f.cqx()->read_cvlan, nullptr);
	EXPECT_EQ(f.cqx()->read_flow_tag, nullptr);
	EXPECT_EQ(f.cqx()->read_tm_info, nullptr);
	EXPECT_EQ(f.cqx()->read_completion_wallclock_ns, nullptr);
}

TEST(CqEx, CreateRejectsWhatItCannotDo)
{
	/* These fail before any command reaches a kernel. */
	ibv_cq_init_attr_ex attr{};
	attr.cqe = 4;

	attr.wc_flags = IBV_WC_EX_WITH_CVLAN;
	errno = 0;
	EXPECT_EQ(create_cq_ex(nullptr, &attr), nullptr);
	EXPECT_EQ(errno, EOPNOTSUPP);
	attr.wc_flags = IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK;
	EXPECT_EQ(create_cq_ex(nullptr, &attr), nullptr);
	EXPECT_EQ(errno, EOPNOTSUPP);

	attr.wc_flags = IBV_WC_STANDARD_FLAGS;
	attr.comp_mask = IBV_CQ_INIT_ATTR_MASK_FLAGS;
	attr.flags = IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN;
	EXPECT_EQ(create_cq_ex(nullptr, &attr), nullptr);
	EXPECT_EQ(errno, EOPNOTSUPP);

	attr.flags = 0;
	attr.comp_mask = IBV_CQ_INIT_ATTR_MASK_PD;
	EXPECT_EQ(create_cq_ex(nullptr, &attr), nullptr);
	EXPECT_EQ(errno, EOPNOTSUPP);

	attr.comp_mask = 1u << 7;
	EXPECT_EQ(create_cq_ex(nullptr, &attr), nullptr);
	EXPECT_EQ(errno, EINVAL);

	static_assert((kSupportedWcFlags & IBV_WC_STANDARD_FLAGS) ==
		      IBV_WC_STANDARD_FLAGS);
	static_assert(kSupportedWcFlags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP);
}

TEST(Cq, RingGeometryIsChecked)
{
	FakeRing small(4, 32); /* slots smaller than a CQE */
	Cq cq;
	EXPECT_EQ(init_cq_ring(cq, small.base(), small.length(), 4, 32),
		  EPROTO);
	FakeRing ok(4, 64);
	EXPECT_EQ(init_cq_ring(cq, ok.base(), ok.length(), 3, 64), EPROTO)
		<< "num_slots must be a power of two";
	EXPECT_EQ(init_cq_ring(cq, ok.base(), 64, 4, 64), EPROTO)
		<< "ring must fit in the mapping";
	EXPECT_EQ(init_cq_ring(cq, ok.base(), ok.length(), 4, 64), 0);
}

/* Counts the provider's yields in place of sched_yield(). */
struct CountYields {
	static inline int count = 0;
	static void count_one() noexcept { ++count; }
	void (*saved)() noexcept = yield_cpu;
	CountYields() { count = 0; yield_cpu = count_one; }
	~CountYields() { yield_cpu = saved; }
};

TEST(IdlePoll, ManyCpusNeverYield)
{
	IdlePoll idle(false);
	for (uint32_t i = 0; i < 10 * kEmptyPollsBeforeYield; ++i)
		EXPECT_FALSE(idle.empty());
}

TEST(IdlePoll, OneCpuYieldsAfterEachStreakOfEmptyPolls)
{
	IdlePoll idle(true);
	int yields = 0;
	for (uint32_t i = 0; i < 3 * kEmptyPollsBeforeYield; ++i)
		yields += idle.empty();
	EXPECT_EQ(yields, 3);

	for (uint32_t i = 0; i + 1 < kEmptyPollsBeforeYield; ++i)
		EXPECT_FALSE(idle.empty());
	idle.found(); /* a completion ends the streak */
	for (uint32_t i = 0; i + 1 < kEmptyPollsBeforeYield; ++i)
		EXPECT_FALSE(idle.empty());
	EXPECT_TRUE(idle.empty());
}

TEST(IdlePoll, AffinityOfOneCpuIsSeen)
{
	cpu_set_t saved, one;
	ASSERT_EQ(sched_getaffinity(0, sizeof(saved), &saved), 0);
	const bool many = CPU_COUNT(&saved) > 1;
	EXPECT_EQ(IdlePoll::caller_has_one_cpu(), !many);

	int first = 0;
	while (!CPU_ISSET(first, &saved))
		++first;
	CPU_ZERO(&one);
	CPU_SET(first, &one);
	ASSERT_EQ(sched_setaffinity(0, sizeof(one), &one), 0);
	EXPECT_TRUE(IdlePoll::caller_has_one_cpu());
	ASSERT_EQ(sched_setaffinity(0, sizeof(saved), &saved), 0);
}

TEST(PollCq, OneCpuPollerYieldsWhileItsCqStaysEmpty)
{
	CountYields yields;
	FakeCq f;
	f.cq.idle = IdlePoll(true);
	std::array<ibv_wc, 4> wc{};
	for (uint32_t i = 0; i < 2 * kEmptyPollsBeforeYield; ++i)
		EXPECT_EQ(poll_cq(f.ibcq(), 4, wc.data()), 0);
	EXPECT_EQ(CountYields::count, 2);

	/* A CQE found restarts the streak, even one poll short of a yield. */
	for (uint32_t i = 0; i + 1 < kEmptyPollsBeforeYield; ++i)
		EXPECT_EQ(poll_cq(f.ibcq(), 4, wc.data()), 0);
	f.produce(make_cqe(1));
	EXPECT_EQ(poll_cq(f.ibcq(), 4, wc.data()), 1);
	EXPECT_EQ(poll_cq(f.ibcq(), 4, wc.data()), 0);
	EXPECT_EQ(CountYields::count, 2);

	/* Asking for no entries while CQEs wait is not idle. */
	f.produce(make_cqe(2));
	for (uint32_t i = 0; i < 2 * kEmptyPollsBeforeYield; ++i)
		EXPECT_EQ(poll_cq(f.ibcq(), 0, wc.data()), 0);
	EXPECT_EQ(CountYields::count, 2);
}

TEST(PollCq, ManyCpuPollerNeverYields)
{
	CountYields yields;
	FakeCq f; /* IdlePoll's default: more than one CPU */
	std::array<ibv_wc, 4> wc{};
	for (uint32_t i = 0; i < 4 * kEmptyPollsBeforeYield; ++i)
		EXPECT_EQ(poll_cq(f.ibcq(), 4, wc.data()), 0);
	EXPECT_EQ(CountYields::count, 0);
}

TEST(CqEx, OneCpuStartPollYieldsWhileTheCqStaysEmpty)
{
	CountYields yields;
	FakeCq f;
	f.cq.idle = IdlePoll(true);
	ibv_poll_cq_attr attr{};
	for (uint32_t i = 0; i < kEmptyPollsBeforeYield; ++i)
		EXPECT_EQ(ibv_start_poll(f.cqx(), &attr), ENOENT);
	EXPECT_EQ(CountYields::count, 1);

	for (uint32_t i = 0; i + 1 < kEmptyPollsBeforeYield; ++i)
		EXPECT_EQ(ibv_start_poll(f.cqx(), &attr), ENOENT);
	f.produce(make_cqe(1));
	ASSERT_EQ(ibv_start_poll(f.cqx(), &attr), 0);
	ibv_end_poll(f.cqx());
	EXPECT_EQ(ibv_start_poll(f.cqx(), &attr), ENOENT);
	EXPECT_EQ(CountYields::count, 1);
}

} /* namespace */

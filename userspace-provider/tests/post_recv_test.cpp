// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * ibv_post_recv and ibv_post_srq_recv on rings in ordinary memory: exact
 * slot bytes, validation, full rings, wrap-around, and never a doorbell.
 */
#include "fake_ring.hpp"

#include <array>

namespace {

using namespace sroce;
using namespace sroce::test;

ibv_recv_wr make_rwr(uint64_t wr_id, ibv_sge *sg, int n)
{
	ibv_recv_wr wr{};
	wr.wr_id = wr_id;
	wr.sg_list = sg;
	wr.num_sge = n;
	return wr;
}

TEST(PostRecv, FillsSlotExactlyAndNeverRings)
{
	FakeQp f(IBV_QPT_RC);
	f.kernel_wants_doorbell(true); /* irrelevant to receives */
	std::array<ibv_sge, 3> sg{{{0x1000, 10, 1}, {0x2000, 20, 2},
				   {0x3000, 30, 3}}};
	ibv_recv_wr wr = make_rwr(0xbeef, sg.data(), 3);
	ibv_recv_wr sentinel{};
	ibv_recv_wr *bad = &sentinel;

	ASSERT_EQ(post_recv(f.ibqp(), &wr, &bad), 0);
	EXPECT_EQ(bad, &sentinel) << "untouched on success";
	EXPECT_EQ(f.rq.ctrl()->producer, 1u);
	EXPECT_EQ(f.log.rings, 0);

	const sroce_recv_wqe h = f.rq.recv_wqe(0);
	EXPECT_EQ(h.wr_id, 0xbeefu);
	EXPECT_EQ(h.num_sge, 3u);
	EXPECT_EQ(h.reserved, 0u);
	for (uint32_t i = 0; i < 3; ++i) {
		const sroce_sge s = f.rq.sge(0, sizeof(sroce_recv_wqe), i);
		EXPECT_EQ(s.addr, sg[i].addr);
		EXPECT_EQ(s.length, sg[i].length);
		EXPECT_EQ(s.lkey, sg[i].lkey);
	}
}

TEST(PostRecv, FlushInErrorStateRingsTheQpDoorbellOnce)
{
	FakeQp f(IBV_QPT_RC);
	ibv_recv_wr w[3] = {make_rwr(1, nullptr, 0), make_rwr(2, nullptr, 0),
			    make_rwr(3, nullptr, 0)};
	w[0].next = &w[1];
	ibv_recv_wr *bad = nullptr;

	/* The kernel flushed the QP (ERR) and asks to hear of later posts. */
	f.rq.ctrl()->notify = SROCE_RQ_NEED_DOORBELL;
	ASSERT_EQ(post_recv(f.ibqp(), &w[0], &bad), 0);
	EXPECT_EQ(f.log.rings, 1) << "one doorbell for the whole list";
	EXPECT_EQ(f.rq.ctrl()->producer, 2u);

	/* Nothing published: nothing to flush, no doorbell. */
	ibv_recv_wr too_many = make_rwr(9, nullptr, 99);
	EXPECT_EQ(post_recv(f.ibqp(), &too_many, &bad), EINVAL);
	EXPECT_EQ(f.log.rings, 1);

	/* A failing doorbell is reported; the WQE stays posted. */
	f.log.fail_with = EIO;
	EXPECT_EQ(post_recv(f.ibqp(), &w[2], &bad), EIO);
	EXPECT_EQ(bad, nullptr);
	EXPECT_EQ(f.rq.ctrl()->producer, 3u);
	f.log.fail_with = 0;

	/* Normal operation: no flag, no system call. */
	f.rq.ctrl()->notify = 0;
	ASSERT_EQ(post_recv(f.ibqp(), &w[2], &bad), 0);
	EXPECT_EQ(f.log.rings, 2);
}

TEST(PostRecv, ValidationAndFullRing)
{
	QpLimits l;
	l.rq_slots = 2;
	l.max_recv_sge = 1;
	FakeQp f(IBV_QPT_UD, l);
	std::array<ibv_sge, 2> sg{{{0x1, 1, 1}, {0x2, 2, 2}}};
	ibv_recv_wr *bad = nullptr;

	ibv_recv_wr two = make_rwr(1, sg.data(), 2);
	EXPECT_EQ(post_recv(f.ibqp(), &two, &bad), EINVAL);
	EXPECT_EQ(bad, &two);
	ibv_recv_wr negative = make_rwr(1, sg.data(), -3);
	EXPECT_EQ(post_recv(f.ibqp(), &negative, &bad), EINVAL);
	EXPECT_EQ(f.rq.ctrl()->producer, 0u);

	ibv_recv_wr w[3] = {make_rwr(1, sg.data(), 1), make_rwr(2, nullptr, 0),
			    make_rwr(3, sg.data(), 1)};
	w[0].next = &w[1];
	w[1].next = &w[2];
	EXPECT_EQ(post_recv(f.ibqp(), &w[0], &bad), ENOMEM);
	EXPECT_EQ(bad, &w[2]);
	EXPECT_EQ(f.rq.ctrl()->producer, 2u);

	f.rq.ctrl()->consumer = 1; /* the kernel used one */
	EXPECT_EQ(post_recv(f.ibqp(), &w[2], &bad), 0);
	EXPECT_EQ(f.rq.recv_wqe(2).wr_id, 3u);
	EXPECT_EQ(f.log.rings, 0);
}

TEST(PostRecv, WrapsAroundTwoToThe32)
{
	QpLimits l;
	l.rq_slots = 4;
	l.start = 0xfffffff0u;
	FakeQp f(IBV_QPT_RC, l);
	for (uint32_t i = 0; i < 40; ++i) {
		ibv_recv_wr wr = make_rwr(i, nullptr, 0);
		ibv_recv_wr *bad = nullptr;
		ASSERT_EQ(post_recv(f.ibqp(), &wr, &bad), 0) << i;
		EXPECT_EQ(f.rq.recv_wqe(0xfffffff0u + i).wr_id, i);
		f.rq.ctrl()->consumer = f.rq.ctrl()->producer;
	}
	EXPECT_EQ(f.rq.ctrl()->producer, 0xfffffff0u + 40);
}

TEST(PostRecv, GrantedDepthBelowRingSizeIsEnforced)
{
	QpLimits l;
	l.rq_slots = 8;
	l.rq_depth = 5; /* the kernel rounded 5 up to an 8-slot ring */
	FakeQp f(IBV_QPT_RC, l);
	ibv_recv_wr w[6];
	for (int i = 0; i < 6; ++i) {
		w[i] = make_rwr(i, nullptr, 0);
		w[i].next = i < 5 ? &w[i + 1] : nullptr;
	}
	ibv_recv_wr *bad = nullptr;
	EXPECT_EQ(post_recv(f.ibqp(), &w[0], &bad), ENOMEM);
	EXPECT_EQ(bad, &w[5]);
	EXPECT_EQ(f.rq.ctrl()->producer, 5u);
}

TEST(PostRecv, RefusedOnlyInReset)
{
	FakeQp f(IBV_QPT_UD);
	ibv_recv_wr wr = make_rwr(1, nullptr, 0);
	ibv_recv_wr *bad = nullptr;
	f.qp.vqp.qp.state = IBV_QPS_RESET; /* C10-97.2.1 */
	EXPECT_EQ(post_recv(f.ibqp(), &wr, &bad), EINVAL);
	EXPECT_EQ(bad, &wr);
	for (ibv_qp_state s : {IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPS_RTS, IBV_QPS_ERR}) {
		f.qp.vqp.qp.state = s;
		EXPECT_EQ(post_recv(f.ibqp(), &wr, &bad), 0) << s;
	}
	EXPECT_EQ(f.rq.ctrl()->producer, 4u);
}

TEST(PostRecv, QpOnSrqRefusesReceives)
{
	FakeQp f(IBV_QPT_RC);
	f.qp.has_rq = false;
	ibv_recv_wr wr = make_rwr(1, nullptr, 0);
	ibv_recv_wr *bad = nullptr;
	EXPECT_EQ(post_recv(f.ibqp(), &wr, &bad), EINVAL);
	EXPECT_EQ(bad, &wr);
}

TEST(PostSrqRecv, SameFormatAsAQpReceiveQueue)
{
	FakeRing ring(8, slot_size_for(recv_slot_bytes(2)));
	Srq srq;
	ASSERT_EQ(init_recv_queue(srq.rq, ring.base(), ring.length(),
				  ring.num_slots(), ring.slot_size(), 8, 2),
		  0);
	srq.vsrq.srq_num = 0x55;
	/* An SRQ has no doorbell whatever its notify word says. */
	ring.ctrl()->notify = SROCE_RQ_NEED_DOORBELL;

	ibv_sge sg[2] = {{0xa000, 64, 9}, {0xb000, 32, 10}};
	ibv_recv_wr w1 = make_rwr(100, sg, 2);
	ibv_recv_wr w2 = make_rwr(101, sg, 3); /* too many */
	w1.next = &w2;
	ibv_recv_wr *bad = nullptr;
	EXPECT_EQ(post_srq_recv(&srq.vsrq.srq, &w1, &bad), EINVAL);
	EXPECT_EQ(bad, &w2);
	EXPECT_EQ(ring.ctrl()->producer, 1u);
	EXPECT_EQ(ring.recv_wqe(0).wr_id, 100u);
	EXPECT_EQ(ring.recv_wqe(0).num_sge, 2u);
	EXPECT_EQ(ring.sge(0, sizeof(sroce_recv_wqe), 1).addr, 0xb000u);

	uint32_t num = 0;
	EXPECT_EQ(get_srq_num(&srq.vsrq.srq, &num), 0);
	EXPECT_EQ(num, 0x55u);
}

TEST(PostSrqRecv, RingTooSmallForTheLimitsIsRefused)
{
	/* 64-byte slots hold a header and 3 SGEs, not 4. */
	FakeRing ring(8, 64);
	RecvQueue rq;
	EXPECT_EQ(init_recv_queue(rq, ring.base(), ring.length(),
				  ring.num_slots(), ring.slot_size(), 8, 4),
		  EPROTO);
	EXPECT_EQ(init_recv_queue(rq, ring.base(), ring.length(),
				  ring.num_slots(), ring.slot_size(), 9, 3),
		  EPROTO) << "more WRs granted than the ring holds";
	EXPECT_EQ(init_recv_queue(rq, ring.base(), ring.length(),
				  ring.num_slots(), ring.slot_size(), 8, 3),
		  0);
}

} /* namespace */

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * ibv_post_send on rings in ordinary memory: the exact WQE bytes per
 * opcode and QP type, validation, a full ring, free-running index wrap and
 * the doorbell protocol.
 */
#include "fake_ring.hpp"
#include "provider.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <cstring>
#include <limits>

namespace {

using namespace sroce;
using namespace sroce::test;

ibv_send_wr make_wr(uint64_t wr_id, ibv_wr_opcode op, ibv_sge *sg, int n,
		    unsigned flags = IBV_SEND_SIGNALED)
{
	ibv_send_wr wr{};
	wr.wr_id = wr_id;
	wr.opcode = op;
	wr.sg_list = sg;
	wr.num_sge = n;
	wr.send_flags = flags;
	return wr;
}

/* Header bytes must match field for field, reserved bytes zero. */
void expect_header_eq(const sroce_send_wqe &got, const sroce_send_wqe &want)
{
	EXPECT_EQ(got.wr_id, want.wr_id);
	EXPECT_EQ(got.opcode, want.opcode);
	EXPECT_EQ(got.send_flags, want.send_flags);
	EXPECT_EQ(got.num_sge, want.num_sge);
	EXPECT_EQ(got.inline_len, want.inline_len);
	EXPECT_EQ(got.imm_data, want.imm_data);
	EXPECT_EQ(0, std::memcmp(&got, &want, sizeof(got)))
		<< "some other header byte differs (union or reserved)";
}

TEST(PostSend, RcSendWithSgesFillsSlotExactly)
{
	FakeQp f(IBV_QPT_RC);
	std::array<ibv_sge, 2> sg{{{0x1000, 64, 0x11}, {0x2000, 32, 0x22}}};
	ibv_send_wr wr = make_wr(0xdead, IBV_WR_SEND, sg.data(), 2);
	ibv_send_wr sentinel{};
	ibv_send_wr *bad = &sentinel;

	ASSERT_EQ(post_send(f.ibqp(), &wr, &bad), 0);
	EXPECT_EQ(bad, &sentinel) << "untouched on success";
	EXPECT_EQ(f.sq.ctrl()->producer, 1u);

	sroce_send_wqe want{};
	want.wr_id = 0xdead;
	want.opcode = IBV_WR_SEND;
	want.send_flags = IBV_SEND_SIGNALED;
	want.num_sge = 2;
	expect_header_eq(f.sq.send_wqe(0), want);
	for (uint32_t i = 0; i < 2; ++i) {
		const sroce_sge s = f.sq.sge(0, sizeof(sroce_send_wqe), i);
		EXPECT_EQ(s.addr, sg[i].addr);
		EXPECT_EQ(s.length, sg[i].length);
		EXPECT_EQ(s.lkey, sg[i].lkey);
	}
}

TEST(PostSend, RdmaAndImmediateFields)
{
	FakeQp f(IBV_QPT_RC);
	ibv_sge sg{0x3000, 8, 0x33};

	ibv_send_wr w1 = make_wr(1, IBV_WR_RDMA_WRITE_WITH_IMM, &sg, 1);
	w1.imm_data = htonl(0x01020304);
	w1.wr.rdma.remote_addr = 0xfeed0000beef;
	w1.wr.rdma.rkey = 0x77;
	ibv_send_wr w2 = make_wr(2, IBV_WR_RDMA_READ, &sg, 1, 0);
	w2.wr.rdma.remote_addr = 0x4000;
	w2.wr.rdma.rkey = 0x88;
	ibv_send_wr w3 = make_wr(3, IBV_WR_SEND_WITH_INV, &sg, 1);
	w3.invalidate_rkey = 0x99;
	ibv_send_wr w4 = make_wr(4, IBV_WR_LOCAL_INV, nullptr, 0);
	w4.invalidate_rkey = 0xaa;
	w1.next = &w2;
	w2.next = &w3;
	w3.next = &w4;

	ibv_send_wr *bad = nullptr;
	ASSERT_EQ(post_send(f.ibqp(), &w1, &bad), 0);
	EXPECT_EQ(f.sq.ctrl()->producer, 4u);

	sroce_send_wqe want{};
	want.wr_id = 1;
	want.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
	want.send_flags = IBV_SEND_SIGNALED;
	want.num_sge = 1;
	want.imm_data = htonl(0x01020304);
	want.wr.rdma.remote_addr = 0xfeed0000beef;
	want.wr.rdma.rkey = 0x77;
	expect_header_eq(f.sq.send_wqe(0), want);

	want = sroce_send_wqe{};
	want.wr_id = 2;
	want.opcode = IBV_WR_RDMA_READ;
	want.num_sge = 1;
	want.wr.rdma.remote_addr = 0x4000;
	want.wr.rdma.rkey = 0x88;
	expect_header_eq(f.sq.send_wqe(1), want);

	want = sroce_send_wqe{};
	want.wr_id = 3;
	want.opcode = IBV_WR_SEND_WITH_INV;
	want.send_flags = IBV_SEND_SIGNALED;
	want.num_sge = 1;
	want.imm_data = 0x99;
	expect_header_eq(f.sq.send_wqe(2), want);

	want = sroce_send_wqe{};
	want.wr_id = 4;
	want.opcode = IBV_WR_LOCAL_INV;
	want.send_flags = IBV_SEND_SIGNALED;
	want.imm_data = 0xaa;
	expect_header_eq(f.sq.send_wqe(3), want);
}

TEST(PostSend, AtomicFieldsAndNoAlignmentCheck)
{
	FakeQp f(IBV_QPT_RC);
	ibv_sge sg{0x5000, 8, 0x55};

	ibv_send_wr cas = make_wr(10, IBV_WR_ATOMIC_CMP_AND_SWP, &sg, 1);
	cas.wr.atomic.remote_addr = 0x6000;
	cas.wr.atomic.compare_add = 0x1111222233334444;
	cas.wr.atomic.swap = 0x5555666677778888;
	cas.wr.atomic.rkey = 0x66;
	/* Misaligned on purpose: the kernel completes it with an error. */
	ibv_send_wr faa = make_wr(11, IBV_WR_ATOMIC_FETCH_AND_ADD, &sg, 1);
	faa.wr.atomic.remote_addr = 0x6003;
	faa.wr.atomic.compare_add = 5;
	faa.wr.atomic.swap = 0xdeadbeefcafef00dull;
	faa.wr.atomic.rkey = 0x67;
	cas.next = &faa;

	ibv_send_wr *bad = nullptr;
	ASSERT_EQ(post_send(f.ibqp(), &cas, &bad), 0);

	sroce_send_wqe want{};
	want.wr_id = 10;
	want.opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
	want.send_flags = IBV_SEND_SIGNALED;
	want.num_sge = 1;
	want.wr.atomic.remote_addr = 0x6000;
	want.wr.atomic.compare_add = 0x1111222233334444;
	want.wr.atomic.swap = 0x5555666677778888;
	want.wr.atomic.rkey = 0x66;
	expect_header_eq(f.sq.send_wqe(0), want);

	want = sroce_send_wqe{};
	want.wr_id = 11;
	want.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
	want.send_flags = IBV_SEND_SIGNALED;
	want.num_sge = 1;
	want.wr.atomic.remote_addr = 0x6003;
	want.wr.atomic.compare_add = 5;
	want.wr.atomic.swap = 0; /* fetch-and-add has no swap operand */
	want.wr.atomic.rkey = 0x67;
	expect_header_eq(f.sq.send_wqe(1), want);
}

TEST(PostSend, InlineDataIsCopiedIntoTheSlot)
{
	FakeQp f(IBV_QPT_RC);
	char a[] = "hello, ";
	char b[] = "ring";
	std::array<ibv_sge, 3> sg{{
		{reinterpret_cast<uintptr_t>(a), 7, 0},
		{0, 0, 0}, /* empty: address never dereferenced */
		{reinterpret_cast<uintptr_t>(b), 4, 0},
	}};
	ibv_send_wr wr = make_wr(5, IBV_WR_RDMA_WRITE, sg.data(), 3,
				 IBV_SEND_INLINE | IBV_SEND_SIGNALED);
	wr.wr.rdma.remote_addr = 0x7000;
	wr.wr.rdma.rkey = 0x70;

	ibv_send_wr *bad = nullptr;
	ASSERT_EQ(post_send(f.ibqp(), &wr, &bad), 0);

	sroce_send_wqe want{};
	want.wr_id = 5;
	want.opcode = IBV_WR_RDMA_WRITE;
	want.send_flags = IBV_SEND_INLINE | IBV_SEND_SIGNALED;
	want.num_sge = 0; /* data inline, no SGEs follow */
	want.inline_len = 11;
	want.wr.rdma.remote_addr = 0x7000;
	want.wr.rdma.rkey = 0x70;
	expect_header_eq(f.sq.send_wqe(0), want);
	EXPECT_EQ(0, std::memcmp(f.sq.slot(0) + sizeof(sroce_send_wqe),
				 "hello, ring", 11));
}

TEST(PostSend, UdCarriesAhNumQpnAndQkey)
{
	FakeQp f(IBV_QPT_UD);
	Ah ah = make_ah(42);
	ibv_sge sg{0x8000, 256, 0x80};
	ibv_send_wr wr = make_wr(6, IBV_WR_SEND_WITH_IMM, &sg, 1);
	wr.imm_data = htonl(7);
	wr.wr.ud.ah = &ah.ibv;
	wr.wr.ud.remote_qpn = 0x123456;
	wr.wr.ud.remote_qkey = 0x11111111;

	ibv_send_wr *bad = nullptr;
	ASSERT_EQ(post_send(f.ibqp(), &wr, &bad), 0);

	sroce_send_wqe want{};
	want.wr_id = 6;
	want.opcode = IBV_WR_SEND_WITH_IMM;
	want.send_flags = IBV_SEND_SIGNALED;
	want.num_sge = 1;
	want.imm_data = htonl(7);
	want.wr.ud.ah_num = 42;
	want.wr.ud.remote_qpn = 0x123456;
	want.wr.ud.remote_qkey = 0x11111111;
	expect_header_eq(f.sq.send_wqe(0), want);
}

TEST(PostSend, XrcCarriesTheRemoteSrqNumber)
{
	FakeQp f(IBV_QPT_XRC_SEND);
	ibv_sge sg{0x8000, 64, 0x80};
	ibv_send_wr wr[2] = {make_wr(8, IBV_WR_SEND, &sg, 1),
			     make_wr(9, IBV_WR_LOCAL_INV, nullptr, 0)};
	wr[0].qp_type.xrc.remote_srqn = 0xABCDEF;
	wr[0].next = &wr[1];
	wr[1].invalidate_rkey = 0x1234;
	wr[1].qp_type.xrc.remote_srqn = 0xFFFFFFFF; /* unused: not checked */

	ibv_send_wr *bad = nullptr;
	ASSERT_EQ(post_send(f.ibqp(), wr, &bad), 0);
	EXPECT_EQ(f.sq.send_wqe(0).xrc_srqn, 0xABCDEFu);
	EXPECT_EQ(f.sq.send_wqe(0).num_sge, 1u);
	EXPECT_EQ(f.sq.send_wqe(1).xrc_srqn, 0u) << "local: no SRQ on the wire";

	/* 24 bits on the wire: a wider number is refused, not truncated. */
	FakeQp g(IBV_QPT_XRC_SEND);
	ibv_send_wr big = make_wr(10, IBV_WR_SEND, &sg, 1);
	big.qp_type.xrc.remote_srqn = 0x1000000;
	EXPECT_EQ(post_send(g.ibqp(), &big, &bad), EINVAL);
	EXPECT_EQ(bad, &big);
	EXPECT_EQ(g.sq.ctrl()->producer, 0u);
}

/* Posts one WR and expects it refused with `err`, nothing published. */
void expect_rejected(FakeQp &f, ibv_send_wr &wr, int err)
{
	ibv_send_wr *bad = nullptr;
	EXPECT_EQ(post_send(f.ibqp(), &wr, &bad), err);
	EXPECT_EQ(bad, &wr);
	EXPECT_EQ(f.sq.ctrl()->producer, 0u);
}

TEST(PostSend, OpcodesAllowedPerQpType)
{
	struct Case {
		ibv_qp_type type;
		ibv_wr_opcode op;
		bool ok;
	};
	const Case cases[] = {
		{IBV_QPT_RC, IBV_WR_ATOMIC_FETCH_AND_ADD, true},
		{IBV_QPT_RC, IBV_WR_LOCAL_INV, true},
		{IBV_QPT_RC, IBV_WR_TSO, false},
		{IBV_QPT_RC, static_cast<ibv_wr_opcode>(SROCE_WR_ATOMIC_WRITE), false},
		{IBV_QPT_UC, IBV_WR_RDMA_WRITE_WITH_IMM, true},
		{IBV_QPT_UC, IBV_WR_SEND_WITH_INV, true},
		{IBV_QPT_UC, IBV_WR_RDMA_READ, false},
		{IBV_QPT_UC, IBV_WR_ATOMIC_CMP_AND_SWP, false},
		{IBV_QPT_UC, IBV_WR_LOCAL_INV, false},
		{IBV_QPT_UD, IBV_WR_SEND, true},
		{IBV_QPT_UD, IBV_WR_RDMA_WRITE, false},
		{IBV_QPT_UD, IBV_WR_SEND_WITH_INV, false},
		{IBV_QPT_XRC_SEND, IBV_WR_RDMA_READ, true},
		{IBV_QPT_XRC_SEND, IBV_WR_ATOMIC_CMP_AND_SWP, true},
		{IBV_QPT_XRC_SEND, IBV_WR_SEND_WITH_INV, true},
		{IBV_QPT_XRC_SEND, static_cast<ibv_wr_opcode>(SROCE_WR_ATOMIC_WRITE), false},
	};
	for (const Case &c : cases) {
		SCOPED_TRACE(::testing::Message()
			     << "qp_type " << c.type << " opcode " << c.op);
		FakeQp f(c.type);
		Ah ah = make_ah(1);
		ibv_send_wr wr = make_wr(1, c.op, nullptr, 0);
		wr.wr.ud.ah = c.type == IBV_QPT_UD ? &ah.ibv : nullptr;
		ibv_send_wr *bad = nullptr;
		EXPECT_EQ(post_send(f.ibqp(), &wr, &bad), c.ok ? 0 : EINVAL);
		EXPECT_EQ(f.sq.ctrl()->producer, c.ok ? 1u : 0u);
	}
}

/* A window of PD `pd` whose rkey has table index 0x1234. */
ibv_mw make_mw(ibv_pd *pd, ibv_mw_type type)
{
	ibv_mw mw{};
	mw.pd = pd;
	mw.rkey = 0x123456;
	mw.type = type;
	return mw;
}

TEST(PostSend, BindMwFillsTheBindWqe)
{
	ibv_pd pd{};
	ibv_mr mr{};
	mr.pd = &pd;
	mr.lkey = 0xabcd01;
	ibv_mw mw = make_mw(&pd, IBV_MW_TYPE_2);
	for (ibv_qp_type type : {IBV_QPT_RC, IBV_QPT_UC}) {
		SCOPED_TRACE(::testing::Message() << "qp_type " << type);
		FakeQp f(type);
		std::memset(f.sq.slot(0), 0xa5, f.sq.slot_size());
		ibv_sge ignored{0x1, 8, 1};
		ibv_send_wr wr = make_wr(7, IBV_WR_BIND_MW, &ignored, 1);
		wr.bind_mw.mw = &mw;
		wr.bind_mw.rkey = 0x123457;
		wr.bind_mw.bind_info = {&mr, 0x7000, 0x2000,
					IBV_ACCESS_REMOTE_WRITE |
						IBV_ACCESS_ZERO_BASED};
		ibv_send_wr *bad = nullptr;
		ASSERT_EQ(post_send(f.ibqp(), &wr, &bad), 0);

		sroce_send_wqe want{};
		want.wr_id = 7;
		want.opcode = IBV_WR_BIND_MW;
		want.send_flags = IBV_SEND_SIGNALED;
		want.wr.bind.addr = 0x7000;
		want.wr.bind.length = 0x2000;
		want.wr.bind.mr_lkey = 0xabcd01;
		want.wr.bind.mw_rkey = 0x123457;
		want.wr.bind.access =
			IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_ZERO_BASED;
		expect_header_eq(f.sq.send_wqe(0), want);
	}
}

TEST(PostSend, BindMwValidation)
{
	ibv_pd pd{}, other_pd{};
	ibv_mr mr{}, foreign_mr{};
	mr.pd = &pd;
	foreign_mr.pd = &other_pd;
	ibv_mw mw = make_mw(&pd, IBV_MW_TYPE_2);
	FakeQp f(IBV_QPT_RC);
	auto bind = [&](ibv_mw *w, uint32_t rkey, ibv_mw_bind_info info,
			unsigned flags = 0) {
		ibv_send_wr wr = make_wr(1, IBV_WR_BIND_MW, nullptr, 0, flags);
		wr.bind_mw.mw = w;
		wr.bind_mw.rkey = rkey;
		wr.bind_mw.bind_info = info;
		return wr;
	};
	const ibv_mw_bind_info good{&mr, 0x1000, 0x100, IBV_ACCESS_REMOTE_READ};

	ibv_send_wr no_mw = bind(nullptr, 0x123401, good);
	expect_rejected(f, no_mw, EINVAL);
	ibv_send_wr other_index = bind(&mw, 0x223456, good);
	expect_rejected(f, other_index, EINVAL);
	ibv_send_wr range_without_mr =
		bind(&mw, 0x123401, {nullptr, 0x1000, 0x100, 0});
	expect_rejected(f, range_without_mr, EINVAL);
	ibv_send_wr mr_of_other_pd =
		bind(&mw, 0x123401, {&foreign_mr, 0x1000, 0x100, 0});
	expect_rejected(f, mr_of_other_pd, EINVAL);
	ibv_send_wr inline_bind = bind(&mw, 0x123401, good, IBV_SEND_INLINE);
	expect_rejected(f, inline_bind, EINVAL);

	FakeQp ud(IBV_QPT_UD);
	Ah ah = make_ah(1);
	ibv_send_wr on_ud = bind(&mw, 0x123401, good);
	on_ud.wr.ud.ah = &ah.ibv;
	expect_rejected(ud, on_ud, EINVAL);

	/* Unbinding (no MR, no range) is left to the kernel, per window type. */
	ibv_send_wr unbind = bind(&mw, 0x123401, {nullptr, 0, 0, 0});
	ibv_send_wr *bad = nullptr;
	EXPECT_EQ(post_send(f.ibqp(), &unbind, &bad), 0);
}

TEST(PostSend, BindMwVerbPostsTheNextKeyAndMovesIt)
{
	ibv_pd pd{};
	ibv_mr mr{};
	mr.pd = &pd;
	mr.lkey = 0x77;
	ibv_mw mw = make_mw(&pd, IBV_MW_TYPE_1);
	mw.rkey = 0x1234ff; /* the variant wraps, the index stays */
	FakeQp f(IBV_QPT_RC);
	ibv_mw_bind b{};
	b.wr_id = 9;
	b.send_flags = IBV_SEND_SIGNALED;
	b.bind_info = {&mr, 0x5000, 0x40, IBV_ACCESS_REMOTE_READ};

	ASSERT_EQ(bind_mw(f.ibqp(), &mw, &b), 0);
	EXPECT_EQ(mw.rkey, 0x123400u);
	const sroce_send_wqe w = f.sq.send_wqe(0);
	EXPECT_EQ(w.opcode, static_cast<uint32_t>(IBV_WR_BIND_MW));
	EXPECT_EQ(w.wr_id, 9u);
	EXPECT_EQ(w.wr.bind.mw_rkey, 0x123400u);
	EXPECT_EQ(w.wr.bind.mr_lkey, 0x77u);

	/* A refused bind leaves the key alone. */
	f.qp.vqp.qp.state = IBV_QPS_INIT;
	EXPECT_EQ(bind_mw(f.ibqp(), &mw, &b), EINVAL);
	EXPECT_EQ(mw.rkey, 0x123400u);
}

TEST(PostSend, GarbageOpcodeIsEinval)
{
	FakeQp f(IBV_QPT_RC);
	ibv_send_wr wr = make_wr(1, IBV_WR_SEND, nullptr, 0);
	/* What a C caller can store; not a valid C++ enum value. */
	const uint32_t garbage = 0xdeadbeef;
	std::memcpy(&wr.opcode, &garbage, sizeof(garbage));
	expect_rejected(f, wr, EINVAL);
}

TEST(PostSend, ValidationErrors)
{
	QpLimits l;
	l.max_send_sge = 2;
	l.max_inline = 16;
	FakeQp f(IBV_QPT_RC, l);
	std::array<ibv_sge, 3> sg{{{0x1, 8, 1}, {0x2, 8, 2}, {0x3, 8, 3}}};
	char big[17] = {};

	ibv_send_wr too_many = make_wr(1, IBV_WR_SEND, sg.data(), 3);
	expect_rejected(f, too_many, EINVAL);

	ibv_send_wr negative = make_wr(1, IBV_WR_SEND, sg.data(), -1);
	expect_rejected(f, negative, EINVAL);

	ibv_send_wr no_list = make_wr(1, IBV_WR_SEND, nullptr, 1);
	expect_rejected(f, no_list, EINVAL);

	ibv_sge big_sge{reinterpret_cast<uintptr_t>(big), 17, 0};
	ibv_send_wr too_long = make_wr(1, IBV_WR_SEND, &big_sge, 1,
				       IBV_SEND_INLINE);
	expect_rejected(f, too_long, EINVAL);

	ibv_send_wr inline_read = make_wr(1, IBV_WR_RDMA_READ, sg.data(), 1,
					  IBV_SEND_INLINE);
	expect_rejected(f, inline_read, EINVAL);

	ibv_send_wr csum = make_wr(1, IBV_WR_SEND, sg.data(), 1,
				   IBV_SEND_IP_CSUM);
	expect_rejected(f, csum, EINVAL);

	FakeQp ud(IBV_QPT_UD);
	ibv_send_wr no_ah = make_wr(1, IBV_WR_SEND, sg.data(), 1);
	expect_rejected(ud, no_ah, EINVAL);

	/* Exactly at the limits is fine. */
	big_sge.length = 16;
	ibv_send_wr at_limit = make_wr(1, IBV_WR_SEND, &big_sge, 1,
				       IBV_SEND_INLINE);
	ibv_send_wr two = make_wr(2, IBV_WR_SEND, sg.data(), 2);
	at_limit.next = &two;
	ibv_send_wr *bad = nullptr;
	EXPECT_EQ(post_send(f.ibqp(), &at_limit, &bad), 0);
	EXPECT_EQ(f.sq.ctrl()->producer, 2u);
}

TEST(PostSend, StopsAtFirstBadWrAndPublishesTheGoodOnes)
{
	FakeQp f(IBV_QPT_RC);
	f.kernel_wants_doorbell(true);
	ibv_send_wr w[4] = {make_wr(0, IBV_WR_SEND, nullptr, 0),
			    make_wr(1, IBV_WR_SEND, nullptr, 0),
			    make_wr(2, IBV_WR_BIND_MW, nullptr, 0),
			    make_wr(3, IBV_WR_SEND, nullptr, 0)};
	for (int i = 0; i < 3; ++i)
		w[i].next = &w[i + 1];

	ibv_send_wr *bad = nullptr;
	EXPECT_EQ(post_send(f.ibqp(), &w[0], &bad), EINVAL);
	EXPECT_EQ(bad, &w[2]);
	EXPECT_EQ(f.sq.ctrl()->producer, 2u);
	EXPECT_EQ(f.log.rings, 1) << "the two good WRs still need the kernel";
}

TEST(PostSend, FullRingIsEnomemWithBadWr)
{
	QpLimits l;
	l.sq_slots = 4;
	FakeQp f(IBV_QPT_RC, l);
	ibv_send_wr w[6];
	for (int i = 0; i < 6; ++i) {
		w[i] = make_wr(i, IBV_WR_SEND, nullptr, 0);
		w[i].next = i < 5 ? &w[i + 1] : nullptr;
	}

	ibv_send_wr *bad = nullptr;
	EXPECT_EQ(post_send(f.ibqp(), &w[0], &bad), ENOMEM);
	EXPECT_EQ(bad, &w[4]) << "all num_slots slots are usable";
	EXPECT_EQ(f.sq.ctrl()->producer, 4u);

	/* Still full: nothing consumed yet. */
	EXPECT_EQ(post_send(f.ibqp(), &w[4], &bad), ENOMEM);
	EXPECT_EQ(bad, &w[4]);

	/* The kernel consumes two; exactly two more fit. */
	f.sq.ctrl()->consumer = 2;
	EXPECT_EQ(post_send(f.ibqp(), &w[3], &bad), ENOMEM);
	EXPECT_EQ(bad, &w[5]);
	EXPECT_EQ(f.sq.ctrl()->producer, 6u);
	EXPECT_EQ(f.sq.send_wqe(4).wr_id, 3u);
	EXPECT_EQ(f.sq.send_wqe(5).wr_id, 4u);
}

TEST(PostSend, GrantedDepthBelowRingSizeIsEnforced)
{
	QpLimits l;
	l.sq_slots = 8;
	l.sq_depth = 6; /* max_send_wr 6 in an 8-slot ring */
	FakeQp f(IBV_QPT_RC, l);
	ibv_send_wr w[7];
	for (int i = 0; i < 7; ++i) {
		w[i] = make_wr(i, IBV_WR_SEND, nullptr, 0);
		w[i].next = i < 6 ? &w[i + 1] : nullptr;
	}
	ibv_send_wr *bad = nullptr;
	EXPECT_EQ(post_send(f.ibqp(), &w[0], &bad), ENOMEM);
	EXPECT_EQ(bad, &w[6]);
	EXPECT_EQ(f.sq.ctrl()->producer, 6u);

	SendQueue sq;
	EXPECT_EQ(init_send_queue(sq, f.sq.base(), f.sq.length(), 8,
				  f.sq.slot_size(), IBV_QPT_RC, 9, 4, 128,
				  Doorbell{}),
		  EPROTO)
		<< "more WRs granted than the ring holds";
	EXPECT_EQ(init_send_queue(sq, f.sq.base(), f.sq.length(), 8,
				  f.sq.slot_size(), IBV_QPT_RC, 8, 4, 4096,
				  Doorbell{}),
		  EPROTO)
		<< "slot too small for the inline limit";
	EXPECT_EQ(init_send_queue(sq, f.sq.base(), f.sq.length(), 8,
				  f.sq.slot_size(), IBV_QPT_XRC_RECV, 8, 4,
				  128, Doorbell{}),
		  EINVAL) << "an XRC receive QP has no send queue";
}

TEST(PostSend, FreeRunningIndicesWrap)
{
	QpLimits l;
	l.sq_slots = 8;
	l.start = 0xfffffff0u;
	FakeQp f(IBV_QPT_RC, l);

	uint64_t id = 0;
	for (int round = 0; round < 6; ++round) {
		ibv_send_wr w[5];
		for (int i = 0; i < 5; ++i) {
			w[i] = make_wr(id + i, IBV_WR_SEND, nullptr, 0);
			w[i].next = i < 4 ? &w[i + 1] : nullptr;
		}
		const uint32_t before = f.sq.ctrl()->producer;
		ibv_send_wr *bad = nullptr;
		ASSERT_EQ(post_send(f.ibqp(), &w[0], &bad), 0)
			<< "round " << round;
		EXPECT_EQ(f.sq.ctrl()->producer, before + 5);
		for (uint32_t i = 0; i < 5; ++i)
			EXPECT_EQ(f.sq.send_wqe(before + i).wr_id, id + i);
		id += 5;
		f.kernel_drain_sq();
	}
	EXPECT_LT(f.sq.ctrl()->producer, 0x100u) << "crossed 2^32";
}

TEST(PostSend, FullnessAcrossTheWrap)
{
	QpLimits l;
	l.sq_slots = 4;
	l.start = 0xfffffffeu;
	FakeQp f(IBV_QPT_RC, l);
	ibv_send_wr w[5];
	for (int i = 0; i < 5; ++i) {
		w[i] = make_wr(i, IBV_WR_SEND, nullptr, 0);
		w[i].next = i < 4 ? &w[i + 1] : nullptr;
	}
	ibv_send_wr *bad = nullptr;
	EXPECT_EQ(post_send(f.ibqp(), &w[0], &bad), ENOMEM);
	EXPECT_EQ(bad, &w[4]);
	EXPECT_EQ(f.sq.ctrl()->producer, 2u); /* 0xfffffffe + 4 */
}

TEST(PostSend, DoorbellIffKernelAskedForIt)
{
	FakeQp f(IBV_QPT_RC);
	ibv_send_wr w[3];
	for (int i = 0; i < 3; ++i) {
		w[i] = make_wr(i, IBV_WR_SEND, nullptr, 0);
		w[i].next = i < 2 ? &w[i + 1] : nullptr;
	}
	ibv_send_wr *bad = nullptr;

	/* Kernel busy: no doorbell, however many WRs. */
	ASSERT_EQ(post_send(f.ibqp(), &w[0], &bad), 0);
	EXPECT_EQ(f.log.rings, 0);

	/* Kernel idle: exactly one doorbell per call, after publishing. */
	f.kernel_wants_doorbell(true);
	ASSERT_EQ(post_send(f.ibqp(), &w[0], &bad), 0);
	EXPECT_EQ(f.log.rings, 1);
	ASSERT_EQ(f.log.producer_at_ring.size(), 1u);
	EXPECT_EQ(f.log.producer_at_ring[0], 6u);

	/* Nothing posted (empty list or first WR bad): no doorbell. */
	EXPECT_EQ(post_send(f.ibqp(), nullptr, &bad), 0);
	ibv_send_wr bind = make_wr(9, IBV_WR_BIND_MW, nullptr, 0);
	EXPECT_EQ(post_send(f.ibqp(), &bind, &bad), EINVAL);
	EXPECT_EQ(f.log.rings, 1);

	f.kernel_wants_doorbell(false);
	ASSERT_EQ(post_send(f.ibqp(), &w[2], &bad), 0);
	EXPECT_EQ(f.log.rings, 1);
}

TEST(PostSend, MarkedSetsTheQpsBitAndRingsOnlyIfNobodyWatches)
{
	QpLimits l;
	l.sq_mark = 70; /* word 1, bit 6 */
	FakeQp f(IBV_QPT_RC, l);
	ibv_send_wr wr = make_wr(1, IBV_WR_SEND, nullptr, 0);
	ibv_send_wr *bad = nullptr;

	/* Kernel busy: neither a mark nor a doorbell. */
	ASSERT_EQ(post_send(f.ibqp(), &wr, &bad), 0);
	EXPECT_EQ(f.marks.marks[1], 0u);
	EXPECT_EQ(f.log.rings, 0);

	/* Idle, the poller not watching: the mark, and the doorbell too. */
	f.kernel_wants_mark(true);
	ASSERT_EQ(post_send(f.ibqp(), &wr, &bad), 0);
	EXPECT_EQ(f.marks.marks[1], uint64_t(1) << 6);
	EXPECT_EQ(f.log.rings, 1);
	for (int w = 0; w < SROCE_SQ_MARK_WORDS; ++w) {
		if (w != 1) {
			EXPECT_EQ(f.marks.marks[w], 0u) << "word " << w;
		}
	}

	/* Watched: the mark alone, after the producer moved. */
	f.marks.marks[1] = 0; /* the poller took it */
	f.marks.watching = 1;
	ASSERT_EQ(post_send(f.ibqp(), &wr, &bad), 0);
	EXPECT_EQ(f.marks.marks[1], uint64_t(1) << 6);
	EXPECT_EQ(f.log.rings, 1);
	EXPECT_EQ(f.sq.ctrl()->producer, 3u);

	/* Not taken yet: it stays one mark, other QPs' bits untouched. */
	f.marks.marks[1] |= 1;
	ASSERT_EQ(post_send(f.ibqp(), &wr, &bad), 0);
	EXPECT_EQ(f.marks.marks[1], (uint64_t(1) << 6) | 1);
	EXPECT_EQ(f.log.rings, 1);

	/* NEED_DOORBELL wins: the kernel asked for the syscall. */
	f.kernel_wants_doorbell(true);
	ASSERT_EQ(post_send(f.ibqp(), &wr, &bad), 0);
	EXPECT_EQ(f.log.rings, 2);
}

TEST(PostSend, MarkedWithoutAMarkPageRings)
{
	FakeQp f(IBV_QPT_RC); /* no page: the kernel gave none, or mmap failed */
	f.kernel_wants_mark(true);
	ibv_send_wr wr = make_wr(1, IBV_WR_SEND, nullptr, 0);
	ibv_send_wr *bad = nullptr;
	ASSERT_EQ(post_send(f.ibqp(), &wr, &bad), 0);
	EXPECT_EQ(f.log.rings, 1);
}

TEST(PostSend, DoorbellFailureIsReportedButWqesStayPosted)
{
	FakeQp f(IBV_QPT_RC);
	f.kernel_wants_doorbell(true);
	f.log.fail_with = EIO;
	ibv_send_wr wr = make_wr(1, IBV_WR_SEND, nullptr, 0);
	ibv_send_wr *bad = &wr;
	EXPECT_EQ(post_send(f.ibqp(), &wr, &bad), EIO);
	EXPECT_EQ(bad, nullptr) << "no WR failed: do not post them again";
	EXPECT_EQ(f.sq.ctrl()->producer, 1u);
}

TEST(PostSend, SteadyStreamRingsRarely)
{
	/*
	 * The kernel engine stays busy while work keeps coming; it asks for
	 * a doorbell only when it runs dry.  Model: it drains and goes idle
	 * once every 100 posts.  One call per WR, like ib_write_bw.
	 */
	QpLimits l;
	l.sq_slots = 128;
	FakeQp f(IBV_QPT_RC, l);
	f.kernel_wants_doorbell(true); /* idle at the start */
	constexpr int kPosts = 10000;
	for (int i = 0; i < kPosts; ++i) {
		ibv_send_wr wr = make_wr(i, IBV_WR_RDMA_WRITE, nullptr, 0);
		ibv_send_wr *bad = nullptr;
		const int rings_before = f.log.rings;
		ASSERT_EQ(post_send(f.ibqp(), &wr, &bad), 0);
		if (f.log.rings != rings_before)
			f.kernel_wants_doorbell(false); /* woken: busy again */
		if (i % 100 == 99) {
			f.kernel_drain_sq();
			f.kernel_wants_doorbell(true);
		}
	}
	EXPECT_EQ(f.log.rings, kPosts / 100);
	EXPECT_LE(f.log.rings * 1.0 / kPosts, 0.05);
}

TEST(PostSend, ProductionDoorbellWritesALegacyPostSend)
{
	int fds[2];
	ASSERT_EQ(pipe(fds), 0);
	const Doorbell db{.fn = uverbs_post_send_doorbell,
			  .cmd_fd = fds[1],
			  .qp_handle = 0x4242,
			  .hook = nullptr};
	ASSERT_EQ(db.ring(), 0);

	struct {
		ib_uverbs_cmd_hdr hdr;
		uint64_t response;
		uint32_t qp_handle, wr_count, sge_count, wqe_size;
	} got{};
	static_assert(sizeof(got) == 32);
	ASSERT_EQ(read(fds[0], &got, sizeof(got)), 32);
	EXPECT_EQ(got.hdr.command, IB_USER_VERBS_CMD_POST_SEND);
	EXPECT_EQ(got.hdr.in_words, 8u) << "legacy: words incl. the header";
	EXPECT_EQ(got.hdr.out_words, 1u);
	EXPECT_NE(got.response, 0u);
	EXPECT_EQ(got.qp_handle, 0x4242u);
	EXPECT_EQ(got.wr_count, 0u);
	EXPECT_EQ(got.sge_count, 0u);
	EXPECT_EQ(got.wqe_size, sizeof(ib_uverbs_send_wr));
	EXPECT_GE(got.wqe_size, 56u);
	char extra;
	fcntl(fds[0], F_SETFL, O_NONBLOCK);
	EXPECT_EQ(read(fds[0], &extra, 1), -1) << "exactly one write";
	close(fds[0]);
	close(fds[1]);

	/* A failing write() reports errno. */
	const Doorbell bad_fd{.fn = uverbs_post_send_doorbell,
			      .cmd_fd = -1,
			      .qp_handle = 1,
			      .hook = nullptr};
	EXPECT_EQ(bad_fd.ring(), EBADF);
}

TEST(PostSend, QpStateGatesPosting)
{
	FakeQp f(IBV_QPT_RC);
	ibv_send_wr wr = make_wr(1, IBV_WR_SEND, nullptr, 0);
	ibv_send_wr *bad = nullptr;
	for (ibv_qp_state s : {IBV_QPS_RESET, IBV_QPS_INIT, IBV_QPS_RTR}) {
		f.qp.vqp.qp.state = s;
		bad = nullptr;
		EXPECT_EQ(post_send(f.ibqp(), &wr, &bad), EINVAL) << s;
		EXPECT_EQ(bad, &wr);
	}
	EXPECT_EQ(f.sq.ctrl()->producer, 0u);
	/* Error: accepted (the kernel flushes); SQD/SQE: queued. */
	for (ibv_qp_state s : {IBV_QPS_RTS, IBV_QPS_SQD, IBV_QPS_SQE, IBV_QPS_ERR}) {
		f.qp.vqp.qp.state = s;
		EXPECT_EQ(post_send(f.ibqp(), &wr, &bad), 0) << s;
	}
	EXPECT_EQ(f.sq.ctrl()->producer, 4u);
}

TEST(PostSend, ZeroDepthSendQueueIsAlwaysFull)
{
	Qp qp; /* never bound to a ring */
	qp.vqp.qp.state = IBV_QPS_RTS;
	ibv_send_wr wr = make_wr(1, IBV_WR_SEND, nullptr, 0);
	ibv_send_wr *bad = nullptr;
	EXPECT_EQ(post_send(&qp.vqp.qp, &wr, &bad), ENOMEM);
	EXPECT_EQ(bad, &wr);
}

} /* namespace */

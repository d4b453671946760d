// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The ibv_wr_* API against ibv_post_send: the same work must leave the
 * same bytes in the ring, be published once per batch, and fail the same
 * way.
 */
#include "fake_ring.hpp"

#include <arpa/inet.h>

#include <array>
#include <cstring>
#include <functional>

namespace {

using namespace sroce;
using namespace sroce::test;

constexpr uint64_t kAllRc = kRcSendOps;

/* Header plus the payload area a WQE describes. */
std::size_t wqe_bytes(const FakeRing &ring, uint32_t index)
{
	const sroce_send_wqe w = ring.send_wqe(index);
	if (w.send_flags & IBV_SEND_INLINE)
		return sizeof(w) + w.inline_len;
	return sizeof(w) + w.num_sge * sizeof(sroce_sge);
}

void expect_same_ring_bytes(const FakeQp &a, const FakeQp &b, uint32_t count)
{
	ASSERT_EQ(a.sq.ctrl()->producer, b.sq.ctrl()->producer);
	for (uint32_t i = 0; i < count; ++i) {
		SCOPED_TRACE(::testing::Message() << "WQE " << i);
		const std::size_t n = wqe_bytes(a.sq, i);
		ASSERT_EQ(n, wqe_bytes(b.sq, i));
		EXPECT_EQ(0, std::memcmp(a.sq.slot(i), b.sq.slot(i), n));
	}
}

/*
 * Posts `wrs` with ibv_post_send on one QP and runs `build` inside
 * wr_start/wr_complete on another; both must end up identical.
 */
void check_equivalent(ibv_qp_type type, uint64_t ops, ibv_send_wr *wrs,
		      uint32_t count,
		      const std::function<void(ibv_qp_ex *)> &build)
{
	FakeQp posted(type);
	FakeQp built(type);
	install_qp_ex_ops(built.qp, ops);
	/* Dirty the slots so that a byte not written shows up. */
	for (uint32_t i = 0; i < count; ++i) {
		std::memset(posted.sq.slot(i), 0xa5, posted.sq.slot_size());
		std::memset(built.sq.slot(i), 0x5a, built.sq.slot_size());
	}

	ibv_send_wr *bad = nullptr;
	ASSERT_EQ(post_send(posted.ibqp(), wrs, &bad), 0);

	ibv_qp_ex *qpx = built.qpx();
	qpx->wr_start(qpx);
	build(qpx);
	ASSERT_EQ(qpx->wr_complete(qpx), 0);

	expect_same_ring_bytes(posted, built, count);
}

TEST(QpEx, RcOperationsMatchPostSend)
{
	char payload[] = "inline bytes";
	std::array<ibv_sge, 2> sg{{{0x1000, 64, 0x11}, {0x2000, 16, 0x22}}};
	ibv_sge inl{reinterpret_cast<uintptr_t>(payload), 12, 0};

	ibv_send_wr w[9]{};
	w[0].wr_id = 1;
	w[0].opcode = IBV_WR_SEND;
	w[0].send_flags = IBV_SEND_SIGNALED;
	w[0].sg_list = sg.data();
	w[0].num_sge = 2;

	w[1].wr_id = 2;
	w[1].opcode = IBV_WR_SEND_WITH_IMM;
	w[1].imm_data = htonl(0xcafe);
	w[1].send_flags = IBV_SEND_INLINE | IBV_SEND_SOLICITED;
	w[1].sg_list = &inl;
	w[1].num_sge = 1;

	w[2].wr_id = 3;
	w[2].opcode = IBV_WR_SEND_WITH_INV;
	w[2].invalidate_rkey = 0x1234;
	w[2].sg_list = sg.data();
	w[2].num_sge = 1;

	w[3].wr_id = 4;
	w[3].opcode = IBV_WR_RDMA_WRITE;
	w[3].send_flags = IBV_SEND_FENCE;
	w[3].wr.rdma = {0xaaaa0000, 0x55};
	w[3].sg_list = sg.data();
	w[3].num_sge = 1;

	w[4].wr_id = 5;
	w[4].opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
	w[4].imm_data = htonl(42);
	w[4].wr.rdma = {0xbbbb0000, 0x66};
	w[4].sg_list = sg.data() + 1;
	w[4].num_sge = 1;

	w[5].wr_id = 6;
	w[5].opcode = IBV_WR_RDMA_READ;
	w[5].wr.rdma = {0xcccc0000, 0x77};
	w[5].sg_list = sg.data();
	w[5].num_sge = 2;

	w[6].wr_id = 7;
	w[6].opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
	w[6].send_flags = IBV_SEND_SIGNALED;
	w[6].wr.atomic = {0xdddd0000, 10, 20, 0x88};
	w[6].sg_list = sg.data();
	w[6].num_sge = 1;

	w[7].wr_id = 8;
	w[7].opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
	w[7].wr.atomic = {0xeeee0000, 3, 0, 0x99};
	w[7].sg_list = sg.data();
	w[7].num_sge = 1;

	w[8].wr_id = 9;
	w[8].opcode = IBV_WR_LOCAL_INV;
	w[8].send_flags = IBV_SEND_SIGNALED;
	w[8].invalidate_rkey = 0x4321;
	for (int i = 0; i < 8; ++i)
		w[i].next = &w[i + 1];

	check_equivalent(IBV_QPT_RC, kAllRc, w, 9, [&](ibv_qp_ex *q) {
		q->wr_id = 1;
		q->wr_flags = IBV_SEND_SIGNALED;
		q->wr_send(q);
		q->wr_set_sge_list(q, 2, sg.data());

		q->wr_id = 2;
		q->wr_flags = IBV_SEND_SOLICITED;
		q->wr_send_imm(q, htonl(0xcafe));
		q->wr_set_inline_data(q, payload, 12);

		q->wr_id = 3;
		q->wr_flags = 0;
		q->wr_send_inv(q, 0x1234);
		q->wr_set_sge(q, sg[0].lkey, sg[0].addr, sg[0].length);

		q->wr_id = 4;
		q->wr_flags = IBV_SEND_FENCE;
		q->wr_rdma_write(q, 0x55, 0xaaaa0000);
		q->wr_set_sge(q, sg[0].lkey, sg[0].addr, sg[0].length);

		q->wr_id = 5;
		q->wr_flags = 0;
		q->wr_rdma_write_imm(q, 0x66, 0xbbbb0000, htonl(42));
		q->wr_set_sge(q, sg[1].lkey, sg[1].addr, sg[1].length);

		q->wr_id = 6;
		q->wr_rdma_read(q, 0x77, 0xcccc0000);
		q->wr_set_sge_list(q, 2, sg.data());

		q->wr_id = 7;
		q->wr_flags = IBV_SEND_SIGNALED;
		q->wr_atomic_cmp_swp(q, 0x88, 0xdddd0000, 10, 20);
		q->wr_set_sge(q, sg[0].lkey, sg[0].addr, sg[0].length);

		q->wr_id = 8;
		q->wr_flags = 0;
		q->wr_atomic_fetch_add(q, 0x99, 0xeeee0000, 3);
		q->wr_set_sge(q, sg[0].lkey, sg[0].addr, sg[0].length);

		q->wr_id = 9;
		q->wr_flags = IBV_SEND_SIGNALED;
		q->wr_local_inv(q, 0x4321);
	});
}

TEST(QpEx, BindMwMatchesPostSend)
{
	ibv_pd pd{};
	ibv_mr mr{};
	mr.pd = &pd;
	mr.lkey = 0x4242;
	ibv_mw mw{};
	mw.pd = &pd;
	mw.rkey = 0x5500;
	mw.type = IBV_MW_TYPE_2;
	const ibv_mw_bind_info info{&mr, 0x9000, 0x800, IBV_ACCESS_REMOTE_READ};

	for (ibv_qp_type type : {IBV_QPT_RC, IBV_QPT_UC}) {
		SCOPED_TRACE(::testing::Message() << "qp_type " << type);
		ibv_send_wr wr{};
		wr.wr_id = 3;
		wr.opcode = IBV_WR_BIND_MW;
		wr.send_flags = IBV_SEND_SIGNALED;
		wr.bind_mw.mw = &mw;
		wr.bind_mw.rkey = 0x5501;
		wr.bind_mw.bind_info = info;
		check_equivalent(type, send_ops_for(type), &wr, 1,
				 [&](ibv_qp_ex *q) {
					 q->wr_id = 3;
					 q->wr_flags = IBV_SEND_SIGNALED;
					 q->wr_bind_mw(q, &mw, 0x5501, &info);
				 });
	}

	/* A bad bind fails the batch, as ibv_post_send fails the WR. */
	FakeQp f(IBV_QPT_RC);
	install_qp_ex_ops(f.qp, kAllRc);
	ibv_qp_ex *q = f.qpx();
	q->wr_start(q);
	q->wr_bind_mw(q, &mw, 0x6601, &info);
	EXPECT_EQ(q->wr_complete(q), EINVAL);
	EXPECT_EQ(f.sq.ctrl()->producer, 0u);
}

TEST(QpEx, UdSendMatchesPostSend)
{
	Ah ah = make_ah(77);
	char a[] = "abc";
	char b[] = "defg";
	ibv_sge inl[2] = {{reinterpret_cast<uintptr_t>(a), 3, 0},
			  {reinterpret_cast<uintptr_t>(b), 4, 0}};
	ibv_sge sg{0x9000, 100, 0x90};

	ibv_send_wr w[2]{};
	w[0].wr_id = 0x10;
	w[0].opcode = IBV_WR_SEND;
	w[0].send_flags = IBV_SEND_SIGNALED;
	w[0].sg_list = &sg;
	w[0].num_sge = 1;
	w[0].wr.ud = {&ah.ibv, 0xabc, 0x11111111};
	w[0].next = &w[1];
	w[1].wr_id = 0x11;
	w[1].opcode = IBV_WR_SEND_WITH_IMM;
	w[1].imm_data = htonl(5);
	w[1].send_flags = IBV_SEND_INLINE;
	w[1].sg_list = inl;
	w[1].num_sge = 2;
	w[1].wr.ud = {&ah.ibv, 0xdef, 0x22222222};

	check_equivalent(IBV_QPT_UD, kUdSendOps, w, 2, [&](ibv_qp_ex *q) {
		q->wr_id = 0x10;
		q->wr_flags = IBV_SEND_SIGNALED;
		q->wr_send(q);
		/* pyverbs sets the address before the SGE. */
		q->wr_set_ud_addr(q, &ah.ibv, 0xabc, 0x11111111);
		q->wr_set_sge(q, sg.lkey, sg.addr, sg.length);

		q->wr_id = 0x11;
		q->wr_flags = 0;
		q->wr_send_imm(q, htonl(5));
		const ibv_data_buf bufs[2] = {{a, 3}, {b, 4}};
		q->wr_set_inline_data_list(q, 2, bufs);
		q->wr_set_ud_addr(q, &ah.ibv, 0xdef, 0x22222222);
	});
}

TEST(QpEx, OnlyRequestedBuildersAreInstalled)
{
	FakeQp f(IBV_QPT_RC);
	install_qp_ex_ops(f.qp, IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_READ);
	ibv_qp_ex *q = f.qpx();
	EXPECT_NE(q->wr_send, nullptr);
	EXPECT_NE(q->wr_rdma_read, nullptr);
	EXPECT_EQ(q->wr_rdma_write, nullptr);
	EXPECT_EQ(q->wr_atomic_cmp_swp, nullptr);
	EXPECT_EQ(q->wr_bind_mw, nullptr);
	EXPECT_EQ(q->wr_local_inv, nullptr);
	EXPECT_EQ(q->wr_set_ud_addr, nullptr) << "RC has no UD address";
	EXPECT_EQ(q->wr_set_xrc_srqn, nullptr);
	EXPECT_NE(f.qp.vqp.comp_mask & VERBS_QP_EX, 0u);
	static_assert((kUcSendOps & ~kRcSendOps) == 0);
	static_assert((kUdSendOps & ~kUcSendOps) == 0);
	EXPECT_EQ(send_ops_for(IBV_QPT_XRC_RECV), 0u) << "no send queue";
	EXPECT_EQ(send_ops_for(IBV_QPT_XRC_SEND), uint64_t{kXrcWrOpcodes});
#if SROCE_VERBS_HAVE_ATOMIC_WRITE
	EXPECT_EQ(kXrcSendOps & IBV_QP_EX_WITH_ATOMIC_WRITE, 0u) << "RC only";
#endif
	EXPECT_EQ(kRcSendOps & IBV_QP_EX_WITH_TSO, 0u);
#if SROCE_VERBS_HAVE_ATOMIC_WRITE
	EXPECT_EQ(kUcSendOps & IBV_QP_EX_WITH_ATOMIC_WRITE, 0u) << "RC only";
	EXPECT_EQ(q->wr_atomic_write, nullptr) << "not asked for";
#endif
	EXPECT_EQ(kUdSendOps & IBV_QP_EX_WITH_BIND_MW, 0u);
}

#if SROCE_VERBS_HAVE_ATOMIC_WRITE
TEST(QpEx, AtomicWriteCarriesItsEightBytesInTheWqe)
{
	FakeQp f(IBV_QPT_RC);
	install_qp_ex_ops(f.qp, IBV_QP_EX_WITH_ATOMIC_WRITE);
	ibv_qp_ex *q = f.qpx();
	ASSERT_NE(q->wr_atomic_write, nullptr);
	std::memset(f.sq.slot(0), 0xa5, f.sq.slot_size());

	unsigned char value[8] = {'c', 'c', 'c', 'c', 1, 2, 3, 4};
	q->wr_start(q);
	q->wr_id = 77;
	q->wr_flags = IBV_SEND_SIGNALED;
	q->wr_atomic_write(q, 0x99, 0xabcd0008, value);
	std::memset(value, 0, sizeof(value)); /* copied at the call */
	ASSERT_EQ(q->wr_complete(q), 0);

	const sroce_send_wqe w = f.sq.send_wqe(0);
	EXPECT_EQ(w.wr_id, 77u);
	EXPECT_EQ(w.opcode, unsigned{SROCE_WR_ATOMIC_WRITE});
	EXPECT_EQ(w.send_flags, unsigned{IBV_SEND_SIGNALED});
	EXPECT_EQ(w.num_sge, 0u);
	EXPECT_EQ(w.inline_len, 0u);
	EXPECT_EQ(w.wr.atomic.remote_addr, 0xabcd0008u);
	EXPECT_EQ(w.wr.atomic.rkey, 0x99u);
	const unsigned char want[8] = {'c', 'c', 'c', 'c', 1, 2, 3, 4};
	EXPECT_EQ(0, std::memcmp(&w.wr.atomic.compare_add, want, 8))
		<< "the bytes as given, no byte order applied";
}
#endif

TEST(QpEx, OneProducerStoreAndOneDoorbellPerBatch)
{
	FakeQp f(IBV_QPT_RC);
	install_qp_ex_ops(f.qp, kAllRc);
	f.kernel_wants_doorbell(true);
	ibv_qp_ex *q = f.qpx();

	q->wr_start(q);
	for (int i = 0; i < 5; ++i) {
		q->wr_id = i;
		q->wr_flags = 0;
		q->wr_send(q);
		EXPECT_EQ(f.sq.ctrl()->producer, 0u) << "not before wr_complete";
	}
	EXPECT_EQ(f.log.rings, 0);
	ASSERT_EQ(q->wr_complete(q), 0);
	EXPECT_EQ(f.sq.ctrl()->producer, 5u);
	EXPECT_EQ(f.log.rings, 1);
	EXPECT_EQ(f.log.producer_at_ring.at(0), 5u);

	/* Kernel busy: no doorbell. */
	f.kernel_wants_doorbell(false);
	q->wr_start(q);
	q->wr_send(q);
	ASSERT_EQ(q->wr_complete(q), 0);
	EXPECT_EQ(f.log.rings, 1);

	/* An empty batch publishes and rings nothing. */
	f.kernel_wants_doorbell(true);
	q->wr_start(q);
	ASSERT_EQ(q->wr_complete(q), 0);
	EXPECT_EQ(f.log.rings, 1);
}

TEST(QpEx, AbortDropsTheBatchAndReleasesTheLock)
{
	FakeQp f(IBV_QPT_RC);
	install_qp_ex_ops(f.qp, kAllRc);
	ibv_qp_ex *q = f.qpx();

	q->wr_start(q);
	q->wr_id = 1;
	q->wr_send(q);
	q->wr_abort(q);
	EXPECT_EQ(f.sq.ctrl()->producer, 0u);

	/* The lock is free: ibv_post_send reuses the same slot. */
	ibv_send_wr wr{};
	wr.wr_id = 2;
	wr.opcode = IBV_WR_SEND;
	ibv_send_wr *bad = nullptr;
	ASSERT_EQ(post_send(f.ibqp(), &wr, &bad), 0);
	EXPECT_EQ(f.sq.send_wqe(0).wr_id, 2u);
}

/* Builds one batch, expects wr_complete to fail with `err`, nothing posted. */
void expect_batch_fails(FakeQp &f, int err,
			const std::function<void(ibv_qp_ex *)> &build)
{
	ibv_qp_ex *q = f.qpx();
	const uint32_t before = f.sq.ctrl()->producer;
	q->wr_start(q);
	build(q);
	EXPECT_EQ(q->wr_complete(q), err);
	EXPECT_EQ(f.sq.ctrl()->producer, before);
}

TEST(QpEx, ErrorsAreReportedByWrCompleteAndDropTheBatch)
{
	QpLimits l;
	l.sq_slots = 2;
	l.max_send_sge = 1;
	l.max_inline = 8;
	FakeQp f(IBV_QPT_RC, l);
	install_qp_ex_ops(f.qp, kAllRc);
	ibv_sge sg[2] = {{1, 1, 1}, {2, 2, 2}};
	char big[9] = {};

	expect_batch_fails(f, EINVAL, [&](ibv_qp_ex *q) {
		q->wr_send(q);
		q->wr_set_sge_list(q, 2, sg); /* > max_send_sge */
	});
	expect_batch_fails(f, EINVAL, [&](ibv_qp_ex *q) {
		q->wr_send(q);
		q->wr_set_inline_data(q, big, sizeof(big)); /* > max_inline */
	});
	expect_batch_fails(f, EINVAL, [&](ibv_qp_ex *q) {
		q->wr_rdma_read(q, 1, 2);
		q->wr_set_inline_data(q, big, 1); /* inline READ */
	});
	expect_batch_fails(f, EINVAL, [&](ibv_qp_ex *q) {
		q->wr_set_sge(q, 1, 2, 3); /* setter before any builder */
	});
	expect_batch_fails(f, EINVAL, [&](ibv_qp_ex *q) {
		q->wr_flags = IBV_SEND_IP_CSUM;
		q->wr_send(q);
	});
	expect_batch_fails(f, ENOMEM, [&](ibv_qp_ex *q) {
		q->wr_flags = 0;
		q->wr_send(q);
		q->wr_send(q);
		q->wr_send(q); /* third one in a 2-slot ring */
		q->wr_send(q); /* later builders are ignored */
	});

	/* After all that the QP still works. */
	ibv_qp_ex *q = f.qpx();
	q->wr_start(q);
	q->wr_flags = 0;
	q->wr_send(q);
	q->wr_set_sge(q, 1, 2, 3);
	EXPECT_EQ(q->wr_complete(q), 0);
	EXPECT_EQ(f.sq.ctrl()->producer, 1u);
}

TEST(QpEx, QpStateGatesTheBatch)
{
	/* pyverbs' post_sq_state_bad_flow: new send API on a RESET QP. */
	FakeQp f(IBV_QPT_UD);
	install_qp_ex_ops(f.qp, kUdSendOps);
	Ah ah = make_ah(3);
	f.qp.vqp.qp.state = IBV_QPS_RESET;
	expect_batch_fails(f, EINVAL, [&](ibv_qp_ex *q) {
		q->wr_send(q);
		q->wr_set_ud_addr(q, &ah.ibv, 1, 2);
		q->wr_set_sge(q, 1, 2, 3);
	});
	f.qp.vqp.qp.state = IBV_QPS_RTS;
	ibv_qp_ex *q = f.qpx();
	q->wr_start(q);
	q->wr_send(q);
	q->wr_set_ud_addr(q, &ah.ibv, 1, 2);
	EXPECT_EQ(q->wr_complete(q), 0);
}

TEST(QpEx, XrcSendNeedsItsSrqNumber)
{
	FakeQp f(IBV_QPT_XRC_SEND);
	install_qp_ex_ops(f.qp, kXrcSendOps);
	ibv_qp_ex *q = f.qpx();
	EXPECT_NE(q->wr_set_xrc_srqn, nullptr);
	EXPECT_EQ(q->wr_set_ud_addr, nullptr);

	expect_batch_fails(f, EINVAL, [](ibv_qp_ex *q) {
		q->wr_send(q); /* no wr_set_xrc_srqn */
	});
	expect_batch_fails(f, EINVAL, [](ibv_qp_ex *q) {
		q->wr_send(q);
		q->wr_set_xrc_srqn(q, 0x1000000); /* wider than 24 bits */
	});

	q->wr_start(q);
	q->wr_local_inv(q, 0x55); /* local: needs no SRQ */
	q->wr_rdma_write(q, 0x66, 0x7000);
	q->wr_set_xrc_srqn(q, 0x123456);
	q->wr_set_sge(q, 0x80, 0x8000, 64);
	EXPECT_EQ(q->wr_complete(q), 0);
	EXPECT_EQ(f.sq.send_wqe(0).opcode, uint32_t{IBV_WR_LOCAL_INV});
	EXPECT_EQ(f.sq.send_wqe(1).xrc_srqn, 0x123456u);
	EXPECT_EQ(f.sq.send_wqe(1).wr.rdma.rkey, 0x66u);
}

TEST(QpEx, UdSendWithoutAddressIsRefused)
{
	FakeQp f(IBV_QPT_UD);
	install_qp_ex_ops(f.qp, kUdSendOps);
	Ah ah = make_ah(3);

	expect_batch_fails(f, EINVAL, [](ibv_qp_ex *q) {
		q->wr_send(q); /* no wr_set_ud_addr */
	});
	expect_batch_fails(f, EINVAL, [&](ibv_qp_ex *q) {
		q->wr_send(q);
		q->wr_send(q); /* the first never got its address */
		q->wr_set_ud_addr(q, &ah.ibv, 1, 2);
	});
	expect_batch_fails(f, EINVAL, [](ibv_qp_ex *q) {
		q->wr_send(q);
		q->wr_set_ud_addr(q, nullptr, 1, 2);
	});

	ibv_qp_ex *q = f.qpx();
	q->wr_start(q);
	q->wr_send(q);
	q->wr_set_ud_addr(q, &ah.ibv, 1, 2);
	EXPECT_EQ(q->wr_complete(q), 0);
	EXPECT_EQ(f.sq.send_wqe(0).wr.ud.ah_num, 3u);
}

TEST(QpEx, BatchesWrapAroundTwoToThe32)
{
	QpLimits l;
	l.sq_slots = 4;
	l.start = 0xfffffffcu;
	FakeQp f(IBV_QPT_RC, l);
	install_qp_ex_ops(f.qp, kAllRc);
	ibv_qp_ex *q = f.qpx();
	for (uint64_t round = 0; round < 5; ++round) {
		q->wr_start(q);
		for (uint64_t i = 0; i < 3; ++i) {
			q->wr_id = round * 3 + i;
			q->wr_flags = 0;
			q->wr_rdma_write(q, 1, 0x1000 * i);
		}
		ASSERT_EQ(q->wr_complete(q), 0);
		const uint32_t p = f.sq.ctrl()->producer;
		for (uint32_t i = 0; i < 3; ++i)
			EXPECT_EQ(f.sq.send_wqe(p - 3 + i).wr_id, round * 3 + i);
		f.kernel_drain_sq();
	}
	EXPECT_EQ(f.sq.ctrl()->producer, 0xfffffffcu + 15);
}

} /* namespace */

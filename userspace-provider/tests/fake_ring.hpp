// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Test doubles for the data path: rings in ordinary page-aligned memory,
 * laid out exactly as the kernel lays out a mapping, plus QP/CQ/SRQ
 * objects bound to them and a doorbell that records instead of calling
 * write().  The test plays the kernel by writing the indices it owns.
 */
#ifndef SROCE_TESTS_FAKE_RING_HPP
#define SROCE_TESTS_FAKE_RING_HPP

#include "ah.hpp"
#include "cq.hpp"
#include "qp.hpp"
#include "srq.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <vector>

namespace sroce::test {

/* One ring: control block + num_slots * slot_size, page aligned, zeroed. */
class FakeRing {
public:
	FakeRing(uint32_t num_slots, uint32_t slot_size, uint32_t start = 0)
		: num_slots_(num_slots), slot_size_(slot_size)
	{
		length_ = SROCE_RING_SLOTS_OFFSET +
			  std::size_t{num_slots} * slot_size;
		length_ = (length_ + 4095) & ~std::size_t{4095};
		mem_ = std::aligned_alloc(4096, length_);
		std::memset(mem_, 0, length_);
		ctrl()->producer = start;
		ctrl()->consumer = start;
	}
	~FakeRing() { std::free(mem_); }
	FakeRing(const FakeRing &) = delete;
	FakeRing &operator=(const FakeRing &) = delete;

	void *base() const { return mem_; }
	std::size_t length() const { return length_; }
	uint32_t num_slots() const { return num_slots_; }
	uint32_t slot_size() const { return slot_size_; }
	sroce_ring_ctrl *ctrl() const { return static_cast<sroce_ring_ctrl *>(mem_); }
	unsigned char *slot(uint32_t index) const
	{
		return static_cast<unsigned char *>(mem_) +
		       SROCE_RING_SLOTS_OFFSET +
		       std::size_t{index & (num_slots_ - 1)} * slot_size_;
	}
	sroce_send_wqe send_wqe(uint32_t index) const
	{
		sroce_send_wqe w;
		std::memcpy(&w, slot(index), sizeof(w));
		return w;
	}
	sroce_recv_wqe recv_wqe(uint32_t index) const
	{
		sroce_recv_wqe w;
		std::memcpy(&w, slot(index), sizeof(w));
		return w;
	}
	/* The i-th SGE after a WQE header of `header` bytes. */
	sroce_sge sge(uint32_t index, std::size_t header, uint32_t i) const
	{
		sroce_sge s;
		std::memcpy(&s, slot(index) + header + i * sizeof(s), sizeof(s));
		return s;
	}

private:
	void *mem_ = nullptr;
	std::size_t length_ = 0;
	uint32_t num_slots_;
	uint32_t slot_size_;
};

/* What the recording doorbell saw each time it was rung. */
struct DoorbellLog {
	int rings = 0;
	std::vector<uint32_t> producer_at_ring; /* published before ringing? */
	const FakeRing *sq = nullptr;
	int fail_with = 0;
};

inline int recording_doorbell(const Doorbell &db) noexcept
{
	auto *log = static_cast<DoorbellLog *>(db.hook);
	++log->rings;
	log->producer_at_ring.push_back(log->sq->ctrl()->producer);
	return log->fail_with;
}

struct QpLimits {
	uint32_t sq_slots = 16;
	uint32_t rq_slots = 16;
	uint32_t max_send_sge = 4;
	uint32_t max_recv_sge = 4;
	uint32_t max_inline = 128;
	uint32_t start = 0; /* initial ring indices */
	uint32_t sq_depth = 0; /* granted max_send_wr; 0: sq_slots */
	uint32_t rq_depth = 0; /* granted max_recv_wr; 0: rq_slots */
	uint32_t sq_mark = SROCE_SQ_NO_MARK; /* in FakeQp::marks */
};

constexpr uint32_t slot_size_for(uint64_t bytes)
{
	uint32_t s = 64;
	while (s < bytes)
		s <<= 1;
	return s;
}

/* A QP whose rings live in test memory; the test is the kernel. */
struct FakeQp {
	explicit FakeQp(ibv_qp_type type, const QpLimits &l = QpLimits{})
		: sq(l.sq_slots,
		     slot_size_for(send_slot_bytes(l.max_send_sge, l.max_inline)),
		     l.start),
		  rq(l.rq_slots, slot_size_for(recv_slot_bytes(l.max_recv_sge)),
		     l.start)
	{
		log.sq = &sq;
		qp.vqp.qp.qp_type = type;
		qp.vqp.qp.state = IBV_QPS_RTS; /* as after ibv_modify_qp */
		qp.sq.qp_type = type;
		const Doorbell db{.fn = recording_doorbell,
				  .cmd_fd = -1,
				  .qp_handle = 7,
				  .hook = &log,
				  .marks = l.sq_mark == SROCE_SQ_NO_MARK ? nullptr
									 : &marks,
				  .mark = l.sq_mark};
		EXPECT_EQ(init_send_queue(qp.sq, sq.base(), sq.length(),
					  sq.num_slots(), sq.slot_size(), type,
					  l.sq_depth ? l.sq_depth : l.sq_slots,
					  l.max_send_sge, l.max_inline, db),
			  0);
		/* As in qp.cpp: the RQ shares the QP's (send) doorbell. */
		EXPECT_EQ(init_recv_queue(qp.rq, rq.base(), rq.length(),
					  rq.num_slots(), rq.slot_size(),
					  l.rq_depth ? l.rq_depth : l.rq_slots,
					  l.max_recv_sge, db),
			  0);
		qp.has_rq = true;
	}

	ibv_qp *ibqp() { return &qp.vqp.qp; }
	ibv_qp_ex *qpx() { return &qp.vqp.qp_ex; }

	/* The kernel's side: ask for a doorbell before going idle. */
	void kernel_wants_doorbell(bool on)
	{
		if (on)
			sq.ctrl()->notify |= SROCE_SQ_NEED_DOORBELL;
		else
			sq.ctrl()->notify &= ~SROCE_SQ_NEED_DOORBELL;
	}
	/* The kernel's side: ask for a mark before going idle. */
	void kernel_wants_mark(bool on)
	{
		if (on)
			sq.ctrl()->notify |= SROCE_SQ_MARKED;
		else
			sq.ctrl()->notify &= ~SROCE_SQ_MARKED;
	}
	/* The kernel's side: it consumed every posted send WQE. */
	void kernel_drain_sq() { sq.ctrl()->consumer = sq.ctrl()->producer; }

	FakeRing sq;
	FakeRing rq;
	DoorbellLog log;
	sroce_sq_mark_page marks{}; /* the context's, if QpLimits::sq_mark */
	Qp qp;
};

/* A CQ whose ring lives in test memory; the test produces CQEs. */
struct FakeCq {
	explicit FakeCq(uint32_t slots = 8, uint32_t start = 0)
		: ring(slots, sizeof(sroce_cqe), start)
	{
		EXPECT_EQ(init_cq_ring(cq, ring.base(), ring.length(),
				       ring.num_slots(), ring.slot_size()),
			  0);
		install_cq_ex_ops(cq);
	}

	ibv_cq *ibcq() { return &cq.vcq.cq; }
	ibv_cq_ex *cqx() { return &cq.vcq.cq_ex; }

	/* The kernel's side: write one CQE and publish it. */
	void produce(const sroce_cqe &c)
	{
		const uint32_t p = ring.ctrl()->producer;
		std::memcpy(ring.slot(p), &c, sizeof(c));
		ring.ctrl()->producer = p + 1;
	}

	FakeRing ring;
	Cq cq;
};

/* A distinctive CQE whose every field derives from `n`. */
inline sroce_cqe make_cqe(uint32_t n)
{
	sroce_cqe c{};
	c.wr_id = 0x1000 + n;
	c.status = n % 2 ? IBV_WC_SUCCESS : IBV_WC_REM_ACCESS_ERR;
	c.opcode = n % 3 ? IBV_WC_RECV : IBV_WC_RDMA_WRITE;
	c.vendor_err = 0x20 + n;
	c.byte_len = 100 + n;
	c.imm_data = 0xabcd0000 + n;
	c.qp_num = 0x300 + n;
	c.src_qp = 0x400 + n;
	c.wc_flags = IBV_WC_WITH_IMM | IBV_WC_GRH;
	c.pkey_index = static_cast<uint16_t>(n);
	c.slid = static_cast<uint16_t>(0x50 + n);
	c.sl = static_cast<uint8_t>(n & 0xf);
	c.dlid_path_bits = static_cast<uint8_t>(n & 0x7f);
	c.timestamp = 0x123456789ull + n;
	return c;
}

/* An Ah as create_ah leaves it, without a kernel. */
inline Ah make_ah(uint32_t ah_num)
{
	Ah ah{};
	ah.ah_num = ah_num;
	return ah;
}

} /* namespace sroce::test */

#endif /* SROCE_TESTS_FAKE_RING_HPP */

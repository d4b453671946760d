// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The ring view and the mapping owner: geometry checks against what a
 * kernel may describe, slot addressing across the 2^32 wrap, the notify
 * word, and munmap on every path (a memfd stands in for the uverbs fd).
 */
#include "fake_ring.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <fstream>
#include <string>

namespace {

using namespace sroce;
using namespace sroce::test;

/* The ABI's promises the ring code relies on. */
static_assert(offsetof(sroce_ring_ctrl, producer) == 0);
static_assert(offsetof(sroce_ring_ctrl, consumer) == 64);
static_assert(offsetof(sroce_ring_ctrl, notify) == 128);
static_assert(sizeof(sroce_send_wqe) == 64 && sizeof(sroce_cqe) == 64);
/* ibv_wc's first 48 bytes and sroce_cqe line up (so polling is a copy). */
static_assert(offsetof(sroce_cqe, wc_flags) == offsetof(ibv_wc, wc_flags));
static_assert(offsetof(sroce_cqe, dlid_path_bits) ==
	      offsetof(ibv_wc, dlid_path_bits));

TEST(Ring, AttachChecksGeometry)
{
	FakeRing r(8, 128);
	Ring ring;
	EXPECT_EQ(ring.attach(nullptr, r.length(), 8, 128, 64), EPROTO);
	EXPECT_EQ(ring.attach(r.base(), r.length(), 0, 128, 64), EPROTO);
	EXPECT_EQ(ring.attach(r.base(), r.length(), 6, 128, 64), EPROTO);
	EXPECT_EQ(ring.attach(r.base(), r.length(), 8, 96, 64), EPROTO);
	EXPECT_EQ(ring.attach(r.base(), r.length(), 8, 128, 129), EPROTO)
		<< "slot too small for the WQEs we would write";
	EXPECT_EQ(ring.attach(r.base(), 256 + 8 * 128 - 1, 8, 128, 64), EPROTO);
	EXPECT_EQ(ring.attach(static_cast<char *>(r.base()) + 8, r.length() - 8,
			      4, 128, 64),
		  EPROTO)
		<< "misaligned";
	EXPECT_EQ(ring.attach(r.base(), r.length(), 1u << 31, 1u << 31, 64),
		  EPROTO)
		<< "size computed in 64 bits";
	EXPECT_FALSE(ring.attached());

	r.ctrl()->producer = 100;
	r.ctrl()->consumer = 91; /* 9 outstanding in 8 slots */
	EXPECT_EQ(ring.attach(r.base(), r.length(), 8, 128, 64), EPROTO);
	r.ctrl()->consumer = 92;
	EXPECT_EQ(ring.attach(r.base(), r.length(), 8, 128, 64), 0);
	EXPECT_TRUE(ring.attached());
	EXPECT_EQ(ring.num_slots(), 8u);
	EXPECT_EQ(ring.slot_size(), 128u);
}

TEST(Ring, SlotAddressingWraps)
{
	FakeRing r(4, 64);
	Ring ring;
	ASSERT_EQ(ring.attach(r.base(), r.length(), 4, 64, 64), 0);
	auto *slots = static_cast<unsigned char *>(r.base()) +
		      SROCE_RING_SLOTS_OFFSET;
	EXPECT_EQ(ring.slot(0), slots);
	EXPECT_EQ(ring.slot(3), slots + 3 * 64);
	EXPECT_EQ(ring.slot(4), slots);
	EXPECT_EQ(ring.slot(0xffffffffu), slots + 3 * 64);
	EXPECT_EQ(ring.slot(0xffffffffu + 1u), slots);
}

TEST(Ring, IndicesAndNotify)
{
	FakeRing r(4, 64);
	Ring ring;
	ASSERT_EQ(ring.attach(r.base(), r.length(), 4, 64, 64), 0);
	ring.publish_producer(3);
	ring.publish_consumer(2);
	EXPECT_EQ(r.ctrl()->producer, 3u);
	EXPECT_EQ(r.ctrl()->consumer, 2u);
	EXPECT_EQ(ring.producer(std::memory_order_acquire), 3u);
	r.ctrl()->notify = 4;
	ring.set_notify(1);
	EXPECT_EQ(ring.notify(std::memory_order_acquire), 5u);
	/* Nothing outside the index words moved. */
	for (unsigned w : r.ctrl()->pad0)
		EXPECT_EQ(w, 0u);
}

std::size_t mapped_regions()
{
	std::ifstream maps("/proc/self/maps");
	std::size_t n = 0;
	for (std::string line; std::getline(maps, line);)
		n += line.find("sroce-ring-test") != std::string::npos;
	return n;
}

TEST(Mapping, MapsSharedAndUnmapsOnDestruction)
{
	const int fd = memfd_create("sroce-ring-test", 0);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(ftruncate(fd, 3 * 4096), 0);
	{
		Mapping m;
		ASSERT_EQ(m.map(fd, 4096, 8192), 0);
		EXPECT_EQ(m.size(), 8192u);
		EXPECT_EQ(mapped_regions(), 1u);

		/* Shared: a write shows through the fd. */
		static_cast<char *>(m.get())[0] = 'x';
		char c = 0;
		ASSERT_EQ(pread(fd, &c, 1, 4096), 1);
		EXPECT_EQ(c, 'x');

		/* Move transfers ownership; the source unmaps nothing. */
		Mapping other = std::move(m);
		EXPECT_EQ(m.get(), nullptr);
		EXPECT_EQ(mapped_regions(), 1u);

		/* Remapping replaces (and unmaps) the previous mapping. */
		ASSERT_EQ(other.map(fd, 0, 4096), 0);
		EXPECT_EQ(mapped_regions(), 1u);

		/* A failed map leaves the existing one alone. */
		EXPECT_NE(other.map(-1, 0, 4096), 0);
		EXPECT_NE(other.get(), nullptr);
		EXPECT_EQ(other.map(fd, 0, 0), EPROTO);
	}
	EXPECT_EQ(mapped_regions(), 0u);
	close(fd);
}

TEST(Mapping, QpMembersUnmapWithTheObject)
{
	const int fd = memfd_create("sroce-ring-test", 0);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(ftruncate(fd, 2 * 4096), 0);
	{
		auto *qp = new Qp;
		ASSERT_EQ(qp->sq_map.map(fd, 0, 4096), 0);
		ASSERT_EQ(qp->rq_map.map(fd, 4096, 4096), 0);
		EXPECT_EQ(mapped_regions(), 2u);
		delete qp;
	}
	EXPECT_EQ(mapped_regions(), 0u);
	close(fd);
}

TEST(ProviderObjects, LibibverbsWrappersStartZeroed)
{
	/* The union members libibverbs reads beyond ibv_qp/ibv_cq. */
	alignas(Qp) unsigned char qraw[sizeof(Qp)];
	std::memset(qraw, 0xff, sizeof(qraw));
	auto *qp = new (qraw) Qp;
	EXPECT_EQ(qp->vqp.qp_ex.wr_send, nullptr);
	EXPECT_EQ(qp->vqp.comp_mask, 0u);
	qp->~Qp();

	alignas(Cq) unsigned char craw[sizeof(Cq)];
	std::memset(craw, 0xff, sizeof(craw));
	auto *cq = new (craw) Cq;
	EXPECT_EQ(cq->vcq.cq_ex.read_completion_wallclock_ns, nullptr);
	cq->~Cq();
}

} /* namespace */

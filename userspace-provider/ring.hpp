// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The building blocks of the data path: a typed view over one shared ring
 * (include/uapi/sroce-abi.h, "Shared rings"), the RAII owner of its mmap(),
 * a spinlock and the doorbell hook.
 *
 * Nothing here makes a system call except Mapping::map()/~Mapping() and the
 * production doorbell (wq.cpp), and nothing allocates: the view works the
 * same over a kernel mapping and over ordinary memory, which is how the unit
 * tests drive the ring logic without a kernel.
 *
 * Memory ordering, as the ABI prescribes: each index has exactly one
 * writer, which fills the slots first and then publishes the index with a
 * release store; the other side acquire-loads it before touching the slots
 * it covers.  The indices are free-running u32 counters, so all distance
 * arithmetic is modulo 2^32 (unsigned subtraction) and stays correct across
 * the wrap.
 */
#ifndef SROCE_RING_HPP
#define SROCE_RING_HPP

#include "uapi/sroce-abi.h"

#include <pthread.h>
#include <sys/mman.h>

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdint>

namespace sroce {

static_assert(std::atomic_ref<uint32_t>::is_always_lock_free,
	      "ring indices are shared with the kernel: they must be plain "
	      "lock-free words");
static_assert(std::atomic_ref<uint32_t>::required_alignment <= alignof(__u32));
static_assert(SROCE_RING_SLOTS_OFFSET >= sizeof(sroce_ring_ctrl));

/*
 * Not std::has_single_bit: without -mpopcnt GCC lowers it to libgcc's
 * __popcountdi2, a dependency the provider must not have (symcheck).
 */
constexpr bool is_pow2(uint32_t x) { return x && !(x & (x - 1)); }

/*
 * A view over one ring: control block at `base`, slots from
 * base + SROCE_RING_SLOTS_OFFSET.  It owns nothing (see Mapping) and is
 * trivially copyable, so re-attaching after a resize is one assignment.
 */
class Ring {
public:
	/*
	 * Binds the view after checking what the kernel described: power-of-
	 * two geometry, slots no smaller than `min_slot_size` (what the
	 * provider will write into one), everything inside `length` bytes,
	 * and indices that already satisfy producer - consumer <= num_slots.
	 * Returns 0 or EPROTO (a kernel speaking some other layout); the view
	 * is unchanged on failure.
	 */
	int attach(void *base, std::size_t length, uint32_t num_slots,
		   uint32_t slot_size, std::size_t min_slot_size) noexcept
	{
		if (!base || !is_pow2(num_slots) || !is_pow2(slot_size) ||
		    slot_size < min_slot_size ||
		    reinterpret_cast<uintptr_t>(base) % 64 != 0)
			return EPROTO;
		const uint64_t need = SROCE_RING_SLOTS_OFFSET +
				      uint64_t{num_slots} * slot_size;
		if (need > length)
			return EPROTO;

		auto *ctrl = static_cast<sroce_ring_ctrl *>(base);
		const uint32_t prod = ref(ctrl->producer).load(
			std::memory_order_acquire);
		const uint32_t cons = ref(ctrl->consumer).load(
			std::memory_order_acquire);
		if (prod - cons > num_slots)
			return EPROTO;

		ctrl_ = ctrl;
		slots_ = static_cast<unsigned char *>(base) +
			 SROCE_RING_SLOTS_OFFSET;
		mask_ = num_slots - 1;
		slot_size_ = slot_size;
		return 0;
	}

	void detach() noexcept { *this = Ring{}; }
	bool attached() const noexcept { return ctrl_ != nullptr; }

	uint32_t num_slots() const noexcept { return mask_ + 1; }
	uint32_t slot_size() const noexcept { return slot_size_; }

	/* The slot a free-running index names. */
	unsigned char *slot(uint32_t index) const noexcept
	{
		return slots_ + std::size_t{index & mask_} * slot_size_;
	}

	/*
	 * Index access.  Loads of our own index may be relaxed (nobody else
	 * writes it); loads of the other side's index are acquire; stores
	 * are always release, publishing the slots written before them.
	 */
	uint32_t producer(std::memory_order mo) const noexcept
	{
		return ref(ctrl_->producer).load(mo);
	}
	/* CQ: see sroce_ring_ctrl; ordered by an earlier load of producer(). */
	uint32_t solicited_end(std::memory_order mo) const noexcept
	{
		return ref(ctrl_->solicited_end).load(mo);
	}
	uint32_t consumer(std::memory_order mo) const noexcept
	{
		return ref(ctrl_->consumer).load(mo);
	}
	void publish_producer(uint32_t index) const noexcept
	{
		ref(ctrl_->producer).store(index, std::memory_order_release);
	}
	void publish_consumer(uint32_t index) const noexcept
	{
		ref(ctrl_->consumer).store(index, std::memory_order_release);
	}

	uint32_t notify(std::memory_order mo) const noexcept
	{
		return ref(ctrl_->notify).load(mo);
	}
	/*
	 * Atomic OR (lock or on x86): the kernel clears the word concurrently
	 * when it fires an event, so a plain load/store could resurrect or
	 * lose a flag.
	 */
	void set_notify(uint32_t bits) const noexcept
	{
		ref(ctrl_->notify).fetch_or(bits, std::memory_order_seq_cst);
	}

	sroce_ring_ctrl *ctrl() const noexcept { return ctrl_; }

private:
	static std::atomic_ref<uint32_t> ref(__u32 &word) noexcept
	{
		return std::atomic_ref<uint32_t>(word);
	}

	sroce_ring_ctrl *ctrl_ = nullptr;
	unsigned char *slots_ = nullptr;
	uint32_t mask_ = 0;
	uint32_t slot_size_ = 0;
};

/*
 * Owner of one mmap() of the uverbs fd.  Move-only; the destructor unmaps,
 * so a provider object that holds its mappings as members cannot leak them
 * on any failure path.
 */
class Mapping {
public:
	Mapping() = default;
	Mapping(const Mapping &) = delete;
	Mapping &operator=(const Mapping &) = delete;
	Mapping(Mapping &&other) noexcept
		: addr_(other.addr_), length_(other.length_)
	{
		other.addr_ = nullptr;
		other.length_ = 0;
	}
	Mapping &operator=(Mapping &&other) noexcept
	{
		if (this != &other) {
			reset();
			addr_ = other.addr_;
			length_ = other.length_;
			other.addr_ = nullptr;
			other.length_ = 0;
		}
		return *this;
	}
	~Mapping() { reset(); }

	/*
	 * Maps `length` bytes of the object the kernel published at
	 * `offset`.  Shared and writable: the process writes its indices and
	 * WQEs into it.  Returns 0 or errno; on failure *this is unchanged.
	 */
	int map(int fd, uint64_t offset, std::size_t length) noexcept
	{
		if (length == 0)
			return EPROTO;
		void *p = ::mmap(nullptr, length, PROT_READ | PROT_WRITE,
				 MAP_SHARED, fd, static_cast<off_t>(offset));
		if (p == MAP_FAILED)
			return errno;
		reset();
		addr_ = p;
		length_ = length;
		return 0;
	}

	void reset() noexcept
	{
		if (addr_) {
			const int saved = errno;
			::munmap(addr_, length_);
			errno = saved;
		}
		addr_ = nullptr;
		length_ = 0;
	}

	void *get() const noexcept { return addr_; }
	std::size_t size() const noexcept { return length_; }

private:
	void *addr_ = nullptr;
	std::size_t length_ = 0;
};

/*
 * pthread spinlock, as rdma-core providers use per queue: the critical
 * sections are a few dozen stores, far shorter than a futex round trip.
 * Satisfies BasicLockable for std::lock_guard.
 */
class SpinLock {
public:
	/* pthread_spin_init() cannot fail on Linux (it just stores 0). */
	SpinLock() noexcept { pthread_spin_init(&lock_, PTHREAD_PROCESS_PRIVATE); }
	~SpinLock() { pthread_spin_destroy(&lock_); }
	SpinLock(const SpinLock &) = delete;
	SpinLock &operator=(const SpinLock &) = delete;

	void lock() noexcept { pthread_spin_lock(&lock_); }
	void unlock() noexcept { pthread_spin_unlock(&lock_); }

private:
	pthread_spinlock_t lock_;
};

/*
 * How a send queue wakes the kernel when it asked for it
 * (SROCE_SQ_NEED_DOORBELL).  A plain function pointer rather than a
 * virtual interface: it is called only when the kernel's send engine is
 * idle, i.e. right before a system call, so one indirect call is noise.
 * Production uses uverbs_post_send_doorbell (wq.cpp); tests substitute a
 * recorder and use `hook` for their own state.
 */
struct Doorbell {
	using Fn = int (*)(const Doorbell &db) noexcept;

	Fn fn = nullptr;
	int cmd_fd = -1;
	uint32_t qp_handle = 0;
	void *hook = nullptr;
	/*
	 * The context's SQ mark page and this QP's mark in it, for
	 * SROCE_SQ_MARKED; without a page, MARKED rings like NEED_DOORBELL.
	 */
	sroce_sq_mark_page *marks = nullptr;
	uint32_t mark = SROCE_SQ_NO_MARK;

	/* 0 or errno. */
	int ring() const noexcept { return fn ? fn(*this) : 0; }
};

} /* namespace sroce */

#endif /* SROCE_RING_HPP */

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A poller that is alone on its CPU gives the CPU away when its CQ stays
 * empty.
 *
 * Verbs applications spin on ibv_poll_cq.  With a CPU each, the two ends
 * of a ping-pong see each other's messages within microseconds.  When
 * both can run only on the same CPU (a one-CPU machine or VM, a cpuset
 * or taskset of one CPU), the end that waits spins until the scheduler
 * preempts it, while the end that has to answer is runnable but not
 * running: every half round trip costs a scheduler slice (~10 ms per
 * round trip of `ibv_rc_pingpong` in a one-vCPU guest, the kernel's
 * send and receive work included).  So a CQ created by a thread that may
 * run on one CPU only yields that CPU (sched_yield) after a streak of
 * empty polls.  With nothing else runnable the yield returns at once; a
 * thread that may use more CPUs never yields, so a multi-core machine's
 * polling, and its no-syscall steady state, is unchanged.
 *
 * The CPU count is the creating thread's affinity when the CQ is made
 * (one system call then, none while polling): a thread pinned to one CPU
 * after that keeps spinning, as on every other provider.
 */
#ifndef SROCE_IDLE_POLL_HPP
#define SROCE_IDLE_POLL_HPP

#include <cstdint>

namespace sroce {

/*
 * Empty polls in a row before a one-CPU poller yields.  A completion can
 * appear during a spin on one CPU only through an interrupt or softirq,
 * which preempt the spinner anyway, so spinning buys little there; a
 * short streak keeps the yield's system call off a queue that is merely
 * between two completions of a stream.
 */
constexpr uint32_t kEmptyPollsBeforeYield = 16;

class IdlePoll {
public:
	/* Whether the calling thread may run on one CPU only. */
	static bool caller_has_one_cpu() noexcept;

	explicit IdlePoll(bool one_cpu = false) noexcept : one_cpu_(one_cpu) {}

	/*
	 * A poll found nothing: true when the caller should yield its CPU
	 * now (after dropping its locks), every kEmptyPollsBeforeYield-th
	 * empty poll in a row, and never when more than one CPU may run it.
	 */
	bool empty() noexcept
	{
		if (!one_cpu_ || ++streak_ < kEmptyPollsBeforeYield)
			return false;
		streak_ = 0;
		return true;
	}

	/* A poll found a completion: the streak starts over. */
	void found() noexcept { streak_ = 0; }

private:
	bool one_cpu_;
	uint32_t streak_ = 0;
};

/*
 * Gives the CPU to another runnable task, if any.  A pointer so that the
 * unit tests can count the calls.
 */
extern void (*yield_cpu)() noexcept;

} /* namespace sroce */

#endif /* SROCE_IDLE_POLL_HPP */
